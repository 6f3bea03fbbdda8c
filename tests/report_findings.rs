//! The report says what the text view says of a flow, and lists the flows `analyze` lists:
//! every stall (kind and sentence) of every fixture, in its flow's section and its row of
//! the table; a flow without payload that stalled or failed gets its section; the attempts
//! a scan finding summarises are counted, not listed (`--all` lists them).

mod cli_common;
use cli_common::*;

use bdpscope::capture::{LinkType, PcapWriter};
use bdpscope::summary::FlowSummary;
use bdpscope::testkit::{scan, sim, TcpPacket};
use bdpscope::time::{Span, Timestamp};
use std::path::Path;
use std::time::Duration;

/// Text as maud writes it into the page.
fn escaped(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

fn flows(args: &[&str]) -> Vec<FlowSummary> {
    let mut all = vec!["analyze", "--format", "json"];
    all.extend_from_slice(args);
    let doc: serde_json::Value = serde_json::from_str(&ok(&all)).expect("JSON");
    serde_json::from_value(doc["flows"].clone()).expect("flows")
}

/// The report of `args` (captures and options), as written.
fn report(dir: &TempDir, args: &[&str]) -> String {
    let out = dir.0.join("report");
    let mut all = vec!["report", "--out", out.to_str().unwrap()];
    all.extend_from_slice(args);
    ok(&all);
    std::fs::read_to_string(out.join("index.html")).unwrap()
}

/// The flow table's rows: each flow's id (the first cell's sort value), in page order.
fn table_ids(html: &str) -> Vec<u64> {
    html.split("<tr data-verdict=")
        .skip(1)
        .map(|row| {
            let v = row.split("data-v=\"").nth(1).expect("a cell");
            v[..v.find('"').unwrap()].parse().expect("an id")
        })
        .collect()
}

fn fixtures() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut out = Vec::new();
    for dir in std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .filter(|d| d.path().is_dir())
    {
        for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
            if f.file_name().to_string_lossy().contains(".pcap") {
                out.push(f.path().to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

/// Every stall of every fixture's flows, as the text view prints it (kind: sentence), is in
/// the report's section of its flow, and its kind in the flow's row of the table.
#[test]
fn every_stall_the_text_view_says_is_in_the_report() {
    let caps = fixtures();
    let caps: Vec<&str> = caps.iter().map(String::as_str).collect();
    let text = ok(&[&["analyze"], &caps[..]].concat());
    let dir = TempDir::new("report-stalls");
    let html = report(&dir, &caps);
    let mut said = 0;
    for f in flows(&caps) {
        // The flow's section (several captures: `flow-PLACE-ID`, the capture's place from 1).
        let place = caps.iter().position(|c| *c == f.capture).expect("its capture") + 1;
        let anchor = format!("<section class=\"flow\" id=\"flow-{place}-{}\"", f.id);
        let section = html.split(&anchor).nth(1).map(|s| s.split("<section").next().unwrap());
        let section = section.unwrap_or_else(|| panic!("{}: no section for flow {}", f.capture, f.id));
        let mut last = 0;
        for s in &f.stalls {
            let line = format!("{}: {}", s.kind, s.sentence);
            assert!(text.contains(&line), "the text view says {line:?}");
            let item = format!("<li><b>{}</b>: {}</li>", s.kind, escaped(&s.sentence));
            let at = section.find(&item);
            assert!(at.is_some(), "{} flow {}: no {item:?} in its section", f.capture, f.id);
            // In the order the text view gives them.
            assert!(at.unwrap() >= last, "{} flow {}: out of order", f.capture, f.id);
            last = at.unwrap();
            said += 1;
        }
    }
    assert!(said >= 10, "only {said} stalls among the fixtures");
    assert!(html.contains("<h3>Stalls</h3>"));
    assert!(html.contains(">loss-episode</td>") && html.contains(">zero-window</td>"));
}

/// A connection refused after its SYN was sent twice: no payload, two findings.
fn refused_attempt() -> Vec<u8> {
    let (c, s) = ("10.1.0.1:40000", "10.1.0.2:443");
    let t0 = Timestamp::from_secs_f64(1_700_000_000.0);
    let syn = TcpPacket::new(c, s).syn().seq(1000).mss(1460).ethernet();
    let rst = TcpPacket::new(s, c).rst().ack(1001).window(0).ethernet();
    let mut w = PcapWriter::new(Vec::new(), LinkType::ETHERNET, 65_535, true, false).unwrap();
    for (at, p) in [(0, &syn), (1_000, &syn), (1_001, &rst)] {
        w.write_packet(t0 + Span::from_millis(at), &p.build().1, p.wire_len() as u32)
            .unwrap();
    }
    w.into_inner()
}

/// What the text view shows of a flow by default, the report shows: a flow without payload
/// whose SYN was retried and refused has its stalls and notes there, in a section of its
/// own, not "in the table only".
#[test]
fn a_flow_without_payload_that_failed_has_its_findings_in_the_report() {
    let dir = TempDir::new("report-no-payload");
    let cap = dir.file("refused.pcap", &refused_attempt());
    let cap = cap.to_str().unwrap();
    let fl = flows(&[cap]);
    assert_eq!(fl.len(), 1);
    let f = &fl[0];
    assert_eq!(f.bytes.c2s + f.bytes.s2c, 0);
    let kinds: Vec<&str> = f.stalls.iter().map(|s| s.kind.as_str()).collect();
    assert_eq!(kinds, ["syn-retransmission", "reset"]);
    let text = ok(&["analyze", cap]);
    assert!(text.contains("\nflow 0 "), "the text view shows it:\n{text}");
    let html = report(&dir, &[cap]);
    assert!(html.contains("<section class=\"flow\" id=\"flow-0\""), "no section");
    assert!(html.contains("href=\"#flow-0\""), "its row links to it");
    for s in &f.stalls {
        assert!(html.contains(&escaped(&s.sentence)), "no {:?}", s.sentence);
    }
    for n in &f.notes {
        assert!(html.contains(&escaped(n)), "no note {n:?}");
    }
    assert!(!html.contains("in the table only"));
}

/// A transfer beside a scan of 200 ports: the report's table lists the flows `analyze`
/// lists (the transfer and the attempts that ended before the finding held), not a row per
/// probe; with `--all` both list every connection.
#[test]
fn the_report_lists_the_flows_analyze_lists() {
    let path = sim::Path::new(10_000_000, Duration::from_millis(40));
    let out = sim::run(&path, &[sim::Flow::default()], Duration::from_millis(1_000));
    let dir = TempDir::new("report-scan");
    let cap = dir.file("scan.pcap", &scan::with_port_scan(&out.sender_side_pcap, 200));
    let cap = cap.to_str().unwrap();
    let ids = |f: Vec<FlowSummary>| f.iter().map(|f| f.id).collect::<Vec<u64>>();
    let listed = ids(flows(&[cap]));
    assert!(
        listed.len() < 40,
        "the scan's attempts are summarised: {}",
        listed.len()
    );
    let html = report(&dir, &[cap]);
    assert_eq!(table_ids(&html), listed);
    assert!(html.contains("connection attempts without data are summarised here"));
    let every = ids(flows(&["--all", cap]));
    assert_eq!(every.len(), 201);
    assert_eq!(table_ids(&report(&dir, &["--all", cap])), every);
}
