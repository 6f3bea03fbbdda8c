//! The delivery duplicate ACKs report where the connection has no SACK.
//!
//! Without SACK a receiver that gets a segment above a hole answers it at once with a
//! duplicate ACK (RFC 5681 §4.2), and each one means a segment left the network (§3.2):
//! Linux counts them as sacked_out for a Reno connection (tcp_add_reno_sack). The credit is
//! what those duplicate ACKs reported, held until the cumulative ACK passes the data they
//! stood for and repaid from what it newly reports; the recovery they open lasts until the
//! cumulative ACK reaches the highest byte sent when the first came (RFC 6582 `recover`).
//!
//! A duplicate ACK names no bytes, so the credit is the segment it answers as the capture
//! saw it: the receiver sends one for each segment it queues above the hole, in the order
//! they came, so the first answers the first segment seen after the one at the hole (near
//! the receiver the lost one was never seen, and the first survivor is that) and each
//! next one the segment after the last credited; where the capture saw no such segment,
//! one MSS. A window's 160-byte tail credited as a full MSS read 1440 B in the 468 µs
//! between two duplicate ACKs: an ACK dispersion of 24.5 Mbit/s on a 4 Mbit/s link.

use super::rtt::DataAckSampler;
use crate::seq::SeqNum;

#[derive(Clone, Debug, Default)]
pub struct RenoCredit {
    /// Bytes credited by duplicate ACKs, not yet covered by the cumulative ACK.
    credit: u64,
    /// The highest byte sent when the first duplicate ACK of a hole came: the recovery
    /// point. Once the cumulative ACK reaches it the sender leaves recovery and its count
    /// of duplicate ACKs is reset (Linux tcp_reset_reno_sack); the credit stays, for the
    /// delivery it repays.
    recover: Option<SeqNum>,
    /// The end of the segment the latest duplicate ACK was credited for.
    cursor: Option<SeqNum>,
    /// The latest retransmission seen, [start, end): the segment that fills the hole at
    /// its start.
    last_resent: Option<(SeqNum, SeqNum)>,
    /// The capture saw the cumulative ACK move.
    advanced: bool,
    /// The open recovery (or the one its last ACK ended) began before the capture saw the
    /// cumulative ACK move: its first duplicate ACKs may have gone by before the capture
    /// began, and the credit lacks them.
    blind: bool,
}

impl RenoCredit {
    /// A recovery is open: duplicate ACKs counted since a hole, the recovery point not yet
    /// acknowledged.
    pub fn in_recovery(&self) -> bool {
        self.recover.is_some()
    }

    /// What the open recovery's duplicate ACKs took out of the network (none outside one).
    pub fn out_of_network(&self) -> u64 {
        if self.in_recovery() {
            self.credit
        } else {
            0
        }
    }

    /// The sender had sent up to `end` before it learned of the open recovery: its
    /// recovery point (RFC 6582 `recover`, Linux `high_seq`: SND.NXT when it entered
    /// recovery) is no lower. Away from the sender the capture had seen less of what the
    /// sender had sent when the first duplicate ACK passed, by the data then on its way.
    pub fn extend_recover(&mut self, end: SeqNum) {
        if let Some(r) = self.recover {
            if end.is_after(r) {
                self.recover = Some(end);
            }
        }
    }

    /// A retransmission of [start, end) was seen.
    pub fn on_resend(&mut self, start: SeqNum, end: SeqNum) {
        self.last_resent = Some((start, end));
    }

    /// The cumulative ACK moved to `una`.
    pub fn on_cumulative_ack(&mut self, una: SeqNum) {
        self.advanced = true;
        if self.cursor.is_some_and(|c| !c.is_after(una)) {
            self.cursor = None;
        }
        if self.recover.is_some_and(|r| !una.is_before(r)) {
            self.recover = None;
        }
    }

