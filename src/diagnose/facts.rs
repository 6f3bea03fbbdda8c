//! The numbers evidence and advice are written from, gathered once per flow (the "facts"
//! step of gate -> facts -> classify -> explain).

use super::capacity::{Capacity, Estimate, Method};
use super::classification::Classification;
use super::dispersion::Dispersion;
use super::queue::StandingQueue;
use super::receiver_clock::ReceiverClock;
use crate::flow::Dir;
use crate::summary::{EcnMode, Stall, StallKind};
use crate::tcp::ecn::{flags_signal, Events};
use crate::tcp::{Connection, WindowScale};
use crate::time::{Span, Timestamp};

/// Queueing delay that shows a full pipe: 5% of the base RTT, at least a millisecond
/// (below that, timer and scheduling noise), and more than two ticks of the capture's
/// clock (see [`Facts::queue_shows`]).
const QUEUE_SIGN_SHARE: f64 = 0.05;
const QUEUE_SIGN_S: f64 = 0.001;

/// The least queueing delay (s) that shows a full pipe over a base RTT of `base_s`.
pub fn queue_sign_s(base_s: f64) -> f64 {
    QUEUE_SIGN_S.max(QUEUE_SIGN_SHARE * base_s)
}

/// [`Facts::queue_shows`] from its figures (s): the base RTT, the prompt samples' queueing,
/// the median RTT's, and the clock's quantum.
pub fn queue_shows(base_s: f64, prompt_queueing_s: Option<f64>, queueing_s: Option<f64>, quantum_s: f64) -> bool {
    let sign = queue_sign_s(base_s);
    let q = prompt_queueing_s.unwrap_or(0.0);
    q >= sign && q > 2.0 * quantum_s && queueing_s.unwrap_or(0.0) >= sign
}

/// How much faster than a spacing estimate its trains' other bytes must come, and what share
/// of its bytes, to show the estimate a slower mode than the path's
/// ([`Facts::spacing_outpaced`]): an octave, beyond the modes' ±6% smoothing and a batching
/// host's jitter, and the share a separate mode must carry (`dispersion::MODE_SHARE`).
pub const OUTPACED: f64 = 2.0;
pub const OUTPACED_SHARE: f64 = 0.1;

