//! `compare` on hand-built pairs of captures: one connection described once, rendered as
//! each point sees it (addresses, ISNs, handshake options, the segments that reach it,
//! what its payload holds).

use super::*;
use crate::capture::{Frame, LinkType};
use crate::decode::TcpFlags;
use crate::summary::HsSegment;
use crate::testkit::TcpPacket;
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

/// What the data segments carry.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Fill {
    /// testkit's readable pattern: the alphabet over and over.
    Pattern,
    /// Zeros, as iperf and the lab's sender write.
    Zeros,
    /// Bytes no other connection has (a hash of the seed, the direction and the offset):
    /// compressed or encrypted content.
    Random(u64),
}

impl Fill {
    /// The payload of a segment of `len` bytes at relative offset `seq` of a direction.
    fn bytes(self, c2s: bool, seq: u32, len: usize) -> Option<Vec<u8>> {
        match self {
            Fill::Pattern => None,
            Fill::Zeros => Some(vec![0; len]),
            Fill::Random(seed) => Some(
                (0..len as u64)
                    .map(|k| {
                        // splitmix64 of (seed, direction, offset)
                        let mut z = seed ^ ((c2s as u64) << 40) ^ (seq as u64 + k);
                        z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
                        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                        (z ^ (z >> 31)) as u8
                    })
                    .collect(),
            ),
        }
    }
}

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
    pub fill: Fill,
    /// Payload bytes the capture keeps of each data segment (a snaplen), or all.
    pub captured: Option<usize>,
}

