//! One unit of work: its files read in order through the library's analysis — the read
//! loop of every command (`CaptureReader::read_all`) — one analysis per chain of files.
//!
//! Without `--stitch` a unit is one file, hence one chain, and its flows are exactly what
//! `bdpscope analyze FILE` finds. With `--stitch` consecutive files of a rotation group
//! are fed into the same analysis while their timestamps continue (see the module docs of
//! `batch`).

use super::inputs::{Input, Problem, Unit};
use super::progress::Progress;
use super::record::{CaptureRow, FloodRow, InputStatus, MiddleboxRow};
use super::tables::PartWriter;
use bdpscope::analysis::{Analysis, AnalysisConfig, FlowFilter};
use bdpscope::capture::{CaptureReader, Step};
use bdpscope::observe::NoObserver;
use bdpscope::summary::FlowSummary;
use bdpscope::table::captures::join;
use bdpscope::time::{Span, Timestamp};

pub struct Context<'a> {
    pub filter: FlowFilter,
    pub records: &'a crate::records::Records,
    pub link_rate_bps: Option<f64>,
    pub progress: &'a Progress,
}

/// What a unit produced (its flows are in its part).
pub struct Done {
    pub captures: Vec<CaptureRow>,
    pub flows: u64,
    pub middlebox: Vec<MiddleboxRow>,
    /// The floods and scans of each chain, under the chain's name.
    pub floods: Vec<FloodRow>,
}

/// Where a unit's flows go as they finish: its part, and the middlebox findings.
struct Sink<'a> {
    part: PartWriter,
    flows: u64,
    middlebox: Vec<MiddleboxRow>,
    /// The record selection, which notes flows it left with one direction.
    records: &'a crate::records::Records,
}

impl Sink<'_> {
    fn push(&mut self, mut f: FlowSummary) -> anyhow::Result<()> {
        self.records.note_half_conversations(std::slice::from_mut(&mut f));
        self.middlebox.extend(MiddleboxRow::of(&f));
        self.flows += 1;
        self.part.push(f)
    }
}

/// Packets between progress updates.
const REPORT_EVERY: u64 = bdpscope::analysis::PROGRESS_EVERY;
/// A file continues a chain when it starts at most this long before the previous one ended.
const OVERLAP: Span = Span(1_000_000_000);

/// Files being fed into one analysis.
struct Chain {
    analysis: Analysis<NoObserver>,
    first_name: String,
    last_name: String,
    /// Indexes (in `Done::captures`) of the files read into it.
    members: Vec<usize>,
    last_ts: Option<Timestamp>,
}

impl Chain {
    fn new(ctx: &Context, name: &str) -> Chain {
        let config = AnalysisConfig {
            first_flow_id: 0,
            capture_name: name.to_string(),
            filter: ctx.filter.clone(),
            link_rate_bps: ctx.link_rate_bps,
            ..Default::default()
        };
        Chain {
            analysis: Analysis::new(config, NoObserver),
            first_name: name.to_string(),
            last_name: name.to_string(),
            members: Vec::new(),
            last_ts: None,
        }
    }

    /// Whether a file whose first packet is at `first` continues this chain.
    fn continued_by(&self, first: Timestamp, idle: Span) -> bool {
        self.last_ts
            .is_none_or(|last| first >= last - OVERLAP && first <= last + idle)
    }

    /// Ends the analysis: the remaining flows go to `sink`, and the members' rows get the
    /// chain's name (and, for a chain of one file, the capture summary's counts). `held`
    /// are the flows taken earlier and kept for the chain's name (several files).
    fn close(self, done: &mut Done, sink: &mut Sink, held: Vec<FlowSummary>) -> anyhow::Result<()> {
        let (summary, rest, _) = self.analysis.finish(&self.first_name, None);
        let mut flows = held;
        flows.extend(rest);
        let name = if self.members.len() > 1 {
            let last = self
                .last_name
                .rsplit(['/', std::path::MAIN_SEPARATOR])
                .next()
                .unwrap_or(&self.last_name);
            format!("{}..{last}", self.first_name)
        } else {
            self.first_name.clone()
        };
        if self.members.len() == 1 {
            done.captures[self.members[0]].summarised(&summary);
        }
        done.floods.extend(FloodRow::of(&name, &summary));
        for &m in &self.members {
            done.captures[m].chain = Some(name.clone());
        }
        for mut f in flows {
            if self.members.len() > 1 {
                f.capture = name.clone();
            }
            sink.push(f)?;
        }
        Ok(())
    }
}

fn row(input: &Input, status: InputStatus) -> CaptureRow {
    CaptureRow {
        path: input.name.clone(),
        status,
        size_bytes: input.size,
        mtime: (input.mtime_ns != 0).then(|| input.mtime_ns as f64 / 1e9),
        ..Default::default()
    }
}

/// The row of a file that is not read.
fn unread(input: &Input, problem: Problem) -> CaptureRow {
    match problem {
        Problem::Failed(why) => CaptureRow {
            error: Some(why),
            ..row(input, InputStatus::Failed)
        },
        Problem::Skipped(why) => CaptureRow {
            skipped_reason: Some(why),
            ..row(input, InputStatus::Skipped)
        },
    }
}

