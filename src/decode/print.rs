//! A record's fingerprint: what tells one IP datagram from another of the same connection
//! and direction.
//!
//! A capture duplicate (`flow::duplicate`) is the same IP datagram recorded twice: a
//! mirror port copying both the ingress and the egress of a switch, a capture on Linux's
//! `any` pseudo-interface seeing a packet on a bridge and on its member port, or on a VLAN
//! device and its parent. Its link-layer header may differ (another interface, another
//! VLAN tag, another link type), so the comparison starts at the IP header, as `editcap -d`
//! would if it did not hash the whole frame; from there on the copy is byte-identical.
//! Only headers are hashed: the TCP checksum covers the payload (RFC 9293 §3.1) — unless a
//! sending host's checksum offload left it unfilled, and then a segment with the same
//! sequence number and length is the same bytes anyway — and hashing 1,460 payload bytes
//! per segment would cost more than decoding it.

use super::ip::TcpInIp;
use super::wire::array;

/// The fingerprint of one record, from its IP header on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Print {
    /// A hash of the IP header (IPv4 with its options, IPv6 with its extension headers:
    /// the innermost of a tunnel) and the TCP header as captured (options included), but
    /// the addresses and ports, and of the payload length. Prints are compared within one
    /// connection and direction, whose records share those: equal for two records of one
    /// datagram, different (but for a ~2^-64 chance) for two datagrams that differ in any
    /// other header bit — identification, a timestamp, a window — but the TTL (IPv6's hop
    /// limit) and the IPv4 header checksum, which every router on the way rewrites. Odd
    /// (never 0: what an empty slot of `flow::duplicate` holds).
    pub hash: u64,
    /// The IPv4 TTL or IPv6 hop limit: the same datagram recorded again one router later
    /// (a capture on a router's `any` interface, ingress and egress) has one less.
    pub ttl: u8,
    /// The IPv4 identification names the datagram: two datagrams of this source that
    /// repeat it are one (RFC 791 §3.2: the ID, with the addresses and protocol,
    /// identifies a datagram; RFC 6864 §4.2: a datagram that may be fragmented never
    /// repeats it within a datagram lifetime). True for an ID other than 0 or a clear DF
    /// bit: an atomic datagram's ID 0 is what sources write that do not number them (RFC
    /// 6864 §4.1; Linux's RSTs and SYN/ACKs, FreeBSD's every datagram). Never for IPv6.
    pub id_names: bool,
}

/// Folds two words into one: the two halves of their 128-bit product, xored (the mixing
/// step of rustc-hash's and wyhash's byte hashes; one `mul` on x86-64 and AArch64).
#[inline(always)]
fn mix(a: u64, b: u64) -> u64 {
    let p = (a as u128).wrapping_mul(b as u128);
    (p as u64) ^ ((p >> 64) as u64)
}

/// Odd constants (digits of pi, as rustc-hash's), one per place a word enters.
const K: [u64; 4] = [
    0x243f_6a88_85a3_08d3,
    0x1319_8a2e_0370_7344,
    0xa409_3822_299f_31d0,
    0x082e_fa98_ec4e_6c89,
];

/// Up to 8 bytes of `b` from `at` as a little-endian word, zeros after its end. Option
/// areas are whole 4-byte words (RFC 791 §3.1 IHL, RFC 9293 §3.1 data offset) unless the
/// snaplen cut them: a word or half of one, mostly.
#[inline(always)]
fn word(b: &[u8], at: usize) -> u64 {
    let rest = b.get(at..).unwrap_or_default();
    if let Some(w) = rest.first_chunk::<8>() {
        u64::from_le_bytes(*w)
    } else if let Some(w) = rest.first_chunk::<4>() {
        u32::from_le_bytes(*w) as u64
    } else {
        rest.iter().rev().fold(0, |w, &x| w << 8 | x as u64)
    }
}

/// Hashes `bytes` (IP options, extension headers, TCP options: rarely more than 12) into
/// `h`, 16 at a time (their number is hashed by the caller).
#[inline(always)]
fn fold(mut h: u64, bytes: &[u8]) -> u64 {
    let mut rest = bytes;
    while let Some((c, r)) = rest.split_first_chunk::<16>() {
        h = mix(
            h ^ u64::from_le_bytes(array(c, 0)),
            u64::from_le_bytes(array(c, 8)) ^ K[3],
        );
        rest = r;
    }
    if !rest.is_empty() {
        h = mix(h ^ word(rest, 0), word(rest, 8) ^ K[3]);
    }
    h
}

/// The fingerprint of the segment `ip` carries (before `tcp::segment` decodes it).
#[inline]
pub(crate) fn of(ip: &TcpInIp<'_>) -> Print {
    // TCP: sequence and acknowledgment numbers (4-11), data offset, flags, window,
    // checksum and urgent pointer (12-19), then the options as far as they were captured.
    let Some(t) = ip.tcp.first_chunk::<20>() else {
        // No TCP header: `tcp::segment` skips the record.
        return Print {
            hash: 1,
            ttl: 0,
            id_names: false,
        };
    };
    let header_len = (t[12] >> 4) as usize * 4;
    let options = ip.tcp.get(20..header_len.min(ip.tcp.len())).unwrap_or_default();
    // The payload length as `tcp::segment` reckons it, from the IP header's lengths.
    let payload_len = ip.len.saturating_sub(header_len as u32);
    let (c, d) = (u64::from_le_bytes(array(t, 4)), u64::from_le_bytes(array(t, 12)));
    // IPv4: version to checksum (TOS, total length, ID, flags, TTL, protocol, checksum),
    // then its options; IPv6: version to hop limit (traffic class, flow label, payload
    // length, next header), then its extension headers (`ip` read them).
    let ([a, b], extra) = (ip.fixed, ip.extra);
    // The TTL and the checksum (IPv4: bytes 8 and 10-11, the low byte and the high half of
    // `b`) or the hop limit (IPv6: byte 7, the top of `a`) out of the hash: the rest of the
    // header is what a router forwards unchanged.
    let (a, b, ttl) = if a & 0xf0 == 0x40 {
        (a, b & 0x0000_ff00, b as u8)
    } else {
        (a & 0x00ff_ffff_ffff_ffff, b, (a >> 56) as u8)
    };
    // Lengths beside the bytes: the payload's in the free half of `b`, the captured option
    // areas' in the top of `a` (an IPv4 fragment offset or an IPv6 hop limit: a few bits
    // that the lengths move, never cancel in practice).
    let lengths = ((extra.len() as u64) << 8 | options.len() as u64) << 48;
    let b = b | (payload_len as u64) << 32;
    // Two independent products, then the option areas.
    let mut h = mix(a ^ lengths ^ K[0], b ^ K[1]) ^ mix(c ^ K[2], d ^ K[3]);
    if !extra.is_empty() {
        h = fold(h, extra);
    }
    if !options.is_empty() {
        h = fold(h, options);
    }
    Print {
        hash: h | 1,
        ttl,
        id_names: ip.id_names,
    }
}
