//! Output formats: the analysis never formats; these modules do.

pub mod charts;
pub mod html;
pub mod json;
pub mod offload;
pub mod packets;
pub mod page;
pub mod table;
pub mod text;

use bdpscope::summary::FlowSummary;
use bdpscope::units::bytes;

/// A flow's largest flight as every view says it: the sender's when it had clearly more
/// in flight than the capture point saw (a capture next to the receiver sees little in
/// flight while the sender had a window's worth), else the capture point's.
pub fn max_flight(f: &FlowSummary) -> String {
    match f.sender_max_flight_bytes {
        Some(s) if s > f.max_flight_bytes + f.max_flight_bytes / 4 => {
            format!("{} at the sender ({} seen here)", bytes(s as f64), bytes(f.max_flight_bytes as f64))
        }
        _ => bytes(f.max_flight_bytes as f64),
    }
}
