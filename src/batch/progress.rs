//! The batch progress bar: files done/total, bytes, packets/s and ETA, on a terminal only
//! (quiet in pipes and CI logs). Shared by the workers; every method is cheap.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

pub struct Progress {
    bar: Option<ProgressBar>,
    files_total: usize,
    files_done: AtomicUsize,
    packets: AtomicU64,
    started: Instant,
}

impl Progress {
    pub fn new(files_total: usize, bytes_total: u64) -> Progress {
        let bar = (std::io::stderr().is_terminal() && files_total > 0).then(|| {
            let pb = ProgressBar::new(bytes_total);
            pb.set_style(
                ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            pb
        });
        let p = Progress {
            bar,
            files_total,
            files_done: AtomicUsize::new(0),
            packets: AtomicU64::new(0),
            started: Instant::now(),
        };
        p.redraw();
        p
    }

    fn redraw(&self) {
        if let Some(b) = &self.bar {
            let secs = self.started.elapsed().as_secs_f64().max(1e-3);
            let pps = self.packets.load(Ordering::Relaxed) as f64 / secs;
            b.set_message(format!(
                "{}/{} files, {:.0}k packets/s",
                self.files_done.load(Ordering::Relaxed),
                self.files_total,
                pps / 1e3
            ));
        }
    }

    /// Some bytes of input were read and some packets analysed.
    pub fn advance(&self, bytes: u64, packets: u64) {
        self.packets.fetch_add(packets, Ordering::Relaxed);
        if let Some(b) = &self.bar {
            b.inc(bytes);
            self.redraw();
        }
    }

    pub fn file_done(&self) {
        self.files_done.fetch_add(1, Ordering::Relaxed);
        self.redraw();
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
