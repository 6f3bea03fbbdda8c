//! The data sender's view, reconstructed from wherever the capture was taken.
//!
//! A sender's flight is "sent minus acknowledged *as the sender knows it*". Next to the
//! sender the capture sees the same ACKs the sender does. Next to the receiver it sees
//! each ACK one sender-loop (capture point -> sender -> capture point) before the sender's
//! reaction to it comes back: the data arriving now was sent when the sender held the ACKs
//! that passed here one loop ago. So the sender's flight for data seen at time t is the
//! highest sequence seen minus the ACK that passed at t - loop, and the window it obeyed is
//! the one advertised with that ACK. With a loop of ~0 this is the naive flight.

use super::event::SenderView;
use crate::seq::SeqNum;
use crate::time::{Span, Timestamp};
use std::collections::VecDeque;

const MAX_HISTORY: usize = 1 << 16;

#[derive(Clone, Copy, Debug)]
struct Advert {
    at: Timestamp,
    ack: SeqNum,
    window: Option<u64>,
}

#[derive(Clone, Debug, Default)]
pub struct SenderViewTracker {
    history: VecDeque<Advert>,
}

impl SenderViewTracker {
    /// An ACK for this direction's data passed the capture point.
    pub fn on_ack(&mut self, at: Timestamp, ack: SeqNum, window: Option<u64>) {
        if let Some(back) = self.history.back_mut() {
            if back.ack == ack && back.window == window {
                return; // nothing new for the sender
            }
            if ack.is_before(back.ack) {
                return; // an old, reordered ACK
            }
        }
        if self.history.len() == MAX_HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(Advert { at, ack, window });
    }

    /// The sender's flight and window for data up to `nxt` seen at `at`, given the loop
    /// through the sender.
    pub fn view(&mut self, at: Timestamp, sender_loop: Span, nxt: SeqNum) -> Option<SenderView> {
        let then = at - sender_loop;
        while self.history.len() > 1 && self.history[1].at <= then {
            self.history.pop_front();
        }
        let a = self.history.front()?;
        if a.at > then {
            return None; // no ACK old enough: the sender had nothing from the peer yet
        }
        Some(SenderView { flight: nxt.bytes_after(a.ack) as u64, window: a.window })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: i64) -> Timestamp {
        Timestamp(0) + Span::from_millis(ms)
    }

    #[test]
    fn next_to_the_sender_it_is_the_naive_flight() {
        let mut v = SenderViewTracker::default();
        v.on_ack(t(0), SeqNum(1000), Some(64_000));
        let s = v.view(t(1), Span::ZERO, SeqNum(5000)).unwrap();
        assert_eq!(s, SenderView { flight: 4000, window: Some(64_000) });
    }

    #[test]
    fn next_to_the_receiver_it_uses_the_ack_one_loop_earlier() {
        let mut v = SenderViewTracker::default();
        // the receiver acknowledges everything at once; the sender learns it 100 ms later
        for i in 0..10 {
            v.on_ack(t(i * 10), SeqNum(1 + i as u32 * 10_000), Some(100_000));
        }
        // data arriving at 105 ms was sent against the ACK of 0..5 ms
        let s = v.view(t(105), Span::from_millis(100), SeqNum(100_001)).unwrap();
        assert_eq!(s.flight, 100_000);
    }

    #[test]
    fn no_view_before_any_ack_is_old_enough() {
        let mut v = SenderViewTracker::default();
        v.on_ack(t(50), SeqNum(1), None);
        assert!(v.view(t(60), Span::from_millis(100), SeqNum(10)).is_none());
    }
}
