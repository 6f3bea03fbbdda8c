//! Outages: data outstanding and nothing acknowledged for longer than a retransmission
//! timer (RFC 6298's RTO, at least one second). A sender in that state has timed out and is
//! retransmitting with its timer doubling each time (RFC 6298 §5.5): the back-off series
//! is part of the finding, and when it never gets an answer the connection is lost.
//! Shorter series that recover (two or more retransmissions of the oldest data backing
//! off, answered in under a second) are reported as `rto-backoff`.
//!
//! Seen from the receiver's side of the outage the sender's flight is out of sight; there
//! the sign is a silence of the whole connection ended by a retransmission ([`Silence`]).

use super::{backs_off, intervals, list_secs, sender_name, stall, threshold, MAX_INTERVALS};
use crate::flow::Dir;
use crate::summary::{Resumed, Stall, StallKind};
use crate::tcp::{Connection, SegmentEvent};
use crate::time::Timestamp;
use crate::units::{bytes, secs};

/// The shortest retransmission timeout of common stacks: Linux's TCP_RTO_MIN (200 ms,
/// include/net/tcp.h; RFC 6298 §2.4 asks for one second). Re-sending the oldest data sooner
/// than this after its last transmission is fast retransmit or recovery, not a timeout.
const RTO_MIN: crate::time::Span = crate::time::Span::from_millis(200);

/// One data direction's wait for acknowledgments.
#[derive(Clone, Debug, Default)]
pub struct Outage {
    /// Since when data has been outstanding with no acknowledgment of anything new.
    since: Option<Timestamp>,
    /// Retransmissions during the wait (the first few timed) and their count.
    retransmissions: Vec<Timestamp>,
    retransmission_count: u32,
    /// Timeouts in the wait: re-sendings of the oldest outstanding data at least RTO_MIN
    /// after its previous sending, and when that data was last sent.
    timeouts: u32,
    oldest_sent: Option<Timestamp>,
    /// The receiver's window was closed at some point of the wait: then the window, not the
    /// path, held the data (a zero-window stall, reported as such).
    window_closed: bool,
    origin: Option<Timestamp>,
}

impl Outage {
    pub fn waiting(&self) -> bool {
        self.since.is_some()
    }

    /// Every segment of the connection; `d` is the data direction this tracker watches.
    pub fn on_segment(&mut self, conn: &Connection, ev: &SegmentEvent, d: Dir, window_closed: bool) -> Option<Stall> {
        self.origin.get_or_insert(ev.ts);
        self.window_closed |= window_closed && self.since.is_some();
        if ev.dir == d {
            if ev.send.new_bytes > 0 && self.since.is_none() {
                self.since = Some(ev.ts);
                self.oldest_sent = Some(ev.ts);
            }
            let x = conn.dir(d);
            let oldest = ev.send.retransmission && x.una.and_then(|u| x.relative(u)) == Some(ev.seq);
            if oldest {
                if self.oldest_sent.is_some_and(|t| ev.ts - t >= RTO_MIN) {
                    self.timeouts += 1;
                }
                self.oldest_sent = Some(ev.ts);
            }
            if let (true, Some(since)) = (ev.send.retransmission, self.since) {
                self.retransmission_count += 1;
                // Timed from the start of the wait: the first interval is the first timeout.
                if self.retransmissions.is_empty() {
                    self.retransmissions.push(since);
                }
                if self.retransmissions.len() <= MAX_INTERVALS {
                    self.retransmissions.push(ev.ts);
                }
            }
            return None;
        }
        if ev.acked.acked == 0 {
            return None;
        }
        // Something new was acknowledged: a wait ends here.
        let found = self.since.and_then(|since| self.judge(conn, d, since, ev.ts, true));
        let outstanding = conn.dir(d).flight().is_some_and(|f| f > 0);
        self.since = outstanding.then_some(ev.ts);
        self.oldest_sent = self.since;
        self.retransmissions.clear();
        self.retransmission_count = 0;
        self.timeouts = 0;
        self.window_closed = window_closed;
        found
    }

