//! What differs between two captures of one connection: which capture is nearer the
//! client, the handshake options at both points, ISNs, addresses, and per direction the
//! segments lost or added between the points, windows rewritten and the delay.

use super::evidence::Strength;
use super::matching::Match;
use super::record::{ConnRecord, Fp, HsRecord};
use super::report::{ConnComparison, ConnInfo, Difference, DirComparison, HandshakePair, RttSplit, SynOptionsInfo};
use super::segments::pair_segments;
use crate::flow::Dir;
use crate::middlebox::layout::{overwritten_option, SUSPICIOUS_RUN};
use crate::middlebox::{Confidence, HsSegment, Kind};
use crate::summary::MiddleboxFinding;

/// Which capture sees a direction's segments first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Near {
    A,
    B,
    Unknown,
}

fn ms(ns: i64) -> f64 {
    (ns as f64 / 1e3).round() / 1e3
}

fn median(v: &mut [i64]) -> Option<i64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    Some(v[v.len() / 2])
}

fn syn_info(h: Option<HsRecord>) -> Option<SynOptionsInfo> {
    h.map(|h| SynOptionsInfo {
        window: h.window,
        mss: h.mss,
        wscale: h.wscale,
        sack_permitted: h.sack_permitted,
        timestamps: h.timestamps,
        nop_run: h.nop_run,
    })
}

fn conn_info(c: &ConnRecord) -> ConnInfo {
    ConnInfo {
        client: c.client.to_string(),
        server: c.server.to_string(),
        client_isn: c.isn(Dir::C2S),
        server_isn: c.isn(Dir::S2C),
        packets: c.dirs.iter().map(|d| d.segments).sum(),
    }
}

fn name(n: Near) -> &'static str {
    match n {
        Near::A => "a",
        Near::B => "b",
        Near::Unknown => "unknown",
    }
}

/// The median of `t_B − t_A` over the segments of direction `d` paired at both points.
fn median_delta(a: &ConnRecord, b: &ConnRecord, m: &[Vec<(usize, usize)>; 2], d: Dir) -> Option<i64> {
    let mut v: Vec<i64> = m[d.index()]
        .iter()
        .map(|&(i, j)| b.dir(d).fps[j].t - a.dir(d).fps[i].t)
        .collect();
    median(&mut v)
}

/// Which capture is nearer the client, and why.
fn nearer_client(a: &ConnRecord, b: &ConnRecord, m: &[Vec<(usize, usize)>; 2]) -> (Near, String) {
    // Clock-free: a c2s segment reaches the capture nearer the client first and an s2c
    // segment last, so (t_B − t_A) is larger for c2s than for s2c when A is nearer.
    let delta = |d: Dir| median_delta(a, b, m, d);
    if m[0].len() >= 3 && m[1].len() >= 3 {
        if let (Some(c2s), Some(s2c)) = (delta(Dir::C2S), delta(Dir::S2C)) {
            if c2s != s2c {
                let near = if c2s > s2c { Near::A } else { Near::B };
                return (
                    near,
                    format!(
                        "median time at B minus time at A: c2s {:+.3} ms, s2c {:+.3} ms (clock offset included)",
                        ms(c2s),
                        ms(s2c)
                    ),
                );
            }
        }
    }
    let gap = |c: &ConnRecord| Some(c.syn_ack?.t - c.syn?.t);
    if let (Some(ga), Some(gb)) = (gap(a), gap(b)) {
        if ga != gb {
            let near = if ga > gb { Near::A } else { Near::B };
            return (
                near,
                format!(
                    "the SYN/ACK follows the SYN after {:.3} ms in A, {:.3} ms in B",
                    ms(ga),
                    ms(gb)
                ),
            );
        }
    }
    if let (Some(la), Some(lb)) = (a.loop_server_ms, b.loop_server_ms) {
        if (la - lb).abs() > 0.05 {
            let near = if la > lb { Near::A } else { Near::B };
            return (
                near,
                format!("the loop through the server is {la:.3} ms from A, {lb:.3} ms from B"),
            );
        }
    }
    (Near::Unknown, "no segment timing tells the order of the points".into())
}

