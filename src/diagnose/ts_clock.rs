//! An end's TCP timestamp clock, measured against the capture's: the TSval an end puts on
//! its segments (RFC 7323 §3) is its own clock when it sent them, whatever happened to
//! them afterwards. Its rate is the end's own (RFC 7323 §5.4: between 1 ms and 1 s a tick;
//! Linux's is 1 ms, or 1 µs with the usec option of Linux 6.7): it is measured as ticks
//! over capture seconds between the first and the latest stamp, and taken as the nearest
//! usual rate when within the measurement's error of it.

use crate::time::{Span, Timestamp};

/// The clock rate is measured over at least this long (s) and this many ticks: a
/// segment's own delay varies by tens of milliseconds on a loaded path, a few percent of
/// a second.
const MIN_CLOCK_SPAN_S: f64 = 1.0;
const MIN_CLOCK_TICKS: i64 = 100;
/// Usual timestamp clock rates (Hz): Linux (1 ms since 4.13; jiffies of HZ 100, 250, 300
/// or 1000 before; 1 µs with the usec option), the BSDs and macOS (1 ms), and microseconds
/// shifted right by ten (1.024 ms a tick: SF20_Trace1's sender, 976.56 ticks a second over
/// 120 s; read as 1 kHz its one-way delays drifted 2.8 s).
const USUAL_HZ: [f64; 6] = [100.0, 250.0, 300.0, 976.5625, 1000.0, 1_000_000.0];
/// Their periods (s a tick): the rate is snapped on every stamped segment, and a product
/// costs a fraction of a quotient (TsClock::hz was 6% of a bulk capture's run).
const USUAL_PERIOD_S: [f64; 6] = [
    1.0 / 100.0,
    1.0 / 250.0,
    1.0 / 300.0,
    1.0 / 976.5625,
    1.0 / 1000.0,
    1.0 / 1_000_000.0,
];
/// A measured rate within this share of a usual one is taken as the nearest such.
const USUAL_WITHIN: f64 = 0.05;

#[derive(Clone, Copy, Debug, Default)]
pub struct TsClock {
    /// The latest stamp, and its tick count since the first (stamps wrap at 2^32).
    last_tsval: Option<u32>,
    ticks: i64,
    /// Capture time and tick count of the first and the latest stamp.
    first: Option<(Timestamp, i64)>,
    last: Option<(Timestamp, i64)>,
    /// Once the rate is a usual one: the least of capture time less clock time (ns) over
    /// the stamps since, with the rate it was taken at (see [`TsClock::delay_above_least`]).
    least_offset: Option<(i64, f64)>,
}

impl TsClock {
    /// A segment captured at `ts` stamped `tsval`: the ticks since the previous stamp, or
    /// None for a stamp older than the latest (a segment reordered on the way: it says
    /// nothing of the clock, and is skipped).
    pub fn on_stamp(&mut self, ts: Timestamp, tsval: u32) -> Option<i64> {
        let step = match self.last_tsval {
            Some(prev) => tsval.wrapping_sub(prev) as i32 as i64,
            None => 0,
        };
        if step < 0 {
            return None;
        }
        self.ticks += step;
        self.last_tsval = Some(tsval);
        self.first.get_or_insert((ts, self.ticks));
        self.last = Some((ts, self.ticks));
        if let Some(hz) = self.usual_hz() {
            let offset = self.offset(ts, hz);
            self.least_offset = match self.least_offset {
                Some((least, h)) if h == hz => Some((least.min(offset), hz)),
                _ => Some((offset, hz)),
            };
        }
        Some(step)
    }

    /// Capture time less the clock's time at the latest stamp (ns, on an arbitrary origin).
    fn offset(&self, ts: Timestamp, hz: f64) -> i64 {
        ts.0 - (self.ticks as f64 * 1e9 / hz) as i64
    }

    /// The rate when it is one of the usual ones (a measured unusual rate may still move).
    fn usual_hz(&self) -> Option<f64> {
        self.hz().filter(|h| USUAL_HZ.contains(h))
    }

