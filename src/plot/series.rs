//! The series recorder: an [`Observer`] that keeps, per flow, what the plots draw —
//! flight, windows, RTT samples, sequence and ACK numbers, retransmissions, zero windows
//! and delivered bytes — in bounded buckets (see `bucket.rs`), so memory does not grow
//! with the length of a flow. Both directions are recorded while the flow is live (the
//! bulk direction is known only at its end); at the end only the bulk direction is kept.
//!
//! Memory: live flows x (series per flow x at most `DEFAULT_CAP` buckets), plus at most
//! `keep` finished flows (the ones with the most payload; the others are dropped and
//! listed in `dropped`).

use super::bucket::{Bucketed, Range, Sum, M4};
use bdpscope::flow::Dir;
use bdpscope::observe::Observer;
use bdpscope::summary::FlowSummary;
use bdpscope::tcp::rtt::{End, RttSample, RttSource};
use bdpscope::tcp::SegmentEvent;
use std::collections::{BTreeMap, HashMap};

/// Unwraps 32-bit relative sequence numbers into a 64-bit byte offset, by choosing the
/// value nearest to the highest one seen so far (flows longer than 4 GiB wrap).
#[derive(Clone, Copy, Debug, Default)]
struct Unwrap {
    top: u64,
}

impl Unwrap {
    fn get(&self, x: u32) -> u64 {
        const M: i64 = 1 << 32;
        let base = (self.top as i64) & !(M - 1);
        let mut best = base + x as i64;
        for c in [base + x as i64 - M, base + x as i64 + M] {
            if c >= 0 && (c - self.top as i64).abs() < (best - self.top as i64).abs() {
                best = c;
            }
        }
        best.max(0) as u64
    }
    fn saw(&mut self, v: u64) {
        self.top = self.top.max(v);
    }
}

/// One direction's data, from the point of view of its sender.
#[derive(Clone, Debug, Default)]
pub struct DirSeries {
    /// Naive flight at the capture point (highest sequence seen minus highest ACK), on
    /// data segments and on ACKs.
    pub flight: Bucketed<M4>,
    /// The sender's reconstructed flight, and the window it had.
    pub sender_flight: Bucketed<M4>,
    pub sender_window: Bucketed<M4>,
    /// RFC 6675 pipe (SACK-aware flight).
    pub pipe: Bucketed<M4>,
    /// Sequence ranges of data segments (unwrapped relative bytes), and of retransmissions.
    pub segments: Bucketed<Range>,
    pub retransmissions: Bucketed<Range>,
    /// New payload bytes seen, per bucket.
    pub sent: Bucketed<Sum>,
    /// From the other direction: the advertised window (bytes, scaled), the cumulative
    /// ACK, the window's right edge (ACK + window), zero-window adverts (at the ACK).
    pub rwnd: Bucketed<M4>,
    pub ack: Bucketed<M4>,
    pub edge: Bucketed<M4>,
    pub zero_windows: Bucketed<M4>,
    /// SACK blocks the receiver reported (RFC 2018): the sequence range from the lowest
    /// left edge to the highest right edge per bucket.
    pub sacks: Bucketed<Range>,
    /// Bytes newly delivered (cumulative + SACKed), per bucket.
    pub delivered: Bucketed<Sum>,
    pub data_segments: u64,
    pub retransmitted_segments: u64,
    pub zero_window_adverts: u64,
    seq: Unwrap,
}

impl DirSeries {
    fn on_data(&mut self, t: i64, e: &SegmentEvent) {
        self.data_segments += 1;
        let lo = self.seq.get(e.seq);
        let hi = lo + e.len as u64;
        self.seq.saw(hi);
        self.segments.add(t, (lo as f64, hi as f64));
        if e.send.retransmission {
            self.retransmitted_segments += 1;
            self.retransmissions.add(t, (lo as f64, hi as f64));
        }
        if e.send.new_bytes > 0 {
            self.sent.add(t, e.send.new_bytes as f64);
        }
        if let Some(f) = e.flight {
            self.flight.add(t, f as f64);
        }
        if let Some(p) = e.pipe {
            self.pipe.add(t, p as f64);
        }
        if let Some(v) = e.sender_view {
            self.sender_flight.add(t, v.flight as f64);
            if let Some(w) = v.window {
                self.sender_window.add(t, w as f64);
            }
        }
    }

