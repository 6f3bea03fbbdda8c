//! Test scaffolding: hand-built segments (`testkit::TcpPacket`) fed through a real
//! `Connection` and the middlebox `Evidence`, then judged by `findings`.

use super::{all_findings, Evidence};
use crate::decode::{decode, TcpFlags};
use crate::flow::{Dir, Endpoint};
use crate::summary::MiddleboxFinding;
use crate::tcp::Connection;
use crate::testkit::TcpPacket;
use crate::time::{Span, Timestamp};

pub const CLIENT: &str = "10.0.0.1:40000";
pub const SERVER: &str = "10.0.0.2:5001";
pub const CISN: u32 = 1_000_000;
pub const SISN: u32 = 5_000_000;

/// Options of a Linux SYN: MSS, SACK-permitted, timestamps, window scale (any subset).
#[derive(Clone, Copy, Debug)]
pub struct Opts {
    pub mss: Option<u16>,
    pub sack: bool,
    pub ts: bool,
    pub ws: Option<u8>,
    /// NOPs written after SACK-permitted: where a middlebox overwrote an option.
    pub nops: usize,
}

impl Opts {
    pub const LINUX: Opts = Opts {
        mss: Some(1460),
        sack: true,
        ts: true,
        ws: Some(7),
        nops: 0,
    };

    pub fn ws(self, ws: Option<u8>) -> Opts {
        Opts { ws, ..self }
    }
    pub fn mss(self, mss: u16) -> Opts {
        Opts { mss: Some(mss), ..self }
    }
    pub fn no_sack(self) -> Opts {
        Opts { sack: false, ..self }
    }
    pub fn no_ts(self) -> Opts {
        Opts { ts: false, ..self }
    }
    /// The timestamps option overwritten with NOPs on the way (Linux xt_TCPOPTSTRIP).
    pub fn ts_nopped(self) -> Opts {
        Opts {
            ts: false,
            nops: 10,
            ..self
        }
    }
    /// The window-scale option overwritten with NOPs (its own NOP stays).
    pub fn ws_nopped(self) -> Opts {
        Opts {
            ws: None,
            nops: 4,
            ..self
        }
    }
    fn apply(self, mut p: TcpPacket, tsval: u32, tsecr: u32) -> TcpPacket {
        if let Some(m) = self.mss {
            p = p.mss(m);
        }
        if self.sack {
            p = p.sack_perm();
        }
        p = p.raw_options(&vec![1; self.nops]);
        if self.ts {
            p = p.ts(tsval, tsecr);
        }
        if let Some(w) = self.ws {
            p = p.wscale(w);
        }
        p
    }
}

/// A connection fed segment by segment, with a clock in microseconds.
pub struct Flow {
    pub conn: Connection,
    pub ev: Evidence,
    pub now_us: i64,
    frame: u64,
    client: std::net::SocketAddr,
}

fn ep(s: &str) -> Endpoint {
    let a: std::net::SocketAddr = s.parse().unwrap();
    Endpoint {
        addr: a.ip(),
        port: a.port(),
    }
}

impl Flow {
    pub fn new() -> Flow {
        Flow {
            conn: Connection::new(0, ep(CLIENT), ep(SERVER), true, 1, Timestamp(0)),
            ev: Evidence::default(),
            now_us: 1_000_000,
            frame: 0,
            client: CLIENT.parse().unwrap(),
        }
    }

    pub fn at_ms(&mut self, ms: f64) -> &mut Self {
        self.now_us = 1_000_000 + (ms * 1000.0) as i64;
        self
    }

    /// Feeds one segment at the current time.
    pub fn feed(&mut self, p: &TcpPacket) -> &mut Self {
        let (link, bytes) = p.build();
        let seg = decode(link, &bytes).expect("testkit packets decode");
        let src = std::net::SocketAddr::new(seg.src, seg.src_port);
        let dir = if src == self.client { Dir::C2S } else { Dir::S2C };
        self.frame += 1;
        // A nanosecond capture (round stamps would make a coarse one).
        let ts = Timestamp(7) + Span::from_micros(self.now_us);
        let e = self.conn.on_segment(&seg, dir, self.frame, ts);
        self.ev.on_segment(&self.conn, &e);
        self
    }

    /// SYN from the client with these options and window.
    pub fn syn(&mut self, o: Opts, window: u16) -> &mut Self {
        let p = o.apply(
            TcpPacket::new(CLIENT, SERVER)
                .seq(CISN)
                .flags(TcpFlags::SYN)
                .window(window),
            100,
            0,
        );
        self.feed(&p)
    }

    /// SYN/ACK from the server.
    pub fn syn_ack(&mut self, o: Opts, window: u16) -> &mut Self {
        let p = o.apply(
            TcpPacket::new(SERVER, CLIENT)
                .seq(SISN)
                .ack(CISN + 1)
                .flags(TcpFlags::SYN | TcpFlags::ACK)
                .window(window),
            500,
            100,
        );
        self.feed(&p)
    }

    /// A segment from the client: relative seq/ack, payload, raw window, timestamps or not.
    pub fn c2s(&mut self, seq: u32, ack: u32, len: usize, window: u16, ts: Option<(u32, u32)>) -> &mut Self {
        let mut p = TcpPacket::new(CLIENT, SERVER)
            .seq(CISN + seq)
            .ack(SISN + ack)
            .window(window)
            .payload_len(len);
        if let Some((v, e)) = ts {
            p = p.ts(v, e);
        }
        self.feed(&p)
    }

    /// A segment from the server.
    pub fn s2c(&mut self, seq: u32, ack: u32, len: usize, window: u16, ts: Option<(u32, u32)>) -> &mut Self {
        let mut p = TcpPacket::new(SERVER, CLIENT)
            .seq(SISN + seq)
            .ack(CISN + ack)
            .window(window)
            .payload_len(len);
        if let Some((v, e)) = ts {
            p = p.ts(v, e);
        }
        self.feed(&p)
    }

    /// A bulk download seen next to the client: `segments` segments of `mss` bytes in
    /// bursts of `burst`, one round trip of `rtt_ms` apart; the client ACKs each segment at
    /// once with raw window `client_window`, the server's segments carry `server_window`.
    /// Timestamps when `ts`. Starts at the current time.
    #[allow(clippy::too_many_arguments)]
    pub fn download(
        &mut self,
        segments: u32,
        mss: u32,
        burst: u32,
        client_window: u16,
        server_window: u16,
        rtt_ms: f64,
        ts: bool,
    ) -> &mut Self {
        let mut t = self.now_us as f64 / 1000.0 - 1000.0;
        let mut sent = 0u32;
        let (mut sv, mut cv) = (1000u32, 100u32);
        while sent < segments {
            let n = burst.min(segments - sent);
            sv += 1;
            cv += 1;
            for i in 0..n {
                let seq = 1 + (sent + i) * mss;
                self.at_ms(t + i as f64 * 0.01);
                self.s2c(seq, 1, mss as usize, server_window, ts.then_some((sv, cv - 1)));
                self.at_ms(t + i as f64 * 0.01 + 0.005);
                self.c2s(1, seq + mss, 0, client_window, ts.then_some((cv, sv)));
            }
            t += rtt_ms;
            sent += n;
        }
        self
    }

    pub fn findings(&self) -> Vec<MiddleboxFinding> {
        all_findings(&self.conn, &self.ev)
    }
}

/// True when some finding has this kind and direction (any confidence).
pub fn has(f: &[MiddleboxFinding], kind: &str, direction: &str) -> bool {
    f.iter()
        .any(|m| m.kind.as_str() == kind && m.direction.as_str() == direction)
}
