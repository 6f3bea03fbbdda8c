//! Output formats: the analysis never formats; these modules do.

pub mod charts;
pub mod html;
pub mod json;
pub mod offload;
pub mod packets;
pub mod page;
pub mod table;
pub mod text;

use bdpscope::endpoint::Dir;
use bdpscope::summary::{DirectionSummary, EcnMode, FlowSummary, GoodputBasis};
use bdpscope::units::{bits, bytes, millis, secs};

/// Whether a flow is worth a reader's attention without `--all`: it was judged, or it
/// stalled or failed (a window that closed and never reopened, a reset, a SYN sent again
/// is the whole post-mortem of a short flow), or sent a segment again (chrissanders
/// tcp_dupack: three duplicate ACKs and the fast retransmit they called for, in nine
/// packets, were hidden as "too short to judge"). The text view shows these flows' blocks;
/// the report gives each a section, so the two never disagree on what a flow came to.
pub fn shown_by_default(f: &FlowSummary) -> bool {
    f.verdict.is_judged() || !f.stalls.is_empty() || f.c2s.retransmitted_segments + f.s2c.retransmitted_segments > 0
}

/// "1 sample", "2 samples": the count of end-to-end RTT samples as the views say it.
pub fn samples(n: u64) -> String {
    match n {
        1 => "1 sample".to_string(),
        n => format!("{n} samples"),
    }
}

/// The RTT as every view says it when only one of the two loops (capture point to an end
/// and back) was measured: no end-to-end figure exists (`rtt_ms.min` is None), but that
/// loop's minimum bounds the RTT from below, and a dash would hide it. None otherwise.
pub fn rtt_lower_bound(f: &FlowSummary) -> Option<String> {
    let r = &f.rtt_ms;
    let (end, m) = match (r.min, r.via_client_min, r.via_server_min) {
        (None, Some(c), None) => ("client", c),
        (None, None, Some(s)) => ("server", s),
        _ => return None,
    };
    Some(format!(
        "end to end unknown: only the loop through the {end} was measured, min {} (a lower bound on the RTT)",
        millis(m)
    ))
}

/// A flow's largest flight as every view says it: the sender's, with the capture point's
/// beside it when the two print differently (a capture next to the receiver sees little
/// in flight while the sender had a window's worth). The evidence states the sender's
/// figure, so a view that printed only the capture point's would contradict it.
/// Where a loss left data above a hole outstanding (SACKed, held at the receiver), the most
/// the path carried (RFC 6675 pipe) follows: the figure the BDP and Little's law bound —
/// the sender's, and the capture point's beside its own figure where that differs (a
/// recovery seen here whose flight stayed below the sender's largest: NNTP's 30.7 KiB seen
/// here during 22 duplicate ACKs, 13.4 KiB of it in the network, beside 41.4 KiB at the
/// sender without a loss).
///
/// Where the capture lacks the bulk data's acknowledgments there is no flight to state:
/// data sent less the ACKs seen grows with every segment while ACKs are missing; the
/// figure says so instead, and for how long the capture lacks them.
pub fn max_flight(f: &FlowSummary) -> String {
    let rest = bdpscope::summary::flight_rest(f.sack_permitted());
    let Some(seen) = f.max_flight_bytes else {
        return flight_not_followed(f);
    };
    let outstanding = f.sender_max_flight_bytes.unwrap_or(seen);
    let differs = |n: u64, of: u64| (n > 0 && bytes(n as f64) != bytes(of as f64)).then_some(n);
    let here = f
        .dir(f.bulk_direction)
        .max_in_network_bytes
        .and_then(|n| differs(n, seen));
    let sender = f.sender_max_in_network_bytes.and_then(|n| differs(n, outstanding));
    match f.sender_max_flight_bytes {
        Some(s) if bytes(s as f64) != bytes(seen as f64) => {
            let seen_here = match here {
                Some(n) => format!(
                    "{} seen here, {} of it in the network",
                    bytes(seen as f64),
                    bytes(n as f64)
                ),
                None => format!("{} seen here", bytes(seen as f64)),
            };
            match (sender, here) {
                // The sender's part in the network beside its own figure, the capture
                // point's inside the parenthesis beside its own: two "of it" read apart
                // (R38 late_capture read "361 KiB at the sender (219 KiB seen here, 11.3
                // KiB of it in the network), of it in the network 222 KiB").
                (Some(n), _) => format!(
                    "{} at the sender, of it in the network {} ({seen_here}; {rest})",
                    bytes(s as f64),
                    bytes(n as f64)
                ),
                (None, Some(_)) => format!("{} at the sender ({seen_here}: {rest})", bytes(s as f64)),
                (None, None) => format!("{} at the sender ({seen_here})", bytes(s as f64)),
            }
        }
        _ => match sender.or(here) {
            Some(n) => format!(
                "{}, of it in the network {} ({rest})",
                bytes(seen as f64),
                bytes(n as f64)
            ),
            None => bytes(seen as f64),
        },
    }
}

