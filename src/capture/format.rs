//! What a capture is: its container format and the compression around it, as sniffed from
//! the first bytes. Plain names, below everything that reads (the error, the byte source,
//! the reader).

use std::fmt;

crate::vocabulary! {
    /// How the input was compressed (detected from its first bytes).
    pub enum Compression {
        None = "none",
        Gzip = "gzip",
        Zstd = "zstd",
    }
}

crate::vocabulary! {
    /// The container format: the `format` of a capture in every output.
    pub enum Container {
        Pcap = "pcap",
        PcapNg = "pcapng",
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
    /// Which container it is (the `format` field of the outputs).
    pub fn container(&self) -> Container {
        match self {
            CaptureFormat::Pcap { .. } => Container::Pcap,
            CaptureFormat::PcapNg => Container::PcapNg,
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
