//! The results of an analysis as plain data (serde): what `analyze --format json` prints
//! and what tables, plots and reports are built from. Field names follow
//! ../shared/spec/interface.md; fields beyond the spec are additions, never renames.

use crate::capture::{Compression, Container};
use crate::endpoint::Dir;
use crate::vocabulary;
use serde::{Deserialize, Serialize};

vocabulary! {
    /// What limited a flow (or one period of it): the four limit labels of
    /// ../shared/spec/interface.md.
    #[derive(PartialOrd, Ord)]
    pub enum Label {
        ReceiverWindow = "receiver-window-limited",
        Cwnd = "cwnd-limited",
        Bottleneck = "bottleneck-limited",
        Sender = "sender-limited",
    }
}

impl Label {
    /// Index for per-label arrays, in the spec's order.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A flow's verdict: one of the four labels, or undetermined (too little data to judge;
/// the notes say why).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    Limited(Label),
    Undetermined,
}

impl Verdict {
    /// Every verdict: the labels in the spec's order, undetermined last.
    pub const ALL: [Verdict; 5] = [
        Verdict::Limited(Label::ReceiverWindow),
        Verdict::Limited(Label::Cwnd),
        Verdict::Limited(Label::Bottleneck),
        Verdict::Limited(Label::Sender),
        Verdict::Undetermined,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Verdict::Limited(l) => l.as_str(),
            Verdict::Undetermined => "undetermined",
        }
    }

    /// The label, for a flow that was judged.
    pub fn label(self) -> Option<Label> {
        match self {
            Verdict::Limited(l) => Some(l),
            Verdict::Undetermined => None,
        }
    }

    pub fn is_judged(self) -> bool {
        self != Verdict::Undetermined
    }

    /// Index for per-verdict arrays, in the order of [`Verdict::ALL`].
    pub fn index(self) -> usize {
        match self {
            Verdict::Limited(l) => l.index(),
            Verdict::Undetermined => Label::ALL.len(),
        }
    }
}

impl From<Label> for Verdict {
    fn from(l: Label) -> Verdict {
        Verdict::Limited(l)
    }
}

impl PartialEq<Label> for Verdict {
    fn eq(&self, l: &Label) -> bool {
        *self == Verdict::Limited(*l)
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

impl std::str::FromStr for Verdict {
    type Err = crate::vocabulary::UnknownWord;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Verdict::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| crate::vocabulary::UnknownWord {
                vocabulary: "Verdict",
                word: s.to_string(),
                expected: Verdict::ALL.iter().map(|v| v.as_str()).collect(),
            })
    }
}

