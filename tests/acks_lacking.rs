//! A capture that lacks the receiver's acknowledgments for seconds (a one-sided capture,
//! asymmetric routing, a capture that dropped them: ../shared's EmergeSync) states no figure
//! that only those acknowledgments tell: no largest flight (data sent less the ACKs seen
//! grows with every segment while they are missing), no window scale inferred from such
//! flights, no delivery of a loss episode over the wait. The same transfer with its
//! acknowledgments in the capture states all three.
//!
//! Checked from the outside (the JSON and text views of `analyze`), so that the test runs
//! against any build.

mod cli_common;
use bdpscope::capture::{LinkType, PcapWriter};
use bdpscope::summary::FlowSummary;
use bdpscope::testkit::TcpPacket;
use bdpscope::time::{Span, Timestamp};
use cli_common::*;
use serde_json::Value;

const C: &str = "10.0.0.1:40000";
const S: &str = "10.0.0.2:873";
const MSS: u32 = 1448;
/// The client's window field (its scale is unknown: no handshake in the capture).
const WIN: u16 = 500;

/// A download picked up mid-stream next to the client: a 12-byte request the server answers
/// 100 ms later, then a segment every 10 ms for 7 s, a data segment of the client's every
/// second but from 1 s to 6 s. With `acks`, each second segment is acknowledged at once (1 ms later); without,
/// the client's pure ACKs from 1 s to 6 s are not in the capture. At 2.0 s and 2.3 s the
/// server re-sends two segments (a loss episode).
fn capture(acks: bool) -> Vec<u8> {
    let mut w = PcapWriter::new(Vec::new(), LinkType::ETHERNET, 65_535, false, false).unwrap();
    let mut packets: Vec<(f64, TcpPacket)> = Vec::new();
    let (mut cseq, mut sseq) = (1u32, 1u32);
    packets.push((
        0.0,
        TcpPacket::new(C, S).seq(cseq).ack(sseq).payload_len(12).window(WIN),
    ));
    cseq += 12;
    let mut sent = Vec::new();
    let mut t = 100.0;
    let mut n = 0;
    while t < 7000.0 {
        packets.push((
            t,
            TcpPacket::new(S, C)
                .seq(sseq)
                .ack(cseq)
                .payload_len(MSS as usize)
                .window(8000),
        ));
        sent.push((t, sseq, cseq));
        sseq += MSS;
        n += 1;
        let missing = !acks && (1000.0..6000.0).contains(&t);
        if n % 2 == 0 && !missing {
            packets.push((t + 1.0, TcpPacket::new(C, S).seq(cseq).ack(sseq).window(WIN)));
        }
        // A request of the client's every second outside the gap, acknowledging what it
        // has.
        if (t as u64).is_multiple_of(1000) && t > 100.0 && !(1000.0..6000.0).contains(&t) {
            packets.push((
                t + 5.0,
                TcpPacket::new(C, S).seq(cseq).ack(sseq).payload_len(100).window(WIN),
            ));
            cseq += 100;
        }
        t += 10.0;
    }
    // Two re-sendings of segments sent 0.5 s before, neither the oldest outstanding.
    for at in [2000.0, 2300.0] {
        let &(_, seq, ack) = sent.iter().find(|(ts, _, _)| *ts >= at - 500.0).unwrap();
        packets.push((
            at + 2.0,
            TcpPacket::new(S, C)
                .seq(seq)
                .ack(ack)
                .payload_len(MSS as usize)
                .window(8000),
        ));
    }
    packets.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (ms, p) in packets {
        let (_, bytes) = p.ethernet().build();
        let ts = Timestamp(1_700_000_000_000_000_000) + Span::from_micros((ms * 1e3) as i64);
        w.write_packet(ts, &bytes, bytes.len() as u32).unwrap();
    }
    w.into_inner()
}

