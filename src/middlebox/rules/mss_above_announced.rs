//! MB202 `mss_above_announced`: an end announced MSS L in its SYN (or SYN/ACK), yet its
//! own data segments are mostly larger than L. Its interface carries packets of at least
//! that size, so L is not what it announced: the option was lowered between the end and
//! the capture point. (A host can announce less than its MTU allows — Linux `ip route ...
//! advmss`, or an MSS set on the listening socket — but that is rare.)
//!
//! RFC 9293 §3.7.1: the MSS option announces the largest segment the end can receive,
//! normally its MTU minus the IP and TCP headers; RFC 6691: the sender's segment size is
//! bounded by the peer's MSS and its own MTU, not by its own announced MSS.
//!
//! Thresholds: the most frequent payload size of the end's data (at least 8 segments of
//! it) exceeds L and does not exceed the peer's announced MSS (larger "segments" are
//! TSO/GRO aggregates seen on a host, not packets on a wire). Likely.

use super::{handshake, syn_of};
use crate::flow::Dir;
use crate::middlebox::{end_name, segment_name, Confidence, Evidence, Found, HsSegment, Kind};
use crate::tcp::Connection;

const MIN_SEGMENTS: u64 = 8;

pub fn check(conn: &Connection, ev: &Evidence, out: &mut Vec<Found>) {
    if handshake(conn).is_none() {
        return;
    }
    for d in [Dir::C2S, Dir::S2C] {
        let Some(own) = syn_of(conn, d).and_then(|o| o.mss.present()) else {
            continue;
        };
        let peer = syn_of(conn, d.reverse()).and_then(|o| o.mss.present()).unwrap_or(1460) as u32;
        let Some((size, n)) = ev.end(d).sizes.mode() else {
            continue;
        };
        if n < MIN_SEGMENTS || size <= own as u32 || size > peer {
            continue;
        }
        let who = end_name(d);
        out.push(Found {
            hint: false,
            kind: Kind::MssClamped,
            segment: HsSegment::sent_by(d),
            confidence: Confidence::Likely,
            evidence: format!(
                "the {who}'s {seg} announced MSS {own}, but the {who} sends {size}-byte segments ({n} or more of them): its path \
                 carries larger packets than that MSS implies, so the value was lowered after the {who} sent it — clamped between \
                 the {who} and the capture point (RFC 9293 §3.7.1: an end announces what its MTU allows)",
                seg = segment_name(d),
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::middlebox::testutil::{has, Flow, Opts};

    #[test]
    fn a_client_announcing_1200_that_sends_1448_byte_segments() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX.mss(1200).no_ts(), 64240)
            .at_ms(0.1)
            .syn_ack(Opts::LINUX.no_ts(), 65160)
            .at_ms(30.0);
        for i in 0..20u32 {
            f.c2s(1 + i * 1448, 1, 1448, 501, None);
        }
        let out = f.findings();
        let m = out
            .iter()
            .find(|m| m.kind.as_str() == "mss-clamped" && m.confidence.as_str() == "likely");
        assert!(m.is_some_and(|m| m.direction.as_str() == "syn"), "{out:?}");
    }

    #[test]
    fn segments_within_the_announced_mss_or_tso_aggregates_are_fine() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX.no_ts(), 64240)
            .at_ms(0.1)
            .syn_ack(Opts::LINUX.no_ts(), 65160)
            .at_ms(30.0);
        for i in 0..20u32 {
            f.c2s(1 + i * 1448, 1, 1448, 501, None);
        }
        assert!(!has(&f.findings(), "mss-clamped", "syn"));
        let mut f = Flow::new();
        f.syn(Opts::LINUX.no_ts(), 64240)
            .at_ms(0.1)
            .syn_ack(Opts::LINUX.no_ts(), 65160)
            .at_ms(30.0);
        for i in 0..20u32 {
            f.c2s(1 + i * 14480, 1, 14480, 501, None); // TSO, captured on the sending host
        }
        assert!(f.findings().is_empty(), "{:?}", f.findings());
    }
}
