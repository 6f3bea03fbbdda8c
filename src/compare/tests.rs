//! `compare` on hand-built pairs of captures: one connection described once, rendered as
//! each point sees it (addresses, ISNs, handshake options, the segments that reach it).

use super::*;
use crate::capture::{Frame, LinkType};
use crate::decode::TcpFlags;
use crate::testkit::TcpPacket;
use crate::summary::HsSegment;
use crate::time::Timestamp;

/// One segment of the connection, in relative numbers, at the client's clock.
#[derive(Clone, Copy)]
pub struct Seg {
    pub t_us: i64,
    pub c2s: bool,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub len: usize,
    pub win: u16,
}

/// Handshake options as written on the wire; `nop_ws` writes 4 NOPs where the window-scale
/// option was (a stripped option).
#[derive(Clone, Copy)]
pub struct Hs {
    pub mss: u16,
    pub ws: Option<u8>,
    pub sack: bool,
    pub ts: bool,
    pub nop_ws: bool,
}

pub const LINUX: Hs = Hs {
    mss: 1460,
    ws: Some(7),
    sack: true,
    ts: true,
    nop_ws: false,
};

/// How one point sees the connection.
#[derive(Clone)]
pub struct View {
    pub client: String,
    pub server: String,
    pub cisn: u32,
    pub sisn: u32,
    pub syn: Hs,
    pub syn_ack: Hs,
    /// Added to c2s times, subtracted from s2c times (the point is further from the client).
    pub shift_us: i64,
    /// Clock offset of this point.
    pub clock_us: i64,
    /// Indices of segments this point does not see.
    pub missing: Vec<usize>,
}

impl View {
    pub fn client_side() -> View {
        View {
            client: "10.0.0.1:40000".into(),
            server: "10.0.0.2:5001".into(),
            cisn: 1_000_000,
            sisn: 5_000_000,
            syn: LINUX,
            syn_ack: LINUX,
            shift_us: 0,
            clock_us: 0,
            missing: Vec::new(),
        }
    }
    pub fn server_side(owd_us: i64) -> View {
        View {
            shift_us: owd_us,
            ..View::client_side()
        }
    }
}

fn hs_packet(mut p: TcpPacket, h: Hs, tsval: u32) -> TcpPacket {
    p = p.mss(h.mss);
    if h.sack {
        p = p.sack_perm();
    }
    if h.ts {
        p = p.ts(tsval, 0);
    }
    match (h.ws, h.nop_ws) {
        (_, true) => p.raw_options(&[1, 1, 1, 1]),
        (Some(w), false) => p.wscale(w),
        (None, false) => p,
    }
}

/// A download: handshake, a request, `n` data segments of 1448 bytes, each ACKed.
pub fn download(n: u32) -> Vec<Seg> {
    let mut v = vec![
        Seg {
            t_us: 0,
            c2s: true,
            seq: 0,
            ack: 0,
            flags: TcpFlags::SYN,
            len: 0,
            win: 65535,
        },
        Seg {
            t_us: 60_000,
            c2s: false,
            seq: 0,
            ack: 1,
            flags: TcpFlags::SYN | TcpFlags::ACK,
            len: 0,
            win: 65160,
        },
        Seg {
            t_us: 60_050,
            c2s: true,
            seq: 1,
            ack: 1,
            flags: TcpFlags::ACK,
            len: 0,
            win: 502,
        },
        Seg {
            t_us: 60_100,
            c2s: true,
            seq: 1,
            ack: 1,
            flags: TcpFlags::ACK | TcpFlags::PSH,
            len: 100,
            win: 502,
        },
    ];
    for i in 0..n {
        let t = 121_000 + i as i64 * 250;
        v.push(Seg {
            t_us: t,
            c2s: false,
            seq: 1 + i * 1448,
            ack: 101,
            flags: TcpFlags::ACK,
            len: 1448,
            win: 509,
        });
        v.push(Seg {
            t_us: t + 20,
            c2s: true,
            seq: 101,
            ack: 1 + (i + 1) * 1448,
            flags: TcpFlags::ACK,
            len: 0,
            win: 502,
        });
    }
    v
}

