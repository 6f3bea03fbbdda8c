//! One direction of a connection, from the point of view of its data sender: what was
//! sent (highest sequence, retransmissions), what the peer acknowledged and the window
//! it granted. Everything is "as observed at the capture point".

use std::collections::VecDeque;

use super::ecn::EcnCounts;
use super::ranges::RangeSet;
use super::reno_credit::RenoCredit;
use super::rtt::{DataAckSampler, ReleaseSampler, RepairSampler, TsEchoSampler};
use super::scoreboard::Scoreboard;
use crate::decode::{SackBlocks, Segment};
use crate::seq::{SeqNum, SeqSpace};
use crate::time::{Span, Timestamp};

/// Gaps remembered per direction for telling a late first sending from a retransmission.
/// A fill counts only within a round trip of its gap's opening, so older gaps are dropped;
/// this caps the rest (a state budget): a path that reorders holds a gap open for every
/// segment it displaces while one displaced segment is on its way (P31 jitter_reorder:
/// frames delayed 0-2.5 ms at 0.3 ms apart, up to eight gaps open at once; four kept read
/// 54% of the data as retransmitted where the sender re-sent one segment), and Linux
/// itself tolerates a displacement of up to 300 segments (tcp_max_reordering).
const GAPS_KEPT: usize = 64;

/// A gap in the sequence the capture saw open: `[lo, hi)` missing when data beyond it
/// passed at `opened`, carrying the TSval `tsval`.
#[derive(Clone, Copy, Debug)]
struct Gap {
    lo: SeqNum,
    hi: SeqNum,
    opened: Timestamp,
    tsval: Option<u32>,
    /// The TSval of the data just below the gap (the segment that had set the highest
    /// sequence before it), when known.
    below: Option<u32>,
    /// When that data passed the capture point.
    below_at: Option<Timestamp>,
}

/// What a segment meant for the direction it was sent in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendOutcome {
    /// Payload bytes above the previous highest sequence (new data).
    pub new_bytes: u32,
    /// The segment re-sent bytes below the highest sequence already seen (RFC 9293 does not
    /// name it; tcptrace and tshark call it a retransmission; reordering before the
    /// capture point looks the same).
    pub retransmission: bool,
    /// The segment filled a gap the capture saw open less than a round trip before: its
    /// first sending, reordered before the capture point (see [`Direction::on_send`]).
    pub reordered: bool,
    /// A keep-alive: one byte (or none) just below the highest sequence (RFC 9293 §3.8.4).
    pub keep_alive: bool,
    /// A zero-window probe: data at the right edge of a zero window (RFC 9293 §3.8.6.1).
    pub zero_window_probe: bool,
    /// The segment filled the peer's window to its right edge (tshark's "window full").
    pub window_full: bool,
}

/// What an ACK meant for the direction whose data it acknowledges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckOutcome {
    /// Bytes newly acknowledged (the cumulative ACK moved by this much).
    pub acked: u32,
    /// A duplicate ACK (RFC 5681 §2): no data, same ACK, same window, data outstanding.
    pub duplicate: bool,
    /// Bytes this ACK newly reported as delivered, SACKed bytes included and counted once
    /// (BBR's delivery accounting): a cumulative jump over data SACKed earlier delivers
    /// only the bytes not reported before. Without SACK, a duplicate ACK stands for one
    /// segment that left the network (RFC 5681 §3.2), credited until the ACK moves past.
    pub delivered: u32,
    /// The capture's snaplen cut this ACK's options on a connection that may use SACK:
    /// blocks it carried were not read, so the bytes it SACKed are reported late, by the
    /// cumulative ACK that passes them (a loss episode's rate is not taken from such ACKs:
    /// `stall::episode`). Crediting such ACKs as duplicates (RFC 5681 §3.2) was tried: a
    /// receiver's window updates with data outstanding look the same, and it moved neither
    /// simulated case.
    pub options_cut: bool,
    /// A SACK block of this ACK reported bytes above a gap beyond everything reported
    /// before (the cumulative ACK and every block): the receiver got a segment whose
    /// predecessor did not arrive, so something dropped it (or reordered it) just before
    /// this survivor passed. The pace of such ACKs is the dropping element's
    /// (`diagnose::drop_pace`).
    pub new_hole: bool,
    /// With `new_hole`: when the capture saw the survivor's data (its arrival next to the
    /// receiver, its sending next to the sender): the pace of the drops in the data's own
    /// time, free of what the ACKs met on their way back.
    pub survivor_at: Option<Timestamp>,
    /// This ACK raised the highest byte the receiver had reported (cumulatively or in a
    /// SACK block).
    pub raised: bool,
    /// This ACK moved past everything the capture saw of this direction (tshark's "ACKed
    /// segment that wasn't captured"): the capture missed segments the peer received.
    pub beyond_seen: bool,
    /// The data this ACK's D-SACK reported received twice (RFC 2883 §4), [start, end).
    pub dsack: Option<(SeqNum, SeqNum)>,
}

#[derive(Clone, Debug, Default)]
pub struct Direction {
    /// Initial sequence number, when the SYN was seen.
    pub isn: Option<SeqNum>,
    /// Base of the relative numbers: the ISN, or one below the first number seen (the
    /// convention tshark uses for connections picked up mid-stream).
    pub base: Option<SeqNum>,
    space: Option<SeqSpace>,
    /// Highest sequence number sent plus its length (SND.MAX), SYN and FIN included.
    pub nxt: Option<SeqNum>,
    /// Highest cumulative ACK received from the peer (SND.UNA as seen here).
    pub una: Option<SeqNum>,
    /// The end of the highest segment the capture saw sent (SYN and FIN included): unlike
    /// `nxt`, never moved by an ACK of data the capture had not seen.
    seen_high: Option<SeqNum>,
    /// The peer's last advertised window for this direction, in bytes, when its scale is
    /// known, and the raw field.
    pub peer_window: Option<u64>,
    pub peer_window_raw: Option<u16>,
    /// The largest raw window field the peer advertised for this direction (SYNs excluded).
    pub peer_window_raw_max: u16,
    pub fin: bool,

    // Counters.
    pub segments: u64,
    pub data_segments: u64,
    /// Payload bytes first seen (retransmissions excluded).
    pub unique_bytes: u64,
    pub retransmitted_segments: u64,
    pub retransmitted_bytes: u64,
    /// Segments of this direction the peer reported receiving twice (D-SACK, RFC 2883 §4):
    /// a retransmission so reported was spurious — the original had arrived (RFC 3708) —
    /// and shows no loss.
    pub dsack_segments: u64,
    pub duplicate_acks: u64,
    pub zero_window_probes: u64,
    pub window_full_events: u64,
    pub max_flight: u64,
    /// Most of the outstanding data that was in the network (RFC 6675 SetPipe at the
    /// capture point: neither SACKed nor presumed lost, retransmissions counted). It is
    /// `max_flight` until a loss: then the data above a hole stays outstanding, held at the
    /// receiver, and only the pipe is what the path carried (Linux's packets_in_flight).
    pub max_in_network: u64,
    /// The most in the network since the receiver last reported progress: counted into
    /// `max_in_network` by the next ACK that does. Data sent after the receiver's last
    /// report (into a reset connection, a path that died) reached no one.
    pub pending_in_network: u64,
    pub max_segment: u32,
    pub first_data: Option<Timestamp>,
    /// The payload of the segments stamped at `first_data`: they passed the capture point
    /// at that instant, so the time from the first data to the last carried the rest (n
    /// stamps bound n - 1 intervals; a burst stamped at one instant is one stamp).
    pub first_data_len: u32,
    pub last_data: Option<Timestamp>,
    pub last_new_data: Option<Timestamp>,
    /// Bytes of this direction the peer's cumulative ACK moved over, and when the last two
    /// ACKs that moved it were seen here, each with the total it had reached: what was
    /// delivered, and by when (the goodput, `summarize::goodput`).
    pub acked_bytes: u64,
    /// The lowest byte of data the capture saw sent for the first time: below it the data
    /// was sent before the capture began (or the capture missed it).
    first_data_seq: Option<SeqNum>,
    /// The lowest byte of data the capture saw re-sent.
    lowest_resent_seq: Option<SeqNum>,
    /// Of `acked_bytes`, those at or above `first_data_seq`: data the capture saw sent, and
    /// so sent at or after `first_data`. A capture begun mid-transfer sees ACKs of the
    /// flight already out, sent before it began: counted over the time from its first data,
    /// they read a delivery above the link (census seed 3030: 1.06-1.08 Mbit/s on a 1
    /// Mbit/s link, captures from 0.56 s and 1.06 s).
    pub acked_seen_bytes: u64,
    /// The last two ACKs that moved, each with the bytes of `acked_seen_bytes` delivered
    /// after the first data passed: less those the receiver had reported holding (SACK)
    /// before it, which were delivered before the span the goodput is over (tcp_rate.c
    /// counts a rate sample's delivery from the count at its first segment's sending,
    /// `P.delivered`).
    pub new_acks: [Option<(Timestamp, u64)>; 2],
    /// The first ACK that moved over data delivered after the first data passed, with that
    /// count then: where the delivery's ACK-arrival interval starts (its bytes arrived
    /// before it).
    pub first_seen_ack: Option<(Timestamp, u64)>,
    /// What the receiver reported holding (SACK) when the first data segment passed.
    held_at_first_data: RangeSet,
    /// Of `acked_seen_bytes`, those in `held_at_first_data`.
    acked_held_bytes: u64,
    /// ECN: this direction's codepoints and CWR, and its receiver's ECE echoes.
    pub ecn: EcnCounts,

