//! ACK dispersion timed on the receiver's own clock: the TSval of each ACK (RFC 7323 §3)
//! is the receiver's clock when it sent the ACK, and a receiver sends its ACKs as the data
//! arrives. The spacing of those stamps is the spacing the bottleneck gave the data,
//! whatever happened to the ACKs afterwards.
//!
//! Why: with a bulk transfer running the other way, a flow's ACKs queue behind that data
//! and reach the sender in clumps (ACK compression: Zhang, Shenker & Clark, "Observations
//! on the dynamics of a congestion control algorithm: the effects of two-way traffic",
//! SIGCOMM 1991), so their spacing at the capture point says nothing of the path, and
//! before the bottleneck nothing else in the capture shows its rate. The stamps were set
//! before the ACKs met that queue; Mogul ("Observing TCP dynamics in real networks",
//! SIGCOMM 1992) told ACK compression by comparing the ACKs' spacing at the sender with
//! their spacing at the receiver. On the lab's 20 Mbit/s two-way path the capture's ACK
//! spacing at the sender read 1.67 Gbit/s; the receiver's stamps read 18-20 Mbit/s.
//!
//! The receiver's clock ticks at a rate of its own, measured against the capture's clock
//! over the connection ([`TsClock`]). A tick is the clock's resolution, so samples span ten ticks at least (as
//! the capture clock's do: [`crate::time::Quantum::min_sample_span`]), and ACKs that carry
//! the same stamp are one batch ([`super::train`]): the sample takes all of them.

use super::dispersion::Dispersion;
use super::train::{SampleFloor, Train, BATCH_GAP};
use super::ts_clock::TsClock;
use crate::time::{Span, Timestamp};
use std::collections::BTreeMap;

/// One tick of the receiver's clock is laid on the train's time axis as one batch gap: ACKs
/// one tick apart are separate batches, ACKs sharing a stamp one batch.
const TICK_NS: i64 = BATCH_GAP.0;
/// Samples span at least ten ticks (a 10% resolution, as for the capture's clock).
const MIN_SPAN: Span = Span(10 * TICK_NS);
/// The receiver ticks the fast ACKs' span must hold for their sent pace to be measured.
const MIN_PACE_TICKS: i64 = 10;

#[derive(Clone, Debug, Default)]
pub struct ReceiverClock {
    dispersion: Dispersion,
    train: Option<Train>,
    /// The receiver's clock, from its ACKs' stamps.
    clock: TsClock,
    /// Capture time of the latest ACK that reported delivery, and its tick count.
    last_delivery: Option<Timestamp>,
    last_delivery_ticks: i64,
    /// Each delivery ACK after another within a round trip, by the pace the pair reached
    /// the capture point at (its bin on [`Dispersion`]'s scale): what the pairs of the bin
    /// brought and the receiver ticks between their stamps (see [`Self::sent_pace`]).
    pairs: BTreeMap<usize, (u64, i64)>,
}

impl ReceiverClock {
    /// An ACK of the receiver, captured at `ts`, stamped `tsval`, reporting `delivered`
    /// bytes newly delivered; `round` the base RTT: a longer gap between ACKs is a pause of
    /// the sender or the pipe, not spacing (as for the capture-clock ACK train).
    pub fn on_ack(&mut self, ts: Timestamp, tsval: u32, delivered: u64, round: Option<Span>) {
        // A stamp older than the last is an ACK reordered on the way: its place in the
        // train is gone, and it gives no spacing.
        if self.clock.on_stamp(ts, tsval).is_none() || delivered == 0 {
            return;
        }
        let ticks = self.clock.ticks();
        let at = Timestamp(ticks * TICK_NS);
        if let (Some(prev), Some(r)) = (self.last_delivery, round) {
            let gap = ts - prev;
            if gap > r {
                self.dispersion.end(&mut self.train, SampleFloor::span(MIN_SPAN));
            } else if let Some(b) = Dispersion::scale_bin(delivered as f64 * 1e9 / gap.nanos().max(0) as f64) {
                // The map holds at most one entry per bin of the scale.
                let e = self.pairs.entry(b).or_default();
                e.0 += delivered;
                e.1 += ticks - self.last_delivery_ticks;
            }
        }
        self.last_delivery = Some(ts);
        self.last_delivery_ticks = ticks;
        self.dispersion
            .feed(&mut self.train, at, delivered, SampleFloor::span(MIN_SPAN));
    }