/// Why a flow has no largest flight: the capture lacks its receiver's acknowledgments (for
/// how long), as every view says it.
pub fn flight_not_followed(f: &FlowSummary) -> String {
    let receiver = match f.bulk_direction {
        Dir::C2S => "server",
        Dir::S2C => "client",
    };
    match &f.dir(f.bulk_direction).acks_lacking {
        Some(l) => format!(
            "not followed (the capture lacks the {receiver}'s acknowledgments for {})",
            secs(l.seconds)
        ),
        None => "unknown".to_string(),
    }
}

/// A flow's goodput as every view says it: the rate, or why there is none. The analysis
/// leaves it 0 for data that came in one flight (at one instant, or within the one loop
/// the capture times) where no round trip is timed to rate it over
/// (`bdpscope::summarize::goodput`): not a zero rate, no rate at all.
pub fn goodput(f: &FlowSummary) -> String {
    let bulk = f.dir(f.bulk_direction);
    if f.nothing_delivered {
        return "none, no byte acknowledged in the capture".to_string();
    }
    if f.goodput_bps > 0.0 || bulk.bytes == 0 {
        return format!("{}{}", bits(f.goodput_bps), goodput_over(f));
    }
    if bulk.first_data_ts == bulk.last_data_ts {
        "not measured, its data came at one instant".to_string()
    } else {
        "not measured, its data came in one flight and no round trip is timed".to_string()
    }
}

/// The time a goodput is over, where it is not the connection's (a rate beside "in 5.62 s"
/// reads as over it): " over its 180 ms of data", " over 217 ms of delivery" (first data
/// to the last ACK, dated back by the loop to the receiver), " over one round trip (30.0
/// ms)". The figure is the one the rate was divided by.
fn goodput_over(f: &FlowSummary) -> String {
    let Some(o) = f.goodput_over else { return String::new() };
    if o.seconds >= 0.9 * f.duration_s {
        return String::new();
    }
    match o.basis {
        GoodputBasis::Data => format!(" over its {} of data", secs(o.seconds)),
        GoodputBasis::Delivery => format!(" over {} of delivery", secs(o.seconds)),
        GoodputBasis::RoundTrip => format!(" over one round trip ({})", secs(o.seconds)),
    }
}

/// How the bottleneck rate was found, as every view says it: the method, and on a link
/// shared with traffic the capture does not show what it left this flow ("arrival-dispersion;
/// shared, 31.8 Mbit/s left to this flow").
pub fn bottleneck_how(f: &FlowSummary) -> String {
    let method = f.bottleneck_method.map_or("?", |m| m.as_str());
    match f.capacity.as_ref().and_then(|c| c.available_bps) {
        Some(a) => format!("{method}; shared, {} left to this flow", bits(a)),
        None => method.to_string(),
    }
}

