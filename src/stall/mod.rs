//! Stalls and failures: the times a connection stopped moving, and how it ended. They are
//! the whole post-mortem of many captures (a receiver that stopped reading, a path that
//! went dark, a peer that reset), so they are found for every flow, judged or not, and
//! shown in every view.
//!
//! One file per kind:
//! - [`zero_window`]: the receiver's window closed (RFC 9293 §3.8.6.1: the sender probes a
//!   zero window with exponentially backed-off persist probes until it reopens);
//! - [`outage`]: data outstanding and nothing acknowledged for longer than a
//!   retransmission timer, and the retransmission back-off series a sender runs meanwhile
//!   (RFC 6298 §5.5: the timer doubles on each expiry);
//! - [`delayed_ack`]: a short last segment waiting alone for the peer's delayed ACK, again
//!   and again (Nagle meeting delayed ACKs);
//! - [`loss`]: loss episodes: when a direction retransmitted, and what it delivered
//!   meanwhile;
//! - [`ecn`]: ECN episodes: when a queue marked a direction's segments CE and its sender
//!   cut its window for it (as a loss episode, [`episode`] being what the two share);
//! - [`ending`]: how the connection ended: reset, refused, or a connection that only carried
//!   keep-alives (RFC 9293 §3.8.4).
//!
//! Memory is a handful of timestamps per direction and at most [`MAX_STALLS`] finished
//! stalls per flow (the longest kept; the rest counted).

mod delayed_ack;
mod ecn;
mod ending;
mod episode;
mod loss;
mod outage;
mod zero_window;

use crate::decode::{Ecn, TcpFlags};
use crate::flow::Dir;
use crate::summary::{Stall, StallKind};
use crate::tcp::{Connection, SegmentEvent};
use crate::time::{Span, Timestamp};

pub use outage::acks_law;

/// Stalls kept per flow: the longest, once more were found (the count is kept).
pub const MAX_STALLS: usize = 16;
/// The words of the gate's note for a bulk direction whose acknowledgments the capture
/// lacks ("... of the s2c data"), written by `diagnose` and read by [`acks_law`].
pub const LACKS_ACKS_NOTE: &str = "the capture lacks the acknowledgments of the";
/// Back-off intervals kept per stall (the first ones: they show the doubling).
pub const MAX_INTERVALS: usize = 8;

/// Everything the stall finders keep for one connection.
#[derive(Clone, Debug, Default)]
pub struct StallTracker {
    zero: [zero_window::ZeroWindow; 2],
    outage: [outage::Outage; 2],
    /// Per data direction, its delivery as the ACKs report it (what loss and ECN episodes
    /// rate themselves by).
    delivery: [episode::Delivery; 2],
    loss: [loss::Losses; 2],
    ecn: [ecn::Marks; 2],
    delayed_ack: [delayed_ack::DelayedAck; 2],
    silence: outage::Silence,
    ending: ending::Ending,
    found: Vec<Stall>,
    /// Stalls found beyond `MAX_STALLS` (the shortest were dropped).
    pub dropped: u32,
    /// Per data direction, the retransmissions that repaired what an outage lost: those
    /// during the outage (its timer's back-off) and, after it, those of data sent before it
    /// ended (below `repair_mark`). The path carried nothing then: they are the outage's,
    /// not losses a congestion window answered (`outage_repairs`).
    repairs: [u64; 2],
    /// The direction's highest sequence (relative) sent when its last outage ended.
    repair_mark: [Option<u32>; 2],
    /// An outage ended and no new data of the direction was seen since: the first that
    /// comes starts where the sender was when it ended (a capture past the loss never saw
    /// what the outage took, so its own highest sequence is short of that).
    repair_open: [bool; 2],
}

