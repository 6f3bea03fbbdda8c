//! The life of one connection as the flow table sees it: when it started, when it was
//! last heard of, whether it closed, carried data or was answered — what deciding its end
//! needs, kept for every live connection whatever holds its full state (the attempt log
//! of `analysis::front`, or a worker's tracker).
//!
//! The rules that cut one connection from the next are the tracker's own (`tcp::Connection`:
//! a SYN with a new ISN after data or a FIN, any SYN after a close, a SYN from the end that
//! was taken for the server), read from the few facts below, which follow the segments
//! exactly as `Connection::track` does; expiry is [`Timeouts`].

use crate::decode::Segment;
use crate::endpoint::{Dir, Endpoint};
use crate::seq::SeqNum;
use crate::time::{Span, Timestamp};

/// How long a connection may stay silent before it is over, by what it went through.
/// Time is capture time (packet timestamps), never the clock.
///
/// The choice follows the two trackers users know, Linux conntrack
/// (`nf_conntrack_proto_tcp.c`, `tcp_timeouts[]`) and Zeek (`init-bare.zeek`), where they
/// agree with what an analyser needs — never to cut one connection in two:
///
/// | state | here | conntrack | Zeek | why here |
/// |---|---|---|---|---|
/// | SYN sent, no answer | 120 s | SYN_SENT 120 s | `tcp_attempt_delay` 5 s | a client retries its SYN with doubling gaps (Linux: 1, 2, 4 ... 32 s, `tcp_syn_retries` = 6, gives up after 127 s): Zeek's 5 s would make each retry after the 3rd a new attempt |
/// | SYN/ACK seen, handshake not completed | 60 s | SYN_RECV 60 s | 5 s | the server retries its SYN/ACK for ~63 s (`tcp_synack_retries` = 5) |
/// | established, or picked up mid-stream | 300 s | ESTABLISHED 5 days | `tcp_inactivity_timeout` 5 min | as before this change and as Zeek; conntrack's 5 days keeps idle firewall state, an analyser would keep a dead connection's state all capture long. A pause longer than this starts a new flow (its next packet) |
/// | closed (FIN both ways) or reset | 10 s after the close | CLOSE 10 s, TIME_WAIT 120 s | `tcp_close_delay`, `tcp_reset_delay` 5 s | late retransmissions and the last ACKs arrive within a few RTOs |
///
/// Memory is bounded by the budget (`Budget`), not by these timeouts: a flood of SYNs
/// that are never answered fills the table long before 120 s have passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    pub syn_sent: Span,
    pub syn_received: Span,
    pub established: Span,
    pub closed: Span,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            syn_sent: Span::from_millis(120_000),
            syn_received: Span::from_millis(60_000),
            established: Span::from_millis(300_000),
            closed: Span::from_millis(10_000),
        }
    }
}

impl Timeouts {
    /// The shortest: a connection heard of within it has not expired, whatever its state.
    #[inline]
    pub fn shortest(&self) -> Span {
        self.syn_sent
            .min(self.syn_received)
            .min(self.established)
            .min(self.closed)
    }

    /// The longest any live connection can stay silent.
    pub fn longest(&self) -> Span {
        self.syn_sent
            .max(self.syn_received)
            .max(self.established)
            .max(self.closed)
    }
}

/// Why a connection's life ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum End {
    /// A segment of the same 4-tuple started a new connection.
    Replaced,
    /// Silent for longer than its state's timeout.
    Expired(State),
    /// The memory budget needed its room (the least valuable connections go first).
    Evicted,
    /// The end of the capture.
    CaptureEnd,
}

/// What a connection went through, as far as its timeout is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    SynSent,
    SynReceived,
    Established,
    Closed,
}

/// What an attempt came to (Zeek's conn_state, coarser): for the flood and scan watcher.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// No packet from the server.
    Unanswered,
    /// The server answered the SYN with a reset (Zeek's REJ).
    Refused,
    /// The server sent its SYN/ACK, the client never completed the handshake (Zeek's S1
    /// without the ACK, or RSTO after SH: a half-open or "SYN scan" probe).
    HalfOpen,
    /// The handshake completed, no data either way.
    Completed,
    /// Payload in at least one direction.
    Data,
}

impl Outcome {
    /// Zeek's failed connection (`scan.zeek`'s `is_failed_conn`): no data, and the
    /// handshake never completed.
    pub fn failed(self) -> bool {
        matches!(self, Outcome::Unanswered | Outcome::Refused | Outcome::HalfOpen)
    }
    /// The server answered at all.
    pub fn answered(self) -> bool {
        self != Outcome::Unanswered
    }
}

