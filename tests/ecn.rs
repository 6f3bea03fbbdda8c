//! ECN end to end: a simulated path whose bottleneck marks instead of dropping (the
//! simulator knows every mark, echo and reduction), the real capture ../shared documents
//! (SOURCES.md §9: "Frame 48 experienced Congestion Encountered"), and every capture of
//! ../shared/real and ../shared/external against tshark's per-direction counts.

mod needs;

use bdpscope::analysis::{analyze_reader, AnalysisConfig};
use bdpscope::capture::CaptureReader;
use bdpscope::observe::NoObserver;
use bdpscope::summary::{AdviceKind, EcnMode, EcnOffer, FlowSummary, Label, StallKind, Verdict};
use bdpscope::testkit::sim::{self, Flow, Path};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

fn analyse(pcap: &[u8]) -> Vec<FlowSummary> {
    let mut r = CaptureReader::from_reader(std::io::Cursor::new(pcap.to_vec())).expect("pcap");
    analyze_reader(&mut r, AnalysisConfig::default(), NoObserver).1
}

/// 20 Mbit/s, 40 ms, a 100-packet queue whose AQM marks ECN-capable packets from 20
/// packets of backlog on; one CUBIC download with ECN.
fn marking_path() -> sim::SimOutput {
    let p = Path {
        ecn_mark_pkts: Some(20),
        ..Path::new(20_000_000, Duration::from_millis(40))
    };
    sim::run(
        &p,
        &[Flow {
            ecn: true,
            ..Flow::default()
        }],
        Duration::from_secs(5),
    )
}

#[test]
fn a_marking_bottleneck_is_reported_as_a_loss_would_be_from_either_side() {
    let out = marking_path();
    let t = &out.truth[0];
    // The simulated flow: marked, echoed and cut, and never lost a segment.
    assert!(t.ce_marks >= 10 && t.ecn_reductions >= 2, "{t:?}");
    assert_eq!((t.retransmitted_segments, t.queue_drops), (0, 0));
    assert_eq!(t.cwr_segments, t.ecn_reductions as u64);
    for (side, pcap) in [("sender", &out.sender_side_pcap), ("receiver", &out.receiver_side_pcap)] {
        let flows = analyse(pcap);
        let f = &flows[0];
        let h = &f.handshake;
        assert_eq!(
            (h.client_ecn, h.server_ecn, h.ecn),
            (Some(EcnOffer::Rfc3168), Some(EcnOffer::Rfc3168), EcnMode::Rfc3168),
            "{side}"
        );
        let d = &f.s2c;
        // Marks are seen only past the marking queue; echoes and reductions anywhere.
        let ce = if side == "receiver" { t.ce_marks } else { 0 };
        assert_eq!(
            (d.ce_segments, d.ece_acks, d.cwr_segments),
            (ce, t.ece_acks, t.cwr_segments),
            "{side}"
        );
        // Every new data segment went ECT(0) (or was marked on its way), none ECT(1).
        assert_eq!(
            (d.ect0_segments + d.ce_segments, d.ect1_segments),
            (d.data_segments, 0),
            "{side}"
        );
        // The client sent only pure ACKs: Not-ECT (RFC 3168 §6.1.4).
        assert_eq!(f.c2s.ect0_segments + f.c2s.ce_segments, 0, "{side}");
        assert_eq!(f.retransmitted_segments, 0);
        assert!(f.verdict.is_judged(), "{side}: {:?}", f.notes);
        // The marks are the evidence the pipe was full: the capacity is judged by.
        assert!(
            f.capacity.as_ref().is_some_and(|c| !c.lower_bound),
            "{side}: {:?}",
            f.capacity
        );
        let ecn = f
            .evidence
            .iter()
            .find(|e| e.starts_with("ECN: "))
            .unwrap_or_else(|| panic!("{side}: {:?}", f.evidence));
        let head = if side == "receiver" {
            format!("ECN: {} segments marked CE (", t.ce_marks)
        } else {
            format!("ECN: {} ACKs echoed ECE from +", t.ece_acks)
        };
        assert!(ecn.starts_with(&head), "{side}: {ecn}");
        assert!(
            ecn.contains(&format!("reduced its congestion window {} times (CWR)", t.cwr_segments)),
            "{ecn}"
        );
        assert!(
            f.advice_items.iter().any(|a| a.kind == AdviceKind::CongestedPath),
            "{side}: {:?}",
            f.advice
        );
        assert!(
            !f.advice_items.iter().any(|a| a.kind == AdviceKind::FindLoss),
            "{side}: no loss to find"
        );
        // Episodes as loss episodes are made of retransmissions, adding up to the totals.
        let episodes: Vec<_> = f.stalls.iter().filter(|s| s.kind == StallKind::EcnEpisode).collect();
        assert!(!episodes.is_empty(), "{side}: {:?}", f.stalls);
        assert_eq!(
            episodes.iter().map(|s| s.events as u64).sum::<u64>(),
            ce + t.ece_acks + t.cwr_segments,
            "{side}"
        );
        assert!(
            f.verdict == Verdict::Limited(Label::Cwnd) || f.verdict == Verdict::Limited(Label::Bottleneck),
            "{side}: {}",
            f.verdict
        );
        let broken = bdpscope::laws::check(f);
        assert!(broken.is_empty(), "{side}: {broken:?}");
    }
}

