//! TCP header and options (RFC 9293 §3.1, RFC 7323, RFC 2018).
//!
//! TYPES ARE FIXED (the tracker depends on them); the parser below is to be written.

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
