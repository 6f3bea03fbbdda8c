//! # receiver-window-limited
//!
//! ## What it detects
//! The sender's next full segment did not fit in the window the receiver had granted
//! (flight + 1 MSS > rwnd, Linux's `tcp_snd_wnd_test`), or the window was zero; or the
//! sender stopped with room for a segment but under a third of the window, after its
//! flight had filled a window that large since its last loss or pause (Linux defers the
//! send until a bigger piece fits and counts the wait as the window's:
//! `tcp_tso_should_defer`, see `accumulator::deferred_for_window`). The time until the
//! sender could send again is receiver-window time, as Linux accounts `tcpi_rwnd_limited`.
//!
//! ## Why
//! A window smaller than the bandwidth-delay product caps throughput at rwnd / RTT no
//! matter how fast the path is; a bigger receive buffer (or window scaling) removes it.
//! A window *above* the BDP that is still full is not this rule's: the excess waited in a
//! queue, and the bottleneck rule claims the verdict.
//!
//! ## Example
//! 50 Mbit/s, 100 ms, SO_RCVBUF 64 KiB: flight sits at ~80 kB every round, goodput
//! 6.4 Mbit/s = 80 kB / 100 ms.
//!
//! The per-segment test lives in the accumulator (it needs the sender's view at that
//! moment); this file holds the claim, the verdict threshold, the evidence and the advice.

use super::super::advice::{self, plain};
use super::super::facts::Findings;
use super::super::Label;
use super::{Account, BinCtx, Claim, Left, Verdict};
use crate::summary::{AdviceItem, AdviceKind, StallKind};
use crate::tcp::WindowScale;
use crate::units::{bytes, ms, pct, rate};

/// A flow whose window bound it for at least this share of the steady transfer is
/// receiver-window-limited (unless it reached the path's capacity, which wins).
pub const MIN_SHARE: f64 = 0.4;
/// 64 KiB - 1: the largest window without scaling (RFC 7323 §2).
const UNSCALED_MAX: f64 = 65_535.0;

pub fn applies(share: f64) -> bool {
    share >= MIN_SHARE
}

/// Claims the time the next segment did not fit.
pub struct Full;

impl Claim for Full {
    fn name(&self) -> &'static str {
        "receiver-window-full"
    }
    fn label(&self) -> Label {
        Label::ReceiverWindow
    }
    fn claim(&self, _b: &BinCtx<'_>, left: &mut Left) -> u64 {
        std::mem::take(&mut left.rwnd)
    }
}

pub struct Decides;

impl Verdict for Decides {
    fn label(&self) -> Label {
        Label::ReceiverWindow
    }
    fn decides(&self, a: &Account) -> bool {
        applies(a.fractions[Label::ReceiverWindow.index()])
    }
}

pub fn evidence(f: &Findings<'_>) -> Vec<String> {
    let x = f.facts;
    let mut out = Vec::new();
    // The verdict against a larger share of another limit says why (`Decides`: the window
    // held the sender long enough to be the first thing to raise).
    out.extend(super::beside_larger_share(f, Label::ReceiverWindow, || {
        let share = f.class.fractions[Label::ReceiverWindow.index()];
        if share >= MIN_SHARE {
            format!(
                "the receiver's window held the sender {} of the time, at least the {} that makes it the limit: a larger window is the first thing to raise",
                pct(share),
                pct(MIN_SHARE)
            )
        } else {
            // Not its rule's sign: the limit that kept the flow below capacity.
            let held = format!("the receiver's window ({} of the time)", pct(share));
            super::kept_below(f, &held).unwrap_or_else(|| format!("the receiver's window held the sender {} of the time", pct(share)))
        }
    }));
    let bound = x.window_bound().map_or(String::new(), |b| {
        format!("; the window allowed at most rwnd/RTT = {}", rate(b))
    });
    match (x.max_rwnd, x.obeyed_rwnd, x.obeyed_scale.shift()) {
        (Some(w), Some(o), Some(k)) => {
            // Point to the middlebox finding only where there is one: its rules ask for more
            // (the window moving, not one edge met again and again).
            let why = if x.scale_finding {
                "see the middlebox finding"
            } else {
                "its flights stopped at that window's edge again and again; no middlebox finding could be made of it"
            };
            out.push(format!(
                "the sender read the receiver's windows with shift {k}, not the handshake's: it kept to at most {} where the handshake's scale makes {} of them ({why}){bound}; goodput {}",
                bytes(o as f64),
                bytes(w as f64),
                rate(x.goodput)
            ))
        }
        (Some(w), _, _) => out.push(format!(
            "receiver window max {}{bound}; goodput {}",
            bytes(w as f64),
            rate(x.goodput)
        )),
        _ => {}
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
    } else if x.reader_behind() {
        out.push(format!(
            "the window stayed an eighth or more below the largest the receiver had offered for {} of the steady transfer: its buffer held data its application had not read",
            pct(x.reader_behind_share)
        ));
    }
    out
}