impl StallTracker {
    pub fn on_segment(&mut self, conn: &Connection, ev: &SegmentEvent) {
        // The window a segment advertises is for the other direction's data.
        let data = ev.dir.reverse();
        for z in &mut self.zero {
            z.on_any(ev.ts);
        }
        if !ev.flags.syn() && !ev.flags.rst() {
            if let Some(s) = self.zero[data.index()].on_advert(conn, ev) {
                self.push(s);
            }
        }
        self.zero[ev.dir.index()].on_send(ev);
        // Before the outage trackers see this segment: was its sender's data visibly waiting?
        let seen_waiting = self.outage[ev.dir.index()].waiting();
        if let Some(s) = self.silence.on_segment(conn, ev, seen_waiting) {
            // Ended by this retransmission: the repair count below takes it.
            self.mark_outage(conn, ev.dir);
            self.push(s);
        }
        let zero_open = |z: &zero_window::ZeroWindow| z.is_open();
        // The segment's ACK is for the other direction's data: its delivery.
        let acked_dir = ev.dir.reverse();
        let acked_new = self.delivery[acked_dir.index()].on_ack(ev);
        for d in [Dir::C2S, Dir::S2C] {
            let closed = zero_open(&self.zero[d.index()]);
            if let Some(s) = self.outage[d.index()].on_segment(conn, ev, d, closed) {
                if matches!(s.kind, StallKind::Outage | StallKind::RtoBackoff) {
                    // Its retransmissions came during the wait, before this ACK.
                    self.repairs[d.index()] += s.events as u64;
                    self.mark_outage(conn, d);
                }
                self.push(s);
            }
            let acked = d == acked_dir && acked_new;
            let delivery = &self.delivery[d.index()];
            // One at a time: an array of the two would copy both stalls on every segment.
            if let Some(s) = self.loss[d.index()].on_segment(conn, ev, d, delivery, acked) {
                self.push(s);
            }
            self.delayed_ack[d.index()].on_segment(conn, ev, d);
        }
        // ECN signals are rare: the ECN episodes see a segment that carries one, or any
        // while an episode is open; one test for the rest.
        let ecn_signal = ev.ecn == Ecn::Ce || ev.flags.has(TcpFlags::ECE | TcpFlags::CWR);
        if ecn_signal || self.ecn.iter().any(ecn::Marks::is_open) {
            self.on_ecn(conn, ev, ecn_signal, acked_dir, acked_new);
        }
        self.ending.on_segment(conn, ev);
        // A retransmission of data sent before the last outage ended repairs its loss.
        let i = ev.dir.index();
        let mark = self.repair_mark[i];
        let before = |m: u32| (m.wrapping_sub(ev.seq) as i32) > 0;
        if ev.send.retransmission && ev.len > 0 && mark.is_some_and(before) {
            self.repairs[i] += 1;
        } else if self.repair_open[i] && ev.send.new_bytes > 0 && !ev.send.retransmission {
            self.repair_open[i] = false;
            if mark.is_none_or(|m| !before(m)) {
                self.repair_mark[i] = Some(ev.seq);
            }
        }
    }

    /// An outage of direction `d`'s data just ended: what it had sent by now is what the
    /// outage may have lost.
    fn mark_outage(&mut self, conn: &Connection, d: Dir) {
        let x = conn.dir(d);
        self.repair_mark[d.index()] = x.nxt.and_then(|n| x.relative(n));
        self.repair_open[d.index()] = true;
    }

    /// The retransmissions of direction `d` that repaired what its outages lost (and, in
    /// `stalls` as [`Self::finish`] gave them, those of a connection lost at the end).
    pub fn outage_repairs(&self, d: Dir, stalls: &[Stall]) -> u64 {
        let lost: u64 = stalls
            .iter()
            .filter(|s| s.kind == StallKind::Lost && s.direction == Some(d))
            .map(|s| s.events as u64)
            .sum();
        self.repairs[d.index()] + lost
    }

    /// Whether the capture lacks the acknowledgments of direction `d`'s data: its flight,
    /// RTT and window cannot be followed from it.
    pub fn lacks_acks(&self, d: Dir) -> bool {
        self.outage[d.index()].lacks_acks()
    }

    /// Where the capture lacks the acknowledgments of direction `d`'s data (exactly when
    /// [`Self::lacks_acks`]): the waits that showed it, up to the connection's end.
    pub fn acks_lacking(&self, conn: &Connection, d: Dir) -> Option<crate::summary::AcksLacking> {
        let closed = self.zero[d.index()].is_open();
        self.outage[d.index()].acks_lacking(conn, d, conn.last_ts, closed)
    }

