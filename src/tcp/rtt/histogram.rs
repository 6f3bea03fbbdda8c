//! A log-bucketed histogram of RTT samples: median and p95 with ~1% relative error in
//! constant memory (the analysis must not grow with the number of packets).

use crate::fastmath::fast_log2;
use crate::time::Span;

/// Buckets are 1% wide, starting at 1 µs: 1.01^k µs; 2100 buckets reach ~1.3 hours.
const BUCKETS: usize = 2100;
const GROWTH: f64 = 1.01;
/// log2(GROWTH).
const LOG2_GROWTH: f64 = 0.014_355_292_977_070_041;

#[derive(Clone, Debug, Default)]
pub struct RttHistogram {
    counts: Vec<u32>,
    total: u64,
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
        if self.counts.is_empty() {
            self.counts = vec![0; BUCKETS];
        }
        self.counts[Self::bucket(v)] += 1;
        self.total += 1;
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    /// The q-quantile (0..=1), None without samples.
    pub fn quantile(&self, q: f64) -> Option<Span> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (k, &c) in self.counts.iter().enumerate() {
            seen += c as u64;
            if seen >= rank {
                return Some(Self::value(k));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn empty_has_no_quantiles() {
        assert_eq!(RttHistogram::default().quantile(0.5), None);
    }
}
