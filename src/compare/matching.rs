//! Finding the same connection in two captures, claimed only on evidence two unrelated
//! captures cannot share (`evidence.rs` has the argument and the threshold).
//!
//! What is weighed, for each candidate pair of connections:
//! 1. ISNs: a handshake segment in both captures with the same ISN (32 bits per space).
//!    A different ISN where both captures hold it is an offset (ISN rewriting), no evidence.
//! 2. Absolute numbers, where a handshake is missing: segments with the same sequence and
//!    acknowledgment numbers in both (`64 − log2(n_a n_b)`).
//! 3. Payload, where the numbers were rewritten (NAT, ISN rewriting): the same content at
//!    one offset per direction between the sequence spaces, structure unrelated
//!    connections share left out.
//!
//! Candidates come in two families with their own threshold: the pairs with the same
//! 4-tuple, and every pair of connections (behind a NAT any two could be one). A candidate
//! is matched when its evidence reaches the threshold and the timing law
//! (`segments::TimeCheck`) holds on the segments its offsets pair. A same-tuple candidate
//! short of the evidence, alive at both points at once, whose segments agree at the same
//! relative offsets and obey the law, is a likely match: never more. Strongest first.

use super::evidence::{
    needed_bits, numbers_bits, payload_bits, sample_bits, value_bits, Basis, Strength, MIN_SAMPLES, MIN_SAMPLE_BITS,
};
use super::record::{ConnRecord, Side, SAMPLE_BYTES};
use super::segments::{complete, pair_segments, time_check, Offsets, TimeCheck};
use crate::decode::TcpFlags;
use crate::flow::{Dir, FxHashMap};
use rustc_hash::FxHashSet;

/// Segments per direction of one connection looked for in the other capture.
const KEYS_A: usize = 64;
/// Segments per direction of the other capture they are looked for among, when searching
/// all connections (among those with the same 4-tuple: all of them).
pub const KEYS_B: usize = 1024;
/// Fewest segments that must agree on their absolute numbers (and at least half of
/// those looked for): one coincidence could be chance within a wide range.
const MIN_KEYS: usize = 4;

/// (direction, sequence number, acknowledgment number, payload length) of a segment.
type Key = (u8, u32, u32, u16);
/// Captured payload bytes (length, bytes).
type Content = (u8, [u8; SAMPLE_BYTES]);

/// Two connections found to be one.
#[derive(Clone, Debug, PartialEq)]
pub struct Pair {
    pub a: usize,
    pub b: usize,
    pub found: Match,
}

/// What a match rests on.
#[derive(Clone, Debug, PartialEq)]
pub struct Match {
    pub basis: Basis,
    pub strength: Strength,
    /// Evidence (bits) from ISNs, numbers and payload; supporting evidence adds none.
    pub bits: f64,
    /// The threshold for the candidate's family.
    pub needed: f64,
    /// B's sequence numbers minus A's, per space.
    pub offsets: Offsets,
    pub time: TimeCheck,
    /// The facts, one sentence each.
    pub facts: Vec<String>,
}

impl Match {
    pub fn describe(&self) -> String {
        let verdict = match self.strength {
            Strength::Proven => format!("{:.0} bits of evidence, {:.0} needed", self.bits, self.needed),
            Strength::Likely => format!(
                "{:.0} bits of evidence, {:.0} needed: a likely match only, on evidence two unrelated captures could share",
                self.bits, self.needed
            ),
        };
        format!("{}; {verdict}", self.facts.join("; "))
    }
}

/// The matches, the candidates refused and why nothing (more) matched.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    pub pairs: Vec<Pair>,
    /// Candidates with enough evidence that the timing law refused, one sentence each.
    pub rejected: Vec<String>,
    /// Why connections found no counterpart (when none was proven), one sentence each.
    pub notes: Vec<String>,
}

