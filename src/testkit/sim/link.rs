//! The elements of the path: a drop-tail queue in front of a fixed-rate link with a
//! propagation delay, and a token bucket that shapes (Linux `tbf`: it queues what
//! exceeds the rate) or polices (`tc ... police`: it drops it).
//!
//! Times are nanoseconds of simulated time; packets enter in time order.

use super::Shaper;
use std::collections::VecDeque;

const NS: u128 = 1_000_000_000;

/// One direction of the path's bottleneck.
pub(super) struct Link {
    /// Bits/s; 0 = no bottleneck.
    pub rate: u64,
    pub delay: i64,
    limit: usize,
    departures: VecDeque<i64>,
    last_dep: i64,
}

impl Link {
    pub fn new(rate: u64, delay: i64, limit: usize) -> Self {
        Link {
            rate,
            delay,
            limit: limit.max(1),
            departures: VecDeque::new(),
            last_dep: i64::MIN,
        }
    }

    /// Serialisation time of `wire` bytes at `rate`, rounded to the nanosecond.
    pub fn serialisation(wire: u32, rate: u64) -> i64 {
        ((wire as u128 * 8 * NS + rate as u128 / 2) / rate.max(1) as u128) as i64
    }

    /// Packets in the queue at `t` (the one being serialised counts), as a packet arriving
    /// then finds it.
    pub fn backlog(&mut self, t: i64) -> usize {
        while self.departures.front().is_some_and(|&d| d <= t) {
            self.departures.pop_front();
        }
        self.departures.len()
    }

    /// A packet of `wire` bytes reaches the queue at `t`: None when the queue is full,
    /// else (start of its serialisation, its departure, its arrival at the far end).
    pub fn enter(&mut self, t: i64, wire: u32) -> Option<(i64, i64, i64)> {
        if self.rate == 0 {
            return Some((t, t, t + self.delay));
        }
        while self.departures.front().is_some_and(|&d| d <= t) {
            self.departures.pop_front();
        }
        if self.departures.len() >= self.limit {
            return None;
        }
        let ser = Self::serialisation(wire, self.rate);
        let start = t.max(self.last_dep);
        let dep = start + ser;
        self.departures.push_back(dep);
        self.last_dep = dep;
        Some((start, dep, dep + self.delay))
    }
}

/// A token bucket of `rate` bits/s holding at most `burst` bytes of tokens (it starts
/// full). Shaping, packets wait in a FIFO of at most `limit` bytes until the tokens for
/// them have accrued, so they leave in bursts at line rate after an idle spell and
/// spaced at `rate` once the bucket is empty; policing, a packet without its tokens is
/// dropped.
pub(super) struct TokenBucket {
    cfg: Shaper,
    /// Tokens in bit-nanoseconds (bits x 1e9: `rate` accrue per ns), as of `at`.
    tokens: u128,
    at: i64,
    /// Departures of the packets queued, with their sizes.
    queued: VecDeque<(i64, u32)>,
    queued_bytes: u64,
    /// When the last packet had its tokens, and when it was released.
    last_tokens: i64,
    last_dep: i64,
}

impl TokenBucket {
    pub fn new(cfg: Shaper) -> Self {
        let cfg = Shaper {
            // The bucket must hold one full frame, or nothing ever leaves.
            burst_bytes: cfg.burst_bytes.max(1514),
            rate_bps: cfg.rate_bps.max(1),
            ..cfg
        };
        TokenBucket {
            tokens: Self::cap(&cfg),
            cfg,
            at: i64::MIN,
            queued: VecDeque::new(),
            queued_bytes: 0,
            last_tokens: i64::MIN,
            last_dep: i64::MIN,
        }
    }

    fn cap(cfg: &Shaper) -> u128 {
        cfg.burst_bytes as u128 * 8 * NS
    }

    /// The tokens at `t` (>= the last update).
    fn tokens_at(&self, t: i64) -> u128 {
        if self.at == i64::MIN {
            return Self::cap(&self.cfg);
        }
        let dt = (t - self.at).max(0) as u128;
        (self.tokens + dt * self.cfg.rate_bps as u128).min(Self::cap(&self.cfg))
    }

