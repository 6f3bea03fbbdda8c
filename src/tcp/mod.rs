//! The per-connection TCP tracker: handshake options, both directions' sequence state,
//! windows, RTT loops and the sender's reconstructed view.

mod connection;
mod direction;
pub mod ecn;
mod event;
mod handshake;
mod ranges;
mod reno_credit;
pub mod rtt;
mod scale_infer;
mod scoreboard;
mod sender_view;
mod window;

pub use connection::{ConnState, Connection};
pub use direction::{AckOutcome, Direction, SendOutcome};
pub use ecn::EcnCounts;
pub use event::{SackRanges, SegmentEvent, SenderView};
pub use handshake::{Handshake, SynOptions};
pub use ranges::RangeSet;
pub(crate) use scale_infer::first_consistent_shift;
pub use scale_infer::{Confidence, InferredShift, ScaleInference};
pub use scoreboard::Scoreboard;
pub use sender_view::near_loop_law;
pub use window::WindowScale;
