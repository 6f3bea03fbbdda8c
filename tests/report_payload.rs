//! The report's graph data stays bounded: a long flow (60,000 segments, every series of
//! the recorder full) sends at most 32,768 points (charts.rs's POINT_BUDGET; the merging
//! itself is tested there) and well under half a megabyte; a short flow is sent at the
//! recorder's full resolution.

mod plot_support;

use plot_support::*;
use std::ffi::OsStr;

/// The JSON of each flow's graphs in a report.
fn chart_data(html: &str) -> Vec<serde_json::Value> {
    html.split("<script class=\"flow-data\" type=\"application/json\">")
        .skip(1)
        .map(|s| serde_json::from_str(s.split("</script>").next().unwrap()).unwrap())
        .collect()
}

fn report(name: &str, flow: Flow) -> (u64, Vec<serde_json::Value>) {
    let dir = temp_dir(name);
    let cap = synthetic_capture(&dir, flow);
    let out = dir.join("report");
    let o = bdpscope(&[
        OsStr::new("report"),
        cap.as_os_str(),
        OsStr::new("--out"),
        out.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (html.len() as u64, chart_data(&html))
}

fn points(d: &serde_json::Value) -> u64 {
    d["series"]
        .as_object()
        .unwrap()
        .values()
        .map(|s| s["t"].as_array().unwrap().len() as u64)
        .sum()
}

#[test]
fn a_long_flow_sends_a_bounded_number_of_points() {
    let (size, data) = report(
        "payload-long",
        Flow {
            segments: 60_000,
            headers_only: true,
            retransmit: Some(20_000),
            zero_window_after: Some(40_000),
            ..Flow::default()
        },
    );
    assert_eq!(data.len(), 1);
    let d = &data[0];
    let n = points(d);
    assert_eq!(d["points"].as_u64(), Some(n));
    assert!(n <= 32_768, "{n} points");
    eprintln!("long flow: {n} points, report {size} bytes");
    // The page around the data (uPlot, script, style) is ~80 KB.
    assert!(size < 600_000, "report of one long flow: {size} bytes");
    for key in ["seg", "ack", "edge", "sflight", "rwnd", "delivered", "rtt_ts"] {
        assert!(d["series"][key]["t"].as_array().is_some_and(|t| !t.is_empty()), "{key}");
    }
}

#[test]
fn a_short_flow_sends_every_point() {
    let (_, data) = report(
        "payload-short",
        Flow {
            segments: 300,
            ..Flow::default()
        },
    );
    let d = &data[0];
    assert_eq!(d["thinned"], false);
    assert!(d["series"]["seg"]["t"].as_array().unwrap().len() > 100);
    assert_eq!(
        d["series"]["rex"]["t"].as_array().unwrap().len(),
        1,
        "the one retransmission"
    );
}
