//! A token-bucket policer on the path: a rate enforced by dropping, not queueing.
//!
//! A policer passes a packet when its bucket holds the tokens for it and drops it
//! otherwise; tokens arrive at the policed rate. So (Flach et al., "An Internet-Wide
//! Analysis of Traffic Policing", SIGCOMM 2016, §3.1 and their detector, USC-NSL
//! policing-detection) a policed flow loses packets exactly when what it delivered since
//! the first loss runs ahead of the rate times the time, its delivery between the first and
//! the last loss *is* the policed rate, and no queue builds before its losses (a policer
//! has no buffer to fill; a drop-tail queue inflates the RTT before it overflows). The
//! packet spacing such a flow shows is the line rate behind the bucket, which the policer
//! sustains only for a bucket's worth.
//!
//! The test runs on the timeline's bins (a bin must be shorter than a round trip, or a
//! bin mixes the drops and the refills it would tell apart): a bin with retransmissions
//! is a loss, one with delivery and none a pass. A policer starting from an empty bucket at
//! the first loss, filled at the delivery rate within the loss rounds up to the least depth
//! that passed everything, must hold about the same (empty) fill at every loss and not much
//! less at a pass; the losses must span several round trips and enough bins to judge; the
//! first must come early; and the RTT must not have risen before most of them. The
//! constants are the detector's; where the rate and the depth differ from it, `judge` says
//! why.

use super::timeline::Timeline;
use crate::time::Span;

/// Loss and pass samples each needed to judge (the detector's `MIN_NUM_SAMPLES`).
const MIN_SAMPLES: usize = 15;
/// Round trips with losses needed (`MIN_NUM_SLICES_WITH_LOSS`).
const MIN_LOSS_ROUNDS: usize = 3;
/// The first loss comes within this many bytes: a policer drops as soon as the flow
/// outruns its bucket (`LATE_LOSS_THRESHOLD`).
const LATE_LOSS_BYTES: u64 = 2_000_000;
/// How far (in round trips' worth of tokens at the policed rate) the fill at a loss may
/// stray from its median, and the fill at a pass fall below it
/// (`ZERO_THRESHOLD_LOSS/PASS_RTT_MULTIPLIER`).
const LOSS_FILL_ROUNDS: f64 = 2.0;
const PASS_FILL_ROUNDS: f64 = 0.75;
/// Shares of losses and passes allowed outside those bands (`..._OUT_OF_RANGE`).
const LOSS_OUT_OF_RANGE: f64 = 0.10;
const PASS_OUT_OF_RANGE: f64 = 0.03;
/// An RTT before a loss is inflated when at least the median and this much above the 10th
/// percentile (`INFLATED_RTT_THRESHOLD`, `INFLATED_RTT_PERCENTILE`); at most this share
/// of losses may follow one (`INFLATED_RTT_TOLERANCE`).
const INFLATED: f64 = 1.3;
const INFLATED_TOLERANCE: f64 = 0.2;

/// A policer found: its rate (payload bytes per second) and the depth of the least bucket
/// that passed everything the flow delivered (bytes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Policer {
    pub rate: f64,
    pub depth: f64,
    /// What showed it.
    pub shown: Shown,
}

/// What showed a token bucket.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shown {
    /// The bucket's fill at the flow's losses ([`judge`]): the rate is the delivery while
    /// it lost.
    Fill,
    /// The survivors' pace: the median of this many gaps between drops ([`from_pace`]).
    DropGaps(usize),
    /// Rounds that came at the line and then at the rate: the median of this many rounds'
    /// tails (`super::bucket_rounds`), from the data past the bucket or, before it, from
    /// the ACKs that report the data as it arrived (`acks`).
    Rounds { rounds: usize, acks: bool },
}

/// What [`judge`]'s test said of a flow's losses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Judgement {
    Found(Policer),
    /// Enough losses and passes to judge, and the bucket's fill at them is not a
    /// policer's: the losses came whatever the flow had sent (random loss, a queue's).
    NotOne,
    /// Too few losses or passes, or none early enough, to judge.
    CannotTell,
}

