//! Turns a finished connection's tracker state into the plain-data [`FlowSummary`] fields
//! that do not need the diagnosis: endpoints, handshake, bytes, RTT statistics, counters.

use crate::decode::Seen;
use crate::flow::Dir;
use crate::summary::{Bytes, DirectionSummary, FlowSummary, HandshakeSummary, Limits, RttStats};
use crate::tcp::rtt::{End, RttSource};
use crate::tcp::{ConnState, Connection, SynOptions};
use crate::time::Span;

fn ms(s: Span) -> f64 {
    (s.millis_f64() * 1000.0).round() / 1000.0
}

fn seen_bool<T>(s: Option<SynOptions>, f: impl Fn(&SynOptions) -> Seen<T>) -> Option<bool> {
    match f(&s?) {
        Seen::Present(_) => Some(true),
        Seen::Absent => Some(false),
        Seen::Unknown => None,
    }
}

pub fn handshake(conn: &Connection) -> HandshakeSummary {
    let h = &conn.handshake;
    HandshakeSummary {
        seen: h.seen(),
        client_wscale: h.syn.and_then(|s| s.wscale.present()),
        server_wscale: h.syn_ack.and_then(|s| s.wscale.present()),
        client_mss: h.syn.and_then(|s| s.mss.present()),
        server_mss: h.syn_ack.and_then(|s| s.mss.present()),
        window_scaling: match h.scaling_on() {
            Some(true) => "on",
            Some(false) => "off",
            None => "unknown",
        }
        .to_string(),
        client_sack_permitted: seen_bool(h.syn, |s| s.sack_permitted),
        server_sack_permitted: seen_bool(h.syn_ack, |s| s.sack_permitted),
        client_timestamps: seen_bool(h.syn, |s| s.timestamps),
        server_timestamps: seen_bool(h.syn_ack, |s| s.timestamps),
        syn_retransmissions: h.syn.map_or(0, |s| s.count.saturating_sub(1))
            + h.syn_ack.map_or(0, |s| s.count.saturating_sub(1)),
        inferred: None,
    }
}

pub fn rtt(conn: &Connection) -> RttStats {
    let r = &conn.rtt;
    let (c, s) = (r.through(End::Client), r.through(End::Server));
    let by = |src: RttSource| c.by_source[src as usize] + s.by_source[src as usize];
    let vantage = match (c.min, s.min) {
        (Some(a), Some(b)) => {
            // The capture point is near an end when the loop through it is a small part of
            // the whole (a tenth: one-way serialization plus host processing).
            let total = (a + b).nanos().max(1) as f64;
            if (a.nanos() as f64) < 0.1 * total {
                "client"
            } else if (b.nanos() as f64) < 0.1 * total {
                "server"
            } else {
                "middle"
            }
        }
        _ => "unknown",
    };
    RttStats {
        samples: r.end_to_end.count(),
        min: r.min_end_to_end().map(ms),
        median: r.end_to_end.quantile(0.5).map(ms),
        p95: r.end_to_end.quantile(0.95).map(ms),
        max: r.end_to_end_max.map(ms),
        via_client_min: c.min.map(ms),
        via_server_min: s.min.map(ms),
        handshake_samples: by(RttSource::Handshake),
        data_ack_samples: by(RttSource::DataAck),
        ts_echo_samples: by(RttSource::TsEcho),
        vantage: vantage.to_string(),
    }
}

