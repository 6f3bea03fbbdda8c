//! Outages: data outstanding and nothing acknowledged for longer than a retransmission
//! timer (RFC 6298's RTO, at least one second). A sender in that state has timed out and is
//! retransmitting with its timer doubling each time (RFC 6298 §5.5): the back-off series
//! is part of the finding, and when it never gets an answer the connection is lost.
//! Shorter series that recover (two or more retransmissions of the oldest data backing
//! off, answered in under a second) are reported as `rto-backoff`.
//!
//! Seen from the receiver's side of the outage the sender's flight is out of sight; there
//! the sign is a silence of the whole connection ended by a retransmission ([`Silence`]).

use super::{backs_off, intervals, list_secs, receiver_name, sender_name, stall, threshold, MAX_INTERVALS};
use crate::flow::Dir;
use crate::summary::{AcksLacking, Resumed, Stall, StallKind, Wait};
use crate::tcp::{Connection, SegmentEvent};
use crate::time::Timestamp;
use crate::units::{bytes, secs};

/// The shortest retransmission timeout of common stacks: Linux's TCP_RTO_MIN (200 ms,
/// include/net/tcp.h; RFC 6298 §2.4 asks for one second). Re-sending the oldest data sooner
/// than this after its last transmission is fast retransmit or recovery, not a timeout.
const RTO_MIN: crate::time::Span = crate::time::Span::from_millis(200);

/// One data direction's wait for acknowledgments.
#[derive(Clone, Debug, Default)]
pub struct Outage {
    /// Since when data has been outstanding with no acknowledgment of anything new.
    since: Option<Timestamp>,
    /// Retransmissions during the wait (the first few timed) and their count.
    retransmissions: Vec<Timestamp>,
    retransmission_count: u32,
    /// Timeouts in the wait: re-sendings of the oldest outstanding data at least RTO_MIN
    /// after its previous sending, and when that data was last sent.
    timeouts: u32,
    oldest_sent: Option<Timestamp>,
    /// The receiver's window is closed: then the window, not the path, holds the data (a
    /// zero-window stall, reported as such).
    window_closed: bool,
    /// The receiver's answers during the wait that prove the data reached it.
    answers: Answers,
    /// What shows that the capture, not the path, lacks the acknowledgments (the first
    /// sign in the wait).
    unseen: Option<Unseen>,
    /// What an earlier wait showed the capture lacks: it holds for every later one.
    lacks: Option<Unseen>,
    /// The waits the capture lacks the receiver's acknowledgments in (the first
    /// `AcksLacking::MAX_WAITS`; later ones extend the last), and their total.
    lacking: Vec<(Timestamp, Timestamp)>,
    lacking_total: crate::time::Span,
    /// The oldest outstanding data was sent again in the wait.
    oldest_resent: bool,
    /// The connection's first reset: a wait still open then ends there.
    reset_at: Option<Timestamp>,
    /// Waits the capture could not judge (`Judged::Note`), the first few.
    pub notes: Vec<String>,
    origin: Option<Timestamp>,
}

/// Notes kept per direction: the first say what the capture lacks; more repeat it.
pub(super) const MAX_NOTES: usize = 2;

/// ACKs of the receiver during a wait that prove the sender's segments reached it: a SACK
/// block reporting more than before (RFC 2018 §4: the receiver reports each segment that
/// arrives above a hole), or a duplicate ACK (RFC 5681 §4.2: sent for each segment that
/// arrives out of order). A wait with such answers all along is no outage of the path or
/// of the receiver: the cumulative ACK stood still on a hole the sender did not repair.
#[derive(Clone, Copy, Debug, Default)]
struct Answers {
    count: u32,
    last: Option<Timestamp>,
    /// The longest time without an answer, from the start of the wait.
    longest_silence: crate::time::Span,
    /// The highest byte a SACK block reported in the wait (relative).
    sack_high: Option<u32>,
    /// Bytes the latest such block reported beyond the cumulative ACK.
    beyond: u32,
}

impl Answers {
    fn on_answer(&mut self, since: Timestamp, at: Timestamp) {
        let from = self.last.unwrap_or(since);
        self.longest_silence = self.longest_silence.max(at - from);
        self.last = Some(at);
        self.count += 1;
    }

    /// The longest silence of the wait [since, end).
    fn silence(&self, since: Timestamp, end: Timestamp) -> crate::time::Span {
        self.longest_silence.max(end - self.last.unwrap_or(since))
    }
}

