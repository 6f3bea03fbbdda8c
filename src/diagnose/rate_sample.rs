//! Delivery-rate samples over a round trip or more: the most the path was shown to carry.
//!
//! The estimator of Linux's `tcp_rate.c` (Cheng, Cardwell, Hassas Yeganeh & Jacobson,
//! "Delivery Rate Estimation", draft-cheng-iccrg-delivery-rate-estimation), run at the
//! capture point. Each segment remembers, when it passes, how much had been delivered
//! (ACKed or SACKed, counted once: `AckOutcome::delivered`) and when; when an ACK reports
//! it delivered, the bytes delivered since, over the longer of the send phase (from the
//! send of the segment delivered before it to its own) and the ACK phase (from the
//! delivery it remembered to this ACK), is a rate the path carried. Taking the longer
//! phase keeps ACK compression (a short ACK phase) and send bursts (a short send phase)
//! from making a rate; an interval shorter than the end-to-end base RTT is no sample
//! (`tcp_rate_gen`: "Normally we expect interval_us >= min-rtt"), so a sample is the data
//! of a whole round trip or more. Samples taken while the sender had nothing to send
//! (app-limited) are rates the path carried too, below its capacity: BBR takes an
//! app-limited sample whenever it is above its estimate (`bbr_update_bw`).
//!
//! The largest sample is a floor of the bottleneck's rate: a flow that delivered 2.8 KiB
//! in one 413 ms round trip ran at least 55 kbit/s through every element of its path,
//! whatever its delivery over longer windows (pppoe-over-qinq's 12.2 kbit/s estimate, beside
//! a flight 5.4 times its BDP with no queue). Where a send after nothing was outstanding
//! opens the interval, its own bytes are not counted in it: a capture past the bottleneck
//! saw them already across (`RateSampler::on_ack`).
//!
//! Memory: one record per segment outstanding, dropped by the cumulative ACK.

use std::collections::VecDeque;

use crate::seq::SeqNum;
use crate::time::{Span, Timestamp};

/// A segment outstanding: what had been delivered when it passed the capture point.
#[derive(Clone, Copy, Debug)]
struct Sent {
    /// Relative sequence number just past the segment.
    end: SeqNum,
    /// When it (or its latest retransmission) passed.
    at: Timestamp,
    /// The send time of the segment delivered last before it passed (`tx.first_tx_mstamp`).
    first_tx: Timestamp,
    /// The time of the last delivery before it passed (`tx.delivered_mstamp`).
    delivered_at: Timestamp,
    /// Bytes delivered before it passed (`tx.delivered`).
    delivered: u64,
    /// A SACK block reported it: delivered, kept until the cumulative ACK passes it.
    sacked: bool,
    /// `delivered_at` is an ACK's time, not a send's after nothing was outstanding.
    after_ack: bool,
}

/// The largest rate sample: `bytes` delivered over `interval`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSample {
    pub bytes: u64,
    pub interval: Span,
    /// The ACK that completed it.
    pub at: Timestamp,
}

impl RateSample {
    /// Bytes per second.
    pub fn rate(&self) -> f64 {
        self.bytes as f64 / self.interval.secs_f64().max(1e-9)
    }
}

/// One direction's sampler.
#[derive(Clone, Debug, Default)]
pub struct RateSampler {
    sent: VecDeque<Sent>,
    /// Records in `sent` no SACK block has reported (Linux's `packets_out` less SACKed).
    unsacked: usize,
    /// Bytes delivered so far (`tp->delivered`).
    delivered: u64,
    /// Time of the last ACK that reported delivery (`tp->delivered_mstamp`).
    delivered_at: Option<Timestamp>,
    /// Send time of the most recently delivered segment (`tp->first_tx_mstamp`).
    first_tx: Option<Timestamp>,
    /// `delivered_at` was set by an ACK.
    after_ack: bool,
    /// The length of the segment whose passage began the interval, when a send after
    /// nothing was outstanding began it (`after_ack` false).
    lead: u64,
    /// The most one ACK has reported delivered: how far a receiver's ACK can lag the data it
    /// holds (delayed and stretch ACKs, GRO batches).
    stretch: u64,
    /// The latest send time of the segments the latest ACK delivered.
    pub latest_sent: Option<Timestamp>,
    /// The largest sample so far.
    pub best: Option<RateSample>,
    /// Samples taken (intervals of a round trip or more).
    pub samples: u64,
}

