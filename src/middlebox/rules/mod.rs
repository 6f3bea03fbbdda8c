//! The rules, one per file (ruff style): each has a name, the RFC text it relies on,
//! its thresholds with their rationale, and a test with hand-built packets.
//!
//! | code  | rule                        | kind                | from                          |
//! |-------|-----------------------------|---------------------|-------------------------------|
//! | MB101 | `wscale_stripped`           | wscale-stripped     | handshake (+ server windows)  |
//! | MB102 | `wscale_unscaled_end`       | wscale-mismatch     | an end's first window         |
//! | MB103 | `wscale_window_retreat`     | wscale-mismatch     | an end's first windows        |
//! | MB104 | `wscale_sender_over_window` | wscale-mismatch     | data vs. the peer's windows   |
//! | MB105 | `wscale_sender_unscaled`    | wscale-mismatch     | data vs. the peer's windows   |
//! | MB201 | `mss_asymmetric`            | mss-clamped         | handshake                     |
//! | MB202 | `mss_above_announced`       | mss-clamped         | data sizes vs. own MSS        |
//! | MB203 | `mss_below_announced`       | mss-clamped         | data sizes vs. both MSS       |
//! | MB301 | `timestamps_stripped`       | timestamps-stripped | handshake (+ server echoes)   |
//! | MB302 | `timestamps_unused`         | timestamps-stripped | an end that never echoes      |
//! | MB303 | `timestamps_overwritten`    | timestamps-stripped | a handshake segment's NOPs    |
//! | MB401 | `sack_stripped`             | sack-stripped       | handshake (+ server SACKs)    |
//! | MB402 | `sack_unused`               | sack-stripped       | duplicate ACKs without SACK   |

mod mss_above_announced;
mod mss_asymmetric;
mod mss_below_announced;
mod sack_stripped;
mod sack_unused;
mod timestamps_overwritten;
mod timestamps_stripped;
mod timestamps_unused;
mod wscale_overwritten;
mod wscale_sender_over_window;
mod wscale_sender_unscaled;
mod wscale_stripped;
mod wscale_unscaled_end;
mod wscale_window_retreat;

use super::evidence::{Advert, EndEvidence};
use super::{Evidence, Found};
use crate::decode::Seen;
use crate::flow::Dir;
use crate::summary::HsSegment;
use crate::tcp::{Connection, SynOptions};

pub struct Rule {
    pub code: &'static str,
    pub name: &'static str,
    pub check: fn(&Connection, &Evidence, &mut Vec<Found>),
}

pub const ALL: &[Rule] = &[
    Rule {
        code: "MB101",
        name: "wscale_stripped",
        check: wscale_stripped::check,
    },
    Rule {
        code: "MB102",
        name: "wscale_unscaled_end",
        check: wscale_unscaled_end::check,
    },
    Rule {
        code: "MB103",
        name: "wscale_window_retreat",
        check: wscale_window_retreat::check,
    },
    Rule {
        code: "MB104",
        name: "wscale_sender_over_window",
        check: wscale_sender_over_window::check,
    },
    Rule {
        code: "MB105",
        name: "wscale_sender_unscaled",
        check: wscale_sender_unscaled::check,
    },
    Rule {
        code: "MB106",
        name: "wscale_overwritten",
        check: wscale_overwritten::check,
    },
    Rule {
        code: "MB201",
        name: "mss_asymmetric",
        check: mss_asymmetric::check,
    },
    Rule {
        code: "MB202",
        name: "mss_above_announced",
        check: mss_above_announced::check,
    },
    Rule {
        code: "MB203",
        name: "mss_below_announced",
        check: mss_below_announced::check,
    },
    Rule {
        code: "MB301",
        name: "timestamps_stripped",
        check: timestamps_stripped::check,
    },
    Rule {
        code: "MB302",
        name: "timestamps_unused",
        check: timestamps_unused::check,
    },
    Rule {
        code: "MB303",
        name: "timestamps_overwritten",
        check: timestamps_overwritten::check,
    },
    Rule {
        code: "MB401",
        name: "sack_stripped",
        check: sack_stripped::check,
    },
    Rule {
        code: "MB402",
        name: "sack_unused",
        check: sack_unused::check,
    },
];

/// Both handshake segments, when the capture has them.
pub fn handshake(conn: &Connection) -> Option<(SynOptions, SynOptions)> {
    Some((conn.handshake.syn?, conn.handshake.syn_ack?))
}

/// Each handshake segment the capture has (a SYN alone counts): the direction its end
/// sends in, which segment it is, its options.
pub(crate) fn handshake_segments(conn: &Connection) -> impl Iterator<Item = (Dir, HsSegment, SynOptions)> {
    let syn = conn.handshake.syn.map(|o| (Dir::C2S, HsSegment::Syn, o));
    let syn_ack = conn.handshake.syn_ack.map(|o| (Dir::S2C, HsSegment::SynAck, o));
    syn.into_iter().chain(syn_ack)
}

