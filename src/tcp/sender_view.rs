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
//!
//! The loop-based lookup has a bound from physics. The sender's flight when it sent what
//! passes here at t is what it had sent less what it had heard acknowledged: the flight seen
//! here one transit earlier (at t - L, L the time an ACK takes from here to the sender plus
//! the time its data takes back) plus the data that reached here since — on its way here
//! while the ACKs that passed here in that time were on their way to the sender (a
//! sender's flight is SND.NXT - SND.UNA, RFC 9293 §3.3.1, and SND.UNA moves only when an
//! ACK arrives, §3.10.7.4). L is the loop through the sender without its own waits (an application's
//! reply, a delayed ACK of its peer's data: RFC 1122 §4.2.3.2), queue included: its least,
//! or as its prompt samples show it now (`RttTracker::add_sample`), plus a tick of the
//! capture's clock. A sample of that loop that held such a wait (a request's ACK sent with
//! the next request) is no transit: the sender had had every ACK that passed here more
//! than L before, so the lookup never reaches back further ([`SenderViewTracker::set_near_bound`]).
//! The view says the transit it allowed ([`SenderView::transit`]: the data that reached here
//! within L before the segment), and [`near_loop_law`] holds every flow to it. An echo that
//! names an older ACK is the sender's own word on the loop (its data was built before the
//! later ACKs reached it: a queue in its host or on the way here) and stands.

use super::event::SenderView;
use crate::seq::SeqNum;
use crate::summary::FlowSummary;
use crate::time::{Span, Timestamp};

const MAX_HISTORY: usize = 1 << 16;
/// Dropped adverts are removed from the buffer's front in one move once they are at
/// least this many and at least as many as the live ones (amortised O(1) per advert).
const COMPACT_AT: usize = 64;

/// An ACK for a direction's data as it passed the capture point: what the sender reads
/// when it arrives there.
#[derive(Clone, Copy, Debug)]
pub struct Advert {
    pub at: Timestamp,
    pub ack: SeqNum,
    /// The window in bytes, when its scale is known.
    pub window: Option<u64>,
    /// The 16-bit window field.
    pub raw: u16,
    pub tsval: Option<u32>,
    /// Outstanding bytes this ACK left out of the network (SACKed or presumed lost: RFC 6675
    /// flight - pipe at the capture point).
    pub held: u64,
    /// It left a loss recovery open (see `SenderView::recovering`).
    pub recovering: bool,
}

/// RFC 7323 timestamp order (wrapping).
fn ts_not_after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) <= 0
}

/// Entries kept oldest first: `buf[head..]` are live. A plain vector with a moving start
/// rather than a `VecDeque`: the lookup in `view` indexes it on every data segment, and
/// slice indexing needs no wrap-around arithmetic.
#[derive(Clone, Debug)]
struct Fifo<T> {
    buf: Vec<T>,
    head: usize,
}

impl<T> Default for Fifo<T> {
    fn default() -> Self {
        Fifo {
            buf: Vec::new(),
            head: 0,
        }
    }
}

impl<T> Fifo<T> {
    fn live(&self) -> &[T] {
        &self.buf[self.head..]
    }

    /// Forgets the `n` oldest live entries.
    fn drop_front(&mut self, n: usize) {
        self.head += n;
        if self.head >= COMPACT_AT && self.head >= self.buf.len() - self.head {
            self.buf.drain(..self.head);
            self.head = 0;
        }
    }

    /// Adds an entry, forgetting the oldest beyond `MAX_HISTORY` (returned).
    fn push(&mut self, x: T) -> Option<&T> {
        let full = self.live().len() == MAX_HISTORY;
        if full {
            self.drop_front(1);
        }
        self.buf.push(x);
        full.then(|| &self.buf[self.head - 1])
    }
}