struct Ctx<'a> {
    a: &'a ConnRecord,
    b: &'a ConnRecord,
    /// Capture nearer the client.
    near: Near,
    differences: Vec<Difference>,
    found: Vec<(Kind, HsSegment, String)>,
}

impl<'a> Ctx<'a> {
    /// (upstream, downstream) records for segments travelling in `d`, and their names.
    fn order(&self, d: Dir) -> Option<(&'a ConnRecord, &'a ConnRecord, &'static str, &'static str)> {
        let a_first = match (self.near, d) {
            (Near::A, Dir::C2S) | (Near::B, Dir::S2C) => true,
            (Near::B, Dir::C2S) | (Near::A, Dir::S2C) => false,
            (Near::Unknown, _) => return None,
        };
        Some(if a_first {
            (self.a, self.b, "A", "B")
        } else {
            (self.b, self.a, "B", "A")
        })
    }

    fn handshake(&mut self, d: Dir) {
        let seg = HsSegment::sent_by(d);
        let seg_name = if d == Dir::C2S { "SYN" } else { "SYN/ACK" };
        // With the order unknown, the capture that lacks an option is taken as downstream
        // (stripping is what middleboxes do; adding options is rare).
        let (up, down, un, dn, known) = match self.order(d) {
            Some((u, w, un, dn)) => (u.handshake(d), w.handshake(d), un, dn, true),
            None => {
                let (x, y) = (self.a.handshake(d), self.b.handshake(d));
                let richer_a = x.map_or(0, richness) >= y.map_or(0, richness);
                if richer_a {
                    (x, y, "A", "B", false)
                } else {
                    (y, x, "B", "A", false)
                }
            }
        };
        let (Some(u), Some(w)) = (up, down) else { return };
        if !u.complete || !w.complete {
            return;
        }
        let hole = |h: &HsRecord| match h.nop_run {
            Some(n) if n >= SUSPICIOUS_RUN => {
                format!(
                    " ({n} NOPs in the option area at {dn}: {} overwritten)",
                    overwritten_option(n).unwrap_or("an option")
                )
            }
            _ => String::new(),
        };
        let order_note = if known {
            ""
        } else {
            " (the order of the points is unknown: the capture without the option is taken as downstream)"
        };
        let mut diff = |kind: &str, option: &str, upv: String, downv: String, detail: String| {
            self.differences.push(Difference {
                kind: kind.into(),
                on: seg.as_str().into(),
                option: option.into(),
                upstream: upv,
                downstream: downv,
                detail: format!("{detail}{order_note}"),
            });
        };
        let mut found = Vec::new();
        // Window scale (RFC 7323 §2).
        match (u.wscale, w.wscale) {
            (Some(x), None) => {
                // What the ends make of it (RFC 7323 §2.2: scaling needs both options).
                let effect = match (d, self.a.handshake(Dir::C2S).and_then(|h| h.wscale)) {
                    (Dir::C2S, _) => "; the server never saw it and answered without one: scaling is off at both ends, windows are capped at 65535 bytes",
                    (Dir::S2C, Some(_)) => "; the server, which received the client's option, scales its windows and the client's, while the client believes scaling is off: the ends disagree",
                    (Dir::S2C, None) => "",
                };
                let t = format!("the {seg_name} carries window scale {x} at {un} and no window-scale option at {dn}: removed between the points{}{effect}", hole(&w));
                diff("option-removed", "wscale", x.to_string(), "-".into(), t.clone());
                found.push((Kind::WscaleStripped, t));
            }
            (None, Some(y)) => diff(
                "option-added",
                "wscale",
                "-".into(),
                y.to_string(),
                format!("the {seg_name} gained window scale {y} between {un} and {dn}"),
            ),
            (Some(x), Some(y)) if x != y => {
                let t = format!("the {seg_name}'s window scale was rewritten from {x} at {un} to {y} at {dn}: the ends disagree on the scale of the {}'s windows", if d == Dir::C2S { "client" } else { "server" });
                diff("option-rewritten", "wscale", x.to_string(), y.to_string(), t.clone());
                found.push((Kind::WscaleMismatch, t));
            }
            _ => {}
        }
        // MSS (RFC 9293 §3.7.1).
        match (u.mss, w.mss) {
            (Some(x), Some(y)) if y < x => {
                let t = format!(
                    "the {seg_name}'s MSS was lowered from {x} at {un} to {y} at {dn}: clamped between the points"
                );
                diff("option-rewritten", "mss", x.to_string(), y.to_string(), t.clone());
                found.push((Kind::MssClamped, t));
            }
            (Some(x), Some(y)) if y > x => diff(
                "option-rewritten",
                "mss",
                x.to_string(),
                y.to_string(),
                format!("the {seg_name}'s MSS was raised from {x} at {un} to {y} at {dn}"),
            ),
            (Some(x), None) => {
                let t = format!("the {seg_name} carries MSS {x} at {un} and none at {dn}: removed between the points (the receiver assumes 536, RFC 9293 §3.7.1)");
                diff("option-removed", "mss", x.to_string(), "-".into(), t.clone());
                found.push((Kind::MssClamped, t));
            }
            (None, Some(y)) => diff(
                "option-added",
                "mss",
                "-".into(),
                y.to_string(),
                format!("the {seg_name} gained MSS {y} between {un} and {dn}"),
            ),
            _ => {}
        }
        // SACK-permitted (RFC 2018 §2).
        match (u.sack_permitted, w.sack_permitted) {
            (true, false) => {
                let t = format!(
                    "the {seg_name} carries SACK-permitted at {un} and not at {dn}: removed between the points{}",
                    hole(&w)
                );
                diff("option-removed", "sack-permitted", "yes".into(), "-".into(), t.clone());
                found.push((Kind::SackStripped, t));
            }
            (false, true) => diff(
                "option-added",
                "sack-permitted",
                "-".into(),
                "yes".into(),
                format!("the {seg_name} gained SACK-permitted between {un} and {dn}"),
            ),
            _ => {}
        }
        // Timestamps (RFC 7323 §3).
        match (u.timestamps, w.timestamps) {
            (true, false) => {
                let t = format!(
                    "the {seg_name} carries timestamps at {un} and not at {dn}: removed between the points{}",
                    hole(&w)
                );
                diff("option-removed", "timestamps", "yes".into(), "-".into(), t.clone());
                found.push((Kind::TimestampsStripped, t));
            }
            (false, true) => diff(
                "option-added",
                "timestamps",
                "-".into(),
                "yes".into(),
                format!("the {seg_name} gained timestamps between {un} and {dn}"),
            ),
            _ => {}
        }
        self.found.extend(found.into_iter().map(|(k, t)| (k, seg, t)));
    }

