//! Delayed-ACK stalls: the sender's last, smaller-than-MSS segment sits alone in flight,
//! the receiver holds its ACK for its delayed-ACK timer (RFC 1122 §4.2.3.2 allows up to
//! 500 ms; Linux waits at least 40 ms, Windows 200 ms) because no second segment comes, and
//! the sender sends nothing more until that ACK arrives — Nagle's rule (RFC 896: no new
//! small segment while one is unacknowledged) or an application waiting on it. Each time
//! the transfer stops for a timer, far longer than the path's round trip: the "staircase"
//! of a time-sequence graph.
//!
//! Counted when the wait beyond the base RTT is a delayed-ACK timer's: at least
//! [`MIN_HOLD`] and more than two base RTTs; when the sender sent nothing new during it; and
//! when the ACK that ended it was a pure ACK (an ACK riding on data is the peer's answer, not
//! its timer).

use super::{sender_name, stall};
use crate::flow::Dir;
use crate::summary::{Stall, StallKind};
use crate::tcp::{Connection, SegmentEvent};
use crate::time::{Span, Timestamp};
use crate::units::{pct, secs};

/// The shortest delayed-ACK hold of common stacks: Linux's TCP_DELACK_MIN (HZ/25 = 40 ms,
/// include/net/tcp.h; Windows waits 200 ms, BSDs 100 ms), less a quarter for timer
/// granularity (jiffies) and capture timing.
const MIN_HOLD: Span = Span::from_millis(30);

#[derive(Clone, Debug, Default)]
pub struct DelayedAck {
    /// Length of the last new-data segment, and since when it has been alone in flight.
    last_len: u32,
    alone_since: Option<Timestamp>,
    waits: u32,
    total: Span,
    longest: Span,
    first: Option<Timestamp>,
    last_wait_end: Option<Timestamp>,
}

impl DelayedAck {
    pub fn on_segment(&mut self, conn: &Connection, ev: &SegmentEvent, d: Dir) {
        let mss = conn.mss(d);
        let flight = || conn.dir(d).flight().unwrap_or(0);
        if ev.dir == d {
            if ev.send.new_bytes > 0 {
                self.last_len = ev.len;
                let alone = ev.len < mss && flight() == ev.len as u64;
                self.alone_since = alone.then_some(ev.ts);
            }
            return;
        }
        if ev.acked.acked == 0 {
            return;
        }
        let left = flight();
        // A pure ACK: one that carries data is the peer's answer (its application had
        // something to say), not its delayed-ACK timer.
        if let (Some(since), 0, 0) = (self.alone_since, left, ev.len) {
            let wait = ev.ts - since;
            let timer = |base: Span| wait.nanos() > 3 * base.nanos() && wait - base >= MIN_HOLD;
            if conn.rtt.min_end_to_end().is_some_and(timer) {
                self.waits += 1;
                self.total = self.total + wait;
                self.longest = self.longest.max(wait);
                self.first.get_or_insert(since);
                self.last_wait_end = Some(ev.ts);
            }
        }
        // Near the sender: this ACK leaves only the last, short segment outstanding.
        let alone = left > 0 && left == self.last_len as u64 && self.last_len < mss;
        self.alone_since = alone.then_some(ev.ts);
    }

    pub fn finish(&self, conn: &Connection, d: Dir) -> Option<Stall> {
        // One wait can be a timer that fired for any reason; a pattern is the finding.
        if self.waits < 2 {
            return None;
        }
        let (first, last) = (self.first?, self.last_wait_end?);
        let mut s = stall(StallKind::DelayedAck, Some(d), first, last);
        s.events = self.waits;
        s.recovered = true;
        s.duration_s = self.total.secs_f64();
        let x = conn.dir(d);
        let span = match (x.first_data, x.last_data) {
            (Some(a), Some(b)) if b > a => (b - a).secs_f64(),
            _ => 0.0,
        };
        let share = if span > 0.0 {
            format!(" ({} of the transfer)", pct((self.total.secs_f64() / span).min(1.0)))
        } else {
            String::new()
        };
        let (who, peer) = (sender_name(d), sender_name(d.reverse()));
        s.sentence = format!(
            "{} times the {who}'s last, short segment waited alone for the {peer}'s delayed ACK (up to {} each, {} in all{share}) before the {who} sent more: Nagle's rule meeting a delayed ACK (RFC 896, RFC 1122 §4.2.3.2); TCP_NODELAY at the {who}, or TCP_QUICKACK at the {peer}, removes the wait",
            self.waits,
            secs(self.longest.secs_f64()),
            secs(self.total.secs_f64()),
        );
        Some(s)
    }
}
