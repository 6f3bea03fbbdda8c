//! The report says what the text view says of a flow: every stall (kind and sentence) of
//! every fixture, in its flow's section and its row of the table.

mod cli_common;
use cli_common::*;

use bdpscope::summary::FlowSummary;
use std::path::Path;

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
