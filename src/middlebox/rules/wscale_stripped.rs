//! MB101 `wscale_stripped`: the handshake shows window scaling offered by one end and
//! missing from the other end's segment, which carries the modern options that stacks
//! without window scaling rarely send.
//!
//! RFC 7323 §2.2: the Window Scale option is sent in a SYN, and "MAY be sent in a
//! <SYN,ACK> segment only if the corresponding option was received in the initial <SYN>
//! segment"; scaling is in force only when both sent it. RFC 7323 §3.2 and RFC 2018 §2
//! introduce timestamps and SACK-permitted alongside; every mainstream stack (Linux,
//! Windows, macOS, the BSDs) sends window scaling whenever it sends them.
//!
//! Cases:
//! - SYN with the option, SYN/ACK without it. Either the server never received it (the
//!   SYN lost it beyond the capture point, or the server has scaling disabled), or the
//!   SYN/ACK lost it before the capture point. The server's first windows tell which: if
//!   they only make sense scaled (MB103's retreat test) the server believes scaling is on,
//!   so its SYN/ACK carried the option: removed on the SYN/ACK, certain (likely when the
//!   SYN/ACK has no other option either: a SYN-cookie proxy answering for a server with a
//!   small window looks alike). If they are its
//!   SYN/ACK window unscaled, the server does not scale: it never received the option
//!   (direction syn), likely when the SYN/ACK carries both SACK-permitted and timestamps,
//!   possible with one of them; a SYN/ACK with neither is a legacy stack: no finding —
//!   unless the SYN offered neither either: a server answers only the options it received,
//!   so its bare SYN/ACK then says nothing of its stack (an old stack, or a modern one with
//!   SACK and timestamps disabled at the client, as Windows' timestamps are by default):
//!   possible.
//! - Neither segment has the option, the SYN carries SACK-permitted and timestamps: the
//!   SYN may have lost it before the capture point (a server never answers an option it
//!   did not receive, so stripping on the SYN only and on both look the same): possible.
//!   A single capture cannot tell this from a client with scaling disabled.

use super::{first_window_unscaled, handshake, has, retreat};
use crate::flow::Dir;
use crate::middlebox::{Confidence, Evidence, Found, HsSegment, Kind};
use crate::tcp::Connection;

