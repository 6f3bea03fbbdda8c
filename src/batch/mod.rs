//! `bdpscope batch`: a whole capture archive, in parallel, into Parquet/CSV tables and a
//! summary report.
//!
//! ```text
//! bdpscope batch PATH... --out DIR [--jobs N] [--stitch] [--force] [--shard K/N]
//!                [--host ADDR]... [--port PORT]... [--link-rate RATE]
//! ```
//!
//! # Inputs
//!
//! Every PATH is a file or a folder; folders are walked recursively (entries in name
//! order, symbolic links followed; loops, the output folder and other batch output
//! folders — holding `done.jsonl` and `parts/` — left out). Files are
//! read by content, never by name: pcap, pcapng, either of them gzip- or
//! zstd-compressed. A path given twice is read once.
//!
//! A file that cannot be read as a capture is `failed` (named on stderr with the reason,
//! exit status 1) unless it is plainly no capture found in a folder — a `README`, a
//! `truth.json`, `SOURCES.md` — which gets status `skipped` and the reason. Plainly no
//! capture: its content starts with no capture's magic number (pcap either byte order, µs
//! or ns; pcapng; bare or in gzip/zstd) and its name has no capture extension (`.pcap`,
//! `.pcapng`, `.cap`, `.ntar`, compressed or rotated). So a `.pcap` that is empty or
//! garbage, or a pcap of another version, fails; and a file named as a PATH itself is
//! one the user asked to read, so it fails whatever it holds, as `analyze FILE` does (the
//! rule: `bdpscope::table::captures::InputStatus::of_unopened`).
//!
//! # What each input becomes
//!
//! Every input is analysed exactly as `bdpscope analyze FILE` would analyse it (the same
//! [`bdpscope::analysis::Analysis`] loop, the same options), so its flows are the rows
//! `bdpscope analyze FILE --format csv` prints. Flow ids are numbered per capture from 0,
//! as `analyze` numbers a single file: `(capture, id)` identifies a flow in a batch, is
//! deterministic, and survives sharding and re-runs.
//!
//! A capture that is cut short (tcpdump still writing, a truncated gzip stream) or damaged
//! after some records keeps the flows read before the problem: status `partial`, the
//! reason in `error` and `warnings`. A file that cannot be opened, whose header is
//! unreadable, or that is damaged before its first packet (no packet could be read) gets
//! status `failed` with the reason. Neither stops the batch.
//!
//! # Outputs in DIR
//!
//! | file | what |
//! |---|---|
//! | `flows.parquet`, `flows.csv` | one row per flow: the flows table ([`bdpscope::table::flows_frame`], docs/tables.md): typed in Parquet, in CSV as `analyze --format csv` writes it |
//! | `captures.parquet`, `captures.csv` | one row per input (see [`bdpscope::table::captures::CAPTURE_COLUMNS`]) |
//! | `summary.md`, `summary.html` | verdict counts and shares, goodput / RTT / window distributions, the worst flows, every middlebox finding, every flood and scan (capture, kind, target, source, attempts), the stalls of the judged flows (per kind, and the longest), every file that failed and why; the HTML is self-contained (no scripts, no external files) |
//! | `done.jsonl` | the state: one JSON line per unit of work (see *Re-runs*) |
//! | `parts/*.parquet` | the flows of each unit, merged into `flows.*` at the end |
//!
//! Rows are sorted deterministically: captures by path, flows by unit (path, or rotation
//! group with `--stitch`) then id. The same inputs give byte-identical CSV files.
//!
//! `captures` columns: `path`, `status` (`ok` | `partial` | `failed` | `skipped`),
//! `format` (`pcap` | `pcapng`), `compression` (`none` | `gzip` | `zstd`), `size_bytes`,
//! `mtime` (seconds since the epoch), `packets`, `tcp_segments`, `non_tcp_records`,
//! `flows`, `first_ts`, `last_ts`, `link_types`, `warnings` (joined with ` | `), `error`,
//! `skipped_reason`, `chain` (the `capture` value its flows carry: the path itself, or the
//! stitched chain's name), `floods`, `attempts`, `failed_attempts`, `evicted_connections`,
//! `capture_duplicates` (records set aside as the same IP datagram recorded again).
//!
//! # Parallelism and memory
//!
//! `--jobs N` worker threads (default: every core) take units largest first. A worker
//! holds one capture's analysis at a time — memory is bounded by jobs x the connections
//! alive at once in a capture (plus that capture's finished flows), never by the archive:
//! each unit's flows go to `parts/` as soon as it is done, and the final tables are
//! written by streaming the parts. (With `--stitch` a worker holds the finished flows of
//! a whole chain: the analysis keeps a capture's flows to its end for the diagnosis
//! across flows.) On a terminal a progress bar shows files done/total,
//! bytes, packets/s and the ETA; in pipes and CI logs the run is quiet apart from a
//! one-line account at the end and the list of failed files.
//!
//! # Re-runs
//!
//! `done.jsonl` records, per unit, the inputs (path, size, mtime), the options that
//! matter for the results, the captures rows, the middlebox findings and its part file.
//! A later run into the same DIR skips every unit whose inputs are unchanged (same path,
//! size and mtime) and whose options match, and redoes the others; `--force` redoes all
//! given inputs. Rows of units not among this run's inputs are kept, so an archive can be
//! added folder by folder; a unit that now covers a path an older unit covered replaces
//! it. A run that is interrupted resumes where it stopped (records are appended as units
//! finish). Exit status: 0, or 1 when some input failed (its row says why); 2 for usage
//! errors.
//!
//! # Sharding: `--shard K/N`
//!
//! Processes the units whose key hashes to K-1 modulo N (64-bit FNV-1a of the UTF-8 key:
//! the path as listed in the `path` column, or the rotation group with `--stitch`). The
//! choice depends on the path only — not on its position, the file list or the machine —
//! so N jobs given the same PATH arguments (the same relative paths) cover every input
//! exactly once, each writing to its own DIR. The union of their tables is the full run:
//!
//! ```text
//! # DuckDB
//! SELECT * FROM read_parquet('out-*/flows.parquet') ORDER BY capture, id;
//! COPY (SELECT * FROM read_parquet('out-*/captures.parquet') ORDER BY path)
//!   TO 'captures.parquet' (FORMAT parquet);
//! # polars (Python)
//! pl.scan_parquet("out-*/flows.parquet").sort("capture", "id").collect()
//! # Spark
//! spark.read.parquet("out-*/flows.parquet").orderBy("capture", "id")
//! ```
//!
//! Join flows to their input with `flows.capture = captures.chain`. Each shard's summary
//! covers its shard. For the summary of the whole archive, gather the shards' state in
//! one folder and run once more without `--shard`: nothing is read again (the inputs are
//! only stat'ed), and tables and summary come out as from a single full run.
//!
//! ```text
//! mkdir -p all/parts && cat out-*/done.jsonl > all/done.jsonl && cp out-*/parts/* all/parts/
//! bdpscope batch ARCHIVE --out all
//! ```
//!
//! # Rotated captures: `--stitch`
//!
//! `tcpdump -C` / `-G` spread one connection over consecutive files (`trace.pcap`,
//! `trace.pcap1`, `trace.pcap2`... or `trace-20240101-120000.pcap`...). With `--stitch`,
//! files are grouped by folder and name template: the name with the compression suffix
//! (`.gz`, `.zst`) removed, every run of digits replaced by `#`, and a trailing counter
//! dropped (so `trace.pcap` and `trace.pcap7` share `trace.pcap`). A group is read in
//! the order of its numbers (numerically) by one worker, feeding consecutive files into
//! ONE analysis, so the flow table — and each connection's state, window scale included —
//! carries over from file to file. A file continues the chain only when its first packet
//! is no earlier than 1 s before the previous file's last packet and no later than the
//! flow table's idle timeout (300 s) after it; otherwise a new chain starts (two unrelated
//! `run1.pcap`, `run2.pcap` are not merged). Files that cannot be read (failed or
//! skipped) are left out without breaking the chain.
//!
//! A chain of several files names its flows `FIRST_PATH..LAST_FILE_NAME` (e.g.
//! `arch/trace.pcap..trace.pcap7`) in the `capture` column, with ids from 0 across the
//! chain; its files' captures rows carry that name in `chain`. Their per-file `packets`,
//! `first_ts`, `last_ts`, `warnings` are per file; `tcp_segments`, `non_tcp_records` and
//! `flows` belong to the chain and are left empty. A chain of one file is exactly the
//! unstitched result. Sharding and re-runs work on whole groups (a new rotated file
//! redoes its group).

