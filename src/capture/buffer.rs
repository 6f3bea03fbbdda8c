//! A refillable window over the capture stream: constant memory, one copy per byte.
//!
//! The parsers look at `data()` and `consume` whole records. When a record is not
//! complete in the window, `fill(n)` moves the unread tail to the front and reads until
//! `n` bytes are available (growing the window for records bigger than it, up to
//! [`MAX_RECORD`]). A read error ends the stream like an end of file and is kept for the
//! reader to report once the records before it have been returned.

use super::source::Source;
use std::io::{self, Read};

/// Starting window size.
pub(crate) const INITIAL_BUF: usize = 1 << 20;
/// No single record or block may be larger than this (the window never grows past it).
pub(crate) const MAX_RECORD: usize = 256 << 20;

pub(crate) struct Input {
    data: Vec<u8>,
    /// Start of the unread bytes.
    pos: usize,
    /// End of the valid bytes.
    end: usize,
    /// Stream offset of `data[0]`.
    base: u64,
    /// The source returned 0 or an error; no more reads.
    eof: bool,
    read_error: Option<io::Error>,
    pub(crate) src: Source,
}

impl Input {
    pub(crate) fn new(src: Source, capacity: usize) -> Input {
        Input {
            data: vec![0; capacity.max(1)],
            pos: 0,
            end: 0,
            base: 0,
            eof: false,
            read_error: None,
            src,
        }
    }

    /// The unread bytes in the window.
    #[inline]
    pub(crate) fn data(&self) -> &[u8] {
        &self.data[self.pos..self.end]
    }

    #[inline]
    pub(crate) fn avail(&self) -> usize {
        self.end - self.pos
    }

    /// Index of the first unread byte in the window (for [`Input::slice`]).
    #[inline]
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// Window bytes by absolute index; valid until the next `fill`.
    #[inline]
    pub(crate) fn slice(&self, start: usize, len: usize) -> &[u8] {
        &self.data[start..start + len]
    }

    /// Stream offset of the first unread byte.
    #[inline]
    pub(crate) fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Stream bytes read into the window so far (the decompressed size when compressed).
    pub(crate) fn stream_bytes(&self) -> u64 {
        self.base + self.end as u64
    }

    #[inline]
    pub(crate) fn consume(&mut self, n: usize) {
        debug_assert!(n <= self.avail(), "consume past the end of the window");
        self.pos += n;
    }

    /// The read error that ended the stream, if any (taken once).
    pub(crate) fn take_read_error(&mut self) -> Option<io::Error> {
        self.read_error.take()
    }

    /// Makes at least `n` unread bytes available; false when the stream ends first.
    /// `n` must not exceed [`MAX_RECORD`] (the parsers check record lengths first).
    #[inline]
    pub(crate) fn fill(&mut self, n: usize) -> bool {
        if self.avail() >= n {
            return true;
        }
        self.refill(n)
    }

    #[cold]
    fn refill(&mut self, n: usize) -> bool {
        debug_assert!(n <= MAX_RECORD, "record length was not checked");
        if self.eof {
            return false;
        }
        if self.pos > 0 {
            self.data.copy_within(self.pos..self.end, 0);
            self.base += self.pos as u64;
            self.end -= self.pos;
            self.pos = 0;
        }
        if n > self.data.len() {
            let grown = n.max(self.data.len().saturating_mul(2)).min(MAX_RECORD.max(n));
            self.data.resize(grown, 0);
        }
        while self.end < n {
            match self.src.read(&mut self.data[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return false;
                }
                Ok(k) => self.end += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.eof = true;
                    self.read_error = Some(e);
                    return false;
                }
            }
        }
        true
    }
}
