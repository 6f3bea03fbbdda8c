//! A port scan merged into a capture, for tests of the attempts a scan finding summarises
//! (listed only with `list_all`, `--all`): what every view and every observer lists of
//! them must be what `analyze` lists.

use super::TcpPacket;
use crate::capture::{CaptureReader, LinkType, PcapWriter};
use crate::time::{Span, Timestamp};

/// The scanning host and the host it probes.
pub const SCANNER: &str = "10.66.0.9";
pub const TARGET: &str = "10.99.0.1";

/// `capture` (a pcap of Ethernet records, as `sim` writes them) with a SYN scan of ports
/// 1..=`ports` of [`TARGET`] from [`SCANNER`] merged in: a probe every 5 ms from the
/// capture's first record, from a port of its own; every tenth probe is refused (a reset
/// 1 ms later), the others are never answered, as most of nmap's are.
pub fn with_port_scan(capture: &[u8], ports: u16) -> Vec<u8> {
    let mut reader = CaptureReader::new(Box::new(std::io::Cursor::new(capture.to_vec()))).expect("a capture");
    let mut records: Vec<(Timestamp, Vec<u8>, u32)> = Vec::new();
    while let Some(f) = reader.next_frame().expect("a readable capture") {
        assert_eq!(f.link, LinkType::ETHERNET, "records are merged as Ethernet");
        records.push((f.ts, f.data.to_vec(), f.wire_len));
    }
    let t0 = records.first().map_or(Timestamp(0), |r| r.0);
    for i in 0..ports {
        let (src, dst) = (format!("{SCANNER}:{}", 40_000 + i), format!("{TARGET}:{}", 1 + i));
        let isn = 1_000 + u32::from(i) * 7_919;
        let at = t0 + Span::from_millis(5 * i64::from(i));
        let syn = TcpPacket::new(&src, &dst).syn().seq(isn).mss(1460).ethernet();
        records.push((at, syn.build().1, syn.wire_len() as u32));
        if i % 10 == 0 {
            let rst = TcpPacket::new(&dst, &src).rst().ack(isn + 1).window(0).ethernet();
            records.push((at + Span::from_millis(1), rst.build().1, rst.wire_len() as u32));
        }
    }
    // Stable: the capture's own records keep their order among equal times.
    records.sort_by_key(|r| r.0);
    let mut w = PcapWriter::new(Vec::new(), LinkType::ETHERNET, 65_535, true, false).expect("a writer");
    for (ts, data, wire_len) in &records {
        w.write_packet(*ts, data, *wire_len).expect("written");
    }
    w.into_inner()
}
