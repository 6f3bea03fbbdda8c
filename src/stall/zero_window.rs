//! Zero-window episodes: the receiver advertised a window of zero (its buffer full, its
//! application not reading) until a window update reopened it — or never. Meanwhile the
//! sender probes (RFC 9293 §3.8.6.1; Linux `tcp_probe_timer`, Windows 1-byte probes),
//! backing off exponentially; the probes and the answers carry no round trip.
//!
//! A reader that keeps falling behind closes the window again and again within
//! milliseconds; closings less than a retransmission timer apart (RFC 6298's RTO, at least
//! one second) are one episode, with its count, the time closed in all and the longest.

use super::{intervals, list_secs, receiver_name, sender_name, stall, threshold, MAX_INTERVALS};
use crate::flow::Dir;
use crate::summary::{Resumed, Stall, StallKind};
use crate::tcp::{Connection, SegmentEvent};
use crate::time::{Span, Timestamp};
use crate::units::{bytes, secs};

/// One data direction's window as its receiver advertised it.
#[derive(Clone, Debug, Default)]
pub struct ZeroWindow {
    /// When the current closing began, and the sender's segments (probes) since, the
    /// first few timed from the closing.
    open: Option<Timestamp>,
    probes: Vec<Timestamp>,
    probe_count: u32,
    /// The episode the closings belong to.
    episode: Option<Episode>,
    origin: Option<Timestamp>,
}

#[derive(Clone, Debug)]
struct Episode {
    first: Timestamp,
    last_reopen: Timestamp,
    closings: u32,
    closed: Span,
    longest: Span,
    probes: u32,
    /// The probe spacing of the longest closing (its back-off).
    longest_probes: Vec<f64>,
    reopened_to: String,
}

impl ZeroWindow {
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// A segment of the receiver (going the other way) advertised a window for this data;
    /// returns an episode that ended before this one began.
    #[inline]
    pub fn on_advert(&mut self, conn: &Connection, ev: &SegmentEvent) -> Option<Stall> {
        if !ev.flags.ack() {
            return None;
        }
        let data = ev.dir.reverse();
        if ev.win_raw == 0 {
            if self.open.is_some() {
                return None;
            }
            self.open = Some(ev.ts);
            // The probes' spacing is timed from the closing: the first interval is the
            // first persist timeout.
            self.probes.clear();
            self.probes.push(ev.ts);
            self.probe_count = 0;
            // A closing long after the last reopening starts a new episode.
            let apart = self
                .episode
                .as_ref()
                .is_some_and(|e| ev.ts - e.last_reopen > threshold(conn));
            return if apart {
                self.episode.take().map(|e| self.sentence(data, e, true))
            } else {
                None
            };
        }
        let start = self.open.take()?;
        let closed = ev.ts - start;
        let reopened_to = ev.win_bytes.map_or(format!("raw {}", ev.win_raw), |b| bytes(b as f64));
        let spacing = intervals(&self.probes);
        let e = self.episode.get_or_insert(Episode {
            first: start,
            last_reopen: ev.ts,
            closings: 0,
            closed: Span::ZERO,
            longest: Span::ZERO,
            probes: 0,
            longest_probes: Vec::new(),
            reopened_to: String::new(),
        });
        e.last_reopen = ev.ts;
        e.closings += 1;
        e.closed = e.closed + closed;
        e.probes += self.probe_count;
        e.reopened_to = reopened_to;
        if closed >= e.longest {
            e.longest = closed;
            e.longest_probes = spacing;
        }
        None
    }

    /// A segment of this data direction's sender: while the window is closed, a probe.
    pub fn on_send(&mut self, ev: &SegmentEvent) {
        if self.open.is_some() && !ev.flags.rst() {
            self.probe_count += 1;
            if self.probes.len() <= MAX_INTERVALS {
                self.probes.push(ev.ts);
            }
        }
    }

    /// Every segment of the connection, first: times in sentences count from the
    /// connection's first packet, as every other stall's (the SYN, which advertises no
    /// window this tracker reads, included).
    pub fn on_any(&mut self, ts: Timestamp) {
        self.origin.get_or_insert(ts);
    }

    fn rel(&self, t: Timestamp) -> String {
        secs((t - self.origin.unwrap_or(t)).secs_f64())
    }

    fn probes_text(data: Dir, count: u32, spacing: &[f64]) -> String {
        if count == 0 {
            return String::new();
        }
        let spacing = if spacing.len() > 1 {
            format!(
                " after {}{}",
                list_secs(spacing),
                if super::backs_off(spacing) {
                    " (persist back-off)"
                } else {
                    ""
                }
            )
        } else {
            String::new()
        };
        format!(
            "; the {} probed it {count} time(s){spacing}, each answered with a zero window",
            sender_name(data)
        )
    }

    /// A finished episode (every closing in it reopened).
    fn sentence(&self, data: Dir, e: Episode, _recovered: bool) -> Stall {
        let mut s = stall(StallKind::ZeroWindow, Some(data), e.first, e.last_reopen);
        s.recovered = true;
        s.events = e.probes;
        s.intervals_s = e.longest_probes.clone();
        s.resumed_by = Some(Resumed::WindowUpdate);
        let (rcv, at) = (receiver_name(data), self.rel(e.first));
        s.sentence = if e.closings == 1 {
            format!(
                "the {rcv}'s receive window was zero for {} from +{at}{}, then reopened ({}): the {rcv}'s application fell behind and caught up",
                secs(e.closed.secs_f64()),
                Self::probes_text(data, e.probes, &e.longest_probes),
                e.reopened_to
            )
        } else {
            format!(
                "the {rcv}'s receive window closed {} times from +{at} to +{} (zero for {} in all, the longest {}), reopening each time: the {rcv}'s application kept falling behind its data",
                e.closings,
                self.rel(e.last_reopen),
                secs(e.closed.secs_f64()),
                secs(e.longest.secs_f64())
            )
        };
        s
    }

    /// At the end of the connection: the last episode, and a window still closed.
    pub fn finish(&self, data: Dir, end: Timestamp) -> Vec<Stall> {
        let mut out: Vec<Stall> = self
            .episode
            .clone()
            .map(|e| self.sentence(data, e, true))
            .into_iter()
            .collect();
        if let Some(start) = self.open {
            let mut s = stall(StallKind::ZeroWindow, Some(data), start, end);
            s.events = self.probe_count;
            s.intervals_s = intervals(&self.probes);
            let rcv = receiver_name(data);
            s.sentence = format!(
                "the {rcv}'s receive window went to zero at +{} and never reopened in the {} the capture still shows{}: the {rcv}'s application stopped reading",
                self.rel(start),
                secs(s.duration_s),
                Self::probes_text(data, self.probe_count, &s.intervals_s),
            );
            out.push(s);
        }
        out
    }
}
