//! Floods and scans: what the connection attempts of a whole capture say, when there are
//! many of them. The watcher sees every SYN (its time, who to whom, whether it opened an
//! attempt) and every attempt's outcome when it ends (`flow::Outcome`), and keeps, in
//! bounded memory whatever the number of sources:
//! - capture totals: SYNs, attempts by outcome, distinct sources, destination hosts and
//!   ports ([`hll::Hll`]), the SYN rate over time and its peak second;
//! - per destination service, per (source, destination host) and per (source,
//!   destination port): the heaviest 64 of each ([`topk::TopK`]), with their distinct
//!   counts (exact up to 32, then HyperLogLog: ~1 KB each at most).
//!
//! The findings are general statements, each from a published detector:
//!
//! | finding | rule | source |
//! |---|---|---|
//! | `syn-flood` | one service gets >= 15,000 attempts within 60 s, and >= 80% of its attempts fail (judged once >= 20 of them ended) | the threshold of Bro's `synflood.bro` (15,000 new connections per 60 s interval); the failure share is the threshold random walk's scanner model: a benign attempt succeeds with probability 0.8, a malicious one with 0.2 (Jung, Paxson, Berger, Balakrishnan, "Fast portscan detection using sequential hypothesis testing", IEEE S&P 2004) |
//! | `port-scan` | one source's failed attempts reach >= 15 distinct ports of one host | Zeek `scan.zeek`, `port_scan_threshold` |
//! | `address-scan` | one source's failed attempts reach >= 25 distinct hosts on one port | Zeek `scan.zeek`, `addr_scan_threshold` |
//! | `failed-attempts` | >= 80% of the capture's attempts failed, over >= 20 attempts | TRW's 0.2 success rate again; with 20 attempts a benign population (0.8) fails that often with probability 1.4e-8 (binomial) |
//!
//! A failed attempt is Zeek's (`scan.zeek`'s `is_failed_conn`): no data either way, and
//! no completed handshake (unanswered, refused by a reset, or half-open). Zeek counts
//! scans per 5-minute interval; here the counts run over the whole capture (a capture of
//! an incident is usually that short; a long one can only find more).
//! Distinguishing a flood from a flash crowd (Jung, Krishnamurthy, Rabinovich, "Flash
//! crowds and denial of service attacks", WWW 2002): a crowd's clients complete their
//! handshakes; a flood's do not — hence the failure share in `syn-flood`, and the distinct
//! sources in its figures (spoofed floods have about one source per SYN).

pub mod hll;
pub mod offload;
pub mod topk;

use crate::flow::{Endpoint, Outcome};
use crate::summary::{AttemptCounts, FloodFinding, FloodKind, PeakSecond, RateSeries};
use crate::time::Timestamp;
use hll::Hll;
pub use offload::Offload;
use std::net::IpAddr;
use topk::{Clear, TopK};

/// `syn-flood`: attempts to one service within [`FLOOD_WINDOW_S`] seconds.
pub const FLOOD_ATTEMPTS: u64 = 15_000;
pub const FLOOD_WINDOW_S: usize = 60;
/// The threshold random walk's success probability of a scanner (its benign one is 0.8).
pub const MALICIOUS_SUCCESS: f64 = 0.2;
/// `port-scan`: distinct ports of one host in one source's failed attempts.
pub const PORT_SCAN_PORTS: u64 = 15;
/// `address-scan`: distinct hosts on one port in one source's failed attempts.
pub const ADDRESS_SCAN_HOSTS: u64 = 25;
/// The fewest ended attempts a failure share is judged over (`syn-flood`, `failed-attempts`).
pub const MIN_ATTEMPTS: u64 = 20;
/// Counters per kind of key.
const TOP: usize = 64;
/// Bins of the capture's SYN rate, at most (they widen to fit).
const RATE_BINS: usize = 600;

