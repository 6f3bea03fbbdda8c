//! The data sender: send buffer and application, congestion control (Reno, CUBIC with
//! HyStart), SACK scoreboard with RACK-style loss marking or NewReno, PRR in recovery,
//! RTO with back-off, Linux's cwnd validation and restart after idle.
//!
//! Sequence space: data offsets from 0 (the byte after the SYN); a FIN takes the offset
//! after the last data byte. Times are nanoseconds of simulated time.

use super::{Cc, Stack};
use std::collections::VecDeque;

const MS: i64 = 1_000_000;
const RTO_MAX: i64 = 120_000 * MS;
const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;
const MAX_CWND: u32 = 1_000_000;
const AUTOTUNE_MAX: u64 = 4 << 20;
/// Sacked segments above a hole before it counts as lost (RFC 6675 DupThresh).
const DUPTHRESH: u32 = 3;

#[derive(Clone, Debug)]
struct TxSeg {
    start: u64,
    len: u32,
    fin: bool,
    sacked: bool,
    lost: bool,
    /// A retransmission of it is in flight.
    retrans: bool,
    ever_retrans: bool,
    /// Time of the latest transmission.
    xmit: i64,
}

impl TxSeg {
    fn end(&self) -> u64 {
        self.start + self.len as u64 + self.fin as u64
    }
}

/// Linux's congestion-avoidance states that matter here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CaState {
    Open,
    /// Reducing the window for an ECN echo (Linux `TCP_CA_CWR`).
    Cwr,
    Recovery,
    Loss,
}

/// A segment the sender puts on the wire now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Xmit {
    pub start: u64,
    pub len: u32,
    pub fin: bool,
    pub psh: bool,
    pub retrans: bool,
    /// Zero-window probe: no data, sequence number snd_una - 1.
    pub probe: bool,
    /// New data of an ECN sender: sent ECT(0) (RFC 3168 §6.1.5: not retransmissions).
    pub ect: bool,
    /// The first new data after a window reduction for ECE carries CWR (§6.1.2).
    pub cwr: bool,
}

/// What held the sender back at a moment (the truth's chronograph).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    Cwnd,
    Rwnd,
    /// Nothing to send, data in flight.
    Sender,
    /// Nothing to send, nothing in flight.
    Idle,
}

/// What one ACK did.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct AckResult {
    pub una_advanced: bool,
    pub rtt: Option<i64>,
    pub window_opened: bool,
}

/// CUBIC (Linux `tcp_cubic.c`, integer arithmetic) and HyStart state.
#[derive(Clone, Debug, Default)]
struct Cubic {
    last_max_cwnd: u32,
    epoch_start: Option<i64>,
    origin: u32,
    k: u64,
    ack_cnt: u32,
    tcp_cwnd: u32,
    cnt: u32,
    delay_min: i64,
    found: bool,
    round_start: i64,
    last_ack: i64,
    end_seq: u64,
    curr_rtt: i64,
    sample_cnt: u32,
}

const BETA: u64 = 717;
const BETA_SCALE: u64 = 1024;
const CUBE_RTT_SCALE: u128 = 410; // bic_scale 41 * 10
const BETA_FRIENDLY: u32 = 15; // 8 * (1024 + 717) / 3 / (1024 - 717)
const HYSTART_LOW_WINDOW: u32 = 16;
const HYSTART_MIN_SAMPLES: u32 = 8;
const HYSTART_ACK_DELTA: i64 = 2 * MS;

fn cube_root(v: u64) -> u64 {
    let mut x = (v as f64).cbrt() as u64;
    while x > 0 && (x as u128).pow(3) > v as u128 {
        x -= 1;
    }
    while ((x + 1) as u128).pow(3) <= v as u128 {
        x += 1;
    }
    x
}

impl Cubic {
    fn reset(&mut self) {
        let delay_min = self.delay_min;
        *self = Cubic {
            delay_min,
            ..Cubic::default()
        };
    }

    /// `bictcp_recalc_ssthresh`.
    fn ssthresh(&mut self, cwnd: u32) -> u32 {
        self.epoch_start = None;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd {
            ((cwnd as u64 * (BETA_SCALE + BETA)) / (2 * BETA_SCALE)) as u32
        } else {
            cwnd
        };
        ((cwnd as u64 * BETA / BETA_SCALE) as u32).max(2)
    }

