//! Helpers for the `bdpscope batch` tests: a small archive of captures — synthetic ones
//! written with the library's `PcapWriter` + `testkit::TcpPacket`, plus a few from
//! ../shared when it is present (under CI it must be: see tests/needs) — and deliberately
//! broken files; running the binary. Test crates using it also declare `mod needs;`.
#![allow(dead_code)]

use bdpscope::capture::{LinkType, PcapWriter};
use bdpscope::testkit::TcpPacket;
use bdpscope::time::Timestamp;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_bdpscope");

/// A fresh, empty scratch folder for one test; removed when the test passes, kept for a
/// look when it fails.
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

pub fn scratch(name: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("bdpscope-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Scratch(d)
}

/// One captured record: time (ns), bytes, wire length.
pub type Rec = (i64, Vec<u8>, u32);

fn rec(t: i64, p: &TcpPacket) -> Rec {
    let (link, bytes) = p.build();
    assert_eq!(link, LinkType::ETHERNET);
    (t, bytes, p.wire_len() as u32)
}

/// A download: handshake (wscale 7 both ways), `rounds` round trips of `per_round`
/// full segments from the server, each acknowledged one RTT later, then FIN both ways.
/// Seen from the server side.
pub fn bulk(client: &str, server: &str, start_ns: i64, rounds: u32, per_round: u32) -> Vec<Rec> {
    const MSS: u32 = 1448;
    let rtt: i64 = 20_000_000;
    let gap: i64 = 100_000;
    let (cisn, sisn) = (1000u32, 5000u32);
    let c = |to: &str| TcpPacket::new(client, to);
    let s = |to: &str| TcpPacket::new(server, to);
    let mut out = Vec::new();
    let mut t = start_ns;
    out.push(rec(
        t,
        &c(server).seq(cisn).syn().mss(1460).wscale(7).sack_perm().window(64240),
    ));
    t += rtt;
    out.push(rec(
        t,
        &s(client)
            .seq(sisn)
            .ack(cisn + 1)
            .syn()
            .mss(1460)
            .wscale(7)
            .sack_perm()
            .window(65160),
    ));
    t += rtt;
    out.push(rec(t, &c(server).seq(cisn + 1).ack(sisn + 1).window(502)));
    let mut seq = sisn + 1;
    for _ in 0..rounds {
        let round_start = t + gap;
        let mut acks = Vec::new();
        for k in 0..per_round {
            let ts = round_start + i64::from(k) * gap;
            out.push(rec(
                ts,
                &s(client).seq(seq).ack(cisn + 1).payload_len(MSS as usize).window(509),
            ));
            seq = seq.wrapping_add(MSS);
            if k % 2 == 1 || k + 1 == per_round {
                acks.push((ts + rtt, seq));
            }
        }
        for (ts, a) in acks {
            out.push(rec(ts, &c(server).seq(cisn + 1).ack(a).window(2000)));
        }
        t = round_start + i64::from(per_round) * gap + rtt;
    }
    out.push(rec(t + gap, &s(client).seq(seq).ack(cisn + 1).fin().window(509)));
    out.push(rec(t + rtt, &c(server).seq(cisn + 1).ack(seq + 1).fin().window(2000)));
    out.push(rec(t + rtt + gap, &s(client).seq(seq + 1).ack(cisn + 2).window(509)));
    out.sort_by_key(|r| r.0);
    out
}

/// A pcap file's bytes.
pub fn pcap(recs: &[Rec]) -> Vec<u8> {
    let mut w = PcapWriter::new(Vec::new(), LinkType::ETHERNET, 65535, false, false).unwrap();
    for (t, b, wire) in recs {
        w.write_packet(Timestamp::from_nanos(*t), b, *wire).unwrap();
    }
    w.into_inner()
}

pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

pub fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::encode_all(bytes, 3).unwrap()
}

pub fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn link(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(from, to).unwrap();
}

const T0: i64 = 1_700_000_000_000_000_000;

