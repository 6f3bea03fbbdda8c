//! RTT samples of the loop through a data sender, from the ACK that moved the cumulative
//! point to a hole to the sender's re-sending of the hole: they need neither timestamps
//! nor the window scale, so they time that loop where a capture began mid-transfer on a
//! stack without timestamps (Windows' default, RFC 7323 being optional), when the window
//! edges cannot be read (`release.rs`) and no echo pairs anything (`ts_echo.rs`).
//!
//! A sender re-sends the segment at its SND.UNA for one of three reasons, and each starts
//! at the sender no earlier than the ACK that moved SND.UNA there, or, with SACK, than the
//! first ACK that showed the segment missing below data reported above it (RFC 6675 §5
//! repairs holes above SND.UNA: in a burst of losses the next hole's repair follows the
//! first's at once, before the ACK that moves the cumulative point to it, so the time is
//! taken from the first report of the losses, or not at all where that report was before
//! the capture):
//! - news from the receiver: duplicate ACKs (RFC 5681 §3.2), SACK blocks above the hole
//!   (RFC 6675 §5), a partial ACK in recovery (RFC 6582 §3.2 step 5), RACK's marking
//!   (RFC 8985 §6.2) — all ACKs standing at the hole, so that ACK or a later one;
//! - its retransmission timer, which an ACK of new data restarts (RFC 6298 §5.3), so it
//!   fires a whole timeout after that ACK arrived;
//! - a tail-loss probe, scheduled on an ACK's arrival (RFC 8985 §7.2) for two smoothed
//!   RTTs later.
//! RACK (RFC 8985 §6.2) orders losses by time, not sequence: a segment is lost once one sent
//! after it is delivered, and a repair sent after it is such a segment. So where re-sent
//! data was in flight, its ACK below the hole may have shown the hole lost before any ACK
//! reached it (P42 outage at the client: the ACKs of the repairs after an outage had the
//! sender re-send the next hole 25 ms after the cumulative ACK reached it, on a 48 ms
//! path). And after a retransmission timeout a sender re-sends everything outstanding from
//! SND.UNA on as its window allows (RFC 6298 §5, RFC 5681 §3.1: go-back-N in slow start,
//! with or without SACK), each ACK releasing several segments beyond the point it names
//! (the simulator's 4 Mbit/s path after an outage: a repair 3 ms, one segment's
//! serialisation, after the ACK that reached it, on a 10 ms path). So a hole is timed only
//! where nothing was re-sent since the receiver last reported nothing missing with every
//! re-sent byte acknowledged: the first hole of a recovery, before any repair.
//!
//! So from that ACK passing the capture point to the re-sent segment passing it is the loop
//! capture -> sender -> capture plus whatever the sender waited (more duplicate ACKs, a
//! reordering window, a timer): never less than the loop, and close to it where the first
//! news made it act. Like the release samples it bounds the loop's minimum only.
//!
//! A hole the capture never saw sent (a fill of a gap: beside the receiver, or behind a
//! loss upstream) passes first as the repair or as the original overtaken on the way; an
//! overtaken original follows the duplicate ACKs by the path's displacement, not a loop, and
//! without timestamps the two look alike (`Direction::on_send`). Where the sender numbers
//! its datagrams by a counter (RFC 6864 §4.1: Linux per socket, Windows per host; others
//! draw them at random or write 0) the IPv4 ID tells them apart: the original was sent
//! before the data beyond the hole, the repair after all the data that passed before it (a
//! path that keeps order). So a fill is timed when the sender's new data has shown its IDs
//! counting and the fill's ID is after the last new data's.
//!
//! Not timed:
//! - a fill not shown to be a re-sending so;
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

/// Successive new data whose IPv4 IDs were each after the last before the sender is taken
/// for one that counts them, and the share of exceptions allowed (a path that reorders
/// shows a few; IDs drawn at random show half).
const COUNTED_STEPS: u32 = 16;
const EXCEPTION_SHARE: u32 = 16;

/// Whether one 16-bit ID is after another in a counter's order (RFC 1982's serial number
/// arithmetic, as TCP's sequence numbers).
fn id_after(a: u16, b: u16) -> bool {
    (a.wrapping_sub(b) as i16) > 0
}

/// Whether the receiver reported data above its cumulative point, and since when.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Reports {
    /// Not known: no ACK seen yet, or ACKs missed.
    #[default]
    Unknown,
    /// The latest ACK reported nothing above its cumulative point.
    Clear,
    /// Data above the cumulative point reported since this ACK (SACK blocks or duplicate
    /// ACKs), with every ACK since reporting some.
    Since(Timestamp),
}

