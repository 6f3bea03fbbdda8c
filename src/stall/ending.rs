//! How a connection ended, when that is the finding: reset (RFC 9293 §3.5.2), refused
//! (an RST answering the SYN), or a connection that carried nothing but keep-alives
//! (RFC 9293 §3.8.4: a segment one below SND.NXT that the peer answers with an ACK).
//! A connection lost to unanswered retransmissions is found by [`super::outage`].

use super::{intervals, list_secs, sender_name, stall, MAX_INTERVALS};
use crate::flow::Dir;
use crate::summary::{Stall, StallKind};
use crate::tcp::{Connection, SegmentEvent};
use crate::time::Timestamp;
use crate::units::{bytes, secs};

/// The least idle time before a keep-alive timer fires: Linux's TCP_KEEPIDLE floor of one
/// second, less one jiffy. Linux measures the idle time in jiffies (tcp_keepalive_timer:
/// `keepalive_time_elapsed`, tcp_jiffies32 since the last segment received), and a jiffy
/// is up to 10 ms (CONFIG_HZ=100): a 1 s timer fired 996.6 ms after the data it followed
/// (the lab's keep-alive run at the client, HZ=250). From every vantage point the gap from
/// the last data to the first keep-alive is at least that idle time: at the sender of the
/// keep-alive the idle time runs from the last segment it received, and elsewhere the gap
/// adds a path delay to it.
const KEEPALIVE_IDLE_MIN: crate::time::Span = crate::time::Span::from_millis(1_000 - 10);

#[derive(Clone, Debug, Default)]
pub struct Ending {
    /// The first RST: when, who sent it, what was outstanding each way, and whether both
    /// FINs had been seen before it.
    reset: Option<Reset>,
    keep_alives: [KeepAlives; 2],
    /// The client's SYNs (the first few timed) and the first SYN/ACK: a setup that took
    /// retransmissions.
    syns: Vec<Timestamp>,
    syn_count: u32,
    syn_ack: Option<Timestamp>,
    /// Per direction, its FIN's sequence number and when it was sent (the first few):
    /// a FIN sent again waited for an ACK that did not come.
    fins: [Fins; 2],
    origin: Option<Timestamp>,
}

/// Below the least retransmission timeout of common stacks (FreeBSD's 30 ms, Linux's
/// 200 ms, Windows' 300 ms), with a tick of room.
const FIN_RTO_MIN: crate::time::Span = crate::time::Span::from_millis(20);

#[derive(Clone, Debug, Default)]
struct Fins {
    seq: Option<u32>,
    /// The ACK field of the last FIN counted: a FIN sent again that acknowledges more (the
    /// peer's FIN, in a simultaneous close) is an answer, not only a repeat.
    ack: Option<u32>,
    /// When the peer's ACK of the FIN first passed the capture point.
    acked_at: Option<Timestamp>,
    /// The ACK field of the end's first FIN.
    first_ack: Option<u32>,
    /// The peer had data outstanding when the end's first FIN passed: it was still sending.
    peer_sending_at_fin: bool,
    /// The end acknowledged the peer's data after its FIN: it still read (a half-close,
    /// RFC 9293 §3.6), not a socket closed for good.
    read_after: bool,
    times: Vec<Timestamp>,
    count: u32,
}

#[derive(Clone, Copy, Debug)]
struct Reset {
    at: Timestamp,
    by: Dir,
    outstanding: [u64; 2],
    after_fins: bool,
    /// When the resetting end had closed for good (its first FIN), if it had.
    closed_at: Option<Timestamp>,
    refused: bool,
}

#[derive(Clone, Debug, Default)]
struct KeepAlives {
    times: Vec<Timestamp>,
    count: u32,
    last: Option<Timestamp>,
}

