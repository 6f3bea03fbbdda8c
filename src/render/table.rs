//! Flows as a table (one row per flow, the analyze JSON flattened), built with polars so
//! `analyze --format csv` and batch's flows.csv / flows.parquet share one definition.

use bdpscope::summary::FlowSummary;
use polars::prelude::*;
use std::io::Write;

enum Values {
    Str(Vec<Option<String>>),
    U64(Vec<Option<u64>>),
    F64(Vec<Option<f64>>),
    Bool(Vec<Option<bool>>),
}

struct Table {
    cols: Vec<(&'static str, Values)>,
}

impl Table {
    fn str(&mut self, name: &'static str, v: impl Iterator<Item = Option<String>>) {
        self.cols.push((name, Values::Str(v.collect())));
    }
    fn u64(&mut self, name: &'static str, v: impl Iterator<Item = Option<u64>>) {
        self.cols.push((name, Values::U64(v.collect())));
    }
    fn f64(&mut self, name: &'static str, v: impl Iterator<Item = Option<f64>>) {
        self.cols.push((name, Values::F64(v.collect())));
    }
    fn bool(&mut self, name: &'static str, v: impl Iterator<Item = Option<bool>>) {
        self.cols.push((name, Values::Bool(v.collect())));
    }
}

fn join(v: &[String]) -> Option<String> {
    (!v.is_empty()).then(|| v.join(" | "))
}

/// The flows table. Column names are stable: scripts read them.
pub fn flows_frame(flows: &[FlowSummary]) -> PolarsResult<DataFrame> {
    let mut t = Table { cols: Vec::new() };
    let it = || flows.iter();
    t.str("capture", it().map(|f| Some(f.capture.clone())));
    t.u64("id", it().map(|f| Some(f.id)));
    t.str("client", it().map(|f| Some(f.client.clone())));
    t.str("server", it().map(|f| Some(f.server.clone())));
    t.str("client_from", it().map(|f| Some(f.client_from.as_str().to_string())));
    t.f64("start_ts", it().map(|f| Some(f.start_ts)));
    t.f64("end_ts", it().map(|f| Some(f.end_ts)));
    t.f64("duration_s", it().map(|f| Some(f.duration_s)));
    t.u64("packets", it().map(|f| Some(f.packets)));
    t.bool("handshake_seen", it().map(|f| Some(f.handshake.seen)));
    t.u64("client_wscale", it().map(|f| f.handshake.client_wscale.map(u64::from)));
    t.u64("server_wscale", it().map(|f| f.handshake.server_wscale.map(u64::from)));
    t.u64("client_mss", it().map(|f| f.handshake.client_mss.map(u64::from)));
    t.u64("server_mss", it().map(|f| f.handshake.server_mss.map(u64::from)));
    t.str("window_scaling", it().map(|f| Some(f.handshake.window_scaling.as_str().to_string())));
    t.bool("client_sack_permitted", it().map(|f| f.handshake.client_sack_permitted));
    t.bool("server_sack_permitted", it().map(|f| f.handshake.server_sack_permitted));
    t.bool("client_timestamps", it().map(|f| f.handshake.client_timestamps));
    t.bool("server_timestamps", it().map(|f| f.handshake.server_timestamps));
    t.u64(
        "inferred_client_wscale",
        it().map(|f| {
            f.handshake
                .inferred
                .as_ref()
                .and_then(|i| i.client_wscale)
                .map(u64::from)
        }),
    );
    t.u64(
        "inferred_server_wscale",
        it().map(|f| {
            f.handshake
                .inferred
                .as_ref()
                .and_then(|i| i.server_wscale)
                .map(u64::from)
        }),
    );
    t.str("bulk_direction", it().map(|f| Some(f.bulk_direction.as_str().to_string())));
    t.u64("bytes_c2s", it().map(|f| Some(f.bytes.c2s)));
    t.u64("bytes_s2c", it().map(|f| Some(f.bytes.s2c)));
    t.f64("goodput_bps", it().map(|f| Some(f.goodput_bps)));
    t.u64("rtt_samples", it().map(|f| Some(f.rtt_ms.samples)));
    t.f64("rtt_min_ms", it().map(|f| f.rtt_ms.min));
    t.f64("rtt_median_ms", it().map(|f| f.rtt_ms.median));
    t.f64("rtt_p95_ms", it().map(|f| f.rtt_ms.p95));
    t.f64("rtt_max_ms", it().map(|f| f.rtt_ms.max));
    t.str("vantage", it().map(|f| Some(f.rtt_ms.vantage.as_str().to_string())));
    t.u64("max_flight_bytes", it().map(|f| Some(f.max_flight_bytes)));
    t.u64("sender_max_flight_bytes", it().map(|f| f.sender_max_flight_bytes));
    t.u64("max_rwnd_bytes", it().map(|f| f.max_rwnd_bytes));
    t.u64("retransmitted_segments", it().map(|f| Some(f.retransmitted_segments)));
    t.f64("bottleneck_bps", it().map(|f| f.bottleneck_bps));
    t.str("bottleneck_method", it().map(|f| f.bottleneck_method.map(|m| m.as_str().to_string())));
    t.u64("bdp_bytes", it().map(|f| f.bdp_bytes));
    t.f64(
        "limit_receiver_window",
        it().map(|f| f.limits.map(|l| l.receiver_window)),
    );
    t.f64("limit_cwnd", it().map(|f| f.limits.map(|l| l.cwnd)));
    t.f64("limit_bottleneck", it().map(|f| f.limits.map(|l| l.bottleneck)));
    t.f64("limit_sender", it().map(|f| f.limits.map(|l| l.sender)));
    t.str("verdict", it().map(|f| Some(f.verdict.as_str().to_string())));
    t.str(
        "middlebox",
        it().map(|f| {
            join(
                &f.middlebox
                    .iter()
                    .map(|m| format!("{}:{}:{}", m.kind, m.direction, m.confidence))
                    .collect::<Vec<_>>(),
            )
        }),
    );
    t.str("evidence", it().map(|f| join(&f.evidence)));
    t.str("advice", it().map(|f| join(&f.advice)));
    t.str("notes", it().map(|f| join(&f.notes)));
    t.str("end_state", it().map(|f| Some(f.end_state.as_str().to_string())));
    t.u64(
        "zero_window_advertisements",
        it().map(|f| Some(f.c2s.zero_window_advertisements + f.s2c.zero_window_advertisements)),
    );
    let height = flows.len();
    let columns: Vec<Column> = t
        .cols
        .into_iter()
        .map(|(name, v)| match v {
            Values::Str(v) => Column::new(name.into(), v),
            Values::U64(v) => Column::new(name.into(), v),
            Values::F64(v) => Column::new(name.into(), v),
            Values::Bool(v) => Column::new(name.into(), v),
        })
        .collect();
    DataFrame::new(height, columns)
}


/// `analyze --format csv` written as flows finish: rows are buffered by the thousand and
/// written as one batch (the header with the first), so memory stays constant.
pub struct CsvStream<W: Write> {
    writer: Option<polars::io::csv::write::BatchedWriter<W>>,
    out: Option<W>,
    rows: Vec<FlowSummary>,
}

/// Rows per CSV batch.
const CSV_BATCH: usize = 4096;

impl<W: Write> CsvStream<W> {
    pub fn new(out: W) -> Self {
        CsvStream {
            writer: None,
            out: Some(out),
            rows: Vec::with_capacity(CSV_BATCH),
        }
    }

    pub fn flow(&mut self, f: FlowSummary) -> anyhow::Result<()> {
        self.rows.push(f);
        if self.rows.len() >= CSV_BATCH {
            self.write_rows()?;
        }
        Ok(())
    }

    fn write_rows(&mut self) -> anyhow::Result<()> {
        let df = flows_frame(&self.rows)?;
        if self.writer.is_none() {
            let out = self.out.take().expect("the writer is made once");
            self.writer = Some(CsvWriter::new(out).batched(df.schema())?);
        }
        self.writer.as_mut().expect("made above").write_batch(&df)?;
        self.rows.clear();
        Ok(())
    }

    pub fn finish(mut self) -> anyhow::Result<()> {
        if !self.rows.is_empty() || self.writer.is_none() {
            self.write_rows()?;
        }
        if let Some(mut w) = self.writer.take() {
            w.finish()?;
        }
        Ok(())
    }
}
