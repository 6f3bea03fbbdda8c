//! ECN marks as evidence. A queue that marks an ECN-capable packet Congestion Experienced
//! does so where it would otherwise have dropped it: its queue stood above its marking
//! threshold (RFC 3168 §5; RFC 7567 §4.2.1 asks AQMs to mark rather than drop when ECN is
//! negotiated; CoDel marks at the drop points, RFC 8289 §4.4). The receiver echoes the
//! mark (ECE, §6.1.3) and the sender reduces its congestion window as for a loss, and says
//! so with CWR (§6.1.2). So a mark is what a loss is to the diagnosis: a sign that the pipe
//! was full (`judged_capacity`), a cut of the window (the cwnd rule, plateaus, the end of
//! slow start), and no buffer at either end raises a window congestion control cut. This
//! file writes the sentence the cwnd rule prints, the advice, and the law that holds the
//! sentence to the summary's counts.

use super::advice::plain;
use super::facts::{EcnFacts, Facts, Findings};
use crate::summary::{AdviceItem, AdviceKind, DirectionSummary, EcnMode, FlowSummary};
use crate::tcp::ecn::{Events, Mark};
use crate::units::{agrees, count, parse, pct, secs};

/// "from +6.82 s to +94.0 s" for a kind of event.
fn span(x: &EcnFacts, e: &Events) -> String {
    let at = |m: Option<Mark>| match (m, x.origin) {
        (Some(m), Some(o)) => secs((m.ts - o).max_zero().secs_f64()),
        _ => "?".into(),
    };
    format!("from +{} to +{}", at(e.first), at(e.last))
}

/// The marking sentence of the cwnd rule, for a flow whose path marked its segments:
/// "ECN: 52 segments marked CE (31% of the direction's 170) from +6.82 s to +94.0 s, echoed
/// on 131 ACKs (ECE); the sender reduced its congestion window 46 times (CWR) from +6.82 s
/// to +85.9 s: ...". Without CE in the capture (taken before the marking queue), the echoes
/// say it; under AccECN only the CE marks do.
pub fn evidence(x: &Facts) -> Option<String> {
    let e = &x.ecn;
    if !e.congestion() {
        return None;
    }
    let mut s = String::from("ECN: ");
    if e.ce.count > 0 {
        s += &format!(
            "{} marked CE ({} of the direction's {}) {}",
            count(e.ce.count, "segment", "segments"),
            pct(e.ce.count as f64 / e.segments.max(1) as f64),
            e.segments,
            span(e, &e.ce)
        );
        if e.flags_signal() && e.ece.count > 0 {
            s += &format!(", echoed on {} (ECE)", count(e.ece.count, "ACK", "ACKs"));
        }
    } else {
        s += &format!(
            "{} echoed ECE {} (the marks were made beyond the capture point)",
            count(e.ece.count, "ACK", "ACKs"),
            span(e, &e.ece)
        );
    }
    if e.reductions() > 0 {
        s += &format!(
            "; the sender reduced its congestion window {} (CWR) {}",
            count(e.cwr.count, "time", "times"),
            span(e, &e.cwr)
        );
    }
    if e.mode == EcnMode::AccEcn {
        s += "; AccECN's feedback (the ACE counter) is not decoded";
    }
    s += ": a queue on the path stood above its marking threshold (RFC 3168 §5), the congestion a loss would otherwise have signalled";
    Some(s)
}

/// The advice for a flow whose path marked its segments, unless another item asks for a
/// bigger buffer or window (the flow was held by it before congestion could be: that item
/// stands, and this one would contradict it).
pub fn advice(f: &Findings<'_>, others: &[AdviceItem]) -> Option<AdviceItem> {
    let x = f.facts;
    let e = &x.ecn;
    if !e.congestion() || others.iter().any(|a| raises_window(a.kind)) {
        return None;
    }
    let marked = if e.ce.count > 0 {
        format!("a queue marked {} of its segments CE", e.ce.count)
    } else {
        format!(
            "its receiver echoed congestion marks on {} (ECE)",
            count(e.ece.count, "ACK", "ACKs")
        )
    };
    let cut = match e.reductions() {
        0 => String::new(),
        n => format!(
            " and the sender cut its congestion window {} (CWR)",
            count(n, "time", "times")
        ),
    };
    Some(plain(
        AdviceKind::CongestedPath,
        None,
        format!(
            "the path was congested: {marked}{cut} (ECN, RFC 3168) — the bottleneck's queue signalled it was full instead of dropping; a bigger receive or send buffer will not help, more capacity at the bottleneck or less traffic sharing it would"
        ),
        x,
    ))
}

