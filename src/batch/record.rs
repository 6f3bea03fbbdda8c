//! What a unit of work came to, as `done.jsonl` keeps it: the inputs as they were read, a
//! row per input for `captures.*`, the middlebox findings, and where its flows are.

use bdpscope::summary::{CaptureSummary, Confidence, FloodKind, HsSegment, MiddleboxKind};
use serde::{Deserialize, Serialize};

/// A row of `captures.*` (the library's, shared with the Python package and Spark).
pub use bdpscope::table::captures::{CaptureRow, InputStatus};

/// An input as it was when read: a change of size or mtime means it must be read again.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Stamp {
    pub path: String,
    pub size: u64,
    pub mtime_ns: i64,
    /// Given by name rather than found in a folder: a file that cannot be read is then
    /// failed, not skipped, so naming a file a folder gave before reads it again. Written
    /// only when true (the records of folders' files stay as they were).
    #[serde(default, skip_serializing_if = "is_false")]
    pub named: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl MiddleboxRow {
    /// The middlebox findings of a flow.
    pub fn of(f: &bdpscope::summary::FlowSummary) -> impl Iterator<Item = MiddleboxRow> + '_ {
        f.middlebox.iter().map(|m| MiddleboxRow {
            capture: f.capture.clone(),
            id: f.id,
            client: f.client.clone(),
            server: f.server.clone(),
            kind: m.kind,
            direction: m.direction,
            confidence: m.confidence,
            evidence: m.evidence.clone(),
        })
    }
}

/// One middlebox finding, with its flow (for the summary).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MiddleboxRow {
    pub capture: String,
    pub id: u64,
    pub client: String,
    pub server: String,
    pub kind: MiddleboxKind,
    pub direction: HsSegment,
    pub confidence: Confidence,
    pub evidence: String,
}

/// A flood or scan finding of a capture (or of a stitched chain), with the figures its
/// summary carries, for batch's summary: the captures table keeps only `kind target`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FloodRow {
    /// The capture (the `capture` its flows carry: the path, or the chain's name).
    pub capture: String,
    pub kind: FloodKind,
    /// The service, host or port attacked or scanned; none for the whole capture.
    pub target: Option<String>,
    /// The scanning host, for scans.
    pub source: Option<String>,
    /// Connection attempts the finding counts.
    pub attempts: u64,
}

impl FloodRow {
    /// The findings of a capture's summary.
    pub fn of<'a>(capture: &'a str, summary: &'a CaptureSummary) -> impl Iterator<Item = FloodRow> + 'a {
        summary.floods.iter().map(move |f| FloodRow {
            capture: capture.to_string(),
            kind: f.kind,
            target: f.target.clone(),
            source: f.source.clone(),
            attempts: f.attempts,
        })
    }
}

/// One unit's outcome, one line of `done.jsonl`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Record {
    pub unit: String,
    /// The options the results depend on (see `Options::fingerprint`).
    pub options: String,
    /// The flows table's columns (see `tables::flows_schema_fingerprint`).
    pub schema: String,
    pub inputs: Vec<Stamp>,
    /// File name in `parts/`; none when the unit has no flows.
    pub part: Option<String>,
    pub flows: u64,
    pub captures: Vec<CaptureRow>,
    pub middlebox: Vec<MiddleboxRow>,
    /// Floods and scans its captures held (records written before they were kept have none).
    #[serde(default)]
    pub floods: Vec<FloodRow>,
}
