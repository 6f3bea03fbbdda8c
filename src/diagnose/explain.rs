//! Explain (the last step of gate -> facts -> classify -> explain): the evidence every
//! flow gets (the time shares, the capacity and how it was found, the BDP, the RTTs), then
//! each rule's own evidence; the verdict rule's advice and the advice any stall calls for;
//! and notes on how far the figures can be trusted. Every sentence is written from the
//! numbers it states, and says only what those numbers show.

use super::capacity::Method;
use super::facts::Findings;
use super::policer::Shown;
use super::rules;
use super::Label;
use crate::summary::{AdviceItem, AdviceKind, StallKind};
use crate::units::{bytes, ms, pct, rate, secs};

pub fn evidence(f: &Findings<'_>) -> Vec<String> {
    let (x, c) = (f.facts, f.class);
    let mut out = Vec::new();
    // The shares as the summary holds them (`limits`), so the two never round apart
    // (0.01499 read "1%" here beside "2%" on the limits line).
    let fr = |l: Label| c.share(l);
    let shares = format!(
        "receiver window {}, cwnd {}, bottleneck {}, sender {}",
        pct(fr(Label::ReceiverWindow)),
        pct(fr(Label::Cwnd)),
        pct(fr(Label::Bottleneck)),
        pct(fr(Label::Sender))
    );
    out.push(if c.whole {
        // The steady part was shorter than the start-up: the shares are of the whole.
        format!(
            "transfer judged whole, {} with its {} of start-up (the steady part after it, {}, too short to stand alone): {shares}",
            secs(c.transfer_s()),
            secs(c.startup_s),
            secs(c.steady_part_s()),
        )
    } else {
        format!("steady transfer {} after {} of start-up: {shares}", secs(c.steady_s), secs(c.startup_s))
    });
    if let Some(cap) = x.capacity {
        let shows_busy = c.idle_share >= 0.005;
        // The share is of the rate the sentence ends on: the busy rate when it is printed
        // (a lower-bound estimate gives the classification no utilisation, and the share
        // of the steady rate printed beside the busy rate read as the busy rate's).
        // On a shared link the share is of what the link left the flow (what it is judged
        // against), named as such.
        let available = x.available();
        let judged = available.unwrap_or(cap.rate).max(1.0);
        // Said where it differs from the delivery over all the time, as printed (the busy
        // rate is never below it: `classify`).
        let overall = c.shared_steady_rate.unwrap_or(c.steady_rate);
        let shows_busy = shows_busy && rate(c.busy_rate) != rate(overall);
        // The busy rate shares each bin's delivery out by the time the sender had data in
        // it, and a bin's ACKs answer data sent up to a round trip before (`busy_floor` in
        // diagnose/mod.rs): a request/response flow busy for a sliver of each bin reads
        // above any rate the path was shown to pass (Nagle's 500-byte exchanges: 41.7
        // kbit/s beside a 27.1 kbit/s delivery bound). Printed above the estimate, it says
        // so, and the share is of the steady delivery, which the estimate bounds (RFC 6349
        // §3.3): a share over 100% beside an estimate reads as a rate above the path's.
        let busy_above = shows_busy && c.busy_rate > judged * BUSY_TOLERANCE;
        let util = if busy_above {
            overall / judged
        } else {
            c.utilisation.unwrap_or(if shows_busy {
                c.busy_rate / judged
            } else {
                c.steady_rate.max(c.shared_steady_rate.unwrap_or(0.0)) / judged
            })
        };
        let busy = match (shows_busy, busy_above) {
            (true, true) => format!(" ({} while the sender had data{BUSY_ABOVE})", rate(c.busy_rate)),
            (true, false) => format!(" ({} while the sender had data)", rate(c.busy_rate)),
            _ => String::new(),
        };
        let shared = match (c.shared_steady_rate, x.flows_sharing) {
            (Some(s), n) if n > 1 => format!(" ({} flows together {})", n, rate(s)),
            _ => String::new(),
        };
        let e = &x.estimate;
        let sets_figure = |a: f64| a * 1.005 >= cap.rate && e.delivered.is_none_or(|d| a > d * 1.005);
        // Where a full data segment's round trip is longer than the handshake's base, the
        // windows are rounds of it (`data_round`), and the words say which (with a queue
        // standing most of the time they are the RTTs as they were, the median's).
        let standing = x.queue.as_ref().is_some_and(|q| q.most_of_the_time());
        let rounds = if !standing && x.delivery_round.secs_f64() > x.base_rtt_s * 1.01 {
            format!(
                "4 round trips of a full segment ({} each)",
                ms(x.delivery_round.secs_f64())
            )
        } else {
            "4 RTTs".to_string()
        };
        let busy_windows = format!("delivery over {rounds} while busy (90th percentile)");
        let all_windows = format!("delivery over {rounds} whatever the sender did (90th percentile)");
        let others: Vec<String> = [
            (busy_windows.as_str(), e.delivered),
            // The floors, shown where one set the figure (above the busy windows' own).
            (all_windows.as_str(), e.app_limited.filter(|&a| sets_figure(a))),
            (
                "the most delivered over one round trip",
                e.round_trip_floor().filter(|&a| x.lower_bound && sets_figure(a)),
            ),
            (
                episode_name(x, e.loss_delivery),
                e.loss_delivery.filter(|&a| sets_figure(a)),
            ),
            ("delivery while the queue stood", e.queued),
            (
                "delivery while losing to the policer",
                e.policer.filter(|p| p.shown == Shown::Fill).map(|p| p.rate),
            ),
            (
                "pace between the policer's drops",
                e.policer
                    .filter(|p| matches!(p.shown, Shown::DropGaps(_)))
                    .map(|p| p.rate),
            ),
            (
                "the rounds' pace after the bucket's run",
                e.policer
                    .filter(|p| matches!(p.shown, Shown::Rounds { .. }))
                    .map(|p| p.rate),
            ),
            ("ACK dispersion", e.dispersed),
            ("data-arrival dispersion", e.arrived),
            ("ACK dispersion on the receiver's clock", e.receiver_clocked()),
        ]
        .iter()
        .filter_map(|(name, r)| r.map(|r| format!("{name} {}", rate(r))))
        .collect();
        let how = match cap.method {
            Method::LinkRate => "link-rate, given".to_string(),
            m => m.as_str().to_string(),
        };
        // A member of a group sharing the path is judged by the group's utilisation, the
        // highest any member measured (`classify`): said where it decided — this one's
        // below the capacity, the group's at it.
        let group = c
            .group_utilisation
            .filter(|&g| util < super::capacity::AT_CAPACITY && g >= super::capacity::AT_CAPACITY)
            .map_or(String::new(), |g| {
                format!(
                    "; {}{} of it over one member's steady transfer",
                    super::classification::GROUP_DELIVERED,
                    crate::units::pct_beside(g, super::capacity::AT_CAPACITY)
                )
            });
        let of = match available {
            Some(a) => format!("the {} {LEFT_THIS_FLOW}; ", rate(a)),
            None => String::new(),
        };
        out.push(format!(
            "steady delivery {}{}{} = {} of {of}the bottleneck estimate {} ({how}{}{}{group})",
            rate(c.steady_rate),
            shared,
            busy,
            crate::units::pct_beside(util, super::capacity::AT_CAPACITY),
            rate(cap.rate),
            if x.lower_bound { ", a lower bound" } else { "" },
            if others.is_empty() {
                String::new()
            } else {
                format!("; {}", others.join(", "))
            }
        ));
        if let (Some(a), Some(other)) = (available, x.unseen_traffic()) {
            out.push(format!(
                "the link was shared: a queue stood for most of the steady transfer, so the link never idled, yet while it stood this flow delivered {} of the {} its packet spacing shows; about {} of it carried traffic this capture does not show",
                rate(a),
                rate(cap.rate),
                rate(other)
            ));
        }
    }
    if let Some(bdp) = x.bdp {
        // The summary's figure is whole bytes, and never 0 for a BDP that is not (a
        // loopback's 149 kbit/s x 18 µs is a third of a byte): see `super::whole_bytes`.
        let whole = super::whole_bytes(bdp) as f64;
        // The share is of the BDP as computed, unless under a byte: then of the byte shown.
        let bdp = if whole > bdp.round() { whole } else { bdp };
        // Little's law bounds what the path carried, not what stayed outstanding above a
        // hole (RFC 6675 pipe): where they differ the sentence names both.
        let carried = if bytes(x.max_in_network as f64) != bytes(x.max_flight as f64) {
            format!(
                ", of it in the network {} ({} of BDP; {}, {})",
                bytes(x.max_in_network as f64),
                pct(x.max_in_network as f64 / bdp.max(1e-9)),
                crate::summary::flight_rest(x.sack_permitted),
                if x.sack_permitted == Some(false) {
                    "RFC 6582"
                } else {
                    "RFC 6675"
                }
            )
        } else {
            String::new()
        };
        out.push(format!(
            "BDP {} = {}; max flight {} ({} of BDP){carried}",
            bytes(whole),
            x.capacity
                .map_or(format!("? x base RTT {}", ms(x.base_rtt_s)), |c| rules::rate_times_rtt(
                    x, c.rate
                )),
            bytes(x.max_flight as f64),
            pct(x.max_flight as f64 / bdp.max(1e-9))
        ));
    }
    if let Some(q) = x.queueing_s() {
        // With the sender's loop timed only at the handshake the rise is the receiver's
        // turnaround alone: the queue before here is in no sample (see the note).
        let queueing = if x.sender_loop_untimed {
            let at = if x.handshake_timed {
                "the handshake"
            } else {
                "its repairs"
            };
            format!(
                "{} measured, the receiver's turnaround only (the sender's loop is timed at {at} only: see the notes)",
                ms(q)
            )
        } else {
            ms(q)
        };
        out.push(format!(
            "RTT base {} median {} p95 {}: queueing delay {queueing}",
            ms(x.base_rtt_s),
            ms(x.median_rtt_s.unwrap_or(x.base_rtt_s)),
            ms(x.p95_rtt_s.unwrap_or(x.base_rtt_s)),
        ));
    }
    let rounds = x.estimate.policer.and_then(|p| match p.shown {
        Shown::Rounds { rounds, acks } => Some((p, rounds, acks)),
        _ => None,
    });
    if let Some((p, n, acks)) = rounds {
        // Before the bucket the ACKs carry the rounds back: each reports the data as the
        // receiver got it (RFC 5681 §4.2).
        let came = if acks {
            "were acknowledged (the ACKs reporting the data as it arrived)"
        } else {
            "came"
        };
        let burst = match x.estimate.burst_below_pipe {
            Some((flight, pipe)) => format!(
                "; and a run of drops random loss at the flow's own rate would not make came while the flight was at most {}, below the {} pipe at the line's rate: no queue at the line overflowed there",
                bytes(flight as f64),
                bytes(pipe)
            ),
            None => String::new(),
        };
        out.push(format!(
            "{ROUNDS_FINDING}: {n} rounds {came} in a run of about {} at the line rate (the upper quartile of the runs: the bucket full) and then at {} (the median of the rounds' tails, a quarter of a round trip or more of silence between rounds): it passes its depth at the line and then only as its tokens come (RFC 2697, Flach et al., SIGCOMM 2016){burst}",
            bytes(p.depth),
            rate(p.rate)
        ));
    } else if let Some(p) = x.estimate.policer {
        let passed = match p.shown {
            Shown::Fill | Shown::Rounds { .. } => format!("the flow delivering {} while it lost", rate(p.rate)),
            Shown::DropGaps(n) => format!(
                "the packets that survived its drops passing at {} (the median of {n} gaps between drops)",
                rate(p.rate)
            ),
        };
        // A bucket that let nothing through above the rate at the timeline's resolution
        // is not measured: no burst is named rather than a zero one.
        let burst = if p.depth >= 1.0 {
            format!(" and never more than a {} burst above that rate", bytes(p.depth))
        } else {
            String::new()
        };
        // On a link shared by flows between the same hosts the group's delivery is the
        // figure (`share_path`), and what passed this flow's drops was its share of the
        // policer: said so, or the policer's rate reads below what the path carried.
        let share = match x.capacity {
            // (Or that figure raised to the group's steady delivery, `classify_floored`.)
            Some(c)
                if x.flows_sharing > 1
                    && matches!(c.method, Method::SharedDeliveryRate | Method::DeliveryRate)
                    && c.rate > p.rate =>
            {
                format!(
                    " ({POLICER_SHARE} with {} flows sharing the link, the policer passed {} for them together)",
                    x.flows_sharing,
                    rate(c.rate)
                )
            }
            _ => String::new(),
        };
        out.push(format!(
            "{LOSSES_FINDING}, {passed}{burst}{share}: a token-bucket policer (Flach et al., SIGCOMM 2016) — it drops what a shaper would queue; pacing the sender below its rate avoids the losses"
        ));
    }
    out.extend(rules::evidence(f));
    out
}

