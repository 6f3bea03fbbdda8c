//! What `compare` keeps of each connection of one capture: the handshake segments with
//! their options (and the NOP runs of their option areas), per-direction counters, a
//! compact fingerprint of the first segments of each direction, and the first payload
//! bytes of the first data segments (what `evidence.rs` weighs when the sequence numbers
//! were rewritten). Memory is bounded: at most `MAX_FPS_PER_DIR` fingerprints and
//! `MAX_SAMPLES_PER_DIR` payload samples per direction, `MAX_FPS_TOTAL` and
//! `MAX_SAMPLES_TOTAL` per capture; beyond them only the counters grow.

use crate::capture::{CaptureReader, Frame, Step};
use crate::decode::{self, Print, Segment, TcpFlags};
use crate::flow::{Dir, Duplicates, Endpoint, FlowTable, TableConfig, Tracked};
use crate::tcp::rtt::End;
use crate::tcp::Connection;

/// Fingerprints kept per direction of one connection.
pub const MAX_FPS_PER_DIR: usize = 65_536;
/// Fingerprints kept over all connections of one capture (about 28 bytes each).
pub const MAX_FPS_TOTAL: usize = 2_000_000;
/// Payload bytes kept from the start of a data segment. Sixteen bytes of unstructured
/// content are about 60 bits of evidence (`evidence::sample_bits`): one such sample is
/// already rarer between unrelated connections than the matching threshold asks.
pub const SAMPLE_BYTES: usize = 16;
/// Data segments per direction whose first payload bytes are kept (as many as the
/// matching looks at: `matching::KEYS_B`).
pub const MAX_SAMPLES_PER_DIR: usize = 1024;
/// Payload samples kept over all connections of one capture (24 bytes each).
pub const MAX_SAMPLES_TOTAL: usize = 1_000_000;

/// The first payload bytes of one data segment, as captured (a snaplen may have cut them
/// short or away: then `n` is below `SAMPLE_BYTES`, or the segment has no sample).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    /// Absolute sequence number of the first byte.
    pub seq: u32,
    /// Bytes captured, at most `SAMPLE_BYTES`.
    pub n: u8,
    pub bytes: [u8; SAMPLE_BYTES],
}

impl Sample {
    pub fn content(&self) -> &[u8] {
        &self.bytes[..self.n as usize]
    }
}

/// One segment, compactly: enough to find it again in the other capture and to see what
/// a middlebox changed (window, options).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fp {
    /// Capture time, ns since the epoch.
    pub t: i64,
    /// Absolute sequence and acknowledgment numbers.
    pub seq: u32,
    pub ack: u32,
    pub len: u16,
    pub flags: u8,
    pub win: u16,
    /// bit 0: timestamps option present, bit 1: SACK blocks present.
    pub opts: u8,
    /// TSval of the timestamps option (0 without one): tells apart the duplicate ACKs a
    /// loss makes, which agree on everything else.
    pub tsval: u32,
}

impl Fp {
    pub fn has_ts(&self) -> bool {
        self.opts & 1 != 0
    }
    pub fn has_sack(&self) -> bool {
        self.opts & 2 != 0
    }
}

/// A SYN or SYN/ACK as captured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HsRecord {
    pub t: i64,
    pub isn: u32,
    pub window: u16,
    pub mss: Option<u16>,
    pub wscale: Option<u8>,
    pub sack_permitted: bool,
    pub timestamps: bool,
    /// The whole option area was captured (absent options are really absent).
    pub complete: bool,
    /// Longest run of NOPs in the option area (3+ is an option overwritten on the way);
    /// None when the option bytes could not be located.
    pub nop_run: Option<usize>,
    /// SYNs (or SYN/ACKs) seen from this end.
    pub count: u32,
}

