//! What loss episodes and ECN episodes share: a run of congestion signals of one data
//! direction that ends once the sender has gone a retransmission timer (RFC 6298's RTO, at
//! least one second) with its data acknowledged and no new signal, and what the direction
//! delivered meanwhile.

use super::threshold;
use crate::summary::Stall;
use crate::tcp::{Connection, SegmentEvent};
use crate::time::Timestamp;
use crate::units::{bytes, rate, secs};

/// A direction's delivery as its ACKs report it, from the connection's first segment on.
#[derive(Clone, Debug, Default)]
pub struct Delivery {
    /// Bytes of this direction acknowledged so far, and when the first were.
    acked: u64,
    first_ack: Option<Timestamp>,
    /// Bytes of this direction reported delivered so far, SACKed bytes counted once when
    /// SACKed (the tracker's delivery accounting): what the receiver got, when it got it.
    /// A cumulative ACK that fills a hole jumps over bytes the receiver had long held, so
    /// `acked` over a loss episode is not a delivery rate.
    delivered: u64,
    /// When an ACK last reported bytes delivered: where the interval of the reports after
    /// it begins.
    last_report: Option<Timestamp>,
    /// ACKs whose options the capture's snaplen cut (their SACK blocks unread), so far.
    options_cut: u64,
    /// Whether an ACK was seen, and whether the first one already reported bytes SACKed
    /// above a hole: the capture began in a recovery.
    seen_ack: bool,
    began_in_recovery: bool,
}

/// One run of signals: its first and last, and the direction's delivery at each.
#[derive(Clone, Copy, Debug)]
pub struct Run {
    pub first: Timestamp,
    pub last: Timestamp,
    /// When the delivery counted from `first` on began: the last report before it (see
    /// [`Delivery::during`]).
    since: Timestamp,
    delivered_before: u64,
    delivered_at_last: u64,
    cut_before: u64,
    cut_at_last: u64,
    /// The run began before the cumulative ACK first moved, in a capture begun in a
    /// recovery (see [`Delivery::during`]).
    before_capture: bool,
}

impl Delivery {
    /// A segment acknowledging this direction's data (the other direction's segments say
    /// nothing of its delivery). Whether it acknowledged new bytes: the segment that can
    /// end a run.
    pub fn on_ack(&mut self, ev: &SegmentEvent) -> bool {
        if !std::mem::replace(&mut self.seen_ack, true) {
            self.began_in_recovery = ev.acked.delivered > ev.acked.acked;
        }
        self.delivered += ev.acked.delivered as u64;
        if ev.acked.delivered > 0 {
            self.last_report = Some(ev.ts);
        }
        self.options_cut += ev.acked.options_cut as u64;
        if ev.acked.acked == 0 {
            return false;
        }
        self.acked += ev.acked.acked as u64;
        self.first_ack.get_or_insert(ev.ts);
        true
    }

    /// A run that starts with a signal at `ts`.
    pub fn start(&self, ts: Timestamp) -> Run {
        Run {
            first: ts,
            last: ts,
            since: self.last_report.map_or(ts, |r| r.min(ts)),
            delivered_before: self.delivered,
            delivered_at_last: self.delivered,
            cut_before: self.options_cut,
            cut_at_last: self.options_cut,
            before_capture: self.began_in_recovery && self.acked == 0,
        }
    }

    /// `run` extended to a signal at `ts`.
    pub fn extend(&self, run: &mut Run, ts: Timestamp) {
        run.last = ts;
        run.delivered_at_last = self.delivered;
        run.cut_at_last = self.options_cut;
    }

    /// The open episode, taken out of `open` when the segment at `at` ends it: an ACK of new
    /// data (`acked`) a retransmission timer after the run's last signal. Nothing is copied
    /// on the way when there is no episode or no such ACK (nearly every segment).
    #[inline]
    pub fn ended<E>(
        open: &mut Option<E>,
        run: fn(&E) -> &Run,
        acked: bool,
        conn: &Connection,
        at: Timestamp,
    ) -> Option<E> {
        let e = open.as_ref().filter(|_| acked)?;
        if at - run(e).last <= threshold(conn) {
            return None;
        }
        open.take()
    }

