//! Behavioural evidence gathered per segment while a flow is live, in constant memory:
//! per end, its SYN window and first window advertisements, whether it echoes timestamps
//! and sends SACK blocks, its most frequent segment sizes, and how its data relates to
//! the peer's windows read unscaled.

use crate::flow::Dir;
use crate::tcp::{first_consistent_shift, Connection, SegmentEvent, WindowScale};

/// Window advertisements kept per end after its SYN: the first ones carry the initial
/// receive window, before the application or autotuning moved it.
pub const FIRST_ADVERTS: usize = 8;
/// Counters of the frequent-sizes summary.
const SIZE_SLOTS: usize = 8;

/// One window advertisement: the ACK it came with (relative to the peer's ISN) and the
/// raw 16-bit field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Advert {
    pub ack: u32,
    pub raw: u16,
}

/// The most frequent payload sizes (Misra–Gries summary: a size sent more than
/// 1/(SIZE_SLOTS+1) of the time is always kept; counts are lower bounds).
#[derive(Clone, Debug, Default)]
pub struct SizeCounts {
    slots: [(u32, u64); SIZE_SLOTS],
    pub total: u64,
    pub max: u32,
    /// The slot the last size went to: a bulk sender sends one size over and over, and a
    /// size has at most one slot with a count, so this is the slot the search would find.
    last: usize,
}

impl SizeCounts {
    pub fn add(&mut self, size: u32) {
        self.total += 1;
        self.max = self.max.max(size);
        let last = &mut self.slots[self.last];
        if last.1 > 0 && last.0 == size {
            last.1 += 1;
        } else if let Some(i) = self.slots.iter().position(|s| s.1 > 0 && s.0 == size) {
            self.slots[i].1 += 1;
            self.last = i;
        } else if let Some(i) = self.slots.iter().position(|s| s.1 == 0) {
            self.slots[i] = (size, 1);
            self.last = i;
        } else {
            for s in &mut self.slots {
                s.1 -= 1;
            }
        }
    }

    /// The most frequent size and its (lower-bound) count.
    pub fn mode(&self) -> Option<(u32, u64)> {
        self.slots
            .iter()
            .filter(|s| s.1 > 0)
            .max_by_key(|s| (s.1, s.0))
            .copied()
    }
}

/// Shifts a sender could be applying to the peer's windows (RFC 7323 §2.3: at most 14).
pub const SHIFTS: usize = 15;

/// One end's data judged against the peer's windows read with each shift below the one
/// the handshake negotiated: does the sender stop at `raw << j` for some smaller j?
#[derive(Clone, Debug, Default)]
pub struct ShiftReading {
    /// Data segments with a reconstructed sender view and a non-zero raw window.
    pub events: u64,
    /// `over_below[n]`: segments whose flight exceeded `raw << j` by more than a segment
    /// for every j below n and for none from n up (the windows grow with j): one count per
    /// segment instead of one per shift. [`ShiftReading::over`] sums them.
    over_below: [u64; SHIFTS + 1],
    /// Flight within a segment below `raw << j`: the sender stopped at it.
    pub hits: [u64; SHIFTS],
    /// The smallest and largest raw values at those stops.
    pub hit_raw_min: [u16; SHIFTS],
    pub hit_raw_max: [u16; SHIFTS],
}

impl ShiftReading {
    fn observe(&mut self, flight: u64, raw: u16, mss: u64, below: u8) {
        self.events += 1;
        let below = (below as usize).min(SHIFTS);
        let first_held = first_consistent_shift(flight, raw, mss).min(below);
        self.over_below[first_held] += 1;
        for j in first_held..below {
            let w = (raw as u64) << j;
            if flight + mss < w {
                break;
            }
            if self.hits[j] == 0 {
                self.hit_raw_min[j] = raw;
            }
            self.hits[j] += 1;
            self.hit_raw_min[j] = self.hit_raw_min[j].min(raw);
            self.hit_raw_max[j] = self.hit_raw_max[j].max(raw);
        }
    }

    /// Segments whose flight exceeded `raw << j` by more than a segment.
    pub fn over(&self, j: usize) -> u64 {
        self.over_below[(j + 1).min(SHIFTS)..].iter().sum()
    }
}

#[derive(Clone, Debug, Default)]
pub struct EndEvidence {
    /// Window field of this end's (last) SYN or SYN/ACK; never scaled (RFC 7323 §2.2).
    pub syn_window: Option<u16>,
    /// This end's first window advertisements after its SYN or SYN/ACK.
    pub adverts: [Advert; FIRST_ADVERTS],
    pub n_adverts: usize,
    /// Segments after the handshake (not SYN, not RST).
    pub segments: u64,
    /// Of these, segments whose TSecr echoed a TSval of the peer for the first time:
    /// this end uses timestamps.
    pub ts_echoes: u64,
    /// Of these, segments that carried the timestamps option with an ACK at all: an end
    /// that did not negotiate timestamps sends none (RFC 7323 §3.2).
    pub ts_segments: u64,
    /// Segments sent while the peer's data had SACKed bytes on the scoreboard: this end
    /// sends SACK blocks.
    pub sacking: u64,
    pub dup_acks: u64,
    /// Duplicate ACKs after which nothing of the peer's data was SACKed.
    pub dup_acks_without_sack: u64,
    /// Payload sizes of this end's data segments.
    pub sizes: SizeCounts,
    /// This end's data against the peer's windows read with smaller shifts.
    pub shifts: ShiftReading,
    /// Largest flight of this end's data (as the sender saw it) and the raw window then.
    pub max_flight: u64,
    pub raw_at_max_flight: u16,
}