fn ip_word(a: IpAddr) -> u64 {
    match a {
        IpAddr::V4(v) => u32::from(v) as u64,
        IpAddr::V6(v) => {
            let x = u128::from(v);
            (x as u64) ^ hll::mix((x >> 64) as u64)
        }
    }
}

/// Outcomes of the attempts that ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Ended {
    attempts: u64,
    unanswered: u64,
    refused: u64,
    half_open: u64,
    completed: u64,
    data: u64,
}

impl Ended {
    fn add(&mut self, o: Outcome) {
        self.attempts += 1;
        match o {
            Outcome::Unanswered => self.unanswered += 1,
            Outcome::Refused => self.refused += 1,
            Outcome::HalfOpen => self.half_open += 1,
            Outcome::Completed => self.completed += 1,
            Outcome::Data => self.data += 1,
        }
    }
    fn failed(&self) -> u64 {
        self.unanswered + self.refused + self.half_open
    }
    fn failed_share(&self) -> f64 {
        self.failed() as f64 / self.attempts.max(1) as f64
    }
    fn answered_share(&self) -> f64 {
        (self.attempts - self.unanswered) as f64 / self.attempts.max(1) as f64
    }
    fn completed_share(&self) -> f64 {
        (self.completed + self.data) as f64 / self.attempts.max(1) as f64
    }
}

/// SYNs per second of capture time: the current second's count and the busiest so far.
#[derive(Clone, Debug, Default)]
struct Peak {
    second: Option<i64>,
    count: u64,
    best: Option<(i64, u64)>,
}

impl Peak {
    fn add(&mut self, ts: Timestamp) {
        let s = ts.0.div_euclid(1_000_000_000);
        match self.second {
            Some(cur) if s <= cur => self.count += 1,
            _ => {
                self.close();
                self.second = Some(s);
                self.count = 1;
            }
        }
    }
    fn close(&mut self) {
        if let Some(cur) = self.second {
            if self.best.is_none_or(|(_, n)| self.count > n) {
                self.best = Some((cur, self.count));
            }
        }
    }
    fn result(&self) -> Option<PeakSecond> {
        let mut p = self.clone();
        p.close();
        p.best.map(|(s, n)| PeakSecond { ts: s as f64, syns: n })
    }
}

/// Attempts to one service in the last [`FLOOD_WINDOW_S`] seconds, and the most seen in
/// any such window.
#[derive(Clone, Debug)]
struct Window {
    ring: [u32; FLOOD_WINDOW_S],
    second: Option<i64>,
    sum: u64,
    best: u64,
}

impl Default for Window {
    fn default() -> Self {
        Window {
            ring: [0; FLOOD_WINDOW_S],
            second: None,
            sum: 0,
            best: 0,
        }
    }
}

impl Window {
    fn add(&mut self, ts: Timestamp) {
        let s = ts.0.div_euclid(1_000_000_000);
        let cur = *self.second.get_or_insert(s);
        if s > cur {
            // The seconds between leave the window.
            for k in 1..=((s - cur).min(FLOOD_WINDOW_S as i64)) {
                let i = (cur + k).rem_euclid(FLOOD_WINDOW_S as i64) as usize;
                self.sum -= self.ring[i] as u64;
                self.ring[i] = 0;
            }
            self.second = Some(s);
        }
        let i = s.max(cur - FLOOD_WINDOW_S as i64 + 1).rem_euclid(FLOOD_WINDOW_S as i64) as usize;
        self.ring[i] += 1;
        self.sum += 1;
        self.best = self.best.max(self.sum);
    }
}

/// The first and last time something was seen.
#[derive(Clone, Copy, Debug, Default)]
struct Seen {
    first: Option<Timestamp>,
    last: Option<Timestamp>,
}

impl Seen {
    fn add(&mut self, at: Timestamp) {
        self.first = Some(self.first.map_or(at, |f| f.min(at)));
        self.last = Some(self.last.map_or(at, |l| l.max(at)));
    }
}