    /// The delivery during `run` (what the ACKs between its first and last signal
    /// reported delivered) against the direction's over the connection, for the stall's
    /// sentence ("; 12 KiB delivered during it (1.2 Mbit/s), against ..."), and its rate in
    /// `s.delivered_bps`. The rate is over the reports' interval, which begins at the last
    /// report before the run (tcp_rate.c's ACK interval runs from the delivery the
    /// sample's first packet was sent at): the first ACK in the run may report data that
    /// arrived long before it (a Linux receiver behind a slow reader held its ACKs for 620
    /// µs, then echoed a CE mark 8 µs after it with 21.7 KiB at once: 352 Mbit/s over the
    /// 504 µs episode on a 300 Mbit/s link). A rate needs at least a round trip: over less,
    /// ACK timing is batching, not delivery (Linux's tcp_rate.c discards a sample whose
    /// interval is below the minimum RTT), and it is taken over the interval plus one
    /// quantum of the capture's clock. Nor has a run whose ACKs' options the snaplen cut:
    /// the bytes they SACKed are counted only when the cumulative ACK passes them, at the
    /// repair, so the run reports at its end what arrived over the round trip before (a
    /// 96-byte snaplen on IPv6 ACKs with one SACK block read 6.09 Mbit/s over a 39 ms
    /// episode of a 4 Mbit/s link). Nor has a run begun before the capture did: its first
    /// ACK already reported data held above a hole, and a SACK lists only the latest three
    /// or four blocks (RFC 2018 §3), so what the receiver held in older ones is reported
    /// only when the repairs' cumulative ACK passes it, however long before it arrived
    /// (census seed 2468: 343 KiB over the first 590 ms of a 4 Mbit/s link).
    pub fn during(&self, conn: &Connection, run: &Run, s: &mut Stall) -> String {
        let during = (run.last - run.since).secs_f64();
        let in_it = run.delivered_at_last.saturating_sub(run.delivered_before) as f64;
        let round = conn.rtt.min_end_to_end().map(|r| r.secs_f64());
        let cut = run.cut_at_last > run.cut_before;
        match self.overall(conn) {
            Some(all) => {
                match round {
                    _ if run.before_capture => format!(
                        "; {} reported delivered during it (the recovery began before the capture, and what the receiver held above its holes before then is reported only as the repairs fill them, so when it arrived is not known: no rate), {all} over the connection",
                        bytes(in_it)
                    ),
                    Some(_) if cut => format!(
                        "; {} reported delivered during it (the capture's snaplen cut the ACKs' SACK blocks, so when the receiver got them is not known: no rate), {all} over the connection",
                        bytes(in_it)
                    ),
                    Some(r) if during >= r && during > 0.0 => {
                        // Over the longest span the stamps allow: each end may have been
                        // stamped up to one clock quantum early, so a floor on the path's
                        // rate divides by the span plus a quantum (on a 1 ms clock a 2 ms
                        // episode of a 2 ms path read 11.2 Mbit/s on a 10 Mbit/s link).
                        let span = during + conn.rtt.quantum.get().secs_f64();
                        s.delivered_bps = Some(in_it * 8.0 / span);
                        // Said where the interval reaches back before the episode, so that
                        // the rate is not read as the bytes over the episode's span.
                        let (interval, own) = (secs(during), secs((run.last - run.first).secs_f64()));
                        let over = if interval != own {
                            format!(" over the {interval} since the ACK before it")
                        } else {
                            String::new()
                        };
                        format!("; {} delivered during it ({}{over}), against {all} over the connection", bytes(in_it), rate(in_it / span))
                    }
                    Some(_) => format!("; {} delivered during it (less than a round trip: no rate), {all} over the connection", bytes(in_it)),
                    None => format!("; {} delivered during it (no round-trip time to rate it over), {all} over the connection", bytes(in_it)),
                }
            }
            None => String::new(),
        }
    }

    /// The direction's delivery over the connection up to its latest segment (what
    /// [`Self::during`] compares an episode with), as printed.
    pub fn overall(&self, conn: &Connection) -> Option<String> {
        let f = self.first_ack?;
        let span = (conn.last_ts - f).secs_f64();
        (span > 0.0).then(|| rate(self.acked as f64 / span))
    }
}

/// What every figure of a delivery during an episode says after its bytes ("; 12 KiB
/// delivered during it", "; 3 KiB reported delivered during it").
pub(super) const DELIVERED: &str = " delivered during it";

/// An episode over a wait whose acknowledgments the capture lacks: its delivery is not
/// known (no rate, no bytes), only the direction's over the connection (`all`).
pub fn delivery_unknown(s: &mut Stall, receiver: &str, all: Option<&str>) {
    s.delivered_bps = None;
    let Some(at) = s.sentence.find(DELIVERED) else {
        return;
    };
    let Some(start) = s.sentence[..at].rfind("; ") else {
        return;
    };
    let overall = all.map_or(String::new(), |a| format!(" ({a}{OVERALL_END})"));
    s.sentence = format!(
        "{}; what it delivered is not known: the capture lacks the {receiver}'s acknowledgments of that time, which would report it{overall}",
        &s.sentence[..start]
    );
}

const OVERALL_END: &str = " over the connection";

/// `sentence` with the direction's delivery over the connection (the figure before
/// [`OVERALL_END`], after "against " or ", ") replaced by `all`.
pub fn restate_overall(sentence: &str, all: &str) -> String {
    let Some(end) = sentence.find(OVERALL_END) else {
        return sentence.to_string();
    };
    let head = &sentence[..end];
    let Some(start) = ["against ", "), "]
        .iter()
        .filter_map(|p| head.rfind(p).map(|i| i + p.len()))
        .max()
    else {
        return sentence.to_string();
    };
    format!("{}{all}{}", &sentence[..start], &sentence[end..])
}

#[cfg(test)]
mod restate_tests {
    use super::restate_overall;

    #[test]
    fn the_overall_figure_is_replaced_and_nothing_else() {
        let s = "the server retransmitted 4 segments; 294 KiB delivered during it (23.4 Mbit/s), against 19.2 Mbit/s over the connection";
        assert_eq!(
            restate_overall(s, "20.1 Mbit/s"),
            "the server retransmitted 4 segments; 294 KiB delivered during it (23.4 Mbit/s), against 20.1 Mbit/s over the connection"
        );
        let s = "x; 3 KiB delivered during it (less than a round trip: no rate), 7.58 Mbit/s over the connection";
        assert_eq!(
            restate_overall(s, "9.37 Mbit/s"),
            "x; 3 KiB delivered during it (less than a round trip: no rate), 9.37 Mbit/s over the connection"
        );
        assert_eq!(restate_overall("no figure here", "1 bit/s"), "no figure here");
    }
}
