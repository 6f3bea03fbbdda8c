//! Turns a finished connection's tracker state into the plain-data [`FlowSummary`] fields
//! that do not need the diagnosis: endpoints, handshake, bytes, RTT statistics, counters.

use crate::decode::Seen;
use crate::flow::Dir;
use crate::summary::{
    AcksLacking, Bytes, ClientFrom, DirectionSummary, EndState, FlowSummary, GoodputBasis, GoodputOver,
    HandshakeSummary, InferredScales, Limits, RttStats, StallKind, Vantage, Verdict, WindowScaling,
};
use crate::tcp::rtt::{End, RttSource};
use crate::tcp::{Confidence, ConnState, Connection, InferredShift, SynOptions, WindowScale};
use crate::time::Span;

fn ms(s: Span) -> f64 {
    (s.millis_f64() * 1000.0).round() / 1000.0
}

fn seen_bool<T>(s: Option<SynOptions>, f: impl Fn(&SynOptions) -> Seen<T>) -> Option<bool> {
    match f(&s?) {
        Seen::Present(_) => Some(true),
        Seen::Absent => Some(false),
        Seen::Unknown => None,
    }
}

/// `acks_lacking`, per data direction: the capture lacks the receiver's acknowledgments
/// of it (`stall::StallTracker::lacks_acks`), so its flights tell no window scale.
pub fn handshake(conn: &Connection, acks_lacking: [bool; 2]) -> HandshakeSummary {
    let h = &conn.handshake;
    HandshakeSummary {
        seen: h.seen(),
        client_wscale: h.syn.and_then(|s| s.wscale.present()),
        server_wscale: h.syn_ack.and_then(|s| s.wscale.present()),
        client_mss: h.syn.and_then(|s| s.mss.present()),
        server_mss: h.syn_ack.and_then(|s| s.mss.present()),
        window_scaling: match h.scaling_on() {
            Some(true) => WindowScaling::On,
            Some(false) => WindowScaling::Off,
            None => WindowScaling::Unknown,
        },
        client_sack_permitted: seen_bool(h.syn, |s| s.sack_permitted),
        server_sack_permitted: seen_bool(h.syn_ack, |s| s.sack_permitted),
        client_timestamps: seen_bool(h.syn, |s| s.timestamps),
        server_timestamps: seen_bool(h.syn_ack, |s| s.timestamps),
        syn_retransmissions: h.syn.map_or(0, |s| s.count.saturating_sub(1))
            + h.syn_ack.map_or(0, |s| s.count.saturating_sub(1)),
        inferred: inferred(conn, acks_lacking),
        client_ecn: h.client_ecn(),
        server_ecn: h.server_ecn(),
        ecn: h.ecn(),
    }
}

/// What is known of the scale of one end's windows (those it sends; they are granted to
/// the other direction's data).
struct ScaleEnd {
    /// The scale its windows are read with.
    used: WindowScale,
    /// The behavioural evidence about it.
    evidence: Option<InferredShift>,
    /// The handshake alone does not give it.
    open: bool,
    /// Data segments beyond the handshake's window.
    beyond: u64,
    /// The flights it is inferred from are known: the capture does not lack the end's
    /// acknowledgments of the peer's data.
    followed: bool,
}

impl ScaleEnd {
    fn of(conn: &Connection, d: Dir, acks_lacking: [bool; 2]) -> ScaleEnd {
        let used = conn.scale_of_sender(d);
        let negotiated = conn.negotiated_scale(d);
        let ev = &conn.scale_evidence[d.reverse().index()];
        ScaleEnd {
            used,
            evidence: ev.result(),
            open: used != negotiated || negotiated.shift().is_none(),
            beyond: negotiated.shift().map_or(0, |k| ev.violations_at(k)),
            followed: !acks_lacking[d.reverse().index()],
        }
    }

    /// The shift behaviour gives it, where the handshake does not.
    fn shift(&self) -> Option<u8> {
        if self.open && self.followed {
            self.used.shift().or(self.evidence.map(|r| r.shift))
        } else {
            None
        }
    }

    /// The same, whether or not its flights are known.
    fn shift_from_flights(&self) -> Option<u8> {
        ScaleEnd {
            followed: true,
            ..*self
        }
        .shift()
    }
}

/// The shifts inferred from behaviour, when the handshake does not give a usable scale
/// (missing, cut by the snaplen, or contradicted by what the sender did). None for an end
/// whose peer's data the capture lacks the acknowledgments of (`acks_lacking`, per data
/// direction): a sender keeps its flight within the window it was granted (RFC 9293
/// §3.8.6.2.1), but data sent less the ACKs the capture saw is no flight when ACKs reached
/// the sender that the capture lacks: it grows with every segment sent meanwhile, and the
/// scale it "needs" (RFC 7323 §2.3) measures the capture's gap, not the receiver's shift.
fn inferred(conn: &Connection, acks_lacking: [bool; 2]) -> Option<InferredScales> {
    // The client's windows are granted to the server's data (s2c) and the reverse.
    let client = ScaleEnd::of(conn, Dir::C2S, acks_lacking);
    let server = ScaleEnd::of(conn, Dir::S2C, acks_lacking);
    if !client.open && !server.open {
        return None;
    }
    if client.shift().is_none() && server.shift().is_none() {
        return None;
    }
    // Confidence of what is reported: the evidence's, or "likely" for a scale taken from
    // the end's own SYN offer after the handshake's was contradicted.
    let confidence = |e: &ScaleEnd| match (e.used, e.evidence) {
        (WindowScale::Inferred(k), Some(r)) if r.shift == k => r.confidence,
        (WindowScale::Inferred(_), _) => Confidence::Likely,
        (_, Some(r)) => r.confidence,
        _ => Confidence::Possible,
    };
    let weakest = [&client, &server]
        .into_iter()
        .filter(|e| e.shift().is_some())
        .map(confidence)
        .min()?;
    let describe = |who: &str, e: &ScaleEnd| {
        match (e.used, e.evidence) {
        _ if !e.open => format!("{who}: as the handshake says"),
        _ if !e.followed => format!("{who}: {SCALE_NOT_FOLLOWED}: the capture lacks its acknowledgments of the peer's data"),
        (WindowScale::Inferred(k), Some(r)) if r.shift != k => format!(
            "{who}: shift {k}, the one it offered in its SYN: the peer's data went past the window the capture's handshake implies on {} of {} segments",
            e.beyond, r.events
        ),
        (_, None) => format!("{who}: no window-limited data to judge"),
        (_, Some(r)) => format!(
            "{who}: shift {} ({}; {} of {} data segments at the window edge, {} beyond the window one shift lower)",
            r.shift,
            r.confidence.as_str(),
            r.edge_hits,
            r.events,
            r.violations_below
        ),
    }
    };
    Some(InferredScales {
        client_wscale: client.shift(),
        server_wscale: server.shift(),
        confidence: weakest,
        evidence: format!("{}; {}", describe("client", &client), describe("server", &server)),
    })
}

/// What is said of an end whose scale is not inferred because the capture lacks its
/// acknowledgments.
const SCALE_NOT_FOLLOWED: &str = "no window scale inferred";

/// A note for each end whose window scale behaviour would have given but for the
/// acknowledgments the capture lacks (`acks_lacking`, per data direction).
pub fn scale_not_inferred(conn: &Connection, acks_lacking: [bool; 2]) -> Vec<String> {
    let mut out = Vec::new();
    for (who, peer, d) in [("client", "server", Dir::C2S), ("server", "client", Dir::S2C)] {
        let e = ScaleEnd::of(conn, d, acks_lacking);
        if let (false, Some(k)) = (e.followed, e.shift_from_flights()) {
            out.push(format!(
                "{SCALE_NOT_FOLLOWED} for the {who}: the {peer}'s data less the acknowledgments the capture holds would need shift {k} of its windows, but that is no flight while the capture lacks the {who}'s acknowledgments (a sender keeps within the window the flight its own acknowledgments leave, RFC 9293 §3.8.6.2.1)"
            ));
        }
    }
    out
}

