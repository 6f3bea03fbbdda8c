//! What the diagnosis collects while a flow is live, per direction, in constant memory:
//! a chronograph of the sender's mutually exclusive states (the way Linux tcp_chrono
//! accounts busy / rwnd-limited time), delivered bytes, the dispersion of ACKs, flight and
//! window extremes and RTT samples, all in a bounded [`LiveTimeline`].
//!
//! The states are judged from the sender's reconstructed view (`tcp::SenderView`), so a
//! capture at the receiver gives the same account as one at the sender, shifted in time
//! by the loop through the sender.

use super::bucket_rounds::BucketRounds;
use super::dispersion::Dispersion;
use super::drop_pace::DropPace;
use super::packed::LiveTimeline;
use super::rate_sample::RateSampler;
use super::receiver_clock::ReceiverClock;
use super::recovery_window::UnusedWindow;
use super::timeline::SenderState;
use super::train::{DataBatches, SampleFloor, Train};
use super::ts_clock::TsClock;
use crate::decode::{Ecn, TcpFlags};
use crate::flow::Dir;
use crate::seq::SeqNum;
use crate::summarize::WindowStats;
use crate::tcp::ecn::flags_signal;
use crate::tcp::{Connection, SegmentEvent};
use crate::time::{Span, Timestamp};

#[derive(Clone, Debug, Default)]
pub struct DirAccumulator {
    pub timeline: Option<LiveTimeline>,
    /// Whose turn its idle pauses were (request/response).
    pub turns: super::turns::Turns,
    /// The last new-data event and the state it put the sender in.
    last_data: Option<(Timestamp, SenderState)>,
    /// TSecr of the last new-data segment: segments one sender burst emitted together
    /// echo the same peer timestamp.
    last_echo: Option<u32>,
    /// The TSval of the direction's latest new data.
    last_tsval: Option<u32>,
    /// The sender's timestamp clock, from its new data's stamps (see
    /// [`DirAccumulator::idle_on_sender_clock`]).
    sender_clock: TsClock,
    /// Capture time of the ACK that left the sender idle (the pause it began).
    idle_ack: Option<Timestamp>,
    /// Since the last new data: when the sender learned (capture time of the ACK plus the
    /// loop through the sender) that it could not send — everything acknowledged and the
    /// window open (idle: nothing to send), or the window without room for a full segment
    /// (receiver window: Linux's tcp_snd_wnd_test fails) — each change of that state, in
    /// order. The time from each until the next (or the next data) is in that state.
    pauses: Vec<(Timestamp, SenderState)>,
    /// Since the last new data: the first ACK (capture time plus the loop through the
    /// sender) that left the sender room it did not use, and the first that proved the
    /// room (see [`UnusedRoom`]).
    unused_room: UnusedRoom,
    /// A retransmission since the last new data (loss recovery: the window may be
    /// below the flight, RFC 6937).
    retransmitted: bool,
    /// The congestion window the sender is proven to have ([`FlightProof`]).
    flight_proof: FlightProof,
    /// The smoothed round trip (at least the base) at the last ACK.
    smoothed_round: Option<Span>,
    /// The flight after the last new data segment.
    last_flight: u64,
    /// The share of its congestion window the sender left unused since its last new data,
    /// in loss recovery ([`UnusedWindow`]).
    unused_window: UnusedWindow,
    /// When the sender's FIN (or RST) first passed: its application had closed (CLOSE means
    /// "I have no more data to send", RFC 9293 §3.6) or the connection was given up.
    closed_at: Option<Timestamp>,
    /// The largest receiver window the sender's flight has filled (the next segment did not
    /// fit) since its last retransmission or pause: its congestion window was at least that
    /// window less a segment, and stays so until a loss or an idle restart (RFC 5681 §3.1,
    /// §4.1). See [`deferred_for_window`].
    window_filled: u64,
    /// The end-to-end base RTT at the last ACK: a sender silent longer may restart its
    /// congestion window (RFC 5681 §4.1 says after an RTO; a round trip is the cautious
    /// side), which ends `window_filled`'s proof.
    base_round: Option<Span>,
    /// The most of the sender's flight that was in the network: its flight less what the
    /// ACK it had reported SACKed or lost (`SenderView::held`), over data the receiver
    /// reported progress after (`pending_in_network` until it does).
    pub max_in_network: u64,
    pending_in_network: u64,
    /// The most the path between the sender and the capture point held beyond the flight
    /// seen here by the sender's view of any new data (`SenderView::transit`), and the
    /// longest loop through the sender a view took (`SenderView::near_loop`).
    pub transit: Option<u64>,
    pub near_loop: Span,
    /// The longest loop of the recent samples that the bound on the loop set aside
    /// (`SenderView::set_aside`), and the bound then; the largest flight such a loop would
    /// have given.
    pub loop_set_aside: Option<(Span, Span)>,
    pub unbounded_flight: u64,
    /// The ACK train (samples span whole batches and at least the quantum's minimum: see
    /// [`Train`], so timestamp resolution and a host that stamps packets in batches do not
    /// become rates).
    ack_train: Option<Train>,
    pub dispersion: Dispersion,
    /// The same ACKs batched also by the data they complete ([`DataBatches`]): the ACK
    /// spacing of a capture past the bottleneck.
    ack_train_by_data: Option<Train>,
    pub dispersion_by_data: Dispersion,
    data_batches: DataBatches,
    /// The same ACKs' samples kept only while each ACK's data had queued at the bottleneck
    /// behind the data of the ACK before it ([`queued_behind`]): the spacing of a capture
    /// before the bottleneck.
    queued_train: Option<Train>,
    pub queued_dispersion: Dispersion,
    /// The latest ACK that reported delivery, and whether its receiver held it.
    last_report: Option<Timestamp>,
    last_report_held: bool,
    /// The first loss's recovery point (the highest byte sent when its first retransmission
    /// left, RFC 6582 `recover`) and when the cumulative ACK reached it: the end of the
    /// recovery that ends slow start ([`super::startup::after_recovery`]).
    first_recover: Option<SeqNum>,
    pub first_recovered: Option<Timestamp>,
    /// The same ACKs timed on the receiver's clock (their TSval).
    pub receiver_clock: ReceiverClock,
    pub first_data: Option<Timestamp>,
    /// Time by which everything sent had been acknowledged, as the sender saw it.
    pub drained_at: Option<Timestamp>,
    pub data_events: u64,
    pub window_full_segments: u64,
    /// ACKs that reported delivery, and the bytes they reported.
    pub delivery_acks: u64,
    pub delivered_bytes: u64,
    /// The last ACK that reported delivery (or the send that ended a time with nothing
    /// outstanding), and whether it left data outstanding.
    last_delivery: Option<(Timestamp, bool)>,
    /// Dispersion of data arrivals (new data, back to back), and its current mode.
    pub arrivals: Dispersion,
    /// Consecutive new-data segments that both carried a timestamp echo, and those of them
    /// that echoed the same one: sent on the same news from the receiver, together (RFC
    /// 7323 §4.3: the echo is the latest timestamp the sender had received).
    pub stamped_pairs: u32,
    pub pairs_one_send: u32,
    arrival_rate: Option<f64>,
    /// The arrival train, as `ack_train`.
    arrival_train: Option<Train>,
    /// Start of a burst whose gaps wait for the state of its last segment.
    burst_from: Option<Timestamp>,
    /// The pace of the ACKs between drops ([`DropPace`]).
    pub drop_pace: DropPace,
    /// Rounds whose data came in two regimes past a token bucket (`bucket_rounds`).
    pub bucket_rounds: BucketRounds,
    /// The same rounds in the ACKs that come back to a capture before the bucket: each
    /// ACK reports the data the receiver got as it got it (one per segment or two, RFC
    /// 5681 §4.2), so the ACKs keep the two regimes the data arrived in.
    pub ack_rounds: BucketRounds,
    /// Delivery-rate samples over a round trip or more ([`RateSampler`]).
    pub rate_samples: RateSampler,
}

/// Whether the data an ACK reported — the latest of it sent at `sent` — had reached the
/// bottleneck before the data the ACK before it (at `prev`) reported had left it: only then
/// did the bottleneck serve the two back to back, and the gap between the ACKs is its
/// serialization of the data, the path's rate. Data that arrived at an idle link leaves as
/// it came, and the gap is the sender's spacing (its window's ACK clock, its pacing), a rate
/// the path at least has (Keshav's packet pair assumes the pair queued; Dovrolis, Ramanathan
/// & Moore, IEEE/ACM ToN 2004, §II; Lai & Baker's Nettimer, USITS 2001, keeps only pairs sent
/// closer than they arrived).
///
/// Where the capture point is before the bottleneck (at the sender) this is read from the
/// stamps: data sent at `sent` reaches the bottleneck after the part of the loop through the
/// receiver before it, and the data ahead of it left the bottleneck the rest of that loop
/// before its ACK came back, so it queued when `sent + receiver_loop < prev`. The loop's
/// least holds a segment's serialization at the bottleneck (and, taken at the handshake,
/// none), so data that met an idle link never passes; a pair's second segment, sent with
/// the first and acknowledged alone, passes by the serialization it waited behind it. A
/// margin scaled by the sample's own gap would pass the long gaps of a receiver that holds
/// its ACKs for a slow reader (R13 slow_reader at the sender: 200 samples at the reader's
/// 2.3 Mbit/s, where without it 22 show the 48 Mbit/s link).
fn queued_behind(prev: Timestamp, sent: Timestamp, receiver_loop: Span) -> bool {
    sent + receiver_loop < prev
}

/// How often (in data segments) the arrival-rate mode is recomputed.
const RATE_REFRESH: u64 = 256;
/// A gap up to this many serialization times at the arrival rate is back-to-back.
const BURST_SPACING: f64 = 1.5;

/// Changes of state kept between two data segments (each change of a window that opens
/// and shuts, or an idle sender's window moving, adds one; beyond this many the last ones
/// are dropped, the time going to the state before).
const MAX_PAUSES: usize = 16;

/// Accounts [from, to) in `state`, except from each pause before `to` on: in the pause's
/// state. The unused room's pause (see [`UnusedRoom`]) goes first when it came before the
/// known ones (a pause already known — window shut, all acknowledged — wins from its own
/// start).
#[allow(clippy::too_many_arguments)]
fn account_with_pauses(
    tl: &mut LiveTimeline,
    from: Timestamp,
    to: Timestamp,
    state: SenderState,
    unused: f64,
    room: UnusedRoom,
    pauses: &[(Timestamp, SenderState)],
) {
    // The room's pause is idle time with data still in flight (`Bin::idle_room_ns`).
    let lead = room
        .since(to)
        .filter(|&at| pauses.first().is_none_or(|&(p, _)| p > at))
        .map(|at| (at, SenderState::Idle, true));
    let mut t = from;
    let (mut now, mut in_room) = (state, false);
    let account = |tl: &mut LiveTimeline, from: Timestamp, to: Timestamp, state: SenderState, in_room: bool| {
        if in_room {
            tl.account_unused_room(from, to);
        } else if state == SenderState::Busy && unused > 0.0 {
            tl.account_busy_unused(from, to, unused);
        } else {
            tl.account(from, to, state);
        }
    };
    for (at, s, r) in lead
        .into_iter()
        .chain(pauses.iter().map(|&(at, s)| (at, s, false)))
        .filter(|&(at, _, _)| at < to)
    {
        let at = at.max(t);
        account(tl, t, at, now, in_room);
        t = at;
        now = s;
        in_room = r;
    }
    account(tl, t, to, now, in_room);
}

/// Whether a sender that stopped with room for a segment in the receiver's window `w` (its
/// flight `flight`) was held by that window: Linux defers a send (TSO/GSO, on by default)
/// while the room is under a third of the smaller of the two windows (`tcp_tso_should_defer`,
/// `sysctl_tcp_tso_win_divisor` = 3) and an ACK is due, and counts the wait against the
/// receiver's window when it is the smaller (`is_rwnd_limited`). It is, when the sender's
/// flight has filled a window at least as large since its last loss or pause (`filled`):
/// its congestion window is at least that flight and has not shrunk since. A sender whose
/// flight never reached the window is not claimed: its congestion window may be the
/// smaller.
fn deferred_for_window(w: u64, flight: u64, filled: u64) -> bool {
    let room = w.saturating_sub(flight);
    w > 0 && 3 * room < w && w <= filled
}

