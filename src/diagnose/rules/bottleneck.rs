//! # bottleneck-limited
//!
//! ## What it detects
//! The path's bottleneck was saturated. Two signs, two claims:
//! - `StandingQueue`: a queue stood at the bottleneck (RFC 8289's definition: the minimum
//!   RTT over every interval stayed above base + target). A work-conserving queue that never
//!   empties means the link behind it never idled: the bottleneck was full, whatever held
//!   the window — the flow's own excess window, or other traffic sharing the link.
//! - `AtCapacity`: the bytes acknowledged per round trip reach the capacity estimate (alone,
//!   or summed with the other flows that share the same hosts and time).
//! - `FullPipe`: a loss-free flat flight that never fell below the BDP while the flow's RTT
//!   rose above the base. The BDP is what the path holds (RFC 6349 §3.3.1: the window that
//!   fills the path is bottleneck rate x base RTT; send and receive buffers of at least that
//!   much do not limit the rate); the path beyond the queue holds at most that much, so the
//!   flight beyond it sat in the bottleneck's queue — the raised RTT is that wait — and a
//!   work-conserving link with a queue in front of it is busy. It must hold at its *low*
//!   point (the least flight after a send, each round): a sender whose send buffer frees in
//!   one piece sends a burst that lifts the flight's peak far above the BDP and queues for a
//!   moment, then sends nothing while the ACKs drain it to a third of that, and the link
//!   idles each round (R5 sndbuf_32k: peak 94 KB, low 28 KB, BDP 64 KB; the kernel's mean
//!   flight 65 KB, 68% of the link). Such a flight is the sender's buffer holding more than
//!   the path, not less: it is not sender-limited time (the sender rule keeps only flat
//!   flights below the BDP, or with no queue to hold the excess).
//!
//! ## Why
//! When the pipe is full, more window only adds queueing delay; nothing at the ends can
//! make the transfer faster. A window far above the BDP is then a cost (bufferbloat): the
//! excess waits in the queue, and a window near the BDP or an AQM at the bottleneck gives
//! the same throughput with less delay.
//!
//! ## Example
//! 50 Mbit/s, 100 ms, SO_RCVBUF 4 MiB: 47 Mbit/s of payload once slow start ends, RTT
//! 100 -> 110 ms from the queue. A consumer uplink with a 700 ms FIFO: RTT 14 -> 720 ms,
//! the window 12x the BDP, 98% of it in the queue.

use super::super::advice::{plain, BUFFER_PER_WINDOW};
use super::super::facts::Findings;
use super::super::Label;
use super::{Account, BinCtx, Claim, Left, Verdict};
use crate::summary::{AdviceItem, AdviceKind};
use crate::units::{bytes, ms, pct, rate, times};

pub use super::super::capacity::AT_CAPACITY;
/// Queueing delay worth pointing out in advice: 5% of the base RTT (RFC 8289 §4.4's lower
/// target), at least 2 ms.
const QUEUE_NOTICEABLE_SHARE: f64 = 0.05;
const QUEUE_NOTICEABLE_S: f64 = 0.002;

pub fn at_capacity(rate: f64, capacity: f64) -> bool {
    capacity > 0.0 && rate >= AT_CAPACITY * capacity
}

/// A flat flight whose low point was `flight` bytes filled the pipe: it held at least the
/// BDP (`pipe`, from a judged capacity) all along while the RTT rose above the base to hold
/// the excess.
pub fn fills_pipe(flight: u64, pipe: Option<f64>, rtt_rose: bool) -> bool {
    rtt_rose && pipe.is_some_and(|p| p > 0.0 && flight as f64 >= p)
}

/// The name `FullPipe` claims under.
pub const FULL_PIPE: &str = "full-pipe";

/// Busy time while a queue stood.
pub struct StandingQueue;

impl Claim for StandingQueue {
    fn name(&self) -> &'static str {
        "standing-queue"
    }
    fn label(&self) -> Label {
        Label::Bottleneck
    }
    fn claim(&self, b: &BinCtx<'_>, left: &mut Left) -> u64 {
        if b.queue {
            std::mem::take(&mut left.busy)
        } else {
            0
        }
    }
}

/// Busy time delivering at the capacity.
pub struct AtCapacity;

impl Claim for AtCapacity {
    fn name(&self) -> &'static str {
        "at-capacity"
    }
    fn label(&self) -> Label {
        Label::Bottleneck
    }
    fn claim(&self, b: &BinCtx<'_>, left: &mut Left) -> u64 {
        if b.capacity.is_some_and(|c| at_capacity(b.local_rate, c)) {
            std::mem::take(&mut left.busy)
        } else {
            0
        }
    }
}