pub fn direction(conn: &Connection, d: Dir, max_rwnd: Option<u64>, min_rwnd: Option<u64>, zero_windows: u64) -> DirectionSummary {
    let x = conn.dir(d);
    DirectionSummary {
        packets: conn.packets[d.index()],
        data_segments: x.data_segments,
        bytes: x.unique_bytes,
        retransmitted_segments: x.retransmitted_segments,
        retransmitted_bytes: x.retransmitted_bytes,
        duplicate_acks: x.duplicate_acks,
        zero_window_advertisements: zero_windows,
        zero_window_probes: x.zero_window_probes,
        window_full_events: x.window_full_events,
        max_flight_bytes: x.max_flight,
        max_segment_bytes: x.max_segment,
        max_rwnd_bytes: max_rwnd,
        min_rwnd_bytes: min_rwnd,
        first_data_ts: x.first_data.map(|t| t.secs_f64()),
        last_data_ts: x.last_data.map(|t| t.secs_f64()),
    }
}

/// The summary without diagnosis: verdict "undetermined", no limits, no bottleneck.
pub fn base(conn: &Connection, capture: &str, windows: &WindowStats) -> FlowSummary {
    let bulk = bulk_direction(conn);
    let d = conn.dir(bulk);
    let bytes = Bytes { c2s: conn.dir(Dir::C2S).unique_bytes, s2c: conn.dir(Dir::S2C).unique_bytes };
    let goodput = match (d.first_data, d.last_data) {
        (Some(a), Some(b)) if b > a => d.unique_bytes as f64 * 8.0 / (b - a).secs_f64(),
        _ => 0.0,
    };
    FlowSummary {
        id: conn.id,
        capture: capture.to_string(),
        client: conn.client.to_string(),
        server: conn.server.to_string(),
        client_from: if conn.client_by_syn { "syn" } else { "port" }.to_string(),
        start_ts: conn.first_ts.secs_f64(),
        end_ts: conn.last_ts.secs_f64(),
        duration_s: (conn.last_ts - conn.first_ts).secs_f64(),
        packets: conn.packets.iter().sum(),
        handshake: handshake(conn),
        bulk_direction: bulk.as_str().to_string(),
        bytes,
        goodput_bps: goodput,
        rtt_ms: rtt(conn),
        max_flight_bytes: d.max_flight,
        max_rwnd_bytes: windows.max[bulk.index()],
        retransmitted_segments: d.retransmitted_segments,
        bottleneck_bps: None,
        bottleneck_method: None,
        bdp_bytes: None,
        limits: None::<Limits>,
        verdict: "undetermined".to_string(),
        periods: Vec::new(),
        evidence: Vec::new(),
        middlebox: Vec::new(),
        advice: Vec::new(),
        notes: Vec::new(),
        end_state: match conn.state {
            ConnState::Closed(_) if conn.rst_seen => "reset",
            ConnState::Closed(_) => "closed",
            ConnState::Open => "open",
        }
        .to_string(),
        c2s: direction(conn, Dir::C2S, windows.max[0], windows.min[0], windows.zero[0]),
        s2c: direction(conn, Dir::S2C, windows.max[1], windows.min[1], windows.zero[1]),
    }
}

/// The direction that carried more payload (c2s on a tie).
pub fn bulk_direction(conn: &Connection) -> Dir {
    if conn.dir(Dir::S2C).unique_bytes > conn.dir(Dir::C2S).unique_bytes {
        Dir::S2C
    } else {
        Dir::C2S
    }
}

/// Extremes of the windows granted to each direction's sender (indexed by data
/// direction), gathered per segment by the diagnosis accumulator.
#[derive(Clone, Copy, Debug, Default)]
pub struct WindowStats {
    pub max: [Option<u64>; 2],
    pub min: [Option<u64>; 2],
    pub zero: [u64; 2],
}

impl WindowStats {
    /// A segment going `dir` advertised `bytes` for the other direction's data.
    pub fn on_advert(&mut self, dir: Dir, bytes: Option<u64>, zero: bool) {
        let i = dir.reverse().index();
        if let Some(b) = bytes {
            self.max[i] = Some(self.max[i].map_or(b, |m| m.max(b)));
            self.min[i] = Some(self.min[i].map_or(b, |m| m.min(b)));
        }
        if zero {
            self.zero[i] += 1;
        }
    }
}
