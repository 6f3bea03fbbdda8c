//! IPv4 (RFC 791) and IPv6 (RFC 8200): from an IP packet to the TCP segment inside.
//!
//! Lengths come from the IP header, never from the captured length: captures are often
//! taken with a small snaplen (`tcpdump -s 128`) and still describe the whole segment.
//! Checksums are never verified — offloading NICs hand the capture point segments whose
//! checksums are filled in later, so bad checksums are normal.

use super::ecn::Ecn;
use super::link::IpPacket;
use super::skip::{Layer, Skip};
use super::wire::{array, be16, be32};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// IP protocol numbers (IANA "Assigned Internet Protocol Numbers").
mod proto {
    pub const HOP_BY_HOP: u8 = 0;
    pub const IPV4: u8 = 4;
    pub const TCP: u8 = 6;
    pub const IPV6: u8 = 41;
    pub const ROUTING: u8 = 43;
    pub const FRAGMENT: u8 = 44;
    pub const AH: u8 = 51;
    pub const DEST_OPTS: u8 = 60;
}

/// How many IP-in-IP encapsulations (protocol 4 or 41) are followed. One covers the
/// usual tunnels (6in4, 4in6, IPIP); more nesting is reported as NotTcp.
const MAX_TUNNELS: u8 = 1;

/// A TCP segment located inside an IP packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TcpInIp<'a> {
    pub src: IpAddr,
    pub dst: IpAddr,
    /// The ECN codepoint the transport gets (see [`Ecn::decapsulated`] for a tunnel's).
    pub ecn: Ecn,
    /// The captured bytes from the first TCP header byte on: possibly cut by the snaplen,
    /// possibly followed by link-layer padding (never trust its length).
    pub tcp: &'a [u8],
    /// Length of the TCP segment (header + payload) according to the IP header.
    pub len: u32,
    /// The IP header that carries the segment (the innermost of a tunnel) but its
    /// addresses, for its fingerprint (`print`): its first 12 bytes (IPv4: version to
    /// checksum) or 8 (IPv6: version to hop limit) as two little-endian words, and what
    /// follows the addresses as captured (IPv4 options, IPv6 extension headers). Read here,
    /// from the header in hand: `print` reading them back from a slice costs a record ~25
    /// instructions more, `decode` alone ~9 for the two words it does not use.
    pub fixed: [u64; 2],
    pub extra: &'a [u8],
    /// Whether the IPv4 identification names this datagram among its source's (see
    /// [`super::Print::id_names`]); never for IPv6, which has none outside fragments.
    pub id_names: bool,
}

/// Finds the TCP segment in an IPv4 or IPv6 packet (version nibble decides).
#[inline]
pub(crate) fn tcp_in_ip(packet: IpPacket<'_>) -> Result<TcpInIp<'_>, Skip> {
    let limit = packet.declared_len.map_or(usize::MAX, |l| l as usize);
    by_version(packet.data, limit, MAX_TUNNELS)
}

/// `limit`: the most bytes the IP packet can have, as declared by what carries it (a
/// PPPoE or outer IP length); `usize::MAX` when nothing declares one. Always inlined: the
/// tunnel's recursion goes through [`tunnelled`], and a call here costs the untunnelled
/// path 25 instructions a record (callgrind, the lab's 593 k records).
#[inline(always)]
fn by_version(packet: &[u8], limit: usize, tunnels_left: u8) -> Result<TcpInIp<'_>, Skip> {
    match packet.first().map(|b| b >> 4) {
        Some(4) => ipv4(packet, limit, tunnels_left),
        Some(6) => ipv6(packet, limit, tunnels_left),
        Some(_) => Err(Skip::Malformed(Layer::Ip, "IP version is neither 4 nor 6")),
        None => Err(Skip::Truncated(Layer::Ip)),
    }
}

