//! A token bucket's rounds, from the data's arrivals past it.
//!
//! A token bucket (a policer or a shaper: RFC 2697 §1, RFC 2698 §3, Linux's `tbf`) lets a
//! burst through at the line rate while it holds tokens, then passes packets only as its
//! tokens come. A window-limited sender that waits each round for its ACKs lets the bucket
//! fill again in the wait, so past the bucket each round arrives in two regimes: a run of
//! about the bucket's depth at the line rate, then the rest at the token rate (Flach et
//! al., "An Internet-Wide Analysis of Traffic Policing", SIGCOMM 2016, §2). A FIFO link
//! spaces a round at one rate throughout, the rate of the narrowest link the data crossed:
//! no run passes it faster than its tail. Rounds whose head came at least twice as fast as
//! their tail, round after round, with heads of one size and tails at one rate, show an
//! element that enforces the tail's rate behind a faster line; the packet spacing (the
//! line's) is not what the path sustains, and the tails' rate is.
//!
//! A round is the data between two silences of a quarter of the least loop or more (the
//! sender waiting for its ACKs). Its head and tail are where its arrivals bend: the split
//! that leaves the cumulative bytes furthest above the chord from its first arrival to its
//! last (the knee of a concave curve), so that arrivals a link or a capture host jitters
//! (a delay line's 43, 65, 126 µs around a 95 µs line, pairs 9 µs apart among them: P18's
//! policer) are judged by the run's pace, not gap by gap. The head needs three gaps the
//! capture resolves as two arrivals (a pair or a triple is a sender's burst, which any link
//! passes at its rate; a host's batch is not a line rate: [`super::train::BATCH_GAP`]); the
//! tail at least three gaps over at least twice the head's time, at under half its rate: a
//! regime the bucket sustained, not a straggler. Memory: the open round's arrivals (at most
//! [`MAX_ARRIVALS`]) and at most [`MAX_ROUNDS`] rounds.

use crate::time::{Span, Timestamp};

use super::train::BATCH_GAP;

/// Two-regime rounds kept (the first this many tell the bucket).
pub const MAX_ROUNDS: usize = 256;

/// Gaps the head and the tail each need.
const MIN_GAPS: u32 = 3;

/// How much faster than its tail a round's head came, at least, to be two regimes: a FIFO
/// spaces a round at one rate, and the delivery a flow's ACK clock keeps is within the
/// estimates' margin of it.
const HEAD_OVER_TAIL: f64 = 2.0;

/// Rounds showing two regimes needed, and their least share of the rounds long enough to
/// show them.
const MIN_ROUNDS: usize = 4;

/// One round that showed two regimes: its head's bytes and its tail's rate (bytes/s).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Round {
    pub head_bytes: u64,
    pub tail_rate: f64,
}

#[derive(Clone, Debug, Default)]
pub struct BucketRounds {
    /// The open round: its first arrival and its last.
    open: Option<(Timestamp, Timestamp)>,
    /// The open round's arrivals after its first: each gap (ns) and the bytes that ended
    /// it, at most [`MAX_ARRIVALS`] (kept between rounds, cleared).
    arrivals: Vec<(u32, u16)>,
    /// The open round's first arrival's bytes.
    first_len: u64,
    /// Rounds long enough to show a head (three resolved gaps), two-regime or not.
    pub judged: u32,
    pub rounds: Vec<Round>,
}

/// Arrivals kept for a round (8 bytes each); a longer round is judged by its first this
/// many. The buffer is the state's one allocation: at most 2 KiB a direction, grown only
/// as long as the flow's longest round.
const MAX_ARRIVALS: usize = 256;

