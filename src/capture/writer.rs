//! Writing pcap and pcapng files, for fixtures built from hand-made packets.
//!
//! ```
//! use bdpscope::capture::{LinkType, PcapNgWriter};
//! use bdpscope::time::Timestamp;
//!
//! let mut w = PcapNgWriter::new(Vec::new(), false).unwrap();
//! let eth = w.add_interface(LinkType::ETHERNET, 65535, Some(9)).unwrap(); // ns
//! w.write_packet(eth, Timestamp::from_nanos(1_700_000_000_123_456_789), &[0u8; 54], 54).unwrap();
//! let file: Vec<u8> = w.into_inner();
//! assert_eq!(&file[..4], &[0x0a, 0x0d, 0x0d, 0x0a]);
//! ```

use super::linktype::LinkType;
use crate::time::Timestamp;
use std::io::{self, Write};

fn put32(out: &mut Vec<u8>, v: u32, be: bool) {
    out.extend_from_slice(&if be { v.to_be_bytes() } else { v.to_le_bytes() });
}

fn put16(out: &mut Vec<u8>, v: u16, be: bool) {
    out.extend_from_slice(&if be { v.to_be_bytes() } else { v.to_le_bytes() });
}

fn captured_len(data: &[u8]) -> io::Result<u32> {
    u32::try_from(data.len()).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "packet longer than 4 GiB"))
}

/// Writes a legacy pcap file: one link type, µs or ns timestamps, either byte order.
pub struct PcapWriter<W: Write> {
    w: W,
    nanos: bool,
    big_endian: bool,
    scratch: Vec<u8>,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the 24-byte file header (version 2.4).
    pub fn new(mut w: W, link: LinkType, snaplen: u32, nanos: bool, big_endian: bool) -> io::Result<Self> {
        let mut h = Vec::with_capacity(24);
        put32(&mut h, if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 }, big_endian);
        put16(&mut h, 2, big_endian);
        put16(&mut h, 4, big_endian);
        put32(&mut h, 0, big_endian); // thiszone
        put32(&mut h, 0, big_endian); // sigfigs
        put32(&mut h, snaplen, big_endian);
        put32(&mut h, link.0, big_endian);
        w.write_all(&h)?;
        Ok(PcapWriter {
            w,
            nanos,
            big_endian,
            scratch: Vec::with_capacity(2048),
        })
    }

    /// Writes one record. The timestamp is truncated to the file's resolution; seconds
    /// are stored as an unsigned 32-bit count, as in every pcap file.
    pub fn write_packet(&mut self, ts: Timestamp, data: &[u8], wire_len: u32) -> io::Result<()> {
        let caplen = captured_len(data)?;
        let ns = ts.nanos();
        let secs = ns.div_euclid(1_000_000_000);
        let sub = ns.rem_euclid(1_000_000_000);
        let frac = if self.nanos { sub } else { sub / 1_000 };
        let be = self.big_endian;
        let out = &mut self.scratch;
        out.clear();
        put32(out, secs as u32, be);
        put32(out, frac as u32, be);
        put32(out, caplen, be);
        put32(out, wire_len, be);
        out.extend_from_slice(data);
        self.w.write_all(out)
    }

    pub fn get_ref(&self) -> &W {
        &self.w
    }

    pub fn get_mut(&mut self) -> &mut W {
        &mut self.w
    }

    /// The underlying writer (not flushed: call `flush` on it for buffered writers).
    pub fn into_inner(self) -> W {
        self.w
    }
}

/// Writes a pcapng file: sections in either byte order, interfaces with their own link
/// type and timestamp resolution, Enhanced and Simple Packet Blocks.
pub struct PcapNgWriter<W: Write> {
    w: W,
    big_endian: bool,
    /// (tsresol byte, tsoffset seconds, snaplen) of each interface of the current section.
    ifaces: Vec<(u8, i64, u32)>,
    scratch: Vec<u8>,
}