/// One direction of one connection.
#[derive(Clone, Debug, Default)]
pub struct DirRecord {
    pub segments: u64,
    pub data_segments: u64,
    pub payload_bytes: u64,
    pub first_t: Option<i64>,
    pub last_t: Option<i64>,
    /// First sequence number seen (absolute).
    pub first_seq: Option<u32>,
    pub fps: Vec<Fp>,
    /// Segments beyond the fingerprint budget.
    pub unrecorded: u64,
    /// The first payload bytes of the first data segments (with any payload captured).
    pub samples: Vec<Sample>,
    /// Data segments whose payload the capture did not hold at all (snaplen).
    pub payload_uncaptured: u64,
    /// A FIN was seen in this direction.
    pub fin: bool,
}

/// One connection of one capture.
#[derive(Clone, Debug)]
pub struct ConnRecord {
    pub client: Endpoint,
    pub server: Endpoint,
    /// The client was identified by its SYN (else by the higher port).
    pub client_by_syn: bool,
    pub syn: Option<HsRecord>,
    pub syn_ack: Option<HsRecord>,
    /// Indexed by `Dir::index()`.
    pub dirs: [DirRecord; 2],
    /// Minimum loops capture point -> client -> capture point and through the server, ms.
    pub loop_client_ms: Option<f64>,
    pub loop_server_ms: Option<f64>,
    pub first_t: i64,
    pub last_t: i64,
    pub rst: bool,
}

impl ConnRecord {
    pub fn dir(&self, d: Dir) -> &DirRecord {
        &self.dirs[d.index()]
    }

    /// The ISN of direction `d` when its SYN (or SYN/ACK) was captured.
    pub fn isn(&self, d: Dir) -> Option<u32> {
        match d {
            Dir::C2S => self.syn.map(|s| s.isn),
            Dir::S2C => self.syn_ack.map(|s| s.isn),
        }
    }

    pub fn handshake(&self, d: Dir) -> Option<HsRecord> {
        match d {
            Dir::C2S => self.syn,
            Dir::S2C => self.syn_ack,
        }
    }

    /// The capture holds the whole connection: both handshake segments and its end (FIN
    /// both ways, or a reset).
    pub fn whole(&self) -> bool {
        self.syn.is_some() && self.syn_ack.is_some() && (self.rst || self.dirs.iter().all(|d| d.fin))
    }

    pub fn label(&self) -> String {
        format!("{} -> {}", self.client, self.server)
    }
}

/// One capture as `compare` sees it.
#[derive(Clone, Debug, Default)]
pub struct Side {
    pub name: String,
    pub format: String,
    pub packets: u64,
    pub tcp_segments: u64,
    /// Capture duplicates (the same datagram recorded again: `flow::duplicate`) set aside
    /// before anything counted them, as `analyze` does: a copy is neither a retransmission
    /// here nor a segment the other capture lacks.
    pub duplicates: u64,
    pub conns: Vec<ConnRecord>,
    pub warnings: Vec<String>,
}

struct Entry {
    conn: Connection,
    rec: ConnRecord,
}

impl Tracked for Entry {
    fn new(conn: Connection) -> Self {
        let rec = ConnRecord {
            client: conn.client,
            server: conn.server,
            client_by_syn: conn.client_by_syn,
            syn: None,
            syn_ack: None,
            dirs: Default::default(),
            loop_client_ms: None,
            loop_server_ms: None,
            first_t: conn.first_ts.0,
            last_t: conn.first_ts.0,
            rst: false,
        };
        Entry { conn, rec }
    }
    fn conn(&self) -> &Connection {
        &self.conn
    }
}

impl Entry {
    fn finish(self) -> ConnRecord {
        let mut rec = self.rec;
        let ms = |e: End| self.conn.rtt.through(e).min.map(|s| s.millis_f64());
        rec.loop_client_ms = ms(End::Client);
        rec.loop_server_ms = ms(End::Server);
        rec
    }
}

/// Reads a whole capture into connection records (streaming; the records are the result).
pub fn read(reader: &mut CaptureReader, name: &str) -> Side {
    let mut b = Builder::new(name);
    // The one read loop: a capture cut short still gives everything before the damage,
    // with a warning saying where.
    let Ok(damage) = reader.read_all(u64::MAX, |step| {
        if let Step::Frame(frame) = step {
            b.on_frame(frame);
        }
        Ok::<(), std::convert::Infallible>(())
    });
    if let Some(e) = damage {
        b.side.warnings.push(e.to_string());
    }
    b.side.format = reader.format().container().as_str().to_string();
    b.finish()
}