/// The policer on the path of the direction `tl` is the timeline of, if its losses show
/// one, or why none was found. `median_rtt` is a round trip as the flow lived it; `floor`
/// the least RTT difference the measurement resolves.
pub fn judge(tl: &Timeline, median_rtt: Span, floor: Span) -> Judgement {
    use Judgement::{CannotTell, Found, NotOne};
    let w = tl.width.secs_f64();
    let round = median_rtt.secs_f64();
    if round <= 0.0 || w > round {
        return CannotTell;
    }
    let bins = &tl.bins;
    let losses: Vec<usize> = (0..bins.len()).filter(|&i| bins[i].retransmissions > 0).collect();
    let (Some(&first), Some(&last)) = (losses.first(), losses.last()) else {
        return CannotTell;
    };
    if last <= first || bins[..first].iter().map(|b| b.sent).sum::<u64>() > LATE_LOSS_BYTES {
        return CannotTell;
    }
    // Losses spread over round trips: a loss round runs a round trip from a loss that
    // falls outside the one before. While the flow loses, its bucket is empty and what
    // passes, passes at the token rate: the delivery within the loss rounds is the policed
    // rate (the detector takes the goodput between the first and last loss; a flow that
    // recovers below the rate between its losses makes that a low figure).
    let per_round = ((round / w).ceil() as usize).max(1);
    let mut in_round = vec![false; bins.len()];
    let mut rounds = 0;
    let mut until = 0;
    for &i in &losses {
        if i >= until {
            rounds += 1;
            until = i + per_round;
        }
        in_round[i..until.min(bins.len())].iter_mut().for_each(|x| *x = true);
    }
    if rounds < MIN_LOSS_ROUNDS {
        return CannotTell;
    }
    // Only where the sender was free to send: a bin in which the receiver's window held
    // it delivered what the reader took (a reader that fell behind closes the window
    // while the losses go on: P7 bursty_reader read its 7 Mbit/s reader as an 8.7 Mbit/s
    // policer), and shows nothing of a bucket.
    let free: Vec<usize> = (0..bins.len())
        .filter(|&i| in_round[i] && bins[i].rwnd_ns == 0)
        .collect();
    let lossy = free.len();
    if lossy == 0 {
        return CannotTell;
    }
    let during: u64 = free.iter().map(|&i| bins[i].delivered).sum();
    let rate = during as f64 / (lossy as f64 * w);
    if rate <= 0.0 {
        return CannotTell;
    }
    // The bucket cannot have started below empty: what the flow sent before its first loss
    // is at least the rate times the time since its first data, less a pass's margin (the
    // detector's y-intercept).
    let Some(start) = bins.iter().position(|b| b.sent > 0) else {
        return CannotTell;
    };
    let before: u64 = bins[start..first].iter().map(|b| b.sent).sum();
    let pass_band = PASS_FILL_ROUNDS * round * rate;
    let loss_band = LOSS_FILL_ROUNDS * round * rate;
    if (before as f64) < rate * (first - start) as f64 * w - pass_band {
        return CannotTell;
    }
    // The bucket: the least depth under which every byte that passed could pass (a token
    // bucket passes at most depth + rate x T in any interval T: Cruz, "A calculus for
    // network delay", 1991), the largest rise of what passed above the rate.
    let depth = bucket_depth(&bins[start..], rate, w);
    // A bucket empty at the first loss, filled at the rate up to its depth, drained by what
    // passed: at each loss it must be (about) as empty again, and at a pass not far below.
    let (mut on_loss, mut on_pass) = (Vec::new(), Vec::new());
    let mut tokens = 0.0_f64;
    for b in &bins[first..] {
        if b.retransmissions > 0 {
            on_loss.push(tokens);
        } else if b.delivered > 0 {
            on_pass.push(tokens);
        }
        tokens = (tokens + rate * w).min(depth) - b.delivered as f64;
    }
    if on_loss.len() < MIN_SAMPLES || on_pass.len() < MIN_SAMPLES {
        return CannotTell;
    }
    let (loss_mid, pass_mid) = (median(&on_loss), median(&on_pass));
    if mean(&on_loss) >= mean(&on_pass) || loss_mid >= pass_mid {
        return NotOne;
    }
    let strays = on_loss.iter().filter(|&&t| (t - loss_mid).abs() > loss_band).count();
    let short = on_pass.iter().filter(|&&t| t - loss_mid < -pass_band).count();
    if strays as f64 > LOSS_OUT_OF_RANGE * on_loss.len() as f64
        || short as f64 > PASS_OUT_OF_RANGE * on_pass.len() as f64
    {
        return NotOne;
    }
    match inflated_before_losses(tl, &losses, floor) {
        None => return CannotTell,
        Some(true) => return NotOne,
        Some(false) => {}
    }
    Found(Policer {
        rate,
        depth,
        shown: Shown::Fill,
    })
}

