//! [`Program`]: a classic BPF program that passed the kernel's checks
//! (`bpf_check_classic` and `check_load_and_stores` in Linux's net/core/filter.c), so
//! that running it can neither loop, jump out of the program, divide by a constant zero,
//! shift by 32 or more, touch scratch memory out of range nor read a memory word before
//! writing it.

use super::insn::*;
use super::ProgramError;

/// A validated program (see the module docs). Built by [`Program::new`] or
/// [`Program::parse_ddd`]; run with [`Program::run`](Program::run).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    pub(super) insns: Vec<Insn>,
}

impl Program {
    /// Checks a program as the kernel does before attaching it to a socket.
    pub fn new(insns: Vec<Insn>) -> Result<Program, ProgramError> {
        check(&insns)?;
        Ok(Program { insns })
    }

    pub fn instructions(&self) -> &[Insn] {
        &self.insns
    }

    /// Parses `tcpdump -ddd` output (libpcap's `bpf_dump` with decimal numbers: the
    /// instruction count on the first line, then `code jt jf k` per line) and checks the
    /// program.
    pub fn parse_ddd(text: &str) -> Result<Program, ProgramError> {
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        let count: usize = lines
            .next()
            .ok_or_else(|| ProgramError::Parse("no instruction count".into()))?
            .parse()
            .map_err(|_| ProgramError::Parse("the first line is not an instruction count".into()))?;
        let mut insns = Vec::with_capacity(count.min(MAXINSNS));
        for (i, line) in lines.enumerate() {
            let f: Vec<&str> = line.split_whitespace().collect();
            let bad = || ProgramError::Parse(format!("instruction {i} is not `code jt jf k`: {line:?}"));
            if f.len() != 4 {
                return Err(bad());
            }
            insns.push(Insn {
                code: f[0].parse().map_err(|_| bad())?,
                jt: f[1].parse().map_err(|_| bad())?,
                jf: f[2].parse().map_err(|_| bad())?,
                k: f[3].parse().map_err(|_| bad())?,
            });
        }
        if insns.len() != count {
            return Err(ProgramError::Parse(format!(
                "{count} instructions announced, {} given",
                insns.len()
            )));
        }
        Program::new(insns)
    }
}

/// `bpf_check_classic`: a length within 1..=BPF_MAXINSNS, allowed opcodes only, constant
/// divisors non-zero, constant shifts below 32, memory words in range, jumps inside the
/// program (forward only: offsets are unsigned), known ancillary offsets only, a return
/// at the end; then `check_load_and_stores`.
fn check(p: &[Insn]) -> Result<(), ProgramError> {
    let n = p.len();
    if n == 0 || n > MAXINSNS {
        return Err(ProgramError::Length(n));
    }
    for (pc, i) in p.iter().enumerate() {
        let bad = |why: &str| {
            Err(ProgramError::Invalid {
                pc,
                why: why.to_string(),
            })
        };
        if !allowed(i.code) {
            return bad(&format!("opcode {:#06x} is not a classic BPF instruction", i.code));
        }
        let code = i.code;
        if code == ALU | DIV | K || code == ALU | MOD | K {
            if i.k == 0 {
                return bad("division by a constant zero");
            }
        } else if code == ALU | LSH | K || code == ALU | RSH | K {
            if i.k >= 32 {
                return bad("shift by 32 or more");
            }
        } else if code == LD | MEM || code == LDX | MEM || code == ST || code == STX {
            if i.k >= MEMWORDS {
                return bad("scratch memory word out of range");
            }
        } else if code == JMP | JA {
            // The kernel's test, in unsigned arithmetic: a "negative" k is huge.
            if i.k as usize >= n - pc - 1 {
                return bad("jump past the end");
            }
        } else if is_conditional(code) {
            if pc + i.jt as usize + 1 >= n || pc + i.jf as usize + 1 >= n {
                return bad("conditional jump past the end");
            }
        } else if (code == LD | W | ABS || code == LD | H | ABS || code == LD | B | ABS)
            && i.k >= SKF_AD_OFF
            && !SKF_AD_KNOWN.contains(&(i.k - SKF_AD_OFF))
        {
            return bad("unknown ancillary data offset");
        }
    }
    let last = p[n - 1].code;
    if last != RET | K && last != RET | RET_A {
        return Err(ProgramError::Invalid {
            pc: n - 1,
            why: "the last instruction is not a return".into(),
        });
    }
    check_load_and_stores(p)
}

/// Every scratch-memory load reads a word stored on every path to it. Jumps only go
/// forward, so one pass suffices: `masks[pc]` is the words valid on every jump into `pc`.
fn check_load_and_stores(p: &[Insn]) -> Result<(), ProgramError> {
    let mut masks = vec![u16::MAX; p.len()];
    let mut valid: u16 = 0;
    for (pc, i) in p.iter().enumerate() {
        valid &= masks[pc];
        let code = i.code;
        if code == ST || code == STX {
            valid |= 1 << i.k;
        } else if code == LD | MEM || code == LDX | MEM {
            if valid & (1 << i.k) == 0 {
                return Err(ProgramError::Invalid {
                    pc,
                    why: format!("scratch memory word {} is read before it is written", i.k),
                });
            }
        } else if code == JMP | JA {
            masks[pc + 1 + i.k as usize] &= valid;
            valid = u16::MAX;
        } else if is_conditional(code) {
            masks[pc + 1 + i.jt as usize] &= valid;
            masks[pc + 1 + i.jf as usize] &= valid;
            valid = u16::MAX;
        }
    }
    Ok(())
}
