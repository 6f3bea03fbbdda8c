//! The stacks as a capture shows them: the options each end offers, how it acknowledges,
//! the windows it advertises, the initial window and send buffer of a sender.

use super::tests::{ms, path, records, sender_ip, Rec};
use super::*;

fn run_one(p: &Path, flow: Flow, d: Duration) -> SimOutput {
    run(p, std::slice::from_ref(&flow), d)
}

fn from_sender<'a>(p: &Path, recs: &'a [Rec]) -> impl Iterator<Item = &'a Rec> {
    let ip = sender_ip(p);
    recs.iter().filter(move |r| r.seg.src == ip)
}

fn from_receiver<'a>(p: &Path, recs: &'a [Rec]) -> impl Iterator<Item = &'a Rec> {
    let ip = sender_ip(p);
    recs.iter().filter(move |r| r.seg.src != ip)
}

/// At the receiver's interface: for each ACK that acknowledged new data, how long after
/// the newest data segment it covers it left (the delayed-ACK wait).
fn ack_delays(p: &Path, recs: &[Rec]) -> Vec<i64> {
    let s_ip = sender_ip(p);
    let mut last_data: Option<(u32, i64)> = None; // (end seq, arrival)
    let mut acked = None;
    let mut out = Vec::new();
    for r in recs {
        let s = &r.seg;
        if s.flags.syn() {
            continue;
        }
        if s.src == s_ip {
            if s.payload_len > 0 {
                last_data = Some((s.seq.add(s.payload_len).0, r.ts));
            }
        } else if let Some((end, at)) = last_data {
            if s.ack.0 == end && acked != Some(end) {
                out.push(r.ts - at);
                acked = Some(end);
            }
        }
    }
    out
}

#[test]
fn a_windows_receiver_offers_scale_8_and_no_timestamps() {
    let p = path(10, 20);
    let out = run_one(
        &p,
        Flow {
            receiver_stack: Stack::windows(),
            ..Flow::default()
        },
        ms(500),
    );
    let recs = records(&out.receiver_side_pcap);
    let syn = recs.iter().find(|r| r.seg.flags.syn() && !r.seg.flags.ack()).unwrap();
    let o = syn.seg.options;
    assert_eq!((o.wscale, o.sack_permitted, o.timestamps), (Some(8), true, None));
    // Windows' first window: 44 segments of 1460 (64240).
    assert_eq!(syn.seg.window, 64_240);
    let syn_ack = recs.iter().find(|r| r.seg.flags.syn() && r.seg.flags.ack()).unwrap();
    assert!(syn_ack.seg.options.timestamps.is_none() && syn_ack.seg.options.wscale == Some(7));
    assert_eq!(out.truth[0].mss, 1460);
    assert_eq!(out.truth[0].receiver_rcv_wscale, Some(8));
    assert!(from_sender(&p, &recs).all(|r| r.seg.options.timestamps.is_none()));
    // The RFC 1122 receiver offers its whole buffer at once: no growth from the SYN's.
    let first_data = from_sender(&p, &recs).find(|r| r.seg.payload_len > 0).unwrap().ts;
    let first_ack = from_receiver(&p, &recs).find(|r| r.ts > first_data).unwrap();
    let w = (first_ack.seg.window as u64) << 8;
    assert!(w > 4_000_000, "{w}");
}

#[test]
fn delayed_acks_wait_as_long_as_the_stack_says() {
    // Bursts of three full segments once a second: two are acknowledged at once, the
    // third waits for the delayed-ACK timer of an RFC 1122 stack; Linux's quick-ACK mode
    // (restarted after an idle second) acknowledges every one at once.
    let p = path(10, 20);
    for (stack, wait_ms) in [
        (Stack::windows(), Some(200)),
        (Stack::bsd(), Some(100)),
        (Stack::old(false), Some(200)),
        (Stack::linux(), None),
    ] {
        let sender = Stack {
            timestamps: false,
            ..Stack::linux()
        };
        let out = run_one(
            &p,
            Flow {
                sender_stack: sender,
                receiver_stack: stack,
                app: App::OnOff {
                    burst: 3 * 1460,
                    every: ms(1000),
                },
                ..Flow::default()
            },
            ms(3500),
        );
        let delays = ack_delays(&p, &records(&out.receiver_side_pcap));
        assert!(delays.len() >= 6, "{}: {delays:?}", stack.name);
        let max = *delays.iter().max().unwrap();
        match wait_ms {
            Some(w) => {
                let waited = delays.iter().filter(|&&d| (d - w * 1_000_000).abs() < 100_000).count();
                assert!(waited >= 3, "{}: {delays:?}", stack.name);
                assert!(max < (w + 1) * 1_000_000, "{}: {delays:?}", stack.name);
                // The others went at once, one per second segment.
                assert!(
                    delays.iter().filter(|&&d| d < 1_000_000).count() >= 3,
                    "{}: {delays:?}",
                    stack.name
                );
            }
            None => assert!(max < 1_000_000, "{}: {delays:?}", stack.name),
        }
    }
}