/// Busy time on a flat flight that filled the pipe (see the module).
pub struct FullPipe;

impl Claim for FullPipe {
    fn name(&self) -> &'static str {
        FULL_PIPE
    }
    fn label(&self) -> Label {
        Label::Bottleneck
    }
    fn claim(&self, b: &BinCtx<'_>, left: &mut Left) -> u64 {
        if b.full_pipe {
            std::mem::take(&mut left.busy)
        } else {
            0
        }
    }
}

pub struct Decides;

impl Verdict for Decides {
    fn label(&self) -> Label {
        Label::Bottleneck
    }
    /// Delivery at capacity, a standing queue, or a flight that filled the pipe (with the
    /// queue holding its excess) most of the steady transfer: each says the link was busy.
    /// For a flow sharing the path, the group's delivery at capacity says so for each member
    /// (a full link holds back every flow through it: RFC 6349 §3.3).
    fn decides(&self, a: &Account) -> bool {
        a.utilisation
            .is_some_and(|u| u.max(a.group_utilisation.unwrap_or(0.0)) >= AT_CAPACITY)
            || a.standing_queue
            || a.full_pipe_share >= super::super::queue::MOST
    }
}

pub fn evidence(f: &Findings<'_>) -> Vec<String> {
    let x = f.facts;
    let mut out = Vec::new();
    // The verdict against a larger share of another limit says which sign of a full path
    // decided it (`Decides`, ahead of the shares: RFC 6349 §3.3, a path's throughput is its
    // bottleneck's, whatever the ends' windows did meanwhile).
    let c = f.class;
    out.extend(super::beside_larger_share(f, Label::Bottleneck, || {
        match (c.utilisation, x.standing_queue()) {
            (Some(u), _) if u >= AT_CAPACITY => format!(
                "over the steady transfer the flow delivered {} of the capacity while it had data, at least the {} a full path gives, so the path held it back as a whole",
                pct(u),
                pct(AT_CAPACITY)
            ),
            // A member of a group sharing the path, judged by the group's utilisation.
            (Some(u), _) if c.group_utilisation.is_some_and(|g| g >= AT_CAPACITY) => format!(
                "this flow's own steady transfer read {} of the capacity, taking in time the other members were starting or ending, but the flows sharing the path delivered {} of it while they had data, at least the {} a full path gives, so the path held them back as a whole",
                crate::units::pct_beside(u, AT_CAPACITY),
                pct(c.group_utilisation.unwrap_or(0.0)),
                pct(AT_CAPACITY)
            ),
            (_, Some(q)) => format!(
                "a queue stood for {} of the steady transfer, so the link behind it never idled",
                pct(q.share)
            ),
            _ => format!(
                "the flight filled the pipe with the queue holding its excess for {} of the steady transfer",
                pct(c.full_pipe_share)
            ),
        }
    }));
    // Below the capacity by the flow's own delivery, at it by the link's: the intervals a
    // queue stood in made the difference (`classify`), and the verdict says so.
    if let (Some(u), Some(l), Some(q)) = (c.utilisation, c.link_utilisation, x.queue.as_ref()) {
        if c.verdict == Label::Bottleneck && u < AT_CAPACITY && l >= AT_CAPACITY {
            out.push(format!(
                "the flow delivered {} of the capacity while it had data, but a queue stood in {} of the steady transfer, and the link behind a standing queue never idles (RFC 8289): counting those intervals as full, the link was busy {} of the time the flow had data, at least the {} a full path gives",
                crate::units::pct_beside(u, AT_CAPACITY),
                pct(q.share),
                pct(l),
                pct(AT_CAPACITY)
            ));
        }
    }
    if let Some(q) = x.standing_queue() {
        // Of the flight the path carried: data SACKed above a hole sits at the receiver.
        let held = match (x.queued_bytes(), x.max_in_network) {
            (Some(b), flight) if flight > 0 => format!(
                "; about {} waited in it ({} of the largest flight, {})",
                bytes(b),
                pct((b / flight as f64).min(1.0)),
                bytes(flight as f64)
            ),
            (Some(b), _) => format!("; about {} waited in it", bytes(b)),
            _ => String::new(),
        };
        out.push(format!(
            "a queue stood for {} of the steady transfer: the least RTT of every {} stayed above the base by more than {} (RFC 8289's standing queue), keeping {} of delay{held}: the bottleneck was full",
            pct(q.share),
            ms(q.interval_s),
            ms(q.target_s),
            ms(q.delay_s)
        ));
    }
    let c = f.class;
    if c.full_pipe_share > 0.01 {
        if let Some(bdp) = x.bdp {
            let level = c.full_pipe_flight as f64;
            let mut against: Vec<String> = super::sender::against_window(x, level).into_iter().collect();
            // On a link shared with traffic the capture does not show, the pipe this flow
            // fills is its share of it: a flight below the link's BDP fills that share's
            // (the flow is judged against what the link left it).
            let left = x.available().filter(|&a| x.bdp_at(a) < bdp);
            against.push(match left {
                Some(a) if level < bdp => format!(
                    "below the link's BDP ({}) and above the BDP of this flow's share of the link ({}: {})",
                    super::bdp_bytes(bdp),
                    bytes(x.bdp_at(a)),
                    super::rate_times_rtt(x, a)
                ),
                _ => format!("above the BDP ({})", super::bdp_bytes(bdp)),
            });
            out.push(format!(
                "flight flat at ~{} for {} of the time with no loss, {}, the RTT rising to hold the excess (median {} vs base {}): the pipe was full ({})",
                bytes(level),
                pct(c.full_pipe_share),
                against.join(" and "),
                ms(x.median_rtt_s.unwrap_or(x.base_rtt_s)),
                ms(x.base_rtt_s),
                super::FULL_PIPE_COUNTED
            ));
        }
    }
    out
}