    /// How much longer than the least the latest stamped segment took from its end to the
    /// capture point: its capture time less its stamp, against the least of that since the
    /// clock's rate was known (a one-way delay's variation, which no clock offset enters:
    /// the queue it met beyond the least one). None until the rate is a usual one. The
    /// stamp's own resolution (a tick) bounds its error, and so does the drift of the two
    /// clocks over the connection (tens of ppm between hosts).
    pub fn delay_above_least(&self) -> Option<Span> {
        let (ts, _) = self.last?;
        let hz = self.usual_hz()?;
        let (least, h) = self.least_offset?;
        (h == hz).then(|| Span((self.offset(ts, hz) - least).max(0)))
    }

    /// One tick of the clock, when its rate is a usual one.
    pub fn tick(&self) -> Option<Span> {
        self.usual_hz().map(|h| Span((1e9 / h) as i64))
    }

    /// The ticks counted since the first stamp.
    pub fn ticks(&self) -> i64 {
        self.ticks
    }

    /// The clock's rate (ticks per second), once the stamps span enough of it.
    pub fn hz(&self) -> Option<f64> {
        let ((t0, k0), (t1, k1)) = (self.first?, self.last?);
        let secs = (t1 - t0).secs_f64();
        let ticks = k1 - k0;
        if secs < MIN_CLOCK_SPAN_S || ticks < MIN_CLOCK_TICKS {
            return None;
        }
        let measured = ticks as f64 / secs;
        // The nearest usual rate within the error (the first of equals), in one pass: this
        // runs on every stamped segment.
        let mut best: Option<(f64, f64)> = None;
        for (u, period) in USUAL_HZ.into_iter().zip(USUAL_PERIOD_S) {
            let off = (measured * period - 1.0).abs();
            if off <= USUAL_WITHIN && best.is_none_or(|(_, b)| off < b) {
                best = Some((u, off));
            }
        }
        Some(best.map_or(measured, |(u, _)| u))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_ms(ms: f64) -> Timestamp {
        Timestamp(1_700_000_000_000_000_000 + (ms * 1e6) as i64)
    }

    #[test]
    fn a_millisecond_clock_snaps_to_its_usual_rate() {
        let mut c = TsClock::default();
        for i in 0..1500u32 {
            // 1.02 kHz measured against a capture clock: within 5% of Linux's 1 kHz.
            c.on_stamp(at_ms(i as f64), 77 + (i as f64 * 1.02) as u32);
        }
        assert_eq!(c.hz(), Some(1000.0));
    }

    /// Segments stamped 1 ms apart that reach the capture point 20 ms late, one of them
    /// 35 ms: it met 15 ms more queue than the least.
    #[test]
    fn a_stamp_tells_the_queue_a_segment_met_beyond_the_least() {
        let mut c = TsClock::default();
        for i in 0..1500u32 {
            c.on_stamp(at_ms(i as f64 + 20.0), 5_000 + i);
        }
        assert_eq!(c.delay_above_least(), Some(Span::ZERO));
        c.on_stamp(at_ms(1500.0 + 35.0), 5_000 + 1500);
        let d = c.delay_above_least().unwrap();
        assert!((d.secs_f64() * 1e3 - 15.0).abs() < 0.01, "{d:?}");
        assert_eq!(c.tick(), Some(Span::from_millis(1)));
    }

    /// A clock of 1.024 ms ticks (microseconds shifted by ten) is its own usual rate, not
    /// 1 kHz: its delays hold still.
    #[test]
    fn a_clock_of_1024_microsecond_ticks_is_not_read_as_milliseconds() {
        let mut c = TsClock::default();
        for i in 0..10_000u32 {
            c.on_stamp(at_ms(i as f64 + 20.0), (i as f64 / 1.024) as u32);
        }
        assert_eq!(c.hz(), Some(976.5625));
        assert!(c.delay_above_least().unwrap() < Span::from_millis(2));
    }

    #[test]
    fn under_a_second_measures_nothing() {
        let mut c = TsClock::default();
        for i in 0..900u32 {
            c.on_stamp(at_ms(i as f64), i);
        }
        assert_eq!(c.hz(), None);
        assert_eq!(c.ticks(), 899);
    }

    #[test]
    fn stamps_wrap_and_older_ones_are_skipped() {
        let mut c = TsClock::default();
        assert_eq!(c.on_stamp(at_ms(0.0), u32::MAX - 5), Some(0));
        assert_eq!(c.on_stamp(at_ms(10.0), 4), Some(10));
        assert_eq!(c.on_stamp(at_ms(11.0), u32::MAX - 1), None);
        assert_eq!(c.ticks(), 10);
    }
}