/// What the episode whose delivery is `rate` (bytes/s) was: a loss or an ECN episode.
fn episode_name(x: &super::facts::Facts, rate: Option<f64>) -> &'static str {
    let ecn = x
        .stalls
        .iter()
        .find(|s| s.kind.is_congestion_episode() && s.delivered_bps.map(|b| b / 8.0) == rate)
        .is_some_and(|s| s.kind == StallKind::EcnEpisode);
    if ecn {
        "delivery during an ECN episode"
    } else {
        "delivery during a loss episode"
    }
}

/// The verdict rule's advice, then what a stall calls for whatever the verdict.
pub fn advice(f: &Findings<'_>) -> Vec<AdviceItem> {
    let x = f.facts;
    let mut out = rules::advice(f);
    out.extend(super::ecn::advice(f, &out));
    // Waits removed can shorten the transfer by their time at most: advice needs that to
    // be worth at least the advice law's 1.05x (139 ms of waits in a 170 s IRC session
    // asked for TCP_NODELAY for a 0.08% gain).
    let transfer_s = f.class.transfer_s();
    let worth = |wait_s: f64| transfer_s > wait_s && transfer_s / (transfer_s - wait_s) >= super::advice::MIN_GAIN;
    if let Some(s) = x.stall(StallKind::DelayedAck).filter(|s| worth(s.duration_s)) {
        out.push(super::advice::plain(
            AdviceKind::DisableNagle,
            Some("TCP_NODELAY (sender), TCP_QUICKACK (receiver)"),
            format!(
                "{} times a short segment waited for a delayed ACK ({} in all): set TCP_NODELAY on the sending socket (or TCP_QUICKACK at the receiver) so the last segment of each response goes out at once",
                s.events,
                secs(s.duration_s)
            ),
            x,
        ));
    }
    out
}

