//! Link layers: from one captured record to the IP packet it carries.
//!
//! Link types are the LINKTYPE_ values of <https://www.tcpdump.org/linktypes.html>. Each
//! decoder checks the length of its fixed header once, then hands the rest on. What comes
//! out is the IP packet as captured; its version nibble tells IPv4 from IPv6 (see
//! [`super::ip`]), so encapsulations that do not name the IP version (MPLS, raw IP) need no
//! guess here.

use super::skip::{Layer, Skip};
use super::wire::be16;
use crate::capture::LinkType;

/// Ethertypes (IEEE 802 numbers) the decoder follows.
mod ethertype {
    pub const IPV4: u16 = 0x0800;
    pub const IPV6: u16 = 0x86dd;
    /// IEEE 802.1Q customer VLAN tag.
    pub const VLAN: u16 = 0x8100;
    /// IEEE 802.1ad service VLAN tag (QinQ outer tag).
    pub const QINQ: u16 = 0x88a8;
    /// Pre-standard QinQ outer tags still used by some switches.
    pub const QINQ_9100: u16 = 0x9100;
    pub const QINQ_9200: u16 = 0x9200;
    /// RFC 2516 PPPoE session stage.
    pub const PPPOE_SESSION: u16 = 0x8864;
    /// RFC 3032 MPLS, unicast and multicast.
    pub const MPLS: u16 = 0x8847;
    pub const MPLS_MC: u16 = 0x8848;
    /// Values up to 1500 are IEEE 802.3 length fields, not types: an LLC header follows.
    pub const MAX_8023_LEN: u16 = 1500;
}

/// PPP protocol numbers (RFC 1661 / IANA PPP DLL protocol numbers).
mod ppp {
    pub const IPV4: u16 = 0x0021;
    pub const IPV6: u16 = 0x0057;
}

/// BSD address families in DLT_NULL / DLT_LOOP headers.
mod af {
    pub const INET: u32 = 2;
    /// AF_INET6 differs between the BSDs: NetBSD/OpenBSD 24, FreeBSD/DragonFly 28,
    /// Darwin (macOS, iOS) 30. A capture written on one may be read on another.
    pub const INET6_NETBSD_OPENBSD: u32 = 24;
    pub const INET6_FREEBSD: u32 = 28;
    pub const INET6_DARWIN: u32 = 30;
}

/// RFC 1201 ARCNET protocol IDs (the ones tcpdump's print-arcnet.c names).
mod arctype {
    pub const IP: u8 = 0xd4;
    pub const INET6: u8 = 0xc4;
    /// RFC 1051 (pre-RFC 1201) IP: a 5-byte header without flag and sequence fields.
    pub const IP_OLD: u8 = 0xf0;
}

/// The IP packet a record carries, as captured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IpPacket<'a> {
    /// From the IP header on, to the end of the record (may include link padding, may be
    /// cut by the snaplen).
    pub data: &'a [u8],
    /// The IP packet length the encapsulation declares, when it has a length field
    /// (PPPoE, IEEE 802.3): an upper bound on the IP header's own length fields, as in
    /// Wireshark. None for links that say nothing.
    pub declared_len: Option<u32>,
}

impl<'a> IpPacket<'a> {
    #[inline]
    fn new(data: &'a [u8]) -> Self {
        IpPacket {
            data,
            declared_len: None,
        }
    }
}

/// Returns the IP packet (IPv4 or IPv6 header first) carried by one captured record.
#[inline]
pub(crate) fn ip_packet(link: LinkType, data: &[u8]) -> Result<IpPacket<'_>, Skip> {
    match link.0 {
        1 => ethernet(data),
        // LINKTYPE_RAW (101), DLT_RAW as written by OpenBSD (14), LINKTYPE_IPV4/IPV6.
        // The version nibble decides; a 228 record holding IPv6 is still decoded.
        101 | 14 | 228 | 229 => Ok(IpPacket::new(data)),
        // DLT value 12 is DLT_RAW on most systems but DLT_LOOP on OpenBSD; raw IP starts
        // with a 4 or 6 nibble, a loopback header with a zero byte.
        12 => match data.first().map(|b| b >> 4) {
            Some(4 | 6) => Ok(IpPacket::new(data)),
            _ => loopback(data),
        },
        113 => linux_sll(data),
        276 => linux_sll2(data),
        0 | 108 => loopback(data),
        // LINKTYPE_PPP (9) and LINKTYPE_PPP_HDLC (50) frame PPP the same way here.
        9 | 50 => ppp_frame(data),
        // LINKTYPE_PPP_ETHER: a PPPoE header with no Ethernet header in front.
        51 => pppoe_session(data),
        242 => ipoib(data),
        129 => arcnet_linux(data),
        _ => Err(Skip::UnsupportedLink(link)),
    }
}

