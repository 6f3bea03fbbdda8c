//! The HTML report: one self-contained page (the stylesheet, the script and uPlot, the
//! charting library, all inline; the graphs' data as JSON in the page). Nothing is
//! fetched when it is viewed, so it can be mailed, archived or opened offline.
//!
//! The page understands a query string, so a link can open it sorted or filtered:
//! `index.html?sort=goodput&dir=desc&verdict=cwnd-limited,bottleneck-limited`.
//!
//! Each flow's four graphs (flight vs BDP, RTT, goodput, time-sequence) zoom together:
//! drag across one to zoom the time axis of all four, double-click to go back; the
//! values under the cursor show beside it (see assets/html/report.js).

use super::charts::{ChartData, Swatch};
use super::page::{chip, document, verdict_class};
use crate::plot::Kind;
use bdpscope::capture::Compression;
use bdpscope::endpoint::Dir;
use bdpscope::summary::{CaptureSummary, FlowSummary, Label, Verdict};
use bdpscope::units::{bits, bytes, pct, secs};
use maud::{html, Markup, PreEscaped};
use std::collections::HashMap;
use std::io::Write;

/// uPlot (MIT; assets/uplot/README.md says where it comes from).
const UPLOT_JS: &str = include_str!("../../assets/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../../assets/uplot/uPlot.min.css");
/// The page's own script: the flow table, and the graphs.
const SCRIPT: &str = include_str!("../../assets/html/report.js");

/// One flow's graphs: their data, and each graph's legend.
pub struct Charts {
    pub data: ChartData,
    pub legends: Vec<(Kind, Vec<(Swatch, String)>)>,
}

pub struct Page<'a> {
    pub title: &'a str,
    pub captures: &'a [CaptureSummary],
    pub flows: &'a [FlowSummary],
    /// By flow: its capture's path and its id (ids are per capture).
    pub charts: &'a HashMap<(String, u64), Charts>,
    /// Inputs that could not be read, with the reason.
    pub failed: &'a [String],
    /// Why some flows have no graphs (e.g. the limit), shown once.
    pub plot_note: Option<String>,
}

/// A time in ms (given in ms), or a dash.
fn ms(v: Option<f64>) -> String {
    v.map_or("–".into(), |m| bdpscope::units::ms(m / 1000.0))
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("–".into(), |x| x.to_string())
}

fn yes_no(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "?",
    }
}

fn bulk_bytes(f: &FlowSummary) -> u64 {
    match f.bulk_direction {
        Dir::C2S => f.bytes.c2s,
        Dir::S2C => f.bytes.s2c,
    }
}

fn arrow(f: &FlowSummary) -> &'static str {
    match f.bulk_direction {
        Dir::C2S => "→",
        Dir::S2C => "←",
    }
}

/// Text that may break after '/' and ':' (paths, IPv6 addresses) and nowhere else.
fn breakable(s: &str) -> Markup {
    let parts: Vec<&str> = s.split_inclusive(['/', ':']).collect();
    html! {
        @for (i, part) in parts.iter().enumerate() {
            @if i > 0 { wbr; }
            (part)
        }
    }
}

/// An address for the table: IPv6 ones may break after a ':', IPv4 ones stay whole.
fn address(a: &str) -> Markup {
    if a.starts_with('[') {
        breakable(a)
    } else {
        html! { (a) }
    }
}

fn short_path(p: &str) -> String {
    // The last two components say most ("rcvbuf_64k/client.pcap.gz").
    let parts: Vec<&str> = p.rsplitn(3, '/').collect();
    match parts.len() {
        3 => format!("{}/{}", parts[1], parts[0]),
        _ => p.to_string(),
    }
}

/// The key a flow's charts go by in [`Page::charts`].
pub fn chart_key(f: &FlowSummary) -> (String, u64) {
    (f.capture.clone(), f.id)
}

impl Page<'_> {
    fn charts_of(&self, f: &FlowSummary) -> Option<&Charts> {
        self.charts.get(&chart_key(f))
    }

    /// The id of a flow's section, unique in the page: `flow-ID` for one capture (ids are
    /// per capture), `flow-N-ID` with the capture's place N (from 1) for several.
    fn anchor(&self, f: &FlowSummary) -> String {
        match self.captures.iter().position(|c| c.path == f.capture) {
            Some(n) if self.captures.len() > 1 => format!("flow-{}-{}", n + 1, f.id),
            _ => format!("flow-{}", f.id),
        }
    }
}