impl EndEvidence {
    pub fn adverts(&self) -> &[Advert] {
        &self.adverts[..self.n_adverts]
    }
}

/// Behavioural evidence of both ends of one flow.
#[derive(Clone, Debug, Default)]
pub struct Evidence {
    /// Indexed by the direction the end sends in: [0] client, [1] server.
    pub ends: [EndEvidence; 2],
    /// Per data direction: the capture lacks the receiver's acknowledgments of it for a
    /// while (`stall::StallTracker::acks_lacking`, set before the rules run). Data sent
    /// less the ACKs seen is no flight then, and a rule that reads flights against windows
    /// has nothing to read.
    pub acks_lacking: [bool; 2],
}

impl Evidence {
    /// The end that sends in direction `d`.
    pub fn end(&self, d: Dir) -> &EndEvidence {
        &self.ends[d.index()]
    }

    pub fn on_segment(&mut self, conn: &Connection, ev: &SegmentEvent) {
        if ev.flags.rst() {
            return;
        }
        let d = ev.dir;
        let e = &mut self.ends[d.index()];
        if ev.flags.syn() {
            e.syn_window = Some(ev.win_raw);
            e.n_adverts = 0;
            return;
        }
        e.segments += 1;
        if ev.echoed_peer_tsval {
            e.ts_echoes += 1;
        }
        if ev.echo.is_some() {
            e.ts_segments += 1;
        }
        if let (true, Some(ack), Some(_)) = (ev.flags.ack(), ev.ack, e.syn_window) {
            if e.n_adverts < FIRST_ADVERTS {
                e.adverts[e.n_adverts] = Advert { ack, raw: ev.win_raw };
                e.n_adverts += 1;
            }
        }
        // This segment acknowledges the other direction's data: SACK blocks it carried
        // are on that direction's scoreboard now.
        let sacking = conn.dir(d.reverse()).sacks.has_sacks();
        if sacking {
            e.sacking += 1;
        }
        // A record the capture holds twice (two interfaces, a mirror port) never gets
        // here: the front sets capture duplicates aside (`flow::duplicate`).
        if ev.acked.duplicate {
            e.dup_acks += 1;
            if !sacking {
                e.dup_acks_without_sack += 1;
            }
        }
        if ev.len > 0 {
            e.sizes.add(ev.len);
        }
        if let Some(v) = ev.sender_view {
            if v.loop_flight > e.max_flight {
                e.max_flight = v.loop_flight;
                e.raw_at_max_flight = v.window_raw;
            }
            if let (WindowScale::Shift(s), true) = (conn.negotiated_scale(d.reverse()), v.window_raw > 0) {
                if s > 0 {
                    e.shifts.observe(v.loop_flight, v.window_raw, conn.mss(d) as u64, s);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frequent_size_survives_a_spread_of_others() {
        let mut s = SizeCounts::default();
        for i in 0..1000u32 {
            s.add(1448);
            s.add(100 + i % 50);
        }
        assert_eq!(s.mode().unwrap().0, 1448);
        assert_eq!(s.max, 1448);
        assert_eq!(s.total, 2000);
    }

    #[test]
    fn the_last_slot_shortcut_counts_as_the_plain_search() {
        let plain = |sizes: &[u32]| {
            let mut slots = [(0u32, 0u64); SIZE_SLOTS];
            for &size in sizes {
                if let Some(s) = slots.iter_mut().find(|s| s.1 > 0 && s.0 == size) {
                    s.1 += 1;
                } else if let Some(s) = slots.iter_mut().find(|s| s.1 == 0) {
                    *s = (size, 1);
                } else {
                    for s in &mut slots {
                        s.1 -= 1;
                    }
                }
            }
            slots
        };
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for round in 0..200 {
            let mut sizes = Vec::new();
            for _ in 0..500 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // runs of one size, and spreads of up to 3 + round % 20 sizes
                let run = if x.is_multiple_of(3) { 1 + (x >> 8) % 20 } else { 1 };
                let size = 1 + ((x >> 16) % (3 + round % 20)) as u32;
                sizes.extend(std::iter::repeat_n(size, run as usize));
            }
            let mut c = SizeCounts::default();
            for &s in &sizes {
                c.add(s);
            }
            assert_eq!(c.slots, plain(&sizes), "round {round}");
        }
    }

    #[test]
    fn the_shift_reading_counts_as_the_loop_over_every_shift_did() {
        let mut fast = ShiftReading::default();
        let (mut over, mut hits) = ([0u64; SHIFTS], [0u64; SHIFTS]);
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let raw = 1 + (x % 5_000) as u16;
            let flight = (x >> 16) % (1 << ((x >> 40) % 28));
            let mss = 536 + (x >> 50) % 1000;
            let below = ((x >> 56) % 16) as u8;
            fast.observe(flight, raw, mss, below);
            for j in 0..(below as usize).min(SHIFTS) {
                let w = (raw as u64) << j;
                if flight > w + mss {
                    over[j] += 1;
                } else if flight + mss >= w {
                    hits[j] += 1;
                }
            }
        }
        assert_eq!((0..SHIFTS).map(|j| fast.over(j)).collect::<Vec<_>>(), over.to_vec());
        assert_eq!(fast.hits, hits);
    }
}