    fn isn_and_addresses(&mut self, found: &Match) {
        for d in [Dir::C2S, Dir::S2C] {
            let Some((u, w, un, dn)) = self.order(d).or(Some((self.a, self.b, "A", "B"))) else {
                continue;
            };
            let whose = if d == Dir::C2S { "client's" } else { "server's" };
            if u.isn(d).is_none() || w.isn(d).is_none() {
                // Without both handshakes, the offset the matching found says it.
                if let Some(o) = found.offsets[d.index()].filter(|&o| o != 0) {
                    let shift = if std::ptr::eq(u, self.a) { o } else { o.wrapping_neg() };
                    self.differences.push(Difference {
                        kind: "isn-shifted".into(),
                        on: d.as_str().into(),
                        option: String::new(),
                        upstream: "+0".into(),
                        downstream: format!("{:+}", shift as i32),
                        detail: format!(
                            "the {whose} sequence numbers at {dn} are those at {un} shifted by {}: sequence numbers are rewritten between the points",
                            shift as i32
                        ),
                    });
                }
            }
            if let (Some(x), Some(y)) = (u.isn(d), w.isn(d)) {
                if x != y {
                    self.differences.push(Difference {
                        kind: "isn-shifted".into(),
                        on: d.as_str().into(),
                        option: String::new(),
                        upstream: x.to_string(),
                        downstream: y.to_string(),
                        detail: format!(
                            "the {whose} ISN is {x} at {un} and {y} at {dn} (shifted by {}): sequence numbers are rewritten between the points",
                            y.wrapping_sub(x) as i32
                        ),
                    });
                }
            }
        }
        for (end, x, y) in [
            ("client", self.a.client, self.b.client),
            ("server", self.a.server, self.b.server),
        ] {
            if x != y {
                self.differences.push(Difference {
                    kind: "address-rewritten".into(),
                    on: end.into(),
                    option: String::new(),
                    upstream: x.to_string(),
                    downstream: y.to_string(),
                    detail: format!("the {end} is {x} in A and {y} in B: address translation (NAT) between the points"),
                });
            }
        }
    }

