//! Advice as data (kind, knob, the value to set, the rate to expect) and its laws: advice
//! never asks to raise something to less than the flow already had; a raise promises at
//! least [`MIN_GAIN`] and never more than the capacity allows; advice built on a capacity
//! that is only a lower bound says so. Each rule writes its own items (rules/*.rs); these
//! are the shared pieces.

use super::facts::Facts;
use crate::summary::{AdviceItem, AdviceKind};
use crate::units::{bytes, rate, times};

/// Linux advertises about half of the receive buffer as window (tcp_adv_win_scale /
/// scaling_ratio), so a buffer of twice the window wanted is what lets the window reach
/// it; the send buffer likewise holds sent-but-unacknowledged data with overhead.
pub const BUFFER_PER_WINDOW: f64 = 2.0;
/// The least gain worth advising a change for: below 5% the change is within what the
/// estimates can tell.
pub const MIN_GAIN: f64 = 1.05;

/// The goodput a window of `window` bytes would give on this path: capped by the capacity
/// (never more than the path carries), as a multiple of today's. None without a capacity,
/// without a goodput, or when the gain would be below [`MIN_GAIN`].
pub fn with_window(f: &Facts, window: f64) -> Option<(f64, f64)> {
    let cap = f.capacity?.rate;
    if f.goodput <= 0.0 {
        return None;
    }
    let new = cap.min(window / f.base_rtt_s.max(1e-9));
    let gain = new / f.goodput;
    (gain >= MIN_GAIN).then_some((new, gain))
}

/// ", expected goodput 9.6 Mbit/s (~2.7x)", or "at least" when the capacity is a lower
/// bound (the path may carry more).
pub fn expected_text(f: &Facts, new: f64, gain: f64) -> String {
    if f.lower_bound {
        format!(
            ", expected goodput at least {} (~{}; the capacity {} is a lower bound)",
            rate(new),
            times(gain),
            rate(f.capacity.map_or(0.0, |c| c.rate))
        )
    } else {
        format!(", expected goodput {} (~{})", rate(new), times(gain))
    }
}

/// A raise of a buffer from the `current` window or flight to a buffer for `target` bytes:
/// the item when the target exceeds what the flow had and the gain is worth it.
pub fn raise(
    f: &Facts,
    kind: AdviceKind,
    knob: &str,
    current: u64,
    target: f64,
    what: impl FnOnce(&str, &str) -> String,
) -> Option<AdviceItem> {
    if target <= current as f64 {
        return None;
    }
    // A send buffer fills no more than the receiver's window lets out (RFC 9293 §3.8.6):
    // raised alone, it reaches at most that window.
    let reach = match (kind, f.obeyed_rwnd.or(f.max_rwnd)) {
        (AdviceKind::RaiseSendBuffer, Some(w)) if w > 0 => target.min(w as f64),
        _ => target,
    };
    let (new, gain) = with_window(f, reach)?;
    let buffer = (BUFFER_PER_WINDOW * reach).round();
    let mut sentence = what(&bytes(current as f64), &bytes(buffer));
    if reach < target {
        sentence.push_str(&format!(
            " (as far as the receiver's window of {} lets it: beyond that the receive buffer must grow too)",
            bytes(reach)
        ));
    }
    sentence.push_str(&expected_text(f, new, gain));
    Some(AdviceItem {
        kind,
        knob: Some(knob.to_string()),
        current_bytes: Some(current),
        recommended_bytes: Some(buffer as u64),
        expected_bps: Some(new * 8.0),
        expected_gain: Some(gain),
        lower_bound: f.lower_bound,
        sentence,
    })
}

/// An item with no figures (advice about the application, a setting to enable).
pub fn plain(kind: AdviceKind, knob: Option<&str>, sentence: String, f: &Facts) -> AdviceItem {
    AdviceItem {
        kind,
        knob: knob.map(str::to_string),
        current_bytes: None,
        recommended_bytes: None,
        expected_bps: None,
        expected_gain: None,
        lower_bound: f.lower_bound,
        sentence,
    }
}

/// Whether an advice kind asks for more of something (and so must exceed what the flow
/// had), or less (a queue cut: less window, same throughput).
pub fn raises(kind: AdviceKind) -> bool {
    matches!(kind, AdviceKind::RaiseReceiveBuffer | AdviceKind::RaiseSendBuffer)
}

/// The laws of one advice item against the flow it was written for (`goodput` and
/// `capacity` in bit/s, as the summary holds them). Returns the violations.
pub fn law(a: &AdviceItem, goodput_bps: f64, capacity_bps: Option<f64>) -> Vec<String> {
    let mut out = Vec::new();
    if let (Some(c), Some(r)) = (a.current_bytes, a.recommended_bytes) {
        if raises(a.kind) && r <= c {
            out.push(format!(
                "{:?} asks for {r} B, no more than the flow had ({c} B)",
                a.kind
            ));
        }
        if a.kind == AdviceKind::CutQueue && r >= c {
            out.push(format!("a queue cut to {r} B is no cut of {c} B"));
        }
    }
    if let Some(g) = a.expected_gain {
        if raises(a.kind) && g < MIN_GAIN {
            out.push(format!("{:?} promises only {g:.3}x", a.kind));
        }
    }
    if let (Some(e), Some(c)) = (a.expected_bps, capacity_bps) {
        if e > c * 1.0001 {
            out.push(format!("{:?} expects {e} bit/s, above the capacity {c}", a.kind));
        }
    }
    if let (Some(e), Some(g)) = (a.expected_bps, a.expected_gain) {
        if goodput_bps > 0.0 && (e / goodput_bps / g - 1.0).abs() > 0.01 {
            out.push(format!(
                "{:?}: expected {e} over goodput {goodput_bps} is not the gain {g}",
                a.kind
            ));
        }
    }
    if a.lower_bound && a.expected_bps.is_some() && !a.sentence.contains("lower bound") {
        out.push(format!(
            "{:?} rests on a lower-bound capacity and does not say so",
            a.kind
        ));
    }
    out
}

/// The advice laws over a whole flow: one item per sentence, each item's own laws.
pub fn flow_law(f: &crate::summary::FlowSummary) -> Vec<String> {
    let mut out = Vec::new();
    let sentences: Vec<&String> = f.advice_items.iter().map(|a| &a.sentence).collect();
    if sentences != f.advice.iter().collect::<Vec<_>>() {
        out.push("advice sentences and items differ".into());
    }
    for a in &f.advice_items {
        out.extend(law(a, f.goodput_bps, f.bottleneck_bps));
    }
    // A send buffer fills no more than the receiver's window lets out (RFC 9293 §3.8.6):
    // raised alone it promises at most rwnd / base RTT. Where the handshake gave the scale
    // (an inferred one may be what the sender obeyed instead).
    let rwnd_ceiling = match (f.max_rwnd_bytes, f.rtt_ms.min) {
        (Some(w), Some(ms)) if f.handshake.seen && f.handshake.inferred.is_none() && ms > 0.0 => {
            Some(w as f64 * 8.0 / (ms / 1e3))
        }
        _ => None,
    };
    for a in f.advice_items.iter().filter(|a| a.kind == AdviceKind::RaiseSendBuffer) {
        if let (Some(e), Some(c)) = (a.expected_bps, rwnd_ceiling) {
            if e > c * 1.01 {
                out.push(format!(
                    "a send buffer alone promises {e:.0} bit/s, above the receiver window's ceiling {c:.0} bit/s"
                ));
            }
        }
    }
    out
}
