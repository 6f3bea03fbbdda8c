//! `summary.md` and `summary.html`: verdict counts and shares, goodput / RTT / window
//! distributions (HTML/CSS bar charts: the page is self-contained, no scripts; written
//! with maud on the report's stylesheet, `render/page.rs`), the
//! worst flows, every middlebox finding, every flood and scan, the stalls (per kind and
//! the longest: `stalls.rs`), every input that failed and why.
//!
//! Built from the flows as they stream out of the parts (see `tables::write_all`): the
//! summary keeps three numbers per judged flow for the distributions and the 20 worst
//! flows, not the flows themselves; counts, quantiles, bins and the worst are polars'. No
//! clock, no host name: the same tables give the same summary.

use super::record::{CaptureRow, FloodRow, InputStatus, MiddleboxRow, Record};
use super::stalls::{KindCount, LongStall, Stalls};
use super::tables::Report;
use crate::render::page::{chip, document, verdict_class};
use anyhow::{Context, Result};
use bdpscope::summary::{Label, Verdict};
use bdpscope::units::{bits, bytes, pct, secs};
use maud::{html, Markup};
use polars::prelude::*;
use std::fmt::Write as _;
use std::path::Path;

/// How many of the worst flows are listed.
const WORST: usize = 20;

/// A flow judged slow against what its window allowed.
#[derive(Clone, Debug)]
struct Worst {
    capture: String,
    id: u64,
    client: String,
    server: String,
    verdict: Verdict,
    goodput_bps: f64,
    rtt_min_ms: f64,
    max_rwnd_bytes: u64,
    /// max rwnd / min RTT, bits/s: the most the receiver's window allowed.
    bound_bps: f64,
}

impl Worst {
    fn ratio(&self) -> f64 {
        self.goodput_bps / self.bound_bps
    }
}

/// The statistics, kept as polars frames while the parts stream by: per judged flow only
/// the three numbers the distributions need, and the 20 worst flows so far.
#[derive(Default)]
pub struct Collector {
    flows: u64,
    /// Flows per verdict, in the order of `Verdict::ALL`.
    verdicts: [u64; Verdict::ALL.len()],
    /// goodput_bps, rtt_min_ms, max_rwnd_bytes of every judged flow.
    judged: Option<DataFrame>,
    /// The worst flows so far, worst first (see [`Collector::add`]), and as rows.
    worst: Option<DataFrame>,
    worst_rows: Vec<Worst>,
    /// The judged flows' stalls: per kind, and the longest.
    stalls: Stalls,
}

impl Collector {
    /// Takes in one part of the flows table (the columns of `flows_frame`).
    pub fn add(&mut self, df: &DataFrame) -> PolarsResult<()> {
        self.flows += df.height() as u64;
        // A flow without a verdict counts as undetermined.
        let verdict: StringChunked = df
            .column("verdict")?
            .str()?
            .iter()
            .map(|v| Some(v.unwrap_or(Verdict::Undetermined.as_str())))
            .collect();
        let verdict = verdict.with_name("verdict".into());
        let counts = verdict
            .clone()
            .into_series()
            .value_counts(false, false, "flows".into(), false)?;
        let (labels, n) = (counts.column("verdict")?.str()?, counts.column("flows")?.idx()?);
        for (l, n) in labels.iter().zip(n.iter()) {
            if let (Some(l), Some(n)) = (l, n) {
                self.verdicts[verdict_of(l)?.index()] += u64::from(n);
            }
        }
        let judged = df.filter(&verdict.not_equal(Verdict::Undetermined.as_str()))?;
        self.stalls.add(&judged)?;
        let numbers = judged.select(["goodput_bps", "rtt_min_ms", "max_rwnd_bytes"])?;
        append(&mut self.judged, numbers)?;

        // The worst: flows the network limited (not sender-limited) with a known goodput,
        // RTT and window, by goodput against their window bound (max rwnd / min RTT).
        let goodput = judged.column("goodput_bps")?.f64()?;
        let rtt = judged.column("rtt_min_ms")?.f64()?;
        let rwnd = judged.column("max_rwnd_bytes")?.cast(&DataType::Float64)?;
        let rwnd = rwnd.f64()?;
        let bound = &(rwnd * 8.0) / &(rtt / 1e3);
        let keep = judged.column("verdict")?.str()?.not_equal(Label::Sender.as_str())
            & goodput.is_not_null()
            & rtt.gt(0.0)
            & rwnd.gt(0.0);
        let mut candidates = judged.select([
            "capture",
            "id",
            "client_addr",
            "client_port",
            "server_addr",
            "server_port",
            "verdict",
            "goodput_bps",
            "rtt_min_ms",
            "max_rwnd_bytes",
        ])?;
        candidates.with_column((goodput / &bound).with_name("ratio".into()).into_column())?;
        candidates.with_column(bound.with_name("bound_bps".into()).into_column())?;
        append(&mut self.worst, candidates.filter(&keep)?)?;
        if let Some(w) = self.worst.take() {
            // Lowest ratio first; ties by capture and flow id.
            let sorted = w.sort(
                ["ratio", "capture", "id"],
                SortMultipleOptions::default().with_maintain_order(true),
            )?;
            self.worst = Some(sorted.head(Some(WORST)));
        }
        self.worst_rows = self.worst()?;
        Ok(())
    }

