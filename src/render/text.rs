//! The text view: what a person reads after `tcpdump` — one aligned block per flow.

use bdpscope::capture::Compression;
use bdpscope::endpoint::Dir;
use bdpscope::summary::{CaptureSummary, FlowSummary};
use bdpscope::units::{bits, bytes, millis, pct, secs};
use std::io::Write;

/// An RTT from the JSON's milliseconds, with its unit (a LAN's 17 µs is not "0.0").
fn ms(v: Option<f64>) -> String {
    v.map_or("-".into(), millis)
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("-".into(), |x| x.to_string())
}

fn yes_no(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "?",
    }
}

/// The flows the text view shows, collected as they finish: the judged ones (every one
/// with `--all`); the others are only counted (a capture of a million attempts keeps a
/// number, not a million summaries).
pub struct Collector {
    all: bool,
    shown: Vec<FlowSummary>,
    hidden: u64,
    /// The selection as the command line said it (`--port 443`), when there is one:
    /// a capture's header then says how many of its flows it selected.
    selection: Option<String>,
    /// Flows that reached the view, per capture (shown or only counted).
    selected: std::collections::HashMap<String, u64>,
}

impl Collector {
    pub fn new(all: bool) -> Self {
        Collector {
            all,
            shown: Vec::new(),
            hidden: 0,
            selection: None,
            selected: std::collections::HashMap::new(),
        }
    }

    /// A view of the flows a selection chose (`describe` as the command line said it).
    pub fn selecting(mut self, describe: String) -> Self {
        self.selection = Some(describe);
        self
    }

    pub fn flow(&mut self, f: FlowSummary) {
        if self.selection.is_some() {
            *self.selected.entry(f.capture.clone()).or_default() += 1;
        }
        if self.all || super::shown_by_default(&f) {
            self.shown.push(f);
        } else {
            self.hidden += 1;
        }
    }
}

pub fn write<W: Write>(out: &mut W, captures: &[CaptureSummary], flows: &Collector) -> anyhow::Result<()> {
    for c in captures {
        // The capture's figures are the whole capture's (ids do not depend on the
        // selection); the header says what the selection kept of it.
        let kept = flows.selection.as_ref().map_or(String::new(), |sel| {
            format!(
                ", {} selected by {sel}",
                flows.selected.get(&c.path).copied().unwrap_or(0)
            )
        });
        // Capture duplicates are said where the counts are: they are records of the file
        // that no flow counts.
        let copies = match c.capture_duplicates {
            0 => String::new(),
            1 => ", 1 capture duplicate set aside".to_string(),
            n => format!(", {n} capture duplicates set aside"),
        };
        writeln!(
            out,
            "{}: {}{}, {} packets, {} TCP segments{copies}, {} flow{}{kept}",
            c.path,
            c.format,
            if c.compression == Compression::None {
                String::new()
            } else {
                format!(" +{}", c.compression.as_str())
            },
            c.packets,
            c.tcp_segments,
            c.flows,
            if c.flows == 1 { "" } else { "s" }
        )?;
        for w in &c.warnings {
            writeln!(out, "  warning: {w}")?;
        }
        connections(out, c)?;
        let other: u64 = c.skipped.iter().map(|s| s.records).sum();
        if other > 0 {
            let top: Vec<String> = c
                .skipped
                .iter()
                .take(3)
                .map(|s| format!("{} {}", s.records, s.reason))
                .collect();
            writeln!(out, "  not TCP: {other} records ({})", top.join("; "))?;
        }
    }
    for f in &flows.shown {
        writeln!(out)?;
        flow(out, f)?;
    }
    if flows.hidden > 0 {
        writeln!(
            out,
            "\n{} more flow(s) too short to judge (show them with --all)",
            flows.hidden
        )?;
    }
    Ok(())
}

