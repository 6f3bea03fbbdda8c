//! Bounded time series for plotting: samples are aggregated into time buckets whose
//! width doubles whenever the series would need more than `cap` of them, so a series
//! holds at most `cap` buckets whatever the flow's length, and each bucket keeps what
//! a plot needs to stay faithful at pixel resolution (M4: first, last, min and max, so
//! a line drawn through them looks the same as one drawn through every sample).
//!
//! Times are nanoseconds since the flow's first segment (negative times, from records
//! out of order, count as 0).

/// How many buckets a series holds at most: about two per pixel column of a 1200-px plot
/// before a doubling, one after.
pub const DEFAULT_CAP: usize = 2048;

/// The first bucket width; it doubles as the flow goes on (1 µs .. 2^k µs).
const FIRST_WIDTH_NS: i64 = 1_000;

/// What one bucket keeps of the samples that fell into it.
pub trait Agg: Clone {
    type Sample: Copy;
    fn first(t: i64, s: Self::Sample) -> Self;
    fn add(&mut self, t: i64, s: Self::Sample);
    /// Absorbs a bucket that covers later times.
    fn merge(&mut self, later: Self);
}

/// Buckets indexed by `t / width`, sparse (only buckets that got samples exist).
#[derive(Clone, Debug)]
pub struct Bucketed<A> {
    width: i64,
    cap: usize,
    buckets: Vec<(u32, A)>,
}

impl<A: Agg> Default for Bucketed<A> {
    fn default() -> Self {
        Self::with_cap(DEFAULT_CAP)
    }
}

impl<A: Agg> Bucketed<A> {
    pub fn with_cap(cap: usize) -> Self {
        Bucketed {
            width: FIRST_WIDTH_NS,
            cap: cap.max(2),
            buckets: Vec::new(),
        }
    }

    pub fn add(&mut self, t: i64, s: A::Sample) {
        let t = t.max(0);
        let mut idx = t / self.width;
        while idx >= self.cap as i64 {
            self.double();
            idx = t / self.width;
        }
        let idx = idx as u32;
        match self.buckets.last_mut() {
            Some((i, a)) if *i == idx => a.add(t, s),
            Some((i, _)) if *i > idx => {
                // A record out of time order: find its bucket.
                match self.buckets.binary_search_by_key(&idx, |(i, _)| *i) {
                    Ok(k) => self.buckets[k].1.add(t, s),
                    Err(k) => self.buckets.insert(k, (idx, A::first(t, s))),
                }
            }
            _ => self.buckets.push((idx, A::first(t, s))),
        }
    }

    fn double(&mut self) {
        self.width = self.width.saturating_mul(2);
        let old = std::mem::take(&mut self.buckets);
        let mut out: Vec<(u32, A)> = Vec::with_capacity(old.len().div_ceil(2));
        for (i, a) in old {
            let j = i / 2;
            match out.last_mut() {
                Some((k, b)) if *k == j => b.merge(a),
                _ => out.push((j, a)),
            }
        }
        self.buckets = out;
    }

    /// Bucket width in nanoseconds.
    pub fn width(&self) -> i64 {
        self.width
    }

    /// Buckets in use (at most the capacity).
    pub fn len(&self) -> usize {
        self.buckets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }

    /// (start time of the bucket in ns, bucket), in time order.
    pub fn iter(&self) -> impl Iterator<Item = (i64, &A)> + '_ {
        self.buckets.iter().map(move |(i, a)| (*i as i64 * self.width, a))
    }

    /// Frees the spare capacity (for series kept after their flow ended).
    pub fn shrink(&mut self) {
        self.buckets.shrink_to_fit();
    }

    /// Merges adjacent buckets until at most `n` remain (for drawing at a given width
    /// in pixels). Returns a new series; `self` is unchanged.
    pub fn coarsened(&self, n: usize) -> Bucketed<A> {
        let mut c = self.clone();
        let n = n.max(2);
        while c.max_index() >= n as i64 {
            c.double();
        }
        c
    }

    fn max_index(&self) -> i64 {
        self.buckets.last().map_or(0, |(i, _)| *i as i64)
    }
}

/// A point: (time ns, value).
pub type Pt = (i64, f64);

/// M4 aggregation of a value series: first, last, minimum and maximum with their times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct M4 {
    pub n: u32,
    pub first: Pt,
    pub last: Pt,
    pub min: Pt,
    pub max: Pt,
}