    /// The receiver's clock rate (ticks per second), when the ACKs span enough of it.
    pub fn hz(&self) -> Option<f64> {
        self.clock.hz()
    }

    /// The pace, on the receiver's clock (bytes/s), at which the receiver sent the ACKs that
    /// reached the capture point at `rate` or faster: their bytes over the ticks between
    /// their stamps and the ACKs before them (infinite when they all shared their stamps).
    /// None without a measured clock or such ACKs.
    ///
    /// ACKs that reach the sender closer together than the receiver sent them were
    /// compressed on the way back (queued behind other packets, or handed over in a batch
    /// by a host or a jittery hop): Mogul ("Observing TCP dynamics in real networks",
    /// SIGCOMM 1992) told ACK compression by comparing the ACKs' spacing at the sender with
    /// their spacing at the receiver. Their pace at the capture point is then no rate the
    /// path carried data at. A tick difference is the stamps' floor of the true gap, whose
    /// expectation over many pairs is that gap: the sum is a fair measure of their span
    /// once it spans ten ticks (the resolution every measured span here has); below that
    /// the pace is too fast for the clock to time, and given as infinite.
    pub fn sent_pace(&self, rate: f64) -> Option<f64> {
        let hz = self.hz()?;
        let from = Dispersion::scale_bin(rate)?;
        let (bytes, ticks) = self
            .pairs
            .range(from..)
            .fold((0u64, 0i64), |(b, t), (_, &(pb, pt))| (b + pb, t + pt));
        (bytes > 0).then(|| {
            if ticks < MIN_PACE_TICKS {
                f64::INFINITY
            } else {
                bytes as f64 * hz / ticks as f64
            }
        })
    }

