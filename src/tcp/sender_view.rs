//! The data sender's view, reconstructed from wherever the capture was taken.
//!
//! A sender's flight is "sent minus acknowledged *as the sender knows it*". Next to the
//! sender the capture sees the same ACKs the sender does. Next to the receiver it sees
//! each ACK one sender-loop (capture point -> sender -> capture point) before the sender's
//! reaction to it comes back: the data arriving now was sent when the sender held the ACKs
//! that passed here one loop ago. So the sender's flight for data seen at time t is the
//! highest sequence seen minus the ACK that passed at t - loop, and the window it obeyed is
//! the one advertised with that ACK. With a loop of ~0 this is the naive flight.
//!
//! With TCP timestamps (RFC 7323 §4.3) the sender says itself which ACK it had: each of
//! its segments echoes the TSval of the latest ACK it processed. So the ACK it acted on
//! is the last one that carried a TSval no newer than the echo and passed here at least
//! one minimum loop earlier — exact to the ACK, whatever the queueing in between. The
//! loop-based lookup is the fallback when timestamps are off.

use super::event::SenderView;
use crate::seq::SeqNum;
use crate::time::{Span, Timestamp};

const MAX_HISTORY: usize = 1 << 16;
/// Dropped adverts are removed from the buffer's front in one move once they are at
/// least this many and at least as many as the live ones (amortised O(1) per advert).
const COMPACT_AT: usize = 64;

#[derive(Clone, Copy, Debug)]
struct Advert {
    at: Timestamp,
    ack: SeqNum,
    window: Option<u64>,
    raw: u16,
    tsval: Option<u32>,
    /// Outstanding bytes this ACK left out of the network (SACKed or presumed lost).
    held: u64,
}

/// RFC 7323 timestamp order (wrapping).
fn ts_not_after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) <= 0
}

/// The adverts not yet dropped are `buf[head..]`, oldest first. A plain vector with a
/// moving start rather than a `VecDeque`: the lookup in `view` indexes it on every data
/// segment, and slice indexing needs no wrap-around arithmetic.
#[derive(Clone, Debug, Default)]
pub struct SenderViewTracker {
    buf: Vec<Advert>,
    head: usize,
    /// How old the ACK an echo names may be before the echo is taken for stale (see
    /// [`Self::set_echo_horizon`]); None: never.
    echo_horizon: Option<Span>,
}

impl SenderViewTracker {
    /// A sender that sends new data with nothing but the ACK its echo names for longer
    /// than a retransmission timeout would have retransmitted instead (RFC 6298 §5: the
    /// timer runs while data is outstanding and no ACK comes): where later ACKs had reached
    /// it by the loop, the echo is a TS.Recent the host stopped updating (the MPTCP client
    /// of teto/pymptcpanalyzer's capture echoed one ACK for 3.8 s through a recovery while
    /// hundreds passed), and the loop names the ACK instead. `rto`: the connection's RTO
    /// bound now.
    pub fn set_echo_horizon(&mut self, rto: Span) {
        self.echo_horizon = Some(rto);
    }

    fn live(&self) -> &[Advert] {
        &self.buf[self.head..]
    }

    /// Forgets the `n` oldest live adverts.
    fn drop_front(&mut self, n: usize) {
        self.head += n;
        if self.head >= COMPACT_AT && self.head >= self.buf.len() - self.head {
            self.buf.drain(..self.head);
            self.head = 0;
        }
    }

    /// An ACK for this direction's data passed the capture point; `held`: the outstanding
    /// bytes its SACK scoreboard put out of the network (RFC 6675 flight - pipe).
    #[inline]
    pub fn on_ack(&mut self, at: Timestamp, ack: SeqNum, window: Option<u64>, raw: u16, tsval: Option<u32>, held: u64) {
        if let Some(back) = self.buf[self.head..].last_mut() {
            // A duplicate ACK with news in its SACK blocks is news to the sender's pipe.
            if back.ack == ack && back.raw == raw && back.window == window && back.held == held {
                if tsval.is_some() {
                    back.tsval = tsval; // the same advert, re-sent later: the later tick
                }
                return; // nothing new for the sender
            }
            if ack.is_before(back.ack) {
                return; // an old, reordered ACK
            }
        }
        if self.live().len() == MAX_HISTORY {
            self.drop_front(1);
        }
        self.buf.push(Advert {
            at,
            ack,
            window,
            raw,
            tsval,
            held,
        });
    }

