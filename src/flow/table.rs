//! The flow table: canonical key -> live connection state, with eviction of idle and
//! closed connections so memory is bounded by the connections alive at one time, never by
//! the length of the capture.

use crate::decode::Segment;
use crate::endpoint::{Dir, Endpoint, FlowKey};
use crate::tcp::{ConnState, Connection};
use crate::time::{Span, Timestamp};
use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;

/// Per-connection state the table stores: the tracker plus whatever the caller attaches.
pub trait Tracked {
    fn new(conn: Connection) -> Self;
    fn conn(&self) -> &Connection;
}

#[derive(Clone, Copy, Debug)]
pub struct TableConfig {
    /// A connection with no packet for this long is finished (Zeek's tcp_inactivity_timeout
    /// is 5 minutes; long-lived idle connections then show up as several flows).
    pub idle_timeout: Span,
    /// How long a closed connection is kept for late retransmissions and final ACKs.
    pub closed_linger: Span,
}

impl Default for TableConfig {
    fn default() -> Self {
        TableConfig {
            idle_timeout: Span::from_millis(300_000),
            closed_linger: Span::from_millis(10_000),
        }
    }
}

/// Whether a connection is over at `now`: closed long enough ago, or idle too long.
fn expired(c: &Connection, now: Timestamp, cfg: &TableConfig) -> bool {
    match c.state {
        ConnState::Closed(at) => now - at.max(c.last_ts) > cfg.closed_linger,
        ConnState::Open => now - c.last_ts > cfg.idle_timeout,
    }
}

/// How often (in capture time) the table looks for connections to evict.
const SWEEP_EVERY: Span = Span::from_millis(1_000);

/// Entries are boxed: a connection's state is a few kilobytes, and moving it by value
/// (into the table, out on eviction) would copy all of it. The map names a slot; the slot
/// holds the entry.
pub struct FlowTable<T: Tracked> {
    map: FxHashMap<FlowKey, usize>,
    /// Entries by slot; a slot is `Some` exactly while the map names it.
    slots: Vec<Option<Box<T>>>,
    free: Vec<usize>,
    /// The key of the last segment and its slot. Consecutive segments mostly belong to one
    /// connection (96% of them in a capture of four interleaved bulk flows: a sender's
    /// burst is captured together), and comparing a key is far cheaper than a probe.
    last: Option<(FlowKey, usize)>,
    next_id: u64,
    config: TableConfig,
    now: Timestamp,
    last_sweep: Option<Timestamp>,
}

impl<T: Tracked> FlowTable<T> {
    pub fn new(config: TableConfig, first_id: u64) -> Self {
        FlowTable {
            map: FxHashMap::default(),
            slots: Vec::new(),
            free: Vec::new(),
            last: None,
            next_id: first_id,
            config,
            now: Timestamp(i64::MIN),
            last_sweep: None,
        }
    }

    /// The entry in a slot the map names.
    fn entry(&self, slot: usize) -> &T {
        self.slots[slot]
            .as_deref()
            .expect("a slot the map names holds its entry")
    }

    /// Takes the entry out of a slot the map no longer names.
    fn release(&mut self, slot: usize) -> Option<Box<T>> {
        self.free.push(slot);
        self.slots[slot].take()
    }

    pub fn live(&self) -> usize {
        self.map.len()
    }

    pub fn next_id(&self) -> u64 {
        self.next_id
    }

