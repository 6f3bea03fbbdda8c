//! Unit tests of the simulator itself: determinism, the sender's limits as a capture
//! shows them, conservation of bytes, the handshake options, the capture format.

use super::rng::Rng;
use super::*;
use crate::capture::CaptureReader;
use crate::decode::{decode, Segment};
use std::net::IpAddr;

pub(super) fn ms(x: u64) -> Duration {
    Duration::from_millis(x)
}

pub(super) fn path(mbit: u64, rtt_ms: u64) -> Path {
    Path::new(mbit * 1_000_000, ms(rtt_ms))
}

pub(super) struct Rec {
    pub ts: i64,
    pub caplen: usize,
    pub wire: u32,
    pub seg: Segment,
}

pub(super) fn records(pcap: &[u8]) -> Vec<Rec> {
    let mut r = CaptureReader::from_reader(std::io::Cursor::new(pcap.to_vec())).unwrap();
    let mut out = Vec::new();
    while let Some(f) = r.next_frame().unwrap() {
        let seg = decode(f.link, f.data).unwrap();
        out.push(Rec {
            ts: f.ts.nanos(),
            caplen: f.data.len(),
            wire: f.wire_len,
            seg,
        });
    }
    out
}

pub(super) fn sender_ip(p: &Path) -> IpAddr {
    if p.ipv6 {
        "fd00::2".parse().unwrap()
    } else {
        "10.0.0.2".parse().unwrap()
    }
}

#[test]
fn same_seed_same_bytes() {
    let p = Path {
        loss: 0.01,
        ..path(10, 40)
    };
    let flows = [
        Flow::default(),
        Flow {
            start: ms(5),
            cc: Cc::Reno,
            ..Flow::default()
        },
    ];
    let a = run(&p, &flows, ms(1500));
    let b = run(&p, &flows, ms(1500));
    assert_eq!(a.sender_side_pcap, b.sender_side_pcap);
    assert_eq!(a.receiver_side_pcap, b.receiver_side_pcap);
    assert_eq!(a.truth, b.truth);
    let c = run(&Path { seed: 2, ..p }, &flows, ms(1500));
    assert_ne!(a.sender_side_pcap, c.sender_side_pcap);
}

#[test]
fn rng_is_uniform_and_streams_differ() {
    let mut r = Rng::new(1, 2);
    let n = 200_000;
    let (mut below, mut sum) = (0, 0.0);
    for _ in 0..n {
        let x = r.next_f64();
        assert!((0.0..1.0).contains(&x));
        below += (x < 0.015) as u32;
        sum += x;
    }
    let frac = below as f64 / n as f64;
    assert!((frac - 0.015).abs() < 0.0015, "{frac}");
    assert!((sum / n as f64 - 0.5).abs() < 0.005);
    assert_ne!(Rng::new(1, 1).next_u64(), Rng::new(1, 2).next_u64());
    assert_ne!(Rng::new(0, 1).next_u64(), 0);
}

/// Replays the sender-side capture: every new data segment must fit in the window the
/// receiver had granted at that moment (the ACK at the sender side arrives when the
/// sender learns of it).
fn check_window(p: &Path, out: &SimOutput) {
    let recs = records(&out.sender_side_pcap);
    let s_ip = sender_ip(p);
    for (i, t) in out.truth.iter().enumerate() {
        assert_eq!(t.window_violations, 0, "flow {i}");
        let port = t.server.rsplit(':').next().unwrap().parse::<u16>().unwrap();
        let shift = t.sender_snd_wscale.unwrap_or(0) as u32;
        let mut edge: Option<(u32, u32)> = None; // (ack, window bytes)
        let mut checked = 0;
        for r in &recs {
            let s = &r.seg;
            if s.src_port != port && s.dst_port != port {
                continue;
            }
            if s.flags.syn() {
                continue;
            }
            if s.src != s_ip {
                edge = Some((s.ack.0, (s.window as u32) << shift));
            } else if s.payload_len > 0 {
                let (ack, win) = edge.expect("an ACK before data");
                let end = s.seq.add(s.payload_len);
                assert!(
                    end.0.wrapping_sub(ack) <= win,
                    "flow {i}: segment ends {} bytes past the ACK, window {win}",
                    end.0.wrapping_sub(ack)
                );
                checked += 1;
            }
        }
        assert!(checked > 100, "flow {i}: {checked} segments");
    }
}

