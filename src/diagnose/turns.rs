//! # Whose turn an idle sender waited on
//!
//! A sender with nothing to send is the application's limit (`rules::sender`), but in a
//! request/response protocol (SMTP, HTTP/1.1, SMB, a database) the sender's application had
//! nothing to send because it waited for the other end's answer: the other end's turn.
//! The wait then is that end's processing plus a round trip, and the remedy is fewer turns
//! (pipelining: RFC 2920 for SMTP, HTTP/2 streams) or a faster answer, not a bigger window.
//!
//! An idle pause (everything the sender sent acknowledged, the window open) is the other
//! end's turn when that end's data came during the pause and the sender resumed after it:
//! its application answered, and the sender's went on from the answer. A pause with no data
//! from the other end in it was the sender's own (its application was slow to write, or
//! waited on something the capture does not show).
//!
//! Example: mime-stream-depth (an SMTP upload): the client's "." after the message, the
//! server's "250" 181 ms later, the client's next command 0.4 ms after that; each command of
//! the dialogue waits 100-180 ms for its reply on a path of 0.1 ms.
//!
//! Only the pause up to the answer (and the answer's way from the capture point to the
//! sender and the sender's data back, the least loop through the sender) waited on the
//! other end; the rest was the sender's own, with the answer in hand. SMB_445_upload_v2:
//! each of 24 pauses of ~34 ms was answered 0.9 ms after the client's last write, and the
//! client wrote again 33 ms later — its own time, not the server's turn.

use crate::time::{Span, Timestamp};

/// The answer delays kept for the median: a flow of more turns than this keeps the first
/// ones (memory bounded per flow, not by the capture's length).
const MAX_ANSWERS: usize = 1024;

#[derive(Clone, Debug, Default)]
pub struct Turns {
    /// The first data from the other end since the sender's current idle pause began.
    answer: Option<Timestamp>,
    idle_ns: i64,
    answered_ns: i64,
    pauses: u32,
    answered: u32,
    /// Per answered pause: from the sender's last data before it to the answer (seen here).
    delays_ns: Vec<i64>,
    /// Per answered pause: the sender's own time after the answer reached it.
    after_ns: Vec<i64>,
}

/// The turns over a connection, for the evidence.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TurnSummary {
    /// Idle time (s) over the connection, from each idle pause's start to the next data.
    pub idle_s: f64,
    /// Of it, the pauses the other end's answer ended.
    pub answered_s: f64,
    pub pauses: u32,
    pub answered: u32,
    /// Median time from the sender's last data to the answer.
    pub median_answer_s: Option<f64>,
    /// Median time the sender took after an answer reached it, before it sent again.
    pub median_after_answer_s: Option<f64>,
}

impl TurnSummary {
    /// As the summary carries it (times rounded to the microsecond).
    pub fn to_summary(self) -> crate::summary::IdleTurns {
        let us = |s: f64| (s * 1e6).round() / 1e6;
        crate::summary::IdleTurns {
            idle_s: us(self.idle_s),
            answered_s: us(self.answered_s),
            pauses: self.pauses,
            answered: self.answered,
            median_answer_ms: self.median_answer_s.map(|m| (m * 1e6).round() / 1e3),
            median_after_answer_ms: self.median_after_answer_s.map(|m| (m * 1e6).round() / 1e3),
        }
    }

    /// The share of the idle time that waited on the other end.
    pub fn answered_share(&self) -> f64 {
        if self.idle_s > 0.0 {
            (self.answered_s / self.idle_s).min(1.0)
        } else {
            0.0
        }
    }
}

impl Turns {
    /// Data from the other end at `ts`; `idle`: the sender is in an idle pause.
    pub fn on_peer_data(&mut self, ts: Timestamp, idle: bool) {
        if idle && self.answer.is_none() {
            self.answer = Some(ts);
        }
    }

    /// The sender sends new data at `ts` after an idle pause that began at `idle_from` (at
    /// the sender); its data before the pause was last seen at `last_data`. `sender_loop`:
    /// the least loop from the capture point through the sender and back (the answer's way
    /// to it and its data's way here; next to the sender, nothing).
    pub fn on_resume(
        &mut self,
        ts: Timestamp,
        idle_from: Option<Timestamp>,
        last_data: Option<Timestamp>,
        sender_loop: Span,
    ) {
        let answer = self.answer.take();
        let Some(from) = idle_from else { return };
        let gap = (ts - from).nanos();
        if gap <= 0 {
            return;
        }
        self.idle_ns = self.idle_ns.saturating_add(gap);
        self.pauses = self.pauses.saturating_add(1);
        if let Some(a) = answer.filter(|&a| a <= ts) {
            // The wait for the answer: to the answer, plus its way to the sender and the
            // sender's data's way back; the rest the sender took with the answer in hand.
            let waited = ((a - from).nanos().max(0) + sender_loop.nanos().max(0)).min(gap);
            self.answered_ns = self.answered_ns.saturating_add(waited);
            if self.after_ns.len() < MAX_ANSWERS {
                self.after_ns.push(gap - waited);
            }
            self.answered = self.answered.saturating_add(1);
            if let Some(d) = last_data.map(|l| (a - l).nanos()).filter(|&d| d >= 0) {
                if self.delays_ns.len() < MAX_ANSWERS {
                    self.delays_ns.push(d);
                }
            }
        }
    }

    /// A new data event with no idle pause before it: an answer seen since is no turn's.
    pub fn on_busy_data(&mut self) {
        self.answer = None;
    }

