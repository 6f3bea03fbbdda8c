//! The data receiver: reassembly with SACK blocks, Linux's receive-window selection
//! (`__tcp_select_window`, `tcp_select_window`, `tcp_grow_window`) or RFC 1122's
//! silly-window avoidance, delayed and quick ACKs as the stack does them, the RFC 7323
//! timestamp echo, and the reading application.

use super::{Reader, ReceiverModel, Stack};

const MS: i64 = 1_000_000;
const QUICKACK_MAX: u64 = 16;
/// Data after a silence this long restarts quick ACKs (Linux: longer than the RTO).
const QUICKACK_IDLE: i64 = 200 * MS;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum AckNow {
    Now,
    Delay,
    No,
}

fn align_up(v: u64, a: u64) -> u64 {
    v.div_ceil(a) * a
}

pub(super) struct Receiver {
    /// Window space of the buffer (bytes), capped at what 16 bits can say at `wscale`.
    pub space: u64,
    /// Memory limit: data beyond it is dropped.
    mem: u64,
    /// Shift applied to the windows this end advertises (0 when scaling is off).
    pub wscale: u8,
    rcv_ssthresh: u64,
    /// Next expected offset, FIN included once received.
    pub rcv_nxt: u64,
    /// End of the in-order data.
    pub data_end: u64,
    /// The application has read [0, read).
    pub read: u64,
    ooo: Vec<(u64, u64)>,
    /// SACK blocks, most recent first.
    recent: Vec<(u64, u64)>,
    pub rcv_wnd: u64,
    pub rcv_wup: u64,
    pub ts_recent: u32,
    quick: u64,
    /// Data arrived that no ACK has covered yet.
    pub pending: bool,
    pushed: bool,
    last_data: Option<i64>,
    mss: u64,
    fin_off: Option<u64>,
    pub fin_received: bool,
    reader: Reader,
    model: ReceiverModel,
    ack_every: u32,
    quickack: bool,
    ack_pushed: bool,
    /// Data segments received since the last ACK (RFC 1122's count).
    segs_unacked: u32,
    /// Token bucket of a rate-limited reader, in milli-bytes, and when it last filled.
    tokens: u128,
    tokens_at: i64,
    /// A rate-limited reader out of tokens sleeps a tick (not woken by data).
    pub sleep_until: Option<i64>,
    pub zero_windows: u64,
    pub dropped: u64,
    /// Reports duplicates (D-SACK, RFC 2883), and the duplicate the next ACK reports.
    dsack: bool,
    duplicate: Option<(u64, u64)>,
}

impl Receiver {
    /// `space`: window space; `init_wnd`: the window of this end's SYN; `ts_recent`: the
    /// peer's SYN TSval.
    pub fn new(space: u64, wscale: u8, init_wnd: u64, mss: u32, reader: Reader, ts_recent: u32, stack: &Stack) -> Self {
        let space_eff = space.min(65535u64 << wscale);
        Receiver {
            space: space_eff,
            mem: 2 * space.max(space_eff),
            wscale,
            // An RFC 1122 receiver offers its whole free space from the start.
            rcv_ssthresh: match stack.receiver {
                ReceiverModel::Linux => init_wnd.min(space_eff),
                ReceiverModel::Rfc1122 => space_eff,
            },
            rcv_nxt: 0,
            data_end: 0,
            read: 0,
            ooo: Vec::new(),
            recent: Vec::new(),
            rcv_wnd: init_wnd,
            rcv_wup: 0,
            ts_recent,
            quick: 0,
            pending: false,
            pushed: false,
            last_data: None,
            mss: mss.max(1) as u64,
            fin_off: None,
            fin_received: false,
            reader,
            model: stack.receiver,
            ack_every: stack.ack_every.max(1),
            quickack: stack.quickack,
            ack_pushed: stack.ack_pushed,
            segs_unacked: 0,
            tokens: 0,
            tokens_at: 0,
            sleep_until: None,
            zero_windows: 0,
            dropped: 0,
            dsack: stack.dsack,
            duplicate: None,
        }
    }

