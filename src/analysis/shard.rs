//! A set of connections and what happens to them: the flow table, the tracker and the
//! diagnosis accumulators per connection, and the flows finished so far.

use super::AnalysisConfig;
use crate::decode::Segment;
use crate::diagnose::{self, Accumulator};
use crate::flow::{FlowKey, FlowTable, Tracked};
use crate::observe::Observer;
use crate::tcp::Connection;
use crate::time::Timestamp;

pub(crate) struct Entry {
    conn: Connection,
    acc: Accumulator,
}

impl Tracked for Entry {
    fn new(conn: Connection) -> Self {
        Entry {
            conn,
            acc: Accumulator::default(),
        }
    }
    fn conn(&self) -> &Connection {
        &self.conn
    }
}

pub(crate) struct Shard {
    config: AnalysisConfig,
    table: FlowTable<Entry>,
    finished: Vec<diagnose::Finished>,
    evicted: Vec<Box<Entry>>,
}

impl Shard {
    pub(crate) fn new(config: &AnalysisConfig) -> Shard {
        Shard {
            config: config.clone(),
            table: FlowTable::new(config.table, config.first_flow_id),
            finished: Vec::new(),
            evicted: Vec::new(),
        }
    }

    /// Connections created so far.
    pub(crate) fn flows_seen(&self) -> u64 {
        self.table.next_id() - self.config.first_flow_id
    }

    #[inline]
    pub(crate) fn on_segment<O: Observer>(&mut self, seg: &Segment, frame: u64, ts: Timestamp, observer: &mut O) {
        let (entry, dir, replaced) = self.table.lookup(seg, frame, ts);
        let wants = observer.wants_segments();
        // Set on every segment so it holds from a connection's first; observers never change.
        entry.conn.keep_flight_series(wants);
        let mut event = entry.conn.track(seg, dir, frame, ts);
        entry.acc.on_segment(&entry.conn, &event);
        if wants {
            entry.conn.add_flights(&mut event);
            observer.on_segment(&event);
        }
        if let Some(old) = replaced {
            self.finish_entry(old, observer);
        }
        self.table.evict_due(&mut self.evicted);
        while let Some(e) = self.evicted.pop() {
            self.finish_entry(e, observer);
        }
    }

    /// Hands the connection under `key` over to another shard (see [`Self::adopt`]).
    pub(crate) fn release(&mut self, key: &FlowKey) -> Option<Box<Entry>> {
        self.table.take(key)
    }

    /// Takes over a connection another shard released. One this shard still holds under
    /// the same key is an earlier life of the 4-tuple that went quiet here (the router
    /// forgot it and sent the new life elsewhere): in one thread the new life's first
    /// segment would have replaced it, so it is finished now.
    pub(crate) fn adopt<O: Observer>(&mut self, key: FlowKey, entry: Box<Entry>, observer: &mut O) {
        if let Some(old) = self.table.take(&key) {
            self.finish_entry(old, observer);
        }
        self.table.adopt(key, entry);
    }

    fn finish_entry<O: Observer>(&mut self, e: Box<Entry>, observer: &mut O) {
        let e = *e;
        let done = diagnose::finish(&e.conn, e.acc, &self.config.capture_name, self.config.link_rate_bps);
        observer.on_flow_end(&done.summary);
        self.finished.push(done);
    }

    /// Finishes every live connection; the flows of this shard, in no particular order.
    pub(crate) fn finish<O: Observer>(mut self, observer: &mut O) -> Vec<diagnose::Finished> {
        for e in self.table.drain() {
            self.finish_entry(e, observer);
        }
        self.finished
    }
}
