//! The stall finders on hand-made connections: packets built with `testkit::TcpPacket`,
//! fed through a real `Connection` and the tracker.

use super::StallTracker;
use crate::decode::decode;
use crate::flow::{Dir, Endpoint};
use crate::summary::{Stall, StallKind};
use crate::tcp::Connection;
use crate::testkit::TcpPacket;
use crate::time::{Span, Timestamp};

const C: &str = "10.0.0.1:40000";
const S: &str = "10.0.0.2:80";

struct Flow {
    conn: Connection,
    stalls: StallTracker,
}

fn ep(s: &str) -> Endpoint {
    let a: std::net::SocketAddr = s.parse().unwrap();
    Endpoint {
        addr: a.ip(),
        port: a.port(),
    }
}

impl Flow {
    /// A connection after a handshake at 0 ms (1 ms RTT at the client), client ISN 0 and
    /// server ISN 0, no window scaling.
    fn new() -> Flow {
        let mut f = Flow {
            conn: Connection::new(0, ep(C), ep(S), true, 1, Timestamp(0)),
            stalls: StallTracker::default(),
        };
        f.send(0.0, Dir::C2S, TcpPacket::new(C, S).syn().seq(0).window(65535).mss(1460));
        f.send(
            1.0,
            Dir::S2C,
            TcpPacket::new(S, C).syn().ack(1).seq(0).window(65535).mss(1460),
        );
        f.send(1.1, Dir::C2S, TcpPacket::new(C, S).seq(1).ack(1).window(65535));
        f
    }

    /// After the handshake, the server's first 1000 B sent at 10 ms and acknowledged at 12.
    fn started() -> Flow {
        let mut f = Flow::new();
        f.data(10.0, 1, 1000);
        f.ack(12.0, 1001, 65535);
        f
    }

    fn send(&mut self, ms: f64, dir: Dir, p: TcpPacket) {
        let (link, bytes) = p.build();
        let seg = decode(link, &bytes).unwrap();
        // A nanosecond capture (round stamps would make a coarse one).
        let ts = Timestamp(7) + Span::from_nanos((ms * 1e6) as i64);
        let ev = self.conn.track(&seg, dir, 0, ts);
        self.stalls.on_segment(&self.conn, &ev);
    }

    /// Server data [seq, seq + len) at `ms`.
    fn data(&mut self, ms: f64, seq: u32, len: usize) {
        self.send(
            ms,
            Dir::S2C,
            TcpPacket::new(S, C).seq(seq).ack(1).payload_len(len).window(65535),
        );
    }

    /// The client's ACK of `ack` with window `win` at `ms`.
    fn ack(&mut self, ms: f64, ack: u32, win: u16) {
        self.send(ms, Dir::C2S, TcpPacket::new(C, S).seq(1).ack(ack).window(win));
    }

    fn finish(&self) -> Vec<Stall> {
        self.stalls.finish(&self.conn)
    }
}

fn only(stalls: &[Stall], kind: StallKind) -> Vec<&Stall> {
    stalls.iter().filter(|s| s.kind == kind).collect()
}

#[test]
fn a_window_that_never_reopens_is_one_unrecovered_stall_with_its_persist_back_off() {
    let mut f = Flow::new();
    f.data(10.0, 1, 1000);
    f.ack(10.1, 1001, 0);
    // Persist probes 1 byte each, backing off 0.2, 0.4, 0.8 s; each answered with a zero window.
    for t in [210.0, 610.0, 1410.0] {
        f.data(t, 1001, 1);
        f.ack(t + 0.1, 1001, 0);
    }
    let out = f.finish();
    let z = only(&out, StallKind::ZeroWindow);
    assert_eq!(z.len(), 1, "{out:?}");
    assert!(!z[0].recovered);
    assert_eq!(z[0].events, 3);
    assert_eq!(z[0].direction, Some(Dir::S2C));
    assert!(z[0].sentence.contains("never reopened"), "{}", z[0].sentence);
    assert!(z[0].sentence.contains("persist back-off"), "{}", z[0].sentence);
    // No outage: the window held the data, not the path.
    assert!(only(&out, StallKind::Outage).is_empty(), "{out:?}");
}

#[test]
fn closings_close_together_are_one_episode() {
    let mut f = Flow::new();
    let mut seq = 1;
    for i in 0..5 {
        let t = 10.0 + 50.0 * i as f64;
        f.data(t, seq, 1000);
        seq += 1000;
        f.ack(t + 0.1, seq, 0);
        f.ack(t + 20.0, seq, 8000);
    }
    let out = f.finish();
    let z = only(&out, StallKind::ZeroWindow);
    assert_eq!(z.len(), 1, "{out:?}");
    assert!(z[0].recovered);
    assert!(z[0].sentence.contains("closed 5 times"), "{}", z[0].sentence);
    assert!((z[0].duration_s - 0.2199).abs() < 1e-3, "{}", z[0].duration_s);
}

#[test]
fn retransmissions_never_answered_are_a_lost_connection() {
    let mut f = Flow::new();
    f.data(10.0, 1, 648);
    let mut t = 10.0;
    let mut rto = 200.0;
    for _ in 0..5 {
        t += rto;
        rto *= 2.0;
        f.data(t, 1, 648);
    }
    let out = f.finish();
    let lost = only(&out, StallKind::Lost);
    assert_eq!(lost.len(), 1, "{out:?}");
    assert_eq!(lost[0].events, 5);
    assert_eq!(lost[0].intervals_s.len(), 5);
    assert!(lost[0].sentence.contains("RTO back-off"), "{}", lost[0].sentence);
    assert!(!lost[0].recovered);
}

