//! The capture reader and the decoder against pcap-parser and etherparse on one real
//! capture: the measured half of ARCHITECTURE.md's "Hand code and why" (the other half,
//! what the crates cannot read, is tests/crate_limits.rs).
//!
//! ```text
//! cargo bench --bench crates -- CAPTURE [RUNS] [STAGE]
//! ```
//!
//! Stages: `read` (our reader), `read-pcap-parser` (pcap-parser's streaming reader, the
//! same 1 MiB buffer), `decode` (our reader + our decoder), `decode-etherparse` (our
//! reader + etherparse used as cheaply as it goes: Ethernet II and VLAN header slices,
//! `LaxIpSlice`, `TcpSlice`, the options iterator; Ethernet captures only). Best of RUNS
//! (default 3) each, page cache warm; one named stage runs alone, without a warm-up, for an
//! instruction count:
//! `valgrind --tool=callgrind target/release/deps/crates-* CAPTURE 1 read-pcap-parser`.
//! The capture must not be compressed (pcap-parser does not decompress).

use bdpscope::capture::{CaptureReader, LinkType};
use bdpscope::decode::decode;
use std::hint::black_box;
use std::time::Instant;

fn open(path: &str) -> CaptureReader {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    CaptureReader::from_reader(file).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn read(path: &str) -> u64 {
    let mut r = open(path);
    let mut n = 0u64;
    while let Some(f) = r.next_frame().unwrap_or(None) {
        n += 1;
        black_box(f.data);
    }
    n
}

fn read_pcap_parser(path: &str) -> u64 {
    use pcap_parser::{Block, PcapBlockOwned, PcapError};
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut r = pcap_parser::create_reader(1 << 20, file).unwrap_or_else(|e| panic!("{path}: {e:?}"));
    let mut n = 0u64;
    loop {
        match r.next() {
            Ok((offset, block)) => {
                match block {
                    PcapBlockOwned::Legacy(b) => {
                        n += 1;
                        black_box((b.ts_sec, b.ts_usec, b.origlen, b.data));
                    }
                    PcapBlockOwned::NG(Block::EnhancedPacket(b)) => {
                        n += 1;
                        black_box((b.if_id, b.ts_high, b.ts_low, b.origlen, b.data));
                    }
                    PcapBlockOwned::NG(Block::SimplePacket(b)) => {
                        n += 1;
                        black_box((b.origlen, b.data));
                    }
                    _ => {}
                }
                r.consume(offset);
            }
            Err(PcapError::Eof) => return n,
            Err(PcapError::Incomplete(_)) => {
                if r.refill().is_err() {
                    return n;
                }
            }
            Err(_) => return n,
        }
    }
}

fn read_and_decode(path: &str) -> u64 {
    let mut r = open(path);
    let mut n = 0u64;
    while let Some(f) = r.next_frame().unwrap_or(None) {
        n += 1;
        if let Ok(seg) = decode(f.link, f.data) {
            black_box(&seg);
        }
    }
    n
}

/// What `decode` extracts, through etherparse: addresses, ports, numbers, flags, window,
/// payload length from the IP header, MSS / window scale / SACK / timestamps.
fn etherparse_segment(data: &[u8]) -> Option<u64> {
    use etherparse::{EtherType, Ethernet2HeaderSlice, LaxIpSlice, SingleVlanHeaderSlice, TcpOptionElement, TcpSlice};
    let eth = Ethernet2HeaderSlice::from_slice(data).ok()?;
    let (mut ether_type, mut rest) = (eth.ether_type(), &data[14..]);
    while matches!(ether_type, EtherType::VLAN_TAGGED_FRAME | EtherType::PROVIDER_BRIDGING) {
        let v = SingleVlanHeaderSlice::from_slice(rest).ok()?;
        (ether_type, rest) = (v.ether_type(), &rest[4..]);
    }
    if !matches!(ether_type, EtherType::IPV4 | EtherType::IPV6) {
        return None;
    }
    let (ip, _) = LaxIpSlice::from_slice(rest).ok()?;
    let payload = ip.payload();
    if payload.fragmented || payload.ip_number != etherparse::IpNumber::TCP {
        return None;
    }
    let tcp = TcpSlice::from_slice(payload.payload).ok()?;
    // The segment's length as the IP header gives it, whatever the snaplen kept.
    let ip_len = match &ip {
        LaxIpSlice::Ipv4(v4) => {
            let h = v4.header();
            match h.total_len() {
                0 => rest.len(),
                n => n as usize,
            }
            .saturating_sub(h.ihl() as usize * 4)
        }
        LaxIpSlice::Ipv6(v6) => (v6.header().payload_length() as usize).saturating_sub(v6.extensions().slice().len()),
    };
    let mut acc = black_box((ip.source_addr(), ip.destination_addr())).0.is_ipv4() as u64;
    acc += u64::from(tcp.source_port()) + u64::from(tcp.destination_port());
    acc += u64::from(tcp.sequence_number()) + u64::from(tcp.acknowledgment_number());
    acc += u64::from(tcp.window_size()) + u64::from(tcp.syn()) + u64::from(tcp.fin()) + u64::from(tcp.ack());
    acc += (ip_len as u64).saturating_sub(u64::from(tcp.data_offset()) * 4);
    for o in tcp.options_iterator() {
        match o {
            Ok(TcpOptionElement::MaximumSegmentSize(m)) => acc += u64::from(m),
            Ok(TcpOptionElement::WindowScale(w)) => acc += u64::from(w),
            Ok(TcpOptionElement::Timestamp(v, e)) => acc += u64::from(v) + u64::from(e),
            Ok(TcpOptionElement::SelectiveAcknowledgement(f, more)) => {
                acc += u64::from(f.0) + more.iter().flatten().count() as u64
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Some(acc)
}

fn read_and_decode_etherparse(path: &str) -> u64 {
    let mut r = open(path);
    let mut n = 0u64;
    while let Some(f) = r.next_frame().unwrap_or(None) {
        n += 1;
        assert_eq!(
            f.link,
            LinkType::ETHERNET,
            "decode-etherparse reads Ethernet captures only"
        );
        black_box(etherparse_segment(f.data));
    }
    n
}

/// A stage's name and one pass over the capture (returns the records it saw).
type Stage = (&'static str, fn(&str) -> u64);

fn main() {
    // `cargo bench` passes "--bench" to every bench target: only the free arguments count.
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: cargo bench --bench crates -- CAPTURE [RUNS] [STAGE]");
        return;
    };
    let runs: usize = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(3);
    let stages: [Stage; 4] = [
        ("read", read),
        ("read-pcap-parser", read_pcap_parser),
        ("decode", read_and_decode),
        ("decode-etherparse", read_and_decode_etherparse),
    ];
    let chosen: Vec<_> = match args.get(2) {
        Some(name) => stages.iter().filter(|(s, _)| s == name).collect(),
        None => {
            read(path); // warms the page cache
            stages.iter().collect()
        }
    };
    if chosen.is_empty() {
        eprintln!("unknown stage; one of: read, read-pcap-parser, decode, decode-etherparse");
        return;
    }
    for (stage, pass) in chosen {
        let (mut fastest, mut n) = (f64::INFINITY, 0);
        for _ in 0..runs {
            let t = Instant::now();
            n = pass(path);
            fastest = fastest.min(t.elapsed().as_secs_f64());
        }
        println!(
            "{stage:>18}: {n} records in {fastest:.3} s = {:.0} ns each, best of {runs}",
            fastest * 1e9 / n as f64
        );
    }
}