/// The evidence of an option a middlebox overwrote with NOPs (MB106, MB303): `option`
/// names it, `size` gives its length and where it is defined, `or` another option the run
/// may have been (or ""), `then` what its loss did.
pub(crate) fn overwritten_sentence(
    d: Dir,
    segment: HsSegment,
    run: u8,
    option: &str,
    size: &str,
    or: &str,
    then: &str,
) -> String {
    let (who, peer) = (super::end_name(d), super::end_name(d.reverse()));
    format!(
        "the {who}'s {} reached the capture point with a run of {run} NOPs and no {option} option: stacks put at most \
         two NOPs together, to align an option (RFC 9293 §3.2), and the {option} option is {size}; a middlebox between \
         the {who} and the capture point overwrote it{or}, so the {peer} never received it{then}",
        segment_name(segment)
    )
}

/// The segment as a sentence names it.
pub(crate) fn segment_name(s: HsSegment) -> &'static str {
    match s {
        HsSegment::Syn => "SYN",
        HsSegment::SynAck => "SYN/ACK",
        HsSegment::Both => "SYN and SYN/ACK",
    }
}

/// An option's presence: Some(true/false), None when the snaplen cut the option area.
pub(crate) fn has<T>(s: Seen<T>) -> Option<bool> {
    match s {
        Seen::Present(_) => Some(true),
        Seen::Absent => Some(false),
        Seen::Unknown => None,
    }
}

/// The handshake options of the end sending in direction `d`.
pub(crate) fn syn_of(conn: &Connection, d: Dir) -> Option<SynOptions> {
    match d {
        Dir::C2S => conn.handshake.syn,
        Dir::S2C => conn.handshake.syn_ack,
    }
}

/// How far an end's first windows, read with shift `k`, pull the right edge of the
/// window back from where its SYN (or SYN/ACK) put it.
///
/// RFC 9293 §3.8.6: a receiver "SHOULD NOT shrink the window, i.e., move the right
/// window edge to the left"; Linux never does (tcp_select_window keeps the offered edge).
/// So when the first windows, read with the shift the capture believes in, fall far
/// behind the SYN's edge, the end applies a larger shift than the capture saw.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Retreat {
    /// The SYN's window (unscaled).
    pub syn_window: u16,
    /// The advertisement that pulled the edge back furthest, and by how many bytes.
    pub worst: Advert,
    pub back: u64,
    /// The smallest shift under which none of the first windows pulls the edge back by
    /// more than an eighth of the SYN window.
    pub min_shift: u8,
}

/// SYN windows below this are too small to judge (tiny embedded stacks, tests).
pub(crate) const MIN_SYN_WINDOW: u64 = 4096;

pub(crate) fn retreat(e: &EndEvidence, k: u8) -> Option<Retreat> {
    let w0 = e.syn_window? as u64;
    if w0 < MIN_SYN_WINDOW {
        return None;
    }
    let syn_edge = 1 + w0;
    let edge = |a: &Advert, s: u8| a.ack as u64 + ((a.raw as u64) << s);
    // A zero window is flow control, not a shift; ACKs far from the start are not
    // "first" windows of this connection (a capture joined late).
    let usable: Vec<Advert> = e
        .adverts()
        .iter()
        .copied()
        .filter(|a| a.raw > 0 && (a.ack as u64) < syn_edge)
        .collect();
    let worst = usable
        .iter()
        .copied()
        .max_by_key(|a| syn_edge.saturating_sub(edge(a, k)))?;
    let back = syn_edge.saturating_sub(edge(&worst, k));
    // A quarter of the SYN window (at least 4 KB): far beyond rounding to the scale
    // granularity or a receiver trimming a few bytes off an odd SYN window.
    if back < (w0 / 4).max(4096) {
        return None;
    }
    let slack = w0 / 8;
    let min_shift = (k + 1..=14).find(|&s| usable.iter().all(|a| edge(a, s) + slack >= syn_edge))?;
    Some(Retreat {
        syn_window: w0 as u16,
        worst,
        back,
        min_shift,
    })
}

/// The end's first window after its SYN (or SYN/ACK) is, raw, its SYN window (within an
/// eighth): the end did not apply any shift to it.
pub(crate) fn first_window_unscaled(e: &EndEvidence) -> Option<(u16, u16)> {
    let w0 = e.syn_window?;
    let first = e.adverts().first()?;
    let close = (first.raw as u64) * 8 >= (w0 as u64) * 7 && first.raw <= w0;
    (w0 as u64 >= MIN_SYN_WINDOW && close).then_some((w0, first.raw))
}