pub fn write<W: Write>(out: &mut W, page: &Page<'_>) -> std::io::Result<()> {
    out.write_all(render(page).into_string().as_bytes())
}

fn render(p: &Page<'_>) -> Markup {
    let packets: u64 = p.captures.iter().map(|c| c.packets).sum();
    let version = env!("CARGO_PKG_VERSION");
    let head = html! { style { (PreEscaped(UPLOT_CSS)) } };
    let body = html! {
        header {
            h1 { (p.title) }
            p.meta {
                (p.captures.len()) " capture(s), " (packets) " packets, " (p.flows.len()) " flow(s) · bdpscope "
                (version) " · what limited each TCP flow: the receiver's window, congestion control, the bottleneck or the sender"
            }
        }
        main {
            (captures(p))
            (flow_table(p))
            @for f in p.flows.iter().filter(|f| has_section(f, p)) {
                (flow_section(f, p.charts_of(f), &p.anchor(f)))
            }
        }
        footer {
            "Generated by bdpscope " (version) ". Times on the graphs are seconds since each flow's first packet; bytes in KiB/MiB (1024-based), rates in bit/s (1000-based). "
            "Graphs drawn with uPlot (MIT), included in this page."
        }
        script { (PreEscaped(UPLOT_JS)) }
        script { (PreEscaped(SCRIPT)) }
    };
    document(p.title, head, body)
}

fn captures(p: &Page<'_>) -> Markup {
    html! {
        section #captures {
            h2 { "Captures" }
            @for f in p.failed { p.warn { "not read: " (f) } }
            table.data {
                thead { tr {
                    th { "capture" } th { "format" } th.num { "packets" } th.num { "TCP segments" }
                    th.num { "flows" } th.num { "span" } th { "link types" } th { "not TCP / warnings" }
                } }
                tbody {
                    @for c in p.captures {
                        @let span = match (c.first_ts, c.last_ts) {
                            (Some(a), Some(b)) => secs(b - a),
                            _ => "–".into(),
                        };
                        @let format = match c.compression {
                            Compression::None => c.format.to_string(),
                            z => format!("{} + {z}", c.format),
                        };
                        tr {
                            td title=(c.path) { (short_path(&c.path)) }
                            td { (format) }
                            td.num { (c.packets) }
                            td.num { (c.tcp_segments) }
                            td.num { (c.flows) }
                            td.num { (span) }
                            td { (c.link_types.join(", ")) }
                            td {
                                @let copies = c.capture_duplicates > 0;
                                @if c.skipped.is_empty() && c.warnings.is_empty() && !copies { "–" }
                                // TCP records no flow counts, as the text header says them.
                                @if copies { (c.capture_duplicates) " capture duplicates set aside" }
                                @for (i, s) in c.skipped.iter().take(4).enumerate() {
                                    @if i > 0 || copies { br; }
                                    (s.records) " × " (s.reason)
                                }
                                @for (i, w) in c.warnings.iter().enumerate() {
                                    @if i > 0 || !c.skipped.is_empty() || copies { br; }
                                    span.warn { (w) }
                                }
                            }
                        }
                    }
                }
            }
            (floods(p.captures))
        }
    }
}

