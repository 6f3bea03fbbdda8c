//! `analyze --format json`: one JSON document, the shape of ../shared/spec/interface.md.

use bdpscope::summary::{CaptureSummary, FlowSummary};
use serde::Serialize;
use std::io::Write;

#[derive(Serialize)]
struct Document<'a> {
    captures: &'a [CaptureSummary],
    flows: &'a [FlowSummary],
}

pub fn write<W: Write>(out: &mut W, captures: &[CaptureSummary], flows: &[FlowSummary]) -> anyhow::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &Document { captures, flows })?;
    writeln!(out)?;
    Ok(())
}
