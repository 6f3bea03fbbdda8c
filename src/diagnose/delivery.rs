//! Delivery rate: bytes newly acknowledged per interval, at its high end over the transfer
//! (BBR's BtlBw estimate, draft-cardwell-iccrg-bbr-congestion-control §4.5.2). When the
//! pipe is full this is the bottleneck rate; when it is not, it is a lower bound on it.
//!
//! Receivers and the ACK path aggregate ACKs (one ACK for 20 segments after a burst, a
//! SACK block reporting 30 kB at once), which pushes the delivery seen in a window above
//! what the path carried. BBR guards against it with the send rate; here the windows are
//! several RTTs long and the figure is a high percentile of them, not the maximum, so
//! one aggregated burst at a window's edge does not make the estimate.
//!
//! A window's rate is its bytes over the longer of the window and its ACK interval: from
//! the last ACK before it (the delivery its first ACK's bytes followed) to its own last ACK.
//! This is the rule of Linux's tcp_rate.c (`tcp_rate_gen`: `interval_us = max(snd_us,
//! ack_us)`) and draft-cheng-iccrg-delivery-rate-estimation §3.3: a sample is never faster
//! than its data was acknowledged. Without it a window of a few base RTTs on a short path
//! holds only a few ACKs, half the windows hold one ACK more than their length's worth,
//! and the high percentile picks those: 11.6 Mbit/s on a 10 Mbit/s link (RTT 2 ms, an ACK
//! every 2.3 ms). (The send-interval half of the rule needs each ACKed byte's send time,
//! which the bins do not keep.)
//!
//! The ACK interval is the delivery's only while the ACKs arrive as the data were
//! delivered. With data flowing the other way between the same hosts, the ACKs queue
//! behind it and arrive in bunches (ACK compression: Zhang, Shenker & Clark, SIGCOMM 1991;
//! Mogul, "Observing TCP dynamics in real networks", SIGCOMM 1992): each ACK instant
//! carries the reverse queue's wait, which has nothing to do with the forward delivery,
//! and the interval between two of them measures that queue's release, not the path: as
//! the ACK spacing is set aside there (capacity.rs), so is the ACK interval, and a window
//! is measured over its length alone ([`Interval::Length`]). (Neither clock is the
//! delivery's then: over its length a window can also hold one bunch too many; the
//! estimate is a lower bound there, P2's bidir_bulk upload reads 25.0 Mbit/s on a
//! 30 Mbit/s link.)

use super::timeline::Timeline;
use crate::time::Span;

/// Share of windows whose rate the estimate may exceed: the 90th percentile.
const HIGH_END: f64 = 0.9;

/// What a window's delivery is divided by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Interval {
    /// The window's length, or its ACK interval when that is longer (tcp_rate.c's rule,
    /// [`ack_intervals`]).
    AckClocked,
    /// The window's length alone: the ACKs' arrival times are not the delivery's (they
    /// queued behind data going the other way).
    Length,
}

/// The high end (90th percentile) of the delivery rate (bytes/s) over windows of at least
/// `min_window` in the timeline, sliding by one bin. Only windows where the sender was
/// mostly busy count: while the receiver's window or the application held it back, what
/// it delivered says nothing about the path (and an idle or finished transfer nothing at
/// all).
pub fn max_rate(tl: &Timeline, min_window: Span, interval: Interval) -> Option<f64> {
    rate_over(tl, min_window, interval, true)
}

/// The same over every window, whatever the sender was doing: the app-limited samples of
/// tcp_rate.c (`is_app_limited`). Such a sample says nothing when it is low (the sender,
/// not the path, held it down) but is still delivery the path carried: BBR takes one into
/// its bandwidth estimate whenever it is above the estimate
/// (draft-cardwell-iccrg-bbr-congestion-control §4.5.2.2, `BBRUpdateMaxBw`: "if
/// rs.delivery_rate >= BBR.max_bw || !rs.is_app_limited"). A sender that idles between
/// bursts has few busy windows, and the busy windows' figure alone can fall far below what
/// its bursts went through at.
pub fn app_limited_rate(tl: &Timeline, min_window: Span, interval: Interval) -> Option<f64> {
    rate_over(tl, min_window, interval, false)
}

