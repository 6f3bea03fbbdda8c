//! A log-bucketed histogram of RTT samples: median and p95 with ~1% relative error in
//! constant memory (the analysis must not grow with the number of packets), and exact at
//! the ends: the first and the last rank are the least and the largest sample themselves.

use crate::fastmath::fast_log2;
use crate::time::Span;

/// Buckets are 1% wide, starting at 1 µs: 1.01^k µs; 2100 buckets reach ~1.3 hours.
const BUCKETS: usize = 2100;
const GROWTH: f64 = 1.01;
/// log2(GROWTH).
const LOG2_GROWTH: f64 = 0.014_355_292_977_070_041;

/// Buckets are kept in chunks of this many, each allocated when a sample first falls in
/// it: one connection's samples span a few chunks (64 buckets are a factor 1.9), so a
/// connection holds ~0.5-1 KB of histogram instead of 2100 x 4 bytes (8.4 KB: most of a
/// tracked connection's memory when a capture holds 100 k of them).
const CHUNK: usize = 64;
const CHUNKS: usize = BUCKETS.div_ceil(CHUNK);

#[derive(Clone, Debug, Default)]
pub struct RttHistogram {
    chunks: Vec<Option<Box<[u32; CHUNK]>>>,
    total: u64,
    /// The least and the largest sample, exact: a bucket's middle stands for its samples
    /// only within 1%, and one sample summarised as "median 39.8 ms, max 40.0 ms" reads as
    /// two (the simulator's receiver on a 10 ms clock, census seed 1234).
    least: Option<Span>,
    most: Option<Span>,
}

impl RttHistogram {
    fn bucket(v: Span) -> usize {
        let us = v.nanos() as f64 / 1000.0;
        if us <= 1.0 {
            return 0;
        }
        ((fast_log2(us) / LOG2_GROWTH).floor() as usize + 1).min(BUCKETS - 1)
    }

    /// A representative value of a bucket (its geometric middle).
    fn value(k: usize) -> Span {
        if k == 0 {
            return Span::from_nanos(1000);
        }
        let lo = GROWTH.powi(k as i32 - 1);
        Span::from_nanos((lo * GROWTH.sqrt() * 1000.0).round() as i64)
    }

    pub fn add(&mut self, v: Span) {
        if self.chunks.is_empty() {
            self.chunks.resize_with(CHUNKS, || None);
        }
        let b = Self::bucket(v);
        self.chunks[b / CHUNK].get_or_insert_with(|| Box::new([0; CHUNK]))[b % CHUNK] += 1;
        self.total += 1;
        self.least = Some(self.least.map_or(v, |l| l.min(v)));
        self.most = Some(self.most.map_or(v, |m| m.max(v)));
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    /// The largest sample, exact; None without samples.
    pub fn max(&self) -> Option<Span> {
        self.most
    }

    /// The q-quantile (0..=1), None without samples: the sample of rank ceil(q x n), exact
    /// at the first and the last rank, else its bucket's middle kept within the samples'
    /// range.
    pub fn quantile(&self, q: f64) -> Option<Span> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        if rank == self.total {
            return self.most;
        }
        if rank == 1 {
            return self.least;
        }
        let within = |v: Span| match (self.least, self.most) {
            (Some(l), Some(m)) => v.max(l).min(m),
            _ => v,
        };
        let mut seen = 0u64;
        for (i, chunk) in self.chunks.iter().enumerate() {
            let Some(chunk) = chunk else { continue };
            for (j, &c) in chunk.iter().enumerate() {
                seen += c as u64;
                if seen >= rank {
                    return Some(within(Self::value(i * CHUNK + j)));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Quantiles are ordered, lie within the samples, and the ends are exact.
        #[test]
        fn quantiles_are_ordered_within_the_samples(
            samples in proptest::collection::vec(1i64..10_000_000_000, 1..200),
        ) {
            let mut h = RttHistogram::default();
            for &ns in &samples {
                h.add(Span::from_nanos(ns));
            }
            let (lo, hi) = (*samples.iter().min().unwrap(), *samples.iter().max().unwrap());
            prop_assert_eq!(h.quantile(0.0), Some(Span::from_nanos(lo)));
            prop_assert_eq!(h.quantile(1.0), Some(Span::from_nanos(hi)));
            let mut last = Span::from_nanos(lo);
            for q in [0.01, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0] {
                let v = h.quantile(q).unwrap();
                prop_assert!(v >= last, "q {} {:?} < {:?}", q, v, last);
                prop_assert!(v.nanos() >= lo && v.nanos() <= hi);
                last = v;
            }
        }
    }

    #[test]
    fn quantiles_are_within_one_percent() {
        let mut h = RttHistogram::default();
        for i in 1..=1000 {
            h.add(Span::from_micros(10_000 + i * 10));
        }
        let med = h.quantile(0.5).unwrap().nanos() as f64;
        assert!((med / 15_000_000.0 - 1.0).abs() < 0.01, "{med}");
        let p95 = h.quantile(0.95).unwrap().nanos() as f64;
        assert!((p95 / 19_500_000.0 - 1.0).abs() < 0.01, "{p95}");
        assert_eq!(h.count(), 1000);
    }

    #[test]
    fn chunks_answer_as_the_flat_array_did() {
        let mut h = RttHistogram::default();
        let mut flat = vec![0u64; BUCKETS];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..5_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // From sub-microsecond to an hour, log-spread.
            let v = Span::from_nanos((x % 4_000_000_000_000).max(1) as i64 >> (x % 40));
            h.add(v);
            flat[RttHistogram::bucket(v)] += 1;
        }
        for q in [0.0, 0.01, 0.25, 0.5, 0.9, 0.95, 0.999, 1.0] {
            let rank = ((q * 5_000f64).ceil() as u64).max(1);
            let mut seen = 0;
            let k = flat.iter().position(|&c| {
                seen += c;
                seen >= rank
            });
            let (least, most) = (h.least.unwrap(), h.most.unwrap());
            let want = match rank {
                5_000 => Some(most),
                1 => Some(least),
                _ => k.map(|k| RttHistogram::value(k).max(least).min(most)),
            };
            assert_eq!(h.quantile(q), want, "q {q}");
        }
        // One path's RTTs (40-70 ms) take two chunks.
        let mut one = RttHistogram::default();
        for ms in 40..70 {
            one.add(Span::from_millis(ms));
        }
        assert!(one.chunks.iter().flatten().count() <= 2);
    }

    #[test]
    fn the_ends_are_the_samples_themselves() {
        // One sample: every quantile is it, not its bucket's middle (39.82 ms for 40 ms).
        let mut h = RttHistogram::default();
        h.add(Span::from_millis(40));
        for q in [0.0, 0.5, 0.95, 1.0] {
            assert_eq!(h.quantile(q), Some(Span::from_millis(40)), "q {q}");
        }
        // Two: the median is the lesser, the p95 the greater, exactly.
        h.add(Span::from_micros(39_900));
        assert_eq!(h.quantile(0.5), Some(Span::from_micros(39_900)));
        assert_eq!(h.quantile(0.95), Some(Span::from_millis(40)));
        // Between the ends a bucket's middle, never outside the samples.
        let mut h = RttHistogram::default();
        for us in [10_000, 10_010, 10_020] {
            h.add(Span::from_micros(us));
        }
        let med = h.quantile(0.5).unwrap();
        assert!(
            med >= Span::from_micros(10_000) && med <= Span::from_micros(10_020),
            "{med:?}"
        );
    }

    #[test]
    fn empty_has_no_quantiles() {
        assert_eq!(RttHistogram::default().quantile(0.5), None);
    }
}