/// Ethernet II (IEEE 802.3 with a type field): 6-byte destination, 6-byte source, type.
#[inline]
fn ethernet(data: &[u8]) -> Result<IpPacket<'_>, Skip> {
    let Some((h, rest)) = data.split_first_chunk::<14>() else {
        return Err(Skip::Truncated(Layer::Link));
    };
    match be16(h[12], h[13]) {
        // Untagged IP, nearly every frame: no need to enter the tag-following loop.
        ethertype::IPV4 | ethertype::IPV6 => Ok(IpPacket {
            data: rest,
            declared_len: None,
        }),
        et => by_ethertype(et, rest),
    }
}

/// Follows an ethertype through any stack of VLAN tags, PPPoE and MPLS to IP.
#[inline]
fn by_ethertype(mut et: u16, mut rest: &[u8]) -> Result<IpPacket<'_>, Skip> {
    let mut declared_len = None;
    loop {
        match et {
            ethertype::IPV4 | ethertype::IPV6 => {
                return Ok(IpPacket {
                    data: rest,
                    declared_len,
                })
            }
            // A tag is 2 bytes of TCI and the next ethertype. Each tag consumes 4 bytes,
            // so the loop ends with the data.
            ethertype::VLAN | ethertype::QINQ | ethertype::QINQ_9100 | ethertype::QINQ_9200 => {
                let Some((tag, r)) = rest.split_first_chunk::<4>() else {
                    return Err(Skip::Truncated(Layer::Link));
                };
                et = be16(tag[2], tag[3]);
                rest = r;
            }
            ethertype::PPPOE_SESSION => return pppoe_session(rest),
            // Each label stack consumes at least 4 bytes, so the loop still ends.
            ethertype::MPLS | ethertype::MPLS_MC => match mpls(et, rest)? {
                AfterMpls::Ip(ip) => return Ok(IpPacket::new(ip)),
                AfterMpls::Ethernet(inner_et, inner) => {
                    et = inner_et;
                    rest = inner;
                    declared_len = None;
                }
            },
            len if len <= ethertype::MAX_8023_LEN => {
                // IEEE 802.3 frame: LLC. Only SNAP with OUI 0 (RFC 1042) carries an
                // ethertype; everything else (STP, NetBIOS, IPX) is not IP.
                match rest.split_first_chunk::<8>() {
                    Some((&[0xaa, 0xaa, 0x03, 0, 0, 0, hi, lo], r)) => {
                        et = be16(hi, lo);
                        rest = r;
                        // The 802.3 length counts the 8 LLC/SNAP bytes; padding follows.
                        declared_len = Some((len as u32).saturating_sub(8));
                        if et <= ethertype::MAX_8023_LEN {
                            return Err(Skip::NotIp(et));
                        }
                    }
                    _ => return Err(Skip::NotIp(len)),
                }
            }
            other => return Err(Skip::NotIp(other)),
        }
    }
}

/// RFC 2516 PPPoE session header (version/type, code, session id, length) + PPP protocol.
/// The length field counts the PPP protocol field and the IP packet; whatever follows
/// (Ethernet padding) is not part of the packet even when the IP header claims it.
#[inline]
fn pppoe_session(data: &[u8]) -> Result<IpPacket<'_>, Skip> {
    let Some((h, ppp)) = data.split_first_chunk::<6>() else {
        return Err(Skip::Truncated(Layer::Link));
    };
    let mut packet = ppp_protocol(ppp)?;
    let proto_len = (ppp.len() - packet.data.len()) as u32;
    packet.declared_len = Some((be16(h[4], h[5]) as u32).saturating_sub(proto_len));
    Ok(packet)
}