#[test]
fn the_sender_stays_within_the_receivers_window() {
    let p = path(20, 40);
    let cases = [
        vec![Flow {
            rcvbuf: 30_000,
            ..Flow::default()
        }],
        vec![Flow {
            rcvbuf: 80_480,
            reader: Reader::Rate {
                bps: 3_000_000,
                tick: ms(100),
            },
            ..Flow::default()
        }],
        vec![
            Flow::default(),
            Flow {
                rcvbuf: 50_000,
                start: ms(3),
                ..Flow::default()
            },
        ],
    ];
    for flows in cases {
        let out = run(&p, &flows, ms(2000));
        check_window(&p, &out);
    }
    // Window scaling stripped from the SYN-ACK: the sender scales the receiver's
    // unscaled windows by 7 and believes them.
    let flows = [Flow {
        middlebox: Middlebox {
            strip_wscale: Strip::SynAck,
            ..Middlebox::default()
        },
        ..Flow::default()
    }];
    let out = run(&p, &flows, ms(2000));
    assert_eq!(out.truth[0].sender_snd_wscale, Some(7));
    check_window(&p, &out);
}

#[test]
fn the_flight_stays_within_the_congestion_window() {
    for p in [
        Path {
            loss: 0.02,
            ..path(20, 40)
        },
        path(20, 40),
    ] {
        let out = run(&p, &[Flow::default()], ms(3000));
        let t = &out.truth[0];
        assert_eq!(t.window_violations, 0);
        // Cumulative flight as the capture shows it can exceed cwnd only by what SACK
        // reported delivered; without loss it never does.
        if p.loss == 0.0 && t.queue_drops == 0 {
            assert!(t.max_flight_bytes <= t.max_cwnd_segments as u64 * t.mss as u64);
        }
    }
}

#[test]
fn bytes_are_conserved() {
    for (p, flow) in [
        (
            Path {
                loss: 0.015,
                ..path(10, 40)
            },
            Flow::default(),
        ),
        (
            path(20, 20),
            Flow {
                upload: true,
                cc: Cc::Reno,
                sender_stack: Stack {
                    sack: false,
                    ..Stack::linux()
                },
                ..Flow::default()
            },
        ),
        (
            Path {
                loss: 0.01,
                ..path(20, 20)
            },
            Flow {
                sender_stack: Stack {
                    sack: false,
                    timestamps: false,
                    ..Stack::linux()
                },
                ..Flow::default()
            },
        ),
        (
            path(20, 40),
            Flow {
                app: App::OnOff {
                    burst: 100_000,
                    every: ms(200),
                },
                ..Flow::default()
            },
        ),
    ] {
        let out = run(&p, std::slice::from_ref(&flow), ms(2000));
        let t = &out.truth[0];
        assert!(t.closed, "{flow:?}");
        assert!(t.bytes_written > 100_000);
        assert_eq!(t.bytes_written, t.bytes_acked);
        assert_eq!(t.bytes_written, t.bytes_read);
        let s_ip = sender_ip(&p);
        let data = |pcap: &[u8]| -> Vec<Segment> {
            records(pcap)
                .into_iter()
                .map(|r| r.seg)
                .filter(|s| s.src == s_ip && s.payload_len > 0)
                .collect()
        };
        let at_a = data(&out.sender_side_pcap);
        let at_b = data(&out.receiver_side_pcap);
        assert_eq!(at_a.len() as u64, t.segments_sent);
        assert_eq!(at_b.len() as u64, t.segments_sent - t.queue_drops - t.random_losses);
        if p.loss > 0.0 {
            assert!(t.random_losses > 0 && t.retransmitted_segments >= t.random_losses);
        }
        // Every byte reached the receiver's side at least once.
        let isn = records(&out.sender_side_pcap)
            .iter()
            .find(|r| r.seg.src == s_ip && r.seg.flags.syn())
            .map(|r| r.seg.seq.0)
            .unwrap();
        let mut spans: Vec<(u32, u32)> = at_b
            .iter()
            .map(|s| {
                let a = s.seq.0.wrapping_sub(isn + 1);
                (a, a + s.payload_len)
            })
            .collect();
        spans.sort();
        let mut covered = 0u32;
        for (a, b) in spans {
            assert!(a <= covered, "hole at {covered}");
            covered = covered.max(b);
        }
        assert_eq!(covered as u64, t.bytes_written);
    }
}

