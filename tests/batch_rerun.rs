//! `bdpscope batch` state: --shard K/N runs together equal a full run; a re-run into the
//! same folder skips what is done, re-reads what changed, and --force redoes everything,
//! always with the same tables.

mod batch_util;
mod needs;

use batch_util::*;
use std::path::Path;

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

/// "N inputs read" from the closing line.
fn inputs_read(o: &std::process::Output) -> usize {
    let e = stderr(o);
    let line = e
        .lines()
        .find(|l| l.contains("bdpscope: batch:"))
        .unwrap_or_else(|| panic!("no closing line in\n{e}"));
    let after = &line[line.find("batch:").unwrap() + 6..];
    after.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn batch_shards_together_equal_the_full_run() {
    let dir = scratch("shards");
    let arch = dir.join("archive");
    archive(&arch);
    let full = dir.join("full");
    batch(&[&arch], &full, &["--jobs", "2"]);
    let (s1, s2) = (dir.join("s1"), dir.join("s2"));
    batch(&[&arch], &s1, &["--shard", "1/2", "--jobs", "1"]);
    batch(&[&arch], &s2, &["--shard", "2/2", "--jobs", "1"]);
    for table in ["flows.csv", "captures.csv"] {
        let (h, all) = csv_rows(&full.join(table));
        let (h1, a) = csv_rows(&s1.join(table));
        let (h2, b) = csv_rows(&s2.join(table));
        assert_eq!((&h1, &h2), (&h, &h), "{table}: same columns");
        let mut union: Vec<String> = a.iter().chain(&b).cloned().collect();
        union.sort();
        assert_eq!(union, all, "{table}: shards 1/2 + 2/2 differ from the full run");
        assert!(a.iter().all(|r| !b.contains(r)), "{table}: the shards overlap");
    }
    // Both shards got some inputs (the archive is big enough for a hash split).
    assert!(captures(&s1).len() > 1 && captures(&s2).len() > 1);
    // Bad shard specs are usage errors.
    for bad in ["0/2", "3/2", "x", "1/0"] {
        let o = std::process::Command::new(BIN)
            .args([
                "batch",
                arch.to_str().unwrap(),
                "--out",
                dir.join("bad").to_str().unwrap(),
                "--shard",
                bad,
            ])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "--shard {bad}");
    }
}

#[test]
fn batch_rerun_skips_done_files_and_force_redoes_them() {
    let dir = scratch("rerun");
    let arch = dir.join("archive");
    archive(&arch);
    let n = files(&arch).len();
    let out = dir.join("out");
    let first = batch(&[&arch], &out, &["--jobs", "2"]);
    assert_eq!(inputs_read(&first), n);
    let flows = read(&out.join("flows.csv"));
    let caps = read(&out.join("captures.csv"));
    let md = read(&out.join("summary.md"));

    // Nothing changed: nothing is read again, and the tables are the same.
    let again = batch(&[&arch], &out, &["--jobs", "2"]);
    assert_eq!(inputs_read(&again), 0, "{}", stderr(&again));
    assert_eq!(read(&out.join("flows.csv")), flows);
    assert_eq!(read(&out.join("captures.csv")), caps);
    assert_eq!(read(&out.join("summary.md")), md);

    // One file changed (new content, new size): only it is read again.
    let one = arch.join("lab/one.pcap");
    let bytes = std::fs::read(&one).unwrap();
    let extra = pcap(&bulk(
        "10.9.0.1:41000",
        "10.9.0.2:5009",
        1_700_000_100_000_000_000,
        5,
        4,
    ));
    write(&one, &[&bytes[..], &extra[24..]].concat());
    let changed = batch(&[&arch], &out, &[]);
    assert_eq!(inputs_read(&changed), 1, "{}", stderr(&changed));
    let rows = captures(&out);
    let r = rows.iter().find(|r| r["path"].ends_with("lab/one.pcap")).unwrap();
    assert_eq!(r["flows"], "2");
    assert_eq!(rows.len(), n, "old rows are merged with the new one, not duplicated");
    let after_change = read(&out.join("flows.csv"));
    assert_eq!(after_change.lines().count(), flows.lines().count() + 1);

    // --force reads everything again and gives the same tables.
    let forced = batch(&[&arch], &out, &["--force"]);
    assert_eq!(inputs_read(&forced), n);
    assert_eq!(read(&out.join("flows.csv")), after_change);

    // Adding another folder keeps the rows of the first.
    let more = dir.join("more");
    write(
        &more.join("four.pcap"),
        &pcap(&bulk(
            "10.0.0.5:40005",
            "10.0.0.2:5001",
            1_700_000_000_000_000_000,
            10,
            4,
        )),
    );
    let added = batch(&[&more], &out, &[]);
    assert_eq!(inputs_read(&added), 1);
    assert_eq!(captures(&out).len(), n + 1);
    assert_eq!(
        read(&out.join("flows.csv")).lines().count(),
        after_change.lines().count() + 1
    );

    // A run killed half way leaves a partial line in done.jsonl: it is ignored.
    let state = out.join("done.jsonl");
    let mut text = read(&state);
    text.push_str("{\"unit\":\"trunc");
    std::fs::write(&state, text).unwrap();
    let resumed = batch(&[&arch, &more], &out, &[]);
    assert_eq!(inputs_read(&resumed), 0, "{}", stderr(&resumed));
    assert_eq!(captures(&out).len(), n + 1);
}

#[test]
fn batch_output_folders_inside_the_archive_are_not_inputs() {
    let dir = scratch("inside");
    let arch = dir.join("archive");
    write(
        &arch.join("one.pcap"),
        &pcap(&bulk(
            "10.0.0.1:40000",
            "10.0.0.2:5001",
            1_700_000_000_000_000_000,
            5,
            4,
        )),
    );
    let report = arch.join("report");
    batch(&[&arch], &report, &[]);
    batch(&[&arch], &report, &[]);
    // Another output folder, and the first report is in the archive now.
    let elsewhere = dir.join("elsewhere");
    batch(&[&arch], &elsewhere, &[]);
    for out in [&report, &elsewhere] {
        let rows = captures(out);
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert!(rows[0]["path"].ends_with("one.pcap"));
    }
}