impl View {
    pub fn client_side() -> View {
        View {
            client: "10.0.0.1:40000".into(),
            server: "10.0.0.2:5001".into(),
            // Drawn, as RFC 6528 ISNs are (a round number proves little: `evidence::value_bits`).
            cisn: 2_463_534_242,
            sisn: 3_181_209_641,
            syn: LINUX,
            syn_ack: LINUX,
            shift_us: 0,
            clock_us: 0,
            missing: Vec::new(),
            fill: Fill::Pattern,
            captured: None,
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
            .window(s.win);
        p = match view.fill.bytes(s.c2s, s.seq, s.len) {
            Some(b) => p.payload(&b),
            None => p.payload_len(s.len),
        };
        if let Some(k) = view.captured {
            p = p.captured_payload(k);
        }
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
    assert!(c.in_common);
    let k = one(&c);
    assert_eq!(
        (k.matched_by.as_str(), k.match_strength.as_str()),
        ("4-tuple and ISN", "proven")
    );
    assert_eq!((k.evidence_bits, k.evidence_needed_bits), (64.0, 20.0));
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
fn nat_keeping_the_server_isn_is_matched_by_that_isn() {
    let segs = download(30);
    let mut b = View::server_side(30_000);
    b.client = "192.0.2.7:61000".into();
    b.cisn = 777_777_777;
    let c = compare(&side("a", &segs, &View::client_side()), &side("b", &segs, &b));
    assert!(c.in_common);
    let k = one(&c);
    assert_eq!((k.matched_by.as_str(), k.match_strength.as_str()), ("ISN", "proven"));
    // one space's ISN: 32 bits, against 20 for the one pair of connections tried
    assert_eq!((k.evidence_bits, k.evidence_needed_bits), (32.0, 20.0));
    let kinds: Vec<&str> = k.differences.iter().map(|d| d.kind.as_str()).collect();
    assert!(
        kinds.contains(&"address-rewritten") && kinds.contains(&"isn-shifted"),
        "{kinds:?}"
    );
    assert!(k.middlebox.is_empty());
    assert_eq!((k.c2s.lost, k.s2c.lost), (0, 0));
    assert_eq!(k.c2s.matched as usize, segs.iter().filter(|s| s.c2s).count());
}

/// NAT and both ISNs rewritten: only the payload can tell the connection.
fn rewritten(b: &mut View) {
    b.client = "192.0.2.7:61000".into();
    b.server = "198.51.100.9:443".into();
    b.cisn = 777_777_777;
    b.sisn = 3_000_000_000;
}

#[test]
fn nat_and_both_isns_rewritten_are_matched_by_the_payload_and_findings_stay_certain() {
    let segs = download(30);
    let mut a = View::client_side();
    a.fill = Fill::Random(7);
    let mut b = View::server_side(30_000);
    b.fill = Fill::Random(7);
    rewritten(&mut b);
    b.syn = Hs {
        ws: None,
        nop_ws: true,
        ..LINUX
    };
    b.syn_ack = Hs { ws: None, ..LINUX };
    a.syn_ack = b.syn_ack;
    let c = compare(&side("a", &segs, &a), &side("b", &segs, &b));
    assert!(c.in_common, "{c:#?}");
    let k = one(&c);
    assert_eq!(
        (k.matched_by.as_str(), k.match_strength.as_str()),
        ("payload", "proven")
    );
    assert!(k.evidence_bits >= k.evidence_needed_bits);
    assert!(k.match_evidence.contains("s2c payload samples"), "{}", k.match_evidence);
    let kinds: Vec<&str> = k.differences.iter().map(|d| d.kind.as_str()).collect();
    assert_eq!(kinds.iter().filter(|&&k| k == "isn-shifted").count(), 2, "{kinds:?}");
    assert_eq!(
        kinds.iter().filter(|&&k| k == "address-rewritten").count(),
        2,
        "{kinds:?}"
    );
    // every segment is paired through the offsets the payload gave
    assert_eq!(k.c2s.matched as usize, segs.iter().filter(|s| s.c2s).count());
    assert_eq!(k.s2c.matched as usize, segs.iter().filter(|s| !s.c2s).count());
    let m: Vec<(&str, &str, &str)> = k
        .middlebox
        .iter()
        .map(|m| (m.kind.as_str(), m.direction.as_str(), m.confidence.as_str()))
        .collect();
    assert_eq!(m, vec![("wscale-stripped", "syn", "certain")]);
}

#[test]
fn a_handshake_missing_at_one_point_is_matched_by_the_absolute_numbers() {
    let segs = download(30);
    let mut a = View::client_side();
    a.missing = vec![0, 1];
    let c = compare(&side("a", &segs, &a), &side("b", &segs, &View::server_side(30_000)));
    let k = one(&c);
    assert_eq!(
        (k.matched_by.as_str(), k.match_strength.as_str()),
        ("sequence numbers", "proven")
    );
    assert!(k.differences.is_empty(), "{:?}", k.differences);
    // ... and with the addresses translated and the ISNs rewritten, by the payload only
    let mut a = View::client_side();
    a.missing = vec![0, 1];
    a.fill = Fill::Random(3);
    let mut b = View::server_side(30_000);
    b.fill = Fill::Random(3);
    rewritten(&mut b);
    let c = compare(&side("a", &segs, &a), &side("b", &segs, &b));
    let k = one(&c);
    assert_eq!(k.matched_by, "payload");
    assert!(!k.match_evidence.contains("ISN"), "{}", k.match_evidence);
    // every segment but the handshake A lacks; the client's space has no payload beyond
    // the request (a first segment, no evidence): its offset comes from the
    // acknowledgment numbers of the paired s2c segments
    assert_eq!(k.s2c.matched as usize, segs.iter().filter(|s| !s.c2s).count() - 1);
    assert_eq!(k.c2s.matched as usize, segs.iter().filter(|s| s.c2s).count() - 1);
}

#[test]
fn without_usable_payload_rewritten_connections_stay_unmatched() {
    let segs = download(30);
    for (fill, captured, note) in [
        (Fill::Zeros, None, "fill"),
        (Fill::Random(7), Some(0), "snaplen"),
        (Fill::Pattern, None, ""),
    ] {
        let mut a = View::client_side();
        a.fill = fill;
        a.captured = captured;
        let mut b = View::server_side(30_000);
        b.fill = fill;
        b.captured = captured;
        rewritten(&mut b);
        let c = compare(&side("a", &segs, &a), &side("b", &segs, &b));
        // (testkit's pattern starts every segment with the same letters: one content,
        // fewer distinct samples than evidence needs)
        assert!(!c.in_common, "{c:#?}");
        assert!(c.connections.is_empty(), "{c:#?}");
        assert!(c.notes.iter().any(|n| n.contains(note)), "{:?}", c.notes);
        assert!(c.summary.starts_with("no connection in common"), "{}", c.summary);
    }
}

#[test]
fn a_copy_on_other_ports_and_isns_later_is_not_the_same_connection() {
    // The lab's case: bulk transfers of zeros, whose segment lengths sit at the same
    // relative offsets in any two runs, other ports, 11 s apart.
    let segs = download(40);
    let mut a = View::client_side();
    a.fill = Fill::Zeros;
    let mut b = View::server_side(30_000);
    b.fill = Fill::Zeros;
    b.client = "10.0.0.1:40123".into();
    b.cisn = 123_456;
    b.sisn = 654_321;
    b.clock_us = 11_000_000;
    let c = compare(&side("a", &segs, &a), &side("b", &segs, &b));
    assert!(!c.in_common && c.connections.is_empty(), "{c:#?}");
    assert!(c.connections.iter().all(|k| k.middlebox.is_empty()));
}

#[test]
fn the_same_tuple_at_the_same_time_with_rewritten_isns_is_only_likely() {
    let segs = download(30);
    let mut a = View::client_side();
    a.fill = Fill::Zeros;
    let mut b = View::server_side(30_000);
    b.fill = Fill::Zeros;
    b.cisn = 42;
    b.sisn = 4242;
    b.syn = Hs {
        ws: None,
        nop_ws: true,
        ..LINUX
    };
    b.syn_ack = Hs { ws: None, ..LINUX };
    a.syn_ack = b.syn_ack;
    let c = compare(&side("a", &segs, &a), &side("b", &segs, &b));
    assert!(!c.in_common, "a likely match is not a connection in common");
    let k = one(&c);
    assert_eq!(
        (k.matched_by.as_str(), k.match_strength.as_str()),
        ("4-tuple and time", "likely")
    );
    assert!(
        c.summary.starts_with("no connection proven in common (1 likely)"),
        "{}",
        c.summary
    );
    let m = &k.middlebox[0];
    assert_eq!((m.kind.as_str(), m.confidence.as_str()), ("wscale-stripped", "likely"));
    assert!(
        m.evidence.contains("matched by 4-tuple and time only"),
        "{}",
        m.evidence
    );
    // the same, 11 s later on B's clock: not alive at both points at once, no match
    b.clock_us = 11_000_000;
    let c = compare(&side("a", &segs, &a), &side("b", &segs, &b));
    assert!(c.connections.is_empty(), "{c:#?}");
}

#[test]
fn isns_in_common_are_refused_when_no_clock_offset_explains_the_times() {
    // B holds the connection's segments, but every other one 100 ms early and the rest
    // 100 ms late, in both directions: whichever point is nearer the client, some
    // segments would have travelled backwards in time.
    let segs = download(20);
    let a = side("a", &segs, &View::client_side());
    let bv = View::server_side(0);
    let shifted: Vec<Seg> = segs
        .iter()
        .enumerate()
        .map(|(i, s)| Seg {
            t_us: s.t_us + if i % 2 == 0 { -100_000 } else { 100_000 },
            ..*s
        })
        .collect();
    let c = compare(&a, &side("b", &shifted, &bv));
    assert!(!c.in_common && c.connections.is_empty(), "{c:#?}");
    assert_eq!(c.rejected.len(), 1, "{:?}", c.rejected);
    assert!(c.rejected[0].contains("no clock offset explains"), "{}", c.rejected[0]);
}

#[test]
fn content_two_connections_share_and_first_segments_prove_nothing() {
    // A's one connection and B's two carry the same random payload: in B it is common
    // content, so it identifies neither of B's connections.
    let segs = download(30);
    let mut a = View::client_side();
    a.fill = Fill::Random(9);
    let mut b1 = View::server_side(30_000);
    b1.fill = Fill::Random(9);
    rewritten(&mut b1);
    let mut b2 = b1.clone();
    b2.client = "192.0.2.8:61001".into();
    b2.cisn = 5;
    b2.sisn = 6;
    let mut b = side("b", &segs, &b1);
    b.conns.extend(side("b", &segs, &b2).conns);
    let c = compare(&side("a", &segs, &a), &b);
    assert!(!c.in_common && c.connections.is_empty(), "{c:#?}");
    // Only the first data segment of each direction in common (a protocol's greeting):
    // nothing either.
    let mut other = View::server_side(30_000);
    other.fill = Fill::Random(10);
    rewritten(&mut other);
    let first_same: Vec<Seg> = segs.clone();
    let mut b = side("b", &first_same, &other);
    let greeting = side("b", &segs, &{
        let mut v = other.clone();
        v.fill = Fill::Random(9);
        v
    });
    // B's first segments of each direction copied from a capture of A's content
    for d in 0..2 {
        let src = &greeting.conns[0].dirs[d].samples[0];
        b.conns[0].dirs[d].samples[0] = *src;
    }
    let c = compare(&side("a", &segs, &a), &b);
    assert!(!c.in_common && c.connections.is_empty(), "{c:#?}");
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
    assert!(!c.in_common);
    assert_eq!((c.only_in_a.len(), c.only_in_b.len()), (1, 1));
}
