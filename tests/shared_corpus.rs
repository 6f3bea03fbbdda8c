//! Every capture of the shared corpora (../shared/external: public captures of many link
//! types and oddities; ../shared/captures: the lab's) is read without a panic, with exit
//! status 0 or 1 as the spec says, and the valid ones yield flows. Skipped when ../shared
//! is not there (the project's own tests stand alone), failed under CI (see tests/needs).

mod needs;

use std::path::{Path, PathBuf};
use std::process::Command;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if !p
            .extension()
            .is_some_and(|x| x == "md" || x == "json" || x == "txt" || x == "py")
            && !p.to_string_lossy().contains("tcpinfo.jsonl")
        {
            out.push(p);
        }
    }
}

#[test]
fn every_shared_capture_is_read_without_a_panic() {
    let Some(root) = needs::shared() else { return };
    let mut all = Vec::new();
    files(&root.join("external"), &mut all);
    files(&root.join("captures"), &mut all);
    assert!(all.len() > 50, "{}", all.len());
    let mut problems = Vec::new();
    let mut with_flows = 0;
    for f in &all {
        let out = Command::new(env!("CARGO_BIN_EXE_bdpscope"))
            .args(["analyze", "--format", "json"])
            .arg(f)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => {
                let v: serde_json::Value = match serde_json::from_slice(&out.stdout) {
                    Ok(v) => v,
                    Err(e) => {
                        problems.push(format!("{}: output is not JSON: {e}", f.display()));
                        continue;
                    }
                };
                with_flows += !v["flows"].as_array().unwrap().is_empty() as usize;
            }
            Some(1) => {
                if !err.contains(&*f.file_name().unwrap().to_string_lossy()) {
                    problems.push(format!("{}: error does not name the file: {err}", f.display()));
                }
            }
            other => problems.push(format!("{}: exit {other:?}: {err}", f.display())),
        }
        if err.contains("panicked") {
            problems.push(format!("{}: panic: {err}", f.display()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(with_flows > 40, "{with_flows}");
}

#[test]
fn the_lab_captures_get_their_expected_labels() {
    let Some(root) = needs::shared() else { return };
    let mut failures = Vec::new();
    let mut checked = 0;
    for scenario in std::fs::read_dir(root.join("captures")).unwrap().flatten() {
        let dir = scenario.path();
        let Ok(t) = std::fs::read_to_string(dir.join("truth.json")) else {
            continue;
        };
        let truth: serde_json::Value = serde_json::from_str(&t).unwrap();
        for cap in truth["capture"]["files"].as_array().unwrap() {
            let path = dir.join(cap["file"].as_str().unwrap());
            let out = Command::new(env!("CARGO_BIN_EXE_bdpscope"))
                .args(["analyze", "--format", "json"])
                .arg(&path)
                .output()
                .unwrap();
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            for tf in truth["flows"].as_array().unwrap() {
                let port = tf["four_tuple"]["sender"][1].as_u64().unwrap();
                let rport = tf["four_tuple"]["receiver"][1].as_u64().unwrap();
                let f = v["flows"].as_array().unwrap().iter().find(|f| {
                    let c = f["client"].as_str().unwrap();
                    let s = f["server"].as_str().unwrap();
                    [c, s].iter().any(|e| e.ends_with(&format!(":{port}")))
                        && [c, s].iter().any(|e| e.ends_with(&format!(":{rport}")))
                });
                checked += 1;
                match f {
                    Some(f) if f["verdict"] == tf["expected_label"] => {}
                    Some(f) => failures.push(format!(
                        "{}: {} != {}",
                        path.display(),
                        f["verdict"],
                        tf["expected_label"]
                    )),
                    None => failures.push(format!("{}: flow on port {port} missing", path.display())),
                }
            }
        }
    }
    assert!(checked >= 40);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
