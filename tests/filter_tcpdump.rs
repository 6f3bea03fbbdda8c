//! The capture filter selects exactly the records `tcpdump -r FILE EXPR` selects: the
//! same frame numbers, on every capture of fixtures/ (plus VLAN-tagged, Linux cooked v1
//! and v2 and two-link-type pcapng versions of one, made here) and of ../shared/external,
//! over a set of expressions (host, net, port, portrange, not/and/or, "between" as host A
//! and host B, TCP flags, VLAN, MPLS, PPPoE, IPv6, greater/less, link-layer addresses and
//! directions, byte-offset arithmetic), where some are refused by libpcap for some link
//! types and must be refused by both.
//!
//! Two levels:
//! - the library: the program `tcpdump -r FILE -ddd EXPR` prints, run by `bdpscope::bpf`
//!   through the reader's filter, against the records tcpdump writes with `-w` (aligned
//!   back to their record numbers), on every record;
//! - the command: `bdpscope packets FILE EXPR` (the binary's own compile path) gives the
//!   TCP segments of tcpdump's selection.
//!
//! Needs tcpdump (Debian's `tcpdump`) and, for the external captures, ../shared (or
//! $BDPSCOPE_SHARED). Without them the test says so and skips locally, and fails when
//! $BDPSCOPE_CI is set (CI installs tcpdump and has ../shared).

mod cli_common;

use bdpscope::bpf::{PacketFilter, Program};
use bdpscope::capture::{CaptureReader, LinkType, PcapNgWriter, PcapWriter};
use bdpscope::time::Timestamp;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

fn missing(what: &str) {
    if std::env::var_os("BDPSCOPE_CI").is_some() {
        panic!("{what} (BDPSCOPE_CI is set: this test must run)");
    }
    eprintln!("skipped: {what}");
}

