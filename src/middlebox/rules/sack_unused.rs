//! MB402 `sack_unused`: both handshake segments carry SACK-permitted, yet the client, as a
//! data receiver, sends duplicate ACKs without SACK blocks and never a SACK block at all:
//! it did not negotiate SACK, i.e. the server's SACK-permitted did not reach it — removed
//! from the SYN/ACK between the capture point and the client.
//!
//! RFC 2018 §4: a data receiver that negotiated SACK "SHOULD" send SACK blocks in every
//! ACK for out-of-order data (Linux, Windows, the BSDs all do). A SYN/ACK with the option
//! at the capture point proves the server received the client's, so only the client can
//! have missed one.
//!
//! Thresholds: at least 3 duplicate ACKs (a fast-retransmit's worth of out-of-order
//! arrivals; records the capture holds twice within 50 µs do not count) while the server
//! retransmitted (so data was really missing at the client), and no SACK block from the
//! client at any time. Likely.

use super::{handshake, has};
use crate::flow::Dir;
use crate::middlebox::{Confidence, Evidence, Found, HsSegment, Kind};
use crate::tcp::Connection;

const MIN_DUP_ACKS: u64 = 3;

pub fn check(conn: &Connection, ev: &Evidence, out: &mut Vec<Found>) {
    let Some((syn, sa)) = handshake(conn) else { return };
    if has(syn.sack_permitted) != Some(true) || has(sa.sack_permitted) != Some(true) {
        return;
    }
    let client = ev.end(Dir::C2S);
    if client.dup_acks_without_sack < MIN_DUP_ACKS
        || client.sacking > 0
        || conn.dir(Dir::S2C).retransmitted_segments == 0
    {
        return;
    }
    out.push(Found {
            hint: false,
        kind: Kind::SackStripped,
        segment: HsSegment::SynAck,
        confidence: Confidence::Likely,
        evidence: format!(
            "both handshake segments carry SACK-permitted, but the client sent {} duplicate ACKs and never a SACK block: it did not \
             negotiate SACK (RFC 2018 §4), so the SYN/ACK's option was removed between the capture point and the client",
            client.dup_acks_without_sack
        ),
    });
}

#[cfg(test)]
mod tests {
    use crate::middlebox::testutil::{has, Flow, Opts, CISN, CLIENT, SERVER, SISN};
    use crate::testkit::TcpPacket;

    fn lossy(sack: bool) -> Flow {
        let mut f = Flow::new();
        f.syn(Opts::LINUX.no_ts(), 65535)
            .at_ms(0.1)
            .syn_ack(Opts::LINUX.no_ts(), 65160)
            .at_ms(60.0);
        f.c2s(1, 1, 0, 512, None);
        // segment 1 lost before the client: it duplicates its ACK for segments 2..5
        for i in 1..5u32 {
            f.at_ms(61.0 + i as f64).s2c(1 + i * 1448, 1, 1448, 509, None);
            let mut p = TcpPacket::new(CLIENT, SERVER).seq(CISN + 1).ack(SISN + 1).window(512);
            if sack {
                p = p.sack(&[(SISN + 1449, SISN + 1 + (i + 1) * 1448)]);
            }
            f.feed(&p);
        }
        // the retransmission, a round trip after the duplicate ACKs began
        f.at_ms(130.0).s2c(1, 1, 1448, 509, None);
        f
    }

    #[test]
    fn duplicate_acks_without_sack_blocks() {
        assert!(has(&lossy(false).findings(), "sack-stripped", "syn-ack"));
        assert!(lossy(true).findings().is_empty());
    }
}
