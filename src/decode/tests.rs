//! End-to-end decode tests: hand-built records through every link type and rule, plus
//! property tests (random bytes never panic; etherparse as an independent reference).

use super::*;
use crate::testkit::TcpPacket;
use proptest::prelude::*;

/// Every link type the decoder reads.
const LINKS: [LinkType; 16] = [
    LinkType::NULL,
    LinkType::ETHERNET,
    LinkType::PPP,
    LinkType::RAW_12,
    LinkType::RAW_14,
    LinkType(50),
    LinkType(51),
    LinkType::RAW,
    LinkType::LOOP,
    LinkType::LINUX_SLL,
    LinkType::ARCNET_LINUX,
    LinkType::IPV4,
    LinkType::IPV6,
    LinkType::IPOIB,
    LinkType::LINUX_SLL2,
    LinkType(147), // unsupported (USER0): must just say so
];

fn v4() -> TcpPacket {
    TcpPacket::new("10.0.0.1:40000", "10.0.0.2:5001")
}

fn v6() -> TcpPacket {
    TcpPacket::new("[fd00::1]:40000", "[fd00::2]:5001")
}

#[track_caller]
fn dec(p: &TcpPacket) -> Result<Segment, Skip> {
    let (link, bytes) = p.build();
    decode(link, &bytes)
}

#[track_caller]
fn ok(p: &TcpPacket) -> Segment {
    dec(p).unwrap_or_else(|e| panic!("expected a segment, got {e:?} ({e})"))
}

/// The fields every link-layer test checks.
#[track_caller]
fn assert_data_segment(s: &Segment, v6: bool) {
    let (src, dst) = if v6 {
        ("fd00::1", "fd00::2")
    } else {
        ("10.0.0.1", "10.0.0.2")
    };
    assert_eq!(s.src, src.parse::<IpAddr>().unwrap());
    assert_eq!(s.dst, dst.parse::<IpAddr>().unwrap());
    assert_eq!((s.src_port, s.dst_port), (40000, 5001));
    assert_eq!((s.seq, s.ack), (SeqNum(7), SeqNum(9)));
    assert_eq!(s.window, 1000);
    assert_eq!(s.payload_len, 100);
    assert_eq!(s.options.timestamps, Some(Timestamps { val: 5, ecr: 6 }));
    assert!(s.options.complete);
}

fn data(p: TcpPacket) -> TcpPacket {
    p.seq(7).ack(9).window(1000).ts(5, 6).payload_len(100)
}

// ---- link layers ----------------------------------------------------------------------

#[test]
fn every_link_layer_carries_ipv4_and_ipv6() {
    type Wrap = fn(TcpPacket) -> TcpPacket;
    let links: [(&str, Wrap); 16] = [
        ("ethernet", |p| p.ethernet()),
        ("vlan", |p| p.vlan(100)),
        ("qinq", |p| p.qinq(10, 20)),
        ("0x9100 + 802.1Q", |p| p.vlan_tag(0x9100, 1).vlan(2)),
        ("three tags", |p| p.vlan(1).vlan(2).vlan(3)),
        ("pppoe", |p| p.pppoe(0x1234)),
        ("pppoe over qinq", |p| p.qinq(1, 2).pppoe(7)),
        ("mpls", |p| p.mpls(16).mpls(17)),
        ("sll", |p| p.sll()),
        ("sll2", |p| p.sll2()),
        ("raw", |p| p.raw_ip()),
        ("null le", |p| p.null_loopback(false)),
        ("null be", |p| p.null_loopback(true)),
        ("loop", |p| p.loop_link()),
        ("ppp", |p| p.ppp()),
        ("ipoib", |p| p.ipoib()),
    ];
    for (name, wrap) in links {
        for is_v6 in [false, true] {
            let p = wrap(data(if is_v6 { v6() } else { v4() }));
            let s = dec(&p).unwrap_or_else(|e| panic!("{name} v6={is_v6}: {e}"));
            assert_data_segment(&s, is_v6);
        }
    }
    assert_data_segment(&ok(&data(v4()).arcnet()), false);
    assert_data_segment(&ok(&data(v6()).arcnet()), true);
    assert_data_segment(&ok(&data(v4()).raw_ip_as(LinkType::IPV4)), false);
    assert_data_segment(&ok(&data(v6()).raw_ip_as(LinkType::IPV6)), true);
    assert_data_segment(&ok(&data(v4()).raw_ip_as(LinkType::RAW_12)), false);
    assert_data_segment(&ok(&data(v6()).raw_ip_as(LinkType::RAW_14)), true);
}

