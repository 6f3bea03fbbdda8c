//! `compare` end to end: hand-built captures of one connection; every pair of lab
//! captures of one scenario (both vantage points: ../shared/captures, and the corpora
//! `BDPSCOPE_LAB_CORPORA` names, folders of scenarios separated by `:`) and the real pair
//! in ../shared/real, which must match with the findings the lab's truth supports;
//! unrelated captures (other scenarios, a capture on other ports and ISNs), which must
//! not; NAT'd copies (addresses, ports and ISNs rewritten here), which must match by
//! their payload when they have one. Exit status 1 when nothing is in common.

mod cli_common;
mod needs;

use bdpscope::capture::{CaptureReader, LinkType, PcapWriter};
use bdpscope::compare::{self, Comparison, Side};
use bdpscope::decode::{self, TcpFlags};
use bdpscope::testkit::TcpPacket;
use bdpscope::time::Timestamp;
use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

/// The connection as one point sees it.
struct View {
    client: &'static str,
    server: &'static str,
    cisn: u32,
    sisn: u32,
    /// The SYN's window-scale option (None: four NOPs in its place, as strippers leave).
    syn_ws: Option<u8>,
    /// Further from the client by this many µs (c2s later, s2c earlier).
    shift_us: i64,
}

fn capture(v: &View) -> Side {
    let mut pkts: Vec<(i64, TcpPacket)> = Vec::new();
    let mut syn = TcpPacket::new(v.client, v.server)
        .seq(v.cisn)
        .flags(TcpFlags::SYN)
        .window(65535)
        .mss(1460)
        .sack_perm()
        .ts(1, 0);
    syn = match v.syn_ws {
        Some(w) => syn.wscale(w),
        None => syn.raw_options(&[1, 1, 1, 1]),
    };
    let c2s = |t: i64| t + v.shift_us;
    let s2c = |t: i64| t - v.shift_us;
    pkts.push((c2s(0), syn));
    let sa = TcpPacket::new(v.server, v.client)
        .seq(v.sisn)
        .ack(v.cisn + 1)
        .flags(TcpFlags::SYN | TcpFlags::ACK)
        .window(65160)
        .mss(1460)
        .sack_perm()
        .ts(9, 1);
    pkts.push((s2c(40_000), if v.syn_ws.is_some() { sa.wscale(7) } else { sa }));
    pkts.push((
        c2s(40_050),
        TcpPacket::new(v.client, v.server)
            .seq(v.cisn + 1)
            .ack(v.sisn + 1)
            .window(502)
            .ts(2, 9),
    ));
    for i in 0..100u32 {
        let t = 80_000 + i as i64 * 200;
        pkts.push((
            s2c(t),
            TcpPacket::new(v.server, v.client)
                .seq(v.sisn + 1 + i * 1448)
                .ack(v.cisn + 1)
                .window(509)
                .ts(10 + i, 2)
                .payload_len(1448),
        ));
        pkts.push((
            c2s(t + 20),
            TcpPacket::new(v.client, v.server)
                .seq(v.cisn + 1)
                .ack(v.sisn + 1 + (i + 1) * 1448)
                .window(502)
                .ts(3 + i, 10 + i),
        ));
    }
    pkts.sort_by_key(|p| p.0);
    let mut w = PcapWriter::new(Vec::new(), LinkType::ETHERNET, 128, false, false).unwrap();
    for (us, p) in &pkts {
        let (_, bytes) = p.build();
        let n = bytes.len().min(128);
        w.write_packet(
            Timestamp::from_nanos(1_700_000_000_000_000_000 + us * 1000),
            &bytes[..n],
            p.wire_len() as u32,
        )
        .unwrap();
    }
    let mut r = CaptureReader::from_reader(std::io::Cursor::new(w.into_inner())).unwrap();
    compare::read(&mut r, "test")
}

const CLIENT_SIDE: View = View {
    client: "10.0.0.1:40000",
    server: "10.0.0.2:5001",
    // Drawn, as RFC 6528 ISNs are (a round number proves little).
    cisn: 2_463_534_242,
    sisn: 3_181_209_641,
    syn_ws: Some(7),
    shift_us: 0,
};

