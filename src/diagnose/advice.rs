//! Advice that follows from the numbers, the way an expert would write it. No advice where
//! nothing is wrong.

use super::facts::Findings;
use super::label::Label;
use super::rules::cwnd;
use crate::tcp::WindowScale;
use crate::units::{bytes, ms, pct, rate};

/// Linux advertises about half of the receive buffer as window (tcp_adv_win_scale /
/// scaling_ratio), so a buffer of twice the BDP is what lets the window reach the BDP.
const BUFFER_PER_WINDOW: f64 = 2.0;
/// Queueing delay worth pointing out: 5% of the base RTT, at least 2 ms.
const QUEUE_NOTICEABLE_SHARE: f64 = 0.05;
const QUEUE_NOTICEABLE_S: f64 = 0.002;
/// 64 KiB - 1: the largest window without scaling (RFC 7323 §2).
const UNSCALED_MAX: f64 = 65_535.0;

pub fn write(f: &Findings<'_>) -> Vec<String> {
    let (x, c) = (f.facts, f.class);
    let mut out = Vec::new();
    let cap = x.capacity.map(|c| c.rate);
    let expected = |new_window: f64| -> Option<(f64, f64)> {
        let cap = cap?;
        let now = x.goodput;
        let new = cap.min(new_window / x.base_rtt_s.max(1e-9));
        (now > 0.0).then_some((new, new / now))
    };
    match c.verdict {
        Label::ReceiverWindow => {
            let w = x.max_rwnd.unwrap_or(0) as f64;
            if x.receiver_scale == WindowScale::NotUsed && w <= UNSCALED_MAX {
                let ceiling = UNSCALED_MAX / x.base_rtt_s.max(1e-9);
                out.push(format!(
                    "window scaling is off for this connection (one SYN lacked the option), so the window cannot exceed 64 KiB: ceiling {} at this RTT of {}. Enable window scaling at both ends (net.ipv4.tcp_window_scaling=1) or find the middlebox that strips it.",
                    rate(ceiling),
                    ms(x.base_rtt_s)
                ));
            }
            if x.zero_windows > 0 {
                out.push(format!(
                    "the receiving application did not read fast enough ({} zero-window advertisements): a bigger buffer only delays the stall; make the reader drain the socket faster.",
                    x.zero_windows
                ));
            } else if let Some(bdp) = x.bdp {
                let want = BUFFER_PER_WINDOW * bdp;
                let mut s = format!(
                    "the receiver never advertised more than {}; BDP is {}; raise the receive buffer (net.ipv4.tcp_rmem max, or SO_RCVBUF) to >= {}",
                    bytes(w),
                    bytes(bdp),
                    bytes(want)
                );
                if let Some((new, factor)) = expected(bdp) {
                    s.push_str(&format!(", expected goodput {} (~{:.1}x)", rate(new), factor));
                }
                out.push(s);
            }
        }
        Label::Sender => {
            if c.plateau_share >= c.idle_share {
                if let Some(bdp) = x.bdp {
                    let mut s = format!(
                        "the sender kept only ~{} in flight with no loss while the path holds {} (BDP): raise the send buffer (net.ipv4.tcp_wmem max, or SO_SNDBUF) to >= {}",
                        bytes(x.max_flight as f64),
                        bytes(bdp),
                        bytes(BUFFER_PER_WINDOW * bdp)
                    );
                    if let Some((new, factor)) = expected(bdp) {
                        s.push_str(&format!(", expected goodput {} (~{:.1}x)", rate(new), factor));
                    }
                    out.push(s);
                }
            } else {
                out.push(format!(
                    "the application sent in bursts and left the connection idle {} of the time: the network is not what limits it.",
                    pct(c.idle_share)
                ));
            }
        }
        Label::Cwnd => {
            if x.retransmission_share() >= cwnd::LOSSY {
                let mut s = format!(
                    "losses kept the congestion window below the BDP ({} of segments retransmitted): find the loss on the path (errors, a policer, a shallow buffer); a congestion control that does not treat random loss as congestion (BBR) would fill the pipe",
                    pct(x.retransmission_share())
                );
                if x.sack_permitted == Some(false) {
                    s.push_str("; SACK is off for this connection, so every loss costs more (enable net.ipv4.tcp_sack, or find what strips SACK-permitted)");
                }
                out.push(s);
            } else if c.startup_s > 0.0 && c.steady_s < 10.0 * x.base_rtt_s {
                out.push(format!(
                    "the transfer spent {} of its life in slow start: it is too short to fill the pipe; reuse connections or raise the initial window",
                    pct(c.startup_s / (c.startup_s + c.steady_s).max(1e-9))
                ));
            }
        }
        Label::Bottleneck => {
            // The queue the excess window builds shows at the high end of the RTTs.
            let q95 = x.p95_rtt_s.map(|p| (p - x.base_rtt_s).max(0.0));
            if let (Some(bdp), Some(w), Some(q)) = (x.bdp, x.max_rwnd, q95) {
                let own_excess = x.max_flight as f64 > bdp; // this flow, not its neighbours, built the queue
                if own_excess
                    && (w as f64) > 2.0 * bdp
                    && q >= QUEUE_NOTICEABLE_S.max(QUEUE_NOTICEABLE_SHARE * x.base_rtt_s)
                {
                    out.push(format!(
                        "the path is full: more window only adds delay. The receive window ({}) is far above the BDP ({}); the flight reached {} ({:.1}x BDP) and the excess queued: RTT median {}, p95 {} vs base {}. A window (tcp_rmem max) near 2x BDP would give the same throughput with less delay, as would an AQM (fq_codel) at the bottleneck.",
                        bytes(w as f64),
                        bytes(bdp),
                        bytes(x.max_flight as f64),
                        x.max_flight as f64 / bdp.max(1.0),
                        ms(x.median_rtt_s.unwrap_or(0.0)),
                        ms(x.p95_rtt_s.unwrap_or(0.0)),
                        ms(x.base_rtt_s)
                    ));
                }
            }
        }
    }
    out
}