/// Records kept at most: a flight of 64 Ki segments (96 MiB at a 1448-byte MSS). Beyond it
/// the oldest record goes (its delivery then makes no sample) and the memory stays bounded.
const MAX_OUTSTANDING: usize = 1 << 16;

impl RateSampler {
    /// Data (new or retransmitted) `[seq, seq + len)` passed at `ts`.
    pub fn on_send(&mut self, ts: Timestamp, seq: u32, len: u32, retransmission: bool) {
        if len == 0 {
            return;
        }
        let end = SeqNum(seq).add(len);
        // Nothing outstanding: the network can deliver what goes now only after now
        // (`tcp_rate_skb_sent`: both clocks start at this send).
        if self.unsacked == 0 {
            self.first_tx = Some(ts);
            self.delivered_at = Some(ts);
            self.after_ack = false;
            self.lead = len as u64;
        }
        let rec = Sent {
            end,
            at: ts,
            first_tx: self.first_tx.unwrap_or(ts),
            delivered_at: self.delivered_at.unwrap_or(ts),
            delivered: self.delivered,
            sacked: false,
            after_ack: self.after_ack,
        };
        if retransmission {
            // A retransmission is sent again: the records it covers take its time
            // (Linux stamps the skb at each transmission).
            let from = SeqNum(seq);
            let first = self.sent.partition_point(|s| !s.end.is_after(from));
            for s in self.sent.range_mut(first..) {
                if s.end.is_after(end) {
                    break;
                }
                *s = Sent {
                    end: s.end,
                    sacked: s.sacked,
                    ..rec
                };
            }
            return;
        }
        if self.sent.back().is_some_and(|b| !end.is_after(b.end)) {
            return;
        }
        if self.sent.len() >= MAX_OUTSTANDING {
            if self.sent.pop_front().is_some_and(|s| !s.sacked) {
                self.unsacked -= 1;
            }
        }
        self.unsacked += 1;
        self.sent.push_back(rec);
    }