#[derive(Clone, Debug, Default)]
pub struct SenderViewTracker {
    adverts: Fifo<Advert>,
    /// New data as it passed here: its time and the highest sequence after it.
    data: Fifo<(Timestamp, SeqNum)>,
    /// The highest sequence before the first live data entry, once one was dropped.
    data_base: Option<SeqNum>,
    /// How old the ACK an echo names may be before the echo is taken for stale (see
    /// [`Self::set_echo_horizon`]); None: never.
    echo_horizon: Option<Span>,
    /// The longest the loop through the sender can be now (see [`Self::set_near_bound`]);
    /// None: no bound.
    near_bound: Option<Span>,
    /// The least the loop through the sender was ever seen to be (see
    /// [`Self::set_least_loop`]); None: the lookup's `min_loop`.
    least_loop: Option<Span>,
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

    /// The longest the loop through the sender (capture point -> sender -> capture point)
    /// can be now, the sender's own waits aside (see the module's bound): no ACK that passed
    /// here longer ago than that can still have been on its way to the sender when it sent
    /// the data passing now, so the loop-based lookup never reaches back further.
    pub fn set_near_bound(&mut self, most: Span) {
        self.near_bound = Some(most);
    }

    /// The least the loop through the sender was ever seen to be, every kind of sample
    /// counted: no ACK that passed here later than that before a segment had reached the
    /// sender when it sent it. The freshest ACK the sender may have had is looked up by it
    /// ([`SenderView::next_ack`]), where the lookup's `min_loop` is the least of the recent
    /// data samples only and may hold a queue that since drained.
    pub fn set_least_loop(&mut self, least: Span) {
        self.least_loop = Some(least);
    }

    fn live(&self) -> &[Advert] {
        self.adverts.live()
    }

    /// The highest sequence that had passed here before `cutoff`; `oldest`: the oldest ACK
    /// kept (data up to it had passed) where no data entry that old is kept.
    fn nxt_before(&self, cutoff: Timestamp, oldest: SeqNum) -> SeqNum {
        let d = self.data.live();
        match d.partition_point(|&(at, _)| at < cutoff) {
            0 => self.data_base.unwrap_or(oldest),
            k => d[k - 1].1,
        }
    }

    /// Forgets the data entries no lookup from `from` on needs: all before it but the last.
    fn drop_data_before(&mut self, from: Timestamp) {
        let k = self.data.live().partition_point(|&(at, _)| at < from);
        if k > 1 {
            self.data_base = Some(self.data.live()[k - 2].1);
            self.data.drop_front(k - 1);
        }
    }

