//! Shared by the plot and report tests: a synthetic bulk flow written as a pcap with the
//! library's testkit, temporary directories, and running the `bdpscope` binary.
#![allow(dead_code)]

use bdpscope::capture::PcapWriter;
use bdpscope::decode::TcpFlags;
use bdpscope::testkit::TcpPacket;
use bdpscope::time::Timestamp;
use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const CLIENT: &str = "10.0.0.1:40000";
pub const SERVER: &str = "10.0.0.2:5001";

/// The shape of the synthetic download (server -> client), captured next to the server.
#[derive(Clone, Copy, Debug)]
pub struct Flow {
    pub segments: u64,
    pub mss: u32,
    /// Round-trip time (ns) and bottleneck rate (bit/s).
    pub rtt_ns: i64,
    pub rate_bps: f64,
    /// Receive window in bytes (advertised with window scale 7).
    pub rwnd: u32,
    /// Re-send this segment once (a retransmission), if any.
    pub retransmit: Option<u64>,
    /// Advertise a zero window for a while after this segment is acknowledged.
    pub zero_window_after: Option<u64>,
    /// Capture headers only (as `tcpdump -s 128`): small files for long flows.
    pub headers_only: bool,
}

impl Default for Flow {
    fn default() -> Self {
        Flow {
            segments: 2000,
            mss: 1448,
            rtt_ns: 40_000_000,
            rate_bps: 20e6,
            rwnd: 64 * 1024,
            retransmit: Some(300),
            zero_window_after: Some(1200),
            headers_only: false,
        }
    }
}

const WSCALE: u8 = 7;

/// The client's timestamp clock: milliseconds.
fn client_ts(t: i64) -> u32 {
    (t / 1_000_000) as u32
}