#[test]
fn a_long_wait_answered_at_last_is_an_outage() {
    let mut f = Flow::new();
    f.data(10.0, 1, 1000);
    f.data(11.0, 1001, 1000);
    f.ack(12.0, 1001, 65535);
    // The path goes dark for 5 s: retransmissions of [1001, 2001) back off, then an ACK.
    for t in [300.0, 900.0, 2100.0, 4500.0] {
        f.data(t, 1001, 1000);
    }
    f.ack(5000.0, 2001, 65535);
    let out = f.finish();
    let o = only(&out, StallKind::Outage);
    assert_eq!(o.len(), 1, "{out:?}");
    assert!(o[0].recovered);
    assert!((o[0].duration_s - 4.988).abs() < 1e-3, "{}", o[0].duration_s);
    assert_eq!(o[0].events, 4);
    // The same retransmissions are one loss episode.
    assert_eq!(only(&out, StallKind::LossEpisode).len(), 1, "{out:?}");
}

#[test]
fn a_reset_mid_transfer_says_what_was_outstanding() {
    let mut f = Flow::new();
    f.data(10.0, 1, 1000);
    f.send(20.0, Dir::C2S, TcpPacket::new(C, S).rst().seq(1).ack(1));
    let out = f.finish();
    let r = only(&out, StallKind::Reset);
    assert_eq!(r.len(), 1, "{out:?}");
    assert_eq!(r[0].direction, Some(Dir::C2S));
    assert!(r[0].sentence.contains("mid-transfer"), "{}", r[0].sentence);
}

/// A client that closed for good (its FIN, none of the server's data read after it) resets
/// what the server sent after that close: a close racing the server's last segment, said
/// so, not "mid-transfer"; with nothing of its own outstanding beyond its FIN, no stall.
/// A client that kept reading after its FIN (a half-close) and then reset cut the
/// transfer short.
#[test]
fn a_reset_after_the_resetters_own_close_is_a_close_race() {
    let fin = |f: &mut Flow, ms: f64, seq: u32, ack: u32| {
        f.send(ms, Dir::C2S, TcpPacket::new(C, S).fin().seq(seq).ack(ack).window(65535));
    };
    let rst = |f: &mut Flow, ms: f64, seq: u32| f.send(ms, Dir::C2S, TcpPacket::new(C, S).rst().seq(seq));
    // The client's own 24 B (a TLS close_notify) and FIN, then the server's 38 B arrive.
    let mut f = Flow::started();
    f.send(
        20.0,
        Dir::C2S,
        TcpPacket::new(C, S).seq(1).ack(1001).payload_len(24).window(65535),
    );
    fin(&mut f, 20.1, 25, 1001);
    f.data(20.5, 1001, 38);
    rst(&mut f, 21.0, 26);
    let out = f.finish();
    let r = only(&out, StallKind::Reset);
    assert_eq!(r.len(), 1, "{out:?}");
    assert!(
        r[0].sentence.contains("after closing its side") && !r[0].sentence.contains("mid-transfer"),
        "{}",
        r[0].sentence
    );
    // Its own data acknowledged before the race: a close, no stall.
    let mut f = Flow::started();
    fin(&mut f, 20.0, 1, 1001);
    f.send(
        20.4,
        Dir::S2C,
        TcpPacket::new(S, C).seq(1001).ack(2).payload_len(38).window(65535),
    );
    rst(&mut f, 21.0, 2);
    assert!(only(&f.finish(), StallKind::Reset).is_empty(), "{:?}", f.finish());
    // Half-closed, still reading: the server's transfer goes on and is acknowledged, then
    // the client resets with more of it outstanding.
    let mut f = Flow::started();
    fin(&mut f, 20.0, 1, 1001);
    f.data(30.0, 1001, 1000);
    f.send(32.0, Dir::C2S, TcpPacket::new(C, S).seq(2).ack(2001).window(65535));
    f.data(40.0, 2001, 1000);
    rst(&mut f, 41.0, 2);
    let r = f.finish();
    let r = only(&r, StallKind::Reset);
    assert_eq!(r.len(), 1);
    assert!(r[0].sentence.contains("mid-transfer"), "{}", r[0].sentence);
    // Closed while the server still had data outstanding, then reset what kept coming:
    // the client quit in the middle of the server's transfer.
    let mut f = Flow::started();
    f.data(15.0, 1001, 1000);
    fin(&mut f, 16.0, 1, 1001);
    f.data(20.0, 2001, 1000);
    rst(&mut f, 21.0, 2);
    let r = f.finish();
    let r = only(&r, StallKind::Reset);
    assert_eq!(r.len(), 1, "{r:?}");
    assert!(r[0].sentence.contains("mid-transfer"), "{}", r[0].sentence);
}

#[test]
fn keep_alives_alone_are_reported() {
    let mut f = Flow::new();
    for t in [1000.0, 2000.0, 3000.0] {
        // A keep-alive: one below the next sequence number, no data.
        f.send(t, Dir::C2S, TcpPacket::new(C, S).seq(0).ack(1).window(65535));
        f.send(t + 1.0, Dir::S2C, TcpPacket::new(S, C).seq(1).ack(1).window(65535));
    }
    let out = f.finish();
    let k = only(&out, StallKind::KeepAliveOnly);
    assert_eq!(k.len(), 1, "{out:?}");
    assert_eq!(k[0].events, 3);
}

