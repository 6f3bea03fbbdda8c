//! A bounded timeline of one direction of a flow: fixed-width bins that double in width
//! (merging neighbours) when a flow outgrows them, so a flow of any length costs at most
//! `MAX_BINS` bins. Every quantity in a bin is additive (durations, bytes, counts) or a
//! min/max, so merging loses resolution but never meaning.
//!
//! The bins live in a [`BinStore`]: in full (`Vec<Bin>`, what the diagnosis reads), or,
//! while the flow is live, packed ([`super::packed::PackedBins`]: only the last few bins in
//! full, the older ones as varints). Both follow the same rules here, so a flow's timeline
//! is the same bin for bin whichever held it.

use crate::time::{Span, Timestamp};

pub const MAX_BINS: usize = 512;
/// Initial bin width: fine enough to resolve RTTs down to a few milliseconds.
const INITIAL_WIDTH: Span = Span::from_millis(1);

/// The sender's mutually exclusive situations (Linux tcp_chrono's busy / rwnd-limited, and
/// idle), accounted as durations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderState {
    /// Data outstanding and window room: waiting on ACKs (congestion window or the path).
    Busy,
    /// The receiver's window was full (or zero): the next segment did not fit.
    ReceiverWindow,
    /// Nothing outstanding and nothing sent: the application had nothing to send.
    Idle,
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bin {
    pub busy_ns: u64,
    pub rwnd_ns: u64,
    pub idle_ns: u64,
    /// Of `idle_ns`, the time the sender left room unused with data still in flight (the
    /// accumulator's `UnusedRoom`): its data kept the path busy, unlike a sender with
    /// nothing outstanding.
    pub idle_room_ns: u64,
    /// Of `busy_ns`, in loss recovery: each instant weighted by the share of its congestion
    /// window the sender left unused (`recovery_window::window_unused`), so the sum is the time
    /// the window's unused part stood for. A sender in recovery whose pipe stays far below
    /// the window the recovery leaves it had nothing more to send (its send buffer full of
    /// data held above the holes): the sender's time, not the window's.
    pub unused_window_ns: u64,
    /// Bytes newly acknowledged.
    pub delivered: u64,
    /// When the bin's last ACK of new data came (ns from the timeline's origin): a delivery
    /// window's ACK interval runs from the last ACK before it to its own last (delivery.rs).
    pub last_ack_ns: Option<i64>,
    /// New payload bytes sent.
    pub sent: u64,
    pub retransmissions: u32,
    /// Segments of new data sent, and of them those under a full segment: a sender with a
    /// full segment's data and room sends a full one (RFC 1122 §4.2.3.4), so a short one
    /// is all it had then.
    pub new_segments: u32,
    pub short_segments: u32,
    /// ECN congestion signals: segments marked CE as they passed the capture point, and the
    /// sender's CWR (a window reduction, RFC 3168 §6.1.2). Where congestion control cut the
    /// window, as a retransmission shows a loss did.
    pub ecn_marks: u32,
    /// Largest flight the sender had (reconstructed sender view), and the window then.
    pub max_flight: u64,
    /// Least flight right after a segment of new data left (the sender's low point, less
    /// the one segment): where the flight dips between a sender's bursts.
    pub min_flight: Option<u64>,
    pub max_window: u64,
    pub min_window: Option<u64>,
    /// The 16-bit window fields of the adverts the sender had while their scale was not
    /// known yet (a capture begun after the handshake): judged in bytes once it is. None
    /// recorded while `max_raw_window` is 0 (a closed window is not recorded: a sender
    /// holds at it whatever the scale). Two `u16`s, not an `Option`, keep `Bin` within its
    /// size: a live timeline keeps six in full.
    pub max_raw_window: u16,
    pub min_raw_window: u16,
    /// End-to-end RTT samples in the bin.
    pub rtt_min_ns: Option<i64>,
    /// The least end-to-end sample that the receiver's own timing cannot have held: taken
    /// on data (an echo by the sender's ACK-clocked data) or on an ACK of at least two full
    /// segments (RFC 5681 §4.2: not delayed) with the window left open (an ACK of a nearly
    /// closed window comes when the application reads, and so does one that acknowledges a
    /// whole window up to its right edge: see `Accumulator::on_segment`). The standing-queue
    /// test reads these:
    /// a receiver that holds its ACKs for a timer or for its reader inflates samples without
    /// any queue in the path.
    pub rtt_prompt_min_ns: Option<i64>,
    /// The least end-to-end time any segment showed for the loop a bottleneck queue lies
    /// on, sample or not (`SegmentEvent::loop_bound`): never less than the loop with the
    /// queue then, so an interval whose least bound sits near the base saw the queue drain.
    pub rtt_bound_min_ns: Option<i64>,
    pub rtt_sum_ns: i64,
    pub rtt_count: u32,
}

