//! The event loop: hosts, the two link directions, timers, the handshake, the capture
//! points and the truth accounting.

use super::capture::{self, CaptureHost, Rec};
use super::link::{Link, TokenBucket};
use super::receiver::{AckNow, Receiver};
use super::rng::Rng;
use super::sender::{Sender, State, Xmit};
use super::wire::{self, Opt, Seg, SynOpts};
use super::{App, Flow, FlowTruth, LimitTimes, Path, SimOutput, Stack};
use crate::decode::{Ecn, TcpFlags};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

const US: i64 = 1_000;
const MS: i64 = 1_000_000;
/// Time a host takes to react to a segment (ACK clocking, ACK generation).
const PROC: i64 = 8 * US;
/// Time one packet takes at a host's own interface (bursts leave 1 µs apart).
const HOST_GAP: i64 = US;
/// How long the run goes on after the applications stop, at most.
const DRAIN: i64 = 3_000 * MS;
/// The sender host's own receive buffer (Linux's tcp_rmem max: window scale 7).
const SENDER_HOST_SPACE: u64 = 6 << 20;
const SENDER: usize = 0;
const RECEIVER: usize = 1;
/// The third capture point, the path's tap.
const MIDDLE: usize = 2;

fn ns(d: Duration) -> i64 {
    d.as_nanos().min(i64::MAX as u128) as i64
}

fn dur(n: i64) -> Duration {
    Duration::from_nanos(n.max(0) as u64)
}

/// The window of a SYN: the space rounded down to whole segments, at most 16 bits.
fn syn_window(space: u64, mss: u32) -> u64 {
    let m = mss.max(1) as u64;
    (space.min(65535) / m * m).max(m.min(65535))
}