/// Floods and scans of the captures (`CaptureSummary::floods`), with the attempts they
/// summarise and any connections the memory budget ended early; nothing when there are
/// none.
fn floods(captures: &[CaptureSummary]) -> Markup {
    let any = captures
        .iter()
        .any(|c| !c.floods.is_empty() || c.connections.evicted_with_data + c.connections.evicted_without_data > 0);
    html! {
        @if any {
            h3 #floods { "Floods and scans" }
            table.data {
                thead { tr {
                    th { "capture" } th { "finding" } th { "target" } th { "source" } th.num { "attempts" }
                    th.num { "answered" } th.num { "completed" } th.num { "peak SYN/s" } th { "figures" } th { "rule" }
                } }
                tbody {
                    @for c in captures {
                        @for f in &c.floods {
                            tr {
                                td { (short_path(&c.path)) }
                                td { (f.kind.as_str()) }
                                td { (f.target.as_deref().unwrap_or("–")) }
                                td { (f.source.as_deref().unwrap_or("–")) }
                                td.num { (f.attempts) }
                                td.num { (pct(f.answered_share)) }
                                td.num { (pct(f.completed_share)) }
                                td.num { (f.peak.as_ref().map_or("–".into(), |p| p.syns.to_string())) }
                                td { (f.evidence) }
                                td.muted { (f.rule) }
                            }
                        }
                    }
                }
            }
            @for c in captures {
                @let (a, k) = (&c.attempts, &c.connections);
                @if a.folded > 0 {
                    p.muted {
                        (short_path(&c.path)) ": " (a.folded) " connection attempts without data are summarised here, not listed as flows ("
                        (a.unanswered) " unanswered, " (a.refused) " refused, " (a.half_open) " half-open; --all lists them)."
                    }
                }
                @if k.evicted_with_data + k.evicted_without_data > 0 {
                    p.warn {
                        (short_path(&c.path)) ": the memory for live connections was full: " (k.evicted_without_data)
                        " connections without data and " (k.evicted_with_data) " with data ended early."
                    }
                }
            }
        }
    }
}

/// (key, heading, numeric) of the flow table's columns.
const COLUMNS: [(&str, &str, bool); 15] = [
    ("id", "id", true),
    ("capture", "capture", false),
    ("client", "client", false),
    ("server", "server", false),
    ("bytes", "data", true),
    ("duration", "duration", true),
    ("goodput", "goodput", true),
    ("rtt", "min RTT", true),
    ("flight", "max flight here", true),
    ("rwnd", "max rwnd", true),
    ("bdp", "BDP", true),
    ("bottleneck", "bottleneck", true),
    ("retrans", "retrans.", true),
    ("stalls", "stalls", false),
    ("verdict", "verdict", false),
];

/// The kinds of a flow's stalls, each once, in the order they first came ("loss-episode,
/// reset"): which flows stalled, and how, read from the table before their sections.
fn stall_kinds(f: &FlowSummary) -> String {
    let mut kinds: Vec<&str> = Vec::new();
    for s in &f.stalls {
        if !kinds.contains(&s.kind.as_str()) {
            kinds.push(s.kind.as_str());
        }
    }
    kinds.join(", ")
}

/// A cell: the value it sorts by (data-v) and what it shows.
fn cell(f: &FlowSummary, key: &str, link: Option<&str>) -> (String, Markup) {
    let dash = || html! { "–" };
    match key {
        "id" => match link {
            Some(anchor) => (f.id.to_string(), html! { a href={ "#" (anchor) } { (f.id) } }),
            None => (f.id.to_string(), html! { (f.id) }),
        },
        "capture" => (f.capture.clone(), breakable(&short_path(&f.capture))),
        "client" => (f.client.clone(), address(&f.client)),
        "server" => (f.server.clone(), address(&f.server)),
        "bytes" => {
            let b = bulk_bytes(f);
            (b.to_string(), html! { (bytes(b as f64)) " " (arrow(f)) })
        }
        "duration" => (format!("{:.6}", f.duration_s), html! { (secs(f.duration_s)) }),
        "goodput" => (format!("{:.1}", f.goodput_bps), html! { (super::goodput(f)) }),
        "rtt" => (
            f.rtt_ms.min.map_or(String::new(), |m| format!("{m:.3}")),
            html! { (ms(f.rtt_ms.min)) },
        ),
        "flight" => (
            f.max_flight_bytes.map_or(String::new(), |b| b.to_string()),
            f.max_flight_bytes.map_or_else(
                || html! { span title=(super::flight_not_followed(f)) { "–" } },
                |b| html! { (bytes(b as f64)) },
            ),
        ),
        "rwnd" => (
            f.max_rwnd_bytes.map_or(String::new(), |b| b.to_string()),
            f.max_rwnd_bytes.map_or_else(dash, |b| html! { (bytes(b as f64)) }),
        ),
        "bdp" => (
            f.bdp_bytes.map_or(String::new(), |b| b.to_string()),
            f.bdp_bytes.map_or_else(dash, |b| html! { (bytes(b as f64)) }),
        ),
        "bottleneck" => (
            f.bottleneck_bps.map_or(String::new(), |b| format!("{b:.1}")),
            f.bottleneck_bps.map_or_else(dash, |b| html! { (bits(b)) }),
        ),
        "retrans" => (
            f.retransmitted_segments.to_string(),
            html! { (f.retransmitted_segments) },
        ),
        "stalls" => {
            let kinds = stall_kinds(f);
            let shown = if kinds.is_empty() {
                html! { "–" }
            } else {
                html! { (kinds) }
            };
            (kinds, shown)
        }
        "verdict" => (f.verdict.to_string(), chip(f.verdict)),
        _ => (String::new(), html! {}),
    }
}

