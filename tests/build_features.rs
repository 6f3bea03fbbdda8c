//! The README's two commands share one build of the dependencies: `cargo run --release`
//! (the workspace's default members, normal dependencies) and `cargo test-release` (the
//! same with the dev-dependencies) must resolve the same features for every crate they
//! both build. A dev-dependency that turns on one more feature of a shared crate makes
//! cargo build that crate and everything above it twice: the csv crate turned on
//! serde_core's `default`, and polars was compiled twice (~5 of CI's 23 CPU-minutes).

use std::collections::BTreeMap;
use std::process::Command;

/// Every crate the selection builds, with the features cargo resolves for it.
fn features(edges: &str) -> BTreeMap<String, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "--workspace",
            "--offline",
            "--prefix",
            "none",
            "-e",
            edges,
            "-f",
            "{p}|{f}",
        ])
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree -e {edges}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (p, f) = l.split_once('|')?;
            // "name vX.Y.Z (path)" -> "name vX.Y.Z"; "(*)" marks a repeat.
            let p: String = p.split(" (").next()?.trim().to_string();
            Some((p, f.trim_end_matches(" (*)").trim().to_string()))
        })
        .collect()
}

#[test]
fn the_tests_build_no_shared_crate_with_other_features_than_the_release_build() {
    let normal = features("normal,build");
    let with_dev = features("normal,build,dev");
    assert!(
        normal.keys().any(|p| p.starts_with("polars-core ")),
        "{:?}",
        normal.keys().take(5).collect::<Vec<_>>()
    );
    let differ: Vec<String> = normal
        .iter()
        // The package itself gains its `testkit` feature under test, by design.
        .filter(|(p, _)| !p.starts_with("bdpscope "))
        .filter_map(|(p, f)| {
            let d = with_dev.get(p)?;
            (d != f).then(|| format!("{p}: [{f}] built, [{d}] under test"))
        })
        .collect();
    assert!(
        differ.is_empty(),
        "dev-dependencies change features of shared crates:\n{}",
        differ.join("\n")
    );
}
