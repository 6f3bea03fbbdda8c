//! Delivery rate: bytes newly acknowledged per interval, at its high end over the transfer
//! (BBR's BtlBw estimate, draft-cardwell-iccrg-bbr-congestion-control §4.5.2). When the
//! pipe is full this is the bottleneck rate; when it is not, it is a lower bound on it.
//!
//! Receivers and the ACK path aggregate ACKs (one ACK for 20 segments after a burst, a
//! SACK block reporting 30 kB at once), which pushes the delivery seen in a window above
//! what the path carried. BBR guards against it with the send rate; here the windows are
//! several RTTs long and the figure is a high percentile of them, not the maximum, so
//! one aggregated burst at a window's edge does not make the estimate.

use super::timeline::Timeline;
use crate::time::Span;

/// Share of windows whose rate the estimate may exceed: the 90th percentile.
const HIGH_END: f64 = 0.9;

/// The high end (90th percentile) of the delivery rate (bytes/s) over windows of at least
/// `min_window` in the timeline, sliding by one bin. Only windows where the sender was
/// mostly busy count: while the receiver's window or the application held it back, what
/// it delivered says nothing about the path (and an idle or finished transfer nothing at
/// all).
pub fn max_rate(tl: &Timeline, min_window: Span) -> Option<f64> {
    let w = tl.width.nanos().max(1);
    let k = ((min_window.nanos() + w - 1) / w).max(1) as usize;
    let busy: Vec<f64> = tl.bins.iter().map(|b| b.busy_ns as f64).collect();
    let state: Vec<f64> = tl.bins.iter().map(|b| b.state_ns() as f64).collect();
    let delivered: Vec<f64> = tl.bins.iter().map(|b| b.delivered as f64).collect();
    let busy_enough = window_sums(&busy, k)
        .zip(window_sums(&state, k))
        .map(|(b, s)| s > 0.0 && b >= MOSTLY_BUSY * s);
    let rates: Vec<f64> = window_sums(&delivered, k)
        .zip(busy_enough)
        .filter(|&(_, ok)| ok)
        .map(|(d, _)| d)
        .collect();
    percentile(rates, (k as i64 * w) as f64 / 1e9)
}

/// The high end of the delivery rate over windows of at least `min_window` that lie wholly
/// in the bins marked `inside` — whatever the sender's state: where a standing queue shows
/// the link was full, every state delivered at the link's rate.
pub fn rate_where(tl: &Timeline, inside: &[bool], min_window: Span) -> Option<f64> {
    let w = tl.width.nanos().max(1);
    let k = ((min_window.nanos() + w - 1) / w).max(1) as usize;
    let delivered: Vec<f64> = tl.bins.iter().map(|b| b.delivered as f64).collect();
    let marked: Vec<f64> = inside.iter().map(|&m| m as u8 as f64).collect();
    let rates: Vec<f64> = window_sums(&delivered, k)
        .zip(window_sums(&marked, k))
        .filter(|&(_, m)| m >= k as f64)
        .map(|(d, _)| d)
        .collect();
    percentile(rates, (k as i64 * w) as f64 / 1e9)
}

/// Share of a window the sender must have been busy for its delivery to count.
const MOSTLY_BUSY: f64 = 0.5;

/// Sums of every run of `k` consecutive values.
fn window_sums(v: &[f64], k: usize) -> impl Iterator<Item = f64> + '_ {
    let first: f64 = v.iter().take(k).sum();
    let n = if v.len() >= k { v.len() - k + 1 } else { 0 };
    (0..n).scan(first, move |sum, i| {
        let out = *sum;
        if i + k < v.len() {
            *sum += v[i + k] - v[i];
        }
        Some(out)
    })
}

fn percentile(mut sums: Vec<f64>, secs: f64) -> Option<f64> {
    sums.retain(|&r| r > 0.0);
    if sums.is_empty() {
        return None;
    }
    sums.sort_by(f64::total_cmp);
    let at = ((sums.len() - 1) as f64 * HIGH_END).round() as usize;
    Some(sums[at] / secs)
}

/// The same over a series of delivered bytes per bin of `width` (the summed delivery of
/// flows sharing a path), every window counting.
pub fn rate_percentile(delivered: &[f64], width: Span, min_window: Span) -> Option<f64> {
    let w = width.nanos().max(1);
    let k = ((min_window.nanos() + w - 1) / w).max(1) as usize;
    percentile(window_sums(delivered, k).collect(), (k as i64 * w) as f64 / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Timestamp;

    #[test]
    fn a_sustained_rate_is_found() {
        let mut tl = Timeline::new(Timestamp(0));
        for i in 0..100 {
            let bytes = if (20..80).contains(&i) { 10_000 } else { 1_000 };
            let b = tl.bin(Timestamp(0) + Span::from_millis(i));
            b.delivered += bytes;
            b.busy_ns += 1_000_000;
        }
        let r = max_rate(&tl, Span::from_millis(10)).unwrap();
        assert!((r - 10_000_000.0).abs() < 1.0, "{r}");
        assert!(max_rate(&tl, Span::from_millis(1000)).is_none());
    }

    #[test]
    fn delivery_while_the_window_held_the_sender_does_not_count() {
        let mut tl = Timeline::new(Timestamp(0));
        for i in 0..100 {
            let b = tl.bin(Timestamp(0) + Span::from_millis(i));
            b.delivered += 1_000;
            b.rwnd_ns += 1_000_000;
        }
        assert_eq!(max_rate(&tl, Span::from_millis(10)), None);
    }

    #[test]
    fn one_aggregated_ack_does_not_make_the_estimate() {
        let mut tl = Timeline::new(Timestamp(0));
        for i in 0..1000 {
            let b = tl.bin(Timestamp(0) + Span::from_millis(i));
            b.delivered += 1_000;
            b.busy_ns += 1_000_000;
        }
        tl.bin(Timestamp(0) + Span::from_millis(500)).delivered += 30_000; // a stretch ACK
        let r = max_rate(&tl, Span::from_millis(40)).unwrap();
        assert!((r - 1_000_000.0).abs() < 1.0, "{r}");
    }
}