pub fn advice(f: &Findings<'_>) -> Vec<AdviceItem> {
    let (x, c) = (f.facts, f.class);
    let mut out = Vec::new();
    // The queue the excess window builds shows at the high end of the RTTs, or stands.
    let q95 = x.p95_rtt_s.map(|p| (p - x.base_rtt_s).max(0.0));
    let queue_delay = x.standing_queue().map(|q| q.delay_s).or(q95);
    let (Some(bdp), Some(q)) = (x.bdp, queue_delay) else {
        return out;
    };
    // This flow, not its neighbours, built the queue: its flight in the network went past
    // the BDP (data SACKed above a hole is outstanding but waits at the receiver).
    let flight = x.max_in_network as f64;
    // The window that keeps the link busy: the BDP, plus the segment being serialised
    // (the base RTT is the handshake's, of small segments) and the one a delayed ACK waits
    // for (RFC 5681 §4.2); a buffer of BUFFER_PER_WINDOW times that lets it reach it. On a
    // link where a segment takes longer than the round trip the BDP alone is less than one
    // segment, and a buffer sized on it would starve the link.
    // The sentences name both: the window (or flight) the link needs, and the buffer that
    // gives it (a receive window of 15.5 KiB was told "a receive window near 15.2 KiB",
    // the buffer's figure, as if 2% less window were the cut).
    let needed = bdp + 2.0 * x.mss as f64;
    let target = BUFFER_PER_WINDOW * needed;
    if flight <= target || q < QUEUE_NOTICEABLE_S.max(QUEUE_NOTICEABLE_SHARE * x.base_rtt_s) {
        return out;
    }
    let rtts = format!(
        "RTT median {}, p95 {} vs base {}",
        ms(x.median_rtt_s.unwrap_or(x.base_rtt_s)),
        ms(x.p95_rtt_s.unwrap_or(x.base_rtt_s)),
        ms(x.base_rtt_s)
    );
    // The rate it kept while the path carried data: the goodput over the whole connection
    // counts a stall too (P39 outage: 9.92 Mbit/s over 8.15 s with 5.09 s of it an outage,
    // 27.9 over its steady transfer), and less delay does not give back a stall.
    let kept = if c.steady_rate > 0.0 { c.steady_rate } else { x.goodput };
    let same = format!("the same {} with less delay", rate(kept));
    // What held the flight where it was: the receiver's window (full), the sender's own
    // flat flight (its send buffer), or its congestion control (neither).
    let fr = |l: Label| c.fractions[l.index()];
    // The sender's flat flight: the one that filled the pipe, or its own plateau; against
    // the congestion window's time, with the window left unused in recovery counted as the
    // window's (as `classify` counts it short of deciding).
    let (flat_share, flat_flight) = if c.full_pipe_share >= c.plateau_share {
        (c.full_pipe_share, c.full_pipe_flight)
    } else {
        (c.plateau_share, c.plateau_flight)
    };
    let (knob, current, sentence) = if fr(Label::ReceiverWindow) >= super::receiver_window::MIN_SHARE {
        let w = x.max_rwnd.unwrap_or(x.max_flight);
        (
            "net.ipv4.tcp_rmem max, or SO_RCVBUF at the receiver",
            Some(w),
            format!(
                "the path is full: more window only adds delay. The receive window ({}) is far above the BDP ({}) and the sender kept it full: the flight reached {} ({} BDP) and the excess queued ({rtts}). A receive window near {} (a buffer near {}: tcp_rmem max, SO_RCVBUF) would give {same}, as would an AQM (fq_codel, CAKE) at the bottleneck",
                bytes(w as f64),
                super::bdp_bytes(bdp),
                bytes(flight),
                times(flight / bdp.max(1.0)),
                bytes(needed),
                bytes(target)
            ),
        )
    } else if flat_share > fr(Label::Cwnd) + c.window_unused_share && flat_flight > 0 {
        (
            "net.ipv4.tcp_wmem max, or SO_SNDBUF at the sender",
            Some(flat_flight),
            format!(
                "the path is full: more data in flight only adds delay. The sender kept a flat ~{} in flight (its send buffer), far above the BDP ({}), and the excess queued ({rtts}). A flight near {} (a send buffer near {}: tcp_wmem max, SO_SNDBUF) would give {same}, as would an AQM (fq_codel, CAKE) at the bottleneck",
                bytes(flat_flight as f64),
                super::bdp_bytes(bdp),
                bytes(needed),
                bytes(target)
            ),
        )
    } else {
        (
            "an AQM (fq_codel, CAKE) at the bottleneck, or net.ipv4.tcp_congestion_control=bbr",
            None,
            format!(
                "the path is full: the congestion control kept the queue filled, the flight reaching {} ({} BDP) with the excess queued ({rtts}). An AQM (fq_codel, CAKE) at the bottleneck, or a congestion control that does not fill buffers (BBR), would give {same}",
                bytes(flight),
                times(flight / bdp.max(1.0))
            ),
        )
    };
    let mut a = plain(AdviceKind::CutQueue, Some(knob), sentence, x);
    if let Some(cur) = current.filter(|&cur| cur as f64 > target) {
        a.current_bytes = Some(cur);
        a.recommended_bytes = Some(target as u64);
    }
    out.push(a);
    out
}

