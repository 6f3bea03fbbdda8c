//! The flows table: one row per flow, typed for analysts (see `docs/tables.md`): capture
//! times as UTC timestamps, each end as an address and a port, integers as wide as their
//! field (a window scale is a `u8`), fractions named `*_share`, lists as lists and the
//! structured advice as a list of structs, the per-direction counters of the JSON.
//!
//! One definition for every view: batch's Parquet, the Python package and Spark take the
//! frame as it is; CSV has no lists, so [`csv_view`] turns each list into its items
//! joined with ` | ` (empty when there are none, as before) and `advice_items` into a
//! JSON array of its structs. Both CSVs (`analyze --format csv`, batch's flows.csv) are
//! that view of this frame.

use crate::summary::{AdviceItem, DirectionSummary, FlowSummary};
use polars::prelude::*;
use std::net::SocketAddr;

/// The separator of a list's items in a CSV cell.
pub const CSV_LIST_SEPARATOR: &str = " | ";

/// Columns being built, in order.
struct Columns {
    height: usize,
    cols: Vec<Column>,
}

/// Capture time (seconds since the epoch, as the summaries hold it) in microseconds: the
/// resolution every engine reads (Spark's timestamps are microseconds), and finer than a
/// float of seconds near 2^31 keeps (its step is 0.24 us).
fn micros(secs: f64) -> i64 {
    (secs * 1e6).round() as i64
}

impl Columns {
    fn push(&mut self, c: impl IntoColumn) {
        self.cols.push(c.into_column());
    }
    /// A column of plain values; its type is the values' (`Option<u8>` makes a `u8`
    /// column, `Option<&str>` a string column), nulls where `None`.
    fn col<T>(&mut self, name: &'static str, v: impl Iterator<Item = Option<T>>)
    where
        Series: NamedFrom<Vec<Option<T>>, [Option<T>]>,
    {
        self.push(Column::new(name.into(), v.collect::<Vec<_>>()));
    }
    /// A capture time, seconds since the epoch, as a UTC timestamp (microseconds).
    fn time(&mut self, name: &'static str, v: impl Iterator<Item = Option<f64>>) {
        let us: Int64Chunked = v.map(|t| t.map(micros)).collect();
        let ts = us
            .with_name(name.into())
            .into_datetime(TimeUnit::Microseconds, Some(TimeZone::UTC));
        self.push(ts.into_series());
    }
    /// A list of strings per row.
    fn strings<'a, I>(&mut self, name: &'static str, v: impl Iterator<Item = I>)
    where
        I: Iterator<Item = &'a str>,
    {
        let mut b = ListStringChunkedBuilder::new(name.into(), self.height, self.height * 2);
        for items in v {
            b.append_values_iter(items);
        }
        self.push(b.finish().into_series());
    }
    /// A list of numbers per row.
    fn floats(&mut self, name: &'static str, v: impl Iterator<Item = Vec<f64>>) {
        let mut b = ListPrimitiveChunkedBuilder::<Float64Type>::new(
            name.into(),
            self.height,
            self.height * 2,
            DataType::Float64,
        );
        for items in v {
            b.append_slice(&items);
        }
        self.push(b.finish().into_series());
    }
    /// The structured advice of each row.
    fn advice(&mut self, name: &'static str, flows: &[FlowSummary]) -> PolarsResult<()> {
        let dtype = DataType::List(Box::new(advice_struct_dtype()));
        let list: ListChunked = if flows.is_empty() {
            ListChunked::full_null_with_dtype(name.into(), 0, &advice_struct_dtype())
        } else {
            flows
                .iter()
                .map(|f| advice_struct(&f.advice_items).map(Some))
                .collect::<PolarsResult<ListChunked>>()?
        };
        self.push(list.with_name(name.into()).into_series().cast(&dtype)?);
        Ok(())
    }
}

/// The fields of one `advice_items` entry (its sentence is the same row's `advice` entry
/// at the same index).
fn advice_struct_dtype() -> DataType {
    DataType::Struct(vec![
        Field::new("kind".into(), DataType::String),
        Field::new("knob".into(), DataType::String),
        Field::new("current_bytes".into(), DataType::UInt64),
        Field::new("recommended_bytes".into(), DataType::UInt64),
        Field::new("expected_bps".into(), DataType::Float64),
        Field::new("expected_gain".into(), DataType::Float64),
        Field::new("lower_bound".into(), DataType::Boolean),
    ])
}

