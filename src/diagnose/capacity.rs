//! The bottleneck rate of a flow's path, in payload bytes per second, and how it was found.

use super::delivery;
use super::dispersion::Dispersion;
use super::timeline::Timeline;
use crate::time::Span;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capacity {
    /// Payload bytes per second.
    pub rate: f64,
    pub method: Method,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Given by the user (`--link-rate`), converted to payload.
    LinkRate,
    /// The best delivery rate over a round trip (the pipe was full at some point).
    DeliveryRate,
    /// The spacing of ACKs (packet-train dispersion).
    Dispersion,
    /// The summed delivery rate of flows sharing the path.
    SharedDeliveryRate,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::LinkRate => "link-rate",
            Method::DeliveryRate => "delivery-rate",
            Method::Dispersion => "dispersion",
            Method::SharedDeliveryRate => "shared-delivery-rate",
        }
    }
}

/// Per-segment overhead on the wire beyond the payload: Ethernet (14) + IPv4 (20) + TCP
/// (20) + timestamps (12). Used only to turn a user's link rate into a payload rate.
const WIRE_OVERHEAD: f64 = 66.0;

/// The estimate: the larger of the delivery rate (a lower bound that is exact when the
/// pipe was full) and the dispersion rate (an estimate that needs no full pipe). A user's
/// link rate overrides both.
pub fn estimate(
    tl: &Timeline,
    dispersion: &Dispersion,
    base_rtt: Span,
    mss: u32,
    link_rate_bps: Option<f64>,
) -> (Option<Capacity>, Option<f64>, Option<f64>) {
    let window = Span(base_rtt.nanos().max(2 * tl.width.nanos()));
    let delivered = delivery::max_rate(tl, window);
    let dispersed = dispersion.capacity();
    if let Some(bps) = link_rate_bps {
        let eff = mss as f64 / (mss as f64 + WIRE_OVERHEAD);
        return (Some(Capacity { rate: bps / 8.0 * eff, method: Method::LinkRate }), delivered, dispersed);
    }
    let best = match (delivered, dispersed) {
        (Some(d), Some(p)) if p > d => Some(Capacity { rate: p, method: Method::Dispersion }),
        (Some(d), _) => Some(Capacity { rate: d, method: Method::DeliveryRate }),
        (None, Some(p)) => Some(Capacity { rate: p, method: Method::Dispersion }),
        (None, None) => None,
    };
    (best, delivered, dispersed)
}