#[derive(Clone, Debug)]
pub struct Facts {
    pub capacity: Option<Capacity>,
    /// When the recovery of the direction's first loss ended (the cumulative ACK reached
    /// the highest byte sent when it began): the start-up ends there when that loss ended
    /// slow start ([`super::startup::after_recovery`]).
    pub recovered: Option<crate::time::Timestamp>,
    /// Every estimate the capacity was chosen from.
    pub estimate: Estimate,
    /// The capacity is the flow's own delivery with no sign the pipe was full: a lower
    /// bound, reported but not judged by.
    pub lower_bound: bool,
    /// Of a member of a group sharing the path (`Method::SharedDeliveryRate`): the group's
    /// summed delivery is the path's rate, not what the members' windows and applications
    /// offered — it was measured in windows the group was busy in, and some member showed
    /// the path full then ([`Facts::shows_full`]).
    pub group_full: bool,
    /// Of a member of a group sharing the path: the group's summed delivery (the figure
    /// `Method::SharedDeliveryRate` would take), by which its utilisation is judged.
    pub group_delivery: Option<f64>,
    /// The delivery while the sender had data that the last classification measured
    /// (`Classification::busy_rate`, the group's where shared): what the verdict judges
    /// against the capacity, 0 before the first.
    pub busy_delivery: f64,
    pub base_rtt_s: f64,
    pub median_rtt_s: Option<f64>,
    pub p95_rtt_s: Option<f64>,
    /// The longest round trip of the flows whose ACKs its delivery counts (its own; a
    /// group's longest for a flow sharing a path): the longest a byte could have crossed
    /// the path before the ACK that counted it.
    pub max_rtt_s: Option<f64>,
    /// The handshake gave a round-trip sample: the base RTT was measured with the path's
    /// queue empty of this flow's data (a SYN waits behind nothing of its own).
    pub handshake_timed: bool,
    /// The loop through the data sender, the far one from here, was timed at the handshake
    /// only: no TCP timestamp echo, no window edge the sender waited at, no ACK of its data
    /// seen before it (the capture point sits by the receiver). Every end-to-end sample then
    /// adds that handshake value to the receiver's turnaround: a queue between the sender
    /// and here (the bottleneck's, for a download captured at the client) is in none.
    pub sender_loop_untimed: bool,
    /// The loop through the data sender was timed by repairs alone (`tcp::rtt::repair`): no
    /// sample, and no bound but theirs. Each repair holds the sender's wait for the news of
    /// the loss, so that loop's least, and the base RTT with it, bounds the path's from
    /// above.
    pub sender_loop_by_repairs: bool,
    /// The BDP: the capacity's rate over the base RTT of a full data segment
    /// ([`Facts::bdp_at`]).
    pub bdp: Option<f64>,
    /// What the loops' samples say of a full data segment's serialisation, when the base
    /// RTT is the handshake's in either loop ([`Facts::segment_time_s`]).
    pub segment_gaps: Option<SegmentGaps>,
    /// The round trip of a full data segment that delivery rates are measured over (the
    /// base RTT and what the segment's serialisation adds to it: `data_round`).
    pub delivery_round: Span,
    /// The largest data segment the flow sent, bytes: its MSS, or less where no segment
    /// was that large (an echo service's one-byte messages).
    pub largest_segment: u32,
    pub max_rwnd: Option<u64>,
    /// The largest window as the sender read it, when that differs from the handshake's
    /// reading (it applied `obeyed_scale`: see `Connection::effective_scale`).
    pub obeyed_rwnd: Option<u64>,
    pub obeyed_scale: WindowScale,
    /// A middlebox finding about the window scale stands beside `obeyed_scale`.
    pub scale_finding: bool,
    /// Largest flight the sender had (reconstructed where the capture is not at it).
    pub max_flight: u64,
    /// The most of that flight that was in the network (RFC 6675 pipe: neither SACKed nor
    /// presumed lost). What Little's law and the BDP bound; `max_flight` is what the
    /// receiver's window bounds.
    pub max_in_network: u64,
    /// What the path between the sender and the capture point held at most beyond the
    /// flight seen here, as the sender's view allowed it (`tcp::SenderView::transit`), and
    /// the longest loop through the sender that was over; None without a view.
    pub transit: Option<u64>,
    pub near_loop: Span,
    /// The longest loop of the recent samples through the sender that the bound on that
    /// loop set aside, and the bound then (see `Connection::near_loop_bound`); the largest
    /// flight such a loop would have given.
    pub loop_set_aside: Option<(Span, Span)>,
    pub unbounded_flight: u64,
    /// Goodput of the bulk direction, bytes/s.
    pub goodput: f64,
    pub mss: u32,
    pub data_segments: u64,
    pub window_full_segments: u64,
    pub retransmitted_segments: u64,
    /// Retransmissions the receiver reported receiving twice (D-SACK, RFC 2883): spurious
    /// (RFC 3708), no loss. At most `retransmitted_segments`.
    pub spurious_retransmissions: u64,
    /// Retransmissions that repaired what an outage lost (`StallTracker::outage_repairs`):
    /// the outage is reported as a stall; they are no loss a congestion window answered.
    pub outage_repairs: u64,
    pub zero_windows: u64,
    /// The share of the steady transfer's sending time in which the receiver's window stayed
    /// at or below seven eighths of the largest it had offered before: its buffer held an
    /// eighth or more of data its application had not read (the window is the buffer's free
    /// space, RFC 9293 §3.8.6.2.2). A window that only grows (autotuning) never counts.
    pub reader_behind_share: f64,
    /// Scale of the receiver's windows (the end that receives the bulk data).
    pub receiver_scale: WindowScale,
    /// Segments per delivering ACK, when so many that ACK spacing carries no dispersion
    /// (and the capture point is before the bottleneck).
    pub stretch_acks: Option<f64>,
    pub sack_permitted: Option<bool>,
    pub flows_sharing: usize,
    /// Of a group sharing the path: the link's utilisation the group reached, the largest
    /// any member measured over its own steady transfer (`diagnose::share_path`).
    pub group_utilisation: Option<f64>,
    /// A standing queue over the steady transfer, when RTT samples allowed judging one.
    pub queue: Option<StandingQueue>,
    /// The capture's timestamp resolution, s.
    pub quantum_s: f64,
    /// The receiver's window held the sender (the next segment did not fit) for at least
    /// the receive-window rule's share of the steady transfer's busy time.
    pub window_held: bool,
    /// The ACK and data-arrival spacing samples (whatever estimate they gave): how many of
    /// their bytes came faster than a capacity (`judged_capacity`).
    pub ack_spacing: Dispersion,
    /// The same ACKs on the receiver's clock (its TSvals), to tell ACKs compressed on the
    /// way back from a faster path (`Facts::spacing_outpaced`).
    pub ack_stamps: ReceiverClock,
    pub arrival_spacing: Option<Dispersion>,
    /// Queueing the prompt samples show over the steady transfer: the median over its bins
    /// of (least prompt RTT - base), s. Prompt samples only: a delayed ACK or an answer
    /// as late as its application is no queue.
    pub prompt_queueing_s: Option<f64>,
    /// The flow's stalls (the diagnosis reads some: a reader that let the window close, a
    /// sender waiting on delayed ACKs).
    pub stalls: Vec<Stall>,
    /// The RTT rose (by this much, s) while a transfer between the same hosts ran the other
    /// way: the rise may be that direction's queue, so it was not taken for this
    /// direction's ([`Facts::queue_other_way`]).
    pub queue_other_way: Option<f64>,
    /// ECN of the bulk direction: CE marks, echoes, window reductions.
    pub ecn: EcnFacts,
    /// Whose turn the bulk sender's idle pauses were (request/response), over the connection.
    pub turns: Option<super::turns::TurnSummary>,
}