pub fn rtt(conn: &Connection) -> RttStats {
    let r = &conn.rtt;
    let (c, s) = (r.through(End::Client), r.through(End::Server));
    // Window releases are data/ACK pairs the other way round (a bound on their loop).
    let by = |src: RttSource| {
        let bounds = if src == RttSource::DataAck {
            c.bounds + s.bounds
        } else {
            0
        };
        c.by_source[src as usize] + s.by_source[src as usize] + bounds
    };
    let vantage = match (c.least(), s.least()) {
        (Some(a), Some(b)) => {
            // The capture point is near an end when the loop through it is a small part of
            // the whole (a tenth: one-way serialization plus host processing).
            let total = (a + b).nanos().max(1) as f64;
            if (a.nanos() as f64) < 0.1 * total {
                Vantage::Client
            } else if (b.nanos() as f64) < 0.1 * total {
                Vantage::Server
            } else {
                Vantage::Middle
            }
        }
        // One loop measured as negligible (its samples all under the clock's resolution,
        // see `Loop::least`) beside a measured one: the capture is at that end.
        (Some(_), None) if s.measured() => Vantage::Server,
        (None, Some(_)) if c.measured() => Vantage::Client,
        _ => Vantage::Unknown,
    };
    // The law of an RTT summary: min <= median <= p95 <= max. The minimum is the base RTT
    // (the two loops' least samples summed; no end-to-end sample is below it, each being a
    // loop's sample plus the other loop's windowed minimum) and the maximum the largest
    // end-to-end sample, both exact; the quantiles come from 1%-wide histogram buckets, whose
    // representative value can fall a little outside the exact extremes: clamped to them.
    // One loop alone is a bound, not an RTT (see `RttTracker::min_end_to_end`): no
    // end-to-end figure then; the loop's own minimum stays in `via_client_min` /
    // `via_server_min`, and the views say it bounds the RTT from below.
    // What every summary has: each loop's own minimum, the sample counts, the vantage.
    let loops = RttStats {
        via_client_min: c.least().map(ms),
        via_server_min: s.least().map(ms),
        handshake_samples: by(RttSource::Handshake),
        data_ack_samples: by(RttSource::DataAck),
        ts_echo_samples: by(RttSource::TsEcho),
        vantage,
        ..RttStats::default()
    };
    let Some(lo) = r.min_end_to_end() else {
        return loops;
    };
    // Both loops bounded from below only by window releases (no data/ACK pair, echo or
    // handshake timed the path): a base, and no distribution of round trips.
    if r.end_to_end.count() == 0 {
        return RttStats {
            min: Some(ms(lo)),
            ..loops
        };
    }
    let (lo, hi) = (Some(lo), r.end_to_end.max());
    let within = |q: Option<Span>| match (q, lo, hi) {
        (Some(q), Some(lo), Some(hi)) => Some(q.max(lo).min(hi.max(lo))),
        (q, _, _) => q,
    };
    RttStats {
        samples: r.end_to_end.count(),
        min: lo.map(ms),
        median: within(r.end_to_end.quantile(0.5)).map(ms),
        p95: within(r.end_to_end.quantile(0.95)).map(ms),
        max: hi.map(|h| h.max(lo.unwrap_or(h))).map(ms),
        ..loops
    }
}

/// `acks_lacking`: where the capture lacks the receiver's acknowledgments of `d`'s data;
/// then the flight at the capture point (data sent less the ACKs seen) is not known.
pub fn direction(
    conn: &Connection,
    d: Dir,
    max_rwnd: Option<u64>,
    min_rwnd: Option<u64>,
    zero_windows: u64,
    acks_lacking: Option<AcksLacking>,
) -> DirectionSummary {
    let x = conn.dir(d);
    let e = &x.ecn;
    let followed = acks_lacking.is_none();
    DirectionSummary {
        packets: conn.packets[d.index()],
        data_segments: x.data_segments,
        bytes: x.unique_bytes,
        retransmitted_segments: x.retransmitted_segments,
        retransmitted_bytes: x.retransmitted_bytes,
        duplicate_acks: x.duplicate_acks,
        reordered_segments: x.reordered_late_segments.max(x.reordered_segments),
        zero_window_advertisements: zero_windows,
        zero_window_probes: x.zero_window_probes,
        window_full_events: x.window_full_events,
        max_flight_bytes: followed.then_some(x.max_flight),
        max_in_network_bytes: followed.then_some(x.max_in_network),
        max_segment_bytes: x.max_segment,
        max_rwnd_bytes: max_rwnd,
        min_rwnd_bytes: min_rwnd,
        first_data_ts: x.first_data.map(|t| t.secs_f64()),
        first_instant_bytes: x.first_data_len as u64,
        last_data_ts: x.last_data.map(|t| t.secs_f64()),
        acked_bytes: x.acked_bytes,
        ect0_segments: e.ect0,
        ect1_segments: e.ect1,
        ce_segments: e.ce.count,
        first_ce_frame: e.ce.first.map(|m| m.frame),
        first_ce_ts: e.ce.first.map(|m| m.ts.secs_f64()),
        last_ce_ts: e.ce.last.map(|m| m.ts.secs_f64()),
        ece_acks: e.ece.count,
        first_ece_ts: e.ece.first.map(|m| m.ts.secs_f64()),
        last_ece_ts: e.ece.last.map(|m| m.ts.secs_f64()),
        cwr_segments: e.cwr.count,
        first_cwr_ts: e.cwr.first.map(|m| m.ts.secs_f64()),
        last_cwr_ts: e.cwr.last.map(|m| m.ts.secs_f64()),
        capture_duplicates: 0,
        acks_lacking,
    }
}

/// What was in the network is part of what was outstanding (RFC 6675: pipe <= flight,
/// the rest SACKed or presumed lost), at the sender and at the capture point.
pub fn flight_law(f: &FlowSummary) -> Vec<String> {
    let mut out = Vec::new();
    if let (Some(n), Some(o)) = (f.sender_max_in_network_bytes, f.sender_max_flight_bytes) {
        if n > o {
            out.push(format!(
                "the sender's flight in the network {n} B exceeds its flight {o} B"
            ));
        }
    }
    // The receiver's own SYN seen without the option: the sender never got a shift from it
    // and reads its windows as their 16-bit fields (RFC 7323 §2.2; a strip before the
    // capture point reads the same), and keeps its flight within the window it was offered
    // (RFC 9293 §3.8.6.2.1; a window shrunk below the flight leaves that outstanding, never
    // more than the largest offered): the flight reconstructed at the sender cannot exceed
    // the largest window (but for a zero-window probe's byte) unless the capture point saw
    // that much outstanding itself (a sender that broke the window, or ACKs the capture
    // lacks: 206_example_b's server sent 58 KB past the right edge of duplicate ACKs). (A
    // receiver that offered a shift stripped beyond the capture point gets its unscaled
    // windows scaled by the sender: wscale_strip_synack.)
    // Its SYN unseen (a capture begun after it), the option is unknown, not absent: a
    // SYN/ACK carrying one says the SYN did too (RFC 7323 §1.3).
    let (receiver_offered, receiver_syn_seen) = match f.bulk_direction {
        Dir::C2S => (f.handshake.server_wscale, f.handshake.server_sack_permitted.is_some()),
        Dir::S2C => (f.handshake.client_wscale, f.handshake.client_sack_permitted.is_some()),
    };
    if f.handshake.window_scaling != crate::summary::WindowScaling::Unknown
        && receiver_syn_seen
        && receiver_offered.is_none()
    {
        if let (Some(o), Some(w)) = (f.sender_max_flight_bytes, f.max_rwnd_bytes) {
            let seen = f.max_flight_bytes.unwrap_or(0);
            if o > (w + 1).max(seen) {
                out.push(format!(
                    "the sender's flight {o} B exceeds the largest window {w} B with scaling off, and the {seen} B seen"
                ));
            }
        }
    }
    for (name, d) in [("c2s", &f.c2s), ("s2c", &f.s2c)] {
        match (d.max_in_network_bytes, d.max_flight_bytes) {
            (Some(n), Some(o)) if n > o => {
                out.push(format!("{name}: flight in the network {n} B exceeds the flight {o} B"))
            }
            (Some(_), None) | (None, Some(_)) => out.push(format!(
                "{name}: flight in the network {:?} beside the flight {:?}: both are known or neither",
                d.max_in_network_bytes, d.max_flight_bytes
            )),
            _ => {}
        }
    }
    out
}

