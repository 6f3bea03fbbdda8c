//! `bdpscope compare A B`: the same connections seen at two points of a path, and what
//! changed between them. Reading and rendering; the matching and the differences are the
//! library's (`bdpscope::compare`).

use super::{input, Expect, RecordArgs, Records, Status};
use anyhow::Result;
use bdpscope::compare::{
    self, Comparison, ConnComparison, DirComparison, HandshakePair, RttSplit, Side, SynOptionsInfo,
};
use bdpscope::units::millis;
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
#[command(override_usage = "bdpscope compare [OPTIONS] CAPTURE_A CAPTURE_B [FILTER...]")]
pub struct CompareArgs {
    /// A capture taken at one point of the path (e.g. next to the client; `-` reads
    /// stdin), one of the same traffic at another point (e.g. next to the server), then
    /// optionally a capture filter applied to both.
    #[arg(value_name = "WORD")]
    pub words: Vec<PathBuf>,
    #[command(flatten)]
    pub records: RecordArgs,
    #[arg(long, value_enum, default_value_t = CompareFormat::Text)]
    pub format: CompareFormat,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareFormat {
    Text,
    Json,
}

fn load(path: &Path, records: &Records) -> Result<Side> {
    let (mut reader, _) = input::open(path)?;
    records
        .apply(&mut reader)
        .map_err(|why| anyhow::anyhow!("{}: {why}", input::display_name(path)))?;
    let name = input::display_name(path);
    let side = compare::read(&mut reader, &name);
    // A capture cut inside its first record has no packet before the cut.
    let before = if side.packets == 0 {
        "no packet came before it"
    } else {
        "the packets before were compared"
    };
    for w in &side.warnings {
        eprintln!("bdpscope: warning: {name}: {w}; {before}");
    }
    Ok(side)
}

pub fn run(args: CompareArgs) -> Result<Status> {
    let records = super::records::resolve(&args.words, &args.records, Expect::Two)?;
    let [a, b] = [&records.captures[0], &records.captures[1]];
    if a.as_os_str() == "-" && b.as_os_str() == "-" {
        anyhow::bail!("only one of the two captures can be read from standard input");
    }
    let (a, b) = match (load(a, &records), load(b, &records)) {
        (Ok(a), Ok(b)) => (a, b),
        (ra, rb) => {
            for e in [ra.err(), rb.err()].into_iter().flatten() {
                eprintln!("bdpscope: {e:#}");
            }
            return Ok(Status::InputFailed);
        }
    };
    let cmp = compare::compare(&a, &b);
    if !cmp.in_common {
        eprintln!(
            "bdpscope: {} and {}: no connection in common (exit status 1)",
            cmp.a.path, cmp.b.path
        );
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match args.format {
        CompareFormat::Json => {
            serde_json::to_writer_pretty(&mut out, &cmp)?;
            writeln!(out)?;
        }
        CompareFormat::Text => write_text(&mut out, &cmp)?,
    }
    out.flush()?;
    // Exit 1 when nothing is proven in common: the report is printed, but a script
    // comparing two captures must not take unrelated ones for one path (issue 14).
    Ok(if cmp.in_common {
        Status::Success
    } else {
        Status::InputFailed
    })
}

fn opts(o: &Option<SynOptionsInfo>) -> String {
    let Some(o) = o else { return "not captured".into() };
    let mut v = Vec::new();
    if let Some(m) = o.mss {
        v.push(format!("mss {m}"));
    }
    if let Some(w) = o.wscale {
        v.push(format!("wscale {w}"));
    }
    if o.sack_permitted {
        v.push("sackOK".into());
    }
    if o.timestamps {
        v.push("TS".into());
    }
    if let Some(n) = o.nop_run.filter(|&n| n >= 3) {
        v.push(format!("{n} NOPs"));
    }
    format!("win {} [{}]", o.window, v.join(", "))
}

fn handshake_line<W: Write>(out: &mut W, what: &str, h: &HandshakePair) -> Result<()> {
    let (a, b) = (opts(&h.a), opts(&h.b));
    if a == b {
        writeln!(out, "  {what:<8} {a} (same at both points)")?;
    } else {
        writeln!(out, "  {what:<8} A: {a}")?;
        writeln!(out, "  {:<8} B: {b}", "")?;
    }
    Ok(())
}

fn dir_line<W: Write>(out: &mut W, name: &str, d: &DirComparison) -> Result<()> {
    let mut s = format!(
        "  {name:<8} {} segments in A, {} in B ({} / {} with data)",
        d.segments_a, d.segments_b, d.data_segments_a, d.data_segments_b
    );
    if d.travel != "unknown" {
        s += &format!("; travels {}", d.travel.to_uppercase().replace("->", " -> "));
        let lost = d.lost + d.lost_beyond_window;
        s += &match lost {
            0 => "; none lost between the points".to_string(),
            n if d.lost_beyond_window > 0 => {
                format!(
                    "; {n} lost between the points ({} estimated from counts)",
                    d.lost_beyond_window
                )
            }
            n => format!("; {n} lost between the points"),
        };
        if d.added > 0 {
            s += &format!("; {} added", d.added);
        }
        match (d.one_way_delay_ms, d.delay_min_ms) {
            (Some(owd), _) => {
                s += &format!(
                    "; one-way delay {} (min), {} (median)",
                    millis(owd),
                    millis(d.delay_median_ms.unwrap_or(owd))
                )
            }
            (None, Some(m)) => s += &format!("; delay {} (min, clock offset included)", millis(m)),
            _ => {}
        }
    }
    writeln!(out, "{s}")?;
    Ok(())
}

/// "base RTT split: client side X ms (at A) + between the points Y ms + server side Z ms
/// (at B) = T ms", with the parts not measured said so.
fn rtt_split_line(r: &RttSplit) -> String {
    let (nc, ns) = if r.near_client == "a" { ("A", "B") } else { ("B", "A") };
    let part = |v: Option<f64>, end: &str| match v {
        Some(x) => millis(x),
        None => format!("not measured (no loop through the {end} seen at {nc} or {ns})"),
    };
    let mut s = format!(
        "base RTT split: client side {} + between the points {} + server side {}",
        part(r.client_side_ms, "client"),
        millis(r.between_ms),
        part(r.server_side_ms, "server")
    );
    if let Some(t) = r.end_to_end_ms {
        s += &format!(" = {} end to end", millis(t));
    }
    s + " (a loop through an end includes its response time: the sides are upper bounds)"
}

fn write_conn<W: Write>(out: &mut W, c: &ConnComparison) -> Result<()> {
    let names = if c.a.client == c.b.client && c.a.server == c.b.server {
        format!("{} -> {}", c.a.client, c.a.server)
    } else {
        format!(
            "{} -> {} (A) = {} -> {} (B)",
            c.a.client, c.a.server, c.b.client, c.b.server
        )
    };
    writeln!(out, "connection {names}")?;
    let strength = if c.match_strength == "proven" {
        ""
    } else {
        " (a likely match only)"
    };
    writeln!(out, "  matched by {}{strength}: {}", c.matched_by, c.match_evidence)?;
    let near = match c.nearer_client.as_str() {
        "a" => "A is nearer the client",
        "b" => "B is nearer the client",
        _ => "the order of the points is unknown",
    };
    writeln!(out, "  {near} ({})", c.nearer_client_evidence)?;
    handshake_line(out, "SYN", &c.syn)?;
    handshake_line(out, "SYN/ACK", &c.syn_ack)?;
    dir_line(out, "c2s", &c.c2s)?;
    dir_line(out, "s2c", &c.s2c)?;
    if let Some(rt) = c.round_trip_between_points_ms {
        writeln!(
            out,
            "  round trip between the points {} (independent of the clocks)",
            millis(rt)
        )?;
    }
    if let Some(r) = &c.rtt_split {
        writeln!(out, "  {}", rtt_split_line(r))?;
    }
    for d in &c.differences {
        writeln!(out, "  * {}", d.detail)?;
    }
    for m in &c.middlebox {
        writeln!(out, "  middlebox: {} {} ({})", m.kind, m.direction, m.confidence)?;
    }
    writeln!(out, "  => {}", c.verdict)?;
    Ok(())
}

pub fn write_text<W: Write>(out: &mut W, c: &Comparison) -> Result<()> {
    for (tag, s) in [("A", &c.a), ("B", &c.b)] {
        let copies = match s.capture_duplicates {
            0 => String::new(),
            n => format!(", {n} capture duplicate(s) set aside"),
        };
        writeln!(
            out,
            "{tag}: {} ({}, {} packets, {} TCP connection(s){copies})",
            s.path, s.format, s.packets, s.connections
        )?;
    }
    if let Some(off) = c.clock_offset_ms {
        writeln!(
            out,
            "clock of B minus clock of A: {} (assuming symmetric delays between the points)",
            millis(off)
        )?;
    }
    writeln!(out)?;
    for conn in &c.connections {
        write_conn(out, conn)?;
        writeln!(out)?;
    }
    for (tag, v) in [("A", &c.only_in_a), ("B", &c.only_in_b)] {
        if !v.is_empty() {
            writeln!(out, "only in {tag}: {}", v.join(", "))?;
        }
    }
    for r in &c.rejected {
        writeln!(out, "not matched: {r}")?;
    }
    if !c.in_common {
        writeln!(out, "no connection is proven to be in both captures:")?;
        for n in &c.notes {
            writeln!(out, "  - {n}")?;
        }
    }
    writeln!(out, "{}", c.summary)?;
    Ok(())
}
