//! Decoding captured bytes into TCP segments: link layer, IP, TCP header and options.
//!
//! Decoding is lax in the way real captures need: a record cut by the snaplen still yields
//! its TCP header (lengths come from the IP header, never from the captured length), and
//! options cut off by the snaplen are *unknown*, not *absent*.

mod ecn;
mod ip;
mod link;
mod nop_run;
mod print;
mod skip;
mod tcp;
mod wire;

#[cfg(test)]
mod tests;

pub use ecn::Ecn;
pub use nop_run::longest_nop_run;
pub use print::Print;
pub use skip::{Layer, Skip};
pub use tcp::{SackBlocks, Seen, TcpFlags, TcpOptions, Timestamps};

use crate::capture::LinkType;
use crate::seq::SeqNum;
use std::net::IpAddr;

/// The parts of one TCP segment the analysis uses. Plain data, no borrowed bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub src: IpAddr,
    pub dst: IpAddr,
    /// The IP header's ECN codepoint (RFC 3168 §5); inside a tunnel, the inner header's
    /// after decapsulation (RFC 6040 §4.2: an outer CE reaches the transport).
    pub ecn: Ecn,
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: SeqNum,
    pub ack: SeqNum,
    pub flags: TcpFlags,
    /// The AE flag (RFC 9768 §3.1; bit 8 of the flags, once the ECN nonce's NS, RFC 3540,
    /// historic): with CWR and ECE it asks for Accurate ECN in a SYN.
    pub ae: bool,
    /// The 16-bit window field as sent (not scaled).
    pub window: u16,
    /// TCP payload length from the IP header's length fields, whatever the snaplen kept.
    pub payload_len: u32,
    pub options: TcpOptions,
    /// The IPv4 identification where it may name the datagram (RFC 6864; see
    /// [`Print::id_names`]): a sender that counts them shows in it the order it sent its
    /// segments in. None for IPv6 and for an atomic datagram's ID 0.
    pub ip_id: Option<u16>,
}

/// Decodes one captured record of the given link type.
///
/// Supported link types: Ethernet (1; any stack of 802.1Q/802.1ad/0x9100 tags, PPPoE
/// sessions, MPLS label stacks and Ethernet pseudowires, 802.3 LLC/SNAP), raw IP (101,
/// 12, 14, 228, 229), Linux cooked v1/v2 (113, 276), BSD loopback (0, 108; either byte
/// order), PPP (9, 50), PPPoE without Ethernet (51), IP over InfiniBand (242) and Linux
/// ARCNET (129).
/// IPv4 with options, IPv6 with extension headers, one level of IP-in-IP.
///
/// Never panics, never allocates, never verifies checksums.
#[inline]
pub fn decode(link: LinkType, data: &[u8]) -> Result<Segment, Skip> {
    let packet = link::ip_packet(link, data)?;
    let tcp = ip::tcp_in_ip(packet)?;
    tcp::segment(tcp)
}

/// [`decode`], and the record's fingerprint from its IP header on into `print` (what a
/// capture duplicate repeats: `flow::duplicate`; meaningless when the record is skipped).
/// What the analysis's reading thread calls. The print goes out through `print`, not in a
/// tuple with the segment: returned together, the 116-byte segment is moved once more per
/// record (~25 instructions of the ~400 a record costs to read and decode).
#[inline]
pub fn decode_printed(link: LinkType, data: &[u8], print: &mut Print) -> Result<Segment, Skip> {
    let packet = link::ip_packet(link, data)?;
    let tcp = ip::tcp_in_ip(packet)?;
    // The print first: `tcp::segment` takes `tcp` and need not leave it for later.
    *print = print::of(&tcp);
    tcp::segment(tcp)
}