/// The words of the copies' note a reader (and [`copies_law`]) finds it by.
const COPIES_NOTE: &str = "capture duplicate";

/// The law of the copies' note: a flow says it had capture duplicates exactly when it
/// counts some, with the counts it has (a reader of the note never finds other figures).
pub fn copies_law(f: &FlowSummary) -> Vec<String> {
    let (c, v) = (f.c2s.capture_duplicates, f.s2c.capture_duplicates);
    let notes: Vec<&String> = f.notes.iter().filter(|n| n.contains(COPIES_NOTE)).collect();
    let want = format!("{} record", c + v);
    let counts = format!("(c2s {c}, s2c {v})");
    match (c + v, notes.as_slice()) {
        (0, []) => Vec::new(),
        (0, _) => vec![format!("a note of capture duplicates without any: {notes:?}")],
        (_, [n]) if n.starts_with(&want) && n.contains(&counts) => Vec::new(),
        _ => vec![format!("{} capture duplicates {counts}, notes {notes:?}", c + v)],
    }
}

/// The note on a bulk direction the path reordered more than it lost: its duplicate ACKs
/// (and, with SACK, its holes) were the reordering's, not losses' (RFC 4737 reordering;
/// Linux raises its reordering degree for them and does not reduce its window, RFC 8985).
pub fn reordering_note(summary: &mut FlowSummary) {
    let d = summary.dir(summary.bulk_direction);
    let n = d.reordered_segments;
    if n == 0 || n <= d.retransmitted_segments {
        return;
    }
    let share = n as f64 / d.data_segments.max(1) as f64;
    let dupacks = match d.duplicate_acks {
        0 => String::new(),
        k => format!(", and most of the {k} duplicate ACKs they drew were no sign of loss"),
    };
    let note = format!(
        "{n} data segments ({}) reached the receiver after data sent after them and were never re-sent: the path reordered them (RFC 4737: parallel links, a radio hop's retries){dupacks}; {}",
        crate::units::pct(share),
        match d.retransmitted_segments {
            0 => "none was re-sent".to_string(),
            1 => "one segment was re-sent".to_string(),
            k => format!("{k} segments were re-sent"),
        }
    );
    summary.notes.push(note);
}

/// The capture duplicates the front set aside from this flow (per direction, indexed as
/// `Dir`), and the note that says what they are: a reader of the capture in Wireshark sees
/// every one of them as a retransmission or a duplicate ACK.
pub fn capture_duplicates(summary: &mut FlowSummary, copies: [u64; 2]) {
    summary.c2s.capture_duplicates = copies[Dir::C2S.index()];
    summary.s2c.capture_duplicates = copies[Dir::S2C.index()];
    let n = copies[0] + copies[1];
    if n == 0 {
        return;
    }
    let window = crate::flow::duplicate::WINDOW.nanos() / 1_000_000;
    summary.notes.push(format!(
        "{n} record{s} of this flow {are} {COPIES_NOTE}{s} (c2s {c}, s2c {v}): a datagram the \
         capture recorded again, identical from the IP header on (identification included), within \
         {window} ms where no TCP sends one again, or with a lower TTL (the same datagram one router \
         later, after the router's queue held it); a mirror port, a capture on `any` (of a bridge, or of a router's ingress and egress) \
         records packets twice. They were set aside before the analysis, as \
         `editcap -d` does: no figure of this flow counts them",
        s = if n == 1 { "" } else { "s" },
        are = if n == 1 { "is a" } else { "are" },
        c = copies[Dir::C2S.index()],
        v = copies[Dir::S2C.index()],
    ));
}

/// The bulk direction's goodput (bit/s): what the path delivered, which is never more than
/// the data sent over its span (first to last data segment; the first segment passed at
/// its start, so the rest is what the span carried), nor than the data
/// acknowledged over the span its ACKs show. Before the bottleneck the first is the rate
/// data entered its queue, not what the path carried: a sender filling a deep queue on a
/// slow link sends its last segment long before it is delivered. The second measures up
/// to the last ACK but one (the last may wait for the receiver's delayed-ACK timer, up to
/// 500 ms, RFC 1122 §4.2.3.2, after the data arrived), less the least time from a
/// segment passing the capture point to its ACK passing it back (the loop through the
/// receiver: at the receiver nearly nothing): the receiver had the first byte no sooner
/// than that loop's forward part after it passed here, and the bytes that ACK covers no
/// later than its return part before it came back. (RFC 6349 §6.1: goodput is payload
/// delivered over the transfer's time; tcp_rate.c measures delivery by ACKs the same way.)
///
/// Neither span is taken shorter than the round trip: tcp_rate.c discards a delivery-rate
/// sample whose interval is below the minimum RTT (`tcp_rate_gen`), for data is not
/// delivered, in the sense that its sender learns it arrived, faster than a round trip
/// carries it. A direction whose data all passed within one round trip (one flight: a
/// response of a few segments, 3.6 KiB in a 1 µs burst) was delivered over that round
/// trip, not over the microseconds the hop before the capture took to serialise it. With
/// no round trip timed end to end, data that passed within the one loop the capture does
/// time (or at one instant) came in one flight too, and nothing rates it: 0, which the
/// views print as not measured ([`goodput_law`]).
pub fn goodput(conn: &Connection, bulk: Dir) -> f64 {
    goodput_over(conn, bulk).map_or(0.0, |(bps, _)| bps)
}

