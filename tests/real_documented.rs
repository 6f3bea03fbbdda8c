//! What the sources of ../shared/real document about their captures is reported: each test
//! names the capture, the section of ../shared/real/SOURCES.md that documents it (its
//! [doc] line, what its source says, or its [tshark] line, what the capture shows), and
//! checks the analysis reports that behaviour — the stall, the loss episode and its time,
//! the outage and its length, the scale state, the window never shown as bytes when its
//! scale is unknown. Under CI (`BDPSCOPE_CI`) a missing ../shared fails the tests.

mod needs;

use bdpscope::summary::{FlowSummary, Label, StallKind, Verdict, WindowScaling};
use serde::Deserialize;
use std::path::PathBuf;
use std::process::Command;

#[derive(Deserialize)]
struct Document {
    flows: Vec<FlowSummary>,
}

fn real(name: &str) -> Option<PathBuf> {
    let p = needs::shared()?.join("real").join(name);
    if !p.is_file() {
        needs::missing(&format!("{} is absent", p.display()));
        return None;
    }
    Some(p)
}

/// Every flow of the capture (`--all`: flows too short to judge too), and the text view.
fn analyze(name: &str) -> Option<(Vec<FlowSummary>, String)> {
    analyze_path(real(name)?, name)
}

fn analyze_path(p: PathBuf, name: &str) -> Option<(Vec<FlowSummary>, String)> {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_bdpscope"))
            .args(args)
            .arg(&p)
            .output()
            .expect("run bdpscope");
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).expect("UTF-8")
    };
    let json: Document = serde_json::from_str(&run(&["analyze", "--all", "--format", "json"])).expect("JSON");
    Some((json.flows, run(&["analyze", "--all"])))
}

fn stalls(f: &FlowSummary, kind: StallKind) -> Vec<&bdpscope::summary::Stall> {
    f.stalls.iter().filter(|s| s.kind == kind).collect()
}

fn rel(f: &FlowSummary, t: f64) -> f64 {
    t - f.start_ts
}

/// §25 (file name: a zero window, then recovery): the client's window goes 8760 -> 0, a
/// window update reopens it 10 ms later.
#[test]
fn zero_window_recovery() {
    let Some((flows, text)) = analyze("chrissanders__packets__tcp_zerowindowrecovery.pcapng") else {
        return;
    };
    let z = stalls(&flows[0], StallKind::ZeroWindow);
    assert_eq!(z.len(), 1, "{:?}", flows[0].stalls);
    assert!(z[0].recovered && (z[0].duration_s - 0.010).abs() < 0.002, "{:?}", z[0]);
    assert!(text.contains("zero-window") && text.contains("reopened"), "{text}");
}

/// §26 (file name: a zero window that never recovers): Win=0 answered to each probe at
/// +3.4, +10.2, +23.7 s (the persist back-off); no recovery in 23.7 s.
#[test]
fn zero_window_that_never_reopens() {
    let Some((flows, text)) = analyze("chrissanders__packets__tcp_zerowindowdead.pcapng") else {
        return;
    };
    let z = stalls(&flows[0], StallKind::ZeroWindow);
    assert_eq!(z.len(), 1, "{:?}", flows[0].stalls);
    assert!(!z[0].recovered && z[0].events == 3, "{:?}", z[0]);
    let probes: Vec<f64> = z[0]
        .intervals_s
        .iter()
        .scan(0.0, |t, i| {
            *t += i;
            Some(*t)
        })
        .collect();
    for (got, want) in probes.iter().zip([3.4, 10.2, 23.7]) {
        assert!((got - want).abs() < 0.1, "probes at {probes:?}");
    }
    assert!(
        text.contains("never reopened") && text.contains("persist back-off"),
        "{text}"
    );
    // No RTT from the probes' spacing: the one sample is the 29 µs ACK.
    assert!(flows[0].rtt_ms.max.is_none_or(|m| m < 1.0), "{:?}", flows[0].rtt_ms);
}