#[test]
fn unsupported_link_types_and_non_ip_are_skipped() {
    let (_, bytes) = v4().build();
    assert_eq!(decode(LinkType(147), &bytes), Err(Skip::UnsupportedLink(LinkType(147))));
    let mut arp = bytes.clone();
    arp[12..14].copy_from_slice(&[0x08, 0x06]);
    assert_eq!(decode(LinkType::ETHERNET, &arp), Err(Skip::NotIp(0x0806)));
}

// ---- IP -------------------------------------------------------------------------------

#[test]
fn ipv4_options_are_skipped() {
    // record route with 1 slot, NOP
    let s = ok(&data(v4()).ipv4_options(&[7, 7, 4, 0, 0, 0, 0, 1]));
    assert_data_segment(&s, false);
}

#[test]
fn ipv6_extension_headers_are_walked() {
    let s = ok(&data(v6())
        .ipv6_ext(0)
        .ipv6_ext(43)
        .ipv6_ext(60)
        .ipv6_ext(51)
        .ipv6_ext(44));
    assert_data_segment(&s, true);
}

#[test]
fn fragments_are_skipped() {
    assert_eq!(dec(&data(v4()).ipv4_fragment(0, true)), Err(Skip::Fragment));
    assert_eq!(dec(&data(v4()).ipv4_fragment(1480, false)), Err(Skip::Fragment));
    assert_eq!(dec(&data(v4()).ipv4_fragment(1480, true)), Err(Skip::Fragment));
    assert_eq!(dec(&data(v6()).ipv6_fragment(0, true)), Err(Skip::Fragment));
    assert_eq!(
        dec(&data(v6()).ipv6_ext(0).ipv6_fragment(1232, false)),
        Err(Skip::Fragment)
    );
    // an atomic fragment (offset 0, no more fragments) is a whole packet
    assert_data_segment(&ok(&data(v6()).ipv6_fragment(0, false)), true);
}

#[test]
fn ip_in_ip_tunnels_give_the_inner_endpoints() {
    assert_data_segment(&ok(&data(v4()).ip_in_ip("192.0.2.1", "192.0.2.2")), false);
    assert_data_segment(&ok(&data(v6()).ip_in_ip("192.0.2.1", "192.0.2.2")), true);
    assert_data_segment(&ok(&data(v4()).ip_in_ip("2001:db8::1", "2001:db8::2")), false);
}

#[test]
fn the_ecn_codepoint_comes_from_the_tos_byte_and_the_traffic_class() {
    for ecn in Ecn::ALL.iter().copied() {
        for p in [v4(), v6()] {
            let s = ok(&data(p).ecn(ecn));
            assert_eq!(s.ecn, ecn);
            assert!(!s.ae);
        }
    }
    // A DSCP beside it (EF, 46) changes nothing: the codepoint is the low two bits.
    let (link, mut bytes) = data(v4()).ecn(Ecn::Ce).build();
    bytes[14 + 1] |= 46 << 2;
    assert_eq!(decode(link, &bytes).unwrap().ecn, Ecn::Ce);
    let (link, mut bytes) = data(v6()).ecn(Ecn::Ect1).build();
    bytes[14] |= 0x0b; // Traffic Class high nibble (DSCP 44 << 2 = 0xb0)
    assert_eq!(decode(link, &bytes).unwrap().ecn, Ecn::Ect1);
}

#[test]
fn a_tunnel_passes_its_outer_ce_to_the_inner_packet_as_rfc_6040_decapsulates() {
    let tunnel = |p: TcpPacket, outer: &str| {
        let (a, b) = if outer == "v4" {
            ("192.0.2.1", "192.0.2.2")
        } else {
            ("2001:db8::1", "2001:db8::2")
        };
        p.ip_in_ip(a, b)
    };
    for (p, outer) in [(v4(), "v4"), (v6(), "v4"), (v4(), "v6"), (v6(), "v6")] {
        let got = |inner: Ecn, out: Ecn| ok(&tunnel(data(p.clone()), outer).ecn(inner).outer_ecn(out)).ecn;
        // A router in the tunnel marked it: the transport gets CE.
        assert_eq!(got(Ecn::Ect0, Ecn::Ce), Ecn::Ce);
        // An unmarked outer header leaves the inner codepoint.
        assert_eq!(got(Ecn::Ect0, Ecn::Ect0), Ecn::Ect0);
        assert_eq!(got(Ecn::Ce, Ecn::NotEct), Ecn::Ce);
        // A transport that is not ECN-capable gets no mark it cannot read.
        assert_eq!(got(Ecn::NotEct, Ecn::Ce), Ecn::NotEct);
    }
}

