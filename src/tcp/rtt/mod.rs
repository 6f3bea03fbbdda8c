//! Round-trip time as seen from the capture point.
//!
//! Every sample measures a loop from the capture point to ONE end and back: data from
//! the server and the client's ACK for it loop through the client; a SYN and its SYN/ACK
//! loop through the server. At the client the client loop is ~0 and the server loop is the
//! whole path; in the middle each loop is part of it. The end-to-end RTT is the sum of the
//! two loops, so the same connection gives the same answer from either end or in between.

mod data_ack;
mod histogram;
mod minmax;
mod release;
mod repair;
mod retractable;
mod ts_echo;

pub use data_ack::DataAckSampler;
pub use histogram::RttHistogram;
pub use minmax::WindowedMin;
pub use release::ReleaseSampler;
pub use repair::RepairSampler;
pub use retractable::RetractableLeast;
pub use ts_echo::{Echo, Echoed, Sent, TsEchoSampler};

use crate::seq::SeqNum;
use crate::time::{Quantum, Span, Timestamp};

/// Which end a loop goes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum End {
    Client,
    Server,
}

impl End {
    pub fn index(self) -> usize {
        match self {
            End::Client => 0,
            End::Server => 1,
        }
    }
    pub fn other(self) -> End {
        match self {
            End::Client => End::Server,
            End::Server => End::Client,
        }
    }
}

/// How a sample was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RttSource {
    Handshake,
    DataAck,
    TsEcho,
}

/// `Loop::recent_min` looks at the last few samples, none older than two base RTTs:
/// enough to skip a late echo, few enough to follow the queue as it builds and drains.
const RECENT_ROUNDS: i64 = 2;
const RECENT_SAMPLES: usize = 4;

/// The base RTT filter window: 10 s, as BBR's min_rtt filter (long enough to span
/// queue-free moments, short enough to follow a route change).
pub const BASE_RTT_WINDOW: Span = Span::from_millis(10_000);

/// Samples of the loop through one end.
#[derive(Clone, Debug)]
pub struct Loop {
    pub samples: u64,
    pub min: Option<Span>,
    pub latest: Option<Span>,
    /// RFC 6298 smoothed value (alpha = 1/8).
    pub smoothed: Option<Span>,
    pub windowed_min: WindowedMin,
    /// Windowed minimum of the samples taken on data and ACK segments only (not the
    /// handshake): these carry full-size segments, whose serialization is part of the
    /// loop the data takes.
    pub segment_min: WindowedMin,
    /// Whether `min` is a handshake sample's: its loop carried a SYN, a SYN/ACK and an ACK,
    /// no segment of data, so it holds none of a data segment's serialisation (see
    /// [`Loop::segment_gap`]).
    min_from_handshake: bool,
    /// The least handshake sample.
    handshake_min: Option<Span>,
    /// The least of the samples that name no data (the handshake's, echoes'): none of them
    /// can be taken back.
    fixed_min: Option<Span>,
    /// The least samples of data timed by its ACK, with that data, so that one the
    /// receiver later reports received twice is taken back (`retractable.rs`).
    data_least: RetractableLeast,
    /// The least sample whose loop carried a data segment of about the largest size seen
    /// (three quarters of it or more; not the handshake), over the whole capture, and that
    /// size: the loop as a full segment takes it.
    segment_least: Option<(u32, Span)>,
    /// Recent samples (time, value), for the minimum over the last couple of base RTTs.
    recent: Recent,
    /// The same, of the prompt samples only (see [`RttTracker::add_sample`]): what the
    /// other loop's samples take this loop to be now ([`RttTracker::other_now`]).
    prompt_recent: Recent,
    pub by_source: [u64; 3],
    /// Samples shorter than the timestamps resolve (see [`RttTracker::add`]): not delays,
    /// but each proves the loop shorter than ten quanta — a loop measured as negligible,
    /// not a loop unmeasured.
    pub unresolved: u64,
    /// The least of those unresolved samples, and the least upper bound they put on the
    /// loop: a sample of `raw` on a clock of quantum `q` proves the loop no longer than
    /// `raw + q` (both stamps truncated to a tick). A loop proved that short is shorter
    /// than every sample the clock did resolve, which are then not its minimum: on a
    /// capture host's 1 ms clock the near end's prompt ACKs all read 0-1 ms, and one
    /// delayed ACK (RFC 1122 §4.2.3.2: up to 500 ms; Linux's 40 ms) or one window update
    /// whose data the sender held back would otherwise be taken for the loop.
    pub unresolved_min: Option<Span>,
    pub unresolved_below: Option<Span>,
    /// Bounds from window releases ([`RttTracker::add_loop`]): how many, their least, and
    /// whether they were discarded (the capture turned out to miss window updates).
    pub bounds: u64,
    /// Of those bounds, the ones from repairs (`repair.rs`): taken at losses only, so they
    /// time the loop at a few moments, not through the transfer.
    pub repair_bounds: u64,
    pub bound_min: Option<Span>,
    bounds_discarded: bool,
    /// The least time from a TSval's first sighting to its first echo through this end,
    /// answered or not (`ts_echo::Echoed::bound`): an end echoes only a TSval it received
    /// (RFC 7323 §4.3), so the loop was never longer. Kept apart from the samples (an echo
    /// may have waited on the end), as a bound on the least loop the sender view's lookup
    /// takes (`Connection::min_sender_loop_for_echo`).
    pub echo_bound_min: Option<Span>,
}

