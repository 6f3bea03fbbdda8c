//! A one-million-segment flow: `bdpscope plot` draws it with memory that does not grow
//! with the flow (the series recorder keeps bounded buckets) and drawings that stay small
//! yet keep rare events. The time it takes is printed, never asserted.
//!
//! Heavy (writes a ~150 MB capture), so ignored by default:
//!   cargo test --release --test plot_big -- --ignored --nocapture
//! Set BDPSCOPE_BIG_CAPTURE=/path/big.pcap to keep the capture (and reuse it next time),
//! BDPSCOPE_BIG_SEGMENTS=N for another length.

mod plot_support;

use plot_support::*;
use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// Peak resident memory of a running process (kB), from /proc.
fn peak_rss_kb(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

#[test]
#[ignore = "heavy: a 1M-segment capture; run with --ignored"]
fn a_million_segment_flow_plots_with_bounded_memory_and_drawings() {
    let dir = temp_dir("plot-big");
    let cap = match std::env::var_os("BDPSCOPE_BIG_CAPTURE") {
        Some(p) => PathBuf::from(p),
        None => dir.join("big.pcap"),
    };
    let segments: u64 = std::env::var("BDPSCOPE_BIG_SEGMENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let flow = Flow {
        segments,
        mss: 1448,
        rtt_ns: 20_000_000,
        rate_bps: 1e9,
        rwnd: 4 << 20,
        retransmit: Some(segments * 2 / 5),
        zero_window_after: Some(segments * 7 / 10),
        headers_only: true,
    };
    if !cap.is_file() {
        let t = Instant::now();
        let f = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&cap).unwrap());
        let records = write_flow(f, flow);
        eprintln!("wrote {} records to {} in {:.1?}", records, cap.display(), t.elapsed());
    }
    let out = dir.join("plots");
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_bdpscope"))
        .args([
            OsStr::new("plot"),
            cap.as_os_str(),
            OsStr::new("--out"),
            out.as_os_str(),
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("run bdpscope");
    let mut peak = 0;
    let status = loop {
        if let Some(kb) = peak_rss_kb(child.id()) {
            peak = peak.max(kb);
        }
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = start.elapsed();
    eprintln!("plot: {took:.2?}, peak RSS {} MiB", peak / 1024);
    assert!(status.success());
    for kind in ["flight", "rtt", "throughput", "timeseq"] {
        let svg = std::fs::read_to_string(out.join(format!("flow-0-{kind}.svg"))).unwrap();
        assert!(
            svg.len() < 2 << 20,
            "{kind}.svg is {} bytes: the drawing is not downsampled",
            svg.len()
        );
    }
    let ts = std::fs::read_to_string(out.join("flow-0-timeseq.svg")).unwrap();
    assert!(
        ts.contains("retransmissions (1)") && ts.contains("zero window ("),
        "rare events survive downsampling"
    );
    // Memory: the recorder is bounded; what remains is the reader and the flow table.
    assert!(peak < 256 * 1024, "peak RSS {} MiB", peak / 1024);
    let _ = std::fs::remove_dir_all(&dir);
}
