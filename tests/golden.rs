//! Golden outputs: `analyze` (text and JSON) on every fixture, compared with the files in
//! tests/golden/. A change of output shows up here as a diff to review; when it is
//! intended, regenerate with `BDPSCOPE_UPDATE_GOLDEN=1 cargo test --test golden`.

use std::path::Path;
use std::process::Command;

fn run(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_bdpscope"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .expect("run bdpscope");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn check(name: &str, actual: &str) -> Option<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name);
    if std::env::var_os("BDPSCOPE_UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
        return None;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    (expected != actual).then(|| {
        let first = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        format!(
            "{name} differs from line {}:\n  golden: {}\n  now:    {}",
            first + 1,
            expected.lines().nth(first).unwrap_or("<end>"),
            actual.lines().nth(first).unwrap_or("<end>")
        )
    })
}

fn captures() -> Vec<String> {
    let mut out = Vec::new();
    for dir in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"))
        .unwrap()
        .flatten()
    {
        if !dir.path().is_dir() {
            continue;
        }
        for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
            let name = f.file_name().to_string_lossy().to_string();
            if name.contains(".pcap") {
                out.push(format!("fixtures/{}/{name}", dir.file_name().to_string_lossy()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn analyze_outputs_match_the_golden_files() {
    let mut diffs = Vec::new();
    for cap in captures() {
        let stem = cap
            .trim_start_matches("fixtures/")
            .replace('/', "-")
            .replace(".pcapng.gz", "")
            .replace(".pcap.gz", "");
        diffs.extend(check(&format!("{stem}.txt"), &run(&["analyze", "--all", &cap])));
        diffs.extend(check(
            &format!("{stem}.json"),
            &run(&["analyze", "--format", "json", &cap]),
        ));
    }
    assert!(diffs.is_empty(), "{}", diffs.join("\n\n"));
}