#[derive(Clone, Copy, Debug)]
struct Vote {
    delta: u32,
    bits: f64,
    samples: usize,
    hypotheses: usize,
}

#[derive(Clone, Debug, Default)]
struct Cand {
    same_tuple: bool,
    isn_equal: [bool; 2],
    /// Segments agreeing on absolute numbers: (agreeing, looked for, looked among).
    numbers: Option<(usize, usize, usize)>,
    payload: [Option<Vote>; 2],
}

/// Keys of the segments carrying an ACK (both spaces' numbers), the first `n` per direction.
fn keys(c: &ConnRecord, n: usize) -> Vec<Key> {
    let mut out: Vec<Key> = [Dir::C2S, Dir::S2C]
        .into_iter()
        .flat_map(|d| {
            c.dir(d)
                .fps
                .iter()
                .filter(|f| f.flags & TcpFlags::ACK != 0)
                .take(n)
                .map(move |f| (d.index() as u8, f.seq, f.ack, f.len))
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Agreement of `x`'s first keys with `ys` (sorted, deduplicated): Some((hits, looked for,
/// looked among)) when enough agree.
fn agreement(x: &[Key], ys: &[Key]) -> Option<(usize, usize, usize)> {
    let hits = x.iter().filter(|k| ys.binary_search(k).is_ok()).count();
    (hits >= MIN_KEYS && 2 * hits >= x.len()).then_some((hits, x.len(), ys.len()))
}

/// Better of two agreements (more segments agreeing).
fn better(x: Option<(usize, usize, usize)>, y: Option<(usize, usize, usize)>) -> Option<(usize, usize, usize)> {
    match (x, y) {
        (Some(p), Some(q)) => Some(if q.0 > p.0 { q } else { p }),
        (p, q) => p.or(q),
    }
}

/// Content seen in two or more connections of one capture: it identifies none of them.
fn common_content(s: &Side) -> FxHashSet<Content> {
    let mut seen: FxHashMap<Content, usize> = FxHashMap::default();
    let mut common = FxHashSet::default();
    for (i, c) in s.conns.iter().enumerate() {
        for d in &c.dirs {
            for smp in &d.samples {
                let e = seen.entry((smp.n, smp.bytes)).or_insert(i);
                if *e != i {
                    common.insert((smp.n, smp.bytes));
                }
            }
        }
    }
    common
}

/// The samples of one direction that can serve as evidence, one per content (its first
/// occurrence), with their bits: not the direction's first data segment (or a copy of
/// it), not common content, not below `MIN_SAMPLE_BITS`.
fn usable(c: &ConnRecord, d: Dir, common: [&FxHashSet<Content>; 2]) -> Vec<(Content, u32, f64)> {
    let samples = &c.dir(d).samples;
    let Some(first) = samples.first() else {
        return Vec::new();
    };
    let mut seen = FxHashSet::default();
    let mut out = Vec::new();
    for s in samples.iter().filter(|s| s.seq != first.seq) {
        let content = (s.n, s.bytes);
        if common.iter().any(|set| set.contains(&content)) || !seen.insert(content) {
            continue;
        }
        let bits = sample_bits(s.content());
        if bits >= MIN_SAMPLE_BITS {
            out.push((content, s.seq, bits));
        }
    }
    out
}

struct Matcher<'s> {
    a: &'s Side,
    b: &'s Side,
    cands: FxHashMap<(usize, usize), Cand>,
}

impl<'s> Matcher<'s> {
    fn cand(&mut self, i: usize, j: usize) -> &mut Cand {
        self.cands.entry((i, j)).or_default()
    }

    fn same_tuple(&mut self) {
        let mut by_tuple: FxHashMap<_, Vec<usize>> = FxHashMap::default();
        for (j, c) in self.b.conns.iter().enumerate() {
            by_tuple.entry((c.client, c.server)).or_default().push(j);
        }
        for (i, ca) in self.a.conns.iter().enumerate() {
            for &j in by_tuple.get(&(ca.client, ca.server)).map(Vec::as_slice).unwrap_or(&[]) {
                self.cand(i, j).same_tuple = true;
            }
        }
    }

    fn isns(&mut self) {
        for d in [Dir::C2S, Dir::S2C] {
            let mut by_isn: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
            for (j, c) in self.b.conns.iter().enumerate() {
                if let Some(isn) = c.isn(d) {
                    by_isn.entry(isn).or_default().push(j);
                }
            }
            for (i, ca) in self.a.conns.iter().enumerate() {
                let Some(isn) = ca.isn(d) else { continue };
                for &j in by_isn.get(&isn).map(Vec::as_slice).unwrap_or(&[]) {
                    self.cand(i, j).isn_equal[d.index()] = true;
                }
            }
        }
    }

    /// Absolute numbers: among all connections through an index of each one's first
    /// segments (both ways: the captures may start at different moments); between
    /// same-tuple candidates over every segment recorded.
    fn numbers(&mut self) {
        let (a, b) = (self.a, self.b);
        for flip in [false, true] {
            let (x, y) = if flip { (b, a) } else { (a, b) };
            let ys: Vec<Vec<Key>> = y.conns.iter().map(|c| keys(c, KEYS_B)).collect();
            let mut index: FxHashMap<Key, Vec<usize>> = FxHashMap::default();
            for (j, ks) in ys.iter().enumerate() {
                for k in ks {
                    index.entry(*k).or_default().push(j);
                }
            }
            for (i, cx) in x.conns.iter().enumerate() {
                let kx = keys(cx, KEYS_A);
                let mut hits: FxHashMap<usize, usize> = FxHashMap::default();
                for k in &kx {
                    for &j in index.get(k).map(Vec::as_slice).unwrap_or(&[]) {
                        *hits.entry(j).or_default() += 1;
                    }
                }
                for (j, _) in hits {
                    if let Some(found) = agreement(&kx, &ys[j]) {
                        let (ia, jb) = if flip { (j, i) } else { (i, j) };
                        let c = self.cand(ia, jb);
                        c.numbers = better(c.numbers, Some(found));
                    }
                }
            }
        }
        let same: Vec<(usize, usize)> = self
            .cands
            .iter()
            .filter(|(_, c)| c.same_tuple && c.numbers.is_none())
            .map(|(k, _)| *k)
            .collect();
        for (i, j) in same {
            let (ca, cb) = (&a.conns[i], &b.conns[j]);
            let found = better(
                agreement(&keys(ca, KEYS_A), &keys(cb, usize::MAX)),
                agreement(&keys(cb, KEYS_A), &keys(ca, usize::MAX)),
            );
            self.cand(i, j).numbers = found;
        }
    }

    /// Payload: each usable content of A proposes, for the B connection holding it, the
    /// offset between the two sequence spaces; the offset with the most evidence wins.
    fn payload(&mut self) {
        let (a, b) = (self.a, self.b);
        let (ca_common, cb_common) = (common_content(a), common_content(b));
        let common = [&ca_common, &cb_common];
        for d in [Dir::C2S, Dir::S2C] {
            let mut index: FxHashMap<Content, Vec<(usize, u32)>> = FxHashMap::default();
            for (j, c) in b.conns.iter().enumerate() {
                for s in &c.dir(d).samples {
                    index.entry((s.n, s.bytes)).or_default().push((j, s.seq));
                }
            }
            for (i, c) in a.conns.iter().enumerate() {
                // (j, offset) -> (bits, samples)
                let mut votes: FxHashMap<(usize, u32), (f64, usize)> = FxHashMap::default();
                for (content, seq, bits) in usable(c, d, common) {
                    let mut proposed: Vec<(usize, u32)> = index
                        .get(&content)
                        .map(Vec::as_slice)
                        .unwrap_or(&[])
                        .iter()
                        .map(|&(j, seq_b)| (j, seq_b.wrapping_sub(seq)))
                        .collect();
                    proposed.sort_unstable();
                    proposed.dedup();
                    for p in proposed {
                        let v = votes.entry(p).or_default();
                        v.0 += bits;
                        v.1 += 1;
                    }
                }
                let mut by_j: FxHashMap<usize, Vec<(u32, f64, usize)>> = FxHashMap::default();
                for ((j, delta), (bits, n)) in votes {
                    by_j.entry(j).or_default().push((delta, bits, n));
                }
                for (j, mut offered) in by_j {
                    // Where both captures hold this direction's handshake, the offset is
                    // the ISNs' difference: one hypothesis, no choice to pay for.
                    if let (Some(x), Some(y)) = (c.isn(d), b.conns[j].isn(d)) {
                        offered.retain(|o| o.0 == y.wrapping_sub(x));
                    }
                    let hypotheses = offered.len();
                    let best = offered
                        .into_iter()
                        .max_by(|p, q| p.1.total_cmp(&q.1).then(q.0.cmp(&p.0)));
                    if let Some((delta, bits, samples)) = best {
                        self.cand(i, j).payload[d.index()] = Some(Vote {
                            delta,
                            bits,
                            samples,
                            hypotheses,
                        });
                    }
                }
            }
        }
    }

    /// Weighs one candidate; None when it is neither proven nor likely.
    fn judge(&self, i: usize, j: usize, c: &Cand, tuple_pairs: u64) -> Result<Option<Match>, String> {
        let (ca, cb) = (&self.a.conns[i], &self.b.conns[j]);
        let all_pairs = self.a.conns.len() as u64 * self.b.conns.len() as u64;
        let needed = needed_bits(if c.same_tuple { tuple_pairs } else { all_pairs });
        let mut facts = Vec::new();
        let mut off: Offsets = [None, None];
        for d in [Dir::C2S, Dir::S2C] {
            if let (Some(x), Some(y)) = (ca.isn(d), cb.isn(d)) {
                off[d.index()] = Some(y.wrapping_sub(x));
            }
        }
        // Sequence-space identity: ISNs, or the segments' absolute numbers.
        // Each space's base: its ISN, or the first sequence number seen (a capture
        // without the handshake); a hand-picked base proves little (`value_bits`).
        let base = |d: Dir| ca.isn(d).or(ca.dir(d).first_seq).map_or(0.0, value_bits);
        let isn_bits: f64 = [Dir::C2S, Dir::S2C]
            .into_iter()
            .filter(|d| c.isn_equal[d.index()])
            .map(|d| ca.isn(d).map_or(0.0, value_bits))
            .sum();
        let spaces = |d: Dir| if d == Dir::C2S { "client's" } else { "server's" };
        let mut bits_s = isn_bits;
        let mut basis_s = if c.same_tuple { Basis::TupleAndIsn } else { Basis::Isn };
        if isn_bits > 0.0 {
            let same: Vec<&str> = [Dir::C2S, Dir::S2C]
                .into_iter()
                .filter(|d| c.isn_equal[d.index()])
                .map(spaces)
                .collect();
            // Under half the bits a drawn ISN has: written with few digits.
            let picked = if [Dir::C2S, Dir::S2C]
                .into_iter()
                .any(|d| c.isn_equal[d.index()] && ca.isn(d).is_some_and(|v| value_bits(v) < 16.0))
            {
                " only: a hand-picked number, as test generators write"
            } else {
                ""
            };
            facts.push(format!(
                "the same {} ISN in both captures ({isn_bits:.0} bits{picked})",
                same.join(" and ").replace("'s", "")
            ));
        }
        if let Some((hits, n_a, n_b)) = c.numbers {
            let consistent = off.iter().all(|o| o.is_none_or(|o| o == 0));
            let nb = numbers_bits(n_a, n_b).min(base(Dir::C2S) + base(Dir::S2C));
            if consistent && nb > bits_s {
                bits_s = nb;
                basis_s = Basis::SequenceNumbers;
                off = [Some(0), Some(0)];
                facts.push(format!(
                    "{hits} of {n_a} segments carry the same sequence and acknowledgment numbers in both captures ({nb:.0} bits: 64 − log2 of the {n_a} × {n_b} segments compared, at most what the spaces' bases can prove)"
                ));
            }
        }
        // Payload, at the offsets found so far or at the ones it proposes: needed only
        // where the numbers do not prove the match alone.
        let mut bits_p = 0.0;
        let mut samples = 0;
        let mut payload_facts = Vec::new();
        for d in [Dir::C2S, Dir::S2C] {
            let Some(v) = c.payload[d.index()].filter(|_| bits_s < needed) else {
                continue;
            };
            if off[d.index()].is_some_and(|o| o != v.delta) {
                continue;
            }
            let b = payload_bits(v.bits, v.hypotheses);
            if b <= 0.0 {
                continue;
            }
            off[d.index()] = Some(v.delta);
            bits_p += b;
            samples += v.samples;
            payload_facts.push(format!(
                "{} {} payload samples at the same offsets ({b:.0} bits{})",
                v.samples,
                d.as_str(),
                if v.hypotheses > 1 {
                    format!(", the offset chosen among {}", v.hypotheses)
                } else {
                    String::new()
                }
            ));
        }
        if samples < MIN_SAMPLES {
            bits_p = 0.0;
        } else {
            facts.extend(payload_facts);
        }
        let bits = bits_s + bits_p;
        let basis = if bits_s >= needed || bits_p <= bits_s {
            basis_s
        } else {
            Basis::Payload
        };
        let off = complete(ca, cb, off);
        let m = [
            pair_segments(ca, cb, Dir::C2S, &off),
            pair_segments(ca, cb, Dir::S2C, &off),
        ];
        let time = time_check(ca, cb, &m);
        let paired = m[0].len() + m[1].len();
        if bits >= needed {
            if paired == 0 || !time.holds() {
                return Err(format!(
                    "{} (A) and {} (B): {}, but {}",
                    ca.label(),
                    cb.label(),
                    facts.join("; "),
                    if paired == 0 {
                        "no segment is found at both points".to_string()
                    } else {
                        time.describe()
                    }
                ));
            }
            if c.same_tuple && basis != Basis::TupleAndIsn {
                facts.insert(0, "the same 4-tuple".into());
            }
            facts.push(time.describe());
            return Ok(Some(Match {
                basis,
                strength: Strength::Proven,
                bits,
                needed,
                offsets: off,
                time,
                facts,
            }));
        }
        // Supporting evidence only: the same 4-tuple, alive at both points at once,
        // segments that agree at the same relative offsets, times that obey the law.
        let data = |c: &ConnRecord| c.dirs.iter().map(|d| d.fps.len()).sum::<usize>();
        let enough = paired >= MIN_KEYS && 2 * paired >= data(ca).min(data(cb));
        if c.same_tuple && time.overlap && time.holds() && enough {
            let mut facts = vec![
                "the same 4-tuple at the same time".to_string(),
                format!(
                    "{paired} segments agree in length and flags at the same offsets from the ISNs (supporting evidence: any two transfers of one stack do)"
                ),
                time.describe(),
            ];
            if bits > 0.0 {
                facts.insert(1, format!("{bits:.0} bits from numbers or payload"));
            }
            let rewritten: Vec<&str> = [Dir::C2S, Dir::S2C]
                .into_iter()
                .filter(|d| off[d.index()].is_some_and(|o| o != 0))
                .map(spaces)
                .collect();
            if !rewritten.is_empty() {
                facts.insert(1, format!("the {} ISN differs", rewritten.join(" and ")));
            }
            return Ok(Some(Match {
                basis: Basis::TupleAndTime,
                strength: Strength::Likely,
                bits,
                needed,
                offsets: off,
                time,
                facts,
            }));
        }
        Ok(None)
    }
}

/// Why a capture holds no payload that could identify a connection, if so.
fn payload_note(s: &Side, tag: &str) -> Option<String> {
    let uncaptured: u64 = s.conns.iter().flat_map(|c| &c.dirs).map(|d| d.payload_uncaptured).sum();
    let samples: usize = s.conns.iter().flat_map(|c| &c.dirs).map(|d| d.samples.len()).sum();
    let usable: usize = s
        .conns
        .iter()
        .flat_map(|c| &c.dirs)
        .flat_map(|d| &d.samples)
        .filter(|x| sample_bits(x.content()) >= MIN_SAMPLE_BITS)
        .count();
    if usable > 0 {
        return None;
    }
    Some(if samples == 0 && uncaptured > 0 {
        format!("{tag} holds no payload (the snaplen cut it from all {uncaptured} data segments): a connection whose addresses and ISNs were rewritten cannot be recognised in it")
    } else if samples > 0 {
        format!("{tag}'s payload cannot identify a connection: all {samples} samples kept are fill (under {MIN_SAMPLE_BITS:.0} bits each: zeros, a repeated byte)")
    } else {
        format!("{tag} holds no data segments")
    })
}

pub fn pair(a: &Side, b: &Side) -> Outcome {
    let mut m = Matcher {
        a,
        b,
        cands: FxHashMap::default(),
    };
    m.same_tuple();
    m.isns();
    m.numbers();
    m.payload();
    let tuple_pairs = m.cands.values().filter(|c| c.same_tuple).count() as u64;
    let mut out = Outcome::default();
    let mut found: Vec<(usize, usize, Match)> = Vec::new();
    let mut keys: Vec<(usize, usize)> = m.cands.keys().copied().collect();
    keys.sort_unstable();
    for (i, j) in keys {
        match m.judge(i, j, &m.cands[&(i, j)], tuple_pairs) {
            Ok(Some(x)) => found.push((i, j, x)),
            Ok(None) => {}
            Err(why) => out.rejected.push(why),
        }
    }
    found.sort_by(|x, y| {
        (y.2.strength, y.2.bits)
            .partial_cmp(&(x.2.strength, x.2.bits))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then((x.0, x.1).cmp(&(y.0, y.1)))
    });
    let mut used_a = vec![false; a.conns.len()];
    let mut used_b = vec![false; b.conns.len()];
    for (i, j, x) in found {
        if !used_a[i] && !used_b[j] {
            used_a[i] = true;
            used_b[j] = true;
            out.pairs.push(Pair { a: i, b: j, found: x });
        }
    }
    out.pairs.sort_by_key(|p| (p.a, p.b));
    if !out.pairs.iter().any(|p| p.found.strength == Strength::Proven) {
        let unproven_tuples = m
            .cands
            .iter()
            .filter(|((i, j), c)| c.same_tuple && !out.pairs.iter().any(|p| p.a == *i && p.b == *j))
            .count();
        let handshakes = |s: &Side| s.conns.iter().any(|c| c.syn.is_some() || c.syn_ack.is_some());
        if handshakes(a) && handshakes(b) && !m.cands.values().any(|c| c.isn_equal.iter().any(|&e| e)) {
            out.notes.push("no ISN of one capture is found in the other".into());
        }
        if tuple_pairs == 0 {
            out.notes
                .push("no connection has the same 4-tuple in both captures".into());
        } else if unproven_tuples > 0 {
            out.notes.push(format!(
                "{unproven_tuples} pair(s) of connections with the same 4-tuple share neither an ISN nor their sequence numbers"
            ));
        }
        out.notes.extend(payload_note(a, "A"));
        out.notes.extend(payload_note(b, "B"));
    }
    out
}
