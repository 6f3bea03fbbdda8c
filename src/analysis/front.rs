//! The front: every connection's life, decided in one place, in capture order.
//!
//! The front sees every segment (on the reading thread when workers analyse) and
//! decides, for each, which connection it belongs to: a new one, the next life of a
//! 4-tuple, or a live one. It keeps what deciding needs for every live connection (a
//! [`Life`], 64 bytes) and, for a connection that has not carried data, the connection
//! itself as a log of its control segments ([`Attempt`]): a SYN costs ~205 bytes until it
//! turns out to matter. A connection gets its tracker — in a worker's [`super::Shard`] —
//! with its first payload.
//!
//! The front also ends connections: when a segment starts a new life on the tuple, when
//! one is silent past its state's timeout ([`Timeouts`], checked once a second of capture
//! time), when the memory budget needs room (the least valuable first: no data before
//! data, then the longest silent), and at the end of the capture. Because all of this is
//! decided here, from the segments alone, the same capture gives the same connections,
//! ids, ends and output order whatever the number of workers.
//!
//! What the front decides goes out as [`Cmd`]s to the worker holding a connection, and as
//! [`Expect`]s to the output (the order flows are written in).

use super::attempt::{self, Attempt, Log, Logged, MAX_LOGGED};
use super::router::{Balancer, Move};
use crate::decode::{Print, Segment, TcpFlags};
use crate::diagnose;
use crate::flood::{Offload, Watcher};
use crate::flow::life::{self, End, State};
use crate::flow::{Dir, Duplicates, Endpoint, FlowKey, Found, FxHashMap, Life, Slots, Timeouts, SWEEP_EVERY};
use crate::time::Timestamp;
use std::collections::{BTreeSet, VecDeque};
use std::net::IpAddr;

/// Memory for live connections. Estimated from what each kind of connection costs (see
/// [`cost`]), so that the same capture is cut the same way on any machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// All live connections.
    pub total_bytes: u64,
    /// Connections that have carried no data yet (attempts, handshakes, ACK-only
    /// pickups): evicted first, oldest silence first, once they take more than this.
    pub attempt_bytes: u64,
}

impl Default for Budget {
    /// 4 GiB for all, 16 MiB for attempts (~80 k of them, ~205 bytes each): the order of
    /// Suricata's default flow memcap (32 MB, for records of this size) and of conntrack's
    /// table on a small machine (`nf_conntrack_max` 65,536), so a flood keeps a 1 M-SYN
    /// capture's peak RSS below 64 MiB. The cost: at 100 k SYN/s an attempt is kept for
    /// ~0.8 s of silence, so a SYN answered later than that loses its SYN (raise
    /// `--attempt-memory`). Connections with data get the rest: a tracked connection
    /// costs 10-25 KB (its timelines grow with its duration, to 512 packed bins per
    /// direction with data), so 4 GiB is ~170 k long bursty connections or ~400 k short
    /// ones at once — what a laptop holds; tcptrace and tshark hold every connection instead.
    fn default() -> Self {
        Budget {
            total_bytes: 4 << 30,
            attempt_bytes: 16 << 20,
        }
    }
}

/// What a tracker costs whatever it sees: `Connection` and `Accumulator` as the compiler
/// lays them out (4.3 KB when this was first measured, 11.1 KB now: the stall trackers,
/// middlebox evidence and scale inference grew them; a fixed 8 KB left the estimate 20%
/// under the RSS of the 50 000-connection mix, 23.1 against 28.8 KB a live connection),
/// and their boxes and queues and the RTT histogram's first chunks.
pub(crate) const TRACKER_BYTES: u64 = (std::mem::size_of::<crate::tcp::Connection>()
    + std::mem::size_of::<diagnose::Accumulator>()) as u64
    + TRACKER_HEAP_BYTES;
/// The tracker's heap beyond the two structs (boxes, queues, the histogram's first chunks).
const TRACKER_HEAP_BYTES: u64 = 3 << 10;
/// What each direction that carries data adds besides its timeline: the three dispersion
/// histograms (only the span of rates they reached, a few hundred bytes), the RTT and
/// timestamp queues, and the arrival batches in flight (`diagnose::train::DataBatches`, 8
/// bytes each: 45 for a 64 KiB window of full segments, at most 1024).
pub(crate) const DATA_DIRECTION_BYTES: u64 = 3 << 10;

/// The timeline of a direction whose data has run for `span`: a bin per millisecond until
/// there are `MAX_BINS` (then they widen); bins are allocated as time reaches them, and
/// packed but the last few (`diagnose::estimated_timeline_bytes`).
fn timeline_bytes(span: crate::time::Span) -> u64 {
    let bins = (span.nanos().max(0) / 1_000_000 + 1).min(diagnose::MAX_BINS as i64) as usize;
    diagnose::estimated_timeline_bytes(bins) as u64
}