#[test]
fn the_ae_flag_is_the_low_bit_of_the_data_offset_byte() {
    let s = ok(&v4()
        .syn()
        .ae()
        .flags(TcpFlags::SYN | TcpFlags::ECE | TcpFlags::CWR)
        .ae()
        .mss(1460));
    assert!(s.ae);
    assert_eq!(s.flags, TcpFlags(TcpFlags::SYN | TcpFlags::ECE | TcpFlags::CWR));
    assert_eq!(s.options.mss, Some(1460), "the data offset is still read");
    assert!(!ok(&v4().syn()).ae);
}

// ---- lengths ----------------------------------------------------------------------------

#[test]
fn payload_length_comes_from_the_ip_header_under_snaplen_truncation() {
    for p in [v4(), v6()] {
        let p = p.ts(1, 2).payload_len(1448);
        for k in [0, 1, 100, 1447] {
            assert_eq!(ok(&p.clone().captured_payload(k)).payload_len, 1448, "captured {k}");
        }
        // tcpdump -s 128: header + timestamps fit, the payload does not
        let s = ok(&p.clone().vlan(5).snaplen(128));
        assert_eq!(s.payload_len, 1448);
        assert!(s.options.complete);
    }
}

#[test]
fn ethernet_padding_does_not_count_as_payload() {
    let p = v4().ack(1);
    assert_eq!(p.build().1.len(), 60);
    assert_eq!(ok(&p).payload_len, 0);
    assert_eq!(ok(&v4().ack(1).payload_len(2)).payload_len, 2);
}

#[test]
fn tso_sized_segments_longer_than_the_mss() {
    let s = ok(&v4().ts(1, 2).payload_len(64_000 - 52).sll2());
    assert_eq!(s.payload_len, 64_000 - 52);
    let s = ok(&v6().ts(1, 2).payload_len(60_000));
    assert_eq!(s.payload_len, 60_000);
    // IPv4 total length 0 (captured before TSO filled it in): the captured length counts
    let s = ok(&v4().ts(1, 2).payload_len(30_000).ipv4_total_len(0).raw_ip());
    assert_eq!(s.payload_len, 30_000);
    // IPv6 payload length 0 without a jumbo option: same fallback
    let s = ok(&v6().ts(1, 2).payload_len(30_000).ipv6_payload_len(0).raw_ip());
    assert_eq!(s.payload_len, 30_000);
}

#[test]
fn pppoe_length_bounds_an_ip_length_that_counts_ethernet_padding() {
    // zeek pppoe-over-qinq.pcap: a pure ACK whose IPv4 total length (46) counts the 6
    // padding bytes that follow the 40-byte packet PPPoE declares. tshark: tcp.len 0.
    let p = v4().ack(1).ipv4_total_len(46).qinq(3704, 2474).pppoe(0x0f07);
    let (link, mut bytes) = p.build();
    bytes.extend_from_slice(&[0; 6]);
    assert_eq!(decode(link, &bytes).unwrap().payload_len, 0);
}

#[test]
fn inconsistent_lengths_clamp_at_zero() {
    // total length covers the IP header only
    assert_eq!(ok(&v4().ts(1, 2).ipv4_total_len(20)).payload_len, 0);
    assert_eq!(ok(&v6().ts(1, 2).ipv6_payload_len(4)).payload_len, 0);
}

// ---- TCP ---------------------------------------------------------------------------------

#[test]
fn syn_options_decode() {
    let s = ok(&v4().syn().mss(1460).sack_perm().ts(1, 0).wscale(7));
    assert!(s.flags.syn() && !s.flags.ack());
    let o = s.options;
    assert_eq!((o.mss, o.wscale, o.sack_permitted), (Some(1460), Some(7), true));
    assert_eq!(o.timestamps, Some(Timestamps { val: 1, ecr: 0 }));
    assert!(o.complete);
}

#[test]
fn wscale_15_is_clamped_to_14_and_the_raw_value_kept() {
    let o = ok(&v4().syn().wscale(15)).options;
    assert_eq!((o.wscale, o.wscale_raw_over_14), (Some(14), Some(15)));
}

