//! Distinct counts in constant memory: exact up to [`EXACT`] values (the thresholds the
//! scan rules test, 15 and 25, must not be missed by a collision), then HyperLogLog
//! (Flajolet, Fusy, Gandouet, Meunier, "HyperLogLog: the analysis of a near-optimal
//! cardinality estimation algorithm", 2007), with linear counting for small counts (the
//! paper's small-range correction; HLL++, Heule et al. 2013, also starts exact). 2^10
//! registers of one byte: a standard error of 1.04 / sqrt(1024) = 3.3% for large counts.
//!
//! Hand-written (60 lines) rather than a crate: the watcher needs at most a kilobyte per
//! tracked target and a hash that is the same on every run and machine (so the same
//! capture gives the same figures), where the crates found allocate 2^12+ registers and
//! hash with a randomly keyed SipHash by default.

const P: u32 = 10;
const M: usize = 1 << P;
/// Distinct values counted exactly (as 64-bit hashes: a collision among 32 of them has
/// a probability below 1e-16) before the registers take over. Same memory as the registers.
pub const EXACT: usize = 32;

#[derive(Clone, Debug, Default)]
pub struct Hll {
    exact: Vec<u64>,
    registers: Option<Box<[u8; M]>>,
}

/// SplitMix64's finaliser (Steele, Lea, Flood, "Fast splittable pseudorandom number
/// generators", 2014): every input bit moves every output bit, as HyperLogLog needs.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl Hll {
    /// Adds an element, given as a 64-bit value (it is mixed here).
    pub fn add(&mut self, v: u64) {
        let h = mix(v);
        if let Some(r) = self.registers.as_deref_mut() {
            Self::set(r, h);
        } else if !self.exact.contains(&h) {
            if self.exact.len() < EXACT {
                self.exact.push(h);
            } else {
                let mut r = Box::new([0u8; M]);
                for &x in self.exact.iter().chain([&h]) {
                    Self::set(&mut r, x);
                }
                self.exact.clear();
                self.registers = Some(r);
            }
        }
    }

    fn set(r: &mut [u8; M], h: u64) {
        let idx = (h >> (64 - P)) as usize;
        let rest = h << P;
        let rank = (rest.leading_zeros() + 1).min(64 - P + 1) as u8;
        if r[idx] < rank {
            r[idx] = rank;
        }
    }

    /// Forgets everything (keeping the exact list's room, so reuse does not allocate).
    pub fn clear(&mut self) {
        self.exact.clear();
        self.registers = None;
    }

    /// Whether at least `n` distinct elements were added, for `n` up to [`EXACT`] (exact,
    /// and cheap: asked on every failed attempt).
    pub fn at_least(&self, n: u64) -> bool {
        debug_assert!(n as usize <= EXACT);
        self.registers.is_some() || self.exact.len() as u64 >= n
    }

    /// The number of distinct elements added (estimated beyond [`EXACT`]).
    pub fn count(&self) -> u64 {
        let Some(r) = self.registers.as_deref() else {
            return self.exact.len() as u64;
        };
        let m = M as f64;
        let zeros = r.iter().filter(|&&x| x == 0).count();
        let sum: f64 = r.iter().map(|&x| 2f64.powi(-(x as i32))).sum();
        let alpha = 0.7213 / (1.0 + 1.079 / m);
        let raw = alpha * m * m / sum;
        let e = if raw <= 2.5 * m && zeros > 0 {
            m * (m / zeros as f64).ln()
        } else {
            raw
        };
        e.round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_counts_are_near_exact_and_large_ones_within_the_error() {
        for n in [0u64, 1, 5, 15, 25, 32] {
            let mut h = Hll::default();
            for i in 0..n {
                h.add(i * 7919);
                h.add(i * 7919); // repeats do not count
            }
            assert_eq!(h.count(), n);
            assert!(h.at_least(n));
            if n < 32 {
                assert!(!h.at_least(n + 1));
            }
        }
        for n in [33u64, 100, 1000] {
            let mut h = Hll::default();
            for i in 0..n {
                h.add(i * 7919);
            }
            let err = (h.count() as f64 / n as f64 - 1.0).abs();
            assert!(err < 0.15, "{n}: {}", h.count());
        }
        for n in [10_000u64, 1_000_000] {
            let mut h = Hll::default();
            for i in 0..n {
                h.add(i);
            }
            let err = (h.count() as f64 / n as f64 - 1.0).abs();
            assert!(err < 3.0 * 0.033, "{n}: {}", h.count());
        }
    }
}