/// The capture at one point.
pub fn side(name: &str, segs: &[Seg], view: &View) -> Side {
    let mut frames: Vec<(i64, TcpPacket)> = Vec::new();
    for (i, s) in segs.iter().enumerate() {
        if view.missing.contains(&i) {
            continue;
        }
        let (src, dst, isn, peer_isn) = if s.c2s {
            (&view.client, &view.server, view.cisn, view.sisn)
        } else {
            (&view.server, &view.client, view.sisn, view.cisn)
        };
        let mut p = TcpPacket::new(src, dst)
            .seq(isn.wrapping_add(s.seq))
            .flags(s.flags)
            .window(s.win)
            .payload_len(s.len);
        if s.flags & TcpFlags::ACK != 0 {
            p = p.ack(peer_isn.wrapping_add(s.ack));
        }
        if s.flags & TcpFlags::SYN != 0 {
            p = hs_packet(p, if s.c2s { view.syn } else { view.syn_ack }, 100 + i as u32);
        }
        let t = s.t_us + if s.c2s { view.shift_us } else { -view.shift_us } + view.clock_us;
        frames.push((t, p));
    }
    frames.sort_by_key(|f| f.0);
    let mut b = Builder::new(name);
    for (n, (t, p)) in frames.iter().enumerate() {
        let (link, bytes) = p.build();
        let frame = Frame {
            number: n as u64 + 1,
            ts: Timestamp(1_700_000_000_000_000_000 + t * 1000),
            link,
            wire_len: p.wire_len() as u32,
            data: &bytes,
            interface: 0,
        };
        assert_eq!(frame.link, LinkType::ETHERNET);
        b.on_frame(&frame);
    }
    b.finish()
}

fn one(c: &Comparison) -> &ConnComparison {
    assert_eq!(c.connections.len(), 1, "{c:#?}");
    &c.connections[0]
}

#[test]
fn identical_captures_show_no_effects_and_the_delay_between_the_points() {
    let segs = download(50);
    let c = compare(
        &side("a", &segs, &View::client_side()),
        &side("b", &segs, &View::server_side(30_000)),
    );
    let k = one(&c);
    assert_eq!(k.matched_by, "4-tuple and ISN");
    assert_eq!(k.nearer_client, "a");
    assert!(k.differences.is_empty(), "{:?}", k.differences);
    assert!(k.middlebox.is_empty());
    assert_eq!(k.verdict, "no middlebox effects seen");
    assert_eq!(k.c2s.travel, "a->b");
    assert_eq!(k.c2s.one_way_delay_ms, Some(30.0));
    assert_eq!(k.s2c.one_way_delay_ms, Some(30.0));
    assert_eq!(k.round_trip_between_points_ms, Some(60.0));
    assert_eq!((k.c2s.lost, k.s2c.lost), (0, 0));
    assert!(c.summary.ends_with("no middlebox effects seen"));
}

#[test]
fn a_window_scale_stripped_from_the_syn_with_nops_in_its_place() {
    let segs = download(20);
    let mut b = View::server_side(30_000);
    b.syn = Hs {
        ws: None,
        nop_ws: true,
        ..LINUX
    };
    b.syn_ack = Hs { ws: None, ..LINUX }; // the server never saw it, never answers it
    let mut a = View::client_side();
    a.syn_ack = b.syn_ack;
    let c = compare(&side("a", &segs, &a), &side("b", &segs, &b));
    let k = one(&c);
    assert_eq!(k.middlebox.len(), 1, "{:?}", k.middlebox);
    let m = &k.middlebox[0];
    assert_eq!(
        (m.kind.as_str(), m.direction.as_str(), m.confidence.as_str()),
        ("wscale-stripped", "syn", "certain")
    );
    assert!(m.evidence.contains("4 NOPs"), "{}", m.evidence);
    assert_eq!(k.differences.len(), 1);
    // the same pair the other way round: B first
    let c = compare(&side("b", &segs, &b), &side("a", &segs, &a));
    let k = one(&c);
    assert_eq!(k.nearer_client, "b");
    assert_eq!(k.middlebox[0].direction, HsSegment::Syn);
}

