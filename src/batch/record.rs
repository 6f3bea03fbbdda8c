//! What a unit of work came to, as `done.jsonl` keeps it: the inputs as they were read, a
//! row per input for `captures.*`, the middlebox findings, and where its flows are.

use bdpscope::capture::{Compression, Container};
use bdpscope::summary::{Confidence, HsSegment, MiddleboxKind};
use serde::{Deserialize, Serialize};

bdpscope::vocabulary! {
    /// What became of one input file.
    #[derive(Default)]
    pub enum InputStatus {
        #[default]
        Ok = "ok",
        /// Cut short or damaged: the flows before the problem are kept.
        Partial = "partial",
        /// Could not be read.
        Failed = "failed",
        /// Not a capture.
        Skipped = "skipped",
    }
}

/// An input as it was when read: a change of size or mtime means it must be read again.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Stamp {
    pub path: String,
    pub size: u64,
    pub mtime_ns: i64,
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
}

/// One row of `captures.*`: what became of one input file.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CaptureRow {
    pub path: String,
    pub status: InputStatus,
    pub format: Option<Container>,
    pub compression: Option<Compression>,
    pub size_bytes: u64,
    /// Modification time, seconds since the epoch.
    #[serde(with = "exact")]
    pub mtime: Option<f64>,
    pub packets: Option<u64>,
    pub tcp_segments: Option<u64>,
    pub non_tcp_records: Option<u64>,
    pub flows: Option<u64>,
    #[serde(with = "exact")]
    pub first_ts: Option<f64>,
    #[serde(with = "exact")]
    pub last_ts: Option<f64>,
    pub link_types: Option<String>,
    pub warnings: Option<String>,
    pub error: Option<String>,
    pub skipped_reason: Option<String>,
    /// The `capture` value of this file's flows: its path, or the stitched chain's name.
    pub chain: Option<String>,
    /// Floods and scans found (`kind target`, joined), connection attempts, the failed
    /// ones, and connections the memory budget ended early (none for a chain of files).
    pub floods: Option<String>,
    pub attempts: Option<u64>,
    pub failed_attempts: Option<u64>,
    pub evicted_connections: Option<u64>,
}

/// Floats in `done.jsonl` as strings (Rust's shortest round-trip form), so that a row read
/// back is bit for bit the row written (serde_json's float parsing may be off by an ulp).
mod exact {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(x) => s.serialize_str(&x.to_string()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|t| t.parse().map_err(serde::de::Error::custom))
            .transpose()
    }
}
