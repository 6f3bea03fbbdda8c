//! [`PacketFilter`]: a capture filter applied to every record, with the program libpcap
//! compiled for that record's link type. pcapng files may carry interfaces of several
//! link types; each gets its own program, compiled the first time one of its records
//! comes (`tcpdump -r` itself refuses such files: libpcap reads one link type per file).

use super::Program;
use crate::capture::{Decision, Frame, LinkType, RecordFilter};

/// Compiles the filter for a link type: the program, or libpcap's message.
pub type Compile = dyn FnMut(LinkType) -> Result<Program, String> + Send;

pub struct PacketFilter {
    expression: String,
    compile: Box<Compile>,
    /// Programs by link type, in the order the link types came (a capture has one or two).
    programs: Vec<(LinkType, Program)>,
    /// Index of the program used last (records of one interface come in runs).
    last: usize,
}

impl PacketFilter {
    /// A filter for `expression` (kept for messages), compiled per link type by `compile`.
    pub fn new(expression: &str, compile: Box<Compile>) -> PacketFilter {
        PacketFilter {
            expression: expression.to_string(),
            compile,
            programs: Vec::new(),
            last: 0,
        }
    }

    /// The filter expression as given.
    pub fn expression(&self) -> &str {
        &self.expression
    }

    fn program(&mut self, link: LinkType) -> Result<&Program, String> {
        if self.programs.get(self.last).is_none_or(|(l, _)| *l != link) {
            match self.programs.iter().position(|(l, _)| *l == link) {
                Some(i) => self.last = i,
                None => {
                    let p = (self.compile)(link).map_err(|why| {
                        format!(
                            "the filter \"{}\" cannot be compiled for link type {link}: {why}",
                            self.expression
                        )
                    })?;
                    self.programs.push((link, p));
                    self.last = self.programs.len() - 1;
                }
            }
        }
        Ok(&self.programs[self.last].1)
    }
}

impl RecordFilter for PacketFilter {
    fn decide(&mut self, frame: &Frame<'_>) -> Decision {
        // A pcapng packet of an interface its section never described has no link layer
        // to filter on (libpcap refuses the file); it cannot match.
        if frame.link == LinkType::NO_INTERFACE {
            return Decision::Skip;
        }
        match self.program(frame.link) {
            Ok(p) if p.matches(frame.data, frame.wire_len) => Decision::Keep,
            Ok(_) => Decision::Skip,
            Err(why) => Decision::Fail(why),
        }
    }
}