#[test]
fn the_same_capture_twice_shows_no_middlebox_effects() {
    let a = capture(&CLIENT_SIDE);
    let c = compared(&a, &a);
    assert!(c.in_common);
    assert_eq!(c.connections.len(), 1);
    assert_eq!(c.connections[0].verdict, "no middlebox effects seen");
    assert!(c.summary.ends_with("no middlebox effects seen"));
}

#[test]
fn a_stripped_syn_behind_nat_with_isn_rewriting() {
    let a = capture(&CLIENT_SIDE);
    let b = capture(&View {
        client: "192.0.2.1:61000",
        cisn: 777_000_000,
        syn_ws: None,
        shift_us: 20_000,
        ..CLIENT_SIDE
    });
    let c = compared(&a, &b);
    assert_eq!(c.connections.len(), 1, "{c:#?}");
    let k = &c.connections[0];
    // the NAT kept the server's ISN: 32 bits against the 20 one candidate needs
    assert_eq!((k.matched_by.as_str(), k.match_strength.as_str()), ("ISN", "proven"));
    assert_eq!(k.nearer_client, "a");
    let m: Vec<(&str, &str, &str)> = k
        .middlebox
        .iter()
        .map(|m| (m.kind.as_str(), m.direction.as_str(), m.confidence.as_str()))
        .collect();
    assert_eq!(m, vec![("wscale-stripped", "syn", "certain")]);
    let d: Vec<&str> = k.differences.iter().map(|d| d.kind.as_str()).collect();
    for want in ["address-rewritten", "isn-shifted", "option-removed"] {
        assert!(d.contains(&want), "{d:?}");
    }
    assert_eq!(k.c2s.one_way_delay_ms, Some(20.0));
    assert_eq!(k.round_trip_between_points_ms, Some(40.0));
    // JSON renders
    let json = serde_json::to_string(&c).unwrap();
    assert!(json.contains("\"wscale-stripped\""));
}

/// `compare`, with its laws (`compare::laws`) checked on the result.
fn compared(a: &Side, b: &Side) -> Comparison {
    let c = compare::compare(a, b);
    let broken = compare::laws::check(&c);
    assert!(broken.is_empty(), "{} / {}: laws broken: {broken:#?}", a.name, b.name);
    c
}

// ---- captures on disk ---------------------------------------------------------------

fn read(path: &Path) -> Side {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut r = CaptureReader::from_reader(f).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    compare::read(&mut r, &path.display().to_string())
}

fn read_bytes(bytes: Vec<u8>, name: &str) -> Side {
    let mut r = CaptureReader::from_reader(std::io::Cursor::new(bytes)).unwrap();
    compare::read(&mut r, name)
}

/// How a middlebox between the points rewrites a connection: endpoints (NAT), the offset
/// added to the sequence numbers each endpoint sends (ISN rewriting), and the clock.
struct Rewrite {
    endpoint: fn(SocketAddr) -> SocketAddr,
    seq_shift: fn(SocketAddr) -> u32,
    clock_ns: i64,
}

fn octets(ip: IpAddr) -> Vec<u8> {
    match ip {
        IpAddr::V4(v) => v.octets().to_vec(),
        IpAddr::V6(v) => v.octets().to_vec(),
    }
}

