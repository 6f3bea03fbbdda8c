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
}
