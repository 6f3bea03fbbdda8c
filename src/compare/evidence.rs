//! What a coincidence between two captures is worth: the evidence, in bits, that a
//! connection of one capture is a connection of the other, and the threshold, from what
//! random chance produces between unrelated connections.
//!
//! The null hypothesis is that the two connections are unrelated. Under it:
//!
//! - **ISNs** are independent and uniform over 2^32: RFC 6528 §3 (and RFC 9293 §3.4.1)
//!   make the ISN `M + F(4-tuple, secret)` with `F` a keyed hash, so no connection's ISN
//!   tells another's. The same ISN in both captures has chance 2^-32 per sequence space.
//! - **Absolute sequence and acknowledgment numbers** inherit that randomness: a segment
//!   of each capture carrying the same `(seq, ack)` needs both spaces' offsets to
//!   coincide, chance 2^-64; over the `n_a × n_b` pairs of segments compared the chance
//!   of any such coincidence is at most `n_a n_b 2^-64` (union bound).
//! - **Payload**: a sample of `n` bytes whose empirical byte distribution has entropy `Ĥ`
//!   bits per byte coincides by chance with probability about `2^-(n Ĥ)`; samples of
//!   distinct content are independent. When the offset between the sequence spaces had to
//!   be found (ISNs rewritten, handshake missing), it was chosen among `h` offsets the
//!   samples proposed, so `log2 h` bits are spent on choosing it.
//! - **Hand-picked numbers** are the exception: a capture made by a test generator or a
//!   stack that ignores RFC 6528 starts its sequence spaces at 0, 1, 1000, 0x10000. What
//!   a number proves is what it takes to describe it (minimum description length,
//!   Rissanen 1978): a value written with few digits in positional notation (`m × 10^z`,
//!   `m × 16^z` with a small `m`) was more likely chosen than drawn, so an ISN (or the
//!   base of a space seen without its handshake) is worth `min(32, value_bits)` bits
//!   (`value_bits`). Unrelated captures made by one generator share such numbers.
//! - **Segment lengths, timing order, options and timestamps** carry no such randomness:
//!   two bulk transfers of one stack put 1448-byte segments at the same relative offsets,
//!   two runs of one program send the same options. They support a match, never make one.
//!
//! Evidence is `-log2` of the chance. A comparison tries `N` candidate pairs (the pairs
//! with the same 4-tuple, or every pair of connections when the addresses may have been
//! translated); the chance of a false match anywhere among them is at most `N 2^-E`. A
//! connection is claimed in common when `E >= FALSE_MATCH_BITS + log2 N`: a false claim
//! has a chance below 2^-20 (one in a million) in each family, whatever the capture sizes.
//!
//! Payload is not random where unrelated connections share structure; what the captures
//! show of that is left out before anything is counted:
//! - a direction's first data segment (a protocol's greeting: "GET / HTTP/1.1", a TLS
//!   ClientHello's fixed fields, an SSH banner);
//! - any content seen in two connections of one capture (a common header, a file fetched
//!   twice in the same capture);
//! - samples under `MIN_SAMPLE_BITS` (zero fill, one repeated byte).
//!
//! What the captures cannot show is the same content fetched in both captures by two
//! unrelated connections; the timing law (`segments::TimeCheck`) is then the last check.

/// The chance of a false claim allowed per family of candidates: 2^-20.
pub const FALSE_MATCH_BITS: f64 = 20.0;
/// The evidence one space's ISN gives when both captures hold it and it is the same.
pub const ISN_BITS: f64 = 32.0;
/// A sample below this carries no usable evidence (zero fill, a repeated byte, a few
/// characters).
pub const MIN_SAMPLE_BITS: f64 = 8.0;
/// Payload evidence needs this many samples of distinct content: one alone could be a
/// structure the exclusions did not catch.
pub const MIN_SAMPLES: usize = 3;

/// The evidence needed to claim a match among `candidates` pairs.
pub fn needed_bits(candidates: u64) -> f64 {
    FALSE_MATCH_BITS + (candidates.max(1) as f64).log2()
}

/// Evidence from absolute sequence and acknowledgment numbers shared by at least one
/// segment, `n_a` and `n_b` segments compared: `64 - log2(n_a n_b)`.
pub fn numbers_bits(n_a: usize, n_b: usize) -> f64 {
    (64.0 - ((n_a.max(1) as f64) * (n_b.max(1) as f64)).log2()).max(0.0)
}

/// What a sequence-space base of value `v` can prove: the bits it takes to write `v` as
/// `m × b^z` (`b` 10 or 16, `m` not a multiple of `b`: `log2(m + 1)` bits for `m`,
/// `log2` of the exponents a 32-bit value allows for `z`), at most `ISN_BITS`. A value
/// drawn uniformly (RFC 6528) needs all 32; 1000 needs 4.3, 0 needs none.
pub fn value_bits(v: u32) -> f64 {
    if v == 0 {
        return 0.0;
    }
    let written = |base: u32, exponents: f64| {
        let mut m = v;
        while m % base == 0 {
            m /= base;
        }
        (m as f64 + 1.0).log2() + exponents.log2()
    };
    // 10^0..10^9 and 16^0..16^7 fit in 32 bits.
    written(10, 10.0).min(written(16, 8.0)).min(ISN_BITS)
}

