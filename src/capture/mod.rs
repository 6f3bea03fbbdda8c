//! Reading capture files: format detection by content, decompression, and a streaming
//! iterator over packet records with constant memory.
//!
//! The reader never sees the file system: the caller hands it any `Read` (a file, stdin,
//! a decompressor), so the analysis can be tested from byte slices.
//!
//! Layout, lowest first (each file imports only those before it): `format` (what a capture
//! is: container and compression), `linktype`, `error`, `source` (the caller's reader,
//! counted, plus gzip/zstd), `buffer` (the refillable window), `record` (what a record
//! parser hands back), `pcap` and `pcapng` (record parsing), `select` (the records a caller
//! asks for: filters, time windows), `reader` (sniffing and the public [`CaptureReader`]);
//! `writer` (fixture writers; test support, only with the `testkit` feature); `rotation`
//! (which files are one capture rotated: names only, apart from the rest) and `naming`
//! (whether a name is a capture's, for a file that cannot be read; after `rotation`).

mod buffer;
mod error;
mod format;
mod linktype;
mod naming;
mod pcap;
mod pcapng;
mod reader;
mod record;
mod rotation;
mod select;
mod source;
#[cfg(any(test, feature = "testkit"))]
mod writer;

#[cfg(test)]
mod tests;

pub use error::CaptureError;
pub use format::{CaptureFormat, Compression, Container};
pub use linktype::LinkType;
pub use naming::has_capture_name;
pub use reader::{CaptureReader, Step};
pub use rotation::rotation_key;
pub use select::{Chain, Decision, RecordFilter};
#[cfg(any(test, feature = "testkit"))]
pub use writer::{block_type, PcapNgWriter, PcapWriter};

use crate::time::Timestamp;

/// One packet record of a capture, borrowed from the reader's buffer until the next call.
#[derive(Clone, Copy, Debug)]
pub struct Frame<'a> {
    /// 1-based index of the packet record in the capture (tshark's `frame.number`).
    pub number: u64,
    /// Capture timestamp, normalised to nanoseconds since the epoch.
    pub ts: Timestamp,
    /// Link type of the interface the record was captured on.
    pub link: LinkType,
    /// Length of the packet on the wire (may exceed `data.len()` when the snaplen cut it).
    pub wire_len: u32,
    /// Captured bytes.
    pub data: &'a [u8],
    /// pcapng interface index (0 for pcap).
    pub interface: u32,
}