    /// An ACK newly reported `delivered` bytes (cumulatively or in SACK blocks) after the
    /// cumulative ACK stood at `prev_una`: what of it the credit had already counted, which
    /// the caller takes off.
    ///
    /// The credit repays the segments above the hole that duplicate ACKs reported as they
    /// came; but an ACK that moves was itself sent for an arrival — the segment that filled
    /// the hole, or new data (RFC 5681 §4.2: an ACK answers a segment) — and that segment is
    /// delivered now: the one the capture saw fill the hole (a window's 160-byte tail lost
    /// and sent again delivers 160 bytes, not an MSS), up to one MSS. Repaid from the whole
    /// move, a NewReno recovery's partial ACKs (each one retransmission, one round trip
    /// apart) delivered nothing and the final ACK a round trip of arrivals at once: 1.40
    /// Mbit/s over windows of four round trips on a 1 Mbit/s link. The move is what this
    /// ACK newly reports, cumulatively or in SACK blocks: a SACK block naming segments that
    /// earlier duplicate ACKs already counted (their blocks cut by the snaplen, RFC 2018's
    /// first block the latest arrival) names the same arrivals, and a cumulative ACK over
    /// SACKed bytes moves only by what was not SACKed. Crediting both, an IPv6 capture with
    /// a 96-byte snaplen, where the third block no longer fits, read 12.7 kB delivered by
    /// one ACK on a 1 Mbit/s link (a shared path's 1.27 Mbit/s).
    ///
    /// A recovery the capture began inside (its ACKs stood at the hole from the first one
    /// seen) had duplicate ACKs before the capture, each a segment delivered then: what the
    /// move covers beyond the credit and the answered segment was delivered before, not in
    /// this ACK's time, and is repaid all the same. Counted now, the first repair of a
    /// capture begun 1.24 s into a transfer without SACK reported 17.5 kB in 242 µs: an
    /// ACK dispersion of 578 Mbit/s on a 100 Mbit/s link (census seed 5151).
    pub fn repay(&mut self, prev_una: Option<SeqNum>, delivered: u64, mss: u32, timed: &DataAckSampler) -> u64 {
        let answered = prev_una
            .and_then(|p| self.hole_filler(p, timed))
            .map_or(mss, |len| len.min(mss));
        let owed = delivered.saturating_sub(answered as u64);
        let used = if self.blind { owed } else { self.credit.min(owed) };
        self.credit -= self.credit.min(used);
        if !self.in_recovery() {
            self.blind = false;
        }
        used
    }

    /// A duplicate ACK without SACK with the cumulative ACK at `una` and `nxt` the highest
    /// byte sent: the bytes it reports delivered (see the module's note), never more than
    /// were outstanding less the hole itself. Linux bounds the count the same way
    /// (tcp_limit_reno_sacked: sacked_out at most packets_out - 1) and takes the excess for
    /// reordering; a capture that holds ACKs twice, or reordered, otherwise credits a full
    /// MSS for each (710 kB "delivered" by a FIX session that carried 9 kB, nDPI fix2).
    pub fn on_duplicate(&mut self, una: SeqNum, nxt: Option<SeqNum>, mss: u32, timed: &DataAckSampler) -> u64 {
        let outstanding = nxt.map_or(0, |n| n.bytes_after(una) as u64);
        let hole = self.hole_filler(una, timed).map_or(mss, |len| len.min(mss));
        let room = outstanding.saturating_sub(hole as u64).saturating_sub(self.credit);
        let credit = self.answered_segment(una, mss, timed).min(room);
        self.credit += credit;
        if self.recover.is_none() {
            self.recover = nxt;
            self.blind = !self.advanced;
        }
        credit
    }

    /// The length of the segment the duplicate ACK at `una` answers, or one MSS.
    fn answered_segment(&mut self, una: SeqNum, mss: u32, timed: &DataAckSampler) -> u64 {
        let from = self.cursor.unwrap_or(una.add(1));
        match timed.segment_from(from) {
            Some((start, end)) => {
                self.cursor = Some(end);
                end.bytes_after(start).min(mss) as u64
            }
            None => mss as u64,
        }
    }

