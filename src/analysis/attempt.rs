//! A connection attempt held cheaply: until a connection carries data, what it went
//! through is a few control segments (a SYN, maybe its retransmissions, a SYN/ACK, a
//! reset), and the full tracker (RTT loops, scoreboards, histograms, dispersion,
//! timelines, middlebox evidence, scale inference: ~4 KB and more once allocated) would
//! only remember them. So the front logs them in 40 bytes each and builds the tracker
//! only when the connection turns out to matter: its first payload, a segment the log
//! cannot hold, or a listed summary. Replaying the log gives the tracker exactly the state
//! it would have had: the same segments, in the same order, with the same times.

use crate::decode::{Ecn, SackBlocks, Segment, TcpFlags, TcpOptions, Timestamps};
use crate::flow::{Dir, Endpoint, FlowKey, Life};
use crate::seq::SeqNum;
use crate::time::{Span, Timestamp};

/// Control segments logged before an attempt is given its full tracker anyway: a SYN
/// retried six times and a SYN/ACK retried five (Linux's defaults) fit.
pub(crate) const MAX_LOGGED: usize = 16;

const C2S: u8 = 1;
const COMPLETE: u8 = 1 << 1;
const SACK_PERMITTED: u8 = 1 << 2;
const HAS_MSS: u8 = 1 << 3;
const HAS_WSCALE: u8 = 1 << 4;
const HAS_OVER_14: u8 = 1 << 5;
const HAS_TIMESTAMPS: u8 = 1 << 6;
/// The AE flag (RFC 9768: Accurate ECN's SYN sets it).
const AE: u8 = 1 << 7;

/// One segment without payload, relative to the connection's first: enough to rebuild
/// the `Segment` the decoder gave, bit for bit. 40 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Logged {
    ts: i64,
    frame: u32,
    seq: u32,
    ack: u32,
    tsval: u32,
    tsecr: u32,
    window: u16,
    mss: u16,
    flags: u8,
    wscale: u8,
    over_14: u8,
    bits: u8,
    /// The IP header's ECN codepoint (in the padding: still 40 bytes).
    ecn: Ecn,
    /// The option area's longest NOP run (SYNs; in the padding too).
    nop_run: u8,
}

impl Logged {
    /// The segment as a log entry, if the log can hold it: no payload, no SACK blocks,
    /// within 2^32 records of the first.
    pub(crate) fn of(seg: &Segment, dir: Dir, frame: u64, ts: Timestamp, life: &Life) -> Option<Logged> {
        let o = &seg.options;
        if seg.payload_len > 0 || o.sack.len > 0 {
            return None;
        }
        let frame = u32::try_from(frame.checked_sub(life.first_frame)?).ok()?;
        let mut bits = 0;
        let mut set = |on: bool, b: u8| {
            if on {
                bits |= b
            }
        };
        set(dir == Dir::C2S, C2S);
        set(o.complete, COMPLETE);
        set(o.sack_permitted, SACK_PERMITTED);
        set(o.mss.is_some(), HAS_MSS);
        set(o.wscale.is_some(), HAS_WSCALE);
        set(o.wscale_raw_over_14.is_some(), HAS_OVER_14);
        set(o.timestamps.is_some(), HAS_TIMESTAMPS);
        set(seg.ae, AE);
        let t = o.timestamps.unwrap_or(Timestamps { val: 0, ecr: 0 });
        Some(Logged {
            ts: (ts - life.first_ts).nanos(),
            frame,
            seq: seg.seq.0,
            ack: seg.ack.0,
            tsval: t.val,
            tsecr: t.ecr,
            window: seg.window,
            mss: o.mss.unwrap_or(0),
            flags: seg.flags.0,
            wscale: o.wscale.unwrap_or(0),
            over_14: o.wscale_raw_over_14.unwrap_or(0),
            bits,
            ecn: seg.ecn,
            nop_run: o.nop_run,
        })
    }

    fn has(&self, b: u8) -> bool {
        self.bits & b != 0
    }

    /// The segment back, with its direction, record number and time.
    pub(crate) fn segment(&self, client: Endpoint, server: Endpoint, life: &Life) -> (Segment, Dir, u64, Timestamp) {
        let dir = if self.has(C2S) { Dir::C2S } else { Dir::S2C };
        let (src, dst) = if dir == Dir::C2S {
            (client, server)
        } else {
            (server, client)
        };
        let bit = |b: u8| self.has(b);
        let seg = Segment {
            src: src.addr,
            dst: dst.addr,
            ecn: self.ecn,
            src_port: src.port,
            dst_port: dst.port,
            seq: SeqNum(self.seq),
            ack: SeqNum(self.ack),
            flags: TcpFlags(self.flags),
            ae: self.has(AE),
            window: self.window,
            payload_len: 0,
            options: TcpOptions {
                complete: self.has(COMPLETE),
                mss: bit(HAS_MSS).then_some(self.mss),
                wscale: bit(HAS_WSCALE).then_some(self.wscale),
                wscale_raw_over_14: bit(HAS_OVER_14).then_some(self.over_14),
                sack_permitted: self.has(SACK_PERMITTED),
                sack: SackBlocks::default(),
                timestamps: bit(HAS_TIMESTAMPS).then_some(Timestamps {
                    val: self.tsval,
                    ecr: self.tsecr,
                }),
                nop_run: self.nop_run,
            },
            ip_id: None,
        };
        (
            seg,
            dir,
            life.first_frame + self.frame as u64,
            life.first_ts + Span(self.ts),
        )
    }
}

