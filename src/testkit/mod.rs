//! Hand-built packets and captures for tests.
//!
//! [`TcpPacket`] builds one captured record — link header, IP header(s), TCP header with
//! options, payload — the way a capture point would see it, including the things real
//! captures do: snaplen cuts, Ethernet padding, VLAN/PPPoE/MPLS stacks, TSO-sized
//! segments. To make a whole capture of them, hand `build()` and `wire_len()` to
//! [`crate::capture::PcapWriter`]:
//!
//! ```
//! use bdpscope::capture::PcapWriter;
//! use bdpscope::testkit::TcpPacket;
//! use bdpscope::time::Timestamp;
//!
//! let syn = TcpPacket::new("10.0.0.1:40000", "10.0.0.2:80").syn().mss(1460);
//! let (link, bytes) = syn.build();
//! let mut w = PcapWriter::new(Vec::new(), link, 65535, false, false).unwrap();
//! w.write_packet(Timestamp::from_nanos(1_000_000_000), &bytes, syn.wire_len() as u32).unwrap();
//! let file: Vec<u8> = w.into_inner();
//! ```
//!
//! ```
//! use bdpscope::decode::{decode, TcpFlags};
//! use bdpscope::testkit::TcpPacket;
//!
//! let syn = TcpPacket::new("10.0.0.1:40000", "10.0.0.2:5001")
//!     .seq(1000)
//!     .flags(TcpFlags::SYN)
//!     .mss(1460)
//!     .sack_perm()
//!     .ts(1, 0)
//!     .wscale(7)
//!     .vlan(42);
//! let (link, bytes) = syn.build();
//! let seg = decode(link, &bytes).unwrap();
//! assert_eq!((seg.options.mss, seg.options.wscale), (Some(1460), Some(7)));
//!
//! // A 1448-byte data segment captured with `tcpdump -s 96`: the payload length still
//! // comes from the IP header.
//! let data = TcpPacket::new("10.0.0.2:5001", "10.0.0.1:40000")
//!     .seq(5000).ack(1001).ts(100, 7).payload_len(1448).snaplen(96);
//! let (link, bytes) = data.build();
//! assert_eq!(bytes.len(), 96);
//! assert_eq!(decode(link, &bytes).unwrap().payload_len, 1448);
//! ```
//!
//! Builder methods take and return the builder by value; `build` borrows it, so one
//! template can be cloned and varied. Misuse (an unparsable address, mixed address
//! families, more than 40 option bytes) panics: this is test code.

pub mod scan;
pub mod sim;

use crate::capture::LinkType;
use crate::decode::{decode_printed, Ecn, Print, Segment, Skip, TcpFlags};
use std::net::{IpAddr, SocketAddr};

/// Builder of one TCP segment as a captured record. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct TcpPacket {
    src: SocketAddr,
    dst: SocketAddr,
    seq: u32,
    ack: u32,
    flags: u8,
    /// The AE flag (RFC 9768), the low bit of byte 12.
    ae: bool,
    window: u16,
    options: Vec<u8>,
    data_offset: Option<u8>,
    payload: Payload,
    captured_payload: Option<usize>,
    snaplen: Option<usize>,
    ip: IpShape,
    link: Link,
}

#[derive(Clone, Debug)]
enum Payload {
    /// `n` bytes of a readable pattern (`abc...z`).
    Pattern(usize),
    Bytes(Vec<u8>),
}

#[derive(Clone, Debug)]
struct IpShape {
    ttl: u8,
    /// ECN codepoint of the (inner) IP header and of a tunnel's outer header.
    ecn: Ecn,
    outer_ecn: Ecn,
    /// The IPv4 identification: 0 by default (a source that does not number its atomic
    /// datagrams, as Linux's RSTs and FreeBSD's every one: RFC 6864 §4.1).
    ip_id: u16,
    ipv4_options: Vec<u8>,
    ipv4_total_len: Option<u16>,
    /// Flags + fragment offset field; DF set by default, as Linux sends TCP.
    ipv4_frag: u16,
    ipv6_payload_len: Option<u16>,
    /// Extension headers in order: (kind, header bytes without the next-header byte).
    ipv6_ext: Vec<(u8, Vec<u8>)>,
    tunnel: Option<(IpAddr, IpAddr)>,
}