    /// `bictcp_update`: the ACK count per cwnd increment.
    fn update(&mut self, now: i64, cwnd: u32, acked: u32) -> u32 {
        self.ack_cnt += acked;
        let epoch = match self.epoch_start {
            Some(e) => e,
            None => {
                self.epoch_start = Some(now);
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.k = 0;
                    self.origin = cwnd;
                } else {
                    let factor: u64 = (1u64 << 40) / CUBE_RTT_SCALE as u64;
                    self.k = cube_root(factor * (self.last_max_cwnd - cwnd) as u64);
                    self.origin = self.last_max_cwnd;
                }
                now
            }
        };
        // Time since the epoch plus the minimum delay, in 1/1024 s.
        let t = ((now - epoch + self.delay_min).max(0) as u128 * 1024 / 1_000_000_000) as u64;
        let offs = t.abs_diff(self.k) as u128;
        let delta = ((CUBE_RTT_SCALE * offs * offs * offs) >> 40).min(u32::MAX as u128) as u32;
        let target = if t < self.k {
            self.origin.saturating_sub(delta)
        } else {
            self.origin.saturating_add(delta)
        };
        self.cnt = if target > cwnd {
            cwnd / (target - cwnd)
        } else {
            100 * cwnd
        };
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }
        // Reno-friendly region.
        let d = ((cwnd * BETA_FRIENDLY) >> 3).max(1);
        while self.ack_cnt > d {
            self.ack_cnt -= d;
            self.tcp_cwnd += 1;
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
        self.cnt = self.cnt.max(2);
        self.cnt
    }

    fn hystart_reset(&mut self, now: i64, nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = nxt;
        self.curr_rtt = i64::MAX;
        self.sample_cnt = 0;
    }

    /// `hystart_update`: true when slow start should end here.
    fn hystart(&mut self, now: i64, una: u64, nxt: u64, rtt: i64, cwnd: u32) -> bool {
        if self.found {
            return false;
        }
        if una > self.end_seq {
            self.hystart_reset(now, nxt);
        }
        if cwnd < HYSTART_LOW_WINDOW {
            return false;
        }
        // ACK train: ACKs keep coming closely spaced for half the minimum delay.
        if now - self.last_ack <= HYSTART_ACK_DELTA {
            self.last_ack = now;
            if now - self.round_start > self.delay_min / 2 {
                self.found = true;
            }
        }
        // Delay increase.
        self.curr_rtt = self.curr_rtt.min(rtt);
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let thresh = (self.delay_min / 8).clamp(4 * MS, 16 * MS);
            if self.curr_rtt > self.delay_min + thresh {
                self.found = true;
            }
        }
        self.found
    }
}

pub(super) struct Sender {
    /// Payload per full segment.
    pub mss: u32,
    kind: Cc,
    /// The stack's initial window (segments), RTO floor and initial RTO (ns).
    init_cwnd: u32,
    rto_min: i64,
    rto_init: i64,
    cubic: Cubic,
    pub cwnd: u32,
    pub ssthresh: u32,
    cwnd_cnt: u32,
    pub una: u64,
    pub nxt: u64,
    /// Bytes the application has put in the send buffer.
    pub written: u64,
    /// Bytes the application wants to write that did not fit yet.
    pending_app: u64,
    bulk: bool,
    sndbuf: Option<u64>,
    pub app_closed: bool,
    pub fin_sent: bool,
    pub fin_acked: bool,
    q: VecDeque<TxSeg>,
    pub packets_out: u32,
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    /// Lost and not retransmitted.
    lost_pending: u32,
    retx_hint: u64,
    retrans_list: Vec<u64>,
    rack_cursor: u64,
    /// (send time, end) of the most recently sent segment known delivered (RACK).
    rack: (i64, u64),
    /// Window granted by the receiver, bytes (scaled as this end believes).
    pub rwnd: u64,
    sack: bool,
    pub ca: CaState,
    high_seq: u64,
    prior_cwnd: u32,
    prr_delivered: u32,
    prr_out: u32,
    dupacks: u32,
    srtt: i64,
    rttvar: i64,
    pub min_rtt: Option<i64>,
    backoff: u32,
    is_cwnd_limited: bool,
    max_packets_out: u32,
    cwnd_usage_seq: u64,
    last_send: i64,
    /// End of the last short segment sent (Minshall's Nagle).
    snd_sml: u64,
    pub persist_backoff: u32,
    /// RFC 3168 ECN was negotiated; a window reduction waits to be signalled with CWR.
    pub ecn: bool,
    cwr_pending: bool,
    // statistics
    pub segments_sent: u64,
    pub retransmitted: u64,
    pub rto_count: u32,
    pub fast_recoveries: u32,
    pub max_cwnd: u32,
    pub max_flight: u64,
    pub max_rwnd: u64,
    pub violations: u64,
    pub ecn_reductions: u32,
    pub cwr_sent: u64,
}

