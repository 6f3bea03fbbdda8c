//! `bdpscope analyze`: per-flow analysis of one or more captures.

use super::{input, progress, AnalyzeArgs, Expect, Format, Records, Selection, Status};
use crate::render;
use anyhow::Result;
use bdpscope::analysis::{analyze_reader_parallel, Analysis, AnalysisConfig, FlowFilter};
use bdpscope::observe::Observer;
use bdpscope::summary::{CaptureSummary, FlowSummary};
use std::io::Write;
use std::path::Path;

/// The outcome of reading a list of captures: what was analysed, and what failed.
pub struct Run {
    pub captures: Vec<CaptureSummary>,
    pub flows: Vec<FlowSummary>,
    pub failed: bool,
}

pub fn filter_of(sel: &Selection) -> FlowFilter {
    FlowFilter {
        hosts: sel.hosts.clone(),
        ports: sel.ports.clone(),
    }
}

/// A capture opened for analysis, with the configuration its analysis runs under.
struct Opened {
    reader: bdpscope::capture::CaptureReader,
    /// Input size in bytes, when known (for the progress bar).
    size: Option<u64>,
    name: String,
    config: AnalysisConfig,
}

fn open(
    path: &Path,
    records: &Records,
    first_id: u64,
    filter: FlowFilter,
    link_rate_bps: Option<f64>,
) -> Result<Opened> {
    let (mut reader, size) = input::open(path)?;
    records
        .apply(&mut reader)
        .map_err(|why| anyhow::anyhow!("{}: {why}", input::display_name(path)))?;
    let name = input::display_name(path);
    let config = AnalysisConfig {
        first_flow_id: first_id,
        capture_name: name.clone(),
        filter,
        link_rate_bps,
        ..Default::default()
    };
    Ok(Opened {
        reader,
        size,
        name,
        config,
    })
}

/// Analyses one capture with the given observer; flow ids start at `first_id`.
pub fn analyze_one<O: Observer>(
    path: &Path,
    records: &Records,
    first_id: u64,
    filter: FlowFilter,
    link_rate_bps: Option<f64>,
    observer: O,
) -> Result<(CaptureSummary, Vec<FlowSummary>, O, u64)> {
    let Opened {
        mut reader,
        size,
        name,
        config,
    } = open(path, records, first_id, filter, link_rate_bps)?;
    let mut analysis = Analysis::new(config, observer);
    let bar = progress::bar(size, &name);
    let mut n: u64 = 0;
    loop {
        match reader.next_frame() {
            Ok(Some(frame)) => {
                analysis.on_frame(&frame);
                n += 1;
                if n % 65_536 == 0 {
                    if let Some(b) = &bar {
                        b.set_position(reader.input_bytes());
                    }
                }
            }
            Ok(None) => break,
            Err(e) => {
                let msg = format!("{name}: {e}; the packets before were analysed");
                eprintln!("bdpscope: warning: {msg}");
                analysis.warn(e.to_string());
                break;
            }
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let next = analysis.next_flow_id();
    let (summary, mut flows, observer) = analysis.finish(&name, Some(&reader));
    records.note_half_conversations(&mut flows);
    Ok((summary, flows, observer, next))
}

/// Analyses one capture for its summaries only: the reading thread decodes, each of
/// `workers` analysis threads tracks the connections it owns (the same flows, numbered
/// the same way, as [`analyze_one`]).
pub fn analyze_summaries(
    path: &Path,
    records: &Records,
    first_id: u64,
    filter: FlowFilter,
    link_rate_bps: Option<f64>,
    workers: usize,
) -> Result<(CaptureSummary, Vec<FlowSummary>, u64)> {
    let Opened {
        mut reader,
        size,
        name,
        config,
    } = open(path, records, first_id, filter, link_rate_bps)?;
    let bar = progress::bar(size, &name);
    let (summary, mut flows) = analyze_reader_parallel(&mut reader, config, workers, &mut |bytes| {
        if let Some(b) = &bar {
            b.set_position(bytes);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    for w in &summary.warnings {
        eprintln!("bdpscope: warning: {name}: {w}; the packets before were analysed");
    }
    records.note_half_conversations(&mut flows);
    let next = first_id + flows.len() as u64;
    Ok((summary, flows, next))
}

/// Analyses every capture in turn; a capture that cannot be read is reported and skipped.
/// `jobs` analysis threads (0: one per core).
pub fn analyze_all(records: &Records, sel: &Selection, link_rate: Option<f64>, jobs: usize) -> Run {
    let workers = match jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let mut run = Run {
        captures: Vec::new(),
        flows: Vec::new(),
        failed: false,
    };
    let mut next_id = 0;
    for p in &records.captures {
        match analyze_summaries(p, records, next_id, filter_of(sel), link_rate, workers) {
            Ok((summary, flows, next)) => {
                next_id = next;
                run.captures.push(summary);
                run.flows.extend(
                    flows
                        .into_iter()
                        .filter(|f| sel.flows.is_empty() || sel.flows.contains(&f.id)),
                );
            }
            Err(e) => {
                eprintln!("bdpscope: {e:#}");
                run.failed = true;
            }
        }
    }
    run
}

pub fn run(args: AnalyzeArgs) -> Result<Status> {
    let records = super::records::resolve(&args.words, &args.records, Expect::Files)?;
    let run = analyze_all(&records, &args.select, args.link_rate, args.jobs);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match args.format {
        Format::Text => render::text::write(&mut out, &run.captures, &run.flows, args.all)?,
        Format::Json => render::json::write(&mut out, &run.captures, &run.flows)?,
        Format::Csv => render::table::write_csv(&mut out, &run.flows)?,
    }
    out.flush()?;
    Ok(if run.failed {
        Status::InputFailed
    } else {
        Status::Success
    })
}
