//! The serial floor of `analyze` on one real capture: how fast one thread can read its
//! records, and read and decode them, which is what `analyze`'s reading thread does before
//! it hands each segment to a worker. No design that reads the file in one thread can be
//! faster than this, whatever the analysis costs; comparing it with `analyze` and tcptrace
//! on the same file (bench/run.sh) says how much of the wall time is reading.
//!
//! ```text
//! cargo bench --bench floor -- CAPTURE [RUNS] [read|decode|print]
//! ```
//!
//! Best of RUNS (default 5) per stage, page cache warm (the first pass warms it). Naming a
//! stage runs only its RUNS passes and no warm-up, so that an instruction count
//! (`valgrind --tool=callgrind target/release/deps/floor-* CAPTURE 1 read`) covers exactly
//! one pass; the decoder's share is the difference between the two stages. `print` decodes
//! as `analyze`'s reading thread does, with each record's fingerprint (`decode_printed`,
//! for capture duplicates): its share is the difference with `decode`.

use bdpscope::capture::CaptureReader;
use bdpscope::decode::{decode, decode_printed, Print};
use std::hint::black_box;
use std::time::Instant;

fn open(path: &str) -> CaptureReader {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    CaptureReader::from_reader(file).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Seconds of the fastest of `runs` passes, and the records of one pass.
fn best(runs: usize, mut pass: impl FnMut() -> u64) -> (f64, u64) {
    let mut fastest = f64::INFINITY;
    let mut records = 0;
    for _ in 0..runs {
        let t = Instant::now();
        records = pass();
        fastest = fastest.min(t.elapsed().as_secs_f64());
    }
    (fastest, records)
}

fn main() {
    // `cargo bench` passes "--bench" to every bench target: only the free arguments count.
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: cargo bench --bench floor -- CAPTURE [RUNS]");
        return;
    };
    let runs: usize = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(5);
    let stage = args.get(2).map(String::as_str);

    let read_only = || {
        let mut r = open(path);
        let mut n = 0u64;
        while let Some(f) = r.next_frame().unwrap_or(None) {
            n += 1;
            black_box(f.data);
        }
        n
    };
    let read_and_decode = || {
        let mut r = open(path);
        let (mut n, mut tcp) = (0u64, 0u64);
        while let Some(f) = r.next_frame().unwrap_or(None) {
            n += 1;
            if let Ok(seg) = decode(f.link, f.data) {
                tcp += 1;
                black_box(&seg);
            }
        }
        black_box(tcp);
        n
    };
    let read_and_print = || {
        let mut r = open(path);
        let (mut n, mut tcp) = (0u64, 0u64);
        let mut print = Print::default();
        while let Some(f) = r.next_frame().unwrap_or(None) {
            n += 1;
            if let Ok(seg) = decode_printed(f.link, f.data, &mut print) {
                tcp += 1;
                black_box(&seg);
                black_box(&print);
            }
        }
        black_box(tcp);
        n
    };
    let results = match stage {
        Some("read") => vec![("read records", best(runs, read_only))],
        Some("decode") => vec![("read + decode", best(runs, read_and_decode))],
        Some("print") => vec![("read + print", best(runs, read_and_print))],
        Some(other) => {
            eprintln!("unknown stage {other:?}: read, decode or print");
            return;
        }
        None => {
            read_only(); // warms the page cache
            vec![
                ("read records", best(runs, read_only)),
                ("read + decode", best(runs, read_and_decode)),
                ("read + print", best(runs, read_and_print)),
            ]
        }
    };
    for (stage, (secs, n)) in results {
        println!(
            "{stage:>14}: {n} records in {secs:.3} s = {:.2} M records/s ({:.0} ns each), best of {runs}",
            n as f64 / secs / 1e6,
            secs * 1e9 / n as f64
        );
    }
}
