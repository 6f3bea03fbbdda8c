//! One TCP connection: the handshake, both directions, the RTT loops, and the per-segment
//! bookkeeping that ties them together (RFC 9293 segment processing, observed passively).

use super::direction::Direction;
use super::ecn::SetupFlags;
use super::event::{SackRanges, SegmentEvent};
use super::handshake::{Handshake, SynOptions};
use super::rtt::{Carried, Echo, End, RttSource, RttTracker, Sent};
use super::scale_infer::{Confidence, ScaleInference, MAX_SHIFT};
use super::sender_view::{Advert, SenderViewTracker};
use super::window::WindowScale;
use crate::decode::{Ecn, Segment, TcpFlags};
use crate::endpoint::{Dir, Endpoint};
use crate::time::{Span, Timestamp};
use std::cell::Cell;

/// The segment size assumed without an announced MSS: Ethernet's, the common case.
const DEFAULT_MSS: u32 = 1460;

/// The life of a connection as the capture shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnState {
    /// Packets flow; no FIN or RST yet (or only one FIN).
    Open,
    /// Closed by an RST, or by FINs in both directions, at this time.
    Closed(Timestamp),
}

#[derive(Clone, Debug)]
pub struct Connection {
    pub id: u64,
    pub client: Endpoint,
    pub server: Endpoint,
    /// How the client was chosen: by its SYN, or by the port heuristic (higher port).
    pub client_by_syn: bool,
    /// Record number of the connection's first packet in the capture.
    pub first_frame: u64,
    pub first_ts: Timestamp,
    pub last_ts: Timestamp,
    pub packets: [u64; 2],
    /// Read freely; changed only by `track`, which then calls `on_handshake_change`.
    pub handshake: Handshake,
    /// Moves whenever a SYN or SYN/ACK changes `handshake` (the scale memo's key).
    handshake_revision: u32,
    /// `mss(d)` as of the last change of what it depends on (the handshake, or the
    /// largest segment of `d`): asked several times per segment, it changes rarely.
    mss_now: [u32; 2],
    /// Direction state indexed by `Dir::index()` (c2s, s2c).
    pub dirs: [Direction; 2],
    pub rtt: RttTracker,
    pub state: ConnState,
    pub rst_seen: bool,
    views: [SenderViewTracker; 2],
    /// Evidence about the window scale of the windows granted to each direction's data
    /// (indexed by data direction: [c2s] is about the server's windows).
    pub scale_evidence: [ScaleInference; 2],
    /// The first ACK of the client after the SYN/ACK has been used for a handshake sample.
    handshake_ack_sampled: bool,
    /// Timestamps went backwards inside this connection this many times.
    pub time_reversals: u64,
    /// `scale_of_sender`'s last answer per direction and what it depended on: it is asked
    /// several times per segment, and its inputs change far less often.
    scale_memo: [Cell<Option<ScaleMemo>>; 2],
}

#[derive(Clone, Copy, Debug)]
struct ScaleMemo {
    /// Revision of the evidence and of the handshake it was computed with.
    events: u64,
    handshake: u32,
    scale: WindowScale,
}

impl Connection {
    pub fn new(
        id: u64,
        client: Endpoint,
        server: Endpoint,
        client_by_syn: bool,
        first_frame: u64,
        ts: Timestamp,
    ) -> Self {
        Connection {
            id,
            client,
            server,
            client_by_syn,
            first_frame,
            first_ts: ts,
            last_ts: ts,
            packets: [0; 2],
            handshake: Handshake::default(),
            handshake_revision: 0,
            mss_now: [DEFAULT_MSS; 2],
            dirs: [Direction::default(), Direction::default()],
            rtt: RttTracker::default(),
            state: ConnState::Open,
            rst_seen: false,
            views: [SenderViewTracker::default(), SenderViewTracker::default()],
            scale_evidence: [ScaleInference::default(), ScaleInference::default()],
            handshake_ack_sampled: false,
            time_reversals: 0,
            scale_memo: Default::default(),
        }
    }

    /// Scale of the windows advertised by the sender of a segment going `dir`, as every
    /// window in bytes is shown: the handshake's when both SYNs are in the capture (the
    /// negotiated scale is the scale, RFC 7323 §2.2); without a usable handshake, the shift
    /// inferred from behaviour once it is settled.
    #[inline]
    pub fn scale_of_sender(&self, dir: Dir) -> WindowScale {
        match self.negotiated_scale(dir) {
            WindowScale::Unknown => self.effective_scale(dir),
            negotiated => negotiated,
        }
    }

    /// The scale the other end actually applies to `dir`'s sender's windows: the
    /// handshake's, unless that end's data contradicts it — it kept more in flight than that
    /// scale allows on more than 1% of its segments (a sender never exceeds the window it
    /// knows, RFC 9293 §3.8.6), or it stops at the edge of another scale's window again and
    /// again: a middlebox beyond the capture point rewrote the option, and the two ends read
    /// the windows differently. The sender's view (what it could send) follows this one;
    /// the middlebox findings say when it differs from [`Self::scale_of_sender`].
    #[inline]
    pub fn effective_scale(&self, dir: Dir) -> WindowScale {
        let events = self.scale_evidence[dir.reverse().index()].revision();
        let handshake = self.handshake_revision;
        match self.scale_memo[dir.index()].get() {
            Some(m) if m.events == events && m.handshake == handshake => m.scale,
            _ => self.refresh_scale_of_sender(dir, events, handshake),
        }
    }

    #[inline(never)]
    fn refresh_scale_of_sender(&self, dir: Dir, events: u64, handshake: u32) -> WindowScale {
        let scale = self.compute_scale_of_sender(dir);
        self.scale_memo[dir.index()].set(Some(ScaleMemo {
            events,
            handshake,
            scale,
        }));
        scale
    }

    fn compute_scale_of_sender(&self, dir: Dir) -> WindowScale {
        let negotiated = match dir {
            Dir::C2S => self.handshake.client_scale(),
            Dir::S2C => self.handshake.server_scale(),
        };
        let evidence = &self.scale_evidence[dir.reverse().index()];
        let inferred = || evidence.settled().map_or(WindowScale::Unknown, WindowScale::Inferred);
        // The advertiser's own SYN, and what it offered there: a peer that never saw the
        // other SYN lose its option still scales by it (the one-sided strip).
        let own_syn = match dir {
            Dir::C2S => self.handshake.syn,
            Dir::S2C => self.handshake.syn_ack,
        };
        let offered = own_syn.and_then(|s| s.wscale.present()).map(|k| k.min(14));
        // Neither SYN offered scaling: no end can be scaling, and data beyond the window
        // means the capture missed ACKs, not that the scale is wrong.
        let anyone_offered = [self.handshake.syn, self.handshake.syn_ack]
            .iter()
            .flatten()
            .any(|s| s.wscale.present().is_some());
        // The advertiser's own SYN, seen without the option: the peer never received a
        // shift from it, so the peer reads its windows unscaled (RFC 7323 §2.2: a shift
        // applies only when both SYNs carried the option). Stripped before the capture
        // point or never sent, the reading end is the same; only a middlebox adding an
        // option beyond it could change that. Data beyond such a window means the
        // reconstruction of what the sender had was off (a capture between two hosts on a
        // sub-millisecond LAN), not the scale.
        let own_syn_without = own_syn.is_some_and(|s| s.wscale.present().is_none());
        match negotiated.shift() {
            None => inferred(),
            Some(_) if !anyone_offered || own_syn_without => negotiated,
            // The sender keeps more than twice the window in flight: it obeys a larger
            // scale. One window's excess is not enough: away from the sender the flight is
            // rebuilt by pairing data with the ACK it had one loop earlier, and can be off by
            // the ACKs of one round (R22 wscale_strip_both at the client: a 64 KiB window
            // filled to its last byte, rebuilt 1.4 KiB over it often enough to read as the
            // client's offered shift 7 for the rest of the transfer). The middlebox rule that
            // finds the same strip asks the same (`wscale_sender_over_window`).
            Some(k) if evidence.contradicts(k) && (k as usize >= MAX_SHIFT || evidence.contradicts(k + 1)) => {
                match (evidence.settled(), offered) {
                    (Some(s), _) => WindowScale::Inferred(s),
                    (None, Some(o)) if o != k && !evidence.contradicts(o) => WindowScale::Inferred(o),
                    _ => WindowScale::Unknown,
                }
            }
            // The sender stops at the edge of another scale's window again and again, and
            // follows that edge as the raw window moves: it obeys a scale the capture point
            // never saw. Stopping at one edge alone is what a sender capped by its own send
            // buffer or cwnd at `raw << shift` does too; that cannot outweigh the handshake
            // (zeek http_no_crlf: raw 1024, flights at 32 KiB, read as shift 5 against 8) —
            // unless the shift is 0: a sender that reads the windows unscaled is what an
            // option stripped beyond the capture point makes (RFC 7323 §2.2), the one
            // middlebox effect known to give a sender another scale, and the strip is
            // found the moment it holds the flight (R15 wscale_strip_synack_up: waiting
            // for a second edge left a fifth of the transfer read at the handshake's 5 MiB).
            Some(k) => match evidence.cached() {
                Some(r) if r.confidence == Confidence::Certain && r.shift != k && (r.edge_moved || r.shift == 0) => {
                    WindowScale::Inferred(r.shift)
                }
                _ => negotiated,
            },
        }
    }

