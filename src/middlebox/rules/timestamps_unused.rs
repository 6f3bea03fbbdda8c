//! MB302 `timestamps_unused`: both handshake segments carry timestamps, yet the client
//! never echoes one afterwards: it did not negotiate them, i.e. the server's option did
//! not reach it — removed from the SYN/ACK between the capture point and the client.
//!
//! RFC 7323 §3.2: once negotiated, "a TCP MUST send the TSopt ... in every non-<RST>
//! segment", TSecr echoing the peer's most recent TSval; a TCP that did not receive the
//! option sends none. A SYN/ACK with timestamps at the capture point proves the server
//! received the client's option, so only the client can have missed one: the SYN/ACK's.
//! (The server then echoes the SYN's TSval forever; nothing new to echo.) The tracker
//! counts echoes of a TSval seen for the first time (`tcp::rtt`'s timestamp sampler); a
//! client that negotiated timestamps echoes the SYN/ACK's TSval in its very first ACK.
//!
//! Thresholds: at least 8 client segments after the handshake, none echoing and none
//! carrying the option at all. A client that sends the option proves it negotiated
//! timestamps, whatever its TSecr holds: echoes that never match a TSval the server sent
//! are timestamps rewritten on the way (a firewall that modulates them, as pf's `modulate
//! state` and `scrub` do) or a stack's own offsets, not a stripped option (teto's
//! client_1_tcp_only: every client segment carries timestamps whose TSecr never matched).
//! Likely, not certain: the client's option could also be removed between it and the
//! capture point, which is stripping all the same.

use super::{handshake, has};
use crate::flow::Dir;
use crate::middlebox::{Confidence, Evidence, Found, HsSegment, Kind};
use crate::tcp::Connection;

const MIN_SEGMENTS: u64 = 8;

pub fn check(conn: &Connection, ev: &Evidence, out: &mut Vec<Found>) {
    let Some((syn, sa)) = handshake(conn) else { return };
    if has(syn.timestamps) != Some(true) || has(sa.timestamps) != Some(true) {
        return;
    }
    let client = ev.end(Dir::C2S);
    if client.segments < MIN_SEGMENTS || client.ts_echoes > 0 || client.ts_segments > 0 {
        return;
    }
    out.push(Found {
            hint: false,
        kind: Kind::TimestampsStripped,
        segment: HsSegment::SynAck,
        confidence: Confidence::Likely,
        evidence: format!(
            "both handshake segments carry timestamps, but none of the client's {} segments after them carries the option: it \
             did not negotiate them (RFC 7323 §3.2), so the SYN/ACK's option was removed between the capture point and the client",
            client.segments
        ),
    });
}

#[cfg(test)]
mod tests {
    use crate::middlebox::testutil::{has, Flow, Opts};

    #[test]
    fn a_client_that_never_echoes() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX, 65535)
            .at_ms(0.1)
            .syn_ack(Opts::LINUX, 65160)
            .at_ms(60.0);
        for i in 0..10u32 {
            f.c2s(1 + i * 100, 1, 100, 502, None);
            f.at_ms(60.0 + i as f64);
            f.s2c(1, 101 + i * 100, 0, 509, Some((600 + i, 100)));
        }
        let out = f.findings();
        assert!(has(&out, "timestamps-stripped", "syn-ack"), "{out:?}");
    }

    #[test]
    fn a_client_whose_echoes_never_match_did_negotiate() {
        // Every client segment carries timestamps, TSecr never one the server sent: the
        // option reached the client (rewritten echoes are not a stripped option).
        let mut f = Flow::new();
        f.syn(Opts::LINUX, 65535)
            .at_ms(0.1)
            .syn_ack(Opts::LINUX, 65160)
            .at_ms(60.0);
        for i in 0..10u32 {
            f.c2s(1 + i * 100, 1, 100, 502, Some((101 + i, 7)));
            f.at_ms(60.0 + i as f64 + 0.5);
            f.s2c(1, 101 + i * 100, 0, 509, Some((501 + i, 9)));
        }
        let out = f.findings();
        assert!(!has(&out, "timestamps-stripped", "syn-ack"), "{out:?}");
    }

    #[test]
    fn ends_that_echo_are_fine() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX, 65535)
            .at_ms(0.1)
            .syn_ack(Opts::LINUX, 65160)
            .at_ms(60.0);
        for i in 0..10u32 {
            f.c2s(1 + i * 100, 1, 100, 502, Some((101 + i, 500 + i)));
            f.at_ms(60.0 + i as f64 + 0.5);
            f.s2c(1, 101 + i * 100, 0, 509, Some((501 + i, 101 + i)));
        }
        assert!(f.findings().is_empty(), "{:?}", f.findings());
    }
}
