//! The bottleneck rate of a flow's path, in payload bytes per second, and how it was found.
//!
//! Three measurements, each with its own blind spot:
//! - delivery (bytes acknowledged per several RTTs while the sender was busy): exact when the
//!   pipe was full, else a lower bound (BBR's BtlBw, draft-cardwell-iccrg-bbr §4.5.2);
//! - ACK dispersion (the spacing the bottleneck gave back-to-back segments, kept by their
//!   ACKs: Keshav's packet pair; Dovrolis et al., IEEE/ACM ToN 2004): needs no full pipe,
//!   but shows the narrowest *link's* rate, which a token-bucket shaper or policer sustains
//!   only for a bucket's worth (Kanuparthy & Dovrolis, "ShaperProbe", IMC 2011), and which a
//!   host that stamps packets in batches makes look faster still (Prasad, Jain & Dovrolis,
//!   "Effects of interrupt coalescence on network measurements", PAM 2004);
//! - data-arrival dispersion, the same seen past the bottleneck.
//!
//! The laws the estimate keeps: it is never below its goodput, nor (without a standing
//! queue) below the delivery the flow achieved over its rounds — busy or not (app-limited
//! windows raise it, never lower it), or during a loss episode; its spacing samples never come from gaps the timestamps cannot resolve (they
//! span ten quanta, [`crate::time::Quantum`]); and when a standing queue shows the link was full
//! ([`super::queue`]), the delivery while it stood *is* the rate the path sustains — a
//! spacing estimate above it is the link's burst rate, set aside and said so.

use super::delivery::{self, Interval};
use super::dispersion::Dispersion;
use super::policer::Shown;
use super::queue::StandingQueue;
use super::receiver_clock::ReceiverClock;
use super::timeline::Timeline;
use crate::time::Span;
use crate::units::rate;

/// Delivery within 15% of the capacity counts as at capacity: header overhead, ACK
/// timing and the estimate's own error are all inside that margin (the bottleneck rule's
/// threshold; here too, since a spacing estimate that much above a standing queue's
/// delivery is a burst rate).
pub const AT_CAPACITY: f64 = 0.85;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capacity {
    /// Payload bytes per second.
    pub rate: f64,
    pub method: Method,
}

impl Capacity {
    /// The figure, never below `floor` (what the flow was seen to deliver): raised within
    /// the estimate's own error ([`AT_CAPACITY`]) it is the same rate measured two ways and
    /// still says how it was found; raised further, the delivery stands instead.
    pub fn raised_to(self, floor: f64) -> Capacity {
        if self.rate >= floor {
            self
        } else if self.rate >= floor * AT_CAPACITY {
            Capacity { rate: floor, ..self }
        } else {
            Capacity {
                rate: floor,
                method: Method::DeliveryRate,
            }
        }
    }
}

/// A gap of up to this many serialization times at a shared link's rate is the flow's own
/// packet and the few others a FIFO served between two of its waiting packets (see
/// [`estimate`]): one of its own and three others', a quarter of the link.
const INTERLEAVED_PACKETS: f64 = 4.0;

/// The words of a spacing estimate set aside for a standing queue's delivery (see
/// [`Estimate::without_queue`]).
const QUEUE_SUSTAINED: &str = "while a queue stood the path sustained";

/// How the bottleneck rate was found: the summary's vocabulary.
pub use crate::summary::CapacityMethod as Method;

impl Method {
    /// Whether the figure is the flow's own delivery (a lower bound unless the pipe was
    /// shown full).
    pub fn is_delivery(self) -> bool {
        matches!(self, Method::DeliveryRate)
    }
}

/// Per-segment overhead on the wire beyond the payload: Ethernet (14) + IPv4 (20) + TCP
/// (20) + timestamps (12). Used only to turn a user's link rate into a payload rate.
const WIRE_OVERHEAD: f64 = 66.0;

/// Delivery rates are measured over this many base RTTs: over one round, ACKs that
/// bunched up behind a queue comparable to the BDP can report more than the bottleneck
/// carries; over several, only a pipe that stayed full reaches its rate.
pub const DELIVERY_ROUNDS: i64 = 4;

/// The window delivery rates are measured over (at least two bins of the timeline).
pub fn delivery_window(base_rtt: Span, bin: Span) -> Span {
    Span((base_rtt.nanos() * DELIVERY_ROUNDS).max(2 * bin.nanos()))
}

pub struct Input<'a> {
    pub tl: &'a Timeline,
    pub dispersion: &'a Dispersion,
    /// The ACK spacing of data that queued at the bottleneck behind the data before it,
    /// where the capture point is before the bottleneck (at the sender).
    pub queued: Option<&'a Dispersion>,
    /// Data-arrival dispersion, only where the capture point is past the bottleneck.
    pub arrivals: Option<&'a Dispersion>,
    pub base_rtt: Span,
    /// The round trip of a full data segment: the base RTT and the serialisation a
    /// handshake's round trip lacks (delivery windows span rounds of it).
    pub data_round: Span,
    pub mss: u32,
    pub link_rate_bps: Option<f64>,
    /// The rate the receive window allowed (max rwnd / base RTT) when the flow delivered at
    /// it: the receiver's ACKs then clock the sender, and their spacing shows the window's
    /// pace rather than the path's.
    pub window_rate: Option<f64>,
    pub queue: Option<&'a StandingQueue>,
    /// The flow's goodput (bytes/s): the estimate is never below it.
    pub goodput: f64,
    /// The median RTT: with a standing queue a round trip is that long, and delivery is
    /// measured over rounds as they were.
    pub median_rtt: Option<Span>,
    /// The prompt RTT rose above the base by the queue sign over the steady transfer
    /// ([`super::facts::queue_shows`]): the flow's flight sat in a queue.
    pub rtt_rose: bool,
    /// The receiver's window held the sender (its ACK spacing is the window's pace,
    /// judged by the window rules).
    pub window_held: bool,
    /// The other direction carried a bulk transfer at the same time: this direction's ACKs
    /// queued behind its data and arrive compressed (Zhang, Shenker & Clark, "Observations
    /// on the dynamics of a congestion control algorithm: the effects of two-way traffic",
    /// SIGCOMM 1991), so their spacing is not the path's.
    pub two_way: bool,
    /// ACK dispersion on the receiver's clock ([`super::receiver_clock`]), bytes/s: taken
    /// where two-way traffic sets the capture's ACK spacing aside.
    pub receiver_clock: Option<f64>,
    /// The ACKs on the receiver's clock, to tell whether the ACK spacing's mode was
    /// compressed on the way back ([`ReceiverClock::sent_pace`]).
    pub stamps: Option<&'a ReceiverClock>,
    /// A token-bucket policer its losses showed ([`super::policer`]).
    pub policer: Option<super::policer::Policer>,
    /// The rate the survivors of the flow's drops passed at, steady and with no queue
    /// before the losses ([`super::policer::from_pace`]): a policer when below the line
    /// rate the packet spacing shows.
    pub paced_policer: Option<super::policer::Policer>,
    /// A token bucket the rounds' arrivals showed past it ([`super::bucket_rounds`]): a
    /// run at the line, then the rate.
    pub bucket_rounds: Option<super::policer::Policer>,
    /// The largest flight of a flow that lost a burst random loss does not make
    /// ([`super::burst_loss`]): the rounds' bucket stands only beside one.
    pub burst_loss_flight: Option<u64>,
    /// The highest delivery (bytes/s) reported during one of the direction's loss or ECN
    /// episodes of at least a round trip ([`crate::stall`]), timed to the packet where the timeline's
    /// windows are as wide as two of its bins (on a long flow, seconds).
    pub loss_delivery: Option<f64>,
    /// The largest delivery-rate sample over a round trip or more ([`super::rate_sample`]),
    /// bytes/s: a floor as `app_limited` is.
    pub round_trip: Option<f64>,
    /// The share of the direction's data segments the path reordered (`reordered_segments`
    /// in the summary): an element that lets packets overtake delays each by its own amount.
    pub reordered_share: f64,
}

