//! A small deterministic TCP simulator that writes realistic captures for tests.
//!
//! One or more TCP connections run over one path:
//!
//! ```text
//! sender host --(A)--> [loss] [shaper] [drop-tail queue] [rate] [one-way delay --(M)--] --(B)--> receiver host
//!             <-(A)---          [queue] [rate, optional]  [ACK-path delay  --(M)--] <-(B)--
//!                      cross traffic -^                   outages cut the link here ^
//! ```
//!
//! `A` is a capture at the sender's interface (data before the bottleneck), `B` one at the
//! receiver's (data after it), `M` an optional tap in the middle of the path ([`Tap`]).
//! Each capture point has its own clock resolution, interrupt coalescing and snaplen
//! ([`CaptureHost`]). The path can hold a token-bucket shaper or policer ([`Shaper`]),
//! outages ([`Outage`]) and cross traffic ([`CrossTraffic`]).
//!
//! Each end runs a [`Stack`]: Linux (the default), Windows, an old stack without window
//! scaling, or BSD, each with its documented defaults; the two ends of a flow can differ.
//! All of them do: handshake options (MSS, window scale, SACK-permitted, 1 ms
//! timestamps) as the stack offers them, Reno or CUBIC (with HyStart) with slow start
//! from the stack's initial window, SACK/RACK or NewReno loss recovery with PRR, RTO with
//! back-off from the stack's floor, cwnd validation and restart after idle, zero-window
//! probes, a send buffer; the receiver delays ACKs (every second segment, the stack's
//! timer; Linux's quick ACKs at the start; immediate ACKs with SACK blocks out of
//! order), advertises its window like Linux's `tcp_select_window`/`tcp_grow_window` or
//! like RFC 1122's silly-window avoidance (never shrinking the right edge) and reads as
//! fast as possible or at a fixed rate. There is no wall clock and no global
//! randomness: the same inputs always give the same bytes.
//!
//! ```
//! use bdpscope::testkit::sim::{self, Flow, Path};
//! use std::time::Duration;
//!
//! let path = Path::new(10_000_000, Duration::from_millis(20)); // 10 Mbit/s, 20 ms
//! let flow = Flow { rcvbuf: 16_000, ..Flow::default() };      // window far below the BDP
//! let out = sim::run(&path, &[flow], Duration::from_secs(1));
//! let t = &out.truth[0];
//! assert!(t.steady.rwnd_share() > 0.9);
//! assert!(out.sender_side_pcap.len() > 24 && out.receiver_side_pcap.len() > 24);
//! ```
//!
//! The captures are Ethernet pcap files with microsecond timestamps (snaplen 128 unless
//! the [`CaptureHost`] says otherwise), packets built with [`crate::testkit::TcpPacket`]
//! and written with [`crate::capture::PcapWriter`]. Addresses: the sender host is
//! 10.0.0.2 (fd00::2), the receiver host 10.0.0.1 (fd00::1); flow `i` uses server port
//! `5001 + i` and client port `40000 + i`; the client is the receiver unless
//! [`Flow::upload`] is set.
//!
//! [`FlowTruth`] is what the simulator knows and a capture analyser has to infer: the
//! sender's time split into receiver-window-limited, cwnd-limited and sender-limited
//! (idle or send buffer / application), the time the bottleneck was busy, the base RTT
//! and the BDP.

mod capture;
mod engine;
mod link;
mod receiver;
mod rng;
mod sender;
mod stack;
mod wire;

pub use capture::{CaptureHost, Coalesce, Tap, Vantage};
pub use stack::{ReceiverModel, Stack, WindowScale};

#[cfg(test)]
mod capture_tests;
#[cfg(test)]
mod path_tests;
#[cfg(test)]
mod stack_tests;
#[cfg(test)]
mod tests;

use crate::diagnose::Label;
use std::time::Duration;

