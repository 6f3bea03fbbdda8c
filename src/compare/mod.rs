//! Two captures of one path (say at the client and at the server): the same connections
//! matched across them, and what changed between the two points — handshake options
//! removed, added or rewritten (window scale, MSS, SACK-permitted, timestamps; with the NOP
//! runs stripping leaves behind), windows rewritten, ISNs shifted, addresses translated,
//! segments lost or added between the points (per direction), and the delay between them.
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
mod matching;
mod record;
mod report;

#[cfg(test)]
mod tests;

pub use matching::Pair;
pub use record::{
    option_area, read, Builder, ConnRecord, DirRecord, Fp, HsRecord, Side, MAX_FPS_PER_DIR, MAX_FPS_TOTAL,
};
pub use report::{
    CaptureInfo, Comparison, ConnComparison, ConnInfo, Difference, DirComparison, HandshakePair, SynOptionsInfo,
};

fn info(s: &Side) -> CaptureInfo {
    CaptureInfo {
        path: s.name.clone(),
        format: s.format.clone(),
        packets: s.packets,
        tcp_segments: s.tcp_segments,
        connections: s.conns.len() as u64,
        warnings: s.warnings.clone(),
    }
}

/// Matches the connections of two captures and compares each pair.
pub fn compare(a: &Side, b: &Side) -> Comparison {
    let pairs = matching::pair(a, b);
    let connections: Vec<ConnComparison> = pairs
        .iter()
        .map(|p| diff::compare_conn(&a.conns[p.a], &b.conns[p.b], p.how))
        .collect();
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
    // Clock offset: the mean of the two directions' minimum delays, signed as B − A, is
    // the offset when the (queue-free) one-way delays between the points are symmetric.
    let mut offsets: Vec<f64> = connections
        .iter()
        .filter_map(|c| {
            let sign = |d: &DirComparison| match d.travel.as_str() {
                "a->b" => Some(1.0),
                "b->a" => Some(-1.0),
                _ => None,
            };
            let x = c.c2s.delay_min_ms? * sign(&c.c2s)?;
            let y = c.s2c.delay_min_ms? * sign(&c.s2c)?;
            Some((x + y) / 2.0)
        })
        .collect();
    offsets.sort_by(|x, y| x.total_cmp(y));
    let clock_offset_ms = offsets.get(offsets.len() / 2).map(|x| (x * 1000.0).round() / 1000.0);
    let affected = connections.iter().filter(|c| !c.differences.is_empty()).count();
    let summary = format!(
        "{} connection(s) matched ({} only in A, {} only in B); {}",
        connections.len(),
        only_in_a.len(),
        only_in_b.len(),
        if affected == 0 {
            "no middlebox effects seen".to_string()
        } else {
            format!("{affected} with middlebox effects")
        }
    );
    Comparison {
        a: info(a),
        b: info(b),
        clock_offset_ms,
        connections,
        only_in_a,
        only_in_b,
        summary,
    }
}