#[test]
fn options_cut_by_the_snaplen_are_unknown_not_absent() {
    let p = v4().syn().mss(1460).sack_perm().ts(1, 0).wscale(7);
    let full = p.build().1.len();
    // Ethernet 14 + IPv4 20 + TCP 20 = 54: every cut inside the option area
    for cut in 54..full {
        let s = ok(&p.clone().snaplen(cut));
        assert!(!s.options.complete, "cut at {cut}");
        assert_eq!(s.options.wscale_seen(), Seen::Unknown);
    }
    assert_eq!(dec(&p.clone().snaplen(53)), Err(Skip::Truncated(Layer::Tcp)));
    assert_eq!(dec(&p.clone().snaplen(33)), Err(Skip::Truncated(Layer::Ip)));
    assert_eq!(dec(&p.clone().snaplen(13)), Err(Skip::Truncated(Layer::Link)));
    // zeek's truncated-header.pcap: snaplen 68 on a 12-byte-option header is complete
    let s = ok(&v4().ts(1, 2).payload_len(500).snaplen(66));
    assert!(s.options.complete);
}

#[test]
fn data_offset_below_5_is_malformed() {
    assert_eq!(
        dec(&v4().data_offset(4)),
        Err(Skip::Malformed(Layer::Tcp, "data offset below 5"))
    );
}

#[test]
fn empty_sack_option_is_zero_blocks() {
    let s = ok(&v4().ack(1).sack(&[]).ts(1, 2));
    assert!(s.options.sack.is_empty());
    assert!(s.options.complete);
    assert_eq!(s.options.timestamps, Some(Timestamps { val: 1, ecr: 2 }));
}

#[test]
fn sack_blocks_decode() {
    let s = ok(&v6().ack(1).ts(1, 2).sack(&[(100, 200), (300, 400), (500, 600)]));
    let b: Vec<_> = s.options.sack.iter().map(|(l, r)| (l.0, r.0)).collect();
    assert_eq!(b, vec![(100, 200), (300, 400), (500, 600)]);
}

#[test]
fn only_the_first_tcp_header_is_decoded() {
    // an OpenFlow packet-in style payload that embeds another Ethernet/IPv4/TCP packet
    let (_, inner) = TcpPacket::new("192.168.1.1:80", "192.168.1.2:1234").syn().build();
    let s = ok(&v4().ack(5).psh().payload(&inner));
    assert_eq!((s.src_port, s.dst_port), (40000, 5001));
    assert_eq!(s.payload_len as usize, inner.len());
    assert!(!s.flags.syn());
}

#[test]
fn icmp_errors_quoting_tcp_are_not_tcp() {
    let (_, quoted) = v4().syn().raw_ip().build();
    let mut icmp = vec![3, 3, 0, 0, 0, 0, 0, 0];
    icmp.extend_from_slice(&quoted);
    let mut ip = vec![0x45, 0, 0, 0, 0, 0, 0, 0, 64, 1, 0, 0, 10, 0, 0, 2, 10, 0, 0, 1];
    let total = (ip.len() + icmp.len()) as u16;
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    ip.extend_from_slice(&icmp);
    assert_eq!(decode(LinkType::RAW, &ip), Err(Skip::NotTcp(1)));
}

// ---- property tests ----------------------------------------------------------------------

fn any_options() -> impl Strategy<Value = Vec<u8>> {
    // sequences of well-formed and ill-formed options, 0..=40 bytes
    let opt = prop_oneof![
        Just(vec![1u8]),
        Just(vec![0u8]),
        any::<u16>().prop_map(|m| vec![2, 4, (m >> 8) as u8, m as u8]),
        any::<u8>().prop_map(|s| vec![3, 3, s]),
        Just(vec![4u8, 2]),
        (0usize..=4, any::<[u32; 8]>()).prop_map(|(n, v)| {
            let mut o = vec![5, 2 + 8 * n as u8];
            for x in &v[..2 * n] {
                o.extend_from_slice(&x.to_be_bytes());
            }
            o
        }),
        (any::<u32>(), any::<u32>()).prop_map(|(a, b)| {
            let mut o = vec![8, 10];
            o.extend_from_slice(&a.to_be_bytes());
            o.extend_from_slice(&b.to_be_bytes());
            o
        }),
        (any::<u8>(), prop::collection::vec(any::<u8>(), 0..12)).prop_map(|(k, body)| [
            vec![k, body.len() as u8 + 2],
            body
        ]
        .concat()),
        prop::collection::vec(any::<u8>(), 1..6),
    ];
    prop::collection::vec(opt, 0..8).prop_map(|v| {
        let mut o = v.concat();
        o.truncate(40);
        o
    })
}

