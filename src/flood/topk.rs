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
    /// Once every counter is taken: the least count, and which counters hold it (a bit
    /// each, k <= 64). Counts only grow, by one at a time, so the least changes only when
    /// every counter holding it has grown: a spoofed flood's new keys (each taking the
    /// first least counter) scan the counters once per k keys instead of once per key.
    least: Option<(u64, u64)>,
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
        assert!((1..=64).contains(&k), "the least counters are a 64-bit mask");
        TopK {
            k,
            slots: Vec::with_capacity(k),
            counts: Vec::with_capacity(k),
            least: None,
            index: FxHashMap::default(),
        }
    }

    /// Counter `i` grew by one: it no longer holds the least count.
    fn grew(&mut self, i: usize) {
        if let Some((least, mask)) = &mut self.least {
            if self.counts[i] == *least + 1 {
                *mask &= !(1 << i);
                if *mask == 0 {
                    self.least = None;
                }
            }
        }
    }

    /// Counts `key` once; its counter (a new key's value is reset when it takes the place
    /// of another).
    pub fn count(&mut self, key: K) -> &mut Slot<K, V> {
        if let Some(&i) = self.index.get(&key) {
            self.slots[i].count += 1;
            self.counts[i] += 1;
            self.grew(i);
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
        // The first counter with the least count.
        let counts = &self.counts;
        let (_, mask) = *self.least.get_or_insert_with(|| {
            let least = counts.iter().copied().min().expect("k counters");
            let mask = counts
                .iter()
                .enumerate()
                .filter(|&(_, &c)| c == least)
                .fold(0u64, |m, (j, _)| m | 1 << j);
            (least, mask)
        });
        let i = mask.trailing_zeros() as usize;
        self.counts[i] += 1;
        self.grew(i);
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

    /// The counter a new key takes is the first with the least count, as a scan finds it.
    #[test]
    fn a_new_key_takes_the_first_least_counter() {
        let mut t: TopK<u64, ()> = TopK::new(8);
        let mut x = 1u64;
        for n in 0..20_000u64 {
            // Some keys come back (to grow their counters unevenly), most are new.
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let key = if x >> 61 == 0 { x >> 62 } else { 100 + n };
            let before: Vec<u64> = t.counts.clone();
            let fresh = t.index.get(&key).is_none() && t.slots.len() == t.k;
            t.count(key);
            if fresh {
                let least = *before.iter().min().unwrap();
                let first = before.iter().position(|&c| c == least).unwrap();
                assert_eq!(t.index[&key], first, "key {n}");
            }
            assert_eq!(t.counts, t.slots.iter().map(|s| s.count).collect::<Vec<_>>());
        }
    }

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
        assert!(
            s.count - s.error <= 2_500 && s.count >= 2_500,
            "{} - {}",
            s.count,
            s.error
        );
    }
}
