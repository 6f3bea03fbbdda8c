//! The HTML report: one self-contained page (inline CSS, inline SVG plots, a little
//! vanilla script for sorting and filtering the flow table). Nothing is fetched when it
//! is viewed, so it can be mailed, archived or opened offline.
//!
//! The page understands a query string, so a link can open it sorted or filtered:
//! `index.html?sort=goodput&dir=desc&verdict=cwnd-limited,bottleneck-limited`.

use crate::plot::style::{fmt_bytes, fmt_rate};
use bdpscope::summary::{CaptureSummary, FlowSummary};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;

/// The plots of one flow: (caption: how to read it, SVG document).
pub type Plots = Vec<(&'static str, String)>;

pub struct Page<'a> {
    pub title: &'a str,
    pub captures: &'a [CaptureSummary],
    pub flows: &'a [FlowSummary],
    pub plots: &'a HashMap<u64, Plots>,
    /// Inputs that could not be read, with the reason.
    pub failed: &'a [String],
    /// Why some flows have no plots (e.g. the plot limit), shown once.
    pub plot_note: Option<String>,
}

/// Escapes text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

const VERDICTS: [&str; 5] = [
    "receiver-window-limited",
    "cwnd-limited",
    "bottleneck-limited",
    "sender-limited",
    "undetermined",
];

fn verdict_class(v: &str) -> &'static str {
    match v {
        "receiver-window-limited" => "v-rwnd",
        "cwnd-limited" => "v-cwnd",
        "bottleneck-limited" => "v-bneck",
        "sender-limited" => "v-sender",
        _ => "v-undet",
    }
}