/// Why a wait says nothing about the path: the capture lacks segments that were sent.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Unseen {
    /// The sender acknowledged the peer's data the capture never saw: the peer sent
    /// segments meanwhile, each carrying an acknowledgment (RFC 9293 §3.10.7.4), and the
    /// capture holds none of them.
    PeerSegments,
    /// The receiver acknowledged the sender's data beyond anything the capture saw sent:
    /// the capture missed the sender's segments of the wait (retransmissions or not).
    OwnSegments,
    /// The sender had more outstanding than any congestion window allows with what the
    /// capture shows acknowledged: a window grows only on ACKs, by at most the bytes they
    /// acknowledge (RFC 5681 §3.1, RFC 3465), from an initial window (RFC 6928). The ACKs
    /// reached the sender; the capture lacks them.
    Overrun,
    /// The sender kept sending new data longer than a retransmission timer into the wait
    /// and never re-sent the oldest: its timer would have (RFC 6298 §5.4), and only ACKs
    /// open room for new data (RFC 5681 §3.1). It had ACKs the capture lacks.
    Clocked,
}

/// The largest initial congestion window a sender uses: RFC 6928's ten segments, and the
/// larger ones some servers configure (Linux `ip route ... initcwnd`, up to ~100 segments
/// of 1460 B on content delivery networks), with room: 256 KiB.
const INITIAL_WINDOW_MAX: u64 = 256 * 1024;

impl Outage {
    /// Whether a wait showed that the capture lacks the receiver's acknowledgments of this
    /// direction's data (not a segment it missed once).
    pub fn lacks_acks(&self) -> bool {
        self.lacks.is_some() || self.unseen.is_some_and(|u| u != Unseen::OwnSegments)
    }

    /// A wait [since, end) the capture lacks the receiver's acknowledgments in.
    fn on_lacking(&mut self, since: Timestamp, end: Timestamp) {
        add_wait(&mut self.lacking, &mut self.lacking_total, since, end);
    }

    /// Where the capture lacks the receiver's acknowledgments of this direction's data
    /// ([`Self::lacks_acks`]): the waits it showed in, with the one still open at `end` (the
    /// connection's last packet) when it shows it too, or would be noted for it.
    pub fn acks_lacking(&self, conn: &Connection, d: Dir, end: Timestamp, window_closed: bool) -> Option<AcksLacking> {
        if !self.lacks_acks() {
            return None;
        }
        let (mut waits, mut total) = (self.lacking.clone(), self.lacking_total);
        if let Some(since) = self.since {
            let shown = self.unseen.is_some_and(|u| u != Unseen::OwnSegments);
            let noted = self.lacks.is_some() && matches!(self.finish(conn, d, end, window_closed), Judged::Note(_));
            if shown || noted {
                let end = self.reset_at.filter(|&t| t >= since).map_or(end, |t| t.min(end));
                add_wait(&mut waits, &mut total, since, end);
            }
        }
        let secs = |t: Timestamp| t.secs_f64();
        Some(AcksLacking {
            waits: waits
                .iter()
                .map(|&(a, b)| Wait {
                    start: secs(a),
                    end: secs(b),
                })
                .collect(),
            seconds: total.secs_f64(),
        })
    }

    pub fn waiting(&self) -> bool {
        self.since.is_some()
    }