/// The capture at `path` as it would look behind the rewrite: addresses, ports, sequence
/// and acknowledgment numbers patched in place (checksums left stale: nothing here reads
/// them), timestamps shifted, everything else byte for byte.
fn rewrite(path: &Path, rw: &Rewrite) -> Vec<u8> {
    let f = std::fs::File::open(path).unwrap();
    let mut r = CaptureReader::from_reader(f).unwrap();
    let mut w: Option<PcapWriter<Vec<u8>>> = None;
    while let Some(frame) = r.next_frame().unwrap() {
        let w = w.get_or_insert_with(|| PcapWriter::new(Vec::new(), frame.link, 262_144, true, false).unwrap());
        let mut data = frame.data.to_vec();
        if let Ok(seg) = decode::decode(frame.link, frame.data) {
            let (src, dst) = (
                SocketAddr::new(seg.src, seg.src_port),
                SocketAddr::new(seg.dst, seg.dst_port),
            );
            let (nsrc, ndst) = ((rw.endpoint)(src), (rw.endpoint)(dst));
            // The TCP header: the 12 bytes of ports, sequence and acknowledgment numbers.
            let mut pat = Vec::new();
            pat.extend(seg.src_port.to_be_bytes());
            pat.extend(seg.dst_port.to_be_bytes());
            pat.extend(seg.seq.0.to_be_bytes());
            pat.extend(seg.ack.0.to_be_bytes());
            let t = data.windows(12).position(|x| x == pat).expect("TCP header");
            data[t..t + 2].copy_from_slice(&nsrc.port().to_be_bytes());
            data[t + 2..t + 4].copy_from_slice(&ndst.port().to_be_bytes());
            let seq = seg.seq.0.wrapping_add((rw.seq_shift)(src));
            data[t + 4..t + 8].copy_from_slice(&seq.to_be_bytes());
            if seg.flags.ack() {
                let ack = seg.ack.0.wrapping_add((rw.seq_shift)(dst));
                data[t + 8..t + 12].copy_from_slice(&ack.to_be_bytes());
            }
            // The IP addresses: source then destination, the last such run before the TCP header.
            let mut ips = octets(seg.src);
            ips.extend(octets(seg.dst));
            let i = data[..t]
                .windows(ips.len())
                .rposition(|x| x == ips)
                .expect("IP addresses");
            let mut new_ips = octets(nsrc.ip());
            new_ips.extend(octets(ndst.ip()));
            data[i..i + new_ips.len()].copy_from_slice(&new_ips);
        }
        w.write_packet(Timestamp(frame.ts.0 + rw.clock_ns), &data, frame.wire_len)
            .unwrap();
    }
    w.expect("a capture with records").into_inner()
}

fn scenarios(root: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| end(p, "client").is_some() && end(p, "server").is_some())
        .collect();
    v.sort();
    v
}

/// A scenario's capture at one end (the lab writes pcap, or pcapng for some kinds).
fn end(scenario: &Path, which: &str) -> Option<PathBuf> {
    ["pcap.gz", "pcapng.gz"]
        .iter()
        .map(|ext| scenario.join(format!("{which}.{ext}")))
        .find(|p| p.is_file())
}

/// The lab scenarios to check: ../shared/captures, and the corpora BDPSCOPE_LAB_CORPORA names.
fn lab_scenarios() -> Option<Vec<PathBuf>> {
    let shared = needs::shared()?;
    let mut v = scenarios(&shared.join("captures"));
    assert!(v.len() >= 20, "only {} lab scenarios in {}", v.len(), shared.display());
    if let Some(more) = std::env::var_os("BDPSCOPE_LAB_CORPORA") {
        for root in std::env::split_paths(&more) {
            for corpus in std::fs::read_dir(&root).unwrap() {
                let p = corpus.unwrap().path();
                if p.is_dir() {
                    v.extend(scenarios(&p));
                }
            }
        }
    }
    Some(v)
}

/// The findings (kind, segment) a scenario's truth supports. A middlebox that strips an
/// option from both handshake segments leaves the SYN/ACK nothing to strip: a server
/// answers an option-less SYN without that option (window scale and timestamps: RFC 7323
/// §2.2 and §3.2; SACK-permitted: RFC 2018 §2), so the pair shows the SYN's only.
fn expected(truth: &serde_json::Value) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for m in truth["middlebox"].as_array().unwrap() {
        let (kind, at) = m.as_str().unwrap().split_once(':').unwrap();
        let kind = match kind {
            "sackok-stripped" => "sack-stripped",
            k => k,
        };
        let on = match (kind, at) {
            ("mss-clamped", _) => "both",
            (_, "syn" | "both") => "syn",
            (_, "synack") => "syn-ack",
            other => panic!("truth entry {other:?}"),
        };
        out.insert((kind.to_string(), on.to_string()));
    }
    out
}

fn findings(c: &Comparison) -> BTreeSet<(String, String, String)> {
    c.connections
        .iter()
        .flat_map(|k| &k.middlebox)
        .map(|m| (m.kind.to_string(), m.direction.to_string(), m.confidence.to_string()))
        .collect()
}