fn rate_over(tl: &Timeline, min_window: Span, interval: Interval, busy_only: bool) -> Option<f64> {
    let w = tl.width.nanos().max(1);
    let k = ((min_window.nanos() + w - 1) / w).max(1) as usize;
    let busy: Vec<f64> = tl.bins.iter().map(|b| b.busy_ns as f64).collect();
    let state: Vec<f64> = tl.bins.iter().map(|b| b.state_ns() as f64).collect();
    let delivered: Vec<f64> = tl.bins.iter().map(|b| b.delivered as f64).collect();
    let counts = mostly_busy(&busy, &state, k).map(|ok| !busy_only || ok);
    let rates: Vec<f64> = window_sums(&delivered, k)
        .zip(ack_intervals(tl, k, interval))
        .zip(counts)
        .filter_map(|((d, secs), ok)| Some(d / secs?).filter(|_| ok))
        .collect();
    percentile(rates)
}

/// The high end of the delivery rate over windows of at least `min_window` that lie wholly
/// in the bins marked `inside` — whatever the sender's state: where a standing queue shows
/// the link was full, every state delivered at the link's rate.
pub fn rate_where(tl: &Timeline, inside: &[bool], min_window: Span, interval: Interval) -> Option<f64> {
    let w = tl.width.nanos().max(1);
    let k = ((min_window.nanos() + w - 1) / w).max(1) as usize;
    let delivered: Vec<f64> = tl.bins.iter().map(|b| b.delivered as f64).collect();
    let marked: Vec<f64> = inside.iter().map(|&m| m as u8 as f64).collect();
    let rates: Vec<f64> = window_sums(&delivered, k)
        .zip(ack_intervals(tl, k, interval))
        .zip(window_sums(&marked, k))
        .filter_map(|((d, secs), m)| Some(d / secs?).filter(|_| m >= k as f64))
        .collect();
    percentile(rates)
}

/// The interval (s) each window of `k` bins is measured over: its length, or its ACK
/// interval when that is longer (tcp_rate.c's `max(snd_us, ack_us)`, the ACK half). The ACK
/// interval runs from the last ACK before the window to the window's last ACK. When the
/// sender idled in between, the delivery clock restarted when data was sent again
/// (tcp_rate.c sets `delivered_mstamp` on a send with nothing in flight), and that send is
/// not an instant the timeline holds, nor one every capture point sees: the interval from
/// the ACK before the pause would count the pause, and a window of the length alone
/// counts the restart's first ACK as if its data took no time (at 1 Mbit/s a 1460-byte
/// segment takes 12 ms; a window of four 2 ms base RTTs holding its ACK reads 1.46
/// Mbit/s). Such a window has no measured interval (`None`) and is not counted. Nor is a
/// window holding the flow's first ACKs, with no ACK before it: tcp_rate.c starts that
/// delivery's clock at the first transmission (`tcp_rate_skb_sent` sets `first_tx_mstamp`
/// and `delivered_mstamp` with nothing in flight), which no capture point sees for what it
/// is — beside the receiver the first data arrives only after its own serialisation (a
/// 1400-byte segment on a 1 Mbit/s link takes 11.2 ms; its ACK in a window of 8 ms read 1.4
/// Mbit/s), and over the window's length a first ACK that came long after its data counts
/// as if delivered in the window (16 MiB acknowledged at once 2.6 s after it was sent read
/// 8.4 Gbit/s).
fn ack_intervals(tl: &Timeline, k: usize, interval: Interval) -> impl Iterator<Item = Option<f64>> + '_ {
    let acks: Vec<Option<i64>> = tl.bins.iter().map(|b| b.last_ack_ns).collect();
    let idle: Vec<u64> = tl.bins.iter().map(|b| b.idle_ns).collect();
    intervals(&acks, &idle, tl.width.nanos().max(1), k, interval, tl.clock)
}

