//! A standing queue at the bottleneck, the way CoDel defines one (RFC 8289 §2-§4): the
//! *minimum* delay over an interval stays above a target. A queue that drains at least once
//! per interval is a burst absorbing; one that never does is standing. The RTT samples stand
//! in for the sojourn time: their minimum over an interval, less the base RTT, is the delay
//! the queue kept all interval long. Only samples no delayed-ACK timer can have held count
//! (see `Bin::rtt_prompt_min_ns`): a slow reader that holds its single-segment ACKs for
//! 40 ms inflates every sample by that much without any queue in the path.
//!
//! A standing queue means the link behind it never idled (a work-conserving queue that is
//! never empty transmits all the time): the bottleneck was saturated, whatever held the
//! flow's window — so delivery while it stood *is* the path's capacity (for this flow and
//! whatever shared it), and the excess window only waited in the queue.
//!
//! Interval: RFC 8289's 100 ms, or the base RTT if longer (the interval must cover a round
//! trip for the minimum to see the queue drain if it does). Target: 5% of the base RTT
//! (RFC 8289 §4.4: 5-10% of the interval), at least what the measurement can resolve — ten
//! timestamp quanta, and the serialization of one full segment at the bottleneck (data
//! samples carry it, the handshake's small segments do not).
//!
//! An interval in which the flow fell silent — sent nothing (no new data, no
//! retransmission) and had nothing acknowledged — for longer than the delay its samples
//! show cannot show its own standing queue: no packet of the flow passed through the queue
//! in that time to say it stood (RFC 8289 §3.2 and §5: the sojourn times of the packets that
//! leave a queue judge it; an interval with none through it says nothing of it). Such an
//! interval is not judged, like one without samples. Behind a policer, a burst sits in the
//! link's queue and yields every sample; the waits for the retransmission timer between
//! bursts yield none, and the interval's least sample is the burst's. A sender that waits
//! with its window full is not silent: each ACK of new data it receives marks one of its
//! segments leaving the queue (tcp-ethereal-trace-1: a Windows sender sends its 8 KiB send
//! buffer and waits ~260 ms while the ACKs come back every 45-95 ms, the queue draining at
//! the bottleneck's pace).

use super::timeline::{Bin, Timeline};
use crate::time::Span;

/// RFC 8289's interval.
const INTERVAL: Span = Span::from_millis(100);
/// RFC 8289 §4.4: target 5-10% of the interval; the lower end.
const TARGET_SHARE: f64 = 0.05;
/// A standing queue over at least this share of the steady transfer's sampled time is the
/// flow's situation ("most of the transfer").
pub const MOST: f64 = 0.5;

#[derive(Clone, Debug, PartialEq)]
pub struct StandingQueue {
    /// Share of the steady transfer's time in intervals whose minimum RTT stayed above
    /// base + target (an interval without RTT samples, or one the flow fell silent in —
    /// nothing sent, nothing acknowledged — for longer than the delay its samples show,
    /// cannot show a queue: it counts as none).
    pub share: f64,
    /// Share of the steady transfer's time in intervals with RTT samples.
    pub judged: f64,
    /// The queueing delay those intervals kept: median of (interval minimum - base), s.
    pub delay_s: f64,
    /// The target the minimum had to exceed, s.
    pub target_s: f64,
    /// The interval each minimum was taken over, s (see [`interval`]).
    pub interval_s: f64,
    /// Per bin of the timeline: whether it lies in a standing-queue interval.
    pub bins: Vec<bool>,
    /// Intervals judged (with RTT samples) and how many stood.
    pub intervals: usize,
    pub standing: usize,
}

impl StandingQueue {
    pub fn most_of_the_time(&self) -> bool {
        self.share >= MOST && self.standing >= 2
    }
}

