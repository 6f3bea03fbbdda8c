//! The laws every comparison keeps: what `compare` prints must agree with itself and with
//! physics. They are `crate::laws`'s counterpart for a comparison of two captures (that
//! registry runs over flow summaries, and its layer cannot import this one); tests run
//! them over every comparison they make (tests/compare_captures.rs: the lab's pairs, the
//! real pair, unrelated pairs, NAT'd copies), and `tests` below shows each one catches a
//! broken comparison.

use super::report::{Comparison, ConnComparison, DirComparison, RttSplit};
use super::segments::STAMP_SLACK_NS;

/// One law: a name and its check (the violations, as sentences).
pub struct Law {
    pub name: &'static str,
    pub check: fn(&Comparison) -> Vec<String>,
}

pub const LAWS: &[Law] = &[
    Law {
        name: "claimed-on-evidence",
        check: claimed_on_evidence,
    },
    Law {
        name: "segments-accounted",
        check: segments_accounted,
    },
    Law {
        name: "delays",
        check: delays,
    },
    Law {
        name: "rtt-split",
        check: rtt_split,
    },
];

/// Every law over one comparison: (law, violation).
pub fn check(c: &Comparison) -> Vec<(&'static str, String)> {
    LAWS.iter()
        .flat_map(|l| (l.check)(c).into_iter().map(move |v| (l.name, v)))
        .collect()
}

/// Stamping error allowed where two minima measured at different points are compared
/// (ms): the same slack the timing law allows (`segments::STAMP_SLACK_NS`).
const SLACK_MS: f64 = STAMP_SLACK_NS as f64 / 1e6;
/// Figures are printed to the microsecond: sums of rounded parts may differ by this.
const ROUNDING_MS: f64 = 0.0015;

fn each<'c>(c: &'c Comparison, f: impl Fn(&'c ConnComparison, &mut Vec<String>)) -> Vec<String> {
    let mut out = Vec::new();
    for k in &c.connections {
        let mut v = Vec::new();
        f(k, &mut v);
        out.extend(v.into_iter().map(|x| format!("{} -> {}: {x}", k.a.client, k.a.server)));
    }
    out
}

/// A connection is claimed in common ("proven") exactly when its evidence reaches the
/// threshold; no finding is certain without that; `in_common` says whether one is.
/// (Issue 14: unrelated captures once "matched" with certain findings.)
pub fn claimed_on_evidence(c: &Comparison) -> Vec<String> {
    let mut out = each(c, |k, v| {
        let proven = k.match_strength == "proven";
        if proven != (k.evidence_bits >= k.evidence_needed_bits) {
            v.push(format!(
                "match {} on {} bits of evidence against {} needed",
                k.match_strength, k.evidence_bits, k.evidence_needed_bits
            ));
        }
        if !proven
            && k.middlebox
                .iter()
                .any(|m| m.confidence == crate::summary::Confidence::Certain)
        {
            v.push("a certain finding on a match that is not proven".into());
        }
    });
    let any = c.connections.iter().any(|k| k.match_strength == "proven");
    if c.in_common != any {
        out.push(format!("in_common {} with {} proven match(es)", c.in_common, any as u8));
    }
    if c.in_common && !c.notes.is_empty() {
        out.push("notes on why nothing matched, beside a match".into());
    }
    out
}

/// Per direction: no more segments matched than either capture holds, and with the
/// direction of travel known, the matched and the lost together no more than the upstream
/// capture holds, the matched and the added no more than the downstream one.
pub fn segments_accounted(c: &Comparison) -> Vec<String> {
    each(c, |k, v| {
        for (name, d) in [("c2s", &k.c2s), ("s2c", &k.s2c)] {
            if d.matched > d.segments_a.min(d.segments_b) {
                v.push(format!(
                    "{name}: {} matched of {} / {} segments",
                    d.matched, d.segments_a, d.segments_b
                ));
            }
            let Some((up, down)) = updown(d) else { continue };
            if d.matched + d.lost > up {
                v.push(format!(
                    "{name}: {} matched + {} lost > {up} segments upstream",
                    d.matched, d.lost
                ));
            }
            if d.matched + d.added > down {
                v.push(format!(
                    "{name}: {} matched + {} added > {down} segments downstream",
                    d.matched, d.added
                ));
            }
        }
    })
}

fn updown(d: &DirComparison) -> Option<(u64, u64)> {
    match d.travel.as_str() {
        "a->b" => Some((d.segments_a, d.segments_b)),
        "b->a" => Some((d.segments_b, d.segments_a)),
        _ => None,
    }
}