/// A capture's floods and scans, the attempts they summarise, and connections the memory
/// budget ended early; nothing for a capture with none of these.
fn connections<W: Write>(out: &mut W, c: &CaptureSummary) -> std::io::Result<()> {
    for f in &c.floods {
        let what = match (&f.source, &f.target) {
            (Some(s), Some(t)) => format!("{} from {s} on {t}", f.kind),
            (None, Some(t)) => format!("{} on {t}", f.kind),
            _ => f.kind.to_string(),
        };
        writeln!(out, "  {:<12}{what}: {}", "flood", f.evidence)?;
        if let Some(p) = &f.peak {
            let at = c.first_ts.map_or(String::new(), |t0| {
                format!("+{}, ", bdpscope::units::secs((p.ts - t0).max(0.0)))
            });
            writeln!(
                out,
                "  {:<12}peak {} SYNs in one second ({at}{:.0} since the epoch)",
                "", p.syns, p.ts
            )?;
        }
        writeln!(out, "  {:<12}rule: {}", "", f.rule)?;
    }
    let a = &c.attempts;
    if a.folded > 0 {
        writeln!(
            out,
            "  {:<12}{} attempts ({} unanswered, {} refused, {} half-open, {} completed without data, {} with data) from ~{} sources to ~{} hosts, ~{} ports; {} without data summarised here, not listed (--all lists them)",
            "attempts",
            a.attempts,
            a.unanswered,
            a.refused,
            a.half_open,
            a.completed,
            a.with_data,
            a.distinct_sources,
            a.distinct_hosts,
            a.distinct_ports,
            a.folded
        )?;
    }
    let k = &c.connections;
    if k.evicted_without_data + k.evicted_with_data > 0 {
        writeln!(
            out,
            "  warning: the memory for live connections was full (--attempt-memory {} MiB, --conn-memory {} MiB): {} connections without data and {} with data ended early; a later packet of theirs started a new flow",
            k.attempt_budget_bytes >> 20,
            k.budget_bytes >> 20,
            k.evicted_without_data,
            k.evicted_with_data
        )?;
    }
    Ok(())
}

/// One of the two handshake segments is in the capture (the capture began between them,
/// or lost one): what that segment offered, and whether scaling is in force — a SYN/ACK
/// with the option answers a SYN that had it (RFC 7323 §2.2), one SYN without it turns
/// scaling off for both ends. A SYN's or SYN/ACK's SACK and timestamps answers are
/// `Some` exactly when that segment was seen.
fn half_handshake(h: &bdpscope::summary::HandshakeSummary) -> Option<String> {
    let (which, other, ws, mss, sack, ts) = match (h.client_sack_permitted.is_some(), h.server_sack_permitted.is_some())
    {
        (true, false) => (
            "the SYN",
            "the server's",
            h.client_wscale,
            h.client_mss,
            h.client_sack_permitted,
            h.client_timestamps,
        ),
        (false, true) => (
            "the SYN/ACK",
            "the client's",
            h.server_wscale,
            h.server_mss,
            h.server_sack_permitted,
            h.server_timestamps,
        ),
        _ => return None,
    };
    Some(format!(
        "only {which} is in the capture: wscale {}, mss {}, sack {}, timestamps {}; {other} options unknown (scaling {})",
        opt(ws),
        opt(mss),
        yes_no(sack),
        yes_no(ts),
        h.window_scaling
    ))
}