    /// The scale the handshake negotiated for windows advertised by `dir`'s sender.
    pub fn negotiated_scale(&self, dir: Dir) -> WindowScale {
        match dir {
            Dir::C2S => self.handshake.client_scale(),
            Dir::S2C => self.handshake.server_scale(),
        }
    }

    pub fn dir(&self, d: Dir) -> &Direction {
        &self.dirs[d.index()]
    }

    /// The end that sends in direction `d`.
    pub fn sender_end(d: Dir) -> End {
        match d {
            Dir::C2S => End::Client,
            Dir::S2C => End::Server,
        }
    }

    /// Keeps what is derived from the handshake in step with it.
    fn on_handshake_change(&mut self) {
        self.handshake_revision += 1;
        self.mss_now = [self.compute_mss(Dir::C2S), self.compute_mss(Dir::S2C)];
    }

    /// Whether the connection may use SACK: no handshake segment in the capture says it
    /// does not (RFC 2018 §2: both SYNs must carry SACK-permitted).
    fn may_sack(&self) -> bool {
        [&self.handshake.syn, &self.handshake.syn_ack].into_iter().all(|o| {
            o.as_ref()
                .is_none_or(|o| !matches!(o.sack_permitted, crate::decode::Seen::Absent))
        })
    }

    /// Segment size of direction `d`: the MSS its receiver announced, else the largest
    /// segment seen (capped at an Ethernet MSS: TSO/GRO super-segments are not the MSS).
    pub fn mss(&self, d: Dir) -> u32 {
        self.mss_now[d.index()]
    }

    fn compute_mss(&self, d: Dir) -> u32 {
        let announced = match d {
            Dir::C2S => self.handshake.syn_ack.and_then(|s| s.mss.present()),
            Dir::S2C => self.handshake.syn.and_then(|s| s.mss.present()),
        };
        let seen = self.dir(d).max_segment;
        match announced {
            Some(m) if m > 0 => {
                let m = m as u32;
                // With timestamps the payload of a full segment is 12 bytes less.
                if seen > 0 && seen < m {
                    seen.max(m.saturating_sub(40))
                } else {
                    m
                }
            }
            _ if seen > 0 => seen.min(DEFAULT_MSS),
            _ => DEFAULT_MSS,
        }
    }

    /// Whether a SYN (without ACK) from the client starts a new connection on this tuple
    /// (port reuse) rather than being a retransmission of this one's SYN.
    pub fn is_new_incarnation(&self, seg: &Segment) -> bool {
        if let ConnState::Closed(_) = self.state {
            return true;
        }
        match self.handshake.syn {
            Some(s) => s.isn != seg.seq && self.dirs.iter().any(|d| d.unique_bytes > 0 || d.fin),
            None => self.dirs.iter().any(|d| d.unique_bytes > 0),
        }
    }

    /// Processes one segment going `dir` at `ts`; returns what it meant, with the flight
    /// series a per-packet observer shows.
    pub fn on_segment(&mut self, seg: &Segment, dir: Dir, frame: u64, ts: Timestamp) -> SegmentEvent {
        let mut ev = self.track(seg, dir, frame, ts);
        self.add_flights(&mut ev);
        ev
    }

    /// Fills the event's `flight` (as Wireshark counts it) and `pipe` (RFC 6675): series for
    /// per-packet output, which the diagnosis does not read, so the analysis computes them
    /// only for an observer that wants them. Call right after [`Self::track`].
    pub fn add_flights(&self, ev: &mut SegmentEvent) {
        if ev.len == 0 {
            return;
        }
        let d = &self.dirs[ev.dir.index()];
        ev.flight = d.seen_flight(ev.flags.syn() || ev.flags.fin());
        ev.pipe = d.pipe(ev.mss);
    }

    /// Whether to keep what [`Self::add_flights`] needs (the default). The analysis turns
    /// it off, before the first segment, when no observer shows per-packet series.
    pub fn keep_flight_series(&mut self, keep: bool) {
        for d in &mut self.dirs {
            d.keep_seen_flight(keep);
        }
    }