fn advice_struct(items: &[AdviceItem]) -> PolarsResult<Series> {
    let fields = [
        Series::new("kind".into(), items.iter().map(|a| a.kind.as_str()).collect::<Vec<_>>()),
        Series::new("knob".into(), items.iter().map(|a| a.knob.clone()).collect::<Vec<_>>()),
        Series::new(
            "current_bytes".into(),
            items.iter().map(|a| a.current_bytes).collect::<Vec<_>>(),
        ),
        Series::new(
            "recommended_bytes".into(),
            items.iter().map(|a| a.recommended_bytes).collect::<Vec<_>>(),
        ),
        Series::new(
            "expected_bps".into(),
            items.iter().map(|a| a.expected_bps).collect::<Vec<_>>(),
        ),
        Series::new(
            "expected_gain".into(),
            items.iter().map(|a| a.expected_gain).collect::<Vec<_>>(),
        ),
        Series::new(
            "lower_bound".into(),
            items.iter().map(|a| a.lower_bound).collect::<Vec<_>>(),
        ),
    ];
    // An empty list still carries the struct's field types.
    let fields: Vec<Series> = fields
        .into_iter()
        .zip(match advice_struct_dtype() {
            DataType::Struct(f) => f,
            _ => unreachable!("a struct"),
        })
        .map(|(s, f)| s.cast(f.dtype()))
        .collect::<PolarsResult<_>>()?;
    Ok(StructChunked::from_series("".into(), items.len(), fields.iter())?.into_series())
}

/// An end `10.0.0.1:40000` / `[fd00::1]:40000` as its address and port (the address
/// alone, port none, if it is not in that form).
fn split_end(end: &str) -> (String, Option<u16>) {
    match end.parse::<SocketAddr>() {
        Ok(a) => (a.ip().to_string(), Some(a.port())),
        Err(_) => (end.to_string(), None),
    }
}

