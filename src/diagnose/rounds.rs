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
                r.ecn_marks += b.ecn_marks;
                r.busy_ns += b.busy_ns;
                r.rwnd_ns += b.rwnd_ns;
                r.idle_ns += b.idle_ns;
                r.delivered += b.delivered;
            }
            if r.max_flight == 0 && r.busy_ns + r.rwnd_ns > 0 {
                r.max_flight = carried;
            }
            if r.min_flight.is_none() && r.delivered == 0 && r.busy_ns + r.rwnd_ns > 0 {
                r.min_flight = carried_min;
            }
            (carried, carried_min) = if r.idle_ns > r.busy_ns + r.rwnd_ns {
                (0, None)
            } else {
                (r.max_flight, r.min_flight)
            };
            r
        })
        .collect()
}