    pub sacks: Scoreboard,
    /// Data of this direction the capture point saw and the peer has not acknowledged.
    seen_unacked: RangeSet,
    /// `seen_unacked` is not kept (no one asked for `seen_flight`): a range-set update per
    /// segment saved.
    skip_seen: bool,
    /// Bytes covered by the SACK blocks of the peer's latest ACK.
    latest_sack_bytes: u64,
    /// What duplicate ACKs without SACK reported delivered, and the recovery they opened.
    reno: RenoCredit,
    pub data_ack_rtt: DataAckSampler,
    pub ts_echo_rtt: TsEchoSampler,
    /// The receiver's window edges, and the data of this direction each one released.
    pub release_rtt: ReleaseSampler,
    /// The ACK that moved the cumulative point to a hole, and the sender's repair of it.
    pub repair_rtt: RepairSampler,
    last_ack_seen: Option<(SeqNum, u16)>,
    /// The latest gaps in the sequence the capture saw open (data beyond the highest
    /// sequence before it), each with when it opened: a fill within a round trip of that is
    /// the first sending, late (see [`Direction::on_send`]).
    gaps: VecDeque<Gap>,
    /// The TSval of the segment that set `nxt` (None when an ACK moved it), and when it
    /// passed.
    nxt_tsval: Option<u32>,
    nxt_at: Option<Timestamp>,
    /// The connection's least end-to-end round trip so far, once both loops are measured
    /// (set by the connection before each segment).
    pub round_trip: Option<Span>,
    /// Segments that filled such a gap: reordered, not re-sent.
    pub reordered_segments: u64,
    /// Segments the receiver's ACKs reported late: holes below its highest SACK block that
    /// the cumulative ACK then passed with no retransmission (`Scoreboard::late_fill_bytes`):
    /// reordered on the path wherever the capture point is.
    pub reordered_late_segments: u64,
    /// When the direction last re-sent data: a sender in loss recovery.
    last_retransmission: Option<Timestamp>,
}

impl Direction {
    /// An ACK seen at `at` moved the cumulative ACK over `acked` bytes, to `una`. The last
    /// two such ACKs are kept with what they had acknowledged of the data the capture saw
    /// sent ([`Direction::acked_seen_bytes`]), which the goodput is measured by.
    pub fn note_new_ack(&mut self, at: Timestamp, acked: u32) {
        if acked == 0 {
            return;
        }
        self.acked_bytes += acked as u64;
        // With the SYN seen every byte was sent within the capture; without it, from the
        // lowest first sending seen, or, where every data segment seen was a re-sending
        // (the first copies lost before the capture point), the lowest of those.
        let first = match self.isn {
            Some(isn) => Some(isn.add(1)),
            None => self.first_data_seq.or(self.lowest_resent_seq),
        };
        let seen = match (first, self.una) {
            (Some(first), Some(una)) if una.is_after(first) => (una.bytes_after(first) as u64).min(acked as u64),
            _ => 0,
        };
        self.acked_seen_bytes += seen;
        if let (Some(first), Some(una), false) = (first, self.una, self.held_at_first_data.is_empty()) {
            let from = una.sub(acked);
            let from = if from.is_before(first) { first } else { from };
            self.acked_held_bytes += self.held_at_first_data.covered(from, una).min(seen);
        }
        let delivered = self.acked_seen_bytes - self.acked_held_bytes;
        self.new_acks = [self.new_acks[1], Some((at, delivered))];
        if self.first_seen_ack.is_none() && delivered > 0 {
            self.first_seen_ack = Some((at, delivered));
        }
    }

    /// Fixes the base of the relative numbers from the first number seen in this direction.
    pub fn note_number(&mut self, n: SeqNum, is_syn: bool) {
        if self.base.is_none() {
            let base = if is_syn { n } else { n.sub(1) };
            self.base = Some(base);
            self.space = Some(SeqSpace::new(base));
        }
    }

    pub fn relative(&self, n: SeqNum) -> Option<u32> {
        self.base.map(|b| n.relative_to(b))
    }

    /// Whether to keep what [`Self::seen_flight`] needs (the default). Set before the
    /// first segment: turned on later, it would count from then on only.
    pub fn keep_seen_flight(&mut self, keep: bool) {
        self.skip_seen = !keep;
    }

    /// Naive bytes in flight (spec: highest sequence sent minus highest cumulative ACK).
    pub fn flight(&self) -> Option<u64> {
        let nxt = self.nxt?;
        let una = self.una.or(self.base.map(|b| b.add(1)))?;
        Some(nxt.bytes_after(una) as u64)
    }

    /// Bytes in flight the way Wireshark counts them (`tcp.analysis.bytes_in_flight`): the
    /// span of the data this capture point saw and the peer has not acknowledged, minus
    /// the SACK blocks of the peer's latest ACK. It differs from `flight` where data was
    /// lost before the capture point (never seen, so not counted) and during SACK recovery.
    /// `syn_or_fin` is whether the segment just sent had SYN or FIN, whose sequence number
    /// is not data.
    /// None when the direction does not keep it (see [`Self::keep_seen_flight`]).
    pub fn seen_flight(&self, syn_or_fin: bool) -> Option<u64> {
        if self.skip_seen {
            return None;
        }
        let (first, _) = self.seen_unacked.first()?;
        let (_, last) = self.seen_unacked.last()?;
        let span = last.bytes_after(first) as u64;
        Some(
            span.saturating_sub(self.latest_sack_bytes)
                .saturating_sub(syn_or_fin as u64),
        )
    }

    /// RFC 6675 pipe: flight minus SACKed and presumed-lost bytes plus their retransmissions.
    pub fn pipe(&self, mss: u32) -> Option<u64> {
        let nxt = self.nxt?;
        let una = self.una.or(self.base.map(|b| b.add(1)))?;
        Some(self.sacks.pipe(una, nxt, mss.max(1)))
    }

    /// A loss recovery is open: data above a hole SACKed, or duplicate ACKs counted
    /// without SACK since one (RFC 6675, RFC 6582).
    pub fn in_recovery(&self) -> bool {
        self.sacks.has_sacks() || self.reno.in_recovery()
    }

    /// A recovery without SACK is open: duplicate ACKs counted since a hole (RFC 6582).
    pub fn in_reno_recovery(&self) -> bool {
        self.reno.in_recovery() && !self.sacks.has_sacks()
    }

    /// New data up to SND.NXT that its sender sent before it learned of the open recovery
    /// (the ACK it had then opened none): the recovery point is no lower
    /// ([`RenoCredit::extend_recover`]).
    pub fn sent_before_recovery(&mut self) {
        if let Some(n) = self.nxt {
            self.reno.extend_recover(n);
        }
    }

    /// What the open recovery's duplicate ACKs reported delivered above the hole, without
    /// SACK (RFC 5681 §3.2: each one a segment that left the network); none outside one.
    pub fn reported_by_duplicates(&self) -> u64 {
        self.reno.out_of_network()
    }