#[derive(Clone, Debug)]
enum Link {
    Ethernet {
        tags: Vec<(u16, u16)>,
        pppoe: Option<u16>,
        mpls: Vec<u32>,
    },
    Sll,
    Sll2,
    Raw(LinkType),
    Null {
        big_endian: bool,
    },
    Loop,
    Ppp,
    Ipoib,
    Arcnet,
}

const SRC_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
const DST_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];
/// Ethernet frames shorter than this (without FCS) are padded by the sender.
const ETHERNET_MIN_FRAME: usize = 60;

/// The segment and the fingerprint the analysis reads from a record (tests compare both).
pub fn printed(link: LinkType, bytes: &[u8]) -> Result<(Segment, Print), Skip> {
    let mut print = Print::default();
    decode_printed(link, bytes, &mut print).map(|seg| (seg, print))
}

impl TcpPacket {
    /// A segment from `src` to `dst`, each `"10.0.0.1:40000"` or `"[fd00::1]:40000"`.
    /// Defaults: seq 0, ack 0, no flags, window 65535, no options, no payload, TTL 64,
    /// IPv4 DF set and identification 0, plain Ethernet II.
    pub fn new(src: &str, dst: &str) -> Self {
        let parse = |s: &str| -> SocketAddr {
            s.parse()
                .unwrap_or_else(|e| panic!("testkit: bad socket address {s:?}: {e}"))
        };
        let (src, dst) = (parse(src), parse(dst));
        assert_eq!(
            src.is_ipv4(),
            dst.is_ipv4(),
            "testkit: src and dst must be the same IP version"
        );
        TcpPacket {
            src,
            dst,
            seq: 0,
            ack: 0,
            flags: 0,
            ae: false,
            window: 65535,
            options: Vec::new(),
            data_offset: None,
            payload: Payload::Pattern(0),
            captured_payload: None,
            snaplen: None,
            ip: IpShape {
                ttl: 64,
                ecn: Ecn::NotEct,
                outer_ecn: Ecn::NotEct,
                ip_id: 0,
                ipv4_options: Vec::new(),
                ipv4_total_len: None,
                ipv4_frag: 0x4000,
                ipv6_payload_len: None,
                ipv6_ext: Vec::new(),
                tunnel: None,
            },
            link: Link::Ethernet {
                tags: Vec::new(),
                pppoe: None,
                mpls: Vec::new(),
            },
        }
    }

    // ---- TCP header -------------------------------------------------------------------

    pub fn seq(mut self, seq: u32) -> Self {
        self.seq = seq;
        self
    }

    /// Sets the acknowledgment number and the ACK flag.
    pub fn ack(mut self, ack: u32) -> Self {
        self.ack = ack;
        self.flags |= TcpFlags::ACK;
        self
    }

    /// Sets all flag bits at once (`TcpFlags::SYN | TcpFlags::ACK`); replaces the ACK
    /// flag that [`ack`](Self::ack) set if called after it.
    pub fn flags(mut self, bits: u8) -> Self {
        self.flags = bits;
        self
    }

    /// Adds SYN.
    pub fn syn(mut self) -> Self {
        self.flags |= TcpFlags::SYN;
        self
    }

    /// Adds FIN.
    pub fn fin(mut self) -> Self {
        self.flags |= TcpFlags::FIN;
        self
    }

    /// Adds RST.
    pub fn rst(mut self) -> Self {
        self.flags |= TcpFlags::RST;
        self
    }

    /// Adds PSH.
    pub fn psh(mut self) -> Self {
        self.flags |= TcpFlags::PSH;
        self
    }

    /// Adds AE (RFC 9768 §3.1: the bit before CWR, once the ECN nonce's NS).
    pub fn ae(mut self) -> Self {
        self.ae = true;
        self
    }

    /// The 16-bit window field as sent (unscaled).
    pub fn window(mut self, window: u16) -> Self {
        self.window = window;
        self
    }

