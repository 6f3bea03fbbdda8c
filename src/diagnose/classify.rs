//! The limitation timeline: every bin's time goes to exactly one label, claimed by the
//! rules of [`super::rules::CLAIMS`] in precedence order (idle and receiver-window time come
//! straight from the chronograph; busy time is bottleneck while a queue stood, delivery
//! reached capacity or a flat flight filled the pipe with the RTT raised to hold it, sender
//! when the flight sat on a plateau below that, cwnd otherwise). The
//! fractions, the verdict ([`super::rules::VERDICTS`], then the largest share) and the
//! periods follow from the per-bin account.

use super::classification::Classification;
use super::queue::StandingQueue;
use super::restart;
use super::rounds::{self, Round};
use super::rules::{self, bottleneck, sender, Account, BinCtx, Left};
use super::startup;
use super::timeline::Timeline;
use super::Label;
use crate::time::{Span, Timestamp};
use crate::units::pct;

pub struct Input<'a> {
    pub tl: &'a Timeline,
    /// Payload bytes/s of the bottleneck, if known (and trusted).
    pub capacity: Option<f64>,
    /// The BDP of that capacity, bytes (`Facts::bdp_at`): the flight that fills the pipe.
    pub pipe: Option<f64>,
    pub base_rtt: Span,
    pub mss: u32,
    /// Bytes delivered per bin of `tl` by every flow sharing the path (this one included);
    /// None when the flow had the path to itself.
    pub shared_delivered: Option<&'a [f64]>,
    /// Of a group sharing the path: the link's utilisation the group reached, as its
    /// members measured it ([`super::facts::Facts::group_utilisation`]); None before the
    /// group was judged, or for a flow alone.
    pub group_utilisation: Option<f64>,
    /// The standing queue (see `queue`): which bins lay in one, and whether one stood most
    /// of the steady transfer; None when none could be judged.
    pub queue: Option<&'a StandingQueue>,
    /// The RTT rose above the base (the flow's queueing delay is a sign of a full pipe:
    /// `Facts::queue_shows`): a flight above the BDP then sat in the path's queue.
    pub rtt_rose: bool,
    /// Spans the path could carry nothing (outages: data outstanding, nothing acknowledged
    /// for longer than a retransmission timer): what limited the flow is judged while the
    /// path could carry data, so their bins count for no label (they are reported as
    /// stalls).
    pub excluded: &'a [(Timestamp, Timestamp)],
    /// When the recovery of the flow's first loss ended ([`super::facts::Facts::recovered`]).
    pub recovered: Option<Timestamp>,
}

/// The steady part must be at least this share of the transfer, or hold a delivery window
/// of round trips, to stand for it alone; otherwise the whole transfer (start-up included)
/// is used.
const MIN_STEADY_SHARE: f64 = 0.5;