#[test]
fn an_old_stack_never_passes_64_kib() {
    // 50 Mbit/s, 100 ms: a BDP of 600 kB that 64 KiB cannot fill.
    let p = path(50, 100);
    let out = run_one(
        &p,
        Flow {
            sender_stack: Stack::old(true),
            receiver_stack: Stack::old(true),
            // Room to send: the old stack's own 32 KiB would hold the flight first.
            sndbuf: Some(1 << 20),
            cc: Cc::Reno,
            ..Flow::default()
        },
        ms(4000),
    );
    let t = &out.truth[0];
    assert_eq!((t.sender_snd_wscale, t.receiver_rcv_wscale), (None, None));
    assert_eq!(t.max_rwnd_bytes, 65_535);
    assert!(t.max_flight_bytes <= 65_535);
    assert!(t.steady.rwnd_share() > 0.9, "{:?}", t.steady);
    let recs = records(&out.sender_side_pcap);
    let syns: Vec<_> = recs.iter().filter(|r| r.seg.flags.syn()).collect();
    assert!(syns
        .iter()
        .all(|r| r.seg.options.wscale.is_none() && r.seg.options.timestamps.is_none() && r.seg.options.sack_permitted));
    // IW 2: two segments leave before the first ACK of data comes back.
    let first_ack_ts = from_receiver(&p, &recs)
        .filter(|r| !r.seg.flags.syn())
        .nth(1)
        .unwrap()
        .ts;
    let before = from_sender(&p, &recs)
        .filter(|r| r.seg.payload_len > 0 && r.ts < first_ack_ts)
        .count();
    assert_eq!(before, 2);
}

#[test]
fn a_windows_sender_holds_its_send_buffer() {
    // 20 Mbit/s, 80 ms: a BDP of 190 kB; 64 KiB or 8 KiB of send buffer hold the flight.
    let p = path(20, 80);
    for buf in [64 << 10, 8 << 10] {
        let out = run_one(
            &p,
            Flow {
                sender_stack: Stack::windows().with_sndbuf(buf),
                ..Flow::default()
            },
            ms(3000),
        );
        let t = &out.truth[0];
        assert!(t.max_flight_bytes <= buf as u64, "{buf}: {}", t.max_flight_bytes);
        assert!(t.max_flight_bytes > buf as u64 / 2, "{buf}: {}", t.max_flight_bytes);
        assert!(t.steady.sender_share() > 0.9, "{buf}: {:?}", t.steady);
        // The Linux receiver offered timestamps; the Windows sender did not answer them.
        let recs = records(&out.receiver_side_pcap);
        assert!(recs
            .iter()
            .all(|r| r.seg.options.timestamps.is_none() || (r.seg.flags.syn() && !r.seg.flags.ack())));
        assert!(recs.iter().any(|r| r.seg.options.timestamps.is_some()));
    }
}

#[test]
fn a_slow_rfc1122_reader_opens_the_window_in_big_steps() {
    // A reader at 2 Mbit/s behind a 64 KiB unscaled Windows window closes it; the window
    // reopens only by half a buffer or more of free space (two segments here), never by
    // a sliver.
    let p = path(20, 40);
    let out = run_one(
        &p,
        Flow {
            rcvbuf: 65_535,
            receiver_stack: Stack::windows_unscaled(),
            reader: Reader::Rate {
                bps: 2_000_000,
                tick: ms(100),
            },
            ..Flow::default()
        },
        ms(3000),
    );
    let t = &out.truth[0];
    assert!(t.zero_window_acks > 0);
    let recs = records(&out.receiver_side_pcap);
    let mut prev_edge: Option<u32> = None;
    for r in from_receiver(&p, &recs).filter(|r| !r.seg.flags.syn()) {
        let edge = r.seg.ack.0.wrapping_add(r.seg.window as u32);
        if let Some(e) = prev_edge {
            let moved = edge.wrapping_sub(e) as i32;
            assert!(moved >= 0, "the right edge moved back by {}", -moved);
            assert!(moved == 0 || moved >= 1460, "the right edge moved by {moved}");
        }
        prev_edge = Some(edge);
    }
}