const BY_SYN: u16 = 1;
const FIN_C2S: u16 = 1 << 1;
const FIN_S2C: u16 = 1 << 2;
const DATA_C2S: u16 = 1 << 3;
const DATA_S2C: u16 = 1 << 4;
/// A SYN of the client was seen.
const SYN: u16 = 1 << 5;
const SYN_ACK: u16 = 1 << 6;
/// The server sent anything.
const SERVER_SPOKE: u16 = 1 << 7;
const SERVER_RST: u16 = 1 << 8;
/// The client acknowledged after the SYN/ACK (the third segment of the handshake).
const COMPLETED: u16 = 1 << 9;
/// The front holds a count of its capture duplicates apart (what it costs the budget).
const COPIES_HELD: u16 = 1 << 10;

/// The facts about one live connection that decide its end. 64 bytes.
#[derive(Clone, Debug)]
pub struct Life {
    pub id: u64,
    pub first_frame: u64,
    pub first_ts: Timestamp,
    pub last_ts: Timestamp,
    /// When the connection closed (`ConnState::Closed`): RST, or the segment that brought
    /// the second FIN. A later RST moves it, as in the tracker.
    closed_at: Option<Timestamp>,
    /// The ISN of the client's last SYN (`Handshake::syn`).
    syn_isn: Option<SeqNum>,
    /// Whether the key's lower endpoint is the client.
    pub client_is_lo: bool,
    bits: u16,
    /// Segments seen before the first payload (capped): what an attempt's log holds.
    pub quiet_segments: u16,
}

impl Life {
    pub fn new(id: u64, client_is_lo: bool, by_syn: bool, frame: u64, ts: Timestamp) -> Life {
        Life {
            id,
            first_frame: frame,
            first_ts: ts,
            last_ts: ts,
            closed_at: None,
            syn_isn: None,
            client_is_lo,
            bits: if by_syn { BY_SYN } else { 0 },
            quiet_segments: 0,
        }
    }

    #[inline]
    fn has(&self, b: u16) -> bool {
        self.bits & b != 0
    }

    pub fn by_syn(&self) -> bool {
        self.has(BY_SYN)
    }

    /// Whether a count of its capture duplicates is held apart (`analysis::front`: an
    /// attempt's, until it ends or gets its tracker): the budget counts its bytes.
    pub fn copies_held(&self) -> bool {
        self.has(COPIES_HELD)
    }

    pub fn hold_copies(&mut self, held: bool) {
        if held {
            self.bits |= COPIES_HELD;
        } else {
            self.bits &= !COPIES_HELD;
        }
    }

    /// Payload seen in `d` (`Direction::data_segments > 0`).
    pub fn data(&self, d: Dir) -> bool {
        self.has(if d == Dir::C2S { DATA_C2S } else { DATA_S2C })
    }

    #[inline]
    pub fn any_data(&self) -> bool {
        self.has(DATA_C2S | DATA_S2C)
    }

    pub fn closed(&self) -> bool {
        self.closed_at.is_some()
    }

    /// Whether a SYN (without ACK) from the client starts a new connection rather than
    /// retransmitting this one's: `Connection::is_new_incarnation` on these facts.
    pub fn is_new_incarnation(&self, seg: &Segment) -> bool {
        if self.closed() {
            return true;
        }
        match self.syn_isn {
            Some(isn) => isn != seg.seq && (self.any_data() || self.has(FIN_C2S | FIN_S2C)),
            None => self.any_data(),
        }
    }

    /// The state its timeout is chosen by.
    #[inline]
    pub fn state(&self) -> State {
        if self.closed() {
            State::Closed
        } else if self.any_data() || self.has(COMPLETED) || !self.has(SYN) {
            State::Established
        } else if self.has(SYN_ACK) {
            State::SynReceived
        } else {
            State::SynSent
        }
    }

    /// Whether the connection is over at `now` (silent past its state's timeout).
    #[inline]
    pub fn expired(&self, now: Timestamp, t: &Timeouts) -> Option<State> {
        // Every timeout runs from the last packet or later.
        if now - self.last_ts <= t.shortest() {
            return None;
        }
        let state = self.state();
        let (since, limit) = match state {
            State::Closed => (self.closed_at.map_or(self.last_ts, |c| c.max(self.last_ts)), t.closed),
            State::SynSent => (self.last_ts, t.syn_sent),
            State::SynReceived => (self.last_ts, t.syn_received),
            State::Established => (self.last_ts, t.established),
        };
        (now - since > limit).then_some(state)
    }