/// What a front entry costs, for the budget: its slot and map entry, and before its first
/// payload its log (each segment past the first a 40-byte heap element), after it its
/// tracker (estimated from what the front saw: which directions carried data, for how
/// long; recomputed once a second of capture). The same whether or not an observer has
/// every connection tracked from its first segment: `packets` and `analyze` cut the same
/// connections, so their ids agree. Within ~10% of the RSS on the many-flow mix.
pub(crate) fn cost(entry: &Live) -> u64 {
    let l = &entry.life;
    let base = Slots::<Live>::bytes_per_entry() as u64 + if l.copies_held() { COPY_COUNT_BYTES } else { 0 };
    match entry.first_payload {
        None => {
            let logged = (l.quiet_segments as u64).min(MAX_LOGGED as u64).saturating_sub(1);
            base + logged * std::mem::size_of::<Logged>() as u64
        }
        Some(since) => {
            let dirs = l.data(Dir::C2S) as u64 + l.data(Dir::S2C) as u64;
            base + TRACKER_BYTES + dirs * (DATA_DIRECTION_BYTES + timeline_bytes(l.last_ts - since))
        }
    }
}

/// What an attempt's count of capture duplicates costs while the front holds it apart
/// (`Front::logged_copies`: an entry of a map of ids, at hashbrown's 7/8 load). A
/// tracked connection's count is in its `Stage`, in room its log variant takes anyway.
const COPY_COUNT_BYTES: u64 = (8 + 16 + 1) * 8 / 7;

/// Where a connection's state is.
pub(crate) enum Stage {
    /// Held here as an attempt log.
    Log(Log),
    /// A tracker in worker `worker`, slot `slot` of its shard; `recent` counts segments
    /// since the last sweep (for the balancer); `copies` the capture duplicates set aside,
    /// per direction.
    Tracked {
        worker: u16,
        slot: u32,
        recent: u32,
        copies: [u64; 2],
    },
}

pub(crate) struct Live {
    pub life: Life,
    pub stage: Stage,
    /// The bytes counted for it in the front's totals (see [`cost`]).
    charged: u64,
    /// When it first carried payload.
    first_payload: Option<Timestamp>,
}

/// A new tracker's identity.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NewConn {
    pub id: u64,
    pub client: Endpoint,
    pub server: Endpoint,
    pub by_syn: bool,
    pub first_frame: u64,
    pub first_ts: Timestamp,
}

/// How a tracker starts.
pub(crate) enum Op {
    /// Empty.
    Start(Box<NewConn>),
    /// From an attempt's log, replayed.
    Promote(Box<Attempt>),
}

/// Work for the worker holding a connection, in the order the front decided it.
pub(crate) enum Cmd {
    /// The segment goes to the tracker in `slot` (its direction: from the tracker's client
    /// or not).
    Seg {
        slot: u32,
        frame: u64,
        ts: Timestamp,
        seg: Segment,
    },
    /// Start a tracker in `slot`.
    Open { slot: u32, op: Op },
    /// Finish the connection in `slot`: summarised as the `fseq`-th listed flow, or
    /// dropped when `fseq` is None (an attempt the flood finding summarises). `copies`:
    /// its capture duplicates set aside, per direction.
    Finish {
        slot: u32,
        fseq: Option<u64>,
        copies: [u64; 2],
    },
    /// Build an attempt's tracker from its log and summarise it as the `fseq`-th flow.
    Replay {
        fseq: u64,
        attempt: Box<Attempt>,
        copies: [u64; 2],
    },
    /// Hand the connection in `slot` over to worker `to`, into its slot `to_slot`.
    Move { slot: u32, to: usize, to_slot: u32 },
}

/// Two hosts, either way round: flows between them may share a bottleneck
/// (`diagnose::across_flows`).
pub(crate) type HostPair = (IpAddr, IpAddr);

pub(crate) fn host_pair(key: &FlowKey) -> HostPair {
    let (a, b) = (key.lo.addr, key.hi.addr);
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

/// What the output is told, in the order of the front's decisions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Expect {
    /// The `fseq`-th listed flow is coming, of the connection `id` between `pair`; after
    /// it ended, at capture time `now`, the connections with data still live between
    /// `pair` got their first payload no earlier than `live_from` (None: there are none).
    Flow {
        fseq: u64,
        id: u64,
        pair: HostPair,
        live_from: Option<Timestamp>,
        now: Timestamp,
    },
    /// Connection `id` ended without a listed summary.
    Skip { id: u64 },
}

/// Where the front's decisions go.
pub(crate) trait Decisions {
    fn cmd(&mut self, worker: usize, cmd: Cmd);
    fn expect(&mut self, e: Expect);
}