/// Notes on how far the figures can be trusted.
pub fn notes(f: &Findings<'_>) -> Vec<String> {
    let x = f.facts;
    let mut out = Vec::new();
    if x.flows_sharing > 1 {
        out.push(format!(
            "shares its path with {} other flow(s) between the same hosts at the same time; the bottleneck and utilisation are the group's",
            x.flows_sharing - 1
        ));
    }
    if let Some(rise) = x.queue_other_way {
        out.push(format!(
            "the RTT rose {} above its base while a transfer between the same hosts ran the other way: this flow's ACKs wait behind that data, so the rise may be the other direction's queue (two-way traffic, Zhang, Shenker & Clark 1991); it is not taken for a queue at this direction's bottleneck",
            crate::units::ms(rise)
        ));
    }
    // Next to the receiver, without timestamps and with the window never the limit, no
    // segment times the loop through the sender after the handshake: the end-to-end
    // samples hold it at the handshake's value (R5 ts_stripped at the client: median
    // 12.3 ms on a 12.2 ms base, while the sender's smoothed RTT averaged 63 ms behind the
    // bottleneck's queue).
    if x.sender_loop_untimed {
        // Without the handshake, a repair's time from the ACK that reached its hole is what
        // timed that loop (`tcp::rtt::repair`), at the losses only.
        let (at, value) = if x.handshake_timed {
            ("at the handshake only", "that handshake value")
        } else {
            (
                "only from the ACKs that reached a lost segment to the sender's repairs of it (the handshake is not in the capture)",
                "the least of those times",
            )
        };
        out.push(format!(
            "the loop through the sender was timed {at}: at this capture point no TCP timestamp echo, no window edge and no ACK before the data times it, so the RTT's median, p95 and max add {value} to the receiver's turnaround and show no queue between the sender and here (the bottleneck's, for data that crossed it before this point); a capture at the sender, or with TCP timestamps, measures it"
        ));
    }
    // Away from the sender its flight is the flight seen here plus what the path between
    // them held, at most what reaches here within one loop through the sender
    // (`tcp::sender_view`'s bound): where a sample of that loop held a wait of the sender's
    // own and would have made the largest flight larger, the figure kept to the bound, and
    // says why.
    if let (Some((aside, bound)), Some(transit)) = (x.loop_set_aside, x.transit) {
        if bytes(x.unbounded_flight as f64) != bytes(x.max_flight as f64) && x.unbounded_flight > x.max_flight {
            out.push(format!(
                "the sender's flight is the flight seen here plus what the path between the sender and here held (its data on the way here, the ACKs on the way to it), at most what reaches here within one loop through the sender without a wait of its own (its least, or its prompt samples' with a queue: {} when the longest sample was set aside): {} at most on this flow; samples of that loop up to {} held waits of the sender's own (an ACK held for its delayed-ACK timer or sent with its next request, RFC 1122 §4.2.3.2), and taken for the loop they would have paired its data with ACKs it had long since had, {} at the sender",
                ms(bound.secs_f64()),
                bytes(transit as f64),
                ms(aside.secs_f64()),
                bytes(x.unbounded_flight as f64)
            ));
        }
    }
    // Without the window's scale no segment's window is known in bytes, so no moment can
    // be told window-bound (the next segment fitting or not is unknowable): that time went
    // to the other limits, and the 0% the window's share then shows is no measurement.
    if x.sender_rwnd().is_none() {
        out.push(
            "the receiver's window is not known in bytes (its scale is not known): the time it held the sender cannot be told from the rest and is counted under the other limits, so the receiver window's share is not measured".to_string(),
        );
    }
    if let Some(why) = base_rtt_upper_bound(f) {
        out.push(format!(
            "with no round trip timed at the handshake and {why}, the base RTT ({}) is the least RTT seen after the queue may already have formed: {UPPER_BOUNDS}",
            crate::units::ms(x.base_rtt_s)
        ));
    }
    if x.capacity.is_none() {
        let why = match x.stretch_acks {
            Some(n) => {
                format!(", and the receiver acknowledged {n:.0} segments per ACK, so ACK spacing shows nothing of it")
            }
            None => String::new(),
        };
        out.push(format!(
            "no bottleneck rate (and no BDP): the sender was never busy long enough to fill the path, and no ACK or data spacing showed the link's rate from this capture point{why}; a capture at the receiver would, or give it with --link-rate"
        ));
    }
    if x.lower_bound && f.class.verdict != Label::Bottleneck {
        let why = match x.stretch_acks {
            Some(n) => format!(
                "the receiver acknowledged {n:.0} segments per ACK, so ACK spacing shows nothing of the bottleneck from this capture point (a capture at the receiver would)"
            ),
            None => match (x.spacing_outpaced(), x.capacity) {
                (Some(share), Some(c)) => format!(
                    "the {} spacing's strongest pace, {}, is the window's or a receiver timer's: {} of its bytes came at {} or faster, so the path is faster than that (give the rate with --link-rate)",
                    if c.method == Method::Dispersion { "ACK" } else { "data-arrival" },
                    rate(c.rate),
                    pct(share),
                    rate(super::facts::OUTPACED * c.rate)
                ),
                _ => "no ACK or data spacing showed a faster link (a capture at the receiver may; or give the rate with --link-rate)".to_string(),
            },
        };
        out.push(format!(
            "the bottleneck rate (and the BDP) is a lower bound: this flow never filled the path, and {why}"
        ));
    }
    out.extend(x.estimate.set_aside.iter().cloned());
    out
}

