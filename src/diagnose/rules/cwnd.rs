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
//! control (BBR does not treat random loss as congestion).
//!
//! ## Example
//! 50 Mbit/s, 80 ms, 1% random loss, CUBIC: 13 retransmissions in 4 s, flight saw-tooths
//! between 40 and 115 kB, goodput 3.7 Mbit/s.

/// Retransmitted share of the segments above which the losses are reported as the cause.
pub const LOSSY: f64 = 0.001;