#[derive(Clone, Debug)]
pub(crate) struct FrontConfig {
    pub first_id: u64,
    pub timeouts: Timeouts,
    pub budget: Budget,
    /// Hold attempts as logs (no observer asks for every segment as it comes).
    pub defer: bool,
    /// List every attempt, even those a flood finding summarises (`--all`).
    pub list_all: bool,
    pub workers: usize,
    pub rebalance_min: u64,
}

/// Connections ended, by why.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EndCounts {
    pub replaced: u64,
    pub expired_syn_sent: u64,
    pub expired_syn_received: u64,
    pub expired_established: u64,
    pub expired_closed: u64,
    /// Ended early for the memory budget: without data, and with.
    pub evicted_without_data: u64,
    pub evicted_with_data: u64,
    pub capture_end: u64,
    /// Attempts without data summarised by a flood finding, not listed.
    pub folded: u64,
    /// Most connections live at once, and most attempts held as logs.
    pub peak_live: u64,
    pub peak_logged: u64,
    /// The estimated memory at its peak (see [`cost`]).
    pub peak_bytes: u64,
}

pub(crate) struct Front {
    config: FrontConfig,
    /// `config.timeouts.shortest()`: a connection heard of within it has not expired.
    shortest: crate::time::Span,
    table: Slots<Live>,
    next_id: u64,
    next_fseq: u64,
    now: Timestamp,
    last_sweep: Option<Timestamp>,
    balancer: Balancer,
    /// Free slots of each worker's shard, and the next never used.
    free_slots: Vec<Vec<u32>>,
    next_slot: Vec<u32>,
    /// The connections with data, by host pair: (first payload, id).
    with_data: FxHashMap<HostPair, BTreeSet<(Timestamp, u64)>>,
    bytes: u64,
    attempt_bytes: u64,
    /// Connections held as logs now.
    logged: u64,
    /// Connections without data in the order they were last heard of (time then, id,
    /// slot), for the attempts' budget: entries gone stale (ended, or heard of again) are
    /// skipped or queued again when they come up.
    quiet: VecDeque<(Timestamp, u64, u32)>,
    /// The flood watcher: here until a finding holds, then on a thread of its own if
    /// [`Front::watch_apart`] asked for it (`offload`), back here after [`Front::finish`].
    pub(crate) watcher: Watcher,
    offload: Option<Offload>,
    watch_apart: bool,
    /// Ending connections by the batch: their index entries go at the end of it.
    purging: bool,
    pub(crate) ends: EndCounts,
    /// The recent records of recent connections, to tell a capture duplicate
    /// (`flow::duplicate`); the duplicates set aside, and per attempt held as a log
    /// (a tracked connection counts its own in its `Stage`).
    copies: Duplicates,
    pub(crate) set_aside: u64,
    logged_copies: FxHashMap<u64, [u64; 2]>,
}

impl Front {
    pub(crate) fn new(config: FrontConfig) -> Front {
        let workers = config.workers.max(1);
        Front {
            shortest: config.timeouts.shortest(),
            next_id: config.first_id,
            balancer: Balancer::new(workers, config.rebalance_min),
            free_slots: vec![Vec::new(); workers],
            next_slot: vec![0; workers],
            config,
            table: Slots::default(),
            next_fseq: 0,
            now: Timestamp(i64::MIN),
            last_sweep: None,
            with_data: FxHashMap::default(),
            bytes: 0,
            attempt_bytes: 0,
            logged: 0,
            quiet: VecDeque::new(),
            watcher: Watcher::default(),
            offload: None,
            watch_apart: false,
            purging: false,
            ends: EndCounts::default(),
            copies: Duplicates::default(),
            set_aside: 0,
            logged_copies: FxHashMap::default(),
        }
    }

    /// Once a flood or scan finding holds, run the watcher on a thread of its own (the
    /// front no longer waits for its answers: see `flood::offload`). For a front whose
    /// trackers are in workers already; the results are the same either way.
    pub(crate) fn watch_apart(&mut self) {
        self.watch_apart = true;
    }

    /// Whether a finding holds (attempts without data that end from now on are folded).
    fn raised(&self) -> bool {
        self.offload.is_some() || self.watcher.raised()
    }

    /// The id the next connection gets.
    pub(crate) fn next_id(&self) -> u64 {
        self.next_id
    }

    pub(crate) fn moves(&self) -> u64 {
        self.balancer.moves
    }

    fn take_slot(&mut self, w: usize) -> u32 {
        self.free_slots[w].pop().unwrap_or_else(|| {
            self.next_slot[w] += 1;
            self.next_slot[w] - 1
        })
    }

    /// Brings an entry's share of the totals up to date with its cost now.
    fn recharge(bytes: &mut u64, attempt_bytes: &mut u64, e: &mut Live) {
        let now = cost(e);
        *bytes = *bytes + now - e.charged;
        if !e.life.any_data() {
            *attempt_bytes = *attempt_bytes + now - e.charged;
        }
        e.charged = now;
    }