/// [`ack_intervals`] over bins of `width` ns given by their last ACK instants (ns from any
/// fixed origin, growing with the bins) and the sender's idle time in each.
fn intervals(
    acks: &[Option<i64>],
    idle_ns: &[u64],
    w: i64,
    k: usize,
    interval: Interval,
    clock: Span,
) -> impl Iterator<Item = Option<f64>> {
    let len = k as i64 * w;
    // The ACKs a window holds by their stamps may have come up to one clock quantum after
    // them: over the span plus a quantum the rate is a floor (on a 1 ms clock, windows of
    // four 1 ms round trips each holding four 1460-byte ACKs read 11.7 Mbit/s on a 10
    // Mbit/s link, whose segments take 1.21 ms each).
    let q = clock.nanos().max(0);
    let clocked = interval == Interval::AckClocked;
    // The last ACK in bins [0, j] and its bin: ACK instants grow with the bins.
    let mut latest: Vec<Option<(i64, usize)>> = Vec::with_capacity(acks.len());
    let mut idle = vec![0u64; acks.len() + 1];
    for (j, a) in acks.iter().enumerate() {
        let prev = latest.last().copied().flatten();
        latest.push(match (prev, *a) {
            (Some(p), Some(a)) if p.0 >= a => Some(p),
            (_, Some(a)) => Some((a, j)),
            (p, None) => p,
        });
        idle[j + 1] = idle[j] + idle_ns[j];
    }
    let n = if acks.len() >= k { acks.len() - k + 1 } else { 0 };
    (0..n).map(move |i| {
        if !clocked {
            return Some((len + q) as f64 / 1e9);
        }
        let before = if i == 0 { None } else { latest[i - 1] };
        let ack = match (before, latest[i + k - 1]) {
            // The sender idled after the ACK before the window: the delivery clock
            // restarted with a send the interval cannot place (see above).
            (Some((_, at)), Some(_)) if idle[i] > idle[at] => return None,
            (Some((from, _)), Some((to, _))) => to - from,
            (None, Some(_)) => return None,
            _ => 0,
        };
        Some((len.max(ack) + q) as f64 / 1e9)
    })
}

/// Share of a window the sender must have been busy for its delivery to count.
const MOSTLY_BUSY: f64 = 0.5;

/// Per window of `k` bins, whether the sender was busy for most of its accounted time
/// (`busy` and `state`: nanoseconds per bin).
fn mostly_busy<'a>(busy: &'a [f64], state: &'a [f64], k: usize) -> impl Iterator<Item = bool> + 'a {
    window_sums(busy, k)
        .zip(window_sums(state, k))
        .map(|(b, s)| s > 0.0 && b >= MOSTLY_BUSY * s)
}

/// Sums of every run of `k` consecutive values.
fn window_sums(v: &[f64], k: usize) -> impl Iterator<Item = f64> + '_ {
    let first: f64 = v.iter().take(k).sum();
    let n = if v.len() >= k { v.len() - k + 1 } else { 0 };
    (0..n).scan(first, move |sum, i| {
        let out = *sum;
        if i + k < v.len() {
            *sum += v[i + k] - v[i];
        }
        Some(out)
    })
}

fn percentile(mut rates: Vec<f64>) -> Option<f64> {
    rates.retain(|&r| r > 0.0);
    if rates.is_empty() {
        return None;
    }
    rates.sort_by(f64::total_cmp);
    let at = ((rates.len() - 1) as f64 * HIGH_END).round() as usize;
    Some(rates[at])
}

/// The summed delivery of flows sharing a path on a common grid of cells of `width`: the
/// bytes each cell's ACKs acknowledged, the last ACK instant in each (ns from the grid's
/// start), the members' busy and accounted time in each, and the time no member had data
/// (ns).
pub struct Grid<'a> {
    /// The coarsest clock among the members' captures (see [`intervals`]).
    pub clock: Span,
    pub delivered: &'a [f64],
    pub last_ack_ns: &'a [Option<i64>],
    pub busy: &'a [f64],
    pub state: &'a [f64],
    pub group_idle: &'a [u64],
    pub width: Span,
}

