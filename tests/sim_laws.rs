//! The laws (src/laws.rs) over the simulator's random draws: paths, stacks and capture
//! hosts the corpora lack, drawn by proptest. Each draw is a path (1-300 Mbit/s, RTT
//! 0.3-250 ms, queue 8-400 packets, random loss, IPv4 or IPv6; maybe a tbf shaper or a
//! policer, an outage, cross traffic, a tap in the middle, an AQM marking ECN-capable
//! packets CE, which the flows then negotiate), one or two flows (each end
//! Linux, Windows, Windows without scaling or with an 8 KiB send buffer, an old stack
//! with or without SACK, or BSD; CUBIC or Reno; bulk or on/off; a fast or a slow reader;
//! download or upload; MSS 536-1460) and capture hosts (1 µs, 1 ms or 10 ms clocks,
//! interrupt coalescing, snaplen). Every flow of every capture point's pcap is analysed
//! (library API) and checked against every law, and against the simulator's truth where
//! it is certain: no RTT below the propagation delay, a window-limited flow on an idle
//! bottleneck not called bottleneck-limited, the BDP within 50% on a clean path.
//!
//! Where the analysis is known to miss the truth, `known` names the region, with its
//! minimal case: the test holds the rest of the space (`SIM_LAWS_ALL=1` checks the regions
//! too; the ignored test checks the capacity against the link's rate; `census` counts the
//! draws in each). No law is excused anywhere.
//! 48 draws from a fixed seed, about a second; `PROPTEST_CASES` / `PROPTEST_RNG_SEED`
//! search wider.

use bdpscope::analysis::{analyze_reader, AnalysisConfig};
use bdpscope::capture::CaptureReader;
use bdpscope::observe::NoObserver;
use bdpscope::summary::FlowSummary;
use bdpscope::testkit::sim::{
    self, App, CaptureHost, Cc, Coalesce, CrossTraffic, Flow, Outage, Path, Reader, Shaper, SimOutput, Stack, Tap,
    Vantage,
};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use std::time::Duration;

fn us(x: u64) -> Duration {
    Duration::from_micros(x)
}

fn ms(x: u64) -> Duration {
    Duration::from_millis(x)
}

/// The stacks an end can run.
fn stacks() -> Vec<Stack> {
    vec![
        Stack::linux(),
        Stack::windows(),
        Stack::windows_unscaled(),
        Stack::windows().with_sndbuf(8 << 10),
        Stack::old(false),
        Stack::old(true),
        Stack::bsd(),
    ]
}

fn any_stack() -> impl Strategy<Value = Stack> {
    prop::sample::select(stacks())
}

fn any_capture_host() -> impl Strategy<Value = CaptureHost> {
    (
        prop::sample::select(vec![us(1), us(1), ms(1), ms(10)]),
        prop::option::weighted(
            0.3,
            (2u32..64, 20u64..250, 0u64..3).prop_map(|(n, w, p)| Coalesce {
                max_packets: n,
                window: us(w),
                per_packet: us(p),
            }),
        ),
        prop::sample::select(vec![128u32, 128, 96, 1514]),
        // A capture begun mid-transfer (no handshake) now and then.
        prop::option::weighted(0.15, 300u64..1500),
    )
        .prop_map(|(resolution, coalesce, snaplen, late)| CaptureHost {
            resolution,
            coalesce,
            snaplen,
            start_after: late.map_or(Duration::ZERO, ms),
        })
}

/// One draw: a path, its flows, how long the applications write.
#[derive(Clone)]
struct Draw {
    path: Path,
    flows: Vec<Flow>,
    secs: u64,
}

fn host_str(h: &CaptureHost) -> String {
    let mut s = format!("{:?}", h.resolution);
    if let Some(c) = h.coalesce {
        s += &format!(" coalesce {}x{:?}+{:?}", c.max_packets, c.window, c.per_packet);
    }
    if h.snaplen != 128 {
        s += &format!(" snaplen {}", h.snaplen);
    }
    if !h.start_after.is_zero() {
        s += &format!(" from {:?}", h.start_after);
    }
    s
}

/// One line a reader can rebuild the draw from (proptest prints it for a failure).
impl std::fmt::Debug for Draw {
    fn fmt(&self, w: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = &self.path;
        write!(
            w,
            "{} Mbit/s rtt {:?} queue {} loss {} seed {}{} | capture sender {} receiver {}",
            p.rate_bps as f64 / 1e6,
            p.one_way_delay * 2,
            p.queue_pkts,
            p.loss,
            p.seed,
            if p.ipv6 { " ipv6" } else { "" },
            host_str(&p.sender_capture),
            host_str(&p.receiver_capture),
        )?;
        if let Some(m) = p.middle {
            write!(w, " middle at {:.2} {}", m.at, host_str(&m.capture))?;
        }
        if let Some(s) = p.shaper {
            write!(w, " | {:?}", s)?;
        }
        for o in &p.outages {
            write!(w, " | outage {:?}+{:?}", o.start, o.length)?;
        }
        if let Some(c) = p.cross {
            write!(w, " | cross {} bit/s", c.rate_bps)?;
        }
        if let Some(k) = p.ecn_mark_pkts {
            write!(w, " | ECN marks from {k} packets")?;
        }
        for f in &self.flows {
            write!(
                w,
                " | flow {}{}->{} {:?} rcvbuf {} mss {} {:?} {:?} start {:?}{}",
                f.sender_stack.name,
                f.sender_stack.sndbuf.map_or(String::new(), |b| format!(" sndbuf {b}")),
                f.receiver_stack.name,
                f.cc,
                f.rcvbuf,
                f.mss,
                f.app,
                f.reader,
                f.start,
                if f.upload { " upload" } else { "" },
            )?;
        }
        write!(w, " | {} s", self.secs)
    }
}

fn any_path() -> impl Strategy<Value = Path> {
    let base = (
        prop::sample::select(vec![1u64, 4, 10, 30, 100, 300]),
        prop::sample::select(vec![300u64, 2_000, 10_000, 40_000, 100_000, 250_000]),
        prop::sample::select(vec![8usize, 30, 100, 400]),
        prop::sample::select(vec![0.0, 0.0, 0.0, 0.002, 0.02]),
        any::<u64>(),
        any::<bool>(),
    );
    let hosts = (
        any_capture_host(),
        any_capture_host(),
        prop::option::weighted(
            0.3,
            (0.0f64..1.0, any_capture_host()).prop_map(|(at, capture)| Tap { at, capture }),
        ),
    );
    let shaper = prop::option::weighted(
        0.25,
        (
            prop::sample::select(vec![0.2f64, 0.5, 0.8]),
            prop::sample::select(vec![3_000u32, 15_000, 64_000]),
            prop::sample::select(vec![30_000u32, 200_000]),
            any::<bool>(),
            prop::sample::select(vec![us(0), ms(1)]),
        ),
    );
    let outage = prop::option::weighted(0.25, (200u64..1500, prop::sample::select(vec![50u64, 400, 1500, 4000])));
    let cross = prop::option::weighted(0.2, prop::sample::select(vec![0.1f64, 0.3, 0.6]));
    (base, hosts, shaper, outage, cross).prop_map(
        |((mbit, rtt_us, queue, loss, seed, ipv6), (snd, rcv, middle), shaper, outage, cross)| {
            let rate = mbit * 1_000_000;
            Path {
                queue_pkts: queue,
                loss,
                seed,
                ipv6,
                sender_capture: snd,
                receiver_capture: rcv,
                middle,
                shaper: shaper.map(|(share, burst, limit, police, tick)| Shaper {
                    rate_bps: (rate as f64 * share) as u64,
                    burst_bytes: burst,
                    limit_bytes: limit,
                    police,
                    tick,
                }),
                outages: outage
                    .map(|(start, length)| Outage {
                        start: ms(start),
                        length: ms(length),
                    })
                    .into_iter()
                    .collect(),
                cross: cross.map(|share| CrossTraffic {
                    rate_bps: (rate as f64 * share) as u64,
                    frame_bytes: 1514,
                }),
                // A third of the paths mark ECN-capable packets from a quarter of the queue
                // on (from the seed: the draws of the strategies above stay as they were).
                ecn_mark_pkts: (seed % 3 == 0).then_some((queue / 4).max(2)),
                ..Path::new(rate, us(rtt_us))
            }
        },
    )
}

fn any_flow() -> impl Strategy<Value = Flow> {
    (
        any_stack(),
        any_stack(),
        prop::sample::select(vec![Cc::Cubic, Cc::Reno]),
        prop::sample::select(vec![16_000u32, 64_000, 256_000, 4 << 20]),
        prop::option::weighted(0.3, (10_000u32..300_000, 50u64..600)),
        prop::option::weighted(0.2, (1u64..20, prop::sample::select(vec![ms(10), ms(100)]))),
        prop::sample::select(vec![1460u16, 1460, 1400, 536]),
        any::<bool>(),
        0u64..300,
    )
        .prop_map(|(snd, rcv, cc, rcvbuf, onoff, reader, mss, upload, start)| Flow {
            cc,
            rcvbuf,
            app: onoff.map_or(App::Bulk, |(burst, every)| App::OnOff {
                burst,
                every: ms(every),
            }),
            reader: reader.map_or(Reader::Fast, |(mbit, tick)| Reader::Rate {
                bps: mbit * 1_000_000,
                tick,
            }),
            mss,
            sender_stack: snd,
            receiver_stack: rcv,
            upload,
            start: ms(start),
            ..Flow::default()
        })
}

fn any_draw() -> impl Strategy<Value = Draw> {
    (any_path(), prop::collection::vec(any_flow(), 1..=2), 1u64..=3).prop_map(|(path, flows, secs)| {
        // IPv6 over a 1500-byte MTU carries at most 1440 bytes of MSS.
        let flows = flows
            .into_iter()
            .map(|f| Flow {
                mss: if path.ipv6 { f.mss.min(1440) } else { f.mss },
                // ECN where the path marks: its flows negotiate it.
                ecn: path.ecn_mark_pkts.is_some(),
                ..f
            })
            .collect();
        Draw { path, flows, secs }
    })
}

fn analyse(pcap: &[u8]) -> Vec<FlowSummary> {
    let mut r = CaptureReader::from_reader(std::io::Cursor::new(pcap.to_vec())).expect("pcap");
    analyze_reader(&mut r, AnalysisConfig::default(), NoObserver).1
}

fn host(d: &Draw, v: Vantage) -> CaptureHost {
    match v {
        Vantage::Sender => d.path.sender_capture,
        Vantage::Receiver => d.path.receiver_capture,
        Vantage::Middle => d.path.middle.map(|m| m.capture).unwrap_or_default(),
    }
}

/// How far a capture host's stamps can move a span between two packets: two clock
/// ticks, and a coalescing batch's wait and spread at each end of it.
fn stamp_slack(h: &CaptureHost) -> f64 {
    let c = h.coalesce.map_or(0.0, |c| {
        c.window.as_secs_f64() + c.per_packet.as_secs_f64() * c.max_packets as f64
    });
    2.0 * (h.resolution.as_secs_f64() + c)
}