/// What an independent option walk (etherparse's iterator, which stops at the first
/// malformed option) says the options are.
fn reference_options(area: &[u8], complete: bool) -> TcpOptions {
    use etherparse::TcpOptionElement as E;
    let mut o = TcpOptions {
        complete,
        ..TcpOptions::default()
    };
    for e in etherparse::TcpOptionsIterator::from_slice(area) {
        match e {
            Ok(E::MaximumSegmentSize(m)) => o.mss = Some(m),
            Ok(E::WindowScale(s)) => {
                o.wscale = Some(s.min(14));
                o.wscale_raw_over_14 = (s > 14).then_some(s);
            }
            Ok(E::SelectiveAcknowledgementPermitted) => o.sack_permitted = true,
            Ok(E::SelectiveAcknowledgement(first, rest)) => {
                let mut s = SackBlocks::default();
                for (l, r) in std::iter::once(Some(first)).chain(rest).flatten() {
                    s.blocks[s.len as usize] = (SeqNum(l), SeqNum(r));
                    s.len += 1;
                }
                o.sack = s;
            }
            Ok(E::Timestamp(v, e)) => o.timestamps = Some(Timestamps { val: v, ecr: e }),
            Ok(E::Noop) => {}
            Err(_) => break,
        }
    }
    o
}