    /// A segment of the other direction: an ACK and a window for this direction's data.
    fn on_peer(&mut self, t: i64, e: &SegmentEvent) {
        if let Some(w) = e.win_bytes {
            self.rwnd.add(t, w as f64);
        }
        let Some(a) = e.ack else { return };
        let ack = self.seq.get(a);
        self.ack.add(t, ack as f64);
        if self.data_segments > 0 {
            // The capture point's flight drops as ACKs pass, not only when data is sent
            // (otherwise an idle sender's flight would seem to stay up).
            self.flight.add(t, self.seq.top.saturating_sub(ack) as f64);
        }
        if let Some(w) = e.win_bytes {
            self.edge.add(t, (ack + w) as f64);
        }
        for (l, r) in e.sack.iter() {
            let lo = self.seq.get(l);
            let hi = self.seq.get(r);
            if hi > lo {
                self.sacks.add(t, (lo as f64, hi as f64));
            }
        }
        if e.zero_window {
            self.zero_window_adverts += 1;
            self.zero_windows.add(t, ack as f64);
        }
        if e.acked.delivered > 0 {
            self.delivered.add(t, e.acked.delivered as f64);
        }
    }

    fn shrink(&mut self) {
        for s in [
            &mut self.flight,
            &mut self.sender_flight,
            &mut self.sender_window,
            &mut self.pipe,
        ] {
            s.shrink();
        }
        for s in [&mut self.rwnd, &mut self.ack, &mut self.edge, &mut self.zero_windows] {
            s.shrink();
        }
        self.segments.shrink();
        self.retransmissions.shrink();
        self.sacks.shrink();
        self.sent.shrink();
        self.delivered.shrink();
    }
}

pub const ENDS: [End; 2] = [End::Client, End::Server];

fn source_index(s: RttSource) -> usize {
    match s {
        RttSource::Handshake => 0,
        RttSource::DataAck => 1,
        RttSource::TsEcho => 2,
    }
}

/// RTT samples of a flow, in milliseconds: end-to-end estimates by source and by the end
/// the raw sample looped through, and an RFC 6298 smoothed value per loop.
#[derive(Clone, Debug, Default)]
pub struct RttSeries {
    /// [source][through end]: the end-to-end RTT each sample implies.
    pub samples: [[Bucketed<M4>; 2]; 3],
    /// [through end]: smoothed end-to-end RTT (alpha 1/8), after each sample.
    pub smoothed: [Bucketed<M4>; 2],
    srtt: [Option<f64>; 2],
    pub count: u64,
}

impl RttSeries {
    fn add(&mut self, t: i64, s: &RttSample) {
        let v = s.end_to_end.millis_f64();
        let end = s.through.index();
        self.samples[source_index(s.source)][end].add(t, v);
        let srtt = match self.srtt[end] {
            None => v,
            Some(x) => x + (v - x) / 8.0,
        };
        self.srtt[end] = Some(srtt);
        self.smoothed[end].add(t, srtt);
        self.count += 1;
    }

    /// Samples of one source, both loops.
    pub fn of_source(&self, s: RttSource) -> [&Bucketed<M4>; 2] {
        let i = source_index(s);
        [&self.samples[i][0], &self.samples[i][1]]
    }

    fn shrink(&mut self) {
        for row in &mut self.samples {
            for s in row {
                s.shrink();
            }
        }
        for s in &mut self.smoothed {
            s.shrink();
        }
    }
}

/// A live flow: both directions.
#[derive(Clone, Debug)]
struct LiveFlow {
    t0: i64,
    dirs: [DirSeries; 2],
    rtt: RttSeries,
}

/// What is kept of a finished flow for its plots.
#[derive(Clone, Debug)]
pub struct FlowRecord {
    /// Capture time of the flow's first segment (ns since the epoch); series times are
    /// nanoseconds after it.
    pub t0_ns: i64,
    /// The bulk direction (as the flow summary names it).
    pub dir: Dir,
    pub data: DirSeries,
    pub rtt: RttSeries,
    /// Payload bytes of the bulk direction (to choose which flows to keep).
    pub bytes: u64,
}

