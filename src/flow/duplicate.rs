//! Capture duplicates: a record that is the same IP datagram as one the capture holds just
//! before it. A mirror port copying both the ingress and the egress of a switch, a capture
//! on Linux's `any` interface (a bridge and its member port, a VLAN device and its parent)
//! or two taps merged record one packet twice, microseconds apart, byte for byte from the
//! IP header on. Counted as the connection's own, a copy is a retransmission of every
//! segment, a duplicate ACK after every ACK and a retransmitted handshake (Karn's rule then
//! leaves no RTT sample); the front sets copies aside before anything counts them, as
//! `editcap -d` drops a frame identical to one of the previous four — but compared from
//! the IP header on ([`Print`]) and per connection and direction, so that other traffic
//! between the two never hides a copy.
//!
//! Identical headers are not enough: TCP itself sends byte-identical segments (a
//! retransmission with the same IP ID, a reset for each segment that reaches a closed
//! port, duplicate ACKs). A repeat is a copy only where no TCP could have sent it again:
//!
//! - **A segment that takes sequence space** (payload, SYN, FIN) is sent again only as a
//!   retransmission, and a retransmission needs feedback or a timer. Feedback — duplicate
//!   ACKs (RFC 5681 §3.2), SACK blocks (RFC 6675, RACK: RFC 8985 §6), an answered SYN
//!   retransmission — is a segment of the other end, which an on-path capture holds
//!   between the two (so the repeat is a copy only if none came: and only if the capture
//!   holds the other end at all, or nothing but a timer resends the segment, as for a
//!   SYN, or its IPv4 ID names it). A timer: the retransmission timeout is at least 1 s
//!   (RFC 6298 §2.4), 200 ms in Linux (`TCP_RTO_MIN`); the tail-loss probe's PTO is
//!   2·SRTT (RFC 8985 §7.2), floored at `TCP_TIMEOUT_MIN` (2 jiffies, 2 ms since
//!   `TCP_TIMEOUT_MIN_US`) by Linux and at 10 ms by FreeBSD's RACK, and QUIC's recovery
//!   takes 1 ms as the least timer any host arms (RFC 9002 §6.1.2, kGranularity): so
//!   nothing resends within [`WINDOW`]. A timer that fires for older data resends that
//!   data first (go-back-N after an RTO: such a resend 3.8 ms after its original is in
//!   ../shared/external's PPPoE capture), and a probe resends the last segment sent: so
//!   between original and copy this end may not have sent anything below the original's
//!   sequence number (new data may lie between, or the same datagram one router later,
//!   TTL one less, as a capture on `any` in a router records it). Some stacks keep the IP
//!   ID on a retransmission (an Amazon server after 1 s in ../shared/external's nDPI
//!   alexa capture): the ID proves nothing here.
//! - **A segment that takes none** (a pure ACK, a reset, a window update) is never
//!   retransmitted (no ACK acknowledges it: RFC 9293 §3.4 acknowledges what occupies
//!   sequence space) but is sent once for each segment that arrives (a reset per segment
//!   to a closed port, §3.10.7.1; an immediate ACK per out-of-order segment, RFC 5681
//!   §4.2), so two identical ones may come microseconds apart answering two arrivals that
//!   came before both. Two datagrams are two IDs, though, from a source
//!   that numbers its datagrams: a repeat whose IPv4 ID names it ([`Print::id_names`])
//!   is a copy. Without one (ID 0, IPv6), a repeat is a copy only if nothing at all came
//!   between (no arrival to answer since the original) and the capture is known to copy
//!   this end's packets (a copy of its own set aside already): a mirror copies everything
//!   it carries, while Linux's resets (ID 0) answering two arrivals come back to back.
//!
//! Memory is constant: the records of the connections heard of lately, in a cache keyed
//! by connection id (a copy comes within [`WINDOW`] of its original, so only recent
//! connections matter), never per live connection: a flood's attempts cost nothing more.
//! A connection pushed out of the cache (four others in its set heard of since, within the
//! window) has its next copy kept, as without this module.
//!
//! **Routed copies.** A capture on a router's `any` interface records each forwarded
//! datagram on the way in and again on the way out, TTL one less, after the router's queue
//! held it: behind dozens of the connection's own datagrams and past [`WINDOW`] (up to
//! 2 ms and 217 records of one direction apart in ../shared/external's nDPI fix2 capture),
//! beyond the four-record ring. The TTL settles such a pair at any distance: a host resends
//! with its own initial TTL, which reaches one capture point with the same count, so an
//! identical datagram with fewer hops left is the same one after one more router. Once the
//! ring has caught one routed copy (the capture is a router's), every record's print is
//! also kept for [`ROUTED_HORIZON`] in a map by connection, direction and print, and a
//! record identical to one of them but for a lower TTL is a copy. Captures without routed
//! copies never pay for the map.