impl Default for Loop {
    fn default() -> Self {
        Loop {
            samples: 0,
            min: None,
            latest: None,
            smoothed: None,
            windowed_min: WindowedMin::new(BASE_RTT_WINDOW),
            segment_min: WindowedMin::new(BASE_RTT_WINDOW),
            min_from_handshake: false,
            handshake_min: None,
            fixed_min: None,
            data_least: RetractableLeast::default(),
            segment_least: None,
            recent: Recent::default(),
            prompt_recent: Recent::default(),
            by_source: [0; 3],
            unresolved: 0,
            unresolved_min: None,
            unresolved_below: None,
            bounds: 0,
            repair_bounds: 0,
            bound_min: None,
            bounds_discarded: false,
            echo_bound_min: None,
        }
    }
}

impl Loop {
    /// Adds a sample; `round` is the current end-to-end base RTT (how far back "recent"
    /// reaches); `timed` the data it timed, when its ACK named some.
    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        at: Timestamp,
        rtt: Span,
        source: RttSource,
        round: Option<Span>,
        prompt: bool,
        carried: u32,
        timed: Option<(SeqNum, SeqNum)>,
    ) {
        self.samples += 1;
        self.by_source[source as usize] += 1;
        if self.min.is_none_or(|m| rtt < m) {
            self.min_from_handshake = source == RttSource::Handshake;
        }
        self.min = Some(self.min.map_or(rtt, |m| m.min(rtt)));
        match timed {
            Some((start, end)) => self.data_least.add(rtt, start, end),
            None => self.fixed_min = Some(self.fixed_min.map_or(rtt, |m| m.min(rtt))),
        }
        if source == RttSource::Handshake {
            self.handshake_min = Some(self.handshake_min.map_or(rtt, |m| m.min(rtt)));
        }
        if source != RttSource::Handshake && carried > 0 {
            let c = carried as u64;
            self.segment_least = Some(match self.segment_least {
                // A smaller segment: its serialisation is not a full one's.
                Some((size, m)) if c * 4 < size as u64 * 3 => (size, m),
                // One of the same size.
                Some((size, m)) if c * 3 <= size as u64 * 4 => (size.max(carried), m.min(rtt)),
                // The first, or a larger one.
                _ => (carried, rtt),
            });
        }
        self.latest = Some(rtt);
        self.smoothed = Some(match self.smoothed {
            None => rtt,
            Some(s) => Span(s.nanos() + (rtt.nanos() - s.nanos()) / 8),
        });
        self.windowed_min.update(at, rtt);
        if source != RttSource::Handshake {
            self.segment_min.update(at, rtt);
            let horizon = Span(round.unwrap_or(rtt).nanos().saturating_mul(RECENT_ROUNDS));
            self.recent.push(at, rtt, horizon);
            if prompt {
                self.prompt_recent.push(at, rtt, horizon);
            }
        }
    }

    /// The receiver reported the data [start, end) received twice (a D-SACK) at `at`: a
    /// sample that timed it was ambiguous (`retractable.rs`) and is taken back from the
    /// minimum, and from every value that holds it — the windowed minima and the recent
    /// samples, none of which can be less than the least sample left. (What was decided on
    /// it while it stood, and the end-to-end distribution, keep it: the summary's quantiles
    /// are clamped to the minimum.) True when a sample was taken back.
    fn retract(&mut self, at: Timestamp, start: SeqNum, end: SeqNum) -> bool {
        if !self.data_least.retract(start, end) {
            return false;
        }
        let least = self.fixed_min.into_iter().chain(self.data_least.least()).min();
        self.min = least;
        self.min_from_handshake = least.is_some() && least == self.handshake_min;
        let Some(least) = least else {
            // Every sample taken back: nothing of them stays.
            self.windowed_min.clear();
            self.segment_min.clear();
            self.segment_least = None;
            self.recent = Recent::default();
            self.prompt_recent = Recent::default();
            return true;
        };
        for w in [&mut self.windowed_min, &mut self.segment_min] {
            if w.get().is_some_and(|m| m < least) {
                w.reset(at, least);
            }
        }
        if let Some((_, m)) = self.segment_least.as_mut() {
            // A lower bound on the least full segment's sample left: it is no less than the
            // least sample left.
            *m = (*m).max(least);
        }
        self.recent.drop_below(least);
        self.prompt_recent.drop_below(least);
        true
    }

    /// The capture saw the data [start, end) sent again: a sample taken of it before stands,
    /// whatever a D-SACK says later (`RetractableLeast::settle`).
    fn settle(&mut self, start: SeqNum, end: SeqNum) {
        if let Some(v) = self.data_least.settle(start, end) {
            self.fixed_min = Some(self.fixed_min.map_or(v, |m| m.min(v)));
        }
    }

    /// How many samples a D-SACK took back ([`Self::retract`]).
    pub fn retracted(&self) -> u64 {
        self.data_least.retracted as u64
    }

    /// Adds a sample that is never less than the loop but may hold a wait of the end's own
    /// (see [`RttTracker::add_loop`]): kept apart, as a bound on the loop's minimum only.
    fn add_bound(&mut self, rtt: Span) {
        if self.bounds_discarded {
            return;
        }
        self.bounds += 1;
        self.bound_min = Some(self.bound_min.map_or(rtt, |m| m.min(rtt)));
    }

    /// The loop's minimum: its samples' and its bounds'; when samples the clock could not
    /// resolve prove it shorter than all of those, the least of them as the clock read it
    /// (None for a zero: a loop within one tick, measured as negligible, see
    /// [`Self::measured`]).
    pub fn least(&self) -> Option<Span> {
        let resolved = self.min.into_iter().chain(self.bound_min).min();
        self.resolved(resolved)
    }

    /// The loop's windowed minimum (the base the other loop's samples are added to), None
    /// when unresolved samples prove the loop shorter (see [`Self::least`]).
    pub fn base(&self) -> Option<Span> {
        self.resolved(self.windowed_min.get())
    }

    /// `m`, unless unresolved samples proved the loop no longer than it: then theirs. The
    /// proof counts when at least half the loop's samples are unresolved (its median is
    /// under the clock's resolution, the resolved ones the exceptions): a minimum is the
    /// least of its samples, but on a real capture one sample can be misattributed (a
    /// host's batched stamps, an echo of a TSval first seen late), and the median is the
    /// statistic that such a minority cannot move.
    fn resolved(&self, m: Option<Span>) -> Option<Span> {
        let most = self.unresolved >= self.samples + self.bounds;
        match (m, self.unresolved_below) {
            (Some(m), Some(b)) if b <= m && most => self.unresolved_min.filter(|u| u.nanos() > 0),
            (m, _) => m,
        }
    }

    /// What the loop's samples say of a full data segment's serialisation in it (see
    /// [`SegmentGap`]).
    ///
    /// A packet's round trip is the path's propagation plus its serialisation at each link
    /// (the model of Jacobson's pathchar; Downey, SIGCOMM 1999): the handshake's SYN and
    /// SYN/ACK carry no data, so a loop timed by them lacks the data segment's transmission
    /// at the bottleneck, which on a slow link is most of a data segment's round trip (one
    /// 1514-byte frame is 12 ms at 1 Mbit/s). Linux's BBR takes its BDP's min_rtt from rate
    /// samples of data (tcp_bbr.c, bbr_update_min_rtt on rs->rtt_us), never the handshake.
    pub fn segment_gap(&self) -> SegmentGap {
        let least = self.least();
        let segments = self
            .segment_least
            .map(|(_, m)| m)
            .into_iter()
            .chain(self.bound_min)
            .min();
        SegmentGap {
            least_is_handshake: self.min_from_handshake && least.is_some() && least == self.min,
            gap: match (segments, self.handshake_min) {
                (Some(s), Some(h)) => Some((s - h).max_zero()),
                _ => None,
            },
        }
    }

    /// Records a sample shorter than the clock resolves.
    fn add_unresolved(&mut self, raw: Span, quantum: Span) {
        self.unresolved += 1;
        self.unresolved_min = Some(self.unresolved_min.map_or(raw, |m| m.min(raw)));
        let below = raw + quantum;
        self.unresolved_below = Some(self.unresolved_below.map_or(below, |b| b.min(below)));
    }

    /// The smallest of the last few samples: the loop as it is now, queueing included,
    /// without the samples a waiting sender made late (a sender that had no window or no
    /// data echoes late; of a few consecutive echoes, some are prompt).
    pub fn recent_min(&self) -> Option<Span> {
        self.recent.min()
    }

    /// The least prompt sample within two rounds of `round` before `now` (the ring forgets
    /// old samples only when a new one comes): the loop now, queue included.
    pub fn prompt_min_at(&self, now: Timestamp, round: Span) -> Option<Span> {
        self.prompt_recent
            .min_since(now, Span(round.nanos().saturating_mul(RECENT_ROUNDS)))
    }

    /// The greatest prompt sample within two rounds of `round` before `now`: the longest
    /// the loop took lately, queue included, without an end's wait — a queue that builds
    /// makes the later samples the longer, and the least would lag it.
    pub fn prompt_max_at(&self, now: Timestamp, round: Span) -> Option<Span> {
        self.prompt_recent
            .max_since(now, Span(round.nanos().saturating_mul(RECENT_ROUNDS)))
    }

    /// The latest prompt sample's value: how long this loop's round takes now.
    pub fn prompt_latest(&self) -> Option<Span> {
        self.prompt_recent.latest()
    }

    /// Whether anything measured this loop: a delay not taken back, or a sample too short to
    /// resolve.
    pub fn measured(&self) -> bool {
        self.samples > self.data_least.retracted as u64 || self.bounds > 0 || self.unresolved > 0
    }
}