pub fn classify(inp: &Input<'_>) -> Classification {
    let tl = inp.tl;
    let rounds: Vec<Round> = rounds::rounds(tl, inp.base_rtt);
    let k = rounds::bins_per_round(tl, inp.base_rtt);
    let round_s = (k as f64 * tl.width.secs_f64()).max(1e-9);
    let slow_start_end = startup::end_round(&rounds);
    let startup_round = startup::ramp_end(
        &rounds,
        slow_start_end,
        inp.capacity
            .filter(|_| inp.shared_delivered.is_none())
            .map(|c| c * round_s),
    )
    .max(startup::after_recovery(
        &rounds,
        slow_start_end,
        startup::bin_of(tl, inp.recovered),
    ));
    let startup_bin = rounds.get(startup_round).map_or(tl.bins.len(), |r| r.first);
    let flat = sender::plateau_rounds(&rounds, inp.mss, startup_round);
    // A flat stretch that holds the BDP (of the judged capacity) while the RTT rose is
    // the pipe full, not the sender's buffer (see `bottleneck::FullPipe`); the rest of the
    // flat stretches are the sender's.
    let pipe = inp.pipe;
    let lows = low_points(&rounds);
    let full: Vec<bool> = lows
        .iter()
        .zip(&flat)
        .map(|(low, &f)| f && low.is_some_and(|m| bottleneck::fills_pipe(m, pipe, inp.rtt_rose)))
        .collect();
    let plateau: Vec<bool> = flat.iter().zip(&full).map(|(&f, &p)| f && !p).collect();

    // Delivery rate around each bin over two rounds (one each side): over less, how the
    // bins cut the ACK train shows more than the path does.
    let width_s = tl.width.secs_f64();
    let delivered: Vec<f64> = match inp.shared_delivered {
        Some(s) => s.to_vec(),
        None => tl.bins.iter().map(|b| b.delivered as f64).collect(),
    };
    let h = k;
    let mut prefix = vec![0.0; delivered.len() + 1];
    for (i, d) in delivered.iter().enumerate() {
        prefix[i + 1] = prefix[i] + d;
    }
    let local_rate = |i: usize| {
        let lo = i.saturating_sub(h);
        let hi = (i + h + 1).min(delivered.len());
        (prefix[hi] - prefix[lo]) / ((hi - lo) as f64 * width_s)
    };

    // Bins whose middle falls in an outage, or in the slow start that follows one (the
    // sender's timer cut its window to one segment: `restart`).
    let restarts = restart::after_outages(tl, inp.excluded, k, inp.mss);
    let out: Vec<bool> = (0..tl.bins.len())
        .map(|i| {
            let mid = restart::mid(tl, i);
            restart::within(inp.excluded, mid) || restart::within(&restarts, mid)
        })
        .collect();
    // Per-bin account: each rule in turn takes what it explains of the bin's time.
    let mut per_bin: Vec<[u64; 4]> = Vec::with_capacity(tl.bins.len());
    // Per bin, the time `FullPipe` claimed (within the bottleneck's).
    let mut full_ns: Vec<u64> = vec![0; tl.bins.len()];
    // Per bin, the time `sender::WindowUnused` claimed (within the sender's).
    let mut unused_ns: Vec<u64> = vec![0; tl.bins.len()];
    // Per bin, the receiver window's time while the window was at least the BDP all the bin
    // (its least window, as the sender read it): a window that large lets the sender fill
    // the pipe (rate = window / RTT, RFC 6349 §3.3.1), so that wait held no capacity back.
    let mut wide_ns: Vec<u64> = vec![0; tl.bins.len()];
    let mut held_window: Option<u64> = None;
    for (i, b) in tl.bins.iter().enumerate() {
        if out[i] {
            per_bin.push([0; 4]);
            continue;
        }
        let ctx = BinCtx {
            bin: b,
            local_rate: local_rate(i),
            capacity: inp.capacity,
            plateau: plateau.get(i / k).copied().unwrap_or(false),
            full_pipe: full.get(i / k).copied().unwrap_or(false),
            queue: inp.queue.and_then(|q| q.bins.get(i).copied()).unwrap_or(false),
        };
        let mut left = Left {
            busy: b.busy_ns,
            rwnd: b.rwnd_ns,
            idle: b.idle_ns,
        };
        let mut t = [0u64; 4];
        for rule in rules::CLAIMS {
            let got = rule.claim(&ctx, &mut left);
            if rule.name() == bottleneck::FULL_PIPE {
                full_ns[i] = got;
            }
            if rule.name() == rules::sender::WINDOW_UNUSED {
                unused_ns[i] = got;
            }
            t[rule.label().index()] += got;
        }
        debug_assert_eq!(left.busy + left.rwnd + left.idle, 0, "every nanosecond has a label");
        // A bin the sender sent nothing in waited on the window of the last one it sent in.
        held_window = b.min_window.or(held_window);
        if let (Some(p), Some(w)) = (pipe, held_window) {
            if w > 0 && w as f64 >= p {
                wide_ns[i] = t[Label::ReceiverWindow.index()];
            }
        }
        per_bin.push(t);
    }

    let sum = |range: std::ops::Range<usize>| {
        let mut s = [0u64; 4];
        for t in &per_bin[range] {
            for j in 0..4 {
                s[j] += t[j];
            }
        }
        s
    };
    let frac = |s: [u64; 4]| {
        let total: u64 = s.iter().sum();
        if total == 0 {
            [0.0; 4]
        } else {
            s.map(|x| x as f64 / total as f64)
        }
    };
    let all = sum(0..per_bin.len());
    let steady_bins = startup_bin.min(per_bin.len())..per_bin.len();
    let mut steady = sum(steady_bins.clone());
    let (total_all, total_steady): (u64, u64) = (all.iter().sum(), steady.iter().sum());
    let mut steady_from = steady_bins.start;
    // Long enough to hold one delivery window, the steady part stands alone however long
    // the start-up was: what it is judged by (its delivery against the capacity) is
    // measured over such windows (R30 ts_stripped at the client: 2.13 s of start-up on a
    // 300 ms path, then seven rounds at 88% bottleneck, judged whole as cwnd-limited).
    // Its time is counted as accounted (the rounds are the timeline's slices of a base RTT,
    // and an outage's or a lost connection's take no part in it: 8 ms of a lost connection's
    // steady time after 416 ms of start-up on a 100 ms path counted as 33 rounds, and one
    // ACK in one 8 ms bin read a steady delivery of 1.46 Mbit/s on a 1 Mbit/s link).
    let holds_a_window = total_steady as f64 >= super::capacity::DELIVERY_ROUNDS as f64 * inp.base_rtt.nanos() as f64;
    if (total_steady as f64) < MIN_STEADY_SHARE * total_all as f64 && !holds_a_window {
        steady = all;
        steady_from = 0;
    }
    let fractions = frac(steady);
    let steady_ns: u64 = steady.iter().sum();
    let steady_s = steady_ns as f64 / 1e9;
    let share_of_steady = |ns: u64| {
        if steady_ns > 0 {
            ns as f64 / steady_ns as f64
        } else {
            0.0
        }
    };
    let kept = |i: &usize| !out[steady_from + *i];
    // A per-bin time's share of the steady transfer, over the bins kept.
    let steady_share = |ns: &[u64]| {
        share_of_steady(
            ns[steady_from..]
                .iter()
                .enumerate()
                .filter(|(i, _)| kept(i))
                .map(|(_, &t)| t)
                .sum(),
        )
    };
    // The idle time, and the part of it with data still in flight, in one pass.
    let (idle_ns, room_ns) = tl.bins[steady_from..]
        .iter()
        .enumerate()
        .filter(|(i, _)| kept(i))
        .fold((0u64, 0u64), |(idle, room), (_, b)| {
            (idle + b.idle_ns, room + b.idle_room_ns)
        });
    let idle_share = share_of_steady(idle_ns);
    let room_idle_share = share_of_steady(room_ns);
    let window_unused_share = steady_share(&unused_ns);
    let plateau_share = fractions[Label::Sender.index()] - idle_share - window_unused_share;
    let typical_flight = |marked: &[bool]| {
        let mut levels: Vec<u64> = rounds
            .iter()
            .enumerate()
            .filter(|&(j, _)| marked.get(j).copied().unwrap_or(false))
            .map(|(_, r)| r.max_flight)
            .collect();
        levels.sort_unstable();
        levels.get(levels.len() / 2).copied().unwrap_or(0)
    };
    let plateau_flight = typical_flight(&plateau);
    let plateau_low = {
        let mut levels: Vec<u64> = lows
            .iter()
            .enumerate()
            .filter(|&(j, _)| plateau.get(j).copied().unwrap_or(false))
            .filter_map(|(_, l)| *l)
            .collect();
        levels.sort_unstable();
        levels
            .get(levels.len() / 2)
            .copied()
            .unwrap_or(plateau_flight)
            .min(plateau_flight)
    };
    let full_pipe_flight = typical_flight(&full);
    let rwnd_wide_share = steady_share(&wide_ns);
    let full_pipe_share = steady_share(&full_ns);

    // What the flow delivered in its steady time: each bin's delivery for the share of the
    // bin its time was accounted in, as the steady time is the accounted time. Delivery in
    // bins no state accounts for (after a stall the timeline leaves out, its repair's
    // ACKs) is not the steady transfer's: counted whole, an outage's repair 2 s after 184
    // ms of steady transfer read 4.56 Mbit/s on a 4 Mbit/s link.
    let width_ns = tl.width.nanos().max(1) as f64;
    let accounted = |b: &super::timeline::Bin| (b.state_ns() as f64 / width_ns).min(1.0);
    let own: f64 = tl.bins[steady_from..]
        .iter()
        .enumerate()
        .filter(|(i, _)| kept(i))
        .map(|(_, b)| b.delivered as f64 * accounted(b))
        .sum();
    // A delivery is rated over a round trip at least: data is not delivered, in the sense
    // that its sender learns it arrived, faster than a round trip carries it (tcp_rate.c
    // discards a sample whose interval is below the minimum RTT, `tcp_rate_gen`). Census
    // seed 4242: 8 ms of steady time left between a start-up and two outages on a 250 ms
    // path, one segment's ACK in it, read 1.46 Mbit/s on a 1 Mbit/s link.
    let rate_s = steady_s.max(inp.base_rtt.secs_f64());
    let steady_rate = if steady_s > 0.0 { own / rate_s } else { 0.0 };
    // The group's delivery over the same bins as the flow's own: the bins an outage of
    // this flow took out of its steady time are out of the group's too (summed over all of
    // them and divided by the steady time left, a 1 s outage of one upload beside another
    // that kept delivering read 5.74 Gbit/s on a 100 Mbit/s path). And each bin's share of
    // the group's delivery is the share of the bin this flow's time was accounted in: the
    // steady time is the flow's accounted time, and a connection left open after its last
    // burst accounts nothing while the others go on delivering (an on/off flow beside a bulk
    // one, its steady 461 ms against 917 ms of bins, read the group at 189 Mbit/s on a
    // 100 Mbit/s path).
    let shared_steady_rate = inp.shared_delivered.map(|s| {
        let d: f64 = s
            .get(steady_from..)
            .unwrap_or(&[])
            .iter()
            .zip(&tl.bins[steady_from..])
            .enumerate()
            .filter(|(i, _)| kept(i))
            .map(|(_, (&x, b))| x * accounted(b))
            .sum();
        if steady_s > 0.0 {
            d / rate_s
        } else {
            0.0
        }
    });
    // Utilisation counts the time the sender had data: while it idled, the path held
    // nothing back.
    let busy_share = if steady_ns > 0 {
        (1.0 - idle_share).max(0.0)
    } else {
        0.0
    };
    // The delivery while the sender had data, over that time: each bin's delivery (the
    // group's, for a flow sharing the path) counts for the share of the bin this flow had
    // data (its busy and receiver-window time). Dividing the whole steady delivery by the
    // busy share instead counts what was delivered while the sender idled (the ACKs of a
    // flight it did not follow up, or what the others delivered) as if it had gone through
    // in its busy time, and reads above the capacity (RFC 6349 §3.3: a link's throughput is
    // bounded by its bottleneck bandwidth).
    //
    // The link's own delivery rate beside it: where a queue stood (RFC 8289: the least RTT
    // of the interval stayed above base + target) the link behind it never idled, whatever
    // this flow delivered there — traffic the capture does not show took the rest, as the
    // standing-queue claim says per bin. Those bins together count at the capacity (if the
    // flow delivered less over them: bin by bin, ACK timing moves bytes between neighbours,
    // and the larger of each would count some twice), the others at the flow's delivery.
    // For a flow alone on its path the two agree (its queue stands only while it delivers
    // at the capacity); not for a group of flows, whose summed delivery is the link's
    // already.
    let (busy_rate, link_busy_rate) = {
        let (mut d, mut d_queued, mut had_ns, mut queued_ns) = (0.0, 0.0, 0u64, 0u64);
        for (i, b) in tl.bins[steady_from..].iter().enumerate().filter(|(i, _)| kept(i)) {
            let total = b.busy_ns + b.rwnd_ns + b.idle_ns;
            let had = b.busy_ns + b.rwnd_ns;
            if total > 0 && had > 0 {
                let delivered = match inp.shared_delivered {
                    Some(s) => s.get(steady_from + i).copied().unwrap_or(0.0),
                    None => b.delivered as f64,
                };
                let queued = inp.shared_delivered.is_none()
                    && inp
                        .queue
                        .is_some_and(|q| q.bins.get(steady_from + i).copied().unwrap_or(false));
                let share = delivered * had as f64 / total as f64;
                d += share;
                had_ns += had;
                if queued {
                    d_queued += share;
                    queued_ns += had;
                }
            }
        }
        if had_ns > 0 && busy_share > 0.0 {
            // Over a round trip at least, as the steady delivery above.
            let had_s = (had_ns as f64 / 1e9).max(inp.base_rtt.secs_f64());
            let full = inp.capacity.unwrap_or(0.0) * queued_ns as f64 / 1e9;
            (d / had_s, (d - d_queued + d_queued.max(full)) / had_s)
        } else {
            (0.0, 0.0)
        }
    };
    // No lower than over all the steady time: what was delivered while the sender let room
    // go unused (its data in flight, nothing new written) was its data too, and its idle
    // time with nothing outstanding delivers nothing (sndbuf_32k at the sender: 11.7 Mbit/s
    // "while the sender had data" beside 11.8 over all).
    let overall = shared_steady_rate.unwrap_or(steady_rate);
    let (busy_rate, link_busy_rate) = (busy_rate.max(overall), link_busy_rate.max(overall));
    let utilisation = inp.capacity.map(|c| busy_rate / c);
    let link_utilisation = inp.capacity.map(|c| link_busy_rate / c);

    // A group's utilisation judges only a flow that shares the path.
    let group_utilisation = inp.group_utilisation.filter(|_| inp.shared_delivered.is_some());
    let account = Account {
        fractions,
        idle_share,
        // The queue's own judgement, the one its evidence prints and its law reads (the
        // share of time in standing intervals, over the steady transfer's full intervals).
        standing_queue: inp.queue.is_some_and(StandingQueue::most_of_the_time),
        full_pipe_share,
        utilisation,
        // The flow's own: a group's delivery keeps a shared link full while a member idles.
        own_utilisation: inp.capacity.map(|c| steady_rate / c),
        room_idle_share,
        window_unused_share,
        shared: inp.shared_delivered.is_some(),
        group_utilisation,
    };
    let decided = rules::VERDICTS.iter().find(|v| v.decides(&account)).map(|v| v.label());
    let verdict = decided.unwrap_or_else(|| {
        // Below capacity over the steady transfer, the path did not hold the flow back as a
        // whole, however many rounds touched it (a sender backing off after each loss
        // reaches the capacity between losses): the verdict is what kept it below. For a
        // flow sharing the path, by the group's utilisation once the group is judged (one
        // member's steady period can take in the others' start and end, and read low).
        // What stands against that: time the pipe was shown full without the capacity
        // estimate — a loss-free flat flight of at least the BDP with the RTT raised to hold
        // it (`FullPipe`): no backing off after losses, and a queue the ACK clock drained at
        // the link's pace. Below capacity the bottleneck competes with that time alone (an
        // estimate above what the ACK clock showed does not unmake a full pipe).
        // The link's utilisation is what says whether the path was full: below capacity
        // counts the intervals a queue stood in as full.
        let group = match (account.shared, account.group_utilisation) {
            (false, _) => Some(0.0),
            (true, g) => g,
        };
        let below_capacity = group.is_some_and(|g| {
            utilisation.is_some_and(|u| u.max(link_utilisation.unwrap_or(0.0)).max(g) < bottleneck::AT_CAPACITY)
        });
        // Nor did the receiver's window where it was at least the BDP: it let the sender
        // fill the pipe, so only its time below the BDP competes.
        // The window the sender left unused in recovery, short of the half that decides
        // (`WindowUnusedDecides`), was the congestion window's pace still (RFC 7661 §4.3:
        // a window used at least half way is validated): it competes as the window's.
        let share = |l: Label| match l {
            Label::Sender => fractions[l.index()] - window_unused_share,
            Label::Cwnd => fractions[l.index()] + window_unused_share,
            Label::Bottleneck if below_capacity => full_pipe_share,
            Label::ReceiverWindow if below_capacity => (fractions[l.index()] - rwnd_wide_share).max(0.0),
            _ => fractions[l.index()],
        };
        *Label::ALL
            .iter()
            .filter(|l| !(below_capacity && **l == Label::Bottleneck && full_pipe_share == 0.0))
            .max_by(|a, b| share(**a).total_cmp(&share(**b)))
            .expect("four labels")
    });

    let startup_end = tl.start_of(startup_bin.min(tl.bins.len()));
    Classification {
        fractions,
        fractions_all: frac(all),
        verdict,
        periods: periods(tl, &per_bin, k),
        startup_end,
        startup_s: (startup_end - tl.origin).secs_f64().max(0.0),
        steady_rate,
        shared_steady_rate,
        utilisation,
        link_utilisation,
        group_utilisation,
        busy_rate,
        idle_share,
        room_idle_share,
        window_unused_share,
        plateau_share: plateau_share.max(0.0),
        plateau_flight,
        plateau_low,
        full_pipe_share,
        full_pipe_flight,
        rwnd_wide_share,
        steady_s,
        whole: steady_from == 0 && steady_bins.start > 0,
    }
}