    fn ooo_bytes(&self) -> u64 {
        self.ooo.iter().map(|(l, r)| r - l).sum()
    }

    fn buffered(&self) -> u64 {
        self.data_end - self.read + self.ooo_bytes()
    }

    /// What is left of the window last advertised (`tcp_receive_window`).
    fn receive_window(&self) -> u64 {
        (self.rcv_wup + self.rcv_wnd).saturating_sub(self.rcv_nxt)
    }

    /// The window free space allows now, in bytes, as the stack chooses it.
    fn new_window(&self) -> u64 {
        match self.model {
            ReceiverModel::Linux => self.linux_window(),
            ReceiverModel::Rfc1122 => self.rfc1122_window(),
        }
    }

    /// RFC 1122 §4.2.3.3: the right edge moves to the free space only when that gains
    /// at least min(buffer / 2, one segment) over what is left of the window; the
    /// window is the free space rounded down to what the scale can say.
    fn rfc1122_window(&self) -> u64 {
        let free = self.space.saturating_sub(self.buffered()) >> self.wscale << self.wscale;
        let cur = self.receive_window();
        let step = (self.space / 2).min(self.mss).max(1);
        if free >= cur + step {
            free
        } else {
            cur
        }
    }

    /// Linux `__tcp_select_window`.
    fn linux_window(&self) -> u64 {
        let full = self.space;
        let mss = self.mss.min(full).max(1);
        let ws = self.wscale as u32;
        let mut free = full.saturating_sub(self.buffered());
        if free < full / 2 {
            free = free >> ws << ws;
            if free < full / 16 || free < mss {
                return 0;
            }
        }
        free = free.min(self.rcv_ssthresh);
        if ws > 0 {
            align_up(free, 1 << ws)
        } else {
            let w = self.rcv_wnd;
            if w + mss <= free || w > free {
                free / mss * mss
            } else if mss == full && free > w + full / 2 {
                free
            } else {
                w
            }
        }
    }

    /// Linux `tcp_select_window` for an ACK being sent now: never moves the right edge
    /// left. Returns the 16-bit field.
    pub fn select_window(&mut self) -> u16 {
        let ws = self.wscale as u32;
        let cur = self.receive_window();
        let mut new = self.new_window();
        if new < cur {
            new = align_up(cur, 1 << ws);
        }
        self.rcv_wnd = new;
        self.rcv_wup = self.rcv_nxt;
        let raw = (new.min(65535u64 << ws) >> ws) as u16;
        if raw == 0 {
            self.zero_windows += 1;
        }
        self.pending = false;
        self.pushed = false;
        self.segs_unacked = 0;
        self.quick = self.quick.saturating_sub(1);
        raw
    }

    /// `tcp_grow_window`: the window offered grows by two segments per segment received
    /// until it reaches the buffer's space.
    fn grow(&mut self) {
        let free = self.space.saturating_sub(self.buffered());
        if self.rcv_ssthresh < self.space && free > self.rcv_ssthresh {
            self.rcv_ssthresh = (self.rcv_ssthresh + 2 * self.mss).min(self.space);
        }
    }

    fn add_ooo(&mut self, l: u64, r: u64) {
        let i = self.ooo.partition_point(|&(_, e)| e < l);
        let (mut nl, mut nr) = (l, r);
        let mut j = i;
        while j < self.ooo.len() && self.ooo[j].0 <= r {
            nl = nl.min(self.ooo[j].0);
            nr = nr.max(self.ooo[j].1);
            j += 1;
        }
        self.ooo.splice(i..j, [(nl, nr)]);
        // SACK blocks: the block holding the newest segment goes first (RFC 2018).
        self.recent.retain(|&(a, b)| b < nl || a > nr);
        self.recent.insert(0, (nl, nr));
        self.recent.truncate(4);
    }