    /// The sender's flight and window for data up to `nxt` seen at `at`. `echo` is the
    /// segment's TSecr; `min_loop` the shortest loop through the sender (no ACK can have
    /// reached it sooner); `loop_now` the loop to use when there is no echo. `shift` scales
    /// adverts recorded while the scale was unknown, once it has been inferred.
    #[inline]
    pub fn view(
        &mut self,
        at: Timestamp,
        echo: Option<u32>,
        min_loop: Span,
        loop_now: Span,
        nxt: SeqNum,
        shift: Option<u8>,
    ) -> Option<SenderView> {
        let h = self.live();
        let mut by_echo = echo.filter(|_| h.first().is_some_and(|a| a.tsval.is_some()));
        if let (Some(e), Some(horizon)) = (by_echo, self.echo_horizon) {
            // The latest ACK the echo allows, and the latest the loop says had arrived.
            let named = h
                .iter()
                .rposition(|a| a.at <= at && a.tsval.is_some_and(|v| ts_not_after(v, e)));
            // The loop's ACK is looked up only for an echo that old (not per segment).
            let old = named.is_none_or(|n| h[n].at < at - horizon);
            let by_loop = old
                .then(|| h.iter().rposition(|a| a.at <= at - loop_now.max(min_loop)))
                .flatten();
            let stale = match (named, by_loop) {
                // Older than every ACK still kept: earlier views moved past it already.
                (None, Some(_)) => true,
                (Some(n), Some(l)) => l > n && h[l].ack.is_after(h[n].ack),
                _ => false,
            };
            if stale {
                by_echo = None;
            }
        }
        let then = at - if by_echo.is_some() { min_loop } else { loop_now };
        let usable = |a: &Advert| a.at <= then && by_echo.is_none_or(|e| a.tsval.is_none_or(|v| ts_not_after(v, e)));
        // The latest usable advert, and the first one of its timestamp tick: the sender had
        // one of the ACKs of that tick (a millisecond of ACKs share one TSval on Linux).
        h.first()?;
        let mut latest = 0;
        while latest + 1 < h.len() && usable(&h[latest + 1]) {
            latest += 1;
        }
        // An echo equal to an ACK's TSval proves the sender had processed an ACK of that
        // tick (RFC 7323 §4.3: TSecr is the TSval of the latest segment it took), whatever
        // the loop's minimum says: the first ACK of the tick that passed here before the
        // data is the least it had. The minimum loop is learnt from samples and can start
        // above the real one (a handshake loop of 42 us against a data loop of 29 us left
        // a sender a whole request "in flight" that its echo showed acknowledged).
        // Only ACKs after the latest usable one, up to the data, are looked at: one loop's
        // worth. Several ACKs share a tick, so only its first is proven.
        let proven = by_echo.and_then(|e| {
            let had = usable(&h[latest]);
            if had && h[latest].tsval == Some(e) {
                return None; // the tick's first ACK is no later than the one chosen
            }
            let from = latest + usize::from(had);
            h.get(from..)?
                .iter()
                .take_while(|a| a.at <= at && a.tsval.is_none_or(|v| ts_not_after(v, e)))
                .position(|a| a.tsval == Some(e))
                .map(|p| from + p)
        });
        if let Some(p) = proven {
            latest = p;
        }
        let tick = h.get(latest)?.tsval;
        // Whether the sender had any usable ACK yet; the choice below may move past `then`.
        let known = h[latest].at <= then || proven.is_some();
        let mut first = latest;
        if by_echo.is_some() {
            // Data can be late at the capture point by its queueing on the way there, so
            // an earlier ACK of the tick may be the one; not earlier than one more loop as
            // it is now, standing queue included (next to the sender the loop is
            // microseconds and so is this margin).
            let earliest = then - loop_now.max(min_loop);
            while first > 0 && h[first - 1].tsval == tick && h[first - 1].at >= earliest {
                first -= 1;
            }
        }
        // A sender sends new data only within the window it knows (RFC 9293 §3.8.6.2.1;
        // Linux `tcp_snd_wnd_test`): new data beyond the right edge of the chosen advert
        // proves the sender already had a later ACK that passed here before the data. The
        // loop's minimum is only an estimate of the least time from an ACK to the data it
        // releases (next to the sender a few microseconds, with jitter of as much); an ACK
        // of the same tick that passed 7 us before its data, against a minimum of 10 us,
        // would leave the sender two segments beyond its window. The earliest such later
        // ACK whose window the data fits is the one. The scale and middlebox evidence keep
        // the uncorrected reading (`loop_flight`): there a sender beyond its window is the
        // finding, and a correction by an inferred scale would steer its own evidence.
        // Beyond a zero window a sender may probe with new data (RFC 9293 §3.8.6.1).
        let scaled = |x: &Advert| x.window.or_else(|| shift.map(|k| (x.raw as u64) << k));
        let fits = |x: &Advert| scaled(x).is_none_or(|w| w == 0 || nxt.bytes_after(x.ack) as u64 <= w);
        let mut obeyed = latest;
        if known && !fits(&h[latest]) {
            if let Some(k) = (latest + 1..h.len())
                .take_while(|&k| h[k].at <= at)
                .find(|&k| fits(&h[k]))
            {
                obeyed = k;
            }
        }
        // The answer is read while the adverts are borrowed, then the older ones dropped.
        let (a, e, o) = (&h[first], &h[latest], &h[obeyed]);
        let view = known.then(|| SenderView {
            next_ack: h
                .get(latest + 1)
                .filter(|n| n.at <= at)
                .map(|n| (nxt.bytes_after(n.ack) as u64, n.raw)),
            flight: nxt.bytes_after(o.ack) as u64,
            window: scaled(o),
            loop_flight: nxt.bytes_after(e.ack) as u64,
            window_raw: e.raw,
            tick_flight: nxt.bytes_after(a.ack) as u64,
            tick_window: scaled(a),
            held: o.held,
        });
        self.drop_front(first);
        view // None: no ACK old enough, the sender had nothing from the peer yet
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: i64) -> Timestamp {
        Timestamp(0) + Span::from_millis(ms)
    }