/// Each round's low point: the least flight after a send over the round and its two
/// neighbours (`Round::min_flight`), None when one of them cannot say (ACKs came but no
/// data left). A round is shorter than the cycle of a sender that sends a burst and then
/// waits for its send buffer to drain (the wait is the queue's length plus the round), so a
/// round that falls inside the burst shows only its top; three rounds hold a cycle's trough.
fn low_points(rounds: &[Round]) -> Vec<Option<u64>> {
    (0..rounds.len())
        .map(|j| {
            let near = &rounds[j.saturating_sub(1)..(j + 2).min(rounds.len())];
            near.iter().try_fold(u64::MAX, |m, r| r.min_flight.map(|f| m.min(f)))
        })
        .collect()
}

/// Most periods kept per flow; beyond it the shortest are absorbed by their neighbours.
const MAX_PERIODS: usize = 400;

/// Consecutive bins with the same dominant label, merged; periods shorter than a round
/// are absorbed into the previous one so the timeline does not flicker.
fn periods(tl: &Timeline, per_bin: &[[u64; 4]], bins_per_round: usize) -> Vec<(Timestamp, Timestamp, Label)> {
    let mut out: Vec<(usize, usize, Label)> = Vec::new();
    for (i, t) in per_bin.iter().enumerate() {
        if t.iter().sum::<u64>() == 0 {
            continue;
        }
        let label = Label::ALL[(0..4).max_by_key(|&j| t[j]).expect("four")];
        match out.last_mut() {
            Some((_, end, l)) if *l == label && *end == i => *end = i + 1,
            _ => out.push((i, i + 1, label)),
        }
    }
    // Absorb short periods into their predecessor.
    let mut merged: Vec<(usize, usize, Label)> = Vec::new();
    for p in out {
        match merged.last_mut() {
            Some(last) if p.1 - p.0 < bins_per_round && last.1 == p.0 => last.1 = p.1,
            Some(last) if last.2 == p.2 && last.1 == p.0 => last.1 = p.1,
            _ => merged.push(p),
        }
    }
    while merged.len() > MAX_PERIODS {
        let k = (1..merged.len())
            .min_by_key(|&k| merged[k].1 - merged[k].0)
            .expect("more than one");
        merged[k - 1].1 = merged[k].1;
        merged.remove(k);
    }
    merged
        .into_iter()
        .map(|(a, b, l)| (tl.start_of(a), tl.start_of(b), l))
        .collect()
}

