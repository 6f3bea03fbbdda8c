//! The capture points as their files show them: the middle tap's place on the path,
//! coalesced and coarse stamps, each point's own snaplen.

use super::tests::{ms, path, records, sender_ip};
use super::*;

fn data_times(p: &Path, pcap: &[u8]) -> Vec<(u32, i64)> {
    let ip = sender_ip(p);
    records(pcap)
        .iter()
        .filter(|r| r.seg.src == ip && r.seg.payload_len > 0)
        .map(|r| (r.seg.seq.0, r.ts))
        .collect()
}

#[test]
fn the_tap_sees_data_after_the_bottleneck_and_acks_before_the_sender() {
    // 20 Mbit/s, 40 ms; the tap a quarter of the way from the sender (5 ms of the 20 ms
    // one-way delay), then 15 ms to the receiver.
    let p = Path {
        middle: Some(Tap {
            at: 0.25,
            capture: CaptureHost::default(),
        }),
        ..path(20, 40)
    };
    let out = run(&p, &[Flow::default()], ms(1500));
    let tap = out.pcap(Vantage::Middle).expect("a tap");
    let (at_tap, at_b) = (data_times(&p, tap), data_times(&p, &out.receiver_side_pcap));
    assert_eq!(at_tap.len(), at_b.len());
    for (a, b) in at_tap.iter().zip(&at_b) {
        assert_eq!(a.0, b.0);
        assert_eq!(b.1 - a.1, 15_000_000);
    }
    // ACKs: 15 ms from the receiver to the tap, 5 ms on to the sender (plus the ACK's
    // serialisation at 20 Mbit/s, 26.4 µs, before the tap).
    let s_ip = sender_ip(&p);
    let acks = |pcap: &[u8]| -> Vec<i64> {
        records(pcap)
            .iter()
            .filter(|r| r.seg.src != s_ip && !r.seg.flags.syn())
            .map(|r| r.ts)
            .collect()
    };
    let (from_b, at_tap, at_a) = (acks(&out.receiver_side_pcap), acks(tap), acks(&out.sender_side_pcap));
    assert_eq!((from_b.len(), at_tap.len()), (at_a.len(), at_a.len()));
    for ((b, m), a) in from_b.iter().zip(&at_tap).zip(&at_a) {
        assert!(m - b >= 15_026_000 && m - b < 16_000_000, "{}", m - b);
        assert_eq!(a - m, 5_000_000);
    }
}

#[test]
fn a_coalescing_receiver_stamps_trains_microseconds_apart() {
    // 1 Gbit/s: data arrives 12 µs apart; the NIC interrupts every 8 packets or 100 µs
    // and its poll hands them over 1 µs apart.
    let c = Coalesce {
        max_packets: 8,
        window: Duration::from_micros(100),
        per_packet: Duration::from_micros(1),
    };
    let p = Path {
        receiver_capture: CaptureHost {
            coalesce: Some(c),
            ..CaptureHost::default()
        },
        ..Path::new(1_000_000_000, ms(2))
    };
    let out = run(&p, &[Flow::default()], ms(300));
    let t: Vec<i64> = data_times(&p, &out.receiver_side_pcap).iter().map(|d| d.1).collect();
    let tight = t.windows(2).filter(|w| w[1] - w[0] <= 1_000).count();
    assert!(tight * 2 > t.len(), "{tight} of {}", t.len());
    // The stack took them as the capture stamped them: the transfer still completes.
    assert!(out.truth[0].closed);
    // Without coalescing the same path spaces the data at the link's 12.1 µs.
    let plain = run(&Path::new(1_000_000_000, ms(2)), &[Flow::default()], ms(300));
    let t: Vec<i64> = data_times(&p, &plain.receiver_side_pcap).iter().map(|d| d.1).collect();
    assert_eq!(t.windows(2).filter(|w| w[1] - w[0] <= 1_000).count(), 0);
}

#[test]
fn a_coarse_clock_and_a_coalescing_tap() {
    let p = Path {
        sender_capture: CaptureHost {
            resolution: ms(10),
            ..CaptureHost::default()
        },
        middle: Some(Tap {
            at: 0.5,
            capture: CaptureHost {
                coalesce: Some(Coalesce {
                    max_packets: 32,
                    window: Duration::from_micros(250),
                    per_packet: Duration::ZERO,
                }),
                ..CaptureHost::default()
            },
        }),
        ..path(100, 20)
    };
    let out = run(&p, &[Flow::default()], ms(1000));
    let a = records(&out.sender_side_pcap);
    assert!(a.iter().all(|r| r.ts % 10_000_000 == 0));
    assert!(a.windows(2).all(|w| w[0].ts <= w[1].ts));
    // The tap's batches share one stamp; a tap changes no timing: the receiver's
    // capture is that of the same path without the tap.
    let t: Vec<i64> = data_times(&p, out.pcap(Vantage::Middle).unwrap())
        .iter()
        .map(|d| d.1)
        .collect();
    let same = t.windows(2).filter(|w| w[1] == w[0]).count();
    assert!(same * 2 > t.len(), "{same} of {}", t.len());
    let without = run(
        &Path {
            middle: None,
            ..p.clone()
        },
        &[Flow::default()],
        ms(1000),
    );
    assert_eq!(without.receiver_side_pcap, out.receiver_side_pcap);
}

#[test]
fn each_capture_point_keeps_its_own_snaplen() {
    let p = Path {
        sender_capture: CaptureHost {
            snaplen: 96,
            ..CaptureHost::default()
        },
        receiver_capture: CaptureHost {
            snaplen: 1514,
            ..CaptureHost::default()
        },
        middle: Some(Tap {
            at: 0.5,
            capture: CaptureHost {
                snaplen: 68,
                ..CaptureHost::default()
            },
        }),
        ..path(10, 20)
    };
    let out = run(&p, &[Flow::default()], ms(300));
    for (pcap, snap) in [
        (&out.sender_side_pcap[..], 96usize),
        (&out.receiver_side_pcap[..], 1514),
        (out.middle_pcap.as_deref().unwrap(), 68),
    ] {
        assert_eq!(u32::from_le_bytes(pcap[16..20].try_into().unwrap()), snap as u32);
        let recs = records(pcap);
        assert!(recs.iter().all(|r| r.caplen == (r.wire as usize).min(snap)));
        assert!(recs.iter().any(|r| r.caplen == snap) || snap == 1514);
    }
}