    #[test]
    fn next_to_the_sender_it_is_the_naive_flight() {
        let mut v = SenderViewTracker::default();
        v.on_ack(t(0), SeqNum(1000), Some(64_000), 500, None, 0);
        let s = v.view(t(1), None, Span::ZERO, Span::ZERO, SeqNum(5000), None).unwrap();
        assert_eq!((s.flight, s.window, s.window_raw), (4000, Some(64_000), 500));
    }

    #[test]
    fn next_to_the_receiver_it_uses_the_ack_one_loop_earlier() {
        let mut v = SenderViewTracker::default();
        // the receiver acknowledges everything at once; the sender learns it 100 ms later
        for i in 0..10 {
            v.on_ack(t(i * 10), SeqNum(1 + i as u32 * 10_000), Some(100_000), 100, None, 0);
        }
        // data arriving at 105 ms was sent against the ACK of 0..5 ms
        let s = v
            .view(
                t(105),
                None,
                Span::from_millis(100),
                Span::from_millis(100),
                SeqNum(100_001),
                None,
            )
            .unwrap();
        assert_eq!(s.flight, 100_000);
    }

    #[test]
    fn no_view_before_any_ack_is_old_enough() {
        let mut v = SenderViewTracker::default();
        v.on_ack(t(50), SeqNum(1), None, 1, None, 0);
        assert!(v
            .view(
                t(60),
                None,
                Span::from_millis(100),
                Span::from_millis(100),
                SeqNum(10),
                None
            )
            .is_none());
    }