fn flow_table(p: &Page<'_>) -> Markup {
    let flows = p.flows;
    let multi = p.captures.len() > 1;
    let cols: Vec<&(&str, &str, bool)> = COLUMNS.iter().filter(|c| multi || c.0 != "capture").collect();
    let bare = flows.iter().filter(|f| !has_section(f, p)).count();
    html! {
        section #flows {
            h2 { "Flows" }
            div.filters role="group" aria-label="filter by verdict" {
                span { "verdict:" }
                @for v in Verdict::ALL {
                    @let n = flows.iter().filter(|f| f.verdict == v).count();
                    @if n > 0 {
                        label class={ "chip " (verdict_class(v)) } {
                            input type="checkbox" data-verdict=(v.as_str()) checked;
                            " " (v.as_str()) " (" (n) ")"
                        }
                    }
                }
                span #shown .muted {}
            }
            table #flow-table .data.sortable {
                thead { tr {
                    @for (key, label, num) in &cols {
                        th data-key=(key) data-type=(if *num { "num" } else { "str" }) class=[num.then_some("num")]
                            tabindex="0" aria-sort="none" { (label) }
                    }
                } }
                tbody {
                    @for f in flows {
                        tr data-verdict=(f.verdict.as_str()) {
                            @for (key, _, num) in &cols {
                                @let link = has_section(f, p).then(|| p.anchor(f));
                                @let (v, shown) = cell(f, key, link.as_deref());
                                @let class = if *num { Some("num") } else if matches!(*key, "capture" | "client" | "server" | "stalls") { Some("wrap") } else { None };
                                td data-v=(v) class=[class] { (shown) }
                            }
                        }
                    }
                }
            }
            @if let Some(n) = &p.plot_note { p.muted { (n) } }
            @if bare > 0 {
                p.muted { (bare) " flow(s) without payload, stalls or a verdict (attempts and handshakes that led nowhere): in the table only." }
            }
        }
    }
}

/// Flows that carried payload get a section of their own, and so does every flow the text
/// view shows without `--all` (a refused or retried attempt: its stalls and notes are its
/// findings); the others (handshakes that led nowhere) only a row.
fn has_section(f: &FlowSummary, p: &Page<'_>) -> bool {
    f.bytes.c2s + f.bytes.s2c > 0 || p.charts_of(f).is_some() || super::shown_by_default(f)
}

fn list(title: &str, items: &[String]) -> Markup {
    html! {
        @if !items.is_empty() {
            h3 { (title) }
            ul { @for i in items { li { (i) } } }
        }
    }
}

/// A flow's stalls and failures as the text view says them: each kind and its sentence, in
/// time order. Placed before the evidence, which refers to them ("see the stalls").
fn stalls(f: &FlowSummary) -> Markup {
    html! {
        @if !f.stalls.is_empty() {
            h3 { "Stalls" }
            ul.stalls { @for s in &f.stalls { li { b { (s.kind.as_str()) } ": " (s.sentence) } } }
        }
    }
}

