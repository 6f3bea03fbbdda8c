//! The resolution of a capture's timestamps as it really is: the coarsest power of ten
//! (in nanoseconds) that divides every timestamp seen. A pcap with microsecond fields
//! gives 1 µs; a host that stamps in milliseconds gives 1 ms whatever the field's unit.
//!
//! A gap measured with resolution q is known only to ±q, so a spacing (dispersion) sample
//! must span many quanta to say anything about a rate: [`MIN_SPAN_QUANTA`] of them keep its
//! timing error within 10%, inside the 15% margin the bottleneck rule allows itself.

use crate::time::{Span, Timestamp};

/// A dispersion sample spans at least this many quanta (error <= 1/10).
pub const MIN_SPAN_QUANTA: i64 = 10;

const POW10: [i64; 10] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
];

#[derive(Clone, Copy, Debug)]
pub struct Quantum {
    /// log10 of the quantum in ns (0..=9).
    zeros: usize,
}

impl Default for Quantum {
    fn default() -> Self {
        Quantum { zeros: 9 }
    }
}

impl Quantum {
    /// One more timestamp: the quantum can only get finer. Most calls test one remainder.
    #[inline]
    pub fn on(&mut self, ts: Timestamp) {
        while self.zeros > 0 && ts.0 % POW10[self.zeros] != 0 {
            self.zeros -= 1;
        }
    }

    pub fn get(&self) -> Span {
        Span(POW10[self.zeros])
    }

    /// The shortest span a dispersion sample may cover.
    pub fn min_sample_span(&self) -> Span {
        Span(POW10[self.zeros] * MIN_SPAN_QUANTA)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quantum_is_the_coarsest_power_of_ten_dividing_every_stamp() {
        let mut q = Quantum::default();
        q.on(Timestamp(1_700_000_000_123_000_000));
        assert_eq!(q.get(), Span(1_000_000));
        q.on(Timestamp(1_700_000_000_123_456_000));
        assert_eq!(q.get(), Span(1_000));
        q.on(Timestamp(1_700_000_000_123_456_789));
        assert_eq!(q.get(), Span(1));
        assert_eq!(q.min_sample_span(), Span(10));
    }
}
