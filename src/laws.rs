//! The laws every summary keeps: what bdpscope prints must agree with itself and with
//! physics. Each law sits beside what it constrains (the RTT summary's in `summarize`, the
//! capacity's in `diagnose::capacity`, the advice's in `diagnose::advice`, ...); this is the
//! registry that runs them all. Tests run it over every flow of every capture in reach, and
//! over the simulator's random paths; a violation is a bug in the analysis, never in the
//! law.
//!
//! `compare`'s laws (over a comparison of two captures, not a flow) are in
//! `compare::laws`, beside what they constrain: this layer cannot import `compare`.

use crate::summary::FlowSummary;

/// One law: a name, where it comes from, and its check (the violations, as sentences).
pub struct Law {
    pub name: &'static str,
    pub check: fn(&FlowSummary) -> Vec<String>,
}

pub const LAWS: &[Law] = &[
    Law {
        name: "rtt-ordered",
        check: crate::summarize::rtt_law,
    },
    Law {
        name: "goodput-over-a-round-trip",
        check: crate::summarize::goodput_law,
    },
    Law {
        name: "scale-negotiated",
        check: crate::summarize::scale_law,
    },
    Law {
        name: "capacity",
        check: crate::diagnose::capacity_law,
    },
    Law {
        name: "standing-queue",
        check: crate::diagnose::rules::bottleneck::queue_law,
    },
    Law {
        name: "advice",
        check: crate::diagnose::advice_flow_law,
    },
    Law {
        name: "evidence",
        check: crate::diagnose::evidence_law,
    },
    Law {
        name: "sender-not-full",
        check: crate::diagnose::rules::sender::law,
    },
    Law {
        name: "limits",
        check: crate::diagnose::limits_law,
    },
    Law {
        name: "cwnd-verdict-explained",
        check: crate::diagnose::rules::cwnd::law,
    },
    Law {
        name: "verdict-explained",
        check: crate::diagnose::rules::verdict_law,
    },
    Law {
        name: "stalls",
        check: crate::stall::law,
    },
    Law {
        name: "ecn",
        check: crate::diagnose::ecn_law,
    },
    Law {
        name: "capture-duplicates",
        check: crate::summarize::copies_law,
    },
    Law {
        name: "flight-in-network",
        check: crate::summarize::flight_law,
    },
    Law {
        name: "idle-turns",
        check: crate::diagnose::turns_law,
    },
    Law {
        name: "acks-lacking",
        check: crate::stall::acks_law,
    },
    Law {
        name: "sender-flight-near-loop",
        check: crate::tcp::near_loop_law,
    },
];

/// A broken law, on one flow.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    pub law: &'static str,
    pub flow: u64,
    pub detail: String,
}

/// Every law over one flow.
pub fn check(f: &FlowSummary) -> Vec<Violation> {
    LAWS.iter()
        .flat_map(|l| {
            (l.check)(f).into_iter().map(move |detail| Violation {
                law: l.name,
                flow: f.id,
                detail,
            })
        })
        .collect()
}