impl Agg for M4 {
    type Sample = f64;
    fn first(t: i64, v: f64) -> Self {
        M4 {
            n: 1,
            first: (t, v),
            last: (t, v),
            min: (t, v),
            max: (t, v),
        }
    }
    fn add(&mut self, t: i64, v: f64) {
        self.n = self.n.saturating_add(1);
        if t < self.first.0 {
            self.first = (t, v);
        }
        if t >= self.last.0 {
            self.last = (t, v);
        }
        if v < self.min.1 {
            self.min = (t, v);
        }
        if v > self.max.1 {
            self.max = (t, v);
        }
    }
    fn merge(&mut self, later: Self) {
        self.n = self.n.saturating_add(later.n);
        if later.first.0 < self.first.0 {
            self.first = later.first;
        }
        if later.last.0 >= self.last.0 {
            self.last = later.last;
        }
        if later.min.1 < self.min.1 {
            self.min = later.min;
        }
        if later.max.1 > self.max.1 {
            self.max = later.max;
        }
    }
}

impl M4 {
    /// The bucket's distinct points in time order (1 to 4 of them).
    pub fn points(&self) -> impl Iterator<Item = Pt> {
        let mut p = [self.first, self.min, self.max, self.last];
        p.sort_by_key(|a| a.0);
        let mut out = [p[0]; 4];
        let mut k = 1;
        for q in &p[1..] {
            if *q != out[k - 1] {
                out[k] = *q;
                k += 1;
            }
        }
        out.into_iter().take(k)
    }
}

/// A range of values per bucket (sequence ranges of data segments): the lowest start and
/// the highest end seen, and the first and last times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    pub n: u32,
    pub t_first: i64,
    pub t_last: i64,
    pub lo: f64,
    pub hi: f64,
}

impl Agg for Range {
    /// (low, high)
    type Sample = (f64, f64);
    fn first(t: i64, (lo, hi): (f64, f64)) -> Self {
        Range {
            n: 1,
            t_first: t,
            t_last: t,
            lo,
            hi,
        }
    }
    fn add(&mut self, t: i64, (lo, hi): (f64, f64)) {
        self.n = self.n.saturating_add(1);
        self.t_first = self.t_first.min(t);
        self.t_last = self.t_last.max(t);
        self.lo = self.lo.min(lo);
        self.hi = self.hi.max(hi);
    }
    fn merge(&mut self, later: Self) {
        self.n = self.n.saturating_add(later.n);
        self.t_first = self.t_first.min(later.t_first);
        self.t_last = self.t_last.max(later.t_last);
        self.lo = self.lo.min(later.lo);
        self.hi = self.hi.max(later.hi);
    }
}

impl Range {
    /// Where to draw the bucket: its one sample's time, or the middle of its samples.
    pub fn t(&self) -> i64 {
        self.t_first + (self.t_last - self.t_first) / 2
    }
}

/// A sum per bucket (bytes delivered, bytes sent).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sum {
    pub n: u32,
    pub sum: f64,
}

impl Agg for Sum {
    type Sample = f64;
    fn first(_t: i64, v: f64) -> Self {
        Sum { n: 1, sum: v }
    }
    fn add(&mut self, _t: i64, v: f64) {
        self.n = self.n.saturating_add(1);
        self.sum += v;
    }
    fn merge(&mut self, later: Self) {
        self.n = self.n.saturating_add(later.n);
        self.sum += later.sum;
    }
}

impl Bucketed<Sum> {
    /// Sums over intervals of `k` buckets: (interval start ns, interval length ns, sum).
    /// Empty intervals between non-empty ones are included with a zero sum, so a rate
    /// drawn from them drops to zero where nothing happened.
    pub fn rebinned(&self, k: i64) -> Vec<(i64, i64, f64)> {
        let k = k.max(1);
        let w = self.width * k;
        let mut out: Vec<(i64, i64, f64)> = Vec::new();
        for (t, s) in self.iter() {
            let j = t / w;
            match out.last_mut() {
                Some(last) if last.0 == j * w => last.2 += s.sum,
                _ => {
                    if let Some(last) = out.last().copied() {
                        let mut z = last.0 + w;
                        while z < j * w {
                            out.push((z, w, 0.0));
                            z += w;
                        }
                    }
                    out.push((j * w, w, s.sum));
                }
            }
        }
        out
    }