    /// Every segment of the connection; `d` is the data direction this tracker watches.
    pub fn on_segment(&mut self, conn: &Connection, ev: &SegmentEvent, d: Dir, window_closed: bool) -> Option<Stall> {
        self.origin.get_or_insert(ev.ts);
        if ev.flags.rst() {
            self.reset_at.get_or_insert(ev.ts);
        }
        // A window that reopens during a wait lets the data go from then on: what held it
        // until then was the window (a zero-window stall), and the wait for the path starts
        // at the reopening.
        if self.window_closed && !window_closed && self.since.is_some() {
            self.since = Some(ev.ts);
            self.oldest_sent = Some(ev.ts);
            self.retransmissions.clear();
            self.retransmission_count = 0;
            self.timeouts = 0;
            self.answers = Answers::default();
            self.oldest_resent = false;
        }
        self.window_closed = window_closed;
        if let Some(since) = self.since {
            self.watch(conn, ev, d, since);
        }
        if ev.dir == d {
            if ev.send.new_bytes > 0 && self.since.is_none() {
                self.since = Some(ev.ts);
                self.oldest_sent = Some(ev.ts);
            }
            let x = conn.dir(d);
            let oldest = ev.send.retransmission && x.una.and_then(|u| x.relative(u)) == Some(ev.seq);
            if oldest {
                self.oldest_resent = true;
                if self.oldest_sent.is_some_and(|t| ev.ts - t >= RTO_MIN) {
                    self.timeouts += 1;
                }
                self.oldest_sent = Some(ev.ts);
            }
            if let (true, Some(since)) = (ev.send.retransmission, self.since) {
                self.retransmission_count += 1;
                // Timed from the start of the wait: the first interval is the first timeout.
                if self.retransmissions.is_empty() {
                    self.retransmissions.push(since);
                }
                if self.retransmissions.len() <= MAX_INTERVALS {
                    self.retransmissions.push(ev.ts);
                }
            }
            return None;
        }
        if ev.acked.acked == 0 {
            return None;
        }
        // Something new was acknowledged: a wait ends here.
        let found = match self.since.map(|since| self.judge(conn, d, since, ev.ts, true)) {
            Some(Judged::Stall(s)) => Some(s),
            Some(Judged::Note(n)) => {
                // A capture shown to lack the receiver's acknowledgments once can judge no
                // later wait of the direction either (a segment of the sender's it missed
                // once says nothing of the rest).
                self.lacks = self.lacks.or(self.unseen.filter(|&u| u != Unseen::OwnSegments));
                if let (Some(since), true) = (self.since, self.lacks.is_some()) {
                    self.on_lacking(since, ev.ts);
                }
                if self.notes.len() < MAX_NOTES {
                    self.notes.push(n);
                }
                None
            }
            _ => None,
        };
        let outstanding = conn.dir(d).flight().is_some_and(|f| f > 0);
        self.since = outstanding.then_some(ev.ts);
        self.oldest_sent = self.since;
        self.retransmissions.clear();
        self.retransmission_count = 0;
        self.timeouts = 0;
        self.window_closed = window_closed;
        self.answers = Answers::default();
        self.unseen = None;
        self.oldest_resent = false;
        found
    }

    /// During a wait: the receiver's answers, and signs that the capture lacks segments.
    fn watch(&mut self, conn: &Connection, ev: &SegmentEvent, d: Dir, since: Timestamp) {
        if ev.dir == d {
            if ev.acked.beyond_seen {
                self.unseen.get_or_insert(Unseen::PeerSegments);
            }
            // Only a connection seen from its SYN: before it, the window may have grown on
            // ACKs the capture never had a chance to see.
            let x = conn.dir(d);
            // (Not where the receiver's SACKs or duplicates came: they open room for new
            // data themselves, RFC 6675, and a capture past a loss never sees the resends.)
            if ev.send.new_bytes > 0
                && !self.oldest_resent
                && self.answers.count == 0
                && ev.ts - since > threshold(conn)
            {
                self.unseen.get_or_insert(Unseen::Clocked);
            }
            if ev.send.new_bytes > 0 && x.isn.is_some() {
                // Delivered: up to the highest byte the receiver reported, cumulatively or
                // in a SACK block (a window grows on SACKed deliveries too).
                let reported = match (x.una, x.sacks.high_sacked()) {
                    (Some(u), Some(h)) if h.is_after(u) => Some(h),
                    (u, _) => u,
                };
                // Without SACK, the segments duplicate ACKs reported above the hole are
                // delivered too, and each one opens the window of a recovery (RFC 5681
                // §3.2 step 4; Linux counts them as SACKed, `tcp_add_reno_sack`): P44
                // lfp_bigbuf at the client, a NewReno recovery of 18 s with 9 MB above its
                // holes, read as ACKs the capture lacked beside the receiver itself.
                let acked = reported.and_then(|u| x.relative(u)).unwrap_or(0) as u64 + x.reported_by_duplicates();
                let limit = acked + INITIAL_WINDOW_MAX.max(10 * conn.mss(d) as u64);
                if x.flight().is_some_and(|f| f > limit) {
                    self.unseen.get_or_insert(Unseen::Overrun);
                }
            }
            return;
        }
        if ev.acked.beyond_seen {
            self.unseen.get_or_insert(Unseen::OwnSegments);
        }
        let high = ev
            .sack
            .iter()
            .map(|(_, r)| r)
            .max_by(|a, b| (a.wrapping_sub(*b) as i32).cmp(&0));
        let sacked_more = high.is_some_and(|h| self.answers.sack_high.is_none_or(|o| (h.wrapping_sub(o) as i32) > 0));
        if sacked_more {
            self.answers.sack_high = high;
            let x = conn.dir(d);
            let una = x.una.and_then(|u| x.relative(u));
            if let (Some(h), Some(u)) = (high, una) {
                self.answers.beyond = (h.wrapping_sub(u) as i32).max(0) as u32;
            }
        }
        if sacked_more || ev.acked.duplicate {
            self.answers.on_answer(since, ev.ts);
        }
    }