/// A greeting, acknowledged, then nothing but keep-alives: an idle connection all the
/// same (the lab's keepalive_only kind); with the greeting unacknowledged, no finding.
#[test]
fn keep_alives_after_acknowledged_data_are_reported() {
    let run = |first: f64| {
        let mut f = Flow::new();
        f.data(10.0, 1, 120);
        f.ack(11.0, 121, 65535);
        for t in [first, first + 1000.0, first + 2000.0] {
            f.send(t, Dir::C2S, TcpPacket::new(C, S).seq(0).ack(121).window(65535));
            f.send(t + 1.0, Dir::S2C, TcpPacket::new(S, C).seq(121).ack(1).window(65535));
        }
        f.finish()
    };
    let out = run(1100.0);
    let k = only(&out, StallKind::KeepAliveOnly);
    assert_eq!(k.len(), 1, "{out:?}");
    assert!(
        k[0].sentence
            .contains("after its last data at +10.0 ms (120 B in all, acknowledged)"),
        "{}",
        k[0].sentence
    );
    // "One below SND.NXT" 100 ms after the data is no keep-alive timer's (at least 1 s).
    assert!(only(&run(110.0), StallKind::KeepAliveOnly).is_empty());
    // A 1 s timer counted in jiffies fires up to one jiffy (10 ms at HZ=100) early: the
    // lab's keep-alive at the client came 996.6 ms after the data.
    assert_eq!(only(&run(10.0 + 996.6), StallKind::KeepAliveOnly).len(), 1);
    assert!(only(&run(10.0 + 985.0), StallKind::KeepAliveOnly).is_empty());
}

/// Four responses of two full segments and a short one, the client's ACK of the full ones
/// `rtt` ms after them and of the short one `hold` ms after that round trip; each held ACK
/// releases the next response's data at once (the last one's too).
fn responses(rtt: f64, hold: f64) -> Vec<Stall> {
    let mut f = Flow::new();
    let mut seq = 1;
    let mut t = 10.0;
    for _ in 0..4 {
        f.data(t, seq, 1448);
        f.data(t + 0.1, seq + 1448, 1448);
        f.ack(t + 0.1 + rtt, seq + 2896, 65535);
        f.data(t + 0.2 + rtt, seq + 2896, 500);
        seq += 2896 + 500;
        f.ack(t + 0.2 + 2.0 * rtt + hold, seq, 65535);
        t += 0.3 + 2.0 * rtt + hold;
    }
    f.data(t, seq, 1448);
    f.finish()
}

#[test]
fn short_segments_waiting_for_delayed_acks_are_found() {
    // Request/response: each response ends with a short segment that the client ACKs only
    // after 40 ms (its delayed-ACK timer); the server sends nothing meanwhile.
    let out = responses(0.1, 40.0);
    let d = only(&out, StallKind::DelayedAck);
    assert_eq!(d.len(), 1, "{out:?}");
    assert_eq!(d[0].events, 4);
    assert_eq!(d[0].direction, Some(Dir::S2C));
}

/// The same seen beside the sender of a 30 ms path: each wait is the round trip and the
/// 40 ms hold (70 ms, not three round trips), and counts; the same ACKs 20 ms late (a
/// queue's jitter, no timer) do not.
#[test]
fn delayed_acks_on_a_long_path_are_found_beside_the_sender() {
    let out = responses(30.0, 40.0);
    let d = only(&out, StallKind::DelayedAck);
    assert_eq!(d.len(), 1, "{out:?}");
    assert_eq!(d[0].events, 4);
    assert!(only(&responses(30.0, 20.0), StallKind::DelayedAck).is_empty());
}

/// A request-response client whose server delays the ACK of each request (40 ms) and
/// answers later: the client waited for the answer, not for the ACK, and no delayed-ACK
/// stall is its.
#[test]
fn a_delayed_ack_before_the_answer_holds_no_one() {
    let mut f = Flow::new();
    let (mut cseq, mut sseq) = (1u32, 1u32);
    let mut t = 10.0;
    for _ in 0..4 {
        f.send(
            t,
            Dir::C2S,
            TcpPacket::new(C, S).seq(cseq).ack(sseq).payload_len(300).window(65535),
        );
        cseq += 300;
        f.send(
            t + 40.5,
            Dir::S2C,
            TcpPacket::new(S, C).seq(sseq).ack(cseq).window(65535),
        );
        f.send(
            t + 45.0,
            Dir::S2C,
            TcpPacket::new(S, C).seq(sseq).ack(cseq).payload_len(200).window(65535),
        );
        sseq += 200;
        t += 46.0;
    }
    let out = f.finish();
    assert!(only(&out, StallKind::DelayedAck).is_empty(), "{out:?}");
}

#[test]
fn an_ordinary_transfer_has_no_stalls() {
    let mut f = Flow::new();
    let mut seq = 1;
    for i in 0..100 {
        let t = 10.0 + i as f64;
        f.data(t, seq, 1448);
        seq += 1448;
        f.ack(t + 0.5, seq, 65535);
    }
    assert!(f.finish().is_empty(), "{:?}", f.finish());
}