/// RFC 791 §3.1. Offsets: 0 version/IHL, 1 TOS, 2 total length, 6 flags/fragment offset,
/// 9 protocol, 12 source, 16 destination; options up to IHL*4 bytes.
#[inline(always)]
fn ipv4(packet: &[u8], limit: usize, tunnels_left: u8) -> Result<TcpInIp<'_>, Skip> {
    let Some(h) = packet.first_chunk::<20>() else {
        return Err(Skip::Truncated(Layer::Ip));
    };
    let header_len = (h[0] & 0x0f) as usize * 4;
    if header_len < 20 {
        return Err(Skip::Malformed(Layer::Ip, "IPv4 header length (IHL) below 5"));
    }
    let Some(payload) = packet.get(header_len..) else {
        return Err(Skip::Truncated(Layer::Ip));
    };
    let protocol = h[9];
    let tunnel = matches!(protocol, proto::IPV4 | proto::IPV6) && tunnels_left > 0;
    if protocol != proto::TCP && !tunnel {
        return Err(Skip::NotTcp(protocol));
    }
    // More-fragments flag (0x2000) or a non-zero fragment offset (low 13 bits).
    if be16(h[6], h[7]) & 0x3fff != 0 {
        return Err(Skip::Fragment);
    }
    let total_len = match be16(h[2], h[3]) as usize {
        // Total length 0: a segment captured before TCP segmentation offload split it
        // (Linux and Windows hosts hand such super-segments to the capture point and
        // the NIC fills the length in later). Only the captured length is left.
        0 => packet.len(),
        n => n,
    };
    // Inconsistent headers (total length below the header length) clamp at 0.
    let len = total_len.min(limit).saturating_sub(header_len);
    // TOS byte (RFC 2474 §3: DSCP in the high six bits; RFC 3168 §5: ECN in the low two).
    let ecn = Ecn::from_bits(h[1]);
    if tunnel {
        return tunnelled(payload, len, tunnels_left - 1, ecn);
    }
    Ok(TcpInIp {
        src: IpAddr::V4(Ipv4Addr::new(h[12], h[13], h[14], h[15])),
        dst: IpAddr::V4(Ipv4Addr::new(h[16], h[17], h[18], h[19])),
        ecn,
        tcp: payload,
        len: len as u32,
        fixed: [u64::from_le_bytes(array(h, 0)), u32::from_le_bytes(array(h, 8)) as u64],
        extra: packet.get(20..header_len).unwrap_or_default(),
        // RFC 6864 §4.2: a datagram that may be fragmented (DF clear) has an ID its source
        // does not repeat within a maximum datagram lifetime; §4.1: an atomic one (DF set)
        // may carry any ID, and sources that do not number them write 0 (Linux for its
        // RSTs and SYN/ACKs, FreeBSD with net.inet.ip.rfc6864 for every one), while those
        // that do count them (Linux per socket, Windows per host) or draw them at random.
        id_names: be16(h[4], h[5]) != 0 || h[6] & 0x40 == 0,
    })
}

