//! `bdpscope plot` on a synthetic download: the files are written, and each plot holds
//! what it should (title naming the flow, axes with units, the expected series and
//! markers); the PNGs are real 1200-px images with more than a blank background.

mod plot_support;

use plot_support::*;
use std::ffi::OsStr;
use std::path::Path;

fn run_plot(dir: &Path, cap: &Path, extra: &[&str]) -> std::process::Output {
    let mut args: Vec<&OsStr> = vec![
        OsStr::new("plot"),
        cap.as_os_str(),
        OsStr::new("--out"),
        dir.as_os_str(),
    ];
    args.extend(extra.iter().map(OsStr::new));
    let out = bdpscope(&args);
    assert!(
        out.status.success(),
        "plot failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Decodes a PNG: (width, height, distinct colours among sampled pixels, share of pixels
/// that are not the white background).
fn png_stats(p: &Path) -> (u32, u32, usize, f64) {
    let decoder = png::Decoder::new(std::fs::File::open(p).expect("open png"));
    let mut reader = decoder.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("png frame");
    let px = info.color_type.samples();
    let mut colours = std::collections::HashSet::new();
    let mut ink = 0usize;
    let n = (info.width * info.height) as usize;
    for i in 0..n {
        let p = &buf[i * px..i * px + 3];
        if p != [255, 255, 255] {
            ink += 1;
        }
        if i % 7 == 0 {
            colours.insert((p[0] >> 3, p[1] >> 3, p[2] >> 3));
        }
    }
    (info.width, info.height, colours.len(), ink as f64 / n as f64)
}

#[test]
fn plots_of_a_synthetic_flow_hold_the_expected_elements() {
    let dir = temp_dir("plot-svg");
    let cap = synthetic_capture(&dir, Flow::default());
    let out_dir = dir.join("plots");
    let out = run_plot(&out_dir, &cap, &[]);
    let listed = String::from_utf8_lossy(&out.stdout);
    for kind in ["flight", "rtt", "throughput", "timeseq"] {
        for ext in ["svg", "png"] {
            let f = out_dir.join(format!("flow-0-{kind}.{ext}"));
            assert!(f.is_file(), "{} missing", f.display());
            assert!(
                listed.contains(&format!("flow-0-{kind}.{ext}")),
                "not listed on stdout: {listed}"
            );
        }
    }

    let flight = read(&out_dir.join("flow-0-flight.svg"));
    assert!(flight.starts_with("<svg") && flight.trim_end().ends_with("</svg>"));
    assert!(flight.contains("width=\"1200\""), "1200 px wide");
    // Title: the plot, the flow, both ends, the verdict.
    assert!(flight.contains("Bytes in flight vs BDP"));
    assert!(
        flight.contains("flow 0: 10.0.0.1:40000 ← 10.0.0.2:5001"),
        "title names the flow"
    );
    for needle in ["first packet (s)", "bytes (KiB)", "advertised receive window", "flight"] {
        assert!(flight.contains(needle), "flight plot lacks {needle:?}");
    }
    assert!(flight.matches("<polyline").count() >= 2, "flight and window lines");
    // Limitation periods are drawn as bands with a legend entry, in the band colours.
    assert!(flight.contains("-limited"), "a limitation band in the legend");
    assert!(flight.contains("<rect"), "bands are rectangles");

    let rtt = read(&out_dir.join("flow-0-rtt.svg"));
    for needle in ["RTT (ms)", "timestamp-echo samples", "smoothed RTT", "base RTT"] {
        assert!(rtt.contains(needle), "RTT plot lacks {needle:?}");
    }
    assert!(rtt.matches("<circle").count() > 50, "RTT samples are drawn");

    let tput = read(&out_dir.join("flow-0-throughput.svg"));
    for needle in ["goodput (bytes delivered per", "Mbit/s", "mean goodput"] {
        assert!(tput.contains(needle), "throughput plot lacks {needle:?}");
    }

    let ts = read(&out_dir.join("flow-0-timeseq.svg"));
    for needle in [
        "relative sequence number (",
        "data segments",
        "cumulative ACK",
        "receive window edge",
        "retransmissions (1)",
        "zero window (",
    ] {
        assert!(ts.contains(needle), "time-sequence plot lacks {needle:?}");
    }
    // Red crosses for the retransmission, magenta triangles for the zero window.
    assert!(
        ts.contains("#CD1E1E") || ts.to_lowercase().contains("#cd1e1e"),
        "retransmission marker colour"
    );
    assert!(ts.to_lowercase().contains("#aa28a0"), "zero-window marker colour");

    for kind in ["flight", "rtt", "throughput", "timeseq"] {
        let (w, h, colours, ink) = png_stats(&out_dir.join(format!("flow-0-{kind}.png")));
        assert_eq!((w, h), (1200, 460));
        assert!(colours >= 6, "{kind}.png: only {colours} colours");
        assert!(ink > 0.03, "{kind}.png: only {:.1}% drawn", ink * 100.0);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn one_flow_only_and_svg_only() {
    let dir = temp_dir("plot-one");
    let cap = synthetic_capture(
        &dir,
        Flow {
            segments: 300,
            retransmit: None,
            zero_window_after: None,
            ..Flow::default()
        },
    );
    let out_dir = dir.join("plots");
    run_plot(&out_dir, &cap, &["--flow", "0", "--svg-only"]);
    let names: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(
        names.iter().all(|n| n.starts_with("flow-0-") && n.ends_with(".svg")),
        "{names:?}"
    );
    let ts = read(&out_dir.join("flow-0-timeseq.svg"));
    assert!(
        !ts.contains("retransmissions ("),
        "no retransmission legend without retransmissions"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unknown_flow_is_reported_not_a_crash() {
    let dir = temp_dir("plot-none");
    let cap = synthetic_capture(
        &dir,
        Flow {
            segments: 50,
            ..Flow::default()
        },
    );
    let out = bdpscope(&[
        OsStr::new("plot"),
        cap.as_os_str(),
        OsStr::new("--flow"),
        OsStr::new("7"),
        OsStr::new("--out"),
        dir.join("p").as_os_str(),
    ]);
    // Reported, not a crash, and not a success: a script asking for a flow that is not
    // there learns it from the status (1, as every command that selects flows).
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no flow matches --flow 7"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_capture_that_is_not_one_exits_1() {
    let dir = temp_dir("plot-bad");
    let bad = dir.join("notes.txt");
    std::fs::write(&bad, "not a capture").unwrap();
    let out = bdpscope(&[
        OsStr::new("plot"),
        bad.as_os_str(),
        OsStr::new("--out"),
        dir.join("p").as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("notes.txt"));
    let _ = std::fs::remove_dir_all(&dir);
}