/// A loss episode: the hole [1461, 2921) repaired at 20 ms after eight duplicate ACKs had
/// each reported a segment delivered (RFC 5681 §3.2), then one more loss repaired at
/// `second_rtx_ms`; the connection goes on until an ACK more than a second later closes
/// the episode. Full-sized segments (MSS 1460), as a duplicate ACK credits one MSS.
fn episode_after_a_hole(second_rtx_ms: f64) -> Vec<Stall> {
    episode_after_a_hole_from(20.0, second_rtx_ms)
}

/// As [`episode_after_a_hole`], the hole first re-sent at `first_rtx_ms`.
fn episode_after_a_hole_from(first_rtx_ms: f64, second_rtx_ms: f64) -> Vec<Stall> {
    const M: u32 = 1460;
    let mut f = Flow::new();
    for i in 0..10 {
        f.data(10.0 + 0.1 * i as f64, 1 + M * i, M as usize);
    }
    f.ack(12.0, 1 + M, 65535);
    for i in 0..8 {
        f.ack(12.1 + 0.1 * i as f64, 1 + M, 65535);
    }
    f.data(first_rtx_ms, 1 + M, M as usize);
    f.data(first_rtx_ms + 0.1, 1 + 10 * M, M as usize);
    f.ack(first_rtx_ms + 1.0, 1 + 10 * M, 65535);
    f.data(second_rtx_ms, 1 + 10 * M, M as usize);
    f.ack(second_rtx_ms + 1.0, 1 + 11 * M, 65535);
    f.data(1500.0, 1 + 11 * M, M as usize);
    f.ack(1501.0, 1 + 12 * M, 65535);
    f.finish()
}

/// Two segments re-sent that the receiver then reports receiving twice (D-SACK blocks
/// below the cumulative ACK, RFC 2883 §4): the originals had arrived, and the run is no
/// loss episode but a spurious retransmission (smb2-peter: three "loss episodes" beside
/// "9 retransmitted segments, all spurious").
#[test]
fn retransmissions_the_receiver_got_twice_are_no_loss_episode() {
    const M: u32 = 1000;
    let run = |dsack: bool| {
        let mut f = Flow::new();
        for i in 0..4 {
            f.data(10.0 + 0.1 * i as f64, 1 + M * i, M as usize);
        }
        // Both first segments re-sent at once (a timer fired early), then the ACK of all
        // four arrives, with D-SACKs for the two copies.
        f.data(300.0, 1, M as usize);
        f.data(300.1, 1 + M, M as usize);
        let ack = |f: &mut Flow, ms: f64, block: (u32, u32)| {
            let mut p = TcpPacket::new(C, S).seq(1).ack(1 + 4 * M).window(65535);
            if dsack {
                p = p.sack(&[block]);
            }
            f.send(ms, Dir::C2S, p);
        };
        ack(&mut f, 301.0, (1, 1 + M));
        ack(&mut f, 301.1, (1 + M, 1 + 2 * M));
        f.data(2000.0, 1 + 4 * M, M as usize);
        f.ack(2001.0, 1 + 5 * M, 65535);
        f.finish()
    };
    let out = run(true);
    assert!(only(&out, StallKind::LossEpisode).is_empty(), "{out:?}");
    let s = only(&out, StallKind::SpuriousRetransmission);
    assert_eq!(s.len(), 1, "{out:?}");
    assert_eq!(s[0].events, 2);
    assert!(
        s[0].sentence.contains("reported receiving every one of them twice"),
        "{}",
        s[0].sentence
    );
    // Without the reports, the same run is a loss episode.
    let out = run(false);
    assert_eq!(only(&out, StallKind::LossEpisode).len(), 1, "{out:?}");
    assert!(only(&out, StallKind::SpuriousRetransmission).is_empty());
}

#[test]
fn a_loss_episode_counts_what_was_delivered_in_it_not_the_hole_fills_jump() {
    // Between the two retransmissions the ACKs reported one segment newly delivered (the
    // hole; the eight above it were reported by the duplicate ACKs before the episode):
    // 1460 B over the 27.2 ms since the last of those (at 12.8 ms; tcp_rate.c's ACK
    // interval runs from the delivery before). The cumulative ACK moved nine segments at
    // 21 ms, and eleven up to the ACK that closed the episode: counting those gave 6.42
    // Mbit/s.
    let out = episode_after_a_hole(40.0);
    let l = only(&out, StallKind::LossEpisode);
    assert_eq!(l.len(), 1, "{out:?}");
    assert!(
        l[0].sentence
            .contains("1.43 KiB delivered during it (429 kbit/s over the 27.2 ms since the ACK before it)"),
        "{}",
        l[0].sentence
    );
    // The same rate as a figure: the direction's capacity estimate is floored by it.
    let r = l[0].delivered_bps.expect("a rated episode");
    assert!((r - 1460.0 * 8.0 / 0.0272).abs() < 1.0, "{r}");
}