    /// [`Self::on_segment`] without the observer-only series (`flight` and `pipe` are None).
    pub fn track(&mut self, seg: &Segment, dir: Dir, frame: u64, ts: Timestamp) -> SegmentEvent {
        if ts < self.last_ts {
            self.time_reversals += 1;
        }
        self.rtt.quantum.on(ts);
        self.last_ts = self.last_ts.max(ts);
        self.packets[dir.index()] += 1;
        let flags = seg.flags;
        let from = Self::sender_end(dir);

        // Handshake (RFC 9293 §3.5).
        if flags.syn() && !flags.ack() && dir == Dir::C2S {
            self.handshake
                .on_syn(SynOptions::from_segment(ts, seg.seq, &seg.options).with_ecn(SetupFlags::of(seg)));
            self.on_handshake_change();
        } else if flags.syn() && flags.ack() && dir == Dir::S2C {
            let first = self.handshake.syn_ack.is_none();
            self.handshake
                .on_syn_ack(SynOptions::from_segment(ts, seg.seq, &seg.options).with_ecn(SetupFlags::of(seg)));
            self.on_handshake_change();
            // Karn for SYNs: no sample when either SYN was retransmitted.
            if let (true, Some(syn)) = (first, self.handshake.syn) {
                if syn.count == 1 && seg.ack == syn.isn.add(1) {
                    self.rtt
                        .add(ts, End::Server, RttSource::Handshake, (ts - syn.ts).max_zero());
                }
            }
        } else if dir == Dir::C2S && flags.ack() && !flags.syn() && !self.handshake_ack_sampled {
            if let Some(sa) = self.handshake.syn_ack {
                self.handshake_ack_sampled = true;
                if sa.count == 1 && seg.ack == sa.isn.add(1) {
                    self.rtt
                        .add(ts, End::Client, RttSource::Handshake, (ts - sa.ts).max_zero());
                }
            }
        }

        // ECN: most segments carry none (one test, then nothing).
        if seg.ecn != Ecn::NotEct || flags.has(TcpFlags::ECE | TcpFlags::CWR) {
            self.on_ecn(seg, dir, frame, ts);
        }

        // The segment as data of its own direction, then as an ACK and a window for the
        // other direction's data.
        let rx_mss = self.mss(dir.reverse());
        let tx_mss = self.mss(dir);
        let scale = self.scale_of_sender(dir);
        // A zero window is zero under any scale.
        let win_bytes = scale.bytes(seg.window, flags.syn()).or((seg.window == 0).then_some(0));
        let round_trip = self.rtt.base_round_trip();
        let tx = &mut self.dirs[dir.index()];
        tx.round_trip = round_trip;
        let largest_before = tx.max_segment;
        let previous_data = tx.last_new_data;
        let into_zero_window = tx.peer_window == Some(0);
        let send = tx.on_send(seg, ts);
        // New data past every window edge before: its sender got the ACK that moved the edge
        // first (release.rs). Where the timestamp echo times that loop, it does so exactly.
        let sender_echoes = self.rtt.through(from).by_source[RttSource::TsEcho as usize] > 0;
        if send.new_bytes > 0 && !send.zero_window_probe && !into_zero_window && !sender_echoes {
            let end = seg.seq.add(seg.payload_len);
            let release = &mut self.dirs[dir.index()].release_rtt;
            let was_broken = release.broken();
            if let Some(raw) = release.on_data(end, ts) {
                self.rtt.add_loop(from, raw);
            } else if !was_broken && release.broken() {
                self.rtt.discard_bounds(from);
            }
        }
        if send.new_bytes > 0 {
            self.dirs[dir.index()].repair_rtt.on_new_data(seg.ip_id);
        }
        if send.retransmission && seg.payload_len > 0 {
            // A copy seen sent after a sample of its data was taken: the sample answered the
            // copy before, and a D-SACK of this one takes nothing back (retractable.rs).
            self.rtt.settle(from.other(), seg.seq, seg.seq.add(seg.payload_len));
        }
        // A repair of the hole an ACK moved the cumulative point to: its sender got that ACK
        // first (repair.rs). A keep-alive or a persist probe repairs nothing. A fill read as
        // its original overtaken may be a repair by its IPv4 ID (`RepairSampler::on_fill`).
        if (send.retransmission || send.reordered) && seg.payload_len > 0 && !sender_echoes {
            let end = seg.seq.add(seg.payload_len);
            let repair = &mut self.dirs[dir.index()].repair_rtt;
            let raw = if send.reordered {
                repair.on_fill(seg.seq, end, ts, seg.ip_id)
            } else {
                repair.on_resend(seg.seq, end, ts, seg.ip_id)
            };
            if let Some(raw) = raw {
                self.rtt.add_repair(from, raw);
            }
        }
        let tx = &mut self.dirs[dir.index()];
        if tx.max_segment != largest_before {
            self.mss_now[dir.index()] = self.compute_mss(dir);
        }
        // Before this ACK moves anything: had the other direction sent more than any window
        // could allow? Then ACKs are missing from the capture and this one is late.
        let acks_missing = flags.ack() && {
            let shift = self.negotiated_scale(dir).shift();
            self.dirs[dir.reverse().index()].beyond_any_window(shift, rx_mss)
        };
        // The snaplen cut this segment's options where SACK may be in use: its blocks unread.
        let sack_unread = !seg.options.complete && self.may_sack();
        let rx = &mut self.dirs[dir.reverse().index()];
        let window_was_closed = rx.peer_window_raw == Some(0);
        // The receiver's application is behind: unread data fills half its buffer or more (its
        // window at most half the largest it offered). Such a receiver sends the ACK of two
        // full segments at once only if the window's right edge still advances; otherwise
        // the ACK waits for a read that at least doubles the window (Linux
        // `__tcp_ack_snd_check`: "right edge of window advances far enough ... tcp_recvmsg()
        // will send ACK otherwise"; `tcp_cleanup_rbuf`: a read that doubles a window at most
        // half the clamp sends the update; RFC 1122 §4.2.3.3). Its ACK times the reader, not
        // the path. A window that only dips by a few segments (a fast reader a read behind)
        // is not this: that read comes at once. One shift scales both raw values alike: the
        // test needs no scale, and holds where the handshake is missing.
        let most = rx.peer_window_raw_max as u32;
        let reader_behind = most > 0 && !flags.syn() && 2 * seg.window as u32 <= most;
        let mut acked: super::direction::AckOutcome = Default::default();
        let mut ack_rtt = None;
        // The least time this segment shows for the loop through the far end, queue
        // included (see `Rtt::far_bound`).
        let mut loop_bound: Option<Span> = None;
        if flags.ack() {
            acked = rx.on_ack(
                seg.ack,
                win_bytes,
                seg.window,
                &seg.options.sack,
                seg.payload_len > 0,
                flags.syn(),
                rx_mss,
            );
            acked.options_cut = sack_unread;
            rx.note_new_ack(ts, acked.acked);
            // The point a repair is timed from (repair.rs): only an ACK seen moving it, after
            // no missed ACK.
            if acks_missing || flags.rst() {
                rx.repair_rtt.forget();
            } else {
                let advanced = (acked.acked > 0 && !acked.beyond_seen).then(|| (seg.ack, rx.data_ack_rtt.saw(seg.ack)));
                let sack = &seg.options.sack;
                let above = acked.duplicate || sack.iter().any(|(_, r)| r.is_after(seg.ack));
                rx.repair_rtt
                    .on_ack(ts, advanced, above, !sack.is_empty() || sack_unread);
            }
            // Data never re-sent yet acknowledged only after the sender's retransmission
            // timer would have fired was acknowledged before, by an ACK the capture missed.
            let rto = self.rtt.rto_bound();
            let first_ack = |raw: Span| !acks_missing && raw <= rto;
            // An ACK of two full segments or more went out as the data came (RFC 5681 §4.2:
            // a receiver ACKs at least every second full segment at once); one of less may
            // have waited for the delayed-ACK timer or the application's answer.
            let prompt = acked.acked as u64 >= 2 * rx_mss as u64 && !reader_behind;
            let echo = seg.options.timestamps.map(|t| t.ecr);
            let raw = match rx.data_ack_rtt.on_ack(seg.ack, ts, echo) {
                Some(raw) => Some(raw),
                None => seg
                    .options
                    .sack
                    .iter()
                    .next()
                    .and_then(|(_, end)| rx.data_ack_rtt.on_sack(end, ts)),
            };
            // Data the receiver got twice: a sample an earlier ACK took of it is taken back
            // (Karn's rule, applied once the receiver says a copy the capture did not see
            // arrived too). Before this ACK's own sample: a D-SACK goes out on the arrival of
            // the duplicate (RFC 2883 §4), so this ACK answers the copy it names, and a sample
            // it takes of that copy (a keep-alive's byte, seen once, D-SACKed by the ACK that
            // answers it) is no shorter than the loop.
            if let Some((start, end)) = acked.dsack {
                self.rtt.retract(ts, from, start, end);
            }
            // An ACK that may answer a fill below the data it names (data_ack.rs) times the
            // loop through the receiver only where that loop is the near one: beside the
            // receiver the data was seen arriving, and the ACK is its own prompt answer.
            let raw = raw.filter(|_| !rx.data_ack_rtt.held_above_a_hole() || self.rtt.is_near(from));
            if let Some(raw) = raw.filter(|&raw| first_ack(raw)) {
                let carried = Carried {
                    len: rx.data_ack_rtt.sampled_len(),
                    data: Some(rx.data_ack_rtt.sampled_range()),
                };
                ack_rtt = self.rtt.add_sample(ts, from, RttSource::DataAck, raw, prompt, carried);
                loop_bound = self.rtt.far_bound(from, raw);
            }
            let tsval = seg.options.timestamps.map(|t| t.val);
            // The sender's view follows the scale the sender applies (see `effective_scale`).
            let effective = self.effective_scale(dir);
            // The window's right edge, for the data it releases: only under a scale the
            // handshake fixed and the sender obeys (an edge read too small would be one the
            // sender never had), and not when ACKs are missing from the capture. An edge not
            // read leaves the sender's unknown: the sampler starts again from the next.
            let fixed = matches!(scale, WindowScale::NotUsed | WindowScale::Shift(_))
                && self.negotiated_scale(dir) == scale
                && effective == scale;
            let release = &mut self.dirs[dir.reverse().index()].release_rtt;
            match (fixed, win_bytes) {
                _ if flags.rst() => {}
                (true, Some(w)) => {
                    if acks_missing {
                        release.forget();
                    }
                    release.on_window(seg.ack.add(w.min(1 << 30) as u32), ts);
                }
                _ => release.forget(),
            }
            let sender_window = if effective == scale {
                win_bytes
            } else {
                effective
                    .bytes(seg.window, flags.syn())
                    .or((seg.window == 0).then_some(0))
            };
            let data_dir = dir.reverse();
            let held = self.dirs[data_dir.index()].not_in_network(self.mss(data_dir));
            let recovering = self.dirs[data_dir.index()].in_recovery();
            self.views[data_dir.index()].on_ack(Advert {
                at: ts,
                ack: seg.ack,
                window: sender_window,
                raw: seg.window,
                tsval,
                held,
                recovering,
            });
        }
        let rx = &self.dirs[dir.reverse().index()];
        let rx_una = rx.una;

        // Timestamps (RFC 7323 §3): our TSval goes out, the peer's TSval comes back as TSecr.
        let mut ts_rtt = None;
        let mut echoed_peer_tsval = false;
        if let Some(o) = seg.options.timestamps {
            // Whether this segment can make the peer send at once: it acknowledged the
            // peer's data and left some outstanding (the ACK clock), or reopened its window.
            let peer_outstanding = matches!((rx.una, rx.nxt), (Some(u), Some(n)) if n.is_after(u));
            let reopened = window_was_closed && seg.window > 0;
            let releases = flags.ack() && ((acked.acked > 0 && peer_outstanding) || reopened);
            let drains = flags.ack() && acked.acked > 0 && !peer_outstanding;
            let (tx, rx) = (&mut self.dirs[dir.index()], dir.reverse().index());
            let sent = Sent {
                releases,
                drains,
                payload: seg.payload_len,
                syn: flags.syn(),
            };
            tx.ts_echo_rtt.on_tsval(o.val, ts, sent);
            // The SYN/ACK's echo of the SYN's TSval times the same loop as the handshake
            // sample, which already counts it; but it is that TSval's first echo, and a
            // later one is no round trip from the SYN: on a coarse clock (Linux's 1 ms
            // tick, RFC 7323 §5.4 allows up to 1 s) the first data can carry the SYN's
            // TSval, and the echo of that data timed from the SYN's sighting read a
            // loopback's 25 µs loop as 78 µs. Consumed here, unsampled.
            if flags.ack() && o.ecr != 0 && flags.syn() {
                let _ = self.dirs[rx].ts_echo_rtt.on_tsecr(o.ecr, ts, Echo::default());
            } else if flags.ack() && o.ecr != 0 {
                let echo = Echo {
                    acks_new_data: acked.acked > 0,
                    new_data: send.new_bytes > 0,
                    previous_data,
                };
                if let Some(echoed) = self.dirs[rx].ts_echo_rtt.on_tsecr(o.ecr, ts, echo) {
                    let sample = echoed.sample();
                    // Answered or not, the echo bounds the loop from above (`Echoed`) —
                    // unless segments the capture missed may have carried the TSval first.
                    if let Some(b) = echoed.bound().filter(|_| !acks_missing) {
                        self.rtt.note_echo_bound(from, b);
                        let b = self.rtt.far_bound(from, b);
                        loop_bound = loop_bound.into_iter().chain(b).min();
                    }
                    echoed_peer_tsval = true;
                    // Later than a retransmission timer: the first answer was not captured
                    // (or a retransmission, not this segment, was answered).
                    // Prompt: an ACK of two full segments or more, whether or not data rides
                    // on it (an ACK of less may have waited for the timer, or for the
                    // application's answer to carry it: RFC 1122 §4.2.3.2); else new data the
                    // echoed segment released (the sampler keeps only such data echoes).
                    let prompt = if acked.acked > 0 {
                        acked.acked as u64 >= 2 * rx_mss as u64 && !reader_behind
                    } else {
                        send.new_bytes > 0
                    };
                    // A data segment either way: the echoed TSval's, or the echo's own.
                    let carried = echoed.carried.max(seg.payload_len);
                    if let Some(raw) = sample.filter(|&raw| !acks_missing && raw <= self.rtt.rto_bound()) {
                        ts_rtt = self
                            .rtt
                            .add_sample(ts, from, RttSource::TsEcho, raw, prompt, Carried::len(carried));
                    }
                }
            }
        }

        // Close detection.
        if flags.rst() {
            self.rst_seen = true;
            self.state = ConnState::Closed(ts);
        } else if self.dirs[0].fin && self.dirs[1].fin && self.state == ConnState::Open {
            self.state = ConnState::Closed(ts);
        }

        let d = &self.dirs[dir.index()];
        let carries_data = seg.payload_len > 0;
        let mss = tx_mss;
        let sender_view = if carries_data && send.new_bytes > 0 {
            let lp = self.sender_loop(dir);
            let echo = seg.options.timestamps.map(|t| t.ecr).filter(|_| flags.ack());
            let min_loop = match echo {
                Some(_) => self.min_sender_loop_for_echo(dir),
                None => self.min_sender_loop(dir),
            };
            let shift = self.effective_scale(dir.reverse()).shift();
            let most = self.near_loop_bound(dir, ts);
            let least = self.rtt.through(Self::sender_end(dir)).least().unwrap_or(min_loop);
            let view = d.nxt.and_then(|nxt| {
                let rto = self.rtt.rto_bound();
                let views = &mut self.views[dir.index()];
                views.set_echo_horizon(rto);
                views.set_near_bound(most);
                views.set_least_loop(least);
                views.view(ts, echo, min_loop, lp, nxt, shift)
            });
            if let Some(v) = view {
                self.scale_evidence[dir.index()].observe(v.loop_flight, v.window_raw, v.next_ack, mss);
                if !v.recovering {
                    self.dirs[dir.index()].sent_before_recovery();
                }
            }
            view
        } else {
            None
        };
        // What of the outstanding data the path carried (RFC 6675 SetPipe): the rest is
        // SACKed or presumed lost, held at the receiver or gone.
        let not_in_network = if carries_data {
            let d = &mut self.dirs[dir.index()];
            let held = d.not_in_network(mss);
            if let Some(f) = d.flight() {
                d.pending_in_network = d.pending_in_network.max(f - held.min(f));
            }
            held
        } else {
            0
        };
        let d = &self.dirs[dir.index()];
        let mut sack = SackRanges::default();
        if flags.ack() {
            let peer = &self.dirs[dir.reverse().index()];
            for (l, r) in seg.options.sack.iter() {
                if let (Some(l), Some(r)) = (peer.relative(l), peer.relative(r)) {
                    sack.blocks[usize::from(sack.len)] = (l, r);
                    sack.len += 1;
                }
            }
        }
        SegmentEvent {
            frame,
            ts,
            flow: self.id,
            dir,
            seq: d.relative(seg.seq).unwrap_or(0),
            ack: if flags.ack() {
                self.dirs[dir.reverse().index()].relative(seg.ack)
            } else {
                None
            },
            len: seg.payload_len,
            flags,
            ecn: seg.ecn,
            win_raw: seg.window,
            win_bytes,
            flight: None,
            naive_flight: if carries_data { d.flight() } else { None },
            pipe: None,
            mss,
            ack_rtt,
            ts_rtt,
            loop_bound,
            echoed_peer_tsval,
            send,
            acked,
            zero_window: seg.window == 0 && !flags.syn() && !flags.rst() && rx_una.is_some(),
            echo: seg.options.timestamps.map(|t| t.ecr).filter(|_| flags.ack()),
            tsval: seg.options.timestamps.map(|t| t.val),
            sender_view,
            not_in_network,
            sack,
        }
    }