fn flow_section(f: &FlowSummary, charts: Option<&Charts>, anchor: &str) -> Markup {
    let r = &f.rtt_ms;
    let hs = &f.handshake;
    html! {
        section.flow id=(anchor) data-verdict=(f.verdict.as_str()) {
            h2 { "flow " (f.id) " " span.ends { (f.client) " " (arrow(f)) " " (f.server) } " " (chip(f.verdict)) }
            p.muted { (f.capture) " · " (secs(f.duration_s)) " · " (f.packets) " packets · " (f.end_state.as_str()) }
            @if let Some(l) = f.limits {
                div.limits title="share of the bulk transfer's time" {
                    @for (v, frac, short) in [
                        (Label::ReceiverWindow, l.receiver_window, "receiver window"),
                        (Label::Cwnd, l.cwnd, "cwnd"),
                        (Label::Bottleneck, l.bottleneck, "bottleneck"),
                        (Label::Sender, l.sender, "sender"),
                    ] {
                        @if frac > 0.0 {
                            span class=(verdict_class(v.into())) style={ "width:" (format!("{:.2}", frac * 100.0)) "%" }
                                title={ (short) " " (pct(frac)) } {
                                @if frac >= 0.08 { (short) " " (pct(frac)) }
                            }
                        }
                    }
                }
            }
            dl.facts {
                div { dt { "data" } dd { "c2s " (bytes(f.bytes.c2s as f64)) ", s2c " (bytes(f.bytes.s2c as f64)) " (" (f.bulk_direction.as_str()) " bulk)" } }
                div { dt { "goodput" } dd { (super::goodput(f)) } }
                div { dt { "RTT" } dd {
                    @if let Some(bound) = super::rtt_lower_bound(f) {
                        (bound)
                    } @else {
                        "min " (ms(r.min)) ", median " (ms(r.median)) ", p95 " (ms(r.p95)) ", max " (ms(r.max))
                        " (" (super::samples(r.samples)) "; capture near " (r.vantage.as_str()) ")"
                    }
                } }
                div { dt { "window" } dd {
                    "max flight " (super::max_flight(f)) ", max rwnd "
                    (f.max_rwnd_bytes.map_or("unknown".into(), |b| bytes(b as f64)))
                } }
                @if let Some(b) = f.bottleneck_bps {
                    div { dt { "bottleneck" } dd {
                        (bits(b)) " (" (super::bottleneck_how(f)) "), BDP "
                        (f.bdp_bytes.map_or("–".into(), |b| bytes(b as f64)))
                    } }
                }
                div { dt { "retransmissions" } dd { (f.retransmitted_segments) " segments" } }
                @let reordered = f.dir(f.bulk_direction).reordered_segments;
                @if reordered > 0 {
                    div { dt { "reordered" } dd { (reordered) " segments (arrived late, never re-sent)" } }
                }
                @if let Some(ecn) = super::ecn_counts(f) {
                    div { dt { "ECN" } dd { (ecn) } }
                }
            }
            (stalls(f))
            (list("Evidence", &f.evidence))
            (list("Advice", &f.advice))
            h3 { "Handshake" }
            @if hs.seen {
                table.data.narrow {
                    thead { tr { th {} th { "window scale" } th { "MSS" } th { "SACK permitted" } th { "timestamps" } th { "ECN" } } }
                    tbody {
                        tr { th { "client (SYN)" } td { (opt(hs.client_wscale)) } td { (opt(hs.client_mss)) }
                             td { (yes_no(hs.client_sack_permitted)) } td { (yes_no(hs.client_timestamps)) } td { (opt(hs.client_ecn)) } }
                        tr { th { "server (SYN/ACK)" } td { (opt(hs.server_wscale)) } td { (opt(hs.server_mss)) }
                             td { (yes_no(hs.server_sack_permitted)) } td { (yes_no(hs.server_timestamps)) } td { (opt(hs.server_ecn)) } }
                    }
                }
                p { "window scaling " (hs.window_scaling.as_str()) ", ECN " (hs.ecn.as_str())
                    @if hs.syn_retransmissions > 0 { "; " (hs.syn_retransmissions) " SYN retransmission(s)" } }
            } @else if hs.client_sack_permitted.is_some() || hs.server_sack_permitted.is_some() {
                table.data.narrow {
                    thead { tr { th {} th { "window scale" } th { "MSS" } th { "SACK permitted" } th { "timestamps" } } }
                    tbody {
                        @if hs.client_sack_permitted.is_some() {
                            tr { th { "client (SYN)" } td { (opt(hs.client_wscale)) } td { (opt(hs.client_mss)) }
                                 td { (yes_no(hs.client_sack_permitted)) } td { (yes_no(hs.client_timestamps)) } }
                        } @else {
                            tr { th { "server (SYN/ACK)" } td { (opt(hs.server_wscale)) } td { (opt(hs.server_mss)) }
                                 td { (yes_no(hs.server_sack_permitted)) } td { (yes_no(hs.server_timestamps)) } }
                        }
                    }
                }
                p { "only one handshake segment is in the capture; window scaling " (hs.window_scaling.as_str()) }
            } @else if let Some(i) = &hs.inferred {
                p { "not in the capture; window scale inferred client " (opt(i.client_wscale)) " / server "
                    (opt(i.server_wscale)) " (" (i.confidence.as_str()) "): " (i.evidence) }
            } @else {
                p { "not in the capture (window scale unknown)" }
            }
            h3 { "Middleboxes" }
            @if f.middlebox.is_empty() {
                p.muted { "no sign of option rewriting" }
            } @else {
                ul { @for m in &f.middlebox {
                    li { b { (m.kind.as_str()) } " on " (m.direction.as_str()) " (" (m.confidence.as_str()) "): " (m.evidence) }
                } }
            }
            (list("Notes", &f.notes))
            @match charts {
                Some(c) => (graphs(f, c)),
                None => p.muted { "no graphs for this flow" },
            }
            p.top { a href="#flows" { "↑ flows" } }
        }
    }
}