    #[cfg(test)]
    pub fn total(&self) -> f64 {
        self.iter().map(|(_, s)| s.sum).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_million_samples_stay_in_bounded_buckets_and_keep_their_extremes() {
        let mut s: Bucketed<M4> = Bucketed::with_cap(1024);
        let n = 1_000_000i64;
        for i in 0..n {
            // A saw-tooth between 0 and 999, with one spike and one dip.
            let v = match i {
                123_457 => 1e9,
                876_543 => -5.0,
                _ => (i % 1000) as f64,
            };
            s.add(i * 10_000, v); // 10 µs apart: 10 s in all
            assert!(s.len() <= 1024);
        }
        assert!(s.len() <= 1024 && s.len() >= 512, "{} buckets", s.len());
        let all: Vec<Pt> = s.iter().flat_map(|(_, b)| b.points()).collect();
        assert!(
            all.contains(&(123_457 * 10_000, 1e9)),
            "the spike is kept with its time"
        );
        assert!(all.contains(&(876_543 * 10_000, -5.0)), "the dip is kept with its time");
        assert_eq!(all.first().unwrap(), &(0, 0.0), "the first sample is kept");
        assert_eq!(
            all.last().unwrap(),
            &((n - 1) * 10_000, 999.0),
            "the last sample is kept"
        );
        let count: u64 = s.iter().map(|(_, b)| b.n as u64).sum();
        assert_eq!(count, n as u64, "every sample is counted once");
        // Points come out in time order.
        assert!(all.windows(2).all(|w| w[0].0 <= w[1].0));
    }

    #[test]
    fn short_series_keep_every_sample() {
        let mut s: Bucketed<M4> = Bucketed::default();
        for i in 0..100 {
            s.add(i * 1_000_000, i as f64);
        }
        let all: Vec<Pt> = s.iter().flat_map(|(_, b)| b.points()).collect();
        assert_eq!(all.len(), 100);
    }

    #[test]
    fn sums_are_preserved_through_doublings_and_rebinning() {
        let mut s: Bucketed<Sum> = Bucketed::with_cap(100);
        for i in 0..100_000i64 {
            s.add(i * 1_000, 1448.0);
        }
        assert!(s.len() <= 100);
        assert_eq!(s.total(), 1448.0 * 100_000.0);
        let bins = s.rebinned(7);
        let total: f64 = bins.iter().map(|b| b.2).sum();
        assert_eq!(total, 1448.0 * 100_000.0);
        assert!(bins.windows(2).all(|w| w[1].0 == w[0].0 + w[0].1));
    }

    #[test]
    fn rebinning_fills_gaps_with_zero() {
        let mut s: Bucketed<Sum> = Bucketed::with_cap(100);
        s.add(0, 1.0);
        s.add(10_000, 1.0);
        let bins = s.rebinned(1);
        assert_eq!(bins.len(), 11);
        assert_eq!(bins.iter().filter(|b| b.2 == 0.0).count(), 9);
    }

    #[test]
    fn ranges_keep_the_lowest_start_and_highest_end() {
        let mut s: Bucketed<Range> = Bucketed::with_cap(16);
        for i in 0..10_000i64 {
            let lo = (i * 1448) as f64;
            s.add(i * 1_000, (lo, lo + 1448.0));
        }
        assert!(s.len() <= 16);
        let lo = s.iter().map(|(_, r)| r.lo).fold(f64::INFINITY, f64::min);
        let hi = s.iter().map(|(_, r)| r.hi).fold(0.0, f64::max);
        assert_eq!((lo, hi), (0.0, 10_000.0 * 1448.0));
    }

    #[test]
    fn out_of_order_samples_land_in_their_bucket() {
        let mut s: Bucketed<M4> = Bucketed::with_cap(64);
        s.add(5_000, 1.0);
        s.add(50_000, 2.0);
        s.add(1_000, 3.0);
        s.add(-7, 4.0);
        let starts: Vec<i64> = s.iter().map(|(t, _)| t).collect();
        assert!(starts.windows(2).all(|w| w[0] < w[1]), "{starts:?}");
        assert_eq!(s.iter().map(|(_, b)| b.n).sum::<u32>(), 4);
    }

    #[test]
    fn coarsening_bounds_the_buckets_for_drawing() {
        let mut s: Bucketed<M4> = Bucketed::with_cap(2048);
        for i in 0..100_000i64 {
            s.add(i * 100_000, (i % 7) as f64);
        }
        let c = s.coarsened(300);
        assert!(c.len() <= 300);
        let max = c.iter().map(|(_, b)| b.max.1).fold(0.0, f64::max);
        assert_eq!(max, 6.0);
    }
}