#[derive(Clone, Debug, Default)]
struct Service {
    sources: Hll,
    window: Window,
    peak: Peak,
    ended: Ended,
    seen: Seen,
}

impl Clear for Service {
    fn clear(&mut self) {
        self.sources.clear();
        self.window = Window::default();
        self.peak = Peak::default();
        self.ended = Ended::default();
        self.seen = Seen::default();
    }
}

/// A source's failed attempts to one host (distinct ports) or on one port (distinct hosts).
#[derive(Clone, Debug, Default)]
struct Scan {
    distinct: Hll,
    seen: Seen,
}

impl Clear for Scan {
    fn clear(&mut self) {
        self.distinct.clear();
        self.seen = Seen::default();
    }
}

impl Scan {
    fn add(&mut self, v: u64, at: Timestamp) {
        self.distinct.add(v);
        self.seen.add(at);
    }
}

/// The SYN rate over the capture: bins of `width` seconds from the first SYN's second,
/// widened (pairs merged) to stay within [`RATE_BINS`].
#[derive(Clone, Debug, Default)]
struct Rate {
    start: Option<i64>,
    width: i64,
    bins: Vec<u64>,
}

impl Rate {
    fn add(&mut self, ts: Timestamp) {
        let s = ts.0.div_euclid(1_000_000_000);
        let start = *self.start.get_or_insert(s);
        if self.width == 0 {
            self.width = 1;
        }
        let mut i = ((s - start).max(0) / self.width) as usize;
        while i >= RATE_BINS {
            let merged: Vec<u64> = self.bins.chunks(2).map(|c| c.iter().sum()).collect();
            self.bins = merged;
            self.width *= 2;
            i = ((s - start).max(0) / self.width) as usize;
        }
        if i >= self.bins.len() {
            self.bins.resize(i + 1, 0);
        }
        self.bins[i] += 1;
    }
}

/// What the attempts of one capture came to, and the floods and scans among them.
#[derive(Clone, Debug)]
pub struct Watcher {
    syns: u64,
    attempts: u64,
    ended: Ended,
    sources: Hll,
    hosts: Hll,
    ports: Hll,
    rate: Rate,
    peak: Peak,
    services: TopK<(IpAddr, u16), Service>,
    port_scans: TopK<(IpAddr, IpAddr), Scan>,
    address_scans: TopK<(IpAddr, u16), Scan>,
    raised: bool,
}

impl Default for Watcher {
    fn default() -> Self {
        Watcher {
            syns: 0,
            attempts: 0,
            ended: Ended::default(),
            sources: Hll::default(),
            hosts: Hll::default(),
            ports: Hll::default(),
            rate: Rate::default(),
            peak: Peak::default(),
            services: TopK::new(TOP),
            port_scans: TopK::new(TOP),
            address_scans: TopK::new(TOP),
            raised: false,
        }
    }
}

impl Watcher {
    /// A SYN (without ACK) from `client` to `server` at `ts`; `new_attempt` when it opened
    /// a connection (not a retransmission).
    pub fn on_syn(&mut self, ts: Timestamp, client: Endpoint, server: Endpoint, new_attempt: bool) {
        self.syns += 1;
        self.rate.add(ts);
        self.peak.add(ts);
        if !new_attempt {
            return;
        }
        self.attempts += 1;
        let (src, dst) = (ip_word(client.addr), ip_word(server.addr));
        self.sources.add(src);
        self.hosts.add(dst);
        self.ports.add(server.port as u64);
        let s = self.services.count((server.addr, server.port));
        let v = &mut s.value;
        v.sources.add(src);
        v.window.add(ts);
        v.peak.add(ts);
        v.seen.add(ts);
    }

