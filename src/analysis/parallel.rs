//! One capture over several threads. The reading thread reads and decodes; each
//! connection belongs to one worker at a time (`router.rs` chooses, and moves one now and
//! then to even the load), which runs the tracker and the diagnosis for it in a shard of
//! its own. A connection's segments reach the worker holding it in capture order, and
//! connections are cut, finished and numbered exactly as in one thread, so the results
//! are the same.

use super::router::{Move, Router, REBALANCE_MIN_SEGMENTS};
use super::shard::{Entry, Shard};
use super::{conclude, AnalysisConfig, Counters};
use crate::capture::CaptureReader;
use crate::decode::Segment;
use crate::flow::FlowKey;
use crate::observe::NoObserver;
use crate::summary::{CaptureSummary, FlowSummary};
use crate::time::Timestamp;
use std::sync::mpsc;

/// Segments handed to a worker at a time, and batches queued per worker: enough to keep
/// the threads busy, little enough that memory stays a few megabytes.
const BATCH: usize = 2048;
const QUEUED_BATCHES: usize = 4;

struct Item {
    frame: u64,
    ts: Timestamp,
    seg: Segment,
}

/// What the reading thread sends a worker, in order.
enum Work {
    Segments(Vec<Item>),
    /// Hand the connection under this key back (it moves to another worker).
    Release(FlowKey),
    /// Take over this connection from another worker.
    Adopt(FlowKey, Box<Entry>),
}

/// How often (in records) progress is reported.
const PROGRESS_EVERY: u64 = 1 << 16;

/// Reads and analyses a capture with `workers` analysis threads beside the reading one.
/// `progress` is called now and then with the input bytes read so far.
pub fn analyze_reader_parallel(
    reader: &mut CaptureReader,
    config: AnalysisConfig,
    workers: usize,
    progress: &mut dyn FnMut(u64),
) -> (CaptureSummary, Vec<FlowSummary>) {
    let (summary, flows, _) = run(reader, config, workers, REBALANCE_MIN_SEGMENTS, progress);
    (summary, flows)
}

