//! The driver of one pass over one capture: frames -> decode -> the front (every
//! connection's life: new, going on, ended) -> the trackers of the connections that
//! matter (in a shard) -> diagnosis -> summaries, written out as connections end.
//! Memory is bounded by the connections alive at one time, and for connections that have
//! not carried data by a small record each (see `front`).
//!
//! One thread drives the front and one shard (`Analysis`, which can also feed an
//! observer every segment), or the reading thread drives the front and hands each
//! connection's work to the worker whose shard holds it (`analyze_reader_parallel`).
//! Both give the same flows, numbered, cut and ordered the same way.

use crate::capture::{CaptureReader, Compression, Container, Frame, LinkType, Step};
use crate::decode::{self, Skip};
use crate::endpoint::Endpoint;
use crate::flow::{FxHashMap, TableConfig};
use crate::observe::Observer;
use crate::summary::{CaptureSummary, ConnectionCounts, FlowSummary, SkipCount};
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
    /// Whether a connection between `a` and `b` is selected.
    fn accepts_ends(&self, a: &Endpoint, b: &Endpoint) -> bool {
        (self.hosts.is_empty() || self.hosts.iter().any(|h| *h == a.addr || *h == b.addr))
            && (self.ports.is_empty() || self.ports.iter().any(|p| *p == a.port || *p == b.port))
    }
}

#[derive(Clone, Debug, Default)]
pub struct AnalysisConfig {
    pub table: TableConfig,
    /// Id of the first flow (0 for a capture: ids are per capture).
    pub first_flow_id: u64,
    /// Name of the capture, copied into every flow's `capture` field.
    pub capture_name: String,
    /// Which connections are listed. Every connection is numbered and lives as it would
    /// without it (see `selected`): a flow's id does not depend on the selection.
    pub filter: FlowFilter,
    /// Bottleneck rate given by the user (bits/s), instead of estimating it.
    pub link_rate_bps: Option<f64>,
    /// Memory for live connections (an estimate, the same on every machine).
    pub budget: Budget,
    /// List every connection attempt, also those a flood or scan finding summarises.
    pub list_all: bool,
}

mod attempt;
mod front;
mod output;
mod parallel;
mod router;
mod selected;
mod shard;

pub use front::{Budget, EndCounts};
use front::{Cmd, Decisions, Expect, Front, FrontConfig};
use output::Output;
pub use parallel::{analyze_reader_parallel, analyze_reader_parallel_into};
use selected::{Selected, Selection};
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
    /// Counts a record and decodes it; the segment when it is TCP, and its fingerprint
    /// into `print`.
    #[inline]
    fn decode(&mut self, frame: &Frame<'_>, print: &mut decode::Print) -> Option<decode::Segment> {
        self.packets += 1;
        self.first_ts = Some(self.first_ts.map_or(frame.ts, |t| t.min(frame.ts)));
        self.last_ts = Some(self.last_ts.map_or(frame.ts, |t| t.max(frame.ts)));
        if !self.link_types.contains(&frame.link) {
            self.link_types.push(frame.link);
        }
        match decode::decode_printed(frame.link, frame.data, print) {
            Ok(seg) => {
                self.tcp_segments += 1;
                Some(seg)
            }
            Err(skip) => {
                *self.skipped.entry(skip).or_insert(0) += 1;
                None
            }
        }
    }

    fn summary(
        self,
        path: &str,
        reader: Option<&CaptureReader>,
        front: &Front,
        config: &AnalysisConfig,
    ) -> CaptureSummary {
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
            format: reader.map_or(Container::Pcap, |r| r.format().container()),
            compression: reader.map_or(Compression::None, |r| r.compression()),
            packets: self.packets,
            tcp_segments: self.tcp_segments,
            flows: front.next_id() - config.first_flow_id,
            first_ts: self.first_ts.map(|t| t.secs_f64()),
            last_ts: self.last_ts.map(|t| t.secs_f64()),
            skipped,
            link_types: self.link_types.iter().map(|l| l.to_string()).collect(),
            warnings: self.warnings,
            capture_duplicates: front.set_aside,
            attempts: front.watcher.counts(front.ends.folded),
            syn_rate: front.watcher.rate(),
            floods: front.watcher.findings(),
            connections: connection_counts(&front.ends, &config.budget),
        }
    }
}

fn connection_counts(e: &EndCounts, b: &Budget) -> ConnectionCounts {
    ConnectionCounts {
        peak_live: e.peak_live,
        peak_attempt_records: e.peak_logged,
        peak_bytes: e.peak_bytes,
        budget_bytes: b.total_bytes,
        attempt_budget_bytes: b.attempt_bytes,
        evicted_without_data: e.evicted_without_data,
        evicted_with_data: e.evicted_with_data,
        expired_syn_sent: e.expired_syn_sent,
        expired_syn_received: e.expired_syn_received,
        expired_established: e.expired_established,
        expired_closed: e.expired_closed,
        replaced: e.replaced,
    }
}

fn front_config(config: &AnalysisConfig, defer: bool, workers: usize, rebalance_min: u64) -> FrontConfig {
    FrontConfig {
        first_id: config.first_flow_id,
        timeouts: config.table.timeouts,
        budget: config.budget,
        defer,
        list_all: config.list_all,
        workers,
        rebalance_min,
    }
}

/// The front's decisions carried out in this thread, on one shard.
struct Local<'a, O: Observer> {
    shard: &'a mut Shard,
    output: &'a mut Output,
    observer: &'a mut O,
}

