//! Segments on the simulated wire, handshake options in Linux's layout, the middlebox
//! rewrite, and turning a segment into a capture record with [`TcpPacket`].

use super::Middlebox;
use crate::decode::{Ecn, TcpFlags};
use crate::testkit::TcpPacket;
use std::collections::HashMap;

/// An option of a SYN: absent, present, or overwritten with NOPs by a middlebox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Opt<T> {
    Absent,
    On(T),
    Nopped,
}

impl<T: Copy> Opt<T> {
    pub fn get(&self) -> Option<T> {
        match self {
            Opt::On(v) => Some(*v),
            _ => None,
        }
    }
    fn present(&self) -> bool {
        !matches!(self, Opt::Absent)
    }
    fn nop(&mut self) {
        if let Opt::On(_) = self {
            *self = Opt::Nopped;
        }
    }
}

/// Options of a SYN or SYN/ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct SynOpts {
    pub mss: Option<u16>,
    pub sack_perm: Opt<()>,
    pub ts: Opt<(u32, u32)>,
    pub wscale: Opt<u8>,
}

impl SynOpts {
    /// The option bytes in Linux's order (`tcp_options_write`): MSS, SACK-permitted
    /// folded into the timestamps' padding, then NOP + window scale. Nopped options keep
    /// their bytes' places as NOPs.
    pub fn bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(20);
        if let Some(m) = self.mss {
            b.extend_from_slice(&[2, 4]);
            b.extend_from_slice(&m.to_be_bytes());
        }
        let sack: &[u8] = match self.sack_perm {
            Opt::On(()) => &[4, 2],
            _ => &[1, 1],
        };
        match self.ts {
            Opt::Absent => {
                if self.sack_perm.present() {
                    b.extend_from_slice(&[1, 1]);
                    b.extend_from_slice(sack);
                }
            }
            Opt::Nopped => {
                b.extend_from_slice(sack);
                b.extend_from_slice(&[1; 10]);
            }
            Opt::On((val, ecr)) => {
                b.extend_from_slice(sack);
                b.extend_from_slice(&[8, 10]);
                b.extend_from_slice(&val.to_be_bytes());
                b.extend_from_slice(&ecr.to_be_bytes());
            }
        }
        match self.wscale {
            Opt::Absent => {}
            Opt::Nopped => b.extend_from_slice(&[1, 1, 1, 1]),
            Opt::On(s) => b.extend_from_slice(&[1, 3, 3, s]),
        }
        b
    }
}

/// One segment in flight.
#[derive(Clone, Debug)]
pub(super) struct Seg {
    pub flow: usize,
    /// Sender host -> receiver host (the data direction).
    pub forward: bool,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub win: u16,
    pub len: u32,
    pub ts: Option<(u32, u32)>,
    pub sack: Vec<(u32, u32)>,
    pub syn: Option<SynOpts>,
    /// Not on the wire: a zero-window probe (seq = snd_una - 1).
    pub probe: bool,
    /// The IP header's ECN codepoint.
    pub ecn: Ecn,
}

impl Seg {
    pub fn is_syn(&self) -> bool {
        self.flags & TcpFlags::SYN != 0
    }
}

/// The middlebox between the capture points: NOPs out options of the SYN / SYN-ACK and
/// clamps the MSS. Returns whether it changed anything.
pub(super) fn rewrite(seg: &mut Seg, opts: &Middlebox) -> bool {
    let syn_ack = seg.flags & TcpFlags::ACK != 0;
    let Some(o) = seg.syn.as_mut() else {
        return false;
    };
    let before = *o;
    if opts.strip_wscale.applies(syn_ack) {
        o.wscale.nop();
    }
    if opts.strip_sack.applies(syn_ack) {
        o.sack_perm.nop();
    }
    if opts.strip_timestamps.applies(syn_ack) {
        o.ts.nop();
    }
    if let (Some(c), Some(m)) = (opts.clamp_mss, o.mss) {
        o.mss = Some(m.min(c));
    }
    *o != before
}

/// Header bytes below TCP: Ethernet + IP.
pub(super) fn link_ip_len(ipv6: bool) -> u32 {
    14 + if ipv6 { 40 } else { 20 }
}