/// A PPP frame as LINKTYPE_PPP stores it: the HDLC-like address and control bytes
/// (0xff 0x03, RFC 1662) are optional, then the protocol field.
fn ppp_frame(data: &[u8]) -> Result<IpPacket<'_>, Skip> {
    match data {
        [0xff, 0x03, rest @ ..] => ppp_protocol(rest),
        _ => ppp_protocol(data),
    }
}

/// The PPP protocol field, 2 bytes or 1 when compressed (RFC 1661 §6.5: a protocol
/// number with an odd first byte is a complete 1-byte field).
fn ppp_protocol(data: &[u8]) -> Result<IpPacket<'_>, Skip> {
    let (proto, rest) = match data {
        [b, rest @ ..] if b & 1 == 1 => (*b as u16, rest),
        [hi, lo, rest @ ..] => (be16(*hi, *lo), rest),
        _ => return Err(Skip::Truncated(Layer::Link)),
    };
    match proto {
        ppp::IPV4 | ppp::IPV6 => Ok(IpPacket::new(rest)),
        other => Err(Skip::NotIp(other)),
    }
}

/// What follows an MPLS label stack.
enum AfterMpls<'a> {
    Ip(&'a [u8]),
    /// An Ethernet pseudowire: the inner frame's ethertype and what follows its header.
    Ethernet(u16, &'a [u8]),
}

/// RFC 3032 label stack: 4-byte entries until the bottom-of-stack bit. MPLS does not say
/// what follows; IPv4/IPv6 are recognised by their version nibble (what tcpdump and
/// Wireshark do by default), and a first nibble of 0 is taken as the RFC 4385 control
/// word of an Ethernet pseudowire (RFC 4448), as Wireshark's heuristic does.
fn mpls(et: u16, mut rest: &[u8]) -> Result<AfterMpls<'_>, Skip> {
    loop {
        let Some((entry, r)) = rest.split_first_chunk::<4>() else {
            return Err(Skip::Truncated(Layer::Link));
        };
        rest = r;
        if entry[2] & 0x01 != 0 {
            break;
        }
    }
    match rest.first().map(|b| b >> 4) {
        Some(4 | 6) => Ok(AfterMpls::Ip(rest)),
        Some(0) => match rest.split_first_chunk::<18>() {
            Some((cw_eth, inner)) => Ok(AfterMpls::Ethernet(be16(cw_eth[16], cw_eth[17]), inner)),
            None => Err(Skip::Truncated(Layer::Link)),
        },
        Some(_) => Err(Skip::NotIp(et)),
        None => Err(Skip::Truncated(Layer::Ip)),
    }
}

/// Linux cooked capture v1: packet type, ARPHRD type, address length, 8 address bytes,
/// protocol (an ethertype for the usual ARPHRD types) at offset 14; 16 bytes.
#[inline]
fn linux_sll(data: &[u8]) -> Result<IpPacket<'_>, Skip> {
    let Some((h, rest)) = data.split_first_chunk::<16>() else {
        return Err(Skip::Truncated(Layer::Link));
    };
    by_ethertype(be16(h[14], h[15]), rest)
}

/// Linux cooked capture v2: protocol at offset 0, then reserved, interface index, ARPHRD
/// type, packet type, address length and 8 address bytes; 20 bytes.
#[inline]
fn linux_sll2(data: &[u8]) -> Result<IpPacket<'_>, Skip> {
    let Some((h, rest)) = data.split_first_chunk::<20>() else {
        return Err(Skip::Truncated(Layer::Link));
    };
    by_ethertype(be16(h[0], h[1]), rest)
}

/// BSD loopback: a 4-byte address family. DLT_NULL stores it in the byte order of the
/// host that wrote the capture, DLT_LOOP in network order; both are accepted for both
/// (a family never exceeds 0xffff, so a value that does was written the other way
/// round — the rule tcpdump's print-null.c uses).
fn loopback(data: &[u8]) -> Result<IpPacket<'_>, Skip> {
    let Some((h, rest)) = data.split_first_chunk::<4>() else {
        return Err(Skip::Truncated(Layer::Link));
    };
    let mut family = u32::from_le_bytes(*h);
    if family > 0xffff {
        family = family.swap_bytes();
    }
    match family {
        af::INET | af::INET6_NETBSD_OPENBSD | af::INET6_FREEBSD | af::INET6_DARWIN => Ok(IpPacket::new(rest)),
        other => Err(Skip::NotIp(other as u16)),
    }
}

