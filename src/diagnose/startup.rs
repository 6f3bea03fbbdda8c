//! The start-up phase (slow start, RFC 5681 §3.1): the sender doubles its flight every
//! round until something stops it — a loss, the receiver's window, or its own growth
//! rule (HyStart, ssthresh). It is the congestion window's phase by construction, and it
//! says nothing about what limits the transfer once it runs, so the steady-state figures
//! (utilisation, the limit fractions) start where it ends.

use super::capacity::AT_CAPACITY;
use super::rounds::Round;
use super::timeline::Timeline;
use crate::time::Timestamp;

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

/// Where the start-up ends when a loss ended slow start at round `j`: after the round in
/// which that loss's recovery ended (`recovered`, a bin of the timeline), if it did.
///
/// Why: slow start ends at the loss, but the sender is in loss recovery until the
/// cumulative ACK reaches the highest byte sent when it began (RFC 6582 §3.2, RFC 6675
/// §5: the recovery point), and only then runs congestion avoidance, the steady state of
/// RFC 5681 §3.1. Slow start's last round sent up to twice what the path held, so the
/// losses that end it can be a whole window's excess (RFC 3742 §1), repaired over
/// several round trips at a halved window: the start-up's transient, not what limits the
/// running transfer (a 22 Mbit/s, 260 ms path with a 120-packet queue: 162 segments lost
/// at the overshoot, repaired over 323 ms; counted as steady, the flow delivered 83% of
/// the capacity; after it, 90%, the kernel's 93%). A loss after slow start stopped on its own (HyStart,
/// the receiver's window) is the steady state's, and ends nothing here.
pub fn after_recovery(rounds: &[Round], j: usize, recovered: Option<usize>) -> usize {
    match (rounds.get(j), recovered) {
        (Some(r), Some(bin)) if r.retransmissions > 0 => {
            rounds.iter().position(|r| r.first > bin).unwrap_or(rounds.len()).max(j)
        }
        _ => j,
    }
}

/// The bin of `tl` that holds `t`, if any.
pub fn bin_of(tl: &Timeline, t: Option<Timestamp>) -> Option<usize> {
    let t = t?;
    let i = (t - tl.origin).nanos().checked_div(tl.width.nanos())?;
    usize::try_from(i).ok()
}

