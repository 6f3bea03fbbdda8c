//! The captures table: one row per input file (what it was, how far it was read, what it
//! held), as `bdpscope batch` writes `captures.*` and the Spark job its captures table.
//! Its columns and their order are [`CAPTURE_COLUMNS`]; the state file (`done.jsonl`)
//! keeps the rows as JSON.

use crate::capture::{has_capture_name, CaptureError, Compression, Container};
use crate::summary::CaptureSummary;
use polars::prelude::*;
use serde::{Deserialize, Serialize};

crate::vocabulary! {
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

impl InputStatus {
    /// What became of an input that could not be opened as a capture (`e` says why): the
    /// one rule batch and the Spark job apply. It is `skipped` only when it is plainly no
    /// capture and nobody asked for it: all three of
    ///
    /// - found in a folder, not `named` (on the command line, or as a glob's match): a
    ///   file the user named is one they asked to read, and as `analyze FILE` says, not
    ///   reading it is an error (the interface's exit 1: "an input could not be read as a
    ///   capture at all"); a folder's README or `truth.json` is nobody's failure;
    /// - its content is no capture ([`CaptureError::NotACapture`]): anything else means it
    ///   starts with a capture's magic number (pcap in either byte order, µs or ns,
    ///   pcapng's section header; bare or inside gzip or zstd) and is damaged, cut inside
    ///   its header, of a version not read, or holds no readable packet;
    /// - its name is not a capture's ([`has_capture_name`]: `.pcap`, `.pcapng`, `.cap`,
    ///   `.ntar`, compressed or rotated): a `.pcap` holding nothing, or garbage, is a
    ///   capture that was lost.
    ///
    /// Otherwise `failed`: named on stderr, counted, and the run's exit status is 1.
    pub fn of_unopened(e: &CaptureError, name: &str, named: bool) -> InputStatus {
        let no_capture = matches!(e, CaptureError::NotACapture(_)) && !has_capture_name(name);
        if no_capture && !named {
            InputStatus::Skipped
        } else {
            InputStatus::Failed
        }
    }
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
    /// Records set aside as capture duplicates (the same IP datagram recorded again).
    #[serde(default)]
    pub capture_duplicates: Option<u64>,
}

impl CaptureRow {
    /// What the capture's summary says of a file read alone (its own chain): the counts,
    /// the time span, link types, warnings, floods, attempts and evictions.
    pub fn summarised(&mut self, summary: &CaptureSummary) {
        self.packets = Some(summary.packets);
        self.tcp_segments = Some(summary.tcp_segments);
        self.non_tcp_records = Some(summary.skipped.iter().map(|s| s.records).sum());
        self.flows = Some(summary.flows);
        self.first_ts = summary.first_ts;
        self.last_ts = summary.last_ts;
        self.link_types = join(&summary.link_types);
        self.warnings = join(&summary.warnings);
        self.floods = join(
            &summary
                .floods
                .iter()
                .map(|f| {
                    format!("{} {}", f.kind, f.target.as_deref().unwrap_or(""))
                        .trim()
                        .to_string()
                })
                .collect::<Vec<_>>(),
        );
        self.attempts = Some(summary.attempts.attempts);
        self.failed_attempts =
            Some(summary.attempts.unanswered + summary.attempts.refused + summary.attempts.half_open);
        self.evicted_connections =
            Some(summary.connections.evicted_without_data + summary.connections.evicted_with_data);
        self.capture_duplicates = Some(summary.capture_duplicates);
    }
}

/// A list in one cell, as the tables join them; none when empty.
pub fn join(v: &[String]) -> Option<String> {
    (!v.is_empty()).then(|| v.join(" | "))
}

/// The columns of `captures.*`, in order.
pub const CAPTURE_COLUMNS: [&str; 22] = [
    "path",
    "status",
    "format",
    "compression",
    "size_bytes",
    "mtime",
    "packets",
    "tcp_segments",
    "non_tcp_records",
    "flows",
    "first_ts",
    "last_ts",
    "link_types",
    "warnings",
    "error",
    "skipped_reason",
    "chain",
    "floods",
    "attempts",
    "failed_attempts",
    "evicted_connections",
    "capture_duplicates",
];

pub fn captures_frame(rows: &[&CaptureRow]) -> PolarsResult<DataFrame> {
    let s = |f: fn(&CaptureRow) -> Option<String>| rows.iter().map(|r| f(r)).collect::<Vec<_>>();
    let u = |f: fn(&CaptureRow) -> Option<u64>| rows.iter().map(|r| f(r)).collect::<Vec<_>>();
    let x = |f: fn(&CaptureRow) -> Option<f64>| rows.iter().map(|r| f(r)).collect::<Vec<_>>();
    let [path, status, format, compression, size_bytes, mtime, packets, tcp_segments, non_tcp_records, flows, first_ts, last_ts, link_types, warnings, error, skipped_reason, chain, floods, attempts, failed_attempts, evicted_connections, capture_duplicates] =
        CAPTURE_COLUMNS.map(PlSmallStr::from_static);
    let columns = vec![
        Column::new(path, s(|r| Some(r.path.clone()))),
        Column::new(status, s(|r| Some(r.status.as_str().to_string()))),
        Column::new(format, s(|r| r.format.map(|v| v.as_str().to_string()))),
        Column::new(compression, s(|r| r.compression.map(|v| v.as_str().to_string()))),
        Column::new(size_bytes, u(|r| Some(r.size_bytes))),
        Column::new(mtime, x(|r| r.mtime)),
        Column::new(packets, u(|r| r.packets)),
        Column::new(tcp_segments, u(|r| r.tcp_segments)),
        Column::new(non_tcp_records, u(|r| r.non_tcp_records)),
        Column::new(flows, u(|r| r.flows)),
        Column::new(first_ts, x(|r| r.first_ts)),
        Column::new(last_ts, x(|r| r.last_ts)),
        Column::new(link_types, s(|r| r.link_types.clone())),
        Column::new(warnings, s(|r| r.warnings.clone())),
        Column::new(error, s(|r| r.error.clone())),
        Column::new(skipped_reason, s(|r| r.skipped_reason.clone())),
        Column::new(chain, s(|r| r.chain.clone())),
        Column::new(floods, s(|r| r.floods.clone())),
        Column::new(attempts, u(|r| r.attempts)),
        Column::new(failed_attempts, u(|r| r.failed_attempts)),
        Column::new(evicted_connections, u(|r| r.evicted_connections)),
        Column::new(capture_duplicates, u(|r| r.capture_duplicates)),
    ];
    DataFrame::new(rows.len(), columns)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unopened_input_is_skipped_only_when_plainly_no_capture_and_not_named() {
        let not = || CaptureError::NotACapture("it starts with bytes 23 20 52 45".into());
        let bad = || CaptureError::BadHeader("it is pcap version 1.4".into());
        let empty = || CaptureError::NotACapture("it is empty".into());
        let status = InputStatus::of_unopened;
        // A folder's README: no capture by content nor by name.
        assert_eq!(status(&not(), "arch/README", false), InputStatus::Skipped);
        assert_eq!(status(&not(), "arch/SOURCES.md", false), InputStatus::Skipped);
        // The same file named on the command line: asked for, not read.
        assert_eq!(status(&not(), "arch/README", true), InputStatus::Failed);
        // A capture's magic with a header it cannot take, whatever its name.
        assert_eq!(status(&bad(), "arch/x.bin", false), InputStatus::Failed);
        // Named like a capture: empty, or garbage.
        assert_eq!(status(&empty(), "arch/derived__empty.pcap", false), InputStatus::Failed);
        assert_eq!(status(&not(), "arch/bad-magic.pcap.gz", false), InputStatus::Failed);
        // Damaged before its first packet, or cut inside its header.
        let none = CaptureError::NoPacket(Box::new(CaptureError::Corrupt {
            offset: 24,
            reason: "a record claims 2147418112 captured bytes".into(),
        }));
        assert_eq!(status(&none, "arch/x", false), InputStatus::Failed);
        let cut = CaptureError::Truncated { offset: 0, frames: 0 };
        assert_eq!(status(&cut, "arch/x", false), InputStatus::Failed);
    }
}
