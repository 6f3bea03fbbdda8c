//! The watcher on a thread of its own, once nothing waits for its answers.
//!
//! The front asks the watcher one thing as it goes: whether a finding holds yet
//! ([`Watcher::raised`]), which decides whether an attempt that ends is listed or folded.
//! That answer never goes back to false, so once it is true the watcher's work (a
//! Space-Saving count with a new key and a distinct count for each of two kinds of key per
//! failed attempt, four distinct counts per SYN: in a spoofed flood every attempt is a new
//! key) can run beside the front instead of inside it. The front hands the same calls, in
//! the same order, in batches to a thread that makes them on the same watcher: the
//! figures are those of the watcher called in place, whatever the threads do.

use super::Watcher;
use crate::flow::{Endpoint, Outcome};
use crate::time::Timestamp;
use std::sync::mpsc;
use std::thread::JoinHandle;

/// Calls handed over at a time, and batches queued: the thread runs a batch (~100 µs)
/// while the front fills the next; a few hundred kilobytes in all.
const BATCH: usize = 2048;
const QUEUED: usize = 2;

/// One call of the watcher, as the front made it.
#[derive(Clone, Copy, Debug)]
enum Call {
    Syn {
        ts: Timestamp,
        client: Endpoint,
        server: Endpoint,
        new_attempt: bool,
    },
    End {
        first_ts: Timestamp,
        client: Endpoint,
        server: Endpoint,
        outcome: Outcome,
    },
}

impl Call {
    fn apply(self, w: &mut Watcher) {
        match self {
            Call::Syn {
                ts,
                client,
                server,
                new_attempt,
            } => w.on_syn(ts, client, server, new_attempt),
            Call::End {
                first_ts,
                client,
                server,
                outcome,
            } => w.on_end(first_ts, client, server, outcome),
        }
    }
}

/// A watcher running on its own thread, fed in capture order.
pub struct Offload {
    batch: Vec<Call>,
    to: Option<mpsc::SyncSender<Vec<Call>>>,
    /// Emptied batches come back: the same few buffers circulate.
    spare: mpsc::Receiver<Vec<Call>>,
    thread: Option<JoinHandle<Watcher>>,
}

impl Offload {
    /// Moves `watcher` to a new thread; gives it back if no thread can be started.
    pub fn start(watcher: Watcher) -> Result<Offload, Watcher> {
        let (to, from) = mpsc::sync_channel::<Vec<Call>>(QUEUED);
        let (back, spare) = mpsc::channel::<Vec<Call>>();
        // The watcher goes over through a channel so that a failed spawn returns it.
        let (give, take) = mpsc::channel::<Watcher>();
        let spawned = std::thread::Builder::new()
            .name("bdpscope-watcher".into())
            .spawn(move || {
                let mut w = take.recv().expect("the watcher is handed over before any call");
                for mut batch in from {
                    for call in batch.drain(..) {
                        call.apply(&mut w);
                    }
                    // The front may be gone already (its last batch): then it is dropped.
                    let _ = back.send(batch);
                }
                w
            });
        match spawned {
            Ok(thread) => {
                give.send(watcher).expect("the thread waits for its watcher");
                Ok(Offload {
                    batch: Vec::with_capacity(BATCH),
                    to: Some(to),
                    spare,
                    thread: Some(thread),
                })
            }
            Err(_) => Err(watcher),
        }
    }

    #[inline]
    fn push(&mut self, call: Call) {
        self.batch.push(call);
        if self.batch.len() == BATCH {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let fresh = self.spare.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
        let full = std::mem::replace(&mut self.batch, fresh);
        if let Some(to) = &self.to {
            // The thread only goes away by panicking, which `finish` reports.
            let _ = to.send(full);
        }
    }

    /// [`Watcher::on_syn`], made on the thread.
    #[inline]
    pub fn on_syn(&mut self, ts: Timestamp, client: Endpoint, server: Endpoint, new_attempt: bool) {
        self.push(Call::Syn {
            ts,
            client,
            server,
            new_attempt,
        });
    }

    /// [`Watcher::on_end`], made on the thread.
    #[inline]
    pub fn on_end(&mut self, first_ts: Timestamp, client: Endpoint, server: Endpoint, outcome: Outcome) {
        self.push(Call::End {
            first_ts,
            client,
            server,
            outcome,
        });
    }

    /// Waits for every call to be made; the watcher back.
    pub fn finish(mut self) -> Watcher {
        self.flush();
        drop(self.to.take());
        let thread = self.thread.take().expect("joined once");
        thread.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    fn ep(a: u32, port: u16) -> Endpoint {
        Endpoint {
            addr: IpAddr::V4(Ipv4Addr::from(a)),
            port,
        }
    }

    /// The watcher fed through the thread ends as the one called in place, figure for
    /// figure (more calls than a batch holds, and a last batch that is not full).
    #[test]
    fn the_watcher_on_a_thread_gives_the_figures_of_the_one_in_place() {
        let mut here = Watcher::default();
        let mut there = Offload::start(Watcher::default()).unwrap_or_else(|_| panic!("no thread"));
        let server = ep(0x0a00_0001, 80);
        let mut x = 7u64;
        for i in 0..(3 * BATCH as u64 + 17) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let client = ep((x >> 32) as u32, 1024 + (x % 60_000) as u16);
            let ts = Timestamp(i as i64 * 300_000);
            let target = if i % 5 == 0 {
                ep(0x0a00_0002, (x % 100) as u16)
            } else {
                server
            };
            here.on_syn(ts, client, target, true);
            there.on_syn(ts, client, target, true);
            let outcome = if i % 7 == 0 { Outcome::Data } else { Outcome::Unanswered };
            here.on_end(ts, client, target, outcome);
            there.on_end(ts, client, target, outcome);
        }
        let there = there.finish();
        assert_eq!(format!("{:?}", here.findings()), format!("{:?}", there.findings()));
        assert_eq!(format!("{:?}", here.counts(3)), format!("{:?}", there.counts(3)));
        assert_eq!(format!("{:?}", here.rate()), format!("{:?}", there.rate()));
        assert!(
            !here.findings().is_empty(),
            "the test compares findings, not their absence"
        );
    }
}
