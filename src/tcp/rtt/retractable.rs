//! The least data samples of a loop, each with the data it timed, so that one the receiver
//! later reports as received twice can be taken back.
//!
//! Karn's rule (RFC 6298 §3) takes no sample from data sent more than once, because the ACK
//! cannot say which copy it answers. A capture that began mid-transfer cannot see a copy
//! sent before it: a re-sending is the first copy it sees, and the ACK of the original,
//! still on its way, times it (census seed 4242: 97 µs on a 250 ms path, at a sender that
//! re-sent after a timeout with the originals still queued). Nothing marks such a segment
//! when it is timed. The receiver says so later: a D-SACK (RFC 2883 §4.1.1) reports the copy
//! that arrived second, and RFC 3708 §2 reads a D-SACK for a retransmission as proof that both
//! copies arrived. A sample of data the receiver got twice was ambiguous when it was taken,
//! and Karn's rule applies to it then.
//!
//! Only the least samples can move a minimum, so only they are kept: a sample outside the
//! kept few is no less than every kept one was when it left or was refused, and the least of
//! those outside stands in for them ([`RetractableLeast::least`] is exact unless a sample
//! outside the kept few is itself one to take back).

use crate::seq::SeqNum;
use crate::time::Span;

/// How many of the least samples are kept: a recovery's burst of re-sendings timed by the
/// originals' ACKs gives one short sample per segment, and more than this many of them would
/// leave the next outside (still short) as the minimum.
const KEPT: usize = 8;

#[derive(Clone, Copy, Debug, Default)]
struct Kept {
    rtt: Span,
    /// The data the sample timed, [start, end).
    start: SeqNum,
    end: SeqNum,
}

#[derive(Clone, Debug, Default)]
pub struct RetractableLeast {
    /// The first `len` are kept, in no order (16 bytes each: no `Option` per slot).
    kept: [Kept; KEPT],
    len: u8,
    /// The least sample that was not kept (refused, or pushed out by a smaller one).
    outside: Option<Span>,
    /// How many samples were taken back.
    pub retracted: u32,
}

impl RetractableLeast {
    fn kept(&self) -> &[Kept] {
        &self.kept[..self.len as usize]
    }

    /// A sample `rtt` of the data [start, end).
    pub fn add(&mut self, rtt: Span, start: SeqNum, end: SeqNum) {
        let new = Kept { rtt, start, end };
        if (self.len as usize) < KEPT {
            self.kept[self.len as usize] = new;
            self.len += 1;
            return;
        }
        let (i, worst) = self
            .kept
            .iter()
            .enumerate()
            .map(|(i, k)| (i, k.rtt))
            .max_by_key(|&(_, r)| r)
            .expect("KEPT > 0");
        let out = if rtt < worst {
            self.kept[i] = new;
            worst
        } else {
            rtt
        };
        self.outside = Some(self.outside.map_or(out, |o| o.min(out)));
    }

    /// The receiver reported [start, end) received twice: every kept sample of data
    /// overlapping it is taken back. True when any was.
    pub fn retract(&mut self, start: SeqNum, end: SeqNum) -> bool {
        let (taken, _) = self.take_overlapping(start, end);
        self.retracted += taken;
        taken > 0
    }

    /// The capture saw [start, end) sent again: a sample already taken of it came before
    /// that copy was sent, so the copy a D-SACK may later report is that one, and the
    /// sample stands. Every kept sample overlapping it leaves the kept few; returns the
    /// least of them (the caller keeps it among the samples nothing takes back).
    pub fn settle(&mut self, start: SeqNum, end: SeqNum) -> Option<Span> {
        self.take_overlapping(start, end).1
    }

    /// Removes the kept samples of data overlapping [start, end): how many, and their least.
    fn take_overlapping(&mut self, start: SeqNum, end: SeqNum) -> (u32, Option<Span>) {
        let (mut taken, mut least) = (0, None::<Span>);
        let mut i = 0;
        while i < self.len as usize {
            let k = self.kept[i];
            if k.start.is_before(end) && start.is_before(k.end) {
                taken += 1;
                least = Some(least.map_or(k.rtt, |l| l.min(k.rtt)));
                self.len -= 1;
                self.kept[i] = self.kept[self.len as usize];
            } else {
                i += 1;
            }
        }
        (taken, least)
    }

    /// The least sample not taken back.
    pub fn least(&self) -> Option<Span> {
        self.kept().iter().map(|k| k.rtt).chain(self.outside).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn us(n: i64) -> Span {
        Span::from_micros(n)
    }

    #[test]
    fn a_sample_of_data_received_twice_no_longer_counts() {
        let mut l = RetractableLeast::default();
        l.add(us(250_000), SeqNum(0), SeqNum(1000));
        l.add(us(97), SeqNum(1000), SeqNum(2000));
        assert_eq!(l.least(), Some(us(97)));
        // A D-SACK of part of it.
        assert!(l.retract(SeqNum(1500), SeqNum(2000)));
        assert_eq!(l.least(), Some(us(250_000)));
        assert_eq!(l.retracted, 1);
        // Data next to it, not overlapping: nothing.
        assert!(!l.retract(SeqNum(2000), SeqNum(3000)));
    }

    #[test]
    fn a_sample_of_data_seen_sent_again_is_not_taken_back() {
        let mut l = RetractableLeast::default();
        l.add(us(94_000), SeqNum(1), SeqNum(1441));
        assert_eq!(l.settle(SeqNum(1), SeqNum(1441)), Some(us(94_000)));
        assert!(!l.retract(SeqNum(1), SeqNum(1441)));
        assert_eq!(l.settle(SeqNum(1), SeqNum(1441)), None);
    }

    #[test]
    fn data_across_the_wrap_is_matched() {
        let mut l = RetractableLeast::default();
        l.add(us(5), SeqNum(u32::MAX - 100), SeqNum(400));
        assert!(l.retract(SeqNum(0), SeqNum(10)));
        assert_eq!(l.least(), None);
    }

    proptest! {
        /// Against a model that keeps every sample: the least not taken back is the model's
        /// whenever no sample outside the kept few was taken back.
        #[test]
        fn the_least_is_the_least_not_taken_back(
            samples in proptest::collection::vec(1i64..1000, 1..60),
            back in proptest::collection::vec(0usize..60, 0..12),
        ) {
            let mut l = RetractableLeast::default();
            // Distinct values (ties make which of two equal samples is kept arbitrary).
            let samples: Vec<i64> = samples.iter().enumerate().map(|(i, &r)| r * 64 + i as i64).collect();
            for (i, &r) in samples.iter().enumerate() {
                l.add(Span(r), SeqNum(i as u32 * 10), SeqNum(i as u32 * 10 + 10));
            }
            // Take back the smallest first, as a recovery's short samples are.
            let mut order: Vec<usize> = (0..samples.len()).collect();
            order.sort_by_key(|&i| samples[i]);
            let mut gone = vec![false; samples.len()];
            for &b in &back {
                let Some(&i) = order.get(b % KEPT) else { continue };
                l.retract(SeqNum(i as u32 * 10 + 3), SeqNum(i as u32 * 10 + 4));
                gone[i] = true;
            }
            let model = (0..samples.len()).filter(|&i| !gone[i]).map(|i| Span(samples[i])).min();
            // Samples beyond the kept few were never at risk here (b % KEPT), so exact.
            prop_assert_eq!(l.least(), model);
        }
    }
}