    /// An ACK at `ts` with cumulative ACK `ack` and SACK blocks `sack` newly reported
    /// `delivered` bytes. `min_interval`: the shortest interval a sample may span (the
    /// end-to-end base RTT, and the clock's resolution).
    pub fn on_ack(
        &mut self,
        ts: Timestamp,
        ack: Option<u32>,
        sack: impl Iterator<Item = (u32, u32)>,
        delivered: u64,
        min_interval: Option<Span>,
    ) {
        if delivered == 0 {
            return;
        }
        self.delivered += delivered;
        self.stretch = self.stretch.max(delivered);
        // The most recently sent of the segments this ACK delivered (`tcp_rate_skb_delivered`).
        let mut latest: Option<Sent> = None;
        let mut consider = |s: &Sent| {
            if latest.is_none_or(|l| s.at > l.at || (s.at == l.at && s.end.is_after(l.end))) {
                latest = Some(*s);
            }
        };
        if let Some(a) = ack.map(SeqNum) {
            while let Some(s) = self.sent.front().filter(|s| !s.end.is_after(a)) {
                if !s.sacked {
                    consider(s);
                    self.unsacked -= 1;
                }
                self.sent.pop_front();
            }
        }
        for (l, r) in sack {
            let (l, r) = (SeqNum(l), SeqNum(r));
            // Records ending inside the block: the first whose end is past `l`.
            let first = self.sent.partition_point(|s| !s.end.is_after(l));
            for s in self.sent.range_mut(first..) {
                if s.end.is_after(r) {
                    break;
                }
                if !s.sacked {
                    s.sacked = true;
                    self.unsacked -= 1;
                    consider(s);
                }
            }
        }
        self.delivered_at = Some(ts);
        self.after_ack = true;
        self.latest_sent = latest.map(|l| l.at);
        let Some(p) = latest else { return };
        self.first_tx = Some(p.at);
        let send_phase = p.at - p.first_tx;
        let ack_phase = ts - p.delivered_at;
        let interval = send_phase.max(ack_phase);
        let Some(min) = min_interval else { return };
        if interval < min || interval.nanos() <= 0 {
            return;
        }
        // An ACK that opened the interval may have lagged the data the receiver held by up
        // to the most any ACK reported at once: those bytes crossed the path before the
        // interval began (the ACK aggregation BBR allows for: draft-cardwell-iccrg-bbr-
        // congestion-control §4.5.5). A send after nothing was outstanding opens it with its
        // own passage: next to the sender its bytes cross the bottleneck after it, but past
        // the bottleneck (a capture near the receiver) they crossed it before, and n
        // passages bound n - 1 serialisations. The floor counts only what the interval
        // surely held (census: a 4 Mbit/s, 2 ms path whose segments took 2.9 ms each, seen
        // at the receiver: two segments ACKed 2.9 ms after the first arrived read 7.68
        // Mbit/s).
        let lag = if p.after_ack { self.stretch } else { self.lead };
        let Some(bytes) = (self.delivered - p.delivered).checked_sub(lag).filter(|&b| b > 0) else {
            return;
        };
        self.samples += 1;
        let sample = RateSample {
            bytes,
            interval,
            at: ts,
        };
        if self.best.is_none_or(|b| sample.rate() > b.rate()) {
            self.best = Some(sample);
        }
    }

    /// The largest rate (bytes/s) the path was shown to carry over a round trip or more.
    pub fn max_rate(&self) -> Option<f64> {
        self.best.map(|b| b.rate())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: f64) -> Timestamp {
        Timestamp(1_000_000_000 + (ms * 1e6) as i64)
    }

    const RTT: Option<Span> = Some(Span::from_millis(100));

    /// A sender that keeps sending, one 1000-byte segment every 2 ms (500 kB/s), each ACKed
    /// a 100 ms round trip later: the samples read the pace (less one ACK's worth of lag).
    #[test]
    fn a_paced_flow_reads_its_pace_over_a_round_trip() {
        let mut s = RateSampler::default();
        let gap = 2.0;
        let mut acked = 0u32;
        for i in 0..1000u32 {
            let now = i as f64 * gap;
            // ACKs due by now (each segment's 100 ms after it was sent).
            while acked < i && acked as f64 * gap + 100.0 <= now {
                acked += 1;
                s.on_ack(
                    t(acked as f64 * gap - gap + 100.0),
                    Some(acked * 1000),
                    std::iter::empty(),
                    1000,
                    RTT,
                );
            }
            s.on_send(t(now), i * 1000, 1000, false);
        }
        let r = s.max_rate().unwrap();
        assert!(r <= 500_000.0 * 1.005 && r > 500_000.0 * 0.97, "{r}");
    }

    /// A window sent at once after idle, once per 200 ms round: each burst's bytes over its
    /// round trip (here half the pace inside the burst), never the pace itself.
    #[test]
    fn a_burst_after_idle_is_read_over_its_round_trip() {
        let mut s = RateSampler::default();
        for round in 0..5u32 {
            let t0 = round as f64 * 200.0;
            for i in 0..50u32 {
                s.on_send(t(t0 + i as f64 * 2.0), (round * 50 + i) * 1000, 1000, false);
            }
            for i in 0..50u32 {
                let ack = (round * 50 + i + 1) * 1000;
                s.on_ack(t(t0 + 100.0 + i as f64 * 2.0), Some(ack), std::iter::empty(), 1000, RTT);
            }
        }
        // 50 kB over 198 ms, less the segment whose passage opened the interval.
        let r = s.max_rate().unwrap();
        assert!((r - 49_000.0 / 0.198).abs() < 100.0, "{r}");
    }