/// Writes the flow as a pcap into `out`; returns the number of records written.
pub fn write_flow<W: Write>(out: W, f: Flow) -> u64 {
    let syn = TcpPacket::new(CLIENT, SERVER)
        .seq(1000)
        .flags(TcpFlags::SYN)
        .mss(1460)
        .sack_perm()
        .ts(1, 0)
        .wscale(WSCALE);
    let (link, _) = syn.build();
    let mut w = PcapWriter::new(out, link, 65535, true, false).expect("pcap header");
    let mut n = 0u64;
    let mut put = |w: &mut PcapWriter<W>, t: i64, p: &TcpPacket| {
        let (_, bytes) = p.build();
        w.write_packet(Timestamp::from_nanos(t), &bytes, p.wire_len() as u32)
            .expect("write");
        n += 1;
    };
    let t0: i64 = 1_700_000_000_000_000_000;
    let (c_isn, s_isn) = (1000u32, 50_000u32);
    let raw_win = |bytes: u32| -> u16 { (bytes >> WSCALE).min(65535) as u16 };
    // Capture next to the server: the client's answers arrive one RTT after what they answer.
    put(&mut w, t0, &syn);
    let synack = TcpPacket::new(SERVER, CLIENT)
        .seq(s_isn)
        .ack(c_isn + 1)
        .flags(TcpFlags::SYN | TcpFlags::ACK)
        .mss(1460)
        .sack_perm()
        .ts(1, 1)
        .wscale(WSCALE)
        .window(65535);
    put(&mut w, t0 + 100_000, &synack);
    let mut now = t0 + 100_000 + f.rtt_ns;
    let req = TcpPacket::new(CLIENT, SERVER)
        .seq(c_isn + 1)
        .ack(s_isn + 1)
        .window(raw_win(f.rwnd))
        .ts(2, 1)
        .psh()
        .payload_len(100);
    put(&mut w, now, &req);
    let c_nxt = c_isn + 101;
    let seg_ns = ((f.mss as f64 + 66.0) * 8.0 / f.rate_bps * 1e9) as i64;
    let mut link_free = now;
    // ACKs on their way back: (arrival time, acked segment count, window in bytes, the
    // TSval they echo).
    let mut acks: VecDeque<(i64, u64, u32, u32)> = VecDeque::new();
    let (mut una, mut nxt) = (0u64, 0u64);
    let mut wnd = f.rwnd;
    let mut zero_until: Option<i64> = None;
    let mut tsval = 10u32;
    while una < f.segments {
        let can_send = nxt < f.segments && (nxt + 1) * f.mss as u64 <= una * f.mss as u64 + wnd as u64;
        let next_ack = acks.front().map(|a| a.0);
        let send_at = link_free.max(now);
        if can_send && next_ack.is_none_or(|a| send_at < a) {
            let seq = s_isn + 1 + (nxt * f.mss as u64) as u32;
            tsval += 1;
            let p = TcpPacket::new(SERVER, CLIENT)
                .seq(seq)
                .ack(c_nxt)
                .window(raw_win(256 * 1024))
                .ts(tsval, 2)
                .payload_len(f.mss as usize)
                .captured_payload(if f.headers_only { 0 } else { f.mss as usize });
            put(&mut w, send_at, &p);
            nxt += 1;
            link_free = send_at + seg_ns;
            now = send_at;
            // The receiver acknowledges every second segment (and the last).
            if nxt % 2 == 0 || nxt == f.segments {
                let arrive = send_at + seg_ns + f.rtt_ns;
                if f.zero_window_after.is_some_and(|z| nxt >= z) && zero_until.is_none() {
                    // The receiving application stalls: the window is zero for 3 RTTs.
                    zero_until = Some(arrive + 3 * f.rtt_ns);
                    push_sorted(&mut acks, (arrive + 3 * f.rtt_ns, nxt, f.rwnd, tsval));
                }
                let win = if zero_until.is_some_and(|z| arrive < z) {
                    0
                } else {
                    f.rwnd
                };
                push_sorted(&mut acks, (arrive, nxt, win, tsval));
            }
            if f.retransmit == Some(nxt) {
                let seq = s_isn + 1 + ((nxt - 5) * f.mss as u64) as u32;
                let p = TcpPacket::new(SERVER, CLIENT)
                    .seq(seq)
                    .ack(c_nxt)
                    .window(raw_win(256 * 1024))
                    .ts(tsval, 2)
                    .payload_len(f.mss as usize)
                    .captured_payload(if f.headers_only { 0 } else { f.mss as usize });
                put(&mut w, link_free, &p);
                link_free += seg_ns;
            }
            continue;
        }
        let Some((t, a, win, echo)) = acks.pop_front() else {
            break;
        };
        now = now.max(t);
        una = una.max(a);
        wnd = win;
        let ack_no = s_isn + 1 + (una * f.mss as u64) as u32;
        let p = TcpPacket::new(CLIENT, SERVER)
            .seq(c_nxt)
            .ack(ack_no)
            .window(raw_win(win))
            .ts(client_ts(t), echo);
        put(&mut w, t, &p);
    }
    let end = s_isn + 1 + (f.segments * f.mss as u64) as u32;
    now += 1_000_000;
    put(
        &mut w,
        now,
        &TcpPacket::new(SERVER, CLIENT)
            .seq(end)
            .ack(c_nxt)
            .fin()
            .window(512)
            .ts(tsval + 1, 2),
    );
    let t = now + f.rtt_ns;
    put(
        &mut w,
        t,
        &TcpPacket::new(CLIENT, SERVER)
            .seq(c_nxt)
            .ack(end + 1)
            .fin()
            .window(512)
            .ts(client_ts(t), tsval + 1),
    );
    put(
        &mut w,
        t + 100_000,
        &TcpPacket::new(SERVER, CLIENT)
            .seq(end + 1)
            .ack(c_nxt + 1)
            .window(512)
            .ts(tsval + 2, client_ts(t)),
    );
    w.into_inner().flush().expect("flush");
    n
}

fn push_sorted(q: &mut VecDeque<(i64, u64, u32, u32)>, a: (i64, u64, u32, u32)) {
    // Nearly always at the end: look from there.
    let at = q.iter().rposition(|b| b.0 <= a.0).map_or(0, |i| i + 1);
    q.insert(at, a);
}

/// A fresh, empty directory under the system's temporary directory.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("bdpscope-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// Writes the default synthetic flow into `dir`; returns its path.
pub fn synthetic_capture(dir: &Path, f: Flow) -> PathBuf {
    let p = dir.join("synthetic.pcap");
    let file = std::io::BufWriter::new(std::fs::File::create(&p).expect("create capture"));
    write_flow(file, f);
    p
}

pub fn bdpscope(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bdpscope"))
        .args(args)
        .output()
        .expect("run bdpscope")
}
