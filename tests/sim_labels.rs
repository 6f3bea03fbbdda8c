//! The analyser against simulated captures whose truth is known: each limitation at two
//! rates and RTTs, judged from both capture points (the sender's interface, before the
//! bottleneck, and the receiver's, after it). Library API only; no external corpus.
//!
//! For every flow: the verdict is the label the scenario was built for, the minimum RTT
//! is within 2 ms of the simulated base RTT, the BDP within 25 % of rate x base RTT, and
//! the receiver-window share within 0.15 of the share the simulated sender spent
//! receiver-window-limited after its warm-up.
//!
//! SIM_DUMP=DIR writes each scenario's two captures there and prints the simulator's own
//! limit shares beside the analysis (for looking into a failure with the CLI).

use bdpscope::analysis::{analyze_reader, AnalysisConfig};
use bdpscope::capture::CaptureReader;
use bdpscope::diagnose::Label;
use bdpscope::observe::NoObserver;
use bdpscope::summary::FlowSummary;
use bdpscope::testkit::sim::{self, App, Cc, Flow, Path, Reader, Stack};
use std::time::Duration;

fn ms(x: u64) -> Duration {
    Duration::from_millis(x)
}

fn path(mbit: u64, rtt_ms: u64) -> Path {
    Path::new(mbit * 1_000_000, ms(rtt_ms))
}

fn analyse(pcap: &[u8]) -> Vec<FlowSummary> {
    let mut r = CaptureReader::from_reader(std::io::Cursor::new(pcap.to_vec())).expect("pcap");
    analyze_reader(&mut r, AnalysisConfig::default(), NoObserver).1
}

