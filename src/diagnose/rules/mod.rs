//! The limitation rules, one per file (the ruff layout): each says what it detects, why,
//! with an example; claims the time it explains, bin by bin; says when it decides the
//! verdict; and writes its own evidence and advice. The classifier applies them from
//! [`CLAIMS`] in precedence order, the way Linux's tcp_chrono lets the highest-priority
//! state win, and asks [`VERDICTS`] in the spec's precedence.
//!
//! | rule                         | label        | claims                                      |
//! |------------------------------|--------------|---------------------------------------------|
//! | `sender::Idle`               | sender       | idle time (everything acknowledged)         |
//! | `sender::WindowUnused`       | sender       | recovery time by the cwnd share left unused |
//! | `receiver_window::Full`      | rwnd         | time the next segment did not fit           |
//! | `bottleneck::StandingQueue`  | bottleneck   | busy time while a queue stood (RFC 8289)    |
//! | `bottleneck::AtCapacity`     | bottleneck   | busy time delivering at capacity            |
//! | `bottleneck::FullPipe`       | bottleneck   | busy time on a flat flight filling the pipe |
//! | `sender::Plateau`            | sender       | busy time on a loss-free flat flight        |
//! | `cwnd::Remainder`            | cwnd         | the rest of busy time                       |

pub mod bottleneck;
pub mod cwnd;
pub mod losses;
pub mod receiver_window;
pub mod sender;

use super::facts::Findings;
use super::timeline::Bin;
use super::Label;
use crate::summary::AdviceItem;

/// What a limit's share is called in a sentence that names it.
fn share_name(l: Label) -> &'static str {
    match l {
        Label::ReceiverWindow => "receiver window's",
        Label::Cwnd => "congestion window's",
        Label::Bottleneck => "bottleneck's",
        Label::Sender => "sender's",
    }
}

/// The largest share of a limit other than `l`, when it is larger than `l`'s.
fn larger_than(l: Label, share: impl Fn(Label) -> f64) -> Option<Label> {
    Label::ALL
        .iter()
        .copied()
        .filter(|&o| o != l && share(o) > share(l))
        .max_by(|a, b| share(*a).total_cmp(&share(*b)))
}

/// The opening of the sentence that says why the verdict `l` stands beside the larger share
/// of `other`, with the two shares as the limits print them.
fn beside(l: Label, other: Label, theirs: f64, ours: f64) -> String {
    format!(
        "{} though the {} share of the time is larger ({} against {})",
        l.as_str(),
        share_name(other),
        crate::units::pct(theirs),
        crate::units::pct(ours)
    )
}

/// A verdict decided ahead of the shares (the sender's idling, a full path, the receiver's
/// window over its share: `VERDICTS`) beside a larger share of another limit: the sentence
/// that says so, ending with `why` — the sign that decided.
pub fn beside_larger_share(f: &Findings<'_>, l: Label, why: impl FnOnce() -> String) -> Option<String> {
    let c = f.class;
    // The shares as the limits print them (rounded to four places): a share of 0.00004
    // prints "0%" there, and the sentence must name the same figures.
    let share = |x: Label| c.share(x);
    if c.verdict != l {
        return None;
    }
    let other = larger_than(l, share)?;
    Some(format!("{}: {}", beside(l, other, share(other), share(l)), why()))
}

/// The BDP as the summary shows it (whole bytes, never 0 for one that is not:
/// `diagnose::whole_bytes`), so that a sentence quotes the figure the BDP line prints (a
/// loopback's 0.0984 B read "BDP 1 B" beside "above the BDP (0.0984 B)").
pub fn bdp_bytes(bdp: f64) -> String {
    crate::units::bytes(super::whole_bytes(bdp) as f64)
}

/// How a BDP of `rate` (bytes/s) was reached, as its sentences print it: the rate times
/// the base RTT, and the data segment's serialisation where the base RTT is the
/// handshake's (`Facts::bdp_at`).
pub fn rate_times_rtt(x: &super::facts::Facts, rate: f64) -> String {
    use crate::units::{bytes, ms, rate as r};
    let seg = x.segment_time_s(rate);
    let whole = x.largest_segment as f64 / rate;
    if seg > 0.0 {
        let (base, add, largest) = (ms(x.base_rtt_s), ms(seg), bytes(x.largest_segment as f64));
        // Less than the whole segment's time where the data's own round trips took no more.
        let why = if seg < whole * 0.999 {
            format!("its data segments' round trips took that beyond the handshake's, less than its largest segment ({largest}) takes at this rate")
        } else {
            format!(
                "its largest segment ({largest}) takes that at this rate, and the handshake's round trip carried none"
            )
        };
        format!("{} x (base RTT {base} + {add}: {why})", r(rate))
    } else {
        format!("{} x base RTT {}", r(rate), ms(x.base_rtt_s))
    }
}

