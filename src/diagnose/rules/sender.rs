//! # sender-limited
//!
//! ## What it detects
//! The sender had less in flight than either window because it had nothing to send:
//! (a) idle time — everything sent was acknowledged and nothing new came for a while
//! (application pauses); (b) a flight plateau — for many rounds in a row the flight stays
//! flat, below the receiver's window and below capacity, with no loss. A congestion window
//! that is the limit keeps growing without loss (Reno by 1 MSS per round; CUBIC at least
//! as fast as Reno's friendly estimate), so a flat flight means the sender's buffer or
//! the application fed it no faster.
//!
//! A buffer holds the rate down only while it holds less than the path: the window that
//! fills the path is the BDP (RFC 6349 §3.3.1), and a flight of at least the BDP with a
//! queue holding its excess (the RTT raised) filled the pipe — that is
//! `bottleneck::FullPipe`'s, not this rule's. A flat flight above the BDP with the RTT at
//! its base stays here: it was not in the path (by Little's law it waited longer than the
//! path's round trip, for ACKs the receiver held back), so it is no send-buffer limit and
//! no full pipe either, and the evidence says so. The law [`law`]: "sender-limited" is
//! never printed beside "the pipe was full".
//!
//! ## Why
//! The network could have carried more: the fix is at the sender (a send buffer of at
//! least the BDP, or an application that writes sooner).
//!
//! ## Example
//! 50 Mbit/s, 60 ms, SO_SNDBUF 64 KiB: flight flat at ~110 kB for 60 rounds, no losses,
//! goodput 14.5 Mbit/s while the path does 47.
//!
//! Claims: `Idle` takes the idle time first of all rules (nothing to send is nothing to
//! explain by the network); `Plateau` takes busy time in flat stretches after the
//! receiver-window and bottleneck rules had theirs.

use super::super::advice::{self, plain};
use super::super::facts::Findings;
use super::super::rounds::Round;
use super::super::Label;
use super::{Account, BinCtx, Claim, Left, Verdict};
use crate::summary::{AdviceItem, AdviceKind};
use crate::units::{bytes, ms, pct, pct_part};

/// Idle pauses the other end's answers ended, when there were any (`turns`).
fn answered_turns(x: &super::super::facts::Facts) -> Option<super::super::turns::TurnSummary> {
    x.turns.filter(|t| t.answered > 0 && t.answered_share() > 0.01)
}

/// The share of the idle time that makes the other end's answers the advice's subject:
/// most of it.
const TURNS_MOST: f64 = 0.5;

/// Idle for at least this share of the transfer makes the application the limit (the
/// sender was busy less than three quarters of the time).
pub const MIN_IDLE_SHARE: f64 = 0.25;
/// Sender-limited time (idle + plateau) of at least this share decides the verdict.
pub const MIN_SHARE: f64 = 0.4;
/// A plateau is judged over this many consecutive rounds.
pub const PLATEAU_ROUNDS: usize = 10;
/// Flight growth below this many MSS per round counts as flat (Reno's congestion
/// avoidance grows 1 MSS per round; CUBIC's Reno-friendly floor about 0.5).
pub const FLAT_GROWTH_MSS: f64 = 0.25;

/// After a loss, congestion control itself can hold the flight flat below the level it
/// had before the loss (CUBIC's plateau around W_max, slow Reno-friendly growth on short
/// RTTs); only a plateau above this multiple of that level is the sender's own.
pub const ABOVE_LOSS_LEVEL: f64 = 1.2;

/// Idle time: everything sent was acknowledged and nothing new came.
pub struct Idle;

impl Claim for Idle {
    fn name(&self) -> &'static str {
        "idle"
    }
    fn label(&self) -> Label {
        Label::Sender
    }
    fn claim(&self, _b: &BinCtx<'_>, left: &mut Left) -> u64 {
        std::mem::take(&mut left.idle)
    }
}

/// Busy time on a loss-free flat flight.
pub struct Plateau;

impl Claim for Plateau {
    fn name(&self) -> &'static str {
        "plateau"
    }
    fn label(&self) -> Label {
        Label::Sender
    }
    fn claim(&self, b: &BinCtx<'_>, left: &mut Left) -> u64 {
        if b.plateau {
            std::mem::take(&mut left.busy)
        } else {
            0
        }
    }
}

/// Busy time in loss recovery, by the share of the congestion window the sender left
/// unused (`timeline::Bin::unused_window_ns`): its pipe stayed below the window the
/// recovery left it while the receiver's window had room, so it had nothing more to send
/// (Linux's tcp_info says the same: its `tcpi_unacked - sacked - lost + retrans` under
/// `snd_cwnd`, the write queue empty of unsent data).
pub struct WindowUnused;

pub const WINDOW_UNUSED: &str = "window-unused";

impl Claim for WindowUnused {
    fn name(&self) -> &'static str {
        WINDOW_UNUSED
    }
    fn label(&self) -> Label {
        Label::Sender
    }
    fn claim(&self, b: &BinCtx<'_>, left: &mut Left) -> u64 {
        let got = b.bin.unused_window_ns.min(left.busy);
        left.busy -= got;
        got
    }
}

/// The sender's unused congestion window, summed over the steady transfer, that makes the
/// sender the limit: half. RFC 7661 §4.3 calls a window the sender's pipe used less than
/// half of non-validated, the sender rate-limited: the window did not hold it.
pub const HALF_WINDOW_UNUSED: f64 = 0.5;

/// The sender left at least half of its congestion window unused over the steady transfer,
/// in loss recoveries whose pipe it did not fill ([`WindowUnused`]), and the path was not
/// full. Asked after the bottleneck's and the receiver window's verdicts: a flow that
/// filled the path, or whose receiver's window held it, was held by those first.
pub struct WindowUnusedDecides;