/// The first flow of a run as each end's capture shows it, named by its side.
fn first_flow_at_each_end(out: &sim::SimOutput) -> [(&'static str, FlowSummary); 2] {
    let t = &out.truth[0];
    [
        ("sender-side", &out.sender_side_pcap),
        ("receiver-side", &out.receiver_side_pcap),
    ]
    .map(|(side, pcap)| {
        let f = analyse(pcap)
            .into_iter()
            .find(|f| f.client == t.client)
            .expect("the flow");
        (side, f)
    })
}

/// Which comparisons a scenario makes (all of them unless a known analyser limitation
/// is split off into an ignored test).
#[derive(Clone, Copy)]
struct Checks {
    bdp_sender_side: bool,
}

const ALL: Checks = Checks { bdp_sender_side: true };

/// Runs one scenario and compares the analysis of both captures with the truth.
/// Returns the mismatches (empty when all is well) after printing one line per flow and
/// capture point.
fn compare(name: &str, p: &Path, flows: &[Flow], secs: u64, label: Label, checks: Checks) -> Vec<String> {
    compare_run(name, p, flows, secs, label, checks).0
}

fn compare_run(
    name: &str,
    p: &Path,
    flows: &[Flow],
    secs: u64,
    label: Label,
    checks: Checks,
) -> (Vec<String>, sim::SimOutput) {
    let out = sim::run(p, flows, Duration::from_secs(secs));
    if let Ok(dir) = std::env::var("SIM_DUMP") {
        let stem = name.replace(['/', ' '], "_");
        std::fs::write(format!("{dir}/{stem}-snd.pcap"), &out.sender_side_pcap).unwrap();
        std::fs::write(format!("{dir}/{stem}-rcv.pcap"), &out.receiver_side_pcap).unwrap();
    }
    let mut bad = Vec::new();
    for (side, pcap) in [
        ("sender-side", &out.sender_side_pcap),
        ("receiver-side", &out.receiver_side_pcap),
    ] {
        let got = analyse(pcap);
        assert_eq!(got.len(), out.truth.len(), "{name} {side}: flows");
        for t in &out.truth {
            let f = got
                .iter()
                .find(|f| f.client == t.client && f.server == t.server)
                .unwrap_or_else(|| panic!("{name} {side}: no flow {}", t.client));
            let limits = f.limits.unwrap_or_default();
            let base = t.base_rtt.as_secs_f64() * 1e3;
            let truth_share = t.steady.rwnd_share();
            if std::env::var("SIM_DUMP").is_ok() {
                println!("truth steady: rwnd {:.3} cwnd {:.3} sender {:.3} idle {:.3} at-capacity {:.3}; retrans {} drops {}",
                    t.steady.rwnd_share(), t.steady.cwnd_share(), t.steady.sender_share(), t.steady.idle_share(), t.steady.capacity_share(), t.retransmitted_segments, t.queue_drops);
            }
            println!(
                "{name:28} {side:13} {}: {:24} rwnd {:.3} (truth {:.3})  bdp {:>7} (truth {:>7})  min rtt {:.3} ms (base {:.3})",
                f.client,
                f.verdict,
                limits.receiver_window,
                truth_share,
                f.bdp_bytes.map_or("-".into(), |b| b.to_string()),
                t.bdp_bytes,
                f.rtt_ms.min.unwrap_or(f64::NAN),
                base,
            );
            let mut fail = |what: String| bad.push(format!("{name} {side} {}: {what}", t.client));
            if f.verdict != label {
                fail(format!(
                    "verdict {} (limits {limits:?}, notes {:?})",
                    f.verdict, f.notes
                ));
            }
            match f.rtt_ms.min {
                Some(m) if (m - base).abs() <= 2.0 => {}
                m => fail(format!("min RTT {m:?} ms, base {base:.3} ms")),
            }
            if checks.bdp_sender_side || side == "receiver-side" {
                let want = t.bdp_bytes as f64;
                match f.bdp_bytes {
                    Some(b) if (b as f64 - want).abs() <= 0.25 * want => {}
                    b => fail(format!("BDP {b:?}, truth {want} (notes {:?})", f.notes)),
                }
            }
            if (limits.receiver_window - truth_share).abs() > 0.15 {
                fail(format!(
                    "receiver-window share {:.3}, truth {truth_share:.3}",
                    limits.receiver_window
                ));
            }
        }
    }
    (bad, out)
}

fn assert_all(results: Vec<Vec<String>>) {
    let bad: Vec<String> = results.into_iter().flatten().collect();
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

#[test]
fn receive_window_far_below_the_bdp_is_receiver_window_limited() {
    let l = Some(Label::ReceiverWindow);
    assert_all(vec![
        // BDP 97 kB, window 30.6 kB
        compare(
            "rwnd 10M 80ms",
            &path(10, 80),
            &[Flow {
                rcvbuf: 32_000,
                intended: l,
                ..Flow::default()
            }],
            5,
            Label::ReceiverWindow,
            ALL,
        ),
        // BDP 121 kB, window 39 kB
        compare(
            "rwnd 50M 20ms",
            &path(50, 20),
            &[Flow {
                rcvbuf: 40_000,
                intended: l,
                ..Flow::default()
            }],
            5,
            Label::ReceiverWindow,
            ALL,
        ),
    ]);
}

#[test]
fn big_windows_without_loss_are_bottleneck_limited() {
    let l = Some(Label::Bottleneck);
    assert_all(vec![
        compare(
            "bottleneck 10M 20ms",
            &path(10, 20),
            &[Flow {
                intended: l,
                ..Flow::default()
            }],
            5,
            Label::Bottleneck,
            ALL,
        ),
        compare(
            "bottleneck 50M 80ms",
            &path(50, 80),
            &[Flow {
                intended: l,
                ..Flow::default()
            }],
            5,
            Label::Bottleneck,
            ALL,
        ),
    ]);
}

#[test]
fn random_loss_with_a_big_window_is_cwnd_limited() {
    let l = Some(Label::Cwnd);
    assert_all(vec![
        compare(
            "loss 1.5% cubic 10M 80ms",
            &Path {
                loss: 0.015,
                ..path(10, 80)
            },
            &[Flow {
                intended: l,
                ..Flow::default()
            }],
            5,
            Label::Cwnd,
            ALL,
        ),
        compare(
            "loss 1% reno 50M 20ms",
            &Path {
                loss: 0.01,
                seed: 7,
                ..path(50, 20)
            },
            &[Flow {
                cc: Cc::Reno,
                intended: l,
                ..Flow::default()
            }],
            5,
            Label::Cwnd,
            ALL,
        ),
    ]);
}

#[test]
fn application_bursts_are_sender_limited() {
    let l = Some(Label::Sender);
    assert_all(vec![
        compare(
            "on/off 200kB/300ms 50M 40ms",
            &path(50, 40),
            &[Flow {
                app: App::OnOff {
                    burst: 204_800,
                    every: ms(300),
                },
                intended: l,
                ..Flow::default()
            }],
            5,
            Label::Sender,
            ALL,
        ),
        compare(
            "on/off 100kB/500ms 10M 80ms",
            &path(10, 80),
            &[Flow {
                app: App::OnOff {
                    burst: 100_000,
                    every: ms(500),
                },
                intended: l,
                ..Flow::default()
            }],
            5,
            Label::Sender,
            ALL,
        ),
        // Writes more often than the round trip: the sender is never idle (each burst goes
        // out before the one before it is acknowledged), yet stays far below its window.
        // (The simulated sender's flat flight already reads as its own; the lab's Linux
        // sender of fixtures/app_onoff_300ms, whose Nagle-held tails break the flat
        // flight, needs `UnusedRoom`'s third rule: tests/fixtures_truth.rs.)
        compare(
            "on/off 96kB/300ms 30M 310ms",
            &path(30, 310),
            &[Flow {
                app: App::OnOff {
                    burst: 98_304,
                    every: ms(300),
                },
                intended: l,
                ..Flow::default()
            }],
            6,
            Label::Sender,
            ALL,
        ),
    ]);
}

#[test]
fn a_send_buffer_far_below_the_bdp_is_sender_limited() {
    let l = Some(Label::Sender);
    assert_all(vec![
        // BDP 480 kB, 110 kB of send buffer (Linux's SO_SNDBUF 64 KiB)
        compare(
            "sndbuf 110kB 50M 80ms",
            &path(50, 80),
            &[Flow {
                sndbuf: Some(110_000),
                intended: l,
                ..Flow::default()
            }],
            5,
            Label::Sender,
            ALL,
        ),
        // BDP 97 kB, 30 kB of send buffer
        compare(
            "sndbuf 30kB 10M 80ms",
            &path(10, 80),
            &[Flow {
                sndbuf: Some(30_000),
                intended: l,
                ..Flow::default()
            }],
            5,
            Label::Sender,
            ALL,
        ),
    ]);
}

fn slow_readers() -> [(&'static str, Path, Flow); 2] {
    let l = Some(Label::ReceiverWindow);
    [
        (
            "slow reader 4M 50M 40ms",
            path(50, 40),
            Flow {
                rcvbuf: 80_480,
                reader: Reader::Rate {
                    bps: 4_000_000,
                    tick: ms(100),
                },
                intended: l,
                ..Flow::default()
            },
        ),
        (
            "slow reader 2M 10M 20ms",
            path(10, 20),
            Flow {
                rcvbuf: 64_000,
                reader: Reader::Rate {
                    bps: 2_000_000,
                    tick: ms(100),
                },
                intended: l,
                ..Flow::default()
            },
        ),
    ]
}

#[test]
fn a_slow_reader_with_zero_windows_is_receiver_window_limited() {
    let results = slow_readers()
        .iter()
        .map(|(name, p, f)| {
            let (mut bad, out) = compare_run(
                name,
                p,
                std::slice::from_ref(f),
                5,
                Label::ReceiverWindow,
                Checks { bdp_sender_side: false },
            );
            if out.truth[0].zero_window_acks == 0 {
                bad.push(format!("{name}: the receiver never advertised a zero window"));
            }
            bad
        })
        .collect();
    assert_all(results);
}

/// Known analyser limitation, the same on the real `slow_reader` capture of the corpus
/// (server side: BDP 38 kB where rate x RTT is 240 kB): before the bottleneck, a flow
/// that never fills the path shows the bottleneck only in its ACK spacing, and a receiver
/// whose window keeps closing acknowledges much of a window at once (delayed ACKs while
/// its reader sleeps, then a window update when it reads, as in the real trace). The
/// analyser says so in a note ("the bottleneck rate (and the BDP) is a lower bound") and
/// reports 32 kB for 241 kB (50 Mbit/s, 40 ms) and 14 kB for 25 kB (10 Mbit/s, 20 ms)
/// from the sender side; the receiver side gets both within 6 %.
#[test]
#[ignore = "analyser: sender-side BDP of a slow-reader flow is only a lower bound"]
fn a_slow_reader_sender_side_bdp() {
    let results = slow_readers()
        .iter()
        .map(|(name, p, f)| compare(name, p, std::slice::from_ref(f), 5, Label::ReceiverWindow, ALL))
        .collect();
    assert_all(results);
}

#[test]
fn three_flows_sharing_the_bottleneck_are_each_bottleneck_limited() {
    let l = Some(Label::Bottleneck);
    // iperf -P 3 style: the connections open within a few ms of each other, so each
    // handshake still sees the empty queue.
    let three = [
        Flow {
            intended: l,
            ..Flow::default()
        },
        Flow {
            start: ms(5),
            intended: l,
            ..Flow::default()
        },
        Flow {
            start: ms(10),
            cc: Cc::Reno,
            intended: l,
            ..Flow::default()
        },
    ];
    assert_all(vec![
        compare("3 flows 50M 80ms", &path(50, 80), &three, 5, Label::Bottleneck, ALL),
        compare("3 flows 10M 20ms", &path(10, 20), &three, 5, Label::Bottleneck, ALL),
    ]);
}

/// On a link where one full frame's serialisation is longer than the propagation both ways
/// (1 Mbit/s: 12 ms a 1514-byte frame, against a 2 ms path), the handshake's round trip
/// lacks most of a data segment's: the BDP, the window that keeps the link busy, is the
/// rate times that round trip plus one segment (Facts::bdp_at), and says so.
#[test]
fn a_serialisation_dominated_path_holds_a_segment_more_than_the_handshakes_round_trip() {
    let out = sim::run(
        &path(1, 2),
        &[Flow {
            intended: Some(Label::Bottleneck),
            ..Flow::default()
        }],
        Duration::from_secs(5),
    );
    let t = &out.truth[0];
    for (side, f) in first_flow_at_each_end(&out) {
        let (want, bdp) = (t.bdp_bytes as f64, f.bdp_bytes.expect("a BDP") as f64);
        println!(
            "{side}: BDP {bdp} (truth {want}), min RTT {:?} ms, segment {:?} ms",
            f.rtt_ms.min, f.bdp_segment_ms
        );
        assert!((bdp - want).abs() <= 0.25 * want, "{side}: BDP {bdp}, truth {want}");
        // The minimum RTT stays the handshake's: it is the path's least round trip.
        assert!(f.rtt_ms.min.unwrap() < 5.0, "{side}: min RTT {:?}", f.rtt_ms.min);
        let seg = f.bdp_segment_ms.expect("the segment's serialisation added");
        assert!((9.0..=13.0).contains(&seg), "{side}: {seg} ms added");
        assert!(
            f.evidence
                .iter()
                .any(|e| e.starts_with("BDP ") && e.contains("+ ") && e.contains("handshake's")),
            "{side}: {:?}",
            f.evidence
        );
    }
}

/// On the same kind of link, delivery windows of four handshake round trips (4 x 3.2 ms)
/// are shorter than one 1400-byte segment takes there (11.7 ms): one holds a single ACK,
/// and read over its length that ACK's two segments came "faster than the link" (1.40
/// Mbit/s on a 1 Mbit/s link, the flow's delivery taken as its capacity). Delivery rates
/// span rounds of a full data segment's round trip (`data_round`), so no figure exceeds
/// the link (without it: 1.40 Mbit/s at the receiver).
#[test]
fn a_delivery_rate_spans_a_data_segments_round_trip_not_the_handshakes() {
    // Census seed 1111: a 1 Mbit/s, 2 ms path (400-packet queue) carrying an upload from an
    // old stack to a Windows receiver and a download beside it, the receiver's host
    // stamping in pairs.
    let mut p = path(1, 2);
    p.queue_pkts = 400;
    p.seed = 15610221014118859561;
    p.cross = Some(sim::CrossTraffic {
        rate_bps: 100_000,
        frame_bytes: 1514,
    });
    p.sender_capture.resolution = ms(1);
    p.sender_capture.snaplen = 96;
    p.receiver_capture.snaplen = 1514;
    p.receiver_capture.coalesce = Some(sim::Coalesce {
        max_packets: 2,
        window: Duration::from_micros(177),
        per_packet: Duration::ZERO,
    });
    let out = sim::run(
        &p,
        &[
            Flow {
                sender_stack: Stack::old(true),
                receiver_stack: Stack::windows(),
                mss: 1400,
                reader: Reader::Rate {
                    bps: 19_000_000,
                    tick: ms(100),
                },
                upload: true,
                start: ms(7),
                ..Flow::default()
            },
            Flow {
                receiver_stack: Stack::windows(),
                rcvbuf: 16000,
                mss: 536,
                reader: Reader::Rate {
                    bps: 11_000_000,
                    tick: ms(100),
                },
                start: ms(51),
                ..Flow::default()
            },
        ],
        Duration::from_secs(3),
    );
    let [sender, receiver] = first_flow_at_each_end(&out);
    for (side, f) in [&sender, &receiver] {
        let c = f.capacity.as_ref().expect("a capacity");
        println!(
            "{side}: bottleneck {:?} ({:?}), delivery {:?}, goodput {}, min RTT {:?} ms",
            f.bottleneck_bps, c.method, c.delivery_bps, f.goodput_bps, f.rtt_ms.min
        );
        // The payload's share of a 1514-byte frame on a 1 Mbit/s link, and a tenth for the
        // stamps and the window's last segment.
        let link = 1e6 * 1448.0 / 1514.0;
        for (what, r) in [("bottleneck", f.bottleneck_bps), ("delivery", c.delivery_bps)] {
            if let Some(r) = r {
                assert!(r <= 1.1 * link, "{side}: {what} {r} above the link's {link}");
            }
        }
        assert!(f.goodput_bps <= 1.02 * link, "{side}: goodput {}", f.goodput_bps);
    }
    // The evidence names the windows for what they are, where a delivery was measured.
    let f = &receiver.1;
    assert!(
        f.evidence
            .iter()
            .any(|e| e.contains("delivery over 4 round trips of a full segment (")),
        "{:?}",
        f.evidence
    );
}
