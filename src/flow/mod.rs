//! Flow identity and the table of live connections.

mod hash;
mod key;
mod table;

pub use hash::{FxBuildHasher, FxHashMap, FxHasher};
pub use key::{Dir, Endpoint, FlowKey};
pub use table::{FlowTable, TableConfig, Tracked};