    fn direction(&mut self, d: Dir, m: &[(usize, usize)]) -> DirComparison {
        let (a, b) = (self.a.dir(d), self.b.dir(d));
        let mut out = DirComparison {
            travel: "unknown".into(),
            segments_a: a.segments,
            segments_b: b.segments,
            data_segments_a: a.data_segments,
            data_segments_b: b.data_segments,
            matched: m.len() as u64,
            ..Default::default()
        };
        // Orient: pairs as (upstream fp, downstream fp).
        let Some((u, w, un, dn)) = self.order(d) else {
            return out;
        };
        out.travel = format!("{}->{}", un.to_lowercase(), dn.to_lowercase());
        let a_up = std::ptr::eq(u, self.a);
        let (up, down) = (u.dir(d), w.dir(d));
        let pairs: Vec<(usize, usize)> = m.iter().map(|&(i, j)| if a_up { (i, j) } else { (j, i) }).collect();
        if pairs.is_empty() {
            return out;
        }
        let mut seen_up = vec![false; up.fps.len()];
        let mut seen_down = vec![false; down.fps.len()];
        for &(i, j) in &pairs {
            seen_up[i] = true;
            seen_down[j] = true;
        }
        let span = |seen: &[bool]| -> (usize, usize) {
            (
                seen.iter().position(|&s| s).unwrap_or(0),
                seen.iter().rposition(|&s| s).unwrap_or(0),
            )
        };
        let (u0, u1) = span(&seen_up);
        let (d0, d1) = span(&seen_down);
        out.lost = (u0..=u1).filter(|&i| !seen_up[i]).count() as u64;
        out.added = (d0..=d1).filter(|&j| !seen_down[j]).count() as u64;
        // Beyond the fingerprints only the counts are left: meaningful when both captures
        // hold the whole connection (else one may just have started or stopped earlier).
        if (up.unrecorded > 0 || down.unrecorded > 0) && self.a.whole() && self.b.whole() {
            out.lost_beyond_window = up.unrecorded.saturating_sub(down.unrecorded);
        }
        let mut delays: Vec<i64> = pairs.iter().map(|&(i, j)| down.fps[j].t - up.fps[i].t).collect();
        let min = delays.iter().copied().min();
        out.delay_min_ms = min.map(ms);
        out.delay_median_ms = median(&mut delays).map(ms);
        // Windows and per-segment options.
        let rewritten: Vec<(u16, u16)> = pairs
            .iter()
            .map(|&(i, j)| (up.fps[i].win, down.fps[j].win))
            .filter(|(x, y)| x != y)
            .collect();
        out.windows_rewritten = rewritten.len() as u64;
        if let Some(&(x, y)) = rewritten.first() {
            self.differences.push(Difference {
                kind: "window-rewritten".into(),
                on: d.as_str().into(),
                option: String::new(),
                upstream: x.to_string(),
                downstream: y.to_string(),
                detail: format!(
                    "the window field of {} of {} {} segments differs between {un} and {dn} (first: {x} -> {y})",
                    rewritten.len(),
                    pairs.len(),
                    d.as_str()
                ),
            });
        }
        for (kind, what, test) in [
            (
                "timestamps-removed",
                "timestamps option",
                (|f: &Fp| f.has_ts()) as fn(&Fp) -> bool,
            ),
            ("sack-blocks-removed", "SACK blocks", |f: &Fp| f.has_sack()),
        ] {
            // The handshake's options are compared above; these are the other segments'.
            let n = pairs
                .iter()
                .filter(|&&(i, j)| {
                    up.fps[i].flags & crate::decode::TcpFlags::SYN == 0 && test(&up.fps[i]) && !test(&down.fps[j])
                })
                .count();
            if n > 0 {
                self.differences.push(Difference {
                    kind: kind.into(),
                    on: d.as_str().into(),
                    option: String::new(),
                    upstream: "yes".into(),
                    downstream: "-".into(),
                    detail: format!("{n} {} segments carry their {what} at {un} and not at {dn}", d.as_str()),
                });
            }
        }
        out
    }
}