/// Delays between the points: the minimum is not above the median; the round trip between
/// the points is the two directions' minima summed and not below zero (a segment reaches
/// the point nearer its sender first: RFC-free physics, up to the stamping error); one-way
/// delays, when given, are not negative and sum to it.
pub fn delays(c: &Comparison) -> Vec<String> {
    each(c, |k, v| {
        for (name, d) in [("c2s", &k.c2s), ("s2c", &k.s2c)] {
            if let (Some(lo), Some(med)) = (d.delay_min_ms, d.delay_median_ms) {
                if lo > med {
                    v.push(format!("{name}: delay min {lo} ms > median {med} ms"));
                }
            }
            if d.one_way_delay_ms.is_some_and(|x| x < 0.0) {
                v.push(format!("{name}: one-way delay {:?} ms below zero", d.one_way_delay_ms));
            }
        }
        let sum = match (k.c2s.delay_min_ms, k.s2c.delay_min_ms) {
            (Some(x), Some(y)) => Some(x + y),
            _ => None,
        };
        match (k.round_trip_between_points_ms, sum) {
            (Some(rt), Some(s)) if (rt - s).abs() > ROUNDING_MS => {
                v.push(format!("round trip between the points {rt} ms, minima summed {s} ms"))
            }
            (Some(rt), None) | (None, Some(rt)) => v.push(format!("round trip {rt} ms without both minima")),
            _ => {}
        }
        if let Some(rt) = k.round_trip_between_points_ms {
            if rt < -SLACK_MS {
                v.push(format!("round trip between the points {rt} ms, below zero"));
            }
            if let (Some(x), Some(y)) = (k.c2s.one_way_delay_ms, k.s2c.one_way_delay_ms) {
                if (x + y - rt).abs() > ROUNDING_MS {
                    v.push(format!("one-way delays {x} + {y} ms, round trip {rt} ms"));
                }
            }
        }
    })
}

/// The RTT split: its parts are not negative and sum to the end-to-end figure; the round
/// trip in it is the one printed; and each capture's own loop through the far end spans
/// the round trip between the points and the far side (the minimum of a sum is at least
/// the sum of the minima: `min(d_AB + loop_B + d_BA) ≥ min d_AB + min loop_B + min d_BA`).
pub fn rtt_split(c: &Comparison) -> Vec<String> {
    each(c, |k, v| {
        let Some(r) = &k.rtt_split else { return };
        split_law(r, k.round_trip_between_points_ms, v);
    })
}

fn split_law(r: &RttSplit, between: Option<f64>, v: &mut Vec<String>) {
    for (what, x) in [("client side", r.client_side_ms), ("server side", r.server_side_ms)] {
        if x.is_some_and(|x| x < 0.0) {
            v.push(format!("{what} {x:?} ms below zero"));
        }
    }
    if between != Some(r.between_ms) {
        v.push(format!(
            "split's round trip {} ms, printed round trip {between:?} ms",
            r.between_ms
        ));
    }
    match (r.client_side_ms, r.server_side_ms, r.end_to_end_ms) {
        (Some(cl), Some(sv), Some(t)) if (cl + r.between_ms + sv - t).abs() > ROUNDING_MS => {
            v.push(format!("{cl} + {} + {sv} ms != {t} ms end to end", r.between_ms))
        }
        (Some(_), Some(_), None) | (None, _, Some(_)) | (_, None, Some(_)) => v.push(format!(
            "end to end {:?} ms with the parts {:?} / {:?}",
            r.end_to_end_ms, r.client_side_ms, r.server_side_ms
        )),
        _ => {}
    }
    for (what, whole, far) in [
        ("through the server", r.near_client_through_server_ms, r.server_side_ms),
        ("through the client", r.near_server_through_client_ms, r.client_side_ms),
    ] {
        if let (Some(w), Some(f)) = (whole, far) {
            if w < r.between_ms + f - SLACK_MS {
                v.push(format!(
                    "the loop {what} {w} ms is shorter than the round trip between the points {} ms plus the far side {f} ms",
                    r.between_ms
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{download, side, View};
    use super::*;

    #[test]
    fn a_clean_pair_keeps_every_law_and_each_broken_law_is_caught() {
        let segs = download(50);
        let c = super::super::compare(
            &side("a", &segs, &View::client_side()),
            &side("b", &segs, &View::server_side(30_000)),
        );
        assert!(c.connections[0].rtt_split.is_some(), "{c:#?}");
        assert_eq!(check(&c), vec![]);
        let broken = |f: fn(&mut Comparison), law: &str| {
            let mut x = c.clone();
            f(&mut x);
            let v = check(&x);
            assert!(v.iter().any(|(l, _)| *l == law), "{law}: {v:?}");
        };
        broken(|x| x.connections[0].evidence_bits = 1.0, "claimed-on-evidence");
        broken(|x| x.in_common = false, "claimed-on-evidence");
        broken(|x| x.connections[0].c2s.lost = 1_000_000, "segments-accounted");
        broken(|x| x.connections[0].round_trip_between_points_ms = Some(-5.0), "delays");
        broken(
            |x| {
                let r = x.connections[0].rtt_split.as_mut().unwrap();
                r.near_client_through_server_ms = Some(r.between_ms / 2.0);
            },
            "rtt-split",
        );
        broken(
            |x| {
                let r = x.connections[0].rtt_split.as_mut().unwrap();
                r.end_to_end_ms = r.end_to_end_ms.map(|t| t + 1.0);
            },
            "rtt-split",
        );
    }
}
