//! The analysts' tables, as polars frames (feature `table`, which the command line turns
//! on): the flows table ([`flows::flows_frame`]), the per-segment table
//! ([`packets::PacketTable`]) and the captures table ([`captures::CaptureRow`]). One
//! definition serves `analyze --format csv`, batch's Parquet and CSV, the Python package
//! and its Spark job, so every view has the same columns and types. The schema, column by
//! column, is in docs/tables.md.
//!
//! Above the analysis: the tables are built from its summaries and segment events (plain
//! data); they do no I/O and format only what a CSV cell needs.

pub mod captures;
pub mod flows;
pub mod packets;

pub use flows::{csv_view, flows_frame};

/// The version of the flows table's columns. 1: the CSV columns before the analysts'
/// table (float seconds, `client` as `ip:port`, `limit_*` fractions, lists joined); 2:
/// this table (docs/tables.md lists the old names beside the new); 3: version 2's columns
/// unchanged, ECN's appended (`client_ecn`, `server_ecn`, `ecn`, `{c2s,s2c}_ect0_segments`
/// ... `_last_cwr_ts`); 4: version 3's unchanged, the flight in the network appended
/// (`sender_max_in_network_bytes`, `{c2s,s2c}_max_in_network_bytes`); 5: version 4's
/// unchanged, `stall_durations_s` appended (each stall's duration, in `stalls`' order); 6:
/// version 5's unchanged, the request/response turns (`idle_s` ... `idle_median_after_answer_ms`),
/// the path beside the capture point (`sender_transit_bytes`, `sender_near_loop_ms`) and
/// the time the capture lacked the ACKs (`{c2s,s2c}_acks_lacking_s`) appended.
pub const FLOWS_SCHEMA_VERSION: u32 = 6;

/// How timestamps are written in CSV: RFC 3339, UTC, microseconds.
pub const CSV_DATETIME_FORMAT: &str = "%Y-%m-%dT%H:%M:%S%.6fZ";