/// Whether etherparse's option iterator can serve as the reference for this area: it
/// stops at unknown kinds and at known kinds with unexpected lengths (including the
/// empty SACK), which we skip by their length. Up to the first malformed or cut option
/// (where both stop) the area must hold only NOP, EOL and well-formed known options.
fn reference_applies(area: &[u8]) -> bool {
    let mut rest = area;
    while let Some((&k, tail)) = rest.split_first() {
        match k {
            0 => return true,
            1 => {
                rest = tail;
                continue;
            }
            _ => {}
        }
        let Some(&len) = tail.first() else {
            return true;
        };
        let len = len as usize;
        if len < 2 || len > rest.len() {
            return true;
        }
        let well_formed = match k {
            2 => len == 4,
            3 => len == 3,
            4 => len == 2,
            5 => len >= 10 && (len - 2).is_multiple_of(8),
            8 => len == 10,
            _ => false,
        };
        if !well_formed {
            return false;
        }
        rest = &rest[len..];
    }
    true
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// (a) No input panics, whatever the link type.
    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        for link in LINKS {
            let _ = decode(link, &bytes);
        }
    }

    /// (a') Valid records with random bytes flipped and random cuts never panic either
    /// (reaches deep into IP and TCP, where pure noise rarely gets).
    #[test]
    fn mutated_records_never_panic(
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
        cut in any::<prop::sample::Index>(),
        opts in any_options(),
        wrap in 0usize..6,
        six in any::<bool>(),
    ) {
        let p = if six { v6() } else { v4() };
        let p = p.raw_options(&opts).payload_len(30);
        let p = match wrap { 0 => p.vlan(3), 1 => p.sll(), 2 => p.ipv6_ext(0).raw_ip(), 3 => p.pppoe(1), 4 => p.mpls(3), _ => p };
        let p = if six && wrap == 2 { p } else { p.ethernet() };
        let (link, mut bytes) = p.build();
        for (i, v) in flips {
            let i = i.index(bytes.len());
            bytes[i] = v;
        }
        let n = cut.index(bytes.len() + 1);
        for l in [link, LinkType::RAW] {
            let _ = decode(l, &bytes[..n]);
        }
    }

    /// (b) Packets written by etherparse's PacketBuilder decode to the fields it was given.
    #[test]
    fn etherparse_built_packets_decode_to_their_fields(
        sport in any::<u16>(), dport in any::<u16>(), seq in any::<u32>(), ack in any::<u32>(),
        window in any::<u16>(), syn in any::<bool>(), fin in any::<bool>(), psh in any::<bool>(),
        mss in proptest::option::of(any::<u16>()), ws in proptest::option::of(any::<u8>()),
        sack_perm in any::<bool>(), ts in proptest::option::of((any::<u32>(), any::<u32>())),
        sack in prop::collection::vec((any::<u32>(), any::<u32>()), 0..=3),
        payload in prop::collection::vec(any::<u8>(), 0..300),
        six in any::<bool>(), vlan in 0u8..3, src in any::<[u8; 16]>(), dst in any::<[u8; 16]>(),
    ) {
        use etherparse::{PacketBuilder, TcpOptionElement as E, VlanId};
        let mut opts = Vec::new();
        if let Some(m) = mss { opts.push(E::MaximumSegmentSize(m)); }
        if let Some(s) = ws { opts.push(E::Noop); opts.push(E::WindowScale(s)); }
        if sack_perm { opts.push(E::Noop); opts.push(E::Noop); opts.push(E::SelectiveAcknowledgementPermitted); }
        if let Some((v, e)) = ts { opts.push(E::Noop); opts.push(E::Noop); opts.push(E::Timestamp(v, e)); }
        let sack_used = !sack.is_empty() && 4 + 8 * sack.len() + opts.len() * 4 <= 40;
        if sack_used {
            let mut rest = [None; 3];
            for (i, b) in sack[1..].iter().enumerate() { rest[i] = Some(*b); }
            opts.push(E::Noop); opts.push(E::Noop); opts.push(E::SelectiveAcknowledgement(sack[0], rest));
        }
        let eth = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
        let vid = |v: u16| VlanId::try_new(v).unwrap();
        macro_rules! finish {
            ($step:expr) => {{
                let step = if six {
                    $step.ipv6(src, dst, 64)
                } else {
                    $step.ipv4(array4(&src), array4(&dst), 64)
                };
                let mut t = step.tcp(sport, dport, seq, window);
                if syn { t = t.syn(); }
                if fin { t = t.fin(); }
                if psh { t = t.psh(); }
                t = t.ack(ack);
                let Ok(t) = t.options(&opts) else { return Ok(()); };
                let mut out = Vec::new();
                t.write(&mut out, &payload).unwrap();
                out
            }};
        }
        let bytes = match vlan {
            0 => finish!(eth),
            1 => finish!(eth.single_vlan(vid(42))),
            _ => finish!(eth.double_vlan(vid(1), vid(2))),
        };
        let s = decode(LinkType::ETHERNET, &bytes).unwrap();
        let (esrc, edst): (IpAddr, IpAddr) = if six {
            (src.into(), dst.into())
        } else {
            (array4(&src).into(), array4(&dst).into())
        };
        prop_assert_eq!((s.src, s.dst, s.src_port, s.dst_port), (esrc, edst, sport, dport));
        prop_assert_eq!((s.seq, s.ack, s.window), (SeqNum(seq), SeqNum(ack), window));
        let mut flags = TcpFlags::ACK;
        if syn { flags |= TcpFlags::SYN; }
        if fin { flags |= TcpFlags::FIN; }
        if psh { flags |= TcpFlags::PSH; }
        prop_assert_eq!(s.flags, TcpFlags(flags));
        prop_assert_eq!(s.payload_len as usize, payload.len());
        let o = s.options;
        prop_assert!(o.complete);
        prop_assert_eq!(o.mss, mss);
        prop_assert_eq!(o.wscale, ws.map(|w| w.min(14)));
        prop_assert_eq!(o.wscale_raw_over_14, ws.filter(|w| *w > 14));
        prop_assert_eq!(o.sack_permitted, sack_perm);
        prop_assert_eq!(o.timestamps, ts.map(|(val, ecr)| Timestamps { val, ecr }));
        let got: Vec<(u32, u32)> = o.sack.iter().map(|(l, r)| (l.0, r.0)).collect();
        prop_assert_eq!(got, if sack_used { sack.clone() } else { vec![] });
    }

    /// (c) testkit records, cut anywhere, agree with etherparse's lax decoder wherever
    /// etherparse decodes the TCP header.
    #[test]
    fn testkit_records_agree_with_etherparse_lax_decoding(
        sport in any::<u16>(), dport in 1u16.., seq in any::<u32>(), ack in any::<u32>(),
        flags in any::<u8>(), window in any::<u16>(), opts in any_options(),
        payload_len in 0usize..3000, six in any::<bool>(), tags in 0u8..3,
        cut in proptest::option::of(0usize..200), ecn in 0u8..4, ae in any::<bool>(),
    ) {
        let (s, d) = if six {
            (format!("[2001:db8::{sport:x}]:{sport}"), format!("[2001:db8::1:{dport:x}]:{dport}"))
        } else {
            (format!("192.0.2.{}:{sport}", sport % 256), format!("198.51.100.{}:{dport}", dport % 256))
        };
        let mut p = TcpPacket::new(&s, &d).seq(seq).ack(ack).flags(flags).window(window)
            .raw_options(&opts).payload_len(payload_len).ecn(Ecn::from_bits(ecn));
        if ae { p = p.ae(); }
        for t in 0..tags { p = p.vlan(t as u16 + 1); }
        if let Some(c) = cut { p = p.snaplen(c); }
        let (link, bytes) = p.build();
        let ours = decode(link, &bytes);
        let lax = etherparse::LaxSlicedPacket::from_ethernet(&bytes);
        let theirs = match lax.as_ref().ok().and_then(|l| l.transport.as_ref()) {
            Some(etherparse::TransportSlice::Tcp(t)) => Some(t),
            _ => None,
        };
        match (&ours, theirs) {
            (Ok(s), Some(t)) => {
                prop_assert_eq!((s.src_port, s.dst_port), (t.source_port(), t.destination_port()));
                prop_assert_eq!((s.seq.0, s.ack.0), (t.sequence_number(), t.acknowledgment_number()));
                prop_assert_eq!(s.window, t.window_size());
                prop_assert_eq!(s.flags.0 & TcpFlags::SYN != 0, t.syn());
                prop_assert_eq!(s.flags.0 & TcpFlags::ACK != 0, t.ack());
                prop_assert_eq!(s.ae, t.ns());
                let theirs_ecn = match lax.as_ref().ok().and_then(|l| l.net.as_ref()) {
                    Some(etherparse::LaxNetSlice::Ipv4(ip)) => Some(ip.header().ecn().value()),
                    Some(etherparse::LaxNetSlice::Ipv6(ip)) => Some(ip.header().ecn().value()),
                    _ => None,
                };
                prop_assert_eq!(Some(s.ecn as u8), theirs_ecn);
                prop_assert_eq!(s.ecn, Ecn::from_bits(ecn));
                prop_assert_eq!(s.payload_len as usize, payload_len);
                prop_assert!(s.options.complete);
                let area = t.options();
                if reference_applies(area) {
                    // The NOP run is measured on SYNs only (the handshake's middlebox rules).
                    let run = if t.syn() { crate::decode::longest_nop_run(area).min(255) as u8 } else { 0 };
                    prop_assert_eq!(s.options.nop_run, run);
                    prop_assert_eq!(TcpOptions { nop_run: 0, ..s.options }, reference_options(area, true));
                }
            }
            (Ok(s), None) => {
                // etherparse needs the whole TCP header; we decode the fixed part and mark
                // the options incomplete.
                prop_assert!(!s.options.complete, "{:?} {:?}", s, lax);
                prop_assert_eq!(s.payload_len as usize, payload_len);
            }
            (Err(e), Some(_)) => prop_assert!(false, "we skipped ({e}) what etherparse decoded"),
            (Err(e), None) => prop_assert!(
                matches!(e, Skip::Truncated(_)),
                "unexpected skip {e:?} of a cut testkit record"
            ),
        }
    }
}

