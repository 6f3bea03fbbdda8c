//! [`CaptureReader`]: content sniffing, decompression and the record loop.
//!
//! Detection never looks at a file name: gzip (1f 8b) and zstd (28 b5 2f fd) are
//! recognised by their magic and decompressed on the fly, then the capture inside must be
//! pcap (µs or ns, either byte order, or the "modified" variant) or pcapng.

use super::buffer::{Input, INITIAL_BUF};
use super::error::CaptureError;
use super::format::{CaptureFormat, Compression};
use super::linktype::LinkType;
use super::pcap::{self, PcapHeader};
use super::pcapng::{self, PcapNg};
use super::record::{Fault, Rec};
use super::select::{Decision, RecordFilter};
use super::source::{Raw, Source};
use super::Frame;
use crate::time::Timestamp;
use std::fmt;
use std::io::Read;

enum Parser {
    Pcap(PcapHeader),
    PcapNg(PcapNg),
}

/// What [`CaptureReader::read_all`] hands its caller.
pub enum Step<'r, 'f> {
    /// The next record.
    Frame(&'r Frame<'f>),
    /// Another `every` records were read (the reader, for its byte count).
    Tick(&'r CaptureReader),
}

/// The [`Frame`] of a record located in the input window.
#[inline]
fn frame_of<'a>(input: &'a Input, rec: &Rec, number: u64) -> Frame<'a> {
    Frame {
        number,
        ts: Timestamp::from_nanos(rec.ts),
        link: rec.link,
        wire_len: rec.wire_len,
        data: input.slice(rec.start, rec.len),
        interface: rec.interface,
    }
}

/// Streaming reader over one capture, with constant memory.
///
/// ```
/// use bdpscope::capture::CaptureReader;
///
/// // A little-endian µs pcap file (Ethernet, snaplen 65535) holding one 60-byte record
/// // at t = 1 s: the 24-byte file header, the 16-byte record header, the bytes.
/// let mut bytes = Vec::new();
/// for v in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, 65535, 1] {
///     bytes.extend_from_slice(&v.to_le_bytes()); // magic, version 2.4, zone, sigfigs, snaplen, link
/// }
/// for v in [1u32, 0, 60, 60] {
///     bytes.extend_from_slice(&v.to_le_bytes()); // seconds, µs, captured length, wire length
/// }
/// bytes.extend_from_slice(&[0u8; 60]);
///
/// let mut reader = CaptureReader::new(Box::new(std::io::Cursor::new(bytes))).unwrap();
/// let mut packets = 0;
/// loop {
///     match reader.next_frame() {
///         Ok(Some(frame)) => { packets += 1; assert_eq!(frame.data.len(), 60); }
///         Ok(None) => break,
///         Err(e) if e.is_cut_short() => { eprintln!("warning: {e}"); break; }
///         Err(e) => panic!("{e}"),
///     }
/// }
/// assert_eq!(packets, 1);
/// ```
pub struct CaptureReader {
    input: Input,
    parser: Parser,
    format: CaptureFormat,
    compression: Compression,
    /// Packet records read so far (returned or passed over by the filter).
    frames: u64,
    /// Distinct link types of the interfaces seen so far, in order of appearance.
    link_types: Vec<LinkType>,
    /// An error or the end has been returned: every later call returns `Ok(None)`.
    done: bool,
    /// Chooses the records returned (all when None); `skipped` counts the others.
    filter: Option<Box<dyn RecordFilter>>,
    skipped: u64,
    /// What the parser gave when the capture was opened (see [`CaptureReader::read_ahead`]),
    /// for the first call of `next_frame`: a record still in the window, the end, or a cut.
    ahead: Option<Result<Option<Rec>, CaptureError>>,
}

impl fmt::Debug for CaptureReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CaptureReader")
            .field("format", &self.format)
            .field("compression", &self.compression)
            .field("frames", &self.frames)
            .field("link_types", &self.link_types)
            .finish_non_exhaustive()
    }
}

fn hex4(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(" ")
}

