//! `analyze --format json`: one JSON document, the shape of ../shared/spec/interface.md,
//! written as flows finish: `{"flows": [...], "captures": [...]}`. The flows come first
//! because a capture's summary (packets, findings, counts) is known only at its end; JSON
//! object members have no order (RFC 8259 §4), so readers of either order read it alike.
//! Nothing is held: a capture of millions of flows is written in constant memory.

use bdpscope::summary::{CaptureSummary, FlowSummary};
use std::io::Write;

pub struct Stream<W: Write> {
    out: W,
    first: bool,
}

/// Writes `value` pretty-printed, every line after the first indented by `indent`
/// spaces (to sit inside the document at that depth).
fn nested<W: Write, T: serde::Serialize>(out: &mut W, value: &T, indent: usize) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    let pad = " ".repeat(indent);
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.write_all(b"\n")?;
            out.write_all(pad.as_bytes())?;
        }
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

impl<W: Write> Stream<W> {
    pub fn new(mut out: W) -> anyhow::Result<Self> {
        out.write_all(b"{\n  \"flows\": [")?;
        Ok(Stream { out, first: true })
    }

    pub fn flow(&mut self, f: &FlowSummary) -> anyhow::Result<()> {
        self.out.write_all(if self.first { b"\n    " } else { b",\n    " })?;
        self.first = false;
        nested(&mut self.out, f, 4)
    }

    pub fn finish(mut self, captures: &[CaptureSummary]) -> anyhow::Result<()> {
        self.out.write_all(if self.first {
            b"],\n  \"captures\": "
        } else {
            b"\n  ],\n  \"captures\": "
        })?;
        nested(&mut self.out, &captures, 2)?;
        self.out.write_all(b"\n}\n")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_streamed_document_is_one_json_value_with_every_flow_and_capture() {
        let file = std::fs::File::open("fixtures/multi_flow_3/client.pcap.gz")
            .or_else(|_| std::fs::File::open("fixtures/rcvbuf_16k/client.pcap.gz"))
            .unwrap();
        let mut reader = bdpscope::capture::CaptureReader::new(Box::new(file)).unwrap();
        let (capture, flows, _) =
            bdpscope::analysis::analyze_reader(&mut reader, Default::default(), bdpscope::observe::NoObserver);
        for n in [0, 1, flows.len()] {
            let mut out = Vec::new();
            let mut s = Stream::new(&mut out).unwrap();
            for f in &flows[..n] {
                s.flow(f).unwrap();
            }
            s.finish(std::slice::from_ref(&capture)).unwrap();
            let doc: serde_json::Value = serde_json::from_slice(&out).expect("valid JSON");
            // Compared as read back from their printed form: a float's shortest decimal
            // reads back to the same value either way, not always to the bits it came from.
            let read_back = |v: String| -> serde_json::Value { serde_json::from_str(&v).unwrap() };
            let want: Vec<serde_json::Value> = flows[..n]
                .iter()
                .map(|f| read_back(serde_json::to_string(f).unwrap()))
                .collect();
            assert_eq!(doc["flows"], serde_json::Value::Array(want));
            assert_eq!(doc["captures"][0], read_back(serde_json::to_string(&capture).unwrap()));
        }
    }
}