fn array4(b: &[u8; 16]) -> [u8; 4] {
    [b[0], b[1], b[2], b[3]]
}

// ---- fingerprints (capture duplicates) --------------------------------------------------

#[track_caller]
fn printed(p: &TcpPacket) -> (Segment, Print) {
    let (link, bytes) = p.build();
    crate::testkit::printed(link, &bytes).unwrap_or_else(|e| panic!("expected a segment, got {e}"))
}

#[test]
fn a_print_is_the_same_through_every_link_layer() {
    type Wrap = fn(TcpPacket) -> TcpPacket;
    let links: [Wrap; 9] = [
        |p| p.ethernet(),
        |p| p.vlan(100),
        |p| p.qinq(10, 20),
        |p| p.pppoe(7),
        |p| p.mpls(16),
        |p| p.sll(),
        |p| p.sll2(),
        |p| p.raw_ip(),
        |p| p.null_loopback(false),
    ];
    for six in [false, true] {
        let base = data(if six { v6() } else { v4() }).ip_id(77);
        let prints: Vec<(Segment, Print)> = links.iter().map(|w| printed(&w(base.clone()))).collect();
        assert!(prints.windows(2).all(|w| w[0] == w[1]), "v6 {six}: {prints:?}");
        assert_eq!(prints[0].0, ok(&base), "decode and decode_printed agree");
    }
}

