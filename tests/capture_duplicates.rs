//! Capture duplicates end to end (`flow::duplicate`): a capture that holds packets twice —
//! every one, or some, the copy microseconds later and maybe through another link header
//! — analyses exactly as the capture holding each once, but for the counts of copies set
//! aside and the note that says so; the real capture of ../shared whose every frame is in
//! the file twice; the command line's header, JSON and packets view.

mod cli_common;
mod needs;

use bdpscope::analysis::{analyze_reader, analyze_reader_parallel, AnalysisConfig};
use bdpscope::capture::{CaptureReader, LinkType, PcapWriter};
use bdpscope::observe::NoObserver;
use bdpscope::summary::{CaptureSummary, FlowSummary, StallKind};
use bdpscope::testkit::sim;
use bdpscope::time::{Span, Timestamp};
use proptest::prelude::*;
use std::time::Duration;

fn reader(bytes: &[u8]) -> CaptureReader {
    CaptureReader::new(Box::new(std::io::Cursor::new(bytes.to_vec()))).unwrap()
}

/// (time, frame bytes, wire length) of every record.
type Record = (Timestamp, Vec<u8>, u32);

fn records(pcap: &[u8]) -> Vec<Record> {
    let mut r = reader(pcap);
    let mut out = Vec::new();
    while let Some(f) = r.next_frame().unwrap() {
        assert_eq!(f.link, LinkType::ETHERNET);
        out.push((f.ts, f.data.to_vec(), f.wire_len));
    }
    out
}

fn pcap(records: &[Record]) -> Vec<u8> {
    let mut w = PcapWriter::new(Vec::new(), LinkType::ETHERNET, 65_535, true, false).unwrap();
    for (ts, data, len) in records {
        w.write_packet(*ts, data, *len).unwrap();
    }
    w.into_inner()
}

/// The same frame as seen on a VLAN interface: a copy from another interface differs in
/// its link header only.
fn tagged(frame: &[u8]) -> Vec<u8> {
    let mut f = frame[..12].to_vec();
    f.extend_from_slice(&[0x81, 0x00, 0x00, 0x07]);
    f.extend_from_slice(&frame[12..]);
    f
}

/// The capture with `copies[i]` more copies of record i, each right after it and `gap`
/// later (never past the next record, so that the file stays in time order), tagged or
/// not.
fn with_copies(clean: &[Record], copies: &[u8], gap: Span, tag: &[bool]) -> (Vec<u8>, u64) {
    let mut out = Vec::new();
    let mut n = 0;
    for (i, r) in clean.iter().enumerate() {
        out.push(r.clone());
        let next = clean.get(i + 1).map_or(Timestamp(i64::MAX), |n| n.0);
        for k in 0..copies[i] {
            let ts = (r.0 + gap).min(next).max(r.0);
            let data = if tag[(i + k as usize) % tag.len()] {
                tagged(&r.1)
            } else {
                r.1.clone()
            };
            let wire = r.2 + (data.len() - r.1.len()) as u32;
            out.push((ts, data, wire));
            n += 1;
        }
    }
    (pcap(&out), n)
}

fn analyze(bytes: &[u8]) -> (CaptureSummary, Vec<FlowSummary>) {
    let (c, flows, _) = analyze_reader(&mut reader(bytes), AnalysisConfig::default(), NoObserver);
    (c, flows)
}

/// The flow as the capture without its copies shows it: the copies' counts and note taken
/// away (checked first: a flow with copies says so, one without does not).
fn without_copies(f: &FlowSummary) -> serde_json::Value {
    let n = f.c2s.capture_duplicates + f.s2c.capture_duplicates;
    let note = f.notes.iter().position(|s| s.contains("capture duplicate"));
    assert_eq!(
        note.is_some(),
        n > 0,
        "flow {}: {} copies, notes {:?}",
        f.id,
        n,
        f.notes
    );
    if let Some(i) = note {
        assert!(f.notes[i].starts_with(&format!("{n} record")), "{}", f.notes[i]);
    }
    let mut f = f.clone();
    f.c2s.capture_duplicates = 0;
    f.s2c.capture_duplicates = 0;
    if let Some(i) = note {
        f.notes.remove(i);
    }
    let mut v = serde_json::to_value(&f).unwrap();
    v.as_object_mut().unwrap().remove("first_frame");
    v
}

/// Asserts that `doubled` (the capture with `added` copies) analyses as `clean`.
#[track_caller]
fn same_analysis(clean: &[u8], doubled: &[u8], added: u64) {
    let (c0, f0) = analyze(clean);
    let (c1, f1) = analyze(doubled);
    assert_eq!(c0.capture_duplicates, 0, "nothing in a simulated capture is a copy");
    assert_eq!(c1.capture_duplicates, added);
    assert_eq!(
        c1.tcp_segments,
        c0.tcp_segments + added,
        "copies are records of the file"
    );
    assert_eq!(f0.len(), f1.len());
    let per_flow: u64 = f1
        .iter()
        .map(|f| f.c2s.capture_duplicates + f.s2c.capture_duplicates)
        .sum();
    assert_eq!(per_flow, added, "every copy is its flow's");
    for (a, b) in f0.iter().zip(&f1) {
        assert_eq!(without_copies(a), without_copies(b), "flow {}", a.id);
    }
}