fn flow<W: Write>(out: &mut W, f: &FlowSummary) -> std::io::Result<()> {
    let arrow = match f.bulk_direction {
        Dir::C2S => "->",
        Dir::S2C => "<-",
    };
    writeln!(
        out,
        "flow {}  {} {} {}  [{}]",
        f.id, f.client, arrow, f.server, f.capture
    )?;
    let h = &f.handshake;
    let hs = if h.seen {
        format!(
            "wscale {}/{} (scaling {}), mss {}/{}, sack {}/{}, timestamps {}/{}, ecn {}/{} ({})",
            opt(h.client_wscale),
            opt(h.server_wscale),
            h.window_scaling,
            opt(h.client_mss),
            opt(h.server_mss),
            yes_no(h.client_sack_permitted),
            yes_no(h.server_sack_permitted),
            yes_no(h.client_timestamps),
            yes_no(h.server_timestamps),
            opt(h.client_ecn),
            opt(h.server_ecn),
            h.ecn
        )
    } else if let Some(half) = half_handshake(h) {
        half
    } else if let Some(i) = &h.inferred {
        format!(
            "not in the capture; window scale inferred {}/{} ({})",
            opt(i.client_wscale),
            opt(i.server_wscale),
            i.confidence
        )
    } else {
        "not in the capture (window scale unknown)".to_string()
    };
    writeln!(out, "  {:<12}client/server: {hs}", "handshake")?;
    let goodput = super::goodput(f);
    writeln!(
        out,
        "  {:<12}c2s {}, s2c {} in {}; goodput {} ({})",
        "transfer",
        bytes(f.bytes.c2s as f64),
        bytes(f.bytes.s2c as f64),
        secs(f.duration_s),
        goodput,
        f.bulk_direction
    )?;
    let r = &f.rtt_ms;
    if let Some(bound) = super::rtt_lower_bound(f) {
        writeln!(out, "  {:<12}{bound}", "rtt")?;
    } else {
        writeln!(
            out,
            "  {:<12}min {}, median {}, p95 {}, max {} ({}; capture near {})",
            "rtt",
            ms(r.min),
            ms(r.median),
            ms(r.p95),
            ms(r.max),
            super::samples(r.samples),
            r.vantage
        )?;
    }
    if let Some(ecn) = super::ecn_counts(f) {
        writeln!(out, "  {:<12}{ecn}", "ecn")?;
    }
    let flight = super::max_flight(f);
    // The duplicate ACKs the bulk data drew from its receiver (counted on the data's
    // direction), which call for a fast retransmit at three (RFC 5681 §3.2).
    let dupacks = match f.dir(f.bulk_direction).duplicate_acks {
        0 => String::new(),
        n => format!(
            " ({n} duplicate ACKs from the {})",
            match f.bulk_direction {
                Dir::C2S => "server",
                Dir::S2C => "client",
            }
        ),
    };
    let reordered = match f.dir(f.bulk_direction).reordered_segments {
        0 => String::new(),
        n => format!(", {n} reordered"),
    };
    writeln!(
        out,
        "  {:<12}max flight {}, max rwnd {}, {} retransmitted segments{reordered}{dupacks}",
        "window",
        flight,
        f.max_rwnd_bytes.map_or("unknown".into(), |w| bytes(w as f64)),
        f.retransmitted_segments
    )?;
    if let (Some(b), Some(bdp)) = (f.bottleneck_bps, f.bdp_bytes) {
        writeln!(
            out,
            "  {:<12}{} ({}), BDP {}",
            "bottleneck",
            bits(b),
            super::bottleneck_how(f),
            bytes(bdp as f64)
        )?;
    }
    if let Some(l) = f.limits {
        writeln!(
            out,
            "  {:<12}receiver-window {}, cwnd {}, bottleneck {}, sender {}",
            "limits",
            pct(l.receiver_window),
            pct(l.cwnd),
            pct(l.bottleneck),
            pct(l.sender)
        )?;
    }
    writeln!(out, "  {:<12}{}", "verdict", f.verdict)?;
    for (i, st) in f.stalls.iter().enumerate() {
        writeln!(
            out,
            "  {:<12}{}: {}",
            if i == 0 { "stalls" } else { "" },
            st.kind.as_str(),
            st.sentence
        )?;
    }
    for m in &f.middlebox {
        writeln!(
            out,
            "  {:<12}{} on {} ({}): {}",
            "middlebox", m.kind, m.direction, m.confidence, m.evidence
        )?;
    }
    for (title, lines) in [("evidence", &f.evidence), ("advice", &f.advice), ("notes", &f.notes)] {
        for (i, l) in lines.iter().enumerate() {
            writeln!(out, "  {:<12}- {l}", if i == 0 { title } else { "" })?;
        }
    }
    Ok(())
}
