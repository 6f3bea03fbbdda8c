//! Which worker owns which connection, and when to move one.
//!
//! A new connection goes to the worker with the fewest connections (ties: the fewest
//! segments so far). That cannot know which connections will carry the traffic: those
//! that start together (iperf -P, a browser) look alike at their SYN, and a control
//! connection counts as much as a bulk one. So the router also counts each connection's
//! segments per sweep interval, and when one worker got clearly more than another in the
//! last interval, it moves the one connection that evens them out best (at most one per
//! interval: a move stalls the reading thread until the old worker caught up).
//!
//! A move never changes a result: the connection's whole state travels, and its segments
//! still reach whichever worker holds it in capture order.

use crate::decode::Segment;
use crate::flow::{Endpoint, FlowKey, FxHashMap, TableConfig};
use crate::time::{Span, Timestamp};

/// How often (capture time) the router forgets idle keys and weighs the workers.
const SWEEP_EVERY: Span = Span::from_millis(1_000);

/// Below this many segments per interval on the busiest worker, imbalance costs nothing
/// worth a stall: the reading thread, not the workers, sets the pace there.
pub(crate) const REBALANCE_MIN_SEGMENTS: u64 = 8_192;

/// A move must bring the busiest worker's load down to at most this share of what it
/// was (7/8): small gains are not worth the stall, and a connection must not bounce
/// between two workers whose loads wobble.
const REBALANCE_GAIN: (u64, u64) = (7, 8);

/// A connection to take from one worker and give to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Move {
    pub key: FlowKey,
    pub from: usize,
    pub to: usize,
}

#[derive(Clone, Copy, Debug)]
struct Owned {
    worker: usize,
    /// Latest segment time, to forget idle keys.
    last: Timestamp,
    /// Segments since the last sweep.
    recent: u64,
}

pub(crate) struct Router {
    owner: FxHashMap<FlowKey, Owned>,
    /// The last segment's key and its state, written back to `owner` when another key
    /// takes its place and before a sweep reads it: consecutive segments mostly belong
    /// to one connection.
    last: Option<(FlowKey, Owned)>,
    /// Connections each worker owns now, and segments it was given (the tie-break).
    flows: Vec<u64>,
    load: Vec<u64>,
    now: Timestamp,
    last_sweep: Option<Timestamp>,
    forget_after: Span,
    /// Decided at a sweep, carried out by the caller (see [`Self::take_move`]).
    pending: Option<Move>,
    /// [`REBALANCE_MIN_SEGMENTS`], lowered by tests.
    rebalance_min: u64,
    pub(crate) moves: u64,
}

impl Router {
    pub(crate) fn new(workers: usize, table: TableConfig, rebalance_min: u64) -> Router {
        Router {
            owner: FxHashMap::default(),
            last: None,
            flows: vec![0; workers],
            load: vec![0; workers],
            now: Timestamp(i64::MIN),
            last_sweep: None,
            forget_after: table.idle_timeout + table.closed_linger + SWEEP_EVERY,
            pending: None,
            rebalance_min,
            moves: 0,
        }
    }

    /// The worker that owns `seg`'s connection (choosing one for a new connection).
    #[inline]
    pub(crate) fn route(&mut self, seg: &Segment, ts: Timestamp) -> usize {
        self.now = self.now.max(ts);
        let (src, dst) = Endpoint::pair_of(seg);
        let w = match &mut self.last {
            Some((k, o)) if k.matches(&src, &dst) => {
                o.last = o.last.max(ts);
                o.recent += 1;
                o.worker
            }
            _ => {
                self.write_back();
                let (key, _) = FlowKey::of(src, dst);
                // Connections that start together (iperf -P, a browser) have no history
                // yet: the count of connections spreads them; the segments so far break ties.
                let (flows, load) = (&mut self.flows, &self.load);
                let o = self.owner.entry(key).or_insert_with(|| {
                    let idlest = (0..load.len()).min_by_key(|&w| (flows[w], load[w])).unwrap_or(0);
                    flows[idlest] += 1;
                    Owned {
                        worker: idlest,
                        last: ts,
                        recent: 0,
                    }
                });
                o.last = o.last.max(ts);
                o.recent += 1;
                self.last = Some((key, *o));
                o.worker
            }
        };
        self.load[w] += 1;
        if self.last_sweep.is_none_or(|t| self.now - t >= SWEEP_EVERY) {
            self.sweep();
        }
        w
    }

