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

use super::train::{SampleFloor, Train};
use crate::fastmath::fast_log2;
use crate::time::{Span, Timestamp};

/// Rates are binned on a log scale: 3% wide bins from 1 kB/s upward.
const MIN_RATE: f64 = 1_000.0;
const BINS: usize = 800; // 1.03^800 * 1 kB/s is far beyond any link
/// Samples at least this many bytes' worth before trusting a mode.
const MIN_SAMPLES: u32 = 8;
/// Share of the bytes a separate mode must carry (see [`Dispersion::modes`]).
pub const MODE_SHARE: f64 = 0.1;
/// Bins per doubling of the rate: 1 / log2(BIN_GROWTH).
const BINS_PER_OCTAVE: f64 = 23.449_772_250_437_736;

#[derive(Clone, Debug, Default)]
pub struct Dispersion {
    /// The weights of bins `[first, first + weights.len())`: only the span the rates
    /// reached is held (a flow's rates fall in a few dozen of the 800 bins; every bin
    /// outside it is zero).
    weights: Vec<f32>,
    first: usize,
    samples: u32,
    /// The lowest and highest bins with weight, once `weights` is allocated: the peak
    /// search need not scan the rest.
    lo: usize,
    hi: usize,
    /// Bytes the train brought, and those that came in a batch (less than
    /// [`super::train::BATCH_GAP`] after the packet before).
    bytes: u64,
    batched: u64,
    /// The bytes of the cluster in progress (packets less than the shortest span the
    /// clock resolves apart: no sample ends inside one), and the sum of the squares of the
    /// clusters' bytes before it: the byte-weighted mean cluster is their ratio to `bytes`.
    cluster_bytes: u64,
    cluster_squares: f64,
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

    /// The bin of `rate` on this scale, rates beyond it in the last bin (an infinite rate,
    /// two packets with one stamp, included); None below the scale.
    pub fn scale_bin(rate: f64) -> Option<usize> {
        if rate.is_nan() || rate < MIN_RATE {
            return None;
        }
        Some(Self::bin(rate).unwrap_or(BINS - 1))
    }

    /// `bytes` were acknowledged `gap` after the previous acknowledgment, while data was
    /// outstanding the whole time.
    pub fn add(&mut self, bytes: u64, gap: Span) {
        if gap.nanos() <= 0 || bytes == 0 {
            return;
        }
        let rate = bytes as f64 * 1e9 / gap.nanos() as f64;
        if let Some(b) = Self::bin(rate) {
            if self.weights.is_empty() {
                self.weights.push(0.0);
                (self.first, self.lo, self.hi) = (b, b, b);
            } else if b < self.first {
                self.weights.splice(0..0, std::iter::repeat_n(0.0, self.first - b));
                self.first = b;
            } else if b >= self.first + self.weights.len() {
                self.weights.resize(b - self.first + 1, 0.0);
            }
            self.weights[b - self.first] += bytes as f32;
            self.samples += 1;
            self.lo = self.lo.min(b);
            self.hi = self.hi.max(b);
        }
    }

    /// A packet of `bytes` at `at` on `train` (a new train from it when there is none):
    /// counted, and the sample it completes added.
    pub fn feed(&mut self, train: &mut Option<Train>, at: Timestamp, bytes: u64, floor: SampleFloor) {
        self.feed_in(train, at, bytes, floor, false)
    }

    /// As [`Dispersion::feed`], the packet being of the latest one's batch also when
    /// `same_batch` says so ([`Train::add_in`]).
    pub fn feed_in(
        &mut self,
        train: &mut Option<Train>,
        at: Timestamp,
        bytes: u64,
        floor: SampleFloor,
        same_batch: bool,
    ) {
        match train.as_mut() {
            Some(t) => {
                self.on_packet(bytes, same_batch || t.batched(at));
                self.on_cluster(bytes, at - t.last() < floor.span);
                if let Some((b, gap)) = t.add_in(at, bytes, floor, same_batch) {
                    self.add(b, gap);
                }
            }
            None => {
                self.on_packet(bytes, false);
                self.on_cluster(bytes, false);
                *train = Some(Train::start(at));
            }
        }
    }

    /// `train` ends (a pause follows): its last sample added, and the next packet starts a
    /// new one.
    pub fn end(&mut self, train: &mut Option<Train>, floor: SampleFloor) {
        if let Some((b, gap)) = train.take().and_then(|mut t| t.close(floor)) {
            self.add(b, gap);
        }
    }

    pub fn samples(&self) -> u32 {
        self.samples
    }

    /// A packet of the train brought `bytes`, in a batch or not.
    pub fn on_packet(&mut self, bytes: u64, batched: bool) {
        self.bytes += bytes;
        if batched {
            self.batched += bytes;
        }
    }

