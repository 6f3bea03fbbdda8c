//! The flow table: canonical key -> live connection state, with eviction of idle and
//! closed connections so memory is bounded by the connections alive at one time, never by
//! the length of the capture.

use super::hash::FxHashMap;
use super::key::{Dir, Endpoint, FlowKey};
use crate::decode::Segment;
use crate::tcp::{ConnState, Connection};
use crate::time::{Span, Timestamp};
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
/// (into the map, out on eviction) would copy all of it.
pub struct FlowTable<T: Tracked> {
    map: FxHashMap<FlowKey, Box<T>>,
    next_id: u64,
    config: TableConfig,
    now: Timestamp,
    last_sweep: Option<Timestamp>,
}

impl<T: Tracked> FlowTable<T> {
    pub fn new(config: TableConfig, first_id: u64) -> Self {
        FlowTable {
            map: FxHashMap::default(),
            next_id: first_id,
            config,
            now: Timestamp(i64::MIN),
            last_sweep: None,
        }
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
    pub fn lookup(&mut self, seg: &Segment, frame: u64, ts: Timestamp) -> (&mut T, Dir, Option<Box<T>>) {
        self.now = self.now.max(ts);
        let (src, dst) = Endpoint::pair_of(seg);
        let (key, _) = FlowKey::of(src, dst);
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
        // One probe of the map per segment: the entry either goes on, is replaced by a new
        // connection on the same tuple, or is created.
        let mut replaced = None;
        let entry = match self.map.entry(key) {
            Entry::Occupied(mut o) => {
                let c = o.get().conn();
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
                    replaced = Some(o.insert(new_conn()));
                }
                o.into_mut()
            }
            Entry::Vacant(v) => {
                self.next_id += 1;
                v.insert(new_conn())
            }
        };
        let dir = if entry.conn().client == src { Dir::C2S } else { Dir::S2C };
        (&mut **entry, dir, replaced)
    }

    /// Removes connections that closed long enough ago or went idle, if a sweep is due.
    pub fn evict_due(&mut self, out: &mut Vec<Box<T>>) {
        match self.last_sweep {
            Some(t) if self.now - t < SWEEP_EVERY => return,
            _ => self.last_sweep = Some(self.now),
        }
        let (now, cfg) = (self.now, self.config);
        let expired: Vec<FlowKey> = self
            .map
            .iter()
            .filter(|(_, t)| expired(t.conn(), now, &cfg))
            .map(|(k, _)| *k)
            .collect();
        for k in expired {
            if let Some(t) = self.map.remove(&k) {
                out.push(t);
            }
        }
    }

    /// Every connection still in the table (end of the capture).
    pub fn drain(&mut self) -> Vec<Box<T>> {
        self.map.drain().map(|(_, t)| t).collect()
    }
}
