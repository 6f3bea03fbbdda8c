//! Delivery rate: bytes newly acknowledged per interval, maximised over the transfer (BBR's
//! BtlBw estimate, RFC draft-cardwell-iccrg-bbr-congestion-control §4.5.2). When the pipe
//! is full this is the bottleneck rate; when it is not, it is a lower bound on it.

use super::timeline::Timeline;
use crate::time::Span;

/// The largest delivery rate (bytes/s) over any window of at least `min_window` in the
/// timeline, sliding by one bin.
pub fn max_rate(tl: &Timeline, min_window: Span) -> Option<f64> {
    let w = tl.width.nanos().max(1);
    let k = ((min_window.nanos() + w - 1) / w).max(1) as usize;
    if tl.bins.len() < k {
        return None;
    }
    let secs = (k as i64 * w) as f64 / 1e9;
    let mut sum: u64 = tl.bins[..k].iter().map(|b| b.delivered).sum();
    let mut best = sum;
    for i in k..tl.bins.len() {
        sum = sum + tl.bins[i].delivered - tl.bins[i - k].delivered;
        best = best.max(sum);
    }
    (best > 0).then(|| best as f64 / secs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Timestamp;

    #[test]
    fn the_best_window_wins() {
        let mut tl = Timeline::new(Timestamp(0));
        for i in 0..100 {
            let bytes = if (40..60).contains(&i) { 10_000 } else { 1_000 };
            tl.bin(Timestamp(0) + Span::from_millis(i)).delivered += bytes;
        }
        let r = max_rate(&tl, Span::from_millis(10)).unwrap();
        assert!((r - 10_000_000.0).abs() < 1.0, "{r}");
        assert!(max_rate(&tl, Span::from_millis(1000)).is_none());
    }
}