/// The words after the rate a link shared with traffic the capture does not show left the
/// flow, in the delivery sentence: the share printed before them is of that rate.
pub const LEFT_THIS_FLOW: &str = "the shared link left this flow";

/// How the evidence names a token bucket its rounds showed.
const ROUNDS_FINDING: &str = "a token bucket on the path (a policer or a shaper)";

/// How the evidence names a policer its losses showed, and what it says where the pace
/// that passed them was one member's share of a link flows shared.
const LOSSES_FINDING: &str = "losses with no queue building before them";
const POLICER_SHARE: &str = "this flow's share:";

/// Said of a rate while the sender had data that stands above the estimate (see `explain`).
pub const BUSY_ABOVE: &str =
    ", above the estimate: each bin's ACKs counted whole, though their data left up to a round trip before";

/// How far a busy rate may stand above the estimate before the sentence says so: the
/// rounding of three printed digits.
const BUSY_TOLERANCE: f64 = 1.005;

/// The quantity written right after `key` in `s` (up to the next ' ', ',', ';', ')' after
/// the unit), e.g. `after("BDP 47.8 KiB = ...", "BDP ")` is "47.8 KiB".
/// Why the base RTT (and so the BDP) only bounds the path's from above, if it does. A
/// capture that began mid-connection has no round trip timed before the flow's own queue
/// formed: where a queue stood most of what it shows, the least RTT it saw holds that
/// queue's floor too (R12 late_capture: 35.6 ms seen, the kernel's 14.2 ms taken at the
/// handshake). A queue that formed before the first packet and never drained stands in
/// every sample at its own depth, and shows no rise above the least of them: a flow that
/// kept its bottleneck busy from the first packet to the last, never pausing (or pausing,
/// in all, for less than its least RTT, which drains less queue than that RTT holds), gives
/// no sample the queue could not be in (R27 late_capture: 28.5 ms seen throughout, the
/// kernel's 0.51 ms taken at the handshake, the 200 KiB window sitting in the queue). A
/// repair's time holds the sender's wait for the news of the loss (more duplicate ACKs, a
/// reordering window: `tcp::rtt::repair`), never less than the loop.
pub fn base_rtt_upper_bound(f: &Findings<'_>) -> Option<&'static str> {
    let x = f.facts;
    let queue_stood = x.queue.as_ref().is_some_and(|q| q.most_of_the_time());
    // A pause drains at most its own length of queue (the link keeps sending at its rate
    // meanwhile), and no queue in the samples was longer than the least RTT: a sender that
    // held back for less than that in all never let a queue older than the capture drain.
    let held_back_s = f.class.share(Label::Sender) * f.class.steady_s;
    let never_paused = f.class.verdict == Label::Bottleneck && held_back_s < x.base_rtt_s;
    let repairs_only = (x.sender_loop_untimed || x.sender_loop_by_repairs) && !x.handshake_timed;
    if x.handshake_timed || !(queue_stood || never_paused || repairs_only) {
        return None;
    }
    Some(if queue_stood {
        "a queue standing for most of the transfer"
    } else if repairs_only {
        "the loop through the sender timed only by repairs, each holding the sender's wait for the news of the loss (more duplicate ACKs, a reordering window)"
    } else {
        "the flow keeping its bottleneck busy from the first packet to the last (its sender never held back, in all, for as long as its least RTT: a pause drains only its own length of queue, so a queue that formed before the capture began may never have drained)"
    })
}

fn after<'a>(s: &'a str, key: &str) -> Option<&'a str> {
    let i = s.find(key)? + key.len();
    let rest = &s[i..];
    // A number, a space, a unit.
    let num_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let unit = &rest[num_end..];
    let unit = unit.strip_prefix(' ').unwrap_or(unit);
    let unit_end = unit.find([' ', ',', ';', ')', ':']).unwrap_or(unit.len());
    let len = num_end + (rest.len() - num_end - unit.len()) + unit_end;
    Some(rest[..len].trim())
}