/// The last `RECENT_SAMPLES` samples no older than a horizon, oldest first, in a fixed
/// ring: a deque allocated per loop and pushed and popped on every sample cost more than
/// the rest of the sample's bookkeeping.
#[derive(Clone, Debug, Default)]
struct Recent {
    ring: [(Timestamp, Span); RECENT_SAMPLES + 1],
    /// Index of the oldest sample, and how many there are.
    start: usize,
    len: usize,
}

impl Recent {
    fn at(&self, i: usize) -> (Timestamp, Span) {
        self.ring[(self.start + i) % self.ring.len()]
    }

    /// Adds a sample taken `at`, then forgets the oldest ones beyond the count or older
    /// than `horizon` before `at` (the new one too, if the horizon is negative).
    fn push(&mut self, at: Timestamp, rtt: Span, horizon: Span) {
        let end = (self.start + self.len) % self.ring.len();
        self.ring[end] = (at, rtt);
        self.len += 1;
        while self.len > RECENT_SAMPLES || (self.len > 0 && at - self.at(0).0 > horizon) {
            self.start = (self.start + 1) % self.ring.len();
            self.len -= 1;
        }
    }

    fn min(&self) -> Option<Span> {
        (0..self.len).map(|i| self.at(i).1).min()
    }

    /// Forgets the samples below `least`, keeping the others in order.
    fn drop_below(&mut self, least: Span) {
        let kept: Vec<(Timestamp, Span)> = (0..self.len).map(|i| self.at(i)).filter(|&(_, r)| r >= least).collect();
        self.start = 0;
        self.len = kept.len();
        for (i, k) in kept.into_iter().enumerate() {
            self.ring[i] = k;
        }
    }

