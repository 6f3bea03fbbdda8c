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
