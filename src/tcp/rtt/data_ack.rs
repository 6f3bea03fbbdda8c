//! RTT samples from data and the ACK that covers it, with Karn's rule (RFC 6298 §3: no
//! sample from a range that was retransmitted, since the ACK cannot say which copy it
//! answers), applied as Linux applies it (`tcp_ack_update_rtt`: no sequence sample from an
//! ACK that acknowledges any retransmitted data — that ACK was triggered by the repair, not
//! by the segment it names, which waited in the receiver's out-of-order queue).
//!
//! A segment sent into a zero window (a persist probe, RFC 9293 §3.8.6.1) is not timed: the
//! receiver answers it at once but acknowledges it only when its application has read and
//! the window reopens, so the ACK that covers it times the stall, not the path.
//!
//! An ACK whose timestamp echo (RFC 7323 §4.3) is older than the TSval of every segment it
//! newly covers answers none of them: the receiver echoes the segment that advanced its left
//! edge, or with a delayed ACK the first of the two, so an older echo names a copy sent
//! before (a capture begun during a recovery sees the repair first, and the ACK of the
//! original copy a moment later: 1 ms on a 250 ms path). No sample from it. Only an echo
//! at most [`ECHO_REACH`] ticks older counts: that copy left within one retransmission
//! chain, and a value further back is no echo of this connection's segments (a rewritten
//! option: pymptcpanalyzer's echoes read 64-113 beside TSvals of 28.8 million).
//!
//! Every data segment is timed (as tcptrace does), not one per window: a capture point in
//! the middle of a path has no timer budget to respect, and more samples make a better
//! minimum. A delayed ACK (RFC 9293 §3.8.6.3, every second segment) covers two segments;
//! the sample is taken from the segment whose end the ACK names, the one that triggered it.

use crate::seq::SeqNum;
use crate::time::{Span, Timestamp};
use std::collections::VecDeque;

/// Outstanding segments are capped so one pathological flow cannot take unbounded memory;
/// beyond the cap new segments are simply not timed until ACKs drain the queue.
const MAX_TIMED: usize = 1 << 17;

/// How much older than a segment's TSval an echo can be and still name an earlier copy of it:
/// 2^20 ticks, 17.5 minutes at the fastest clock RFC 7323 §5.4 allows (1 ms a tick), longer
/// than Linux's whole retransmission chain (tcp_retries2 = 15: 924.6 s).
const ECHO_REACH: u32 = 1 << 20;

/// Whether an ACK that newly covers `covered` bytes (its largest segment `largest`), the
/// first of them seen `span` before the last, answered something other than the last: the
/// sample from the last would read `rtt`.
///
/// A receiver acknowledges at least every second full-sized segment as it comes (RFC 1122
/// §4.2.3.2, RFC 5681 §4.2), so an ACK that newly covers more than two held the ones before
/// them: out of order above a hole, whose fill — the first it covers — triggered it (RFC
/// 5681 §4.2: an ACK at once for a segment that fills a gap), or coalesced by the receiver's
/// host (GRO, a stretch ACK), or the capture missed the ACKs between. Coalesced segments
/// arrived together, so they were sent close together, within the loop; a fill sent more
/// than twice the loop before the last segment it covers is a hole the receiver held data
/// above for longer than a loop, data that could only have come from a copy the capture did
/// not see (census seed 3030: a go-back-N after a timeout in a capture begun mid-transfer, the
/// receiver holding 22 segments above a 72-byte hole; the ACK of the fill came 355 µs after
/// the last of them was sent, on a 10 ms path). That ACK does not time the last segment, and
/// gives no sample of the loop through the receiver where the capture saw the data sent
/// (Karn's rule: the copy it answers is not known). Beside the receiver the segments are
/// seen arriving, spread by the path, and its own prompt ACK is the loop: there the test
/// says nothing (`DataAckSampler::held_above_a_hole`).
fn held_above_a_hole(covered: u64, largest: u16, span: Option<Span>, rtt: Span) -> bool {
    covered > 2 * largest as u64 && span.is_some_and(|s| s.nanos() > 2 * rtt.nanos())
}

