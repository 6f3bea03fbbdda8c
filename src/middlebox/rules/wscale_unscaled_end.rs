//! MB102 `wscale_unscaled_end`: both handshake segments carry window scaling, yet one end
//! advertises its first window after the handshake exactly as in its SYN: it does not
//! shift its windows, i.e. it believes scaling is off.
//!
//! RFC 7323 §2.2: an end that sent the option scales its windows only once it received
//! the peer's option; §2.3: the window field of every non-SYN segment is the receive
//! window shifted right by the end's own shift. A stack that scales by s ≥ 2 sends
//! `rcv_wnd >> s` (Linux: at most 65535, usually about half of it), never its SYN window
//! value again. An end whose first window equals its SYN window, raw, is reading the
//! handshake as "no scaling": the peer's option did not reach it — it was removed from the
//! segment towards that end beyond the capture point (the SYN/ACK for the client). The
//! peer, which did receive an option, scales that end's windows by the negotiated shift:
//! the classic one-sided strip (`wscale_strip_synack` seen at the server).
//!
//! Thresholds: shift ≥ 2 (below that the two readings differ by at most 2x and some
//! stacks' first windows legitimately move that much); exact equality with a SYN window
//! of at least 4 KB. Likely when the SYN window is below 65535: a scaling end would need
//! an initial window of exactly that value times 2^s. A SYN window of 65535 is the cap of
//! the field, and stacks that size their buffer to 65535 << s (old macOS: shift 3 and a
//! 512 KB buffer) legitimately advertise raw 65535 from the start: possible, and only when
//! the first eight windows all stay at 65535 (a short exchange says too little).
use super::{handshake, MIN_SYN_WINDOW};
use crate::flow::Dir;
use crate::middlebox::evidence::FIRST_ADVERTS;
use crate::middlebox::{end_name, segment_name, Confidence, Evidence, Found, HsSegment, Kind};
use crate::tcp::{Connection, WindowScale};

pub fn check(conn: &Connection, ev: &Evidence, out: &mut Vec<Found>) {
    if handshake(conn).is_none() {
        return;
    }
    for d in [Dir::C2S, Dir::S2C] {
        let WindowScale::Shift(s) = conn.negotiated_scale(d) else {
            continue;
        };
        if s < 2 {
            continue;
        }
        let e = ev.end(d);
        let (Some(w0), Some(first)) = (e.syn_window, e.adverts().first()) else {
            continue;
        };
        if first.raw != w0 || (w0 as u64) < MIN_SYN_WINDOW {
            continue;
        }
        let confidence = if w0 < u16::MAX {
            Confidence::Likely
        } else if e.n_adverts == FIRST_ADVERTS && e.adverts().iter().all(|a| a.raw == u16::MAX) {
            Confidence::Possible
        } else {
            continue;
        };
        let who = end_name(d);
        out.push(Found {
            hint: false,
            kind: Kind::WscaleMismatch,
            segment: HsSegment::received_by(d),
            confidence,
            evidence: format!(
                "both handshake segments carry window scaling ({who} shift {s}), but the {who}'s first window after the handshake \
                 is {first} raw, exactly its {seg} window: read with shift {s} that is {bytes} bytes, 2^{s} times what it just offered. \
                 The {who} does not scale its windows: it did not receive the {peer}'s window-scale option (removed from the {rx} \
                 between the capture point and the {who}), while the {peer} scales the {who}'s windows by 2^{s} \
                 (inferred: the {who} uses shift 0)",
                first = first.raw,
                seg = segment_name(d),
                bytes = (first.raw as u64) << s,
                peer = end_name(d.reverse()),
                rx = segment_name(d.reverse()),
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::middlebox::testutil::{has, Flow, Opts};

    #[test]
    fn a_client_that_repeats_its_syn_window_does_not_scale() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX, 65535)
            .at_ms(0.1)
            .syn_ack(Opts::LINUX.ws(Some(10)), 65160)
            .at_ms(60.0);
        f.c2s(1, 1, 0, 65535, Some((101, 500)));
        // a SYN window at the field's cap is only possible, and only after eight windows
        assert!(f.findings().is_empty());
        for i in 1..8 {
            f.c2s(1, 1 + i, 0, 65535, Some((101, 500)));
        }
        let out = f.findings();
        assert_eq!(out.len(), 1);
        assert_eq!(
            (out[0].direction.as_str(), out[0].confidence.as_str()),
            ("syn-ack", "possible")
        );
        assert!(out[0].evidence.contains("client uses shift 0"));

        let mut f = Flow::new();
        f.syn(Opts::LINUX, 64240)
            .at_ms(0.1)
            .syn_ack(Opts::LINUX.ws(Some(10)), 65160)
            .at_ms(60.0);
        f.c2s(1, 1, 0, 64240, Some((101, 500)));
        let out = f.findings();
        assert!(has(&out, "wscale-mismatch", "syn-ack"), "{out:?}");
        assert_eq!(out[0].confidence.as_str(), "likely");
    }

    #[test]
    fn a_scaling_client_is_fine() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX, 65535)
            .at_ms(0.1)
            .syn_ack(Opts::LINUX.ws(Some(10)), 65160)
            .at_ms(60.0);
        f.c2s(1, 1, 0, 32759, Some((101, 500)));
        assert!(f.findings().is_empty());
        // small shifts are not judged
        let mut f = Flow::new();
        f.syn(Opts::LINUX.ws(Some(1)), 64240)
            .at_ms(0.1)
            .syn_ack(Opts::LINUX, 65160)
            .at_ms(60.0);
        f.c2s(1, 1, 0, 64240, Some((101, 500)));
        assert!(f.findings().is_empty());
    }
}