/// §27: one segment sent at 0, 0.206, 0.806, 2.006, 4.406, 9.211 s: RTO back-off (0.2,
/// 0.6, 1.2, 2.4, 4.8 s), nothing from the receiver: the connection lost.
#[test]
fn retransmission_back_off_and_a_lost_connection() {
    let Some((flows, text)) = analyze("chrissanders__packets__tcp_retransmissions.pcapng") else {
        return;
    };
    let f = &flows[0];
    assert_eq!(f.retransmitted_segments, 5);
    let lost = stalls(f, StallKind::Lost);
    assert_eq!(lost.len(), 1, "{:?}", f.stalls);
    for (got, want) in lost[0].intervals_s.iter().zip([0.2, 0.6, 1.2, 2.4, 4.8]) {
        assert!((got - want).abs() < 0.01, "{:?}", lost[0].intervals_s);
    }
    assert!(
        text.contains("RTO back-off") && text.contains("connection lost"),
        "{text}"
    );
    assert!(
        f.rtt_ms.samples == 0 && f.max_rwnd_bytes.is_none(),
        "one-sided: no RTT, rwnd unknown"
    );
}

/// §1: 15 zero windows from the receiver between t = 0.985 s and 1.488 s; the SYN offers
/// wscale 8, the SYN/ACK none: scaling off.
#[test]
fn smtp_upload_zero_windows_and_scaling_off() {
    let Some((flows, text)) = analyze("OISF__suricata-verify__mime-stream-depth__input.pcap") else {
        return;
    };
    let f = &flows[0];
    assert_eq!(f.handshake.window_scaling, WindowScaling::Off);
    assert_eq!(f.handshake.client_wscale, Some(8));
    assert_eq!(f.handshake.server_wscale, None);
    let z = stalls(f, StallKind::ZeroWindow);
    assert_eq!(z.len(), 1, "{:?}", f.stalls);
    assert!(
        (rel(f, z[0].start) - 0.985).abs() < 0.01 && z[0].recovered,
        "{:?}",
        z[0]
    );
    assert!(text.contains("closed 15 times"), "{text}");
    // The server's SYN/ACK carried no scale: the client reads its windows unscaled, and
    // keeps within them, whatever the capture's ACK timing suggests (it read 71,540 B over
    // a 64,240-B window when evidence from the flight overrode the handshake).
    assert_eq!(f.max_rwnd_bytes, Some(64_240));
    assert!(f.sender_max_flight_bytes.unwrap() <= 64_240, "{text}");
}

/// §8 ([doc]): "long stalls (about 38ms) in the middle of the responses to many read
/// requests"; the largest ack_rtt is 38.55 ms.
#[test]
fn nfs_stalls_of_about_38_ms() {
    let Some((flows, text)) = analyze("realjimmy__sample-captures__nfs_bad_stalls.cap") else {
        return;
    };
    let f = flows.iter().max_by_key(|f| f.bytes.s2c).unwrap();
    let waits = stalls(f, StallKind::DelayedAck);
    assert_eq!(waits.len(), 1, "{:?}", f.stalls);
    assert!(waits[0].events >= 40, "{:?}", waits[0]);
    assert!(waits[0].sentence.contains("up to 38.5 ms"), "{}", waits[0].sentence);
    assert!(text.contains("delayed ACK"), "{text}");
}