    /// The wait [since, end) as a stall, if it is one; or, where the capture lacks the
    /// segments that would tell, a note saying so.
    fn judge(&self, conn: &Connection, d: Dir, since: Timestamp, end: Timestamp, answered: bool) -> Judged {
        if self.window_closed {
            return Judged::Nothing;
        }
        let wait = end - since;
        let series = intervals(&self.retransmissions);
        let long = wait >= threshold(conn);
        let backoff = self.timeouts >= 2 && backs_off(&series);
        let mut kind = match (long, answered) {
            (true, true) => StallKind::Outage,
            (_, false) if self.retransmission_count > 0 && long => StallKind::Lost,
            (true, false) => StallKind::Outage,
            (false, true) if backoff => StallKind::RtoBackoff,
            _ => return Judged::Nothing,
        };
        let at = secs((since - self.origin.unwrap_or(since)).secs_f64());
        let who = sender_name(d);
        if let Some(u) = self.unseen {
            return Judged::Note(unseen_note(u, who, receiver_name(d), &at, secs(wait.secs_f64())));
        }
        if self.lacks.is_some() {
            return Judged::Note(format!(
                "{WAIT_NOTE} {who}'s data is in the capture for {} from +{at}: not judged an outage, as the capture lacks the {}'s acknowledgments (the note above)",
                secs(wait.secs_f64()),
                receiver_name(d)
            ));
        }
        // The answers kept coming when no silence between them (or at either end of the
        // wait) was long enough to fire a retransmission timer: shorter than the least RTO
        // (200 ms) or than the round trip the sender was living (SRTT; a bloated queue
        // spaces ACK bursts by it). A longer silence is the path's, whatever came around it.
        let silence = self.answers.silence(since, end);
        let timer = conn.rtt.smoothed().unwrap_or(crate::time::Span::ZERO).max(RTO_MIN);
        let hole = self.answers.count > 0 && silence < threshold(conn) && silence < timer;
        if hole {
            kind = StallKind::UnrepairedHole;
        }
        let mut s = stall(kind, Some(d), since, end);
        s.recovered = answered;
        s.events = self.retransmission_count;
        s.intervals_s = series.clone();
        s.resumed_by = answered.then_some(Resumed::Acknowledgment);
        let retrans = match self.retransmission_count {
            0 => "without retransmitting".to_string(),
            n => format!(
                "retransmitting {n} time(s){}",
                if series.is_empty() {
                    String::new()
                } else {
                    format!(
                        " {} apart{}",
                        list_secs(&series),
                        if backs_off(&series) { " (RTO back-off)" } else { "" }
                    )
                }
            ),
        };
        let outstanding = conn
            .dir(d)
            .flight()
            .map_or(String::new(), |f| format!(" with {} outstanding", bytes(f as f64)));
        let ended = if self.reset_at.is_some_and(|t| t <= end) {
            "the connection was reset"
        } else {
            "the capture ended"
        };
        s.sentence = match kind {
            StallKind::UnrepairedHole => {
                let sacked = match self.answers.beyond {
                    0 => String::new(),
                    b => format!(", reporting {} beyond it (SACK)", bytes(b as f64)),
                };
                format!(
                    "the cumulative ACK stood still for {} from +{at} ({retrans}){}, while the {} kept answering: {} ACKs{sacked}, never more than {} apart. The path and the receiver worked; the {who} left a hole unrepaired until {}: its loss recovery, not an outage, held the transfer (RFC 6675 repairs a hole on the SACKs; RFC 8985 finds a lost retransmission)",
                    secs(s.duration_s),
                    if answered { "" } else { outstanding.as_str() },
                    receiver_name(d),
                    self.answers.count,
                    secs(silence.secs_f64()),
                    if answered { "its retransmission timer sent it again" } else { ended },
                )
            }
            StallKind::Outage if answered => format!(
                "nothing the {who} sent was acknowledged for {} from +{at} ({retrans}); an acknowledgment then resumed the transfer: an outage of the path or of the receiver",
                secs(s.duration_s)
            ),
            StallKind::Outage => format!(
                "nothing the {who} sent was acknowledged in the last {} of the capture, from +{at}{outstanding} ({retrans})",
                secs(s.duration_s)
            ),
            StallKind::Lost => format!(
                "connection lost: from +{at} the {who} got no acknowledgment for {}{outstanding}, {retrans}, and none came before {ended}",
                secs(s.duration_s)
            ),
            _ => format!(
                "the {who}'s retransmission timer expired {} times in a row from +{at} ({retrans}) before an acknowledgment came after {}",
                self.timeouts,
                secs(s.duration_s)
            ),
        };
        Judged::Stall(s)
    }