fn chip(v: &str) -> String {
    format!("<span class=\"chip {}\">{}</span>", verdict_class(v), esc(v))
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

fn ms(v: Option<f64>) -> String {
    v.map_or("–".into(), |m| format!("{m:.1} ms"))
}

fn bulk_bytes(f: &FlowSummary) -> u64 {
    if f.bulk_direction == "c2s" {
        f.bytes.c2s
    } else {
        f.bytes.s2c
    }
}

/// Escaped text that may break after '/' and ':' (paths, IPv6 addresses) and nowhere else.
fn breakable(s: &str) -> String {
    let mut o = String::new();
    for part in s.split_inclusive(['/', ':']) {
        o.push_str(&esc(part));
        o.push_str("<wbr>");
    }
    o.truncate(o.len().saturating_sub(5));
    o
}

/// An address for the table: IPv6 ones may break after a ':', IPv4 ones stay whole.
fn address(a: &str) -> String {
    if a.starts_with('[') {
        breakable(a)
    } else {
        esc(a)
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

pub fn write<W: Write>(out: &mut W, page: &Page<'_>) -> std::io::Result<()> {
    let mut h = String::with_capacity(1 << 20);
    let _ = render(&mut h, page);
    out.write_all(h.as_bytes())
}

/// Floods and scans of the captures (`CaptureSummary::floods`), with the attempts they
/// summarise and any connections the memory budget ended early; nothing when there are
/// none. Self-contained: one table, the page's existing classes.
fn floods(h: &mut String, captures: &[CaptureSummary]) -> std::fmt::Result {
    let any = captures.iter().any(|c| {
        !c.floods.is_empty() || c.connections.evicted_with_data + c.connections.evicted_without_data > 0
    });
    if !any {
        return Ok(());
    }
    writeln!(h, "<h3 id=\"floods\">Floods and scans</h3>")?;
    writeln!(h, "<table class=\"data\"><thead><tr><th>capture</th><th>finding</th><th>target</th><th>source</th><th class=\"num\">attempts</th><th class=\"num\">answered</th><th class=\"num\">completed</th><th class=\"num\">peak SYN/s</th><th>figures</th><th>rule</th></tr></thead><tbody>")?;
    for c in captures {
        for f in &c.floods {
            writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{:.1}%</td><td class=\"num\">{:.1}%</td><td class=\"num\">{}</td><td>{}</td><td class=\"muted\">{}</td></tr>",
                esc(&short_path(&c.path)),
                esc(&f.kind),
                esc(f.target.as_deref().unwrap_or("–")),
                esc(f.source.as_deref().unwrap_or("–")),
                f.attempts,
                100.0 * f.answered_share,
                100.0 * f.completed_share,
                f.peak.as_ref().map_or("–".into(), |p| p.syns.to_string()),
                esc(&f.evidence),
                esc(&f.rule)
            )?;
        }
    }
    writeln!(h, "</tbody></table>")?;
    for c in captures {
        let (a, k) = (&c.attempts, &c.connections);
        if a.folded > 0 {
            writeln!(
                h,
                "<p class=\"muted\">{}: {} connection attempts without data are summarised here, not listed as flows ({} unanswered, {} refused, {} half-open).</p>",
                esc(&short_path(&c.path)),
                a.folded,
                a.unanswered,
                a.refused,
                a.half_open
            )?;
        }
        if k.evicted_with_data + k.evicted_without_data > 0 {
            writeln!(
                h,
                "<p class=\"warn\">{}: the memory for live connections was full: {} connections without data and {} with data ended early.</p>",
                esc(&short_path(&c.path)),
                k.evicted_without_data,
                k.evicted_with_data
            )?;
        }
    }
    Ok(())
}

fn render(h: &mut String, p: &Page<'_>) -> std::fmt::Result {
    let flows = p.flows;
    writeln!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">"
    )?;
    writeln!(
        h,
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
    )?;
    writeln!(
        h,
        "<meta name=\"generator\" content=\"bdpscope {}\">",
        env!("CARGO_PKG_VERSION")
    )?;
    writeln!(
        h,
        "<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>",
        esc(p.title)
    )?;
    writeln!(h, "<header><h1>{}</h1>", esc(p.title))?;
    let packets: u64 = p.captures.iter().map(|c| c.packets).sum();
    writeln!(
        h,
        "<p class=\"meta\">{} capture(s), {} packets, {} flow(s) · bdpscope {} · what limited each TCP flow: the receiver's window, congestion control, the bottleneck or the sender</p></header>\n<main>",
        p.captures.len(),
        packets,
        flows.len(),
        env!("CARGO_PKG_VERSION")
    )?;

    // Captures.
    writeln!(h, "<section id=\"captures\"><h2>Captures</h2>")?;
    for f in p.failed {
        writeln!(h, "<p class=\"warn\">not read: {}</p>", esc(f))?;
    }
    writeln!(h, "<table class=\"data\"><thead><tr><th>capture</th><th>format</th><th class=\"num\">packets</th><th class=\"num\">TCP segments</th><th class=\"num\">flows</th><th class=\"num\">span</th><th>link types</th><th>not TCP / warnings</th></tr></thead><tbody>")?;
    for c in p.captures {
        let span = match (c.first_ts, c.last_ts) {
            (Some(a), Some(b)) => format!("{:.2} s", b - a),
            _ => "–".into(),
        };
        let format = if c.compression == "none" {
            c.format.clone()
        } else {
            format!("{} + {}", c.format, c.compression)
        };
        let mut notes: Vec<String> = c
            .skipped
            .iter()
            .take(4)
            .map(|s| format!("{} × {}", s.records, esc(&s.reason)))
            .collect();
        notes.extend(
            c.warnings
                .iter()
                .map(|w| format!("<span class=\"warn\">{}</span>", esc(w))),
        );
        writeln!(
            h,
            "<tr><td title=\"{}\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
            esc(&c.path),
            esc(&short_path(&c.path)),
            esc(&format),
            c.packets,
            c.tcp_segments,
            c.flows,
            span,
            esc(&c.link_types.join(", ")),
            if notes.is_empty() { "–".into() } else { notes.join("<br>") }
        )?;
    }
    writeln!(h, "</tbody></table>")?;
    floods(h, p.captures)?;
    writeln!(h, "</section>")?;

    // Flow table.
    writeln!(h, "<section id=\"flows\"><h2>Flows</h2>")?;
    writeln!(
        h,
        "<div class=\"filters\" role=\"group\" aria-label=\"filter by verdict\"><span>verdict:</span>"
    )?;
    for v in VERDICTS {
        let n = flows.iter().filter(|f| f.verdict == v).count();
        if n > 0 {
            writeln!(
                h,
                "<label class=\"chip {}\"><input type=\"checkbox\" data-verdict=\"{v}\" checked> {v} ({n})</label>",
                verdict_class(v)
            )?;
        }
    }
    writeln!(h, "<span id=\"shown\" class=\"muted\"></span></div>")?;
    let multi = p.captures.len() > 1;
    let cols: Vec<(&str, &str, bool)> = [
        ("id", "id", true),
        ("capture", "capture", false),
        ("client", "client", false),
        ("server", "server", false),
        ("bytes", "data", true),
        ("duration", "duration", true),
        ("goodput", "goodput", true),
        ("rtt", "min RTT", true),
        ("flight", "max flight", true),
        ("rwnd", "max rwnd", true),
        ("bdp", "BDP", true),
        ("bottleneck", "bottleneck", true),
        ("retrans", "retrans.", true),
        ("verdict", "verdict", false),
    ]
    .into_iter()
    .filter(|c| multi || c.0 != "capture")
    .collect();
    write!(h, "<table id=\"flow-table\" class=\"data sortable\"><thead><tr>")?;
    for (key, label, num) in &cols {
        write!(
            h,
            "<th data-key=\"{key}\" data-type=\"{}\"{} tabindex=\"0\" aria-sort=\"none\">{label}</th>",
            if *num { "num" } else { "str" },
            if *num { " class=\"num\"" } else { "" }
        )?;
    }
    writeln!(h, "</tr></thead><tbody>")?;
    for f in flows {
        write!(h, "<tr data-verdict=\"{}\">", esc(&f.verdict))?;
        for (key, _, _) in &cols {
            let (v, shown): (String, String) = match *key {
                "id" if has_section(f, p.plots) => (f.id.to_string(), format!("<a href=\"#flow-{0}\">{0}</a>", f.id)),
                "id" => (f.id.to_string(), f.id.to_string()),
                "capture" => (esc(&f.capture), breakable(&short_path(&f.capture))),
                "client" => (esc(&f.client), address(&f.client)),
                "server" => (esc(&f.server), address(&f.server)),
                "bytes" => {
                    let b = bulk_bytes(f);
                    (
                        b.to_string(),
                        format!(
                            "{} {}",
                            fmt_bytes(b as f64),
                            if f.bulk_direction == "c2s" { "→" } else { "←" }
                        ),
                    )
                }
                "duration" => (format!("{:.6}", f.duration_s), format!("{:.2} s", f.duration_s)),
                "goodput" => (format!("{:.1}", f.goodput_bps), fmt_rate(f.goodput_bps)),
                "rtt" => (f.rtt_ms.min.map_or("".into(), |m| format!("{m:.3}")), ms(f.rtt_ms.min)),
                "flight" => (f.max_flight_bytes.to_string(), fmt_bytes(f.max_flight_bytes as f64)),
                "rwnd" => (
                    f.max_rwnd_bytes.map_or(String::new(), |b| b.to_string()),
                    f.max_rwnd_bytes.map_or("–".into(), |b| fmt_bytes(b as f64)),
                ),
                "bdp" => (
                    f.bdp_bytes.map_or(String::new(), |b| b.to_string()),
                    f.bdp_bytes.map_or("–".into(), |b| fmt_bytes(b as f64)),
                ),
                "bottleneck" => (
                    f.bottleneck_bps.map_or("".into(), |b| format!("{b:.1}")),
                    f.bottleneck_bps.map_or("–".into(), fmt_rate),
                ),
                "retrans" => (
                    f.retransmitted_segments.to_string(),
                    f.retransmitted_segments.to_string(),
                ),
                "verdict" => (esc(&f.verdict), chip(&f.verdict)),
                _ => (String::new(), String::new()),
            };
            let class = if cols.iter().any(|c| c.0 == *key && c.2) {
                " class=\"num\""
            } else if matches!(*key, "capture" | "client" | "server") {
                " class=\"wrap\""
            } else {
                ""
            };
            write!(h, "<td data-v=\"{v}\"{class}>{shown}</td>")?;
        }
        writeln!(h, "</tr>")?;
    }
    writeln!(h, "</tbody></table>")?;
    if let Some(n) = &p.plot_note {
        writeln!(h, "<p class=\"muted\">{}</p>", esc(n))?;
    }
    let bare = flows.iter().filter(|f| !has_section(f, p.plots)).count();
    if bare > 0 {
        writeln!(
            h,
            "<p class=\"muted\">{bare} flow(s) carried no payload (handshakes, scans, resets): in the table only.</p>"
        )?;
    }
    writeln!(h, "</section>")?;

    for f in flows.iter().filter(|f| has_section(f, p.plots)) {
        flow_section(h, f, p.plots.get(&f.id))?;
    }
    writeln!(h, "</main>\n<footer>Generated by bdpscope {}. Times on the plots are seconds since each flow's first packet; bytes in KiB/MiB (1024-based), rates in bit/s (1000-based).</footer>", env!("CARGO_PKG_VERSION"))?;
    writeln!(h, "<script>{JS}</script>\n</body>\n</html>")?;
    Ok(())
}

/// Flows that carried payload get a section of their own; the others (a SYN scan has
/// thousands) only a row.
fn has_section(f: &FlowSummary, plots: &HashMap<u64, Plots>) -> bool {
    f.bytes.c2s + f.bytes.s2c > 0 || plots.contains_key(&f.id)
}

fn flow_section(h: &mut String, f: &FlowSummary, plots: Option<&Plots>) -> std::fmt::Result {
    let arrow = if f.bulk_direction == "c2s" { "→" } else { "←" };
    writeln!(
        h,
        "<section class=\"flow\" id=\"flow-{}\" data-verdict=\"{}\">",
        f.id,
        esc(&f.verdict)
    )?;
    writeln!(
        h,
        "<h2>flow {} <span class=\"ends\">{} {arrow} {}</span> {}</h2>",
        f.id,
        esc(&f.client),
        esc(&f.server),
        chip(&f.verdict)
    )?;
    writeln!(
        h,
        "<p class=\"muted\">{} · {:.2} s · {} packets · {}</p>",
        esc(&f.capture),
        f.duration_s,
        f.packets,
        esc(&f.end_state)
    )?;
    if let Some(l) = f.limits {
        write!(h, "<div class=\"limits\" title=\"share of the bulk transfer's time\">")?;
        for (v, frac, short) in [
            ("receiver-window-limited", l.receiver_window, "receiver window"),
            ("cwnd-limited", l.cwnd, "cwnd"),
            ("bottleneck-limited", l.bottleneck, "bottleneck"),
            ("sender-limited", l.sender, "sender"),
        ] {
            if frac > 0.0 {
                write!(
                    h,
                    "<span class=\"{}\" style=\"width:{:.2}%\" title=\"{short} {:.0}%\">{}</span>",
                    verdict_class(v),
                    frac * 100.0,
                    frac * 100.0,
                    if frac >= 0.08 {
                        format!("{short} {:.0}%", frac * 100.0)
                    } else {
                        String::new()
                    }
                )?;
            }
        }
        writeln!(h, "</div>")?;
    }
    // Key figures.
    writeln!(h, "<dl class=\"facts\">")?;
    let fact = |h: &mut String, k: &str, v: String| writeln!(h, "<div><dt>{k}</dt><dd>{v}</dd></div>");
    fact(
        h,
        "data",
        format!(
            "c2s {}, s2c {} ({} bulk)",
            fmt_bytes(f.bytes.c2s as f64),
            fmt_bytes(f.bytes.s2c as f64),
            esc(&f.bulk_direction)
        ),
    )?;
    fact(h, "goodput", fmt_rate(f.goodput_bps))?;
    let r = &f.rtt_ms;
    fact(
        h,
        "RTT",
        format!(
            "min {}, median {}, p95 {}, max {} ({} samples; capture near {})",
            ms(r.min),
            ms(r.median),
            ms(r.p95),
            ms(r.max),
            r.samples,
            esc(&r.vantage)
        ),
    )?;
    fact(
        h,
        "window",
        format!(
            "max flight {}, max rwnd {}",
            fmt_bytes(f.max_flight_bytes as f64),
            f.max_rwnd_bytes.map_or("unknown".into(), |b| fmt_bytes(b as f64))
        ),
    )?;
    if let Some(b) = f.bottleneck_bps {
        fact(
            h,
            "bottleneck",
            format!(
                "{} ({}), BDP {}",
                fmt_rate(b),
                esc(f.bottleneck_method.as_deref().unwrap_or("?")),
                f.bdp_bytes.map_or("–".into(), |b| fmt_bytes(b as f64))
            ),
        )?;
    }
    fact(h, "retransmissions", format!("{} segments", f.retransmitted_segments))?;
    writeln!(h, "</dl>")?;

    list(h, "Evidence", &f.evidence)?;
    list(h, "Advice", &f.advice)?;

    // Handshake.
    let hs = &f.handshake;
    writeln!(h, "<h3>Handshake</h3>")?;
    if hs.seen {
        writeln!(h, "<table class=\"data hs\"><thead><tr><th></th><th>window scale</th><th>MSS</th><th>SACK permitted</th><th>timestamps</th></tr></thead><tbody>")?;
        writeln!(
            h,
            "<tr><th>client (SYN)</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            opt(hs.client_wscale),
            opt(hs.client_mss),
            yes_no(hs.client_sack_permitted),
            yes_no(hs.client_timestamps)
        )?;
        writeln!(
            h,
            "<tr><th>server (SYN/ACK)</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            opt(hs.server_wscale),
            opt(hs.server_mss),
            yes_no(hs.server_sack_permitted),
            yes_no(hs.server_timestamps)
        )?;
        writeln!(h, "</tbody></table>")?;
        let mut extra = format!("window scaling {}", esc(&hs.window_scaling));
        if hs.syn_retransmissions > 0 {
            let _ = write!(extra, "; {} SYN retransmission(s)", hs.syn_retransmissions);
        }
        writeln!(h, "<p>{extra}</p>")?;
    } else if let Some(i) = &hs.inferred {
        writeln!(
            h,
            "<p>not in the capture; window scale inferred client {} / server {} ({}): {}</p>",
            opt(i.client_wscale),
            opt(i.server_wscale),
            esc(&i.confidence),
            esc(&i.evidence)
        )?;
    } else {
        writeln!(h, "<p>not in the capture (window scale unknown)</p>")?;
    }

    writeln!(h, "<h3>Middleboxes</h3>")?;
    if f.middlebox.is_empty() {
        writeln!(h, "<p class=\"muted\">no sign of option rewriting</p>")?;
    } else {
        writeln!(h, "<ul>")?;
        for m in &f.middlebox {
            writeln!(
                h,
                "<li><b>{}</b> on {} ({}): {}</li>",
                esc(&m.kind),
                esc(&m.direction),
                esc(&m.confidence),
                esc(&m.evidence)
            )?;
        }
        writeln!(h, "</ul>")?;
    }
    list(h, "Notes", &f.notes)?;

    match plots {
        Some(ps) if !ps.is_empty() => {
            writeln!(h, "<details class=\"plots\" open><summary>Plots</summary>")?;
            for (caption, svg) in ps {
                writeln!(
                    h,
                    "<figure class=\"plot\">{svg}<figcaption>{}</figcaption></figure>",
                    esc(caption)
                )?;
            }
            writeln!(h, "</details>")?;
        }
        _ => writeln!(h, "<p class=\"muted\">no plots for this flow</p>")?,
    }
    writeln!(h, "<p class=\"top\"><a href=\"#flows\">↑ flows</a></p></section>")?;
    Ok(())
}

fn list(h: &mut String, title: &str, items: &[String]) -> std::fmt::Result {
    if items.is_empty() {
        return Ok(());
    }
    writeln!(h, "<h3>{title}</h3><ul>")?;
    for i in items {
        writeln!(h, "<li>{}</li>", esc(i))?;
    }
    writeln!(h, "</ul>")
}

const CSS: &str = r#"
:root{--ink:#222;--muted:#666;--line:#ddd;--bg:#fff;--head:#f4f5f7;--accent:#1f5ea8;
--rwnd:#fdd0a2;--cwnd:#bed7ee;--bneck:#f5b4b4;--sender:#c7e9c0;--undet:#e4e4e4}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif;color:var(--ink);background:var(--bg)}
header,main,footer{max-width:1280px;margin:0 auto;padding:0 20px}
header{padding-top:18px;border-bottom:1px solid var(--line)}
h1{font-size:24px;margin:0 0 4px}
h2{font-size:19px;margin:28px 0 8px}
h3{font-size:15px;margin:16px 0 4px}
.meta,.muted{color:var(--muted)}
a{color:var(--accent)}
table.data{border-collapse:collapse;width:100%;font-size:13px;margin:6px 0}
table.data th,table.data td{border-bottom:1px solid var(--line);padding:4px 5px;text-align:left;white-space:nowrap}
table.data td .chip{font-size:11.5px;padding:1px 6px}
table.data td.wrap{white-space:normal}
table.data thead th{background:var(--head);position:sticky;top:0}
table.data td.num,table.data th.num{text-align:right;font-variant-numeric:tabular-nums}
table.hs{width:auto}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th[aria-sort=ascending]::after{content:" ▲";font-size:10px}
table.sortable th[aria-sort=descending]::after{content:" ▼";font-size:10px}
table.sortable tbody tr:hover{background:#f7faff}
#flows{overflow-x:auto}
.chip{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12.5px;font-weight:600;color:#222;vertical-align:middle}
.v-rwnd{background:var(--rwnd)}.v-cwnd{background:var(--cwnd)}.v-bneck{background:var(--bneck)}
.v-sender{background:var(--sender)}.v-undet{background:var(--undet)}
.filters{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:6px 0}
.filters label{cursor:pointer}
.filters input{vertical-align:-2px;margin:0 2px 0 0}
section.flow{border-top:2px solid var(--line);margin-top:28px}
section.flow h2 .ends{font-weight:normal;font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:15px;margin:0 8px}
.limits{display:flex;height:22px;border-radius:4px;overflow:hidden;margin:8px 0;max-width:900px;border:1px solid var(--line)}
.limits span{display:block;font-size:12px;line-height:22px;padding-left:6px;white-space:nowrap;overflow:hidden}
dl.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:2px 24px;margin:8px 0}
dl.facts div{display:flex;gap:8px}
dl.facts dt{min-width:110px;color:var(--muted)}
dl.facts dd{margin:0}
ul{margin:4px 0;padding-left:22px}
figure.plot{margin:12px 0;border:1px solid var(--line);border-radius:4px;padding:4px;background:#fff}
figure.plot svg{display:block;width:100%;height:auto;max-width:1200px}
figure.plot figcaption{font-size:12.5px;color:var(--muted);padding:2px 6px}
details.plots summary{cursor:pointer;font-weight:600;margin:14px 0 4px}
.warn{color:#a40}
.top{font-size:13px}
footer{color:var(--muted);font-size:12.5px;border-top:1px solid var(--line);margin-top:32px;padding:12px 20px 24px}
.hidden{display:none}
"#;

const JS: &str = r#"
(function(){
  "use strict";
  var root = document.documentElement;
  window.addEventListener("error", function(e){ root.setAttribute("data-js-error", String(e.message)); });
  var table = document.getElementById("flow-table");
  if (!table) { root.setAttribute("data-ready", "1"); return; }
  var tbody = table.tBodies[0];
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var boxes = Array.prototype.slice.call(document.querySelectorAll(".filters input[data-verdict]"));
  function value(row, i, num){
    var v = row.cells[i].getAttribute("data-v");
    if (num) { var x = parseFloat(v); return isNaN(x) ? -Infinity : x; }
    return v || "";
  }
  function sortBy(i, dir){
    var num = heads[i].getAttribute("data-type") === "num";
    var rows = Array.prototype.slice.call(tbody.rows);
    rows.sort(function(a, b){
      var x = value(a, i, num), y = value(b, i, num);
      var c = num ? (x - y) : String(x).localeCompare(String(y), undefined, {numeric: true});
      if (c === 0) { c = value(a, 0, true) - value(b, 0, true); }
      return dir === "descending" ? -c : c;
    });
    rows.forEach(function(r){ tbody.appendChild(r); });
    heads.forEach(function(h, j){ h.setAttribute("aria-sort", j === i ? dir : "none"); });
  }
  heads.forEach(function(h, i){
    function go(){ sortBy(i, h.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending"); }
    h.addEventListener("click", go);
    h.addEventListener("keydown", function(e){ if (e.key === "Enter" || e.key === " ") { e.preventDefault(); go(); } });
  });
  function applyFilter(){
    var on = {};
    boxes.forEach(function(b){ on[b.getAttribute("data-verdict")] = b.checked; });
    var shown = 0, total = 0;
    Array.prototype.forEach.call(tbody.rows, function(r){
      var keep = on[r.getAttribute("data-verdict")] !== false;
      r.classList.toggle("hidden", !keep); total++; if (keep) { shown++; }
    });
    Array.prototype.forEach.call(document.querySelectorAll("section.flow"), function(s){
      s.classList.toggle("hidden", on[s.getAttribute("data-verdict")] === false);
    });
    var el = document.getElementById("shown");
    if (el) { el.textContent = shown === total ? "" : shown + " of " + total + " flows shown"; }
  }
  boxes.forEach(function(b){ b.addEventListener("change", applyFilter); });
  // ?sort=KEY&dir=asc|desc&verdict=a,b opens the page sorted and filtered.
  var q = new URLSearchParams(window.location.search);
  if (q.get("verdict")) {
    var want = q.get("verdict").split(",");
    boxes.forEach(function(b){ b.checked = want.indexOf(b.getAttribute("data-verdict")) >= 0; });
  }
  applyFilter();
  if (q.get("sort")) {
    heads.forEach(function(h, i){
      if (h.getAttribute("data-key") === q.get("sort")) { sortBy(i, q.get("dir") === "desc" ? "descending" : "ascending"); }
    });
  }
  root.setAttribute("data-ready", "1");
})();
"#;