    pub fn summary(&self) -> Option<TurnSummary> {
        if self.pauses == 0 {
            return None;
        }
        let mut d = self.delays_ns.clone();
        d.sort_unstable();
        let mut after = self.after_ns.clone();
        after.sort_unstable();
        Some(TurnSummary {
            idle_s: Span::from_nanos(self.idle_ns).secs_f64(),
            answered_s: Span::from_nanos(self.answered_ns).secs_f64(),
            pauses: self.pauses,
            answered: self.answered,
            median_answer_s: d.get(d.len() / 2).map(|&n| Span::from_nanos(n).secs_f64()),
            median_after_answer_s: after.get(after.len() / 2).map(|&n| Span::from_nanos(n).secs_f64()),
        })
    }
}

/// The law of the turns (on the summary): the answered part of the idle time within it,
/// and the evidence sentence that names the turns states the summary's figures.
pub fn law(f: &crate::summary::FlowSummary) -> Vec<String> {
    let mut out = Vec::new();
    let said = f
        .evidence
        .iter()
        .find(|e| e.contains("waited for the other end's answers"));
    let Some(t) = f.idle_turns else {
        if said.is_some() {
            out.push("an answered-turns sentence with no turns in the summary".into());
        }
        return out;
    };
    if t.answered > t.pauses || t.answered_s > t.idle_s + 1e-6 || t.answered_s < 0.0 {
        out.push(format!("turns out of order: {t:?}"));
    }
    if t.answered == 0 && t.median_answer_ms.is_some() {
        out.push("a median answer with no answered pause".into());
    }
    if let Some(e) = said {
        let share = if t.idle_s > 0.0 {
            (t.answered_s / t.idle_s).min(1.0)
        } else {
            0.0
        };
        let counts = if t.pauses == 1 {
            "its one pause".to_string()
        } else {
            format!("{} of its {} pauses", t.answered, t.pauses)
        };
        // Within the rounding the figures were written with (the summary's microseconds).
        let share_ok = [share - 0.005, share, share + 0.005]
            .iter()
            .any(|&s| e.contains(&format!(" {} waited", crate::units::pct_part(s.clamp(0.0, 1.0)))));
        if !e.contains(&counts) || !share_ok {
            out.push(format!("the turns sentence does not state {t:?}: {e}"));
        }
        if let Some(m) = t.median_answer_ms {
            if !e.contains(&crate::units::ms(m / 1000.0)) {
                out.push(format!("the turns sentence does not state the median {m} ms: {e}"));
            }
        }
        // The sender's own time after the answers, where said, is the summary's.
        if let Some(rest) = e.split("it sent again a median ").nth(1) {
            let stated = t
                .median_after_answer_ms
                .is_some_and(|a| rest.starts_with(&crate::units::ms(a / 1000.0)));
            if !stated {
                out.push(format!(
                    "the turns sentence's time after the answers is not the summary's: {e}"
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: f64) -> Timestamp {
        Timestamp(1_000_000_000) + Span::from_nanos((ms * 1e6) as i64)
    }

    #[test]
    fn a_pause_the_other_ends_data_ended_is_its_turn() {
        let mut turns = Turns::default();
        // Request at 0, acknowledged at 1 (idle from there), answer at 181, next request at 182.
        turns.on_peer_data(t(181.0), true);
        turns.on_resume(t(182.0), Some(t(1.0)), Some(t(0.0)), Span::from_micros(500));
        // A pause with no answer in it: the sender's own application.
        turns.on_resume(t(400.0), Some(t(200.0)), Some(t(190.0)), Span::from_micros(500));
        let s = turns.summary().unwrap();
        assert_eq!((s.pauses, s.answered), (2, 1));
        // 180 ms to the answer, and the loop through the sender: 180.5 ms of the 181.
        assert!((s.answered_s - 0.1805).abs() < 1e-9, "{s:?}");
        assert!((s.idle_s - 0.381).abs() < 1e-9, "{s:?}");
        assert!((s.median_answer_s.unwrap() - 0.181).abs() < 1e-9);
        assert!((s.median_after_answer_s.unwrap() - 0.0005).abs() < 1e-9);
        assert!((s.answered_share() - 0.1805 / 0.381).abs() < 1e-9);
    }

    #[test]
    fn the_time_a_sender_takes_after_a_quick_answer_is_its_own() {
        // SMB_445_upload_v2's shape: idle from 1 ms, answered at 1.9 ms, next write at 35 ms.
        let mut turns = Turns::default();
        for k in 0..24 {
            let o = 40.0 * k as f64;
            turns.on_peer_data(t(o + 1.9), true);
            turns.on_resume(t(o + 35.0), Some(t(o + 1.0)), Some(t(o)), Span::from_micros(100));
        }
        let s = turns.summary().unwrap();
        assert_eq!((s.pauses, s.answered), (24, 24));
        assert!(s.answered_share() < 0.05, "{s:?}");
        assert!((s.median_after_answer_s.unwrap() - 0.033).abs() < 1e-6, "{s:?}");
    }

    #[test]
    fn data_from_the_other_end_while_the_sender_was_busy_answers_no_pause() {
        let mut turns = Turns::default();
        turns.on_peer_data(t(5.0), false);
        turns.on_resume(t(50.0), Some(t(10.0)), Some(t(0.0)), Span::ZERO);
        assert_eq!(turns.summary().unwrap().answered, 0);
        // An answer that came while idle, but the sender sent on without pausing: cleared.
        turns.on_peer_data(t(60.0), true);
        turns.on_busy_data();
        turns.on_resume(t(90.0), Some(t(70.0)), Some(t(65.0)), Span::ZERO);
        assert_eq!(turns.summary().unwrap().answered, 0);
        assert!(Turns::default().summary().is_none());
    }
}