    /// The connection a segment belongs to (created when new), its direction, and the
    /// previous connection on the same tuple when this segment starts a new one.
    ///
    /// Whether an existing connection is still the one a segment belongs to is decided
    /// here, from its own idle time and close, not by when the sweep last ran: so every
    /// way of driving the table (one shard or several) cuts connections the same way.
    #[inline]
    pub fn lookup(&mut self, seg: &Segment, frame: u64, ts: Timestamp) -> (&mut T, Dir, Option<Box<T>>) {
        self.now = self.now.max(ts);
        let (src, dst) = Endpoint::pair_of(seg);
        let starts_new = seg.flags.syn() && !seg.flags.ack();
        let id = self.next_id;
        let new_conn = || {
            let (client, server, by_syn) = if seg.flags.syn() && !seg.flags.ack() {
                (src, dst, true)
            } else if seg.flags.syn() {
                (dst, src, true)
            } else if src.port > dst.port || (src.port == dst.port && src <= dst) {
                (src, dst, false)
            } else {
                (dst, src, false)
            };
            Box::new(T::new(Connection::new(id, client, server, by_syn, frame, ts)))
        };
        // At most one probe of the map per segment: the entry either goes on, is replaced
        // by a new connection on the same tuple, or is created.
        let (slot, created) = match self.last {
            Some((k, slot)) if k.matches(&src, &dst) => (slot, false),
            _ => {
                let (key, _) = FlowKey::of(src, dst);
                let found = match self.map.entry(key) {
                    Entry::Occupied(o) => (*o.get(), false),
                    Entry::Vacant(v) => {
                        let slot = self.free.pop().unwrap_or_else(|| {
                            self.slots.push(None);
                            self.slots.len() - 1
                        });
                        v.insert(slot);
                        (slot, true)
                    }
                };
                self.last = Some((key, found.0));
                found
            }
        };
        let mut replaced = None;
        if created {
            self.next_id += 1;
            self.slots[slot] = Some(new_conn());
        } else {
            let c = self.entry(slot).conn();
            // A SYN from the recorded client is a new incarnation after a close or
            // with another ISN (port reuse); a SYN from the other end means the roles
            // were guessed mid-stream and a new connection starts the other way.
            let new_one = if starts_new {
                if c.client == src {
                    c.is_new_incarnation(seg)
                } else {
                    c.packets.iter().sum::<u64>() > 0
                }
            } else {
                expired(c, ts, &self.config)
            };
            if new_one {
                self.next_id += 1;
                replaced = self.slots[slot].replace(new_conn());
            }
        }
        let entry = self.slots[slot].as_deref_mut().expect("filled above");
        let dir = if entry.conn().client == src { Dir::C2S } else { Dir::S2C };
        (entry, dir, replaced)
    }

    /// Removes connections that closed long enough ago or went idle, if a sweep is due.
    /// Asked after every segment, due once a second of capture: the test stays inline.
    #[inline]
    pub fn evict_due(&mut self, out: &mut Vec<Box<T>>) {
        match self.last_sweep {
            Some(t) if self.now - t < SWEEP_EVERY => {}
            _ => self.sweep(out),
        }
    }

    #[inline(never)]
    fn sweep(&mut self, out: &mut Vec<Box<T>>) {
        self.last_sweep = Some(self.now);
        let (now, cfg) = (self.now, self.config);
        let expired: Vec<(FlowKey, usize)> = self
            .map
            .iter()
            .filter(|(_, &slot)| expired(self.entry(slot).conn(), now, &cfg))
            .map(|(k, &slot)| (*k, slot))
            .collect();
        for (k, slot) in expired {
            self.map.remove(&k);
            if self.last.is_some_and(|(l, _)| l == k) {
                self.last = None;
            }
            out.extend(self.release(slot));
        }
    }

    /// Takes the connection under `key` out of the table (to hand it to another table:
    /// its state moves whole, so it goes on as if it had never moved). None when there is
    /// none, e.g. it was evicted already.
    pub fn take(&mut self, key: &FlowKey) -> Option<Box<T>> {
        let slot = self.map.remove(key)?;
        if self.last.is_some_and(|(l, _)| l == *key) {
            self.last = None;
        }
        self.release(slot)
    }

