//! What `bdpscope batch` fails and what it skips. A file that is a capture by its content
//! (a capture's magic number) or by its name (`.pcap`...) but cannot be read is a failed
//! input: named on stderr with the reason, counted as failed in the summary and the
//! captures table, exit status 1 (../shared/spec/interface.md: 1 "when an input could
//! not be read as a capture at all"). Only a file found in a folder that is plainly no
//! capture (a README) is skipped; one named on the command line was asked for, and fails.
//! A capture damaged before its first packet has nothing to analyse: it fails, in
//! `analyze` as in batch, while one merely cut there is read as far as it goes.

mod batch_util;
mod needs;

use batch_util::*;
use std::path::{Path, PathBuf};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(rel)
}

/// A little-endian pcap file header: magic, version, zone, sigfigs, snaplen, Ethernet.
fn pcap_header(major: u16, minor: u16) -> Vec<u8> {
    let mut b = 0xa1b2_c3d4u32.to_le_bytes().to_vec();
    b.extend_from_slice(&major.to_le_bytes());
    b.extend_from_slice(&minor.to_le_bytes());
    for v in [0u32, 0, 65_535, 1] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b
}

/// A record header (seconds, µs, captured and wire length) and its bytes.
fn record(caplen: u32, bytes: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    for v in [1_700_000_000u32, 0, caplen, 60] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b.extend_from_slice(bytes);
    b
}

/// The pcap magic, then version 1.4 (libpcap's pcap-invalid-version-1, rebuilt), then a
/// record: a capture by its content, of a version no reader takes.
fn version_1() -> Vec<u8> {
    [pcap_header(1, 4), record(60, &[0u8; 60])].concat()
}

/// A valid header, then a first record claiming 2 GB: damaged at byte 24, no packet.
fn damaged_first_record() -> Vec<u8> {
    [pcap_header(2, 4), record(0x7fff_0000, &[0u8; 60])].concat()
}

/// A valid header, then half a record: cut inside its first record.
fn cut_first_record() -> Vec<u8> {
    [pcap_header(2, 4), record(60, &[0u8; 60])[..30].to_vec()].concat()
}

fn row<'a>(
    rows: &'a [std::collections::BTreeMap<String, String>],
    suffix: &str,
) -> &'a std::collections::BTreeMap<String, String> {
    rows.iter()
        .find(|r| r["path"].ends_with(suffix))
        .unwrap_or_else(|| panic!("no row for {suffix}: {rows:#?}"))
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn batch_fails_what_looks_like_a_capture_and_skips_a_folders_readme() {
    let dir = scratch("failed-inputs");
    let arch = dir.join("archive");
    std::fs::create_dir_all(&arch).unwrap();
    std::fs::copy(fixture("rcvbuf_16k/client.pcap.gz"), arch.join("good.pcap.gz")).unwrap();
    // No capture extension: the magic alone makes it a capture.
    write(&arch.join("capture-v1"), &version_1());
    write(&arch.join("damaged.pcap"), &damaged_first_record());
    write(&arch.join("README"), b"captures of the lab, see SOURCES.md\n");
    let out = dir.join("out");
    let o = batch(&[&arch], &out, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "an input failed\n{err}");

    // stderr names each failed file with its reason, and not the README.
    let v1 = arch.join("capture-v1");
    let damaged = arch.join("damaged.pcap");
    assert!(
        err.contains(&format!(
            "bdpscope: {}: its file header cannot be read: it is pcap version 1.4",
            v1.display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "bdpscope: {}: no packet could be read: the capture is damaged at byte 24: a record claims",
            damaged.display()
        )),
        "{err}"
    );
    assert!(!err.contains("README"), "{err}");
    assert!(err.contains("(1 ok, 0 partial, 2 failed, 1 skipped)"), "{err}");

    let rows = captures(&out);
    assert_eq!(row(&rows, "good.pcap.gz")["status"], "ok");
    for bad in ["capture-v1", "damaged.pcap"] {
        let r = row(&rows, bad);
        assert_eq!(r["status"], "failed", "{r:?}");
        assert!(!r["error"].is_empty() && r["skipped_reason"].is_empty(), "{r:?}");
    }
    let readme = row(&rows, "README");
    assert_eq!(readme["status"], "skipped");
    assert!(readme["skipped_reason"].contains("not a pcap or pcapng capture"));

    // The summary counts them so, and lists each under its section.
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("1 ok, 0 cut short or damaged, 2 failed, 1 skipped"), "{md}");
    let failed = section(&md, "## Inputs that failed (2)");
    assert!(
        failed.contains("capture-v1") && failed.contains("damaged.pcap"),
        "{failed}"
    );
    assert!(!failed.contains("README"), "{failed}");
    assert!(
        section(&md, "## Skipped inputs (not captures) (1)").contains("README"),
        "{md}"
    );
    let html = std::fs::read_to_string(out.join("summary.html")).unwrap();
    assert!(html.contains("2 failed,"), "summary.html counts them");
}

