//! What all plots share: size, fonts, colours, units, the title and legend strips, and
//! the chart frame with its axes.

use bdpscope::summary::Label;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub const WIDTH: u32 = 1200;
pub const HEIGHT: u32 = 460;
/// Pixels left of and right of the plotting area (y labels, margin).
pub const Y_LABEL_AREA: u32 = 84;
pub const RIGHT_MARGIN: u32 = 28;
pub const X_LABEL_AREA: u32 = 50;
/// Approximate width of the plotting area in pixels (for downsampling).
pub const PLOT_PX: usize = (WIDTH - Y_LABEL_AREA - RIGHT_MARGIN) as usize;

pub const FONT: &str = super::text::FAMILY;

// Colours (lines: strong; bands: pale, behind the data). In a module of their own:
// plotters' prelude has colours of the same names.
pub mod pal {
    use plotters::style::RGBColor;
    pub const INK: RGBColor = RGBColor(34, 34, 34);
    pub const GRID: RGBColor = RGBColor(226, 226, 226);
    pub const GRID_MINOR: RGBColor = RGBColor(242, 242, 242);
    pub const BLUE: RGBColor = RGBColor(31, 94, 168);
    pub const LIGHT_BLUE: RGBColor = RGBColor(120, 170, 220);
    pub const ORANGE: RGBColor = RGBColor(222, 110, 0);
    pub const GREEN: RGBColor = RGBColor(22, 140, 70);
    pub const RED: RGBColor = RGBColor(205, 30, 30);
    pub const MAGENTA: RGBColor = RGBColor(170, 40, 160);
    pub const GREY: RGBColor = RGBColor(130, 130, 130);
    pub const GOLD: RGBColor = RGBColor(200, 150, 0);
}

/// Background colour of a limitation period (the same as the report's verdict chips).
pub fn band_colour(label: Label) -> RGBColor {
    match label {
        Label::ReceiverWindow => RGBColor(253, 208, 162),
        Label::Cwnd => RGBColor(190, 215, 238),
        Label::Bottleneck => RGBColor(245, 180, 180),
        Label::Sender => RGBColor(199, 233, 192),
    }
}

/// A unit for an axis: values are divided by `div` and the axis says `name`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Unit {
    pub div: f64,
    pub name: &'static str,
}

/// The unit for an axis reaching `max` bytes (an axis up to 1.4 MiB reads better in KiB).
pub fn bytes_unit(max: f64) -> Unit {
    bytes_unit_from(max, 1.5)
}

fn bytes_unit_from(max: f64, at: f64) -> Unit {
    const K: f64 = 1024.0;
    if max >= at * K * K * K {
        Unit {
            div: K * K * K,
            name: "GiB",
        }
    } else if max >= at * K * K {
        Unit {
            div: K * K,
            name: "MiB",
        }
    } else if max >= at * K {
        Unit { div: K, name: "KiB" }
    } else {
        Unit {
            div: 1.0,
            name: "bytes",
        }
    }
}

/// The unit for an axis reaching `max_bps`.
pub fn rate_unit(max_bps: f64) -> Unit {
    rate_unit_from(max_bps, 1.5)
}

fn rate_unit_from(max_bps: f64, at: f64) -> Unit {
    if max_bps >= at * 1e9 {
        Unit {
            div: 1e9,
            name: "Gbit/s",
        }
    } else if max_bps >= at * 1e6 {
        Unit {
            div: 1e6,
            name: "Mbit/s",
        }
    } else if max_bps >= at * 1e3 {
        Unit {
            div: 1e3,
            name: "kbit/s",
        }
    } else {
        Unit {
            div: 1.0,
            name: "bit/s",
        }
    }
}

/// A tick label with as many decimals as the tick spacing needs.
pub fn fmt_tick(v: f64, span: f64) -> String {
    let step = span / 10.0;
    let decimals = if step >= 1.0 || step <= 0.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    let s = format!("{v:.decimals$}");
    if s.starts_with('-') && s.trim_start_matches(['-', '0', '.']).is_empty() {
        s[1..].to_string()
    } else {
        s
    }
}

/// What a legend entry looks like.
#[derive(Clone, Copy, Debug)]
pub enum Swatch {
    Line(RGBColor, u32),
    Dashed(RGBColor),
    Band(RGBColor),
    Dot(RGBColor),
    Cross(RGBColor),
    Triangle(RGBColor),
    Bar(RGBColor),
}

pub struct LegendItem {
    pub swatch: Swatch,
    pub label: String,
}

impl LegendItem {
    pub fn new(swatch: Swatch, label: impl Into<String>) -> Self {
        LegendItem {
            swatch,
            label: label.into(),
        }
    }
}

pub type Area<'a, DB> = DrawingArea<DB, Shift>;

/// Errors of any backend, as anyhow errors.
pub fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow::anyhow!("drawing failed: {e:?}")
}

const TITLE_H: u32 = 34;
const LEGEND_ROW_H: u32 = 22;

