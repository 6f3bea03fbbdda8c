//! Classic BPF: the programs libpcap compiles capture filters into, checked and run in
//! safe Rust, so that `bdpscope ... EXPR` selects exactly the packets `tcpdump -r FILE
//! EXPR` selects.
//!
//! The library does not compile filter expressions: libpcap's compiler is the reference
//! (its grammar, its link-layer rules, its optimiser), and the binary asks it for the
//! program with `tcpdump -ddd` (see `src/cli/filter.rs`). What is here:
//! - `insn`: the instruction and opcode fields (`<linux/filter.h>`),
//! - `program`: [`Program`], parsing `-ddd` output and the kernel's checks
//!   (`bpf_check_classic`), so a program cannot loop, jump outside itself or read
//!   scratch memory it did not write,
//! - `run`: the interpreter (libpcap's `pcap_filter`),
//! - `filter`: [`PacketFilter`], a [`RecordFilter`](crate::capture::RecordFilter) that
//!   runs the program compiled for each record's link type.

mod filter;
pub mod insn;
mod program;
mod run;

#[cfg(test)]
mod tests;

pub use filter::{Compile, PacketFilter};
pub use insn::Insn;
pub use program::Program;

/// Why a program was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProgramError {
    /// The text is not `tcpdump -ddd` output.
    #[error("not a BPF program listing: {0}")]
    Parse(String),
    /// Empty, or longer than the kernel's 4096 instructions.
    #[error("a BPF program has 1 to 4096 instructions, this one {0}")]
    Length(usize),
    /// An instruction the kernel's checker refuses.
    #[error("BPF instruction {pc} is invalid: {why}")]
    Invalid { pc: usize, why: String },
}