/// The standing queue over bins [from, end) of `tl`. `floor` is the least target the
/// measurement allows (see the module).
pub fn find(tl: &Timeline, from: usize, base_rtt: Span, floor: Span) -> Option<StandingQueue> {
    let width = tl.width.nanos().max(1);
    let interval_span = interval(tl, from, base_rtt);
    let interval = interval_span.nanos();
    let per = ((interval + width - 1) / width).max(1) as usize;
    let target = Span(((TARGET_SHARE * base_rtt.nanos() as f64) as i64).max(floor.nanos()));
    let mut bins = vec![false; tl.bins.len()];
    let (mut judged_ns, mut standing_ns, mut total_ns) = (0u64, 0u64, 0u64);
    let (mut intervals, mut standing) = (0, 0);
    let mut delays = Vec::new();
    let mut i = from;
    while i < tl.bins.len() {
        let end = (i + per).min(tl.bins.len());
        let w = &tl.bins[i..end];
        // An interval shorter than the full one at the end of the transfer says too little.
        let full = end - i == per;
        // The interval is judged on its prompt samples (they alone can show a queue: a
        // sample that waited on an end is long without one); but any time the loop showed,
        // sample or not, bounds the queue from above (`Bin::rtt_bound_min_ns`), so one near
        // the base shows that the queue drained. Behind a sender whose send buffer releases
        // a burst per round, the first segment of each burst echoes the ACK that freed the
        // buffer after the path emptied (base RTT) yet is no sample at the receiver, where
        // the sender's pause before it shows; the burst's tail, queued behind its own
        // burst, is a prompt sample 15 ms up, and alone read as a standing queue.
        let prompt = w.iter().filter_map(|b| b.rtt_prompt_min_ns).min();
        let bound = w.iter().filter_map(|b| b.rtt_bound_min_ns).min();
        let min = prompt.map(|m| bound.map_or(m, |bound| bound.min(m)));
        let time: u64 = w.iter().map(|b| b.state_ns()).sum();
        if full {
            total_ns += time;
        }
        // The silence is at least the run of bins the flow sent nothing in.
        let silent_ns = longest_silence(w) as i64 * width as i64;
        let min = min.filter(|&m| silent_ns <= m - base_rtt.nanos());
        if let (Some(m), true, true) = (min, full, time > 0) {
            intervals += 1;
            judged_ns += time;
            let queue = m - base_rtt.nanos();
            if queue > target.nanos() {
                standing += 1;
                standing_ns += time;
                delays.push(queue);
                bins[i..end].iter_mut().for_each(|b| *b = true);
            }
        }
        i = end;
    }
    if judged_ns == 0 {
        return None;
    }
    delays.sort_unstable();
    Some(StandingQueue {
        share: standing_ns as f64 / total_ns.max(1) as f64,
        judged: judged_ns as f64 / total_ns.max(1) as f64,
        delay_s: delays.get(delays.len() / 2).map_or(0.0, |&d| d as f64 / 1e9),
        target_s: target.secs_f64(),
        interval_s: interval_span.secs_f64(),
        bins,
        intervals,
        standing,
    })
}

/// The interval the minimum is taken over: RFC 8289's 100 ms, or the base RTT if longer.
/// A steady transfer too short to hold two of them (a 100-ms download behind a 20-ms queue)
/// would not be judged at all; it is judged over intervals of its own round trip as its
/// samples show it (the median of the bins' least prompt samples, queue included): the
/// interval must cover a round trip for the minimum to see the queue drain if it does, and
/// a queue a flow builds itself drains at most once per round trip. Two such intervals are
/// still needed (`StandingQueue::most_of_the_time`).
fn interval(tl: &Timeline, from: usize, base_rtt: Span) -> Span {
    let long = INTERVAL.max(base_rtt);
    // The bins up to the last one with time accounted (a close retried seconds later adds
    // empty bins, not transfer).
    let last = tl.bins.iter().rposition(|b| b.state_ns() > 0).map_or(0, |i| i + 1);
    let steady_ns = last.saturating_sub(from) as i64 * tl.width.nanos();
    if steady_ns >= 2 * long.nanos() {
        return long;
    }
    let mut loops: Vec<i64> = tl
        .bins
        .get(from..last)
        .unwrap_or(&[])
        .iter()
        .filter_map(|b| b.rtt_prompt_min_ns)
        .collect();
    if loops.is_empty() {
        return long;
    }
    loops.sort_unstable();
    Span(loops[loops.len() / 2]).max(base_rtt).min(long)
}

