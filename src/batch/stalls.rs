//! The summary's stalls overview, from the flows table's `stalls` and `stall_durations_s`
//! (each stall's kind and how long it lasted, in the same order) over the judged flows:
//! per kind the stalls, the flows that had one and the longest; and the flows whose
//! longest stall was the longest. Kept with polars as the parts stream by — a row per
//! kind and the [`LONGEST`] longest so far, never the stalls themselves.

use polars::prelude::*;
use std::collections::BTreeMap;

/// How many flows with the longest stalls are listed.
pub const LONGEST: usize = 10;

/// One kind's figures over the judged flows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KindCount {
    pub stalls: u64,
    /// Flows with at least one stall of the kind.
    pub flows: u64,
    pub longest_s: f64,
}

/// A flow's longest stall.
#[derive(Clone, Debug, PartialEq)]
pub struct LongStall {
    pub capture: String,
    pub id: u64,
    pub client_addr: String,
    pub client_port: Option<u16>,
    pub server_addr: String,
    pub server_port: Option<u16>,
    pub kind: String,
    pub duration_s: f64,
}

/// The stalls of the judged flows seen so far.
#[derive(Default)]
pub struct Stalls {
    /// Per kind (its word in the table).
    pub kinds: BTreeMap<String, KindCount>,
    /// The flows with the longest stalls so far, longest first (a row per flow).
    longest: Option<DataFrame>,
}

/// The columns a flow's longest stall is listed with.
const FLOW: [&str; 6] = [
    "capture",
    "id",
    "client_addr",
    "client_port",
    "server_addr",
    "server_port",
];

/// Longest first; ties by capture and flow id, so the list does not depend on the order
/// the parts came in.
fn longest_first(df: &DataFrame) -> PolarsResult<DataFrame> {
    df.sort(
        ["stall_durations_s", "capture", "id"],
        SortMultipleOptions::default()
            .with_order_descending_multi([true, false, false])
            .with_maintain_order(true),
    )
}

/// (word, count) of a column's values.
fn counts(df: &DataFrame, column: &str) -> PolarsResult<Vec<(String, u64)>> {
    let c = df
        .column(column)?
        .as_materialized_series()
        .value_counts(false, false, "n".into(), false)?;
    let (words, n) = (c.column(column)?.str()?, c.column("n")?.idx()?);
    Ok(words
        .iter()
        .zip(n.iter())
        .filter_map(|(w, n)| Some((w?.to_string(), u64::from(n?))))
        .collect())
}

impl Stalls {
    /// Takes in the judged flows of one part (the flows table's columns; a part holds each
    /// of its flows once, and no other part holds them).
    pub fn add(&mut self, judged: &DataFrame) -> PolarsResult<()> {
        let mut columns = FLOW.to_vec();
        columns.extend(["stalls", "stall_durations_s"]);
        // A row per stall; a flow without any becomes one row of nulls, left out.
        let rows = judged.select(columns)?.explode(
            ["stalls", "stall_durations_s"],
            ExplodeOptions {
                empty_as_null: true,
                keep_nulls: true,
            },
        )?;
        let rows = rows.filter(&rows.column("stalls")?.is_not_null())?;
        if rows.height() == 0 {
            return Ok(());
        }
        let rows = longest_first(&rows)?;
        let keys = |c: &[&str]| c.iter().map(|s| s.to_string()).collect::<Vec<String>>();
        for (kind, n) in counts(&rows, "stalls")? {
            self.kinds.entry(kind).or_default().stalls += n;
        }
        let flows = rows.unique_stable(
            Some(keys(&["capture", "id", "stalls"]).as_slice()),
            UniqueKeepStrategy::First,
            None,
        )?;
        for (kind, n) in counts(&flows, "stalls")? {
            self.kinds.entry(kind).or_default().flows += n;
        }
        // Sorted longest first, the first row of a kind is its longest.
        let per_kind = rows.unique_stable(Some(keys(&["stalls"]).as_slice()), UniqueKeepStrategy::First, None)?;
        let (kind, secs) = (
            per_kind.column("stalls")?.str()?,
            per_kind.column("stall_durations_s")?.f64()?,
        );
        for (k, s) in kind.iter().zip(secs.iter()) {
            if let (Some(k), Some(s)) = (k, s) {
                let e = self.kinds.entry(k.to_string()).or_default();
                e.longest_s = e.longest_s.max(s);
            }
        }
        // Each flow's longest stall, then the longest of those so far.
        let per_flow = rows.unique_stable(
            Some(keys(&["capture", "id"]).as_slice()),
            UniqueKeepStrategy::First,
            None,
        )?;
        let mut all = per_flow.head(Some(LONGEST));
        if let Some(kept) = self.longest.take() {
            all = kept.vstack(&all)?;
        }
        self.longest = Some(longest_first(&all)?.head(Some(LONGEST)));
        Ok(())
    }