mod inputs;
mod layout;
mod progress;
mod record;
mod stalls;
mod state;
mod summary;
mod tables;
mod worker;

use anyhow::{Context, Result};
use bdpscope::analysis::FlowFilter;
use rayon::prelude::*;
use std::path::PathBuf;

/// Which 1/N of the inputs to process (K in 1..=N).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub k: u64,
    pub n: u64,
}

impl Shard {
    /// "K/N" with 1 <= K <= N.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| format!("not a shard: {s:?} (try 1/4)"))?;
        let k: u64 = k.trim().parse().map_err(|_| format!("not a shard: {s:?} (try 1/4)"))?;
        let n: u64 = n.trim().parse().map_err(|_| format!("not a shard: {s:?} (try 1/4)"))?;
        if n == 0 || k == 0 || k > n {
            return Err(format!("the shard must be K/N with 1 <= K <= N: {s:?}"));
        }
        Ok(Shard { k, n })
    }

    fn takes(&self, key: &str) -> bool {
        layout::fnv1a(key.as_bytes()) % self.n == self.k - 1
    }
}

pub struct Options {
    pub paths: Vec<PathBuf>,
    pub out: PathBuf,
    /// Worker threads; 0 means one per core.
    pub jobs: usize,
    pub stitch: bool,
    pub force: bool,
    pub shard: Option<Shard>,
    pub filter: FlowFilter,
    pub link_rate_bps: Option<f64>,
    /// The records read of each file (capture filter, time window, count).
    pub records: crate::records::Records,
}

