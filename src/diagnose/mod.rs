//! Diagnosis: the bottleneck rate, the BDP, and what limited each flow, with evidence and
//! advice. Collects per-segment facts while the flow is live (`accumulator`), decides when
//! the flow ends (`finish`), and revisits flows that shared a path once the whole capture
//! is read (`across_flows`).

mod accumulator;
mod advice;
mod capacity;
mod classify;
mod delivery;
mod dispersion;
mod evidence;
mod facts;
mod label;
mod rounds;
pub mod rules;
mod startup;
mod timeline;

pub use accumulator::{Accumulator, DirAccumulator};
pub use capacity::{Capacity, Method};
pub use classify::Classification;
pub use label::{Label, UNDETERMINED};
pub use timeline::{Bin, SenderState, Timeline, MAX_BINS};

use crate::analysis::AnalysisConfig;
use crate::flow::Dir;
use crate::summarize;
use crate::summary::{FlowSummary, Limits, Period};
use crate::tcp::Connection;
use crate::time::{Span, Timestamp};
use facts::{Facts, Findings};
use std::net::IpAddr;

/// Minimum bulk payload to judge a flow: twenty full segments.
const MIN_SEGMENTS: u64 = 20;
/// Bytes per ACK (in segments) above which ACK spacing says nothing about the bottleneck
/// (delayed ACKs cover 2 segments, GRO-coalesced ones a few more).
const STRETCH_ACK_SEGMENTS: f64 = 8.0;
/// Minimum transfer length to judge a flow, in base RTTs.
const MIN_ROUNDS: f64 = 4.0;

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
    tl: Timeline,
    base_rtt: Span,
    mss: u32,
    facts: Facts,
    hosts: (IpAddr, IpAddr, Dir),
}

pub fn finish(conn: &Connection, mut acc: Accumulator, config: &AnalysisConfig) -> Finished {
    let mut summary = summarize::base(conn, &config.capture_name, &acc.windows);
    let (findings, hints) = crate::middlebox::findings(conn, &acc.middlebox);
    summary.middlebox = findings;
    summary.notes.extend(hints);
    let bulk = summarize::bulk_direction(conn);
    let dacc = &mut acc.dirs[bulk.index()];
    dacc.close(conn.last_ts);
    let d = conn.dir(bulk);
    let mss = conn.mss(bulk);
    if !conn.handshake.seen() {
        summary
            .notes
            .push("the handshake is not in the capture: window scale and MSS are not known from it".into());
    }
    let base_rtt = conn.rtt.min_end_to_end();
    let why_not = match (base_rtt, dacc.timeline.as_ref()) {
        (None, _) => Some("no RTT sample (no handshake, no data/ACK pair, no timestamp echo)".to_string()),
        (_, None) => Some("no payload in either direction".to_string()),
        _ if d.data_segments < MIN_SEGMENTS => Some(format!(
            "too little data to judge: {} data segments, {} bytes",
            d.data_segments, d.unique_bytes
        )),
        (Some(rtt), Some(tl)) => {
            let (b, r, i) = tl.totals();
            let busy = Span((b + r + i) as i64);
            (busy.secs_f64() < MIN_ROUNDS * rtt.secs_f64()).then(|| {
                format!(
                    "transfer too short to judge: {:.1} ms, {:.1} round trips",
                    busy.millis_f64(),
                    busy.secs_f64() / rtt.secs_f64().max(1e-9)
                )
            })
        }
    };
    if let Some(reason) = why_not {
        summary.notes.push(format!("undetermined: {reason}"));
        return Finished { summary, kept: None };
    }
    let base_rtt = base_rtt.expect("checked");
    let tl = dacc.timeline.take().expect("checked");
    // Data spacing tells the bottleneck rate only past the bottleneck: when the capture
    // point is nearer the receiver than the sender.
    let (via_sender, via_receiver) = (
        conn.rtt.through(Connection::sender_end(bulk)).min,
        conn.rtt.through(Connection::sender_end(bulk.reverse())).min,
    );
    let past_bottleneck = matches!((via_sender, via_receiver), (Some(s), Some(r)) if r < s);
    let arrivals = past_bottleneck.then_some(&dacc.arrivals);
    // The flow went as fast as its receive window let it: its ACK spacing may be the
    // window's pace.
    let window_rate = summary
        .max_rwnd_bytes
        .map(|w| w as f64 / base_rtt.secs_f64().max(1e-9))
        .filter(|&w| summary.goodput_bps / 8.0 >= rules::bottleneck::AT_CAPACITY * w);
    let (cap, delivered, dispersed) = capacity::estimate(
        &tl,
        &dacc.dispersion,
        arrivals,
        base_rtt,
        mss,
        config.link_rate_bps,
        window_rate,
    );
    // Receivers that acknowledge whole bursts at once (stretch ACKs, a reader that lets the
    // window close) leave no spacing in their ACKs; before the bottleneck nothing else
    // shows its rate.
    let per_ack = dacc.delivered_bytes as f64 / dacc.delivery_acks.max(1) as f64 / mss.max(1) as f64;
    let stretch_acks = (!past_bottleneck && per_ack > STRETCH_ACK_SEGMENTS).then_some(per_ack);
    let receiver_scale = conn.scale_of_sender(bulk.reverse());
    let (client_ip, server_ip) = (conn.client.addr, conn.server.addr);
    let receiver_syn = match bulk {
        Dir::S2C => conn.handshake.syn,
        Dir::C2S => conn.handshake.syn_ack,
    };
    let facts = Facts {
        capacity: cap,
        delivery_rate: delivered,
        dispersion_rate: dispersed,
        arrival_rate: arrivals.and_then(|a| a.capacity()),
        base_rtt_s: base_rtt.secs_f64(),
        median_rtt_s: summary.rtt_ms.median.map(|m| m / 1000.0),
        p95_rtt_s: summary.rtt_ms.p95.map(|m| m / 1000.0),
        bdp: cap.map(|c| c.rate * base_rtt.secs_f64()),
        max_rwnd: summary.max_rwnd_bytes,
        max_flight: tl.bins.iter().map(|b| b.max_flight).max().unwrap_or(0),
        goodput: summary.goodput_bps / 8.0,
        data_segments: d.data_segments,
        window_full_segments: dacc.window_full_segments,
        retransmitted_segments: d.retransmitted_segments,
        zero_windows: acc.windows.zero[bulk.index()],
        receiver_scale,
        stretch_acks,
        sack_permitted: match (conn.handshake.syn, conn.handshake.syn_ack, receiver_syn) {
            (Some(a), Some(b), _) => Some(a.sack_permitted.present().is_some() && b.sack_permitted.present().is_some()),
            _ => None,
        },
        flows_sharing: 1,
    };
    let mut kept = Kept {
        base_notes: summary.notes.clone(),
        tl,
        base_rtt,
        mss,
        facts,
        hosts: (client_ip, server_ip, bulk),
    };
    let class = classify::classify(&classify::Input {
        tl: &kept.tl,
        capacity: judged_capacity(&kept.facts),
        base_rtt,
        mss,
        shared_delivered: None,
    });
    fill(&mut summary, &mut kept, &class);
    Finished {
        summary,
        kept: Some(kept),
    }
}