/// The goodput and the time it is over (see [`goodput`]); None where it is not measured.
pub fn goodput_over(conn: &Connection, bulk: Dir) -> Option<(f64, GoodputOver)> {
    let d = conn.dir(bulk);
    let first = d.first_data?;
    let span = d.last_data.map_or(Span::ZERO, |b| b - first);
    let round = conn.rtt.min_end_to_end().unwrap_or(Span::ZERO);
    let one_flight = span.nanos() <= 0 || conn.rtt.lone_loop().is_some_and(|(_, l)| span < l);
    if round.nanos() <= 0 && one_flight {
        return None;
    }
    let over = |basis: GoodputBasis, s: Span, bytes: u64| {
        let (basis, s) = if s < round {
            (GoodputBasis::RoundTrip, round)
        } else {
            (basis, s)
        };
        (
            s,
            GoodputOver {
                basis,
                seconds: s.secs_f64(),
                bytes,
            },
        )
    };
    let (mut span, mut data) = over(GoodputBasis::Data, span, d.unique_bytes);
    // Over the data's own span the first segment does not count: it passed at the span's
    // start (at a receiver on a slow link, nine segments 12.1 ms apart on 1 Mbit/s read
    // 1.08 Mbit/s with it). Nor do the others stamped at that instant: a burst the sender
    // released at once (census seed 5555: a sender's capture of two ACK-clocked pairs 25
    // ms apart on a 1 Mbit/s link read three segments over 25 ms, 1.40 Mbit/s). Over a
    // round trip every byte does.
    // All of it in that segment (the rest re-sendings of it) is one flight, delivered over
    // a round trip, or not rated where none is timed.
    if data.basis == GoodputBasis::Data {
        data.bytes = d.unique_bytes.saturating_sub(d.first_data_len as u64);
        if data.bytes == 0 && d.unique_bytes > 0 {
            if round.nanos() <= 0 {
                return None;
            }
            (span, data) = over(GoodputBasis::RoundTrip, Span::ZERO, d.unique_bytes);
        }
    }
    let sent = data.bytes as f64 * 8.0 / span.secs_f64();
    let turnaround = conn
        .rtt
        .through(Connection::sender_end(bulk.reverse()))
        .least()
        .unwrap_or(Span::ZERO);
    match d.new_acks[0] {
        // (An ACK but one that covered none of the data seen sent says nothing of its pace:
        // census seed 4242, a capture begun in a recovery whose repairs' ACKs came first.)
        Some((at, acked)) if at - first > turnaround && acked > 0 => {
            // Data sent on for longer than a retransmission timer after the last ACK that
            // moved, with none of it acknowledged: the transfer went on without delivering
            // (a hole never repaired, a path gone dark, a reset): its time is the transfer's
            // too (RFC 6349 §6.1), and what was delivered is over all of it
            // (client_1_tcp_only: 1.52 Mbit/s over the ACKs' 3.1 s beside 571 kbit/s over
            // the connection, with 724 KiB unacknowledged at the reset 3.5 s later).
            let last_ack = d.new_acks[1].map_or(at, |(t, _)| t);
            let end = match d.last_data {
                Some(last) if last - last_ack > conn.rtt.rto_bound() && d.flight().is_some_and(|f| f > 0) => last,
                _ => at,
            };
            // (`new_acks` leaves out what the receiver reported holding before the first
            // data passed: census seed 2222, a capture begun in a recovery whose first ACK
            // already SACKed 4.2 kB sent before it, read 53 kB over 410 ms, 1.04 Mbit/s on
            // a 1 Mbit/s link; without them 956 kbit/s.)
            let (time, delivery) = over(GoodputBasis::Delivery, end - first - turnaround, acked);
            let mut delivered = (acked as f64 * 8.0 / time.secs_f64(), delivery);
            // Nor is it faster than its ACKs came back: n ACKs bound n - 1 intervals, so
            // the first ACK's bytes arrived at the interval's start, as the first data
            // segment passes at the data span's (tcp_rate.c's `ack_elapsed` runs from the
            // delivery before the first segment's sending). The span from the first data
            // less the least loop assumes the first ACK answers the first data; where it
            // answers a copy sent before the capture (one begun in a recovery, its
            // re-sendings acknowledged sooner than a round trip), that span starts too late:
            // census seed 2222, 32.4 kB over 256 ms, 1.04 Mbit/s on a 1 Mbit/s link, where
            // the ACKs after the first brought 30.3 kB over those 256 ms. Over a round trip
            // or more only: below that the rule above counts every byte over a round trip.
            if let Some((t1, at_first)) = d.first_seen_ack {
                if t1 < at && end - t1 >= round && acked > at_first {
                    let bytes = acked - at_first;
                    let (time, over_acks) = over(GoodputBasis::Delivery, end - t1, bytes);
                    let bps = bytes as f64 * 8.0 / time.secs_f64();
                    if bps < delivered.0 {
                        delivered = (bps, over_acks);
                    }
                }
            }
            Some(if delivered.0 < sent { delivered } else { (sent, data) })
        }
        _ => Some((sent, data)),
    }
}

/// A bulk direction whose data no ACK in the capture covered, and whose stalls say none
/// came (the connection lost: retransmissions backing off unanswered to the end, RFC 6298
/// §5.5; or nothing acknowledged in the last of the capture, an outage): it delivered
/// nothing the capture shows. Its goodput is then 0 delivered, not the rate it was sent at
/// (chrissanders tcp_retransmissions: one segment sent six times over 9.2 s, never
/// acknowledged, read "goodput 563 bit/s"). Without such a stall, data with no ACK seen
/// is a capture that lacks the ACKs (one-sided, asymmetric routing), and its rate stands.
/// Nor did a direction deliver anything the capture shows whose bytes are known only from
/// the sequence numbers (a FIN beyond them, RFC 9293 §3.4) with none of its data segments
/// seen and none acknowledged (a receiver-side capture of an upload whose 7000 bytes were
/// all lost before it, then its FIN: "goodput not measured, its data came at one instant").
pub fn mark_undelivered(f: &mut FlowSummary) {
    let bulk = f.bulk_direction;
    let d = f.dir(bulk);
    if d.bytes == 0 || d.acked_bytes > 0 {
        return;
    }
    let unanswered = d.data_segments == 0
        || f.stalls.iter().any(|s| {
            s.direction == Some(bulk) && (s.kind == StallKind::Lost || (s.kind == StallKind::Outage && !s.recovered))
        });
    if unanswered {
        f.goodput_bps = 0.0;
        f.nothing_delivered = true;
        f.goodput_over = None;
    }
}

/// The summary without diagnosis: verdict "undetermined", no limits, no bottleneck.
/// `acks_lacking`, per data direction: where the capture lacks the receiver's
/// acknowledgments of it (`stall::StallTracker::acks_lacking`).
pub fn base(
    conn: &Connection,
    capture: &str,
    windows: &WindowStats,
    acks_lacking: [Option<AcksLacking>; 2],
) -> FlowSummary {
    let bulk = bulk_direction(conn);
    let d = conn.dir(bulk);
    let lacking = [acks_lacking[0].is_some(), acks_lacking[1].is_some()];
    let [c2s_lacking, s2c_lacking] = acks_lacking;
    let bytes = Bytes {
        c2s: conn.dir(Dir::C2S).unique_bytes,
        s2c: conn.dir(Dir::S2C).unique_bytes,
    };
    let goodput = goodput_over(conn, bulk);
    FlowSummary {
        id: conn.id,
        capture: capture.to_string(),
        client: conn.client.to_string(),
        server: conn.server.to_string(),
        client_from: if conn.client_by_syn {
            ClientFrom::Syn
        } else {
            ClientFrom::Port
        },
        first_frame: conn.first_frame,
        start_ts: conn.first_ts.secs_f64(),
        end_ts: conn.last_ts.secs_f64(),
        duration_s: (conn.last_ts - conn.first_ts).secs_f64(),
        packets: conn.packets.iter().sum(),
        handshake: handshake(conn, lacking),
        bulk_direction: bulk,
        bytes,
        goodput_bps: goodput.map_or(0.0, |(bps, _)| bps),
        nothing_delivered: false,
        goodput_over: goodput.map(|(_, over)| over),
        rtt_ms: rtt(conn),
        max_flight_bytes: (!lacking[bulk.index()]).then_some(d.max_flight),
        sender_max_flight_bytes: None,
        sender_max_in_network_bytes: None,
        idle_turns: None,
        sender_transit_bytes: None,
        sender_near_loop_ms: None,
        max_rwnd_bytes: windows.max_rwnd(conn, bulk, lacking),
        retransmitted_segments: d.retransmitted_segments,
        bottleneck_bps: None,
        bottleneck_method: None,
        bdp_bytes: None,
        bdp_segment_ms: None,
        bdp_upper_bound: false,
        capacity: None,
        queue: None,
        limits: None::<Limits>,
        verdict: Verdict::Undetermined,
        periods: Vec::new(),
        evidence: Vec::new(),
        middlebox: Vec::new(),
        advice: Vec::new(),
        advice_items: Vec::new(),
        notes: Vec::new(),
        end_state: match conn.state {
            ConnState::Closed(_) if conn.rst_seen => EndState::Reset,
            ConnState::Closed(_) => EndState::Closed,
            ConnState::Open => EndState::Open,
        },
        stalls: Vec::new(),
        c2s: direction(
            conn,
            Dir::C2S,
            windows.max_rwnd(conn, Dir::C2S, lacking),
            windows.min[0],
            windows.zero[0],
            c2s_lacking,
        ),
        s2c: direction(
            conn,
            Dir::S2C,
            windows.max_rwnd(conn, Dir::S2C, lacking),
            windows.min[1],
            windows.zero[1],
            s2c_lacking,
        ),
    }
}

