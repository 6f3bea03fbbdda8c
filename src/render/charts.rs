//! The data behind a flow's interactive graphs in the HTML report: the series recorder's
//! buckets (see `plot/series.rs`: at most 2048 time buckets per series, each keeping its
//! first, last, lowest and highest sample) as compact JSON, read by the page's script.
//!
//! The page draws what is visible: over the whole flow it thins each series to about two
//! points per pixel column (lowest and highest), and as the time axis is zoomed it draws
//! more of the same data, down to every point sent. What is sent is bounded: at most
//! [`POINT_BUDGET`] points per flow (about 15 bytes of JSON each: under 0.5 MB); a flow whose series
//! hold more has its densest series merged into coarser buckets until it fits.
//!
//! Encoding: times in microseconds since the flow's first packet, each the difference
//! from the previous one (series are in time order); bytes as integers, RTT in ms with
//! microsecond precision.

use crate::plot::bucket::{Bucketed, Range, Sum, M4};
use crate::plot::{Ctx, FlowRecord, Kind};
use bdpscope::summary::{FlowSummary, Label};
use bdpscope::tcp::rtt::RttSource;
use serde::Serialize;
use std::collections::BTreeMap;

/// Points per flow at most, over all its series.
pub const POINT_BUDGET: usize = 32_768;

/// One series: times (delta-coded µs) and one or two value columns.
#[derive(Serialize, Debug, Default)]
struct Series {
    t: Vec<i64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    v: Vec<f64>,
    /// Ranges: the lowest and highest sequence number of the bucket.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    lo: Vec<i64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    hi: Vec<i64>,
    /// Sums: the bucket width (µs), the same for every bucket of the series.
    #[serde(skip_serializing_if = "Option::is_none")]
    w: Option<i64>,
}

impl Series {
    fn len(&self) -> usize {
        self.t.len()
    }
}