#[test]
fn window_scale_follows_the_receive_buffer() {
    for (rcvbuf, shift) in [(64_000u32, 0u8), (80_480, 1), (326_880, 3), (4 << 20, 7)] {
        let out = run(
            &path(10, 20),
            &[Flow {
                rcvbuf,
                ..Flow::default()
            }],
            ms(300),
        );
        assert_eq!(out.truth[0].receiver_rcv_wscale, Some(shift), "{rcvbuf}");
        let syn = records(&out.receiver_side_pcap)
            .into_iter()
            .find(|r| r.seg.flags.syn() && !r.seg.flags.ack())
            .unwrap();
        assert_eq!(syn.seg.options.wscale, Some(shift));
        assert_eq!(syn.seg.options.mss, Some(1460));
        assert!(syn.seg.options.sack_permitted);
        assert_eq!(syn.seg.options.timestamps.unwrap().ecr, 0);
        // Linux's first window: the buffer rounded down to whole MSS, at most 16 bits.
        assert_eq!(syn.seg.window as u32, rcvbuf.min(65535) / 1460 * 1460);
    }
}

#[test]
fn a_middlebox_strips_options_between_the_capture_points() {
    let syns = |out: &SimOutput| {
        let pick = |pcap: &[u8]| {
            let r = records(pcap);
            let syn = r
                .iter()
                .find(|r| r.seg.flags.syn() && !r.seg.flags.ack())
                .unwrap()
                .seg
                .options;
            let syn_ack = r
                .iter()
                .find(|r| r.seg.flags.syn() && r.seg.flags.ack())
                .unwrap()
                .seg
                .options;
            (syn, syn_ack)
        };
        (pick(&out.sender_side_pcap), pick(&out.receiver_side_pcap))
    };
    let run_with = |o: Middlebox| {
        run(
            &path(10, 20),
            &[Flow {
                middlebox: o,
                ..Flow::default()
            }],
            ms(500),
        )
    };
    // Stripped on the SYN (client = receiver side): the receiver's capture shows it, the
    // sender's does not, and scaling is off at both ends.
    let out = run_with(Middlebox {
        strip_wscale: Strip::Syn,
        ..Middlebox::default()
    });
    let ((a_syn, a_sa), (b_syn, b_sa)) = syns(&out);
    assert_eq!((b_syn.wscale, a_syn.wscale), (Some(7), None));
    assert_eq!((a_sa.wscale, b_sa.wscale), (None, None));
    assert!(a_syn.complete && a_syn.timestamps.is_some() && a_syn.sack_permitted);
    assert_eq!(
        (out.truth[0].sender_snd_wscale, out.truth[0].receiver_rcv_wscale),
        (None, None)
    );
    // Stripped on the SYN-ACK: the sender believes scaling is on, the receiver not.
    let out = run_with(Middlebox {
        strip_wscale: Strip::SynAck,
        ..Middlebox::default()
    });
    let ((a_syn, a_sa), (b_syn, b_sa)) = syns(&out);
    assert_eq!((a_syn.wscale, b_syn.wscale), (Some(7), Some(7)));
    assert_eq!((a_sa.wscale, b_sa.wscale), (Some(7), None));
    assert_eq!(
        (out.truth[0].sender_snd_wscale, out.truth[0].receiver_rcv_wscale),
        (Some(7), None)
    );
    // SACK-permitted and timestamps stripped both ways, MSS clamped.
    let out = run_with(Middlebox {
        strip_sack: Strip::Both,
        strip_timestamps: Strip::Both,
        clamp_mss: Some(1200),
        ..Middlebox::default()
    });
    let ((a_syn, a_sa), (b_syn, b_sa)) = syns(&out);
    assert!(b_syn.sack_permitted && b_syn.timestamps.is_some() && b_syn.mss == Some(1460));
    assert!(!a_syn.sack_permitted && a_syn.timestamps.is_none() && a_syn.mss == Some(1200));
    assert!(!a_sa.sack_permitted && a_sa.timestamps.is_none() && a_sa.mss == Some(1460));
    assert!(!b_sa.sack_permitted && b_sa.timestamps.is_none() && b_sa.mss == Some(1200));
    assert_eq!(out.truth[0].mss, 1200);
    let data = records(&out.receiver_side_pcap)
        .into_iter()
        .filter(|r| r.seg.payload_len > 0)
        .map(|r| r.seg)
        .collect::<Vec<_>>();
    assert!(data
        .iter()
        .all(|s| s.payload_len <= 1200 && s.options.timestamps.is_none()));
}

