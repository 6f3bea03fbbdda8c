//! RTT over time: every sample (end-to-end estimate) by source, the smoothed RTT, and the
//! base RTT; the shaded gap between the last two is the queueing delay.

use super::bucket::{Bucketed, M4};
use super::series::{RttSeries, ENDS};
use super::style::*;
use super::Ctx;
use anyhow::Result;
use bdpscope::tcp::rtt::RttSource;
use plotters::prelude::*;

/// A source's samples: colour, legend label, points.
type Cloud = (RGBColor, &'static str, Vec<(f64, f64)>);

/// Sample points: for dense buckets only their lowest and highest samples (what a dot
/// cloud shows at this width), every sample where they are sparse.
fn sample_points(ctx: &Ctx<'_>, s: &Bucketed<M4>) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    for (_, b) in s.coarsened(PLOT_PX / 2).iter() {
        if b.n <= 4 {
            out.extend(b.points().map(|(t, v)| (ctx.x(t), v)));
        } else {
            out.push((ctx.x(b.min.0), b.min.1));
            out.push((ctx.x(b.max.0), b.max.1));
        }
    }
    out
}

fn mean(s: &Bucketed<M4>) -> Option<f64> {
    let (mut sum, mut n) = (0.0, 0.0);
    for (_, b) in s.iter() {
        for (_, v) in b.points() {
            sum += v;
            n += 1.0;
        }
    }
    (n > 0.0).then(|| sum / n)
}

/// The loop whose smoothed RTT is drawn: the one that sees the queue (its samples run
/// higher): at one end of the path the near loop is ~0 plus the far loop's base, and
/// hides the queueing.
pub fn far_loop(r: &RttSeries) -> Option<usize> {
    ENDS.iter()
        .map(|e| e.index())
        .filter_map(|i| mean(&r.smoothed[i]).map(|m| (i, m)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

pub fn draw<DB: DrawingBackend>(ctx: &Ctx<'_>, root: &Area<DB>) -> Result<()> {
    let r = &ctx.rec.rtt;
    let f = ctx.flow;
    let palette = [
        (RttSource::DataAck, pal::BLUE, "data/ACK samples"),
        (RttSource::TsEcho, pal::ORANGE, "timestamp-echo samples"),
        (RttSource::Handshake, pal::INK, "handshake"),
    ];
    let mut clouds: Vec<Cloud> = Vec::new();
    for (src, colour, label) in palette {
        let mut pts = Vec::new();
        for s in r.of_source(src) {
            pts.extend(sample_points(ctx, s));
        }
        if !pts.is_empty() {
            clouds.push((colour, label, pts));
        }
    }
    let far = far_loop(r);
    let smoothed: Vec<(f64, f64)> = far.map(|i| ctx.points(&r.smoothed[i], 1.0)).unwrap_or_default();
    let base = f.rtt_ms.min;

    // Samples far under the base RTT (a handshake echo answered at the capture point's
    // own end, before the other loop is known) would stretch the axis to 0 and flatten
    // everything else: they are drawn on the axis' lower edge instead.
    let floor = base.map_or(0.0, |b| b * 0.5);
    let all = clouds
        .iter()
        .flat_map(|c| c.2.iter().map(|p| p.1))
        .chain(smoothed.iter().map(|p| p.1))
        .filter(|v| *v >= floor);
    let (lo, hi) = all.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (lo, hi) = if lo.is_finite() {
        (lo.min(base.unwrap_or(lo)), hi.max(base.unwrap_or(0.0)))
    } else {
        (0.0, base.unwrap_or(1.0))
    };
    // Start the axis at 0 unless that would flatten the variation into a thin line.
    let spread = hi - lo;
    let y_min = if lo > 0.0 && spread < 0.5 * lo {
        (lo - spread.max(lo * 0.02) * 0.35).max(0.0)
    } else {
        0.0
    };
    let y_max = y_min + (hi - y_min).max(0.5) * 1.08;

    let mut legend: Vec<LegendItem> = clouds
        .iter()
        .map(|(c, l, _)| LegendItem::new(Swatch::Dot(*c), *l))
        .collect();
    if !smoothed.is_empty() {
        legend.push(LegendItem::new(Swatch::Line(pal::RED, 2), "smoothed RTT (RFC 6298)"));
    }
    if let Some(b) = base {
        legend.push(LegendItem::new(
            Swatch::Dashed(pal::INK),
            format!("base RTT {}", bdpscope::units::millis(b)),
        ));
        if !smoothed.is_empty() {
            legend.push(LegendItem::new(Swatch::Band(RGBColor(250, 205, 205)), "queueing delay"));
        }
    }
    if r.count == 0 {
        legend.push(LegendItem::new(Swatch::Dot(pal::GREY), "no RTT samples in this flow"));
    }

    let area = frame(root, &ctx.title(super::Kind::Rtt), &legend)?;
    let mut c = chart(&area, ctx.x_max, y_min..y_max, "RTT (ms)")?;
    let clamp = |p: &[(f64, f64)]| -> Vec<(f64, f64)> { p.iter().map(|&(x, y)| (x, y.clamp(y_min, y_max))).collect() };
    if let (Some(b), false) = (base, smoothed.is_empty()) {
        let b = b.clamp(y_min, y_max);
        let pts: Vec<(f64, f64)> = clamp(&smoothed).into_iter().map(|(x, y)| (x, y.max(b))).collect();
        c.draw_series(AreaSeries::new(pts, b, RGBColor(250, 205, 205).mix(0.8)).border_style(TRANSPARENT))
            .map_err(err)?;
    }
    // One dot per spot: dots closer than ~2.5 px would be drawn over each other (and
    // only make the SVG bigger).
    let (sx, sy) = (PLOT_PX as f64 / 2.5 / ctx.x_max, 130.0 / (y_max - y_min));
    for (colour, _, pts) in &clouds {
        let mut seen = std::collections::HashSet::new();
        let dots: Vec<(f64, f64)> = clamp(pts)
            .into_iter()
            .filter(|&(x, y)| seen.insert(((x * sx).round() as i64, ((y - y_min) * sy).round() as i64)))
            .collect();
        let size = if dots.len() > 1500 { 2 } else { 3 };
        c.draw_series(
            dots.into_iter()
                .map(|p| Circle::new(p, size, colour.mix(0.55).filled())),
        )
        .map_err(err)?;
    }
    if !smoothed.is_empty() {
        c.draw_series(LineSeries::new(clamp(&smoothed), pal::RED.stroke_width(2)))
            .map_err(err)?;
    }
    if let Some(b) = base {
        hline(&mut c, b.clamp(y_min, y_max), pal::INK, 2)?;
    }
    Ok(())
}