use crate::decode::{Print, Segment};
use crate::seq::SeqNum;
use crate::time::{Span, Timestamp};

/// How far apart (capture time, either order) a copy and its original may be: below the
/// shortest timer that resends a segment (see the module's comment); copies by mirror
/// ports and `any` captures are microseconds apart.
pub const WINDOW: Span = Span::from_millis(1);

/// How long a record's print is kept once the capture showed routed copies: the map's
/// memory bound, not a rule (the TTL decides at any distance): Linux's least
/// retransmission timer (`TCP_RTO_MIN`, 200 ms), far above the few milliseconds a
/// router's queue holds a packet it forwards.
pub const ROUTED_HORIZON: Span = Span::from_millis(200);

/// Records of one connection and direction a record is compared with: `editcap -d`'s
/// four previous frames, per connection and direction.
const RECENT: usize = 4;
/// The cache: connections in sets of `WAYS`, by id (ids are consecutive, so connections
/// heard of together spread over the sets). 1,024 connections, ~220 KiB.
const WAYS: usize = 4;
const SETS: usize = 256;

/// One direction of a cached connection: its last `RECENT` records (not copies), in
/// rings by field so that the per-record search reads one line of hashes. An empty slot's
/// hash is 0, which no print has ([`Print::hash`] is odd).
#[derive(Clone, Copy, Debug, Default)]
struct Side {
    hash: [u64; RECENT],
    ts: [i64; RECENT],
    seq: [u32; RECENT],
    /// The TTL (hop limit) each came with.
    ttl: [u8; RECENT],
    /// The other direction's record count when each came.
    other: [u32; RECENT],
    /// Records of this direction (wrapping): the newest is at `(n - 1) % RECENT`.
    n: u32,
    /// It sent something since the connection was cached.
    spoke: bool,
    /// A copy of this direction's was set aside: the capture copies its packets.
    copied: bool,
}

impl Side {
    /// The ring slot of the record `age` records back (0: the newest).
    #[inline(always)]
    fn at(&self, age: usize) -> usize {
        (self.n as usize).wrapping_sub(1 + age) % RECENT
    }

    #[inline(always)]
    fn push(&mut self, hash: u64, ttl: u8, ts: Timestamp, seq: SeqNum, other: u32) {
        let i = self.n as usize % RECENT;
        self.hash[i] = hash;
        self.ttl[i] = ttl;
        self.ts[i] = ts.0;
        self.seq[i] = seq.0;
        self.other[i] = other;
        self.n = self.n.wrapping_add(1);
        self.spoke = true;
    }
}

/// Whether a record of direction `mine` is a copy (see the module's comment).
#[inline(always)]
fn copy_of(mine: &Side, other: &Side, seg: &Segment, print: &Print, ts: Timestamp) -> bool {
    // Every slot at once (no loop: most records match none).
    let h = &mine.hash;
    let x = print.hash;
    if (h[0] == x) | (h[1] == x) | (h[2] == x) | (h[3] == x) {
        copy_of_match(mine, other, seg, print, ts)
    } else {
        false
    }
}

