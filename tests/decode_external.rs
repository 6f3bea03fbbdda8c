//! Decodes every record of every capture in `../shared/external` (public captures from
//! the test suites of tcpdump, suricata, zeek, nDPI, ...), when that directory exists
//! (under CI it must, and tshark must run: see tests/needs).
//!
//! Asserts that nothing panics and, when `tshark` is installed, that every TCP header we
//! decode agrees field by field with tshark's (ports, raw sequence and acknowledgment
//! numbers, payload length, window field, flags, and the MSS / window-scale / timestamps
//! options). Prints per-file counts of decoded segments and skip reasons, and lists the
//! frames where tshark saw TCP but we did not (or the reverse), with our reason:
//!
//! ```text
//! cargo test --test decode_external -- --nocapture
//! ```
//!
//! Set `BDPSCOPE_NO_TSHARK=1` to skip the tshark comparison.

mod needs;

use bdpscope::capture::CaptureReader;
use bdpscope::decode::{decode, Segment, Skip};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The fields compared with tshark, as tshark prints them.
#[derive(Debug, Default, PartialEq, Eq, Clone)]
struct Fields {
    header: [u64; 7], // srcport, dstport, seq, ack, len, window, flags (AE as 0x100)
    /// The IP ECN codepoint (RFC 3168 §5); None for a tunnelled packet, whose first IP
    /// header tshark shows is the outer one (ours is the inner after RFC 6040).
    ecn: Option<u64>,
    mss: Option<u64>,
    wscale: Option<u64>,
    tsval: Option<u64>,
    tsecr: Option<u64>,
}

impl Fields {
    fn from_segment(s: &Segment) -> Fields {
        let o = &s.options;
        Fields {
            header: [
                s.src_port as u64,
                s.dst_port as u64,
                s.seq.0 as u64,
                s.ack.0 as u64,
                s.payload_len as u64,
                s.window as u64,
                s.flags.0 as u64 | (s.ae as u64) << 8,
            ],
            ecn: Some(s.ecn as u64),
            mss: o.mss.map(u64::from),
            // tshark shows the shift as sent
            wscale: o.wscale_raw_over_14.or(o.wscale).map(u64::from),
            tsval: o.timestamps.map(|t| t.val as u64),
            tsecr: o.timestamps.map(|t| t.ecr as u64),
        }
    }
}

const TSHARK_FIELDS: [&str; 17] = [
    "frame.number",
    "tcp.srcport",
    "tcp.dstport",
    "tcp.seq_raw",
    "tcp.ack_raw",
    "tcp.len",
    "tcp.window_size_value",
    "tcp.flags",
    "tcp.options.mss_val",
    "tcp.options.wscale.shift",
    "tcp.options.timestamp.tsval",
    "tcp.options.timestamp.tsecr",
    "icmp.type",
    "ip.dsfield.ecn",
    "ipv6.tclass.ecn",
    "ip.proto",
    "ipv6.nxt",
];

