//! The host/port selection, applied after the front: the front sees every segment, so
//! every connection gets the id (and the life: its cuts, its budget, its fold into a
//! flood finding) it gets without a selection, and only the selected connections'
//! work reaches a tracker. `analyze --port 443 x.pcap` then lists flow 7 of
//! `analyze x.pcap` as flow 7, with the same content (bar the flows it shares a path
//! with that the selection left out: `diagnose::across_flows` judges those it sees).
//!
//! The front names a connection by its ends only when it starts a tracker (`Cmd::Open`,
//! `Cmd::Replay`); after that by its worker and slot. So the slots of connections left
//! out are marked, per worker, from their `Open` until their `Finish`, and follow a
//! `Move`. A left-out connection's summary is not built: the output is told to skip its
//! id instead of waiting for it.

use super::front::{Cmd, Decisions, Expect, Op};
use super::FlowFilter;
use crate::endpoint::Endpoint;

/// The front's decisions for the selected connections only, passed on to `inner`.
pub(crate) struct Selected<'a, D: Decisions> {
    pub inner: &'a mut D,
    pub state: &'a mut Selection,
}

/// What the selection remembers between decisions.
pub(crate) struct Selection {
    filter: FlowFilter,
    /// Per worker, per slot: the connection there is left out.
    out: Vec<Vec<bool>>,
    /// The flow a `Finish`/`Replay` just left out: its `Expect` becomes a skip.
    skipping: Option<u64>,
}

impl Selection {
    /// None when the filter selects everything (nothing to do).
    pub(crate) fn new(filter: &FlowFilter) -> Option<Selection> {
        (!filter.hosts.is_empty() || !filter.ports.is_empty()).then(|| Selection {
            filter: filter.clone(),
            out: Vec::new(),
            skipping: None,
        })
    }

    fn mark(&mut self, w: usize, slot: u32, left_out: bool) {
        if self.out.len() <= w {
            self.out.resize_with(w + 1, Vec::new);
        }
        let v = &mut self.out[w];
        let s = slot as usize;
        if v.len() <= s {
            if !left_out {
                return;
            }
            v.resize(s + 1, false);
        }
        v[s] = left_out;
    }

    #[inline]
    fn left_out(&self, w: usize, slot: u32) -> bool {
        self.out
            .get(w)
            .and_then(|v| v.get(slot as usize))
            .copied()
            .unwrap_or(false)
    }

    fn accepts(&self, a: &Endpoint, b: &Endpoint) -> bool {
        self.filter.accepts_ends(a, b)
    }
}

impl<D: Decisions> Decisions for Selected<'_, D> {
    #[inline]
    fn cmd(&mut self, w: usize, cmd: Cmd) {
        let s = &mut *self.state;
        let pass = match &cmd {
            Cmd::Seg { slot, .. } => !s.left_out(w, *slot),
            Cmd::Open { slot, op } => {
                let keep = match op {
                    Op::Start(n) => s.accepts(&n.client, &n.server),
                    Op::Promote(a) => s.accepts(&a.key.lo, &a.key.hi),
                };
                s.mark(w, *slot, !keep);
                keep
            }
            Cmd::Finish { slot, fseq, .. } => {
                let keep = !s.left_out(w, *slot);
                if !keep {
                    s.mark(w, *slot, false);
                    s.skipping = *fseq;
                }
                keep
            }
            Cmd::Replay { fseq, attempt, .. } => {
                let keep = s.accepts(&attempt.key.lo, &attempt.key.hi);
                if !keep {
                    s.skipping = Some(*fseq);
                }
                keep
            }
            Cmd::Move { slot, to, to_slot } => {
                let keep = !s.left_out(w, *slot);
                if !keep {
                    s.mark(w, *slot, false);
                    s.mark(*to, *to_slot, true);
                }
                keep
            }
        };
        if pass {
            self.inner.cmd(w, cmd);
        }
    }

    fn expect(&mut self, e: Expect) {
        let e = match e {
            Expect::Flow { fseq, id, .. } if self.state.skipping == Some(fseq) => {
                self.state.skipping = None;
                Expect::Skip { id }
            }
            e => e,
        };
        self.inner.expect(e);
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::{analyze_reader, analyze_reader_parallel, AnalysisConfig, FlowFilter};
    use crate::capture::CaptureReader;
    use crate::observe::NoObserver;
    use crate::summary::FlowSummary;
    use crate::testkit::sim;
    use std::time::Duration;

    fn reader(bytes: &[u8]) -> CaptureReader {
        CaptureReader::new(Box::new(std::io::Cursor::new(bytes.to_vec()))).unwrap()
    }

    fn config(ports: &[u16]) -> AnalysisConfig {
        AnalysisConfig {
            filter: FlowFilter {
                hosts: Vec::new(),
                ports: ports.to_vec(),
            },
            ..Default::default()
        }
    }

    fn ids(flows: &[FlowSummary]) -> Vec<(u64, String)> {
        flows.iter().map(|f| (f.id, f.client.clone())).collect()
    }

    #[test]
    fn a_selected_flow_keeps_the_id_and_the_life_it_has_without_the_selection() {
        // Four flows (server ports 5001.., client ports 40000..) starting apart: each
        // selection lists its flows under the ids of the whole capture, in one thread and
        // in several.
        let path = sim::Path::new(20_000_000, Duration::from_millis(20));
        let flows: Vec<sim::Flow> = (0..4)
            .map(|i| sim::Flow {
                start: Duration::from_millis(300 * i),
                ..sim::Flow::default()
            })
            .collect();
        let out = sim::run(&path, &flows, Duration::from_millis(2_000));
        let pcap = &out.sender_side_pcap;
        let (all_summary, all, _) = analyze_reader(&mut reader(pcap), AnalysisConfig::default(), NoObserver);
        assert_eq!(all.len(), 4);
        for ports in [vec![5002], vec![40003], vec![5001, 5003]] {
            let want: Vec<_> = ids(&all)
                .into_iter()
                .zip(&all)
                .filter(|(_, f)| {
                    ports.iter().any(|p| {
                        let end = format!(":{p}");
                        f.client.ends_with(&end) || f.server.ends_with(&end)
                    })
                })
                .map(|(i, _)| i)
                .collect();
            assert!(!want.is_empty());
            let (summary, one, _) = analyze_reader(&mut reader(pcap), config(&ports), NoObserver);
            assert_eq!(ids(&one), want, "one thread, --port {ports:?}");
            // The capture's summary is the whole capture's.
            assert_eq!(summary.flows, all_summary.flows);
            for workers in [1, 3] {
                let (_, many) = analyze_reader_parallel(&mut reader(pcap), config(&ports), workers, &mut |_| {});
                assert_eq!(ids(&many), want, "{workers} workers, --port {ports:?}");
            }
            // The same connection: its packets and bytes (its verdict may differ: the
            // flows it shared the path with and the selection left out are not judged
            // beside it).
            for f in &one {
                let whole = all.iter().find(|g| g.id == f.id).unwrap();
                assert_eq!((f.start_ts, f.end_ts), (whole.start_ts, whole.end_ts), "flow {}", f.id);
                assert_eq!(f.bytes, whole.bytes, "flow {}", f.id);
            }
        }
    }
}