pub fn check(conn: &Connection, ev: &Evidence, out: &mut Vec<Found>) {
    let Some((syn, sa)) = handshake(conn) else { return };
    let (Some(c_ws), Some(s_ws)) = (has(syn.wscale), has(sa.wscale)) else {
        return;
    };
    let modern = |o: &crate::tcp::SynOptions| {
        [has(o.sack_permitted), has(o.timestamps)]
            .iter()
            .filter(|x| **x == Some(true))
            .count()
    };
    let found = |segment, confidence, evidence: String| Found {
        hint: false,
        kind: Kind::WscaleStripped,
        segment,
        confidence,
        evidence,
    };
    match (c_ws, s_ws) {
        (true, false) => {
            let shift = syn.wscale.present().unwrap_or(0);
            let server = ev.end(Dir::S2C);
            if let Some(r) = retreat(server, 0) {
                // A SYN/ACK without any modern option may come from a SYN proxy (SYN
                // cookies cannot carry options) answering for a server with a small window.
                let confidence = if modern(&sa) > 0 {
                    Confidence::Certain
                } else {
                    Confidence::Likely
                };
                out.push(found(
                    HsSegment::SynAck,
                    confidence,
                    format!(
                        "the client's SYN offered window scale {shift} and the SYN/ACK reached the capture point without the option, \
                         yet the server scales its windows: read unscaled, its window of {} (raw) at ACK {} would pull the right edge \
                         {} bytes behind the {} its SYN/ACK offered, which a receiver does not do (RFC 9293 §3.8.6); it applies a shift \
                         of at least {}, so it sent the option (RFC 7323 §2.2) and it was removed between the server and the capture point",
                        r.worst.raw, r.worst.ack, r.back, r.syn_window, r.min_shift
                    ),
                ));
                return;
            }
            let m = modern(&sa);
            if m == 0 && modern(&syn) > 0 {
                return; // a SYN/ACK without any modern option: a legacy stack, not a middlebox
            }
            if m == 0 {
                // The client offered neither SACK-permitted nor timestamps, so the SYN/ACK could
                // answer neither (RFC 2018 §2, RFC 7323 §2.2 and §3.2: a server sends each only
                // when the SYN had it): its bare options say nothing of the server's stack.
                let behaviour = match first_window_unscaled(server) {
                    Some((w0, raw)) => format!(
                        "; the server does not scale its windows (first window {raw}, SYN/ACK window {w0}): it never received the option, \
                         or does not scale at all"
                    ),
                    None => String::new(),
                };
                out.push(found(
                    HsSegment::Syn,
                    Confidence::Possible,
                    format!(
                        "the client's SYN offered window scale {shift} but neither SACK-permitted nor timestamps, and the server's SYN/ACK \
                         has no window-scale option: a server answers only the options it received, so its bare SYN/ACK says nothing of its \
                         stack{behaviour}; either the server does not scale (a legacy stack, or scaling disabled) or a middlebox removed the \
                         option from the SYN beyond the capture point (or from the SYN/ACK before it) — one capture cannot tell (compare a \
                         capture at the server: `bdpscope compare`); window scaling is off for this connection: windows are capped at 65535 bytes"
                    ),
                ));
                return;
            }
            let options = if m == 2 {
                "SACK-permitted and timestamps"
            } else if has(sa.sack_permitted) == Some(true) {
                "SACK-permitted"
            } else {
                "timestamps"
            };
            let confidence = if m == 2 {
                Confidence::Likely
            } else {
                Confidence::Possible
            };
            let behaviour = match first_window_unscaled(server) {
                Some((w0, raw)) => format!(
                    "; the server does not scale its windows either (first window {raw}, SYN/ACK window {w0}), so it never received the \
                     option: removed from the SYN beyond the capture point (or scaling is disabled on the server)"
                ),
                None => "; the SYN lost it beyond the capture point, or the SYN/ACK before it".to_string(),
            };
            out.push(found(
                HsSegment::Syn,
                confidence,
                format!(
                    "the client's SYN offered window scale {shift}, the server's SYN/ACK has no window-scale option but carries {options}, \
                     which stacks without window scaling rarely send (RFC 7323 §2.2: a server answers the option only when it received it){behaviour}; \
                     window scaling is off for this connection: windows are capped at 65535 bytes"
                ),
            ));
        }
        (false, false) if modern(&syn) == 2 => {
            out.push(found(
                HsSegment::Syn,
                Confidence::Possible,
                "the client's SYN carries SACK-permitted and timestamps but no window-scale option, which stacks that send those \
                 rarely omit: a middlebox before the capture point may have removed it (the server never answers an option it did \
                 not receive, so stripping on the SYN and on both segments look the same); a client with scaling disabled looks \
                 the same in one capture. Window scaling is off: windows are capped at 65535 bytes"
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
    fn syn_ack_without_scaling_from_a_modern_server_that_does_not_scale() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX, 65535)
            .at_ms(60.0)
            .syn_ack(Opts::LINUX.ws(None), 65160)
            .at_ms(60.1);
        f.c2s(1, 1, 0, 65535, Some((101, 500)));
        f.at_ms(121.0).download(60, 1448, 40, 65535, 65160, 60.0, true);
        let out = f.findings();
        assert!(has(&out, "wscale-stripped", "syn"), "{out:?}");
        assert_eq!(
            out.iter()
                .find(|m| m.kind.as_str() == "wscale-stripped")
                .unwrap()
                .confidence
                .as_str(),
            "likely"
        );
    }

    #[test]
    fn syn_ack_without_scaling_from_a_server_that_scales_was_stripped_on_the_syn_ack() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX, 65535)
            .at_ms(60.0)
            .syn_ack(Opts::LINUX.ws(None), 65160)
            .at_ms(60.1);
        f.c2s(1, 1, 0, 65535, Some((101, 500)));
        // the server scales by 2^10: its windows are 64 raw
        f.at_ms(121.0).download(60, 1448, 40, 65535, 64, 60.0, true);
        let out = f.findings();
        let m = out.iter().find(|m| m.kind.as_str() == "wscale-stripped").unwrap();
        assert_eq!(
            (m.direction.as_str(), m.confidence.as_str()),
            ("syn-ack", "certain"),
            "{out:?}"
        );
        assert!(m.evidence.contains("at least 10"), "{}", m.evidence);
    }

    #[test]
    fn a_syn_with_modern_options_and_no_scaling_is_possible() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX.ws(None), 65535)
            .at_ms(1.0)
            .syn_ack(Opts::LINUX.ws(None), 65160);
        let out = f.findings();
        let m = out.iter().find(|m| m.kind.as_str() == "wscale-stripped").unwrap();
        assert_eq!((m.direction.as_str(), m.confidence.as_str()), ("syn", "possible"));
    }

    #[test]
    fn a_bare_syn_ack_to_a_syn_with_scaling_only_is_possible() {
        // The client offers window scaling but neither SACK nor timestamps (both disabled):
        // the server could answer neither, so its bare SYN/ACK does not mark it as legacy.
        let bare = Opts {
            mss: Some(1460),
            sack: false,
            ts: false,
            ws: None,
            nops: 0,
        };
        let mut f = Flow::new();
        f.syn(bare.ws(Some(7)), 64240).at_ms(40.0).syn_ack(bare, 65160);
        let out = f.findings();
        let m = out.iter().find(|m| m.kind.as_str() == "wscale-stripped").unwrap();
        assert_eq!(
            (m.direction.as_str(), m.confidence.as_str()),
            ("syn", "possible"),
            "{out:?}"
        );
    }

    #[test]
    fn legacy_servers_and_normal_handshakes_give_nothing() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX, 65535).at_ms(1.0).syn_ack(
            Opts {
                mss: Some(1460),
                sack: false,
                ts: false,
                ws: None,
                nops: 0,
            },
            8192,
        );
        assert!(f.findings().is_empty());
        let mut f = Flow::new();
        f.syn(Opts::LINUX, 64240).at_ms(1.0).syn_ack(Opts::LINUX, 65160);
        assert!(f.findings().is_empty());
        // a client that sends no modern options and no scaling (Windows XP era)
        let mut f = Flow::new();
        f.syn(
            Opts {
                mss: Some(1460),
                sack: true,
                ts: false,
                ws: None,
                nops: 0,
            },
            65535,
        )
        .at_ms(1.0)
        .syn_ack(Opts::LINUX.ws(None), 65160);
        assert!(f.findings().is_empty());
    }
}
