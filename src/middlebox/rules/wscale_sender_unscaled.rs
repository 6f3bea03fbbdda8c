//! MB105 `wscale_sender_unscaled`: the handshake says the receiver's windows are scaled by
//! s, yet the data sender stops again and again at `raw << j` for a smaller j — usually 0,
//! the raw 16-bit value — far below the scaled window: it reads the windows with shift j,
//! i.e. it did not receive the receiver's window-scale option (j = 0: removed) or received
//! a smaller one (rewritten), between the capture point and the sender. The classic
//! symptom: a flow stuck at a few tens of kilobytes in flight on a path that allows
//! megabytes (`wscale_strip_synack_up` seen at the server).
//!
//! RFC 7323 §2.2/§2.3: an end applies to the peer's windows the shift it received in the
//! peer's SYN or SYN/ACK, none when it received no option. RFC 9293 §3.8.6: a
//! window-limited sender fills the window to its right edge, so its flight lands at the
//! window it believes in.
//!
//! Thresholds: j at most s − 2 (the obeyed window at most a quarter of the negotiated one,
//! so a cwnd or send-buffer plateau at half the window cannot pass for it); at least 32
//! data segments with a reconstructed view; the flight within one segment below
//! `raw << j` on at least 16 of them and 20 %, beyond it (by more than a segment) on at
//! most 1 %; and the raw values at these stops spread over at least two segments (the
//! sender follows the raw value as it moves, not one plateau that happens to sit there).
//! The smallest such j is the inferred shift. Likely.

use super::handshake;
use crate::flow::Dir;
use crate::middlebox::{end_name, Confidence, Evidence, Found, HsSegment, Kind};
use crate::tcp::{Connection, WindowScale};

const MIN_EVENTS: u64 = 32;
const MIN_HITS: u64 = 16;

pub fn check(conn: &Connection, ev: &Evidence, out: &mut Vec<Found>) {
    if handshake(conn).is_none() {
        return;
    }
    for data in [Dir::C2S, Dir::S2C] {
        // Without the receiver's ACKs in the capture the flights are not known: no edge.
        if ev.acks_lacking[data.index()] {
            continue;
        }
        let rx = data.reverse();
        let WindowScale::Shift(s) = conn.negotiated_scale(rx) else {
            continue;
        };
        if s < 2 {
            continue;
        }
        let r = &ev.end(data).shifts;
        let mss = conn.mss(data) as u64;
        if r.events < MIN_EVENTS {
            continue;
        }
        let obeyed = (0..=(s - 2) as usize).find(|&j| {
            let spread = (r.hit_raw_max[j] as u64).saturating_sub(r.hit_raw_min[j] as u64) << j;
            r.hits[j] >= MIN_HITS && r.hits[j] * 5 >= r.events && r.over(j) * 100 <= r.events && spread >= 2 * mss
        });
        let Some(j) = obeyed else { continue };
        let (sender, receiver) = (end_name(data), end_name(rx));
        let reading = if j == 0 {
            format!(
                "the raw, unscaled window value (raw {}..{})",
                r.hit_raw_min[j], r.hit_raw_max[j]
            )
        } else {
            format!(
                "the window read with shift {j} (raw {}..{} << {j})",
                r.hit_raw_min[j], r.hit_raw_max[j]
            )
        };
        let cause = if j == 0 {
            format!("it did not receive the {receiver}'s window-scale option — removed")
        } else {
            format!("it received a window scale of {j}, not {s} — rewritten")
        };
        out.push(Found {
            hint: false,
            kind: Kind::WscaleMismatch,
            segment: HsSegment::sent_by(rx),
            confidence: Confidence::Likely,
            evidence: format!(
                "the handshake negotiated shift {s} for the {receiver}'s windows, yet the {sender} stopped at {reading} on {hits} of \
                 {events} data segments and almost never went beyond it, a window 2^{gap} times smaller than the negotiated one: the \
                 {sender} reads the {receiver}'s windows with shift {j} (inferred real shift: {j}); {cause} between the capture \
                 point and the {sender}",
                hits = r.hits[j],
                events = r.events,
                gap = s as usize - j,
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::middlebox::testutil::{has, Flow, Opts};

    /// The server scales by 7; the client (uploading, ACK-clocked, seen next to the server
    /// one 60 ms loop away) fills `raw << obeyed` (the raw value grows from 20000 to 39500)
    /// — or 100 segments when `obeyed` is None.
    fn upload(obeyed: Option<u32>) -> Flow {
        let mut f = Flow::new();
        f.syn(Opts::LINUX.ws(Some(10)).no_ts(), 64240)
            .at_ms(0.1)
            .syn_ack(Opts::LINUX.no_ts(), 65535)
            .at_ms(60.0);
        f.c2s(1, 1, 0, 62, None);
        let mut t = 60.1;
        let mut seq = 1u32;
        for round in 0..40u32 {
            let raw = 5_000 + round * 125;
            let n = obeyed.map_or(100, |j| (raw << j) / 1448);
            for i in 0..n {
                f.at_ms(t + i as f64 * 0.1).c2s(seq, 1, 1448, 62, None);
                seq += 1448;
                f.at_ms(t + i as f64 * 0.1 + 0.01).s2c(1, seq, 0, raw as u16, None);
            }
            t += 59.96;
        }
        f
    }

    #[test]
    fn a_client_that_stops_at_the_raw_window() {
        let out = upload(Some(0)).findings();
        assert!(has(&out, "wscale-mismatch", "syn-ack"), "{out:?}");
        assert!(
            out[0].evidence.contains("inferred real shift: 0"),
            "{}",
            out[0].evidence
        );
    }

    #[test]
    fn a_client_that_reads_the_windows_with_shift_2() {
        let out = upload(Some(2)).findings();
        assert!(has(&out, "wscale-mismatch", "syn-ack"), "{out:?}");
        assert!(
            out[0].evidence.contains("inferred real shift: 2"),
            "{}",
            out[0].evidence
        );
    }

    #[test]
    fn a_client_far_beyond_the_raw_window_is_fine() {
        let out = upload(None).findings();
        assert!(out.iter().all(|m| m.kind.as_str() != "wscale-mismatch"), "{out:?}");
    }
}