/// The why of a verdict that none of its rule's own signs decided: `classify` found the
/// flow below capacity over the steady transfer and named what kept it there (`holder`).
/// None when the flow was not below capacity (or had no judged capacity).
pub fn kept_below(f: &Findings<'_>, holder: &str) -> Option<String> {
    let u = f.class.utilisation?;
    // The link's figure, where the intervals a queue stood in raise it (`classify`).
    let link = f
        .class
        .link_utilisation
        .filter(|&l| crate::units::pct(l) != crate::units::pct(u));
    // The group's, where members sharing the path measured more than this one.
    let group = f
        .class
        .group_utilisation
        .filter(|&g| crate::units::pct(g) != crate::units::pct(u.max(link.unwrap_or(0.0))) && g > u);
    if u.max(link.unwrap_or(0.0)).max(group.unwrap_or(0.0)) >= bottleneck::AT_CAPACITY {
        return None;
    }
    let link = link.map_or(String::new(), |l| {
        format!(
            " and the link, counting the intervals a queue stood in as full, carried {}",
            crate::units::pct_beside(l, bottleneck::AT_CAPACITY)
        )
    });
    let group = group.map_or(String::new(), |g| {
        format!(
            ", and the flows sharing the path together at most {}",
            crate::units::pct_beside(g, bottleneck::AT_CAPACITY)
        )
    });
    Some(format!(
        "over the steady transfer the flow delivered {} of the capacity while it had data{link}{group}, below the {} a full path gives, so the path did not hold it back as a whole; {holder} kept it below",
        crate::units::pct_beside(u, bottleneck::AT_CAPACITY),
        crate::units::pct(bottleneck::AT_CAPACITY)
    ))
}

/// The law of a verdict beside a larger share of another limit (on the summary): a sentence
/// says why, with the shares the limits print. The cwnd verdict's has its own
/// ([`cwnd::law`]): it names the bottleneck's share only.
pub fn verdict_law(f: &crate::summary::FlowSummary) -> Vec<String> {
    // Whatever the verdict, the sign a sentence names holds by its own figures.
    let mut out: Vec<String> = f
        .evidence
        .iter()
        .filter(|e| e.contains(" though the "))
        .filter_map(|e| sign_contradicted(e).map(|why| format!("{why}: {e}")))
        .collect();
    let (Some(lim), crate::summary::Verdict::Limited(l)) = (&f.limits, f.verdict) else {
        return out;
    };
    if l == Label::Cwnd {
        return out;
    }
    let share = |x: Label| match x {
        Label::ReceiverWindow => lim.receiver_window,
        Label::Cwnd => lim.cwnd,
        Label::Bottleneck => lim.bottleneck,
        Label::Sender => lim.sender,
    };
    let Some(other) = larger_than(l, share) else {
        return out;
    };
    let said = beside(l, other, share(other), share(l));
    if !f.evidence.iter().any(|e| e.starts_with(&said)) {
        out.push(format!(
            "{l} beside a larger {} share, and no sentence says why ({said})",
            other.as_str()
        ));
    }
    out
}

/// In a why-sentence, a figure "at least the" threshold must be at least it, and one
/// "below the" threshold not above it (as printed: whole percents round both the same
/// way). Each threshold is compared with the last percentage before it in its clause (a
/// colon or semicolon ends one). None when every one holds; else what broke ("26% is not
/// at least the 40%").
fn sign_contradicted(sentence: &str) -> Option<String> {
    let bare = |w: &str| {
        w.trim_matches(|c: char| matches!(c, ',' | '(' | ')' | ':' | ';'))
            .to_string()
    };
    let percent = |w: &str| -> Option<f64> { w.strip_suffix('%')?.parse().ok() };
    let words: Vec<&str> = sentence.split(' ').collect();
    let mut last: Option<f64> = None;
    for (i, raw) in words.iter().enumerate() {
        let w = bare(raw);
        let cmp = match (w.as_str(), words.get(i + 1)) {
            ("least", Some(&"the")) if i > 0 && words[i - 1] == "at" => Some("at least"),
            ("below", Some(&"the")) => Some("below"),
            _ => None,
        };
        if let (Some(cmp), Some(x), Some(y)) = (cmp, last, words.get(i + 2).and_then(|t| percent(&bare(t)))) {
            let holds = if cmp == "at least" { x >= y } else { x <= y };
            if !holds {
                return Some(format!("{x}% is not {cmp} the {y}%"));
            }
        }
        if let Some(p) = percent(&w) {
            last = Some(p);
        }
        if raw.ends_with(':') || raw.ends_with(';') {
            last = None;
        }
    }
    None
}

