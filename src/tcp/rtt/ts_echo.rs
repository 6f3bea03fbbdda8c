//! RTT samples from TCP timestamps (RFC 7323 §3), the way pping does it: the first time
//! a TSval is seen going one way, and the first time it comes back as a TSecr the other
//! way. Works on pure ACKs and on data, with or without a handshake in the capture, and
//! is not confused by retransmissions (each TSval is matched once).
//!
//! An echo times a round trip only when the echoing segment was sent *because* the
//! segment carrying the TSval arrived; otherwise it times how long the echoing end had
//! nothing to say (an application pause, a zero-window stall, a keep-alive interval). Two
//! answers are prompt:
//! - an ACK that acknowledges new data: RFC 7323 §4.2 lets only an ACK that advances
//!   SND.UNA update the RTT, and for the same reason a duplicate ACK (which echoes the older
//!   TS.Recent of the last in-order segment) or a window update gives no sample;
//! - new data released by the segment carrying the TSval, from an end that was sending. Two
//!   signs show it, one for each side of the capture point: the segment carrying the TSval
//!   acknowledged the echoing end's data while more of it was outstanding here (the ACK
//!   clock, visible near the sender), or reopened a closed window; or the echoing end's data
//!   kept arriving while the TSval was on its way and the echo followed its previous
//!   segment within half the sample (near the receiver, where the sender's flight is out of
//!   sight: an end that paused before sending sent nothing for most of the sample).
//!   Data sent after everything was acknowledged — a request after a pause, the next
//!   message of a chat — echoes the last TSval it received, however old, and is not a
//!   round trip.

use crate::time::{Span, Timestamp};
use std::collections::VecDeque;

const MAX_PENDING: usize = 1 << 16;

#[derive(Clone, Copy, Debug)]
struct Pending {
    val: u32,
    first_seen: Timestamp,
    /// A segment with this TSval could release data at the other end at once (it
    /// acknowledged the other end's data leaving some outstanding, or reopened its window).
    releases: bool,
    /// The most payload a segment of this TSval carried: whether the loop the echo times
    /// carried a data segment this way (its serialisation, `Loop::segment_gap`).
    carried: u32,
}

/// What the segment echoing a TSval did, to judge whether it answered that TSval's segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Echo {
    /// It advanced the cumulative ACK (RFC 7323 §4.2's condition).
    pub acks_new_data: bool,
    /// It carried new data.
    pub new_data: bool,
    /// When the echoing end's previous new data passed the capture point.
    pub previous_data: Option<Timestamp>,
}

/// What a segment carrying a TSval did, as [`TsEchoSampler::on_tsval`] needs it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sent {
    /// It could release the other end's data at once (see [`Pending::releases`]).
    pub releases: bool,
    /// It acknowledged all the other end's data seen here.
    pub drains: bool,
    /// The bytes of data it carried.
    pub payload: u32,
    /// It was a SYN: the first TSval its end sent on the connection.
    pub syn: bool,
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
    /// A segment carrying TSval `val` went out at `at` (see [`Sent`] for what it did).
    pub fn on_tsval(&mut self, val: u32, at: Timestamp, sent: Sent) {
        let Sent {
            releases,
            drains,
            payload,
            syn,
        } = sent;
        if self.last_val.is_none() && !syn {
            // The first TSval seen from an end whose SYN the capture missed: segments before
            // the capture began may have carried it too (a TS clock ticks every 1 ms to 1 s,
            // RFC 7323 §5.4, and stamps every segment of a tick alike), so its sighting here
            // need not be its first sending, and an echo of it timed from here is short by
            // up to a tick (a BSD sender's 1 ms clock, tapped mid-path mid-flow: 22.5 ms on
            // a 40 ms path). Not timed; the next value's first segment is in sight.
            self.last_val = Some(val);
            return;
        }
        if let Some(last) = self.last_val {
            if !before(last, val) {
                // Same tick (or an older value: a retransmission keeps its own): timed from
                // the first sighting, but any segment of the tick may be what released data
                // — until one acknowledges all the other end had sent: data an earlier one
                // released would have gone out before it (at the sender's side of the
                // path), so the other end had none then, and what it sends later on this
                // echo waited on its application (an on/off sender's next burst, 120 ms on,
                // echoes the tick whose first ACK left its last burst's tail outstanding).
                if let Some(p) = self.pending.back_mut().filter(|p| p.val == val) {
                    p.releases = if drains { releases } else { p.releases || releases };
                    p.carried = p.carried.max(payload);
                }
                return;
            }
        }
        self.last_val = Some(val);
        if self.pending.len() == MAX_PENDING {
            self.pending.pop_front();
        }
        self.pending.push_back(Pending {
            val,
            first_seen: at,
            releases,
            carried: payload,
        });
    }

    /// A segment the other way echoed `ecr` at `at`: `None` when `ecr` is not a TSval seen
    /// for the first time; else the time since the TSval's first sighting and whether the
    /// echo answered that TSval's segment (see the module's rules and [`Echoed`]). The first
    /// echo is the only one: a later one of the same value can only be later still.
    pub fn on_tsecr(&mut self, ecr: u32, at: Timestamp, echo: Echo) -> Option<Echoed> {
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
        // The echoing end kept sending while the TSval travelled, and right up to the echo.
        let kept_sending = echo
            .previous_data
            .is_some_and(|prev| prev > p.first_seen && (at - prev).nanos() * 2 <= rtt.nanos());
        let answered = echo.acks_new_data || (echo.new_data && (p.releases || kept_sending));
        Some(Echoed {
            elapsed: rtt,
            answered: answered && rtt.nanos() >= 0,
            carried: p.carried,
        })
    }

    /// The sample of an echo, as the tests read it.
    #[cfg(test)]
    fn sample(&mut self, ecr: u32, at: Timestamp, echo: Echo) -> Option<Option<Span>> {
        self.on_tsecr(ecr, at, echo).map(|e| e.sample())
    }
}

