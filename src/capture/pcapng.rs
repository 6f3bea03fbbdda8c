//! pcapng: a sequence of blocks (type, total length, body, total length again), grouped in
//! sections that each start with a Section Header Block giving the byte order.
//! <https://www.ietf.org/archive/id/draft-ietf-opsawg-pcapng-03.html>
//!
//! Interface Description Blocks give each interface of a section its link type, snaplen
//! and timestamp resolution/offset; packet blocks (Enhanced, Simple, obsolete Packet)
//! refer to them. Every other block is skipped. Interface ids are per section.

use super::buffer::{Input, MAX_RECORD};
use super::linktype::LinkType;
use super::pcap::{rd16, rd32};
use super::record::{Fault, Rec};

pub(crate) const SHB_TYPE: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];
const IDB: u32 = 1;
const PB: u32 = 2;
const SPB: u32 = 3;
const EPB: u32 = 6;
const SJE: u32 = 9;

const OPT_ENDOFOPT: u16 = 0;
const IF_TSRESOL: u16 = 9;
const IF_TSOFFSET: u16 = 14;

/// The link type reported for packets whose interface was never described.
pub(crate) const NO_INTERFACE: LinkType = LinkType::NO_INTERFACE;

/// How raw timestamp units become nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TsScale {
    /// Resolution 10^-n with n <= 9: multiply by 10^(9-n).
    Mul(u64),
    /// Resolution 10^-n with n > 9: divide by 10^(n-9) (None: the divisor overflows, so
    /// every 64-bit count is below one nanosecond).
    Div(Option<u128>),
    /// Resolution 2^-n: multiply by 10^9, shift right by n.
    Pow2(u32),
}

impl TsScale {
    /// From the `if_tsresol` option byte: the high bit chooses base 2, the rest is the
    /// negative exponent.
    pub(crate) fn from_tsresol(b: u8) -> TsScale {
        let n = u32::from(b & 0x7f);
        if b & 0x80 != 0 {
            TsScale::Pow2(n)
        } else if n <= 9 {
            TsScale::Mul(10u64.pow(9 - n))
        } else {
            TsScale::Div(10u128.checked_pow(n - 9))
        }
    }

    #[inline]
    pub(crate) fn to_nanos(self, units: u64) -> i128 {
        match self {
            TsScale::Mul(m) => units as i128 * m as i128,
            TsScale::Div(Some(d)) => (units as u128 / d) as i128,
            TsScale::Div(None) => 0,
            // units * 10^9 < 2^94 and n < 128: neither overflows.
            TsScale::Pow2(n) => ((units as u128 * 1_000_000_000) >> n) as i128,
        }
    }
}

/// One interface of the current section.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Interface {
    pub(crate) link: LinkType,
    pub(crate) snaplen: u32,
    scale: TsScale,
    /// `if_tsoffset` in nanoseconds.
    offset_ns: i128,
}

const DEFAULT_IFACE: Interface = Interface {
    link: NO_INTERFACE,
    snaplen: 0,
    scale: TsScale::Mul(1_000),
    offset_ns: 0,
};

/// Reading state of a pcapng stream.
pub(crate) struct PcapNg {
    big_endian: bool,
    ifaces: Vec<Interface>,
    /// Timestamp of the previous packet (Simple Packet Blocks have none of their own).
    last_ts: i64,
    /// Sections seen so far.
    pub(crate) sections: u32,
    /// Blocks that Wireshark numbers as frames but that carry no packet (systemd journal
    /// entries), so that frame numbers stay equal to tshark's.
    pub(crate) numbered_non_packets: u64,
    /// Packets referring to an interface that the section never described.
    pub(crate) unknown_interface_packets: u64,
}

fn corrupt(offset: u64, reason: impl Into<String>) -> Fault {
    Fault::Corrupt {
        offset,
        reason: reason.into(),
    }
}

impl PcapNg {
    pub(crate) fn new() -> PcapNg {
        PcapNg {
            big_endian: false,
            ifaces: Vec::new(),
            last_ts: 0,
            sections: 0,
            numbered_non_packets: 0,
            unknown_interface_packets: 0,
        }
    }

