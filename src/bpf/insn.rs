//! One classic BPF instruction and the fields of its opcode, as `<linux/filter.h>` and
//! libpcap's `pcap/bpf.h` define them (McCanne & Jacobson, "The BSD Packet Filter", 1993).

/// `struct sock_filter` / `struct bpf_insn`: a 16-bit opcode, two 8-bit forward jump
/// offsets (taken when the condition holds / does not) and a 32-bit operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Insn {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

impl Insn {
    pub const fn new(code: u16, jt: u8, jf: u8, k: u32) -> Insn {
        Insn { code, jt, jf, k }
    }
}

// Instruction classes: `code & 0x07`.
pub const LD: u16 = 0x00;
pub const LDX: u16 = 0x01;
pub const ST: u16 = 0x02;
pub const STX: u16 = 0x03;
pub const ALU: u16 = 0x04;
pub const JMP: u16 = 0x05;
pub const RET: u16 = 0x06;
pub const MISC: u16 = 0x07;

// Load sizes: `code & 0x18`.
pub const W: u16 = 0x00;
pub const H: u16 = 0x08;
pub const B: u16 = 0x10;

// Load modes: `code & 0xe0`.
pub const IMM: u16 = 0x00;
pub const ABS: u16 = 0x20;
pub const IND: u16 = 0x40;
pub const MEM: u16 = 0x60;
pub const LEN: u16 = 0x80;
pub const MSH: u16 = 0xa0;

// ALU operations: `code & 0xf0`.
pub const ADD: u16 = 0x00;
pub const SUB: u16 = 0x10;
pub const MUL: u16 = 0x20;
pub const DIV: u16 = 0x30;
pub const OR: u16 = 0x40;
pub const AND: u16 = 0x50;
pub const LSH: u16 = 0x60;
pub const RSH: u16 = 0x70;
pub const NEG: u16 = 0x80;
pub const MOD: u16 = 0x90;
pub const XOR: u16 = 0xa0;

// Jumps: `code & 0xf0`.
pub const JA: u16 = 0x00;
pub const JEQ: u16 = 0x10;
pub const JGT: u16 = 0x20;
pub const JGE: u16 = 0x30;
pub const JSET: u16 = 0x40;

// Operand source of ALU and jumps: `code & 0x08`.
pub const K: u16 = 0x00;
pub const X: u16 = 0x08;

// Return value: `code & 0x18` (RET | X exists in the headers; neither the kernel nor
// libpcap runs it).
pub const RET_A: u16 = 0x10;

// MISC: `code & 0xf8`.
pub const TAX: u16 = 0x00;
pub const TXA: u16 = 0x80;

/// Scratch memory words (`BPF_MEMWORDS`).
pub const MEMWORDS: u32 = 16;
/// Longest program the kernel accepts (`BPF_MAXINSNS`).
pub const MAXINSNS: usize = 4096;

/// Linux ancillary data (`SKF_AD_OFF` + offset): loads at these offsets read socket
/// metadata in the kernel. A capture file carries none, so libpcap's offline filter
/// (`pcap_filter` without aux data) rejects the packet when one is executed, as it does
/// for any load past the captured bytes.
pub const SKF_AD_OFF: u32 = 0xffff_f000;
/// The ancillary offsets the kernel knows (`SKF_AD_PROTOCOL` .. `SKF_AD_VLAN_TPID`).
pub const SKF_AD_KNOWN: [u32; 16] = [0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60];

pub const fn class(code: u16) -> u16 {
    code & 0x07
}
pub const fn size(code: u16) -> u16 {
    code & 0x18
}
pub const fn mode(code: u16) -> u16 {
    code & 0xe0
}
pub const fn op(code: u16) -> u16 {
    code & 0xf0
}
pub const fn src(code: u16) -> u16 {
    code & 0x08
}

/// Whether the kernel's `chk_code_allowed` lets this opcode through: every opcode the
/// interpreter runs, and nothing else (exact codes: unused bits must be zero).
pub fn allowed(code: u16) -> bool {
    const ALU_OPS: [u16; 10] = [ADD, SUB, MUL, DIV, MOD, AND, OR, XOR, LSH, RSH];
    const JUMPS: [u16; 4] = [JEQ, JGT, JGE, JSET];
    if ALU_OPS.iter().any(|&o| code == ALU | o | K || code == ALU | o | X) {
        return true;
    }
    if JUMPS.iter().any(|&j| code == JMP | j | K || code == JMP | j | X) {
        return true;
    }
    matches!(
        code,
        c if c == ALU | NEG
            || c == LD | W | ABS
            || c == LD | H | ABS
            || c == LD | B | ABS
            || c == LD | W | LEN
            || c == LD | W | IND
            || c == LD | H | IND
            || c == LD | B | IND
            || c == LD | IMM
            || c == LD | MEM
            || c == LDX | W | LEN
            || c == LDX | B | MSH
            || c == LDX | IMM
            || c == LDX | MEM
            || c == ST
            || c == STX
            || c == MISC | TAX
            || c == MISC | TXA
            || c == RET | K
            || c == RET | RET_A
            || c == JMP | JA
    )
}

/// A conditional jump (JEQ, JGT, JGE, JSET with K or X).
pub fn is_conditional(code: u16) -> bool {
    class(code) == JMP && op(code) != JA
}
