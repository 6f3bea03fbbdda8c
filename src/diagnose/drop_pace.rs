//! The pace of the element that dropped a flow's packets, from the survivors of its drops.
//!
//! An element drops only while it is saturated: a drop-tail queue when it is full (its link
//! then busy), a token-bucket policer when its bucket is empty (each packet then waits for
//! its tokens). Between two of its drops it was saturated throughout, so what passed it
//! in between passed at its service rate: the link's for a queue, the token rate for a
//! policer (a bucket empty at both drops gained exactly what passed, Cruz 1991). The
//! receiver reports each survivor of a drop at once (RFC 5681 §4.2: an out-of-order
//! segment gets an immediate ACK) with a SACK block above a new gap (RFC 2018), so the
//! ACKs between the first and the last such report of a burst carry that pace, at the
//! receiver and, a one-way trip later, at the sender.
//!
//! The pace is what tells a policer's rate from the line's: its bucket lets bursts through
//! at the line rate, which the packet spacing shows, while the pace while it dropped is the
//! rate it enforces (Flach et al., SIGCOMM 2016, §3.1). Where a queue dropped, the pace
//! is the link's and agrees with the spacing.
//!
//! A train is the ACKs of one burst from its first new gap to its last; a gap of more than
//! half a round trip between new gaps ends it (the next round's drops come a round trip
//! later, after the bucket or the queue had time to recover). One gap is a packet pair
//! across a loss, which a random (not congestive) loss also makes, spaced by whatever the
//! sender sent; only trains of [`MIN_HOLES`] gaps count, repeated drops between survivors
//! of one burst, which independent random losses make rarely (their probability is the
//! loss rate's square). Constant memory: the open train and the totals.

use crate::time::{Span, Timestamp};

/// New gaps a train needs: the first starts the span, the others are drops within it.
pub const MIN_HOLES: u32 = 3;

#[derive(Clone, Debug, Default)]
pub struct DropPace {
    /// The open train: its first new-gap ACK, its last, the bytes reported after the
    /// first (all ACKs) and as of the last new gap, and its new gaps.
    first: Option<Timestamp>,
    last_hole: Option<Timestamp>,
    running: u64,
    at_last_hole: u64,
    holes: u32,
    /// Closed trains of at least [`MIN_HOLES`] gaps: how many, their bytes and spans.
    pub trains: u32,
    bytes: u64,
    span: Span,
    /// The shortest span the clock resolves, as of the last ACK.
    min_span: Span,
    /// The last ACK that raised the highest byte reported.
    last_raise: Option<Timestamp>,
    /// The gaps between consecutive drops of a train, timed by the ACKs that reported
    /// the survivors and by the survivors' own data where the capture saw it.
    pub by_ack: Gaps,
    pub by_data: Gaps,
}

/// Gap samples kept: the first this many drops tell the pace.
const MAX_SAMPLES: usize = 256;

/// Per gap between consecutive drops of a train: bytes reported and the time taken (at
/// most [`MAX_SAMPLES`]).
#[derive(Clone, Debug, Default)]
pub struct Gaps {
    pub samples: Vec<(u64, Span)>,
    /// Bytes reported since the last sample's drop, and when that drop's survivor passed.
    since: u64,
    anchor: Option<Timestamp>,
}

impl Gaps {
    fn start(&mut self, at: Option<Timestamp>) {
        self.since = 0;
        self.anchor = at;
    }

    /// A drop's survivor passed at `at` (unknown: its bytes join the next gap), with
    /// `bytes` reported by its ACK. Survivors the clock cannot tell apart (one stamp for a
    /// TSO burst) join the next gap too.
    fn drop_at(&mut self, at: Option<Timestamp>, bytes: u64, min_span: Span) {
        let bytes = self.since + bytes;
        let Some(at) = at else {
            self.since = bytes;
            return;
        };
        match self.anchor.map(|a| at - a) {
            Some(gap) if gap >= min_span && gap.nanos() > 0 => {
                if bytes > 0 && self.samples.len() < MAX_SAMPLES {
                    self.samples.push((bytes, gap));
                }
                self.start(Some(at));
            }
            Some(gap) if gap.nanos() >= 0 => self.since = bytes,
            _ => self.start(Some(at)),
        }
    }
}