    /// A segment going `dir` that carries an ECN codepoint, ECE or CWR. The handshake's
    /// flags are its negotiation, not signals (RFC 3168 §6.1.1): they are not counted.
    #[inline(never)]
    fn on_ecn(&mut self, seg: &Segment, dir: Dir, frame: u64, ts: Timestamp) {
        self.dirs[dir.index()].ecn.on_codepoint(seg.ecn, frame, ts);
        if seg.flags.syn() {
            return;
        }
        if seg.flags.ack() && seg.flags.has(TcpFlags::ECE) {
            self.dirs[dir.reverse().index()].ecn.on_echo(frame, ts);
        }
        if seg.flags.has(TcpFlags::CWR) {
            self.dirs[dir.index()].ecn.on_cwr(frame, ts);
        }
    }

    /// The loop through the sender of direction `d`: how long an ACK passing the capture
    /// point takes to turn into data passing it again, queueing included. Where that loop
    /// is the far one (the longer base: the capture beside the receiver, or the sender's
    /// side of the path the longer), the minimum of the last few round trips, not the
    /// latest sample: a sender that waits (for a window update worth a segment, for the
    /// application) echoes late without the path being any longer, and a lag too long
    /// would pair data with an ACK the sender had moved past. Where it is the near one (the
    /// capture beside the sender), its least lately: a bottleneck's queue lies on one side
    /// of the capture point and an end host's near loop never crosses it
    /// (`RttTracker::other_now`), so what its recent samples hold above that least is the
    /// host's own wait — an application's answer to a request (04-vnc-openwall-3.8, 17 µs
    /// from the server: its replies after encoding a frame made the loop read milliseconds,
    /// and the reconstruction paired its data with ACKs long since had: 62.7 KiB "at the
    /// sender" beside 23.0 KiB seen).
    pub fn sender_loop(&self, d: Dir) -> Span {
        let end = Self::sender_end(d);
        let l = self.rtt.through(end);
        let recent = if self.rtt.is_near(end) { None } else { l.recent_min() };
        recent
            .or(l.segment_min.get())
            .or(l.windowed_min.get())
            .unwrap_or(Span::ZERO)
    }

