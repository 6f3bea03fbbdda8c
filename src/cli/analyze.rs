//! `bdpscope analyze`: per-flow analysis of one or more captures.

use super::{input, progress, AnalyzeArgs, Expect, Format, Records, Selection, Status};
use crate::render;
use anyhow::Result;
use bdpscope::analysis::{analyze_reader_parallel_into, Analysis, AnalysisConfig, FlowFilter};
use bdpscope::observe::Observer;
use bdpscope::summary::{CaptureSummary, FlowSummary};
use std::io::Write;
use std::path::Path;

pub fn filter_of(sel: &Selection) -> FlowFilter {
    sel.endpoints.filter()
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
    list_all: bool,
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
        list_all,
        ..Default::default()
    };
    Ok(Opened {
        reader,
        size,
        name,
        config,
    })
}

/// Analyses one capture with the given observer; flow ids start at `first_id`. `list_all`:
/// also the attempts a flood or scan finding summarises (`analyze --all`); without it the
/// flows are those `analyze` lists, when the observer keeps segments by flow (an observer
/// that needs every segment in capture order has every connection tracked, and listed).
pub fn analyze_one<O: Observer>(
    path: &Path,
    records: &Records,
    first_id: u64,
    filter: FlowFilter,
    link_rate_bps: Option<f64>,
    list_all: bool,
    observer: O,
) -> Result<(CaptureSummary, Vec<FlowSummary>, O, u64)> {
    let Opened {
        mut reader,
        size,
        name,
        config,
    } = open(path, records, first_id, filter, link_rate_bps, list_all)?;
    let mut analysis = Analysis::new(config, observer);
    let bar = progress::bar(size, &name);
    let mut flows = Vec::new();
    let damage = analysis.read(
        &mut reader,
        &mut |r| {
            if let Some(b) = &bar {
                b.set_position(r.input_bytes());
            }
        },
        &mut |f| flows.push(f),
    );
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let next = analysis.next_flow_id();
    let (summary, rest, observer) = analysis.finish(&name, Some(&reader));
    if let Some(e) = damage {
        eprintln!("bdpscope: warning: {name}: {e}; {}", before(summary.packets));
    }
    flows.extend(rest);
    records.note_half_conversations(&mut flows);
    warn_budget(&name, &summary);
    Ok((summary, flows, observer, next))
}

/// How `analyze` runs its captures: what to select and how much memory to use.
pub struct Params<'a> {
    pub select: &'a Selection,
    pub link_rate: Option<f64>,
    pub budget: bdpscope::analysis::Budget,
    pub list_all: bool,
    /// Threads in all, as `-j` says them (0: one analysing per core beside the reader).
    pub jobs: usize,
    /// Say on stderr when the memory budget ended connections early (the text view says
    /// it in its capture block).
    pub warn: bool,
}

/// Analyses one capture for its summaries only: the reading thread decodes and runs the
/// front, each of `workers` analysis threads tracks the connections it holds (the same
/// flows, numbered and ordered the same way, as [`analyze_one`]). Each flow goes to
/// `sink` as soon as it is written.
fn analyze_summaries(
    path: &Path,
    records: &Records,
    first_id: u64,
    p: &Params,
    workers: usize,
    sink: &mut dyn FnMut(FlowSummary),
) -> Result<(CaptureSummary, u64)> {
    let Opened {
        mut reader,
        size,
        name,
        mut config,
    } = open(path, records, first_id, filter_of(p.select), p.link_rate, p.list_all)?;
    config.budget = p.budget;
    let bar = progress::bar(size, &name);
    let summary = analyze_reader_parallel_into(
        &mut reader,
        config,
        workers,
        &mut |bytes| {
            if let Some(b) = &bar {
                b.set_position(bytes);
            }
        },
        sink,
    );
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    // The text view says these in its capture block (on stdout): said once, not twice.
    if p.warn {
        for w in &summary.warnings {
            eprintln!("bdpscope: warning: {name}: {w}; {}", before(summary.packets));
        }
        warn_budget(&name, &summary);
    }
    let next = first_id + summary.flows;
    Ok((summary, next))
}