/// Builds the test archive in `dir`: synthetic captures in every container (pcap, gzip,
/// zstd, nested folders), broken files (truncated mid-record, garbage, empty, text), and
/// with ../shared a few real captures (links to them, not copies).
pub fn archive(dir: &Path) {
    let one = pcap(&bulk("10.0.0.1:40000", "10.0.0.2:5001", T0, 30, 10));
    write(&dir.join("lab/one.pcap"), &one);
    let mut two = bulk("10.0.0.1:40001", "10.0.0.2:5001", T0, 20, 12);
    two.extend(bulk("10.0.0.3:40002", "10.0.0.2:5002", T0 + 5_000_000, 25, 6));
    two.sort_by_key(|r| r.0);
    write(&dir.join("lab/deep/er/two.pcap.gz"), &gzip(&pcap(&two)));
    write(
        &dir.join("lab/three.cap"),
        &zstd(&pcap(&bulk("[fd00::1]:40003", "[fd00::2]:443", T0, 15, 8))),
    );
    // Broken: cut in the middle of a record, garbage, empty, a text file.
    write(&dir.join("broken/cut.pcap"), &one[..one.len() * 2 / 3 + 7]);
    let mut x: u32 = 12345;
    let garbage: Vec<u8> = (0..5000)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (x >> 16) as u8
        })
        .collect();
    write(&dir.join("broken/garbage.pcap"), &[&[0x42u8][..], &garbage].concat());
    write(&dir.join("broken/empty.pcap"), b"");
    write(&dir.join("notes.txt"), b"captures from the lab, see README\n");
    if let Some(sh) = crate::needs::shared() {
        for rel in [
            "captures/rcvbuf_64k/client.pcap.gz",
            "captures/rcvbuf_64k/truth.json",
            "captures/wscale_strip_syn/server.pcap.gz",
            "captures/ts_stripped/client.pcapng.gz",
            "external/nDPI__fix2.pcap",
            "external/tcpdump__tcp-handshake-nano.pcap",
            "external/zeek__tcp__timestamp.pcap",
            "external/tcpdump__of13_ericsson.pcapng",
            "external/broken/derived__resp_1_benchmark.truncated-midpacket.pcap",
            "external/broken/derived__resp_1_benchmark.truncated-gzip.pcap.gz",
            "external/broken/derived__resp_1_benchmark.huge-caplen.pcap",
            "external/broken/derived__empty.pcap",
            "external/broken/libpcap__shb-option-too-long.pcapng",
            "external/broken/libpcap__pcap-invalid-version-1.pcap",
        ] {
            if let Some(from) = crate::needs::shared_file(&sh, rel) {
                link(&from, &dir.join("shared").join(rel));
            }
        }
    }
}

/// Every file under `dir`, as the batch names them when given `dir`.
pub fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

pub fn run(args: &[&str]) -> Output {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "bdpscope {args:?} ended with {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub fn batch(inputs: &[&Path], out: &Path, extra: &[&str]) -> Output {
    let mut args: Vec<String> = vec!["batch".into()];
    args.extend(inputs.iter().map(|p| p.to_string_lossy().into_owned()));
    args.push("--out".into());
    args.push(out.to_string_lossy().into_owned());
    args.extend(extra.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&refs)
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A CSV file's header and its rows, sorted.
pub fn csv_rows(path: &Path) -> (String, Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap_or("").to_string();
    let mut rows: Vec<String> = lines.map(str::to_string).collect();
    rows.sort();
    (header, rows)
}

/// Splits a CSV line into fields (quotes as polars writes them).
pub fn fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// captures.csv as rows of (column -> value).
pub fn captures(out: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let text = std::fs::read_to_string(out.join("captures.csv")).unwrap();
    let mut lines = text.lines();
    let header = fields(lines.next().unwrap());
    lines.map(|l| header.iter().cloned().zip(fields(l)).collect()).collect()
}