    /// The shortest loop through the sender of `d` lately: no ACK reaches it sooner.
    pub fn min_sender_loop(&self, d: Dir) -> Span {
        let l = self.rtt.through(Self::sender_end(d));
        l.segment_min.get().or(l.windowed_min.get()).unwrap_or(Span::ZERO)
    }

    /// The least loop through the sender of `d` for a lookup by its echo: the samples'
    /// minimum, or less where an echo came back sooner (`Loop::echo_bound_min`), less a tick
    /// of the capture's clock. An echo names a tick of ACKs, and the loop's minimum only
    /// says which of them had had time to reach the sender; the samples are cut to the
    /// clock's ticks at both ends, so a loop as short as the least measured may read a tick
    /// longer. Early in a capture begun mid-transfer the minimum is a few samples' and may
    /// stand above the loop: a window-limited sender read 1 KB beyond its 16 kB window,
    /// its data 250.194 ms after the ACK that released it against a minimum of 250.518 ms
    /// (the one echo that showed the shorter loop was no sample: its sender had sent
    /// nothing for most of it).
    pub fn min_sender_loop_for_echo(&self, d: Dir) -> Span {
        let l = self.rtt.through(Self::sender_end(d));
        let least = l
            .echo_bound_min
            .map_or(self.min_sender_loop(d), |b| b.min(self.min_sender_loop(d)));
        (least - self.rtt.quantum.get()).max(Span::ZERO)
    }