    /// Overrides the data offset (in 32-bit words) written in the header; the options
    /// written stay as built. For malformed-header tests (`data_offset(4)`).
    pub fn data_offset(mut self, words: u8) -> Self {
        self.data_offset = Some(words);
        self
    }

    // ---- TCP options, written in call order, each padded with NOPs to 4 bytes -----------

    /// MSS option (kind 2).
    pub fn mss(mut self, mss: u16) -> Self {
        self.options.extend_from_slice(&[2, 4]);
        self.options.extend_from_slice(&mss.to_be_bytes());
        self
    }

    /// Window-scale option (kind 3), written as NOP + option like Linux does. Any shift
    /// can be written, including illegal ones above 14.
    pub fn wscale(mut self, shift: u8) -> Self {
        self.options.extend_from_slice(&[1, 3, 3, shift]);
        self
    }

    /// SACK-permitted option (kind 4), after two NOPs.
    pub fn sack_perm(mut self) -> Self {
        self.options.extend_from_slice(&[1, 1, 4, 2]);
        self
    }

    /// SACK option (kind 5) with these (left, right) edges, after two NOPs; an empty slice
    /// writes the (legal-ish) empty SACK option.
    pub fn sack(mut self, blocks: &[(u32, u32)]) -> Self {
        self.options.extend_from_slice(&[1, 1, 5, 2 + 8 * blocks.len() as u8]);
        for (l, r) in blocks {
            self.options.extend_from_slice(&l.to_be_bytes());
            self.options.extend_from_slice(&r.to_be_bytes());
        }
        self
    }

    /// Timestamps option (kind 8), after two NOPs: the layout of Linux data segments.
    pub fn ts(mut self, val: u32, ecr: u32) -> Self {
        self.options.extend_from_slice(&[1, 1, 8, 10]);
        self.options.extend_from_slice(&val.to_be_bytes());
        self.options.extend_from_slice(&ecr.to_be_bytes());
        self
    }

    /// Option bytes exactly as given (unknown kinds, bad lengths, EOL, ...). The option
    /// area is padded with zeros (EOL) to a multiple of 4 when the packet is built.
    pub fn raw_options(mut self, bytes: &[u8]) -> Self {
        self.options.extend_from_slice(bytes);
        self
    }

    // ---- payload and capture cuts -------------------------------------------------------

    /// Payload length counted in the IP header (the bytes are a readable pattern). All of
    /// it is captured unless [`captured_payload`](Self::captured_payload) or
    /// [`snaplen`](Self::snaplen) say otherwise.
    pub fn payload_len(mut self, n: usize) -> Self {
        self.payload = Payload::Pattern(n);
        self
    }

    /// Payload bytes as given.
    pub fn payload(mut self, bytes: &[u8]) -> Self {
        self.payload = Payload::Bytes(bytes.to_vec());
        self
    }

    /// How many payload bytes the record actually holds (snaplen emulation relative to
    /// the payload). Headers stay whole.
    pub fn captured_payload(mut self, k: usize) -> Self {
        self.captured_payload = Some(k);
        self
    }

    /// Cuts the whole record to at most `n` bytes, as `tcpdump -s n` does (may cut
    /// through any header).
    pub fn snaplen(mut self, n: usize) -> Self {
        self.snaplen = Some(n);
        self
    }

    // ---- IP -----------------------------------------------------------------------------

    pub fn ttl(mut self, ttl: u8) -> Self {
        self.ip.ttl = ttl;
        self
    }

    /// The ECN codepoint of the IP header (the TOS byte's or Traffic Class's low bits); of
    /// the inner header when tunnelled.
    pub fn ecn(mut self, ecn: Ecn) -> Self {
        self.ip.ecn = ecn;
        self
    }

    /// The ECN codepoint of a tunnel's outer header ([`ip_in_ip`](Self::ip_in_ip)).
    pub fn outer_ecn(mut self, ecn: Ecn) -> Self {
        self.ip.outer_ecn = ecn;
        self
    }

    /// The IPv4 identification (of the inner header in a tunnel; ignored for IPv6).
    pub fn ip_id(mut self, id: u16) -> Self {
        self.ip.ip_id = id;
        self
    }