    /// The kinds, the most stalls first (ties by word).
    pub fn kinds(&self) -> Vec<(&str, &KindCount)> {
        let mut v: Vec<(&str, &KindCount)> = self.kinds.iter().map(|(k, c)| (k.as_str(), c)).collect();
        v.sort_by(|a, b| b.1.stalls.cmp(&a.1.stalls).then(a.0.cmp(b.0)));
        v
    }

    /// The flows with the longest stalls, longest first.
    pub fn longest(&self) -> PolarsResult<Vec<LongStall>> {
        let Some(df) = &self.longest else { return Ok(Vec::new()) };
        let text = |c: &str| df.column(c).and_then(|c| c.str().cloned());
        let port = |c: &str| df.column(c).and_then(|c| c.u16().cloned());
        let (capture, kind) = (text("capture")?, text("stalls")?);
        let (client_addr, server_addr) = (text("client_addr")?, text("server_addr")?);
        let (client_port, server_port) = (port("client_port")?, port("server_port")?);
        let id = df.column("id")?.u64()?;
        let secs = df.column("stall_durations_s")?.f64()?;
        Ok((0..df.height())
            .map(|i| LongStall {
                capture: capture.get(i).unwrap_or("").to_string(),
                id: id.get(i).unwrap_or(0),
                client_addr: client_addr.get(i).unwrap_or("").to_string(),
                client_port: client_port.get(i),
                server_addr: server_addr.get(i).unwrap_or("").to_string(),
                server_port: server_port.get(i),
                kind: kind.get(i).unwrap_or("").to_string(),
                duration_s: secs.get(i).unwrap_or(0.0),
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// capture, id, then the flow's stalls as (kind, seconds).
    type Row<'a> = (&'a str, u64, &'a [(&'a str, f64)]);

    fn part(rows: &[Row]) -> DataFrame {
        let n = rows.len();
        let mut kinds = ListStringChunkedBuilder::new("stalls".into(), n, n);
        let mut secs =
            ListPrimitiveChunkedBuilder::<Float64Type>::new("stall_durations_s".into(), n, n, DataType::Float64);
        for r in rows {
            kinds.append_values_iter(r.2.iter().map(|s| s.0));
            secs.append_slice(&r.2.iter().map(|s| s.1).collect::<Vec<_>>());
        }
        DataFrame::new(
            n,
            vec![
                Column::new("capture".into(), rows.iter().map(|r| r.0).collect::<Vec<_>>()),
                Column::new("id".into(), rows.iter().map(|r| r.1).collect::<Vec<_>>()),
                Column::new("client_addr".into(), vec!["10.0.0.1"; n]),
                Column::new("client_port".into(), vec![1u16; n]),
                Column::new("server_addr".into(), vec!["10.0.0.2"; n]),
                Column::new("server_port".into(), vec![80u16; n]),
                kinds.finish().into_series().into_column(),
                secs.finish().into_series().into_column(),
            ],
        )
        .unwrap()
    }

    #[test]
    fn kinds_are_counted_and_the_longest_kept_across_parts() {
        let mut s = Stalls::default();
        s.add(&part(&[
            ("a", 0, &[("zero-window", 2.0), ("outage", 0.5), ("zero-window", 3.0)]),
            ("a", 1, &[]),
            ("a", 2, &[("outage", 7.0)]),
        ]))
        .unwrap();
        s.add(&part(&[("b", 0, &[("zero-window", 1.0)]), ("b", 1, &[])]))
            .unwrap();
        let kinds: Vec<(&str, u64, u64, f64)> = s
            .kinds()
            .into_iter()
            .map(|(k, c)| (k, c.stalls, c.flows, c.longest_s))
            .collect();
        assert_eq!(kinds, [("zero-window", 3, 2, 3.0), ("outage", 2, 2, 7.0)]);
        let longest: Vec<(String, u64, String, f64)> = s
            .longest()
            .unwrap()
            .into_iter()
            .map(|l| (l.capture, l.id, l.kind, l.duration_s))
            .collect();
        assert_eq!(
            longest,
            [
                ("a".into(), 2, "outage".into(), 7.0),
                ("a".into(), 0, "zero-window".into(), 3.0),
                ("b".into(), 0, "zero-window".into(), 1.0),
            ],
            "a row per flow, its longest stall, longest first"
        );
    }

    #[test]
    fn no_stalls_no_rows() {
        let mut s = Stalls::default();
        s.add(&part(&[("a", 0, &[])])).unwrap();
        assert!(s.kinds().is_empty());
        assert!(s.longest().unwrap().is_empty());
    }
}