fn ms_clock(t: i64, off: u32) -> u32 {
    off.wrapping_add((t.div_euclid(MS)) as u32)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Which {
    Rto,
    Persist,
    Delack,
    Reader,
    /// The client's SYN, and the server's SYN/ACK, retransmitted until answered.
    Syn,
    SynAck,
}

enum Kind {
    Connect(usize),
    /// A packet reaches the far host's interface. Boxed: heap entries stay small.
    Arrive(Box<Pkt>),
    /// A packet reaches the path (the shaper, or the bottleneck queue) from a host.
    Enter(usize, Box<Pkt>),
    /// A packet leaves the shaper for the bottleneck queue.
    Shaped(Box<Pkt>),
    /// A coalescing host's interrupt for the batch of this generation.
    Interrupt {
        host: usize,
        gen: u64,
    },
    /// The host's stack (and capture) takes a packet of a coalesced batch.
    Deliver(Box<Pkt>),
    /// A packet of cross traffic reaches the bottleneck queue.
    Cross,
    Timer {
        flow: usize,
        which: Which,
        gen: u64,
    },
    AppBurst(usize),
    AppStop,
}

struct Ev {
    t: i64,
    n: u64,
    kind: Kind,
}

impl PartialEq for Ev {
    fn eq(&self, o: &Self) -> bool {
        (self.t, self.n) == (o.t, o.n)
    }
}
impl Eq for Ev {}
impl PartialOrd for Ev {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Ev {
    /// Reversed: the heap pops the earliest event, ties in scheduling order.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.t, o.n).cmp(&(self.t, self.n))
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Timer {
    at: Option<i64>,
    gen: u64,
}

/// Handshake knowledge of one end.
#[derive(Clone, Copy, Debug, Default)]
struct End {
    isn: u32,
    ts_off: u32,
    /// Shift this end offers (from its buffer).
    shift: u8,
    space: u64,
    /// Window of its SYN / SYN-ACK (unscaled).
    syn_wnd: u64,
    established: bool,
    ws_on: bool,
    ts_on: bool,
    sack_on: bool,
    /// Shift applied to windows received / to windows advertised.
    snd_wscale: u8,
    rcv_wscale: u8,
    peer_mss: u16,
    peer_syn_ts: u32,
    /// The IPv4 identification of its next datagram: Linux numbers a connected socket's
    /// datagrams with a counter of its own (`inet_id`, `ip_select_ident_segs`), so that
    /// no two of them (a retransmission included) share one.
    ip_id: u16,
}

struct FlowSim {
    cfg: Flow,
    /// The stack of the end at the sender host / receiver host.
    stack: [Stack; 2],
    /// "ip:port" of the end at the sender host / receiver host.
    addr: [String; 2],
    client_host: usize,
    end: [End; 2],
    snd: Option<Sender>,
    rcv: Option<Receiver>,
    /// TSval of the latest segment the sender host's end received.
    s_ts_recent: u32,
    s_got_fin: bool,
    r_fin_sent: bool,
    r_fin_acked: bool,
    rto: Timer,
    persist: Timer,
    delack: Timer,
    reader: Timer,
    syn: Timer,
    syn_ack: Timer,
    /// Transmissions of the SYN and of the SYN/ACK so far.
    syn_sent: u32,
    syn_ack_sent: u32,
    chrono: Vec<(i64, Option<State>)>,
    last_state: Option<State>,
    first_data: Option<i64>,
    all_acked: Option<i64>,
    queue_drops: u64,
    random_losses: u64,
    shaper_drops: u64,
    outage_drops: u64,
    mss_payload: u32,
    closed: bool,
    /// ECN: the receiver echoes ECE until a CWR arrives (`TCP_ECN_DEMAND_CWR`); marks and
    /// echoes counted for the truth.
    r_demand_cwr: bool,
    ce_marks: u64,
    ece_acks: u64,
}

impl FlowSim {
    fn ws(&self, host: usize) -> Option<u8> {
        let e = &self.end[host];
        e.established
            .then_some(e.ws_on)
            .and_then(|on| on.then_some(e.snd_wscale))
    }
}

/// A packet on the path: the segment, its record (built at the largest snaplen of the
/// capture points) and length on the wire, and, when a middlebox rewrote it, the record
/// as it left its host (what the tap, before the middlebox, sees of a data-direction
/// packet).
struct Pkt {
    seg: Seg,
    bytes: Vec<u8>,
    wire: u32,
    original: Option<Vec<u8>>,
}

/// The packets a coalescing host holds until its interrupt.
#[derive(Default)]
struct Batch {
    pkts: Vec<Pkt>,
    gen: u64,
    /// When its stack is free to take the next packet.
    free: i64,
}

pub(super) struct Sim {
    path: Path,
    now: i64,
    n: u64,
    heap: BinaryHeap<Ev>,
    links: [Link; 2],
    shaper: Option<TokenBucket>,
    /// The path's outages, [start, end) in ns of the run.
    down: Vec<(i64, i64)>,
    cross_rng: Rng,
    nic_free: [i64; 2],
    flows: Vec<FlowSim>,
    /// Records of the sender host, the receiver host and the tap.
    caps: [Vec<Rec>; 3],
    hosts: [CaptureHost; 2],
    batch: [Batch; 2],
    /// Records are built to this snaplen and cut to each capture point's.
    build_snaplen: u32,
    loss_rng: Rng,
    /// Busy periods of the forward bottleneck (the link, or a slower shaper), merged.
    busy: Vec<(i64, i64)>,
    /// Whether the shaper, not the link, is the bottleneck.
    shaper_limits: bool,
    stop: i64,
    end: i64,
    scratch: Vec<Xmit>,
    builder: wire::Builder,
}

impl Sim {
    pub fn new(path: &Path, flows: &[Flow], duration: Duration) -> Sim {
        let fwd_delay = ns(path.one_way_delay);
        let rev_delay = path.ack_delay.map_or(fwd_delay, ns);
        let links = [
            Link::new(path.rate_bps, fwd_delay, path.queue_pkts),
            Link::new(
                if path.ack_rate_limited { path.rate_bps } else { 0 },
                rev_delay,
                path.queue_pkts,
            ),
        ];
        let down: Vec<(i64, i64)> = path
            .outages
            .iter()
            .map(|o| (ns(o.start), ns(o.start) + ns(o.length)))
            .collect();
        let hosts: [IpAddr; 2] = if path.ipv6 {
            ["fd00::2".parse().unwrap(), "fd00::1".parse().unwrap()]
        } else {
            ["10.0.0.2".parse().unwrap(), "10.0.0.1".parse().unwrap()]
        };
        let mut id_rng = Rng::new(path.seed, 1);
        let sims = flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let client_host = if f.upload { SENDER } else { RECEIVER };
                let port = |h: usize| -> u16 {
                    if h == client_host {
                        40000 + i as u16
                    } else {
                        5001 + i as u16
                    }
                };
                let addr = [0, 1].map(|h| SocketAddr::new(hosts[h], port(h)).to_string());
                let spaces = [SENDER_HOST_SPACE, f.rcvbuf as u64];
                let stack = [f.sender_stack, f.receiver_stack];
                let end = [0, 1].map(|h| {
                    let isn = id_rng.next_u32();
                    End {
                        isn,
                        ts_off: id_rng.next_u32(),
                        shift: stack[h].offered_shift(spaces[h]).unwrap_or(0),
                        space: spaces[h],
                        // Any start (from the ISN: no draw, the other draws stay as they were).
                        ip_id: (isn >> 16) as u16,
                        ..End::default()
                    }
                });
                // A 1500-byte MTU: MSS at most 1460 (1440 over IPv6).
                let mut cfg = f.clone();
                cfg.mss = cfg.mss.clamp(88, if path.ipv6 { 1440 } else { 1460 });
                FlowSim {
                    cfg,
                    stack,
                    addr,
                    client_host,
                    end,
                    snd: None,
                    rcv: None,
                    s_ts_recent: 0,
                    s_got_fin: false,
                    r_fin_sent: false,
                    r_fin_acked: false,
                    rto: Timer::default(),
                    persist: Timer::default(),
                    delack: Timer::default(),
                    reader: Timer::default(),
                    syn: Timer::default(),
                    syn_ack: Timer::default(),
                    syn_sent: 0,
                    syn_ack_sent: 0,
                    chrono: Vec::new(),
                    last_state: None,
                    first_data: None,
                    all_acked: None,
                    queue_drops: 0,
                    random_losses: 0,
                    shaper_drops: 0,
                    outage_drops: 0,
                    mss_payload: 0,
                    closed: false,
                    r_demand_cwr: false,
                    ce_marks: 0,
                    ece_acks: 0,
                }
            })
            .collect();
        let stop = ns(duration);
        // The drain starts after the last outage too: a flow must outlive it.
        let drain_from = down.iter().map(|d| d.1).fold(stop, i64::max);
        let mut sim = Sim {
            path: path.clone(),
            now: 0,
            n: 0,
            heap: BinaryHeap::new(),
            links,
            shaper: path.shaper.map(TokenBucket::new),
            down,
            cross_rng: Rng::new(path.seed, 3),
            nic_free: [0; 2],
            flows: sims,
            caps: [Vec::new(), Vec::new(), Vec::new()],
            hosts: [path.sender_capture, path.receiver_capture],
            batch: [Batch::default(), Batch::default()],
            build_snaplen: path
                .sender_capture
                .snaplen
                .max(path.receiver_capture.snaplen)
                .max(path.middle.map_or(0, |m| m.capture.snaplen)),
            loss_rng: Rng::new(path.seed, 2),
            busy: Vec::new(),
            shaper_limits: path.bottleneck_bps() != path.rate_bps,
            stop,
            end: drain_from + DRAIN,
            scratch: Vec::new(),
            builder: wire::Builder::default(),
        };
        for (i, f) in flows.iter().enumerate() {
            sim.push(ns(f.start), Kind::Connect(i));
        }
        sim.push(stop, Kind::AppStop);
        if path.cross.is_some_and(|c| c.rate_bps > 0) {
            let first = sim.cross_gap();
            sim.push(first, Kind::Cross);
        }
        sim
    }

    /// Time to the next cross-traffic packet: exponential with the mean its rate gives.
    fn cross_gap(&mut self) -> i64 {
        let Some(c) = self.path.cross else { return i64::MAX };
        let mean = Link::serialisation(c.frame_bytes.max(60), c.rate_bps.max(1)) as f64;
        let u = self.cross_rng.next_f64();
        (-(1.0 - u).ln() * mean).max(1.0) as i64
    }

    fn push(&mut self, t: i64, kind: Kind) {
        self.n += 1;
        self.heap.push(Ev { t, n: self.n, kind });
    }

    fn timer_mut(&mut self, f: usize, which: Which) -> &mut Timer {
        let fl = &mut self.flows[f];
        match which {
            Which::Rto => &mut fl.rto,
            Which::Persist => &mut fl.persist,
            Which::Delack => &mut fl.delack,
            Which::Reader => &mut fl.reader,
            Which::Syn => &mut fl.syn,
            Which::SynAck => &mut fl.syn_ack,
        }
    }

    fn arm(&mut self, f: usize, which: Which, at: i64) {
        let t = self.timer_mut(f, which);
        t.gen += 1;
        t.at = Some(at);
        let gen = t.gen;
        self.push(at, Kind::Timer { flow: f, which, gen });
    }

    fn disarm(&mut self, f: usize, which: Which) {
        self.timer_mut(f, which).at = None;
    }

    pub fn run(mut self) -> SimOutput {
        while let Some(ev) = self.heap.pop() {
            if ev.t > self.end {
                break;
            }
            self.now = ev.t;
            match ev.kind {
                Kind::Connect(f) => self.connect(f),
                Kind::Arrive(p) => self.arrive(*p),
                Kind::Enter(link, p) => self.enter(link, *p),
                Kind::Shaped(p) => self.link_enter(SENDER, *p),
                Kind::Interrupt { host, gen } => self.interrupt(host, gen),
                Kind::Deliver(p) => self.deliver(*p),
                Kind::Cross => self.cross(),
                Kind::Timer { flow, which, gen } => self.timer(flow, which, gen),
                Kind::AppBurst(f) => self.app_burst(f),
                Kind::AppStop => self.app_stop(),
            }
            if self.now >= self.stop && self.flows.iter().all(|f| f.closed) {
                break;
            }
        }
        self.output()
    }

    // ---- the wire ----------------------------------------------------------------------

    /// A host puts a segment on its interface now (after its reaction time): capture at
    /// its side, middlebox, loss, queue, propagation.
    fn emit(&mut self, host: usize, mut seg: Seg) {
        let t = (self.now + PROC).max(self.nic_free[host]);
        self.nic_free[host] = t + HOST_GAP;
        // Timestamps carry the ms clock of the emitting host: `ts.0` holds its offset.
        if let Some((off, ecr)) = seg.ts {
            seg.ts = Some((ms_clock(t, off), ecr));
        }
        if let Some(o) = seg.syn.as_mut() {
            if let Opt::On((off, ecr)) = o.ts {
                o.ts = Opt::On((ms_clock(t, off), ecr));
            }
        }
        let f = seg.flow;
        let (src, dst) = (&self.flows[f].addr[host], &self.flows[f].addr[1 - host]);
        let (ipv6, snap) = (self.path.ipv6, self.build_snaplen);
        let id = self.flows[f].end[host].ip_id;
        let (bytes, wire) = self.builder.build(&seg, src, dst, ipv6, snap, id);
        let mut far = None;
        if seg.syn.is_some() && wire::rewrite(&mut seg, &self.flows[f].cfg.middlebox) {
            let (src, dst) = (&self.flows[f].addr[host], &self.flows[f].addr[1 - host]);
            far = Some(wire::build(&seg, src, dst, ipv6, snap, id));
        }
        self.flows[f].end[host].ip_id = id.wrapping_add(1);
        self.record(host, t, &bytes, wire);
        let pkt = match far {
            Some((b, w)) => Pkt {
                seg,
                bytes: b,
                wire: w,
                original: Some(bytes),
            },
            None => Pkt {
                seg,
                bytes,
                wire,
                original: None,
            },
        };
        let link = host; // forward link leaves the sender host
        if link == SENDER && self.path.loss > 0.0 && !pkt.seg.is_syn() && self.loss_rng.next_f64() < self.path.loss {
            if pkt.seg.len > 0 {
                self.flows[f].random_losses += 1;
            }
            return;
        }
        self.push(t, Kind::Enter(link, Box::new(pkt)));
    }

    /// Capture point `c` sees a packet at `t`.
    fn record(&mut self, c: usize, t: i64, bytes: &[u8], wire: u32) {
        let snaplen = match c {
            MIDDLE => self.path.middle.map_or(0, |m| m.capture.snaplen),
            _ => self.hosts[c].snaplen,
        };
        self.n += 1;
        self.caps[c].push(Rec {
            t,
            n: self.n,
            bytes: bytes[..bytes.len().min(snaplen as usize)].to_vec(),
            wire,
        });
    }

    /// A host's packet reaches the path: shaped or policed in the data direction, then
    /// queued at the bottleneck.
    fn enter(&mut self, link: usize, pkt: Pkt) {
        let now = self.now;
        let (data, wire) = (link == SENDER && pkt.seg.len > 0, pkt.wire);
        if link == SENDER {
            if let Some(tb) = self.shaper.as_mut() {
                let rate = tb.rate();
                match tb.enter(now, wire) {
                    None => {
                        if data {
                            self.flows[pkt.seg.flow].shaper_drops += 1;
                        }
                        return;
                    }
                    Some((ready, dep)) => {
                        if self.shaper_limits && ready > now {
                            // It waited for tokens: the shaper ran at its rate.
                            self.mark_busy(ready - Link::serialisation(wire, rate), ready);
                        }
                        if dep > now {
                            self.push(dep, Kind::Shaped(Box::new(pkt)));
                            return;
                        }
                    }
                }
            }
        }
        self.link_enter(link, pkt);
    }

    fn is_down(&self, t: i64) -> bool {
        self.down.iter().any(|&(a, b)| t >= a && t < b)
    }

    /// A packet reaches the bottleneck queue of `link` now; it is lost when the queue
    /// is full, or when the link beyond it is down as it is sent. The tap sees it on
    /// its way.
    fn link_enter(&mut self, link: usize, mut pkt: Pkt) {
        let now = self.now;
        let data = link == SENDER && pkt.seg.len > 0;
        // The AQM marks an ECN-capable packet CE where it would drop (`Path::ecn_mark_pkts`),
        // as long as the queue has room for it at all.
        if let Some(k) = self
            .path
            .ecn_mark_pkts
            .filter(|_| link == SENDER && pkt.seg.ecn.is_ect())
        {
            let backlog = self.links[link].backlog(now);
            if backlog >= k && backlog < self.path.queue_pkts.max(1) {
                pkt.seg.ecn = Ecn::Ce;
                wire::mark_ce(&mut pkt.bytes, self.path.ipv6);
                self.flows[pkt.seg.flow].ce_marks += 1;
            }
        }
        match self.links[link].enter(now, pkt.wire) {
            None => {
                if data {
                    self.flows[pkt.seg.flow].queue_drops += 1;
                }
            }
            Some((_, dep, _)) if self.is_down(dep) => {
                if data {
                    self.flows[pkt.seg.flow].outage_drops += 1;
                }
            }
            Some((start, dep, arrival)) => {
                if link == SENDER && !self.shaper_limits {
                    self.mark_busy(start, dep);
                }
                if let Some(tap) = self.path.middle {
                    // `at` of the way from the sender host: the data direction has gone
                    // that share of its propagation, the ACK direction the rest.
                    let share = if link == SENDER { tap.at } else { 1.0 - tap.at };
                    let share = share.clamp(0.0, 1.0);
                    let t = dep + ((arrival - dep) as f64 * share).round() as i64;
                    let bytes = match (&pkt.original, link) {
                        (Some(o), SENDER) => o,
                        _ => &pkt.bytes,
                    };
                    let bytes = bytes.clone();
                    self.record(MIDDLE, t, &bytes, pkt.wire);
                }
                self.push(arrival, Kind::Arrive(Box::new(pkt)));
            }
        }
    }

    fn mark_busy(&mut self, start: i64, end: i64) {
        match self.busy.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => self.busy.push((start, end)),
        }
    }

    /// A cross-traffic packet joins the data direction's bottleneck queue (dropped when
    /// it is full, like any other); the next one is scheduled until the applications
    /// stop.
    fn cross(&mut self) {
        let Some(c) = self.path.cross else { return };
        let now = self.now;
        if let Some((start, dep, _)) = self.links[SENDER].enter(now, c.frame_bytes.max(60)) {
            if !self.shaper_limits {
                self.mark_busy(start, dep);
            }
        }
        let next = now + self.cross_gap();
        if next < self.stop {
            self.push(next, Kind::Cross);
        }
    }

    /// A packet reaches a host's interface: its stack and capture take it now, or at
    /// the interrupt of a coalescing NIC.
    fn arrive(&mut self, pkt: Pkt) {
        let host = if pkt.seg.forward { RECEIVER } else { SENDER };
        let Some(c) = self.hosts[host].coalesce else {
            return self.deliver(pkt);
        };
        let b = &mut self.batch[host];
        b.pkts.push(pkt);
        if b.pkts.len() >= c.max_packets.max(1) as usize {
            let gen = b.gen;
            self.interrupt(host, gen);
        } else if b.pkts.len() == 1 {
            let gen = b.gen;
            let at = self.now + ns(c.window);
            self.push(at, Kind::Interrupt { host, gen });
        }
    }

    /// The coalescing NIC of `host` interrupts: the batch goes to the stack, one packet
    /// per `per_packet`.
    fn interrupt(&mut self, host: usize, gen: u64) {
        let step = self.hosts[host].coalesce.map_or(0, |c| ns(c.per_packet));
        let b = &mut self.batch[host];
        if b.gen != gen || b.pkts.is_empty() {
            return;
        }
        b.gen += 1;
        let pkts = std::mem::take(&mut b.pkts);
        let mut at = self.now.max(b.free);
        for p in pkts {
            self.push(at, Kind::Deliver(Box::new(p)));
            at += step;
        }
        self.batch[host].free = at;
    }

    /// A host's stack takes a packet, and its capture records it.
    fn deliver(&mut self, pkt: Pkt) {
        let host = if pkt.seg.forward { RECEIVER } else { SENDER };
        let now = self.now;
        self.record(host, now, &pkt.bytes, pkt.wire);
        if host == SENDER {
            self.at_sender(pkt.seg);
        } else {
            self.at_receiver(pkt.seg);
        }
    }

    // ---- handshake -----------------------------------------------------------------------

    fn syn_opts(&self, f: usize, host: usize, syn_ack: bool) -> SynOpts {
        let fl = &self.flows[f];
        let st = &fl.stack[host];
        let e = &fl.end[host];
        let (ws, sack, ts) = if syn_ack {
            (e.ws_on, e.sack_on, e.ts_on)
        } else {
            (st.offered_shift(0).is_some(), st.sack, st.timestamps)
        };
        SynOpts {
            mss: Some(fl.cfg.mss),
            sack_perm: if sack { Opt::On(()) } else { Opt::Absent },
            ts: if ts {
                Opt::On((e.ts_off, if syn_ack { e.peer_syn_ts } else { 0 }))
            } else {
                Opt::Absent
            },
            wscale: if ws { Opt::On(e.shift) } else { Opt::Absent },
        }
    }

    fn connect(&mut self, f: usize) {
        let c = self.flows[f].client_host;
        let mss = self.flows[f].cfg.mss as u32;
        let e = &mut self.flows[f].end[c];
        e.syn_wnd = syn_window(e.space, mss);
        self.send_syn(f);
    }

    /// Handshake retransmissions (RFC 6298 §5 with the stack's initial RTO, doubling;
    /// Linux `tcp_syn_retries` / `tcp_synack_retries` give up after 6 / 5).
    fn handshake_timer(&mut self, f: usize, which: Which, sent: u32) {
        let host = match which {
            Which::Syn => self.flows[f].client_host,
            _ => 1 - self.flows[f].client_host,
        };
        if sent <= 5 {
            let rto = ns(self.flows[f].stack[host].rto_init).max(MS);
            let at = self.now + (rto << (sent - 1).min(16));
            self.arm(f, which, at);
        }
    }

    /// The client's SYN (again).
    fn send_syn(&mut self, f: usize) {
        let c = self.flows[f].client_host;
        self.flows[f].syn_sent += 1;
        let sent = self.flows[f].syn_sent;
        let e = &self.flows[f].end[c];
        let seg = Seg {
            flow: f,
            forward: c == SENDER,
            seq: e.isn,
            ack: 0,
            // RFC 3168 §6.1.1: an ECN-setup SYN.
            flags: TcpFlags::SYN
                | if self.flows[f].cfg.ecn {
                    TcpFlags::ECE | TcpFlags::CWR
                } else {
                    0
                },
            win: e.syn_wnd as u16,
            len: 0,
            ts: None,
            sack: Vec::new(),
            syn: Some(self.syn_opts(f, c, false)),
            probe: false,
            ecn: Ecn::NotEct,
        };
        self.emit(c, seg);
        self.handshake_timer(f, Which::Syn, sent);
    }

    /// The server's SYN/ACK (again).
    fn send_syn_ack(&mut self, f: usize) {
        let host = 1 - self.flows[f].client_host;
        self.flows[f].syn_ack_sent += 1;
        let sent = self.flows[f].syn_ack_sent;
        let fl = &self.flows[f];
        let e = &fl.end[host];
        let reply = Seg {
            flow: f,
            forward: host == SENDER,
            seq: e.isn,
            ack: fl.end[1 - host].isn.wrapping_add(1),
            // RFC 3168 §6.1.1: an ECN-setup SYN-ACK (ECE, not CWR).
            flags: TcpFlags::SYN | TcpFlags::ACK | if fl.cfg.ecn { TcpFlags::ECE } else { 0 },
            win: e.syn_wnd as u16,
            len: 0,
            ts: None,
            sack: Vec::new(),
            syn: Some(self.syn_opts(f, host, true)),
            probe: false,
            ecn: Ecn::NotEct,
        };
        self.emit(host, reply);
        self.handshake_timer(f, Which::SynAck, sent);
    }

    /// The server end (at `host`) gets the SYN and answers.
    fn on_syn(&mut self, host: usize, seg: &Seg) {
        let fl = &mut self.flows[seg.flow];
        if fl.end[host].peer_mss != 0 {
            // A retransmitted SYN: our SYN/ACK was lost, or is late.
            if !fl.end[host].established {
                self.send_syn_ack(seg.flow);
            }
            return;
        }
        let o = seg.syn.unwrap_or(SynOpts {
            mss: None,
            sack_perm: Opt::Absent,
            ts: Opt::Absent,
            wscale: Opt::Absent,
        });
        let st = fl.stack[host];
        let e = &mut fl.end[host];
        e.peer_mss = o.mss.unwrap_or(536);
        e.ws_on = st.offered_shift(0).is_some() && o.wscale.get().is_some();
        e.sack_on = st.sack && o.sack_perm.get().is_some();
        e.ts_on = st.timestamps && o.ts.get().is_some();
        e.peer_syn_ts = o.ts.get().map_or(0, |t| t.0);
        e.snd_wscale = if e.ws_on { o.wscale.get().unwrap_or(0) } else { 0 };
        e.rcv_wscale = if e.ws_on { e.shift } else { 0 };
        let mss = fl.cfg.mss as u32 - if e.ts_on { 12 } else { 0 };
        e.syn_wnd = syn_window(e.space, mss);
        self.send_syn_ack(seg.flow);
    }

    /// The client end (at `host`) gets the SYN-ACK: it is established and ACKs.
    fn on_syn_ack(&mut self, host: usize, seg: &Seg) {
        let f = seg.flow;
        let fl = &mut self.flows[f];
        if fl.end[host].established {
            // A retransmitted SYN/ACK: our handshake ACK was lost; say it again.
            if host == SENDER {
                self.sender_pure_ack(f);
            } else {
                self.receiver_ack(f, false);
            }
            return;
        }
        self.disarm(f, Which::Syn);
        let fl = &mut self.flows[f];
        let o = seg.syn.unwrap_or(SynOpts {
            mss: None,
            sack_perm: Opt::Absent,
            ts: Opt::Absent,
            wscale: Opt::Absent,
        });
        let st = fl.stack[host];
        let e = &mut fl.end[host];
        e.peer_mss = o.mss.unwrap_or(536);
        e.ws_on = st.offered_shift(0).is_some() && o.wscale.get().is_some();
        e.sack_on = st.sack && o.sack_perm.get().is_some();
        e.ts_on = st.timestamps && o.ts.get().is_some();
        e.peer_syn_ts = o.ts.get().map_or(0, |t| t.0);
        e.snd_wscale = if e.ws_on { o.wscale.get().unwrap_or(0) } else { 0 };
        e.rcv_wscale = if e.ws_on { e.shift } else { 0 };
        let syn_ack_wnd = seg.win as u64;
        self.establish(f, host, syn_ack_wnd);
        if host == SENDER {
            self.flows[f].s_ts_recent = self.flows[f].end[SENDER].peer_syn_ts;
            // The handshake's ACK, then data.
            self.sender_pure_ack(f);
            self.sender_send(f);
        } else {
            self.receiver_ack(f, false);
        }
    }

    /// `host`'s end of flow `f` becomes established; `peer_wnd` is the window the peer
    /// last advertised (unscaled when it came in a SYN).
    fn establish(&mut self, f: usize, host: usize, peer_wnd: u64) {
        let now = self.now;
        let fl = &mut self.flows[f];
        fl.end[host].established = true;
        let s_end = fl.end[SENDER];
        if host == SENDER {
            let peer_mss = s_end.peer_mss.min(fl.cfg.mss) as u32;
            let mss = peer_mss.saturating_sub(if s_end.ts_on { 12 } else { 0 }).max(64);
            fl.mss_payload = mss;
            let bulk = matches!(fl.cfg.app, App::Bulk);
            let stack = fl.stack[SENDER];
            fl.snd = Some(Sender::new(
                mss,
                fl.cfg.cc,
                s_end.sack_on,
                peer_wnd,
                fl.cfg.sndbuf.or(stack.sndbuf),
                bulk,
                &stack,
            ));
            if let Some(s) = fl.snd.as_mut() {
                s.ecn = fl.cfg.ecn;
            }
            if let App::OnOff { .. } = fl.cfg.app {
                self.push(now, Kind::AppBurst(f));
            }
            if now >= self.stop {
                if let Some(s) = self.flows[f].snd.as_mut() {
                    s.app_close();
                }
            }
        } else {
            let r = fl.end[RECEIVER];
            // The receiver measures the segment size; the sender's is known here.
            let peer = r.peer_mss.min(fl.cfg.mss) as u32;
            let ts_data = fl.end[SENDER].ts_on || r.ts_on;
            let rcv_mss = peer.saturating_sub(if ts_data { 12 } else { 0 }).max(64);
            let stack = fl.stack[RECEIVER];
            let mut rcv = Receiver::new(
                r.space,
                r.rcv_wscale,
                r.syn_wnd,
                rcv_mss,
                fl.cfg.reader,
                r.peer_syn_ts,
                &stack,
            );
            rcv.start_reader(now);
            fl.rcv = Some(rcv);
            self.reader_timer(f);
        }
    }

    // ---- the sender host ------------------------------------------------------------------

    fn at_sender(&mut self, seg: Seg) {
        let f = seg.flow;
        let syn = seg.flags & TcpFlags::SYN != 0;
        let ack = seg.flags & TcpFlags::ACK != 0;
        if syn && !ack {
            self.on_syn(SENDER, &seg);
            return;
        }
        if syn && ack {
            self.on_syn_ack(SENDER, &seg);
            return;
        }
        if !ack {
            return;
        }
        if !self.flows[f].end[SENDER].established {
            let e = &self.flows[f].end[SENDER];
            if e.peer_mss == 0 {
                return;
            }
            // The server's handshake completes with the client's ACK.
            let w = (seg.win as u64) << e.snd_wscale;
            self.establish(f, SENDER, w);
        }
        let fl = &mut self.flows[f];
        let e = fl.end[SENDER];
        if e.ts_on {
            if let Some((v, _)) = seg.ts {
                fl.s_ts_recent = v;
            }
        }
        let Some(snd) = fl.snd.as_mut() else { return };
        let base = e.isn.wrapping_add(1);
        let una_wire = base.wrapping_add(snd.una as u32);
        let to_off = |w: u32| -> Option<u64> {
            let d = w.wrapping_sub(una_wire) as i32 as i64;
            let o = snd.una as i64 + d;
            (o >= 0).then_some(o as u64)
        };
        let Some(ack_off) = to_off(seg.ack) else { return };
        let sacks: Vec<(u64, u64)> = if e.sack_on {
            seg.sack
                .iter()
                .filter_map(|&(l, r)| Some((to_off(l)?, to_off(r)?)))
                .collect()
        } else {
            Vec::new()
        };
        let win = (seg.win as u64) << e.snd_wscale;
        let ece = seg.flags & TcpFlags::ECE != 0;
        let res = snd.on_ack(self.now, ack_off, win, &sacks, ece);
        let fin = seg.flags & TcpFlags::FIN != 0;
        if fin && !fl.s_got_fin {
            fl.s_got_fin = true;
        }
        if res.una_advanced {
            self.disarm(f, Which::Rto);
        }
        if fin {
            self.sender_pure_ack(f);
        }
        self.sender_send(f);
    }

    /// Lets the sender transmit, then looks after its timers and the chronograph.
    fn sender_send(&mut self, f: usize) {
        let now = self.now;
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        if let Some(snd) = self.flows[f].snd.as_mut() {
            snd.try_send(now, &mut out);
        }
        self.emit_xmits(f, &out);
        self.scratch = out;
        self.sender_timers(f);
        self.account(f);
    }

    fn emit_xmits(&mut self, f: usize, out: &[Xmit]) {
        if out.is_empty() {
            return;
        }
        let fl = &mut self.flows[f];
        if fl.first_data.is_none() && out.iter().any(|x| x.len > 0) {
            fl.first_data = Some(self.now);
        }
        let e = fl.end[SENDER];
        let r_isn = fl.end[RECEIVER].isn;
        let ack = r_isn.wrapping_add(1 + fl.s_got_fin as u32);
        let win = self.sender_window(f);
        let ts_recent = self.flows[f].s_ts_recent;
        for x in out {
            let mut flags = TcpFlags::ACK;
            if x.psh {
                flags |= TcpFlags::PSH;
            }
            if x.fin {
                flags |= TcpFlags::FIN;
            }
            if x.cwr {
                flags |= TcpFlags::CWR;
            }
            let seq = if x.probe {
                e.isn.wrapping_add(x.start as u32)
            } else {
                e.isn.wrapping_add(1).wrapping_add(x.start as u32)
            };
            let seg = Seg {
                flow: f,
                forward: true,
                seq,
                ack,
                flags,
                win,
                len: x.len,
                ts: e.ts_on.then_some((e.ts_off, ts_recent)),
                sack: Vec::new(),
                syn: None,
                probe: x.probe,
                ecn: if x.ect { Ecn::Ect0 } else { Ecn::NotEct },
            };
            self.emit(SENDER, seg);
        }
    }

    /// The window the sender host's end advertises: its initial window, never grown (it
    /// receives no data).
    fn sender_window(&self, f: usize) -> u16 {
        let e = &self.flows[f].end[SENDER];
        let s = e.rcv_wscale as u32;
        let w = e.syn_wnd.div_ceil(1 << s) * (1 << s);
        (w.min(65535 << s) >> s) as u16
    }

    fn sender_pure_ack(&mut self, f: usize) {
        let fl = &self.flows[f];
        let e = fl.end[SENDER];
        let nxt = fl.snd.as_ref().map_or(0, |s| s.nxt + s.fin_sent as u64);
        let seg = Seg {
            flow: f,
            forward: true,
            seq: e.isn.wrapping_add(1).wrapping_add(nxt as u32),
            ack: fl.end[RECEIVER].isn.wrapping_add(1 + fl.s_got_fin as u32),
            flags: TcpFlags::ACK,
            win: self.sender_window(f),
            len: 0,
            ts: e.ts_on.then_some((e.ts_off, fl.s_ts_recent)),
            sack: Vec::new(),
            syn: None,
            probe: false,
            ecn: Ecn::NotEct,
        };
        self.emit(SENDER, seg);
    }

    fn sender_timers(&mut self, f: usize) {
        let now = self.now;
        let Some(snd) = self.flows[f].snd.as_ref() else {
            return;
        };
        let (out, rto) = (snd.packets_out, snd.rto());
        let blocked = out == 0 && snd.has_unsent() && snd.window_blocked();
        let probe = snd.probe_interval();
        if out == 0 {
            self.disarm(f, Which::Rto);
        } else if self.flows[f].rto.at.is_none() {
            self.arm(f, Which::Rto, now + rto);
        }
        if blocked {
            if self.flows[f].persist.at.is_none() {
                self.arm(f, Which::Persist, now + probe);
            }
        } else {
            self.disarm(f, Which::Persist);
        }
    }

    /// Records the sender's state when it changes (the truth's chronograph).
    fn account(&mut self, f: usize) {
        let now = self.now;
        let fl = &mut self.flows[f];
        let (Some(snd), Some(_)) = (fl.snd.as_ref(), fl.first_data) else {
            return;
        };
        if fl.all_acked.is_some() {
            return;
        }
        let done = snd.app_closed && snd.una >= snd.written && !snd.has_unsent();
        let st = if done { None } else { Some(snd.state()) };
        if fl.chrono.is_empty() || st != fl.last_state {
            fl.chrono.push((now, st));
            fl.last_state = st;
        }
        if done {
            fl.all_acked = Some(now);
        }
    }

    // ---- the receiver host -----------------------------------------------------------------

    fn at_receiver(&mut self, seg: Seg) {
        let f = seg.flow;
        let syn = seg.flags & TcpFlags::SYN != 0;
        let ack = seg.flags & TcpFlags::ACK != 0;
        if syn && !ack {
            self.on_syn(RECEIVER, &seg);
            return;
        }
        if syn && ack {
            self.on_syn_ack(RECEIVER, &seg);
            return;
        }
        if !self.flows[f].end[RECEIVER].established {
            if !ack || self.flows[f].end[RECEIVER].peer_mss == 0 {
                return;
            }
            let w = (seg.win as u64) << self.flows[f].end[RECEIVER].snd_wscale;
            self.establish(f, RECEIVER, w);
        }
        let now = self.now;
        let fl = &mut self.flows[f];
        let r_isn = fl.end[RECEIVER].isn;
        if fl.r_fin_sent && ack && seg.ack == r_isn.wrapping_add(2) && !fl.r_fin_acked {
            fl.r_fin_acked = true;
            fl.closed = fl.snd.as_ref().is_some_and(|s| s.fin_acked);
        }
        let ts_on = fl.end[RECEIVER].ts_on;
        let base = fl.end[SENDER].isn.wrapping_add(1);
        let Some(rcv) = fl.rcv.as_mut() else { return };
        let nxt_wire = base.wrapping_add(rcv.data_end as u32);
        let start = if seg.probe {
            rcv.data_end.saturating_sub(1)
        } else {
            let d = seg.seq.wrapping_sub(nxt_wire) as i32 as i64;
            (rcv.data_end as i64 + d).max(0) as u64
        };
        let fin = seg.flags & TcpFlags::FIN != 0;
        let tsval = if ts_on { seg.ts.map(|t| t.0) } else { None };
        let mut decision = rcv.on_segment(now, start, seg.len, fin, tsval, seg.probe);
        // ECN (Linux `tcp_ecn_accept_cwr`, then `__tcp_ecn_check_ce`): a CWR ends the echo,
        // a CE mark starts it, and the first mark is acknowledged at once.
        if fl.cfg.ecn {
            if seg.flags & TcpFlags::CWR != 0 && seg.len > 0 {
                fl.r_demand_cwr = false;
            }
            if seg.ecn == Ecn::Ce && !std::mem::replace(&mut fl.r_demand_cwr, true) {
                decision = AckNow::Now;
            }
        }
        match decision {
            AckNow::Now => self.receiver_ack(f, false),
            AckNow::Delay => {
                if self.flows[f].delack.at.is_none() {
                    let delack = ns(self.flows[f].stack[RECEIVER].delack).max(MS);
                    self.arm(f, Which::Delack, now + delack);
                }
            }
            AckNow::No => {}
        }
        self.receiver_maybe_close(f);
        self.reader_timer(f);
    }

    /// Sends the receiver's ACK (with FIN when it closes).
    fn receiver_ack(&mut self, f: usize, fin: bool) {
        self.disarm(f, Which::Delack);
        let fl = &mut self.flows[f];
        let e = fl.end[RECEIVER];
        let s_base = fl.end[SENDER].isn.wrapping_add(1);
        let (ack_off, win, sacks) = match fl.rcv.as_mut() {
            Some(r) => {
                let n = if e.ts_on { 3 } else { 4 };
                let blocks = if e.sack_on { r.sack_blocks(n) } else { Vec::new() };
                let win = r.select_window();
                (r.rcv_nxt, win, blocks)
            }
            // The client's handshake ACK before anything else.
            None => (0, (e.syn_wnd >> e.rcv_wscale) as u16, Vec::new()),
        };
        let ts_recent = fl.rcv.as_ref().map_or(e.peer_syn_ts, |r| r.ts_recent);
        let mut flags = TcpFlags::ACK;
        if fin {
            flags |= TcpFlags::FIN;
        }
        if fl.r_demand_cwr {
            flags |= TcpFlags::ECE;
            fl.ece_acks += 1;
        }
        let seg = Seg {
            flow: f,
            forward: false,
            seq: e.isn.wrapping_add(1 + (fl.r_fin_sent && !fin) as u32),
            ack: s_base.wrapping_add(ack_off as u32),
            flags,
            win,
            len: 0,
            ts: e.ts_on.then_some((e.ts_off, ts_recent)),
            sack: sacks
                .iter()
                .map(|&(l, r)| (s_base.wrapping_add(l as u32), s_base.wrapping_add(r as u32)))
                .collect(),
            syn: None,
            probe: false,
            ecn: Ecn::NotEct,
        };
        self.emit(RECEIVER, seg);
    }

    fn receiver_maybe_close(&mut self, f: usize) {
        let fl = &self.flows[f];
        if fl.r_fin_sent || !fl.rcv.as_ref().is_some_and(|r| r.at_eof()) {
            return;
        }
        self.flows[f].r_fin_sent = true;
        self.receiver_ack(f, true);
    }

    // ---- applications and timers --------------------------------------------------------------

    fn app_burst(&mut self, f: usize) {
        let now = self.now;
        let App::OnOff { burst, every } = self.flows[f].cfg.app else {
            return;
        };
        if now >= self.stop {
            return;
        }
        if let Some(s) = self.flows[f].snd.as_mut() {
            s.app_write(burst as u64);
        }
        let next = now + ns(every).max(MS);
        if next < self.stop {
            self.push(next, Kind::AppBurst(f));
        }
        self.sender_send(f);
    }

    fn app_stop(&mut self) {
        for f in 0..self.flows.len() {
            if let Some(s) = self.flows[f].snd.as_mut() {
                s.app_close();
                self.sender_send(f);
            }
        }
    }

    /// Wakes a sleeping reader when its tick is over.
    fn reader_timer(&mut self, f: usize) {
        let at = self.flows[f].rcv.as_ref().and_then(|r| r.sleep_until);
        match at {
            Some(t) if self.flows[f].reader.at != Some(t) => self.arm(f, Which::Reader, t),
            Some(_) => {}
            None => self.disarm(f, Which::Reader),
        }
    }

    fn timer(&mut self, f: usize, which: Which, gen: u64) {
        let now = self.now;
        let t = self.timer_mut(f, which);
        if t.gen != gen || t.at != Some(now) {
            return;
        }
        t.at = None;
        match which {
            Which::Syn => {
                let c = self.flows[f].client_host;
                if !self.flows[f].end[c].established {
                    self.send_syn(f);
                }
            }
            Which::SynAck => {
                let s = 1 - self.flows[f].client_host;
                if !self.flows[f].end[s].established {
                    self.send_syn_ack(f);
                }
            }
            Which::Delack => {
                if self.flows[f].rcv.as_ref().is_some_and(|r| r.pending) {
                    self.receiver_ack(f, false);
                }
            }
            Which::Reader => {
                let ack = self.flows[f].rcv.as_mut().is_some_and(|r| r.reader_wake(now));
                if ack {
                    self.receiver_ack(f, false);
                }
                self.receiver_maybe_close(f);
                self.reader_timer(f);
            }
            Which::Rto => {
                let mut out = std::mem::take(&mut self.scratch);
                out.clear();
                if let Some(s) = self.flows[f].snd.as_mut() {
                    s.on_rto(now, &mut out);
                }
                self.emit_xmits(f, &out);
                self.scratch = out;
                if let Some(s) = self.flows[f].snd.as_ref() {
                    if s.packets_out > 0 {
                        let rto = s.rto();
                        self.arm(f, Which::Rto, now + rto);
                    }
                }
                self.sender_timers(f);
                self.account(f);
            }
            Which::Persist => {
                let mut out = std::mem::take(&mut self.scratch);
                out.clear();
                if let Some(s) = self.flows[f].snd.as_mut() {
                    s.on_persist(now, &mut out);
                }
                self.emit_xmits(f, &out);
                self.scratch = out;
                self.sender_timers(f);
                self.account(f);
            }
        }
    }

    // ---- output ----------------------------------------------------------------------------

    fn output(mut self) -> SimOutput {
        let end_of_run = self.now;
        let [a, b, m] = std::mem::take(&mut self.caps);
        let sender_side_pcap = capture::write(a, &self.hosts[SENDER]);
        let receiver_side_pcap = capture::write(b, &self.hosts[RECEIVER]);
        let middle_pcap = self.path.middle.map(|tap| {
            let mut m = m;
            if let Some(c) = tap.capture.coalesce {
                m.sort_by_key(|r| (r.t, r.n));
                capture::coalesce(&mut m, &c);
            }
            capture::write(m, &tap.capture)
        });
        let truth = (0..self.flows.len()).map(|f| self.truth(f, end_of_run)).collect();
        SimOutput {
            sender_side_pcap,
            receiver_side_pcap,
            middle_pcap,
            truth,
        }
    }

    fn limit_times(&self, f: usize, from: i64, to: i64) -> LimitTimes {
        let fl = &self.flows[f];
        let mut t = LimitTimes::default();
        if to <= from {
            return t;
        }
        let mut acc = [0i64; 4];
        for (i, &(at, st)) in fl.chrono.iter().enumerate() {
            let next = fl.chrono.get(i + 1).map_or(to, |c| c.0);
            let (a, b) = (at.max(from), next.min(to));
            if b <= a {
                continue;
            }
            let k = match st {
                Some(State::Rwnd) => 0,
                Some(State::Cwnd) => 1,
                Some(State::Sender) => 2,
                Some(State::Idle) => 3,
                None => continue,
            };
            acc[k] += b - a;
        }
        let cap: i64 = self.busy.iter().map(|&(a, b)| (b.min(to) - a.max(from)).max(0)).sum();
        t.rwnd_limited = dur(acc[0]);
        t.cwnd_limited = dur(acc[1]);
        t.sender_limited = dur(acc[2] + acc[3]);
        t.idle = dur(acc[3]);
        t.total = dur(acc.iter().sum());
        t.at_capacity = dur(cap);
        t
    }

    fn truth(&self, f: usize, end_of_run: i64) -> FlowTruth {
        let fl = &self.flows[f];
        let ipv6 = self.path.ipv6;
        let mss = if fl.mss_payload > 0 {
            fl.mss_payload
        } else {
            fl.cfg.mss as u32 - 12
        };
        let ts = fl.end[SENDER].ts_on || !fl.end[SENDER].established;
        let data_frame = (wire::link_ip_len(ipv6) + wire::tcp_len(ts, 0) + mss).max(60);
        let ack_frame = (wire::link_ip_len(ipv6) + wire::tcp_len(ts, 0)).max(60);
        let rate = self.path.rate_bps.max(1) as f64;
        let ser = |b: u32| (b as f64 * 8.0 / rate * 1e9).round() as i64;
        let bottleneck = self.path.bottleneck_bps().max(1) as f64;
        let base = self.links[0].delay
            + self.links[1].delay
            + ser(data_frame)
            + if self.path.ack_rate_limited { ser(ack_frame) } else { 0 }
            + PROC;
        let payload_rate = bottleneck / 8.0 * mss as f64 / data_frame as f64;
        let (from, to) = match fl.first_data {
            Some(a) => (a, fl.all_acked.unwrap_or(end_of_run)),
            None => (0, 0),
        };
        let warm = ((to - from) / 4).min(1_000 * MS);
        let snd = fl.snd.as_ref();
        let client = fl.addr[fl.client_host].clone();
        let server = fl.addr[1 - fl.client_host].clone();
        FlowTruth {
            client,
            server,
            sender_is_client: fl.client_host == SENDER,
            intended: fl.cfg.intended,
            base_rtt: dur(base),
            min_rtt: snd.and_then(|s| s.min_rtt).map(dur),
            payload_rate,
            bdp_bytes: (payload_rate * base as f64 / 1e9).round() as u64,
            mss,
            bytes_written: snd.map_or(0, |s| s.written),
            bytes_acked: snd.map_or(0, |s| s.una.min(s.written)),
            bytes_read: fl.rcv.as_ref().map_or(0, |r| r.read),
            segments_sent: snd.map_or(0, |s| s.segments_sent),
            retransmitted_segments: snd.map_or(0, |s| s.retransmitted),
            queue_drops: fl.queue_drops,
            random_losses: fl.random_losses,
            shaper_drops: fl.shaper_drops,
            outage_drops: fl.outage_drops,
            rto_count: snd.map_or(0, |s| s.rto_count),
            fast_recoveries: snd.map_or(0, |s| s.fast_recoveries),
            ce_marks: fl.ce_marks,
            ece_acks: fl.ece_acks,
            ecn_reductions: snd.map_or(0, |s| s.ecn_reductions),
            cwr_segments: snd.map_or(0, |s| s.cwr_sent),
            zero_window_acks: fl.rcv.as_ref().map_or(0, |r| r.zero_windows),
            max_cwnd_segments: snd.map_or(0, |s| s.max_cwnd),
            max_flight_bytes: snd.map_or(0, |s| s.max_flight),
            max_rwnd_bytes: snd.map_or(0, |s| s.max_rwnd),
            sender_snd_wscale: fl.ws(SENDER),
            receiver_rcv_wscale: {
                let e = &fl.end[RECEIVER];
                (e.established && e.ws_on).then_some(e.rcv_wscale)
            },
            window_violations: snd.map_or(0, |s| s.violations),
            closed: fl.closed,
            transfer: self.limit_times(f, from, to),
            steady: self.limit_times(f, from + warm, to),
        }
    }
}
