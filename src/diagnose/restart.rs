//! The restart after an outage: slow start again from one segment. When the retransmission
//! timer fires, the sender sets ssthresh to half the flight it had (RFC 5681 §3.1, eq. 4:
//! max(FlightSize / 2, 2 SMSS)) and its window to the loss window, one segment, and slow
//! starts back up to ssthresh (RFC 5681 §3.1; RFC 6298 §5.5 backs the timer off, and each
//! expiry restarts the same way). Those rounds are the congestion window's phase by
//! construction, as the connection's own start-up is ([`super::startup`]): they say
//! nothing of what limited the transfer once it ran, and the steady judgement leaves them
//! out as it leaves out the start-up and the outage itself.
//!
//! The restart ends at the first round, after the outage, that delivers half what the
//! round before the outage delivered (an ACK-clocked round delivers its window: half the
//! flight is the least ssthresh any of RFC 5681, CUBIC's β = 0.7 (RFC 9438 §4.6) or Linux
//! gives, so ending it there leaves out the least time), where the sender runs out of data
//! (its application holds it from there), or where the flow ends. The
//! delivery, not the flight: after the timer the segments still unacknowledged stay
//! between the sender's edges (its flight as the capture reconstructs it) though the
//! sender counts them lost and sends one segment a round at first.

use super::timeline::Timeline;
use crate::time::{Span, Timestamp};

/// The restart after each outage `(start, end)`, as capture time spans `(outage end,
/// restart end)`; empty ones are left out. `bins_per_round` bins make a round.
pub fn after_outages(
    tl: &Timeline,
    outages: &[(Timestamp, Timestamp)],
    bins_per_round: usize,
    mss: u32,
) -> Vec<(Timestamp, Timestamp)> {
    let n = tl.bins.len();
    let index = |t: Timestamp| -> usize {
        let w = tl.width.nanos().max(1);
        (((t - tl.origin).nanos().max(0) / w) as usize).min(n)
    };
    let round = |from: usize| -> u64 {
        tl.bins[from.min(n)..(from + bins_per_round).min(n)]
            .iter()
            .map(|x| x.delivered)
            .sum()
    };
    let mut out = Vec::new();
    for &(start, end) in outages {
        let (a, b) = (index(start), index(end));
        if b >= n {
            continue;
        }
        // What the round before the outage delivered: the window the timer found.
        let before = round(a.saturating_sub(bins_per_round));
        let target = (before / 2).max(2 * mss as u64);
        // The outage's own bin is still the outage's; the restart runs from the next one
        // to the first round that delivers the target.
        let from = b + 1;
        // A sender that runs out of data (idle time in the bin) is held by its
        // application, not by the restart, from there on.
        let back = (from..n)
            .find(|&i| round(i) >= target || tl.bins[i].idle_ns > 0)
            .unwrap_or(n);
        if back > from {
            out.push((tl.start_of(from), tl.start_of(back).min(tl.end())));
        }
    }
    out
}

/// Whether capture time `t` lies in one of `spans`.
pub fn within(spans: &[(Timestamp, Timestamp)], t: Timestamp) -> bool {
    spans.iter().any(|&(a, b)| a <= t && t < b)
}

/// The middle of bin `i`.
pub fn mid(tl: &Timeline, i: usize) -> Timestamp {
    tl.start_of(i) + Span(tl.width.nanos() / 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::timeline::Bin;

    fn ms(x: i64) -> Timestamp {
        Timestamp(x * 1_000_000)
    }

    fn timeline(delivered: &[u64]) -> Timeline {
        let mut tl = Timeline::new(Timestamp(0));
        tl.width = Span::from_millis(10);
        tl.bins = delivered
            .iter()
            .map(|&f| Bin {
                delivered: f,
                ..Default::default()
            })
            .collect();
        tl
    }

    /// Before a 60 ms outage a round (four 10 ms bins) delivered 100 kB; after it the
    /// sender starts again from one segment a round and doubles it: the restart runs until
    /// the first round that delivers half of 100 kB.
    #[test]
    fn the_restart_runs_until_a_round_delivers_half_what_one_did_before() {
        let mut d = vec![25_000; 10];
        d.extend([0; 6]); // the outage: bins 10..16
        for r in 0..8 {
            d.extend([362 << r; 4]); // round r delivers 1448 << r
        }
        let tl = timeline(&d);
        let got = after_outages(&tl, &[(ms(100), ms(150))], 4, 1448);
        // Bins 36..40 deliver 46,336 B together, short of 50 kB; bins 37..41 deliver
        // 57,920 B: the restart is bins 16..37.
        assert_eq!(got, vec![(ms(160), ms(370))]);
    }

    /// A sender that never gets back to half restarts to the end of the flow.
    #[test]
    fn a_flow_that_ends_before_it_is_back_restarts_to_its_end() {
        let mut d = vec![25_000; 10];
        d.extend([0, 0, 362, 362, 724]);
        let tl = timeline(&d);
        let got = after_outages(&tl, &[(ms(100), ms(110))], 4, 1448);
        assert_eq!(got, vec![(ms(120), ms(150))]);
    }

    /// A sender with nothing more to send after the outage is idle, not restarting.
    #[test]
    fn an_idle_sender_ends_the_restart() {
        let mut d = vec![25_000; 10];
        d.extend([0, 0, 362, 362, 724, 0, 0, 0]);
        let mut tl = timeline(&d);
        tl.bins[15].idle_ns = 10_000_000;
        let got = after_outages(&tl, &[(ms(100), ms(110))], 4, 1448);
        assert_eq!(got, vec![(ms(120), ms(150))]);
    }

    /// Back at once (a short outage after which the window was still open): no restart.
    #[test]
    fn a_flow_already_back_has_no_restart() {
        let tl = timeline(&[25_000; 20]);
        assert!(after_outages(&tl, &[(ms(100), ms(120))], 4, 1448).is_empty());
    }
}