    /// The wait [since, end) as a stall, if it is one.
    fn judge(&self, conn: &Connection, d: Dir, since: Timestamp, end: Timestamp, answered: bool) -> Option<Stall> {
        if self.window_closed {
            return None;
        }
        let wait = end - since;
        let series = intervals(&self.retransmissions);
        let long = wait >= threshold(conn);
        let backoff = self.timeouts >= 2 && backs_off(&series);
        let kind = match (long, answered) {
            (true, true) => StallKind::Outage,
            (_, false) if self.retransmission_count > 0 && long => StallKind::Lost,
            (true, false) => StallKind::Outage,
            (false, true) if backoff => StallKind::RtoBackoff,
            _ => return None,
        };
        let mut s = stall(kind, Some(d), since, end);
        s.recovered = answered;
        s.events = self.retransmission_count;
        s.intervals_s = series.clone();
        s.resumed_by = answered.then_some(Resumed::Acknowledgment);
        let at = secs((since - self.origin.unwrap_or(since)).secs_f64());
        let who = sender_name(d);
        let retrans = match self.retransmission_count {
            0 => "without retransmitting".to_string(),
            n => format!(
                "retransmitting {n} time(s){}",
                if series.is_empty() {
                    String::new()
                } else {
                    format!(
                        " {} apart{}",
                        list_secs(&series),
                        if backs_off(&series) { " (RTO back-off)" } else { "" }
                    )
                }
            ),
        };
        let outstanding = conn
            .dir(d)
            .flight()
            .map_or(String::new(), |f| format!(" with {} outstanding", bytes(f as f64)));
        s.sentence = match kind {
            StallKind::Outage if answered => format!(
                "nothing the {who} sent was acknowledged for {} from +{at} ({retrans}); an acknowledgment then resumed the transfer: an outage of the path or of the receiver",
                secs(s.duration_s)
            ),
            StallKind::Outage => format!(
                "nothing the {who} sent was acknowledged in the last {} of the capture, from +{at}{outstanding} ({retrans})",
                secs(s.duration_s)
            ),
            StallKind::Lost => format!(
                "connection lost: from +{at} the {who} got no acknowledgment for {}{outstanding}, {retrans}, and none came before the capture ended",
                secs(s.duration_s)
            ),
            _ => format!(
                "the {who}'s retransmission timer expired {} times in a row from +{at} ({retrans}) before an acknowledgment came after {}",
                self.timeouts,
                secs(s.duration_s)
            ),
        };
        Some(s)
    }

    /// At the end of the connection: a wait still open.
    pub fn finish(&self, conn: &Connection, d: Dir, end: Timestamp, window_closed: bool) -> Option<Stall> {
        let since = self.since?;
        if window_closed || !conn.dir(d).flight().is_some_and(|f| f > 0) {
            return None;
        }
        self.judge(conn, d, since, end, false)
    }
}

/// Silence of the whole connection ended by a retransmission: an outage seen from where
/// the waiting data is out of sight (near its receiver, or past the failed hop).
#[derive(Clone, Debug, Default)]
pub struct Silence {
    last: Option<Timestamp>,
    origin: Option<Timestamp>,
}

impl Silence {
    pub fn on_segment(&mut self, conn: &Connection, ev: &SegmentEvent, sender_saw_it: bool) -> Option<Stall> {
        self.origin.get_or_insert(ev.ts);
        let last = self.last.replace(ev.ts.max(self.last.unwrap_or(ev.ts)))?;
        if sender_saw_it || !ev.send.retransmission || ev.ts - last < threshold(conn) {
            return None;
        }
        let mut s = stall(StallKind::Outage, Some(ev.dir), last, ev.ts);
        s.recovered = true;
        s.events = 1;
        s.resumed_by = Some(Resumed::Retransmission);
        s.sentence = format!(
            "the connection was silent for {} from +{}, then the {} retransmitted: its data or the answers were lost for that long (an outage), or its retransmission timer had backed off",
            secs(s.duration_s),
            secs((last - self.origin.unwrap_or(last)).secs_f64()),
            sender_name(ev.dir)
        );
        Some(s)
    }
}
