//! The summary `bdpscope batch` writes (summary.md, summary.html), for the Spark job: made
//! by batch's own code (`crate::batch::summary`, compiled here from the binary's source,
//! see lib.rs), fed with what the job's tasks made: one `done.jsonl` record per input
//! (its captures row and middlebox findings) and the flows' columns the statistics use.

use crate::batch::record::Record;
use crate::batch::summary::Collector;
use crate::batch::tables::Report;
use polars::prelude::*;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The statistics of an archive's summary, fed a batch of flows at a time.
#[pyclass(module = "bdpscope._native")]
pub struct Summary {
    records: Vec<Record>,
    collector: Collector,
}

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

#[pymethods]
impl Summary {
    /// `records`: one `done.jsonl` line per input (as `batch_input` makes them).
    #[new]
    fn new(records: Vec<String>) -> PyResult<Summary> {
        let mut records: Vec<Record> = records
            .iter()
            .map(|r| serde_json::from_str(r).map_err(value_error))
            .collect::<PyResult<_>>()?;
        // As batch keeps them: by unit.
        records.sort_by(|a, b| a.unit.cmp(&b.unit));
        Ok(Summary {
            records,
            collector: Collector::default(),
        })
    }

    /// Some flows: the columns of the flows table the statistics read, as lists.
    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        py: Python<'_>,
        capture: Vec<String>,
        id: Vec<u64>,
        client_addr: Vec<String>,
        client_port: Vec<Option<u16>>,
        server_addr: Vec<String>,
        server_port: Vec<Option<u16>>,
        verdict: Vec<Option<String>>,
        goodput_bps: Vec<Option<f64>>,
        rtt_min_ms: Vec<Option<f64>>,
        max_rwnd_bytes: Vec<Option<u64>>,
        stalls: Vec<Vec<String>>,
        stall_durations_s: Vec<Vec<f64>>,
    ) -> PyResult<()> {
        let height = id.len();
        // The two lists as the flows table types them (a list of strings, of f64).
        let mut kinds = ListStringChunkedBuilder::new("stalls".into(), height, height);
        for k in &stalls {
            kinds.append_values_iter(k.iter().map(String::as_str));
        }
        let mut secs = ListPrimitiveChunkedBuilder::<Float64Type>::new(
            "stall_durations_s".into(),
            height,
            height,
            DataType::Float64,
        );
        for d in &stall_durations_s {
            secs.append_slice(d);
        }
        let columns = vec![
            Column::new("capture".into(), capture),
            Column::new("id".into(), id),
            Column::new("client_addr".into(), client_addr),
            Column::new("client_port".into(), client_port),
            Column::new("server_addr".into(), server_addr),
            Column::new("server_port".into(), server_port),
            Column::new("verdict".into(), verdict),
            Column::new("goodput_bps".into(), goodput_bps),
            Column::new("rtt_min_ms".into(), rtt_min_ms),
            Column::new("max_rwnd_bytes".into(), max_rwnd_bytes),
            kinds.finish().into_series().into_column(),
            secs.finish().into_series().into_column(),
        ];
        let collector = &mut self.collector;
        py.detach(|| DataFrame::new(height, columns).and_then(|df| collector.add(&df)))
            .map_err(value_error)
    }

    /// Writes summary.md and summary.html into `out` (a local folder).
    fn write(&self, py: Python<'_>, out: std::path::PathBuf) -> PyResult<()> {
        let mut rows: Vec<_> = self.records.iter().flat_map(|r| r.captures.iter()).collect();
        rows.sort_by(|a, b| a.path.cmp(&b.path));
        let mut report = Report::default();
        report.count(&rows);
        report.flows = self.records.iter().map(|r| r.flows).sum();
        let (records, collector) = (&self.records, &self.collector);
        py.detach(|| crate::batch::summary::write(&out, records, &report, collector))
            .map_err(|e| value_error(format!("{e:#}")))
    }
}