    /// One number of the judged flows, as f64.
    fn judged(&self, column: &str) -> PolarsResult<Float64Chunked> {
        match &self.judged {
            Some(df) => Ok(df.column(column)?.cast(&DataType::Float64)?.f64()?.clone()),
            None => Ok(Float64Chunked::from_slice(column.into(), &[])),
        }
    }

    fn worst(&self) -> PolarsResult<Vec<Worst>> {
        let Some(df) = &self.worst else { return Ok(Vec::new()) };
        let text = |c: &str| df.column(c).and_then(|c| c.str().cloned());
        let (capture, verdict) = (text("capture")?, text("verdict")?);
        let (client_addr, server_addr) = (text("client_addr")?, text("server_addr")?);
        let port = |c: &str| df.column(c).and_then(|c| c.u16().cloned());
        let (client_port, server_port) = (port("client_port")?, port("server_port")?);
        let id = df.column("id")?.u64()?;
        let number = |c: &str| df.column(c).and_then(|c| c.f64().cloned());
        let (goodput, rtt, bound) = (number("goodput_bps")?, number("rtt_min_ms")?, number("bound_bps")?);
        let rwnd = df.column("max_rwnd_bytes")?.u64()?;
        (0..df.height())
            .map(|i| {
                Ok(Worst {
                    capture: capture.get(i).unwrap_or("").to_string(),
                    id: id.get(i).unwrap_or(0),
                    client: end(client_addr.get(i), client_port.get(i)),
                    server: end(server_addr.get(i), server_port.get(i)),
                    verdict: verdict_of(verdict.get(i).unwrap_or(""))?,
                    goodput_bps: goodput.get(i).unwrap_or(0.0),
                    rtt_min_ms: rtt.get(i).unwrap_or(0.0),
                    max_rwnd_bytes: rwnd.get(i).unwrap_or(0),
                    bound_bps: bound.get(i).unwrap_or(0.0),
                })
            })
            .collect()
    }
}

/// A verdict of the flows table: its words are the summary's (a word that is not one is a
/// damaged part, not a new verdict).
fn verdict_of(word: &str) -> PolarsResult<Verdict> {
    word.parse()
        .map_err(|e: bdpscope::vocabulary::UnknownWord| PolarsError::ComputeError(e.to_string().into()))
}

/// An end as the analysis writes it: `10.0.0.1:40000`, `[fd00::1]:40000`.
fn end(addr: Option<&str>, port: Option<u16>) -> String {
    let addr = addr.unwrap_or("");
    match (addr.contains(':'), port) {
        (true, Some(p)) => format!("[{addr}]:{p}"),
        (false, Some(p)) => format!("{addr}:{p}"),
        (_, None) => addr.to_string(),
    }
}