/// The delivery sentence's share of the estimate against the rate it names beside it
/// ("(R while the sender had data) = P% of the bottleneck estimate C"): P is R / C, as
/// printed (each figure rounded to three digits). A share computed from one quantity and
/// printed beside another is a contradiction in one sentence. A busy rate above the
/// estimate is said to be ([`BUSY_ABOVE`]), and then P is the steady delivery's share.
fn busy_share_disagrees(e: &str) -> Option<String> {
    use crate::units::parse;
    let said_above = e.contains(BUSY_ABOVE);
    let end = e
        .find(" while the sender had data)")
        .or_else(|| e.find(&format!(" while the sender had data{BUSY_ABOVE})")))?;
    let busy = parse(&e[e[..end].rfind('(')? + 1..end])?;
    let shown = parse(after(e, "= ")?)?;
    // The share is of what a shared link left the flow where the sentence names it.
    let cap = if e.contains(LEFT_THIS_FLOW) {
        parse(after(e, "% of the ")?)?
    } else {
        parse(after(e, "bottleneck estimate ")?)?
    };
    // A busy rate above the estimate is said to be, and then the share is the steady
    // delivery's (the group's where named); one said to be above it is.
    // (Three printed digits on each: a percent either way is rounding.)
    if busy > cap * 1.01 && !said_above {
        return Some(format!(
            "a rate while the sender had data, {busy}, above the estimate {cap} without saying why: {e}"
        ));
    }
    if said_above && busy < cap * 0.99 {
        return Some(format!(
            "a rate while the sender had data, {busy}, said to be above the estimate {cap}: {e}"
        ));
    }
    let r = if said_above {
        match after(e, " flows together ") {
            Some(group) => parse(group)?,
            None => parse(after(e, "steady delivery ")?)?,
        }
    } else {
        busy
    };
    let want = r / cap.max(1e-9);
    // Three printed digits on each of R and C, and the share's own rounding (whole
    // percents from 1%, one significant digit below: half a unit of the last digit).
    let last_digit = if shown >= 0.01 {
        0.01
    } else {
        10f64.powf((shown.max(1e-12) * 100.0).log10().floor()) / 100.0
    };
    let holds = (shown - want).abs() <= 0.5 * last_digit + 0.015 * want + 1e-12;
    (!holds).then(|| format!("the share {shown} is not {r} / {cap} = {want}: {e}"))
}

