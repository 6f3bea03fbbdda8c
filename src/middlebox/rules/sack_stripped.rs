//! MB401 `sack_stripped`: SACK-permitted offered on one handshake segment and missing on
//! the other, or missing from a SYN that carries the options stacks send alongside it.
//!
//! RFC 2018 §2: SACK-permitted "may be sent in a SYN by a TCP that has been extended to
//! receive ... the SACK option"; SACK blocks are sent only when it was received. Every
//! mainstream stack that sends timestamps also sends SACK-permitted. Cases:
//! - SYN with it, SYN/ACK without it, and the server later sends SACK blocks: it
//!   negotiated SACK, so its SYN/ACK carried the option, removed before the capture
//!   point: syn-ack, certain.
//! - SYN with it, SYN/ACK without it but with timestamps: the server never received it
//!   (removed from the SYN beyond the capture point) or has SACK disabled: possible, syn.
//!   (A SYN/ACK with neither — load balancers that answer window scaling only — is common:
//!   no finding.)
//! - Neither has it, and the SYN carries timestamps and window scaling: removed from the
//!   SYN before the capture point, or SACK disabled on the client: possible, syn (Linux's
//!   option layout is the same both ways: NOP NOP in place of the 2-byte option).

use super::{handshake, has};
use crate::flow::Dir;
use crate::middlebox::{Confidence, Evidence, Found, HsSegment, Kind};
use crate::tcp::Connection;

pub fn check(conn: &Connection, ev: &Evidence, out: &mut Vec<Found>) {
    let Some((syn, sa)) = handshake(conn) else { return };
    let (Some(c), Some(s)) = (has(syn.sack_permitted), has(sa.sack_permitted)) else {
        return;
    };
    let found = |segment, confidence, evidence: String| Found {
        hint: false,
        kind: Kind::SackStripped,
        segment,
        confidence,
        evidence,
    };
    match (c, s) {
        (true, false) => {
            let server = ev.end(Dir::S2C);
            if server.sacking > 0 {
                out.push(found(
                    HsSegment::SynAck,
                    Confidence::Certain,
                    "the SYN/ACK reached the capture point without SACK-permitted, yet the server sends SACK blocks: it negotiated \
                     SACK (RFC 2018 §2), so its SYN/ACK carried the option and it was removed between the server and the capture \
                     point; the client, which never saw it, recovers losses without SACK"
                        .to_string(),
                ));
            } else if has(sa.timestamps) == Some(true) {
                out.push(found(
                    HsSegment::Syn,
                    Confidence::Possible,
                    "the client's SYN offered SACK-permitted, the server's SYN/ACK carries timestamps but not SACK-permitted: the \
                     server never received it (removed from the SYN beyond the capture point; stripping on both segments looks the \
                     same) or has SACK disabled. Without SACK a loss costs a round trip per lost segment (RFC 2018 §1)"
                        .to_string(),
                ));
            }
        }
        (false, false) if has(syn.timestamps) == Some(true) && has(syn.wscale) == Some(true) => {
            out.push(found(
                HsSegment::Syn,
                Confidence::Possible,
                "the client's SYN carries timestamps and window scaling but no SACK-permitted, which stacks that send those \
                 normally include: a middlebox before the capture point may have removed it (stripping on the SYN and on both \
                 segments look the same), or SACK is disabled on the client. Without SACK a loss costs a round trip per lost \
                 segment (RFC 2018 §1)"
                    .to_string(),
            ));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use crate::middlebox::testutil::{has, Flow, Opts};

    #[test]
    fn handshake_cases() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX, 65535)
            .at_ms(1.0)
            .syn_ack(Opts::LINUX.no_sack(), 65160);
        assert!(has(&f.findings(), "sack-stripped", "syn"));
        let mut f = Flow::new();
        f.syn(Opts::LINUX.no_sack(), 65535)
            .at_ms(1.0)
            .syn_ack(Opts::LINUX.no_sack(), 65160);
        assert!(has(&f.findings(), "sack-stripped", "syn"));
        // WS-only SYN/ACK (a load balancer): nothing
        let mut f = Flow::new();
        f.syn(Opts::LINUX, 65535)
            .at_ms(1.0)
            .syn_ack(Opts::LINUX.no_sack().no_ts(), 65160);
        assert!(f.findings().is_empty());
    }

    #[test]
    fn a_server_sending_sack_blocks_had_its_syn_ack_stripped() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX, 65535)
            .at_ms(60.0)
            .syn_ack(Opts::LINUX.no_sack(), 65160)
            .at_ms(60.1);
        f.c2s(1, 1, 0, 512, None);
        f.c2s(1, 1, 1000, 512, None)
            .c2s(1001, 1, 1000, 512, None)
            .c2s(2001, 1, 1000, 512, None);
        f.at_ms(120.0);
        // the server lost the first segment and SACKs the other two
        let sack =
            crate::testkit::TcpPacket::new(crate::middlebox::testutil::SERVER, crate::middlebox::testutil::CLIENT)
                .seq(crate::middlebox::testutil::SISN + 1)
                .ack(crate::middlebox::testutil::CISN + 1)
                .window(509)
                .sack(&[(
                    crate::middlebox::testutil::CISN + 1001,
                    crate::middlebox::testutil::CISN + 3001,
                )]);
        f.feed(&sack);
        let out = f.findings();
        let m = out.iter().find(|m| m.kind.as_str() == "sack-stripped").unwrap();
        assert_eq!(
            (m.direction.as_str(), m.confidence.as_str()),
            ("syn-ack", "certain"),
            "{out:?}"
        );
    }
}
