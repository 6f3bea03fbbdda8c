//! One capture over several threads. The reading thread reads and decodes; each
//! connection belongs to one worker (the one with the fewest connections when it first
//! appears), which runs the tracker and the diagnosis for it in a shard of its own.
//! A connection's segments reach its worker in capture order, and connections are cut,
//! finished and numbered exactly as in one thread, so the results are the same.

use super::shard::Shard;
use super::{conclude, AnalysisConfig, Counters};
use crate::capture::CaptureReader;
use crate::decode::Segment;
use crate::flow::{Endpoint, FlowKey, FxHashMap, TableConfig};
use crate::observe::NoObserver;
use crate::summary::{CaptureSummary, FlowSummary};
use crate::time::{Span, Timestamp};
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
    let workers = workers.max(1);
    let name = config.capture_name.clone();
    let mut counters = Counters::default();
    let finished = std::thread::scope(|scope| {
        let mut senders = Vec::with_capacity(workers);
        let mut handles = Vec::with_capacity(workers);
        // Emptied batches go back to the reader: the same few buffers circulate, warm in
        // cache, instead of a fresh allocation (and fresh pages) per batch.
        let (spare_tx, spare_rx) = mpsc::channel::<Vec<Item>>();
        for _ in 0..workers {
            let (tx, rx) = mpsc::sync_channel::<Vec<Item>>(QUEUED_BATCHES);
            let config = &config;
            let spare_tx = spare_tx.clone();
            handles.push(scope.spawn(move || {
                let mut shard = Shard::new(config);
                let mut none = NoObserver;
                for mut batch in rx {
                    for it in &batch {
                        shard.on_segment(&it.seg, it.frame, it.ts, &mut none);
                    }
                    batch.clear();
                    // The reader may be gone already (end of capture): then it is dropped.
                    let _ = spare_tx.send(batch);
                }
                shard.finish(&mut none)
            }));
            senders.push(tx);
        }
        let mut router = Router::new(workers, config.table);
        let mut batches: Vec<Vec<Item>> = (0..workers).map(|_| Vec::with_capacity(BATCH)).collect();
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
                        let fresh = spare_rx.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
                        let full = std::mem::replace(&mut batches[w], fresh);
                        // A worker only goes away by panicking, which join reports below.
                        let _ = senders[w].send(full);
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    counters.warnings.push(e.to_string());
                    break;
                }
            }
        }
        for (w, batch) in batches.into_iter().enumerate() {
            if !batch.is_empty() {
                let _ = senders[w].send(batch);
            }
        }
        drop(senders);
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect::<Vec<_>>()
    });
    let flows = conclude(finished, &config);
    (counters.summary(&name, Some(reader), flows.len() as u64), flows)
}

/// Which worker owns which connection. Keys idle for longer than a connection can live
/// in a shard are forgotten, so the map is bounded by the live connections too.
struct Router {
    owner: FxHashMap<FlowKey, (usize, Timestamp)>,
    /// The last segment's key, its worker and its latest time, which is written back to
    /// `owner` when another key takes its place and before a sweep reads the times:
    /// consecutive segments mostly belong to one connection.
    last: Option<(FlowKey, usize, Timestamp)>,
    /// Connections each worker owns now, and segments it was given (the tie-break).
    flows: Vec<u64>,
    load: Vec<u64>,
    now: Timestamp,
    last_sweep: Option<Timestamp>,
    forget_after: Span,
}

/// How often (capture time) the router forgets idle keys.
const SWEEP_EVERY: Span = Span::from_millis(1_000);

impl Router {
    fn new(workers: usize, table: TableConfig) -> Router {
        Router {
            owner: FxHashMap::default(),
            last: None,
            flows: vec![0; workers],
            load: vec![0; workers],
            now: Timestamp(i64::MIN),
            last_sweep: None,
            forget_after: table.idle_timeout + table.closed_linger + SWEEP_EVERY,
        }
    }

    #[inline]
    fn route(&mut self, seg: &Segment, ts: Timestamp) -> usize {
        self.now = self.now.max(ts);
        let (src, dst) = Endpoint::pair_of(seg);
        let w = match &mut self.last {
            Some((k, w, t)) if k.matches(&src, &dst) => {
                *t = (*t).max(ts);
                *w
            }
            _ => {
                self.write_back();
                let (key, _) = FlowKey::of(src, dst);
                // Connections that start together (iperf -P, a browser) have no history
                // yet: the count of connections spreads them; the segments so far break ties.
                let (flows, load) = (&mut self.flows, &self.load);
                let entry = self.owner.entry(key).or_insert_with(|| {
                    let idlest = (0..load.len()).min_by_key(|&w| (flows[w], load[w])).unwrap_or(0);
                    flows[idlest] += 1;
                    (idlest, ts)
                });
                entry.1 = entry.1.max(ts);
                self.last = Some((key, entry.0, entry.1));
                entry.0
            }
        };
        self.load[w] += 1;
        if self.last_sweep.is_none_or(|t| self.now - t >= SWEEP_EVERY) {
            self.last_sweep = Some(self.now);
            self.write_back();
            self.last = None;
            let (now, keep, flows) = (self.now, self.forget_after, &mut self.flows);
            self.owner.retain(|_, (w, last)| {
                let live = now - *last <= keep;
                if !live {
                    flows[*w] -= 1;
                }
                live
            });
        }
        w
    }

    /// Brings the cached key's latest time back into `owner`.
    fn write_back(&mut self) {
        if let Some((k, _, t)) = self.last {
            if let Some(e) = self.owner.get_mut(&k) {
                e.1 = e.1.max(t);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::{LinkType, PcapWriter};
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
        let (a, b) = (seg("10.0.0.1:40000", "10.0.0.2:80"), seg("10.0.0.3:40001", "10.0.0.2:80"));
        let (key, _) = FlowKey::of(Endpoint::pair_of(&a).0, Endpoint::pair_of(&a).1);
        let ms = |m: i64| Timestamp(m * 1_000_000);
        let mut r = Router::new(2, TableConfig::default());
        // Seen through the shortcut only, a connection's latest time still reaches the map
        // before a sweep reads it...
        r.route(&a, ms(0)); // the first sweep
        r.route(&a, ms(100));
        r.route(&a, ms(400));
        assert_eq!(r.owner[&key].1, ms(100));
        r.route(&a, ms(1_000)); // a sweep is due
        assert_eq!(r.owner[&key].1, ms(1_000));
        // ... and when another connection takes the shortcut.
        r.route(&a, ms(1_500));
        r.route(&b, ms(1_600));
        assert_eq!(r.owner[&key].1, ms(1_500));
        // One connection alone for longer than the router's memory stays where it is.
        for i in 4..800 {
            assert_eq!(r.route(&a, Timestamp(i * 500_000_000)), 0);
        }
        assert!(r.owner[&key].1 >= Timestamp(398 * 1_000_000_000), "{:?}", r.owner[&key]);
        // The other connection, forgotten meanwhile, comes back to the idler worker.
        assert_eq!(r.route(&b, Timestamp(400 * 1_000_000_000)), 1);
        assert_eq!(r.route(&a, Timestamp(400 * 1_000_000_000)), 0);
        assert_eq!(r.flows, [1, 1]);
    }
}
