//! One capture over several threads. The reading thread reads, decodes and runs the
//! front (every connection's life, `front.rs`); each connection with a tracker belongs to
//! one worker at a time (the front places it, and moves one now and then to even the
//! load), which runs the tracker and the diagnosis in a shard of its own. A worker gets
//! its connections' work in capture order, the output puts the finished flows in the
//! front's order, so the results are the same as in one thread.

use super::front::{Cmd, Decisions, Expect, Front};
use super::output::Output;
use super::router::REBALANCE_MIN_SEGMENTS;
use super::selected::{Selected, Selection};
use super::shard::{Entry, Shard};
use super::{front_config, AnalysisConfig, Counters, PROGRESS_EVERY};
use crate::capture::{CaptureReader, Step};
use crate::diagnose::Finished;
use crate::observe::NoObserver;
use crate::summary::{CaptureSummary, FlowSummary};
use std::sync::mpsc;

/// Commands handed to a worker at a time, and batches queued per worker: enough to keep
/// the threads busy, little enough that memory stays a few megabytes.
const BATCH: usize = 2048;
const QUEUED_BATCHES: usize = 4;

/// What the reading thread sends a worker, in order.
enum Work {
    Cmds(Vec<Cmd>),
    /// Take over this connection, handed over by another worker, into this slot.
    Adopt(u32, Box<Entry>),
}

/// Reads and analyses a capture with `workers` analysis threads beside the reading one.
/// `progress` is called now and then with the input bytes read so far. Returns every flow.
pub fn analyze_reader_parallel(
    reader: &mut CaptureReader,
    config: AnalysisConfig,
    workers: usize,
    progress: &mut dyn FnMut(u64),
) -> (CaptureSummary, Vec<FlowSummary>) {
    let mut flows = Vec::new();
    let (summary, _) = run(reader, config, workers, REBALANCE_MIN_SEGMENTS, progress, &mut |f| {
        flows.push(f)
    });
    (summary, flows)
}

/// [`analyze_reader_parallel`] handing each flow to `sink` as soon as it is written
/// (in order), instead of holding them all.
pub fn analyze_reader_parallel_into(
    reader: &mut CaptureReader,
    config: AnalysisConfig,
    workers: usize,
    progress: &mut dyn FnMut(u64),
    sink: &mut dyn FnMut(FlowSummary),
) -> CaptureSummary {
    run(reader, config, workers, REBALANCE_MIN_SEGMENTS, progress, sink).0
}

/// The front's decisions, batched per worker.
struct Dispatch<'a> {
    batches: Vec<Vec<Cmd>>,
    senders: &'a [mpsc::SyncSender<Work>],
    spare: &'a mpsc::Receiver<Vec<Cmd>>,
    moved: &'a mpsc::Receiver<(usize, u32, Box<Entry>)>,
    results: &'a mpsc::Receiver<(u64, Finished)>,
    output: &'a mut Output,
}

impl Dispatch<'_> {
    fn flush(&mut self, w: usize) {
        if !self.batches[w].is_empty() {
            let fresh = self.spare.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
            let full = std::mem::replace(&mut self.batches[w], fresh);
            // A worker only goes away by panicking, which join reports below.
            let _ = self.senders[w].send(Work::Cmds(full));
        }
    }

    /// Takes in the flows the workers finished so far.
    fn collect(&mut self) {
        while let Ok((fseq, f)) = self.results.try_recv() {
            self.output.arrive(fseq, f);
        }
    }
}

impl Decisions for Dispatch<'_> {
    #[inline]
    fn cmd(&mut self, w: usize, cmd: Cmd) {
        if let Cmd::Seg { .. } = cmd {
            // Most commands: one test, one push.
            let b = &mut self.batches[w];
            b.push(cmd);
            if b.len() == BATCH {
                self.flush(w);
            }
            return;
        }
        let moving = matches!(cmd, Cmd::Move { .. });
        // A flow the output waits for goes to its worker now: later flows, and the
        // attempts a flood finding folds, queue behind it in the output.
        let awaited = matches!(cmd, Cmd::Finish { fseq: Some(_), .. } | Cmd::Replay { .. });
        self.batches[w].push(cmd);
        if awaited {
            self.flush(w);
        } else if moving {
            // The old worker hands the connection over once it has done everything
            // before; it goes to the new one ahead of anything after.
            self.flush(w);
            if let Ok((to, slot, entry)) = self.moved.recv() {
                self.flush(to);
                let _ = self.senders[to].send(Work::Adopt(slot, entry));
            }
        } else if self.batches[w].len() == BATCH {
            self.flush(w);
        }
    }
    fn expect(&mut self, e: Expect) {
        self.output.expect(e);
        // What waits for a worker's flow stays bounded: beyond this, wait for the flows.
        if self.output.waiting() > MAX_WAITING {
            while self.output.waiting() > MAX_WAITING / 2 {
                match self.results.recv() {
                    Ok((fseq, f)) => self.output.arrive(fseq, f),
                    Err(_) => break,
                }
            }
        }
    }
}

