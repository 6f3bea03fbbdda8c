//! RTT samples from TCP timestamps (RFC 7323 §3), the way pping does it: the first time
//! a TSval is seen going one way, and the first time it comes back as a TSecr the other
//! way. Works on pure ACKs and on data, with or without a handshake in the capture, and
//! is not confused by retransmissions (each TSval is matched once).

use crate::time::{Span, Timestamp};
use std::collections::VecDeque;

const MAX_PENDING: usize = 1 << 16;

#[derive(Clone, Copy, Debug)]
struct Pending {
    val: u32,
    first_seen: Timestamp,
}

#[derive(Clone, Debug, Default)]
pub struct TsEchoSampler {
    /// TSvals sent one way, in increasing (wrapping) order, not yet echoed.
    pending: VecDeque<Pending>,
    last_val: Option<u32>,
}

fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

impl TsEchoSampler {
    /// A segment carrying TSval `val` went out at `at`.
    pub fn on_tsval(&mut self, val: u32, at: Timestamp) {
        if let Some(last) = self.last_val {
            if !before(last, val) {
                return; // same tick or an older value (a retransmission keeps its own)
            }
        }
        self.last_val = Some(val);
        if self.pending.len() == MAX_PENDING {
            self.pending.pop_front();
        }
        self.pending.push_back(Pending { val, first_seen: at });
    }

    /// A segment the other way echoed `ecr` at `at`: the sample, when `ecr` is matched for
    /// the first time.
    pub fn on_tsecr(&mut self, ecr: u32, at: Timestamp) -> Option<Span> {
        while let Some(front) = self.pending.front() {
            if before(front.val, ecr) {
                self.pending.pop_front();
            } else {
                break;
            }
        }
        let front = self.pending.front()?;
        if front.val != ecr {
            return None;
        }
        let p = self.pending.pop_front().expect("front exists");
        let rtt = at - p.first_seen;
        (rtt.nanos() >= 0).then_some(rtt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: i64) -> Timestamp {
        Timestamp(0) + Span::from_millis(ms)
    }

    #[test]
    fn first_sighting_to_first_echo() {
        let mut s = TsEchoSampler::default();
        s.on_tsval(100, t(0));
        s.on_tsval(100, t(5)); // same tick: still timed from the first sighting
        s.on_tsval(101, t(10));
        assert_eq!(s.on_tsecr(100, t(40)), Some(Span::from_millis(40)));
        assert_eq!(s.on_tsecr(100, t(41)), None, "echoed once only");
        assert_eq!(s.on_tsecr(101, t(50)), Some(Span::from_millis(40)));
    }

    #[test]
    fn skipped_values_are_dropped() {
        let mut s = TsEchoSampler::default();
        for (i, v) in [1u32, 2, 3, 4].iter().enumerate() {
            s.on_tsval(*v, t(i as i64));
        }
        assert_eq!(s.on_tsecr(3, t(20)), Some(Span::from_millis(18)));
        assert_eq!(s.on_tsecr(2, t(21)), None);
        assert_eq!(s.on_tsecr(4, t(23)), Some(Span::from_millis(20)));
    }

    #[test]
    fn tsvals_wrap() {
        let mut s = TsEchoSampler::default();
        s.on_tsval(u32::MAX, t(0));
        s.on_tsval(1, t(1));
        assert_eq!(s.on_tsecr(1, t(11)), Some(Span::from_millis(10)));
    }
}
