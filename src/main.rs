//! The `bdpscope` command: a thin shell over the library. Parsing, dispatch and exit
//! status live here; each command is one file under `cli/`.

mod batch;
mod cli;
mod plot;
mod records;
mod render;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::parse();
    match cli::run(args) {
        Ok(status) => status.into(),
        Err(err) => {
            // A closed pipe (`bdpscope packets f | head`) is a normal way to stop reading
            // (ripgrep's rule): exit quietly.
            if err.chain().any(|e| {
                e.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            eprintln!("bdpscope: {err:#}");
            // Usage errors found after parsing (a capture filter libpcap refuses, words
            // that name no capture) exit as clap's own do.
            if err.downcast_ref::<cli::UsageError>().is_some() {
                return ExitCode::from(2);
            }
            ExitCode::from(1)
        }
    }
}
