//! Byte-reading helpers shared by the layer decoders.
//!
//! The decoders follow smoltcp's wire views: one length check up front turns the captured
//! slice into a fixed-size array reference (`first_chunk::<N>()`), after which every field
//! read indexes that array with a constant offset — checked by the compiler, free at run
//! time, and unable to panic. Reads at variable offsets go through `get`, never `[]`.

/// Big-endian u16 from two bytes.
#[inline(always)]
pub(crate) const fn be16(hi: u8, lo: u8) -> u16 {
    u16::from_be_bytes([hi, lo])
}

/// Big-endian u32 from four bytes.
#[inline(always)]
pub(crate) const fn be32(b0: u8, b1: u8, b2: u8, b3: u8) -> u32 {
    u32::from_be_bytes([b0, b1, b2, b3])
}

/// `N` bytes starting at `at`, or zeros when the slice is shorter. Total (never panics);
/// with a constant `at` into a fixed-size array it compiles to a plain load.
#[inline(always)]
pub(crate) fn array<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    let mut out = [0u8; N];
    if let Some(s) = b.get(at..).and_then(<[u8]>::first_chunk::<N>) {
        out = *s;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_big_endian_and_total() {
        assert_eq!(be16(0x12, 0x34), 0x1234);
        assert_eq!(be32(0xde, 0xad, 0xbe, 0xef), 0xdead_beef);
        assert_eq!(array::<2>(&[1, 2, 3], 1), [2, 3]);
        assert_eq!(array::<4>(&[1, 2, 3], 1), [0; 4]);
        assert_eq!(array::<4>(&[1, 2, 3], 99), [0; 4]);
    }
}