/// Where a series comes from, so it can be made again coarser.
#[derive(Clone, Copy)]
enum Source<'a> {
    /// A line or cloud of points (M4 buckets); `ms`: values are milliseconds.
    Line(&'a Bucketed<M4>, bool),
    Ranges(&'a Bucketed<Range>),
    Sums(&'a Bucketed<Sum>),
}

impl Source<'_> {
    fn buckets(&self) -> usize {
        match self {
            Source::Line(b, _) => b.len(),
            Source::Ranges(b) => b.len(),
            Source::Sums(b) => b.len(),
        }
    }
}

/// Delta-codes absolute microsecond times in place.
fn delta(t: &mut [i64]) {
    for i in (1..t.len()).rev() {
        t[i] -= t[i - 1];
    }
}

/// A series from its buckets, merged to at most `buckets`; `us` maps a recorder time (ns
/// after the flow's first segment) to µs after the flow's first packet.
fn emit(us: &dyn Fn(i64) -> i64, src: Source<'_>, buckets: usize) -> Series {
    let mut s = Series::default();
    match src {
        Source::Line(b, ms) => {
            for (_, m) in b.coarsened(buckets).iter() {
                for (t, v) in m.points() {
                    s.t.push(us(t));
                    s.v.push(if ms { (v * 1000.0).round() / 1000.0 } else { v.round() });
                }
            }
        }
        Source::Ranges(b) => {
            for (_, r) in b.coarsened(buckets).iter() {
                s.t.push(us(r.t()));
                s.lo.push(r.lo.round() as i64);
                s.hi.push(r.hi.round() as i64);
            }
        }
        Source::Sums(b) => {
            let c = b.coarsened(buckets);
            s.w = Some((c.width() as f64 / 1e3).round() as i64);
            for (t, sum) in c.iter() {
                s.t.push(us(t));
                s.v.push(sum.sum.round());
            }
        }
    }
    delta(&mut s.t);
    s
}

/// What the page's script needs to draw one flow's four graphs.
#[derive(Serialize, Debug)]
pub struct ChartData {
    id: u64,
    /// Seconds from the flow's first packet to its last.
    x_max: f64,
    bdp: Option<u64>,
    bottleneck_bps: Option<f64>,
    goodput_bps: f64,
    base_rtt_ms: Option<f64>,
    /// The sender's view and the pipe are not drawn across pauses longer than this (s).
    gap_s: f64,
    /// [start s, end s, label] of each limitation period.
    bands: Vec<(f64, f64, String)>,
    series: BTreeMap<&'static str, Series>,
    /// Points sent, and whether the budget made some series coarser.
    points: usize,
    thinned: bool,
}

impl ChartData {
    pub fn new(ctx: &Ctx<'_>) -> ChartData {
        let (f, rec): (&FlowSummary, &FlowRecord) = (ctx.flow, ctx.rec);
        let d = &rec.data;
        let r = &rec.rtt;
        // As the static plots choose: the pipe only away from the receiver, the
        // smoothed RTT of the loop that sees the queue.
        let near_receiver = f.near_receiver();
        let far = crate::plot::far_loop(r);
        let mut sources: Vec<(&'static str, Source<'_>)> = vec![
            ("seg", Source::Ranges(&d.segments)),
            ("rex", Source::Ranges(&d.retransmissions)),
            ("sack", Source::Ranges(&d.sacks)),
            ("ack", Source::Line(&d.ack, false)),
            ("edge", Source::Line(&d.edge, false)),
            ("zero", Source::Line(&d.zero_windows, false)),
            ("sflight", Source::Line(&d.sender_flight, false)),
            ("flight", Source::Line(&d.flight, false)),
            ("rwnd", Source::Line(&d.rwnd, false)),
            ("delivered", Source::Sums(&d.delivered)),
            ("sent", Source::Sums(&d.sent)),
        ];
        if d.retransmitted_segments > 0 && !near_receiver {
            sources.push(("pipe", Source::Line(&d.pipe, false)));
        }
        for (src, key) in [
            (RttSource::DataAck, "rtt_data"),
            (RttSource::TsEcho, "rtt_ts"),
            (RttSource::Handshake, "rtt_hs"),
        ] {
            let [a, b] = r.of_source(src);
            // Both loops' samples are end-to-end estimates: one cloud per source.
            let key_b: &'static str = match key {
                "rtt_data" => "rtt_data2",
                "rtt_ts" => "rtt_ts2",
                _ => "rtt_hs2",
            };
            sources.push((key, Source::Line(a, true)));
            sources.push((key_b, Source::Line(b, true)));
        }
        if let Some(i) = far {
            sources.push(("srtt", Source::Line(&r.smoothed[i], true)));
        }
        sources.retain(|(_, s)| s.buckets() > 0);

        let us = |t: i64| (ctx.x(t) * 1e6).round() as i64;
        let just: Vec<Source<'_>> = sources.iter().map(|(_, s)| *s).collect();
        let (series, thinned) = fit(&just, &us, POINT_BUDGET);
        let points = series.iter().map(Series::len).sum();
        ChartData {
            id: f.id,
            x_max: ctx.x_max,
            bdp: f.bdp_bytes.filter(|b| *b > 0),
            bottleneck_bps: f.bottleneck_bps,
            goodput_bps: f.goodput_bps,
            base_rtt_ms: f.rtt_ms.min,
            gap_s: f.rtt_ms.min.map_or(0.2, |ms| (ms / 1000.0).max(0.005)) * 1.5,
            bands: ctx.bands().into_iter().map(|(a, b, l)| (a, b, l.to_string())).collect(),
            series: sources.iter().map(|(k, _)| *k).zip(series).collect(),
            points,
            thinned,
        }
    }

    /// The JSON, safe inside a `<script>` element (no `</` can close it).
    pub fn to_script_json(&self) -> String {
        serde_json::to_string(self)
            .expect("chart data serialises")
            .replace("</", "<\\/")
    }
}

