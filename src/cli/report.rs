//! `bdpscope report`: one self-contained HTML page — the captures, a sortable and
//! filterable flow table, and per flow its findings and four graphs that zoom together.

use super::analyze::{analyze_one, filter_of};
use super::{parse_rate, Expect, RecordArgs, Selection, Status};
use crate::plot::{Ctx, SeriesRecorder};
use crate::render::charts::{legend, ChartData};
use crate::render::html::{self, Charts, Page};
use anyhow::{Context, Result};
use clap::Args;
use std::collections::HashMap;
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(override_usage = "bdpscope report [OPTIONS] --out DIR CAPTURE... [FILTER...]")]
pub struct ReportArgs {
    /// Capture files (pcap, pcapng, optionally gzip/zstd; `-` reads standard input), then
    /// optionally a capture filter.
    #[arg(value_name = "WORD")]
    pub words: Vec<PathBuf>,
    #[command(flatten)]
    pub records: RecordArgs,
    /// Directory to write index.html into (created when missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    #[command(flatten)]
    pub select: Selection,
    /// The bottleneck link rate when you know it (e.g. 50M, 1G), instead of the estimate.
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    pub link_rate: Option<f64>,
    /// Graphs for at most this many flows (those with the most data); the others are in
    /// the table and described, without graphs. Each flow's graphs carry at most 32768
    /// points. (`plot` takes the same limit by the same name.)
    #[arg(long, value_name = "N", default_value_t = 40)]
    pub max_plots: usize,
    /// The page's title.
    #[arg(long, value_name = "TEXT", default_value = "bdpscope report")]
    pub title: String,
    /// Include the connection attempts a flood or scan finding summarises, as `analyze
    /// --all` does (without it they are counted under "Floods and scans", not listed).
    #[arg(long)]
    pub all: bool,
}

pub fn run(args: ReportArgs) -> Result<Status> {
    let records = super::records::resolve(&args.words, &args.records, Expect::Files)?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("{}: cannot create the directory", args.out.display()))?;
    let mut recorder = SeriesRecorder::new(args.select.ids(), args.max_plots);
    let (mut captures, mut flows, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    let mut places = HashMap::new();
    for path in &records.captures {
        // Ids are per capture, as in every command and in batch's tables; the recorder
        // tells the captures' flows apart by the capture's place.
        recorder.set_capture(captures.len());
        match analyze_one(
            path,
            &records,
            0,
            filter_of(&args.select),
            args.link_rate,
            args.all,
            &mut recorder,
        ) {
            Ok((summary, fl, _, _)) => {
                places.insert(summary.path.clone(), captures.len());
                captures.push(summary);
                flows.extend(fl.into_iter().filter(|f| args.select.wants(&f.capture, f.id)));
            }
            Err(e) => {
                eprintln!("bdpscope: {e:#}");
                failed.push(format!("{e:#}"));
            }
        }
    }
    let mut charts: HashMap<(String, u64), Charts> = HashMap::new();
    for f in &flows {
        let Some(rec) = places.get(&f.capture).and_then(|&k| recorder.get(k, f.id)) else {
            continue;
        };
        let ctx = Ctx::new(f, rec);
        charts.insert(
            html::chart_key(f),
            Charts {
                data: ChartData::new(&ctx),
                legends: legend(&ctx),
            },
        );
    }
    let plot_note = (!recorder.dropped.is_empty()).then(|| {
        format!(
            "{} flow(s) with less data have no graphs (the report draws at most {}; see --max-plots)",
            recorder.dropped.len(),
            args.max_plots
        )
    });
    let page = Page {
        title: &args.title,
        captures: &captures,
        flows: &flows,
        charts: &charts,
        failed: &failed,
        plot_note,
    };
    let index = args.out.join("index.html");
    let file = std::fs::File::create(&index).with_context(|| format!("{}: cannot write", index.display()))?;
    let mut out = std::io::BufWriter::new(file);
    html::write(&mut out, &page).with_context(|| format!("{}: cannot write", index.display()))?;
    std::io::Write::flush(&mut out)?;
    println!("{}", index.display());
    if flows.is_empty() && !args.select.is_empty() && !captures.is_empty() {
        return Ok(args.select.none_matched(&records.captures));
    }
    Ok(if failed.is_empty() && !captures.is_empty() {
        Status::Success
    } else {
        Status::InputFailed
    })
}