impl<O: Observer> Decisions for Local<'_, O> {
    #[inline]
    fn cmd(&mut self, _worker: usize, cmd: Cmd) {
        let output = &mut *self.output;
        self.shard.exec(
            cmd,
            self.observer,
            &mut |fseq, f| output.arrive(fseq, f),
            &mut |_, _, _| unreachable!("one shard: nothing moves"),
        );
    }
    fn expect(&mut self, e: Expect) {
        self.output.expect(e);
    }
}

/// One capture's analysis in progress, in one thread, with an observer that may see
/// every segment.
pub struct Analysis<O: Observer> {
    config: AnalysisConfig,
    counters: Counters,
    front: Front,
    shard: Shard,
    output: Output,
    observer: O,
    /// The host/port selection (None: every connection).
    selection: Option<Selection>,
}

impl<O: Observer> Analysis<O> {
    pub fn new(config: AnalysisConfig, observer: O) -> Self {
        // An observer that wants every segment as it comes gets every connection tracked
        // from its first segment (no attempt is held back as a log). One that keeps them by
        // flow gets an attempt's segments when its log is replayed: the attempts are then
        // held, and folded into a flood finding, as without an observer.
        let defer = !observer.wants_segments() || !observer.needs_capture_order();
        Analysis {
            front: Front::new(front_config(&config, defer, 1, u64::MAX)),
            shard: Shard::new(&config),
            output: Output::new(&config),
            selection: Selection::new(&config.filter),
            config,
            counters: Counters::default(),
            observer,
        }
    }

    pub fn warn(&mut self, message: String) {
        self.counters.warnings.push(message);
    }

    #[inline]
    pub fn on_frame(&mut self, frame: &Frame<'_>) {
        let mut print = decode::Print::default();
        if let Some(seg) = self.counters.decode(frame, &mut print) {
            let mut local = Local {
                shard: &mut self.shard,
                output: &mut self.output,
                observer: &mut self.observer,
            };
            match &mut self.selection {
                None => self.front.on_segment(&seg, &print, frame.number, frame.ts, &mut local),
                Some(state) => {
                    let mut d = Selected {
                        inner: &mut local,
                        state,
                    };
                    self.front.on_segment(&seg, &print, frame.number, frame.ts, &mut d)
                }
            }
        }
    }

    /// The flows finished so far that are ready to be written, in output order (see
    /// `output`). What is not taken here comes with [`Self::finish`].
    pub fn take_flows(&mut self) -> Vec<FlowSummary> {
        if self.output.has_ready() {
            self.output.take_ready()
        } else {
            Vec::new()
        }
    }

    /// Ends the capture: finishes every live connection; the capture's summary and the
    /// flows not taken yet.
    pub fn finish(mut self, path: &str, reader: Option<&CaptureReader>) -> (CaptureSummary, Vec<FlowSummary>, O) {
        let mut local = Local {
            shard: &mut self.shard,
            output: &mut self.output,
            observer: &mut self.observer,
        };
        match &mut self.selection {
            None => self.front.finish(&mut local),
            Some(state) => self.front.finish(&mut Selected {
                inner: &mut local,
                state,
            }),
        }
        self.output.finish();
        let flows = self.output.take_ready();
        let summary = self.counters.summary(path, reader, &self.front, &self.config);
        (summary, flows, self.observer)
    }

    /// The id the next flow would get (for numbering across captures).
    pub fn next_flow_id(&self) -> u64 {
        self.front.next_id()
    }
}

/// Records between two progress reports (and takes of finished flows) in every command.
pub const PROGRESS_EVERY: u64 = 1 << 16;

impl<O: Observer> Analysis<O> {
    /// Reads `reader` into the analysis (the one read loop, [`CaptureReader::read_all`]):
    /// `progress` with the reader now and then, each flow to `sink` as soon as it is
    /// written. A capture cut short, or corrupt after some records, still yields
    /// everything before the damage: the error becomes a warning of the capture's summary
    /// and is returned, for a command that also says it on stderr.
    pub fn read(
        &mut self,
        reader: &mut CaptureReader,
        progress: &mut dyn FnMut(&CaptureReader),
        sink: &mut dyn FnMut(FlowSummary),
    ) -> Option<crate::capture::CaptureError> {
        let Ok(damage) = reader.read_all(PROGRESS_EVERY, |step| {
            match step {
                Step::Frame(frame) => self.on_frame(frame),
                Step::Tick(r) => {
                    progress(r);
                    for f in self.take_flows() {
                        sink(f);
                    }
                }
            }
            Ok::<(), std::convert::Infallible>(())
        });
        if let Some(e) = &damage {
            self.warn(e.to_string());
        }
        damage
    }
}

/// Reads a whole capture and analyses it (see [`Analysis::read`]): the capture's summary,
/// every flow in output order, and the observer.
pub fn analyze_reader<O: Observer>(
    reader: &mut CaptureReader,
    config: AnalysisConfig,
    observer: O,
) -> (CaptureSummary, Vec<FlowSummary>, O) {
    let name = config.capture_name.clone();
    let mut analysis = Analysis::new(config, observer);
    let mut flows = Vec::new();
    analysis.read(reader, &mut |_| {}, &mut |f| flows.push(f));
    let (summary, rest, observer) = analysis.finish(&name, Some(reader));
    flows.extend(rest);
    (summary, flows, observer)
}