fn append(acc: &mut Option<DataFrame>, df: DataFrame) -> PolarsResult<()> {
    match acc {
        Some(a) => {
            a.vstack_mut_owned(df)?;
        }
        None => *acc = Some(df),
    }
    Ok(())
}

/// A histogram over fixed edges: bin 0 is below the first edge, the last at or above the
/// last edge.
struct Histogram {
    title: &'static str,
    unit: fn(f64) -> String,
    edges: Vec<f64>,
    /// The finite values, sorted.
    values: Float64Chunked,
}

impl Histogram {
    fn new(title: &'static str, unit: fn(f64) -> String, edges: Vec<f64>, values: Float64Chunked) -> Histogram {
        let finite = values.filter(&values.is_finite()).unwrap_or_default();
        Histogram {
            title,
            unit,
            edges,
            values: finite.sort(false),
        }
    }

    /// (label, count) of the bins from the first to the last non-empty one.
    fn bins(&self) -> Vec<(String, u64)> {
        // Values below each edge; a bin holds those below its upper edge but not its lower.
        let below: Vec<u64> = self
            .edges
            .iter()
            .map(|&e| self.values.lt(e).sum().unwrap_or(0) as u64)
            .collect();
        let n = self.values.len() as u64;
        let counts: Vec<u64> = (0..=self.edges.len())
            .map(|i| {
                let upper = below.get(i).copied().unwrap_or(n);
                let lower = if i == 0 { 0 } else { below[i - 1] };
                upper - lower
            })
            .collect();
        let u = self.unit;
        let label = |i: usize| match i {
            0 => format!("< {}", u(self.edges[0])),
            i if i == self.edges.len() => format!("≥ {}", u(self.edges[i - 1])),
            i => format!("{} – {}", u(self.edges[i - 1]), u(self.edges[i])),
        };
        let first = counts.iter().position(|&c| c > 0).unwrap_or(0);
        let last = counts.iter().rposition(|&c| c > 0).unwrap_or(0);
        (first..=last).map(|i| (label(i), counts[i])).collect()
    }

    /// The nearest-rank quantile: the smallest value with at least `q` of them at or
    /// below it.
    fn quantile(&self, q: f64) -> Option<f64> {
        self.values.quantile(q, QuantileMethod::Equiprobable).ok().flatten()
    }

    fn line(&self) -> String {
        match (self.quantile(0.1), self.quantile(0.5), self.quantile(0.9)) {
            (Some(a), Some(b), Some(c)) => {
                let u = self.unit;
                format!(
                    "{} flows: p10 {}, median {}, p90 {}",
                    self.values.len(),
                    u(a),
                    u(b),
                    u(c)
                )
            }
            _ => "no judged flows".to_string(),
        }
    }
}

/// 1-2-5 steps from `lo` to `hi`.
fn steps125(lo: f64, hi: f64) -> Vec<f64> {
    let mut v = Vec::new();
    let mut d = lo;
    while d <= hi * 1.0001 {
        for m in [1.0, 2.0, 5.0] {
            if d * m <= hi * 1.0001 {
                v.push(d * m);
            }
        }
        d *= 10.0;
    }
    v
}

// A time given in milliseconds (the tables' unit), as bdpscope::units writes times.
use bdpscope::units::millis as ms;

/// `n` as a share of `of` (1.0 = all).
fn share(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        n as f64 / of as f64
    }
}

/// The summary's content, rendered twice.
struct Model<'a> {
    report: &'a Report,
    packets: u64,
    verdicts: Vec<(Verdict, u64)>,
    flows: u64,
    histograms: Vec<Histogram>,
    worst: &'a [Worst],
    middlebox: Vec<&'a MiddleboxRow>,
    /// Floods and scans, by capture.
    floods: Vec<&'a FloodRow>,
    /// Stall kinds over the judged flows, the most stalls first, and the longest stalls.
    stall_kinds: Vec<(&'a str, &'a KindCount)>,
    longest_stalls: Vec<LongStall>,
    failed: Vec<&'a CaptureRow>,
    partial: Vec<&'a CaptureRow>,
    skipped: Vec<&'a CaptureRow>,
}