impl Sender {
    pub fn new(mss: u32, kind: Cc, sack: bool, rwnd: u64, sndbuf: Option<u32>, bulk: bool, stack: &Stack) -> Self {
        let init_cwnd = stack.init_cwnd.max(1);
        Sender {
            mss,
            kind,
            init_cwnd,
            rto_min: stack.rto_min.as_nanos() as i64,
            rto_init: stack.rto_init.as_nanos() as i64,
            cubic: Cubic::default(),
            cwnd: init_cwnd,
            ssthresh: INFINITE_SSTHRESH,
            cwnd_cnt: 0,
            una: 0,
            nxt: 0,
            written: 0,
            pending_app: 0,
            bulk,
            sndbuf: sndbuf.map(u64::from),
            app_closed: false,
            fin_sent: false,
            fin_acked: false,
            q: VecDeque::new(),
            packets_out: 0,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            lost_pending: 0,
            retx_hint: 0,
            retrans_list: Vec::new(),
            rack_cursor: 0,
            rack: (i64::MIN, 0),
            rwnd,
            sack,
            ca: CaState::Open,
            high_seq: 0,
            prior_cwnd: 0,
            prr_delivered: 0,
            prr_out: 0,
            dupacks: 0,
            srtt: 0,
            rttvar: 0,
            min_rtt: None,
            backoff: 0,
            is_cwnd_limited: false,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            last_send: 0,
            snd_sml: 0,
            persist_backoff: 0,
            ecn: false,
            cwr_pending: false,
            segments_sent: 0,
            retransmitted: 0,
            rto_count: 0,
            fast_recoveries: 0,
            max_cwnd: init_cwnd,
            max_flight: 0,
            max_rwnd: rwnd,
            violations: 0,
            ecn_reductions: 0,
            cwr_sent: 0,
        }
    }