#[derive(Clone, Copy, Debug)]
struct Timed {
    end: SeqNum,
    /// Its length, back from `end` to where it started (an IP packet's payload fits in
    /// 16 bits; a longer run saturates): 16 bytes an entry, as without it.
    len: u16,
    sent: Timestamp,
    /// Some of it was sent again (Karn).
    retransmitted: bool,
    /// It gave its sample already (from the first SACK block), or must give none (a probe).
    sampled: bool,
    /// Its TSval, when it carried one (`has_tsval`).
    tsval: u32,
    has_tsval: bool,
}

impl Timed {
    fn start(&self) -> SeqNum {
        SeqNum(self.end.0.wrapping_sub(self.len as u32))
    }
}

#[derive(Clone, Debug, Default)]
pub struct DataAckSampler {
    timed: VecDeque<Timed>,
    /// The length of the segment the latest sample timed, and its end.
    sampled_len: u16,
    sampled_end: SeqNum,
    /// The latest sample's ACK may have answered a fill below the data it names
    /// ([`held_above_a_hole`]).
    held: bool,
}

impl DataAckSampler {
    /// A segment carrying new data ending at `end` was seen at `at`; `probe` when it was sent into
    /// a zero window (it is tracked, so that its ACK is recognised, but gives no sample).
    #[cfg(test)]
    pub fn on_new_data(&mut self, end: SeqNum, at: Timestamp, probe: bool) {
        let start = self.timed.back().map_or(end, |b| b.end);
        self.on_new_segment(start, end, at, probe, None);
    }

    /// A segment [start, end) carrying new data was seen at `at` (see `on_new_data`).
    pub fn on_new_segment(&mut self, start: SeqNum, end: SeqNum, at: Timestamp, probe: bool, tsval: Option<u32>) {
        if let Some(back) = self.timed.back() {
            if !end.is_after(back.end) {
                return;
            }
        }
        if self.timed.len() < MAX_TIMED {
            self.timed.push_back(Timed {
                len: u16::try_from(end.bytes_after(start)).unwrap_or(u16::MAX),
                end,
                sent: at,
                retransmitted: false,
                sampled: probe,
                tsval: tsval.unwrap_or(0),
                has_tsval: tsval.is_some(),
            });
        }
    }

    /// A retransmission of [seq, end) was seen: every timed segment overlapping it loses
    /// its sample (Karn).
    pub fn on_retransmission(&mut self, seq: SeqNum, end: SeqNum) {
        let first = self.timed.partition_point(|t| !t.end.is_after(seq));
        for t in self.timed.range_mut(first..) {
            // t covers (previous end, t.end]; stop once the segment starts at or after `end`.
            t.retransmitted = true;
            if !t.end.is_before(end) {
                break;
            }
        }
    }

    /// The receiver reported data up to `high` that the capture never saw sent: sent before
    /// the capture began (or missed by it). A sender sends new data from SND.NXT upward
    /// (RFC 9293 §3.3.1), so every segment timed below `high` had its first copy sent before
    /// that data, before the capture too: the copy seen is a re-sending, and an ACK may answer
    /// the first copy (Karn, RFC 6298 §3). None of them gives a sample. (Census seed 6767: the
    /// first segment a sender-side capture saw, its ACK 22 ms later with a SACK block of 13
    /// kB never seen sent, read a 22 ms loop on a 250 ms path.)
    pub fn on_unseen_data_reported(&mut self, high: SeqNum) {
        for t in self.timed.iter_mut() {
            if !t.start().is_before(high) {
                break;
            }
            t.retransmitted = true;
        }
    }