fn model<'a>(records: &'a [Record], report: &'a Report, c: &'a Collector) -> PolarsResult<Model<'a>> {
    let mut rows: Vec<&CaptureRow> = records.iter().flat_map(|r| r.captures.iter()).collect();
    rows.sort_by(|a, b| a.path.cmp(&b.path));
    let with = |s: InputStatus| rows.iter().copied().filter(|r| r.status == s).collect::<Vec<_>>();
    let verdicts: Vec<(Verdict, u64)> = Verdict::ALL
        .into_iter()
        .map(|v| (v, c.verdicts[v.index()]))
        .filter(|(_, n)| *n > 0)
        .collect();
    let histograms = vec![
        Histogram::new(
            "Goodput (bulk direction)",
            bits,
            steps125(1e3, 1e10),
            c.judged("goodput_bps")?,
        ),
        Histogram::new("Minimum RTT", ms, steps125(0.1, 5000.0), c.judged("rtt_min_ms")?),
        Histogram::new(
            "Largest advertised receive window",
            bytes,
            (12..=27).map(|p| f64::from(1u32 << p)).collect(),
            c.judged("max_rwnd_bytes")?,
        ),
    ];
    let mut floods: Vec<&FloodRow> = records.iter().flat_map(|r| r.floods.iter()).collect();
    floods.sort_by(|a, b| a.capture.cmp(&b.capture));
    Ok(Model {
        report,
        packets: rows.iter().filter_map(|r| r.packets).sum(),
        verdicts,
        flows: c.flows,
        histograms,
        worst: &c.worst_rows,
        middlebox: records.iter().flat_map(|r| r.middlebox.iter()).collect(),
        floods,
        stall_kinds: c.stalls.kinds(),
        longest_stalls: c.stalls.longest()?,
        failed: with(InputStatus::Failed),
        partial: with(InputStatus::Partial),
        skipped: with(InputStatus::Skipped),
    })
}

