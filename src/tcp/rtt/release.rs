//! RTT samples of the loop through a data sender, from the data a window update released
//! (Jaiswal, Iannaccone, Diot, Kurose & Towsley, "Inferring TCP connection characteristics
//! through passive measurements", INFOCOM 2004: a monitor on the path times the loop
//! through the sender from an ACK to the data it allowed).
//!
//! A sender never sends new data past the right edge of the window it was given
//! (SND.UNA + SND.WND, RFC 9293 §3.8.6.2.1; Linux's `tcp_snd_wnd_test`). A segment ending
//! beyond every edge the receiver had advertised before was therefore sent after its
//! sender received the ACK that first moved the edge far enough: from that ACK passing the
//! capture point to the segment passing it is the loop capture -> sender -> capture, plus
//! whatever the sender waited — never less. It needs no timestamps, and it times that loop
//! all through a window-limited transfer, where otherwise only the handshake's one sample
//! (which the host may hold: Linux delays the handshake's last ACK while its application
//! has a write pending, `tcp_rcv_synsent_state_process`) would.
//!
//! Not timed: a persist probe (RFC 9293 §3.8.6.1: sent into a zero window, released by no
//! ACK), a segment beyond every edge seen (an ACK the capture missed released it, and from
//! then on none is, nor any before counts: the capture misses that receiver's updates), data
//! within the edge already known before the first update seen. The caller feeds only
//! windows whose scale the handshake fixed (an inferred scale that reads them too small
//! would make edges the sender never had) and starts again after any window it could not
//! read: an edge move missed would pair data with a later move, shorter than the loop. The
//! edge kept is the furthest ever advertised (a window scale rounds the edge down by up to
//! a unit, and a receiver may shrink its window, RFC 9293 §3.8.6.2.2): data within it can
//! have gone at any time.

use crate::seq::SeqNum;
use crate::time::{Span, Timestamp};

/// Edge moves kept until data uses them: a window-limited sender answers each within a
/// loop, so a few are pending at most; beyond that the oldest go (their data, when it
/// comes, finds no move of its own and is not timed).
const PENDING: usize = 8;

/// The receiver's window edge moved from `from` to `to` in an ACK seen `at`.
#[derive(Clone, Copy, Debug, Default)]
struct Move {
    from: SeqNum,
    to: SeqNum,
    at: Timestamp,
}

#[derive(Clone, Debug, Default)]
pub struct ReleaseSampler {
    /// The furthest right edge advertised so far.
    edge: Option<SeqNum>,
    /// Moves of the edge not yet used by data, oldest first, in a fixed ring.
    ring: [Move; PENDING],
    start: usize,
    len: usize,
    /// A window went unread since the last edge: the next one read is a base.
    blind: bool,
    /// Data went past every edge seen: the capture misses this receiver's window updates.
    broken: bool,
    /// The end of the furthest data seen.
    sent: Option<SeqNum>,
}

impl ReleaseSampler {
    /// An ACK seen `at` advertised a window whose right edge is `edge`.
    pub fn on_window(&mut self, edge: SeqNum, at: Timestamp) {
        let Some(e) = self.edge.filter(|_| !self.blind) else {
            // The first edge, or the first after a window not read: a base, no move (the
            // sender may have had more than it since an ACK not read: at least what it sent).
            let furthest = |a: Option<SeqNum>, b: SeqNum| match a {
                Some(a) if a.is_after(b) => a,
                _ => b,
            };
            self.edge = Some(furthest(self.sent, furthest(self.edge, edge)));
            self.blind = false;
            return;
        };
        if !edge.is_after(e) {
            return;
        }
        self.edge = Some(edge);
        if self.len == PENDING {
            self.start = (self.start + 1) % PENDING;
            self.len -= 1;
        }
        self.ring[(self.start + self.len) % PENDING] = Move { from: e, to: edge, at };
        self.len += 1;
    }

    /// Whether the capture turned out to miss this receiver's window updates: every sample
    /// given is then suspect.
    pub fn broken(&self) -> bool {
        self.broken
    }

    /// An ACK whose window could not be read (its scale not fixed), or one after ACKs the
    /// capture missed: the edge the sender had since is unknown, so nothing pending can be
    /// paired, and the next window read is a base, not a move.
    pub fn forget(&mut self) {
        self.blind = true;
        self.len = 0;
    }

