//! An observer run on a thread of its own: the analysis hands it copies of the events in
//! batches and goes on, so formatting and writing (the `packets` rows) overlap with the
//! analysis instead of following it on the same core. One producer, one consumer, one
//! FIFO channel: the observer sees every event and flow end in the order it would have.

use bdpscope::observe::Observer;
use bdpscope::summary::FlowSummary;
use bdpscope::tcp::SegmentEvent;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Events per hand-off: ~0.3 MB, few enough wake-ups that the channel costs nothing.
const BATCH: usize = 1024;
/// Batches in flight: a short stall of the writer (a slow pipe) does not stop the analysis.
const QUEUED: usize = 4;

enum Msg {
    Segments(Vec<SegmentEvent>),
    FlowEnd(Box<FlowSummary>),
}

pub struct Offload<O: Observer + Send + 'static> {
    batch: Vec<SegmentEvent>,
    tx: Option<SyncSender<Msg>>,
    /// Emptied batches come back to be filled again.
    spare: Receiver<Vec<SegmentEvent>>,
    worker: Option<JoinHandle<O>>,
}

impl<O: Observer + Send + 'static> Offload<O> {
    pub fn new(mut inner: O) -> Self {
        let (tx, rx) = sync_channel::<Msg>(QUEUED);
        let (spare_tx, spare) = std::sync::mpsc::channel();
        let worker = std::thread::spawn(move || {
            for msg in rx {
                match msg {
                    Msg::Segments(mut events) => {
                        for e in &events {
                            inner.on_segment(e);
                        }
                        events.clear();
                        let _ = spare_tx.send(events); // the analysis may be done already
                    }
                    Msg::FlowEnd(flow) => inner.on_flow_end(&flow),
                }
            }
            inner
        });
        Offload {
            batch: Vec::with_capacity(BATCH),
            tx: Some(tx),
            spare,
            worker: Some(worker),
        }
    }

    fn send(&mut self, msg: Msg) {
        if let Some(tx) = &self.tx {
            // The consumer only goes away by panicking, which `finish` reports.
            let _ = tx.send(msg);
        }
    }

    fn flush(&mut self) {
        if !self.batch.is_empty() {
            let fresh = self.spare.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
            let full = std::mem::replace(&mut self.batch, fresh);
            self.send(Msg::Segments(full));
        }
    }

    /// Hands over what is left, waits for the observer to see it, and returns it.
    pub fn finish(mut self) -> O {
        self.flush();
        self.tx = None;
        let worker = self.worker.take().expect("taken only here and in drop");
        worker.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
    }
}

/// Dropped without `finish` (the capture could not be read at all): the observer still
/// sees what it was given and is dropped on its thread before this returns, so whatever it
/// writes on drop (a buffered CSV header) is out before the process exits.
impl<O: Observer + Send + 'static> Drop for Offload<O> {
    fn drop(&mut self) {
        if let Some(worker) = self.worker.take() {
            self.flush();
            self.tx = None;
            let _ = worker.join(); // a panic there is reported by the thread itself
        }
    }
}

impl<O: Observer + Send + 'static> Observer for Offload<O> {
    fn on_segment(&mut self, event: &SegmentEvent) {
        self.batch.push(*event);
        if self.batch.len() == BATCH {
            self.flush();
        }
    }

    fn on_flow_end(&mut self, flow: &FlowSummary) {
        self.flush(); // the flow's last segments go first
        self.send(Msg::FlowEnd(Box::new(flow.clone())));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records what it saw, in order.
    #[derive(Default)]
    struct Log(Vec<String>);

    impl Observer for Log {
        fn on_segment(&mut self, e: &SegmentEvent) {
            self.0.push(format!("seg {}", e.frame));
        }
        fn on_flow_end(&mut self, f: &FlowSummary) {
            self.0.push(format!("end {}", f.id));
        }
    }

    /// Counts what it saw into a shared cell, and says when it was dropped.
    struct Counting(std::sync::Arc<std::sync::Mutex<(usize, bool)>>);

    impl Observer for Counting {
        fn on_segment(&mut self, _: &SegmentEvent) {
            self.0.lock().unwrap().0 += 1;
        }
    }

    impl Drop for Counting {
        fn drop(&mut self) {
            self.0.lock().unwrap().1 = true;
        }
    }

    #[test]
    fn dropped_unfinished_it_delivers_and_drops_the_observer_before_returning() {
        use bdpscope::capture::CaptureReader;
        let seen = std::sync::Arc::new(std::sync::Mutex::new((0, false)));
        let mut off = Offload::new(Counting(seen.clone()));
        // Events the analysis produced, then the caller gives up (an error) without finish.
        let mut pcap =
            bdpscope::capture::PcapWriter::new(Vec::new(), bdpscope::capture::LinkType::ETHERNET, 65_535, false, false)
                .unwrap();
        for i in 0..10u32 {
            let (_, bytes) = bdpscope::testkit::TcpPacket::new("10.0.0.1:1000", "10.0.0.2:80")
                .seq(1 + i * 10)
                .ack(1)
                .payload_len(10)
                .ethernet()
                .build();
            pcap.write_packet(bdpscope::time::Timestamp(i as i64), &bytes, bytes.len() as u32)
                .unwrap();
        }
        let mut reader = CaptureReader::from_reader(std::io::Cursor::new(pcap.into_inner())).unwrap();
        off = bdpscope::analysis::analyze_reader(&mut reader, Default::default(), off).2;
        drop(off);
        assert_eq!(*seen.lock().unwrap(), (10, true));
    }

    #[test]
    fn the_observer_sees_everything_in_order() {
        use bdpscope::capture::{CaptureReader, LinkType, PcapWriter};
        use bdpscope::testkit::TcpPacket;
        use bdpscope::time::{Span, Timestamp};
        // A real capture through the real analysis: three flows, one cut by a RST midway.
        let mut pcap = PcapWriter::new(Vec::new(), LinkType::ETHERNET, 65_535, false, false).unwrap();
        for i in 0..3000u32 {
            let (c, s) = (format!("10.0.0.1:{}", 40_000 + i % 3), "10.0.0.2:80");
            let p = if i == 1500 {
                TcpPacket::new(&c, s).rst().seq(1 + i * 100)
            } else {
                TcpPacket::new(&c, s).seq(1 + i * 100).ack(1).payload_len(100)
            };
            let (_, bytes) = p.ethernet().build();
            let ts = Timestamp(0) + Span::from_millis(i as i64);
            pcap.write_packet(ts, &bytes, bytes.len() as u32).unwrap();
        }
        let bytes = pcap.into_inner();
        fn run<O: Observer>(bytes: &[u8], observer: O) -> O {
            let mut reader = CaptureReader::from_reader(std::io::Cursor::new(bytes.to_vec())).unwrap();
            bdpscope::analysis::analyze_reader(&mut reader, Default::default(), observer).2
        }
        let direct = run(&bytes, Log::default());
        let offloaded = run(&bytes, Offload::new(Log::default())).finish();
        assert!(direct.0.len() > 3000, "{}", direct.0.len());
        assert!(direct.0.iter().any(|l| l.starts_with("end")));
        assert_eq!(offloaded.0, direct.0);
    }
}