/// What a rule sees of one bin of the timeline.
pub struct BinCtx<'a> {
    pub bin: &'a Bin,
    /// Delivery around the bin (one round each side), bytes/s; the path's when shared.
    pub local_rate: f64,
    /// The capacity judged against (bytes/s), when trusted.
    pub capacity: Option<f64>,
    /// The bin lies in a loss-free flat stretch of the flight.
    pub plateau: bool,
    /// The bin lies in a flat stretch whose flight held at least the BDP while the RTT
    /// rose to hold it (see `bottleneck::FullPipe`).
    pub full_pipe: bool,
    /// The bin lies in an interval with a standing queue.
    pub queue: bool,
}

/// The bin's time not yet claimed, by the sender's state (ns).
#[derive(Clone, Copy, Debug, Default)]
pub struct Left {
    pub busy: u64,
    pub rwnd: u64,
    pub idle: u64,
}

/// A rule that explains time.
pub trait Claim: Sync {
    fn name(&self) -> &'static str;
    fn label(&self) -> Label;
    /// Takes from `left` the time this rule explains in the bin; returns it (ns).
    fn claim(&self, b: &BinCtx<'_>, left: &mut Left) -> u64;
}

/// The claims in precedence order.
pub const CLAIMS: &[&dyn Claim] = &[
    &sender::Idle,
    &sender::WindowUnused,
    &receiver_window::Full,
    &bottleneck::StandingQueue,
    &bottleneck::AtCapacity,
    &bottleneck::FullPipe,
    &sender::Plateau,
    &cwnd::Remainder,
];

/// What the full-pipe sentence (bottleneck.rs) says of its time: `FullPipe` claims it for
/// the bottleneck before the sender's plateau can, and the sender's law (sender.rs) checks
/// the shares against it.
pub const FULL_PIPE_COUNTED: &str = "in the bottleneck's share";

/// The account the verdict is judged from.
pub struct Account {
    /// Shares of the steady transfer by label (`Label::index()`).
    pub fractions: [f64; 4],
    pub idle_share: f64,
    /// A queue stood most of the steady transfer (`StandingQueue::most_of_the_time`).
    pub standing_queue: bool,
    /// Share of the steady transfer claimed by `bottleneck::FullPipe`.
    pub full_pipe_share: f64,
    pub utilisation: Option<f64>,
    /// The flow's own steady delivery over the capacity, over all the steady time, idle
    /// included.
    pub own_utilisation: Option<f64>,
    /// Of `idle_share`, the share in which the sender left room unused with data still in
    /// flight (`timeline::Bin::idle_room_ns`).
    pub room_idle_share: f64,
    /// Share of the steady transfer claimed by `sender::WindowUnused`: the congestion window
    /// the sender left unused in loss recovery.
    pub window_unused_share: f64,
    /// The flow shares its path with others.
    pub shared: bool,
    /// Of a flow sharing the path: the group's utilisation (the largest any member
    /// measured), once the group was judged.
    pub group_utilisation: Option<f64>,
}

/// A rule that can decide the verdict.
pub trait Verdict: Sync {
    fn label(&self) -> Label;
    fn decides(&self, a: &Account) -> bool;
}

/// The spec's precedence: sender, bottleneck (by utilisation or a standing queue), receiver
/// window by share, the sender's window left unused in recovery; otherwise the largest
/// share (see `classify`).
pub const VERDICTS: &[&dyn Verdict] = &[
    &sender::Decides,
    &bottleneck::Decides,
    &receiver_window::Decides,
    &sender::WindowUnusedDecides,
];

/// Every rule's evidence, in the order of the labels.
pub fn evidence(f: &Findings<'_>) -> Vec<String> {
    let mut out = Vec::new();
    out.extend(receiver_window::evidence(f));
    out.extend(bottleneck::evidence(f));
    out.extend(sender::evidence(f));
    out.extend(cwnd::evidence(f));
    out
}

/// The advice of the verdict's rule.
pub fn advice(f: &Findings<'_>) -> Vec<AdviceItem> {
    match f.class.verdict {
        Label::ReceiverWindow => receiver_window::advice(f),
        Label::Bottleneck => bottleneck::advice(f),
        Label::Sender => sender::advice(f),
        Label::Cwnd => cwnd::advice(f),
    }
}

/// A hand-made transfer for the rules' tests: 5 s of 10 ms bins over a 40 ms path whose
/// bottleneck carries 1 MB/s, each bin described by what the sender was doing.
#[cfg(test)]
pub(crate) mod fixture {
    use crate::diagnose::classification::Classification;
    use crate::diagnose::classify::{classify, Input};
    use crate::diagnose::timeline::Timeline;
    use crate::time::{Span, Timestamp};

