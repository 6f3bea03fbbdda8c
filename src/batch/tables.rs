//! The batch tables: `flows.{parquet,csv}` streamed from the units' parts (the library's
//! flows table, [`flows_frame`]: typed in Parquet, its [`csv_view`] in CSV, as
//! `analyze --format csv`), and `captures.{parquet,csv}`, one row per input
//! ([`captures_frame`]).

use super::layout::{fnv1a, PARTS};
use super::record::{CaptureRow, InputStatus, Record};
use crate::render::table::csv_writer;
use anyhow::{Context, Result};
use bdpscope::table::captures::captures_frame;
use bdpscope::table::{csv_view, flows_frame};
use polars::prelude::*;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

/// Column names and types of the flows table: a part written by another version with
/// other columns cannot be merged, so it is part of the state's fingerprint.
pub fn flows_schema_fingerprint() -> Result<String> {
    let empty = flows_frame(&[])?;
    let columns = empty
        .schema()
        .iter()
        .map(|(n, t)| format!("{n}:{t}"))
        .collect::<Vec<_>>()
        .join(",");
    Ok(format!("{:016x}", fnv1a(columns.as_bytes())))
}

/// One unit's flows written as a part file as they come, a row group at a time (not in
/// parallel: the workers are), so a capture of millions of flows is never held whole.
pub struct PartWriter {
    path: std::path::PathBuf,
    tmp: std::path::PathBuf,
    writer: Option<polars::io::parquet::write::BatchedWriter<BufWriter<File>>>,
    rows: Vec<bdpscope::summary::FlowSummary>,
    written: u64,
}

/// Rows per row group of a part.
const PART_ROWS: usize = 1 << 14;

impl PartWriter {
    pub fn new(path: std::path::PathBuf) -> PartWriter {
        PartWriter {
            tmp: path.with_extension("parquet.tmp"),
            path,
            writer: None,
            rows: Vec::new(),
            written: 0,
        }
    }

    pub fn push(&mut self, f: bdpscope::summary::FlowSummary) -> Result<()> {
        self.rows.push(f);
        if self.rows.len() >= PART_ROWS {
            self.write_rows()?;
        }
        Ok(())
    }

    fn write_rows(&mut self) -> Result<()> {
        let df = flows_frame(&self.rows)?;
        if self.writer.is_none() {
            let file = File::create(&self.tmp).with_context(|| format!("{}: cannot write", self.tmp.display()))?;
            // Parts are scratch files, read back once: no compression, no statistics.
            let w = ParquetWriter::new(BufWriter::new(file))
                .with_compression(ParquetCompression::Uncompressed)
                .with_statistics(StatisticsOptions {
                    min_value: false,
                    max_value: false,
                    distinct_count: false,
                    null_count: false,
                    ..Default::default()
                })
                .set_parallel(false)
                .batched(df.schema())?;
            self.writer = Some(w);
        }
        self.writer.as_mut().expect("made above").write_batch(&df)?;
        self.written += self.rows.len() as u64;
        self.rows.clear();
        Ok(())
    }

    /// Completes the part; the rows written (none: no part file).
    pub fn finish(mut self) -> Result<u64> {
        if !self.rows.is_empty() {
            self.write_rows()?;
        }
        match self.writer.take() {
            Some(w) => {
                w.finish()?;
                std::fs::rename(&self.tmp, &self.path)
                    .with_context(|| format!("{}: cannot write", self.path.display()))?;
            }
            None => {
                let _ = std::fs::remove_file(&self.path);
            }
        }
        Ok(self.written)
    }
}

pub fn read_part(path: &Path) -> Result<DataFrame> {
    let file = File::open(path).with_context(|| format!("{}: cannot read", path.display()))?;
    anyhow::Context::with_context(ParquetReader::new(file).finish(), || {
        format!("{}: cannot read", path.display())
    })
}