/// The network path shared by all flows of a run.
#[derive(Clone, Debug)]
pub struct Path {
    /// Bottleneck rate in bits/s, counted on Ethernet frame bytes (14-byte header + IP
    /// packet, no preamble or FCS), like the netlab delay line.
    pub rate_bps: u64,
    /// Propagation delay sender -> receiver (after the bottleneck queue).
    pub one_way_delay: Duration,
    /// Propagation delay of the ACK path receiver -> sender; `None` = `one_way_delay`.
    pub ack_delay: Option<Duration>,
    /// Whether the ACK path is serialised at `rate_bps` too (with its own queue of
    /// `queue_pkts`); otherwise it has no bottleneck.
    pub ack_rate_limited: bool,
    /// Drop-tail limit of the bottleneck queue, in packets (the packet being serialised
    /// counts).
    pub queue_pkts: usize,
    /// Probability that a data-direction segment (not SYN) is lost before the queue.
    pub loss: f64,
    /// Seed of every random choice (losses, ISNs, timestamp offsets).
    pub seed: u64,
    /// How the hosts at each end stamp and cut what they capture.
    pub sender_capture: CaptureHost,
    pub receiver_capture: CaptureHost,
    /// A third capture point in the middle of the path.
    pub middle: Option<Tap>,
    /// IPv6 addresses (fd00::/64) instead of IPv4.
    pub ipv6: bool,
    /// A token bucket in the data direction in front of the bottleneck queue (a `tbf`
    /// shaper or a policer); the bottleneck is then the slower of it and `rate_bps`.
    pub shaper: Option<Shaper>,
    /// Times the path is down.
    pub outages: Vec<Outage>,
    /// Other traffic through the bottleneck queue in the data direction.
    pub cross: Option<CrossTraffic>,
    /// An AQM at the data direction's bottleneck queue that marks instead of dropping: an
    /// ECN-capable packet (ECT) that arrives when the queue holds at least this many
    /// packets is marked Congestion Experienced (RFC 3168 §5; a step threshold, as DCTCP's
    /// K, RFC 8257 §3.1, or RED with min_th = max_th). Packets that are not ECN-capable
    /// see only the drop-tail limit, and so do ECT ones once the queue is full.
    pub ecn_mark_pkts: Option<usize>,
}

/// A token bucket of `rate_bps` holding `burst_bytes` (at least one full frame), in
/// front of the bottleneck queue: shaping (Linux `tbf`), what exceeds the rate waits in
/// a FIFO of `limit_bytes` and leaves when its tokens have accrued, in bursts at line
/// rate after idle spells; policing (`tc filter ... police`), it is dropped.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shaper {
    pub rate_bps: u64,
    pub burst_bytes: u32,
    pub limit_bytes: u32,
    pub police: bool,
    /// The shaper releases packets at most once per `tick`: those whose tokens accrued
    /// meanwhile leave together, back to back at line rate. A real shaper does this
    /// because its watchdog timer has a granularity and because it dequeues a TSO/GSO
    /// super-packet (up to 64 KiB) whole (`tbf_dequeue`, `qdisc_watchdog`); it is why a
    /// 50 Mbit/s `tbf` shows trains of segments microseconds apart. Zero releases each
    /// packet the moment its tokens are there.
    pub tick: Duration,
}

/// The path is down for `length` from `start` (from the start of the run): the link
/// beyond the bottleneck queue is cut, so every packet whose transmission ends
/// meanwhile (either direction, the queue's backlog included) is lost; what was
/// already on its way still arrives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outage {
    pub start: Duration,
    pub length: Duration,
}

/// Other hosts' packets of `frame_bytes` joining the data direction's bottleneck queue
/// at `rate_bps` on average (Poisson arrivals, from the run's seed), from the start of
/// the run until the applications stop. They take queue space and link time; no
/// capture point records them (they are not the captured hosts' traffic).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CrossTraffic {
    pub rate_bps: u64,
    pub frame_bytes: u32,
}

