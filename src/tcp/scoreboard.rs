//! The SACK scoreboard of one direction (RFC 6675 §2-§4): which bytes above the cumulative
//! ACK the receiver reported as received, which are therefore presumed lost, and the
//! resulting "pipe" — the sender's own estimate of bytes in flight during recovery, which
//! the naive highest-sent minus highest-ACKed overstates (Wireshark issue 6683).

use super::ranges::RangeSet;
use crate::seq::SeqNum;

/// RFC 6675 §2 DupThresh.
const DUP_THRESH: u32 = 3;
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    /// SACKed ranges, all above the cumulative ACK.
    sacked: RangeSet,
    /// Retransmitted ranges not yet cumulatively ACKed.
    retransmitted: RangeSet,
}

impl Scoreboard {
    /// The cumulative ACK moved to `una`.
    pub fn on_cumulative_ack(&mut self, una: SeqNum) {
        self.sacked.clip_below(una);
        self.retransmitted.clip_below(una);
    }

    /// A SACK block [l, r) arrived. Blocks at or below the cumulative ACK are D-SACKs
    /// (RFC 2883) and say nothing about what is outstanding.
    pub fn on_sack(&mut self, l: SeqNum, r: SeqNum, una: SeqNum) {
        if !r.is_after(una) {
            return;
        }
        let l = if l.is_before(una) { una } else { l };
        self.sacked.insert(l, r);
    }