    fn latest(&self) -> Option<Span> {
        self.len.checked_sub(1).map(|i| self.at(i).1)
    }

    /// The least of the samples no older than `horizon` before `now`.
    fn min_since(&self, now: Timestamp, horizon: Span) -> Option<Span> {
        self.since(now, horizon).min()
    }

    /// The greatest of the samples no older than `horizon` before `now`.
    fn max_since(&self, now: Timestamp, horizon: Span) -> Option<Span> {
        self.since(now, horizon).max()
    }

    fn since(&self, now: Timestamp, horizon: Span) -> impl Iterator<Item = Span> + '_ {
        (0..self.len)
            .map(|i| self.at(i))
            .filter(move |&(t, _)| now - t <= horizon)
            .map(|(_, r)| r)
    }
}

/// What one loop's samples say of a full data segment's serialisation in it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SegmentGap {
    /// The loop's least is a handshake sample's.
    pub least_is_handshake: bool,
    /// How much longer the least sample or bound on a full data segment took than the least
    /// handshake sample: the data segment's serialisation in this loop (a queue's wait too,
    /// if every such sample held one). None without both.
    pub gap: Option<Span>,
}

/// What a sample's loop carried: the larger data segment of the two it times (its
/// serialisation is in the sample, [`Loop::segment_gap`]), and the data the sample timed,
/// when its ACK named some: a D-SACK of that data takes it back ([`RttTracker::retract`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Carried {
    pub len: u32,
    pub data: Option<(SeqNum, SeqNum)>,
}

impl Carried {
    /// A segment of `len` bytes, no data named.
    pub fn len(len: u32) -> Self {
        Carried { len, data: None }
    }
}

/// One end-to-end RTT estimate produced by a sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RttSample {
    /// The loop the raw sample measured.
    pub through: End,
    pub source: RttSource,
    /// The raw sample (capture point -> `through` -> capture point).
    pub raw: Span,
    /// raw + the other loop's current base: the path RTT this sample implies.
    pub end_to_end: Span,
}

/// RFC 6298 §2.4: an RTO below one second SHOULD be rounded up to one second.
pub const RTO_FLOOR: Span = Span::from_millis(1_000);

/// Both loops of one connection, and the end-to-end distribution.
#[derive(Clone, Debug, Default)]
pub struct RttTracker {
    pub loops: [Loop; 2],
    /// The end-to-end samples; their largest is exact (`RttHistogram::max`).
    pub end_to_end: RttHistogram,
    /// RFC 6298 §2 estimator over the end-to-end samples (SRTT, RTTVAR): what an end's
    /// retransmission timer would be.
    srtt: Option<Span>,
    rttvar: Span,
    /// The resolution of the connection's timestamps (see `add`).
    pub quantum: Quantum,
}

impl RttTracker {
    /// Adds a raw sample of the loop through `through`. None for a sample shorter than ten
    /// timestamp quanta (`time::MIN_SPAN_QUANTA`, once the quantum has settled): the timestamps cannot resolve that loop
    /// (a zero is both packets in one clock tick), which is a bound, not a delay — a near
    /// end's microseconds at a microsecond capture, or a host that stamps in batches; a
    /// zero RTT would make a zero BDP.
    pub fn add(&mut self, at: Timestamp, through: End, source: RttSource, raw: Span) -> Option<RttSample> {
        self.add_sample(at, through, source, raw, true, Carried::len(1460))
    }

    /// [`Self::add`], saying whether the sample is prompt, and what its loop carried
    /// ([`Carried`]; [`Self::add`] takes a full 1460 bytes, no data named).
    /// Prompt: its answer went out as soon as
    /// the segment it answers arrived, so it times the path as it was, queue included, and
    /// no wait of the end's own. The capture cannot always tell; the caller says when it
    /// can (an ACK of two full segments or more, which no delayed-ACK timer held: RFC 5681
    /// §4.2, RFC 1122 §4.2.3.2; data an ACK released). Only prompt samples stand for a
    /// loop in the other loop's end-to-end samples ([`Self::other_now`]): a request's
    /// answer after the server's think time, or an ACK that waited for its timer, would
    /// otherwise be added to every sample of the other loop until the next one.
    pub fn add_sample(
        &mut self,
        at: Timestamp,
        through: End,
        source: RttSource,
        raw: Span,
        prompt: bool,
        carried: Carried,
    ) -> Option<RttSample> {
        if raw.nanos() < 0 {
            return None;
        }
        if raw.nanos() == 0 || raw < self.quantum.min_resolved_span() {
            self.loops[through.index()].add_unresolved(raw, self.quantum.get());
            return None;
        }
        let round = self.base_end_to_end();
        self.loops[through.index()].add(at, raw, source, round, prompt, carried.len, carried.data);
        let other = self.other_now(at, through);
        let e2e = raw + other;
        self.end_to_end.add(e2e);
        match self.srtt {
            None => {
                self.srtt = Some(e2e);
                self.rttvar = Span(e2e.nanos() / 2);
            }
            Some(s) => {
                // beta = 1/4, alpha = 1/8 (RFC 6298 §2.3).
                let err = (s.nanos() - e2e.nanos()).abs();
                self.rttvar = Span(self.rttvar.nanos() + (err - self.rttvar.nanos()) / 4);
                self.srtt = Some(Span(s.nanos() + (e2e.nanos() - s.nanos()) / 8));
            }
        }
        Some(RttSample {
            through,
            source,
            raw,
            end_to_end: e2e,
        })
    }