/// The analysis against the simulator's truth, where the truth is certain.
/// `applied` gets the name of each check that applied to a flow.
fn truth_checks(
    d: &Draw,
    out: &SimOutput,
    v: Vantage,
    flows: &[FlowSummary],
    applied: &mut Vec<&'static str>,
) -> Vec<String> {
    let mut bad = Vec::new();
    let h = host(d, v);
    let slack_ms = stamp_slack(&h) * 1e3 + 0.1;
    for f in flows {
        let Some(t) = out.truth.iter().find(|t| t.client == f.client && t.server == f.server) else {
            bad.push(format!(
                "truth:flows {v:?} {}: a flow the simulator did not run",
                f.client
            ));
            continue;
        };
        let prop = (d.path.one_way_delay + d.path.ack_delay.unwrap_or(d.path.one_way_delay)).as_secs_f64() * 1e3;
        let mut fail = |tag: &str, what: String| bad.push(format!("truth:{tag} {v:?} {}: {what}", f.client));
        // No RTT is shorter than the path's propagation both ways, beyond what the
        // capture's stamps can shift.
        if let Some(m) = f.rtt_ms.min {
            applied.push("min-rtt");
            if m < prop - slack_ms {
                fail(
                    "min-rtt",
                    format!("min RTT {m} ms below the propagation delay {prop:.3} ms (stamps move {slack_ms:.3} ms)"),
                );
            }
        }
        // Nothing is delivered faster than the link, and no capacity estimate exceeds it.
        let link = d.path.rate_bps as f64;
        if f.goodput_bps > link * 1.02 {
            fail("goodput", format!("goodput {} above the link's {link}", f.goodput_bps));
        }
        if let Some(b) = f.bottleneck_bps {
            if b > link * 1.1 {
                fail(
                    "link-rate",
                    format!("bottleneck {b} above the link's {link} ({:?})", f.capacity),
                );
            }
        }
        // A flow the receiver's window held while the bottleneck mostly idled is not
        // bottleneck-limited (a policer drops instead of filling a queue, so the
        // simulator does not count its link busy: no verdict check under one).
        let s = &t.steady;
        let policed = d.path.shaper.is_some_and(|s| s.police);
        // Nor across an outage: the simulator counts the dead time, a full window waiting
        // on a timer with the link idle, as the window's; the analysis judges the flow
        // while the path could carry data and reports the outage as a stall (a flow at the
        // link's rate with an 11 ms standing queue for 600 ms, then a 1 s wait on its
        // timer, reads "rwnd 0.98, bottleneck busy 0.17" there).
        let outage = !d.path.outages.is_empty();
        let window_limited = !policed && !outage && s.rwnd_share() >= 0.8 && s.capacity_share() < 0.5;
        if window_limited {
            applied.push("window-verdict");
        }
        if window_limited && f.verdict == bdpscope::diagnose::Verdict::Limited(bdpscope::diagnose::Label::Bottleneck) {
            fail(
                "window-verdict",
                format!(
                    "window-limited flow called bottleneck-limited: rwnd {:.2}, bottleneck busy {:.2}",
                    s.rwnd_share(),
                    s.capacity_share()
                ),
            );
        }
        // On a clean path (one flow, no shaper, cross traffic, outage or loss, stamps
        // to the microsecond, no host coalescing: at an end host that batches the ACKs
        // too) a bulk flow that kept the bottleneck busy shows the BDP.
        let hosts = [
            Some(d.path.sender_capture),
            Some(d.path.receiver_capture),
            d.path.middle.map(|m| m.capture),
        ];
        let h_clean = h.resolution <= us(1) && hosts.iter().flatten().all(|h| h.coalesce.is_none());
        let p = &d.path;
        let clean = h_clean
            && out.truth.len() == 1
            && p.shaper.is_none()
            && p.cross.is_none()
            && p.outages.is_empty()
            && p.loss == 0.0;
        let bulk = d.flows.iter().all(|f| f.app == App::Bulk && f.reader == Reader::Fast);
        if clean && bulk && s.capacity_share() >= 0.8 && t.bytes_acked >= 20 * t.bdp_bytes.max(1) {
            applied.push("bdp");
            if let Some(b) = f.bdp_bytes {
                let want = t.bdp_bytes as f64;
                if (b as f64 - want).abs() > 0.5 * want {
                    // Above the truth where the flow says its BDP is an upper bound.
                    let bound = if f.bdp_upper_bound && b as f64 > want {
                        " (said an upper bound)"
                    } else {
                        ""
                    };
                    fail(
                        "bdp",
                        format!(
                            "BDP {b}, truth {want} (bn {:?} min {:?}){bound}",
                            f.bottleneck_bps, f.rtt_ms.min
                        ),
                    );
                }
            } else {
                fail("bdp", "no BDP on a clean path with the bottleneck busy".into());
            }
        }
    }
    bad
}

/// One full-sized frame's serialisation at the bottleneck is longer than the
/// propagation both ways: the RTT of a data segment is mostly its own transmission.
fn serialisation_dominated(d: &Draw) -> bool {
    let p = &d.path;
    let frame = 1514.0 * 8.0 / p.bottleneck_bps().max(1) as f64;
    let prop = (p.one_way_delay + p.ack_delay.unwrap_or(p.one_way_delay)).as_secs_f64();
    frame >= prop
}

/// The receiving application reads at a fixed rate.
fn slow_reader(d: &Draw) -> bool {
    d.flows.iter().any(|f| f.reader != Reader::Fast)
}

/// More than the flow through the bottleneck: another flow, or cross traffic.
fn shared(d: &Draw) -> bool {
    d.flows.len() > 1 || d.path.cross.is_some()
}

/// Some capture host stamps packets in batches (interrupt coalescing).
fn batched(d: &Draw) -> bool {
    let p = &d.path;
    [
        Some(p.sender_capture),
        Some(p.receiver_capture),
        p.middle.map(|m| m.capture),
    ]
    .iter()
    .flatten()
    .any(|h| h.coalesce.is_some())
}

/// The failure is a spacing estimate's (ACK or data-arrival dispersion).
fn spacing(line: &str) -> bool {
    line.contains("method: Dispersion") || line.contains("method: ArrivalDispersion")
}

fn vantage_of(line: &str) -> Vantage {
    if line.contains(" Sender ") {
        Vantage::Sender
    } else if line.contains(" Receiver ") {
        Vantage::Receiver
    } else {
        Vantage::Middle
    }
}

