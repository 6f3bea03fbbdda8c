//! `bdpscope analyze`: per-flow analysis of one or more captures.

use super::{input, progress, AnalyzeArgs, Format, Selection, Status};
use crate::render;
use anyhow::Result;
use bdpscope::analysis::{Analysis, AnalysisConfig, FlowFilter};
use bdpscope::observe::{NoObserver, Observer};
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

/// Analyses one capture with the given observer; flow ids start at `first_id`.
pub fn analyze_one<O: Observer>(
    path: &Path,
    first_id: u64,
    filter: FlowFilter,
    link_rate_bps: Option<f64>,
    observer: O,
) -> Result<(CaptureSummary, Vec<FlowSummary>, O, u64)> {
    let (mut reader, size) = input::open(path)?;
    let name = input::display_name(path);
    let config = AnalysisConfig {
        first_flow_id: first_id,
        capture_name: name.clone(),
        filter,
        link_rate_bps,
        ..Default::default()
    };
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
    let (summary, flows, observer) = analysis.finish(&name, Some(&reader));
    Ok((summary, flows, observer, next))
}

/// Analyses every capture in turn; a capture that cannot be read is reported and skipped.
pub fn analyze_all(paths: &[std::path::PathBuf], sel: &Selection, link_rate: Option<f64>) -> Run {
    let mut run = Run {
        captures: Vec::new(),
        flows: Vec::new(),
        failed: false,
    };
    let mut next_id = 0;
    for p in paths {
        match analyze_one(p, next_id, filter_of(sel), link_rate, NoObserver) {
            Ok((summary, flows, _, next)) => {
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
    let run = analyze_all(&args.captures, &args.select, args.link_rate);
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
