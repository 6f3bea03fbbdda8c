//! Live connections by key: canonical key -> an entry in a slot, with the last key looked
//! up kept as a shortcut. It stores; it does not decide. When a connection ends is decided
//! with [`super::life::Life`] and its timeouts (by `analysis::front`, or [`super::FlowTable`]).

use crate::endpoint::{Endpoint, FlowKey};
use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;
use std::collections::VecDeque;
use std::hash::BuildHasher;

/// Entries sit in slots, the index names the slot: moving an entry in and out of the map
/// as it grows would copy it, and a slot number is what the per-packet shortcut keeps.
/// The index holds slot numbers only, hashed by their slot's key: 4 bytes an entry, so it
/// stays in cache with a flood's tens of thousands of attempts, and an entry is removed by
/// its slot number without reading a key.
pub struct Slots<T> {
    map: HashTable<u32>,
    slots: Vec<Option<(FlowKey, T)>>,
    /// Freed slots, reused oldest first: connections mostly end in the order they began
    /// (timeouts, the budget's oldest-first), so slots stay in order of creation and both
    /// ends of a flood's churn walk memory in sequence instead of at random.
    free: VecDeque<u32>,
    /// The key of the last segment and its slot. Consecutive segments mostly belong to one
    /// connection (96% of them in a capture of four interleaved bulk flows: a sender's
    /// burst is captured together), and comparing a key is far cheaper than a probe.
    last: Option<(FlowKey, u32)>,
    /// Slots taken out whose index entries [`Slots::purge`] removes in one pass, a bit
    /// each, and the list of them.
    doomed: Vec<u64>,
    pending: Vec<(u32, u64)>,
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Slots {
            map: HashTable::new(),
            slots: Vec::new(),
            free: VecDeque::new(),
            last: None,
            doomed: Vec::new(),
            pending: Vec::new(),
        }
    }
}

/// What a lookup found: the slot of a live entry, or the key to create one under.
pub enum Found {
    Live(u32),
    Vacant(FlowKey),
}

impl<T> Slots<T> {
    pub fn live(&self) -> usize {
        self.map.len() - self.pending.len()
    }

    /// The entry of a segment from `src` to `dst`, if there is one.
    #[inline]
    pub fn find(&mut self, src: &Endpoint, dst: &Endpoint) -> Found {
        debug_assert!(self.pending.is_empty(), "looked up between take and purge");
        if let Some((k, slot)) = self.last {
            if k.matches(src, dst) {
                return Found::Live(slot);
            }
        }
        let (key, _) = FlowKey::of(*src, *dst);
        let slots = &self.slots;
        let found = self.map.find(hash(&key), |&s| {
            slots[s as usize].as_ref().is_some_and(|(k, _)| *k == key)
        });
        match found {
            Some(&slot) => {
                self.last = Some((key, slot));
                Found::Live(slot)
            }
            None => Found::Vacant(key),
        }
    }

    /// Adds an entry under a key that has none; its slot.
    pub fn insert(&mut self, key: FlowKey, value: T) -> u32 {
        debug_assert!(self.pending.is_empty(), "inserted between take and purge");
        let slot = match self.free.pop_front() {
            Some(s) => s,
            None => {
                self.slots.push(None);
                (self.slots.len() - 1) as u32
            }
        };
        self.slots[slot as usize] = Some((key, value));
        let slots = &self.slots;
        let h = hash(&key);
        debug_assert!(
            self.map
                .find(h, |&s| s != slot
                    && slots[s as usize].as_ref().is_some_and(|(k, _)| *k == key))
                .is_none(),
            "inserted over a live entry"
        );
        self.map
            .insert_unique(h, slot, |&s| hash(&slots[s as usize].as_ref().expect("a live slot").0));
        self.last = Some((key, slot));
        slot
    }

    pub fn get(&self, slot: u32) -> &T {
        &self.slots[slot as usize].as_ref().expect("a live slot").1
    }

    /// The entry in `slot`, if the slot is live.
    pub fn try_get(&self, slot: u32) -> Option<&T> {
        self.slots.get(slot as usize)?.as_ref().map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, slot: u32) -> &mut T {
        &mut self.slots[slot as usize].as_mut().expect("a live slot").1
    }

    /// The key and entry in a live slot.
    #[inline]
    pub fn entry_mut(&mut self, slot: u32) -> (&FlowKey, &mut T) {
        let (k, v) = self.slots[slot as usize].as_mut().expect("a live slot");
        (&*k, v)
    }

    pub fn key(&self, slot: u32) -> FlowKey {
        self.slots[slot as usize].as_ref().expect("a live slot").0
    }

    /// Removes the entry in a live slot.
    pub fn remove(&mut self, slot: u32) -> (FlowKey, T) {
        let (key, value) = self.slots[slot as usize].take().expect("a live slot");
        match self.map.find_entry(hash(&key), |&s| s == slot) {
            Ok(e) => {
                e.remove();
            }
            Err(_) => unreachable!("a live slot is indexed"),
        }
        self.free.push_back(slot);
        if self.last.is_some_and(|(_, s)| s == slot) {
            self.last = None;
        }
        (key, value)
    }