/// A flow's ECN as the capture point saw it, per direction that showed any ("c2s: 1 ECT(0);
/// s2c: 116 ECT(0), 52 CE from frame 48 (+6.82 s) to +94.0 s, ..."), or None.
pub fn ecn_counts(f: &FlowSummary) -> Option<String> {
    let parts: Vec<String> = [Dir::C2S, Dir::S2C]
        .into_iter()
        .filter_map(|d| direction_ecn(f.dir(d), f.start_ts, f.handshake.ecn).map(|c| format!("{d}: {c}")))
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// One direction's ECN as the capture point saw it (times from the flow's start), or None
/// when it showed none: "116 ECT(0), 52 CE from frame 48 (+6.82 s) to +94.0 s, 131 ACKs
/// with ECE, 46 CWR from +6.82 s to +85.1 s". Under AccECN, ECE and CWR are bits of the
/// ACE counter (RFC 9768 §3.2.2), which is not decoded: they are not counted as signals.
fn direction_ecn(d: &DirectionSummary, start: f64, mode: EcnMode) -> Option<String> {
    let at = |t: f64| format!("+{}", secs((t - start).max(0.0)));
    let mut parts = Vec::new();
    for (n, word) in [(d.ect0_segments, "ECT(0)"), (d.ect1_segments, "ECT(1)")] {
        if n > 0 {
            parts.push(format!("{n} {word}"));
        }
    }
    if d.ce_segments > 0 {
        let first = match (d.first_ce_frame, d.first_ce_ts) {
            (Some(n), Some(t)) => format!(" from frame {n} ({})", at(t)),
            _ => String::new(),
        };
        let last = d.last_ce_ts.map_or(String::new(), |t| format!(" to {}", at(t)));
        parts.push(format!("{} CE{first}{last}", d.ce_segments));
    }
    if mode == EcnMode::AccEcn {
        if d.ece_acks + d.cwr_segments > 0 {
            parts.push("ECE/CWR are AccECN's ACE counter (not decoded)".into());
        }
    } else {
        if d.ece_acks > 0 {
            parts.push(format!("{} ACKs with ECE", d.ece_acks));
        }
        if d.cwr_segments > 0 {
            let span = match (d.first_cwr_ts, d.last_cwr_ts) {
                (Some(a), Some(b)) => format!(" from {} to {}", at(a), at(b)),
                _ => String::new(),
            };
            parts.push(format!("{} CWR{span}", d.cwr_segments));
        }
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first flow of a fixture, its flight figures set.
    fn flow(seen: u64, here_in_network: u64, sender: Option<(u64, u64)>) -> FlowSummary {
        let file = std::fs::File::open("fixtures/loss_cubic/server.pcap.gz").unwrap();
        let mut reader = bdpscope::capture::CaptureReader::new(Box::new(file)).unwrap();
        let (_, flows, _) =
            bdpscope::analysis::analyze_reader(&mut reader, Default::default(), bdpscope::observe::NoObserver);
        let mut f = flows.into_iter().next().expect("a flow");
        f.max_flight_bytes = Some(seen);
        let bulk = f.bulk_direction;
        match bulk {
            Dir::C2S => f.c2s.max_in_network_bytes = Some(here_in_network),
            Dir::S2C => f.s2c.max_in_network_bytes = Some(here_in_network),
        }
        f.sender_max_flight_bytes = sender.map(|s| s.0);
        f.sender_max_in_network_bytes = sender.map(|s| s.1);
        f
    }

    #[test]
    fn a_flight_part_sacked_is_said_wherever_its_figure_is() {
        // NNTP flow 1: the sender's largest flight came without a loss, the capture point's
        // (30.7 KiB) during a recovery with 13.4 KiB of it in the network.
        assert_eq!(
            max_flight(&flow(31_464, 13_680, Some((42_408, 42_408)))),
            "41.4 KiB at the sender (30.7 KiB seen here, 13.4 KiB of it in the network: the rest SACKed or presumed lost)"
        );
        // Both figures with a part out of the network.
        assert_eq!(
            max_flight(&flow(674_816, 50_000, Some((683_008, 60_826)))),
            "667 KiB at the sender, of it in the network 59.4 KiB (659 KiB seen here, 48.8 KiB of it in the network; the rest SACKed or presumed lost)"
        );
        // One figure: the sender's part, else the capture point's.
        assert_eq!(
            max_flight(&flow(955_392, 49_254, Some((955_392, 60_826)))),
            "933 KiB, of it in the network 59.4 KiB (the rest SACKed or presumed lost)"
        );
        assert_eq!(
            max_flight(&flow(955_392, 49_254, None)),
            "933 KiB, of it in the network 48.1 KiB (the rest SACKed or presumed lost)"
        );
        // All of it in the network: the figures alone.
        assert_eq!(
            max_flight(&flow(31_464, 31_464, Some((42_408, 42_408)))),
            "41.4 KiB at the sender (30.7 KiB seen here)"
        );
        assert_eq!(max_flight(&flow(31_464, 31_464, None)), "30.7 KiB");
    }

    #[test]
    fn the_part_not_in_the_network_is_named_by_what_reported_it() {
        // Without SACK the receiver reports data above a hole by duplicate ACKs only.
        let mut f = flow(955_392, 49_254, None);
        f.handshake.server_sack_permitted = Some(false);
        assert_eq!(
            max_flight(&f),
            "933 KiB, of it in the network 48.1 KiB (the rest reported by duplicate ACKs (no SACK) or presumed lost)"
        );
        // Without the handshake it is not known which.
        f.handshake.client_sack_permitted = None;
        f.handshake.server_sack_permitted = None;
        assert_eq!(
            max_flight(&f),
            "933 KiB, of it in the network 48.1 KiB (the rest reported received (SACK or duplicate ACKs) or presumed lost)"
        );
    }
}