/// Drop gaps needed: quartiles need four.
const MIN_GAPS: usize = 4;

/// The policer the pace between the flow's drops shows ([`super::drop_pace`]): taken before
/// [`judge`]'s reading wherever it shows (see `capacity::estimate`: the pace times the
/// bucket empty, the delivery between losses does not), and where the losses were too few
/// for [`judge`]'s test (a short flow that lost in two or three rounds). The survivors of an
/// element's drops pass at its rate, and an element that enforces a
/// rate passes them at that rate every time, to within the ACKs' timing error — the middle
/// half of the gaps' rates within `band` (the estimates' error, `capacity::AT_CAPACITY`) of one rate each way —
/// while random (not congestive) losses fall anywhere in the sender's bursts and their
/// gaps read whatever it sent. No queue may have built before the losses (a drop-tail
/// queue shared with other traffic drops this flow's packets between theirs). Whether the
/// rate is below the line the packet spacing shows, which makes the element a policer
/// rather than the link's own queue, is the estimate's to judge (`capacity::estimate`).
pub fn from_pace(tl: &Timeline, gaps: &[(u64, Span)], band: f64, floor: Span) -> Option<Policer> {
    if gaps.len() < MIN_GAPS {
        return None;
    }
    let mut rates: Vec<f64> = gaps.iter().map(|&(b, s)| b as f64 / s.secs_f64()).collect();
    rates.sort_by(f64::total_cmp);
    let at = |q: f64| rates[((rates.len() - 1) as f64 * q).round() as usize];
    let (q1, rate, q3) = (at(0.25), at(0.5), at(0.75));
    if q3 * band * band > q1 {
        return None;
    }
    let losses: Vec<usize> = (0..tl.bins.len()).filter(|&i| tl.bins[i].retransmissions > 0).collect();
    if losses.is_empty() || inflated_before_losses(tl, &losses, floor) != Some(false) {
        return None;
    }
    let start = tl.bins.iter().position(|b| b.sent > 0)?;
    let depth = bucket_depth(&tl.bins[start..], rate, tl.width.secs_f64());
    Some(Policer {
        rate,
        depth,
        shown: Shown::DropGaps(gaps.len()),
    })
}

/// Whether more than the tolerated share of losses followed an inflated RTT: the last
/// bin's mean RTT before the loss at least the median and [`INFLATED`] times the 10th
/// percentile of the bins without losses (and more above it than the measurement
/// resolves). A queue that filled before it dropped is not a policer. None where no bin
/// without losses timed a round trip: no RTT is no flat RTT, and nothing then shows that a
/// queue did not fill (census seed 8181: a receiver-side capture on a 10 ms clock of a
/// 300 µs path timed none, and a shaper's drop-tail queue read as a policer).
fn inflated_before_losses(tl: &Timeline, losses: &[usize], floor: Span) -> Option<bool> {
    let mean_rtt = |i: usize| {
        let b = &tl.bins[i];
        (b.rtt_count > 0).then(|| b.rtt_sum_ns as f64 / b.rtt_count as f64)
    };
    let mut clean: Vec<f64> = (0..tl.bins.len())
        .filter(|&i| tl.bins[i].retransmissions == 0)
        .filter_map(mean_rtt)
        .collect();
    if clean.is_empty() {
        return None;
    }
    clean.sort_by(f64::total_cmp);
    let at = |q: f64| clean[((clean.len() - 1) as f64 * q).round() as usize];
    let (p10, p50) = (at(0.1), at(0.5));
    let inflated = losses
        .iter()
        .filter(|&&i| {
            (0..i)
                .rev()
                .find_map(mean_rtt)
                .is_some_and(|r| r >= p50 && r > INFLATED * p10 && r - p10 > floor.nanos() as f64)
        })
        .count();
    Some(inflated as f64 > INFLATED_TOLERANCE * losses.len() as f64)
}

