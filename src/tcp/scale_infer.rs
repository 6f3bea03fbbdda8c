//! Inferring a receiver's window-scale shift from behaviour, for connections whose
//! handshake is not in the capture (and as a check on the handshake when it is).
//!
//! A sender never puts more in flight than the window it was granted (RFC 9293 §3.8.6),
//! so every shift k under which the sender's flight exceeds `raw << k` is impossible: the
//! true shift is at least the smallest k that is never violated. A window-limited sender
//! also stops exactly at the window's right edge again and again; when its flight keeps
//! landing within one segment of `raw << k` for that smallest k, k is not just a lower
//! bound but the shift itself (with k + 1 the edge would be twice as far, never reached).
//!
//! Instead of tcptrace's silent 0, Wireshark's "unknown" or Suricata's "assume 14", the
//! result carries a confidence.

/// RFC 7323 §2.3: shifts above 14 are treated as 14.
pub const MAX_SHIFT: usize = 14;
/// Data segments with a usable window before a verdict is attempted.
const MIN_EVENTS: u64 = 16;
/// Edge landings that make the shift certain, and the share of events they must be.
const EDGE_HITS_CERTAIN: u64 = 16;
const EDGE_SHARE: f64 = 0.05;
/// A window must hold this many segments for landing at its edge to mean anything.
const EDGE_MIN_SEGMENTS: u64 = 4;
/// Landings on each of two edges (more than a segment apart) that show the sender
/// followed the window as it moved, not a cap of its own that one edge happens to match.
const EDGE_MOVED_HITS: u64 = 4;
/// Violations allowed (reordering, a capture point that saw an ACK the sender missed).
const VIOLATION_SHARE: f64 = 0.01;
/// Share of violating segments that proves a known scale wrong. A sender never exceeds
/// the window it knows; what the capture point misattributes (reordering, an ACK paired
/// with the wrong data) stays around 0.1% of segments in the lab corpora, while a sender
/// obeying another scale exceeds the window on 3% to 99% of them.
/// The share is 1 in this many (1%), kept as an integer: the test runs on every segment
/// and `v > events / 100` is `v * 100 > events`, with no floating point.
const CONTRADICTION_ONE_IN: u64 = 100;

/// How sure an inference is (the vocabulary of every confidence in the output).
pub use crate::summary::Confidence;

/// The outcome of the inference for one advertiser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InferredShift {
    pub shift: u8,
    pub confidence: Confidence,
    /// Data segments that exceeded the window at shift - 1 (0 when shift is 0).
    pub violations_below: u64,
    /// Data segments whose flight ended within one segment of the edge at `shift`.
    pub edge_hits: u64,
    /// Whether the flight landed on two edges at `shift`, more than a segment apart, at
    /// least [`EDGE_MOVED_HITS`] times each: the sender followed the window as the raw
    /// value moved. Under one raw value, a sender whose own limit (send buffer, cwnd)
    /// equals `raw << shift` lands on that edge just the same, so one edge alone cannot
    /// outweigh a scale the handshake negotiated.
    pub edge_moved: bool,
    pub events: u64,
}

/// Evidence about the shift applied to ONE end's advertised windows, gathered from the
/// data the other end sent against them.
#[derive(Clone, Debug, Default)]
pub struct ScaleInference {
    events: u64,
    /// `violations[k]`: observations that exceeded the window under shift k. They fall as
    /// k grows (a window big enough under k is under k + 1).
    violations: [u64; MAX_SHIFT + 1],
    edge_hits: [u64; MAX_SHIFT + 1],
    /// Per shift: the first edge landed on, the landings on it, and the landings on edges
    /// more than a segment away from it (see [`InferredShift::edge_moved`]).
    edge_first: [u64; MAX_SHIFT + 1],
    edge_first_hits: [u64; MAX_SHIFT + 1],
    edge_other_hits: [u64; MAX_SHIFT + 1],
    /// Raw window values that were multiples of the segment size (Linux rounds the window
    /// to whole segments when it does not scale: tcp_select_window).
    mss_multiples: u64,
    nonzero_raw: u64,
    max_flight: u64,
    /// `result()` as of the last refresh: the tracker asks for the scale on every segment,
    /// and the evidence moves slowly.
    cached: Option<InferredShift>,
    /// Changes whenever `cached` or the set of contradicted shifts does: what the tracker's
    /// reading of the scale depends on.
    revision: u64,
    /// [`Self::contradicts`] held for the shifts below this one (and for no other: the
    /// violations fall as the shift grows) at the last violation.
    contradicted_below: usize,
    /// The last (raw window, segment size) tested for being a multiple, and the answer: a
    /// window stays the same for many segments, and the test is an integer division.
    last_multiple: Option<(u16, u32, bool)>,
}