    /// An ACK for this direction's data passed the capture point.
    #[inline]
    pub fn on_ack(&mut self, ad: Advert) {
        if let Some(back) = self.adverts.buf[self.adverts.head..].last_mut() {
            // A duplicate ACK with news in its SACK blocks is news to the sender's pipe.
            if back.ack == ad.ack
                && back.raw == ad.raw
                && back.window == ad.window
                && back.held == ad.held
                && back.recovering == ad.recovering
            {
                if ad.tsval.is_some() {
                    back.tsval = ad.tsval; // the same advert, re-sent later: the later tick
                }
                return; // nothing new for the sender
            }
            if ad.ack.is_before(back.ack) {
                return; // an old, reordered ACK
            }
        }
        self.adverts.push(ad);
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
        if let Some(&(_, n)) = self.data.push((at, nxt)) {
            self.data_base = Some(n);
        }
        // Without an echo the loop is the recent samples', but no longer than the loop can
        // be without a wait of the sender's own (see the module's bound).
        let bound = self.near_bound.map(|b| b.max(min_loop));
        let loop_used = bound.map_or(loop_now, |b| loop_now.min(b));
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
                .then(|| h.iter().rposition(|a| a.at <= at - loop_used.max(min_loop)))
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
        let then = at - if by_echo.is_some() { min_loop } else { loop_used };
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
        // Beyond a zero window a sender may probe with one octet of new data (RFC 9293
        // §3.8.6.1; Linux probes with an old byte instead, `tcp_xmit_probe_skb`), no more:
        // more new data beyond it proves a later ACK reopened the window (a receiver whose
        // window update passed here 18 ms before the data it released, against a loop of
        // 32 ms, read its sender 34 KB into a 16 kB unscaled window).
        let scaled = |x: &Advert| x.window.or_else(|| shift.map(|k| (x.raw as u64) << k));
        let fits = |x: &Advert| scaled(x).is_none_or(|w| nxt.bytes_after(x.ack) as u64 <= w.max(1));
        let mut obeyed = latest;
        if known && !fits(&h[latest]) {
            let passed = (latest + 1..h.len()).take_while(|&k| h[k].at <= at);
            // With no ACK that passed here before the data opening a window it fits, the
            // sender broke the window (206_example_b's server sent 58 KB past the right
            // edge of duplicate ACKs): the window says nothing of which ACK it had, and the
            // flight is the one the capture vouches for, by the latest ACK that passed here.
            obeyed = passed
                .clone()
                .find(|&k| fits(&h[k]))
                .or(passed.last())
                .unwrap_or(latest);
        }
        // The transit the view allowed: the data that reached here within the loop's bound
        // before this segment. An echo may name an older ACK (the sender's word, see the
        // module's bound): the flight it gives is the flight seen here just before the next
        // ACK passed (which the sender had not had) plus the data that reached here since,
        // so that loop is the time since that ACK, where longer.
        let since_next = h
            .get(obeyed + 1)
            .filter(|n| by_echo.is_some() && n.at <= at)
            .map_or(Span::ZERO, |n| at - n.at);
        let near = bound.unwrap_or(loop_now.max(min_loop)).max(since_next);
        let transit = nxt.bytes_after(self.nxt_before(at - near, h[0].ack)).max(0) as u64;
        // Whether the bound moved the lookup: the recent samples' loop would have named an
        // older ACK. The ACKs back to that one are kept (none is dropped before the later
        // views' lookups by that loop reach it), for the next views to say the same.
        let unbounded =
            (by_echo.is_none() && loop_used < loop_now).then(|| h.iter().rposition(|a| a.at <= at - loop_now));
        let set_aside = unbounded
            .flatten()
            .filter(|&k| known && h[k].ack.is_before(h[latest].ack))
            .map(|k| (loop_now, nxt.bytes_after(h[k].ack).max(0) as u64));
        let first_kept = unbounded.map_or(first, |k| k.unwrap_or(0).min(first));
        let keep_from = h[first_kept].at.min(at - near);
        // The answer is read while the adverts are borrowed, then the older ones dropped.
        let (a, e, o) = (&h[first], &h[latest], &h[obeyed]);
        // The freshest ACK the sender may have had: the next one when it had passed here,
        // and without an echo any that passed here at least the least loop ever seen before
        // the data (a loop of queue that since drained names an ACK older than the one the
        // sender acted on: flights behind a 400-packet queue with loop samples of 22 to 80
        // ms read 45 KiB into a 15.5 KiB window). A window exceeded under it too is exceeded
        // for sure.
        let next = h.get(latest + 1).filter(|n| n.at <= at).map(|_| latest + 1);
        let least = self.least_loop.map_or(min_loop, |l| l.min(min_loop));
        // By bisection: far from the sender the ACKs within the least loop are a window's
        // worth, and a scan back through them on every data segment would cost O(window).
        let freshest = by_echo
            .is_none()
            .then(|| h.partition_point(|a| a.at <= at - least).checked_sub(1))
            .flatten()
            .filter(|&k| k > latest);
        let view = known.then(|| SenderView {
            next_ack: next.max(freshest).map(|k| (nxt.bytes_after(h[k].ack) as u64, h[k].raw)),
            flight: nxt.bytes_after(o.ack) as u64,
            window: scaled(o),
            loop_flight: nxt.bytes_after(e.ack) as u64,
            window_raw: e.raw,
            tick_flight: nxt.bytes_after(a.ack) as u64,
            tick_window: scaled(a),
            held: o.held,
            recovering: a.recovering,
            transit,
            near_loop: near,
            set_aside,
        });
        self.adverts.drop_front(first_kept);
        self.drop_data_before(keep_from);
        view // None: no ACK old enough, the sender had nothing from the peer yet
    }
}

