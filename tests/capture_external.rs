//! The capture reader against the shared corpus of real captures (`../shared/external`,
//! `../shared/captures`), when it is present next to the repository; skips otherwise
//! (fails under CI: see tests/needs).
//!
//! Checks: nothing panics; every file yields its packets or a clean NotACapture/Corrupt
//! error; packet counts match SOURCES.md (capinfos) and truth.json (tcpdump); every
//! packet and timestamp agrees with pcap-parser's own readers (an independent oracle).

mod needs;

use bdpscope::capture::{CaptureError, CaptureFormat, CaptureReader, Compression, LinkType};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// One frame, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
struct F {
    ts: i64,
    link: u32,
    wire_len: u32,
    data: Vec<u8>,
}

struct Outcome {
    format: Option<CaptureFormat>,
    compression: Option<Compression>,
    frames: Vec<F>,
    numbers_ok: bool,
    error: Option<CaptureError>,
    capture_bytes: u64,
    input_bytes: u64,
    link_types: Vec<LinkType>,
}

fn read(path: &Path) -> Outcome {
    let file = fs::File::open(path).expect("open");
    let mut r = match CaptureReader::new(Box::new(file)) {
        Ok(r) => r,
        Err(e) => {
            return Outcome {
                format: None,
                compression: None,
                frames: Vec::new(),
                numbers_ok: true,
                error: Some(e),
                capture_bytes: 0,
                input_bytes: 0,
                link_types: Vec::new(),
            }
        }
    };
    let mut frames = Vec::new();
    let mut numbers_ok = true;
    let error = loop {
        match r.next_frame() {
            Ok(Some(f)) => {
                numbers_ok &= f.number == frames.len() as u64 + 1;
                assert!(f.data.len() <= 256 << 20);
                frames.push(F {
                    ts: f.ts.nanos(),
                    link: f.link.0,
                    wire_len: f.wire_len,
                    data: f.data.to_vec(),
                });
            }
            Ok(None) => break None,
            Err(e) => {
                assert!(matches!(r.next_frame(), Ok(None)), "finished after an error");
                break Some(e);
            }
        }
    };
    Outcome {
        format: Some(r.format()),
        compression: Some(r.compression()),
        frames,
        numbers_ok,
        error,
        capture_bytes: r.capture_offset(),
        input_bytes: r.input_bytes(),
        link_types: r.link_types(),
    }
}

/// Frames as pcap-parser reads them (uncompressed files only), or None when it fails.
fn oracle(path: &Path) -> Option<Vec<F>> {
    use pcap_parser::{Block, PcapBlockOwned, PcapError};
    let file = fs::File::open(path).ok()?;
    let mut reader = pcap_parser::create_reader(1 << 20, file).ok()?;
    let mut out = Vec::new();
    // pcap: (link, frac ns); pcapng: per interface (link, resolution units/s, offset s)
    let mut legacy: Option<(u32, i64)> = None;
    let mut ifaces: Vec<(u32, u64, i64)> = Vec::new();
    let mut last_ts = 0i64;
    loop {
        match reader.next() {
            Ok((offset, block)) => {
                match block {
                    PcapBlockOwned::LegacyHeader(h) => {
                        legacy = Some((
                            h.network.0 as u32 & 0xffff,
                            if h.is_nanosecond_precision() { 1 } else { 1000 },
                        ));
                    }
                    PcapBlockOwned::Legacy(b) => {
                        let (link, frac) = legacy?;
                        out.push(F {
                            ts: b.ts_sec as i64 * 1_000_000_000 + b.ts_usec as i64 * frac,
                            link,
                            wire_len: b.origlen,
                            data: b.data[..b.caplen as usize].to_vec(),
                        });
                    }
                    PcapBlockOwned::NG(Block::SectionHeader(_)) => ifaces.clear(),
                    PcapBlockOwned::NG(Block::InterfaceDescription(idb)) => {
                        ifaces.push((idb.linktype.0 as u32, idb.ts_resolution()?, idb.ts_offset()));
                    }
                    PcapBlockOwned::NG(Block::EnhancedPacket(epb)) => {
                        let &(link, res, off) = ifaces.get(epb.if_id as usize)?;
                        let units = ((epb.ts_high as u64) << 32) | epb.ts_low as u64;
                        let ts = (units as i128 * 1_000_000_000 / res as i128) as i64 + off * 1_000_000_000;
                        last_ts = ts;
                        out.push(F {
                            ts,
                            link,
                            wire_len: epb.origlen,
                            data: epb.data[..epb.caplen as usize].to_vec(),
                        });
                    }
                    PcapBlockOwned::NG(Block::SimplePacket(spb)) => {
                        let &(link, _, _) = ifaces.first()?;
                        let len = (spb.origlen as usize).min(spb.data.len());
                        out.push(F {
                            ts: last_ts,
                            link,
                            wire_len: spb.origlen,
                            data: spb.data[..len].to_vec(),
                        });
                    }
                    PcapBlockOwned::NG(_) => {}
                }
                reader.consume(offset);
            }
            Err(PcapError::Eof) => return Some(out),
            Err(PcapError::Incomplete(_)) => reader.refill().ok()?,
            Err(_) => return Some(out), // stops where the file is damaged or cut
        }
    }
}

