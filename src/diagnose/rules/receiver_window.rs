//! # receiver-window-limited
//!
//! ## What it detects
//! The sender's next full segment did not fit in the window the receiver had granted
//! (flight + 1 MSS > rwnd, Linux's `tcp_snd_wnd_test`), or the window was zero. The time
//! until the sender could send again is receiver-window time, as Linux accounts
//! `tcpi_rwnd_limited`.
//!
//! ## Why
//! A window smaller than the bandwidth-delay product caps throughput at rwnd / RTT no
//! matter how fast the path is; a bigger receive buffer (or window scaling) removes it.
//!
//! ## Example
//! 50 Mbit/s, 100 ms, SO_RCVBUF 64 KiB: flight sits at ~80 kB every round, goodput
//! 6.4 Mbit/s = 80 kB / 100 ms.
//!
//! The per-segment test lives in the accumulator (it needs the sender's view at that
//! moment); this file holds the verdict threshold and the evidence.

/// A flow whose window bound it for at least this share of the steady transfer is
/// receiver-window-limited (unless it reached the path's capacity, which wins).
pub const MIN_SHARE: f64 = 0.4;

pub fn applies(share: f64) -> bool {
    share >= MIN_SHARE
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
