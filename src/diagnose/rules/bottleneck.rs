//! # bottleneck-limited
//!
//! ## What it detects
//! Delivery at the path's bottleneck capacity: the bytes acknowledged per round trip
//! reach the capacity estimate (alone, or summed with the other flows that share the same
//! hosts and time). The excess flight queues and inflates the RTT.
//!
//! ## Why
//! When the pipe is full, more window only adds queueing delay; nothing at the ends can
//! make the transfer faster.
//!
//! ## Example
//! 50 Mbit/s, 100 ms, SO_RCVBUF 4 MiB: 47 Mbit/s of payload once slow start ends, RTT
//! 100 -> 110 ms from the queue.

/// Delivery within 15% of the capacity counts as at capacity: header overhead, ACK
/// timing and the estimate's own error are all inside that margin.
pub const AT_CAPACITY: f64 = 0.85;

pub fn at_capacity(rate: f64, capacity: f64) -> bool {
    capacity > 0.0 && rate >= AT_CAPACITY * capacity
}
