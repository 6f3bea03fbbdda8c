//! Two captures of one path (say at the client and at the server): the same connections
//! matched across them, and what changed between the two points — handshake options
//! removed, added or rewritten (window scale, MSS, SACK-permitted, timestamps; with the NOP
//! runs stripping leaves behind), windows rewritten, ISNs shifted, addresses translated,
//! segments lost or added between the points (per direction), and the delay between them.
//!
//! A connection is claimed in common only on evidence two unrelated captures cannot share
//! (the same ISNs, the same absolute sequence numbers, the same payload at the same
//! offsets; `evidence.rs` weighs it against what chance produces) and whose times one
//! clock offset explains (`segments.rs`); the same 4-tuple at the same time with segments
//! that agree is a likely match, and its findings are never more than likely.
//!
//! Library only: `record::read` takes an open `CaptureReader`; the binary renders the
//! `Comparison` as text or JSON.
//!
//! The direction of travel between the points is found without trusting the clocks: a
//! c2s segment reaches the point nearer the client first, an s2c segment last, so
//! `t_B − t_A` is larger for c2s than for s2c when A is nearer the client (and the
//! difference of the two minima is twice the clock offset plus the delay asymmetry;
//! their sum is the round trip between the points).

mod diff;
mod evidence;
pub mod laws;
mod matching;
mod record;
mod report;
mod segments;

#[cfg(test)]
mod tests;

pub use evidence::{Basis, Strength};
pub use matching::{Match, Outcome, Pair};
pub use record::{
    payload_prefix, read, Builder, ConnRecord, DirRecord, Fp, HsRecord, Sample, Side, MAX_FPS_PER_DIR, MAX_FPS_TOTAL,
    MAX_SAMPLES_PER_DIR, MAX_SAMPLES_TOTAL, SAMPLE_BYTES,
};
pub use report::{
    CaptureInfo, Comparison, ConnComparison, ConnInfo, Difference, DirComparison, HandshakePair, RttSplit,
    SynOptionsInfo,
};

fn info(s: &Side) -> CaptureInfo {
    CaptureInfo {
        path: s.name.clone(),
        format: s.format.clone(),
        packets: s.packets,
        tcp_segments: s.tcp_segments,
        capture_duplicates: s.duplicates,
        connections: s.conns.len() as u64,
        warnings: s.warnings.clone(),
    }
}

/// Matches the connections of two captures and compares each pair.
pub fn compare(a: &Side, b: &Side) -> Comparison {
    let outcome = matching::pair(a, b);
    let pairs = &outcome.pairs;
    let connections: Vec<ConnComparison> = pairs
        .iter()
        .map(|p| diff::compare_conn(&a.conns[p.a], &b.conns[p.b], &p.found))
        .collect();
    let proven = pairs.iter().filter(|p| p.found.strength == Strength::Proven).count();
    let only = |side: &Side, used: Vec<usize>| -> Vec<String> {
        side.conns
            .iter()
            .enumerate()
            .filter(|(i, _)| !used.contains(i))
            .map(|(_, c)| c.label())
            .collect()
    };
    let only_in_a = only(a, pairs.iter().map(|p| p.a).collect());
    let only_in_b = only(b, pairs.iter().map(|p| p.b).collect());
    // Clock offset: each connection's (diff::clock_offset), the median over them.
    let mut offsets: Vec<f64> = connections.iter().filter_map(|c| c.clock_offset_ms).collect();
    offsets.sort_by(|x, y| x.total_cmp(y));
    let clock_offset_ms = offsets.get(offsets.len() / 2).copied();
    let affected = connections.iter().filter(|c| !c.differences.is_empty()).count();
    let likely = connections.len() - proven;
    let matched = match (proven, likely) {
        (0, 0) => "no connection in common".to_string(),
        (0, l) => format!("no connection proven in common ({l} likely)"),
        (p, 0) => format!("{p} connection(s) matched"),
        (p, l) => format!("{p} connection(s) matched, {l} more likely"),
    };
    let effects = match (connections.is_empty(), affected) {
        (true, _) => String::new(),
        (false, 0) => "; no middlebox effects seen".to_string(),
        (false, n) => format!("; {n} with middlebox effects"),
    };
    let summary = format!(
        "{matched} ({} only in A, {} only in B){effects}",
        only_in_a.len(),
        only_in_b.len()
    );
    Comparison {
        a: info(a),
        b: info(b),
        clock_offset_ms,
        connections,
        in_common: proven > 0,
        rejected: outcome.rejected,
        notes: outcome.notes,
        only_in_a,
        only_in_b,
        summary,
    }
}