    /// The move decided at the last sweep, if the caller has not carried it out yet.
    /// The caller hands the connection over and then the router counts it as moved.
    #[inline]
    pub(crate) fn take_move(&mut self) -> Option<Move> {
        // Asked after every segment; a move is due at most once a second of capture.
        self.pending?;
        self.carry_out()
    }

    #[cold]
    #[inline(never)]
    fn carry_out(&mut self) -> Option<Move> {
        let m = self.pending.take()?;
        self.write_back();
        self.last = None;
        // Chosen at the sweep from the connections it kept: the key is in the map.
        let o = self.owner.get_mut(&m.key)?;
        o.worker = m.to;
        self.flows[m.from] -= 1;
        self.flows[m.to] += 1;
        self.moves += 1;
        Some(m)
    }

    /// Forgets keys idle for longer than a connection can live in a shard (so the map is
    /// bounded by the live connections), and weighs the workers' last interval.
    fn sweep(&mut self) {
        self.last_sweep = Some(self.now);
        self.write_back();
        self.last = None;
        let workers = self.flows.len();
        let mut recent = vec![0u64; workers];
        for o in self.owner.values() {
            recent[o.worker] += o.recent;
        }
        self.pending = if workers > 1 { self.choose_move(&recent) } else { None };
        let (now, keep, flows) = (self.now, self.forget_after, &mut self.flows);
        self.owner.retain(|_, o| {
            o.recent = 0;
            let live = now - o.last <= keep;
            if !live {
                flows[o.worker] -= 1;
            }
            live
        });
    }

    /// The connection of the busiest worker whose segments, given to the idlest, bring
    /// the two closest to even; none if no move gains enough.
    fn choose_move(&self, recent: &[u64]) -> Option<Move> {
        let from = (0..recent.len()).max_by_key(|&w| (recent[w], std::cmp::Reverse(w)))?;
        let to = (0..recent.len()).min_by_key(|&w| (recent[w], w))?;
        let (hi, lo) = (recent[from], recent[to]);
        if from == to || hi < self.rebalance_min {
            return None;
        }
        // Moving c segments' worth leaves the pair at max(hi - c, lo + c).
        let after = |c: u64| (hi - c).max(lo + c);
        let (key, c) = self
            .owner
            .iter()
            .filter(|(_, o)| o.worker == from && o.recent > 0 && o.recent < hi - lo)
            .map(|(k, o)| (*k, o.recent))
            .min_by_key(|&(k, c)| (after(c), k))?;
        let (num, den) = REBALANCE_GAIN;
        (after(c) * den <= hi * num).then_some(Move { key, from, to })
    }

    /// Brings the cached key's state back into `owner`.
    fn write_back(&mut self) {
        if let Some((k, o)) = self.last {
            if let Some(e) = self.owner.get_mut(&k) {
                e.last = e.last.max(o.last);
                e.recent = o.recent;
            }
        }
    }

    /// The map's record of `key` (worker, latest time), without the cached key's news.
    #[cfg(test)]
    pub(crate) fn owner_of(&self, key: &FlowKey) -> Option<(usize, Timestamp)> {
        self.owner.get(key).map(|o| (o.worker, o.last))
    }

