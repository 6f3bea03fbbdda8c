//! Why the capture reader and the decoder are our own code and not pcap-parser's and
//! etherparse's (ARCHITECTURE.md, "Hand code and why"): each test feeds both the same
//! bytes and shows what the crate cannot do that real captures need. When a test here
//! fails because the crate learned to do it, that layer should be reconsidered.
//!
//! Speed is the other reason, measured, not tested: `cargo bench --bench crates -- CAPTURE`.

use bdpscope::capture::{CaptureError, CaptureReader, LinkType, PcapNgWriter, PcapWriter};
use bdpscope::decode::{decode, Seen};
use bdpscope::testkit::TcpPacket;
use bdpscope::time::Timestamp;
use pcap_parser::{PcapBlockOwned, PcapError};

/// Every frame our reader returns, and its error if it stopped on one.
fn ours(bytes: Vec<u8>) -> Result<(usize, Option<CaptureError>), CaptureError> {
    let mut r = CaptureReader::new(Box::new(std::io::Cursor::new(bytes)))?;
    let mut n = 0;
    loop {
        match r.next_frame() {
            Ok(Some(_)) => n += 1,
            Ok(None) => return Ok((n, None)),
            Err(e) => return Ok((n, Some(e))),
        }
    }
}

/// Packet records pcap-parser returns, and the error it stopped on (None at a clean end).
fn theirs(bytes: &[u8]) -> (usize, Option<String>) {
    let mut reader = match pcap_parser::create_reader(1 << 16, bytes) {
        Ok(r) => r,
        Err(e) => return (0, Some(format!("{e:?}"))),
    };
    let mut n = 0;
    loop {
        match reader.next() {
            Ok((offset, block)) => {
                if matches!(
                    block,
                    PcapBlockOwned::Legacy(_)
                        | PcapBlockOwned::NG(pcap_parser::Block::EnhancedPacket(_))
                        | PcapBlockOwned::NG(pcap_parser::Block::SimplePacket(_))
                ) {
                    n += 1;
                }
                reader.consume(offset);
            }
            Err(PcapError::Eof) => return (n, None),
            Err(PcapError::Incomplete(_)) => {
                if reader.refill().is_err() {
                    return (n, Some("refill failed".into()));
                }
            }
            Err(e) => return (n, Some(format!("{e:?}"))),
        }
    }
}

fn pcap(records: &[&[u8]]) -> Vec<u8> {
    let mut w = PcapWriter::new(Vec::new(), LinkType::ETHERNET, 65535, false, false).unwrap();
    for (i, r) in records.iter().enumerate() {
        w.write_packet(Timestamp::from_nanos(1_000_000_000 * (i as i64 + 1)), r, r.len() as u32)
            .unwrap();
    }
    w.into_inner()
}

fn segment() -> Vec<u8> {
    TcpPacket::new("10.0.0.1:40000", "10.0.0.2:80")
        .seq(1)
        .payload_len(10)
        .build()
        .1
}

#[test]
fn pcap_parser_cannot_open_a_big_endian_modified_pcap() {
    // Kuznetsov's patched libpcap (magic a1b2cd34, 24-byte record headers: ifindex,
    // protocol, packet type), written on a big-endian host; Wireshark reads it.
    // pcap-parser knows the magic only in little-endian order.
    let seg = segment();
    let mut f = Vec::new();
    for v in [0xa1b2_cd34u32, 0x0002_0004, 0, 0, 65535, 1] {
        f.extend_from_slice(&v.to_be_bytes()); // magic, version 2.4, zone, sigfigs, snaplen, link
    }
    for v in [1u32, 0, seg.len() as u32, seg.len() as u32, 2, 0x0800_0000] {
        f.extend_from_slice(&v.to_be_bytes()); // sec, usec, caplen, len, ifindex, proto+type
    }
    f.extend_from_slice(&seg);
    assert!(matches!(ours(f.clone()), Ok((1, None))));
    let (n, err) = theirs(&f);
    assert_eq!((n, err.as_deref()), (0, Some("HeaderNotRecognized")));
}