/// §33 ([doc]): "Find First Retransmitted ... Identify Time Length of Impact": 21
/// retransmissions, all between 60 and 80 s, where the rate dips; mid-stream, scale unknown.
#[test]
fn a_loss_episode_located_in_time() {
    let Some((flows, _)) = analyze("seabhull__SharkFestTraces__SF20_Trace1.pcapng") else {
        return;
    };
    let f = &flows[0];
    let episodes = stalls(f, StallKind::LossEpisode);
    assert!(
        episodes
            .iter()
            .any(|e| (60.0..63.0).contains(&rel(f, e.start)) && (70.0..80.0).contains(&rel(f, e.end))),
        "{:?}",
        episodes
            .iter()
            .map(|e| (rel(f, e.start), rel(f, e.end)))
            .collect::<Vec<_>>()
    );
    // The 8 s of nothing acknowledged inside it is an outage of its own.
    assert!(
        stalls(f, StallKind::Outage).iter().any(|o| o.duration_s > 5.0),
        "{:?}",
        f.stalls
    );
    assert_eq!(f.handshake.window_scaling, WindowScaling::Unknown);
}

/// §29 ([doc]): "TCP Window Scaling examples - available, no scaling and missing/unknown":
/// stream 0 wscale 8/7, stream 1 wscale 8/none, stream 2 starts at the SYN/ACK (wscale 7).
#[test]
fn window_scaling_on_off_and_half_known() {
    let Some((flows, text)) = analyze("larry-lime__packet-trace-research__win_tcp_scale_examples_anon.pcapng") else {
        return;
    };
    let states: Vec<WindowScaling> = flows.iter().map(|f| f.handshake.window_scaling).collect();
    assert_eq!(states, [WindowScaling::On, WindowScaling::Off, WindowScaling::On]);
    assert_eq!(
        (flows[2].handshake.client_wscale, flows[2].handshake.server_wscale),
        (None, Some(7))
    );
    assert!(text.contains("only the SYN/ACK is in the capture: wscale 7"), "{text}");
}

/// §23: no handshake; the receiver's raw window is 12 292 with its scale unknown, and the
/// flight reaches 466 KB: the raw value must not be read as the window in bytes.
#[test]
fn a_window_of_unknown_scale_is_not_shown_as_bytes() {
    let Some((flows, text)) = analyze("realjimmy__sample-captures__SMB_445_upload_v2.pcap") else {
        return;
    };
    let f = flows.iter().max_by_key(|f| f.bytes.c2s).unwrap();
    assert!(f.max_rwnd_bytes.is_none_or(|w| w > 12_292), "{:?}", f.max_rwnd_bytes);
    assert!(!text.contains("12.0 KiB") && !text.contains("12292 B"), "{text}");
}

/// §32 ([doc], the lab's published answers): "the receiver buffer is not the bottleneck".
#[test]
fn the_textbook_upload_is_not_receiver_window_limited() {
    let Some((flows, _)) =
        analyze("moranzcw__Computer-Networking-A-Top-Down-Approach-NOTES__tcp-ethereal-trace-1.pcap")
    else {
        return;
    };
    let f = flows.iter().max_by_key(|f| f.bytes.c2s).unwrap();
    assert_ne!(f.verdict, Verdict::Limited(Label::ReceiverWindow), "{:?}", f.evidence);
}

/// §4/§5: the iperf3 server resets both test connections while data is still arriving
/// (136 and 176 RSTs from 10.0.0.2).
#[test]
fn iperf_connections_reset_mid_transfer() {
    for name in [
        "teto__pymptcpanalyzer__client_1_tcp_only.pcap",
        "teto__pymptcpanalyzer__server_1_tcp_only.pcap",
    ] {
        let Some((flows, _)) = analyze(name) else { return };
        let bulk: Vec<&FlowSummary> = flows.iter().filter(|f| f.bytes.c2s > 1_000_000).collect();
        assert_eq!(bulk.len(), 2, "{name}");
        for f in bulk {
            assert!(
                !stalls(f, StallKind::Reset).is_empty(),
                "{name} flow {}: {:?}",
                f.id,
                f.stalls
            );
        }
    }
}