/// Everything the estimate considered.
#[derive(Clone, Debug, Default)]
pub struct Estimate {
    pub capacity: Option<Capacity>,
    /// Delivery over several RTTs while busy (90th percentile), bytes/s.
    pub delivered: Option<f64>,
    /// The same over every window whatever the sender did (app-limited samples,
    /// [`delivery::app_limited_rate`]), bytes/s: it raises the estimate, never lowers it,
    /// and proves no full pipe.
    pub app_limited: Option<f64>,
    /// The delivery during a loss episode ([`Input::loss_delivery`]), bytes/s: a floor as
    /// `app_limited` is.
    pub loss_delivery: Option<f64>,
    /// The largest delivery-rate sample over a round trip ([`Input::round_trip`]), bytes/s:
    /// a floor as `app_limited` is.
    pub round_trip: Option<f64>,
    /// ACK dispersion (bytes/s), after the window-pace choice.
    pub dispersed: Option<f64>,
    /// Data-arrival dispersion (bytes/s).
    pub arrived: Option<f64>,
    /// What the receiver's stamps showed (bytes/s), and whether the ACKs came back
    /// compressed ([`Estimate::two_way`]): then it stands in for the ACK dispersion
    /// ([`Estimate::receiver_clocked`]).
    pub stamped: Option<f64>,
    pub acks_compressed: bool,
    /// Delivery while a standing queue stood (bytes/s).
    pub queued: Option<f64>,
    /// The policer its losses showed: rate (bytes/s) and bucket depth (bytes).
    pub policer: Option<super::policer::Policer>,
    /// Beside a token bucket its rounds showed: the sender's largest flight when it lost a
    /// burst at once, and the line's pipe (the spacing's rate x the base RTT) it stayed
    /// below (bytes).
    pub burst_below_pipe: Option<(u64, f64)>,
    /// The share of the data the path reordered, where it was enough to set the spacing
    /// aside ([`Estimate::reordered`]): an element that delayed each packet by its own
    /// amount, which raises the RTT with no queue.
    pub reordered: Option<f64>,
    /// `delivered`, `queued` and `app_limited` with each window measured over its length
    /// alone, kept for when two-way traffic is found only across connections
    /// ([`Estimate::unclock`]); `None` when they already are.
    pub by_length: Option<(Option<f64>, Option<f64>, Option<f64>)>,
    /// Why an estimate was not taken.
    pub set_aside: Vec<String>,
    /// The ACK dispersion the receiver's stamps showed compressed ([`Self::compressed_acks`])
    /// and where its note is in `set_aside`: two-way traffic found later names the cause.
    pub stamps_set_aside: Option<(f64, usize)>,
    /// The capacity is a spacing estimate of a link the flow shared with traffic the
    /// capture does not show: a queue stood most of the time while the flow delivered well
    /// below that spacing ([`Estimate::available`] is what the link left it).
    pub link_shared: bool,
}