/// How often (in observations) the cached result is refreshed once past the first ones.
const REFRESH_EVERY: u64 = 32;

impl ScaleInference {
    /// The sender had `flight` bytes outstanding against a window whose raw field was
    /// `raw`; `mss` is its segment size. `or_next` is the same against the next ACK, if
    /// the sender may have had that one: a shift counts as exceeded only when the window
    /// is exceeded under both.
    pub fn observe(&mut self, flight: u64, raw: u16, or_next: Option<(u64, u16)>, mss: u32) {
        if raw == 0 || flight == 0 {
            return;
        }
        self.events += 1;
        if self.events <= 2 * MIN_EVENTS || self.events.is_multiple_of(REFRESH_EVERY) {
            self.cached = self.result();
            self.revision += 1;
        }
        self.nonzero_raw += 1;
        self.max_flight = self.max_flight.max(flight);
        let multiple = match self.last_multiple {
            Some((r, m, answer)) if r == raw && m == mss => answer,
            _ => {
                let answer = mss > 0 && (raw as u32).is_multiple_of(mss);
                self.last_multiple = Some((raw, mss, answer));
                answer
            }
        };
        if multiple {
            self.mss_multiples += 1;
        }
        let slack = mss as u64;
        let first_ok = first_consistent_shift(flight, raw, slack);
        let certain_ok = match or_next {
            Some((f, r)) if r > 0 => first_ok.min(first_consistent_shift(f, r, slack)),
            Some(_) => 0,
            None => first_ok,
        };
        for v in &mut self.violations[..certain_ok] {
            *v += 1;
        }
        // A scaled flow exceeds its unscaled window on every segment: only a change in
        // which shifts stand contradicted is news to the tracker.
        if certain_ok > 0 {
            let mut m = self.contradicted_below;
            while m <= MAX_SHIFT && self.contradicts(m as u8) {
                m += 1;
            }
            while m > 0 && !self.contradicts(m as u8 - 1) {
                m -= 1;
            }
            if m != self.contradicted_below {
                self.contradicted_below = m;
                self.revision += 1;
            }
        }
        // The windows grow with the shift, so the edge (flight within a segment below it)
        // can only be at the first shifts not violated, and only while it stays that close.
        for k in first_ok..=MAX_SHIFT {
            let w = (raw as u64) << k;
            if flight + slack <= w {
                break;
            }
            // Only a window of several segments has an edge worth stopping at: below
            // that, any small flight (a request, a keep-alive) would land "at" it.
            if w >= EDGE_MIN_SEGMENTS * slack {
                self.edge_hits[k] += 1;
                if self.edge_first[k] == 0 {
                    self.edge_first[k] = w;
                }
                if self.edge_first[k].abs_diff(w) > slack {
                    self.edge_other_hits[k] += 1;
                } else {
                    self.edge_first_hits[k] += 1;
                }
            }
        }
    }

    pub fn events(&self) -> u64 {
        self.events
    }

    /// A number that changes whenever `cached()`, `settled()` or `contradicts()` may have
    /// changed (not on every observation: most leave them as they were).
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Data segments that exceeded the window under shift `k`.
    pub fn violations_at(&self, k: u8) -> u64 {
        self.violations[(k as usize).min(MAX_SHIFT)]
    }