/// pkts column of the "Captures with TCP" table in SOURCES.md.
fn sources_counts(external: &Path) -> BTreeMap<String, u64> {
    let text = fs::read_to_string(external.join("SOURCES.md")).unwrap_or_default();
    let mut counts = BTreeMap::new();
    for line in text.lines() {
        let cols: Vec<&str> = line.split('|').map(str::trim).collect();
        // | file | from | format | link | pkts | ...
        if cols.len() > 6 && cols[1].contains("__") && !cols[1].contains(' ') {
            if let Ok(n) = cols[5].parse::<u64>() {
                counts.insert(cols[1].to_string(), n);
            }
        }
    }
    counts
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    v.retain(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.contains(".pcap"))
    });
    v.sort();
    v
}

#[test]
fn external_captures_read_like_capinfos_and_pcap_parser() {
    let Some(shared) = needs::shared() else { return };
    let external = shared.join("external");
    let counts = sources_counts(&external);
    assert!(counts.len() >= 30, "SOURCES.md table parsed: {} rows", counts.len());
    let files = files_in(&external);
    assert!(!files.is_empty());
    let mut checked = 0;
    for path in &files {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let o = read(path);
        assert!(o.numbers_ok, "{name}: frame numbers are 1..n");
        let want = counts.get(&name).copied();
        match &o.error {
            None => {}
            Some(e) if e.is_cut_short() => {}
            Some(e) => panic!("{name}: {e}"),
        }
        if let Some(n) = want {
            assert_eq!(o.frames.len() as u64, n, "{name}: packet count (SOURCES.md)");
            checked += 1;
        } else {
            assert!(!o.frames.is_empty(), "{name}: no packets");
        }
        if o.compression == Some(Compression::None) {
            if let Some(oracle) = oracle(path) {
                assert_eq!(oracle.len(), o.frames.len(), "{name}: pcap-parser count");
                for (i, (a, b)) in o.frames.iter().zip(&oracle).enumerate() {
                    assert_eq!(a, b, "{name}: frame {} differs from pcap-parser", i + 1);
                }
            }
            assert_eq!(o.input_bytes, fs::metadata(path).unwrap().len(), "{name}: input_bytes");
        }
        if o.error.is_none() && o.compression == Some(Compression::None) {
            assert_eq!(o.capture_bytes, o.input_bytes, "{name}: consumed everything");
        }
    }
    assert!(checked >= 30, "only {checked} files had a count in SOURCES.md");

    let get = |n: &str| read(&external.join(n));
    let nano = get("tcpdump__tcp-handshake-nano.pcap");
    assert_eq!(nano.frames.len(), 3);
    assert_eq!(
        nano.format,
        Some(CaptureFormat::Pcap {
            nanosecond: true,
            big_endian: false
        })
    );
    assert!(
        nano.frames.iter().any(|f| f.ts % 1000 != 0),
        "sub-microsecond digits survive"
    );
    assert_eq!(nano.link_types, vec![LinkType::LINUX_SLL]);

    let cut = get("suricata-verify__http-mime-truncated__input.pcap");
    assert_eq!(cut.frames.len(), 2696);
    assert!(
        matches!(cut.error, Some(CaptureError::Truncated { frames: 2696, .. })),
        "{:?}",
        cut.error
    );

    // Names lie; content decides.
    assert_eq!(get("nDPI__vnc.pcap").format, Some(CaptureFormat::PcapNg));
    assert_eq!(
        get("nDPI__opera-vpn.pcapng").format.map(|f| f.container().as_str()),
        Some("pcap")
    );
    let gz = get("zeek__telnet-long-line-no-eol.pcapng.gz");
    assert_eq!(
        (gz.format, gz.compression),
        (Some(CaptureFormat::PcapNg), Some(Compression::Gzip))
    );
    assert_eq!(gz.input_bytes, 223925);
    let sll2 = get("suricata-verify__decode-sll2-02__input.pcap");
    assert_eq!(sll2.link_types, vec![LinkType::LINUX_SLL2]);
    let rtsp = get("nDPI__rtsp.pcap");
    assert_eq!(rtsp.format, Some(CaptureFormat::PcapNg));
    assert!(rtsp.frames.iter().all(|f| f.link == LinkType::LINUX_SLL.0));
}

