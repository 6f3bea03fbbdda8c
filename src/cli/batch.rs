//! `bdpscope batch`: the command line of [`crate::batch`] (which documents the outputs,
//! re-runs, sharding and stitching).

use super::{BatchArgs, Expect, Status};
use crate::batch::{self, Options, Shard};
use anyhow::Result;

pub fn parse_shard(s: &str) -> Result<Shard, String> {
    Shard::parse(s)
}

pub fn run(args: BatchArgs) -> Result<Status> {
    let records = super::records::resolve(&args.words, &args.records, Expect::Paths)?;
    let outcome = batch::run(Options {
        paths: records.captures.clone(),
        records,
        out: args.out,
        jobs: super::threads(args.jobs),
        stitch: args.stitch,
        force: args.force,
        shard: args.shard,
        filter: args.endpoints.filter(),
        link_rate_bps: args.link_rate,
    })?;
    Ok(if outcome.failed > 0 {
        Status::InputFailed
    } else {
        Status::Success
    })
}
