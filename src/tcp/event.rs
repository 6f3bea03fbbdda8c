//! What the tracker reports for each segment, to observers such as the `packets` table,
//! plot recorders, or tests. Plain data: observers format it, the tracker never does.

use super::direction::{AckOutcome, SendOutcome};
use super::rtt::RttSample;
use crate::decode::{Ecn, TcpFlags};
use crate::endpoint::Dir;
use crate::time::{Span, Timestamp};

/// The sender's situation as reconstructed at the capture point (see `sender_view.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SenderView {
    /// Bytes the data sender had outstanding when it sent this segment.
    pub flight: u64,
    /// The window it was allowed at that moment (the receiver's last advertisement it had
    /// received), when the scale is known or inferred.
    pub window: Option<u64>,
    /// The flight against the ACK the loop (or the echo) names, before the window law
    /// moved it to a later ACK (see `sender_view.rs`), and the raw 16-bit field of that
    /// ACK's advertisement: what the scale and middlebox evidence read, where a sender
    /// beyond its window is the finding.
    pub loop_flight: u64,
    pub window_raw: u16,
    /// Flight and window against the earliest ACK the sender may have acted on: with
    /// timestamps, the first ACK of the TSval tick its segment echoed (equal to `flight`
    /// and `window` otherwise). The window-full test uses these: the sender's data reached
    /// the edge of one of the ACKs it could have had.
    pub tick_flight: u64,
    pub tick_window: Option<u64>,
    /// Flight and raw window against the freshest ACK the sender may have acted on: the
    /// next ACK when it had reached the capture point before this segment (the loop through
    /// the sender is estimated from above, and next to the sender it is microseconds), and
    /// without timestamps any ACK that passed here at least the least loop before it. A
    /// window exceeded under both is exceeded for sure.
    pub next_ack: Option<(u64, u16)>,
    /// Of `flight`, the bytes the ACK it is against had reported SACKed or left presumed
    /// lost (RFC 6675: flight - pipe then): outstanding, but not in the network.
    pub held: u64,
    /// The ACK `tick_flight` is against left a loss recovery open: data above a hole was
    /// SACKed, or duplicate ACKs counted without SACK (RFC 6675, RFC 6582). Far from the
    /// sender `held` counts only what lies between the capture point and the receiver; this
    /// says the sender's pipe was not its flight.
    pub recovering: bool,
    /// What the path between the sender and the capture point can have held beyond the
    /// flight seen here (data on its way here, ACKs on their way to the sender): the data
    /// that reached here within `near_loop` before this segment. `flight` is at most the
    /// largest flight seen here plus this.
    pub transit: u64,
    /// The loop through the sender that transit is over: the longest it can be without a
    /// wait of the sender's own, or the loop an echo named where that is longer.
    pub near_loop: Span,
    /// The loop the recent samples showed, where it was set aside for being longer than
    /// that (it would have paired the data with an ACK the sender had long since had), and
    /// the flight it would have given.
    pub set_aside: Option<(Span, u64)>,
}

/// The SACK blocks of an ACK (RFC 2018), in relative sequence numbers of the data they
/// acknowledge, as the segment carried them (at most 4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackRanges {
    pub len: u8,
    pub blocks: [(u32, u32); 4],
}

impl SackRanges {
    pub fn iter(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.blocks[..usize::from(self.len).min(4)].iter().copied()
    }
}

#[derive(Clone, Copy, Debug)]
pub struct SegmentEvent {
    /// 1-based record number in the capture.
    pub frame: u64,
    pub ts: Timestamp,
    pub flow: u64,
    pub dir: Dir,
    /// Sequence number relative to the direction's ISN (or first number seen).
    pub seq: u32,
    /// ACK number relative to the other direction's base; None without the ACK flag.
    pub ack: Option<u32>,
    pub len: u32,
    pub flags: TcpFlags,
    /// The IP header's ECN codepoint as it passed the capture point.
    pub ecn: Ecn,
    pub win_raw: u16,
    /// Scaled window in bytes, None while the scale is unknown.
    pub win_bytes: Option<u64>,
    /// Bytes in flight of this segment's direction after it, on segments carrying data,
    /// counted as Wireshark does (`Direction::seen_flight`).
    pub flight: Option<u64>,
    /// Highest sequence seen minus highest cumulative ACK, on segments carrying data.
    pub naive_flight: Option<u64>,
    /// RFC 6675 pipe of this segment's direction, on segments carrying data.
    pub pipe: Option<u64>,
    /// Segment size of this direction as known before this segment (`Connection::mss`):
    /// the unit of the pipe's loss estimate.
    pub mss: u32,
    /// The data-to-ACK RTT sample this segment's ACK produced.
    pub ack_rtt: Option<RttSample>,
    /// The timestamp-echo RTT sample this segment's TSecr produced.
    pub ts_rtt: Option<RttSample>,
    /// The least end-to-end time this segment shows for the loop through the far end (the
    /// one a bottleneck queue beside an end host lies on), sample or not: its ACK's data
    /// timed, or its TSecr's first echo, answered or not (`Rtt::far_bound`). Never less
    /// than the loop with the queue the segment's data met: an upper bound on that queue.
    pub loop_bound: Option<Span>,
    /// The segment's TSecr echoed a TSval of the peer for the first time (whether or not
    /// that gave an RTT sample): this end uses timestamps.
    pub echoed_peer_tsval: bool,
    pub send: SendOutcome,
    pub acked: AckOutcome,
    pub zero_window: bool,
    /// The segment's TSecr (RFC 7323), when it carried timestamps and an ACK: which of the
    /// peer's segments its sender had seen last.
    pub echo: Option<u32>,
    /// The segment's TSval (RFC 7323): its sender's clock when it sent it.
    pub tsval: Option<u32>,
    pub sender_view: Option<SenderView>,
    /// Bytes of this direction's outstanding data the capture point's SACK scoreboard puts
    /// out of the network: SACKed, or presumed lost and not retransmitted (RFC 6675 §4,
    /// flight - pipe). 0 without data or without SACK information.
    pub not_in_network: u64,
    /// The SACK blocks this segment carried (for the time-sequence graph).
    pub sack: SackRanges,
}