impl Options {
    /// The options the results depend on, for `done.jsonl` (a change redoes the inputs).
    fn fingerprint(&self) -> String {
        let mut hosts: Vec<String> = self.filter.hosts.iter().map(|h| h.to_string()).collect();
        hosts.sort();
        let mut ports = self.filter.ports.clone();
        ports.sort_unstable();
        let mut f = format!(
            "bdpscope {}; stitch={}; link_rate={:?}; hosts={:?}; ports={:?}",
            env!("CARGO_PKG_VERSION"),
            self.stitch,
            self.link_rate_bps,
            hosts,
            ports
        );
        // Only when records are chosen: the fingerprint of a plain run stays as it was.
        if let Some(r) = self.records.fingerprint() {
            f.push_str("; ");
            f.push_str(&r);
        }
        f
    }
}

/// How the batch went, for the exit status.
pub struct Outcome {
    pub failed: usize,
}

pub fn run(opts: Options) -> Result<Outcome> {
    std::fs::create_dir_all(opts.out.join(layout::PARTS))
        .with_context(|| format!("{}: cannot create the output folder", opts.out.display()))?;
    let out_canon = std::fs::canonicalize(&opts.out).ok();
    let found = inputs::collect(&opts.paths, out_canon.as_deref());
    let mut units = inputs::units(found, opts.stitch);
    if let Some(shard) = opts.shard {
        units.retain(|u| shard.takes(&u.key));
    }

    let options = opts.fingerprint();
    let schema = tables::flows_schema_fingerprint()?;
    let state = state::State::load(&opts.out, &schema);
    let plan = state.plan(&units, &options, opts.force);
    let todo: Vec<&inputs::Unit> = plan.todo.iter().map(|&i| &units[i]).collect();

    let jobs = if opts.jobs == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        opts.jobs
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .context("cannot start the worker threads")?;
    let total_bytes: u64 = todo.iter().map(|u| u.size()).sum();
    let total_files: usize = todo.iter().map(|u| u.inputs.len()).sum();
    let bar = progress::Progress::new(total_files, total_bytes);
    let ctx = worker::Context {
        filter: opts.filter.clone(),
        records: &opts.records,
        link_rate_bps: opts.link_rate_bps,
        progress: &bar,
    };
    let appender = state.appender()?;
    // Largest first, one unit at a time per worker (par_bridge pulls in order): the long
    // captures start early and the small ones fill the gaps at the end.
    let mut order = todo;
    order.sort_by(|a, b| b.size().cmp(&a.size()).then(a.key.cmp(&b.key)));
    let fresh: Result<Vec<record::Record>> = pool.install(|| {
        order
            .into_iter()
            .par_bridge()
            .map(|unit| {
                let done = worker::process(unit, &ctx, state.part_writer(unit))?;
                let record = state.store(unit, done, &options, &schema)?;
                appender.append(&record)?;
                Ok(record)
            })
            .collect()
    });
    bar.finish();

    let records = state.finish(plan.kept, fresh?)?;
    let mut collector = summary::Collector::default();
    let report = tables::write_all(&opts.out, &records, |df| collector.add(df))?;
    summary::write(&opts.out, &records, &report, &collector)?;

    let failed: Vec<&record::CaptureRow> = records
        .iter()
        .flat_map(|r| r.captures.iter())
        .filter(|c| c.status == record::InputStatus::Failed)
        .collect();
    for c in failed.iter().take(20) {
        eprintln!("bdpscope: {}: {}", c.path, c.error.as_deref().unwrap_or("failed"));
    }
    if failed.len() > 20 {
        eprintln!(
            "bdpscope: ... and {} more failed inputs (see captures.csv)",
            failed.len() - 20
        );
    }
    eprintln!(
        "bdpscope: batch: {total_files} inputs read, {} unchanged; tables: {} inputs ({} ok, {} partial, {} failed, {} skipped), {} flows -> {}",
        plan.unchanged_inputs,
        report.inputs,
        report.ok,
        report.partial,
        report.failed,
        report.skipped,
        report.flows,
        opts.out.display()
    );
    Ok(Outcome { failed: report.failed })
}