    /// Reads blocks up to the next packet; interface descriptions seen on the way are
    /// passed to `on_interface`. `Ok(None)` at a clean end of the stream.
    pub(crate) fn next(
        &mut self,
        input: &mut Input,
        on_interface: &mut dyn FnMut(LinkType),
    ) -> Result<Option<Rec>, Fault> {
        loop {
            if !input.fill(12) {
                return if input.avail() == 0 {
                    Ok(None)
                } else {
                    Err(Fault::Truncated { offset: input.offset() })
                };
            }
            let offset = input.offset();
            let h = input.data();
            let is_shb = h[..4] == SHB_TYPE;
            if is_shb {
                // The byte-order magic follows the length and says how to read it.
                self.big_endian = match h[8..12] {
                    [0x1a, 0x2b, 0x3c, 0x4d] => true,
                    [0x4d, 0x3c, 0x2b, 0x1a] => false,
                    _ => {
                        return Err(corrupt(
                            offset,
                            format!(
                                "a section header has an unknown byte-order magic {:02x} {:02x} \
                                 {:02x} {:02x}",
                                h[8], h[9], h[10], h[11]
                            ),
                        ))
                    }
                };
            }
            let be = self.big_endian;
            let btype = rd32(h, 0, be);
            let blen = rd32(h, 4, be) as usize;
            if blen < 12 || !blen.is_multiple_of(4) || blen > MAX_RECORD {
                return Err(corrupt(
                    offset,
                    format!(
                        "a block of type 0x{btype:08x} has an impossible length {blen} (a block \
                         is a multiple of 4 bytes, at least 12)"
                    ),
                ));
            }
            if !input.fill(blen) {
                return Err(Fault::Truncated { offset });
            }
            let pos = input.pos();
            let b = &input.data()[..blen];
            if rd32(b, blen - 4, be) as usize != blen {
                return Err(corrupt(
                    offset,
                    format!(
                        "a block of type 0x{btype:08x} has different lengths at its start ({blen}) \
                         and end ({})",
                        rd32(b, blen - 4, be)
                    ),
                ));
            }
            match btype {
                EPB | PB => {
                    if blen < 32 {
                        return Err(corrupt(offset, "a packet block is shorter than 32 bytes"));
                    }
                    let iface = if btype == EPB {
                        rd32(b, 8, be)
                    } else {
                        u32::from(rd16(b, 8, be))
                    };
                    let units = (u64::from(rd32(b, 12, be)) << 32) | u64::from(rd32(b, 16, be));
                    let caplen = rd32(b, 20, be) as usize;
                    let wire_len = rd32(b, 24, be);
                    if caplen > blen - 32 {
                        return Err(corrupt(
                            offset,
                            format!(
                                "a packet block claims {caplen} captured bytes but has room for {}",
                                blen - 32
                            ),
                        ));
                    }
                    let info = self.interface(iface);
                    let ts = clamp_i64(info.scale.to_nanos(units) + info.offset_ns);
                    self.last_ts = ts;
                    input.consume(blen);
                    return Ok(Some(Rec {
                        ts,
                        link: info.link,
                        wire_len,
                        interface: iface,
                        start: pos + 28,
                        len: caplen,
                    }));
                }
                SPB => {
                    if blen < 16 {
                        return Err(corrupt(offset, "a simple packet block is shorter than 16 bytes"));
                    }
                    let wire_len = rd32(b, 8, be);
                    let info = self.interface(0);
                    let mut caplen = (wire_len as usize).min(blen - 16);
                    if info.snaplen != 0 {
                        caplen = caplen.min(info.snaplen as usize);
                    }
                    input.consume(blen);
                    return Ok(Some(Rec {
                        ts: self.last_ts,
                        link: info.link,
                        wire_len,
                        interface: 0,
                        start: pos + 12,
                        len: caplen,
                    }));
                }
                IDB => {
                    let iface = parse_idb(b, be).map_err(|r| corrupt(offset, r))?;
                    on_interface(iface.link);
                    self.ifaces.push(iface);
                }
                SJE => self.numbered_non_packets += 1,
                _ if is_shb => {
                    check_shb(b, be).map_err(|r| corrupt(offset, r))?;
                    self.ifaces.clear();
                    self.sections += 1;
                }
                _ => {}
            }
            input.consume(blen);
        }
    }

    #[inline]
    fn interface(&mut self, id: u32) -> Interface {
        match self.ifaces.get(id as usize) {
            Some(i) => *i,
            None => {
                self.unknown_interface_packets += 1;
                DEFAULT_IFACE
            }
        }
    }
}

