//! The driver of one pass over one capture: frames -> decode -> flow table -> tracker ->
//! diagnosis -> summaries. Memory is bounded by the connections alive at one time.

use crate::capture::{CaptureError, CaptureReader, Frame, LinkType};
use crate::decode::{self, Skip};
use crate::diagnose::{self, Accumulator};
use crate::flow::{FlowTable, FxHashMap, TableConfig, Tracked};
use crate::observe::Observer;
use crate::summary::{CaptureSummary, FlowSummary, SkipCount};
use crate::tcp::Connection;
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

struct Entry {
    conn: Connection,
    acc: Accumulator,
}

impl Tracked for Entry {
    fn new(conn: Connection) -> Self {
        Entry {
            conn,
            acc: Accumulator::default(),
        }
    }
    fn conn(&self) -> &Connection {
        &self.conn
    }
}

/// One capture's analysis in progress.
pub struct Analysis<O: Observer> {
    config: AnalysisConfig,
    table: FlowTable<Entry>,
    observer: O,
    finished: Vec<diagnose::Finished>,
    evicted: Vec<Entry>,
    packets: u64,
    tcp_segments: u64,
    first_ts: Option<Timestamp>,
    last_ts: Option<Timestamp>,
    skipped: FxHashMap<Skip, u64>,
    link_types: Vec<LinkType>,
    warnings: Vec<String>,
}

impl<O: Observer> Analysis<O> {
    pub fn new(config: AnalysisConfig, observer: O) -> Self {
        let table = FlowTable::new(config.table, config.first_flow_id);
        Analysis {
            config,
            table,
            observer,
            finished: Vec::new(),
            evicted: Vec::new(),
            packets: 0,
            tcp_segments: 0,
            first_ts: None,
            last_ts: None,
            skipped: FxHashMap::default(),
            link_types: Vec::new(),
            warnings: Vec::new(),
        }
    }

    pub fn warn(&mut self, message: String) {
        self.warnings.push(message);
    }

    pub fn on_frame(&mut self, frame: &Frame<'_>) {
        self.packets += 1;
        self.first_ts = Some(self.first_ts.map_or(frame.ts, |t| t.min(frame.ts)));
        self.last_ts = Some(self.last_ts.map_or(frame.ts, |t| t.max(frame.ts)));
        if !self.link_types.contains(&frame.link) {
            self.link_types.push(frame.link);
        }
        let seg = match decode::decode(frame.link, frame.data) {
            Ok(seg) => seg,
            Err(skip) => {
                *self.skipped.entry(skip).or_insert(0) += 1;
                return;
            }
        };
        self.tcp_segments += 1;
        if !self.config.filter.accepts(&seg) {
            return;
        }
        let (entry, dir, replaced) = self.table.lookup(&seg, frame.ts);
        let event = entry.conn.on_segment(&seg, dir, frame.number, frame.ts);
        entry.acc.on_segment(&entry.conn, &event);
        if self.observer.wants_segments() {
            self.observer.on_segment(&event);
        }
        if let Some(old) = replaced {
            self.finish_entry(old);
        }
        self.table.evict_due(&mut self.evicted);
        while let Some(e) = self.evicted.pop() {
            self.finish_entry(e);
        }
    }

    fn finish_entry(&mut self, e: Entry) {
        let done = diagnose::finish(&e.conn, e.acc, &self.config);
        self.observer.on_flow_end(&done.summary);
        self.finished.push(done);
    }

    /// Ends the capture: finishes every live connection and returns the results.
    pub fn finish(mut self, path: &str, reader: Option<&CaptureReader>) -> (CaptureSummary, Vec<FlowSummary>, O) {
        for e in self.table.drain() {
            self.finish_entry(e);
        }
        let mut finished = std::mem::take(&mut self.finished);
        finished.sort_by_key(|f| f.summary.id);
        diagnose::across_flows(&mut finished, &self.config);
        let flows: Vec<FlowSummary> = finished.into_iter().map(|f| f.summary).collect();
        let mut skipped: Vec<SkipCount> = self
            .skipped
            .iter()
            .map(|(k, n)| SkipCount {
                reason: k.to_string(),
                records: *n,
            })
            .collect();
        skipped.sort_by(|a, b| b.records.cmp(&a.records).then(a.reason.cmp(&b.reason)));
        let summary = CaptureSummary {
            path: path.to_string(),
            format: reader.map_or("pcap", |r| r.format().name()).to_string(),
            compression: reader.map_or("none", |r| r.compression().name()).to_string(),
            packets: self.packets,
            tcp_segments: self.tcp_segments,
            flows: flows.len() as u64,
            first_ts: self.first_ts.map(|t| t.secs_f64()),
            last_ts: self.last_ts.map(|t| t.secs_f64()),
            skipped,
            link_types: self.link_types.iter().map(|l| l.to_string()).collect(),
            warnings: self.warnings,
        };
        (summary, flows, self.observer)
    }

    /// The id the next flow would get (for numbering across captures).
    pub fn next_flow_id(&self) -> u64 {
        self.table.next_id()
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
                analysis.warn(warning_for(&e));
                break;
            }
        }
    }
    analysis.finish(&name, Some(reader))
}

fn warning_for(e: &CaptureError) -> String {
    format!("stopped reading: {e}")
}