/// What each loop (through the client, through the server) says of a full data segment's
/// serialisation: whether its least RTT is the handshake's, and how much longer its least
/// sample on a full segment took than its handshake sample (seconds); and the loop the
/// bottleneck lies in as the loops' lengths place it.
#[derive(Clone, Debug, PartialEq)]
pub struct SegmentGaps {
    pub loops: [(bool, Option<f64>); 2],
    pub bottleneck_loop: usize,
}

impl SegmentGaps {
    /// What one full segment's serialisation at `rate` (bytes/s) adds to the base RTT for
    /// a round trip, in seconds: at most `largest_segment / rate` (the frame over the link's
    /// rate, as the rate is the payload's), and 0 when the base RTT was timed on segments.
    ///
    /// A loop whose least is the handshake's adds what its samples on full segments took
    /// beyond its handshake sample. One with no such sample adds the whole segment when it
    /// is the loop the bottleneck lies in: where the other loop's samples on segments came
    /// within half a segment's serialisation of its handshake sample, the segment was not
    /// serialised at the bottleneck there; without such samples, the loop the loops' lengths
    /// place it in. The handshake's own packets' serialisation, already in the base, is not
    /// taken off (a 74-byte SYN: 5% of a 1514-byte frame).
    pub fn segment_time_s(&self, largest_segment: u32, rate: f64) -> f64 {
        if rate <= 0.0 {
            return 0.0;
        }
        let s = largest_segment as f64 / rate;
        let mut t = 0.0;
        for (i, &(from_handshake, gap)) in self.loops.iter().enumerate() {
            if !from_handshake {
                continue;
            }
            t += gap.unwrap_or_else(|| {
                let here = match self.loops[1 - i].1 {
                    Some(other) => other < s / 2.0,
                    None => i == self.bottleneck_loop,
                };
                if here {
                    s
                } else {
                    0.0
                }
            });
        }
        t.min(s)
    }
}

impl Facts {
    /// What one full segment's serialisation at `rate` (bytes/s) adds to the base RTT for
    /// the BDP, in seconds ([`SegmentGaps::segment_time_s`] of the flow's largest segment;
    /// 0 when the base RTT was timed on segments).
    pub fn segment_time_s(&self, rate: f64) -> f64 {
        self.segment_gaps
            .as_ref()
            .map_or(0.0, |g| g.segment_time_s(self.largest_segment, rate))
    }

    /// The bytes a path of `rate` (bytes/s) holds over the round trip of a full data
    /// segment: the window that keeps its bottleneck busy. A window of W bytes keeps a link
    /// of rate C busy when the first segment's ACK returns before the link has sent W:
    /// S/C + P <= W/C for a segment of S bytes and a propagation round trip P, so that
    /// W >= C.P + S; the base RTT of a segment (P + S/C) times C is that. (`segment_time_s`
    /// adds the S/C the handshake's base lacks.)
    pub fn bdp_at(&self, rate: f64) -> f64 {
        rate * (self.base_rtt_s + self.segment_time_s(rate))
    }

    pub fn window_full_share(&self) -> f64 {
        if self.data_segments == 0 {
            0.0
        } else {
            self.window_full_segments as f64 / self.data_segments as f64
        }
    }