    /// One segment (its fingerprint `print`), in capture order.
    #[inline]
    pub(crate) fn on_segment<D: Decisions>(
        &mut self,
        seg: &Segment,
        print: &Print,
        frame: u64,
        ts: Timestamp,
        out: &mut D,
    ) {
        let (src, dst) = Endpoint::pair_of(seg);
        // `created`: None for a live connection's segment, Some(logged) for a new one's
        // (true when `create` has already logged it).
        let (slot, created) = match self.table.find(&src, &dst) {
            Found::Live(slot) => {
                let (key, e) = self.table.entry_mut(slot);
                let from_lo = key.lo.port == src.port && key.lo.addr == src.addr;
                // A capture duplicate is set aside before anything counts it: not even
                // the time moves (the analysis is the de-duplicated capture's).
                if self.copies.is_copy(e.life.id, from_lo, seg, print, ts) {
                    self.set_aside(slot, from_lo);
                    return;
                }
                self.now = self.now.max(ts);
                let (key, e) = self.table.entry_mut(slot);
                let from_client = from_lo == e.life.client_is_lo;
                // Most segments: a connection with a tracker going on (one test of the
                // flags, one of the time).
                let plain = seg.flags.0 & (TcpFlags::SYN | TcpFlags::RST | TcpFlags::FIN) == 0;
                if plain && ts - e.life.last_ts <= self.shortest {
                    if let Stage::Tracked {
                        worker,
                        slot: s,
                        recent,
                        ..
                    } = &mut e.stage
                    {
                        if seg.payload_len == 0 || e.life.any_data() {
                            let dir = if from_client { Dir::C2S } else { Dir::S2C };
                            e.life.observe_plain(seg, dir, ts);
                            *recent += 1;
                            let (w, s) = (*worker as usize, *s);
                            self.balancer.on_segment(w);
                            out.cmd(
                                w,
                                Cmd::Seg {
                                    slot: s,
                                    frame,
                                    ts,
                                    seg: *seg,
                                },
                            );
                            self.sweep_if_due(out);
                            return;
                        }
                    }
                }
                if life::starts_new(&e.life, seg, from_client, ts, &self.config.timeouts) {
                    let key = *key;
                    self.end(slot, End::Replaced, out);
                    self.create(key, seg, print, src, dst, frame, ts)
                } else {
                    (slot, None)
                }
            }
            Found::Vacant(key) => {
                self.now = self.now.max(ts);
                self.create(key, seg, print, src, dst, frame, ts)
            }
        };
        if created != Some(true) {
            self.segment(slot, created.is_some(), seg, src, frame, ts, out);
        }
        let created = created.is_some();
        if created {
            self.note_peaks();
            if self.bytes > self.config.budget.total_bytes || self.attempt_bytes > self.config.budget.attempt_bytes {
                self.make_room(out);
            }
        }
        self.sweep_if_due(out);
    }

    /// Counts a capture duplicate of the connection in `slot` (`flow::duplicate`), sent
    /// by its key's lower end or not: nothing else happens to it.
    #[inline(never)]
    fn set_aside(&mut self, slot: u32, from_lo: bool) {
        let e = self.table.get_mut(slot);
        self.set_aside += 1;
        let d = if from_lo == e.life.client_is_lo {
            Dir::C2S
        } else {
            Dir::S2C
        };
        match &mut e.stage {
            Stage::Tracked { copies, .. } => copies[d.index()] += 1,
            Stage::Log(_) => {
                self.logged_copies.entry(e.life.id).or_default()[d.index()] += 1;
                if !e.life.copies_held() {
                    e.life.hold_copies(true);
                    Self::recharge(&mut self.bytes, &mut self.attempt_bytes, e);
                }
            }
        }
    }

    /// An attempt's capture duplicates, no longer held apart.
    fn take_logged_copies(&mut self, life: &mut Life) -> [u64; 2] {
        if !life.copies_held() {
            return [0; 2];
        }
        life.hold_copies(false);
        self.logged_copies.remove(&life.id).unwrap_or_default()
    }

    #[inline]
    fn sweep_if_due<D: Decisions>(&mut self, out: &mut D) {
        if self.last_sweep.is_none_or(|t| self.now - t >= SWEEP_EVERY) {
            self.sweep(out);
        }
    }