/// Decisions the output holds while a worker's flow is on its way, at most.
const MAX_WAITING: usize = 1 << 14;

/// [`analyze_reader_parallel_into`] with the balancer's threshold for moving connections
/// (tests lower it to move connections of small captures); also returns the moves made.
fn run(
    reader: &mut CaptureReader,
    config: AnalysisConfig,
    workers: usize,
    rebalance_min: u64,
    progress: &mut dyn FnMut(u64),
    sink: &mut dyn FnMut(FlowSummary),
) -> (CaptureSummary, u64) {
    let workers = workers.max(1);
    let name = config.capture_name.clone();
    let mut counters = Counters::default();
    let mut front = Front::new(front_config(&config, true, workers, rebalance_min));
    // The trackers are in the workers: the flood watcher may go to a thread too.
    front.watch_apart();
    let mut output = Output::new(&config);
    let mut selection = Selection::new(&config.filter);
    std::thread::scope(|scope| {
        let mut senders = Vec::with_capacity(workers);
        let mut handles = Vec::with_capacity(workers);
        // Emptied batches go back to the reader: the same few buffers circulate, warm in
        // cache, instead of a fresh allocation (and fresh pages) per batch.
        let (spare_tx, spare_rx) = mpsc::channel::<Vec<Cmd>>();
        let (moved_tx, moved_rx) = mpsc::channel::<(usize, u32, Box<Entry>)>();
        let (done_tx, done_rx) = mpsc::channel::<(u64, Finished)>();
        for _ in 0..workers {
            let (tx, rx) = mpsc::sync_channel::<Work>(QUEUED_BATCHES);
            let config = &config;
            let (spare_tx, moved_tx, done_tx) = (spare_tx.clone(), moved_tx.clone(), done_tx.clone());
            handles.push(scope.spawn(move || {
                let mut shard = Shard::new(config);
                let mut none = NoObserver;
                // The reader may be gone already (end of capture): then these are dropped.
                let mut done = |fseq, f| {
                    let _ = done_tx.send((fseq, f));
                };
                let mut moved = |to, slot, e| {
                    let _ = moved_tx.send((to, slot, e));
                };
                for work in rx {
                    match work {
                        Work::Cmds(mut batch) => {
                            for cmd in batch.drain(..) {
                                shard.exec(cmd, &mut none, &mut done, &mut moved);
                            }
                            let _ = spare_tx.send(batch);
                        }
                        Work::Adopt(slot, entry) => shard.adopt(slot, entry),
                    }
                }
            }));
            senders.push(tx);
        }
        drop(done_tx);
        let mut d = Dispatch {
            batches: (0..workers).map(|_| Vec::with_capacity(BATCH)).collect(),
            senders: &senders,
            spare: &spare_rx,
            moved: &moved_rx,
            results: &done_rx,
            output: &mut output,
        };
        let mut print = crate::decode::Print::default();
        let Ok(damage) = reader.read_all(PROGRESS_EVERY, |step| {
            match step {
                Step::Frame(frame) => {
                    if let Some(seg) = counters.decode(frame, &mut print) {
                        match &mut selection {
                            None => front.on_segment(&seg, &print, frame.number, frame.ts, &mut d),
                            Some(state) => front.on_segment(
                                &seg,
                                &print,
                                frame.number,
                                frame.ts,
                                &mut Selected { inner: &mut d, state },
                            ),
                        }
                    }
                }
                Step::Tick(r) => {
                    progress(r.input_bytes());
                    d.collect();
                    for f in d.output.take_ready() {
                        sink(f);
                    }
                }
            }
            Ok::<(), std::convert::Infallible>(())
        });
        if let Some(e) = damage {
            counters.warnings.push(e.to_string());
        }
        match &mut selection {
            None => front.finish(&mut d),
            Some(state) => front.finish(&mut Selected { inner: &mut d, state }),
        }
        for w in 0..workers {
            d.flush(w);
        }
        drop(senders);
        for h in handles {
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        }
        while let Ok((fseq, f)) = done_rx.try_recv() {
            output.arrive(fseq, f);
        }
    });
    debug_assert!(output.caught_up());
    output.finish();
    for f in output.take_ready() {
        sink(f);
    }
    let moves = front.moves();
    (counters.summary(&name, Some(reader), &front, &config), moves)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::{LinkType, PcapWriter};
    use crate::testkit::sim;
    use crate::time::Timestamp;

    fn capture(bytes: Vec<u8>) -> CaptureReader {
        CaptureReader::new(Box::new(std::io::Cursor::new(bytes))).unwrap()
    }

    #[test]
    fn several_threads_give_the_flows_of_one() {
        // Three flows sharing a bottleneck and a fourth one later: the parallel result
        // must be the single-thread one, field for field.
        let path = sim::Path::new(20_000_000, std::time::Duration::from_millis(30));
        let flows = vec![sim::Flow::default(); 3];
        let out = sim::run(&path, &flows, std::time::Duration::from_millis(1500));
        let one = analyze_reader(capture(out.sender_side_pcap.clone()));
        for workers in [1, 2, 3] {
            let (_, many) = analyze_reader_parallel(
                &mut capture(out.sender_side_pcap.clone()),
                AnalysisConfig::default(),
                workers,
                &mut |_| {},
            );
            assert_eq!(
                serde_json::to_string(&one).unwrap(),
                serde_json::to_string(&many).unwrap(),
                "{workers} workers"
            );
        }
        assert_eq!(one.len(), 3);
    }

    #[test]
    fn connections_moved_between_workers_keep_their_results() {
        // A light connection first (a control connection, say), then four bulk ones that
        // start together: placed by connection count, one worker ends up with the light
        // one and a bulk one, another with several bulk ones, and the router moves some.
        // A low threshold makes it move on a capture this small.
        use std::time::Duration;
        let path = sim::Path::new(20_000_000, Duration::from_millis(20));
        let light = sim::Flow {
            rcvbuf: 8 << 10,
            ..sim::Flow::default()
        };
        let bulk = sim::Flow {
            start: Duration::from_millis(200),
            ..sim::Flow::default()
        };
        let flows = vec![light, bulk.clone(), bulk.clone(), bulk.clone(), bulk];
        let out = sim::run(&path, &flows, Duration::from_millis(3_500));
        let one = serde_json::to_string(&analyze_reader(capture(out.sender_side_pcap.clone()))).unwrap();
        let mut moved = 0;
        for workers in [2, 3, 4] {
            let mut many = Vec::new();
            let (_, moves) = run(
                &mut capture(out.sender_side_pcap.clone()),
                AnalysisConfig::default(),
                workers,
                100,
                &mut |_| {},
                &mut |f| many.push(f),
            );
            assert_eq!(one, serde_json::to_string(&many).unwrap(), "{workers} workers");
            moved += moves;
        }
        assert!(moved > 0, "no connection was moved: the test tests nothing");
        assert_eq!(one.matches("\"verdict\"").count(), 5);
    }

    fn analyze_reader(mut r: CaptureReader) -> Vec<FlowSummary> {
        super::super::analyze_reader(&mut r, AnalysisConfig::default(), NoObserver).1
    }

    #[test]
    fn a_connection_idle_past_the_timeout_is_cut_the_same_way() {
        use crate::testkit::TcpPacket;
        let mut w = PcapWriter::new(Vec::new(), LinkType::ETHERNET, 65535, false, false).unwrap();
        let t0 = 1_700_000_000_000_000_000i64;
        let mut put = |t: i64, p: TcpPacket| {
            let (_, bytes) = p.ethernet().build();
            w.write_packet(Timestamp(t0 + t), &bytes, bytes.len() as u32).unwrap();
        };
        let a = |s: &str, d: &str| TcpPacket::new(s, d);
        // Flow A talks, goes quiet for 400 s (past the 300 s idle timeout) and talks again;
        // flow B keeps the clock moving meanwhile.
        put(0, a("10.0.0.1:40000", "10.0.0.2:80").seq(1).ack(1).payload_len(100));
        for i in 1..500 {
            put(
                i * 1_000_000_000,
                a("10.0.0.3:40001", "10.0.0.4:80")
                    .seq(1 + i as u32 * 10)
                    .ack(1)
                    .payload_len(10),
            );
        }
        put(
            400 * 1_000_000_000 + 1,
            a("10.0.0.1:40000", "10.0.0.2:80").seq(101).ack(1).payload_len(100),
        );
        let bytes = w.into_inner();
        let one = analyze_reader(capture(bytes.clone()));
        let (_, two) = analyze_reader_parallel(&mut capture(bytes), AnalysisConfig::default(), 2, &mut |_| {});
        assert_eq!(one.len(), 3, "A twice and B");
        assert_eq!(
            serde_json::to_string(&one).unwrap(),
            serde_json::to_string(&two).unwrap()
        );
    }
}