    /// The other loop's part of an end-to-end sample of the loop through `through`: the loop
    /// as its prompt samples show it now when it is the far one (the longer base), else
    /// its windowed minimum.
    ///
    /// A bottleneck's queue lies on one side of the capture point, so only one loop crosses
    /// it: at an end host the far loop, whose samples carry the queue while the near loop's
    /// (the host's own turnaround: its ACK delay, or its sender's reply to an ACK) never do.
    /// Adding the far loop's *minimum* to each near-loop sample made every such sample read
    /// the empty path: at the receiver of a download behind a 40 ms standing queue the
    /// near loop's ACKs, one per two segments, put the median at 51.1 ms against 90.9 ms
    /// for the same connection at the sender (cross_cbr of the P1 corpus). The far loop's
    /// least prompt sample of the last two base RTTs ([`Loop::prompt_min_at`]) is the loop
    /// now, queue included, without an end's wait; with none (a request/response exchange,
    /// whose answers wait on the application; a silence longer than the horizon: two rounds
    /// at the far loop's latest prompt sample, or two base RTTs if longer) its
    /// minimum stands, so no end-to-end sample spans a stall or a wait. The near loop's part of a far-loop sample stays
    /// its minimum: its samples include hold times of the end's own (a delayed ACK, RFC
    /// 1122 §4.2.3.2, up to 500 ms; an application's reply) that are not part of the path.
    fn other_now(&self, at: Timestamp, through: End) -> Span {
        let this = self.loops[through.index()].base().unwrap_or(Span::ZERO);
        let o = &self.loops[through.other().index()];
        let base = o.base().unwrap_or(Span::ZERO);
        if base > this {
            // Two rounds as the far loop now takes them: its samples complete a loop each,
            // so behind a queue they come a queue's length apart at the least when the path
            // delivers in bursts (a link that aggregates, a host that batches), and two
            // base RTTs would forget them between bursts.
            let round = self
                .base_end_to_end()
                .unwrap_or(base)
                .max(o.prompt_latest().unwrap_or(Span::ZERO));
            o.prompt_min_at(at, round).map_or(base, |r| r.max(base))
        } else {
            base
        }
    }

    /// Whether the loop through `through` is known to be the near one: both measured, and
    /// shorter than the other (the capture is beside that end).
    pub fn is_near(&self, through: End) -> bool {
        matches!(
            (self.loops[through.index()].base(), self.loops[through.other().index()].base()),
            (Some(this), Some(other)) if this < other
        )
    }

    /// An upper bound on the end-to-end round trip, queue included, from `raw`, a time no
    /// shorter than the loop through `through` (a sample, or an echo that waited on the far
    /// end: `ts_echo::Echoed`): `raw` plus the other loop's minimum, when `through` is the
    /// far loop (the longer base). A bottleneck's queue beside an end host lies on the far
    /// loop only (see `other_now`), so such a bound says how much queue there was at most;
    /// a near-loop time says nothing of it. None while the loop is not known to be the far
    /// one, or for a negative time.
    pub fn far_bound(&self, through: End, raw: Span) -> Option<Span> {
        let this = self.loops[through.index()].base()?;
        let other = self.loops[through.other().index()].base().unwrap_or(Span::ZERO);
        (raw.nanos() >= 0 && this >= other).then_some(raw + other)
    }

    /// The end `through` reported the data [start, end) received twice (a D-SACK, RFC 2883)
    /// at `at`: a sample of the loop through it that timed that data is taken back (see
    /// `retractable.rs`). True when one was.
    pub fn retract(&mut self, at: Timestamp, through: End, start: SeqNum, end: SeqNum) -> bool {
        self.loops[through.index()].retract(at, start, end)
    }

    /// The capture saw the data [start, end) sent again, toward the end `through`: a
    /// sample of it taken before stands (see `Loop::settle`).
    pub fn settle(&mut self, through: End, start: SeqNum, end: SeqNum) {
        self.loops[through.index()].settle(start, end)
    }

    /// Adds a raw sample that bounds a loop without timing the flow's data — an ACK to the
    /// data its window released ([`ReleaseSampler`]): never less than the loop, but it holds
    /// however long the sender then waited (its application, Nagle), which is no part of
    /// the path. So it bounds the loop's minimum ([`Loop::least`]) and nothing else: not the
    /// windowed, latest, smoothed or recent values, nor the end-to-end distribution, whose
    /// samples never span an end's own wait. False when the timestamps cannot resolve it
    /// (counted as such, as in [`Self::add`]).
    pub fn add_loop(&mut self, through: End, raw: Span) -> bool {
        if raw.nanos() < 0 {
            return false;
        }
        if raw.nanos() == 0 || raw < self.quantum.min_resolved_span() {
            self.loops[through.index()].add_unresolved(raw, self.quantum.get());
            return false;
        }
        self.loops[through.index()].add_bound(raw);
        true
    }

    /// [`Self::add_loop`] for a repair's time (`repair.rs`), counted apart. One the clock
    /// cannot resolve is not a loop measured as negligible (a repair is taken at a loss,
    /// anywhere on the path, not at the near end's prompt turnaround): it proves the loop no
    /// longer than `raw` plus a tick, and that is the bound kept (the simulator's 10 ms
    /// clock at a tap 31 ms from the sender: a 40 ms repair read as negligible made a
    /// 100 ms path's RTT 60 ms).
    pub fn add_repair(&mut self, through: End, raw: Span) -> bool {
        if raw.nanos() < 0 {
            return false;
        }
        let raw = if raw < self.quantum.min_resolved_span() {
            raw + self.quantum.get()
        } else {
            raw
        };
        let l = &mut self.loops[through.index()];
        if l.bounds_discarded {
            return false;
        }
        l.add_bound(raw);
        l.repair_bounds += 1;
        true
    }

