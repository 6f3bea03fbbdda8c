//! `bdpscope plot`: the four plots of each flow, as SVG and PNG files
//! (`flow-<id>-<flight|rtt|throughput|timeseq>.svg/.png`).

use super::analyze::{analyze_one, filter_of};
use super::{parse_rate, Expect, RecordArgs, Selection, Status};
use crate::plot::{self, Ctx, Kind, SeriesRecorder};
use anyhow::{Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
#[command(override_usage = "bdpscope plot [OPTIONS] --out DIR CAPTURE [FILTER...]")]
pub struct PlotArgs {
    /// Capture file (pcap, pcapng, optionally gzip/zstd; `-` reads standard input), then
    /// optionally a capture filter.
    #[arg(value_name = "WORD")]
    pub words: Vec<PathBuf>,
    #[command(flatten)]
    pub records: RecordArgs,
    /// Directory to write the plots into (created when missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    #[command(flatten)]
    pub select: Selection,
    /// The bottleneck link rate when you know it (e.g. 50M, 1G), instead of the estimate.
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    pub link_rate: Option<f64>,
    /// Write SVG only (no PNG).
    #[arg(long)]
    pub svg_only: bool,
    /// Plots for at most this many flows (those with the most data); `report` takes the
    /// same limit by the same name.
    #[arg(long, value_name = "N", default_value_t = 100, alias = "max-flows")]
    pub max_plots: usize,
}

/// Writes the plots of one flow; returns the files written.
pub fn write_flow(ctx: &Ctx<'_>, dir: &Path, png: bool) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for kind in Kind::ALL {
        let stem = format!("flow-{}-{}", ctx.flow.id, kind.name());
        let svg_path = dir.join(format!("{stem}.svg"));
        let svg = plot::svg(kind, ctx)?;
        std::fs::write(&svg_path, svg).with_context(|| format!("{}: cannot write", svg_path.display()))?;
        files.push(svg_path);
        if png {
            let png_path = dir.join(format!("{stem}.png"));
            plot::png(kind, ctx, &png_path)?;
            files.push(png_path);
        }
    }
    Ok(files)
}

pub fn run(args: PlotArgs) -> Result<Status> {
    let records = super::records::resolve(&args.words, &args.records, Expect::One)?;
    let capture = &records.captures[0];
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("{}: cannot create the directory", args.out.display()))?;
    let name = super::input::display_name(capture);
    if !args.select.flows.is_empty() && args.select.ids_in(&name).is_empty() {
        return Ok(args.select.none_matched(&records.captures));
    }
    let recorder = SeriesRecorder::new(args.select.ids_in(&name), args.max_plots);
    // Every connection: plots are drawn only for flows with data, which a flood finding
    // never folds, and an attempt asked for by id is answered "no data segments to plot".
    let (_, flows, recorder, _) = analyze_one(
        capture,
        &records,
        0,
        filter_of(&args.select),
        args.link_rate,
        true,
        recorder,
    )?;
    if !args.select.is_empty() && !flows.iter().any(|f| args.select.wants(&f.capture, f.id)) {
        return Ok(args.select.none_matched(&records.captures));
    }
    let mut written = 0;
    for f in flows.iter().filter(|f| args.select.wants(&f.capture, f.id)) {
        let Some(rec) = recorder.get(0, f.id) else {
            if recorder.dropped.contains(&(0, f.id)) {
                eprintln!(
                    "bdpscope: flow {}: not plotted (more than {} flows; use --flow or --max-plots)",
                    f.id, args.max_plots
                );
            } else if !args.select.flows.is_empty() {
                eprintln!("bdpscope: flow {}: no data segments to plot", f.id);
            }
            continue;
        };
        let ctx = Ctx::new(f, rec);
        let files = write_flow(&ctx, &args.out, !args.svg_only)?;
        for p in files {
            println!("{}", p.display());
        }
        written += 1;
    }
    for id in args.select.ids_in(&name) {
        if !flows.iter().any(|f| f.id == id) {
            eprintln!("bdpscope: no flow {id} in {}", capture.display());
        }
    }
    if written == 0 {
        eprintln!("bdpscope: no flow with data to plot");
    }
    Ok(Status::Success)
}
