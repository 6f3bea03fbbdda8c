//! The heavy hitters of a stream in k counters: Space-Saving (Metwally, Agrawal, El Abbadi,
//! "Efficient computation of frequent and top-k elements in data streams", ICDT 2005).
//! Every key counted more than n / k times (n: all counts) is sure to hold a counter;
//! a new key takes the smallest counter's place and inherits its count as its error. So a
//! flood's target or a scanner stays, however many other keys go by — in bounded memory
//! whatever the number of sources (a spoofed flood has one per SYN).

use crate::flow::FxHashMap;
use std::hash::Hash;

#[derive(Clone, Debug)]
pub struct Slot<K, V> {
    pub key: K,
    pub count: u64,
    /// Over-count inherited from the key this one replaced.
    pub error: u64,
    pub value: V,
}

#[derive(Clone, Debug)]
pub struct TopK<K, V> {
    k: usize,
    slots: Vec<Slot<K, V>>,
    /// The slots' counts side by side: the smallest is looked for on every new key (in a
    /// spoofed flood, every SYN), and a scan of 64 adjacent words takes nanoseconds.
    counts: Vec<u64>,
    index: FxHashMap<K, usize>,
}

/// A counter's value, emptied in place when its counter goes to another key (a fresh
/// value per one-off key would be an allocation per SYN in a spoofed flood).
pub trait Clear {
    fn clear(&mut self);
}

impl Clear for () {
    fn clear(&mut self) {}
}

impl<K: Copy + Eq + Hash, V: Default + Clear> TopK<K, V> {
    pub fn new(k: usize) -> Self {
        TopK {
            k,
            slots: Vec::with_capacity(k),
            counts: Vec::with_capacity(k),
            index: FxHashMap::default(),
        }
    }

    /// Counts `key` once; its counter (a new key's value is reset when it takes the place
    /// of another).
    pub fn count(&mut self, key: K) -> &mut Slot<K, V> {
        if let Some(&i) = self.index.get(&key) {
            self.slots[i].count += 1;
            self.counts[i] += 1;
            return &mut self.slots[i];
        }
        if self.slots.len() < self.k {
            self.index.insert(key, self.slots.len());
            self.counts.push(1);
            self.slots.push(Slot {
                key,
                count: 1,
                error: 0,
                value: V::default(),
            });
            return self.slots.last_mut().expect("pushed");
        }
        let mut i = 0;
        for (j, &c) in self.counts.iter().enumerate() {
            if c < self.counts[i] {
                i = j;
            }
        }
        self.counts[i] += 1;
        let s = &mut self.slots[i];
        self.index.remove(&s.key);
        self.index.insert(key, i);
        s.key = key;
        s.error = s.count;
        s.count += 1;
        s.value.clear();
        s
    }

    /// The counter of `key`, if it has one (not counting it).
    pub fn get_mut(&mut self, key: &K) -> Option<&mut Slot<K, V>> {
        let i = *self.index.get(key)?;
        Some(&mut self.slots[i])
    }

    pub fn iter(&self) -> impl Iterator<Item = &Slot<K, V>> {
        self.slots.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heavy_key_survives_a_stream_of_one_off_keys() {
        let mut t: TopK<u64, ()> = TopK::new(8);
        for i in 0..10_000u64 {
            t.count(1_000_000 + i); // one-off keys
            if i % 4 == 0 {
                t.count(7);
            }
        }
        let s = t.iter().find(|s| s.key == 7).expect("the heavy key holds a counter");
        assert!(s.count - s.error <= 2_500 && s.count >= 2_500, "{} - {}", s.count, s.error);
    }
}