#[test]
fn a_slow_reader_closes_the_window() {
    let out = run(
        &path(20, 40),
        &[Flow {
            rcvbuf: 80_480,
            reader: Reader::Rate {
                bps: 2_000_000,
                tick: ms(100),
            },
            ..Flow::default()
        }],
        ms(3000),
    );
    let t = &out.truth[0];
    assert!(t.zero_window_acks > 0);
    let zero = records(&out.receiver_side_pcap)
        .iter()
        .filter(|r| r.seg.src != sender_ip(&Path::new(1, ms(1))) && r.seg.window == 0)
        .count();
    assert_eq!(zero as u64, t.zero_window_acks);
    assert!(t.steady.rwnd_share() > 0.9, "{:?}", t.steady);
    // About 2 Mbit/s read, the send buffer's backlog included.
    let rate = t.bytes_read as f64 * 8.0 / t.transfer.total.as_secs_f64();
    assert!((1.7e6..2.3e6).contains(&rate), "{rate}");
}

#[test]
fn acks_and_timestamps_look_like_linux() {
    let p = path(20, 40);
    let out = run(&p, &[Flow::default()], ms(2000));
    let recs = records(&out.receiver_side_pcap);
    let s_ip = sender_ip(&p);
    // Delayed ACKs: in steady state most ACKs cover two segments.
    let mut last_ack = None;
    let mut per_ack = Vec::new();
    let mut tsvals = std::collections::HashSet::new();
    let mut last_val = [0u32; 2];
    for r in &recs {
        let s = &r.seg;
        let dir = (s.src == s_ip) as usize;
        if let Some(ts) = s.options.timestamps {
            assert!(ts.val.wrapping_sub(last_val[dir]) < 1 << 31 || last_val[dir] == 0);
            last_val[dir] = ts.val;
            if dir == 1 {
                tsvals.insert(ts.val);
            } else if !s.flags.syn() {
                // Every echo is the TSval of a data segment the receiver got.
                assert!(tsvals.contains(&ts.ecr), "echo {}", ts.ecr);
            }
        }
        if dir == 0 && !s.flags.syn() {
            if let Some(a) = last_ack {
                per_ack.push(s.ack.0.wrapping_sub(a));
            }
            last_ack = Some(s.ack.0);
        }
    }
    let two = per_ack.iter().filter(|&&d| d == 2 * 1448).count();
    assert!(two * 2 > per_ack.len(), "{two} of {}", per_ack.len());
    // Data segments leave the bottleneck spaced by their serialisation time (606 µs).
    let arrivals: Vec<i64> = recs
        .iter()
        .filter(|r| r.seg.src == s_ip && r.seg.payload_len == 1448)
        .map(|r| r.ts)
        .collect();
    let gaps = arrivals
        .windows(2)
        .filter(|w| (w[1] - w[0] - 605_600).abs() <= 1_000)
        .count();
    assert!(gaps * 2 > arrivals.len(), "{gaps} of {}", arrivals.len());
}

#[test]
fn captures_look_like_tcpdump() {
    let p = Path {
        ipv6: true,
        ..path(10, 20)
    };
    let out = run(&p, &[Flow::default()], ms(500));
    for pcap in [&out.sender_side_pcap, &out.receiver_side_pcap] {
        assert_eq!(&pcap[..4], &[0xd4, 0xc3, 0xb2, 0xa1]); // µs, little-endian
        assert_eq!(u32::from_le_bytes(pcap[16..20].try_into().unwrap()), 128);
        let recs = records(pcap);
        assert!(recs.windows(2).all(|w| w[0].ts <= w[1].ts));
        assert!(recs.iter().all(|r| r.caplen <= 128 && r.seg.src.is_ipv6()));
        let full = recs.iter().filter(|r| r.seg.payload_len == 1428).count();
        assert!(full > 100);
        assert!(recs
            .iter()
            .filter(|r| r.seg.payload_len == 1428)
            .all(|r| r.wire == 14 + 40 + 32 + 1428 && r.caplen == 128));
    }
    assert_eq!(out.truth[0].mss, 1428);
}

#[test]
fn truth_accounts_for_all_the_time() {
    let out = run(
        &path(20, 40),
        &[Flow {
            app: App::OnOff {
                burst: 50_000,
                every: ms(250),
            },
            ..Flow::default()
        }],
        ms(2000),
    );
    for lt in [out.truth[0].transfer, out.truth[0].steady] {
        assert_eq!(lt.total, lt.rwnd_limited + lt.cwnd_limited + lt.sender_limited);
        assert!(lt.idle <= lt.sender_limited && lt.at_capacity <= lt.total);
        assert!(lt.idle_share() > 0.5, "{lt:?}");
    }
    let t = &out.truth[0];
    assert_eq!(t.base_rtt, ms(40) + Duration::from_nanos(605_600 + 26_400 + 8_000));
    assert!(t.min_rtt.unwrap() >= ms(40));
    assert_eq!(
        t.bdp_bytes,
        (20e6 / 8.0 * 1448.0 / 1514.0 * t.base_rtt.as_secs_f64()).round() as u64
    );
}