impl Verdict for WindowUnusedDecides {
    fn label(&self) -> Label {
        Label::Sender
    }
    fn decides(&self, a: &Account) -> bool {
        let saturated = a
            .own_utilisation
            .is_some_and(|u| u >= super::super::capacity::AT_CAPACITY);
        !saturated && a.window_unused_share >= HALF_WINDOW_UNUSED
    }
}

pub struct Decides;

impl Verdict for Decides {
    fn label(&self) -> Label {
        Label::Sender
    }
    /// A sender with nothing outstanding a quarter of the time is the limit, whatever the
    /// estimate says. Time it left room unused with its data still in flight, and a flat
    /// flight, are the sender's only where they kept the flow below a full path's share of
    /// the capacity: a send buffer that keeps the bottleneck saturated did not limit the
    /// flow (R18 sndbuf_36k made again: 26% of the time such room beside 132 Mbit/s
    /// delivered on a 134 Mbit/s path; the kernel's busy time was all of it, RFC 7661 §2:
    /// application-limited is a flight below what the path allows).
    fn decides(&self, a: &Account) -> bool {
        let empty = a.idle_share - a.room_idle_share;
        let saturated = a
            .own_utilisation
            .is_some_and(|u| u >= super::super::capacity::AT_CAPACITY);
        // The window left unused in recovery decides by its own measure, after the path's
        // and the receiver window's verdicts (`WindowUnusedDecides`).
        let own = a.fractions[Label::Sender.index()] - a.window_unused_share;
        empty >= MIN_IDLE_SHARE || (!saturated && (a.idle_share >= MIN_IDLE_SHARE || own >= MIN_SHARE))
    }
}

pub fn evidence(f: &Findings<'_>) -> Vec<String> {
    let (x, c) = (f.facts, f.class);
    let mut out = Vec::new();
    // The verdict against a larger share of another limit says why (`Decides`, first in the
    // spec's precedence: an application that leaves the connection idle is the limit, however
    // the path or the windows held the rest of the time).
    out.extend(super::beside_larger_share(f, Label::Sender, || {
        // The sender's share less the window it left unused in recovery, which decides by
        // its own measure; rounded as the limits print.
        let own = ((c.share(Label::Sender) - c.window_unused_share) * 1e4).round() / 1e4;
        if c.idle_share >= MIN_IDLE_SHARE {
            format!(
                "the sender idled {} of the time, at least the {} that makes the application the limit: it had nothing to send that long",
                pct(c.idle_share),
                pct(MIN_IDLE_SHARE)
            )
        } else if own < MIN_SHARE && c.window_unused_share >= HALF_WINDOW_UNUSED {
            format!(
                "in loss recovery the sender left its congestion window unused {} of the time, at least the {} that makes the sender the limit (RFC 7661 §4.3: a window its flight used less than half of is not what held the sender)",
                pct(c.window_unused_share),
                pct(HALF_WINDOW_UNUSED)
            )
        } else if own >= MIN_SHARE {
            format!(
                "the sender's own flat flight held it {} of the time, at least the {} that makes the sender the limit",
                pct(own),
                pct(MIN_SHARE)
            )
        } else {
            // Neither of `Decides`'s signs: the limit that kept the flow below capacity.
            let own = pct(own);
            super::kept_below(f, &format!("the sender's own flat flight ({own} of the time)"))
                .unwrap_or_else(|| format!("the sender's own flat flight held it {own} of the time"))
        }
    }));
    // The verdict against a larger receiver-window share that the sentence above did not
    // take up: below capacity, the window's time where it was at least the BDP does not
    // compete (`classify`: such a window lets the sender fill the pipe, RFC 6349 §3.3.1),
    // as the congestion window's verdict says beside it (`cwnd::evidence`).
    let rwnd = c.share(Label::ReceiverWindow);
    let own = c.share(Label::Sender) - c.window_unused_share;
    let opening = "sender-limited though the receiver window's share of the time is larger";
    if c.verdict == Label::Sender
        && rwnd > c.share(Label::Sender)
        && c.rwnd_wide_share > 0.0
        && c.idle_share < MIN_IDLE_SHARE
        && own < MIN_SHARE
        && !out.iter().any(|e| e.starts_with(opening))
    {
        if let (Some(bdp), Some(kept)) = (x.bdp, super::kept_below(f, "the sender's own flat flight")) {
            out.push(format!(
                "{opening} ({} against {}): for {} of the time the window was at least the BDP ({}), which lets the sender fill the pipe (RFC 6349 §3.3.1); {kept}",
                pct(rwnd),
                pct(c.share(Label::Sender)),
                pct(c.rwnd_wide_share),
                super::bdp_bytes(bdp),
            ));
        }
    }
    if c.idle_share > 0.01 {
        // How much of it had data in flight: that time the path carried the flow's data,
        // which `Decides` weighs against the delivery.
        let room = if pct(c.room_idle_share) == pct(c.idle_share) {
            " (all of it with its data still in flight: room it left unused)".to_string()
        } else if c.room_idle_share >= 0.005 {
            format!(
                " (of it, {} of the time with its data still in flight: room it left unused)",
                pct(c.room_idle_share)
            )
        } else {
            String::new()
        };
        out.push(format!(
            "sender idle (nothing new to send: everything acknowledged, or room in its windows it did not use for longer than pacing or a deferred send takes) {} of the time{room}",
            pct(c.idle_share)
        ));
        if let Some(t) = answered_turns(x) {
            let median = t
                .median_answer_s
                .map(|m| {
                    format!(
                        "; each answer came a median {} after the sender's last data, seen from here",
                        ms(m)
                    )
                })
                .unwrap_or_default();
            // With the answer in hand the sender took its own time, longer than the answer
            // took: say how long, so that those pauses are not read as the other end's.
            let after = t
                .median_after_answer_s
                .filter(|&a| a > t.median_answer_s.unwrap_or(0.0) && t.answered_share() < TURNS_MOST)
                .map(|a| {
                    format!(
                        "; the rest of those pauses was the sender's own: it sent again a median {} after an answer reached it",
                        ms(a)
                    )
                })
                .unwrap_or_default();
            let of = if t.pauses == 1 {
                "its one pause".to_string()
            } else {
                format!("{} of its {} pauses", t.answered, t.pauses)
            };
            out.push(format!(
                "of the sender's idle time over the connection, {} waited for the other end's answers ({of}): the other end's data came during each, and the sender went on only after it (request/response turns{median}{after})",
                pct_part(t.answered_share()),
            ));
        }
    }
    if c.window_unused_share > 0.005 {
        out.push(window_unused_sentence(f));
    }
    if c.plateau_share > 0.01 {
        // Say where the flat flight stood against the window and the BDP, as it did.
        let level = c.plateau_flight;
        let mut against: Vec<String> = against_window(x, level as f64).into_iter().collect();
        if let Some(bdp) = x.bdp {
            against.push(if (level as f64) < bdp {
                format!("below the BDP ({})", super::bdp_bytes(bdp))
            } else if bursts_below(f).is_some() {
                // Its top above the path, its trough below (`FullPipe` wants the trough):
                // the sender sent bursts and waited between them while the link idled.
                format!(
                    "above the BDP ({}) only at its peaks: it fell to ~{} between the sender's bursts, below the BDP, so the link idled while the sender waited (for its send buffer to drain, or its application)",
                    super::bdp_bytes(bdp),
                    bytes(c.plateau_low as f64)
                )
            } else if x.lower_bound {
                // The BDP of a capacity that is only the flow's own delivery: the path may
                // hold more. (A BDP under a byte is shown as the byte: a flight of one is at it.)
                let at = if super::bdp_bytes(bdp) == bytes(level as f64) { "at" } else { "above" };
                format!("{at} the BDP ({}) of a lower-bound capacity", super::bdp_bytes(bdp))
            } else {
                // Kept here only with the RTT near its base (else `FullPipe` has it): the
                // flight waited outside the path.
                format!(
                    "above the BDP ({}) with the RTT near its base: the flight waited for ACKs outside the path, neither filling it nor held by the send buffer",
                    super::bdp_bytes(bdp)
                )
            });
        }
        let against = if against.is_empty() {
            String::new()
        } else {
            format!(", {}", against.join(" and "))
        };
        let nagle = if nagle_held(f) {
            ": Nagle's rule held each next short segment until the delayed ACK of the one before it (see the delayed-ack stall)"
        } else {
            ""
        };
        out.push(format!(
            "flight flat at ~{} for {} of the time with no loss{against}{nagle}",
            bytes(level as f64),
            pct(c.plateau_share)
        ));
    }
    out
}