impl Bin {
    pub(crate) fn merge(&mut self, o: &Bin) {
        self.busy_ns += o.busy_ns;
        self.rwnd_ns += o.rwnd_ns;
        self.idle_ns += o.idle_ns;
        self.idle_room_ns += o.idle_room_ns;
        self.unused_window_ns += o.unused_window_ns;
        self.delivered += o.delivered;
        self.last_ack_ns = self.last_ack_ns.max(o.last_ack_ns);
        self.sent += o.sent;
        self.retransmissions += o.retransmissions;
        self.new_segments += o.new_segments;
        self.short_segments += o.short_segments;
        self.ecn_marks += o.ecn_marks;
        self.max_flight = self.max_flight.max(o.max_flight);
        self.min_flight = self.min_flight.into_iter().chain(o.min_flight).min();
        self.max_window = self.max_window.max(o.max_window);
        self.min_window = self.min_window.into_iter().chain(o.min_window).min();
        self.min_raw_window = match (self.max_raw_window, o.max_raw_window) {
            (_, 0) => self.min_raw_window,
            (0, _) => o.min_raw_window,
            _ => self.min_raw_window.min(o.min_raw_window),
        };
        self.max_raw_window = self.max_raw_window.max(o.max_raw_window);
        self.rtt_min_ns = self.rtt_min_ns.into_iter().chain(o.rtt_min_ns).min();
        self.rtt_prompt_min_ns = self.rtt_prompt_min_ns.into_iter().chain(o.rtt_prompt_min_ns).min();
        self.rtt_bound_min_ns = self.rtt_bound_min_ns.into_iter().chain(o.rtt_bound_min_ns).min();
        self.rtt_sum_ns += o.rtt_sum_ns;
        self.rtt_count += o.rtt_count;
    }

    pub fn state_ns(&self) -> u64 {
        self.busy_ns + self.rwnd_ns + self.idle_ns
    }
}

/// Where a timeline's bins are held.
pub trait BinStore: Default {
    fn len(&self) -> usize;
    /// Bin `i` (below `len`), to change.
    fn get_mut(&mut self, i: usize) -> &mut Bin;
    /// Empty bins appended up to `n` (more than `len`).
    fn grow(&mut self, n: usize);
    /// Neighbours merged: bin `i` becomes bins `2i` and `2i + 1` (the last alone if odd).
    fn merge_pairs(&mut self);
    /// Every bin, in order.
    fn for_each(&self, f: impl FnMut(&Bin));
    /// An interval has been accounted: the bins it reached back to may be put away.
    fn settle(&mut self) {}
    /// Bins `[0, upto)` changed by `f`, in order (a packed store unpacks them once, and
    /// packs them again after).
    fn rewrite(&mut self, upto: usize, mut f: impl FnMut(&mut Bin)) {
        for i in 0..upto.min(self.len()) {
            f(self.get_mut(i));
        }
        self.settle();
    }
}

impl BinStore for Vec<Bin> {
    fn len(&self) -> usize {
        self.len()
    }

    fn get_mut(&mut self, i: usize) -> &mut Bin {
        &mut self[i]
    }