#[test]
fn odd_configurations_run_to_the_end() {
    let base = path(10, 20);
    let cases: Vec<(Path, Vec<Flow>)> = vec![
        // heavy loss: RTOs, lost retransmissions
        (
            Path {
                loss: 0.3,
                ..base.clone()
            },
            vec![Flow::default()],
        ),
        (
            Path {
                loss: 0.2,
                ..base.clone()
            },
            vec![Flow {
                sender_stack: Stack {
                    sack: false,
                    ..Stack::linux()
                },
                cc: Cc::Reno,
                ..Flow::default()
            }],
        ),
        // a one-packet queue, no rate limit on the ACK path, asymmetric delays
        (
            Path {
                queue_pkts: 1,
                ack_rate_limited: false,
                ack_delay: Some(ms(1)),
                ..base.clone()
            },
            vec![Flow::default()],
        ),
        // tiny buffers and bursts, everything stripped, IPv6, uploads
        (
            Path {
                ipv6: true,
                ..base.clone()
            },
            vec![
                Flow {
                    sndbuf: Some(500),
                    upload: true,
                    ..Flow::default()
                },
                Flow {
                    rcvbuf: 1000,
                    app: App::OnOff {
                        burst: 100,
                        every: ms(50),
                    },
                    start: ms(1),
                    receiver_stack: Stack {
                        window_scale: WindowScale::Off,
                        sack: false,
                        timestamps: false,
                        ..Stack::linux()
                    },
                    ..Flow::default()
                },
                Flow {
                    reader: Reader::Rate {
                        bps: 100_000,
                        tick: ms(1),
                    },
                    middlebox: Middlebox {
                        strip_wscale: Strip::Both,
                        strip_sack: Strip::SynAck,
                        strip_timestamps: Strip::SynAck,
                        clamp_mss: Some(536),
                    },
                    upload: true,
                    ..Flow::default()
                },
            ],
        ),
        // a flow that starts after the applications stopped
        (
            base.clone(),
            vec![Flow {
                start: ms(3000),
                ..Flow::default()
            }],
        ),
    ];
    for (p, flows) in cases {
        let out = run(&p, &flows, ms(1500));
        assert_eq!(out.truth.len(), flows.len());
        for t in &out.truth {
            assert_eq!(t.window_violations, 0);
            assert!(t.bytes_acked <= t.bytes_written && t.bytes_read <= t.bytes_written);
        }
        assert!(records(&out.sender_side_pcap).len() >= flows.len());
    }
    let out = run(&base, &[Flow::default()], Duration::ZERO);
    assert!(out.truth[0].closed);
}

#[test]
fn whole_packets_carry_valid_checksums() {
    // The builder patches a template per packet shape and updates the TCP checksum
    // incrementally: with a snaplen that keeps whole packets, every checksum must hold.
    for ipv6 in [false, true] {
        let p = Path {
            ipv6,
            loss: 0.02,
            ..path(10, 20)
        }
        .with_snaplen(65535);
        let out = run(&p, &[Flow::default()], ms(600));
        for pcap in [&out.sender_side_pcap, &out.receiver_side_pcap] {
            let mut r = CaptureReader::from_reader(std::io::Cursor::new(pcap.to_vec())).unwrap();
            let mut n = 0;
            let mut ids = std::collections::HashSet::new();
            while let Some(f) = r.next_frame().unwrap() {
                assert_eq!(f.data.len() as u32, f.wire_len);
                let s = etherparse::SlicedPacket::from_ethernet(f.data).unwrap();
                let Some(etherparse::TransportSlice::Tcp(tcp)) = s.transport else {
                    panic!("not TCP")
                };
                let expect = match s.net.unwrap() {
                    etherparse::NetSlice::Ipv4(ip) => {
                        let h = ip.header();
                        assert_eq!(h.to_header().calc_header_checksum(), h.header_checksum());
                        // Each end numbers its datagrams (retransmissions too), as Linux.
                        assert!(ids.insert((h.source(), h.identification())), "frame {}", f.number);
                        tcp.calc_checksum_ipv4(h.source(), h.destination()).unwrap()
                    }
                    etherparse::NetSlice::Ipv6(ip) => {
                        let h = ip.header();
                        tcp.calc_checksum_ipv6(h.source(), h.destination()).unwrap()
                    }
                    _ => unreachable!(),
                };
                assert_eq!(tcp.checksum(), expect, "frame {}", f.number);
                n += 1;
            }
            assert!(n > 300);
        }
    }
}
