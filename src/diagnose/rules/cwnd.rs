//! # cwnd-limited
//!
//! ## What it detects
//! The sender had data, the receiver's window had room, and delivery stayed below the
//! path's capacity: congestion control held the flight back — slow start, loss recovery,
//! the back-off after losses. It is what remains of busy time when no other rule claims it.
//!
//! ## Why
//! Random loss (a lossy link, a policer) or a slow-growing congestion controller keeps the
//! window below the BDP; the fix is on the path (find the loss) or in the congestion
//! control (BBR does not treat random loss as congestion). ECN marks cut the window as
//! losses do (RFC 3168 §6.1.2), without a retransmission: a congested bottleneck's queue
//! marked the flow (`diagnose::ecn`), and only more capacity or less competing traffic
//! helps.
//!
//! ## Example
//! 50 Mbit/s, 80 ms, 1% random loss, CUBIC: 13 retransmissions in 4 s, flight saw-tooths
//! between 40 and 115 kB, goodput 3.7 Mbit/s.

use super::super::advice::plain;
use super::super::facts::Findings;
use super::super::Label;
use super::{BinCtx, Claim, Left};
use crate::summary::{AdviceItem, AdviceKind};
use crate::units::pct;

pub use super::losses::LOSSY;

/// What remains of busy time: the congestion window held the sender.
pub struct Remainder;

impl Claim for Remainder {
    fn name(&self) -> &'static str {
        "cwnd"
    }
    fn label(&self) -> Label {
        Label::Cwnd
    }
    fn claim(&self, _b: &BinCtx<'_>, left: &mut Left) -> u64 {
        std::mem::take(&mut left.busy)
    }
}

pub fn evidence(f: &Findings<'_>) -> Vec<String> {
    let (x, c) = (f.facts, f.class);
    let mut out = Vec::new();
    // The verdict against a larger bottleneck share says why (`classify`: below capacity
    // over the steady transfer, the path did not hold the flow back as a whole).
    // The shares as the limits print them (rounded to four places, as `beside_larger_share`):
    // 0.28495 prints "28%" there and must not print "29%" here.
    let bottleneck = c.share(Label::Bottleneck);
    let cwnd = c.share(Label::Cwnd);
    if c.verdict == Label::Cwnd && bottleneck > cwnd {
        if let Some(u) = c.utilisation {
            // The group's figure, where members sharing the path measured more (`classify`
            // judges a shared flow by it).
            let group = c
                .group_utilisation
                .filter(|&g| g > u && pct(g) != pct(u))
                .map_or(String::new(), |g| {
                    format!(
                        ", and the flows sharing the path together at most {}",
                        crate::units::pct_beside(g, super::bottleneck::AT_CAPACITY)
                    )
                });
            out.push(format!(
                "cwnd-limited though the bottleneck's share of the time is larger ({} against {}): over the steady transfer the flow delivered {} of the capacity while it had data{group}, below the {} a full path gives, so the path did not hold it back as a whole; the congestion window kept it below",
                pct(bottleneck),
                pct(cwnd),
                crate::units::pct_beside(u, super::bottleneck::AT_CAPACITY),
                pct(super::bottleneck::AT_CAPACITY)
            ));
        }
    }
    // The verdict against a larger receiver-window share: most of that time the window was
    // at least the BDP (`classify`), and a window that large lets the sender fill the pipe.
    let rwnd = c.share(Label::ReceiverWindow);
    if c.verdict == Label::Cwnd && rwnd > cwnd {
        if let (Some(u), Some(bdp)) = (c.utilisation, x.bdp) {
            out.push(format!(
                "cwnd-limited though the receiver window's share of the time is larger ({} against {}): for {} of the time the window was at least the BDP ({}), which lets the sender fill the pipe (RFC 6349 §3.3.1), and over the steady transfer the flow delivered {} of the capacity while it had data, below the {} a full path gives; the congestion window kept it below",
                pct(rwnd),
                pct(cwnd),
                pct(c.rwnd_wide_share),
                super::bdp_bytes(bdp),
                crate::units::pct_beside(u, super::bottleneck::AT_CAPACITY),
                pct(super::bottleneck::AT_CAPACITY)
            ));
        }
    }
    // The verdict against a larger share of the path or the receiver's window that no
    // sentence above explained: the window left unused in recovery, short of the half that
    // makes it the sender's, counts as the window's (`classify`), and with it the window's
    // time was the larger.
    if c.verdict == Label::Cwnd && c.window_unused_share > 0.0 {
        for (other, opening) in [
            (Label::Bottleneck, "cwnd-limited though the bottleneck's"),
            (Label::ReceiverWindow, "cwnd-limited though the receiver window's"),
        ] {
            let theirs = c.share(other);
            if theirs > cwnd && cwnd + c.window_unused_share >= theirs && !out.iter().any(|e| e.starts_with(opening)) {
                out.push(format!(
                    "{opening} share of the time is larger ({} against {}): the congestion window the sender left unused in loss recovery ({} of the time), short of the {} that makes it the sender's (RFC 7661 §4.3), is the window's time too, and with it the window's share ({}) is the larger",
                    pct(theirs),
                    pct(cwnd),
                    pct(c.window_unused_share),
                    pct(super::sender::HALF_WINDOW_UNUSED),
                    pct(cwnd + c.window_unused_share)
                ));
            }
        }
    }
    // The verdict against a larger sender share: that share is the congestion window the
    // sender left unused in loss recovery, short of the half that makes it the sender's
    // (`sender::WindowUnusedDecides`; `classify` counts it as the window's).
    let sender = c.share(Label::Sender);
    if c.verdict == Label::Cwnd && sender > cwnd && c.window_unused_share > 0.0 {
        out.push(format!(
            "cwnd-limited though the sender's share of the time is larger ({} against {}): of it, {} is the congestion window the sender left unused in loss recovery, below the {} that makes the sender the limit (RFC 7661 §4.3: a window its flight used at least half of held it); the recoveries' pace, not the sender, set the flow's",
            pct(sender),
            pct(cwnd),
            pct(c.window_unused_share),
            pct(super::sender::HALF_WINDOW_UNUSED)
        ));
    }
    if x.retransmitted_segments > 0 {
        let spurious = match x.spurious_retransmissions {
            0 => String::new(),
            n if n == x.retransmitted_segments => {
                ", all spurious: the receiver reported each received twice (D-SACK, RFC 2883), so none was a loss"
                    .to_string()
            }
            n => format!(", {n} of them spurious: the receiver reported them received twice (D-SACK, RFC 2883)"),
        };
        // Counted once: a spurious one is not also an outage's repair.
        let outage = match x
            .outage_repairs
            .min(x.retransmitted_segments - x.spurious_retransmissions.min(x.retransmitted_segments))
        {
            0 => String::new(),
            n if n == x.retransmitted_segments => ", all repairing what an outage lost (see the stalls)".to_string(),
            n => format!(", {n} of them repairing what an outage lost (see the stalls)"),
        };
        out.push(format!(
            "{} retransmitted segments ({} of data segments){spurious}{outage}",
            x.retransmitted_segments,
            pct(x.retransmission_share())
        ));
    }
    out.extend(super::super::ecn::evidence(x));
    out
}