/// Counts for the closing line and the summary.
#[derive(Default)]
pub struct Report {
    pub inputs: usize,
    pub ok: usize,
    pub partial: usize,
    pub failed: usize,
    pub skipped: usize,
    pub flows: u64,
}

impl Report {
    /// Counts the inputs by status.
    pub fn count(&mut self, rows: &[&CaptureRow]) {
        for c in rows {
            self.inputs += 1;
            match c.status {
                InputStatus::Ok => self.ok += 1,
                InputStatus::Partial => self.partial += 1,
                InputStatus::Failed => self.failed += 1,
                InputStatus::Skipped => self.skipped += 1,
            }
        }
    }
}

/// Rows buffered before they are written (a Parquet row group; one CSV batch).
const ROW_GROUP: usize = 1 << 16;

/// A file written next to its final name and renamed when complete, so a reader never
/// sees half a table.
struct Staged {
    tmp: std::path::PathBuf,
    path: std::path::PathBuf,
}

impl Staged {
    /// Not buffered: the CSV writer writes whole batches; the Parquet writers get a
    /// `BufWriter` (they write small pieces, and flush at the end of the file).
    fn create(out: &Path, name: &str) -> Result<(Staged, File)> {
        let path = out.join(name);
        let tmp = out.join(format!(".{name}.tmp"));
        let f = File::create(&tmp).with_context(|| format!("{}: cannot write", tmp.display()))?;
        Ok((Staged { tmp, path }, f))
    }
    fn commit(self) -> Result<()> {
        std::fs::rename(&self.tmp, &self.path).with_context(|| format!("{}: cannot write", self.path.display()))
    }
}

/// Writes flows.* (streaming the parts, each handed to `each` on the way) and captures.*.
pub fn write_all(
    out: &Path,
    records: &[Record],
    mut each: impl FnMut(&DataFrame) -> PolarsResult<()>,
) -> Result<Report> {
    let empty = flows_frame(&[])?;
    let schema = empty.schema().clone();
    let (pq_file, pq_out) = Staged::create(out, "flows.parquet")?;
    let (csv_file, csv_out) = Staged::create(out, "flows.csv")?;
    let mut pq = ParquetWriter::new(BufWriter::new(pq_out)).batched(&schema)?;
    let mut csv = csv_writer(csv_out).batched(csv_view(&empty)?.schema())?;
    let mut buffer = DataFrame::empty_with_schema(&schema);
    let mut report = Report::default();
    for r in records {
        let Some(part) = &r.part else { continue };
        let df = read_part(&out.join(PARTS).join(part))?;
        anyhow::ensure!(
            df.schema() == &schema,
            "{part}: the part's columns differ from this version's; rerun with --force"
        );
        each(&df)?;
        report.flows += df.height() as u64;
        buffer.vstack_mut_owned(df)?;
        if buffer.height() >= ROW_GROUP {
            buffer.rechunk_mut();
            csv.write_batch(&csv_view(&buffer)?)?;
            pq.write_batch(&buffer)?;
            buffer = DataFrame::empty_with_schema(&schema);
        }
    }
    if buffer.height() > 0 || report.flows == 0 {
        buffer.rechunk_mut();
        csv.write_batch(&csv_view(&buffer)?)?;
        pq.write_batch(&buffer)?;
    }
    pq.finish()?;
    csv.finish()?;
    drop(pq);
    drop(csv);
    pq_file.commit()?;
    csv_file.commit()?;

    let mut rows: Vec<&CaptureRow> = records.iter().flat_map(|r| r.captures.iter()).collect();
    rows.sort_by(|a, b| a.path.cmp(&b.path));
    report.count(&rows);
    let mut df = captures_frame(&rows)?;
    let (f, w) = Staged::create(out, "captures.parquet")?;
    ParquetWriter::new(BufWriter::new(w)).finish(&mut df)?;
    f.commit()?;
    let (f, w) = Staged::create(out, "captures.csv")?;
    CsvWriter::new(w).finish(&mut df)?;
    f.commit()?;
    Ok(report)
}