/// The flows table. Column names are stable (scripts read them); `docs/tables.md` lists
/// them with their types, and the names of the version before.
pub fn flows_frame(flows: &[FlowSummary]) -> PolarsResult<DataFrame> {
    let mut t = Columns {
        height: flows.len(),
        cols: Vec::with_capacity(100),
    };
    let it = || flows.iter();
    let ends: Vec<((String, Option<u16>), (String, Option<u16>))> =
        it().map(|f| (split_end(&f.client), split_end(&f.server))).collect();
    t.col("capture", it().map(|f| Some(f.capture.as_str())));
    t.col("id", it().map(|f| Some(f.id)));
    t.col("client_addr", ends.iter().map(|e| Some(e.0 .0.as_str())));
    t.col("client_port", ends.iter().map(|e| e.0 .1));
    t.col("server_addr", ends.iter().map(|e| Some(e.1 .0.as_str())));
    t.col("server_port", ends.iter().map(|e| e.1 .1));
    t.col("client_from", it().map(|f| Some(f.client_from.as_str())));
    t.col("first_frame", it().map(|f| Some(f.first_frame)));
    t.time("start_ts", it().map(|f| Some(f.start_ts)));
    t.time("end_ts", it().map(|f| Some(f.end_ts)));
    t.col("duration_s", it().map(|f| Some(f.duration_s)));
    t.col("packets", it().map(|f| Some(f.packets)));
    let hs = || it().map(|f| &f.handshake);
    t.col("handshake_seen", hs().map(|h| Some(h.seen)));
    t.col("client_wscale", hs().map(|h| h.client_wscale));
    t.col("server_wscale", hs().map(|h| h.server_wscale));
    t.col("client_mss", hs().map(|h| h.client_mss));
    t.col("server_mss", hs().map(|h| h.server_mss));
    t.col("window_scaling", hs().map(|h| Some(h.window_scaling.as_str())));
    t.col("client_sack_permitted", hs().map(|h| h.client_sack_permitted));
    t.col("server_sack_permitted", hs().map(|h| h.server_sack_permitted));
    t.col("client_timestamps", hs().map(|h| h.client_timestamps));
    t.col("server_timestamps", hs().map(|h| h.server_timestamps));
    t.col("syn_retransmissions", hs().map(|h| Some(h.syn_retransmissions)));
    let inferred = || hs().map(|h| h.inferred.as_ref());
    t.col(
        "inferred_client_wscale",
        inferred().map(|i| i.and_then(|i| i.client_wscale)),
    );
    t.col(
        "inferred_server_wscale",
        inferred().map(|i| i.and_then(|i| i.server_wscale)),
    );
    t.col(
        "inferred_wscale_confidence",
        inferred().map(|i| i.map(|i| i.confidence.as_str())),
    );
    t.col("bulk_direction", it().map(|f| Some(f.bulk_direction.as_str())));
    t.col("bytes_c2s", it().map(|f| Some(f.bytes.c2s)));
    t.col("bytes_s2c", it().map(|f| Some(f.bytes.s2c)));
    // Empty where it was not measured (data in one flight and no round trip timed: the
    // analysis's 0 for bytes sent is no rate, see `summarize::goodput`).
    t.col(
        "goodput_bps",
        it().map(|f| {
            Some(f.goodput_bps).filter(|&g| g > 0.0 || f.nothing_delivered || f.dir(f.bulk_direction).bytes == 0)
        }),
    );
    let rtt = || it().map(|f| &f.rtt_ms);
    t.col("rtt_samples", rtt().map(|r| Some(r.samples)));
    t.col("rtt_min_ms", rtt().map(|r| r.min));
    t.col("rtt_median_ms", rtt().map(|r| r.median));
    t.col("rtt_p95_ms", rtt().map(|r| r.p95));
    t.col("rtt_max_ms", rtt().map(|r| r.max));
    t.col("rtt_via_client_min_ms", rtt().map(|r| r.via_client_min));
    t.col("rtt_via_server_min_ms", rtt().map(|r| r.via_server_min));
    t.col("vantage", rtt().map(|r| Some(r.vantage.as_str())));
    // Empty where the capture lacks the receiver's acknowledgments (`acks_lacking` in the
    // JSON): data sent less the ACKs seen is no flight then.
    t.col("max_flight_bytes", it().map(|f| f.max_flight_bytes));
    t.col("sender_max_flight_bytes", it().map(|f| f.sender_max_flight_bytes));
    t.col("max_rwnd_bytes", it().map(|f| f.max_rwnd_bytes));
    t.col("retransmitted_segments", it().map(|f| Some(f.retransmitted_segments)));
    t.col("bottleneck_bps", it().map(|f| f.bottleneck_bps));
    t.col(
        "bottleneck_method",
        it().map(|f| f.bottleneck_method.map(|m| m.as_str())),
    );
    t.col(
        "bottleneck_lower_bound",
        it().map(|f| f.capacity.as_ref().map(|c| c.lower_bound)),
    );
    t.col("bdp_bytes", it().map(|f| f.bdp_bytes));
    t.col("bdp_segment_ms", it().map(|f| f.bdp_segment_ms));
    t.col(
        "receiver_window_share",
        it().map(|f| f.limits.map(|l| l.receiver_window)),
    );
    t.col("cwnd_share", it().map(|f| f.limits.map(|l| l.cwnd)));
    t.col("bottleneck_share", it().map(|f| f.limits.map(|l| l.bottleneck)));
    t.col("sender_share", it().map(|f| f.limits.map(|l| l.sender)));
    t.col(
        "standing_queue_share",
        it().map(|f| f.queue.as_ref().map(|q| q.standing_share)),
    );
    t.col("queue_delay_ms", it().map(|f| f.queue.as_ref().map(|q| q.delay_ms)));
    t.col("verdict", it().map(|f| Some(f.verdict.as_str())));
    let middlebox: Vec<Vec<String>> = it()
        .map(|f| {
            f.middlebox
                .iter()
                .map(|m| format!("{}:{}:{}", m.kind, m.direction, m.confidence))
                .collect()
        })
        .collect();
    t.strings("middlebox", middlebox.iter().map(|m| m.iter().map(String::as_str)));
    t.strings("evidence", it().map(|f| f.evidence.iter().map(String::as_str)));
    t.strings("advice", it().map(|f| f.advice.iter().map(String::as_str)));
    t.advice("advice_items", flows)?;
    t.strings("notes", it().map(|f| f.notes.iter().map(String::as_str)));
    t.strings("stalls", it().map(|f| f.stalls.iter().map(|s| s.kind.as_str())));
    t.col("end_state", it().map(|f| Some(f.end_state.as_str())));
    t.col(
        "zero_window_advertisements",
        it().map(|f| Some(f.c2s.zero_window_advertisements + f.s2c.zero_window_advertisements)),
    );
    direction(&mut t, flows, "c2s", |f| &f.c2s);
    direction(&mut t, flows, "s2c", |f| &f.s2c);
    // Schema 3: ECN, appended (the columns before keep their places).
    t.col("client_ecn", hs().map(|h| h.client_ecn.map(|e| e.as_str())));
    t.col("server_ecn", hs().map(|h| h.server_ecn.map(|e| e.as_str())));
    t.col("ecn", hs().map(|h| Some(h.ecn.as_str())));
    direction_ecn(&mut t, flows, "c2s", |f| &f.c2s);
    direction_ecn(&mut t, flows, "s2c", |f| &f.s2c);
    // Added after the direction blocks (columns are appended, never moved).
    t.col("c2s_capture_duplicates", it().map(|f| Some(f.c2s.capture_duplicates)));
    t.col("s2c_capture_duplicates", it().map(|f| Some(f.s2c.capture_duplicates)));
    // Schema 4: the flight the path carried (RFC 6675 pipe), appended.
    t.col(
        "sender_max_in_network_bytes",
        it().map(|f| f.sender_max_in_network_bytes),
    );
    t.col("c2s_max_in_network_bytes", it().map(|f| f.c2s.max_in_network_bytes));
    t.col("s2c_max_in_network_bytes", it().map(|f| f.s2c.max_in_network_bytes));
    // Schema 5: how long each stall of `stalls` lasted (the same order), appended: what
    // batch's summary ranks the longest stalls by, and an analyst's query needs.
    t.floats(
        "stall_durations_s",
        it().map(|f| f.stalls.iter().map(|s| s.duration_s).collect()),
    );
    // Schema 6: what the JSON's `idle_turns`, `sender_transit_bytes`, `sender_near_loop_ms`
    // and `{c2s,s2c}.acks_lacking` say, appended: whose turn the sender's pauses were, what
    // the path beside the capture point held, and how long the capture lacked the ACKs.
    let turns = || it().map(|f| f.idle_turns.as_ref());
    t.col("idle_s", turns().map(|t| t.map(|t| t.idle_s)));
    t.col("idle_answered_s", turns().map(|t| t.map(|t| t.answered_s)));
    t.col("idle_pauses", turns().map(|t| t.map(|t| t.pauses)));
    t.col("idle_answered_pauses", turns().map(|t| t.map(|t| t.answered)));
    t.col(
        "idle_median_answer_ms",
        turns().map(|t| t.and_then(|t| t.median_answer_ms)),
    );
    t.col(
        "idle_median_after_answer_ms",
        turns().map(|t| t.and_then(|t| t.median_after_answer_ms)),
    );
    t.col("sender_transit_bytes", it().map(|f| f.sender_transit_bytes));
    t.col("sender_near_loop_ms", it().map(|f| f.sender_near_loop_ms));
    t.col(
        "c2s_acks_lacking_s",
        it().map(|f| f.c2s.acks_lacking.as_ref().map(|a| a.seconds)),
    );
    t.col(
        "s2c_acks_lacking_s",
        it().map(|f| f.s2c.acks_lacking.as_ref().map(|a| a.seconds)),
    );
    let height = flows.len();
    DataFrame::new(height, t.cols)
}

