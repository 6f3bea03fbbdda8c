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