/// The sender's flight is the flight seen here plus what the path between the sender and
/// here held (data on its way here, ACKs on their way to the sender), and that is at most
/// the data that reached here within one loop through the sender (see the module's bound):
/// `sender_max_flight_bytes` <= `max_flight_bytes` + `sender_transit_bytes`, with a segment
/// of slack (an ACK the capture point counted apart from the advert the sender acted on).
pub fn near_loop_law(f: &FlowSummary) -> Vec<String> {
    // No flight seen here where the capture lacks the ACKs (`stall::acks_law`): no bound.
    let (Some(flight), Some(transit), Some(seen)) =
        (f.sender_max_flight_bytes, f.sender_transit_bytes, f.max_flight_bytes)
    else {
        return Vec::new();
    };
    let slack = f.dir(f.bulk_direction).max_segment_bytes.max(1) as u64;
    if flight <= seen + transit + slack {
        return Vec::new();
    }
    vec![format!(
        "the sender's flight {flight} B exceeds the {} B seen here plus the {transit} B one loop through the sender ({} ms) can hold",
        seen,
        f.sender_near_loop_ms.map_or("?".into(), |l| l.to_string())
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An advert outside any loss recovery.
    fn advert(at: Timestamp, ack: SeqNum, window: Option<u64>, raw: u16, tsval: Option<u32>, held: u64) -> Advert {
        Advert {
            at,
            ack,
            window,
            raw,
            tsval,
            held,
            recovering: false,
        }
    }

    fn t(ms: i64) -> Timestamp {
        Timestamp(0) + Span::from_millis(ms)
    }

    #[test]
    fn next_to_the_sender_it_is_the_naive_flight() {
        let mut v = SenderViewTracker::default();
        v.on_ack(advert(t(0), SeqNum(1000), Some(64_000), 500, None, 0));
        let s = v.view(t(1), None, Span::ZERO, Span::ZERO, SeqNum(5000), None).unwrap();
        assert_eq!((s.flight, s.window, s.window_raw), (4000, Some(64_000), 500));
    }

    #[test]
    fn next_to_the_receiver_it_uses_the_ack_one_loop_earlier() {
        let mut v = SenderViewTracker::default();
        // the receiver acknowledges everything at once; the sender learns it 100 ms later
        for i in 0..10 {
            v.on_ack(advert(
                t(i * 10),
                SeqNum(1 + i as u32 * 10_000),
                Some(100_000),
                100,
                None,
                0,
            ));
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
        v.on_ack(advert(t(50), SeqNum(1), None, 1, None, 0));
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
                v.on_ack(advert(at, SeqNum(ack), Some(win), win as u16, Some(7), 0));
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
    fn a_loop_longer_than_the_near_loop_can_be_pairs_no_data_with_old_acks() {
        // zeek's smb_smb2 in small: every ms an ACK of 10 kB more passes, and the data that
        // follows it half a millisecond later keeps 20 kB outstanding here. The recent loop
        // samples held a 70 ms wait of the sender's own; the loop is 0.3 ms at most.
        let run = |bound: Option<Span>| {
            let mut v = SenderViewTracker::default();
            if let Some(b) = bound {
                v.set_near_bound(b);
            }
            let (min, recent) = (Span::from_micros(200), Span::from_millis(70));
            let mut last = None;
            for i in 0..=100u32 {
                v.on_ack(advert(
                    t(i as i64),
                    SeqNum(1 + i * 10_000),
                    Some(1 << 20),
                    4096,
                    None,
                    0,
                ));
                let at = t(i as i64) + Span::from_micros(500);
                last = v.view(at, None, min, recent, SeqNum(1 + i * 10_000 + 20_000), None);
            }
            last.unwrap()
        };
        // Unbounded, the data is paired with the ACK of 70 ms before: 720 kB "at the sender".
        let s = run(None);
        assert_eq!(s.flight, 720_000);
        // Bounded: the ACK of 0.5 ms before, which the sender had. What the path can have
        // held beyond the 20 kB seen is the 10 kB that reached here within the 0.3 ms loop.
        let s = run(Some(Span::from_micros(300)));
        assert_eq!(s.flight, 20_000);
        assert_eq!((s.transit, s.near_loop), (10_000, Span::from_micros(300)));
        assert_eq!(s.set_aside, Some((Span::from_millis(70), 720_000)));
        assert!(s.flight <= 20_000 + s.transit);
        // A bound under the least loop is no bound below it.
        let s = run(Some(Span::from_micros(50)));
        assert_eq!((s.flight, s.near_loop), (20_000, Span::from_micros(200)));
    }

    #[test]
    fn an_echo_naming_an_older_ack_stands_and_its_loop_is_the_transit() {
        // ACKs every ms (TSval = ms), each acknowledging 2000 B more; data every ms half a ms
        // after, echoing the ACK of 5 ms before (a queue in the sender's host): the echo is
        // the sender's word, whatever the near loop's bound (1 ms).
        let mut v = SenderViewTracker::default();
        v.set_near_bound(Span::from_millis(1));
        let lp = Span::from_micros(100);
        let mut last = None;
        for i in 0..20u32 {
            v.on_ack(advert(
                t(i as i64),
                SeqNum(1 + i * 2000),
                Some(1 << 20),
                4096,
                Some(i),
                0,
            ));
            let at = t(i as i64) + Span::from_micros(500);
            let nxt = SeqNum(1 + i * 2000 + 4000);
            last = v.view(at, i.checked_sub(5), lp, lp, nxt, None).or(last);
        }
        let s = last.unwrap();
        // Against the ACK of 14 ms (TSval 14): 19's data is 5 ACKs of 2000 B further.
        assert_eq!(s.flight, 4000 + 5 * 2000);
        // The sender had not had the ACK of 15 ms, 4.5 ms before: the transit is the data
        // that reached here since, 10 kB.
        assert_eq!(s.near_loop, Span::from_micros(4500));
        assert_eq!(s.transit, 10_000);
        assert_eq!(s.set_aside, None);
    }

    #[test]
    fn the_echo_names_the_ack_the_sender_had() {
        let mut v = SenderViewTracker::default();
        // ACKs every ms, TSval = ms; the sender's data echoes TSval 3 although a loop-based
        // lookup would pick a later ACK (the data was queued on the way).
        for i in 0..10u32 {
            v.on_ack(advert(
                t(i as i64),
                SeqNum(1 + i * 2000),
                Some(20_000),
                20_000,
                Some(i),
                0,
            ));
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
        v.on_ack(advert(t(0), SeqNum(1), Some(64_000), 500, Some(100), 0));
        let ack_at = t(60);
        v.on_ack(advert(ack_at, SeqNum(201), Some(64_000), 500, Some(160), 0));
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
        v.on_ack(advert(t(0), SeqNum(1), Some(64_000), 500, None, 0));
        v.on_ack(advert(ack_at, SeqNum(201), Some(64_000), 500, None, 0));
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
            v.on_ack(advert(
                t(i as i64 * 5),
                SeqNum(1),
                Some(1 << 20),
                1000,
                None,
                i as u64 * 3000,
            ));
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

    /// Far from the sender the capture point's flight is a few segments and `held` counts
    /// only those; whether the ACK the view chose left a recovery open is told apart.
    #[test]
    fn the_view_says_whether_its_ack_left_a_recovery_open() {
        let mut v = SenderViewTracker::default();
        v.on_ack(advert(t(0), SeqNum(1), Some(1 << 20), 1000, None, 0));
        v.on_ack(Advert {
            recovering: true,
            ..advert(t(5), SeqNum(1), Some(1 << 20), 1000, None, 1000)
        });
        let at = |v: &mut SenderViewTracker, ms| {
            v.view(
                t(ms),
                None,
                Span::from_millis(4),
                Span::from_millis(4),
                SeqNum(30_001),
                None,
            )
            .unwrap()
        };
        assert!(!at(&mut v, 6).recovering, "the first ACK, one loop back");
        assert!(
            at(&mut v, 10).recovering,
            "the duplicate that SACKed data above the hole"
        );
    }

    #[test]
    fn an_echo_older_than_a_retransmission_timeout_is_stale_where_the_loop_shows_later_acks() {
        // ACKs every 10 ms for 3 s (TSval = ms), each acknowledging 1000 B more; the data
        // 20 ms after the last still echoes the TSval of the ACK at 0 ms.
        let acks = |v: &mut SenderViewTracker| {
            for i in 0..=300u32 {
                v.on_ack(advert(
                    t(i as i64 * 10),
                    SeqNum(1 + i * 1000),
                    Some(1 << 20),
                    1000,
                    Some(i * 10),
                    0,
                ));
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
            v.on_ack(advert(
                t(7) + Span::from_micros(250 * i as i64),
                SeqNum(1 + i * 2896),
                Some(40_000),
                40_000,
                Some(7),
                0,
            ));
        }
        v.on_ack(advert(t(8), SeqNum(1 + 4 * 2896), Some(40_000), 40_000, Some(8), 0));
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
    fn the_freshest_ack_is_one_least_loop_back_where_the_loop_now_is_a_drained_queue() {
        // A receiver ACKs every ms; its sender's loop was once 20 ms and now reads 80 ms
        // (a queue that stood when the last samples were taken). The data arriving now is
        // paired with the ACK of 80 ms ago, but the sender may have had any ACK that
        // passed here at least 20 ms before: that is the freshest, and what a window must be
        // exceeded under too before the scale is said wrong.
        let mut v = SenderViewTracker::default();
        v.set_least_loop(Span::from_millis(20));
        for i in 0..100i64 {
            v.on_ack(advert(t(i), SeqNum(1 + i as u32 * 1000), None, 62, None, 0));
        }
        let loop_now = Span::from_millis(80);
        let s = v
            .view(t(100), None, loop_now, loop_now, SeqNum(1 + 100_000), None)
            .unwrap();
        assert_eq!(s.loop_flight, 80_000);
        assert_eq!(s.next_ack, Some((20_000, 62)));
        // Without the least loop the freshest is the next ACK after the loop's.
        let mut w = SenderViewTracker::default();
        for i in 0..100i64 {
            w.on_ack(advert(t(i), SeqNum(1 + i as u32 * 1000), None, 62, None, 0));
        }
        let s = w
            .view(t(100), None, loop_now, loop_now, SeqNum(1 + 100_000), None)
            .unwrap();
        assert_eq!(s.next_ack, Some((79_000, 62)));
    }

    #[test]
    fn adverts_of_unknown_scale_are_scaled_once_inferred() {
        let mut v = SenderViewTracker::default();
        v.on_ack(advert(t(0), SeqNum(1), None, 1000, None, 0));
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
            v.on_ack(advert(t(i), SeqNum(1 + i as u32 * 1000), Some(50_000), 50_000, None, 0));
            if i >= 10 {
                let nxt = SeqNum(1 + i as u32 * 1000 + 30_000);
                let s = v
                    .view(t(i), None, Span::from_millis(10), Span::from_millis(10), nxt, None)
                    .unwrap();
                assert_eq!(s.flight, 40_000, "at {i} ms");
                assert_eq!(s.next_ack, Some((39_000, 50_000)), "at {i} ms");
            }
            assert!(
                v.adverts.buf.len() <= 2 * v.live().len() + COMPACT_AT,
                "at {i} ms: {} kept",
                v.adverts.buf.len()
            );
        }
    }
}