/// The estimate: with a standing queue most of the time, the delivery while it stood;
/// otherwise the largest of delivery and the spacing estimates; never below what was
/// delivered. A user's link rate overrides them — unless the flow delivered more than it.
pub fn estimate(inp: &Input<'_>) -> Estimate {
    // While a queue stood, a round took the inflated RTT: windows of a few base RTTs hold
    // only a few ACKs then, and the percentile reads the ACKs' granularity, not the rate.
    // Delivery is measured over rounds as they were.
    let standing = inp.queue.filter(|q| q.most_of_the_time());
    let round = match standing {
        Some(_) => inp.data_round.max(inp.median_rtt.unwrap_or(inp.data_round)),
        None => inp.data_round,
    };
    let window = delivery_window(round, inp.tl.width);
    // With data flowing the other way, the ACKs' instants are the reverse queue's, as
    // their spacing is (below): no ACK interval bounds a window then (delivery.rs).
    let interval = ack_interval(inp.two_way);
    let delivered = delivery::max_rate(inp.tl, window, interval);
    let app_limited = delivery::app_limited_rate(inp.tl, window, interval);
    let queue_window = window;
    // The receiver's window paced the sender: at rwnd per round trip, or held by a reader
    // that fell behind (its window opening as it read) with no queue in its round trips.
    // Where the flight raised the RTT it sat in the bottleneck's queue, and the strongest
    // spacing is the queue's drain, the path's own (PcapPlusPlus sll.pcap: a window-held
    // download whose RTT rose 18 ms; its arrivals' 15.0 Mbit/s, not a faster ACK mode).
    let window_paced = inp.window_rate.is_some() || (inp.window_held && !inp.rtt_rose);
    let dispersed = match (inp.dispersion.capacity(), window_paced) {
        // The strongest spacing may be the window's own pace (it is never faster than the
        // path): segments that did queue at the bottleneck (the initial window, bursts
        // after a window update) leave a separate, faster mode, and that one is the path's.
        //
        // A window-held sender's data crosses an idle link (its window's worth is less than
        // the path holds), and the ACKs of data sent apart come back as far apart: their
        // gaps are the sender's ACK clock, rates the path at least has. Only the gaps of data
        // that did queue behind the data before it are the bottleneck's (Keshav's pair
        // assumption; Dovrolis et al. 2004 §II), and where the stamps tell them apart (at
        // the sender) their mode stands when faster (R26 rcvbuf_16k at the sender: ACKs of
        // pairs sent a millisecond apart read 21.8 Mbit/s on a 140 Mbit/s link, whose
        // spacing the ACKs of a pair's second segment showed: 116 Mbit/s).
        (Some(mode), true) => {
            let fastest = inp
                .dispersion
                .modes()
                .into_iter()
                .filter(|&r| r > mode)
                .last()
                .unwrap_or(mode);
            let queued = inp.queued.and_then(|q| q.capacity()).filter(|&q| q > fastest);
            Some(queued.unwrap_or(fastest))
        }
        (mode, _) => mode,
    };
    let arrived = inp.arrivals.and_then(|a| a.capacity());
    let queued = standing.and_then(|q| delivery::rate_where(inp.tl, &q.bins, queue_window, interval));
    let by_length = (interval != Interval::Length).then(|| {
        (
            delivery::max_rate(inp.tl, window, Interval::Length),
            standing.and_then(|q| delivery::rate_where(inp.tl, &q.bins, queue_window, Interval::Length)),
            delivery::app_limited_rate(inp.tl, window, Interval::Length),
        )
    });
    let mut out = Estimate {
        capacity: None,
        delivered,
        app_limited,
        loss_delivery: inp.loss_delivery,
        round_trip: inp.round_trip,
        dispersed,
        arrived,
        stamped: inp.receiver_clock,
        acks_compressed: false,
        burst_below_pipe: None,
        reordered: None,
        queued,
        policer: inp.policer,
        by_length,
        set_aside: Vec::new(),
        stamps_set_aside: None,
        link_shared: false,
    };
    if inp.two_way {
        out.two_way(TWO_WAY_WITHIN);
    }
    // The ACKs that made the spacing's mode, sent by the receiver slower than they came:
    // compressed on the way back, whatever compressed them.
    if let (Some(d), Some(stamps)) = (out.dispersed, inp.stamps) {
        if let Some(p) = stamps.sent_pace(d * AT_CAPACITY).filter(|&p| p < d * AT_CAPACITY) {
            out.compressed_acks(d, p);
        }
    }
    // Before any choice (the standing queue's returns early, and the choice is made again
    // when two-way traffic is found across connections): arrivals a holding element
    // compressed are no estimate at all.
    if inp
        .arrivals
        .is_some_and(|a| a.batched_share() >= super::dispersion::MODE_SHARE)
    {
        out.compressed_arrivals();
    }
    // And ACKs a holding element compressed, where the ACKs show one at work (a mode's
    // share of them came in batches): without batches the two trains sample different
    // stretches (a sparse flow's few arrivals against its ACKs), and neither is suspect.
    if inp.dispersion.batched_share() >= super::dispersion::MODE_SHARE {
        out.acks_ahead_of_arrivals();
    }
    if inp.reordered_share >= super::dispersion::MODE_SHARE {
        out.reordered(inp.reordered_share);
    }
    // What the flow itself achieved: no estimate may be below it.
    let achieved = out.achieved(inp.goodput).max(queued.unwrap_or(0.0));
    if let Some(bps) = inp.link_rate_bps {
        let eff = inp.mss as f64 / (inp.mss as f64 + WIRE_OVERHEAD);
        let given = bps / 8.0 * eff;
        if achieved > given {
            out.set_aside.push(format!(
                "the given link rate ({} of payload) is below what the flow delivered ({}): the path is faster than given",
                rate(given),
                rate(achieved)
            ));
        } else {
            out.capacity = Some(Capacity {
                rate: given,
                method: Method::LinkRate,
            });
            return out;
        }
    }
    let spacing = [
        out.dispersed.map(|r| (r, Method::Dispersion, "ACK dispersion")),
        arrived.map(|r| (r, Method::ArrivalDispersion, "data-arrival dispersion")),
        out.receiver_clocked().map(|r| {
            (
                r,
                Method::ReceiverClockDispersion,
                "ACK dispersion on the receiver's clock",
            )
        }),
    ];
    if let Some(q) = queued {
        // The link was full while the queue stood. A spacing estimate that stands (no
        // batches, no compression on the way back: both set aside above) well above what
        // the flow delivered meanwhile is the link's own rate: segments that queued behind
        // each other left it one serialization time apart (Keshav's packet pair), and the
        // mode of their gaps is the link's however much else it carried (Dovrolis,
        // Ramanathan & Moore, IEEE/ACM ToN 2004: the mode of a pair's dispersion is the
        // capacity; a train's mean, the flow's share of it). A busy link whose rate is
        // above the flow's delivery carried other traffic for the rest: the capacity is
        // the link's (the BDP, RFC 6349 §3.3.1, is of the bottleneck link), and the flow is
        // judged against what the link left it ([`Estimate::available`]).
        //
        // A FIFO serves what other traffic brought meanwhile between two of the flow's
        // waiting packets, so on a shared link the flow's gaps are its own serialization
        // plus that of the packets served between (Dovrolis et al. §III: cross traffic
        // that interferes with a pair widens its dispersion by its transmission times), and
        // a flow that got a quarter of the link or more has at most three others between
        // two of its packets on average. Most of the time in longer silences is what an
        // element past the bottleneck gives, holding packets and releasing them at its own
        // faster rate (Dovrolis et al.'s post-narrow modes; a modem, a wireless hop's
        // aggregates), or bursts of other traffic: neither shows the link's rate as shared,
        // and the queue's delivery stands as the rate (below).
        let standing_spacing = [
            out.dispersed.map(|r| (r, Method::Dispersion, inp.dispersion)),
            out.arrived
                .zip(inp.arrivals)
                .map(|(r, d)| (r, Method::ArrivalDispersion, d)),
        ]
        .into_iter()
        .flatten()
        .max_by(|a, b| a.0.total_cmp(&b.0));
        let interleaved = |r: f64, d: &Dispersion| {
            d.time_share_at_least(r / INTERLEAVED_PACKETS)
                .is_some_and(|s| s >= super::queue::MOST)
        };
        if let Some((r, method, _)) =
            standing_spacing.filter(|&(r, _, d)| r * AT_CAPACITY > q.max(achieved) && interleaved(r, d))
        {
            out.link_shared = true;
            out.capacity = Some(Capacity { rate: r, method });
            return out;
        }
        // The link was full while the queue stood: what it delivered then is its rate.
        set_aside_above(&mut out.set_aside, &spacing, q, |name, r| {
            format!(
                "{name} showed {}, but {QUEUE_SUSTAINED} {} for this flow: the spacing is a rate the link reaches in bursts (a shaper's or policer's bucket, a host that stamps packets in batches) or shares with traffic this capture does not show, not what the path carried for it",
                rate(r),
                rate(q)
            )
        });
        out.capacity = Some(Capacity {
            rate: q.max(achieved),
            method: Method::QueueDeliveryRate,
        });
        return out;
    }
    // The element that dropped the flow's packets passed the survivors at its rate
    // (super::drop_pace); below the line the spacing shows (beyond the estimates' error) it
    // is not the link's queue but an element that enforces a rate by dropping.
    // (The spacing estimates that stand: arrivals an element compressed are none.)
    let line = [out.dispersed, out.arrived, out.receiver_clocked()]
        .into_iter()
        .flatten()
        .reduce(f64::max);
    // The survivors' pace between drops times the bucket empty: after it empties, packets
    // pass exactly as its tokens come, whatever the sender did before. The delivery
    // between the first and the last loss (Flach et al.'s reading, `find`) equals the rate
    // only while the sender kept the bucket empty; an ACK-clocked sender that idles
    // between bursts lets it refill to its depth and the tokens beyond it are lost, so
    // that delivery falls below the rate (P13 tbf_policer: 7.99 Mbit/s read under a
    // 20 Mbit/s policer, whose drop gaps read 19.0). The pace is taken where it shows.
    let paced = inp
        .paced_policer
        .filter(|p| line.is_some_and(|l| p.rate < l * AT_CAPACITY));
    // The bucket's test (Flach et al.) reads the rate from the delivery while the flow
    // lost; that rate passed the line, so it is never above it: above the line the losses
    // and the delivery between them are the link's (a 1 Mbit/s link read a 1.20 Mbit/s
    // policer from the few bins a 16 kB window left free), and below it by less than the
    // estimates' error they are the link's queue, as with the pace.
    let judged = inp.policer.filter(|p| line.is_none_or(|l| p.rate < l * AT_CAPACITY));
    // Rounds that came at the line for a run and then at a rate below it by the rounds'
    // own test (`bucket_rounds`), where no drops told the rate.
    // They stand only beside a drop that a FIFO at the line could not have made: a burst
    // (`burst_loss`: no random loss) lost while the flight was below the pipe at the line's rate (a drop-tail queue drops
    // only once the pipe and the queue are full). A FIFO's rounds come at one rate, but a
    // sender's spacing can slow a round's tail too (after a recovery that sent one segment
    // for two ACKs, behind a reader): a run at the line and a slower tail alone tell no
    // bucket (R-corpora loss_cubic and slow_reader at the client).
    // And a bucket passes no more than its rate and its depth over any time (Cruz 1991):
    // a tail slower than the flow's delivery over a few round trips is the sender's or the
    // reader's pace, not a bucket's (R14 rcvbuf_512k: tails at 1.98 Mbit/s in a flow
    // delivering 11.4 over 4 RTTs behind a 36 Mbit/s FIFO).
    let rounds = inp.bucket_rounds.filter(|p| {
        out.delivered.is_none_or(|d| p.rate >= d * AT_CAPACITY)
            && line.is_some_and(|l| {
                p.rate < l * AT_CAPACITY
                    && inp
                        .burst_loss_flight
                        .is_some_and(|f| (f as f64) < l * inp.base_rtt.secs_f64())
            })
    });
    let policer = paced.or(judged).or(rounds);
    out.policer = policer;
    if let (Some(p), Some(l), Some(f)) = (policer, line, inp.burst_loss_flight) {
        if matches!(p.shown, Shown::Rounds { .. }) {
            out.burst_below_pipe = Some((f, l * inp.base_rtt.secs_f64()));
        }
    }
    if let Some(p) = policer {
        // A policer passes the line rate for a bucket's worth and drops the rest: the
        // spacing shows the line, the delivery while it dropped the rate it enforced.
        set_aside_above(&mut out.set_aside, &spacing, p.rate, |name, r| {
            match p.shown {
            Shown::Fill => format!(
                "{name} showed {}, but the flow lost packets whenever it ran ahead of {} (a token-bucket policer): the spacing is the line rate behind the bucket, not what the path carries",
                rate(r),
                rate(p.rate)
            ),
            Shown::Rounds { rounds: n, acks } => format!(
                "{name} showed {}, but {BY_ROUNDS} ({n} of them) {} came at that spacing for a run and then at {} (the median of the rounds' tails): a token bucket passes its depth at the line rate and then only as its tokens come (Flach et al., SIGCOMM 2016), and the spacing is the line behind it, not what the path sustains",
                rate(r),
                if acks { "the ACKs (reporting the data as it arrived)" } else { "the data" },
                rate(p.rate)
            ),
            Shown::DropGaps(n) => format!(
                "{name} showed {}, but the packets that survived the flow's drops passed at {} (the median of {n} gaps between drops, with no queue building before them): the element that dropped them enforces that rate (a token-bucket policer), and the spacing is the line rate behind its bucket, not what the path carries",
                rate(r),
                rate(p.rate)
            ),
        }
        });
        // The rate it sustains, not the bursts its bucket let through over a few RTTs
        // (the law allows those: depth / window above the rate).
        out.capacity = Some(Capacity {
            rate: p.rate.max(inp.goodput),
            method: Method::PolicedRate,
        });
        return out;
    }
    if let Some(d) = out.delivered.filter(|_| inp.rtt_rose && !inp.window_held) {
        // Trains that came mostly in batches were sampled across them (super::train), but
        // the batches' own cadence can be bunched too (a host's polls, ACKs bunched on the
        // way back): such spacing stands only if the flow's own queue agrees with it. A
        // flight that sat in a queue at RTT r drained at flight / r, the flow's delivery
        // while busy (Little's law); a spacing estimate well above it is one at which the
        // flight could not have raised the RTT, and the estimate falls back to the
        // delivery. (Traffic the capture does not show raises the RTT too; then the
        // delivery is what the path left this flow, as with a standing queue above.)
        //
        // Two readings refute a spacing estimate: most of its packets came in batches, or
        // the other spacing estimate agrees with the delivery (a receiver's ACKs mirror the
        // data's arrivals: the two see the same packets, and where one of them matches what
        // the flight drained at, the other one's faster spacing was made after the
        // bottleneck — a link or host that holds packets and releases them at once). With
        // traffic the capture does not show, both spacings read the link and stand.
        let spacing = [out.dispersed, arrived];
        let batched = [
            inp.dispersion.mostly_batched(),
            inp.arrivals.is_some_and(|a| a.mostly_batched()),
        ];
        let names = ["ACK dispersion", "data-arrival dispersion"];
        let above = |r: Option<f64>| r.is_some_and(|r| r * AT_CAPACITY > d);
        let mut refuted = [false; 2];
        for i in 0..2 {
            let other = spacing[1 - i];
            let corroborated = other.is_some() && !above(other);
            if !above(spacing[i]) || !(batched[i] || corroborated) {
                continue;
            }
            refuted[i] = true;
            let r = spacing[i].unwrap_or_default();
            let why = if batched[i] {
                "most of its packets came in batches (less than 10 µs apart: the spacing a host gives)".to_string()
            } else {
                format!(
                    "{} showed {}, as the delivery does,",
                    names[1 - i],
                    rate(other.unwrap_or_default())
                )
            };
            out.set_aside.push(format!(
                "{} showed {}, but {why} and the RTT rose as the flight queued; a flight that sat in a queue drained at the flow's delivery, {} (Little's law): at the spacing's rate the flight could not have raised the RTT, so the spacing is not the path's",
                names[i],
                rate(r),
                rate(d)
            ));
        }
        if refuted[0] {
            out.dispersed = None;
        }
        if refuted[1] {
            out.arrived = None;
        }
    }
    out.capacity = largest(&out, achieved);
    out
}

/// Why the ACKs came back compressed: the connection's own data the other way, or another
/// connection's between the same hosts.
pub const TWO_WAY_WITHIN: &str =
    "the other direction carried data at the same time: ACKs queue behind it and arrive compressed";
pub const TWO_WAY_ACROSS: &str =
    "a transfer between the same hosts ran the other way at the same time: these ACKs queued behind its data and arrived compressed";

