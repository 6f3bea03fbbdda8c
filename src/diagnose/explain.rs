//! Explain (the last step of gate -> facts -> classify -> explain): the evidence every
//! flow gets (the time shares, the capacity and how it was found, the BDP, the RTTs), then
//! each rule's own evidence; the verdict rule's advice and the advice any stall calls for;
//! and notes on how far the figures can be trusted. Every sentence is written from the
//! numbers it states, and says only what those numbers show.

use super::capacity::Method;
use super::facts::Findings;
use super::label::Label;
use super::rules;
use crate::summary::{AdviceItem, AdviceKind, StallKind};
use crate::units::{bytes, ms, pct, rate, secs};

pub fn evidence(f: &Findings<'_>) -> Vec<String> {
    let (x, c) = (f.facts, f.class);
    let mut out = Vec::new();
    let fr = |l: Label| c.fractions[l.index()];
    out.push(format!(
        "steady transfer {} after {} of start-up: receiver window {}, cwnd {}, bottleneck {}, sender {}",
        secs(c.steady_s),
        secs(c.startup_s),
        pct(fr(Label::ReceiverWindow)),
        pct(fr(Label::Cwnd)),
        pct(fr(Label::Bottleneck)),
        pct(fr(Label::Sender))
    ));
    if let Some(cap) = x.capacity {
        let util = c
            .utilisation
            .unwrap_or(c.steady_rate.max(c.shared_steady_rate.unwrap_or(0.0)) / cap.rate.max(1.0));
        let busy = if c.idle_share >= 0.005 {
            format!(" ({} while the sender had data)", rate(c.busy_rate))
        } else {
            String::new()
        };
        let shared = match (c.shared_steady_rate, x.flows_sharing) {
            (Some(s), n) if n > 1 => format!(" ({} flows together {})", n, rate(s)),
            _ => String::new(),
        };
        let e = &x.estimate;
        let others: Vec<String> = [
            ("delivery over 4 RTTs while busy (90th percentile)", e.delivered),
            ("delivery while the queue stood", e.queued),
            ("ACK dispersion", e.dispersed),
            ("data-arrival dispersion", e.arrived),
        ]
        .iter()
        .filter_map(|(name, r)| r.map(|r| format!("{name} {}", rate(r))))
        .collect();
        let how = match cap.method {
            Method::LinkRate => "link-rate, given".to_string(),
            m => m.as_str().to_string(),
        };
        out.push(format!(
            "steady delivery {}{}{} = {} of the bottleneck estimate {} ({how}{}{})",
            rate(c.steady_rate),
            shared,
            busy,
            pct(util),
            rate(cap.rate),
            if x.lower_bound { ", a lower bound" } else { "" },
            if others.is_empty() {
                String::new()
            } else {
                format!("; {}", others.join(", "))
            }
        ));
    }
    if let Some(bdp) = x.bdp {
        out.push(format!(
            "BDP {} = {} x base RTT {}; max flight {} ({} of BDP)",
            bytes(bdp),
            x.capacity.map_or("?".into(), |c| rate(c.rate)),
            ms(x.base_rtt_s),
            bytes(x.max_flight as f64),
            pct(x.max_flight as f64 / bdp.max(1e-9))
        ));
    }
    if let Some(q) = x.queueing_s() {
        out.push(format!(
            "RTT base {} median {} p95 {}: queueing delay {}",
            ms(x.base_rtt_s),
            ms(x.median_rtt_s.unwrap_or(x.base_rtt_s)),
            ms(x.p95_rtt_s.unwrap_or(x.base_rtt_s)),
            ms(q)
        ));
    }
    out.extend(rules::evidence(f));
    out
}

/// The verdict rule's advice, then what a stall calls for whatever the verdict.
pub fn advice(f: &Findings<'_>) -> Vec<AdviceItem> {
    let x = f.facts;
    let mut out = rules::advice(f);
    if let Some(s) = x.stall(StallKind::DelayedAck) {
        out.push(super::advice::plain(
            AdviceKind::DisableNagle,
            Some("TCP_NODELAY (sender), TCP_QUICKACK (receiver)"),
            format!(
                "{} times a short segment waited for a delayed ACK ({} in all): set TCP_NODELAY on the sending socket (or TCP_QUICKACK at the receiver) so the last segment of each response goes out at once",
                s.events,
                secs(s.duration_s)
            ),
            x,
        ));
    }
    out
}

/// Notes on how far the figures can be trusted.
pub fn notes(f: &Findings<'_>) -> Vec<String> {
    let x = f.facts;
    let mut out = Vec::new();
    if x.flows_sharing > 1 {
        out.push(format!(
            "shares its path with {} other flow(s) between the same hosts at the same time; the bottleneck and utilisation are the group's",
            x.flows_sharing - 1
        ));
    }
    if x.capacity.is_none() {
        let why = match x.stretch_acks {
            Some(n) => {
                format!(", and the receiver acknowledged {n:.0} segments per ACK, so ACK spacing shows nothing of it")
            }
            None => String::new(),
        };
        out.push(format!(
            "no bottleneck rate (and no BDP): the sender was never busy long enough to fill the path, and no ACK or data spacing showed the link's rate from this capture point{why}; a capture at the receiver would, or give it with --link-rate"
        ));
    }
    if x.lower_bound && f.class.verdict != Label::Bottleneck {
        let why = match x.stretch_acks {
            Some(n) => format!(
                "the receiver acknowledged {n:.0} segments per ACK, so ACK spacing shows nothing of the bottleneck from this capture point (a capture at the receiver would)"
            ),
            None => "no ACK or data spacing showed a faster link".to_string(),
        };
        out.push(format!(
            "the bottleneck rate (and the BDP) is a lower bound: this flow never filled the path, and {why}"
        ));
    }
    out.extend(x.estimate.set_aside.iter().cloned());
    out
}
