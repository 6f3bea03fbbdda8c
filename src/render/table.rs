//! `analyze --format csv`: the flows table of the library (`bdpscope::table::flows`, the
//! one definition batch's flows.csv / flows.parquet and the Python package share), in its
//! CSV shape.

use bdpscope::summary::FlowSummary;
use bdpscope::table::{csv_view, flows_frame, CSV_DATETIME_FORMAT};
use polars::prelude::*;
use std::io::Write;

/// A CSV writer as every flows CSV is written (of [`csv_view`]'s frame): timestamps in
/// RFC 3339, UTC.
pub fn csv_writer<W: Write>(out: W) -> CsvWriter<W> {
    CsvWriter::new(out).with_datetime_format(Some(CSV_DATETIME_FORMAT.into()))
}

/// `analyze --format csv` written as flows finish: rows are buffered by the thousand and
/// written as one batch (the header with the first), so memory stays constant.
pub struct CsvStream<W: Write> {
    writer: Option<polars::io::csv::write::BatchedWriter<W>>,
    out: Option<W>,
    rows: Vec<FlowSummary>,
}

/// Rows per CSV batch.
const CSV_BATCH: usize = 4096;

impl<W: Write> CsvStream<W> {
    pub fn new(out: W) -> Self {
        CsvStream {
            writer: None,
            out: Some(out),
            rows: Vec::with_capacity(CSV_BATCH),
        }
    }

    pub fn flow(&mut self, f: FlowSummary) -> anyhow::Result<()> {
        self.rows.push(f);
        if self.rows.len() >= CSV_BATCH {
            self.write_rows()?;
        }
        Ok(())
    }

    fn write_rows(&mut self) -> anyhow::Result<()> {
        let df = csv_view(&flows_frame(&self.rows)?)?;
        if self.writer.is_none() {
            let out = self.out.take().expect("the writer is made once");
            self.writer = Some(csv_writer(out).batched(df.schema())?);
        }
        self.writer.as_mut().expect("made above").write_batch(&df)?;
        self.rows.clear();
        Ok(())
    }

    pub fn finish(mut self) -> anyhow::Result<()> {
        if !self.rows.is_empty() || self.writer.is_none() {
            self.write_rows()?;
        }
        if let Some(mut w) = self.writer.take() {
            w.finish()?;
        }
        Ok(())
    }
}
