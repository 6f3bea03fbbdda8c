//! The start-up phase (slow start, RFC 5681 §3.1): the sender doubles its flight every
//! round until something stops it — a loss, the receiver's window, or its own growth
//! rule (HyStart, ssthresh). It is the congestion window's phase by construction, and it
//! says nothing about what limits the transfer once it runs, so the steady-state figures
//! (utilisation, the limit fractions) start where it ends.

use super::rounds::Round;

/// Slow start roughly doubles the flight each round; growth below this ratio means the
/// sender left it (classic delayed-ACK slow start grows by 1.5, Linux with ABC by 2).
const SLOW_START_GROWTH: f64 = 1.4;

/// Index of the first round after start-up (0 when there is none to speak of).
pub fn end_round(rounds: &[Round]) -> usize {
    let mut prev: Option<u64> = None;
    for (j, r) in rounds.iter().enumerate() {
        // A loss or an ECN mark ends slow start (RFC 5681 §3.1, RFC 3168 §6.1.2). The
        // receiver's window ends it only when it stops the growth (below): a receiver that
        // autotunes its buffer grows its window to twice what the application read in the
        // last round (Linux's tcp_rcv_space_adjust, dynamic right-sizing: Fisk & Feng,
        // 2001), slow start's own pace, so a flight that touches the window while both
        // double is still starting up (a 400 ms path at initcwnd 1 ramps for ~4 s).
        if r.congestion() {
            return j;
        }
        if let Some(p) = prev {
            if p > 0 && (r.max_flight as f64) < SLOW_START_GROWTH * p as f64 {
                return j;
            }
        }
        if r.max_flight > 0 {
            prev = Some(r.max_flight);
        }
    }
    rounds.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(flight: u64, retrans: u32) -> Round {
        Round {
            max_flight: flight,
            retransmissions: retrans,
            ..Default::default()
        }
    }

    #[test]
    fn ends_when_growth_stops() {
        let rs = [r(10, 0), r(20, 0), r(40, 0), r(80, 0), r(82, 0), r(84, 0)];
        assert_eq!(end_round(&rs), 4);
    }

    #[test]
    fn ends_at_the_first_loss() {
        let rs = [r(10, 0), r(20, 0), r(40, 1), r(20, 0)];
        assert_eq!(end_round(&rs), 2);
    }

    #[test]
    fn a_window_that_grows_with_the_flight_does_not_end_it() {
        let mut rs = [r(10, 0), r(20, 0), r(40, 0), r(80, 0), r(82, 0)];
        rs[1].rwnd_ns = 1_000;
        rs[2].rwnd_ns = 1_000;
        assert_eq!(end_round(&rs), 4);
    }

    #[test]
    fn ends_at_the_first_ecn_mark() {
        let mut rs = [r(10, 0), r(20, 0), r(40, 0), r(80, 0)];
        rs[2].ecn_marks = 1;
        assert_eq!(end_round(&rs), 2);
    }
}
