//! Loss episodes: when a direction's retransmissions happened, and what the transfer did
//! meanwhile. An episode runs from a retransmission until the sender has gone a
//! retransmission timer (RFC 6298's RTO, at least one second) with its data acknowledged
//! and nothing re-sent; a timeout's silent back-off does not end it, since nothing was
//! acknowledged in it. A lone retransmission (one fast retransmit) is not an episode. Losses spread over a whole transfer (random loss) make one episode
//! that spans it; a burst of losses (a failing link, a policer's drops) one that says when.

use super::episode::{Delivery, Run};
use super::{sender_name, stall};
use crate::flow::Dir;
use crate::summary::{Resumed, Stall, StallKind};
use crate::tcp::{Connection, SegmentEvent};
use crate::units::{bytes, secs};

#[derive(Clone, Debug, Default)]
pub struct Losses {
    /// The open episode.
    open: Option<Episode>,
}

/// An episode: its run of retransmissions, how many, and the bytes re-sent; and the
/// segments of the direction the receiver had reported receiving twice (D-SACK) when it
/// began.
#[derive(Clone, Copy, Debug)]
struct Episode {
    run: Run,
    count: u32,
    bytes: u64,
    dsacks_before: u64,
}

impl Losses {
    /// Every segment of the connection; `d` is the data direction this tracker watches.
    /// `delivery`: the direction's, this segment counted (`acked`: it acknowledged new data).
    #[inline]
    pub fn on_segment(
        &mut self,
        conn: &Connection,
        ev: &SegmentEvent,
        d: Dir,
        delivery: &Delivery,
        acked: bool,
    ) -> Option<Stall> {
        if ev.dir == d {
            if ev.send.retransmission {
                let e = self.open.get_or_insert_with(|| Episode {
                    run: delivery.start(ev.ts),
                    count: 0,
                    bytes: 0,
                    dsacks_before: conn.dir(d).dsack_segments,
                });
                delivery.extend(&mut e.run, ev.ts);
                e.count += 1;
                e.bytes += ev.len as u64;
            }
            return None;
        }
        let e = Delivery::ended(&mut self.open, |e| &e.run, acked, conn, ev.ts)?;
        // A lone retransmission is ordinary repair (a fast retransmit of one loss): counted
        // in the direction's figures, not an episode.
        (e.count >= 2).then(|| Self::episode(conn, d, e, true, delivery))
    }

    fn episode(conn: &Connection, d: Dir, e: Episode, ended: bool, delivery: &Delivery) -> Stall {
        // Every retransmission of the run reported received twice (D-SACK, RFC 2883 §4,
        // by the end of the episode: a retransmission timer after its last one, time for
        // every report to come back): the originals had arrived, so the run repaired no
        // loss (RFC 3708) and is no loss episode.
        let dsacks = conn.dir(d).dsack_segments.saturating_sub(e.dsacks_before);
        if dsacks >= e.count as u64 {
            return Self::spurious(conn, d, e, ended);
        }
        let mut s = Self::stall_of(StallKind::LossEpisode, d, &e, ended);
        let share = share(conn, d, e.count);
        // Delivery during the episode against the direction's average.
        let rates = delivery.during(conn, &e.run, &mut s);
        s.sentence = format!(
            "the {} retransmitted {} segments{share} ({}) {}{rates}",
            sender_name(d),
            e.count,
            bytes(e.bytes as f64),
            Self::span(conn, &e)
        );
        s
    }

    /// The stall of `kind` a run makes: its span, count, and whether it ended.
    fn stall_of(kind: StallKind, d: Dir, e: &Episode, ended: bool) -> Stall {
        let mut s = stall(kind, Some(d), e.run.first, e.run.last);
        s.events = e.count;
        s.recovered = ended;
        s.resumed_by = ended.then_some(Resumed::Acknowledgment);
        s
    }

    /// "from +a to +b (length)", from the connection's first packet.
    fn span(conn: &Connection, e: &Episode) -> String {
        let origin = conn.first_ts;
        format!(
            "from +{} to +{} ({})",
            secs((e.run.first - origin).secs_f64()),
            secs((e.run.last - origin).secs_f64()),
            secs((e.run.last - e.run.first).secs_f64())
        )
    }

    /// A run whose every retransmission was reported received twice.
    fn spurious(conn: &Connection, d: Dir, e: Episode, ended: bool) -> Stall {
        let mut s = Self::stall_of(StallKind::SpuriousRetransmission, d, &e, ended);
        s.sentence = format!(
            "the {} retransmitted {} segments ({}) {}, and the {} reported receiving every one of them twice (D-SACK, RFC 2883): the originals had arrived, nothing was lost (RFC 3708); the {} re-sent before their acknowledgments could reach it (a delay longer than its retransmission timer or its reordering allowance expected)",
            sender_name(d),
            e.count,
            bytes(e.bytes as f64),
            Self::span(conn, &e),
            super::receiver_name(d),
            sender_name(d)
        );
        s
    }

    pub fn finish(&self, conn: &Connection, d: Dir, delivery: &Delivery) -> Option<Stall> {
        let e = self.open.filter(|e| e.count >= 2)?;
        let repaired = conn.dir(d).flight() == Some(0);
        Some(Self::episode(conn, d, e, repaired, delivery))
    }
}

const SHARE_END: &str = " of its data segments)";

/// " (1% of its data segments)": the episode's `count` against the direction's data
/// segments (none without data).
fn share(conn: &Connection, d: Dir, count: u32) -> String {
    let x = conn.dir(d);
    if x.data_segments > 0 {
        format!(
            " ({}{SHARE_END}",
            crate::units::pct(x.retransmitted_segments.min(count as u64) as f64 / x.data_segments as f64)
        )
    } else {
        String::new()
    }
}

/// `sentence` with its share of the data segments as the connection's figures give it now.
pub fn restate_share(sentence: &str, conn: &Connection, d: Dir, count: u32) -> String {
    let Some(end) = sentence.find(SHARE_END).map(|i| i + SHARE_END.len()) else {
        return sentence.to_string();
    };
    let Some(start) = sentence[..end].rfind(" (") else {
        return sentence.to_string();
    };
    format!("{}{}{}", &sentence[..start], share(conn, d, count), &sentence[end..])
}