impl DropPace {
    /// An ACK at `ts` that newly reported `delivered` bytes, `new_hole` when above a new
    /// gap (`tcp::AckOutcome::new_hole`). `round` is the base round trip; `min_span` the
    /// shortest span the capture's clock resolves.
    /// `survivor_at`: when the capture saw the survivor's data, if it did
    /// (`tcp::AckOutcome::survivor_at`); the ACK's time otherwise.
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack(
        &mut self,
        ts: Timestamp,
        delivered: u64,
        new_hole: bool,
        survivor_at: Option<Timestamp>,
        raised: bool,
        round: Span,
        min_span: Span,
    ) {
        self.min_span = min_span;
        let half = Span(round.nanos() / 2);
        if self.last_hole.is_some_and(|t| ts - t > half) {
            self.close();
        }
        // A gap above a byte reported a round trip ago was dropped then, not beside this
        // survivor: only a gap above one reported within the burst is a drop in it.
        let new_hole = new_hole && self.last_raise.is_some_and(|t| ts - t <= half);
        if raised {
            self.last_raise = Some(ts);
        }
        match (new_hole, self.first) {
            (true, None) => {
                self.first = Some(ts);
                self.last_hole = Some(ts);
                self.holes = 1;
                self.running = 0;
                self.at_last_hole = 0;
                self.by_ack.start(Some(ts));
                self.by_data.start(survivor_at);
            }
            (true, Some(_)) => {
                self.running += delivered;
                self.by_ack.drop_at(Some(ts), delivered, min_span);
                self.by_data.drop_at(survivor_at, delivered, min_span);
                self.holes += 1;
                self.last_hole = Some(ts);
                self.at_last_hole = self.running;
            }
            (false, Some(_)) => {
                self.running += delivered;
                self.by_ack.since += delivered;
                self.by_data.since += delivered;
            }
            (false, None) => {}
        }
    }

    /// Ends the open train; it counts when it has enough gaps over a span the clock resolves.
    pub fn close(&mut self) {
        let min_span = self.min_span;
        if let (Some(first), Some(last)) = (self.first.take(), self.last_hole.take()) {
            let span = last - first;
            if self.holes >= MIN_HOLES && span >= min_span && span.nanos() > 0 && self.at_last_hole > 0 {
                self.trains += 1;
                self.bytes += self.at_last_hole;
                self.span = self.span + span;
            }
        }
        self.holes = 0;
    }