impl Path {
    /// A path of `rate_bps` and base RTT `rtt` (split evenly between the directions),
    /// a 100-packet queue, no loss, seed 1, snaplen 128, IPv4.
    pub fn new(rate_bps: u64, rtt: Duration) -> Self {
        Path {
            rate_bps,
            one_way_delay: rtt / 2,
            ack_delay: None,
            ack_rate_limited: true,
            queue_pkts: 100,
            loss: 0.0,
            seed: 1,
            sender_capture: CaptureHost::default(),
            receiver_capture: CaptureHost::default(),
            middle: None,
            ipv6: false,
            shaper: None,
            outages: Vec::new(),
            cross: None,
            ecn_mark_pkts: None,
        }
    }

    /// The same path with every capture point keeping `snaplen` bytes.
    pub fn with_snaplen(mut self, snaplen: u32) -> Self {
        self.sender_capture.snaplen = snaplen;
        self.receiver_capture.snaplen = snaplen;
        if let Some(m) = self.middle.as_mut() {
            m.capture.snaplen = snaplen;
        }
        self
    }

    /// The bottleneck's rate: the link's, or the shaper's when that is slower.
    pub fn bottleneck_bps(&self) -> u64 {
        match self.shaper {
            Some(s) if self.rate_bps == 0 || s.rate_bps < self.rate_bps => s.rate_bps,
            _ => self.rate_bps,
        }
    }

    /// Whether the path is down at `t` (from the start of the run).
    pub fn down_at(&self, t: Duration) -> bool {
        self.outages.iter().any(|o| t >= o.start && t < o.start + o.length)
    }
}

/// Capture time (seconds since the epoch, as analyses print it) of a moment of the run.
pub fn capture_seconds(at: Duration) -> f64 {
    capture::EPOCH_NS as f64 / 1e9 + at.as_secs_f64()
}

/// Congestion control of the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cc {
    /// RFC 5681 Reno with appropriate byte counting (Linux `reno`).
    Reno,
    /// Linux `cubic`: cubic window growth, Reno-friendly region, fast convergence,
    /// HyStart (ACK train and delay increase).
    Cubic,
}

/// What the sending application writes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum App {
    /// Writes whenever the send buffer has room (a third of it free, as Linux wakes a
    /// blocked writer).
    Bulk,
    /// Writes `burst` bytes at once every `every`, starting when the connection is up.
    OnOff { burst: u32, every: Duration },
}

/// How the receiving application reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reader {
    /// Reads everything as soon as it arrives.
    Fast,
    /// A token-bucket reader, like the netlab's slow reader: tokens accrue at `bps` up
    /// to one `tick`'s worth; while it has tokens it reads data as it arrives, and when
    /// they run out it sleeps for a `tick` (it starts asleep). What it leaves unread
    /// fills the receive buffer and closes the window.
    Rate { bps: u64, tick: Duration },
}

/// Which handshake segment a middlebox between the capture points rewrites.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Strip {
    #[default]
    None,
    Syn,
    SynAck,
    Both,
}

impl Strip {
    fn applies(self, syn_ack: bool) -> bool {
        match self {
            Strip::None => false,
            Strip::Syn => !syn_ack,
            Strip::SynAck => syn_ack,
            Strip::Both => true,
        }
    }
}

/// What a middlebox between the capture points does to the handshake: it overwrites
/// an option with NOPs, as the netlab delay line does, or lowers the MSS value. (Which
/// options each end offers is its [`Stack`]'s.)
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Middlebox {
    pub strip_wscale: Strip,
    pub strip_sack: Strip,
    pub strip_timestamps: Strip,
    /// Rewrites MSS options above this value to it.
    pub clamp_mss: Option<u16>,
}