    /// IPv4 options (padded with zeros to a multiple of 4).
    pub fn ipv4_options(mut self, bytes: &[u8]) -> Self {
        self.ip.ipv4_options.extend_from_slice(bytes);
        self
    }

    /// Overrides the IPv4 total length (0 emulates a segment captured before TSO).
    pub fn ipv4_total_len(mut self, len: u16) -> Self {
        self.ip.ipv4_total_len = Some(len);
        self
    }

    /// Makes the packet an IPv4 fragment: `offset` in bytes (a multiple of 8), and the
    /// more-fragments flag.
    pub fn ipv4_fragment(mut self, offset: u16, more: bool) -> Self {
        self.ip.ipv4_frag = (offset / 8) | if more { 0x2000 } else { 0 };
        self
    }

    /// Overrides the IPv6 payload length (0 emulates a segment captured before GSO).
    pub fn ipv6_payload_len(mut self, len: u16) -> Self {
        self.ip.ipv6_payload_len = Some(len);
        self
    }

    /// Appends a minimal IPv6 extension header of this kind: hop-by-hop (0), routing
    /// (43) or destination options (60) of 8 bytes, AH (51) of 24 bytes, or an atomic
    /// fragment header (44).
    pub fn ipv6_ext(mut self, kind: u8) -> Self {
        let body = match kind {
            0 | 60 => vec![0, 1, 4, 0, 0, 0, 0], // PadN
            43 => vec![0, 0, 0, 0, 0, 0, 0],     // type 0, segments left 0
            44 => vec![0, 0, 0, 0, 0, 0, 1],
            51 => {
                let mut b = vec![4, 0, 0];
                b.extend_from_slice(&[0, 0, 1, 0, 0, 0, 0, 1]);
                b.extend_from_slice(&[0xa5; 12]);
                b
            }
            _ => panic!("testkit: no minimal IPv6 extension header for kind {kind}"),
        };
        self.ip.ipv6_ext.push((kind, body));
        self
    }

    /// Appends an IPv6 fragment header: `offset` in bytes (a multiple of 8), M flag.
    pub fn ipv6_fragment(mut self, offset: u16, more: bool) -> Self {
        let off = (offset / 8) << 3 | more as u16;
        let mut body = vec![0];
        body.extend_from_slice(&off.to_be_bytes());
        body.extend_from_slice(&[0, 0, 0, 7]);
        self.ip.ipv6_ext.push((44, body));
        self
    }

    /// Wraps the IP packet in an outer IP header (protocol 4 or 41) between these two
    /// addresses (`"192.0.2.1"`, `"2001:db8::1"`).
    pub fn ip_in_ip(mut self, outer_src: &str, outer_dst: &str) -> Self {
        let parse = |s: &str| -> IpAddr {
            s.parse()
                .unwrap_or_else(|e| panic!("testkit: bad IP address {s:?}: {e}"))
        };
        let (s, d) = (parse(outer_src), parse(outer_dst));
        assert_eq!(s.is_ipv4(), d.is_ipv4(), "testkit: outer addresses of mixed versions");
        self.ip.tunnel = Some((s, d));
        self
    }

    // ---- link layer ---------------------------------------------------------------------

    fn ethernet_mut(&mut self) -> (&mut Vec<(u16, u16)>, &mut Option<u16>, &mut Vec<u32>) {
        if !matches!(self.link, Link::Ethernet { .. }) {
            self.link = Link::Ethernet {
                tags: Vec::new(),
                pppoe: None,
                mpls: Vec::new(),
            };
        }
        match &mut self.link {
            Link::Ethernet { tags, pppoe, mpls } => (tags, pppoe, mpls),
            _ => unreachable!(),
        }
    }

    /// Plain Ethernet II (the default); clears tags, PPPoE and MPLS.
    pub fn ethernet(mut self) -> Self {
        self.link = Link::Ethernet {
            tags: Vec::new(),
            pppoe: None,
            mpls: Vec::new(),
        };
        self
    }

    /// Adds an 802.1Q tag (TPID 0x8100) after those already added.
    pub fn vlan(self, id: u16) -> Self {
        self.vlan_tag(0x8100, id)
    }