#[test]
fn a_loss_episode_is_rated_over_its_reports_interval_and_no_less_than_a_round_trip() {
    // Retransmissions 0.6 ms apart: the episode is shorter than the path's round trip, but
    // the delivery it reported is over the 7.80 ms since the ACK before it.
    let out = episode_after_a_hole(20.6);
    let l = only(&out, StallKind::LossEpisode);
    assert_eq!(l.len(), 1, "{out:?}");
    assert!(
        l[0].sentence
            .contains("(1.50 Mbit/s over the 7.80 ms since the ACK before it)"),
        "{}",
        l[0].sentence
    );
    // Re-sent 0.1 ms after the last report and again 0.6 ms later: an interval of 0.7 ms,
    // less than the round trip, where the ACKs inside say how they were batched, not how
    // fast data was delivered.
    let out = episode_after_a_hole_from(12.9, 13.5);
    let l = only(&out, StallKind::LossEpisode);
    assert_eq!(l.len(), 1, "{out:?}");
    assert!(
        l[0].sentence.contains("less than a round trip: no rate"),
        "{}",
        l[0].sentence
    );
    assert_eq!(l[0].delivered_bps, None);
}

/// A transfer over ECN (`accecn`: the SYNs ask for AccECN instead of RFC 3168): the server's
/// segments `marked` (by index) arrive CE, the client echoes ECE on its ACKs from each mark
/// until the server's next CWR, which the server sets on the data after an echo; the
/// connection then goes quiet for two seconds and an ACK ends any episode.
fn ecn_transfer(marked: &[u32], accecn: bool) -> Vec<Stall> {
    use crate::decode::{Ecn, TcpFlags};
    let (ece, cwr) = (TcpFlags::ECE, TcpFlags::CWR);
    let mut f = Flow {
        conn: Connection::new(0, ep(C), ep(S), true, 1, Timestamp(0)),
        stalls: StallTracker::default(),
    };
    let syn = TcpPacket::new(C, S)
        .flags(TcpFlags::SYN | ece | cwr)
        .seq(0)
        .window(65535)
        .mss(1460);
    f.send(0.0, Dir::C2S, if accecn { syn.ae() } else { syn });
    let answer = if accecn { cwr } else { ece };
    f.send(
        1.0,
        Dir::S2C,
        TcpPacket::new(S, C)
            .flags(TcpFlags::SYN | TcpFlags::ACK | answer)
            .ack(1)
            .seq(0)
            .window(65535)
            .mss(1460),
    );
    f.send(1.1, Dir::C2S, TcpPacket::new(C, S).seq(1).ack(1).window(65535));
    let (mut echo, mut reduce) = (false, false);
    for i in 0..40u32 {
        let t = 10.0 + 10.0 * i as f64;
        let codepoint = if marked.contains(&i) { Ecn::Ce } else { Ecn::Ect0 };
        let flags = TcpFlags::ACK | if reduce { cwr } else { 0 };
        if reduce {
            echo = false;
        }
        let seq = 1 + 1000 * i;
        f.send(
            t,
            Dir::S2C,
            TcpPacket::new(S, C)
                .seq(seq)
                .ack(1)
                .flags(flags)
                .payload_len(1000)
                .ecn(codepoint),
        );
        echo |= codepoint == Ecn::Ce;
        f.send(
            t + 1.0,
            Dir::C2S,
            TcpPacket::new(C, S)
                .seq(1)
                .ack(seq + 1000)
                .flags(TcpFlags::ACK | if echo { ece } else { 0 }),
        );
        reduce = echo;
    }
    f.send(
        2500.0,
        Dir::S2C,
        TcpPacket::new(S, C).seq(40_001).ack(1).payload_len(1000).ecn(Ecn::Ect0),
    );
    f.send(2501.0, Dir::C2S, TcpPacket::new(C, S).seq(1).ack(41_001));
    f.finish()
}

#[test]
fn ecn_marks_make_an_episode_as_retransmissions_do() {
    let out = ecn_transfer(&[3, 10, 20], false);
    let e = only(&out, StallKind::EcnEpisode);
    assert_eq!(e.len(), 1, "{out:?}");
    // Each mark is echoed on one ACK (the CWR follows on the next data) and answered once.
    assert!(
        e[0].sentence.starts_with("a queue marked 3 server segments CE, the client echoed ECE on 3 ACKs, the server reduced its congestion window 3 times (CWR) from +40.0 ms to +220 ms (180 ms)"),
        "{}",
        e[0].sentence
    );
    assert_eq!(e[0].events, 9);
    assert_eq!(e[0].resumed_by, Some(crate::summary::Resumed::Acknowledgment));
    assert!(only(&out, StallKind::LossEpisode).is_empty());
}

#[test]
fn one_mark_is_ordinary_and_accecn_counts_only_the_marks() {
    // One mark, one reduction: ordinary, as one fast retransmit is.
    assert!(only(&ecn_transfer(&[3], false), StallKind::EcnEpisode).is_empty());
    // Under AccECN, ECE and CWR are the ACE counter's bits, not echoes and reductions.
    let out = ecn_transfer(&[3, 10], true);
    let e = only(&out, StallKind::EcnEpisode);
    assert_eq!(e.len(), 1, "{out:?}");
    assert!(
        e[0].sentence.starts_with("a queue marked 2 server segments CE from +"),
        "{}",
        e[0].sentence
    );
}