/// What the sender's unused window in loss recovery was (`WindowUnused`), with the flight
/// it held then.
pub fn window_unused_sentence(f: &Findings<'_>) -> String {
    let (x, c) = (f.facts, f.class);
    let held = if x.max_flight > x.max_in_network && x.max_in_network > 0 {
        format!(
            " (up to {} outstanding, of it at most {} in the network)",
            bytes(x.max_flight as f64),
            bytes(x.max_in_network as f64)
        )
    } else {
        String::new()
    };
    format!(
        "in loss recovery the sender left its congestion window unused {} of the time (each instant weighted by the part unused): its pipe, the flight less what duplicate ACKs or SACKs reported delivered and what was presumed lost (RFC 6675), stayed below the {} of the flight at the loss that the window's cut keeps (CUBIC, RFC 9438 §4.6) and that a sender with data fills at once (RFC 6937), while the receiver's window had room: it had nothing more to send, its send buffer holding the data outstanding above the holes{held}, or its application writing no more",
        pct(c.window_unused_share),
        pct(crate::diagnose::recovery_window::RECOVERY_WINDOW)
    )
}

/// Whether Nagle's rule, not the send buffer, held the flight flat: a sender that has
/// unacknowledged data holds a segment shorter than the MSS until the ACK comes (RFC 896;
/// RFC 1122 §4.2.3.4), and a receiver that delays that ACK (RFC 1122 §4.2.3.2) keeps the
/// flight at the one short segment for the whole delay. When those waits (the
/// delayed-ack stall) cover at least half of the flat stretch's time, the flat flight is
/// theirs: a larger send buffer would not have moved it (a request-response flow with
/// 1400-byte writes split 200 + 1200 was told to raise its send buffer to 672 B while 43
/// waits of up to 64 ms made 94% of its flat time).
fn nagle_held(f: &Findings<'_>) -> bool {
    let (x, c) = (f.facts, f.class);
    let flat_s = c.plateau_share * c.steady_s;
    x.stall(crate::summary::StallKind::DelayedAck)
        .is_some_and(|s| flat_s > 0.0 && s.duration_s >= NAGLE_HOLDS * flat_s)
}

/// Share of the flat stretch the delayed-ACK waits must cover to be its cause: most of it.
const NAGLE_HOLDS: f64 = 0.5;

/// Where a flat flight of `level` bytes stood against the receiver's largest window.
/// The BDP, when the flat flight topped it only at its peaks and fell below it between the
/// sender's bursts (`FullPipe` reads the trough): the link idled while the sender waited.
/// None with a lower-bound capacity, whose BDP the path may exceed.
fn bursts_below(f: &Findings<'_>) -> Option<f64> {
    let (x, c) = (f.facts, f.class);
    x.bdp
        .filter(|&bdp| (c.plateau_low as f64) < bdp && c.plateau_flight as f64 >= bdp && !x.lower_bound)
}

pub fn against_window(x: &super::super::facts::Facts, level: f64) -> Option<String> {
    x.max_rwnd.map(|w| {
        if level < w as f64 {
            format!("below the receiver window ({})", bytes(w as f64))
        } else {
            format!("at the receiver window ({})", bytes(w as f64))
        }
    })
}

