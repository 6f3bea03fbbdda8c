//! `bdpscope._native`: the Python binding of the bdpscope library. Everything the package
//! returns is made by the library: the analysis (`bdpscope::analysis`), the tables
//! (`bdpscope::table`: flows, packets and captures as polars frames) and the JSON
//! document's structs (`bdpscope::summary`, through serde). This crate only turns a Python
//! source into a reader, runs the analysis with the GIL released, and hands the frames over
//! through the Arrow C stream interface (`__arrow_c_stream__`: polars, pyarrow, DuckDB and
//! Spark take it without a copy per row).
//!
//! Why this crate cannot `forbid(unsafe_code)` as the library does: PyO3's `#[pymodule]`,
//! `#[pyfunction]` and `#[pyclass]` expand to `unsafe` FFI glue inside this crate, and the
//! Arrow C stream is a C struct handed over by pointer in a capsule. This crate writes no
//! `unsafe` block of its own; the library keeps `#![forbid(unsafe_code)]`.
#![deny(unsafe_op_in_unsafe_fn)]

mod arrow;
mod run;
mod source;
mod summary;

// The batch summary's code, compiled from the command line's own source files (one
// implementation): the binary's modules are not a library crate, and these six files
// need nothing of it but each other. `crate::render` / `crate::batch` mirror the binary's
// paths, so the files compile here unchanged.
#[allow(dead_code)]
#[path = "../../src/render"]
mod render {
    #[path = "page.rs"]
    pub mod page;
    #[path = "table.rs"]
    pub mod table;
}
#[allow(dead_code)]
#[path = "../../src/batch"]
mod batch {
    #[path = "layout.rs"]
    pub mod layout;
    #[path = "record.rs"]
    pub mod record;
    #[path = "stalls.rs"]
    pub mod stalls;
    #[path = "summary.rs"]
    pub mod summary;
    #[path = "tables.rs"]
    pub mod tables;
}

use arrow::ArrowStream;
use polars::prelude::{PolarsError, PolarsResult};
use pyo3::prelude::*;
use run::{Options, Outcome};
use source::Source;

pyo3::create_exception!(
    bdpscope,
    CaptureError,
    pyo3::exceptions::PyValueError,
    "An input that cannot be read as a capture (the message names it and says why, as the command line does)."
);

/// `bdpscope analyze SOURCE [--link-rate R] [--all] [-j N]`, without the GIL.
fn summaries(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    link_rate_bps: Option<f64>,
    list_all: bool,
    jobs: usize,
) -> PyResult<Outcome> {
    let source = Source::of(source)?;
    let options = Options {
        link_rate_bps,
        list_all,
        jobs,
    };
    py.detach(|| run::summaries(source, &options))
}

/// The flows table of a capture, and the warnings.
#[pyfunction]
#[pyo3(signature = (source, link_rate_bps=None, list_all=false, jobs=0))]
fn analyze(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    link_rate_bps: Option<f64>,
    list_all: bool,
    jobs: usize,
) -> PyResult<(ArrowStream, Vec<String>)> {
    let Outcome { flows, warnings, .. } = summaries(py, source, link_rate_bps, list_all, jobs)?;
    let frame = py
        .detach(|| bdpscope::table::flows_frame(&flows))
        .map_err(arrow::polars_error)?;
    Ok((ArrowStream::new(vec![frame]), warnings))
}

/// The whole `analyze --format json` document as JSON text, and the warnings.
#[pyfunction]
#[pyo3(signature = (source, link_rate_bps=None, list_all=false, jobs=0))]
fn report(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    link_rate_bps: Option<f64>,
    list_all: bool,
    jobs: usize,
) -> PyResult<(String, Vec<String>)> {
    let Outcome {
        flows,
        capture,
        warnings,
    } = summaries(py, source, link_rate_bps, list_all, jobs)?;
    // The document `analyze --format json` writes (render/json.rs): flows, then captures.
    let doc = serde_json::json!({ "flows": flows, "captures": [capture] });
    Ok((doc.to_string(), warnings))
}

