//! Delayed-ACK stalls: the sender's last, smaller-than-MSS segment sits alone in flight,
//! the receiver holds its ACK for its delayed-ACK timer (RFC 1122 §4.2.3.2 allows up to
//! 500 ms; Linux waits at least 40 ms, Windows 200 ms) because no second segment comes, and
//! the sender sends nothing more until that ACK arrives — Nagle's rule (RFC 896: no new
//! small segment while one is unacknowledged) or an application waiting on it. Each time
//! the transfer stops for a timer, far longer than the path's round trip: the "staircase"
//! of a time-sequence graph.
//!
//! Counted when the wait beyond the round trip through the receiver (from the capture
//! point, as it is now: [`receiver_loop`]) is a delayed-ACK timer's, at least
//! [`MIN_HOLD`] and at most [`MAX_HOLD`]; when the sender sent nothing new during it; when
//! the ACK that ended it was a pure ACK (an ACK riding on data is the peer's answer, not its
//! timer); and when that ACK released the sender's next data ([`released_within`]).

use super::{sender_name, stall};
use crate::flow::Dir;
use crate::summary::{Stall, StallKind};
use crate::tcp::rtt::End;
use crate::tcp::{Connection, SegmentEvent};
use crate::time::{Span, Timestamp};
use crate::units::{pct, secs};

/// The shortest delayed-ACK hold of common stacks: Linux's TCP_DELACK_MIN (HZ/25 = 40 ms,
/// include/net/tcp.h; Windows waits 200 ms, BSDs 100 ms), less a quarter for timer
/// granularity (jiffies) and capture timing.
const MIN_HOLD: Span = Span::from_millis(30);

/// The round trip a wait is measured against: from the capture point through the receiver
/// of direction `d` and back (the segment's way there and its ACK's back). Beside the
/// sender that is the whole round trip; beside the receiver it is the receiver's own
/// microseconds, and the wait is the held ACK alone — against the end-to-end RTT, a 40 ms
/// hold on a 15 ms path was not three round trips and went uncounted at the receiver while
/// the sender's capture counted 43 of them. A loop measured as negligible (within one
/// clock tick) is zero; one not measured at all falls back to the end-to-end RTT. The loop
/// is taken as it is now (its least prompt sample of the last rounds, queueing included;
/// its least sample when no ACK of two full segments timed it lately): the hold is what
/// the wait took beyond it, and a timer's hold is an absolute time (40 ms at least on
/// Linux), not a multiple of the path's round trip — a test of "more than three round
/// trips" missed every 40 ms hold on a 30 ms path at the sender while the receiver's
/// capture showed 31 of them.
fn receiver_loop(conn: &Connection, d: Dir, now: Timestamp) -> Option<Span> {
    let end = Connection::sender_end(d).other();
    let near = conn.rtt.through(end);
    let prompt = near.least().and_then(|l| near.prompt_min_at(now, l.max(MIN_HOLD)));
    prompt.or_else(|| least_loop(conn, end))
}

/// The least loop through `end`: zero for one measured as negligible (within one clock
/// tick), the end-to-end RTT for one not measured at all.
fn least_loop(conn: &Connection, end: End) -> Option<Span> {
    let l = conn.rtt.through(end);
    match l.least() {
        Some(x) => Some(x),
        None if l.measured() => Some(Span(0)),
        None => conn.rtt.min_end_to_end(),
    }
}

/// The longest: RFC 1122 §4.2.3.2, "the delay MUST be less than 0.5 seconds". A longer
/// wait is no delayed-ACK timer's (an outage, a queue, the peer's application).
const MAX_HOLD: Span = Span::from_millis(500);

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
    /// A held ACK (its instant, the wait it ended, when the wait began) not yet shown to
    /// have released the sender's next data ([`released_within`]).
    pending: Option<(Timestamp, Span, Timestamp)>,
}

/// How soon after the held ACK, beyond the loop through the sender, its next new data must
/// come for the ACK to have released it: the shortest hold the rule counts. A sender held
/// by Nagle's rule sends the moment the ACK reaches it; a request-response client whose
/// server delayed the ACK of a request sends its next request after the *response*, and a
/// response in between (data from the peer) ends the claim whatever the timing.
fn released_within(conn: &Connection, d: Dir) -> Option<Span> {
    least_loop(conn, Connection::sender_end(d)).map(|l| l + MIN_HOLD)
}

impl DelayedAck {
    pub fn on_segment(&mut self, conn: &Connection, ev: &SegmentEvent, d: Dir) {
        let mss = conn.mss(d);
        let flight = || conn.dir(d).flight().unwrap_or(0);
        if ev.dir == d {
            if ev.send.new_bytes > 0 {
                // The held ACK released this data: the wait was the sender's.
                if let Some((at, wait, since)) = self.pending.take() {
                    if released_within(conn, d).is_some_and(|w| ev.ts - at <= w) {
                        self.waits += 1;
                        self.total = self.total + wait;
                        self.longest = self.longest.max(wait);
                        self.first.get_or_insert(since);
                        self.last_wait_end = Some(at);
                    }
                }
                self.last_len = ev.len;
                let alone = ev.len < mss && flight() == ev.len as u64;
                self.alone_since = alone.then_some(ev.ts);
            }
            return;
        }
        if ev.len > 0 {
            // The peer answered: what the sender sends next follows that, not the ACK.
            self.pending = None;
        }
        if ev.acked.acked == 0 {
            return;
        }
        let left = flight();
        // A pure ACK: one that carries data is the peer's answer (its application had
        // something to say), not its delayed-ACK timer.
        if let (Some(since), 0, 0) = (self.alone_since, left, ev.len) {
            let wait = ev.ts - since;
            let timer = |round: Span| wait >= round + MIN_HOLD && wait <= round + MAX_HOLD;
            if receiver_loop(conn, d, ev.ts).is_some_and(timer) {
                self.pending = Some((ev.ts, wait, since));
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
