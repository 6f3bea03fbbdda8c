//! # bottleneck-limited
//!
//! ## What it detects
//! Delivery at the path's bottleneck capacity: the bytes acknowledged per round trip
//! reach the capacity estimate (alone, or summed with the other flows that share the same
//! hosts and time). The excess flight queues and inflates the RTT.
//!
//! ## Why
//! When the pipe is full, more window only adds queueing delay; nothing at the ends can
//! make the transfer faster.
//!
//! ## Example
//! 50 Mbit/s, 100 ms, SO_RCVBUF 4 MiB: 47 Mbit/s of payload once slow start ends, RTT
//! 100 -> 110 ms from the queue.

/// Delivery within 15% of the capacity counts as at capacity: header overhead, ACK
/// timing and the estimate's own error are all inside that margin.
pub const AT_CAPACITY: f64 = 0.85;

pub fn at_capacity(rate: f64, capacity: f64) -> bool {
    capacity > 0.0 && rate >= AT_CAPACITY * capacity
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{at, run, Bin, BUSY};
    use crate::diagnose::Label;

    #[test]
    fn delivery_at_capacity_is_bottleneck_limited() {
        // After a short start-up (flight doubling), busy and delivering at 97% of capacity.
        let c = run(|i| {
            let flight = if i < 20 {
                2_000 << (i / 4)
            } else {
                60_000 + (i as u64 % 7) * 1448
            };
            Bin {
                delivered: if i < 20 { at(0.3) } else { at(0.97) },
                flight,
                retransmissions: (i % 50 == 49) as u32,
                ..BUSY
            }
        });
        assert_eq!(c.verdict, Label::Bottleneck);
        assert!(
            c.fractions[Label::Bottleneck.index()] > 0.9,
            "{:?} {:?}",
            c.fractions,
            c.startup_s
        );
        assert!(c.utilisation.unwrap() > super::AT_CAPACITY);
    }

    #[test]
    fn the_margin_is_fifteen_percent() {
        assert!(super::at_capacity(0.86, 1.0));
        assert!(!super::at_capacity(0.84, 1.0));
        assert!(!super::at_capacity(1.0, 0.0));
    }
}