    /// What the capture lacks, where a wait could not be judged for it (no outage is
    /// claimed then): notes for the flow.
    pub fn capture_notes(&self, conn: &Connection) -> Vec<String> {
        let mut out = Vec::new();
        for d in [Dir::C2S, Dir::S2C] {
            let o = &self.outage[d.index()];
            out.extend(o.notes.iter().cloned());
            if let outage::Judged::Note(n) = o.finish(conn, d, conn.last_ts, self.zero[d.index()].is_open()) {
                if o.notes.len() < outage::MAX_NOTES {
                    out.push(n);
                }
            }
        }
        out
    }

    /// The ECN episodes of both directions (`acked_new`: the segment acknowledged new data
    /// of `acked_dir`).
    #[inline(never)]
    fn on_ecn(&mut self, conn: &Connection, ev: &SegmentEvent, signal: bool, acked_dir: Dir, acked_new: bool) {
        for d in [Dir::C2S, Dir::S2C] {
            let acked = d == acked_dir && acked_new;
            let (marks, delivery) = (&mut self.ecn[d.index()], &self.delivery[d.index()]);
            if let Some(s) = marks.on_segment(conn, ev, d, delivery, acked, signal) {
                self.push(s);
            }
        }
    }

    fn push(&mut self, s: Stall) {
        self.found.push(s);
        if self.found.len() > MAX_STALLS {
            let shortest = (0..self.found.len())
                .min_by(|&a, &b| self.found[a].duration_s.total_cmp(&self.found[b].duration_s))
                .expect("not empty");
            self.found.remove(shortest);
            self.dropped += 1;
        }
    }

    /// The stalls of the whole connection, in time order, once it is finished.
    pub fn finish(&self, conn: &Connection) -> Vec<Stall> {
        let mut out = self.found.clone();
        let end = conn.last_ts;
        for d in [Dir::C2S, Dir::S2C] {
            out.extend(self.zero[d.index()].finish(d, end));
            if let outage::Judged::Stall(s) =
                self.outage[d.index()].finish(conn, d, end, self.zero[d.index()].is_open())
            {
                out.push(s);
            }
            out.extend(self.loss[d.index()].finish(conn, d, &self.delivery[d.index()]));
            out.extend(self.ecn[d.index()].finish(conn, d, &self.delivery[d.index()]));
            out.extend(self.delayed_ack[d.index()].finish(conn, d));
        }
        out.extend(self.ending.finish(conn));
        // An episode's sentence was written when it ended, with the direction's figures of
        // then; the summary beside it prints the connection's final ones, so the sentence
        // states those too.
        let lacking = [Dir::C2S, Dir::S2C].map(|d| self.acks_lacking(conn, d));
        for s in out
            .iter_mut()
            .filter(|s| matches!(s.kind, StallKind::LossEpisode | StallKind::EcnEpisode))
        {
            let Some(d) = s.direction else { continue };
            let all = self.delivery[d.index()].overall(conn);
            if let Some(all) = &all {
                s.sentence = episode::restate_overall(&s.sentence, all);
            }
            // Only ACKs report a delivery (RFC 9293 §3.10.7.4; SACK, RFC 2018): over a
            // wait whose ACKs the capture lacks, what the episode delivered is not known —
            // nothing acknowledged in the capture is not nothing delivered.
            if lacking[d.index()].as_ref().is_some_and(|l| l.meets(s.start, s.end)) {
                episode::delivery_unknown(s, receiver_name(d), all.as_deref());
            }
            if s.kind == StallKind::LossEpisode {
                s.sentence = loss::restate_share(&s.sentence, conn, d, s.events);
            }
        }
        out.sort_by(|a, b| a.start.total_cmp(&b.start));
        out
    }
}

/// A stall of `kind` over [start, end).
fn stall(kind: StallKind, direction: Option<Dir>, start: Timestamp, end: Timestamp) -> Stall {
    Stall {
        kind,
        direction,
        start: start.secs_f64(),
        end: end.secs_f64(),
        duration_s: (end - start).max_zero().secs_f64(),
        recovered: false,
        events: 0,
        intervals_s: Vec::new(),
        resumed_by: None,
        delivered_bps: None,
        sentence: String::new(),
    }
}

