//! The push interface between the analysis and whoever wants more than the summaries
//! (the `packets` table, plot recorders, tests), in the spirit of ripgrep's `Sink`.

use crate::summary::FlowSummary;
use crate::tcp::SegmentEvent;

pub trait Observer {
    /// Called for every TCP segment of a tracked flow, in capture order.
    fn on_segment(&mut self, _event: &SegmentEvent) {}
    /// Called once per flow when it is finished (evicted or at the end of the capture).
    fn on_flow_end(&mut self, _flow: &FlowSummary) {}
    /// Whether per-segment events are wanted; false lets the tracker skip building them.
    fn wants_segments(&self) -> bool {
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
}
