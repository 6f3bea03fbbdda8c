//! Why a capture could not be read (or could be read only up to some point).
//!
//! Offsets are byte offsets into the capture data the parser saw: the file itself for an
//! uncompressed capture, the decompressed stream for a gzip or zstd one.

use super::format::Compression;

/// A capture that cannot be read, or that stops early.
///
/// [`CaptureReader::next_frame`](super::CaptureReader::next_frame) returns one of these at
/// most once; every packet before the problem has been returned already. Cut-short inputs
/// ([`CaptureError::is_cut_short`]) are normal for captures copied while tcpdump was still
/// writing them: the packets before the cut are worth analysing.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The operating system failed to read the input.
    #[error("reading the input failed: {0}")]
    Io(std::io::Error),

    /// The input is not a pcap or pcapng capture (optionally gzip- or zstd-compressed).
    /// The string says why, e.g. "it starts with bytes 3c 21 44 4f, which is not pcap,
    /// pcapng, gzip or zstd".
    #[error("this is not a pcap or pcapng capture: {0}")]
    NotACapture(String),

    /// The capture ends in the middle of a record (or of the file header).
    #[error("{}", truncated(*offset, *frames))]
    Truncated {
        /// Where the incomplete record starts.
        offset: u64,
        /// Packet records read before it.
        frames: u64,
    },

    /// It starts with a capture's magic number (pcap, pcapng), but its file header is
    /// one this reader cannot take: another version, reserved bits set, a byte-order
    /// magic that is neither. Unlike [`CaptureError::NotACapture`] the file is meant as a
    /// capture, so a folder's walk counts it as failed, not as a file to leave out.
    #[error("its file header cannot be read: {0}")]
    BadHeader(String),

    /// Not one packet could be read: the capture is damaged (or its compressed stream,
    /// or the device) before its first packet record was complete. There is nothing
    /// "before the damage" to analyse, so this is an input that cannot be read, returned
    /// when the capture is opened. (A capture merely cut short there is not this: it is a
    /// capture still being written, read as far as it goes.)
    #[error("no packet could be read: {0}")]
    NoPacket(Box<CaptureError>),

    /// The capture is damaged: a record or block that cannot be valid.
    #[error("the capture is damaged at byte {offset}: {reason}")]
    Corrupt {
        /// Where the bad record or block starts.
        offset: u64,
        reason: String,
    },

    /// The compressed stream is damaged (bad checksum, invalid data, garbage after it).
    #[error("decompression failed: {0}")]
    Decompress(String),

    /// The record filter could not decide about a record (e.g. the capture filter has no
    /// meaning for its link type); the records before it were returned.
    #[error("the capture filter stopped at record {number}: {reason}")]
    Filter { number: u64, reason: String },

    /// The compressed stream ends before its end marker: the file was cut short.
    #[error(
        "the {compression} stream is cut short after {offset} bytes of capture data \
         ({frames} complete packets before the cut were read)"
    )]
    CompressedTruncated {
        compression: Compression,
        /// Decompressed bytes that were available before the cut.
        offset: u64,
        /// Packet records read before it.
        frames: u64,
    },
}

/// The reason is written once: the message carries it, so it is not also the error's
/// source (anyhow's `{:#}` would print it twice: "Is a directory: Is a directory").
impl From<std::io::Error> for CaptureError {
    fn from(e: std::io::Error) -> Self {
        CaptureError::Io(e)
    }
}

/// A cut at byte 0 is inside the file header (pcap's 24 bytes, pcapng's section header):
/// no record was there to be incomplete.
fn truncated(offset: u64, frames: u64) -> String {
    if offset == 0 && frames == 0 {
        "the capture is cut short: its file header is incomplete".to_string()
    } else {
        format!(
            "the capture is cut short: the record at byte {offset} is incomplete \
             ({frames} complete packets before it were read)"
        )
    }
}

impl CaptureError {
    /// True when the input is a capture that simply stops early (cut short mid-record, or a
    /// compressed stream without its end). Such a run still counts as a success: the
    /// packets before the cut are analysed and the error becomes a warning.
    pub fn is_cut_short(&self) -> bool {
        matches!(
            self,
            CaptureError::Truncated { .. } | CaptureError::CompressedTruncated { .. }
        )
    }

    /// Packets read before a cut, for cut-short errors.
    pub fn frames_before_cut(&self) -> Option<u64> {
        match self {
            CaptureError::Truncated { frames, .. } | CaptureError::CompressedTruncated { frames, .. } => Some(*frames),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_sentences() {
        let e = CaptureError::Truncated {
            offset: 1234,
            frames: 7,
        };
        assert!(e.is_cut_short());
        assert_eq!(
            e.to_string(),
            "the capture is cut short: the record at byte 1234 is incomplete \
             (7 complete packets before it were read)"
        );
        let e = CaptureError::NotACapture("it is empty".into());
        assert!(!e.is_cut_short());
        assert_eq!(e.to_string(), "this is not a pcap or pcapng capture: it is empty");
        let e = CaptureError::CompressedTruncated {
            compression: Compression::Gzip,
            offset: 99,
            frames: 3,
        };
        assert!(e.is_cut_short());
        assert_eq!(e.frames_before_cut(), Some(3));
        assert!(e.to_string().starts_with("the gzip stream is cut short after 99 bytes"));
        let e = CaptureError::Corrupt {
            offset: 24,
            reason: "bad".into(),
        };
        assert!(!e.is_cut_short());
        assert_eq!(e.frames_before_cut(), None);
        let e = CaptureError::NoPacket(Box::new(e));
        assert!(!e.is_cut_short());
        assert_eq!(
            e.to_string(),
            "no packet could be read: the capture is damaged at byte 24: bad"
        );
        let e = CaptureError::BadHeader("it is pcap version 1.4".into());
        assert_eq!(e.to_string(), "its file header cannot be read: it is pcap version 1.4");
    }
}
