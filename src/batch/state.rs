//! What a batch folder already holds: `done.jsonl` (one JSON record per unit of work) and
//! `parts/` (each unit's flows as Parquet). Deciding what to redo, storing a finished
//! unit, and compacting the state at the end.
//!
//! Records are appended as units finish, so an interrupted run resumes where it stopped;
//! a later line for the same unit replaces an earlier one. At the end the file is
//! rewritten with one line per unit, in unit order, and parts no record refers to are
//! deleted.

use super::inputs::Unit;
use super::layout::{fnv1a, DONE, PARTS};
use super::record::{Record, Stamp};
use super::tables;
use super::worker::Done;
use anyhow::{Context, Result};
use std::collections::{BTreeMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub struct State {
    dir: PathBuf,
    old: BTreeMap<String, Record>,
}

pub struct Plan {
    /// Indexes of the units to (re)do.
    pub todo: Vec<usize>,
    /// Records kept as they are: unchanged units, and units not among this run's inputs.
    pub kept: Vec<Record>,
    /// Inputs of the unchanged units.
    pub unchanged_inputs: usize,
}

fn stamps(unit: &Unit) -> Vec<Stamp> {
    unit.inputs
        .iter()
        .map(|i| Stamp {
            path: i.name.clone(),
            size: i.size,
            mtime_ns: i.mtime_ns,
            named: i.named,
        })
        .collect()
}

fn part_name(unit: &str) -> String {
    format!("{:016x}.parquet", fnv1a(unit.as_bytes()))
}

impl State {
    /// Reads `done.jsonl` (missing: nothing done). Lines that do not parse (a run killed
    /// mid-write) are ignored; records of another flows schema cannot be merged and are
    /// dropped.
    pub fn load(dir: &Path, schema: &str) -> State {
        let mut old = BTreeMap::new();
        let mut foreign = 0;
        if let Ok(f) = File::open(dir.join(DONE)) {
            for line in BufReader::new(f).lines().map_while(Result::ok) {
                if let Ok(r) = serde_json::from_str::<Record>(&line) {
                    if r.schema == schema {
                        old.insert(r.unit.clone(), r);
                    } else {
                        foreign += 1;
                    }
                }
            }
        }
        if foreign > 0 {
            eprintln!(
                "bdpscope: warning: {foreign} earlier result(s) in {} were made by another version and are dropped",
                dir.display()
            );
        }
        State {
            dir: dir.to_path_buf(),
            old,
        }
    }

    pub fn plan(&self, units: &[Unit], options: &str, force: bool) -> Plan {
        let mut plan = Plan {
            todo: Vec::new(),
            kept: Vec::new(),
            unchanged_inputs: 0,
        };
        for (i, u) in units.iter().enumerate() {
            let same = self.old.get(&u.key).filter(|r| {
                r.options == options
                    && r.inputs == stamps(u)
                    && r.part.as_ref().is_none_or(|p| self.dir.join(PARTS).join(p).is_file())
            });
            match same {
                Some(r) if !force => {
                    plan.kept.push(r.clone());
                    plan.unchanged_inputs += u.inputs.len();
                }
                _ => plan.todo.push(i),
            }
        }
        // Results of other inputs stay, unless one of this run's units covers their files.
        let keys: HashSet<&str> = units.iter().map(|u| u.key.as_str()).collect();
        let paths: HashSet<&str> = units
            .iter()
            .flat_map(|u| u.inputs.iter().map(|i| i.name.as_str()))
            .collect();
        for (key, r) in &self.old {
            if !keys.contains(key.as_str()) && !r.inputs.iter().any(|s| paths.contains(s.path.as_str())) {
                plan.kept.push(r.clone());
            }
        }
        plan
    }

    pub fn appender(&self) -> Result<Appender> {
        let path = self.dir.join(DONE);
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("{}: cannot write", path.display()))?;
        // A run killed mid-line leaves a partial line: start on a fresh one.
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        if len > 0 {
            f.write_all(b"\n")?;
        }
        Ok(Appender {
            file: Mutex::new(f),
            path,
        })
    }

    /// Where a unit's flows go (the worker writes them there as they finish).
    pub fn part_writer(&self, unit: &Unit) -> tables::PartWriter {
        tables::PartWriter::new(self.dir.join(PARTS).join(part_name(&unit.key)))
    }

    /// The record of a finished unit whose flows are in its part.
    pub fn store(&self, unit: &Unit, done: Done, options: &str, schema: &str) -> Result<Record> {
        Ok(Record {
            unit: unit.key.clone(),
            options: options.to_string(),
            schema: schema.to_string(),
            inputs: stamps(unit),
            part: (done.flows > 0).then(|| part_name(&unit.key)),
            flows: done.flows,
            captures: done.captures,
            middlebox: done.middlebox,
            floods: done.floods,
        })
    }

    /// The final state: every record in unit order, written back compacted; parts no
    /// record refers to are deleted.
    pub fn finish(self, kept: Vec<Record>, fresh: Vec<Record>) -> Result<Vec<Record>> {
        let mut all: BTreeMap<String, Record> = BTreeMap::new();
        for r in kept.into_iter().chain(fresh) {
            all.insert(r.unit.clone(), r);
        }
        let records: Vec<Record> = all.into_values().collect();
        let path = self.dir.join(DONE);
        let tmp = self.dir.join(format!(".{DONE}.tmp"));
        let mut f = File::create(&tmp).with_context(|| format!("{}: cannot write", tmp.display()))?;
        let mut text = String::new();
        for r in &records {
            text.push_str(&serde_json::to_string(r)?);
            text.push('\n');
        }
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path).with_context(|| format!("{}: cannot write", path.display()))?;
        let used: HashSet<&str> = records.iter().filter_map(|r| r.part.as_deref()).collect();
        if let Ok(rd) = std::fs::read_dir(self.dir.join(PARTS)) {
            for e in rd.flatten() {
                let name = e.file_name();
                if !used.contains(name.to_string_lossy().as_ref()) {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        Ok(records)
    }
}

/// Appends records to `done.jsonl` as units finish (from any worker).
pub struct Appender {
    file: Mutex<File>,
    path: PathBuf,
}

impl Appender {
    pub fn append(&self, r: &Record) -> Result<()> {
        let mut line = serde_json::to_string(r)?;
        line.push('\n');
        let mut f = self.file.lock().unwrap_or_else(|e| e.into_inner());
        f.write_all(line.as_bytes())
            .with_context(|| format!("{}: cannot write", self.path.display()))
    }
}