    /// The connection is up at `now`: a rate-limited reader starts with an empty bucket,
    /// so it sleeps its first tick.
    pub fn start_reader(&mut self, now: i64) {
        if let Reader::Rate { tick, .. } = self.reader {
            self.tokens_at = now;
            self.sleep_until = Some(now + (tick.as_nanos() as i64).max(MS));
        }
    }

    /// The reading application takes what it may: everything (fast reader), or what its
    /// tokens allow when it is not asleep; when they run out it sleeps a tick.
    fn app_read(&mut self, now: i64) -> u64 {
        let avail = self.data_end - self.read;
        match self.reader {
            Reader::Fast => {
                self.read += avail;
                avail
            }
            Reader::Rate { bps, tick } => {
                if self.sleep_until.is_some_and(|t| now < t) {
                    return 0;
                }
                self.sleep_until = None;
                let tick = (tick.as_nanos() as i64).max(MS);
                // milli-bytes: bits/s * ns / 8e6
                let cap = bps as u128 * tick as u128 / 8_000_000;
                let dt = (now - self.tokens_at).max(0) as u128;
                self.tokens = (self.tokens + bps as u128 * dt / 8_000_000).min(cap);
                self.tokens_at = now;
                let n = avail.min((self.tokens / 1000) as u64);
                self.read += n;
                self.tokens -= n as u128 * 1000;
                if self.tokens < 1000 {
                    self.sleep_until = Some(now + tick);
                }
                n
            }
        }
    }

    /// A data-direction segment arrived. Returns when to acknowledge it.
    pub fn on_segment(&mut self, now: i64, start: u64, len: u32, fin: bool, tsval: Option<u32>, probe: bool) -> AckNow {
        if probe {
            return AckNow::Now;
        }
        if len == 0 && !fin {
            return AckNow::No;
        }
        let end = start + len as u64;
        // Acceptability (tcp_sequence) and memory.
        let wnd = self.receive_window();
        let in_order = start <= self.data_end;
        if (in_order && wnd == 0 && len > 0 && end > self.data_end)
            || (!in_order && start >= self.rcv_nxt + wnd)
            || (end > self.data_end && self.buffered() + len as u64 > self.mem)
        {
            self.dropped += 1;
            return AckNow::Now;
        }
        if let Some(v) = tsval {
            if start <= self.rcv_wup {
                self.ts_recent = v;
            }
        }
        if fin {
            self.fin_off = Some(end);
        }
        // Data below what was received in order arrived twice: the ACK it triggers reports
        // it (RFC 2883 §4.1.1; Linux `tcp_data_queue` -> `tcp_dsack_set` for the part
        // below `rcv_nxt`, the rest queued as new).
        if self.dsack && len > 0 && start < self.data_end {
            self.duplicate = Some((start, end.min(self.data_end)));
        }
        if end <= self.data_end && (self.fin_received || !fin) {
            return AckNow::Now; // duplicate
        }
        if self.quickack && self.last_data.is_none_or(|t| now - t > QUICKACK_IDLE) {
            self.quick = (self.rcv_wnd / (2 * self.mss)).clamp(2, QUICKACK_MAX);
        }
        self.last_data = Some(now);
        if len > 0 && (len as u64) < self.mss {
            self.pushed = true;
        }
        self.pending = true;
        self.segs_unacked += 1;
        if !in_order {
            self.add_ooo(start, end);
            self.grow();
            return AckNow::Now;
        }
        let had_ooo = !self.ooo.is_empty();
        self.data_end = self.data_end.max(end);
        while let Some(&(l, r)) = self.ooo.first() {
            if l > self.data_end {
                break;
            }
            self.data_end = self.data_end.max(r);
            self.ooo.remove(0);
        }
        let de = self.data_end;
        self.recent.retain(|&(l, _)| l > de);
        self.rcv_nxt = self.data_end;
        if let Some(f) = self.fin_off {
            if self.data_end >= f {
                self.fin_received = true;
                self.rcv_nxt = f + 1;
            }
        }
        self.grow();
        self.app_read(now);
        if self.fin_received || had_ooo || self.quick > 0 {
            return AckNow::Now;
        }
        let all_read = self.read == self.data_end;
        let due = match self.model {
            // __tcp_ack_snd_check: more than one full segment unacknowledged (for
            // ack_every 2), and either the application has read everything or the
            // window would not shrink.
            ReceiverModel::Linux => {
                self.rcv_nxt - self.rcv_wup > (self.ack_every as u64 - 1) * self.mss
                    && (all_read || self.new_window() >= self.rcv_wnd)
            }
            // RFC 1122 §4.2.3.2: every `ack_every`-th segment.
            ReceiverModel::Rfc1122 => self.segs_unacked >= self.ack_every,
        };
        if due {
            return AckNow::Now;
        }
        // A short segment at once when the application has taken everything
        // (Linux's tcp_cleanup_rbuf).
        if self.ack_pushed && self.pushed && all_read {
            return AckNow::Now;
        }
        AckNow::Delay
    }