/// The direction that carried more payload (c2s on a tie).
pub fn bulk_direction(conn: &Connection) -> Dir {
    if conn.dir(Dir::S2C).unique_bytes > conn.dir(Dir::C2S).unique_bytes {
        Dir::S2C
    } else {
        Dir::C2S
    }
}

/// Extremes of the windows granted to each direction's sender (indexed by data
/// direction), gathered per segment by the diagnosis accumulator.
#[derive(Clone, Copy, Debug, Default)]
pub struct WindowStats {
    pub max: [Option<u64>; 2],
    pub min: [Option<u64>; 2],
    pub zero: [u64; 2],
    /// Largest raw window field, for figures once a shift is inferred at the end.
    pub max_raw: [u16; 2],
    /// Whether any segment advertised a window for the direction's data.
    pub seen: [bool; 2],
    /// Whether a non-zero window was advertised while its scale was unknown: the largest
    /// in bytes is then not among those recorded (a zero window is zero bytes whatever the
    /// scale, and a capture of a zero-window stall without its handshake recorded only
    /// those: tcp_zerowindowrecovery printed "max rwnd 0 B" beside a reopening to raw
    /// 64240).
    pub unscaled: [bool; 2],
}

impl WindowStats {
    /// Largest window granted to `data`'s sender, in bytes: as recorded, or from the
    /// largest raw field under a scale that was only inferred (or corrected) later. A scale
    /// inferred from `data`'s flights where the capture lacks its receiver's
    /// acknowledgments (`acks_lacking`, per data direction) is none: the handshake's, if
    /// it gives one, else the window is not known.
    pub fn max_rwnd(&self, conn: &Connection, data: Dir, acks_lacking: [bool; 2]) -> Option<u64> {
        let i = data.index();
        // No advertisement seen (a peer that only reset, or none in the capture): unknown,
        // not a window of 0 B.
        if !self.seen[i] {
            return None;
        }
        let (now, then) = (
            conn.scale_of_sender(data.reverse()),
            conn.negotiated_scale(data.reverse()),
        );
        let from_raw = |scale: WindowScale| scale.shift().map(|k| (self.max_raw[i] as u64) << k);
        match (now, then) {
            (WindowScale::Inferred(_), then) if acks_lacking[i] => from_raw(then),
            (now, then) if now != then => from_raw(now),
            _ => self.max[i].filter(|_| !self.unscaled[i]).or(from_raw(now)),
        }
    }

    /// A segment going `dir` advertised `bytes` for the other direction's data.
    pub fn on_advert(&mut self, dir: Dir, bytes: Option<u64>, raw: u16, zero: bool) {
        let i = dir.reverse().index();
        self.seen[i] = true;
        self.max_raw[i] = self.max_raw[i].max(raw);
        self.unscaled[i] |= bytes.is_none() && raw != 0;
        if let Some(b) = bytes {
            self.max[i] = Some(self.max[i].map_or(b, |m| m.max(b)));
            self.min[i] = Some(self.min[i].map_or(b, |m| m.min(b)));
        }
        if zero {
            self.zero[i] += 1;
        }
    }
}

/// The law of an RTT summary (as `rtt` writes it): min <= median <= p95 <= max, every one
/// present exactly when there are samples (the minimum also from loop bounds alone), and
/// none zero or below (an RTT is a physical delay; a zero means the timestamps could not resolve it, and would print as "0").
pub fn rtt_law(f: &FlowSummary) -> Vec<String> {
    let r = &f.rtt_ms;
    let all = [r.min, r.median, r.p95, r.max];
    let mut out = Vec::new();
    if r.samples == 0 {
        // A base from loop bounds alone (window releases) has no distribution; a base needs
        // both loops.
        let loops = r.via_client_min.is_some() || r.via_server_min.is_some();
        if all[1..].iter().any(|v| v.is_some()) || (r.min.is_some() && !loops) {
            out.push(format!("RTT figures without samples: {all:?}"));
        }
        if r.min.is_some_and(|m| m <= 0.0) {
            out.push(format!("RTT minimum {:?} ms is not a delay", r.min));
        }
        return out;
    }
    let Some(v) = all.iter().copied().collect::<Option<Vec<f64>>>() else {
        out.push(format!("{} samples but RTT figures missing: {all:?}", r.samples));
        return out;
    };
    if !(v[0] <= v[1] && v[1] <= v[2] && v[2] <= v[3]) {
        out.push(format!(
            "RTT summary out of order: min {} median {} p95 {} max {}",
            v[0], v[1], v[2], v[3]
        ));
    }
    if v[0] <= 0.0 {
        out.push(format!("RTT minimum {} ms is not a delay", v[0]));
    }
    out
}

/// The law of goodput ([`goodput`]): never more than the bulk direction's data over the
/// least round trip (no delivery rate is measured over less than one, tcp_rate.c), and
/// measured, not zero, for data sent where a round trip is timed.
pub fn goodput_law(f: &FlowSummary) -> Vec<String> {
    let bytes = f.dir(f.bulk_direction).bytes;
    let mut out = Vec::new();
    let d = f.dir(f.bulk_direction);
    if f.nothing_delivered && (d.acked_bytes > 0 || f.goodput_bps != 0.0) {
        out.push(format!(
            "nothing delivered said of the {} with {} bytes acknowledged and goodput {} bit/s",
            f.bulk_direction, d.acked_bytes, f.goodput_bps
        ));
    }
    // The time printed beside the goodput is the time it was divided by.
    if let Some(o) = f.goodput_over {
        let carried = f.goodput_bps * o.seconds / 8.0;
        // Over one round trip the rate is the data's or the delivery's, whichever was less.
        let most = bytes.max(d.acked_bytes) as f64 * (1.0 + 1e-6);
        let wrong = match o.basis {
            GoodputBasis::Delivery => carried > d.acked_bytes as f64 * (1.0 + 1e-6),
            // The data's own span counts what passed after its first instant: all it
            // carried less the bytes stamped then.
            GoodputBasis::Data => {
                (carried - o.bytes as f64).abs() > 1e-6 * bytes as f64
                    || o.bytes > bytes
                    || o.bytes + d.first_instant_bytes < bytes
            }
            GoodputBasis::RoundTrip => carried > most,
        };
        if wrong {
            out.push(format!(
                "goodput {} bit/s over {} s of {} carries {carried} bytes, against {bytes} sent and {} acknowledged",
                f.goodput_bps, o.seconds, o.basis, d.acked_bytes
            ));
        }
    }
    let Some(rtt) = f.rtt_ms.min.filter(|&m| m > 0.0) else {
        return out;
    };
    // The minimum is written to the microsecond: half of one is its rounding.
    let most = bytes as f64 * 8.0 / ((rtt - 0.0005).max(1e-6) / 1e3);
    if f.goodput_bps > most * (1.0 + 1e-9) {
        out.push(format!(
            "goodput {} bit/s above the {bytes} bytes of the {} over the least round trip ({rtt} ms)",
            f.goodput_bps, f.bulk_direction
        ));
    }
    if bytes > 0 && f.goodput_bps <= 0.0 && !f.nothing_delivered {
        out.push(format!(
            "goodput not measured for {bytes} bytes of the {} though a round trip ({rtt} ms) is timed",
            f.bulk_direction
        ));
    }
    out
}