/// The delivery sentence's steady delivery (the flow's, and its group's) against the
/// estimate beside it: each is what the path carried over the whole steady transfer, so
/// neither is above the bottleneck estimate (RFC 6349 §3.3) — unless the user gave the
/// figure ("link-rate, given"), which the flow may beat. (The rate while the sender had
/// data is not held to it: it shares each bin's delivery out by the time the sender had data
/// in the bin, and where ACKs come further apart than a bin — a coarse clock, a link slower
/// than a segment per bin, a request/response flow busy a sliver of each bin — the shares
/// follow the ACKs: 217 kbit/s on a 200 kbit/s shaper in a simulated draw, 41.7 kbit/s
/// beside a 27.1 kbit/s bound for Nagle's exchanges; the sentence then says so:
/// [`busy_share_disagrees`].)
fn steady_above_estimate(e: &str) -> Option<String> {
    use crate::units::parse;
    if e.contains("link-rate, given") {
        return None;
    }
    let cap = parse(after(e, "bottleneck estimate ")?)?;
    let mut rates = vec![parse(after(e, "steady delivery ")?)?];
    rates.extend(after(e, " flows together ").and_then(parse));
    // Each figure printed to three digits: half a unit of the third on either side.
    let worst = rates.into_iter().fold(0.0, f64::max);
    (worst > cap * 1.01).then(|| format!("a steady delivery of {worst} bit/s above the bottleneck estimate {cap}: {e}"))
}

/// The delivery sentence's rate while the sender had data against the steady delivery it
/// stands beside (the group's, where the sentence names one): over less time, the time the
/// sender's data was in flight, the same data, so never the lower (teto iperf-mptcp printed
/// "281 kbit/s (253 kbit/s while the sender had data)": the delivery while room went unused
/// was counted for no one).
fn busy_below_steady(e: &str) -> Option<String> {
    use crate::units::parse;
    let end = e
        .find(" while the sender had data)")
        .or_else(|| e.find(&format!(" while the sender had data{BUSY_ABOVE})")))?;
    let busy = parse(&e[e[..end].rfind('(')? + 1..end])?;
    let steady = match after(e, " flows together ") {
        Some(group) => parse(group)?,
        None => parse(after(e, "steady delivery ")?)?,
    };
    // Each figure printed to three digits: half a unit of the third on either side.
    (busy < steady * 0.99)
        .then(|| format!("the rate while the sender had data, {busy}, below the steady delivery {steady}: {e}"))
}

/// The law that every evidence sentence agrees with the numbers beside it: the figures a
/// sentence states are the summary's (within the rounding of three digits), and a
/// comparison it states ("below the BDP") holds for the figures it names.
pub fn evidence_law(f: &crate::summary::FlowSummary) -> Vec<String> {
    use crate::units::{agrees, parse};
    let mut out = Vec::new();
    let mut figures = Vec::new();
    let mut check = |sentence: &str, key: &str, value: Option<f64>| {
        if let (Some(shown), Some(v)) = (after(sentence, key), value) {
            // A figure the summary holds as whole bytes is within half a byte of the sentence's.
            let whole_bytes = shown.ends_with(" B") && parse(shown).is_some_and(|x| (x - v).abs() <= 0.5);
            if !agrees(shown, v) && !whole_bytes {
                figures.push(format!("\"{key}{shown}\" but the figure is {v}: {sentence}"));
            }
        }
    };
    let flight = f.sender_max_flight_bytes.map(|b| b as f64);
    // A reference to a finding stands only beside the finding.
    let scale_finding = f.middlebox.iter().any(|m| m.kind.is_window_scale());
    for e in &f.evidence {
        if e.contains("see the middlebox finding") && !scale_finding {
            out.push(format!("a middlebox finding referred to but not made: {e}"));
        }
        if e.starts_with("BDP ") {
            check(e, "BDP ", f.bdp_bytes.map(|b| b as f64));
            check(e, "base RTT ", f.rtt_ms.min.map(|m| m / 1e3));
            check(e, "max flight ", flight);
            check(
                e,
                "of it in the network ",
                f.sender_max_in_network_bytes.map(|b| b as f64),
            );
        }
        if e.starts_with("RTT base ") {
            check(e, "RTT base ", f.rtt_ms.min.map(|m| m / 1e3));
            check(e, "median ", f.rtt_ms.median.map(|m| m / 1e3));
            check(e, "p95 ", f.rtt_ms.p95.map(|m| m / 1e3));
        }
        if e.starts_with("steady delivery ") {
            check(e, "bottleneck estimate ", f.bottleneck_bps);
            if let Some(v) = busy_share_disagrees(e) {
                out.push(v);
            }
            if let Some(v) = steady_above_estimate(e) {
                out.push(v);
            }
            if let Some(v) = busy_below_steady(e) {
                out.push(v);
            }
        }
        // A token bucket named is the estimate's method: the rounds' figure or the
        // policer's stands, or nothing says there was one. (A policer its losses showed
        // stays a finding beside a group's delivery, its drops having happened, and says
        // that the pace that passed them was this member's share.)
        let named = e.starts_with(ROUNDS_FINDING) || (e.starts_with(LOSSES_FINDING) && !e.contains(POLICER_SHARE));
        if named && f.bottleneck_method != Some(crate::summary::CapacityMethod::PolicedRate) {
            out.push(format!(
                "a token bucket named beside a {:?} estimate: {e}",
                f.bottleneck_method
            ));
        }
        if e.starts_with("receiver window max ") {
            check(e, "receiver window max ", f.max_rwnd_bytes.map(|b| b as f64));
        }
        if e.contains("; goodput ") {
            check(e, "; goodput ", Some(f.goodput_bps));
        }
        if e.starts_with("flight flat at ~") && e.contains("the pipe was full") {
            // A flat flight fills the pipe only with a queue holding its excess: the RTT
            // printed beside it rose (the sign `Facts::queue_shows` reads).
            check(e, "(median ", f.rtt_ms.median.map(|m| m / 1e3));
            check(e, " vs base ", f.rtt_ms.min.map(|m| m / 1e3));
            match (f.rtt_ms.min, f.rtt_ms.median) {
                (Some(min), Some(med)) if med - min >= 1e3 * super::facts::queue_sign_s(min / 1e3) => {}
                _ => out.push(format!(
                    "a flat flight said to fill the pipe with no rise of the RTT (min {:?} ms, median {:?} ms): {e}",
                    f.rtt_ms.min, f.rtt_ms.median
                )),
            }
        }
        if e.starts_with("flight flat at ~") {
            let level = after(e, "flight flat at ~").and_then(parse);
            for (key, above) in [
                ("below the receiver window (", false),
                ("at the receiver window (", true),
                ("below the BDP (", false),
                ("above the BDP (", true),
                ("below the link's BDP (", false),
                ("above the BDP of this flow's share of the link (", true),
            ] {
                if let (Some(l), Some(x)) = (level, after(e, key).and_then(parse)) {
                    // Compared as printed: each side rounded to three digits.
                    let holds = if above { l >= x * 0.995 } else { l < x * 1.005 };
                    if !holds {
                        out.push(format!("the flat flight {l} is not {key}{x}): {e}"));
                    }
                }
            }
        }
    }
    out.extend(figures);
    // The BDP flagged an upper bound exactly where a note says it is one.
    let said = f.notes.iter().any(|n| n.ends_with(UPPER_BOUNDS));
    if f.bdp_upper_bound != (said && f.bdp_bytes.is_some()) {
        out.push(format!(
            "bdp_upper_bound {} where the notes {} say the BDP is an upper bound",
            f.bdp_upper_bound,
            if said { "do" } else { "do not" }
        ));
    }
    out
}

