//! ECN episodes: when a queue on a direction's path marked its segments Congestion
//! Experienced and its sender cut its window for it (RFC 3168 §5, §6.1.2), and what the
//! transfer delivered meanwhile. A mark is what a loss would have been had the queue not
//! been ECN-capable (RFC 3168 §5: an AQM marks an ECN-capable packet instead of dropping
//! it; RFC 8289 §4.4 likewise), so marks make episodes as retransmissions do
//! (`stall::loss`), ended the same way ([`super::episode`]).
//!
//! The signals of a direction: its segments marked CE as they pass the capture point (a
//! capture before the marking queue sees none), its receiver's ECE echoes (on every ACK
//! from a mark until the sender's CWR, RFC 3168 §6.1.3) and its sender's CWR (its window
//! reductions). Under AccECN, ECE and CWR are bits of a counter (RFC 9768 §3.2.2), and
//! when the handshake turned ECN off they are no echoes (§6.1.1): then only CE marks count.
//! One mark is ordinary (one window reduction, as one fast retransmit is ordinary repair):
//! an episode holds at least two marks or two reductions.

use super::episode::{Delivery, Run};
use super::{receiver_name, sender_name, stall};
use crate::decode::{Ecn, TcpFlags};
use crate::flow::Dir;
use crate::summary::{Resumed, Stall, StallKind};
use crate::tcp::ecn::flags_signal;
use crate::tcp::{Connection, SegmentEvent};
use crate::units::{count, secs};

#[derive(Clone, Debug, Default)]
pub struct Marks {
    open: Option<Episode>,
}

/// An episode: its run, and its signals by kind.
#[derive(Clone, Copy, Debug)]
struct Episode {
    run: Run,
    ce: u32,
    ece: u32,
    cwr: u32,
}

impl Marks {
    /// Every segment of the connection; `d` is the data direction this tracker watches.
    /// `delivery`: the direction's, this segment counted (`acked`: it acknowledged new data).
    /// `signal`: the segment carries CE, ECE or CWR (the caller asks only then, or while
    /// an episode is open).
    pub fn on_segment(
        &mut self,
        conn: &Connection,
        ev: &SegmentEvent,
        d: Dir,
        delivery: &Delivery,
        acked: bool,
        signal: bool,
    ) -> Option<Stall> {
        if signal {
            self.signal(conn, ev, d, delivery);
        }
        let e = Delivery::ended(&mut self.open, |e| &e.run, acked, conn, ev.ts)?;
        e.counts().then(|| Self::episode(conn, d, e, true, delivery))
    }

    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// A segment with CE, ECE or CWR: the signals it is for direction `d`.
    fn signal(&mut self, conn: &Connection, ev: &SegmentEvent, d: Dir, delivery: &Delivery) {
        let f = ev.flags;
        if f.syn() {
            return;
        }
        let ours = ev.dir == d;
        let classic = f.has(TcpFlags::ECE | TcpFlags::CWR) && flags_signal(conn.handshake.ecn());
        let ce = ours && ev.ecn == Ecn::Ce;
        let cwr = ours && classic && f.has(TcpFlags::CWR);
        let ece = !ours && classic && f.ack() && f.has(TcpFlags::ECE);
        if ce || cwr || ece {
            let e = self.open.get_or_insert_with(|| Episode {
                run: delivery.start(ev.ts),
                ce: 0,
                ece: 0,
                cwr: 0,
            });
            delivery.extend(&mut e.run, ev.ts);
            e.ce += ce as u32;
            e.ece += ece as u32;
            e.cwr += cwr as u32;
        }
    }

    fn episode(conn: &Connection, d: Dir, e: Episode, ended: bool, delivery: &Delivery) -> Stall {
        let mut s = stall(StallKind::EcnEpisode, Some(d), e.run.first, e.run.last);
        s.events = e.ce + e.ece + e.cwr;
        s.recovered = ended;
        s.resumed_by = ended.then_some(Resumed::Acknowledgment);
        let (sender, receiver) = (sender_name(d), receiver_name(d));
        let mut what = Vec::new();
        if e.ce > 0 {
            what.push(format!(
                "a queue marked {} CE",
                count(e.ce as u64, &format!("{sender} segment"), &format!("{sender} segments"))
            ));
        }
        if e.ece > 0 {
            what.push(format!(
                "the {receiver} echoed ECE on {}",
                count(e.ece as u64, "ACK", "ACKs")
            ));
        }
        if e.cwr > 0 {
            what.push(format!(
                "the {sender} reduced its congestion window {} (CWR)",
                count(e.cwr as u64, "time", "times")
            ));
        }
        let rates = delivery.during(conn, &e.run, &mut s);
        let origin = conn.first_ts;
        s.sentence = format!(
            "{} from +{} to +{} ({}){rates}",
            what.join(", "),
            secs((e.run.first - origin).secs_f64()),
            secs((e.run.last - origin).secs_f64()),
            secs((e.run.last - e.run.first).secs_f64())
        );
        s
    }

    pub fn finish(&self, conn: &Connection, d: Dir, delivery: &Delivery) -> Option<Stall> {
        let e = self.open.filter(Episode::counts)?;
        let repaired = conn.dir(d).flight() == Some(0);
        Some(Self::episode(conn, d, e, repaired, delivery))
    }
}

/// The law of ECN episodes (on the summary): the marks, echoes and reductions the
/// episodes of a direction state add up to no more than the direction's counts.
pub fn law(f: &crate::summary::FlowSummary) -> Vec<String> {
    let mut out = Vec::new();
    for (d, x) in [(Dir::C2S, &f.c2s), (Dir::S2C, &f.s2c)] {
        let mut sum = [0u64; 3];
        let episodes = f
            .stalls
            .iter()
            .filter(|s| s.kind == StallKind::EcnEpisode && s.direction == Some(d));
        for s in episodes {
            let n = |key: &str| -> u64 {
                let Some(i) = s.sentence.find(key) else { return 0 };
                let rest = &s.sentence[i + key.len()..];
                rest[..rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len())]
                    .parse()
                    .unwrap_or(0)
            };
            sum[0] += n("a queue marked ");
            sum[1] += n("echoed ECE on ");
            sum[2] += n("congestion window ");
        }
        for (stated, total, what) in [
            (sum[0], x.ce_segments, "CE marks"),
            (sum[1], x.ece_acks, "ECE echoes"),
            (sum[2], x.cwr_segments, "CWR"),
        ] {
            if stated > total {
                out.push(format!(
                    "{d}'s ECN episodes state {stated} {what}, the direction has {total}"
                ));
            }
        }
    }
    out
}

impl Episode {
    /// At least two marks, or two window reductions.
    fn counts(&self) -> bool {
        self.ce >= 2 || self.cwr >= 2
    }
}
