//! Middlebox forensics from one capture: options stripped or rewritten on the handshake
//! (window scale, MSS, SACK-permitted, timestamps) and window scaling broken between the
//! ends (one end scales, the other does not).
//!
//! `Evidence` is collected per segment while the flow is live, in constant memory;
//! `findings` judges it when the flow ends. Every rule is one file under `rules/` with
//! its RFC, its thresholds and its test; `rules::ALL` lists them.
//!
//! What one capture can and cannot show (a stack never answers an option it did not
//! receive, RFC 7323 §2.2 / §3.2, RFC 2018 §2):
//! - an option removed from the SYN *before* the capture point looks like a client that
//!   never offered it; removed *after* it, like a server that does not support it. Both
//!   SYN-only and both-way stripping look the same on the wire: the server never sees the
//!   option, so its SYN/ACK never carries it.
//! - an option removed from the SYN/ACK shows in behaviour: the server believes it was
//!   negotiated (it scales its windows, sends timestamps or SACK blocks) while the client
//!   does not.
//! - `bdpscope compare` (two captures of one path) shows every rewrite directly.
//!
//! What one capture shows in the lab's scenarios (../shared/lab; `compare` finds all of
//! them, certain, with the right segment):
//!
//! | rewrite                   | capture at the client                 | capture at the server                    |
//! |---------------------------|---------------------------------------|------------------------------------------|
//! | WS stripped, SYN or both  | wscale-stripped syn, likely (MB101)   | wscale-stripped syn, possible (MB101)    |
//! | WS stripped, SYN/ACK      | wscale-stripped + mismatch syn-ack, certain (MB101, MB103, MB104) | mismatch syn-ack: possible (download, MB102: a SYN window of 65535 is the field's cap), likely (upload, MB102 + MB105) |
//! | WS value rewritten        | mismatch, possible (MB103), when the window shows it | mismatch, likely (MB105), when the sender is window-limited |
//! | MSS clamped both ways     | mss-clamped syn-ack, possible (MB201) | mss-clamped syn, possible (MB201)        |
//! | MSS clamped on the SYN    | possible (MB203, download)            | likely (MB202, upload) / possible (MB201) |
//! | TS stripped, SYN or both  | timestamps-stripped syn, possible (MB301) | nothing: a SYN without timestamps is Windows' default; the NOP run left in its place would prove it, but the decoder does not expose option layouts yet |
//! | TS stripped, SYN/ACK      | certain (MB301: the server echoes)    | likely (MB302: the client never echoes)  |
//! | SACK-perm stripped, SYN or both | sack-stripped syn, possible (MB401) | possible (MB401)                   |
//! | SACK-perm stripped, SYN/ACK | certain (MB401, upload: the server SACKs) / possible (download) | likely (MB402, download: dup ACKs without SACK) / nothing (upload) |

mod evidence;
pub mod layout;
pub mod rules;
#[cfg(test)]
pub(crate) mod testutil;

pub use evidence::{EndEvidence, Evidence};

use crate::flow::Dir;
use crate::summary::MiddleboxFinding;
use crate::tcp::Connection;

/// How sure a finding is (`Possible < Likely < Certain`), which handshake segment lost or
/// had an option rewritten, and the kinds of the interface contract (`middlebox[].kind`):
/// the summary's vocabularies.
pub use crate::summary::{Confidence, HsSegment, MiddleboxKind as Kind};

/// One rule's conclusion, before findings of the same kind and segment are merged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// Only a hint even if its confidence says more: the same evidence has innocent
    /// explanations common on real networks (reported in the notes, not as a finding).
    pub hint: bool,
    pub kind: Kind,
    pub segment: HsSegment,
    pub confidence: Confidence,
    pub evidence: String,
}

/// The two ends, by the direction they send in (client = c2s, server = s2c).
pub(crate) fn end_name(d: Dir) -> &'static str {
    match d {
        Dir::C2S => "client",
        Dir::S2C => "server",
    }
}

/// The handshake segment name as a user reads it.
pub(crate) fn segment_name(d: Dir) -> &'static str {
    match d {
        Dir::C2S => "SYN",
        Dir::S2C => "SYN/ACK",
    }
}

