//! Finding the same connection in two captures of one path.
//!
//! 1. Same 4-tuple and the same client ISN (both SYNs captured) — or the same 4-tuple and
//!    the same data, when a capture lacks the SYN.
//! 2. NAT (addresses or ports rewritten) and ISN rewriting: the same data in the same
//!    places. Sequence numbers relative to the ISN survive ISN rewriting, absolute ones
//!    survive NAT without it; a connection's first data segments (relative sequence number
//!    and length) are a fingerprint few other connections share.
//! 3. Connections without data (handshakes, resets): the same server port and SYN times
//!    that agree with the clock offset the matched connections show.

use super::record::{rel, ConnRecord, Side};
use crate::flow::{Dir, FxHashMap};

/// Data segments per direction used as a connection's fingerprint.
const KEYS_A: usize = 64;
/// Data segments of the other capture searched for them (losses, a later start) when
/// looking among all connections; among those with the same 4-tuple, all of them.
const KEYS_B: usize = 1024;
/// Share of the fingerprint that must be found.
const MIN_SCORE: f64 = 0.5;
const MIN_KEYS: usize = 4;
/// Handshake-only connections: SYN times must agree with the clock offset within this.
const MAX_SYN_SKEW_NS: i64 = 500_000_000;

/// (direction, sequence number, length) of a data segment.
type Key = (u8, u32, u16);
/// Keys (relative or absolute) -> connections holding them.
type KeyIndex = FxHashMap<(bool, Key), Vec<usize>>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair {
    pub a: usize,
    pub b: usize,
    pub how: &'static str,
}

/// Pairs a's connection `i` with b's `j`, unless either is paired already.
fn take(pairs: &mut Vec<Pair>, used_a: &mut [bool], used_b: &mut [bool], i: usize, j: usize, how: &'static str) {
    if !used_a[i] && !used_b[j] {
        pairs.push(Pair { a: i, b: j, how });
        used_a[i] = true;
        used_b[j] = true;
    }
}

/// (direction, sequence number, length) of the first data segments, relative to the ISN
/// when `relative` (and the ISN is known), else absolute.
fn keys(c: &ConnRecord, relative: bool, n: usize) -> Vec<(u8, u32, u16)> {
    let mut out = Vec::new();
    for d in [Dir::C2S, Dir::S2C] {
        let base = if relative {
            match c.isn(d) {
                Some(isn) => isn,
                None => continue,
            }
        } else {
            0
        };
        out.extend(
            c.dir(d)
                .fps
                .iter()
                .filter(|f| f.len > 0)
                .take(n)
                .map(|f| (d.index() as u8, rel(f.seq, base), f.len)),
        );
    }
    out
}

fn has_isns(c: &ConnRecord) -> bool {
    c.syn.is_some() && c.syn_ack.is_some()
}

/// Share of `a`'s fingerprint found in `b`'s first segments.
fn score(a: &[(u8, u32, u16)], b: &FxHashMap<(u8, u32, u16), ()>) -> f64 {
    if a.len() < MIN_KEYS {
        return 0.0;
    }
    a.iter().filter(|k| b.contains_key(k)).count() as f64 / a.len() as f64
}