fn num(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

/// tshark's view: frame number -> fields of the first TCP header, plus whether the frame is
/// an ICMP message (whose TCP header is a quoted one). None when tshark is unavailable or
/// cannot read the file.
fn tshark(path: &Path) -> Option<BTreeMap<u64, (Fields, bool)>> {
    if std::env::var_os("BDPSCOPE_NO_TSHARK").is_some() {
        return None;
    }
    let mut cmd = Command::new("tshark");
    cmd.args(["-n", "-r"]).arg(path);
    cmd.args(["-Y", "tcp", "-T", "fields", "-E", "occurrence=f", "-E", "separator=/t"]);
    for f in TSHARK_FIELDS {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().ok()?;
    // tshark exits 2 on a capture cut short mid-record but prints what it read.
    if !out.status.success() && out.stdout.is_empty() {
        return None;
    }
    let mut rows = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let c: Vec<&str> = line.split('\t').collect();
        if c.len() < TSHARK_FIELDS.len() {
            continue;
        }
        let Some(frame) = num(c[0]) else { continue };
        let mut header = [0u64; 7];
        for (i, h) in header.iter_mut().enumerate() {
            *h = num(c[1 + i]).unwrap_or(u64::MAX);
        }
        // One IP header, not a tunnel (protocol 4 or 41): its ECN field is the segment's.
        let tunnel = [c[15], c[16]].iter().any(|p| matches!(num(p), Some(4 | 41)));
        let ecn = match (num(c[13]), num(c[14])) {
            (Some(e), None) | (None, Some(e)) if !tunnel => Some(e),
            _ => None,
        };
        let f = Fields {
            header,
            ecn,
            mss: num(c[8]),
            wscale: num(c[9]),
            tsval: num(c[10]),
            tsecr: num(c[11]),
        };
        rows.insert(frame, (f, !c[12].is_empty()));
    }
    Some(rows)
}

fn captures(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_none_or(|x| x != "md") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[derive(Default)]
struct FileReport {
    link: String,
    records: u64,
    decoded: u64,
    skips: BTreeMap<String, u64>,
    reader_stop: Option<String>,
    tshark_tcp: Option<u64>,
    /// Frames tshark decoded as TCP and we skipped, by our reason.
    only_tshark: BTreeMap<String, Vec<u64>>,
    only_ours: Vec<u64>,
    header_mismatches: Vec<String>,
    option_mismatches: Vec<String>,
}

fn decode_file(path: &Path) -> FileReport {
    let mut r = FileReport::default();
    let file = std::fs::File::open(path).unwrap();
    let mut reader = match CaptureReader::new(Box::new(file)) {
        Ok(rd) => rd,
        Err(e) => {
            r.reader_stop = Some(format!("not read: {e}"));
            return r;
        }
    };
    let mut ours: HashMap<u64, Result<Fields, Skip>> = HashMap::new();
    loop {
        match reader.next_frame() {
            Ok(Some(frame)) => {
                r.records += 1;
                let d = decode(frame.link, frame.data);
                match &d {
                    Ok(_) => r.decoded += 1,
                    Err(skip) => *r.skips.entry(skip.to_string()).or_default() += 1,
                }
                ours.insert(frame.number, d.map(|s| Fields::from_segment(&s)));
            }
            Ok(None) => break,
            Err(e) => {
                r.reader_stop = Some(e.to_string());
                break;
            }
        }
    }
    r.link = reader
        .link_types()
        .iter()
        .map(|l| l.to_string())
        .collect::<Vec<_>>()
        .join("+");

    let Some(theirs) = tshark(path) else { return r };
    r.tshark_tcp = Some(theirs.len() as u64);
    for (frame, (t, icmp)) in &theirs {
        match ours.get(frame) {
            Some(Ok(o)) => {
                let o = &Fields {
                    ecn: t.ecn.and(o.ecn),
                    ..o.clone()
                };
                if o.header != t.header {
                    r.header_mismatches
                        .push(format!("frame {frame}: ours {:?} tshark {:?}", o.header, t.header));
                } else if o != t {
                    r.option_mismatches
                        .push(format!("frame {frame}: ours {o:?} tshark {t:?}"));
                }
            }
            Some(Err(skip)) => {
                let why = if *icmp {
                    format!("{skip} [ICMP quoting TCP]")
                } else {
                    skip.to_string()
                };
                r.only_tshark.entry(why).or_default().push(*frame);
            }
            None => r.only_tshark.entry("record not read".into()).or_default().push(*frame),
        }
    }
    let mut only_ours: Vec<u64> = ours
        .iter()
        .filter(|(n, d)| d.is_ok() && !theirs.contains_key(n))
        .map(|(n, _)| *n)
        .collect();
    only_ours.sort();
    r.only_ours = only_ours;
    r
}

fn frames(v: &[u64]) -> String {
    let shown: Vec<String> = v.iter().take(8).map(u64::to_string).collect();
    let more = if v.len() > 8 {
        format!(" ... ({} in all)", v.len())
    } else {
        String::new()
    };
    format!("{}{more}", shown.join(","))
}

#[test]
fn external_captures_decode_and_agree_with_tshark() {
    let Some(shared) = needs::shared() else { return };
    let dir = shared.join("external");
    if std::env::var_os("BDPSCOPE_NO_TSHARK").is_none() {
        // Without tshark every comparison below would be skipped without a word.
        needs::program("tshark", "apt-get install tshark");
    }
    let mut failures = Vec::new();
    println!(
        "{:<70} {:<16} {:>7} {:>7} {:>7}  skips",
        "file", "link", "records", "tcp", "tshark"
    );
    for path in captures(&dir) {
        let name = path.strip_prefix(&dir).unwrap().display().to_string();
        let r = decode_file(&path);
        let tshark = r.tshark_tcp.map_or("-".to_string(), |n| n.to_string());
        let skips: Vec<String> = r.skips.iter().map(|(k, n)| format!("{n}x {k}")).collect();
        println!(
            "{name:<70} {:<16} {:>7} {:>7} {:>7}  {}",
            r.link,
            r.records,
            r.decoded,
            tshark,
            skips.join("; ")
        );
        if let Some(stop) = &r.reader_stop {
            println!("    reader stopped: {stop}");
        }
        for (why, v) in &r.only_tshark {
            println!("    tshark-only TCP, we say {why}: frames {}", frames(v));
        }
        if !r.only_ours.is_empty() {
            println!("    our-only TCP: frames {}", frames(&r.only_ours));
        }
        for m in r.header_mismatches.iter().take(5) {
            println!("    HEADER MISMATCH {m}");
        }
        for m in r.option_mismatches.iter().take(5) {
            println!("    option mismatch {m}");
        }
        if !r.header_mismatches.is_empty() || !r.option_mismatches.is_empty() {
            failures.push(format!(
                "{name}: {} header and {} option mismatches with tshark",
                r.header_mismatches.len(),
                r.option_mismatches.len()
            ));
        }
        if !r.only_ours.is_empty() {
            failures.push(format!(
                "{name}: {} frames decoded as TCP that tshark does not see as TCP",
                r.only_ours.len()
            ));
        }
        // Every frame tshark calls TCP must be decoded, except the kinds of frames we skip
        // on purpose: ICMP errors quoting a TCP header, and IP fragments.
        for (why, v) in &r.only_tshark {
            if !(why.contains("ICMP quoting TCP") || why.contains("fragment")) {
                failures.push(format!("{name}: {} TCP frames skipped: {why}", v.len()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "disagreements with tshark:\n{}",
        failures.join("\n")
    );
}
