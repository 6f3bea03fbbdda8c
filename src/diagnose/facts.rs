//! The numbers evidence and advice are written from, gathered once per flow.

use super::capacity::Capacity;
use super::classify::Classification;
use crate::tcp::WindowScale;

#[derive(Clone, Debug)]
pub struct Facts {
    pub capacity: Option<Capacity>,
    /// Delivery-rate and dispersion estimates (B/s) before choosing.
    pub delivery_rate: Option<f64>,
    pub dispersion_rate: Option<f64>,
    /// Data-arrival dispersion (only past the bottleneck).
    pub arrival_rate: Option<f64>,
    pub base_rtt_s: f64,
    pub median_rtt_s: Option<f64>,
    pub p95_rtt_s: Option<f64>,
    pub bdp: Option<f64>,
    pub max_rwnd: Option<u64>,
    pub max_flight: u64,
    /// Goodput of the bulk direction, bytes/s.
    pub goodput: f64,
    pub data_segments: u64,
    pub window_full_segments: u64,
    pub retransmitted_segments: u64,
    pub zero_windows: u64,
    /// Scale of the receiver's windows (the end that receives the bulk data).
    pub receiver_scale: WindowScale,
    /// Segments per delivering ACK, when so many that ACK spacing carries no dispersion
    /// (and the capture point is before the bottleneck).
    pub stretch_acks: Option<f64>,
    pub sack_permitted: Option<bool>,
    pub flows_sharing: usize,
}

impl Facts {
    pub fn window_full_share(&self) -> f64 {
        if self.data_segments == 0 {
            0.0
        } else {
            self.window_full_segments as f64 / self.data_segments as f64
        }
    }

    pub fn retransmission_share(&self) -> f64 {
        if self.data_segments == 0 {
            0.0
        } else {
            self.retransmitted_segments as f64 / self.data_segments as f64
        }
    }

    /// Queueing delay: median RTT above the base.
    pub fn queueing_s(&self) -> Option<f64> {
        self.median_rtt_s.map(|m| (m - self.base_rtt_s).max(0.0))
    }

    /// What the receiver's largest window allowed: rwnd / base RTT (B/s).
    pub fn window_bound(&self) -> Option<f64> {
        self.max_rwnd
            .filter(|_| self.base_rtt_s > 0.0)
            .map(|w| w as f64 / self.base_rtt_s)
    }
}

/// Facts plus the classification, for the writers.
pub struct Findings<'a> {
    pub facts: &'a Facts,
    pub class: &'a Classification,
}