/// §11: mid-stream rsync download whose receiver's pure ACKs are not in the file ("RTT,
/// rwnd and flight from this capture are therefore not trustworthy"): the spells with
/// nothing acknowledged are no outages (the server kept sending new data through them and
/// never re-sent its oldest), the note says the capture lacks the ACKs, and the flow is
/// not judged on a flight the capture cannot show.
#[test]
fn emerge_sync_lacks_the_receivers_acks() {
    let Some((flows, _)) = analyze("realjimmy__sample-captures__EmergeSync.cap") else {
        return;
    };
    let f = flows.iter().max_by_key(|f| f.bytes.s2c).unwrap();
    assert_eq!(f.handshake.window_scaling, WindowScaling::Unknown);
    assert!(
        f.max_rwnd_bytes.is_none(),
        "raw windows of unknown scale: {:?}",
        f.max_rwnd_bytes
    );
    assert!(stalls(f, StallKind::Outage).is_empty(), "{:?}", f.stalls);
    assert!(
        f.notes
            .iter()
            .any(|n| n.contains("that is no outage") && n.contains("never re-sent its oldest")),
        "{:?}",
        f.notes
    );
    assert_eq!(f.verdict, Verdict::Undetermined, "{:?}", f.notes);
}

/// §9 ([doc]): "A sample TCP/HTTP of a file transfer using ECN ... Frame 48 experienced
/// Congestion Encountered"; tshark: 52 CE-marked data packets, 132 ACKs with ECE (the
/// SYN/ACK's among them), no loss: the congestion signal is ECN only.
#[test]
fn ecn_marks_from_frame_48() {
    let Some((flows, text)) = analyze("realjimmy__sample-captures__tcp-ecn-sample.pcap") else {
        return;
    };
    let f = &flows[0];
    assert_eq!(f.retransmitted_segments, 0);
    assert!(text.contains("52 CE from frame 48"), "{text}");
    assert!(text.contains("131 ACKs with ECE"), "{text}");
    assert!(!stalls(f, StallKind::EcnEpisode).is_empty(), "{:?}", f.stalls);
}

/// §28: three duplicate ACKs from the client, then the server's fast retransmission.
#[test]
fn three_duplicate_acks_then_a_fast_retransmission() {
    let Some((flows, _)) = analyze("chrissanders__packets__tcp_dupack.pcapng") else {
        return;
    };
    let f = &flows[0];
    assert_eq!((f.s2c.duplicate_acks, f.s2c.retransmitted_segments), (3, 1));
}

/// ../shared/external's zeek pppoe-over-qinq (a 413 ms path): 12 retransmissions of the
/// client's, 5 of them spurious (D-SACK) and 7 repairing an outage. None shows a queue that
/// overflowed, so nothing showed the pipe full, and the delivery figure is a lower bound
/// that says so (it was judged by the repairs, counted before they were known: "16.1
/// kbit/s while the sender had data = 131% of the bottleneck estimate"). Its rate while
/// the sender had data stands above that bound (a few segments a bin, each bin's ACKs
/// counted whole), and the delivery sentence says so, its share the steady delivery's.
#[test]
fn an_outages_repairs_show_no_full_pipe() {
    let Some(shared) = needs::shared() else { return };
    let p = shared.join("external").join("zeek__pppoe-over-qinq.pcap");
    if !p.is_file() {
        needs::missing(&format!("{} is absent", p.display()));
        return;
    }
    let (flows, text) = analyze_path(p, "pppoe-over-qinq").unwrap();
    let f = &flows[0];
    assert_eq!(f.retransmitted_segments, 12);
    assert!(
        text.contains("5 of them spurious") && text.contains("7 of them repairing what an outage lost"),
        "{text}"
    );
    let c = f.capacity.as_ref().unwrap();
    assert!(c.lower_bound, "{c:?}");
    assert!(f.notes.iter().any(|n| n.contains("lower bound")), "{:?}", f.notes);
    let delivery = f.evidence.iter().find(|e| e.starts_with("steady delivery ")).unwrap();
    assert!(delivery.contains(bdpscope::diagnose::BUSY_ABOVE), "{delivery}");
}