impl BucketRounds {
    /// New data of `len` bytes arrived at `ts`; `round`: the least loop through the sender.
    pub fn on_arrival(&mut self, ts: Timestamp, len: u64, round: Option<Span>) {
        let Some(round) = round.filter(|r| r.nanos() > 0) else {
            return;
        };
        if len == 0 {
            return;
        }
        match self.open.as_mut() {
            Some((_, last)) if ts - *last < Span(round.nanos() / 4) && ts >= *last => {
                let gap = ts - *last;
                *last = ts;
                if self.arrivals.len() < MAX_ARRIVALS {
                    self.arrivals.push((
                        gap.nanos().clamp(0, u32::MAX as i64) as u32,
                        len.min(u16::MAX as u64) as u16,
                    ));
                }
            }
            _ => {
                self.close();
                self.open = Some((ts, ts));
                self.first_len = len;
            }
        }
    }

    /// Ends the open round.
    pub fn close(&mut self) {
        if self.open.take().is_some() {
            let arrivals = std::mem::take(&mut self.arrivals);
            if let Some(round) = self.judge(&arrivals) {
                if self.rounds.len() < MAX_ROUNDS {
                    self.rounds.push(round);
                }
            }
            self.arrivals = arrivals;
            self.arrivals.clear();
        }
    }

    /// A closed round with three resolved gaps counts as judged (a round that came whole
    /// at one rate is one the bucket, if any, did not hold); it showed two regimes when,
    /// split at its knee, its head had three resolved gaps and its tail three gaps lasting
    /// at least twice the head at under half its rate.
    /// The tail's rate is its later half's (by time): what passes early in the tail can be
    /// what the bucket still held when a gap of the sender's ended the head, and its later
    /// half is the bucket empty, passing as the tokens come.
    fn judge(&mut self, arrivals: &[(u32, u16)]) -> Option<Round> {
        let resolved = |a: &[(u32, u16)]| a.iter().filter(|&&(g, _)| g as i64 >= BATCH_GAP.nanos()).count();
        if resolved(arrivals) < MIN_GAPS as usize {
            return None;
        }
        self.judged += 1;
        let n = arrivals.len();
        let total_ns: u64 = arrivals.iter().map(|&(g, _)| g as u64).sum();
        let total_bytes: u64 = arrivals.iter().map(|&(_, l)| l as u64).sum();
        if total_ns == 0 || n < 2 * MIN_GAPS as usize {
            return None;
        }
        // The knee: the split (after arrival k) furthest above the chord, with room for a
        // tail of three gaps.
        let (mut ns, mut bytes) = (0u64, 0u64);
        let mut knee: Option<(usize, f64)> = None;
        for (k, &(g, l)) in arrivals[..n - MIN_GAPS as usize].iter().enumerate() {
            ns += g as u64;
            bytes += l as u64;
            let above = bytes as f64 / total_bytes as f64 - ns as f64 / total_ns as f64;
            if knee.is_none_or(|(_, best)| above > best) {
                knee = Some((k + 1, above));
            }
        }
        let (k, _) = knee?;
        let (head, tail) = arrivals.split_at(k);
        if resolved(head) < MIN_GAPS as usize {
            return None;
        }
        let head_ns: u64 = head.iter().map(|&(g, _)| g as u64).sum();
        let head_bytes: u64 = head.iter().map(|&(_, l)| l as u64).sum();
        let tail_ns = total_ns - head_ns;
        if head_ns == 0 || tail_ns < 2 * head_ns {
            return None;
        }
        let head_rate = head_bytes as f64 / head_ns as f64;
        if head_rate < HEAD_OVER_TAIL * ((total_bytes - head_bytes) as f64 / tail_ns as f64) {
            return None;
        }
        let (mut at, mut later_bytes, mut later_ns) = (0u64, 0u64, 0u64);
        for &(g, l) in tail {
            at += g as u64;
            if 2 * at > tail_ns {
                later_bytes += l as u64;
                later_ns += g as u64;
            }
        }
        (later_ns > 0).then(|| Round {
            head_bytes: self.first_len + head_bytes,
            tail_rate: later_bytes as f64 * 1e9 / later_ns as f64,
        })
    }