/// LINKTYPE_IPOIB: the 44-byte Linux IP-over-InfiniBand pseudo-header — 20-byte
/// destination and 20-byte source hardware addresses (4-byte QPN + 16-byte GID), then the
/// RFC 4391 §6 encapsulation header: a 2-byte ethertype and 2 reserved bytes.
/// (tcpdump's print-ipoib.c reads the type at offset 40; tcpdump__ipoib.pcap agrees.)
fn ipoib(data: &[u8]) -> Result<IpPacket<'_>, Skip> {
    let Some((h, rest)) = data.split_first_chunk::<44>() else {
        return Err(Skip::Truncated(Layer::Link));
    };
    by_ethertype(be16(h[40], h[41]), rest)
}

/// LINKTYPE_ARCNET_LINUX: source, destination, a 2-byte offset, the protocol ID, then for
/// RFC 1201 protocols a split flag and a 2-byte sequence id (8 bytes). An exception
/// packet (flag 0xff) repeats protocol id, flag and sequence id after 2 padding bytes (12
/// bytes). RFC 1051 types have only the 5-byte header. The protocol ID is reported as the
/// NotIp value for non-IP packets (0xd5 is ARP).
fn arcnet_linux(data: &[u8]) -> Result<IpPacket<'_>, Skip> {
    let Some(h) = data.first_chunk::<5>() else {
        return Err(Skip::Truncated(Layer::Link));
    };
    let header_len = match h[4] {
        arctype::IP_OLD => 5,
        arctype::IP | arctype::INET6 => match data.get(5) {
            Some(0xff) => 12,
            // RFC 1201 §3.2: split flag 0 = unfragmented, odd = first fragment (holds the
            // IP header), even and non-zero = a later fragment (no IP header).
            Some(flag) if *flag != 0 && flag & 1 == 0 => return Err(Skip::Fragment),
            Some(_) => 8,
            None => return Err(Skip::Truncated(Layer::Link)),
        },
        // ARP (0xd5), RARP, AppleTalk, IPX, RFC 1051 ARP (0xf1), diagnostics, ...
        other => return Err(Skip::NotIp(other as u16)),
    };
    data.get(header_len..)
        .map(IpPacket::new)
        .ok_or(Skip::Truncated(Layer::Link))
}

#[cfg(test)]
mod tests {
    use super::*;

    const V4: [u8; 4] = [0x45, 0, 0, 20];

    fn ip(link: LinkType, data: &[u8]) -> Result<&[u8], Skip> {
        ip_packet(link, data).map(|p| p.data)
    }

    fn cat(parts: &[&[u8]]) -> Vec<u8> {
        parts.concat()
    }

    #[test]
    fn ethernet_ii_hands_on_the_ip() {
        let f = cat(&[&[0; 12], &[0x08, 0x00], &V4]);
        assert_eq!(ip(LinkType::ETHERNET, &f), Ok(&V4[..]));
        let f = cat(&[&[0; 12], &[0x86, 0xdd], &[0x60]]);
        assert_eq!(ip(LinkType::ETHERNET, &f), Ok(&[0x60][..]));
    }

    #[test]
    fn ethernet_shorter_than_its_header_is_truncated() {
        assert_eq!(ip(LinkType::ETHERNET, &[0; 13]), Err(Skip::Truncated(Layer::Link)));
    }

    #[test]
    fn vlan_stacks_of_every_tpid_are_followed() {
        let f = cat(&[
            &[0; 12],
            &[0x88, 0xa8, 0, 100],
            &[0x91, 0x00, 0, 200],
            &[0x92, 0x00, 0, 250],
            &[0x81, 0x00, 0, 300u16 as u8],
            &[0x08, 0x00],
            &V4,
        ]);
        assert_eq!(ip(LinkType::ETHERNET, &f), Ok(&V4[..]));
    }