    /// An attempt that began at `first_ts` ended with `outcome`.
    pub fn on_end(&mut self, first_ts: Timestamp, client: Endpoint, server: Endpoint, outcome: Outcome) {
        self.ended.add(outcome);
        if let Some(s) = self.services.get_mut(&(server.addr, server.port)) {
            s.value.ended.add(outcome);
            if !self.raised && flood_met(&s.value) {
                self.raised = true;
            }
        }
        if outcome.failed() {
            let p = self.port_scans.count((client.addr, server.addr));
            p.value.add(server.port as u64, first_ts);
            let port_scan = p.value.distinct.at_least(PORT_SCAN_PORTS);
            let a = self.address_scans.count((client.addr, server.port));
            a.value.add(ip_word(server.addr), first_ts);
            let address_scan = a.value.distinct.at_least(ADDRESS_SCAN_HOSTS);
            if port_scan || address_scan {
                self.raised = true;
            }
        }
        if !self.raised && unanswered_met(&self.ended) {
            self.raised = true;
        }
    }

    /// Whether a finding holds already (attempts without data that end from now on are
    /// summarised by it rather than listed).
    pub fn raised(&self) -> bool {
        self.raised
    }

    pub fn counts(&self, folded: u64) -> AttemptCounts {
        AttemptCounts {
            syns: self.syns,
            attempts: self.attempts,
            unanswered: self.ended.unanswered,
            refused: self.ended.refused,
            half_open: self.ended.half_open,
            completed: self.ended.completed,
            with_data: self.ended.data,
            folded,
            distinct_sources: self.sources.count(),
            distinct_hosts: self.hosts.count(),
            distinct_ports: self.ports.count(),
        }
    }

    pub fn rate(&self) -> Option<RateSeries> {
        let start = self.rate.start?;
        Some(RateSeries {
            start_ts: start as f64,
            bin_s: self.rate.width as f64,
            syns: self.rate.bins.clone(),
            peak: self.peak.result(),
        })
    }

