//! Loss episodes: when a direction's retransmissions happened, and what the transfer did
//! meanwhile. An episode runs from a retransmission until the sender has gone a
//! retransmission timer (RFC 6298's RTO, at least one second) with its data acknowledged
//! and nothing re-sent; a timeout's silent back-off does not end it, since nothing was
//! acknowledged in it. A lone retransmission (one fast retransmit) is not an episode. Losses spread over a whole transfer (random loss) make one episode
//! that spans it; a burst of losses (a failing link, a policer's drops) one that says when.

use super::{sender_name, stall, threshold};
use crate::flow::Dir;
use crate::summary::{Resumed, Stall, StallKind};
use crate::tcp::{Connection, SegmentEvent};
use crate::time::Timestamp;
use crate::units::{bytes, rate, secs};

#[derive(Clone, Debug, Default)]
pub struct Losses {
    /// The open episode: first and last retransmission, count, bytes re-sent, and the
    /// direction's acknowledged bytes when it began.
    open: Option<Episode>,
    /// Bytes of this direction acknowledged so far, and when the first were.
    acked: u64,
    /// Bytes of this direction reported delivered so far, SACKed bytes counted once when
    /// SACKed (the tracker's delivery accounting): what the receiver got, when it got it.
    /// A cumulative ACK that fills a hole jumps over bytes the receiver had long held, so
    /// `acked` over a loss episode is not a delivery rate.
    delivered: u64,
    first_ack: Option<Timestamp>,
    origin: Option<Timestamp>,
}

#[derive(Clone, Copy, Debug)]
struct Episode {
    first: Timestamp,
    last: Timestamp,
    count: u32,
    bytes: u64,
    /// Delivered bytes of the direction at the first and at the last retransmission: the
    /// delivery reported between them is the episode's.
    delivered_before: u64,
    delivered_at_last: u64,
}

impl Losses {
    /// Every segment of the connection; `d` is the data direction this tracker watches.
    pub fn on_segment(&mut self, conn: &Connection, ev: &SegmentEvent, d: Dir) -> Option<Stall> {
        self.origin.get_or_insert(ev.ts);
        if ev.dir == d {
            if ev.send.retransmission {
                let delivered = self.delivered;
                let e = self.open.get_or_insert(Episode {
                    first: ev.ts,
                    last: ev.ts,
                    count: 0,
                    bytes: 0,
                    delivered_before: delivered,
                    delivered_at_last: delivered,
                });
                e.last = ev.ts;
                e.delivered_at_last = delivered;
                e.count += 1;
                e.bytes += ev.len as u64;
            }
            return None;
        }
        self.delivered += ev.acked.delivered as u64;
        if ev.acked.acked == 0 {
            return None;
        }
        self.acked += ev.acked.acked as u64;
        self.first_ack.get_or_insert(ev.ts);
        let e = self.open?;
        if ev.ts - e.last <= threshold(conn) {
            return None;
        }
        self.open = None;
        // A lone retransmission is ordinary repair (a fast retransmit of one loss): counted
        // in the direction's figures, not an episode.
        (e.count >= 2).then(|| self.episode(conn, d, e, true))
    }

    fn episode(&self, conn: &Connection, d: Dir, e: Episode, ended: bool) -> Stall {
        let mut s = stall(StallKind::LossEpisode, Some(d), e.first, e.last);
        s.events = e.count;
        s.recovered = ended;
        s.resumed_by = ended.then_some(Resumed::Acknowledgment);
        let x = conn.dir(d);
        let share = if x.data_segments > 0 {
            format!(" ({} of its data segments)", crate::units::pct(x.retransmitted_segments.min(e.count as u64) as f64 / x.data_segments as f64))
        } else {
            String::new()
        };
        // Delivery during the episode (what the ACKs between its first and last
        // retransmission reported delivered) against the direction's average. A rate needs
        // at least a round trip: over less, ACK timing is batching, not delivery (Linux's
        // tcp_rate.c discards a sample whose interval is below the minimum RTT).
        let during = (e.last - e.first).secs_f64();
        let in_it = e.delivered_at_last.saturating_sub(e.delivered_before) as f64;
        let round = conn.rtt.min_end_to_end().map(|r| r.secs_f64());
        let rates = match self.first_ack {
            Some(f) if (conn.last_ts - f).secs_f64() > 0.0 => {
                let all = rate(self.acked as f64 / (conn.last_ts - f).secs_f64());
                match round {
                    Some(r) if during >= r && during > 0.0 => {
                        s.delivered_bps = Some(in_it * 8.0 / during);
                        format!("; {} delivered during it ({}), against {all} over the connection", bytes(in_it), rate(in_it / during))
                    }
                    Some(_) => format!("; {} delivered during it (less than a round trip: no rate), {all} over the connection", bytes(in_it)),
                    None => format!("; {} delivered during it (no round-trip time to rate it over), {all} over the connection", bytes(in_it)),
                }
            }
            _ => String::new(),
        };
        let origin = self.origin.unwrap_or(e.first);
        s.sentence = {
            format!(
                "the {} retransmitted {} segments{share} ({}) from +{} to +{} ({}){rates}",
                sender_name(d),
                e.count,
                bytes(e.bytes as f64),
                secs((e.first - origin).secs_f64()),
                secs((e.last - origin).secs_f64()),
                secs(during)
            )
        };
        s
    }

    pub fn finish(&self, conn: &Connection, d: Dir) -> Option<Stall> {
        let e = self.open.filter(|e| e.count >= 2)?;
        let repaired = conn.dir(d).flight() == Some(0);
        Some(self.episode(conn, d, e, repaired))
    }
}