/// How delivery windows are measured: over their ACK interval when longer (tcp_rate.c),
/// unless the ACKs queued behind data going the other way.
pub fn ack_interval(two_way: bool) -> Interval {
    if two_way {
        Interval::Length
    } else {
        Interval::AckClocked
    }
}

impl Estimate {
    /// Past the bottleneck the data's arrivals and the receiver's ACKs are the same packets
    /// timed twice: a receiver acknowledges at least every second full segment as it takes
    /// them in (RFC 5681 §4.2), so its ACKs carry the arrivals' spacing at the granularity
    /// its host handed them over — across the batches an interrupt, a poll or an element
    /// that held packets delivered (Prasad, Jain & Dovrolis, PAM 2004). Data arriving far
    /// faster than those ACKs acknowledge it (by more than the estimates' own error,
    /// [`AT_CAPACITY`]), where the arrivals show such an element at work (a mode's share of
    /// their bytes, [`super::dispersion::MODE_SHARE`], came in batches), was spaced after the
    /// bottleneck: an element between it and the capture held packets and released them
    /// together, which only compresses spacing (Dovrolis et al., ToN 2004: post-narrow modes
    /// lie above the capacity). The arrival spacing is set aside; the ACKs' stands. (A
    /// userspace delay line at 60-80 Mbit/s released its backlog 7-14 µs apart: arrivals
    /// read 1.2-1.4 Gbit/s, the ACKs 56-77, the link 57-76.) Without batches the arrivals
    /// are no more suspect than the ACKs, which a sparse flow's delayed ACKs stretch.
    fn compressed_arrivals(&mut self) {
        // The receiver's ACKs as the capture timed them, or as its own stamps did where
        // the capture's ACK spacing was set aside (two-way traffic).
        let (Some(a), Some(d)) = (self.arrived, self.dispersed.or(self.receiver_clocked())) else {
            return;
        };
        if a * AT_CAPACITY <= d {
            return;
        }
        self.set_aside.push(format!(
            "data-arrival dispersion showed {}, but the receiver's ACKs, sent as it took the same data in, acknowledged it at {}: the data was spaced after the bottleneck (an element that held packets and released them together compresses spacing, never stretches it below the bottleneck's), so the arrival spacing is not the path's",
            rate(a),
            rate(d)
        ));
        self.arrived = None;
    }

    /// The converse of [`Self::compressed_arrivals`]: past the bottleneck a receiver
    /// acknowledges data only once it has arrived (RFC 9293 §3.10.7.4), so over the same
    /// packets its ACKs cannot report data faster than the data came. ACKs faster than the
    /// arrivals, beyond the estimates' own error ([`AT_CAPACITY`]), acknowledged data that
    /// arrived before their span: a batch the receiver's host took in and answered at once
    /// (Prasad, Jain & Dovrolis, PAM 2004), or a repaired hole's cumulative ACK reporting the
    /// data that had waited above it (RFC 5681 §3.2). The ACK spacing is set aside; the
    /// arrivals' stands (census 3030: at the receiver of a 30 Mbit/s link whose host batched
    /// every 159 µs, ACKs read 39.0 Mbit/s, the arrivals 28.4). Called where the ACKs came
    /// in batches, as [`Self::compressed_arrivals`] where the arrivals did.
    fn acks_ahead_of_arrivals(&mut self) {
        let (Some(a), Some(d)) = (self.arrived, self.dispersed) else {
            return;
        };
        if d * AT_CAPACITY <= a {
            return;
        }
        self.set_aside.push(format!(
            "ACK dispersion showed {}, but the data those ACKs acknowledged arrived at {}: a receiver acknowledges data only once it has arrived, so ACKs faster than the arrivals acknowledged data that came before them (a batch its host took in and answered at once, or a repaired hole's cumulative ACK), and their spacing is not the path's",
            rate(d),
            rate(a)
        ));
        self.dispersed = None;
    }

    /// The path reordered `share` of the data, as many as a separate mode of the spacing
    /// carries ([`super::dispersion::MODE_SHARE`]) or more: something between the bottleneck
    /// and the receiver delayed each packet by its own amount (it let packets overtake), and
    /// a packet pair keeps the bottleneck's spacing only through hops that keep its order
    /// and its gaps (Keshav, SIGCOMM 1991; Dovrolis, Ramanathan & Moore, ToN 2004 §II: the
    /// dispersion after the narrow link is changed by every later hop that delays packets
    /// unequally). The data's arrival spacing, the receiver's ACKs sent as it arrived, and
    /// their stamps all carry that element's spacing, not the link's: set aside, the
    /// delivery stands (P32 jitter_reorder at the client: frames delayed 0-5 ms after an 80
    /// Mbit/s link, 74% of them overtaken; the ACK spacing read 84.6 Mbit/s, above the
    /// link's payload rate, and the flow below it at 81%).
    fn reordered(&mut self, share: f64) {
        let spacing = [
            (self.dispersed.take(), "ACK dispersion"),
            (self.arrived.take(), "data-arrival dispersion"),
            (self.receiver_clocked(), "ACK dispersion on the receiver's clock"),
        ];
        self.stamped = None;
        self.reordered = Some(share);
        for (r, name) in spacing {
            if let Some(r) = r {
                self.set_aside.push(format!(
                    "{name} showed {}, but the path reordered {} of the data segments: an element after the bottleneck delayed each packet by its own amount, so the spacing is its, not the link's",
                    rate(r),
                    crate::units::pct(share)
                ));
            }
        }
    }

    /// The ACKs that came at the ACK spacing's mode `d` (within [`AT_CAPACITY`] of it, or
    /// faster) were sent by the receiver at `sent`, slower beyond the estimates' error, by
    /// its own clock: they were compressed on the way back (behind other packets in a
    /// queue, by a hop or a host that held them and passed them on together), and their
    /// spacing at the capture point is no rate of the path (Mogul, "Observing TCP dynamics
    /// in real networks", SIGCOMM 1992: ACK compression, told by the ACKs' spacing at the
    /// sender against the receiver's). As for two-way traffic, the receiver's stamps stand
    /// in for the capture's ACK spacing. (A jittery delay line on a 30 Mbit/s path, a
    /// lossy cwnd-limited flow at the sender: ACK dispersion 766 Mbit/s.)
    fn compressed_acks(&mut self, d: f64, sent: f64) {
        let stamps = match self.stamped {
            Some(r) => format!("; the receiver's clock shows the data arriving at {}", rate(r)),
            None => String::new(),
        };
        self.stamps_set_aside = Some((d, self.set_aside.len()));
        self.set_aside.push(format!(
            "ACK dispersion showed {}, but the receiver sent the ACKs that came at that pace at {} by its own clock (its TCP timestamps): they were compressed on the way back (Mogul 1992), so their spacing at the capture point says nothing of the path{stamps}",
            rate(d),
            rate(sent)
        ));
        self.dispersed = None;
        self.acks_compressed = true;
    }

    /// What a link shared with traffic the capture does not show left this flow
    /// ([`Estimate::link_shared`]), bytes/s: its delivery while the queue stood, never below
    /// what it was seen to deliver (`goodput` among it) nor above the link's `capacity`.
    pub fn available(&self, goodput: f64, capacity: f64) -> Option<f64> {
        let q = self.queued.filter(|_| self.link_shared)?;
        Some(q.max(self.achieved(goodput)).min(capacity))
    }

    /// The most the flow was seen to deliver over its delivery windows, busy or not, or over
    /// the connection (`goodput`): no capacity estimate may be below it (the path carried
    /// it).
    pub fn achieved(&self, goodput: f64) -> f64 {
        [self.delivered, self.app_limited, self.loss_delivery]
            .into_iter()
            .flatten()
            .fold(goodput, f64::max)
    }

    /// The largest delivery-rate sample over a round trip ([`super::rate_sample`]) where it
    /// is a delivery: not where the ACKs came back compressed (their phase is then shorter
    /// than the delivery took, and the longer send phase is the sender's pace, above the
    /// path's while its queue grew). A floor of a lower-bound figure only (one the flow
    /// never showed a full pipe for): where a queue or losses showed the pipe full, the
    /// delivery then is the rate the path sustains, and a token bucket (a shaper's, a
    /// policer's, a cable uplink's) passes its depth above that rate over a round trip
    /// (RFC 2697 §2; P12's 9 Mbit/s tbf showed 12.5 over one 28 ms round trip at the
    /// server, tcp-ethereal-trace-1's uplink 319 kbit/s over its first round trip beside
    /// 243 sustained under a standing queue).
    pub fn round_trip_floor(&self) -> Option<f64> {
        self.round_trip.filter(|_| !self.acks_compressed)
    }

    /// The ACKs came back compressed behind data going the other way (`why`): their
    /// spacing at the capture point is set aside, and the receiver's stamps stand in for it
    /// ([`super::receiver_clock`]). Whether the stamps gave an estimate.
    pub fn two_way(&mut self, why: &str) -> bool {
        let stamps = match self.stamped {
            Some(r) => format!(
                "; the receiver's own clock (its TCP timestamps) shows the data arriving at {}",
                rate(r)
            ),
            None => String::new(),
        };
        // The stamps may have shown the compression already: the two-way traffic is its
        // cause, and its note takes the place of theirs.
        let earlier = self.stamps_set_aside.take();
        if let Some(r) = self.dispersed.take().or(earlier.map(|(r, _)| r)) {
            let note = format!(
                "ACK dispersion showed {}, but {why} (ACK compression, Zhang, Shenker & Clark 1991), so their spacing at the capture point says nothing of the path{stamps}",
                rate(r)
            );
            match earlier {
                Some((_, i)) if i < self.set_aside.len() => self.set_aside[i] = note,
                _ => self.set_aside.push(note),
            }
        }
        self.acks_compressed = true;
        self.stamped.is_some()
    }

