//! `FlowTable`: live connections with the whole tracker state each, for one thread that
//! follows every connection in full (`compare` reads captures this way). It applies the
//! same rules as the analysis (`flow::life`): the same segments start, continue and end
//! the same connections.

use super::life::{self, Life, Timeouts};
use super::slots::{Found, Slots};
use crate::decode::Segment;
use crate::endpoint::{Dir, Endpoint};
use crate::tcp::Connection;
use crate::time::{Span, Timestamp};

/// Per-connection state the table stores: the tracker plus whatever the caller attaches.
pub trait Tracked {
    fn new(conn: Connection) -> Self;
    fn conn(&self) -> &Connection;
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableConfig {
    pub timeouts: Timeouts,
}

/// How often (in capture time) expired connections are looked for.
pub const SWEEP_EVERY: Span = Span::from_millis(1_000);

struct Item<T> {
    life: Life,
    value: Box<T>,
}

pub struct FlowTable<T: Tracked> {
    slots: Slots<Item<T>>,
    next_id: u64,
    config: TableConfig,
    now: Timestamp,
    last_sweep: Option<Timestamp>,
}

impl<T: Tracked> FlowTable<T> {
    pub fn new(config: TableConfig, first_id: u64) -> Self {
        FlowTable {
            slots: Slots::default(),
            next_id: first_id,
            config,
            now: Timestamp(i64::MIN),
            last_sweep: None,
        }
    }

    pub fn live(&self) -> usize {
        self.slots.live()
    }

    /// The connection a segment belongs to (created when new), its direction, and the
    /// previous connection on the same tuple when this segment starts a new one.
    pub fn lookup(&mut self, seg: &Segment, frame: u64, ts: Timestamp) -> (&mut T, Dir, Option<Box<T>>) {
        self.now = self.now.max(ts);
        let (src, dst) = Endpoint::pair_of(seg);
        let mut replaced = None;
        let slot = match self.slots.find(&src, &dst) {
            Found::Live(slot) => {
                let it = self.slots.get(slot);
                let from_client = it.value.conn().client == src;
                if life::starts_new(&it.life, seg, from_client, ts, &self.config.timeouts) {
                    let (key, old) = self.slots.remove(slot);
                    replaced = Some(old.value);
                    self.create(key, seg, src, dst, frame, ts)
                } else {
                    slot
                }
            }
            Found::Vacant(key) => self.create(key, seg, src, dst, frame, ts),
        };
        let it = self.slots.get_mut(slot);
        let dir = if it.value.conn().client == src {
            Dir::C2S
        } else {
            Dir::S2C
        };
        it.life.observe(seg, dir, ts);
        (&mut *it.value, dir, replaced)
    }

    fn create(
        &mut self,
        key: crate::flow::FlowKey,
        seg: &Segment,
        src: Endpoint,
        dst: Endpoint,
        frame: u64,
        ts: Timestamp,
    ) -> u32 {
        let (client, server, by_syn) = life::roles(seg, src, dst);
        let id = self.next_id;
        self.next_id += 1;
        let item = Item {
            life: Life::new(id, client == key.lo, by_syn, frame, ts),
            value: Box::new(T::new(Connection::new(id, client, server, by_syn, frame, ts))),
        };
        self.slots.insert(key, item)
    }

    /// Moves the connections that expired to `out`, if a sweep is due (once a second of
    /// capture time).
    pub fn evict_due(&mut self, out: &mut Vec<Box<T>>) {
        if self.last_sweep.is_some_and(|t| self.now - t < SWEEP_EVERY) {
            return;
        }
        self.last_sweep = Some(self.now);
        let (now, t) = (self.now, self.config.timeouts);
        let mut due: Vec<(u64, u32)> = self
            .slots
            .iter()
            .filter(|(_, it)| it.life.expired(now, &t).is_some())
            .map(|(slot, it)| (it.life.id, slot))
            .collect();
        due.sort_unstable();
        for (_, slot) in due {
            out.push(self.slots.remove(slot).1.value);
        }
    }

    /// Every connection still in the table (end of the capture), in the order they began.
    pub fn drain(&mut self) -> Vec<Box<T>> {
        let mut all: Vec<(u64, u32)> = self.slots.iter().map(|(slot, it)| (it.life.id, slot)).collect();
        all.sort_unstable();
        all.into_iter()
            .map(|(_, slot)| self.slots.remove(slot).1.value)
            .collect()
    }
}