    /// Outstanding bytes out of the network: SACKed, or presumed lost and not retransmitted
    /// (RFC 6675: flight - pipe); without SACK, a segment for each duplicate ACK since the
    /// hole (RFC 5681 §3.2: each one means a segment has left the network; Linux counts
    /// them as sacked_out for a Reno connection, tcp_add_reno_sack, which [`RenoCredit`]
    /// follows, bounds included).
    pub fn not_in_network(&self, mss: u32) -> u64 {
        // Every segment asks (the data's and each ACK's advert): nothing SACKed and no
        // duplicate ACKs counted leaves all of it in the network, without the scoreboard.
        if !self.sacks.has_sacks() && !self.reno.in_recovery() {
            return 0;
        }
        match (self.flight(), self.pipe(mss)) {
            (Some(f), Some(p)) => (f.saturating_sub(p) + self.reno.out_of_network()).min(f),
            _ => 0,
        }
    }

    /// Unwrapped 64-bit offset of `n` from the base.
    pub fn offset(&mut self, n: SeqNum) -> Option<i64> {
        self.space.as_mut().map(|s| s.unwrap(n))
    }

    /// A segment of this direction was sent.
    pub fn on_send(&mut self, seg: &Segment, at: Timestamp) -> SendOutcome {
        let syn = seg.flags.syn();
        self.note_number(seg.seq, syn);
        if syn {
            self.isn = Some(seg.seq);
        }
        self.segments += 1;
        let len = seg.payload_len;
        // SYN and FIN each take one sequence number (RFC 9293 §3.4).
        let seq_len = len + syn as u32 + seg.flags.fin() as u32;
        let start = seg.seq.add(syn as u32);
        let end = seg.seq.add(seq_len);
        let mut out = SendOutcome::default();
        if seg.flags.fin() {
            self.fin = true;
        }
        // A keep-alive's one garbage byte (RFC 9293 §3.8.4: "may carry one garbage octet")
        // is no data: restored below once the segment is known for one.
        let before = (self.data_segments, self.first_data, self.first_data_len, self.last_data);
        let mut same_tick_repair = false;
        if len > 0 {
            self.data_segments += 1;
            self.max_segment = self.max_segment.max(len);
            match self.first_data {
                None => {
                    self.first_data = Some(at);
                    self.first_data_len = len;
                    self.held_at_first_data = self.sacks.sacked().clone();
                }
                Some(first) if first == at => self.first_data_len = self.first_data_len.saturating_add(len),
                Some(_) => {}
            }
            self.last_data = Some(at);
        }
        // Every segment that takes sequence space is outstanding until an ACK covers it —
        // a re-sent old segment too, until the next ACK (how Wireshark keeps its list).
        if seq_len > 0 && !self.skip_seen {
            self.seen_unacked.insert(seg.seq, end);
        }
        // A reset takes no sequence space, and its number is not where the sender's data
        // ends: a RST answering an unacceptable ACK takes its sequence from that ACK's
        // number (RFC 9293 §3.10.7.1), which may lie anywhere. It moves nothing.
        if seg.flags.rst() && len == 0 {
            return out;
        }
        // Data above everything the capture saw sent, yet below an ACK that already covered
        // it: the capture recorded the segment after its acknowledgment (a capturing host
        // that hands a large offloaded segment to the capture late; tshark's "ACKed segment
        // that wasn't captured" before it). Its first sending, not a retransmission: the
        // ACK moved `nxt` without counting these bytes, so they are counted now.
        // (Below `una`, not `nxt`: a SACK block beyond the data seen moves `nxt` too, and data
        // below a block the receiver holds, sent after it, is the repair of a hole.)
        let late = len > 0
            && self.seen_high.is_some_and(|h| !start.is_before(h))
            && self.una.is_some_and(|u| start.is_before(u));
        if seq_len > 0 && self.seen_high.is_none_or(|h| end.is_after(h)) {
            self.seen_high = Some(end);
        }
        let tsval = seg.options.timestamps.map(|t| t.val);
        let Some(nxt) = self.nxt else {
            self.nxt = Some(end);
            self.nxt_tsval = tsval;
            self.nxt_at = Some(at);
            if len > 0 {
                out.new_bytes = len;
                self.unique_bytes += len as u64;
                self.last_new_data = Some(at);
                self.data_ack_rtt.on_new_segment(start, end, at, false, tsval);
                self.first_data_seq = Some(start);
            }
            self.after_send(&mut out, end);
            return out;
        };
        if end.is_after(nxt) {
            // New data (possibly overlapping old data at its start).
            let new = end.bytes_after(nxt.max_seq(start));
            let new_payload = new.min(len);
            if start.is_before(nxt) && len > 0 {
                if late {
                    self.unique_bytes += nxt.bytes_after(start) as u64;
                } else {
                    out.retransmission = true;
                }
            }
            let window_zero = self.peer_window == Some(0);
            if window_zero && len > 0 && len <= 1 {
                out.zero_window_probe = true;
                self.zero_window_probes += 1;
            }
            // Data beyond a gap the capture point did not see (lost before it, or missed by
            // the capture): the sequence space between was sent all the same (RFC 9293 §3.4:
            // each byte has its number), so the connection carried it. Counted now: its fill,
            // when it comes, lies below the highest sequence and is a retransmission here.
            // At a receiver-side capture every byte lost upstream arrives once, as the fill.
            let gap = if start.is_after(nxt) {
                if let Some(round) = self.round_trip {
                    while self.gaps.front().is_some_and(|g| at - g.opened >= round) {
                        self.gaps.pop_front();
                    }
                }
                if self.gaps.len() == GAPS_KEPT {
                    self.gaps.pop_front();
                }
                self.gaps.push_back(Gap {
                    lo: nxt,
                    hi: start,
                    opened: at,
                    tsval,
                    below: self.nxt_tsval,
                    below_at: self.nxt_at,
                });
                start.bytes_after(nxt) as u64
            } else {
                0
            };
            self.unique_bytes += gap;
            self.nxt = Some(end);
            self.nxt_tsval = tsval;
            self.nxt_at = Some(at);
            if new_payload > 0 {
                out.new_bytes = new_payload;
                self.unique_bytes += new_payload as u64;
                self.last_new_data = Some(at);
                // Data sent into a zero window waits for the reader, not the path.
                self.data_ack_rtt.on_new_segment(start, end, at, window_zero, tsval);
            }
        } else if late {
            self.unique_bytes += len as u64;
        } else if len > 0 || seg.flags.fin() {
            // Nothing new: a keep-alive, or a retransmission. A FIN is never a keep-alive
            // (RFC 9293 §3.8.4: a keep-alive is an ACK probe; a FIN sent again at SND.NXT - 1
            // looks like one by its number).
            if len <= 1 && !seg.flags.fin() && end == nxt && self.una.is_some_and(|u| seg.seq.is_before(u)) {
                out.keep_alive = true;
            } else if len > 0 {
                if self.fills_a_fresh_gap(start, end, at, tsval, self.recovering(at)) {
                    out.reordered = true;
                    self.reordered_segments += 1;
                } else {
                    out.retransmission = true;
                    // Read as a repair only because a repair came just before it: it does
                    // not prolong the recovery it was read by (one repair made every fill
                    // of a reordering path's next round trip a repair, and those the next
                    // round's: P31 jitter_reorder at the client read 54% of the data as
                    // re-sent where the sender re-sent one segment).
                    same_tick_repair = self.fills_a_fresh_gap(start, end, at, tsval, false);
                }
            }
        } else if !syn && !seg.flags.rst() && seg.seq.add(1) == nxt && self.una == Some(nxt) {
            // A keep-alive without data (Linux's, `tcp_xmit_probe_skb`): SEG.SEQ = SND.NXT - 1
            // with everything acknowledged (RFC 9293 §3.8.4; tshark's "TCP Keep-Alive").
            out.keep_alive = true;
        }
        // Into a zero window the same segment is a persist probe (RFC 9293 §3.8.6.1; Linux's
        // `tcp_send_probe0` sends it as SND.UNA - 1, as a keep-alive looks): the window,
        // not an idle connection, is why it was sent.
        if out.keep_alive && self.peer_window == Some(0) {
            out.keep_alive = false;
            out.zero_window_probe = true;
            self.zero_window_probes += 1;
        }
        // smb_smb3_multichannel: 1-byte keep-alives every 30 s after 1.8 s of data made
        // "goodput 2.62 kbit/s over its 121 s of data".
        if out.keep_alive {
            (self.data_segments, self.first_data, self.first_data_len, self.last_data) = before;
        }
        // The lowest first sending seen: a segment the path reordered ahead of the first
        // (suricata tls-subjectaltname flow 24: bytes 11581-11585 seen before byte 1) does
        // not leave the data before it unseen. A re-sending may be of data sent before the
        // capture began, and does not lower it.
        if len > 0 && !out.keep_alive {
            let lowest = match out.retransmission {
                false => &mut self.first_data_seq,
                true => &mut self.lowest_resent_seq,
            };
            if lowest.is_none_or(|f| f.is_after(start)) {
                *lowest = Some(start);
            }
        }
        if out.retransmission {
            if !same_tick_repair {
                self.last_retransmission = Some(at);
            }
            self.retransmitted_segments += 1;
            self.retransmitted_bytes += len as u64;
            self.data_ack_rtt.on_retransmission(start, end);
            self.reno.on_resend(start, end);
            self.sacks.on_retransmit(start, end);
        }
        self.after_send(&mut out, end);
        out
    }