    /// At the end of the connection: a wait still open (ended by a reset, if one came).
    pub fn finish(&self, conn: &Connection, d: Dir, end: Timestamp, window_closed: bool) -> Judged {
        let Some(since) = self.since else {
            return Judged::Nothing;
        };
        if window_closed || !conn.dir(d).flight().is_some_and(|f| f > 0) {
            return Judged::Nothing;
        }
        let end = self.reset_at.filter(|&t| t >= since).map_or(end, |t| t.min(end));
        self.judge(conn, d, since, end, false)
    }
}

/// The wait [since, end) added to `waits` (the last extended once they are
/// `AcksLacking::MAX_WAITS`) and to their `total`.
fn add_wait(waits: &mut Vec<(Timestamp, Timestamp)>, total: &mut crate::time::Span, since: Timestamp, end: Timestamp) {
    *total = *total + (end - since).max_zero();
    if waits.len() >= AcksLacking::MAX_WAITS {
        if let Some(last) = waits.last_mut() {
            last.1 = end;
        }
    } else {
        waits.push((since, end));
    }
}

/// What a wait came to.
#[derive(Debug)]
pub enum Judged {
    Stall(Stall),
    /// The capture lacks what would tell: a note for the flow.
    Note(String),
    Nothing,
}

fn unseen_note(u: Unseen, who: &str, peer: &str, at: &str, wait: String) -> String {
    let why = match u {
        Unseen::PeerSegments => format!(
            "the {who} acknowledged data of the {peer} that is not in the capture, and every segment the {peer} sent carried an acknowledgment (RFC 9293 §3.10.7.4): the capture missed them"
        ),
        Unseen::OwnSegments => format!(
            "the {peer} acknowledged data of the {who} {OWN_SEGMENTS}: the capture missed the {who}'s segments of that time"
        ),
        Unseen::Clocked => format!(
            "the {who} kept sending new data through it and never re-sent its oldest: its retransmission timer would have (RFC 6298 §5.4), and only acknowledgments open room for new data (RFC 5681 §3.1): acknowledgments reached the {who} that the capture lacks"
        ),
        Unseen::Overrun => format!(
            "the {who} had more outstanding than any congestion window allows with what the capture shows acknowledged (a window grows only on acknowledgments, RFC 5681 §3.1, from at most an initial window, RFC 6928): acknowledgments reached the {who} that the capture lacks"
        ),
    };
    format!(
        "{WAIT_NOTE} {who}'s data is in the capture for {wait} from +{at}, but that is no outage: {why} (a one-sided capture, asymmetric routing, or packets the capture dropped)"
    )
}

/// Silence of the whole connection ended by a retransmission: an outage seen from where
/// the waiting data is out of sight (near its receiver, or past the failed hop).
#[derive(Clone, Debug, Default)]
pub struct Silence {
    last: Option<Timestamp>,
    origin: Option<Timestamp>,
}