impl Ending {
    pub fn on_segment(&mut self, conn: &Connection, ev: &SegmentEvent) {
        self.origin.get_or_insert(ev.ts);
        if ev.flags.syn() && !ev.flags.ack() && ev.dir == Dir::C2S && self.syn_ack.is_none() {
            self.syn_count += 1;
            if self.syns.len() <= MAX_INTERVALS {
                self.syns.push(ev.ts);
            }
        } else if ev.flags.syn() && ev.flags.ack() && ev.dir == Dir::S2C {
            self.syn_ack.get_or_insert(ev.ts);
        }
        // An end that acknowledges more than a FIN's worth of the peer's data after its own
        // FIN still reads.
        let own = &mut self.fins[ev.dir.index()];
        if let (Some(first), Some(ack), false) = (own.first_ack, ev.ack, ev.flags.rst()) {
            own.read_after |= (ack.wrapping_sub(first) as i32) > 1;
        }
        if ev.flags.fin() && !ev.flags.rst() {
            // The FIN's own number: after the segment's data (RFC 9293 §3.4).
            let at = ev.seq.wrapping_add(ev.len);
            let f = &mut self.fins[ev.dir.index()];
            // Sent again sooner than any retransmission timer could fire (a round trip, and
            // the least RTO stacks use, FreeBSD's 30 ms less a tick) is no timeout: a
            // simultaneous close re-sends its FIN to acknowledge the peer's.
            // A FIN repeated with the same ACK acknowledges nothing new: only a timer (RTO,
            // a tail-loss probe) sends it, however early its estimate fired (http_no_crlf's
            // server re-sent its FIN 167 ms on, within a 203 ms round trip).
            let answers = f.ack.is_some_and(|a| ev.ack.is_some_and(|b| b != a));
            let floor = if answers {
                conn.rtt.min_end_to_end().unwrap_or_default().max(FIN_RTO_MIN)
            } else {
                FIN_RTO_MIN
            };
            let timed_out = f.times.last().is_none_or(|&t| ev.ts - t >= floor);
            if f.seq.is_none_or(|s| s == at) && timed_out {
                f.seq = Some(at);
                f.ack = ev.ack;
                if f.first_ack.is_none() {
                    f.first_ack = ev.ack;
                    f.peer_sending_at_fin = conn.dir(ev.dir.reverse()).flight().is_some_and(|o| o > 0);
                }
                f.count += 1;
                if f.times.len() <= MAX_INTERVALS {
                    f.times.push(ev.ts);
                }
            }
        }
        // The peer's ACK of a FIN (its number one past the FIN's).
        let f = &mut self.fins[ev.dir.reverse().index()];
        if let (Some(fin), Some(ack), None) = (f.seq, ev.ack, f.acked_at) {
            if (ack.wrapping_sub(fin) as i32) > 0 && !ev.flags.rst() {
                f.acked_at = Some(ev.ts);
            }
        }
        if ev.send.keep_alive {
            let k = &mut self.keep_alives[ev.dir.index()];
            k.count += 1;
            k.last = Some(ev.ts);
            if k.times.len() <= MAX_INTERVALS {
                k.times.push(ev.ts);
            }
        }
        if ev.flags.rst() && self.reset.is_none() {
            let out = |d: Dir| conn.dir(d).flight().unwrap_or(0);
            // An end that had closed for good (its FIN sent, none of the peer's data read
            // since) answers data that reaches it after the close with a reset (RFC 1122
            // §4.2.2.13): the race of a close against the peer's last segments, not a
            // transfer cut short (443-firefox: the client's close_notify and FIN crossed the
            // server's 38-B record, and the closed socket reset it, "mid-transfer" before).
            let own = &self.fins[ev.dir.index()];
            // An end that closed while the peer still had data outstanding quit in the middle
            // of the peer's transfer (teto client_1: the iperf3 server closed with 724 KiB of
            // the client's upload in flight): that reset cut a transfer short.
            let closed_at = (conn.dir(ev.dir).fin && !own.read_after && !own.peer_sending_at_fin)
                .then(|| own.times.first().copied())
                .flatten();
            let h = &conn.handshake;
            self.reset = Some(Reset {
                at: ev.ts,
                by: ev.dir,
                outstanding: [out(Dir::C2S), out(Dir::S2C)],
                // The RST's own direction may already carry a FIN: both FINs means a close. So
                // does a reset from an end that had closed for good with nothing of its own
                // outstanding beyond its FIN (see `closed_at`).
                after_fins: (conn.dirs[0].fin && conn.dirs[1].fin) || (closed_at.is_some() && out(ev.dir) <= 1),
                closed_at,
                refused: ev.dir == Dir::S2C && h.syn.is_some() && h.syn_ack.is_none(),
            });
        }
    }