fn graphs(f: &FlowSummary, c: &Charts) -> Markup {
    html! {
        details.plots open {
            summary { "Graphs" }
            p.zoomhint { "Drag across a graph to zoom into that time (all four follow); double-click to zoom out. Values under the cursor show beside it." }
            @for (kind, items) in &c.legends {
                figure.chart data-kind=(kind.name()) {
                    h4 { (kind.title()) " · flow " (f.id) ": " (f.client) " " (arrow(f)) " " (f.server) " · " (f.verdict.as_str()) }
                    ul.legend {
                        @for (sw, label) in items {
                            li { span class={ "sw " (sw.class()) } {} (label) }
                        }
                    }
                    div.plot {}
                    figcaption { (kind.reading()) }
                }
            }
            script type="application/json" .flow-data { (PreEscaped(c.data.to_script_json())) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first flow of a fixture: real summaries, to vary.
    fn fixture_flow(path: &str) -> FlowSummary {
        let file = std::fs::File::open(path).unwrap();
        let mut reader = bdpscope::capture::CaptureReader::new(Box::new(file)).unwrap();
        let (_, flows, _) =
            bdpscope::analysis::analyze_reader(&mut reader, Default::default(), bdpscope::observe::NoObserver);
        flows.into_iter().next().expect("a flow")
    }

    #[test]
    fn a_flows_stalls_are_said_before_its_evidence_and_named_in_its_row() {
        let mut f = fixture_flow("fixtures/loss_cubic/server.pcap.gz");
        assert!(!f.stalls.is_empty(), "the fixture has a loss episode");
        f.stalls.push(f.stalls[0].clone());
        let s = flow_section(&f, None, "flow-0").into_string();
        let at = s.find("<h3>Stalls</h3>").expect("a Stalls heading");
        assert!(at < s.find("<h3>Evidence</h3>").unwrap());
        for st in &f.stalls {
            let item = html! { li { b { (st.kind.as_str()) } ": " (st.sentence) } }.into_string();
            assert!(s.contains(&item), "{item}");
        }
        // The table names each kind once.
        assert_eq!(stall_kinds(&f), "loss-episode");
        f.stalls.clear();
        assert!(!flow_section(&f, None, "flow-0").into_string().contains("Stalls"));
        assert_eq!(stall_kinds(&f), "");
    }

    #[test]
    fn one_loop_measured_is_said_as_a_lower_bound_not_dashes() {
        let mut f = fixture_flow("fixtures/rcvbuf_16k/client.pcap.gz");
        let r = &mut f.rtt_ms;
        (r.min, r.median, r.p95, r.max) = (None, None, None, None);
        (r.via_client_min, r.via_server_min) = (None, Some(21.6));
        let s = flow_section(&f, None, "flow-0").into_string();
        assert!(
            s.contains("end to end unknown: only the loop through the server was measured, min 21.6 ms (a lower bound on the RTT)"),
            "{s}"
        );
        assert!(!s.contains("min –"));
    }

    #[test]
    fn breakable_text_breaks_only_after_separators() {
        assert_eq!(breakable("[fd00::1]:80").into_string(), "[fd00:<wbr>:<wbr>1]:<wbr>80");
        assert_eq!(address("10.0.0.1:80").into_string(), "10.0.0.1:80");
        assert_eq!(short_path("a/b/c/d.pcap"), "c/d.pcap");
        assert_eq!(ms(Some(40.71)), "40.7 ms");
    }
}