    /// An ACK at `at` carried a SACK block ending at `end` as its first block, which by
    /// RFC 2018 §4 holds the segment that triggered it. When `end` is the end of a timed
    /// segment, that segment has just arrived: a sample (as Linux takes SACK RTT samples,
    /// tcp_sacktag_one). Segments sent during loss recovery are acknowledged this way
    /// only, and they are often the ones that met the drained queue. The segment gives no
    /// second sample when the cumulative ACK passes it later.
    pub fn on_sack(&mut self, end: SeqNum, at: Timestamp) -> Option<Span> {
        self.held = false;
        let i = self.timed.partition_point(|t| t.end.is_before(end));
        let t = self.timed.get_mut(i).filter(|t| t.end == end)?;
        if t.retransmitted || t.sampled {
            return None;
        }
        t.sampled = true;
        let rtt = at - t.sent;
        (self.sampled_len, self.sampled_end) = (t.len, t.end);
        (rtt.nanos() >= 0).then_some(rtt)
    }

    /// A cumulative ACK arrived at `at`, with the timestamp it echoed (`echo`). Returns the
    /// RTT sample it yields, if any.
    pub fn on_ack(&mut self, ack: SeqNum, at: Timestamp, echo: Option<u32>) -> Option<Span> {
        self.held = false;
        let mut matched = None;
        let mut repaired = false;
        let mut first = true;
        let mut older_echo = false;
        // When the first segment it newly covers was seen, how many bytes it covers, and the
        // largest segment among them.
        let mut first_sent = None;
        let (mut covered, mut largest) = (0u64, 0u16);
        while let Some(front) = self.timed.front() {
            if front.end.is_after(ack) {
                break;
            }
            let t = self.timed.pop_front().expect("front exists");
            repaired |= t.retransmitted;
            // The first segment it covers has the least TSval of them (sent first).
            if std::mem::take(&mut first) {
                first_sent = Some(t.sent);
                if t.has_tsval {
                    older_echo = echo.is_some_and(|e| (1..=ECHO_REACH).contains(&t.tsval.wrapping_sub(e)));
                }
            }
            covered += t.len as u64;
            largest = largest.max(t.len);
            if t.end == ack {
                matched = Some(t);
            }
        }
        let t = matched?;
        if repaired || older_echo || t.sampled {
            return None;
        }
        let rtt = at - t.sent;
        self.held = held_above_a_hole(covered, largest, first_sent.map(|f| t.sent - f), rtt);
        (self.sampled_len, self.sampled_end) = (t.len, t.end);
        (rtt.nanos() >= 0).then_some(rtt)
    }

    /// Whether the latest sample's ACK newly covered segments the receiver may have held
    /// above a hole, whose fill it then answered ([`held_above_a_hole`]): no sample of a loop
    /// whose data the capture saw sent (the far loop); beside the receiver the data is seen
    /// arriving, and its fill passes as the repair it is (Karn's rule has it).
    pub fn held_above_a_hole(&self) -> bool {
        self.held
    }

    /// The data the latest sample timed, [start, end).
    pub fn sampled_range(&self) -> (SeqNum, SeqNum) {
        (self.sampled_end.sub(self.sampled_len as u32), self.sampled_end)
    }

    /// The length of the segment the latest sample timed (its serialisation is in the
    /// sample: `Loop::segment_gap`).
    pub fn sampled_len(&self) -> u32 {
        self.sampled_len as u32
    }

    /// When the segment holding byte `seq` was seen (its first copy), if it is still
    /// outstanding and was not sent again: where a survivor of drops passed, in the
    /// capture's own time of that data.
    pub fn sent_at(&self, seq: SeqNum) -> Option<Timestamp> {
        let i = self.timed.partition_point(|t| !t.end.is_after(seq));
        self.timed.get(i).filter(|t| !t.retransmitted).map(|t| t.sent)
    }

    /// Whether byte `seq` lies in an outstanding segment the capture saw sent (first copy or
    /// not): a re-sending of it is one, not the original overtaken on the way.
    pub fn saw(&self, seq: SeqNum) -> bool {
        let i = self.timed.partition_point(|t| !t.end.is_after(seq));
        self.timed.get(i).is_some_and(|t| !seq.is_before(t.start()))
    }