fn analyze(pcap: &[u8], format: &str) -> String {
    let o = run_stdin(&["analyze", "--all", "--format", format, "-"], pcap);
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

fn flow(pcap: &[u8]) -> Value {
    let v: Value = serde_json::from_str(&analyze(pcap, "json")).unwrap();
    let flows = v["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 1, "{flows:?}");
    flows[0].clone()
}

fn loss_episodes(f: &Value) -> Vec<&Value> {
    f["stalls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "loss-episode")
        .collect()
}

#[test]
fn a_capture_without_the_receivers_acks_states_no_flight_no_scale_and_no_delivery() {
    let pcap = capture(false);
    let f = flow(&pcap);
    let notes = f["notes"].to_string();
    assert!(
        notes.contains("acknowledgments reached the server that the capture lacks"),
        "{notes}"
    );
    assert_eq!(f["verdict"], "undetermined");
    // No flight: the field is there (the spec's), null; the direction says why.
    assert!(f.get("max_flight_bytes").is_some());
    assert!(f["max_flight_bytes"].is_null(), "{}", f["max_flight_bytes"]);
    assert!(f["s2c"]["max_flight_bytes"].is_null(), "{}", f["s2c"]);
    let lacking = &f["s2c"]["acks_lacking"];
    let secs = lacking["seconds"].as_f64().unwrap();
    assert!((4.0..=5.2).contains(&secs), "{lacking}");
    // The client's data went on being acknowledged by the server: its flight is known.
    assert!(f["c2s"]["max_flight_bytes"].is_u64(), "{}", f["c2s"]);
    // No scale of the client's windows from the server's flights.
    let inferred = &f["handshake"]["inferred"];
    assert!(inferred.is_null() || inferred["client_wscale"].is_null(), "{inferred}");
    // The loss episode's delivery is not known: no rate, no "0 B delivered".
    let episodes = loss_episodes(&f);
    assert_eq!(episodes.len(), 1, "{}", f["stalls"]);
    let e = episodes[0];
    assert!(e.get("delivered_bps").is_none_or(Value::is_null), "{e}");
    let sentence = e["sentence"].as_str().unwrap();
    assert!(!sentence.contains("delivered during it"), "{sentence}");
    assert!(sentence.contains("not known"), "{sentence}");
    // The text view says the same.
    let text = analyze(&pcap, "text");
    let window = text.lines().find(|l| l.trim_start().starts_with("window ")).unwrap();
    assert!(
        window.contains("max flight not followed (the capture lacks the client's acknowledgments for"),
        "{window}"
    );
    assert!(!text.contains("0 B delivered"), "{text}");
    let handshake = text.lines().find(|l| l.trim_start().starts_with("handshake ")).unwrap();
    assert!(!handshake.contains("inferred"), "{handshake}");
    // And the summary keeps every law, the one of lacking acknowledgments among them.
    let summary: FlowSummary = serde_json::from_value(f.clone()).unwrap();
    assert_eq!(bdpscope::laws::check(&summary), vec![]);
}

#[test]
fn the_same_transfer_with_its_acks_states_them_all() {
    let f = flow(&capture(true));
    let notes = f["notes"].to_string();
    assert!(!notes.contains("that the capture lacks"), "{notes}");
    assert!(f["s2c"].get("acks_lacking").is_none(), "{}", f["s2c"]);
    let flight = f["max_flight_bytes"].as_u64().unwrap();
    assert!((MSS as u64..=4 * MSS as u64).contains(&flight), "{flight}");
    assert!(
        f["handshake"]["inferred"]["client_wscale"].is_u64(),
        "{}",
        f["handshake"]
    );
    let episodes = loss_episodes(&f);
    assert_eq!(episodes.len(), 1, "{}", f["stalls"]);
    assert!(
        episodes[0]["sentence"]
            .as_str()
            .unwrap()
            .contains("delivered during it"),
        "{}",
        episodes[0]
    );
    let summary: FlowSummary = serde_json::from_value(f.clone()).unwrap();
    assert_eq!(bdpscope::laws::check(&summary), vec![]);
}

#[test]
fn the_flight_plot_shades_the_wait_and_draws_no_flight_across_it() {
    let t = TempDir::new("acks-lacking-plot");
    for (acks, name) in [(false, "lacking.pcap"), (true, "whole.pcap")] {
        let cap = t.file(name, &capture(acks));
        let out = t.0.join(format!("plots-{acks}"));
        let o = run(&[
            "plot",
            cap.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--flow",
            "0",
            "--svg-only",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let svg = std::fs::read_to_string(out.join("flow-0-flight.svg")).unwrap();
        let legend = svg.contains("ACKs not in the capture: flight unknown");
        assert_eq!(legend, !acks, "{name}: legend of the wait");
    }
}