    pub fn retransmission_share(&self) -> f64 {
        if self.data_segments == 0 {
            0.0
        } else {
            self.retransmitted_segments as f64 / self.data_segments as f64
        }
    }

    /// Retransmissions that were losses on a running path: all but those the receiver
    /// reported spurious and those that repaired an outage's loss.
    pub fn lost_segments(&self) -> u64 {
        self.retransmitted_segments
            .saturating_sub(self.spurious_retransmissions)
            .saturating_sub(self.outage_repairs)
    }

    /// Share of the data segments lost (retransmitted, spurious ones and an outage's repair
    /// aside).
    pub fn loss_share(&self) -> f64 {
        if self.data_segments == 0 {
            0.0
        } else {
            self.lost_segments() as f64 / self.data_segments as f64
        }
    }

    /// The spacing samples the capacity figure came from, where it is a dispersion mode:
    /// the ACKs' or the data arrivals'.
    pub fn figure_spacing(&self) -> Option<&super::dispersion::Dispersion> {
        match self.capacity?.method {
            Method::Dispersion => Some(&self.ack_spacing),
            Method::ArrivalDispersion => self.arrival_spacing.as_ref(),
            _ => None,
        }
    }

    /// The share of the capacity's own spacing samples (ACK or data-arrival dispersion)
    /// that came at [`OUTPACED`] times its rate or faster, when at least [`OUTPACED_SHARE`]:
    /// the estimate is then a slower mode of the same trains — a window's pace, or a gap the
    /// receiver made (a delayed ACK: Linux holds one that would not open the window,
    /// `__tcp_ack_snd_check`) — and the path carried those bytes faster than it (Dovrolis
    /// et al., ToN 2004: the capacity is not below a mode of segments that queued behind
    /// each other). A window-held upload at a batching host (300 Mbit/s, 250 ms) read its
    /// delayed ACK's 2776 B / 40 ms as the path; 45% of its ACK bytes came at 90-370 Mbit/s.
    pub fn spacing_outpaced(&self) -> Option<f64> {
        let cap = self.capacity?;
        let spacing = self.figure_spacing()?;
        let share = Some(spacing.share_at_least(OUTPACED * cap.rate)).filter(|&s| s >= OUTPACED_SHARE)?;
        // The faster ACKs were sent no faster by the receiver (its stamps say so): they were
        // compressed on the way back, not carried faster (`ReceiverClock::sent_pace`).
        let compressed = cap.method == Method::Dispersion
            && self
                .ack_stamps
                .sent_pace(OUTPACED * cap.rate)
                .is_some_and(|p| p < OUTPACED * cap.rate);
        (!compressed).then_some(share)
    }

    /// Queueing delay: median RTT above the base, to the nanosecond. Both are whole
    /// nanoseconds (`Span`s) carried as seconds; what their difference holds below one is
    /// the float's rounding (a median equal to the base printed "queueing delay
    /// 0.00000000173 ns").
    pub fn queueing_s(&self) -> Option<f64> {
        self.median_rtt_s
            .map(|m| ((m - self.base_rtt_s) * 1e9).round().max(0.0) / 1e9)
    }

    /// The rate this flow's packet spacing showed: its ACK dispersion (unless its receiver
    /// stretched its ACKs over many segments), or the receiver's own ACK clock, or its
    /// data's arrival spacing, whichever is highest; 0 where none was measured.
    pub fn spacing_rate(&self) -> f64 {
        let acks = if self.stretch_acks.is_some() {
            None
        } else {
            self.estimate.dispersed
        };
        acks.or(self.estimate.receiver_clocked().filter(|_| self.stretch_acks.is_none()))
            .unwrap_or(0.0)
            .max(self.estimate.arrived.unwrap_or(0.0))
    }

    /// Whether the spacing `d` came in clusters of half the flight or more, each of packets
    /// closer than the shortest span the clock resolves (a coarse clock's tick or ten, or a
    /// host's batch): no sample was timed inside a window, and the time from one cluster to
    /// the next is the round trip's, one window per round trip (Jacobson 1988) — the
    /// window's pace, not the path's (census: a 16 kB window behind a 60 Mbit/s token bucket
    /// at a receiver with a 1 ms clock, each window in one tick: ACK dispersion 1.00 Mbit/s).
    pub fn windowed(&self, d: &super::dispersion::Dispersion) -> bool {
        self.max_flight > 0 && 2.0 * d.mean_cluster_bytes() >= self.max_flight as f64
    }