#[test]
fn mss_clamped_both_ways_is_one_finding_in_both_directions() {
    let segs = download(20);
    let mut b = View::server_side(30_000);
    b.syn = Hs { mss: 1200, ..LINUX };
    let mut a = View::client_side();
    a.syn_ack = Hs { mss: 1200, ..LINUX };
    let c = compare(&side("a", &segs, &a), &side("b", &segs, &b));
    let k = one(&c);
    assert_eq!(k.middlebox.len(), 1, "{:?}", k.middlebox);
    assert_eq!(
        (k.middlebox[0].kind.as_str(), k.middlebox[0].direction.as_str()),
        ("mss-clamped", "both")
    );
}

#[test]
fn nat_and_isn_rewriting_are_matched_by_the_data_and_reported() {
    let segs = download(30);
    let mut b = View::server_side(30_000);
    b.client = "192.0.2.7:61000".into();
    b.cisn = 777_777_777;
    let c = compare(&side("a", &segs, &View::client_side()), &side("b", &segs, &b));
    let k = one(&c);
    assert_eq!(k.matched_by, "segment sequence");
    let kinds: Vec<&str> = k.differences.iter().map(|d| d.kind.as_str()).collect();
    assert!(
        kinds.contains(&"address-rewritten") && kinds.contains(&"isn-shifted"),
        "{kinds:?}"
    );
    assert!(k.middlebox.is_empty());
    assert_eq!((k.c2s.lost, k.s2c.lost), (0, 0));
    assert_eq!(k.c2s.matched as usize, segs.iter().filter(|s| s.c2s).count());
}

#[test]
fn segments_lost_between_the_points_are_counted_per_direction() {
    let segs = download(40);
    // s2c data segments 10 and 11 (indices 4 + 2*10, 4 + 2*11) are lost after the server
    // side point: the client-side capture misses them (and the client's ACKs stay as built)
    let mut a = View::client_side();
    a.missing = vec![24, 26];
    let c = compare(&side("a", &segs, &a), &side("b", &segs, &View::server_side(30_000)));
    let k = one(&c);
    assert_eq!(k.s2c.travel, "b->a");
    assert_eq!(k.s2c.lost, 2);
    assert_eq!(k.c2s.lost, 0);
    assert!(k.verdict.contains("2 segment(s) lost"), "{}", k.verdict);
}

#[test]
fn skewed_clocks_give_the_round_trip_but_no_one_way_delay() {
    let segs = download(20);
    let mut b = View::server_side(30_000);
    b.clock_us = -100_000;
    let c = compare(&side("a", &segs, &View::client_side()), &side("b", &segs, &b));
    let k = one(&c);
    assert_eq!(k.nearer_client, "a");
    assert_eq!(k.c2s.one_way_delay_ms, None);
    assert_eq!(k.round_trip_between_points_ms, Some(60.0));
    assert_eq!(c.clock_offset_ms, Some(-100.0));
}

#[test]
fn unrelated_connections_stay_unmatched() {
    let segs = download(20);
    let mut b = View::server_side(30_000);
    b.client = "10.9.9.9:1234".into();
    b.server = "10.9.9.8:80".into();
    b.cisn = 42;
    b.sisn = 43;
    let other: Vec<Seg> = download(20)
        .into_iter()
        .map(|s| Seg {
            len: if s.len > 0 { s.len - 100 } else { 0 },
            ..s
        })
        .collect();
    let c = compare(&side("a", &segs, &View::client_side()), &side("b", &other, &b));
    assert!(c.connections.is_empty(), "{c:#?}");
    assert_eq!((c.only_in_a.len(), c.only_in_b.len()), (1, 1));
}