    pub fn edge_hits_at(&self, k: u8) -> u64 {
        self.edge_hits[(k as usize).min(MAX_SHIFT)]
    }

    /// The smallest shift the sender never (or almost never) violated.
    pub fn min_consistent(&self) -> Option<u8> {
        if self.events < MIN_EVENTS {
            return None;
        }
        let allowed = (VIOLATION_SHARE * self.events as f64).ceil() as u64;
        // Violations at k fall as k grows: walk down from the largest shift.
        let mut found = None;
        for k in (0..=MAX_SHIFT).rev() {
            if self.violations[k] > allowed {
                break;
            }
            found = Some(k as u8);
        }
        found
    }

    /// The inferred shift with its confidence, once there is enough evidence.
    pub fn result(&self) -> Option<InferredShift> {
        let k = self.min_consistent()?;
        let ki = k as usize;
        let hits = self.edge_hits[ki];
        let below = if ki > 0 { self.violations_at(k - 1) } else { 0 };
        let edge = hits >= EDGE_HITS_CERTAIN && hits as f64 >= EDGE_SHARE * self.events as f64;
        let mss_rounded = self.nonzero_raw > 0 && self.mss_multiples * 10 >= self.nonzero_raw * 9;
        let confidence = if edge && (ki == 0 || below >= EDGE_HITS_CERTAIN) {
            // The sender exceeded the window one shift down and stopped at the edge at k.
            Confidence::Certain
        } else if edge || (ki == 0 && mss_rounded) {
            Confidence::Likely
        } else {
            Confidence::Possible
        };
        Some(InferredShift {
            shift: k,
            confidence,
            violations_below: below,
            edge_hits: hits,
            edge_moved: self.edge_first_hits[ki].min(self.edge_other_hits[ki]) >= EDGE_MOVED_HITS,
            events: self.events,
        })
    }

    /// Whether the sender clearly exceeded the windows under shift `k` (more than a few
    /// stray events): the scale the capture shows is not the one the sender obeyed.
    pub fn contradicts(&self, k: u8) -> bool {
        let v = self.violations_at(k);
        v >= MIN_EVENTS && v * CONTRADICTION_ONE_IN > self.events
    }

    /// The result as of the last refresh (at most `REFRESH_EVERY` observations old).
    pub fn cached(&self) -> Option<InferredShift> {
        self.cached
    }

    /// True once the shift is known well enough to scale windows with it (as of the last
    /// refresh).
    pub fn settled(&self) -> Option<u8> {
        self.cached
            .filter(|r| r.confidence != Confidence::Possible)
            .map(|r| r.shift)
    }
}

