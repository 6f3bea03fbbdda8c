//! Diagnosis: the bottleneck rate, the BDP, and what limited each flow, with evidence and
//! advice. Collects per-segment facts while the flow is live (`accumulator`); when the
//! flow ends, `finish` runs gate -> facts -> classify -> explain: the gate decides whether
//! the flow can be judged, the facts gather every number (capacity, queue, windows), the
//! rules claim its time and decide the verdict, and the writers explain it. Flows that
//! shared a path are revisited once the whole capture is read (`across_flows`).

pub(crate) mod accumulator;
mod advice;
mod bucket_rounds;
mod burst_loss;
mod capacity;
mod classification;
mod classify;
mod delivery;
mod dispersion;
mod drop_pace;
mod ecn;
mod explain;
mod facts;
mod gate;
mod idle;
mod packed;
mod policer;
mod queue;
mod rate_sample;
mod receiver_clock;
pub(crate) mod recovery_window;
mod restart;
mod rounds;
pub mod rules;
mod startup;
mod timeline;
mod train;
mod ts_clock;
mod turns;

/// The limit labels and the verdict: the summary's vocabulary.
pub use crate::summary::{Label, Verdict};
pub use accumulator::{Accumulator, DirAccumulator};
pub use advice::{flow_law as advice_flow_law, law as advice_law};
pub use capacity::{law as capacity_law, Capacity, Method};
pub use classification::Classification;
pub use classify::law as limits_law;
pub use ecn::law as ecn_law;
pub use explain::{evidence_law, BUSY_ABOVE};
pub use packed::{estimated_bytes as estimated_timeline_bytes, LiveTimeline, PackedBins};
pub use timeline::{Bin, BinStore, SenderState, Timeline, MAX_BINS};
pub use turns::law as turns_law;

use crate::flow::Dir;
use crate::summarize;
use crate::summary::{CapacitySummary, FlowSummary, Limits, Period, QueueSummary};
use crate::tcp::{Connection, WindowScale};
use crate::time::{Span, Timestamp};
use facts::{Facts, Findings};
use std::net::IpAddr;

/// Bytes per ACK (in segments) above which ACK spacing says nothing about the bottleneck
/// (delayed ACKs cover 2 segments, GRO-coalesced ones a few more).
const STRETCH_ACK_SEGMENTS: f64 = 8.0;
/// Pairs of segments sent together (the same timestamp echo) the arrivals must hold to
/// time the link: as many as a dispersion needs samples (`dispersion::MIN_SAMPLES`).
const MIN_SAME_SEND_PAIRS: u32 = 8;

/// A finished flow: its summary, and what the cross-flow step needs to revisit it.
pub struct Finished {
    pub summary: FlowSummary,
    kept: Option<Kept>,
}

impl Finished {
    /// For a judged flow: its hosts and bulk direction, and the span of its transfer's
    /// timeline — what [`across_flows`] groups flows by. None for a flow not judged.
    pub fn sharing(&self) -> Option<((IpAddr, IpAddr, Dir), Timestamp, Timestamp)> {
        self.kept.as_ref().map(|k| (k.hosts, k.tl.origin, k.tl.end()))
    }
}

struct Kept {
    /// The summary's notes from before the diagnosis (handshake, capture).
    base_notes: Vec<String>,
    /// Packed as it was live: a finished flow can wait for its group a while, and at the
    /// end of a capture every live flow finishes at once.
    tl: LiveTimeline,
    base_rtt: Span,
    mss: u32,
    facts: Facts,
    hosts: (IpAddr, IpAddr, Dir),
}

pub fn finish(
    conn: &Connection,
    mut acc: Accumulator,
    copies: [u64; 2],
    capture_name: &str,
    link_rate_bps: Option<f64>,
) -> Finished {
    // Where the capture lacks a direction's acknowledgments, the flight, the delivery over
    // those waits and the window scale the flights would tell are not known from it.
    let lacking = [Dir::C2S, Dir::S2C].map(|d| acc.stalls.acks_lacking(conn, d));
    let lacks = lacking.clone().map(|l| l.is_some());
    let mut summary = summarize::base(conn, capture_name, &acc.windows, lacking);
    summarize::capture_duplicates(&mut summary, copies);
    summarize::reordering_note(&mut summary);
    summary.stalls = acc.stalls.finish(conn);
    summarize::mark_undelivered(&mut summary);
    summary.notes.extend(acc.stalls.capture_notes(conn));
    acc.middlebox.acks_lacking = lacks;
    let (findings, hints) = crate::middlebox::findings(conn, &acc.middlebox);
    summary.middlebox = findings;
    summary.notes.extend(hints);
    let bulk = summarize::bulk_direction(conn);
    let quantum = conn.rtt.quantum;
    let dacc = &mut acc.dirs[bulk.index()];
    dacc.close(conn.last_ts);
    // One handshake segment alone tells its own end's options, and the scale state (RFC
    // 7323 §2.2: a SYN/ACK carries the option only in answer to a SYN that did).
    match (conn.handshake.syn.is_some(), conn.handshake.syn_ack.is_some()) {
        (true, true) => {}
        (true, false) => summary.notes.push(
            "the server's SYN/ACK is not in the capture (only the client's SYN of the handshake): the server's window scale and MSS are not known from it".into(),
        ),
        (false, true) => summary.notes.push(
            "only the server's SYN/ACK is in the capture: the client's window scale and MSS are not known from it"
                .into(),
        ),
        (false, false) => summary
            .notes
            .push("the handshake is not in the capture: window scale and MSS are not known from it".into()),
    }
    summary.notes.extend(summarize::scale_not_inferred(conn, lacks));
    // Gate. A capture shown to lack the receiver's acknowledgments (the notes say how)
    // shows neither the flight nor the window the sender had: nothing to judge by.
    if acc.stalls.lacks_acks(bulk) {
        // The RTT samples are loops whose both ends are in the capture (a segment and its
        // ACK or echo; an ACK that came after data beyond any window is no sample, as a
        // missing ACK may have answered first): the RTT there, never the sender's own.
        let rtt = match summary.rtt_ms.samples {
            0 => "the flight, the RTT and the window the sender had cannot be followed from it".to_string(),
            n => format!(
                "the flight and the window the sender had cannot be followed from it; the RTT only where a segment and its acknowledgment (or echo) are both in the capture (the {n} samples)"
            ),
        };
        summary.notes.push(format!(
            "undetermined: {} {} data (see the note above): {rtt}",
            crate::stall::LACKS_ACKS_NOTE,
            bulk
        ));
        return Finished { summary, kept: None };
    }
    let base_rtt = conn.rtt.min_end_to_end();
    let state_ns = dacc.timeline.as_ref().map(|tl| {
        let (b, r, i) = tl.totals();
        b + r + i
    });
    if let Some(reason) = gate::why_not(conn, bulk, base_rtt, state_ns) {
        if !idle::judge(&mut summary, &reason) {
            summary.notes.push(format!("undetermined: {reason}"));
        }
        return Finished { summary, kept: None };
    }
    let base_rtt = base_rtt.expect("the gate checked it");
    let mut live = dacc.timeline.take().expect("the gate checked it");
    live.clock = quantum.get();
    let tl = live.full();
    // Facts.
    let max_raw = acc.windows.max_raw[bulk.index()];
    let dacc = &acc.dirs[bulk.index()];
    let mut facts = gather_facts(conn, dacc, &summary, bulk, &tl, base_rtt, quantum, link_rate_bps);
    facts.outage_repairs = acc.stalls.outage_repairs(bulk, &summary.stalls);
    // An outage's repairs show the outage, not a full pipe (`judged_capacity`): whether the
    // figure is a lower bound is decided with them known.
    facts.lower_bound = judged_capacity(&facts).is_none() && facts.capacity.is_some();
    // The window the sender obeyed, when it read the receiver's windows with another scale
    // than the handshake's (a middlebox beyond the capture point rewrote the option).
    let (shown, obeyed) = (
        conn.scale_of_sender(bulk.reverse()),
        conn.effective_scale(bulk.reverse()),
    );
    let scale_finding = summary.middlebox.iter().any(|m| m.kind.is_window_scale());
    if shown != obeyed {
        facts.obeyed_rwnd = obeyed.shift().map(|k| (max_raw as u64) << k);
        facts.obeyed_scale = obeyed;
        facts.scale_finding = scale_finding;
    }
    // A window is the receiver's free space only as the receiver scales it: beside a
    // finding that the ends read the scale differently, a window that shrank may be raw
    // values read unscaled (wscale_strip_synack_up at the client: the SYN/ACK's 64 KiB,
    // then raw values of 32-40 K the server meant as 2^7 times more), no reader behind.
    if scale_finding {
        facts.reader_behind_share = 0.0;
    }
    let mut kept = Kept {
        base_notes: summary.notes.clone(),
        tl: live,
        base_rtt,
        mss: conn.mss(bulk),
        facts,
        hosts: (conn.client.addr, conn.server.addr, bulk),
    };
    // Classify, explain.
    let class = classify_floored(&mut kept, &tl, None);
    fill(&mut summary, &mut kept, &class);
    Finished {
        summary,
        kept: Some(kept),
    }
}