    /// The findings, heaviest first.
    pub fn findings(&self) -> Vec<FloodFinding> {
        let mut out = Vec::new();
        let secs = |t: Option<Timestamp>| t.map_or(0.0, |t| t.secs_f64());
        for s in self.services.iter().filter(|s| flood_met(&s.value)) {
            let v = &s.value;
            let target = Endpoint {
                addr: s.key.0,
                port: s.key.1,
            };
            let sources = v.sources.count();
            out.push(FloodFinding {
                kind: FloodKind::SynFlood,
                target: Some(target.to_string()),
                source: None,
                attempts: s.count,
                failed: v.ended.failed(),
                answered_share: round4(v.ended.answered_share()),
                completed_share: round4(v.ended.completed_share()),
                distinct_sources: Some(sources),
                distinct_ports: None,
                distinct_hosts: None,
                first_ts: secs(v.seen.first),
                last_ts: secs(v.seen.last),
                peak: v.peak.result(),
                evidence: format!(
                    "{} attempts to {target} from ~{sources} distinct sources, up to {} within {FLOOD_WINDOW_S} s; {:.1}% answered, {:.1}% completed the handshake",
                    s.count,
                    v.window.best,
                    100.0 * v.ended.answered_share(),
                    100.0 * v.ended.completed_share()
                ),
                rule: format!(
                    ">= {FLOOD_ATTEMPTS} attempts to one service within {FLOOD_WINDOW_S} s (Bro synflood.bro), >= {:.0}% of them failed (threshold random walk, Jung et al. 2004)",
                    100.0 * (1.0 - MALICIOUS_SUCCESS)
                ),
            });
        }
        for s in self.port_scans.iter() {
            if !s.value.distinct.at_least(PORT_SCAN_PORTS) {
                continue;
            }
            let n = s.value.distinct.count();
            out.push(FloodFinding {
                kind: FloodKind::PortScan,
                target: Some(s.key.1.to_string()),
                source: Some(s.key.0.to_string()),
                attempts: s.count,
                failed: s.count,
                answered_share: 0.0,
                completed_share: 0.0,
                distinct_sources: None,
                distinct_ports: Some(n),
                distinct_hosts: None,
                first_ts: secs(s.value.seen.first),
                last_ts: secs(s.value.seen.last),
                peak: None,
                evidence: format!(
                    "{} failed attempts from {} to ~{n} distinct ports of {}",
                    s.count, s.key.0, s.key.1
                ),
                rule: format!(
                    "one source's failed attempts reach >= {PORT_SCAN_PORTS} distinct ports of one host (Zeek scan.zeek)"
                ),
            });
        }
        for s in self.address_scans.iter() {
            if !s.value.distinct.at_least(ADDRESS_SCAN_HOSTS) {
                continue;
            }
            let n = s.value.distinct.count();
            out.push(FloodFinding {
                kind: FloodKind::AddressScan,
                target: Some(format!("port {}", s.key.1)),
                source: Some(s.key.0.to_string()),
                attempts: s.count,
                failed: s.count,
                answered_share: 0.0,
                completed_share: 0.0,
                distinct_sources: None,
                distinct_ports: None,
                distinct_hosts: Some(n),
                first_ts: secs(s.value.seen.first),
                last_ts: secs(s.value.seen.last),
                peak: None,
                evidence: format!(
                    "{} failed attempts from {} to ~{n} distinct hosts on port {}",
                    s.count, s.key.0, s.key.1
                ),
                rule: format!(
                    "one source's failed attempts reach >= {ADDRESS_SCAN_HOSTS} distinct hosts on one port (Zeek scan.zeek)"
                ),
            });
        }
        if unanswered_met(&self.ended) {
            let e = &self.ended;
            out.push(FloodFinding {
                kind: FloodKind::FailedAttempts,
                target: None,
                source: None,
                attempts: e.attempts,
                failed: e.failed(),
                answered_share: round4(e.answered_share()),
                completed_share: round4(e.completed_share()),
                distinct_sources: Some(self.sources.count()),
                distinct_ports: Some(self.ports.count()),
                distinct_hosts: Some(self.hosts.count()),
                first_ts: self.rate.start.map_or(0.0, |s| s as f64),
                last_ts: self
                    .rate
                    .start
                    .map_or(0.0, |s| (s + self.rate.width * self.rate.bins.len() as i64) as f64),
                peak: self.peak.result(),
                evidence: format!(
                    "{:.1}% of {} attempts failed ({} unanswered, {} refused, {} half-open); {} SYNs, up to {} in one second",
                    100.0 * e.failed_share(),
                    e.attempts,
                    e.unanswered,
                    e.refused,
                    e.half_open,
                    self.syns,
                    self.peak.result().map_or(0, |p| p.syns)
                ),
                rule: format!(
                    ">= {:.0}% of >= {MIN_ATTEMPTS} attempts failed (threshold random walk's scanner success rate, Jung et al. 2004)",
                    100.0 * (1.0 - MALICIOUS_SUCCESS)
                ),
            });
        }
        // The specific findings first (heaviest first), the capture-wide one last.
        out.sort_by(|a, b| {
            (a.kind == FloodKind::FailedAttempts)
                .cmp(&(b.kind == FloodKind::FailedAttempts))
                .then(b.attempts.cmp(&a.attempts))
                .then(a.kind.as_str().cmp(b.kind.as_str()))
        });
        out
    }
}

fn flood_met(s: &Service) -> bool {
    s.window.best >= FLOOD_ATTEMPTS
        && s.ended.attempts >= MIN_ATTEMPTS
        && s.ended.failed_share() >= 1.0 - MALICIOUS_SUCCESS
}