    /// A sign other than the delivery that the path was full while this flow crossed it: a
    /// queue that stood (RFC 8289) or that the RTT showed, ECN marks (a queue above its
    /// marking threshold, RFC 3168 §5), or a loss where the RTT could not time this flow's
    /// queue (the loop through the sender untimed, or its rise set aside as the other
    /// direction's queue). See `judged_capacity` for why each counts.
    pub fn shows_full(&self) -> bool {
        let standing = self.queue.as_ref().is_some_and(|q| q.standing > 0);
        let queue_unseen = self.sender_loop_untimed || self.queue_other_way.is_some();
        (self.lost_segments() > 0 && queue_unseen) || self.ecn.congestion() || standing || self.queue_shows()
    }

    /// Whether this member of a group of flows sharing a path shows that path full, the
    /// group delivering `shared_rate` in all: a sign of its own ([`Self::shows_full`]), or
    /// its packet spacing at the group's rate (the link's serialisation of back-to-back
    /// packets, as for one flow in `judged_capacity`) where the clock resolves one segment's
    /// gap at that rate (ten ticks). At the group's rate both ways: spacing far above what
    /// the group delivered says the path had room (census 5656: a member's ACKs at 95.3
    /// Mbit/s beside the group's 1.84 Mbit/s, two flows held by their windows behind a 50
    /// Mbit/s shaper). Not the spacing of a window-held member whose windows came in
    /// clusters the clock did not time inside: that is the window's pace.
    pub fn shows_shared_path_full(&self, shared_rate: f64) -> bool {
        let resolved = self.mss as f64 / shared_rate.max(1e-9) >= crate::time::MIN_SPAN_QUANTA as f64 * self.quantum_s;
        let paced = self.window_held
            && self.windowed(&self.ack_spacing)
            && self.arrival_spacing.as_ref().is_none_or(|d| self.windowed(d));
        let spacing = self.spacing_rate();
        let full = super::capacity::AT_CAPACITY;
        let at_rate = spacing >= full * shared_rate && shared_rate >= full * spacing;
        self.shows_full() || (resolved && !paced && at_rate)
    }

    /// The RTT rose above the base enough to show a queue, a sign the pipe was full: the
    /// steady bins' least prompt RTT (no delayed-ACK timer in it) above the base by the
    /// queue sign, and by more than two ticks of the clock (an RTT sample is the difference
    /// of two stamps each cut to a tick, so it and the base can differ by two ticks with no
    /// queue at all); and the median RTT the summary prints, too, so that a sentence that
    /// says the RTT rose shows it.
    pub fn queue_shows(&self) -> bool {
        queue_shows(
            self.base_rtt_s,
            self.prompt_queueing_s,
            self.queueing_s(),
            self.quantum_s,
        )
    }

    /// The receiving application fell behind for most of the steady transfer (see
    /// [`Facts::reader_behind_share`]).
    pub fn reader_behind(&self) -> bool {
        self.reader_behind_share >= super::queue::MOST
    }

    /// The largest window the sender kept to: as it read the windows.
    pub fn sender_rwnd(&self) -> Option<u64> {
        self.obeyed_rwnd.or(self.max_rwnd)
    }

    /// What the receiver's largest window allowed the sender: rwnd / base RTT (B/s).
    pub fn window_bound(&self) -> Option<f64> {
        self.sender_rwnd()
            .filter(|_| self.base_rtt_s > 0.0)
            .map(|w| w as f64 / self.base_rtt_s)
    }

    /// Data ran the other way between the same hosts at the same time: this flow's ACKs
    /// (and, at its receiver, everything it sends) wait behind that data in the other
    /// direction's queue, so its round trip rises with that queue as well as its own
    /// (Zhang, Shenker & Clark, SIGCOMM 1991: two-way traffic). A queue in its RTT then does
    /// not say that this direction's bottleneck was full: the standing queue, its delivery
    /// and the rise of the prompt RTT are set aside, and the verdict and the capacity rest
    /// on the flow's delivery, its losses and its packet spacing. The rise is kept for the
    /// note that says so.
    pub fn queue_other_way(&mut self) {
        let rise = self
            .queue
            .as_ref()
            .filter(|q| q.standing > 0)
            .map(|q| q.delay_s)
            .or(self.prompt_queueing_s)
            .filter(|&d| d >= queue_sign_s(self.base_rtt_s));
        self.queue = None;
        self.prompt_queueing_s = None;
        self.estimate.without_queue();
        if self.capacity.is_some_and(|c| c.method == Method::QueueDeliveryRate) {
            self.capacity = super::capacity::choose(&self.estimate, self.goodput, None);
            self.bdp = self.capacity.map(|c| self.bdp_at(c.rate));
        }
        self.queue_other_way = rise.or(self.queue_other_way);
    }