    #[test]
    fn new_data_beyond_the_window_proves_a_later_ack() {
        // Next to the sender: two ACKs of one tick, the second 500 us after the first; the
        // data it releases passes 8 us after it, sooner than the loop's estimated minimum
        // (10 us). Against the first ACK the data would stand 2000 B beyond the window.
        // Two ACKs (ack, window) of TSval tick 7, 500 us apart; data up to `nxt` 8 us after
        // the second, against a loop minimum of 10 us.
        let view = |first: (u32, u64), second: (u32, u64), nxt: u32| {
            let mut v = SenderViewTracker::default();
            for (at, (ack, win)) in [(t(0), first), (t(0) + Span::from_micros(500), second)] {
                v.on_ack(at, SeqNum(ack), Some(win), win as u16, Some(7), 0);
            }
            let (at, min) = (t(0) + Span::from_micros(508), Span::from_micros(10));
            let s = v.view(at, Some(7), min, min, SeqNum(nxt), None).unwrap();
            (s.flight, s.window)
        };
        assert_eq!(view((1_000, 10_000), (3_000, 10_000), 13_000), (10_000, Some(10_000)));
        // Beyond a zero window the sender may probe with new data: no later ACK is implied.
        assert_eq!(view((1_000, 0), (1_000, 10_000), 1_001), (1, Some(0)));
    }

    #[test]
    fn the_echo_names_the_ack_the_sender_had() {
        let mut v = SenderViewTracker::default();
        // ACKs every ms, TSval = ms; the sender's data echoes TSval 3 although a loop-based
        // lookup would pick a later ACK (the data was queued on the way).
        for i in 0..10u32 {
            v.on_ack(t(i as i64), SeqNum(1 + i * 2000), Some(20_000), 20_000, Some(i), 0);
        }
        let s = v
            .view(
                t(9),
                Some(3),
                Span::from_micros(100),
                Span::from_micros(100),
                SeqNum(26_001),
                None,
            )
            .unwrap();
        assert_eq!(s.flight, 26_001 - 6_001);
    }

    #[test]
    fn an_echo_of_an_ack_proves_it_had_arrived_whatever_the_minimum_loop() {
        // Next to the sender: the handshake's loop (42 us) set the minimum; the request's
        // next write left 29 us after the ACK of the first, echoing that ACK's TSval.
        let mut v = SenderViewTracker::default();
        v.on_ack(t(0), SeqNum(1), Some(64_000), 500, Some(100), 0);
        let ack_at = t(60);
        v.on_ack(ack_at, SeqNum(201), Some(64_000), 500, Some(160), 0);
        let data_at = ack_at + Span::from_micros(29);
        let s = v
            .view(
                data_at,
                Some(160),
                Span::from_micros(42),
                Span::from_micros(42),
                SeqNum(1201),
                None,
            )
            .unwrap();
        assert_eq!(s.flight, 1000, "the echoed ACK had arrived");
        // Without the echo the minimum loop is all there is: the earlier ACK.
        let mut v = SenderViewTracker::default();
        v.on_ack(t(0), SeqNum(1), Some(64_000), 500, None, 0);
        v.on_ack(ack_at, SeqNum(201), Some(64_000), 500, None, 0);
        let s = v
            .view(
                data_at,
                None,
                Span::from_micros(42),
                Span::from_micros(42),
                SeqNum(1201),
                None,
            )
            .unwrap();
        assert_eq!(s.flight, 1200);
    }

    #[test]
    fn the_view_carries_what_its_ack_held_out_of_the_network() {
        // Duplicate ACKs of one hole, each SACKing more: each is news for the pipe, and the
        // sender one loop (10 ms) behind the capture point had the SACKs of 10 ms ago.
        let mut v = SenderViewTracker::default();
        for i in 0..5u32 {
            v.on_ack(t(i as i64 * 5), SeqNum(1), Some(1 << 20), 1000, None, i as u64 * 3000);
        }
        let s = v
            .view(
                t(21),
                None,
                Span::from_millis(10),
                Span::from_millis(10),
                SeqNum(30_001),
                None,
            )
            .unwrap();
        assert_eq!((s.flight, s.held), (30_000, 6000));
    }