#[test]
fn every_lab_pair_matches_with_the_findings_its_truth_supports() {
    let Some(dirs) = lab_scenarios() else { return };
    let mut bad = Vec::new();
    let mut conns = 0;
    for d in &dirs {
        let truth: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join("truth.json")).unwrap()).unwrap();
        let c = compared(&read(&end(d, "client").unwrap()), &read(&end(d, "server").unwrap()));
        let flows = truth["flows"].as_array().map_or(0, |f| f.len());
        conns += c.connections.len();
        let want: BTreeSet<(String, String, String)> = expected(&truth)
            .into_iter()
            .map(|(k, on)| (k, on, "certain".to_string()))
            .collect();
        let problems = [
            (!c.in_common).then(|| "nothing in common".to_string()),
            (c.connections.len() != flows || !c.only_in_a.is_empty() || !c.only_in_b.is_empty()).then(|| {
                format!(
                    "{} matched, {} flows in the truth, {} / {} unmatched",
                    c.connections.len(),
                    flows,
                    c.only_in_a.len(),
                    c.only_in_b.len()
                )
            }),
            c.connections
                .iter()
                .find(|k| k.match_strength != "proven" || k.nearer_client != "a")
                .map(|k| {
                    format!(
                        "{} {}, nearer the client: {}",
                        k.matched_by, k.match_strength, k.nearer_client
                    )
                }),
            (findings(&c) != want).then(|| format!("findings {:?}, truth supports {want:?}", findings(&c))),
        ];
        for p in problems.into_iter().flatten() {
            bad.push(format!("{}: {p}", d.display()));
        }
    }
    eprintln!("{} lab pairs, {conns} connections matched", dirs.len());
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

fn teto(shared: &Path, end: &str) -> Option<PathBuf> {
    needs::shared_file(shared, &format!("real/teto__pymptcpanalyzer__{end}_1_tcp_only.pcap"))
}

#[test]
fn the_real_pair_from_both_ends_matches_with_the_client_file_nearer_the_client() {
    let Some(shared) = needs::shared() else { return };
    let (Some(client), Some(server)) = (teto(&shared, "client"), teto(&shared, "server")) else {
        return;
    };
    let c = compared(&read(&client), &read(&server));
    assert!(c.in_common);
    assert_eq!((c.connections.len(), c.only_in_a.len(), c.only_in_b.len()), (4, 0, 0));
    for k in &c.connections {
        assert_eq!(
            (
                k.matched_by.as_str(),
                k.match_strength.as_str(),
                k.nearer_client.as_str()
            ),
            ("4-tuple and ISN", "proven", "a"),
            "{}",
            k.match_evidence
        );
        // the same options at both ends: nothing stripped or clamped; nothing rewritten
        // (the duplicate ACKs after a loss, told apart by their TSval, pair with their
        // own copies: once 87 ACKs showed a "rewritten" window, the next ACK's)
        assert!(k.middlebox.is_empty(), "{:?}", k.middlebox);
        assert!(k.differences.is_empty(), "{:?}", k.differences);
        // the base RTT split: the client capture's loop through the server spans the
        // round trip between the points and the server side
        let r = k.rtt_split.as_ref().unwrap();
        let through_server = r.near_client_through_server_ms.unwrap();
        assert!(
            through_server >= r.between_ms + r.server_side_ms.unwrap() - 1.0,
            "{r:?}"
        );
        // examples/topology.json of the source: 50 ms one way client -> server
        let rt = k.round_trip_between_points_ms.unwrap();
        assert!((99.0..102.0).contains(&rt), "{rt}");
    }
}