/// Fills the background, writes the title and the legend above the chart; returns the
/// area left for the chart.
pub fn frame<'a, DB: DrawingBackend>(
    root: &Area<'a, DB>,
    title: &str,
    legend: &[LegendItem],
) -> anyhow::Result<Area<'a, DB>> {
    root.fill(&WHITE).map_err(err)?;
    let title_font = (FONT, 23).into_font().color(&pal::INK);
    root.draw(&Text::new(title.to_string(), (14, 10), title_font))
        .map_err(err)?;
    // Lay the legend out in rows, starting where the plotting area starts.
    let font = (FONT, 17).into_font();
    let left = Y_LABEL_AREA as i32 + 4;
    let right = (WIDTH - RIGHT_MARGIN) as i32;
    let mut rows: Vec<Vec<(i32, &LegendItem)>> = vec![Vec::new()];
    let mut x = left;
    for item in legend {
        let (tw, _) = root
            .estimate_text_size(&item.label, &TextStyle::from(font.clone()))
            .map_err(err)?;
        let w = 26 + tw as i32 + 22;
        if x + w > right && x > left {
            rows.push(Vec::new());
            x = left;
        }
        rows.last_mut().unwrap().push((x, item));
        x += w;
    }
    let rows_h = if legend.is_empty() {
        0
    } else {
        rows.len() as u32 * LEGEND_ROW_H + 6
    };
    for (r, row) in rows.iter().enumerate() {
        let cy = (TITLE_H + r as u32 * LEGEND_ROW_H + LEGEND_ROW_H / 2) as i32 + 2;
        for &(x, item) in row {
            draw_swatch(root, item.swatch, x, cy)?;
            let style = TextStyle::from(font.clone())
                .color(&pal::INK)
                .pos(Pos::new(HPos::Left, VPos::Center));
            root.draw(&Text::new(item.label.clone(), (x + 26, cy), style))
                .map_err(err)?;
        }
    }
    let (_, rest) = root.split_vertically(TITLE_H + rows_h);
    Ok(rest)
}

fn draw_swatch<DB: DrawingBackend>(root: &Area<DB>, s: Swatch, x: i32, cy: i32) -> anyhow::Result<()> {
    let (a, b) = (x, x + 20);
    match s {
        Swatch::Line(c, w) => root.draw(&PathElement::new(vec![(a, cy), (b, cy)], c.stroke_width(w.max(2)))),
        Swatch::Dashed(c) => {
            root.draw(&PathElement::new(vec![(a, cy), (a + 7, cy)], c.stroke_width(2)))
                .map_err(err)?;
            root.draw(&PathElement::new(vec![(a + 12, cy), (b, cy)], c.stroke_width(2)))
        }
        Swatch::Band(c) => root.draw(&Rectangle::new([(a, cy - 7), (b, cy + 7)], c.filled())),
        Swatch::Dot(c) => root.draw(&Circle::new((a + 10, cy), 3, c.filled())),
        Swatch::Cross(c) => root.draw(&Cross::new((a + 10, cy), 5, c.stroke_width(2))),
        Swatch::Triangle(c) => root.draw(&TriangleMarker::new((a + 10, cy), 6, c.filled())),
        Swatch::Bar(c) => root.draw(&PathElement::new(
            vec![(a + 10, cy - 8), (a + 10, cy + 8)],
            c.stroke_width(3),
        )),
    }
    .map_err(err)
}

/// The chart with its mesh: time on x (seconds since the flow's start), `y_desc` on y.
pub fn chart<'a, DB: DrawingBackend>(
    area: &'a Area<DB>,
    x_max: f64,
    y: std::ops::Range<f64>,
    y_desc: &str,
) -> anyhow::Result<ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>> {
    let mut c = ChartBuilder::on(area)
        .margin_right(RIGHT_MARGIN)
        .margin_left(6)
        .margin_top(4)
        .margin_bottom(6)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(0f64..x_max, y.clone())
        .map_err(err)?;
    let (x_span, y_span) = (x_max, y.end - y.start);
    let xf = move |v: &f64| fmt_tick(*v, x_span);
    let yf = move |v: &f64| fmt_tick(*v, y_span);
    c.configure_mesh()
        .x_desc("time since the flow's first packet (s)")
        .y_desc(y_desc)
        .x_labels(14)
        .y_labels(8)
        .x_label_formatter(&xf)
        .y_label_formatter(&yf)
        .label_style((FONT, 17).into_font().color(&pal::INK))
        .axis_desc_style((FONT, 18).into_font().color(&pal::INK))
        .bold_line_style(pal::GRID.stroke_width(1))
        .light_line_style(pal::GRID_MINOR.stroke_width(1))
        .max_light_lines(1)
        .axis_style(pal::GREY.stroke_width(1))
        .draw()
        .map_err(err)?;
    Ok(c)
}

/// Draws the limitation periods as background bands over the whole y range.
pub fn draw_bands<DB: DrawingBackend>(
    c: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    bands: &[(f64, f64, Label)],
    y: std::ops::Range<f64>,
) -> anyhow::Result<()> {
    let x_max = c.x_range().end;
    c.draw_series(bands.iter().filter_map(|&(a, b, l)| {
        let colour = band_colour(l);
        let (a, b) = (a.clamp(0.0, x_max), b.clamp(0.0, x_max));
        (b > a).then(|| Rectangle::new([(a, y.start), (b, y.end)], colour.mix(0.55).filled()))
    }))
    .map_err(err)?;
    Ok(())
}

/// A horizontal dashed line across the chart.
pub fn hline<DB: DrawingBackend>(
    c: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    y: f64,
    colour: RGBColor,
    width: u32,
) -> anyhow::Result<()> {
    let x_max = c.x_range().end;
    c.draw_series(DashedLineSeries::new(
        vec![(0.0, y), (x_max, y)],
        10,
        6,
        colour.stroke_width(width),
    ))
    .map_err(err)?;
    Ok(())
}

/// Rounds an axis maximum up to leave a little headroom.
pub fn headroom(max: f64) -> f64 {
    if max > 0.0 && max.is_finite() {
        max * 1.08
    } else {
        1.0
    }
}
