//! Floods and scans end to end: a real transfer in the middle of a SYN flood, analysed
//! with the attempts' memory budget far too small for the flood, is the same flow as the
//! transfer captured alone; the flood is found; the attempts are summarised, not listed;
//! the result is the same for any number of workers. And the real scan of ../shared.

use bdpscope::analysis::{analyze_reader, analyze_reader_parallel, AnalysisConfig, Budget};
use bdpscope::capture::{CaptureReader, LinkType, PcapWriter};
use bdpscope::observe::NoObserver;
use bdpscope::summary::{CaptureSummary, FloodKind, FlowSummary};
use bdpscope::testkit::{sim, TcpPacket};
use bdpscope::time::{Span, Timestamp};
use std::time::Duration;

fn reader(bytes: &[u8]) -> CaptureReader {
    CaptureReader::new(Box::new(std::io::Cursor::new(bytes.to_vec()))).unwrap()
}

/// (time, frame bytes, wire length) of every record.
fn records(bytes: &[u8]) -> Vec<(Timestamp, Vec<u8>, u32)> {
    let mut r = reader(bytes);
    let mut out = Vec::new();
    while let Some(f) = r.next_frame().unwrap() {
        assert_eq!(f.link, LinkType::ETHERNET);
        out.push((f.ts, f.data.to_vec(), f.data.len() as u32));
    }
    out
}

/// The transfer alone, and the transfer inside `syns` SYNs from one-off sources to one
/// port, spread over its duration and past it.
fn captures(syns: u32) -> (Vec<u8>, Vec<u8>) {
    let path = sim::Path::new(10_000_000, Duration::from_millis(40));
    let out = sim::run(&path, &[sim::Flow::default()], Duration::from_millis(1_500));
    let alone = out.sender_side_pcap;
    let mut all = records(&alone);
    let t0 = all[0].0;
    let span = Span::from_millis(2_000).nanos();
    for i in 0..syns {
        let src = format!(
            "{}.{}.{}.{}:{}",
            11 + (i >> 16) % 200,
            (i >> 8) & 255,
            i & 255,
            7,
            1024 + (i % 60_000)
        );
        let (_, bytes) = TcpPacket::new(&src, "10.99.0.1:80")
            .syn()
            .seq(i.wrapping_mul(2_654_435_761))
            .mss(1460)
            .ethernet()
            .build();
        let ts = t0 + Span(span * i as i64 / syns as i64 - span / 10);
        let len = bytes.len() as u32;
        all.push((ts, bytes, len));
    }
    all.sort_by_key(|r| r.0);
    let mut w = PcapWriter::new(Vec::new(), LinkType::ETHERNET, 65_535, true, false).unwrap();
    for (ts, data, len) in &all {
        w.write_packet(*ts, data, *len).unwrap();
    }
    (alone, w.into_inner())
}

/// A flow's fields but its id, capture name and first record number.
fn comparable(f: &FlowSummary) -> serde_json::Value {
    let mut v = serde_json::to_value(f).unwrap();
    for k in ["id", "capture", "first_frame"] {
        v.as_object_mut().unwrap().remove(k);
    }
    v
}

fn tight() -> AnalysisConfig {
    AnalysisConfig {
        budget: Budget {
            total_bytes: 1 << 30,
            attempt_bytes: 256 << 10,
        },
        ..Default::default()
    }
}

