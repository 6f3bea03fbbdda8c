//! The driver of one pass over one capture: frames -> decode -> flow table -> tracker ->
//! diagnosis -> summaries. Memory is bounded by the connections alive at one time.
//!
//! The connections live in a [`Shard`]; one thread drives one shard (`Analysis`, which
//! can also feed an observer every segment), or the reading thread routes each segment
//! to the worker whose shard owns its connection (`analyze_reader_parallel`). Both give
//! the same flows, numbered the same way.

use crate::capture::{CaptureReader, Frame, LinkType};
use crate::decode::{self, Skip};
use crate::diagnose;
use crate::flow::{FxHashMap, TableConfig};
use crate::observe::Observer;
use crate::summary::{CaptureSummary, FlowSummary, SkipCount};
use crate::time::Timestamp;
use std::net::IpAddr;

/// Which connections to track (the way tcpdump users select: host and port).
#[derive(Clone, Debug, Default)]
pub struct FlowFilter {
    /// Track only connections with one of these addresses at either end (empty: all).
    pub hosts: Vec<IpAddr>,
    /// Track only connections with one of these ports at either end (empty: all).
    pub ports: Vec<u16>,
}

impl FlowFilter {
    #[inline]
    fn accepts(&self, seg: &decode::Segment) -> bool {
        (self.hosts.is_empty() || self.hosts.iter().any(|h| *h == seg.src || *h == seg.dst))
            && (self.ports.is_empty() || self.ports.iter().any(|p| *p == seg.src_port || *p == seg.dst_port))
    }
}

#[derive(Clone, Debug, Default)]
pub struct AnalysisConfig {
    pub table: TableConfig,
    /// Id of the first flow (ids continue across the captures of one run).
    pub first_flow_id: u64,
    /// Name of the capture, copied into every flow's `capture` field.
    pub capture_name: String,
    pub filter: FlowFilter,
    /// Bottleneck rate given by the user (bits/s), instead of estimating it.
    pub link_rate_bps: Option<f64>,
}

mod parallel;
mod router;
mod shard;

pub use parallel::analyze_reader_parallel;
use shard::Shard;

/// What the capture held beyond its connections: record and segment counts, time span,
/// link types, records that were not TCP (by reason), warnings.
#[derive(Default)]
struct Counters {
    packets: u64,
    tcp_segments: u64,
    first_ts: Option<Timestamp>,
    last_ts: Option<Timestamp>,
    skipped: FxHashMap<Skip, u64>,
    link_types: Vec<LinkType>,
    warnings: Vec<String>,
}

impl Counters {
    /// Counts a record and decodes it; the segment when it is TCP and selected.
    #[inline]
    fn decode(&mut self, frame: &Frame<'_>, filter: &FlowFilter) -> Option<decode::Segment> {
        self.packets += 1;
        self.first_ts = Some(self.first_ts.map_or(frame.ts, |t| t.min(frame.ts)));
        self.last_ts = Some(self.last_ts.map_or(frame.ts, |t| t.max(frame.ts)));
        if !self.link_types.contains(&frame.link) {
            self.link_types.push(frame.link);
        }
        match decode::decode(frame.link, frame.data) {
            Ok(seg) => {
                self.tcp_segments += 1;
                filter.accepts(&seg).then_some(seg)
            }
            Err(skip) => {
                *self.skipped.entry(skip).or_insert(0) += 1;
                None
            }
        }
    }

    fn summary(self, path: &str, reader: Option<&CaptureReader>, flows: u64) -> CaptureSummary {
        let mut skipped: Vec<SkipCount> = self
            .skipped
            .iter()
            .map(|(k, n)| SkipCount {
                reason: k.to_string(),
                records: *n,
            })
            .collect();
        skipped.sort_by(|a, b| b.records.cmp(&a.records).then(a.reason.cmp(&b.reason)));
        CaptureSummary {
            path: path.to_string(),
            format: reader.map_or("pcap", |r| r.format().name()).to_string(),
            compression: reader.map_or("none", |r| r.compression().name()).to_string(),
            packets: self.packets,
            tcp_segments: self.tcp_segments,
            flows,
            first_ts: self.first_ts.map(|t| t.secs_f64()),
            last_ts: self.last_ts.map(|t| t.secs_f64()),
            skipped,
            link_types: self.link_types.iter().map(|l| l.to_string()).collect(),
            warnings: self.warnings,
        }
    }
}

/// The end of a capture for every way of reading it: the flows that shared a path are
/// judged together, then numbered in the order their first packets came (the order a
/// single pass creates them in, whatever shard finished them).
fn conclude(mut finished: Vec<diagnose::Finished>, config: &AnalysisConfig) -> Vec<FlowSummary> {
    finished.sort_by_key(|f| f.summary.first_frame);
    for (i, f) in finished.iter_mut().enumerate() {
        f.summary.id = config.first_flow_id + i as u64;
    }
    diagnose::across_flows(&mut finished);
    finished.into_iter().map(|f| f.summary).collect()
}

/// One capture's analysis in progress, in one thread, with an observer that may see
/// every segment.
pub struct Analysis<O: Observer> {
    config: AnalysisConfig,
    counters: Counters,
    shard: Shard,
    observer: O,
}

impl<O: Observer> Analysis<O> {
    pub fn new(config: AnalysisConfig, observer: O) -> Self {
        let shard = Shard::new(&config);
        Analysis {
            config,
            counters: Counters::default(),
            shard,
            observer,
        }
    }

    pub fn warn(&mut self, message: String) {
        self.counters.warnings.push(message);
    }

    pub fn on_frame(&mut self, frame: &Frame<'_>) {
        if let Some(seg) = self.counters.decode(frame, &self.config.filter) {
            self.shard.on_segment(&seg, frame.number, frame.ts, &mut self.observer);
        }
    }

    /// Ends the capture: finishes every live connection and returns the results.
    pub fn finish(mut self, path: &str, reader: Option<&CaptureReader>) -> (CaptureSummary, Vec<FlowSummary>, O) {
        let finished = self.shard.finish(&mut self.observer);
        let flows = conclude(finished, &self.config);
        (
            self.counters.summary(path, reader, flows.len() as u64),
            flows,
            self.observer,
        )
    }

    /// The id the next flow would get (for numbering across captures).
    pub fn next_flow_id(&self) -> u64 {
        self.config.first_flow_id + self.shard.flows_seen()
    }
}

/// Reads a whole capture and analyses it. A capture cut short, or corrupt after some
/// records, still yields everything before the damage, with a warning saying where.
pub fn analyze_reader<O: Observer>(
    reader: &mut CaptureReader,
    config: AnalysisConfig,
    observer: O,
) -> (CaptureSummary, Vec<FlowSummary>, O) {
    let name = config.capture_name.clone();
    let mut analysis = Analysis::new(config, observer);
    loop {
        match reader.next_frame() {
            Ok(Some(frame)) => analysis.on_frame(&frame),
            Ok(None) => break,
            Err(e) => {
                analysis.warn(e.to_string());
                break;
            }
        }
    }
    analysis.finish(&name, Some(reader))
}
