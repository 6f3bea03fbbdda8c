//! What the classifier found for a flow: the time shares, the verdict, the periods and the
//! figures the rules' writers use (plain data; `classify` makes it).

use super::Label;
use crate::time::Timestamp;

/// The words before the group's utilisation in the steady-delivery sentence (`explain`;
/// the sender's law reads the figure after them).
pub const GROUP_DELIVERED: &str = "the flows sharing the path together delivered ";

#[derive(Clone, Debug, PartialEq)]
pub struct Classification {
    /// Shares of the steady transfer (after start-up), indexed by `Label::index()`.
    pub fractions: [f64; 4],
    /// Shares of the whole transfer, start-up included.
    pub fractions_all: [f64; 4],
    pub verdict: Label,
    pub periods: Vec<(Timestamp, Timestamp, Label)>,
    pub startup_end: Timestamp,
    pub startup_s: f64,
    /// Steady delivery rate of this flow and, when shared, of all flows on the path (B/s).
    pub steady_rate: f64,
    pub shared_steady_rate: Option<f64>,
    /// Steady delivery (shared when shared) over capacity, over the time the sender was
    /// not idle.
    pub utilisation: Option<f64>,
    /// The link's utilisation over the same time: the intervals a queue stood in count at
    /// the capacity (the link behind a standing queue never idled, RFC 8289), the others at
    /// the flow's delivery (`classify`).
    pub link_utilisation: Option<f64>,
    /// Of a flow sharing the path: the group's utilisation, the largest any member measured
    /// (`classify::Input::group_utilisation`), when the group was judged.
    pub group_utilisation: Option<f64>,
    /// Steady delivery (shared when shared) over the time the sender was not idle (B/s).
    pub busy_rate: f64,
    pub idle_share: f64,
    /// Of `idle_share`, the room the sender left unused with its data still in flight.
    pub room_idle_share: f64,
    /// Share of the steady transfer the sender left its congestion window unused in loss
    /// recovery (`rules::sender::WindowUnused`).
    pub window_unused_share: f64,
    pub plateau_share: f64,
    /// The typical flight of the sender's flat stretches (median of their rounds' largest
    /// flight).
    pub plateau_flight: u64,
    /// Their typical low point (median of the rounds' least flight after a send, with the
    /// neighbouring rounds': `classify::low_points`), at most `plateau_flight`: far below
    /// it the sender sent in bursts and waited between them.
    pub plateau_low: u64,
    /// Share of the steady transfer on a loss-free flat flight at or above the BDP with the
    /// RTT raised to hold it (`bottleneck::FullPipe`), and that flight's typical level.
    pub full_pipe_share: f64,
    pub full_pipe_flight: u64,
    /// Share of the steady transfer the receiver's window held the sender while it was at
    /// least the BDP (within the receiver window's share): that window let the sender fill
    /// the pipe, so it kept no capacity back (`classify`).
    pub rwnd_wide_share: f64,
    /// Duration the fractions are taken over, seconds.
    pub steady_s: f64,
    /// The fractions are over the whole transfer, start-up included: the steady part was
    /// too short to stand for it alone (`classify::MIN_STEADY_SHARE`), so `steady_s` holds
    /// the start-up too.
    pub whole: bool,
}

impl Classification {
    /// The transfer's length as judged: start-up and steady part.
    pub fn transfer_s(&self) -> f64 {
        if self.whole {
            self.steady_s.max(self.startup_s)
        } else {
            self.startup_s + self.steady_s
        }
    }

    /// The steady part alone, after the start-up.
    pub fn steady_part_s(&self) -> f64 {
        self.transfer_s() - self.startup_s
    }

    /// The steady share of `l` as the summary's `limits` hold it and every view prints it
    /// (a sentence that formatted the raw fraction read "1%" beside the limits line's "2%").
    pub fn share(&self, l: Label) -> f64 {
        super::round4(self.fractions[l.index()])
    }
}