pub fn pair(a: &Side, b: &Side) -> Vec<Pair> {
    let mut pairs = Vec::new();
    let mut used_a = vec![false; a.conns.len()];
    let mut used_b = vec![false; b.conns.len()];

    // 1. Same tuple.
    let mut by_tuple: FxHashMap<_, Vec<usize>> = FxHashMap::default();
    for (j, c) in b.conns.iter().enumerate() {
        by_tuple.entry((c.client, c.server)).or_default().push(j);
    }
    for (i, ca) in a.conns.iter().enumerate() {
        let Some(cands) = by_tuple.get(&(ca.client, ca.server)) else {
            continue;
        };
        // Same ISN first.
        let same_isn = cands
            .iter()
            .copied()
            .find(|&j| !used_b[j] && matches!((ca.syn, b.conns[j].syn), (Some(x), Some(y)) if x.isn == y.isn));
        if let Some(j) = same_isn {
            take(&mut pairs, &mut used_a, &mut used_b, i, j, "4-tuple and ISN");
            continue;
        }
        // Without both SYNs: the same data at the same absolute sequence numbers. The
        // captures may start at different moments: look for the first segments of each
        // among all segments of the other.
        if ca.syn.is_none() || cands.iter().any(|&j| b.conns[j].syn.is_none()) {
            let set = |c: &ConnRecord| -> FxHashMap<(u8, u32, u16), ()> {
                keys(c, false, usize::MAX).into_iter().map(|k| (k, ())).collect()
            };
            let ka = keys(ca, false, KEYS_A);
            let all_a = set(ca);
            let best = cands
                .iter()
                .copied()
                .filter(|&j| !used_b[j])
                .map(|j| {
                    let kb = keys(&b.conns[j], false, KEYS_A);
                    (j, score(&ka, &set(&b.conns[j])).max(score(&kb, &all_a)))
                })
                .max_by(|x, y| x.1.total_cmp(&y.1));
            let only = cands.iter().filter(|&&j| !used_b[j]).count() == 1;
            match best {
                Some((j, s)) if s >= MIN_SCORE || (only && ka.len() < MIN_KEYS) => {
                    take(&mut pairs, &mut used_a, &mut used_b, i, j, "4-tuple");
                }
                _ => {}
            }
        }
    }

    // 2. The same data in the same places (NAT, ISN rewriting), looked up both ways (the
    //    captures may start at different moments).
    let mut best: FxHashMap<(usize, usize), f64> = FxHashMap::default();
    for flip in [false, true] {
        let (x, y, used_x, used_y) = if flip {
            (b, a, &used_b, &used_a)
        } else {
            (a, b, &used_a, &used_b)
        };
        let mut index: KeyIndex = FxHashMap::default();
        for (j, c) in y.conns.iter().enumerate().filter(|(j, _)| !used_y[*j]) {
            for relative in [true, false] {
                if relative && !has_isns(c) {
                    continue;
                }
                let mut ks = keys(c, relative, KEYS_B);
                ks.sort_unstable();
                ks.dedup();
                for k in ks {
                    index.entry((relative, k)).or_default().push(j);
                }
            }
        }
        for (i, cx) in x.conns.iter().enumerate().filter(|(i, _)| !used_x[*i]) {
            for relative in [true, false] {
                if relative && !has_isns(cx) {
                    continue;
                }
                let mut kx = keys(cx, relative, KEYS_A);
                kx.sort_unstable();
                kx.dedup();
                if kx.len() < MIN_KEYS {
                    continue;
                }
                let mut hits: FxHashMap<usize, usize> = FxHashMap::default();
                for k in &kx {
                    for &j in index.get(&(relative, *k)).map(|v| v.as_slice()).unwrap_or(&[]) {
                        *hits.entry(j).or_default() += 1;
                    }
                }
                for (j, h) in hits {
                    let s = h as f64 / kx.len() as f64;
                    let key = if flip { (j, i) } else { (i, j) };
                    let e = best.entry(key).or_default();
                    *e = e.max(s);
                }
            }
        }
    }
    let mut scored: Vec<(f64, usize, usize)> = best
        .into_iter()
        .filter(|(_, s)| *s >= MIN_SCORE)
        .map(|((i, j), s)| (s, i, j))
        .collect();
    scored.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
    for (_, i, j) in scored {
        take(&mut pairs, &mut used_a, &mut used_b, i, j, "segment sequence");
    }

    // 3. Handshakes without data: SYN times against the clock offset seen so far.
    let offset = syn_offset(a, b, &pairs).unwrap_or(0);
    let mut timed: Vec<(i64, usize, usize)> = Vec::new();
    for (i, ca) in a.conns.iter().enumerate().filter(|(i, _)| !used_a[*i]) {
        let Some(sa) = ca.syn else { continue };
        for (j, cb) in b.conns.iter().enumerate().filter(|(j, _)| !used_b[*j]) {
            let Some(sb) = cb.syn else { continue };
            if ca.server.port != cb.server.port {
                continue;
            }
            let skew = (sb.t - sa.t - offset).abs();
            if skew <= MAX_SYN_SKEW_NS {
                timed.push((skew, i, j));
            }
        }
    }
    timed.sort();
    for (_, i, j) in timed {
        take(&mut pairs, &mut used_a, &mut used_b, i, j, "handshake timing");
    }
    pairs.sort_by_key(|p| (p.a, p.b));
    pairs
}

/// Median of (SYN time in B − SYN time in A) over matched pairs with both SYNs.
fn syn_offset(a: &Side, b: &Side, pairs: &[Pair]) -> Option<i64> {
    let mut d: Vec<i64> = pairs
        .iter()
        .filter_map(|p| Some(b.conns[p.b].syn?.t - a.conns[p.a].syn?.t))
        .collect();
    if d.is_empty() {
        return None;
    }
    d.sort_unstable();
    Some(d[d.len() / 2])
}
