//! The table of live connections, and the facts that decide a connection's end (its life
//! and timeouts); the flow identity it is keyed by (`endpoint`) re-exported.

pub mod duplicate;
pub mod life;
mod slots;
mod table;

// Flow identity lives below `tcp` (whose connections know their ends), so that the table
// here, which holds those connections, can import `tcp` without a cycle.
pub use crate::endpoint::{Dir, Endpoint, FlowKey};
pub use duplicate::Duplicates;
pub use life::{Life, Outcome, Timeouts};
// FxHash (rustc-hash): keys come from captures, not from an adversary aiming collisions,
// and SipHash would cost a share of the per-packet budget.
pub use rustc_hash::{FxBuildHasher, FxHashMap, FxHasher};
pub use slots::{Found, Slots};
pub use table::{FlowTable, TableConfig, Tracked, SWEEP_EVERY};