    #[test]
    fn vlan_tag_cut_off_is_truncated() {
        let f = cat(&[&[0; 12], &[0x81, 0x00, 0, 1]]);
        assert_eq!(ip(LinkType::ETHERNET, &f), Err(Skip::Truncated(Layer::Link)));
    }

    #[test]
    fn arp_and_lldp_are_not_ip() {
        let f = cat(&[&[0; 12], &[0x08, 0x06], &[0; 28]]);
        assert_eq!(ip(LinkType::ETHERNET, &f), Err(Skip::NotIp(0x0806)));
        let f = cat(&[&[0; 12], &[0x81, 0x00, 0, 1, 0x88, 0xcc], &[0; 28]]);
        assert_eq!(ip(LinkType::ETHERNET, &f), Err(Skip::NotIp(0x88cc)));
    }

    #[test]
    fn ieee_802_3_with_snap_carries_ip_and_plain_llc_does_not() {
        let f = cat(&[&[0; 12], &[0x00, 0x40], &[0xaa, 0xaa, 3, 0, 0, 0, 0x08, 0x00], &V4]);
        assert_eq!(ip(LinkType::ETHERNET, &f), Ok(&V4[..]));
        // spanning tree: LLC 42 42 03
        let f = cat(&[&[0; 12], &[0x00, 0x26], &[0x42, 0x42, 3, 0, 0, 0, 0, 0]]);
        assert_eq!(ip(LinkType::ETHERNET, &f), Err(Skip::NotIp(0x26)));
    }

    #[test]
    fn pppoe_session_carries_ipv4_and_ipv6_and_lcp_is_not_ip() {
        let hdr = [0x11, 0x00, 0x12, 0x34, 0x00, 0x16];
        let f = cat(&[&[0; 12], &[0x88, 0x64], &hdr, &[0x00, 0x21], &V4]);
        assert_eq!(ip(LinkType::ETHERNET, &f), Ok(&V4[..]));
        let f = cat(&[&[0; 12], &[0x88, 0x64], &hdr, &[0x00, 0x57], &[0x60]]);
        assert_eq!(ip(LinkType::ETHERNET, &f), Ok(&[0x60][..]));
        let f = cat(&[&[0; 12], &[0x88, 0x64], &hdr, &[0xc0, 0x21], &[1, 2, 3, 4]]);
        assert_eq!(ip(LinkType::ETHERNET, &f), Err(Skip::NotIp(0xc021)));
        let f = cat(&[&[0; 12], &[0x88, 0x63], &hdr]);
        assert_eq!(ip(LinkType::ETHERNET, &f), Err(Skip::NotIp(0x8863)));
    }

    #[test]
    fn pppoe_and_802_3_lengths_bound_the_ip_packet() {
        let hdr = [0x11, 0x00, 0x12, 0x34, 0x00, 42];
        let f = cat(&[&[0; 12], &[0x88, 0x64], &hdr, &[0x00, 0x21], &V4, &[0; 42]]);
        assert_eq!(ip_packet(LinkType::ETHERNET, &f).unwrap().declared_len, Some(40));
        // compressed PPP protocol field: 1 byte
        let f = cat(&[&[0; 12], &[0x88, 0x64], &hdr, &[0x21], &V4]);
        assert_eq!(ip_packet(LinkType::ETHERNET, &f).unwrap().declared_len, Some(41));
        let f = cat(&[&[0; 12], &[0x00, 48], &[0xaa, 0xaa, 3, 0, 0, 0, 0x08, 0x00], &V4]);
        assert_eq!(ip_packet(LinkType::ETHERNET, &f).unwrap().declared_len, Some(40));
        let f = cat(&[&[0; 12], &[0x08, 0x00], &V4]);
        assert_eq!(ip_packet(LinkType::ETHERNET, &f).unwrap().declared_len, None);
    }

    #[test]
    fn pppoe_over_qinq() {
        let hdr = [0x11, 0x00, 0x12, 0x34, 0x00, 0x16];
        let f = cat(&[
            &[0; 12],
            &[0x88, 0xa8, 0, 1, 0x81, 0, 0, 2, 0x88, 0x64],
            &hdr,
            &[0, 0x21],
            &V4,
        ]);
        assert_eq!(ip(LinkType::ETHERNET, &f), Ok(&V4[..]));
    }