    /// What the attempt came to.
    pub fn outcome(&self) -> Outcome {
        if self.any_data() {
            Outcome::Data
        } else if self.has(COMPLETED) {
            Outcome::Completed
        } else if self.has(SYN_ACK) {
            Outcome::HalfOpen
        } else if self.has(SERVER_RST) || self.has(SERVER_SPOKE) {
            Outcome::Refused
        } else {
            Outcome::Unanswered
        }
    }

    /// How much keeping this connection is worth, for the memory budget: what never
    /// carried data goes first, then closed connections, then one-way, then two-way
    /// transfers (conntrack's early drop likewise spares "assured" connections).
    pub fn value(&self) -> u8 {
        match (
            self.any_data(),
            self.closed(),
            self.data(Dir::C2S) && self.data(Dir::S2C),
        ) {
            (false, _, _) => 0,
            (true, true, _) => 1,
            (true, false, false) => 2,
            (true, false, true) => 3,
        }
    }

    /// [`Self::observe`] for a segment without SYN, FIN or RST (most of them): what it can
    /// change is the time, who spoke, the handshake's completion and the data seen.
    #[inline]
    pub fn observe_plain(&mut self, seg: &Segment, dir: Dir, ts: Timestamp) {
        debug_assert!(!seg.flags.syn() && !seg.flags.fin() && !seg.flags.rst());
        self.last_ts = self.last_ts.max(ts);
        let data = seg.payload_len > 0;
        if !data && !self.any_data() {
            self.quiet_segments = self.quiet_segments.saturating_add(1);
        }
        let b = self.bits;
        self.bits = b | if dir == Dir::C2S {
            // The ACK after the SYN/ACK completes the handshake.
            (if seg.flags.ack() && b & SYN_ACK != 0 {
                COMPLETED
            } else {
                0
            }) | if data { DATA_C2S } else { 0 }
        } else {
            SERVER_SPOKE | if data { DATA_S2C } else { 0 }
        };
    }

    /// Takes in one segment going `dir`, in the order `Connection::track` does.
    #[inline]
    pub fn observe(&mut self, seg: &Segment, dir: Dir, ts: Timestamp) {
        self.last_ts = self.last_ts.max(ts);
        if seg.payload_len == 0 && !self.any_data() {
            self.quiet_segments = self.quiet_segments.saturating_add(1);
        }
        let f = seg.flags;
        let c2s = dir == Dir::C2S;
        if f.syn() && !f.ack() && c2s {
            self.syn_isn = Some(seg.seq);
            self.bits |= SYN;
        } else if f.syn() && f.ack() && !c2s {
            self.bits |= SYN_ACK;
        } else if c2s && f.ack() && !f.syn() && self.has(SYN_ACK) {
            self.bits |= COMPLETED;
        }
        if !c2s {
            self.bits |= SERVER_SPOKE;
            if f.rst() {
                self.bits |= SERVER_RST;
            }
        }
        if f.fin() {
            self.bits |= if c2s { FIN_C2S } else { FIN_S2C };
        }
        if seg.payload_len > 0 {
            self.bits |= if c2s { DATA_C2S } else { DATA_S2C };
        }
        // A reset closes (again, later); the second FIN closes once.
        let second_fin = self.has(FIN_C2S) && self.has(FIN_S2C) && self.closed_at.is_none();
        if f.rst() || second_fin {
            self.closed_at = Some(ts);
        }
    }
}

/// The ends of a new connection from its first segment: the client is the SYN's sender
/// (or the SYN/ACK's receiver); without either, the end with the higher (ephemeral) port,
/// as the spec says. Returns (client, server, chosen by a SYN).
pub fn roles(seg: &Segment, src: Endpoint, dst: Endpoint) -> (Endpoint, Endpoint, bool) {
    if seg.flags.syn() && !seg.flags.ack() {
        (src, dst, true)
    } else if seg.flags.syn() {
        (dst, src, true)
    } else if src.port > dst.port || (src.port == dst.port && src <= dst) {
        (src, dst, false)
    } else {
        (dst, src, false)
    }
}