    /// The first outstanding segment the capture saw that starts at or after `from`, as
    /// (start, end).
    pub fn segment_from(&self, from: SeqNum) -> Option<(SeqNum, SeqNum)> {
        let i = self.timed.partition_point(|t| t.start().is_before(from));
        self.timed.get(i).map(|t| (t.start(), t.end))
    }

    /// The outstanding segment the capture saw start at `start`, as its end.
    pub fn segment_at(&self, start: SeqNum) -> Option<SeqNum> {
        self.segment_from(start).filter(|&(s, _)| s == start).map(|(_, e)| e)
    }

    pub fn outstanding(&self) -> usize {
        self.timed.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: i64) -> Timestamp {
        Timestamp(0) + Span::from_millis(ms)
    }

    #[test]
    fn an_entry_stays_twenty_four_bytes() {
        // One per segment outstanding (at most MAX_TIMED): the TSval made it 16 -> 24.
        assert_eq!(std::mem::size_of::<Timed>(), 24);
    }

    #[test]
    fn segments_are_found_by_where_they_start() {
        let mut s = DataAckSampler::default();
        s.on_new_segment(SeqNum(1), SeqNum(1001), t(0), false, None);
        // The capture missed [1001, 2001): the next segment seen starts above it.
        s.on_new_segment(SeqNum(2001), SeqNum(2161), t(1), false, None);
        s.on_new_segment(SeqNum(2161), SeqNum(3161), t(2), false, None);
        assert_eq!(s.segment_from(SeqNum(2)), Some((SeqNum(2001), SeqNum(2161))));
        assert_eq!(s.segment_from(SeqNum(2161)), Some((SeqNum(2161), SeqNum(3161))));
        assert_eq!(s.segment_from(SeqNum(2162)), None);
        assert_eq!(s.segment_at(SeqNum(1)), Some(SeqNum(1001)));
        assert_eq!(s.segment_at(SeqNum(1001)), None);
    }

    /// Census seed 3030 in small: 22 segments sent over 11 ms above a 72-byte fill sent just
    /// before them, the receiver holding data above it from copies the capture never saw;
    /// the ACK of the fill covers them all 355 µs after the last was sent. A stretch ACK of
    /// three segments sent together, or a delayed ACK of two sent apart, is no such thing.
    #[test]
    fn an_ack_of_many_segments_sent_long_before_the_last_may_answer_their_fill() {
        let us = |n: i64| Timestamp(0) + Span::from_micros(n);
        let mut s = DataAckSampler::default();
        s.on_new_segment(SeqNum(0), SeqNum(72), us(0), false, None);
        for i in 0..22u32 {
            let start = 72 + i * 536;
            s.on_new_segment(
                SeqNum(start),
                SeqNum(start + 536),
                us(160 + 508 * i as i64),
                false,
                None,
            );
        }
        let last_sent = 160 + 508 * 21;
        assert_eq!(
            s.on_ack(SeqNum(72 + 22 * 536), us(last_sent + 355), None),
            Some(Span::from_micros(355))
        );
        assert!(s.held_above_a_hole());
        // Three segments a microsecond apart, acknowledged at once 10 ms later.
        let base = 100_000;
        for i in 0..3u32 {
            let start = 20_000 + i * 1448;
            s.on_new_segment(SeqNum(start), SeqNum(start + 1448), us(base + i as i64), false, None);
        }
        assert!(s.on_ack(SeqNum(20_000 + 3 * 1448), us(base + 10_000), None).is_some());
        assert!(!s.held_above_a_hole());
        // Two segments 30 ms apart, acknowledged together 1 ms after the second.
        s.on_new_segment(SeqNum(30_000), SeqNum(31_448), us(200_000), false, None);
        s.on_new_segment(SeqNum(31_448), SeqNum(32_896), us(230_000), false, None);
        assert!(s.on_ack(SeqNum(32_896), us(231_000), None).is_some());
        assert!(!s.held_above_a_hole());
    }

