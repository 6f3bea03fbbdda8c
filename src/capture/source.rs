//! The byte source under the parser: the caller's reader, counted, with the sniffed first
//! bytes put back in front, and a gzip or zstd decoder on top when the content says so.

use super::error::CaptureError;
use super::format::Compression;
use std::io::{self, BufReader, Read};

/// Buffer between a decompressor and the raw input.
const COMPRESSED_BUF: usize = 256 * 1024;
/// Largest output asked of a decompressor per read. flate2 drops the output of a read
/// that ends in an error, so smaller reads lose fewer packets before damaged data.
const DECOMPRESSED_CHUNK: usize = 64 * 1024;

/// The caller's reader: counts the bytes taken from it and replays the sniffed prefix.
pub(crate) struct Raw {
    inner: Box<dyn Read + Send>,
    prefix: [u8; 4],
    prefix_pos: usize,
    prefix_len: usize,
    /// Bytes read from `inner` so far (the prefix included).
    count: u64,
    /// Set when `inner` itself returned an error (as opposed to a decompressor above it).
    failed: bool,
}

impl Raw {
    /// Reads up to four bytes to identify the content; they are replayed by `read`.
    pub(crate) fn sniff(inner: Box<dyn Read + Send>) -> Result<Raw, CaptureError> {
        let mut raw = Raw {
            inner,
            prefix: [0; 4],
            prefix_pos: 0,
            prefix_len: 0,
            count: 0,
            failed: false,
        };
        while raw.prefix_len < 4 {
            match raw.inner.read(&mut raw.prefix[raw.prefix_len..]) {
                Ok(0) => break,
                Ok(n) => {
                    raw.prefix_len += n;
                    raw.count += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(CaptureError::Io(e)),
            }
        }
        Ok(raw)
    }

    pub(crate) fn prefix(&self) -> &[u8] {
        &self.prefix[..self.prefix_len]
    }
}

impl Read for Raw {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.prefix_pos < self.prefix_len {
            let n = (self.prefix_len - self.prefix_pos).min(buf.len());
            buf[..n].copy_from_slice(&self.prefix[self.prefix_pos..self.prefix_pos + n]);
            self.prefix_pos += n;
            return Ok(n);
        }
        match self.inner.read(buf) {
            Ok(n) => {
                self.count += n as u64;
                Ok(n)
            }
            Err(e) => {
                if e.kind() != io::ErrorKind::Interrupted {
                    self.failed = true;
                }
                Err(e)
            }
        }
    }
}

/// What the parser reads from: the raw input or a decompressor over it.
pub(crate) enum Source {
    Plain(Raw),
    Gzip(Box<flate2::bufread::MultiGzDecoder<BufReader<Raw>>>),
    Zstd(zstd::stream::read::Decoder<'static, BufReader<Raw>>),
}

impl Source {
    /// Chooses the decompressor from the raw input's first bytes.
    pub(crate) fn open(raw: Raw) -> Result<Source, CaptureError> {
        let p = raw.prefix();
        if p.len() >= 2 && p[..2] == [0x1f, 0x8b] {
            let buffered = BufReader::with_capacity(COMPRESSED_BUF, raw);
            Ok(Source::Gzip(Box::new(flate2::bufread::MultiGzDecoder::new(buffered))))
        } else if p.len() >= 4 && p[..4] == [0x28, 0xb5, 0x2f, 0xfd] {
            let buffered = BufReader::with_capacity(COMPRESSED_BUF, raw);
            let dec = zstd::stream::read::Decoder::with_buffer(buffered)
                .map_err(|e| CaptureError::Decompress(format!("cannot start zstd: {e}")))?;
            Ok(Source::Zstd(dec))
        } else {
            Ok(Source::Plain(raw))
        }
    }

    pub(crate) fn compression(&self) -> Compression {
        match self {
            Source::Plain(_) => Compression::None,
            Source::Gzip(_) => Compression::Gzip,
            Source::Zstd(_) => Compression::Zstd,
        }
    }

    fn raw(&self) -> &Raw {
        match self {
            Source::Plain(r) => r,
            Source::Gzip(d) => d.get_ref().get_ref(),
            Source::Zstd(d) => d.get_ref().get_ref(),
        }
    }

    /// Bytes taken from the caller's reader so far.
    pub(crate) fn raw_bytes(&self) -> u64 {
        self.raw().count
    }

    /// Turns a read error into the error the user sees. `offset` is the number of
    /// decompressed bytes that were available, `frames` the packets read before.
    pub(crate) fn classify(&self, e: io::Error, offset: u64, frames: u64) -> CaptureError {
        let compression = self.compression();
        if compression == Compression::None || self.raw().failed {
            return CaptureError::Io(e);
        }
        if e.kind() == io::ErrorKind::UnexpectedEof {
            CaptureError::CompressedTruncated {
                compression,
                offset,
                frames,
            }
        } else {
            CaptureError::Decompress(format!(
                "the {compression} data is damaged after {offset} bytes of capture data: {e}"
            ))
        }
    }
}

impl Read for Source {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Source::Plain(r) => r.read(buf),
            Source::Gzip(d) => {
                let n = buf.len().min(DECOMPRESSED_CHUNK);
                d.read(&mut buf[..n])
            }
            Source::Zstd(d) => {
                let n = buf.len().min(DECOMPRESSED_CHUNK);
                d.read(&mut buf[..n])
            }
        }
    }
}