    /// A packet of `bytes` came, in the cluster of the one before or starting a new one.
    fn on_cluster(&mut self, bytes: u64, same: bool) {
        if !same {
            self.cluster_squares += (self.cluster_bytes as f64).powi(2);
            self.cluster_bytes = 0;
        }
        self.cluster_bytes += bytes;
    }

    /// The bytes of the cluster a byte came in, on average over the bytes (0 before any):
    /// most bytes came in clusters of about this size, and every sample spans a gap between
    /// two clusters.
    pub fn mean_cluster_bytes(&self) -> f64 {
        (self.cluster_squares + (self.cluster_bytes as f64).powi(2)) / self.bytes.max(1) as f64
    }

    /// The share of the sampled bytes that came at rates of at least `rate` (bytes/s).
    pub fn share_at_least(&self, rate: f64) -> f64 {
        let total: f64 = self.weights.iter().map(|&x| x as f64).sum();
        if total <= 0.0 {
            return 0.0;
        }
        let above: f64 = self
            .weights
            .iter()
            .enumerate()
            .filter(|&(k, _)| Self::rate_of((self.first + k) as f64) >= rate)
            .map(|(_, &x)| x as f64)
            .sum();
        above / total
    }

    /// The share of the train's bytes that came in a batch.
    pub fn batched_share(&self) -> f64 {
        self.batched as f64 / self.bytes.max(1) as f64
    }

    /// More than half the train's bytes came in batches: the mode is carried by spacing a
    /// host gave, sampled across its batches.
    pub fn mostly_batched(&self) -> bool {
        self.batched * 2 > self.bytes
    }

    /// The share of the samples' time (each bin's bytes over its rate) spent in gaps at
    /// `rate` or faster; None without samples.
    pub fn time_share_at_least(&self, rate: f64) -> Option<f64> {
        let (mut near, mut total) = (0.0, 0.0);
        for (i, &w) in self.weights.iter().enumerate() {
            let r = Self::rate_of((self.first + i) as f64);
            let t = w as f64 / r;
            total += t;
            if r >= rate {
                near += t;
            }
        }
        (total > 0.0).then(|| near / total)
    }

    /// All `BINS` weights, zero outside the span held.
    fn full(&self) -> Vec<f32> {
        let mut w = vec![0.0; BINS];
        w[self.first..self.first + self.weights.len()].copy_from_slice(&self.weights);
        w
    }

    /// The byte-weighted mode of the rates (bytes/s), refined as the weighted mean of the
    /// peak and its two neighbours on each side. None with too few samples.
    pub fn capacity(&self) -> Option<f64> {
        if self.samples < MIN_SAMPLES {
            return None;
        }
        let peak = self.smoothed_peak();
        self.refined(peak)
    }

    /// The rate of the weight-mean of the five bins around `peak` (bytes/s).
    fn refined(&self, peak: usize) -> Option<f64> {
        let w = &self.full();
        let (mut num, mut den) = (0.0, 0.0);
        for k in peak.saturating_sub(2)..(peak + 3).min(BINS) {
            num += w[k] as f64 * k as f64;
            den += w[k] as f64;
        }
        (den > 0.0).then(|| Self::rate_of(num / den))
    }

    /// Sums of the five bins around each bin (about ±6%).
    fn smoothed(&self) -> Vec<f64> {
        let w = &self.full();
        (0..BINS)
            .map(|i| (i.saturating_sub(2)..(i + 3).min(BINS)).map(|k| w[k] as f64).sum())
            .collect()
    }

    /// The distinct modes of the rates, by rate (bytes/s): peaks of the smoothed
    /// distribution that carry at least [`MODE_SHARE`] of the bytes, each parted from the
    /// next by a valley below half the smaller of the two.
    ///
    /// A flow can show several: spacing is stretched by whatever paces the sender below the
    /// path (its window, its application, cross traffic), never compressed below the
    /// bottleneck's except by ACK compression; so the bottleneck is the highest mode of
    /// segments that did queue behind each other (Dovrolis et al., "Packet-dispersion
    /// techniques and a capacity-estimation methodology", IEEE/ACM ToN 2004).
    pub fn modes(&self) -> Vec<f64> {
        if self.samples < MIN_SAMPLES {
            return Vec::new();
        }
        let s = self.smoothed();
        let total: f64 = self.weights.iter().map(|&x| x as f64).sum();
        if total <= 0.0 {
            return Vec::new();
        }
        let mut peaks: Vec<usize> = (0..BINS)
            .filter(|&i| {
                s[i] >= MODE_SHARE * total && (i == 0 || s[i] >= s[i - 1]) && (i + 1 == BINS || s[i] > s[i + 1])
            })
            .collect();
        // Neighbouring peaks without a deep valley between them are one mode: keep the
        // stronger.
        let mut i = 1;
        while i < peaks.len() {
            let (a, b) = (peaks[i - 1], peaks[i]);
            let valley = s[a..=b].iter().copied().fold(f64::INFINITY, f64::min);
            if valley > 0.5 * s[a].min(s[b]) {
                peaks.remove(if s[a] >= s[b] { i } else { i - 1 });
            } else {
                i += 1;
            }
        }
        peaks.into_iter().filter_map(|p| self.refined(p)).collect()
    }