/// A legend swatch: a shape and one of the stylesheet's colours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swatch {
    Line(&'static str),
    Dashed(&'static str),
    Bar(&'static str),
    Dot(&'static str),
    Band(&'static str),
}

impl Swatch {
    /// The CSS classes (`sw` plus these) that draw it.
    pub fn class(self) -> String {
        match self {
            Swatch::Line(c) => format!("line c-{c}"),
            Swatch::Dashed(c) => format!("dash c-{c}"),
            Swatch::Bar(c) => format!("c-{c}"),
            Swatch::Dot(c) => format!("dot c-{c}"),
            Swatch::Band(c) => format!("v-{c}"),
        }
    }
}

/// Each graph's legend, in the order the report shows the graphs. The words and numbers
/// are the static plots' (plot/*.rs), the numbers written by `bdpscope::units`.
pub fn legend(ctx: &Ctx<'_>) -> Vec<(Kind, Vec<(Swatch, String)>)> {
    use bdpscope::units::{bits, bytes, ms};
    let (f, d, r) = (ctx.flow, &ctx.rec.data, &ctx.rec.rtt);
    let rexmits = d.retransmitted_segments;
    let mut flight = Vec::new();
    if !d.sender_flight.is_empty() {
        flight.push((Swatch::Line("blue"), "flight (sender's view)".to_string()));
        flight.push((Swatch::Line("lightblue"), "flight at the capture point".to_string()));
    } else {
        flight.push((Swatch::Line("blue"), "flight at the capture point".to_string()));
    }
    if !d.rwnd.is_empty() {
        // As the static plot: a window far above both flight and the BDP is off the top.
        let top = |s: &Bucketed<M4>| s.iter().map(|(_, b)| b.max.1).fold(0.0, f64::max);
        let near = top(&d.sender_flight)
            .max(top(&d.flight))
            .max(f.bdp_bytes.unwrap_or(0) as f64);
        let rwnd_max = top(&d.rwnd);
        flight.push((
            Swatch::Line("orange"),
            if near > 0.0 && rwnd_max > 1.6 * near {
                format!(
                    "advertised receive window (up to {}; off the top where far above the flight)",
                    bytes(rwnd_max)
                )
            } else {
                "advertised receive window".to_string()
            },
        ));
    }
    if rexmits > 0 && !f.near_receiver() && !d.pipe.is_empty() {
        flight.push((Swatch::Line("green"), "pipe (RFC 6675, SACK-aware)".to_string()));
    }
    match (f.bdp_bytes.filter(|b| *b > 0), f.bottleneck_bps, f.rtt_ms.min) {
        (Some(b), Some(rate), Some(rtt)) => flight.push((
            Swatch::Dashed("ink"),
            format!("BDP {} = {} × {}", bytes(b as f64), bits(rate), ms(rtt / 1000.0)),
        )),
        (Some(b), _, _) => flight.push((Swatch::Dashed("ink"), format!("BDP {}", bytes(b as f64)))),
        _ => {}
    }
    if rexmits > 0 {
        flight.push((Swatch::Bar("red"), format!("retransmissions ({rexmits})")));
    }
    for &l in Label::ALL {
        if f.periods.iter().any(|p| p.label == l) {
            flight.push((Swatch::Band(l.as_str()), l.to_string()));
        }
    }

    let mut rtt = Vec::new();
    for (src, colour, label) in [
        (RttSource::DataAck, "blue", "data/ACK samples"),
        (RttSource::TsEcho, "orange", "timestamp-echo samples"),
        (RttSource::Handshake, "ink", "handshake"),
    ] {
        if r.of_source(src).iter().any(|s| !s.is_empty()) {
            rtt.push((Swatch::Dot(colour), label.to_string()));
        }
    }
    let smoothed = crate::plot::far_loop(r).is_some();
    if smoothed {
        rtt.push((Swatch::Line("red"), "smoothed RTT (RFC 6298)".to_string()));
    }
    if let Some(b) = f.rtt_ms.min {
        rtt.push((Swatch::Dashed("ink"), format!("base RTT {}", ms(b / 1000.0))));
        if smoothed {
            rtt.push((Swatch::Bar("queue"), "queueing delay".to_string()));
        }
    }
    if r.count == 0 {
        rtt.push((Swatch::Dot("grey"), "no RTT samples in this flow".to_string()));
    }

    let mut goodput = vec![
        (
            Swatch::Line("blue"),
            "goodput (bytes delivered per interval: see the tooltip)".to_string(),
        ),
        (Swatch::Line("grey"), "new data seen at the capture point".to_string()),
    ];
    if let Some(label) = crate::plot::bottleneck_label(f) {
        goodput.push((Swatch::Dashed("red"), label));
    }
    goodput.push((Swatch::Dashed("blue"), format!("mean goodput {}", bits(f.goodput_bps))));

    let mut timeseq = vec![(Swatch::Bar("blue"), "data segments".to_string())];
    if !d.ack.is_empty() {
        timeseq.push((Swatch::Line("green"), "cumulative ACK".to_string()));
    }
    if !d.edge.is_empty() {
        timeseq.push((Swatch::Line("gold"), "receive window edge (ACK + window)".to_string()));
    }
    if !d.sacks.is_empty() {
        timeseq.push((Swatch::Bar("purple"), "SACK blocks".to_string()));
    }
    if rexmits > 0 {
        timeseq.push((Swatch::Bar("red"), format!("retransmissions ({rexmits})")));
    }
    if d.zero_window_adverts > 0 {
        timeseq.push((
            Swatch::Bar("magenta"),
            format!("zero window ({})", d.zero_window_adverts),
        ));
    }
    vec![
        (Kind::Flight, flight),
        (Kind::Rtt, rtt),
        (Kind::Throughput, goodput),
        (Kind::TimeSeq, timeseq),
    ]
}

/// Every series at the recorder's resolution when they fit in `budget` points; else the
/// series with the most points is merged into half as many buckets, again until they
/// fit. Returns the series and whether any was made coarser.
fn fit(sources: &[Source<'_>], us: &dyn Fn(i64) -> i64, budget: usize) -> (Vec<Series>, bool) {
    let mut caps: Vec<usize> = sources.iter().map(Source::buckets).collect();
    let mut series: Vec<Series> = sources.iter().zip(&caps).map(|(s, &c)| emit(us, *s, c)).collect();
    let mut thinned = false;
    while series.iter().map(Series::len).sum::<usize>() > budget {
        let Some((i, _)) = series
            .iter()
            .enumerate()
            .filter(|(i, _)| caps[*i] > 2)
            .max_by_key(|(_, s)| s.len())
        else {
            break;
        };
        caps[i] /= 2;
        series[i] = emit(us, sources[i], caps[i]);
        thinned = true;
    }
    (series, thinned)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A noisy series: `n` samples over 10 s, each bucket keeping 4 distinct points.
    fn noisy(n: i64) -> Bucketed<M4> {
        let mut b = Bucketed::default();
        for i in 0..n {
            b.add(i * 10_000_000_000 / n, ((i * 7919) % 1000) as f64);
        }
        b
    }

    #[test]
    fn series_are_merged_until_they_fit_the_budget() {
        let big: Vec<Bucketed<M4>> = (0..16).map(|_| noisy(200_000)).collect();
        let small = noisy(50);
        let mut sources: Vec<Source<'_>> = big.iter().map(|b| Source::Line(b, false)).collect();
        sources.push(Source::Line(&small, false));
        let us = |t: i64| t / 1000;
        let (full, _) = fit(&sources, &us, usize::MAX);
        let all: usize = full.iter().map(Series::len).sum();
        assert!(all > 2 * POINT_BUDGET, "{all} points before");
        let (fitted, thinned) = fit(&sources, &us, POINT_BUDGET);
        let n: usize = fitted.iter().map(Series::len).sum();
        assert!(thinned && n <= POINT_BUDGET && n > POINT_BUDGET / 2, "{n} points");
        assert_eq!(fitted[16].len(), 50, "the small series keeps every point");
        assert!(
            fitted[..16].iter().all(|s| s.len() > 500),
            "every big one is still drawn"
        );
        // Times stay in order after delta coding (no negative step).
        assert!(fitted.iter().all(|s| s.t.iter().skip(1).all(|d| *d >= 0)));
    }
}
