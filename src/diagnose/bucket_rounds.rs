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
//! sender waiting for its ACKs). The head is the run from the round's first packet whose
//! gaps stay within twice the least of its first three (a pair or a triple is a sender's
//! burst, which any link passes at its rate: the head needs three gaps); each gap must be
//! one the capture resolves as two arrivals (a host's batch is not a line rate:
//! [`super::train::BATCH_GAP`]). The tail is the rest, at least three gaps over at least
//! twice the head's time: a regime the bucket sustained, not a straggler. Memory: the open
//! round's tail gaps (at most [`MAX_TAIL`]) and at most [`MAX_ROUNDS`] rounds.

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
    open: Option<Open>,
    /// The open round's tail: each gap (ns) and the bytes that ended it, at most
    /// [`MAX_TAIL`] (kept between rounds, cleared).
    tail: Vec<(u32, u16)>,
    /// Rounds with a head, two-regime or not.
    pub judged: u32,
    pub rounds: Vec<Round>,
}

/// Tail gaps kept for a round (8 bytes each); a longer tail is judged by its first this
/// many. The buffer is the state's one allocation: at most 2 KiB a direction, and only in
/// flows whose rounds have long tails.
const MAX_TAIL: usize = 256;

#[derive(Clone, Copy, Debug)]
struct Open {
    start: Timestamp,
    last: Timestamp,
    /// Gaps so far, and the least per-byte time of the first three (ns per byte).
    gaps: u32,
    least: f64,
    /// The head's bytes (its first packet's too, `first_len`), its end, and whether it has
    /// ended.
    head_bytes: u64,
    first_len: u64,
    head_end: Timestamp,
    head_gaps: u32,
    in_head: bool,
    /// The first three gaps, per byte, until the head's pace is known.
    first: [f64; 3],
    tail_gaps: u32,
}

impl Open {
    fn start(ts: Timestamp, len: u64) -> Open {
        Open {
            start: ts,
            last: ts,
            gaps: 0,
            least: f64::INFINITY,
            head_bytes: len,
            first_len: len,
            head_end: ts,
            head_gaps: 0,
            in_head: true,
            first: [0.0; 3],
            tail_gaps: 0,
        }
    }
}

impl BucketRounds {
    /// New data of `len` bytes arrived at `ts`; `round`: the least loop through the sender.
    pub fn on_arrival(&mut self, ts: Timestamp, len: u64, round: Option<Span>) {
        let Some(round) = round.filter(|r| r.nanos() > 0) else {
            return;
        };
        if len == 0 {
            return;
        }
        let open = match self.open.as_mut() {
            Some(o) if ts - o.last < Span(round.nanos() / 4) && ts >= o.last => o,
            _ => {
                self.close();
                self.open = Some(Open::start(ts, len));
                return;
            }
        };
        let tail = &mut self.tail;
        let mut to_tail = |open: &mut Open, gap: Span| {
            open.tail_gaps += 1;
            if tail.len() < MAX_TAIL {
                tail.push((
                    gap.nanos().clamp(0, u32::MAX as i64) as u32,
                    len.min(u16::MAX as u64) as u16,
                ));
            }
        };
        let gap = ts - open.last;
        open.last = ts;
        let per_byte = gap.nanos() as f64 / len as f64;
        let i = open.gaps as usize;
        open.gaps += 1;
        if open.in_head && gap < BATCH_GAP {
            // Not two arrivals the capture resolves: no line rate can be read from it.
            open.in_head = false;
            open.head_gaps = 0;
        }
        if !open.in_head {
            to_tail(open, gap);
            return;
        }
        if i < 3 {
            open.first[i] = per_byte;
            open.least = open.least.min(per_byte);
            open.head_bytes += len;
            open.head_end = ts;
            open.head_gaps += 1;
            if i == 2 && open.first.iter().any(|&p| p > HEAD_OVER_TAIL * open.least) {
                open.in_head = false;
                open.head_gaps = 0;
            }
            return;
        }
        if per_byte <= HEAD_OVER_TAIL * open.least {
            open.head_bytes += len;
            open.head_end = ts;
            open.head_gaps += 1;
        } else {
            open.in_head = false;
            to_tail(open, gap);
        }
    }

    /// Ends the open round.
    pub fn close(&mut self) {
        let tail = std::mem::take(&mut self.tail);
        if let Some(round) = self.open.take().and_then(|o| self.judge(&o, &tail)) {
            if self.rounds.len() < MAX_ROUNDS {
                self.rounds.push(round);
            }
        }
        self.tail = tail;
        self.tail.clear();
    }

    /// A closed round with a head counts as judged, with a tail or without one (a round
    /// that came whole at the line is one the bucket, if any, did not hold); it showed two
    /// regimes when its tail had enough gaps and lasted at least twice its head at under
    /// half its rate.
    /// The tail's rate is its later half's (by time): what passes early in the tail can be
    /// what the bucket still held when a gap of the sender's ended the head, and its later
    /// half is the bucket empty, passing as the tokens come.
    fn judge(&mut self, o: &Open, tail: &[(u32, u16)]) -> Option<Round> {
        if o.head_gaps < MIN_GAPS {
            return None;
        }
        self.judged += 1;
        if o.tail_gaps < MIN_GAPS {
            return None;
        }
        let head_s = (o.head_end - o.start).secs_f64();
        let tail_ns: u64 = tail.iter().map(|&(g, _)| g as u64).sum();
        let tail_s = tail_ns as f64 / 1e9;
        if head_s <= 0.0 || tail_s < 2.0 * head_s {
            return None;
        }
        let head_rate = (o.head_bytes - o.first_len) as f64 / head_s;
        let tail_bytes: u64 = tail.iter().map(|&(_, l)| l as u64).sum();
        if head_rate < HEAD_OVER_TAIL * (tail_bytes as f64 / tail_s) {
            return None;
        }
        let (mut at, mut bytes, mut ns) = (0u64, 0u64, 0u64);
        for &(g, l) in tail {
            at += g as u64;
            if 2 * at > tail_ns {
                bytes += l as u64;
                ns += g as u64;
            }
        }
        (ns > 0).then(|| Round {
            head_bytes: o.head_bytes,
            tail_rate: bytes as f64 * 1e9 / ns as f64,
        })
    }

    /// The bucket the rounds show, where most rounds long enough to show it did: its rate
    /// (bytes/s, the median of the tails'), its depth (the largest head: the bucket refills
    /// to it only when the sender waits long enough) and how many rounds showed it. A
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
        let depth = self.rounds.iter().map(|r| r.head_bytes).max()? as f64;
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
