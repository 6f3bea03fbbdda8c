//! One rule per limitation, each in its own file with what it detects, why, and an
//! example (the ruff layout). The classifier applies them in precedence order, the way
//! Linux's tcp_chrono lets the highest-priority state win.

pub mod bottleneck;
pub mod cwnd;
pub mod receiver_window;
pub mod sender;
