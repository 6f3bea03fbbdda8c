//! Command-line definitions (clap derive) and dispatch.

mod analyze;
mod batch;
mod compare;
mod input;
mod packets;
mod plot;
mod progress;
mod rate;
mod records;
mod report;

use crate::records::Records;
pub use records::UsageError;
use records::{Expect, RecordArgs};

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;

/// What limited this TCP flow? Reads tcpdump captures (pcap, pcapng, gzip/zstd) and says,
/// per connection, whether the receiver's window, congestion control, the bottleneck or
/// the sender limited it — with the evidence and what to change.
#[derive(Parser, Debug)]
#[command(name = "bdpscope", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Per-flow analysis: handshake, RTT, windows, bottleneck, BDP, verdict, advice.
    Analyze(AnalyzeArgs),
    /// Every TCP segment as a CSV row (frame, time, flow, dir, seq, ack, len, flags,
    /// win_raw, win_bytes, flight_bytes, rtt_ms, retransmission, pipe_bytes, ts_rtt_ms,
    /// dup_ack, zero_window, window_full, naive_flight_bytes, ecn).
    Packets(PacketsArgs),
    /// Plots per flow (SVG and PNG): flight vs BDP, RTT, goodput, time-sequence.
    Plot(plot::PlotArgs),
    /// One self-contained HTML report: captures, a flow table, and per flow its
    /// findings and plots.
    Report(report::ReportArgs),
    /// A whole archive (folders, recursive) in parallel: flows and captures tables
    /// (Parquet, CSV) and a summary report (Markdown, HTML) in DIR.
    Batch(BatchArgs),
    /// The same connections captured at two points of a path (e.g. client and server):
    /// options removed or rewritten, NAT, ISN shifts, losses and delay between the points.
    Compare(compare::CompareArgs),
}

/// Which flows to show: by id (as `analyze` numbers them) or the way tcpdump filters.
/// Every command that selects flows takes this one type (`batch`, whose ids are per file
/// in its tables, takes its [`Endpoints`] part).
#[derive(Args, Debug, Clone, Default)]
pub struct Selection {
    /// Only the flow(s) with this id (repeatable). Ids are per capture: flow 0 is the
    /// first connection of each capture, whatever other files or --host/--port are
    /// given; `--flow 3` is flow 3 of every capture, `--flow x.pcap#3` flow 3 of x.pcap
    /// only (the capture as the output's `capture` field names it, or its file name).
    #[arg(long = "flow", value_name = "[CAPTURE#]ID")]
    pub flows: Vec<FlowRef>,
    #[command(flatten)]
    pub endpoints: Endpoints,
}

/// A flow as `--flow` names it: its id in every capture, or in one (`CAPTURE#ID`), the
/// way the output writes a flow's capture and id.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowRef {
    pub capture: Option<String>,
    pub id: u64,
}

impl std::str::FromStr for FlowRef {
    type Err = String;
    fn from_str(s: &str) -> Result<FlowRef, String> {
        let (capture, id) = match s.rsplit_once('#') {
            Some((c, id)) if !c.is_empty() => (Some(c.to_string()), id),
            _ => (None, s),
        };
        let id = id
            .parse()
            .map_err(|_| format!("`{s}` is not a flow: a flow id (3) or CAPTURE#ID (x.pcap#3)"))?;
        Ok(FlowRef { capture, id })
    }
}

impl std::fmt::Display for FlowRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.capture {
            Some(c) => write!(f, "{c}#{}", self.id),
            None => write!(f, "{}", self.id),
        }
    }
}

impl FlowRef {
    /// Whether this names flow `id` of the capture named `capture`.
    pub fn names(&self, capture: &str, id: u64) -> bool {
        self.id == id
            && self
                .capture
                .as_deref()
                .is_none_or(|c| c == capture || std::path::Path::new(capture).file_name().is_some_and(|n| n == c))
    }
}

/// Connections chosen by their ends, the way tcpdump's `host` and `port` choose them.
#[derive(Args, Debug, Clone, Default)]
pub struct Endpoints {
    /// Only connections with this address at either end (repeatable).
    #[arg(long = "host", value_name = "ADDR")]
    pub hosts: Vec<IpAddr>,
    /// Only connections with this port at either end (repeatable).
    #[arg(long = "port", value_name = "PORT")]
    pub ports: Vec<u16>,
}

impl Endpoints {
    pub fn filter(&self) -> bdpscope::analysis::FlowFilter {
        bdpscope::analysis::FlowFilter {
            hosts: self.hosts.clone(),
            ports: self.ports.clone(),
        }
    }
}