    /// The receiver's stamps' rate where it stands in for the ACK dispersion (bytes/s).
    pub fn receiver_clocked(&self) -> Option<f64> {
        self.stamped.filter(|_| self.acks_compressed)
    }

    /// Whether a delivery-rate capacity of `rate` is the busy windows' own figure (within
    /// [`AT_CAPACITY`]), not a floor well above it (the app-limited windows', a loss
    /// episode's or the goodput): only the busy windows can show a full pipe.
    pub fn measured_busy(&self, rate: f64) -> bool {
        // Within the estimate's own error of it, the floor is the same rate.
        self.delivered.is_some_and(|d| d >= rate * AT_CAPACITY)
    }

    /// The estimate as if no standing queue had been seen: its delivery gone, and the
    /// spacing estimates it set aside back in the running. For a flow whose round trip
    /// crossed another transfer's queue, which says nothing of this direction's link.
    pub fn without_queue(&mut self) {
        self.queued = None;
        self.link_shared = false;
        if let Some(b) = self.by_length.as_mut() {
            b.1 = None;
        }
        self.set_aside.retain(|s| !s.contains(QUEUE_SUSTAINED));
    }

    /// The delivery figures measured over the windows' lengths alone: the ACKs turned out
    /// to have queued behind another connection's data going the other way. Whether
    /// anything changed.
    pub fn unclock(&mut self) -> bool {
        match self.by_length.take() {
            Some((delivered, queued, app_limited)) => {
                let changed = (delivered, queued, app_limited) != (self.delivered, self.queued, self.app_limited);
                self.delivered = delivered;
                self.queued = queued;
                self.app_limited = app_limited;
                changed
            }
            None => false,
        }
    }
}

/// Each spacing estimate well above `sustained` (beyond the at-capacity margin) set aside,
/// with the sentence `why(name, rate)` gives.
fn set_aside_above(
    set_aside: &mut Vec<String>,
    spacing: &[Option<(f64, Method, &str)>],
    sustained: f64,
    why: impl Fn(&str, f64) -> String,
) {
    for &(r, _, name) in spacing.iter().flatten() {
        if r * AT_CAPACITY > sustained {
            set_aside.push(why(name, r));
        }
    }
}

/// The largest of the delivery and the spacing estimates; one below the delivery the flow
/// `achieved` is wrong by the law, and the delivery stands instead.
fn largest(e: &Estimate, achieved: f64) -> Option<Capacity> {
    // The floors are delivery too: with no busy window and no spacing, what the path was
    // seen to carry is the bound that can be given.
    let floor = [e.app_limited, e.loss_delivery].into_iter().flatten().reduce(f64::max);
    let best = [
        e.delivered.or(floor).map(|r| (r, Method::DeliveryRate)),
        e.dispersed.map(|r| (r, Method::Dispersion)),
        e.arrived.map(|r| (r, Method::ArrivalDispersion)),
        e.receiver_clocked().map(|r| (r, Method::ReceiverClockDispersion)),
    ]
    .into_iter()
    .flatten()
    .max_by(|a, b| a.0.total_cmp(&b.0))
    // With nothing else, the most delivered over a round trip is the bound that can be
    // given (a lower bound: it raises only such figures, `diagnose::classify_floored`).
    .or(e.round_trip_floor().map(|r| (r, Method::DeliveryRate)));
    best.map(|(rate, method)| Capacity { rate, method }.raised_to(achieved))
}

/// The laws of the capacity figure (on the summary): never below the goodput, nor below the
/// delivery estimate it was chosen beside; the BDP is that rate times the base RTT; a
/// lower bound says so in the notes.
pub fn law(f: &crate::summary::FlowSummary) -> Vec<String> {
    let mut out = Vec::new();
    let Some(b) = f.bottleneck_bps else { return out };
    // Half a percent: the figures are compared as written, not as computed.
    let tol = 1.005;
    if f.goodput_bps > b * tol {
        out.push(format!(
            "goodput {} bit/s above the capacity estimate {b}",
            f.goodput_bps
        ));
    }
    if let Some(c) = &f.capacity {
        // A policer's bucket passes its depth above the rate over the delivery window.
        let burst = match (c.policer_bucket_bytes, f.rtt_ms.min) {
            (Some(depth), Some(min)) if min > 0.0 => depth as f64 * 8.0 / (DELIVERY_ROUNDS as f64 * min / 1000.0),
            _ => 0.0,
        };
        // What the path carried over a round trip or more, however measured.
        let episodes = f
            .stalls
            .iter()
            .filter(|s| s.kind.is_congestion_episode() && s.direction == Some(f.bulk_direction))
            .map(|s| s.delivered_bps);
        for d in [c.delivery_bps, c.app_limited_delivery_bps].into_iter().chain(episodes) {
            if let Some(d) = d.filter(|&d| d > (b + burst) * tol && !c.given) {
                out.push(format!(
                    "the capacity {b} bit/s is below the delivery the flow achieved ({d})"
                ));
            }
        }
        // A rate carried over one round trip floors a lower bound; a rate the full pipe
        // sustained may be below it by a token bucket's depth ([`Estimate::round_trip_floor`]).
        let sustained = matches!(
            c.method,
            Method::QueueDeliveryRate | Method::PolicedRate | Method::LinkRate
        );
        if let Some(d) = c
            .round_trip_delivery_bps
            .filter(|&d| d > b * tol && !sustained && c.lower_bound)
        {
            out.push(format!(
                "the capacity {b} bit/s ({}) is below the {d} bit/s the flow delivered over one round trip",
                c.method
            ));
        }
        if Some(c.method) != f.bottleneck_method {
            out.push(format!("two methods: {} and {:?}", c.method, f.bottleneck_method));
        }
        let said = f.notes.iter().any(|n| n.contains("lower bound"));
        if c.lower_bound && !said && f.verdict != super::Label::Bottleneck {
            out.push("a lower-bound capacity not said to be one".into());
        }
    }
    if let (Some(bdp), Some(min)) = (f.bdp_bytes, f.rtt_ms.min) {
        // The base RTT, and a data segment's serialisation where the base is the
        // handshake's (`Facts::bdp_at`): never more than one segment's.
        let seg = f.bdp_segment_ms.unwrap_or(0.0);
        let want = b / 8.0 * (min + seg) / 1000.0;
        if (bdp as f64 - want).abs() > 1.0 + 0.002 * want {
            out.push(format!(
                "BDP {bdp} B is not {b} bit/s x ({min} + {seg}) ms = {want:.0} B"
            ));
        }
        // A full segment is at most the MSS a SYN announced (RFC 9293 §3.7.1), or 1460
        // bytes without one (the tracker's default, `Connection::mss`).
        let hs = &f.handshake;
        let mss = hs.client_mss.max(hs.server_mss).map_or(1460.0, f64::from);
        if b / 8.0 * seg / 1000.0 > mss * 1.002 + 1.0 {
            out.push(format!(
                "the BDP adds {seg} ms, more than one {mss} B segment at {b} bit/s"
            ));
        }
        // No zero printed for a BDP that is not (`super::whole_bytes`).
        if bdp == 0 && want > 0.0 {
            out.push(format!("BDP 0 B for {b} bit/s x {min} ms = {want} B"));
        }
    }
    out
}

/// The capacity chosen again from an estimate whose candidates changed (one was set aside
/// afterwards): the largest remaining, never below what was achieved; a user's figure or a
/// standing queue's delivery stays as it was.
/// What a spacing estimate set aside for a token bucket's rounds says (to take it back
/// where the rounds turn out to be a shared link's: `diagnose::share_path`).
pub const BY_ROUNDS: &str = "round after round";

/// What every spacing estimate set aside for a token bucket says (to take it back where
/// the flow's own delivery refutes the bucket: `diagnose::classify_floored`).
pub const BEHIND_BUCKET: &str = "the spacing is the line";

impl Estimate {
    /// The policer found is none (the flow delivered beyond its rate, or its rounds were a
    /// shared link's): its finding and the spacing it set aside go, and the capacity is
    /// chosen again from the estimates that stand.
    pub fn refute_policer(&mut self, goodput: f64) -> Option<Capacity> {
        self.policer = None;
        self.burst_below_pipe = None;
        self.set_aside.retain(|s| !s.contains(BEHIND_BUCKET));
        largest(self, self.achieved(goodput))
    }
}