    /// Whether `[start, end)` is the first sending of data in a gap the capture saw open
    /// just before, overtaken on the way (a sending host's queues, a bonded or multipath
    /// hop): tshark's "out-of-order", no loss. A retransmission answers news of the loss —
    /// the receiver's duplicate ACKs or SACKs for the data beyond the gap (RFC 5681 §3.2,
    /// RFC 6675), which reach the sender, and its repair the capture point, a whole round
    /// trip after that data passed here, wherever here is — or a timer, whose repair can
    /// follow a gap opened by another timer's probe at once (a tail-loss probe of the
    /// highest segment, then the RTO's repair of the first: P10 outage at the client, 19
    /// ms apart on a 45 ms path). So: with timestamps, the fill left the sender no later
    /// than the data beyond it (its TSval not after theirs, RFC 7323 §4.3: a re-sending
    /// carries the clock of its own sending) within a round trip; without them, within
    /// RACK's reordering window, a quarter of the least RTT (RFC 8985 §6.2), a
    /// displacement no sender's loss detection acts on. (SF20_Trace1: eleven fills 5-37 µs
    /// after the data beyond them, each with its TSval, were counted as retransmissions,
    /// and two loss episodes invented on a 22 ms path.)
    fn fills_a_fresh_gap(
        &self,
        start: SeqNum,
        end: SeqNum,
        at: Timestamp,
        tsval: Option<u32>,
        recovering: bool,
    ) -> bool {
        let Some(round) = self.round_trip else { return false };
        // A sender in loss recovery (it re-sent data within the last round trip) may have
        // known of the hole before it sent the data beyond it, and send its repair right
        // after that data, in the same tick of its clock (R13 loss_reno at the client: a
        // NewReno sender's new data, then the repair of a hole lost before the capture,
        // 1 ms later with the same TSval). Only a sender out of recovery is read so, unless
        // the fill's clock is before the data beyond it: a repair is sent after the data
        // whose passing opened the hole, so it carries a later clock or the same tick, never
        // an earlier one (RFC 7323 §4.3). (Without this, one misread fill made every fill of
        // the next round trip a retransmission, and those the next round's.)
        self.gaps.iter().any(|g| {
            let within = match (tsval, g.tsval) {
                (Some(fill), Some(beyond)) => {
                    // A hole whose both edges were sent in one tick of the sender's clock
                    // was sent in that tick too (a first sending's numbers lie between its
                    // neighbours', RFC 9293 §3.4), and a fill carrying that tick is it: a
                    // repair answers news of the loss, which reaches the sender a round trip
                    // after the hole's data left it (P32 jitter_reorder at the client: in a
                    // recovery of 320 ms, 700 such fills read as repairs).
                    // So too where the data below the hole passed here less than half a
                    // round trip before the data beyond it: a repair in the tick of the
                    // data beyond means the hole's first sending left a round trip before
                    // that tick, and the data below it earlier still, which no path's
                    // jitter or clock tick below half a round trip brings this close
                    // (P32 jitter_reorder at the client: fills of holes whose lower edge
                    // left a tick earlier, 1 ms on a 24 ms path).
                    let hole_sent_late =
                        g.below == Some(beyond) || g.below_at.is_some_and(|b| g.opened - b < Span(round.nanos() / 2));
                    let before = fill.wrapping_sub(beyond) as i32;
                    (before < 0 || (before == 0 && (!recovering || hole_sent_late))) && at - g.opened < round
                }
                (None, None) => !recovering && at - g.opened < Span(round.nanos() / 4),
                _ => false,
            };
            !start.is_before(g.lo) && !end.is_after(g.hi) && within
        })
    }

    /// Whether the direction re-sent data within the last round trip at `at`.
    fn recovering(&self, at: Timestamp) -> bool {
        self.last_retransmission
            .zip(self.round_trip)
            .is_some_and(|(r, round)| at - r < round)
    }

    fn after_send(&mut self, out: &mut SendOutcome, end: SeqNum) {
        if let Some(f) = self.flight() {
            self.max_flight = self.max_flight.max(f);
        }
        if let (Some(una), Some(win)) = (self.una, self.peer_window) {
            if win > 0 && out.new_bytes > 0 && end == una.add(win.min(u32::MAX as u64) as u32) {
                out.window_full = true;
                self.window_full_events += 1;
            }
        }
    }

    /// The peer acknowledged `ack` and advertised `window` (bytes when the scale is known)
    /// with the raw field `raw`; `carries_data` says whether the ACK segment had payload.
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack(
        &mut self,
        ack: SeqNum,
        window: Option<u64>,
        raw: u16,
        sack: &SackBlocks,
        carries_data: bool,
        is_syn: bool,
        mss: u32,
    ) -> AckOutcome {
        // Most segments of a transfer are data carrying the same cumulative ACK for the
        // other direction: nothing is acknowledged, nothing SACKed, and data is never a
        // duplicate ACK (RFC 5681 §2). Only the window and the ACK last seen move. (`una`
        // is only ever set below, after the base was noted.)
        if carries_data && !is_syn && sack.is_empty() && self.una == Some(ack) {
            if !self.skip_seen {
                self.seen_unacked.clip_below(ack); // a re-sent old segment, now covered
            }
            self.latest_sack_bytes = 0;
            self.last_ack_seen = Some((ack, raw));
            self.peer_window_raw = Some(raw);
            self.peer_window_raw_max = self.peer_window_raw_max.max(raw);
            self.peer_window = window;
            return AckOutcome::default();
        }
        self.on_ack_in_full(ack, window, raw, sack, carries_data, is_syn, mss)
    }

