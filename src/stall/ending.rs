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

#[derive(Clone, Debug, Default)]
pub struct Ending {
    /// The first RST: when, who sent it, what was outstanding each way, and whether both
    /// FINs had been seen before it.
    reset: Option<Reset>,
    keep_alives: [KeepAlives; 2],
    origin: Option<Timestamp>,
}

#[derive(Clone, Copy, Debug)]
struct Reset {
    at: Timestamp,
    by: Dir,
    outstanding: [u64; 2],
    after_fins: bool,
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
            let h = &conn.handshake;
            self.reset = Some(Reset {
                at: ev.ts,
                by: ev.dir,
                outstanding: [out(Dir::C2S), out(Dir::S2C)],
                // The RST's own direction may already carry a FIN: both FINs means a close.
                after_fins: conn.dirs[0].fin && conn.dirs[1].fin,
                refused: ev.dir == Dir::S2C && h.syn.is_some() && h.syn_ack.is_none(),
            });
        }
    }

    pub fn finish(&self, conn: &Connection) -> Vec<Stall> {
        let mut out = Vec::new();
        let origin = self.origin.unwrap_or(conn.first_ts);
        let rel = |t: Timestamp| secs((t - origin).secs_f64());
        // A reset with nothing outstanding (the way many clients end an HTTP connection) is
        // in the flow's end state; a stall only when it cut a transfer short or refused it.
        let cut = |r: &Reset| r.refused || (!r.after_fins && r.outstanding.iter().any(|&o| o > 0));
        if let Some(r) = self.reset.filter(cut) {
            let mut s = stall(StallKind::Reset, Some(r.by), r.at, r.at);
            let who = sender_name(r.by);
            let peer = sender_name(r.by.reverse());
            let (own, theirs) = (r.outstanding[r.by.index()], r.outstanding[r.by.reverse().index()]);
            s.sentence = if r.refused {
                format!("the server refused the connection: it answered the SYN with a reset at +{}", rel(r.at))
            } else {
                let mut parts = Vec::new();
                if theirs > 0 {
                    parts.push(format!("{} the {peer} had sent was not yet acknowledged", bytes(theirs as f64)));
                }
                if own > 0 {
                    parts.push(format!("{} of its own data was outstanding", bytes(own as f64)));
                }
                format!("the {who} reset the connection at +{} mid-transfer: {}", rel(r.at), parts.join(", and "))
            };
            out.push(s);
        }
        let no_data = conn.dirs.iter().all(|d| d.unique_bytes == 0);
        for d in [Dir::C2S, Dir::S2C] {
            let k = &self.keep_alives[d.index()];
            if !no_data || k.count == 0 {
                continue;
            }
            let (first, last) = (k.times[0], k.last.unwrap_or(k.times[0]));
            let mut s = stall(StallKind::KeepAliveOnly, Some(d), first, last);
            s.events = k.count;
            s.intervals_s = intervals(&k.times);
            s.recovered = true;
            let answered = conn.packets[d.reverse().index()] > 0;
            s.sentence = format!(
                "the connection carried no data in the capture, only {} keep-alive(s) from the {}{}{}: an idle connection kept open",
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