    #[test]
    fn an_echo_older_than_a_retransmission_timeout_is_stale_where_the_loop_shows_later_acks() {
        // ACKs every 10 ms for 3 s (TSval = ms), each acknowledging 1000 B more; the data
        // 20 ms after the last still echoes the TSval of the ACK at 0 ms.
        let acks = |v: &mut SenderViewTracker| {
            for i in 0..=300u32 {
                v.on_ack(
                    t(i as i64 * 10),
                    SeqNum(1 + i * 1000),
                    Some(1 << 20),
                    1000,
                    Some(i * 10),
                    0,
                );
            }
        };
        let at = t(3020);
        let lp = Span::from_millis(15);
        let mut v = SenderViewTracker::default();
        acks(&mut v);
        // Without a horizon the echo rules: the ACK at 0 ms.
        let s = v.view(at, Some(0), lp, lp, SeqNum(400_001), None).unwrap();
        assert_eq!(s.flight, 400_000);
        // A sender that had heard nothing for 3 s would have timed out: the loop names the
        // ACK at 3000 ms (the latest 15 ms before the data).
        let mut v = SenderViewTracker::default();
        acks(&mut v);
        v.set_echo_horizon(Span::from_millis(1000));
        let s = v.view(at, Some(0), lp, lp, SeqNum(400_001), None).unwrap();
        assert_eq!(s.flight, 400_000 - 300_000);
        // Within the horizon the echo stands (an ACK 500 ms back, a long queue's loop).
        let mut v = SenderViewTracker::default();
        acks(&mut v);
        v.set_echo_horizon(Span::from_millis(1000));
        let s = v.view(at, Some(2500), lp, lp, SeqNum(400_001), None).unwrap();
        assert_eq!(s.flight, 400_000 - 250_000);
    }

    #[test]
    fn behind_a_standing_queue_the_tick_reaches_back_a_whole_loop() {
        // Near the receiver, a 20 ms queue between sender and capture point: the loop
        // through the sender is 25 ms now although its minimum was 5 ms. Four ACKs share
        // TSval 7 (250 us apart); the data arriving at 32 ms echoes 7, so the sender may
        // have acted on the first of them: the tick flight is against that one.
        let mut v = SenderViewTracker::default();
        for i in 0..4u32 {
            v.on_ack(
                t(7) + Span::from_micros(250 * i as i64),
                SeqNum(1 + i * 2896),
                Some(40_000),
                40_000,
                Some(7),
                0,
            );
        }
        v.on_ack(t(8), SeqNum(1 + 4 * 2896), Some(40_000), 40_000, Some(8), 0);
        let s = v
            .view(
                t(32),
                Some(7),
                Span::from_millis(5),
                Span::from_millis(25),
                SeqNum(40_001),
                None,
            )
            .unwrap();
        assert_eq!(s.flight, 40_000 - 3 * 2896);
        assert_eq!(s.tick_flight, 40_000);
        assert_eq!(s.tick_window, Some(40_000));
    }

    #[test]
    fn adverts_of_unknown_scale_are_scaled_once_inferred() {
        let mut v = SenderViewTracker::default();
        v.on_ack(t(0), SeqNum(1), None, 1000, None, 0);
        let s = v
            .view(t(1), None, Span::ZERO, Span::ZERO, SeqNum(2001), Some(3))
            .unwrap();
        assert_eq!(s.window, Some(8000));
    }

    #[test]
    fn dropped_adverts_are_compacted_away_and_lookups_stay_right() {
        // ACKs every ms advancing 1000 bytes; data seen one 10 ms loop later was sent
        // against the ACK of 10 ms before. Thousands of adverts pass through the buffer.
        let mut v = SenderViewTracker::default();
        for i in 0..5_000i64 {
            v.on_ack(t(i), SeqNum(1 + i as u32 * 1000), Some(50_000), 50_000, None, 0);
            if i >= 10 {
                let nxt = SeqNum(1 + i as u32 * 1000 + 30_000);
                let s = v
                    .view(t(i), None, Span::from_millis(10), Span::from_millis(10), nxt, None)
                    .unwrap();
                assert_eq!(s.flight, 40_000, "at {i} ms");
                assert_eq!(s.next_ack, Some((39_000, 50_000)), "at {i} ms");
            }
            assert!(
                v.buf.len() <= 2 * v.live().len() + COMPACT_AT,
                "at {i} ms: {} kept",
                v.buf.len()
            );
        }
    }
}