/// How the note that the base RTT and the BDP only bound the path's from above ends.
const UPPER_BOUNDS: &str = "it and the BDP are upper bounds";

#[cfg(test)]
mod tests {
    use super::after;

    #[test]
    fn quantities_are_read_after_their_key() {
        let s = "BDP 47.8 KiB = 9.61 Mbit/s x base RTT 40.7 ms; max flight 18.4 KiB (38% of BDP)";
        assert_eq!(after(s, "BDP "), Some("47.8 KiB"));
        assert_eq!(after(s, "base RTT "), Some("40.7 ms"));
        assert_eq!(after(s, "max flight "), Some("18.4 KiB"));
        assert_eq!(
            after("below the BDP (924 B): the pipe", "below the BDP ("),
            Some("924 B")
        );
        assert_eq!(after("RTT base 17.0 µs median", "RTT base "), Some("17.0 µs"));
    }

    #[test]
    fn the_delivery_share_is_the_rate_beside_it_over_the_estimate() {
        use super::{busy_share_disagrees as bad, BUSY_ABOVE};
        // The P1 cross_tcp_onoff second flow's sentence after the fix, and before it with its
        // share put beside the group's true rate while the flow had data.
        let ok = "steady delivery 4.91 Mbit/s (2 flows together 38.3 Mbit/s) (38.2 Mbit/s while the sender had data) = 99% of the bottleneck estimate 38.5 Mbit/s (shared-delivery-rate)";
        assert_eq!(bad(ok), None);
        let wrong = ok.replace("= 99%", "= 124%");
        assert!(bad(&wrong).is_some());
        assert_eq!(bad("steady delivery 54.5 bit/s (479 kbit/s while the sender had data) = 0.05% of the bottleneck estimate 949 Mbit/s (x)"), None);
        assert!(bad("steady delivery 54.5 bit/s (479 kbit/s while the sender had data) = 0.2% of the bottleneck estimate 949 Mbit/s (x)").is_some());
        assert_eq!(bad("steady delivery 5.15 Mbit/s (5.90 Mbit/s while the sender had data) = 5% of the bottleneck estimate 107 Mbit/s (x)"), None);
        // On a shared link the share is of what the link left the flow, named before the
        // estimate: against the estimate it would read 70%.
        let shared = "steady delivery 30.0 Mbit/s (31.0 Mbit/s while the sender had data) = 97% of the 31.8 Mbit/s the shared link left this flow; the bottleneck estimate 43.0 Mbit/s (arrival-dispersion)";
        assert_eq!(bad(shared), None);
        assert!(bad(&shared.replace("= 97%", "= 72%")).is_some());
        // Without the busy rate the sentence names no second rate to check.
        assert_eq!(
            bad("steady delivery 33.0 Mbit/s = 98% of the bottleneck estimate 38.5 Mbit/s (x)"),
            None
        );
        // P38 nagle_delack at the server before the busy rate above the bound was said:
        // the share was the busy rate's, 154% of the estimate.
        let nagle = "steady delivery 25.5 kbit/s (41.7 kbit/s while the sender had data) = 154% of the bottleneck estimate 27.1 kbit/s (delivery-rate, a lower bound)";
        assert!(bad(nagle).is_some());
        let said = format!(
            "steady delivery 25.5 kbit/s (41.7 kbit/s while the sender had data{BUSY_ABOVE}) = 94% of the bottleneck estimate 27.1 kbit/s (delivery-rate, a lower bound)"
        );
        assert_eq!(bad(&said), None);
        // Said, the share is the steady delivery's, not the busy rate's.
        assert!(bad(&said.replace("= 94%", "= 154%")).is_some());
        // And said only where it holds.
        assert!(bad(&said.replace("41.7 kbit/s", "21.7 kbit/s")).is_some());
    }