#[test]
fn a_print_names_the_datagram_by_its_ipv4_id_only_when_the_id_is_numbered() {
    let names = |p: TcpPacket| printed(&p).1.id_names;
    // RFC 6864 §4.1: an atomic datagram's ID 0 names nothing; any other ID does.
    assert!(!names(data(v4())));
    assert!(names(data(v4()).ip_id(1)));
    // §4.2: a datagram that may be fragmented (DF clear) has a unique ID, 0 included.
    assert!(names(data(v4()).ipv4_fragment(0, false)));
    assert!(!names(data(v6())));
    // A tunnel: the inner header's ID counts.
    assert!(names(data(v4()).ip_id(5).ip_in_ip("192.0.2.1", "192.0.2.2")));
}

#[test]
fn a_segment_carries_its_ipv4_id_where_the_id_names_the_datagram() {
    assert_eq!(ok(&data(v4()).ip_id(0x1234)).ip_id, Some(0x1234));
    assert_eq!(
        ok(&data(v4()).ip_id(0xfe01).ip_in_ip("192.0.2.1", "192.0.2.2")).ip_id,
        Some(0xfe01)
    );
    assert_eq!(ok(&data(v4())).ip_id, None, "an atomic datagram's ID 0");
    assert_eq!(ok(&data(v6()).ip_id(9)).ip_id, None);
}

#[test]
fn a_print_covers_the_datagram_not_the_link_padding_nor_the_snaplen() {
    let short = v4().seq(7).ack(9);
    // Ethernet pads a 54-byte frame to 60: the padding is no part of the datagram.
    let (_, mut bytes) = short.clone().ethernet().build();
    assert_eq!(bytes.len(), 60);
    let before = crate::testkit::printed(LinkType::ETHERNET, &bytes).unwrap();
    *bytes.last_mut().unwrap() ^= 0xff;
    assert_eq!(crate::testkit::printed(LinkType::ETHERNET, &bytes).unwrap(), before);
    assert_ne!(printed(&data(v4()).payload_len(99)).1, printed(&data(v4())).1);
    // The payload is not hashed, but the TCP checksum over it is.
    assert_ne!(
        printed(&data(v4()).payload(&[1; 100])).1,
        printed(&data(v4()).payload(&[2; 100])).1,
    );
    // A snaplen that kept less of the same datagram changes nothing.
    assert_eq!(printed(&data(v4()).snaplen(80)), printed(&data(v4())));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    /// Any byte of the IP or TCP header that differs (identification, TTL, the TCP
    /// checksum, an option) makes another print — the TTL (hop limit) its own field, the
    /// rest the hash — or other ends (the addresses and ports are the connection's, which
    /// prints are compared within); a byte of the link layer does not, nor the IPv4 header
    /// checksum, which every router rewrites with the TTL.
    #[test]
    fn every_header_byte_is_in_the_print(
        six in any::<bool>(), at in any::<prop::sample::Index>(), xor in 1u8..=255, id in any::<u16>(),
    ) {
        let p = data(if six { v6() } else { v4() }).ip_id(id).sack(&[(100, 200)]).vlan(3);
        let (link, bytes) = p.build();
        let (seg, print) = crate::testkit::printed(link, &bytes).unwrap();
        let link_len = 18;
        let ip_len = if six { 40 } else { 20 };
        let headers = ip_len + 20 + 12 + 12;
        let i = at.index(link_len + headers);
        let mut changed = bytes.clone();
        changed[i] ^= xor;
        let ip_checksum = !six && (link_len + 10..link_len + 12).contains(&i);
        match crate::testkit::printed(link, &changed) {
            Ok((s, q)) if i < link_len => prop_assert_eq!((s, q), (seg, print)),
            Ok((_, q)) if ip_checksum => prop_assert_eq!(q, print),
            Ok((s, q)) => prop_assert_ne!(
                (s.src, s.dst, s.src_port, s.dst_port, q.hash, q.ttl),
                (seg.src, seg.dst, seg.src_port, seg.dst_port, print.hash, print.ttl),
                "byte {} of the headers", i - link_len
            ),
            Err(_) => {} // no longer a TCP segment of this link
        }
    }
}