/// Whether a segment of the live connection `life`, sent by its client or not, at `ts`,
/// starts a new connection on the same tuple instead: a SYN from the client that is no
/// retransmission of this one's (port reuse), a SYN from the other end (the roles were
/// guessed mid-stream and a connection starts the other way), or any segment after the
/// connection expired.
pub fn starts_new(life: &Life, seg: &Segment, from_client: bool, ts: Timestamp, t: &Timeouts) -> bool {
    if seg.flags.syn() && !seg.flags.ack() {
        !from_client || life.is_new_incarnation(seg)
    } else {
        life.expired(ts, t).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::LinkType;
    use crate::testkit::TcpPacket;

    fn seg(p: TcpPacket) -> Segment {
        let (_, bytes) = p.ethernet().build();
        crate::decode::decode(LinkType::ETHERNET, &bytes).unwrap()
    }
    const C: &str = "10.0.0.1:40000";
    const S: &str = "10.0.0.2:80";
    fn secs(s: i64) -> Timestamp {
        Timestamp(s * 1_000_000_000)
    }

    #[test]
    fn the_timeout_follows_the_handshake() {
        let t = Timeouts::default();
        let mut l = Life::new(0, true, true, 1, secs(0));
        l.observe(&seg(TcpPacket::new(C, S).syn().seq(100)), Dir::C2S, secs(0));
        assert_eq!(l.state(), State::SynSent);
        assert_eq!(l.outcome(), Outcome::Unanswered);
        assert_eq!(l.expired(secs(120), &t), None);
        assert_eq!(l.expired(secs(121), &t), Some(State::SynSent));
        l.observe(&seg(TcpPacket::new(S, C).syn().ack(101).seq(7)), Dir::S2C, secs(1));
        assert_eq!((l.state(), l.outcome()), (State::SynReceived, Outcome::HalfOpen));
        assert_eq!(l.expired(secs(62), &t), Some(State::SynReceived));
        l.observe(&seg(TcpPacket::new(C, S).seq(101).ack(8)), Dir::C2S, secs(2));
        assert_eq!((l.state(), l.outcome()), (State::Established, Outcome::Completed));
        assert_eq!(l.expired(secs(302), &t), None);
        l.observe(
            &seg(TcpPacket::new(C, S).seq(101).ack(8).payload_len(10)),
            Dir::C2S,
            secs(3),
        );
        assert_eq!((l.outcome(), l.value()), (Outcome::Data, 2));
        l.observe(&seg(TcpPacket::new(S, C).rst().seq(8)), Dir::S2C, secs(4));
        assert_eq!((l.state(), l.value()), (State::Closed, 1));
        assert_eq!(l.expired(secs(14), &t), None);
        assert_eq!(l.expired(secs(15), &t), Some(State::Closed));
    }

    #[test]
    fn plain_segments_are_observed_as_any_other() {
        let t = |s: i64| secs(s);
        let packets = [
            (TcpPacket::new(C, S).syn().seq(100), Dir::C2S),
            (TcpPacket::new(S, C).syn().ack(101).seq(7), Dir::S2C),
            (TcpPacket::new(C, S).seq(101).ack(8), Dir::C2S),
            (TcpPacket::new(S, C).seq(8).ack(101).payload_len(10), Dir::S2C),
            (TcpPacket::new(C, S).seq(101).ack(18).payload_len(5), Dir::C2S),
            (TcpPacket::new(C, S).seq(106).ack(18), Dir::C2S),
        ];
        let (mut a, mut b) = (Life::new(0, true, true, 1, t(0)), Life::new(0, true, true, 1, t(0)));
        for (i, (p, d)) in packets.into_iter().enumerate() {
            let s = seg(p);
            a.observe(&s, d, t(i as i64));
            if s.flags.syn() {
                b.observe(&s, d, t(i as i64));
            } else {
                b.observe_plain(&s, d, t(i as i64));
            }
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "segment {i}");
        }
    }

    #[test]
    fn a_reset_answer_is_a_refusal_and_a_new_syn_after_it_a_new_connection() {
        let mut l = Life::new(0, true, true, 1, secs(0));
        let syn = seg(TcpPacket::new(C, S).syn().seq(100));
        l.observe(&syn, Dir::C2S, secs(0));
        assert!(!l.is_new_incarnation(&syn), "a retransmitted SYN");
        l.observe(&seg(TcpPacket::new(S, C).rst().ack(101)), Dir::S2C, secs(0));
        assert_eq!((l.outcome(), l.value()), (Outcome::Refused, 0));
        assert!(l.outcome().failed());
        assert!(l.is_new_incarnation(&syn), "after a close any SYN starts anew");
    }
}