#[derive(Clone, Debug, Default)]
pub struct RepairSampler {
    hole: Option<Hole>,
    reports: Reports,
    /// Data was re-sent since the receiver last reported nothing missing with every re-sent
    /// byte acknowledged (a recovery may be under way, whose repairs' ACKs can show later
    /// holes lost by RACK's time order).
    resent_since_quiet: bool,
    /// The receiver sends SACK blocks (or options the snaplen cut, which may hold them).
    sack: bool,
    /// The end of the highest re-sent data so far: a hole below it may have been repaired
    /// before the ACK reached it.
    resent_high: Option<SeqNum>,
    /// The IPv4 ID of the latest new data, and how many steps between new data went
    /// forward in ID and how many did not.
    last_id: Option<u16>,
    forward: u32,
    other: u32,
}

impl RepairSampler {
    /// An ACK seen `at`: `advanced` when it moved the cumulative point, to where, and whether
    /// the capture saw the segment starting there sent; `above` when it reported data above
    /// its cumulative point (a SACK block there, or a duplicate ACK); `sack` when it carried
    /// SACK blocks or options the snaplen cut.
    pub fn on_ack(&mut self, at: Timestamp, advanced: Option<(SeqNum, bool)>, above: bool, sack: bool) {
        self.sack |= sack;
        let before = self.reports;
        self.reports = match (above, before) {
            (false, _) => Reports::Clear,
            (true, Reports::Clear) => Reports::Since(at),
            (true, r) => r,
        };
        let Some((ack, seen)) = advanced else { return };
        let repaired_before = self.resent_high.is_some_and(|h| h.is_after(ack));
        let in_recovery = std::mem::replace(&mut self.resent_since_quiet, false);
        if !repaired_before {
            // Every re-sent byte is acknowledged: forgotten before the numbers wrap.
            self.resent_high = None;
        }
        // Quiet again only where nothing is reported missing and nothing re-sent is out.
        self.resent_since_quiet = in_recovery && (above || repaired_before);
        // With SACK, data reported above the new point may have shown this hole earlier.
        let since = match (self.sack && above, before) {
            (false, _) | (true, Reports::Clear) => Some(at),
            (true, Reports::Since(t)) => Some(t),
            (true, Reports::Unknown) => None,
        };
        self.hole = Some(Hole {
            at_seq: ack,
            since: since.unwrap_or(at),
            seen,
            spent: repaired_before || since.is_none() || in_recovery,
        });
    }

    /// New data went by with the IPv4 ID `id` (None where the IDs name nothing).
    pub fn on_new_data(&mut self, id: Option<u16>) {
        match (self.last_id, id) {
            (Some(last), Some(id)) if id_after(id, last) => self.forward += 1,
            (Some(_), _) => self.other += 1,
            _ => {}
        }
        self.last_id = id;
    }

    /// Whether the sender's new data showed its IDs counting.
    fn ids_count(&self) -> bool {
        self.forward >= COUNTED_STEPS && self.other * EXCEPTION_SHARE <= self.forward
    }

    /// Whether the IPv4 ID `id` says its segment was sent after the sender's latest new data
    /// (see the module notes): a re-sending, where the sender counts its IDs.
    fn resent_by_id(&self, id: Option<u16>) -> bool {
        self.ids_count() && matches!((id, self.last_id), (Some(id), Some(last)) if id_after(id, last))
    }

    /// Data `[start, end)` filled a gap and was read as its original overtaken on the way
    /// (`Direction::on_send`: without timestamps the two look alike). Where the IDs say it
    /// was sent after the latest new data it is a re-sending all the same, and the sender's
    /// recovery began with it: taken as [`Self::on_resend`] takes it. Otherwise nothing. (A
    /// sender re-sending two holes back to back on one partial ACK, RFC 6582 §3.2 step 5
    /// or RFC 6675 §5's next holes: the first read as an original, the second as a repair
    /// timed from the ACK that reached it; the simulator's Windows sender behind a policer,
    /// 86 µs on a 300 µs path, census seed 8383.)
    pub fn on_fill(&mut self, start: SeqNum, end: SeqNum, at: Timestamp, id: Option<u16>) -> Option<Span> {
        if self.resent_by_id(id) {
            self.on_resend(start, end, at, id)
        } else {
            None
        }
    }

    /// ACKs the capture missed, or a reset: nothing pending can be paired.
    pub fn forget(&mut self) {
        self.hole = None;
        self.reports = Reports::Unknown;
    }

