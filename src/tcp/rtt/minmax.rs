//! Windowed minimum filter (Kathleen Nichols' algorithm, as in Linux lib/win_minmax.c and
//! quiche's minmax.rs): the minimum of the samples of the last `window`, in O(1) time and
//! space, by keeping the best, second-best and third-best candidates.

use crate::time::{Span, Timestamp};

#[derive(Clone, Copy, Debug)]
struct Sample {
    at: Timestamp,
    value: Span,
}

/// The three candidates are all empty or all filled (the first sample fills them
/// together), so one flag says which, instead of an `Option` per candidate tested on
/// every update: RTT samples come with every other ACK of a WAN capture.
#[derive(Clone, Copy, Debug)]
pub struct WindowedMin {
    window: Span,
    s: [Sample; 3],
    filled: bool,
}

impl WindowedMin {
    pub fn new(window: Span) -> Self {
        let none = Sample {
            at: Timestamp(0),
            value: Span::ZERO,
        };
        WindowedMin {
            window,
            s: [none; 3],
            filled: false,
        }
    }

    /// Current windowed minimum, if any sample was seen.
    #[inline]
    pub fn get(&self) -> Option<Span> {
        self.filled.then_some(self.s[0].value)
    }

    /// Forgets every sample: each was taken back (`Loop::retract`).
    pub fn clear(&mut self) {
        self.filled = false;
    }

    /// Starts again from one sample: the minimum held was taken back (`Loop::retract`).
    pub fn reset(&mut self, at: Timestamp, value: Span) {
        self.s = [Sample { at, value }; 3];
        self.filled = true;
    }

    pub fn update(&mut self, at: Timestamp, value: Span) -> Span {
        let new = Sample { at, value };
        // A new minimum, or the window has passed with nothing newer: reset.
        if !(self.filled && value > self.s[0].value && at - self.s[2].at <= self.window) {
            self.s = [new; 3];
            self.filled = true;
            return value;
        }
        if value <= self.s[1].value {
            self.s[1] = new;
            self.s[2] = new;
        } else if value <= self.s[2].value {
            self.s[2] = new;
        }
        self.expire(new);
        self.s[0].value
    }

    /// Ages the candidates the way win_minmax.c's subwin_update does.
    fn expire(&mut self, new: Sample) {
        let [first, second, third] = self.s;
        let dt = new.at - first.at;
        if dt > self.window {
            // The best candidate expired: promote the others.
            self.s = [second, third, new];
            if new.at - second.at > self.window {
                self.s = [third, new, new];
            }
        } else if second.at == first.at && dt > Span(self.window.0 / 4) {
            // A quarter of the window passed without a second choice: take one.
            self.s[1] = new;
            self.s[2] = new;
        } else if third.at == second.at && dt > Span(self.window.0 / 2) {
            self.s[2] = new;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The filter as it was written before the flag replaced the options, kept to show the
    /// two agree sample for sample.
    struct OptionMin {
        window: Span,
        s: [Option<Sample>; 3],
    }

    impl OptionMin {
        fn update(&mut self, at: Timestamp, value: Span) -> Span {
            let new = Sample { at, value };
            match self.s[0] {
                Some(best) if value > best.value && at - self.s[2].unwrap_or(best).at <= self.window => {}
                _ => {
                    self.s = [Some(new); 3];
                    return value;
                }
            }
            if self.s[1].is_none_or(|s| value <= s.value) {
                self.s[1] = Some(new);
                self.s[2] = Some(new);
            } else if self.s[2].is_none_or(|s| value <= s.value) {
                self.s[2] = Some(new);
            }
            let (Some(first), Some(second), Some(third)) = (self.s[0], self.s[1], self.s[2]) else {
                return value;
            };
            let dt = new.at - first.at;
            if dt > self.window {
                self.s = [Some(second), Some(third), Some(new)];
                if new.at - second.at > self.window {
                    self.s = [Some(third), Some(new), Some(new)];
                }
            } else if second.at == first.at && dt > Span(self.window.0 / 4) {
                self.s[1] = Some(new);
                self.s[2] = Some(new);
            } else if third.at == second.at && dt > Span(self.window.0 / 2) {
                self.s[2] = Some(new);
            }
            self.s[0].map_or(value, |s| s.value)
        }
    }

    #[test]
    fn the_flagged_filter_agrees_with_the_optional_one() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for round in 0..300 {
            let window = ms(1 + (round % 40) * 50);
            let mut fast = WindowedMin::new(window);
            let mut plain = OptionMin { window, s: [None; 3] };
            let mut t = 0i64;
            for _ in 0..500 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // steps from 0 (equal times) to past the window; values with ties
                t += match x % 5 {
                    0 => 0,
                    1 => (x >> 8) as i64 % 3,
                    _ => (x >> 8) as i64 % (window.0 / 1_000_000 + 10),
                } * 1_000_000;
                let v = ms(10 + (x >> 32) as i64 % (5 + round % 50));
                assert_eq!(
                    fast.update(Timestamp(t), v),
                    plain.update(Timestamp(t), v),
                    "round {round}"
                );
                assert_eq!(fast.get(), plain.s[0].map(|s| s.value));
            }
        }
    }

    fn ms(v: i64) -> Span {
        Span::from_millis(v)
    }
    fn at(v: i64) -> Timestamp {
        Timestamp(0) + ms(v)
    }

    #[test]
    fn keeps_the_minimum_within_the_window() {
        let mut f = WindowedMin::new(ms(1000));
        f.update(at(0), ms(50));
        f.update(at(100), ms(70));
        assert_eq!(f.get(), Some(ms(50)));
        f.update(at(200), ms(40));
        assert_eq!(f.get(), Some(ms(40)));
    }

    #[test]
    fn forgets_an_old_minimum() {
        let mut f = WindowedMin::new(ms(1000));
        f.update(at(0), ms(40));
        for t in (100..3000).step_by(100) {
            f.update(at(t), ms(80));
        }
        assert_eq!(f.get(), Some(ms(80)));
    }

    #[test]
    fn matches_a_brute_force_minimum_on_a_ramp() {
        let mut f = WindowedMin::new(ms(500));
        let samples: Vec<(i64, i64)> = (0..200).map(|i| (i * 10, 100 + ((i * 37) % 50))).collect();
        for (k, &(t, v)) in samples.iter().enumerate() {
            let got = f.update(at(t), ms(v));
            let brute = samples[..=k]
                .iter()
                .filter(|(st, _)| t - st <= 500)
                .map(|s| s.1)
                .min()
                .unwrap();
            // The filter is an approximation that never reports below the true minimum
            // and never above the samples of the last half window.
            assert!(got >= ms(brute), "t={t}");
            let recent = samples[..=k]
                .iter()
                .filter(|(st, _)| t - st <= 250)
                .map(|s| s.1)
                .min()
                .unwrap();
            assert!(got <= ms(recent), "t={t}");
        }
    }
}