    pub const CAPACITY: f64 = 1_000_000.0;
    pub const MSS: u32 = 1448;
    pub const BASE_RTT: Span = Span::from_millis(40);
    const BIN: Span = Span::from_millis(10);

    /// What one 10 ms bin held.
    #[derive(Clone, Copy)]
    pub struct Bin {
        pub busy: f64,
        pub rwnd: f64,
        pub idle: f64,
        /// Bytes delivered in the bin.
        pub delivered: u64,
        pub flight: u64,
        pub retransmissions: u32,
        /// The receiver's window as the sender read it in the bin (0: none recorded).
        pub window: u64,
        /// Of the busy time, the share of the congestion window left unused in recovery.
        pub unused: f64,
    }

    pub const BUSY: Bin = Bin {
        busy: 1.0,
        rwnd: 0.0,
        idle: 0.0,
        delivered: 0,
        flight: 0,
        retransmissions: 0,
        window: 0,
        unused: 0.0,
    };

    pub fn timeline(bin: impl Fn(usize) -> Bin) -> Timeline {
        let t0 = Timestamp(1_000_000_000_000);
        let mut tl = Timeline::new(t0);
        for i in 0..500 {
            let b = bin(i);
            let at = t0 + Span(BIN.nanos() * i as i64);
            let x = tl.bin(at);
            let ns = BIN.nanos() as f64;
            // `+=`: the timeline's own bins are coarser than these once it has merged.
            x.busy_ns += (b.busy * ns) as u64;
            x.unused_window_ns += (b.unused * b.busy * ns) as u64;
            x.rwnd_ns += (b.rwnd * ns) as u64;
            x.idle_ns += (b.idle * ns) as u64;
            x.delivered += b.delivered;
            x.max_flight = x.max_flight.max(b.flight);
            if b.flight > 0 {
                x.min_flight = Some(x.min_flight.map_or(b.flight, |m| m.min(b.flight)));
            }
            x.retransmissions += b.retransmissions;
            if b.window > 0 {
                x.max_window = x.max_window.max(b.window);
                x.min_window = Some(x.min_window.map_or(b.window, |m| m.min(b.window)));
            }
        }
        tl
    }

    /// Classifies 500 bins made by `bin(i)`.
    pub fn run(bin: impl Fn(usize) -> Bin) -> Classification {
        run_with(bin, false)
    }

    /// The same, with the flow's RTT raised above the base (`Input::rtt_rose`) or not.
    pub fn run_with(bin: impl Fn(usize) -> Bin, rtt_rose: bool) -> Classification {
        let tl = timeline(bin);
        classify(&Input {
            tl: &tl,
            capacity: Some(CAPACITY),
            pipe: Some(CAPACITY * BASE_RTT.secs_f64()),
            base_rtt: BASE_RTT,
            mss: MSS,
            shared_delivered: None,
            group_utilisation: None,
            queue: None,
            rtt_rose,
            excluded: &[],
            recovered: None,
        })
    }

    /// Bytes a bin delivers at `share` of the capacity.
    pub fn at(share: f64) -> u64 {
        (CAPACITY * share * BIN.secs_f64()) as u64
    }
}

#[cfg(test)]
mod sign_tests {
    use super::sign_contradicted;

    #[test]
    fn a_sign_must_hold_by_the_sentences_own_figures() {
        let ok = [
            "sender-limited though the bottleneck's share of the time is larger (51% against 39%): the sender idled 39% of the time, at least the 25% that makes the application the limit: it had nothing to send that long",
            "bottleneck-limited though the receiver window's share of the time is larger (44% against 39%): over the steady transfer the flow delivered 87% of the capacity while it had data, at least the 85% a full path gives, so the path held it back as a whole",
            "cwnd-limited though the bottleneck's share of the time is larger (71% against 28%): over the steady transfer the flow delivered 85% of the capacity while it had data, below the 85% a full path gives, so the path did not hold it back as a whole; the congestion window kept it below",
        ];
        for s in ok {
            assert_eq!(sign_contradicted(s), None, "{s}");
        }
        // What the sender rule printed for a verdict its signs had not decided.
        let bad = "sender-limited though the bottleneck's share of the time is larger (74% against 26%): the sender's own flat flight held it 26% of the time, at least the 40% that makes the sender the limit";
        assert_eq!(sign_contradicted(bad).as_deref(), Some("26% is not at least the 40%"));
        let bad = "cwnd-limited though the bottleneck's share of the time is larger (60% against 40%): over the steady transfer the flow delivered 90% of the capacity while it had data, below the 85% a full path gives";
        assert_eq!(sign_contradicted(bad).as_deref(), Some("90% is not below the 85%"));
    }
}