fn unanswered_met(e: &Ended) -> bool {
    e.attempts >= MIN_ATTEMPTS && e.failed_share() >= 1.0 - MALICIOUS_SUCCESS
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn ep(a: u32, port: u16) -> Endpoint {
        Endpoint {
            addr: IpAddr::V4(Ipv4Addr::from(a)),
            port,
        }
    }
    fn ms(m: i64) -> Timestamp {
        Timestamp(m * 1_000_000)
    }

    #[test]
    fn a_spoofed_flood_is_a_syn_flood_and_dominates() {
        let mut w = Watcher::default();
        let server = ep(0x0a00_0001, 80);
        // 20,000 SYNs in 10 s from one-off sources, none answered.
        for i in 0..20_000u32 {
            let c = ep(0x0100_0000 + i * 7, 1024 + (i % 60_000) as u16);
            w.on_syn(ms(i as i64 / 2), c, server, true);
        }
        assert!(!w.raised());
        for i in 0..20_000u32 {
            let c = ep(0x0100_0000 + i * 7, 1024 + (i % 60_000) as u16);
            w.on_end(ms(i as i64 / 2), c, server, Outcome::Unanswered);
        }
        assert!(w.raised());
        let f = w.findings();
        let kinds: Vec<&str> = f.iter().map(|f| f.kind.as_str()).collect();
        assert_eq!(kinds, ["syn-flood", "failed-attempts"], "the specific finding first");
        let flood = &f[0];
        assert_eq!((flood.attempts, flood.failed), (20_000, 20_000));
        let sources = flood.distinct_sources.unwrap() as f64;
        assert!((sources / 20_000.0 - 1.0).abs() < 0.2, "{sources}");
        assert_eq!(flood.peak.as_ref().map(|p| p.syns), Some(2_000));
        assert_eq!(flood.target.as_deref(), Some("10.0.0.1:80"));
        let rate = w.rate().unwrap();
        assert_eq!((rate.bin_s, rate.syns.len()), (1.0, 10));
    }

    #[test]
    fn answered_crowds_and_a_few_failures_are_no_finding() {
        let mut w = Watcher::default();
        let server = ep(0x0a00_0001, 443);
        for i in 0..20_000u32 {
            let c = ep(0x0100_0000 + i, 40_000);
            w.on_syn(ms(i as i64), c, server, true);
            w.on_end(
                ms(i as i64),
                c,
                server,
                if i % 10 == 0 { Outcome::Refused } else { Outcome::Data },
            );
        }
        assert!(!w.raised());
        assert!(w.findings().is_empty(), "a flash crowd completes its handshakes");
        let mut w = Watcher::default();
        for i in 0..19u32 {
            w.on_syn(ms(i as i64), ep(1, 40_000 + i as u16), server, true);
            w.on_end(ms(i as i64), ep(1, 40_000 + i as u16), server, Outcome::Unanswered);
        }
        assert!(w.findings().is_empty(), "19 attempts are too few to judge");
    }

    #[test]
    fn port_and_address_scans_follow_zeeks_thresholds() {
        let mut w = Watcher::default();
        let scanner = ep(0x0a00_0042, 50_000);
        for port in 1..=14u16 {
            w.on_end(ms(port as i64), scanner, ep(0x0a00_0001, port), Outcome::Refused);
        }
        assert!(!w.raised());
        w.on_end(ms(15), scanner, ep(0x0a00_0001, 15), Outcome::Refused);
        assert!(w.raised());
        let f = w.findings();
        assert!(f
            .iter()
            .any(|f| f.kind == FloodKind::PortScan && f.distinct_ports == Some(15)));
        let mut w = Watcher::default();
        for h in 0..25u32 {
            w.on_end(ms(h as i64), scanner, ep(0x0a01_0000 + h, 22), Outcome::Unanswered);
        }
        let f = w.findings();
        assert!(f
            .iter()
            .any(|f| f.kind == FloodKind::AddressScan && f.distinct_hosts == Some(25)));
    }

    #[test]
    fn the_window_counts_attempts_within_sixty_seconds() {
        let mut win = Window::default();
        for s in 0..120 {
            for _ in 0..10 {
                win.add(Timestamp(s * 1_000_000_000));
            }
        }
        assert_eq!((win.best, win.sum), (600, 600));
        win.add(Timestamp(500 * 1_000_000_000));
        assert_eq!(win.sum, 1);
    }
}