/// Records the series of the flows it is asked for (all when `only` is empty), of one
/// capture or several in turn (flow ids are per capture: a flow is its capture's place
/// and its id).
pub struct SeriesRecorder {
    only: Vec<u64>,
    keep: usize,
    /// The place of the capture being analysed (0 for the first).
    capture: usize,
    live: HashMap<u64, LiveFlow>,
    done: BTreeMap<(usize, u64), FlowRecord>,
    /// Flows (capture's place, id) whose series were dropped because more than `keep`
    /// flows had data.
    pub dropped: Vec<(usize, u64)>,
}

impl SeriesRecorder {
    /// `only`: flow ids to record (empty: all); `keep`: finished flows kept at most.
    pub fn new(only: Vec<u64>, keep: usize) -> Self {
        SeriesRecorder {
            only,
            keep: keep.max(1),
            capture: 0,
            live: HashMap::new(),
            done: BTreeMap::new(),
            dropped: Vec::new(),
        }
    }

    /// The next flows are of the capture in this place (every flow of the previous one
    /// has ended with its capture).
    pub fn set_capture(&mut self, place: usize) {
        self.live.clear();
        self.capture = place;
    }

    /// The record of flow `id` of the capture in place `capture`.
    pub fn get(&self, capture: usize, id: u64) -> Option<&FlowRecord> {
        self.done.get(&(capture, id))
    }

    fn wanted(&self, id: u64) -> bool {
        self.only.is_empty() || self.only.contains(&id)
    }
}

impl Observer for SeriesRecorder {
    /// What it keeps is by flow: an attempt's segments may come late (when the analysis
    /// replays its log), and those of the attempts a flood or scan finding summarises never
    /// come, so a report lists and draws the flows `analyze` lists.
    fn needs_capture_order(&self) -> bool {
        false
    }

    fn on_segment(&mut self, e: &SegmentEvent) {
        if !self.wanted(e.flow) {
            return;
        }
        let ts = e.ts.nanos();
        let f = self.live.entry(e.flow).or_insert_with(|| LiveFlow {
            t0: ts,
            dirs: Default::default(),
            rtt: Default::default(),
        });
        let t = ts.saturating_sub(f.t0);
        if e.len > 0 && !e.flags.syn() {
            f.dirs[e.dir.index()].on_data(t, e);
        }
        f.dirs[e.dir.reverse().index()].on_peer(t, e);
        for s in [e.ack_rtt, e.ts_rtt].iter().flatten() {
            f.rtt.add(t, s);
        }
    }

    fn on_flow_end(&mut self, summary: &FlowSummary) {
        let Some(live) = self.live.remove(&summary.id) else {
            return;
        };
        let dir = summary.bulk_direction;
        let bytes = if dir == Dir::C2S {
            summary.bytes.c2s
        } else {
            summary.bytes.s2c
        };
        let [c2s, s2c] = live.dirs;
        let mut data = if dir == Dir::C2S { c2s } else { s2c };
        if data.data_segments == 0 {
            return; // nothing to plot
        }
        data.shrink();
        let mut rtt = live.rtt;
        rtt.shrink();
        self.done.insert(
            (self.capture, summary.id),
            FlowRecord {
                t0_ns: live.t0,
                dir,
                data,
                rtt,
                bytes,
            },
        );
        if self.done.len() > self.keep {
            // Drop the flow with the least data (the newest among equals).
            let (&id, _) = self
                .done
                .iter()
                .min_by(|a, b| a.1.bytes.cmp(&b.1.bytes).then(b.0.cmp(a.0)))
                .expect("not empty");
            self.done.remove(&id);
            self.dropped.push(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwrapping_follows_the_sequence_past_4_gib() {
        let mut u = Unwrap::default();
        let mut total: u64 = 0;
        for _ in 0..10_000 {
            total += 1_000_000;
            let v = u.get(total as u32);
            assert_eq!(v, total);
            u.saw(v);
        }
        // An ACK a little behind the top, across the wrap.
        assert_eq!(u.get((total - 5000) as u32), total - 5000);
    }
}