/// The regions where the analysis is known to miss the truth (no law is excused): each is a bug
/// in the analysis (src/diagnose, src/tcp, src/stall), reported with its minimal case,
/// left out here so that the test holds the rest of the space. `SIM_LAWS_ALL=1` keeps
/// them in. Returns the region's name when `line` (a failure of `d`) falls in one.
fn known(d: &Draw, line: &str) -> Option<&'static str> {
    let tag = line.split(' ').next().unwrap_or("");
    let at = host(d, vantage_of(line));
    let coarse = at.resolution >= ms(1);
    match tag {
        // Capacity and goodput above the link's rate (the ignored test checks these
        // regions too). A spacing estimate from packets the capture host batched or
        // stamped coarsely, or with another flow's packets in the trains. Trains are now
        // sampled across whole batches (diagnose/train.rs), and batched spacing the flow's
        // own queue contradicts is set aside (capacity.rs): 47 -> 29 failing draws of 2000
        // (seed 21). Left: the batches' own cadence, when batches close sometimes on their
        // packet count and sometimes on the timer, reads 10-30% above the link while no
        // queue contradicts it. Minimal case (still failing): 300 Mbit/s, RTT 300 µs,
        // queue 8, the receiver's host coalescing interrupts (5 packets / 81 µs, 0-2 µs a
        // packet), old -> Linux CUBIC, rcvbuf 64000, 1 s: an ACK-dispersion bottleneck of
        // 382 Mbit/s at both ends (the delivery, 285 Mbit/s, is below the spacing's
        // at-capacity margin only by a hair, and the RTT does not rise). Traced (census of
        // seed 1111: 300 Mbit/s, RTT 2 ms, queue 8, the receiver's host handing TCP its
        // packets every 121 µs, a window-held upload to Windows beside an old stack's bulk
        // flow into 16 kB, seed 2423272581694858201): the host's batch hands TCP three or
        // four segments, and a delayed ACK carries one segment from a batch to the next,
        // so single batch-to-batch samples read 2 or 4 segments a batch: ACK modes at 196
        // and 381 around the link's 296, at both ends (the ACKs leave in those batches).
        // Tried: the main mode where it is far above the flow's delivery (no window's
        // pace), and samples spanning three batches once a train shows batches; each fixed
        // the upload and moved the bulk flow to 194-195 (the span reaches across the idle
        // time between its windows). Also left: a sender-side capture on a coarse clock
        // taking data-arrival spacing; shared trains.
        "truth:link-rate" if spacing(line) && (batched(d) || coarse || shared(d)) => {
            Some("spacing from batched or coarse stamps, or shared trains")
        }
        // One full frame's serialisation longer than the propagation both ways. The
        // windows that hold the flow's first ACKs are no longer counted (no ACK before
        // them starts their interval, delivery.rs): 34/44/44 failing draws of 2000 (seeds
        // 5/21/77) -> 20/14/17; what is left is not traced yet. Minimal case: 1 Mbit/s, RTT 300 µs, queue 100, Linux ->
        // Windows CUBIC, rcvbuf 16000, 1 s, stamps to the microsecond: at the receiver's
        // interface a delivery-rate bottleneck of 2.92 Mbit/s.
        "truth:link-rate" | "truth:goodput" if serialisation_dominated(d) => {
            Some("serialisation-dominated path (first ACKs)")
        }
        // Goodput across an outage, or under a coarse clock. Minimal case: 1 Mbit/s, RTT
        // 100 ms, queue 8, an outage at 228 ms for 4 s, Linux -> Windows CUBIC, rcvbuf
        // 16000, MSS 1400, 1 s, stamps to the microsecond: at the receiver's interface a
        // goodput of 1.20 Mbit/s (cause not found yet: the data span at the receiver is
        // shorter than its bytes' serialisation at the link).
        "truth:goodput" if coarse || !d.path.outages.is_empty() => Some("goodput across an outage or a coarse clock"),
        // A capture begun mid-transfer between stacks without timestamps and with no loss
        // in it: neither the handshake nor an echo nor a repair (tcp/rtt/repair.rs) timed
        // the loop through the far end, so no RTT and no BDP (undetermined, saying which
        // loop was measured). Census of seed 9292 after the late captures were drawn: 3 of
        // 2000 draws, each a flow undetermined so.
        // A capture begun with the bottleneck's queue already standing, which never drained
        // while it ran: no sample is free of it, and the flow says its base RTT and BDP are
        // upper bounds (census of seeds 7171 and 1234: 3 of 4000 draws, BDP 61 kB against
        // 13 kB, 16 kB against 5 kB).
        "truth:bdp" if !at.start_after.is_zero() && line.contains("(said an upper bound)") => {
            Some("a capture begun with the queue standing, the BDP said an upper bound")
        }
        "truth:bdp" if !at.start_after.is_zero() && line.contains("no BDP") => {
            Some("a capture begun mid-transfer, no loop through the far end timed")
        }
        // Other captures begun mid-transfer. These were counted under the
        // serialisation-dominated region until the BDP added the segment the handshake lacks
        // (census of 27 seeds: 10 of 54 000 draws, a queue standing from before the capture
        // and the BDP not said to be an upper bound); a sender that held back, in all, for
        // less than its least RTT, and a base whose loop through the sender only repairs
        // timed, now say their base is an upper bound (`explain::base_rtt_upper_bound`),
        // which took 9 of them. Left (1, not traced): a BDP below the truth. Minimal case
        // (census of seed 7171): 4 Mbit/s, RTT 300 µs, queue 400, ECN, Linux -> Linux Reno
        // (rcvbuf 64000, MSS 536), a tap at 0.03 of the path begun at 1.264 s: min RTT 0.832
        // ms, BDP 357 B against 730 (a 590-byte frame takes 1.18 ms at 4 Mbit/s).
        "truth:bdp" if !at.start_after.is_zero() => Some("a capture begun mid-transfer, other"),
        // Both minimal cases once named here hold now
        // (a_window_limited_flow_on_a_coarse_clock_is_receiver_window_limited,
        // a_window_limited_upload_on_a_one_ms_clock_is_receiver_window_limited). Left (census,
        // 1000 draws of seed 5: 9): mostly two window-held flows sharing the path, judged on
        // the group's summed delivery, whose queue shows on a 1 or 10 ms clock (e.g. 100
        // Mbit/s, 40 ms, 16 kB and 256 kB windows, both ends on coarse clocks: rwnd 0.95,
        // the link busy 0.17). A rule that reads each round's bunching of the delivery (a
        // window below the BDP is delivered in W/BDP of the round) was tried: it moved none
        // of these (the group's capacity is not a spacing estimate) and no real capture.
        "truth:window-verdict" if coarse => Some("coarse clock at the vantage"),
        // Minimal case: 4 Mbit/s, RTT 40 ms, queue 8, Linux -> Linux CUBIC, rcvbuf
        // 16000, a reader of 1 Mbit/s (10 ms ticks), 1 s, stamps to the microsecond:
        // receiver-window-limited 95% of the time, the bottleneck busy 25%, called
        // bottleneck-limited at the sender's interface: the capacity is the flow's own
        // delivery (1.05 Mbit/s), taken as judged because the ACK spacing (the reader's
        // pace, 998 kbit/s) and two retransmissions agree with it. (The lab's slow reader,
        // whose receiver held each window's ACK until it read, no longer shows a standing
        // queue: see the accumulator's prompt samples.)
        "truth:window-verdict" if slow_reader(d) => Some("slow reader"),
        // A group's summed delivery where a slow reader's Linux receiver holds its ACKs
        // until it reads (__tcp_ack_snd_check: no ACK while the window would shrink): the
        // ACKs of data that crossed the link over a reader tick come in a bunch, and the
        // group's windows of four base RTTs time them by the ACK interval alone (tcp_rate.c
        // also takes the send interval, which the bins do not keep). Minimal case: 30
        // Mbit/s, RTT 2 ms, queue 30, an on/off upload of 240352 B every 235 ms from an old
        // stack to Linux (rcvbuf 64000, reader 9 Mbit/s in 10 ms ticks) beside a Linux bulk
        // flow into 16 kB, 1 s, seed 7207908428970415975: a shared-delivery-rate of 51.9
        // Mbit/s at the sender (10 ms windows of 62 KB).
        // A round trip read inside one of the capture host's batches: at a middle tap that
        // stamps 23 packets in 244 µs, a data segment and the ACK of the one before it
        // land in one batch, 4 µs apart, and the base RTT (4 µs) is that; the most
        // delivered over "one round trip" then is a batch's worth over a few µs, and
        // floors a lower-bound capacity at 858 Mbit/s on a 100 Mbit/s link. Minimal case
        // (census of seed 8585): 100 Mbit/s, RTT 300 µs, queue 100, IPv6, 30 Mbit/s of cross
        // traffic, a tap at 0.60 batching 23 packets / 244 µs (2 µs a packet), a BSD bulk
        // download and an old stack's on/off (195 KB every 369 ms, MSS 536), 3 s, seed
        // 9514476483680769740. The fix is an RTT sampler that knows the host's batches
        // (a loop within one is unmeasured, as under a coarse clock's tick), not yet built.
        "truth:link-rate" if at.coalesce.is_some() && line.contains("method: DeliveryRate, lower_bound: true") => {
            Some("a round trip inside a capture host's batch")
        }
        // (The same held ACKs timed over an episode's span hold now: an episode's rate is
        // over its reports' interval, from the report before it, as tcp_rate.c's ACK
        // interval: `a_slow_reader_before_a_long_outage_keeps_the_laws`.)
        "truth:link-rate" if slow_reader(d) && shared(d) && line.contains("SharedDeliveryRate") => {
            Some("a delivery timed by a slow reader's held ACKs")
        }
        // The same reader's window updates in the ACK spacing: a window-paced sender's
        // fastest ACK mode stands as the path's (segments that did queue leave it,
        // capacity.rs), and the pair of a read's window update (sent 31 µs after its
        // segment) and the ACK after it (8 µs after its two) makes a mode of its own, 15 of
        // 48 samples at 390-397 Mbit/s beside 33 at 284-288. Minimal case (census of seed
        // 5252): 300 Mbit/s, RTT 10 ms, queue 8, IPv6, an unscaled Windows sender (64 KiB
        // send buffer) uploading to Linux (rcvbuf 16000, Reno, MSS 1440, reader 7 Mbit/s
        // in 10 ms ticks), 3 s, seed 15218761533225839104: ACK dispersion 394 Mbit/s at
        // both ends (the arrivals at the receiver 284). Tried: ending the train at an ACK
        // that reports more than two segments after a pause (the read's gap is the round
        // trip itself, so no pause is seen); setting aside ACKs faster than the arrivals
        // where both show (R18 rcvbuf_1m at the client: the arrivals, 98 Mbit/s under a
        // delay line's 30 µs release jitter, are below the link's 134, the ACKs of pairs
        // right at 135: its BDP fell out of the truth's 25%); setting aside the ACKs that
        // open a window the reader had shrunk (this receiver ACKs only after its reads, at
        // a full window: no ACK before shows the shrink).
        "truth:link-rate" if slow_reader(d) && line.contains("method: Dispersion,") => {
            Some("ACK spacing of a slow reader's window updates")
        }
        // The first minimal case holds now (`a_window_limited_upload_at_a_coalescing_sender_
        // is_receiver_window_limited`: a delayed ACK's 40 ms gap was the ACK spacing's mode
        // while 45% of the bytes came at 90-370 Mbit/s; `Facts::spacing_outpaced`). Left
        // (1 in 1000 draws, seed 606): two window-held uploads through a 240 Mbit/s shaper
        // on a 300 Mbit/s, 300 µs path, 2% loss, the receiver's host coalescing 3 packets /
        // 27 µs: rwnd 1.00, the shaper busy 0.38, called bottleneck-limited on the group's
        // summed delivery.
        "truth:window-verdict" if batched(d) => Some("a capture host that batches, window-held"),
        // Minimal case: 300 Mbit/s, RTT 300 µs, queue 30, loss 0.2%, a 150 Mbit/s tbf
        // shaper (burst 15000, limit 30000, 1 ms tick), receiver capture coalescing 7
        // packets / 209 µs, Windows -> old (SACK) CUBIC, rcvbuf 16000, 2 s:
        // receiver-window-limited 84% of the time, the shaper busy 30%, called
        // bottleneck-limited at the sender's interface.
        "truth:window-verdict" if d.path.shaper.is_some() => Some("a shaper"),
        // No law is excused: every `law:` line fails the test wherever it is drawn (the two
        // capacity regions once named here, a coarse clock and the sender's interface on a
        // serialisation-dominated path, hold since the delivery and goodput fixes:
        // `census`, 6000 draws, 0 law failures).
        _ => None,
    }
}

/// What a draw breaks, each line tagged with the law or truth check it breaks;
/// `only` keeps the lines of one tag (to shrink one failure at a time).
fn failures(d: &Draw, only: Option<&str>, with_known: bool) -> Vec<String> {
    checked(d, only, with_known).0
}