/// Where the start-up really ends when slow start stopped without a congestion signal:
/// the first round from `from` on that delivers at the capacity (`per_round`: the judged
/// capacity times the rounds' length, bytes), if the window got there with no loss, no ECN
/// mark, and no round in which the sender mostly idled (its application held it) on the
/// way; `from` otherwise. Rounds held by the receiver's window are on the way: a receiver
/// that autotunes its buffer doubles its window each round as slow start does (see
/// [`end_round`]), and one whose window never grows keeps the flow from the capacity, so
/// the ramp never ends.
///
/// Why: a sender leaves slow start on a growth rule as well as on a loss — HyStart (Ha &
/// Rhee, "Taming the elephants: new TCP slow start", Computer Networks 2011; on by default
/// in Linux's tcp_cubic) leaves it when the RTT rises or ACK trains stretch, before the
/// pipe is full — and CUBIC then grows the window towards the path round by round (RFC
/// 9438 §4.2-4.3). Until the window first holds what the path carries, the flow is still
/// ramping up: those rounds are the congestion window's by construction, as slow start's
/// are, and say nothing of the steady state (a 400 ms, 50 Mbit/s path: HyStart left slow
/// start after 0.8 s, CUBIC took 3 s more to fill the pipe, which then stayed full). A
/// congestion signal on the way ends the ramp where it was: the window's cuts are the
/// steady behaviour then.
pub fn ramp_end(rounds: &[Round], from: usize, per_round: Option<f64>) -> usize {
    let Some(full) = per_round.filter(|&p| p > 0.0) else {
        return from;
    };
    let whole = rounds.first().map_or(0, |r| r.last - r.first);
    for (j, r) in rounds.iter().enumerate().skip(from) {
        if r.congestion() || r.idle_ns > r.busy_ns + r.rwnd_ns || r.last - r.first < whole {
            return from;
        }
        if r.delivered as f64 >= AT_CAPACITY * full {
            return j;
        }
    }
    from
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy(flight: u64, delivered: u64) -> Round {
        Round {
            first: 0,
            last: 1,
            max_flight: flight,
            busy_ns: 1_000,
            delivered,
            ..Default::default()
        }
    }

    /// Slow start left at 40 of a 100-per-round path, the window then growing to it.
    #[test]
    fn a_ramp_without_loss_ends_where_the_pipe_fills() {
        let rs = [
            busy(10, 10),
            busy(20, 20),
            busy(40, 40),
            busy(45, 45),
            busy(60, 60),
            busy(90, 90),
            busy(100, 100),
        ];
        let from = end_round(&rs);
        assert_eq!(from, 3);
        assert_eq!(ramp_end(&rs, from, Some(100.0)), 5);
        assert_eq!(ramp_end(&rs, from, None), 3);
    }

    /// A loss on the way, an idle sender, or a flow that never gets there: the
    /// start-up ends where slow start did.
    #[test]
    fn a_ramp_cut_short_is_no_ramp() {
        let mut rs = [
            busy(10, 10),
            busy(20, 20),
            busy(40, 40),
            busy(45, 45),
            busy(60, 60),
            busy(90, 90),
        ];
        assert_eq!(ramp_end(&rs, 3, Some(200.0)), 3);
        rs[4].retransmissions = 1;
        assert_eq!(ramp_end(&rs, 3, Some(100.0)), 3);
        rs[4].retransmissions = 0;
        rs[4].idle_ns = 2_000;
        assert_eq!(ramp_end(&rs, 3, Some(100.0)), 3);
        // The receiver's window, opening round by round, is on the way.
        rs[4].idle_ns = 0;
        rs[4].rwnd_ns = 2_000;
        assert_eq!(ramp_end(&rs, 3, Some(100.0)), 5);
    }

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

    /// Rounds of two bins each: slow start lost in round 2, its recovery ended in bin 7
    /// (round 3): the start-up takes round 3 too. Without the recovery's end, after an
    /// ECN mark (no repair to wait for), or when slow start had stopped on its own before
    /// the loss, it ends where slow start did.
    #[test]
    fn a_loss_that_ends_slow_start_ends_it_after_its_recovery() {
        let mut rs: Vec<Round> = [r(10, 0), r(20, 0), r(40, 3), r(20, 2), r(25, 0), r(30, 0)]
            .into_iter()
            .enumerate()
            .map(|(i, r)| Round {
                first: 2 * i,
                last: 2 * i + 2,
                ..r
            })
            .collect();
        let j = end_round(&rs);
        assert_eq!(j, 2);
        assert_eq!(after_recovery(&rs, j, Some(7)), 4);
        assert_eq!(after_recovery(&rs, j, None), 2);
        assert_eq!(after_recovery(&rs, j, Some(100)), rs.len());
        rs[2].retransmissions = 0;
        rs[2].ecn_marks = 1;
        assert_eq!(after_recovery(&rs, end_round(&rs), Some(7)), 2);
        rs[2] = Round {
            max_flight: 22,
            ..rs[2]
        };
        rs[2].ecn_marks = 0;
        rs[3].retransmissions = 1;
        assert_eq!(end_round(&rs), 2);
        assert_eq!(after_recovery(&rs, end_round(&rs), Some(7)), 2);
    }

    #[test]
    fn bins_are_found_by_time() {
        let mut tl = Timeline::<Vec<super::super::timeline::Bin>>::new(Timestamp(1_000));
        tl.width = crate::time::Span(100);
        assert_eq!(bin_of(&tl, Some(Timestamp(1_250))), Some(2));
        assert_eq!(bin_of(&tl, None), None);
        // Before the timeline: no bin.
        assert_eq!(bin_of(&tl, Some(Timestamp(500))), None);
    }

    #[test]
    fn ends_at_the_first_ecn_mark() {
        let mut rs = [r(10, 0), r(20, 0), r(40, 0), r(80, 0)];
        rs[2].ecn_marks = 1;
        assert_eq!(end_round(&rs), 2);
    }
}