/// The per-direction counters of the JSON's `c2s` / `s2c`, as `c2s_packets`, ...
fn direction(t: &mut Columns, flows: &[FlowSummary], dir: &str, of: fn(&FlowSummary) -> &DirectionSummary) {
    // Names live as long as the table's column names must ('static): one leaked string per
    // name, made once.
    let name = |field: &str| -> &'static str { direction_column(dir, field) };
    let d = || flows.iter().map(of);
    t.col(name("packets"), d().map(|d| Some(d.packets)));
    t.col(name("data_segments"), d().map(|d| Some(d.data_segments)));
    t.col(name("bytes"), d().map(|d| Some(d.bytes)));
    t.col(
        name("retransmitted_segments"),
        d().map(|d| Some(d.retransmitted_segments)),
    );
    t.col(name("retransmitted_bytes"), d().map(|d| Some(d.retransmitted_bytes)));
    t.col(name("duplicate_acks"), d().map(|d| Some(d.duplicate_acks)));
    t.col(name("reordered_segments"), d().map(|d| Some(d.reordered_segments)));
    t.col(
        name("zero_window_advertisements"),
        d().map(|d| Some(d.zero_window_advertisements)),
    );
    t.col(name("zero_window_probes"), d().map(|d| Some(d.zero_window_probes)));
    t.col(name("window_full_events"), d().map(|d| Some(d.window_full_events)));
    t.col(name("max_flight_bytes"), d().map(|d| d.max_flight_bytes));
    t.col(name("max_segment_bytes"), d().map(|d| Some(d.max_segment_bytes)));
    t.col(name("max_rwnd_bytes"), d().map(|d| d.max_rwnd_bytes));
    t.col(name("min_rwnd_bytes"), d().map(|d| d.min_rwnd_bytes));
    t.time(name("first_data_ts"), d().map(|d| d.first_data_ts));
    t.time(name("last_data_ts"), d().map(|d| d.last_data_ts));
}

