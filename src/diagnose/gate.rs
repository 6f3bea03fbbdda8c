//! The gate: whether a flow carried enough to be judged at all (the first step of
//! gate -> facts -> classify -> explain). A flow that does not pass is "undetermined", with
//! the reason in its notes — its stalls and counters are still reported.

use crate::flow::Dir;
use crate::tcp::rtt::End;
use crate::tcp::Connection;
use crate::time::Span;

/// Minimum bulk payload to judge a flow: twenty data segments. Fewer is a request and a
/// response: no window, queue or capacity shows in it. Their size is no part of it: a
/// sender of small segments over twenty of them and four round trips shows how it spent
/// its time as well as one of full segments (waiting on its application, on Nagle's rule
/// meeting a delayed ACK, on the window), though no capacity shows in what it sent.
pub const MIN_SEGMENTS: u64 = 20;
/// Minimum transfer length to judge a flow, in base RTTs: slow start alone takes a few.
pub const MIN_ROUNDS: f64 = 4.0;

/// Why a flow cannot be judged, as the note says it.
pub fn why_not(conn: &Connection, bulk: Dir, base_rtt: Option<Span>, state_ns: Option<u64>) -> Option<String> {
    let d = conn.dir(bulk);
    // What a judgement needs, in the order it needs it: payload, then enough of it, then
    // an RTT to measure it against (a flow without payload is undetermined for that
    // reason first, whatever its RTT samples).
    let Some(busy) = state_ns else {
        return Some("no payload in either direction".to_string());
    };
    if d.data_segments < MIN_SEGMENTS {
        return Some(format!(
            "too little data to judge: {} data segments in the capture, {} bytes of sequence space sent (fewer than {MIN_SEGMENTS} segments)",
            d.data_segments, d.unique_bytes
        ));
    }
    let Some(rtt) = base_rtt else {
        // The path is both loops: one alone bounds the RTT from below, and at a capture
        // beside its end it is that host's own turnaround (see `RttTracker::min_end_to_end`).
        if let Some((end, min)) = conn.rtt.lone_loop() {
            let (this, other) = match end {
                End::Client => ("client", "server"),
                End::Server => ("server", "client"),
            };
            return Some(format!(
                "no end-to-end RTT: only the loop through the {this} was measured (min {}, a lower bound on the RTT); the loop through the {other} had no sample (no handshake sample, no timestamp echo, no data/ACK pair through it)",
                crate::units::ms(min.secs_f64())
            ));
        }
        if let Some(bound) = conn.rtt.unresolved_bound() {
            return Some(format!(
                "no RTT the timestamps resolve: most samples through each end were shorter than ten ticks of this capture's {} clock, so the round trip is under {} (a delay is measured from ten ticks up, an error of at most 10%)",
                crate::units::ms(conn.rtt.quantum.get().secs_f64()),
                crate::units::ms(bound.secs_f64())
            ));
        }
        return Some("no RTT sample (no handshake, no data/ACK pair, no timestamp echo)".to_string());
    };
    let busy = Span(busy as i64);
    (busy.secs_f64() < MIN_ROUNDS * rtt.secs_f64()).then(|| {
        format!(
            "transfer too short to judge: {}, {} round trips",
            crate::units::secs(busy.secs_f64()),
            crate::units::sig3(busy.secs_f64() / rtt.secs_f64().max(1e-9))
        )
    })
}