pub fn advice(f: &Findings<'_>) -> Vec<AdviceItem> {
    let x = f.facts;
    let mut out = Vec::new();
    // The window the sender kept to: where a middlebox made the ends read the windows
    // differently, that is the one that bound it, and the fix is the middlebox.
    if let (Some(o), Some(w)) = (x.obeyed_rwnd, x.max_rwnd) {
        if o < w {
            let mut a = plain(
                AdviceKind::EnableWindowScaling,
                None,
                format!(
                    "the sender ignores the window scale the receiver negotiated (a middlebox between them rewrote or stripped the option): it keeps to {} of the {} offered; find the middlebox that rewrites window scaling",
                    bytes(o as f64),
                    bytes(w as f64)
                ),
                x,
            );
            if let Some((new, gain)) = x.bdp.and_then(|b| advice::with_window(x, b.min(w as f64))) {
                a.current_bytes = Some(o);
                a.expected_bps = Some(new * 8.0);
                a.expected_gain = Some(gain);
                a.sentence.push_str(&advice::expected_text(x, new, gain));
            }
            out.push(a);
            return out;
        }
    }
    let w = x.sender_rwnd().unwrap_or(0);
    if x.receiver_scale == WindowScale::NotUsed && (w as f64) <= UNSCALED_MAX {
        let ceiling = UNSCALED_MAX / x.base_rtt_s.max(1e-9);
        let mut a = plain(
            AdviceKind::EnableWindowScaling,
            Some("net.ipv4.tcp_window_scaling"),
            format!(
                "window scaling is off for this connection (a SYN lacked the option, and both ends must offer it: RFC 7323 §2.2), so the window cannot exceed 64 KiB: ceiling {} at this RTT of {}. Enable window scaling at both ends (net.ipv4.tcp_window_scaling=1) or find the middlebox that strips it",
                rate(ceiling),
                ms(x.base_rtt_s)
            ),
            x,
        );
        if let Some(bdp) = x.bdp.filter(|&b| b > UNSCALED_MAX) {
            if let Some((new, gain)) = advice::with_window(x, bdp) {
                a.current_bytes = Some(w);
                a.expected_bps = Some(new * 8.0);
                a.expected_gain = Some(gain);
                a.sentence.push_str(&advice::expected_text(x, new, gain));
            }
        }
        out.push(a);
    }
    let reader_stalled = x.zero_windows > 0 || x.stall(StallKind::ZeroWindow).is_some();
    if reader_stalled {
        out.push(plain(
            AdviceKind::ReadFaster,
            None,
            format!(
                "the receiving application did not read fast enough ({} zero-window advertisements): a bigger buffer only delays the stall; make the reader drain the socket faster",
                x.zero_windows
            ),
            x,
        ));
        return out;
    }
    // A window that shrank and stayed small: the buffer was mostly full of data the
    // application had not read, so the reader's pace is the flow's, and a larger buffer
    // fills just the same (R15 slow_reader: a 700 kbit/s reader kept 7-8 KiB of 42 KiB
    // open; "raise the receive buffer, expected 13.6 Mbit/s" promised 17x for nothing).
    if x.reader_behind() {
        out.push(plain(
            AdviceKind::ReadFaster,
            None,
            format!(
                "the receiving application read slower than the data came: for {} of the steady transfer the window stayed an eighth or more below the largest it had offered, that much of its buffer holding data not yet read (RFC 9293 §3.8.6.2.2), so it read at the flow's {}: a bigger buffer fills just the same; make the reader drain the socket faster",
                pct(x.reader_behind_share),
                rate(x.goodput)
            ),
            x,
        ));
        return out;
    }
    let Some(bdp) = x.bdp else { return out };
    // Without window scaling no buffer is advertised beyond 64 KiB: the buffer helps only
    // once scaling is on (the advice above).
    let unscaled = if x.receiver_scale == WindowScale::NotUsed {
        "once window scaling is on, "
    } else {
        ""
    };
    let raised = advice::raise(
        x,
        AdviceKind::RaiseReceiveBuffer,
        "net.ipv4.tcp_rmem max, or SO_RCVBUF",
        w,
        bdp,
        |had, buffer| {
            format!(
                "the receiver never advertised more than {had}; BDP is {}; {unscaled}raise the receive buffer (net.ipv4.tcp_rmem max, or SO_RCVBUF) to >= {buffer}",
                super::bdp_bytes(bdp)
            )
        },
    );
    match raised {
        Some(a) => out.push(a),
        // The window already held the BDP the capacity estimate gives: that estimate is
        // low (a lower bound), and the window needed cannot be named from this capture.
        None if x.lower_bound && (w as f64) >= bdp => out.push(plain(
            AdviceKind::RaiseReceiveBuffer,
            Some("net.ipv4.tcp_rmem max, or SO_RCVBUF"),
            format!(
                "the window ({}) was full, yet it already exceeds the BDP by this capture's capacity estimate ({}), which is only a lower bound: the path is faster than measured; raise the receive buffer (net.ipv4.tcp_rmem max, or SO_RCVBUF) above {} and measure again",
                // The window that was full is the flight it held; the receiver may have
                // advertised more later (autotuning grows it), which the flow never used.
                if x.max_flight > 0 && x.max_flight < w {
                    format!("{}, up to {} advertised", bytes(x.max_flight as f64), bytes(w as f64))
                } else {
                    bytes(w as f64)
                },
                super::bdp_bytes(bdp),
                bytes(advice::BUFFER_PER_WINDOW * w as f64)
            ),
            x,
        )),
        None => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{at, run, Bin, BUSY};
    use crate::diagnose::Label;

    #[test]
    fn a_window_held_most_of_the_time_is_the_verdict() {
        // The window is full 90% of every bin; delivery at a third of the capacity.
        let c = run(|_| Bin {
            busy: 0.1,
            rwnd: 0.9,
            delivered: at(0.33),
            flight: 13_000,
            ..BUSY
        });
        assert_eq!(c.verdict, Label::ReceiverWindow);
        assert!((c.fractions[Label::ReceiverWindow.index()] - 0.9).abs() < 0.01);
    }

    #[test]
    fn a_window_that_binds_now_and_then_is_not() {
        let c = run(|i| Bin {
            busy: 0.8,
            rwnd: 0.2,
            delivered: at(0.5),
            flight: 20_000 + (i as u64 % 40) * 1448,
            ..BUSY
        });
        assert_ne!(c.verdict, Label::ReceiverWindow);
        assert!(!super::applies(0.2));
    }
}
