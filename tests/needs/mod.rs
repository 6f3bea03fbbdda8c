//! What a test needs from outside the project: the shared corpora (`../shared`, or the
//! folder `BDPSCOPE_SHARED` names) and programs (chromium, tshark).
//!
//! Locally a test that lacks one skips, and says why on stderr. Under CI — `BDPSCOPE_CI`
//! set, as `.ci/run` does — it fails instead: a test that passes by skipping would hide a
//! broken install or a corpus that was not there.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Running under CI: whatever a test needs must be there.
pub fn ci() -> bool {
    std::env::var_os("BDPSCOPE_CI").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Something a test needs is missing: a failure under CI, else a skip with the reason.
/// Returns only when the test may skip.
pub fn missing(what: &str) {
    if ci() {
        panic!("{what}; BDPSCOPE_CI is set, so this test must not skip");
    }
    eprintln!("skipped: {what}");
}

/// The shared corpora: `BDPSCOPE_SHARED` if set, else `../shared` next to the repository.
/// None (the test skips) only outside CI.
pub fn shared() -> Option<PathBuf> {
    let p = std::env::var_os("BDPSCOPE_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    if p.is_dir() {
        return Some(p);
    }
    missing(&format!(
        "{} is absent (set BDPSCOPE_SHARED to the corpora)",
        p.display()
    ));
    None
}

/// A file inside the shared corpora that a test counts on.
pub fn shared_file(shared: &Path, rel: &str) -> Option<PathBuf> {
    let p = shared.join(rel);
    if p.is_file() {
        return Some(p);
    }
    missing(&format!("{} is absent from the shared corpora", p.display()));
    None
}

/// A program the test runs: true when `program --version` starts. `install` is how to get it.
pub fn program(program: &str, install: &str) -> bool {
    let runs = Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !runs {
        missing(&format!("{program} does not run ({install})"));
    }
    runs
}