/// The TCP header length of a data segment or pure ACK with these options.
pub(super) fn tcp_len(ts: bool, sack_blocks: usize) -> u32 {
    let mut opts = if ts { 12 } else { 0 };
    if sack_blocks > 0 {
        opts += 4 + 8 * sack_blocks as u32;
    }
    20 + opts
}

/// The captured record of a segment and its length on the wire. A record cut by the
/// snaplen is built with only the payload bytes it keeps (the IP length field still
/// counts all of them), so a 1448-byte segment costs no more than a pure ACK to build;
/// its TCP checksum then covers only the kept bytes, which nothing can verify in a cut
/// record anyway.
pub(super) fn build(seg: &Seg, src: &str, dst: &str, ipv6: bool, snaplen: u32, ip_id: u16) -> (Vec<u8>, u32) {
    let mut p = TcpPacket::new(src, dst)
        .seq(seg.seq)
        .flags(seg.flags)
        .window(seg.win)
        .ecn(seg.ecn)
        .ip_id(ip_id);
    if seg.flags & TcpFlags::ACK != 0 {
        p = p.ack(seg.ack);
    }
    let opt_len = if let Some(o) = &seg.syn {
        let b = o.bytes();
        let n = b.len() as u32;
        p = p.raw_options(&b);
        n.div_ceil(4) * 4
    } else {
        if let Some((v, e)) = seg.ts {
            p = p.ts(v, e);
        }
        if !seg.sack.is_empty() {
            p = p.sack(&seg.sack);
        }
        tcp_len(seg.ts.is_some(), seg.sack.len()) - 20
    };
    let headers = link_ip_len(ipv6) + 20 + opt_len;
    let wire = (headers + seg.len).max(60);
    if wire <= snaplen {
        p = p.payload_len(seg.len as usize);
        let (_, bytes) = p.build();
        debug_assert_eq!(bytes.len() as u32, wire);
        return (bytes, wire);
    }
    let keep = snaplen.saturating_sub(headers).min(seg.len);
    let ip_len = headers - 14 + seg.len;
    p = p.payload_len(keep as usize);
    p = if ipv6 {
        p.ipv6_payload_len((ip_len - 40) as u16)
    } else {
        p.ipv4_total_len(ip_len as u16)
    };
    let (_, bytes) = p.snaplen(snaplen as usize).build();
    (bytes, wire)
}