    /// `on_ack` without the shortcut.
    #[allow(clippy::too_many_arguments)]
    fn on_ack_in_full(
        &mut self,
        ack: SeqNum,
        window: Option<u64>,
        raw: u16,
        sack: &SackBlocks,
        carries_data: bool,
        is_syn: bool,
        mss: u32,
    ) -> AckOutcome {
        self.note_number(ack, false);
        let mut out = AckOutcome::default();
        let sacked_before = self.sacks.sacked_bytes();
        // The highest byte the receiver had reported before this ACK.
        let reported_before = match (self.una, self.sacks.high_sacked()) {
            (Some(u), Some(h)) if h.is_after(u) => Some(h),
            (u, _) => u,
        };
        let prev_una = self.una;
        match self.una {
            Some(una) if !ack.is_after(una) => {
                let outstanding = self.nxt.is_some_and(|n| n.is_after(una));
                if ack == una && !carries_data && !is_syn && outstanding && self.last_ack_seen == Some((ack, raw)) {
                    out.duplicate = true;
                    self.duplicate_acks += 1;
                }
            }
            Some(una) => {
                out.acked = ack.bytes_after(una);
                self.una = Some(ack);
            }
            None => {
                // The first ACK seen: it acknowledges what was sent since the base.
                if let Some(first) = self.base.map(|b| b.add(1)).filter(|_| self.nxt.is_some()) {
                    out.acked = ack.bytes_after(first);
                }
                self.una = Some(ack);
                // Below the first data seen (a capture begun mid-transfer), it shows data
                // outstanding that was sent before the capture: the flight at this moment,
                // SND.NXT - SND.UNA (RFC 9293 §3.3.1), counts it, within the window the
                // same ACK offers (§3.8.6). Sampled only at data segments, a sender that
                // sent nothing until later ACKs came left it out (census seed 9494: the
                // sender's flight 31.9 kB, one loop after an ACK 8.7 kB below the first
                // data seen, against 15.9 kB "seen").
                let room = window.unwrap_or((raw as u64) << 14);
                if let Some(f) = self.flight().filter(|&f| f <= room) {
                    self.max_flight = self.max_flight.max(f);
                }
            }
        }
        // An ACK beyond anything seen sent (the capture missed data): move nxt along so
        // flight never goes negative. (The first ACK of a direction whose data was never
        // seen only sets where its numbers stand.)
        if self.nxt.is_none_or(|n| ack.is_after(n)) {
            out.beyond_seen = out.acked > 0;
            self.nxt = Some(ack);
            self.nxt_tsval = None;
            self.nxt_at = None;
        }
        let una = self.una.expect("set above");
        if out.acked > 0 {
            if let Some(p) = prev_una {
                let late = self.sacks.late_fill_bytes(p, una);
                self.reordered_late_segments += late.div_ceil(mss.max(1) as u64);
            }
            self.sacks.on_cumulative_ack(una);
            self.reno.on_cumulative_ack(una);
        }
        if !self.skip_seen {
            self.seen_unacked.clip_below(una);
        }
        self.latest_sack_bytes = sack.iter().map(|(l, r)| r.bytes_after(l) as u64).sum();
        if let Some((l, r)) = dsack(sack, ack) {
            self.dsack_segments += (r.bytes_after(l) as u64).div_ceil(mss.max(1) as u64).max(1);
            out.dsack = Some((l, r));
        }
        for (l, r) in sack.iter() {
            self.sacks.on_sack(l, r, una);
        }
        // A SACK block beyond anything seen sent: the receiver holds data the capture never
        // saw sent (before it began, or missed by it), as an ACK beyond it would show (RFC
        // 2018 §3: a block reports data received). `nxt` moves to it, as for such an ACK, so
        // a segment sent later below it is the repair of a hole, not new data: timed against
        // the ACK its first copy triggered, a capture begun during a recovery read 1 ms on a
        // 250 ms path. Only a block within the window this ACK offers counts (RFC 9293
        // §3.10.7.4: a receiver keeps only what its window accepts); one beyond it is a
        // number a middlebox did not translate (sequence randomisation), not data.
        if let Some(high) = self.sacks.high_sacked() {
            let room = window.unwrap_or((raw as u64) << 14);
            if self.nxt.is_some_and(|n| high.is_after(n)) && high.bytes_after(una) as u64 <= room {
                self.data_ack_rtt.on_unseen_data_reported(high);
                self.nxt = Some(high);
                self.nxt_tsval = None;
                self.nxt_at = None;
            }
        }
        out.raised = match (reported_before, self.sacks.high_sacked()) {
            (None, _) => out.acked > 0,
            (Some(h), high) => una.is_after(h) || high.is_some_and(|x| x.is_after(h)),
        };
        if out.raised {
            self.max_in_network = self.max_in_network.max(std::mem::take(&mut self.pending_in_network));
        }
        let survivor = reported_before.and_then(|h| {
            sack.iter()
                .find(|&(l, r)| l.is_after(h) && l.is_after(una) && r.is_after(l))
        });
        out.new_hole = survivor.is_some();
        out.survivor_at = survivor.and_then(|(l, _)| self.data_ack_rtt.sent_at(l));
        let sacked_after = self.sacks.sacked_bytes();
        let mut delivered = out.acked as i64 + sacked_after as i64 - sacked_before as i64;
        if delivered > 0 {
            delivered -= self.reno.repay(prev_una, delivered as u64, mss, &self.data_ack_rtt) as i64;
        }
        if out.duplicate && sack.is_empty() {
            delivered += self.reno.on_duplicate(una, self.nxt, mss, &self.data_ack_rtt) as i64;
        }
        out.delivered = delivered.clamp(0, u32::MAX as i64) as u32;
        self.last_ack_seen = Some((ack, raw));
        self.peer_window_raw = Some(raw);
        if !is_syn {
            self.peer_window_raw_max = self.peer_window_raw_max.max(raw);
        }
        self.peer_window = window;
        out
    }

    /// Whether this direction has more in flight than any window its peer advertised could
    /// allow (RFC 9293 §3.8.6: SND.NXT <= SND.UNA + SND.WND), read with `shift`, or with
    /// RFC 7323's largest shift (14) when it is unknown: then the capture misses ACKs (an
    /// asymmetric route, a filter, drops at the capture point), and the next ACK seen is
    /// not the one the data triggered. One segment of slack covers an ACK reordered before
    /// the capture point.
    pub fn beyond_any_window(&self, shift: Option<u8>, mss: u32) -> bool {
        let Some(flight) = self.flight() else { return false };
        if self.una.is_none() {
            return false;
        }
        let bound = ((self.peer_window_raw_max as u64) << shift.unwrap_or(14).min(14)) + mss as u64;
        flight > bound
    }
}

