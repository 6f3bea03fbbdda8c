//! Retransmissions that repair what an outage lost are the outage's, not losses a
//! congestion window answered: on a path that loses nothing but during one outage, the
//! evidence counts every retransmission as the outage's repair (or as spurious, D-SACK) at
//! both vantage points, and no advice blames loss on the path.

use bdpscope::analysis::{analyze_reader, AnalysisConfig};
use bdpscope::capture::CaptureReader;
use bdpscope::observe::NoObserver;
use bdpscope::summary::{AdviceKind, FlowSummary, StallKind};
use bdpscope::testkit::sim::{self, Outage};
use std::time::Duration;

fn flows(pcap: &[u8]) -> Vec<FlowSummary> {
    let mut r = CaptureReader::new(Box::new(std::io::Cursor::new(pcap.to_vec()))).unwrap();
    analyze_reader(&mut r, AnalysisConfig::default(), NoObserver).1
}

#[test]
fn an_outages_retransmissions_are_its_repair_not_path_loss() {
    // 20 Mbit/s, 40 ms, a deep queue, down from 1.5 s to 3.0 s of a 5 s transfer.
    let p = sim::Path {
        outages: vec![Outage {
            start: Duration::from_millis(1_500),
            length: Duration::from_millis(1_500),
        }],
        queue_pkts: 400,
        ..sim::Path::new(20_000_000, Duration::from_millis(40))
    };
    let out = sim::run(&p, &[sim::Flow::default()], Duration::from_millis(5_000));
    for pcap in [&out.sender_side_pcap, &out.receiver_side_pcap] {
        let f = &flows(pcap)[0];
        assert!(f.retransmitted_segments > 0, "{:?}", f.evidence);
        assert!(
            f.stalls
                .iter()
                .any(|s| matches!(s.kind, StallKind::Outage | StallKind::RtoBackoff)),
            "{:?}",
            f.stalls
        );
        let line = f
            .evidence
            .iter()
            .find(|e| e.contains("retransmitted segments"))
            .expect("a retransmission line");
        let spurious = line.contains("spurious");
        // (A copy whose original survived comes back as a D-SACK from the simulator's
        // Linux receiver: all spurious, none a loss.)
        assert!(
            line.contains("all repairing what an outage lost")
                || line.contains("all spurious")
                || (spurious && line.contains("repairing what an outage lost")),
            "{line}"
        );
        assert!(
            !f.advice_items.iter().any(|a| a.kind == AdviceKind::FindLoss),
            "{:?}",
            f.advice
        );
    }
}
