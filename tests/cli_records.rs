//! tcpdump's, tshark's and editcap's spellings on the command line: `-r FILE`, a trailing
//! capture filter or `-f EXPR`, `-c N`, `--from`/`--until`, exit status 2 for a filter
//! libpcap refuses, the note on flows of which the filter kept one direction, and rates
//! as tc and iperf3 write them. (The filter's selection itself is checked against
//! tcpdump in filter_tcpdump.rs.)

mod cli_common;

use cli_common::*;
use std::path::Path;

const CAP: &str = "rcvbuf_16k/client.pcap.gz";

fn have_tcpdump() -> bool {
    if Path::new("/usr/bin/tcpdump").is_file() || Path::new("/usr/sbin/tcpdump").is_file() {
        return true;
    }
    if std::env::var_os("BDPSCOPE_CI").is_some() {
        panic!("tcpdump is not installed (BDPSCOPE_CI is set: this test must run)");
    }
    eprintln!("skipped: tcpdump is not installed (apt-get install tcpdump)");
    false
}

fn json(args: &[&str]) -> serde_json::Value {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn packets_of(v: &serde_json::Value) -> u64 {
    v["captures"][0]["packets"].as_u64().unwrap()
}

#[test]
fn dash_r_reads_a_capture_as_a_positional_does() {
    let cap = fixture(CAP);
    let cap = cap.to_str().unwrap();
    assert_eq!(
        stdout(&run(&["analyze", "-r", cap, "--format", "json"])),
        stdout(&run(&["analyze", cap, "--format", "json"]))
    );
    let o = run(&["packets", "-r", cap]);
    assert!(o.status.success());
    assert_eq!(stdout(&o), stdout(&run(&["packets", cap])));
    let o = run(&["analyze"]);
    assert_eq!(o.status.code(), Some(2), "no capture: a usage error");
}

#[test]
fn a_trailing_filter_and_dash_f_select_the_same_packets() {
    if !have_tcpdump() {
        return;
    }
    let cap = fixture(CAP);
    let cap = cap.to_str().unwrap();
    let all = json(&["analyze", cap, "--format", "json"]);
    // One argument, several words, -f, and -r with the words after: the same selection.
    let a = json(&["analyze", cap, "tcp[tcpflags] & tcp-push != 0", "--format", "json"]);
    let b = json(&[
        "analyze",
        cap,
        "tcp[tcpflags]",
        "&",
        "tcp-push",
        "!=",
        "0",
        "--format",
        "json",
    ]);
    let c = json(&[
        "analyze",
        "-f",
        "tcp[tcpflags] & tcp-push != 0",
        cap,
        "--format",
        "json",
    ]);
    let d = json(&[
        "analyze",
        "--format",
        "json",
        "-r",
        cap,
        "tcp[tcpflags] & tcp-push != 0",
    ]);
    assert_eq!(a, b);
    assert_eq!(a, c);
    assert_eq!(a, d);
    let n = packets_of(&a);
    assert!(n > 0 && n < packets_of(&all), "{n} of {}", packets_of(&all));
    // Frame numbers stay the file's: packets with the filter are a subset of without.
    let rows = |args: &[&str]| -> Vec<String> { stdout(&run(args)).lines().skip(1).map(|l| l.to_string()).collect() };
    let syn = rows(&["packets", cap, "tcp[tcpflags] & tcp-syn != 0"]);
    assert_eq!(syn.len(), 2);
    assert!(syn[0].starts_with("1,") && syn[1].starts_with("2,"), "{syn:?}");
}

#[test]
fn a_filter_libpcap_refuses_is_a_usage_error_with_its_message() {
    if !have_tcpdump() {
        return;
    }
    let cap = fixture(CAP);
    let cap = cap.to_str().unwrap();
    let o = run(&["analyze", cap, "host", "and"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("syntax error"), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    // A mistyped second capture becomes the start of a filter: the message says so.
    let o = run(&["analyze", cap, "fixtures/nope.pcap"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("fixtures/nope.pcap: no such file"),
        "{}",
        stderr(&o)
    );
    let o = run(&["analyze", "-r", cap, cap]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("give each capture with its own -r"),
        "{}",
        stderr(&o)
    );
    let o = run(&["analyze", cap, "-f", "tcp", "udp"]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "with -f every word is a capture: udp cannot be opened"
    );
    let o = run(&["analyze", "-f", "tcp", "-r", cap, "udp"]);
    assert_eq!(o.status.code(), Some(2), "a filter given twice");
    // Valid for Ethernet but not for this capture's link type: the capture is not read
    // (exit 1, as tcpdump), libpcap says why.
    let dir = TempDir::new("raw-link");
    let raw = {
        let mut w =
            bdpscope::capture::PcapWriter::new(Vec::new(), bdpscope::capture::LinkType::RAW, 65535, false, false)
                .unwrap();
        w.write_packet(bdpscope::time::Timestamp::from_nanos(1), &[0x45; 40], 40)
            .unwrap();
        dir.file("raw.pcap", &w.into_inner())
    };
    let o = run(&["analyze", raw.to_str().unwrap(), "vlan"]);
    assert!(stderr(&o).contains("no VLAN support for Raw IP"), "{}", stderr(&o));
    assert_eq!(o.status.code(), Some(1));
    // The other captures of the run are analysed.
    let o = run(&["analyze", raw.to_str().unwrap(), cap, "-f", "vlan", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["captures"].as_array().unwrap().len(), 1);
}

#[test]
fn without_tcpdump_a_filter_says_what_to_install() {
    let cap = fixture(CAP);
    let o = bin()
        .env("BDPSCOPE_TCPDUMP", "/nonexistent/tcpdump")
        .args(["analyze", cap.to_str().unwrap(), "tcp"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("apt-get install tcpdump"), "{}", stderr(&o));
    // Without a filter nothing needs it.
    let o = bin()
        .env("BDPSCOPE_TCPDUMP", "/nonexistent/tcpdump")
        .args(["analyze", cap.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success());
}

#[test]
fn a_filter_that_keeps_one_direction_says_so_in_the_notes() {
    if !have_tcpdump() {
        return;
    }
    let cap = fixture(CAP);
    let v = json(&[
        "analyze",
        cap.to_str().unwrap(),
        "src",
        "host",
        "10.77.0.2",
        "--format",
        "json",
        "--all",
    ]);
    let notes = v["flows"][0]["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .unwrap()
            .contains("only the server to client direction passed")),
        "{notes:?}"
    );
    let both = json(&["analyze", cap.to_str().unwrap(), "host 10.77.0.2", "--format", "json"]);
    assert!(!both["flows"][0]["notes"]
        .to_string()
        .contains("passed the capture filter"));
}

/// Record timestamps of the fixture, in seconds.
fn times() -> Vec<f64> {
    let mut r = bdpscope::capture::CaptureReader::new(Box::new(std::fs::File::open(fixture(CAP)).unwrap())).unwrap();
    let mut t = Vec::new();
    while let Some(f) = r.next_frame().unwrap() {
        t.push(f.ts.secs_f64());
    }
    t
}

#[test]
fn count_and_time_window_cut_the_capture() {
    let cap = fixture(CAP);
    let cap = cap.to_str().unwrap();
    assert_eq!(
        packets_of(&json(&["analyze", cap, "-c", "100", "--format", "json"])),
        100
    );
    let t = times();
    let in_window = |a: f64, b: f64| t.iter().filter(|&&x| x >= a && x < b).count() as u64;
    // Relative to the first packet.
    let v = json(&["analyze", cap, "--from", "+1", "--until", "+2.5s", "--format", "json"]);
    assert_eq!(packets_of(&v), in_window(t[0] + 1.0, t[0] + 2.5));
    // Absolute: seconds since the epoch and ISO 8601 with a zone.
    let from = format!("{:.6}", t[0] + 0.5);
    let v = json(&["analyze", cap, "--from", &from, "--format", "json"]);
    assert_eq!(packets_of(&v), in_window(t[0] + 0.5, f64::MAX));
    let start = t[0].floor() as i64 + 2;
    let iso = chrono_free_iso(start);
    let v = json(&["analyze", cap, "--until", &iso, "--format", "json"]);
    assert_eq!(packets_of(&v), in_window(0.0, start as f64));
    // -c counts after the window.
    let v = json(&["analyze", cap, "--from", "+1", "-c", "10", "--format", "json"]);
    assert_eq!(packets_of(&v), 10);
    let v = json(&["analyze", cap, "--from", "+1", "-c", "10", "--format", "json"]);
    assert!(v["captures"][0]["first_ts"].as_f64().unwrap() >= t[0] + 1.0);
    let o = run(&["analyze", cap, "--from", "yesterday"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["analyze", cap, "--from", "1700000010", "--until", "1700000000"]);
    assert_eq!(o.status.code(), Some(2));
}

/// UTC "YYYY-MM-DDThh:mm:ssZ" of a Unix time (days from civil, H. Hinnant's algorithm).
fn chrono_free_iso(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[test]
fn link_rates_read_as_tc_and_iperf3_write_them_and_are_labelled_as_yours() {
    let cap = fixture(CAP);
    let cap = cap.to_str().unwrap();
    let method = |rate: &str| {
        let v = json(&["analyze", cap, "--link-rate", rate, "--format", "json"]);
        (
            v["flows"][0]["bottleneck_method"].as_str().unwrap().to_string(),
            v["flows"][0]["bottleneck_bps"].as_f64().unwrap(),
        )
    };
    let (m, a) = method("50mbit");
    assert_eq!(m, "user-link-rate");
    for same in ["50M", "50Mbit/s", "50000000", "6.25mbps"] {
        assert_eq!(method(same).1, a, "{same}");
    }
    let o = run(&["analyze", cap, "--link-rate", "6.25mbps"]);
    assert!(stderr(&o).contains("bytes per second"), "{}", stderr(&o));
    assert_eq!(run(&["analyze", cap, "--link-rate", "50Mb"]).status.code(), Some(2));
}

#[test]
fn every_command_takes_a_filter() {
    if !have_tcpdump() {
        return;
    }
    let cap = fixture(CAP);
    let cap = cap.to_str().unwrap();
    let dir = TempDir::new("every-command");
    let out = dir.0.to_str().unwrap();
    for args in [
        vec!["plot", cap, "host 10.77.0.2", "--out", out, "--svg-only"],
        vec!["report", cap, "host 10.77.0.2", "--out", out],
        vec!["compare", cap, cap, "tcp"],
        vec!["batch", cap, "port 5001", "--out", out],
    ] {
        let o = run(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        // The same command with a filter libpcap refuses.
        let at = if args[0] == "compare" { 3 } else { 2 };
        let mut bad = args.clone();
        bad[at] = "host and";
        let o = run(&bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        assert!(stderr(&o).contains("syntax error"), "{bad:?}: {}", stderr(&o));
    }
}