/// The data a D-SACK reports received twice, [start, end), if the ACK's first SACK block is
/// one: a block at or below the cumulative ACK, or one inside the second block (RFC 2883 §4).
fn dsack(sack: &SackBlocks, ack: SeqNum) -> Option<(SeqNum, SeqNum)> {
    let mut it = sack.iter();
    let (l, r) = it.next()?;
    if !r.is_after(l) {
        return None;
    }
    let inside_next = it.next().is_some_and(|(l1, r1)| !l.is_before(l1) && !r.is_after(r1));
    (!r.is_after(ack) || inside_next).then_some((l, r))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{TcpFlags, TcpOptions};
    use std::net::{IpAddr, Ipv4Addr};

    fn seg(seq: u32, len: u32, flags: u8) -> Segment {
        let a = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
        Segment {
            src: a,
            dst: a,
            ecn: Default::default(),
            src_port: 1,
            dst_port: 2,
            seq: SeqNum(seq),
            ack: SeqNum(0),
            flags: TcpFlags(flags),
            ae: false,
            window: 100,
            payload_len: len,
            options: TcpOptions::default(),
            ip_id: None,
        }
    }
    const ACK: u8 = TcpFlags::ACK;
    const NOSACK: SackBlocks = SackBlocks {
        len: 0,
        blocks: [(SeqNum(0), SeqNum(0)); 4],
    };

    /// SACK blocks `[left, right)`, in the order given (at most four).
    fn blocks(b: &[(u32, u32)]) -> SackBlocks {
        let mut s = NOSACK;
        for (k, &(l, r)) in b.iter().enumerate() {
            s.blocks[k] = (SeqNum(l), SeqNum(r));
        }
        s.len = b.len() as u8;
        s
    }

    #[test]
    fn the_ack_shortcut_leaves_what_the_full_path_leaves() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..200 {
            let (mut fast, mut full) = (Direction::default(), Direction::default());
            let keep = round % 2 == 0;
            fast.keep_seen_flight(keep);
            full.keep_seen_flight(keep);
            let base = (next() as u32) | 1; // wraps within some rounds
            let t = Timestamp(0);
            for d in [&mut fast, &mut full] {
                d.on_send(&seg(base, 0, TcpFlags::SYN), t);
            }
            let mut sent = 1u32;
            for step in 0..300 {
                let r = next();
                if r % 3 == 0 {
                    // new data, or a re-sent old segment
                    let (from, len) = if r % 7 == 0 && sent > 3000 {
                        (sent - 1000 * (1 + (r >> 8) as u32 % 3), 1000)
                    } else {
                        (sent, 1 + (r >> 8) as u32 % 1448)
                    };
                    for d in [&mut fast, &mut full] {
                        d.on_send(&seg(base.wrapping_add(from), len, ACK), t);
                    }
                    sent = sent.max(from + len);
                } else {
                    let una = fast.una.map_or(1, |u| u.0.wrapping_sub(base));
                    let ack = match (r >> 4) % 4 {
                        0 => una,
                        1 => una + ((r >> 8) as u32 % (sent - una + 1)),
                        2 => sent,
                        _ => una.saturating_sub(500),
                    };
                    let mut sack = NOSACK;
                    if (r >> 12) % 5 == 0 && sent > ack + 2000 {
                        let l = ack + 1000;
                        sack.blocks[0] = (SeqNum(base.wrapping_add(l)), SeqNum(base.wrapping_add(l + 1000)));
                        sack.len = 1;
                    }
                    let (raw, carries, syn) = (100 + (r >> 16) as u16 % 3, (r >> 20) % 3 != 0, (r >> 24) % 50 == 0);
                    let win = Some(raw as u64 * 128);
                    let a = SeqNum(base.wrapping_add(ack));
                    let o1 = fast.on_ack(a, win, raw, &sack, carries, syn, 1448);
                    let o2 = full.on_ack_in_full(a, win, raw, &sack, carries, syn, 1448);
                    assert_eq!(o1, o2, "round {round} step {step}");
                }
                assert_eq!(format!("{fast:?}"), format!("{full:?}"), "round {round} step {step}");
            }
        }
    }

    #[test]
    fn new_data_then_retransmission() {
        let mut d = Direction::default();
        let t = Timestamp(0);
        d.on_send(&seg(100, 0, TcpFlags::SYN), t);
        assert_eq!(d.relative(SeqNum(101)), Some(1));
        let o = d.on_send(&seg(101, 1000, ACK), t);
        assert_eq!(o.new_bytes, 1000);
        assert!(!o.retransmission);
        let o = d.on_send(&seg(101, 1000, ACK), t);
        assert_eq!(o.new_bytes, 0);
        assert!(o.retransmission);
        assert_eq!(d.unique_bytes, 1000);
        assert_eq!(d.retransmitted_segments, 1);
        assert_eq!(d.flight(), Some(1000));
    }

    /// A large segment the capturing host recorded after the ACK that covers it
    /// (smb3_multichannel: server ACK 40455, then data 37535+14600 2 us later): its first
    /// sending, counted once, not a retransmission; a real resend of it is one.
    #[test]
    fn data_recorded_after_its_ack_is_no_retransmission() {
        let mut d = Direction::default();
        let t = Timestamp(0);
        d.on_send(&seg(100, 0, TcpFlags::SYN), t);
        d.on_send(&seg(101, 1000, ACK), t);
        d.on_ack(SeqNum(3101), Some(65535), 65535, &NOSACK, false, false, 1448);
        let o = d.on_send(&seg(1101, 2000, ACK), t);
        assert!(!o.retransmission);
        assert_eq!(d.unique_bytes, 3000);
        let o = d.on_send(&seg(1101, 2000, ACK), t);
        assert!(o.retransmission);
        assert_eq!(d.retransmitted_segments, 1);
        // Partly above the ACK: the part below it is late, the rest new.
        let o = d.on_send(&seg(3101, 1000, ACK), t);
        assert_eq!(o.new_bytes, 1000);
        d.on_ack(SeqNum(6101), Some(65535), 65535, &NOSACK, false, false, 1448);
        let o = d.on_send(&seg(4101, 3000, ACK), t);
        assert!(!o.retransmission);
        assert_eq!(o.new_bytes, 1000);
        assert_eq!(d.unique_bytes, 7000);
    }

    /// A capture begun mid-transfer whose first ACK acknowledges less than the first data
    /// seen: the flight at that moment counts the data outstanding from before the capture
    /// (the sender's SND.NXT - SND.UNA), though no data segment follows it; an ACK further
    /// back than the window it offers says nothing of the flight.
    #[test]
    fn a_first_ack_below_the_first_data_seen_counts_in_the_most_in_flight() {
        let t = Timestamp(0);
        let run = |ack: u32| {
            let mut d = Direction::default();
            d.on_send(&seg(10_001, 1000, ACK), t);
            d.on_send(&seg(11_001, 1000, ACK), t);
            d.on_ack(SeqNum(ack), Some(20_000), 20_000, &NOSACK, false, false, 1000);
            d.max_flight
        };
        assert_eq!(run(8001), 4000);
        assert_eq!(run(10_001u32.wrapping_sub(100_000)), 2000);
    }

    /// A capture begun during a recovery: the first ACK seen SACKs data the capture never saw
    /// sent, so the segments sent below it after are repairs of the hole (not new data, not
    /// timed); a block beyond the window the ACK offers (a sequence-randomising middlebox's
    /// untranslated number) moves nothing.
    #[test]
    fn a_sack_block_beyond_the_data_seen_makes_the_data_below_it_repairs() {
        let mut d = Direction::default();
        let t = Timestamp(0);
        d.on_send(&seg(1, 1000, ACK), t);
        d.on_ack(
            SeqNum(1001),
            Some(14_000),
            14_000,
            &blocks(&[(3001, 9001)]),
            false,
            false,
            1000,
        );
        assert_eq!(d.flight(), Some(8000));
        let o = d.on_send(&seg(1001, 1000, ACK), t);
        assert!(o.retransmission && o.new_bytes == 0);
        assert_eq!(d.unique_bytes, 1000);
        let o = d.on_send(&seg(9001, 1000, ACK), t);
        assert!(!o.retransmission && o.new_bytes == 1000);
        // A block 2^31 away: no data the receiver could hold.
        let mut d = Direction::default();
        d.on_send(&seg(1, 1000, ACK), t);
        let far = 1u32 << 31;
        d.on_ack(
            SeqNum(1001),
            Some(14_000),
            14_000,
            &blocks(&[(far, far + 1000)]),
            false,
            false,
            1000,
        );
        assert_eq!(d.flight(), Some(0));
        let o = d.on_send(&seg(1001, 1000, ACK), t);
        assert!(!o.retransmission && o.new_bytes == 1000);
    }

    /// A segment that fills a gap microseconds after the data beyond it passed, with the
    /// same TSval, from a sender in no recovery, is its first sending overtaken on the way
    /// (SF20_Trace1): no retransmission. A later TSval, or a sender that re-sent data within
    /// the round trip, makes it one.
    #[test]
    fn a_gap_filled_at_once_by_a_segment_sent_with_the_data_beyond_is_reordering() {
        let ts = |seq: u32, len: u32, val: u32| {
            let mut s = seg(seq, len, ACK);
            s.options.timestamps = Some(crate::decode::Timestamps { val, ecr: 1 });
            s
        };
        let run_below = |below_ts: u32, fill_ts: u32, resent_before: bool| {
            let mut d = Direction::default();
            d.round_trip = Some(Span::from_millis(22));
            let t = |us: i64| Timestamp(1_000_000_000) + Span::from_micros(us);
            d.on_send(&seg(100, 0, TcpFlags::SYN), t(0));
            d.on_send(&ts(101, 1000, below_ts), t(10));
            if resent_before {
                d.on_send(&ts(101, 1000, 6), t(5_000));
            }
            // The data beyond the hole passes more than half a round trip after the data
            // below it: the hole may have been sent a round trip before, and repaired now.
            d.on_send(&ts(2101, 1000, 7), t(12_000));
            d.on_send(&ts(1101, 1000, fill_ts), t(12_020))
        };
        let run = |fill_ts: u32, resent_before: bool| run_below(5, fill_ts, resent_before);
        let o = run(7, false);
        assert!(o.reordered && !o.retransmission, "{o:?}");
        let o = run(8, false);
        assert!(
            !o.reordered && o.retransmission,
            "a later TSval: sent after the data beyond"
        );
        let o = run(7, true);
        assert!(!o.reordered && o.retransmission, "a sender in recovery");
        let o = run(4, true);
        assert!(
            o.reordered && !o.retransmission,
            "an earlier tick than the data beyond: sent before it, in recovery or not"
        );
        let o = run_below(7, 7, true);
        assert!(
            o.reordered && !o.retransmission,
            "both edges of the hole sent in the fill's tick: the hole was sent in it too"
        );
        // In recovery, a hole whose lower edge passed 1 ms before the data beyond it (a
        // tick earlier) on a 22 ms path: sent between them, too late for news of its loss.
        let mut d = Direction::default();
        d.round_trip = Some(Span::from_millis(22));
        let t = |us: i64| Timestamp(1_000_000_000) + Span::from_micros(us);
        d.on_send(&seg(100, 0, TcpFlags::SYN), t(0));
        d.on_send(&ts(101, 1000, 5), t(10));
        d.on_send(&ts(101, 1000, 6), t(5_000));
        d.on_send(&ts(1101, 1000, 11), t(11_000));
        d.on_send(&ts(3101, 1000, 12), t(12_000));
        let o = d.on_send(&ts(2101, 1000, 12), t(12_020));
        assert!(
            o.reordered && !o.retransmission,
            "the lower edge a tick before, well within half a round trip: {o:?}"
        );
    }

    /// A path that displaces many segments at once (a reordering hop: eight gaps open
    /// together) has every late fill read as reordering, and a fill read as a repair only
    /// because a repair came just before it does not make the next round's fills repairs
    /// (P31 jitter_reorder at the client: one repair made 54% of the data "re-sent").
    #[test]
    fn a_reordering_path_shows_no_retransmissions() {
        let ts = |seq: u32, len: u32, val: u32| {
            let mut s = seg(seq, len, ACK);
            s.options.timestamps = Some(crate::decode::Timestamps { val, ecr: 1 });
            s
        };
        let mut d = Direction::default();
        d.round_trip = Some(Span::from_millis(40));
        let t = |us: i64| Timestamp(1_000_000_000) + Span::from_micros(us);
        d.on_send(&seg(0, 0, TcpFlags::SYN), t(0));
        // A real repair: the gap at 1..1001 opened 50 ms before, the fill's clock later.
        d.on_send(&ts(1001, 1000, 10), t(100));
        d.on_send(&ts(1, 1000, 60), t(50_100));
        // Then, in the same clock tick as the repair, 8 segments of every 16 overtaken by
        // the 8 after them, over 6 round trips.
        let mut at = 50_200;
        let mut reordered = 0;
        let mut resent = 0;
        for burst in 0..60u32 {
            let base = 2001 + burst * 16_000;
            let tick = 60 + burst * 4;
            for i in (8..16).chain(0..8) {
                at += 300;
                let o = d.on_send(&ts(base + i * 1000, 1000, tick), t(at));
                reordered += o.reordered as u32;
                // The fills in the repair's round trip may be repairs (a sender in recovery
                // may send one in the tick of the data beyond it); none after it.
                if at > 50_100 + 40_000 {
                    resent += o.retransmission as u32;
                }
            }
            at += 3_000;
        }
        assert_eq!(resent, 0, "{reordered} reordered");
        assert!(reordered >= 480 - 48, "{reordered} reordered");
    }

    /// A retransmission whose original had arrived comes back as a D-SACK: a first block
    /// below the cumulative ACK, or inside the second block (RFC 2883 §4 examples). An
    /// ordinary SACK block above the ACK is none.
    #[test]
    fn d_sacks_count_the_segments_received_twice() {
        let mut d = Direction::default();
        d.on_send(&seg(0, 0, TcpFlags::SYN), Timestamp(0));
        for i in 0..6 {
            d.on_send(&seg(1 + i * 1000, 1000, ACK), Timestamp(0));
        }
        // Segment 2 lost: SACK of 3..5, no D-SACK.
        d.on_ack(
            SeqNum(1001),
            Some(65535),
            65535,
            &blocks(&[(2001, 4001)]),
            false,
            false,
            1000,
        );
        assert_eq!(d.dsack_segments, 0);
        // Segment 1 (below the ACK) arrived twice.
        d.on_ack(
            SeqNum(1001),
            Some(65535),
            65535,
            &blocks(&[(1, 1001), (2001, 4001)]),
            false,
            false,
            1000,
        );
        assert_eq!(d.dsack_segments, 1);
        // Segment 4 (inside the second block) arrived twice.
        d.on_ack(
            SeqNum(1001),
            Some(65535),
            65535,
            &blocks(&[(3001, 4001), (2001, 5001)]),
            false,
            false,
            1000,
        );
        assert_eq!(d.dsack_segments, 2);
    }

    #[test]
    fn a_sack_block_above_a_gap_past_everything_reported_is_a_new_hole() {
        let mut d = Direction::default();
        d.on_send(&seg(0, 0, TcpFlags::SYN), Timestamp(0));
        for i in 0..8 {
            d.on_send(&seg(1 + i * 1000, 1000, ACK), Timestamp(1 + i as i64));
        }
        let o = d.on_ack(SeqNum(1001), Some(65535), 65535, &NOSACK, false, false, 1000);
        assert!(o.raised && !o.new_hole);
        // Segment 2 dropped: segment 3 is a survivor above a new gap.
        let o = d.on_ack(
            SeqNum(1001),
            Some(65535),
            65535,
            &blocks(&[(2001, 3001)]),
            false,
            false,
            1000,
        );
        assert!(o.raised && o.new_hole);
        // When the capture saw the survivor's data (segment 3, seen at 3).
        assert_eq!(o.survivor_at, Some(Timestamp(3)));
        // Segment 4 follows it: no new gap.
        let o = d.on_ack(
            SeqNum(1001),
            Some(65535),
            65535,
            &blocks(&[(2001, 4001)]),
            false,
            false,
            1000,
        );
        assert!(o.raised && !o.new_hole);
        // Segments 5 and 6 dropped, 7 survives.
        let o = d.on_ack(
            SeqNum(1001),
            Some(65535),
            65535,
            &blocks(&[(6001, 7001), (2001, 4001)]),
            false,
            false,
            1000,
        );
        assert!(o.raised && o.new_hole);
        // The retransmission of segment 2 fills a gap below: nothing raised, no new gap.
        let o = d.on_ack(
            SeqNum(4001),
            Some(65535),
            65535,
            &blocks(&[(6001, 7001)]),
            false,
            false,
            1000,
        );
        assert!(!o.raised && !o.new_hole);
    }

    #[test]
    fn mid_stream_start_uses_first_seq_minus_one() {
        let mut d = Direction::default();
        d.on_send(&seg(5000, 1448, ACK), Timestamp(0));
        assert_eq!(d.relative(SeqNum(5000)), Some(1));
        assert_eq!(d.flight(), Some(1448));
    }

    #[test]
    fn acks_move_una_and_count_duplicates() {
        let mut d = Direction::default();
        d.on_send(&seg(0, 0, TcpFlags::SYN), Timestamp(0));
        for i in 0..4 {
            d.on_send(&seg(1 + i * 1000, 1000, ACK), Timestamp(0));
        }
        let o = d.on_ack(SeqNum(1001), Some(65535), 65535, &NOSACK, false, false, 1000);
        assert_eq!(o.acked, 1000);
        assert_eq!(d.flight(), Some(3000));
        let o = d.on_ack(SeqNum(1001), Some(65535), 65535, &NOSACK, false, false, 1000);
        assert!(o.duplicate);
        // a window update is not a duplicate ACK
        let o = d.on_ack(SeqNum(1001), Some(70000), 70000u32 as u16, &NOSACK, false, false, 1000);
        assert!(!o.duplicate);
    }

    #[test]
    fn delivery_counts_sacked_bytes_once() {
        let mut d = Direction::default();
        d.on_send(&seg(0, 0, TcpFlags::SYN), Timestamp(0));
        for i in 0..4 {
            d.on_send(&seg(1 + i * 1000, 1000, ACK), Timestamp(0));
        }
        // segment 1 lost; 2..4 SACKed one by one, then the retransmission fills the hole
        for k in 2..=4u32 {
            let sack = SackBlocks {
                len: 1,
                blocks: [
                    (SeqNum(1001), SeqNum(1 + k * 1000)),
                    (SeqNum(0), SeqNum(0)),
                    (SeqNum(0), SeqNum(0)),
                    (SeqNum(0), SeqNum(0)),
                ],
            };
            let o = d.on_ack(SeqNum(1), Some(65535), 65535, &sack, false, false, 1000);
            assert_eq!(o.delivered, 1000);
        }
        let o = d.on_ack(SeqNum(4001), Some(65535), 65535, &NOSACK, false, false, 1000);
        assert_eq!(o.acked, 4000);
        assert_eq!(o.delivered, 1000);
    }

    /// A capture begun mid-transfer: the receiver's ACK at 1001 comes first, then the
    /// flight sent before the capture (1001..5001) is acknowledged while new data from 5001
    /// is seen sent. Only what the capture saw sent counts for the goodput.
    #[test]
    fn the_goodput_counts_only_acks_of_data_seen_sent() {
        let mut d = Direction::default();
        let ack = |d: &mut Direction, a: u32| {
            let o = d.on_ack(SeqNum(a), Some(65535), 65535, &NOSACK, false, false, 1000);
            d.note_new_ack(Timestamp(a as i64), o.acked);
        };
        ack(&mut d, 1001);
        for i in 0..4 {
            d.on_send(&seg(5001 + i * 1000, 1000, ACK), Timestamp(0));
        }
        ack(&mut d, 3001);
        ack(&mut d, 6001);
        ack(&mut d, 9001);
        assert_eq!(d.acked_bytes, 8000);
        assert_eq!(d.acked_seen_bytes, 4000);
        assert_eq!(
            d.new_acks,
            [Some((Timestamp(6001), 1000)), Some((Timestamp(9001), 4000))]
        );
        // A segment the path reordered ahead of one below it leaves nothing between unseen:
        // no SYN, the ACK at 1001 first, then 5001 and, a microsecond later, the fill 4001.
        let mut d = Direction::default();
        d.round_trip = Some(Span::from_millis(20));
        ack(&mut d, 1001);
        d.on_send(&seg(5001, 1000, ACK), Timestamp(1_000));
        d.on_send(&seg(4001, 1000, ACK), Timestamp(2_000));
        ack(&mut d, 6001);
        assert_eq!(d.acked_seen_bytes, 2000);
    }

    /// A SYN and `n` segments of 1000 B sent, the first ACK (of the SYN) received: the
    /// set-up of the duplicate-ACK tests without SACK.
    fn sent_without_sack(n: u32) -> Direction {
        let mut d = Direction::default();
        d.on_send(&seg(0, 0, TcpFlags::SYN), Timestamp(0));
        for i in 0..n {
            d.on_send(&seg(1 + i * 1000, 1000, ACK), Timestamp(0));
        }
        d.on_ack(SeqNum(1), Some(65535), 65535, &NOSACK, false, false, 1000);
        d
    }

    #[test]
    fn without_sack_duplicate_acks_credit_one_segment_each() {
        let mut d = sent_without_sack(4);
        for _ in 0..3 {
            let o = d.on_ack(SeqNum(1), Some(65535), 65535, &NOSACK, false, false, 1000);
            assert!(o.duplicate);
            assert_eq!(o.delivered, 1000);
        }
        let o = d.on_ack(SeqNum(4001), Some(65535), 65535, &NOSACK, false, false, 1000);
        assert_eq!(o.delivered, 1000);
    }

    /// Without SACK a duplicate ACK answers the next segment above the hole, and that
    /// segment is what it delivered: a window's short tail counts its own bytes, not an
    /// MSS, and so does the ACK of a short segment that filled the hole.
    #[test]
    fn without_sack_duplicate_acks_credit_the_segment_they_answer() {
        let mut d = Direction::default();
        d.on_send(&seg(0, 0, TcpFlags::SYN), Timestamp(0));
        for (at, len) in [(1, 1000), (1001, 1000), (2001, 160), (2161, 1000)] {
            d.on_send(&seg(at, len, ACK), Timestamp(0));
        }
        d.on_ack(SeqNum(1), Some(65535), 65535, &NOSACK, false, false, 1000);
        let credited: Vec<u32> = (0..3)
            .map(|_| {
                d.on_ack(SeqNum(1), Some(65535), 65535, &NOSACK, false, false, 1000)
                    .delivered
            })
            .collect();
        assert_eq!(credited, [1000, 160, 1000]);
        d.on_send(&seg(1, 1000, ACK), Timestamp(0));
        let o = d.on_ack(SeqNum(3161), Some(65535), 65535, &NOSACK, false, false, 1000);
        assert_eq!(o.delivered, 1000);

        // The hole is a 160-byte segment: its repair delivers 160 bytes.
        let mut d = Direction::default();
        d.on_send(&seg(0, 0, TcpFlags::SYN), Timestamp(0));
        for (at, len) in [(1, 160), (161, 1000), (1161, 1000)] {
            d.on_send(&seg(at, len, ACK), Timestamp(0));
        }
        d.on_ack(SeqNum(1), Some(65535), 65535, &NOSACK, false, false, 1000);
        for _ in 0..2 {
            let o = d.on_ack(SeqNum(1), Some(65535), 65535, &NOSACK, false, false, 1000);
            assert_eq!(o.delivered, 1000);
        }
        d.on_send(&seg(1, 160, ACK), Timestamp(0));
        let o = d.on_ack(SeqNum(2161), Some(65535), 65535, &NOSACK, false, false, 1000);
        assert_eq!(o.delivered, 160);
    }

    /// Without SACK each duplicate ACK takes a segment out of the network (RFC 5681 §3.2)
    /// until the cumulative ACK reaches the recovery point; then the count is reset (Linux
    /// tcp_reset_reno_sack), though the delivery credit is still being repaid.
    #[test]
    fn without_sack_duplicate_acks_leave_the_network_until_recovery_ends() {
        let mut d = sent_without_sack(6);
        for _ in 0..3 {
            d.on_ack(SeqNum(1), Some(65535), 65535, &NOSACK, false, false, 1000);
        }
        assert_eq!((d.flight(), d.not_in_network(1000)), (Some(6000), 3000));
        // The retransmission repaired the hole: the ACK covers all six, recovery is over.
        d.on_ack(SeqNum(6001), Some(65535), 65535, &NOSACK, false, false, 1000);
        d.on_send(&seg(6001, 1000, ACK), Timestamp(0));
        assert_eq!((d.flight(), d.not_in_network(1000)), (Some(1000), 0));
    }

    /// More duplicate ACKs than segments outstanding above the hole (a capture holding ACKs
    /// twice, or reordered) credit no more than those segments: the delivery over the whole
    /// exchange is the bytes sent (tcp_limit_reno_sacked).
    #[test]
    fn duplicate_acks_never_credit_more_than_was_outstanding() {
        let mut d = Direction::default();
        d.on_send(&seg(0, 0, TcpFlags::SYN), Timestamp(0));
        for i in 0..4 {
            d.on_send(&seg(1 + i * 100, 100, ACK), Timestamp(0));
        }
        let mut delivered = d
            .on_ack(SeqNum(1), Some(65535), 65535, &NOSACK, false, false, 1000)
            .delivered as u64;
        for _ in 0..20 {
            let o = d.on_ack(SeqNum(1), Some(65535), 65535, &NOSACK, false, false, 1000);
            assert!(o.duplicate);
            delivered += o.delivered as u64;
        }
        delivered += d
            .on_ack(SeqNum(401), Some(65535), 65535, &NOSACK, false, false, 1000)
            .delivered as u64;
        assert!(delivered <= 400, "{delivered} B delivered of 400 sent");
    }

    /// A receiver-side capture never sees a segment lost upstream, only its retransmission,
    /// below the highest sequence: the bytes between count as carried when the capture
    /// jumps over them, so both ends of a connection give the same byte count.
    #[test]
    fn bytes_the_capture_jumped_over_were_carried() {
        let mut d = Direction::default();
        d.on_send(&seg(0, 0, TcpFlags::SYN), Timestamp(0));
        d.on_send(&seg(1, 1000, ACK), Timestamp(0));
        d.on_send(&seg(2001, 1000, ACK), Timestamp(0)); // 1001..2001 lost upstream
        let fill = d.on_send(&seg(1001, 1000, ACK), Timestamp(0));
        assert!(fill.retransmission);
        assert_eq!(d.unique_bytes, 3000);
        assert_eq!(d.retransmitted_bytes, 1000);
    }

    #[test]
    fn sequence_wraparound_is_seamless() {
        let mut d = Direction::default();
        let isn = u32::MAX - 1500;
        d.on_send(&seg(isn, 0, TcpFlags::SYN), Timestamp(0));
        d.on_send(&seg(isn.wrapping_add(1), 1000, ACK), Timestamp(0));
        let o = d.on_send(&seg(isn.wrapping_add(1001), 1000, ACK), Timestamp(0));
        assert_eq!(o.new_bytes, 1000);
        assert!(!o.retransmission);
        assert_eq!(d.flight(), Some(2000));
        d.on_ack(
            SeqNum(isn.wrapping_add(2001)),
            Some(1000),
            1000,
            &NOSACK,
            false,
            false,
            1000,
        );
        assert_eq!(d.flight(), Some(0));
        assert_eq!(d.unique_bytes, 2000);
    }

    #[test]
    fn tso_segments_larger_than_the_mss_are_plain_data() {
        let mut d = Direction::default();
        d.on_send(&seg(0, 0, TcpFlags::SYN), Timestamp(0));
        let o = d.on_send(&seg(1, 64_000, ACK), Timestamp(0));
        assert_eq!(o.new_bytes, 64_000);
        assert_eq!(d.max_segment, 64_000);
    }

    #[test]
    fn keep_alive_and_window_full_and_zero_window_probe() {
        let mut d = Direction::default();
        d.on_send(&seg(0, 0, TcpFlags::SYN), Timestamp(0));
        d.on_send(&seg(1, 1000, ACK), Timestamp(0));
        d.on_ack(SeqNum(1001), Some(2000), 2000, &NOSACK, false, false, 1000);
        let o = d.on_send(&seg(1000, 1, ACK), Timestamp(0));
        assert!(o.keep_alive && !o.retransmission);
        let o = d.on_send(&seg(1001, 2000, ACK), Timestamp(0));
        assert!(o.window_full);
        d.on_ack(SeqNum(3001), Some(0), 0, &NOSACK, false, false, 1000);
        let o = d.on_send(&seg(3001, 1, ACK), Timestamp(0));
        assert!(o.zero_window_probe);
    }
}
