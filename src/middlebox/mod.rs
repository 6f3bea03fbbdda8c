//! Middlebox forensics from one capture: options stripped or rewritten on the handshake
//! (window scale, MSS, SACK-permitted, timestamps) and window scaling broken between the
//! ends (one end scales, the other does not).
//!
//! `Evidence` is collected per segment while the flow is live; `findings` judges it when
//! the flow ends.

use crate::summary::MiddleboxFinding;
use crate::tcp::{Connection, SegmentEvent};

/// Behavioural evidence gathered while the flow is live (constant memory).
#[derive(Clone, Debug, Default)]
pub struct Evidence {}

impl Evidence {
    pub fn on_segment(&mut self, _conn: &Connection, _ev: &SegmentEvent) {}
}

/// What the handshake and the behaviour of one flow say about middleboxes on its path.
pub fn findings(_conn: &Connection, _evidence: &Evidence) -> Vec<MiddleboxFinding> {
    Vec::new()
}