/// Room an ACK left the sender that it did not use, outside loss recovery: the ACK moved
/// the cumulative ACK by a full segment or more with no SACK block and no duplicate, with
/// nothing retransmitted since the last new data, and the receiver's window had room for a
/// segment beyond what was outstanding. A sender with data then sends within its loop; one
/// that stays silent had nothing to send (RFC 7661 §2: application-limited) though data was
/// still outstanding — a burst whose lost tail waits for the RTO while the application is
/// quiet. The silence says so when it is longer than:
/// - two smoothed round trips after any such ACK: a RACK-TLP sender (RFC 8985 §7.2-7.3,
///   Linux since 3.10, Windows since 2019) sends new data, when it has any, as its tail
///   probe at PTO = 2·SRTT whatever its congestion window;
/// - one smoothed round trip after one that left less than half the last flight
///   outstanding: a congestion response never sets the window below half the flight it
///   reacted to (RFC 5681 eq. 4; CUBIC's 0.7), so that room is certain even after a cut.
///
/// - a quarter of a smoothed round trip after one, or after new data, that left at most
///   two thirds of the window the sender is proven to have ([`FlightProof`]) outstanding,
///   and of the receiver's window: room of a third of both or more, which Linux never
///   defers (tcp_tso_should_defer sends at once when the room reaches min(cwnd, rwnd) /
///   tcp_tso_win_divisor = 3), and its pacing (1.2 cwnd/srtt or faster in congestion
///   avoidance, tcp_update_pacing_rate) spaces no segment that long once the window holds
///   four: R25 app_onoff, an application writing 96 KiB every 300 ms on a 310 ms path,
///   never left its sender idle, yet kept it below its window all the time, silent
///   100-170 ms after each ACK. BBR's ProbeRTT (four segments for 200 ms every 10 s) is
///   such a silence the rule takes for the application's.
///
/// The smoothed round trip, not the base: a standing queue lengthens it, and a sender's own
/// queue discipline holds it back that long (Linux TSQ). Shorter silences are pacing, TSO
/// deferral (Linux defers at most until the next ACK is due) or a window cut, and stay the
/// segment's state.
#[derive(Clone, Copy, Debug, Default)]
pub struct UnusedRoom {
    first: Option<Timestamp>,
    certain: Option<Timestamp>,
    undeferred: Option<Timestamp>,
    /// The smoothed round trip at the last such ACK.
    round: Option<Span>,
}

/// A lower bound on the sender's congestion window: the largest flight it sent within the
/// last base round trip, outside loss recovery. A sender sends only while its flight is
/// below its congestion window (RFC 5681 §3.1), which then only shrinks on a loss, an ECN
/// echo (RFC 3168 §6.1.2), an idle restart (after an RTO with nothing outstanding) or,
/// after an RTO application-limited, to no less than the flight it used in it (RFC 7661
/// §4.3; Linux tcp_cwnd_application_limited). A sign of loss or congestion (a
/// retransmission, a SACK block or duplicate ACK, an ECN echo) ends the proof, and none is
/// made for a smoothed round trip after it: recovery brings the window down to the new
/// threshold over that round (RFC 6675 §5, RFC 6937's proportional rate reduction).
#[derive(Clone, Copy, Debug, Default)]
pub struct FlightProof {
    flight: u64,
    at: Option<Timestamp>,
    /// No proof before this time (recovery after the last sign of loss).
    blocked_until: Option<Timestamp>,
}

impl FlightProof {
    /// The proven window at `now`, if the proof still holds (within `round` of its flight).
    fn at(&self, now: Timestamp, round: Option<Span>) -> Option<u64> {
        let (at, round) = (self.at?, round?);
        (now - at <= round).then_some(self.flight)
    }

    fn on_flight(&mut self, flight: u64, now: Timestamp, round: Option<Span>) {
        if self.blocked_until.is_some_and(|t| now < t) {
            return;
        }
        if self.at(now, round).is_none_or(|f| flight >= f) {
            self.flight = flight;
            self.at = Some(now);
        }
    }

    /// A sign of loss or congestion at `now`: no proof until a round trip after it.
    fn cut(&mut self, now: Timestamp, round: Option<Span>) {
        self.at = None;
        let until = round.map(|r| now + r);
        self.blocked_until = until.max(self.blocked_until).or(Some(now));
    }
}

/// Whether `outstanding` under the proven window `proof` and the receiver's window `window`
/// leaves room Linux sends into at once ([`UnusedRoom`]'s third rule).
fn undeferred(outstanding: u64, proof: u64, window: u64, mss: u64) -> bool {
    proof >= 4 * mss && 3 * outstanding <= 2 * proof && 3 * outstanding <= 2 * window
}