/// The smallest shift k (0..=MAX_SHIFT) under which `flight` does not exceed the window
/// `raw << k` by more than `slack`, or MAX_SHIFT + 1 when every shift is exceeded.
/// `raw` is not zero.
#[inline]
pub(crate) fn first_consistent_shift(flight: u64, raw: u16, slack: u64) -> usize {
    let Some(need) = flight.checked_sub(slack).filter(|&n| n > 0) else {
        return 0;
    };
    let raw = raw as u64;
    // raw << k has the same highest bit as `need` at this k, so it or the next one is the
    // first at least `need`.
    let mut k = (raw.leading_zeros() as usize).saturating_sub(need.leading_zeros() as usize);
    if k > MAX_SHIFT {
        return MAX_SHIFT + 1;
    }
    if raw << k < need {
        k += 1;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_consistent_shift_is_the_first_window_holding_the_flight() {
        let naive = |flight: u64, raw: u16, slack: u64| {
            (0..=MAX_SHIFT)
                .find(|&k| flight <= ((raw as u64) << k) + slack)
                .unwrap_or(MAX_SHIFT + 1)
        };
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..200_000 {
            // xorshift: flights from 0 to past 2^30, raw windows 1..=65535, slack 0..9000.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let flight = (x >> 20) >> (x % 34);
            let raw = ((x >> 8) as u16).max(1) >> (x % 16);
            let raw = raw.max(1);
            let slack = (x >> 40) % 9000;
            assert_eq!(
                first_consistent_shift(flight, raw, slack),
                naive(flight, raw, slack),
                "flight {flight} raw {raw} slack {slack}"
            );
        }
        assert_eq!(first_consistent_shift(1 << 40, 1, 0), MAX_SHIFT + 1);
        assert_eq!(first_consistent_shift(65535 << 14, 65535, 0), 14);
        assert_eq!(first_consistent_shift((65535 << 14) + 1, 65535, 0), MAX_SHIFT + 1);
    }

    #[test]
    fn the_integer_contradiction_share_is_the_one_percent_it_replaced() {
        // The test used to read `v as f64 > 0.01 * events as f64`.
        for events in (0..5_000u64).chain([99_999, 100_000, 100_001, 1 << 40, (1 << 40) + 37]) {
            for v in [
                0,
                1,
                events / 100,
                events / 100 + 1,
                events / 100 + 2,
                events.saturating_sub(1),
                events,
            ] {
                let s = ScaleInference {
                    events,
                    violations: [v; MAX_SHIFT + 1],
                    ..Default::default()
                };
                let was = v >= MIN_EVENTS && v as f64 > 0.01 * events as f64;
                assert_eq!(s.contradicts(3), was, "v {v} events {events}");
            }
        }
    }

    #[test]
    fn the_remembered_multiple_test_counts_as_the_division() {
        let mut s = ScaleInference::default();
        let mut plain = 0;
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for i in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // runs of one window, and windows that are multiples of one of two sizes
            let mss = if i % 1000 < 500 { 1448 } else { 536 };
            let raw = if x.is_multiple_of(4) {
                (mss * (1 + (x >> 8) % 40)) as u16
            } else {
                1 + (x >> 8) as u16 % 60_000
            };
            for _ in 0..(1 + (x >> 40) % 5) {
                s.observe(1 + (x >> 20) % 100_000, raw, None, mss as u32);
                plain += (raw as u64).is_multiple_of(mss) as u64;
            }
        }
        assert_eq!(s.mss_multiples, plain);
    }

    #[test]
    fn a_window_limited_sender_reveals_the_shift() {
        // Receiver scales by 2: raw 40_760 is a 163_040-byte window, which the sender fills.
        let mut s = ScaleInference::default();
        for i in 0..200u64 {
            s.observe(163_040 - (i % 2) * 1448, 40_760, None, 1448);
        }
        let r = s.result().unwrap();
        assert_eq!(r.shift, 2);
        assert_eq!(r.confidence, Confidence::Certain);
        assert_eq!(s.settled(), Some(2));
    }

    #[test]
    fn one_edge_is_a_cap_as_much_as_a_scale_and_a_moving_edge_is_the_scale() {
        // zeek http_no_crlf: raw 1024 throughout, flights stopping at 32 KiB = 1024 << 5.
        // A send buffer of 32 KiB does the same: the edge is certain but never moved.
        let mut one = ScaleInference::default();
        for i in 0..200u64 {
            one.observe(32_768 - (i % 3) * 460, 1024, None, 1380);
        }
        let r = one.result().unwrap();
        assert_eq!((r.shift, r.confidence), (5, Confidence::Certain));
        assert!(!r.edge_moved);
        // The raw window moves (1024, then 1536) and the flight follows it at shift 5.
        let mut moving = ScaleInference::default();
        for i in 0..200u64 {
            let raw = if i < 100 { 1024 } else { 1536 };
            moving.observe(((raw as u64) << 5) - (i % 3) * 460, raw, None, 1380);
        }
        let r = moving.result().unwrap();
        assert_eq!((r.shift, r.confidence), (5, Confidence::Certain));
        assert!(r.edge_moved);
        // A raw value that wobbles by less than a segment at that shift is still one edge.
        let mut wobble = ScaleInference::default();
        for i in 0..200u64 {
            let raw = 1024 + (i % 2) as u16 * 20; // 640 bytes apart at shift 5
            wobble.observe(((raw as u64) << 5) - (i % 3) * 460, raw, None, 1380);
        }
        assert!(!wobble.result().unwrap().edge_moved);
    }

    #[test]
    fn an_excess_the_next_ack_explains_is_no_violation() {
        // Next to the sender the loop is microseconds and a data segment is sometimes paired
        // with the ACK before the one it answered: 2 segments over an unscaled window that
        // the next ACK (already at the capture point) covers. The shift stays 0 and certain.
        let mut s = ScaleInference::default();
        for i in 0..64u64 {
            if i % 20 == 5 {
                s.observe(41_992, 39_096, Some((39_096, 39_096)), 1448);
            } else {
                s.observe(39_096 - (i % 2) * 1448, 39_096, None, 1448);
            }
        }
        let r = s.result().unwrap();
        assert_eq!((r.shift, r.confidence), (0, Confidence::Certain));
        assert_eq!(s.violations_at(0), 0);
        // Without the next ACK's say, those segments are violations and k = 0 is no longer
        // the smallest consistent shift.
        let mut t = ScaleInference::default();
        for i in 0..64u64 {
            let f = if i % 20 == 5 { 41_992 } else { 39_096 - (i % 2) * 1448 };
            t.observe(f, 39_096, None, 1448);
        }
        assert_eq!(t.violations_at(0), 3);
        assert_ne!(t.result().unwrap().shift, 0);
    }

    #[test]
    fn a_sender_far_below_the_window_gives_only_a_lower_bound() {
        // Scale 7, raw 2000 = 256 000 bytes, flight 100 000: k >= 6 is all we know.
        let mut s = ScaleInference::default();
        for _ in 0..100 {
            s.observe(100_000, 2000, None, 1448);
        }
        let r = s.result().unwrap();
        assert_eq!(r.shift, 6);
        assert_eq!(r.confidence, Confidence::Possible);
        assert_eq!(s.settled(), None);
    }

    #[test]
    fn unscaled_windows_rounded_to_the_mss_are_likely_unscaled() {
        let mut s = ScaleInference::default();
        for _ in 0..100 {
            s.observe(20_000, 43_440, None, 1448); // 30 segments
        }
        let r = s.result().unwrap();
        assert_eq!(r.shift, 0);
        assert_eq!(r.confidence, Confidence::Likely);
    }

    #[test]
    fn small_messages_under_a_tiny_raw_window_prove_nothing() {
        // Shift 7, raw 512 (64 KiB): requests of a few hundred bytes never reach it.
        let mut s = ScaleInference::default();
        for i in 0..200 {
            s.observe(200 + (i % 5) * 50, 512, None, 1448);
        }
        assert_ne!(s.result().map(|r| r.confidence), Some(Confidence::Certain));
        assert_eq!(s.settled(), None);
    }

    #[test]
    fn too_little_evidence_gives_nothing() {
        let mut s = ScaleInference::default();
        s.observe(1000, 100, None, 1448);
        assert_eq!(s.result(), None);
    }

    #[test]
    fn the_revision_moves_when_a_contradiction_does_and_not_per_violation() {
        let mut s = ScaleInference::default();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut last = (s.revision(), s.cached());
        for i in 0..5_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Mostly a sender obeying shift 7, now and then one beyond shift 9.
            let raw = 200 + (x % 300) as u16;
            let flight = if i % 50 < 3 {
                (raw as u64) << 10
            } else {
                ((raw as u64) << 7) - 1448
            };
            s.observe(flight, raw, None, 1448);
            let m = (0..=MAX_SHIFT as u8).take_while(|&k| s.contradicts(k)).count();
            assert!((m..=MAX_SHIFT).all(|k| !s.contradicts(k as u8)), "observation {i}");
            if s.violations[0] > 0 {
                assert_eq!(m, s.contradicted_below, "observation {i}");
            }
            if s.revision() == last.0 {
                assert_eq!(s.cached(), last.1, "observation {i}: the reading changed silently");
            }
            last = (s.revision(), s.cached());
        }
        // Every observation exceeds the unscaled window, yet the revision moved far less.
        assert!(s.revision() < 600, "{}", s.revision());
    }
}
