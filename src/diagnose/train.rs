//! A packet train's dispersion samples, taken across whole batches.
//!
//! A host that stamps packets in batches (interrupt coalescing, NAPI polling, GRO; or a
//! receiver that answers a batch it was handed with a burst of ACKs) gives the packets of
//! a batch stamps microseconds apart, whatever spacing the path gave them: the first
//! waited for the interrupt, the rest were handed over behind it (Prasad, Jain &
//! Dovrolis, "Effects of interrupt coalescence on network measurements", PAM 2004). The
//! spacing inside a batch is the host's; only the time from one batch to the next carries
//! the path's, and the rate must be taken over whole batches.
//!
//! Packets closer than [`BATCH_GAP`] are one batch. A sample runs from the last packet of
//! one batch to the last packet of a later one, at least the shortest span the clock
//! resolves apart ([`Quantum::min_sample_span`], ten quanta: shorter spans are merged), and
//! counts the bytes of the packets after the first: under coalescing, a batch holds what
//! arrived since the one before it. So no sample ends inside a batch.
//!
//! A batch's stamp is the host's cut, not a packet's arrival: the packets between two cuts
//! are those whose arrivals fell between them, a count that is off by up to one packet
//! whatever the span (a sample between two arrivals counts exactly the packets after the
//! first). So once a train shows batches, a sample also holds [`MIN_SPAN_QUANTA`] full
//! segments, which keeps that error within 10% as ten quanta keep the clock's. A host
//! that batches every 120 µs at 300 Mbit/s hands TCP two or three segments a batch, and
//! a receiver acknowledging every second segment answers them with ACKs of two or four:
//! single batch-to-batch samples read 196 and 381 Mbit/s, never the link's 292 (census
//! 5656). While a sample is held open for its segments, its gaps from batch to batch are
//! the batches' cadence, and one more than twice every gap before it (or less than half
//! of every one) is not: a pause (a window-held flow's wait for its next window) lies
//! between them, and the sample starts again after it, as a train does after any pause.
//! Only gaps the clock resolves (`floor.span`) are compared.
//!
//! [`Quantum::min_sample_span`]: crate::time::Quantum::min_sample_span
//! [`MIN_SPAN_QUANTA`]: crate::time::MIN_SPAN_QUANTA

use crate::seq::SeqNum;
use crate::time::{Span, Timestamp, MIN_SPAN_QUANTA};

/// Packets closer than this are one batch: ten quanta of the microsecond clock most
/// captures carry (below it that clock cannot time a gap to 10%), and the scale of a
/// host's handing over a batch's packets one after the other (a few microseconds each:
/// the burst's spacing Prasad et al. describe). A full 1500-byte frame takes longer than
/// this on any link up to 1.2 Gbit/s, so spacing below it at a microsecond clock was
/// never a link's. A coarser clock gives a batch one stamp (a zero gap).
pub const BATCH_GAP: Span = Span(10_000);

/// The least a dispersion sample holds to be read to 10%: the span the clock resolves
/// ([`Quantum::min_sample_span`]), and, once its train shows batches, the bytes of ten full
/// segments (see the module's notes).
///
/// [`Quantum::min_sample_span`]: crate::time::Quantum::min_sample_span
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleFloor {
    pub span: Span,
    /// Ten of the direction's full segments.
    pub batched_bytes: u64,
}

impl SampleFloor {
    /// The floor for a clock that resolves `span` and segments of up to `mss` bytes.
    pub fn new(span: Span, mss: u64) -> SampleFloor {
        SampleFloor {
            span,
            batched_bytes: mss.saturating_mul(MIN_SPAN_QUANTA as u64),
        }
    }

    /// A floor of the span alone (a train whose packets are single segments or ACKs
    /// counted exactly: tests, and callers with no segment size).
    pub fn span(span: Span) -> SampleFloor {
        SampleFloor { span, batched_bytes: 0 }
    }
}

/// One train: where its current sample starts, and what arrived since.
#[derive(Clone, Copy, Debug)]
pub struct Train {
    /// The last packet of the batch the current sample starts from.
    from: Timestamp,
    /// Bytes of the packets after `from`, through `last`.
    pending: u64,
    /// The train's latest packet.
    last: Timestamp,
    /// Whether the train has shown a batch: its stamps are then the host's cuts, a batch
    /// of one included (a host that batches stamps every packet at its poll).
    batching: bool,
    /// The shortest and longest gaps between the current sample's batches, once its
    /// train batches (see [`Train::add_in`]).
    gaps: Option<(Span, Span)>,
}

