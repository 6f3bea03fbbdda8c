//! `compare` end to end: two hand-built captures (pcap bytes) of one connection, read with
//! `compare::read` and compared, as `bdpscope compare` runs them. No files needed.

use bdpscope::capture::{CaptureReader, LinkType, PcapWriter};
use bdpscope::compare::{self, Side};
use bdpscope::decode::TcpFlags;
use bdpscope::testkit::TcpPacket;
use bdpscope::time::Timestamp;

/// The connection as one point sees it.
struct View {
    client: &'static str,
    server: &'static str,
    cisn: u32,
    sisn: u32,
    /// The SYN's window-scale option (None: four NOPs in its place, as strippers leave).
    syn_ws: Option<u8>,
    /// Further from the client by this many µs (c2s later, s2c earlier).
    shift_us: i64,
}

fn capture(v: &View) -> Side {
    let mut pkts: Vec<(i64, TcpPacket)> = Vec::new();
    let mut syn = TcpPacket::new(v.client, v.server)
        .seq(v.cisn)
        .flags(TcpFlags::SYN)
        .window(65535)
        .mss(1460)
        .sack_perm()
        .ts(1, 0);
    syn = match v.syn_ws {
        Some(w) => syn.wscale(w),
        None => syn.raw_options(&[1, 1, 1, 1]),
    };
    let c2s = |t: i64| t + v.shift_us;
    let s2c = |t: i64| t - v.shift_us;
    pkts.push((c2s(0), syn));
    let sa = TcpPacket::new(v.server, v.client)
        .seq(v.sisn)
        .ack(v.cisn + 1)
        .flags(TcpFlags::SYN | TcpFlags::ACK)
        .window(65160)
        .mss(1460)
        .sack_perm()
        .ts(9, 1);
    pkts.push((s2c(40_000), if v.syn_ws.is_some() { sa.wscale(7) } else { sa }));
    pkts.push((
        c2s(40_050),
        TcpPacket::new(v.client, v.server)
            .seq(v.cisn + 1)
            .ack(v.sisn + 1)
            .window(502)
            .ts(2, 9),
    ));
    for i in 0..100u32 {
        let t = 80_000 + i as i64 * 200;
        pkts.push((
            s2c(t),
            TcpPacket::new(v.server, v.client)
                .seq(v.sisn + 1 + i * 1448)
                .ack(v.cisn + 1)
                .window(509)
                .ts(10 + i, 2)
                .payload_len(1448),
        ));
        pkts.push((
            c2s(t + 20),
            TcpPacket::new(v.client, v.server)
                .seq(v.cisn + 1)
                .ack(v.sisn + 1 + (i + 1) * 1448)
                .window(502)
                .ts(3 + i, 10 + i),
        ));
    }
    pkts.sort_by_key(|p| p.0);
    let mut w = PcapWriter::new(Vec::new(), LinkType::ETHERNET, 128, false, false).unwrap();
    for (us, p) in &pkts {
        let (_, bytes) = p.build();
        let n = bytes.len().min(128);
        w.write_packet(
            Timestamp::from_nanos(1_700_000_000_000_000_000 + us * 1000),
            &bytes[..n],
            p.wire_len() as u32,
        )
        .unwrap();
    }
    let mut r = CaptureReader::from_reader(std::io::Cursor::new(w.into_inner())).unwrap();
    compare::read(&mut r, "test")
}

const CLIENT_SIDE: View = View {
    client: "10.0.0.1:40000",
    server: "10.0.0.2:5001",
    cisn: 1000,
    sisn: 9000,
    syn_ws: Some(7),
    shift_us: 0,
};

#[test]
fn the_same_capture_twice_shows_no_middlebox_effects() {
    let a = capture(&CLIENT_SIDE);
    let c = compare::compare(&a, &a);
    assert_eq!(c.connections.len(), 1);
    assert_eq!(c.connections[0].verdict, "no middlebox effects seen");
    assert!(c.summary.ends_with("no middlebox effects seen"));
}

#[test]
fn a_stripped_syn_behind_nat_with_isn_rewriting() {
    let a = capture(&CLIENT_SIDE);
    let b = capture(&View {
        client: "192.0.2.1:61000",
        cisn: 777_000_000,
        syn_ws: None,
        shift_us: 20_000,
        ..CLIENT_SIDE
    });
    let c = compare::compare(&a, &b);
    assert_eq!(c.connections.len(), 1, "{c:#?}");
    let k = &c.connections[0];
    assert_eq!(k.matched_by, "segment sequence");
    assert_eq!(k.nearer_client, "a");
    let m: Vec<(&str, &str, &str)> = k
        .middlebox
        .iter()
        .map(|m| (m.kind.as_str(), m.direction.as_str(), m.confidence.as_str()))
        .collect();
    assert_eq!(m, vec![("wscale-stripped", "syn", "certain")]);
    let d: Vec<&str> = k.differences.iter().map(|d| d.kind.as_str()).collect();
    for want in ["address-rewritten", "isn-shifted", "option-removed"] {
        assert!(d.contains(&want), "{d:?}");
    }
    assert_eq!(k.c2s.one_way_delay_ms, Some(20.0));
    assert_eq!(k.round_trip_between_points_ms, Some(40.0));
    // JSON renders
    let json = serde_json::to_string(&c).unwrap();
    assert!(json.contains("\"wscale-stripped\""));
}