/// Options a handshake segment carries (to guess the upstream one when the order of the
/// points is unknown).
fn richness(h: HsRecord) -> usize {
    h.mss.is_some() as usize + h.wscale.is_some() as usize + h.sack_permitted as usize + h.timestamps as usize
}

/// The confidence a finding can have: a rewrite seen on both sides of it is certain only
/// when the two records are proven one connection and the order of the points is known.
fn confidence(strength: Strength, near: Near) -> Confidence {
    match (strength, near == Near::Unknown) {
        (Strength::Proven, false) => Confidence::Certain,
        (Strength::Proven, true) | (Strength::Likely, false) => Confidence::Likely,
        (Strength::Likely, true) => Confidence::Possible,
    }
}

/// B's clock minus A's. With the order of the points known, half the difference of the
/// two directions' minimum delays: A nearer the client gives `min Δc2s = θ + d` and
/// `min(−Δs2c) = d' − θ`, so `θ = (d_c2s_min − d_s2c_min) / 2` when `d = d'` (queue-free
/// delays between the points symmetric). With the order unknown (the directions' median
/// differences equal: the points coincide in time), the mean of those medians.
fn clock_offset(
    a: &ConnRecord,
    b: &ConnRecord,
    m: &[Vec<(usize, usize)>; 2],
    c2s: &DirComparison,
    s2c: &DirComparison,
) -> Option<f64> {
    let signed = |d: &DirComparison| {
        let sign = match d.travel.as_str() {
            "a->b" => 1.0,
            "b->a" => -1.0,
            _ => return None,
        };
        Some(d.delay_min_ms? * sign)
    };
    let ms3 = |x: f64| (x * 1000.0).round() / 1000.0;
    if let (Some(x), Some(y)) = (signed(c2s), signed(s2c)) {
        return Some(ms3((x + y) / 2.0));
    }
    let delta = |d: Dir| median_delta(a, b, m, d);
    let (x, y) = (delta(Dir::C2S)?, delta(Dir::S2C)?);
    Some(ms3((ms(x) + ms(y)) / 2.0))
}

/// The base RTT in parts along the path, from the loops each capture measured itself
/// (`ConnRecord::loop_client_ms`, `loop_server_ms`) and the round trip between the points.
fn rtt_split(a: &ConnRecord, b: &ConnRecord, near: Near, between: f64) -> Option<RttSplit> {
    let (nc, ns) = match near {
        Near::A => (a, b),
        Near::B => (b, a),
        Near::Unknown => return None,
    };
    // To the nanosecond: a sub-microsecond loop (two hosts on one bridge) is not zero.
    let r3 = |x: f64| (x * 1e6).round() / 1e6;
    // Each side has two upper bounds: the loop the nearer point measures, and the farther
    // point's loop through that end less the round trip between the points (a sample there
    // is a sample of the near loop plus two delays, each at least its minimum). A loop
    // through an end includes that end's response time (a delayed ACK, a sender waiting
    // for its window), so both bound the side's network delay from above; the smaller is
    // kept.
    let side = |near: Option<f64>, far: Option<f64>| match (near, far.map(|f| f - between)) {
        (Some(x), Some(y)) => Some(r3(x.min(y).max(0.0))),
        (x, y) => x.or(y).map(|v| r3(v.max(0.0))),
    };
    let client_side = side(nc.loop_client_ms, ns.loop_client_ms);
    let server_side = side(ns.loop_server_ms, nc.loop_server_ms);
    let end_to_end = match (client_side, server_side) {
        (Some(c), Some(s)) => Some(r3(c + between + s)),
        _ => None,
    };
    Some(RttSplit {
        near_client: name(near).into(),
        client_side_ms: client_side,
        between_ms: between,
        server_side_ms: server_side,
        end_to_end_ms: end_to_end,
        near_client_through_server_ms: nc.loop_server_ms.map(r3),
        near_server_through_client_ms: ns.loop_client_ms.map(r3),
    })
}