/// A dispersion sample: `bytes` arrived over `span`.
pub type Sample = (u64, Span);

impl Train {
    /// A train whose first packet arrived at `ts` (its bytes are before any sample).
    pub fn start(ts: Timestamp) -> Train {
        Train {
            from: ts,
            pending: 0,
            last: ts,
            batching: false,
            gaps: None,
        }
    }

    /// The time of the train's latest packet.
    pub fn last(&self) -> Timestamp {
        self.last
    }

    /// Whether a packet at `ts` is in the same batch as the latest.
    pub fn batched(&self, ts: Timestamp) -> bool {
        ts - self.last < BATCH_GAP
    }

    /// `bytes` arrived at `ts`, `floor` being the least a sample holds.
    /// Returns the sample the previous batch completed, if this packet shows that it
    /// ended (it came [`BATCH_GAP`] or more later) at least `floor` after the sample's
    /// start.
    pub fn add(&mut self, ts: Timestamp, bytes: u64, floor: SampleFloor) -> Option<Sample> {
        self.add_in(ts, bytes, floor, false)
    }

    /// As [`Train::add`], the packet being of the latest packet's batch also when
    /// `same_batch` says so whatever the gap (an ACK of data that arrived in the batch the
    /// previous ACK acknowledged: see [`DataBatches`]).
    pub fn add_in(&mut self, ts: Timestamp, bytes: u64, floor: SampleFloor, same_batch: bool) -> Option<Sample> {
        let mut out = None;
        if same_batch || self.batched(ts) {
            self.batching = true;
            // The same batch as the packet before. While that is the batch the sample
            // starts from, the sample starts at its end.
            if self.last == self.from {
                self.from = ts;
                self.last = ts;
                return None;
            }
        } else {
            out = self.close(floor);
            let gap = ts - self.last;
            // The gaps from batch to batch of a sample held open for its segments, where
            // the clock resolves them, are the batches' cadence.
            if self.batching && self.pending < floor.batched_bytes && gap >= floor.span {
                match self.gaps {
                    // Over twice every gap before: a pause. The sample is dropped, and
                    // the train starts again at this packet.
                    Some((_, longest)) if gap.nanos() > longest.nanos().saturating_mul(2) => {
                        *self = Train {
                            batching: true,
                            ..Train::start(ts)
                        };
                        return None;
                    }
                    // Under half every gap before: those were pauses, and the sample
                    // starts again at the latest batch.
                    Some((shortest, _)) if gap.nanos().saturating_mul(2) < shortest.nanos() => {
                        self.from = self.last;
                        self.pending = 0;
                        self.gaps = Some((gap, gap));
                    }
                    Some((shortest, longest)) => self.gaps = Some((shortest.min(gap), longest.max(gap))),
                    None => self.gaps = Some((gap, gap)),
                }
            }
        }
        self.pending += bytes;
        self.last = ts;
        out
    }

    /// The sample up to the latest packet when it holds `floor` or more, the train's
    /// last batch being complete (a later packet came a batch gap after it, or a pause
    /// follows).
    pub fn close(&mut self, floor: SampleFloor) -> Option<Sample> {
        let short = self.batching && self.pending < floor.batched_bytes;
        if self.last - self.from < floor.span || self.last <= self.from || short {
            return None;
        }
        let sample = (self.pending, self.last - self.from);
        self.from = self.last;
        self.pending = 0;
        self.gaps = None;
        Some(sample)
    }
}

/// Which arrival batch of a direction's new data each ACK completes, where the data
/// arrives at the capture point before its receiver (past the bottleneck).
///
/// A receiver's ACKs leave as its host takes the data in: a batch its interrupt
/// coalescing or GRO handed over at once (Prasad et al., above) is acknowledged by ACKs
/// that leave together, spaced by the host's processing, whatever the path's spacing
/// (suricata smb_mimikatz: a Windows receiver answered each batch of 29 segments, stamped
/// 0.4 µs apart, with two ACKs 15-29 µs apart covering 17-42 KB each: 9-22 Gbit/s on a
/// 1 GbE LAN). Those ACKs carry the arrival spacing only from one batch to the next, so
/// a stretch ACK of data from the arrival batch the ACK before it ended in is of that ACK's
/// batch (the caller tests the stretch). Before the bottleneck the same
/// test would be wrong (a sender's TSO burst leaves in one batch and its ACKs come back
/// spaced by the bottleneck), so it is kept apart and chosen by vantage.
#[derive(Clone, Debug, Default)]
pub struct DataBatches {
    /// Each batch still unacknowledged: the sequence number after its last byte, and its
    /// number; oldest first, at most [`DataBatches::MAX`].
    ends: std::collections::VecDeque<(SeqNum, u32)>,
    /// The latest data segment's arrival, and its batch's number.
    last: Option<(Timestamp, u32)>,
    /// The batch the latest ACK completed.
    acked: Option<u32>,
}