impl Serialize for Verdict {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Verdict {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

vocabulary! {
    /// How sure a finding or an inference is. Ordered: `Possible < Likely < Certain`.
    #[derive(PartialOrd, Ord)]
    pub enum Confidence {
        /// The capture is consistent with it, and with other explanations.
        Possible = "possible",
        /// The simplest explanation; others are not ruled out.
        Likely = "likely",
        /// Only this explains what the capture shows.
        Certain = "certain",
    }
}

vocabulary! {
    /// Whether window scaling is in force (RFC 7323 §2.2: both SYNs carried the option).
    pub enum WindowScaling {
        On = "on",
        Off = "off",
        /// The handshake is not in the capture.
        Unknown = "unknown",
    }
}

vocabulary! {
    /// What one end's SYN (client) or SYN/ACK (server) said of ECN (`tcp::ecn`).
    pub enum EcnOffer {
        /// Neither asked nor agreed.
        No = "no",
        /// RFC 3168 ECN: a SYN with ECE and CWR, a SYN/ACK with ECE alone (§6.1.1).
        Rfc3168 = "rfc3168",
        /// Accurate ECN: a SYN with AE, CWR and ECE, or a SYN/ACK in its codes (RFC 9768
        /// §3.1).
        AccEcn = "accecn",
    }
}

vocabulary! {
    /// ECN as the handshake set it up (`tcp::ecn::negotiate`).
    #[derive(Default)]
    pub enum EcnMode {
        /// RFC 3168: CE marks are echoed with ECE until the sender's CWR.
        Rfc3168 = "rfc3168",
        /// Accurate ECN (RFC 9768): CE marks are counted back in the ACE field, which
        /// bdpscope does not decode.
        AccEcn = "accecn",
        Off = "off",
        /// The handshake is not in the capture, or only the SYN of an end that asked.
        #[default]
        Unknown = "unknown",
    }
}

vocabulary! {
    /// Where the capture was taken, judged from the two RTT loops.
    #[derive(Default)]
    pub enum Vantage {
        Client = "client",
        Server = "server",
        Middle = "middle",
        #[default]
        Unknown = "unknown",
    }
}

impl Vantage {
    /// The vantage next to the end that sends in direction `d` (the client sends c2s).
    pub fn next_to_sender(d: Dir) -> Vantage {
        match d {
            Dir::C2S => Vantage::Client,
            Dir::S2C => Vantage::Server,
        }
    }
}

vocabulary! {
    /// How the client was identified.
    pub enum ClientFrom {
        /// It sent the SYN.
        Syn = "syn",
        /// No SYN in the capture: the end with the higher (ephemeral) port.
        Port = "port",
    }
}

vocabulary! {
    /// How a connection stood at its end.
    pub enum EndState {
        /// FIN both ways.
        Closed = "closed",
        Reset = "reset",
        /// Still open at the end of the capture (or when it was ended early).
        Open = "open",
    }
}

vocabulary! {
    /// What a middlebox did to the handshake (`middlebox[].kind` of the interface contract).
    pub enum MiddleboxKind {
        WscaleStripped = "wscale-stripped",
        MssClamped = "mss-clamped",
        TimestampsStripped = "timestamps-stripped",
        SackStripped = "sack-stripped",
        WscaleMismatch = "wscale-mismatch",
    }
}

vocabulary! {
    /// Which handshake segment lost (or had rewritten) an option.
    pub enum HsSegment {
        Syn = "syn",
        SynAck = "syn-ack",
        Both = "both",
    }
}

impl MiddleboxKind {
    /// A finding about the window-scale option.
    pub fn is_window_scale(self) -> bool {
        matches!(self, MiddleboxKind::WscaleStripped | MiddleboxKind::WscaleMismatch)
    }
}

impl HsSegment {
    /// The handshake segment sent by the end that sends in direction `d`.
    pub fn sent_by(d: Dir) -> HsSegment {
        match d {
            Dir::C2S => HsSegment::Syn,
            Dir::S2C => HsSegment::SynAck,
        }
    }

    /// The handshake segment the end sending in direction `d` receives.
    pub fn received_by(d: Dir) -> HsSegment {
        HsSegment::sent_by(d.reverse())
    }
}

vocabulary! {
    /// A flood or a scan (`bdpscope::flood`).
    pub enum FloodKind {
        SynFlood = "syn-flood",
        PortScan = "port-scan",
        AddressScan = "address-scan",
        FailedAttempts = "failed-attempts",
    }
}

vocabulary! {
    /// How the bottleneck rate was found.
    pub enum CapacityMethod {
        /// Given by the user (`--link-rate`), converted to payload: the word says whose it is.
        LinkRate = "user-link-rate",
        /// The best delivery rate over a round trip (the pipe was full at some point).
        DeliveryRate = "delivery-rate",
        /// Delivery while a standing queue showed the link full.
        QueueDeliveryRate = "queue-delivery-rate",
        /// The spacing of ACKs (packet-train dispersion).
        Dispersion = "dispersion",
        /// The spacing of data segments arriving at a capture point past the bottleneck.
        ArrivalDispersion = "arrival-dispersion",
        /// The spacing of ACKs on the receiver's clock (their TCP timestamps): what the
        /// receiver saw arrive, where ACK compression on the way back made the capture's
        /// spacing of the ACKs useless.
        ReceiverClockDispersion = "receiver-clock-dispersion",
        /// The summed delivery rate of flows sharing the path.
        SharedDeliveryRate = "shared-delivery-rate",
        /// The rate a token-bucket policer enforced: the flow's delivery while it lost
        /// packets to it (Flach et al., SIGCOMM 2016).
        PolicedRate = "policed-rate",
    }
}

vocabulary! {
    /// What time a goodput is over: the bulk data's own span (its first segment to its
    /// last, with no ACK to date delivery), the delivery its ACKs dated (first data to the
    /// last ACK that moved, less the loop from the capture point to the receiver and
    /// back; or the ACKs' own span, from the first that moved, where that is slower), or
    /// one round trip (data that all passed within one: no rate over less).
    pub enum GoodputBasis {
        Data = "data",
        Delivery = "delivery",
        RoundTrip = "round-trip",
    }
}

/// The bulk sender's idle pauses, and those the other end's answers ended (its data came
/// during the pause and the sender went on only after it).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct IdleTurns {
    /// Idle time over the connection, from each pause's start to the next data (s).
    pub idle_s: f64,
    /// Of it, the pauses the other end's answers ended (s).
    pub answered_s: f64,
    pub pauses: u32,
    pub answered: u32,
    /// Median time from the sender's last data to the answer, seen from the capture point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_answer_ms: Option<f64>,
    /// Median time the sender took after an answer reached it before it sent again (its
    /// own, not the other end's turn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_after_answer_ms: Option<f64>,
}

/// The time a goodput is over, and what that time is.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct GoodputOver {
    pub basis: GoodputBasis,
    pub seconds: f64,
    /// The bytes counted over that time: the data's own span counts what passed after its
    /// first segment, a delivery what the ACKs covered.
    #[serde(default)]
    pub bytes: u64,
}

