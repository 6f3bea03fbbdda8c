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
//! [`Quantum::min_sample_span`]: crate::time::Quantum::min_sample_span

use crate::time::{Span, Timestamp};

/// Packets closer than this are one batch: ten quanta of the microsecond clock most
/// captures carry (below it that clock cannot time a gap to 10%), and the scale of a
/// host's handing over a batch's packets one after the other (a few microseconds each:
/// the burst's spacing Prasad et al. describe). A full 1500-byte frame takes longer than
/// this on any link up to 1.2 Gbit/s, so spacing below it at a microsecond clock was
/// never a link's. A coarser clock gives a batch one stamp (a zero gap).
pub const BATCH_GAP: Span = Span(10_000);

/// One train: where its current sample starts, and what arrived since.
#[derive(Clone, Copy, Debug)]
pub struct Train {
    /// The last packet of the batch the current sample starts from.
    from: Timestamp,
    /// Bytes of the packets after `from`, through `last`.
    pending: u64,
    /// The train's latest packet.
    last: Timestamp,
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

    /// `bytes` arrived at `ts`, `min_span` being the shortest span the clock resolves.
    /// Returns the sample the previous batch completed, if this packet shows that it
    /// ended (it came [`BATCH_GAP`] or more later) at least `min_span` after the sample's
    /// start.
    pub fn add(&mut self, ts: Timestamp, bytes: u64, min_span: Span) -> Option<Sample> {
        let mut out = None;
        if self.batched(ts) {
            // The same batch as the packet before. While that is the batch the sample
            // starts from, the sample starts at its end.
            if self.last == self.from {
                self.from = ts;
                self.last = ts;
                return None;
            }
        } else {
            out = self.close(min_span);
        }
        self.pending += bytes;
        self.last = ts;
        out
    }

    /// The sample up to the latest packet when it spans `min_span` or more, the train's
    /// last batch being complete (a later packet came a batch gap after it, or a pause
    /// follows).
    pub fn close(&mut self, min_span: Span) -> Option<Sample> {
        if self.last - self.from < min_span || self.last <= self.from {
            return None;
        }
        let sample = (self.pending, self.last - self.from);
        self.from = self.last;
        self.pending = 0;
        Some(sample)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(us: i64) -> Timestamp {
        Timestamp(1_700_000_000_000_000_000 + us * 1_000)
    }

    fn samples(arrivals: &[(i64, u64)], min_span: Span) -> Vec<(u64, i64)> {
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
}