    /// The length of the segment the capture saw fill a hole at `at`: the latest
    /// retransmission when it starts there, else the first copy seen there.
    fn hole_filler(&self, at: SeqNum, timed: &DataAckSampler) -> Option<u32> {
        let end = match self.last_resent {
            Some((s, e)) if s == at => Some(e),
            _ => timed.segment_at(at),
        };
        end.map(|e| e.bytes_after(at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Timestamp;

    /// Segments [1, 1001), [1001, 2001), [2001, 2161), [2161, 3161) sent, the first lost:
    /// three duplicate ACKs credit the three after it, each its own length; the cumulative
    /// ACK the repair brings repays all but the repaired segment, and ends the recovery.
    #[test]
    fn duplicates_credit_the_segments_they_answer_and_the_repair_repays_them() {
        let mut timed = DataAckSampler::default();
        for (start, end) in [(1, 1001), (1001, 2001), (2001, 2161), (2161, 3161)] {
            timed.on_new_segment(SeqNum(start), SeqNum(end), Timestamp(0), false, None);
        }
        let mut r = RenoCredit::default();
        let credited: Vec<u64> = (0..3)
            .map(|_| r.on_duplicate(SeqNum(1), Some(SeqNum(3161)), 1000, &timed))
            .collect();
        assert_eq!(credited, [1000, 160, 1000]);
        assert!(r.in_recovery());
        assert_eq!(r.out_of_network(), 2160);
        r.on_resend(SeqNum(1), SeqNum(1001));
        assert_eq!(r.repay(Some(SeqNum(1)), 3160, 1000, &timed), 2160);
        r.on_cumulative_ack(SeqNum(3161));
        assert!(!r.in_recovery());
        assert_eq!(r.out_of_network(), 0);
    }

    /// Away from the sender the first duplicate ACK passes before the data the sender had
    /// already sent: the recovery point moves up to what the sender had sent before it
    /// learned of the recovery, and the recovery lasts until that is acknowledged.
    #[test]
    fn the_recovery_point_is_what_the_sender_had_sent() {
        let timed = DataAckSampler::default();
        let mut r = RenoCredit::default();
        r.extend_recover(SeqNum(9001));
        assert!(!r.in_recovery(), "no recovery open, none made");
        r.on_duplicate(SeqNum(1), Some(SeqNum(4001)), 1000, &timed);
        r.extend_recover(SeqNum(3001));
        r.extend_recover(SeqNum(8001));
        r.on_cumulative_ack(SeqNum(4001));
        assert!(r.in_recovery(), "the sender's point is 8001");
        r.on_cumulative_ack(SeqNum(8001));
        assert!(!r.in_recovery());
    }

    /// A capture begun inside a recovery: its ACKs stand at the hole from the first seen,
    /// two duplicates credit two segments, and the repair's ACK covers five: the three
    /// beyond those and the answered one were delivered before the capture (their duplicate
    /// ACKs unseen), so only the repaired segment is delivered now. A recovery after the
    /// capture saw the ACK move counts its credit only.
    #[test]
    fn a_recovery_begun_before_the_capture_owes_what_it_never_credited() {
        let mut timed = DataAckSampler::default();
        for k in 0..6u32 {
            timed.on_new_segment(SeqNum(1 + 1000 * k), SeqNum(1001 + 1000 * k), Timestamp(0), false, None);
        }
        let mut r = RenoCredit::default();
        for _ in 0..2 {
            r.on_duplicate(SeqNum(1), Some(SeqNum(6001)), 1000, &timed);
        }
        r.on_resend(SeqNum(1), SeqNum(1001));
        r.on_cumulative_ack(SeqNum(6001));
        assert_eq!(
            r.repay(Some(SeqNum(1)), 6000, 1000, &timed),
            5000,
            "only the repair is delivered now"
        );
        // The next recovery began in sight: what its credit lacks was delivered now.
        r.on_duplicate(SeqNum(6001), Some(SeqNum(12001)), 1000, &timed);
        r.on_resend(SeqNum(6001), SeqNum(7001));
        r.on_cumulative_ack(SeqNum(12001));
        assert_eq!(r.repay(Some(SeqNum(6001)), 6000, 1000, &timed), 1000);
    }

    /// More duplicates than segments above the hole credit nothing more; with nothing the
    /// capture saw above it, each is an MSS.
    #[test]
    fn the_credit_never_passes_what_was_outstanding() {
        let timed = DataAckSampler::default();
        let mut r = RenoCredit::default();
        let total: u64 = (0..10)
            .map(|_| r.on_duplicate(SeqNum(1), Some(SeqNum(4001)), 1000, &timed))
            .sum();
        assert_eq!(total, 3000);
    }
}
