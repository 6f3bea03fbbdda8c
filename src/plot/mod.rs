//! Plots per flow (plotters; SVG and PNG): flight vs BDP, RTT, throughput and the
//! time-sequence graph, all on the same time base (seconds since the flow's first
//! packet). The series come from [`SeriesRecorder`], an observer of the analysis; the
//! flow's findings (BDP, bottleneck, periods, verdict) from its [`FlowSummary`].
//!
//! Text in PNGs is drawn with DejaVu Sans, embedded in the binary (assets/fonts), so
//! plots look the same on a machine without fonts.

pub mod bucket;
mod flight;
mod rtt;
pub mod series;
pub mod style;
mod text;
mod throughput;
mod timeseq;

pub use rtt::far_loop;
pub use series::{FlowRecord, SeriesRecorder};
pub use throughput::bottleneck_label;

use anyhow::{Context, Result};
use bdpscope::flow::Dir;
use bdpscope::summary::{FlowSummary, Label};
use bucket::{Bucketed, M4};
use plotters::prelude::*;
use std::path::Path;
use style::{Area, PLOT_PX};
use text::Typeset;

/// The four plots of a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Flight,
    Rtt,
    Throughput,
    TimeSeq,
}

impl Kind {
    pub const ALL: [Kind; 4] = [Kind::Flight, Kind::Rtt, Kind::Throughput, Kind::TimeSeq];

    /// The file name part: flow-<id>-<name>.svg.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Flight => "flight",
            Kind::Rtt => "rtt",
            Kind::Throughput => "throughput",
            Kind::TimeSeq => "timeseq",
        }
    }

    /// How to read the plot (the report's caption).
    pub fn reading(self) -> &'static str {
        match self {
            Kind::Flight => "The sender's bytes in flight (blue) against the receiver's advertised window (orange) and the BDP (dashed). Flight pinned to the window below the BDP: the receive window limits. Flight at or above the BDP: the path is full and the excess queues. Flight below both: congestion control or the sender. The background shows the period's limit; red ticks at the bottom are retransmissions.",
            Kind::Rtt => "Every RTT sample (as the whole path's round trip), the smoothed RTT and the base (minimum) RTT; the shaded gap between the last two is queueing delay.",
            Kind::Throughput => "Bytes the receiver acknowledged per interval, as a rate, against the bottleneck estimate (dashed red) and the flow's mean goodput (dashed blue).",
            Kind::TimeSeq => "Sequence numbers over time (tcptrace style): data segments (blue bars), the cumulative ACK (green) and the receive window's right edge (gold). The sender can send up to the gold line; red crosses are retransmissions, magenta triangles zero-window advertisements.",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Kind::Flight => "Bytes in flight vs BDP",
            Kind::Rtt => "Round-trip time",
            Kind::Throughput => "Goodput",
            Kind::TimeSeq => "Time-sequence",
        }
    }
}

/// One flow's plot inputs and its time base.
pub struct Ctx<'a> {
    pub flow: &'a FlowSummary,
    pub rec: &'a FlowRecord,
    /// Seconds from the flow's start to the first recorded segment.
    off_s: f64,
    /// The time axis ends here (seconds since the flow's start).
    pub x_max: f64,
}

impl<'a> Ctx<'a> {
    pub fn new(flow: &'a FlowSummary, rec: &'a FlowRecord) -> Self {
        let off_s = (rec.t0_ns as f64 / 1e9 - flow.start_ts).max(0.0);
        let x_max = (flow.end_ts - flow.start_ts).max(off_s + last_time(rec) as f64 / 1e9);
        Ctx {
            flow,
            rec,
            off_s,
            x_max: if x_max > 1e-6 { x_max } else { 1e-3 },
        }
    }

    /// Seconds since the flow's start for a series time.
    pub fn x(&self, t_ns: i64) -> f64 {
        (self.off_s + t_ns as f64 / 1e9).clamp(0.0, self.x_max)
    }

    pub fn title(&self, kind: Kind) -> String {
        let f = self.flow;
        let arrow = if self.rec.dir == Dir::C2S { "→" } else { "←" };
        format!(
            "{} · flow {}: {} {} {} · {}",
            kind.title(),
            f.id,
            f.client,
            arrow,
            f.server,
            f.verdict
        )
    }

    /// The limitation periods in seconds since the flow's start.
    pub fn bands(&self) -> Vec<(f64, f64, Label)> {
        self.flow
            .periods
            .iter()
            .map(|p| (p.start - self.flow.start_ts, p.end - self.flow.start_ts, p.label))
            .collect()
    }

