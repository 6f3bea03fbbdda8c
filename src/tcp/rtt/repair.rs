//! RTT samples of the loop through a data sender, from the ACK that moved the cumulative
//! point to a hole to the sender's re-sending of the hole: they need neither timestamps
//! nor the window scale, so they time that loop where a capture began mid-transfer on a
//! stack without timestamps (Windows' default, RFC 7323 being optional), when the window
//! edges cannot be read (`release.rs`) and no echo pairs anything (`ts_echo.rs`).
//!
//! A sender re-sends the segment at its SND.UNA for one of three reasons, and each starts
//! at the sender no earlier than the ACK that moved SND.UNA there:
//! - news from the receiver: duplicate ACKs (RFC 5681 §3.2), SACK blocks above the hole
//!   (RFC 6675 §5), a partial ACK in recovery (RFC 6582 §3.2 step 5), RACK's marking
//!   (RFC 8985 §6.2) — all ACKs standing at the hole, so that ACK or a later one;
//! - its retransmission timer, which an ACK of new data restarts (RFC 6298 §5.3), so it
//!   fires a whole timeout after that ACK arrived;
//! - a tail-loss probe, scheduled on an ACK's arrival (RFC 8985 §7.2) for two smoothed
//!   RTTs later.
//! So from that ACK passing the capture point to the re-sent segment passing it is the loop
//! capture -> sender -> capture plus whatever the sender waited (more duplicate ACKs, a
//! reordering window, a timer): never less than the loop, and close to it where the first
//! news made it act. Like the release samples it bounds the loop's minimum only.
//!
//! Not timed:
//! - a hole the capture never saw sent (a fill of a gap): beside the receiver, or behind a
//!   loss upstream, the first copy to pass is either the repair or the original overtaken
//!   on the way, and without timestamps the two look the same (`Direction::on_send`) — an
//!   overtaken original follows the duplicate ACKs by the path's displacement, not a loop;
//! - a hole whose bytes were re-sent already before the ACK reached it (SACK recovery
//!   repairs holes above SND.UNA): that repair answered older news;
//! - a re-sending of bytes the capture had seen acknowledged, after the ACK: the sender had
//!   not yet received that ACK (a timer's go-back-N from an older SND.UNA), so what it
//!   re-sends next may have been decided before the ACK too;
//! - anything after ACKs the capture missed (the ACK that moved the point may be one it did
//!   not see) or before the first ACK seen to move it (a capture that began mid-recovery).

use crate::seq::SeqNum;
use crate::time::{Span, Timestamp};

/// The cumulative point an ACK moved to, and whether a re-sending of it can be timed.
#[derive(Clone, Copy, Debug)]
struct Hole {
    at_seq: SeqNum,
    since: Timestamp,
    /// The capture saw the data at `at_seq` sent before: a re-sending of it is one.
    seen: bool,
    /// Spent: timed once already, or ruled out (see the module notes).
    spent: bool,
}

#[derive(Clone, Debug, Default)]
pub struct RepairSampler {
    hole: Option<Hole>,
    /// The end of the highest re-sent data so far: a hole below it may have been repaired
    /// before the ACK reached it.
    resent_high: Option<SeqNum>,
}

impl RepairSampler {
    /// An ACK seen `at` moved the cumulative point to `ack`; `seen` when the capture saw the
    /// segment starting there sent.
    pub fn on_advance(&mut self, ack: SeqNum, at: Timestamp, seen: bool) {
        let repaired_before = self.resent_high.is_some_and(|h| h.is_after(ack));
        if !repaired_before {
            // Every re-sent byte is acknowledged: forgotten before the numbers wrap.
            self.resent_high = None;
        }
        self.hole = Some(Hole {
            at_seq: ack,
            since: at,
            seen,
            spent: repaired_before || !seen,
        });
    }

    /// ACKs the capture missed, or a reset: nothing pending can be paired.
    pub fn forget(&mut self) {
        self.hole = None;
    }

    /// Data `[start, end)` below the highest sequence seen was sent again at `at`. Returns
    /// the loop through its sender it shows, when it is the first re-sending of the hole
    /// at the cumulative point since an ACK moved the point there.
    pub fn on_resend(&mut self, start: SeqNum, end: SeqNum, at: Timestamp) -> Option<Span> {
        if self.resent_high.is_none_or(|h| end.is_after(h)) {
            self.resent_high = Some(end);
        }
        let hole = self.hole.as_mut()?;
        if hole.spent {
            return None;
        }
        if start.is_before(hole.at_seq) {
            // Bytes already acknowledged here: the sender has not received that ACK yet.
            hole.spent = true;
            return None;
        }
        if start != hole.at_seq {
            return None;
        }
        hole.spent = true;
        debug_assert!(hole.seen);
        let raw = at - hole.since;
        (raw.nanos() >= 0).then_some(raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: i64) -> Timestamp {
        Timestamp(ms * 1_000_000)
    }

    #[test]
    fn a_repair_is_timed_from_the_ack_that_reached_the_hole() {
        let mut r = RepairSampler::default();
        r.on_advance(SeqNum(1000), t(10), true);
        // duplicate ACKs do not move the anchor; the repair 30 ms after the ACK
        assert_eq!(
            r.on_resend(SeqNum(1000), SeqNum(2448), t(40)),
            Some(Span::from_millis(30))
        );
        // only the first re-sending
        assert_eq!(r.on_resend(SeqNum(1000), SeqNum(2448), t(90)), None);
        // a partial ACK to the next hole, and its repair at once (NewReno)
        r.on_advance(SeqNum(5000), t(100), true);
        assert_eq!(
            r.on_resend(SeqNum(5000), SeqNum(6448), t(131)),
            Some(Span::from_millis(31))
        );
    }

    #[test]
    fn a_hole_not_seen_or_repaired_before_its_ack_is_not_timed() {
        let mut r = RepairSampler::default();
        // never seen here: the fill may be the original, overtaken
        r.on_advance(SeqNum(1000), t(10), false);
        assert_eq!(r.on_resend(SeqNum(1000), SeqNum(2448), t(12)), None);
        // SACK recovery re-sent 8000.. before the cumulative ACK reached it
        assert_eq!(r.on_resend(SeqNum(8000), SeqNum(9448), t(20)), None);
        r.on_advance(SeqNum(8000), t(50), true);
        assert_eq!(r.on_resend(SeqNum(8000), SeqNum(9448), t(80)), None);
    }

    #[test]
    fn a_resending_of_acknowledged_bytes_spends_the_hole() {
        let mut r = RepairSampler::default();
        r.on_advance(SeqNum(5000), t(10), true);
        // a timer's go-back-N from an older SND.UNA: the sender had not got the ACK
        assert_eq!(r.on_resend(SeqNum(3552), SeqNum(5000), t(11)), None);
        assert_eq!(r.on_resend(SeqNum(5000), SeqNum(6448), t(12)), None);
        // missed ACKs: nothing pending
        r.on_advance(SeqNum(7000), t(20), true);
        r.forget();
        assert_eq!(r.on_resend(SeqNum(7000), SeqNum(8448), t(50)), None);
    }
}