/// A reason for [`CaptureError::NotACapture`] from the first bytes of the content.
fn not_a_capture(first: &[u8], compression: Compression) -> String {
    let subject = match compression {
        Compression::None => "it".to_string(),
        c => format!("its {c} content"),
    };
    if first.is_empty() {
        return format!("{subject} is empty");
    }
    let known: &[(&[u8], &str)] = &[
        (b"BZh", "is bzip2-compressed; decompress it first"),
        (&[0xfd, b'7', b'z', b'X'], "is xz-compressed; decompress it first"),
        (&[0x04, 0x22, 0x4d, 0x18], "is lz4-compressed; decompress it first"),
        (b"PK\x03\x04", "is a zip archive; extract it first"),
        (b"snoo", "is a Solaris snoop capture; convert it with `editcap -F pcap`"),
        (&[0x1f, 0x8b], "is gzip-compressed again"),
        (&[0x28, 0xb5, 0x2f, 0xfd], "is zstd-compressed again"),
    ];
    if let Some((_, what)) = known.iter().find(|(m, _)| first.starts_with(m)) {
        return format!("{subject} {what}");
    }
    if first.len() < 4 {
        let n = first.len();
        let unit = if n == 1 { "byte" } else { "bytes" };
        return format!(
            "{subject} is only {n} {unit} long ({}), too short for a capture header",
            hex4(first)
        );
    }
    let text = if first[..4]
        .iter()
        .all(|b| b.is_ascii_graphic() || b.is_ascii_whitespace())
    {
        format!(
            " (\"{}\", text?)",
            String::from_utf8_lossy(&first[..4]).escape_default()
        )
    } else {
        String::new()
    };
    format!(
        "{subject} starts with bytes {}{text}, which is not pcap, pcapng, gzip or zstd",
        hex4(&first[..4])
    )
}

impl CaptureReader {
    /// Opens a capture: detects compression and format from the content and reads the
    /// file header (pcap) or first section header (pcapng).
    ///
    /// Errors: [`CaptureError::NotACapture`] for empty input and anything that is not a
    /// (compressed) pcap or pcapng; [`CaptureError::BadHeader`] for a pcap or pcapng
    /// header it cannot take (another version, reserved bits); [`CaptureError::Truncated`]
    /// when the input stops inside the file header; [`CaptureError::Corrupt`] for a
    /// damaged section header; [`CaptureError::NoPacket`] when the capture is damaged
    /// before its first packet (it reads ahead to that packet, see `read_ahead`).
    pub fn new(input: Box<dyn Read + Send>) -> Result<CaptureReader, CaptureError> {
        Self::with_buffer(input, INITIAL_BUF)
    }

    /// [`CaptureReader::new`] with a given starting window size (tests use tiny ones to
    /// exercise refills and growth).
    pub(crate) fn with_buffer(input: Box<dyn Read + Send>, capacity: usize) -> Result<CaptureReader, CaptureError> {
        let raw = Raw::sniff(input)?;
        let source = Source::open(raw)?;
        let compression = source.compression();
        let mut input = Input::new(source, capacity);
        let got4 = input.fill(4);
        if let Some(e) = input.take_read_error() {
            return Err(input.src.classify(e, input.stream_bytes(), 0));
        }
        let first = input.data();
        if got4 && pcap::is_magic(first) {
            if !input.fill(pcap::HEADER_LEN) {
                return Err(Self::header_cut(&mut input));
            }
            let header = PcapHeader::parse(&input.data()[..pcap::HEADER_LEN]).map_err(CaptureError::BadHeader)?;
            input.consume(pcap::HEADER_LEN);
            let format = CaptureFormat::Pcap {
                nanosecond: header.nanosecond,
                big_endian: header.big_endian,
            };
            let link_types = vec![header.link];
            return CaptureReader {
                input,
                parser: Parser::Pcap(header),
                format,
                compression,
                frames: 0,
                link_types,
                done: false,
                filter: None,
                skipped: 0,
                ahead: None,
            }
            .read_ahead();
        }
        if got4 && first[..4] == pcapng::SHB_TYPE {
            Self::check_first_section(&mut input)?;
            return CaptureReader {
                input,
                parser: Parser::PcapNg(PcapNg::new()),
                format: CaptureFormat::PcapNg,
                compression,
                frames: 0,
                link_types: Vec::new(),
                done: false,
                filter: None,
                skipped: 0,
                ahead: None,
            }
            .read_ahead();
        }
        Err(CaptureError::NotACapture(not_a_capture(first, compression)))
    }