impl Grid<'_> {
    /// The cells per window of at least `min_window`, and each window's interval: its
    /// length, or the group's ACK interval when that is longer — tcp_rate.c's rule as for
    /// one flow ([`ack_intervals`]), over the members' ACKs together. Over its length alone,
    /// on a 1 Mbit/s path where a segment takes 12 ms to cross the link and the window is
    /// four 1.4 ms round trips, a window holding one ACK read 1.39 Mbit/s. A window after
    /// the whole group idled is not counted (its delivery clock restarted with a send, as
    /// for one flow); one member idling is not the group's pause.
    fn windows(&self, min_window: Span) -> (usize, Vec<Option<f64>>) {
        let w = self.width.nanos().max(1);
        let k = ((min_window.nanos() + w - 1) / w).max(1) as usize;
        (
            k,
            intervals(
                self.last_ack_ns,
                self.group_idle,
                w,
                k,
                Interval::AckClocked,
                self.clock,
            )
            .collect(),
        )
    }

    /// The high end of the group's delivery rate over every window.
    pub fn rate_percentile(&self, min_window: Span) -> Option<f64> {
        let (k, secs) = self.windows(min_window);
        percentile(
            window_sums(self.delivered, k)
                .zip(secs)
                .filter_map(|(d, secs)| Some(d / secs?))
                .collect(),
        )
    }

    /// The same over the windows whose accounted time was mostly busy, as [`max_rate`] for
    /// one flow.
    pub fn busy_rate_percentile(&self, min_window: Span) -> Option<f64> {
        let (k, secs) = self.windows(min_window);
        percentile(
            window_sums(self.delivered, k)
                .zip(secs)
                .zip(mostly_busy(self.busy, self.state, k))
                .filter_map(|((d, secs), ok)| Some(d / secs?).filter(|_| ok))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::timeline::SenderState;
    use crate::time::Timestamp;

    #[test]
    fn a_sustained_rate_is_found() {
        let mut tl = Timeline::new(Timestamp(0));
        for i in 0..100 {
            let bytes = if (20..80).contains(&i) { 10_000 } else { 1_000 };
            let b = tl.bin(Timestamp(0) + Span::from_millis(i));
            b.delivered += bytes;
            b.busy_ns += 1_000_000;
        }
        let r = max_rate(&tl, Span::from_millis(10), Interval::AckClocked).unwrap();
        assert!((r - 10_000_000.0).abs() < 1.0, "{r}");
        assert!(max_rate(&tl, Span::from_millis(1000), Interval::AckClocked).is_none());
    }

    #[test]
    fn a_coarse_clock_widens_each_window_by_one_quantum() {
        // 1460 B stamped in each millisecond: 1.46 MB/s by the stamps; on a 1 ms clock
        // the four-millisecond windows' ACKs may have spanned five.
        let mut tl = Timeline::new(Timestamp(0));
        for i in 0..100 {
            let b = tl.bin(Timestamp(0) + Span::from_millis(i));
            b.delivered += 1460;
            b.busy_ns += 1_000_000;
        }
        let r = max_rate(&tl, Span::from_millis(4), Interval::AckClocked).unwrap();
        assert!((r - 1_460_000.0).abs() < 1.0, "{r}");
        tl.clock = Span::from_millis(1);
        let r = max_rate(&tl, Span::from_millis(4), Interval::Length).unwrap();
        assert!((r - 4.0 * 1460.0 / 0.005).abs() < 1.0, "{r}");
    }

    #[test]
    fn delivery_while_the_window_held_the_sender_does_not_count() {
        let mut tl = Timeline::new(Timestamp(0));
        for i in 0..100 {
            let b = tl.bin(Timestamp(0) + Span::from_millis(i));
            b.delivered += 1_000;
            b.rwnd_ns += 1_000_000;
        }
        assert_eq!(max_rate(&tl, Span::from_millis(10), Interval::AckClocked), None);
    }

    #[test]
    fn one_aggregated_ack_does_not_make_the_estimate() {
        let mut tl = Timeline::new(Timestamp(0));
        for i in 0..1000 {
            let b = tl.bin(Timestamp(0) + Span::from_millis(i));
            b.delivered += 1_000;
            b.busy_ns += 1_000_000;
        }
        tl.bin(Timestamp(0) + Span::from_millis(500)).delivered += 30_000; // a stretch ACK
        let r = max_rate(&tl, Span::from_millis(40), Interval::AckClocked).unwrap();
        assert!((r - 1_000_000.0).abs() < 1.0, "{r}");
    }

    /// A 10 Mbit/s path with a 2 ms RTT: a delayed ACK of two segments every 2.3 ms. A
    /// window of 4 RTTs (8 ms) holds three ACKs or four; counted over its length, the four
    /// make 1.45 MB/s, 15% above the link. Over its ACK interval it is the link's rate.
    #[test]
    fn a_window_is_never_faster_than_its_acks() {
        let mut tl = Timeline::new(Timestamp(0));
        for i in 0..400 {
            let b = tl.bin(Timestamp(0) + Span::from_millis(i));
            b.busy_ns += 1_000_000;
        }
        let gap = 2_300_000;
        for j in 1..170 {
            tl.ack(Timestamp(j * gap), 2_896);
        }
        let link = 2_896.0 / (gap as f64 / 1e9);
        let r = max_rate(&tl, Span::from_millis(8), Interval::AckClocked).unwrap();
        assert!(r <= link * 1.001 && r >= link * 0.99, "{r} against {link}");
    }

    /// After an idle spell the window holding the restart's first ACK is not measured:
    /// neither the ACK before the pause (500 ms earlier: 40 kB/s) nor the window's length
    /// alone starts its interval. The windows after it show the rate.
    #[test]
    fn an_idle_spell_does_not_stretch_the_next_window() {
        let mut tl = Timeline::new(Timestamp(0));
        tl.ack(Timestamp(0), 1_000);
        tl.account(Timestamp(0), Timestamp(0) + Span::from_millis(500), SenderState::Idle);
        for i in 500..600 {
            let at = Timestamp(0) + Span::from_millis(i);
            tl.bin(at).busy_ns += 1_000_000;
            tl.ack(at + Span::from_micros(500), 1_000);
        }
        let r = max_rate(&tl, Span::from_millis(20), Interval::AckClocked).unwrap();
        assert!(r > 990_000.0 && r <= 1_000_000.0, "{r}");
        // A burst no longer than a window leaves nothing measured.
        let mut tl = Timeline::new(Timestamp(0));
        tl.ack(Timestamp(0), 1_000);
        tl.account(Timestamp(0), Timestamp(0) + Span::from_millis(500), SenderState::Idle);
        for i in 500..520 {
            let at = Timestamp(0) + Span::from_millis(i);
            tl.bin(at).busy_ns += 1_000_000;
            tl.ack(at + Span::from_micros(500), 1_000);
        }
        assert_eq!(max_rate(&tl, Span::from_millis(20), Interval::AckClocked), None);
    }

    /// A sender that bursts 20 kB every 100 ms (over 8 ms) and idles between: no window is
    /// mostly busy, yet each burst went through at 2.5 MB/s. The app-limited windows keep
    /// that delivery.
    #[test]
    fn app_limited_windows_keep_what_idle_senders_delivered() {
        let mut tl = Timeline::new(Timestamp(0));
        for burst in 0..20i64 {
            let t0 = Timestamp(0) + Span::from_millis(100 * burst);
            tl.account(t0, t0 + Span::from_millis(8), SenderState::Busy);
            tl.account(
                t0 + Span::from_millis(8),
                t0 + Span::from_millis(100),
                SenderState::Idle,
            );
            for i in 1..=8 {
                tl.ack(t0 + Span::from_millis(i), 2_500);
            }
        }
        let window = Span::from_millis(20);
        assert_eq!(max_rate(&tl, window, Interval::Length), None);
        let r = app_limited_rate(&tl, window, Interval::Length).unwrap();
        // A 20 ms window holds at most one 20 kB burst: 1 MB/s, half the burst's own pace.
        assert!((r - 1_000_000.0).abs() < 1.0, "{r}");
        // The group's busy windows, on a grid of 10 ms cells: the busy cells' neighbours
        // are idle, so no two-cell window is mostly busy. Each burst's last ACK ends its
        // cell, and the group idled in between.
        let grid = |delivered: &'static [f64], acks: &'static [Option<i64>], idle: &'static [u64]| Grid {
            clock: Span::ZERO,
            delivered,
            last_ack_ns: acks,
            busy: &[8e6, 0.0, 0.0, 8e6, 0.0],
            state: &[10e6; 5],
            group_idle: idle,
            width: Span::from_millis(10),
        };
        let g = grid(
            &[20_000.0, 0.0, 0.0, 20_000.0, 0.0],
            &[Some(8_000_000), None, None, Some(38_000_000), None],
            &[2_000_000, 10_000_000, 10_000_000, 2_000_000, 10_000_000],
        );
        assert_eq!(g.busy_rate_percentile(Span::from_millis(20)), None);
        // The first burst has no ACK before it, the second follows the group's pause:
        // neither window of one cell is measured.
        assert_eq!(g.busy_rate_percentile(Span::from_millis(10)), None);
        // Without the pause, the second burst's interval runs from the first's last ACK.
        let g = grid(
            &[20_000.0, 0.0, 0.0, 20_000.0, 0.0],
            &[Some(8_000_000), None, None, Some(38_000_000), None],
            &[0; 5],
        );
        let r = g.rate_percentile(Span::from_millis(10)).unwrap();
        assert!((r - 20_000.0 / 0.030).abs() < 1.0, "{r}");
    }

    /// Summed over a group whose ACKs come every 12 ms (a 1 Mbit/s link, 1460-byte
    /// segments), windows of 6 ms hold one ACK or none: over their length those holding
    /// one read twice the link; over the ACK interval, the link.
    #[test]
    fn a_groups_window_is_never_faster_than_its_acks() {
        let n = 200;
        let width = Span::from_millis(1);
        let gap = 11_680_000i64; // 1460 B at 1 Mbit/s
        let mut delivered = vec![0.0; n * 12];
        let mut acks = vec![None; n * 12];
        for j in 0..n as i64 {
            let at = j * gap + 500_000;
            let cell = (at / 1_000_000) as usize;
            delivered[cell] += 1460.0;
            acks[cell] = Some(at);
        }
        let busy = vec![1e6; n * 12];
        let state = busy.clone();
        let idle = vec![0; n * 12];
        let g = Grid {
            clock: Span::ZERO,
            delivered: &delivered,
            last_ack_ns: &acks,
            busy: &busy,
            state: &state,
            group_idle: &idle,
            width,
        };
        let link = 1460.0 / (gap as f64 / 1e9);
        for r in [
            g.rate_percentile(Span::from_millis(6)),
            g.busy_rate_percentile(Span::from_millis(6)),
        ] {
            let r = r.unwrap();
            assert!(r <= link * 1.001 && r >= link * 0.99, "{r} against {link}");
        }
    }

    /// With the ACKs queued behind data going the other way, a window is its length.
    #[test]
    fn by_length_a_window_counts_what_its_acks_carried() {
        let mut tl = Timeline::new(Timestamp(0));
        for i in 0..100 {
            let b = tl.bin(Timestamp(0) + Span::from_millis(i));
            b.busy_ns += 1_000_000;
        }
        // Bunches of 10 kB every 10 ms.
        for j in 1..10 {
            tl.ack(Timestamp(0) + Span::from_millis(10 * j), 10_000);
        }
        let r = max_rate(&tl, Span::from_millis(20), Interval::Length).unwrap();
        assert!((r - 1_000_000.0).abs() < 1.0, "{r}");
    }
}
