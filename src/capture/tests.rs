//! Reader tests across formats: written with the fixture writers, read back, then cut,
//! damaged and compressed.

use super::*;
use crate::time::Timestamp;
use proptest::prelude::*;
use std::io::{self, Cursor, Read, Write};

/// An owned copy of a frame.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Owned {
    number: u64,
    ts: i64,
    link: u32,
    wire_len: u32,
    data: Vec<u8>,
    interface: u32,
}

fn open(bytes: Vec<u8>) -> Result<CaptureReader, CaptureError> {
    CaptureReader::new(Box::new(Cursor::new(bytes)))
}

/// Reads everything: the frames and the final error, if any.
fn read_all(r: &mut CaptureReader) -> (Vec<Owned>, Option<CaptureError>) {
    let mut out = Vec::new();
    loop {
        match r.next_frame() {
            Ok(Some(f)) => out.push(Owned {
                number: f.number,
                ts: f.ts.nanos(),
                link: f.link.0,
                wire_len: f.wire_len,
                data: f.data.to_vec(),
                interface: f.interface,
            }),
            Ok(None) => return (out, None),
            Err(e) => {
                // After an error, the reader stays finished.
                assert!(matches!(r.next_frame(), Ok(None)));
                assert!(matches!(r.next_frame(), Ok(None)));
                return (out, Some(e));
            }
        }
    }
}

fn read_bytes(bytes: Vec<u8>) -> (Vec<Owned>, Option<CaptureError>) {
    let mut r = open(bytes).expect("open");
    read_all(&mut r)
}

fn pkt(i: usize, len: usize) -> Vec<u8> {
    (0..len).map(|k| (i * 31 + k * 7) as u8).collect()
}

const T0: i64 = 1_700_000_000_000_000_000;