/// The law of a standing queue (on the summary): a flow that kept one most of its steady
/// transfer saturated its bottleneck and is bottleneck-limited — unless the sender idled
/// enough to be sender-limited first (the spec's precedence) — with the queue's figures.
pub fn queue_law(f: &crate::summary::FlowSummary) -> Vec<String> {
    let mut out = Vec::new();
    let Some(q) = &f.queue else { return out };
    if q.standing_share >= super::super::queue::MOST && f.verdict != Label::Bottleneck && f.verdict != Label::Sender {
        out.push(format!(
            "a queue stood {:.0}% of the transfer yet the verdict is {}",
            q.standing_share * 100.0,
            f.verdict
        ));
    }
    if !f.evidence.iter().any(|e| e.contains("queue stood")) {
        out.push("a standing queue without its evidence".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{at, run, timeline, Bin, BUSY, CAPACITY, MSS};
    use crate::diagnose::classify::{classify, Input};
    use crate::diagnose::queue::StandingQueue;
    use crate::diagnose::Label;
    use crate::time::Span;

    #[test]
    fn delivery_at_capacity_is_bottleneck_limited() {
        // After a short start-up (flight doubling), busy and delivering at 97% of capacity.
        let c = run(|i| {
            let flight = if i < 20 {
                2_000 << (i / 4)
            } else {
                60_000 + (i as u64 % 7) * 1448
            };
            Bin {
                delivered: if i < 20 { at(0.3) } else { at(0.97) },
                flight,
                retransmissions: (i % 50 == 49) as u32,
                ..BUSY
            }
        });
        assert_eq!(c.verdict, Label::Bottleneck);
        assert!(
            c.fractions[Label::Bottleneck.index()] > 0.9,
            "{:?} {:?}",
            c.fractions,
            c.startup_s
        );
        assert!(c.utilisation.unwrap() > super::AT_CAPACITY);
    }

    #[test]
    fn a_standing_queue_makes_a_full_window_bottleneck_limited() {
        // The window is full 90% of the time (the kernel counts it rwnd-limited), but a
        // queue stood all along: the link was saturated, though delivery reads only half
        // the capacity estimate (which the queue, not the utilisation, overrules).
        let tl = timeline(|_| Bin {
            busy: 0.1,
            rwnd: 0.9,
            delivered: at(0.5),
            flight: 500_000,
            ..BUSY
        });
        let queue = |share: f64| StandingQueue {
            share,
            judged: 1.0,
            delay_s: 0.05,
            target_s: 0.002,
            interval_s: 0.1,
            bins: (0..tl.bins.len())
                .map(|i| (i as f64) < share * tl.bins.len() as f64)
                .collect(),
            intervals: 50,
            standing: (50.0 * share) as usize,
        };
        let verdict = |q: &StandingQueue| {
            classify(&Input {
                tl: &tl,
                capacity: Some(CAPACITY),
                pipe: Some(CAPACITY * 0.04),
                base_rtt: Span::from_millis(40),
                mss: MSS,
                shared_delivered: None,
                group_utilisation: None,
                queue: Some(q),
                rtt_rose: false,
                excluded: &[],
                recovered: None,
            })
        };
        let c = verdict(&queue(1.0));
        assert_eq!(c.verdict, Label::Bottleneck);
        // The time shares keep the kernel's accounting: the window was full.
        assert!(c.fractions[Label::ReceiverWindow.index()] > 0.85, "{:?}", c.fractions);
        // The verdict follows the queue's own judgement (the one its evidence prints):
        // standing 40% of the transfer is not most of it.
        assert_eq!(verdict(&queue(0.4)).verdict, Label::ReceiverWindow);
    }

    /// Other traffic on the link part of the time (on/off cross traffic the capture does not
    /// show): while it was on, a queue stood and the flow delivered 65% of the capacity;
    /// while it was off, 95%. The flow's own utilisation (81%) is below a full path's, the
    /// link's — the queued intervals counted full, as the link behind a standing queue
    /// never idles — is 97%: bottleneck-limited. A flow alone that backs off after its
    /// losses and fills the queue between them (at the capacity while the queue stands,
    /// 60% after each back-off) has both figures alike: the window kept it below.
    #[test]
    fn intervals_a_queue_stood_in_count_full_for_the_links_utilisation() {
        let queue_in = |tl: &crate::diagnose::timeline::Timeline, from: f64, to: f64| StandingQueue {
            share: to - from,
            judged: 1.0,
            delay_s: 0.01,
            target_s: 0.002,
            interval_s: 0.1,
            bins: (0..tl.bins.len())
                .map(|i| {
                    let x = i as f64 / tl.bins.len() as f64;
                    x >= from && x < to
                })
                .collect(),
            intervals: 50,
            standing: (50.0 * (to - from)) as usize,
        };
        let judge = |tl: &crate::diagnose::timeline::Timeline, q: &StandingQueue| {
            classify(&Input {
                tl,
                capacity: Some(CAPACITY),
                pipe: Some(CAPACITY * 0.04),
                base_rtt: Span::from_millis(40),
                mss: MSS,
                shared_delivered: None,
                group_utilisation: None,
                queue: Some(q),
                rtt_rose: true,
                excluded: &[],
                recovered: None,
            })
        };
        // Cross traffic on in the middle 45% of the transfer.
        let shared = timeline(|i| Bin {
            delivered: if (100..325).contains(&i) { at(0.65) } else { at(0.95) },
            flight: 80_000,
            ..BUSY
        });
        // Bins 100..325 of the 500 made.
        let q = queue_in(&shared, 0.2, 0.65);
        let c = judge(&shared, &q);
        let (u, l) = (c.utilisation.unwrap(), c.link_utilisation.unwrap());
        assert!(u < super::AT_CAPACITY && l > 0.95, "{u} {l}");
        assert_eq!(c.verdict, Label::Bottleneck, "{c:?}");
        // Alone: at the capacity while its own queue stood, 60% after each back-off.
        let alone = timeline(|i| Bin {
            delivered: if (100..325).contains(&i) { at(0.97) } else { at(0.6) },
            flight: 80_000,
            retransmissions: (i % 100 == 99) as u32,
            ..BUSY
        });
        let c = judge(&alone, &queue_in(&alone, 0.2, 0.65));
        let (u, l) = (c.utilisation.unwrap(), c.link_utilisation.unwrap());
        // (The link's figure is the flow's but for the 3% it fell short while its queue
        // stood, within the estimate's margin.)
        assert!(l - u < 0.02 && l < super::AT_CAPACITY, "{u} {l}");
        assert_eq!(c.verdict, Label::Cwnd, "{c:?}");
    }

    #[test]
    fn a_flat_flight_above_the_bdp_with_the_rtt_raised_fills_the_pipe() {
        // 60 kB flat, loss-free, over a 40 kB pipe (1 MB/s x 40 ms), delivering 70% of the
        // estimate: with the RTT raised the excess sat in the queue and the link was busy
        // (a send buffer larger than the path, tcp-ethereal-trace-1's case); the sender's
        // plateau does not claim it.
        let bin = |i: usize| Bin {
            delivered: at(0.7),
            flight: 60_000 + (i as u64 % 2) * 1448,
            ..BUSY
        };
        let c = super::super::fixture::run_with(bin, true);
        assert_eq!(c.verdict, Label::Bottleneck);
        assert!(c.full_pipe_share > 0.8 && c.plateau_share < 0.01, "{c:?}");
        assert_eq!(c.full_pipe_flight, 61_448);
        // With the RTT at its base the flight was not in the path: the sender's still.
        let c = super::super::fixture::run_with(bin, false);
        assert_eq!(c.verdict, Label::Sender);
        assert!(c.full_pipe_share == 0.0 && c.plateau_share > 0.8, "{c:?}");
        // Below the BDP it is the sender's buffer, raised RTT or not.
        let c = super::super::fixture::run_with(
            |i| Bin {
                delivered: at(0.3),
                flight: 12_000 + (i as u64 % 2) * 1448,
                ..BUSY
            },
            true,
        );
        assert_eq!(c.verdict, Label::Sender);
        assert_eq!(c.full_pipe_share, 0.0);
    }

    #[test]
    fn a_burst_above_the_bdp_that_drains_below_it_is_the_senders() {
        // A send buffer freed in one piece: every 60 ms a burst lifts the flight from 28 kB
        // to 94 kB over the 40 kB pipe, the RTT rises while it queues, then the sender sends
        // nothing while the ACKs drain it (R5 sndbuf_32k). The peak is flat above the BDP;
        // the low point is below it, so the link idled: not a full pipe.
        let bin = |i: usize| match i % 6 {
            0 => Bin {
                delivered: at(0.7),
                flight: 28_000,
                ..BUSY
            },
            1 | 2 => Bin {
                delivered: at(0.7),
                flight: 94_000,
                ..BUSY
            },
            _ => Bin {
                delivered: at(0.7),
                ..BUSY
            },
        };
        let c = super::super::fixture::run_with(bin, true);
        assert_eq!(c.full_pipe_share, 0.0, "{c:?}");
        assert_eq!(c.verdict, Label::Sender, "{c:?}");
        assert_eq!((c.plateau_flight, c.plateau_low), (94_000, 28_000));
    }

    #[test]
    fn below_the_estimate_a_full_pipe_still_competes_for_the_verdict() {
        // Delivery 60% of the estimate throughout (an estimate above what the ACK clock
        // showed): 36% of the time the flight grows (congestion control), 44% it sits flat
        // at 60 kB over the 40 kB pipe with the RTT raised, 20% the sender idles. No rule
        // decides; the full pipe is the largest share and no loss backs it off, so the
        // bottleneck is not set aside for being below the estimate.
        let bin = |i: usize| match i {
            0..180 => Bin {
                delivered: at(0.6),
                flight: 20_000 + i as u64 * 200,
                ..BUSY
            },
            180..400 => Bin {
                delivered: at(0.6),
                flight: 60_000,
                ..BUSY
            },
            _ => Bin {
                busy: 0.0,
                idle: 1.0,
                ..BUSY
            },
        };
        let c = super::super::fixture::run_with(bin, true);
        assert!(c.utilisation.unwrap() < super::AT_CAPACITY, "{c:?}");
        assert!(c.full_pipe_share > 0.4 && c.full_pipe_share < 0.5, "{c:?}");
        assert_eq!(c.verdict, Label::Bottleneck, "{c:?}");
        // With the RTT at its base the flat flight is the sender's, and so is the verdict.
        assert_eq!(super::super::fixture::run_with(bin, false).verdict, Label::Sender);
    }

    #[test]
    fn the_margin_is_fifteen_percent() {
        assert!(super::at_capacity(0.86, 1.0));
        assert!(!super::at_capacity(0.84, 1.0));
        assert!(!super::at_capacity(1.0, 0.0));
    }
}