fn lossy(ipv6: bool) -> sim::Path {
    sim::Path {
        loss: 0.01,
        ipv6,
        ..sim::Path::new(20_000_000, Duration::from_millis(30))
    }
}

#[test]
fn every_record_twice_is_the_capture_once() {
    for ipv6 in [false, true] {
        let out = sim::run(&lossy(ipv6), &[sim::Flow::default()], Duration::from_millis(1_500));
        for clean in [&out.sender_side_pcap, &out.receiver_side_pcap] {
            let recs = records(clean);
            let (doubled, n) = with_copies(&recs, &vec![1; recs.len()], Span(1_500), &[false, true]);
            assert_eq!(n as usize, recs.len());
            same_analysis(clean, &doubled, n);
            // The losses are still retransmissions: only the copies went.
            let (_, flows) = analyze(&doubled);
            assert!(flows[0].retransmitted_segments > 0, "ipv6 {ipv6}");
        }
    }
}

/// `compare` sets copies aside as `analyze` does: the two vantage points of one lossy
/// transfer, one of them holding every record twice, compare exactly as the clean pair
/// (same retransmission and segment counts, same differences), and the doubled side says
/// how many copies it set aside.
#[test]
fn compare_sets_copies_aside_as_analyze_does() {
    use bdpscope::compare;
    let out = sim::run(&lossy(false), &[sim::Flow::default()], Duration::from_millis(1_500));
    let recs = records(&out.receiver_side_pcap);
    let (doubled, n) = with_copies(&recs, &vec![1; recs.len()], Span(1_500), &[false, true]);
    let side = |bytes: &[u8], name: &str| compare::read(&mut reader(bytes), name);
    let a = side(&out.sender_side_pcap, "a");
    let clean = compare::compare(&a, &side(&out.receiver_side_pcap, "b"));
    let copied = compare::compare(&a, &side(&doubled, "b"));
    assert_eq!(copied.b.capture_duplicates, n);
    assert_eq!(clean.b.capture_duplicates, 0);
    assert_eq!(clean.connections.len(), 1);
    let strip = |c: &compare::Comparison| {
        let mut v = serde_json::to_value(c).unwrap();
        v["b"]["capture_duplicates"] = serde_json::Value::Null;
        v["b"]["packets"] = serde_json::Value::Null;
        v["b"]["tcp_segments"] = serde_json::Value::Null;
        v
    };
    assert_eq!(strip(&clean), strip(&copied));
}

#[test]
fn workers_set_the_same_copies_aside() {
    let out = sim::run(
        &lossy(false),
        &vec![sim::Flow::default(); 3],
        Duration::from_millis(1_000),
    );
    let recs = records(&out.sender_side_pcap);
    let (doubled, n) = with_copies(&recs, &vec![1; recs.len()], Span(1_000), &[false]);
    let (c1, f1) = analyze(&doubled);
    let (c3, f3) = analyze_reader_parallel(&mut reader(&doubled), AnalysisConfig::default(), 3, &mut |_| {});
    assert_eq!(c1.capture_duplicates, n);
    assert_eq!(c3.capture_duplicates, n);
    assert_eq!(f1, f3);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Copies of random records (one, or two), microseconds after their original and
    /// through either link header, change nothing of the flows but their counts. Over
    /// IPv6 (no identification) a copied pure ACK is known for a copy only once its end's
    /// packets are known to be copied: there the handshake is copied too, as a mirror
    /// copies what it carries (`flow::duplicate`).
    #[test]
    fn random_copies_change_nothing_but_their_counts(
        seed in any::<u64>(),
        rate_mbit in 2u64..50,
        rtt_ms in 2u64..80,
        loss in 0.0f64..0.03,
        ipv6 in any::<bool>(),
        at_receiver in any::<bool>(),
        flows in 1usize..3,
        picks in prop::collection::vec(0u8..8, 64),
        gap_ns in 0i64..5_000,
        tags in prop::collection::vec(any::<bool>(), 1..4),
    ) {
        let path = sim::Path {
            loss,
            ipv6,
            seed,
            ..sim::Path::new(rate_mbit * 1_000_000, Duration::from_millis(rtt_ms))
        };
        let out = sim::run(&path, &vec![sim::Flow::default(); flows], Duration::from_millis(800));
        let clean = if at_receiver { &out.receiver_side_pcap } else { &out.sender_side_pcap };
        let recs = records(clean);
        // One record in four copied once, one in eight twice (the pattern repeats).
        let mut copies: Vec<u8> = (0..recs.len()).map(|i| match picks[i % picks.len()] { 0 | 1 => 1, 2 => 2, _ => 0 }).collect();
        if ipv6 {
            let mut seen = std::collections::HashSet::new();
            for (i, r) in recs.iter().enumerate() {
                let seg = bdpscope::decode::decode(LinkType::ETHERNET, &r.1).unwrap();
                if seen.insert((seg.src, seg.src_port, seg.dst, seg.dst_port)) {
                    copies[i] = copies[i].max(1);
                }
            }
        }
        let (doubled, n) = with_copies(&recs, &copies, Span(gap_ns), &tags);
        same_analysis(clean, &doubled, n);
    }
}