    #[test]
    fn a_token_bucket_is_named_only_beside_its_estimate() {
        // The policed client of fixtures/tbf_policer_rounds as analysed (its golden JSON).
        let json: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/golden/tbf_policer_rounds-client.json")).unwrap();
        let mut f: crate::summary::FlowSummary = serde_json::from_value(json["flows"][0].clone()).unwrap();
        assert!(
            f.evidence.iter().any(|e| e.starts_with(super::ROUNDS_FINDING)),
            "{:?}",
            f.evidence
        );
        assert_eq!(super::evidence_law(&f), Vec::<String>::new());
        // R18 multi_flow_3 before a shared link's members dropped their rounds: the bucket
        // named beside the group's delivery.
        f.bottleneck_method = Some(crate::summary::CapacityMethod::SharedDeliveryRate);
        let v = super::evidence_law(&f);
        assert!(v.iter().any(|v| v.contains("a token bucket named")), "{v:?}");
        // A policer its losses showed, beside a group's delivery: named as the member's
        // share it stands (a census draw: two flows through one policer), bare it does not.
        let losses = format!("{}, the packets that survived its drops passing at 216 Mbit/s (the median of 118 gaps between drops): a token-bucket policer", super::LOSSES_FINDING);
        f.evidence = vec![losses.clone()];
        assert_eq!(super::evidence_law(&f).len(), 1);
        f.evidence = vec![losses.replace(
            "between drops)",
            &format!(
                "between drops) ({} with 2 flows sharing the link, the policer passed 249 Mbit/s for them together)",
                super::POLICER_SHARE
            ),
        )];
        assert_eq!(super::evidence_law(&f), Vec::<String>::new());
    }

    /// `bdp_upper_bound` and the note that says so go together (the flag only with a BDP).
    #[test]
    fn the_bdp_is_flagged_an_upper_bound_where_a_note_says_so() {
        let json: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/golden/late_capture-client.json")).unwrap();
        let mut f: crate::summary::FlowSummary = serde_json::from_value(json["flows"][0].clone()).unwrap();
        assert!(f.bdp_bytes.is_some() && !f.bdp_upper_bound);
        assert_eq!(super::evidence_law(&f), Vec::<String>::new());
        f.notes.push(format!(
            "with no round trip timed at the handshake and x, y: {}",
            super::UPPER_BOUNDS
        ));
        assert_eq!(super::evidence_law(&f).len(), 1);
        f.bdp_upper_bound = true;
        assert_eq!(super::evidence_law(&f), Vec::<String>::new());
        f.notes.pop();
        assert_eq!(super::evidence_law(&f).len(), 1);
    }

    #[test]
    fn the_rate_while_the_sender_had_data_is_not_below_the_steady_delivery() {
        use super::busy_below_steady as bad;
        // teto iperf-mptcp before a5ae39a.
        assert!(bad("steady delivery 281 kbit/s (253 kbit/s while the sender had data) = 5% of the bottleneck estimate 4.80 Mbit/s (dispersion)").is_some());
        assert_eq!(bad("steady delivery 3.24 Mbit/s (10.2 Mbit/s while the sender had data) = 35% of the bottleneck estimate 28.7 Mbit/s (dispersion)"), None);
        // Against the group's rate where the sentence names it.
        assert_eq!(bad("steady delivery 4.91 Mbit/s (2 flows together 38.3 Mbit/s) (38.4 Mbit/s while the sender had data) = 99% of the bottleneck estimate 38.5 Mbit/s (shared-delivery-rate)"), None);
        assert!(bad("steady delivery 4.91 Mbit/s (2 flows together 38.3 Mbit/s) (30.2 Mbit/s while the sender had data) = 78% of the bottleneck estimate 38.5 Mbit/s (shared-delivery-rate)").is_some());
        // No busy rate: nothing to compare.
        assert_eq!(
            bad("steady delivery 33.0 Mbit/s = 98% of the bottleneck estimate 38.5 Mbit/s (x)"),
            None
        );
    }

    #[test]
    fn no_steady_delivery_is_above_the_estimate() {
        use super::steady_above_estimate as bad;
        // tls-subjectaltname flow 32 before the steady floor.
        assert!(bad(
            "steady delivery 4.10 Mbit/s = 103% of the bottleneck estimate 3.99 Mbit/s (delivery-rate, a lower bound)"
        )
        .is_some());
        assert_eq!(bad("steady delivery 4.10 Mbit/s = 100% of the bottleneck estimate 4.10 Mbit/s (delivery-rate, a lower bound)"), None);
        // The group's rate counts too; the busy rate does not.
        assert!(bad("steady delivery 4.91 Mbit/s (2 flows together 40.0 Mbit/s) = 104% of the bottleneck estimate 38.5 Mbit/s (shared-delivery-rate)").is_some());
        assert_eq!(bad("steady delivery 1.34 Mbit/s (24.0 Mbit/s while the sender had data) = 79% of the bottleneck estimate 30.4 Mbit/s (delivery-rate)"), None);
        // A user's figure the flow beat is the user's to explain.
        assert_eq!(
            bad("steady delivery 40.0 Mbit/s = 104% of the bottleneck estimate 38.5 Mbit/s (link-rate, given)"),
            None
        );
    }
}