impl Selection {
    pub fn is_empty(&self) -> bool {
        self.flows.is_empty() && self.endpoints.hosts.is_empty() && self.endpoints.ports.is_empty()
    }

    /// Whether a flow that passed the host/port filter is one of those asked for by id.
    pub fn wants(&self, capture: &str, id: u64) -> bool {
        self.flows.is_empty() || self.flows.iter().any(|r| r.names(capture, id))
    }

    /// The ids asked for in the capture named `capture` (for the observers that keep only
    /// those flows' segments; empty when `--flow` asks for none there, or for none at all).
    pub fn ids_in(&self, capture: &str) -> Vec<u64> {
        let mut ids: Vec<u64> = self
            .flows
            .iter()
            .filter(|r| r.names(capture, r.id))
            .map(|r| r.id)
            .collect();
        ids.dedup();
        ids
    }

    /// The ids asked for in any capture.
    pub fn ids(&self) -> Vec<u64> {
        let mut ids: Vec<u64> = self.flows.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// What was asked for, as the command line said it ("--flow 99 --port 443").
    pub fn describe(&self) -> String {
        let mut words = Vec::new();
        words.extend(self.flows.iter().map(|f| format!("--flow {f}")));
        words.extend(self.endpoints.hosts.iter().map(|h| format!("--host {h}")));
        words.extend(self.endpoints.ports.iter().map(|p| format!("--port {p}")));
        words.join(" ")
    }

    /// The message and status of a run whose selection matched no flow: exit 1 (a script
    /// asking for a flow that is not there learns it), with what was asked and where.
    pub fn none_matched(&self, inputs: &[PathBuf]) -> Status {
        let names: Vec<String> = inputs.iter().map(|p| input::display_name(p)).collect();
        eprintln!("bdpscope: no flow matches {} in {}", self.describe(), names.join(", "));
        Status::InputFailed
    }
}

/// Threads to use, as ripgrep's `-j/--jobs`: the same meaning in every command that
/// takes it; 0 (the default) means one per core.
pub fn threads(jobs: usize) -> usize {
    match jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// The threads that analyse one capture's connections beside the one that reads it: `-j N`
/// is N threads in all (at least one analysing; the result is the same for any number),
/// and by default one analysing per core, as the Python binding has. The reading thread
/// (read, decode, the front) takes a fraction of a core, and with one thread fewer
/// analysing that fraction of every core but one went unused: on 2 cores, a 2.46M-packet
/// bulk capture took 0.94 s with one analysing thread and 0.71-0.81 s with two, a
/// 50 000-connection mix (bench/gen-attacks.py mix) 19.4-19.8 s against 12.2-13.2 s.
pub fn analysis_workers(jobs: usize) -> usize {
    match jobs {
        0 => threads(0),
        n => n.saturating_sub(1).max(1),
    }
}

#[derive(Args, Debug)]
#[command(
    override_usage = "bdpscope analyze [OPTIONS] CAPTURE... [FILTER...]\n       bdpscope analyze [OPTIONS] -r CAPTURE [FILTER...]"
)]
pub struct AnalyzeArgs {
    /// Capture files (pcap, pcapng, optionally gzip/zstd; `-` reads standard input), then
    /// optionally a capture filter as tcpdump takes it: `cap.pcap host 10.1.1.2 and port 443`.
    #[arg(value_name = "WORD")]
    pub words: Vec<PathBuf>,
    #[command(flatten)]
    pub records: RecordArgs,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub select: Selection,
    /// The bottleneck link rate when you know it, used instead of the estimate and
    /// labelled as yours: 50mbit, 1gbit (tc), 50M (iperf3), 50Mbit/s; tc's mbps is
    /// megaBYTES per second.
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    pub link_rate: Option<f64>,
    /// Include flows too short to judge (hidden by default in the text view), and the
    /// connection attempts a flood or scan finding summarises (in every format).
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub memory: Memory,
    /// Threads to use, as ripgrep's -j: one reads the capture, the others analyse its
    /// connections (at least one; default: one analysing per core beside the reading one).
    /// The result is the same for any number; fewer leave cores to other work.
    #[arg(long, short = 'j', value_name = "N", default_value_t = 0, hide_default_value = true)]
    pub jobs: usize,
}

