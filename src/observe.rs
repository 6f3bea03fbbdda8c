//! The push interface between the analysis and whoever wants more than the summaries
//! (the `packets` table, plot recorders, tests), in the spirit of ripgrep's `Sink`.

use crate::summary::FlowSummary;
use crate::tcp::SegmentEvent;

pub trait Observer {
    /// Called for every TCP segment of a tracked flow, in capture order (across flows too,
    /// unless [`Self::needs_capture_order`] says otherwise).
    fn on_segment(&mut self, _event: &SegmentEvent) {}
    /// Called once per flow when it is finished (evicted or at the end of the capture).
    fn on_flow_end(&mut self, _flow: &FlowSummary) {}
    /// Whether per-segment events are wanted; false lets the tracker skip building them.
    fn wants_segments(&self) -> bool {
        true
    }
    /// Whether segments must come in capture order across flows, as a packets table needs
    /// them (the default). An observer that keeps what it sees by flow (the plots) says
    /// false: a connection without data is then held as a cheap log, as for an observer
    /// that wants no segments, and its segments come in their own order when it is given
    /// a tracker (its first payload, or its summary) — never when a flood or scan finding
    /// summarises it. So it sees the connections `analyze` lists, and no others.
    fn needs_capture_order(&self) -> bool {
        true
    }
}

/// An observer that wants nothing: `analyze` without per-segment output.
pub struct NoObserver;

impl Observer for NoObserver {
    fn wants_segments(&self) -> bool {
        false
    }
}

impl<O: Observer + ?Sized> Observer for &mut O {
    fn on_segment(&mut self, event: &SegmentEvent) {
        (**self).on_segment(event)
    }
    fn on_flow_end(&mut self, flow: &FlowSummary) {
        (**self).on_flow_end(flow)
    }
    fn wants_segments(&self) -> bool {
        (**self).wants_segments()
    }
    fn needs_capture_order(&self) -> bool {
        (**self).needs_capture_order()
    }
}