    /// Puts a connection taken from another table under `key`, which must be free (see
    /// [`Self::take`]).
    pub fn adopt(&mut self, key: FlowKey, entry: Box<T>) {
        let slot = self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            self.slots.len() - 1
        });
        self.slots[slot] = Some(entry);
        let previous = self.map.insert(key, slot);
        debug_assert!(previous.is_none(), "adopted over a live connection");
    }

    /// Every connection still in the table (end of the capture).
    pub fn drain(&mut self) -> Vec<Box<T>> {
        self.last = None;
        let slots: Vec<usize> = self.map.drain().map(|(_, slot)| slot).collect();
        slots.into_iter().filter_map(|slot| self.release(slot)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::LinkType;
    use crate::testkit::TcpPacket;

    struct E(Connection);
    impl Tracked for E {
        fn new(c: Connection) -> Self {
            E(c)
        }
        fn conn(&self) -> &Connection {
            &self.0
        }
    }

    #[test]
    fn the_last_connection_shortcut_follows_interleaving_reuse_and_eviction() {
        let mut t: FlowTable<E> = FlowTable::new(TableConfig::default(), 0);
        let mut frame = 0;
        let ended = std::cell::RefCell::new(Vec::new());
        // Feeds one packet at `secs`; returns (connection id, direction, id replaced).
        let mut feed = |t: &mut FlowTable<E>, secs: i64, p: TcpPacket| {
            let (_, bytes) = p.ethernet().build();
            let seg = crate::decode::decode(LinkType::ETHERNET, &bytes).unwrap();
            let ts = Timestamp(secs * 1_000_000_000);
            frame += 1;
            let (e, dir, replaced) = t.lookup(&seg, frame, ts);
            e.0.on_segment(&seg, dir, frame, ts);
            let out = (e.0.id, dir, replaced.map(|r| r.0.id));
            t.evict_due(&mut ended.borrow_mut());
            out
        };
        let (a, a_back, b) = ("10.0.0.1:40000", "10.0.0.2:80", "10.0.0.3:40001");
        let p = |s: &str, d: &str| TcpPacket::new(s, d);
        assert_eq!(feed(&mut t, 0, p(a, a_back).syn().seq(100)), (0, Dir::C2S, None));
        // The same connection from the other side, twice in a row, then another one.
        assert_eq!(
            feed(&mut t, 0, p(a_back, a).syn().seq(500).ack(101)),
            (0, Dir::S2C, None)
        );
        assert_eq!(feed(&mut t, 0, p(a, a_back).seq(101).ack(501).payload_len(10)).0, 0);
        assert_eq!(feed(&mut t, 1, p(b, a_back).seq(7).ack(9).payload_len(10)).0, 1);
        assert_eq!(feed(&mut t, 1, p(a, a_back).seq(111).ack(501).payload_len(10)).0, 0);
        // A reset, then a new SYN on the same tuple while it is the last one looked up:
        // a new incarnation, and the old one handed back.
        assert_eq!(feed(&mut t, 2, p(a, a_back).rst().seq(121)).0, 0);
        assert_eq!(feed(&mut t, 3, p(a, a_back).syn().seq(9_000)), (2, Dir::C2S, Some(0)));
        assert_eq!(t.live(), 2);
        // Both go quiet past the idle timeout. B's next packet starts a new connection in
        // its slot (the old one handed back); the sweep then evicts A's and frees its slot.
        assert_eq!(
            feed(&mut t, 400, p(b, a_back).seq(17).ack(9).payload_len(10)),
            (3, Dir::C2S, Some(1))
        );
        assert_eq!(ended.borrow().iter().map(|e| e.0.id).collect::<Vec<_>>(), [2]);
        assert_eq!((t.live(), t.free.len()), (1, 1));
        // A again: a new connection, in the freed slot.
        assert_eq!(feed(&mut t, 401, p(a, a_back).seq(9_100).ack(501).payload_len(10)).0, 4);
        assert_eq!((t.live(), t.slots.len()), (2, 2), "slots are reused");
        assert_eq!(t.drain().len(), 2);
        assert_eq!((t.live(), t.last), (0, None));
    }
}