/// One TCP connection.
#[derive(Clone, Debug)]
pub struct Flow {
    pub cc: Cc,
    /// The receiver's buffer in window bytes: the largest window it advertises (Linux's
    /// SO_RCVBUF of 64 KiB gives about 80 kB of window). The window-scale shift is the
    /// smallest that fits it in 16 bits.
    pub rcvbuf: u32,
    /// Payload bytes the sender may hold (unacknowledged + unsent); `None` = the sender
    /// stack's own ([`Stack::sndbuf`]: Linux autotunes, twice the largest congestion
    /// window, at most 4 MiB). Linux's SO_SNDBUF of 64 KiB holds about 110 kB.
    pub sndbuf: Option<u32>,
    pub app: App,
    pub reader: Reader,
    /// The MSS option both ends advertise, at most 1460 (1440 over IPv6) for a 1500-byte
    /// MTU; the payload per segment is this minus 12 bytes when timestamps are on.
    pub mss: u16,
    /// The TCP implementation of the data sender's end and of the data receiver's end
    /// (options offered, ACK and window behaviour, initial window, timers).
    pub sender_stack: Stack,
    pub receiver_stack: Stack,
    pub middlebox: Middlebox,
    /// When the client connects, from the start of the run.
    pub start: Duration,
    /// The client sends the data (default: the server does, as in a download).
    pub upload: bool,
    /// The label this flow was built to show, copied into its truth.
    pub intended: Option<Label>,
    /// Both ends speak RFC 3168 ECN: the client's SYN carries ECE and CWR, the server's
    /// SYN/ACK ECE (§6.1.1); the data sender sends its new data ECT(0) (retransmissions
    /// and pure ACKs Not-ECT, §6.1.5), answers ECE by reducing its window once per window
    /// of data and sets CWR on its next new data (§6.1.2; Linux `tcp_enter_cwr`, PRR down
    /// to ssthresh); the receiver echoes ECE on every ACK from a CE mark until a CWR
    /// arrives, ACKing the first mark at once (§6.1.3; Linux `__tcp_ecn_check_ce`).
    pub ecn: bool,
}

impl Default for Flow {
    /// CUBIC bulk download between two Linux ends, 4 MiB receive window, autotuned send
    /// buffer, fast reader, MSS 1460, no middlebox, starting at 0.
    fn default() -> Self {
        Flow {
            cc: Cc::Cubic,
            rcvbuf: 4 << 20,
            sndbuf: None,
            app: App::Bulk,
            reader: Reader::Fast,
            mss: 1460,
            sender_stack: Stack::linux(),
            receiver_stack: Stack::linux(),
            middlebox: Middlebox::default(),
            start: Duration::ZERO,
            upload: false,
            intended: None,
            ecn: false,
        }
    }
}

/// The result of a run.
#[derive(Clone, Debug)]
pub struct SimOutput {
    /// Capture at the sender's interface (point A).
    pub sender_side_pcap: Vec<u8>,
    /// Capture at the receiver's interface (point B).
    pub receiver_side_pcap: Vec<u8>,
    /// Capture at the path's [`Tap`], when it has one.
    pub middle_pcap: Option<Vec<u8>>,
    /// One per flow, in the order given.
    pub truth: Vec<FlowTruth>,
}

impl SimOutput {
    /// The capture taken at `v` (None for the middle of a path without a tap).
    pub fn pcap(&self, v: Vantage) -> Option<&[u8]> {
        match v {
            Vantage::Sender => Some(&self.sender_side_pcap),
            Vantage::Receiver => Some(&self.receiver_side_pcap),
            Vantage::Middle => self.middle_pcap.as_deref(),
        }
    }
}

/// How the sender spent a stretch of time, as Linux's `tcp_chrono` would account it.
/// The four states are exclusive and add up to `total`; `at_capacity` overlaps them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LimitTimes {
    pub total: Duration,
    /// Data waiting, room in the congestion window, but the next segment did not fit in
    /// the receiver's window (or the window was zero).
    pub rwnd_limited: Duration,
    /// Data waiting and the congestion window full.
    pub cwnd_limited: Duration,
    /// Nothing to send: everything written was sent (application pause, send buffer).
    /// Includes `idle`.
    pub sender_limited: Duration,
    /// Nothing to send and nothing in flight.
    pub idle: Duration,
    /// The bottleneck link was busy (with any flow's packets).
    pub at_capacity: Duration,
}