impl UnusedRoom {
    /// When the sender's silence until `to` began to be application-limited, if it was.
    fn since(&self, to: Timestamp) -> Option<Timestamp> {
        let round = self.round?;
        if let Some(at) = self.first.filter(|&at| to - at > Span(2 * round.nanos())) {
            return Some(at);
        }
        let certain = self.certain.filter(|&at| to - at > round);
        let undeferred = self.undeferred.filter(|&at| to - at > Span(round.nanos() / 4));
        match (certain, undeferred) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

impl DirAccumulator {
    /// `next`: the size of the sender's next segment, for whether it fits the window.
    /// `base_loop`: the least loop through the sender (`Connection::min_sender_loop`), when
    /// the capture is away from it (see [`DirAccumulator::idle_on_sender_clock`]).
    fn on_new_data(
        &mut self,
        ts: Timestamp,
        ev: &SegmentEvent,
        next: u64,
        floor: SampleFloor,
        base_loop: Option<Span>,
        sender_loop: Span,
    ) {
        self.first_data.get_or_insert(ts);
        // Data sent with nothing outstanding: the wait for its ACK starts here.
        if self.last_delivery.is_none_or(|(_, left)| !left) {
            self.last_delivery = Some((ts, true));
        }
        self.data_events += 1;
        let len = ev.send.new_bytes as u64;
        self.data_batches.on_data(ts, SeqNum(ev.seq).add(ev.len));
        self.bucket_rounds.on_arrival(ts, len, base_loop);
        // The sender's clock from its stamps, and where an idle wait began by it.
        let stamped = ev
            .tsval
            .is_some_and(|tsval| self.sender_clock.on_stamp(ts, tsval).is_some());
        if let (true, Some((t0, _)), Some(base_loop)) = (stamped, self.last_data, base_loop) {
            if let Some(at) = self.idle_on_sender_clock(t0, ts, base_loop) {
                self.pauses[0].0 = at;
            }
        }
        if let (Some(echo), Some(prev), Some(_)) = (ev.echo, self.last_echo, self.last_data) {
            self.stamped_pairs = self.stamped_pairs.saturating_add(1);
            self.pairs_one_send = self.pairs_one_send.saturating_add((echo == prev) as u32);
        }
        let tl = self.timeline.get_or_insert_with(|| LiveTimeline::new(ts));
        if let Some((t0, state)) = self.last_data {
            let gap = ts - t0;
            // With timestamps, a change of echo means the sender acted on a newer ACK: a new
            // burst, even if the bottleneck's queue delivered it back to back.
            let same_sending = ev.echo.is_none() || ev.echo == self.last_echo;
            // Two segments that carry the same TSval and echo the same ACK left the sender
            // within one tick of its clock, on the same news from the receiver (RFC 7323
            // §4.3: the echo is the latest ACK it processed): the gap between them is the
            // path's, not a wait.
            let same_tick = ev.tsval.is_some() && ev.tsval == self.last_tsval && ev.echo.is_some();
            // After a segment that left the sender waiting (for the window, for its
            // application) the gap is the wait, not spacing: the train starts again here.
            // Unless this segment left with it (`same_tick`), whatever the reconstructed
            // view said of the first (R15 slow_reader at the client: each read released
            // two or three segments in one burst, 0.86 ms apart behind a 14 Mbit/s link,
            // and every one read as window-held, so no train ever spanned two of them and
            // the arrivals' rate was 263 kbit/s).
            // The train before the wait ends at its last segment, its last batch complete,
            // as the ACK train ends at a pause: a sample across the wait would be the
            // application's or the receiver's pace, not the path's.
            if state != SenderState::Busy && !(same_tick && same_sending) {
                self.arrivals.end(&mut self.arrival_train, floor);
            } else if self.arrival_train.is_none() {
                self.arrival_train = Some(Train::start(t0));
            }
            self.arrivals.feed(&mut self.arrival_train, ts, len, floor);
            if self.data_events % RATE_REFRESH == 0 {
                self.arrival_rate = self.arrivals.capacity();
            }
            // Segments a sender emits back to back reach a capture point behind the
            // bottleneck spaced by their serialization time there. Such a gap is not a
            // pause of the sender: it takes the state of the end of the burst. The sender's
            // own clock (`same_tick`) says more where the path spread a burst beyond its
            // serialization (a jittery link, a queue shared in turns).
            let in_burst = state == SenderState::Busy
                && same_sending
                && (same_tick
                    || self
                        .arrival_rate
                        .is_some_and(|r| gap.secs_f64() * r <= BURST_SPACING * len as f64));
            if in_burst {
                self.burst_from.get_or_insert(t0);
            } else {
                let from = self.burst_from.take().unwrap_or(t0);
                let unused = self.unused_window.over(from, t0, ts);
                account_with_pauses(tl, from, ts, state, unused, self.unused_room, &self.pauses);
            }
        }
        let (flight, window) = match ev.sender_view {
            Some(v) => (v.flight, v.window),
            None => (ev.naive_flight.unwrap_or(0), None),
        };
        if let Some(v) = ev.sender_view {
            self.transit = Some(self.transit.unwrap_or(0).max(v.transit));
            self.near_loop = self.near_loop.max(v.near_loop);
            if let Some((lp, unbounded)) = v.set_aside {
                self.unbounded_flight = self.unbounded_flight.max(unbounded);
                if self.loop_set_aside.is_none_or(|(l, _)| lp > l) {
                    self.loop_set_aside = Some((lp, v.near_loop));
                }
            }
        }
        // A silence longer than a round trip, a loss, or a congestion window reduced for an
        // ECN echo (the sender's CWR, RFC 3168 §6.1.2) ends the proof of the sender's
        // congestion window (`window_filled`).
        if ev.flags.has(TcpFlags::CWR)
            || self
                .last_data
                .zip(self.base_round)
                .is_some_and(|((t0, _), r)| ts - t0 > r)
        {
            self.window_filled = 0;
        }
        if ev.flags.has(TcpFlags::CWR) {
            self.flight_proof.cut(ts, self.smoothed_round);
        }
        self.flight_proof.on_flight(flight, ts, self.base_round);
        // The next segment does not fit in the window the sender had (Linux
        // tcp_snd_wnd_test), or the window was closed; or the sender stopped short of a
        // window it had filled (`deferred_for_window`).
        let fit = ev.sender_view.and_then(|v| {
            v.tick_window
                .map(|w| (w, w == 0 || v.tick_flight + next > w, v.tick_flight))
        });
        let full = fit.is_some_and(|(_, full, _)| full);
        if full {
            self.window_full_segments += 1;
        }
        // Out of the network: what the ACK the sender had reported SACKed or left lost. Near
        // the receiver the capture point's scoreboard is a loop ahead and may have seen the
        // hole repaired already, so the ACK's own counts; but while the capture point's
        // cumulative ACK is still the sender's (the same hole), its scoreboard holds the
        // SACKs the sender had and those on their way to it, where the ACK the view chose
        // (the earliest the window allows, when the echo says little) has only the SACKs of
        // its own moment.
        let held = match ev.sender_view {
            Some(v) if Some(v.flight) == ev.naive_flight => v.held.max(ev.not_in_network),
            Some(v) => v.held,
            None => ev.not_in_network,
        };
        // In loss recovery the sender sends new data while the window has room, whatever its
        // congestion window: SACKed and lost segments are out of the pipe it counts (RFC
        // 6675 §5), so a flight that filled the window with such segments in it proves no
        // congestion window that large (R27 ipv6_rwnd at the client: a 256 KiB window filled
        // in a 10 ms recovery read the 203 KiB congestion window that followed as held by
        // the window, 18% of the transfer where the sender's kernel counted 0.5%).
        let recovering = ev.sender_view.is_some_and(|v| v.recovering);
        if let Some((w, true, tick_flight)) = fit {
            if !recovering && tick_flight.saturating_sub(held) + next > w {
                self.window_filled = self.window_filled.max(w);
            }
        }
        let full = full || fit.is_some_and(|(w, _, flight)| deferred_for_window(w, flight, self.window_filled));
        let state = if full {
            SenderState::ReceiverWindow
        } else {
            SenderState::Busy
        };
        self.pending_in_network = self.pending_in_network.max(flight.saturating_sub(held));
        let b = tl.bin(ts);
        b.sent += len;
        b.new_segments += 1;
        // A full segment's payload is the MSS less the options it carries, up to 40 bytes
        // of them (RFC 6691: the MSS counts no options; timestamps alone take 12).
        b.short_segments += ((ev.len as u64) + 40 < next) as u32;
        b.max_flight = b.max_flight.max(flight);
        b.min_flight = Some(b.min_flight.map_or(flight, |m| m.min(flight)));
        match (window, ev.sender_view) {
            (Some(w), _) => {
                b.max_window = b.max_window.max(w);
                b.min_window = Some(b.min_window.map_or(w, |m| m.min(w)));
            }
            (None, Some(v)) if v.window_raw > 0 => {
                b.min_raw_window = match b.max_raw_window {
                    0 => v.window_raw,
                    _ => b.min_raw_window.min(v.window_raw),
                };
                b.max_raw_window = b.max_raw_window.max(v.window_raw);
            }
            (None, _) => {}
        }
        // Whose turn the idle pause before this data was (see `turns`).
        match self.pauses.iter().find(|&&(_, s)| s == SenderState::Idle) {
            Some(&(from, _)) => self
                .turns
                .on_resume(ts, Some(from), self.last_data.map(|(t, _)| t), sender_loop),
            None => self.turns.on_busy_data(),
        }
        self.unused_window.on_new_data(
            recovering,
            state == SenderState::Busy,
            flight.saturating_sub(held),
            self.last_flight,
        );
        self.last_data = Some((ts, state));
        self.last_flight = flight;
        self.last_echo = ev.echo;
        self.last_tsval = ev.tsval;
        self.pauses.clear();
        self.unused_room = UnusedRoom::default();
        self.retransmitted = false;
        // The sender stopped here with room it sends into at once, if it had data.
        let proof = self.flight_proof.at(ts, self.base_round);
        if let (Some(proof), Some(w), Some(round)) = (proof, window, self.smoothed_round) {
            if undeferred(flight, proof, w, next) {
                self.unused_room.undeferred = Some(ts);
                self.unused_room.round = Some(round);
            }
        }
    }

    /// An ACK for this direction's data: `delivered` bytes newly reported; `pause` when it
    /// left the sender unable to send: `Idle` when it acknowledged everything sent and left
    /// the window open, `ReceiverWindow` when the window had no room for a full segment (a
    /// closed or nearly closed window is the receiver's doing, not the sender's idleness).
    /// `round` is the current base RTT: a gap between ACKs longer than a round trip is a
    /// pause (the pipe drained, the receiver's application or delayed-ACK timer paced it),
    /// not the spacing of a train, and gives no dispersion sample.
    /// An ACK that reported `reported` bytes delivered, `delivered` of them in its own time
    /// (none for one that ends a stall).
    #[allow(clippy::too_many_arguments)]
    fn on_ack(
        &mut self,
        ts: Timestamp,
        ack: Option<SeqNum>,
        mss: u64,
        delivered: u64,
        reported: u64,
        pause: Option<SenderState>,
        sender_loop: Span,
        round: Option<Span>,
        floor: SampleFloor,
        queued: bool,
    ) {
        if round.is_some() {
            self.base_round = round;
        }
        if reported > 0 {
            self.last_report = Some(ts);
            self.delivery_acks += 1;
            self.delivered_bytes += reported;
            self.ack_rounds.on_arrival(ts, reported, round);
            if let Some(tl) = self.timeline.as_mut() {
                // The instant still starts the next window's ACK interval.
                tl.ack(ts, delivered);
            }
            // A gap longer than a round trip is a pause, not spacing: the train ends before
            // it (its last batch complete) and restarts.
            if let (Some(train), Some(r)) = (self.ack_train.as_ref(), round) {
                if ts - train.last() > r {
                    self.dispersion.end(&mut self.ack_train, floor);
                    self.dispersion_by_data.end(&mut self.ack_train_by_data, floor);
                    self.queued_dispersion.end(&mut self.queued_train, floor);
                }
            }
            self.dispersion.feed(&mut self.ack_train, ts, reported, floor);
            // Data that had not queued behind the ACK before's: the gap is the sender's,
            // and the train of queued ACKs starts again here.
            if !queued {
                self.queued_dispersion.end(&mut self.queued_train, floor);
            }
            self.queued_dispersion.feed(&mut self.queued_train, ts, reported, floor);
            // Only an ACK of more than two full segments (a stretch ACK: RFC 5681 §4.2 asks
            // for one at least every second) says its host was handed the data together; a
            // receiver that ACKs each segment or pair as it comes keeps the arrivals'
            // spacing, compressed pairs included.
            let same = ack.is_some_and(|a| self.data_batches.on_ack(a)) && reported > 2 * mss;
            self.dispersion_by_data
                .feed_in(&mut self.ack_train_by_data, ts, reported, floor, same);
        }
        let at = ts + sender_loop;
        match pause {
            Some(state) => {
                if self.pauses.last().is_none_or(|&(_, s)| s != state) && self.pauses.len() < MAX_PAUSES {
                    self.pauses.push((at, state));
                    if state == SenderState::Idle {
                        self.idle_ack = Some(ts);
                    }
                }
                if state == SenderState::Idle {
                    self.drained_at = Some(at);
                }
            }
            // Room again with data outstanding: the sender is busy from here.
            None => {
                if self
                    .pauses
                    .last()
                    .is_some_and(|&(_, s)| s == SenderState::ReceiverWindow)
                    && self.pauses.len() < MAX_PAUSES
                {
                    self.pauses.push((at, SenderState::Busy));
                }
            }
        }
    }

    /// Where the idle wait that ends with new data at `ts` began, by the loop this data
    /// took, when that differs from the pause's own account by more than the stamps can err:
    /// the one pause since the last new data (at `t0`) an idle one, the sender's clock
    /// known; `base_loop` the least loop through the sender.
    ///
    /// The pause starts when the sender learned that everything was acknowledged: the ACK's
    /// capture time plus the loop through the sender, which a capture away from the sender
    /// times as ACK-to-data (`Connection::sender_loop`: the least of the recent loops). The
    /// gap from that ACK to the next data seen here is the loop the next data took plus the
    /// sender's idle time, and the loop is the path's least plus the queue that data met.
    /// A flow whose bursts build their own queue (a burst sent at its window's pace into a
    /// link shared with a bulk flow) times every loop of a burst behind that queue, while
    /// the next burst's first segment meets only the others' (P5 cross_tcp_onoff at the
    /// receiver: 32 ms of idle seen per 200 ms cycle, 57 ms at the sender). The sender's
    /// stamps tell that queue: a segment's capture time less its TSval (the sender's clock
    /// when it sent it, RFC 7323 §3) exceeds the least of that by the queue it met beyond
    /// the least one ([`TsClock::delay_above_least`]). So the idle wait began the least loop
    /// plus that queue after the ACK, if the ACK's own way back took its least: a return
    /// path that queues makes the start later, and no stamp of the sender shows that. Where
    /// the pause's own account is earlier still it is wrong for certain (it counted the next
    /// data's queue as idle time: a sender clocked by the ACKs of a burst it queued itself
    /// reads idle between every pair); where it is later, the recent loops carried a queue
    /// the next data did not meet. Within two ticks nothing moves, nor where the account found
    /// no idle time at all (the next data came before it). Only away from the sender, where
    /// the loop is most of the round trip: at the sender the ACK is seen when the sender
    /// gets it, and the loops there time its own stack and application (Nagle's rule holding
    /// a short segment for the ACK, RFC 896).
    fn idle_on_sender_clock(&self, t0: Timestamp, ts: Timestamp, base_loop: Span) -> Option<Timestamp> {
        let &[(at, SenderState::Idle)] = self.pauses.as_slice() else {
            return None;
        };
        let ack = self.idle_ack?;
        let queued = self.sender_clock.delay_above_least()?;
        let tick = self.sender_clock.tick()?;
        let from = (ack + base_loop + queued).max(t0).min(ts);
        (at < ts && (from - at).nanos().abs() > 2 * tick.nanos()).then_some(from)
    }

    /// An ACK for this direction's data reached the sender at `at` (its capture time plus
    /// the loop through the sender) leaving `pipe` bytes in the network of `outstanding`,
    /// the receiver's window `window`: the share of its congestion window the sender left
    /// unused from then on ([`window_unused`]), in a loss recovery with room in the
    /// receiver's window (a window without room held the sender: not its doing).
    fn on_recovery_ack(
        &mut self,
        at: Timestamp,
        recovering: bool,
        pipe: u64,
        outstanding: u64,
        window: Option<u64>,
        mss: u64,
    ) {
        let Some((t0, _)) = self.last_data else {
            return;
        };
        let room = window.is_some_and(|w| w >= outstanding + mss);
        self.unused_window
            .on_ack(at, t0, recovering, room, pipe, self.last_flight);
    }

    /// Whether new data at `ts` waited on the application: since the last new data an ACK
    /// left the sender idle (everything acknowledged, the window open), or left it room it
    /// did not use for longer than a loop could explain ([`UnusedRoom`]).
    fn waited(&self, ts: Timestamp) -> bool {
        self.pauses.iter().any(|&(_, s)| s == SenderState::Idle) || self.unused_room.since(ts).is_some()
    }

    fn on_retransmission(&mut self, ts: Timestamp, sent_up_to: Option<SeqNum>) {
        if self.first_recover.is_none() {
            self.first_recover = sent_up_to;
        }
        self.retransmitted = true;
        self.flight_proof.cut(ts, self.smoothed_round);
        self.window_filled = 0;
        self.unused_room = UnusedRoom::default();
        if let Some(tl) = self.timeline.as_mut() {
            tl.bin(ts).retransmissions += 1;
        }
    }

    /// ECN congestion signals of this direction at `ts` (see `Bin::ecn_marks`).
    fn on_ecn(&mut self, ts: Timestamp, marks: u32) {
        if let Some(tl) = self.timeline.as_mut() {
            tl.bin(ts).ecn_marks += marks;
        }
    }

    /// A bound on the loop the queue lies on (`SegmentEvent::loop_bound`).
    fn on_loop_bound(&mut self, ts: Timestamp, bound: Span) {
        if let Some(tl) = self.timeline.as_mut() {
            let b = tl.bin(ts);
            b.rtt_bound_min_ns = Some(b.rtt_bound_min_ns.map_or(bound.nanos(), |m| m.min(bound.nanos())));
        }
    }

    fn on_rtt(&mut self, ts: Timestamp, e2e: Span, prompt: bool) {
        if let Some(tl) = self.timeline.as_mut() {
            let b = tl.bin(ts);
            b.rtt_min_ns = Some(b.rtt_min_ns.map_or(e2e.nanos(), |m| m.min(e2e.nanos())));
            if prompt {
                b.rtt_prompt_min_ns = Some(b.rtt_prompt_min_ns.map_or(e2e.nanos(), |m| m.min(e2e.nanos())));
            }
            b.rtt_sum_ns += e2e.nanos();
            b.rtt_count += 1;
        }
    }

    /// The receiver's windows turned out to be read by the sender with shift `to`, not the
    /// `from` the bins before `at` were accounted under: `Connection::effective_scale`
    /// follows the evidence, which takes rounds to be certain, and the time before it was
    /// judged against windows the sender never had (R14 wscale_strip_synack_up at the
    /// server: the first 0.7 s of a 3.95 s transfer held by a 40 KiB window, read under
    /// the handshake's 5 MiB as the congestion window's). Those bins' windows are read
    /// again under the new scale (each was `raw << from`), and their time judged again by
    /// the rule each segment is judged by, Linux's tcp_snd_wnd_test: a bin whose flight
    /// came within the next segment of its largest window was held by the window; one
    /// whose flight stayed a segment short of its least window never was (an ACK that shut
    /// the window still reads zero, and stays the window's).
    /// `at` is the new data that made the scale known (accounted, its own state judged
    /// still under the old scale), `tick` its flight and window (`SenderView::tick_*`).
    /// `from` None: the windows before were not known in bytes at all (their scale unknown),
    /// and the bins' 16-bit fields are read under `to`.
    fn rescale(&mut self, from: Option<u8>, to: u8, at: Timestamp, next: u64, tick: Option<(u64, u64)>) {
        let known = from.is_some();
        let from = from.unwrap_or(0);
        let scale = |w: u64| match to.cmp(&from) {
            std::cmp::Ordering::Less => w >> (from - to),
            std::cmp::Ordering::Greater => w
                .checked_shl((to - from) as u32)
                .filter(|v| v >> (to - from) == w)
                .unwrap_or(u64::MAX),
            std::cmp::Ordering::Equal => w,
        };
        if known {
            self.window_filled = scale(self.window_filled);
        }
        let held = |flight: u64, max_w: u64, min_w: Option<u64>| {
            if max_w > 0 && flight + next > max_w {
                Some(true)
            } else if min_w.is_some_and(|w| w > 0 && flight + next <= w) {
                Some(false)
            } else {
                None
            }
        };
        // The state this data left the sender in, until the next.
        if let (Some((t, state)), Some((flight, w)), true) = (self.last_data, tick, known) {
            let w = scale(w);
            match held(flight, w, Some(w)) {
                Some(true) if state == SenderState::Busy => self.last_data = Some((t, SenderState::ReceiverWindow)),
                Some(false) if state == SenderState::ReceiverWindow => self.last_data = Some((t, SenderState::Busy)),
                _ => {}
            }
        }
        let Some(tl) = self.timeline.as_mut() else { return };
        // A bin without data is in the state its last data left the sender in (the time
        // from a segment to the next is that segment's): the verdict carries over.
        let mut verdict = None;
        tl.rewrite_until(at, |b| {
            if known {
                b.max_window = scale(b.max_window);
                b.min_window = b.min_window.map(scale);
            } else {
                b.max_window = b.max_window.max(scale(b.max_raw_window as u64));
                b.min_window = b
                    .min_window
                    .into_iter()
                    .chain((b.max_raw_window > 0).then(|| scale(b.min_raw_window as u64)))
                    .min();
            }
            if b.new_segments > 0 {
                verdict = held(b.max_flight, b.max_window, b.min_window);
            }
            match verdict {
                Some(true) => {
                    b.rwnd_ns += std::mem::take(&mut b.busy_ns);
                    b.unused_window_ns = 0;
                }
                Some(false) => b.busy_ns += std::mem::take(&mut b.rwnd_ns),
                None => {}
            }
        });
    }

    /// Closes the chronograph at the end of the flow: the last state runs until the sender
    /// saw everything acknowledged (or until the last packet, if it never did).
    pub fn close(&mut self, last_ts: Timestamp) {
        self.drop_pace.close();
        self.bucket_rounds.close();
        self.ack_rounds.close();
        if let (Some((t0, state)), Some(tl)) = (self.last_data.take(), self.timeline.as_mut()) {
            // A transfer that ends idle ends where the sender had sent all it had; one that
            // ends with the window shut was held by it until the capture ended.
            let end = match self.pauses.last() {
                // Its last new data was the last it had: every ACK after it freed room in
                // the congestion window and the receiver's (all was acknowledged with the
                // window open), and a sender with more data sends on such an ACK (RFC 5681
                // §3.1, RFC 7661 §2). The time from there to the last ACK is the last
                // flight's delivery, which no limit held: the transfer's steady part ends
                // at its last data, as a transfer measured by its application's bytes does
                // (bug-4663: a 36 ms tail of 162 ms counted as congestion-window time).
                // A tail with a retransmission is loss recovery, and stays.
                Some(&(_, SenderState::Idle)) if !self.retransmitted => t0,
                // A pause timed on the sender's clock (`idle_on_sender_clock`) may fall after
                // the last packet: nothing is known past it, and the connection ends there
                // (a 4 Mbit/s path whose queue held 0.27 s, captured at the receiver: the
                // idle read 0.27 s after the last packet, and the steady part 1.79 s of a
                // 1.62 s connection).
                Some(&(at, SenderState::Idle)) => at.min(last_ts).max(t0),
                _ => last_ts.max(t0),
            };
            let from = self.burst_from.take().unwrap_or(t0);
            // After the sender closed (its FIN or RST) it had no more: what is left is the
            // recovery's repair of what it sent, at the pace its loss recovery allows, which
            // no send buffer held (the window's share left unused says nothing then). Before
            // it, from the last new data on, its application had not finished: a send
            // buffer full of data held above the holes blocks it (P45 cross_onoff: the last
            // new data at +1.84 s, the FIN at +5.15 s, the kernel's t_app_stop). A
            // connection the capture saw no FIN or RST of had not closed by its end: its
            // application had not said it had no more (P45 jitter_fifo: blocked from +2.2
            // s, the capture ended at +4.75 s, the application wrote again at +5.0 s). The
            // share up to the close is spread over the whole tail, which one state covers:
            // the steady transfer's sum is the same.
            let unused = match self.closed_at.unwrap_or(end) {
                closed if closed > from && end > from => {
                    let cut = closed.min(end);
                    let share = self.unused_window.over(from, t0, cut);
                    share * (cut - from).nanos() as f64 / (end - from).nanos() as f64
                }
                _ => 0.0,
            };
            account_with_pauses(tl, from, end, state, unused, self.unused_room, &self.pauses);
            self.pauses.clear();
            self.unused_room = UnusedRoom::default();
        }
    }
}

/// Both directions of a flow.
#[derive(Clone, Debug, Default)]
pub struct Accumulator {
    pub dirs: [DirAccumulator; 2],
    pub windows: WindowStats,
    pub middlebox: crate::middlebox::Evidence,
    pub stalls: crate::stall::StallTracker,
    /// Per direction, the right edge of the window its last ACK offered the other end
    /// (relative ACK number + scaled window), when the scale is known.
    right_edge: [Option<u32>; 2],
    /// Per direction, the timestamp value of its last ACK when the receiver held that ACK
    /// (see `on_segment`): data that echoes it was released by it.
    ack_held: [Option<u32>; 2],
    /// Per direction, whether its last ACK reported data out of order (SACK blocks).
    sacked: [bool; 2],
    /// Per data direction, the shift its sender's view read the receiver's windows with
    /// at its last new data (see [`DirAccumulator::rescale`]).
    view_shift: [Option<u8>; 2],
}

impl Accumulator {
    pub fn on_segment(&mut self, conn: &Connection, ev: &SegmentEvent) {
        let d = ev.dir;
        if ev.flags.fin() || ev.flags.rst() {
            self.dirs[d.index()].closed_at.get_or_insert(ev.ts);
        }
        // The connection's tracker has learnt the clock's resolution from the same stamps,
        // this one included.
        let min_span = conn.rtt.quantum.min_sample_span();
        self.middlebox.on_segment(conn, ev);
        self.stalls.on_segment(conn, ev);
        if !ev.flags.rst() {
            // A SYN's window field is never scaled (RFC 7323 §2.2): it is no raw value a
            // shift inferred later applies to (tls-subjectaltname flow 20: a SYN's 8192
            // under an obeyed shift of 5 printed "kept to at most 256 KiB" for 8.1 KiB).
            let raw = if ev.flags.syn() { 0 } else { ev.win_raw };
            self.windows.on_advert(d, ev.win_bytes, raw, ev.zero_window);
        }
        // Whether this data waited on its sender's application: everything sent had been
        // acknowledged with the window open (idle), or an ACK left room it did not use.
        let waited = ev.send.new_bytes > 0 && self.dirs[d.index()].waited(ev.ts);
        if ev.send.new_bytes > 0 {
            // The sender's next segment, for the window test: Linux's tcp_snd_wnd_test
            // tests the next segment capped at the MSS, so as large as the sender's
            // segments have been, up to the MSS (a sender of one-byte messages never waits
            // for room for a full one), and up to half the largest window the receiver
            // offered (RFC 1122 §4.2.3.4: a sender also sends when that fraction of the
            // maximum window fits; loopback's 65 495-byte MSS never fits a 64 KiB window).
            let largest = self.windows.max[d.index()].unwrap_or(u64::MAX);
            let next = (conn.mss(d) as u64)
                .min(conn.dir(d).max_segment.max(1) as u64)
                .min((largest / 2).max(1));
            // The scale the sender is known to read the windows with changed: what was
            // accounted before is judged again under it.
            let shift = conn.effective_scale(d.reverse()).shift();
            let rescale = match (self.view_shift[d.index()], shift) {
                (Some(from), Some(to)) if from != to => Some((Some(from), to)),
                // The first data whose scale is known, after data whose scale was not.
                (None, Some(to)) if self.dirs[d.index()].last_data.is_some() => Some((None, to)),
                _ => None,
            };
            if shift.is_some() {
                self.view_shift[d.index()] = shift;
            }
            // Away from the sender (the loop through it most of the round trip) the loop
            // places an idle wait's start, and the sender's stamps can correct it.
            let base_loop = conn.min_sender_loop(d);
            let away = conn
                .rtt
                .base_end_to_end()
                .is_some_and(|r| base_loop.nanos() * 2 > r.nanos());
            self.dirs[d.index()].on_new_data(
                ev.ts,
                ev,
                next,
                SampleFloor::new(min_span, conn.mss(d) as u64),
                away.then_some(base_loop),
                base_loop,
            );
            if let Some((from, to)) = rescale {
                let tick = ev.sender_view.and_then(|v| v.tick_window.map(|w| (v.tick_flight, w)));
                self.dirs[d.index()].rescale(from, to, ev.ts, next, tick);
            }
        }
        if ev.send.retransmission {
            let sent_up_to = conn.dir(d).nxt;
            self.dirs[d.index()].on_retransmission(ev.ts, sent_up_to);
        }
        if (ev.send.new_bytes > 0 || ev.send.retransmission) && !ev.send.keep_alive {
            self.dirs[d.index()]
                .rate_samples
                .on_send(ev.ts, ev.seq, ev.len, ev.send.retransmission);
        }
        // ECN: a CE mark, or the sender's CWR (RFC 3168's, not AccECN's counter bit).
        if ev.ecn == Ecn::Ce || (ev.flags.has(TcpFlags::CWR) && !ev.flags.syn()) {
            let cwr = ev.flags.has(TcpFlags::CWR) && !ev.flags.syn() && flags_signal(conn.handshake.ecn());
            let marks = (ev.ecn == Ecn::Ce) as u32 + cwr as u32;
            self.dirs[d.index()].on_ecn(ev.ts, marks);
        }
        // Whether the receiver's own timing can have held this segment's ACK: not an ACK of
        // two full segments or more (RFC 5681 §4.2: not delayed) that leaves the window open — an ACK advertising a nearly closed
        // window comes when the receiving application reads (RFC 9293 §3.8.6.2.2, receiver
        // SWS avoidance), not when the data arrived.
        //
        // Nor is an ACK prompt that reaches (to within a segment) the right edge of the window the
        // receiver offered before, covering two full segments or more: the data filled
        // its buffer, and a Linux receiver acknowledges more than one full frame at once only
        // when the window's right edge can advance (tcp_input.c, __tcp_ack_snd_check);
        // otherwise the ACK waits until the application reads (tcp_recvmsg ->
        // tcp_cleanup_rbuf). A receiver that acknowledged as data came would have answered
        // every second segment before the window filled (RFC 5681 §4.2). Such an ACK's
        // sample carries the reader's delay, not the path's.
        let mss = conn.mss(d.reverse()) as u64;
        let open = ev.win_bytes.map_or(ev.win_raw > 0, |w| w >= 2 * mss);
        let filled = match (ev.ack, self.right_edge[d.index()]) {
            (Some(a), Some(edge)) => (edge.wrapping_sub(a) as i32) < mss as i32,
            _ => false,
        };
        // Nor one of two full segments or more whose window is smaller, by a segment or
        // more, than the largest this receiver offered: its buffer held data the application
        // had not read (the window is the buffer's free space, RFC 9293 §3.8.6.2.2), and a
        // Linux receiver acknowledges more than one full frame at once only when that does
        // not shrink the window it offered (tcp_input.c, __tcp_ack_snd_check) — else the
        // ACK waits for the delayed-ACK timer or the reader (tcp_cleanup_rbuf). R20
        // slow_reader at the sender: one ACK of seven segments per 35-ms read, 48 of the
        // 64 KiB offered, each 21 ms after the path's 155 ms. Two segments are already more
        // than one full frame (R15 slow_reader at the client: ACKs of two segments held
        // ~33 ms each by a 700 kbit/s reader read as a standing queue).
        // Data out of order takes buffer space too, and the ACK that repairs a hole moves it
        // all to the reader's queue at once: an ACK that reports such data (SACK blocks, RFC
        // 2018), or follows one that did, says nothing of the reader (redundant_stream1 flow
        // 2: a repair's prompt ACK of 184 KB, 96 KB short of the largest window).
        let out_of_order = ev.sack.len > 0 || self.sacked[d.index()];
        let shrunk = match (ev.win_bytes, self.windows.max[d.reverse().index()]) {
            (Some(w), Some(most)) => w + mss <= most && !out_of_order,
            _ => false,
        };
        let held = (filled || shrunk) && ev.acked.acked as u64 >= 2 * mss;
        let ack_prompt = ev.acked.acked as u64 >= 2 * mss && open && !held;
        // A reset's window field advertises nothing (RFC 9293 §3.10.7: the connection is
        // gone): a client's RST with window 0 is no zero window that held the sender.
        if ev.flags.ack() && !ev.flags.rst() {
            // This segment acknowledges the other direction's data (and may reopen its window).
            let data_dir: Dir = d.reverse();
            let dd = conn.dir(data_dir);
            let covers_all = matches!((dd.una, dd.nxt), (Some(u), Some(n)) if !n.is_after(u));
            // The room the window leaves for the sender, as the sender reads the window
            // (its scale may differ from the handshake's: see Connection::effective_scale).
            let data_mss = conn.mss(data_dir) as u64;
            let window = conn
                .effective_scale(d)
                .bytes(ev.win_raw, ev.flags.syn())
                .or((ev.win_raw == 0).then_some(0));
            // With everything acknowledged the sender is paused: by the window when it has no
            // room for a full segment (zero, or shrunk by a reader that fell behind), else by
            // having nothing to send. With data outstanding the segments' own test (below,
            // from the sender's view) tells the window's part.
            // RFC 1122 §4.2.3.4: the sender sends once a full segment fits, or half the
            // largest window the receiver has offered (with everything acknowledged, a
            // window below one MSS that is still that large is no pause of the window's).
            let largest = self.windows.max[data_dir.index()].unwrap_or(u64::MAX);
            let shut = window.map_or(ev.win_raw == 0, |w| w < data_mss.min((largest / 2).max(1)));
            let pause = match (covers_all && dd.unique_bytes > 0 && !ev.flags.syn(), shut) {
                (true, true) => Some(SenderState::ReceiverWindow),
                (true, false) => Some(SenderState::Idle),
                _ => None,
            };
            let acc = &mut self.dirs[data_dir.index()];
            // The first loss's recovery ends the start-up when the cumulative ACK reaches its
            // recovery point; without SACK, at its first partial ACK: from there a NewReno
            // sender repairs one hole a round trip (RFC 6582 §3.2 step 5), a pace its loss
            // recovery sets for as long as the holes last, not slow start's overshoot (P45
            // tbf_shaper: a 3.5 s recovery of a 5 s transfer taken for its start-up).
            if let (Some(r), None, Some(una)) = (acc.first_recover, acc.first_recovered, dd.una) {
                let partial = ev.acked.acked > 0 && dd.in_reno_recovery();
                if !una.is_before(r) || partial {
                    acc.first_recovered = Some(ev.ts);
                }
            }
            acc.smoothed_round = conn.rtt.smoothed().max(conn.rtt.base_end_to_end());
            // An ECN echo cuts the congestion window (RFC 3168 §6.1.2), a SACK block or a
            // duplicate ACK may start a recovery (RFC 6675): no proof survives them.
            if (ev.flags.has(TcpFlags::ECE) && !ev.flags.syn()) || ev.sack.len > 0 || ev.acked.duplicate {
                acc.flight_proof.cut(ev.ts, acc.smoothed_round);
            }
            if ev.acked.raised {
                acc.max_in_network = acc.max_in_network.max(std::mem::take(&mut acc.pending_in_network));
            }
            let was_paused = !acc.pauses.is_empty();
            // Delivery reported after a retransmission timer's worth of silence with data
            // outstanding (an outage, a lost connection's last gasp) is what went through
            // across that silence, which the stall reports: it is not delivered in the bin
            // that holds its ACK, and no rate counts it there (16 MiB acknowledged at once
            // after 2.6 s read 116 Gbit/s over the steady millisecond that held the ACK).
            let across_stall = ev.acked.delivered > 0
                && acc
                    .last_delivery
                    .is_some_and(|(t, left)| left && ev.ts - t >= conn.rtt.rto_bound());
            if ev.acked.delivered > 0 {
                acc.last_delivery = Some((ev.ts, !covers_all));
            }
            let delivered = if across_stall { 0 } else { ev.acked.delivered as u64 };
            // A sample spans the round trip, and the clock's resolution many times over. It
            // takes the delivery as reported, across a stall too: its interval then spans the
            // silence, and the rate stays what the path carried (`delivered` above zeroes it
            // for the bins only).
            let min_interval = conn.rtt.base_round_trip().map(|r| r.max(min_span));
            acc.rate_samples
                .on_ack(ev.ts, ev.ack, ev.sack.iter(), ev.acked.delivered as u64, min_interval);
            if let Some(tsval) = ev.tsval.filter(|_| !ev.flags.syn()) {
                acc.receiver_clock
                    .on_ack(ev.ts, tsval, delivered, conn.rtt.base_end_to_end());
            }
            if let Some(round) = conn.rtt.base_end_to_end() {
                acc.drop_pace.on_ack(
                    ev.ts,
                    delivered,
                    ev.acked.new_hole,
                    ev.acked.survivor_at,
                    ev.acked.raised,
                    round,
                    min_span,
                );
            }
            if ev.acked.delivered > 0 || pause.is_some() || was_paused {
                let lp = conn.sender_loop(data_dir);
                let round = conn.rtt.base_end_to_end();
                // An ACK the receiver held (for its reader, its delayed-ACK timer) came back
                // later than its data left the bottleneck by the hold: neither it nor the one
                // after it times the bottleneck's service (R8 slow_reader at the sender, a
                // 2.5 Mbit/s reader: the held ACKs' gaps, which pass the test by the hold,
                // made the queued mode the reader's 2.2 Mbit/s on a 55 Mbit/s link).
                let prompt_pair = !held && !acc.last_report_held;
                let queued = prompt_pair
                    && match (
                        acc.last_report,
                        acc.rate_samples.latest_sent,
                        conn.rtt.through(Connection::sender_end(d)).base(),
                    ) {
                        (Some(prev), Some(sent), Some(receiver_loop)) if ev.acked.delivered > 0 => {
                            queued_behind(prev, sent, receiver_loop)
                        }
                        _ => true,
                    };
                acc.on_ack(
                    ev.ts,
                    ev.ack.map(SeqNum),
                    data_mss,
                    delivered,
                    ev.acked.delivered as u64,
                    pause,
                    lp,
                    round,
                    SampleFloor::new(min_span, data_mss),
                    queued,
                );
                if ev.acked.delivered > 0 {
                    acc.last_report_held = held;
                }
            }
            // Room the sender did not use (see `UnusedRoom`).
            let outstanding = match (dd.una, dd.nxt) {
                (Some(u), Some(n)) => n.bytes_after(u) as u64,
                _ => 0,
            };
            if !covers_all
                && window.is_some_and(|w| w >= outstanding + data_mss)
                && ev.acked.acked as u64 >= data_mss
                && !ev.acked.duplicate
                && ev.sack.len == 0
                && !acc.retransmitted
                && acc.last_data.is_some()
            {
                let at = ev.ts + conn.sender_loop(data_dir);
                let room = &mut acc.unused_room;
                room.round = acc.smoothed_round;
                room.first.get_or_insert(at);
                if outstanding * 2 < acc.last_flight {
                    room.certain.get_or_insert(at);
                }
                let proof = acc.flight_proof.at(ev.ts, acc.base_round);
                if let (Some(proof), Some(w)) = (proof, window) {
                    if undeferred(outstanding, proof, w, data_mss) {
                        room.undeferred.get_or_insert(at);
                    }
                }
            }
            // The window left unused in recovery, as this ACK changed the pipe.
            let pipe = outstanding.saturating_sub(dd.not_in_network(data_mss as u32));
            acc.on_recovery_ack(
                ev.ts + conn.sender_loop(data_dir),
                dd.in_recovery(),
                pipe,
                outstanding,
                window,
                data_mss,
            );
        }
        // A data/ACK sample is timed by the ACK, whether or not data rides on it: a receiver
        // may hold an ACK up to 500 ms for data to carry it (RFC 1122 §4.2.3.2), and the data
        // that carries it may be the application's answer, as late as the application was.
        // A timestamp echo on new data times the loop through its sender: the ACK clock
        // (prompt) unless the data waited on the application.
        let ack_sample_prompt = ack_prompt;
        // Data the far end's held ACK released echoes that ACK's stamp: its loop holds the
        // same wait (R20 slow_reader at the sender: each burst after a reader's ACK).
        let echo_prompt = if ev.len > 0 {
            ev.send.new_bytes > 0 && !waited && !(ev.echo.is_some() && self.ack_held[d.reverse().index()] == ev.echo)
        } else {
            ack_prompt
        };
        if ev.flags.ack() && !ev.flags.rst() {
            self.ack_held[d.index()] = ev.tsval.filter(|_| held);
            self.sacked[d.index()] = ev.sack.len > 0;
            self.right_edge[d.index()] = match (ev.ack, ev.win_bytes) {
                (Some(a), Some(w)) => Some(a.wrapping_add(w.min(u32::MAX as u64) as u32)),
                _ => None,
            };
        }
        // Two plain tests: an array of both options, iterated, copied both on every segment.
        if let Some(s) = ev.ack_rtt {
            for acc in &mut self.dirs {
                acc.on_rtt(ev.ts, s.end_to_end, ack_sample_prompt);
            }
        }
        if let Some(s) = ev.ts_rtt {
            for acc in &mut self.dirs {
                acc.on_rtt(ev.ts, s.end_to_end, echo_prompt);
            }
        }
        if let Some(b) = ev.loop_bound {
            for acc in &mut self.dirs {
                acc.on_loop_bound(ev.ts, b);
            }
        }
        // Last, once this segment's ACK has left the other direction's sender idle (an
        // answer carries the ACK of the request it answers).
        if ev.send.new_bytes > 0 && !ev.send.keep_alive {
            let other = &mut self.dirs[d.reverse().index()];
            let idle = other.pauses.iter().any(|&(_, s)| s == SenderState::Idle);
            other.turns.on_peer_data(ev.ts, idle);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::decode::decode;
    use crate::flow::Endpoint;
    use crate::testkit::TcpPacket;

    /// R8 rcvbuf_192k at the sender: a 244,960 B window, the flight stopping 1,696 B short
    /// of it each round (room for a segment) though it had filled that window before: the
    /// window held it (the kernel counted 100% rwnd-limited; the room alone said 70%).
    #[test]
    fn a_sender_that_filled_this_window_before_and_stops_short_of_it_is_held_by_it() {
        assert!(deferred_for_window(244_960, 243_264, 244_960));
        // It filled only a smaller window: its congestion window may be what stopped it.
        assert!(!deferred_for_window(244_960, 243_264, 200_000));
        // Nothing filled since its last loss or pause.
        assert!(!deferred_for_window(244_960, 243_264, 0));
        // A third of the window free: Linux sends at once, this is no deferral.
        assert!(!deferred_for_window(90_000, 60_000, 90_000));
        assert!(deferred_for_window(90_000, 60_001, 90_000));
        assert!(!deferred_for_window(0, 0, 90_000));
    }

    /// R26 rcvbuf_16k at the sender (140 Mbit/s, least loop 9.11 ms): a window-held sender
    /// sends a pair of 1448-byte segments on each ACK, a millisecond apart.
    #[test]
    fn only_data_that_queued_behind_the_data_before_it_gives_the_links_spacing() {
        let at = |us: i64| Timestamp(1_000_000_000_000 + us * 1_000);
        let lp = Span::from_micros(9_110);
        // An ACK of a pair sent 1 ms after the pair before: it crossed an idle link, and the
        // gap is the sender's (2896 B a millisecond: 23 Mbit/s).
        assert!(!queued_behind(at(9_200), at(1_000), lp));
        // The ACK of a pair's second segment, 94 µs after the ACK of its first: the two left
        // together, the first came back in a loop a little over the least, the second
        // waited behind it (123 Mbit/s: the link's).
        assert!(queued_behind(at(10_115), at(1_000), lp));
        // A window's burst sent at once: every ACK after the first is of queued data.
        assert!(queued_behind(at(10_200), at(1_000), lp));
        // One-segment ACKs of data paced a segment per 200 µs through an idle link: each
        // came back the least loop after it left, 200 µs after the one before.
        assert!(!queued_behind(at(10_110), at(1_200), lp));
        // A standing queue: every ACK is of queued data.
        assert!(queued_behind(at(30_000), at(5_000), lp));
    }

    /// R25 app_onoff at the sender: 238 600 B sent in the last round, the ACKs of the burst
    /// before leave 158 960 B outstanding under a 841 728 B window: a third of both free,
    /// room Linux sends into at once.
    #[test]
    fn room_of_a_third_of_both_windows_is_never_deferred() {
        assert!(undeferred(158_960, 238_600, 841_728, 1448));
        assert!(!undeferred(160_408, 238_600, 841_728, 1448));
        // The receiver's window the smaller: its third decides.
        assert!(!undeferred(100_000, 238_600, 140_000, 1448));
        // A window of three segments: pacing may space them a third of a round trip apart.
        assert!(!undeferred(0, 3 * 1448, 841_728, 1448));
        assert!(undeferred(0, 4 * 1448, 841_728, 1448));
    }

    #[test]
    fn a_flight_proves_the_window_for_a_round_outside_recovery() {
        let t = |ms: i64| Timestamp(0) + Span::from_nanos(ms * 1_000_000);
        let round = Some(Span::from_nanos(100_000_000));
        let mut p = FlightProof::default();
        p.on_flight(50_000, t(0), round);
        p.on_flight(30_000, t(40), round);
        assert_eq!(p.at(t(90), round), Some(50_000));
        // Older than a round: the window may have been validated down (RFC 7661).
        assert_eq!(p.at(t(101), round), None);
        p.on_flight(30_000, t(120), round);
        assert_eq!(p.at(t(130), round), Some(30_000));
        // A loss: no proof, and none for a round while recovery brings the window down.
        p.cut(t(140), round);
        assert_eq!(p.at(t(141), round), None);
        p.on_flight(60_000, t(200), round);
        assert_eq!(p.at(t(201), round), None);
        p.on_flight(40_000, t(241), round);
        assert_eq!(p.at(t(250), round), Some(40_000));
    }

    const C: &str = "127.0.0.1:40000";
    const S: &str = "127.0.0.1:7000";

    /// Tracks `p` at `ms` milliseconds (from 7 ns) and accounts it.
    fn feed(conn: &mut Connection, acc: &mut Accumulator, ms: f64, dir: Dir, p: TcpPacket) {
        let (link, bytes) = p.build();
        let seg = decode(link, &bytes).unwrap();
        let ev = conn.track(&seg, dir, 0, Timestamp(7) + Span::from_nanos((ms * 1e6) as i64));
        acc.on_segment(conn, &ev);
    }

    /// Data of 1000 B from C and ACKs from S, each offering `window`.
    fn data_of(window: u16) -> impl Fn(u32) -> TcpPacket {
        move |seq| TcpPacket::new(C, S).seq(seq).ack(1).window(window).payload_len(1000)
    }

    fn ack_of(window: u16) -> impl Fn(u32) -> TcpPacket {
        move |a| TcpPacket::new(S, C).seq(1).ack(a).window(window)
    }

    /// A SACK connection's handshake from C to S (MSS 1000, `window` both ways, 40 ms), then
    /// eight segments at 41 ms: the next sequence number.
    fn sack_start(send: &mut dyn FnMut(f64, Dir, TcpPacket), window: u16) -> u32 {
        let syn = TcpPacket::new(C, S).syn().seq(0).window(window).mss(1000).sack_perm();
        send(0.0, Dir::C2S, syn);
        let syn_ack = TcpPacket::new(S, C)
            .syn()
            .seq(0)
            .ack(1)
            .window(window)
            .mss(1000)
            .sack_perm();
        send(40.0, Dir::S2C, syn_ack);
        send(40.01, Dir::C2S, TcpPacket::new(C, S).seq(1).ack(1).window(window));
        let data = data_of(window);
        let mut next = 1u32;
        for i in 0..8 {
            send(41.0 + 0.01 * i as f64, Dir::C2S, data(next));
            next += 1000;
        }
        next
    }

    /// A connection from C to S at time zero, and its accumulator.
    fn fresh() -> (Connection, Accumulator) {
        (
            Connection::new(0, ep(C), ep(S), true, 1, Timestamp(0)),
            Accumulator::default(),
        )
    }

    fn ep(s: &str) -> Endpoint {
        let a: std::net::SocketAddr = s.parse().unwrap();
        Endpoint {
            addr: a.ip(),
            port: a.port(),
        }
    }

    /// At the sender, a 10-segment window (MSS 1000, no scaling): it fills the window once,
    /// then after every ACK of two segments sends two and stops a segment short of the
    /// window's edge (Linux's TSO deferral), waiting 1 ms for the next ACK. Those waits are
    /// the window's. Unless the sender cut its congestion window for an ECN echo (CWR on
    /// its next segment) after filling it: then nothing proves the window the smaller, and
    /// only the first wait (40 ms, the window full) of the 240 ms is the window's.
    fn short_of_a_filled_window(cwr: bool) -> f64 {
        let (mut conn, mut acc) = fresh();
        let mut send = |ms: f64, dir: Dir, p: TcpPacket| feed(&mut conn, &mut acc, ms, dir, p);
        send(0.0, Dir::C2S, TcpPacket::new(C, S).syn().seq(0).window(10000).mss(1000));
        send(
            40.0,
            Dir::S2C,
            TcpPacket::new(S, C).syn().seq(0).ack(1).window(10000).mss(1000),
        );
        send(40.01, Dir::C2S, TcpPacket::new(C, S).seq(1).ack(1).window(10000));
        let data = |seq: u32, first_after_fill: bool| {
            let p = TcpPacket::new(C, S).seq(seq).ack(1).window(10000).payload_len(1000);
            if cwr && first_after_fill {
                p.flags(0x80 | 0x10)
            } else {
                p
            }
        };
        let mut next = 1u32;
        for i in 0..10 {
            send(41.0 + 0.01 * i as f64, Dir::C2S, data(next, false));
            next += 1000;
        }
        let mut acked = 1u32;
        for n in 0..200u32 {
            let t = 81.0 + n as f64;
            acked += 2000;
            send(t, Dir::S2C, TcpPacket::new(S, C).seq(1).ack(acked).window(10000));
            // Two segments after each ACK, one after the first: a segment's room stays.
            for k in 0..if n == 0 { 1 } else { 2 } {
                send(t + 0.05 + 0.01 * k as f64, Dir::C2S, data(next, n == 0));
                next += 1000;
            }
        }
        let (busy, rwnd, _) = acc.dirs[Dir::C2S.index()].timeline.as_ref().unwrap().full().totals();
        rwnd as f64 / (busy + rwnd) as f64
    }

    #[test]
    fn stops_short_of_a_window_the_sender_filled_are_the_windows_unless_it_cut_its_own() {
        let held = short_of_a_filled_window(false);
        assert!(held > 0.9, "receiver window {held:.3} of the time");
        let cut = short_of_a_filled_window(true);
        assert!(cut < 0.5, "receiver window {cut:.3} of the time after a CWR");
    }

    /// At the sender, a 10-segment window (MSS 1000, SACK) and a congestion window of 8
    /// segments, ACK-clocked two at a time. A segment is lost: three duplicate ACKs SACK six
    /// segments, the sender retransmits it and sends two new segments, which bring what is
    /// outstanding to the window's edge — with six of them SACKed, out of the pipe its
    /// congestion window counts (RFC 6675 §5). After the repair it runs at 8 segments
    /// again. Nothing proved a congestion window as large as the receiver's: its stops short
    /// of the window are its own, not the window's (R27 ipv6_rwnd at the client read 18% of
    /// the transfer as held by the window, where the sender's kernel counted 0.5%).
    #[test]
    fn a_window_filled_with_sacked_data_in_recovery_proves_no_congestion_window() {
        let (mut conn, mut acc) = fresh();
        let mut send = |ms: f64, dir: Dir, p: TcpPacket| feed(&mut conn, &mut acc, ms, dir, p);
        let (data, ack) = (data_of(10000), ack_of(10000));
        let mut next = sack_start(&mut send, 10000);
        let mut acked = 1u32;
        let steady =
            |send: &mut dyn FnMut(f64, Dir, TcpPacket), from: f64, rounds: u32, next: &mut u32, acked: &mut u32| {
                for n in 0..rounds {
                    let t = from + n as f64;
                    *acked += 2000;
                    send(t, Dir::S2C, ack(*acked));
                    for k in 0..2 {
                        send(t + 0.05 + 0.01 * k as f64, Dir::C2S, data(*next));
                        *next += 1000;
                    }
                }
            };
        steady(&mut send, 81.0, 50, &mut next, &mut acked);
        // The segment at `acked` is lost; the seven after it arrive.
        let lost = acked;
        for k in 1..=3u32 {
            let sacked = ack(lost).sack(&[(lost + 1000, lost + 1000 + 2000 * k)]);
            send(131.0 + 0.2 * k as f64, Dir::S2C, sacked);
        }
        send(131.65, Dir::C2S, data(lost));
        for k in 0..2 {
            send(131.7 + 0.01 * k as f64, Dir::C2S, data(next));
            next += 1000;
        }
        // The repair: everything up to the two new segments acknowledged, and the flight
        // of 8 segments again.
        acked = lost + 8000;
        send(132.6, Dir::S2C, ack(acked));
        for k in 0..6 {
            send(132.65 + 0.01 * k as f64, Dir::C2S, data(next));
            next += 1000;
        }
        steady(&mut send, 133.6, 150, &mut next, &mut acked);
        let (busy, rwnd, _) = acc.dirs[Dir::C2S.index()].timeline.as_ref().unwrap().full().totals();
        let share = rwnd as f64 / (busy + rwnd) as f64;
        assert!(share < 0.05, "receiver window {share:.3} of the time");
    }

    /// At the sender: 8-segment rounds, then a loss whose SACKs empty the pipe while the
    /// sender sends nothing new, its last new data before the loss; the repair 200 ms later
    /// acknowledges everything. The sender's FIN at `fin_ms` (if any). The congestion
    /// window's time left unused over the transfer (ns).
    fn unused_after_last_data(fin_ms: Option<f64>) -> u64 {
        let (mut conn, mut acc) = fresh();
        let mut send = |ms: f64, dir: Dir, p: TcpPacket| feed(&mut conn, &mut acc, ms, dir, p);
        let (data, ack) = (data_of(60000), ack_of(60000));
        let mut next = sack_start(&mut send, 60000);
        let mut acked = 1u32;
        for n in 0..30 {
            let t = 81.0 + 40.0 * n as f64;
            acked += 2000;
            send(t, Dir::S2C, ack(acked));
            for k in 0..2 {
                send(t + 0.05 + 0.01 * k as f64, Dir::C2S, data(next));
                next += 1000;
            }
        }
        // The segment at `acked` is lost; the seven after it arrive, and the sender, its
        // send buffer full, sends nothing new.
        let lost = acked;
        let t = 81.0 + 40.0 * 30.0;
        for k in 1..=7u32 {
            send(
                t + k as f64,
                Dir::S2C,
                ack(lost).sack(&[(lost + 1000, lost + 1000 + 1000 * k)]),
            );
        }
        send(t + 3.5, Dir::C2S, data(lost));
        send(t + 200.0, Dir::S2C, ack(next));
        if let Some(fin) = fin_ms {
            send(
                t + fin,
                Dir::C2S,
                TcpPacket::new(C, S).seq(next).ack(1).window(60000).fin(),
            );
            send(t + fin + 40.0, Dir::S2C, ack(next + 1));
        }
        acc.dirs[Dir::C2S.index()].close(Timestamp(7) + Span::from_nanos(((t + 400.0) * 1e6) as i64));
        let tl = acc.dirs[Dir::C2S.index()].timeline.as_ref().unwrap().full();
        tl.bins.iter().map(|b| b.unused_window_ns).sum()
    }

    /// Until its FIN the application had not finished: the time from the last new data to
    /// it, while the recovery's SACKs left the window unused, is the send buffer's (P45
    /// cross_onoff: the last new data +1.84 s, the FIN +5.15 s, the kernel's t_app_stop).
    /// After the FIN it is the repair of what was sent. A connection not closed when the
    /// capture ended had not finished either (P45 jitter_fifo: the capture ended 0.3 s
    /// before the application, blocked since +2.2 s, wrote again).
    #[test]
    fn the_window_left_unused_after_the_last_data_counts_until_the_fin() {
        let closed_later = unused_after_last_data(Some(300.0));
        // Most of the ~200 ms from the loss to the repair, the pipe near empty.
        assert!(closed_later > 100_000_000, "{closed_later} ns");
        assert_eq!(unused_after_last_data(None), closed_later);
        // A FIN sent in the middle of the recovery ends the send buffer's time there.
        let closed_midway = unused_after_last_data(Some(100.0));
        assert!(
            closed_midway > 0 && closed_midway < closed_later,
            "{closed_midway} vs {closed_later}"
        );
    }

    /// At the sender, a receiver that acknowledges `per_ack` segments at a time, 120 ms
    /// after the last of them left (100 ms of path). Offering `window` of the 20 000 B it
    /// offered at first: the share of the bins with an RTT sample that have a prompt one.
    fn prompt_share(window: u16, per_ack: u32) -> f64 {
        let (mut conn, mut acc) = fresh();
        let mut send = |ms: f64, dir: Dir, p: TcpPacket| feed(&mut conn, &mut acc, ms, dir, p);
        send(0.0, Dir::C2S, TcpPacket::new(C, S).syn().seq(0).window(20000).mss(1000));
        send(
            100.0,
            Dir::S2C,
            TcpPacket::new(S, C).syn().seq(0).ack(1).window(20000).mss(1000),
        );
        send(100.01, Dir::C2S, TcpPacket::new(C, S).seq(1).ack(1).window(20000));
        let mut sent_at = Vec::new();
        let mut next = 1u32;
        for _ in 0..20 {
            sent_at.push(101.0);
            send(
                101.0,
                Dir::C2S,
                TcpPacket::new(C, S).seq(next).ack(1).payload_len(1000).window(20000),
            );
            next += 1000;
        }
        let mut acked = 1u32;
        for n in 0..(420 / per_ack) as usize {
            let last = sent_at[(n + 1) * per_ack as usize - 1];
            let t = last + 120.0;
            acked += 1000 * per_ack;
            send(t, Dir::S2C, TcpPacket::new(S, C).seq(1).ack(acked).window(window));
            let edge = acked + u32::from(window);
            let mut k = 0.0;
            while next < edge {
                sent_at.push(t + 0.05 + k);
                send(
                    t + 0.05 + k,
                    Dir::C2S,
                    TcpPacket::new(C, S).seq(next).ack(1).payload_len(1000).window(20000),
                );
                next += 1000;
                k += 0.01;
            }
        }
        let tl = acc.dirs[Dir::C2S.index()].timeline.as_ref().unwrap().full();
        let sampled = tl.bins.iter().filter(|b| b.rtt_min_ns.is_some()).count();
        let prompt = tl.bins.iter().filter(|b| b.rtt_prompt_min_ns.is_some()).count();
        assert!(sampled > 10, "{sampled} bins with samples");
        prompt as f64 / sampled as f64
    }

    /// R20 slow_reader at the sender: a reader behind leaves data in the buffer, so the
    /// window it offers is below its largest, and a Linux receiver then acknowledges
    /// several segments at once only when the reader frees room: those samples carry the
    /// reader's wait. The same ACKs with the window at its largest (a GRO receiver's stretch
    /// ACKs) are prompt.
    #[test]
    fn stretch_acks_of_a_window_below_its_largest_wait_for_the_reader() {
        let held = prompt_share(13000, 7);
        assert!(held < 0.05, "prompt in {held:.2} of the bins");
        let open = prompt_share(20000, 7);
        assert!(open > 0.9, "prompt in {open:.2} of the bins");
    }

    /// The same for an ACK of two segments: Linux sends it at once only when the window
    /// does not shrink (`__tcp_ack_snd_check`: more than one full frame received and
    /// `__tcp_select_window() >= rcv_wnd`). R15 slow_reader at the client: a 700 kbit/s
    /// reader's ACKs of two segments, each ~33 ms after the data, a window of 7-8 KiB of the
    /// 42 KiB offered, read as a standing queue of 33 ms, the reader's pace as the
    /// bottleneck's and the flow as bottleneck-limited.
    #[test]
    fn acks_of_two_segments_of_a_window_below_its_largest_wait_for_the_reader() {
        let held = prompt_share(13000, 2);
        assert!(held < 0.05, "prompt in {held:.2} of the bins");
        let open = prompt_share(20000, 2);
        assert!(open > 0.9, "prompt in {open:.2} of the bins");
    }

    /// A dialogue at the client: a 1000-byte request, its ACK, the server's answer 100 ms
    /// later, the next request 1 ms after the answer; then one pause with no answer in it
    /// (the client's own application). The pauses the answers ended are the server's turns.
    #[test]
    fn a_request_waiting_for_its_answer_is_the_other_ends_turn() {
        let (mut conn, mut acc) = fresh();
        let mut send = |ms: f64, dir: Dir, p: TcpPacket| feed(&mut conn, &mut acc, ms, dir, p);
        send(0.0, Dir::C2S, TcpPacket::new(C, S).syn().seq(0).window(20000).mss(1000));
        send(
            1.0,
            Dir::S2C,
            TcpPacket::new(S, C).syn().seq(0).ack(1).window(20000).mss(1000),
        );
        send(1.01, Dir::C2S, TcpPacket::new(C, S).seq(1).ack(1).window(20000));
        let (mut cseq, mut sseq) = (1u32, 1u32);
        let mut t = 2.0;
        for i in 0..6 {
            send(
                t,
                Dir::C2S,
                TcpPacket::new(C, S).seq(cseq).ack(sseq).window(20000).payload_len(1000),
            );
            cseq += 1000;
            send(
                t + 1.0,
                Dir::S2C,
                TcpPacket::new(S, C).seq(sseq).ack(cseq).window(20000),
            );
            if i < 5 {
                send(
                    t + 101.0,
                    Dir::S2C,
                    TcpPacket::new(S, C).seq(sseq).ack(cseq).window(20000).payload_len(200),
                );
                sseq += 200;
                send(
                    t + 101.5,
                    Dir::C2S,
                    TcpPacket::new(C, S).seq(cseq).ack(sseq).window(20000),
                );
                t += 102.0;
            } else {
                // No answer: the client's own pause of 300 ms.
                t += 301.0;
            }
        }
        send(
            t,
            Dir::C2S,
            TcpPacket::new(C, S).seq(cseq).ack(sseq).window(20000).payload_len(1000),
        );
        let s = acc.dirs[Dir::C2S.index()].turns.summary().unwrap();
        assert_eq!((s.answered, s.pauses), (5, 6), "{s:?}");
        let m = s.median_answer_s.unwrap();
        assert!((m - 0.101).abs() < 0.002, "median answer {m}");
        assert!(s.answered_share() > 0.55 && s.answered_share() < 0.7, "{s:?}");
    }

    /// An echo over loopback: MSS 65 495, windows of 64 KiB (raw 502 << 7), one-byte
    /// messages each echoed. The sender never waits for the window: its next segment is one
    /// byte, and a window of 64 KiB holds half the largest window ever offered (RFC 1122
    /// §4.2.3.4) even though no 65 495-byte segment fits it. Before, every one of its
    /// segments was "the next full segment does not fit": receiver-window-limited 100%.
    #[test]
    fn a_window_below_one_mss_does_not_hold_a_sender_of_small_segments() {
        let (mut conn, mut acc) = fresh();
        let mut send = |ms: f64, dir: Dir, p: TcpPacket| feed(&mut conn, &mut acc, ms, dir, p);
        send(
            0.0,
            Dir::C2S,
            TcpPacket::new(C, S).syn().seq(0).window(65495).mss(65495).wscale(7),
        );
        send(
            0.05,
            Dir::S2C,
            TcpPacket::new(S, C)
                .syn()
                .seq(0)
                .ack(1)
                .window(65483)
                .mss(65495)
                .wscale(7),
        );
        send(0.1, Dir::C2S, TcpPacket::new(C, S).seq(1).ack(1).window(512));
        for i in 0..40u32 {
            let t = 1.0 + 10.0 * i as f64;
            send(
                t,
                Dir::C2S,
                TcpPacket::new(C, S).seq(1 + i).ack(1 + i).window(512).payload_len(1),
            );
            send(
                t + 0.05,
                Dir::S2C,
                TcpPacket::new(S, C).seq(1 + i).ack(2 + i).window(502).payload_len(1),
            );
            send(
                t + 0.08,
                Dir::C2S,
                TcpPacket::new(C, S).seq(2 + i).ack(2 + i).window(512),
            );
        }
        let dacc = &mut acc.dirs[Dir::C2S.index()];
        let (busy, rwnd, idle) = dacc.timeline.as_ref().unwrap().full().totals();
        assert_eq!(rwnd, 0, "busy {busy} ns, rwnd {rwnd} ns, idle {idle} ns");
        assert_eq!(dacc.window_full_segments, 0);
        assert!(idle > busy, "busy {busy} ns, idle {idle} ns: an echo waits on its peer");
    }

    /// A handshake with timestamps, MSS 1000 and the client's window `window` (unscaled),
    /// the SYN/ACK at `at` ms and the client's ACK 0.1 ms after it.
    fn stamped_handshake(conn: &mut Connection, acc: &mut Accumulator, window: u16, at: f64) {
        let syn = TcpPacket::new(C, S).syn().seq(0).window(window).mss(1000).ts(1, 0);
        feed(conn, acc, 0.0, Dir::C2S, syn);
        let syn_ack = TcpPacket::new(S, C)
            .syn()
            .seq(0)
            .ack(1)
            .window(65000)
            .mss(1000)
            .ts(10, 1);
        feed(conn, acc, at, Dir::S2C, syn_ack);
        let ack = TcpPacket::new(C, S).seq(1).ack(1).window(window).ts(2, 10);
        feed(conn, acc, at + 0.1, Dir::C2S, ack);
    }

    /// Next to the receiver of a sender held by an 8-segment window (RTT 50 ms, timestamps),
    /// whose bursts the path spreads unevenly: 0.1 ms apart, but 5 ms in the middle (a
    /// jittery link).
    /// Each burst's segments carry one TSval and echo one ACK: they left the sender
    /// together, so the 5 ms gap is the path's and take the state of the burst's end —
    /// the window — not "busy" (P1 lfp_oldrmem's receiver read 71% receiver window against
    /// its sender's 96%).
    #[test]
    fn a_burst_the_path_spread_keeps_the_state_its_sender_had() {
        let (mut conn, mut acc) = fresh();
        stamped_handshake(&mut conn, &mut acc, 8000, 40.0);
        let mut send = |ms: f64, dir: Dir, p: TcpPacket| feed(&mut conn, &mut acc, ms, dir, p);
        let mut acked = 1u32;
        for k in 0..60u32 {
            let t0 = 100.0 + 50.0 * k as f64;
            let mut t = t0;
            for j in 0..8u32 {
                let seq = acked + 1000 * j;
                send(
                    t,
                    Dir::S2C,
                    TcpPacket::new(S, C)
                        .seq(seq)
                        .ack(1)
                        .window(65000)
                        .payload_len(1000)
                        .ts(100 + k, 2 + k),
                );
                t += if j == 3 { 5.0 } else { 0.1 };
            }
            acked += 8000;
            send(
                t + 0.05,
                Dir::C2S,
                TcpPacket::new(C, S).seq(1).ack(acked).window(8000).ts(3 + k, 100 + k),
            );
        }
        let dacc = &mut acc.dirs[Dir::S2C.index()];
        let (busy, rwnd, _) = dacc.timeline.as_ref().unwrap().full().totals();
        let share = rwnd as f64 / (busy + rwnd) as f64;
        assert!(
            share > 0.97,
            "receiver window {share:.3} (busy {busy} ns, rwnd {rwnd} ns)"
        );
    }

    /// A sender held by a 16-segment window on a 50 ms path, its bursts 0.25 ms a segment
    /// apart (32 Mbit/s), each burst's segments one TSval and one echo: the wait for the
    /// window between two bursts is no spacing, so no arrival sample spans it. Before, the
    /// train after each wait began at the last segment before it: one sample in sixteen
    /// read some 155 kbit/s.
    #[test]
    fn no_arrival_sample_spans_the_wait_for_the_window() {
        let (mut conn, mut acc) = fresh();
        stamped_handshake(&mut conn, &mut acc, 16000, 50.0);
        let mut send = |ms: f64, dir: Dir, p: TcpPacket| feed(&mut conn, &mut acc, ms, dir, p);
        let mut acked = 1u32;
        for k in 0..40u32 {
            let t0 = 100.0 + 55.0 * k as f64;
            for j in 0..16u32 {
                send(
                    t0 + 0.25 * j as f64,
                    Dir::S2C,
                    TcpPacket::new(S, C)
                        .seq(acked + 1000 * j)
                        .ack(1)
                        .window(65000)
                        .payload_len(1000)
                        .ts(100 + k, 2 + k),
                );
            }
            acked += 16000;
            send(
                t0 + 54.0,
                Dir::C2S,
                TcpPacket::new(C, S).seq(1).ack(acked).window(16000).ts(3 + k, 100 + k),
            );
        }
        let arrivals = &acc.dirs[Dir::S2C.index()].arrivals;
        let share = arrivals.share_at_least(2e6);
        assert!(arrivals.samples() > 500, "{} samples", arrivals.samples());
        assert!(share > 0.99, "{share:.3} of the bytes at 16 Mbit/s or more");
    }

    /// Next to the receiver of a sender that writes 16 segments every 700 ms over a 40 ms
    /// path (timestamps, the sender's clock 1 kHz). Each burst is sent ACK-clocked, two
    /// segments per ACK, into a queue that it builds itself: the n-th pair of a burst meets
    /// 4n ms of it, the first segment of the next burst none. The sender idles from the ACK
    /// of all (its arrival there) until its next write. The sender's stamps show the queue
    /// each next segment met, so the idle time seen is the sender's.
    #[test]
    fn the_senders_stamps_place_an_idle_wait_behind_a_queue_of_its_own() {
        let run = |stamped: bool| {
            let (mut conn, mut acc) = (
                Connection::new(0, ep(C), ep(S), true, 1, Timestamp(0)),
                Accumulator::default(),
            );
            let mut send = |ms: f64, dir: Dir, p: TcpPacket| feed(&mut conn, &mut acc, ms, dir, p);
            let ts = |p: TcpPacket, val: f64, echo: f64| if stamped { p.ts(val as u32, echo as u32) } else { p };
            send(
                0.0,
                Dir::C2S,
                ts(TcpPacket::new(C, S).syn().seq(0).window(65000).mss(1000), 1.0, 0.0),
            );
            send(
                40.0,
                Dir::S2C,
                ts(
                    TcpPacket::new(S, C).syn().seq(0).ack(1).window(65000).mss(1000),
                    20.0,
                    1.0,
                ),
            );
            send(
                40.01,
                Dir::C2S,
                ts(TcpPacket::new(C, S).seq(1).ack(1).window(65000), 40.0, 20.0),
            );
            let mut seq = 1u32;
            let mut last_client_ts = 40.0;
            let mut true_idle = 0.0;
            let mut span = 0.0;
            for k in 0..12 {
                // The sender writes at `w` (its clock = capture time here less 20 ms).
                let w = 100.0 + 700.0 * k as f64;
                let mut sent_at = w;
                for n in 0..8u32 {
                    let queue = 4.0 * n as f64;
                    for j in 0..2u32 {
                        let arrive = sent_at + 20.0 + queue + 0.1 * j as f64;
                        send(
                            arrive,
                            Dir::S2C,
                            ts(
                                TcpPacket::new(S, C).seq(seq).ack(1).window(65000).payload_len(1000),
                                sent_at,
                                last_client_ts,
                            ),
                        );
                        seq += 1000;
                    }
                    let ack_at = sent_at + 20.0 + queue + 0.15;
                    send(
                        ack_at,
                        Dir::C2S,
                        ts(TcpPacket::new(C, S).seq(1).ack(seq).window(65000), ack_at, sent_at),
                    );
                    last_client_ts = ack_at;
                    // The ACK reaches the sender 20 ms later and releases the next pair.
                    sent_at = ack_at + 20.0;
                }
                // The last ACK reached the sender at `sent_at`; it idles until the next write.
                true_idle += w + 700.0 - sent_at;
                span += 700.0;
            }
            let dacc = &acc.dirs[Dir::S2C.index()];
            let (busy, rwnd, idle) = dacc.timeline.as_ref().unwrap().full().totals();
            (idle as f64 / (busy + rwnd + idle) as f64, true_idle / span)
        };
        let (seen, truth) = run(true);
        assert!(
            (seen - truth).abs() < 0.05,
            "idle {seen:.3} against the sender's {truth:.3}"
        );
        // Without the stamps the loop's account stands: the least loop counts the wait of
        // each pair in the burst's queue as idle.
        let (unstamped, _) = run(false);
        assert!(
            unstamped > truth + 0.05,
            "unstamped idle {unstamped:.3} against {truth:.3}"
        );
    }

    /// A window-scale option stripped from the SYN/ACK beyond the capture point (R14
    /// wscale_strip_synack_up at the server): the handshake says shift 7, the sender reads
    /// the raw 20 000 unscaled and fills those 20 segments every 100 ms round. The evidence
    /// takes rounds to be certain; once it is, the rounds before are the window's too.
    #[test]
    fn time_before_the_scale_was_known_is_judged_again_under_it() {
        let (mut conn, mut acc) = fresh();
        let mut known_at = None;
        let mut send = |ms: f64, dir: Dir, p: TcpPacket| {
            feed(&mut conn, &mut acc, ms, dir, p);
            if known_at.is_none() && conn.effective_scale(Dir::S2C) == crate::tcp::WindowScale::Inferred(0) {
                known_at = Some(ms);
            }
        };
        send(
            0.0,
            Dir::C2S,
            TcpPacket::new(C, S).syn().seq(0).window(20000).mss(1000).wscale(7),
        );
        send(
            0.1,
            Dir::S2C,
            TcpPacket::new(S, C)
                .syn()
                .seq(0)
                .ack(1)
                .window(20000)
                .mss(1000)
                .wscale(7),
        );
        send(100.0, Dir::C2S, TcpPacket::new(C, S).seq(1).ack(1).window(20000));
        let mut next = 1u32;
        for round in 0..30 {
            let t = 100.0 + 100.0 * round as f64;
            if round > 0 {
                send(t, Dir::S2C, TcpPacket::new(S, C).seq(1).ack(next).window(20000));
            }
            for i in 0..20 {
                send(
                    t + 0.05 + 0.01 * i as f64,
                    Dir::C2S,
                    TcpPacket::new(C, S).seq(next).ack(1).window(20000).payload_len(1000),
                );
                next += 1000;
            }
        }
        let known_at = known_at.expect("the stripped scale is found");
        assert!(
            known_at > 500.0,
            "found at {known_at} ms: too early to test what came before"
        );
        let (busy, rwnd, _) = acc.dirs[Dir::C2S.index()].timeline.as_ref().unwrap().full().totals();
        let share = rwnd as f64 / (busy + rwnd) as f64;
        assert!(
            share > 0.95,
            "receiver window {share:.3} (busy {busy} ns, rwnd {rwnd} ns, found at {known_at} ms)"
        );
    }

    /// A capture begun after the handshake: the windows' scale is unknown until the flights
    /// show it, and the time before is judged again under it once they do (its windows' 16-bit
    /// fields kept for that) — a sender that filled every round's window was held by it from
    /// the capture's first round, not busy until the scale was found.
    #[test]
    fn time_before_an_unknown_scale_was_found_is_judged_under_it() {
        let mut conn = Connection::new(0, ep(C), ep(S), false, 1, Timestamp(0));
        let mut acc = Accumulator::default();
        let mut known_at = None;
        let mut send = |ms: f64, dir: Dir, p: TcpPacket| {
            feed(&mut conn, &mut acc, ms, dir, p);
            if known_at.is_none() && conn.effective_scale(Dir::C2S).shift().is_some() {
                known_at = Some(ms);
            }
        };
        // Only the server's SYN/ACK: scaling on (it carries the option, so the SYN did:
        // RFC 7323 §1.3), the client's own shift unknown. The server sends; the client's
        // windows offer 10500 B (a shift of 0), no multiple of its segments (that alone would
        // make shift 0 likely at once): 16 rounds' landings at the edge find it.
        send(
            0.0,
            Dir::S2C,
            TcpPacket::new(S, C)
                .syn()
                .seq(0)
                .ack(1)
                .window(10500)
                .mss(1000)
                .wscale(7),
        );
        send(0.05, Dir::C2S, TcpPacket::new(C, S).seq(1).ack(1).window(10500));
        let mut next = 1u32;
        for round in 0..60 {
            let t = 100.0 * round as f64;
            if round > 0 {
                send(t, Dir::C2S, TcpPacket::new(C, S).seq(1).ack(next).window(10500));
            }
            for i in 0..10 {
                send(
                    t + 0.05 + 0.01 * i as f64,
                    Dir::S2C,
                    TcpPacket::new(S, C).seq(next).ack(1).window(10500).payload_len(1000),
                );
                next += 1000;
            }
        }
        let known_at = known_at.expect("the scale is found");
        assert!(
            known_at > 300.0,
            "found at {known_at} ms: too early to test what came before"
        );
        let (busy, rwnd, _) = acc.dirs[Dir::S2C.index()].timeline.as_ref().unwrap().full().totals();
        let share = rwnd as f64 / (busy + rwnd) as f64;
        assert!(
            share > 0.95,
            "receiver window {share:.3} (busy {busy} ns, rwnd {rwnd} ns, found at {known_at} ms)"
        );
    }
}