    /// Data `[start, end)` below the highest sequence seen was sent again at `at`. Returns
    /// the loop through its sender it shows, when it is the first re-sending of the hole
    /// at the cumulative point since an ACK moved the point there.
    /// `id` is the segment's IPv4 ID (for a fill, see the module notes).
    pub fn on_resend(&mut self, start: SeqNum, end: SeqNum, at: Timestamp, id: Option<u16>) -> Option<Span> {
        if self.resent_high.is_none_or(|h| end.is_after(h)) {
            self.resent_high = Some(end);
        }
        self.resent_since_quiet = true;
        let counted = self.resent_by_id(id);
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
        if !hole.seen && !counted {
            return None;
        }
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
        r.on_ack(t(10), Some((SeqNum(1000), true)), false, false);
        // duplicate ACKs do not move the anchor; the repair 30 ms after the ACK
        assert_eq!(
            r.on_resend(SeqNum(1000), SeqNum(2448), t(40), None),
            Some(Span::from_millis(30))
        );
        // only the first re-sending
        assert_eq!(r.on_resend(SeqNum(1000), SeqNum(2448), t(90), None), None);
        // a partial ACK to the next hole, and its repair: a NewReno sender's answer to it,
        // or a go-back-N after a timeout that re-sent it with the first hole's repair
        r.on_ack(t(100), Some((SeqNum(5000), true)), false, false);
        assert_eq!(r.on_resend(SeqNum(5000), SeqNum(6448), t(131), None), None);
        // the recovery over (everything re-sent acknowledged, nothing reported missing), the
        // first hole of the next is timed again
        r.on_ack(t(140), Some((SeqNum(9000), true)), false, false);
        r.on_ack(t(150), Some((SeqNum(12000), true)), false, false);
        assert_eq!(
            r.on_resend(SeqNum(12000), SeqNum(13448), t(182), None),
            Some(Span::from_millis(32))
        );
    }

    #[test]
    fn a_hole_not_seen_or_repaired_before_its_ack_is_not_timed() {
        let mut r = RepairSampler::default();
        // never seen here: the fill may be the original, overtaken
        r.on_ack(t(10), Some((SeqNum(1000), false)), false, false);
        assert_eq!(r.on_resend(SeqNum(1000), SeqNum(2448), t(12), None), None);
        // SACK recovery re-sent 8000.. before the cumulative ACK reached it
        assert_eq!(r.on_resend(SeqNum(8000), SeqNum(9448), t(20), None), None);
        r.on_ack(t(50), Some((SeqNum(8000), true)), false, false);
        assert_eq!(r.on_resend(SeqNum(8000), SeqNum(9448), t(80), None), None);
    }

    /// Beside the receiver: a fill whose ID is after the last new data's is the repair; one
    /// before it, the original overtaken; and IDs that do not count prove nothing.
    #[test]
    fn a_fill_is_timed_only_where_a_counting_sender_shows_it_a_repair() {
        let counting = |first: u16| {
            let mut r = RepairSampler::default();
            for i in 0..40u16 {
                r.on_new_data(Some(first.wrapping_add(i)));
            }
            r
        };
        // the counter wraps on the way: 65530 + 39 = 33
        let mut r = counting(65530);
        r.on_ack(t(10), Some((SeqNum(1000), false)), false, false);
        assert_eq!(
            r.on_resend(SeqNum(1000), SeqNum(2448), t(41), Some(40)),
            Some(Span::from_millis(31))
        );
        let mut r = counting(100);
        r.on_ack(t(10), Some((SeqNum(1000), false)), false, false);
        assert_eq!(
            r.on_resend(SeqNum(1000), SeqNum(2448), t(12), Some(120)),
            None,
            "overtaken"
        );
        assert_eq!(r.on_resend(SeqNum(1000), SeqNum(2448), t(41), Some(150)), None, "spent");
        let mut r = RepairSampler::default();
        for i in 0..40u32 {
            r.on_new_data(Some((i.wrapping_mul(40503) % 65536) as u16));
        }
        r.on_ack(t(10), Some((SeqNum(1000), false)), false, false);
        assert_eq!(
            r.on_resend(SeqNum(1000), SeqNum(2448), t(41), Some(60000)),
            None,
            "random IDs"
        );
    }