fn gzip(b: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

fn zstd_(b: &[u8]) -> Vec<u8> {
    zstd::encode_all(b, 3).unwrap()
}

/// Three packets in a legacy pcap.
fn small_pcap(nanos: bool, be: bool) -> Vec<u8> {
    let mut w = PcapWriter::new(Vec::new(), LinkType::ETHERNET, 65535, nanos, be).unwrap();
    for i in 0..3 {
        let d = pkt(i, 60 + i);
        w.write_packet(Timestamp::from_nanos(T0 + i as i64 * 1_234_567_891), &d, 1500)
            .unwrap();
    }
    w.into_inner()
}

#[test]
fn pcap_both_magics_and_byte_orders() {
    for nanos in [false, true] {
        for be in [false, true] {
            let bytes = small_pcap(nanos, be);
            let mut r = open(bytes.clone()).unwrap();
            assert_eq!(
                r.format(),
                CaptureFormat::Pcap {
                    nanosecond: nanos,
                    big_endian: be
                }
            );
            assert_eq!(r.format().container().as_str(), "pcap");
            assert_eq!(r.compression(), Compression::None);
            assert_eq!(r.link_types(), vec![LinkType::ETHERNET]);
            assert_eq!(r.snaplen(), Some(65535));
            let (frames, err) = read_all(&mut r);
            assert!(err.is_none(), "{err:?}");
            assert_eq!(frames.len(), 3);
            for (i, f) in frames.iter().enumerate() {
                let exact = T0 + i as i64 * 1_234_567_891;
                let want = if nanos { exact } else { exact - exact % 1_000 };
                assert_eq!(f.number, i as u64 + 1);
                assert_eq!(f.ts, want, "nanos={nanos} be={be}");
                assert_eq!(f.link, 1);
                assert_eq!(f.wire_len, 1500);
                assert_eq!(f.data, pkt(i, 60 + i));
                assert_eq!(f.interface, 0);
            }
            assert_eq!(r.frames_read(), 3);
            assert_eq!(r.input_bytes(), bytes.len() as u64);
            assert_eq!(r.capture_offset(), bytes.len() as u64);
        }
    }
}

#[test]
fn pcap_big_endian_header_bytes_are_as_expected() {
    let b = small_pcap(true, true);
    assert_eq!(&b[..4], &[0xa1, 0xb2, 0x3c, 0x4d]);
    let b = small_pcap(false, false);
    assert_eq!(&b[..4], &[0xd4, 0xc3, 0xb2, 0xa1]);
}

#[test]
fn pcap_modified_format() {
    // Kuznetsov's patched libpcap: magic a1b2cd34, 24-byte record headers.
    let mut b = Vec::new();
    b.extend_from_slice(&0xa1b2_cd34u32.to_le_bytes());
    b.extend_from_slice(&2u16.to_le_bytes());
    b.extend_from_slice(&4u16.to_le_bytes());
    b.extend_from_slice(&[0; 8]);
    b.extend_from_slice(&96u32.to_le_bytes());
    b.extend_from_slice(&1u32.to_le_bytes());
    for i in 0..2u32 {
        b.extend_from_slice(&(1_000 + i).to_le_bytes());
        b.extend_from_slice(&500_000u32.to_le_bytes());
        b.extend_from_slice(&10u32.to_le_bytes());
        b.extend_from_slice(&70u32.to_le_bytes());
        b.extend_from_slice(&[7, 0, 0, 0, 8, 0, 0, 0]); // ifindex, protocol, pkt_type, pad
        b.extend_from_slice(&[i as u8; 10]);
    }
    let (frames, err) = read_bytes(b);
    assert!(err.is_none());
    assert_eq!(frames.len(), 2);
    assert_eq!(frames[1].ts, 1_001_500_000_000);
    assert_eq!(frames[1].data, vec![1u8; 10]);
    assert_eq!(frames[1].wire_len, 70);
}

#[test]
fn pcap_old_version_with_swapped_lengths() {
    let mut w = PcapWriter::new(Vec::new(), LinkType::RAW, 65535, false, false).unwrap();
    w.write_packet(Timestamp::from_nanos(T0), &[1, 2, 3, 4], 40).unwrap();
    let mut b = w.into_inner();
    b[6] = 2; // version 2.2
              // swap caplen (4) and len (40) in the record header
    b[32..36].copy_from_slice(&40u32.to_le_bytes());
    b[36..40].copy_from_slice(&4u32.to_le_bytes());
    let (frames, err) = read_bytes(b);
    assert!(err.is_none());
    assert_eq!(frames[0].data, vec![1, 2, 3, 4]);
    assert_eq!(frames[0].wire_len, 40);
}

#[test]
fn pcap_fcs_bits_are_masked_from_the_link_type() {
    let mut b = small_pcap(false, false);
    b[20..24].copy_from_slice(&(0x1400_0000u32 | 1).to_le_bytes()); // FCS length 1 (32 bits)
    let r = open(b).unwrap();
    assert_eq!(r.link_types(), vec![LinkType::ETHERNET]);
}

/// A file with a capture's magic is a capture, whatever is wrong with its header: a bad
/// header is not "not a capture" (a folder's walk counts it failed, not skipped).
#[test]
fn pcap_header_problems_are_bad_headers() {
    let mut b = small_pcap(false, false);
    b[4] = 1; // version 1.4
    let e = open(b).unwrap_err();
    assert!(
        matches!(e, CaptureError::BadHeader(ref s) if s.contains("version 1.4")),
        "{e}"
    );
    let mut b = small_pcap(false, false);
    b[22] = 0x30; // reserved link-type bits
    let e = open(b).unwrap_err();
    assert!(
        matches!(e, CaptureError::BadHeader(ref s) if s.contains("reserved")),
        "{e}"
    );
}

/// Damage before the first packet leaves nothing to analyse: opening fails, saying so and
/// where. A cut there is a capture that stops early: it opens, and the cut comes first.
#[test]
fn damage_before_the_first_packet_fails_the_open() {
    // pcap: the first record (at byte 24) claims 2 GB.
    let mut b = small_pcap(false, false);
    b[24 + 8..24 + 12].copy_from_slice(&0x7fff_fff0u32.to_le_bytes());
    let e = open(b).unwrap_err();
    assert!(
        matches!(&e, CaptureError::NoPacket(inner) if matches!(**inner, CaptureError::Corrupt { offset: 24, .. })),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .starts_with("no packet could be read: the capture is damaged at byte 24: "),
        "{e}"
    );
    assert!(!e.is_cut_short());
    // pcapng: the block before the first packet is broken.
    let mut w = PcapNgWriter::new(Vec::new(), false).unwrap();
    let at = w.get_ref().len();
    let i = w.add_interface(LinkType::ETHERNET, 0, None).unwrap();
    w.write_packet(i, Timestamp::from_nanos(T0), &[1; 40], 40).unwrap();
    let mut b = w.into_inner();
    b[at + 4] = 13; // the interface block's length is not a multiple of 4
    let e = open(b).unwrap_err();
    assert!(
        matches!(&e, CaptureError::NoPacket(inner) if matches!(**inner, CaptureError::Corrupt { .. })),
        "{e:?}"
    );
    // Cut inside the first record: it opens, and says where it stops, with no packet.
    let full = small_pcap(false, false);
    let mut r = open(full[..24 + 10].to_vec()).unwrap();
    let (frames, err) = read_all(&mut r);
    assert!(frames.is_empty());
    assert!(
        matches!(err, Some(CaptureError::Truncated { offset: 24, frames: 0 })),
        "{err:?}"
    );
    // Damage after the first packet: it opens, the packets before come first.
    let mut b = small_pcap(false, false);
    b[100 + 8..100 + 12].copy_from_slice(&0x7fff_fff0u32.to_le_bytes());
    let (frames, err) = read_bytes(b);
    assert_eq!(frames.len(), 1);
    assert!(
        matches!(err, Some(CaptureError::Corrupt { offset: 100, .. })),
        "{err:?}"
    );
}

#[test]
fn pcap_header_only_is_an_empty_capture() {
    let b = small_pcap(false, false)[..24].to_vec();
    let (frames, err) = read_bytes(b);
    assert!(frames.is_empty());
    assert!(err.is_none());
}

#[test]
fn pcap_cut_mid_record_returns_complete_records_then_truncated() {
    let full = small_pcap(false, false);
    // records: 24..100 (16+60), 100..177, 177..255
    assert_eq!(full.len(), 24 + 76 + 77 + 78);
    for cut in [100 + 5, 100 + 20, 177 + 77, 177 + 1] {
        let mut r = open(full[..cut].to_vec()).unwrap();
        let (frames, err) = read_all(&mut r);
        let complete = if cut >= 177 { 2 } else { 1 };
        assert_eq!(frames.len(), complete, "cut {cut}");
        let start = if cut >= 177 { 177 } else { 100 };
        match err {
            Some(CaptureError::Truncated { offset, frames }) => {
                assert_eq!(offset, start);
                assert_eq!(frames, complete as u64);
            }
            other => panic!("cut {cut}: {other:?}"),
        }
    }
    // A cut exactly at a record boundary is a clean end.
    let (frames, err) = read_bytes(full[..177].to_vec());
    assert_eq!(frames.len(), 2);
    assert!(err.is_none());
}

#[test]
fn cut_inside_the_file_header() {
    let full = small_pcap(true, false);
    for cut in [4, 10, 23] {
        let e = open(full[..cut].to_vec()).unwrap_err();
        assert!(
            matches!(e, CaptureError::Truncated { offset: 0, frames: 0 }),
            "cut {cut}: {e}"
        );
        assert!(e.is_cut_short());
    }
    // pcapng: cut inside the section header block.
    let ng = small_pcapng(false);
    for cut in [4, 11, 20] {
        let e = open(ng[..cut].to_vec()).unwrap_err();
        assert!(
            matches!(e, CaptureError::Truncated { offset: 0, frames: 0 }),
            "cut {cut}: {e}"
        );
    }
}

#[test]
fn empty_short_and_garbage_inputs() {
    let e = open(Vec::new()).unwrap_err();
    assert!(
        matches!(e, CaptureError::NotACapture(ref s) if s.contains("empty")),
        "{e}"
    );
    let e = open(vec![0xd4, 0xc3]).unwrap_err();
    assert!(
        matches!(e, CaptureError::NotACapture(ref s) if s.contains("2 bytes")),
        "{e}"
    );
    let e = open(b"<!DOCTYPE html><html></html>".to_vec()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "this is not a pcap or pcapng capture: it starts with bytes 3c 21 44 4f (\"<!DO\", text?), \
         which is not pcap, pcapng, gzip or zstd"
    );
    let e = open(vec![0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0]).unwrap_err();
    assert!(e.to_string().contains("de ad be ef"), "{e}");
    let e = open(b"BZh91AY&SY".to_vec()).unwrap_err();
    assert!(e.to_string().contains("bzip2"), "{e}");
    let e = open(gzip(b"hello world, not a capture")).unwrap_err();
    assert!(
        e.to_string().contains("its gzip content starts with bytes 68 65 6c 6c"),
        "{e}"
    );
    let e = open(gzip(b"")).unwrap_err();
    assert!(e.to_string().contains("gzip content is empty"), "{e}");
    let e = open(zstd_(&gzip(b"x"))).unwrap_err();
    assert!(
        e.to_string().contains("its zstd content is gzip-compressed again"),
        "{e}"
    );
}

fn small_pcapng(be: bool) -> Vec<u8> {
    let mut w = PcapNgWriter::new(Vec::new(), be).unwrap();
    let i = w.add_interface(LinkType::ETHERNET, 0, None).unwrap();
    for k in 0..3 {
        w.write_packet(i, Timestamp::from_nanos(T0 + k * 1_000), &pkt(k as usize, 61), 61)
            .unwrap();
    }
    w.into_inner()
}

#[test]
fn pcapng_little_and_big_endian_sections() {
    for be in [false, true] {
        let mut r = open(small_pcapng(be)).unwrap();
        assert_eq!(r.format(), CaptureFormat::PcapNg);
        assert_eq!(r.format().container().as_str(), "pcapng");
        let (frames, err) = read_all(&mut r);
        assert!(err.is_none(), "{err:?}");
        assert_eq!(frames.len(), 3);
        assert_eq!(frames[2].ts, T0 + 2_000);
        assert_eq!(frames[2].data, pkt(2, 61));
        assert_eq!(frames[2].link, 1);
        assert_eq!(r.link_types(), vec![LinkType::ETHERNET]);
    }
}

#[test]
fn pcapng_several_sections_of_either_byte_order() {
    let mut w = PcapNgWriter::new(Vec::new(), false).unwrap();
    let a = w.add_interface(LinkType::ETHERNET, 0, Some(9)).unwrap();
    w.write_packet(a, Timestamp::from_nanos(T0 + 1), &[1; 20], 20).unwrap();
    w.new_section(true).unwrap();
    let b = w.add_interface(LinkType::RAW, 0, Some(6)).unwrap();
    assert_eq!(b, 0, "interface ids restart in a new section");
    w.write_packet(b, Timestamp::from_nanos(T0 + 2_000), &[2; 21], 21)
        .unwrap();
    w.new_section(false).unwrap();
    let c = w.add_interface(LinkType::LINUX_SLL, 0, None).unwrap();
    let c2 = w.add_interface(LinkType::ETHERNET, 0, Some(9)).unwrap();
    w.write_packet(c2, Timestamp::from_nanos(T0 + 3), &[3; 22], 22).unwrap();
    w.write_packet(c, Timestamp::from_nanos(T0 + 4_000), &[4; 23], 23)
        .unwrap();
    let mut r = open(w.into_inner()).unwrap();
    let (f, err) = read_all(&mut r);
    assert!(err.is_none(), "{err:?}");
    let got: Vec<_> = f
        .iter()
        .map(|f| (f.number, f.ts - T0, f.link, f.interface, f.data.len()))
        .collect();
    assert_eq!(
        got,
        vec![
            (1, 1, 1, 0, 20),
            (2, 2_000, 101, 0, 21),
            (3, 3, 1, 1, 22),
            (4, 4_000, 113, 0, 23)
        ]
    );
    assert_eq!(
        r.link_types(),
        vec![LinkType::ETHERNET, LinkType::RAW, LinkType::LINUX_SLL]
    );
}

#[test]
fn pcapng_two_interfaces_with_different_links_and_resolutions() {
    let mut w = PcapNgWriter::new(Vec::new(), false).unwrap();
    let ns = w.add_interface(LinkType::ETHERNET, 65535, Some(9)).unwrap();
    let b2 = w.add_interface(LinkType::RAW, 65535, Some(0x80 | 10)).unwrap();
    // 2^-10 s units: 0.25 s is exactly 256 units.
    let t_ns = T0 + 123_456_789;
    let t_b2 = T0 + 250_000_000;
    w.write_packet(ns, Timestamp::from_nanos(t_ns), &[0xaa; 54], 54)
        .unwrap();
    w.write_packet(b2, Timestamp::from_nanos(t_b2), &[0x45; 40], 40)
        .unwrap();
    // A raw 2^-10 count that is not a whole number of nanoseconds: floored.
    w.write_epb_raw(b2, 1, &[0x45; 40], 40).unwrap();
    let (f, err) = read_bytes(w.into_inner());
    assert!(err.is_none());
    assert_eq!((f[0].ts, f[0].link, f[0].interface), (t_ns, 1, 0));
    assert_eq!((f[1].ts, f[1].link, f[1].interface), (t_b2, 101, 1));
    assert_eq!(f[2].ts, 976_562); // 10^9 / 1024 = 976562.5
}

#[test]
fn pcapng_if_tsoffset_is_added() {
    let mut w = PcapNgWriter::new(Vec::new(), true).unwrap();
    let a = w
        .add_interface_with_offset(LinkType::ETHERNET, 0, Some(6), 1_600_000_000)
        .unwrap();
    let b = w
        .add_interface_with_offset(LinkType::ETHERNET, 0, Some(3), -10)
        .unwrap();
    w.write_epb_raw(a, 2_500_000, &[0; 10], 10).unwrap(); // 2.5 s after the offset
    w.write_packet(b, Timestamp::from_nanos(T0 + 7_000_000), &[0; 10], 10)
        .unwrap();
    w.write_epb_raw(b, 0, &[0; 10], 10).unwrap(); // before the epoch
    let (f, err) = read_bytes(w.into_inner());
    assert!(err.is_none());
    assert_eq!(f[0].ts, 1_600_000_002_500_000_000);
    assert_eq!(f[1].ts, T0 + 7_000_000);
    assert_eq!(f[2].ts, -10_000_000_000);
}

#[test]
fn pcapng_simple_obsolete_and_other_blocks() {
    let mut w = PcapNgWriter::new(Vec::new(), false).unwrap();
    let i = w.add_interface(LinkType::ETHERNET, 50, Some(9)).unwrap();
    w.write_block(block_type::NAME_RESOLUTION, &[0, 0, 0, 0]).unwrap();
    w.write_packet(i, Timestamp::from_nanos(T0 + 5), &[1; 30], 30).unwrap();
    // SPB: no timestamp (the previous packet's is used), captured length limited by the
    // interface snaplen (50) and the original length.
    w.write_simple_packet(&[2; 60], 60).unwrap();
    w.write_simple_packet(&[3; 12], 10).unwrap();
    // Systemd journal export: no packet, but Wireshark numbers it as a frame.
    w.write_block(block_type::SYSTEMD_JOURNAL_EXPORT, b"MESSAGE=x\n")
        .unwrap();
    w.write_block(block_type::CUSTOM, &[0, 0, 0, 1, 9, 9]).unwrap();
    w.write_block(block_type::INTERFACE_STATISTICS, &[0; 12]).unwrap();
    w.write_block(0x8000_1234, &[7; 9]).unwrap(); // local-use block type
                                                  // Obsolete Packet Block: 16-bit interface id and drops count.
    let mut pb = Vec::new();
    pb.extend_from_slice(&0u16.to_le_bytes());
    pb.extend_from_slice(&3u16.to_le_bytes());
    let units = (T0 + 77) as u64;
    pb.extend_from_slice(&((units >> 32) as u32).to_le_bytes());
    pb.extend_from_slice(&(units as u32).to_le_bytes());
    pb.extend_from_slice(&5u32.to_le_bytes());
    pb.extend_from_slice(&9u32.to_le_bytes());
    pb.extend_from_slice(&[4; 5]);
    w.write_block(block_type::PACKET, &pb).unwrap();
    let (f, err) = read_bytes(w.into_inner());
    assert!(err.is_none(), "{err:?}");
    let got: Vec<_> = f
        .iter()
        .map(|f| (f.number, f.ts - T0, f.data.len(), f.wire_len))
        .collect();
    assert_eq!(got, vec![(1, 5, 30, 30), (2, 5, 50, 60), (3, 5, 10, 10), (5, 77, 5, 9)]);
    assert_eq!(f[3].data, vec![4; 5]);
}

#[test]
fn pcapng_unknown_interface_is_returned_with_a_placeholder_link() {
    let mut w = PcapNgWriter::new(Vec::new(), false).unwrap();
    w.write_epb_raw(3, 1_000_000, &[1; 8], 8).unwrap();
    w.write_simple_packet(&[2; 8], 8).unwrap();
    let mut r = open(w.into_inner()).unwrap();
    let (f, err) = read_all(&mut r);
    assert!(err.is_none());
    assert_eq!(f.len(), 2);
    assert_eq!(f[0].link, LinkType::NO_INTERFACE.0);
    assert_eq!(f[0].interface, 3);
    assert_eq!(f[0].ts, 1_000_000_000);
    assert_eq!(f[1].ts, 1_000_000_000);
    assert_eq!(r.unknown_interface_packets(), 2);
}

/// A pcapng with one interface and one packet, then a block patched by `patch`.
fn pcapng_with_bad_block(patch: impl Fn(&mut Vec<u8>, usize)) -> (Vec<u8>, usize) {
    let mut w = PcapNgWriter::new(Vec::new(), false).unwrap();
    let i = w.add_interface(LinkType::ETHERNET, 0, None).unwrap();
    w.write_packet(i, Timestamp::from_nanos(T0), &[1; 40], 40).unwrap();
    let at = w.get_ref().len();
    w.write_packet(i, Timestamp::from_nanos(T0), &[2; 40], 40).unwrap();
    w.write_packet(i, Timestamp::from_nanos(T0), &[3; 40], 40).unwrap();
    let mut b = w.into_inner();
    patch(&mut b, at);
    (b, at)
}

#[test]
fn pcapng_bad_block_lengths_are_corrupt() {
    type Patch = Box<dyn Fn(&mut Vec<u8>, usize)>;
    let cases: Vec<(&str, Patch)> = vec![
        ("not a multiple of 4", Box::new(|b, at| b[at + 4] = 13)),
        (
            "below 12",
            Box::new(|b, at| b[at + 4..at + 8].copy_from_slice(&8u32.to_le_bytes())),
        ),
        (
            "huge",
            Box::new(|b, at| b[at + 4..at + 8].copy_from_slice(&0xffff_fff0u32.to_le_bytes())),
        ),
        ("trailer differs", Box::new(|b, at| b[at + 68] = 0x50)),
        ("caplen beyond block", Box::new(|b, at| b[at + 20] = 200)),
    ];
    for (name, patch) in cases {
        let (b, at) = pcapng_with_bad_block(patch);
        let (f, err) = read_bytes(b);
        assert_eq!(f.len(), 1, "{name}");
        match err {
            Some(CaptureError::Corrupt { offset, ref reason }) => {
                assert_eq!(offset, at as u64, "{name}: {reason}");
            }
            other => panic!("{name}: {other:?}"),
        }
    }
}

#[test]
fn pcapng_block_length_beyond_the_end_is_truncated() {
    let (b, at) = pcapng_with_bad_block(|b, at| {
        b[at + 4..at + 8].copy_from_slice(&4000u32.to_le_bytes());
    });
    let (f, err) = read_bytes(b);
    assert_eq!(f.len(), 1);
    assert!(matches!(err, Some(CaptureError::Truncated { offset, frames: 1 }) if offset == at as u64));
}

#[test]
fn pcapng_header_problems() {
    let mut b = small_pcapng(false);
    b[12] = 0; // version 0.0
    let e = open(b).unwrap_err();
    assert!(
        matches!(e, CaptureError::BadHeader(ref s) if s.contains("version 0.0")),
        "{e}"
    );
    let mut b = small_pcapng(false);
    b[8] = 0x11; // byte-order magic
    let e = open(b).unwrap_err();
    assert!(
        matches!(e, CaptureError::BadHeader(ref s) if s.contains("byte-order")),
        "{e}"
    );
    // An SHB option longer than the block.
    let mut w = PcapNgWriter::new(Vec::new(), false).unwrap();
    w.new_section(false).unwrap();
    let i = w.add_interface(LinkType::ETHERNET, 0, None).unwrap();
    w.write_packet(i, Timestamp::from_nanos(T0), &[1; 40], 40).unwrap();
    let mut b = w.into_inner();
    let mut body = vec![
        0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    ];
    body.extend_from_slice(&[4, 0, 0x40, 0, b'a', b'b', b'c', b'd']);
    let mut shb = vec![0x0a, 0x0d, 0x0d, 0x0a];
    shb.extend_from_slice(&(body.len() as u32 + 12).to_le_bytes());
    shb.extend_from_slice(&body);
    shb.extend_from_slice(&(body.len() as u32 + 12).to_le_bytes());
    let e = open(shb.clone()).unwrap_err();
    assert!(matches!(e, CaptureError::Corrupt { offset: 0, .. }), "{e}");
    // The same damaged SHB as a later section, after a packet: Corrupt at its offset.
    let at = b.len();
    b.extend_from_slice(&shb);
    let (f, err) = read_bytes(b);
    assert_eq!(f.len(), 1);
    assert!(matches!(err, Some(CaptureError::Corrupt { offset, .. }) if offset == at as u64));
}

#[test]
fn blocks_bigger_than_the_buffer_grow_it() {
    let big = pkt(9, 3 * 1024 * 1024 + 3);
    let mut w = PcapNgWriter::new(Vec::new(), false).unwrap();
    let i = w.add_interface(LinkType::ETHERNET, 0, None).unwrap();
    w.write_packet(i, Timestamp::from_nanos(T0), &[1; 100], 100).unwrap();
    w.write_packet(i, Timestamp::from_nanos(T0), &big, big.len() as u32)
        .unwrap();
    w.write_packet(i, Timestamp::from_nanos(T0), &[3; 100], 100).unwrap();
    let (f, err) = read_bytes(w.into_inner());
    assert!(err.is_none());
    assert_eq!(f.len(), 3);
    assert_eq!(f[1].data, big);
    // Legacy pcap records larger than any snaplen are corrupt (the first one: no packet
    // came before it, so the capture does not open).
    let mut p = PcapWriter::new(Vec::new(), LinkType::ETHERNET, 65535, false, false).unwrap();
    p.write_packet(Timestamp::from_nanos(T0), &[0; 300_000], 300_000)
        .unwrap();
    let e = open(p.into_inner()).unwrap_err();
    assert!(
        matches!(&e, CaptureError::NoPacket(inner) if matches!(**inner, CaptureError::Corrupt { offset: 24, .. })),
        "{e:?}"
    );
    // ... unless the snaplen allows them.
    let mut p = PcapWriter::new(Vec::new(), LinkType::ETHERNET, 4_000_000, false, false).unwrap();
    p.write_packet(Timestamp::from_nanos(T0), &big, big.len() as u32)
        .unwrap();
    let (f, err) = read_bytes(p.into_inner());
    assert!(err.is_none());
    assert_eq!(f[0].data, big);
}

#[test]
fn gzip_and_zstd_wrapping() {
    for plain in [small_pcap(true, true), small_pcapng(true)] {
        let want = read_bytes(plain.clone()).0;
        // Several gzip members and several zstd frames, as `cat a.gz b.gz` makes.
        let (a, b) = plain.split_at(30);
        let mut gz = gzip(a);
        gz.extend_from_slice(&gzip(b));
        let mut zs = zstd_(a);
        zs.extend_from_slice(&zstd_(b));
        for (c, data) in [
            (Compression::Gzip, gzip(&plain)),
            (Compression::Gzip, gz),
            (Compression::Zstd, zstd_(&plain)),
            (Compression::Zstd, zs),
        ] {
            let len = data.len() as u64;
            let mut r = open(data).unwrap();
            assert_eq!(r.compression(), c);
            let (got, err) = read_all(&mut r);
            assert!(err.is_none(), "{c}: {err:?}");
            assert_eq!(got, want);
            assert_eq!(r.input_bytes(), len);
        }
    }
}

#[test]
fn cut_compressed_streams_are_cut_short() {
    // Enough packets that the cut lands well inside the stream.
    let mut w = PcapWriter::new(Vec::new(), LinkType::ETHERNET, 65535, false, false).unwrap();
    for i in 0..2000 {
        w.write_packet(
            Timestamp::from_nanos(T0 + i),
            &pkt(i as usize, 100 + (i as usize % 50)),
            200,
        )
        .unwrap();
    }
    let plain = w.into_inner();
    for (name, packed) in [("gzip", gzip(&plain)), ("zstd", zstd_(&plain))] {
        for frac in [2, 3, 10] {
            let cut = packed.len() * (frac - 1) / frac;
            let (f, err) = read_bytes(packed[..cut].to_vec());
            let err = err.expect("an error");
            assert!(err.is_cut_short(), "{name} cut at {cut}: {err}");
            assert!(!f.is_empty() && f.len() < 2000, "{name}: {}", f.len());
            // Every returned record is intact.
            for (i, fr) in f.iter().enumerate() {
                assert_eq!(fr.data, pkt(i, 100 + i % 50));
            }
        }
        // Damaged data in the middle: an error, never a panic.
        let mut bad = packed.clone();
        let mid = bad.len() / 2;
        for b in &mut bad[mid..mid + 16] {
            *b ^= 0x5a;
        }
        let (f, err) = read_bytes(bad);
        assert!(!f.is_empty(), "{name}: the packets before the damage are returned");
        // Depending on the inflate backend the damage is reported by the decompressor or
        // shows up as a corrupt record in the garbage it produced; either way it is an
        // error, not a panic, and not mistaken for a file that was merely cut short.
        assert!(
            matches!(err, Some(CaptureError::Decompress(_) | CaptureError::Corrupt { .. })),
            "{name}: {err:?} after {} frames",
            f.len()
        );
    }
}

/// Returns `chunk` bytes per read, an Interrupted error every other call, and an error
/// after `fail_after` bytes.
struct Awkward {
    data: Vec<u8>,
    pos: usize,
    chunk: usize,
    flip: bool,
    fail_after: usize,
}

impl Read for Awkward {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.flip = !self.flip;
        if self.flip {
            return Err(io::Error::new(io::ErrorKind::Interrupted, "signal"));
        }
        if self.pos >= self.fail_after {
            return Err(io::Error::other("disk on fire"));
        }
        let n = self
            .chunk
            .min(buf.len())
            .min(self.data.len() - self.pos)
            .min(self.fail_after - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[test]
fn tiny_reads_interruptions_and_io_errors() {
    for data in [small_pcap(false, true), small_pcapng(true), gzip(&small_pcapng(false))] {
        let want = read_bytes(data.clone()).0;
        let src = Awkward {
            data: data.clone(),
            pos: 0,
            chunk: 1,
            flip: false,
            fail_after: usize::MAX,
        };
        let mut r = CaptureReader::from_reader(src).unwrap();
        let (got, err) = read_all(&mut r);
        assert!(err.is_none());
        assert_eq!(got, want);
    }
    let data = small_pcap(false, false);
    let src = Awkward {
        data,
        pos: 0,
        chunk: 7,
        flip: false,
        fail_after: 110,
    };
    let mut r = CaptureReader::from_reader(src).unwrap();
    let (got, err) = read_all(&mut r);
    assert_eq!(got.len(), 1);
    assert!(
        matches!(err, Some(CaptureError::Io(ref e)) if e.to_string() == "disk on fire"),
        "{err:?}"
    );
    // The same failure under gzip is an I/O error too, not a decompression error.
    let data = gzip(&small_pcap(false, false));
    let src = Awkward {
        data,
        pos: 0,
        chunk: 7,
        flip: false,
        fail_after: 30,
    };
    // (Before the first packet, so the open fails, saying no packet could be read.)
    let e = match CaptureReader::from_reader(src) {
        Ok(mut r) => read_all(&mut r).1.expect("error"),
        Err(CaptureError::NoPacket(e)) => *e,
        Err(e) => e,
    };
    assert!(matches!(e, CaptureError::Io(_)), "{e:?}");
}

#[test]
fn reader_is_send() {
    fn send<T: Send>() {}
    send::<CaptureReader>();
    send::<CaptureError>();
}

// ---------------------------------------------------------------------------------------
// Property tests: nothing panics, everything terminates, prefixes read back exactly.

#[derive(Clone, Debug)]
struct Spec {
    ng: bool,
    be: bool,
    nanos: bool,
    compression: u8,
    packets: Vec<(i64, Vec<u8>, u32)>,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        0u8..3,
        prop::collection::vec(
            (
                0i64..4_000_000_000_000_000_000,
                prop::collection::vec(any::<u8>(), 0..200),
                any::<u32>(),
            ),
            0..12,
        ),
    )
        .prop_map(|(ng, be, nanos, compression, packets)| Spec {
            ng,
            be,
            nanos,
            compression,
            packets,
        })
}

/// The capture bytes (uncompressed) and the frames a reader must return.
fn build(s: &Spec) -> (Vec<u8>, Vec<Owned>) {
    let mut want = Vec::new();
    let bytes = if s.ng {
        let mut w = PcapNgWriter::new(Vec::new(), s.be).unwrap();
        let a = w
            .add_interface(LinkType::ETHERNET, 0, Some(if s.nanos { 9 } else { 6 }))
            .unwrap();
        let b = w.add_interface(LinkType::RAW, 0, Some(0x80 | 20)).unwrap();
        for (i, (ts, d, wl)) in s.packets.iter().enumerate() {
            let iface = if i % 3 == 2 { b } else { a };
            let units = if iface == a {
                if s.nanos {
                    *ts as u64
                } else {
                    (*ts / 1000) as u64
                }
            } else {
                (*ts as u64) >> 10
            };
            w.write_epb_raw(iface, units, d, *wl).unwrap();
            let ns = if iface == a {
                if s.nanos {
                    *ts
                } else {
                    *ts / 1000 * 1000
                }
            } else {
                (((units as u128) * 1_000_000_000) >> 20) as i64
            };
            want.push(Owned {
                number: i as u64 + 1,
                ts: ns,
                link: if iface == a { 1 } else { 101 },
                wire_len: *wl,
                data: d.clone(),
                interface: iface,
            });
        }
        w.into_inner()
    } else {
        let mut w = PcapWriter::new(Vec::new(), LinkType::ETHERNET, 65535, s.nanos, s.be).unwrap();
        for (i, (ts, d, wl)) in s.packets.iter().enumerate() {
            let ts = ts % 4_000_000_000_000_000_000; // u32 seconds
            w.write_packet(Timestamp::from_nanos(ts), d, *wl).unwrap();
            want.push(Owned {
                number: i as u64 + 1,
                ts: if s.nanos { ts } else { ts / 1000 * 1000 },
                link: 1,
                wire_len: *wl,
                data: d.clone(),
                interface: 0,
            });
        }
        w.into_inner()
    };
    (bytes, want)
}

fn compress(s: &Spec, b: &[u8]) -> Vec<u8> {
    match s.compression {
        1 => gzip(b),
        2 => zstd_(b),
        _ => b.to_vec(),
    }
}

/// Reads at most `limit` frames; panics when the reader does not end by then.
fn read_bounded(bytes: Vec<u8>, limit: usize) -> Option<(Vec<Owned>, Option<CaptureError>)> {
    read_bounded_with(bytes, limit, buffer::INITIAL_BUF)
}

fn read_bounded_with(bytes: Vec<u8>, limit: usize, window: usize) -> Option<(Vec<Owned>, Option<CaptureError>)> {
    let mut r = CaptureReader::with_buffer(Box::new(Cursor::new(bytes)), window).ok()?;
    let mut out = Vec::new();
    for _ in 0..limit {
        match r.next_frame() {
            Ok(Some(f)) => {
                assert!(f.number as usize > out.len());
                out.push(Owned {
                    number: f.number,
                    ts: f.ts.nanos(),
                    link: f.link.0,
                    wire_len: f.wire_len,
                    data: f.data.to_vec(),
                    interface: f.interface,
                });
            }
            Ok(None) => return Some((out, None)),
            Err(e) => {
                let _ = e.to_string();
                assert!(matches!(r.next_frame(), Ok(None)));
                return Some((out, Some(e)));
            }
        }
    }
    panic!("the reader did not finish within {limit} frames");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        // Every record has a header of at least 12 bytes.
        read_bounded(bytes.clone(), bytes.len() / 12 + 2);
    }

    #[test]
    fn random_bytes_after_a_valid_header_never_panic(
        ng in any::<bool>(), tail in prop::collection::vec(any::<u8>(), 0..4096)
    ) {
        let mut b = if ng { small_pcapng(false)[..28].to_vec() } else { small_pcap(false, false)[..24].to_vec() };
        b.extend_from_slice(&tail);
        read_bounded(b, tail.len() / 12 + 2);
    }

    #[test]
    fn written_captures_read_back(s in spec()) {
        let (plain, want) = build(&s);
        let (got, err) = read_bounded(compress(&s, &plain), 1000).expect("opens");
        prop_assert!(err.is_none(), "{:?}", err);
        prop_assert_eq!(got, want);
    }

    #[test]
    fn small_windows_and_awkward_reads_change_nothing(
        s in spec(), chunk in 1usize..3000, window in 1usize..600
    ) {
        let (plain, want) = build(&s);
        let src = Awkward { data: compress(&s, &plain), pos: 0, chunk, flip: false, fail_after: usize::MAX };
        let mut r = CaptureReader::with_buffer(Box::new(src), window).expect("opens");
        let (got, err) = read_all(&mut r);
        prop_assert!(err.is_none(), "{:?}", err);
        prop_assert_eq!(got, want);
    }

    #[test]
    fn cut_captures_return_a_prefix(s in spec(), cut in any::<prop::sample::Index>()) {
        let (plain, want) = build(&s);
        let packed = compress(&s, &plain);
        let at = cut.index(packed.len() + 1);
        if let Some((got, err)) = read_bounded_with(packed[..at].to_vec(), 1000, 64) {
            prop_assert!(got.len() <= want.len());
            prop_assert_eq!(&got[..], &want[..got.len()]);
            if let Some(e) = &err {
                prop_assert!(e.is_cut_short() || matches!(e, CaptureError::Decompress(_)), "{}", e);
            }
            if s.compression == 0 && at < packed.len() && got.len() < want.len() {
                // A plain capture cut before its last record must say so, unless the
                // cut fell exactly on a record boundary.
                let boundary = err.is_none();
                prop_assert!(boundary || err.as_ref().is_some_and(|e| e.is_cut_short()));
            }
        }
    }

    #[test]
    fn mutated_captures_never_panic(
        s in spec(),
        muts in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
        before_compression in any::<bool>(),
        window in prop::sample::select(vec![16usize, 100, 4096, 1 << 20]),
    ) {
        let (plain, _) = build(&s);
        let mut bytes = if before_compression { plain.clone() } else { compress(&s, &plain) };
        for (i, v) in &muts {
            if !bytes.is_empty() {
                let k = i.index(bytes.len());
                bytes[k] = *v;
            }
        }
        if before_compression {
            bytes = compress(&s, &bytes);
        }
        let at = cut.index(bytes.len() + 1).max(bytes.len() / 2);
        bytes.truncate(at);
        read_bounded_with(bytes, 10_000, window);
    }
}