    /// Segments in flight: Linux's `tcp_packets_in_flight`.
    pub fn in_flight(&self) -> u32 {
        (self.packets_out + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    /// Bytes sent and not cumulatively acknowledged (the flight a capture shows).
    pub fn flight_bytes(&self) -> u64 {
        self.nxt - self.una.min(self.nxt)
    }

    /// Retransmission timeout with the current back-off.
    pub fn rto(&self) -> i64 {
        let base = if self.srtt == 0 {
            self.rto_init
        } else {
            self.srtt + (4 * self.rttvar).max(self.rto_min)
        };
        (base << self.backoff.min(16)).min(RTO_MAX)
    }

    /// Persist (zero-window probe) interval.
    pub fn probe_interval(&self) -> i64 {
        let base = if self.srtt == 0 {
            self.rto_init
        } else {
            self.srtt + (4 * self.rttvar).max(self.rto_min)
        };
        (base << self.persist_backoff.min(16)).min(RTO_MAX)
    }

    fn buf_limit(&self) -> u64 {
        match self.sndbuf {
            Some(b) => b,
            None => (2 * self.max_cwnd.max(self.init_cwnd) as u64 * self.mss as u64).min(AUTOTUNE_MAX),
        }
    }

    /// The application writes: `n` more bytes (on/off bursts).
    pub fn app_write(&mut self, n: u64) {
        if !self.app_closed {
            self.pending_app += n;
        }
    }

    /// The application closes: no more writes; a FIN follows the data.
    pub fn app_close(&mut self) {
        self.app_closed = true;
        self.pending_app = 0;
    }

    /// Moves application data into the send buffer when it has room: a third of it free,
    /// as Linux wakes a blocked writer.
    fn refill(&mut self) {
        if self.app_closed {
            return;
        }
        let limit = self.buf_limit();
        let queued = self.written - self.una.min(self.written);
        let free = limit.saturating_sub(queued);
        if free == 0 || (free < limit / 3 && queued > 0) {
            return;
        }
        if self.bulk {
            let mut add = free / self.mss as u64 * self.mss as u64;
            if add == 0 {
                add = free;
            }
            self.written += add;
        } else if self.pending_app > 0 {
            let add = free.min(self.pending_app);
            self.written += add;
            self.pending_app -= add;
        }
    }

    pub fn has_unsent(&self) -> bool {
        self.written > self.nxt
    }

    /// The receiver's window stops the next new segment: it is closed where the sender
    /// is, or only a short piece would fit while another short segment is out.
    pub fn window_blocked(&self) -> bool {
        let len = (self.written - self.nxt.min(self.written)).min(self.mss as u64);
        let room = (self.una + self.rwnd).saturating_sub(self.nxt);
        len > 0 && len > room && (room == 0 || self.snd_sml > self.una)
    }

    pub fn state(&self) -> State {
        let unsent = self.has_unsent()
            || self.lost_pending > 0
            || (self.app_closed && !self.fin_sent && self.nxt == self.written);
        if unsent {
            if self.in_flight() >= self.cwnd {
                State::Cwnd
            } else if self.lost_pending == 0 && self.window_blocked() {
                State::Rwnd
            } else {
                State::Sender // a short tail held back by Nagle
            }
        } else if self.packets_out == 0 {
            State::Idle
        } else {
            State::Sender
        }
    }

    fn rtt_sample(&mut self, r: i64) {
        let r = r.max(1);
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        self.cubic.delay_min = self.min_rtt.unwrap_or(r);
        if self.srtt == 0 {
            self.srtt = r;
            self.rttvar = r / 2;
        } else {
            let err = (self.srtt - r).abs();
            self.rttvar = (3 * self.rttvar + err) / 4;
            self.srtt = (7 * self.srtt + r) / 8;
        }
    }

    fn cc_ssthresh(&mut self) -> u32 {
        match self.kind {
            Cc::Reno => (self.cwnd / 2).max(2),
            Cc::Cubic => self.cubic.ssthresh(self.cwnd),
        }
    }

    /// Linux `tcp_is_cwnd_limited`.
    fn cwnd_limited_for_growth(&self) -> bool {
        if self.is_cwnd_limited {
            return true;
        }
        self.cwnd < self.ssthresh && self.cwnd < 2 * self.max_packets_out
    }

    /// `tcp_cong_avoid` of the chosen algorithm.
    fn cong_avoid(&mut self, now: i64, mut acked: u32) {
        if !self.cwnd_limited_for_growth() {
            return;
        }
        if self.cwnd < self.ssthresh {
            let c = (self.cwnd + acked).min(self.ssthresh);
            acked -= c - self.cwnd;
            self.cwnd = c;
            if acked == 0 {
                return;
            }
        }
        let w = match self.kind {
            Cc::Reno => self.cwnd,
            Cc::Cubic => self.cubic.update(now, self.cwnd, acked),
        };
        // tcp_cong_avoid_ai
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let d = self.cwnd_cnt / w;
            self.cwnd_cnt -= d * w;
            self.cwnd += d;
        }
        self.cwnd = self.cwnd.min(MAX_CWND);
    }

    fn mark_lost(&mut self, i: usize) -> bool {
        let s = &mut self.q[i];
        if s.sacked || s.lost {
            return false;
        }
        s.lost = true;
        self.lost_out += 1;
        self.lost_pending += 1;
        self.retx_hint = self.retx_hint.min(s.start);
        true
    }

    /// RACK with a zero reordering window: a segment not delivered that was sent before
    /// the most recently sent segment that was delivered is lost. Returns how many were
    /// newly marked.
    fn rack_mark(&mut self) -> u32 {
        let mut n = 0;
        let mut i = 0;
        while i < self.retrans_list.len() {
            let start = self.retrans_list[i];
            let idx = self.q.partition_point(|s| s.start < start);
            match self.q.get_mut(idx) {
                Some(s) if s.start == start && s.retrans => {
                    if (s.xmit, s.end()) < self.rack && !s.sacked {
                        s.retrans = false;
                        self.retrans_out -= 1;
                        self.lost_pending += 1;
                        self.retx_hint = self.retx_hint.min(start);
                        self.retrans_list.swap_remove(i);
                        n += 1;
                        continue;
                    }
                }
                _ => {
                    self.retrans_list.swap_remove(i);
                    continue;
                }
            }
            i += 1;
        }
        let mut idx = self.q.partition_point(|s| s.end() <= self.rack_cursor);
        while idx < self.q.len() {
            let s = &self.q[idx];
            if !s.ever_retrans {
                if (s.xmit, s.end()) >= self.rack {
                    break;
                }
                self.rack_cursor = s.end();
                if self.mark_lost(idx) {
                    n += 1;
                }
            }
            idx += 1;
        }
        n
    }

    fn mark_head_lost(&mut self) -> u32 {
        if self.q.is_empty() {
            return 0;
        }
        self.mark_lost(0) as u32
    }

    /// Linux `tcp_init_cwnd_reduction`: PRR from the current window down to ssthresh.
    fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.nxt;
        self.prior_cwnd = self.cwnd;
        self.ssthresh = self.cc_ssthresh();
        self.prr_delivered = 0;
        self.prr_out = 0;
    }