    /// Adds an 802.1ad outer tag (0x88a8) and an 802.1Q inner tag.
    pub fn qinq(self, outer: u16, inner: u16) -> Self {
        self.vlan_tag(0x88a8, outer).vlan_tag(0x8100, inner)
    }

    /// Adds a tag with any TPID (0x8100, 0x88a8, 0x9100, ...).
    pub fn vlan_tag(mut self, tpid: u16, id: u16) -> Self {
        self.ethernet_mut().0.push((tpid, id));
        self
    }

    /// Carries the IP packet in a PPPoE session (ethertype 0x8864) over Ethernet.
    pub fn pppoe(mut self, session: u16) -> Self {
        *self.ethernet_mut().1 = Some(session);
        self
    }

    /// Pushes an MPLS label (ethertype 0x8847); the last one pushed is bottom of stack.
    pub fn mpls(mut self, label: u32) -> Self {
        self.ethernet_mut().2.push(label);
        self
    }

    /// Linux cooked capture v1 (LINKTYPE_LINUX_SLL, 113).
    pub fn sll(mut self) -> Self {
        self.link = Link::Sll;
        self
    }

    /// Linux cooked capture v2 (LINKTYPE_LINUX_SLL2, 276).
    pub fn sll2(mut self) -> Self {
        self.link = Link::Sll2;
        self
    }

    /// Raw IP, LINKTYPE_RAW (101).
    pub fn raw_ip(self) -> Self {
        self.raw_ip_as(LinkType::RAW)
    }

    /// Raw IP under another link type number: 12, 14, 228 (IPv4), 229 (IPv6).
    pub fn raw_ip_as(mut self, link: LinkType) -> Self {
        self.link = Link::Raw(link);
        self
    }

    /// BSD loopback (LINKTYPE_NULL, 0): the address family in the writer's byte order
    /// (AF_INET 2, AF_INET6 30 as on macOS).
    pub fn null_loopback(mut self, big_endian: bool) -> Self {
        self.link = Link::Null { big_endian };
        self
    }

    /// OpenBSD loopback (LINKTYPE_LOOP, 108): the address family in network order.
    pub fn loop_link(mut self) -> Self {
        self.link = Link::Loop;
        self
    }

    /// PPP (LINKTYPE_PPP, 9) with address/control bytes 0xff 0x03.
    pub fn ppp(mut self) -> Self {
        self.link = Link::Ppp;
        self
    }

    /// Linux IP over InfiniBand (LINKTYPE_IPOIB, 242): 44-byte pseudo-header.
    pub fn ipoib(mut self) -> Self {
        self.link = Link::Ipoib;
        self
    }

    /// Linux ARCNET (LINKTYPE_ARCNET_LINUX, 129), RFC 1201 header.
    pub fn arcnet(mut self) -> Self {
        self.link = Link::Arcnet;
        self
    }

    // ---- output -------------------------------------------------------------------------

    /// The record as captured and its link type.
    pub fn build(&self) -> (LinkType, Vec<u8>) {
        let b = self.assemble();
        (b.link, b.captured)
    }

    /// The length of the record on the wire (pcap `orig_len`), before any snaplen cut.
    pub fn wire_len(&self) -> usize {
        self.assemble().wire_len
    }

    /// The TCP payload bytes, as counted in the IP header.
    pub fn payload_bytes(&self) -> Vec<u8> {
        match &self.payload {
            Payload::Pattern(n) => (0..*n).map(|i| b'a' + (i % 26) as u8).collect(),
            Payload::Bytes(b) => b.clone(),
        }
    }

