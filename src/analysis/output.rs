//! The order flows come out in, as they finish: by id (the order of their first packets,
//! as before output streamed), each as soon as every lower id has come out.
//!
//! Two things hold a finished flow back, each bounded:
//! - **A shared path.** A judged flow may share a bottleneck with flows between the same
//!   hosts that overlap it in time (`diagnose::across_flows` judges them together). It
//!   waits while a connection with data between those hosts that could still overlap it
//!   is live — one whose first payload came before the flow's transfer ended — and goes
//!   out with its group once none is. So only flows overlapping a live flow of their own
//!   hosts are held.
//! - **An earlier flow still live.** Flows wait for lower ids, up to [`READY_CAP`] of
//!   them; beyond that the lowest waiting ones go out at once (the long-lived flow comes
//!   out when it ends), so memory stays bounded with a connection open all capture long.
//!
//! Everything here follows the front's decisions in their order, so the output is the same
//! for any number of workers.

use super::front::{Expect, HostPair};
use super::AnalysisConfig;
use crate::diagnose::{self, Finished};
use crate::flow::FxHashMap;
use crate::summary::FlowSummary;
use crate::time::Timestamp;
use std::collections::{BTreeMap, VecDeque};

/// Finished flows waiting for a lower id, at most.
pub(crate) const READY_CAP: usize = 4096;

/// Ids as a set of ranges [start, end): the ids written or skipped above the lowest one
/// still to come. Attempts folded in a flood come in long runs: a few ranges.
#[derive(Default)]
struct Ranges(BTreeMap<u64, u64>);

impl Ranges {
    fn insert(&mut self, id: u64) {
        // The range ending right at `id`, and the one starting right after.
        let before = self.0.range(..=id).next_back().map(|(&s, &e)| (s, e));
        if before.is_some_and(|(s, e)| s <= id && id < e) {
            return;
        }
        let after = self.0.get(&(id + 1)).copied();
        match (before.filter(|&(_, e)| e == id), after) {
            (Some((s, _)), Some(e2)) => {
                self.0.remove(&(id + 1));
                self.0.insert(s, e2);
            }
            (Some((s, _)), None) => {
                self.0.insert(s, id + 1);
            }
            (None, Some(e2)) => {
                self.0.remove(&(id + 1));
                self.0.insert(id, e2);
            }
            (None, None) => {
                self.0.insert(id, id + 1);
            }
        }
    }

    /// Removes the range starting at `id`; its end.
    fn take_from(&mut self, id: u64) -> Option<u64> {
        self.0.remove(&id)
    }
}

struct Reorder {
    next: u64,
    done: Ranges,
    ready: BTreeMap<u64, FlowSummary>,
    out: Vec<FlowSummary>,
}

impl Reorder {
    fn advance(&mut self) {
        loop {
            if let Some(s) = self.ready.remove(&self.next) {
                self.out.push(s);
                self.next += 1;
            } else if let Some(end) = self.done.take_from(self.next) {
                self.next = end;
            } else {
                break;
            }
        }
    }

    fn put(&mut self, s: FlowSummary) {
        if s.id == self.next {
            self.out.push(s);
            self.next += 1;
            self.advance();
            return;
        }
        self.ready.insert(s.id, s);
        if self.ready.len() > READY_CAP {
            // The lowest half goes out now; their ids are done when `next` gets there.
            for _ in 0..READY_CAP / 2 {
                let Some((id, s)) = self.ready.pop_first() else { break };
                self.out.push(s);
                self.done.insert(id);
            }
        }
    }

    fn skip(&mut self, id: u64) {
        if id == self.next {
            self.next += 1;
            self.advance();
        } else {
            self.done.insert(id);
        }
    }

    fn flush(&mut self) {
        while let Some((_, s)) = self.ready.pop_first() {
            self.out.push(s);
        }
    }
}

pub(crate) struct Output {
    expects: VecDeque<Expect>,
    arrived: FxHashMap<u64, Finished>,
    held: FxHashMap<HostPair, Vec<Finished>>,
    held_count: usize,
    reorder: Reorder,
    /// Most flows held for a shared path at once.
    pub(crate) peak_held: usize,
}

impl Output {
    pub(crate) fn new(config: &AnalysisConfig) -> Output {
        Output {
            expects: VecDeque::new(),
            arrived: FxHashMap::default(),
            held: FxHashMap::default(),
            held_count: 0,
            reorder: Reorder {
                next: config.first_flow_id,
                done: Ranges::default(),
                ready: BTreeMap::new(),
                out: Vec::new(),
            },
            peak_held: 0,
        }
    }

    pub(crate) fn expect(&mut self, e: Expect) {
        // A skip with nothing queued ahead of it is done at once, as `pump` would: a
        // flood folds an attempt per SYN, and queueing each walked the ring's slots
        // through memory (one cold cache line per folded attempt, its capacity having
        // grown to thousands while an earlier flow was on its way).
        if let (Expect::Skip { id }, true) = (e, self.expects.is_empty()) {
            self.reorder.skip(id);
            return;
        }
        self.expects.push_back(e);
        self.pump();
    }