/// The law of the sender's verdict (on the summary): time the evidence says the pipe was
/// full is not the sender's. A flat flight that filled the pipe belongs to the bottleneck,
/// so a sender-limited verdict must stand on the sender's own time: with every share of time
/// a "the pipe was full" sentence names taken out of the sender's share — unless the
/// sentence says it is in the bottleneck's share ([`super::FULL_PIPE_COUNTED`]), which
/// must then hold it (what it cannot hold is taken out of the sender's) — the verdict still
/// follows — the sender idled at least [`MIN_IDLE_SHARE`], or its remaining share is at least
/// [`MIN_SHARE`] or the largest. tcp-ethereal-trace-1 with the standing-queue change alone
/// broke it: sender 40% of which 36% was "flight flat at ~8.00 KiB ... above the BDP (924
/// B): the pipe was full".
pub fn law(f: &crate::summary::FlowSummary) -> Vec<String> {
    use crate::units::parse;
    let mut out = Vec::new();
    let Some(l) = &f.limits else { return out };
    // A share printed as "... for 16% of the time" or "... 4% of the time".
    let share = |e: &str, from: &str| -> Option<f64> {
        let rest = &e[e.find(from)? + from.len()..];
        parse(&rest[..rest.find(" of the time")?])
    };
    let full_pipe = |e: &&String| e.starts_with("flight flat at ~") && e.contains("the pipe was full");
    // A sentence that says its time is in the bottleneck's share is checked against that
    // share; one that does not say whose it is is taken out of the sender's.
    let counted = format!("the pipe was full ({})", super::FULL_PIPE_COUNTED);
    let (mut claimed, mut unknown) = (0.0, 0.0);
    for e in f.evidence.iter().filter(full_pipe) {
        let s = share(e, " for ").unwrap_or(0.0);
        if e.contains(&counted) {
            claimed += s;
        } else {
            unknown += s;
        }
    }
    let full = claimed + unknown;
    if full == 0.0 {
        return out;
    }
    let idle = f
        .evidence
        .iter()
        .find(|e| e.starts_with("sender idle "))
        .and_then(|e| share(e, ") "))
        .unwrap_or(0.0);
    // Shares print to whole percents.
    let tol = 0.005;
    if claimed > l.bottleneck + tol {
        out.push(format!(
            "{:.0}% of the time the pipe was full, said to be in the bottleneck's share, which is {:.0}%",
            claimed * 100.0,
            l.bottleneck * 100.0
        ));
    }
    if f.verdict != Label::Sender {
        return out;
    }
    let own = l.sender - unknown - (claimed - l.bottleneck).max(0.0);
    // Below capacity the bottleneck competes for the verdict with the time the pipe was
    // shown full alone (`classify`: the path did not hold the flow back as a whole), as the
    // steady-delivery sentence prints it (a judged estimate); for a flow sharing the path,
    // by the group's utilisation where the sentence names one above the flow's own.
    let below_capacity = f.evidence.iter().any(|e| {
        let group = e
            .find(crate::diagnose::classification::GROUP_DELIVERED)
            .and_then(|i| {
                let rest = &e[i + crate::diagnose::classification::GROUP_DELIVERED.len()..];
                parse(&rest[..rest.find('%')? + 1])
            })
            .unwrap_or(0.0);
        e.starts_with("steady delivery ")
            && !e.contains("a lower bound")
            && e.find("% of the bottleneck estimate").is_some_and(|end| {
                let from = e[..end].rfind("= ").map_or(end, |i| i + 2);
                parse(&e[from..end + 1]).is_some_and(|p| p.max(group) < crate::diagnose::capacity::AT_CAPACITY)
            })
    });
    let bottleneck = if below_capacity {
        claimed + unknown
    } else {
        l.bottleneck
    };
    // Below capacity the receiver window's time where it was at least the BDP does not
    // compete either, as the sentence that says so prints it.
    let wide = f
        .evidence
        .iter()
        .find(|e| e.starts_with("sender-limited though the receiver window's share of the time is larger"))
        .and_then(|e| share(e, ": for "))
        .filter(|_| below_capacity)
        .unwrap_or(0.0);
    let receiver_window = (l.receiver_window - wide).max(0.0);
    let largest_other = receiver_window.max(l.cwnd).max(bottleneck);
    let decides = idle + tol >= MIN_IDLE_SHARE || own + tol >= MIN_SHARE || own + tol >= largest_other;
    if !decides {
        out.push(format!(
            "sender-limited ({:.0}%) though {:.0}% of the time the pipe was full: the sender's own time ({:.0}%, idle {:.0}%) does not make the verdict",
            l.sender * 100.0,
            full * 100.0,
            own * 100.0,
            idle * 100.0
        ));
    }
    out
}

/// The smallest send buffer a stack lets a socket have: Linux's `tcp_wmem` minimum (4096 B,
/// Documentation/networking/ip-sysctl.rst; SO_SNDBUF is floored at SOCK_MIN_SNDBUF, about
/// as much), more than a full segment of most paths: a flight flat below one segment was
/// not held by a buffer.
const MIN_SEND_BUFFER: u64 = 4096;