impl DataBatches {
    /// Batches held: a window of 1024 batches in flight (1.4 MiB of unbatched full
    /// segments) is tracked whole; beyond, the oldest are forgotten, and an ACK of them
    /// joins no batch.
    pub const MAX: usize = 1024;

    /// New data ending before `end` arrived at `ts`.
    pub fn on_data(&mut self, ts: Timestamp, end: SeqNum) {
        match self.last {
            Some((t, id)) if ts - t < BATCH_GAP => {
                self.last = Some((ts, id));
                match self.ends.back_mut() {
                    Some(back) if back.1 == id => back.0 = back.0.max_seq(end),
                    _ => self.ends.push_back((end, id)),
                }
            }
            _ => {
                let id = self.last.map_or(0, |(_, id)| id.wrapping_add(1));
                self.last = Some((ts, id));
                if self.ends.len() == Self::MAX {
                    self.ends.pop_front();
                }
                self.ends.push_back((end, id));
            }
        }
    }

    /// An ACK up to `ack`: whether its last byte is of the batch the previous ACK's was.
    pub fn on_ack(&mut self, ack: SeqNum) -> bool {
        // The batches wholly acknowledged go; the last byte acknowledged is the last of
        // the latest of them when the ACK ends where it ends, else within the next.
        let mut done = None;
        while let Some(&(end, id)) = self.ends.front() {
            if end.is_after(ack) {
                break;
            }
            done = Some((end, id));
            self.ends.pop_front();
        }
        let batch = match (done, self.ends.front()) {
            (Some((end, id)), _) if end == ack => Some(id),
            (_, Some(&(_, id))) => Some(id),
            (done, None) => done.map(|(_, id)| id),
        };
        let same = batch.is_some() && batch == self.acked;
        if batch.is_some() {
            self.acked = batch;
        }
        same
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(us: i64) -> Timestamp {
        Timestamp(1_700_000_000_000_000_000 + us * 1_000)
    }

    fn samples(arrivals: &[(i64, u64)], min_span: Span) -> Vec<(u64, i64)> {
        floored(arrivals, SampleFloor::span(min_span))
    }

    fn floored(arrivals: &[(i64, u64)], min_span: SampleFloor) -> Vec<(u64, i64)> {
        let mut it = arrivals.iter();
        let &(t0, _) = it.next().unwrap();
        let mut train = Train::start(at(t0));
        let mut out: Vec<(u64, i64)> = it
            .filter_map(|&(t, b)| train.add(at(t), b, min_span))
            .map(|(b, s)| (b, s.nanos() / 1_000))
            .collect();
        out.extend(train.close(min_span).map(|(b, s)| (b, s.nanos() / 1_000)));
        out
    }

    /// Spacing the clock resolves is sampled gap by gap, as before.
    #[test]
    fn resolved_spacing_is_sampled_gap_by_gap() {
        let ten_us = Span::from_micros(10);
        let arrivals: Vec<(i64, u64)> = (0..5).map(|i| (i * 100, 1448)).collect();
        assert_eq!(samples(&arrivals, ten_us), vec![(1448, 100); 4]);
    }

    /// On a 1 ms clock, gaps of a tick or two are merged until a sample spans ten of
    /// them (as before); packets sharing a stamp are one batch, and a sample takes all of
    /// them.
    #[test]
    fn a_coarse_clock_merges_gaps_until_ten_ticks() {
        let ten_ms = Span::from_millis(10);
        let mut arrivals = Vec::new();
        for i in 0..12 {
            arrivals.push((i * 2_000, 1448));
            arrivals.push((i * 2_000, 1448));
        }
        assert_eq!(
            samples(&arrivals, ten_ms),
            vec![(10 * 1448, 10_000), (10 * 1448, 10_000)]
        );
    }

    /// A host hands over batches of three segments 1 µs apart, one batch every 120 µs
    /// (a 290 Mbit/s link's arrivals coalesced): inside a batch the stamps say 11.6 Gbit/s;
    /// the samples span whole batches and say the link's rate. The old rule (a sample as
    /// soon as ten quanta passed) ended samples inside batches.
    #[test]
    fn batches_are_sampled_whole() {
        let ten_us = Span::from_micros(10);
        let mut arrivals = Vec::new();
        for batch in 0..5 {
            for k in 0..3 {
                arrivals.push((batch * 120 + k, 1448));
            }
        }
        let got = samples(&arrivals, ten_us);
        assert_eq!(got, vec![(3 * 1448, 120); 4], "{got:?}");
    }

    /// A batch longer than ten quanta (25 ACKs 2 µs apart, 50 µs in all) gives no sample
    /// inside it; the first batch of a train is where the first sample starts.
    #[test]
    fn no_sample_ends_inside_a_long_batch() {
        let ten_us = Span::from_micros(10);
        let mut arrivals = Vec::new();
        for batch in 0..3 {
            for k in 0..25 {
                arrivals.push((batch * 2_000 + 2 * k, 4000));
            }
        }
        let got = samples(&arrivals, ten_us);
        assert_eq!(got, vec![(25 * 4000, 2_000); 2], "{got:?}");
    }

    /// A host batches every 120 µs what a 243 Mbit/s link brought (a segment every 48 µs):
    /// batches of two and three segments by turns, whose single samples read 195 and 292
    /// Mbit/s. Once the train shows batches a sample holds ten segments: every one then
    /// reads within 10% of the link (census 5656, where the ACKs of such batches read
    /// 381 Mbit/s on a 300 Mbit/s link). Without batches the floor is the span alone.
    #[test]
    fn batch_cuts_are_read_over_ten_segments() {
        let floor = SampleFloor::new(Span::from_micros(10), 1460);
        let mut arrivals = Vec::new();
        for batch in 0..40i64 {
            for k in 0..(2 + batch % 2) {
                arrivals.push((batch * 120 + k, 1460));
            }
        }
        let one_by_one = samples(&arrivals, floor.span);
        assert!(one_by_one.iter().any(|&(b, _)| b == 2 * 1460), "{one_by_one:?}");
        let link = 1460.0 / 48e-6;
        let got = floored(&arrivals, floor);
        assert!(got.len() >= 8, "{got:?}");
        for &(b, us) in &got {
            assert!(b >= 10 * 1460, "{got:?}");
            let rate = b as f64 / (us as f64 * 1e-6);
            assert!((rate / link - 1.0).abs() <= 0.1, "{rate} against {link}: {got:?}");
        }
        let spaced: Vec<(i64, u64)> = (0..6).map(|i| (i * 40, 1460)).collect();
        assert_eq!(floored(&spaced, floor), vec![(1460, 40); 5]);
    }

    /// A window of eleven segments in four batches, then the next window a round trip
    /// (100 ms) later: the window holds too few segments after its first batch for a
    /// sample, and none spans the wait between windows (it would read the window's pace,
    /// 1.3 Mbit/s, as the path's). (A window in one batch has no span to compare the
    /// wait with: that case is the window's pace, `Facts::windowed`.)
    #[test]
    fn a_sample_short_of_its_segments_ends_at_a_pause() {
        let floor = SampleFloor::new(Span::from_micros(10), 1460);
        let mut arrivals = Vec::new();
        for window in 0..3i64 {
            let t0 = window * 100_000;
            for (batch, n) in [2, 3, 3, 3].into_iter().enumerate() {
                for k in 0..n {
                    arrivals.push((t0 + batch as i64 * 120 + k, 1460));
                }
            }
        }
        assert_eq!(floored(&arrivals, floor), vec![]);
        // ACKs of windows in two batches 238 µs apart, a lone delayed ACK 40 ms later, the
        // next window 60 ms after that (census 1111, a 16 kB window at a receiver that
        // batches every 218 µs): after the lone ACK the sample's first gap is the 60 ms
        // wait, and the window's own gap after it, under half of that, starts it again.
        let mut acks = Vec::new();
        for window in 0..4i64 {
            let t0 = window * 100_000;
            for k in 0..3 {
                acks.push((t0 + k, 2776));
            }
            acks.push((t0 + 238, 2776));
            acks.push((t0 + 239, 2776));
            acks.push((t0 + 40_000, 2776));
        }
        assert_eq!(floored(&acks, floor), vec![]);
    }

    proptest::proptest! {
        /// Whatever the arrivals: every sample spans the clock's floor, carries bytes that
        /// arrived (no more in all than were fed after the first packet), and, once the
        /// train has shown a batch, holds ten segments.
        #[test]
        fn samples_hold_their_floor(gaps in proptest::collection::vec((0i64..400, 1u64..1500), 1..300), mss in 500u64..1500, span_us in 1i64..50) {
            let floor = SampleFloor::new(Span::from_micros(span_us), mss);
            let mut t = 0;
            let mut arrivals = vec![(0, 100)];
            for &(g, b) in &gaps {
                t += g;
                arrivals.push((t, b));
            }
            let fed: u64 = arrivals[1..].iter().map(|&(_, b)| b).sum();
            // A train batched from its first gap: every sample is of a batching train.
            let batched = arrivals[1].0 < 10;
            let got = floored(&arrivals, floor);
            proptest::prop_assert!(got.iter().map(|&(b, _)| b).sum::<u64>() <= fed);
            for &(b, us) in &got {
                proptest::prop_assert!(us >= span_us, "{got:?}");
                proptest::prop_assert!(b > 0);
                if batched {
                    proptest::prop_assert!(b >= 10 * mss, "{got:?}");
                }
            }
        }
    }

    /// Which batch an ACK ends in: data in two batches (three segments 1 µs apart, then
    /// two 300 µs later); ACKs inside the first batch, at its end, and into the second.
    #[test]
    fn an_ack_is_of_the_batch_its_last_byte_arrived_in() {
        let mut b = DataBatches::default();
        for (t, end) in [(0, 1000), (1, 2000), (2, 3000), (300, 4000), (301, 5000)] {
            b.on_data(at(t), SeqNum(end));
        }
        assert!(!b.on_ack(SeqNum(1000)), "the first ACK has none before it");
        assert!(b.on_ack(SeqNum(3000)), "the rest of the first batch");
        assert!(!b.on_ack(SeqNum(4000)), "into the second batch");
        assert!(b.on_ack(SeqNum(5000)), "the second batch's end");
        // Wrapping sequence numbers keep the order.
        let mut w = DataBatches::default();
        w.on_data(at(0), SeqNum(u32::MAX - 10));
        w.on_data(at(1), SeqNum(500));
        assert!(!w.on_ack(SeqNum(u32::MAX - 500)));
        assert!(w.on_ack(SeqNum(500)), "both ACKs end in the one batch across the wrap");
    }

    /// suricata smb_mimikatz's shape: batches of 29 segments arrive every 340 µs (a 1 GbE
    /// LAN), each acknowledged by two stretch ACKs 20 µs apart. Timed alone, each second
    /// ACK reads ~17 Gbit/s; batched by their data, the samples run batch to batch at the
    /// link's rate.
    #[test]
    fn stretch_acks_of_one_arrival_batch_are_one_batch() {
        let ten_us = Span::from_micros(10);
        let seg = 1460u64;
        let (mut data, mut acks) = (DataBatches::default(), Vec::new());
        let mut end = 0u32;
        for batch in 0..6i64 {
            let t0 = batch * 340;
            let mut ends = Vec::new();
            for _ in 0..29 {
                end = end.wrapping_add(seg as u32);
                data.on_data(at(t0), SeqNum(end));
                ends.push(end);
            }
            // The receiver answers after taking the batch in: 12 segments, then 17.
            acks.push((t0 + 30, ends[11], 12 * seg));
            acks.push((t0 + 50, ends[28], 17 * seg));
        }
        let run = |by_data: bool, data: &mut DataBatches| {
            let mut train: Option<Train> = None;
            let mut rates = Vec::new();
            for &(t, ack, bytes) in &acks {
                let same = data.on_ack(SeqNum(ack)) && by_data;
                match train.as_mut() {
                    None => train = Some(Train::start(at(t))),
                    Some(tr) => {
                        if let Some((b, span)) = tr.add_in(at(t), bytes, SampleFloor::span(ten_us), same) {
                            rates.push(b as f64 * 8e9 / span.nanos() as f64);
                        }
                    }
                }
            }
            rates
        };
        let alone = run(false, &mut data.clone());
        assert!(alone.iter().any(|&r| r > 5e9), "{alone:?}");
        let batched = run(true, &mut data);
        assert!(!batched.is_empty());
        for r in &batched {
            assert!((r / 1e9 - 29.0 * 1460.0 * 8.0 / 340e3).abs() < 0.01, "{batched:?}");
        }
    }
}