#[test]
fn the_ecn_law_catches_a_misstated_count() {
    let out = marking_path();
    let mut f = analyse(&out.receiver_side_pcap).remove(0);
    assert!(bdpscope::laws::check(&f).is_empty());
    let e = f.evidence.iter_mut().find(|e| e.starts_with("ECN: ")).unwrap();
    *e = e.replacen("ECN: ", "ECN: 1", 1);
    assert!(
        bdpscope::laws::check(&f).iter().any(|v| v.law == "ecn"),
        "{:?}",
        f.evidence
    );
    // And a congested path beside a raise of the buffer is a contradiction.
    let mut f = analyse(&out.receiver_side_pcap).remove(0);
    let mut raise = f.advice_items[0].clone();
    raise.kind = AdviceKind::RaiseReceiveBuffer;
    f.advice_items.push(raise);
    assert!(bdpscope::laws::check(&f).iter().any(|v| v.law == "ecn"));
}

/// ECN per direction of every flow of a capture, as tshark counts it: (src, dst) ->
/// [ECT(0), ECT(1), CE, ECE echoes for this direction's data, CWR], the innermost IP
/// header's codepoint (what the transport gets; tshark's last occurrence).
fn tshark_counts(path: &std::path::Path) -> Option<HashMap<(String, String), [u64; 5]>> {
    let out = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(path)
        // No reassembly for the application's dissectors: TCP headers are all we read (the
        // VNC capture takes 74 s with it, 0.6 s without).
        .args(["-o", "tcp.desegment_tcp_streams:FALSE"])
        .args([
            "-Y",
            "tcp and not icmp and not icmpv6",
            "-T",
            "fields",
            "-E",
            "occurrence=l",
            "-E",
            "separator=/t",
        ])
        .args([
            "-e",
            "ip.src",
            "-e",
            "ipv6.src",
            "-e",
            "tcp.srcport",
            "-e",
            "ip.dst",
            "-e",
            "ipv6.dst",
            "-e",
            "tcp.dstport",
        ])
        .args([
            "-e",
            "ip.dsfield.ecn",
            "-e",
            "ipv6.tclass.ecn",
            "-e",
            "tcp.flags.ece",
            "-e",
            "tcp.flags.cwr",
        ])
        .args(["-e", "tcp.flags.syn", "-e", "tcp.flags.ack", "-e", "ip.version"])
        .output()
        .ok()?;
    if !out.status.success() && out.stdout.is_empty() {
        return None;
    }
    let mut m: HashMap<(String, String), [u64; 5]> = HashMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let c: Vec<&str> = line.split('\t').collect();
        if c.len() < 13 {
            continue;
        }
        let v6 = c[12] == "6";
        let end = |a4: &str, a6: &str, port: &str| {
            if v6 {
                format!("[{a6}]:{port}")
            } else {
                format!("{a4}:{port}")
            }
        };
        let (src, dst) = (end(c[0], c[1], c[2]), end(c[3], c[4], c[5]));
        let ecn: u64 = (if v6 { c[7] } else { c[6] }).parse().unwrap_or(0);
        let flag = |s: &str| s == "1" || s == "True";
        let (ece, cwr, syn, ack) = (flag(c[8]), flag(c[9]), flag(c[10]), flag(c[11]));
        let mine = m.entry((src.clone(), dst.clone())).or_default();
        match ecn {
            2 => mine[0] += 1,
            1 => mine[1] += 1,
            3 => mine[2] += 1,
            _ => {}
        }
        if cwr && !syn {
            mine[4] += 1;
        }
        if ece && ack && !syn {
            m.entry((dst, src)).or_default()[3] += 1;
        }
    }
    Some(m)
}

fn analyse_file(path: &std::path::Path) -> Vec<FlowSummary> {
    let out = Command::new(env!("CARGO_BIN_EXE_bdpscope"))
        .args(["analyze", "--all", "--format", "json"])
        .arg(path)
        .output()
        .expect("run bdpscope");
    #[derive(serde::Deserialize)]
    struct Doc {
        flows: Vec<FlowSummary>,
    }
    serde_json::from_slice::<Doc>(&out.stdout).map_or(Vec::new(), |d| d.flows)
}