vocabulary! {
    /// What moved a stalled transfer again.
    pub enum Resumed {
        WindowUpdate = "window update",
        Acknowledgment = "acknowledgment",
        Retransmission = "retransmission",
    }
}

/// One capture file's outcome.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CaptureSummary {
    pub path: String,
    pub format: Container,
    pub compression: Compression,
    /// Packet records read.
    pub packets: u64,
    pub tcp_segments: u64,
    pub flows: u64,
    pub first_ts: Option<f64>,
    pub last_ts: Option<f64>,
    /// Records that were not TCP, by reason ("not IP (ethertype 0x0806)": 12, ...).
    pub skipped: Vec<SkipCount>,
    pub link_types: Vec<String>,
    pub warnings: Vec<String>,
    /// The connection attempts (connections opened by a SYN) and what they came to.
    pub attempts: AttemptCounts,
    /// SYNs per bin of capture time; none without SYNs.
    pub syn_rate: Option<RateSeries>,
    /// Floods and scans (`bdpscope::flood`), heaviest first.
    pub floods: Vec<FloodFinding>,
    /// How connections were held and ended: the memory estimate, the budget, expiry.
    pub connections: ConnectionCounts,
    /// Records set aside as capture duplicates: the same IP datagram recorded again
    /// (`flow::duplicate`); counted in `packets` and `tcp_segments`, in no flow.
    #[serde(default)]
    pub capture_duplicates: u64,
}

/// Where the capture lacks the acknowledgments of a direction's data: the waits for one
/// that the capture holds none of while they reached the sender (`stall::outage`: the sender
/// kept sending new data through them and never re-sent its oldest, RFC 6298 §5.4 and RFC
/// 5681 §3.1; or had more outstanding than a congestion window grows to on what the capture
/// shows acknowledged; or acknowledged the peer's data the capture never saw, RFC 9293
/// §3.10.7.4).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct AcksLacking {
    /// The waits (capture time, seconds since the epoch), the first [`AcksLacking::MAX_WAITS`];
    /// later ones are merged into the last.
    pub waits: Vec<Wait>,
    /// Their total length, seconds.
    pub seconds: f64,
}

/// A span of capture time, seconds since the epoch.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct Wait {
    pub start: f64,
    pub end: f64,
}

impl AcksLacking {
    /// Waits kept one by one.
    pub const MAX_WAITS: usize = 16;