    /// Drops the loop's bounds for good: the capture missed window updates, so any pairing
    /// of data with an update may have been with a later one than released it.
    pub fn discard_bounds(&mut self, through: End) {
        let l = &mut self.loops[through.index()];
        (l.bounds, l.repair_bounds, l.bound_min, l.bounds_discarded) = (0, 0, None, true);
    }

    /// The longest a standard sender waits for an ACK before it retransmits: RFC 6298's RTO
    /// (SRTT + 4 RTTVAR) from the samples so far, at least its one-second floor. An ACK that
    /// comes later for data never retransmitted is not the first ACK of that data: the
    /// capture missed the one the sender acted on.
    pub fn rto_bound(&self) -> Span {
        let rto = self.srtt.map_or(Span::ZERO, |s| s + Span(4 * self.rttvar.nanos()));
        rto.max(RTO_FLOOR)
    }

    /// The smoothed end-to-end RTT (RFC 6298 SRTT) of the samples so far: the round trip
    /// as the sender lives it now, queueing included.
    pub fn smoothed(&self) -> Option<Span> {
        self.srtt
    }

    pub fn through(&self, end: End) -> &Loop {
        &self.loops[end.index()]
    }

    /// An echo through `through` came `elapsed` after its TSval's first sighting (see
    /// [`Loop::echo_bound_min`]).
    pub fn note_echo_bound(&mut self, through: End, elapsed: Span) {
        let l = &mut self.loops[through.index()];
        l.echo_bound_min = Some(l.echo_bound_min.map_or(elapsed, |m| m.min(elapsed)));
    }

    /// Base (minimum) end-to-end RTT: the sum of both loops' minima. The path is both loops
    /// (capture -> client -> capture, capture -> server -> capture), so one loop alone is
    /// only a lower bound on it: None unless the other loop was measured too — by a delay,
    /// or by samples too short to resolve (the near end of a capture taken at a host, whose
    /// handshake turnaround shows as a tick or less). A loop alone is [`Self::lone_loop`].
    pub fn min_end_to_end(&self) -> Option<Span> {
        let (c, s) = (&self.loops[0], &self.loops[1]);
        // A loop measured only by samples the clock cannot resolve adds the least of them as
        // the clock read it: nothing at a host's own turnaround (its prompt ACKs read 0),
        // but a loop of a few ticks where a coarse clock stamps a tap in the path (the
        // simulator's 10 ms clock at a tap 69 ms from the receiver: its samples read 60 ms,
        // and the RTT was the other loop's 40 ms alone).
        let read = |l: &Loop| l.unresolved_min.unwrap_or(Span::ZERO);
        match (c.least(), s.least()) {
            (Some(a), Some(b)) => Some(a + b),
            (Some(a), None) if s.measured() => Some(a + read(s)),
            (None, Some(b)) if c.measured() => Some(b + read(c)),
            _ => None,
        }
    }

    /// Both loops measured and neither resolved (every sample, or most of each loop's, under
    /// ten ticks of the clock: see [`Loop::least`]): the round trip is shorter than the
    /// capture's timestamps can time. The bound it is under: the two loops' bounds summed.
    pub fn unresolved_bound(&self) -> Option<Span> {
        let (c, s) = (&self.loops[0], &self.loops[1]);
        if c.least().is_some() || s.least().is_some() {
            return None;
        }
        Some(c.unresolved_below? + s.unresolved_below?)
    }

    /// The one loop measured when the other had no sample at all (a retransmitted SYN
    /// gives none, by Karn's rule; no timestamps and no data from that end give none
    /// after): its end and minimum, a lower bound on the end-to-end RTT and nothing more
    /// (at a capture beside that end it is the host's own turnaround).
    pub fn lone_loop(&self) -> Option<(End, Span)> {
        let (c, s) = (&self.loops[0], &self.loops[1]);
        match (c.least(), s.least()) {
            (Some(a), None) if !s.measured() => Some((End::Client, a)),
            (None, Some(b)) if !c.measured() => Some((End::Server, b)),
            _ => None,
        }
    }

