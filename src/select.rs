//! Cutting a long capture to the trouble, before any decoding: a time window (editcap's
//! `-A`/`-B`, with bounds also relative to the first packet) and the first N packets
//! (tcpdump's `-c`). Both are [`RecordFilter`]s for
//! [`CaptureReader::set_filter`](crate::capture::CaptureReader::set_filter); the capture
//! filter itself is [`crate::bpf::PacketFilter`].

use crate::capture::{Decision, Frame, RecordFilter};
use crate::time::{Span, Timestamp};

/// One end of a time window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// An instant (capture time, nanoseconds since the epoch).
    At(Timestamp),
    /// This long after the capture's first record.
    AfterFirst(Span),
}

/// Records at or after `from` and before `until` (editcap: `-A` "after or equal", `-B`
/// "before"). Records out of time order are judged one by one: a late record inside the
/// window is kept even after one past its end.
#[derive(Clone, Debug, Default)]
pub struct TimeWindow {
    pub from: Option<Bound>,
    pub until: Option<Bound>,
    first: Option<Timestamp>,
}

impl TimeWindow {
    pub fn new(from: Option<Bound>, until: Option<Bound>) -> TimeWindow {
        TimeWindow {
            from,
            until,
            first: None,
        }
    }

    fn resolve(&self, b: Bound) -> Timestamp {
        match b {
            Bound::At(t) => t,
            Bound::AfterFirst(s) => self.first.map_or(Timestamp(i64::MIN), |f| f + s),
        }
    }
}

impl RecordFilter for TimeWindow {
    fn decide(&mut self, frame: &Frame<'_>) -> Decision {
        self.first.get_or_insert(frame.ts);
        if self.from.is_some_and(|b| frame.ts < self.resolve(b)) {
            return Decision::Skip;
        }
        if self.until.is_some_and(|b| frame.ts >= self.resolve(b)) {
            return Decision::Skip;
        }
        Decision::Keep
    }
}

/// The first `n` records it is asked about, then the end of the capture.
#[derive(Clone, Debug)]
pub struct FirstN {
    left: u64,
}

impl FirstN {
    pub fn new(n: u64) -> FirstN {
        FirstN { left: n }
    }
}

impl RecordFilter for FirstN {
    fn decide(&mut self, _: &Frame<'_>) -> Decision {
        if self.left == 0 {
            return Decision::End;
        }
        self.left -= 1;
        Decision::Keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::LinkType;

    fn frame(number: u64, secs: f64) -> Frame<'static> {
        Frame {
            number,
            ts: Timestamp::from_secs_f64(secs),
            link: LinkType::ETHERNET,
            wire_len: 0,
            data: &[],
            interface: 0,
        }
    }

    fn kept(f: &mut dyn RecordFilter, times: &[f64]) -> Vec<u64> {
        let mut out = Vec::new();
        for (i, &t) in times.iter().enumerate() {
            match f.decide(&frame(i as u64 + 1, t)) {
                Decision::Keep => out.push(i as u64 + 1),
                Decision::Skip => {}
                Decision::End => break,
                Decision::Fail(e) => panic!("{e}"),
            }
        }
        out
    }

    #[test]
    fn a_window_keeps_from_inclusive_to_until_exclusive() {
        let times = [100.0, 101.0, 102.0, 103.0, 102.5, 104.0];
        let mut w = TimeWindow::new(
            Some(Bound::At(Timestamp::from_secs_f64(101.0))),
            Some(Bound::At(Timestamp::from_secs_f64(103.0))),
        );
        assert_eq!(kept(&mut w, &times), [2, 3, 5], "the late record 5 is inside");
        // Relative to the first record (100 s): +1.5 s .. +3 s.
        let mut w = TimeWindow::new(
            Some(Bound::AfterFirst(Span::from_millis(1500))),
            Some(Bound::AfterFirst(Span::from_millis(3000))),
        );
        assert_eq!(kept(&mut w, &times), [3, 5]);
        let mut open = TimeWindow::new(None, Some(Bound::AfterFirst(Span::from_millis(1000))));
        assert_eq!(kept(&mut open, &times), [1]);
    }

    #[test]
    fn first_n_ends_the_capture() {
        assert_eq!(kept(&mut FirstN::new(2), &[1.0, 2.0, 3.0]), [1, 2]);
        assert!(kept(&mut FirstN::new(0), &[1.0]).is_empty());
    }
}