    /// The longest the loop through the sender of `d` can be at `now` without a wait of the
    /// sender's own: its least lately, or the greatest of its prompt samples of the last two
    /// rounds (the loop as it was, a queue between the sender and here included: see
    /// `RttTracker::add_sample`) where longer, plus a tick of the capture's clock (each
    /// sample is two stamps, each cut to a tick). The recent samples [`Self::sender_loop`]
    /// takes away from the sender may hold such a wait — an ACK of the receiver's reply that
    /// the sender held for its delayed-ACK timer (RFC 1122 §4.2.3.2) or sent with its next
    /// request — and then stay the recent ones until another sample comes (zeek's
    /// smb_smb2: 69.6 ms against a 0.22 ms loop paired an SMB client's writes with ACKs it had
    /// had for 69 ms, 415 KiB "at the sender" beside 64.1 KiB seen).
    pub fn near_loop_bound(&self, d: Dir, now: Timestamp) -> Span {
        let l = self.rtt.through(Self::sender_end(d));
        let least = self.min_sender_loop(d);
        let round = self
            .rtt
            .base_end_to_end()
            .unwrap_or(least)
            .max(l.prompt_latest().unwrap_or(Span::ZERO));
        let prompt = l.prompt_max_at(now, round).unwrap_or(Span::ZERO);
        least.max(prompt) + self.rtt.quantum.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TcpPacket;

    fn seg(p: TcpPacket) -> Segment {
        let (link, bytes) = p.build();
        crate::decode::decode(link, &bytes).unwrap()
    }

    fn track(c: &mut Connection, p: TcpPacket, dir: Dir, ms: i64) {
        c.track(&seg(p), dir, 0, Timestamp(0) + Span::from_millis(ms));
        for d in [Dir::C2S, Dir::S2C] {
            assert_eq!(c.mss(d), c.compute_mss(d), "{d:?} after the segment at {ms} ms");
        }
    }

    fn conn(by_syn: bool) -> Connection {
        let ep = |s: &str| {
            let a: std::net::SocketAddr = s.parse().unwrap();
            Endpoint {
                addr: a.ip(),
                port: a.port(),
            }
        };
        Connection::new(0, ep("10.0.0.1:40000"), ep("10.0.0.2:80"), by_syn, 1, Timestamp(0))
    }

    /// A connection after its SYN (the client's shift, if any) and SYN/ACK (the server's)
    /// `rtt_ms` apart.
    fn handshake(client: Option<u8>, server: Option<u8>, rtt_ms: i64) -> Connection {
        let (c, s) = ("10.0.0.1:40000", "10.0.0.2:80");
        let mut k = conn(true);
        let mut syn = TcpPacket::new(c, s).syn().seq(0).window(65535);
        if let Some(w) = client {
            syn = syn.wscale(w);
        }
        let mut syn_ack = TcpPacket::new(s, c).syn().ack(1).seq(0).window(65160);
        if let Some(w) = server {
            syn_ack = syn_ack.wscale(w);
        }
        track(&mut k, syn, Dir::C2S, 0);
        track(&mut k, syn_ack, Dir::S2C, rtt_ms);
        k
    }

    /// A coarse timestamp clock (Mac OS's 100 ms tick, from tcpreplay's test.pcap): the
    /// request carries the SYN's TSval, and the server's ACK of it echoes that value. The
    /// SYN/ACK echoed it first, so the ACK's echo is no round trip from the SYN: the 28 ms
    /// path must not read 56 ms.
    #[test]
    fn an_echo_of_the_syns_tsval_after_the_syn_ack_is_not_timed_from_the_syn() {
        let (c, s) = ("10.0.0.1:40000", "10.0.0.2:80");
        let mut k = conn(true);
        track(
            &mut k,
            TcpPacket::new(c, s).syn().seq(100).ts(7, 0).window(65535),
            Dir::C2S,
            0,
        );
        track(
            &mut k,
            TcpPacket::new(s, c).syn().ack(101).seq(500).ts(900, 7).window(65535),
            Dir::S2C,
            28,
        );
        track(
            &mut k,
            TcpPacket::new(c, s).seq(101).ack(501).ts(7, 900).window(65535),
            Dir::C2S,
            28,
        );
        track(
            &mut k,
            TcpPacket::new(c, s)
                .seq(101)
                .ack(501)
                .ts(7, 900)
                .window(65535)
                .payload_len(506),
            Dir::C2S,
            28,
        );
        track(
            &mut k,
            TcpPacket::new(s, c).seq(501).ack(607).ts(903, 7).window(65535),
            Dir::S2C,
            56,
        );
        let max = k.rtt.end_to_end.max().unwrap();
        assert!(max <= Span::from_millis(29), "{max:?}");
        assert_eq!(k.rtt.through(End::Server).by_source[RttSource::TsEcho as usize], 0);
    }

    /// The client offered shift 7 and the SYN/ACK came without the option: scaling is off
    /// as the capture point sees it. Flights rebuilt a little over the unscaled window (one
    /// round's ACKs of pairing error) leave it off; flights beyond twice it show the server
    /// scales the client's windows, by the shift the client offered (a one-sided strip).
    #[test]
    fn only_flights_beyond_twice_the_window_switch_to_the_offered_shift() {
        let mut k = handshake(Some(7), None, 95);
        let before = k.effective_scale(Dir::C2S);
        assert_eq!(before.shift(), WindowScale::NotUsed.shift(), "{before:?}");
        // Evidence on the client's windows is gathered from the server's data.
        let ev = Dir::C2S.reverse().index();
        for i in 0..400u64 {
            k.scale_evidence[ev].observe(65_535 + 1_448 + 100 + (i % 3) * 200, 65_535, None, 1448);
        }
        assert!(k.scale_evidence[ev].contradicts(0) && !k.scale_evidence[ev].contradicts(1));
        assert_eq!(k.effective_scale(Dir::C2S), before);
        for _ in 0..400u64 {
            k.scale_evidence[ev].observe(900_000, 65_535, None, 1448);
        }
        assert_eq!(k.effective_scale(Dir::C2S), WindowScale::Inferred(7));
    }

    /// Both SYNs carried shift 7. A server whose flights stop at one edge of the client's
    /// raw window read unscaled is what a strip beyond the capture point makes: shift 0 at
    /// once. The same single edge at shift 5 is as much a send buffer of 32 KiB: the
    /// handshake's 7 stands until the flights follow a second edge.
    #[test]
    fn a_single_edge_overrides_the_handshake_only_at_shift_zero() {
        let ev = Dir::C2S.reverse().index();
        let mut unscaled = handshake(Some(7), Some(7), 50);
        for i in 0..200u64 {
            unscaled.scale_evidence[ev].observe(40_000 - (i % 3) * 460, 40_000, None, 1448);
        }
        assert_eq!(unscaled.effective_scale(Dir::C2S), WindowScale::Inferred(0));
        let mut five = handshake(Some(7), Some(7), 50);
        for i in 0..200u64 {
            five.scale_evidence[ev].observe(32_768 - (i % 3) * 460, 1024, None, 1448);
        }
        assert_eq!(five.scale_evidence[ev].cached().map(|r| r.shift), Some(5));
        assert_eq!(five.effective_scale(Dir::C2S).shift(), Some(7));
        for i in 0..200u64 {
            five.scale_evidence[ev].observe(49_152 - (i % 3) * 460, 1536, None, 1448);
        }
        assert_eq!(five.effective_scale(Dir::C2S), WindowScale::Inferred(5));
    }

    /// A receiver whose unread data fills half its buffer holds its ACKs for the application's
    /// read (Linux `__tcp_ack_snd_check`, `tcp_cleanup_rbuf`): an ACK of three segments then
    /// times the reader, not the path, and is no prompt sample of the loop; the same ACK
    /// from a receiver whose window stayed open is.
    #[test]
    fn an_ack_from_a_receiver_whose_reader_is_behind_is_not_prompt() {
        let (c, s) = ("10.0.0.1:40000", "10.0.0.2:80");
        let prompt_after = |window: u16| {
            let mut k = conn(true);
            track(
                &mut k,
                TcpPacket::new(c, s).syn().seq(0).mss(1000).window(60000),
                Dir::C2S,
                0,
            );
            track(
                &mut k,
                TcpPacket::new(s, c).syn().ack(1).seq(0).mss(1000).window(60000),
                Dir::S2C,
                20,
            );
            track(&mut k, TcpPacket::new(c, s).seq(1).ack(1).window(60000), Dir::C2S, 20);
            for i in 0..3u32 {
                track(
                    &mut k,
                    TcpPacket::new(s, c)
                        .seq(1 + 1000 * i)
                        .ack(1)
                        .window(60000)
                        .payload_len(1000),
                    Dir::S2C,
                    21,
                );
            }
            track(
                &mut k,
                TcpPacket::new(c, s).seq(1).ack(3001).window(window),
                Dir::C2S,
                61,
            );
            let l = k.rtt.through(End::Client);
            assert_eq!(
                l.by_source[RttSource::DataAck as usize],
                1,
                "the ACK is timed either way"
            );
            l.prompt_latest()
        };
        assert_eq!(prompt_after(60000), Some(Span::from_millis(40)));
        assert_eq!(prompt_after(30000), None);
    }

    /// Beside the sender, the loop through it is its least: a reply that waited on the
    /// application (a VNC server encoding the frame a request asked for) is no part of the
    /// path, and a reconstruction taking it for the loop would pair the sender's data with
    /// ACKs it had long since had (04-vnc-openwall-3.8: 62.7 KiB "at the sender" beside
    /// 23.0 KiB seen, 17 µs from it). Here the capture is 1 ms from the server, 20 ms from
    /// the client.
    #[test]
    fn the_sender_loop_leaves_out_replies_that_waited_on_the_application() {
        let (c, s) = ("10.0.0.1:40000", "10.0.0.2:80");
        let mut k = conn(true);
        track(
            &mut k,
            TcpPacket::new(c, s).syn().seq(0).mss(1000).window(60000),
            Dir::C2S,
            0,
        );
        track(
            &mut k,
            TcpPacket::new(s, c).syn().ack(1).seq(0).mss(1000).window(60000),
            Dir::S2C,
            1,
        );
        track(&mut k, TcpPacket::new(c, s).seq(1).ack(1).window(60000), Dir::C2S, 21);
        // A request answered at once, then one the server's application took 30 ms over.
        let mut at = 100;
        for (i, think) in [(0u32, 1i64), (1, 30)] {
            track(
                &mut k,
                TcpPacket::new(c, s)
                    .seq(1 + 50 * i)
                    .ack(1 + 1000 * i)
                    .window(60000)
                    .payload_len(50),
                Dir::C2S,
                at,
            );
            track(
                &mut k,
                TcpPacket::new(s, c)
                    .seq(1 + 1000 * i)
                    .ack(51 + 50 * i)
                    .window(60000)
                    .payload_len(1000),
                Dir::S2C,
                at + think,
            );
            at += 500;
        }
        let l = k.rtt.through(End::Server);
        assert_eq!(
            l.recent_min(),
            Some(Span::from_millis(30)),
            "the wait is the only recent sample"
        );
        assert_eq!(k.sender_loop(Dir::S2C), Span::from_millis(1));
    }

    /// RFC 6675 SetPipe: data SACKed above a hole is outstanding (the window holds it) but
    /// no longer in the network; and data sent after the receiver's last report of
    /// progress (here into a reset) reached no one.
    #[test]
    fn in_the_network_excludes_sacked_data_and_what_followed_the_last_report() {
        let (c, s) = ("10.0.0.1:40000", "10.0.0.2:80");
        let mut k = conn(true);
        track(
            &mut k,
            TcpPacket::new(c, s).syn().seq(0).sack_perm().mss(1000).window(65535),
            Dir::C2S,
            0,
        );
        track(
            &mut k,
            TcpPacket::new(s, c)
                .syn()
                .ack(1)
                .seq(0)
                .sack_perm()
                .mss(1000)
                .window(65535),
            Dir::S2C,
            10,
        );
        track(&mut k, TcpPacket::new(c, s).seq(1).ack(1).window(65535), Dir::C2S, 10);
        let data = |k: &mut Connection, i: u32, ms: i64| {
            let p = TcpPacket::new(c, s)
                .seq(1 + i * 1000)
                .ack(1)
                .window(65535)
                .payload_len(1000);
            track(k, p, Dir::C2S, ms);
        };
        for i in 0..10 {
            data(&mut k, i, 11);
        }
        // The first segment is lost; the receiver SACKs the other nine.
        let sacks = TcpPacket::new(s, c).seq(1).ack(1).window(65535).sack(&[(1001, 10_001)]);
        track(&mut k, sacks, Dir::S2C, 21);
        // Two more go out: 12 000 B outstanding, of which 9 000 SACKed and 1 000 lost.
        data(&mut k, 10, 22);
        data(&mut k, 11, 22);
        let d = k.dir(Dir::C2S);
        assert_eq!(d.flight(), Some(12_000));
        assert_eq!(d.not_in_network(1000), 10_000);
        // The 10 000 B before the SACK counted once it came; the two since wait for a report.
        assert_eq!((d.max_in_network, d.pending_in_network), (10_000, 2_000));
        // The receiver resets; what is sent after it is not counted.
        track(&mut k, TcpPacket::new(s, c).rst().seq(1).ack(1).window(0), Dir::S2C, 30);
        for i in 12..40 {
            data(&mut k, i, 31);
        }
        assert_eq!(k.dir(Dir::C2S).max_in_network, 10_000);
    }

    #[test]
    fn ecn_is_negotiated_in_the_handshake_and_counted_per_direction() {
        use crate::decode::{Ecn, TcpFlags};
        use crate::summary::{EcnMode, EcnOffer};
        let (c, s) = ("10.0.0.1:40000", "10.0.0.2:80");
        let (ece, cwr) = (TcpFlags::ECE, TcpFlags::CWR);
        let mut k = conn(true);
        // RFC 3168 §6.1.1: an ECN-setup SYN (ECE, CWR) and SYN/ACK (ECE alone).
        track(
            &mut k,
            TcpPacket::new(c, s).flags(TcpFlags::SYN | ece | cwr).seq(100),
            Dir::C2S,
            0,
        );
        assert_eq!(
            (k.handshake.client_ecn(), k.handshake.ecn()),
            (Some(EcnOffer::Rfc3168), EcnMode::Unknown)
        );
        track(
            &mut k,
            TcpPacket::new(s, c)
                .flags(TcpFlags::SYN | TcpFlags::ACK | ece)
                .ack(101)
                .seq(500),
            Dir::S2C,
            10,
        );
        assert_eq!(
            (k.handshake.server_ecn(), k.handshake.ecn()),
            (Some(EcnOffer::Rfc3168), EcnMode::Rfc3168)
        );
        track(&mut k, TcpPacket::new(c, s).seq(101).ack(501), Dir::C2S, 11);
        // Server data sent ECT(0); a queue marks two segments CE (frames 5 and 6); the
        // client echoes ECE until the server's CWR, which rides on its next new data.
        let data = |seq: u32| TcpPacket::new(s, c).seq(seq).ack(101).payload_len(1000);
        let ack = |a: u32| TcpPacket::new(c, s).seq(101).ack(a);
        let at = |k: &mut Connection, p: TcpPacket, dir: Dir, frame: u64, ms: i64| {
            k.track(&seg(p), dir, frame, Timestamp(0) + Span::from_millis(ms));
        };
        at(&mut k, data(501).ecn(Ecn::Ect0), Dir::S2C, 4, 20);
        at(&mut k, data(1501).ecn(Ecn::Ce), Dir::S2C, 5, 21);
        at(&mut k, data(2501).ecn(Ecn::Ce), Dir::S2C, 6, 22);
        at(&mut k, ack(1501), Dir::C2S, 7, 30);
        at(&mut k, ack(2501).flags(TcpFlags::ACK | ece), Dir::C2S, 8, 31);
        at(&mut k, ack(3501).flags(TcpFlags::ACK | ece), Dir::C2S, 9, 32);
        at(
            &mut k,
            data(3501).ecn(Ecn::Ect0).flags(TcpFlags::ACK | cwr),
            Dir::S2C,
            10,
            40,
        );
        at(&mut k, ack(4501), Dir::C2S, 11, 50);
        let e = &k.dir(Dir::S2C).ecn;
        assert_eq!((e.ect0, e.ect1, e.ce.count, e.ece.count, e.cwr.count), (2, 0, 2, 2, 1));
        assert_eq!(e.ce.first.map(|m| m.frame), Some(5));
        assert_eq!(e.ce.last.map(|m| m.ts), Some(Timestamp(0) + Span::from_millis(22)));
        assert_eq!(e.ece.first.map(|m| m.frame), Some(8));
        assert_eq!(e.cwr.first.map(|m| m.frame), Some(10));
        // The handshake's flags are the negotiation, not signals; the client sent nothing
        // ECN-capable.
        assert!(!k.dir(Dir::C2S).ecn.any());
        // An ECN-setup SYN answered without ECE: off.
        let mut off = conn(true);
        track(
            &mut off,
            TcpPacket::new(c, s).flags(TcpFlags::SYN | ece | cwr).seq(100),
            Dir::C2S,
            0,
        );
        track(&mut off, TcpPacket::new(s, c).syn().ack(101).seq(500), Dir::S2C, 10);
        assert_eq!(
            (off.handshake.server_ecn(), off.handshake.ecn()),
            (Some(EcnOffer::No), EcnMode::Off)
        );
        // AccECN (RFC 9768): AE, CWR and ECE on the SYN; (AE, CWR, ECE) = 010 answers it.
        let mut acc = conn(true);
        track(
            &mut acc,
            TcpPacket::new(c, s).flags(TcpFlags::SYN | ece | cwr).ae().seq(100),
            Dir::C2S,
            0,
        );
        track(
            &mut acc,
            TcpPacket::new(s, c)
                .flags(TcpFlags::SYN | TcpFlags::ACK | cwr)
                .ack(101)
                .seq(500),
            Dir::S2C,
            10,
        );
        assert_eq!(
            (acc.handshake.client_ecn(), acc.handshake.ecn()),
            (Some(EcnOffer::AccEcn), EcnMode::AccEcn)
        );
    }

    #[test]
    fn the_kept_mss_follows_the_handshake_and_the_largest_segment() {
        let (c, s) = ("10.0.0.1:40000", "10.0.0.2:80");
        let mut k = conn(true);
        assert_eq!(k.mss(Dir::S2C), DEFAULT_MSS);
        track(&mut k, TcpPacket::new(c, s).syn().seq(100).mss(1400), Dir::C2S, 0);
        assert_eq!(k.mss(Dir::S2C), 1400);
        track(
            &mut k,
            TcpPacket::new(s, c).syn().ack(101).seq(500).mss(9000),
            Dir::S2C,
            10,
        );
        assert_eq!(k.mss(Dir::C2S), 9000);
        track(&mut k, TcpPacket::new(c, s).seq(101).ack(501), Dir::C2S, 11);
        // Segments with timestamps carry 12 bytes less than the MSS: the largest seen wins.
        track(
            &mut k,
            TcpPacket::new(s, c).seq(501).ack(101).payload_len(1388),
            Dir::S2C,
            20,
        );
        assert_eq!(k.mss(Dir::S2C), 1388);
        track(
            &mut k,
            TcpPacket::new(s, c).seq(1889).ack(101).payload_len(500),
            Dir::S2C,
            21,
        );
        assert_eq!(k.mss(Dir::S2C), 1388);

        // No handshake: the largest segment, TSO super-segments capped at 1460.
        let mut m = conn(false);
        track(
            &mut m,
            TcpPacket::new(s, c).seq(1).ack(1).payload_len(1000),
            Dir::S2C,
            0,
        );
        assert_eq!(m.mss(Dir::S2C), 1000);
        track(
            &mut m,
            TcpPacket::new(s, c).seq(1001).ack(1).payload_len(64_000),
            Dir::S2C,
            1,
        );
        assert_eq!(m.mss(Dir::S2C), DEFAULT_MSS);
    }

    /// A capture begun mid-transfer beside the sender (census seed 6767): the first segment
    /// it sees, then 22 ms later the ACK of it with a SACK block of data the capture never
    /// saw sent. That data went before the capture, so the segment's first copy did too,
    /// and the ACK may answer it: no sample (the path was 250 ms). The next segment, sent
    /// after the report above it, is timed.
    #[test]
    fn data_below_a_report_of_data_never_seen_sent_gives_no_sample() {
        let (c, s) = ("10.0.0.1:40000", "10.0.0.2:80");
        let mut k = conn(false);
        track(
            &mut k,
            TcpPacket::new(s, c).seq(1).ack(1).payload_len(1400),
            Dir::S2C,
            0,
        );
        let ack = TcpPacket::new(c, s)
            .seq(1)
            .ack(1401)
            .window(65535)
            .sack(&[(2801, 15_873)]);
        track(&mut k, ack, Dir::C2S, 22);
        assert_eq!(k.rtt.through(End::Client).samples, 0);
        track(
            &mut k,
            TcpPacket::new(s, c).seq(15_873).ack(1).payload_len(1400),
            Dir::S2C,
            23,
        );
        track(
            &mut k,
            TcpPacket::new(c, s).seq(1).ack(17_273).window(65535),
            Dir::C2S,
            273,
        );
        assert_eq!(k.rtt.through(End::Client).samples, 1);
        assert_eq!(k.rtt.through(End::Client).min, Some(Span::from_millis(250)));
    }

    /// A capture begun mid-transfer beside the sender (census seed 4242): the first segment
    /// it sees is a re-sending, and the ACK of the original, already on its way, comes 97 µs
    /// later. Nothing marks it then; a round trip later the receiver's D-SACK reports the
    /// copy received twice (RFC 2883 §4.1.1), and the sample is taken back: the minimum is
    /// the next segment's 250 ms, and the windowed and recent values follow.
    #[test]
    fn a_sample_of_data_the_receiver_reports_received_twice_is_taken_back() {
        let (c, s) = ("10.0.0.1:40000", "10.0.0.2:80");
        let mut k = conn(false);
        let at = |k: &mut Connection, p: TcpPacket, dir: Dir, us: i64| {
            k.track(
                &seg(p),
                dir,
                0,
                Timestamp(1_700_000_000_000_000_000) + Span::from_micros(us) + Span(7),
            );
        };
        let data = |seq: u32| TcpPacket::new(s, c).seq(seq).ack(1).payload_len(1400);
        let ack = |n: u32| TcpPacket::new(c, s).seq(1).ack(n).window(65535);
        at(&mut k, data(1), Dir::S2C, 0);
        at(&mut k, ack(1401), Dir::C2S, 97);
        at(&mut k, data(1401), Dir::S2C, 120);
        at(&mut k, ack(2801), Dir::C2S, 250_120);
        let l = k.rtt.through(End::Client);
        assert_eq!((l.samples, l.min), (2, Some(Span::from_micros(97))));
        // The copy of [1, 1401) arrives after its original: a D-SACK below the ACK.
        at(&mut k, ack(2801).sack(&[(1, 1401)]), Dir::C2S, 250_200);
        let l = k.rtt.through(End::Client);
        assert_eq!(l.retracted(), 1);
        assert_eq!(l.min, Some(Span::from_millis(250)));
        assert_eq!(l.windowed_min.get(), Some(Span::from_millis(250)));
        assert_eq!(l.recent_min(), Some(Span::from_millis(250)));
        // A second D-SACK of the same data takes nothing more.
        at(&mut k, ack(2801).sack(&[(1, 1401)]), Dir::C2S, 250_300);
        assert_eq!(k.rtt.through(End::Client).retracted(), 1);
        // With every sample taken back the loop is unmeasured, not measured as nothing.
        at(&mut k, ack(2801).sack(&[(1401, 2801)]), Dir::C2S, 250_400);
        let l = k.rtt.through(End::Client);
        assert_eq!((l.retracted(), l.min, l.measured()), (2, None, false));
        assert_eq!(
            (l.windowed_min.get(), l.segment_min.get(), l.recent_min(), l.base()),
            (None, None, None, None)
        );
    }

    /// A D-SACK goes out on the duplicate's arrival (RFC 2883 §4), so the ACK carrying it
    /// answers the copy it names: a keep-alive's byte, the first segment a capture begun
    /// mid-connection saw, D-SACKed by the very ACK that times it (tshark's "D-SACK
    /// Sequence"; the realjimmy CCTV5 capture, 35.5 ms) keeps its sample.
    #[test]
    fn a_sample_taken_by_the_d_sack_itself_stands() {
        let (c, s) = ("10.0.0.1:40000", "10.0.0.2:80");
        let mut k = conn(false);
        track(&mut k, TcpPacket::new(c, s).seq(1).ack(1).payload_len(1), Dir::C2S, 0);
        let ack = TcpPacket::new(s, c).seq(1).ack(2).window(65535).sack(&[(1, 2)]);
        track(&mut k, ack, Dir::S2C, 35);
        let l = k.rtt.through(End::Server);
        assert_eq!((l.retracted(), l.min), (0, Some(Span::from_millis(35))));
    }

    /// A spurious retransmission the capture saw: the sample its original's ACK gave came
    /// before the copy was sent, so the D-SACK of the copy takes nothing back (zeek's
    /// pppoe-over-qinq: 1440 bytes timed at 94 ms, re-sent 216 ms later, D-SACKed).
    #[test]
    fn a_d_sack_of_a_copy_the_capture_saw_sent_takes_nothing_back() {
        let (c, s) = ("10.0.0.1:40000", "10.0.0.2:443");
        let mut k = conn(false);
        let data = || TcpPacket::new(s, c).seq(1).ack(1).payload_len(1440);
        track(&mut k, data(), Dir::S2C, 0);
        track(
            &mut k,
            TcpPacket::new(c, s).seq(1).ack(1441).window(65535),
            Dir::C2S,
            94,
        );
        track(&mut k, data(), Dir::S2C, 310);
        let dsack = TcpPacket::new(c, s).seq(1).ack(1441).window(65535).sack(&[(1, 1441)]);
        track(&mut k, dsack, Dir::C2S, 316);
        let l = k.rtt.through(End::Client);
        assert_eq!((l.retracted(), l.min), (0, Some(Span::from_millis(94))));
    }

    /// The echo lookup's least loop through the sender: the samples' minimum, lowered by an
    /// echo that came back sooner (an end echoes only what it received, RFC 7323 §4.3, so
    /// the loop was no longer), less a tick of the clock (each sample is two stamps cut to
    /// it). Without an echo the samples' minimum stands.
    #[test]
    fn an_echo_sooner_than_every_sample_lowers_the_least_loop_the_echo_lookup_takes() {
        let mut k = conn(false);
        let at = |us: i64| Timestamp(0) + Span::from_micros(us);
        // A microsecond clock: stamps off every coarser grid.
        for i in 0..100 {
            k.rtt.quantum.on(at(1_000_003 + i * 7));
        }
        let q = k.rtt.quantum.get();
        assert_eq!(q, Span::from_micros(1));
        let sample = Span::from_micros(250_518);
        k.rtt.add_sample(
            at(2_000_000),
            End::Server,
            RttSource::TsEcho,
            sample,
            true,
            Carried::len(1460),
        );
        assert_eq!(k.min_sender_loop(Dir::S2C), sample);
        assert_eq!(k.min_sender_loop_for_echo(Dir::S2C), sample - q);
        // An echo, answered or not, 250.194 ms after its TSval's first sighting.
        k.rtt.note_echo_bound(End::Server, Span::from_micros(250_194));
        assert_eq!(k.min_sender_loop_for_echo(Dir::S2C), Span::from_micros(250_193));
        assert_eq!(k.min_sender_loop(Dir::S2C), sample, "the samples' minimum is unchanged");
        // An echo later than the samples moves nothing.
        k.rtt.note_echo_bound(End::Server, Span::from_micros(300_000));
        assert_eq!(k.min_sender_loop_for_echo(Dir::S2C), Span::from_micros(250_193));
        // The other loop is apart.
        assert_eq!(k.min_sender_loop_for_echo(Dir::C2S), Span::ZERO);
    }

    /// Ten segments of 1000 B from the server, mid-transfer and without timestamps, then the
    /// client's ACKs 30 ms later standing at the third; `lost_here` when the capture saw the
    /// third segment go (lost after it: beside the sender), else it never passed (beside the
    /// receiver). Then the third segment again, 35 µs after the ACK that reached it.
    fn repaired_mid_transfer(lost_here: bool) -> Connection {
        let (c, s) = ("10.0.0.1:40000", "10.0.0.2:80");
        let mut k = conn(false);
        let at = |us: i64| Timestamp(0) + Span::from_micros(us);
        for i in 0..10u32 {
            if i == 2 && !lost_here {
                continue;
            }
            let data = TcpPacket::new(s, c)
                .seq(1000 + i * 1000)
                .ack(1)
                .payload_len(1000)
                .window(500);
            k.track(&seg(data), Dir::S2C, 0, at(i as i64 * 10));
        }
        let ack = |n: u32| TcpPacket::new(c, s).seq(1).ack(n).window(400);
        k.track(&seg(ack(2000)), Dir::C2S, 0, at(30_000));
        k.track(&seg(ack(3000)), Dir::C2S, 0, at(30_010));
        for j in 0..3 {
            k.track(&seg(ack(3000)), Dir::C2S, 0, at(30_020 + j * 10));
        }
        let repair = TcpPacket::new(s, c).seq(3000).ack(1).payload_len(1000).window(500);
        k.track(&seg(repair), Dir::S2C, 0, at(30_045));
        k
    }

    /// Beside the sender the repair follows the ACK that reached the hole by the sender's
    /// own turnaround: the loop through the server is timed without a handshake, timestamps
    /// or a window scale, and with the data-to-ACK loop through the client the round trip
    /// is known (repair.rs). Beside the receiver the first copy of the hole to pass may be
    /// the original overtaken: nothing is timed from it.
    #[test]
    fn a_repair_times_the_loop_through_its_sender_where_the_capture_saw_the_original() {
        let k = repaired_mid_transfer(true);
        let server = k.rtt.through(End::Server).least().expect("the loop through the server");
        assert_eq!(server, Span::from_micros(35));
        let round = k.rtt.min_end_to_end().expect("both loops").secs_f64();
        assert!((round - 0.030_035).abs() < 1e-6, "{round}");

        let k = repaired_mid_transfer(false);
        assert!(!k.rtt.through(End::Server).measured());
        assert!(k.rtt.min_end_to_end().is_none());
    }
}