/// The inputs that did not go through whole, by kind, with how to say why for each row
/// (the same sections in summary.md and summary.html).
#[allow(clippy::type_complexity)]
fn problem_sections<'m>(m: &'m Model) -> [(&'static str, &'m [&'m CaptureRow], fn(&CaptureRow) -> Option<String>); 3] {
    [
        ("Inputs that failed", &m.failed, |r| r.error.clone()),
        (
            "Inputs cut short or damaged (flows before the problem kept)",
            &m.partial,
            |r| r.error.clone(),
        ),
        ("Skipped inputs (not captures)", &m.skipped, |r| {
            r.skipped_reason.clone()
        }),
    ]
}

/// What the stalls section counts (the same words in summary.md and summary.html).
const STALLS_NOTE: &str = "Over the judged flows (verdict other than undetermined): the stalls of each kind, the flows that had one, the longest; then the flows whose longest stall was the longest, one row per flow.";

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

fn markdown(m: &Model) -> String {
    let mut o = String::new();
    let r = m.report;
    let _ = writeln!(o, "# bdpscope batch summary\n");
    let _ = writeln!(
        o,
        "{} inputs: {} ok, {} cut short or damaged, {} failed, {} skipped (not captures). {} packets, {} flows.\n",
        r.inputs, r.ok, r.partial, r.failed, r.skipped, m.packets, m.flows
    );
    let _ = writeln!(o, "## Verdicts\n\n| verdict | flows | share |\n|---|---:|---:|");
    for (l, n) in &m.verdicts {
        let _ = writeln!(o, "| {l} | {n} | {} |", pct(share(*n, m.flows)));
    }
    let _ = writeln!(
        o,
        "\nDistributions below are over the judged flows (verdict other than undetermined)."
    );
    for h in &m.histograms {
        let _ = writeln!(o, "\n## {}\n\n{}\n", h.title, h.line());
        let bins = h.bins();
        if !h.values.is_empty() {
            let max = bins.iter().map(|b| b.1).max().unwrap_or(1).max(1);
            let _ = writeln!(o, "| range | flows | |\n|---|---:|---|");
            for (label, n) in bins {
                let bar = "█".repeat((n * 30).div_ceil(max) as usize);
                let _ = writeln!(o, "| {label} | {n} | {bar} |");
            }
        }
    }
    let _ = writeln!(
        o,
        "\n## Worst flows: lowest goodput against their window bound\n\nWindow bound = largest advertised receive window / minimum RTT: the most the receiver's window allowed. Sender-limited flows (nothing more to send) are left out.\n"
    );
    if m.worst.is_empty() {
        let _ = writeln!(o, "No network-limited flow with a known window and RTT.");
    } else {
        let _ = writeln!(o, "| capture | flow | client → server | verdict | goodput | window bound | of bound | max rwnd | min RTT |\n|---|---:|---|---|---:|---:|---:|---:|---:|");
        for w in m.worst {
            let _ = writeln!(
                o,
                "| {} | {} | {} → {} | {} | {} | {} | {} | {} | {} |",
                md_cell(&w.capture),
                w.id,
                w.client,
                w.server,
                w.verdict,
                bits(w.goodput_bps),
                bits(w.bound_bps),
                pct(w.ratio()),
                bytes(w.max_rwnd_bytes as f64),
                ms(w.rtt_min_ms)
            );
        }
    }
    let _ = writeln!(o, "\n## Middlebox findings ({})\n", m.middlebox.len());
    if m.middlebox.is_empty() {
        let _ = writeln!(o, "None.");
    } else {
        let _ = writeln!(o, "| capture | flow | client → server | finding | on | confidence | evidence |\n|---|---:|---|---|---|---|---|");
        for x in &m.middlebox {
            let _ = writeln!(
                o,
                "| {} | {} | {} → {} | {} | {} | {} | {} |",
                md_cell(&x.capture),
                x.id,
                x.client,
                x.server,
                x.kind,
                x.direction,
                x.confidence,
                md_cell(&x.evidence)
            );
        }
    }
    let _ = writeln!(o, "\n## Floods and scans ({})\n", m.floods.len());
    if m.floods.is_empty() {
        let _ = writeln!(o, "None.");
    } else {
        let _ = writeln!(
            o,
            "| capture | finding | target | source | attempts |\n|---|---|---|---|---:|"
        );
        for f in &m.floods {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} |",
                md_cell(&f.capture),
                f.kind,
                md_cell(f.target.as_deref().unwrap_or("the whole capture")),
                md_cell(f.source.as_deref().unwrap_or("")),
                f.attempts
            );
        }
    }
    let _ = writeln!(o, "\n## Stalls\n\n{STALLS_NOTE}\n");
    if m.stall_kinds.is_empty() {
        let _ = writeln!(o, "None.");
    } else {
        let _ = writeln!(o, "| stall | stalls | flows | longest |\n|---|---:|---:|---:|");
        for (kind, c) in &m.stall_kinds {
            let _ = writeln!(o, "| {kind} | {} | {} | {} |", c.stalls, c.flows, secs(c.longest_s));
        }
        let _ = writeln!(
            o,
            "\n### Longest stalls\n\n| capture | flow | client → server | stall | duration |\n|---|---:|---|---|---:|"
        );
        for l in &m.longest_stalls {
            let _ = writeln!(
                o,
                "| {} | {} | {} → {} | {} | {} |",
                md_cell(&l.capture),
                l.id,
                end(Some(l.client_addr.as_str()), l.client_port),
                end(Some(l.server_addr.as_str()), l.server_port),
                l.kind,
                secs(l.duration_s)
            );
        }
    }
    for (title, rows, why) in problem_sections(m) {
        let _ = writeln!(o, "\n## {title} ({})\n", rows.len());
        if rows.is_empty() {
            let _ = writeln!(o, "None.");
            continue;
        }
        let _ = writeln!(o, "| input | why |\n|---|---|");
        for r in rows.iter() {
            let _ = writeln!(o, "| {} | {} |", md_cell(&r.path), md_cell(&why(r).unwrap_or_default()));
        }
    }
    o
}