/// The largest rise of delivery above `rate` over any run of bins of width `w` s: the
/// depth of the least token bucket at `rate` that passes it all.
fn bucket_depth(bins: &[super::timeline::Bin], rate: f64, w: f64) -> f64 {
    let (mut lowest, mut depth, mut excess) = (0.0_f64, 0.0_f64, 0.0_f64);
    for b in bins {
        excess += b.delivered as f64 - rate * w;
        depth = depth.max(excess - lowest);
        lowest = lowest.min(excess);
    }
    depth
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Timestamp;

    /// A sender that offers 5 MB/s until it learns of a loss (a round trip after it, when
    /// it retransmits), then 2 MB/s for 200 ms (its recovery), for 4 s, through a bucket of
    /// `depth` bytes filled at 3 MB/s (with `depth` 0: an unbounded buffer instead, drained
    /// at 3 MB/s and dropping above `queue_limit`). RTT 30 ms plus whatever waits in the
    /// buffer. One bin per millisecond, as the sender sees it (ACKs a round trip after).
    fn run(depth: f64, queue_limit: f64) -> Timeline {
        let t0 = Timestamp(1_000_000_000);
        let mut tl = Timeline::new(t0);
        let (rate, ms, rtt) = (3.0e6, 1e-3, 30);
        let (mut tokens, mut queue, mut calm_until) = (depth, 0.0_f64, 0);
        let mut retransmit_at = vec![0u32; 4000 + rtt];
        // Seen at the sender: a segment's delivery a round trip after it passed.
        let mut delivered_at = vec![0.0; 4000 + rtt];
        for i in 0..4000 {
            let offered = if i < calm_until { 2.0e6 * ms } else { 5.0e6 * ms };
            let (passed, lost) = if depth > 0.0 {
                tokens = (tokens + rate * ms).min(depth);
                let p = offered.min(tokens);
                tokens -= p;
                (p, offered - p)
            } else {
                queue += offered;
                let over = (queue - queue_limit).max(0.0);
                queue -= over;
                let p = queue.min(rate * ms);
                queue -= p;
                (p, over)
            };
            if lost > 0.0 {
                retransmit_at[i + rtt] += 1;
            }
            delivered_at[i + rtt] += passed;
            let b = tl.bin(t0 + Span::from_millis(i as i64));
            b.sent += offered as u64;
            b.delivered += delivered_at[i] as u64;
            b.busy_ns += 1_000_000;
            b.retransmissions += retransmit_at[i];
            if retransmit_at[i] > 0 && i >= calm_until {
                calm_until = i + 200;
            }
            b.rtt_sum_ns += ((0.030 + queue / rate) * 1e9) as i64;
            b.rtt_count += 1;
        }
        tl
    }

    fn find(tl: &Timeline, median_rtt: Span, floor: Span) -> Option<Policer> {
        match judge(tl, median_rtt, floor) {
            Judgement::Found(p) => Some(p),
            _ => None,
        }
    }

    #[test]
    fn a_flow_that_loses_whenever_it_outruns_a_token_bucket_is_policed_at_its_rate() {
        let p = find(&run(100_000.0, 0.0), Span::from_millis(30), Span::from_micros(10)).expect("a policer");
        // 2.75 MB/s: the round after a loss ends, here, in bins the recovering sender sent
        // at its calmer rate (the lab's tbf policer, 28.7 Mbit/s of payload, reads 28.67).
        assert!((p.rate / 3.0e6 - 1.0).abs() < 0.1, "{p:?}");
        assert!((p.depth / 100_000.0 - 1.0).abs() < 0.3, "{p:?}");
    }

    /// The same losses with the receiver's window holding the sender in every bin (a
    /// reader that fell behind while the losses went on): the delivery is the reader's,
    /// and no bucket is told from it.
    #[test]
    fn losses_while_the_receivers_window_held_the_sender_show_no_bucket() {
        let mut tl = run(100_000.0, 0.0);
        for b in tl.bins.iter_mut() {
            b.rwnd_ns = b.busy_ns;
            b.busy_ns = 0;
        }
        assert_eq!(find(&tl, Span::from_millis(30), Span::from_micros(10)), None);
    }

    #[test]
    fn losses_after_the_rtt_rose_are_a_queue_overflowing_not_a_policer() {
        // The same rates through a 100 kB drop-tail buffer: the RTT climbs by 33 ms before
        // every loss.
        assert_eq!(
            find(&run(0.0, 100_000.0), Span::from_millis(45), Span::from_micros(10)),
            None
        );
    }

    #[test]
    fn random_losses_at_a_steady_rate_are_not_a_policer() {
        let t0 = Timestamp(1_000_000_000);
        let mut tl = Timeline::new(t0);
        let mut x: u64 = 7;
        for i in 0..4000 {
            let b = tl.bin(t0 + Span::from_millis(i));
            b.sent += 2000;
            b.delivered += 2000;
            b.busy_ns += 1_000_000;
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if (x >> 33) % 50 == 0 {
                b.retransmissions += 1;
            }
            b.rtt_sum_ns += 30_000_000;
            b.rtt_count += 1;
        }
        // Judged, not merely too few: the pace between a few drops may not overrule it.
        assert_eq!(
            judge(&tl, Span::from_millis(30), Span::from_micros(10)),
            Judgement::NotOne
        );
    }

    /// The estimates' error (`capacity::AT_CAPACITY`).
    const BAND: f64 = 0.85;

    /// Gaps between drops: `rates` in bytes/s, 1328 bytes each.
    fn gaps(rates: &[f64]) -> Vec<(u64, Span)> {
        rates.iter().map(|&r| (1328, Span::from_secs_f64(1328.0 / r))).collect()
    }

    #[test]
    fn drops_whose_survivors_pass_at_one_rate_with_no_queue_before_them_are_a_policer() {
        let tl = run(100_000.0, 0.0);
        let p = from_pace(
            &tl,
            &gaps(&[1.8e6, 1.75e6, 1.8e6, 1.85e6, 1.79e6]),
            BAND,
            Span::from_micros(10),
        )
        .expect("a policer");
        assert!(
            (p.rate / 1.8e6 - 1.0).abs() < 1e-3 && p.shown == Shown::DropGaps(5),
            "{p:?}"
        );
        assert!(p.depth > 0.0, "{p:?}");
        // Too few gaps to judge.
        assert_eq!(
            from_pace(&tl, &gaps(&[1.8e6, 1.8e6, 1.8e6]), BAND, Span::from_micros(10)),
            None
        );
    }

    #[test]
    fn drops_whose_survivors_pass_at_scattered_rates_are_random_losses() {
        // The lab's random loss on a 28.9 Mbit/s link: gaps from 6 to 26 Mbit/s.
        let rates: Vec<f64> = [6.1, 11.5, 14.4, 19.0, 26.2].iter().map(|m| m * 1e6 / 8.0).collect();
        assert_eq!(
            from_pace(&run(100_000.0, 0.0), &gaps(&rates), BAND, Span::from_micros(10)),
            None
        );
    }

    #[test]
    fn a_steady_pace_after_the_rtt_rose_is_a_queue_shared_with_other_traffic() {
        // The drop-tail buffer's timeline: the RTT climbs before every loss.
        let tl = run(0.0, 100_000.0);
        assert_eq!(from_pace(&tl, &gaps(&[1.8e6; 8]), BAND, Span::from_micros(10)), None);
    }

    /// The policer's timeline with no round trip timed in it (a receiver-side capture on a
    /// clock coarser than the path's RTT, without timestamps): nothing shows the RTT stayed
    /// flat before the losses, so no policer is told from them, by their fill or their pace.
    #[test]
    fn losses_with_no_round_trip_timed_cannot_tell() {
        let mut tl = run(100_000.0, 0.0);
        for b in tl.bins.iter_mut() {
            (b.rtt_sum_ns, b.rtt_count) = (0, 0);
        }
        let judged = judge(&tl, Span::from_millis(30), Span::from_micros(10));
        assert_eq!(judged, Judgement::CannotTell);
        let even = gaps(&[1.8e6; 8]);
        assert_eq!(from_pace(&tl, &even, BAND, Span::from_micros(10)), None);
        // With the RTTs, the same gaps are a policer's pace.
        assert!(from_pace(&run(100_000.0, 0.0), &even, BAND, Span::from_micros(10)).is_some());
    }

    #[test]
    fn bins_longer_than_a_round_trip_cannot_tell() {
        assert_eq!(
            find(&run(100_000.0, 0.0), Span::from_millis(2), Span::from_micros(10)),
            None
        );
    }
}
