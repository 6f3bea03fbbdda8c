//! `bdpscope packets`: the per-segment table of the spec.

mod cli_common;
use cli_common::*;

const SPEC_COLUMNS: &str = "frame,time,flow,dir,seq,ack,len,flags,win_raw,win_bytes,flight_bytes,rtt_ms,retransmission";

#[test]
fn the_header_starts_with_the_spec_columns() {
    let o = run(&["packets", fixture("rcvbuf_16k/server.pcap.gz").to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.lines().next().unwrap().starts_with(SPEC_COLUMNS));
}

#[test]
fn one_row_per_tcp_segment_with_relative_numbers() {
    let cap = fixture("rcvbuf_16k/server.pcap.gz");
    let o = run(&["packets", cap.to_str().unwrap()]);
    let s = stdout(&o);
    let rows: Vec<Vec<&str>> = s.lines().skip(1).map(|l| l.split(',').collect()).collect();
    let j = run(&["analyze", "--format", "json", cap.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert_eq!(rows.len() as u64, v["captures"][0]["tcp_segments"].as_u64().unwrap());
    // The handshake: SYN at relative seq 0, SYN/ACK acks 1, frames numbered from 1.
    assert_eq!(rows[0][0], "1");
    assert_eq!((rows[0][3], rows[0][4], rows[0][7]), ("c2s", "0", "S"));
    assert_eq!((rows[1][3], rows[1][4], rows[1][5]), ("s2c", "0", "1"));
    // Data segments carry a flight, and the window is scaled once the handshake is done.
    let data = rows.iter().find(|r| r[6] != "0" && r[3] == "s2c").unwrap();
    assert!(!data[10].is_empty(), "{data:?}");
    let ack = rows.iter().skip(3).find(|r| r[3] == "c2s").unwrap();
    assert!(!ack[9].is_empty(), "{ack:?}");
    // Some ACK produced an RTT sample near the path's 40 ms.
    let rtts: Vec<f64> = rows.iter().filter_map(|r| r[11].parse().ok()).collect();
    assert!(
        rtts.iter().any(|&r| (39.0..45.0).contains(&r)),
        "{:?}",
        &rtts[..rtts.len().min(10)]
    );
}

#[test]
fn every_row_has_a_field_for_every_column() {
    let o = run(&["packets", fixture("rcvbuf_16k/server.pcap.gz").to_str().unwrap()]);
    let s = stdout(&o);
    let mut lines = s.lines();
    let names: Vec<&str> = lines.next().unwrap().split(',').collect();
    let naive = names.iter().position(|&c| c == "naive_flight_bytes").unwrap();
    let mut with_naive = 0;
    for (i, l) in lines.enumerate() {
        let cols: Vec<&str> = l.split(',').collect();
        assert_eq!(cols.len(), names.len(), "row {}: {l}", i + 1);
        // The naive flight (highest sent minus highest ACKed) is there on data segments.
        if cols[6] != "0" {
            assert!(cols[naive].parse::<u64>().is_ok(), "row {}: {l}", i + 1);
            with_naive += 1;
        }
    }
    assert!(with_naive > 100, "{with_naive} data rows");
}

#[test]
fn the_window_is_empty_while_the_scale_is_unknown() {
    // No handshake in the capture: raw windows only until a shift is inferred.
    let o = run(&["packets", fixture("late_capture/client.pcap.gz").to_str().unwrap()]);
    let s = stdout(&o);
    let first = s.lines().nth(1).unwrap();
    let cols: Vec<&str> = first.split(',').collect();
    assert!(!cols[8].is_empty());
    assert!(cols[9].is_empty(), "{first}");
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = bin()
        .args(["packets", fixture("rcvbuf_1m/server.pcap.gz").to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 64];
    child.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