/// The per-direction ECN counters of the JSON's `c2s` / `s2c` (schema 3).
fn direction_ecn(t: &mut Columns, flows: &[FlowSummary], dir: &str, of: fn(&FlowSummary) -> &DirectionSummary) {
    let name = |field: &str| -> &'static str { direction_column(dir, field) };
    let d = || flows.iter().map(of);
    t.col(name("ect0_segments"), d().map(|d| Some(d.ect0_segments)));
    t.col(name("ect1_segments"), d().map(|d| Some(d.ect1_segments)));
    t.col(name("ce_segments"), d().map(|d| Some(d.ce_segments)));
    t.col(name("first_ce_frame"), d().map(|d| d.first_ce_frame));
    t.time(name("first_ce_ts"), d().map(|d| d.first_ce_ts));
    t.time(name("last_ce_ts"), d().map(|d| d.last_ce_ts));
    t.col(name("ece_acks"), d().map(|d| Some(d.ece_acks)));
    t.time(name("first_ece_ts"), d().map(|d| d.first_ece_ts));
    t.time(name("last_ece_ts"), d().map(|d| d.last_ece_ts));
    t.col(name("cwr_segments"), d().map(|d| Some(d.cwr_segments)));
    t.time(name("first_cwr_ts"), d().map(|d| d.first_cwr_ts));
    t.time(name("last_cwr_ts"), d().map(|d| d.last_cwr_ts));
}

/// `{dir}_{field}` for the two directions, as static names.
fn direction_column(dir: &str, field: &str) -> &'static str {
    macro_rules! names {
        ($($f:literal),*) => {
            match (dir, field) {
                $(("c2s", $f) => concat!("c2s_", $f), ("s2c", $f) => concat!("s2c_", $f),)*
                _ => unreachable!("a direction column: {dir}_{field}"),
            }
        };
    }
    names!(
        "packets",
        "data_segments",
        "bytes",
        "retransmitted_segments",
        "retransmitted_bytes",
        "duplicate_acks",
        "reordered_segments",
        "zero_window_advertisements",
        "zero_window_probes",
        "window_full_events",
        "max_flight_bytes",
        "max_segment_bytes",
        "max_rwnd_bytes",
        "min_rwnd_bytes",
        "first_data_ts",
        "last_data_ts",
        "ect0_segments",
        "ect1_segments",
        "ce_segments",
        "first_ce_frame",
        "first_ce_ts",
        "last_ce_ts",
        "ece_acks",
        "first_ece_ts",
        "last_ece_ts",
        "cwr_segments",
        "first_cwr_ts",
        "last_cwr_ts"
    )
}

/// The CSV shape of a flows frame: every list of strings as one cell (items joined with
/// [`CSV_LIST_SEPARATOR`], empty for an empty list), a list of structs as a JSON array of
/// objects; other columns as they are.
pub fn csv_view(df: &DataFrame) -> PolarsResult<DataFrame> {
    let columns = df
        .columns()
        .iter()
        .map(|c| match c.dtype() {
            DataType::List(inner) if matches!(**inner, DataType::String) => joined(c),
            DataType::List(inner) if matches!(**inner, DataType::Float64) => joined_numbers(c),
            DataType::List(inner) if matches!(**inner, DataType::Struct(_)) => json_objects(c),
            _ => Ok(c.clone()),
        })
        .collect::<PolarsResult<Vec<_>>>()?;
    DataFrame::new(df.height(), columns)
}

fn joined(c: &Column) -> PolarsResult<Column> {
    let list = c.list()?;
    let cells: Vec<Option<String>> = list
        .amortized_iter()
        .map(|row| -> PolarsResult<Option<String>> {
            let Some(items) = row else { return Ok(None) };
            let items = items.as_ref();
            let items: Vec<&str> = items.str()?.iter().flatten().collect();
            Ok((!items.is_empty()).then(|| items.join(CSV_LIST_SEPARATOR)))
        })
        .collect::<PolarsResult<_>>()?;
    Ok(Column::new(c.name().clone(), cells))
}