/// Evidence in one payload sample: its length times the plug-in (empirical) entropy of its
/// bytes, `n log2 n - Σ k log2 k` over the counts `k` of each byte value.
pub fn sample_bits(bytes: &[u8]) -> f64 {
    let n = bytes.len();
    if n < 2 {
        return 0.0;
    }
    let mut count = [0u32; 256];
    for &b in bytes {
        count[b as usize] += 1;
    }
    let xlogx = |k: f64| if k > 0.0 { k * k.log2() } else { 0.0 };
    let bits = xlogx(n as f64) - count.iter().map(|&k| xlogx(k as f64)).sum::<f64>();
    bits.max(0.0)
}

/// Payload evidence for one direction: the bits of the distinct samples matched at the
/// chosen offset, less what choosing it among `hypotheses` offsets costs.
pub fn payload_bits(matched_bits: f64, hypotheses: usize) -> f64 {
    (matched_bits - (hypotheses.max(1) as f64).log2()).max(0.0)
}

/// How strongly two connections are shown to be one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Strength {
    /// The same 4-tuple at overlapping times, segments that agree, timing that obeys the
    /// law — but nothing two unrelated captures could not share: findings at most
    /// "likely".
    Likely,
    /// Evidence above the threshold: the findings may be certain.
    Proven,
}

impl Strength {
    pub fn as_str(self) -> &'static str {
        match self {
            Strength::Likely => "likely",
            Strength::Proven => "proven",
        }
    }
}

/// What a match mainly rests on (the `matched_by` vocabulary).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basis {
    /// The same 4-tuple and the same ISN(s).
    TupleAndIsn,
    /// The same ISNs under other addresses or ports (NAT that keeps sequence numbers).
    Isn,
    /// The same absolute sequence and acknowledgment numbers on the segments (a capture
    /// without the handshake).
    SequenceNumbers,
    /// The same payload bytes at the same offsets (NAT and ISN rewriting).
    Payload,
    /// The same 4-tuple at the same time: supporting evidence only.
    TupleAndTime,
}

impl Basis {
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::TupleAndIsn => "4-tuple and ISN",
            Basis::Isn => "ISN",
            Basis::SequenceNumbers => "sequence numbers",
            Basis::Payload => "payload",
            Basis::TupleAndTime => "4-tuple and time",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_bits_are_zero_for_fill_and_near_four_per_byte_for_distinct_bytes() {
        assert_eq!(sample_bits(&[0; 16]), 0.0);
        assert_eq!(sample_bits(&[7]), 0.0);
        let distinct: Vec<u8> = (0..16).collect();
        assert!((sample_bits(&distinct) - 64.0).abs() < 1e-9);
        // two values, half each: one bit per byte
        let half: Vec<u8> = (0..16).map(|i| (i % 2) as u8).collect();
        assert!((sample_bits(&half) - 16.0).abs() < 1e-9);
        // a protocol greeting still scores: it is excluded by position, not by content
        assert!(sample_bits(b"GET / HTTP/1.1\r\n") > 40.0);
    }

    #[test]
    fn the_threshold_grows_with_the_candidates_tried() {
        assert_eq!(needed_bits(0), FALSE_MATCH_BITS);
        assert_eq!(needed_bits(1), FALSE_MATCH_BITS);
        assert!((needed_bits(1 << 20) - 40.0).abs() < 1e-9);
        // one ISN in common proves a same-tuple match, not one among a million pairs
        assert!(ISN_BITS >= needed_bits(1));
        assert!(ISN_BITS < needed_bits(1 << 20));
        assert!(2.0 * ISN_BITS >= needed_bits(1 << 40));
    }

    #[test]
    fn hand_picked_numbers_prove_little_and_drawn_ones_their_32_bits() {
        assert_eq!(value_bits(0), 0.0);
        assert!(value_bits(1000) < 5.0);
        assert!(value_bits(1) < 5.0);
        assert!(value_bits(0x1_0000) < 5.0);
        assert!(value_bits(5_000_000) < 7.0);
        assert!(value_bits(777_000_000) < 14.0);
        assert_eq!(value_bits(3_626_112_374), ISN_BITS);
        assert_eq!(value_bits(0x9e37_79b9), ISN_BITS);
        // one such ISN in common no longer proves a match on its own
        assert!(value_bits(1000) < needed_bits(1));
    }

    #[test]
    fn numbers_bits_pay_for_the_segments_compared() {
        assert_eq!(numbers_bits(1, 1), 64.0);
        assert!((numbers_bits(128, 131_072) - 40.0).abs() < 1e-9);
        assert_eq!(numbers_bits(usize::MAX, usize::MAX), 0.0);
        assert_eq!(payload_bits(10.0, 1024), 0.0);
        assert!((payload_bits(64.0, 4) - 62.0).abs() < 1e-9);
    }
}
