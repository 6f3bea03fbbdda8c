//! The interpreter: libpcap's `pcap_filter` (bpf_filter.c), which is what `tcpdump -r`
//! runs on every record of a file, in safe Rust.
//!
//! - A load that reaches past the captured bytes ends the program with 0 (no match), as
//!   in libpcap and the kernel: a snaplen-cut packet matches only on what was captured.
//! - `len` is the packet's length on the wire, loads read the captured bytes.
//! - Division or modulo by X = 0 ends with 0; shifts by X >= 32 give 0 (libpcap's rule;
//!   constant divisors and shifts were checked by [`Program::new`]).
//! - Arithmetic wraps at 32 bits; multi-byte loads are big-endian (network order).
//! - Ancillary loads (Linux socket metadata) end with 0: a file has no such data.

use super::insn::*;
use super::Program;

impl Program {
    /// Runs the program on a packet: `data` the captured bytes, `wire_len` its length on
    /// the wire. Returns the program's return value (0: the packet does not match; else
    /// the number of bytes a live capture would keep).
    pub fn run(&self, data: &[u8], wire_len: u32) -> u32 {
        let p = &self.insns;
        let (mut a, mut x): (u32, u32) = (0, 0);
        let mut mem = [0u32; MEMWORDS as usize];
        let mut pc = 0usize;
        // Jumps go forward only (checked), so this ends within p.len() steps; `get`
        // keeps a bad index from panicking even so.
        while let Some(&i) = p.get(pc) {
            pc += 1;
            let code = i.code;
            match class(code) {
                RET => return if code == RET | RET_A { a } else { i.k },
                LD => {
                    a = match mode(code) {
                        IMM => i.k,
                        LEN => wire_len,
                        MEM => mem[(i.k % MEMWORDS) as usize],
                        ABS => match load(data, i.k as u64, size(code)) {
                            Some(v) => v,
                            None => return 0,
                        },
                        IND => match load(data, x as u64 + i.k as u64, size(code)) {
                            Some(v) => v,
                            None => return 0,
                        },
                        _ => return 0,
                    }
                }
                LDX => {
                    x = match mode(code) {
                        IMM => i.k,
                        LEN => wire_len,
                        MEM => mem[(i.k % MEMWORDS) as usize],
                        // 4 x the low nibble of a byte: the IPv4 header length.
                        MSH => match data.get(i.k as usize) {
                            Some(b) => u32::from(b & 0x0f) << 2,
                            None => return 0,
                        },
                        _ => return 0,
                    }
                }
                ST => mem[(i.k % MEMWORDS) as usize] = a,
                STX => mem[(i.k % MEMWORDS) as usize] = x,
                ALU => {
                    let v = if src(code) == X { x } else { i.k };
                    a = match op(code) {
                        ADD => a.wrapping_add(v),
                        SUB => a.wrapping_sub(v),
                        MUL => a.wrapping_mul(v),
                        DIV => match a.checked_div(v) {
                            Some(q) => q,
                            None => return 0,
                        },
                        MOD => match a.checked_rem(v) {
                            Some(r) => r,
                            None => return 0,
                        },
                        AND => a & v,
                        OR => a | v,
                        XOR => a ^ v,
                        LSH => a.checked_shl(v).unwrap_or(0),
                        RSH => a.checked_shr(v).unwrap_or(0),
                        NEG => a.wrapping_neg(),
                        _ => return 0,
                    }
                }
                JMP => {
                    let v = if src(code) == X { x } else { i.k };
                    let taken = match op(code) {
                        JA => {
                            pc += i.k as usize;
                            continue;
                        }
                        JEQ => a == v,
                        JGT => a > v,
                        JGE => a >= v,
                        JSET => a & v != 0,
                        _ => return 0,
                    };
                    pc += if taken { i.jt } else { i.jf } as usize;
                }
                _ => {
                    // MISC
                    if code == MISC | TAX {
                        x = a;
                    } else {
                        a = x;
                    }
                }
            }
        }
        0
    }

    /// Whether the packet matches (the program returns non-zero), as `tcpdump -r` decides.
    pub fn matches(&self, data: &[u8], wire_len: u32) -> bool {
        self.run(data, wire_len) != 0
    }
}

/// A big-endian load of 1, 2 or 4 bytes at `at`, or None past the captured bytes
/// (offsets are computed in 64 bits: X + k cannot wrap round to a small offset).
fn load(data: &[u8], at: u64, size: u16) -> Option<u32> {
    let n = match size {
        W => 4,
        H => 2,
        _ => 1,
    };
    let start = usize::try_from(at).ok()?;
    let b = data.get(start..start.checked_add(n)?)?;
    Some(b.iter().fold(0u32, |v, &x| (v << 8) | u32::from(x)))
}
