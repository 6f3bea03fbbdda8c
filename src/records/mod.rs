//! The records each capture contributes, chosen before decoding: a time window, the
//! capture filter (libpcap's program, run by [`bdpscope::bpf`]), the first N packets.
//! The command line builds a [`Records`] (`cli/records.rs`); every command and batch
//! apply it to each reader they open.

mod tcpdump;

pub use tcpdump::Compiler;

use bdpscope::bpf::PacketFilter;
use bdpscope::capture::{CaptureReader, Chain, RecordFilter};
use bdpscope::select::{Bound, FirstN, TimeWindow};
use bdpscope::summary::FlowSummary;
use std::path::PathBuf;
use std::sync::Arc;

/// The captures to read and how to choose their records.
#[derive(Clone)]
pub struct Records {
    pub captures: Vec<PathBuf>,
    pub compiler: Option<Arc<Compiler>>,
    pub count: Option<u64>,
    pub from: Option<Bound>,
    pub until: Option<Bound>,
}

impl Records {
    /// The filter expression, when there is one.
    pub fn expression(&self) -> Option<&str> {
        self.compiler.as_deref().map(Compiler::expression)
    }

    /// What the selection is, for batch's record of the options a result depends on;
    /// None when every record is read.
    pub fn fingerprint(&self) -> Option<String> {
        let any = self.compiler.is_some() || self.count.is_some() || self.from.is_some() || self.until.is_some();
        any.then(|| {
            format!(
                "filter={:?}; count={:?}; from={:?}; until={:?}",
                self.expression(),
                self.count,
                self.from,
                self.until
            )
        })
    }

    /// Makes `reader` return only the chosen records (their numbers stay the file's).
    ///
    /// The link types known when the capture is opened (a pcap file's one) get their
    /// program now: a filter libpcap cannot apply to them fails the capture before any
    /// record is read, as `tcpdump -r` does. Interfaces a pcapng file describes later
    /// get theirs when their first record comes.
    pub fn apply(&self, reader: &mut CaptureReader) -> Result<(), String> {
        let mut chain: Vec<Box<dyn RecordFilter>> = Vec::new();
        if self.from.is_some() || self.until.is_some() {
            chain.push(Box::new(TimeWindow::new(self.from, self.until)));
        }
        if let Some(c) = &self.compiler {
            for link in reader.link_types() {
                c.compile(link).map_err(|why| {
                    format!(
                        "the capture filter \"{}\" cannot be compiled for link type {link}: {why}",
                        c.expression()
                    )
                })?;
            }
            let expression = c.expression().to_string();
            let c = Arc::clone(c);
            chain.push(Box::new(PacketFilter::new(
                &expression,
                Box::new(move |link| c.compile(link)),
            )));
        }
        if let Some(n) = self.count {
            chain.push(Box::new(FirstN::new(n)));
        }
        if !chain.is_empty() {
            reader.set_filter(Box::new(Chain(chain)));
        }
        Ok(())
    }

    /// Flows of which the filter let through one direction only get a note saying so:
    /// their analysis has half a conversation.
    pub fn note_half_conversations(&self, flows: &mut [FlowSummary]) {
        let Some(expr) = self.expression() else { return };
        for f in flows {
            let (seen, missing) = match (f.c2s.packets, f.s2c.packets) {
                (0, n) if n > 0 => ("server to client", "client"),
                (n, 0) if n > 0 => ("client to server", "server"),
                _ => continue,
            };
            f.notes.push(format!(
                "only the {seen} direction passed the capture filter \"{expr}\": the analysis sees half \
                 the conversation (nothing the {missing} sent: its ACKs, windows and the RTT samples they give)"
            ));
        }
    }
}
