//! TCP header and options (RFC 9293 §3.1, RFC 7323, RFC 2018).
//!
//! Only the first TCP header of a packet is read; payloads that embed other packets
//! (OpenFlow packet-in, ICMP quoting, tunnels inside TCP) are never looked at.

use super::ip::TcpInIp;
use super::skip::{Layer, Skip};
use super::wire::{be16, be32};
use super::Segment;
use crate::seq::SeqNum;

/// The flag bits of a TCP header.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct TcpFlags(pub u8);

impl TcpFlags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    pub const URG: u8 = 0x20;
    pub const ECE: u8 = 0x40;
    pub const CWR: u8 = 0x80;

    #[inline]
    pub fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
    #[inline]
    pub fn syn(self) -> bool {
        self.has(Self::SYN)
    }
    #[inline]
    pub fn ack(self) -> bool {
        self.has(Self::ACK)
    }
    #[inline]
    pub fn fin(self) -> bool {
        self.has(Self::FIN)
    }
    #[inline]
    pub fn rst(self) -> bool {
        self.has(Self::RST)
    }
}

impl std::fmt::Debug for TcpFlags {
    /// tcpdump's letters: S F R P . (ACK) U E W.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const LETTERS: [(u8, char); 8] = [
            (TcpFlags::SYN, 'S'),
            (TcpFlags::FIN, 'F'),
            (TcpFlags::RST, 'R'),
            (TcpFlags::PSH, 'P'),
            (TcpFlags::ACK, '.'),
            (TcpFlags::URG, 'U'),
            (TcpFlags::ECE, 'E'),
            (TcpFlags::CWR, 'W'),
        ];
        for (bit, c) in LETTERS {
            if self.has(bit) {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

/// Up to four SACK blocks (RFC 2018 §3: at most 4 fit in 40 option bytes).
#[derive(Clone, Copy, PartialEq, Eq, Default, Debug)]
pub struct SackBlocks {
    pub len: u8,
    pub blocks: [(SeqNum, SeqNum); 4],
}

impl SackBlocks {
    pub fn iter(&self) -> impl Iterator<Item = (SeqNum, SeqNum)> + '_ {
        self.blocks[..self.len as usize].iter().copied()
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// TSval and TSecr of the timestamps option (RFC 7323 §3).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Timestamps {
    pub val: u32,
    pub ecr: u32,
}

/// The options of one segment. `Option::None` means "not present" only when
/// `complete` is true; when the snaplen cut the option area, what was not read is unknown.
#[derive(Clone, Copy, PartialEq, Eq, Default, Debug)]
pub struct TcpOptions {
    /// True when the whole option area (data offset) was captured and parsed.
    pub complete: bool,
    pub mss: Option<u16>,
    /// Window-scale shift, already clamped to 14 (RFC 7323 §2.3).
    pub wscale: Option<u8>,
    /// The shift as sent when it was above 14 (RFC 7323 §2.3 says use 14 and log it).
    pub wscale_raw_over_14: Option<u8>,
    pub sack_permitted: bool,
    pub sack: SackBlocks,
    pub timestamps: Option<Timestamps>,
    /// SYN segments only (0 on others): the longest run of NOPs in the option area as
    /// captured, where a middlebox that overwrote an option leaves it.
    pub nop_run: u8,
}

/// Tri-state view of one option for callers that must not confuse "absent" with "cut off".
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Seen<T> {
    Present(T),
    Absent,
    Unknown,
}

impl TcpOptions {
    fn seen<T>(&self, v: Option<T>) -> Seen<T> {
        match (v, self.complete) {
            (Some(x), _) => Seen::Present(x),
            (None, true) => Seen::Absent,
            (None, false) => Seen::Unknown,
        }
    }
    pub fn wscale_seen(&self) -> Seen<u8> {
        self.seen(self.wscale)
    }
    pub fn mss_seen(&self) -> Seen<u16> {
        self.seen(self.mss)
    }
    pub fn timestamps_seen(&self) -> Seen<Timestamps> {
        self.seen(self.timestamps)
    }
    pub fn sack_permitted_seen(&self) -> Seen<()> {
        self.seen(if self.sack_permitted { Some(()) } else { None })
    }
}

/// Option kinds (IANA "TCP Option Kind Numbers").
mod kind {
    /// End of option list (RFC 9293 §3.2).
    pub const EOL: u8 = 0;
    /// No-operation (RFC 9293 §3.2).
    pub const NOP: u8 = 1;
    /// Maximum segment size, length 4 (RFC 9293 §3.2).
    pub const MSS: u8 = 2;
    /// Window scale, length 3 (RFC 7323 §2.2).
    pub const WSCALE: u8 = 3;
    /// SACK permitted, length 2 (RFC 2018 §2).
    pub const SACK_PERMITTED: u8 = 4;
    /// SACK, length 2 + 8n (RFC 2018 §3).
    pub const SACK: u8 = 5;
    /// Timestamps, length 10 (RFC 7323 §3.2).
    pub const TIMESTAMPS: u8 = 8;
}

/// RFC 7323 §2.3: "If a Window Scale option is received with a shift.cnt value larger
/// than 14, the TCP SHOULD log the error but MUST use 14 instead of the specified value."
const MAX_WSCALE: u8 = 14;

/// Decodes the TCP header of a segment found by [`super::ip::tcp_in_ip`].
///
/// RFC 9293 §3.1 offsets: 0 source port, 2 destination port, 4 sequence number,
/// 8 acknowledgment number, 12 data offset (high nibble) and AE (its low bit, RFC 9768
/// §3.1), 13 flags, 14 window; options from 20 up to data offset * 4.
#[inline]
pub(crate) fn segment(ip: TcpInIp<'_>) -> Result<Segment, Skip> {
    let Some(h) = ip.tcp.first_chunk::<20>() else {
        return Err(Skip::Truncated(Layer::Tcp));
    };
    let header_len = (h[12] >> 4) as usize * 4;
    if header_len < 20 {
        return Err(Skip::Malformed(Layer::Tcp, "data offset below 5"));
    }
    // The option area as far as it was captured; `complete` when the snaplen kept all of it.
    let captured_header = ip.tcp.get(..header_len).unwrap_or(ip.tcp);
    let area = captured_header.get(20..).unwrap_or_default();
    let mut options = options(area, captured_header.len() == header_len);
    if h[13] & TcpFlags::SYN != 0 {
        options.nop_run = super::longest_nop_run(area).min(u8::MAX as usize) as u8;
    }
    Ok(Segment {
        src: ip.src,
        dst: ip.dst,
        ecn: ip.ecn,
        src_port: be16(h[0], h[1]),
        dst_port: be16(h[2], h[3]),
        seq: SeqNum(be32(h[4], h[5], h[6], h[7])),
        ack: SeqNum(be32(h[8], h[9], h[10], h[11])),
        flags: TcpFlags(h[13]),
        ae: h[12] & 0x01 != 0,
        window: be16(h[14], h[15]),
        payload_len: ip.len.saturating_sub(header_len as u32),
        options,
        // IPv4 bytes 4-5, in the first fixed word (little-endian: bits 32-47, byte-swapped).
        ip_id: ip.id_names.then(|| ((ip.fixed[0] >> 32) as u16).swap_bytes()),
    })
}

/// Parses an option area. A malformed length (0, 1, or past the end of the area) stops
/// parsing and keeps what was read; whether the area was complete is the caller's to say.
#[inline]
fn options(area: &[u8], complete: bool) -> TcpOptions {
    let mut o = TcpOptions {
        complete,
        ..TcpOptions::default()
    };
    let mut rest = area;
    // The layout of nearly every data segment of a timestamps connection (Linux, BSDs,
    // macOS, Windows): NOP, NOP, timestamps — and, in loss recovery, NOP, NOP, SACK after.
    if let Some((&[kind::NOP, kind::NOP, kind::TIMESTAMPS, 10, v0, v1, v2, v3, e0, e1, e2, e3], after)) =
        area.split_first_chunk::<12>()
    {
        o.timestamps = Some(Timestamps {
            val: be32(v0, v1, v2, v3),
            ecr: be32(e0, e1, e2, e3),
        });
        if after.is_empty() {
            return o;
        }
        rest = after;
    }
    while let Some((&k, after_kind)) = rest.split_first() {
        match k {
            kind::EOL => break,
            kind::NOP => {
                rest = after_kind;
                continue;
            }
            _ => {}
        }
        let Some(&len) = after_kind.first() else {
            break;
        };
        let len = len as usize;
        if len < 2 || len > rest.len() {
            break;
        }
        let (opt, after) = rest.split_at(len);
        match (k, opt) {
            (kind::MSS, &[_, _, a, b]) => o.mss = Some(be16(a, b)),
            (kind::WSCALE, &[_, _, shift]) => {
                if shift > MAX_WSCALE {
                    o.wscale = Some(MAX_WSCALE);
                    o.wscale_raw_over_14 = Some(shift);
                } else {
                    o.wscale = Some(shift);
                    o.wscale_raw_over_14 = None;
                }
            }
            (kind::SACK_PERMITTED, &[_, _]) => o.sack_permitted = true,
            // An empty SACK option (length 2) is accepted as zero blocks.
            (kind::SACK, [_, _, blocks @ ..]) if blocks.len().is_multiple_of(8) => {
                let mut sack = SackBlocks::default();
                for (slot, b) in sack.blocks.iter_mut().zip(blocks.chunks_exact(8)) {
                    *slot = (
                        SeqNum(be32(b[0], b[1], b[2], b[3])),
                        SeqNum(be32(b[4], b[5], b[6], b[7])),
                    );
                    sack.len += 1;
                }
                o.sack = sack;
            }
            (kind::TIMESTAMPS, &[_, _, v0, v1, v2, v3, e0, e1, e2, e3]) => {
                o.timestamps = Some(Timestamps {
                    val: be32(v0, v1, v2, v3),
                    ecr: be32(e0, e1, e2, e3),
                });
            }
            // Unknown kinds (MD5 19, MPTCP 30, TFO 34, experiments 253/254, ...) and known
            // kinds with an unexpected length are skipped by their length.
            _ => {}
        }
        rest = after;
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    const A: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
    const B: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));

    /// A TCP header with these options (padded to 4 with EOL) and the data offset they
    /// need, flags and window set; `len` is the IP-declared segment length.
    fn header(options: &[u8]) -> Vec<u8> {
        let mut opts = options.to_vec();
        while !opts.len().is_multiple_of(4) {
            opts.push(0);
        }
        let mut h = vec![0x9c, 0x40, 0x13, 0x89, 0, 0, 0x03, 0xe8, 0, 0, 0x07, 0xd0];
        h.push((((20 + opts.len()) / 4) as u8) << 4);
        h.extend_from_slice(&[0x12, 0xff, 0xff, 0, 0, 0, 0]);
        h.extend_from_slice(&opts);
        h
    }

    fn parse(tcp: &[u8], len: u32) -> Result<Segment, Skip> {
        segment(TcpInIp {
            src: A,
            dst: B,
            ecn: crate::decode::Ecn::NotEct,
            tcp,
            len,
            fixed: [0; 2],
            extra: &[],
            id_names: false,
        })
    }

    #[test]
    fn fixed_header_fields() {
        let s = parse(&header(&[]), 20 + 100).unwrap();
        assert_eq!((s.src, s.dst, s.src_port, s.dst_port), (A, B, 40000, 5001));
        assert_eq!((s.seq, s.ack), (SeqNum(1000), SeqNum(2000)));
        assert_eq!(s.flags, TcpFlags(TcpFlags::SYN | TcpFlags::ACK));
        assert_eq!(s.window, 65535);
        assert_eq!(s.payload_len, 100);
        assert_eq!(
            s.options,
            TcpOptions {
                complete: true,
                ..TcpOptions::default()
            }
        );
    }

    #[test]
    fn fewer_than_20_bytes_is_truncated() {
        assert_eq!(parse(&header(&[])[..19], 40), Err(Skip::Truncated(Layer::Tcp)));
        assert_eq!(parse(&[], 40), Err(Skip::Truncated(Layer::Tcp)));
    }

    #[test]
    fn data_offset_below_5_is_malformed() {
        for words in 0..5u8 {
            let mut h = header(&[]);
            h[12] = words << 4;
            assert_eq!(parse(&h, 40), Err(Skip::Malformed(Layer::Tcp, "data offset below 5")));
        }
    }

    #[test]
    fn syn_options_linux_layout() {
        // MSS 1460, SACK-permitted, TS, NOP, WS 7
        let h = header(&[2, 4, 5, 180, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7]);
        let o = parse(&h, h.len() as u32).unwrap().options;
        assert!(o.complete);
        assert_eq!(o.mss, Some(1460));
        assert!(o.sack_permitted);
        assert_eq!(o.timestamps, Some(Timestamps { val: 1, ecr: 0 }));
        assert_eq!(o.wscale, Some(7));
        assert_eq!(o.wscale_raw_over_14, None);
    }

    #[test]
    fn wscale_above_14_is_clamped_and_the_raw_value_kept() {
        for raw in [15u8, 255] {
            let o = parse(&header(&[3, 3, raw]), 24).unwrap().options;
            assert_eq!((o.wscale, o.wscale_raw_over_14), (Some(14), Some(raw)));
        }
        let o = parse(&header(&[3, 3, 14]), 24).unwrap().options;
        assert_eq!((o.wscale, o.wscale_raw_over_14), (Some(14), None));
    }

    #[test]
    fn sack_blocks_up_to_four_and_the_empty_sack_option() {
        let mut opts = vec![5, 34];
        for i in 1..=4u32 {
            opts.extend_from_slice(&(i * 100).to_be_bytes());
            opts.extend_from_slice(&(i * 100 + 50).to_be_bytes());
        }
        let o = parse(&header(&opts), 60).unwrap().options;
        assert_eq!(o.sack.len, 4);
        assert_eq!(o.sack.iter().nth(3), Some((SeqNum(400), SeqNum(450))));
        // RFC 2018 has no zero-block SACK, but stacks send one (suricata tcp-empty-sack)
        let o = parse(&header(&[1, 1, 5, 2]), 24).unwrap().options;
        assert!(o.complete);
        assert!(o.sack.is_empty());
        // a length that is not 2 + 8n is skipped by its length, later options still read
        let o = parse(&header(&[5, 5, 0, 0, 0, 2, 4, 5, 180]), 32).unwrap().options;
        assert!(o.sack.is_empty());
        assert_eq!(o.mss, Some(1460));
    }

    #[test]
    fn timestamps_fast_path_and_general_path_agree() {
        let ts = [1, 1, 8, 10, 0, 0, 1, 0, 0, 0, 2, 0];
        let fast = parse(&header(&ts), 32).unwrap().options;
        assert_eq!(fast.timestamps, Some(Timestamps { val: 256, ecr: 512 }));
        // same option followed by a SACK: general loop
        let mut both = ts.to_vec();
        both.extend_from_slice(&[1, 1, 5, 10, 0, 0, 0, 1, 0, 0, 0, 2]);
        let o = parse(&header(&both), 44).unwrap().options;
        assert_eq!(o.timestamps, fast.timestamps);
        assert_eq!(o.sack.iter().collect::<Vec<_>>(), vec![(SeqNum(1), SeqNum(2))]);
    }

    #[test]
    fn unknown_options_are_skipped_by_length() {
        // MPTCP (30) MP_CAPABLE with 12 bytes, TFO cookie (34) with 10, then MSS
        let mut opts = vec![30, 12, 0, 0x81, 1, 2, 3, 4, 5, 6, 7, 8];
        opts.extend_from_slice(&[34, 10, 1, 2, 3, 4, 5, 6, 7, 8]);
        opts.extend_from_slice(&[2, 4, 0x05, 0x78]);
        let o = parse(&header(&opts), 60).unwrap().options;
        assert_eq!(o.mss, Some(1400));
        assert!(o.complete);
    }

    #[test]
    fn malformed_option_lengths_stop_parsing_but_keep_what_was_read() {
        for bad in [0u8, 1, 200] {
            let o = parse(&header(&[2, 4, 5, 180, 3, bad, 7]), 28).unwrap().options;
            assert_eq!(o.mss, Some(1460));
            assert_eq!(o.wscale, None);
            assert!(o.complete, "the area was fully captured, just malformed");
        }
        // kind byte as the last byte of the area, its length missing
        let o = parse(&header(&[1, 1, 1, 2]), 24).unwrap().options;
        assert_eq!(o.mss, None);
        assert!(o.complete);
    }

    #[test]
    fn eol_ends_the_option_list() {
        let o = parse(&header(&[0, 0, 0, 0, 2, 4, 5, 180]), 28).unwrap().options;
        assert_eq!(o.mss, None);
        assert!(o.complete);
    }

    #[test]
    fn option_area_cut_by_the_snaplen_is_incomplete() {
        let h = header(&[2, 4, 5, 180, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7]);
        for cut in 20..h.len() {
            let o = parse(&h[..cut], 40).unwrap().options;
            assert!(!o.complete, "cut at {cut}");
            assert_eq!(o.wscale_seen(), Seen::Unknown, "cut at {cut}");
            if cut >= 24 {
                assert_eq!(o.mss_seen(), Seen::Present(1460));
            }
        }
        let o = parse(&h, 40).unwrap().options;
        assert_eq!(o.wscale_seen(), Seen::Present(7));
        let o = parse(&header(&[2, 4, 5, 180]), 40).unwrap().options;
        assert_eq!(o.wscale_seen(), Seen::Absent);
    }

    #[test]
    fn payload_length_comes_from_the_ip_length_not_the_captured_bytes() {
        let h = header(&[1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2]);
        // 1448 payload bytes declared, none captured
        assert_eq!(parse(&h, 32 + 1448).unwrap().payload_len, 1448);
        // trailing link padding captured, none declared
        let mut padded = h.clone();
        padded.extend_from_slice(&[0; 6]);
        assert_eq!(parse(&padded, 32).unwrap().payload_len, 0);
        // IP length shorter than the TCP header: clamp at 0
        assert_eq!(parse(&h, 20).unwrap().payload_len, 0);
    }

    #[test]
    fn flags_debug_uses_tcpdump_letters() {
        assert_eq!(format!("{:?}", TcpFlags(TcpFlags::SYN | TcpFlags::ACK)), "S.");
        assert_eq!(format!("{:?}", TcpFlags(0xff)), "SFRP.UEW");
    }
}