/// What became of the packets before a problem the reading stopped at, after its warning:
/// a capture cut inside its first record had none (and is still a capture read as far as
/// it goes).
fn before(packets: u64) -> &'static str {
    if packets == 0 {
        "no packet came before it"
    } else {
        "the packets before were analysed"
    }
}

/// Says on stderr when the memory budget cut connections short (never silently).
fn warn_budget(name: &str, c: &CaptureSummary) {
    let k = &c.connections;
    if k.evicted_without_data + k.evicted_with_data > 0 {
        eprintln!(
            "bdpscope: warning: {name}: the memory for live connections was full: {} connections without data and {} with data ended early (--attempt-memory {} MiB, --conn-memory {} MiB); a later packet of theirs started a new flow",
            k.evicted_without_data,
            k.evicted_with_data,
            k.attempt_budget_bytes >> 20,
            k.budget_bytes >> 20
        );
    }
}

/// Analyses every capture in turn, each flow to `sink` as it is written (selected by
/// `--flow`); a capture that cannot be read is reported and skipped. The captures'
/// summaries, whether one failed, and how many flows went to `sink`.
pub fn analyze_stream(
    records: &Records,
    p: &Params,
    sink: &mut dyn FnMut(FlowSummary),
) -> (Vec<CaptureSummary>, bool, u64) {
    let workers = super::analysis_workers(p.jobs);
    let (mut captures, mut failed) = (Vec::new(), false);
    let mut written = 0;
    for path in &records.captures {
        // The filter's note on flows it left with one direction, then `--flow`.
        let mut selected = |mut f: FlowSummary| {
            records.note_half_conversations(std::slice::from_mut(&mut f));
            if p.select.wants(&f.capture, f.id) {
                written += 1;
                sink(f);
            }
        };
        // Ids are per capture (from 0 in each, in the order connections appear), as in
        // every command and in batch's tables: a flow's id does not depend on the other
        // files on the command line.
        match analyze_summaries(path, records, 0, p, workers, &mut selected) {
            Ok((summary, _)) => captures.push(summary),
            Err(e) => {
                eprintln!("bdpscope: {e:#}");
                failed = true;
            }
        }
    }
    (captures, failed, written)
}

pub fn run(args: AnalyzeArgs) -> Result<Status> {
    let records = super::records::resolve(&args.words, &args.records, Expect::Files)?;
    let p = Params {
        select: &args.select,
        link_rate: args.link_rate,
        budget: args.memory.budget(),
        list_all: args.all,
        jobs: args.jobs,
        warn: args.format != Format::Text,
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    // Flows are written as they finish; the first write error stops the writing (the
    // analysis of the capture then ends with nothing more to say) and is returned.
    let mut error: Option<anyhow::Error> = None;
    let captures = match args.format {
        Format::Text => {
            // A flow asked for by id is shown even when too short to judge.
            let mut text = render::text::Collector::new(args.all || !args.select.flows.is_empty());
            if !args.select.is_empty() {
                text = text.selecting(args.select.describe());
            }
            let r = analyze_stream(&records, &p, &mut |f| text.flow(f));
            render::text::write(&mut out, &r.0, &text)?;
            r
        }
        Format::Json => {
            let mut json = render::json::Stream::new(&mut out)?;
            let r = analyze_stream(&records, &p, &mut |f| {
                if error.is_none() {
                    if let Err(e) = json.flow(&f) {
                        error = Some(e);
                    }
                }
            });
            if let Some(e) = error.take() {
                return Err(e);
            }
            json.finish(&r.0)?;
            r
        }
        Format::Csv => {
            let mut csv = render::table::CsvStream::new(&mut out);
            let r = analyze_stream(&records, &p, &mut |f| {
                if error.is_none() {
                    if let Err(e) = csv.flow(f) {
                        error = Some(e);
                    }
                }
            });
            if let Some(e) = error.take() {
                return Err(e);
            }
            csv.finish()?;
            r
        }
    };
    out.flush()?;
    let (analysed, failed, written) = captures;
    if written == 0 && !args.select.is_empty() && !analysed.is_empty() {
        return Ok(args.select.none_matched(&records.captures));
    }
    Ok(if failed { Status::InputFailed } else { Status::Success })
}
