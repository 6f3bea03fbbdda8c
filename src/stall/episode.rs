//! What loss episodes and ECN episodes share: a run of congestion signals of one data
//! direction that ends once the sender has gone a retransmission timer (RFC 6298's RTO, at
//! least one second) with its data acknowledged and no new signal, and what the direction
//! delivered meanwhile.

use super::threshold;
use crate::summary::Stall;
use crate::tcp::{Connection, SegmentEvent};
use crate::time::Timestamp;
use crate::units::{bytes, rate};

/// A direction's delivery as its ACKs report it, from the connection's first segment on.
#[derive(Clone, Debug, Default)]
pub struct Delivery {
    /// Bytes of this direction acknowledged so far, and when the first were.
    acked: u64,
    first_ack: Option<Timestamp>,
    /// Bytes of this direction reported delivered so far, SACKed bytes counted once when
    /// SACKed (the tracker's delivery accounting): what the receiver got, when it got it.
    /// A cumulative ACK that fills a hole jumps over bytes the receiver had long held, so
    /// `acked` over a loss episode is not a delivery rate.
    delivered: u64,
}

/// One run of signals: its first and last, and the direction's delivery at each.
#[derive(Clone, Copy, Debug)]
pub struct Run {
    pub first: Timestamp,
    pub last: Timestamp,
    delivered_before: u64,
    delivered_at_last: u64,
}

impl Delivery {
    /// A segment acknowledging this direction's data (the other direction's segments say
    /// nothing of its delivery). Whether it acknowledged new bytes: the segment that can
    /// end a run.
    pub fn on_ack(&mut self, ev: &SegmentEvent) -> bool {
        self.delivered += ev.acked.delivered as u64;
        if ev.acked.acked == 0 {
            return false;
        }
        self.acked += ev.acked.acked as u64;
        self.first_ack.get_or_insert(ev.ts);
        true
    }

    /// A run that starts with a signal at `ts`.
    pub fn start(&self, ts: Timestamp) -> Run {
        Run {
            first: ts,
            last: ts,
            delivered_before: self.delivered,
            delivered_at_last: self.delivered,
        }
    }

    /// `run` extended to a signal at `ts`.
    pub fn extend(&self, run: &mut Run, ts: Timestamp) {
        run.last = ts;
        run.delivered_at_last = self.delivered;
    }

    /// The open episode, taken out of `open` when the segment at `at` ends it: an ACK of new
    /// data (`acked`) a retransmission timer after the run's last signal. Nothing is copied
    /// on the way when there is no episode or no such ACK (nearly every segment).
    #[inline]
    pub fn ended<E>(open: &mut Option<E>, run: fn(&E) -> &Run, acked: bool, conn: &Connection, at: Timestamp) -> Option<E> {
        let e = open.as_ref().filter(|_| acked)?;
        if at - run(e).last <= threshold(conn) {
            return None;
        }
        open.take()
    }

    /// The delivery during `run` (what the ACKs between its first and last signal
    /// reported delivered) against the direction's over the connection, for the stall's
    /// sentence ("; 12 KiB delivered during it (1.2 Mbit/s), against ..."), and its rate in
    /// `s.delivered_bps`. A rate needs at least a round trip: over less, ACK timing is
    /// batching, not delivery (Linux's tcp_rate.c discards a sample whose interval is below
    /// the minimum RTT).
    pub fn during(&self, conn: &Connection, run: &Run, s: &mut Stall) -> String {
        let during = (run.last - run.first).secs_f64();
        let in_it = run.delivered_at_last.saturating_sub(run.delivered_before) as f64;
        let round = conn.rtt.min_end_to_end().map(|r| r.secs_f64());
        match self.first_ack {
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
        }
    }
}