    /// The pace (bytes/s) over every counted train, with how many there were.
    pub fn rate(&self) -> Option<(f64, u32)> {
        (self.trains > 0 && self.span.nanos() > 0).then(|| (self.bytes as f64 / self.span.secs_f64(), self.trains))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROUND: Span = Span::from_millis(50);
    const CLOCK: Span = Span::from_micros(10);

    fn at(ms: f64) -> Timestamp {
        Timestamp(1_000_000_000) + Span::from_secs_f64(ms / 1000.0)
    }

    /// One burst through a bucket at `pace_ms` per 1328-byte segment: 20 segments at the
    /// line (0.11 ms apart, no gaps), then `drops` survivors each above a new gap.
    fn burst(p: &mut DropPace, from_ms: f64, pace_ms: f64, drops: usize) {
        for i in 0..20 {
            p.on_ack(at(from_ms + i as f64 * 0.11), 1328, false, None, true, ROUND, CLOCK);
        }
        let start = from_ms + 20.0 * 0.11;
        for i in 0..drops {
            p.on_ack(at(start + i as f64 * pace_ms), 1328, true, None, true, ROUND, CLOCK);
        }
    }

    #[test]
    fn survivors_of_a_policers_drops_come_at_its_token_rate() {
        let mut p = DropPace::default();
        // 0.74 ms per 1328-byte segment: 14.4 Mbit/s of payload, in three rounds.
        for round in 0..3 {
            burst(&mut p, round as f64 * 50.0, 0.74, 4);
        }
        p.close();
        assert_eq!(p.trains, 3);
        assert_eq!(p.by_ack.samples.len(), 9);
        for &(b, s) in &p.by_ack.samples {
            assert!((b as f64 / s.secs_f64() * 8e-6 - 14.36).abs() < 0.05, "{b} B in {s:?}");
        }
        let (rate, n) = p.rate().expect("a pace");
        assert_eq!(n, 3);
        assert!((rate * 8e-6 - 14.36).abs() < 0.05, "{rate}");
    }

    #[test]
    fn survivors_timed_by_their_data_keep_the_pace_the_acks_lost_on_the_way_back() {
        // Survivors pass 0.74 ms apart; their ACKs come back bunched by a jittery return
        // path (two at once, then a wait), as they reached a sender's capture in the lab.
        let mut p = DropPace::default();
        p.on_ack(at(0.0), 1328, false, Some(at(-25.0)), true, ROUND, CLOCK);
        for i in 1..=8 {
            let data = at(-25.0 + i as f64 * 0.74);
            let ack = at(((i + 1) / 2) as f64 * 1.48 + ((i + 1) % 2) as f64 * 0.01);
            p.on_ack(ack, 1328, true, Some(data), true, ROUND, CLOCK);
        }
        p.close();
        for &(b, s) in &p.by_data.samples {
            assert!((b as f64 * 8e-6 / s.secs_f64() - 14.36).abs() < 0.05, "{b} B in {s:?}");
        }
        assert_eq!(p.by_data.samples.len(), 7);
        // The ACKs' own gaps read twice the pace and a tenth of a millisecond's worth.
        let by_ack: Vec<f64> = p
            .by_ack
            .samples
            .iter()
            .map(|&(b, s)| b as f64 * 8e-6 / s.secs_f64())
            .collect();
        assert!(by_ack.iter().any(|&r| r > 100.0), "{by_ack:?}");
    }

    #[test]
    fn survivors_sharing_one_stamp_join_the_next_gap() {
        // A receiver host that stamps two survivors at once (a batch): the gap to the next
        // stamp carries both their bytes.
        let mut p = DropPace::default();
        p.on_ack(at(0.0), 1328, false, Some(at(0.0)), true, ROUND, CLOCK);
        p.on_ack(at(0.1), 1328, true, Some(at(0.0)), true, ROUND, CLOCK);
        p.on_ack(at(0.1), 1328, true, Some(at(0.0)), true, ROUND, CLOCK);
        p.on_ack(at(1.5), 1328, true, Some(at(1.48)), true, ROUND, CLOCK);
        p.close();
        assert_eq!(p.by_data.samples, vec![(2 * 1328, Span::from_secs_f64(1.48e-3))]);
    }

    #[test]
    fn a_gap_above_data_reported_a_round_ago_is_no_drop_of_this_burst() {
        let mut p = DropPace::default();
        // The last survivor of a burst; the segments after it were dropped at the burst's
        // end, and the next survivor comes with the next round, 45 ms later.
        p.on_ack(at(0.0), 1328, false, None, true, ROUND, CLOCK);
        p.on_ack(at(45.0), 1328, true, None, true, ROUND, CLOCK);
        p.on_ack(at(45.7), 1328, true, None, true, ROUND, CLOCK);
        p.close();
        // One drop within the burst: no gap between two of them, no train.
        assert!(p.by_ack.samples.is_empty());
        assert_eq!(p.trains, 0);
    }

    #[test]
    fn a_single_drop_per_burst_gives_no_pace() {
        // Random losses: one gap per burst, bursts a round trip apart.
        let mut p = DropPace::default();
        for round in 0..10 {
            burst(&mut p, round as f64 * 50.0, 0.11, 1);
        }
        p.close();
        assert!(p.by_ack.samples.is_empty());
        assert_eq!(p.rate(), None);
    }

    proptest::proptest! {
        /// Any policer rate, segment size and number of drops per burst: every sample is
        /// the token pace (to within the jitter drawn), and a burst of one drop gives none.
        #[test]
        fn every_gap_between_drops_reads_the_pace_they_passed_at(
            mbit in 1.0f64..500.0,
            seg in 500u64..1461,
            drops in proptest::collection::vec(1usize..8, 1..10),
            jitter in 0.0f64..0.05,
        ) {
            let pace_ms = seg as f64 * 8.0 / (mbit * 1e3);
            let mut p = DropPace::default();
            let mut expected = 0;
            for (k, &n) in drops.iter().enumerate() {
                let from = k as f64 * 200.0;
                p.on_ack(at(from), seg, false, None, true, ROUND, CLOCK);
                for i in 0..n {
                    // Each survivor up to `jitter` of a pace late, never before the last.
                    let wobble = if i % 2 == 1 { jitter * pace_ms } else { 0.0 };
                    p.on_ack(at(from + 1.0 + i as f64 * pace_ms + wobble), seg, true, None, true, ROUND, CLOCK);
                }
                expected += n.saturating_sub(1);
            }
            p.close();
            let resolvable = pace_ms * (1.0 - jitter) * 1e6 >= CLOCK.nanos() as f64;
            if resolvable {
                proptest::prop_assert_eq!(p.by_ack.samples.len(), expected);
            }
            for &(b, span) in &p.by_ack.samples {
                let r = b as f64 * 8e-6 / span.secs_f64();
                proptest::prop_assert!(span >= CLOCK);
                proptest::prop_assert!((r / mbit - 1.0).abs() <= jitter / (1.0 - jitter) + 1e-3, "{r} against {mbit}");
            }
            proptest::prop_assert_eq!(p.trains as usize, if resolvable { drops.iter().filter(|&&n| n >= MIN_HOLES as usize).count() } else { p.trains as usize });
        }
    }

    #[test]
    fn gaps_the_clock_cannot_resolve_are_no_samples() {
        let mut p = DropPace::default();
        let coarse = Span::from_millis(10);
        p.on_ack(at(0.0), 1328, false, None, true, ROUND, coarse);
        for i in 1..6 {
            p.on_ack(at(i as f64), 1328, true, None, true, ROUND, coarse);
        }
        p.close();
        assert!(p.by_ack.samples.is_empty());
    }
}