/// The law of the limits (on the summary): the four shares sum to one; the verdict is one of
/// the spec's words; a judged flow has shares, an undetermined one none, and says why.
pub fn law(f: &crate::summary::FlowSummary) -> Vec<String> {
    let mut out = Vec::new();
    match (&f.limits, f.verdict) {
        (None, super::Verdict::Undetermined) => {
            if !f.notes.iter().any(|n| n.starts_with("undetermined:")) {
                out.push("undetermined without a reason".into());
            }
        }
        (Some(l), super::Verdict::Limited(_)) => {
            let sum = l.receiver_window + l.cwnd + l.bottleneck + l.sender;
            if (sum - 1.0).abs() > 0.001 {
                out.push(format!("limit shares sum to {sum}"));
            }
            // A window unknown in bytes cannot be shown full: its 0% is no measurement, and
            // the output must say so rather than let it read as "never the limit".
            if f.max_rwnd_bytes.is_none()
                && l.receiver_window == 0.0
                && !f
                    .notes
                    .iter()
                    .any(|n| n.contains("the receiver window's share is not measured"))
            {
                out.push("receiver window's share 0% with the window unknown in bytes, unqualified".into());
            }
            // The steady transfer's sentence prints the same shares as the limits line.
            let shares = format!(
                "receiver window {}, cwnd {}, bottleneck {}, sender {}",
                pct(l.receiver_window),
                pct(l.cwnd),
                pct(l.bottleneck),
                pct(l.sender)
            );
            let judged = f
                .evidence
                .iter()
                .find(|e| e.starts_with("steady transfer ") || e.starts_with("transfer judged whole, "));
            if let Some(e) = judged.filter(|e| !e.ends_with(&shares)) {
                out.push(format!("\"{e}\" beside limits \"{shares}\""));
            }
            // Its durations add up to no more than the connection lasted (a whole transfer
            // read "steady transfer 4.25 s after 2.13 s of start-up" in 4.85 s).
            if let Some(e) = judged {
                let spans = durations(e);
                let total: f64 = if e.starts_with("steady") {
                    spans.iter().take(2).sum()
                } else {
                    spans.first().copied().unwrap_or(0.0)
                };
                // Each printed to three digits: half a unit of the third each.
                if total > f.duration_s * 1.01 + 1e-6 {
                    out.push(format!("\"{e}\" longer than the connection's {} s", f.duration_s));
                }
            }
        }
        (l, v) => out.push(format!("verdict {v} with limits {l:?}")),
    }
    out
}