/// RFC 8200 §3: 4 payload length, 6 next header, 8 source, 24 destination; 40 bytes,
/// then the extension header chain (§4).
#[inline(always)]
fn ipv6(packet: &[u8], limit: usize, tunnels_left: u8) -> Result<TcpInIp<'_>, Skip> {
    let Some(h) = packet.first_chunk::<40>() else {
        return Err(Skip::Truncated(Layer::Ip));
    };
    let payload_len = be16(h[4], h[5]) as usize;
    // Traffic Class: bits 4-11 of the header (RFC 8200 §3); ECN its low two (RFC 3168 §5).
    let ecn = Ecn::from_bits(h[1] >> 4);
    let mut next = h[6];
    let mut offset = 40;
    // Extension headers. Each one is at least 8 bytes, so the loop ends with the data.
    loop {
        match next {
            proto::TCP => break,
            proto::IPV4 | proto::IPV6 if tunnels_left > 0 => {
                let inner_limit = ipv6_len(packet, payload_len, limit).saturating_sub(offset);
                let inner = packet.get(offset..).unwrap_or_default();
                return tunnelled(inner, inner_limit, tunnels_left - 1, ecn);
            }
            // Hop-by-hop, routing, destination options: length in 8-octet units, not
            // counting the first 8 (RFC 8200 §4.3-4.6).
            proto::HOP_BY_HOP | proto::ROUTING | proto::DEST_OPTS => {
                let [nh, units] = ext_start(packet, offset)?;
                next = nh;
                offset += (units as usize + 1) * 8;
            }
            // RFC 8200 §4.5: next header, reserved, offset (13 bits) + 2 reserved + M flag.
            proto::FRAGMENT => {
                let Some(f) = packet.get(offset..).and_then(<[u8]>::first_chunk::<8>) else {
                    return Err(Skip::Truncated(Layer::Ip));
                };
                let frag_offset = be16(f[2], f[3]) >> 3;
                let more = f[3] & 0x01 != 0;
                // An "atomic fragment" (offset 0, M clear; RFC 6946) is a whole packet
                // that merely carries a fragment header: decode it.
                if frag_offset != 0 || more {
                    return Err(match f[0] {
                        proto::TCP | proto::IPV4 | proto::IPV6 => Skip::Fragment,
                        p if is_extension(p) => Skip::Fragment,
                        p => Skip::NotTcp(p),
                    });
                }
                next = f[0];
                offset += 8;
            }
            // RFC 4302 §2.2: AH length in 4-octet units, minus 2.
            proto::AH => {
                let [nh, units] = ext_start(packet, offset)?;
                next = nh;
                offset += (units as usize + 2) * 4;
            }
            // ESP (50) hides the rest; no-next-header (59), ICMPv6 (58), UDP, ...
            other => return Err(Skip::NotTcp(other)),
        }
        if offset > packet.len() {
            return Err(Skip::Truncated(Layer::Ip));
        }
    }
    let len = ipv6_len(packet, payload_len, limit).saturating_sub(offset);
    Ok(TcpInIp {
        src: IpAddr::V6(Ipv6Addr::from(array::<16>(h, 8))),
        dst: IpAddr::V6(Ipv6Addr::from(array::<16>(h, 24))),
        ecn,
        tcp: packet.get(offset..).unwrap_or_default(),
        len: len as u32,
        fixed: [u64::from_le_bytes(array(h, 0)), 0],
        extra: packet.get(40..offset).unwrap_or_default(),
        id_names: false,
    })
}

/// The packet a tunnel carries, its codepoint as the outer header's `outer` leaves it
/// (RFC 6040 §4.2). Out of line: the recursion goes through here, so that the untunnelled
/// path (nearly every packet) stays inlined in `decode`.
#[inline(never)]
fn tunnelled(packet: &[u8], limit: usize, tunnels_left: u8, outer: Ecn) -> Result<TcpInIp<'_>, Skip> {
    by_version(packet, limit, tunnels_left).map(|t| TcpInIp {
        ecn: t.ecn.decapsulated(outer),
        ..t
    })
}

/// The length of an IPv6 packet, header included, bounded by `limit`.
#[inline]
fn ipv6_len(packet: &[u8], payload_len: usize, limit: usize) -> usize {
    let len = if payload_len == 0 {
        // Payload length 0: an RFC 2675 jumbogram (the length is in a hop-by-hop option)
        // or a segment captured before segmentation offload split it (as IPv4 total
        // length 0 above): fall back to the captured length.
        jumbo_payload_len(packet).map_or(packet.len(), |l| l.saturating_add(40))
    } else {
        40 + payload_len
    };
    len.min(limit)
}

/// The next-header and length bytes of an extension header at `offset`.
#[inline]
fn ext_start(packet: &[u8], offset: usize) -> Result<[u8; 2], Skip> {
    match packet.get(offset..).and_then(<[u8]>::first_chunk::<2>) {
        Some(b) => Ok(*b),
        None => Err(Skip::Truncated(Layer::Ip)),
    }
}

fn is_extension(p: u8) -> bool {
    matches!(
        p,
        proto::HOP_BY_HOP | proto::ROUTING | proto::FRAGMENT | proto::AH | proto::DEST_OPTS
    )
}

