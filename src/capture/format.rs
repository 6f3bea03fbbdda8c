//! What a capture is: its container format and the compression around it, as sniffed from
//! the first bytes. Plain names, below everything that reads (the error, the byte source,
//! the reader).

use std::fmt;

/// How the input was compressed (detected from its first bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    /// "none", "gzip" or "zstd".
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
        }
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The capture format inside any compression.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CaptureFormat {
    /// Legacy pcap; `nanosecond` for the a1b23c4d magic, `big_endian` for files written
    /// on big-endian hosts.
    Pcap { nanosecond: bool, big_endian: bool },
    /// pcapng (its sections may differ in byte order).
    PcapNg,
}

impl CaptureFormat {
    /// "pcap" or "pcapng" (the `format` field of the JSON output).
    pub fn name(&self) -> &'static str {
        match self {
            CaptureFormat::Pcap { .. } => "pcap",
            CaptureFormat::PcapNg => "pcapng",
        }
    }
}

impl fmt::Display for CaptureFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CaptureFormat::Pcap { nanosecond, big_endian } => write!(
                f,
                "pcap ({}, {})",
                if *nanosecond { "nanosecond" } else { "microsecond" },
                if *big_endian { "big-endian" } else { "little-endian" }
            ),
            CaptureFormat::PcapNg => f.write_str("pcapng"),
        }
    }
}