#[test]
fn a_hole_left_unrepaired_while_sacks_keep_coming_is_no_outage() {
    let mut f = Flow::started();
    // [1001, 2001) is lost; the segments after it keep arriving and the client SACKs each,
    // every 20 ms for 3 s; the server resends the hole only at 3 s (its timer).
    let mut seq = 2001;
    let mut t = 20.0;
    f.data(15.0, 1001, 1000);
    while t < 3000.0 {
        f.data(t, seq, 1000);
        seq += 1000;
        let p = TcpPacket::new(C, S).seq(1).ack(1001).window(65535).sack(&[(2001, seq)]);
        f.send(t + 1.0, Dir::C2S, p);
        t += 20.0;
    }
    f.data(3010.0, 1001, 1000);
    f.ack(3012.0, seq, 65535);
    let out = f.finish();
    assert!(only(&out, StallKind::Outage).is_empty(), "{out:?}");
    let h = only(&out, StallKind::UnrepairedHole);
    assert_eq!(h.len(), 1, "{out:?}");
    assert!(h[0].recovered);
    assert!(h[0].sentence.contains("kept answering"), "{}", h[0].sentence);
    assert!(h[0].sentence.contains("beyond it (SACK)"), "{}", h[0].sentence);
}

#[test]
fn acknowledgments_of_data_the_capture_never_saw_make_a_note_not_an_outage() {
    // Only the client's side is in the capture: its request waits 5 s for an ACK that is
    // never seen, while its own ACKs show the server answering all along.
    let mut f = Flow::new();
    f.send(
        10.0,
        Dir::C2S,
        TcpPacket::new(C, S).seq(1).ack(1).payload_len(100).window(65535),
    );
    for (i, t) in [1000.0, 2000.0, 3000.0, 4000.0, 5000.0].into_iter().enumerate() {
        let ack = 1 + 500 * (i as u32 + 1);
        f.send(t, Dir::C2S, TcpPacket::new(C, S).seq(101).ack(ack).window(65535));
    }
    let out = f.finish();
    assert!(only(&out, StallKind::Outage).is_empty(), "{out:?}");
    assert!(only(&out, StallKind::Lost).is_empty(), "{out:?}");
    let notes = f.stalls.capture_notes(&f.conn);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("capture missed them"), "{}", notes[0]);
}

#[test]
fn a_reset_numbered_from_a_stray_ack_moves_nothing() {
    // RFC 9293 §3.10.7.1: a RST answering an unacceptable ACK takes that ACK's number,
    // which may lie gigabytes away from the sender's data.
    let mut f = Flow::new();
    f.send(20.0, Dir::C2S, TcpPacket::new(C, S).rst().seq(1_800_000_000));
    assert_eq!(f.conn.dir(Dir::C2S).flight(), Some(0));
    let out = f.finish();
    assert!(only(&out, StallKind::Reset).is_empty(), "{out:?}");
}

#[test]
fn zero_window_times_count_from_the_first_packet_as_every_stall() {
    let mut f = Flow::new();
    f.data(10.0, 1, 1000);
    f.ack(10.1, 1001, 0);
    f.ack(500.0, 1001, 8000);
    let out = f.finish();
    let z = only(&out, StallKind::ZeroWindow);
    assert_eq!(z.len(), 1, "{out:?}");
    // The SYN is at 0 ms and the SYN/ACK at 1 ms: the closing is at +10.1 ms from the SYN.
    assert!(z[0].sentence.contains("+10.1 ms"), "{}", z[0].sentence);
}

#[test]
fn a_syn_sent_again_is_time_the_setup_took() {
    let mut f = Flow {
        conn: Connection::new(0, ep(C), ep(S), true, 1, Timestamp(0)),
        stalls: StallTracker::default(),
    };
    for t in [0.0, 1000.0, 3000.0] {
        f.send(t, Dir::C2S, TcpPacket::new(C, S).syn().seq(0).window(65535).mss(1460));
    }
    f.send(
        3001.0,
        Dir::S2C,
        TcpPacket::new(S, C).syn().ack(1).seq(0).window(65535).mss(1460),
    );
    f.send(3002.0, Dir::C2S, TcpPacket::new(C, S).seq(1).ack(1).window(65535));
    let out = f.finish();
    let s = only(&out, StallKind::SynRetransmission);
    assert_eq!(s.len(), 1, "{out:?}");
    assert_eq!(s[0].events, 2);
    assert!((s[0].duration_s - 3.001).abs() < 1e-6, "{}", s[0].duration_s);
    assert!(s[0].sentence.contains("3 times"), "{}", s[0].sentence);
    // One SYN answered at once is no stall.
    assert!(only(&Flow::new().finish(), StallKind::SynRetransmission).is_empty());
}

#[test]
fn a_probe_into_a_zero_window_is_no_keep_alive() {
    // Linux probes a zero window with SND.UNA - 1 and no data (`tcp_xmit_probe_skb`), as
    // a keep-alive looks: into a zero window it is a persist probe.
    let mut f = Flow::new();
    f.data(10.0, 1, 1000);
    f.ack(10.1, 1001, 0);
    for t in [210.0, 610.0, 1410.0, 3010.0] {
        f.send(t, Dir::S2C, TcpPacket::new(S, C).seq(1000).ack(1).window(65535));
        f.ack(t + 0.1, 1001, 0);
    }
    let out = f.finish();
    assert!(only(&out, StallKind::KeepAliveOnly).is_empty(), "{out:?}");
    assert_eq!(only(&out, StallKind::ZeroWindow).len(), 1, "{out:?}");
}