    #[test]
    fn mpls_label_stack_then_ip_by_version_nibble() {
        let labels = [0x00, 0x01, 0x00, 64, 0x00, 0x02, 0x01, 64];
        let f = cat(&[&[0; 12], &[0x88, 0x47], &labels, &V4]);
        assert_eq!(ip(LinkType::ETHERNET, &f), Ok(&V4[..]));
        let f = cat(&[&[0; 12], &[0x88, 0x48], &labels, &[0x60, 0]]);
        assert_eq!(ip(LinkType::ETHERNET, &f), Ok(&[0x60, 0][..]));
        // Ethernet pseudowire with a control word (tcpreplay test.pcap frame 142), and
        // MPLS in it again
        let f = cat(&[
            &[0; 12],
            &[0x88, 0x47],
            &labels,
            &[0; 4],
            &[0; 12],
            &[0x81, 0, 0, 1, 0x08, 0],
            &V4,
        ]);
        assert_eq!(ip(LinkType::ETHERNET, &f), Ok(&V4[..]));
        let f = cat(&[
            &[0; 12],
            &[0x88, 0x47],
            &labels,
            &[0; 4],
            &[0; 12],
            &[0x88, 0x47],
            &labels,
            &V4,
        ]);
        assert_eq!(ip(LinkType::ETHERNET, &f), Ok(&V4[..]));
        let f = cat(&[&[0; 12], &[0x88, 0x47], &labels, &[0; 4], &[0; 13]]);
        assert_eq!(ip(LinkType::ETHERNET, &f), Err(Skip::Truncated(Layer::Link)));
        // anything else after the stack is not IP
        let f = cat(&[&[0; 12], &[0x88, 0x47], &labels, &[0x10, 0, 0, 0]]);
        assert_eq!(ip(LinkType::ETHERNET, &f), Err(Skip::NotIp(0x8847)));
        // no bottom of stack before the end
        let f = cat(&[&[0; 12], &[0x88, 0x47], &labels[..4]]);
        assert_eq!(ip(LinkType::ETHERNET, &f), Err(Skip::Truncated(Layer::Link)));
    }

    #[test]
    fn linux_cooked_v1_and_v2() {
        let mut sll = [0u8; 16];
        sll[14..16].copy_from_slice(&[0x08, 0x00]);
        assert_eq!(ip(LinkType::LINUX_SLL, &cat(&[&sll, &V4])), Ok(&V4[..]));
        sll[14..16].copy_from_slice(&[0x08, 0x06]);
        assert_eq!(ip(LinkType::LINUX_SLL, &cat(&[&sll, &V4])), Err(Skip::NotIp(0x0806)));
        assert_eq!(ip(LinkType::LINUX_SLL, &sll[..15]), Err(Skip::Truncated(Layer::Link)));

        let mut sll2 = [0u8; 20];
        sll2[0..2].copy_from_slice(&[0x86, 0xdd]);
        assert_eq!(ip(LinkType::LINUX_SLL2, &cat(&[&sll2, &[0x60]])), Ok(&[0x60][..]));
        assert_eq!(ip(LinkType::LINUX_SLL2, &sll2[..19]), Err(Skip::Truncated(Layer::Link)));
    }

    #[test]
    fn raw_ip_link_types_pass_the_packet_through() {
        for lt in [101, 12, 14, 228, 229] {
            assert_eq!(ip(LinkType(lt), &V4), Ok(&V4[..]), "linktype {lt}");
        }
    }

    #[test]
    fn null_loopback_in_either_byte_order() {
        for af in [2u32, 24, 28, 30] {
            for bytes in [af.to_le_bytes(), af.to_be_bytes()] {
                let f = cat(&[&bytes, &V4]);
                assert_eq!(ip(LinkType::NULL, &f), Ok(&V4[..]), "af {af}");
                assert_eq!(ip(LinkType::LOOP, &f), Ok(&V4[..]), "af {af}");
            }
        }
        // AF_APPLETALK (16) and OpenBSD DLT_LOOP as linktype 12
        assert_eq!(ip(LinkType::NULL, &[16, 0, 0, 0, 1]), Err(Skip::NotIp(16)));
        assert_eq!(ip(LinkType(12), &cat(&[&[0, 0, 0, 2], &V4])), Ok(&V4[..]));
        assert_eq!(ip(LinkType::NULL, &[2, 0, 0]), Err(Skip::Truncated(Layer::Link)));
    }