/// What the handshake and the behaviour of one flow say about middleboxes on its path.
///
/// Returns the findings, at every confidence, and the hints (a rule's `hint`: written to
/// the flow's notes only). A *possible* finding stays a finding, with its confidence, in
/// every view: the interface's `middlebox[].confidence` names "possible" so that a script
/// can tell it from proof, and the text and JSON views say the same thing. Its evidence
/// names the innocent reading the same handshake has (Windows servers omit timestamps,
/// VPNs and PPPoE lower the MSS).
pub fn findings(conn: &Connection, evidence: &Evidence) -> (Vec<MiddleboxFinding>, Vec<String>) {
    let (hints, findings): (Vec<Found>, Vec<Found>) = run_rules(conn, evidence).into_iter().partition(|f| f.hint);
    let hints = merge(hints)
        .into_iter()
        .map(|h| {
            format!(
                "possible middlebox effect ({} on the {}): {}",
                h.kind, h.direction, h.evidence
            )
        })
        .collect();
    (merge(findings), hints)
}

/// What every rule found, at every confidence.
fn run_rules(conn: &Connection, evidence: &Evidence) -> Vec<Found> {
    let mut found: Vec<Found> = Vec::new();
    for rule in rules::ALL {
        (rule.check)(conn, evidence, &mut found);
    }
    found
}

/// Every rule's findings merged, hints included (for the rules' own tests).
#[cfg(test)]
pub(crate) fn all_findings(conn: &Connection, evidence: &Evidence) -> Vec<MiddleboxFinding> {
    merge(run_rules(conn, evidence))
}

/// One finding per (kind, segment): the strongest confidence, the evidence of every rule
/// that reached it (strongest first).
fn merge(mut found: Vec<Found>) -> Vec<MiddleboxFinding> {
    found.sort_by_key(|f| std::cmp::Reverse(f.confidence));
    let mut out: Vec<(Found, Vec<String>)> = Vec::new();
    for f in found {
        match out.iter_mut().find(|(g, _)| g.kind == f.kind && g.segment == f.segment) {
            Some((_, texts)) => {
                if !texts.contains(&f.evidence) {
                    texts.push(f.evidence)
                }
            }
            None => {
                let text = f.evidence.clone();
                out.push((f, vec![text]));
            }
        }
    }
    out.into_iter()
        .map(|(f, texts)| MiddleboxFinding {
            kind: f.kind,
            direction: f.segment,
            confidence: f.confidence,
            evidence: texts.join(". Also: "),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_of_one_kind_and_segment_merge_at_the_strongest_confidence() {
        let f = |c, e: &str| Found {
            hint: false,
            kind: Kind::WscaleStripped,
            segment: HsSegment::Syn,
            confidence: c,
            evidence: e.into(),
        };
        let out = merge(vec![
            f(Confidence::Possible, "weak"),
            f(Confidence::Certain, "strong"),
            Found {
                hint: false,
                kind: Kind::WscaleMismatch,
                ..f(Confidence::Likely, "other")
            },
        ]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].confidence, Confidence::Certain);
        assert_eq!(out[0].evidence, "strong. Also: weak");
        assert_eq!(out[1].kind, Kind::WscaleMismatch);
    }

    #[test]
    fn confidence_is_ordered() {
        assert!(Confidence::Possible < Confidence::Likely && Confidence::Likely < Confidence::Certain);
    }

    /// A possible finding other than window scaling is a finding of the JSON and text
    /// views alike (with its confidence), not a note only the text shows.
    #[test]
    fn a_possible_finding_is_reported_as_a_finding() {
        use super::testutil::{Flow, Opts};
        let mut f = Flow::new();
        f.syn(Opts::LINUX, 65535).at_ms(1.0).syn_ack(Opts::LINUX.no_ts(), 65160);
        let (found, hints) = findings(&f.conn, &f.ev);
        assert!(hints.is_empty(), "{hints:?}");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            (found[0].kind, found[0].confidence),
            (Kind::TimestampsStripped, Confidence::Possible)
        );
    }
}