#[test]
fn pcap_parser_cannot_say_that_a_record_length_is_impossible() {
    // A record header claiming 2 GB: damage, not a record to wait for.
    let mut f = pcap(&[]);
    for v in [1u32, 0, 0x7fff_0000, 60] {
        f.extend_from_slice(&v.to_le_bytes());
    }
    f.extend_from_slice(&[0u8; 60]);
    // No packet before the damage: the capture cannot be read at all, and says where.
    match ours(f.clone()) {
        Err(CaptureError::NoPacket(e)) => match *e {
            CaptureError::Corrupt { offset: 24, reason } => {
                assert!(reason.contains("claims 2147418112 captured bytes"), "{reason}")
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    // pcap-parser asks for more room than its buffer has, without saying how much: a
    // caller cannot tell a damaged header from a large record (a TSO super-segment).
    assert_eq!(theirs(&f).1.as_deref(), Some("BufferTooSmall"));
}

#[test]
fn pcap_parser_reads_headers_libpcap_rejects() {
    // Both are files from libpcap's own test suite of invalid inputs, rebuilt here:
    // version 1.0, and a link-type field with reserved bits set.
    let one = pcap(&[&segment()]);
    let mut version_1 = one.clone();
    version_1[4..6].copy_from_slice(&1u16.to_le_bytes());
    let mut reserved = one.clone();
    reserved[20..24].copy_from_slice(&0x0001_0001u32.to_le_bytes());
    for f in [version_1, reserved] {
        assert!(matches!(ours(f.clone()), Err(CaptureError::BadHeader(_))));
        assert_eq!(theirs(&f), (1, None), "pcap-parser reads it as if it were valid");
    }
}

#[test]
fn pcap_parser_does_not_check_the_options_of_a_pcapng_block() {
    // A section header whose option claims more bytes than the block holds (libpcap's
    // test input shb-option-too-long, rebuilt): libpcap rejects the file, we name the
    // damage, pcap-parser does not check them.
    let mut w = PcapNgWriter::new(Vec::new(), false).unwrap();
    let eth = w.add_interface(LinkType::ETHERNET, 65535, None).unwrap();
    w.write_packet(eth, Timestamp::from_nanos(1_000_000_000), &segment(), 64)
        .unwrap();
    let mut f = w.into_inner();
    let shb_len = u32::from_le_bytes(f[4..8].try_into().unwrap()) as usize;
    let mut shb = vec![0u8; 48];
    shb[..24].copy_from_slice(&f[..24]);
    shb[4..8].copy_from_slice(&48u32.to_le_bytes());
    shb[24..28].copy_from_slice(&[0x30, 0x30, 0x30, 0x30]); // option 12336, 12336 bytes
    shb[44..48].copy_from_slice(&48u32.to_le_bytes());
    f.splice(..shb_len, shb);
    match ours(f.clone()) {
        Err(CaptureError::Corrupt { offset: 0, reason }) => {
            assert!(reason.contains("option 12336 claims 12336 bytes"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(theirs(&f), (1, None), "pcap-parser reads it as if it were valid");
}

#[test]
fn etherparse_loses_every_tcp_option_after_an_unknown_kind() {
    // MPTCP (kind 30, RFC 8684) before the timestamps, as Linux sends on MPTCP subflows.
    let mptcp = [30u8, 4, 0x20, 0x81];
    let p = TcpPacket::new("10.0.0.1:40000", "10.0.0.2:80")
        .ack(1)
        .raw_options(&mptcp)
        .ts(100, 7);
    let (link, bytes) = p.build();
    let seg = decode(link, &bytes).unwrap();
    assert_eq!(seg.options.timestamps.map(|t| (t.val, t.ecr)), Some((100, 7)));

    let sliced = etherparse::SlicedPacket::from_ethernet(&bytes).unwrap();
    let Some(etherparse::TransportSlice::Tcp(tcp)) = sliced.transport else {
        panic!("no TCP")
    };
    let options: Vec<_> = tcp.options_iterator().collect();
    assert_eq!(options, [Err(etherparse::TcpOptionReadError::UnknownId(30))]);
}

#[test]
fn etherparse_drops_a_segment_whose_options_the_snaplen_cut() {
    // tcpdump -s 60: the TCP header is captured up to the middle of its options.
    let p = TcpPacket::new("10.0.0.1:40000", "10.0.0.2:80")
        .seq(5)
        .ack(9)
        .ts(1, 2)
        .payload_len(1448);
    let (link, bytes) = p.clone().snaplen(60).build();
    let seg = decode(link, &bytes).unwrap();
    assert_eq!((seg.seq.0, seg.payload_len), (5, 1448));
    assert_eq!(seg.options.timestamps_seen(), Seen::Unknown, "cut off, not absent");

    let lax = etherparse::LaxSlicedPacket::from_ethernet(&bytes).unwrap();
    assert!(lax.transport.is_none(), "no TCP header at all");
    assert!(lax.stop_err.is_some());
}

#[test]
fn etherparse_has_no_decoder_for_these_link_layers() {
    // Links real captures come on, all decoded by us; etherparse reads Ethernet II (with
    // up to three VLAN or MACsec headers), Linux cooked v1 and raw IP only.
    let base = || TcpPacket::new("10.0.0.1:40000", "10.0.0.2:80").seq(1).payload_len(10);
    let cases = [
        ("PPPoE in Ethernet", base().pppoe(7)),
        ("MPLS in Ethernet", base().mpls(100)),
        ("four VLAN tags", base().vlan(1).vlan(2).vlan(3).vlan(4)),
    ];
    for (what, p) in cases {
        let (link, bytes) = p.build();
        assert!(decode(link, &bytes).is_ok(), "{what}");
        let lax = etherparse::LaxSlicedPacket::from_ethernet(&bytes).unwrap();
        assert!(lax.transport.is_none(), "{what}: etherparse found no TCP");
    }
    // Whole link types without an etherparse slicer: SLL2, BSD loopback, PPP, IPoIB, ARCNET.
    for p in [
        base().sll2(),
        base().null_loopback(false),
        base().ppp(),
        base().ipoib(),
        base().arcnet(),
    ] {
        let (link, bytes) = p.build();
        assert!(decode(link, &bytes).is_ok(), "link type {}", link.0);
    }
}
