//! A connection kept open idle: too little data to measure the path (the gate's reason
//! stands in the notes), yet what limited it is plain. An end sends keep-alives only when
//! the connection has been idle for its keep-alive time with nothing of its own
//! outstanding (RFC 1122 §4.2.3.6; Linux's tcp_keepalive_time), so a connection that,
//! after whatever it carried was acknowledged, carried nothing but keep-alives that the
//! peer answered was held by neither window, nor congestion control, nor the path: its
//! applications had nothing to send. That is the spec's sender-limited ("the sender had
//! less in flight than either window because it had nothing to send").
//!
//! Keep-alives never answered are no such proof (the peer or the path is gone: the stall
//! finders say so), and a flow enough to judge is judged from its timeline as any other.

use super::{Label, Verdict};
use crate::summary::{AdviceItem, AdviceKind, FlowSummary, Limits, Period, StallKind};

/// Judges an idle, kept-alive connection the gate let through undetermined: sender-limited
/// over its whole span, with the keep-alives as the evidence. False (and nothing written)
/// when the flow is not one.
/// `reason`: why the gate could not measure the path (said in the notes).
pub fn judge(s: &mut FlowSummary, reason: &str) -> bool {
    // A window closed and probed is the receiver's doing: its persist probes look like
    // keep-alives (Wireshark names them so), but they wait on the window (RFC 9293
    // §3.8.6.1), and the zero-window stall says so.
    if s.stalls.iter().any(|x| x.kind == StallKind::ZeroWindow) {
        return false;
    }
    let Some(k) = s
        .stalls
        .iter()
        .find(|x| x.kind == StallKind::KeepAliveOnly && x.recovered)
    else {
        return false;
    };
    let evidence = format!(
        "{}; an end sends keep-alives only when the connection has been idle with nothing of its own outstanding (RFC 1122 §4.2.3.6): the application had nothing to send",
        k.sentence
    );
    s.verdict = Verdict::Limited(Label::Sender);
    s.limits = Some(Limits {
        receiver_window: 0.0,
        cwnd: 0.0,
        bottleneck: 0.0,
        sender: 1.0,
    });
    s.periods = vec![Period {
        start: s.start_ts,
        end: s.end_ts,
        label: Label::Sender,
    }];
    s.evidence.push(evidence);
    let item = AdviceItem {
        kind: AdviceKind::ApplicationPaced,
        knob: None,
        current_bytes: None,
        recommended_bytes: None,
        expected_bps: None,
        expected_gain: None,
        lower_bound: false,
        sentence: "the connection sat idle, kept open by keep-alives: the application had nothing to send, and the network is not what limits it".into(),
    };
    s.advice.push(item.sentence.clone());
    s.advice_items.push(item);
    s.notes.push(format!(
        "no bottleneck rate (and no BDP): the path could not be measured ({reason}); the verdict rests on the keep-alives"
    ));
    true
}