pub fn compare_conn(a: &ConnRecord, b: &ConnRecord, found: &Match) -> ConnComparison {
    let m = [
        pair_segments(a, b, Dir::C2S, &found.offsets),
        pair_segments(a, b, Dir::S2C, &found.offsets),
    ];
    let (near, why) = nearer_client(a, b, &m);
    let mut cx = Ctx {
        a,
        b,
        near,
        differences: Vec::new(),
        found: Vec::new(),
    };
    cx.isn_and_addresses(found);
    cx.handshake(Dir::C2S);
    cx.handshake(Dir::S2C);
    let c2s = cx.direction(Dir::C2S, &m[0]);
    let s2c = cx.direction(Dir::S2C, &m[1]);
    let (mut c2s, mut s2c) = (c2s, s2c);
    let round_trip = match (c2s.delay_min_ms, s2c.delay_min_ms) {
        (Some(x), Some(y)) => Some(((x + y) * 1000.0).round() / 1000.0),
        _ => None,
    };
    if let (Some(x), Some(y)) = (c2s.delay_min_ms, s2c.delay_min_ms) {
        if x >= 0.0 && y >= 0.0 {
            c2s.one_way_delay_ms = Some(x);
            s2c.one_way_delay_ms = Some(y);
        }
    }
    let clock_offset_ms = clock_offset(a, b, &m, &c2s, &s2c);
    let rtt_split = round_trip.and_then(|between| rtt_split(a, b, near, between));
    // Findings of one kind on both handshake segments merge into "both".
    let confidence = confidence(found.strength, near);
    let rests_on = match found.strength {
        Strength::Proven => String::new(),
        Strength::Likely => format!(
            " (the two captures' connections are matched by {} only: {})",
            found.basis.as_str(),
            found.describe()
        ),
    };
    let mut middlebox: Vec<MiddleboxFinding> = Vec::new();
    for (kind, seg, text) in &cx.found {
        let other = cx.found.iter().find(|(k, s, _)| k == kind && s != seg);
        if other.is_some() && *seg == HsSegment::SynAck {
            continue; // merged into the SYN's entry
        }
        let (direction, evidence) = match other {
            Some((_, _, t2)) => (HsSegment::Both, format!("{text}; {t2}{rests_on}")),
            None => (*seg, format!("{text}{rests_on}")),
        };
        middlebox.push(MiddleboxFinding {
            kind: *kind,
            direction,
            confidence,
            evidence,
        });
    }
    let effects = cx.differences.len();
    let lost = c2s.lost + s2c.lost + c2s.lost_beyond_window + s2c.lost_beyond_window;
    let path = if lost > 0 {
        format!(" ({lost} segment(s) lost between the points)")
    } else {
        String::new()
    };
    let verdict = if effects == 0 {
        format!("no middlebox effects seen{path}")
    } else {
        format!("{effects} middlebox effect(s){path}")
    };
    ConnComparison {
        a: conn_info(a),
        b: conn_info(b),
        matched_by: found.basis.as_str().into(),
        match_strength: found.strength.as_str().into(),
        match_evidence: found.describe(),
        evidence_bits: (found.bits * 10.0).round() / 10.0,
        evidence_needed_bits: (found.needed * 10.0).round() / 10.0,
        nearer_client: name(near).into(),
        nearer_client_evidence: why,
        syn: HandshakePair {
            a: syn_info(a.syn),
            b: syn_info(b.syn),
        },
        syn_ack: HandshakePair {
            a: syn_info(a.syn_ack),
            b: syn_info(b.syn_ack),
        },
        differences: cx.differences,
        middlebox,
        c2s,
        s2c,
        round_trip_between_points_ms: round_trip,
        clock_offset_ms,
        rtt_split,
        verdict,
    }
}
