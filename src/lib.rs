//! bdpscope: what limited this TCP flow?
//!
//! The library turns capture bytes into per-flow findings in one streaming pass:
//! capture -> decode -> flow table -> per-direction TCP tracker -> RTT / flight / window
//! series -> classifier -> summary. It does no file I/O and no formatting; the `bdpscope`
//! binary owns the command line, rendering, plots and batch work. See ARCHITECTURE.md.
#![forbid(unsafe_code)]

pub mod analysis;
pub mod capture;
pub mod compare;
pub mod decode;
pub mod diagnose;
pub mod fastmath;
pub mod flood;
pub mod flow;
pub mod middlebox;
pub mod observe;
pub mod seq;
pub mod summarize;
pub mod summary;
pub mod tcp;
pub mod testkit;
pub mod time;
pub mod units;