    pub fn finish(&self, conn: &Connection) -> Vec<Stall> {
        let mut out = Vec::new();
        let origin = self.origin.unwrap_or(conn.first_ts);
        let rel = |t: Timestamp| secs((t - origin).secs_f64());
        // A SYN sent again: the client's timer expired with no SYN/ACK (RFC 6298 §5.7: one
        // second at first, RFC 9293 §3.8.1), so the SYN or the answer was lost, or the
        // server's listen queue was full. The setup is time the connection did not move.
        if self.syn_count >= 2 {
            let first = self.syns[0];
            let end = self.syn_ack.unwrap_or(*self.syns.last().expect("two SYNs"));
            let mut s = stall(StallKind::SynRetransmission, Some(Dir::C2S), first, end);
            s.events = self.syn_count - 1;
            s.intervals_s = intervals(&self.syns);
            s.recovered = self.syn_ack.is_some();
            s.sentence = format!(
                "the client sent its SYN {} times ({} apart){}",
                self.syn_count,
                list_secs(&s.intervals_s),
                match self.syn_ack {
                    Some(t) => format!(
                        " before the server's SYN/ACK at +{}: the connection took {} to open (a SYN or SYN/ACK lost, or the server's listen queue full)",
                        rel(t),
                        secs((t - first).secs_f64())
                    ),
                    None => " and no SYN/ACK is in the capture".to_string(),
                }
            );
            out.push(s);
        }
        // A FIN sent again: its sender's timer expired with the FIN unacknowledged (RFC
        // 9293 §3.10.4: a FIN is retransmitted as data is). The close did not complete
        // cleanly while it waited; acknowledged at last, or never.
        for d in [Dir::C2S, Dir::S2C] {
            let f = &self.fins[d.index()];
            if f.count < 2 {
                continue;
            }
            let (first, last) = (f.times[0], *f.times.last().expect("two FINs"));
            let x = conn.dir(d);
            let acked = f
                .seq
                .zip(x.una.and_then(|u| x.relative(u)))
                .is_some_and(|(fin, una)| (una.wrapping_sub(fin) as i32) > 0);
            let mut s = stall(StallKind::FinRetransmission, Some(d), first, last);
            s.events = f.count - 1;
            s.intervals_s = intervals(&f.times);
            s.recovered = acked;
            // The ACK passed here before the FIN went out again: the sender's timer fired
            // before it arrived (too early an estimate), or it was lost beyond this point.
            let outcome = match f.acked_at.filter(|&a| acked && a < last) {
                Some(a) => format!(
                    "had passed the capture point {} after the first, before the FIN was sent again: the {}'s timer fired before that ACK reached it, or the ACK was lost on the way",
                    secs((a - first).secs_f64()),
                    sender_name(d)
                ),
                None if acked => "came only after that".to_string(),
                None => "never came in the capture: the connection did not close cleanly (the peer gone, or its ACK lost)".to_string(),
            };
            s.sentence = format!(
                "the {} sent its FIN {} times from +{} ({} apart): the acknowledgment of its close {outcome}",
                sender_name(d),
                f.count,
                rel(first),
                list_secs(&s.intervals_s),
            );
            out.push(s);
        }
        // A reset with nothing outstanding (the way many clients end an HTTP connection) is
        // in the flow's end state; a stall only when it cut a transfer short or refused it.
        let cut = |r: &Reset| r.refused || (!r.after_fins && r.outstanding.iter().any(|&o| o > 0));
        if let Some(r) = self.reset.filter(cut) {
            let mut s = stall(StallKind::Reset, Some(r.by), r.at, r.at);
            let who = sender_name(r.by);
            let peer = sender_name(r.by.reverse());
            let (own, theirs) = (r.outstanding[r.by.index()], r.outstanding[r.by.reverse().index()]);
            s.sentence = if r.refused {
                format!(
                    "the server refused the connection: it answered the SYN with a reset at +{}",
                    rel(r.at)
                )
            } else {
                let mut parts = Vec::new();
                if theirs > 0 {
                    parts.push(format!(
                        "{} the {peer} had sent was not yet acknowledged",
                        bytes(theirs as f64)
                    ));
                }
                if own > 0 {
                    parts.push(format!("{} of its own data was outstanding", bytes(own as f64)));
                }
                match r.closed_at {
                    Some(fin) => format!(
                        "the {who} reset the connection at +{}, {} after closing its side (its FIN): the {peer}'s data that reached it after that close was answered with a reset (RFC 1122 §4.2.2.13), a close racing the {peer}'s last segments rather than a transfer cut short: {}",
                        rel(r.at),
                        secs((r.at - fin).secs_f64()),
                        parts.join(", and ")
                    ),
                    None => format!(
                        "the {who} reset the connection at +{} mid-transfer: {}",
                        rel(r.at),
                        parts.join(", and ")
                    ),
                }
            };
            out.push(s);
        }
        // Keep-alives are sent only by an end idle for its keep-alive time with nothing of
        // its own outstanding (RFC 1122 §4.2.3.6; Linux's tcp_keepalive_time): from the last
        // data on, nothing but keep-alives proves the connection idle, whatever it carried
        // before (a greeting, a request and its answer), when all of that was acknowledged.
        let no_data = conn.dirs.iter().all(|d| d.unique_bytes == 0);
        let last_data = conn.dirs.iter().filter_map(|d| d.last_data).max();
        let all_acked = conn.dirs.iter().all(|d| d.flight().is_none_or(|f| f == 0));
        for d in [Dir::C2S, Dir::S2C] {
            let k = &self.keep_alives[d.index()];
            if k.count == 0 {
                continue;
            }
            // The keep-alive timer runs for at least a second of idleness (Linux's
            // TCP_KEEPIDLE is whole seconds, at least 1; RFC 1122 §4.2.3.6's default is two
            // hours): "one below SND.NXT" sooner after data is no keep-alive of an idle end.
            let idle_after_data = all_acked && last_data.is_some_and(|t| k.times[0] - t >= KEEPALIVE_IDLE_MIN);
            if !no_data && !idle_after_data {
                continue;
            }
            let (first, last) = (k.times[0], k.last.unwrap_or(k.times[0]));
            let mut s = stall(StallKind::KeepAliveOnly, Some(d), first, last);
            s.events = k.count;
            s.intervals_s = intervals(&k.times);
            // Answered keep-alives: the peer and the path were there (the connection alive).
            let answered = conn.packets[d.reverse().index()] > 0;
            s.recovered = answered;
            let before = if no_data {
                "the connection carried no data in the capture, only".to_string()
            } else {
                let carried: u64 = conn.dirs.iter().map(|x| x.unique_bytes).sum();
                format!(
                    "after its last data at +{} ({} in all, acknowledged) the connection carried only",
                    rel(last_data.expect("data was carried")),
                    bytes(carried as f64)
                )
            };
            s.sentence = format!(
                "{before} {} keep-alive(s) from the {}{}{}: an idle connection kept open",
                k.count,
                sender_name(d),
                if s.intervals_s.is_empty() {
                    String::new()
                } else {
                    format!(", {} apart", list_secs(&s.intervals_s))
                },
                if answered { ", answered" } else { ", never answered" }
            );
            out.push(s);
        }
        out
    }
}