pub fn choose(e: &Estimate, goodput: f64, was: Option<Capacity>) -> Option<Capacity> {
    let achieved = e.achieved(goodput);
    match was {
        Some(c) if matches!(c.method, Method::LinkRate | Method::PolicedRate) => Some(c),
        // The queue's delivery may have been measured again ([`Estimate::unclock`]).
        Some(c) if c.method == Method::QueueDeliveryRate => Some(Capacity {
            rate: e.queued.unwrap_or(c.rate).max(achieved),
            ..c
        }),
        _ => largest(e, achieved),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Timestamp;

    fn busy_timeline(bytes_per_ms: u64) -> Timeline {
        let t0 = Timestamp(1_000_000_000);
        let mut tl = Timeline::new(t0);
        for i in 0..4000 {
            let b = tl.bin(t0 + Span::from_millis(i));
            b.busy_ns += 1_000_000;
            b.delivered += bytes_per_ms;
        }
        tl
    }

    fn dispersion_at(bytes_per_s: f64) -> Dispersion {
        let mut d = Dispersion::default();
        for _ in 0..200 {
            d.add(2896, Span::from_nanos((2896.0 / bytes_per_s * 1e9) as i64));
        }
        d
    }

    /// The input of a flow on a 20 ms path, MSS 1448, with nothing but its timeline,
    /// spacing and goodput.
    fn input<'a>(tl: &'a Timeline, d: &'a Dispersion, goodput: f64) -> Input<'a> {
        Input {
            tl,
            dispersion: d,
            queued: None,
            arrivals: None,
            base_rtt: Span::from_millis(20),
            data_round: Span::from_millis(20),
            mss: 1448,
            link_rate_bps: None,
            window_rate: None,
            queue: None,
            goodput,
            median_rtt: None,
            rtt_rose: false,
            window_held: false,
            two_way: false,
            receiver_clock: None,
            stamps: None,
            policer: None,
            paced_policer: None,
            bucket_rounds: None,
            burst_loss_flight: None,
            loss_delivery: None,
            round_trip: None,
            reordered_share: 0.0,
        }
    }

    /// A sender held by a reader that fell behind (R12 slow_reader at the sender): most of
    /// its ACKs come at the reader's pace, 190 kB/s; the bursts each window opening released
    /// queued at the 2.7 MB/s link and left a faster mode. With no queue in the round trips
    /// the faster mode is the path's; where the flight raised the RTT, the strongest mode is
    /// the queue's drain and stands; a flow the window did not hold keeps its strongest.
    #[test]
    fn a_window_held_flows_faster_spacing_mode_is_the_path() {
        let tl = busy_timeline(200);
        let mut d = Dispersion::default();
        for i in 0..80 {
            let rate = if i % 4 == 0 { 2.7e6 } else { 1.9e5 };
            d.add(2896, Span::from_nanos((2896.0 / rate * 1e9) as i64));
        }
        let rate = |inp: Input<'_>| estimate(&inp).dispersed.expect("a spacing estimate");
        let held = Input {
            window_held: true,
            ..input(&tl, &d, 1.8e5)
        };
        assert!((rate(held) / 2.7e6 - 1.0).abs() < 0.05);
        let queued = Input {
            window_held: true,
            rtt_rose: true,
            ..input(&tl, &d, 1.8e5)
        };
        assert!((rate(queued) / 1.9e5 - 1.0).abs() < 0.05);
        assert!((rate(input(&tl, &d, 1.8e5)) / 1.9e5 - 1.0).abs() < 0.05);
    }

    /// A path that reordered a tenth of the data or more re-spaced it after the bottleneck:
    /// the spacing (here 10.6 MB/s, above the flow's 8.6) is set aside with a reason and the
    /// delivery stands; less reordering leaves it.
    #[test]
    fn spacing_past_a_reordering_element_is_set_aside() {
        let tl = busy_timeline(2_000);
        let d = dispersion_at(10.6e6);
        let est = |share: f64| {
            estimate(&Input {
                reordered_share: share,
                ..input(&tl, &d, 8.6e6)
            })
        };
        let e = est(0.74);
        assert!(e.dispersed.is_none(), "{e:?}");
        assert!(
            e.set_aside.iter().any(|n| n.contains("reordered 74%")),
            "{:?}",
            e.set_aside
        );
        assert!(e.capacity.is_some_and(|c| c.rate < 10e6), "{e:?}");
        let e = est(0.02);
        assert!(e.dispersed.is_some_and(|r| (r / 10.6e6 - 1.0).abs() < 0.05), "{e:?}");
    }

    /// A window-held sender's ACKs all came at its ACK clock, 2.9 MB/s (R26 rcvbuf_16k at the
    /// sender); those of data that queued behind the data before it came at the link's
    /// 14.5 MB/s. Where the capture point tells them apart (at the sender), that spacing is
    /// the path's; a slower one never lowers the estimate, and a flow the window did not
    /// hold keeps its strongest mode.
    #[test]
    fn a_window_held_flows_queued_spacing_is_the_path() {
        let tl = busy_timeline(2_000);
        let all = dispersion_at(2.9e6);
        let link = dispersion_at(14.5e6);
        let slow = dispersion_at(1.0e6);
        let rate = |inp: Input<'_>| estimate(&inp).dispersed.expect("a spacing estimate");
        let held = |q| Input {
            window_held: true,
            queued: Some(q),
            ..input(&tl, &all, 2.0e6)
        };
        assert!((rate(held(&link)) / 14.5e6 - 1.0).abs() < 0.05);
        assert!((rate(held(&slow)) / 2.9e6 - 1.0).abs() < 0.05);
        let free = Input {
            queued: Some(&link),
            ..input(&tl, &all, 2.0e6)
        };
        assert!((rate(free) / 2.9e6 - 1.0).abs() < 0.05);
        let unknown = Input {
            window_held: true,
            ..input(&tl, &all, 2.0e6)
        };
        assert!((rate(unknown) / 2.9e6 - 1.0).abs() < 0.05);
    }

    #[test]
    fn survivors_of_drops_paced_below_the_line_are_a_policer_and_at_it_the_links_queue() {
        // A 100 Mbit/s line whose ACKs are spaced at the line; the flow delivered 2 MB/s.
        let tl = busy_timeline(2_000);
        let d = dispersion_at(12.0e6);
        let paced = |rate| super::super::policer::Policer {
            rate,
            depth: 25_000.0,
            shown: super::super::policer::Shown::DropGaps(9),
        };
        // Its drops' survivors passed at 1.8 MB/s: a policer at that rate (never below the
        // goodput).
        let mut inp = input(&tl, &d, 1.9e6);
        inp.paced_policer = Some(paced(1.8e6));
        let e = estimate(&inp);
        let c = e.capacity.expect("an estimate");
        assert_eq!((c.method, c.rate), (Method::PolicedRate, 1.9e6));
        assert!(
            e.set_aside.iter().any(|s| s.contains("survived the flow's drops")),
            "{:?}",
            e.set_aside
        );
        // The delivery between losses read less (a sender that idled between bursts let
        // the bucket overflow): the survivors' pace, which times the bucket empty, stands.
        inp.paced_policer = Some(paced(5.0e6));
        inp.policer = Some(super::super::policer::Policer {
            rate: 2.0e6,
            depth: 30_000.0,
            shown: super::super::policer::Shown::Fill,
        });
        let c = estimate(&inp).capacity.expect("an estimate");
        assert_eq!((c.method, c.rate), (Method::PolicedRate, 5.0e6));
        inp.policer = None;
        // At the line's rate, to within the estimates' error, the drops were the link's
        // queue overflowing: the spacing stands.
        inp.paced_policer = Some(paced(11.0e6));
        let c = estimate(&inp).capacity.expect("an estimate");
        assert_eq!(c.method, Method::Dispersion);
    }

    #[test]
    fn a_buckets_rounds_stand_beside_a_burst_lost_below_the_lines_pipe() {
        // A 100 Mbit/s line (12 MB/s of spacing) behind which rounds came at the line for a
        // run and then at 1.5 MB/s; the flow delivered 1.4 MB/s.
        let tl = busy_timeline(1_400);
        let d = dispersion_at(12.0e6);
        let mut inp = input(&tl, &d, 1.4e6);
        inp.bucket_rounds = Some(super::super::policer::Policer {
            rate: 1.5e6,
            depth: 20_000.0,
            shown: super::super::policer::Shown::Rounds {
                rounds: 40,
                acks: false,
            },
        });
        // No burst lost: a sender's slowed tails look alike (after a recovery, behind a
        // reader), and the spacing stands.
        let c = estimate(&inp).capacity.expect("an estimate");
        assert_eq!(c.method, Method::Dispersion);
        // A burst lost while the flight (100 kB) was far below the line's pipe: no FIFO at
        // the line dropped it, and the rounds' rate is what the path sustains.
        inp.burst_loss_flight = Some(100_000);
        let e = estimate(&inp);
        let c = e.capacity.expect("an estimate");
        assert_eq!((c.method, c.rate), (Method::PolicedRate, 1.5e6));
        assert!(
            e.set_aside.iter().any(|s| s.contains("round after round")),
            "{:?}",
            e.set_aside
        );
        // A flight that filled the line's pipe could have overflowed its queue.
        let pipe = 12.0e6 * inp.base_rtt.secs_f64();
        inp.burst_loss_flight = Some(pipe as u64 + 1);
        assert_eq!(estimate(&inp).capacity.unwrap().method, Method::Dispersion);
        inp.burst_loss_flight = Some(100_000);
        // Tails slower than what the flow delivered are no bucket's (it passes no more than
        // its rate and depth): the sender's or the reader's pace.
        inp.bucket_rounds = inp
            .bucket_rounds
            .map(|p| super::super::policer::Policer { rate: 0.4e6, ..p });
        let e = estimate(&inp);
        let d = e.delivered.expect("a delivery over round trips");
        assert!(d * AT_CAPACITY > 0.4e6, "{d}");
        assert_eq!(e.capacity.unwrap().method, Method::Dispersion);
    }

    #[test]
    fn a_refuted_policer_gives_back_the_spacing_it_set_aside() {
        let tl = busy_timeline(1_400);
        let d = dispersion_at(12.0e6);
        let mut inp = input(&tl, &d, 1.4e6);
        inp.paced_policer = Some(super::super::policer::Policer {
            rate: 1.5e6,
            depth: 20_000.0,
            shown: super::super::policer::Shown::DropGaps(9),
        });
        let mut e = estimate(&inp);
        assert_eq!(e.capacity.unwrap().method, Method::PolicedRate);
        assert!(
            e.set_aside.iter().any(|s| s.contains(BEHIND_BUCKET)),
            "{:?}",
            e.set_aside
        );
        // The flow turned out to deliver beyond it: no policer, and the ACK spacing stands.
        let c = e.refute_policer(1.4e6).expect("an estimate");
        assert_eq!(c.method, Method::Dispersion);
        assert_eq!(e.policer, None);
        assert!(
            !e.set_aside.iter().any(|s| s.contains(BEHIND_BUCKET)),
            "{:?}",
            e.set_aside
        );
    }

    #[test]
    fn arrivals_faster_than_their_own_acks_were_compressed_after_the_bottleneck() {
        // At the receiver of an 80 Mbit/s path behind an element that releases its backlog
        // at once: the arrivals read 1.29 Gbit/s, the ACKs the receiver sent for them 73.
        let mut e = Estimate {
            arrived: Some(1.29e9 / 8.0),
            dispersed: Some(73e6 / 8.0),
            ..Default::default()
        };
        e.compressed_arrivals();
        assert_eq!(e.arrived, None);
        assert!(
            e.set_aside[0].contains("spaced after the bottleneck"),
            "{:?}",
            e.set_aside
        );
        assert_eq!(largest(&e, 0.0).map(|c| c.method), Some(Method::Dispersion));
        // Within the estimates' own error the two agree, and both stand.
        let mut e = Estimate {
            arrived: Some(80e6 / 8.0),
            dispersed: Some(73e6 / 8.0),
            ..Default::default()
        };
        e.compressed_arrivals();
        assert!(e.arrived.is_some() && e.set_aside.is_empty());
    }

    #[test]
    fn acks_faster_than_the_data_they_acknowledge_arrived_are_not_the_path() {
        // At the receiver of a 30 Mbit/s link whose host batched every 159 µs (census
        // 3030): the arrivals read 28.4 Mbit/s, the ACKs 39.0.
        let mut e = Estimate {
            arrived: Some(28.4e6 / 8.0),
            dispersed: Some(39.0e6 / 8.0),
            ..Default::default()
        };
        e.acks_ahead_of_arrivals();
        assert_eq!(e.dispersed, None);
        assert!(
            e.set_aside[0].contains("acknowledges data only once it has arrived"),
            "{:?}",
            e.set_aside
        );
        assert_eq!(largest(&e, 0.0).map(|c| c.method), Some(Method::ArrivalDispersion));
        // Within the estimates' own error, and where the ACKs are the slower, both stand.
        for ack in [31.0e6, 20.0e6] {
            let mut e = Estimate {
                arrived: Some(28.4e6 / 8.0),
                dispersed: Some(ack / 8.0),
                ..Default::default()
            };
            e.acks_ahead_of_arrivals();
            assert!(e.dispersed.is_some() && e.set_aside.is_empty());
        }
    }

    #[test]
    fn acks_the_receiver_sent_slower_than_they_came_were_compressed_on_the_way_back() {
        // A receiver ACKs 2896 B every 0.77 ms (30 Mbit/s) on a 1 ms clock; a jittery hop
        // on the way back hands them to the sender in fours, 3 us apart: the capture's ACK
        // spacing reads 766 Mbit/s.
        let mut clock = ReceiverClock::default();
        for i in 0..4000u32 {
            let sent_ms = i as f64 * 0.77;
            let arrived_ms = 20.0 + (i / 4) as f64 * 4.0 * 0.77 + 2.31 + (i % 4) as f64 * 0.003;
            let at = Timestamp(1_000_000_000) + Span::from_nanos((arrived_ms * 1e6) as i64);
            clock.on_ack(
                at,
                77_000u32.wrapping_add(sent_ms as u32),
                2896,
                Some(Span::from_millis(60)),
            );
        }
        let tl = busy_timeline(3_700);
        let d = dispersion_at(766e6 / 8.0);
        let e = estimate(&Input {
            stamps: Some(&clock),
            ..input(&tl, &d, 3.6e6)
        });
        assert_eq!(e.dispersed, None);
        assert!(
            e.set_aside.iter().any(|s| s.contains("compressed on the way back")),
            "{:?}",
            e.set_aside
        );
        assert_ne!(e.capacity.map(|c| c.method), Some(Method::Dispersion));
        // ACKs that came as the receiver sent them keep their spacing.
        let mut clock = ReceiverClock::default();
        for i in 0..4000u32 {
            let ms = i as f64 * 0.77;
            let at = Timestamp(1_000_000_000) + Span::from_nanos(((20.0 + ms) * 1e6) as i64);
            clock.on_ack(at, 77_000u32.wrapping_add(ms as u32), 2896, Some(Span::from_millis(60)));
        }
        let d = dispersion_at(30e6 / 8.0);
        let e = estimate(&Input {
            stamps: Some(&clock),
            ..input(&tl, &d, 3.6e6)
        });
        assert!(e.dispersed.is_some() && e.set_aside.is_empty(), "{:?}", e.set_aside);
    }

    fn standing_queue(tl: &Timeline) -> StandingQueue {
        StandingQueue {
            share: 1.0,
            judged: 1.0,
            delay_s: 0.02,
            target_s: 0.001,
            interval_s: 0.1,
            bins: vec![true; tl.bins.len()],
            intervals: 40,
            standing: 40,
        }
    }

    /// Bursts of `burst` two-segment samples at `fast` (bytes/s), each followed by the
    /// silence that brings the train's mean down to `mean`.
    fn bursts_at(fast: f64, mean: f64, burst: usize) -> Dispersion {
        let mut d = Dispersion::default();
        for _ in 0..40 {
            for _ in 0..burst {
                d.add(2896, Span::from_nanos((2896.0 / fast * 1e9) as i64));
            }
            let silence = 2896.0 * (burst + 1) as f64 / mean - 2896.0 * burst as f64 / fast;
            d.add(2896, Span::from_nanos((silence * 1e9) as i64));
        }
        d
    }

    /// A link shared with traffic the capture does not show, kept busy by a standing queue:
    /// the flow's gaps are its own serialization (most of them) or that with one or two
    /// other packets between, and its delivery (4 MB/s) is well below the link's 5.6 MB/s.
    /// The capacity is the link's, and the flow is judged against what it was left. The same
    /// mode between long silences (an element releasing bursts after the bottleneck) is no
    /// shared link: the queue's delivery stands.
    #[test]
    fn a_standing_queue_with_interleaved_spacing_above_its_delivery_is_a_shared_link() {
        let tl = busy_timeline(4_000);
        let link = 5.6e6;
        let mut d = Dispersion::default();
        for i in 0..300 {
            let others = [0.0, 0.0, 0.0, 1.0, 1.0, 2.0][i % 6];
            d.add(1448, Span::from_nanos((1448.0 * (1.0 + others) / link * 1e9) as i64));
        }
        let q = standing_queue(&tl);
        let e = estimate(&Input {
            queue: Some(&q),
            ..input(&tl, &d, 3.9e6)
        });
        let c = e.capacity.unwrap();
        assert_eq!(c.method, Method::Dispersion, "{e:?}");
        assert!((c.rate / link - 1.0).abs() < 0.05, "{c:?}");
        assert!(e.link_shared && e.set_aside.is_empty(), "{e:?}");
        let left = e.available(3.9e6, c.rate).unwrap();
        assert!((left / 4e6 - 1.0).abs() < 0.02, "{left}");
        // Not the rate a queue-less flow is judged by: without the queue, no shared link.
        let mut e2 = e.clone();
        e2.without_queue();
        assert_eq!(e2.available(3.9e6, c.rate), None);
        // Bursts at the same spacing between silences that hold most of the time (1.5 MB/s
        // delivered): what an element past the bottleneck that holds packets gives.
        let tl = busy_timeline(1_500);
        let bursty = bursts_at(link, 1.5e6, 6);
        let e = estimate(&Input {
            queue: Some(&q),
            ..input(&tl, &bursty, 1.45e6)
        });
        assert_eq!(e.capacity.unwrap().method, Method::QueueDeliveryRate, "{e:?}");
        assert!(!e.link_shared && e.available(1.45e6, 5.6e6).is_none());
    }

    #[test]
    fn a_standing_queue_makes_the_delivery_the_rate_and_sets_a_burst_rate_aside() {
        // A 50 Mbit/s token bucket releasing bursts at 5.8 Gbit/s: 6.25 MB/s delivered.
        let tl = busy_timeline(6_250);
        let d = bursts_at(725e6, 6.25e6, 10);
        let q = standing_queue(&tl);
        let e = estimate(&Input {
            queue: Some(&q),
            ..input(&tl, &d, 6.0e6)
        });
        let c = e.capacity.unwrap();
        assert_eq!(c.method, Method::QueueDeliveryRate);
        assert!((c.rate / 6.25e6 - 1.0).abs() < 0.02, "{}", c.rate);
        assert_eq!(e.set_aside.len(), 1, "{:?}", e.set_aside);
    }

    /// The most delivered over one round trip is a figure where nothing else is (a lower
    /// bound, which `diagnose::classify_floored` raises by it), and no figure at all where
    /// the ACKs came back compressed; beside a busy delivery or a standing queue the estimate
    /// keeps its own figure (a token bucket passes its depth above its rate over a round
    /// trip).
    #[test]
    fn a_round_trips_delivery_stands_where_nothing_else_does() {
        let d = Dispersion::default();
        let none = Timeline::new(Timestamp(1_000_000_000));
        let alone = estimate(&Input {
            round_trip: Some(3.0e6),
            ..input(&none, &d, 0.9e6)
        });
        let c = alone.capacity.unwrap();
        assert_eq!((c.method, c.rate), (Method::DeliveryRate, 3.0e6));
        let mut compressed = alone.clone();
        compressed.two_way(TWO_WAY_WITHIN);
        assert_eq!(compressed.round_trip_floor(), None);
        assert_eq!(choose(&compressed, 0.9e6, None), None);
        let tl = busy_timeline(1_000);
        let busy = || Input {
            round_trip: Some(3.0e6),
            ..input(&tl, &d, 0.9e6)
        };
        let c = estimate(&busy()).capacity.unwrap();
        assert!(c.rate < 1.1e6, "{c:?}");
        let q = standing_queue(&tl);
        let queued = estimate(&Input {
            queue: Some(&q),
            ..busy()
        });
        assert_eq!(queued.capacity.unwrap().method, Method::QueueDeliveryRate);
        assert!(queued.capacity.unwrap().rate < 1.1e6, "{queued:?}");
    }

    /// A sender idle 90% of the time whose bursts go through at 5 MB/s: its few busy
    /// windows say little, and the estimate is at least what the bursts delivered — as a
    /// lower bound (the busy windows' figure is not it).
    #[test]
    fn app_limited_delivery_raises_the_estimate_as_a_floor() {
        use crate::diagnose::timeline::SenderState;
        let t0 = Timestamp(1_000_000_000);
        let mut tl = Timeline::new(t0);
        for burst in 0..40i64 {
            let at = t0 + Span::from_millis(200 * burst);
            tl.account(at, at + Span::from_millis(20), SenderState::Busy);
            tl.account(
                at + Span::from_millis(20),
                at + Span::from_millis(200),
                SenderState::Idle,
            );
            for i in 1..=100 {
                tl.ack(at + Span::from_micros(1_000 * i), 5_000);
            }
        }
        let d = Dispersion::default();
        let e = estimate(&input(&tl, &d, 0.5e6));
        let c = e.capacity.unwrap();
        assert_eq!(c.method, Method::DeliveryRate);
        let floor = e.app_limited.unwrap();
        assert!(c.rate >= floor && floor > 1e6, "{c:?} {e:?}");
        assert!(!e.measured_busy(c.rate), "{e:?}");
        // A loss episode's delivery is a floor as well.
        let e = estimate(&Input {
            loss_delivery: Some(9e6),
            ..input(&tl, &d, 0.5e6)
        });
        assert!(e.capacity.unwrap().rate >= 9e6);
    }

    /// A spacing estimate a hair below what the flow achieved is that rate measured another
    /// way: the figure rises to the delivery and keeps saying how it was found.
    #[test]
    fn a_spacing_estimate_within_the_margin_of_the_delivery_keeps_its_method() {
        let tl = busy_timeline(1_000); // 1 MB/s delivered
        let d = dispersion_at(1.01e6);
        let c = estimate(&input(&tl, &d, 1.05e6)).capacity.unwrap();
        assert_eq!(c.method, Method::Dispersion);
        assert!(c.rate >= 1.05e6, "{c:?}");
        // Well above it, the delivery stands instead.
        let c = estimate(&input(&tl, &d, 2e6)).capacity.unwrap();
        assert_eq!(c.method, Method::DeliveryRate);
        assert!(c.rate >= 2e6, "{c:?}");
    }

    /// ACKs handed over in batches (a host's), 10 MB/s delivered while the RTT rose: the
    /// batches' spacing (here 30 Gbit/s) is set aside and said so, and the delivery stands.
    /// The same spacing from ACKs the clock separates, or with no RTT rise, or from a flow
    /// its receiver's window held, stands (the rule does not reach them).
    #[test]
    fn batched_spacing_above_a_queued_flights_delivery_is_set_aside() {
        let tl = busy_timeline(10_000); // 10 MB/s delivered
        let batched = {
            let mut d = dispersion_at(3.75e9);
            d.on_packet(1_000_000, true);
            d
        };
        let e = estimate(&Input {
            rtt_rose: true,
            ..input(&tl, &batched, 9.5e6)
        });
        let c = e.capacity.unwrap();
        assert_eq!(c.method, Method::DeliveryRate, "{e:?}");
        assert!((c.rate / 10e6 - 1.0).abs() < 0.02, "{c:?}");
        assert_eq!(e.dispersed, None);
        assert_eq!(e.set_aside.len(), 1, "{:?}", e.set_aside);
        assert!(e.set_aside[0].contains("batches"), "{:?}", e.set_aside);
        // Spacing the clock separated: not a batch's.
        let spread = {
            let mut d = dispersion_at(3.75e9);
            d.on_packet(1_000_000, false);
            d
        };
        let e = estimate(&Input {
            rtt_rose: true,
            ..input(&tl, &spread, 9.5e6)
        });
        assert_eq!(e.capacity.unwrap().method, Method::Dispersion);
        for inp in [
            input(&tl, &batched, 9.5e6),
            Input {
                rtt_rose: true,
                window_held: true,
                ..input(&tl, &batched, 9.5e6)
            },
        ] {
            let e = estimate(&inp);
            assert_eq!(e.capacity.unwrap().method, Method::Dispersion, "{e:?}");
            assert!(e.set_aside.is_empty());
        }
        // Within the margin of the delivery, batched spacing is the same rate.
        let near = {
            let mut d = dispersion_at(10.5e6);
            d.on_packet(1_000_000, true);
            d
        };
        let e = estimate(&Input {
            rtt_rose: true,
            ..input(&tl, &near, 9.5e6)
        });
        assert!(e.set_aside.is_empty() && e.dispersed.is_some(), "{e:?}");
    }

    #[test]
    fn no_estimate_is_below_what_was_delivered() {
        let tl = busy_timeline(10_000); // 10 MB/s delivered
        let d = dispersion_at(2e6); // spacing says 2 MB/s
        let e = estimate(&input(&tl, &d, 9.5e6));
        assert!(e.capacity.unwrap().rate >= 10e6 * 0.99);
        // nor a user's figure
        let e = estimate(&Input {
            link_rate_bps: Some(40e6),
            ..input(&tl, &d, 9.5e6)
        });
        assert!(e.capacity.unwrap().rate >= 10e6 * 0.99);
        assert_eq!(e.set_aside.len(), 1);
    }

    /// At a receiver whose data a link held and released at once (2.12 Gbit/s arrival
    /// spacing on a 100 Mbit/s LAN in the P1 corpus's lan_fast) while the RTT rose: the
    /// ACKs' spacing agrees with the delivery, so the faster data-arrival spacing was made
    /// after the bottleneck and is set aside, batched or not. Where both spacings agree
    /// (the link's rate, shared with traffic the capture does not show), both stand.
    #[test]
    fn a_spacing_the_other_one_and_the_delivery_refute_is_set_aside() {
        let tl = busy_timeline(12_500); // 100 Mbit/s delivered
        let acks = dispersion_at(12.3e6);
        let fast = {
            let mut d = dispersion_at(265e6);
            d.on_packet(1_000_000, false);
            d
        };
        let e = estimate(&Input {
            rtt_rose: true,
            arrivals: Some(&fast),
            ..input(&tl, &acks, 11e6)
        });
        assert_eq!(e.arrived, None, "{e:?}");
        assert!(e.dispersed.is_some(), "{e:?}");
        let c = e.capacity.unwrap();
        assert!(c.rate < 13e6, "{c:?}");
        assert_eq!(e.set_aside.len(), 1, "{:?}", e.set_aside);
        assert!(e.set_aside[0].contains("ACK dispersion showed"), "{:?}", e.set_aside);
        // Without the RTT's rise, nothing says the flight queued: the spacing stands.
        let e = estimate(&Input {
            arrivals: Some(&fast),
            ..input(&tl, &acks, 11e6)
        });
        assert_eq!(e.capacity.unwrap().method, Method::ArrivalDispersion, "{e:?}");
        // Both spacings read the same faster link: neither corroborates the delivery.
        let link = dispersion_at(25e6);
        let e = estimate(&Input {
            rtt_rose: true,
            arrivals: Some(&link),
            ..input(&tl, &dispersion_at(25.5e6), 11e6)
        });
        assert!(e.set_aside.is_empty(), "{:?}", e.set_aside);
        assert!(e.capacity.unwrap().rate > 24e6, "{e:?}");
    }
}
