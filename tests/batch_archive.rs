//! `bdpscope batch` over an archive with good and broken files: it runs to completion,
//! every input has its captures row, flows.csv is the union of `analyze --format csv`
//! of the same files, and the Parquet tables hold the same values as the CSV ones.

mod batch_util;
mod needs;

use batch_util::*;
use polars::prelude::*;
use std::collections::BTreeSet;
use std::path::Path;

fn run_archive(name: &str) -> (Scratch, std::path::PathBuf, std::path::PathBuf, std::process::Output) {
    let dir = scratch(name);
    let arch = dir.join("archive");
    archive(&arch);
    let out = dir.join("out");
    let o = batch(&[&arch], &out, &["--jobs", "2"]);
    (dir, arch, out, o)
}

#[test]
fn batch_runs_to_completion_with_a_row_per_input_and_the_flows_of_analyze() {
    let (_dir, arch, out, o) = run_archive("archive");
    for f in [
        "flows.parquet",
        "flows.csv",
        "captures.parquet",
        "captures.csv",
        "summary.md",
        "summary.html",
        "done.jsonl",
    ] {
        assert!(out.join(f).is_file(), "{f} missing\n{}", stderr(&o));
    }

    // Every input has exactly one row.
    let rows = captures(&out);
    let paths: Vec<&str> = rows.iter().map(|r| r["path"].as_str()).collect();
    let inputs = files(&arch);
    assert_eq!(paths, inputs, "one row per input, in path order");
    let row = |suffix: &str| rows.iter().find(|r| r["path"].ends_with(suffix)).unwrap();
    assert_eq!(row("lab/one.pcap")["status"], "ok");
    assert_eq!(row("lab/deep/er/two.pcap.gz")["compression"], "gzip");
    assert_eq!(row("lab/deep/er/two.pcap.gz")["flows"], "2");
    assert_eq!(row("lab/three.cap")["compression"], "zstd");
    let cut = row("broken/cut.pcap");
    assert_eq!(cut["status"], "partial");
    assert!(cut["error"].contains("cut short"), "{cut:?}");
    assert_eq!(cut["flows"], "1", "the flow read before the cut is kept");
    // Named like captures, garbage and nothing: captures that failed, not files to skip.
    for failed in ["broken/garbage.pcap", "broken/empty.pcap"] {
        assert_eq!(row(failed)["status"], "failed", "{failed}");
        assert!(!row(failed)["error"].is_empty());
        assert!(stderr(&o).contains(&row(failed)["path"]), "{failed} named on stderr");
    }
    assert_eq!(row("notes.txt")["status"], "skipped");
    assert!(!row("notes.txt")["skipped_reason"].is_empty());
    // Exit status 1 exactly when an input failed (here: always).
    let failed = rows.iter().any(|r| r["status"] == "failed");
    assert!(failed);
    assert_eq!(o.status.code(), Some(i32::from(failed)), "{}", stderr(&o));

    // flows.csv = the union of `analyze FILE --format csv` over the readable inputs.
    let (header, batch_rows) = csv_rows(&out.join("flows.csv"));
    let mut expected = Vec::new();
    for r in rows.iter().filter(|r| r["status"] == "ok" || r["status"] == "partial") {
        let a = run(&["analyze", &r["path"], "--format", "csv"]);
        let text = String::from_utf8(a.stdout).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next().unwrap(), header, "same columns as analyze");
        expected.extend(lines.map(str::to_string));
    }
    expected.sort();
    assert!(!expected.is_empty());
    assert_eq!(batch_rows, expected);
    let flows_per_row: u64 = rows.iter().filter_map(|r| r["flows"].parse::<u64>().ok()).sum();
    assert_eq!(flows_per_row, batch_rows.len() as u64);

    // (capture, id) is unique.
    let keys: BTreeSet<(String, String)> = batch_rows
        .iter()
        .map(|l| {
            let f = fields(l);
            (f[0].clone(), f[1].clone())
        })
        .collect();
    assert_eq!(keys.len(), batch_rows.len());

    // The summary names the files that failed or were cut short, and is self-contained.
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    let html = std::fs::read_to_string(out.join("summary.html")).unwrap();
    for r in rows.iter().filter(|r| r["status"] != "ok") {
        assert!(md.contains(&r["path"]), "{} not in summary.md", r["path"]);
    }
    assert!(md.contains("## Verdicts") && md.contains("## Worst flows"));
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("Middlebox findings"));
    assert!(!html.contains("<script") && !html.contains("src=\"http") && !html.contains("href=\"http"));
}

fn read_parquet(p: &Path) -> DataFrame {
    ParquetReader::new(std::fs::File::open(p).unwrap()).finish().unwrap()
}

/// A table as batch writes its CSV: the library's CSV view (lists joined, structs as
/// JSON), timestamps in RFC 3339.
fn to_csv(df: &mut DataFrame) -> String {
    let mut buf = Vec::new();
    let mut view = bdpscope::table::csv_view(df).unwrap();
    CsvWriter::new(&mut buf)
        .with_datetime_format(Some(bdpscope::table::CSV_DATETIME_FORMAT.into()))
        .finish(&mut view)
        .unwrap();
    String::from_utf8(buf).unwrap()
}

#[test]
fn batch_parquet_tables_hold_the_csv_values() {
    let (_dir, _, out, _) = run_archive("parquet");
    for table in ["flows", "captures"] {
        let mut df = read_parquet(&out.join(format!("{table}.parquet")));
        let csv = std::fs::read_to_string(out.join(format!("{table}.csv"))).unwrap();
        assert!(df.height() > 0, "{table} is empty");
        assert_eq!(df.height(), csv.lines().count() - 1, "{table}: row count");
        assert_eq!(to_csv(&mut df), csv, "{table}: Parquet and CSV differ");
    }
    // Typed columns, not text: numbers stay numbers for the engines.
    let flows = read_parquet(&out.join("flows.parquet"));
    assert_eq!(flows.column("id").unwrap().dtype(), &DataType::UInt64);
    assert_eq!(flows.column("goodput_bps").unwrap().dtype(), &DataType::Float64);
    assert_eq!(flows.column("handshake_seen").unwrap().dtype(), &DataType::Boolean);
    let caps = read_parquet(&out.join("captures.parquet"));
    assert_eq!(caps.column("size_bytes").unwrap().dtype(), &DataType::UInt64);
}