    /// An M4 series as points (seconds, value / div), at most ~4 per pixel column.
    pub fn points(&self, s: &Bucketed<M4>, div: f64) -> Vec<(f64, f64)> {
        s.coarsened(PLOT_PX)
            .iter()
            .flat_map(|(_, b)| b.points())
            .map(|(t, v)| (self.x(t), v / div))
            .collect()
    }
}

fn last_time(rec: &FlowRecord) -> i64 {
    let d = &rec.data;
    let mut t = 0;
    for s in [&d.flight, &d.ack, &d.rwnd] {
        if let Some((_, b)) = s.iter().last() {
            t = t.max(b.last.0);
        }
    }
    if let Some((_, r)) = d.segments.iter().last() {
        t = t.max(r.t_last);
    }
    t
}

/// Turns points into a staircase (the value holds until the next point), for windows
/// and ACK numbers, which change in steps.
pub fn steps(p: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(p.len() * 2);
    for (i, &(x, y)) in p.iter().enumerate() {
        if i > 0 {
            out.push((x, p[i - 1].1));
        }
        out.push((x, y));
    }
    out
}

/// The parts of a line that stay at or below `y_max` (a line above the plot is not drawn
/// along its top edge, where it would look like a value).
pub fn runs_below(p: &[(f64, f64)], y_max: f64) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut cur: Vec<(f64, f64)> = Vec::new();
    for &q in p {
        if q.1 <= y_max {
            cur.push(q);
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The runs of a line outside `spans` (seconds, as the line's x): points inside a span are
/// dropped and the line is cut there, so that no segment is drawn across a span whose
/// value is unknown.
pub fn outside_spans(p: &[(f64, f64)], spans: &[(f64, f64)]) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut cur: Vec<(f64, f64)> = Vec::new();
    for &q in p {
        let inside = spans.iter().any(|&(a, b)| q.0 >= a && q.0 <= b);
        // A span between two kept points cuts the line as one it lies in does.
        let crossed = cur
            .last()
            .is_some_and(|l| spans.iter().any(|&(a, b)| l.0 < a && q.0 > b));
        if (inside || crossed) && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        if !inside {
            cur.push(q);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Splits a line where consecutive points are more than `gap` seconds apart: a series
/// sampled only when data is sent says nothing about the time in between, and a line
/// across the gap would invent a value for it.
pub fn split_gaps(p: Vec<(f64, f64)>, gap: f64) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut cur: Vec<(f64, f64)> = Vec::new();
    for q in p {
        if let Some(last) = cur.last() {
            if q.0 - last.0 > gap {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.push(q);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Draws one plot onto any plotters backend.
pub fn draw<DB: DrawingBackend>(kind: Kind, ctx: &Ctx<'_>, root: &Area<DB>) -> Result<()> {
    match kind {
        Kind::Flight => flight::draw(ctx, root),
        Kind::Rtt => rtt::draw(ctx, root),
        Kind::Throughput => throughput::draw(ctx, root),
        Kind::TimeSeq => timeseq::draw(ctx, root),
    }?;
    root.present().map_err(style::err)?;
    Ok(())
}

/// One plot as an SVG document.
pub fn svg(kind: Kind, ctx: &Ctx<'_>) -> Result<String> {
    let mut s = String::new();
    {
        let backend = SVGBackend::with_string(&mut s, (style::WIDTH, style::HEIGHT));
        let root = Typeset::vector(backend).into_drawing_area();
        draw(kind, ctx, &root)?;
    }
    Ok(s)
}

/// One plot as a PNG file.
pub fn png(kind: Kind, ctx: &Ctx<'_>, path: &Path) -> Result<()> {
    let root = Typeset::raster(BitMapBackend::new(path, (style::WIDTH, style::HEIGHT))).into_drawing_area();
    draw(kind, ctx, &root).with_context(|| format!("{}: cannot write the plot", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_cut_where_its_value_is_unknown() {
        let p: Vec<(f64, f64)> = (0..10).map(|i| (i as f64, 1.0)).collect();
        // Points 3..=5 inside the span are dropped, and the line is cut there.
        let runs = outside_spans(&p, &[(2.5, 5.5)]);
        let xs: Vec<Vec<f64>> = runs.iter().map(|r| r.iter().map(|q| q.0).collect()).collect();
        assert_eq!(xs, vec![vec![0.0, 1.0, 2.0], vec![6.0, 7.0, 8.0, 9.0]]);
        // A span between two points, holding none, still cuts the line.
        let runs = outside_spans(&p, &[(4.2, 4.8)]);
        assert_eq!(runs.len(), 2);
        assert_eq!(runs.iter().map(Vec::len).sum::<usize>(), 10);
        // No span: the line as it was.
        assert_eq!(outside_spans(&p, &[]), vec![p.clone()]);
    }
}