/// ../shared/real's m57 capture (SOURCES.md §10): every frame of the connection twice,
/// 1-5 µs apart, byte-identical. Counted as the connection's own they were 77 retransmitted
/// segments, a loss episode, no RTT sample ("undetermined: no end-to-end RTT").
#[test]
fn the_m57_download_held_twice_is_one_download() {
    let Some(shared) = needs::shared() else { return };
    let Some(path) = needs::shared_file(&shared, "real/zeek__zeek__http_m57-long-49583-80.pcap") else {
        return;
    };
    let bytes = std::fs::read(path).unwrap();
    let (c, flows) = analyze(&bytes);
    // editcap -d drops the same 113 of its 227 frames.
    assert_eq!((c.packets, c.capture_duplicates), (227, 113));
    let [f] = flows.as_slice() else {
        panic!("{} flows", flows.len())
    };
    assert_eq!((f.c2s.capture_duplicates, f.s2c.capture_duplicates), (30, 83));
    assert_eq!(f.packets, 114);
    assert_eq!(f.retransmitted_segments, 0);
    assert_eq!((f.c2s.retransmitted_segments, f.s2c.retransmitted_segments), (0, 0));
    assert_eq!(f.handshake.syn_retransmissions, 0);
    // De-duplicated: 77 segments, 98,929 bytes of payload from the server (SOURCES.md).
    assert_eq!((f.s2c.data_segments, f.bytes.s2c), (77, 98_929));
    assert!(
        !f.stalls.iter().any(|s| s.kind == StallKind::LossEpisode),
        "{:?}",
        f.stalls
    );
    // The handshake is timed (SYN -> SYN/ACK 96.2 ms), and the data by its ACKs.
    let rtt = &f.rtt_ms;
    assert_eq!(rtt.handshake_samples, 2);
    assert!(rtt.data_ack_samples > 20, "{rtt:?}");
    let min = rtt.min.expect("an end-to-end RTT");
    assert!((96.0..96.5).contains(&min), "{min}");
    assert!(f.verdict.is_judged(), "{:?}", f.notes);
}

mod cli {
    use super::cli_common::*;
    use super::*;

    fn doubled_file(dir: &TempDir) -> (std::path::PathBuf, usize) {
        let out = sim::run(&lossy(false), &[sim::Flow::default()], Duration::from_millis(400));
        let recs = records(&out.sender_side_pcap);
        let (doubled, n) = with_copies(&recs, &vec![1; recs.len()], Span(2_000), &[false]);
        assert_eq!(n as usize, recs.len());
        (dir.file("doubled.pcap", &doubled), recs.len())
    }

    #[test]
    fn the_text_header_says_how_many_copies_were_set_aside() {
        let dir = TempDir::new("copies-text");
        let (file, n) = doubled_file(&dir);
        let o = run(&["analyze", file.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = stdout(&o);
        let header = text.lines().next().unwrap();
        let want = format!(
            "{}: pcap, {} packets, {} TCP segments, {n} capture duplicates set aside, 1 flow",
            file.display(),
            2 * n,
            2 * n
        );
        assert_eq!(header, want);
        assert!(
            text.contains(&format!("{n} records of this flow are capture duplicates")),
            "{text}"
        );
        // A capture without copies says nothing of them.
        let once = dir.file(
            "once.pcap",
            &sim::run(&lossy(false), &[sim::Flow::default()], Duration::from_millis(400)).sender_side_pcap,
        );
        let text = stdout(&run(&["analyze", once.to_str().unwrap()]));
        assert!(!text.contains("capture duplicate"), "{text}");
    }

    #[test]
    fn json_counts_them_and_the_packets_view_leaves_them_out() {
        let dir = TempDir::new("copies-json");
        let (file, n) = doubled_file(&dir);
        let o = run(&["analyze", "--format", "json", file.to_str().unwrap()]);
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(doc["captures"][0]["capture_duplicates"], n as u64);
        let f = &doc["flows"][0];
        let per = f["c2s"]["capture_duplicates"].as_u64().unwrap() + f["s2c"]["capture_duplicates"].as_u64().unwrap();
        assert_eq!(per, n as u64);
        // The packets view: the originals, with the file's frame numbers (1, 3, 5, ...).
        let o = run(&["packets", file.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        let frames: Vec<u64> = stdout(&o)
            .lines()
            .skip(1)
            .map(|l| l.split(',').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(frames, (0..n as u64).map(|i| 2 * i + 1).collect::<Vec<_>>());
    }
}
