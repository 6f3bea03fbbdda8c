//! What a record parser (pcap, pcapng) hands the reader: a record located in the window,
//! or why it stopped. Internal to `capture`.

use super::linktype::LinkType;

/// A packet record located in the input window (internal; becomes a [`Frame`](super::Frame)).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rec {
    pub(crate) ts: i64,
    pub(crate) link: LinkType,
    pub(crate) wire_len: u32,
    pub(crate) interface: u32,
    /// Window index of the captured bytes.
    pub(crate) start: usize,
    pub(crate) len: usize,
}

/// Why a parser stopped (internal; the reader adds the frame count and read errors).
#[derive(Debug)]
pub(crate) enum Fault {
    Truncated { offset: u64 },
    Corrupt { offset: u64, reason: String },
}
