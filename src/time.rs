//! Capture time. Every instant in the analysis comes from a packet timestamp; nothing
//! here reads a clock, so the same capture always gives the same answer.

use std::fmt;
use std::ops::{Add, Sub};

/// An instant taken from a capture record: nanoseconds since the Unix epoch.
///
/// Signed so that pcapng `if_tsoffset` and out-of-order records can never underflow.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(pub i64);

/// A span between two capture instants, in nanoseconds (may be negative when records are
/// out of order; callers that need a length use [`Span::max_zero`]).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Span(pub i64);

impl Timestamp {
    pub const fn from_nanos(nanos: i64) -> Self {
        Timestamp(nanos)
    }
    pub fn from_secs_f64(secs: f64) -> Self {
        Timestamp((secs * 1e9).round() as i64)
    }
    pub const fn nanos(self) -> i64 {
        self.0
    }
    pub fn secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
}

impl Span {
    pub const ZERO: Span = Span(0);
    pub const fn from_nanos(nanos: i64) -> Self {
        Span(nanos)
    }
    pub const fn from_micros(us: i64) -> Self {
        Span(us * 1_000)
    }
    pub const fn from_millis(ms: i64) -> Self {
        Span(ms * 1_000_000)
    }
    pub fn from_secs_f64(secs: f64) -> Self {
        Span((secs * 1e9).round() as i64)
    }
    pub const fn nanos(self) -> i64 {
        self.0
    }
    pub fn secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    /// The span, or zero when it is negative (timestamps that went backwards).
    pub fn max_zero(self) -> Span {
        Span(self.0.max(0))
    }
}

impl Sub for Timestamp {
    type Output = Span;
    fn sub(self, rhs: Timestamp) -> Span {
        Span(self.0.saturating_sub(rhs.0))
    }
}

impl Add<Span> for Timestamp {
    type Output = Timestamp;
    fn add(self, rhs: Span) -> Timestamp {
        Timestamp(self.0.saturating_add(rhs.0))
    }
}

impl Sub<Span> for Timestamp {
    type Output = Timestamp;
    fn sub(self, rhs: Span) -> Timestamp {
        Timestamp(self.0.saturating_sub(rhs.0))
    }
}

impl Add for Span {
    type Output = Span;
    fn add(self, rhs: Span) -> Span {
        Span(self.0.saturating_add(rhs.0))
    }
}

impl Sub for Span {
    type Output = Span;
    fn sub(self, rhs: Span) -> Span {
        Span(self.0.saturating_sub(rhs.0))
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:09}",
            self.0.div_euclid(1_000_000_000),
            self.0.rem_euclid(1_000_000_000)
        )
    }
}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3}ms", self.millis_f64())
    }
}

// ---- Timestamp resolution ----

/// The resolution of a capture's timestamps as it really is: the coarsest power of ten
/// (in nanoseconds) that divides every timestamp seen. A pcap with microsecond fields
/// gives 1 µs; a host that stamps in milliseconds gives 1 ms whatever the field's unit.
///
/// A gap measured with resolution q is known only to ±q, so a measured delay must span
/// many quanta to say anything: [`MIN_SPAN_QUANTA`] of them keep its timing error within
/// 10%, inside the 15% margin the bottleneck rule allows itself. Dispersion samples and RTT
/// samples both keep to it.

/// A measured delay spans at least this many quanta (error <= 1/10).
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

/// The capture's effective timestamp resolution, learnt from the timestamps themselves.
#[derive(Clone, Copy, Debug)]
pub struct Quantum {
    /// log10 of the quantum in ns (0..=9).
    zeros: usize,
    /// Timestamps seen (saturating): the estimate is an upper bound until enough have.
    seen: u32,
}

impl Default for Quantum {
    fn default() -> Self {
        Quantum { zeros: 9, seen: 0 }
    }
}

/// Timestamps after which the estimate is the clock's: a microsecond clock gives this many
/// timestamps that are all multiples of 10 µs with probability 10^-16. Before, the round
/// first timestamps of a connection (a handshake at whole milliseconds) would pass for a
/// coarse clock.
pub const QUANTUM_SETTLED_AFTER: u32 = 16;

/// Whether 10^`zeros` divides `t`. Each arm divides by a constant, which compiles to a
/// multiply and a shift: `t % POW10[zeros]` was a 64-bit `idiv` (~40 cycles) on every
/// segment, 4-5% of the tracker's time on the benchmark capture.
#[inline(always)]
fn divides(zeros: usize, t: i64) -> bool {
    match zeros {
        0 => true,
        1 => t % 10 == 0,
        2 => t % 100 == 0,
        3 => t % 1_000 == 0,
        4 => t % 10_000 == 0,
        5 => t % 100_000 == 0,
        6 => t % 1_000_000 == 0,
        7 => t % 10_000_000 == 0,
        8 => t % 100_000_000 == 0,
        _ => t % 1_000_000_000 == 0,
    }
}

impl Quantum {
    /// One more timestamp: the quantum can only get finer. Most calls test one remainder.
    #[inline]
    pub fn on(&mut self, ts: Timestamp) {
        self.seen = self.seen.saturating_add(1);
        while self.zeros > 0 && !divides(self.zeros, ts.0) {
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

    /// The shortest delay the clock can be trusted to measure: [`Self::min_sample_span`]
    /// once the estimate has settled, one nanosecond before (only a zero is then known to
    /// be unresolved).
    pub fn min_resolved_span(&self) -> Span {
        if self.seen >= QUANTUM_SETTLED_AFTER {
            self.min_sample_span()
        } else {
            Span(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_are_spans() {
        let a = Timestamp::from_nanos(1_000_000_000);
        let b = a + Span::from_millis(250);
        assert_eq!(b - a, Span::from_millis(250));
        assert_eq!((a - b).max_zero(), Span::ZERO);
        assert!((b.secs_f64() - 1.25).abs() < 1e-12);
    }

    #[test]
    fn debug_prints_seconds_and_nanos() {
        assert_eq!(format!("{:?}", Timestamp::from_nanos(1_500_000_001)), "1.500000001");
        assert_eq!(format!("{:?}", Span::from_micros(1500)), "1.500ms");
    }
}

#[cfg(test)]
mod quantum_tests {
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

    proptest::proptest! {
        /// The constant-divisor test is the remainder by the table's power, for every power
        /// and any timestamp (negative ones too: a capture before 1970).
        #[test]
        fn divides_is_the_remainder_test(zeros in 0usize..10, t in proptest::prelude::any::<i64>(), scale in 0usize..10) {
            let t = t / POW10[scale] * POW10[scale];
            proptest::prop_assert_eq!(divides(zeros, t), t % POW10[zeros] == 0);
        }
    }
}