/// The rules, once the record matched one of the last four: rare, out of line.
#[inline(never)]
fn copy_of_match(mine: &Side, other: &Side, seg: &Segment, print: &Print, ts: Timestamp) -> bool {
    // The newest identical record is the original.
    let Some(age) = (0..RECENT).find(|&a| mine.hash[mine.at(a)] == print.hash) else {
        return false;
    };
    let o = mine.at(age);
    if ts.0.abs_diff(mine.ts[o]) > WINDOW.nanos() as u64 {
        return false;
    }
    // Fewer hops left than the original had: the same datagram after one more router. A
    // host resends with its own initial TTL, which reaches one capture point with the same
    // count, so a lower one is no retransmission (and more is none of either).
    match print.ttl.cmp(&mine.ttl[o]) {
        std::cmp::Ordering::Less => return true,
        std::cmp::Ordering::Greater => return false,
        std::cmp::Ordering::Equal => {}
    }
    // Nothing from the other end since the original.
    let unanswered = other.n == mine.other[o];
    let f = seg.flags;
    if seg.payload_len > 0 || f.syn() || f.fin() {
        let none_older = (0..age).all(|a| !SeqNum(mine.seq[mine.at(a)]).is_before(SeqNum(mine.seq[o])));
        let feedback_visible = other.spoke || print.id_names || (f.syn() && !f.ack());
        unanswered && none_older && feedback_visible
    } else {
        print.id_names || (age == 0 && unanswered && mine.copied)
    }
}

/// The cache of recent connections' records.
pub struct Duplicates {
    /// Connection id per way (`EMPTY` for none) and when it was last heard of.
    ids: Box<[(u64, i64)]>,
    sides: Box<[[Side; 2]]>,
    /// The last connection looked up and its way: consecutive records mostly belong to
    /// one connection (`flow::Slots` keeps the same shortcut).
    last: (u64, usize),
    /// Every record's print, once the capture showed a routed copy (module comment).
    routed: Option<Routed>,
}

/// Prints of the records of the last [`ROUTED_HORIZON`], by connection, direction and print:
/// the TTL each came with and when.
#[derive(Default)]
struct Routed {
    seen: crate::flow::FxHashMap<u64, (i64, u8)>,
    /// Keys in the order they came, to forget them after the horizon.
    order: std::collections::VecDeque<(i64, u64)>,
}

impl Routed {
    fn key(id: u64, from_lo: bool, print: &Print) -> u64 {
        print.hash ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ from_lo as u64
    }

    /// Whether the record is an earlier record again with fewer hops left.
    fn is_copy(&self, key: u64, print: &Print, ts: Timestamp) -> bool {
        self.seen
            .get(&key)
            .is_some_and(|&(t, ttl)| print.ttl < ttl && ts.0.saturating_sub(t) <= ROUTED_HORIZON.nanos())
    }

    fn keep(&mut self, key: u64, print: &Print, ts: Timestamp) {
        while let Some(&(t, k)) = self.order.front() {
            if ts.0.saturating_sub(t) <= ROUTED_HORIZON.nanos() {
                break;
            }
            self.order.pop_front();
            if self.seen.get(&k).is_some_and(|&(kt, _)| kt == t) {
                self.seen.remove(&k);
            }
        }
        self.seen.insert(key, (ts.0, print.ttl));
        self.order.push_back((ts.0, key));
    }
}

const EMPTY: u64 = u64::MAX;

impl Default for Duplicates {
    fn default() -> Self {
        Duplicates {
            ids: vec![(EMPTY, i64::MIN); SETS * WAYS].into_boxed_slice(),
            sides: vec![[Side::default(); 2]; SETS * WAYS].into_boxed_slice(),
            last: (EMPTY, 0),
            routed: None,
        }
    }
}

impl Duplicates {
    /// Whether the record `seg` (`print`) of connection `id`, sent by the key's lower end
    /// or not (`from_lo`), is a capture duplicate. A record that is not is kept as one of
    /// the connection's recent ones.
    #[inline]
    pub fn is_copy(&mut self, id: u64, from_lo: bool, seg: &Segment, print: &Print, ts: Timestamp) -> bool {
        let way = self.way(id, ts);
        let Some([lo, hi]) = self.sides.get_mut(way) else {
            return false;
        };
        let (mine, other) = if from_lo { (lo, hi) } else { (hi, lo) };
        if copy_of(mine, other, seg, print, ts) {
            mine.copied = true;
            // One router later: from now on the capture is known to hold routed copies.
            if self.routed.is_none() && (0..RECENT).any(|a| mine.hash[a] == print.hash && mine.ttl[a] > print.ttl) {
                self.routed = Some(Routed::default());
            }
            return true;
        }
        if let Some(r) = self.routed.as_mut() {
            let key = Routed::key(id, from_lo, print);
            if r.is_copy(key, print, ts) {
                mine.copied = true;
                return true;
            }
            r.keep(key, print, ts);
        }
        mine.push(print.hash, print.ttl, ts, seg.seq, other.n);
        false
    }