    /// A segment of the connection in `slot` (`created` by it), beyond the plain case.
    #[allow(clippy::too_many_arguments)]
    fn segment<D: Decisions>(
        &mut self,
        slot: u32,
        created: bool,
        seg: &Segment,
        src: Endpoint,
        frame: u64,
        ts: Timestamp,
        out: &mut D,
    ) {
        let (key, e) = self.table.entry_mut(slot);
        let key = *key;
        let (client, server) = attempt::ends(&key, &e.life);
        let dir = if client == src { Dir::C2S } else { Dir::S2C };
        let had_data = e.life.any_data();
        e.life.observe(seg, dir, ts);
        if seg.flags.syn() && !seg.flags.ack() && dir == Dir::C2S {
            match &mut self.offload {
                Some(o) => o.on_syn(ts, client, server, created),
                None => self.watcher.on_syn(ts, client, server, created),
            }
        }
        let e = self.table.get_mut(slot);
        if !had_data && e.life.any_data() {
            let id = e.life.id;
            // Its cost moves from the attempts' share to the rest.
            self.attempt_bytes -= e.charged;
            self.with_data.entry(host_pair(&key)).or_default().insert((ts, id));
            e.first_payload = Some(ts);
        }
        let e = self.table.get_mut(slot);
        match &mut e.stage {
            Stage::Tracked {
                worker,
                slot: s,
                recent,
                ..
            } => {
                *recent += 1;
                let (w, s) = (*worker as usize, *s);
                if e.first_payload.is_none() {
                    Self::recharge(&mut self.bytes, &mut self.attempt_bytes, e);
                }
                let op = created.then(|| {
                    Op::Start(Box::new(NewConn {
                        id: e.life.id,
                        client,
                        server,
                        by_syn: e.life.by_syn(),
                        first_frame: e.life.first_frame,
                        first_ts: e.life.first_ts,
                    }))
                });
                self.track(w, s, seg, frame, ts, op, out);
            }
            Stage::Log(log) => {
                let entry = (log.len() < MAX_LOGGED)
                    .then(|| Logged::of(seg, dir, frame, ts, &e.life))
                    .flatten();
                match entry {
                    Some(l) => {
                        log.push(l);
                        let held = log.heap_bytes() + if e.life.copies_held() { COPY_COUNT_BYTES } else { 0 };
                        debug_assert!(
                            e.life.any_data() || cost(e) == Slots::<Live>::bytes_per_entry() as u64 + held,
                            "the budget counts a log as what it holds (and its copies' count)"
                        );
                        Self::recharge(&mut self.bytes, &mut self.attempt_bytes, e);
                    }
                    None => self.promote(slot, seg, frame, ts, out),
                }
            }
        }
    }

    fn note_peaks(&mut self) {
        let e = &mut self.ends;
        e.peak_live = e.peak_live.max(self.table.live() as u64);
        e.peak_bytes = e.peak_bytes.max(self.bytes);
        e.peak_logged = e.peak_logged.max(self.logged);
    }

    /// A new connection from its first segment; its slot, and whether the segment is
    /// accounted for already (an attempt's first segment, logged: see
    /// [`Front::log_first`]) or still goes to [`Front::segment`].
    #[allow(clippy::too_many_arguments)]
    fn create(
        &mut self,
        key: FlowKey,
        seg: &Segment,
        print: &Print,
        src: Endpoint,
        dst: Endpoint,
        frame: u64,
        ts: Timestamp,
    ) -> (u32, Option<bool>) {
        let (client, _, by_syn) = life::roles(seg, src, dst);
        let id = self.next_id;
        self.next_id += 1;
        self.copies.start(id, key.lo == src, seg, print, ts);
        let life = Life::new(id, client == key.lo, by_syn, frame, ts);
        let stage = if self.config.defer {
            self.logged += 1;
            Stage::Log(Log::default())
        } else {
            let w = self.balancer.place();
            Stage::Tracked {
                worker: w as u16,
                slot: self.take_slot(w),
                recent: 0,
                copies: [0; 2],
            }
        };
        let mut e = Live {
            life,
            stage,
            charged: 0,
            first_payload: None,
        };
        let logged = self.config.defer && self.log_first(&key, &mut e, seg, src, frame, ts);
        Self::recharge(&mut self.bytes, &mut self.attempt_bytes, &mut e);
        let slot = self.table.insert(key, e);
        self.quiet.push_back((ts, id, slot));
        if self.quiet.len() > 2 * self.table.live() + 1024 {
            let table = &self.table;
            self.quiet.retain(|&(_, id, slot)| {
                table
                    .try_get(slot)
                    .is_some_and(|e| e.life.id == id && !e.life.any_data())
            });
        }
        (slot, Some(logged))
    }

    /// What [`Front::segment`] does with a new attempt's first segment when the log holds
    /// it (a flood's every SYN), done before the entry goes into its slot: a slot reused
    /// after thousands of others is cold, and reading it back (as `segment` does) waits for
    /// its cache lines, where writing it whole does not. Whether it was logged.
    fn log_first(
        &mut self,
        key: &FlowKey,
        e: &mut Live,
        seg: &Segment,
        src: Endpoint,
        frame: u64,
        ts: Timestamp,
    ) -> bool {
        let (client, server) = attempt::ends(key, &e.life);
        let dir = if client == src { Dir::C2S } else { Dir::S2C };
        let Stage::Log(log) = &mut e.stage else { return false };
        let Some(l) = Logged::of(seg, dir, frame, ts, &e.life) else {
            return false;
        };
        e.life.observe(seg, dir, ts);
        debug_assert!(!e.life.any_data(), "a logged segment carries no data");
        if seg.flags.syn() && !seg.flags.ack() && dir == Dir::C2S {
            match &mut self.offload {
                Some(o) => o.on_syn(ts, client, server, true),
                None => self.watcher.on_syn(ts, client, server, true),
            }
        }
        log.push(l);
        true
    }

