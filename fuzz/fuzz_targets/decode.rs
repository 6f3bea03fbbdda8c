//! One record of any link type through the decoder: never a panic.
#![no_main]

use bdpscope::capture::LinkType;
use bdpscope::decode::decode;
use libfuzzer_sys::fuzz_target;

const LINKS: [u32; 14] = [0, 1, 9, 12, 14, 50, 51, 101, 108, 113, 129, 228, 229, 276];

fuzz_target!(|data: &[u8]| {
    if let Some((&pick, rest)) = data.split_first() {
        let link = LinkType(LINKS[pick as usize % LINKS.len()]);
        let _ = decode(link, rest);
        let _ = decode(LinkType(242), rest);
    }
});
