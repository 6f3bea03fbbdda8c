//! MB203 `mss_below_announced`: a bulk sender never sends a segment as large as both ends'
//! announced MSS allow: it received a smaller MSS than the capture point saw (clamped
//! beyond the capture point, on the segment towards the sender), or path-MTU discovery
//! lowered its segment size (an ICMP "fragmentation needed" the capture did not show), or
//! its application writes small messages with Nagle off. Possible.
//!
//! RFC 9293 §3.7.1 / RFC 6691: the segment size is the peer's MSS less the TCP options in
//! use (12 bytes with timestamps) or the path MTU's; a bulk sender fills it.
//!
//! Thresholds: at least 200 data segments; the largest is at least 60 bytes below
//! `min(client MSS, server MSS) − 12` (more than options and rounding); and the most
//! frequent size is that largest one, and at some point at least 8 of them were in flight
//! (the sender is bulk: full segments of a fixed size, not one small message at a time).

use super::{handshake, syn_of};
use crate::flow::Dir;
use crate::middlebox::{end_name, segment_name, Confidence, Evidence, Found, HsSegment, Kind};
use crate::tcp::Connection;

const MIN_SEGMENTS: u64 = 200;
const MARGIN: u32 = 60;
const BULK_SEGMENTS: u64 = 8;

pub fn check(conn: &Connection, ev: &Evidence, out: &mut Vec<Found>) {
    if handshake(conn).is_none() {
        return;
    }
    for d in [Dir::C2S, Dir::S2C] {
        let (Some(own), Some(peer)) = (
            syn_of(conn, d).and_then(|o| o.mss.present()),
            syn_of(conn, d.reverse()).and_then(|o| o.mss.present()),
        ) else {
            continue;
        };
        let allowed = (own.min(peer) as u32).saturating_sub(12);
        let sizes = &ev.end(d).sizes;
        let Some((mode, n)) = sizes.mode() else { continue };
        if sizes.total < MIN_SEGMENTS || mode != sizes.max || n * 2 < sizes.total || sizes.max + MARGIN > allowed {
            continue;
        }
        // The flight tells bulk from one message at a time; without the receiver's ACKs in
        // the capture it is not known.
        if ev.acks_lacking[d.index()] || ev.end(d).max_flight < BULK_SEGMENTS * sizes.max as u64 {
            continue; // one message at a time (request/response): its size is the application's
        }
        let (who, peer_name) = (end_name(d), end_name(d.reverse()));
        out.push(Found {
            hint: false,
            kind: Kind::MssClamped,
            segment: HsSegment::received_by(d),
            confidence: Confidence::Possible,
            evidence: format!(
                "the {who} sent {total} data segments of at most {max} bytes although both ends announced MSS of at least {m} \
                 (the {peer_name}'s {seg}: {peer}): the {who} works with a smaller MSS — the {peer_name}'s {seg} may have been \
                 clamped beyond the capture point, or path-MTU discovery lowered it",
                total = sizes.total,
                max = sizes.max,
                m = own.min(peer),
                seg = segment_name(d.reverse()),
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::middlebox::testutil::{has, Flow, Opts};

    #[test]
    fn a_server_sending_1188_byte_segments_although_both_announced_1460() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX.no_ts(), 64240)
            .at_ms(30.0)
            .syn_ack(Opts::LINUX.no_ts(), 65160)
            .at_ms(30.1);
        f.c2s(1, 1, 0, 501, None)
            .at_ms(61.0)
            .download(400, 1188, 40, 501, 509, 30.0, false);
        let out = f.findings();
        assert!(has(&out, "mss-clamped", "syn"), "{out:?}");
    }

    #[test]
    fn full_segments_are_fine() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX.no_ts(), 64240)
            .at_ms(30.0)
            .syn_ack(Opts::LINUX.no_ts(), 65160)
            .at_ms(30.1);
        f.c2s(1, 1, 0, 501, None)
            .at_ms(61.0)
            .download(400, 1448, 40, 501, 509, 30.0, false);
        assert!(f.findings().is_empty(), "{:?}", f.findings());
    }
}