/// An attempt's segments: the first in place (most attempts of a flood have one), the
/// others on the heap.
#[derive(Clone, Debug, Default)]
pub(crate) struct Log {
    first: Option<Logged>,
    rest: Vec<Logged>,
}

impl Log {
    pub(crate) fn len(&self) -> usize {
        self.first.is_some() as usize + self.rest.len()
    }

    /// Adds a segment; the heap bytes it took.
    pub(crate) fn push(&mut self, l: Logged) -> u64 {
        if self.first.is_none() {
            self.first = Some(l);
            return 0;
        }
        let before = self.rest.capacity();
        // One element at a time: a log rarely holds more than a handful.
        self.rest.reserve_exact(1);
        self.rest.push(l);
        ((self.rest.capacity() - before) * std::mem::size_of::<Logged>()) as u64
    }

    /// Bytes on the heap.
    pub(crate) fn heap_bytes(&self) -> u64 {
        (self.rest.capacity() * std::mem::size_of::<Logged>()) as u64
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Logged> {
        self.first.iter().chain(self.rest.iter())
    }
}

/// Everything needed to build an attempt's tracker: who it is, and its log.
#[derive(Clone, Debug)]
pub(crate) struct Attempt {
    pub key: FlowKey,
    pub life: Life,
    pub log: Log,
}

impl Attempt {
    /// (client, server) of the attempt.
    pub(crate) fn ends(&self) -> (Endpoint, Endpoint) {
        ends(&self.key, &self.life)
    }
}

/// (client, server) of a connection from its key and life.
pub(crate) fn ends(key: &FlowKey, life: &Life) -> (Endpoint, Endpoint) {
    if life.client_is_lo {
        (key.lo, key.hi)
    } else {
        (key.hi, key.lo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::LinkType;
    use crate::testkit::TcpPacket;

    #[test]
    fn a_logged_segment_comes_back_as_decoded() {
        let (c, s) = ("10.0.0.1:40000", "[fd00::2]:80");
        let c6 = "[fd00::1]:40000";
        let packets = [
            TcpPacket::new(c6, s)
                .syn()
                .seq(100)
                .mss(1400)
                .wscale(7)
                .sack_perm()
                .ts(5, 0),
            TcpPacket::new(s, c6)
                .syn()
                .ack(101)
                .seq(9)
                .mss(1460)
                .wscale(15)
                .ts(77, 5),
            TcpPacket::new(c6, s).rst().seq(101),
            TcpPacket::new(c, "10.0.0.2:80").fin().ack(3).seq(4).window(0),
            // An AccECN SYN (AE, CWR, ECE; RFC 9768 §3.1.1) sent ECT(0), as ECN++ would.
            TcpPacket::new(c6, s)
                .flags(TcpFlags::SYN | TcpFlags::ECE | TcpFlags::CWR)
                .ae()
                .ecn(Ecn::Ect0)
                .seq(7),
            TcpPacket::new(c, "10.0.0.2:80").ack(3).seq(4).ecn(Ecn::Ce),
        ];
        for p in packets {
            let (_, bytes) = p.ethernet().build();
            let seg = crate::decode::decode(LinkType::ETHERNET, &bytes).unwrap();
            let (src, dst) = Endpoint::pair_of(&seg);
            let (key, src_lo) = FlowKey::of(src, dst);
            let life = Life::new(3, src_lo, true, 10, Timestamp(1_000));
            let l = Logged::of(&seg, Dir::C2S, 12, Timestamp(5_000), &life).expect("loggable");
            let (back, dir, frame, ts) = l.segment(src, dst, &life);
            assert_eq!((back, dir, frame, ts), (seg, Dir::C2S, 12, Timestamp(5_000)));
            assert_eq!(ends(&key, &life), (src, dst));
        }
        assert_eq!(std::mem::size_of::<Logged>(), 40);
    }

    #[test]
    fn payload_and_sack_blocks_are_not_logged() {
        let life = Life::new(0, true, true, 1, Timestamp(0));
        let (_, bytes) = TcpPacket::new("10.0.0.1:1", "10.0.0.2:2")
            .payload_len(1)
            .ethernet()
            .build();
        let seg = crate::decode::decode(LinkType::ETHERNET, &bytes).unwrap();
        assert_eq!(Logged::of(&seg, Dir::C2S, 1, Timestamp(0), &life), None);
        let (_, bytes) = TcpPacket::new("10.0.0.1:1", "10.0.0.2:2")
            .sack(&[(5, 9)])
            .ethernet()
            .build();
        let seg = crate::decode::decode(LinkType::ETHERNET, &bytes).unwrap();
        assert_eq!(Logged::of(&seg, Dir::C2S, 1, Timestamp(0), &life), None);
    }
}
