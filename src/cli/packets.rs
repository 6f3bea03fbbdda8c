//! `bdpscope packets`: every TCP segment as a CSV row, with the tracker's view of it.

use super::analyze::{analyze_one, filter_of};
use super::{PacketsArgs, Status};
use crate::render::packets::PacketWriter;
use anyhow::Result;

pub fn run(args: PacketsArgs) -> Result<Status> {
    let stdout = std::io::stdout();
    let out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let writer = PacketWriter::new(out, args.select.flows.clone())?;
    let (_, _, writer, _) = analyze_one(&args.capture, 0, filter_of(&args.select), None, writer)?;
    writer.finish()?;
    Ok(Status::Success)
}
