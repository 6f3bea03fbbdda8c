//! Legacy pcap (libpcap's savefile format): a 24-byte file header, then records of a
//! 16-byte header (seconds, micro- or nanoseconds, captured length, original length) and
//! the captured bytes. <https://www.ietf.org/archive/id/draft-ietf-opsawg-pcap-04.html>
//!
//! Also reads the "modified" format of Alexey Kuznetsov's patched libpcap (magic
//! a1b2cd34), whose record headers carry 8 more bytes (ifindex, protocol, packet type).

use super::buffer::{Input, MAX_RECORD};
use super::linktype::LinkType;
use super::record::{Fault, Rec};

pub(crate) const HEADER_LEN: usize = 24;

/// libpcap's largest snapshot length for ordinary link types; records up to this size are
/// accepted whatever the header's snaplen says (as libpcap and Wireshark do).
const MAX_SNAPLEN: u32 = 262_144;

/// What the file header says, and how to read the records.
#[derive(Clone, Debug)]
pub(crate) struct PcapHeader {
    pub(crate) big_endian: bool,
    pub(crate) nanosecond: bool,
    /// Record header length: 16, or 24 for the modified format.
    record_header: usize,
    pub(crate) link: LinkType,
    pub(crate) snaplen: u32,
    /// Records bigger than this are corrupt.
    max_caplen: u32,
    /// Files older than version 2.3 may have the two lengths swapped.
    old_version: bool,
    /// Nanoseconds per unit of the record's fraction field.
    frac_ns: i64,
}

/// The four magics in file byte order: (bytes, big_endian, nanosecond, modified).
const MAGICS: [([u8; 4], bool, bool, bool); 6] = [
    ([0xd4, 0xc3, 0xb2, 0xa1], false, false, false),
    ([0xa1, 0xb2, 0xc3, 0xd4], true, false, false),
    ([0x4d, 0x3c, 0xb2, 0xa1], false, true, false),
    ([0xa1, 0xb2, 0x3c, 0x4d], true, true, false),
    ([0x34, 0xcd, 0xb2, 0xa1], false, false, true),
    ([0xa1, 0xb2, 0xcd, 0x34], true, false, true),
];

/// True when the first four bytes are a pcap magic.
pub(crate) fn is_magic(first: &[u8]) -> bool {
    first.len() >= 4 && MAGICS.iter().any(|m| m.0 == first[..4])
}

#[inline(always)]
pub(crate) fn rd32(b: &[u8], at: usize, be: bool) -> u32 {
    // One bounds check for the four bytes, not one per byte.
    let a: [u8; 4] = b[at..at + 4].try_into().expect("four bytes");
    if be {
        u32::from_be_bytes(a)
    } else {
        u32::from_le_bytes(a)
    }
}

#[inline(always)]
pub(crate) fn rd16(b: &[u8], at: usize, be: bool) -> u16 {
    let a: [u8; 2] = b[at..at + 2].try_into().expect("two bytes");
    if be {
        u16::from_be_bytes(a)
    } else {
        u16::from_le_bytes(a)
    }
}

impl PcapHeader {
    /// Parses the 24-byte file header (the magic has been checked already).
    /// Errors are reasons for [`super::CaptureError::BadHeader`].
    pub(crate) fn parse(h: &[u8]) -> Result<PcapHeader, String> {
        let &(_, big_endian, nanosecond, modified) = MAGICS
            .iter()
            .find(|m| m.0 == h[..4])
            .ok_or_else(|| "it has no pcap magic number".to_string())?;
        let major = rd16(h, 4, big_endian);
        let minor = rd16(h, 6, big_endian);
        if major != 2 {
            return Err(format!(
                "it is pcap version {major}.{minor}, and only version 2 (2.4) is supported"
            ));
        }
        let snaplen = rd32(h, 16, big_endian);
        let field = rd32(h, 20, big_endian);
        // Bits 16-25 are reserved and must be zero; 26-31 describe the FCS (libpcap
        // LT_RESERVED1 / LT_FCS_LENGTH).
        if field & 0x03ff_0000 != 0 {
            return Err(format!(
                "its link-type field 0x{field:08x} has reserved bits set (the header is damaged)"
            ));
        }
        Ok(PcapHeader {
            big_endian,
            nanosecond,
            record_header: if modified { 24 } else { 16 },
            link: LinkType(field & 0xffff),
            snaplen,
            max_caplen: snaplen.max(MAX_SNAPLEN).min(MAX_RECORD as u32 - 24),
            old_version: minor < 3,
            frac_ns: if nanosecond { 1 } else { 1_000 },
        })
    }

    /// Reads the next record. `Ok(None)` at a clean end of the stream.
    #[inline]
    pub(crate) fn next(&self, input: &mut Input) -> Result<Option<Rec>, Fault> {
        let hl = self.record_header;
        if !input.fill(hl) {
            return if input.avail() == 0 {
                Ok(None)
            } else {
                Err(self.truncated(input))
            };
        }
        let be = self.big_endian;
        // `fill(hl)` succeeded, so the 16 bytes read below are there; one check for all.
        let h = &input.data()[..16];
        let sec = rd32(h, 0, be);
        let frac = rd32(h, 4, be);
        let mut caplen = rd32(h, 8, be);
        let mut len = rd32(h, 12, be);
        if self.old_version && caplen > len {
            // libpcap before 0.4 wrote (len, caplen); a captured length larger than the
            // original one gives it away (Wireshark's heuristic).
            std::mem::swap(&mut caplen, &mut len);
        }
        if caplen > self.max_caplen {
            return Err(Fault::Corrupt {
                offset: input.offset(),
                reason: format!(
                    "a record claims {caplen} captured bytes, more than the largest possible \
                     record ({} bytes with snaplen {})",
                    self.max_caplen, self.snaplen
                ),
            });
        }
        let total = hl + caplen as usize;
        if !input.fill(total) {
            return Err(self.truncated(input));
        }
        let start = input.pos() + hl;
        input.consume(total);
        Ok(Some(Rec {
            ts: sec as i64 * 1_000_000_000 + frac as i64 * self.frac_ns,
            link: self.link,
            wire_len: len,
            interface: 0,
            start,
            len: caplen as usize,
        }))
    }

    #[cold]
    fn truncated(&self, input: &Input) -> Fault {
        Fault::Truncated { offset: input.offset() }
    }
}