/// The facts step: every number the rules and writers use.
#[allow(clippy::too_many_arguments)]
fn gather_facts(
    conn: &Connection,
    dacc: &DirAccumulator,
    summary: &FlowSummary,
    bulk: Dir,
    tl: &Timeline,
    base_rtt: Span,
    quantum: crate::time::Quantum,
    link_rate_bps: Option<f64>,
) -> Facts {
    let mss = conn.mss(bulk);
    // Data spacing tells the bottleneck rate only past the bottleneck: when the capture
    // point is nearer the receiver than the sender.
    let (via_sender, via_receiver) = (
        conn.rtt.through(Connection::sender_end(bulk)).least(),
        conn.rtt.through(Connection::sender_end(bulk.reverse())).least(),
    );
    // A loop measured as negligible (under the clock's resolution) is the shorter one.
    let receiver_measured = conn.rtt.through(Connection::sender_end(bulk.reverse())).measured();
    let past_bottleneck = match (via_sender, via_receiver) {
        (Some(s), Some(r)) => r < s,
        (Some(_), None) => receiver_measured,
        _ => false,
    };
    // Packet pairs are pairs the sender sent back to back (Keshav, SIGCOMM 1991): a sender
    // whose every segment echoes a newer timestamp than the one before sent each on the
    // news of another ACK (Nagle's rule releasing one short segment per ACK, RFC 896; an
    // application writing one message per reply), and the spacing of its arrivals is that
    // ACK clock's, not the link's (P12 nagle_delack at the receiver: 66 kbit/s "arrival
    // dispersion" on an 18 Mbit/s link). Without the echoes nothing tells, and the
    // arrivals stand.
    let one_send_pairs = dacc.stamped_pairs == 0 || dacc.pairs_one_send >= MIN_SAME_SEND_PAIRS;
    let arrivals = (past_bottleneck && one_send_pairs).then_some(&dacc.arrivals);
    // Past the bottleneck the receiver's ACKs leave as its host takes the data in: ACKs of
    // one arrival batch are one batch (`train::DataBatches`).
    let ack_spacing = if past_bottleneck {
        &dacc.dispersion_by_data
    } else {
        &dacc.dispersion
    };
    // Before it (at the sender: its loop a small part of the round trip) the stamps tell
    // which ACKs' data queued at the bottleneck behind the data before it
    // (`accumulator::queued_behind`).
    let at_sender = matches!((via_sender, via_receiver), (Some(s), Some(r)) if s.nanos() * 4 < r.nanos());
    let queued_spacing = at_sender.then_some(&dacc.queued_dispersion);
    let goodput = summary.goodput_bps / 8.0;
    // The flow went as fast as its receive window let it: its ACK spacing may be the
    // window's pace.
    let window_rate = summary
        .max_rwnd_bytes
        .map(|w| w as f64 / base_rtt.secs_f64().max(1e-9))
        .filter(|&w| goodput >= rules::bottleneck::AT_CAPACITY * w);
    // The least queue the measurement can tell from noise: ten timestamp quanta, and two
    // full segments' serialization at the slowest rate the flow could have had (its
    // delivery): a data sample carries its segment's serialization, which the handshake's
    // base does not, and a delayed ACK waits for a second segment (RFC 5681 §4.2).
    let two_way = two_way(conn, bulk);
    let interval = capacity::ack_interval(two_way);
    let gaps = segment_gaps(conn, bulk, past_bottleneck);
    let largest_segment = mss.min(conn.dir(bulk).max_segment);
    let spacing = [
        ack_spacing.capacity(),
        arrivals.and_then(|a| a.capacity()),
        queued_spacing.and_then(|q| q.capacity()),
    ]
    .into_iter()
    .flatten()
    .fold(0.0, f64::max);
    let data_round = data_round(tl, base_rtt, gaps.as_ref(), largest_segment, interval, goodput, spacing);
    let slowest = delivery::max_rate(tl, capacity::delivery_window(data_round, tl.width), interval)
        .unwrap_or(0.0)
        .max(goodput);
    let serialization = if slowest > 0.0 {
        Span::from_secs_f64(2.0 * mss as f64 / slowest)
    } else {
        Span::ZERO
    };
    let floor = quantum.min_sample_span().max(serialization);
    let startup = {
        let rounds = rounds::rounds(tl, base_rtt);
        let j = startup::end_round(&rounds);
        let j = startup::after_recovery(&rounds, j, startup::bin_of(tl, dacc.first_recovered));
        rounds.get(j).map_or(tl.bins.len(), |r| r.first)
    };
    let queue = queue::find(tl, startup, base_rtt, floor);
    let steady = tl.bins.get(startup..).unwrap_or(&[]);
    let (held_ns, sending_ns) = steady
        .iter()
        .fold((0u64, 0u64), |(h, s), b| (h + b.rwnd_ns, s + b.rwnd_ns + b.busy_ns));
    let window_held = sending_ns > 0 && rules::receiver_window::applies(held_ns as f64 / sending_ns as f64);
    let prompt_queueing_s = {
        let mut q: Vec<i64> = steady
            .iter()
            .filter_map(|b| b.rtt_prompt_min_ns)
            .map(|m| (m - base_rtt.nanos()).max(0))
            .collect();
        q.sort_unstable();
        q.get(q.len() / 2).map(|&n| n as f64 / 1e9)
    };
    let median_rtt = summary.rtt_ms.median.map(|m| Span::from_secs_f64(m / 1000.0));
    let rtt_rose = facts::queue_shows(
        base_rtt.secs_f64(),
        prompt_queueing_s,
        median_rtt.map(|m| (m - base_rtt).secs_f64().max(0.0)),
        quantum.get().secs_f64(),
    );
    let judged_policer = match &queue {
        Some(q) if q.most_of_the_time() => None,
        _ => Some(policer::judge(tl, median_rtt.unwrap_or(base_rtt), floor)),
    };
    let estimate = capacity::estimate(&capacity::Input {
        tl,
        dispersion: ack_spacing,
        queued: queued_spacing,
        arrivals,
        base_rtt,
        data_round,
        mss,
        link_rate_bps,
        window_rate,
        queue: queue.as_ref(),
        goodput,
        median_rtt,
        rtt_rose,
        window_held,
        two_way,
        receiver_clock: dacc.receiver_clock.capacity(),
        stamps: Some(&dacc.receiver_clock),
        round_trip: dacc.rate_samples.max_rate(),
        reordered_share: {
            let d = summary.dir(bulk);
            d.reordered_segments as f64 / d.data_segments.max(1) as f64
        },
        loss_delivery: summary
            .stalls
            .iter()
            .filter(|s| s.kind.is_congestion_episode() && s.direction == Some(bulk))
            .filter_map(|s| s.delivered_bps)
            .map(|r| r / 8.0)
            .reduce(f64::max),
        // A queue that stood says the losses were its overflow, not a policer's drops.
        policer: match judged_policer {
            Some(policer::Judgement::Found(p)) => Some(p),
            _ => None,
        },
        // Where enough losses and passes showed the bucket's fill is not a policer's, the
        // pace between a few drops does not overrule it: a cwnd-limited flow under random
        // loss regrows alike after each drop, and its pace between drops reads alike too
        // (R26 loss_cubic: 0.6% random loss on a 140 Mbit/s link read as a 21.3 Mbit/s
        // policer from four gaps).
        paced_policer: match (&queue, judged_policer) {
            (Some(q), _) if q.most_of_the_time() => None,
            (_, Some(policer::Judgement::NotOne)) => None,
            _ => {
                // Past the bottleneck the survivors' arrivals are the drops' pace itself;
                // before it the data has yet to queue for the line, and the ACKs carry the
                // pace back (with what they met on the way).
                let pace = &dacc.drop_pace;
                let gaps = if past_bottleneck { &pace.by_data } else { &pace.by_ack };
                policer::from_pace(tl, &gaps.samples, capacity::AT_CAPACITY, floor)
            }
        },
        // Past the bucket its rounds show it in the data's arrivals (`bucket_rounds`);
        // before it the data has yet to meet it, and the ACKs carry the rounds back, each
        // reporting the data as the receiver got it (one per segment or two, RFC 5681
        // §4.2): P36's policer at the server, 73 rounds at 11.4 Mbit/s behind 120.
        bucket_rounds: match &queue {
            Some(q) if q.most_of_the_time() => None,
            _ => {
                // (Not where data ran the other way: those ACKs queued behind it and came
                // in the other direction's bunches, Zhang, Shenker & Clark 1991.)
                let rounds = match (past_bottleneck, two_way) {
                    (true, _) => Some(&dacc.bucket_rounds),
                    (false, false) => Some(&dacc.ack_rounds),
                    (false, true) => None,
                };
                rounds
                    .and_then(|r| r.bucket())
                    .map(|(rate, depth, n)| policer::Policer {
                        rate,
                        depth,
                        shown: policer::Shown::Rounds {
                            rounds: n,
                            acks: !past_bottleneck,
                        },
                    })
            }
        },
        burst_loss_flight: burst_loss::burst_loss_flight(summary, bulk, tl),
    });
    // Receivers that acknowledge whole bursts at once (stretch ACKs, a reader that lets the
    // window close) leave no spacing in their ACKs; before the bottleneck nothing else
    // shows its rate.
    let per_ack = dacc.delivered_bytes as f64 / dacc.delivery_acks.max(1) as f64 / mss.max(1) as f64;
    let stretch_acks = (!past_bottleneck && per_ack > STRETCH_ACK_SEGMENTS).then_some(per_ack);
    let d = conn.dir(bulk);
    let receiver_syn = match bulk {
        Dir::S2C => conn.handshake.syn,
        Dir::C2S => conn.handshake.syn_ack,
    };
    let mut f = Facts {
        capacity: estimate.capacity,
        recovered: dacc.first_recovered,
        lower_bound: false,
        group_full: false,
        group_delivery: None,
        busy_delivery: 0.0,
        base_rtt_s: base_rtt.secs_f64(),
        median_rtt_s: summary.rtt_ms.median.map(|m| m / 1000.0),
        p95_rtt_s: summary.rtt_ms.p95.map(|m| m / 1000.0),
        max_rtt_s: summary.rtt_ms.max.map(|m| m / 1000.0),
        handshake_timed: summary.rtt_ms.handshake_samples > 0,
        sender_loop_untimed: sender_loop_untimed(conn, bulk),
        sender_loop_by_repairs: {
            let far = conn.rtt.through(Connection::sender_end(bulk));
            far.samples == 0 && far.repair_bounds > 0 && far.bounds == far.repair_bounds
        },
        bdp: None,
        segment_gaps: gaps,
        delivery_round: data_round,
        largest_segment,
        max_rwnd: summary.max_rwnd_bytes,
        max_flight: tl.bins.iter().map(|b| b.max_flight).max().unwrap_or(0),
        max_in_network: dacc.max_in_network,
        transit: dacc.transit,
        near_loop: dacc.near_loop,
        loop_set_aside: dacc.loop_set_aside,
        unbounded_flight: dacc.unbounded_flight,
        goodput,
        mss,
        data_segments: d.data_segments,
        window_full_segments: dacc.window_full_segments,
        retransmitted_segments: d.retransmitted_segments,
        spurious_retransmissions: d.dsack_segments.min(d.retransmitted_segments),
        outage_repairs: 0,
        zero_windows: summary.dir(bulk).zero_window_advertisements,
        reader_behind_share: reader_behind_share(&tl.bins, startup),
        receiver_scale: conn.scale_of_sender(bulk.reverse()),
        stretch_acks,
        sack_permitted: match (conn.handshake.syn, conn.handshake.syn_ack, receiver_syn) {
            (Some(a), Some(b), _) => Some(a.sack_permitted.present().is_some() && b.sack_permitted.present().is_some()),
            _ => None,
        },
        flows_sharing: 1,
        group_utilisation: None,
        queue,
        quantum_s: quantum.get().secs_f64(),
        window_held,
        ack_spacing: ack_spacing.clone(),
        ack_stamps: dacc.receiver_clock.clone(),
        arrival_spacing: arrivals.cloned(),
        prompt_queueing_s,
        stalls: summary.stalls.clone(),
        estimate,
        obeyed_rwnd: None,
        obeyed_scale: WindowScale::Unknown,
        scale_finding: false,
        queue_other_way: None,
        ecn: facts::EcnFacts::of(conn, bulk),
        turns: dacc.turns.summary(),
    };
    f.bdp = f.capacity.map(|c| f.bdp_at(c.rate));
    if two_way {
        f.queue_other_way();
    }
    // `lower_bound` is decided by the caller, once the outage's repairs are counted.
    f
}

/// See [`Facts::sender_loop_untimed`].
fn sender_loop_untimed(conn: &Connection, bulk: Dir) -> bool {
    use crate::tcp::rtt::RttSource;
    let far = conn.rtt.through(Connection::sender_end(bulk));
    let near = conn.rtt.through(Connection::sender_end(bulk.reverse()));
    // A repair's time (`tcp::rtt::repair`) times the loop at a loss only, not through the
    // transfer: the samples still hold the handshake's value.
    let through_transfer = far.bounds.saturating_sub(far.repair_bounds);
    let timed =
        far.by_source[RttSource::DataAck as usize] + far.by_source[RttSource::TsEcho as usize] + through_transfer;
    // Without a handshake, the repairs' least is the value the samples hold.
    let held = far.base().or_else(|| far.least().filter(|_| far.repair_bounds > 0));
    timed == 0 && near.samples > 0 && held.is_some_and(|f| near.base().is_none_or(|n| f > n))
}