    /// Bytes of [from, to) that were holes below the highest SACKed byte (not SACKed, never
    /// re-sent): when the cumulative ACK moves over them, they reached the receiver late,
    /// after data sent after them, without a retransmission — the path reordered them
    /// (Linux marks reordering the same way: `tcp_clean_rtx_queue` takes a segment
    /// cumulatively acknowledged, neither SACKed nor re-sent, below the highest SACKed one
    /// as reordered, `tcp_check_sack_reordering`). Called before the ACK clips the board.
    pub fn late_fill_bytes(&self, from: SeqNum, to: SeqNum) -> u64 {
        let Some(high) = self.high_sacked() else { return 0 };
        let limit = if high.is_before(to) { high } else { to };
        if !limit.is_after(from) {
            return 0;
        }
        // The covered parts of [from, limit): both sets are sorted, so a merge walk visits
        // their ranges in order of their left edges (no allocation: this runs per ACK).
        let clip = |(l, r): (SeqNum, SeqNum)| {
            (
                if l.is_before(from) { from } else { l },
                if r.is_after(limit) { limit } else { r },
            )
        };
        let within = |&(l, r): &(SeqNum, SeqNum)| r.is_after(from) && l.is_before(limit);
        let mut a = self.sacked.iter().filter(within).map(clip).peekable();
        let mut b = self.retransmitted.iter().filter(within).map(clip).peekable();
        let mut holes = limit.bytes_after(from) as u64;
        let mut reach = from;
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if !y.0.is_before(x.0) => a.next(),
                (Some(_), Some(_)) => b.next(),
                (Some(_), None) => a.next(),
                (None, _) => b.next(),
            };
            let Some((l, r)) = next else { break };
            let l = if l.is_before(reach) { reach } else { l };
            if r.is_after(l) {
                holes -= r.bytes_after(l) as u64;
                reach = r;
            }
        }
        holes
    }

    pub fn on_retransmit(&mut self, l: SeqNum, r: SeqNum) {
        self.retransmitted.insert(l, r);
    }

    pub fn sacked_bytes(&self) -> u64 {
        self.sacked.total()
    }

    /// The SACKed ranges.
    pub fn sacked(&self) -> &RangeSet {
        &self.sacked
    }

    pub fn has_sacks(&self) -> bool {
        !self.sacked.is_empty()
    }

    /// Highest SACKed sequence (RFC 6675 HighSACK's right edge).
    pub fn high_sacked(&self) -> Option<SeqNum> {
        self.sacked.last().map(|(_, r)| r)
    }

    /// RFC 6675 §4 IsLost: an un-SACKed byte is lost when more than (DupThresh - 1) * SMSS
    /// bytes above it were SACKed. Returns the point below which holes count as lost.
    fn loss_point(&self, mss: u32) -> Option<SeqNum> {
        let need = ((DUP_THRESH - 1) * mss) as u64 + 1;
        let mut above = 0u64;
        for (l, r) in self.sacked.iter().rev() {
            let len = r.bytes_after(l) as u64;
            if above + len >= need {
                return Some(r.sub((need - above) as u32));
            }
            above += len;
        }
        None
    }

    /// Bytes in [una, loss point) that were not SACKed: presumed lost.
    pub fn lost_bytes(&self, una: SeqNum, mss: u32) -> u64 {
        let Some(p) = self.loss_point(mss) else {
            return 0;
        };
        let span = p.bytes_after(una) as u64;
        let sacked_below: u64 = self
            .sacked
            .iter()
            .map(|(l, r)| {
                let r = if r.is_after(p) { p } else { r };
                r.bytes_after(l) as u64
            })
            .sum();
        span.saturating_sub(sacked_below)
    }

    /// RFC 6675 §4 SetPipe: outstanding bytes that are neither SACKed nor presumed lost,
    /// plus retransmissions of lost bytes that are themselves still outstanding.
    pub fn pipe(&self, una: SeqNum, nxt: SeqNum, mss: u32) -> u64 {
        let flight = nxt.bytes_after(una) as u64;
        let lost = self.lost_bytes(una, mss);
        let retrans = self.retransmitted.total().min(lost);
        flight.saturating_sub(self.sacked_bytes()).saturating_sub(lost) + retrans
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sack_blocks_merge() {
        let mut s = Scoreboard::default();
        let una = SeqNum(0);
        s.on_sack(SeqNum(2000), SeqNum(3000), una);
        s.on_sack(SeqNum(4000), SeqNum(5000), una);
        s.on_sack(SeqNum(3000), SeqNum(4000), una);
        assert_eq!(s.sacked.iter().collect::<Vec<_>>(), vec![(SeqNum(2000), SeqNum(5000))]);
        assert_eq!(s.sacked_bytes(), 3000);
    }

    /// Holes below the highest SACK block that the cumulative ACK passes with no repair
    /// arrived late: reordered. Re-sent or SACKed bytes are not, nor anything above the
    /// highest block (no later data had been reported past it), and sequence numbers wrap.
    #[test]
    fn holes_passed_without_a_repair_were_reordered() {
        for base in [0u32, u32::MAX - 2500] {
            let at = |x: u32| SeqNum(base.wrapping_add(x));
            let mut s = Scoreboard::default();
            assert_eq!(s.late_fill_bytes(at(0), at(5000)), 0, "no SACK: nothing to tell");
            // Holes 0..1000 and 2000..3000 under blocks 1000..2000 and 3000..4000.
            s.on_sack(at(1000), at(2000), at(0));
            s.on_sack(at(3000), at(4000), at(0));
            assert_eq!(s.late_fill_bytes(at(0), at(5000)), 2000);
            // The second hole re-sent: only the first came late.
            s.on_retransmit(at(2000), at(3000));
            assert_eq!(s.late_fill_bytes(at(0), at(5000)), 1000);
            // An ACK that stops inside the first hole counts what it passed.
            assert_eq!(s.late_fill_bytes(at(0), at(400)), 400);
            assert_eq!(s.late_fill_bytes(at(4000), at(5000)), 0, "above the highest block");
        }
    }

    #[test]
    fn dsack_below_the_ack_is_ignored() {
        let mut s = Scoreboard::default();
        s.on_sack(SeqNum(0), SeqNum(1000), SeqNum(1000));
        assert!(!s.has_sacks());
    }

    #[test]
    fn pipe_excludes_sacked_and_lost_bytes() {
        // 10 segments of 1000 bytes outstanding; the first is lost, 2..10 SACKed.
        let mut s = Scoreboard::default();
        let una = SeqNum(0);
        s.on_sack(SeqNum(1000), SeqNum(10_000), una);
        assert_eq!(s.lost_bytes(una, 1000), 1000);
        assert_eq!(s.pipe(una, SeqNum(10_000), 1000), 0);
        // the retransmission of the hole is in the pipe until ACKed
        s.on_retransmit(SeqNum(0), SeqNum(1000));
        assert_eq!(s.pipe(una, SeqNum(10_000), 1000), 1000);
        s.on_cumulative_ack(SeqNum(10_000));
        assert_eq!(s.pipe(SeqNum(10_000), SeqNum(10_000), 1000), 0);
    }

    #[test]
    fn a_hole_is_not_lost_before_dupthresh_segments_are_sacked_above_it() {
        let mut s = Scoreboard::default();
        let una = SeqNum(0);
        s.on_sack(SeqNum(1000), SeqNum(3000), una);
        assert_eq!(s.lost_bytes(una, 1000), 0);
        assert_eq!(s.pipe(una, SeqNum(3000), 1000), 1000);
    }

    #[test]
    fn ranges_stay_bounded() {
        let mut s = Scoreboard::default();
        let cap = super::super::ranges::MAX_RANGES;
        for i in 0..(cap as u32 + 1000) {
            s.on_sack(SeqNum(i * 2000 + 1000), SeqNum(i * 2000 + 2000), SeqNum(0));
        }
        assert_eq!(s.sacked.len(), cap);
    }
}
