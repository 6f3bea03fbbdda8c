//! The whole analysis on arbitrary bytes: sniffing, decompression, pcap/pcapng parsing,
//! decoding, tracking and diagnosis must never panic, whatever the input.
#![no_main]

use bdpscope::analysis::{analyze_reader, AnalysisConfig};
use bdpscope::capture::CaptureReader;
use bdpscope::observe::NoObserver;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut reader) = CaptureReader::new(Box::new(std::io::Cursor::new(data.to_vec()))) {
        let _ = analyze_reader(&mut reader, AnalysisConfig::default(), NoObserver);
    }
});
