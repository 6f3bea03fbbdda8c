//! xorshift64* seeded through SplitMix64: tiny, fast, and the same on every platform.

/// SplitMix64 step: turns any seed (0 included) into a well-mixed 64-bit value.
pub(super) fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[derive(Clone, Debug)]
pub(super) struct Rng(u64);

impl Rng {
    /// A generator for one purpose (`stream`) of one seed: streams are independent, so
    /// adding losses does not change the ISNs.
    pub fn new(seed: u64, stream: u64) -> Self {
        let s = splitmix64(seed ^ splitmix64(stream));
        Rng(if s == 0 { 0x2545_F491_4F6C_DD1D } else { s })
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}