    /// A packet of `wire` bytes arrives at `t`: None when it is dropped (policed, or
    /// the shaper's queue is full), else when its tokens were there and when it leaves
    /// the bucket (the next tick).
    pub fn enter(&mut self, t: i64, wire: u32) -> Option<(i64, i64)> {
        let cost = wire as u128 * 8 * NS;
        if self.cfg.police {
            let have = self.tokens_at(t);
            if have < cost {
                return None;
            }
            self.tokens = have - cost;
            self.at = t;
            return Some((t, t));
        }
        while self.queued.front().is_some_and(|&(d, _)| d <= t) {
            let (_, w) = self.queued.pop_front().expect("front");
            self.queued_bytes -= w as u64;
        }
        if self.queued_bytes + wire as u64 > self.cfg.limit_bytes.max(wire) as u64 {
            return None;
        }
        let start = t.max(self.last_tokens);
        let have = self.tokens_at(start);
        let ready = if have >= cost {
            self.tokens = have - cost;
            start
        } else {
            let wait = (cost - have).div_ceil(self.cfg.rate_bps as u128) as i64;
            self.tokens = 0;
            start + wait
        };
        self.at = ready;
        self.last_tokens = ready;
        // Released at the next tick once its tokens are there (never before a packet
        // ahead of it).
        let tick = self.cfg.tick.as_nanos() as i64;
        let dep = if tick > 0 && ready > t {
            (ready.div_euclid(tick) + (ready.rem_euclid(tick) > 0) as i64) * tick
        } else {
            ready
        }
        .max(self.last_dep);
        self.last_dep = dep;
        if dep > t {
            self.queued.push_back((dep, wire));
            self.queued_bytes += wire as u64;
        }
        Some((ready, dep))
    }

    pub fn rate(&self) -> u64 {
        self.cfg.rate_bps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn shaper(police: bool) -> TokenBucket {
        TokenBucket::new(Shaper {
            rate_bps: 8_000_000, // 1 byte per µs
            burst_bytes: 3_000,
            limit_bytes: 10_000,
            police,
            tick: Duration::ZERO,
        })
    }

    #[test]
    fn a_shaper_passes_its_burst_then_spaces_packets_at_its_rate() {
        let mut b = shaper(false);
        // Six 1000-byte packets at once: three leave at once (the bucket's 3000 bytes),
        // then one every 1000 µs.
        let deps: Vec<i64> = (0..6).map(|_| b.enter(0, 1000).unwrap().1).collect();
        assert_eq!(deps, [0, 0, 0, 1_000_000, 2_000_000, 3_000_000]);
        // The queue holds 10 000 bytes, 3000 of them waiting already: seven more fit,
        // the eighth is dropped.
        let more: Vec<Option<(i64, i64)>> = (0..8).map(|_| b.enter(0, 1000)).collect();
        assert_eq!(more.iter().filter(|d| d.is_none()).count(), 1);
        // After a long idle spell the bucket is full again, never fuller.
        assert_eq!(b.enter(1_000_000_000, 1000), Some((1_000_000_000, 1_000_000_000)));
        assert_eq!(b.enter(1_000_000_000, 1000), Some((1_000_000_000, 1_000_000_000)));
        assert_eq!(b.enter(1_000_000_000, 1000), Some((1_000_000_000, 1_000_000_000)));
        assert_eq!(b.enter(1_000_000_000, 1000), Some((1_001_000_000, 1_001_000_000)));
    }

    #[test]
    fn a_ticking_shaper_releases_what_accrued_together() {
        let mut b = TokenBucket::new(Shaper {
            tick: Duration::from_millis(3),
            ..shaper(false).cfg
        });
        // Three pass at once; the next three have their tokens at 1, 2 and 3 ms and all
        // leave at the 3 ms tick; the seventh at the 6 ms one.
        let deps: Vec<i64> = (0..7).map(|_| b.enter(0, 1000).unwrap().1).collect();
        assert_eq!(deps, [0, 0, 0, 3_000_000, 3_000_000, 3_000_000, 6_000_000]);
    }

    #[test]
    fn a_policer_drops_what_exceeds_its_tokens() {
        let mut b = shaper(true);
        let passed: Vec<bool> = (0..5).map(|_| b.enter(0, 1000).is_some()).collect();
        assert_eq!(passed, [true, true, true, false, false]);
        // 1000 µs later one packet's worth has accrued.
        assert_eq!(b.enter(1_000_000, 1000), Some((1_000_000, 1_000_000)));
        assert_eq!(b.enter(1_000_000, 1000), None);
    }

    #[test]
    fn a_link_serialises_and_drops_at_its_limit() {
        let mut l = Link::new(8_000_000, 5_000_000, 2);
        assert_eq!(l.enter(0, 1000), Some((0, 1_000_000, 6_000_000)));
        assert_eq!(l.enter(0, 1000), Some((1_000_000, 2_000_000, 7_000_000)));
        assert_eq!(l.enter(0, 1000), None);
        assert_eq!(l.enter(1_000_000, 1000), Some((2_000_000, 3_000_000, 8_000_000)));
    }
}
