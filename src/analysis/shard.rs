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

    /// The tracker of an attempt, its log replayed. An attempt is held as a log only when
    /// no observer wants its segments as they come: one that wants them by flow
    /// (`Observer::needs_capture_order` false) sees them now, as tracking them from the
    /// first would have given them.
    fn replayed<O: Observer>(a: &Attempt, observer: &mut O) -> Box<Entry> {
        let (client, server) = a.ends();
        let mut e = Entry::new(&NewConn {
            id: a.life.id,
            client,
            server,
            by_syn: a.life.by_syn(),
            first_frame: a.life.first_frame,
            first_ts: a.life.first_ts,
        });
        let wants = observer.wants_segments();
        e.conn.keep_flight_series(wants);
        for l in a.log.iter() {
            let (seg, dir, frame, ts) = l.segment(client, server, &a.life);
            let mut event = e.conn.track(&seg, dir, frame, ts);
            e.acc.on_segment(&e.conn, &event);
            if wants {
                e.conn.add_flights(&mut event);
                observer.on_segment(&event);
            }
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
                Op::Promote(a) => self.put(slot, Entry::replayed(&a, observer)),
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
                let e = Entry::replayed(&attempt, observer);
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

#[cfg(test)]
mod tests {
    use crate::analysis::{analyze_reader, AnalysisConfig};
    use crate::capture::CaptureReader;
    use crate::observe::{NoObserver, Observer};
    use crate::summary::FlowSummary;
    use crate::tcp::SegmentEvent;
    use crate::testkit::{scan, sim};
    use std::collections::BTreeMap;
    use std::time::Duration;

    /// Every segment event it is given, per flow, as printed (events have no `PartialEq`).
    struct ByFlow {
        in_order: bool,
        seen: BTreeMap<u64, Vec<String>>,
    }

    impl Observer for ByFlow {
        fn on_segment(&mut self, e: &SegmentEvent) {
            self.seen.entry(e.flow).or_default().push(format!("{e:?}"));
        }
        fn needs_capture_order(&self) -> bool {
            self.in_order
        }
    }

    /// A transfer and a scan of 200 ports beside it (one connection each).
    fn capture() -> Vec<u8> {
        let path = sim::Path::new(10_000_000, Duration::from_millis(40));
        let out = sim::run(&path, &[sim::Flow::default()], Duration::from_millis(1_000));
        scan::with_port_scan(&out.sender_side_pcap, 200)
    }

    fn reader(bytes: &[u8]) -> CaptureReader {
        CaptureReader::new(Box::new(std::io::Cursor::new(bytes.to_vec()))).unwrap()
    }

    fn run(bytes: &[u8], list_all: bool, in_order: bool) -> (Vec<FlowSummary>, BTreeMap<u64, Vec<String>>) {
        let config = AnalysisConfig {
            list_all,
            ..Default::default()
        };
        let observer = ByFlow {
            in_order,
            seen: BTreeMap::new(),
        };
        let (_, flows, o) = analyze_reader(&mut reader(bytes), config, observer);
        (flows, o.seen)
    }

    /// An attempt held as a log, then replayed (at its first payload or its summary), gives
    /// an observer that keeps segments by flow every event, and the summary, that tracking
    /// it from its first segment gives.
    #[test]
    fn a_replayed_log_gives_the_observer_what_tracking_from_the_first_gives() {
        let bytes = capture();
        let (tracked, every) = run(&bytes, true, true);
        let (replayed, by_flow) = run(&bytes, true, false);
        assert_eq!(tracked.len(), 201, "the transfer and every probe");
        assert_eq!(replayed, tracked);
        assert_eq!(by_flow.len(), every.len());
        assert_eq!(by_flow, every);
    }

    /// Such an observer sees the flows an analysis without one lists (the attempts the scan
    /// finding summarises folded), and no segment of the others: `report` lists and draws
    /// what `analyze` lists.
    #[test]
    fn an_observer_by_flow_sees_the_flows_analyze_lists() {
        let bytes = capture();
        let (capture, plain, _) = analyze_reader(&mut reader(&bytes), AnalysisConfig::default(), NoObserver);
        assert!(capture.attempts.folded > 150, "{:?}", capture.attempts);
        let (flows, seen) = run(&bytes, false, false);
        assert_eq!(flows, plain);
        let listed: Vec<u64> = flows.iter().map(|f| f.id).collect();
        assert_eq!(seen.keys().copied().collect::<Vec<u64>>(), listed);
    }
}