    /// New data ending at `end` was seen `at` (not a persist probe). Returns the loop
    /// through its sender it shows, when the segment needed an edge move seen before it.
    pub fn on_data(&mut self, end: SeqNum, at: Timestamp) -> Option<Span> {
        if self.sent.is_none_or(|x| end.is_after(x)) {
            self.sent = Some(end);
        }
        if self.broken {
            return None;
        }
        if self.edge.is_some_and(|e| end.is_after(e)) && !self.blind {
            // Past every edge seen: the sender had a window update the capture did not show.
            // Any later update may come after ones missed again: no pairing from here on.
            self.broken = true;
            self.len = 0;
            return None;
        }
        // The first pending move whose edge lets the segment go.
        let i = (0..self.len).find(|&i| !end.is_after(self.ring[(self.start + i) % PENDING].to))?;
        let m = self.ring[(self.start + i) % PENDING];
        if !end.is_after(m.from) {
            // Within an edge known before any move kept (a re-sent old range never comes
            // here: only new data does).
            return None;
        }
        // This move and the ones before it are used: data went past their edges.
        self.start = (self.start + i + 1) % PENDING;
        self.len -= i + 1;
        let sample = at - m.at;
        (sample.nanos() >= 0).then_some(sample)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(us: i64) -> Timestamp {
        Timestamp(0) + Span::from_micros(us)
    }

    #[test]
    fn data_past_the_old_edge_times_the_loop_from_the_move() {
        let mut r = ReleaseSampler::default();
        let s = SeqNum(1000);
        r.on_window(s.add(10_000), t(0));
        // Within the first window: nothing released it that the capture saw.
        assert_eq!(r.on_data(s.add(1448), t(10)), None);
        r.on_window(s.add(12_896), t(100));
        r.on_window(s.add(14_344), t(130));
        // The segment that needed the first move: 40 µs after it.
        assert_eq!(r.on_data(s.add(11_448), t(140)), Some(Span::from_micros(40)));
        // The next one needed the second move (130 µs): 45 µs.
        assert_eq!(r.on_data(s.add(14_344), t(175)), Some(Span::from_micros(45)));
        // Beyond every edge seen: an ACK the capture missed released it.
        assert_eq!(r.on_data(s.add(15_792), t(180)), None);
    }

    #[test]
    fn after_a_window_not_read_the_next_is_a_base_and_the_furthest_edge_stays() {
        let mut r = ReleaseSampler::default();
        let s = SeqNum(7);
        r.on_window(s.add(15_345), t(0));
        r.forget();
        // Read again, the edge is lower (rounded by the scale): a base, the old edge kept.
        r.on_window(s.add(15_329), t(10));
        r.on_window(s.add(18_249), t(20));
        assert_eq!(
            r.on_data(s.add(15_345), t(30)),
            None,
            "within the edge of the first ACK"
        );
        assert_eq!(r.on_data(s.add(16_745), t(45)), Some(Span::from_micros(25)));
    }

    #[test]
    fn data_past_every_edge_ends_the_pairing() {
        let mut r = ReleaseSampler::default();
        let s = SeqNum(0);
        r.on_window(s.add(1_000), t(0));
        assert_eq!(r.on_data(s.add(3_000), t(5)), None, "an update the capture missed");
        r.on_window(s.add(5_000), t(10));
        assert_eq!(r.on_data(s.add(4_000), t(11)), None);
    }

    #[test]
    fn a_shrinking_window_moves_nothing_and_the_ring_stays_bounded() {
        let mut r = ReleaseSampler::default();
        let s = SeqNum(u32::MAX - 5000); // across the wrap
        r.on_window(s.add(10_000), t(0));
        r.on_window(s.add(9_000), t(5));
        assert_eq!(r.len, 0);
        for k in 1..=20u32 {
            r.on_window(s.add(10_000 + 100 * k), t(10 * k as i64));
        }
        assert_eq!(r.len, PENDING);
        // The moves kept are the last eight: data needing an older one is not timed.
        assert_eq!(r.on_data(s.add(10_150), t(500)), None);
        assert_eq!(r.on_data(s.add(11_950), t(500)), Some(Span::from_micros(300)));
    }
}