    fn grow(&mut self, n: usize) {
        self.resize(n, Bin::default());
    }

    fn merge_pairs(&mut self) {
        let merged: Vec<Bin> = self
            .chunks(2)
            .map(|c| {
                let mut b = c[0];
                if let Some(o) = c.get(1) {
                    b.merge(o);
                }
                b
            })
            .collect();
        *self = merged;
    }

    fn for_each(&self, f: impl FnMut(&Bin)) {
        self.iter().for_each(f);
    }
}

#[derive(Clone, Debug)]
pub struct Timeline<S = Vec<Bin>> {
    pub origin: Timestamp,
    pub width: Span,
    pub bins: S,
    /// The capture clock's quantum (zero until the analysis sets it): an instant in a bin
    /// may have come up to one quantum after its stamp, so a rate over the bins is taken
    /// over their span plus one quantum (delivery.rs).
    pub clock: Span,
    /// The last bin looked up and its span as offsets from `origin` (ns): most lookups
    /// fall in it again, and a division per lookup shows in per-packet profiles.
    last: Option<(usize, i64, i64)>,
}

impl<S: BinStore> Timeline<S> {
    pub fn new(origin: Timestamp) -> Self {
        Timeline {
            origin,
            width: INITIAL_WIDTH,
            bins: S::default(),
            clock: Span::ZERO,
            last: None,
        }
    }

    pub fn start_of(&self, i: usize) -> Timestamp {
        self.origin + Span(self.width.nanos() * i as i64)
    }

    /// End of the last bin.
    pub fn end(&self) -> Timestamp {
        self.start_of(self.bins.len())
    }

    /// The bin of `t`: the bin found last when `t` is in it too (consecutive segments
    /// mostly are), checked inline; otherwise found, and the timeline grown, out of line.
    #[inline]
    fn index(&mut self, t: Timestamp) -> usize {
        let off = (t - self.origin).nanos().max(0);
        if let Some((i, lo, hi)) = self.last {
            if lo <= off && off < hi && i < self.bins.len() {
                return i;
            }
        }
        self.index_slow(off)
    }

    #[inline(never)]
    fn index_slow(&mut self, off: i64) -> usize {
        let i = self.fit(off);
        if i >= self.bins.len() {
            self.bins.grow(i + 1);
        }
        let w = self.width.nanos();
        self.last = Some((i, i as i64 * w, (i as i64 + 1) * w));
        i
    }

    /// Coarsens until offset `off` (ns) falls within `MAX_BINS` bins; its bin index.
    fn fit(&mut self, off: i64) -> usize {
        let mut i = (off / self.width.nanos()) as usize;
        while i >= MAX_BINS {
            self.coarsen();
            i = (off / self.width.nanos()) as usize;
        }
        i
    }

    /// Doubles the bin width, merging pairs.
    fn coarsen(&mut self) {
        self.bins.merge_pairs();
        self.width = Span(self.width.nanos() * 2);
        self.last = None;
    }

    /// The bin holding instant `t` (earlier instants go to the first bin).
    pub fn bin(&mut self, t: Timestamp) -> &mut Bin {
        let i = self.index(t);
        self.bins.get_mut(i)
    }

    /// `bytes` newly acknowledged by an ACK at `t`: counted in its bin, whose last ACK it
    /// may be.
    pub fn ack(&mut self, t: Timestamp, bytes: u64) {
        let at = (t - self.origin).nanos();
        let b = self.bin(t);
        b.delivered += bytes;
        b.last_ack_ns = b.last_ack_ns.max(Some(at));
    }

    /// Accounts [from, to) in `state`, split over the bins it spans.
    pub fn account(&mut self, from: Timestamp, to: Timestamp, state: SenderState) {
        self.account_in(from, to, state, false, 0.0);
    }

    /// Accounts [from, to) as busy time in loss recovery with `unused` (0 to 1) of the
    /// congestion window left unused (`Bin::unused_window_ns`).
    pub fn account_busy_unused(&mut self, from: Timestamp, to: Timestamp, unused: f64) {
        self.account_in(from, to, SenderState::Busy, false, unused.clamp(0.0, 1.0));
    }