    #[test]
    fn ppp_with_and_without_address_control_and_compressed_protocol() {
        assert_eq!(ip(LinkType::PPP, &cat(&[&[0xff, 0x03, 0x00, 0x21], &V4])), Ok(&V4[..]));
        assert_eq!(ip(LinkType::PPP, &cat(&[&[0x00, 0x57], &[0x60]])), Ok(&[0x60][..]));
        assert_eq!(ip(LinkType::PPP, &cat(&[&[0x21], &V4])), Ok(&V4[..]));
        assert_eq!(
            ip(LinkType::PPP, &[0xff, 0x03, 0xc0, 0x21, 1]),
            Err(Skip::NotIp(0xc021))
        );
        assert_eq!(
            ip(LinkType::PPP, &[0xff, 0x03, 0x00]),
            Err(Skip::Truncated(Layer::Link))
        );
    }

    #[test]
    fn ipoib_reads_the_type_at_offset_40() {
        let mut h = [0u8; 44];
        h[40..42].copy_from_slice(&[0x08, 0x00]);
        assert_eq!(ip(LinkType::IPOIB, &cat(&[&h, &V4])), Ok(&V4[..]));
        h[40..42].copy_from_slice(&[0x08, 0x06]);
        assert_eq!(ip(LinkType::IPOIB, &cat(&[&h, &V4])), Err(Skip::NotIp(0x0806)));
        assert_eq!(ip(LinkType::IPOIB, &h[..43]), Err(Skip::Truncated(Layer::Link)));
    }

    #[test]
    fn arcnet_rfc1201_rfc1051_exception_and_fragments() {
        // from tcpdump__arcnet-rfc1201-arp-icmp-http.pcap, record 3
        let f = cat(&[&[0xbe, 0x50, 0xa8, 0xe7, 0xd4, 0x00, 0x01, 0x66], &V4]);
        assert_eq!(ip(LinkType::ARCNET_LINUX, &f), Ok(&V4[..]));
        let f = cat(&[&[0xbe, 0x50, 0, 0, 0xd4, 0xff, 0xff, 0xff, 0xd4, 0x00, 0, 1], &V4]);
        assert_eq!(ip(LinkType::ARCNET_LINUX, &f), Ok(&V4[..]));
        let f = cat(&[&[0xbe, 0x50, 0, 0, 0xf0], &V4]);
        assert_eq!(ip(LinkType::ARCNET_LINUX, &f), Ok(&V4[..]));
        // first fragment (odd flag) holds the IP header, later ones do not
        let f = cat(&[&[0xbe, 0x50, 0, 0, 0xd4, 0x01, 0, 1], &V4]);
        assert_eq!(ip(LinkType::ARCNET_LINUX, &f), Ok(&V4[..]));
        let f = cat(&[&[0xbe, 0x50, 0, 0, 0xd4, 0x02, 0, 1], &V4]);
        assert_eq!(ip(LinkType::ARCNET_LINUX, &f), Err(Skip::Fragment));
        // ARP
        let f = [0xbe, 0x00, 0xea, 0x08, 0xd5, 0x00, 0x01, 0x65, 0, 7];
        assert_eq!(ip(LinkType::ARCNET_LINUX, &f), Err(Skip::NotIp(0xd5)));
        assert_eq!(ip(LinkType::ARCNET_LINUX, &f[..4]), Err(Skip::Truncated(Layer::Link)));
        assert_eq!(ip(LinkType::ARCNET_LINUX, &f[..5]), Err(Skip::NotIp(0xd5)));
        assert_eq!(
            ip(LinkType::ARCNET_LINUX, &[1, 2, 0, 0, 0xd4, 0, 0]),
            Err(Skip::Truncated(Layer::Link))
        );
    }

    #[test]
    fn other_link_types_are_unsupported() {
        for lt in [2, 105, 127, 147, 239, 0xffff_ffff] {
            assert_eq!(ip(LinkType(lt), &V4), Err(Skip::UnsupportedLink(LinkType(lt))));
        }
    }
}