    fn enter_recovery(&mut self) {
        // Already reducing for an ECN echo, the reduction goes on (`tcp_enter_recovery`).
        if self.ca == CaState::Cwr {
            self.high_seq = self.nxt;
        } else {
            self.init_cwnd_reduction();
        }
        self.ca = CaState::Recovery;
        self.fast_recoveries += 1;
    }

    /// An ACK with ECE while no reduction is under way (Linux `tcp_enter_cwr`, at most once
    /// per window of data: the state holds until data sent after it is acknowledged).
    fn enter_cwr(&mut self) {
        self.init_cwnd_reduction();
        self.ca = CaState::Cwr;
        self.cwr_pending = true;
        self.ecn_reductions += 1;
    }

    /// Proportional rate reduction (RFC 6937, Linux `tcp_cwnd_reduction`).
    fn prr(&mut self, newly: u32, una_advanced: bool, newly_lost: u32) {
        if newly == 0 || self.prior_cwnd == 0 {
            return;
        }
        self.prr_delivered += newly;
        let pipe = self.in_flight() as i64;
        let delta = self.ssthresh as i64 - pipe;
        let mut sndcnt: i64 = if delta < 0 {
            let dividend = self.ssthresh as u64 * self.prr_delivered as u64 + self.prior_cwnd as u64 - 1;
            (dividend / self.prior_cwnd as u64) as i64 - self.prr_out as i64
        } else {
            let mut s = (self.prr_delivered as i64 - self.prr_out as i64).max(newly as i64);
            if una_advanced && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.cwnd = (pipe + sndcnt).max(1) as u32;
    }

    /// Processes an ACK: `ack` is the data offset acknowledged (a FIN counts one), `win`
    /// the window in bytes, `sacks` SACK blocks as data offsets, `ece` its ECN echo.
    pub fn on_ack(&mut self, now: i64, ack: u64, win: u64, sacks: &[(u64, u64)], ece: bool) -> AckResult {
        let mut res = AckResult::default();
        let top = self.q.back().map_or(self.nxt, |s| s.end());
        if ack < self.una || ack > top {
            return res;
        }
        let was_blocked = self.window_blocked();
        let window_changed = win != self.rwnd;
        self.rwnd = win;
        self.max_rwnd = self.max_rwnd.max(win);
        let prior_una = self.una;
        let prior_packets = self.packets_out;
        let prior_sacked = self.sacked_out;
        let mut acked_segs = 0u32;
        let mut rtt = None;
        while let Some(f) = self.q.front() {
            if f.end() > ack {
                break;
            }
            let s = self.q.pop_front().expect("front");
            self.packets_out -= 1;
            acked_segs += 1;
            if s.sacked {
                self.sacked_out -= 1;
            }
            if s.lost {
                self.lost_out -= 1;
                if !s.retrans {
                    self.lost_pending -= 1;
                }
            }
            if s.retrans {
                self.retrans_out -= 1;
            }
            if !s.ever_retrans {
                rtt = Some(now - s.xmit);
            }
            if !s.sacked && (!s.ever_retrans || self.min_rtt.is_some_and(|m| now - s.xmit >= m)) {
                self.rack = self.rack.max((s.xmit, s.end()));
            }
            if s.fin {
                self.fin_acked = true;
            }
        }
        self.una = ack;
        if self.sack {
            for &(l, r) in sacks {
                if r <= self.una {
                    continue;
                }
                let mut i = self.q.partition_point(|s| s.end() <= l);
                while i < self.q.len() && self.q[i].start < r {
                    let min_rtt = self.min_rtt;
                    let s = &mut self.q[i];
                    if s.end() <= r && s.start >= l && !s.sacked {
                        s.sacked = true;
                        self.sacked_out += 1;
                        if s.lost {
                            s.lost = false;
                            self.lost_out -= 1;
                            if !s.retrans {
                                self.lost_pending -= 1;
                            }
                        }
                        if s.retrans {
                            s.retrans = false;
                            self.retrans_out -= 1;
                        }
                        if !s.ever_retrans || min_rtt.is_some_and(|m| now - s.xmit >= m) {
                            self.rack = self.rack.max((s.xmit, s.end()));
                        }
                    }
                    i += 1;
                }
            }
        }
        let una_advanced = self.una > prior_una;
        if let Some(r) = rtt {
            self.rtt_sample(r);
            if self.kind == Cc::Cubic && self.cwnd < self.ssthresh && self.ca == CaState::Open {
                let (una, nxt, cwnd) = (self.una, self.nxt, self.cwnd);
                if self.cubic.hystart(now, una, nxt, r, cwnd) {
                    self.ssthresh = self.cwnd;
                }
            }
        }
        if una_advanced {
            self.backoff = 0;
        }
        // Leaving recovery (a window reduction for ECN once data sent after it is
        // acknowledged, beyond `high_seq`: Linux `tcp_fastretrans_alert`).
        let reduced = match self.ca {
            CaState::Cwr => self.una > self.high_seq,
            _ => self.una >= self.high_seq,
        };
        if self.ca != CaState::Open && reduced {
            if (self.ca == CaState::Recovery && self.ssthresh < INFINITE_SSTHRESH) || self.ca == CaState::Cwr {
                self.cwnd = self.ssthresh;
            }
            self.ca = CaState::Open;
            self.dupacks = 0;
            if !self.sack {
                self.sacked_out = 0;
            }
        }
        // Loss detection.
        let mut newly_lost = 0;
        if self.sack {
            if self.ca != CaState::Open || self.sacked_out >= DUPTHRESH {
                newly_lost = self.rack_mark();
            }
        } else {
            let dupack = !una_advanced && !window_changed && self.packets_out > 0;
            if dupack {
                self.dupacks += 1;
                if self.ca != CaState::Loss {
                    self.sacked_out = (self.sacked_out + 1).min(self.packets_out.saturating_sub(1));
                }
            }
            if una_advanced {
                if matches!(self.ca, CaState::Open | CaState::Cwr) {
                    self.dupacks = 0;
                    self.sacked_out = 0;
                } else {
                    let d = acked_segs.saturating_sub(1).min(self.sacked_out);
                    self.sacked_out -= d;
                    if self.ca == CaState::Recovery {
                        // NewReno partial ACK: the next hole is lost too.
                        newly_lost += self.mark_head_lost();
                    }
                }
            }
            if matches!(self.ca, CaState::Open | CaState::Cwr) && self.dupacks >= DUPTHRESH {
                newly_lost += self.mark_head_lost();
            }
        }
        if matches!(self.ca, CaState::Open | CaState::Cwr) && self.lost_out > 0 {
            self.enter_recovery();
        }
        // ECN: an echo reduces the window as a loss would (RFC 3168 §6.1.2), once per
        // window of data, and not on top of a recovery.
        if ece && self.ecn && self.ca == CaState::Open {
            self.enter_cwr();
        }
        let newly = (prior_packets + self.sacked_out).saturating_sub(self.packets_out + prior_sacked);
        if matches!(self.ca, CaState::Recovery | CaState::Cwr) {
            self.prr(newly, una_advanced, newly_lost);
        } else if una_advanced {
            self.cong_avoid(now, newly.max(acked_segs));
        }
        self.max_cwnd = self.max_cwnd.max(self.cwnd);
        if window_changed && self.rwnd > 0 {
            self.persist_backoff = 0;
        }
        res.una_advanced = una_advanced;
        res.rtt = rtt;
        res.window_opened = was_blocked && !self.window_blocked();
        res
    }

    /// The retransmission timer fired.
    pub fn on_rto(&mut self, now: i64, out: &mut Vec<Xmit>) {
        if self.packets_out == 0 {
            return;
        }
        if self.ca == CaState::Open {
            self.ssthresh = self.cc_ssthresh();
        }
        if self.kind == Cc::Cubic {
            self.cubic.reset();
        }
        self.cwnd = 1;
        self.cwnd_cnt = 0;
        if !self.sack {
            self.sacked_out = 0;
        }
        for s in self.q.iter_mut() {
            if s.sacked {
                continue;
            }
            if s.retrans {
                s.retrans = false;
                self.retrans_out -= 1;
            }
            if !s.lost {
                s.lost = true;
                self.lost_out += 1;
            }
        }
        self.retrans_list.clear();
        self.lost_pending = self.lost_out;
        self.retx_hint = self.una;
        self.ca = CaState::Loss;
        self.high_seq = self.nxt;
        self.dupacks = 0;
        self.backoff += 1;
        self.rto_count += 1;
        self.try_send(now, out);
    }

    /// The persist timer fired: probe the window.
    pub fn on_persist(&mut self, now: i64, out: &mut Vec<Xmit>) {
        if self.packets_out > 0 || !self.has_unsent() || !self.window_blocked() {
            return;
        }
        let room = (self.una + self.rwnd).saturating_sub(self.nxt);
        if room > 0 {
            let len = room.min(self.mss as u64).min(self.written - self.nxt) as u32;
            self.send_new(now, len, out);
        } else {
            out.push(Xmit {
                start: self.una,
                len: 0,
                fin: false,
                psh: false,
                retrans: false,
                probe: true,
                ect: false,
                cwr: false,
            });
        }
        self.persist_backoff += 1;
    }

    fn next_lost(&mut self) -> Option<usize> {
        let mut i = self.q.partition_point(|s| s.end() <= self.retx_hint);
        while i < self.q.len() {
            let s = &self.q[i];
            if s.lost && !s.retrans && !s.sacked {
                self.retx_hint = s.start;
                return Some(i);
            }
            i += 1;
        }
        None
    }

    fn send_new(&mut self, now: i64, len: u32, out: &mut Vec<Xmit>) {
        if len > 0 && (self.in_flight() >= self.cwnd || self.nxt + len as u64 > self.una + self.rwnd) {
            self.violations += 1;
        }
        let start = self.nxt;
        let fin = self.app_closed && start + len as u64 == self.written;
        self.q.push_back(TxSeg {
            start,
            len,
            fin,
            sacked: false,
            lost: false,
            retrans: false,
            ever_retrans: false,
            xmit: now,
        });
        if fin {
            self.fin_sent = true;
        }
        self.packets_out += 1;
        self.nxt += len as u64;
        if matches!(self.ca, CaState::Recovery | CaState::Cwr) {
            self.prr_out += 1;
        }
        if len > 0 {
            self.segments_sent += 1;
        }
        self.last_send = now;
        self.max_flight = self.max_flight.max(self.flight_bytes());
        // Linux `tcp_ecn_send`: new data goes ECT, and the first after a reduction CWR.
        let ect = self.ecn && len > 0;
        let cwr = ect && std::mem::take(&mut self.cwr_pending);
        self.cwr_sent += cwr as u64;
        out.push(Xmit {
            start,
            len,
            fin,
            psh: len > 0 && start + len as u64 == self.written,
            retrans: false,
            probe: false,
            ect,
            cwr,
        });
    }

    /// Linux `tcp_cwnd_restart` and CUBIC's `CA_EVENT_TX_START` before sending into an
    /// empty pipe.
    fn restart_after_idle(&mut self, now: i64) {
        let idle = now - self.last_send;
        if self.segments_sent == 0 || idle <= 0 {
            return;
        }
        if self.kind == Cc::Cubic {
            if let Some(e) = self.cubic.epoch_start.as_mut() {
                *e = (*e + idle).min(now);
            }
        }
        let rto = self.rto();
        if idle > rto {
            let restart = self.init_cwnd.min(self.cwnd);
            self.ssthresh = self.ssthresh.max(self.cwnd * 3 / 4);
            let mut c = self.cwnd;
            let mut d = idle;
            loop {
                d -= rto;
                if d <= 0 || c <= restart {
                    break;
                }
                c >>= 1;
            }
            self.cwnd = c.max(restart);
        }
    }

    /// Sends what congestion control, the receiver's window and the data allow, in
    /// Linux's order: lost segments first, then new data; the FIN rides on the last data
    /// segment when the application has closed.
    pub fn try_send(&mut self, now: i64, out: &mut Vec<Xmit>) {
        self.refill();
        let had_unsent = self.has_unsent() || self.lost_pending > 0;
        if self.packets_out == 0 && self.has_unsent() {
            self.restart_after_idle(now);
        }
        let mut sent = false;
        loop {
            let pipe = self.in_flight();
            if pipe >= self.cwnd {
                break;
            }
            if self.lost_pending > 0 {
                if let Some(i) = self.next_lost() {
                    let s = &mut self.q[i];
                    s.retrans = true;
                    s.ever_retrans = true;
                    s.xmit = now;
                    let x = Xmit {
                        start: s.start,
                        len: s.len,
                        fin: s.fin,
                        psh: false,
                        retrans: true,
                        probe: false,
                        ect: false,
                        cwr: false,
                    };
                    self.retrans_list.push(s.start);
                    self.retrans_out += 1;
                    self.lost_pending -= 1;
                    if matches!(self.ca, CaState::Recovery | CaState::Cwr) {
                        self.prr_out += 1;
                    }
                    if x.len > 0 {
                        self.segments_sent += 1;
                        self.retransmitted += 1;
                    }
                    self.last_send = now;
                    out.push(x);
                    sent = true;
                    continue;
                }
                debug_assert!(false, "lost_pending without a lost segment");
                self.lost_pending = 0;
            }
            if !self.has_unsent() {
                break;
            }
            let mut len = (self.written - self.nxt).min(self.mss as u64) as u32;
            let room = (self.una + self.rwnd).saturating_sub(self.nxt);
            let small_out = self.snd_sml > self.una;
            if len as u64 > room {
                // Linux splits its (GSO-sized) buffer at the window's edge and sends the
                // short piece at once, unless another short segment is unacknowledged
                // (Minshall's Nagle): windows get filled exactly.
                if room == 0 || small_out {
                    break;
                }
                len = room as u32;
            }
            let closing = self.app_closed && self.nxt + len as u64 == self.written;
            if len < self.mss && small_out && self.packets_out > 0 && !closing {
                break; // Nagle
            }
            self.send_new(now, len, out);
            if len < self.mss {
                self.snd_sml = self.nxt;
            }
            sent = true;
        }
        let cwnd_full = self.in_flight() >= self.cwnd;
        if had_unsent && (sent || cwnd_full) {
            // tcp_cwnd_validate
            if self.una >= self.cwnd_usage_seq
                || cwnd_full
                || (!self.is_cwnd_limited && self.packets_out > self.max_packets_out)
            {
                self.is_cwnd_limited = cwnd_full;
                self.max_packets_out = self.packets_out;
                self.cwnd_usage_seq = self.nxt;
            }
        }
        // A FIN of its own when the data was all sent before the close.
        if self.app_closed && !self.fin_sent && self.nxt == self.written && self.in_flight() < self.cwnd {
            self.send_new(now, 0, out);
        }
    }
}
