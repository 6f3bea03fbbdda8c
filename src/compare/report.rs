//! The result of comparing two captures, as plain data (serde): what `compare --format
//! json` prints and what the text view is rendered from.

use crate::summary::MiddleboxFinding;
use serde::Serialize;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Comparison {
    pub a: CaptureInfo,
    pub b: CaptureInfo,
    /// Estimated offset of B's clock from A's, in ms (B − A), when connections matched:
    /// half the difference of the two directions' minimum delays, so it includes half the
    /// asymmetry of the one-way delays between the points.
    pub clock_offset_ms: Option<f64>,
    pub connections: Vec<ConnComparison>,
    /// At least one connection is proven to be in both captures (evidence two unrelated
    /// captures cannot share); `compare` exits 1 when none is.
    pub in_common: bool,
    /// Candidates with enough evidence that the timing law refused, one sentence each.
    pub rejected: Vec<String>,
    /// Why no connection was proven in common (empty when one was), one sentence each.
    pub notes: Vec<String>,
    /// Connections only one capture has (label "client -> server").
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
    /// One line: how many connections matched and how many show middlebox effects.
    pub summary: String,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CaptureInfo {
    pub path: String,
    pub format: String,
    pub packets: u64,
    pub tcp_segments: u64,
    /// Capture duplicates set aside (the same datagram recorded twice: a mirror port, an
    /// `any` capture), as `analyze` sets them aside.
    pub capture_duplicates: u64,
    pub connections: u64,
    pub warnings: Vec<String>,
}

/// One connection seen in both captures.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ConnComparison {
    pub a: ConnInfo,
    pub b: ConnInfo,
    /// What the match mainly rests on: "4-tuple and ISN", "ISN" (NAT keeping the ISNs),
    /// "sequence numbers" (the same absolute numbers, a handshake missing), "payload"
    /// (NAT and ISN rewriting), "4-tuple and time" (supporting evidence only).
    pub matched_by: String,
    /// "proven" (evidence above the threshold) or "likely" (supporting evidence only:
    /// then no finding is more than "likely").
    pub match_strength: String,
    /// The facts the match rests on and the evidence against the threshold, in words.
    pub match_evidence: String,
    /// Evidence in bits (−log2 of the chance that unrelated connections show it) and the
    /// threshold for the candidates tried (20 + log2 of their number).
    pub evidence_bits: f64,
    pub evidence_needed_bits: f64,
    /// Which capture is nearer the client ("a", "b"), or "unknown", and why.
    pub nearer_client: String,
    pub nearer_client_evidence: String,
    /// The handshake options at both points.
    pub syn: HandshakePair,
    pub syn_ack: HandshakePair,
    /// Everything that differs between the points, in the order of the path.
    pub differences: Vec<Difference>,
    /// The differences that are middlebox effects in the vocabulary of `analyze`
    /// (certain: both sides of the rewrite are in captures proven to hold one connection,
    /// and the order of the points is known).
    pub middlebox: Vec<MiddleboxFinding>,
    pub c2s: DirComparison,
    pub s2c: DirComparison,
    /// Sum of the minimum one-way delays of both directions between the points (ms):
    /// independent of the clocks.
    pub round_trip_between_points_ms: Option<f64>,
    /// B's clock minus A's for this connection (ms): half the difference of the two
    /// directions' minimum delays (exact when the queue-free delays between the points are
    /// symmetric); with the order of the points unknown, the mean of the two directions'
    /// median differences (exact when the points coincide).
    pub clock_offset_ms: Option<f64>,
    /// The base RTT in three parts along the path (when the order of the points is known).
    pub rtt_split: Option<RttSplit>,
    /// "no middlebox effects seen", or how many were.
    pub verdict: String,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ConnInfo {
    pub client: String,
    pub server: String,
    pub client_isn: Option<u32>,
    pub server_isn: Option<u32>,
    pub packets: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct HandshakePair {
    pub a: Option<SynOptionsInfo>,
    pub b: Option<SynOptionsInfo>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SynOptionsInfo {
    pub window: u16,
    pub mss: Option<u16>,
    pub wscale: Option<u8>,
    pub sack_permitted: bool,
    pub timestamps: bool,
    /// Longest run of NOP options (3 or more: an option overwritten with NOPs).
    pub nop_run: Option<usize>,
}

/// One thing a middlebox (or the path) changed between the points.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Difference {
    /// option-removed | option-added | option-rewritten | isn-shifted | address-rewritten |
    /// window-rewritten | timestamps-removed | sack-blocks-removed
    pub kind: String,
    /// syn | syn-ack (options), c2s | s2c (segments), client | server (addresses)
    pub on: String,
    /// wscale | mss | sack-permitted | timestamps (options), else empty
    pub option: String,
    /// The value upstream (nearer the sender of that segment) and downstream.
    pub upstream: String,
    pub downstream: String,
    pub detail: String,
}

#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct DirComparison {
    /// "a->b" or "b->a" (the direction of travel between the points), or "unknown".
    pub travel: String,
    pub segments_a: u64,
    pub segments_b: u64,
    pub data_segments_a: u64,
    pub data_segments_b: u64,
    /// Segments of the fingerprint window found at both points.
    pub matched: u64,
    /// Seen upstream, missing downstream (between the first and last matched segment).
    pub lost: u64,
    /// Seen downstream, not upstream (duplicated or injected on the way).
    pub added: u64,
    /// Lost segments beyond the fingerprint window, estimated from the counts (only when
    /// both captures hold the whole connection, handshake to FIN).
    pub lost_beyond_window: u64,
    pub windows_rewritten: u64,
    /// Minimum and median delay from the upstream to the downstream point (ms), clock
    /// offset included.
    pub delay_min_ms: Option<f64>,
    pub delay_median_ms: Option<f64>,
    /// The one-way delay between the points when the clocks allow (both directions'
    /// minima are positive: the captures share a clock or are synchronised).
    pub one_way_delay_ms: Option<f64>,
}

/// The base (minimum) RTT split at the two capture points: the loop from the point nearer
/// the client through the client, the round trip between the points, the loop from the
/// point nearer the server through the server. Each loop is measured where it starts
/// (`tcp::rtt`: data and its ACK, or a timestamp and its echo), so no clock is needed.
/// A loop through an end includes its response time (a delayed ACK, a sender waiting for
/// its window): the sides are upper bounds of the network delay there, the smaller of what
/// the nearer point measures and what the farther one does less the round trip between.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RttSplit {
    /// "a" or "b": the capture nearer the client.
    pub near_client: String,
    /// Loop point nearer the client -> client -> that point (min, ms; an upper bound).
    pub client_side_ms: Option<f64>,
    /// The round trip between the points (min one-way delays summed, ms).
    pub between_ms: f64,
    /// Loop point nearer the server -> server -> that point (min, ms; an upper bound).
    pub server_side_ms: Option<f64>,
    /// The three parts summed (ms): the path's base RTT, when all three are known.
    pub end_to_end_ms: Option<f64>,
    /// What the point nearer the client measures through the server (min, ms): it spans
    /// the round trip between the points and the server side.
    pub near_client_through_server_ms: Option<f64>,
    /// What the point nearer the server measures through the client (min, ms).
    pub near_server_through_client_ms: Option<f64>,
}
