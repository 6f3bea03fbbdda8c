//! Finding the inputs: walking folders, stamping files (size, mtime) and cutting them
//! into units of work (one file, or one rotation group with `--stitch`).

use bdpscope::capture::rotation_key;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// One input file as found.
#[derive(Clone, Debug)]
pub struct Input {
    pub path: PathBuf,
    /// The path as shown in every table (and in the flows' `capture` column).
    pub name: String,
    pub size: u64,
    /// Modification time, nanoseconds since the epoch (0 when unknown).
    pub mtime_ns: i64,
    /// Why it cannot be read at all (a missing path, an unreadable folder, a fifo).
    pub problem: Option<Problem>,
    /// Given as a PATH itself rather than found in a folder: a file the user asked to read,
    /// so not reading it is an error even when it is plainly no capture
    /// ([`bdpscope::table::captures::InputStatus::of_unopened`]).
    pub named: bool,
}

#[derive(Clone, Debug)]
pub enum Problem {
    /// Not read, and that is an error (status `failed`).
    Failed(String),
    /// Not a file to read (status `skipped`).
    Skipped(String),
}

/// What one worker does in one go: a file, or a rotation group read in order.
#[derive(Debug)]
pub struct Unit {
    /// The path (or the group's folder/template with `--stitch`): sharding and state key.
    pub key: String,
    pub inputs: Vec<Input>,
}

impl Unit {
    pub fn size(&self) -> u64 {
        self.inputs.iter().map(|i| i.size).sum()
    }
}

fn name_of(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Every file under the given paths, in name order, each once. Not entered: `exclude`
/// (this run's output folder, canonical) and other batch output folders.
pub fn collect(paths: &[PathBuf], exclude: Option<&Path>) -> Vec<Input> {
    let mut out = Vec::new();
    for p in paths {
        let mut ancestors = Vec::new();
        walk(p, exclude, &mut ancestors, &mut out, true);
    }
    // A file both named and found in a named folder was asked for by name.
    let named: HashSet<String> = out.iter().filter(|i| i.named).map(|i| i.name.clone()).collect();
    let mut seen = HashSet::new();
    out.retain(|i| seen.insert(i.name.clone()));
    for i in &mut out {
        i.named = named.contains(&i.name);
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn failed(path: &Path, why: String, named: bool) -> Input {
    Input {
        path: path.to_path_buf(),
        name: name_of(path),
        size: 0,
        mtime_ns: 0,
        problem: Some(Problem::Failed(why)),
        named,
    }
}

/// `named`: `path` is one of the PATHs given, not an entry of a folder.
fn walk(path: &Path, exclude: Option<&Path>, ancestors: &mut Vec<PathBuf>, out: &mut Vec<Input>, named: bool) {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) => return out.push(failed(path, format!("cannot open: {e}"), named)),
    };
    if meta.is_dir() {
        let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if exclude == Some(canon.as_path()) || ancestors.contains(&canon) || is_batch_output(path) {
            return;
        }
        let entries = match std::fs::read_dir(path) {
            Ok(rd) => rd,
            Err(e) => return out.push(failed(path, format!("cannot read the folder: {e}"), named)),
        };
        let mut children: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        children.sort();
        ancestors.push(canon);
        for c in children {
            walk(&c, exclude, ancestors, out, false);
        }
        ancestors.pop();
        return;
    }
    let mtime_ns = meta
        .modified()
        .ok()
        .and_then(|t| match t.duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_nanos()).ok(),
            Err(e) => i64::try_from(e.duration().as_nanos()).ok().map(|n| -n),
        })
        .unwrap_or(0);
    // A fifo or a device in a folder is left out; named, it was asked for (see `named`).
    let problem = (!meta.is_file()).then(|| {
        let why = "not a regular file".to_string();
        if named {
            Problem::Failed(why)
        } else {
            Problem::Skipped(why)
        }
    });
    out.push(Input {
        path: path.to_path_buf(),
        name: name_of(path),
        size: meta.len(),
        mtime_ns,
        problem,
        named,
    });
}

/// A folder written by `bdpscope batch` (its state file next to its parts): its tables
/// are not captures to list.
fn is_batch_output(dir: &Path) -> bool {
    dir.join(super::layout::DONE).is_file() && dir.join(super::layout::PARTS).is_dir()
}

/// Cuts the inputs into units: one per file, or with `stitch` one per rotation group.
/// Units come in key order, group members in rotation order.
pub fn units(inputs: Vec<Input>, stitch: bool) -> Vec<Unit> {
    if !stitch {
        return inputs
            .into_iter()
            .map(|i| Unit {
                key: i.name.clone(),
                inputs: vec![i],
            })
            .collect();
    }
    let mut groups: std::collections::BTreeMap<String, Vec<(Vec<u128>, Input)>> = Default::default();
    for i in inputs {
        let (key, numbers) = rotation_key(&i.name);
        groups.entry(key).or_default().push((numbers, i));
    }
    groups
        .into_iter()
        .map(|(key, mut members)| {
            members.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.name.cmp(&b.1.name)));
            Unit {
                key,
                inputs: members.into_iter().map(|(_, i)| i).collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_read_in_numeric_order() {
        let mk = |n: &str| Input {
            path: n.into(),
            name: n.into(),
            size: 1,
            mtime_ns: 0,
            problem: None,
            named: false,
        };
        let u = units(
            vec![mk("d/t.pcap10"), mk("d/t.pcap2"), mk("d/t.pcap"), mk("d/other")],
            true,
        );
        assert_eq!(u.len(), 2);
        let names: Vec<&str> = u[1].inputs.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(u[1].key, "d/t.pcap");
        assert_eq!(names, ["d/t.pcap", "d/t.pcap2", "d/t.pcap10"]);
    }

    #[test]
    fn a_path_given_is_named_and_a_folders_entries_are_not() {
        let dir = std::env::temp_dir().join(format!("bdpscope-inputs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        for f in ["README", "sub/notes.txt"] {
            std::fs::write(dir.join(f), b"text\n").unwrap();
        }
        let readme = dir.join("README");
        // The folder, then a file of it again by name: one row, named.
        let found = collect(&[dir.clone(), readme.clone()], None);
        let named: Vec<(String, bool)> = found
            .iter()
            .map(|i| (i.path.strip_prefix(&dir).unwrap().display().to_string(), i.named))
            .collect();
        assert_eq!(named, [("README".into(), true), ("sub/notes.txt".into(), false)]);
        // A missing path is named too (it fails as given).
        let missing = collect(&[dir.join("nope.pcap")], None);
        assert!(missing[0].named && matches!(missing[0].problem, Some(Problem::Failed(_))));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