/// Builds a `Side` frame by frame.
pub struct Builder {
    side: Side,
    table: FlowTable<Entry>,
    done: Vec<Box<Entry>>,
    budget: Budget,
    /// Capture duplicates, found as the front finds them for `analyze`.
    copies: Duplicates,
    /// The latest record's print (scratch).
    print: Print,
}

/// What is left of the capture-wide budgets.
#[derive(Default)]
struct Budget {
    fps: usize,
    samples: usize,
}

impl Builder {
    pub fn new(name: &str) -> Builder {
        Builder {
            side: Side {
                name: name.to_string(),
                format: "pcap".into(),
                ..Default::default()
            },
            table: FlowTable::new(TableConfig::default(), 0),
            done: Vec::new(),
            budget: Budget::default(),
            copies: Duplicates::default(),
            print: Print::default(),
        }
    }

    pub fn on_frame(&mut self, frame: &Frame<'_>) {
        self.side.packets += 1;
        let Ok(seg) = decode::decode_printed(frame.link, frame.data, &mut self.print) else {
            return;
        };
        self.side.tcp_segments += 1;
        let (entry, dir, replaced) = self.table.lookup(&seg, frame.number, frame.ts);
        if self
            .copies
            .is_copy(entry.conn.id, dir == Dir::C2S, &seg, &self.print, frame.ts)
        {
            self.side.duplicates += 1;
        } else {
            entry.conn.on_segment(&seg, dir, frame.number, frame.ts);
            record(&mut entry.rec, &seg, dir, frame, &mut self.budget);
        }
        if let Some(old) = replaced {
            self.done.push(old);
        }
        self.table.evict_due(&mut self.done);
    }

    pub fn finish(mut self) -> Side {
        self.done.extend(self.table.drain());
        let mut conns: Vec<ConnRecord> = self.done.into_iter().map(|e| e.finish()).collect();
        conns.sort_by_key(|c| (c.first_t, c.client, c.server));
        self.side.conns = conns;
        self.side
    }
}

fn record(rec: &mut ConnRecord, seg: &Segment, dir: Dir, frame: &Frame<'_>, budget: &mut Budget) {
    let t = frame.ts.0;
    rec.first_t = rec.first_t.min(t);
    rec.last_t = rec.last_t.max(t);
    let f = seg.flags;
    if f.rst() {
        rec.rst = true;
    }
    if f.syn() {
        let o = &seg.options;
        let prev = if f.ack() { rec.syn_ack } else { rec.syn };
        let hs = HsRecord {
            t,
            isn: seg.seq.0,
            window: seg.window,
            mss: o.mss,
            wscale: o.wscale_raw_over_14.or(o.wscale),
            sack_permitted: o.sack_permitted,
            timestamps: o.timestamps.is_some(),
            complete: o.complete,
            // Measured by the decoder on every SYN (see `decode::longest_nop_run`).
            nop_run: Some(o.nop_run as usize),
            count: prev.map_or(0, |p| p.count) + 1,
        };
        match (f.ack(), dir) {
            (false, Dir::C2S) => rec.syn = Some(hs),
            (true, Dir::S2C) => rec.syn_ack = Some(hs),
            _ => {}
        }
    }
    let d = &mut rec.dirs[dir.index()];
    d.segments += 1;
    if seg.payload_len > 0 {
        d.data_segments += 1;
        d.payload_bytes += seg.payload_len as u64;
    }
    d.first_t.get_or_insert(t);
    d.last_t = Some(t);
    d.first_seq.get_or_insert(seg.seq.0);
    d.fin |= f.fin();
    if seg.payload_len > 0 {
        match payload_prefix(frame.data, seg) {
            Some(p) if !p.is_empty() => {
                if d.samples.len() < MAX_SAMPLES_PER_DIR && budget.samples < MAX_SAMPLES_TOTAL {
                    budget.samples += 1;
                    let mut bytes = [0u8; SAMPLE_BYTES];
                    let n = p.len().min(SAMPLE_BYTES);
                    bytes[..n].copy_from_slice(&p[..n]);
                    d.samples.push(Sample {
                        seq: seg.seq.0,
                        n: n as u8,
                        bytes,
                    });
                }
            }
            _ => d.payload_uncaptured += 1,
        }
    }
    if d.fps.len() < MAX_FPS_PER_DIR && budget.fps < MAX_FPS_TOTAL {
        budget.fps += 1;
        d.fps.push(Fp {
            t,
            seq: seg.seq.0,
            ack: if f.ack() { seg.ack.0 } else { 0 },
            len: seg.payload_len.min(u16::MAX as u32) as u16,
            flags: f.0 & (TcpFlags::SYN | TcpFlags::FIN | TcpFlags::RST | TcpFlags::ACK),
            win: seg.window,
            opts: seg.options.timestamps.is_some() as u8 | ((!seg.options.sack.is_empty()) as u8) << 1,
            tsval: seg.options.timestamps.map_or(0, |t| t.val),
        });
    } else {
        d.unrecorded += 1;
    }
}