/// The capacity a flow's delivery is judged against. When the only evidence of the
/// bottleneck's rate is the flow's own delivery, calling the flow "at capacity" would be
/// circular: it needs a sign that the pipe was actually full — a queue (RTT above the
/// base) or losses. Without one the rate is a lower bound, reported but not judged by.
fn judged_capacity(f: &Facts) -> Option<f64> {
    let cap = f.capacity?;
    if cap.method != Method::DeliveryRate {
        return Some(cap.rate);
    }
    let queue = f.queueing_s().unwrap_or(0.0);
    // Packet spacing that shows (nearly) the same rate is independent evidence too: a
    // paced sender (BBR) fills the pipe with hardly any queue and no loss.
    let acks = if f.stretch_acks.is_some() {
        None
    } else {
        f.dispersion_rate
    };
    let spacing = acks.unwrap_or(0.0).max(f.arrival_rate.unwrap_or(0.0));
    let full = f.retransmitted_segments > 0
        || queue >= QUEUE_SIGN_S.max(QUEUE_SIGN_SHARE * f.base_rtt_s)
        || spacing >= rules::bottleneck::AT_CAPACITY * cap.rate;
    full.then_some(cap.rate)
}

/// Queueing delay that shows a full pipe: 5% of the base RTT, at least a millisecond
/// (below that, timer and scheduling noise).
const QUEUE_SIGN_SHARE: f64 = 0.05;
const QUEUE_SIGN_S: f64 = 0.001;