    /// Gives an attempt its tracker: its log replayed, then `seg`.
    fn promote<D: Decisions>(&mut self, slot: u32, seg: &Segment, frame: u64, ts: Timestamp, out: &mut D) {
        let w = self.balancer.place();
        let s = self.take_slot(w);
        let key = self.table.key(slot);
        let mut life = self.table.get(slot).life.clone();
        let copies = self.take_logged_copies(&mut life);
        let e = self.table.get_mut(slot);
        e.life = life;
        let Stage::Log(log) = std::mem::replace(
            &mut e.stage,
            Stage::Tracked {
                worker: w as u16,
                slot: s,
                recent: 1,
                copies,
            },
        ) else {
            unreachable!("promoted from a log")
        };
        self.logged -= 1;
        let attempt = Box::new(Attempt {
            key,
            life: e.life.clone(),
            log,
        });
        Self::recharge(&mut self.bytes, &mut self.attempt_bytes, e);
        self.track(w, s, seg, frame, ts, Some(Op::Promote(attempt)), out);
    }

    /// Sends a segment to the tracker in worker `w`'s slot `slot`, started first by `op`.
    #[allow(clippy::too_many_arguments)]
    fn track<D: Decisions>(
        &mut self,
        w: usize,
        slot: u32,
        seg: &Segment,
        frame: u64,
        ts: Timestamp,
        op: Option<Op>,
        out: &mut D,
    ) {
        if let Some(op) = op {
            out.cmd(w, Cmd::Open { slot, op });
        }
        self.balancer.on_segment(w);
        out.cmd(
            w,
            Cmd::Seg {
                slot,
                frame,
                ts,
                seg: *seg,
            },
        );
    }

    /// Ends the connection in `slot`.
    fn end<D: Decisions>(&mut self, slot: u32, why: End, out: &mut D) {
        let (key, mut e) = if self.purging {
            self.table.take(slot)
        } else {
            self.table.remove(slot)
        };
        let logged_copies = self.take_logged_copies(&mut e.life);
        self.bytes -= e.charged;
        if !e.life.any_data() {
            self.attempt_bytes -= e.charged;
        }
        match why {
            End::Replaced => self.ends.replaced += 1,
            End::Expired(State::SynSent) => self.ends.expired_syn_sent += 1,
            End::Expired(State::SynReceived) => self.ends.expired_syn_received += 1,
            End::Expired(State::Established) => self.ends.expired_established += 1,
            End::Expired(State::Closed) => self.ends.expired_closed += 1,
            End::Evicted if e.life.any_data() => self.ends.evicted_with_data += 1,
            End::Evicted => self.ends.evicted_without_data += 1,
            End::CaptureEnd => self.ends.capture_end += 1,
        }
        let id = e.life.id;
        if e.life.any_data() {
            if let Some(t) = e.first_payload {
                if let Some(set) = self.with_data.get_mut(&host_pair(&key)) {
                    set.remove(&(t, id));
                    if set.is_empty() {
                        self.with_data.remove(&host_pair(&key));
                    }
                }
            }
        }
        let (client, server) = attempt::ends(&key, &e.life);
        let outcome = e.life.outcome();
        if e.life.by_syn() {
            match &mut self.offload {
                Some(o) => o.on_end(e.life.first_ts, client, server, outcome),
                None => {
                    self.watcher.on_end(e.life.first_ts, client, server, outcome);
                    if self.watch_apart && self.watcher.raised() {
                        match Offload::start(std::mem::take(&mut self.watcher)) {
                            Ok(o) => self.offload = Some(o),
                            Err(w) => {
                                self.watcher = w;
                                self.watch_apart = false;
                            }
                        }
                    }
                }
            }
        }
        let fold = matches!(e.stage, Stage::Log(_))
            && !e.life.any_data()
            && e.life.by_syn()
            && !self.config.list_all
            && self.raised();
        let fseq = (!fold).then(|| {
            self.next_fseq += 1;
            self.next_fseq - 1
        });
        match (e.stage, fseq) {
            (Stage::Log(log), Some(fseq)) => {
                self.logged -= 1;
                let w = (id % self.balancer.workers() as u64) as usize;
                out.cmd(
                    w,
                    Cmd::Replay {
                        fseq,
                        attempt: Box::new(Attempt { key, life: e.life, log }),
                        copies: logged_copies,
                    },
                );
            }
            (Stage::Log(_), None) => {
                self.logged -= 1;
                self.ends.folded += 1;
            }
            (
                Stage::Tracked {
                    worker, slot, copies, ..
                },
                fseq,
            ) => {
                let w = worker as usize;
                self.balancer.on_end(w);
                self.free_slots[w].push(slot);
                out.cmd(w, Cmd::Finish { slot, fseq, copies });
            }
        }
        match fseq {
            Some(fseq) => {
                let pair = host_pair(&key);
                out.expect(Expect::Flow {
                    fseq,
                    id,
                    pair,
                    live_from: if self.with_data.is_empty() {
                        None
                    } else {
                        self.with_data.get(&pair).and_then(|s| s.first()).map(|&(t, _)| t)
                    },
                    now: self.now,
                })
            }
            None => out.expect(Expect::Skip { id }),
        }
    }

