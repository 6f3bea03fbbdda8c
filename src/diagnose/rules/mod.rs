//! One rule per limitation, each in its own file with what it detects, why, and an
//! example (the ruff layout). The classifier applies them in precedence order, the way
//! Linux's tcp_chrono lets the highest-priority state win.

pub mod bottleneck;
pub mod cwnd;
pub mod receiver_window;
pub mod sender;

/// A hand-made transfer for the rules' tests: 5 s of 10 ms bins over a 40 ms path whose
/// bottleneck carries 1 MB/s, each bin described by what the sender was doing.
#[cfg(test)]
pub(crate) mod fixture {
    use crate::diagnose::classify::{classify, Classification, Input};
    use crate::diagnose::timeline::Timeline;
    use crate::time::{Span, Timestamp};

    pub const CAPACITY: f64 = 1_000_000.0;
    pub const MSS: u32 = 1448;
    pub const BASE_RTT: Span = Span::from_millis(40);
    const BIN: Span = Span::from_millis(10);

    /// What one 10 ms bin held.
    #[derive(Clone, Copy)]
    pub struct Bin {
        pub busy: f64,
        pub rwnd: f64,
        pub idle: f64,
        /// Bytes delivered in the bin.
        pub delivered: u64,
        pub flight: u64,
        pub retransmissions: u32,
    }

    pub const BUSY: Bin = Bin {
        busy: 1.0,
        rwnd: 0.0,
        idle: 0.0,
        delivered: 0,
        flight: 0,
        retransmissions: 0,
    };

    /// Classifies 500 bins made by `bin(i)`.
    pub fn run(bin: impl Fn(usize) -> Bin) -> Classification {
        let t0 = Timestamp(1_000_000_000_000);
        let mut tl = Timeline::new(t0);
        for i in 0..500 {
            let b = bin(i);
            let at = t0 + Span(BIN.nanos() * i as i64);
            let x = tl.bin(at);
            let ns = BIN.nanos() as f64;
            // `+=`: the timeline's own bins are coarser than these once it has merged.
            x.busy_ns += (b.busy * ns) as u64;
            x.rwnd_ns += (b.rwnd * ns) as u64;
            x.idle_ns += (b.idle * ns) as u64;
            x.delivered += b.delivered;
            x.max_flight = x.max_flight.max(b.flight);
            x.retransmissions += b.retransmissions;
        }
        classify(&Input {
            tl: &tl,
            capacity: Some(CAPACITY),
            base_rtt: BASE_RTT,
            mss: MSS,
            shared_delivered: None,
        })
    }

    /// Bytes a bin delivers at `share` of the capacity.
    pub fn at(share: f64) -> u64 {
        (CAPACITY * share * BIN.secs_f64()) as u64
    }
}