/// Memory for live connections (an estimate of their state, the same on every machine).
/// Beyond it the least valuable connections end early, counted and reported: first those
/// that carried no data (the longest silent first), then closed ones, then one-way, then
/// two-way transfers.
#[derive(Args, Debug, Clone, Copy)]
pub struct Memory {
    /// MiB for all live connections.
    #[arg(long, value_name = "MIB", default_value_t = 4096)]
    pub conn_memory: u64,
    /// MiB for live connections that have carried no data yet (attempts, handshakes):
    /// a SYN flood stays within it.
    #[arg(long, value_name = "MIB", default_value_t = 16)]
    pub attempt_memory: u64,
}

impl Memory {
    pub fn budget(&self) -> bdpscope::analysis::Budget {
        bdpscope::analysis::Budget {
            total_bytes: self.conn_memory.max(1) << 20,
            attempt_bytes: self.attempt_memory.max(1) << 20,
        }
    }
}

#[derive(Args, Debug)]
#[command(override_usage = "bdpscope packets [OPTIONS] CAPTURE [FILTER...]")]
pub struct PacketsArgs {
    /// Capture file (`-` reads standard input), then optionally a capture filter.
    #[arg(value_name = "WORD")]
    pub words: Vec<PathBuf>,
    #[command(flatten)]
    pub records: RecordArgs,
    #[command(flatten)]
    pub select: Selection,
}

#[derive(Args, Debug)]
#[command(override_usage = "bdpscope batch [OPTIONS] --out DIR PATH... [FILTER...]")]
pub struct BatchArgs {
    /// Capture files and folders (walked recursively; files are read by content), then
    /// optionally a capture filter. A file that cannot be read as a capture fails, and
    /// the exit status is 1, unless a folder held it and it is plainly no capture (no
    /// capture magic, no .pcap/.pcapng/.cap name: a README), which is listed as skipped.
    #[arg(value_name = "WORD")]
    pub words: Vec<PathBuf>,
    #[command(flatten)]
    pub records: RecordArgs,
    /// Output folder: flows.parquet/csv, captures.parquet/csv, summary.md/html, and the
    /// state (done.jsonl, parts/) that lets a re-run skip what is done.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Threads to use, as ripgrep's -j (default: one per core): each analyses one file at
    /// a time, so N files are analysed at once.
    #[arg(long, short = 'j', value_name = "N", default_value_t = 0, hide_default_value = true)]
    pub jobs: usize,
    /// Join rotated captures (tcpdump -C/-G: trace.pcap, trace.pcap1, ...) so that
    /// connections carry over from file to file.
    #[arg(long)]
    pub stitch: bool,
    /// Redo every input, even those already done in DIR.
    #[arg(long)]
    pub force: bool,
    /// Process only the K-th of N deterministic parts of the inputs (by a hash of the
    /// path); the tables of all N parts together are the full run.
    #[arg(long, value_name = "K/N", value_parser = batch::parse_shard)]
    pub shard: Option<crate::batch::Shard>,
    #[command(flatten)]
    pub endpoints: Endpoints,
    /// The bottleneck link rate when you know it (e.g. 50M, 1G).
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    pub link_rate: Option<f64>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Csv,
}

/// A rate in bits per second (see `rate.rs` for the spellings).
fn parse_rate(s: &str) -> Result<f64, String> {
    rate::parse(s)
}

/// How a run ended (ruff's ExitStatus): 0 analysed, 1 an input could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Success,
    InputFailed,
}

impl From<Status> for ExitCode {
    fn from(s: Status) -> ExitCode {
        match s {
            Status::Success => ExitCode::SUCCESS,
            Status::InputFailed => ExitCode::from(1),
        }
    }
}

pub fn parse() -> Cli {
    Cli::parse()
}

pub fn run(cli: Cli) -> anyhow::Result<Status> {
    match cli.command {
        Command::Analyze(a) => analyze::run(a),
        Command::Packets(a) => packets::run(a),
        Command::Plot(a) => plot::run(a),
        Command::Report(a) => report::run(a),
        Command::Batch(a) => batch::run(a),
        Command::Compare(a) => compare::run(a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    /// `-j N` counts the reading thread; the default adds it to one analysing per core.
    #[test]
    fn jobs_count_the_reader_and_the_default_gives_every_core_an_analyser() {
        assert_eq!(analysis_workers(1), 1);
        assert_eq!(analysis_workers(2), 1);
        assert_eq!(analysis_workers(5), 4);
        assert_eq!(analysis_workers(0), threads(0));
        assert!(analysis_workers(0) >= 1);
    }
}
