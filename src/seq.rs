//! TCP sequence numbers: 32-bit values compared and subtracted modulo 2^32
//! (RFC 9293 §3.4, "sequence number comparisons"). All sequence arithmetic in the crate
//! goes through [`SeqNum`], so wraparound can never be written by hand.

use std::cmp::Ordering;
use std::fmt;

/// A sequence or acknowledgment number.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SeqNum(pub u32);

impl SeqNum {
    /// Signed distance from `other` to `self`: positive when `self` is after `other`.
    /// Valid while the two are less than 2^31 apart, which RFC 9293 guarantees for any
    /// two numbers inside one window.
    #[inline]
    pub fn diff(self, other: SeqNum) -> i32 {
        self.0.wrapping_sub(other.0) as i32
    }

    /// Forward distance from `other` to `self` in bytes, 0 when `self` is not after `other`.
    #[inline]
    pub fn bytes_after(self, other: SeqNum) -> u32 {
        self.diff(other).max(0) as u32
    }

    #[inline]
    pub fn add(self, n: u32) -> SeqNum {
        SeqNum(self.0.wrapping_add(n))
    }

    #[inline]
    pub fn sub(self, n: u32) -> SeqNum {
        SeqNum(self.0.wrapping_sub(n))
    }

    #[inline]
    pub fn is_after(self, other: SeqNum) -> bool {
        self.diff(other) > 0
    }

    #[inline]
    pub fn is_before(self, other: SeqNum) -> bool {
        self.diff(other) < 0
    }

    /// The later of two numbers in sequence space.
    #[inline]
    pub fn max_seq(self, other: SeqNum) -> SeqNum {
        if other.is_after(self) {
            other
        } else {
            self
        }
    }

    /// Offset of `self` from an initial sequence number, as the relative number tools show.
    #[inline]
    pub fn relative_to(self, isn: SeqNum) -> u32 {
        self.0.wrapping_sub(isn.0)
    }
}

impl PartialOrd for SeqNum {
    /// Ordering in sequence space (RFC 9293 §3.4). Not a total order over all of u32 —
    /// numbers 2^31 apart compare by the sign of the wrapped difference — which is why
    /// `SeqNum` does not implement `Ord`.
    fn partial_cmp(&self, other: &SeqNum) -> Option<Ordering> {
        Some(self.diff(*other).cmp(&0))
    }
}

impl fmt::Debug for SeqNum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "seq {}", self.0)
    }
}

/// Unwraps 32-bit sequence numbers into a 64-bit byte offset from a base, so that totals
/// over flows longer than 4 GiB stay exact (the way Zeek widens to its full sequence space).
#[derive(Clone, Copy, Debug)]
pub struct SeqSpace {
    base: SeqNum,
    /// The last number seen and its unwrapped offset.
    last: SeqNum,
    last_offset: i64,
}

impl SeqSpace {
    pub fn new(base: SeqNum) -> Self {
        SeqSpace {
            base,
            last: base,
            last_offset: 0,
        }
    }

    pub fn base(&self) -> SeqNum {
        self.base
    }

    /// Unwrapped offset of `s` from the base, tracking wraps relative to the last number
    /// passed in. A number before the base gives a negative offset.
    pub fn unwrap(&mut self, s: SeqNum) -> i64 {
        let off = self.last_offset + s.diff(self.last) as i64;
        if s.is_after(self.last) {
            self.last = s;
            self.last_offset = off;
        }
        off
    }

    /// Unwrapped offset without moving the reference point.
    pub fn peek(&self, s: SeqNum) -> i64 {
        self.last_offset + s.diff(self.last) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn comparison_wraps() {
        let a = SeqNum(u32::MAX - 10);
        let b = a.add(20);
        assert_eq!(b.0, 9);
        assert!(b.is_after(a));
        assert!(a.is_before(b));
        assert_eq!(b.diff(a), 20);
        assert_eq!(a.diff(b), -20);
        assert_eq!(b.bytes_after(a), 20);
        assert_eq!(a.bytes_after(b), 0);
        assert_eq!(a.max_seq(b), b);
        assert!(a < b);
    }

    #[test]
    fn relative_numbers_wrap_around_the_isn() {
        let isn = SeqNum(u32::MAX - 1);
        assert_eq!(SeqNum(5).relative_to(isn), 7);
    }

    #[test]
    fn space_unwraps_past_four_gib() {
        let mut sp = SeqSpace::new(SeqNum(u32::MAX - 1000));
        let mut s = sp.base();
        let mut total = 0i64;
        for _ in 0..10_000 {
            s = s.add(1_000_000);
            total += 1_000_000;
            assert_eq!(sp.unwrap(s), total);
        }
        assert!(total > 4 * (1i64 << 32) / 2);
        // an old retransmission still maps to its own offset
        assert_eq!(sp.unwrap(s.sub(5000)), total - 5000);
        assert_eq!(sp.peek(s), total);
    }

    proptest! {
        #[test]
        fn diff_inverts_add(a in any::<u32>(), n in 0u32..(1 << 31)) {
            let s = SeqNum(a);
            prop_assert_eq!(s.add(n).diff(s), n as i32);
            prop_assert_eq!(s.add(n).sub(n), s);
            prop_assert_eq!(s.add(n).relative_to(s), n);
        }

        #[test]
        fn ordering_is_antisymmetric(a in any::<u32>(), b in any::<u32>()) {
            let (x, y) = (SeqNum(a), SeqNum(b));
            if a.wrapping_sub(b) != 1 << 31 {
                prop_assert_eq!(x.is_after(y), y.is_before(x));
                prop_assert_eq!(x.diff(y), -y.diff(x));
            }
        }

        #[test]
        fn space_tracks_monotone_walks(start in any::<u32>(), steps in proptest::collection::vec(0u32..70_000, 1..200)) {
            let mut sp = SeqSpace::new(SeqNum(start));
            let mut s = SeqNum(start);
            let mut off = 0i64;
            for st in steps {
                s = s.add(st);
                off += st as i64;
                prop_assert_eq!(sp.unwrap(s), off);
            }
        }
    }
}