    fn assemble(&self) -> Assembled {
        let payload = self.payload_bytes();

        // TCP header
        let mut opts = self.options.clone();
        while !opts.len().is_multiple_of(4) {
            opts.push(0);
        }
        assert!(
            opts.len() <= 40,
            "testkit: {} option bytes do not fit in 40",
            opts.len()
        );
        let mut tcp = Vec::with_capacity(20 + opts.len() + payload.len());
        tcp.extend_from_slice(&self.src.port().to_be_bytes());
        tcp.extend_from_slice(&self.dst.port().to_be_bytes());
        tcp.extend_from_slice(&self.seq.to_be_bytes());
        tcp.extend_from_slice(&self.ack.to_be_bytes());
        let words = self.data_offset.unwrap_or((20 + opts.len() as u8) / 4);
        tcp.push(words << 4 | self.ae as u8);
        tcp.push(self.flags);
        tcp.extend_from_slice(&self.window.to_be_bytes());
        tcp.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
        tcp.extend_from_slice(&opts);
        let tcp_header_len = tcp.len();
        tcp.extend_from_slice(&payload);
        let sum = transport_checksum(self.src.ip(), self.dst.ip(), 6, &tcp);
        tcp[16..18].copy_from_slice(&sum.to_be_bytes());

        // IP
        let (mut ip, inner_header_len) = self.ip_header(self.src.ip(), self.dst.ip(), 6, &tcp, true);
        let mut ip_headers_len = inner_header_len;
        if let Some((s, d)) = self.ip.tunnel {
            let proto = if self.src.is_ipv4() { 4 } else { 41 };
            let (outer, outer_len) = self.ip_header(s, d, proto, &ip, false);
            ip = outer;
            ip_headers_len += outer_len;
        }

        // Link
        let (link, mut frame) = self.link_header(self.src.is_ipv4(), ip.len());
        let link_len = frame.len();
        frame.extend_from_slice(&ip);
        if matches!(self.link, Link::Ethernet { .. }) && frame.len() < ETHERNET_MIN_FRAME {
            frame.resize(ETHERNET_MIN_FRAME, 0);
        }
        let wire_len = frame.len();

        let mut captured = frame;
        if let Some(k) = self.captured_payload {
            if k < payload.len() {
                captured.truncate(link_len + ip_headers_len + tcp_header_len + k);
            }
        }
        if let Some(n) = self.snaplen {
            captured.truncate(n);
        }
        Assembled {
            link,
            captured,
            wire_len,
        }
    }

