//! Which worker takes a connection, and when to move one.
//!
//! A connection that gets a tracker goes to the worker with the fewest connections (ties:
//! the fewest segments so far). That cannot know which connections will carry the
//! traffic: those that start together (iperf -P, a browser) look alike at their start,
//! and a control connection counts as much as a bulk one. So the front counts each
//! connection's segments per sweep interval, and when one worker got clearly more than
//! another in the last interval, the balancer picks the one connection that evens them out
//! best (at most one per interval: a move stalls the reading thread until the old worker
//! caught up).
//!
//! A move never changes a result: the connection's whole state travels, and its segments
//! still reach whichever worker holds it in capture order.

/// Below this many segments per interval on the busiest worker, imbalance costs nothing
/// worth a stall: the reading thread, not the workers, sets the pace there.
pub(crate) const REBALANCE_MIN_SEGMENTS: u64 = 8_192;

/// A move must bring the busiest worker's load down to at most this share of what it
/// was (7/8): small gains are not worth the stall, and a connection must not bounce
/// between two workers whose loads wobble.
const REBALANCE_GAIN: (u64, u64) = (7, 8);

/// The connection (by id) to take from one worker and give to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Move {
    pub id: u64,
    pub from: usize,
    pub to: usize,
}

pub(crate) struct Balancer {
    /// Connections each worker holds now, and segments it was given (the tie-break).
    flows: Vec<u64>,
    load: Vec<u64>,
    /// [`REBALANCE_MIN_SEGMENTS`], lowered by tests.
    rebalance_min: u64,
    pub(crate) moves: u64,
}

impl Balancer {
    pub(crate) fn new(workers: usize, rebalance_min: u64) -> Balancer {
        Balancer {
            flows: vec![0; workers.max(1)],
            load: vec![0; workers.max(1)],
            rebalance_min,
            moves: 0,
        }
    }

    pub(crate) fn workers(&self) -> usize {
        self.flows.len()
    }

    /// The worker a new connection goes to.
    pub(crate) fn place(&mut self) -> usize {
        let (flows, load) = (&self.flows, &self.load);
        let w = (0..flows.len()).min_by_key(|&w| (flows[w], load[w])).unwrap_or(0);
        self.flows[w] += 1;
        w
    }

    #[inline]
    pub(crate) fn on_segment(&mut self, w: usize) {
        self.load[w] += 1;
    }

    pub(crate) fn on_end(&mut self, w: usize) {
        self.flows[w] -= 1;
    }

    /// Given each connection's (id, worker, segments in the last interval): the one of
    /// the busiest worker whose segments, given to the idlest, bring the two closest to
    /// even; none if no move gains enough. The caller carries it out and calls
    /// [`Self::moved`].
    pub(crate) fn choose(&self, conns: &[(u64, usize, u64)]) -> Option<Move> {
        let workers = self.flows.len();
        if workers < 2 {
            return None;
        }
        let mut recent = vec![0u64; workers];
        for &(_, w, r) in conns {
            recent[w] += r;
        }
        let from = (0..workers).max_by_key(|&w| (recent[w], std::cmp::Reverse(w)))?;
        let to = (0..workers).min_by_key(|&w| (recent[w], w))?;
        let (hi, lo) = (recent[from], recent[to]);
        if from == to || hi < self.rebalance_min {
            return None;
        }
        // Moving c segments' worth leaves the pair at max(hi - c, lo + c).
        let after = |c: u64| (hi - c).max(lo + c);
        let (id, c) = conns
            .iter()
            .filter(|&&(_, w, r)| w == from && r > 0 && r < hi - lo)
            .map(|&(id, _, r)| (id, r))
            .min_by_key(|&(id, c)| (after(c), id))?;
        let (num, den) = REBALANCE_GAIN;
        (after(c) * den <= hi * num).then_some(Move { id, from, to })
    }

    pub(crate) fn moved(&mut self, m: Move) {
        self.flows[m.from] -= 1;
        self.flows[m.to] += 1;
        self.moves += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placed(b: &mut Balancer, n: usize) -> Vec<usize> {
        (0..n).map(|_| b.place()).collect()
    }

    #[test]
    fn new_connections_spread_by_count() {
        let mut b = Balancer::new(2, 1_000);
        assert_eq!(placed(&mut b, 5), [0, 1, 0, 1, 0]);
        b.on_end(0);
        b.on_end(0);
        assert_eq!(b.place(), 0, "fewest connections");
    }

    #[test]
    fn the_connection_that_evens_the_workers_best_moves() {
        let mut b = Balancer::new(2, 1_000);
        placed(&mut b, 5);
        // w0 carried ~600, w1 ~9,000: moving 5,000 leaves 4,000 / 5,600, moving 4,000
        // leaves 5,000 / 4,600: the second evens them better.
        let conns = [(1, 0, 100), (2, 1, 5_000), (3, 0, 200), (4, 1, 4_000), (5, 0, 300)];
        let m = b.choose(&conns).expect("a move");
        assert_eq!(m, Move { id: 4, from: 1, to: 0 });
        b.moved(m);
        assert_eq!((b.flows.clone(), b.moves), (vec![4, 1], 1));
    }

    #[test]
    fn no_move_when_it_would_not_pay() {
        let b = Balancer::new(2, 1_000);
        // Three equal connections on two workers: moving one only turns 2:1 into 1:2.
        assert_eq!(b.choose(&[(1, 0, 4_000), (2, 1, 4_000), (3, 0, 4_000)]), None);
        // A move that would help a little (4,600 / 4,000 to 4,300 / 4,300): not worth it.
        assert_eq!(
            b.choose(&[(1, 0, 4_000), (2, 1, 4_000), (3, 0, 300), (4, 1, 0), (5, 0, 300)]),
            None
        );
        // A clear imbalance, but below the threshold: the reader sets the pace there.
        let b = Balancer::new(2, 10_000);
        assert_eq!(b.choose(&[(1, 0, 100), (2, 1, 4_000), (3, 0, 4_000)]), None);
        // One worker has nowhere to move to.
        let b = Balancer::new(1, 0);
        assert_eq!(b.choose(&[(1, 0, 100), (2, 0, 4_000)]), None);
        // Equal candidates: the lower id.
        let b = Balancer::new(2, 1_000);
        let m = b.choose(&[(1, 0, 100), (2, 1, 4_000), (3, 0, 100), (4, 1, 4_000)]);
        assert_eq!(m, Some(Move { id: 2, from: 1, to: 0 }));
    }
}