/// The durations a sentence prints (`units::secs`: "4.25 s", "96.0 ms", "310 µs"), in
/// seconds, in order, as `units::parse` reads them back.
fn durations(sentence: &str) -> Vec<f64> {
    let words: Vec<&str> = sentence.split_whitespace().collect();
    words
        .windows(2)
        .filter_map(|w| {
            let unit = w[1].trim_end_matches([',', ')', ':', ';']);
            matches!(unit, "s" | "ms" | "µs" | "ns")
                .then(|| crate::units::parse(&format!("{} {unit}", w[0].trim_start_matches('('))))?
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{classify, durations, Input};
    use crate::diagnose::rules::fixture::{at, run, timeline, Bin, BASE_RTT, BUSY, CAPACITY, MSS};

    /// The input of a flow sharing the path, `group` the group's delivery per bin.
    fn shared<'a>(tl: &'a crate::diagnose::timeline::Timeline, group: &'a [f64], g: Option<f64>) -> Input<'a> {
        Input {
            tl,
            capacity: Some(CAPACITY),
            pipe: Some(CAPACITY * BASE_RTT.secs_f64()),
            base_rtt: BASE_RTT,
            mss: MSS,
            shared_delivered: Some(group),
            group_utilisation: g,
            queue: None,
            rtt_rose: false,
            excluded: &[],
            recovered: None,
        }
    }

    /// A member of a group sharing the path, the group delivering at capacity for the first
    /// 60% of the time and at 30% after (its members backing off after losses: 72% over
    /// all): its bottleneck share is the larger, but the group's utilisation decides.
    #[test]
    fn a_shared_flow_is_judged_by_the_groups_utilisation() {
        let group_rate = |i: usize| if i < 300 { 1.0 } else { 0.3 };
        let tl = timeline(|i| Bin {
            delivered: at(group_rate(i) / 3.0),
            // Above the BDP (40 kB) and varying: no sender's plateau, no full pipe (the RTT
            // did not rise).
            flight: 60_000 + (i % 7) as u64 * 4_000,
            // losses in the slow part: the members backed off
            retransmissions: u32::from(i >= 300 && i % 20 == 0),
            ..BUSY
        });
        let group: Vec<f64> = (0..tl.bins.len())
            .map(|b| {
                let i = (b as f64 * tl.width.secs_f64() / 0.01) as usize;
                group_rate(i.min(499)) * CAPACITY * tl.width.secs_f64()
            })
            .collect();
        let verdict = |g: Option<f64>| {
            let c = classify(&shared(&tl, &group, g));
            (c.verdict, c.utilisation.expect("capacity known"))
        };
        // Before the group is judged, the larger share.
        let (v, u) = verdict(None);
        assert!(u < 0.85, "utilisation {u}");
        assert_eq!(v, crate::diagnose::Label::Bottleneck);
        // Judged by the group's 72%: below capacity, the window kept it below.
        assert_eq!(verdict(Some(u)).0, crate::diagnose::Label::Cwnd);
        // Another member measured the group at 90% over its own steady time: full.
        assert_eq!(verdict(Some(0.9)).0, crate::diagnose::Label::Bottleneck);
    }

    #[test]
    fn a_shared_flows_busy_rate_is_the_groups_delivery_while_it_had_data() {
        // This flow has data half the time (200 ms on, 200 ms off) and takes 30% of the link
        // then; the other flow fills the link all along, so the group delivers at capacity.
        let tl = timeline(|i| {
            if (i / 20) % 2 == 0 {
                Bin {
                    delivered: at(0.3),
                    flight: 40_000,
                    ..BUSY
                }
            } else {
                Bin {
                    busy: 0.0,
                    idle: 1.0,
                    ..BUSY
                }
            }
        });
        let group = vec![CAPACITY * tl.width.secs_f64(); tl.bins.len()];
        let c = classify(&shared(&tl, &group, None));
        assert!((c.idle_share - 0.5).abs() < 0.05, "idle share {}", c.idle_share);
        // The group's delivery over the whole transfer divided by this flow's busy share
        // read twice the capacity; over the time it had data it is the capacity.
        let u = c.utilisation.expect("capacity known");
        assert!((u - 1.0).abs() < 0.05 && u <= 1.0 + 1e-9, "utilisation {u}");
        assert!(c.busy_rate <= CAPACITY * (1.0 + 1e-9), "busy rate {}", c.busy_rate);
    }

    #[test]
    fn a_lone_flows_busy_rate_leaves_out_what_was_delivered_while_it_idled() {
        // The sender has data and fills the link half the time; in the other half it leaves
        // its window's room unused (accounted idle) while the last flight's ACKs still
        // deliver at half the link's rate. Its delivery while it had data is the capacity;
        // the whole delivery over its busy share read 1.5x the capacity.
        let c = run(|i| {
            if (i / 20) % 2 == 0 {
                Bin {
                    delivered: at(1.0),
                    flight: 40_000,
                    ..BUSY
                }
            } else {
                Bin {
                    busy: 0.0,
                    idle: 1.0,
                    delivered: at(0.5),
                    ..BUSY
                }
            }
        });
        assert!((c.idle_share - 0.5).abs() < 0.05, "idle share {}", c.idle_share);
        assert!((c.busy_rate / CAPACITY - 1.0).abs() < 0.05, "busy rate {}", c.busy_rate);
    }

    /// One 10 ms bin of accounted time on a 40 ms path (the rest an outage's, accounted to
    /// no state), one segment's ACK in it: its delivery is rated over the round trip, not
    /// over the bin (tcp_rate.c: no sample over less than the minimum RTT).
    #[test]
    fn a_steady_time_shorter_than_a_round_trip_is_rated_over_the_round_trip() {
        let none = Bin { busy: 0.0, ..BUSY };
        let c = run(|i| {
            if i == 0 {
                Bin {
                    delivered: 1460,
                    ..BUSY
                }
            } else {
                none
            }
        });
        let most = 1460.0 / BASE_RTT.secs_f64() * (1.0 + 1e-9);
        assert!(c.steady_rate > 0.0 && c.steady_rate <= most, "{}", c.steady_rate);
        let busy = c.utilisation.expect("capacity known") * CAPACITY;
        assert!(busy <= most, "{busy}");
    }

    #[test]
    fn a_sentences_durations_are_read_in_seconds() {
        let d = durations("steady transfer 4.25 s after 96.0 ms of start-up (310 µs): cwnd 2%");
        assert_eq!(d.len(), 3);
        assert!((d[0] - 4.25).abs() < 1e-9 && (d[1] - 0.096).abs() < 1e-9 && (d[2] - 310e-6).abs() < 1e-12);
        assert!(durations("receiver window 0%, cwnd 56%").is_empty());
    }
}