fn clamp_i64(v: i128) -> i64 {
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// Checks a complete Section Header Block (byte order already known). Errors are reasons.
pub(crate) fn check_shb(b: &[u8], be: bool) -> Result<(), String> {
    if b.len() < 28 {
        return Err(format!(
            "the section header block is {} bytes long, less than 28",
            b.len()
        ));
    }
    let major = rd16(b, 12, be);
    let minor = rd16(b, 14, be);
    if major != 1 {
        return Err(format!(
            "it is pcapng version {major}.{minor}, and only version 1 is supported"
        ));
    }
    walk_options(&b[24..b.len() - 4], be, |_, _| {}).map_err(|r| format!("in the section header block, {r}"))
}

fn parse_idb(b: &[u8], be: bool) -> Result<Interface, String> {
    if b.len() < 20 {
        return Err(format!(
            "an interface description block is {} bytes long, less than 20",
            b.len()
        ));
    }
    let mut iface = Interface {
        link: LinkType(u32::from(rd16(b, 8, be))),
        snaplen: rd32(b, 12, be),
        scale: TsScale::Mul(1_000),
        offset_ns: 0,
    };
    walk_options(&b[16..b.len() - 4], be, |code, value| match code {
        IF_TSRESOL if !value.is_empty() => iface.scale = TsScale::from_tsresol(value[0]),
        IF_TSOFFSET if value.len() == 8 => {
            let a: [u8; 8] = [
                value[0], value[1], value[2], value[3], value[4], value[5], value[6], value[7],
            ];
            let secs = if be {
                i64::from_be_bytes(a)
            } else {
                i64::from_le_bytes(a)
            };
            iface.offset_ns = secs as i128 * 1_000_000_000;
        }
        _ => {}
    })
    .map_err(|r| format!("in an interface description block, {r}"))?;
    Ok(iface)
}

/// Calls `f(code, value)` for each option until opt_endofopt or the end of the area.
fn walk_options(mut area: &[u8], be: bool, mut f: impl FnMut(u16, &[u8])) -> Result<(), String> {
    while area.len() >= 4 {
        let code = rd16(area, 0, be);
        let len = usize::from(rd16(area, 2, be));
        if code == OPT_ENDOFOPT {
            return Ok(());
        }
        let padded = (len + 3) & !3;
        if 4 + padded > area.len() {
            return Err(format!(
                "option {code} claims {len} bytes but only {} remain in the block",
                area.len() - 4
            ));
        }
        f(code, &area[4..4 + len]);
        area = &area[4 + padded..];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsresol_scales() {
        assert_eq!(TsScale::from_tsresol(6).to_nanos(1_500_000), 1_500_000_000);
        assert_eq!(TsScale::from_tsresol(9).to_nanos(7), 7);
        assert_eq!(TsScale::from_tsresol(0).to_nanos(3), 3_000_000_000);
        assert_eq!(TsScale::from_tsresol(12).to_nanos(1_234_567), 1_234);
        assert_eq!(TsScale::from_tsresol(0x7f).to_nanos(u64::MAX), 0);
        // 2^-10 s units: 1024 units are one second, one unit 976562.5 ns (floored).
        assert_eq!(TsScale::from_tsresol(0x80 | 10).to_nanos(1024), 1_000_000_000);
        assert_eq!(TsScale::from_tsresol(0x80 | 10).to_nanos(1), 976_562);
        assert_eq!(TsScale::from_tsresol(0x80).to_nanos(2), 2_000_000_000);
        assert_eq!(TsScale::from_tsresol(0xff).to_nanos(u64::MAX), 0);
        assert_eq!(
            TsScale::from_tsresol(0x80 | 30).to_nanos(u64::MAX),
            ((u64::MAX as u128 * 1_000_000_000) >> 30) as i128
        );
    }

    #[test]
    fn options_overrunning_the_block_are_reported() {
        let mut area = vec![9, 0, 1, 0, 6, 0, 0, 0];
        assert!(walk_options(&area, false, |_, _| {}).is_ok());
        area.extend_from_slice(&[14, 0, 8, 0, 1, 2, 3]);
        assert!(walk_options(&area, false, |_, _| {}).is_err());
        // Trailing bytes after opt_endofopt are ignored.
        let area = [0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff];
        assert!(walk_options(&area, false, |_, _| panic!("no option")).is_ok());
    }
}