#[test]
fn a_transfer_inside_a_flood_is_the_transfer_alone() {
    let (alone, flood) = captures(20_000);
    let (_, solo, _) = analyze_reader(&mut reader(&alone), AnalysisConfig::default(), NoObserver);
    assert_eq!(solo.len(), 1);
    let (capture, flows, _) = analyze_reader(&mut reader(&flood), tight(), NoObserver);
    let transfer: Vec<&FlowSummary> = flows.iter().filter(|f| f.server == solo[0].server).collect();
    assert_eq!(transfer.len(), 1, "the transfer is one flow");
    assert_eq!(comparable(transfer[0]), comparable(&solo[0]));
    assert!(solo[0].verdict.is_judged(), "{:?}", solo[0].verdict);

    // The budget (~1,100 attempts) was far too small: attempts were ended early, none
    // with data, and said so.
    let k = &capture.connections;
    assert!(k.evicted_without_data > 15_000, "{k:?}");
    assert_eq!(k.evicted_with_data, 0);
    // At most the attempts' budget and one attempt, plus the transfer's tracker (~15 KB).
    assert!(k.peak_bytes <= (256 << 10) + (96 << 10), "{}", k.peak_bytes);
    // The flood: found, its attempts counted and summarised, the first few listed.
    let a = &capture.attempts;
    assert_eq!((a.attempts, a.unanswered, a.with_data), (20_001, 20_000, 1));
    assert_eq!(capture.flows, 20_001);
    assert_eq!(flows.len() as u64, capture.flows - a.folded);
    assert!(a.folded > 19_900, "{a:?}");
    let kinds: Vec<&str> = capture.floods.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(kinds, ["syn-flood", "failed-attempts"]);
    let f = &capture.floods[0];
    assert_eq!(
        (f.target.as_deref(), f.attempts, f.failed),
        (Some("10.99.0.1:80"), 20_000, 20_000)
    );
    let sources = f.distinct_sources.unwrap() as f64 / 20_000.0;
    assert!((sources - 1.0).abs() < 0.2, "{sources}");
    assert_eq!(f.answered_share, 0.0);

    // Every way of running it gives the same flows in the same order, and the same capture.
    let json = |c: &CaptureSummary, f: &[FlowSummary]| serde_json::to_string(&(c, f)).unwrap();
    let one = json(&capture, &flows);
    for workers in [1, 2, 3] {
        let (c, f) = analyze_reader_parallel(&mut reader(&flood), tight(), workers, &mut |_| {});
        assert_eq!(json(&c, &f), one, "{workers} workers");
    }
    // --all lists every attempt.
    let all = AnalysisConfig {
        list_all: true,
        ..tight()
    };
    let (c, f, _) = analyze_reader(&mut reader(&flood), all, NoObserver);
    assert_eq!((f.len() as u64, c.attempts.folded), (20_001, 0));
}

#[test]
fn the_real_syn_scan_is_a_port_scan() {
    // The shared corpus sits beside the checkout (CI), or beside the folder of worktrees.
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = [here.join("../shared"), here.join("../../shared")]
        .into_iter()
        .find(|p| p.is_dir())
        .expect("../shared (the shared corpora) is needed by this test")
        .join("external/nDPI__synscan.pcap");
    let bytes = std::fs::read(&path).expect("nDPI__synscan.pcap in ../shared/external");
    let (capture, flows, _) = analyze_reader(&mut reader(&bytes), AnalysisConfig::default(), NoObserver);
    // tshark: 1,994 SYNs from 172.16.0.8 to 1,000 ports of 64.13.134.52; 12 SYN/ACKs
    // (3 connections), 5 resets.
    let a = &capture.attempts;
    assert_eq!(
        (a.syns, a.attempts, a.distinct_sources, a.distinct_hosts),
        (1_994, 1_994, 1, 1)
    );
    assert_eq!((a.unanswered, a.refused, a.half_open, a.with_data), (1_986, 5, 3, 0));
    let scan = capture
        .floods
        .iter()
        .find(|f| f.kind == FloodKind::PortScan)
        .expect("a port scan");
    assert_eq!(
        (scan.source.as_deref(), scan.target.as_deref()),
        (Some("172.16.0.8"), Some("64.13.134.52"))
    );
    let ports = scan.distinct_ports.unwrap() as f64;
    assert!((ports / 1_000.0 - 1.0).abs() < 0.1, "{ports}");
    assert!(
        capture.floods.iter().all(|f| f.kind != FloodKind::SynFlood),
        "23 s of probes is no flood"
    );
    // The first 19 attempts are listed (the finding needs 20 to be judged), the rest folded.
    assert_eq!(flows.len() as u64 + a.folded, capture.flows);
    assert!(flows.len() < 40, "{}", flows.len());
}