    /// A standing queue most of the steady transfer.
    pub fn standing_queue(&self) -> Option<&StandingQueue> {
        self.queue.as_ref().filter(|q| q.most_of_the_time())
    }

    /// Bytes that sat in the standing queue (Little's law: delay x rate).
    pub fn queued_bytes(&self) -> Option<f64> {
        let q = self.standing_queue()?;
        // A FIFO holds each sender's packets for the same wait: the flow's own bytes in it
        // are its rate through it times that wait (Little's law), the share a shared link
        // left it where there was one.
        Some(q.delay_s * self.available().or(self.capacity.map(|c| c.rate))?)
    }

    /// What a link shared with traffic the capture does not show left this flow (bytes/s):
    /// the rate the flow is judged against, the capacity being the link's
    /// ([`super::capacity::Estimate::link_shared`]).
    pub fn available(&self) -> Option<f64> {
        let c = self.capacity?;
        self.estimate.available(self.goodput, c.rate)
    }

    /// The traffic the capture does not show on a shared link (bytes/s): the link's rate
    /// less what it left this flow.
    pub fn unseen_traffic(&self) -> Option<f64> {
        Some(self.capacity?.rate - self.available()?).filter(|&r| r > 0.0)
    }

    /// The outages of the flow (data outstanding, nothing acknowledged for longer than a
    /// retransmission timer; or long enough for the sender's timer to expire twice in a
    /// row, its back-off: nothing got through), as capture time spans.
    pub fn outages(&self) -> Vec<(crate::time::Timestamp, crate::time::Timestamp)> {
        use crate::time::Timestamp;
        self.stalls
            .iter()
            .filter(|s| matches!(s.kind, StallKind::Outage | StallKind::Lost | StallKind::RtoBackoff))
            .map(|s| (Timestamp::from_secs_f64(s.start), Timestamp::from_secs_f64(s.end)))
            .collect()
    }

    pub fn stall(&self, kind: StallKind) -> Option<&Stall> {
        self.stalls.iter().find(|s| s.kind == kind)
    }

    /// The capacity the figures are judged against, with whether it is a lower bound.
    pub fn capacity_rate(&self) -> Option<(f64, bool)> {
        self.capacity.map(|c| (c.rate, self.lower_bound))
    }

    /// Whether the figure is the user's.
    pub fn given(&self) -> bool {
        self.capacity.is_some_and(|c| c.method == Method::LinkRate)
    }
}

/// ECN of the bulk direction, for the writers.
#[derive(Clone, Copy, Debug, Default)]
pub struct EcnFacts {
    pub mode: EcnMode,
    /// Segments of the direction (the share's denominator).
    pub segments: u64,
    pub ce: Events,
    pub ece: Events,
    pub cwr: Events,
    /// The connection's first segment: times are said from it.
    pub origin: Option<Timestamp>,
}

impl EcnFacts {
    pub fn of(conn: &Connection, d: Dir) -> EcnFacts {
        let e = &conn.dir(d).ecn;
        EcnFacts {
            mode: conn.handshake.ecn(),
            segments: conn.packets[d.index()],
            ce: e.ce,
            ece: e.ece,
            cwr: e.cwr,
            origin: Some(conn.first_ts),
        }
    }

    /// ECE and CWR are RFC 3168's signals here (not AccECN's counter, nor noise on a
    /// connection that turned ECN off).
    pub fn flags_signal(&self) -> bool {
        flags_signal(self.mode)
    }

    /// A queue on the path marked this direction's segments: CE seen here, or echoed by
    /// its receiver.
    pub fn congestion(&self) -> bool {
        self.ce.count > 0 || (self.flags_signal() && self.ece.count > 0)
    }

    /// The window reductions the sender signalled.
    pub fn reductions(&self) -> u64 {
        if self.flags_signal() {
            self.cwr.count
        } else {
            0
        }
    }
}

/// Facts plus the classification, for the writers.
pub struct Findings<'a> {
    pub facts: &'a Facts,
    pub class: &'a Classification,
}