    #[cfg(test)]
    pub(crate) fn flows(&self) -> &[u64] {
        &self.flows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::LinkType;
    use crate::testkit::TcpPacket;

    fn seg(client_port: u16) -> Segment {
        let src = format!("10.0.0.1:{client_port}");
        let (_, bytes) = TcpPacket::new(&src, "10.0.0.2:80")
            .seq(1)
            .ack(1)
            .payload_len(10)
            .ethernet()
            .build();
        crate::decode::decode(LinkType::ETHERNET, &bytes).unwrap()
    }

    fn key(client_port: u16) -> FlowKey {
        let s = seg(client_port);
        let (a, b) = Endpoint::pair_of(&s);
        FlowKey::of(a, b).0
    }

    const MS: i64 = 1_000_000;

    fn moving(client_port: u16, from: usize, to: usize) -> Move {
        Move {
            key: key(client_port),
            from,
            to,
        }
    }

    /// Routes `counts[i]` segments of connection `ports[i]`, interleaved, spread over
    /// (t0, t0 + 900 ms], after one segment of each at t0 (their placement).
    fn feed(r: &mut Router, ports: &[u16], counts: &[u64], t0: i64) {
        for &p in ports {
            r.route(&seg(p), Timestamp(t0));
        }
        let total: u64 = counts.iter().sum();
        let mut left = counts.to_vec();
        let mut n = 0;
        while left.iter().any(|&c| c > 0) {
            for (i, &p) in ports.iter().enumerate() {
                if left[i] > 0 {
                    left[i] -= 1;
                    n += 1;
                    r.route(&seg(p), Timestamp(t0 + 1 + (n * 900 * MS as u64 / total) as i64));
                    assert_eq!(r.take_move(), None, "a move before the sweep");
                }
            }
        }
    }

    #[test]
    fn the_connection_that_evens_the_workers_best_moves_at_the_sweep() {
        let mut r = Router::new(2, TableConfig::default(), 1_000);
        // Placed as they appear, all with one segment: by count, ties to the first worker.
        feed(&mut r, &[1, 2, 3, 4, 5], &[100, 5_000, 200, 4_000, 300], 0);
        let owners: Vec<usize> = (1..=5).map(|p| r.owner_of(&key(p)).unwrap().0).collect();
        assert_eq!(owners, [0, 1, 0, 1, 0]);
        // w0 carried ~600, w1 ~9,000: moving port 2's 5,000 leaves 4,000 / 5,600, moving
        // port 4's 4,000 leaves 5,000 / 4,600: the second evens them better.
        r.route(&seg(1), Timestamp(1_000 * MS));
        let m = r.take_move().expect("a move");
        assert_eq!(m, moving(4, 1, 0));
        assert_eq!(r.take_move(), None, "one move per sweep");
        assert_eq!(r.owner_of(&key(4)).unwrap().0, 0);
        assert_eq!(r.flows(), [4, 1]);
        assert_eq!(r.route(&seg(4), Timestamp(1_001 * MS)), 0, "its segments follow it");
        assert_eq!(r.moves, 1);
    }

    #[test]
    fn no_move_when_it_would_not_pay() {
        // Three equal connections on two workers: moving one only turns 2:1 into 1:2.
        let mut r = Router::new(2, TableConfig::default(), 1_000);
        feed(&mut r, &[1, 2, 3], &[4_000, 4_000, 4_000], 0);
        r.route(&seg(1), Timestamp(1_000 * MS));
        assert_eq!(r.take_move(), None);
        // A move that would help a little (4,600 / 4,000 to 4,300 / 4,300): not worth a stall.
        let mut r = Router::new(2, TableConfig::default(), 1_000);
        feed(&mut r, &[1, 2, 3, 4, 5], &[4_000, 4_000, 300, 0, 300], 0);
        r.route(&seg(1), Timestamp(1_000 * MS));
        assert_eq!(r.take_move(), None);
        // A clear imbalance, but below the threshold: the reader sets the pace there.
        let mut r = Router::new(2, TableConfig::default(), 10_000);
        feed(&mut r, &[1, 2, 3], &[100, 4_000, 4_000], 0);
        r.route(&seg(1), Timestamp(1_000 * MS));
        assert_eq!(r.take_move(), None);
        // One worker has nowhere to move to.
        let mut r = Router::new(1, TableConfig::default(), 0);
        feed(&mut r, &[1, 2], &[100, 4_000], 0);
        r.route(&seg(1), Timestamp(1_000 * MS));
        assert_eq!(r.take_move(), None);
    }

    #[test]
    fn each_interval_is_weighed_afresh() {
        // After a move, the next interval's counts decide: a balanced interval moves
        // nothing back.
        let mut r = Router::new(2, TableConfig::default(), 1_000);
        feed(&mut r, &[1, 2, 3, 4], &[100, 4_000, 100, 4_000], 0);
        r.route(&seg(1), Timestamp(1_000 * MS));
        let m = r.take_move().expect("a move");
        assert_eq!(m, moving(2, 1, 0), "equal candidates: the lower key");
        feed(&mut r, &[1, 2, 3, 4], &[100, 4_000, 100, 4_000], 1_001 * MS);
        r.route(&seg(1), Timestamp(2_100 * MS));
        assert_eq!(r.take_move(), None);
    }
}
