//! bdpscope: what limited this TCP flow?
//!
//! The library turns capture bytes into per-flow findings in one streaming pass:
//! capture -> decode -> flow table -> per-direction TCP tracker -> RTT / flight / window
//! series -> classifier -> summary. It does no file I/O and no formatting; the `bdpscope`
//! binary owns the command line, rendering, plots and batch work. See ARCHITECTURE.md.
#![forbid(unsafe_code)]

pub mod analysis;
pub mod bpf;
pub mod capture;
pub mod compare;
pub mod decode;
pub mod diagnose;
pub mod endpoint;
pub mod fastmath;
pub mod flood;
pub mod flow;
pub mod laws;
pub mod middlebox;
pub mod observe;
pub mod select;
pub mod seq;
pub mod stall;
pub mod summarize;
pub mod summary;
pub mod tcp;
// The analysts' tables (polars): only with the `table` feature, which `cli` turns on.
#[cfg(feature = "table")]
pub mod table;
// Test support (hand-built packets, the TCP simulator), compiled only for tests, benches
// and doctests: the `testkit` feature is switched on by the dev-dependency on this crate.
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
pub mod time;
pub mod units;
pub mod vocabulary;