/// Opens a file as a capture (recognised by content). One that cannot be is skipped only
/// when it is plainly no capture found in a folder (the rule: `InputStatus::of_unopened`).
fn open(input: &Input, records: &crate::records::Records) -> Result<CaptureReader, Problem> {
    if let Some(p) = &input.problem {
        return Err(p.clone());
    }
    let file = std::fs::File::open(&input.path).map_err(|e| Problem::Failed(format!("cannot open: {e}")))?;
    let mut reader = CaptureReader::new(Box::new(file)).map_err(|e| {
        match InputStatus::of_unopened(&e, &input.name, input.named) {
            InputStatus::Skipped => Problem::Skipped(e.to_string()),
            _ => Problem::Failed(e.to_string()),
        }
    })?;
    records.apply(&mut reader).map_err(Problem::Failed)?;
    Ok(reader)
}

/// Reads a unit's files; its flows go to `part` as they finish (a unit of one file) or
/// when their chain of files ends (their `capture` is the chain's name).
pub fn process(unit: &Unit, ctx: &Context, part: PartWriter) -> anyhow::Result<Done> {
    let idle = AnalysisConfig::default().table.timeouts.established;
    let mut done = Done {
        captures: Vec::with_capacity(unit.inputs.len()),
        flows: 0,
        middlebox: Vec::new(),
        floods: Vec::new(),
    };
    let mut sink = Sink {
        part,
        flows: 0,
        middlebox: Vec::new(),
        records: ctx.records,
    };
    let stream = unit.inputs.len() == 1;
    let mut held: Vec<FlowSummary> = Vec::new();
    let mut chain: Option<Chain> = None;
    for input in &unit.inputs {
        let mut reader = match open(input, ctx.records) {
            Ok(r) => r,
            Err(problem) => {
                ctx.progress.advance(input.size, 0);
                ctx.progress.file_done();
                done.captures.push(unread(input, problem));
                continue;
            }
        };
        let mut r = CaptureRow {
            format: Some(reader.format().container()),
            compression: Some(reader.compression()),
            ..row(input, InputStatus::Ok)
        };
        // This file's first and last packet times.
        let mut span: Option<(Timestamp, Timestamp)> = None;
        let (mut reported_bytes, mut reported_packets) = (0u64, 0u64);
        let damage = reader.read_all(REPORT_EVERY, |step| {
            match step {
                Step::Frame(frame) => {
                    if span.is_none() && chain.as_ref().is_some_and(|c| !c.continued_by(frame.ts, idle)) {
                        if let Some(c) = chain.take() {
                            c.close(&mut done, &mut sink, std::mem::take(&mut held))?;
                        }
                    }
                    span = Some(span.map_or((frame.ts, frame.ts), |(first, last)| (first, last.max(frame.ts))));
                    let c = chain.get_or_insert_with(|| Chain::new(ctx, &input.name));
                    c.analysis.on_frame(frame);
                    for f in c.analysis.take_flows() {
                        if stream {
                            sink.push(f)?;
                        } else {
                            held.push(f);
                        }
                    }
                }
                Step::Tick(reader) => {
                    let bytes = reader.input_bytes();
                    ctx.progress.advance(bytes.saturating_sub(reported_bytes), REPORT_EVERY);
                    reported_bytes = bytes;
                    reported_packets += REPORT_EVERY;
                }
            }
            Ok::<(), anyhow::Error>(())
        })?;
        if let Some(e) = damage {
            // As `analyze`: the packets before the problem are analysed, the problem
            // becomes a warning.
            let c = chain.get_or_insert_with(|| Chain::new(ctx, &input.name));
            c.analysis.warn(e.to_string());
            r.status = InputStatus::Partial;
            r.error = Some(e.to_string());
            r.warnings = r.error.clone();
        }
        let packets = reader.frames_read();
        ctx.progress.advance(
            input.size.saturating_sub(reported_bytes),
            packets - reported_packets.min(packets),
        );
        ctx.progress.file_done();
        let c = chain.get_or_insert_with(|| Chain::new(ctx, &input.name));
        if let Some((_, t)) = span {
            c.last_ts = Some(c.last_ts.map_or(t, |l| l.max(t)));
        }
        c.last_name = input.name.clone();
        c.members.push(done.captures.len());
        r.packets = Some(packets);
        r.first_ts = span.map(|(t, _)| t.secs_f64());
        r.last_ts = span.map(|(_, t)| t.secs_f64());
        r.link_types = join(&reader.link_types().iter().map(|l| l.to_string()).collect::<Vec<_>>());
        done.captures.push(r);
    }
    if let Some(c) = chain.take() {
        c.close(&mut done, &mut sink, held)?;
    }
    done.flows = sink.part.finish()?;
    done.middlebox = sink.middlebox;
    debug_assert_eq!(done.flows, sink.flows);
    Ok(done)
}
