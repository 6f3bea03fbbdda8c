//! MB106 `wscale_overwritten`: a handshake segment reached the capture point with a run of
//! NOPs that holds the window-scale option it no longer carries.
//!
//! As MB303 (`timestamps_overwritten`): stacks never put more than two NOPs together (RFC
//! 9293 §3.2), a middlebox that removes an option overwrites it with NOPs, and the window
//! scale option is 3 bytes (RFC 7323 §2.2), 4 with the NOP that aligns it. A run of three
//! or more, beyond what an absent timestamps option accounts for, in a segment without
//! window scale is that option overwritten: likely; possible when the segment lacks an
//! MSS option too and the run is no longer than an MSS option (4 bytes) and its alignment.
//!
//! Removed from the SYN, scaling is off both ways (the server never saw the offer);
//! removed from the SYN/ACK, the client believes it off while the server scales its
//! windows, which MB101-MB105 then see in the windows.

use super::{handshake_segments, overwritten_sentence};
use crate::middlebox::layout::overwritten;
use crate::middlebox::{Confidence, Evidence, Found, Kind};
use crate::tcp::Connection;

pub fn check(conn: &Connection, _ev: &Evidence, out: &mut Vec<Found>) {
    for (d, segment, o) in handshake_segments(conn) {
        let w = overwritten(&o);
        if !w.wscale {
            continue;
        }
        let (confidence, or_mss) = if w.ws_alone {
            (Confidence::Likely, "")
        } else {
            (
                Confidence::Possible,
                " (or its MSS option, 4 bytes, which it lacks as well)",
            )
        };
        out.push(Found {
            hint: false,
            kind: Kind::WscaleStripped,
            segment,
            confidence,
            evidence: overwritten_sentence(
                d,
                segment,
                o.nop_run,
                "window-scale",
                "3 bytes, 4 with its NOP (RFC 7323 §2.2)",
                or_mss,
                "",
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::middlebox::testutil::{has, Flow, Opts};

    #[test]
    fn a_syn_whose_window_scale_was_nopped_is_likely_stripped() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX.ws_nopped(), 65535)
            .at_ms(1.0)
            .syn_ack(Opts::LINUX.ws(None), 65160);
        let out = f.findings();
        let m = out.iter().find(|m| m.kind.as_str() == "wscale-stripped").unwrap();
        assert_eq!(
            (m.direction.as_str(), m.confidence.as_str()),
            ("syn", "likely"),
            "{out:?}"
        );
    }

    #[test]
    fn both_options_nopped_give_both_findings() {
        // Linux's SYN with timestamps and window scale overwritten: 10 + 1 + 3 NOPs.
        let mut f = Flow::new();
        let o = Opts {
            ts: false,
            ws: None,
            nops: 14,
            ..Opts::LINUX
        };
        f.syn(o, 65535).at_ms(1.0);
        let out = f.findings();
        assert!(has(&out, "wscale-stripped", "syn"), "{out:?}");
        assert!(has(&out, "timestamps-stripped", "syn"), "{out:?}");
    }

    #[test]
    fn a_run_an_absent_mss_explains_as_well_is_only_possible() {
        let mut f = Flow::new();
        let o = Opts {
            mss: None,
            ws: None,
            nops: 4,
            ..Opts::LINUX
        };
        f.syn(o, 65535).at_ms(1.0);
        let out = f.findings();
        let m = out.iter().find(|m| m.kind.as_str() == "wscale-stripped").unwrap();
        assert_eq!(m.confidence.as_str(), "possible", "{out:?}");
    }

    #[test]
    fn timestamps_nopped_alone_is_not_window_scale() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX.ts_nopped(), 65535).at_ms(1.0);
        assert!(!has(&f.findings(), "wscale-stripped", "syn"));
    }
}
