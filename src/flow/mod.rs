//! Flow identity, the table of live connections, and the facts that decide a connection's
//! end (its life and timeouts).

mod hash;
mod key;
pub mod life;
mod slots;
mod table;

pub use hash::{FxBuildHasher, FxHashMap, FxHasher};
pub use key::{Dir, Endpoint, FlowKey};
pub use life::{Life, Outcome, Timeouts};
pub use slots::{Found, Slots};
pub use table::{FlowTable, TableConfig, Tracked, SWEEP_EVERY};