    /// Current base end-to-end RTT (windowed minima).
    pub fn base_end_to_end(&self) -> Option<Span> {
        match (self.loops[0].base(), self.loops[1].base()) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        }
    }

    /// [`Self::base_end_to_end`] once both loops are measured: a round trip in full, never
    /// one loop standing in for it (a capture that began mid-transfer beside the receiver
    /// knows its own short loop first).
    pub fn base_round_trip(&self) -> Option<Span> {
        match (self.loops[0].base(), self.loops[1].base()) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        }
    }

    pub fn samples(&self) -> u64 {
        self.loops[0].samples + self.loops[1].samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recent_ring_keeps_what_the_deque_kept() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..200 {
            let (mut ring, mut deque) = (Recent::default(), std::collections::VecDeque::new());
            let mut t = 0i64;
            for _ in 0..300 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                t += (x % 40) as i64 - 3; // mostly forward, sometimes back (reordered stamps)
                let (at, rtt) = (Timestamp(t), Span((x >> 8) as i64 % 50));
                let horizon = Span((x >> 20) as i64 % 60 - 2); // now and then negative
                ring.push(at, rtt, horizon);
                deque.push_back((at, rtt));
                while deque.len() > RECENT_SAMPLES || deque.front().is_some_and(|&(t, _)| at - t > horizon) {
                    deque.pop_front();
                }
                assert_eq!(ring.len, deque.len());
                assert_eq!(ring.min(), deque.iter().map(|&(_, v)| v).min());
                assert!((0..ring.len).all(|i| ring.at(i) == deque[i]));
            }
        }
    }

    /// A tracker whose capture stamps to the nanosecond.
    fn tracker() -> RttTracker {
        let mut r = RttTracker::default();
        for _ in 0..crate::time::QUANTUM_SETTLED_AFTER {
            r.quantum.on(Timestamp(1_700_000_000_123_456_789));
        }
        r
    }

    #[test]
    fn samples_below_ten_quanta_are_bounds_not_delays() {
        // Before the quantum settles, round first timestamps prove nothing: only zero goes.
        let mut early = RttTracker::default();
        early.quantum.on(Timestamp(1_700_000_000_123_000_000));
        assert!(early
            .add(Timestamp(0), End::Client, RttSource::DataAck, Span::from_micros(2))
            .is_some());
        assert!(early
            .add(Timestamp(0), End::Client, RttSource::DataAck, Span(0))
            .is_none());
        let mut r = RttTracker::default();
        for _ in 0..crate::time::QUANTUM_SETTLED_AFTER {
            r.quantum.on(Timestamp(1_700_000_000_123_456_000)); // a microsecond capture
        }
        assert!(r
            .add(Timestamp(0), End::Client, RttSource::DataAck, Span::from_micros(2))
            .is_none());
        assert!(r
            .add(Timestamp(0), End::Client, RttSource::DataAck, Span::from_micros(10))
            .is_some());
        assert_eq!(r.through(End::Client).min, Some(Span::from_micros(10)));
        assert_eq!(r.through(End::Client).unresolved, 1);
    }

    /// A tracker whose capture stamps to the millisecond.
    fn millisecond_tracker() -> RttTracker {
        let mut r = RttTracker::default();
        for _ in 0..crate::time::QUANTUM_SETTLED_AFTER {
            r.quantum.on(Timestamp(1_700_000_000_123_000_000));
        }
        r
    }

    #[test]
    fn a_loop_mostly_under_the_clock_is_not_its_one_delayed_ack() {
        // A receiver-side capture on a 1 ms clock: the receiver's prompt ACKs read 0-1 ms,
        // one delayed ACK (Linux's 40 ms timer) reads 39 ms; the far loop is 40 ms.
        let mut r = millisecond_tracker();
        let t = Timestamp(0);
        for raw in [0, 1, 0, 0] {
            assert!(r
                .add(t, End::Client, RttSource::DataAck, Span::from_millis(raw))
                .is_none());
        }
        assert!(r
            .add(t, End::Client, RttSource::DataAck, Span::from_millis(39))
            .is_some());
        assert!(r.add_loop(End::Client, Span::from_millis(45)));
        assert_eq!(r.through(End::Client).least(), None, "the loop is within a tick");
        assert!(r.through(End::Client).measured());
        let s = r.add(t, End::Server, RttSource::TsEcho, Span::from_millis(40)).unwrap();
        assert_eq!(
            s.end_to_end,
            Span::from_millis(40),
            "no delayed ACK added to the far loop"
        );
        assert_eq!(r.min_end_to_end(), Some(Span::from_millis(40)));
        assert_eq!(r.unresolved_bound(), None);
        // Read as 1 ms at best: that is the loop's figure.
        let mut r = millisecond_tracker();
        for raw in [1, 2, 1] {
            r.add(t, End::Client, RttSource::DataAck, Span::from_millis(raw));
        }
        r.add(t, End::Client, RttSource::DataAck, Span::from_millis(39));
        assert_eq!(r.through(End::Client).least(), Some(Span::from_millis(1)));
    }

    #[test]
    fn a_few_unresolved_samples_do_not_overrule_a_measured_loop() {
        // One zero among many 40 ms samples (a misattributed pair, batched stamps): the
        // loop is the 40 ms its samples say.
        let mut r = millisecond_tracker();
        let t = Timestamp(0);
        r.add(t, End::Server, RttSource::DataAck, Span::ZERO);
        for _ in 0..5 {
            r.add(t, End::Server, RttSource::DataAck, Span::from_millis(40));
        }
        assert_eq!(r.through(End::Server).least(), Some(Span::from_millis(40)));
        // Both loops under the clock: no RTT, and the bound it is under.
        let mut r = millisecond_tracker();
        r.add(t, End::Server, RttSource::DataAck, Span::ZERO);
        r.add(t, End::Client, RttSource::Handshake, Span::from_millis(3));
        assert_eq!(r.min_end_to_end(), None);
        assert_eq!(r.unresolved_bound(), Some(Span::from_millis(5)));
    }

    #[test]
    fn end_to_end_is_the_sum_of_both_loops() {
        let mut r = tracker();
        let t = Timestamp(0);
        r.add(t, End::Server, RttSource::Handshake, Span::from_millis(30));
        let s = r
            .add(t, End::Client, RttSource::Handshake, Span::from_millis(20))
            .unwrap();
        assert_eq!(s.end_to_end, Span::from_millis(50));
        assert_eq!(r.min_end_to_end(), Some(Span::from_millis(50)));
        let s = r.add(t, End::Server, RttSource::TsEcho, Span::from_millis(40)).unwrap();
        assert_eq!(s.end_to_end, Span::from_millis(60));
        assert!(
            r.add(t, End::Server, RttSource::TsEcho, Span::ZERO).is_none(),
            "a zero is below resolution"
        );
        assert_eq!(r.min_end_to_end(), Some(Span::from_millis(50)));
    }

    /// At the receiver of a download the far loop (through the server) carries the queue and
    /// the near loop (the receiver's own ACK turnaround) does not: a near-loop sample implies
    /// the far loop as it is now, not as it was when the path was empty. A far-loop sample
    /// adds the near loop's minimum, never one of its held ACKs.
    #[test]
    fn a_near_loop_sample_carries_the_far_loops_queue() {
        let ms = Span::from_millis;
        let mut r = tracker();
        let t = |m: i64| Timestamp(m * 1_000_000);
        r.add(t(0), End::Server, RttSource::Handshake, ms(50));
        r.add(t(0), End::Client, RttSource::Handshake, Span::from_micros(100));
        // A queue of 40 ms builds: echoes through the server read 90 ms.
        r.add(t(100), End::Server, RttSource::TsEcho, ms(90));
        r.add(t(101), End::Client, RttSource::DataAck, ms(40)); // a delayed ACK
        let s = r
            .add(t(102), End::Client, RttSource::DataAck, Span::from_micros(100))
            .unwrap();
        assert_eq!(
            s.end_to_end,
            ms(90) + Span::from_micros(100),
            "the near sample reads the path now"
        );
        let s = r.add(t(103), End::Server, RttSource::TsEcho, ms(91)).unwrap();
        assert_eq!(
            s.end_to_end,
            ms(91) + Span::from_micros(100),
            "the far sample adds the near loop's minimum"
        );
        // After a silence longer than two rounds no far sample is recent: its minimum stands.
        let s = r
            .add(t(5_000), End::Client, RttSource::DataAck, Span::from_micros(100))
            .unwrap();
        assert_eq!(
            s.end_to_end,
            ms(50) + Span::from_micros(100),
            "no sample spans the silence"
        );
        // An answer that waited on the server's application is no measure of the loop now.
        r.add_sample(
            t(6_000),
            End::Server,
            RttSource::TsEcho,
            ms(400),
            false,
            Carried::len(1460),
        );
        let s = r
            .add(t(6_001), End::Client, RttSource::DataAck, Span::from_micros(100))
            .unwrap();
        assert_eq!(
            s.end_to_end,
            ms(50) + Span::from_micros(100),
            "a held answer stands for nothing"
        );
    }

    /// On a LAN behind a 10 ms queue whose link releases data in bursts, the far loop's
    /// samples come a burst apart, far more than two base RTTs (0.6 ms): the horizon is two
    /// rounds as the far loop now takes them, so a near-loop sample between bursts still
    /// carries the queue (P1 lan_fast's receiver read its base between bursts, and no
    /// standing queue). After a silence of many such rounds, the minimum stands again.
    #[test]
    fn the_horizon_follows_the_far_loop_as_it_is_now() {
        let us = Span::from_micros;
        let mut r = tracker();
        let t = |u: i64| Timestamp(u * 1_000);
        r.add(t(0), End::Server, RttSource::Handshake, us(600));
        r.add(t(0), End::Client, RttSource::Handshake, us(10));
        r.add(t(20_000), End::Server, RttSource::TsEcho, us(10_000));
        let s = r.add(t(25_000), End::Client, RttSource::DataAck, us(10)).unwrap();
        assert_eq!(s.end_to_end, us(10_010), "5 ms after the burst the queue still stands");
        let s = r.add(t(60_000), End::Client, RttSource::DataAck, us(10)).unwrap();
        assert_eq!(
            s.end_to_end,
            us(610),
            "40 ms later (four of its rounds) nothing says so"
        );
    }

    #[test]
    fn one_loop_alone_is_a_bound_unless_the_other_is_below_resolution() {
        let mut r = tracker();
        r.add(Timestamp(0), End::Server, RttSource::DataAck, Span::from_millis(30));
        assert_eq!(r.min_end_to_end(), None);
        assert_eq!(r.lone_loop(), Some((End::Server, Span::from_millis(30))));
        // The near end's turnaround, under a tick: measured as negligible.
        assert!(r
            .add(Timestamp(0), End::Client, RttSource::Handshake, Span::ZERO)
            .is_none());
        assert_eq!(r.min_end_to_end(), Some(Span::from_millis(30)));
        assert_eq!(r.lone_loop(), None);
    }

    /// A loop whose least is the handshake's says how much longer its samples on full data
    /// segments took (their serialisation); a sample on a short segment (a FIN, a pure ACK)
    /// is no measure of that, and a loop whose least is a segment's has no handshake gap.
    #[test]
    fn a_handshake_least_and_its_segments_gap() {
        let ms = Span::from_millis;
        let mut r = tracker();
        let t = Timestamp(0);
        r.add(t, End::Server, RttSource::Handshake, ms(2));
        assert_eq!(
            r.through(End::Server).segment_gap(),
            SegmentGap {
                least_is_handshake: true,
                gap: None
            },
            "no segment timed yet"
        );
        r.add_sample(t, End::Server, RttSource::DataAck, ms(2), true, Carried::len(100));
        r.add_sample(t, End::Server, RttSource::DataAck, ms(14), true, Carried::len(1448));
        r.add_sample(t, End::Server, RttSource::TsEcho, ms(3), true, Carried::len(0));
        r.add_sample(t, End::Server, RttSource::DataAck, ms(20), true, Carried::len(1200));
        assert_eq!(
            r.through(End::Server).segment_gap(),
            SegmentGap {
                least_is_handshake: true,
                gap: Some(ms(12))
            },
            "the least full segment's 14 ms against the handshake's 2: neither a 100-byte segment's 2 ms nor a pure ACK's 3 ms is one"
        );
        // The other loop's least is a segment's.
        r.add(t, End::Client, RttSource::Handshake, ms(5));
        r.add_sample(t, End::Client, RttSource::DataAck, ms(4), true, Carried::len(1448));
        let g = r.through(End::Client).segment_gap();
        assert!(!g.least_is_handshake);
        assert_eq!(g.gap, Some(Span::ZERO));
    }
}
