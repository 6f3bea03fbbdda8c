//! A progress bar for long reads, shown only when stderr is a terminal (quiet in pipes
//! and in CI logs).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

/// Inputs smaller than this finish before a bar would be useful.
const MIN_BYTES: u64 = 64 << 20;

pub fn bar(total_bytes: Option<u64>, label: &str) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let total = total_bytes.filter(|&n| n >= MIN_BYTES)?;
    let pb = ProgressBar::new(total);
    pb.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_message(label.to_string());
    Some(pb)
}
