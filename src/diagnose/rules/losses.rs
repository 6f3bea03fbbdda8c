//! The advice that losses call for, whichever limit they left: find the loss (a policer
//! the losses showed, or the path), and enable SACK where it was off. The congestion
//! window's verdict gives it, and the sender's when its window went unused in the
//! recoveries the losses began (`sender::WindowUnused`).

use super::super::advice::plain;
use super::super::facts::Findings;
use crate::summary::{AdviceItem, AdviceKind};
use crate::units::{pct, rate};

/// Retransmitted share of the segments above which the losses are reported as the cause.
pub const LOSSY: f64 = 0.001;

/// The loss advice of a flow whose losses were many enough to report ([`LOSSY`]).
pub fn advice(f: &Findings<'_>) -> Vec<AdviceItem> {
    let (x, c) = (f.facts, f.class);
    let mut out = Vec::new();
    let counted = match (x.spurious_retransmissions > 0, x.outage_repairs > 0) {
        (false, false) => "retransmitted",
        (true, false) => "lost, spurious retransmissions aside",
        (false, true) => "lost, an outage's repair aside",
        (true, true) => "lost, spurious retransmissions and an outage's repair aside",
    };
    let losses = format!("{} of segments {counted}", pct(x.loss_share()));
    // What the losses held down, in the figures printed beside it: the flow's delivery
    // against the capacity. Not "the window below the BDP": the flight's peaks between
    // losses reach past the BDP into the queue (loss_cubic: 3.76x the BDP at its
    // highest) while the delivery stays below the capacity.
    let held = match (c.utilisation, x.capacity) {
        (Some(u), Some(cap)) if u < 1.0 => format!(
            "losses kept the flow below the path's capacity (it delivered {} of {} while it had data; {losses})",
            pct(u),
            rate(cap.rate)
        ),
        _ => format!("losses held the congestion window back ({losses})"),
    };
    // A policer the losses showed is the loss found: a sender paced below its rate
    // loses nothing to it (Flach et al., SIGCOMM 2016, §6: pacing and BBR avoid its
    // drops), while one that backs off at each drop stays well below it.
    // (Only below its rate: a flow that delivered more, on its bucket's bursts, is not
    // told to pace below what it had.)
    let sentence = match x.estimate.policer.filter(|p| x.goodput < p.rate) {
        Some(p) if matches!(p.shown, crate::diagnose::policer::Shown::Rounds { .. }) => format!(
            "{held}: a token bucket on the path passes no more than {} over a round (the evidence says how it showed), and what ran ahead of it was lost: pace the sender at or below that rate (tc fq maxrate, SO_MAX_PACING_RATE, or BBR, which paces at the rate it measures), or have the bucket's rate or depth raised",
            rate(p.rate)
        ),
        Some(p) => format!(
            "{held}: a token-bucket policer on the path dropped what ran ahead of {} (the evidence says how it showed): pace the sender at or below that rate (tc fq maxrate, SO_MAX_PACING_RATE, or BBR, which paces at the rate it measures), or have the policer's rate or bucket raised",
            rate(p.rate)
        ),
        None => format!(
            "{held}: find the loss on the path (errors, a policer, a shallow buffer); a congestion control that does not treat random loss as congestion (BBR) would fill the pipe"
        ),
    };
    out.push(plain(AdviceKind::FindLoss, None, sentence, x));
    if x.sack_permitted == Some(false) {
        out.push(plain(
            AdviceKind::EnableSack,
            Some("net.ipv4.tcp_sack"),
            "SACK is off for this connection, so every loss costs more: enable it (net.ipv4.tcp_sack=1), or find what strips SACK-permitted".to_string(),
            x,
        ));
    }
    out
}