    /// A rate-limited reader wakes up and reads. Returns whether the read makes an ACK
    /// due (Linux `tcp_cleanup_rbuf`: a window update that at least doubles the window,
    /// or a short segment now fully read; BSD: the window opened by two segments).
    pub fn reader_wake(&mut self, now: i64) -> bool {
        let copied = self.app_read(now);
        if copied == 0 {
            return false;
        }
        if self.ack_pushed && self.pending && self.pushed && self.read == self.data_end && self.ooo.is_empty() {
            return true;
        }
        let cur = self.receive_window();
        match self.model {
            ReceiverModel::Linux => {
                if 2 * cur <= self.space {
                    let new = self.new_window();
                    if new != 0 && new >= 2 * cur {
                        return true;
                    }
                }
                false
            }
            // BSD's tcp_output after a read: a window update once the window opens by
            // two segments or half the buffer.
            ReceiverModel::Rfc1122 => self.new_window() >= cur + (2 * self.mss).min(self.space / 2),
        }
    }

    /// Up to `n` SACK blocks, most recent first, after the duplicate received since the
    /// last ACK when there is one (the D-SACK block first, RFC 2883 §4; reported once).
    pub fn sack_blocks(&mut self, n: usize) -> Vec<(u64, u64)> {
        let dup = self.duplicate.take().filter(|_| n > 0);
        let rest = n - dup.is_some() as usize;
        dup.into_iter().chain(self.recent.iter().take(rest).copied()).collect()
    }

    /// The application has read everything up to the peer's FIN.
    pub fn at_eof(&self) -> bool {
        self.fin_received && self.read == self.data_end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A segment received twice comes back in the first SACK block of the next ACK, once
    /// (RFC 2883 §4.1.1), from a receiver that reports duplicates, and from no other; the
    /// part of a segment below what was received in order is the duplicate.
    #[test]
    fn a_duplicate_is_reported_once_in_the_first_sack_block() {
        for stack in [Stack::linux(), Stack::windows()] {
            let mut r = Receiver::new(65_535, 0, 65_535, 1000, Reader::Fast, 0, &stack);
            r.on_segment(0, 0, 1000, false, None, false);
            r.on_segment(1, 2000, 1000, false, None, false);
            assert_eq!(r.sack_blocks(4), vec![(2000, 3000)]);
            // The first segment again.
            r.on_segment(2, 0, 1000, false, None, false);
            let want = if stack.dsack {
                vec![(0, 1000), (2000, 3000)]
            } else {
                vec![(2000, 3000)]
            };
            assert_eq!(r.sack_blocks(4), want, "{}", stack.name);
            assert_eq!(r.sack_blocks(4), vec![(2000, 3000)], "{}", stack.name);
            // Overlapping: 500 B again, 500 new (the hole's first half).
            r.on_segment(3, 500, 1000, false, None, false);
            let want = if stack.dsack { vec![(500, 1000)] } else { vec![] };
            assert_eq!(r.sack_blocks(4)[..want.len()], want[..], "{}", stack.name);
        }
        assert!(Stack::linux().dsack && !Stack::windows().dsack);
    }
}