#[test]
fn broken_inputs_fail_cleanly() {
    let Some(shared) = needs::shared() else { return };
    let broken = shared.join("external/broken");
    let files = files_in(&broken);
    for path in &files {
        let name = path.file_name().unwrap().to_str().unwrap();
        let o = read(path);
        let ok = match &o.error {
            None => name.contains("header-only"),
            Some(e) if e.is_cut_short() => !o.frames.is_empty(),
            Some(
                CaptureError::NotACapture(_)
                | CaptureError::BadHeader(_)
                | CaptureError::Corrupt { .. }
                | CaptureError::NoPacket(_),
            ) => true,
            Some(_) => false,
        };
        assert!(ok, "{name}: {} frames, {:?}", o.frames.len(), o.error);
        if let Some(e) = &o.error {
            eprintln!("{name}: {} frames, then: {e}", o.frames.len());
        }
    }
    let get = |n: &str| read(&broken.join(n));
    let expect = |n: &str, pred: &dyn Fn(&Outcome) -> bool| {
        let o = get(n);
        assert!(pred(&o), "{n}: {} frames, {:?}", o.frames.len(), o.error);
    };
    expect("derived__empty.pcap", &|o| {
        matches!(o.error, Some(CaptureError::NotACapture(_)))
    });
    expect(
        "derived__resp_1_benchmark.bad-magic.pcap",
        &|o| matches!(&o.error, Some(CaptureError::NotACapture(s)) if s.contains("de ad be ef")),
    );
    expect("derived__resp_1_benchmark.header-only.pcap", &|o| {
        o.frames.is_empty() && o.error.is_none()
    });
    // Damaged at its first record: no packet to read, so the capture does not open.
    expect("derived__resp_1_benchmark.huge-caplen.pcap", &|o| {
        o.frames.is_empty()
            && o.format.is_none()
            && matches!(&o.error, Some(CaptureError::NoPacket(e)) if matches!(**e, CaptureError::Corrupt { offset: 24, .. }))
    });
    expect("derived__resp_1_benchmark.truncated-midpacket.pcap", &|o| {
        o.frames.len() == 115 && matches!(o.error, Some(CaptureError::Truncated { frames: 115, .. }))
    });
    expect("derived__resp_1_benchmark.truncated-gzip.pcap.gz", &|o| {
        o.frames.len() == 73 && o.error.as_ref().is_some_and(|e| e.is_cut_short())
    });
    expect("libpcap__pcap-invalid-version-1.pcap", &|o| {
        matches!(o.error, Some(CaptureError::BadHeader(_)))
    });
    expect("libpcap__pcapng-invalid-vers-1.pcapng", &|o| {
        matches!(o.error, Some(CaptureError::BadHeader(_)))
    });
    expect("libpcap__linktype-reserved-field-not-zero.pcap", &|o| {
        matches!(o.error, Some(CaptureError::BadHeader(_)))
    });
    expect("libpcap__shb-option-too-long.pcapng", &|o| {
        matches!(o.error, Some(CaptureError::Corrupt { offset: 0, .. }))
    });
}

#[test]
fn lab_captures_match_tcpdump_counts() {
    let Some(shared) = needs::shared() else { return };
    let mut dirs: Vec<PathBuf> = fs::read_dir(shared.join("captures"))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    let mut checked = 0;
    for dir in dirs {
        let truth: serde_json::Value = match fs::read_to_string(dir.join("truth.json")) {
            Ok(t) => serde_json::from_str(&t).expect("truth.json"),
            Err(_) => serde_json::Value::Null,
        };
        for path in files_in(&dir) {
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            let o = read(&path);
            assert!(o.error.is_none(), "{}/{name}: {:?}", dir.display(), o.error);
            assert!(!o.frames.is_empty(), "{name}");
            // Not asserted: time may step back in real captures (multi_flow_3/client.pcap.gz
            // has 3 records up to 91 µs earlier than their predecessor).
            let entry = truth["capture"]["files"]
                .as_array()
                .and_then(|fs| fs.iter().find(|f| f["file"] == name.as_str()));
            if let Some(f) = entry {
                assert_eq!(Some(o.frames.len() as u64), f["tcpdump"]["captured"].as_u64(), "{name}");
                assert_eq!(Some(o.capture_bytes), f["raw_bytes"].as_u64(), "{name}: raw_bytes");
                let nanos = f["ts_precision"] == "nano";
                if let Some(CaptureFormat::Pcap { nanosecond, .. }) = o.format {
                    assert_eq!(nanosecond, nanos, "{name}");
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 20, "checked {checked} lab captures against truth.json");
}