/// The TCP header of a decoded segment within its captured frame, and the bytes after it:
/// found by its ports, sequence and acknowledgment numbers (12 bytes no other header of
/// the frame holds), whatever the link and IP layers in front of it. Returns the frame
/// from the TCP header on and the header's length.
fn tcp_header<'a>(frame: &'a [u8], seg: &Segment) -> Option<(&'a [u8], usize)> {
    let mut pat = [0u8; 12];
    pat[0..2].copy_from_slice(&seg.src_port.to_be_bytes());
    pat[2..4].copy_from_slice(&seg.dst_port.to_be_bytes());
    pat[4..8].copy_from_slice(&seg.seq.0.to_be_bytes());
    pat[8..12].copy_from_slice(&seg.ack.0.to_be_bytes());
    let start = frame.windows(12).position(|w| w == pat)?;
    let tcp = &frame[start..];
    let hlen = (*tcp.get(12)? >> 4) as usize * 4;
    if hlen < 20 {
        return None;
    }
    Some((tcp, hlen))
}

/// The payload bytes the frame holds (the snaplen may have cut them; the link layer's
/// padding after a short IP packet is not payload: at most `payload_len` bytes).
pub fn payload_prefix<'a>(frame: &'a [u8], seg: &Segment) -> Option<&'a [u8]> {
    let (tcp, hlen) = tcp_header(frame, seg)?;
    let rest = tcp.get(hlen..)?;
    Some(&rest[..rest.len().min(seg.payload_len as usize)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TcpPacket;

    #[test]
    fn the_payload_is_found_behind_any_link_layer() {
        for p in [
            TcpPacket::new("10.0.0.1:40000", "10.0.0.2:5001")
                .seq(7)
                .flags(TcpFlags::SYN)
                .mss(1460)
                .wscale(7)
                .payload_len(10),
            TcpPacket::new("10.0.0.1:40000", "10.0.0.2:5001")
                .seq(7)
                .flags(TcpFlags::SYN)
                .mss(1460)
                .wscale(7)
                .vlan(5)
                .sll()
                .payload_len(10),
            TcpPacket::new("[fd00::1]:40000", "[fd00::2]:5001")
                .seq(7)
                .flags(TcpFlags::SYN)
                .mss(1440)
                .wscale(7)
                .raw_ip()
                .payload_len(10),
        ] {
            let (link, bytes) = p.build();
            let seg = decode::decode(link, &bytes).unwrap();
            let payload = payload_prefix(&bytes, &seg).unwrap();
            assert_eq!(payload.len(), 10);
            // the bytes after the options: the option area ends where the payload starts
            let end = bytes.len() - 10;
            assert_eq!(&bytes[end - 4..end], &[1, 3, 3, 7]);
        }
    }
}