#[test]
fn the_documented_capture_reports_frame_48_as_the_first_ce_and_tshark_s_counts() {
    let Some(shared) = needs::shared() else { return };
    let Some(path) = needs::shared_file(&shared, "real/realjimmy__sample-captures__tcp-ecn-sample.pcap") else {
        return;
    };
    let flows = analyse_file(&path);
    assert_eq!(flows.len(), 1);
    let f = &flows[0];
    let (h, d) = (&f.handshake, &f.s2c);
    assert_eq!(h.ecn, EcnMode::Rfc3168);
    // SOURCES.md §9: "Frame 48 experienced Congestion Encountered"; tshark: 116 ECT and
    // 52 CE data packets from the server, 131 ACKs with ECE after the handshake (132 with
    // the SYN/ACK's), 46 CWR, no retransmission.
    assert_eq!(d.first_ce_frame, Some(48));
    assert_eq!((d.ect0_segments, d.ect1_segments, d.ce_segments), (116, 0, 52));
    assert_eq!((d.ece_acks, d.cwr_segments), (131, 46));
    assert_eq!(f.retransmitted_segments, 0);
    // Frame 48 is at +6.823 s after the SYN (tshark's frame.time_relative).
    let first = d.first_ce_ts.unwrap() - f.start_ts;
    assert!((first - 6.823).abs() < 1e-6, "{first}");
    assert!(f.evidence.iter().any(|e| e.starts_with("ECN: 52 segments marked CE (31% of the direction's 170) from +6.82 s to +94.0 s, echoed on 131 ACKs (ECE); the sender reduced its congestion window 46 times (CWR)")), "{:?}", f.evidence);
    assert!(
        f.advice_items.iter().any(|a| a.kind == AdviceKind::CongestedPath),
        "{:?}",
        f.advice
    );
    let episodes = f.stalls.iter().filter(|s| s.kind == StallKind::EcnEpisode).count();
    assert!(episodes >= 1, "{:?}", f.stalls);
    // The text view says where the first mark is.
    let text = Command::new(env!("CARGO_BIN_EXE_bdpscope"))
        .arg("analyze")
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("ecn rfc3168/rfc3168 (rfc3168)"), "{text}");
    assert!(
        text.contains("s2c: 116 ECT(0), 52 CE from frame 48 (+6.82 s) to +94.0 s, 131 ACKs with ECE, 46 CWR"),
        "{text}"
    );
    // The packets CSV marks frame 48 "ce".
    let csv = Command::new(env!("CARGO_BIN_EXE_bdpscope"))
        .arg("packets")
        .arg(&path)
        .output()
        .unwrap();
    let csv = String::from_utf8_lossy(&csv.stdout);
    let row = csv.lines().find(|l| l.starts_with("48,")).unwrap();
    assert!(row.ends_with(",ce"), "{row}");
    assert_eq!(csv.lines().skip(1).filter(|l| l.ends_with(",ce")).count(), 52);
}

/// Every capture of ../shared/real and ../shared/external: the ECN counts of every flow
/// direction are tshark's. (Those with ECN: the documented sample; irc-dcc-send, ECN
/// negotiated, ECT both ways; bot, an ECN-setup SYN sent ECT(0), declined; ipoib, ECT data
/// after a SYN/ACK the capture lacks; truncated-header, a setup SYN declined.)
#[test]
fn every_direction_s_ecn_counts_are_tshark_s() {
    let Some(shared) = needs::shared() else { return };
    if !needs::program("tshark", "apt-get install tshark") {
        return;
    }
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in ["real", "external"] {
        for e in std::fs::read_dir(shared.join(dir)).unwrap().flatten() {
            let p = e.path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if p.is_file() && (name.contains(".pcap") || name.ends_with(".cap")) {
                files.push(p);
            }
        }
    }
    files.sort();
    let (mut with_ecn, mut bad) = (Vec::new(), Vec::new());
    for path in &files {
        let Some(theirs) = tshark_counts(path) else { continue };
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        // Ours per direction, summed over the flows of a 4-tuple (a reused port's lives).
        let mut ours: HashMap<(String, String), [u64; 5]> = HashMap::new();
        for f in analyse_file(path) {
            for (src, dst, d) in [(&f.client, &f.server, &f.c2s), (&f.server, &f.client, &f.s2c)] {
                let o = ours.entry((src.clone(), dst.clone())).or_default();
                for (i, v) in [
                    d.ect0_segments,
                    d.ect1_segments,
                    d.ce_segments,
                    d.ece_acks,
                    d.cwr_segments,
                ]
                .into_iter()
                .enumerate()
                {
                    o[i] += v;
                }
            }
        }
        if ours.values().any(|c| c.iter().any(|&n| n > 0)) {
            with_ecn.push(name.clone());
        }
        for (k, o) in &ours {
            let t = theirs.get(k).copied().unwrap_or_default();
            if *o != t {
                bad.push(format!("{name} {} -> {}: ours {o:?}, tshark {t:?}", k.0, k.1));
            }
        }
    }
    eprintln!("captures with ECN: {with_ecn:?}");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    for must in [
        "realjimmy__sample-captures__tcp-ecn-sample.pcap",
        "zeek__zeek__irc-dcc-send.pcapng",
        "ntop__nDPI__bot.pcap",
        "tcpdump__ipoib.pcap",
    ] {
        assert!(with_ecn.iter().any(|n| n == must), "{must} not among {with_ecn:?}");
    }
}