pub fn advice(f: &Findings<'_>) -> Vec<AdviceItem> {
    let (x, c) = (f.facts, f.class);
    let mut out = Vec::new();
    if c.window_unused_share > c.plateau_share && c.window_unused_share > c.idle_share {
        // The send buffer held the data above the holes while they were repaired; the
        // losses and their recovery (without SACK, one hole a round trip: RFC 6582) are
        // what made it wait, and their advice follows.
        out.push(plain(
            AdviceKind::RaiseSendBuffer,
            Some("net.ipv4.tcp_wmem max, or SO_SNDBUF"),
            format!(
                "in loss recovery the sender sent nothing new while its send buffer held the data outstanding above the holes (up to {}): a send buffer well above that flight (net.ipv4.tcp_wmem max, or SO_SNDBUF) lets new data flow while holes are repaired",
                bytes(x.max_flight as f64)
            ),
            x,
        ));
        if x.loss_share() >= super::losses::LOSSY {
            out.extend(super::losses::advice(f));
        }
        return out;
    }
    if c.plateau_share >= c.idle_share && nagle_held(f) {
        // The delayed-ACK advice (TCP_NODELAY) follows, from the stall: no buffer to raise.
    } else if c.plateau_share >= c.idle_share && c.plateau_flight < MIN_SEND_BUFFER.min(x.mss as u64) {
        out.push(plain(
            AdviceKind::ApplicationPaced,
            None,
            format!(
                "the sender kept only ~{} in flight, less than one full segment ({}), which any send buffer holds (Linux's least is {}, tcp_wmem's minimum): the application gave it no more (small messages, each waiting for its answer): no buffer or network setting would raise it",
                bytes(c.plateau_flight as f64),
                bytes(x.mss as f64),
                bytes(MIN_SEND_BUFFER as f64)
            ),
            x,
        ));
    } else if c.plateau_share >= c.idle_share {
        let level = c.plateau_flight.max(1);
        let low = c.plateau_low;
        if let Some(bdp) = bursts_below(f) {
            // A burst that tops the BDP and a trough below it: the buffer must grow by what
            // the trough lacks for the flight to stay at the BDP between bursts.
            out.extend(advice::raise(
                x,
                AdviceKind::RaiseSendBuffer,
                "net.ipv4.tcp_wmem max, or SO_SNDBUF",
                level,
                level as f64 + (bdp - low as f64),
                |had, buffer| {
                    format!(
                        "the sender sent bursts of up to ~{had} in flight but let the flight fall to ~{} between them, below the path's BDP ({}): raise the send buffer (net.ipv4.tcp_wmem max, or SO_SNDBUF) to >= {buffer} so that it never falls below the BDP",
                        bytes(low as f64),
                        super::bdp_bytes(bdp)
                    )
                },
            ));
        } else if let Some(bdp) = x.bdp {
            out.extend(advice::raise(
                x,
                AdviceKind::RaiseSendBuffer,
                "net.ipv4.tcp_wmem max, or SO_SNDBUF",
                level,
                bdp,
                |had, buffer| {
                    format!(
                        "the sender kept only ~{had} in flight with no loss while the path holds {} (BDP): raise the send buffer (net.ipv4.tcp_wmem max, or SO_SNDBUF) to >= {buffer}",
                        super::bdp_bytes(bdp)
                    )
                },
            ));
        }
    } else {
        // With ECN marks the path was congested while the flow sent (the congested-path
        // advice follows): the idle time, not the network alone, is what limited it most.
        let why = if x.ecn.congestion() {
            "that, more than the congested path, is what limited it"
        } else {
            "the network is not what limits it"
        };
        // Most of the idle time the other end's turn: its answers paced the dialogue.
        let sentence = match answered_turns(x).filter(|t| t.answered_share() >= TURNS_MOST) {
            Some(t) => format!(
                "the application sent in bursts and left the connection idle, or its window unused, {} of the time, {} of that waiting for the other end's answers{}: the protocol's turns, not the network, limit it; fewer turns (several requests per round trip: pipelining, RFC 2920 for SMTP, HTTP/2 streams) or faster answers at the other end would cut the waits",
                pct(c.idle_share),
                pct_part(t.answered_share()),
                t.median_answer_s.map(|m| format!(" (a median {} each)", ms(m))).unwrap_or_default()
            ),
            None => format!(
                "the application sent in bursts and left the connection idle, or its window unused, {} of the time: {why}",
                pct(c.idle_share)
            ),
        };
        out.push(plain(AdviceKind::ApplicationPaced, None, sentence, x));
    }
    out
}

/// Marks the rounds that lie in a flat stretch: `PLATEAU_ROUNDS` consecutive busy rounds
/// without a congestion signal (a retransmission or an ECN mark: `Round::congestion`) or
/// window limitation whose flight grows by less than `FLAT_GROWTH_MSS` per round
/// (least-squares slope), and that cannot be congestion control recovering from a loss or
/// a mark (the stretch's median flight is not below `ABOVE_LOSS_LEVEL` times the level
/// before the most recent one). Rounds the sender spent mostly idle, with no congestion
/// signal and no window limit, neither join nor break a stretch: a pause is the sender's
/// own (it had nothing to send), and congestion control grows no window while the sender
/// leaves it unused (RFC 7661 §4.3: the window is not validated while application-limited),
/// so the busy rounds either side of it are judged as one stretch (an MPTCP subflow fed by
/// its connection's scheduler, a request-response client: a pause every few rounds left no
/// ten busy rounds in a row, and their flat flight was read as the congestion window's).
pub fn plateau_rounds(rounds: &[Round], mss: u32, from: usize) -> Vec<bool> {
    let mut flat = vec![false; rounds.len()];
    flat_stretches(rounds, mss, from, &mut flat);
    short_flights(rounds, mss, from, &mut flat);
    flat
}

