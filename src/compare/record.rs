//! What `compare` keeps of each connection of one capture: the handshake segments with
//! their options (and the NOP runs of their option areas), per-direction counters, and a
//! compact fingerprint of the first segments of each direction. Memory is bounded: at most
//! `MAX_FPS_PER_DIR` fingerprints per direction and `MAX_FPS_TOTAL` per capture; beyond
//! them only the counters grow.

use crate::capture::{CaptureReader, Frame};
use crate::decode::{self, Segment, TcpFlags};
use crate::flow::{Dir, Endpoint, FlowTable, TableConfig, Tracked};
use crate::middlebox::layout::longest_nop_run;
use crate::seq::SeqNum;
use crate::tcp::rtt::End;
use crate::tcp::Connection;

/// Fingerprints kept per direction of one connection.
pub const MAX_FPS_PER_DIR: usize = 65_536;
/// Fingerprints kept over all connections of one capture (about 24 bytes each).
pub const MAX_FPS_TOTAL: usize = 2_000_000;

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
    loop {
        match reader.next_frame() {
            Ok(Some(frame)) => b.on_frame(&frame),
            Ok(None) => break,
            Err(e) => {
                b.side.warnings.push(e.to_string());
                break;
            }
        }
    }
    b.side.format = reader.format().container().as_str().to_string();
    b.finish()
}

/// Builds a `Side` frame by frame.
pub struct Builder {
    side: Side,
    table: FlowTable<Entry>,
    done: Vec<Box<Entry>>,
    fps_total: usize,
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
            fps_total: 0,
        }
    }

    pub fn on_frame(&mut self, frame: &Frame<'_>) {
        self.side.packets += 1;
        let Ok(seg) = decode::decode(frame.link, frame.data) else {
            return;
        };
        self.side.tcp_segments += 1;
        let (entry, dir, replaced) = self.table.lookup(&seg, frame.number, frame.ts);
        entry.conn.on_segment(&seg, dir, frame.number, frame.ts);
        record(&mut entry.rec, &seg, dir, frame, &mut self.fps_total);
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

fn record(rec: &mut ConnRecord, seg: &Segment, dir: Dir, frame: &Frame<'_>, fps_total: &mut usize) {
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
            nop_run: option_area(frame.data, seg).map(longest_nop_run),
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
    if d.fps.len() < MAX_FPS_PER_DIR && *fps_total < MAX_FPS_TOTAL {
        *fps_total += 1;
        d.fps.push(Fp {
            t,
            seq: seg.seq.0,
            ack: if f.ack() { seg.ack.0 } else { 0 },
            len: seg.payload_len.min(u16::MAX as u32) as u16,
            flags: f.0 & (TcpFlags::SYN | TcpFlags::FIN | TcpFlags::RST | TcpFlags::ACK),
            win: seg.window,
            opts: seg.options.timestamps.is_some() as u8 | ((!seg.options.sack.is_empty()) as u8) << 1,
        });
    } else {
        d.unrecorded += 1;
    }
}

/// The TCP option bytes of a decoded segment within its captured frame: the TCP header is
/// found by its ports, sequence and acknowledgment numbers (12 bytes no other header of
/// the frame holds), whatever the link and IP layers in front of it.
pub fn option_area<'a>(frame: &'a [u8], seg: &Segment) -> Option<&'a [u8]> {
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
    tcp.get(20..hlen.min(tcp.len()))
}

/// Sequence-number helpers for fingerprints.
pub fn rel(n: u32, base: u32) -> u32 {
    SeqNum(n).relative_to(SeqNum(base))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TcpPacket;

    #[test]
    fn the_option_area_is_found_behind_any_link_layer() {
        for p in [
            TcpPacket::new("10.0.0.1:40000", "10.0.0.2:5001")
                .seq(7)
                .flags(TcpFlags::SYN)
                .mss(1460)
                .wscale(7),
            TcpPacket::new("10.0.0.1:40000", "10.0.0.2:5001")
                .seq(7)
                .flags(TcpFlags::SYN)
                .mss(1460)
                .wscale(7)
                .vlan(5)
                .sll(),
            TcpPacket::new("[fd00::1]:40000", "[fd00::2]:5001")
                .seq(7)
                .flags(TcpFlags::SYN)
                .mss(1440)
                .wscale(7)
                .raw_ip(),
        ] {
            let (link, bytes) = p.build();
            let seg = decode::decode(link, &bytes).unwrap();
            let area = option_area(&bytes, &seg).unwrap();
            assert_eq!(&area[4..], &[1, 3, 3, 7]);
        }
    }
}