    /// Index of the bin whose five-bin neighbourhood carries the most bytes.
    fn smoothed_peak(&self) -> usize {
        // Smooth over 5 bins (about ±6%) so one jittery bin cannot win alone; the window
        // sums slide along the bins in one pass.
        if self.weights.is_empty() {
            return 0;
        }
        let w = &self.full();
        let window = |i: usize| -> f64 { (i.saturating_sub(2)..(i + 3).min(BINS)).map(|k| w[k] as f64).sum() };
        let mut sum = window(0);
        let (mut peak, mut best) = (0, sum);
        // Away from the occupied bins the sliding sum is exactly zero (adding or removing
        // 0.0 changes nothing) until the window reaches them, and past them it only falls:
        // scanning just the bins whose window touches them finds the same peak.
        let (lo, hi) = (self.lo, self.hi);
        let first = lo.saturating_sub(2).max(1);
        if first > 1 {
            sum = 0.0;
        }
        // Three stretches, the same additions in the same order as one loop testing both
        // edges at every bin, but the long middle one runs without a test or bounds check.
        let end = (hi + 3).min(BINS);
        let mut i = first;
        // Bins 1 and 2: the window's left edge is still at bin 0, nothing leaves it.
        while i < end && i < 3 {
            sum += w[i + 2] as f64;
            if sum > best {
                best = sum;
                peak = i;
            }
            i += 1;
        }
        // One bin enters on the right, one leaves on the left.
        let slide_end = end.min(BINS - 2);
        if i < slide_end {
            let entering = &w[i + 2..slide_end + 2];
            let leaving = &w[i - 3..slide_end - 3];
            for (k, (&a, &b)) in entering.iter().zip(leaving).enumerate() {
                sum += a as f64;
                sum -= b as f64;
                if sum > best {
                    best = sum;
                    peak = i + k;
                }
            }
            i = slide_end;
        }
        // The last two bins: nothing enters.
        while i < end {
            sum -= w[i - 3] as f64;
            if sum > best {
                best = sum;
                peak = i;
            }
            i += 1;
        }
        peak
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window-held flow's ACKs at a 1 ms clock: each window's eleven ACKs in one tick,
    /// one window per 250 ms round trip. Every sample (ten ticks or more) spans a gap
    /// between windows, and the clusters the clock could not time inside are whole windows.
    /// At a microsecond clock the same ACKs, 120 µs apart, are each a cluster of one.
    #[test]
    fn clusters_are_runs_of_packets_closer_than_the_clock_resolves() {
        let at = |us: i64| Timestamp(0) + Span::from_micros(us);
        let mut coarse = Dispersion::default();
        let mut train = None;
        for round in 0..8 {
            for _ in 0..11 {
                coarse.feed(
                    &mut train,
                    at(round * 250_000),
                    1440,
                    SampleFloor::span(Span::from_millis(10)),
                );
            }
        }
        assert_eq!(coarse.mean_cluster_bytes(), 11.0 * 1440.0);
        let mut fine = Dispersion::default();
        let mut train = None;
        for round in 0..8 {
            for k in 0..11 {
                fine.feed(
                    &mut train,
                    at(round * 250_000 + k * 120),
                    1440,
                    SampleFloor::span(Span::from_micros(10)),
                );
            }
        }
        assert_eq!(fine.mean_cluster_bytes(), 1440.0);
    }

    /// Time, not bytes: one gap at the rate and one four times as long at a quarter of it
    /// carry the same bytes and a fifth and four fifths of the time.
    #[test]
    fn time_share_weighs_each_gap_by_its_length() {
        let mut d = Dispersion::default();
        for _ in 0..10 {
            d.add(1000, Span::from_micros(100)); // 10 MB/s
            d.add(1000, Span::from_micros(400)); // 2.5 MB/s
        }
        let s = d.time_share_at_least(9e6).unwrap();
        assert!((s - 0.2).abs() < 0.01, "{s}");
        assert!((d.time_share_at_least(2e6).unwrap() - 1.0).abs() < 1e-9);
        assert_eq!(Dispersion::default().time_share_at_least(1e6), None);
    }

    #[test]
    fn the_share_at_or_above_a_rate_counts_bytes() {
        let mut d = Dispersion::default();
        for _ in 0..9 {
            d.add(1_000, Span::from_millis(1)); // 1 MB/s
        }
        d.add(1_000, Span::from_micros(100)); // 10 MB/s
        let share = d.share_at_least(2e6);
        assert!((share - 0.1).abs() < 1e-6, "{share}");
        assert!((d.share_at_least(1e5) - 1.0).abs() < 1e-6);
        assert_eq!(d.share_at_least(1e9), 0.0);
        assert_eq!(Dispersion::default().share_at_least(1.0), 0.0);
    }

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
    fn a_window_paced_flow_shows_its_own_rate_and_the_bottleneck_above_it() {
        // ACKs of pairs spaced by the window's clock (20 Mbit/s, the strongest), and pairs
        // that queued back to back at a 40 Mbit/s bottleneck.
        let mut d = Dispersion::default();
        for i in 0..1000 {
            let stretch = 1.0 + (i % 7) as f64 * 0.02;
            if i % 3 == 0 {
                d.add(2896, Span::from_nanos((579_200.0 * stretch) as i64));
            } else {
                d.add(2896, Span::from_nanos((1_158_400.0 * stretch) as i64));
            }
        }
        let mode = d.capacity().unwrap() * 8.0 / 1e6;
        assert!((mode / 19.0 - 1.0).abs() < 0.1, "{mode}");
        let modes: Vec<f64> = d.modes().iter().map(|r| r * 8.0 / 1e6).collect();
        assert_eq!(modes.len(), 2, "{modes:?}");
        assert!((modes[1] / 38.0 - 1.0).abs() < 0.1, "{modes:?}");
        // One mode only when the spacing is one.
        let mut one = Dispersion::default();
        for _ in 0..100 {
            one.add(2896, Span::from_nanos(579_200));
        }
        assert_eq!(one.modes().len(), 1);
    }

    #[test]
    fn too_few_samples_give_nothing() {
        let mut d = Dispersion::default();
        d.add(1448, Span::from_micros(100));
        assert_eq!(d.capacity(), None);
    }

    #[test]
    fn the_three_stretch_scan_adds_exactly_as_the_single_loop_did() {
        // The single loop testing both window edges at every bin, as it was: the peak must
        // be the same bin even where rounding makes neighbouring sums nearly equal.
        let one_loop = |d: &Dispersion| {
            let w = &d.full();
            let window = |i: usize| -> f64 { (i.saturating_sub(2)..(i + 3).min(BINS)).map(|k| w[k] as f64).sum() };
            let mut sum = window(0);
            let (mut peak, mut best) = (0, sum);
            let first = d.lo.saturating_sub(2).max(1);
            if first > 1 {
                sum = 0.0;
            }
            for i in first..(d.hi + 3).min(BINS) {
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
            peak
        };
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..2_000 {
            let mut d = Dispersion {
                weights: vec![0.0; BINS],
                ..Default::default()
            };
            let n = 1 + round % 12;
            let (mut lo, mut hi) = (BINS, 0);
            for _ in 0..n {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Bins at both ends of the scale as well as anywhere between.
                let b = match x % 4 {
                    0 => (x >> 8) as usize % 6,
                    1 => BINS - 1 - (x >> 8) as usize % 6,
                    _ => (x >> 8) as usize % BINS,
                };
                d.weights[b] += ((x >> 20) % 100_000) as f32 * 1.37 + 0.1;
                (lo, hi) = (lo.min(b), hi.max(b));
            }
            (d.lo, d.hi, d.samples) = (lo, hi, n as u32);
            assert_eq!(d.smoothed_peak(), one_loop(&d), "round {round}");
        }
    }

    #[test]
    fn the_peak_search_over_the_occupied_bins_finds_the_full_scans_peak() {
        let full_scan = |d: &Dispersion| {
            let w = &d.full();
            let window = |i: usize| -> f64 { (i.saturating_sub(2)..(i + 3).min(BINS)).map(|k| w[k] as f64).sum() };
            let (mut peak, mut best) = (0, window(0));
            for i in 1..BINS {
                if window(i) > best {
                    best = window(i);
                    peak = i;
                }
            }
            peak
        };
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for round in 0..300 {
            let mut d = Dispersion::default();
            for _ in 0..(1 + round % 40) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Rates spread over a few bins somewhere between 1 kB/s and far beyond.
                let bytes = 1 + x % 3000;
                let gap = 1 + ((x >> 20) % 1_000) * (1 << ((x >> 40) % 30));
                d.add(bytes, Span::from_nanos(gap as i64));
            }
            if !d.weights.is_empty() {
                // Only the occupied span is held.
                assert_eq!((d.first, d.weights.len()), (d.lo, d.hi - d.lo + 1), "round {round}");
                assert_eq!(d.smoothed_peak(), full_scan(&d), "round {round}");
            }
        }
    }
}