/// The lines of `md` from `title` to the next section.
fn section<'a>(md: &'a str, title: &str) -> &'a str {
    let start = md.find(title).unwrap_or_else(|| panic!("no {title} in\n{md}"));
    let rest = &md[start + title.len()..];
    &rest[..rest.find("\n## ").unwrap_or(rest.len())]
}

#[test]
fn a_file_named_on_the_command_line_fails_when_it_is_no_capture() {
    let dir = scratch("named-inputs");
    let good = dir.join("good.pcap.gz");
    std::fs::copy(fixture("rcvbuf_16k/client.pcap.gz"), &good).unwrap();
    let notes = dir.join("notes.txt");
    write(&notes, b"not a capture\n");

    // Named: asked for, not read: an error, as `analyze notes.txt` says.
    let o = batch(&[&good, &notes], &dir.join("named"), &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "bdpscope: {}: this is not a pcap or pcapng capture",
            notes.display()
        )),
        "{err}"
    );
    assert_eq!(row(&captures(&dir.join("named")), "notes.txt")["status"], "failed");
    let a = run(&["analyze", path(&notes)]);
    assert_eq!(a.status.code(), Some(1));

    // Found in a folder it is only left out. A re-run that names it reads it again.
    let o = batch(&[&dir], &dir.join("walked"), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(row(&captures(&dir.join("walked")), "notes.txt")["status"], "skipped");
    let o = batch(&[&dir, &notes], &dir.join("walked"), &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(row(&captures(&dir.join("walked")), "notes.txt")["status"], "failed");
}

#[test]
fn no_packet_before_the_damage_fails_and_a_cut_before_any_packet_does_not() {
    let dir = scratch("first-record");
    let damaged = dir.join("damaged.pcap");
    write(&damaged, &damaged_first_record());
    let cut = dir.join("cut.pcap");
    write(&cut, &cut_first_record());

    // analyze: damaged at its first record, nothing was read: exit 1, saying so.
    let a = run(&["analyze", path(&damaged)]);
    assert_eq!(a.status.code(), Some(1));
    let err = stderr(&a);
    assert!(
        err.starts_with(&format!(
            "bdpscope: {}: not readable as a capture: no packet could be read: the capture is damaged at byte 24: ",
            damaged.display()
        )),
        "{err}"
    );
    assert!(!err.contains("were analysed"), "{err}");

    // Cut inside its first record: a capture still being written, read as far as it goes
    // (exit 0), and the warning does not claim packets before the cut.
    let a = run(&["analyze", path(&cut), "--format", "json"]);
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    let err = stderr(&a);
    assert!(
        err.contains("is incomplete (0 complete packets before it were read); no packet came before it"),
        "{err}"
    );

    // batch: the same verdicts.
    let out = dir.join("out");
    let o = batch(&[&dir], &out, &[]);
    assert_eq!(o.status.code(), Some(1));
    let rows = captures(&out);
    let d = row(&rows, "damaged.pcap");
    assert_eq!(d["status"], "failed");
    assert!(
        d["error"].starts_with("no packet could be read: the capture is damaged at byte 24"),
        "{d:?}"
    );
    assert_eq!(row(&rows, "cut.pcap")["status"], "partial");
}

#[test]
fn the_broken_captures_of_shared_fail_and_its_notes_are_skipped() {
    let Some(shared) = needs::shared() else { return };
    let broken = shared.join("external/broken");
    let dir = scratch("shared-broken");
    let out = dir.join("out");
    let o = batch(&[&broken], &out, &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    let rows = captures(&out);
    for name in [
        "libpcap__pcap-invalid-version-1.pcap",
        "libpcap__pcapng-invalid-vers-1.pcapng",
        "libpcap__linktype-reserved-field-not-zero.pcap",
        "derived__empty.pcap",
        "derived__resp_1_benchmark.bad-magic.pcap",
        "derived__resp_1_benchmark.huge-caplen.pcap",
        "libpcap__shb-option-too-long.pcapng",
    ] {
        assert_eq!(row(&rows, name)["status"], "failed", "{name}");
        assert!(
            err.contains(&format!("{}: ", broken.join(name).display())),
            "{name} not named\n{err}"
        );
    }
    for name in [
        "derived__resp_1_benchmark.truncated-midpacket.pcap",
        "derived__resp_1_benchmark.truncated-gzip.pcap.gz",
    ] {
        assert_eq!(row(&rows, name)["status"], "partial", "{name}");
    }
    assert_eq!(row(&rows, "derived__resp_1_benchmark.header-only.pcap")["status"], "ok");
}