fn tcpdump() -> Option<PathBuf> {
    ["/usr/bin/tcpdump", "/usr/sbin/tcpdump"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

fn shared() -> Option<PathBuf> {
    let p = std::env::var_os("BDPSCOPE_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    p.is_dir().then_some(p)
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("bdpscope-filter-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Rec {
    number: u64,
    ts: i64,
    link: LinkType,
    wire_len: u32,
    data: Vec<u8>,
}

/// Every record our reader returns (up to a cut or damage).
fn read_all(path: &Path) -> Option<Vec<Rec>> {
    let file = std::fs::File::open(path).ok()?;
    let mut r = CaptureReader::new(Box::new(file)).ok()?;
    let mut out = Vec::new();
    while let Ok(Some(f)) = r.next_frame() {
        out.push(Rec {
            number: f.number,
            ts: f.ts.nanos(),
            link: f.link,
            wire_len: f.wire_len,
            data: f.data.to_vec(),
        });
    }
    Some(out)
}

/// tcpdump reads neither gzip nor zstd: a decompressed copy (what decompresses of a cut
/// stream), or the file itself.
fn plain(path: &Path, dir: &Path) -> PathBuf {
    use std::io::Read;
    let bytes = std::fs::read(path).unwrap();
    let mut out = Vec::new();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let _ = flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_end(&mut out);
    } else if bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        let _ = zstd::stream::read::Decoder::new(&bytes[..]).map(|mut d| d.read_to_end(&mut out));
    } else {
        return path.to_path_buf();
    }
    let p = dir.join(format!("{}.plain", path.file_name().unwrap().to_string_lossy()));
    std::fs::write(&p, out).unwrap();
    p
}

/// What tcpdump did with an expression on a file.
#[derive(Debug)]
enum Tcpdump {
    /// libpcap refused the expression for this file (its message, for failures).
    Refused(#[allow(dead_code)] String),
    /// The numbers of the records it wrote, aligned back to the input.
    Selected(Vec<u64>),
}

/// `tcpdump -r FILE -w OUT EXPR`, OUT's records matched in order to the input's (a
/// filter is a function of the bytes and the length, so equal records get equal answers
/// and the first unused equal record is the one).
fn tcpdump_selects(td: &Path, file: &Path, input: &[Rec], expr: &str, out: &Path) -> Tcpdump {
    // Run as root, tcpdump drops to its own user before writing and could not replace a
    // file left by an earlier run: there must be none.
    let _ = std::fs::remove_file(out);
    let o = Command::new(td)
        .args(["--time-stamp-precision=nano", "-r"])
        .arg(file)
        .arg("-w")
        .arg(out)
        .arg("--")
        .arg(expr)
        .output()
        .expect("run tcpdump");
    let stderr = String::from_utf8_lossy(&o.stderr);
    let written = read_all(out);
    let Some(written) = written.filter(|_| out.exists()) else {
        return Tcpdump::Refused(stderr.trim().to_string());
    };
    if !o.status.success() && written.is_empty() && !stderr.contains("truncated") {
        return Tcpdump::Refused(stderr.trim().to_string());
    }
    let mut numbers = Vec::with_capacity(written.len());
    let mut at = 0;
    for w in &written {
        let Some(k) = input[at..]
            .iter()
            .position(|r| r.ts == w.ts && r.wire_len == w.wire_len && r.data == w.data)
        else {
            panic!(
                "{}: tcpdump wrote a record ({} bytes at {}) that is not among the input's after record {}",
                file.display(),
                w.data.len(),
                w.ts,
                input.get(at).map_or(0, |r| r.number)
            );
        };
        numbers.push(input[at + k].number);
        at += k + 1;
    }
    Tcpdump::Selected(numbers)
}

/// The program tcpdump compiles for this file, or libpcap's refusal.
fn program(td: &Path, file: &Path, expr: &str) -> Result<Program, String> {
    let o = Command::new(td)
        .arg("-r")
        .arg(file)
        .args(["-ddd", "--", expr])
        .output()
        .expect("run tcpdump");
    if !o.status.success() {
        return Err(String::from_utf8_lossy(&o.stderr).trim().to_string());
    }
    Ok(Program::parse_ddd(&String::from_utf8_lossy(&o.stdout)).expect("tcpdump's program passes our checks"))
}

/// The numbers of the records the library keeps with `program` (compiled for `link`).
fn library_selects(path: &Path, link: LinkType, program: Program) -> Vec<u64> {
    let mut r = CaptureReader::new(Box::new(std::fs::File::open(path).unwrap())).unwrap();
    r.set_filter(Box::new(PacketFilter::new(
        "test",
        Box::new(move |l| {
            assert_eq!(l, link, "one link type per file here");
            Ok(program.clone())
        }),
    )));
    let mut out = Vec::new();
    while let Ok(Some(f)) = r.next_frame() {
        out.push(f.number);
    }
    out
}

fn mac(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(":")
}

/// The expressions tried on a capture: a fixed set, and some built from the capture's
/// first TCP segment (its addresses, ports, and on Ethernet its source MAC), so that
/// host/net/port filters select part of every capture.
fn expressions(recs: &[Rec]) -> Vec<String> {
    let mut e: Vec<String> = [
        "tcp",
        "udp",
        "not tcp",
        "ip",
        "ip6",
        "arp",
        "icmp or icmp6",
        "tcp[tcpflags] & tcp-syn != 0",
        "tcp[tcpflags] & (tcp-fin|tcp-rst) != 0",
        "tcp[13] == 0x10",
        "vlan",
        "vlan and tcp",
        "vlan 10 or vlan 20",
        "mpls",
        "pppoes and tcp",
        "greater 1000",
        "less 100",
        "len >= 60 and len <= 1514",
        "ether broadcast or ether multicast",
        "ip[6:2] & 0x1fff != 0 or ip[6] & 0x20 != 0",
        "ip6 and tcp",
        "ip proto 6",
        "inbound",
        "ip broadcast",
        "tcp port 80 and (((ip[2:2] - ((ip[0]&0xf)<<2)) - ((tcp[12]&0xf0)>>2)) != 0)",
        "tcp and tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x47455420",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let first = recs
        .iter()
        .find_map(|r| bdpscope::decode::decode(r.link, &r.data).ok().map(|s| (r, s)));
    if let Some((r, s)) = first {
        let (a, b) = (s.src, s.dst);
        let (ap, bp) = (s.src_port, s.dst_port);
        let lo = ap.min(bp);
        let net = if a.is_ipv4() {
            format!("{a}/16")
        } else {
            format!("{a}/64")
        };
        e.extend([
            format!("host {a}"),
            format!("src host {a}"),
            format!("dst host {b}"),
            format!("host {a} and host {b}"),
            format!("net {net}"),
            format!("port {bp}"),
            format!("src port {ap} or dst port {ap}"),
            format!("portrange {lo}-{}", lo.saturating_add(100)),
            format!("not port {bp}"),
            format!("host {a} and (port {bp} or port {ap}) and not arp"),
            format!("tcp and not (src host {a} and src port {ap})"),
        ]);
        if r.link == LinkType::ETHERNET && r.data.len() >= 12 {
            e.push(format!("ether src {}", mac(&r.data[6..12])));
            e.push(format!("ether host {} and tcp", mac(&r.data[0..6])));
        }
    }
    e
}

/// The expressions the command-line check runs (a subset: each run starts the binary).
fn cli_subset(e: &[String]) -> Vec<String> {
    e.iter()
        .filter(|x| {
            x.starts_with("host ")
                || x.starts_with("tcp[tcpflags] & tcp-syn")
                || x.starts_with("vlan and")
                || x.starts_with("port ")
                || x.starts_with("not port")
                || x.as_str() == "greater 1000"
                || x.as_str() == "inbound"
        })
        .cloned()
        .collect()
}

#[derive(Default)]
struct Tally {
    captures: AtomicU64,
    pairs: AtomicU64,
    refused: AtomicU64,
    frames: AtomicU64,
    selected: AtomicU64,
    cli_pairs: AtomicU64,
    cli_segments: AtomicU64,
    failures: Mutex<Vec<String>>,
}

impl Tally {
    fn fail(&self, s: String) {
        self.failures.lock().unwrap().push(s);
    }
    fn report(&self, what: &str) {
        let f = self.failures.lock().unwrap();
        eprintln!(
            "{what}: {} captures x expressions = {} pairs ({} refused by libpcap for the link type, by both), \
             {} records compared, {} selected; command line: {} pairs, {} TCP segments; {} mismatches",
            self.captures.load(Ordering::Relaxed),
            self.pairs.load(Ordering::Relaxed),
            self.refused.load(Ordering::Relaxed),
            self.frames.load(Ordering::Relaxed),
            self.selected.load(Ordering::Relaxed),
            self.cli_pairs.load(Ordering::Relaxed),
            self.cli_segments.load(Ordering::Relaxed),
            f.len()
        );
        assert!(f.is_empty(), "{what}: {} mismatches:\n{}", f.len(), f.join("\n"));
    }
}

/// Frame numbers of `bdpscope packets FILE [EXPR]` (stderr when it printed no rows).
fn packets(file: &Path, expr: Option<&str>) -> (Vec<u64>, String, Option<i32>) {
    let mut cmd = cli_common::bin();
    cmd.arg("packets").arg(file);
    if let Some(e) = expr {
        cmd.args(["-f", e]);
    }
    let o = cmd.output().unwrap();
    let rows = String::from_utf8_lossy(&o.stdout)
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').next()?.parse().ok())
        .collect();
    (rows, String::from_utf8_lossy(&o.stderr).into_owned(), o.status.code())
}

/// Compares the library's and the command's selection with tcpdump's on one capture.
fn check_capture(td: &Path, path: &Path, dir: &Path, tally: &Tally) {
    let Some(recs) = read_all(path) else { return };
    if recs.is_empty() {
        return;
    }
    let name = path.display().to_string();
    let links: HashSet<LinkType> = recs.iter().map(|r| r.link).collect();
    assert_eq!(links.len(), 1, "{name}: one link type per file here");
    let link = recs[0].link;
    let file = plain(path, dir);
    let exprs = expressions(&recs);
    let cli = cli_subset(&exprs);
    // The TCP segments (`packets` leaves out the capture duplicates: see
    // `only_copies_left_out`).
    let tcp_frames: HashSet<u64> = recs
        .iter()
        .filter(|r| bdpscope::decode::decode(r.link, &r.data).is_ok())
        .map(|r| r.number)
        .collect();
    tally.captures.fetch_add(1, Ordering::Relaxed);
    for (i, expr) in exprs.iter().enumerate() {
        let out = dir.join(format!("sel-{i}.pcap"));
        let theirs = tcpdump_selects(td, &file, &recs, expr, &out);
        let _ = std::fs::remove_file(&out);
        tally.pairs.fetch_add(1, Ordering::Relaxed);
        let ours = program(td, &file, expr);
        let selected = match (&theirs, ours) {
            (Tcpdump::Refused(_), Err(_)) => {
                tally.refused.fetch_add(1, Ordering::Relaxed);
                None
            }
            (Tcpdump::Selected(t), Ok(p)) => {
                let mine = library_selects(path, link, p);
                // tcpdump stops at a cut as our reader does; compare what both read.
                tally.frames.fetch_add(recs.len() as u64, Ordering::Relaxed);
                tally.selected.fetch_add(t.len() as u64, Ordering::Relaxed);
                if &mine != t {
                    let a: HashSet<_> = mine.iter().collect();
                    let b: HashSet<_> = t.iter().collect();
                    tally.fail(format!(
                        "{name} [{expr}]: ours {} records, tcpdump {}; only ours e.g. {:?}, only tcpdump's e.g. {:?}",
                        mine.len(),
                        t.len(),
                        a.difference(&b).take(5).collect::<Vec<_>>(),
                        b.difference(&a).take(5).collect::<Vec<_>>()
                    ));
                }
                Some(t.clone())
            }
            (t, o) => {
                tally.fail(format!(
                    "{name} [{expr}]: tcpdump {t:?}, our compile {:?}",
                    o.map(|_| "ok")
                ));
                None
            }
        };
        if !cli.contains(expr) {
            continue;
        }
        tally.cli_pairs.fetch_add(1, Ordering::Relaxed);
        let (rows, stderr, code) = packets(path, Some(expr));
        match selected {
            Some(t) => {
                let want: Vec<u64> = t.into_iter().filter(|n| tcp_frames.contains(n)).collect();
                tally.cli_segments.fetch_add(want.len() as u64, Ordering::Relaxed);
                if rows != want && !only_copies_left_out(path, expr, &rows, &want) {
                    tally.fail(format!(
                        "{name} [{expr}]: `bdpscope packets` gave {} segments, tcpdump's selection has {} TCP segments",
                        rows.len(),
                        want.len()
                    ));
                }
            }
            None => {
                // Refused for this link type: no rows, and libpcap's reason on stderr.
                if !rows.is_empty() || !(stderr.contains("cannot be compiled") || code == Some(2)) {
                    tally.fail(format!(
                        "{name} [{expr}]: libpcap refuses it here, bdpscope gave {} rows: {stderr}",
                        rows.len()
                    ));
                }
            }
        }
    }
}

/// Whether `rows` are `want` but for the capture duplicates of the selection (the packets
/// view lists the segments the analysis read: `flow::duplicate`), as many as the analysis of
/// the same selection says it set aside. A copy whose original the filter left out is no
/// copy there, as in a file written with the filter.
fn only_copies_left_out(file: &Path, expr: &str, rows: &[u64], want: &[u64]) -> bool {
    let mut left = want.iter();
    if !rows.iter().all(|r| left.any(|w| w == r)) {
        return false;
    }
    let o = cli_common::bin()
        .args(["analyze", "--format", "json", "-f", expr])
        .arg(file)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    doc["captures"][0]["capture_duplicates"].as_u64() == Some((want.len() - rows.len()) as u64)
}

fn captures_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            captures_under(&p, out);
        } else if !p
            .extension()
            .is_some_and(|x| x == "md" || x == "json" || x == "txt" || x == "py")
        {
            out.push(p);
        }
    }
}

fn check_all(what: &str, files: Vec<PathBuf>, td: &Path) {
    let tally = Tally::default();
    let queue = Mutex::new(files);
    std::thread::scope(|s| {
        for w in 0..2 {
            let (queue, tally) = (&queue, &tally);
            s.spawn(move || {
                let dir = temp_dir(&format!("{what}-{w}"));
                loop {
                    let Some(f) = queue.lock().unwrap().pop() else { break };
                    check_capture(td, &f, &dir, tally);
                }
                let _ = std::fs::remove_dir_all(&dir);
            });
        }
    });
    tally.report(what);
}

/// One fixture rewritten with other link layers: 802.1Q tags on alternate frames (VID 10
/// and 20), Linux cooked v1 and v2 headers (packet type by direction, for
/// inbound/outbound). Returns the files written.
fn relinked(dir: &Path) -> Vec<PathBuf> {
    let src = read_all(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/rcvbuf_16k/client.pcap.gz")).unwrap();
    let client_mac = src[0].data[6..12].to_vec();
    let mut files = Vec::new();
    let mut write = |name: &str, link: LinkType, f: &dyn Fn(usize, &Rec) -> Vec<u8>| {
        let mut w = PcapWriter::new(Vec::new(), link, 65535, true, false).unwrap();
        for (i, r) in src.iter().enumerate() {
            let d = f(i, r);
            let extra = d.len() as u32 - r.data.len() as u32;
            w.write_packet(Timestamp::from_nanos(r.ts), &d, r.wire_len + extra)
                .unwrap();
        }
        let p = dir.join(name);
        std::fs::write(&p, w.into_inner()).unwrap();
        files.push(p);
    };
    write("vlan.pcap", LinkType::ETHERNET, &|i, r| {
        let mut d = r.data[..12].to_vec();
        if i % 2 == 0 {
            d.extend_from_slice(&[0x81, 0x00, 0x00, if i % 4 == 0 { 10 } else { 20 }]);
        }
        d.extend_from_slice(&r.data[12..]);
        d
    });
    let outgoing = |r: &Rec| r.data[6..12] == client_mac[..];
    write("sll.pcap", LinkType::LINUX_SLL, &|_, r| {
        let mut d = vec![0, if outgoing(r) { 4 } else { 0 }, 0, 1, 0, 6];
        d.extend_from_slice(&r.data[6..12]);
        d.extend_from_slice(&[0, 0]);
        d.extend_from_slice(&r.data[12..]);
        d
    });
    write("sll2.pcap", LinkType::LINUX_SLL2, &|_, r| {
        let mut d = r.data[12..14].to_vec();
        d.extend_from_slice(&[0, 0, 0, 0, 0, 2, 0, 1, if outgoing(r) { 4 } else { 0 }, 6]);
        d.extend_from_slice(&r.data[6..12]);
        d.extend_from_slice(&[0, 0]);
        d.extend_from_slice(&r.data[14..]);
        d
    });
    files
}

#[test]
fn the_filter_selects_what_tcpdump_selects_on_the_fixtures() {
    let Some(td) = tcpdump() else {
        return missing("tcpdump is not installed (apt-get install tcpdump)");
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut files = Vec::new();
    captures_under(&root, &mut files);
    let dir = temp_dir("relinked");
    files.extend(relinked(&dir));
    files.sort();
    check_all("fixtures", files, &td);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_filter_selects_what_tcpdump_selects_on_the_external_captures() {
    let Some(td) = tcpdump() else {
        return missing("tcpdump is not installed (apt-get install tcpdump)");
    };
    let Some(shared) = shared() else {
        return missing("../shared is not present");
    };
    let mut files = Vec::new();
    captures_under(&shared.join("external"), &mut files);
    files.sort();
    check_all("external", files, &td);
}

/// pcapng with an Ethernet and a Linux cooked interface: tcpdump refuses such a file
/// (libpcap reads one link type per file); bdpscope compiles the filter for each link
/// type, so each interface's records are selected as tcpdump selects them from a file of
/// that interface alone.
#[test]
fn two_link_types_in_one_pcapng_each_get_their_program() {
    let Some(td) = tcpdump() else {
        return missing("tcpdump is not installed (apt-get install tcpdump)");
    };
    let dir = temp_dir("pcapng");
    let files = relinked(&dir);
    let eth = read_all(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/rcvbuf_16k/client.pcap.gz")).unwrap();
    let sll = read_all(&files[1]).unwrap();
    let mut w = PcapNgWriter::new(Vec::new(), false).unwrap();
    w.add_interface(LinkType::ETHERNET, 65535, Some(9)).unwrap();
    w.add_interface(LinkType::LINUX_SLL, 65535, Some(9)).unwrap();
    // Odd records from the Ethernet file, even ones from the cooked one.
    let (mut eth_part, mut sll_part) = (Vec::new(), Vec::new());
    for (i, (e, s)) in eth.iter().zip(&sll).enumerate() {
        let (iface, r) = if i % 2 == 0 { (0, e) } else { (1, s) };
        w.write_packet(iface, Timestamp::from_nanos(r.ts), &r.data, r.wire_len)
            .unwrap();
        let part = if iface == 0 { &mut eth_part } else { &mut sll_part };
        part.push((i as u64 + 1, r.clone()));
    }
    let mixed = dir.join("mixed.pcapng");
    std::fs::write(&mixed, w.into_inner()).unwrap();
    let part_file = |name: &str, link, part: &[(u64, Rec)]| {
        let mut pw = PcapWriter::new(Vec::new(), link, 65535, true, false).unwrap();
        for (_, r) in part {
            pw.write_packet(Timestamp::from_nanos(r.ts), &r.data, r.wire_len)
                .unwrap();
        }
        let p = dir.join(name);
        std::fs::write(&p, pw.into_inner()).unwrap();
        p
    };
    let eth_file = part_file("eth.pcap", LinkType::ETHERNET, &eth_part);
    let sll_file = part_file("sll.pcap", LinkType::LINUX_SLL, &sll_part);
    let mut checked = 0;
    for expr in [
        "tcp[tcpflags] & tcp-syn != 0",
        "greater 1000",
        "src host 10.77.0.2",
        "inbound",
        "ether src 02:00:00:00:00:01",
    ] {
        let mut want = Vec::new();
        for (file, part) in [(&eth_file, &eth_part), (&sll_file, &sll_part)] {
            // Numbered as in the part's own file.
            let recs: Vec<Rec> = part
                .iter()
                .enumerate()
                .map(|(k, (_, r))| Rec {
                    number: k as u64 + 1,
                    ..r.clone()
                })
                .collect();
            match tcpdump_selects(&td, file, &recs, expr, &dir.join("out.pcap")) {
                // The numbers are the part's own; map them to the mixed file's.
                Tcpdump::Selected(n) => want.extend(n.into_iter().map(|k| part[k as usize - 1].0)),
                Tcpdump::Refused(_) => {}
            }
        }
        want.sort_unstable();
        let (rows, stderr, _) = packets(&mixed, Some(expr));
        let (all, _, _) = packets(&mixed, None);
        let all: HashSet<u64> = all.into_iter().collect();
        let want: Vec<u64> = want.into_iter().filter(|n| all.contains(n)).collect();
        if expr.starts_with("inbound") || expr.starts_with("ether") {
            // Refused for one of the two link types: the read stops at its first record.
            assert!(stderr.contains("cannot be compiled for link type"), "[{expr}] {stderr}");
            assert!(
                rows.len() <= 1,
                "[{expr}] at most the record before the first refused one"
            );
            continue;
        }
        assert_eq!(rows, want, "[{expr}]");
        checked += rows.len();
    }
    assert!(checked > 100, "only {checked} segments compared");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The binary compiles with a 24-byte file header and snaplen 0 (libpcap's maximum):
/// the snapshot length changes nothing in a program but the value a match returns.
#[test]
fn the_snapshot_length_changes_only_the_return_value() {
    let Some(td) = tcpdump() else {
        return missing("tcpdump is not installed (apt-get install tcpdump)");
    };
    let exprs = [
        "host 10.1.1.2 and port 443",
        "tcp[tcpflags] & tcp-syn != 0",
        "vlan and tcp",
        "ip6 and tcp port 22",
        "greater 100",
        "net 10.0.0.0/8 or portrange 1000-2000",
        "tcp and tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x47455420",
    ];
    let mut compared = 0;
    for dlt in ["EN10MB", "LINUX_SLL", "LINUX_SLL2", "RAW", "NULL"] {
        for e in exprs {
            let prog = |snap: &str| -> Option<Vec<String>> {
                let o = Command::new(&td)
                    .args(["-y", dlt, "-s", snap, "-ddd", "--", e])
                    .output()
                    .unwrap();
                o.status.success().then(|| {
                    String::from_utf8_lossy(&o.stdout)
                        .lines()
                        .map(|l| {
                            if l.starts_with("6 0 0 ") && l != "6 0 0 0" {
                                "6 0 0 SNAP".into()
                            } else {
                                l.to_string()
                            }
                        })
                        .collect()
                })
            };
            let (a, b) = (prog("100"), prog("0"));
            assert_eq!(a, b, "{dlt} [{e}]");
            compared += a.is_some() as u32;
        }
    }
    assert!(compared > 25);
}