    /// Beside the receiver, two holes re-sent back to back on one partial ACK (census seed
    /// 8383): the first fill was read as its original overtaken, but its ID follows the
    /// last new data's, so the recovery began with it and the second hole's fill, 86 µs
    /// after the first report of that hole on a 300 µs path, is not timed. A fill whose ID
    /// is before the last new data's is an original, and leaves the next hole timed.
    #[test]
    fn a_fill_the_ids_show_re_sent_starts_the_recovery_though_read_as_an_original() {
        let counting = || {
            let mut r = RepairSampler::default();
            for i in 0..40u16 {
                r.on_new_data(Some(i));
            }
            r.on_ack(t(0), Some((SeqNum(500), true)), false, true);
            r
        };
        let us = |n: i64| Timestamp(n * 1_000);
        let mut r = counting();
        r.on_ack(us(100), Some((SeqNum(1000), false)), false, true);
        assert_eq!(
            r.on_fill(SeqNum(1000), SeqNum(1536), us(534), Some(41)),
            Some(Span::from_micros(434))
        );
        r.on_ack(us(600), None, true, true);
        r.on_ack(us(650), Some((SeqNum(1536), false)), true, true);
        assert_eq!(r.on_resend(SeqNum(1536), SeqNum(2072), us(686), Some(42)), None);
        // The same with the first fill an original overtaken (its ID before the last new
        // data's): no recovery yet, and the second hole is timed from its first report.
        let mut r = counting();
        r.on_ack(us(100), Some((SeqNum(1000), false)), false, true);
        assert_eq!(r.on_fill(SeqNum(1000), SeqNum(1536), us(534), Some(20)), None);
        r.on_ack(us(600), None, true, true);
        r.on_ack(us(650), Some((SeqNum(1536), false)), true, true);
        assert_eq!(
            r.on_resend(SeqNum(1536), SeqNum(2072), us(986), Some(42)),
            Some(Span::from_micros(386))
        );
    }

    /// With SACK the next hole of a burst is repaired on the first report of the burst,
    /// before the cumulative ACK reaches it: timed from that report (R42 late_capture at
    /// the client read 214 µs on a 30 ms path from the cumulative ACK); not at all when the
    /// report came before the capture.
    #[test]
    fn with_sack_a_later_hole_is_timed_from_the_first_report_of_the_losses() {
        let mut r = RepairSampler::default();
        r.on_ack(t(0), Some((SeqNum(1000), true)), false, false);
        r.on_ack(t(1), None, true, true);
        r.on_ack(t(2), None, true, true);
        assert_eq!(
            r.on_resend(SeqNum(1000), SeqNum(2000), t(31), None),
            Some(Span::from_millis(31))
        );
        // the partial ACK to the next hole still reports data above it; a repair was out
        r.on_ack(t(61), Some((SeqNum(5000), true)), true, true);
        assert_eq!(r.on_resend(SeqNum(5000), SeqNum(6000), t(62), None), None);
        // a capture that began in the middle of such a recovery
        let mut r = RepairSampler::default();
        r.on_ack(t(0), None, true, true);
        r.on_ack(t(1), Some((SeqNum(5000), true)), true, true);
        assert_eq!(r.on_resend(SeqNum(5000), SeqNum(6000), t(2), None), None);
    }

    /// P42 outage at the client: the repairs of a hole after an outage, acknowledged by
    /// cumulative ACKs, showed the sender (RACK: a segment sent after it was delivered) the
    /// next hole lost before the ACK that reached it, which reported nothing above it.
    #[test]
    fn a_hole_reached_while_repairs_were_out_is_not_timed() {
        let mut r = RepairSampler::default();
        r.on_ack(t(0), Some((SeqNum(1000), true)), false, false);
        r.on_ack(t(1), None, true, true);
        assert!(r.on_resend(SeqNum(1000), SeqNum(2000), t(50), None).is_some());
        r.on_resend(SeqNum(2000), SeqNum(3000), t(51), None);
        r.on_ack(t(99), Some((SeqNum(2000), true)), true, true);
        r.on_ack(t(100), Some((SeqNum(9000), true)), false, false);
        assert_eq!(r.on_resend(SeqNum(9000), SeqNum(10000), t(125), None), None);
    }

    #[test]
    fn a_resending_of_acknowledged_bytes_spends_the_hole() {
        let mut r = RepairSampler::default();
        r.on_ack(t(10), Some((SeqNum(5000), true)), false, false);
        // a timer's go-back-N from an older SND.UNA: the sender had not got the ACK
        assert_eq!(r.on_resend(SeqNum(3552), SeqNum(5000), t(11), None), None);
        assert_eq!(r.on_resend(SeqNum(5000), SeqNum(6448), t(12), None), None);
        // missed ACKs: nothing pending
        r.on_ack(t(20), Some((SeqNum(7000), true)), false, false);
        r.forget();
        assert_eq!(r.on_resend(SeqNum(7000), SeqNum(8448), t(50), None), None);
    }
}