/// Block type codes, for [`PcapNgWriter::write_block`].
pub mod block_type {
    pub const SECTION_HEADER: u32 = 0x0a0d_0d0a;
    pub const INTERFACE_DESCRIPTION: u32 = 1;
    pub const PACKET: u32 = 2;
    pub const SIMPLE_PACKET: u32 = 3;
    pub const NAME_RESOLUTION: u32 = 4;
    pub const INTERFACE_STATISTICS: u32 = 5;
    pub const ENHANCED_PACKET: u32 = 6;
    pub const SYSTEMD_JOURNAL_EXPORT: u32 = 9;
    pub const DECRYPTION_SECRETS: u32 = 10;
    pub const CUSTOM: u32 = 0x0000_0bad;
}

/// Timestamp units since `offset_secs` for an `if_tsresol` byte, in integer arithmetic.
fn to_units(ts: Timestamp, tsresol: u8, offset_secs: i64) -> u64 {
    let rel = ts.nanos() as i128 - offset_secs as i128 * 1_000_000_000;
    let n = u32::from(tsresol & 0x7f);
    let units = if tsresol & 0x80 != 0 {
        if n >= 64 {
            return u64::MAX;
        }
        (rel << n).div_euclid(1_000_000_000)
    } else if n <= 9 {
        rel.div_euclid(10i128.pow(9 - n))
    } else {
        match 10i128.checked_pow(n - 9).and_then(|m| rel.checked_mul(m)) {
            Some(v) => v,
            None => return u64::MAX,
        }
    };
    units.clamp(0, u64::MAX as i128) as u64
}

impl<W: Write> PcapNgWriter<W> {
    /// Writes a Section Header Block (version 1.0, unknown section length).
    pub fn new(w: W, big_endian: bool) -> io::Result<Self> {
        let mut s = PcapNgWriter {
            w,
            big_endian,
            ifaces: Vec::new(),
            scratch: Vec::new(),
        };
        s.new_section(big_endian)?;
        Ok(s)
    }

    /// Starts another section (in either byte order); interface ids restart at 0.
    pub fn new_section(&mut self, big_endian: bool) -> io::Result<()> {
        self.big_endian = big_endian;
        self.ifaces.clear();
        let mut body = Vec::with_capacity(16);
        put32(&mut body, 0x1a2b_3c4d, big_endian);
        put16(&mut body, 1, big_endian);
        put16(&mut body, 0, big_endian);
        body.extend_from_slice(&(-1i64).to_le_bytes()); // section length: unknown
        self.write_block(block_type::SECTION_HEADER, &body)
    }

    /// Describes an interface; `tsresol` is the raw `if_tsresol` byte (6 = µs, 9 = ns,
    /// 0x80 | n = 2^-n s; None writes no option, meaning µs). Returns its id.
    pub fn add_interface(&mut self, link: LinkType, snaplen: u32, tsresol: Option<u8>) -> io::Result<u32> {
        self.add_interface_with_offset(link, snaplen, tsresol, 0)
    }

