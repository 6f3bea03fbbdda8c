//! Windowed minimum filter (Kathleen Nichols' algorithm, as in Linux lib/win_minmax.c and
//! quiche's minmax.rs): the minimum of the samples of the last `window`, in O(1) time and
//! space, by keeping the best, second-best and third-best candidates.

use crate::time::{Span, Timestamp};

#[derive(Clone, Copy, Debug)]
struct Sample {
    at: Timestamp,
    value: Span,
}

#[derive(Clone, Copy, Debug)]
pub struct WindowedMin {
    window: Span,
    s: [Option<Sample>; 3],
}

impl WindowedMin {
    pub fn new(window: Span) -> Self {
        WindowedMin { window, s: [None; 3] }
    }

    /// Current windowed minimum, if any sample was seen.
    pub fn get(&self) -> Option<Span> {
        self.s[0].map(|s| s.value)
    }

    pub fn update(&mut self, at: Timestamp, value: Span) -> Span {
        let new = Sample { at, value };
        match self.s[0] {
            // A new minimum, or the window has passed with nothing newer: reset.
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
        self.expire(new);
        self.s[0].map_or(value, |s| s.value)
    }

    /// Ages the candidates the way win_minmax.c's subwin_update does.
    fn expire(&mut self, new: Sample) {
        let (Some(first), Some(second), Some(third)) = (self.s[0], self.s[1], self.s[2]) else {
            return;
        };
        let dt = new.at - first.at;
        if dt > self.window {
            // The best candidate expired: promote the others.
            self.s = [Some(second), Some(third), Some(new)];
            if new.at - second.at > self.window {
                self.s = [Some(third), Some(new), Some(new)];
            }
        } else if second.at == first.at && dt > Span(self.window.0 / 4) {
            // A quarter of the window passed without a second choice: take one.
            self.s[1] = Some(new);
            self.s[2] = Some(new);
        } else if third.at == second.at && dt > Span(self.window.0 / 2) {
            self.s[2] = Some(new);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
