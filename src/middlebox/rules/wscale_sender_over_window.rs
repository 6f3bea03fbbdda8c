//! MB104 `wscale_sender_over_window`: one end's SYN offered window scaling, the other
//! end's handshake segment reached the capture point without it (so scaling is off as the
//! capture point sees it), yet that other end, sending data, keeps more than twice the
//! receiver's advertised window in flight: it scales the receiver's windows, so it
//! believes scaling is on, so its own handshake segment carried the option and lost it
//! between it and the capture point (`wscale_strip_synack` seen at the client: the server
//! received the client's shift, the client never got the server's option).
//!
//! RFC 9293 §3.8.6 / RFC 5681 §2: a sender never sends beyond `SND.UNA + SND.WND`;
//! RFC 7323 §2.2/§2.3: SND.WND is the window field shifted by the receiver's shift, in
//! force only when both ends sent the option. The test uses the tracker's reconstruction
//! of what the sender knew (`tcp::SenderView`) and the violation counts of
//! `tcp::ScaleInference`, and asks for flight beyond twice the window (one shift more)
//! plus a segment — not one segment beyond it: the reconstruction pairs data with an ACK
//! one loop earlier and can be off by the ACKs of one round (seen on real captures with
//! queueing: a quarter of the segments beyond the window, none beyond twice it).
//!
//! Thresholds: at least 16 such data segments and 5 % of the sender's data segments with a
//! usable window (a few stray ones come from ACKs the capture saw and the sender did
//! not). Certain when beyond four times the window on 20 % of them and the smallest shift
//! the sender respects is at most the one the receiver offered; likely otherwise. The
//! inferred shift is that smallest shift: a lower bound.

use super::{handshake, has, syn_of};
use crate::flow::Dir;
use crate::middlebox::{end_name, segment_name, Confidence, Evidence, Found, HsSegment, Kind};
use crate::tcp::{Connection, WindowScale};

const MIN_VIOLATIONS: u64 = 16;
const MIN_SHARE: f64 = 0.05;
const CERTAIN_SHARE: f64 = 0.20;

pub fn check(conn: &Connection, ev: &Evidence, out: &mut Vec<Found>) {
    if handshake(conn).is_none() {
        return;
    }
    for data in [Dir::C2S, Dir::S2C] {
        // Without the receiver's ACKs in the capture, data sent less ACKs seen grows with
        // every segment: flight "beyond the window" is then the capture's gap, not a scale.
        if ev.acks_lacking[data.index()] {
            continue;
        }
        let rx = data.reverse();
        // Only where the capture saw the receiver offer a shift that the negotiation (as
        // the capture point saw it) did not put in force: the sender's own option is what
        // the capture point missed. A sender obeying a shift nobody offered at the capture
        // point would need an option *added* on the way: not judged.
        let Some(offered) = syn_of(conn, rx).and_then(|o| o.wscale.present()) else {
            continue;
        };
        if conn.negotiated_scale(rx) != WindowScale::NotUsed || offered == 0 {
            continue;
        }
        if syn_of(conn, data).and_then(|o| has(o.wscale)) != Some(false) {
            continue;
        }
        let si = &conn.scale_evidence[data.index()];
        let events = si.events();
        let twice = si.violations_at(1);
        if twice < MIN_VIOLATIONS || (twice as f64) < MIN_SHARE * events as f64 {
            continue;
        }
        let four = si.violations_at(2);
        let min = si.min_consistent();
        let fits = min.is_some_and(|m| m <= offered);
        let confidence = if fits && four >= MIN_VIOLATIONS && four as f64 >= CERTAIN_SHARE * events as f64 {
            Confidence::Certain
        } else {
            Confidence::Likely
        };
        let inferred = min.map_or("more than 0".to_string(), |m| format!("at least {m}"));
        let (sender, receiver) = (end_name(data), end_name(rx));
        let e = ev.end(data);
        out.push(Found {
            hint: false,
            kind: Kind::WscaleMismatch,
            segment: HsSegment::sent_by(data),
            confidence,
            evidence: format!(
                "the {receiver}'s {rseg} offered window scale {offered} and the {sender}'s {sseg} reached the capture point without \
                 the option, so scaling looks off here; yet the {sender} kept more than twice the {receiver}'s advertised window in \
                 flight on {twice} of {events} data segments (up to {flight} bytes against a window of {raw} raw): it scales the \
                 {receiver}'s windows (inferred real shift: {inferred}, the {receiver} offered {offered}), so it believes scaling is on — \
                 its own {sseg} carried the option, removed between the {sender} and the capture point; the {receiver} reads the \
                 {sender}'s windows unscaled",
                rseg = segment_name(rx),
                sseg = segment_name(data),
                flight = e.max_flight,
                raw = e.raw_at_max_flight,
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::middlebox::testutil::{has, Flow, Opts};

    /// The client offers scaling, the server's SYN/ACK arrives without it, and the server
    /// keeps 270 segments in flight per round against a 65535-byte unscaled window.
    fn six_times_the_unscaled_window() -> Flow {
        let mut f = Flow::new();
        f.syn(Opts::LINUX, 65535)
            .at_ms(60.0)
            .syn_ack(Opts::LINUX.ws(None), 65160)
            .at_ms(60.1);
        f.c2s(1, 1, 0, 65535, Some((101, 500)));
        f.at_ms(121.0).download(2700, 1448, 270, 65535, 65160, 60.0, true);
        f
    }

    #[test]
    fn a_server_that_keeps_six_times_the_unscaled_window_in_flight() {
        let out = six_times_the_unscaled_window().findings();
        assert!(has(&out, "wscale-mismatch", "syn-ack"), "{out:?}");
        let m = out.iter().find(|m| m.kind.as_str() == "wscale-mismatch").unwrap();
        assert_eq!(m.confidence.as_str(), "certain");
    }

    #[test]
    fn flights_are_not_read_where_the_capture_lacks_the_receivers_acks() {
        // The same server, but the capture lacks the client's ACKs for a while: its flight
        // beyond the window is then data sent less ACKs the capture never saw.
        let mut f = six_times_the_unscaled_window();
        f.ev.acks_lacking = [false, true];
        assert!(f.findings().iter().all(|m| m.kind.as_str() != "wscale-mismatch"));
    }

    #[test]
    fn without_an_offered_shift_nothing_is_judged() {
        // neither SYN offers scaling: a sender beyond the window is a capture artefact here
        let mut f = Flow::new();
        f.syn(Opts::LINUX.ws(None), 65535)
            .at_ms(60.0)
            .syn_ack(Opts::LINUX.ws(None), 65160)
            .at_ms(60.1);
        f.c2s(1, 1, 0, 65535, Some((101, 500)));
        f.at_ms(121.0).download(2700, 1448, 270, 65535, 65160, 60.0, true);
        assert!(f.findings().iter().all(|m| m.kind.as_str() != "wscale-mismatch"));
    }

    #[test]
    fn a_sender_within_the_window_is_fine() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX, 65535)
            .at_ms(60.0)
            .syn_ack(Opts::LINUX, 65160)
            .at_ms(60.1);
        f.c2s(1, 1, 0, 32759, Some((101, 500)));
        f.at_ms(121.0).download(2700, 1448, 270, 32759, 509, 60.0, true);
        assert!(f.findings().is_empty(), "{:?}", f.findings());
    }
}
