//! The time-sequence graph (Stevens, tcptrace): data segments as vertical bars from their
//! first to their last byte, the cumulative ACK line, the receive window's right edge
//! (ACK + window), retransmissions and zero-window advertisements marked.

use super::style::*;
use super::{runs_below, steps, Ctx};
use anyhow::Result;
use plotters::prelude::*;

pub fn draw<DB: DrawingBackend>(ctx: &Ctx<'_>, root: &Area<DB>) -> Result<()> {
    let d = &ctx.rec.data;
    let segs = d.segments.coarsened(PLOT_PX);
    let rexmit = d.retransmissions.coarsened(PLOT_PX / 2);
    let ack = steps(&ctx.points(&d.ack, 1.0));
    let edge = steps(&ctx.points(&d.edge, 1.0));
    let zero = ctx.points(&d.zero_windows.coarsened(PLOT_PX / 4), 1.0);
    let data_top = segs
        .iter()
        .map(|(_, r)| r.hi)
        .chain(ack.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    let edge_top = edge.iter().map(|p| p.1).fold(0.0, f64::max);
    // A receive window much larger than the data would squash the data into the bottom
    // of the plot: show the data, and the window edge where it fits.
    let cut = data_top > 0.0 && edge_top > 1.3 * data_top;
    let top = if cut { data_top * 1.15 } else { data_top.max(edge_top) };
    let unit = bytes_unit(top);
    let y_max = headroom(top) / unit.div;
    let u = unit.div;

    let mut legend = vec![LegendItem::new(Swatch::Bar(pal::BLUE), "data segments")];
    if !ack.is_empty() {
        legend.push(LegendItem::new(Swatch::Line(pal::GREEN, 2), "cumulative ACK"));
    }
    if !edge.is_empty() {
        let label = if cut {
            "receive window edge (ACK + window; above the plot where not shown)"
        } else {
            "receive window edge (ACK + window)"
        };
        legend.push(LegendItem::new(Swatch::Line(pal::GOLD, 2), label));
    }
    if d.retransmitted_segments > 0 {
        legend.push(LegendItem::new(
            Swatch::Cross(pal::RED),
            format!("retransmissions ({})", d.retransmitted_segments),
        ));
    }
    if d.zero_window_adverts > 0 {
        legend.push(LegendItem::new(
            Swatch::Triangle(pal::MAGENTA),
            format!("zero window ({})", d.zero_window_adverts),
        ));
    }

    let area = frame(root, &ctx.title(super::Kind::TimeSeq), &legend)?;
    let mut c = chart(
        &area,
        ctx.x_max,
        0.0..y_max,
        &format!("relative sequence number ({})", unit.name),
    )?;
    let scale = |p: Vec<(f64, f64)>| -> Vec<(f64, f64)> { p.into_iter().map(|(x, y)| (x, y / u)).collect() };
    for run in runs_below(&scale(edge), y_max) {
        c.draw_series(LineSeries::new(run, pal::GOLD.stroke_width(2)))
            .map_err(err)?;
    }
    if !ack.is_empty() {
        c.draw_series(LineSeries::new(scale(ack), pal::GREEN.stroke_width(2)))
            .map_err(err)?;
    }
    // Segments on top: a bar per bucket from the lowest first byte to the highest last byte.
    let width = if d.data_segments < 400 { 2 } else { 1 };
    c.draw_series(segs.iter().map(|(_, r)| {
        let x = ctx.x(r.t());
        PathElement::new(
            vec![(x, r.lo / u), (x, (r.hi / u).max(r.lo / u))],
            pal::BLUE.stroke_width(width),
        )
    }))
    .map_err(err)?;
    c.draw_series(rexmit.iter().map(|(_, r)| {
        let x = ctx.x(r.t());
        PathElement::new(vec![(x, r.lo / u), (x, r.hi / u)], pal::RED.stroke_width(3))
    }))
    .map_err(err)?;
    c.draw_series(
        rexmit
            .iter()
            .map(|(_, r)| Cross::new((ctx.x(r.t()), (r.lo + r.hi) / 2.0 / u), 5, pal::RED.stroke_width(2))),
    )
    .map_err(err)?;
    c.draw_series(
        zero.into_iter()
            .map(|(x, y)| TriangleMarker::new((x, y / u), 6, pal::MAGENTA.filled())),
    )
    .map_err(err)?;
    Ok(())
}