/// Marks the flat stretches of `PLATEAU_ROUNDS` rounds or more.
fn flat_stretches(rounds: &[Round], mss: u32, from: usize, flat: &mut [bool]) {
    let n = PLATEAU_ROUNDS;
    if rounds.len() < from + n {
        return;
    }
    let usable = |r: &Round| !r.congestion() && r.rwnd_ns == 0 && r.max_flight > 0 && r.busy_ns > r.idle_ns;
    // Flight level before the most recent loss, per round.
    let mut loss_level: Vec<Option<u64>> = Vec::with_capacity(rounds.len());
    let mut level = None;
    for (j, r) in rounds.iter().enumerate() {
        if r.congestion() {
            let before = rounds[..j]
                .iter()
                .rev()
                .take(2)
                .map(|p| p.max_flight)
                .max()
                .unwrap_or(r.max_flight);
            level = Some(before.max(r.max_flight));
        }
        loss_level.push(level);
    }
    let pause = |r: &Round| !r.congestion() && r.rwnd_ns == 0 && r.busy_ns > 0 && r.idle_ns > r.busy_ns;
    // Rounds without accounted time lie outside the transfer (after its last data: the
    // steady transfer ends there, `DirAccumulator::close`), and neither make nor break a
    // stretch.
    let outside = |r: &Round| r.busy_ns == 0 && r.rwnd_ns == 0 && r.idle_ns == 0;
    let judged: Vec<usize> = (from..rounds.len())
        .filter(|&j| !pause(&rounds[j]) && !outside(&rounds[j]))
        .collect();
    let mut w: Vec<Round> = Vec::with_capacity(n);
    for k in 0..judged.len().saturating_sub(n - 1) {
        let at = &judged[k..k + n];
        let start = at[0];
        w.clear();
        w.extend(at.iter().map(|&j| rounds[j]));
        if !w.iter().all(usable) {
            continue;
        }
        // The stretch's typical level, not its top: without SACK the round after a loss
        // still spans the hole (the flight looks inflated until the repair), and one such
        // round must not lift a stretch of halved flight over the loss level.
        let mut levels: Vec<u64> = w.iter().map(|r| r.max_flight).collect();
        levels.sort_unstable();
        let typical = levels[levels.len() / 2] as f64;
        if loss_level[start].is_some_and(|l| typical < ABOVE_LOSS_LEVEL * l as f64) {
            continue;
        }
        if slope(&w) < FLAT_GROWTH_MSS * mss as f64 {
            at.iter().for_each(|&j| flat[j] = true);
        }
    }
}

/// Marks the rounds whose flight was a short segment's, however few: the sender had no
/// full segment to send.
fn short_flights(rounds: &[Round], mss: u32, from: usize, flat: &mut [bool]) {
    // Not the transfer's last round that sent, nor the wait after it: its final segment is
    // short whatever limited the transfer, and the wait for its ACK ends the transfer
    // rather than holding it back (tcpreplay test.pcap: a 42 KB response in slow start
    // read 40% sender from its last 393 B).
    let last_send = rounds.iter().rposition(|r| r.new_segments > 0).unwrap_or(0);
    // A flight under one full segment is the sender's, however short the stretch: no
    // congestion window is below one segment (RFC 5681 §3.1: the loss window after a
    // timeout is one segment, and nothing cuts it further), so the sender had room for
    // more and nothing to send, or held a short segment back (Nagle's rule, RFC 896).
    // (On a transfer of fewer rounds than a flat stretch takes, a tail this short is its
    // last segment, and is left to the rule below.)
    let long = rounds.len() >= from + PLATEAU_ROUNDS;
    for (j, r) in rounds.iter().enumerate().skip(from).filter(|_| long) {
        if r.max_flight > 0 && r.max_flight < mss as u64 && !r.congestion() && r.rwnd_ns == 0 && r.busy_ns > 0 {
            flat[j] = true;
        }
    }
    // A round whose new data all went in short segments is the sender's too: a sender with a
    // full segment's data and room in both windows sends a full segment (RFC 1122
    // §4.2.3.4), so each short one was all it had, and the rounds after it that sent nothing
    // were still waiting on that (its window had room: the last send was not cut by it).
    // R19 app_onoff at the client: each burst's last 912 B left with 33 KB of the burst
    // still unacknowledged and then stood alone for a round and a delayed ACK, and those
    // rounds read as the congestion window's (cwnd 79% beside the kernel's flight at a
    // fifth of its cwnd).
    let mut waiting = false;
    for (j, r) in rounds.iter().enumerate().take(last_send).skip(from) {
        let clean = !r.congestion() && r.rwnd_ns == 0 && r.busy_ns > 0;
        if r.new_segments > 0 {
            waiting = clean && r.short_segments == r.new_segments;
        } else if !clean {
            waiting = false;
        }
        if waiting && clean {
            flat[j] = true;
        }
    }
}