    #[test]
    fn an_ack_for_a_segment_gives_its_rtt() {
        let mut s = DataAckSampler::default();
        s.on_new_data(SeqNum(1000), t(0), false);
        assert_eq!(s.on_ack(SeqNum(1000), t(30), None), Some(Span::from_millis(30)));
        assert_eq!(s.outstanding(), 0);
    }

    #[test]
    fn an_ack_echoing_an_older_copy_gives_no_sample() {
        // The capture begins during a recovery: [0,1000) is the repair of a copy sent 250 ms
        // before (TSval 341), and the ACK for it echoes that copy's TSval, 1 ms later.
        let mut s = DataAckSampler::default();
        s.on_new_segment(SeqNum(0), SeqNum(1000), t(0), false, Some(593));
        assert_eq!(s.on_ack(SeqNum(1000), t(1), Some(341)), None);
        // A delayed ACK echoes the first of the two segments it covers, and times the second.
        s.on_new_segment(SeqNum(1000), SeqNum(2000), t(10), false, Some(603));
        s.on_new_segment(SeqNum(2000), SeqNum(3000), t(11), false, Some(604));
        assert_eq!(s.on_ack(SeqNum(3000), t(261), Some(603)), Some(Span::from_millis(250)));
        // Serial order across the TSval wrap: u32::MAX - 5 is before 10.
        s.on_new_segment(SeqNum(3000), SeqNum(4000), t(300), false, Some(10));
        assert_eq!(s.on_ack(SeqNum(4000), t(301), Some(u32::MAX - 5)), None);
        s.on_new_segment(SeqNum(4000), SeqNum(5000), t(400), false, Some(u32::MAX - 5));
        assert_eq!(s.on_ack(SeqNum(5000), t(650), Some(10)), Some(Span::from_millis(250)));
        // An echo 28.8 million ticks back is a rewritten option, no copy of the segment.
        s.on_new_segment(SeqNum(5000), SeqNum(6000), t(700), false, Some(28_806_174));
        assert_eq!(s.on_ack(SeqNum(6000), t(950), Some(113)), Some(Span::from_millis(250)));
    }

    #[test]
    fn data_below_a_report_of_data_never_seen_sent_is_not_timed() {
        // A capture begun mid-transfer sees [0, 1400) sent, and 22 ms later its ACK with a
        // SACK block [2800, 15872) the capture never saw sent: that data went before the
        // capture, and [0, 1400)'s first copy before it.
        let mut s = DataAckSampler::default();
        s.on_new_segment(SeqNum(0), SeqNum(1400), t(0), false, None);
        s.on_unseen_data_reported(SeqNum(15872));
        assert_eq!(s.on_ack(SeqNum(1400), t(22), None), None);
        // Data sent after the report, above it, is new and timed.
        s.on_new_segment(SeqNum(15872), SeqNum(17272), t(23), false, None);
        s.on_unseen_data_reported(SeqNum(15872));
        assert_eq!(s.on_ack(SeqNum(17272), t(273), None), Some(Span::from_millis(250)));
    }

    #[test]
    fn a_delayed_ack_times_the_second_segment() {
        let mut s = DataAckSampler::default();
        s.on_new_data(SeqNum(1000), t(0), false);
        s.on_new_data(SeqNum(2000), t(5), false);
        assert_eq!(s.on_ack(SeqNum(2000), t(35), None), Some(Span::from_millis(30)));
    }

