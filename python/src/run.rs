//! The read loops, as the command line runs them: `analyze` (the parallel analysis,
//! one thread per core by default), `packets` (one thread, every segment to the table)
//! and one input of `batch` (one thread, a unit of one file). Called without the GIL.

use crate::batch::record::FloodRow;
use crate::source::{OpenError, Source};
use bdpscope::analysis::{analyze_reader, analyze_reader_parallel_into, Analysis, AnalysisConfig};
use bdpscope::observe::NoObserver;
use bdpscope::summary::{CaptureSummary, FlowSummary};
use bdpscope::table::captures::{CaptureRow, InputStatus};
use bdpscope::table::packets::PacketTable;
use polars::prelude::DataFrame;
use pyo3::PyErr;

pub struct Options {
    pub link_rate_bps: Option<f64>,
    pub list_all: bool,
    /// Analysis threads; 0: one per core (as `analyze -j`).
    pub jobs: usize,
}

pub struct Outcome {
    pub flows: Vec<FlowSummary>,
    pub capture: CaptureSummary,
    pub warnings: Vec<String>,
}

fn config(name: &str, link_rate_bps: Option<f64>) -> AnalysisConfig {
    AnalysisConfig {
        first_flow_id: 0,
        capture_name: name.to_string(),
        link_rate_bps,
        ..Default::default()
    }
}

/// The warnings the command line prints on stderr for a capture, in its words (without
/// the `bdpscope: warning: ` prefix): each problem of the reading, and connections the
/// memory budget ended early.
fn warnings(name: &str, c: &CaptureSummary) -> Vec<String> {
    // As the command line says it (`cli::analyze::before`).
    let before = if c.packets == 0 {
        "no packet came before it"
    } else {
        "the packets before were analysed"
    };
    let mut out: Vec<String> = c.warnings.iter().map(|w| format!("{name}: {w}; {before}")).collect();
    let k = &c.connections;
    if k.evicted_without_data + k.evicted_with_data > 0 {
        out.push(format!(
            "{name}: the memory for live connections was full: {} connections without data and {} with data ended early (--attempt-memory {} MiB, --conn-memory {} MiB); a later packet of theirs started a new flow",
            k.evicted_without_data,
            k.evicted_with_data,
            k.attempt_budget_bytes >> 20,
            k.budget_bytes >> 20
        ));
    }
    out
}

/// `bdpscope analyze SOURCE`: every flow and the capture's summary.
pub fn summaries(source: Source, o: &Options) -> Result<Outcome, PyErr> {
    let (mut reader, name, _) = source.open().map_err(OpenError::into_py)?;
    let mut config = config(&name, o.link_rate_bps);
    config.list_all = o.list_all;
    let workers = match o.jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let mut flows = Vec::new();
    let capture = analyze_reader_parallel_into(&mut reader, config, workers, &mut |_| {}, &mut |f| flows.push(f));
    let warnings = warnings(&name, &capture);
    Ok(Outcome {
        flows,
        capture,
        warnings,
    })
}

/// `bdpscope packets SOURCE [--flow ID]...`: the per-segment table, in chunks.
pub fn packets(source: Source, flows: Vec<u64>) -> Result<(Vec<DataFrame>, Vec<String>), PyErr> {
    let (mut reader, name, _) = source.open().map_err(OpenError::into_py)?;
    let (summary, _, table) = analyze_reader(&mut reader, config(&name, None), PacketTable::new(flows));
    let frames = table.finish().map_err(crate::arrow::polars_error)?;
    Ok((frames, warnings(&name, &summary)))
}

/// An input of `bdpscope batch PATH...` as the job lists it.
pub struct BatchInput {
    /// The path as the tables show it.
    pub name: String,
    pub size_bytes: u64,
    pub mtime_ns: i64,
    /// Given by name (a path or a glob's match) rather than found in a folder.
    pub named: bool,
}

/// One input of `bdpscope batch PATH...` (without `--stitch`, a unit is one file), as its
/// worker makes it (`src/batch/worker.rs`): the flows, the captures row with what became
/// of the file, and the capture's floods and scans.
pub fn batch_input(
    source: Result<Source, PyErr>,
    input: BatchInput,
    link_rate_bps: Option<f64>,
) -> (Vec<FlowSummary>, CaptureRow, Vec<FloodRow>) {
    let BatchInput {
        name,
        size_bytes,
        mtime_ns,
        named,
    } = input;
    let row = |status: InputStatus| CaptureRow {
        path: name.clone(),
        status,
        size_bytes,
        mtime: (mtime_ns != 0).then(|| mtime_ns as f64 / 1e9),
        ..Default::default()
    };
    let failed = |why: String| CaptureRow {
        error: Some(why),
        ..row(InputStatus::Failed)
    };
    let source = match source {
        Ok(mut s) => {
            s.name = name.clone();
            s
        }
        Err(e) => return (Vec::new(), failed(format!("cannot open: {e}")), Vec::new()),
    };
    let mut reader = match source.open() {
        Ok((reader, _, _)) => reader,
        Err(OpenError::Io(e, _)) => return (Vec::new(), failed(format!("cannot open: {e}")), Vec::new()),
        // Skipped or failed by batch's rule (`InputStatus::of_unopened`).
        Err(OpenError::Capture(e, _)) => {
            let unread = match InputStatus::of_unopened(&e, &name, named) {
                InputStatus::Skipped => CaptureRow {
                    skipped_reason: Some(e.to_string()),
                    ..row(InputStatus::Skipped)
                },
                _ => failed(e.to_string()),
            };
            return (Vec::new(), unread, Vec::new());
        }
    };
    let mut r = CaptureRow {
        format: Some(reader.format().container()),
        compression: Some(reader.compression()),
        ..row(InputStatus::Ok)
    };
    let mut analysis = Analysis::new(config(&name, link_rate_bps), NoObserver);
    let mut flows = Vec::new();
    // The library's read loop: a damaged capture's error is already a warning of its summary.
    if let Some(e) = analysis.read(&mut reader, &mut |_| {}, &mut |f| flows.push(f)) {
        r.status = InputStatus::Partial;
        r.error = Some(e.to_string());
    }
    let (summary, rest, _) = analysis.finish(&name, None);
    flows.extend(rest);
    r.summarised(&summary);
    let floods = FloodRow::of(&name, &summary).collect();
    r.chain = Some(name);
    (flows, r, floods)
}