/// Least-squares slope of max flight per round, bytes per round.
/// The flight's trend over a stretch, bytes per round: the median of the slopes between
/// every pair of rounds (Theil-Sen), so that one round cut short — the start-up's last, or
/// the transfer's last, sent part of a window — does not tilt a flat stretch (a least-squares
/// fit read 395 B per round over R11 sndbuf_16k's nine rounds at 80 016 B and one at
/// 71 328 B, above the 362 B threshold). Linear growth has the same slope either way.
fn slope(w: &[Round]) -> f64 {
    let mut slopes: Vec<f64> = Vec::with_capacity(w.len() * w.len() / 2);
    for (i, a) in w.iter().enumerate() {
        for (j, b) in w.iter().enumerate().skip(i + 1) {
            slopes.push((b.max_flight as f64 - a.max_flight as f64) / (j - i) as f64);
        }
    }
    if slopes.is_empty() {
        return 0.0;
    }
    slopes.sort_unstable_by(f64::total_cmp);
    let m = slopes.len() / 2;
    if slopes.len() % 2 == 1 {
        slopes[m]
    } else {
        (slopes[m - 1] + slopes[m]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Census seed 5656: a sender-limited verdict (12% of the time) beside a receiver window
    /// share of 20%, all of it with a window of at least the BDP, below capacity: that time
    /// does not compete (`classify`), and the law reads it from the sentence that says so.
    #[test]
    fn a_receiver_window_at_least_the_bdp_does_not_compete_below_capacity() {
        let json: serde_json::Value =
            serde_json::from_str(include_str!("../../../tests/golden/tbf_policer_rounds-client.json")).unwrap();
        let mut f: crate::summary::FlowSummary = serde_json::from_value(json["flows"][0].clone()).unwrap();
        f.verdict = crate::summary::Verdict::Limited(Label::Sender);
        f.limits = Some(crate::summary::Limits {
            receiver_window: 0.20,
            cwnd: 0.09,
            bottleneck: 0.59,
            sender: 0.12,
        });
        let rwnd = "sender-limited though the receiver window's share of the time is larger (20% against 12%): for 20% of the time the window was at least the BDP (788 B), which lets the sender fill the pipe (RFC 6349 §3.3.1); over the steady transfer the flow delivered 56% of the capacity while it had data, below the 85% a full path gives, so the path did not hold it back as a whole; the sender's own flat flight kept it below";
        f.evidence = vec![
            "steady delivery 5.28 Mbit/s = 56% of the bottleneck estimate 9.51 Mbit/s (delivery-rate)".into(),
            "flight flat at ~7.03 KiB for 7% of the time with no loss, below the receiver window (15.5 KiB) and above the BDP (788 B), the RTT rising to hold the excess (median 4.83 ms vs base 663 µs): the pipe was full (in the bottleneck's share)".into(),
            rwnd.into(),
        ];
        assert_eq!(law(&f), Vec::<String>::new());
        f.evidence.pop();
        assert_eq!(law(&f).len(), 1, "{:?}", law(&f));
    }

    fn r(flight: u64) -> Round {
        Round {
            max_flight: flight,
            busy_ns: 1,
            ..Default::default()
        }
    }

    #[test]
    fn a_flat_flight_is_a_plateau() {
        let rs: Vec<Round> = (0..12).map(|i| r(110_000 + (i % 2) * 1448)).collect();
        assert!(plateau_rounds(&rs, 1448, 0).iter().all(|&f| f));
    }

    #[test]
    fn one_round_cut_short_does_not_tilt_a_flat_stretch() {
        // R11 sndbuf_16k: the start-up's last round at 71 KB, then nine at 80 KB.
        let mut rs: Vec<Round> = vec![r(71_328)];
        rs.extend((0..9).map(|_| r(80_016)));
        assert!(plateau_rounds(&rs, 1448, 0).iter().all(|&f| f));
        // And rounds after the transfer's last data (no time accounted) break no stretch.
        let mut tail = rs.clone();
        tail.push(Round::default());
        assert!(plateau_rounds(&tail, 1448, 0)[..10].iter().all(|&f| f));
    }

    #[test]
    fn congestion_avoidance_growth_is_not_a_plateau() {
        let rs: Vec<Round> = (0..12).map(|i| r(100_000 + i * 1448)).collect();
        assert!(plateau_rounds(&rs, 1448, 0).iter().all(|&f| !f));
    }

    #[test]
    fn a_flat_stretch_below_the_level_before_a_loss_is_congestion_control() {
        let mut rs: Vec<Round> = vec![r(150_000), r(150_000)];
        rs[1].retransmissions = 2;
        rs.extend((0..12).map(|_| r(110_000)));
        assert!(plateau_rounds(&rs, 1448, 0).iter().all(|&f| !f));
        // far above it, the sender held it flat
        let mut rs: Vec<Round> = vec![r(50_000), r(50_000)];
        rs[1].retransmissions = 2;
        rs.extend((0..12).map(|_| r(110_000)));
        assert!(plateau_rounds(&rs, 1448, 0)[2..].iter().all(|&f| f));
    }

    #[test]
    fn the_recovery_round_after_a_loss_does_not_lift_a_halved_flight() {
        // No SACK: 30 segments before the loss, the round after it still spans the hole
        // (40), then congestion control holds ~18-20 segments, growing slowly. Measured on
        // a NewReno recovery at 90 ms (lab corpus L, sackok_stripped_loss).
        let seg = |n: u64| r(n * 1448);
        let mut rs: Vec<Round> = vec![seg(24), seg(30)];
        rs[1].retransmissions = 1;
        rs.push(seg(40));
        rs.extend([18, 18, 18, 19, 19, 19, 20, 20, 20, 20].map(seg));
        assert!(plateau_rounds(&rs, 1448, 0).iter().all(|&f| !f));
    }

    /// On/off bursts: each burst's rounds send full segments (the congestion window's when
    /// it holds them back), the round that sent only the burst's short last segment and
    /// the rounds that then wait on it are the sender's. A loss ends the wait.
    #[test]
    fn rounds_that_sent_only_short_segments_and_waited_on_them_are_the_senders() {
        let sent = |flight: u64, new: u32, short: u32| Round {
            new_segments: new,
            short_segments: short,
            ..r(flight)
        };
        let burst = sent(97_392, 67, 1);
        let tail = sent(34_592, 1, 1);
        let wait = sent(34_592, 0, 0);
        // Fewer rounds than a flat stretch takes: this rule alone.
        let rs = vec![burst, tail, wait, burst, tail, wait, burst, tail, wait];
        let flat = plateau_rounds(&rs, 1448, 0);
        // The last burst's tail ends the transfer: not held back by anything.
        let marked = vec![false, true, true, false, true, true, false, false, false];
        assert_eq!(flat, marked);
        // A loss while waiting: congestion control's from there, until the next short send.
        let mut lossy = rs.clone();
        lossy[5].retransmissions = 1;
        let mut after_loss = marked.clone();
        after_loss[5] = false;
        assert_eq!(plateau_rounds(&lossy, 1448, 0), after_loss);
    }

    #[test]
    fn a_loss_breaks_the_plateau() {
        let mut rs: Vec<Round> = (0..12).map(|_| r(110_000)).collect();
        rs[5].retransmissions = 1;
        assert!(plateau_rounds(&rs, 1448, 0).iter().all(|&f| !f));
    }

    /// A pause every few rounds (a round spent mostly idle) neither breaks a flat stretch
    /// nor joins it: the busy rounds either side are one stretch, and the pauses are left
    /// to the idle time they are.
    #[test]
    fn pauses_between_flat_rounds_do_not_break_the_plateau() {
        let idle = Round {
            max_flight: 2_800,
            busy_ns: 1,
            idle_ns: 5,
            ..Default::default()
        };
        let rs: Vec<Round> = (0..24).map(|i| if i % 3 == 2 { idle } else { r(2_800) }).collect();
        let flat = plateau_rounds(&rs, 1448, 0);
        assert!((0..24).filter(|i| i % 3 != 2).all(|i| flat[i]), "{flat:?}");
        assert!((0..24).filter(|i| i % 3 == 2).all(|i| !flat[i]), "{flat:?}");
        // A loss among them still breaks it.
        let mut rs = rs;
        rs[10].retransmissions = 1;
        assert!(!plateau_rounds(&rs, 1448, 0)[10]);
    }

    #[test]
    fn an_ecn_mark_breaks_the_plateau_as_a_loss_does() {
        // The window cut by a CE mark (RFC 3168 §6.1.2) and held there is congestion
        // control's, not the sender's buffer: the flat stretch around the mark, and one
        // below the level before it, are no plateau.
        let mut rs: Vec<Round> = (0..12).map(|_| r(110_000)).collect();
        rs[5].ecn_marks = 1;
        assert!(plateau_rounds(&rs, 1448, 0).iter().all(|&f| !f));
        let mut rs: Vec<Round> = vec![r(150_000), r(150_000)];
        rs[1].ecn_marks = 3;
        rs.extend((0..12).map(|_| r(110_000)));
        assert!(plateau_rounds(&rs, 1448, 0).iter().all(|&f| !f));
    }
}

#[cfg(test)]
mod timeline_tests {
    use super::super::fixture::{at, run, Bin, BUSY};
    use crate::diagnose::Label;

    /// Loss recoveries all along, a retransmission every 100 ms, delivery at a third of the
    /// capacity: the sender's share is the window it left unused, and at half or more it is
    /// the limit (the kernel's own flight under half its window); under half it is the
    /// window's, as the kernel's flight at the window would say.
    #[test]
    fn a_recovery_that_leaves_most_of_the_window_unused_is_the_senders() {
        let recovering = |unused: f64| {
            run(move |i| Bin {
                delivered: at(0.33),
                flight: 60_000,
                retransmissions: (i % 10 == 0) as u32,
                unused,
                ..BUSY
            })
        };
        let c = recovering(0.8);
        assert_eq!(c.verdict, Label::Sender);
        assert!((c.window_unused_share - 0.8).abs() < 0.02, "{}", c.window_unused_share);
        assert!(
            c.plateau_share < 0.01,
            "the unused window is no plateau: {}",
            c.plateau_share
        );
        let c = recovering(0.3);
        assert_eq!(c.verdict, Label::Cwnd);
        assert!((c.window_unused_share - 0.3).abs() < 0.02, "{}", c.window_unused_share);
    }

    #[test]
    fn an_application_that_pauses_is_the_limit() {
        // Bursts of 100 ms every 300 ms: idle two thirds of the time.
        let c = run(|i| {
            if i % 30 < 10 {
                Bin {
                    delivered: at(0.95),
                    flight: 40_000,
                    ..BUSY
                }
            } else {
                Bin {
                    busy: 0.0,
                    idle: 1.0,
                    ..BUSY
                }
            }
        });
        assert_eq!(c.verdict, Label::Sender);
        assert!(c.idle_share > 0.6);
    }

    #[test]
    fn a_flat_loss_free_flight_far_below_capacity_is_the_send_buffer() {
        let c = run(|i| Bin {
            delivered: at(0.3),
            flight: 12_000 + (i as u64 % 2) * 1448,
            ..BUSY
        });
        assert_eq!(c.verdict, Label::Sender);
        assert!(c.plateau_share > 0.8);
    }
}

#[cfg(test)]
mod decides_tests {
    use super::super::{Account, Verdict};
    use super::Decides;
    use crate::diagnose::Label;

    fn account(idle: f64, room: f64, own_utilisation: f64) -> Account {
        let mut fractions = [0.0; 4];
        fractions[Label::Sender.index()] = idle;
        fractions[Label::Bottleneck.index()] = 1.0 - idle;
        Account {
            fractions,
            idle_share: idle,
            standing_queue: false,
            full_pipe_share: 0.0,
            utilisation: Some(own_utilisation / (1.0 - idle)),
            own_utilisation: Some(own_utilisation),
            room_idle_share: room,
            window_unused_share: 0.0,
            shared: false,
            group_utilisation: None,
        }
    }

    /// The window left unused in recovery decides at half, after the path's and the
    /// receiver window's verdicts, and never on a full path; it is no share the plain
    /// `Decides` counts at its 40%.
    #[test]
    fn the_window_left_unused_in_recovery_decides_at_half() {
        use super::WindowUnusedDecides;
        let unused = |share: f64, own_utilisation: f64| {
            let mut a = account(0.0, 0.0, own_utilisation);
            a.fractions[Label::Sender.index()] = share;
            a.fractions[Label::Bottleneck.index()] = 1.0 - share;
            a.window_unused_share = share;
            a
        };
        assert!(WindowUnusedDecides.decides(&unused(0.6, 0.2)));
        assert!(!WindowUnusedDecides.decides(&unused(0.45, 0.2)));
        assert!(
            !WindowUnusedDecides.decides(&unused(0.6, 0.9)),
            "a full path is the path's"
        );
        assert!(!Decides.decides(&unused(0.45, 0.2)), "not by the plateau's 40%");
    }

    /// R18 sndbuf_36k at the server: 26% of the steady time room left unused with data in
    /// flight, 132 Mbit/s delivered on a 134 Mbit/s path: the path, not the send buffer.
    /// The same time with nothing outstanding (a request/response flow's turns) is the
    /// sender's whatever the estimate says; and below a full path's share the room is too.
    #[test]
    fn room_left_unused_is_the_senders_only_below_a_full_path() {
        assert!(!Decides.decides(&account(0.26, 0.26, 0.985)));
        assert!(Decides.decides(&account(0.26, 0.0, 0.985)));
        assert!(Decides.decides(&account(0.26, 0.26, 0.6)));
        assert!(!Decides.decides(&account(0.1, 0.0, 0.6)));
    }
}
