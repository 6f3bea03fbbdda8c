//! Decode throughput, in ns per packet, for the link/IP/TCP shapes seen in practice:
//!
//! ```text
//! cargo bench --bench decode
//! ```

use bdpscope::capture::LinkType;
use bdpscope::decode::decode;
use bdpscope::testkit::TcpPacket;
use std::hint::black_box;
use std::time::Instant;

type Records = Vec<(LinkType, Vec<u8>)>;

/// 1024 distinct records of one shape, so branch predictors see real variety in the
/// fields (sequence numbers, lengths, ports) but the same layout.
fn records(shape: impl Fn(u32) -> TcpPacket) -> Records {
    (0..1024u32).map(|i| shape(i).build()).collect()
}

/// Best of 7 runs of `rounds` passes over the records, in ns per packet (the minimum,
/// because the noise on a shared machine only ever adds time).
fn ns_per_packet(records: &[(LinkType, Vec<u8>)], rounds: usize) -> f64 {
    let mut runs = Vec::new();
    for _ in 0..7 {
        let start = Instant::now();
        let mut acc = 0u64;
        for _ in 0..rounds {
            for (link, bytes) in records {
                match decode(*link, black_box(bytes)) {
                    Ok(s) => {
                        acc = acc.wrapping_add(s.seq.0 as u64 + s.payload_len as u64);
                        if let Some(ts) = s.options.timestamps {
                            acc = acc.wrapping_add(ts.val as u64);
                        }
                    }
                    Err(_) => acc += 1,
                }
            }
        }
        black_box(acc);
        runs.push(start.elapsed().as_nanos() as f64 / (rounds * records.len()) as f64);
    }
    runs.into_iter().fold(f64::INFINITY, f64::min)
}

fn main() {
    let data = |i: u32| {
        TcpPacket::new("10.0.0.1:40000", &format!("10.0.0.2:{}", 5000 + i % 7))
            .seq(i.wrapping_mul(1448))
            .ack(1)
            .window(512)
            .ts(i, i / 2)
            .payload_len(if i.is_multiple_of(3) { 0 } else { 1448 })
            .snaplen(128)
    };
    let shapes: Vec<(&str, Records)> = vec![
        ("ethernet/ipv4/tcp+ts", records(data)),
        ("ethernet/vlan/ipv4/tcp+ts", records(|i| data(i).vlan(10))),
        ("sll2/ipv4/tcp+ts", records(|i| data(i).sll2())),
        (
            "ethernet/ipv6/tcp+ts",
            records(|i| {
                TcpPacket::new("[fd00::1]:40000", "[fd00::2]:5001")
                    .seq(i.wrapping_mul(1448))
                    .ack(1)
                    .ts(i, i)
                    .payload_len(1428)
                    .snaplen(128)
            }),
        ),
        (
            "ethernet/ipv4/tcp+ts+sack",
            records(|i| data(i).sack(&[(i, i + 1448), (i + 4000, i + 5448)])),
        ),
        (
            "ethernet/ipv4/syn (mss,sackok,ts,ws)",
            records(|i| {
                TcpPacket::new("10.0.0.1:40000", "10.0.0.2:5001")
                    .seq(i)
                    .syn()
                    .mss(1460)
                    .sack_perm()
                    .ts(i, 0)
                    .wscale(7)
            }),
        ),
    ];
    for (name, recs) in &shapes {
        let ns = ns_per_packet(recs, 10_000);
        println!("{name:40} {ns:6.2} ns/packet  ({:.1} M packets/s)", 1e3 / ns);
    }
}
