//! The names in a batch folder: `done.jsonl`, `parts/`, and the stable hash that names a
//! unit's part and a schema (and picks a unit's shard).

/// The folder of the units' flows, one Parquet file each.
pub const PARTS: &str = "parts";
/// One JSON record per finished unit.
pub const DONE: &str = "done.jsonl";

/// 64-bit FNV-1a: stable across machines, Rust versions and runs (unlike std's hasher).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}