/// The first echo of a TSval: how long after the TSval's first sighting it came, and
/// whether it answered the segment that carried it.
///
/// Answered or not, the echoing segment was sent after the TSval's segment reached the far
/// end (an end echoes only what it received: RFC 7323 §4.3), so `elapsed` is never less
/// than the loop through that end, queue included: an echo that waited on the far end (its
/// application, its delayed-ACK timer, a pause) is no sample, but it still bounds the loop
/// from above — and the queue the loop crossed, from above too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Echoed {
    pub elapsed: Span,
    pub answered: bool,
    /// The most payload a segment of the echoed TSval carried.
    pub carried: u32,
}

impl Echoed {
    /// The RTT sample: the elapsed time of an echo that answered.
    pub fn sample(self) -> Option<Span> {
        self.answered.then_some(self.elapsed)
    }

    /// The upper bound on the loop: any echo not earlier than its TSval.
    pub fn bound(self) -> Option<Span> {
        (self.elapsed.nanos() >= 0).then_some(self.elapsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: i64) -> Timestamp {
        Timestamp(0) + Span::from_millis(ms)
    }

    const ACK: Echo = Echo {
        acks_new_data: true,
        new_data: false,
        previous_data: None,
    };
    const DATA: Echo = Echo {
        acks_new_data: false,
        new_data: true,
        previous_data: None,
    };
    const NOTHING: Echo = Echo {
        acks_new_data: false,
        new_data: false,
        previous_data: None,
    };
    const PLAIN: Sent = Sent {
        releases: false,
        drains: false,
        payload: 0,
        syn: false,
    };

    /// A sampler that saw its end's SYN, with TSval `syn_val`, a second before the test.
    fn opened(syn_val: u32) -> TsEchoSampler {
        let mut s = TsEchoSampler::default();
        s.on_tsval(syn_val, t(-1_000), Sent { syn: true, ..PLAIN });
        s
    }

    #[test]
    fn the_first_value_seen_after_a_missed_syn_is_not_timed() {
        // Tapped mid-flow, the first TSval seen may have gone out on earlier segments out
        // of sight: its echo 22.5 ms on is no round trip of the 40 ms path.
        let mut s = TsEchoSampler::default();
        s.on_tsval(500, t(0), PLAIN);
        assert_eq!(s.sample(500, t(22), ACK), None);
        // The next value was first sent in sight: timed.
        s.on_tsval(501, t(1), PLAIN);
        s.on_tsval(500, t(2), PLAIN); // an old value (a retransmission) starts nothing
        assert_eq!(s.sample(501, t(41), ACK), Some(Some(Span::from_millis(40))));
        // The SYN's value is its end's first: timed from it.
        let mut s = TsEchoSampler::default();
        s.on_tsval(7, t(0), Sent { syn: true, ..PLAIN });
        assert_eq!(s.sample(7, t(40), ACK), Some(Some(Span::from_millis(40))));
    }

    #[test]
    fn first_sighting_to_first_echo() {
        let mut s = opened(99);
        s.on_tsval(100, t(0), PLAIN);
        s.on_tsval(100, t(5), PLAIN); // same tick: still timed from the first sighting
        s.on_tsval(101, t(10), PLAIN);
        assert_eq!(s.sample(100, t(40), ACK), Some(Some(Span::from_millis(40))));
        assert_eq!(s.sample(100, t(41), ACK), None, "echoed once only");
        assert_eq!(s.sample(101, t(50), ACK), Some(Some(Span::from_millis(40))));
    }

    #[test]
    fn skipped_values_are_dropped() {
        let mut s = opened(0);
        for (i, v) in [1u32, 2, 3, 4].iter().enumerate() {
            s.on_tsval(*v, t(i as i64), PLAIN);
        }
        assert_eq!(s.sample(3, t(20), ACK), Some(Some(Span::from_millis(18))));
        assert_eq!(s.sample(2, t(21), ACK), None);
        assert_eq!(s.sample(4, t(23), ACK), Some(Some(Span::from_millis(20))));
    }

    #[test]
    fn tsvals_wrap() {
        let mut s = opened(u32::MAX - 1);
        s.on_tsval(u32::MAX, t(0), PLAIN);
        s.on_tsval(1, t(1), PLAIN);
        assert_eq!(s.sample(1, t(11), ACK), Some(Some(Span::from_millis(10))));
    }

    #[test]
    fn an_echo_that_answers_nothing_is_not_a_round_trip() {
        // A zero-window probe 3.4 s after the receiver's last ACK echoes that ACK's TSval:
        // it acknowledges nothing and carries nothing new.
        let mut s = opened(6);
        s.on_tsval(7, t(0), PLAIN);
        assert_eq!(s.sample(7, t(3_400), NOTHING), Some(None));
        // Nor is a chat message sent 1.2 s after the peer's ACK that drained everything.
        s.on_tsval(8, t(4_000), PLAIN);
        assert_eq!(s.sample(8, t(5_200), DATA), Some(None));
    }

    #[test]
    fn data_released_by_an_ack_is_a_round_trip() {
        // The receiver's ACK acknowledges part of the flight; the sender's next segment
        // echoes it: the ACK clock, at the receiver's capture point the loop through the
        // sender.
        let mut s = opened(8);
        s.on_tsval(9, t(0), PLAIN);
        s.on_tsval(
            9,
            t(1),
            Sent {
                releases: true,
                ..PLAIN
            },
        ); // a later ACK of the same tick released data
        assert_eq!(s.sample(9, t(41), DATA), Some(Some(Span::from_millis(41))));
    }

    #[test]
    fn data_after_a_later_ack_of_the_tick_drained_everything_waited() {
        // The first ACK of the tick left the burst's tail outstanding, the second
        // acknowledged it all: the next burst, 120 ms on, came from the application.
        let mut s = opened(29);
        s.on_tsval(
            30,
            t(0),
            Sent {
                releases: true,
                ..PLAIN
            },
        );
        s.on_tsval(30, t(0), Sent { drains: true, ..PLAIN });
        assert_eq!(s.sample(30, t(120), DATA), Some(None));
        // Draining first, releasing after (a window reopened by the tick's last segment).
        s.on_tsval(31, t(200), Sent { drains: true, ..PLAIN });
        s.on_tsval(
            31,
            t(200),
            Sent {
                releases: true,
                ..PLAIN
            },
        );
        assert_eq!(s.sample(31, t(201), DATA), Some(Some(Span::from_millis(1))));
    }

    #[test]
    fn near_the_receiver_a_sender_that_kept_sending_answered() {
        // At the receiver the sender's flight is out of sight (every ACK covers all that
        // arrived): data arriving all along and right before the echo shows a busy sender.
        let mut s = opened(19);
        s.on_tsval(20, t(0), PLAIN);
        let busy = Echo {
            previous_data: Some(t(39)),
            ..DATA
        };
        assert_eq!(s.sample(20, t(40), busy), Some(Some(Span::from_millis(40))));
        // The same echo after the sender paused: its previous data came just after the ACK,
        // then nothing for 4 s.
        s.on_tsval(21, t(100), PLAIN);
        let paused = Echo {
            previous_data: Some(t(101)),
            ..DATA
        };
        assert_eq!(s.sample(21, t(4_100), paused), Some(None));
        // Nor when nothing at all arrived since the TSval was seen.
        s.on_tsval(22, t(5_000), PLAIN);
        let silent = Echo {
            previous_data: Some(t(4_100)),
            ..DATA
        };
        assert_eq!(s.sample(22, t(5_040), silent), Some(None));
    }
}