/// RFC 2675 §2: the Jumbo Payload option (type 0xc2, length 4) in a hop-by-hop header
/// right after the IPv6 header gives the payload length when the header's field is 0.
fn jumbo_payload_len(packet: &[u8]) -> Option<usize> {
    if packet.get(6) != Some(&proto::HOP_BY_HOP) {
        return None;
    }
    let units = *packet.get(41)? as usize;
    let mut opts = packet.get(42..40 + (units + 1) * 8)?;
    while let Some((&kind, rest)) = opts.split_first() {
        if kind == 0 {
            // Pad1
            opts = rest;
            continue;
        }
        let len = *rest.first()? as usize;
        let value = rest.get(1..1 + len)?;
        if kind == 0xc2 && len == 4 {
            return Some(be32(value[0], value[1], value[2], value[3]) as usize);
        }
        opts = rest.get(1 + len..)?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp_in_ip(packet: &[u8]) -> Result<TcpInIp<'_>, Skip> {
        super::tcp_in_ip(IpPacket {
            data: packet,
            declared_len: None,
        })
    }

    /// IPv4 header (no options) followed by `tcp`, with the given total length.
    fn v4(protocol: u8, total_len: u16, frag: u16, rest: &[u8]) -> Vec<u8> {
        let mut p = vec![0x45, 0, 0, 0, 0, 1, 0, 0, 64, protocol, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
        p[2..4].copy_from_slice(&total_len.to_be_bytes());
        p[6..8].copy_from_slice(&frag.to_be_bytes());
        p.extend_from_slice(rest);
        p
    }

    fn v6(next: u8, payload_len: u16, rest: &[u8]) -> Vec<u8> {
        let mut p = vec![0x60, 0, 0, 0, 0, 0, next, 64];
        p[4..6].copy_from_slice(&payload_len.to_be_bytes());
        p.extend_from_slice(&[0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        p.extend_from_slice(&[0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
        p.extend_from_slice(rest);
        p
    }

    #[test]
    fn ipv4_lengths_come_from_the_header() {
        let p = v4(6, 20 + 1000, 0, &[7; 20]);
        let t = tcp_in_ip(&p).unwrap();
        assert_eq!(t.len, 1000);
        assert_eq!(t.tcp, &[7; 20]);
        assert_eq!(t.src, "10.0.0.1".parse::<IpAddr>().unwrap());
        assert_eq!(t.dst, "10.0.0.2".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn ipv4_options_are_skipped_by_ihl() {
        let mut p = v4(6, 24 + 20, 0, &[1, 1, 1, 0]);
        p[0] = 0x46;
        p.extend_from_slice(&[9; 20]);
        let t = tcp_in_ip(&p).unwrap();
        assert_eq!(t.tcp, &[9; 20]);
        assert_eq!(t.len, 20);
    }

    #[test]
    fn ipv4_bad_ihl_and_truncation() {
        let mut p = v4(6, 40, 0, &[0; 20]);
        p[0] = 0x44;
        assert_eq!(
            tcp_in_ip(&p),
            Err(Skip::Malformed(Layer::Ip, "IPv4 header length (IHL) below 5"))
        );
        p[0] = 0x4f; // 60-byte header, 40 captured
        assert_eq!(tcp_in_ip(&p), Err(Skip::Truncated(Layer::Ip)));
        assert_eq!(tcp_in_ip(&p[..19]), Err(Skip::Truncated(Layer::Ip)));
        assert_eq!(tcp_in_ip(&[]), Err(Skip::Truncated(Layer::Ip)));
        assert_eq!(
            tcp_in_ip(&[0x55; 40]),
            Err(Skip::Malformed(Layer::Ip, "IP version is neither 4 nor 6"))
        );
    }

    #[test]
    fn ipv4_total_length_zero_falls_back_to_the_captured_length() {
        let p = v4(6, 0, 0, &[0; 20 + 3000]);
        assert_eq!(tcp_in_ip(&p).unwrap().len, 3020);
    }

    #[test]
    fn ipv4_inconsistent_total_length_clamps_at_zero() {
        let p = v4(6, 12, 0, &[0; 20]);
        assert_eq!(tcp_in_ip(&p).unwrap().len, 0);
    }

    #[test]
    fn declared_link_length_bounds_the_ip_lengths() {
        // zeek pppoe-over-qinq.pcap frame 19: PPPoE says 40 bytes of IP, IPv4 says 46 —
        // the 6 bytes of Ethernet padding after the packet are not TCP payload.
        let p = v4(6, 46, 0, &[0x50; 26]);
        let bounded = |limit| {
            super::tcp_in_ip(IpPacket {
                data: &p,
                declared_len: Some(limit),
            })
        };
        assert_eq!(bounded(40).unwrap().len, 20);
        assert_eq!(bounded(1000).unwrap().len, 26);
        assert_eq!(bounded(10).unwrap().len, 0);
        let p6 = v6(6, 26, &[0x50; 26]);
        let bounded6 = |limit| {
            super::tcp_in_ip(IpPacket {
                data: &p6,
                declared_len: Some(limit),
            })
        };
        assert_eq!(bounded6(60).unwrap().len, 20);
    }

    #[test]
    fn ipv4_fragments_are_skipped() {
        // MF set, offset 0 (first fragment)
        assert_eq!(tcp_in_ip(&v4(6, 1500, 0x2000, &[0; 20])), Err(Skip::Fragment));
        // offset 185*8, MF clear (last fragment)
        assert_eq!(tcp_in_ip(&v4(6, 1500, 185, &[0; 20])), Err(Skip::Fragment));
        // DF alone is not a fragment
        assert!(tcp_in_ip(&v4(6, 40, 0x4000, &[0; 20])).is_ok());
        // a UDP fragment is reported as UDP
        assert_eq!(tcp_in_ip(&v4(17, 1500, 0x2000, &[0; 20])), Err(Skip::NotTcp(17)));
    }

    #[test]
    fn icmp_errors_quoting_tcp_are_not_tcp() {
        let quoted = v4(6, 40, 0, &[0; 20]);
        let mut icmp = vec![3, 3, 0, 0, 0, 0, 0, 0];
        icmp.extend_from_slice(&quoted);
        assert_eq!(
            tcp_in_ip(&v4(1, 20 + icmp.len() as u16, 0, &icmp)),
            Err(Skip::NotTcp(1))
        );
        assert_eq!(tcp_in_ip(&v6(58, icmp.len() as u16, &icmp)), Err(Skip::NotTcp(58)));
    }

    #[test]
    fn ipv6_without_extensions() {
        let p = v6(6, 20 + 500, &[3; 20]);
        let t = tcp_in_ip(&p).unwrap();
        assert_eq!(t.len, 520);
        assert_eq!(t.src, "fd00::1".parse::<IpAddr>().unwrap());
        assert_eq!(t.dst, "fd00::2".parse::<IpAddr>().unwrap());
        assert_eq!(t.tcp, &[3; 20]);
        assert_eq!(tcp_in_ip(&p[..39]), Err(Skip::Truncated(Layer::Ip)));
    }

    #[test]
    fn ipv6_extension_chain_is_walked_and_subtracted_from_the_length() {
        let mut ext = Vec::new();
        ext.extend_from_slice(&[43, 0, 1, 4, 0, 0, 0, 0]); // hop-by-hop, 8 bytes (PadN)
        ext.extend_from_slice(&[60, 2, 0, 0, 0, 0, 0, 0]); // routing, 24 bytes
        ext.extend_from_slice(&[0; 16]);
        ext.extend_from_slice(&[51, 0, 1, 4, 0, 0, 0, 0]); // destination options, 8 bytes
        ext.extend_from_slice(&[44, 4, 0, 0, 0, 0, 0, 1]); // AH, (4+2)*4 = 24 bytes
        ext.extend_from_slice(&[0; 16]);
        ext.extend_from_slice(&[6, 0, 0, 0, 0, 0, 0, 9]); // atomic fragment, 8 bytes
        let ext_len = ext.len() as u16;
        ext.extend_from_slice(&[5; 20]);
        let p = v6(0, ext_len + 20 + 100, &ext);
        let t = tcp_in_ip(&p).unwrap();
        assert_eq!(t.tcp, &[5; 20]);
        assert_eq!(t.len, 120);
    }

    #[test]
    fn ipv6_esp_no_next_header_and_cut_extensions() {
        assert_eq!(tcp_in_ip(&v6(50, 100, &[0; 40])), Err(Skip::NotTcp(50)));
        assert_eq!(tcp_in_ip(&v6(59, 0, &[])), Err(Skip::NotTcp(59)));
        assert_eq!(tcp_in_ip(&v6(17, 8, &[0; 8])), Err(Skip::NotTcp(17)));
        assert_eq!(tcp_in_ip(&v6(60, 100, &[6])), Err(Skip::Truncated(Layer::Ip)));
        assert_eq!(
            tcp_in_ip(&v6(60, 100, &[6, 1, 0, 0, 0, 0, 0, 0])),
            Err(Skip::Truncated(Layer::Ip))
        );
    }

    #[test]
    fn ipv6_fragments_are_skipped() {
        // first fragment: offset 0, M set
        assert_eq!(tcp_in_ip(&v6(44, 1000, &[6, 0, 0, 1, 0, 0, 0, 1])), Err(Skip::Fragment));
        // later fragment: offset 100
        assert_eq!(
            tcp_in_ip(&v6(44, 1000, &[6, 0, 0x03, 0x20, 0, 0, 0, 1])),
            Err(Skip::Fragment)
        );
        // UDP fragment
        assert_eq!(
            tcp_in_ip(&v6(44, 1000, &[17, 0, 0, 1, 0, 0, 0, 1])),
            Err(Skip::NotTcp(17))
        );
    }

    #[test]
    fn ipv6_payload_length_zero_uses_jumbo_option_or_captured_length() {
        let mut hbh = vec![6, 0, 0xc2, 4];
        hbh.extend_from_slice(&100_000u32.to_be_bytes());
        hbh.extend_from_slice(&[0; 20]);
        let p = v6(0, 0, &hbh);
        assert_eq!(tcp_in_ip(&p).unwrap().len, 100_000 - 8);
        let p = v6(6, 0, &[0; 20 + 64_000]);
        assert_eq!(tcp_in_ip(&p).unwrap().len, 64_020);
    }

    #[test]
    fn ip_in_ip_is_followed_once() {
        let inner = v4(6, 40, 0, &[4; 20]);
        let p = v6(4, inner.len() as u16, &inner);
        let t = tcp_in_ip(&p).unwrap();
        assert_eq!(t.src, "10.0.0.1".parse::<IpAddr>().unwrap());
        assert_eq!(t.tcp, &[4; 20]);
        let inner6 = v6(6, 20, &[6; 20]);
        let p = v4(41, 20 + inner6.len() as u16, 0, &inner6);
        assert_eq!(tcp_in_ip(&p).unwrap().src, "fd00::1".parse::<IpAddr>().unwrap());
        // the outer length bounds the inner one
        let mut padded = inner6.clone();
        padded[5] = 26; // inner IPv6 claims 6 more payload bytes than the tunnel carries
        padded.extend_from_slice(&[0; 6]);
        let p = v4(41, 20 + inner6.len() as u16, 0, &padded);
        assert_eq!(tcp_in_ip(&p).unwrap().len, 20);
        // twice is too much
        let twice = v4(4, 20 + p.len() as u16, 0, &p);
        assert_eq!(tcp_in_ip(&twice), Err(Skip::NotTcp(41)));
        // a fragmented tunnel packet
        assert_eq!(tcp_in_ip(&v4(4, 100, 0x2000, &inner)), Err(Skip::Fragment));
    }
}