    /// Takes the entry out of a live slot as [`Slots::remove`] does, but leaves its index
    /// entry for [`Slots::purge`], which must come before the next `find` or `insert`.
    /// Removing one entry costs two cache misses on a large index (its control byte, then
    /// its slot number, at a random place); the budget ends a flood's attempts by the
    /// thousand, and one pass over the index removes them all for less than one miss each.
    pub fn take(&mut self, slot: u32) -> (FlowKey, T) {
        let (key, value) = self.slots[slot as usize].take().expect("a live slot");
        // A bit for every slot: the purge asks about every indexed one.
        self.doomed
            .resize(self.slots.len().div_ceil(64).max(self.doomed.len()), 0);
        self.doomed[slot as usize / 64] |= 1 << (slot % 64);
        self.pending.push((slot, hash(&key)));
        if self.last.is_some_and(|(_, s)| s == slot) {
            self.last = None;
        }
        (key, value)
    }

    /// Removes the index entries of the slots taken out since the last purge, and frees
    /// the slots (in the order they were taken).
    pub fn purge(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        if self.pending.len() * 8 < self.map.len() {
            // Few among many: one by one, as `remove`.
            for &(slot, h) in &self.pending {
                match self.map.find_entry(h, |&s| s == slot) {
                    Ok(e) => {
                        e.remove();
                    }
                    Err(_) => unreachable!("a taken slot is indexed until the purge"),
                }
            }
        } else {
            let doomed = &self.doomed;
            self.map.retain(|&mut s| doomed[s as usize / 64] & (1 << (s % 64)) == 0);
        }
        for &(s, _) in &self.pending {
            self.doomed[s as usize / 64] &= !(1 << (s % 64));
        }
        self.free.extend(self.pending.drain(..).map(|(s, _)| s));
    }

    /// Every live entry, with its slot.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|(_, v)| (i as u32, v)))
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (u32, &mut T)> + '_ {
        self.slots
            .iter_mut()
            .enumerate()
            .filter_map(|(i, s)| s.as_mut().map(|(_, v)| (i as u32, v)))
    }

    /// Bytes the table itself takes per live entry, beyond what `T` allocates: the slot
    /// and the index's entry (slot number, control byte), at hashbrown's 7/8 load.
    pub const fn bytes_per_entry() -> usize {
        std::mem::size_of::<Option<(FlowKey, T)>>() + (std::mem::size_of::<u32>() + 1) * 8 / 7
    }
}

/// The index's hash of a key (FxHash, as the flow table has always used).
#[inline]
fn hash(key: &FlowKey) -> u64 {
    FxBuildHasher.hash_one(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    fn ep(a: u8, port: u16) -> Endpoint {
        Endpoint {
            addr: IpAddr::V4(Ipv4Addr::new(10, 0, 0, a)),
            port,
        }
    }

    #[test]
    fn slots_are_found_from_either_end_and_reused() {
        let mut t: Slots<u32> = Slots::default();
        let (a, b, c) = (ep(1, 40000), ep(2, 80), ep(3, 40001));
        let Found::Vacant(k) = t.find(&a, &b) else { panic!() };
        let s = t.insert(k, 7);
        assert!(
            matches!(t.find(&b, &a), Found::Live(x) if x == s),
            "the shortcut, reversed"
        );
        let Found::Vacant(k2) = t.find(&c, &b) else { panic!() };
        let s2 = t.insert(k2, 8);
        assert!(matches!(t.find(&a, &b), Found::Live(x) if x == s), "through the map");
        assert_eq!(t.remove(s), (k, 7));
        assert!(matches!(t.find(&a, &b), Found::Vacant(_)));
        let s3 = t.insert(k, 9);
        assert_eq!(s3, s, "the freed slot");
        assert_eq!(t.iter().map(|(s, v)| (s, *v)).collect::<Vec<_>>(), [(s, 9), (s2, 8)]);
        assert_eq!(t.live(), 2);
    }

    #[test]
    fn slots_taken_out_leave_the_index_at_the_purge() {
        let mut t: Slots<u32> = Slots::default();
        let eps: Vec<(Endpoint, Endpoint)> = (0..200u16).map(|i| (ep(1, 1000 + i), ep(2, 80))).collect();
        let mut slots = Vec::new();
        for (i, (a, b)) in eps.iter().enumerate() {
            let Found::Vacant(k) = t.find(a, b) else { panic!() };
            slots.push(t.insert(k, i as u32));
        }
        // Every third one taken out, then purged: the others are found, those are not.
        let taken: Vec<u32> = slots.iter().copied().step_by(3).collect();
        for &s in &taken {
            t.take(s);
        }
        t.purge();
        assert_eq!(t.live(), 200 - taken.len());
        for (i, (a, b)) in eps.iter().enumerate() {
            match t.find(a, b) {
                Found::Live(s) => assert!(i % 3 != 0 && *t.get(s) == i as u32, "{i}"),
                Found::Vacant(_) => assert_eq!(i % 3, 0, "{i}"),
            }
        }
        // The freed slots are reused in the order they were taken.
        let Found::Vacant(k) = t.find(&ep(3, 1), &ep(2, 80)) else {
            panic!()
        };
        assert_eq!(t.insert(k, 7), taken[0]);
    }
}