/// The per-segment table of the selected flows (all when empty), and the warnings.
#[pyfunction]
#[pyo3(signature = (source, flows=Vec::new()))]
fn packets(py: Python<'_>, source: &Bound<'_, PyAny>, flows: Vec<u64>) -> PyResult<(ArrowStream, Vec<String>)> {
    let source = Source::of(source)?;
    let (frames, warnings) = py.detach(|| run::packets(source, flows))?;
    Ok((ArrowStream::new(frames), warnings))
}

/// One input of an archive as `bdpscope batch` makes it (a unit of one file): its flows
/// table, its row of the captures table, and its `done.jsonl` record (the captures row,
/// the middlebox findings and the floods, for the summary). Never raises for a bad
/// capture: its row says what became of it (`failed`, `skipped`, `partial`). `named`: the
/// input was given by name (a path or a glob's match), not found in a folder — not
/// reading it is then an error, as for batch's PATHs.
#[pyfunction]
#[pyo3(signature = (source, name, size_bytes, mtime_ns, link_rate_bps=None, named=false))]
fn batch_input(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    name: String,
    size_bytes: u64,
    mtime_ns: i64,
    link_rate_bps: Option<f64>,
    named: bool,
) -> PyResult<(ArrowStream, ArrowStream, String)> {
    let source = Source::of(source);
    let unit = name.clone();
    let input = run::BatchInput {
        name,
        size_bytes,
        mtime_ns,
        named,
    };
    let (flows, row, floods) = py.detach(|| run::batch_input(source, input, link_rate_bps));
    let record = batch::record::Record {
        unit: unit.clone(),
        options: format!(
            "bdpscope {}; spark; link_rate={link_rate_bps:?}",
            env!("CARGO_PKG_VERSION")
        ),
        schema: batch::tables::flows_schema_fingerprint()
            .map_err(|e| arrow::polars_error(PolarsError::ComputeError(e.to_string().into())))?,
        inputs: vec![batch::record::Stamp {
            path: unit,
            size: size_bytes,
            mtime_ns,
            named,
        }],
        part: None,
        flows: flows.len() as u64,
        captures: vec![row.clone()],
        middlebox: flows.iter().flat_map(batch::record::MiddleboxRow::of).collect(),
        floods,
    };
    let record = serde_json::to_string(&record).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    let tables = py.detach(|| -> PolarsResult<_> {
        Ok((
            bdpscope::table::flows_frame(&flows)?,
            bdpscope::table::captures::captures_frame(&[&row])?,
        ))
    });
    let (flows, captures) = tables.map_err(arrow::polars_error)?;
    Ok((ArrowStream::new(vec![flows]), ArrowStream::new(vec![captures]), record))
}

/// The empty tables (their columns and types): flows, packets, captures.
#[pyfunction]
fn schemas() -> PyResult<(ArrowStream, ArrowStream, ArrowStream)> {
    let empty = || -> PolarsResult<_> {
        Ok((
            bdpscope::table::flows_frame(&[])?,
            bdpscope::table::packets::PacketTable::new(Vec::new()).finish()?,
            bdpscope::table::captures::captures_frame(&[])?,
        ))
    };
    let (flows, packets, captures) = empty().map_err(arrow::polars_error)?;
    Ok((
        ArrowStream::new(vec![flows]),
        ArrowStream::new(packets),
        ArrowStream::new(vec![captures]),
    ))
}

/// A file's rotation group (tcpdump -C/-G names) and its place in the group, as batch
/// groups them.
#[pyfunction]
fn rotation_key(name: &str) -> (String, Vec<u128>) {
    bdpscope::capture::rotation_key(name)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CaptureError", m.py().get_type::<CaptureError>())?;
    m.add("FLOWS_SCHEMA_VERSION", bdpscope::table::FLOWS_SCHEMA_VERSION)?;
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<ArrowStream>()?;
    m.add_class::<summary::Summary>()?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(report, m)?)?;
    m.add_function(wrap_pyfunction!(packets, m)?)?;
    m.add_function(wrap_pyfunction!(batch_input, m)?)?;
    m.add_function(wrap_pyfunction!(schemas, m)?)?;
    m.add_function(wrap_pyfunction!(rotation_key, m)?)?;
    Ok(())
}