    /// Like [`PcapNgWriter::add_interface`], with an `if_tsoffset` (seconds added to
    /// every timestamp of the interface) when `tsoffset_secs` is not 0.
    pub fn add_interface_with_offset(
        &mut self,
        link: LinkType,
        snaplen: u32,
        tsresol: Option<u8>,
        tsoffset_secs: i64,
    ) -> io::Result<u32> {
        let be = self.big_endian;
        let link16 = u16::try_from(link.0)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "pcapng link types are 16-bit"))?;
        let mut body = Vec::with_capacity(32);
        put16(&mut body, link16, be);
        put16(&mut body, 0, be);
        put32(&mut body, snaplen, be);
        if let Some(r) = tsresol {
            put16(&mut body, 9, be);
            put16(&mut body, 1, be);
            body.extend_from_slice(&[r, 0, 0, 0]);
        }
        if tsoffset_secs != 0 {
            put16(&mut body, 14, be);
            put16(&mut body, 8, be);
            body.extend_from_slice(&if be {
                tsoffset_secs.to_be_bytes()
            } else {
                tsoffset_secs.to_le_bytes()
            });
        }
        if tsresol.is_some() || tsoffset_secs != 0 {
            body.extend_from_slice(&[0, 0, 0, 0]); // opt_endofopt
        }
        self.write_block(block_type::INTERFACE_DESCRIPTION, &body)?;
        self.ifaces.push((tsresol.unwrap_or(6), tsoffset_secs, snaplen));
        Ok(self.ifaces.len() as u32 - 1)
    }

    /// Writes an Enhanced Packet Block on interface `iface` (timestamp truncated to the
    /// interface's resolution).
    pub fn write_packet(&mut self, iface: u32, ts: Timestamp, data: &[u8], wire_len: u32) -> io::Result<()> {
        let &(tsresol, offset, _) = self
            .ifaces
            .get(iface as usize)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("no interface {iface}")))?;
        self.write_epb_raw(iface, to_units(ts, tsresol, offset), data, wire_len)
    }

    /// Writes an Enhanced Packet Block with a raw timestamp and any interface id (even one
    /// never described, to test readers).
    pub fn write_epb_raw(&mut self, iface: u32, units: u64, data: &[u8], wire_len: u32) -> io::Result<()> {
        let caplen = captured_len(data)?;
        let be = self.big_endian;
        let mut body = std::mem::take(&mut self.scratch);
        body.clear();
        put32(&mut body, iface, be);
        put32(&mut body, (units >> 32) as u32, be);
        put32(&mut body, units as u32, be);
        put32(&mut body, caplen, be);
        put32(&mut body, wire_len, be);
        body.extend_from_slice(data);
        let r = self.write_block(block_type::ENHANCED_PACKET, &body);
        self.scratch = body;
        r
    }

    /// Writes a Simple Packet Block (no timestamp, interface 0).
    pub fn write_simple_packet(&mut self, data: &[u8], wire_len: u32) -> io::Result<()> {
        captured_len(data)?;
        let mut body = Vec::with_capacity(4 + data.len());
        put32(&mut body, wire_len, self.big_endian);
        body.extend_from_slice(data);
        self.write_block(block_type::SIMPLE_PACKET, &body)
    }

    /// Writes any block: `body` is everything between the length fields (padded to 4
    /// bytes here), in the section's byte order.
    pub fn write_block(&mut self, block_type: u32, body: &[u8]) -> io::Result<()> {
        let padded = (body.len() + 3) & !3;
        let total =
            u32::try_from(padded + 12).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "block too large"))?;
        let be = self.big_endian;
        let mut h = Vec::with_capacity(8);
        put32(&mut h, block_type, be);
        put32(&mut h, total, be);
        self.w.write_all(&h)?;
        self.w.write_all(body)?;
        self.w.write_all(&[0u8; 3][..padded - body.len()])?;
        let mut t = Vec::with_capacity(4);
        put32(&mut t, total, be);
        self.w.write_all(&t)
    }

    /// True when the current section is big-endian.
    pub fn big_endian(&self) -> bool {
        self.big_endian
    }

    pub fn get_ref(&self) -> &W {
        &self.w
    }

    pub fn get_mut(&mut self) -> &mut W {
        &mut self.w
    }

    /// The underlying writer (not flushed).
    pub fn into_inner(self) -> W {
        self.w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_round_trip_exact_values() {
        let ts = Timestamp::from_nanos(1_700_000_000_250_000_000);
        assert_eq!(to_units(ts, 6, 0), 1_700_000_000_250_000);
        assert_eq!(to_units(ts, 9, 0), 1_700_000_000_250_000_000);
        assert_eq!(to_units(ts, 0x80 | 10, 0), 1_700_000_000 * 1024 + 256);
        assert_eq!(to_units(ts, 3, 1_700_000_000), 250);
        assert_eq!(to_units(Timestamp::from_nanos(-5), 9, 0), 0);
    }
}