#[test]
fn unrelated_lab_captures_have_nothing_in_common() {
    // Every ordered pair of distinct scenarios (../shared/captures and the corpora named;
    // the same kind in two corpora is two unrelated runs), three ways each. The lab uses
    // the same two addresses and server port everywhere: a client port reused by chance
    // gives the same 4-tuple.
    let Some(dirs) = lab_scenarios() else { return };
    let sides: Vec<(Side, Side)> = dirs
        .iter()
        .map(|d| (read(&end(d, "client").unwrap()), read(&end(d, "server").unwrap())))
        .collect();
    let mut pairs = 0;
    let mut bad = Vec::new();
    for (x, dx) in dirs.iter().enumerate() {
        for (y, dy) in dirs.iter().enumerate().filter(|(y, _)| *y != x) {
            for (a, b) in [
                (&sides[x].0, &sides[y].1),
                (&sides[x].1, &sides[y].1),
                (&sides[x].0, &sides[y].0),
            ] {
                pairs += 1;
                let c = compared(a, b);
                if c.in_common || !c.connections.is_empty() || findings(&c).iter().any(|f| f.2 == "certain") {
                    bad.push(format!("{} / {}: {}", dx.display(), dy.display(), c.summary));
                }
            }
        }
    }
    eprintln!("{pairs} unrelated lab pairs, {} matched", bad.len());
    assert!(pairs >= 20 * 19 * 3);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_issues_case_exits_1_and_says_why() {
    // Two unrelated lab runs, other ports, 11 s apart: once "matched by segment
    // sequence", with certain findings.
    let Some(shared) = needs::shared() else { return };
    let (Some(a), Some(b)) = (
        needs::shared_file(&shared, "captures/wscale_strip_both/client.pcap.gz"),
        needs::shared_file(&shared, "captures/wscale_strip_synack/server.pcap.gz"),
    ) else {
        return;
    };
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let o = cli_common::run(&["compare", a, b, "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", cli_common::stderr(&o));
    assert!(cli_common::stderr(&o).contains("no connection in common"));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["in_common"], false);
    assert_eq!(v["connections"].as_array().unwrap().len(), 0);
    let notes = v["notes"].to_string();
    assert!(notes.contains("no connection has the same 4-tuple"), "{notes}");
    assert!(notes.contains("fill"), "{notes}");
    let o = cli_common::run(&["compare", a, b]);
    assert_eq!(o.status.code(), Some(1));
    assert!(cli_common::stdout(&o).contains("no connection is proven to be in both captures"));
    // the same scenario's two ends: exit 0
    let c = shared.join("captures/wscale_strip_both");
    let o = cli_common::run(&[
        "compare",
        c.join("client.pcap.gz").to_str().unwrap(),
        c.join("server.pcap.gz").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", cli_common::stderr(&o));
    assert!(cli_common::stdout(&o).contains("middlebox: wscale-stripped syn (certain)"));
}

fn other_ports_and_isns(e: SocketAddr) -> SocketAddr {
    SocketAddr::new(e.ip(), e.port() ^ 0x0400)
}

fn isn_shift(e: SocketAddr) -> u32 {
    0x5bd1_e995u32.wrapping_mul(e.port() as u32 | 1)
}

#[test]
fn a_capture_on_other_ports_and_isns_11_s_later_is_not_the_same_connection() {
    // The lab's payload is zeros: nothing but the numbers could tell the connection, and
    // those are rewritten.
    let cap = cli_common::fixture("rcvbuf_16k/client.pcap.gz");
    let moved = rewrite(
        &cap,
        &Rewrite {
            endpoint: other_ports_and_isns,
            seq_shift: isn_shift,
            clock_ns: 11_000_000_000,
        },
    );
    let c = compared(&read(&cap), &read_bytes(moved.clone(), "moved"));
    assert!(!c.in_common && c.connections.is_empty(), "{:?}", c.summary);
    let dir = cli_common::TempDir::new("compare-moved");
    let moved = dir.file("moved.pcap", &moved);
    let o = cli_common::run(&["compare", cap.to_str().unwrap(), moved.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", cli_common::stdout(&o));
    // The same capture on another clock only is the same connection: the same ISNs, and
    // one clock offset (11 s) explains every segment.
    let later = rewrite(
        &cap,
        &Rewrite {
            endpoint: |e| e,
            seq_shift: |_| 0,
            clock_ns: 11_000_000_000,
        },
    );
    let c = compared(&read(&cap), &read_bytes(later, "later"));
    assert!(c.in_common);
    assert_eq!(c.connections[0].matched_by, "4-tuple and ISN");
    assert_eq!(c.clock_offset_ms, Some(11_000.0));
}

fn natd(e: SocketAddr) -> SocketAddr {
    match e.ip() {
        IpAddr::V4(v) if v.octets()[3] == 1 => SocketAddr::new("192.0.2.77".parse().unwrap(), e.port() + 1000),
        IpAddr::V4(_) => SocketAddr::new("198.51.100.5".parse().unwrap(), e.port()),
        IpAddr::V6(_) => e,
    }
}

#[test]
fn a_natd_copy_of_the_real_pair_with_isns_rewritten_matches_by_its_payload() {
    let Some(shared) = needs::shared() else { return };
    let (Some(client), Some(server)) = (teto(&shared, "client"), teto(&shared, "server")) else {
        return;
    };
    let copy = rewrite(
        &server,
        &Rewrite {
            endpoint: natd,
            seq_shift: isn_shift,
            clock_ns: 0,
        },
    );
    let c = compared(&read(&client), &read_bytes(copy, "natd"));
    // The two iperf3 data connections carry iperf3's random payload. The two control
    // connections carry nothing two unrelated iperf3 runs could not share: the cookie is
    // the first segment (and is sent again on the data connection of the same test), the
    // rest is a 4-byte length, one-byte states and JSON whose first 16 bytes are the same
    // for any run (`{"tcp":true,"om`, `{"cpu_util_total`): they are not claimed.
    assert!(c.in_common, "{}", c.summary);
    assert_eq!(c.connections.len(), 2, "{}\nrejected: {:#?}", c.summary, c.rejected);
    assert_eq!((c.only_in_a.len(), c.only_in_b.len()), (2, 2), "{}", c.summary);
    for k in &c.connections {
        assert!(k.c2s.data_segments_a > 500, "{:?}", k.c2s);
        assert_eq!(
            (
                k.matched_by.as_str(),
                k.match_strength.as_str(),
                k.nearer_client.as_str()
            ),
            ("payload", "proven", "a"),
            "{}",
            k.match_evidence
        );
        let kinds: Vec<&str> = k.differences.iter().map(|d| d.kind.as_str()).collect();
        assert_eq!(kinds.iter().filter(|&&x| x == "isn-shifted").count(), 2, "{kinds:?}");
        assert_eq!(
            kinds.iter().filter(|&&x| x == "address-rewritten").count(),
            2,
            "{kinds:?}"
        );
        assert!(k.middlebox.is_empty(), "{:?}", k.middlebox);
        // the rewrite moved no segment: as many paired as without it
        assert!(k.c2s.matched > 0 && k.s2c.matched > 0);
    }
    // The same copy cut to its headers (Linux cooked 16 + IPv4 20 + TCP with timestamps
    // 32 bytes): nothing is left that could tell the connection.
    let headers_only = {
        let bytes = rewrite(
            &server,
            &Rewrite {
                endpoint: natd,
                seq_shift: isn_shift,
                clock_ns: 0,
            },
        );
        cut(&bytes, 68)
    };
    let c = compared(&read(&client), &read_bytes(headers_only, "natd, headers only"));
    assert!(!c.in_common && c.connections.is_empty(), "{}", c.summary);
    assert!(c.notes.iter().any(|n| n.contains("snaplen")), "{:?}", c.notes);
}

/// A pcap with every record cut to `snaplen` bytes, as `tcpdump -s` would have kept.
fn cut(pcap: &[u8], snaplen: usize) -> Vec<u8> {
    let mut r = CaptureReader::from_reader(std::io::Cursor::new(pcap.to_vec())).unwrap();
    let mut w: Option<PcapWriter<Vec<u8>>> = None;
    while let Some(f) = r.next_frame().unwrap() {
        let w = w.get_or_insert_with(|| PcapWriter::new(Vec::new(), f.link, snaplen as u32, true, false).unwrap());
        w.write_packet(f.ts, &f.data[..f.data.len().min(snaplen)], f.wire_len)
            .unwrap();
    }
    w.unwrap().into_inner()
}

/// Every capture file under `dir` (recursively), sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else if !p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// What a capture of ../shared was made from: its name after the source's prefix, up to
/// the first dot (`derived__resp_1_benchmark.truncated-midpacket.pcap` is a cut of
/// `tcpdump__resp_1_benchmark.pcap`: the same connections, rightly matched).
fn origin(p: &Path) -> String {
    let name = p.file_name().unwrap().to_string_lossy();
    let stem = name.rsplit("__").next().unwrap();
    stem.split('.').next().unwrap().to_string()
}

#[test]
fn real_captures_of_unrelated_traffic_have_nothing_in_common() {
    // Every pair of real captures of ../shared/real and ../shared/external (other people's
    // traffic, unrelated unless one file is a cut of the other or SOURCES.md pairs them).
    let Some(shared) = needs::shared() else { return };
    let mut paths = files(&shared.join("real"));
    paths.extend(files(&shared.join("external")));
    let sides: Vec<(PathBuf, Side)> = paths
        .into_iter()
        .filter_map(|p| {
            let f = std::fs::File::open(&p).ok()?;
            let mut r = CaptureReader::from_reader(f).ok()?;
            let side = compare::read(&mut r, &p.display().to_string());
            Some((p, side))
        })
        .collect();
    assert!(sides.len() >= 60, "only {} readable captures", sides.len());
    // SOURCES.md: "Receiver-side counterpart of teto__pymptcpanalyzer__client_1_tcp_only.pcap".
    let paired = |x: &Path, y: &Path| {
        let n = |p: &Path| p.file_name().unwrap().to_string_lossy().into_owned();
        let (x, y) = (n(x), n(y));
        let teto = [
            "teto__pymptcpanalyzer__client_1_tcp_only.pcap",
            "teto__pymptcpanalyzer__server_1_tcp_only.pcap",
        ];
        teto.contains(&x.as_str()) && teto.contains(&y.as_str())
    };
    let mut pairs = 0;
    let mut bad = Vec::new();
    for (i, (px, x)) in sides.iter().enumerate() {
        for (py, y) in &sides[i + 1..] {
            if origin(px) == origin(py) || paired(px, py) {
                continue;
            }
            pairs += 1;
            let c = compared(x, y);
            if c.in_common || !c.connections.is_empty() || findings(&c).iter().any(|f| f.2 == "certain") {
                bad.push(format!(
                    "{} / {}: {}: {:?}",
                    px.display(),
                    py.display(),
                    c.summary,
                    c.connections.iter().map(|k| &k.match_evidence).collect::<Vec<_>>()
                ));
            }
        }
    }
    eprintln!(
        "{} captures, {pairs} unrelated pairs, {} matched",
        sides.len(),
        bad.len()
    );
    assert!(pairs >= 60 * 59 / 2, "{pairs}");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_simulators_two_points_match_with_the_losses_between_them_counted() {
    // testkit's simulator captures each flow at the sender's and at the receiver's
    // interface; between them are the random loss and the bottleneck queue, and it counts
    // what each dropped: the data segments the comparison must find lost between the points.
    use bdpscope::testkit::sim::{self, Flow, Path};
    use std::time::Duration;
    let mut rows = Vec::new();
    for (seed, loss, upload) in [(1, 0.0, false), (2, 0.01, false), (3, 0.02, true), (4, 0.005, false)] {
        let mut p = Path::new(20_000_000, Duration::from_millis(40));
        p.loss = loss;
        p.seed = seed;
        p.queue_pkts = 60;
        let flow = Flow {
            upload,
            ..Flow::default()
        };
        let out = sim::run(&p, &[flow], Duration::from_secs(3));
        let t = &out.truth[0];
        let (a, b) = (
            read_bytes(out.sender_side_pcap.clone(), "sender side"),
            read_bytes(out.receiver_side_pcap.clone(), "receiver side"),
        );
        let c = compared(&a, &b);
        assert!(c.in_common, "{}", c.summary);
        let k = &c.connections[0];
        assert_eq!(
            (k.matched_by.as_str(), k.match_strength.as_str()),
            ("4-tuple and ISN", "proven")
        );
        // the sender's capture is nearer the client when the client sends
        assert_eq!(
            k.nearer_client,
            if t.sender_is_client { "a" } else { "b" },
            "seed {seed}"
        );
        let data = if t.sender_is_client { &k.c2s } else { &k.s2c };
        let dropped = t.queue_drops + t.random_losses;
        rows.push((seed, loss, data.lost, dropped));
        assert_eq!(
            data.lost, dropped,
            "seed {seed}: lost {} / dropped {dropped}",
            data.lost
        );
        // the round trip between the points: no more than the smallest RTT the sender
        // measured, no less than the propagation both ways
        let rt = k.round_trip_between_points_ms.unwrap();
        let min_rtt = t.min_rtt.unwrap().as_secs_f64() * 1e3;
        assert!(
            (40.0..=min_rtt + 1.0).contains(&rt),
            "seed {seed}: {rt} ms, min RTT {min_rtt} ms"
        );
    }
    eprintln!("(seed, loss, lost between the points, dropped by the simulator): {rows:?}");
}