/// The law of window scales: a scale the handshake negotiated is the scale (RFC 7323 §2.2:
/// both SYNs carried the option, or one lacked it and scaling is off; a SYN/ACK carries it
/// only in answer to a SYN that did); inference only for an end the handshake leaves
/// unknown; and windows whose scale is unknown are never shown as bytes.
pub fn scale_law(f: &FlowSummary) -> Vec<String> {
    let h = &f.handshake;
    let mut out = Vec::new();
    // Whether the handshake fixes an end's shift.
    let fixed = |own: Option<u8>| match h.window_scaling {
        WindowScaling::Off => true,
        WindowScaling::On => own.is_some(),
        WindowScaling::Unknown => false,
    };
    let (client_fixed, server_fixed) = (fixed(h.client_wscale), fixed(h.server_wscale));
    if let Some(i) = &h.inferred {
        if (client_fixed && i.client_wscale.is_some()) || (server_fixed && i.server_wscale.is_some()) {
            out.push(format!(
                "a scale the handshake fixed (scaling {}, {:?}/{:?}) was overridden by inference: {i:?}",
                h.window_scaling, h.client_wscale, h.server_wscale
            ));
        }
    }
    // The receiver of the bulk data advertises the windows in `max_rwnd_bytes`.
    let (receiver_fixed, receiver_inferred) = match f.bulk_direction {
        Dir::S2C => (client_fixed, h.inferred.as_ref().and_then(|i| i.client_wscale)),
        Dir::C2S => (server_fixed, h.inferred.as_ref().and_then(|i| i.server_wscale)),
    };
    // A SYN's own window is never scaled: up to 64 KiB can be bytes with the scale unknown.
    let beyond_syn = f.max_rwnd_bytes.is_some_and(|w| w > 65_535);
    if !receiver_fixed && receiver_inferred.is_none() && beyond_syn {
        out.push(format!(
            "max rwnd {} B shown although the receiver's scale is unknown",
            f.max_rwnd_bytes.unwrap_or(0)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode;
    use crate::flow::Endpoint;
    use crate::testkit::TcpPacket;
    use crate::time::Timestamp;

    const C: &str = "10.0.0.1:40000";
    const S: &str = "10.0.0.2:443";

    fn ep(s: &str) -> Endpoint {
        let a: std::net::SocketAddr = s.parse().unwrap();
        Endpoint {
            addr: a.ip(),
            port: a.port(),
        }
    }

    fn feed(conn: &mut Connection, micros: f64, dir: Dir, p: TcpPacket) {
        let (link, bytes) = p.build();
        let seg = decode(link, &bytes).unwrap();
        let ts = Timestamp(0) + Span::from_nanos((micros * 1e3) as i64);
        conn.track(&seg, dir, 0, ts);
    }

    /// A direction whose receiver never advertised a window (only the client's SYN, as a
    /// scan's refused attempt) has an unknown window, not one of 0 B; an advertised zero
    /// is a zero.
    #[test]
    fn a_window_never_advertised_is_unknown_not_zero() {
        let mut conn = Connection::new(0, ep(C), ep(S), true, 1, Timestamp(0));
        let syn = TcpPacket::new(C, S).syn().seq(0).window(1024);
        feed(&mut conn, 0.0, Dir::C2S, syn);
        let mut w = WindowStats::default();
        w.on_advert(Dir::C2S, Some(1024), 1024, false);
        assert_eq!(w.max_rwnd(&conn, Dir::C2S, [false; 2]), None);
        assert_eq!(w.max_rwnd(&conn, Dir::S2C, [false; 2]), Some(1024));
        w.on_advert(Dir::S2C, Some(0), 0, true);
        assert_eq!(w.max_rwnd(&conn, Dir::C2S, [false; 2]), Some(0));
    }

    /// A response of four segments at the client, 1 µs apart, after a 30 ms handshake;
    /// the client ACKs them at once. With `handshake` false the capture starts after it.
    fn one_flight(handshake: bool) -> Connection {
        let mut conn = Connection::new(0, ep(C), ep(S), true, 1, Timestamp(0));
        if handshake {
            feed(
                &mut conn,
                0.0,
                Dir::C2S,
                TcpPacket::new(C, S).syn().seq(0).window(65535),
            );
            feed(
                &mut conn,
                30_000.0,
                Dir::S2C,
                TcpPacket::new(S, C).syn().ack(1).seq(0).window(65535),
            );
            feed(
                &mut conn,
                30_050.0,
                Dir::C2S,
                TcpPacket::new(C, S).seq(1).ack(1).window(65535),
            );
        }
        for k in 0..4u32 {
            let p = TcpPacket::new(S, C)
                .seq(1 + 1000 * k)
                .ack(1)
                .payload_len(1000)
                .window(65535);
            feed(&mut conn, 60_000.0 + k as f64, Dir::S2C, p);
        }
        feed(
            &mut conn,
            60_020.0,
            Dir::C2S,
            TcpPacket::new(C, S).seq(1).ack(4001).window(65535),
        );
        conn
    }

    /// The flight law's window bound holds only where the receiver's own SYN was seen
    /// without the option (its windows then read unscaled); a SYN the capture lacks says
    /// nothing of its option, and beside a SYN/ACK that carried one (scaling on) the shift
    /// is inferred, not known.
    #[test]
    fn the_flight_bound_by_the_window_needs_the_receivers_syn() {
        let f = base(&one_flight(true), "t", &WindowStats::default(), [None, None]);
        let over = FlowSummary {
            bulk_direction: Dir::S2C,
            sender_max_flight_bytes: Some(17_048),
            max_flight_bytes: Some(1048),
            max_rwnd_bytes: Some(16_000),
            ..f.clone()
        };
        assert_eq!(over.handshake.client_sack_permitted, Some(false), "the SYN was seen");
        assert_eq!(over.handshake.client_wscale, None);
        assert_eq!(flight_law(&over).len(), 1, "{:?}", flight_law(&over));
        let unseen = FlowSummary {
            handshake: HandshakeSummary {
                client_sack_permitted: None,
                client_timestamps: None,
                client_mss: None,
                window_scaling: crate::summary::WindowScaling::On,
                ..over.handshake.clone()
            },
            ..over
        };
        assert_eq!(flight_law(&unseen), Vec::<String>::new());
    }

    /// tcp_rate.c rates no delivery over less than the minimum RTT: 4000 bytes that passed
    /// in 3 µs were delivered over the 30 ms round trip, not at 10 Gbit/s.
    #[test]
    fn one_flight_is_rated_over_the_round_trip_not_its_burst() {
        let conn = one_flight(true);
        let rtt = conn.rtt.min_end_to_end().unwrap().secs_f64();
        assert!((rtt - 0.030).abs() < 1e-3, "{rtt}");
        let g = goodput(&conn, Dir::S2C);
        assert!(g > 0.0 && g <= 4000.0 * 8.0 / rtt * (1.0 + 1e-9), "{g}");
        let f = base(&conn, "t", &WindowStats::default(), [None, None]);
        assert_eq!(goodput_law(&f), Vec::<String>::new());
        // The law catches what the burst's span gave before.
        let burst = FlowSummary {
            goodput_bps: 4000.0 * 8.0 / 3e-6,
            goodput_over: None,
            ..f.clone()
        };
        assert_eq!(goodput_law(&burst).len(), 1, "{:?}", goodput_law(&burst));
        // The time printed beside the rate is the time it was divided by.
        let over = f.goodput_over.expect("measured");
        assert_eq!(over.basis, GoodputBasis::RoundTrip);
        let mislabelled = FlowSummary {
            goodput_over: Some(GoodputOver {
                seconds: 2.0 * over.seconds,
                ..over
            }),
            ..f.clone()
        };
        assert!(
            goodput_law(&mislabelled)[0].contains("carries"),
            "{:?}",
            goodput_law(&mislabelled)
        );
        let unmeasured = FlowSummary {
            goodput_bps: 0.0,
            goodput_over: None,
            ..f
        };
        assert!(goodput_law(&unmeasured)[0].contains("not measured"));
    }

    /// The goodput of `conn`'s server-to-client data: measured over `basis`, `bytes` over
    /// `seconds`, and within its law. Returns the time it is over and the summary.
    fn goodput_is(conn: &Connection, basis: GoodputBasis, bytes: u64, seconds: f64) -> (GoodputOver, FlowSummary) {
        let (g, over) = goodput_over(conn, Dir::S2C).expect("measured");
        assert_eq!(over.basis, basis);
        assert_eq!(over.bytes, bytes);
        let want = bytes as f64 * 8.0 / seconds;
        assert!((g - want).abs() / want < 1e-9, "{g} against {want}");
        let f = base(conn, "t", &WindowStats::default(), [None, None]);
        assert_eq!(goodput_law(&f), Vec::<String>::new());
        (over, f)
    }

    /// A capture at a sender whose clock stamps a burst at one instant (a 1 ms clock): two
    /// pairs of 1460-byte segments 25 ms apart, each pair released by an ACK. Over the
    /// data's 25 ms span the pair stamped at its start passed at that instant, as a lone
    /// first segment does: 2920 B over 25 ms (934 kbit/s), not three segments (1.40 Mbit/s
    /// on a 1 Mbit/s link, census seed 5555).
    #[test]
    fn a_burst_stamped_at_the_first_instant_passed_at_the_spans_start() {
        let mut conn = Connection::new(0, ep(C), ep(S), true, 1, Timestamp(0));
        for (k, ms) in [(0u32, 24.0), (1, 24.0), (2, 49.0), (3, 49.0)] {
            let p = TcpPacket::new(S, C)
                .seq(1 + 1460 * k)
                .ack(1)
                .payload_len(1460)
                .window(65535);
            feed(&mut conn, ms * 1000.0, Dir::S2C, p);
        }
        let (over, f) = goodput_is(&conn, GoodputBasis::Data, 2920, 0.025);
        // The law knows the first instant's bytes: what the figure leaves out is those.
        assert_eq!(f.s2c.first_instant_bytes, 2920);
        let less = FlowSummary {
            goodput_bps: 1460.0 * 8.0 / 0.025,
            goodput_over: Some(GoodputOver { bytes: 1460, ..over }),
            ..f
        };
        assert_eq!(goodput_law(&less).len(), 1, "{:?}", goodput_law(&less));
    }

    /// A capture at a sender begun in a recovery (census seed 2222): its first ACKs SACK
    /// 4200 B sent before it, then the sender re-sends the four segments of the hole below
    /// (1400 B each) and its FIN after 53 200 B, while SACKs of data sent before the capture
    /// grow to the FIN. What the receiver had reported holding when the first data passed
    /// was delivered before the span: 49 000 B over the 410 ms from the first data to the
    /// ACK but one (956 kbit/s), not 53 200 B (1.04 Mbit/s on a 1 Mbit/s link).
    #[test]
    fn data_reported_held_before_the_first_data_passed_is_not_in_its_delivery() {
        let mut conn = Connection::new(0, ep(C), ep(S), true, 1, Timestamp(0));
        let ack = |ms: f64, ack: u32, high: u32, conn: &mut Connection| {
            let mut p = TcpPacket::new(C, S).seq(1).ack(ack).window(65535);
            if high > ack.max(5601) {
                p = p.sack(&[(5601, high)]);
            }
            feed(conn, ms * 1000.0, Dir::C2S, p);
        };
        let data = |ms: f64, seq: u32, len: u32, conn: &mut Connection| {
            let mut p = TcpPacket::new(S, C)
                .seq(seq)
                .ack(1)
                .payload_len(len as usize)
                .window(65535);
            if len == 0 {
                p = p.fin();
            }
            feed(conn, ms * 1000.0, Dir::S2C, p);
        };
        for (k, ms) in [0.0, 10.0, 20.0].into_iter().enumerate() {
            ack(ms, 1, 7001 + 1400 * k as u32, &mut conn);
        }
        for (k, ms) in [20.0, 30.0, 40.0, 60.0].into_iter().enumerate() {
            data(ms, 1 + 1400 * k as u32, 1400, &mut conn);
        }
        data(70.0, 53_201, 0, &mut conn);
        for k in 3..=33u32 {
            ack(20.0 + 12.0 * k as f64, 1, (7001 + 1400 * k).min(53_201), &mut conn);
        }
        for (ms, una) in [
            (400.0, 1401),
            (410.0, 2801),
            (420.0, 4201),
            (430.0, 53_201),
            (430.5, 53_202),
        ] {
            ack(ms, una, 53_201, &mut conn);
        }
        goodput_is(&conn, GoodputBasis::Delivery, 49_000, 0.410);
    }

    /// A capture at a sender begun mid-transfer, its first data re-sending what was sent
    /// before it: the first ACK comes 6 ms after that data (it answers the first copies,
    /// and is the least loop timed), then ACKs of 2800 B every 30 ms. From the first data
    /// less that loop, the span starts at the first ACK yet counts its bytes: 19 600 B over
    /// 180 ms, 871 kbit/s. Over the ACKs' own span the first ACK's bytes arrived at its
    /// start, as the first data segment passes at the data's: 2800 B every 30 ms, 747
    /// kbit/s (census seed 2222: 1.04 Mbit/s on a 1 Mbit/s link, 949 kbit/s over its ACKs).
    #[test]
    fn the_delivery_is_no_faster_than_its_acks_came_back() {
        let mut conn = Connection::new(0, ep(C), ep(S), true, 1, Timestamp(0));
        let data = |ms: f64, k: u32, conn: &mut Connection| {
            let p = TcpPacket::new(S, C)
                .seq(1 + 1400 * k)
                .ack(1)
                .payload_len(1400)
                .window(65535);
            feed(conn, ms * 1000.0, Dir::S2C, p);
        };
        let ack = |ms: f64, una: u32, conn: &mut Connection| {
            let p = TcpPacket::new(C, S).seq(1).ack(una).window(65535);
            feed(conn, ms * 1000.0, Dir::C2S, p);
        };
        // Two segments, acknowledged 6 ms later (the first copies' ACK).
        data(0.0, 0, &mut conn);
        data(0.01, 1, &mut conn);
        ack(6.0, 2801, &mut conn);
        // Then every ACK releases two more, acknowledged 30 ms later.
        for r in 1..8u32 {
            let t = 6.0 + 30.0 * (r - 1) as f64;
            data(t + 0.01, 2 * r, &mut conn);
            data(t + 0.02, 2 * r + 1, &mut conn);
            ack(t + 30.0, 1 + 2800 * (r + 1), &mut conn);
        }
        // The ACK but one: 2800 x 7 B at 186 ms; the first ACK: 2800 B at 6 ms.
        goodput_is(&conn, GoodputBasis::Delivery, 2800 * 6, 0.180);
    }

    /// Data sent on for longer than a retransmission timer after the last ACK that moved,
    /// never acknowledged: the goodput is what was delivered over the whole transfer, not
    /// over the ACKs' span alone (client_1_tcp_only: 1.52 Mbit/s over 3.1 s of ACKs
    /// beside a reset 3.5 s later with 724 KiB unacknowledged).
    #[test]
    fn data_sent_on_unacknowledged_past_a_timer_counts_in_the_goodputs_time() {
        let run = |until_ms: f64| {
            let mut conn = one_flight(true);
            // 10 more segments from 60.1 ms, then re-sends of the first of them until
            // `until_ms`, none acknowledged.
            for k in 4..14u32 {
                let p = TcpPacket::new(S, C)
                    .seq(1 + 1000 * k)
                    .ack(1)
                    .payload_len(1000)
                    .window(65535);
                feed(&mut conn, 60_100.0 + k as f64, Dir::S2C, p);
            }
            // The last ACK that moves, at 100 ms.
            feed(
                &mut conn,
                100_000.0,
                Dir::C2S,
                TcpPacket::new(C, S).seq(1).ack(5001).window(65535),
            );
            let mut t = 400.0;
            while t <= until_ms {
                let p = TcpPacket::new(S, C).seq(4001).ack(1).payload_len(1000).window(65535);
                feed(&mut conn, t * 1000.0, Dir::S2C, p);
                t *= 2.0;
            }
            goodput(&conn, Dir::S2C)
        };
        // Re-sent until 400 ms, within the timer's one-second floor of the last ACK: the
        // ACKs' span stands, and the data sent over its span is the lower figure (14000 B
        // less the first segment, which passed at the span's start, over 340 ms). Until 3.2 s: the bytes acknowledged by the ACK but one (4000: the
        // last may wait for a delayed-ACK timer, see `goodput`), over the 3.14 s since the
        // first data.
        let short = run(400.0);
        let want = 13_000.0 * 8.0 / 0.340;
        assert!((short - want).abs() / want < 0.01, "{short} against {want}");
        let long = run(3200.0);
        let want = 4000.0 * 8.0 / 3.14;
        assert!((long - want).abs() / want < 0.01, "{long} against {want}");
    }

    /// No round trip timed end to end (the capture began after the handshake, at the
    /// client: only its own 20 µs turnaround is timed): one flight has nothing to be
    /// rated over, and is not rated at its burst's pace either.
    /// A capture begun in a recovery: the repairs' ACKs come first, and the ACK but one
    /// covers none of the data the capture saw sent for the first time. That says nothing
    /// of the pace (census seed 4242 read "goodput not measured" beside a timed RTT): the
    /// data's own span rates it.
    #[test]
    fn an_ack_but_one_covering_no_data_seen_sent_leaves_the_datas_span() {
        let mut conn = Connection::new(0, ep(C), ep(S), true, 1, Timestamp(0));
        let data = |conn: &mut Connection, ms: f64, seq: u32| {
            let p = TcpPacket::new(S, C).seq(seq).ack(1).payload_len(1000).window(65535);
            feed(conn, ms * 1000.0, Dir::S2C, p);
        };
        let ack = |conn: &mut Connection, ms: f64, ack: u32, sack: &[(u32, u32)]| {
            let p = TcpPacket::new(C, S).seq(1).ack(ack).window(65535).sack(sack);
            feed(conn, ms * 1000.0, Dir::C2S, p);
        };
        ack(&mut conn, 0.0, 1, &[(3001, 4001)]);
        data(&mut conn, 10.0, 5001);
        data(&mut conn, 20.0, 1);
        ack(&mut conn, 300.0, 1001, &[(3001, 4001)]);
        data(&mut conn, 310.0, 1001);
        ack(&mut conn, 600.0, 2001, &[(3001, 4001)]);
        data(&mut conn, 610.0, 2001);
        data(&mut conn, 610.0, 6001);
        ack(&mut conn, 900.0, 4001, &[]);
        ack(&mut conn, 1200.0, 7001, &[]);
        let (bps, over) = goodput_over(&conn, Dir::S2C).expect("measured");
        assert_eq!(over.basis, GoodputBasis::Data);
        // Two new segments and the 1000 B the first jumped over (carried, unseen), less the
        // first, which passed at the span's start: 2000 B over 600 ms.
        assert_eq!(over.bytes, 2000);
        assert!((bps - 2000.0 * 8.0 / 0.6).abs() < 1.0, "{bps}");
    }

    #[test]
    fn one_flight_with_no_round_trip_timed_is_not_measured() {
        let conn = one_flight(false);
        assert_eq!(conn.rtt.min_end_to_end(), None);
        assert_eq!(goodput(&conn, Dir::S2C), 0.0);
        let f = base(&conn, "t", &WindowStats::default(), [None, None]);
        assert_eq!(goodput_law(&f), Vec::<String>::new());
    }
    /// Data never acknowledged, with a stall saying no acknowledgment came: nothing was
    /// delivered, and the goodput says so (0, marked), not the rate it was sent at. The
    /// same data with no such stall (a capture lacking the ACKs) keeps its rate, and an
    /// outage that an acknowledgment ended is no such stall.
    #[test]
    fn data_never_acknowledged_with_the_connection_lost_delivered_nothing() {
        let mut conn = Connection::new(0, ep(C), ep(S), true, 1, Timestamp(0));
        for k in 0..4u32 {
            let p = TcpPacket::new(C, S)
                .seq(1 + 1000 * k)
                .ack(1)
                .payload_len(1000)
                .window(65535);
            feed(&mut conn, 1000.0 * k as f64, Dir::C2S, p);
        }
        let f = base(&conn, "t", &WindowStats::default(), [None, None]);
        assert_eq!(f.bulk_direction, Dir::C2S);
        assert_eq!(f.dir(Dir::C2S).acked_bytes, 0);
        assert!(f.goodput_bps > 0.0);
        let stall = |kind, recovered| crate::summary::Stall {
            kind,
            direction: Some(Dir::C2S),
            start: 0.0,
            end: 9.0,
            duration_s: 9.0,
            recovered,
            events: 5,
            intervals_s: Vec::new(),
            resumed_by: None,
            delivered_bps: None,
            sentence: String::new(),
        };
        let judged = |stalls: Vec<crate::summary::Stall>| {
            let mut g = FlowSummary { stalls, ..f.clone() };
            mark_undelivered(&mut g);
            g
        };
        for kind in [StallKind::Lost, StallKind::Outage] {
            let lost = judged(vec![stall(kind, false)]);
            assert!(lost.nothing_delivered && lost.goodput_bps == 0.0, "{kind:?}");
            assert_eq!(goodput_law(&lost), Vec::<String>::new());
        }
        for kept in [
            vec![],
            vec![stall(StallKind::Outage, true)],
            vec![stall(StallKind::LossEpisode, false)],
        ] {
            let g = judged(kept);
            assert!(!g.nothing_delivered && g.goodput_bps == f.goodput_bps);
        }
        // The law holds the mark to the numbers.
        let said = FlowSummary {
            nothing_delivered: true,
            ..f.clone()
        };
        assert!(
            goodput_law(&said).iter().any(|v| v.contains("nothing delivered")),
            "{:?}",
            goodput_law(&said)
        );
    }
}