    /// Ends the connections that expired (in the order they began), weighs the workers,
    /// and brings the trackers' estimates up to date; once a second of capture time.
    #[inline(never)]
    fn sweep<D: Decisions>(&mut self, out: &mut D) {
        self.last_sweep = Some(self.now);
        let (now, t) = (self.now, self.config.timeouts);
        let balance = self.balancer.workers() > 1;
        let mut due: Vec<(u64, u32, State)> = Vec::new();
        let mut conns: Vec<(u64, usize, u64)> = Vec::new();
        // One pass over the table, not one per job: a flood's tens of thousands of
        // attempts are megabytes of slots, read from memory on every pass. The jobs are
        // independent: an entry that expired is ended below (what it was charged goes
        // with it, so it needs no recharge) and is no candidate for a move.
        let (bytes, attempt_bytes) = (&mut self.bytes, &mut self.attempt_bytes);
        for (slot, e) in self.table.iter_mut() {
            if let Some(state) = e.life.expired(now, &t) {
                due.push((e.life.id, slot, state));
                continue;
            }
            if let Stage::Tracked { worker, recent, .. } = &mut e.stage {
                if balance {
                    conns.push((e.life.id, *worker as usize, *recent as u64));
                }
                *recent = 0;
            }
            // Trackers grow with time (timelines): their estimates follow once a second.
            if e.first_payload.is_some() {
                Self::recharge(bytes, attempt_bytes, e);
            }
        }
        due.sort_unstable_by_key(|d| d.0);
        for (_, slot, state) in due {
            self.end(slot, End::Expired(state), out);
        }
        if balance {
            if let Some(m) = self.balancer.choose(&conns) {
                self.carry_out(m, out);
            }
        }
        self.note_peaks();
    }

    fn carry_out<D: Decisions>(&mut self, m: Move, out: &mut D) {
        let to_slot = self.take_slot(m.to);
        let found = self.table.iter_mut().find(|(_, e)| e.life.id == m.id);
        if let Some((_, e)) = found {
            if let Stage::Tracked { worker, slot, .. } = &mut e.stage {
                let from_slot = *slot;
                *worker = m.to as u16;
                *slot = to_slot;
                self.free_slots[m.from].push(from_slot);
                self.balancer.moved(m);
                out.cmd(
                    m.from,
                    Cmd::Move {
                        slot: from_slot,
                        to: m.to,
                        to_slot,
                    },
                );
                return;
            }
        }
        self.free_slots[m.to].push(to_slot);
    }

    /// Ends connections until the estimate is 7/8 of the budget it went over: for the
    /// attempts' budget those without data, the longest silent first (`quiet`); for the
    /// whole budget by value (see [`Life::value`]), then the longest silent.
    #[inline(never)]
    fn make_room<D: Decisions>(&mut self, out: &mut D) {
        let b = self.config.budget;
        if self.attempt_bytes > b.attempt_bytes {
            let target = b.attempt_bytes / 8 * 7;
            // An eighth of the attempts go (thousands in a flood): their index entries
            // leave in one pass at the end (`Slots::take`), none is looked up meanwhile.
            self.purging = true;
            while self.attempt_bytes > target {
                let Some((t, id, slot)) = self.quiet.pop_front() else {
                    break;
                };
                let Some(e) = self
                    .table
                    .try_get(slot)
                    .filter(|e| e.life.id == id && !e.life.any_data())
                else {
                    continue;
                };
                if e.life.last_ts > t {
                    self.quiet.push_back((e.life.last_ts, id, slot));
                } else {
                    self.end(slot, End::Evicted, out);
                }
            }
            self.purging = false;
            self.table.purge();
        }
        if self.bytes > b.total_bytes {
            let target = b.total_bytes / 8 * 7;
            self.evict(|_| true, self.bytes - target, out);
        }
    }

