//! A burst of losses random loss does not make: the run of drops of a queue or a policer
//! that overflowed.
//!
//! Random loss at a flow's own rate p drops, of the n segments a stretch of the transfer
//! carries, k or more with the binomial tail probability P(Bin(n, p) >= k). A loss episode
//! whose drops are that unlikely, even counted over every stretch of its length in the
//! flow, is not random loss (the significance is [`SIGNIFICANCE`]): something on the path
//! dropped what ran past it, a queue that filled or a token bucket that emptied (Flach et
//! al., SIGCOMM 2016, §3: a policer's drops come in runs once its bucket is empty).
//! `capacity.rs` uses it to tell a token bucket's rounds from a sender's slowed tails.

use crate::flow::Dir;
use crate::summary::{FlowSummary, StallKind};

use super::timeline::Timeline;

/// The expected number of such stretches in a flow under random loss below which an
/// episode is not random loss: one flow in a hundred.
pub const SIGNIFICANCE: f64 = 0.01;

/// P(X >= k) for X ~ Bin(n, p), in log space (no underflow for large n).
pub fn binomial_tail(n: u64, p: f64, k: u64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if k > n || p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    // log C(n, i) p^i (1-p)^(n-i), from i = 0 by the ratio of neighbours; the terms from
    // k on summed as they come (log-sum-exp: the largest so far, and the sum scaled by it).
    let (lp, lq) = (p.ln(), (1.0 - p).ln());
    let mut log_term = n as f64 * lq;
    let (mut top, mut sum) = (f64::NEG_INFINITY, 0.0_f64);
    for i in 0..=n {
        if i >= k {
            if log_term > top {
                sum = sum * (top - log_term).exp() + 1.0;
                top = log_term;
            } else {
                sum += (log_term - top).exp();
            }
            // Past the mode the terms only fall: once far below the largest, stop.
            if log_term < top - 50.0 {
                break;
            }
        }
        if i < n {
            log_term += ((n - i) as f64 / (i + 1) as f64).ln() + lp - lq;
        }
    }
    if !top.is_finite() {
        return 0.0;
    }
    (top.exp() * sum).min(1.0)
}

/// The sender's largest flight (bytes, as its timeline reconstructed it: away from the
/// sender the capture sees less of it) when a loss episode of the `bulk` direction lost a
/// burst random loss at the flow's own rate would not.
pub fn burst_loss_flight(summary: &FlowSummary, bulk: Dir, tl: &Timeline) -> Option<u64> {
    let flight = tl.bins.iter().map(|b| b.max_flight).max().filter(|&f| f > 0)?;
    let d = summary.dir(bulk);
    let mss = d.max_segment_bytes.max(1) as u64;
    let rtt = summary.rtt_ms.min? / 1e3;
    let p = d.retransmitted_segments as f64 / d.data_segments.max(1) as f64;
    let window = (flight / mss).max(1);
    let burst = |events: u32, duration_s: f64| {
        // The stretch an episode spans: its round trips' windows.
        let rounds = (duration_s / rtt).ceil().max(1.0);
        let stretches = (summary.duration_s / (rounds * rtt)).max(1.0);
        stretches * binomial_tail(window * rounds as u64, p, events as u64) < SIGNIFICANCE
    };
    summary
        .stalls
        .iter()
        .filter(|s| s.kind == StallKind::LossEpisode && s.direction == Some(bulk))
        .any(|s| burst(s.events, s.duration_s))
        .then_some(flight)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binomial_tail_sums_the_terms_from_k() {
        // Bin(4, 0.5): P(X >= 2) = 11/16, P(X >= 4) = 1/16.
        assert!((binomial_tail(4, 0.5, 2) - 11.0 / 16.0).abs() < 1e-12);
        assert!((binomial_tail(4, 0.5, 4) - 1.0 / 16.0).abs() < 1e-12);
        assert_eq!(binomial_tail(4, 0.5, 0), 1.0);
        assert_eq!(binomial_tail(4, 0.5, 5), 0.0);
        // 1% loss, a window of 100: two drops in one is common (26%), fifteen never.
        assert!((binomial_tail(100, 0.01, 2) - 0.2642).abs() < 1e-3);
        assert!(binomial_tail(100, 0.01, 15) < 1e-12);
        // A large window does not underflow: 100 000 segments at 1%, at least 900 dropped.
        let t = binomial_tail(100_000, 0.01, 900);
        assert!(t > 0.99 && t <= 1.0, "{t}");
    }

    proptest::proptest! {
        /// A tail is a probability, and falls as k rises.
        #[test]
        fn tails_are_probabilities_that_fall_with_k(n in 1u64..400, p in 0.0001f64..0.9999, k in 0u64..400) {
            let a = binomial_tail(n, p, k);
            let b = binomial_tail(n, p, k + 1);
            proptest::prop_assert!((0.0..=1.0).contains(&a) && b <= a + 1e-12, "{} {}", a, b);
        }
    }
}