/// Marks a built record Congestion Experienced (RFC 3168 §5) as a router's queue does:
/// the ECN bits of the IP header set to 11, an IPv4 header's checksum updated for the
/// changed word (RFC 1624 eqn. 3; IPv6 has none).
pub(super) fn mark_ce(bytes: &mut [u8], ipv6: bool) {
    const IP: usize = 14;
    if ipv6 {
        // Traffic Class spans bytes 0-1: its low two bits are bits 5-4 of byte 1.
        bytes[IP + 1] |= 0x30;
        return;
    }
    let old = u16::from_be_bytes([bytes[IP], bytes[IP + 1]]);
    bytes[IP + 1] |= 0b11;
    let new = u16::from_be_bytes([bytes[IP], bytes[IP + 1]]);
    let hc = u16::from_be_bytes([bytes[IP + 10], bytes[IP + 11]]);
    let mut sum = (!hc) as u32 + (!old) as u32 + new as u32;
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    bytes[IP + 10..IP + 12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
}

/// Builds records, reusing one [`TcpPacket`]-built record per flow, direction, flags and
/// length as a template for the segments that differ from it only in sequence and
/// acknowledgment numbers, window and timestamps (and the IPv4 identification): those
/// fields are patched and the checksums updated incrementally (RFC 1624). Building a record from scratch costs
/// tens of microseconds in a debug build; a patch, a copy.
#[derive(Default)]
pub(super) struct Builder {
    cache: HashMap<Shape, (Vec<u8>, u32)>,
}

/// Flow, direction, flags, payload length, timestamps present, ECN codepoint.
type Shape = (usize, bool, u8, u32, bool, Ecn);

/// The Ethernet header before the IP header.
const ETHERNET: usize = 14;
/// Offsets of the patched fields from the start of the TCP header.
const SEQ: usize = 4;
const ACK: usize = 8;
const WIN: usize = 14;
const CSUM: usize = 16;
const TSVAL: usize = 24;
const TSECR: usize = 28;

impl Builder {
    pub fn build(&mut self, seg: &Seg, src: &str, dst: &str, ipv6: bool, snaplen: u32, ip_id: u16) -> (Vec<u8>, u32) {
        if seg.syn.is_some() || !seg.sack.is_empty() {
            return build(seg, src, dst, ipv6, snaplen, ip_id);
        }
        let tcp = link_ip_len(ipv6) as usize;
        let hdr = tcp_len(seg.ts.is_some(), 0) as usize;
        let key = (seg.flow, seg.forward, seg.flags, seg.len, seg.ts.is_some(), seg.ecn);
        if let Some((tpl, wire)) = self.cache.get(&key) {
            if tpl.len() >= tcp + hdr {
                let mut b = tpl.clone();
                let mut sum = !u16::from_be_bytes([b[tcp + CSUM], b[tcp + CSUM + 1]]) as u32;
                let mut put = |b: &mut [u8], at: usize, new: &[u8]| {
                    for (i, w) in new.chunks_exact(2).enumerate() {
                        let p = tcp + at + 2 * i;
                        let old = u16::from_be_bytes([b[p], b[p + 1]]);
                        sum += (!old) as u32 + u16::from_be_bytes([w[0], w[1]]) as u32;
                        b[p..p + 2].copy_from_slice(w);
                    }
                };
                put(&mut b, SEQ, &seg.seq.to_be_bytes());
                put(&mut b, ACK, &seg.ack.to_be_bytes());
                put(&mut b, WIN, &seg.win.to_be_bytes());
                if let Some((v, e)) = seg.ts {
                    put(&mut b, TSVAL, &v.to_be_bytes());
                    put(&mut b, TSECR, &e.to_be_bytes());
                }
                while sum > 0xffff {
                    sum = (sum & 0xffff) + (sum >> 16);
                }
                b[tcp + CSUM..tcp + CSUM + 2].copy_from_slice(&(!(sum as u16)).to_be_bytes());
                if !ipv6 {
                    // The identification at 4 of the IPv4 header, its checksum at 10.
                    let (id_at, sum_at) = (ETHERNET + 4, ETHERNET + 10);
                    let old = u16::from_be_bytes([b[id_at], b[id_at + 1]]);
                    let mut sum = !u16::from_be_bytes([b[sum_at], b[sum_at + 1]]) as u32 + (!old) as u32 + ip_id as u32;
                    while sum > 0xffff {
                        sum = (sum & 0xffff) + (sum >> 16);
                    }
                    b[id_at..id_at + 2].copy_from_slice(&ip_id.to_be_bytes());
                    b[sum_at..sum_at + 2].copy_from_slice(&(!(sum as u16)).to_be_bytes());
                }
                return (b, *wire);
            }
        }
        let built = build(seg, src, dst, ipv6, snaplen, ip_id);
        self.cache.insert(key, built.clone());
        built
    }
}

#[cfg(test)]
mod tests {
    use super::mark_ce;
    use crate::decode::{decode, Ecn};
    use crate::testkit::TcpPacket;

    #[test]
    fn a_mark_sets_ce_and_keeps_the_ipv4_checksum_valid() {
        for (src, dst, v6) in [
            ("10.0.0.2:5001", "10.0.0.1:40000", false),
            ("[fd00::2]:5001", "[fd00::1]:40000", true),
        ] {
            let (link, mut bytes) = TcpPacket::new(src, dst).payload_len(100).ecn(Ecn::Ect0).build();
            mark_ce(&mut bytes, v6);
            assert_eq!(decode(link, &bytes).unwrap().ecn, Ecn::Ce);
            if !v6 {
                // The header's one's-complement sum, checksum included, is all ones.
                let h = &bytes[14..34];
                let mut sum: u32 = h.chunks(2).map(|w| u16::from_be_bytes([w[0], w[1]]) as u32).sum();
                while sum > 0xffff {
                    sum = (sum & 0xffff) + (sum >> 16);
                }
                assert_eq!(sum, 0xffff);
            }
        }
    }
}
