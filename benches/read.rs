//! Capture-reader throughput: frames/s and MB/s for pcap, pcapng, gzip and zstd, from
//! disk (page cache warm) and from memory, then on the lab's real gzip captures when
//! `../shared/captures` is present. Writes ~1.5 GB of temporary files.
//!
//! ```text
//! cargo bench --bench read
//! ```

use bdpscope::capture::{CaptureReader, LinkType, PcapNgWriter, PcapWriter};
use bdpscope::time::Timestamp;
use std::io::{self, Cursor, Write};
use std::time::Instant;

const T0: i64 = 1_700_000_000_000_000_000;

/// A record body: varied bytes, so compression has real work.
fn pkt(i: usize, len: usize) -> Vec<u8> {
    (0..len).map(|k| (i * 31 + k * 7) as u8).collect()
}

fn gzip(b: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

fn zstd_(b: &[u8]) -> Vec<u8> {
    zstd::encode_all(b, 3).unwrap()
}

fn main() {
    const N: usize = 5_000_000;
    const LEN: usize = 128;
    let dir = std::env::temp_dir().join(format!("bdpscope-capture-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let data: Vec<Vec<u8>> = (0..64).map(|i| pkt(i, LEN)).collect();

    let pcap_path = dir.join("big.pcap");
    let mut w = PcapWriter::new(
        io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&pcap_path).unwrap()),
        LinkType::ETHERNET,
        262144,
        false,
        false,
    )
    .unwrap();
    for i in 0..N {
        w.write_packet(Timestamp::from_nanos(T0 + i as i64 * 1_000), &data[i % 64], 1514)
            .unwrap();
    }
    w.into_inner().flush().unwrap();

    let ng_path = dir.join("big.pcapng");
    let mut w = PcapNgWriter::new(
        io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&ng_path).unwrap()),
        false,
    )
    .unwrap();
    let a = w.add_interface(LinkType::ETHERNET, 262144, Some(9)).unwrap();
    for i in 0..N {
        w.write_packet(a, Timestamp::from_nanos(T0 + i as i64 * 1_000), &data[i % 64], 1514)
            .unwrap();
    }
    w.into_inner().flush().unwrap();

    let m = N / 5;
    let small = &std::fs::read(&pcap_path).unwrap()[..24 + m * (16 + LEN)];
    let gz_path = dir.join("big.pcap.gz");
    std::fs::write(&gz_path, gzip(small)).unwrap();
    let zst_path = dir.join("big.pcap.zst");
    std::fs::write(&zst_path, zstd_(small)).unwrap();

    let run = |path: &std::path::Path, expect: usize| {
        // Warm the page cache, then time a full pass.
        let _ = std::fs::read(path).unwrap();
        let t = Instant::now();
        let mut r = CaptureReader::from_reader(std::fs::File::open(path).unwrap()).unwrap();
        let mut n = 0usize;
        let mut sum = 0u64;
        while let Some(f) = r.next_frame().unwrap() {
            n += 1;
            sum = sum.wrapping_add(f.data.len() as u64 + f.data[0] as u64 + f.ts.nanos() as u64);
        }
        let secs = t.elapsed().as_secs_f64();
        assert_eq!(n, expect);
        let size = std::fs::metadata(path).unwrap().len() as f64;
        println!(
            "{:>14}: {:>9} frames in {:.3} s = {:>6.1} M frames/s, {:>7.0} MB/s of input (checksum {sum})",
            path.file_name().unwrap().to_string_lossy(),
            n,
            secs,
            n as f64 / secs / 1e6,
            size / secs / 1e6,
        );
    };
    run(&pcap_path, N);
    run(&ng_path, N);
    run(&gz_path, m);
    run(&zst_path, m);

    // From memory: the parser's own cost (one memcpy into the window, no system calls).
    for path in [&pcap_path, &ng_path] {
        let bytes = std::fs::read(path).unwrap();
        let t = Instant::now();
        let mut r = CaptureReader::from_reader(Cursor::new(bytes)).unwrap();
        let mut n = 0usize;
        let mut sum = 0u64;
        while let Some(f) = r.next_frame().unwrap() {
            n += 1;
            sum = sum.wrapping_add(f.data.len() as u64 + f.data[0] as u64 + f.ts.nanos() as u64);
        }
        let secs = t.elapsed().as_secs_f64();
        assert_eq!(n, N);
        println!(
            "{:>14}: {:>6.1} M frames/s from memory (checksum {sum})",
            path.file_name().unwrap().to_string_lossy(),
            n as f64 / secs / 1e6
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();

    // Real gzip captures (the lab corpus), when present.
    let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/captures");
    if let Ok(rd) = std::fs::read_dir(&shared) {
        let files: Vec<_> = rd
            .filter_map(|e| e.ok())
            .flat_map(|e| std::fs::read_dir(e.path()).into_iter().flatten().filter_map(|e| e.ok()))
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().ends_with(".pcap.gz"))
            .collect();
        let blobs: Vec<Vec<u8>> = files.iter().map(|p| std::fs::read(p).unwrap()).collect();
        let t = Instant::now();
        let (mut n, mut raw, mut out) = (0u64, 0u64, 0u64);
        for b in blobs {
            raw += b.len() as u64;
            let mut r = CaptureReader::from_reader(Cursor::new(b)).unwrap();
            while r.next_frame().unwrap().is_some() {
                n += 1;
            }
            out += r.capture_offset();
        }
        let secs = t.elapsed().as_secs_f64();
        println!(
            "lab *.pcap.gz: {n} frames in {secs:.3} s = {:.1} M frames/s, {:.0} MB/s compressed, \
             {:.0} MB/s decompressed",
            n as f64 / secs / 1e6,
            raw as f64 / secs / 1e6,
            out as f64 / secs / 1e6
        );
    }
}
