//! The path's elements as a capture shows them: a shaper's bursts, a policer's drops,
//! an outage's silence, cross traffic's share, and the extremes of rate and delay.

use super::tests::{ms, path, records, sender_ip};
use super::*;

/// Payload bytes the receiver got per second over the transfer.
fn goodput_bps(t: &FlowTruth) -> f64 {
    t.bytes_read as f64 * 8.0 / t.transfer.total.as_secs_f64()
}

#[test]
fn a_shaper_releases_bursts_at_line_rate_and_delivers_its_rate() {
    // iperf through `tbf rate 50mbit burst 32k limit 64k` on a 1 Gbit/s link.
    let p = Path {
        shaper: Some(Shaper {
            rate_bps: 50_000_000,
            burst_bytes: 32 << 10,
            limit_bytes: 64 << 10,
            police: false,
            tick: ms(1),
        }),
        ..path(1000, 20)
    };
    let out = run(&p, &[Flow::default()], ms(3000));
    let t = &out.truth[0];
    assert!(t.shaper_drops > 0, "{t:?}");
    // The truth's bottleneck is the shaper's rate.
    assert!((t.payload_rate * 8.0 / 50e6 - 1448.0 / 1514.0).abs() < 1e-9);
    let g = goodput_bps(t);
    assert!((40e6..50e6).contains(&g), "{g}");
    // Most data segments reach the receiver back to back at 1 Gbit/s (12.1 µs apart) in
    // the trains each 1 ms tick releases, not 242 µs apart as a 50 Mbit/s link would
    // space them.
    let s_ip = sender_ip(&p);
    let arrivals: Vec<i64> = records(&out.receiver_side_pcap)
        .iter()
        .filter(|r| r.seg.src == s_ip && r.seg.payload_len == 1448)
        .map(|r| r.ts)
        .collect();
    let tight = arrivals.windows(2).filter(|w| w[1] - w[0] < 20_000).count();
    assert!(tight * 10 > arrivals.len() * 4, "{tight} of {}", arrivals.len());
}

#[test]
fn a_policer_drops_instead_of_queueing() {
    let p = Path {
        shaper: Some(Shaper {
            rate_bps: 20_000_000,
            burst_bytes: 64 << 10,
            limit_bytes: 0,
            police: true,
            tick: Duration::ZERO,
        }),
        ..path(1000, 30)
    };
    let out = run(&p, &[Flow::default()], ms(4000));
    let t = &out.truth[0];
    assert!(t.shaper_drops > 0 && t.retransmitted_segments >= t.shaper_drops);
    assert_eq!(t.queue_drops, 0);
    let g = goodput_bps(t);
    assert!(g < 20e6 && g > 5e6, "{g}");
    // No queue: the smallest RTT the sender saw is the base.
    let extra = t.min_rtt.unwrap().saturating_sub(t.base_rtt);
    assert!(extra < ms(1), "{extra:?}");
}

#[test]
fn an_outage_silences_the_path_and_the_sender_backs_off() {
    // 10 Mbit/s, 40 ms, down from 1.0 s to 3.0 s.
    let p = Path {
        outages: vec![Outage {
            start: ms(1000),
            length: ms(2000),
        }],
        ..path(10, 40)
    };
    assert!(p.down_at(ms(1000)) && p.down_at(ms(2999)) && !p.down_at(ms(3000)));
    let out = run(&p, &[Flow::default()], ms(4000));
    let t = &out.truth[0];
    assert!(t.outage_drops > 0 && t.rto_count >= 2, "{t:?}");
    assert!(t.closed && t.bytes_read == t.bytes_written);
    // Nothing sent after 1.0 s reaches the receiver before 3.0 s.
    let s_ip = sender_ip(&p);
    let epoch = (capture_seconds(Duration::ZERO) * 1e9) as i64;
    let inside = records(&out.receiver_side_pcap)
        .iter()
        .filter(|r| r.seg.src == s_ip)
        .map(|r| r.ts - epoch)
        .filter(|&at| at > 1_020_000_000 + 10_000_000 && at < 3_000_000_000)
        .count();
    assert_eq!(inside, 0);
    // The retransmissions during it back off: gaps between them at least double.
    let retx: Vec<i64> = records(&out.sender_side_pcap)
        .iter()
        .filter(|r| r.seg.src == s_ip && r.seg.payload_len > 0)
        .map(|r| r.ts - epoch)
        .filter(|&at| at > 1_100_000_000 && at < 3_000_000_000)
        .collect();
    assert!(retx.len() >= 2, "{retx:?}");
    for w in retx.windows(3) {
        assert!(w[2] - w[1] >= 2 * (w[1] - w[0]) - 1_000_000, "{retx:?}");
    }
}

#[test]
fn cross_traffic_takes_its_share_of_the_bottleneck() {
    let alone = path(20, 20);
    let shared = Path {
        cross: Some(CrossTraffic {
            rate_bps: 10_000_000,
            frame_bytes: 1514,
        }),
        ..alone.clone()
    };
    let a = run(&alone, &[Flow::default()], ms(3000));
    let b = run(&shared, &[Flow::default()], ms(3000));
    let (ga, gb) = (goodput_bps(&a.truth[0]), goodput_bps(&b.truth[0]));
    assert!(ga > 17e6, "{ga}");
    assert!(gb < 0.7 * ga && gb > 0.3 * ga, "{gb} vs {ga}");
    // Cross traffic is no captured host's: the captures hold the flow's packets only.
    assert_eq!(
        records(&a.sender_side_pcap)
            .iter()
            .filter(|r| r.seg.flags.syn())
            .count(),
        records(&b.sender_side_pcap)
            .iter()
            .filter(|r| r.seg.flags.syn())
            .count()
    );
}

#[test]
fn the_extremes_of_rate_and_delay_run() {
    // A 1 Gbit/s LAN of 0.2 ms and a 1 Mbit/s path of 400 ms.
    for (rate, rtt, bytes) in [
        (1_000_000_000u64, Duration::from_micros(200), 2_000_000u64),
        (1_000_000, ms(400), 20_000),
    ] {
        let p = Path::new(rate, rtt);
        let out = run(&p, &[Flow::default()], ms(1000));
        let t = &out.truth[0];
        assert!(t.closed && t.bytes_read > bytes, "{rate}: {t:?}");
        assert!(
            t.min_rtt.unwrap() >= t.base_rtt,
            "{rate}: {:?} {:?}",
            t.min_rtt,
            t.base_rtt
        );
        assert!(t.base_rtt >= rtt);
    }
}

#[test]
fn a_handshake_lost_in_an_outage_is_retransmitted() {
    // Down for the first 1.5 s: the client's SYNs at 0 and 1 s are lost, the one at 3 s
    // (Linux: 1 s, doubling) gets through. Then down while the SYN/ACK is on its way:
    // both ends retransmit.
    for (outage, syns) in [((0, 1500), 3), ((5, 100), 2)] {
        let p = Path {
            outages: vec![Outage {
                start: ms(outage.0),
                length: ms(outage.1),
            }],
            ..path(10, 20)
        };
        let out = run(&p, &[Flow::default()], ms(4000));
        let t = &out.truth[0];
        assert!(t.closed && t.bytes_read > 100_000, "{outage:?}: {t:?}");
        let client_syns = records(&out.receiver_side_pcap)
            .iter()
            .filter(|r| r.seg.flags.syn() && !r.seg.flags.ack())
            .count();
        assert_eq!(client_syns, syns, "{outage:?}");
    }
}
