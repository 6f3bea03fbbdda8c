//! The signature plot: bytes in flight against the receive window and the BDP, over the
//! periods of what limited the flow.

use super::style::*;
use super::{outside_spans, runs_below, split_gaps, steps, Ctx};
use anyhow::Result;
use bdpscope::summary::Label;
use bdpscope::units::{bits, bytes, millis};
use plotters::prelude::*;

fn max_of(p: &[(f64, f64)]) -> f64 {
    p.iter().map(|q| q.1).fold(0.0, f64::max)
}

pub fn draw<DB: DrawingBackend>(ctx: &Ctx<'_>, root: &Area<DB>) -> Result<()> {
    let d = &ctx.rec.data;
    let f = ctx.flow;
    // Everything in bytes first; the unit is chosen from what is on screen.
    // Where the capture lacks the receiver's ACKs, data sent less ACKs seen is no flight
    // (the JSON's `acks_lacking`; its max_flight_bytes is null then): those spans are shaded
    // and no flight line crosses them.
    let lacking: Vec<(f64, f64)> = f
        .dir(f.bulk_direction)
        .acks_lacking
        .iter()
        .flat_map(|a| a.waits.iter())
        .map(|w| (w.start - f.start_ts, w.end - f.start_ts))
        .collect();
    let known = |p: Vec<(f64, f64)>| -> Vec<(f64, f64)> { outside_spans(&p, &lacking).concat() };
    let sender = known(ctx.points(&d.sender_flight, 1.0));
    let naive = known(ctx.points(&d.flight, 1.0));
    let rwnd = steps(&ctx.points(&d.rwnd, 1.0));
    let bdp = f.bdp_bytes.map(|b| b as f64).filter(|b| *b > 0.0);
    // Near the receiver the capture point's flight says little about the sender (data is
    // acknowledged as it arrives), and neither does the pipe: draw the pipe only where the
    // capture was taken near the sender (or in the middle).
    let pipe = if d.retransmitted_segments > 0 && !f.near_receiver() {
        known(ctx.points(&d.pipe, 1.0))
    } else {
        Vec::new()
    };
    let data_max = max_of(&sender).max(max_of(&naive)).max(max_of(&pipe));
    let rwnd_max = max_of(&rwnd);
    let near = data_max.max(bdp.unwrap_or(0.0));
    // A window far above both flight and BDP would squash them: cut the axis and say so.
    let cut = near > 0.0 && rwnd_max > 1.6 * near;
    let top = if cut { 1.25 * near } else { near.max(rwnd_max) };
    let unit = bytes_unit(top);
    let y_max = headroom(top) / unit.div;
    let scale = |p: Vec<(f64, f64)>| -> Vec<(f64, f64)> { p.into_iter().map(|(x, y)| (x, y / unit.div)).collect() };

    let main_is_sender = !sender.is_empty();
    let mut legend = Vec::new();
    if main_is_sender {
        legend.push(LegendItem::new(Swatch::Line(pal::BLUE, 2), "flight (sender's view)"));
        legend.push(LegendItem::new(
            Swatch::Line(pal::LIGHT_BLUE, 1),
            "flight at the capture point",
        ));
    } else {
        legend.push(LegendItem::new(
            Swatch::Line(pal::BLUE, 2),
            "flight at the capture point",
        ));
    }
    if !rwnd.is_empty() {
        let label = if cut {
            format!("advertised receive window (up to {}, off the top)", bytes(rwnd_max))
        } else {
            "advertised receive window".to_string()
        };
        legend.push(LegendItem::new(Swatch::Line(pal::ORANGE, 4), label));
    }
    if !pipe.is_empty() {
        legend.push(LegendItem::new(
            Swatch::Line(pal::GREEN, 1),
            "pipe (RFC 6675, SACK-aware)",
        ));
    }
    match (bdp, f.bottleneck_bps, f.rtt_ms.min) {
        (Some(b), Some(rate), Some(rtt)) => legend.push(LegendItem::new(
            Swatch::Dashed(pal::INK),
            format!("BDP {} = {} × {}", bytes(b), bits(rate), millis(rtt)),
        )),
        (Some(b), _, _) => legend.push(LegendItem::new(Swatch::Dashed(pal::INK), format!("BDP {}", bytes(b)))),
        _ => {}
    }
    if d.retransmitted_segments > 0 {
        legend.push(LegendItem::new(
            Swatch::Bar(pal::RED),
            format!("retransmissions ({})", d.retransmitted_segments),
        ));
    }
    let bands = ctx.bands();
    for &l in Label::ALL {
        if bands.iter().any(|b| b.2 == l) {
            legend.push(LegendItem::new(Swatch::Band(band_colour(l)), l.as_str()));
        }
    }
    if !lacking.is_empty() {
        legend.push(LegendItem::new(
            Swatch::Band(pal::GREY),
            "ACKs not in the capture: flight unknown",
        ));
    }

    let area = frame(root, &ctx.title(super::Kind::Flight), &legend)?;
    let mut c = chart(&area, ctx.x_max, 0.0..y_max, &format!("bytes ({})", unit.name))?;
    draw_bands(&mut c, &bands, 0.0..y_max)?;
    c.draw_series(lacking.iter().filter_map(|&(a, b)| {
        let (a, b) = (a.clamp(0.0, ctx.x_max), b.clamp(0.0, ctx.x_max));
        (b > a).then(|| Rectangle::new([(a, 0.0), (b, y_max)], pal::GREY.mix(0.35).filled()))
    }))
    .map_err(err)?;
    if !rwnd.is_empty() {
        // Wider than the flight line, and under it: where the sender keeps the whole window
        // in flight the window shows as an orange edge around the blue line.
        for run in runs_below(&scale(rwnd), y_max) {
            c.draw_series(LineSeries::new(run, pal::ORANGE.stroke_width(4)))
                .map_err(err)?;
        }
    }
    if main_is_sender {
        for run in outside_spans(&scale(naive.clone()), &lacking) {
            c.draw_series(LineSeries::new(run, pal::LIGHT_BLUE.stroke_width(1)))
                .map_err(err)?;
        }
    }
    // The sender's view and the pipe exist only on data segments: not drawn across pauses
    // longer than a round trip (the capture point's flight shows what happened there).
    let gap = f.rtt_ms.min.map_or(0.2, |ms| (ms / 1000.0).max(0.005)) * 1.5;
    let runs = |p: Vec<(f64, f64)>| -> Vec<Vec<(f64, f64)>> {
        outside_spans(&p, &lacking)
            .into_iter()
            .flat_map(|r| split_gaps(r, gap))
            .collect()
    };
    for run in runs(scale(pipe)) {
        c.draw_series(LineSeries::new(run, pal::GREEN.stroke_width(1)))
            .map_err(err)?;
    }
    if main_is_sender {
        for run in runs(scale(sender)) {
            c.draw_series(LineSeries::new(run, pal::BLUE.stroke_width(2)))
                .map_err(err)?;
        }
    } else {
        for run in outside_spans(&scale(naive), &lacking) {
            c.draw_series(LineSeries::new(run, pal::BLUE.stroke_width(2)))
                .map_err(err)?;
        }
    }
    if let Some(b) = bdp {
        hline(&mut c, (b / unit.div).min(y_max), pal::INK, 2)?;
    }
    // Retransmissions as a rug along the bottom: where the saw-tooth's teeth come from.
    let rug = y_max * 0.045;
    c.draw_series(d.retransmissions.coarsened(PLOT_PX / 2).iter().map(|(_, r)| {
        let x = ctx.x(r.t());
        PathElement::new(vec![(x, 0.0), (x, rug)], pal::RED.stroke_width(2))
    }))
    .map_err(err)?;
    Ok(())
}
