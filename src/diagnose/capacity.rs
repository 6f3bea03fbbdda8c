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
    /// The spacing of data segments arriving at a capture point past the bottleneck.
    ArrivalDispersion,
    /// The summed delivery rate of flows sharing the path.
    SharedDeliveryRate,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            // The user's figure, not a measurement: the word says whose it is.
            Method::LinkRate => "user-link-rate",
            Method::DeliveryRate => "delivery-rate",
            Method::Dispersion => "dispersion",
            Method::ArrivalDispersion => "arrival-dispersion",
            Method::SharedDeliveryRate => "shared-delivery-rate",
        }
    }
}

/// Per-segment overhead on the wire beyond the payload: Ethernet (14) + IPv4 (20) + TCP
/// (20) + timestamps (12). Used only to turn a user's link rate into a payload rate.
const WIRE_OVERHEAD: f64 = 66.0;

/// Delivery rates are measured over this many base RTTs: over one round, ACKs that
/// bunched up behind a queue comparable to the BDP can report more than the bottleneck
/// carries; over several, only a pipe that stayed full reaches its rate.
pub const DELIVERY_ROUNDS: i64 = 4;

/// The window delivery rates are measured over (at least two bins of the timeline).
pub fn delivery_window(base_rtt: Span, bin: Span) -> Span {
    Span((base_rtt.nanos() * DELIVERY_ROUNDS).max(2 * bin.nanos()))
}

/// The estimate: the largest of the delivery rate (a lower bound that is exact when the
/// pipe was full), the ACK dispersion rate (an estimate that needs no full pipe), and —
/// when the capture point is past the bottleneck, near the receiver — the dispersion of
/// the data itself, which survives receivers that acknowledge whole bursts at once. A
/// user's link rate overrides them all.
///
/// `window_rate` is the rate the receive window allowed (max rwnd / base RTT) when the
/// flow delivered at it: the receiver's ACKs then clock the sender, and their spacing
/// shows the window's pace rather than the path's.
pub fn estimate(
    tl: &Timeline,
    dispersion: &Dispersion,
    arrivals: Option<&Dispersion>,
    base_rtt: Span,
    mss: u32,
    link_rate_bps: Option<f64>,
    window_rate: Option<f64>,
) -> (Option<Capacity>, Option<f64>, Option<f64>) {
    let window = delivery_window(base_rtt, tl.width);
    let delivered = delivery::max_rate(tl, window);
    let dispersed = match (dispersion.capacity(), window_rate) {
        // The strongest spacing may be the window's own pace (it is never faster than the
        // path): segments that did queue at the bottleneck (the initial window, bursts
        // after a window update) leave a separate, faster mode, and that one is the path's.
        // The pace itself is not a fixed margin above the window's average rate (ACK
        // clustering put it 18-25% above in the lab), so any faster separate mode counts.
        (Some(mode), Some(_)) => dispersion
            .modes()
            .into_iter()
            .filter(|&r| r > mode)
            .last()
            .or(Some(mode)),
        (mode, _) => mode,
    };
    if let Some(bps) = link_rate_bps {
        let eff = mss as f64 / (mss as f64 + WIRE_OVERHEAD);
        return (
            Some(Capacity {
                rate: bps / 8.0 * eff,
                method: Method::LinkRate,
            }),
            delivered,
            dispersed,
        );
    }
    let candidates = [
        delivered.map(|r| Capacity {
            rate: r,
            method: Method::DeliveryRate,
        }),
        dispersed.map(|r| Capacity {
            rate: r,
            method: Method::Dispersion,
        }),
        arrivals.and_then(|a| a.capacity()).map(|r| Capacity {
            rate: r,
            method: Method::ArrivalDispersion,
        }),
    ];
    let best = candidates
        .into_iter()
        .flatten()
        .max_by(|a, b| a.rate.total_cmp(&b.rate));
    (best, delivered, dispersed)
}
