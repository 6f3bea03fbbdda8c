//! Bottleneck capacity from dispersion (packet-pair / packet-train, as in Keshav's
//! packet-pair and the PPrate work T-RAT builds on): segments that queue behind each other
//! at the narrowest link leave it spaced by their serialization time, and the receiver's
//! ACKs keep that spacing. So consecutive ACKs of a running transfer acknowledge
//! `bytes / gap` = the bottleneck rate — whether the flow filled the pipe or not, and
//! wherever the capture was taken (at the receiver the ACKs leave as data arrives; at the
//! sender they arrive with the spacing the bottleneck gave the data).
//!
//! Gaps that are not spacing — the pipe ran empty, a delayed-ACK timer, the pause between
//! two window-limited trains — give lower rates; ACK compression gives a few higher ones.
//! The capacity is the byte-weighted mode of the per-gap rates.

use crate::fastmath::fast_log2;
use crate::time::Span;

/// Rates are binned on a log scale: 3% wide bins from 1 kB/s upward.
const MIN_RATE: f64 = 1_000.0;
const BINS: usize = 800; // 1.03^800 * 1 kB/s is far beyond any link
/// Samples at least this many bytes' worth before trusting a mode.
const MIN_SAMPLES: u32 = 8;
/// Bins per doubling of the rate: 1 / log2(BIN_GROWTH).
const BINS_PER_OCTAVE: f64 = 23.449_772_250_437_736;

#[derive(Clone, Debug, Default)]
pub struct Dispersion {
    weights: Vec<f32>,
    samples: u32,
}

impl Dispersion {
    #[inline]
    fn bin(rate: f64) -> Option<usize> {
        if !(rate.is_finite() && rate >= MIN_RATE) {
            return None;
        }
        Some((fast_log2(rate / MIN_RATE) * BINS_PER_OCTAVE) as usize).filter(|&b| b < BINS)
    }

    fn rate_of(bin: f64) -> f64 {
        MIN_RATE * ((bin + 0.5) / BINS_PER_OCTAVE).exp2()
    }

    /// `bytes` were acknowledged `gap` after the previous acknowledgment, while data was
    /// outstanding the whole time.
    pub fn add(&mut self, bytes: u64, gap: Span) {
        if gap.nanos() <= 0 || bytes == 0 {
            return;
        }
        let rate = bytes as f64 / gap.secs_f64();
        if let Some(b) = Self::bin(rate) {
            if self.weights.is_empty() {
                self.weights = vec![0.0; BINS];
            }
            self.weights[b] += bytes as f32;
            self.samples += 1;
        }
    }

    pub fn samples(&self) -> u32 {
        self.samples
    }

    /// The byte-weighted mode of the rates (bytes/s), refined as the weighted mean of the
    /// peak and its two neighbours on each side. None with too few samples.
    pub fn capacity(&self) -> Option<f64> {
        if self.samples < MIN_SAMPLES {
            return None;
        }
        // Smooth over 5 bins (about ±6%) so one jittery bin cannot win alone; the window
        // sums slide along the bins in one pass.
        let w = &self.weights;
        let window = |i: usize| -> f64 { (i.saturating_sub(2)..(i + 3).min(BINS)).map(|k| w[k] as f64).sum() };
        let mut sum = window(0);
        let (mut peak, mut best) = (0, sum);
        for i in 1..BINS {
            if i + 2 < BINS {
                sum += w[i + 2] as f64;
            }
            if i >= 3 {
                sum -= w[i - 3] as f64;
            }
            if sum > best {
                best = sum;
                peak = i;
            }
        }
        let (mut num, mut den) = (0.0, 0.0);
        for k in peak.saturating_sub(2)..(peak + 3).min(BINS) {
            num += w[k] as f64 * k as f64;
            den += w[k] as f64;
        }
        (den > 0.0).then(|| Self::rate_of(num / den))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spacing_at_the_bottleneck_is_the_mode() {
        // 50 Mbit/s, 1514-byte frames carrying 1448 bytes: 242 us apart; ACK every 2.
        let mut d = Dispersion::default();
        for i in 0..1000 {
            if i % 10 == 9 {
                d.add(2896, Span::from_millis(60)); // the gap between two trains
            } else {
                d.add(2896, Span::from_nanos(484_480));
            }
        }
        let c = d.capacity().unwrap();
        let want = 2896.0 / 484_480e-9;
        assert!((c / want - 1.0).abs() < 0.03, "{c} vs {want}");
    }

    #[test]
    fn too_few_samples_give_nothing() {
        let mut d = Dispersion::default();
        d.add(1448, Span::from_micros(100));
        assert_eq!(d.capacity(), None);
    }
}
