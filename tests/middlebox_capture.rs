//! Middlebox findings end to end: hand-built captures (pcap bytes) through
//! `analysis::analyze_reader`, as `bdpscope analyze` runs them. No files needed.

use bdpscope::analysis::{analyze_reader, AnalysisConfig};
use bdpscope::capture::{CaptureReader, LinkType, PcapWriter};
use bdpscope::decode::TcpFlags;
use bdpscope::observe::NoObserver;
use bdpscope::summary::{FlowSummary, MiddleboxFinding};
use bdpscope::testkit::TcpPacket;
use bdpscope::time::Timestamp;

const C: &str = "10.0.0.1:40000";
const S: &str = "10.0.0.2:5001";
const CISN: u32 = 1_000_000;
const SISN: u32 = 5_000_000;

struct Cap {
    pkts: Vec<(i64, TcpPacket)>,
}

impl Cap {
    fn new() -> Cap {
        Cap { pkts: Vec::new() }
    }
    fn at(&mut self, us: i64, p: TcpPacket) -> &mut Self {
        self.pkts.push((us, p));
        self
    }
    fn analyze(&self) -> Vec<FlowSummary> {
        let mut w = PcapWriter::new(Vec::new(), LinkType::ETHERNET, 65535, true, false).unwrap();
        for (us, p) in &self.pkts {
            let (_, bytes) = p.build();
            w.write_packet(
                Timestamp::from_nanos(1_700_000_000_000_000_000 + us * 1000),
                &bytes,
                p.wire_len() as u32,
            )
            .unwrap();
        }
        let mut r = CaptureReader::from_reader(std::io::Cursor::new(w.into_inner())).unwrap();
        let config = AnalysisConfig {
            capture_name: "test".into(),
            ..Default::default()
        };
        analyze_reader(&mut r, config, NoObserver).1
    }
}

fn syn(ws: Option<u8>) -> TcpPacket {
    let p = TcpPacket::new(C, S)
        .seq(CISN)
        .flags(TcpFlags::SYN)
        .window(65535)
        .mss(1460)
        .sack_perm()
        .ts(100, 0);
    match ws {
        Some(w) => p.wscale(w),
        None => p,
    }
}

fn syn_ack(ws: Option<u8>, window: u16) -> TcpPacket {
    let p = TcpPacket::new(S, C)
        .seq(SISN)
        .ack(CISN + 1)
        .flags(TcpFlags::SYN | TcpFlags::ACK)
        .window(window)
        .mss(1460)
        .sack_perm()
        .ts(500, 100);
    match ws {
        Some(w) => p.wscale(w),
        None => p,
    }
}

/// A download seen next to the client: `n` segments in bursts of `burst`, 60 ms apart,
/// each ACKed at once with the raw window `cwin`; the server's segments carry `swin`.
fn download(cap: &mut Cap, n: u32, burst: u32, cwin: u16, swin: u16) {
    let mut t = 121_000i64;
    let mut sent = 0;
    let (mut sv, mut cv) = (1000u32, 200u32);
    while sent < n {
        sv += 1;
        cv += 1;
        for i in 0..burst.min(n - sent) {
            let seq = 1 + (sent + i) * 1448;
            let us = t + i as i64 * 10;
            cap.at(
                us,
                TcpPacket::new(S, C)
                    .seq(SISN + seq)
                    .ack(CISN + 1)
                    .window(swin)
                    .ts(sv, cv - 1)
                    .payload_len(1448),
            );
            cap.at(
                us + 5,
                TcpPacket::new(C, S)
                    .seq(CISN + 1)
                    .ack(SISN + seq + 1448)
                    .window(cwin)
                    .ts(cv, sv),
            );
        }
        sent += burst.min(n - sent);
        t += 60_000;
    }
}

fn kinds(f: &[MiddleboxFinding]) -> Vec<(&str, &str, &str)> {
    f.iter()
        .map(|m| (m.kind.as_str(), m.direction.as_str(), m.confidence.as_str()))
        .collect()
}

#[test]
fn window_scale_stripped_from_the_syn_ack_seen_at_the_client() {
    // The server scales by 2^10 (its windows are 64 raw) and keeps 270 segments in flight
    // against the client's 65535 unscaled: both ends' behaviour shows the missing option.
    let mut cap = Cap::new();
    cap.at(0, syn(Some(7))).at(60_000, syn_ack(None, 65160));
    cap.at(
        60_050,
        TcpPacket::new(C, S)
            .seq(CISN + 1)
            .ack(SISN + 1)
            .window(65535)
            .ts(101, 500),
    );
    download(&mut cap, 2700, 270, 65535, 64);
    let flows = cap.analyze();
    assert_eq!(flows.len(), 1);
    let k = kinds(&flows[0].middlebox);
    assert!(k.contains(&("wscale-stripped", "syn-ack", "certain")), "{k:?}");
    assert!(k.contains(&("wscale-mismatch", "syn-ack", "certain")), "{k:?}");
}

#[test]
fn window_scale_missing_from_a_modern_syn_seen_at_the_server() {
    let mut cap = Cap::new();
    cap.at(0, syn(None)).at(50, syn_ack(None, 65160));
    cap.at(
        60_050,
        TcpPacket::new(C, S)
            .seq(CISN + 1)
            .ack(SISN + 1)
            .window(65535)
            .ts(101, 500),
    );
    download(&mut cap, 200, 40, 65535, 65160);
    let flows = cap.analyze();
    assert_eq!(kinds(&flows[0].middlebox), vec![("wscale-stripped", "syn", "possible")]);
}

#[test]
fn a_clean_connection_has_no_finding() {
    let mut cap = Cap::new();
    cap.at(0, syn(Some(7))).at(60_000, syn_ack(Some(10), 65160));
    cap.at(
        60_050,
        TcpPacket::new(C, S)
            .seq(CISN + 1)
            .ack(SISN + 1)
            .window(32759)
            .ts(101, 500),
    );
    download(&mut cap, 2700, 270, 32759, 64);
    let flows = cap.analyze();
    assert!(flows[0].middlebox.is_empty(), "{:?}", flows[0].middlebox);
}