/// [`analyze_reader_parallel`] with the router's threshold for moving connections
/// (tests lower it to move connections of small captures); also returns the moves made.
fn run(
    reader: &mut CaptureReader,
    config: AnalysisConfig,
    workers: usize,
    rebalance_min: u64,
    progress: &mut dyn FnMut(u64),
) -> (CaptureSummary, Vec<FlowSummary>, u64) {
    let workers = workers.max(1);
    let name = config.capture_name.clone();
    let mut counters = Counters::default();
    let (finished, moves) = std::thread::scope(|scope| {
        let mut senders = Vec::with_capacity(workers);
        let mut handles = Vec::with_capacity(workers);
        // Emptied batches go back to the reader: the same few buffers circulate, warm in
        // cache, instead of a fresh allocation (and fresh pages) per batch.
        let (spare_tx, spare_rx) = mpsc::channel::<Vec<Item>>();
        // Released connections come back to the reader on their way to another worker.
        let (released_tx, released_rx) = mpsc::channel::<Option<Box<Entry>>>();
        for _ in 0..workers {
            let (tx, rx) = mpsc::sync_channel::<Work>(QUEUED_BATCHES);
            let config = &config;
            let (spare_tx, released_tx) = (spare_tx.clone(), released_tx.clone());
            handles.push(scope.spawn(move || {
                let mut shard = Shard::new(config);
                let mut none = NoObserver;
                for work in rx {
                    match work {
                        Work::Segments(mut batch) => {
                            for it in &batch {
                                shard.on_segment(&it.seg, it.frame, it.ts, &mut none);
                            }
                            batch.clear();
                            // The reader may be gone already (end of capture): then it is dropped.
                            let _ = spare_tx.send(batch);
                        }
                        Work::Release(key) => {
                            let _ = released_tx.send(shard.release(&key));
                        }
                        Work::Adopt(key, entry) => shard.adopt(key, entry, &mut none),
                    }
                }
                shard.finish(&mut none)
            }));
            senders.push(tx);
        }
        let mut router = Router::new(workers, config.table, rebalance_min);
        let mut batches: Vec<Vec<Item>> = (0..workers).map(|_| Vec::with_capacity(BATCH)).collect();
        // Sends worker `w` what it has been given so far.
        let flush = |w: usize, batches: &mut Vec<Vec<Item>>, senders: &[mpsc::SyncSender<Work>]| {
            if !batches[w].is_empty() {
                let fresh = spare_rx.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
                let full = std::mem::replace(&mut batches[w], fresh);
                // A worker only goes away by panicking, which join reports below.
                let _ = senders[w].send(Work::Segments(full));
            }
        };
        let mut records = 0u64;
        loop {
            records += 1;
            if records % PROGRESS_EVERY == 0 {
                progress(reader.input_bytes());
            }
            match reader.next_frame() {
                Ok(Some(frame)) => {
                    let Some(seg) = counters.decode(&frame, &config.filter) else {
                        continue;
                    };
                    let w = router.route(&seg, frame.ts);
                    batches[w].push(Item {
                        frame: frame.number,
                        ts: frame.ts,
                        seg,
                    });
                    if batches[w].len() == BATCH {
                        flush(w, &mut batches, &senders);
                    }
                    // After this segment went to the connection's current worker.
                    if let Some(Move { key, from, to }) = router.take_move() {
                        flush(from, &mut batches, &senders);
                        let _ = senders[from].send(Work::Release(key));
                        // The old worker answers once it has processed everything before.
                        // None: it had evicted the connection already; its next segment
                        // starts a new one on the new worker, as it would in one thread.
                        if let Ok(Some(entry)) = released_rx.recv() {
                            flush(to, &mut batches, &senders);
                            let _ = senders[to].send(Work::Adopt(key, entry));
                        }
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    counters.warnings.push(e.to_string());
                    break;
                }
            }
        }
        for w in 0..workers {
            flush(w, &mut batches, &senders);
        }
        drop(senders);
        let finished = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect::<Vec<_>>();
        (finished, router.moves)
    });
    let flows = conclude(finished, &config);
    (counters.summary(&name, Some(reader), flows.len() as u64), flows, moves)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::{LinkType, PcapWriter};
    use crate::flow::{Endpoint, TableConfig};
    use crate::testkit::sim;

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
            let (_, many, moves) = run(
                &mut capture(out.sender_side_pcap.clone()),
                AnalysisConfig::default(),
                workers,
                100,
                &mut |_| {},
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

    #[test]
    fn the_router_keeps_the_time_of_a_connection_it_sees_only_through_its_shortcut() {
        use crate::testkit::TcpPacket;
        let seg = |s: &str, d: &str| {
            let (_, bytes) = TcpPacket::new(s, d).seq(1).ack(1).payload_len(10).ethernet().build();
            crate::decode::decode(LinkType::ETHERNET, &bytes).unwrap()
        };
        let (a, b) = (
            seg("10.0.0.1:40000", "10.0.0.2:80"),
            seg("10.0.0.3:40001", "10.0.0.2:80"),
        );
        let (key, _) = FlowKey::of(Endpoint::pair_of(&a).0, Endpoint::pair_of(&a).1);
        let ms = |m: i64| Timestamp(m * 1_000_000);
        let mut r = Router::new(2, TableConfig::default(), REBALANCE_MIN_SEGMENTS);
        // Seen through the shortcut only, a connection's latest time still reaches the map
        // before a sweep reads it...
        r.route(&a, ms(0)); // the first sweep
        r.route(&a, ms(100));
        r.route(&a, ms(400));
        assert_eq!(r.owner_of(&key).unwrap().1, ms(100));
        r.route(&a, ms(1_000)); // a sweep is due
        assert_eq!(r.owner_of(&key).unwrap().1, ms(1_000));
        // ... and when another connection takes the shortcut.
        r.route(&a, ms(1_500));
        r.route(&b, ms(1_600));
        assert_eq!(r.owner_of(&key).unwrap().1, ms(1_500));
        // One connection alone for longer than the router's memory stays where it is.
        for i in 4..800 {
            assert_eq!(r.route(&a, Timestamp(i * 500_000_000)), 0);
        }
        assert!(
            r.owner_of(&key).unwrap().1 >= Timestamp(398 * 1_000_000_000),
            "{:?}",
            r.owner_of(&key)
        );
        // The other connection, forgotten meanwhile, comes back to the idler worker.
        assert_eq!(r.route(&b, Timestamp(400 * 1_000_000_000)), 1);
        assert_eq!(r.route(&a, Timestamp(400 * 1_000_000_000)), 0);
        assert_eq!(r.flows(), [1, 1]);
    }
}