    /// Accounts [from, to) as idle time in which the sender left room unused with data in
    /// flight (`Bin::idle_room_ns`).
    pub fn account_unused_room(&mut self, from: Timestamp, to: Timestamp) {
        self.account_in(from, to, SenderState::Idle, true, 0.0);
    }

    fn account_in(&mut self, from: Timestamp, to: Timestamp, state: SenderState, room: bool, unused: f64) {
        if to <= from {
            return;
        }
        // Coarsen to the width that covers `to` before splitting (coarsening moves edges);
        // bins beyond the end are made one by one as the interval reaches them.
        self.fit((to - Span(1) - self.origin).nanos().max(0));
        let mut t = from.max(self.origin);
        if t >= to {
            // All before the origin: nothing to account, but the first bin exists (as when
            // the timeline was grown to `to` up front).
            self.index(to - Span(1));
        }
        while t < to {
            let i = self.index(t);
            let edge = self.start_of(i + 1).min(to);
            let ns = (edge - t).nanos().max(0) as u64;
            let b = self.bins.get_mut(i);
            match state {
                SenderState::Busy => {
                    b.busy_ns += ns;
                    b.unused_window_ns += (ns as f64 * unused) as u64;
                }
                SenderState::ReceiverWindow => b.rwnd_ns += ns,
                SenderState::Idle => {
                    b.idle_ns += ns;
                    if room {
                        b.idle_room_ns += ns;
                    }
                }
            }
            if edge <= t {
                break;
            }
            t = edge;
        }
        self.bins.settle();
    }

    /// Every bin up to the one holding `t` changed by `f`, in order: what was accounted
    /// until an instant, judged again with what was learnt at it.
    pub fn rewrite_until(&mut self, t: Timestamp, f: impl FnMut(&mut Bin)) {
        let last = ((t - self.origin).nanos().max(0) / self.width.nanos()) as usize;
        self.bins.rewrite(last + 1, f);
    }

    /// Total time in each state over the whole timeline: (busy, rwnd, idle) in ns.
    pub fn totals(&self) -> (u64, u64, u64) {
        let mut t = (0, 0, 0);
        self.bins.for_each(|x| {
            t.0 += x.busy_ns;
            t.1 += x.rwnd_ns;
            t.2 += x.idle_ns;
        });
        t
    }

    /// The same timeline with every bin in full.
    pub fn full(&self) -> Timeline {
        let mut bins = Vec::with_capacity(self.bins.len());
        self.bins.for_each(|b| bins.push(*b));
        Timeline {
            origin: self.origin,
            width: self.width,
            bins,
            clock: self.clock,
            last: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: i64) -> Timestamp {
        Timestamp(1_000_000_000) + Span::from_millis(ms)
    }

    #[test]
    fn durations_split_across_bins() {
        let mut tl: Timeline = Timeline::new(t(0));
        tl.account(t(0), t(3), SenderState::Busy);
        tl.account(t(3), t(5), SenderState::ReceiverWindow);
        assert_eq!(tl.bins.len(), 5);
        assert_eq!(tl.totals(), (3_000_000, 2_000_000, 0));
    }

    #[test]
    fn long_flows_coarsen_without_losing_totals() {
        let mut tl: Timeline = Timeline::new(t(0));
        for i in 0..10_000 {
            tl.account(
                t(i),
                t(i + 1),
                if i % 2 == 0 {
                    SenderState::Busy
                } else {
                    SenderState::Idle
                },
            );
            tl.bin(t(i)).delivered += 100;
        }
        assert!(tl.bins.len() <= MAX_BINS);
        assert_eq!(tl.totals(), (5_000_000_000, 0, 5_000_000_000));
        assert_eq!(tl.bins.iter().map(|b| b.delivered).sum::<u64>(), 1_000_000);
        assert!(tl.width >= Span::from_millis(16));
    }
}