/// A bar `width` percent long (nothing for an empty bin), coloured by `class`.
fn bar(class: &str, width: f64) -> Markup {
    html! {
        @if width > 0.0 {
            div class={ "bar " (class) } style={ "width:" (format!("{width:.1}")) "%" } {}
        }
    }
}

fn html(m: &Model) -> String {
    let r = m.report;
    let body = html! {
        header {
            h1 { "bdpscope batch summary" }
            p.meta {
                (r.inputs) " inputs: " (r.ok) " ok, " (r.partial) " cut short or damaged, " (r.failed) " failed, "
                (r.skipped) " skipped (not captures). " (m.packets) " packets, " (m.flows) " flows."
            }
        }
        main {
            h2 { "Verdicts" }
            table.data.narrow {
                thead { tr { th { "verdict" } th.num { "flows" } th.num { "share" } th {} } }
                tbody {
                    @for (l, n) in &m.verdicts {
                        @let p = share(*n, m.flows);
                        tr { td { (chip(*l)) } td.num { (n) } td.num { (pct(p)) } td.barcell { (bar(&verdict_class(*l), p * 100.0)) } }
                    }
                }
            }
            p.muted { "Distributions below are over the judged flows (verdict other than undetermined)." }
            @for h in &m.histograms {
                h2 { (h.title) }
                p { (h.line()) }
                @if !h.values.is_empty() {
                    @let bins = h.bins();
                    @let max = bins.iter().map(|b| b.1).max().unwrap_or(1).max(1);
                    table.data.narrow {
                        thead { tr { th { "range" } th.num { "flows" } th {} } }
                        tbody {
                            @for (label, n) in &bins {
                                tr { td { (label) } td.num { (n) } td.barcell { (bar("", *n as f64 * 100.0 / max as f64)) } }
                            }
                        }
                    }
                }
            }
            h2 #worst { "Worst flows: lowest goodput against their window bound" }
            p.muted { "Window bound = largest advertised receive window / minimum RTT: the most the receiver's window allowed. Sender-limited flows (nothing more to send) are left out." }
            @if m.worst.is_empty() {
                p { "No network-limited flow with a known window and RTT." }
            } @else {
                div.wide { table.data {
                    thead { tr {
                        th { "capture" } th.num { "flow" } th { "client → server" } th { "verdict" } th.num { "goodput" }
                        th.num { "window bound" } th.num { "of bound" } th.num { "max rwnd" } th.num { "min RTT" }
                    } }
                    tbody {
                        @for w in m.worst {
                            tr {
                                td.wrap { code { (w.capture) } } td.num { (w.id) } td { (w.client) " → " (w.server) }
                                td { (chip(w.verdict)) } td.num { (bits(w.goodput_bps)) } td.num { (bits(w.bound_bps)) }
                                td.num { (pct(w.ratio())) } td.num { (bytes(w.max_rwnd_bytes as f64)) }
                                td.num { (ms(w.rtt_min_ms)) }
                            }
                        }
                    }
                } }
            }
            h2 #middlebox { "Middlebox findings (" (m.middlebox.len()) ")" }
            @if m.middlebox.is_empty() {
                p { "None." }
            } @else {
                div.wide { table.data {
                    thead { tr {
                        th { "capture" } th.num { "flow" } th { "client → server" } th { "finding" } th { "on" }
                        th { "confidence" } th { "evidence" }
                    } }
                    tbody {
                        @for x in &m.middlebox {
                            tr {
                                td.wrap { code { (x.capture) } } td.num { (x.id) } td { (x.client) " → " (x.server) }
                                td { (x.kind) } td { (x.direction) } td { (x.confidence) } td.long { (x.evidence) }
                            }
                        }
                    }
                } }
            }
            h2 #floods { "Floods and scans (" (m.floods.len()) ")" }
            @if m.floods.is_empty() {
                p { "None." }
            } @else {
                div.wide { table.data {
                    thead { tr {
                        th { "capture" } th { "finding" } th { "target" } th { "source" } th.num { "attempts" }
                    } }
                    tbody {
                        @for f in &m.floods {
                            tr {
                                td.wrap { code { (f.capture) } } td { (f.kind) }
                                td { (f.target.as_deref().unwrap_or("the whole capture")) }
                                td { (f.source.as_deref().unwrap_or("")) } td.num { (f.attempts) }
                            }
                        }
                    }
                } }
            }
            h2 #stalls { "Stalls" }
            p.muted { (STALLS_NOTE) }
            @if m.stall_kinds.is_empty() {
                p { "None." }
            } @else {
                table.data.narrow {
                    thead { tr { th { "stall" } th.num { "stalls" } th.num { "flows" } th.num { "longest" } } }
                    tbody {
                        @for (kind, c) in &m.stall_kinds {
                            tr { td { (kind) } td.num { (c.stalls) } td.num { (c.flows) } td.num { (secs(c.longest_s)) } }
                        }
                    }
                }
                h3 { "Longest stalls" }
                div.wide { table.data {
                    thead { tr {
                        th { "capture" } th.num { "flow" } th { "client → server" } th { "stall" } th.num { "duration" }
                    } }
                    tbody {
                        @for l in &m.longest_stalls {
                            tr {
                                td.wrap { code { (l.capture) } } td.num { (l.id) }
                                td { (end(Some(l.client_addr.as_str()), l.client_port)) " → " (end(Some(l.server_addr.as_str()), l.server_port)) }
                                td { (l.kind) } td.num { (secs(l.duration_s)) }
                            }
                        }
                    }
                } }
            }
            @for (title, rows, why) in problem_sections(m) {
                h2 { (title) " (" (rows.len()) ")" }
                @if rows.is_empty() {
                    p { "None." }
                } @else {
                    table.data {
                        thead { tr { th { "input" } th { "why" } } }
                        tbody {
                            @for r in rows.iter() {
                                tr { td.wrap { code { (r.path) } } td.long { (why(r).unwrap_or_default()) } }
                            }
                        }
                    }
                }
            }
        }
    };
    document("bdpscope batch summary", html! {}, body).into_string()
}

