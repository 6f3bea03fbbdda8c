//! MB103 `wscale_window_retreat`: read with the scale the capture saw negotiated, an end's
//! first windows pull the right window edge far behind the edge its own SYN offered. It
//! applies a larger shift than the capture point saw: its window-scale option was removed
//! or lowered between that end and the capture point (or the option was never seen).
//!
//! RFC 9293 §3.8.6: a receiver "SHOULD NOT shrink the window, i.e., move the right window
//! edge to the left"; Linux never does. RFC 7323 §2.2/§2.3: windows of non-SYN segments are
//! shifted by the sender's shift, SYN windows never. So `ack + (raw << k)` of the first
//! windows stays at or beyond `1 + syn_window` under the true shift k.
//!
//! Thresholds (`rules::retreat`): the edge moves back by at least a quarter of the SYN
//! window and 4 KB (rounding to the scale granularity moves it by less than 2^14 bytes
//! only when the SYN window is large); the inferred shift is the smallest under which no
//! first window moves it back by more than an eighth. Zero windows are skipped (flow
//! control).
//!
//! Confidence: when the end's handshake segment carries no window-scale option at the
//! capture point, a scaling end proves the option was removed: certain when the edge falls
//! back by more than three quarters (a receiver would have to drop nearly all the buffer
//! it just offered) and the segment carries SACK-permitted or timestamps (without any
//! option it may be a SYN-cookie proxy's answer for a server with a small window), likely
//! otherwise. When it carries one and the end applies a larger
//! shift, the value may have been lowered on the way — or a SYN proxy (DDoS protection,
//! load balancer) answered the SYN with a window the server behind it does not have (seen
//! on real traffic: SYN/ACK window 65535 with shift 8, then 62 raw): possible.
use super::{handshake, has, retreat, syn_of};
use crate::flow::Dir;
use crate::middlebox::{end_name, segment_name, Confidence, Evidence, Found, HsSegment, Kind};
use crate::tcp::Connection;

pub fn check(conn: &Connection, ev: &Evidence, out: &mut Vec<Found>) {
    if handshake(conn).is_none() {
        return;
    }
    for d in [Dir::C2S, Dir::S2C] {
        let Some(k) = conn.negotiated_scale(d).shift() else {
            continue;
        };
        let Some(r) = retreat(ev.end(d), k) else { continue };
        let who = end_name(d);
        let seen = if k == 0 {
            "no scaling".to_string()
        } else {
            format!("shift {k}")
        };
        let own = syn_of(conn, d);
        let absent = own.and_then(|o| has(o.wscale)) == Some(false);
        let modern = own.is_some_and(|o| has(o.sack_permitted) == Some(true) || has(o.timestamps) == Some(true));
        let confidence = match (absent, modern && r.back * 4 > r.syn_window as u64 * 3) {
            (true, true) => Confidence::Certain,
            (true, false) => Confidence::Likely,
            (false, _) => Confidence::Possible,
        };
        let cause = if absent {
            format!("the {who}'s window-scale option was removed between the {who} and the capture point")
        } else {
            format!(
                "the {who}'s window-scale value was lowered between the {who} and the capture point, or a SYN proxy answered \
                 the SYN with a window the {who} does not have"
            )
        };
        out.push(Found {
            // With the option present a SYN proxy that answered for the end explains the
            // same retreat (seen on real traffic): a hint, not a finding.
            hint: !absent,
            kind: Kind::WscaleMismatch,
            segment: HsSegment::sent_by(d),
            confidence,
            evidence: format!(
                "the capture point saw {seen} negotiated for the {who}'s windows, but read that way the {who}'s window of {raw} (raw) \
                 at ACK {ack} pulls the right edge {back} bytes behind the {w0} its {seg} offered, which a receiver does not do \
                 (RFC 9293 §3.8.6): the {who} scales its windows by at least 2^{m} (inferred real shift ≥ {m}) while the capture \
                 point — and the {peer}, if it received the same {seg} — reads them with {seen}: {cause}",
                raw = r.worst.raw,
                ack = r.worst.ack,
                back = r.back,
                w0 = r.syn_window,
                seg = segment_name(d),
                m = r.min_shift,
                peer = end_name(d.reverse()),
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::middlebox::testutil::{Flow, Opts};

    #[test]
    fn a_server_window_of_64_after_a_syn_ack_of_65160_is_scaled_by_2_pow_10() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX, 65535)
            .at_ms(60.0)
            .syn_ack(Opts::LINUX.ws(None), 65160)
            .at_ms(60.1);
        f.c2s(1, 1, 0, 65535, None).at_ms(121.0).s2c(1, 1, 1448, 64, None);
        let out = f.findings();
        let m = out
            .iter()
            .find(|m| m.kind.as_str() == "wscale-mismatch")
            .expect("mismatch");
        assert_eq!((m.direction.as_str(), m.confidence.as_str()), ("syn-ack", "certain"));
        assert!(m.evidence.contains("≥ 10"), "{}", m.evidence);
    }

    #[test]
    fn a_halved_window_is_likely_and_a_window_that_follows_the_data_is_fine() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX, 64240)
            .at_ms(60.0)
            .syn_ack(Opts::LINUX.ws(None), 65535)
            .at_ms(60.1);
        f.c2s(1, 1, 1448, 64240, None).at_ms(60.3).s2c(1, 1449, 0, 32784, None);
        let out = f.findings();
        let m = out
            .iter()
            .find(|m| m.kind.as_str() == "wscale-mismatch")
            .expect("mismatch");
        assert_eq!((m.direction.as_str(), m.confidence.as_str()), ("syn-ack", "likely"));

        // unscaled receiver whose window shrinks only as data arrives: the edge stays put
        let mut f = Flow::new();
        f.syn(Opts::LINUX.ws(None), 64240)
            .at_ms(60.0)
            .syn_ack(Opts::LINUX.ws(None), 65535)
            .at_ms(60.1);
        f.c2s(1, 1, 30000, 64240, None)
            .at_ms(60.3)
            .s2c(1, 30001, 0, 35535, None);
        assert!(f.findings().iter().all(|m| m.kind.as_str() != "wscale-mismatch"));
    }

    #[test]
    fn a_retreat_under_an_announced_shift_is_only_possible() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX.ws(Some(8)), 65535)
            .at_ms(170.0)
            .syn_ack(Opts::LINUX.ws(Some(8)).no_ts(), 65535)
            .at_ms(172.0);
        f.c2s(1, 1, 215, 343, None).at_ms(350.0).s2c(1, 216, 0, 62, None);
        let out = f.findings();
        let m = out
            .iter()
            .find(|m| m.kind.as_str() == "wscale-mismatch")
            .expect("mismatch");
        assert_eq!(
            (m.direction.as_str(), m.confidence.as_str()),
            ("syn-ack", "possible"),
            "{out:?}"
        );
    }
}