    /// The bottleneck rate the receiver's stamps show (payload bytes/s): the byte-weighted
    /// mode of the spacing, as for the capture's clock ([`Dispersion::capacity`]).
    pub fn capacity(&self) -> Option<f64> {
        let hz = self.hz()?;
        let mut d = self.dispersion.clone();
        d.end(&mut self.train.clone(), SampleFloor::span(MIN_SPAN));
        // The train's axis gives a tick 1 / TICK_NS of a second.
        d.capacity().map(|r| r * TICK_NS as f64 * 1e-9 * hz)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_ms(ms: f64) -> Timestamp {
        Timestamp(1_700_000_000_000_000_000 + (ms * 1e6) as i64)
    }

    /// A receiver with a 1 ms clock gets a segment of 1448 bytes every 0.58 ms (20 Mbit/s)
    /// and ACKs every second one; its ACKs reach the capture point in clumps of ten, 12 ms
    /// apart (queued behind other data). The capture's spacing is the clumps'; the stamps
    /// give the path's rate.
    #[test]
    fn clumped_acks_give_the_rate_the_receiver_stamped() {
        let mut c = ReceiverClock::default();
        let seg_ms = 1448.0 * 8.0 / 20e6 * 1e3;
        let round = Some(Span::from_millis(60));
        for i in 0..2000u32 {
            let sent_ms = (2 * i) as f64 * seg_ms;
            let tsval = 5_000_000u32.wrapping_add(sent_ms as u32);
            // Captured in clumps: every tenth ACK releases the ten before it.
            let clump = (i / 10) as f64 * 10.0 * 2.0 * seg_ms + 12.0;
            c.on_ack(at_ms(clump + (i % 10) as f64 * 0.001), tsval, 2 * 1448, round);
        }
        let hz = c.hz().unwrap();
        assert_eq!(hz, 1000.0);
        let r = c.capacity().unwrap() * 8.0;
        assert!((r / 20e6 - 1.0).abs() < 0.06, "{r}");
    }

    /// A receiver with a 1 ms clock ACKs every 0.58 ms; a jittery hop on the way back holds
    /// every fifth ACK 0.5 ms, so that the next arrives right behind it. The pairs that
    /// arrived at twice the pace or more were sent at the receiver's own pace: compression.
    /// ACKs the receiver sent in one burst (every tenth pair one stamp apart) keep their pace.
    #[test]
    fn compressed_acks_show_the_pace_they_were_sent_at() {
        let mut c = ReceiverClock::default();
        let round = Some(Span::from_millis(30));
        let gap_ms = 0.58;
        for i in 0..4000u32 {
            let sent = i as f64 * gap_ms;
            let tsval = 9_000u32.wrapping_add(sent as u32);
            let held = if i % 5 == 0 { 0.5 } else { 0.0 };
            c.on_ack(at_ms(sent + 20.0 + held), tsval, 2 * 1448, round);
        }
        let pace = 2.0 * 1448.0 / (gap_ms / 1e3);
        let fast = c.sent_pace(2.0 * pace).unwrap();
        assert!((fast / pace - 1.0).abs() < 0.1, "{fast} vs {pace}");
        let mut b = ReceiverClock::default();
        for i in 0..4000u32 {
            // Bursts of ten ACKs 20 us apart, one burst every 5.8 ms.
            let sent = (i / 10) as f64 * 10.0 * gap_ms + (i % 10) as f64 * 0.02;
            b.on_ack(at_ms(sent + 20.0), 9_000u32.wrapping_add(sent as u32), 2 * 1448, round);
        }
        assert!(b.sent_pace(2.0 * pace).unwrap() > 2.0 * pace);
    }

    /// Stamps that wrap past 2^32 keep counting.
    #[test]
    fn stamps_wrap() {
        let mut c = ReceiverClock::default();
        for i in 0..3000u32 {
            let tsval = (u32::MAX - 1000).wrapping_add(i);
            c.on_ack(at_ms(i as f64), tsval, 1448, Some(Span::from_millis(50)));
        }
        assert_eq!(c.hz(), Some(1000.0));
        let r = c.capacity().unwrap();
        assert!((r / 1448e3 - 1.0).abs() < 0.05, "{r}");
    }

    /// Under a second of ACKs does not measure the clock: no estimate.
    #[test]
    fn a_short_flow_gives_no_clock() {
        let mut c = ReceiverClock::default();
        for i in 0..500u32 {
            c.on_ack(at_ms(i as f64), 1_000 + i, 1448, Some(Span::from_millis(50)));
        }
        assert_eq!(c.hz(), None);
        assert_eq!(c.capacity(), None);
    }

    /// A reordered ACK's older stamp is skipped, not counted as a wrap of the clock.
    #[test]
    fn an_older_stamp_is_skipped() {
        let mut c = ReceiverClock::default();
        for i in 0..2000u32 {
            let tsval = if i == 700 { 10 } else { 100_000 + i };
            c.on_ack(at_ms(i as f64), tsval, 1448, Some(Span::from_millis(50)));
        }
        assert_eq!(c.hz(), Some(1000.0));
    }

    /// The clock rate snaps to a usual one only within the measurement's error.
    #[test]
    fn an_unusual_clock_rate_is_taken_as_measured() {
        let mut c = ReceiverClock::default();
        for i in 0..3000u32 {
            // 500 Hz
            c.on_ack(at_ms(i as f64), 7 + i / 2, 1448, Some(Span::from_millis(50)));
        }
        let hz = c.hz().unwrap();
        assert!((hz - 500.0).abs() < 1.0, "{hz}");
    }
}