    /// An IP header (with options or extension headers when `inner`) followed by `payload`.
    /// Returns the packet and its header length.
    fn ip_header(&self, src: IpAddr, dst: IpAddr, proto: u8, payload: &[u8], inner: bool) -> (Vec<u8>, usize) {
        match (src, dst) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                let mut options = if inner {
                    self.ip.ipv4_options.clone()
                } else {
                    Vec::new()
                };
                while !options.len().is_multiple_of(4) {
                    options.push(0);
                }
                let header_len = 20 + options.len();
                let total =
                    if inner { self.ip.ipv4_total_len } else { None }.unwrap_or((header_len + payload.len()) as u16);
                let frag = if inner { self.ip.ipv4_frag } else { 0x4000 };
                let ecn = if inner { self.ip.ecn } else { self.ip.outer_ecn };
                let mut h = vec![0x40 | (header_len / 4) as u8, ecn as u8];
                h.extend_from_slice(&total.to_be_bytes());
                h.extend_from_slice(&if inner { self.ip.ip_id } else { 0 }.to_be_bytes());
                h.extend_from_slice(&frag.to_be_bytes());
                h.extend_from_slice(&[self.ip.ttl, proto, 0, 0]);
                h.extend_from_slice(&s.octets());
                h.extend_from_slice(&d.octets());
                h.extend_from_slice(&options);
                let sum = !ones_complement_sum(0, &h);
                h[10..12].copy_from_slice(&sum.to_be_bytes());
                h.extend_from_slice(payload);
                (h, header_len)
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                let exts: &[(u8, Vec<u8>)] = if inner { &self.ip.ipv6_ext } else { &[] };
                let mut ext_bytes = Vec::new();
                for (i, (_, body)) in exts.iter().enumerate() {
                    let next = exts.get(i + 1).map_or(proto, |e| e.0);
                    ext_bytes.push(next);
                    ext_bytes.extend_from_slice(body);
                }
                let first = exts.first().map_or(proto, |e| e.0);
                let plen = if inner { self.ip.ipv6_payload_len } else { None }
                    .unwrap_or((ext_bytes.len() + payload.len()) as u16);
                // Traffic Class = the ECN bits alone: version 6, then TC across the nibbles.
                let ecn = if inner { self.ip.ecn } else { self.ip.outer_ecn } as u8;
                let mut h = vec![0x60, ecn << 4, 0, 0];
                h.extend_from_slice(&plen.to_be_bytes());
                h.extend_from_slice(&[first, self.ip.ttl]);
                h.extend_from_slice(&s.octets());
                h.extend_from_slice(&d.octets());
                h.extend_from_slice(&ext_bytes);
                let header_len = h.len();
                h.extend_from_slice(payload);
                (h, header_len)
            }
            _ => panic!("testkit: outer tunnel addresses must match the version of the link"),
        }
    }

    /// The link header for an IP packet of `ip_len` bytes whose innermost IP version is
    /// v4 (`true`) or v6.
    fn link_header(&self, inner_v4: bool, ip_len: usize) -> (LinkType, Vec<u8>) {
        let v4 = match self.ip.tunnel {
            Some((s, _)) => s.is_ipv4(),
            None => inner_v4,
        };
        let ethertype: u16 = if v4 { 0x0800 } else { 0x86dd };
        match &self.link {
            Link::Ethernet { tags, pppoe, mpls } => {
                assert!(pppoe.is_none() || mpls.is_empty(), "testkit: PPPoE and MPLS together");
                let mut f = Vec::with_capacity(64);
                f.extend_from_slice(&DST_MAC);
                f.extend_from_slice(&SRC_MAC);
                for (tpid, id) in tags {
                    f.extend_from_slice(&tpid.to_be_bytes());
                    f.extend_from_slice(&(id & 0x0fff).to_be_bytes());
                }
                if let Some(session) = pppoe {
                    f.extend_from_slice(&0x8864u16.to_be_bytes());
                    f.extend_from_slice(&[0x11, 0x00]);
                    f.extend_from_slice(&session.to_be_bytes());
                    f.extend_from_slice(&(ip_len as u16 + 2).to_be_bytes());
                    f.extend_from_slice(if v4 { &[0x00, 0x21] } else { &[0x00, 0x57] });
                } else if !mpls.is_empty() {
                    f.extend_from_slice(&0x8847u16.to_be_bytes());
                    for (i, label) in mpls.iter().enumerate() {
                        let bos = (i + 1 == mpls.len()) as u32;
                        f.extend_from_slice(&((label << 12) | (bos << 8) | 64).to_be_bytes());
                    }
                } else {
                    f.extend_from_slice(&ethertype.to_be_bytes());
                }
                (LinkType::ETHERNET, f)
            }
            Link::Sll => {
                let mut f = vec![0, 0, 0, 1, 0, 6];
                f.extend_from_slice(&SRC_MAC);
                f.extend_from_slice(&[0, 0]);
                f.extend_from_slice(&ethertype.to_be_bytes());
                (LinkType::LINUX_SLL, f)
            }
            Link::Sll2 => {
                let mut f = ethertype.to_be_bytes().to_vec();
                f.extend_from_slice(&[0, 0, 0, 0, 0, 2, 0, 1, 0, 6]);
                f.extend_from_slice(&SRC_MAC);
                f.extend_from_slice(&[0, 0]);
                (LinkType::LINUX_SLL2, f)
            }
            Link::Raw(link) => (*link, Vec::new()),
            Link::Null { big_endian } => {
                let af: u32 = if v4 { 2 } else { 30 };
                let bytes = if *big_endian {
                    af.to_be_bytes()
                } else {
                    af.to_le_bytes()
                };
                (LinkType::NULL, bytes.to_vec())
            }
            Link::Loop => {
                let af: u32 = if v4 { 2 } else { 24 };
                (LinkType::LOOP, af.to_be_bytes().to_vec())
            }
            Link::Ppp => {
                let proto: &[u8] = if v4 { &[0x00, 0x21] } else { &[0x00, 0x57] };
                (LinkType::PPP, [&[0xff, 0x03], proto].concat())
            }
            Link::Ipoib => {
                let mut f = vec![0u8; 44];
                f[20..24].copy_from_slice(&[0x80, 0, 0x05, 0x50]);
                f[24..26].copy_from_slice(&[0xfe, 0x80]);
                f[40..42].copy_from_slice(&ethertype.to_be_bytes());
                (LinkType::IPOIB, f)
            }
            Link::Arcnet => {
                let proto = if v4 { 0xd4 } else { 0xc4 };
                (LinkType::ARCNET_LINUX, vec![0x01, 0x02, 0, 0, proto, 0, 0, 1])
            }
        }
    }
}