    /// Keeps a record that starts connection `id` (it was no copy: nothing came before it).
    #[inline]
    pub fn start(&mut self, id: u64, from_lo: bool, seg: &Segment, print: &Print, ts: Timestamp) {
        let copy = self.is_copy(id, from_lo, seg, print, ts);
        debug_assert!(!copy, "a connection's first record has no original");
    }

    /// The way holding connection `id`, taken (the longest silent of its set) if none does.
    /// A way's time is when a lookup last came to it from another connection: the start of
    /// its last run of records, which is recent enough to choose what to push out.
    #[inline(always)]
    fn way(&mut self, id: u64, ts: Timestamp) -> usize {
        if self.last.0 == id {
            return self.last.1;
        }
        let w = self.find_or_take(id, ts);
        self.last = (id, w);
        w
    }

    #[inline(never)]
    fn find_or_take(&mut self, id: u64, ts: Timestamp) -> usize {
        let set = (id as usize % SETS) * WAYS;
        let ways = &mut self.ids[set..set + WAYS];
        if let Some(w) = ways.iter().position(|&(i, _)| i == id) {
            ways[w].1 = ways[w].1.max(ts.0);
            return set + w;
        }
        let w = (0..WAYS).min_by_key(|&w| ways[w].1).unwrap_or(0);
        ways[w] = (id, ts.0);
        self.sides[set + w] = [Side::default(); 2];
        set + w
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::LinkType;
    use crate::testkit::{printed, TcpPacket};

    const C: &str = "10.0.0.1:40000";
    const S: &str = "10.0.0.2:80";

    /// Feeds records (packet, time in µs) of connection 7, the client being the lower end;
    /// which were copies.
    fn run(d: &mut Duplicates, records: &[(TcpPacket, i64)]) -> Vec<bool> {
        records
            .iter()
            .map(|(p, us)| {
                let (_, bytes) = p.clone().ethernet().build();
                let (seg, print) = printed(LinkType::ETHERNET, &bytes).unwrap();
                let from_lo = seg.src_port == 40000;
                d.is_copy(7, from_lo, &seg, &print, Timestamp(us * 1_000))
            })
            .collect()
    }

    fn data(seq: u32, id: u16) -> TcpPacket {
        TcpPacket::new(S, C).ack(1).seq(seq).payload_len(1000).ip_id(id)
    }
    fn ack(n: u32, id: u16) -> TcpPacket {
        TcpPacket::new(C, S).seq(1).ack(n).ip_id(id)
    }

    #[test]
    fn a_data_segment_recorded_twice_is_a_copy_whatever_its_id() {
        for id in [0, 77] {
            let mut d = Duplicates::default();
            let got = run(&mut d, &[(ack(1, 1), 0), (data(1, id), 10), (data(1, id), 12)]);
            assert_eq!(got, [false, false, true], "id {id}");
        }
    }

    #[test]
    fn a_repeat_after_feedback_or_after_the_window_is_a_retransmission() {
        let mut d = Duplicates::default();
        // Duplicate ACKs between: a fast retransmission, IP ID kept.
        let got = run(
            &mut d,
            &[(ack(1, 1), 0), (data(1, 5), 10), (ack(1, 2), 50), (data(1, 5), 60)],
        );
        assert_eq!(got, [false; 4]);
        // Nothing between, but later than any copy: a timer.
        let mut d = Duplicates::default();
        let got = run(&mut d, &[(ack(1, 1), 0), (data(1, 5), 10), (data(1, 5), 10 + 1_001)]);
        assert_eq!(got, [false; 3]);
    }

    #[test]
    fn a_resend_of_older_data_between_makes_the_repeat_a_retransmission() {
        // Go-back-N after a timeout resends 1 then 1001: the second 1001 is no copy.
        let mut d = Duplicates::default();
        let got = run(
            &mut d,
            &[
                (ack(1, 1), 0),
                (data(1001, 0), 10),
                (data(1, 0), 300),
                (data(1001, 0), 310),
            ],
        );
        assert_eq!(got, [false; 4]);
        // New data between (a mirror's egress copy after a queue): still a copy.
        let mut d = Duplicates::default();
        let got = run(
            &mut d,
            &[(ack(1, 1), 0), (data(1, 0), 10), (data(1001, 0), 20), (data(1, 0), 30)],
        );
        assert_eq!(got, [false, false, false, true]);
        // The datagram one router later (`any` on a router: TTL one less) is a copy too,
        // and so is the mirror's copy after it.
        let mut d = Duplicates::default();
        let got = run(
            &mut d,
            &[
                (ack(1, 1), 0),
                (data(1, 4), 10),
                (data(1, 4).ttl(63), 11),
                (data(1, 4), 40),
            ],
        );
        assert_eq!(got, [false, false, true, true]);
    }

    #[test]
    fn without_the_other_end_only_an_id_or_a_syn_proves_a_data_copy() {
        let mut d = Duplicates::default();
        assert_eq!(run(&mut d, &[(data(1, 0), 10), (data(1, 0), 12)]), [false, false]);
        let mut d = Duplicates::default();
        assert_eq!(run(&mut d, &[(data(1, 9), 10), (data(1, 9), 12)]), [false, true]);
        let syn = TcpPacket::new(C, S).syn().seq(100).mss(1460);
        let mut d = Duplicates::default();
        assert_eq!(run(&mut d, &[(syn.clone(), 0), (syn, 1)]), [false, true]);
    }

    #[test]
    fn identical_resets_answering_two_arrivals_are_both_kept() {
        // Linux answers each segment to a closed port with a reset, ID 0 (as in
        // ../shared/real's nDPI firefox capture: two arrivals, then two resets 4 µs apart).
        let rst = TcpPacket::new(C, S).rst().seq(500);
        let mut d = Duplicates::default();
        let got = run(
            &mut d,
            &[
                (rst.clone(), 0),
                (data(1, 0), 100),
                (data(1001, 0), 120),
                (rst.clone(), 160),
                (rst, 164),
            ],
        );
        assert_eq!(got, [false; 5]);
    }

    #[test]
    fn an_ack_copy_needs_its_id_or_a_capture_known_to_copy() {
        // Numbered: a copy even with another record between (a mirror's interleaving).
        let mut d = Duplicates::default();
        let got = run(&mut d, &[(ack(1, 3), 0), (ack(1, 4), 1), (ack(1, 3), 2)]);
        assert_eq!(got, [false, false, true]);
        // ID 0: not until this end's packets are known to be copied (its data, here).
        let mut d = Duplicates::default();
        let request = TcpPacket::new(C, S).seq(1).ack(1001).payload_len(10);
        let after = TcpPacket::new(C, S).seq(11).ack(1001);
        let got = run(
            &mut d,
            &[
                (data(1, 0), 0),
                (ack(1001, 0), 1),
                (ack(1001, 0), 2),
                (request.clone(), 5),
                (request, 6),
                (after.clone(), 20),
                (after, 21),
            ],
        );
        assert_eq!(got, [false, false, false, false, true, false, true]);
    }

    /// A capture on a router's `any` interface records each forwarded datagram on the way
    /// in and, one hop later, on the way out (../shared/external's nDPI fix2 and rtsp
    /// captures: TTL 128, then 127 with another MAC). A lower TTL is a copy even with the
    /// other end's packets between and without an ID; the same TTL or a higher one is not.
    #[test]
    fn the_same_datagram_one_router_later_is_a_copy() {
        let mut d = Duplicates::default();
        let got = run(
            &mut d,
            &[
                (ack(1, 0), 0),
                (data(1, 0), 10),
                (ack(1001, 0), 12),
                (data(1, 0).ttl(63), 14),
                (ack(1001, 0).ttl(63), 16),
            ],
        );
        assert_eq!(got, [false, false, false, true, true]);
        let mut d = Duplicates::default();
        let got = run(&mut d, &[(ack(1, 1), 0), (data(1, 5).ttl(63), 10), (data(1, 5), 11)]);
        assert_eq!(got, [false; 3]);
        // Beyond the window, a resend after a route change: kept.
        let mut d = Duplicates::default();
        let got = run(&mut d, &[(ack(1, 1), 0), (data(1, 5), 10), (data(1, 5).ttl(63), 5_000)]);
        assert_eq!(got, [false; 3]);
    }

    /// Once a routed copy showed the capture is a router's, its egress copies are found
    /// behind many of the connection's records and past the window (a router's queue held
    /// them), up to the horizon; before, only the ring's reach counts.
    #[test]
    fn routed_copies_are_found_past_the_ring_once_one_was_seen() {
        // 30 data segments in, then their copies out, 1.5 ms later, TTL one less.
        let far = |d: &mut Duplicates, t0: i64| {
            let ins: Vec<(TcpPacket, i64)> = (0..30).map(|i| (data(1 + 1000 * i, 0), t0 + i as i64 * 10)).collect();
            let outs: Vec<(TcpPacket, i64)> = (0..30)
                .map(|i| (data(1 + 1000 * i, 0).ttl(63), t0 + 1_500 + i as i64 * 10))
                .collect();
            run(d, &[ins, outs].concat())
        };
        // A fresh capture: the ring sees none of them.
        let mut d = Duplicates::default();
        run(&mut d, &[(ack(1, 0), 0)]);
        assert!(far(&mut d, 10).iter().all(|&c| !c));
        // One routed copy within the ring's reach first: then every far copy is one.
        let mut d = Duplicates::default();
        let near = run(&mut d, &[(ack(1, 0), 0), (ack(1, 0).ttl(63), 2)]);
        assert_eq!(near, [false, true]);
        let got = far(&mut d, 10);
        assert!(got[..30].iter().all(|&c| !c) && got[30..].iter().all(|&c| c), "{got:?}");
        // Past the horizon the print is forgotten; the same TTL is never a routed copy.
        let h = ROUTED_HORIZON.nanos() / 1_000;
        let got = run(
            &mut d,
            &[
                (data(50_001, 0), 100_000),
                (data(50_001, 0).ttl(63), 100_000 + h + 1),
                (data(60_001, 0), 100_000 + h + 2),
                (data(60_001, 0), 100_000 + h + 3_000),
            ],
        );
        assert_eq!(got, [false; 4]);
    }

    #[test]
    fn a_different_header_bit_is_no_copy() {
        let mut d = Duplicates::default();
        let got = run(&mut d, &[(ack(1, 1), 0), (data(1, 5), 10), (data(1, 5).window(9), 11)]);
        assert_eq!(got, [false; 3]);
    }

    #[test]
    fn the_link_layer_does_not_matter() {
        let mut d = Duplicates::default();
        let a = data(1, 5);
        let (_, x) = a.clone().ethernet().build();
        let (_, y) = a.vlan(12).build();
        let (s1, p1) = printed(LinkType::ETHERNET, &x).unwrap();
        let (s2, p2) = printed(LinkType::ETHERNET, &y).unwrap();
        assert_eq!((s1, p1), (s2, p2));
        let got = [
            d.is_copy(1, false, &s1, &p1, Timestamp(0)),
            d.is_copy(1, false, &s2, &p2, Timestamp(2_000)),
        ];
        assert_eq!(got, [false, true]);
    }

    #[test]
    fn connections_do_not_see_each_others_records() {
        let mut d = Duplicates::default();
        let (_, bytes) = data(1, 5).ethernet().build();
        let (seg, print) = printed(LinkType::ETHERNET, &bytes).unwrap();
        // Ids one set apart share a set; others between them take the rest of its ways.
        assert!(!d.is_copy(0, false, &seg, &print, Timestamp(0)));
        assert!(!d.is_copy(SETS as u64, false, &seg, &print, Timestamp(1)));
        for k in 2..=WAYS as u64 {
            assert!(!d.is_copy(k * SETS as u64, false, &seg, &print, Timestamp(2)));
        }
        // Connection 0 was the longest silent of its set: pushed out, its copy is kept.
        assert!(!d.is_copy(0, false, &seg, &print, Timestamp(3)));
        // Connection 2 * SETS is still cached.
        assert!(d.is_copy(2 * SETS as u64, false, &seg, &print, Timestamp(4)));
    }
}