/// The longest run of bins in `w` in which the flow sent no segment of data and had
/// nothing acknowledged.
fn longest_silence(w: &[Bin]) -> usize {
    let (mut run, mut longest) = (0, 0);
    for b in w {
        run = if b.sent == 0 && b.retransmissions == 0 && b.delivered == 0 {
            run + 1
        } else {
            0
        };
        longest = longest.max(run);
    }
    longest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Timestamp;

    fn timeline(rtt_ms: impl Fn(usize) -> Option<f64>) -> Timeline {
        timeline_sending(rtt_ms, |_| true)
    }

    /// 5 s in 1 ms steps, busy all the time, sending a segment in the steps `sends` says.
    fn timeline_sending(rtt_ms: impl Fn(usize) -> Option<f64>, sends: impl Fn(usize) -> bool) -> Timeline {
        let t0 = Timestamp(1_000_000_000);
        let mut tl = Timeline::new(t0);
        for i in 0..5000 {
            let b = tl.bin(t0 + Span::from_millis(i as i64));
            b.busy_ns += 1_000_000;
            if sends(i) {
                b.sent += 1448;
            }
            if let Some(r) = rtt_ms(i) {
                let ns = (r * 1e6) as i64;
                b.rtt_min_ns = Some(b.rtt_min_ns.map_or(ns, |m| m.min(ns)));
                b.rtt_prompt_min_ns = b.rtt_min_ns;
                b.rtt_count += 1;
            }
        }
        tl
    }

    #[test]
    fn a_queue_that_never_drains_stands() {
        // Base 14 ms; samples every 5 ms at 700-740 ms: a bloated uplink.
        let tl = timeline(|i| (i % 5 == 0).then_some(700.0 + (i % 40) as f64));
        let q = find(&tl, 0, Span::from_millis(14), Span::from_micros(10)).unwrap();
        assert!(q.most_of_the_time(), "{q:?}");
        assert!(q.share > 0.99);
        assert!((q.delay_s - 0.686).abs() < 0.01, "{}", q.delay_s);
    }

    /// `ms` milliseconds of transfer in 1 ms bins, a sample every 2 ms at `rtt_ms(i)`.
    fn short_timeline(ms: usize, rtt_ms: impl Fn(usize) -> f64) -> Timeline {
        let t0 = Timestamp(1_000_000_000);
        let mut tl = Timeline::new(t0);
        for i in 0..ms {
            let b = tl.bin(t0 + Span::from_millis(i as i64));
            b.busy_ns += 1_000_000;
            b.sent += 1448;
            if i % 2 == 0 {
                let ns = (rtt_ms(i) * 1e6) as i64;
                b.rtt_min_ns = Some(ns);
                b.rtt_prompt_min_ns = Some(ns);
                b.rtt_count += 1;
            }
        }
        tl
    }

    #[test]
    fn a_transfer_too_short_for_two_intervals_is_judged_over_its_own_round_trips() {
        // bug-4663's shape: base 0.5 ms, 120 ms of transfer behind a queue of 20-40 ms.
        let base = Span::from_micros(500);
        let tl = short_timeline(120, |i| 20.0 + (i % 20) as f64);
        let q = find(&tl, 0, base, Span::from_micros(10)).unwrap();
        assert!(q.most_of_the_time(), "{q:?}");
        assert!(q.interval_s < 0.1 && q.interval_s >= 0.02, "{}", q.interval_s);
        // The same transfer whose queue drains every 15 ms does not stand.
        let tl = short_timeline(120, |i| if i % 16 == 0 { 0.51 } else { 20.0 });
        let q = find(&tl, 0, base, Span::from_micros(10)).unwrap();
        assert!(!q.most_of_the_time(), "{q:?}");
        // A long transfer keeps RFC 8289's 100 ms.
        let tl = short_timeline(1000, |_| 20.0);
        assert_eq!(find(&tl, 0, base, Span::from_micros(10)).unwrap().interval_s, 0.1);
    }

    #[test]
    fn a_queue_that_drains_every_interval_does_not() {
        // Base 40 ms; bursts raise the RTT to 60 ms but every 50 ms a sample sees 40.5 ms.
        let tl = timeline(|i| match i % 50 {
            0 => Some(40.5),
            k if k % 5 == 0 => Some(60.0),
            _ => None,
        });
        let q = find(&tl, 0, Span::from_millis(40), Span::from_micros(10)).unwrap();
        assert_eq!(q.standing, 0, "{q:?}");
        assert!(!q.most_of_the_time());
    }

    #[test]
    fn silences_longer_than_the_delay_show_no_queue_of_the_flow() {
        // A policer's pattern: base 0.35 ms; every 100 ms a 10 ms burst whose samples sit
        // 4 ms above the base in the link's queue, then 90 ms of waiting for the
        // retransmission timer, sending nothing and sampling nothing.
        let tl = timeline_sending(|i| (i % 100 < 10).then_some(4.35), |i| i % 100 < 10);
        let q = find(&tl, 0, Span::from_micros(350), Span::from_micros(10));
        assert!(q.is_none(), "{q:?}");
        // The same samples from a flow that kept sending: the queue stood.
        let tl = timeline(|i| (i % 100 < 10).then_some(4.35));
        let q = find(&tl, 0, Span::from_micros(350), Span::from_micros(10)).unwrap();
        assert!(q.most_of_the_time(), "{q:?}");
        // A sender that waits with its window full is not silent: ACKs of new data every
        // 45 ms mark its segments leaving the queue, which stands 57 ms above the base
        // though the sender is quiet 265 ms of every 270 (tcp-ethereal-trace-1: 8 KiB sent
        // every 270 ms, ACKed at the bottleneck's pace). Without the ACKs the same samples
        // say nothing of a queue.
        let quiet = timeline_sending(|i| (i % 45 == 0).then_some(80.0), |i| i % 270 < 5);
        assert!(find(&quiet, 0, Span::from_millis(23), Span::from_millis(50)).is_none_or(|q| !q.most_of_the_time()));
        let mut tl = quiet;
        for i in (0..5000).filter(|i| i % 45 == 0) {
            tl.bin(Timestamp(1_000_000_000) + Span::from_millis(i as i64)).delivered += 1460;
        }
        let q = find(&tl, 0, Span::from_millis(23), Span::from_millis(50)).unwrap();
        assert!(q.most_of_the_time(), "{q:?}");
        // Silences shorter than the delay leave the interval judged: a 700 ms queue
        // behind a sender that pauses 5 ms now and then still stands.
        let tl = timeline_sending(|i| (i % 5 == 0).then_some(700.0), |i| i % 50 >= 5);
        let q = find(&tl, 0, Span::from_millis(14), Span::from_micros(10)).unwrap();
        assert!(q.most_of_the_time(), "{q:?}");
    }

    #[test]
    fn a_bound_near_the_base_shows_the_queue_drained() {
        // Base 28.6 ms; a send-buffer-limited sender's bursts every 45 ms: the burst's tail
        // a prompt sample 44 ms up, its head echoing the ACK that freed the buffer once the
        // path emptied — no sample at the receiver (the sender paused before it), but a
        // bound of 29 ms on the loop.
        let mut tl = timeline(|i| (i % 45 == 30).then_some(44.0));
        let q = find(&tl, 0, Span::from_micros(28_600), Span::from_micros(10)).unwrap();
        assert!(q.most_of_the_time(), "{q:?}");
        for i in (0..5000).filter(|i| i % 45 == 0) {
            let b = tl.bin(Timestamp(1_000_000_000) + Span::from_millis(i as i64));
            b.rtt_bound_min_ns = Some(29_000_000);
        }
        let q = find(&tl, 0, Span::from_micros(28_600), Span::from_micros(10)).unwrap();
        assert_eq!(q.standing, 0, "{q:?}");
        // Bounds alone judge nothing: the interval needs prompt samples to show a queue.
        let mut tl = timeline(|_| None);
        tl.bin(Timestamp(1_000_000_000)).rtt_bound_min_ns = Some(90_000_000);
        assert!(find(&tl, 0, Span::from_micros(28_600), Span::from_micros(10)).is_none());
    }

    #[test]
    fn below_the_target_is_no_queue() {
        // 3% above a 100 ms base: under the 5% target.
        let tl = timeline(|i| (i % 10 == 0).then_some(103.0));
        let q = find(&tl, 0, Span::from_millis(100), Span::from_micros(10)).unwrap();
        assert_eq!(q.standing, 0);
    }
}
