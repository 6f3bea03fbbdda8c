//! Opening inputs: a path or `-` for standard input, recognised by content.

use anyhow::{Context, Result};
use bdpscope::capture::CaptureReader;
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// The name a capture goes by in output: its path as given, `-` for stdin.
pub fn display_name(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Opens a capture; the error names the file and the reason.
pub fn open(path: &Path) -> Result<(CaptureReader, Option<u64>)> {
    let name = display_name(path);
    let (input, size): (Box<dyn Read + Send>, Option<u64>) = if name == "-" {
        (Box::new(std::io::stdin()), None)
    } else {
        if path.is_dir() {
            anyhow::bail!(
                "{name}: is a directory, not a capture (`bdpscope batch {name} --out DIR` analyses every capture in a folder)"
            );
        }
        let f = File::open(path).with_context(|| format!("{name}: cannot open"))?;
        let size = f.metadata().ok().map(|m| m.len());
        (Box::new(f), size)
    };
    let reader = CaptureReader::new(input).with_context(|| format!("{name}: not readable as a capture"))?;
    Ok((reader, size))
}
