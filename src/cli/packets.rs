//! `bdpscope packets`: every TCP segment as a CSV row, with the tracker's view of it.

use super::analyze::{analyze_one, filter_of};
use super::{Expect, PacketsArgs, Status};
use crate::render::offload::Offload;
use crate::render::packets::PacketWriter;
use anyhow::Result;

pub fn run(args: PacketsArgs) -> Result<Status> {
    let records = super::records::resolve(&args.words, &args.records, Expect::One)?;
    // Unlocked: the lock guard cannot move to the writing thread (a 64 KiB flush locks once).
    let out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout());
    let name = super::input::display_name(&records.captures[0]);
    if !args.select.flows.is_empty() && args.select.ids_in(&name).is_empty() {
        return Ok(args.select.none_matched(&records.captures));
    }
    let writer = PacketWriter::new(out, args.select.ids_in(&name))?;
    // The rows are written on a second core while the analysis goes on (in capture order:
    // one FIFO between the two); formatting them was a third of the command's time.
    let rows = Offload::new(writer);
    // Every connection's segments are rows (the writer needs them in capture order, so
    // every connection is tracked from its first): every connection is a flow `--flow` names.
    let (_, flows, rows, _) = analyze_one(
        &records.captures[0],
        &records,
        0,
        filter_of(&args.select),
        None,
        true,
        rows,
    )?;
    rows.finish().finish()?;
    if !args.select.is_empty() && !flows.iter().any(|f| args.select.wants(&f.capture, f.id)) {
        return Ok(args.select.none_matched(&records.captures));
    }
    Ok(Status::Success)
}
