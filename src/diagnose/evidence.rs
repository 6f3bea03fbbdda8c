//! Evidence: the numbers behind a verdict, one sentence each.

use super::facts::Findings;
use super::label::Label;
use crate::units::{bytes, ms, pct, rate};

pub fn write(f: &Findings<'_>) -> Vec<String> {
    let (x, c) = (f.facts, f.class);
    let mut out = Vec::new();
    let fr = |l: Label| c.fractions[l.index()];
    out.push(format!(
        "steady transfer {:.2} s after {:.2} s of start-up: receiver window {}, cwnd {}, bottleneck {}, sender {}",
        c.steady_s,
        c.startup_s,
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
        let others: Vec<String> = [
            ("delivery over 4 RTTs while busy (90th percentile)", x.delivery_rate),
            ("ACK dispersion", x.dispersion_rate),
            ("data-arrival dispersion", x.arrival_rate),
        ]
        .iter()
        .filter_map(|(name, r)| r.map(|r| format!("{name} {}", rate(r))))
        .collect();
        out.push(format!(
            "delivery {}{}{} = {} of the bottleneck estimate {} ({}; {})",
            rate(c.steady_rate),
            shared,
            busy,
            pct(util),
            rate(cap.rate),
            cap.method.as_str(),
            others.join(", ")
        ));
    }
    if let Some(bdp) = x.bdp {
        out.push(format!(
            "BDP {} = {} x base RTT {}; max flight {} ({} of BDP)",
            bytes(bdp),
            x.capacity.map_or("?".into(), |c| rate(c.rate)),
            ms(x.base_rtt_s),
            bytes(x.max_flight as f64),
            pct(x.max_flight as f64 / bdp.max(1.0))
        ));
    }
    if let Some(w) = x.max_rwnd {
        let bound = x
            .window_bound()
            .map_or(String::new(), |b| format!("; window bound rwnd/RTT = {}", rate(b)));
        out.push(format!(
            "receiver window max {}{}; goodput {}",
            bytes(w as f64),
            bound,
            rate(x.goodput)
        ));
    }
    if x.window_full_segments > 0 {
        out.push(format!(
            "the next segment did not fit in the receiver's window after {} of data segments",
            pct(x.window_full_share())
        ));
    }
    if x.zero_windows > 0 {
        out.push(format!(
            "{} zero-window advertisements: the receiving application fell behind",
            x.zero_windows
        ));
    }
    if let Some(q) = x.queueing_s() {
        out.push(format!(
            "RTT base {} median {} p95 {}: queueing delay {}",
            ms(x.base_rtt_s),
            ms(x.median_rtt_s.unwrap_or(0.0)),
            ms(x.p95_rtt_s.unwrap_or(0.0)),
            ms(q)
        ));
    }
    if c.idle_share > 0.01 {
        out.push(format!(
            "sender idle (everything acknowledged, nothing new) {} of the time",
            pct(c.idle_share)
        ));
    }
    if c.plateau_share > 0.01 {
        out.push(format!(
            "flight flat for {} of the time with no loss, below the receiver window and the BDP",
            pct(c.plateau_share)
        ));
    }
    if x.retransmitted_segments > 0 {
        out.push(format!(
            "{} retransmitted segments ({} of data segments)",
            x.retransmitted_segments,
            pct(x.retransmission_share())
        ));
    }
    out
}
