//! The `packets` CSV: one row per TCP segment, the spec's columns first, then extras.

use bdpscope::decode::TcpFlags;
use bdpscope::observe::Observer;
use bdpscope::tcp::SegmentEvent;
use std::io::Write;

pub const HEADER: &str = "frame,time,flow,dir,seq,ack,len,flags,win_raw,win_bytes,flight_bytes,rtt_ms,retransmission,pipe_bytes,ts_rtt_ms,dup_ack,zero_window,window_full,naive_flight_bytes,ecn";

pub struct PacketWriter<W: Write> {
    out: W,
    flows: Vec<u64>,
    error: Option<std::io::Error>,
    /// One row, built here and written at once: a `write!` per field spent two thirds of
    /// the command's time in the formatting machinery.
    line: Line,
    /// The seconds of the last row's time and their text with the point.
    secs: Option<(i64, Vec<u8>)>,
}

impl<W: Write> PacketWriter<W> {
    pub fn new(mut out: W, flows: Vec<u64>) -> std::io::Result<Self> {
        writeln!(out, "{HEADER}")?;
        Ok(PacketWriter {
            out,
            flows,
            error: None,
            line: Line::default(),
            secs: None,
        })
    }

    pub fn finish(mut self) -> std::io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush()
    }

    fn row(&mut self, e: &SegmentEvent) -> std::io::Result<()> {
        // Seconds and nanoseconds as `{secs}.{nanos:09}` (Euclidean: before 1970 too).
        // The seconds change once a second: their digits are kept from the row before.
        let t = e.ts.nanos();
        let secs = t.div_euclid(1_000_000_000);
        if self.secs.as_ref().is_none_or(|(s, _)| *s != secs) {
            let mut digits = Line::default();
            digits.i64(secs);
            digits.byte(b'.');
            self.secs = Some((secs, digits.text().to_vec()));
        }
        let l = &mut self.line;
        l.len = 0;
        l.field(e.frame);
        l.bytes(&self.secs.as_ref().expect("set above").1);
        l.padded9(t.rem_euclid(1_000_000_000) as u32);
        l.byte(b',');
        l.field(e.flow);
        l.bytes(e.dir.as_str().as_bytes());
        l.byte(b',');
        l.field(e.seq as u64);
        l.opt(e.ack.map(u64::from));
        l.field(e.len as u64);
        l.flags(e.flags);
        l.byte(b',');
        l.field(e.win_raw as u64);
        l.opt(e.win_bytes);
        l.opt(e.flight);
        l.opt_millis(e.ack_rtt.map(|r| r.raw.millis_f64()));
        l.field(e.send.retransmission as u64);
        l.opt(e.pipe);
        l.opt_millis(e.ts_rtt.map(|r| r.raw.millis_f64()));
        l.field(e.acked.duplicate as u64);
        l.field(e.zero_window as u64);
        l.field(e.send.window_full as u64);
        l.opt(e.naive_flight);
        l.bytes(e.ecn.as_str().as_bytes()); // the last column: no comma
        l.byte(b'\n');
        self.out.write_all(l.text())
    }
}

/// Room for the longest row: 20 fields of at most 21 characters (a u64 has 20 digits, the
/// milliseconds of an i64 of nanoseconds with three decimals 18 and a sign), commas and
/// the newline come to under 440 bytes.
const LINE_BYTES: usize = 512;

/// A row being written into a fixed buffer: no allocation and no formatter per field.
struct Line {
    buf: [u8; LINE_BYTES],
    len: usize,
}

impl Default for Line {
    fn default() -> Self {
        Line {
            buf: [0; LINE_BYTES],
            len: 0,
        }
    }
}

impl Line {
    fn byte(&mut self, b: u8) {
        self.buf[self.len] = b;
        self.len += 1;
    }

    fn bytes(&mut self, s: &[u8]) {
        self.buf[self.len..self.len + s.len()].copy_from_slice(s);
        self.len += s.len();
    }

    fn u64(&mut self, v: u64) {
        self.bytes(itoa::Buffer::new().format(v).as_bytes());
    }

    fn i64(&mut self, v: i64) {
        self.bytes(itoa::Buffer::new().format(v).as_bytes());
    }

