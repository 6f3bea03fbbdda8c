//! Goodput over time (bytes the receiver reported delivered, per interval) against the
//! bottleneck estimate; the rate of new data seen at the capture point for comparison.

use super::bucket::{Bucketed, Sum};
use super::style::*;
use super::Ctx;
use anyhow::Result;
use bdpscope::summary::CapacityMethod;
use bdpscope::units::{bits, secs};
use plotters::prelude::*;

/// Rates in bit/s per interval: (interval start s, interval end s, bit/s).
fn rates(ctx: &Ctx<'_>, s: &Bucketed<Sum>, interval_ns: i64) -> Vec<(f64, f64, f64)> {
    let k = (interval_ns + s.width() - 1) / s.width();
    // Intervals cut by the end of the flow count over the part inside it; a stub shorter
    // than a quarter interval joins the one before (a rate over a sliver is noise).
    let mut out: Vec<(f64, f64, f64)> = Vec::new(); // (start s, end s, bytes)
    for (t, len, sum) in s.rebinned(k) {
        let (a, b) = (ctx.x(t), ctx.x(t + len));
        match out.last_mut() {
            Some(last) if (b - a) < 0.25 * (len as f64 / 1e9) && last.1 >= a - 1e-9 => {
                last.1 = b;
                last.2 += sum;
            }
            _ if b > a => out.push((a, b, sum)),
            _ => {}
        }
    }
    out.into_iter().map(|(a, b, sum)| (a, b, sum * 8.0 / (b - a))).collect()
}

/// A staircase through interval rates, already divided by the unit.
fn stairs(r: &[(f64, f64, f64)], div: f64) -> Vec<(f64, f64)> {
    let mut p = Vec::with_capacity(r.len() * 2 + 2);
    for &(a, b, v) in r {
        p.push((a, v / div));
        p.push((b, v / div));
    }
    p
}

/// The bottleneck line's legend: an estimate and how it was found, or the user's figure
/// (`--link-rate`), said to be theirs.
pub fn bottleneck_label(f: &bdpscope::summary::FlowSummary) -> Option<String> {
    let b = f.bottleneck_bps?;
    Some(match f.bottleneck_method {
        Some(CapacityMethod::LinkRate) => format!("bottleneck {} (your --link-rate)", bits(b)),
        Some(m) => format!("bottleneck estimate {} ({m})", bits(b)),
        None => format!("bottleneck estimate {}", bits(b)),
    })
}

/// The averaging interval: about 150 intervals over the flow, never shorter than the base
/// RTT (shorter intervals show ACK bursts, not throughput).
pub fn interval_ns(ctx: &Ctx<'_>) -> i64 {
    let by_width = ctx.x_max / 150.0;
    let by_rtt = ctx.flow.rtt_ms.min.unwrap_or(0.0) / 1000.0;
    ((by_width.max(by_rtt)) * 1e9).max(1e6) as i64
}

pub fn draw<DB: DrawingBackend>(ctx: &Ctx<'_>, root: &Area<DB>) -> Result<()> {
    let d = &ctx.rec.data;
    let f = ctx.flow;
    let iv = interval_ns(ctx);
    let good = rates(ctx, &d.delivered, iv);
    let sent = rates(ctx, &d.sent, iv);
    let max = good
        .iter()
        .chain(sent.iter())
        .map(|r| r.2)
        .fold(0.0, f64::max)
        .max(f.bottleneck_bps.unwrap_or(0.0));
    let unit = rate_unit(max);
    let y_max = headroom(max) / unit.div;
    let iv_label = secs(iv as f64 / 1e9);

    let mut legend = vec![LegendItem::new(
        Swatch::Line(pal::BLUE, 2),
        format!("goodput (bytes delivered per {iv_label})"),
    )];
    legend.push(LegendItem::new(
        Swatch::Line(pal::GREY, 1),
        "new data seen at the capture point",
    ));
    if let Some(label) = bottleneck_label(f) {
        legend.push(LegendItem::new(Swatch::Dashed(pal::RED), label));
    }
    legend.push(LegendItem::new(
        Swatch::Dashed(pal::BLUE),
        format!("mean goodput {}", bits(f.goodput_bps)),
    ));

    let area = frame(root, &ctx.title(super::Kind::Throughput), &legend)?;
    let mut c = chart(&area, ctx.x_max, 0.0..y_max, &format!("rate ({})", unit.name))?;
    let g = stairs(&good, unit.div);
    c.draw_series(AreaSeries::new(g.clone(), 0.0, pal::LIGHT_BLUE.mix(0.25)).border_style(TRANSPARENT))
        .map_err(err)?;
    c.draw_series(LineSeries::new(stairs(&sent, unit.div), pal::GREY.stroke_width(1)))
        .map_err(err)?;
    c.draw_series(LineSeries::new(g, pal::BLUE.stroke_width(2)))
        .map_err(err)?;
    if let Some(b) = f.bottleneck_bps {
        hline(&mut c, (b / unit.div).min(y_max), pal::RED, 2)?;
    }
    if f.goodput_bps > 0.0 {
        hline(&mut c, (f.goodput_bps / unit.div).min(y_max), pal::BLUE, 1)?;
    }
    Ok(())
}