impl LimitTimes {
    fn share(&self, d: Duration) -> f64 {
        if self.total.is_zero() {
            0.0
        } else {
            d.as_secs_f64() / self.total.as_secs_f64()
        }
    }
    pub fn rwnd_share(&self) -> f64 {
        self.share(self.rwnd_limited)
    }
    pub fn cwnd_share(&self) -> f64 {
        self.share(self.cwnd_limited)
    }
    pub fn sender_share(&self) -> f64 {
        self.share(self.sender_limited)
    }
    pub fn idle_share(&self) -> f64 {
        self.share(self.idle)
    }
    pub fn capacity_share(&self) -> f64 {
        self.share(self.at_capacity)
    }
}

/// What the simulator knows about one flow.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowTruth {
    /// "10.0.0.1:40000" style, as the analyser prints them.
    pub client: String,
    pub server: String,
    pub sender_is_client: bool,
    pub intended: Option<Label>,
    /// Propagation both ways + serialisation of one full data frame (and of one ACK when
    /// the ACK path is rate limited) + the receiver's processing time: the smallest RTT
    /// a sender can see.
    pub base_rtt: Duration,
    /// Smallest RTT the sender measured (send of a segment to the ACK covering it).
    pub min_rtt: Option<Duration>,
    /// Payload bytes/s the bottleneck (the link, or a slower shaper) carries in
    /// full-sized segments.
    pub payload_rate: f64,
    /// `payload_rate` x `base_rtt`.
    pub bdp_bytes: u64,
    /// Payload per full segment.
    pub mss: u32,
    /// Bytes the application wrote, the sender saw acknowledged, and the receiving
    /// application read.
    pub bytes_written: u64,
    pub bytes_acked: u64,
    pub bytes_read: u64,
    /// Data segments the sender transmitted (new + retransmitted), and retransmitted.
    pub segments_sent: u64,
    pub retransmitted_segments: u64,
    /// Data segments dropped by the queue, by random loss, by the shaper (its queue
    /// full, or policed) and by an outage.
    pub queue_drops: u64,
    pub random_losses: u64,
    pub shaper_drops: u64,
    pub outage_drops: u64,
    pub rto_count: u32,
    pub fast_recoveries: u32,
    /// ECN: data segments the queue marked CE, the receiver's ACKs with ECE, the sender's
    /// window reductions for ECE, and its segments with CWR.
    pub ce_marks: u64,
    pub ece_acks: u64,
    pub ecn_reductions: u32,
    pub cwr_segments: u64,
    pub zero_window_acks: u64,
    pub max_cwnd_segments: u32,
    pub max_flight_bytes: u64,
    /// Largest window (bytes, as the sender scaled it) the sender was granted.
    pub max_rwnd_bytes: u64,
    /// Shift the sender applies to windows it receives / the receiver applies to the
    /// windows it advertises (None where scaling is off for that end).
    pub sender_snd_wscale: Option<u8>,
    pub receiver_rcv_wscale: Option<u8>,
    /// New-data sends that did not fit min(cwnd, rwnd) at that moment: always 0.
    pub window_violations: u64,
    /// Whether both ends finished (FIN both ways acknowledged) before the run ended.
    pub closed: bool,
    /// From the first data segment to the moment everything was acknowledged.
    pub transfer: LimitTimes,
    /// The same after a warm-up of min(1 s, 25 % of the transfer), like the netlab
    /// ground truth's steady window.
    pub steady: LimitTimes,
}

/// Runs the flows over the path. Applications stop writing `duration` after the start
/// of the run; the run then continues until every connection is closed or 3 s have
/// passed.
pub fn run(path: &Path, flows: &[Flow], duration: Duration) -> SimOutput {
    engine::Sim::new(path, flows, duration).run()
}