    /// Exactly nine digits, zero-padded (`v` < 10^9).
    fn padded9(&mut self, v: u32) {
        let mut digits = itoa::Buffer::new();
        let digits = digits.format(v).as_bytes();
        let zeros = 9usize.saturating_sub(digits.len());
        self.buf[self.len..self.len + zeros].fill(b'0');
        self.len += zeros;
        self.bytes(digits);
    }

    /// The value, then the field's comma.
    fn field(&mut self, v: u64) {
        self.u64(v);
        self.byte(b',');
    }

    /// The value if any, then the field's comma.
    fn opt(&mut self, v: Option<u64>) {
        if let Some(v) = v {
            self.u64(v);
        }
        self.byte(b',');
    }

    /// `{:.3}` if any (few rows carry a sample, and float formatting is subtle), then the
    /// field's comma.
    fn opt_millis(&mut self, ms: Option<f64>) {
        if let Some(ms) = ms {
            self.millis(ms);
        }
        self.byte(b',');
    }

    fn millis(&mut self, ms: f64) {
        use std::fmt::Write as _;
        let _ = write!(self, "{ms:.3}");
    }

    /// tcpdump's letters, as `TcpFlags`' Debug writes them: S F R P . (ACK) U E W.
    fn flags(&mut self, f: TcpFlags) {
        const LETTERS: [(u8, u8); 8] = [
            (TcpFlags::SYN, b'S'),
            (TcpFlags::FIN, b'F'),
            (TcpFlags::RST, b'R'),
            (TcpFlags::PSH, b'P'),
            (TcpFlags::ACK, b'.'),
            (TcpFlags::URG, b'U'),
            (TcpFlags::ECE, b'E'),
            (TcpFlags::CWR, b'W'),
        ];
        for (bit, c) in LETTERS {
            if f.has(bit) {
                self.byte(c);
            }
        }
    }

    fn text(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl std::fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.bytes(s.as_bytes());
        Ok(())
    }
}

impl<W: Write> Observer for PacketWriter<W> {
    fn on_segment(&mut self, e: &SegmentEvent) {
        if self.error.is_some() || (!self.flows.is_empty() && !self.flows.contains(&e.flow)) {
            return;
        }
        if let Err(err) = self.row(e) {
            self.error = Some(err);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(f: impl Fn(&mut Line)) -> String {
        let mut l = Line::default();
        f(&mut l);
        String::from_utf8(l.text().to_vec()).unwrap()
    }

    #[test]
    fn numbers_are_written_as_display_writes_them() {
        let powers = (0..20).map(|k| 10u64.pow(k)).flat_map(|p| [p - 1, p, p + 1]);
        let few = [65_535, 4_294_967_295, 1_796_022_639, u64::MAX];
        for v in (0..10_000).chain(powers).chain(few) {
            assert_eq!(text(|l| l.u64(v)), v.to_string());
        }
        for v in [0i64, -1, -10, 1_796_022_639, -1_796_022_639, i64::MIN, i64::MAX] {
            assert_eq!(text(|l| l.i64(v)), v.to_string());
        }
        for v in [0u32, 7, 180_840_000, 999_999_999] {
            assert_eq!(text(|l| l.padded9(v)), format!("{v:09}"));
        }
        for ms in [0.0, 0.0005, 40.2536, -3.25, 9_223_372_036_854.775] {
            assert_eq!(text(|l| l.millis(ms)), format!("{ms:.3}"));
        }
    }

    #[test]
    fn flags_are_written_as_their_debug_form() {
        for bits in 0..=255u8 {
            assert_eq!(text(|l| l.flags(TcpFlags(bits))), format!("{:?}", TcpFlags(bits)));
        }
    }

    #[test]
    fn the_longest_row_fits() {
        let mut l = Line::default();
        for _ in 0..19 {
            l.i64(i64::MIN);
            l.byte(b',');
        }
        l.millis(-(i64::MAX as f64) / 1e6);
        l.millis(-(i64::MAX as f64) / 1e6);
        assert!(l.len < LINE_BYTES, "{}", l.len);
    }
}