    /// The bucket the rounds show, where most rounds long enough to show it did: its rate
    /// (bytes/s, the median of the tails'), its depth (the upper quartile of the heads: the
    /// bucket refills to it only when the sender waits long enough, so the full heads are
    /// the upper part; the largest is where a knee fell a packet or two into the tail: P36's
    /// 20 kB policer, heads mostly 21.2-22.6 kB with the tokens the run itself earned, the
    /// largest 29.2) and how many rounds showed it. A
    /// bucket has one rate: the middle half of the tails' rates lies within the factor
    /// that tells a head from its tail ([`HEAD_OVER_TAIL`]); tails further apart than that
    /// are no one regime (an application's writes: 0.2 to 13.3 Mbit/s).
    pub fn bucket(&self) -> Option<(f64, f64, usize)> {
        let n = self.rounds.len();
        if n < MIN_ROUNDS || 2 * n < self.judged as usize {
            return None;
        }
        let mut rates: Vec<f64> = self.rounds.iter().map(|r| r.tail_rate).collect();
        rates.sort_by(f64::total_cmp);
        let at = |q: f64| rates[((n - 1) as f64 * q).round() as usize];
        if at(0.75) > HEAD_OVER_TAIL * at(0.25) {
            return None;
        }
        let mut heads: Vec<u64> = self.rounds.iter().map(|r| r.head_bytes).collect();
        heads.sort_unstable();
        let depth = heads[((n - 1) as f64 * 0.75).round() as usize] as f64;
        Some((at(0.5), depth, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOP: Span = Span::from_millis(50);
    const SEG: u64 = 1340;

    fn at(us: f64) -> Timestamp {
        Timestamp(1_000_000_000) + Span::from_secs_f64(us / 1e6)
    }

    /// Feeds `rounds` rounds a loop apart, each `gaps_us` (the gaps after its first packet).
    fn feed(b: &mut BucketRounds, rounds: usize, gaps_us: &[f64]) {
        feed_from(b, 0, rounds, gaps_us)
    }

    fn feed_from(b: &mut BucketRounds, first: usize, rounds: usize, gaps_us: &[f64]) {
        for r in first..first + rounds {
            let mut t = r as f64 * 50_000.0;
            b.on_arrival(at(t), SEG, Some(LOOP));
            for &g in gaps_us {
                t += g;
                b.on_arrival(at(t), SEG, Some(LOOP));
            }
        }
        b.close();
    }

    #[test]
    fn a_buckets_rounds_come_at_the_line_and_then_at_its_rate() {
        // P36 tbf_policer at the client: 14 packets 93 µs apart (115 Mbit/s), then one per
        // ~930 µs (11.5 Mbit/s), some pairs that found tokens among them.
        let mut gaps = vec![93.0; 14];
        gaps.extend([930.0, 1046.0, 159.0, 1702.0, 151.0, 947.0, 920.0, 940.0, 1723.0, 119.0]);
        gaps.extend([930.0; 10]);
        let mut b = BucketRounds::default();
        feed(&mut b, 8, &gaps);
        let (rate, depth, n) = b.bucket().expect("a bucket");
        assert_eq!(n, 8);
        // The later half of each tail: ten gaps of 930 µs.
        assert!((rate / (SEG as f64 / 930e-6) - 1.0).abs() < 0.05, "{rate}");
        assert_eq!(depth, 15.0 * SEG as f64);
    }

    #[test]
    fn a_jittered_head_is_judged_by_its_pace() {
        // P18 tbf_policer at the client (12 Mbit/s behind 120): the delay line releases the
        // head's packets 43 to 126 µs apart around its 95 µs line, some pairs 9 µs apart,
        // and the tail as single packets ~955 µs apart or as pairs ~1.9 ms apart. Judged
        // gap by gap no round had a head; by its knee every one shows the bucket.
        let singles = [
            43.0, 65.0, 126.0, 58.0, 85.0, 104.0, 93.0, 96.0, 95.0, 97.0, 97.0, 93.0, 95.0, 96.0, 789.0, 908.0, 953.0,
            964.0, 956.0, 961.0, 950.0, 960.0, 956.0, 961.0,
        ];
        let pairs = [
            48.0, 9.0, 189.0, 10.0, 141.0, 10.0, 147.0, 68.0, 127.0, 55.0, 136.0, 49.0, 139.0, 582.0, 283.0, 943.0,
            1642.0, 276.0, 1649.0, 262.0, 1620.0, 289.0, 1630.0, 287.0,
        ];
        let mut b = BucketRounds::default();
        for r in 0..8 {
            feed_from(&mut b, r, 1, if r % 2 == 0 { &singles } else { &pairs });
        }
        b.close();
        let (rate, _, n) = b.bucket().expect("a bucket");
        assert_eq!((b.judged, n), (8, 8));
        // 1368-byte packets at 12 Mbit/s less the frames' headers: 11.4-11.5 Mbit/s.
        let mbit = rate * 8e-6 * 1368.0 / SEG as f64;
        assert!((11.2..11.8).contains(&mbit), "{mbit}");
    }

    #[test]
    fn a_fifos_rounds_come_at_one_rate() {
        let mut b = BucketRounds::default();
        feed(&mut b, 8, &[93.0; 30]);
        // Each round judged (a head), none two regimes.
        assert_eq!((b.judged, b.rounds.len(), b.bucket()), (8, 0, None));
        // Spread by a sender's ACK clock: slower, still one rate.
        let mut b = BucketRounds::default();
        feed(&mut b, 8, &[930.0; 30]);
        assert_eq!(b.bucket(), None);
    }

    #[test]
    fn pairs_and_batches_are_no_line_rate() {
        // A delay line's pairs (R36: 13 µs within, ~100 µs between): no run of three gaps.
        let mut pairs = Vec::new();
        for _ in 0..15 {
            pairs.extend([13.0, 100.0]);
        }
        let mut b = BucketRounds::default();
        feed(&mut b, 8, &pairs);
        assert_eq!(b.bucket(), None);
        // A capture host's batches of four (2 µs apart), then the link's pace.
        let mut batches = vec![2.0, 2.0, 2.0];
        batches.extend([930.0; 20]);
        let mut b = BucketRounds::default();
        feed(&mut b, 8, &batches);
        assert_eq!(b.bucket(), None);
    }

    #[test]
    fn a_bucket_needs_most_rounds_and_enough_of_them() {
        let mut two = vec![93.0; 14];
        two.extend([930.0; 20]);
        // Three rounds: too few.
        let mut b = BucketRounds::default();
        feed(&mut b, 3, &two);
        assert_eq!(b.bucket(), None);
        // Four two-regime rounds among ten judged: not most.
        let mut b = BucketRounds::default();
        let mut one = vec![93.0; 4];
        one.extend([100.0; 30]);
        one.push(930.0);
        one.extend([930.0; 3]);
        feed(&mut b, 6, &one);
        feed_from(&mut b, 6, 4, &two);
        assert_eq!(b.judged, 10);
        assert_eq!(b.rounds.len(), 4);
        assert_eq!(b.bucket(), None);
    }

    #[test]
    fn tails_at_many_rates_are_no_buckets() {
        // An application's writes behind a FIFO (R29 app_onoff at the client): runs at the
        // line, then whatever the next writes made, 0.2 to 13 Mbit/s.
        let mut b = BucketRounds::default();
        for (i, tail_us) in [930.0, 8000.0, 900.0, 6000.0, 950.0, 9000.0, 880.0, 7000.0]
            .iter()
            .enumerate()
        {
            let mut gaps = vec![93.0; 14];
            gaps.extend([*tail_us; 20]);
            feed_from(&mut b, i, 1, &gaps);
        }
        assert_eq!((b.judged, b.rounds.len()), (8, 8));
        assert_eq!(b.bucket(), None);
    }

    #[test]
    fn a_tail_shorter_than_twice_the_head_is_a_straggler() {
        let mut gaps = vec![93.0; 14];
        gaps.extend([500.0; 3]);
        let mut b = BucketRounds::default();
        feed(&mut b, 8, &gaps);
        assert_eq!((b.judged, b.rounds.len()), (8, 0));
    }
}
