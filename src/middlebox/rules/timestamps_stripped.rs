//! MB301 `timestamps_stripped`: the client's SYN offered timestamps and the SYN/ACK has
//! none, while it carries SACK-permitted and window scaling.
//!
//! RFC 7323 §3.2: "A TCP MAY send the TSopt in an initial <SYN> segment ... [and] MAY send
//! a TSopt in other segments only if it received a TSopt in the initial <SYN> segment";
//! once both sent it, every non-RST segment carries it. So:
//! - if the server later echoes the client's timestamps although its SYN/ACK as captured
//!   had none, it sent the option and it was removed between the server and the capture
//!   point: syn-ack, certain;
//! - otherwise the server never received it (removed from the SYN beyond the capture
//!   point; stripping on the SYN only and on both look the same), or it does not use
//!   timestamps — Windows servers answer SACK-permitted and window scaling without
//!   timestamps by default. Possible, direction syn.
//!
//! A SYN without timestamps that carries the other options is the default of Windows
//! clients: no finding.

use super::{handshake, has};
use crate::flow::Dir;
use crate::middlebox::{Confidence, Evidence, Found, HsSegment, Kind};
use crate::tcp::Connection;

pub fn check(conn: &Connection, ev: &Evidence, out: &mut Vec<Found>) {
    let Some((syn, sa)) = handshake(conn) else { return };
    if has(syn.timestamps) != Some(true) || has(sa.timestamps) != Some(false) {
        return;
    }
    let server = ev.end(Dir::S2C);
    if server.ts_echoes > 0 {
        out.push(Found {
            hint: false,
            kind: Kind::TimestampsStripped,
            segment: HsSegment::SynAck,
            confidence: Confidence::Certain,
            evidence: format!(
                "the SYN/ACK reached the capture point without a timestamps option, yet the server echoes the client's timestamps \
                 afterwards ({} echoes): it negotiated them (RFC 7323 §3.2), so its SYN/ACK carried the option and it was removed \
                 between the server and the capture point; the client, which never saw it, sends no timestamps",
                server.ts_echoes
            ),
        });
        return;
    }
    if has(sa.sack_permitted) == Some(true) && has(sa.wscale) == Some(true) {
        out.push(Found {
            hint: false,
            kind: Kind::TimestampsStripped,
            segment: HsSegment::Syn,
            confidence: Confidence::Possible,
            evidence: "the client's SYN offered timestamps, the server's SYN/ACK carries SACK-permitted and window scaling but no \
                       timestamps: the server never received the option (removed from the SYN beyond the capture point; stripping \
                       on both segments looks the same), or it does not use timestamps (the default of Windows servers). Without \
                       timestamps there is no PAWS and no RTT sample from retransmitted data (RFC 7323 §3, §5)"
                .to_string(),
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::middlebox::testutil::{has, Flow, Opts};

    #[test]
    fn a_syn_ack_without_timestamps_is_possible() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX, 65535).at_ms(1.0).syn_ack(Opts::LINUX.no_ts(), 65160);
        let out = f.findings();
        assert!(has(&out, "timestamps-stripped", "syn"), "{out:?}");
        assert_eq!(out[0].confidence.as_str(), "possible");
    }

    #[test]
    fn a_server_that_echoes_timestamps_had_its_syn_ack_stripped() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX, 65535)
            .at_ms(60.0)
            .syn_ack(Opts::LINUX.no_ts(), 65160)
            .at_ms(60.1);
        f.c2s(1, 1, 0, 512, None).at_ms(61.0);
        // the server echoes the SYN's TSval (100)
        f.s2c(1, 1, 1448, 509, Some((501, 100)));
        let out = f.findings();
        let m = out.iter().find(|m| m.kind.as_str() == "timestamps-stripped").unwrap();
        assert_eq!(
            (m.direction.as_str(), m.confidence.as_str()),
            ("syn-ack", "certain"),
            "{out:?}"
        );
    }

    #[test]
    fn windows_clients_and_normal_handshakes_give_nothing() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX.no_ts(), 65535)
            .at_ms(1.0)
            .syn_ack(Opts::LINUX.no_ts(), 65160);
        assert!(f.findings().is_empty());
    }
}