    /// Ends the least valuable connections `pick` accepts until `need` bytes are freed.
    fn evict<D: Decisions>(&mut self, pick: impl Fn(&Life) -> bool, need: u64, out: &mut D) {
        let mut cands: Vec<(u8, Timestamp, u64, u32, u64)> = self
            .table
            .iter()
            .filter(|(_, e)| pick(&e.life))
            .map(|(slot, e)| (e.life.value(), e.life.last_ts, e.life.id, slot, e.charged))
            .collect();
        // No entry costs less than the smallest attempt: at most this many are needed.
        let least = (Slots::<Live>::bytes_per_entry() + 8) as u64;
        let k = ((need / least + 1) as usize).min(cands.len());
        if k == 0 {
            return;
        }
        if k < cands.len() {
            cands.select_nth_unstable(k - 1);
            cands.truncate(k);
        }
        cands.sort_unstable();
        let mut freed = 0;
        for (_, _, _, slot, c) in cands {
            if freed >= need {
                break;
            }
            freed += c;
            self.end(slot, End::Evicted, out);
        }
    }

    /// The end of the capture: every live connection ends, in the order they began.
    pub(crate) fn finish<D: Decisions>(&mut self, out: &mut D) {
        let mut all: Vec<(u64, u32)> = self.table.iter().map(|(slot, e)| (e.life.id, slot)).collect();
        all.sort_unstable();
        // All of them go: their index entries leave in one pass (see `make_room`).
        self.purging = true;
        for (_, slot) in all {
            self.end(slot, End::CaptureEnd, out);
        }
        self.purging = false;
        self.table.purge();
        if let Some(o) = self.offload.take() {
            self.watcher = o.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::LinkType;
    use crate::testkit::TcpPacket;

    /// Decisions dropped (the front's own accounting is what is tested).
    struct Nowhere;
    impl Decisions for Nowhere {
        fn cmd(&mut self, _: usize, _: Cmd) {}
        fn expect(&mut self, _: Expect) {}
    }

    fn front() -> Front {
        Front::new(FrontConfig {
            first_id: 0,
            timeouts: Timeouts::default(),
            budget: Budget::default(),
            defer: true,
            list_all: false,
            workers: 1,
            rebalance_min: u64::MAX,
        })
    }

    fn seg(p: TcpPacket) -> (Segment, Print) {
        let (_, bytes) = p.ethernet().build();
        crate::testkit::printed(LinkType::ETHERNET, &bytes).unwrap()
    }

    #[test]
    fn an_attempt_costs_at_most_256_bytes() {
        assert_eq!(std::mem::size_of::<Life>(), 64);
        let mut f = front();
        for i in 0..1000u32 {
            let s = seg(
                TcpPacket::new(&format!("10.1.{}.{}:{}", i >> 8, i & 255, 1024 + i), "10.0.0.1:80")
                    .syn()
                    .seq(i),
            );
            f.on_segment(&s.0, &s.1, i as u64 + 1, Timestamp(i as i64), &mut Nowhere);
        }
        let per = f.bytes / 1000;
        assert!(per <= 256, "{per} bytes per one-SYN attempt");
        assert_eq!(f.attempt_bytes, f.bytes);
        // Each further control segment adds a 40-byte log entry.
        let s = seg(TcpPacket::new("10.0.0.1:80", "10.1.0.0:1024").syn().ack(1).seq(9));
        f.on_segment(&s.0, &s.1, 1001, Timestamp(1_000), &mut Nowhere);
        let s = seg(TcpPacket::new("10.1.0.0:1024", "10.0.0.1:80").rst().seq(1));
        f.on_segment(&s.0, &s.1, 1002, Timestamp(1_001), &mut Nowhere);
        assert_eq!(f.bytes, per * 1000 + 80);
    }

    #[test]
    fn the_attempts_budget_ends_the_longest_silent_first_and_counts_them() {
        let mut f = front();
        // Room for 100 one-SYN attempts.
        let per = Slots::<Live>::bytes_per_entry() as u64;
        f.config.budget.attempt_bytes = 100 * per;
        for i in 0..1000u32 {
            let s = seg(
                TcpPacket::new(&format!("10.1.{}.{}:{}", i >> 8, i & 255, 1024 + i), "10.0.0.1:80")
                    .syn()
                    .seq(i),
            );
            f.on_segment(&s.0, &s.1, i as u64 + 1, Timestamp(i as i64 * 1_000), &mut Nowhere);
        }
        assert!(f.attempt_bytes <= 100 * per, "{}", f.attempt_bytes);
        assert!(f.ends.evicted_without_data > 880, "{:?}", f.ends);
        // The live ones are the latest.
        let oldest = f.table.iter().map(|(_, e)| e.life.id).min().unwrap();
        assert!(oldest > 880, "{oldest}");
        assert_eq!(f.ends.evicted_with_data, 0);
    }
}