/// Writes the diagnosis fields of the summary.
fn fill(s: &mut FlowSummary, k: &mut Kept, c: &Classification) {
    let f = &k.facts;
    s.bottleneck_bps = f.capacity.map(|c| c.rate * 8.0);
    s.bottleneck_method = f.capacity.map(|c| c.method.as_str().to_string());
    s.bdp_bytes = f.bdp.map(|b| b.round() as u64);
    s.sender_max_flight_bytes = Some(f.max_flight);
    s.limits = Some(Limits {
        receiver_window: round4(c.fractions[Label::ReceiverWindow.index()]),
        cwnd: round4(c.fractions[Label::Cwnd.index()]),
        bottleneck: round4(c.fractions[Label::Bottleneck.index()]),
        sender: round4(c.fractions[Label::Sender.index()]),
    });
    s.verdict = c.verdict.as_str().to_string();
    s.periods = c
        .periods
        .iter()
        .map(|&(a, b, l)| Period {
            start: a.secs_f64(),
            end: b.secs_f64(),
            label: l.as_str().to_string(),
        })
        .collect();
    let findings = Findings { facts: f, class: c };
    s.evidence = evidence::write(&findings);
    s.advice = advice::write(&findings);
    s.notes = k.base_notes.clone();
    s.notes.extend(notes(&findings));
}

/// Notes on how far the figures can be trusted.
fn notes(x: &Findings<'_>) -> Vec<String> {
    let (f, c) = (x.facts, x.class);
    let mut out = Vec::new();
    if f.flows_sharing > 1 {
        out.push(format!(
            "shares its path with {} other flow(s) between the same hosts at the same time; the bottleneck and utilisation are the group's",
            f.flows_sharing - 1
        ));
    }
    if f.capacity.is_none() {
        let why = match f.stretch_acks {
            Some(n) => {
                format!(", and the receiver acknowledged {n:.0} segments per ACK, so ACK spacing shows nothing of it")
            }
            None => String::new(),
        };
        out.push(format!(
            "no bottleneck rate (and no BDP): the sender was never busy long enough to fill the path, and no ACK or data spacing showed the link's rate from this capture point{why}; a capture at the receiver would, or give it with --link-rate"
        ));
    }
    // A flow's own delivery rate measures the bottleneck only if the flow filled it.
    let lower_bound =
        f.capacity.is_some_and(|cap| cap.method == Method::DeliveryRate) && c.verdict != Label::Bottleneck;
    if lower_bound {
        let why = match f.stretch_acks {
            Some(n) => format!(
                "the receiver acknowledged {n:.0} segments per ACK, so ACK spacing shows nothing of the bottleneck from this capture point (a capture at the receiver would)"
            ),
            None => "no ACK or data spacing showed a faster link".to_string(),
        };
        out.push(format!(
            "the bottleneck rate (and the BDP) is a lower bound: this flow never filled the path, and {why}"
        ));
    }
    out
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// After the whole capture: flows between the same two hosts, in the same direction and
/// overlapping in time share a bottleneck. Their delivery is summed; the path's capacity
/// is at least that sum's best round-trip rate, and each flow is judged against the share
/// of the path the group used.
pub fn across_flows(flows: &mut [Finished], _config: &AnalysisConfig) {
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
    for k in &members {
        for (i, b) in k.tl.bins.iter().enumerate() {
            spread(
                &mut grid,
                start,
                width,
                k.tl.start_of(i),
                k.tl.width.nanos(),
                b.delivered as f64,
            );
        }
    }
    // Capacity of the shared path: the best summed delivery over the longest base RTT.
    let rtt = members.iter().map(|k| k.base_rtt).max().unwrap();
    let window = capacity::delivery_window(rtt, Span(width)).nanos();
    let shared_rate = delivery::rate_percentile(&grid, Span(width), Span(window)).unwrap_or(0.0);
    let count = group.len();
    for &i in group {
        let f = &mut flows[i];
        let Some(mut k) = f.kept.take() else { continue };
        let own = k.facts.capacity;
        let use_shared = own.is_none_or(|c| c.method != Method::LinkRate && shared_rate > c.rate);
        if use_shared {
            k.facts.capacity = Some(Capacity {
                rate: shared_rate,
                method: Method::SharedDeliveryRate,
            });
            k.facts.bdp = Some(shared_rate * k.base_rtt.secs_f64());
        }
        k.facts.flows_sharing = count;
        // This flow's bins, filled with the group's delivery.
        let shared: Vec<f64> = (0..k.tl.bins.len())
            .map(|b| gather(&grid, start, width, k.tl.start_of(b), k.tl.width.nanos()))
            .collect();
        let class = classify::classify(&classify::Input {
            tl: &k.tl,
            capacity: judged_capacity(&k.facts),
            base_rtt: k.base_rtt,
            mss: k.mss,
            shared_delivered: Some(&shared),
        });
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