/// Intervals between consecutive instants, seconds, the first [`MAX_INTERVALS`].
fn intervals(times: &[Timestamp]) -> Vec<f64> {
    times
        .windows(2)
        .take(MAX_INTERVALS)
        .map(|w| (w[1] - w[0]).max_zero().secs_f64())
        .collect()
}

/// "0.2, 0.4, 0.8 s": intervals for a sentence.
fn list_secs(v: &[f64]) -> String {
    let parts: Vec<String> = v.iter().map(|&s| crate::units::secs(s)).collect();
    parts.join(", ")
}

/// Whether the intervals grow as an exponential back-off does (each at least 1.5x the
/// one before: RFC 6298 §5.5 doubles the timer, RFC 9293 §3.8.6.1 the persist timer;
/// timer granularity and jitter keep real ratios near but not exactly 2).
fn backs_off(v: &[f64]) -> bool {
    v.len() >= 2 && v.windows(2).all(|w| w[1] >= 1.5 * w[0])
}

/// Who sends in a direction, for sentences.
fn sender_name(d: Dir) -> &'static str {
    match d {
        Dir::C2S => "client",
        Dir::S2C => "server",
    }
}

fn receiver_name(d: Dir) -> &'static str {
    sender_name(d.reverse())
}

/// The shortest stall worth reporting: a retransmission timer's worth of no progress
/// (RFC 6298's RTO, at least its one-second floor); anything shorter is ordinary
/// recovery or an ordinary pause.
fn threshold(conn: &Connection) -> Span {
    conn.rtt.rto_bound()
}

/// The laws of stalls (on the summary): every zero window the receiver advertised is in a
/// zero-window stall; a stall ends no earlier than it starts, lasts what its ends say, and
/// says what it is.
pub fn law(f: &crate::summary::FlowSummary) -> Vec<String> {
    let mut out = Vec::new();
    for (name, d) in [("c2s", &f.c2s), ("s2c", &f.s2c)] {
        let dir = if name == "c2s" { Dir::C2S } else { Dir::S2C };
        let found = f
            .stalls
            .iter()
            .any(|s| s.kind == StallKind::ZeroWindow && s.direction == Some(dir));
        if d.zero_window_advertisements > 0 && !found {
            out.push(format!(
                "{} zero-window advertisements for {name} data and no zero-window stall",
                d.zero_window_advertisements
            ));
        }
    }
    out.extend(ecn::law(f));
    for s in &f.stalls {
        if s.end < s.start || s.duration_s < 0.0 || s.sentence.is_empty() {
            out.push(format!("a malformed stall: {s:?}"));
        }
        // A delivery during an episode is of the direction's own bytes: never more than it
        // carried, or had acknowledged, in all (within a segment, for the ACK that ends the
        // span). The ACKs of a capture begun mid-transfer cover the flight already out, which
        // the capture never saw sent (census seed 5151: a receiver-side capture from 0.75 s
        // of a 300 Mbit/s x 100 ms upload, 294 kB delivered in an episode, 206 kB seen).
        if let (Some(bps), Some(d)) = (s.delivered_bps, s.direction) {
            let carried = match d {
                Dir::C2S => f.bytes.c2s,
                Dir::S2C => f.bytes.s2c,
            }
            .max(f.dir(d).acked_bytes) as f64;
            let during = bps / 8.0 * (s.end - s.start);
            if during > carried * 1.01 + 65_535.0 {
                out.push(format!(
                    "a {} stall delivered {during:.0} B of a direction that carried {carried} B",
                    s.kind.as_str()
                ));
            }
        }
        // Merged episodes report their time closed in all, never more than their span.
        if s.duration_s > (s.end - s.start) + 1e-6 && s.kind != StallKind::DelayedAck {
            out.push(format!(
                "a {} stall of {} s over a span of {} s",
                s.kind.as_str(),
                s.duration_s,
                s.end - s.start
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests;