/// What each loop's samples say of a full data segment's serialisation
/// (`Loop::segment_gap`), and which loop the data crosses the bottleneck in as the loops'
/// lengths place it (the loop through the sender when the capture is past the bottleneck,
/// else the one through the receiver). None when neither loop's least is the handshake's.
fn segment_gaps(conn: &Connection, bulk: Dir, past_bottleneck: bool) -> Option<facts::SegmentGaps> {
    use crate::tcp::rtt::End;
    let ends = [End::Client, End::Server];
    let loops = ends.map(|end| {
        let g = conn.rtt.through(end).segment_gap();
        (g.least_is_handshake, g.gap.map(|s| s.secs_f64()))
    });
    let bottleneck = Connection::sender_end(if past_bottleneck { bulk } else { bulk.reverse() });
    (loops[0].0 || loops[1].0).then_some(facts::SegmentGaps {
        loops,
        bottleneck_loop: bottleneck.index(),
    })
}

/// Most rounds of widening [`data_round`] takes: each lowers the rate a too-short window
/// read, and the figure settles within a few.
const DATA_ROUND_STEPS: usize = 4;

/// The round trip of a full data segment, which delivery rates are measured over: the base
/// RTT and, where that is the handshake's, what a full segment's serialisation adds to it
/// ([`facts::SegmentGaps::segment_time_s`]). A delivery
/// rate is the data acknowledged over an interval at least one segment's round trip long
/// (RFC 9406's rate samples, Linux's `tcp_rate_gen`: the interval is the longer of the
/// send and ACK elapsed times, never shorter than the sampled segment's own RTT); windows
/// of a few handshake round trips on a link where one frame's serialisation is longer hold
/// one or two ACKs, and read a segment over less than its own time (1.40 Mbit/s on a 1
/// Mbit/s link: 1400-byte segments, 11.2 ms each, over windows of 4 x 3.2 ms). The segment
/// time is taken at the fastest rate any measure shows (the delivery over the round, the
/// goodput, `spacing`: the packet spacing's estimates), as the bottleneck is at least that
/// fast: the round is never longer than a segment's at the link's rate, and an
/// application that kept the delivery far below the link does not stretch it (a 20.7
/// Mbit/s path's segment is not timed at the flow's 40 kbit/s). The delivery depends on the
/// round it is measured over, so the round is widened from the base until it no longer
/// grows.
fn data_round(
    tl: &Timeline,
    base_rtt: Span,
    gaps: Option<&facts::SegmentGaps>,
    largest_segment: u32,
    interval: delivery::Interval,
    goodput: f64,
    spacing: f64,
) -> Span {
    let Some(gaps) = gaps else {
        return base_rtt;
    };
    let mut round = base_rtt;
    for _ in 0..DATA_ROUND_STEPS {
        let rate = delivery::max_rate(tl, capacity::delivery_window(round, tl.width), interval)
            .unwrap_or(0.0)
            .max(goodput)
            .max(spacing);
        let next = base_rtt + Span::from_secs_f64(gaps.segment_time_s(largest_segment, rate));
        if next <= round {
            break;
        }
        round = next;
    }
    round
}

/// Whether the other direction carried a bulk transfer of its own (twenty full segments at
/// least, the gate's measure) over at least half of this direction's transfer.
fn two_way(conn: &Connection, bulk: Dir) -> bool {
    let (d, o) = (conn.dir(bulk), conn.dir(bulk.reverse()));
    if o.unique_bytes < gate::MIN_SEGMENTS * conn.mss(bulk.reverse()).max(1) as u64 {
        return false;
    }
    match (d.first_data, d.last_data, o.first_data, o.last_data) {
        (Some(a0), Some(a1), Some(b0), Some(b1)) if a1 > a0 => {
            let overlap = (a1.min(b1) - a0.max(b0)).max_zero();
            overlap.nanos() * 2 >= (a1 - a0).nanos()
        }
        _ => false,
    }
}

/// `tl`: `k`'s timeline in full.
/// Classified, with the capacity raised to the steady transfer's delivery (the flow's, or
/// its group's) where the estimate was below it: the path carried that over the whole
/// steady transfer, so no estimate of its rate is lower (RFC 6349 §3.3). The steady
/// delivery does not depend on the capacity, so one second pass settles it (4.10 Mbit/s
/// delivered beside an estimate of 3.99 Mbit/s in tls-subjectaltname once its first ACKs'
/// window no longer counted).
fn classify_floored(k: &mut Kept, tl: &Timeline, shared: Option<&[f64]>) -> Classification {
    let mut class = classify_kept(k, tl, shared);
    // The verdict judges the delivery while the sender had data: a window-held flow's
    // spacing figure is read as its pace against that delivery too (`judged_capacity`), and
    // the flow judged again where it then is (census: a 16 kB window on a 4 Mbit/s, 250 ms
    // path on a sender's 10 ms clock, ACK dispersion 608 kbit/s from trains spanning idle
    // rounds, 91% of it delivered while the sender had data, called bottleneck-limited).
    if class.busy_rate > k.facts.busy_delivery {
        let judged = judged_capacity(&k.facts).is_some();
        k.facts.busy_delivery = class.busy_rate;
        if judged && judged_capacity(&k.facts).is_none() {
            k.facts.lower_bound = true;
            class = classify_kept(k, tl, shared);
        }
    }
    // The steady part's bounds depend on the capacity (where the start-up ends), so a
    // raised capacity may move the steady delivery: raised again until it holds (each pass
    // only raises; a policed pair's receiver read 3.40 Mbit/s steady beside a capacity
    // raised to 3.36). After the last pass the figure is raised without another.
    for pass in 0..=MAX_FLOOR_PASSES {
        let mut steady = class.steady_rate.max(class.shared_steady_rate.unwrap_or(0.0));
        // A lower bound is raised by any rate the path was shown to pass: the delivery while
        // the sender had data, less what ACKs of data sent before a bin can have added to it
        // (`busy_floor`). An estimate that claims the capacity is not raised by it: that
        // allowance is a bound, and beside a flow that keeps the link busy the busy rate of an
        // on/off flow read 159.8 Mbit/s on a 100 Mbit/s link (tests/sim_laws.rs).
        let floors = |k: &Kept, steady: f64| {
            steady
                .max(busy_floor(class.busy_rate, tl.width, k.facts.max_rtt_s))
                // And by the most it delivered over one round trip (`Estimate::round_trip_floor`).
                .max(k.facts.estimate.round_trip_floor().unwrap_or(0.0))
        };
        if k.facts.lower_bound {
            steady = floors(k, steady);
        }
        match k.facts.capacity {
            Some(mut c) if c.method != Method::LinkRate && steady > c.rate => {
                k.facts.capacity = Some(c.raised_to(steady));
                // A policer the flow's steady delivery beat beyond the estimates' margin is
                // none (a token bucket passes no more than its rate and depth, Cruz 1991):
                // random loss read as one (a 1 Mbit/s path at 2% loss in the census: 593
                // kbit/s "while it lost"). Its finding and the spacing it set aside go.
                if c.method == Method::PolicedRate && k.facts.capacity.is_some_and(|r| r.method != Method::PolicedRate)
                {
                    let goodput = k.facts.goodput;
                    if let Some(chosen) = k.facts.estimate.refute_policer(goodput) {
                        c = chosen;
                    }
                    k.facts.capacity = Some(c.raised_to(steady));
                }
                k.facts.lower_bound = judged_capacity(&k.facts).is_none();
                // Raised to the steady delivery, a judged figure may become a lower bound, and
                // a lower bound is floored as above (a policed sender: 4.38 Mbit/s over its
                // busy windows, 6.72 over its steady transfer, 8.41 over one round trip).
                if k.facts.lower_bound {
                    steady = floors(k, steady);
                    k.facts.capacity = Some(c.raised_to(steady));
                }
                // (The figure is the steady delivery, or above it where a refuted policer's
                // spacing stood again.)
                k.facts.bdp = k.facts.capacity.map(|c| k.facts.bdp_at(c.rate));
                if pass < MAX_FLOOR_PASSES {
                    class = classify_kept(k, tl, shared);
                }
            }
            _ => break,
        }
    }
    class
}

/// How many times a flow is classified again after its capacity was raised to its steady
/// delivery (see [`classify_floored`]).
const MAX_FLOOR_PASSES: usize = 3;

/// The rate a path must have passed for a flow to deliver `busy_rate` while its sender had
/// data. That rate shares each bin's delivery out by the time the sender had data in it;
/// the bytes ACKed in a bin of width T crossed the path within T plus the longest round
/// trip R before it (data crosses, then its ACK comes back), so each bin's delivery is at
/// most C x (T + R) and the busy rate at most C x (1 + R / T): C >= busy x T / (T + R).
/// Bins much longer than a round trip give nearly the busy rate itself (a loopback's
/// 94 ms bins against 0.8 ms); bins of one round trip give half of it, shorter ones less
/// (tcp_rate.c takes no delivery-rate sample over less than a round trip at all).
fn busy_floor(busy_rate: f64, width: Span, max_rtt_s: Option<f64>) -> f64 {
    let t = width.secs_f64();
    match max_rtt_s {
        Some(r) if t > 0.0 => busy_rate * t / (t + r),
        _ => 0.0,
    }
}

fn classify_kept(k: &Kept, tl: &Timeline, shared: Option<&[f64]>) -> Classification {
    let excluded = k.facts.outages();
    classify::classify(&classify::Input {
        tl,
        capacity: judged_capacity(&k.facts),
        pipe: judged_capacity(&k.facts).map(|c| k.facts.bdp_at(c)),
        base_rtt: k.base_rtt,
        mss: k.mss,
        shared_delivered: shared,
        group_utilisation: k.facts.group_utilisation,
        queue: k.facts.queue.as_ref(),
        rtt_rose: k.facts.queue_shows(),
        excluded: &excluded,
        recovered: k.facts.recovered,
    })
}