struct Assembled {
    link: LinkType,
    captured: Vec<u8>,
    wire_len: usize,
}

/// RFC 1071 one's complement sum of 16-bit words, folded.
fn ones_complement_sum(mut acc: u32, bytes: &[u8]) -> u16 {
    let mut chunks = bytes.chunks_exact(2);
    for w in &mut chunks {
        acc += u16::from_be_bytes([w[0], w[1]]) as u32;
    }
    if let [last] = chunks.remainder() {
        acc += (*last as u32) << 8;
    }
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// TCP/UDP checksum with the IPv4 or IPv6 pseudo-header.
fn transport_checksum(src: IpAddr, dst: IpAddr, proto: u8, segment: &[u8]) -> u16 {
    let mut pseudo = Vec::with_capacity(40);
    match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            pseudo.extend_from_slice(&s.octets());
            pseudo.extend_from_slice(&d.octets());
            pseudo.extend_from_slice(&[0, proto]);
            pseudo.extend_from_slice(&(segment.len() as u16).to_be_bytes());
        }
        (s, d) => {
            let o = |a: IpAddr| match a {
                IpAddr::V6(a) => a.octets(),
                IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
            };
            pseudo.extend_from_slice(&o(s));
            pseudo.extend_from_slice(&o(d));
            pseudo.extend_from_slice(&(segment.len() as u32).to_be_bytes());
            pseudo.extend_from_slice(&[0, 0, 0, proto]);
        }
    }
    let acc = ones_complement_sum(0, &pseudo) as u32;
    !ones_complement_sum(acc, segment)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ethernet_frames_are_padded_to_60_bytes() {
        let p = TcpPacket::new("10.0.0.1:1", "10.0.0.2:2").ack(1);
        let (link, bytes) = p.build();
        assert_eq!(link, LinkType::ETHERNET);
        assert_eq!(bytes.len(), 60);
        assert_eq!(p.wire_len(), 60);
        assert_eq!(&bytes[54..], &[0; 6]);
    }

    #[test]
    fn captured_payload_and_snaplen_cut_the_record_not_the_wire_length() {
        let p = TcpPacket::new("10.0.0.1:1", "10.0.0.2:2")
            .payload_len(1000)
            .captured_payload(10);
        assert_eq!(p.build().1.len(), 14 + 20 + 20 + 10);
        assert_eq!(p.wire_len(), 14 + 20 + 20 + 1000);
        let p = p.snaplen(40);
        assert_eq!(p.build().1.len(), 40);
    }

    #[test]
    fn checksums_match_etherparse() {
        for p in [
            TcpPacket::new("10.0.0.1:1", "10.0.0.2:2").ts(1, 2).payload_len(33),
            TcpPacket::new("[fd00::1]:1", "[fd00::2]:2").mss(1440).payload_len(7),
        ] {
            let (_, bytes) = p.build();
            let s = etherparse::SlicedPacket::from_ethernet(&bytes).unwrap();
            let Some(etherparse::TransportSlice::Tcp(tcp)) = s.transport else {
                panic!()
            };
            let expect = match s.net.unwrap() {
                etherparse::NetSlice::Ipv4(ip) => {
                    let h = ip.header();
                    assert_eq!(h.to_header().calc_header_checksum(), h.header_checksum());
                    tcp.calc_checksum_ipv4(h.source(), h.destination()).unwrap()
                }
                etherparse::NetSlice::Ipv6(ip) => {
                    let h = ip.header();
                    tcp.calc_checksum_ipv6(h.source(), h.destination()).unwrap()
                }
                _ => unreachable!(),
            };
            assert_eq!(tcp.checksum(), expect);
        }
    }

    #[test]
    #[should_panic(expected = "do not fit")]
    fn too_many_options_panic() {
        TcpPacket::new("10.0.0.1:1", "10.0.0.2:2")
            .sack(&[(1, 2); 4])
            .ts(1, 2)
            .build();
    }
}
