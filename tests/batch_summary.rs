//! `bdpscope batch`'s summary (summary.md and summary.html) lists the captures' floods and
//! scans with their figures (capture, kind, target, source, attempts: the capture
//! summary's), and the stalls of the judged flows: per kind, and the flows with the
//! longest ones, from the flows table's `stalls` and `stall_durations_s`.

mod batch_util;
mod needs;

use batch_util::*;
use bdpscope::testkit::TcpPacket;
use std::path::{Path, PathBuf};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(rel)
}

/// One host trying 40 ports of another, each refused: a port scan (Zeek's threshold is
/// 15 distinct ports).
fn port_scan() -> Vec<u8> {
    let t0: i64 = 1_700_000_000_000_000_000;
    let mut recs: Vec<Rec> = Vec::new();
    for i in 0..40u32 {
        let port = 20 + i as u16;
        let t = t0 + i64::from(i) * 10_000_000;
        let syn = TcpPacket::new("10.9.9.9:50000", &format!("10.0.0.2:{port}"))
            .syn()
            .seq(1000 + i);
        let rst = TcpPacket::new(&format!("10.0.0.2:{port}"), "10.9.9.9:50000")
            .rst()
            .ack(1001 + i);
        for (dt, p) in [(0, syn), (200_000, rst)] {
            recs.push((t + dt, p.build().1, p.wire_len() as u32));
        }
    }
    pcap(&recs)
}

/// The rows of the markdown table under `title`.
fn table<'a>(md: &'a str, title: &str) -> Vec<&'a str> {
    let start = md.find(title).unwrap_or_else(|| panic!("no {title} in\n{md}"));
    md[start + title.len()..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .collect()
}

#[test]
fn the_summary_lists_floods_scans_and_stalls() {
    let dir = scratch("summary-sections");
    let scan = dir.join("scan.pcap");
    write(&scan, &port_scan());
    let loss = fixture("loss_cubic/server.pcap.gz");
    let slow = fixture("slow_reader/server.pcap.gz");
    let out = dir.join("out");
    let o = batch(&[&scan, &loss, &slow], &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();

    // The scan, with its figures (the captures table's `floods` says only "port-scan 10.0.0.2").
    let floods = table(&md, "## Floods and scans (");
    let scan_row = floods
        .iter()
        .find(|r| r.contains("port-scan"))
        .unwrap_or_else(|| panic!("no port scan in\n{md}"));
    assert_eq!(
        *scan_row,
        format!("| {} | port-scan | 10.0.0.2 | 10.9.9.9 | 40 |", scan.display())
    );

    // Stalls per kind over the judged flows (the fixtures' truth: one loss episode of
    // 3.74 s in loss_cubic, one zero window of 3.66 s in slow_reader), and the longest.
    let kinds = table(&md, "## Stalls");
    assert!(kinds.contains(&"| loss-episode | 1 | 1 | 3.74 s |"), "{kinds:#?}");
    assert!(kinds.contains(&"| zero-window | 1 | 1 | 3.66 s |"), "{kinds:#?}");
    let longest = table(&md, "### Longest stalls");
    assert_eq!(longest.len(), 2, "{longest:#?}");
    assert!(
        longest[0].starts_with(&format!("| {} | 0 | ", loss.display()))
            && longest[0].ends_with(" | loss-episode | 3.74 s |"),
        "{longest:#?}"
    );
    assert!(longest[1].contains("| zero-window | 3.66 s |"), "{longest:#?}");

    // The same sections in the HTML page.
    let html = std::fs::read_to_string(out.join("summary.html")).unwrap();
    for s in [
        "id=\"floods\"",
        "id=\"stalls\"",
        "port-scan",
        "10.9.9.9",
        "Longest stalls",
        "3.74 s",
    ] {
        assert!(html.contains(s), "{s} not in summary.html");
    }

    // The durations are the flows table's, item for item with `stalls`.
    let (header, rows) = csv_rows(&out.join("flows.csv"));
    let names = fields(&header);
    let at = |n: &str| names.iter().position(|c| c == n).unwrap();
    let (kinds_at, secs_at) = (at("stalls"), at("stall_durations_s"));
    for r in rows.iter().map(|r| fields(r)) {
        let k = r[kinds_at].split(" | ").filter(|s| !s.is_empty()).count();
        let s = r[secs_at].split(" | ").filter(|s| !s.is_empty()).count();
        assert_eq!(k, s, "{r:?}");
    }
}

#[test]
fn the_real_syn_scan_is_in_the_summary() {
    let Some(shared) = needs::shared() else { return };
    let Some(scan) = needs::shared_file(&shared, "external/nDPI__synscan.pcap") else {
        return;
    };
    let dir = scratch("summary-synscan");
    let out = dir.join("out");
    let o = batch(&[&scan], &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    let floods = table(&md, "## Floods and scans (");
    assert!(
        floods
            .iter()
            .any(|r| r.contains("| port-scan | 64.13.134.52 |") && r.ends_with("| 1994 |")),
        "{floods:#?}"
    );
}