    /// Convenience for [`CaptureReader::new`] with any owned reader.
    pub fn from_reader<R: Read + Send + 'static>(r: R) -> Result<CaptureReader, CaptureError> {
        Self::new(Box::new(r))
    }

    /// Reads ahead to the first packet record, kept for the first `next_frame`. A capture
    /// damaged before it (a first record of 2 GB, a broken block, a decompression or read
    /// error) has no packet to give: it cannot be read as a capture at all, so opening it
    /// fails (`NoPacket`, saying where) rather than every command reporting the packets
    /// "before the damage" of a capture that had none. A cut there stays for `next_frame`
    /// to report: a capture cut short is read as far as it goes, packets or not.
    fn read_ahead(mut self) -> Result<CaptureReader, CaptureError> {
        match self.parse() {
            Err(e) if !e.is_cut_short() => Err(CaptureError::NoPacket(Box::new(e))),
            first => {
                self.ahead = Some(first);
                Ok(self)
            }
        }
    }

    /// The parser's next packet record (in the window until the next parse), the end, or
    /// why it stopped; a read error that ended the stream is said in its place.
    #[inline(always)]
    fn parse(&mut self) -> Result<Option<Rec>, CaptureError> {
        let step = match &mut self.parser {
            Parser::Pcap(h) => h.next(&mut self.input),
            Parser::PcapNg(ng) => {
                let link_types = &mut self.link_types;
                ng.next(&mut self.input, &mut |lt| {
                    if !link_types.contains(&lt) {
                        link_types.push(lt);
                    }
                })
            }
        };
        let fault = match step {
            Ok(Some(rec)) => return Ok(Some(rec)),
            Ok(None) => None,
            Err(fault) => Some(fault),
        };
        if let Some(e) = self.input.take_read_error() {
            return Err(self.input.src.classify(e, self.input.stream_bytes(), self.frames));
        }
        match fault {
            None => Ok(None),
            Some(Fault::Truncated { offset }) => Err(CaptureError::Truncated {
                offset,
                frames: self.frames,
            }),
            Some(Fault::Corrupt { offset, reason }) => Err(CaptureError::Corrupt { offset, reason }),
        }
    }

    /// The input stopped inside the file header or first section header.
    fn header_cut(input: &mut Input) -> CaptureError {
        match input.take_read_error() {
            Some(e) => input.src.classify(e, input.stream_bytes(), 0),
            None => CaptureError::Truncated { offset: 0, frames: 0 },
        }
    }

    /// Validates the first Section Header Block without consuming it.
    fn check_first_section(input: &mut Input) -> Result<(), CaptureError> {
        if !input.fill(12) {
            return Err(Self::header_cut(input));
        }
        let h = input.data();
        let be = match h[8..12] {
            [0x1a, 0x2b, 0x3c, 0x4d] => true,
            [0x4d, 0x3c, 0x2b, 0x1a] => false,
            _ => {
                return Err(CaptureError::BadHeader(format!(
                    "it starts like pcapng but its byte-order magic is {} instead of 1a 2b 3c 4d",
                    hex4(&h[8..12])
                )))
            }
        };
        let blen = pcap::rd32(h, 4, be) as usize;
        if !(28..=super::buffer::MAX_RECORD).contains(&blen) || !blen.is_multiple_of(4) {
            return Err(CaptureError::Corrupt {
                offset: 0,
                reason: format!("the section header block has an impossible length {blen}"),
            });
        }
        if !input.fill(blen) {
            return Err(Self::header_cut(input));
        }
        let b = &input.data()[..blen];
        let (major, minor) = (pcap::rd16(b, 12, be), pcap::rd16(b, 14, be));
        if major != 1 {
            return Err(CaptureError::BadHeader(format!(
                "it is pcapng version {major}.{minor}, and only version 1 is supported"
            )));
        }
        pcapng::check_shb(b, be).map_err(|reason| CaptureError::Corrupt { offset: 0, reason })
    }

    /// The next packet record, borrowed from the reader's buffer until the next call.
    ///
    /// `Ok(None)` at the end. An `Err` comes after every complete record before the
    /// problem; after it (or after the end) every call returns `Ok(None)`.
    #[inline]
    pub fn next_frame(&mut self) -> Result<Option<Frame<'_>>, CaptureError> {
        if self.done {
            return Ok(None);
        }
        loop {
            let step = match self.ahead.take() {
                Some(first) => first,
                None => self.parse(),
            };
            let rec = match step {
                Ok(Some(rec)) => rec,
                Ok(None) => {
                    self.done = true;
                    return Ok(None);
                }
                Err(e) => {
                    self.done = true;
                    return Err(e);
                }
            };
            self.frames += 1;
            let number = match &self.parser {
                Parser::Pcap(_) => self.frames,
                Parser::PcapNg(ng) => self.frames + ng.numbered_non_packets,
            };
            // The frame is made twice, for the filter and to return: returning the first
            // from inside the loop would keep the buffer borrowed across iterations.
            let decision = match &mut self.filter {
                None => Decision::Keep,
                Some(f) => f.decide(&frame_of(&self.input, &rec, number)),
            };
            match decision {
                Decision::Keep => return Ok(Some(frame_of(&self.input, &rec, number))),
                Decision::Skip => self.skipped += 1,
                Decision::End => {
                    self.done = true;
                    return Ok(None);
                }
                Decision::Fail(reason) => {
                    self.done = true;
                    return Err(CaptureError::Filter { number, reason });
                }
            }
        }
    }

    /// The read loop every command runs: each record to `step` as [`Step::Frame`], in
    /// capture order, and [`Step::Tick`] after every `every` records (for a progress bar,
    /// or to take finished flows).
    ///
    /// A capture cut short, or corrupt after some records, still yields everything before
    /// the damage: the reading ends there and the error (which says where) is returned as
    /// `Ok(Some(e))`, for the caller to turn into a warning. `Ok(None)`: read to its end.
    /// An `Err` from `step` (a write that failed) stops the reading at once.
    #[inline]
    pub fn read_all<E>(
        &mut self,
        every: u64,
        mut step: impl FnMut(Step<'_, '_>) -> Result<(), E>,
    ) -> Result<Option<CaptureError>, E> {
        let mut n = 0u64;
        loop {
            match self.next_frame() {
                Ok(Some(frame)) => step(Step::Frame(&frame))?,
                Ok(None) => return Ok(None),
                Err(e) => return Ok(Some(e)),
            }
            n += 1;
            if n.is_multiple_of(every) {
                step(Step::Tick(self))?;
            }
        }
    }

    /// Returns only the records `filter` keeps (their numbers stay those of the capture).
    pub fn set_filter(&mut self, filter: Box<dyn RecordFilter>) {
        self.filter = Some(filter);
    }

    /// Records the filter passed over so far.
    pub fn records_skipped(&self) -> u64 {
        self.skipped
    }

    /// The capture format (inside any compression).
    pub fn format(&self) -> CaptureFormat {
        self.format
    }

    /// The compression detected around the capture.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Packet records read so far (returned or passed over by the filter).
    pub fn frames_read(&self) -> u64 {
        self.frames
    }

    /// Bytes taken from the caller's reader so far (compressed bytes for a compressed
    /// input), for progress reporting. Runs ahead of the records by up to a buffer.
    pub fn input_bytes(&self) -> u64 {
        self.input.src.raw_bytes()
    }

    /// Bytes of capture data (decompressed) consumed by the records returned so far.
    pub fn capture_offset(&self) -> u64 {
        self.input.offset()
    }

    /// Distinct link types of the interfaces seen so far, in order of appearance (pcap:
    /// the file's one link type; pcapng: grows as interface descriptions are read).
    pub fn link_types(&self) -> Vec<LinkType> {
        self.link_types.clone()
    }

    /// pcapng packets that referred to an interface their section never described; they
    /// are returned with link type `LinkType(u32::MAX)` and microsecond timestamps.
    pub fn unknown_interface_packets(&self) -> u64 {
        match &self.parser {
            Parser::Pcap(_) => 0,
            Parser::PcapNg(ng) => ng.unknown_interface_packets,
        }
    }

    /// pcap: the file header's snapshot length; pcapng: None (it is per interface).
    pub fn snaplen(&self) -> Option<u32> {
        match &self.parser {
            Parser::Pcap(h) => Some(h.snaplen),
            Parser::PcapNg(_) => None,
        }
    }
}