/// The capacity a flow's delivery is judged against. When the only evidence of the
/// bottleneck's rate is the flow's own delivery, calling the flow "at capacity" would be
/// circular: it needs a sign that the pipe was actually full — a queue (prompt RTTs above
/// the base, or a standing queue in some interval), losses, or ECN marks (a queue above its
/// marking threshold marked the flow's segments CE where it would have dropped them: RFC
/// 3168 §5). Without one the rate is a lower bound, reported but not judged by.
///
/// A sender the receiver's window held sends one window per round trip: it fills the path
/// only with a window above the BDP, and then the excess waits in the bottleneck's queue
/// (RFC 6349 §3.3.1: the BDP is the window that fills the path; RFC 7323 §1.1: rwnd/RTT
/// bounds the rate). For such a flow only the queue tells a full pipe: its ACK and arrival
/// spacing is the pace at which the window opened (rwnd per round, or its reader's pace),
/// and a loss is a burst that overflowed a short queue. A spacing estimate no faster than
/// what the flow delivered, from a clock too coarse to time one segment's gap at that
/// rate, is that pace, not the path's: it is all such a clock shows.
fn judged_capacity(f: &Facts) -> Option<f64> {
    let cap = f.capacity?;
    // A link shared with traffic the capture does not show: the flow is judged against what
    // it left the flow, measured while a standing queue showed it full.
    if let Some(a) = f.available() {
        return Some(a);
    }
    // A group's summed delivery is what its members' windows and applications offered
    // together: the path's rate only where one of them showed the path full, as one flow's
    // own delivery is (below). (Census: two flows held by 64 KiB windows on a 300 Mbit/s, 40
    // ms path, seen at a receiver whose 1 ms clock resolved no spacing, summed 21.6 Mbit/s,
    // and one was called bottleneck-limited at "98% of the capacity" with no queue, no loss.)
    if cap.method == Method::SharedDeliveryRate {
        return f.group_full.then_some(cap.rate);
    }
    let achieved = f.estimate.achieved(f.goodput);
    let spacing_method = matches!(
        cap.method,
        Method::Dispersion | Method::ArrivalDispersion | Method::ReceiverClockDispersion
    );
    // The clock cannot time one segment's gap at that rate (a measured span is ten ticks):
    // no packet pair inside a window's burst is resolved, only trains that span the idle
    // rest of the round.
    let unresolved_pairs = f.mss as f64 / cap.rate.max(1e-9) < crate::time::MIN_SPAN_QUANTA as f64 * f.quantum_s;
    // Or the clock did resolve the window's bursts, and the spacing's own trains carried
    // a tenth of their bytes at twice the estimate or faster (`Facts::spacing_outpaced`).
    let outpaced = f.spacing_outpaced().is_some();
    // Or the figure is the receiver's ACK clock: a window-held sender sends as the
    // receiver's ACKs open the window, so the receiver stamps its ACKs at the pace the
    // window lets data arrive, and no faster mode is sought in its stamps (the capture's
    // own ACK spacing takes the fastest mode above the window's pace, `capacity::estimate`).
    // At the flow's own delivery it shows nothing the delivery does not (P31 reorder_rwnd
    // at the sender: a 120 KiB window on a 40 Mbit/s path whose arrivals a reordering hop
    // scrambled; the stamps read the window's 24.4 Mbit/s and the flow was called
    // bottleneck-limited at "99% of the capacity").
    let receiver_paced = cap.method == Method::ReceiverClockDispersion;
    // Or the spacing read below what the flow delivered, and the figure is that delivery
    // (`capacity::largest`: no estimate below it): the path passed more than the spacing
    // says, so the spacing was not the path's, and what stands is the flow's own pace, a
    // floor (census: a 16 kB window on a 300 Mbit/s, 2 ms path shared with 90 Mbit/s of
    // cross traffic, at a sender host that stamped packets in batches: ACK dispersion 49.5
    // Mbit/s beside a delivery of 52.4, and the flow called bottleneck-limited at "97% of
    // the capacity" with no queue in any of its 3591 RTT samples).
    let refuted = cap.rate <= achieved;
    // Or the spacing's packets came in clusters the clock could not time inside, each of
    // half the flight or more (`Facts::windowed`).
    let windowed_batches = f.figure_spacing().is_some_and(|d| f.windowed(d));
    // Each matters where the delivery judged reaches the figure's full-path share: the
    // flow's own, or a group's it shares the path with (census: a 64 KiB window on a 30
    // Mbit/s, 100 ms path beside another window-held flow, on a sender's 10 ms clock: ACK
    // dispersion 7.07 Mbit/s from trains spanning idle rounds, the two flows together 6.68,
    // and the flow called bottleneck-limited at 95%).
    // The clusters are windows whoever held them (a congestion window, or a receiver's whose
    // scale the capture does not know): cluster to cluster is one window a round trip
    // (census 8989: a 16 kB window on a 300 Mbit/s, 100 ms path seen at a receiver on a 1
    // ms clock, without the handshake, each window in one tick: arrivals at 1.29 Mbit/s, and
    // the flow called bottleneck-limited at 103% of it).
    let window_paced = spacing_method
        && (windowed_batches || (f.window_held && (unresolved_pairs || outpaced || receiver_paced || refuted)))
        && cap.rate * rules::bottleneck::AT_CAPACITY
            <= achieved.max(f.group_delivery.unwrap_or(0.0)).max(f.busy_delivery);
    if !cap.method.is_delivery() && !window_paced {
        return Some(cap.rate);
    }
    let standing = f.queue.as_ref().is_some_and(|q| q.standing > 0);
    if f.window_held {
        // A queue that stood shows the link busy while it stood (RFC 8289), and what the
        // flow delivered then is the link's rate: only a figure measured there is shown
        // full by it. Intervals too few to hold one delivery window (a slow reader's
        // window bursts queueing twice in 4 s, R12 slow_reader at the sender) leave the
        // figure the delivery of other windows: the reader's pace, a lower bound.
        //
        // And a window-held flow's own queue stands: the window's excess over the BDP sits
        // in the bottleneck's queue every round, so the least RTT of each interval stays
        // raised (RFC 8289's standing queue). An RTT that rose with no interval's least RTT
        // staying up is delay that comes and goes (a jittery hop), not the flight queued
        // (P32 reorder_rwnd at the sender: frames delayed 0-5 ms each way raised the median
        // RTT 4.5 ms over the base, and the receiver's stamps' 44.6 Mbit/s, the window's
        // pace on an 80 Mbit/s link, was judged as the link's).
        // Where the path delayed each packet by its own amount (it let a tenth of the data
        // overtake: RFC 4737), that delay raised the RTT with no queue, and a few intervals
        // whose least RTT stayed up are its luck: the window's excess, queued every round,
        // stands most of the time (P32 reorder_rwnd made again: 3 of 43 intervals beside a
        // median raised 4.4 ms by frames delayed 0-5 ms each way, and the window's 39.3
        // Mbit/s on a 51.8 Mbit/s link judged as the link's). Elsewhere a short flow has
        // few intervals to stand in (a 208 ms transfer whose RTT doubled over 14.6 ms).
        let stood = match f.estimate.reordered {
            Some(_) => f.queue.as_ref().is_some_and(|q| q.most_of_the_time()),
            None => standing,
        };
        let stood_measured = standing && f.estimate.queued.is_some();
        return ((stood && f.queue_shows()) || stood_measured).then_some(cap.rate);
    }
    // A floor above the busy windows' delivery (what the flow's app-limited windows or its
    // whole connection carried) shows what the path passed, not that it was full: a lower
    // bound, whatever was lost (a burst after an idle spell overflows a queue the path's
    // rate never filled).
    if !f.estimate.measured_busy(cap.rate) {
        return None;
    }
    // Packet spacing that shows (nearly) the same rate is independent evidence too: a
    // paced sender (BBR) fills the pipe with hardly any queue and no loss. Not spacing
    // that is the window's pace (above): it is the delivery timed again.
    let spacing = if window_paced { 0.0 } else { f.spacing_rate() };
    // A loss shows the queue overflowed — where the RTT could not show that queue itself.
    // A drop-tail FIFO that overflowed held its whole buffer, and a buffer the flow's own
    // rate filled raised its RTT on the way (`queue_shows`, a standing interval); losses
    // beside an RTT that timed the loop through the bottleneck and stayed flat came from a
    // buffer shorter than the queue sign — a policer's bucket or a shallow buffer that the
    // sender's line-rate bursts overran whatever its mean rate (Flach et al., SIGCOMM 2016:
    // policers drop with no queueing delay before) — or from random loss: neither says the
    // flow's delivery was the path's rate (P41 tbf_policer: 3.3 Mbit/s behind a 12 Mbit/s
    // policer, 2% lost, RTT within 0.1 ms of its base, was judged at "86% of the capacity"
    // its own delivery made). Where the RTT cannot time this flow's queue — the loop through
    // the sender untimed (a capture at the receiver without timestamps), or its rise set
    // aside as the other direction's queue (two-way traffic) — the loss is the sign left
    // (P42 jitter_reorder at the receiver, P42 bidir_bulk at the server). A full path with a
    // shallow buffer still shows in its spacing (below). A retransmission the receiver
    // reported receiving twice (D-SACK) was no loss, and one that repaired an outage's loss
    // shows the outage (`lost_segments`). ECN marks are a queue above its marking threshold
    // (RFC 3168 §5).
    let full = f.shows_full() || spacing >= rules::bottleneck::AT_CAPACITY * cap.rate;
    full.then_some(cap.rate)
}

/// A BDP in whole bytes as every view shows it: rounded, but never 0 for a path that
/// holds anything (a link's rate times a round trip under a byte, a loopback's, is still a
/// path a one-byte window fills; printing 0 would say there is no path).
pub fn whole_bytes(bdp: f64) -> u64 {
    if bdp > 0.0 {
        (bdp.round() as u64).max(1)
    } else {
        0
    }
}

/// Writes the diagnosis fields of the summary.
fn fill(s: &mut FlowSummary, k: &mut Kept, c: &Classification) {
    // Every moment the sender had data lay in an outage or the slow start after one (the
    // spans `classify` leaves out: what limited a flow is judged while the path could carry
    // data): nothing is left to judge, and the stalls are the whole account. Two flows
    // through an 800 kbit/s policer with a 3 kB bucket lost one's every flight and waited
    // out its retransmission timer until the capture ended: its limits summed to nothing
    // under a "sender-limited" verdict.
    if c.fractions.iter().all(|&x| x == 0.0) {
        s.bottleneck_bps = None;
        s.bottleneck_method = None;
        s.bdp_bytes = None;
        s.bdp_segment_ms = None;
        s.capacity = None;
        s.queue = None;
        s.limits = None;
        s.periods.clear();
        s.evidence.clear();
        s.advice_items.clear();
        s.advice.clear();
        s.verdict = Verdict::Undetermined;
        s.notes = k.base_notes.clone();
        s.notes.push(
            "undetermined: the path carried nothing while the flow had data — every moment of its transfer lay in an outage or in the slow start after one (see the stalls)".into(),
        );
        return;
    }
    let f = &k.facts;
    s.bottleneck_bps = f.capacity.map(|c| c.rate * 8.0);
    s.bottleneck_method = f.capacity.map(|c| c.method);
    s.bdp_bytes = f.bdp.map(whole_bytes);
    s.bdp_segment_ms = f
        .capacity
        .map(|c| f.segment_time_s(c.rate) * 1e3)
        .filter(|&t| t > 0.0 && s.bdp_bytes.is_some());
    s.capacity = f.capacity.map(|cap| CapacitySummary {
        method: cap.method,
        lower_bound: f.lower_bound,
        given: cap.method == Method::LinkRate,
        delivery_bps: f.estimate.delivered.map(|r| r * 8.0),
        ack_dispersion_bps: f.estimate.dispersed.map(|r| r * 8.0),
        arrival_dispersion_bps: f.estimate.arrived.map(|r| r * 8.0),
        receiver_clock_dispersion_bps: f.estimate.receiver_clocked().map(|r| r * 8.0),
        queue_delivery_bps: f.estimate.queued.map(|r| r * 8.0),
        available_bps: f.available().map(|r| r * 8.0),
        app_limited_delivery_bps: f.estimate.app_limited.map(|r| r * 8.0),
        round_trip_delivery_bps: f.estimate.round_trip_floor().map(|r| r * 8.0),
        policed_bps: f.estimate.policer.map(|p| p.rate * 8.0),
        policer_bucket_bytes: f.estimate.policer.map(|p| p.depth.round() as u64).filter(|&d| d > 0),
        timestamp_resolution_s: f.quantum_s,
        set_aside: f.estimate.set_aside.clone(),
    });
    s.queue = f.standing_queue().map(|q| {
        let queued = f.queued_bytes();
        QueueSummary {
            standing_share: round4(q.share),
            delay_ms: (q.delay_s * 1e6).round() / 1e3,
            target_ms: (q.target_s * 1e6).round() / 1e3,
            interval_ms: Some((q.interval_s * 1e6).round() / 1e3),
            queued_bytes: queued.map(|b| b.round() as u64),
            flight_share: queued
                .filter(|_| f.max_in_network > 0)
                .map(|b| round4((b / f.max_in_network as f64).min(1.0))),
        }
    });
    s.sender_max_flight_bytes = Some(f.max_flight);
    s.sender_max_in_network_bytes = Some(f.max_in_network);
    s.idle_turns = f.turns.map(|t| t.to_summary());
    s.sender_transit_bytes = f.transit;
    s.sender_near_loop_ms = f.transit.map(|_| (f.near_loop.secs_f64() * 1e6).round() / 1e3);
    s.limits = Some(Limits {
        receiver_window: c.share(Label::ReceiverWindow),
        cwnd: c.share(Label::Cwnd),
        bottleneck: c.share(Label::Bottleneck),
        sender: c.share(Label::Sender),
    });
    s.verdict = c.verdict.into();
    s.periods = c
        .periods
        .iter()
        .map(|&(a, b, l)| Period {
            start: a.secs_f64(),
            end: b.secs_f64(),
            label: l,
        })
        .collect();
    let findings = Findings { facts: f, class: c };
    s.bdp_upper_bound = s.bdp_bytes.is_some() && explain::base_rtt_upper_bound(&findings).is_some();
    s.evidence = explain::evidence(&findings);
    s.advice_items = explain::advice(&findings);
    s.advice = s.advice_items.iter().map(|a| a.sentence.clone()).collect();
    s.notes = k.base_notes.clone();
    s.notes.extend(explain::notes(&findings));
}