    /// One small burst per round trip, far below the path's rate: one sample per burst,
    /// its bytes over the round trip, never the pace inside the burst.
    #[test]
    fn a_burst_after_idle_counts_over_its_round_trip() {
        let mut s = RateSampler::default();
        for i in 0..3u32 {
            s.on_send(t(i as f64 * 0.01), i * 1000, 1000, false);
        }
        s.on_ack(
            t(413.0),
            Some(3000),
            std::iter::empty(),
            3000,
            Some(Span::from_millis(413)),
        );
        let r = s.max_rate().unwrap();
        assert!((r - 2000.0 / 0.413).abs() < 20.0, "{r}");
    }

    /// Past the bottleneck (a capture near the receiver) segments arrive one serialisation
    /// apart and are ACKed at once: after idle, two segments of 1400 B 2.9 ms apart and the
    /// ACK of both, on a path whose round trip (2.56 ms) is shorter than a segment's
    /// serialisation (a 4 Mbit/s link). The first one's bytes crossed the link before it
    /// passed here: one segment over the 2.9 ms, never both.
    #[test]
    fn the_segment_that_opens_an_interval_after_idle_is_not_counted_in_it() {
        let mut s = RateSampler::default();
        s.on_send(t(0.0), 0, 1400, false);
        s.on_send(t(2.9), 1400, 1400, false);
        s.on_ack(
            t(2.91),
            Some(2800),
            std::iter::empty(),
            2800,
            Some(Span::from_micros(2560)),
        );
        let r = s.max_rate().unwrap();
        assert!(r <= 4e6 / 8.0 && (r - 1400.0 / 0.00291).abs() < 1.0, "{r}");
    }

    /// ACKs that come back compressed (all at once) after a paced send: the send phase
    /// sets the interval, so no rate above the sending pace appears.
    #[test]
    fn compressed_acks_read_the_send_phase() {
        let mut s = RateSampler::default();
        for i in 0..100u32 {
            s.on_send(t(i as f64 * 2.0), i * 1000, 1000, false);
        }
        // Every ACK arrives within 1 ms, 300 ms on.
        for i in 0..100u32 {
            s.on_ack(
                t(300.0 + i as f64 * 0.01),
                Some((i + 1) * 1000),
                std::iter::empty(),
                1000,
                RTT,
            );
        }
        let r = s.max_rate().unwrap();
        assert!(r <= 1000.0 / 0.002 * 1.01, "{r}");
    }

    /// Shorter than a round trip: no sample.
    #[test]
    fn no_sample_under_a_round_trip() {
        let mut s = RateSampler::default();
        s.on_send(t(0.0), 0, 1000, false);
        s.on_ack(t(10.0), Some(1000), std::iter::empty(), 1000, RTT);
        assert_eq!(s.max_rate(), None);
        assert_eq!(s.samples, 0);
    }

    /// SACKed segments deliver when SACKed; the cumulative ACK that passes them later
    /// adds only the hole's repair.
    #[test]
    fn sacked_segments_deliver_once() {
        let mut s = RateSampler::default();
        for i in 0..10u32 {
            s.on_send(t(i as f64), i * 1000, 1000, false);
        }
        // Segment 0 lost: SACKs for 1..10 one round trip later.
        for i in 1..10u32 {
            s.on_ack(
                t(100.0 + i as f64),
                Some(0),
                [(1000, (i + 1) * 1000)].into_iter(),
                1000,
                RTT,
            );
        }
        s.on_send(t(112.0), 0, 1000, true);
        s.on_ack(t(212.0), Some(10_000), [(1000, 10_000)].into_iter(), 1000, RTT);
        // The repair's sample: 1000 B since its retransmission (100 ms + 2 ms).
        let best = s.best.unwrap();
        assert!(s.sent.is_empty());
        assert!(best.rate() <= 9000.0 / 0.100 * 1.01, "{best:?}");
    }
}