/// New data every 100 ms from 20 ms to 3 s with none of it acknowledged in the capture,
/// and the segment at 5001 re-sent at each of `resend_at` (ms); the next sequence number.
fn send_every_100_ms_without_acks(f: &mut Flow, resend_at: &[f64]) -> u32 {
    let mut seq = 1001;
    let mut t = 20.0;
    while t < 3000.0 {
        f.data(t, seq, 1000);
        seq += 1000;
        t += 100.0;
        if resend_at.contains(&(t - 10.0)) {
            f.data(t - 10.0, 5001, 1000);
        }
    }
    seq
}

#[test]
fn new_data_for_seconds_without_acks_or_a_resend_means_the_capture_lacks_the_acks() {
    // A mid-flow capture that holds none of the receiver's ACKs (EmergeSync): the server
    // sends new data every 100 ms for 3 s; a sender in an outage would have stopped and
    // re-sent its oldest on its timer.
    let mut f = Flow::started();
    let seq = send_every_100_ms_without_acks(&mut f, &[]);
    f.ack(3100.0, seq, 65535);
    let out = f.finish();
    assert!(only(&out, StallKind::Outage).is_empty(), "{out:?}");
    assert!(f.stalls.lacks_acks(Dir::S2C));
    let notes = f.stalls.capture_notes(&f.conn);
    assert!(
        notes.iter().any(|n| n.contains("never re-sent its oldest")),
        "{notes:?}"
    );
}

#[test]
fn a_loss_episode_over_a_wait_the_capture_lacks_the_acks_of_states_no_delivery() {
    // As above, with two segments re-sent during the wait (not the oldest): nothing is
    // acknowledged in the capture meanwhile, yet the ACKs reached the server; what the
    // episode delivered is not known, not zero.
    let mut f = Flow::started();
    let seq = send_every_100_ms_without_acks(&mut f, &[1510.0, 1810.0]);
    f.ack(3100.0, seq, 65535);
    let out = f.finish();
    let e = only(&out, StallKind::LossEpisode);
    assert_eq!(e.len(), 1, "{out:?}");
    assert_eq!(e[0].delivered_bps, None, "{:?}", e[0]);
    assert!(!e[0].sentence.contains("delivered during it"), "{}", e[0].sentence);
    assert!(
        e[0].sentence
            .contains("what it delivered is not known: the capture lacks the client's acknowledgments"),
        "{}",
        e[0].sentence
    );
    let lacking = f.stalls.acks_lacking(&f.conn, Dir::S2C).expect("the waits");
    assert_eq!(lacking.waits.len(), 1, "{lacking:?}");
    assert!((lacking.seconds - 3.08).abs() < 1e-6, "{lacking:?}");
    assert!(lacking.meets(e[0].start, e[0].end));
    // The client's data: nothing the capture lacks.
    assert_eq!(f.stalls.acks_lacking(&f.conn, Dir::C2S), None);
}

#[test]
fn a_loss_episode_with_its_acks_states_its_delivery() {
    // The same re-sendings in a capture that holds the ACKs: a delivery is stated.
    let mut f = Flow::started();
    let mut seq = 1001;
    let mut t = 20.0;
    while t < 3000.0 {
        f.data(t, seq, 1000);
        seq += 1000;
        f.ack(t + 1.0, seq, 65535);
        t += 100.0;
        if t == 1520.0 || t == 1820.0 {
            f.data(t - 10.0, 5001, 1000);
        }
    }
    let out = f.finish();
    assert!(f.stalls.acks_lacking(&f.conn, Dir::S2C).is_none());
    let e = only(&out, StallKind::LossEpisode);
    assert_eq!(e.len(), 1, "{out:?}");
    assert!(e[0].sentence.contains("delivered during it"), "{}", e[0].sentence);
}

#[test]
fn one_answer_then_a_silence_long_enough_for_a_timer_is_the_paths() {
    // P6's 0.8 s outage at the sender: one SACK right after the loss, then nothing until
    // the path came back; the timer fired twice meanwhile.
    let mut f = Flow::started();
    f.data(15.0, 1001, 1000);
    f.data(16.0, 2001, 1000);
    let p = TcpPacket::new(C, S)
        .seq(1)
        .ack(1001)
        .window(65535)
        .sack(&[(2001, 3001)]);
    f.send(18.0, Dir::C2S, p);
    f.data(350.0, 1001, 1000);
    f.data(860.0, 1001, 1000);
    f.ack(900.0, 3001, 65535);
    let out = f.finish();
    assert!(only(&out, StallKind::UnrepairedHole).is_empty(), "{out:?}");
    assert_eq!(only(&out, StallKind::RtoBackoff).len(), 1, "{out:?}");
}

#[test]
fn a_fin_sent_again_says_the_close_waited() {
    // bug-4663: the server's FIN re-sent at 0.3, 0.6, 1.2 s and never acknowledged.
    let mut f = Flow::started();
    f.send(
        20.0,
        Dir::C2S,
        TcpPacket::new(C, S).fin().seq(1).ack(1001).window(65535),
    );
    for t in [21.0, 321.0, 921.0, 2121.0] {
        f.send(t, Dir::S2C, TcpPacket::new(S, C).fin().seq(1001).ack(2).window(65535));
    }
    let out = f.finish();
    let s = only(&out, StallKind::FinRetransmission);
    assert_eq!(s.len(), 1, "{out:?}");
    assert_eq!(s[0].events, 3);
    assert!(!s[0].recovered);
    assert!(s[0].sentence.contains("FIN 4 times"), "{}", s[0].sentence);
    // Sent once and acknowledged: no stall.
    let mut g = Flow::started();
    g.send(
        20.0,
        Dir::S2C,
        TcpPacket::new(S, C).fin().seq(1001).ack(1).window(65535),
    );
    g.send(21.0, Dir::C2S, TcpPacket::new(C, S).seq(1).ack(1002).window(65535));
    assert!(only(&g.finish(), StallKind::FinRetransmission).is_empty());
}