/// A list of numbers as its items joined, each in its shortest exact form (`0.25 | 12`).
fn joined_numbers(c: &Column) -> PolarsResult<Column> {
    let list = c.list()?;
    let cells: Vec<Option<String>> = list
        .amortized_iter()
        .map(|row| -> PolarsResult<Option<String>> {
            let Some(items) = row else { return Ok(None) };
            let items: Vec<String> = items.as_ref().f64()?.iter().flatten().map(|x| x.to_string()).collect();
            Ok((!items.is_empty()).then(|| items.join(CSV_LIST_SEPARATOR)))
        })
        .collect::<PolarsResult<_>>()?;
    Ok(Column::new(c.name().clone(), cells))
}

fn json_objects(c: &Column) -> PolarsResult<Column> {
    let list = c.list()?;
    let cells: Vec<Option<String>> = list
        .amortized_iter()
        .map(|row| -> PolarsResult<Option<String>> {
            let Some(items) = row else { return Ok(None) };
            let items = items.as_ref();
            if items.is_empty() {
                return Ok(None);
            }
            let fields = items.struct_()?.fields_as_series();
            let objects: Vec<serde_json::Value> = (0..items.len())
                .map(|i| {
                    let object = fields
                        .iter()
                        .map(|f| Ok((f.name().to_string(), json_value(f.get(i)?))))
                        .collect::<PolarsResult<serde_json::Map<_, _>>>()?;
                    Ok(serde_json::Value::Object(object))
                })
                .collect::<PolarsResult<_>>()?;
            Ok(Some(serde_json::Value::Array(objects).to_string()))
        })
        .collect::<PolarsResult<_>>()?;
    Ok(Column::new(c.name().clone(), cells))
}

/// A struct field's value as JSON writes it (the types `advice_items` has).
fn json_value(v: AnyValue) -> serde_json::Value {
    match v {
        AnyValue::Null => serde_json::Value::Null,
        AnyValue::Boolean(b) => b.into(),
        AnyValue::UInt64(n) => n.into(),
        AnyValue::Float64(x) => x.into(),
        AnyValue::String(s) => s.into(),
        AnyValue::StringOwned(s) => s.as_str().into(),
        other => other.to_string().into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_split_into_address_and_port() {
        assert_eq!(split_end("10.0.0.1:40000"), ("10.0.0.1".into(), Some(40000)));
        assert_eq!(split_end("[fd00::1]:443"), ("fd00::1".into(), Some(443)));
        assert_eq!(split_end("odd"), ("odd".into(), None));
    }

    #[test]
    fn capture_times_are_utc_microseconds() {
        assert_eq!(micros(1_700_000_000.123_456), 1_700_000_000_123_456);
        assert_eq!(micros(-0.5), -500_000);
    }

    #[test]
    fn an_empty_table_has_every_column_typed() {
        let nested = flows_frame(&[]).unwrap();
        for df in [nested.clone(), csv_view(&nested).unwrap()] {
            assert_eq!(df.height(), 0);
            for (name, dtype) in df.schema().iter() {
                assert!(!matches!(dtype, DataType::Null), "{name} untyped");
                if let DataType::List(inner) = dtype {
                    assert!(!matches!(**inner, DataType::Null), "{name} untyped");
                }
            }
            let t = df.column("start_ts").unwrap().dtype().clone();
            assert_eq!(t, DataType::Datetime(TimeUnit::Microseconds, Some(TimeZone::UTC)));
        }
        assert_eq!(
            nested.column("advice_items").unwrap().dtype(),
            &DataType::List(Box::new(advice_struct_dtype()))
        );
        assert_eq!(nested.column("client_wscale").unwrap().dtype(), &DataType::UInt8);
        assert_eq!(
            nested.column("stall_durations_s").unwrap().dtype(),
            &DataType::List(Box::new(DataType::Float64))
        );
    }

    #[test]
    fn a_list_of_numbers_is_one_csv_cell_of_exact_numbers() {
        let mut t = Columns {
            height: 3,
            cols: Vec::new(),
        };
        t.floats("s", [vec![0.25, 12.0], vec![], vec![3.740928]].into_iter());
        let df = DataFrame::new(3, t.cols).unwrap();
        let csv = csv_view(&df).unwrap();
        let cells: Vec<Option<&str>> = csv.column("s").unwrap().str().unwrap().iter().collect();
        assert_eq!(cells, [Some("0.25 | 12"), None, Some("3.740928")]);
    }
}