impl Silence {
    pub fn on_segment(&mut self, conn: &Connection, ev: &SegmentEvent, sender_saw_it: bool) -> Option<Stall> {
        self.origin.get_or_insert(ev.ts);
        let last = self.last.replace(ev.ts.max(self.last.unwrap_or(ev.ts)))?;
        if sender_saw_it || !ev.send.retransmission || ev.ts - last < threshold(conn) {
            return None;
        }
        let mut s = stall(StallKind::Outage, Some(ev.dir), last, ev.ts);
        s.recovered = true;
        s.events = 1;
        s.resumed_by = Some(Resumed::Retransmission);
        s.sentence = format!(
            "the connection was silent for {} from +{}, then the {} retransmitted: its data or the answers were lost for that long (an outage), or its retransmission timer had backed off",
            secs(s.duration_s),
            secs((last - self.origin.unwrap_or(last)).secs_f64()),
            sender_name(ev.dir)
        );
        Some(s)
    }
}

/// What a note about a wait says first (`unseen_note`, `judge`), and the words only a wait
/// that missed the sender's own segments (not the receiver's ACKs) says.
const WAIT_NOTE: &str = "no acknowledgment of the";
const OWN_SEGMENTS: &str = "beyond anything the capture saw sent";

/// The law of a capture that lacks a direction's acknowledgments (on the summary): a
/// direction the notes say the capture lacks the receiver's ACKs of is marked so
/// (`acks_lacking`), and then nothing that only those ACKs tell is stated as measured — no
/// flight (data sent less the ACKs seen grows with every segment while ACKs are missing),
/// no window scale of the receiver inferred from such flights (RFC 7323 §2.3 against RFC
/// 9293 §3.8.6.2.1), and no delivery of a loss or ECN episode over a wait without them
/// (only ACKs report a delivery: nothing acknowledged in the capture is not nothing
/// delivered).
pub fn acks_law(f: &crate::summary::FlowSummary) -> Vec<String> {
    let mut out = Vec::new();
    for d in [Dir::C2S, Dir::S2C] {
        let x = f.dir(d);
        let wait_note = format!("{WAIT_NOTE} {}'s data is in the capture", sender_name(d));
        let gate_note = format!("{} {d} data", super::LACKS_ACKS_NOTE);
        let said = f.notes.iter().find(|n| {
            (n.starts_with(&wait_note) && !n.contains(OWN_SEGMENTS))
                || (d == f.bulk_direction && n.contains(&gate_note))
        });
        let Some(lacking) = &x.acks_lacking else {
            if let Some(n) = said {
                out.push(format!(
                    "{d}: a note says the capture lacks its acknowledgments, yet it is not marked so: {n}"
                ));
            }
            continue;
        };
        if lacking.waits.is_empty() || lacking.waits.iter().any(|w| w.end < w.start) || lacking.seconds < 0.0 {
            out.push(format!("{d}: malformed waits without acknowledgments: {lacking:?}"));
        }
        if x.max_flight_bytes.is_some() || x.max_in_network_bytes.is_some() {
            out.push(format!(
                "{d}: the capture lacks its acknowledgments, yet a flight is stated: {:?} ({:?} in the network)",
                x.max_flight_bytes, x.max_in_network_bytes
            ));
        }
        if d == f.bulk_direction
            && (f.max_flight_bytes.is_some()
                || f.sender_max_flight_bytes.is_some()
                || f.sender_max_in_network_bytes.is_some())
        {
            out.push(format!(
                "the capture lacks the bulk direction's acknowledgments, yet a flight is stated: {:?}, the sender's {:?}",
                f.max_flight_bytes, f.sender_max_flight_bytes
            ));
        }
        // The windows granted to `d`'s data are the receiver's.
        let inferred = f.handshake.inferred.as_ref().and_then(|i| match d {
            Dir::S2C => i.client_wscale,
            Dir::C2S => i.server_wscale,
        });
        if let Some(k) = inferred {
            out.push(format!(
                "{d}: the capture lacks its acknowledgments, yet the {}'s window scale is inferred from its flights: {k}",
                receiver_name(d)
            ));
        }
        for s in f.stalls.iter().filter(|s| {
            matches!(s.kind, StallKind::LossEpisode | StallKind::EcnEpisode)
                && s.direction == Some(d)
                && lacking.meets(s.start, s.end)
        }) {
            if s.delivered_bps.is_some() || s.sentence.contains(super::episode::DELIVERED) {
                out.push(format!(
                    "{d}: a {} over a wait whose acknowledgments the capture lacks states a delivery ({:?}): {}",
                    s.kind.as_str(),
                    s.delivered_bps,
                    s.sentence
                ));
            }
        }
    }
    out
}
