//! Rounds: the timeline regrouped into windows of one base RTT, the natural unit of TCP
//! (a window's worth of data is sent and acknowledged once per round).

use super::timeline::Timeline;
use crate::time::Span;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Round {
    /// Bin range [first, last) of the timeline.
    pub first: usize,
    pub last: usize,
    pub max_flight: u64,
    /// Least flight after a send of new data in the round (`Bin::min_flight`); a round
    /// without one keeps the last when nothing was delivered either (the flight stood
    /// still), and has none when ACKs came but no data left (the flight fell, how far the
    /// capture cannot say).
    pub min_flight: Option<u64>,
    pub retransmissions: u32,
    /// Segments of new data sent, and those under a full segment (`Bin::short_segments`).
    pub new_segments: u32,
    pub short_segments: u32,
    /// ECN congestion signals (CE marks, CWR): see `Bin::ecn_marks`.
    pub ecn_marks: u32,
    pub busy_ns: u64,
    pub rwnd_ns: u64,
    pub idle_ns: u64,
    pub delivered: u64,
}

impl Round {
    /// Whether congestion control had a signal to cut its window in this round: a loss
    /// (a retransmission) or an ECN mark, which an ECN-capable queue sets where it would
    /// have dropped (RFC 3168 §5) and to which the sender answers as to a loss (§6.1.2).
    pub fn congestion(&self) -> bool {
        self.retransmissions > 0 || self.ecn_marks > 0
    }
}

/// Bins per round: the base RTT in bins, at least one.
pub fn bins_per_round(tl: &Timeline, base_rtt: Span) -> usize {
    ((base_rtt.nanos() as f64 / tl.width.nanos().max(1) as f64).round() as usize).max(1)
}

/// A round in which the sender sent nothing new while data was outstanding keeps the
/// flight of the round before: the bytes were still in flight (RTTs longer than the base
/// RTT — queueing, delayed ACKs — leave rounds without a send).
pub fn rounds(tl: &Timeline, base_rtt: Span) -> Vec<Round> {
    let k = bins_per_round(tl, base_rtt);
    let mut carried = 0;
    let mut carried_min = None;
    (0..tl.bins.len())
        .step_by(k)
        .map(|first| {
            let last = (first + k).min(tl.bins.len());
            let mut r = Round {
                first,
                last,
                ..Default::default()
            };
            for b in &tl.bins[first..last] {
                r.max_flight = r.max_flight.max(b.max_flight);
                r.min_flight = r.min_flight.into_iter().chain(b.min_flight).min();
                r.retransmissions += b.retransmissions;
                r.new_segments += b.new_segments;
                r.short_segments += b.short_segments;
                r.ecn_marks += b.ecn_marks;
                r.busy_ns += b.busy_ns;
                r.rwnd_ns += b.rwnd_ns;
                r.idle_ns += b.idle_ns;
                r.delivered += b.delivered;
            }
            let sent = r.max_flight > 0;
            if r.max_flight == 0 && r.busy_ns + r.rwnd_ns > 0 {
                r.max_flight = carried;
            }
            if r.min_flight.is_none() && r.delivered == 0 && r.busy_ns + r.rwnd_ns > 0 {
                r.min_flight = carried_min;
            }
            // A round mostly idle passes on no flight, unless it sent after its idle time:
            // a request written after a pause and then waiting on its ACK (Nagle's rule
            // holding the rest, RFC 896) is still in flight in the rounds that follow.
            (carried, carried_min) = if r.idle_ns > r.busy_ns + r.rwnd_ns && !sent {
                (0, None)
            } else {
                (r.max_flight, r.min_flight)
            };
            r
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::timeline::SenderState;
    use crate::time::Timestamp;

    /// A request written after a pause waits on its ACK for rounds without a send (Nagle's
    /// rule holding the rest of it, the peer's ACK delayed): those rounds carry its flight,
    /// though the round it was written in was mostly idle (P6 nagle_delack at the client:
    /// carried as none, the wait read as rounds of busy time with no flight, cwnd-limited).
    #[test]
    fn a_request_written_after_a_pause_stays_in_flight_while_it_waits() {
        let t = |ms: i64| Timestamp(1_000_000_000) + Span::from_millis(ms);
        let mut tl: Timeline = Timeline::new(t(0));
        tl.account(t(0), t(6), SenderState::Idle);
        tl.account(t(6), t(40), SenderState::Busy);
        tl.bin(t(6)).max_flight = 120;
        let rs = rounds(&tl, Span::from_millis(8));
        assert!(rs.len() >= 4, "{rs:?}");
        assert!(
            rs[0].idle_ns > rs[0].busy_ns,
            "the first round is mostly idle: {:?}",
            rs[0]
        );
        assert!(rs[1..4].iter().all(|r| r.max_flight == 120), "{rs:?}");
    }

    /// A round that only idled passes on no flight: the rounds after it that are busy
    /// without a send have nothing carried from before the pause.
    #[test]
    fn an_idle_round_without_a_send_carries_nothing() {
        let t = |ms: i64| Timestamp(1_000_000_000) + Span::from_millis(ms);
        let mut tl: Timeline = Timeline::new(t(0));
        tl.account(t(0), t(8), SenderState::Busy);
        tl.bin(t(0)).max_flight = 5000;
        tl.account(t(8), t(16), SenderState::Idle);
        tl.account(t(16), t(24), SenderState::Busy);
        let rs = rounds(&tl, Span::from_millis(8));
        assert_eq!(rs[0].max_flight, 5000);
        assert_eq!(rs[2].max_flight, 0, "{rs:?}");
    }
}
