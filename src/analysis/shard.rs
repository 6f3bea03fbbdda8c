//! A worker's connections with their trackers: the full state (tracker, diagnosis
//! accumulators) of each connection the front gave one, in slots the front assigns. It
//! carries out the front's [`Cmd`]s; it decides nothing about lives and ends.

use super::attempt::Attempt;
use super::front::{Cmd, NewConn, Op};
use super::AnalysisConfig;
use crate::diagnose::{self, Accumulator};
use crate::flow::Dir;
use crate::observe::Observer;
use crate::tcp::Connection;

pub(crate) struct Entry {
    conn: Connection,
    acc: Accumulator,
}

impl Entry {
    fn new(n: &NewConn) -> Box<Entry> {
        Box::new(Entry {
            conn: Connection::new(n.id, n.client, n.server, n.by_syn, n.first_frame, n.first_ts),
            acc: Accumulator::default(),
        })
    }

    /// The tracker of an attempt, its log replayed (no observer: an attempt is held as a
    /// log only when no observer wants segments).
    fn replayed(a: &Attempt) -> Box<Entry> {
        let (client, server) = a.ends();
        let mut e = Entry::new(&NewConn {
            id: a.life.id,
            client,
            server,
            by_syn: a.life.by_syn(),
            first_frame: a.life.first_frame,
            first_ts: a.life.first_ts,
        });
        e.conn.keep_flight_series(false);
        for l in a.log.iter() {
            let (seg, dir, frame, ts) = l.segment(client, server, &a.life);
            let event = e.conn.track(&seg, dir, frame, ts);
            e.acc.on_segment(&e.conn, &event);
        }
        e
    }
}

pub(crate) struct Shard {
    config: AnalysisConfig,
    slots: Vec<Option<Box<Entry>>>,
}

impl Shard {
    pub(crate) fn new(config: &AnalysisConfig) -> Shard {
        Shard {
            config: config.clone(),
            slots: Vec::new(),
        }
    }

    fn put(&mut self, slot: u32, e: Box<Entry>) {
        let i = slot as usize;
        if i >= self.slots.len() {
            self.slots.resize_with(i + 1, || None);
        }
        debug_assert!(self.slots[i].is_none(), "slot {slot} is taken");
        self.slots[i] = Some(e);
    }

    fn take(&mut self, slot: u32) -> Box<Entry> {
        self.slots[slot as usize].take().expect("the front names live slots")
    }

    /// Carries out one command; a finished flow goes to `done` with its place in the
    /// output. A move's entry goes to `moved`.
    #[inline]
    pub(crate) fn exec<O: Observer>(
        &mut self,
        cmd: Cmd,
        observer: &mut O,
        done: &mut impl FnMut(u64, diagnose::Finished),
        moved: &mut impl FnMut(usize, u32, Box<Entry>),
    ) {
        match cmd {
            Cmd::Open { slot, op } => match op {
                Op::Start(n) => self.put(slot, Entry::new(&n)),
                Op::Promote(a) => self.put(slot, Entry::replayed(&a)),
            },
            Cmd::Seg { slot, frame, ts, seg } => {
                let wants = observer.wants_segments();
                let entry = self.slots[slot as usize].as_deref_mut().expect("a live slot");
                let c = &entry.conn.client;
                let dir = if c.addr == seg.src && c.port == seg.src_port {
                    Dir::C2S
                } else {
                    Dir::S2C
                };
                // Set on every segment so it holds from a connection's first; observers never change.
                entry.conn.keep_flight_series(wants);
                let mut event = entry.conn.track(&seg, dir, frame, ts);
                entry.acc.on_segment(&entry.conn, &event);
                if wants {
                    entry.conn.add_flights(&mut event);
                    observer.on_segment(&event);
                }
            }
            Cmd::Finish { slot, fseq, copies } => {
                let e = self.take(slot);
                if let Some(fseq) = fseq {
                    done(fseq, self.finish_entry(e, copies, observer));
                }
            }
            Cmd::Replay { fseq, attempt, copies } => {
                let e = Entry::replayed(&attempt);
                done(fseq, self.finish_entry(e, copies, observer));
            }
            Cmd::Move { slot, to, to_slot } => {
                let e = self.take(slot);
                moved(to, to_slot, e);
            }
        }
    }

    /// Takes over a connection another shard handed over.
    pub(crate) fn adopt(&mut self, slot: u32, e: Box<Entry>) {
        self.put(slot, e);
    }

    /// Summarises a connection; `copies`: its capture duplicates set aside, per direction.
    fn finish_entry<O: Observer>(&self, e: Box<Entry>, copies: [u64; 2], observer: &mut O) -> diagnose::Finished {
        let e = *e;
        let done = diagnose::finish(
            &e.conn,
            e.acc,
            copies,
            &self.config.capture_name,
            self.config.link_rate_bps,
        );
        observer.on_flow_end(&done.summary);
        done
    }
}