/// Advice that asks for a bigger window or buffer.
fn raises_window(kind: AdviceKind) -> bool {
    matches!(
        kind,
        AdviceKind::RaiseReceiveBuffer | AdviceKind::RaiseSendBuffer | AdviceKind::EnableWindowScaling
    )
}

/// "A bigger buffer will not help" is never beside an item asking for one.
fn advice_law(f: &FlowSummary) -> Vec<String> {
    let congested = f.advice_items.iter().any(|a| a.kind == AdviceKind::CongestedPath);
    match f.advice_items.iter().find(|a| raises_window(a.kind)) {
        Some(a) if congested => vec![format!("congested-path advice beside {}", a.kind)],
        _ => Vec::new(),
    }
}

/// The integer written right after `key` in `s`.
fn count_after(s: &str, key: &str) -> Option<u64> {
    let rest = &s[s.find(key)? + key.len()..];
    let end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// The two instants of "from +A to +B" after `key`, in seconds.
fn span_after(s: &str, key: &str) -> Option<(String, String)> {
    let rest = &s[s.find(key)? + key.len()..];
    let rest = &rest[rest.find("from +")? + "from +".len()..];
    let (a, rest) = rest.split_once(" to +")?;
    let b = &rest[..rest.find([',', ';', ':', '(']).unwrap_or(rest.len())];
    Some((a.trim().to_string(), b.trim().to_string()))
}

/// The laws of ECN's sentences (on the summary): the marking sentence's counts are the bulk
/// direction's, its share is the count over the direction's segments, its instants are the
/// first and last of each kind from the flow's start; and the congested-path advice is
/// never beside an item that asks for a bigger buffer ([`advice_law`]).
pub fn law(f: &FlowSummary) -> Vec<String> {
    let mut out = advice_law(f);
    let d: &DirectionSummary = f.dir(f.bulk_direction);
    for e in f.evidence.iter().filter(|e| e.starts_with("ECN: ")) {
        let mut count = |key: &str, want: u64| match count_after(e, key) {
            Some(n) if n != want => out.push(format!("\"{key}{n}\" but the count is {want}: {e}")),
            _ => {}
        };
        count(
            "ECN: ",
            if e.contains(" marked CE (") {
                d.ce_segments
            } else {
                d.ece_acks
            },
        );
        count("echoed on ", d.ece_acks);
        count("of the direction's ", d.packets);
        count("congestion window ", d.cwr_segments);
        if let (Some(n), Some(m)) = (count_after(e, "ECN: "), count_after(e, "of the direction's ")) {
            let shown = e.find(" marked CE (").map(|i| &e[i + " marked CE (".len()..]);
            let shown = shown.and_then(|r| r.split(' ').next());
            if !shown.is_some_and(|p| agrees(p, n as f64 / m.max(1) as f64)) {
                out.push(format!("the share {shown:?} is not {n} / {m}: {e}"));
            }
        }
        let at = |t: Option<f64>| t.map(|t| (t - f.start_ts).max(0.0));
        let spans = [
            (" marked CE (", d.first_ce_ts, d.last_ce_ts),
            (" echoed ECE ", d.first_ece_ts, d.last_ece_ts),
            ("(CWR) ", d.first_cwr_ts, d.last_cwr_ts),
        ];
        for (key, first, last) in spans {
            let Some((a, b)) = span_after(e, key) else { continue };
            for (shown, want) in [(a, at(first)), (b, at(last))] {
                // Epoch seconds as f64 keep ~0.2 µs: an instant that close to the start is
                // compared absolutely.
                let holds = match (parse(&shown), want) {
                    (Some(v), Some(w)) => agrees(&shown, w) || (v - w).abs() < 1e-6,
                    (Some(_), None) => true,
                    (None, _) => false,
                };
                if !holds {
                    out.push(format!("\"+{shown}\" is not {want:?} s after the start: {e}"));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{count_after, span_after};

    #[test]
    fn the_sentence_reads_back() {
        let s = "ECN: 52 segments marked CE (31% of the direction's 170) from +6.82 s to +94.0 s, echoed on 131 ACKs (ECE); the sender reduced its congestion window 46 times (CWR) from +6.82 s to +85.9 s: a queue";
        assert_eq!(count_after(s, "ECN: "), Some(52));
        assert_eq!(count_after(s, "of the direction's "), Some(170));
        assert_eq!(count_after(s, "echoed on "), Some(131));
        assert_eq!(count_after(s, "congestion window "), Some(46));
        assert_eq!(span_after(s, " marked CE ("), Some(("6.82 s".into(), "94.0 s".into())));
        assert_eq!(span_after(s, "(CWR) "), Some(("6.82 s".into(), "85.9 s".into())));
    }
}
