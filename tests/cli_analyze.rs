//! `bdpscope analyze` from the outside: formats, inputs, selection, exit status.

mod cli_common;
use cli_common::*;

const RWND: &str = "rcvbuf_16k/client.pcap.gz";

#[test]
fn text_view_shows_the_verdict_and_advice() {
    let o = run(&["analyze", fixture(RWND).to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    for want in [
        "verdict",
        "receiver-window-limited",
        "handshake",
        "rtt",
        "bottleneck",
        "advice",
        "tcp_rmem",
    ] {
        assert!(s.contains(want), "missing {want:?} in\n{s}");
    }
}

#[test]
fn json_has_the_spec_fields() {
    let o = run(&["analyze", "--format", "json", fixture(RWND).to_str().unwrap()]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let cap = &v["captures"][0];
    assert_eq!(cap["format"], "pcap");
    assert!(cap["packets"].as_u64().unwrap() > 1000);
    let f = &v["flows"][0];
    for key in [
        "id",
        "capture",
        "client",
        "server",
        "handshake",
        "bulk_direction",
        "bytes",
        "goodput_bps",
        "rtt_ms",
        "max_flight_bytes",
        "max_rwnd_bytes",
        "retransmitted_segments",
        "bottleneck_bps",
        "bdp_bytes",
        "limits",
        "verdict",
        "middlebox",
        "advice",
        "notes",
    ] {
        assert!(f.get(key).is_some(), "missing {key}");
    }
    for key in [
        "seen",
        "client_wscale",
        "server_wscale",
        "client_mss",
        "server_mss",
        "window_scaling",
    ] {
        assert!(f["handshake"].get(key).is_some(), "missing handshake.{key}");
    }
    let l = &f["limits"];
    let sum: f64 = [
        "receiver-window-limited",
        "cwnd-limited",
        "bottleneck-limited",
        "sender-limited",
    ]
    .iter()
    .map(|k| l[k].as_f64().unwrap())
    .sum();
    assert!((sum - 1.0).abs() < 1e-3, "limits sum to {sum}");
    assert_eq!(f["client"].as_str().unwrap().split(':').count(), 2);
}

#[test]
fn ipv6_endpoints_use_brackets() {
    let o = run(&[
        "analyze",
        "--format",
        "json",
        fixture("ipv6_rwnd/client.pcap.gz").to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = v["flows"][0]["client"].as_str().unwrap();
    assert!(c.starts_with("[fd77::1]:"), "{c}");
}

#[test]
fn csv_has_a_header_and_one_row_per_flow() {
    let o = run(&[
        "analyze",
        "--format",
        "csv",
        fixture(RWND).to_str().unwrap(),
        fixture("loss_cubic/server.pcap.gz").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    let mut lines = s.lines();
    let header = lines.next().unwrap();
    assert!(header.contains("verdict") && header.contains("bdp_bytes") && header.contains("client"));
    let rows: Vec<&str> = lines.collect();
    assert!(rows.len() >= 2);
    assert!(rows.iter().any(|r| r.contains("cwnd-limited")));
}

#[test]
fn stdin_is_read_with_a_dash() {
    let bytes = std::fs::read(fixture(RWND)).unwrap();
    let o = run_stdin(&["analyze", "--format", "json", "-"], &bytes);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["captures"][0]["path"], "-");
    assert_eq!(v["flows"][0]["verdict"], "receiver-window-limited");
}

#[test]
fn inputs_are_recognised_by_content_not_name() {
    // The same capture uncompressed, zstd-compressed, under misleading names.
    let t = TempDir::new("content");
    let raw = gunzip(&fixture(RWND));
    let zst = zstd::encode_all(&raw[..], 3).unwrap();
    for (name, bytes) in [("capture.pcapng", &raw), ("capture.txt", &zst)] {
        let p = t.file(name, bytes);
        let o = run(&["analyze", "--format", "json", p.to_str().unwrap()]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["flows"][0]["verdict"], "receiver-window-limited", "{name}");
    }
}

#[test]
fn a_missing_file_fails_with_its_name() {
    let o = run(&["analyze", "/nonexistent/capture.pcap"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("/nonexistent/capture.pcap"), "{}", stderr(&o));
}

#[test]
fn a_file_that_is_not_a_capture_fails_with_the_reason_and_others_still_run() {
    let t = TempDir::new("garbage");
    let junk = t.file("notes.txt", b"these are not the packets you are looking for\n");
    let o = run(&[
        "analyze",
        "--format",
        "json",
        junk.to_str().unwrap(),
        fixture(RWND).to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("notes.txt") && err.contains("capture"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["flows"][0]["verdict"], "receiver-window-limited");
}

#[test]
fn a_capture_cut_mid_record_is_analysed_with_a_warning() {
    let t = TempDir::new("cut");
    let mut raw = gunzip(&fixture(RWND));
    raw.truncate(raw.len() * 2 / 3 + 7);
    let p = t.file("cut.pcap", &raw);
    let o = run(&["analyze", "--format", "json", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let w = v["captures"][0]["warnings"].to_string();
    assert!(w.contains("cut short"), "{w}");
    assert!(!v["flows"].as_array().unwrap().is_empty());
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(run(&["analyze"]).status.code(), Some(2));
    assert_eq!(run(&["analyze", "--format", "yaml", "x"]).status.code(), Some(2));
    assert_eq!(run(&["frobnicate"]).status.code(), Some(2));
}

#[test]
fn flows_are_selected_by_id_host_and_port() {
    let a = fixture(RWND);
    let b = fixture("loss_cubic/server.pcap.gz");
    let all = run(&["analyze", "--format", "json", a.to_str().unwrap(), b.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&all.stdout).unwrap();
    let flows = v["flows"].as_array().unwrap();
    assert!(flows.len() >= 2);
    // Ids are per capture: --flow 0 is the first flow of each.
    let one = run(&[
        "analyze",
        "--format",
        "json",
        "--flow",
        "0",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    let v1: serde_json::Value = serde_json::from_slice(&one.stdout).unwrap();
    let firsts = v1["flows"].as_array().unwrap();
    assert_eq!(firsts.len(), 2, "flow 0 of each capture");
    assert!(firsts.iter().all(|f| f["id"].as_u64() == Some(0)));
    assert_ne!(firsts[0]["capture"], firsts[1]["capture"]);
    let none = run(&["analyze", "--format", "json", "--port", "1", a.to_str().unwrap()]);
    let v2: serde_json::Value = serde_json::from_slice(&none.stdout).unwrap();
    assert!(v2["flows"].as_array().unwrap().is_empty());
    assert_eq!(
        none.status.code(),
        Some(1),
        "a selection that matches nothing is an error"
    );
    assert!(stderr(&none).contains("no flow matches --port 1"), "{}", stderr(&none));
    let host = run(&[
        "analyze",
        "--format",
        "json",
        "--host",
        "10.77.0.2",
        "--port",
        "5001",
        a.to_str().unwrap(),
    ]);
    let v3: serde_json::Value = serde_json::from_slice(&host.stdout).unwrap();
    assert_eq!(v3["flows"].as_array().unwrap().len(), 1);
}

#[test]
fn the_number_of_analysis_threads_does_not_change_the_result() {
    // Every bundled capture in one run: flows of several captures, numbered across them,
    // spread over one, three or one-per-core workers.
    let mut paths: Vec<String> = std::fs::read_dir(fixture(""))
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).into_iter().flatten())
        .map(|f| f.unwrap().path())
        .filter(|p| {
            p.to_str()
                .is_some_and(|s| s.ends_with(".pcap.gz") || s.ends_with(".pcapng.gz"))
        })
        .map(|p| p.to_str().unwrap().to_string())
        .collect();
    paths.sort();
    assert!(paths.len() >= 10, "{paths:?}");
    let json = |jobs: Option<&str>| {
        let mut args = vec!["analyze", "--format", "json"];
        if let Some(j) = jobs {
            args.extend(["-j", j]);
        }
        args.extend(paths.iter().map(String::as_str));
        let o = run(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        o.stdout
    };
    let default = json(None);
    assert!(default.len() > 10_000);
    assert_eq!(json(Some("1")), default, "-j 1");
    assert_eq!(json(Some("3")), default, "-j 3");
}

/// A flow asked for that is not there: exit 1 and a message saying what was asked, in
/// every command that selects flows (a script learns its id was wrong).
#[test]
fn a_selection_that_matches_nothing_exits_1_with_a_message() {
    let cap = fixture(RWND);
    let cap = cap.to_str().unwrap();
    let out = std::env::temp_dir().join(format!("bdpscope-none-{}", std::process::id()));
    let out = out.to_str().unwrap();
    for (what, args) in [
        ("text", vec!["analyze", "--flow", "99", cap]),
        ("json", vec!["analyze", "--format", "json", "--flow", "99", cap]),
        ("csv", vec!["analyze", "--format", "csv", "--flow", "99", cap]),
        ("packets", vec!["packets", "--flow", "99", cap]),
        ("plot", vec!["plot", "--svg-only", "--out", out, "--flow", "99", cap]),
        ("report", vec!["report", "--out", out, "--flow", "99", cap]),
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(1), "{what}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("no flow matches --flow 99 in"),
            "{what}: {}",
            stderr(&o)
        );
    }
    // The same commands with a flow that is there succeed.
    let o = run(&["analyze", "--flow", "0", cap]);
    assert!(o.status.success(), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(out);
}

/// One name per limit: `plot` takes `--max-plots` as `report` does, and the old spelling
/// still works (hidden).
#[test]
fn plot_and_report_name_their_limit_alike() {
    let cap = fixture(RWND);
    let out = std::env::temp_dir().join(format!("bdpscope-maxplots-{}", std::process::id()));
    for flag in ["--max-plots", "--max-flows"] {
        let o = run(&[
            "plot",
            "--svg-only",
            flag,
            "1",
            "--out",
            out.to_str().unwrap(),
            cap.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{flag}: {}", stderr(&o));
    }
    let help = stdout(&run(&["plot", "--help"]));
    assert!(help.contains("--max-plots") && !help.contains("--max-flows"), "{help}");
    let _ = std::fs::remove_dir_all(out);
}

/// A flow's id does not depend on the other files on the command line: each capture's
/// flows are numbered from 0 in every command (batch's tables too), so `flow 0` of a
/// capture is the same alone and after another file.
#[test]
fn flow_ids_do_not_depend_on_the_other_files() {
    let a = fixture(RWND);
    let b = fixture("loss_cubic/server.pcap.gz");
    let ids = |args: &[&str]| -> Vec<(String, u64, String)> {
        let mut all = vec!["analyze", "--format", "json"];
        all.extend(args);
        let o = run(&all);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["flows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["capture"].as_str().unwrap().to_string(),
                    f["id"].as_u64().unwrap(),
                    f["client"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let alone = ids(&[b]);
    let after = ids(&[a, b]);
    assert!(!alone.is_empty());
    let of_b: Vec<_> = after.into_iter().filter(|(c, _, _)| c == b).collect();
    assert_eq!(of_b, alone, "the flows of {b} keep their ids after another capture");
}

/// Rough edges a new user hit, each with a clear word.
#[test]
fn inputs_that_are_not_captures_are_named_plainly() {
    // A directory: said once, with the command that reads folders.
    let dir = fixture("");
    let o = run(&["analyze", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("is a directory") && e.contains("bdpscope batch"), "{e}");
    assert_eq!(e.matches("directory").count(), 1, "the reason once: {e}");
    // A file shorter than a pcap header: the header is incomplete, not "the record at byte 0".
    let tmp = std::env::temp_dir().join(format!("bdpscope-10-bytes-{}.pcap", std::process::id()));
    std::fs::write(&tmp, [0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0]).unwrap();
    let o = run(&["analyze", tmp.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("file header is incomplete"), "{}", stderr(&o));
    let _ = std::fs::remove_file(&tmp);
}

/// The text view: one flow is "1 flow", an uncompressed capture is "pcap," (not
/// "pcap ,"), and a cut-short warning is said once (in the capture block, not also on
/// stderr).
#[test]
fn the_text_view_reads_as_english() {
    let gz = std::fs::read(fixture(RWND)).unwrap();
    let mut pcap = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut pcap).unwrap();
    pcap.truncate(pcap.len() - 7);
    let tmp = std::env::temp_dir().join(format!("bdpscope-cut-{}.pcap", std::process::id()));
    std::fs::write(&tmp, &pcap).unwrap();
    let o = run(&["analyze", tmp.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (out, err) = (stdout(&o), stderr(&o));
    let head = out.lines().next().unwrap();
    assert!(head.contains(": pcap, ") && head.ends_with(" 1 flow"), "{head}");
    assert_eq!(format!("{out}{err}").matches("cut short").count(), 1, "{out}\n{err}");
    let _ = std::fs::remove_file(&tmp);
}

/// One formatter for quantities (bdpscope::units): the BDP and the mean goodput of a flow
/// read the same in the text view, the plot's legend and the report (they were "2.8 KiB"
/// in one and "2.83 KiB" in another).
#[test]
fn quantities_read_the_same_in_every_view() {
    let cap = fixture(RWND);
    let cap = cap.to_str().unwrap();
    let o = run(&["analyze", "--format", "json", cap]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = &v["flows"][0];
    let bdp = bdpscope::units::bytes(f["bdp_bytes"].as_f64().unwrap());
    let goodput = bdpscope::units::bits(f["goodput_bps"].as_f64().unwrap());
    let text = stdout(&run(&["analyze", cap]));
    let dir = std::env::temp_dir().join(format!("bdpscope-units-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    assert!(run(&["plot", "--svg-only", "--out", d, cap]).status.success());
    let flight = std::fs::read_to_string(dir.join("flow-0-flight.svg")).unwrap();
    let throughput = std::fs::read_to_string(dir.join("flow-0-throughput.svg")).unwrap();
    assert!(run(&["report", "--out", d, cap]).status.success());
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    for (view, s) in [("text", &text), ("plot", &flight), ("report", &html)] {
        assert!(
            s.contains(&format!("BDP {bdp}")) || s.contains(&format!("BDP is {bdp}")),
            "{view}: no BDP {bdp}"
        );
    }
    for (view, s) in [("text", &text), ("plot", &throughput), ("report", &html)] {
        assert!(s.contains(&goodput), "{view}: no goodput {goodput}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A capture that begins between the SYN and the SYN/ACK holds half a handshake: the
/// SYN/ACK's options and the scale state are known (RFC 7323 §2.2), the client's are not,
/// and the text says which (it said "not in the capture (window scale unknown)").
#[test]
fn half_a_handshake_is_said_as_such() {
    let mut pcap = gunzip(&fixture(RWND));
    // Drop the first record, the client's SYN (pcap: 24-byte file header, 16-byte record
    // headers with the captured length at offset 8, little-endian as written by tcpdump).
    let len = u32::from_le_bytes(pcap[24 + 8..24 + 12].try_into().unwrap()) as usize;
    pcap.drain(24..24 + 16 + len);
    let tmp = TempDir::new("half-handshake");
    let path = tmp.file("synack-first.pcap", &pcap);
    let o = run(&["analyze", path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let line = out.lines().find(|l| l.trim_start().starts_with("handshake")).unwrap();
    assert!(
        line.contains("only the SYN/ACK is in the capture: wscale 10, mss 1460")
            && line.contains("the client's options unknown (scaling on)"),
        "{line}"
    );
    assert!(out.contains("only the server's SYN/ACK is in the capture"), "{out}");
}

#[test]
fn the_schema_6_columns_are_the_json_fields_they_name() {
    use polars::prelude::*;
    // Every fixture capture: the CSV's appended columns against the JSON of the same run.
    let mut seen = [0usize; 3];
    for capture in fixture_captures() {
        let path = capture.to_str().unwrap();
        let j = run(&["analyze", "--format", "json", "--all", path]);
        let c = run(&["analyze", "--format", "csv", "--all", path]);
        assert!(j.status.success() && c.status.success(), "{path}");
        let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
        let df = CsvReadOptions::default()
            .with_has_header(true)
            .with_infer_schema_length(Some(0))
            .into_reader_with_file_handle(std::io::Cursor::new(c.stdout))
            .finish()
            .unwrap();
        let flows = v["flows"].as_array().unwrap();
        assert_eq!(df.height(), flows.len(), "{path}");
        let cell = |name: &str, i: usize| -> Option<f64> {
            let col = df.column(name).unwrap_or_else(|_| panic!("no column {name}"));
            col.str().unwrap().get(i).map(|s| s.parse().unwrap())
        };
        for (i, f) in flows.iter().enumerate() {
            let pairs = [
                ("idle_s", &f["idle_turns"]["idle_s"]),
                ("idle_answered_s", &f["idle_turns"]["answered_s"]),
                ("idle_pauses", &f["idle_turns"]["pauses"]),
                ("idle_answered_pauses", &f["idle_turns"]["answered"]),
                ("idle_median_answer_ms", &f["idle_turns"]["median_answer_ms"]),
                (
                    "idle_median_after_answer_ms",
                    &f["idle_turns"]["median_after_answer_ms"],
                ),
                ("sender_transit_bytes", &f["sender_transit_bytes"]),
                ("sender_near_loop_ms", &f["sender_near_loop_ms"]),
                ("c2s_acks_lacking_s", &f["c2s"]["acks_lacking"]["seconds"]),
                ("s2c_acks_lacking_s", &f["s2c"]["acks_lacking"]["seconds"]),
            ];
            for (name, want) in pairs {
                assert_eq!(cell(name, i), want.as_f64(), "{path} flow {i} {name}");
            }
            seen[0] += f["idle_turns"].is_object() as usize;
            seen[1] += f["sender_transit_bytes"].is_u64() as usize;
            seen[2] += flows.len();
        }
    }
    // The fixtures exercise both kinds of value, not only empty cells.
    assert!(seen[0] > 0 && seen[1] > 0, "{seen:?}");
}