pub fn advice(f: &Findings<'_>) -> Vec<AdviceItem> {
    let (x, c) = (f.facts, f.class);
    let mut out = Vec::new();
    if x.loss_share() >= LOSSY {
        out.extend(super::losses::advice(f));
    } else if c.startup_s > 0.0 && c.steady_part_s() < 10.0 * x.base_rtt_s {
        out.push(plain(
            AdviceKind::ReuseConnections,
            None,
            format!(
                "the transfer spent {} of its life in slow start: it is too short to fill the pipe; reuse connections or raise the initial window",
                pct(c.startup_s / c.transfer_s().max(1e-9))
            ),
            x,
        ));
    }
    out
}

/// The law of a cwnd verdict beside a larger bottleneck share (on the summary): a sentence
/// says why, with the shares the limits print.
pub fn law(f: &crate::summary::FlowSummary) -> Vec<String> {
    let (Some(l), crate::summary::Verdict::Limited(Label::Cwnd)) = (&f.limits, f.verdict) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (other, theirs, opening) in [
        ("bottleneck", l.bottleneck, "cwnd-limited though the bottleneck's"),
        (
            "receiver-window",
            l.receiver_window,
            "cwnd-limited though the receiver window's",
        ),
    ] {
        if theirs <= l.cwnd {
            continue;
        }
        let shares = format!("({} against {})", pct(theirs), pct(l.cwnd));
        match f.evidence.iter().find(|e| e.starts_with(opening)) {
            None => out.push(format!(
                "cwnd-limited beside a larger {other} share {shares}, and no sentence says why"
            )),
            Some(e) if !e.contains(&shares) => {
                out.push(format!("the sentence's shares are not the limits' {shares}: {e}"))
            }
            Some(_) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{at, run, Bin, BUSY};
    use crate::diagnose::Label;

    #[test]
    fn busy_below_capacity_with_losses_is_cwnd_limited() {
        // A saw-tooth: the flight grows 1 MSS per round and halves at each loss, delivery
        // around 40% of the capacity, the receiver's window never in the way.
        let c = run(|i| {
            let phase = i % 60;
            Bin {
                delivered: at(0.3 + phase as f64 / 300.0),
                flight: 20_000 + phase as u64 * 400,
                retransmissions: (phase == 59) as u32,
                ..BUSY
            }
        });
        assert_eq!(c.verdict, Label::Cwnd);
        assert!(c.fractions[Label::Cwnd.index()] > 0.9);
    }

    /// Below capacity, half the time at it and half held back: in the held half the
    /// receiver's window holds the sender 60% of the time (30% of all), the congestion
    /// window the rest (20%). A window of 1.5 BDP (60 kB on the 40 kB pipe) lets the sender
    /// fill the pipe: what kept the flow below was the congestion window. A window of half
    /// the BDP is the limit.
    #[test]
    fn a_window_of_at_least_the_bdp_keeps_no_capacity_back() {
        let flow = |window: u64| {
            run(move |i| {
                if (i / 50) % 2 == 0 {
                    Bin {
                        delivered: at(1.0),
                        flight: 40_000,
                        window,
                        ..BUSY
                    }
                } else {
                    Bin {
                        busy: 0.4,
                        rwnd: 0.6,
                        delivered: at(0.3),
                        flight: 10_000 + (i % 50) as u64 * 400,
                        retransmissions: (i % 50 == 49) as u32,
                        window,
                        ..BUSY
                    }
                }
            })
        };
        let wide = flow(60_000);
        assert!(wide.fractions[Label::ReceiverWindow.index()] > wide.fractions[Label::Cwnd.index()]);
        assert!(wide.utilisation.unwrap() < 0.85, "{wide:?}");
        assert!(wide.rwnd_wide_share > 0.25, "{}", wide.rwnd_wide_share);
        assert_eq!(wide.verdict, Label::Cwnd);
        let narrow = flow(20_000);
        assert_eq!(narrow.rwnd_wide_share, 0.0);
        assert_eq!(narrow.verdict, Label::ReceiverWindow);
    }
}