/// A share to four decimals, but never a non-zero one to zero: below 0.00005 it keeps two
/// significant digits (a cwnd share of 0.00002 printed as "cwnd 0%" beside evidence that
/// said 0.002%).
fn round4(x: f64) -> f64 {
    let r = (x * 10_000.0).round() / 10_000.0;
    if r != 0.0 || x == 0.0 || !x.is_finite() {
        return r;
    }
    let scale = 10f64.powi(1 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

/// After the whole capture: flows between the same two hosts, in the same direction and
/// overlapping in time share a bottleneck. Their delivery is summed; the path's capacity
/// is at least that sum's best round-trip rate, and each flow is judged against the share
/// of the path the group used.
pub fn across_flows(flows: &mut [Finished]) {
    two_way_traffic(flows);
    let mut idx: Vec<usize> = (0..flows.len()).filter(|&i| flows[i].kept.is_some()).collect();
    idx.sort_by(|&a, &b| {
        let (ka, kb) = (flows[a].kept.as_ref().unwrap(), flows[b].kept.as_ref().unwrap());
        (ka.hosts.0, ka.hosts.1, ka.hosts.2.index(), ka.tl.origin).cmp(&(
            kb.hosts.0,
            kb.hosts.1,
            kb.hosts.2.index(),
            kb.tl.origin,
        ))
    });
    // Groups: same hosts and direction, overlapping in time (transitively).
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group_end = Timestamp(i64::MIN);
    for &i in &idx {
        let k = flows[i].kept.as_ref().unwrap();
        let same = groups.last().and_then(|g| g.last()).is_some_and(|&j| {
            let kj = flows[j].kept.as_ref().unwrap();
            kj.hosts == k.hosts && k.tl.origin < group_end
        });
        if same {
            groups.last_mut().unwrap().push(i);
            group_end = group_end.max(k.tl.end());
        } else {
            groups.push(vec![i]);
            group_end = k.tl.end();
        }
    }
    for g in groups.into_iter().filter(|g| g.len() > 1) {
        share_path(flows, &g);
    }
}

/// Flows whose ACKs came back behind another flow's data: a transfer between the same hosts
/// the other way, over at least half of this one's (the two-way test of a connection,
/// across connections). Their ACK spacing is compressed (Zhang, Shenker & Clark 1991):
/// the capacity is chosen again without it, and the flow judged again.
fn two_way_traffic(flows: &mut [Finished]) {
    let spans: Vec<Option<(IpAddr, IpAddr, Dir, Timestamp, Timestamp)>> = flows
        .iter()
        .map(|f| {
            let k = f.kept.as_ref()?;
            Some((k.hosts.0, k.hosts.1, k.hosts.2, k.tl.origin, k.tl.end()))
        })
        .collect();
    for i in 0..flows.len() {
        let Some((c, s, d, a0, a1)) = spans[i] else { continue };
        let reverse = spans.iter().enumerate().any(|(j, o)| {
            o.is_some_and(|(c2, s2, d2, b0, b1)| {
                let same_hosts = (c2, s2) == (c, s) || (c2, s2) == (s, c);
                // The other flow's data goes the other way between the two hosts.
                let sender = |cl: IpAddr, sv: IpAddr, dir: Dir| if dir == Dir::C2S { cl } else { sv };
                let opposite = sender(c2, s2, d2) != sender(c, s, d);
                let overlap = (a1.min(b1) - a0.max(b0)).max_zero();
                j != i && same_hosts && opposite && overlap.nanos() * 2 >= (a1 - a0).nanos()
            })
        });
        if !reverse {
            continue;
        }
        let f = &mut flows[i];
        let Some(mut k) = f.kept.take() else { continue };
        let dispersed = k.facts.estimate.dispersed;
        let stamped = k.facts.estimate.two_way(capacity::TWO_WAY_ACROSS);
        // Nor their instants: delivery windows are measured over their lengths alone.
        let unclocked = k.facts.estimate.unclock();
        // Nor their round trip: it crossed the other transfer's queue.
        let queued = k.facts.queue.is_some() || k.facts.prompt_queueing_s.is_some();
        k.facts.queue_other_way();
        if dispersed.is_some() || stamped || unclocked || queued {
            k.facts.capacity = capacity::choose(&k.facts.estimate, k.facts.goodput, k.facts.capacity);
            k.facts.bdp = k.facts.capacity.map(|c| k.facts.bdp_at(c.rate));
            k.facts.lower_bound = judged_capacity(&k.facts).is_none() && k.facts.capacity.is_some();
            let tl = k.tl.full();
            let class = classify_floored(&mut k, &tl, None);
            fill(&mut f.summary, &mut k, &class);
        }
        f.kept = Some(k);
    }
}

/// Upper bound on the bins of a group's common grid.
const MAX_GRID: usize = 4096;

fn share_path(flows: &mut [Finished], group: &[usize]) {
    let members: Vec<&Kept> = group.iter().map(|&i| flows[i].kept.as_ref().unwrap()).collect();
    let start = members.iter().map(|k| k.tl.origin).min().unwrap();
    let end = members.iter().map(|k| k.tl.end()).max().unwrap();
    let finest = members.iter().map(|k| k.tl.width.nanos()).min().unwrap();
    let span = (end - start).nanos().max(1);
    let width = finest.max((span + MAX_GRID as i64 - 1) / MAX_GRID as i64).max(1);
    let n = (span / width + 1) as usize;
    let mut grid = vec![0.0f64; n];
    // The members' busy and accounted time on the same grid: which windows the group was
    // busy in.
    let mut busy = vec![0.0f64; n];
    let mut state = vec![0.0f64; n];
    // The time some member had data (busy or held by its window), and each cell's last ACK
    // (ns from the grid's start): the windows' ACK intervals.
    let mut had = vec![0.0f64; n];
    let mut last_ack: Vec<Option<i64>> = vec![None; n];
    for k in &members {
        let mut i = 0;
        let from = (k.tl.origin - start).nanos();
        k.tl.bins.for_each(|b| {
            let (at, len) = (k.tl.start_of(i), k.tl.width.nanos());
            spread(&mut grid, start, width, at, len, b.delivered as f64);
            spread(&mut busy, start, width, at, len, b.busy_ns as f64);
            spread(&mut state, start, width, at, len, b.state_ns() as f64);
            spread(&mut had, start, width, at, len, (b.busy_ns + b.rwnd_ns) as f64);
            if let Some(a) = b.last_ack_ns.map(|a| a + from) {
                if let Some(cell) = last_ack.get_mut((a / width) as usize) {
                    *cell = (*cell).max(Some(a));
                }
            }
            i += 1;
        });
    }
    // The group idled where no member had data.
    let group_idle: Vec<u64> = had
        .iter()
        .zip(&state)
        .map(|(&h, &s)| if h <= 0.0 && s > 0.0 { s as u64 } else { 0 })
        .collect();
    // Capacity of the shared path: the best summed delivery over the longest round of a
    // data segment (`data_round`) — the high end of the windows the group was busy in, as
    // for one flow (delivery.rs), or of every window when that is higher (app-limited
    // delivery raises the estimate, never lowers it). Over every window alone, a group
    // that worked for a few seconds and then kept its connections open for a minute has
    // the busy seconds' windows under the top tenth of the windows that carried anything:
    // the figure fell below the delivery its members saw while busy.
    let rtt = members.iter().map(|k| k.facts.delivery_round).max().unwrap();
    let window = capacity::delivery_window(rtt, Span(width)).nanos();
    let cells = delivery::Grid {
        clock: members.iter().map(|k| k.tl.clock).max().unwrap_or(Span::ZERO),
        delivered: &grid,
        last_ack_ns: &last_ack,
        busy: &busy,
        state: &state,
        group_idle: &group_idle,
        width: Span(width),
    };
    let every = cells.rate_percentile(Span(window));
    let busy_windows = cells.busy_rate_percentile(Span(window));
    // The most a member delivered over one of its round trips went through the shared
    // path too (`Estimate::round_trip_floor`).
    // (Where the group's figure is a lower bound: no window the group was busy in.)
    let round_trip = match busy_windows {
        None => members
            .iter()
            .filter_map(|k| k.facts.estimate.round_trip_floor())
            .fold(0.0, f64::max),
        Some(_) => 0.0,
    };
    let shared_rate = every.unwrap_or(0.0).max(busy_windows.unwrap_or(0.0)).max(round_trip);
    // The members cross one queue: a sign that one of them saw it full is the group's.
    let group_full = members.iter().any(|k| k.facts.shows_shared_path_full(shared_rate));
    let count = group.len();
    let group_max_rtt = members.iter().filter_map(|k| k.facts.max_rtt_s).reduce(f64::max);
    let mut judged = Vec::with_capacity(group.len());
    for &i in group {
        let f = &mut flows[i];
        let Some(mut k) = f.kept.take() else { continue };
        // A member is judged by the group's delivery (`group_utilisation`): its own figure
        // is read as a pace, not the path's, against that delivery too (`judged_capacity`).
        k.facts.group_delivery = Some(shared_rate);
        let own = k.facts.capacity;
        // Against what the member's own measure judged it by: on a link shared with traffic
        // the capture does not show, what the link left it (which the group's delivery
        // includes: the group is judged by its own).
        let own_rate = k.facts.available().or(own.map(|c| c.rate));
        // A member's own figure no higher than a round trip's delivery in the group is that
        // floor (its own, or another member's): the group's figure, at least as high, stands.
        let use_shared = own.is_none_or(|c| c.method != Method::LinkRate)
            && own_rate.is_none_or(|r| shared_rate > r || (round_trip > 0.0 && round_trip >= r));
        if use_shared {
            k.facts.estimate.link_shared = false;
            // A member's rounds are slowed by the other members' data in the same FIFO: its
            // tails are its share of the link, no bucket's rate (R18 multi_flow_3: one of
            // three flows on a 140 Mbit/s link read a 95.2 Mbit/s bucket).
            if k.facts
                .estimate
                .policer
                .is_some_and(|p| matches!(p.shown, policer::Shown::Rounds { .. }))
            {
                let goodput = k.facts.goodput;
                k.facts.estimate.refute_policer(goodput);
            }
            // Never below what this member was seen to deliver on its own (a flow with no
            // estimate of its own, whose windows the group's summed delivery missed on a
            // coarse clock: 424 kbit/s beside its goodput of 474).
            let rate = shared_rate.max(k.facts.estimate.achieved(k.facts.goodput));
            k.facts.capacity = Some(Capacity {
                rate,
                method: Method::SharedDeliveryRate,
            });
            k.facts.bdp = Some(k.facts.bdp_at(rate));
            // No window in which the group was mostly busy: its delivery is what the
            // applications offered, not what the path could pass (RFC 6349 §3.3 measures
            // the bottleneck on a saturated path), so the figure is a lower bound.
            k.facts.group_full = group_full && busy_windows.is_some();
            k.facts.lower_bound = !k.facts.group_full;
        }
        k.facts.flows_sharing = count;
        // The group's delivery counts every member's ACKs.
        k.facts.max_rtt_s = group_max_rtt;
        // This flow's bins, filled with the group's delivery.
        let tl = k.tl.full();
        let shared: Vec<f64> = (0..tl.bins.len())
            .map(|b| gather(&grid, start, width, tl.start_of(b), tl.width.nanos()))
            .collect();
        let class = classify_floored(&mut k, &tl, Some(&shared));
        let capacity = judged_capacity(&k.facts);
        judged.push((i, k, tl, shared, class, capacity));
    }
    // The link's utilisation is one figure for the whole group. Each member measures the
    // group's delivery over its own steady transfer, and one whose steady time takes in
    // another member's start-up or end counts time the others did not fill and reads low
    // (R14 multi_flow_3 at the server: 86% for the member that started last, 95-96% for the
    // others, the kernel's 92-99% for all three); the highest rate any member measured is
    // the group's, each member judging it against the capacity it is judged by. Below the
    // capacity by it, the path did not hold the group back as a whole (R41 multi_flow_3
    // without SACK: 61-76% by every member, the kernel's 73-76%), and each member's verdict
    // is what kept it below, as for a flow alone.
    let group_rate = judged
        .iter()
        .filter_map(|(_, _, _, _, c, cap)| Some(c.utilisation?.max(c.link_utilisation.unwrap_or(0.0)) * (*cap)?))
        .reduce(f64::max);
    for (i, mut k, tl, shared, mut class, capacity) in judged {
        if let (Some(rate), Some(cap)) = (group_rate, capacity.filter(|&c| c > 0.0)) {
            k.facts.group_utilisation = Some(rate / cap);
            class = classify_floored(&mut k, &tl, Some(&shared));
        }
        let f = &mut flows[i];
        fill(&mut f.summary, &mut k, &class);
        f.kept = Some(k);
    }
}

/// Adds `value`, spread uniformly over [t, t + len), into the grid.
fn spread(grid: &mut [f64], start: Timestamp, width: i64, t: Timestamp, len: i64, value: f64) {
    let a = (t - start).nanos();
    let b = a + len.max(1);
    let mut x = a;
    while x < b {
        let cell = (x / width) as usize;
        let edge = ((cell as i64 + 1) * width).min(b);
        if cell < grid.len() {
            grid[cell] += value * (edge - x) as f64 / (b - a) as f64;
        }
        x = edge;
    }
}

/// The grid's content over [t, t + len), taking partial cells proportionally.
fn gather(grid: &[f64], start: Timestamp, width: i64, t: Timestamp, len: i64) -> f64 {
    let a = (t - start).nanos();
    let b = a + len.max(1);
    let mut x = a.max(0);
    let mut total = 0.0;
    while x < b {
        let cell = (x / width) as usize;
        let edge = ((cell as i64 + 1) * width).min(b);
        if let Some(v) = grid.get(cell) {
            total += v * (edge - x) as f64 / width as f64;
        }
        x = edge;
    }
    total
}

/// The share of the steady transfer's sending time (bins from `startup` on) whose least
/// window was at most seven eighths of the largest window offered in the bins before it
/// ([`facts::Facts::reader_behind_share`]): the receiver's buffer held at least an eighth
/// of data its application had not read. A reader that keeps up leaves the window at its
/// largest less what came since its last read, an ACK's worth (fast readers of the forty
/// lab corpora: never below seven eighths; slow readers: 36-100% of the time). Only a
/// window that shrank counts, so one that autotuning grows does not. A bin without data
/// has the window its last data had (the wait for the window to open is mostly in such
/// bins).
fn reader_behind_share(bins: &[timeline::Bin], startup: usize) -> f64 {
    let (mut largest, mut behind, mut sending) = (0u64, 0u64, 0u64);
    let mut window = None;
    for (i, b) in bins.iter().enumerate() {
        let ns = b.busy_ns + b.rwnd_ns;
        window = b.min_window.or(window);
        if i >= startup {
            sending += ns;
            if window.is_some_and(|w| largest > 0 && 8 * w <= 7 * largest) {
                behind += ns;
            }
        }
        largest = largest.max(b.max_window);
        window = (b.max_window > 0).then_some(b.max_window).or(window);
    }
    if sending == 0 {
        0.0
    } else {
        behind as f64 / sending as f64
    }
}

#[cfg(test)]
mod tests {
    use super::facts::{EcnFacts, Facts};
    use super::*;

    /// A BDP under a byte (a loopback's rate times its microseconds) shows as one byte, never
    /// as zero; a figure of bytes rounds as before.
    #[test]
    fn a_bdp_is_whole_bytes_and_never_zero_for_a_path() {
        assert_eq!(whole_bytes(0.34), 1);
        assert_eq!(whole_bytes(0.0), 0);
        assert_eq!(whole_bytes(1.49), 1);
        assert_eq!(whole_bytes(96_321.5), 96_322);
        let ep = |s: &str| {
            let a: std::net::SocketAddr = s.parse().unwrap();
            crate::flow::Endpoint {
                addr: a.ip(),
                port: a.port(),
            }
        };
        let conn = Connection::new(0, ep("127.0.0.1:49754"), ep("127.0.0.1:4445"), true, 1, Timestamp(0));
        let mut f = summarize::base(&conn, "t", &summarize::WindowStats::default(), [None, None]);
        // Whether the law flags `f` with a violation saying `words`.
        let flags = |f: &FlowSummary, words: &str| capacity_law(f).iter().any(|v| v.contains(words));
        f.bottleneck_bps = Some(149e3);
        f.rtt_ms.min = Some(0.018);
        f.bdp_bytes = Some(0);
        assert!(flags(&f, "BDP 0 B"), "{:?}", capacity_law(&f));
        f.bdp_bytes = Some(whole_bytes(149e3 / 8.0 * 0.018e-3));
        assert!(capacity_law(&f).is_empty(), "{:?}", capacity_law(&f));
        // A segment's serialisation added to the handshake's base: the BDP is the rate
        // over both, and the addition is never more than one segment (1460 B without a
        // SYN's MSS: 78.4 ms at 149 kbit/s).
        f.bdp_segment_ms = Some(70.0);
        assert!(flags(&f, "is not"), "{:?}", capacity_law(&f));
        f.bdp_bytes = Some(whole_bytes(149e3 / 8.0 * 70.018e-3));
        assert!(capacity_law(&f).is_empty(), "{:?}", capacity_law(&f));
        f.bdp_segment_ms = Some(90.0);
        f.bdp_bytes = Some(whole_bytes(149e3 / 8.0 * 90.018e-3));
        assert!(flags(&f, "more than one"), "{:?}", capacity_law(&f));
    }
    use crate::summary::EcnMode;
    use crate::tcp::ecn::{Events, Mark};

    #[test]
    fn a_share_rounds_to_four_decimals_but_never_to_zero() {
        assert_eq!(round4(0.123_456), 0.1235);
        assert_eq!(round4(0.0), 0.0);
        assert_eq!(round4(0.000_021_7), 0.000_022);
        assert_eq!(round4(0.000_04), 0.000_04);
        assert_eq!(round4(0.000_05), 0.0001);
    }

    /// The BDP is the rate over a full data segment's round trip: where the base RTT is the
    /// handshake's, one segment's serialisation is added, up to what the loop's samples on
    /// segments took beyond the handshake's, and only in the loop the bottleneck lies in.
    #[test]
    fn the_bdp_adds_a_segment_the_handshakes_round_trip_lacks() {
        use super::facts::SegmentGaps;
        let mut f = own_delivery();
        let rate = 125_000.0; // 1 Mbit/s: a 1448-byte segment takes 11.6 ms
        let seg = 1448.0 / rate;
        assert_eq!(f.bdp_at(rate), rate * 0.04, "a base timed on segments");
        let at = |f: &mut Facts, loops| {
            f.segment_gaps = Some(SegmentGaps {
                loops,
                bottleneck_loop: 1,
            });
            f.segment_time_s(rate)
        };
        // The server's loop (the bottleneck's by the loops' lengths) timed at the handshake
        // only: the whole segment.
        assert_eq!(at(&mut f, [(false, None), (true, None)]), seg);
        assert!((f.bdp_at(rate) - (rate * 0.04 + 1448.0)).abs() < 1e-6);
        // Its segments took 3 ms more than its handshake: that much.
        assert_eq!(at(&mut f, [(false, None), (true, Some(0.003))]), 0.003);
        // ... or 30 ms more (a queue): one segment at most.
        assert_eq!(at(&mut f, [(false, None), (true, Some(0.03))]), seg);
        // The client's loop timed at the handshake only, but the lengths place the
        // bottleneck in the server's: nothing, unless the server's own samples on segments
        // came within half a segment of its handshake (the segment was not serialised at
        // the bottleneck there).
        assert_eq!(at(&mut f, [(true, None), (false, None)]), 0.0);
        assert_eq!(at(&mut f, [(true, None), (false, Some(0.0002))]), seg);
        assert_eq!(at(&mut f, [(true, None), (false, Some(0.011))]), 0.0);
    }

    /// A flow whose only estimate of the bottleneck is its own busy delivery (1 MB/s),
    /// with no queue, no loss and no spacing to back it.
    fn own_delivery() -> Facts {
        let rate = 1_000_000.0;
        Facts {
            capacity: Some(Capacity {
                rate,
                method: Method::DeliveryRate,
            }),
            recovered: None,
            estimate: capacity::Estimate {
                delivered: Some(rate),
                ..Default::default()
            },
            lower_bound: false,
            group_full: false,
            group_delivery: None,
            busy_delivery: 0.0,
            base_rtt_s: 0.04,
            median_rtt_s: Some(0.04),
            p95_rtt_s: Some(0.04),
            max_rtt_s: Some(0.04),
            handshake_timed: true,
            sender_loop_untimed: false,
            sender_loop_by_repairs: false,
            bdp: Some(rate * 0.04),
            segment_gaps: None,
            delivery_round: Span::from_millis(40),
            largest_segment: 1448,
            max_rwnd: Some(1 << 20),
            obeyed_rwnd: None,
            obeyed_scale: WindowScale::Unknown,
            scale_finding: false,
            max_flight: 40_000,
            max_in_network: 40_000,
            transit: None,
            near_loop: Span::ZERO,
            loop_set_aside: None,
            unbounded_flight: 0,
            goodput: 0.9 * rate,
            mss: 1448,
            data_segments: 5000,
            window_full_segments: 0,
            retransmitted_segments: 0,
            spurious_retransmissions: 0,
            outage_repairs: 0,
            zero_windows: 0,
            reader_behind_share: 0.0,
            receiver_scale: WindowScale::Shift(7),
            stretch_acks: None,
            sack_permitted: Some(true),
            flows_sharing: 1,
            group_utilisation: None,
            queue: None,
            quantum_s: 1e-6,
            window_held: false,
            ack_spacing: Default::default(),
            ack_stamps: Default::default(),
            arrival_spacing: None,
            prompt_queueing_s: Some(0.0),
            stalls: Vec::new(),
            queue_other_way: None,
            ecn: EcnFacts {
                mode: EcnMode::Rfc3168,
                segments: 5000,
                ..Default::default()
            },
            turns: None,
        }
    }

    /// A receiver-window-held flow whose window bursts stood in a queue for two intervals,
    /// too few to hold one delivery window (R12 slow_reader at the sender): the figure, the
    /// delivery of other windows (the reader's pace), is not shown full by them, and stays
    /// a lower bound; a queue whose own delivery was measured shows it full.
    #[test]
    fn a_held_flows_brief_queue_does_not_show_a_figure_measured_elsewhere_full() {
        let mut f = own_delivery();
        f.window_held = true;
        f.estimate.delivered = None;
        f.estimate.app_limited = Some(1_000_000.0);
        f.queue = Some(super::queue::StandingQueue {
            share: 0.06,
            judged: 1.0,
            delay_s: 0.01,
            target_s: 0.006,
            interval_s: 0.1,
            bins: Vec::new(),
            intervals: 35,
            standing: 2,
        });
        assert_eq!(judged_capacity(&f), None);
        f.estimate.queued = Some(1_000_000.0);
        assert_eq!(judged_capacity(&f), Some(1_000_000.0));
    }

    /// A window-held flow's spacing estimate no faster than its own delivery was refuted by
    /// it: the figure raised to that delivery is the flow's pace, a floor, and only a queue
    /// would show the pipe full. A spacing above the delivery stands.
    #[test]
    fn a_window_held_flows_spacing_below_its_delivery_is_its_pace() {
        let mut f = own_delivery();
        f.window_held = true;
        f.quantum_s = 1e-6;
        f.capacity = Some(Capacity {
            rate: 1_000_000.0,
            method: Method::Dispersion,
        });
        assert_eq!(judged_capacity(&f), None);
        f.capacity = Some(Capacity {
            rate: 1_100_000.0,
            method: Method::Dispersion,
        });
        assert_eq!(judged_capacity(&f), Some(1_100_000.0));
        // Not held by the window: the spacing stands at the delivery too.
        f.window_held = false;
        f.capacity = Some(Capacity {
            rate: 1_000_000.0,
            method: Method::Dispersion,
        });
        assert_eq!(judged_capacity(&f), Some(1_000_000.0));
    }

    /// A group's summed delivery judges its members only where one of them showed the path
    /// full: two flows held by their windows, with no queue and no loss, delivered what the
    /// windows let through (census seed 8989: 21.6 Mbit/s on a 300 Mbit/s path).
    #[test]
    fn a_groups_delivery_is_the_paths_rate_only_where_the_group_showed_it_full() {
        let mut f = own_delivery();
        f.capacity = Some(Capacity {
            rate: 21_600_000.0,
            method: Method::SharedDeliveryRate,
        });
        f.group_full = false;
        assert_eq!(judged_capacity(&f), None);
        f.group_full = true;
        assert_eq!(judged_capacity(&f), Some(21_600_000.0));
    }

    /// A member's packet spacing shows the shared path full only at the group's rate, both
    /// ways (census 5656: a member's ACK dispersion, 95.3 Mbit/s, beside the 1.84 Mbit/s two
    /// window-held flows delivered together behind a 50 Mbit/s shaper, made the group's
    /// delivery the path's rate and called the other member bottleneck-limited).
    #[test]
    fn a_members_spacing_shows_the_shared_path_full_only_at_the_groups_rate() {
        let mut f = own_delivery();
        f.mss = 1460;
        f.quantum_s = 1e-6;
        f.estimate.dispersed = Some(95.3e6 / 8.0);
        assert!(!f.shows_full());
        assert!(
            !f.shows_shared_path_full(1.84e6 / 8.0),
            "spacing 52x the group's delivery"
        );
        assert!(
            f.shows_shared_path_full(90.0e6 / 8.0),
            "spacing at the group's delivery"
        );
        assert!(
            !f.shows_shared_path_full(120.0e6 / 8.0),
            "spacing below the group's delivery"
        );
    }

    /// A window-held flow's spacing figure that its clock could not have timed (one segment's
    /// gap at that rate under ten ticks) is a pace wherever the delivery it is judged by
    /// reaches the figure's full-path share: its own, or a group's it shares the path with.
    #[test]
    fn a_window_held_members_unresolved_spacing_is_a_pace_beside_the_groups_delivery() {
        let mut f = own_delivery();
        f.window_held = true;
        f.quantum_s = 0.01;
        f.mss = 1400;
        f.estimate.delivered = Some(5.06e6);
        f.capacity = Some(Capacity {
            rate: 7.07e6,
            method: Method::Dispersion,
        });
        // Alone, below 85% of the figure: the figure stands (it does not make the verdict).
        assert_eq!(judged_capacity(&f), Some(7.07e6));
        // Beside another flow, the two together at 95% of it: a pace, not the path's.
        f.group_delivery = Some(6.68e6);
        assert_eq!(judged_capacity(&f), None);
        // Alone, delivering 91% of it while the sender had data (what the verdict judges),
        // though less over its busy windows' 90th percentile: a pace too.
        f.group_delivery = None;
        assert_eq!(judged_capacity(&f), Some(7.07e6));
        f.busy_delivery = 6.43e6;
        assert_eq!(judged_capacity(&f), None);
    }

    /// A window-held flow whose ACKs came a window to a tick of a 1 ms clock (census: a 16
    /// kB window behind a 60 Mbit/s token bucket): its ACK dispersion, 1.00 Mbit/s, is the
    /// window's pace, though one segment's gap at that rate (11.5 ms) spans ten ticks.
    #[test]
    fn a_window_held_flows_spacing_from_windows_in_a_tick_is_its_pace() {
        let mut f = own_delivery();
        f.window_held = true;
        f.quantum_s = 0.001;
        f.mss = 1440;
        f.max_flight = 15_840;
        f.estimate.delivered = Some(0.52e6 / 8.0);
        f.goodput = 0.52e6 / 8.0;
        f.group_delivery = Some(0.987e6 / 8.0);
        f.capacity = Some(Capacity {
            rate: 1.0e6 / 8.0,
            method: Method::Dispersion,
        });
        let at = |us: i64| Timestamp(0) + Span::from_micros(us);
        // ACKs 800 µs apart (the path's spacing resolved): the figure stands.
        let mut train = None;
        for round in 0..8 {
            for k in 0..11 {
                f.ack_spacing.feed(
                    &mut train,
                    at(round * 250_000 + k * 11_500),
                    1440,
                    super::train::SampleFloor::span(Span::from_millis(10)),
                );
            }
        }
        assert_eq!(judged_capacity(&f), Some(1.0e6 / 8.0));
        // A window to a tick: its pace.
        f.ack_spacing = Default::default();
        let mut train = None;
        for round in 0..8 {
            for _ in 0..11 {
                f.ack_spacing.feed(
                    &mut train,
                    at(round * 250_000),
                    1440,
                    super::train::SampleFloor::span(Span::from_millis(10)),
                );
            }
        }
        assert_eq!(judged_capacity(&f), None);
        // Whoever held the windows (a congestion window, or a receiver's whose scale the
        // capture does not know): cluster to cluster is still one window a round trip, and
        // the spacing is no sign of a full path either (census 8989).
        f.window_held = false;
        f.estimate.dispersed = Some(1.0e6 / 8.0);
        f.estimate.delivered = Some(0.95e6 / 8.0);
        assert_eq!(judged_capacity(&f), None);
    }

    /// A window-held flow whose RTT rose with a queue standing in 3 of 43 intervals: a
    /// flight queued, unless the path delayed each packet by its own amount (it reordered
    /// the data), which raises the RTT with no queue; then only a queue standing most of
    /// the time shows the window's excess queued (P32 reorder_rwnd at the sender).
    #[test]
    fn a_reordering_paths_rtt_rise_is_no_held_flows_queue() {
        let mut f = own_delivery();
        f.window_held = true;
        f.base_rtt_s = 0.0246;
        f.median_rtt_s = Some(0.029);
        f.prompt_queueing_s = Some(0.0044);
        f.queue = Some(super::queue::StandingQueue {
            share: 3.0 / 43.0,
            judged: 1.0,
            delay_s: 0.00136,
            target_s: 0.00123,
            interval_s: 0.1,
            bins: Vec::new(),
            intervals: 43,
            standing: 3,
        });
        assert!(f.queue_shows());
        assert_eq!(judged_capacity(&f), Some(1_000_000.0));
        f.estimate.reordered = Some(0.39);
        assert_eq!(judged_capacity(&f), None);
        // Standing most of the time, it is the window's excess, reordering or not.
        f.queue.as_mut().unwrap().standing = 30;
        f.queue.as_mut().unwrap().share = 30.0 / 43.0;
        assert_eq!(judged_capacity(&f), Some(1_000_000.0));
    }

    /// A capture that began mid-connection, with a queue standing most of the time: the
    /// base RTT and the BDP are said to be upper bounds; with the handshake timed, not.
    #[test]
    fn a_late_capture_over_a_standing_queue_bounds_the_base_rtt_from_above() {
        use super::facts::Findings;
        use super::rules::fixture::{at, run, Bin, BUSY};
        let c = run(|_| Bin {
            delivered: at(1.0),
            ..BUSY
        });
        let mut f = own_delivery();
        f.queue = Some(super::queue::StandingQueue {
            share: 0.73,
            judged: 1.0,
            delay_s: 0.002,
            target_s: 0.0018,
            interval_s: 0.1,
            bins: Vec::new(),
            intervals: 30,
            standing: 22,
        });
        let said = |f: &Facts| {
            explain::notes(&Findings { facts: f, class: &c })
                .iter()
                .any(|n| n.contains("upper bounds"))
        };
        assert!(!said(&f), "the handshake timed the base");
        f.handshake_timed = false;
        assert!(said(&f));
        // No queue shows above the least RTT, but the flow kept its bottleneck busy from
        // the first packet to the last: a queue older than the capture may be in every
        // sample (R27 late_capture).
        f.queue = None;
        assert_eq!(c.verdict, Label::Bottleneck);
        assert!(said(&f), "a bottleneck busy throughout");
        // A flow that paused (idle a fifth of the time) let any queue drain.
        let paused = run(|i| {
            if i % 5 == 0 {
                Bin {
                    busy: 0.0,
                    idle: 1.0,
                    delivered: 0,
                    ..BUSY
                }
            } else {
                Bin {
                    delivered: at(1.0),
                    ..BUSY
                }
            }
        });
        assert!(paused.share(Label::Sender) > 0.0);
        let said_paused = explain::notes(&Findings {
            facts: &f,
            class: &paused,
        })
        .iter()
        .any(|n| n.contains("upper bounds"));
        assert!(!said_paused, "the flow paused: no queue stood");
    }

    /// Next to the receiver with the sender's loop timed only at the handshake: the note
    /// says the RTT cannot show the queue before here, and the queueing evidence says its
    /// figure is the receiver's turnaround only.
    #[test]
    fn a_sender_loop_timed_at_the_handshake_only_is_said_to_hide_the_queue() {
        use super::facts::Findings;
        use super::rules::fixture::{at, run, Bin, BUSY};
        let c = run(|_| Bin {
            delivered: at(1.0),
            ..BUSY
        });
        let mut f = own_delivery();
        let said = |f: &Facts| {
            let notes = explain::notes(&Findings { facts: f, class: &c });
            let evidence = explain::evidence(&Findings { facts: f, class: &c });
            (
                notes.iter().any(|n| n.contains("timed at the handshake only")),
                evidence.iter().any(|e| e.contains("the receiver's turnaround only")),
            )
        };
        assert_eq!(said(&f), (false, false));
        f.sender_loop_untimed = true;
        assert_eq!(said(&f), (true, true));
    }

    /// Without a handshake, a base RTT whose loop through the sender only repairs timed
    /// bounds the path's from above (each repair holds the sender's wait for the news of
    /// the loss), whether or not the other loop's samples resolve (census of seed 3434: a
    /// receiver's capture begun at 692 ms, no RTT sample, the least a repair's 51.9 ms on a
    /// 300 µs path, cwnd-limited).
    #[test]
    fn a_base_timed_by_repairs_alone_is_an_upper_bound() {
        use super::facts::Findings;
        use super::rules::fixture::{at, run, Bin, BUSY};
        let c = run(|i| Bin {
            delivered: at(if i % 2 == 0 { 1.0 } else { 0.2 }),
            ..BUSY
        });
        let mut f = own_delivery();
        f.handshake_timed = false;
        let bound = |f: &Facts| explain::base_rtt_upper_bound(&Findings { facts: f, class: &c }).is_some();
        let held_back = c.share(Label::Sender) * c.steady_s;
        assert!(
            c.verdict != Label::Bottleneck || held_back >= f.base_rtt_s,
            "{:?}",
            c.verdict
        );
        assert!(!bound(&f));
        f.sender_loop_by_repairs = true;
        assert!(bound(&f));
        f.handshake_timed = true;
        assert!(!bound(&f), "a handshake's round trip is timed before any queue");
    }

    /// Without a handshake, a bottleneck-limited flow whose sender held back, in all, for
    /// less than its least RTT never let a queue older than the capture drain (a pause
    /// drains only its own length of queue): its base RTT is an upper bound. Held back for
    /// longer, it may have drained, and nothing says so (census of seed 6666: 0.6 ms idle
    /// beside a 1.57 ms RTT in every sample).
    #[test]
    fn a_sender_that_held_back_less_than_its_least_rtt_bounds_the_base_from_above() {
        use super::facts::Findings;
        use super::rules::fixture::{at, run, Bin, BUSY};
        let mut c = run(|_| Bin {
            delivered: at(1.0),
            ..BUSY
        });
        c.verdict = Label::Bottleneck;
        c.steady_s = 1.0;
        let mut f = own_delivery();
        f.handshake_timed = false;
        f.base_rtt_s = 0.0016;
        let bound = |f: &Facts, c: &super::classification::Classification| {
            explain::base_rtt_upper_bound(&Findings { facts: f, class: c }).is_some()
        };
        c.fractions = [0.0, 0.0, 0.9994, 0.0006]; // 0.6 ms held back
        assert!(bound(&f, &c), "0.6 ms in all against a 1.6 ms least RTT");
        c.fractions = [0.0, 0.0, 0.99, 0.01]; // 10 ms held back
        assert!(!bound(&f, &c), "10 ms in all may have drained it");
    }

    /// The delivery while the sender had data floors a lower bound by what the bins' ACKs
    /// can have counted: bins 100x a round trip give nearly all of it, bins of one round
    /// trip half, and no round trip timed gives nothing.
    #[test]
    fn the_busy_floor_allows_for_acks_of_data_sent_a_round_trip_before() {
        let floor = |w_ms: i64, r: Option<f64>| busy_floor(1e6, Span::from_millis(w_ms), r);
        assert!((floor(100, Some(0.001)) - 1e6 * 100.0 / 101.0).abs() < 1e-6);
        assert!((floor(10, Some(0.01)) - 0.5e6).abs() < 1e-6);
        assert_eq!(floor(10, None), 0.0);
    }

    /// A flat flight below the BDP is the send buffer's, unless Nagle's waits for delayed
    /// ACKs (the stall) fill most of it: then only the TCP_NODELAY advice stands.
    #[test]
    fn a_flat_flight_that_nagles_waits_explain_gets_no_send_buffer_advice() {
        use super::facts::Findings;
        use super::rules::fixture::{at, run, Bin, BUSY};
        use crate::summary::{AdviceKind, Stall, StallKind};
        let c = run(|i| Bin {
            delivered: at(0.3),
            flight: 12_000 + (i as u64 % 2) * 1448,
            ..BUSY
        });
        let kinds = |f: &Facts| {
            explain::advice(&Findings { facts: f, class: &c })
                .into_iter()
                .map(|a| a.kind)
                .collect::<Vec<_>>()
        };
        let flat_s = c.plateau_share * c.steady_s;
        let with_waits = |share: f64| {
            let mut f = own_delivery();
            f.stalls.push(Stall {
                kind: StallKind::DelayedAck,
                direction: None,
                start: 0.0,
                end: 5.0,
                duration_s: share * flat_s,
                recovered: true,
                events: 40,
                intervals_s: Vec::new(),
                resumed_by: None,
                delivered_bps: None,
                sentence: String::new(),
            });
            f
        };
        let held = kinds(&with_waits(0.6));
        assert!(!held.contains(&AdviceKind::RaiseSendBuffer), "{held:?}");
        assert!(held.contains(&AdviceKind::DisableNagle), "{held:?}");
        // Waits that cover a tenth of the flat time leave it the send buffer's.
        let few = kinds(&with_waits(0.1));
        assert!(few.contains(&AdviceKind::RaiseSendBuffer), "{few:?}");
        assert!(kinds(&own_delivery()).contains(&AdviceKind::RaiseSendBuffer));
    }

    #[test]
    fn ecn_marks_show_a_full_pipe_as_losses_do() {
        let f = own_delivery();
        // The flow's own delivery alone is circular: a lower bound.
        assert_eq!(judged_capacity(&f), None);
        // A queue that marked the flow's segments CE stood above its threshold: the pipe
        // was full (RFC 3168 §5), as a retransmission says.
        let mark = Some(Mark {
            frame: 9,
            ts: Timestamp(1),
        });
        let marked = Events {
            count: 3,
            first: mark,
            last: mark,
        };
        let mut ce = own_delivery();
        ce.ecn.ce = marked;
        assert_eq!(judged_capacity(&ce), Some(1_000_000.0));
        // Before the marking queue only the echoes show it.
        let mut echoed = own_delivery();
        echoed.ecn.ece = marked;
        assert_eq!(judged_capacity(&echoed), Some(1_000_000.0));
        // Under AccECN ECE is a counter bit, and with ECN off no echo: neither shows it.
        for mode in [EcnMode::AccEcn, EcnMode::Off] {
            echoed.ecn.mode = mode;
            assert_eq!(judged_capacity(&echoed), None, "{mode}");
        }
    }

    /// A loss shows the queue overflowed only where the RTT could not show that queue:
    /// beside an RTT that timed the loop through the bottleneck and stayed flat, the loss
    /// came from a policer's bucket, a shallow buffer the bursts overran, or random loss
    /// (P41 tbf_policer: 3.3 Mbit/s behind a 12 Mbit/s policer judged at "86% of the
    /// capacity" its own delivery made).
    #[test]
    fn a_loss_beside_a_flat_rtt_does_not_show_the_pipe_full() {
        let mut lost = own_delivery();
        lost.retransmitted_segments = 3;
        assert_eq!(judged_capacity(&lost), None);
        // Spurious retransmissions are no loss whatever the RTT could see.
        let mut spurious = own_delivery();
        spurious.retransmitted_segments = 3;
        spurious.spurious_retransmissions = 3;
        spurious.sender_loop_untimed = true;
        assert_eq!(judged_capacity(&spurious), None);
        // At the receiver without timestamps the loop through the sender (and its
        // bottleneck queue) is untimed: the loss is the sign left.
        let mut blind = own_delivery();
        blind.retransmitted_segments = 3;
        blind.sender_loop_untimed = true;
        assert_eq!(judged_capacity(&blind), Some(1_000_000.0));
        // With data both ways the RTT's rise was set aside as the other direction's queue.
        let mut two_way = own_delivery();
        two_way.retransmitted_segments = 3;
        two_way.queue_other_way = Some(0.02);
        assert_eq!(judged_capacity(&two_way), Some(1_000_000.0));
        // And where the RTT rose, it showed the queue itself.
        let mut queued = own_delivery();
        queued.retransmitted_segments = 3;
        queued.median_rtt_s = Some(0.06);
        queued.prompt_queueing_s = Some(0.02);
        assert_eq!(judged_capacity(&queued), Some(1_000_000.0));
    }

    /// A window that autotuning grows never counts as a reader behind; one that shrank an
    /// eighth below the largest offered before, and stayed there, does, bins without data
    /// (the waits) taking the window their last data had.
    #[test]
    fn a_reader_behind_is_a_window_that_shrank_not_one_that_grows() {
        let bin = |window: Option<u64>| timeline::Bin {
            rwnd_ns: 1_000_000,
            min_window: window,
            max_window: window.unwrap_or(0),
            new_segments: window.is_some() as u32,
            ..Default::default()
        };
        let growing: Vec<_> = (1..=20u64).map(|k| bin(Some(10_000 * k))).collect();
        assert_eq!(reader_behind_share(&growing, 2), 0.0);
        // 64 KiB offered at first, then 20 KiB, a bin with data and three waits after it.
        let mut shrunk = vec![bin(Some(65_536)), bin(Some(65_536))];
        for _ in 0..6 {
            shrunk.push(bin(Some(20_000)));
            shrunk.extend([bin(None), bin(None), bin(None)]);
        }
        assert_eq!(reader_behind_share(&shrunk, 2), 1.0);
        // Within an eighth of the largest: what a reader that keeps up leaves.
        let near: Vec<_> = [65_536, 65_536, 60_000, 62_000, 61_000].map(|w| bin(Some(w))).to_vec();
        assert_eq!(reader_behind_share(&near, 2), 0.0);
    }
}