    pub(crate) fn arrive(&mut self, fseq: u64, f: Finished) {
        self.arrived.insert(fseq, f);
        self.pump();
    }

    /// Decisions queued behind a flow that has not arrived yet.
    pub(crate) fn waiting(&self) -> usize {
        self.expects.len()
    }

    /// Whether every expected flow has arrived.
    pub(crate) fn caught_up(&self) -> bool {
        self.expects.is_empty()
    }

    fn pump(&mut self) {
        while let Some(&e) = self.expects.front() {
            match e {
                Expect::Skip { id } => {
                    self.expects.pop_front();
                    self.reorder.skip(id);
                }
                Expect::Flow {
                    fseq,
                    id,
                    pair,
                    live_from,
                    now,
                } => {
                    let Some(f) = self.arrived.remove(&fseq) else { break };
                    self.expects.pop_front();
                    debug_assert_eq!(f.summary.id, id);
                    if f.sharing().is_some() {
                        self.held.entry(pair).or_default().push(f);
                        self.held_count += 1;
                        self.peak_held = self.peak_held.max(self.held_count);
                    } else {
                        self.reorder.put(f.summary);
                    }
                    let until = live_from.map_or(now, |t| t.min(now));
                    self.release(pair, Some(until));
                }
            }
        }
    }

    /// Writes the held flows of `pair` whose groups no live or later flow can join: those
    /// whose transfer ended by `until` (None: all).
    fn release(&mut self, pair: HostPair, until: Option<Timestamp>) {
        let Some(held) = self.held.get_mut(&pair) else { return };
        // The groups `across_flows` looks at: same hosts, overlapping in time (transitively),
        // in order of their start — either direction, since a transfer the other way
        // compresses this one's ACKs (`across_flows` sets their spacing aside).
        held.sort_by_key(|f| {
            let ((c, s, _), origin, _) = f.sharing().expect("held flows are judged");
            (c, s, origin)
        });
        let mut release = vec![false; held.len()];
        let mut i = 0;
        while i < held.len() {
            let ((c, s, _), _, mut end) = held[i].sharing().expect("judged");
            let mut j = i + 1;
            while j < held.len() {
                let ((c2, s2, _), origin, e2) = held[j].sharing().expect("judged");
                if (c2, s2) != (c, s) || origin >= end {
                    break;
                }
                end = end.max(e2);
                j += 1;
            }
            if until.is_none_or(|t| end <= t) {
                release[i..j].iter_mut().for_each(|r| *r = true);
            }
            i = j;
        }
        if !release.iter().any(|&r| r) {
            return;
        }
        let all = std::mem::take(held);
        let (mut out, keep): (Vec<_>, Vec<_>) = all.into_iter().zip(release).partition(|(_, r)| *r);
        let mut out: Vec<Finished> = out.drain(..).map(|(f, _)| f).collect();
        let keep: Vec<Finished> = keep.into_iter().map(|(f, _)| f).collect();
        self.held_count -= out.len();
        if keep.is_empty() {
            self.held.remove(&pair);
        } else {
            self.held.insert(pair, keep);
        }
        out.sort_by_key(|f| f.summary.id);
        diagnose::across_flows(&mut out);
        for f in out {
            self.reorder.put(f.summary);
        }
    }

    /// The flows ready to be written, in order.
    pub(crate) fn take_ready(&mut self) -> Vec<FlowSummary> {
        std::mem::take(&mut self.reorder.out)
    }

    pub(crate) fn has_ready(&self) -> bool {
        !self.reorder.out.is_empty()
    }

    /// The end of the capture (every flow has arrived): everything held goes out.
    pub(crate) fn finish(&mut self) {
        debug_assert!(self.expects.is_empty() && self.arrived.is_empty());
        let mut pairs: Vec<HostPair> = self.held.keys().copied().collect();
        pairs.sort();
        for p in pairs {
            self.release(p, None);
        }
        self.reorder.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_merge_and_split() {
        let mut r = Ranges::default();
        for id in [5, 7, 6, 9, 3, 4, 7] {
            r.insert(id);
        }
        assert_eq!(r.0.iter().map(|(&a, &b)| (a, b)).collect::<Vec<_>>(), [(3, 8), (9, 10)]);
        assert_eq!(r.take_from(3), Some(8));
        assert_eq!(r.take_from(8), None);
    }

    #[test]
    fn flows_come_out_by_id_as_soon_as_the_lower_ones_did() {
        let mut r = Reorder {
            next: 0,
            done: Ranges::default(),
            ready: BTreeMap::new(),
            out: Vec::new(),
        };
        r.skip(1);
        r.skip(3);
        assert_eq!(r.next, 0);
        r.skip(0);
        assert_eq!(r.next, 2, "0 and 1 are done, 2 is not");
        r.skip(2);
        assert_eq!(r.next, 4);
    }
}
