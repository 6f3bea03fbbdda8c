//! MB303 `timestamps_overwritten`: a handshake segment reached the capture point with a run
//! of ten NOPs or more where no timestamps option is left.
//!
//! Stacks use NOPs only to align an option to 4 bytes, never more than two together (RFC
//! 9293 §3.2: NOP "may be used between options, for example, to align the beginning of a
//! subsequent option on a word boundary"; Linux, Windows, macOS and the BSDs alike, see
//! `middlebox::layout`). A middlebox that removes an option mostly overwrites it with NOPs
//! so the header keeps its length (Linux's xt_TCPOPTSTRIP, firewalls' "clear option"), and
//! ten bytes is the timestamps option (RFC 7323 §3.2). So the segment carried the option
//! when it left its sender and lost it before the capture point: likely (not certain:
//! nothing forbids a stack from padding with NOPs, though none in use does).
//!
//! This is the one trace a stripped SYN leaves at a capture point behind the middlebox:
//! there the SYN/ACK has no option either (the server answers only what it received), and
//! MB301, which needs the SYN's offer, sees nothing.

use super::{handshake_segments, overwritten_sentence};
use crate::middlebox::layout::overwritten;
use crate::middlebox::{Confidence, Evidence, Found, Kind};
use crate::tcp::Connection;

pub fn check(conn: &Connection, _ev: &Evidence, out: &mut Vec<Found>) {
    for (d, segment, o) in handshake_segments(conn) {
        if !overwritten(&o).timestamps {
            continue;
        }
        out.push(Found {
            hint: false,
            kind: Kind::TimestampsStripped,
            segment,
            confidence: Confidence::Likely,
            evidence: overwritten_sentence(
                d,
                segment,
                o.nop_run,
                "timestamps",
                "10 bytes (RFC 7323 §3.2)",
                "",
                " and the connection runs without timestamps (no PAWS, no RTT sample from retransmitted data: RFC 7323 §3, §5)",
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::middlebox::testutil::{has, Flow, Opts};

    #[test]
    fn a_syn_whose_timestamps_were_nopped_is_likely_stripped() {
        // Behind the middlebox: the SYN with ten NOPs, the SYN/ACK without timestamps.
        let mut f = Flow::new();
        f.syn(Opts::LINUX.ts_nopped(), 65535)
            .at_ms(1.0)
            .syn_ack(Opts::LINUX.no_ts(), 65160);
        let out = f.findings();
        assert!(has(&out, "timestamps-stripped", "syn"), "{out:?}");
        let m = out.iter().find(|m| m.kind.as_str() == "timestamps-stripped").unwrap();
        assert_eq!(m.confidence.as_str(), "likely", "{out:?}");
        assert!(m.evidence.contains("run of 11 NOPs"), "{}", m.evidence);
    }

    #[test]
    fn a_syn_ack_whose_timestamps_were_nopped_names_the_syn_ack() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX, 65535)
            .at_ms(1.0)
            .syn_ack(Opts::LINUX.ts_nopped(), 65160);
        assert!(has(&f.findings(), "timestamps-stripped", "syn-ack"));
    }

    #[test]
    fn alignment_nops_and_short_runs_are_not_a_stripped_option() {
        // Windows-like: no timestamps, two NOPs of alignment.
        let mut f = Flow::new();
        f.syn(Opts::LINUX.no_ts(), 64240)
            .at_ms(1.0)
            .syn_ack(Opts::LINUX.no_ts(), 65160);
        assert!(f.findings().is_empty(), "{:?}", f.findings());
        // a window-scale-sized run is not the timestamps option
        let mut f = Flow::new();
        f.syn(Opts::LINUX.no_ts().ws_nopped(), 64240).at_ms(1.0);
        assert!(!has(&f.findings(), "timestamps-stripped", "syn"));
    }
}