/// The failures, and the truth checks that applied.
fn checked(d: &Draw, only: Option<&str>, with_known: bool) -> (Vec<String>, Vec<&'static str>) {
    let mut applied = Vec::new();
    let out = sim::run(&d.path, &d.flows, Duration::from_secs(d.secs));
    let mut bad = Vec::new();
    for v in [Vantage::Sender, Vantage::Receiver, Vantage::Middle] {
        let Some(pcap) = out.pcap(v) else { continue };
        // SIM_PCAP_DIR=/tmp/x keeps each vantage's capture, to run the binary on a failure.
        if let Some(dir) = std::env::var_os("SIM_PCAP_DIR") {
            let path = std::path::Path::new(&dir).join(format!("{v:?}.pcap"));
            std::fs::write(&path, pcap).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
        let flows = analyse(pcap);
        for f in &flows {
            for x in bdpscope::laws::check(f) {
                bad.push(format!("law:{} {v:?} flow {} {}: {}", x.law, f.id, f.client, x.detail));
            }
        }
        bad.extend(truth_checks(d, &out, v, &flows, &mut applied));
    }
    bad.retain(|b| only.is_none_or(|o| b.starts_with(o)));
    if !with_known && std::env::var_os("SIM_LAWS_ALL").is_none() {
        bad.retain(|b| known(d, b).is_none());
    }
    (bad, applied)
}

/// A regression draw: no law or truth check fails (`with_known`: in the named regions too).
fn assert_holds(d: &Draw, with_known: bool) {
    let bad = failures(d, None, with_known);
    assert!(bad.is_empty(), "{d:?}:\n{}", bad.join("\n"));
}

/// The draw run, and the flows analysed at vantage `v`.
fn analysed_at(d: &Draw, v: Vantage) -> Vec<FlowSummary> {
    let out = sim::run(&d.path, &d.flows, Duration::from_secs(d.secs));
    analyse(out.pcap(v).unwrap_or_else(|| panic!("a capture at {v:?}")))
}

/// The configuration: 48 cases from a fixed seed unless PROPTEST_CASES /
/// PROPTEST_RNG_SEED say otherwise (to search wider: `PROPTEST_CASES=2000
/// PROPTEST_RNG_SEED=$RANDOM`, and SIM_LAWS_ONLY=law:evidence to shrink one kind).
fn config() -> ProptestConfig {
    let env = ProptestConfig::default();
    ProptestConfig {
        cases: if std::env::var_os("PROPTEST_CASES").is_some() {
            env.cases
        } else {
            48
        },
        rng_seed: if std::env::var_os("PROPTEST_RNG_SEED").is_some() {
            env.rng_seed
        } else {
            RngSeed::Fixed(14)
        },
        failure_persistence: None,
        ..env
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn every_generated_capture_keeps_the_laws_and_the_truth(d in any_draw()) {
        let only = std::env::var("SIM_LAWS_ONLY").ok();
        let bad = failures(&d, only.as_deref(), false);
        prop_assert!(bad.is_empty(), "{} failures:\n{}", bad.len(), bad.join("\n"));
    }

    /// No capacity estimate above the link's rate, no goodput above it, in the named
    /// regions too (`known`: spacing from batched or coarse stamps or shared trains; a
    /// serialisation-dominated path's first ACKs; goodput across an outage or under a
    /// coarse clock). Fails there today; outside them the test above holds it (900 draws,
    /// seeds 14, 7 and 99: 0 failures). Failing draws of 300, seeds 14 / 7 / 99: 36 / 27 /
    /// 17 before the ACK-interval rule and the delivered goodput, 15 / 16 / 7 after. Fixed
    /// on the way (each in `goodput_and_delivery_stay_below_the_link`): a "delivery-rate"
    /// bottleneck of 11.58 Mbit/s on a clean 10 Mbit/s path (RTT 2 ms), a sender-side
    /// goodput of 4.10 Mbit/s on a 4 Mbit/s link, 1.46 Mbit/s of delivery after idle
    /// spells on a 1 Mbit/s link.
    #[test]
    #[ignore = "the analysis's capacity and goodput exceed the link's rate in the regions `known` names (issue 14, item 5 report)"]
    fn no_estimate_and_no_goodput_above_the_link(d in any_draw()) {
        let mut bad = failures(&d, Some("truth:link-rate"), true);
        bad.extend(failures(&d, Some("truth:goodput"), true));
        prop_assert!(bad.is_empty(), "{} failures:\n{}", bad.len(), bad.join("\n"));
    }
}

/// How many draws break each law or truth check, in the regions `known` names and outside
/// them: `PROPTEST_CASES=2000 PROPTEST_RNG_SEED=5 cargo test-release --test sim_laws census
/// -- --ignored --nocapture`. A survey, not a check: it prints and fails only when a law
/// breaks (the test above holds the rest).
#[test]
#[ignore = "a survey of the truth regions for the notes; run on demand"]
fn census() {
    use proptest::strategy::ValueTree;
    use std::collections::BTreeMap;
    let cfg = config();
    let mut runner = proptest::test_runner::TestRunner::new(cfg.clone());
    let strategy = any_draw();
    let mut tally: BTreeMap<(String, &'static str), usize> = BTreeMap::new();
    let mut laws = Vec::new();
    // SIM_CENSUS_SHOW=truth:link-rate prints each draw failing that check, and its lines;
    // SIM_CENSUS_SHOW=outside each failing a check outside the named regions.
    let show = std::env::var("SIM_CENSUS_SHOW").ok();
    let mut shown = 0;
    for _ in 0..cfg.cases {
        let d = strategy.new_tree(&mut runner).expect("a draw").current();
        let mut seen = std::collections::BTreeSet::new();
        for line in failures(&d, None, true) {
            let tag = line.split(' ').next().unwrap_or("").to_string();
            let region = known(&d, &line).unwrap_or("outside the named regions");
            if tag.starts_with("law:") {
                laws.push(format!("{d:?}\n  {line}"));
            }
            let outside = show.as_deref() == Some("outside") && known(&d, &line).is_none();
            if show.as_deref() == Some(tag.as_str()) || outside {
                eprintln!("{d:?}\n  [{region}] {line}");
                // With SIM_PCAP_DIR the first draw shown (or the SIM_CENSUS_NTH-th, from 1)
                // keeps its captures there.
                shown += 1;
                let nth = std::env::var("SIM_CENSUS_NTH")
                    .ok()
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(1);
                if std::env::var_os("SIM_PCAP_DIR").is_some() && shown >= nth {
                    checked(&d, None, true);
                    return;
                }
            }
            seen.insert((tag, region));
        }
        for k in seen {
            *tally.entry(k).or_default() += 1;
        }
    }
    eprintln!("{} draws; draws failing, by check and region:", cfg.cases);
    for ((tag, region), n) in &tally {
        eprintln!("  {n:5}  {tag}  ({region})");
    }
    assert!(laws.is_empty(), "{} law failures:\n{}", laws.len(), laws.join("\n"));
}

/// A draw of one flow over a plain path (stamps to the microsecond at both ends).
fn plain(mbit: u64, rtt_ms: u64, flow: Flow, secs: u64) -> Draw {
    Draw {
        path: Path::new(mbit * 1_000_000, ms(rtt_ms)),
        flows: vec![flow],
        secs,
    }
}

#[test]
fn the_truth_checks_apply_where_the_truth_is_certain() {
    // Drawn paths rarely meet every condition of the BDP and window checks at once, so
    // these draws make sure each applies (and holds): windows far below the BDP from
    // three stacks, and clean bulk transfers that fill the bottleneck.
    let window_limited = [
        // BDP 121 kB, Linux window ~40 kB.
        plain(
            50,
            20,
            Flow {
                rcvbuf: 40_000,
                ..Flow::default()
            },
            3,
        ),
        // A long fat path (BDP 1.25 MB) to receivers that never scale their window.
        plain(
            100,
            100,
            Flow {
                receiver_stack: Stack::windows_unscaled(),
                ..Flow::default()
            },
            3,
        ),
        plain(
            100,
            100,
            Flow {
                receiver_stack: Stack::old(true),
                sender_stack: Stack::bsd(),
                ..Flow::default()
            },
            3,
        ),
    ];
    let filling = [
        plain(10, 20, Flow::default(), 3),
        plain(
            10,
            40,
            Flow {
                sender_stack: Stack::bsd(),
                receiver_stack: Stack::windows(),
                ..Flow::default()
            },
            3,
        ),
    ];
    for (draws, check) in [(&window_limited[..], "window-verdict"), (&filling[..], "bdp")] {
        for d in draws {
            let (bad, applied) = checked(d, None, false);
            assert!(bad.is_empty(), "{d:?}:\n{}", bad.join("\n"));
            assert!(applied.contains(&check), "{d:?}: {check} did not apply ({applied:?})");
        }
    }
}

/// Issue 14's minimal case of a policer read as a standing queue: 30 Mbit/s, RTT 300 µs,
/// queue 30, a 6 Mbit/s policer (burst 64000), BSD -> Windows CUBIC, rcvbuf 64000, 1 s,
/// at the sender's interface. RTT samples exist only while a policed burst sits in the
/// link's queue; the waits for the retransmission timer between bursts carry none, and
/// the queue read from them alone looked standing (bottleneck-limited, a "queue-delivery"
/// capacity of 26.9 Mbit/s beside a goodput of 2.55 Mbit/s). A policer drops; it builds
/// no queue (RFC 8289 §3.2: an interval with no packet through the queue says nothing of it).
#[test]
fn a_policer_with_rto_waits_shows_no_standing_queue() {
    let d = Draw {
        path: Path {
            queue_pkts: 30,
            shaper: Some(Shaper {
                rate_bps: 6_000_000,
                burst_bytes: 64_000,
                limit_bytes: 30_000,
                police: true,
                tick: us(0),
            }),
            ..Path::new(30_000_000, us(300))
        },
        flows: vec![Flow {
            sender_stack: Stack::bsd(),
            receiver_stack: Stack::windows(),
            cc: Cc::Cubic,
            rcvbuf: 64_000,
            ..Flow::default()
        }],
        secs: 1,
    };
    let flows = analysed_at(&d, Vantage::Sender);
    let f = flows.iter().find(|f| f.goodput_bps > 0.0).expect("the bulk flow");
    eprintln!(
        "{d:?}\nverdict {:?} queue {:?} capacity {:?} bottleneck {:?} goodput {}",
        f.verdict, f.queue, f.capacity, f.bottleneck_bps, f.goodput_bps
    );
    for e in &f.evidence {
        eprintln!("  {e}");
    }
    assert!(
        f.queue.as_ref().is_none_or(|q| q.standing_share < 0.5), // the queue's "most of the transfer",
        "{d:?}: a standing queue behind a policer: {:?}",
        f.queue
    );
    assert_holds(&d, true);
}

/// At the sender's interface data enters the bottleneck's queue faster than the path
/// delivers it: the goodput is what was acknowledged, never the rate data was sent
/// (4.10 Mbit/s on this 4 Mbit/s link before). On a short path a delivery window of four
/// base RTTs holds a few ACKs: over its ACK interval it holds no ACK too many (11.58
/// Mbit/s on the clean 10 Mbit/s path before). And on a link where one segment takes
/// longer than the base RTT, no delivery window after an idle spell reads a segment over
/// a few handshake RTTs (1.46 Mbit/s on this 1 Mbit/s link before, at the receiver).
#[test]
fn goodput_and_delivery_stay_below_the_link() {
    let draws = [
        plain(
            10,
            2,
            Flow {
                rcvbuf: 16_000,
                ..Flow::default()
            },
            1,
        ),
        plain(
            4,
            10,
            Flow {
                rcvbuf: 64_000,
                ..Flow::default()
            },
            1,
        ),
        Draw {
            path: Path {
                queue_pkts: 400,
                ..Path::new(1_000_000, ms(2))
            },
            flows: vec![Flow {
                sender_stack: Stack::bsd(),
                receiver_stack: Stack::windows_unscaled(),
                rcvbuf: 4 << 20,
                upload: true,
                ..Flow::default()
            }],
            secs: 3,
        },
    ];
    for d in &draws {
        let mut bad = failures(d, Some("truth:goodput"), true);
        bad.extend(failures(d, Some("truth:link-rate"), true));
        assert!(bad.is_empty(), "{d:?}:\n{}", bad.join("\n"));
    }
}

#[test]
fn a_window_limited_flow_on_a_coarse_clock_is_receiver_window_limited() {
    // The minimal case of the coarse-clock region: 100 Mbit/s, RTT 40 ms, queue 8, Linux
    // -> Linux Reno, rcvbuf 16000, captured on a 1 ms (and a 10 ms) clock at either end:
    // the window holds the sender ~97% of the time and the bottleneck idles. The near end's
    // one delayed ACK is not the loop (the RTT stays 40 ms, not 80), and ACK spacing that
    // only shows the window's pace is not the path's rate.
    for (at_sender, clock) in [(true, ms(1)), (false, ms(1)), (true, ms(10))] {
        let mut d = plain(
            100,
            40,
            Flow {
                cc: Cc::Reno,
                rcvbuf: 16_000,
                ..Flow::default()
            },
            2,
        );
        d.path.queue_pkts = 8;
        let host = CaptureHost {
            resolution: clock,
            ..CaptureHost::default()
        };
        if at_sender {
            d.path.sender_capture = host;
        } else {
            d.path.receiver_capture = host;
        }
        let out = sim::run(&d.path, &d.flows, Duration::from_secs(d.secs));
        let v = if at_sender { Vantage::Sender } else { Vantage::Receiver };
        let flows = analyse(out.pcap(v).unwrap());
        let f = &flows[0];
        assert_eq!(
            f.verdict,
            bdpscope::diagnose::Verdict::Limited(bdpscope::diagnose::Label::ReceiverWindow),
            "{d:?} at {v:?}: {:?} {:?}",
            f.capacity,
            f.evidence
        );
        let min = f.rtt_ms.min.unwrap();
        assert!((39.0..=42.0).contains(&min), "{d:?} at {v:?}: min RTT {min}");
    }
}

/// An on/off flow beside a bulk one on a 100 Mbit/s path with a 300 µs RTT (queue 30, ECN
/// marks from 7 packets), captured at the receiver's interface: no estimate above the link.
#[test]
fn an_on_off_flow_beside_a_bulk_one_is_not_faster_than_the_link() {
    let flow = |app, start| Flow {
        rcvbuf: 16_000,
        app,
        start: ms(start),
        ecn: true,
        ..Flow::default()
    };
    let d = Draw {
        path: Path {
            queue_pkts: 30,
            ecn_mark_pkts: Some(7),
            ..Path::new(100_000_000, us(300))
        },
        flows: vec![
            flow(
                App::OnOff {
                    burst: 13_033,
                    every: ms(458),
                },
                84,
            ),
            flow(App::Bulk, 3),
        ],
        secs: 1,
    };
    assert_holds(&d, true);
}

/// Two flows through an 800 kbit/s policer (burst 3000) on a 1 Mbit/s path with a 300 µs
/// RTT: each judged flow's limits sum to one.
#[test]
fn two_flows_through_a_policer_keep_their_limits() {
    let flow = |mss, start| Flow {
        rcvbuf: 16_000,
        mss,
        start: ms(start),
        ..Flow::default()
    };
    let d = Draw {
        path: Path {
            queue_pkts: 8,
            seed: 372068392988002,
            shaper: Some(Shaper {
                rate_bps: 800_000,
                burst_bytes: 3000,
                limit_bytes: 30_000,
                police: true,
                tick: us(0),
            }),
            ..Path::new(1_000_000, us(300))
        },
        flows: vec![flow(1460, 205), flow(1400, 204)],
        secs: 1,
    };
    // One flow lost every flight and waited out its timer to the end: undetermined, its
    // stalls the account (it read "sender-limited" with limits summing to 0). The group's
    // delivery above this serialisation-dominated link is a `known` region.
    assert_holds(&d, false);
}

/// An upload from a BSD stack to a Linux receiver with a 16 kB buffer over a 300 Mbit/s,
/// 250 ms path, captured at the sender on a host that coalesces interrupts (3 packets /
/// 89 µs): the window holds the sender nine tenths of the time and the link idles. The
/// ACK spacing showed no rate to judge against: its mode was a delayed ACK's gap (2776 B /
/// 40 ms), set aside since over half the ACK bytes came at twice it or faster; since the
/// samples of batched trains hold ten segments (`train::SampleFloor`), a window of eleven
/// gives none, and the figure is the flow's delivery, a lower bound, said so.
#[test]
fn a_window_limited_upload_at_a_coalescing_sender_is_receiver_window_limited() {
    let d = Draw {
        path: Path {
            queue_pkts: 30,
            seed: 4299848072672458,
            sender_capture: CaptureHost {
                coalesce: Some(Coalesce {
                    max_packets: 3,
                    window: us(89),
                    per_packet: us(2),
                }),
                ..CaptureHost::default()
            },
            ..Path::new(300_000_000, ms(250))
        },
        flows: vec![Flow {
            sender_stack: Stack::bsd(),
            rcvbuf: 16_000,
            mss: 1400,
            upload: true,
            ..Flow::default()
        }],
        secs: 3,
    };
    assert_holds(&d, true);
    let flows = analysed_at(&d, Vantage::Sender);
    let f = &flows[0];
    assert_eq!(
        f.verdict,
        bdpscope::diagnose::Verdict::Limited(bdpscope::diagnose::Label::ReceiverWindow),
        "{:?}",
        f.evidence
    );
    assert!(
        f.capacity.as_ref().is_some_and(|c| c.lower_bound) && f.notes.iter().any(|n| n.contains("is a lower bound")),
        "{:?} {:?}",
        f.capacity,
        f.notes
    );
}

/// A bulk transfer over a clean 4 Mbit/s path with a 10 ms RTT (queue 30, IPv6, 96-byte
/// snaplen), BSD -> Linux CUBIC: no estimate above the link at either end.
#[test]
fn a_clean_bulk_transfer_is_not_faster_than_its_link() {
    let d = Draw {
        path: Path {
            queue_pkts: 30,
            seed: 541239757046908750,
            ipv6: true,
            ..Path::new(4_000_000, ms(10)).with_snaplen(96)
        },
        flows: vec![Flow {
            sender_stack: Stack::bsd(),
            mss: 1440,
            ..Flow::default()
        }],
        secs: 1,
    };
    assert_holds(&d, true);
}

/// A Windows sender to an old stack without SACK over a 1 Mbit/s path with a 40 ms RTT
/// (IPv6, 96-byte snaplen): no estimate above the link.
#[test]
fn an_old_receiver_without_sack_is_not_faster_than_its_link() {
    let d = Draw {
        path: Path {
            queue_pkts: 30,
            seed: 2313662744581286350,
            ipv6: true,
            ..Path::new(1_000_000, ms(40)).with_snaplen(96)
        },
        flows: vec![Flow {
            sender_stack: Stack::windows(),
            receiver_stack: Stack::old(false),
            cc: Cc::Reno,
            rcvbuf: 64_000,
            mss: 1440,
            start: ms(73),
            ..Flow::default()
        }],
        secs: 2,
    };
    assert_holds(&d, true);
}

/// An old stack sending to a Linux receiver with a 16 kB buffer over a 10 Mbit/s path
/// with a 300 µs RTT (queue 100, ECN marks from 25 packets), the path down for 50 ms at
/// 602 ms. The window (14.3 KiB, 29x the BDP) kept an 11 ms queue standing at the link's
/// rate for 600 ms, then the flow waited a second on its timer: bottleneck-limited while
/// the path carried data, the outage reported as a stall.
#[test]
fn a_full_window_before_an_outage_is_the_bottleneck_and_a_stall() {
    let d = Draw {
        path: Path {
            queue_pkts: 100,
            seed: 0,
            ecn_mark_pkts: Some(25),
            outages: vec![Outage {
                start: ms(602),
                length: ms(50),
            }],
            ..Path::new(10_000_000, us(300))
        },
        flows: vec![Flow {
            sender_stack: Stack::old(false),
            rcvbuf: 16_000,
            ecn: true,
            ..Flow::default()
        }],
        secs: 1,
    };
    assert_holds(&d, true);
    let flows = analysed_at(&d, Vantage::Sender);
    let f = &flows[0];
    assert_eq!(
        f.verdict,
        bdpscope::diagnose::Verdict::Limited(bdpscope::diagnose::Label::Bottleneck)
    );
    assert!(
        f.stalls.iter().any(|s| s.kind == bdpscope::summary::StallKind::Outage),
        "{:?}",
        f.stalls
    );
}

/// Through a 5 Mbit/s shaper on a 10 Mbit/s path with a 10 ms RTT, an upload between
/// Windows hosts (16 kB buffer) and a download from BSD to Linux, seen from a tap in the
/// middle of the path on a 10 ms clock: no estimate above the link.
#[test]
fn two_ways_through_a_shaper_on_a_coarse_tap_are_not_faster_than_the_link() {
    let d = Draw {
        path: Path {
            queue_pkts: 8,
            seed: 2850764786568651655,
            middle: Some(Tap {
                at: 0.6,
                capture: CaptureHost {
                    resolution: ms(10),
                    ..CaptureHost::default()
                },
            }),
            shaper: Some(Shaper {
                rate_bps: 5_000_000,
                burst_bytes: 64_000,
                limit_bytes: 200_000,
                police: false,
                tick: us(0),
            }),
            ..Path::new(10_000_000, ms(10))
        },
        flows: vec![
            Flow {
                sender_stack: Stack::windows(),
                receiver_stack: Stack::windows(),
                rcvbuf: 16_000,
                start: ms(39),
                upload: true,
                ..Flow::default()
            },
            Flow {
                sender_stack: Stack::bsd(),
                rcvbuf: 64_000,
                start: ms(246),
                ..Flow::default()
            },
        ],
        secs: 1,
    };
    assert_holds(&d, true);
}

/// An old stack bursting 117 kB every 50 ms (more than the 4 Mbit/s link carries in that
/// time: a bulk sender in effect) to a Windows receiver, RTT 10 ms, the path down for
/// 50 ms at 250 ms: no estimate above the link.
#[test]
fn bursts_across_an_outage_are_not_faster_than_the_link() {
    let d = Draw {
        path: Path {
            queue_pkts: 30,
            seed: 9183926192241844108,
            outages: vec![Outage {
                start: ms(250),
                length: ms(50),
            }],
            ..Path::new(4_000_000, ms(10))
        },
        flows: vec![Flow {
            sender_stack: Stack::old(false),
            receiver_stack: Stack::windows(),
            rcvbuf: 64_000,
            app: App::OnOff {
                burst: 116_636,
                every: ms(50),
            },
            start: ms(15),
            ..Flow::default()
        }],
        secs: 1,
    };
    assert_holds(&d, true);
}

/// The coarse-clock region's second minimal case: an upload from a Windows stack that
/// never scales its window to an old Reno receiver with a 16 kB buffer, over a 100 Mbit/s,
/// 100 ms path, captured at the sender on a 1 ms clock. It read bottleneck-limited from an
/// ACK dispersion of 1.16 Mbit/s (the window's pace); it holds now (receiver-window-limited
/// at 61% of a 1.86 Mbit/s dispersion estimate).
#[test]
fn a_window_limited_upload_on_a_one_ms_clock_is_receiver_window_limited() {
    let d = Draw {
        path: Path {
            queue_pkts: 400,
            seed: 16925344228486096860,
            sender_capture: CaptureHost {
                resolution: ms(1),
                snaplen: 1514,
                ..CaptureHost::default()
            },
            ..Path::new(100_000_000, ms(100))
        },
        flows: vec![Flow {
            sender_stack: Stack::windows_unscaled(),
            receiver_stack: Stack::old(false),
            cc: Cc::Reno,
            rcvbuf: 16_000,
            upload: true,
            start: ms(191),
            ..Flow::default()
        }],
        secs: 3,
    };
    assert_holds(&d, true);
}

/// Two flows from old and Windows stacks sharing a 1 Mbit/s path with a 40 ms RTT (IPv6,
/// 96-byte snaplen: the SACK blocks are cut): the group's summed delivery is not faster
/// than the link.
#[test]
fn two_flows_with_cut_sack_blocks_are_not_faster_than_their_link() {
    let flow = |sender_stack, receiver_stack, rcvbuf| Flow {
        sender_stack,
        receiver_stack,
        cc: Cc::Cubic,
        rcvbuf,
        mss: 1440,
        start: ms(242),
        ..Flow::default()
    };
    let d = Draw {
        path: Path {
            queue_pkts: 30,
            seed: 109020748697824327,
            ipv6: true,
            ..Path::new(1_000_000, ms(40)).with_snaplen(96)
        },
        flows: vec![
            flow(Stack::old(false), Stack::linux(), 16_000),
            flow(Stack::windows(), Stack::windows(), 64_000),
        ],
        secs: 1,
    };
    assert_holds(&d, true);
}

/// A Linux sender to a Windows receiver (16 kB buffer) over a 10 Mbit/s path with a 2 ms
/// RTT, marking ECN from 2 packets, seen at the receiver on a 1 ms clock: its delivery is
/// not faster than the link.
#[test]
fn a_short_path_on_a_one_ms_clock_is_not_faster_than_its_link() {
    let d = Draw {
        path: Path {
            queue_pkts: 8,
            seed: 660830523920978802,
            ecn_mark_pkts: Some(2),
            receiver_capture: CaptureHost {
                resolution: ms(1),
                ..CaptureHost::default()
            },
            ..Path::new(10_000_000, ms(2))
        },
        flows: vec![Flow {
            sender_stack: Stack::linux(),
            receiver_stack: Stack::windows(),
            cc: Cc::Cubic,
            rcvbuf: 16_000,
            mss: 1400,
            ecn: true,
            ..Flow::default()
        }],
        secs: 1,
    };
    assert_holds(&d, true);
}

/// A Linux sender to an old stack over a 10 Mbit/s path with a 2 ms RTT, tapped in the
/// middle by a host with a 1 ms clock that coalesces interrupts (33 packets / 152 µs); the
/// sender's capture on a 1 ms clock too, both cut at 96 bytes: no delivery faster than the
/// link.
#[test]
fn a_middle_tap_on_a_one_ms_clock_is_not_faster_than_the_link() {
    let coarse = |snaplen| CaptureHost {
        resolution: ms(1),
        snaplen,
        ..CaptureHost::default()
    };
    let d = Draw {
        path: Path {
            queue_pkts: 400,
            seed: 7825432426582343800,
            sender_capture: coarse(96),
            receiver_capture: CaptureHost {
                snaplen: 96,
                ..CaptureHost::default()
            },
            middle: Some(Tap {
                at: 0.56,
                capture: CaptureHost {
                    coalesce: Some(Coalesce {
                        max_packets: 33,
                        window: us(152),
                        per_packet: us(1),
                    }),
                    ..coarse(128)
                },
            }),
            ..Path::new(10_000_000, ms(2))
        },
        flows: vec![Flow {
            sender_stack: Stack::linux(),
            receiver_stack: Stack::old(false),
            cc: Cc::Reno,
            rcvbuf: 4 << 20,
            mss: 1460,
            start: ms(179),
            ..Flow::default()
        }],
        secs: 1,
    };
    assert_holds(&d, true);
}

/// A bulk flow on a 40 Mbit/s link that also carries 12 Mbit/s of cross traffic the
/// captures do not hold (packets arriving at random, as many users' do): where the data's
/// own spacing shows the link (at the receiver), the capacity is the link's and the flow
/// is judged against what the link left it; the rest is named as unseen traffic.
#[test]
fn unseen_cross_traffic_leaves_the_link_its_rate_and_the_flow_its_share() {
    let d = Draw {
        path: Path {
            queue_pkts: 100,
            cross: Some(CrossTraffic {
                rate_bps: 12_000_000,
                frame_bytes: 1514,
            }),
            ..Path::new(40_000_000, ms(30))
        },
        flows: vec![Flow::default()],
        secs: 5,
    };
    let flows = analysed_at(&d, Vantage::Receiver);
    let f = flows.iter().find(|f| f.goodput_bps > 0.0).expect("the bulk flow");
    let cap = f.capacity.as_ref().expect("a capacity");
    eprintln!("{d:?}\n{:?} {cap:?}", f.verdict);
    for e in &f.evidence {
        eprintln!("  {e}");
    }
    // Payload bits per frame bit of a full segment (1448 B of payload in 1514 B frames).
    let eff = 1448.0 / 1514.0;
    let link = 40e6 * eff;
    let b = f.bottleneck_bps.unwrap();
    assert!(b <= link * 1.03 && b >= link * 0.85, "bottleneck {b} on a {link} link");
    let left = cap.available_bps.expect("what the shared link left the flow");
    let unseen = 12e6 * eff;
    assert!(
        ((b - left) - unseen).abs() <= 0.25 * unseen,
        "unseen {} vs {unseen}",
        b - left
    );
    assert_eq!(f.verdict.to_string(), "bottleneck-limited");
    assert_holds(&d, true);
}

/// Two bulk uploads from a BSD stack over a 4 Mbit/s LAN (300 µs), the first into a 16 kB
/// buffer: the judged transfer's durations stay within the connection's (at the receiver the
/// queue's 0.27 s put the sender's last idle after the last packet, and the steady part read
/// 1.79 s of a 1.62 s connection).
#[test]
fn two_bsd_flows_on_a_slow_lan_keep_their_durations() {
    let flow = |cc, rcvbuf, start| Flow {
        cc,
        rcvbuf,
        sender_stack: Stack::bsd(),
        start: ms(start),
        ..Flow::default()
    };
    let d = Draw {
        path: Path {
            seed: 267033226894489,
            ..Path::new(4_000_000, us(300))
        },
        flows: vec![flow(Cc::Cubic, 16_000, 0), flow(Cc::Reno, 256_000, 1)],
        secs: 1,
    };
    assert_holds(&d, true);
}

/// An old stack without SACK sending through a 2 Mbit/s policer (burst 15000) on a 10
/// Mbit/s, 300 µs path: each round trip's delivery stays at or below the capacity printed.
#[test]
fn a_policed_old_sender_keeps_its_capacity_above_its_round_trips() {
    let d = Draw {
        path: Path {
            queue_pkts: 8,
            seed: 8890518614530859143,
            shaper: Some(Shaper {
                rate_bps: 2_000_000,
                burst_bytes: 15_000,
                limit_bytes: 30_000,
                police: true,
                tick: us(0),
            }),
            ..Path::new(10_000_000, us(300))
        },
        flows: vec![Flow {
            sender_stack: Stack::old(false),
            rcvbuf: 16_000,
            ..Flow::default()
        }],
        secs: 2,
    };
    assert_holds(&d, false);
}

/// A download from Linux to Windows (MSS 536) and an upload from an old stack to Windows
/// through an 80 Mbit/s policer (burst 3000) on a 100 Mbit/s, 300 µs path: each flow's
/// capacity is at least what it delivered over one round trip.
#[test]
fn two_ways_through_a_policer_keep_each_capacity_above_its_round_trips() {
    let d = Draw {
        path: Path {
            queue_pkts: 8,
            seed: 1945146314370729094,
            shaper: Some(Shaper {
                rate_bps: 80_000_000,
                burst_bytes: 3000,
                limit_bytes: 30_000,
                police: true,
                tick: us(0),
            }),
            ..Path::new(100_000_000, us(300))
        },
        flows: vec![
            Flow {
                receiver_stack: Stack::windows(),
                rcvbuf: 64_000,
                mss: 536,
                ..Flow::default()
            },
            Flow {
                sender_stack: Stack::old(false),
                receiver_stack: Stack::windows(),
                rcvbuf: 16_000,
                start: ms(2),
                upload: true,
                ..Flow::default()
            },
        ],
        secs: 1,
    };
    assert_holds(&d, false);
}

/// An old stack without SACK sending on a 1 Mbit/s, 100 ms path whose link goes down for 4
/// s after 549 ms (ECN marking from 7 packets): no estimate above the link's rate.
#[test]
fn a_four_second_outage_on_a_slow_path_leaves_no_estimate_above_the_link() {
    let d = Draw {
        path: Path {
            queue_pkts: 30,
            seed: 0,
            ecn_mark_pkts: Some(7),
            outages: vec![Outage {
                start: ms(549),
                length: ms(4000),
            }],
            ..Path::new(1_000_000, ms(100))
        },
        flows: vec![Flow {
            sender_stack: Stack::old(false),
            rcvbuf: 64_000,
            ecn: true,
            ..Flow::default()
        }],
        secs: 1,
    };
    assert_holds(&d, false);
}

/// An upload from BSD to Windows (its reader at 16 Mbit/s in 10 ms ticks) and a download
/// from an old stack to BSD through an 800 kbit/s policer (burst 64000, 1 ms tick) on a 4
/// Mbit/s, 2 ms path, the receiver's capture on a 1 ms clock: no steady delivery above the
/// capacity printed beside it.
#[test]
fn a_policed_pair_on_a_one_ms_clock_delivers_no_more_than_its_capacity() {
    let d = Draw {
        path: Path {
            queue_pkts: 8,
            seed: 15205730044908194747,
            receiver_capture: CaptureHost {
                resolution: ms(1),
                ..CaptureHost::default()
            },
            shaper: Some(Shaper {
                rate_bps: 800_000,
                burst_bytes: 64_000,
                limit_bytes: 200_000,
                police: true,
                tick: ms(1),
            }),
            ..Path::new(4_000_000, ms(2))
        },
        flows: vec![
            Flow {
                sender_stack: Stack::bsd(),
                receiver_stack: Stack::windows(),
                rcvbuf: 4 << 20,
                mss: 1400,
                reader: Reader::Rate {
                    bps: 16_000_000,
                    tick: ms(10),
                },
                start: ms(57),
                upload: true,
                ..Flow::default()
            },
            Flow {
                sender_stack: Stack::old(false),
                receiver_stack: Stack::bsd(),
                rcvbuf: 64_000,
                mss: 1400,
                start: ms(10),
                ..Flow::default()
            },
        ],
        secs: 1,
    };
    assert_holds(&d, false);
}

/// Two BSD senders on a 30 Mbit/s, 300 µs path with 18 Mbit/s of cross traffic, one to an
/// old receiver that never scales its 16 kB window (its reader at 11 Mbit/s in 100 ms
/// ticks), captured at the receiver with a 96-byte snaplen: no sender's flight above the
/// window it was sent into.
#[test]
fn a_sender_to_an_unscaled_window_is_never_read_above_it() {
    let d = Draw {
        path: Path {
            queue_pkts: 400,
            seed: 2831342850036787917,
            sender_capture: CaptureHost {
                snaplen: 1514,
                ..CaptureHost::default()
            },
            receiver_capture: CaptureHost {
                snaplen: 96,
                ..CaptureHost::default()
            },
            cross: Some(CrossTraffic {
                rate_bps: 18_000_000,
                frame_bytes: 1514,
            }),
            ecn_mark_pkts: Some(100),
            ..Path::new(30_000_000, us(300))
        },
        flows: vec![
            Flow {
                sender_stack: Stack::bsd(),
                receiver_stack: Stack::bsd(),
                cc: Cc::Reno,
                rcvbuf: 64_000,
                mss: 536,
                start: ms(42),
                ecn: true,
                ..Flow::default()
            },
            Flow {
                sender_stack: Stack::bsd(),
                receiver_stack: Stack::old(false),
                rcvbuf: 16_000,
                mss: 1460,
                reader: Reader::Rate {
                    bps: 11_000_000,
                    tick: ms(100),
                },
                start: ms(146),
                ecn: true,
                ..Flow::default()
            },
        ],
        secs: 2,
    };
    assert_holds(&d, false);
}

/// An upload between unscaled Windows hosts and a download from an old SACK stack to Linux
/// through a 3.2 Mbit/s shaper on a 4 Mbit/s, 100 ms IPv6 path with 1.2 Mbit/s of cross
/// traffic, ECN marking from 100 packets: the flat flight's sentence says where the flight
/// stood against the BDP printed beside it.
#[test]
fn a_flat_flight_below_the_bdp_is_not_said_above_it() {
    let d = Draw {
        path: Path {
            queue_pkts: 400,
            seed: 15109534402814387895,
            ipv6: true,
            sender_capture: CaptureHost {
                snaplen: 1514,
                ..CaptureHost::default()
            },
            receiver_capture: CaptureHost {
                resolution: ms(1),
                snaplen: 1514,
                ..CaptureHost::default()
            },
            middle: Some(Tap {
                at: 0.44,
                capture: CaptureHost::default(),
            }),
            shaper: Some(Shaper {
                rate_bps: 3_200_000,
                burst_bytes: 64_000,
                limit_bytes: 30_000,
                police: false,
                tick: us(0),
            }),
            cross: Some(CrossTraffic {
                rate_bps: 1_200_000,
                frame_bytes: 1514,
            }),
            ecn_mark_pkts: Some(100),
            ..Path::new(4_000_000, ms(100))
        },
        flows: vec![
            Flow {
                sender_stack: Stack::windows_unscaled(),
                receiver_stack: Stack::windows_unscaled(),
                cc: Cc::Reno,
                rcvbuf: 256_000,
                mss: 1440,
                start: ms(78),
                upload: true,
                ecn: true,
                ..Flow::default()
            },
            Flow {
                sender_stack: Stack::old(true),
                receiver_stack: Stack::linux(),
                cc: Cc::Reno,
                rcvbuf: 256_000,
                mss: 1440,
                start: ms(89),
                ecn: true,
                ..Flow::default()
            },
        ],
        secs: 3,
    };
    assert_holds(&d, false);
}

/// A Linux Reno bulk flow into a 4 MiB window on a clean 100 Mbit/s, 100 ms path with a
/// 400-packet queue, one second: no estimate above the link (the most delivered over one
/// round trip read 122 Mbit/s).
#[test]
fn a_bulk_flow_on_a_long_fat_path_is_not_faster_than_its_link() {
    let d = Draw {
        path: Path {
            queue_pkts: 400,
            seed: 2423128669512967333,
            ..Path::new(100_000_000, ms(100))
        },
        flows: vec![Flow {
            cc: Cc::Reno,
            rcvbuf: 4 << 20,
            ..Flow::default()
        }],
        secs: 1,
    };
    assert_holds(&d, false);
}

/// A Windows sender with an 8 KiB send buffer to a Windows receiver reading 1 Mbit/s in 100 ms ticks, on a 10 Mbit/s,
/// 2 ms IPv6 path with 2% loss that goes down for 4 s a tenth of a second into the
/// transfer: the laws hold, and the capacity floor its ECN episode gives is below the link
/// (four ECE ACKs 2.59 ms apart reported 4.34 KiB of data held since before the episode:
/// 13.7 Mbit/s over the episode's span, on a 10 Mbit/s link).
#[test]
fn a_slow_reader_before_a_long_outage_keeps_the_laws() {
    let d = Draw {
        path: Path {
            queue_pkts: 8,
            loss: 0.02,
            seed: 6877672882435460715,
            ipv6: true,
            ecn_mark_pkts: Some(2),
            outages: vec![Outage {
                start: ms(346),
                length: ms(4000),
            }],
            ..Path::new(10_000_000, ms(2))
        },
        flows: vec![Flow {
            sender_stack: Stack::windows().with_sndbuf(8 << 10),
            receiver_stack: Stack::windows(),
            rcvbuf: 64_000,
            mss: 1440,
            reader: Reader::Rate {
                bps: 1_000_000,
                tick: ms(100),
            },
            start: ms(244),
            ecn: true,
            ..Flow::default()
        }],
        secs: 1,
    };
    assert_holds(&d, true);
}

/// A Windows download (64 KiB send buffer) and a Windows upload to BSD (8 KiB send buffer)
/// on a 1 Mbit/s, 10 ms IPv6 path with 2% loss, captured on 1 ms clocks (the sender's host
/// coalescing 21 packets / 214 µs): a sender-limited verdict is the sender's own time.
#[test]
fn two_windows_flows_on_a_slow_lossy_path_keep_the_verdict_laws() {
    let d = Draw {
        path: Path {
            queue_pkts: 100,
            loss: 0.02,
            seed: 10084561477543318895,
            ipv6: true,
            sender_capture: CaptureHost {
                resolution: ms(1),
                coalesce: Some(Coalesce {
                    max_packets: 21,
                    window: us(214),
                    per_packet: us(2),
                }),
                snaplen: 96,
                start_after: Duration::ZERO,
            },
            receiver_capture: CaptureHost {
                resolution: ms(1),
                ..CaptureHost::default()
            },
            ..Path::new(1_000_000, ms(10))
        },
        flows: vec![
            Flow {
                sender_stack: Stack::windows().with_sndbuf(64 << 10),
                receiver_stack: Stack::windows(),
                cc: Cc::Reno,
                rcvbuf: 64_000,
                mss: 1440,
                start: ms(70),
                ..Flow::default()
            },
            Flow {
                sender_stack: Stack::windows().with_sndbuf(8 << 10),
                receiver_stack: Stack::bsd(),
                cc: Cc::Reno,
                rcvbuf: 64_000,
                mss: 1440,
                start: ms(120),
                upload: true,
                ..Flow::default()
            },
        ],
        secs: 2,
    };
    assert_holds(&d, false);
}

/// Two Windows uploads (8 KiB and 64 KiB send buffers) to a Windows and an old SACK
/// receiver on a 1 Mbit/s, 10 ms path with 2% loss, the sender's capture on a 10 ms clock
/// and a tap near the receiver coalescing 44 packets / 207 µs: a round trip timed, the
/// goodput is measured.
#[test]
fn two_lossy_uploads_on_a_slow_path_measure_their_goodput() {
    let d = Draw {
        path: Path {
            queue_pkts: 8,
            loss: 0.02,
            seed: 15960242862899365389,
            ecn_mark_pkts: Some(2),
            sender_capture: CaptureHost {
                resolution: ms(10),
                ..CaptureHost::default()
            },
            receiver_capture: CaptureHost {
                snaplen: 96,
                ..CaptureHost::default()
            },
            middle: Some(Tap {
                at: 0.88,
                capture: CaptureHost {
                    coalesce: Some(Coalesce {
                        max_packets: 44,
                        window: us(207),
                        per_packet: us(1),
                    }),
                    snaplen: 96,
                    ..CaptureHost::default()
                },
            }),
            ..Path::new(1_000_000, ms(10))
        },
        flows: vec![
            Flow {
                sender_stack: Stack::windows().with_sndbuf(8 << 10),
                receiver_stack: Stack::windows(),
                rcvbuf: 4 << 20,
                mss: 1400,
                start: ms(118),
                upload: true,
                ecn: true,
                ..Flow::default()
            },
            Flow {
                sender_stack: Stack::windows().with_sndbuf(64 << 10),
                receiver_stack: Stack::old(true),
                rcvbuf: 4 << 20,
                mss: 1460,
                start: ms(109),
                upload: true,
                ecn: true,
                ..Flow::default()
            },
        ],
        secs: 2,
    };
    assert_holds(&d, false);
}

/// A Linux sender to a Windows receiver (16 kB buffer, no timestamps) beside a Reno flow and
/// 18 Mbit/s of cross traffic behind a 400-packet queue on a 30 Mbit/s, 0.3 ms path, captured
/// at the receiver: the loop through the sender read 22 to 80 ms as the queue came and
/// went, and data paired with the ACK of one 80 ms loop back put the sender 45.6 KiB into
/// a 15.5 KiB window; that read the handshake's scale as wrong, the window went unknown and
/// the advice asked for a 31 KiB send buffer beside "the flow had 44.7 KiB". The sender may
/// have had any ACK that passed here the least loop before: the scale stands, the flight
/// is the window's, and the flow is the receiver window's.
#[test]
fn a_receiver_side_rebuild_behind_a_draining_queue_keeps_the_scale_and_the_window() {
    let d = Draw {
        path: Path {
            queue_pkts: 400,
            seed: 3930079813954524804,
            ecn_mark_pkts: Some(100),
            cross: Some(CrossTraffic {
                rate_bps: 18_000_000,
                frame_bytes: 1514,
            }),
            ..Path::new(30_000_000, us(300))
        },
        flows: vec![
            Flow {
                receiver_stack: Stack::windows(),
                rcvbuf: 16_000,
                start: ms(137),
                ecn: true,
                ..Flow::default()
            },
            Flow {
                cc: Cc::Reno,
                rcvbuf: 256_000,
                start: ms(12),
                ecn: true,
                ..Flow::default()
            },
        ],
        secs: 1,
    };
    let flows = analysed_at(&d, Vantage::Receiver);
    let f = flows
        .iter()
        .find(|f| f.max_rwnd_bytes.is_some_and(|w| w < 20_000))
        .expect("the flow to the Windows receiver");
    let window = f.max_rwnd_bytes.unwrap();
    let flight = f.sender_max_flight_bytes.expect("the sender's flight");
    assert!(flight <= window + 1460, "flight {flight} in a window of {window}");
    assert_eq!(f.verdict.to_string(), "receiver-window-limited");
    assert_holds(&d, true);
}

/// A Windows download through a 0.8 Mbit/s policer (15 kB bucket, 1 ms tick) on a 1 Mbit/s,
/// 40 ms path with a 16 kB window, the receiver's host stamping on a 10 ms clock in
/// batches: the bucket's test took the delivery of the few loss bins the window left free
/// for the policed rate, 1.20 Mbit/s on the 1 Mbit/s link. What passed a policer passed
/// the line: a rate not below the line the spacing shows is the link's.
#[test]
fn a_policer_is_never_read_above_the_line_that_carried_it() {
    let d = Draw {
        path: Path {
            queue_pkts: 400,
            seed: 12556828648092269151,
            ecn_mark_pkts: Some(100),
            receiver_capture: CaptureHost {
                resolution: ms(10),
                coalesce: Some(Coalesce {
                    max_packets: 59,
                    window: us(119),
                    per_packet: us(1),
                }),
                snaplen: 128,
                start_after: Duration::ZERO,
            },
            shaper: Some(Shaper {
                rate_bps: 800_000,
                burst_bytes: 15000,
                limit_bytes: 200_000,
                police: true,
                tick: ms(1),
            }),
            ..Path::new(1_000_000, ms(40))
        },
        flows: vec![Flow {
            sender_stack: Stack::windows().with_sndbuf(65536),
            receiver_stack: Stack::windows(),
            rcvbuf: 16_000,
            mss: 1400,
            start: ms(88),
            ecn: true,
            ..Flow::default()
        }],
        secs: 1,
    };
    for v in [Vantage::Sender, Vantage::Receiver] {
        for f in analysed_at(&d, v).iter().filter(|f| f.goodput_bps > 0.0) {
            let b = f.bottleneck_bps.expect("a capacity");
            assert!(
                b <= 1_000_000.0,
                "{v:?}: {b} bit/s on a 1 Mbit/s link ({:?})",
                f.capacity
            );
        }
    }
    assert_holds(&d, true);
}

/// A Linux download (on/off bursts of 62 KB every 127 ms, a 10 Mbit/s reader in 10 ms ticks)
/// beside an unscaled Windows upload on a 300 Mbit/s, 0.3 ms path marking ECN from 25
/// packets, captured at the receiver's host batching 40 packets in 21 µs: the receiver held
/// its ACKs for 620 µs, then echoed a CE mark 8 µs after it with 21.7 KiB at once, and the
/// episode's rate over its 504 µs, 352 Mbit/s, raised the capacity above the link. The
/// delivery is rated over its reports' interval, from the report before the episode (159).
#[test]
fn an_episode_rates_its_delivery_from_the_report_before_it() {
    let d = Draw {
        path: Path {
            queue_pkts: 100,
            seed: 1944158908654212948,
            ecn_mark_pkts: Some(25),
            receiver_capture: CaptureHost {
                resolution: us(1),
                coalesce: Some(Coalesce {
                    max_packets: 40,
                    window: us(21),
                    per_packet: us(0),
                }),
                snaplen: 128,
                start_after: Duration::ZERO,
            },
            ..Path::new(300_000_000, us(300))
        },
        flows: vec![
            Flow {
                rcvbuf: 64_000,
                mss: 1400,
                app: App::OnOff {
                    burst: 62344,
                    every: ms(127),
                },
                reader: Reader::Rate {
                    bps: 10_000_000,
                    tick: ms(10),
                },
                start: ms(250),
                ecn: true,
                ..Flow::default()
            },
            Flow {
                sender_stack: Stack::windows_unscaled().with_sndbuf(65536),
                cc: Cc::Reno,
                rcvbuf: 16_000,
                mss: 1460,
                app: App::OnOff {
                    burst: 136912,
                    every: ms(576),
                },
                start: ms(238),
                upload: true,
                ecn: true,
                ..Flow::default()
            },
        ],
        secs: 2,
    };
    for f in analysed_at(&d, Vantage::Receiver) {
        for s in &f.stalls {
            if let Some(r) = s.delivered_bps {
                assert!(
                    r <= 300e6,
                    "{}: {r} bit/s on a 300 Mbit/s link: {}",
                    f.client,
                    s.sentence
                );
            }
        }
    }
    assert_holds(&d, true);
}

/// A Windows sender's two downloads from one host (its IPv4 IDs count per host, RFC 6864
/// §4.1) through an 80 Mbit/s policer on a 300 µs path, captured at the receiver: the sender
/// re-sent two holes back to back on one partial ACK. The first fill was read as its
/// original overtaken, the second timed as a repair from the first report of its hole:
/// 86 µs for the loop through the server. A fill whose ID follows the last new data's starts
/// the recovery, read either way (`RepairSampler::on_fill`).
#[test]
fn a_fill_the_ids_show_re_sent_starts_the_recovery_it_belongs_to() {
    let d = Draw {
        path: Path {
            queue_pkts: 8,
            seed: 13658857696676213338,
            sender_capture: CaptureHost {
                resolution: ms(10),
                snaplen: 96,
                ..CaptureHost::default()
            },
            middle: Some(Tap {
                at: 0.86,
                capture: CaptureHost::default(),
            }),
            shaper: Some(Shaper {
                rate_bps: 80_000_000,
                burst_bytes: 64_000,
                limit_bytes: 200_000,
                police: true,
                tick: us(0),
            }),
            ..Path::new(100_000_000, us(300))
        },
        flows: vec![
            Flow {
                sender_stack: Stack::windows_unscaled().with_sndbuf(65536),
                receiver_stack: Stack::linux(),
                cc: Cc::Reno,
                rcvbuf: 256_000,
                mss: 1460,
                start: ms(66),
                ..Flow::default()
            },
            Flow {
                sender_stack: Stack::windows_unscaled().with_sndbuf(65536),
                receiver_stack: Stack::windows_unscaled(),
                cc: Cc::Cubic,
                rcvbuf: 64_000,
                mss: 536,
                reader: Reader::Rate {
                    bps: 6_000_000,
                    tick: ms(100),
                },
                start: ms(87),
                ..Flow::default()
            },
        ],
        secs: 2,
    };
    let bad = failures(&d, Some("truth:min-rtt"), true);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A Linux upload on a 250 ms path captured at the sender from 1.06 s on, in a go-back-N
/// with the originals still queued: the ACKs of the originals time the re-sendings, the
/// first seen (97 µs). The receiver's D-SACKs of the copies, a round trip later, take those
/// samples back (`tcp/rtt/retractable.rs`).
#[test]
fn a_late_capture_takes_back_the_samples_the_receiver_d_sacks() {
    let d = Draw {
        path: Path {
            queue_pkts: 8,
            seed: 13583178033676932962,
            ipv6: true,
            sender_capture: CaptureHost {
                start_after: Duration::from_millis(1058),
                ..CaptureHost::default()
            },
            receiver_capture: CaptureHost {
                resolution: ms(1),
                snaplen: 1514,
                ..CaptureHost::default()
            },
            ..Path::new(100_000_000, ms(250))
        },
        flows: vec![Flow {
            sender_stack: Stack::linux(),
            receiver_stack: Stack::linux(),
            cc: Cc::Reno,
            rcvbuf: 64_000,
            mss: 536,
            app: App::OnOff {
                burst: 58407,
                every: ms(182),
            },
            start: ms(209),
            upload: true,
            ..Flow::default()
        }],
        secs: 3,
    };
    let bad = failures(&d, Some("truth:min-rtt"), true);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// An old stack's upload without SACK beside a Windows download, 30 Mbit/s and 10 ms,
/// captured at the sender from 511 ms on: a go-back-N re-sends what the receiver already
/// holds above a 72-byte hole, and the ACK of the fill covers 22 segments at once, 355 µs
/// after the last was sent. It answered the fill (data_ack.rs, `held_above_a_hole`).
#[test]
fn a_late_capture_does_not_time_the_last_segment_by_its_fills_ack() {
    let d = Draw {
        path: Path {
            queue_pkts: 30,
            loss: 0.002,
            seed: 7889778755562043963,
            ipv6: true,
            sender_capture: CaptureHost {
                snaplen: 1514,
                start_after: Duration::from_millis(511),
                ..CaptureHost::default()
            },
            receiver_capture: CaptureHost {
                coalesce: Some(Coalesce {
                    max_packets: 13,
                    window: us(21),
                    per_packet: us(0),
                }),
                snaplen: 1514,
                ..CaptureHost::default()
            },
            ..Path::new(30_000_000, ms(10))
        },
        flows: vec![
            Flow {
                sender_stack: Stack::old(true).with_sndbuf(32768),
                receiver_stack: Stack::windows(),
                cc: Cc::Reno,
                rcvbuf: 16_000,
                mss: 1440,
                start: ms(14),
                ..Flow::default()
            },
            Flow {
                sender_stack: Stack::old(false).with_sndbuf(32768),
                receiver_stack: Stack::old(false),
                cc: Cc::Reno,
                rcvbuf: 4 << 20,
                mss: 536,
                app: App::OnOff {
                    burst: 225_900,
                    every: ms(121),
                },
                reader: Reader::Rate {
                    bps: 16_000_000,
                    tick: ms(10),
                },
                start: ms(4),
                upload: true,
                ..Flow::default()
            },
        ],
        secs: 2,
    };
    let bad = failures(&d, Some("truth:min-rtt"), true);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A BSD download (1 ms TS clock) through a 15 Mbit/s policer, RTT 40 ms, tapped in the
/// middle of the path from 1.477 s on: the first TSval the tap saw had gone out on segments
/// before the capture began, and the echo of it came 22.5 ms after its sighting. That
/// sighting is no sending (`ts_echo.rs`: the first value after a missed SYN is not timed).
#[test]
fn a_late_middle_tap_does_not_time_the_first_tsval_it_sees() {
    let d = Draw {
        path: Path {
            queue_pkts: 400,
            seed: 1970660632904165345,
            ipv6: true,
            sender_capture: CaptureHost {
                resolution: ms(10),
                snaplen: 1514,
                ..CaptureHost::default()
            },
            receiver_capture: CaptureHost {
                resolution: ms(10),
                ..CaptureHost::default()
            },
            middle: Some(Tap {
                at: 0.43,
                capture: CaptureHost {
                    start_after: Duration::from_millis(1477),
                    ..CaptureHost::default()
                },
            }),
            shaper: Some(Shaper {
                rate_bps: 15_000_000,
                burst_bytes: 64_000,
                limit_bytes: 30_000,
                police: true,
                tick: ms(1),
            }),
            ..Path::new(30_000_000, ms(40))
        },
        flows: vec![Flow {
            sender_stack: Stack::bsd(),
            receiver_stack: Stack::bsd(),
            cc: Cc::Reno,
            rcvbuf: 64_000,
            mss: 1400,
            start: ms(187),
            ..Flow::default()
        }],
        secs: 2,
    };
    let bad = failures(&d, Some("truth:min-rtt"), true);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// An old stack's download without SACK through a 20 Mbit/s policer on a 100 Mbit/s link,
/// captured at the receiver from 1.243 s on, inside a recovery: the first repair's ACK
/// covered 17.5 kB above the hole whose duplicate ACKs had gone by before the capture
/// began, 242 µs after the ACK before it (an ACK dispersion of 578 Mbit/s). That data was
/// delivered before, not then (`tcp/reno_credit.rs`, a recovery begun before the capture).
#[test]
fn a_capture_begun_inside_a_recovery_does_not_time_the_held_data_by_its_fill() {
    let d = Draw {
        path: Path {
            queue_pkts: 30,
            seed: 12224284641004649111,
            sender_capture: CaptureHost {
                start_after: Duration::from_millis(1385),
                ..CaptureHost::default()
            },
            receiver_capture: CaptureHost {
                start_after: Duration::from_millis(1243),
                ..CaptureHost::default()
            },
            shaper: Some(Shaper {
                rate_bps: 20_000_000,
                burst_bytes: 15_000,
                limit_bytes: 30_000,
                police: true,
                tick: ms(1),
            }),
            ..Path::new(100_000_000, ms(10))
        },
        flows: vec![Flow {
            sender_stack: Stack::old(false).with_sndbuf(32768),
            receiver_stack: Stack::old(false),
            cc: Cc::Reno,
            rcvbuf: 256_000,
            mss: 1460,
            start: ms(125),
            ..Flow::default()
        }],
        secs: 3,
    };
    let bad = failures(&d, Some("truth:link-rate"), true);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