#[test]
fn a_fin_repeated_with_the_same_ack_is_a_retransmission_however_early() {
    // http_no_crlf: the server's FIN acknowledged 0.6 ms on at the capture point, re-sent
    // 168 ms after the first (within the flow's round trip, the same ACK field), then
    // acknowledged again. Not a keep-alive; a FIN retransmission the ACK had preceded.
    let mut f = Flow::started();
    let fin = || TcpPacket::new(S, C).fin().seq(1001).ack(1).window(65535);
    f.send(20.0, Dir::S2C, fin());
    f.send(20.6, Dir::C2S, TcpPacket::new(C, S).seq(1).ack(1002).window(65535));
    f.send(188.0, Dir::S2C, fin());
    f.send(188.5, Dir::C2S, TcpPacket::new(C, S).seq(1).ack(1002).window(65535));
    let out = f.finish();
    assert!(only(&out, StallKind::KeepAliveOnly).is_empty(), "{out:?}");
    let s = only(&out, StallKind::FinRetransmission);
    assert_eq!(s.len(), 1, "{out:?}");
    assert!(s[0].recovered);
    assert!(
        s[0].sentence
            .contains("had passed the capture point 600 µs after the first"),
        "{}",
        s[0].sentence
    );
    // A FIN sent again acknowledging the peer's FIN at once (a simultaneous close) is an
    // answer, not a timeout.
    let mut g = Flow::started();
    g.send(
        20.0,
        Dir::S2C,
        TcpPacket::new(S, C).fin().seq(1001).ack(1).window(65535),
    );
    g.send(
        20.01,
        Dir::C2S,
        TcpPacket::new(C, S).fin().seq(1).ack(1001).window(65535),
    );
    g.send(
        20.02,
        Dir::S2C,
        TcpPacket::new(S, C).fin().seq(1001).ack(2).window(65535),
    );
    assert!(only(&g.finish(), StallKind::FinRetransmission).is_empty());
}

/// A capture begun in a recovery: its first ACK reports data held above a hole (SACK), the
/// repairs fill the holes, and the cumulative ACK passes bytes that arrived before the
/// capture (a SACK lists only the latest blocks, RFC 2018 §3): no rate from that run. The
/// same run with the hole opened in the capture is rated.
#[test]
fn a_recovery_begun_before_the_capture_is_not_rated() {
    const M: u32 = 1000;
    let run = |begun_before: bool| {
        let mut f = Flow::new();
        // A round trip of 20 ms, timed, before the loss.
        for i in 0..20u32 {
            f.data(10.0 + 20.0 * i as f64, 1 + M * i, M as usize);
            f.ack(30.0 + 20.0 * i as f64, 1 + M * (i + 1), 65535);
        }
        let base = 1 + 20 * M;
        if begun_before {
            // What the capture saw of the connection so far is forgotten: a new tracker,
            // as if it began here.
            f.conn = Connection::new(0, ep(C), ep(S), true, 1, Timestamp(7) + Span::from_millis(500));
            f.stalls = StallTracker::default();
        }
        // The receiver holds 39 segments above two 1-segment holes (the data sent before
        // the capture, in the case begun before it, is not in it).
        if !begun_before {
            for i in 0..41u32 {
                if i != 0 && i != 30 {
                    f.data(400.0 + 0.1 * i as f64, base + i * M, M as usize);
                }
            }
        }
        let blocks = [(base + 31 * M, base + 41 * M), (base + M, base + 30 * M)];
        let p = TcpPacket::new(C, S).seq(1).ack(base).window(65535).sack(&blocks);
        f.send(500.0, Dir::C2S, p);
        f.data(501.0, base, M as usize);
        let p = TcpPacket::new(C, S)
            .seq(1)
            .ack(base + 30 * M)
            .window(65535)
            .sack(&blocks[..1]);
        f.send(521.0, Dir::C2S, p);
        f.data(522.0, base + 30 * M, M as usize);
        f.send(
            542.0,
            Dir::C2S,
            TcpPacket::new(C, S).seq(1).ack(base + 41 * M).window(65535),
        );
        f.data(600.0, base + 41 * M, M as usize);
        f.ack(620.0, base + 42 * M, 65535);
        f.data(2000.0, base + 42 * M, M as usize);
        f.ack(2020.0, base + 43 * M, 65535);
        f.finish()
    };
    let out = run(true);
    let l = only(&out, StallKind::LossEpisode);
    assert_eq!(l.len(), 1, "{out:?}");
    assert!(
        l[0].sentence.contains("the recovery began before the capture"),
        "{}",
        l[0].sentence
    );
    assert_eq!(l[0].delivered_bps, None);
    let out = run(false);
    let l = only(&out, StallKind::LossEpisode);
    assert_eq!(l.len(), 1, "{out:?}");
    assert!(l[0].delivered_bps.is_some(), "{}", l[0].sentence);
}
