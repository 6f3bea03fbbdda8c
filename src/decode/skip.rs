//! Why a captured record did not yield a TCP segment. Skips are counted, never errors:
//! a capture full of ARP and UDP is a valid capture.

use crate::capture::LinkType;
use std::fmt;

/// The protocol layer a skip happened at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Layer {
    Link,
    Ip,
    Tcp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Skip {
    /// A link type this decoder does not read.
    UnsupportedLink(LinkType),
    /// Link layer carried something other than IPv4/IPv6 (ARP, LLDP, ...): the ethertype.
    /// Links without ethertypes report their own protocol number: the PPP protocol on PPP
    /// and PPPoE (0xc021 is LCP), the address family on BSD loopback, the RFC 1201
    /// protocol id on ARCNET (0xd5 is ARP). Values up to 1500 are IEEE 802.3 length fields
    /// of LLC frames (spanning tree, NetBIOS) that are not SNAP-encapsulated IP.
    NotIp(u16),
    /// IP carried another protocol (UDP, ICMP, ...): the protocol number.
    NotTcp(u8),
    /// A non-first IP fragment, or a first fragment (TCP cannot be tracked from fragments).
    Fragment,
    /// The record ends before the header of this layer is complete.
    Truncated(Layer),
    /// A header field is impossible (bad IP version, TCP data offset < 5, ...).
    Malformed(Layer, &'static str),
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Skip::UnsupportedLink(l) => write!(f, "unsupported link type {}", l.0),
            Skip::NotIp(et) => write!(f, "not IP (ethertype 0x{et:04x})"),
            Skip::NotTcp(p) => write!(f, "not TCP (IP protocol {p})"),
            Skip::Fragment => write!(f, "IP fragment"),
            Skip::Truncated(l) => write!(f, "{l:?} header cut off by the snaplen"),
            Skip::Malformed(l, why) => write!(f, "malformed {l:?} header: {why}"),
        }
    }
}