    /// Whether [start, end] meets one of the waits (ends included: an episode of one
    /// instant inside a wait meets it).
    pub fn meets(&self, start: f64, end: f64) -> bool {
        self.waits.iter().any(|w| start <= w.end && w.start <= end)
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct AttemptCounts {
    /// SYN segments of clients (retransmissions included).
    pub syns: u64,
    /// Connections opened by a SYN.
    pub attempts: u64,
    /// What they came to: no answer; refused (reset); half-open (SYN/ACK, no completed
    /// handshake); handshake completed without data; data.
    pub unanswered: u64,
    pub refused: u64,
    pub half_open: u64,
    pub completed: u64,
    pub with_data: u64,
    /// Attempts without data that a flood or scan finding summarises: not in `flows`
    /// (unless `--all`).
    pub folded: u64,
    /// Distinct source addresses, destination hosts and destination ports of the
    /// attempts (HyperLogLog estimates, exact for small counts).
    pub distinct_sources: u64,
    pub distinct_hosts: u64,
    pub distinct_ports: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RateSeries {
    /// Start of the first bin (seconds since the epoch) and the bins' width.
    pub start_ts: f64,
    pub bin_s: f64,
    pub syns: Vec<u64>,
    /// The second with the most SYNs.
    pub peak: Option<PeakSecond>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PeakSecond {
    /// Start of the second (seconds since the epoch).
    pub ts: f64,
    pub syns: u64,
}

/// A flood or a scan: its kind, who and what, the figures, and the rule it met.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FloodFinding {
    pub kind: FloodKind,
    /// The service ("10.0.0.1:80"), host ("10.0.0.1") or port ("port 22") attacked or
    /// scanned; none for the whole capture.
    pub target: Option<String>,
    /// The scanning host, for scans.
    pub source: Option<String>,
    pub attempts: u64,
    /// Attempts that failed (no data, no completed handshake: Zeek's failed connection).
    pub failed: u64,
    pub answered_share: f64,
    pub completed_share: f64,
    pub distinct_sources: Option<u64>,
    pub distinct_ports: Option<u64>,
    pub distinct_hosts: Option<u64>,
    pub first_ts: f64,
    pub last_ts: f64,
    /// The second with the most SYNs of this finding (floods and the whole capture).
    pub peak: Option<PeakSecond>,
    /// The figures in one sentence.
    pub evidence: String,
    /// The general rule it met, and where the rule comes from.
    pub rule: String,
}

/// How the live connections were held (bdpscope keeps state only for connections alive
/// at once, a cheap record for those that have not carried data).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ConnectionCounts {
    /// Most connections live at once, and most of them held as attempt records.
    pub peak_live: u64,
    pub peak_attempt_records: u64,
    /// The estimated memory of live connections at its peak, and the budgets.
    pub peak_bytes: u64,
    pub budget_bytes: u64,
    pub attempt_budget_bytes: u64,
    /// Connections ended early for the budget (least valuable first): without data, and
    /// with data (such a connection's later packets start a new flow).
    pub evicted_without_data: u64,
    pub evicted_with_data: u64,
    /// Connections ended by silence past their state's timeout.
    pub expired_syn_sent: u64,
    pub expired_syn_received: u64,
    pub expired_established: u64,
    pub expired_closed: u64,
    /// Ended because a segment started a new connection on the tuple.
    pub replaced: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SkipCount {
    pub reason: String,
    pub records: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct HandshakeSummary {
    pub seen: bool,
    pub client_wscale: Option<u8>,
    pub server_wscale: Option<u8>,
    pub client_mss: Option<u16>,
    pub server_mss: Option<u16>,
    pub window_scaling: WindowScaling,
    pub client_sack_permitted: Option<bool>,
    pub server_sack_permitted: Option<bool>,
    pub client_timestamps: Option<bool>,
    pub server_timestamps: Option<bool>,
    pub syn_retransmissions: u32,
    /// When the handshake is missing: the shifts inferred from behaviour.
    pub inferred: Option<InferredScales>,
    /// What each SYN said of ECN (None: that SYN is not in the capture), and what the
    /// handshake set up (RFC 3168 §6.1.1, RFC 9768 §3.1).
    #[serde(default)]
    pub client_ecn: Option<EcnOffer>,
    #[serde(default)]
    pub server_ecn: Option<EcnOffer>,
    #[serde(default)]
    pub ecn: EcnMode,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct InferredScales {
    pub client_wscale: Option<u8>,
    pub server_wscale: Option<u8>,
    /// The weakest of the two ends' inferences.
    pub confidence: Confidence,
    pub evidence: String,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct Bytes {
    pub c2s: u64,
    pub s2c: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct RttStats {
    pub samples: u64,
    pub min: Option<f64>,
    pub median: Option<f64>,
    pub p95: Option<f64>,
    pub max: Option<f64>,
    /// Minimum of the loop capture point -> client -> capture point, and through the server.
    pub via_client_min: Option<f64>,
    pub via_server_min: Option<f64>,
    /// Samples by source: handshake, data/ACK (either way: data and the ACK that covers it,
    /// or a window update and the data it released), timestamp echo.
    pub handshake_samples: u64,
    pub data_ack_samples: u64,
    pub ts_echo_samples: u64,
    /// Where the capture was taken, judged from the two loops.
    pub vantage: Vantage,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct Limits {
    #[serde(rename = "receiver-window-limited")]
    pub receiver_window: f64,
    #[serde(rename = "cwnd-limited")]
    pub cwnd: f64,
    #[serde(rename = "bottleneck-limited")]
    pub bottleneck: f64,
    #[serde(rename = "sender-limited")]
    pub sender: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct MiddleboxFinding {
    pub kind: MiddleboxKind,
    pub direction: HsSegment,
    pub confidence: Confidence,
    pub evidence: String,
}

/// A period of the transfer with one limitation label.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Period {
    pub start: f64,
    pub end: f64,
    pub label: Label,
}

vocabulary! {
    /// What kind of stall or failure a [`Stall`] is.
    pub enum StallKind {
        /// The receiver's window was zero.
        ZeroWindow = "zero-window",
        /// Data outstanding, nothing acknowledged for longer than a retransmission timer.
        Outage = "outage",
        /// Retransmissions of the same data backing off, then answered.
        RtoBackoff = "rto-backoff",
        /// Retransmissions never answered before the capture ended.
        Lost = "lost",
        /// A run of retransmissions (see `stall::loss`).
        LossEpisode = "loss-episode",
        /// A run of retransmissions the receiver reported receiving twice, every one of
        /// them (D-SACK, RFC 2883): nothing was lost (RFC 3708), the sender re-sent early.
        SpuriousRetransmission = "spurious-retransmission",
        /// A run of ECN congestion marks and window reductions (see `stall::ecn`).
        EcnEpisode = "ecn-episode",
        /// Short segments waiting for delayed ACKs, repeatedly (see `stall::delayed_ack`).
        DelayedAck = "delayed-ack",
        /// A reset ended (or refused) the connection.
        Reset = "reset",
        /// The connection carried only keep-alives.
        KeepAliveOnly = "keep-alive-only",
        /// The cumulative ACK stood still on a hole for longer than a retransmission timer
        /// while the receiver's ACKs (SACKs, duplicates) kept coming: the sender's loss
        /// recovery, not the path, held the transfer.
        UnrepairedHole = "unrepaired-hole",
        /// The client sent its SYN more than once before the SYN/ACK: the connection's
        /// setup waited on its retransmission timer.
        SynRetransmission = "syn-retransmission",
        /// An end sent its FIN more than once: its close waited for an ACK.
        FinRetransmission = "fin-retransmission",
    }
}

impl StallKind {
    /// A run of congestion signals (losses, or ECN marks) the path carried data through:
    /// its delivery is a rate the path sustained.
    pub fn is_congestion_episode(self) -> bool {
        matches!(self, StallKind::LossEpisode | StallKind::EcnEpisode)
    }
}

/// A time the connection stopped moving, or how it ended: found for every flow, judged or
/// not.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Stall {
    pub kind: StallKind,
    /// The data direction that stalled (for a reset: the direction of the RST).
    pub direction: Option<Dir>,
    /// Capture time, seconds since the epoch.
    pub start: f64,
    pub end: f64,
    pub duration_s: f64,
    /// Whether the transfer moved again afterwards.
    pub recovered: bool,
    /// Probes, retransmissions or keep-alives during it (an ECN episode: its CE marks, ECE
    /// echoes and CWR together).
    pub events: u32,
    /// Intervals between those events (the first few): a back-off doubles them.
    pub intervals_s: Vec<f64>,
    /// What moved the transfer again.
    pub resumed_by: Option<Resumed>,
    /// A loss or ECN episode of at least a round trip: the delivery its ACKs reported
    /// during it (bit/s, payload). A delivery the path carried, so the direction's capacity
    /// estimate is never below it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered_bps: Option<f64>,
    pub sentence: String,
}

/// How the bottleneck rate was reached: every estimate, and why any was set aside.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CapacitySummary {
    /// The method of `bottleneck_bps` (as `bottleneck_method`).
    pub method: CapacityMethod,
    /// The figure is only a lower bound: the flow never showed a full pipe (no standing
    /// queue, no loss, no packet spacing at that rate).
    pub lower_bound: bool,
    /// The user gave it (`--link-rate`).
    pub given: bool,
    /// The estimates, bit/s (payload), where the capture allowed them.
    pub delivery_bps: Option<f64>,
    pub ack_dispersion_bps: Option<f64>,
    pub arrival_dispersion_bps: Option<f64>,
    /// Delivery while a standing queue showed the link full.
    pub queue_delivery_bps: Option<f64>,
    /// On a link shared with traffic the capture does not show (a standing queue while the
    /// flow delivered well below the link's packet spacing): what the link left this flow,
    /// the rate it is judged against (bit/s, payload). `bottleneck_bps` is the link's; the
    /// difference is the traffic the capture does not show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_bps: Option<f64>,
    /// ACK dispersion on the receiver's clock (TSval), where it was used: the ACKs came
    /// back compressed behind data going the other way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver_clock_dispersion_bps: Option<f64>,
    /// Delivery over the same windows as `delivery_bps`, whatever the sender did (its
    /// app-limited windows too): what the path carried, a floor of the estimate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_limited_delivery_bps: Option<f64>,
    /// The largest delivery-rate sample over a round trip or more (Linux's tcp_rate.c,
    /// taken at the capture point): bytes delivered since a segment passed, over the longer
    /// of its send and ACK phases, bit/s (payload). A rate the path carried: a floor of
    /// the estimate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trip_delivery_bps: Option<f64>,
    /// A token-bucket policer the losses showed: its rate (bit/s, payload) and the depth of
    /// the least bucket that passed what the flow delivered (bytes). Over an interval T
    /// such a path carries up to depth + rate x T, so delivery over a few RTTs may exceed
    /// the rate it sustains. The depth is absent when nothing passed above the rate at the
    /// timeline's resolution (a bucket smaller than one bin's tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policed_bps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policer_bucket_bytes: Option<u64>,
    /// The resolution of the capture's timestamps (s): spacing samples span at least ten.
    pub timestamp_resolution_s: f64,
    /// Why an estimate was not taken, one sentence each.
    pub set_aside: Vec<String>,
}

/// A standing queue at the bottleneck (RFC 8289's definition: the minimum delay over an
/// interval stayed above the target).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct QueueSummary {
    /// Share of the steady transfer spent with a standing queue.
    pub standing_share: f64,
    /// The delay the queue kept (median of the intervals' minimum RTT above the base), ms.
    pub delay_ms: f64,
    pub target_ms: f64,
    /// The interval each least RTT was taken over (RFC 8289's 100 ms, the base RTT if
    /// longer, or the flow's own round trip for a transfer too short for two of those), ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_ms: Option<f64>,
    /// Bytes that sat in the queue (delay x bottleneck rate: Little's law).
    pub queued_bytes: Option<u64>,
    /// Those bytes as a share of the largest flight.
    pub flight_share: Option<f64>,
}

vocabulary! {
    /// What an advice item asks for.
    pub enum AdviceKind {
        /// A bigger receive buffer (the window was the limit).
        RaiseReceiveBuffer = "raise-receive-buffer",
        /// Window scaling off: the window cannot pass 64 KiB.
        EnableWindowScaling = "enable-window-scaling",
        /// The receiving application did not read fast enough (zero windows, or a window
        /// that stayed shrunk below the largest it offered).
        ReadFaster = "read-faster",
        /// A bigger send buffer (the flight sat flat below the BDP).
        RaiseSendBuffer = "raise-send-buffer",
        /// The application, not the network, paced the transfer.
        ApplicationPaced = "application-paced",
        /// Losses kept the congestion window down.
        FindLoss = "find-loss",
        /// SACK off made every loss cost more.
        EnableSack = "enable-sack",
        /// Too short to leave slow start.
        ReuseConnections = "reuse-connections",
        /// A standing queue: the window was far above the BDP; less window or an AQM cuts
        /// the delay at the same throughput.
        CutQueue = "cut-queue",
        /// Nagle meeting delayed ACKs.
        DisableNagle = "disable-nagle",
        /// ECN marks: the path's bottleneck was congested (its queue marked instead of
        /// dropping) and congestion control cut the window; no buffer at the ends helps.
        CongestedPath = "congested-path",
    }
}

/// One piece of advice, structured: what to change, to what, and what it should give.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct AdviceItem {
    pub kind: AdviceKind,
    /// The knob: a sysctl or a socket option ("net.ipv4.tcp_rmem max, or SO_RCVBUF").
    pub knob: Option<String>,
    /// What the flow had (bytes: the window, the flight), where the advice changes it.
    pub current_bytes: Option<u64>,
    /// The value to set (bytes), where one can be named.
    pub recommended_bytes: Option<u64>,
    /// The goodput to expect (bit/s) and as a multiple of today's.
    pub expected_bps: Option<f64>,
    pub expected_gain: Option<f64>,
    /// The figures rest on a capacity that is only a lower bound.
    pub lower_bound: bool,
    pub sentence: String,
}

/// Per-direction details beyond the spec's fields.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct DirectionSummary {
    pub packets: u64,
    pub data_segments: u64,
    pub bytes: u64,
    pub retransmitted_segments: u64,
    pub retransmitted_bytes: u64,
    pub duplicate_acks: u64,
    /// Data segments that reached the receiver after data sent after them and were never
    /// re-sent: reordered on the path (RFC 4737). Counted from the receiver's ACKs (holes
    /// below its highest SACK block that the cumulative ACK passed with no retransmission)
    /// or, before the capture point, from the late segments themselves.
    #[serde(default)]
    pub reordered_segments: u64,
    pub zero_window_advertisements: u64,
    pub zero_window_probes: u64,
    pub window_full_events: u64,
    /// Most bytes in flight at the capture point (highest sequence sent less the highest
    /// cumulative ACK seen). None where the capture lacks the receiver's acknowledgments
    /// (`acks_lacking`): data less ACKs the capture never saw is no flight.
    pub max_flight_bytes: Option<u64>,
    /// The most of `max_flight_bytes` that was in the network at the capture point (RFC
    /// 6675 pipe: neither SACKed nor presumed lost); None with it.
    #[serde(default)]
    pub max_in_network_bytes: Option<u64>,
    pub max_segment_bytes: u32,
    /// Largest window the receiver of this direction advertised (bytes, scaled).
    pub max_rwnd_bytes: Option<u64>,
    pub min_rwnd_bytes: Option<u64>,
    pub first_data_ts: Option<f64>,
    /// Payload bytes stamped at `first_data_ts`: they passed the capture point at that
    /// instant (a burst the clock stamped together is one stamp), so the data's own span
    /// carried the rest.
    #[serde(default)]
    pub first_instant_bytes: u64,
    pub last_data_ts: Option<f64>,
    /// Bytes of this direction's data the peer's cumulative ACK moved over in the capture:
    /// what the capture shows delivered.
    #[serde(default)]
    pub acked_bytes: u64,
    /// ECN (RFC 3168), as the capture point saw it: segments of this direction sent
    /// ECN-capable and unmarked (ECT(0), ECT(1)), and marked Congestion Experienced by a
    /// queue before the capture point — the first CE's frame and time, the last's time.
    #[serde(default)]
    pub ect0_segments: u64,
    #[serde(default)]
    pub ect1_segments: u64,
    #[serde(default)]
    pub ce_segments: u64,
    #[serde(default)]
    pub first_ce_frame: Option<u64>,
    #[serde(default)]
    pub first_ce_ts: Option<f64>,
    #[serde(default)]
    pub last_ce_ts: Option<f64>,
    /// ACKs of this direction's data carrying ECE (its receiver echoing CE marks, RFC 3168
    /// §6.1.3; SYN/ACK excepted), and segments of this direction carrying CWR (its
    /// sender's congestion-window reductions, §6.1.2; SYN excepted), each with the first's
    /// and the last's time. Under AccECN both flags are bits of a counter, not these signals.
    #[serde(default)]
    pub ece_acks: u64,
    #[serde(default)]
    pub first_ece_ts: Option<f64>,
    #[serde(default)]
    pub last_ece_ts: Option<f64>,
    #[serde(default)]
    pub cwr_segments: u64,
    #[serde(default)]
    pub first_cwr_ts: Option<f64>,
    #[serde(default)]
    pub last_cwr_ts: Option<f64>,
    /// Records of this direction set aside as capture duplicates (`flow::duplicate`):
    /// not in `packets` nor in any other figure.
    #[serde(default)]
    pub capture_duplicates: u64,
    /// The capture lacks the receiver's acknowledgments of this direction's data (the
    /// notes say what showed it): its flight, its delivery over those waits and the window
    /// scale its flights would tell are not known from the capture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acks_lacking: Option<AcksLacking>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FlowSummary {
    pub id: u64,
    pub capture: String,
    pub client: String,
    pub server: String,
    /// How the client was identified.
    pub client_from: ClientFrom,
    /// Record number (frame) of the connection's first packet in its capture.
    pub first_frame: u64,
    pub start_ts: f64,
    pub end_ts: f64,
    pub duration_s: f64,
    pub packets: u64,
    pub handshake: HandshakeSummary,
    pub bulk_direction: Dir,
    pub bytes: Bytes,
    pub goodput_bps: f64,
    /// No byte of the bulk direction's data was acknowledged in the capture, and its
    /// stalls say none came (the connection lost, an outage to the end): `goodput_bps` is
    /// then a rate of nothing delivered, 0, not a rate unmeasured.
    #[serde(default)]
    pub nothing_delivered: bool,
    /// What time `goodput_bps` is over (absent where it is not measured, or nothing was
    /// delivered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput_over: Option<GoodputOver>,
    pub rtt_ms: RttStats,
    /// The bulk direction's most bytes in flight at the capture point; None where the
    /// capture lacks its receiver's acknowledgments (`{c2s,s2c}.acks_lacking`).
    pub max_flight_bytes: Option<u64>,
    /// Largest flight the data sender had, reconstructed from the capture point (equal to
    /// `max_flight_bytes` next to the sender; next to the receiver the capture point sees
    /// almost nothing in flight while the sender had a window's worth).
    pub sender_max_flight_bytes: Option<u64>,
    /// The most of the sender's flight that was in the network (RFC 6675 pipe: neither
    /// SACKed nor presumed lost; Linux's packets_in_flight). Below `sender_max_flight_bytes`
    /// where a loss left data above a hole outstanding, held at the receiver.
    #[serde(default)]
    pub sender_max_in_network_bytes: Option<u64>,
    /// Whose turn the bulk sender's idle pauses were over the connection (request/response):
    /// absent where it had none, or the flow was not judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_turns: Option<IdleTurns>,
    /// What the path between the data sender and the capture point can have held beyond
    /// the flight seen here (data on its way here, ACKs on their way to the sender): the most
    /// data that reached here within one loop through the sender, that loop's longest
    /// without a wait of the sender's own (queue included), or the loop a TCP timestamp
    /// echo named. `sender_max_flight_bytes` is at most `max_flight_bytes` plus this (and a
    /// segment). Absent where the sender's flight was not reconstructed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_transit_bytes: Option<u64>,
    /// That loop through the sender (capture point -> sender -> capture point), ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_near_loop_ms: Option<f64>,
    pub max_rwnd_bytes: Option<u64>,
    pub retransmitted_segments: u64,
    pub bottleneck_bps: Option<f64>,
    /// How the bottleneck rate was found ("user-link-rate" when it is the user's
    /// `--link-rate`, not a measurement).
    pub bottleneck_method: Option<CapacityMethod>,
    pub bdp_bytes: Option<u64>,
    /// What `bdp_bytes` adds to the base RTT, in ms: one full data segment's serialisation
    /// at the bottleneck rate, when the base RTT is the handshake's (whose packets carry no
    /// data) and the data's samples leave room for it. `bdp_bytes` is the bottleneck rate x
    /// (min RTT + this). Absent when nothing is added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bdp_segment_ms: Option<f64>,
    /// The base RTT, and so `bdp_bytes`, only bounds the path's from above: no round trip
    /// was timed at the handshake and a queue may have stood in every sample (a note says
    /// why). Absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bdp_upper_bound: bool,
    /// How the bottleneck rate was reached (None when no diagnosis).
    pub capacity: Option<CapacitySummary>,
    /// A standing queue, when the flow kept one.
    pub queue: Option<QueueSummary>,
    pub limits: Option<Limits>,
    pub verdict: Verdict,
    pub periods: Vec<Period>,
    pub evidence: Vec<String>,
    pub middlebox: Vec<MiddleboxFinding>,
    pub advice: Vec<String>,
    /// The advice as data: one item per sentence of `advice`, in the same order.
    pub advice_items: Vec<AdviceItem>,
    pub notes: Vec<String>,
    pub end_state: EndState,
    /// Stalls and failures, in time order (zero windows, outages, RTO back-off, loss of the
    /// connection, resets, keep-alive only).
    pub stalls: Vec<Stall>,
    pub c2s: DirectionSummary,
    pub s2c: DirectionSummary,
}

/// What the part of a flight not in the network was, as the sentences name it: data the
/// receiver reported holding above a hole — SACKed where both ends permitted SACK (RFC
/// 6675's pipe), counted from duplicate ACKs where they did not (each one a segment that
/// left the network, RFC 5681 §3.2, as Linux's tcp_add_reno_sack counts it) — or presumed
/// lost. Without the handshake it is not known which.
pub fn flight_rest(sack_permitted: Option<bool>) -> &'static str {
    match sack_permitted {
        Some(true) => "the rest SACKed or presumed lost",
        Some(false) => "the rest reported by duplicate ACKs (no SACK) or presumed lost",
        None => "the rest reported received (SACK or duplicate ACKs) or presumed lost",
    }
}

impl FlowSummary {
    /// Whether both ends permitted SACK in the handshake (None without one).
    pub fn sack_permitted(&self) -> Option<bool> {
        match (
            self.handshake.client_sack_permitted,
            self.handshake.server_sack_permitted,
        ) {
            (Some(a), Some(b)) => Some(a && b),
            _ => None,
        }
    }

    /// The per-direction details of `d`.
    pub fn dir(&self, d: Dir) -> &DirectionSummary {
        match d {
            Dir::C2S => &self.c2s,
            Dir::S2C => &self.s2c,
        }
    }

    /// Whether the capture was taken next to the bulk data's receiver: there the capture
    /// point sees almost nothing in flight (data is acknowledged as it arrives), and its
    /// pipe says little about the sender.
    pub fn near_receiver(&self) -> bool {
        self.rtt_ms.vantage == Vantage::next_to_sender(self.bulk_direction.reverse())
    }
}