fn write_file(out: &Path, name: &str, text: &str) -> Result<()> {
    let tmp = out.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, text).with_context(|| format!("{}: cannot write", tmp.display()))?;
    std::fs::rename(&tmp, out.join(name)).with_context(|| format!("{}: cannot write", out.join(name).display()))
}

pub fn write(out: &Path, records: &[Record], report: &Report, collector: &Collector) -> Result<()> {
    let m = model(records, report, collector)?;
    write_file(out, "summary.md", &markdown(&m))?;
    write_file(out, "summary.html", &html(&m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_bin_and_quantile() {
        let h = Histogram::new(
            "x",
            ms,
            vec![1.0, 10.0, 100.0],
            Float64Chunked::from_slice("x".into(), &[0.5, 5.0, 5.0, 50.0, 500.0, f64::NAN]),
        );
        let bins = h.bins();
        assert_eq!(bins.iter().map(|b| b.1).collect::<Vec<_>>(), [1, 2, 1, 1]);
        assert_eq!(bins[0].0, "< 1.00 ms");
        assert_eq!(bins[3].0, "≥ 100 ms");
        assert_eq!(h.quantile(0.5), Some(5.0));
        assert_eq!(steps125(1.0, 100.0), [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]);
    }

    /// capture, id, verdict, goodput_bps, rtt_min_ms, max_rwnd_bytes
    type Row<'a> = (&'a str, u64, Option<&'a str>, Option<f64>, Option<f64>, Option<u64>);

    fn part(rows: &[Row]) -> DataFrame {
        let n = rows.len();
        // No stalls (the stalls overview has its own tests, in stalls.rs).
        let mut kinds = ListStringChunkedBuilder::new("stalls".into(), n, 0);
        let mut secs =
            ListPrimitiveChunkedBuilder::<Float64Type>::new("stall_durations_s".into(), n, 0, DataType::Float64);
        for _ in rows {
            kinds.append_values_iter(std::iter::empty::<&str>());
            secs.append_slice(&[]);
        }
        DataFrame::new(
            n,
            vec![
                Column::new("capture".into(), rows.iter().map(|r| r.0).collect::<Vec<_>>()),
                Column::new("id".into(), rows.iter().map(|r| r.1).collect::<Vec<_>>()),
                Column::new("client_addr".into(), vec!["10.0.0.1"; n]),
                Column::new("client_port".into(), vec![1u16; n]),
                Column::new("server_addr".into(), vec!["10.0.0.2"; n]),
                Column::new("server_port".into(), vec![80u16; n]),
                Column::new("verdict".into(), rows.iter().map(|r| r.2).collect::<Vec<_>>()),
                Column::new("goodput_bps".into(), rows.iter().map(|r| r.3).collect::<Vec<_>>()),
                Column::new("rtt_min_ms".into(), rows.iter().map(|r| r.4).collect::<Vec<_>>()),
                Column::new("max_rwnd_bytes".into(), rows.iter().map(|r| r.5).collect::<Vec<_>>()),
                kinds.finish().into_series().into_column(),
                secs.finish().into_series().into_column(),
            ],
        )
        .unwrap()
    }

    #[test]
    fn the_collector_counts_verdicts_and_keeps_the_worst_across_parts() {
        let mut c = Collector::default();
        let rwl = Some("receiver-window-limited");
        // Window bound 64 KiB / 10 ms = 52.4 Mbit/s.
        c.add(&part(&[
            ("a", 0, rwl, Some(26.2e6), Some(10.0), Some(65536)),
            ("a", 1, Some("sender-limited"), Some(1e3), Some(10.0), Some(65536)),
            ("a", 2, None, None, None, None),
            ("a", 3, Some("undetermined"), Some(5.0), Some(1.0), Some(1)),
        ]))
        .unwrap();
        c.add(&part(&[
            ("b", 0, rwl, Some(5.24e6), Some(10.0), Some(65536)),
            ("b", 1, rwl, Some(5.24e6), Some(0.0), Some(65536)),
            ("b", 2, Some("cwnd-limited"), None, Some(10.0), Some(65536)),
        ]))
        .unwrap();
        assert_eq!(c.flows, 7);
        assert_eq!(
            c.verdicts,
            [3, 1, 0, 1, 2],
            "receiver window, cwnd, bottleneck, sender, undetermined"
        );
        // Judged flows only; a missing number is left out of its distribution.
        assert_eq!(c.judged("goodput_bps").unwrap().null_count(), 1);
        assert_eq!(c.judged("rtt_min_ms").unwrap().len(), 5);
        // Worst first, sender-limited and unknown RTT or goodput left out.
        let worst: Vec<(&str, u64)> = c.worst_rows.iter().map(|w| (w.capture.as_str(), w.id)).collect();
        assert_eq!(worst, [("b", 0), ("a", 0)]);
        assert!(
            (c.worst_rows[0].ratio() - 0.1).abs() < 1e-3,
            "{}",
            c.worst_rows[0].ratio()
        );
    }

    #[test]
    fn times_are_written_as_everywhere_else() {
        assert_eq!(ms(12.0), "12.0 ms");
        assert_eq!(ms(150.0), "150 ms");
        assert_eq!(bits(2.5e6), "2.50 Mbit/s");
    }
}
