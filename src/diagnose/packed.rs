//! A live flow's timeline in little memory: the last few bins in full, where a segment's
//! bookkeeping writes (the current bin, the one its last data fell in), and every older bin
//! packed into bytes — a mask of the fields that are not zero (or not None), then each of
//! them as a LEB128 varint (zigzag for the signed RTT fields). Lossless: a bin unpacks to
//! exactly what was packed, so the diagnosis reads the same timeline, bin for bin.
//!
//! Why: a tracked connection of a many-flow capture held two timelines of 512 bins of 128
//! bytes (~128 KB, nine tenths of its memory), most of them holding one duration (a flow
//! that sends a burst every few seconds is idle in nearly every bin). Packed, an idle bin
//! takes 5 bytes and a busy one of a bulk transfer ~30.
//!
//! A write to a packed bin (an interval accounted far back: a long burst, a timestamp that
//! went backwards) brings it and every later bin back in full, from the nearest mark (the
//! offset of every [`MARK`]-th bin is kept); they are packed again as the timeline grows.

use super::timeline::{Bin, BinStore, Timeline};

/// Bins kept in full at the end of the timeline.
const HOT: usize = 4;
/// The offset of every `MARK`-th packed bin is kept.
const MARK: usize = 64;

/// The timeline a live flow's accumulator keeps.
pub type LiveTimeline = Timeline<PackedBins>;

#[derive(Clone, Debug, Default)]
pub struct PackedBins {
    /// Bins `[0, packed)`, packed one after another.
    bytes: Vec<u8>,
    /// Offset in `bytes` of bin `k * MARK`, for every such packed bin.
    marks: Vec<u32>,
    packed: usize,
    /// Bins `[packed, packed + hot.len())`, in full.
    hot: Vec<Bin>,
}

/// What a packed bin is taken to cost, for the budget's estimate: an idle bin packs to ~5
/// bytes (mask, one duration), a busy one of a bulk transfer to ~30 (durations, bytes,
/// flight, window, RTT); the bytes' `Vec` grows by doubling, so a quarter more on average.
/// 8 is what the many-flow mix's timelines took (bench/results/attacks.md); a timeline of
/// busy bins takes up to 4 times that, at most 512 * 40 bytes.
pub const PACKED_BIN_BYTES: usize = 8;

/// The bytes a live timeline of `bins` bins is estimated to take: its bins in full (the
/// last few, and room for two more) and the packed ones at [`PACKED_BIN_BYTES`].
pub const fn estimated_bytes(bins: usize) -> usize {
    let full = if bins < HOT { bins } else { HOT };
    (HOT + 2) * std::mem::size_of::<Bin>() + (bins - full) * PACKED_BIN_BYTES
}

fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get(bytes: &[u8], at: &mut usize) -> u64 {
    let (mut v, mut shift) = (0u64, 0);
    loop {
        let b = bytes[*at];
        *at += 1;
        v |= ((b & 0x7f) as u64) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

fn nonzero(v: u64) -> Option<u64> {
    (v != 0).then_some(v)
}

/// Packs `b` at the end of `out`.
fn pack(b: &Bin, out: &mut Vec<u8>) {
    // Every field by name: a field added to `Bin` fails to compile here until it is packed.
    let Bin {
        busy_ns,
        rwnd_ns,
        idle_ns,
        idle_room_ns,
        unused_window_ns,
        delivered,
        sent,
        retransmissions,
        max_flight,
        min_flight,
        max_window,
        min_window,
        rtt_min_ns,
        rtt_prompt_min_ns,
        rtt_bound_min_ns,
        rtt_sum_ns,
        rtt_count,
        last_ack_ns,
        ecn_marks,
        new_segments,
        short_segments,
        max_raw_window,
        min_raw_window,
    } = *b;
    let fields = [
        nonzero(busy_ns),
        nonzero(rwnd_ns),
        nonzero(idle_ns),
        nonzero(delivered),
        nonzero(sent),
        nonzero(retransmissions as u64),
        nonzero(max_flight),
        nonzero(max_window),
        min_window,
        rtt_min_ns.map(zigzag),
        rtt_prompt_min_ns.map(zigzag),
        nonzero(zigzag(rtt_sum_ns)),
        nonzero(rtt_count as u64),
        last_ack_ns.map(zigzag),
        nonzero(ecn_marks as u64),
        rtt_bound_min_ns.map(zigzag),
        min_flight,
        nonzero(new_segments as u64),
        nonzero(short_segments as u64),
        nonzero(idle_room_ns),
        nonzero(unused_window_ns),
        nonzero(max_raw_window as u64),
        (max_raw_window > 0).then_some(min_raw_window as u64),
    ];
    let mask = fields
        .iter()
        .enumerate()
        .fold(0u64, |m, (k, f)| m | (f.is_some() as u64) << k);
    put(out, mask);
    for v in fields.into_iter().flatten() {
        put(out, v);
    }
}

/// The bin packed at `*at`, moving `*at` past it.
fn unpack(bytes: &[u8], at: &mut usize) -> Bin {
    let mask = get(bytes, at);
    let mut field = |k: u32| (mask >> k & 1 == 1).then(|| get(bytes, at));
    Bin {
        busy_ns: field(0).unwrap_or(0),
        rwnd_ns: field(1).unwrap_or(0),
        idle_ns: field(2).unwrap_or(0),
        delivered: field(3).unwrap_or(0),
        sent: field(4).unwrap_or(0),
        retransmissions: field(5).unwrap_or(0) as u32,
        max_flight: field(6).unwrap_or(0),
        max_window: field(7).unwrap_or(0),
        min_window: field(8),
        rtt_min_ns: field(9).map(unzigzag),
        rtt_prompt_min_ns: field(10).map(unzigzag),
        rtt_sum_ns: field(11).map_or(0, unzigzag),
        rtt_count: field(12).unwrap_or(0) as u32,
        last_ack_ns: field(13).map(unzigzag),
        ecn_marks: field(14).unwrap_or(0) as u32,
        rtt_bound_min_ns: field(15).map(unzigzag),
        min_flight: field(16),
        new_segments: field(17).unwrap_or(0) as u32,
        short_segments: field(18).unwrap_or(0) as u32,
        idle_room_ns: field(19).unwrap_or(0),
        unused_window_ns: field(20).unwrap_or(0),
        max_raw_window: field(21).unwrap_or(0) as u16,
        min_raw_window: field(22).unwrap_or(0) as u16,
    }
}

impl PackedBins {
    /// Packs `b` as the next bin.
    fn push_packed(&mut self, b: &Bin) {
        if self.packed % MARK == 0 {
            self.marks.push(self.bytes.len() as u32);
        }
        pack(b, &mut self.bytes);
        self.packed += 1;
    }

    /// Packs the first `k` full bins.
    fn freeze(&mut self, k: usize) {
        let hot = std::mem::take(&mut self.hot);
        for b in &hot[..k] {
            self.push_packed(b);
        }
        self.hot = hot;
        self.hot.drain(..k);
        // What a thaw or a merge allocated goes back once its bins are packed.
        let room = self.hot.len().max(HOT + 2);
        if self.hot.capacity() > 2 * room {
            self.hot.shrink_to(room);
        }
    }

    /// Packs all but the last [`HOT`] bins.
    fn pack_older(&mut self) {
        if self.hot.len() > HOT {
            self.freeze(self.hot.len() - HOT);
        }
    }

    /// Unpacks bins `[i, packed)` back to full.
    #[inline(never)]
    fn thaw(&mut self, i: usize) {
        let m = i / MARK;
        let mut at = self.marks[m] as usize;
        for _ in m * MARK..i {
            unpack(&self.bytes, &mut at);
        }
        let cut = at;
        let mut full = Vec::with_capacity(self.packed - i + self.hot.len());
        while full.len() < self.packed - i {
            full.push(unpack(&self.bytes, &mut at));
        }
        full.append(&mut self.hot);
        self.hot = full;
        self.bytes.truncate(cut);
        self.marks.truncate(i.div_ceil(MARK));
        self.packed = i;
    }
}

impl BinStore for PackedBins {
    fn len(&self) -> usize {
        self.packed + self.hot.len()
    }

    #[inline]
    fn get_mut(&mut self, i: usize) -> &mut Bin {
        if i < self.packed {
            self.thaw(i);
        }
        &mut self.hot[i - self.packed]
    }

    fn grow(&mut self, n: usize) {
        // All but the last few bins of the new length are packed: the bins there were, and
        // new (empty) ones packed as they are, never held in full.
        let keep_from = n.saturating_sub(HOT);
        let k = keep_from.min(self.len()).saturating_sub(self.packed);
        if k > 0 {
            self.freeze(k);
        }
        while self.packed < keep_from {
            self.push_packed(&Bin::default());
        }
        self.hot.resize(n - self.packed, Bin::default());
    }

    fn settle(&mut self) {
        self.pack_older();
    }

    fn merge_pairs(&mut self) {
        let mut all = Vec::with_capacity(self.len());
        self.for_each(|b| all.push(*b));
        all.merge_pairs();
        self.bytes.clear();
        self.marks.clear();
        self.packed = 0;
        self.hot = all;
        self.pack_older();
    }

    fn for_each(&self, mut f: impl FnMut(&Bin)) {
        let mut at = 0;
        for _ in 0..self.packed {
            f(&unpack(&self.bytes, &mut at));
        }
        self.hot.iter().for_each(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::timeline::SenderState;
    use crate::time::{Span, Timestamp};
    use proptest::prelude::*;

    fn bin_strategy() -> impl Strategy<Value = Bin> {
        // Zero, small and extreme values for every field (None as well for the options).
        let n = || prop_oneof![Just(0u64), 0u64..300, any::<u64>()];
        let i = || prop_oneof![Just(0i64), -5i64..5, any::<i64>()];
        (
            (n(), n(), n(), n(), n(), any::<u32>()),
            (
                n(),
                n(),
                proptest::option::of(n()),
                proptest::option::of(n()),
                any::<u32>(),
                any::<u32>(),
            ),
            (
                proptest::option::of(i()),
                proptest::option::of(i()),
                i(),
                any::<u32>(),
                proptest::option::of(i()),
                any::<u32>(),
                proptest::option::of(i()),
            ),
            (n(), n(), any::<u16>(), any::<u16>()),
        )
            .prop_map(|(a, b, c, (d, e, f, g))| Bin {
                busy_ns: a.0,
                rwnd_ns: a.1,
                idle_ns: a.2,
                delivered: a.3,
                sent: a.4,
                retransmissions: a.5,
                max_flight: b.0,
                max_window: b.1,
                min_window: b.2,
                min_flight: b.3,
                new_segments: b.4,
                short_segments: b.5,
                rtt_min_ns: c.0,
                rtt_prompt_min_ns: c.1,
                rtt_sum_ns: c.2,
                rtt_count: c.3,
                last_ack_ns: c.4,
                ecn_marks: c.5,
                rtt_bound_min_ns: c.6,
                idle_room_ns: d,
                unused_window_ns: e,
                max_raw_window: f,
                // Kept only beside a recorded maximum (see `Bin::min_raw_window`).
                min_raw_window: if f > 0 { g } else { 0 },
            })
    }

    proptest! {
        #[test]
        fn a_packed_bin_unpacks_to_itself(bins in proptest::collection::vec(bin_strategy(), 1..20)) {
            let mut bytes = Vec::new();
            for b in &bins {
                pack(b, &mut bytes);
            }
            let mut at = 0;
            for b in &bins {
                prop_assert_eq!(unpack(&bytes, &mut at), *b);
            }
            prop_assert_eq!(at, bytes.len());
        }

        /// Any sequence of writes, anywhere in time, gives the same bins packed or not.
        #[test]
        fn a_packed_timeline_is_the_full_one(ops in proptest::collection::vec(
            (-2_000_000_000i64..40_000_000_000, 0i64..3_000_000_000, 0u8..7, any::<u32>()), 1..300)) {
            let t0 = Timestamp(1_000_000_000);
            let mut full: Timeline = Timeline::new(t0);
            let mut packed: LiveTimeline = Timeline::new(t0);
            for (at, len, what, v) in ops {
                let (from, to) = (t0 + Span(at), t0 + Span(at + len));
                let state = [SenderState::Busy, SenderState::ReceiverWindow, SenderState::Idle][v as usize % 3];
                match what {
                    0 => {
                        full.account(from, to, state);
                        packed.account(from, to, state);
                    }
                    // Everything until an instant judged again (a scale learnt late).
                    6 => {
                        fn judge(n: &mut u64, v: u32, b: &mut Bin) {
                            *n += 1;
                            b.max_window >>= 3;
                            if *n % 2 == v as u64 % 2 {
                                b.rwnd_ns += std::mem::take(&mut b.busy_ns);
                            }
                        }
                        let (mut m, mut n) = (0u64, 0u64);
                        full.rewrite_until(from, |b| judge(&mut m, v, b));
                        packed.rewrite_until(from, |b| judge(&mut n, v, b));
                        prop_assert_eq!(n, m);
                    }
                    k => {
                        let write = |b: &mut Bin| match k {
                            1 => b.delivered += v as u64,
                            2 => {
                                b.max_window = b.max_window.max(v as u64);
                                b.min_window = Some(b.min_window.map_or(v as u64, |m| m.min(v as u64)));
                            }
                            3 => {
                                b.rtt_min_ns = Some(b.rtt_min_ns.map_or(v as i64, |m| m.min(v as i64)));
                                b.rtt_sum_ns += v as i64;
                                b.rtt_count += 1;
                            }
                            4 => b.retransmissions += 1,
                            _ => b.ecn_marks += 1,
                        };
                        write(full.bin(from));
                        write(packed.bin(from));
                    }
                }
                prop_assert_eq!(packed.bins.len(), full.bins.len());
            }
            prop_assert_eq!(packed.width, full.width);
            prop_assert_eq!(packed.totals(), full.totals());
            prop_assert_eq!(packed.full().bins, full.bins);
        }
    }

    #[test]
    fn an_idle_bin_takes_a_few_bytes() {
        let t0 = Timestamp(1_000_000_000);
        let mut tl: LiveTimeline = Timeline::new(t0);
        // A burst every 5 s over 60 s: nearly every bin only idle time (128 ms bins).
        for s in 0..12 {
            let at = t0 + Span::from_millis(5_000 * s);
            tl.account(at, at + Span::from_millis(3), SenderState::Busy);
            tl.bin(at).delivered += 20_000;
            tl.account(
                at + Span::from_millis(3),
                at + Span::from_millis(5_000),
                SenderState::Idle,
            );
        }
        let b = &tl.bins;
        assert!(b.len() > 400, "{}", b.len());
        assert!(
            b.bytes.len() <= 6 * b.packed,
            "{} bytes for {} bins",
            b.bytes.len(),
            b.packed
        );
        assert_eq!(b.hot.len(), HOT);
        // A write far behind the end brings bins back in full; the next interval puts
        // them away again.
        tl.bin(t0 + Span::from_millis(30_000)).retransmissions += 1;
        assert!(tl.bins.hot.len() > 200);
        tl.account(
            t0 + Span::from_millis(60_000),
            t0 + Span::from_millis(60_001),
            SenderState::Busy,
        );
        assert_eq!(tl.bins.hot.len(), HOT);
    }
}