    #[test]
    fn the_first_sack_block_times_the_segment_that_triggered_it_once() {
        let mut s = DataAckSampler::default();
        for (i, ms) in [0, 1, 2, 3].into_iter().enumerate() {
            s.on_new_data(SeqNum(1000 * (i as u32 + 1)), t(ms), false);
        }
        // [1000, 2000) is lost; 3000 arrives: SACK 2000-3000.
        assert_eq!(s.on_sack(SeqNum(3000), t(32)), Some(Span::from_millis(30)));
        // The same block again (no new segment): no second sample.
        assert_eq!(s.on_sack(SeqNum(3000), t(33)), None);
        // A block end that is not a segment end says nothing.
        assert_eq!(s.on_sack(SeqNum(3500), t(34)), None);
        assert_eq!(s.on_sack(SeqNum(4000), t(33)), Some(Span::from_millis(30)));
        // The repair: the cumulative ACK passes the SACKed segments without more samples.
        s.on_retransmission(SeqNum(1000), SeqNum(2000));
        assert_eq!(s.on_ack(SeqNum(4000), t(70), None), None);
        assert_eq!(s.outstanding(), 0);
    }

    #[test]
    fn karn_no_sample_from_a_retransmitted_range() {
        let mut s = DataAckSampler::default();
        s.on_new_data(SeqNum(1000), t(0), false);
        s.on_new_data(SeqNum(2000), t(1), false);
        s.on_retransmission(SeqNum(0), SeqNum(1000));
        assert_eq!(s.on_ack(SeqNum(1000), t(300), None), None);
        // the next segment was not retransmitted and still gives a sample
        assert_eq!(s.on_ack(SeqNum(2000), t(301), None), Some(Span::from_millis(300)));
    }

    #[test]
    fn an_ack_that_covers_a_repair_gives_no_sample() {
        // [0,1000) lost and re-sent at 200 ms; [1000,2000) waited out of order at the
        // receiver. The ACK for 2000 is triggered by the repair's arrival: timing
        // [1000,2000) from 1 ms would count the recovery as path.
        let mut s = DataAckSampler::default();
        s.on_new_data(SeqNum(1000), t(0), false);
        s.on_new_data(SeqNum(2000), t(1), false);
        s.on_retransmission(SeqNum(0), SeqNum(1000));
        assert_eq!(s.on_ack(SeqNum(2000), t(230), None), None);
    }

    #[test]
    fn a_probe_into_a_zero_window_gives_no_sample() {
        let mut s = DataAckSampler::default();
        s.on_new_data(SeqNum(1000), t(0), false);
        s.on_new_data(SeqNum(1001), t(500), true);
        assert_eq!(s.on_ack(SeqNum(1000), t(30), None), Some(Span::from_millis(30)));
        // the reader drains 20 s later and the probe byte is acknowledged
        assert_eq!(s.on_ack(SeqNum(1001), t(20_500), None), None);
    }

    #[test]
    fn partial_acks_give_no_sample() {
        let mut s = DataAckSampler::default();
        s.on_new_data(SeqNum(1000), t(0), false);
        assert_eq!(s.on_ack(SeqNum(500), t(30), None), None);
        assert_eq!(s.outstanding(), 1);
    }

    #[test]
    fn works_across_sequence_wraparound() {
        let mut s = DataAckSampler::default();
        let base = SeqNum(u32::MAX - 500);
        s.on_new_data(base.add(1000), t(0), false);
        assert_eq!(s.on_ack(base.add(1000), t(10), None), Some(Span::from_millis(10)));
    }

    #[test]
    fn retransmission_marks_only_overlapping_segments() {
        let mut s = DataAckSampler::default();
        for i in 1..=5u32 {
            s.on_new_data(SeqNum(i * 1000), t(i as i64), false);
        }
        s.on_retransmission(SeqNum(2000), SeqNum(3000)); // the third segment
        assert_eq!(s.on_ack(SeqNum(2000), t(50), None), Some(Span::from_millis(48)));
        assert_eq!(s.on_ack(SeqNum(3000), t(51), None), None);
        assert_eq!(s.on_ack(SeqNum(4000), t(52), None), Some(Span::from_millis(48)));
    }
}
