//! The checker and the interpreter: every opcode by hand, the edges (division by zero,
//! loads past the captured bytes, jumps, scratch memory), the `-ddd` parser, and random
//! programs run against a second interpreter written the way libpcap's bpf_filter.c is
//! (one case per full opcode) instead of by opcode fields.

use super::insn::*;
use super::{Insn, Program, ProgramError};
use proptest::prelude::*;

fn prog(insns: &[(u16, u8, u8, u32)]) -> Program {
    Program::new(insns.iter().map(|&(c, t, f, k)| Insn::new(c, t, f, k)).collect()).expect("valid")
}

fn refused(insns: &[(u16, u8, u8, u32)]) -> ProgramError {
    Program::new(insns.iter().map(|&(c, t, f, k)| Insn::new(c, t, f, k)).collect()).expect_err("refused")
}

/// A: the value under test, returned.
fn ret_a() -> (u16, u8, u8, u32) {
    (RET | RET_A, 0, 0, 0)
}

const PKT: [u8; 8] = [0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0];

#[test]
fn loads_read_big_endian_and_fail_past_the_captured_bytes() {
    let p = |code, k| prog(&[(code, 0, 0, k), ret_a()]);
    assert_eq!(p(LD | W | ABS, 0).run(&PKT, 100), 0x1234_5678);
    assert_eq!(p(LD | H | ABS, 6).run(&PKT, 100), 0xdef0);
    assert_eq!(p(LD | B | ABS, 7).run(&PKT, 100), 0xf0);
    // One byte short: no match, whatever the wire length says.
    assert_eq!(p(LD | W | ABS, 5).run(&PKT, 100), 0);
    assert_eq!(p(LD | H | ABS, 7).run(&PKT, 100), 0);
    assert_eq!(p(LD | B | ABS, 8).run(&PKT, 100), 0);
    assert_eq!(p(LD | W | ABS, 0x7fff_ffff).run(&PKT, 100), 0);
    assert_eq!(p(LD | W | LEN, 0).run(&PKT, 1514), 1514);
    assert_eq!(p(LD | IMM, 77).run(&PKT, 0), 77);
    // Ancillary data: a file has none, so the packet does not match (libpcap offline).
    assert_eq!(p(LD | B | ABS, SKF_AD_OFF + 44).run(&PKT, 100), 0);
}

#[test]
fn indirect_loads_add_x_without_wrapping() {
    let p = |code, x, k| prog(&[(LDX | IMM, 0, 0, x), (code, 0, 0, k), ret_a()]);
    assert_eq!(p(LD | W | IND, 2, 2).run(&PKT, 0), 0x9abc_def0);
    assert_eq!(p(LD | H | IND, 1, 0).run(&PKT, 0), 0x3456);
    assert_eq!(p(LD | B | IND, 3, 4).run(&PKT, 0), 0xf0);
    assert_eq!(p(LD | B | IND, 4, 4).run(&PKT, 0), 0);
    // X + k past 2^32 would be 1 in 32-bit arithmetic: it is past the packet.
    assert_eq!(p(LD | B | IND, u32::MAX, 2).run(&PKT, 0), 0);
}

#[test]
fn ldx_msh_takes_the_ip_header_length() {
    let ip = [0x45u8, 0, 0, 0];
    let p = prog(&[(LDX | B | MSH, 0, 0, 0), (MISC | TXA, 0, 0, 0), ret_a()]);
    assert_eq!(p.run(&ip, 0), 20);
    let p = prog(&[(LDX | B | MSH, 0, 0, 4), (MISC | TXA, 0, 0, 0), ret_a()]);
    assert_eq!(p.run(&ip, 0), 0, "past the end");
    let p = prog(&[(LDX | W | LEN, 0, 0, 0), (MISC | TXA, 0, 0, 0), ret_a()]);
    assert_eq!(p.run(&ip, 60), 60);
}

#[test]
fn alu_operations_wrap_at_32_bits() {
    let with_k = |op, a, k| prog(&[(LD | IMM, 0, 0, a), (ALU | op | K, 0, 0, k), ret_a()]).run(&[], 0);
    let with_x = |op, a, x| {
        prog(&[
            (LD | IMM, 0, 0, a),
            (LDX | IMM, 0, 0, x),
            (ALU | op | X, 0, 0, 0),
            ret_a(),
        ])
        .run(&[], 0)
    };
    for f in [with_k, with_x] {
        assert_eq!(f(ADD, u32::MAX, 2), 1);
        assert_eq!(f(SUB, 1, 2), u32::MAX);
        assert_eq!(f(MUL, 0x8000_0000, 2), 0);
        assert_eq!(f(DIV, 7, 2), 3);
        assert_eq!(f(MOD, 7, 4), 3);
        assert_eq!(f(AND, 0b1100, 0b1010), 0b1000);
        assert_eq!(f(OR, 0b1100, 0b1010), 0b1110);
        assert_eq!(f(XOR, 0b1100, 0b1010), 0b0110);
        assert_eq!(f(LSH, 1, 31), 0x8000_0000);
        assert_eq!(f(RSH, 0x8000_0000, 31), 1);
    }
    let neg = prog(&[(LD | IMM, 0, 0, 5), (ALU | NEG, 0, 0, 0), ret_a()]);
    assert_eq!(neg.run(&[], 0), 5u32.wrapping_neg());
}

#[test]
fn division_by_x_zero_and_wide_shifts_follow_libpcap() {
    let run = |op, x| {
        prog(&[
            (LD | IMM, 0, 0, 9),
            (LDX | IMM, 0, 0, x),
            (ALU | op | X, 0, 0, 0),
            (RET | K, 0, 0, 1),
        ])
        .run(&[], 0)
    };
    assert_eq!(run(DIV, 0), 0, "A / 0 ends the program: no match");
    assert_eq!(run(MOD, 0), 0, "A % 0 ends the program: no match");
    assert_eq!(run(DIV, 3), 1);
    let shift = |op, x| {
        prog(&[
            (LD | IMM, 0, 0, u32::MAX),
            (LDX | IMM, 0, 0, x),
            (ALU | op | X, 0, 0, 0),
            ret_a(),
        ])
        .run(&[], 0)
    };
    assert_eq!(shift(LSH, 32), 0);
    assert_eq!(shift(RSH, 1000), 0);
    assert_eq!(shift(RSH, 4), 0x0fff_ffff);
}

#[test]
fn constant_divisors_shifts_and_memory_are_checked() {
    assert!(matches!(
        refused(&[(ALU | DIV | K, 0, 0, 0), ret_a()]),
        ProgramError::Invalid { pc: 0, .. }
    ));
    assert!(matches!(
        refused(&[(ALU | MOD | K, 0, 0, 0), ret_a()]),
        ProgramError::Invalid { pc: 0, .. }
    ));
    assert!(matches!(
        refused(&[(ALU | LSH | K, 0, 0, 32), ret_a()]),
        ProgramError::Invalid { .. }
    ));
    assert!(matches!(
        refused(&[(ALU | RSH | K, 0, 0, 40), ret_a()]),
        ProgramError::Invalid { .. }
    ));
    assert!(matches!(
        refused(&[(ST, 0, 0, 16), ret_a()]),
        ProgramError::Invalid { .. }
    ));
    assert!(
        matches!(refused(&[(LD | MEM, 0, 0, 3), ret_a()]), ProgramError::Invalid { .. }),
        "read before write"
    );
    assert!(matches!(
        refused(&[(LD | B | ABS, 0, 0, SKF_AD_OFF + 2), ret_a()]),
        ProgramError::Invalid { .. }
    ));
    assert!(
        matches!(refused(&[(0x0e, 0, 0, 0)]), ProgramError::Invalid { .. }),
        "RET | X"
    );
    assert!(
        matches!(
            refused(&[(LD | H | IMM, 0, 0, 0), ret_a()]),
            ProgramError::Invalid { .. }
        ),
        "unused bits"
    );
    assert!(
        matches!(refused(&[(LD | IMM, 0, 0, 1)]), ProgramError::Invalid { .. }),
        "no return at the end"
    );
    assert_eq!(refused(&[]), ProgramError::Length(0));
    let long = vec![(LD | IMM, 0, 0, 0); MAXINSNS + 1];
    assert_eq!(refused(&long), ProgramError::Length(MAXINSNS + 1));
}

#[test]
fn scratch_memory_round_trips_and_must_be_written_on_every_path() {
    let p = prog(&[
        (LD | IMM, 0, 0, 41),
        (ST, 0, 0, 15),
        (LDX | MEM, 0, 0, 15),
        (MISC | TXA, 0, 0, 0),
        (ALU | ADD | K, 0, 0, 1),
        (STX, 0, 0, 1),
        (ST, 0, 0, 0),
        (LDX | MEM, 0, 0, 1),
        (ALU | ADD | X, 0, 0, 0),
        ret_a(),
    ]);
    assert_eq!(p.run(&[], 0), 42 + 41);
    // Word 0 is written only when the jump is not taken: reading it after is refused.
    let e = refused(&[(JMP | JEQ | K, 1, 0, 0), (ST, 0, 0, 0), (LD | MEM, 0, 0, 0), ret_a()]);
    assert!(matches!(e, ProgramError::Invalid { pc: 2, .. }), "{e}");
    // Written on both paths: accepted.
    prog(&[
        (JMP | JEQ | K, 1, 0, 0),
        (ST, 0, 0, 0),
        (ST, 0, 0, 0),
        (LD | MEM, 0, 0, 0),
        ret_a(),
    ]);
}

#[test]
fn jumps_go_forward_inside_the_program() {
    // A == 5: jt, else jf; each target returns its own number.
    let p = |code, k, a| {
        prog(&[
            (LD | IMM, 0, 0, a),
            (code, 1, 0, k),
            (RET | K, 0, 0, 100),
            (RET | K, 0, 0, 200),
        ])
        .run(&[], 0)
    };
    assert_eq!(p(JMP | JEQ | K, 5, 5), 200);
    assert_eq!(p(JMP | JEQ | K, 5, 6), 100);
    assert_eq!(p(JMP | JGT | K, 5, 6), 200);
    assert_eq!(p(JMP | JGT | K, 5, 5), 100);
    assert_eq!(p(JMP | JGE | K, 5, 5), 200);
    assert_eq!(p(JMP | JGE | K, 5, 4), 100);
    assert_eq!(p(JMP | JSET | K, 4, 6), 200);
    assert_eq!(p(JMP | JSET | K, 1, 6), 100);
    let px = |code, x, a| {
        prog(&[
            (LD | IMM, 0, 0, a),
            (LDX | IMM, 0, 0, x),
            (code, 1, 0, 0),
            (RET | K, 0, 0, 100),
            (RET | K, 0, 0, 200),
        ])
        .run(&[], 0)
    };
    assert_eq!(px(JMP | JEQ | X, 5, 5), 200);
    assert_eq!(px(JMP | JGT | X, 5, 5), 100);
    assert_eq!(px(JMP | JGE | X, 5, 5), 200);
    assert_eq!(px(JMP | JSET | X, 2, 5), 100);
    let ja = prog(&[(JMP | JA, 0, 0, 1), (RET | K, 0, 0, 1), (RET | K, 0, 0, 2)]);
    assert_eq!(ja.run(&[], 0), 2);
    // Out of the program, and "backwards" (k read as unsigned is huge): refused.
    assert!(matches!(
        refused(&[(JMP | JA, 0, 0, 1), (RET | K, 0, 0, 1)]),
        ProgramError::Invalid { .. }
    ));
    assert!(matches!(
        refused(&[(JMP | JA, 0, 0, u32::MAX), (RET | K, 0, 0, 1)]),
        ProgramError::Invalid { .. }
    ));
    assert!(matches!(
        refused(&[(JMP | JEQ | K, 0, 1, 0), (RET | K, 0, 0, 1)]),
        ProgramError::Invalid { .. }
    ));
    assert!(matches!(
        refused(&[(JMP | JEQ | K, 1, 0, 0), (RET | K, 0, 0, 1)]),
        ProgramError::Invalid { .. }
    ));
}

#[test]
fn tax_txa_and_returns() {
    let p = prog(&[
        (LD | IMM, 0, 0, 9),
        (MISC | TAX, 0, 0, 0),
        (LD | IMM, 0, 0, 0),
        (MISC | TXA, 0, 0, 0),
        ret_a(),
    ]);
    assert_eq!(p.run(&[], 0), 9);
    assert_eq!(prog(&[(RET | K, 0, 0, 262_144)]).run(&[], 0), 262_144);
    assert!(!prog(&[(RET | K, 0, 0, 0)]).matches(&[], 0));
}

#[test]
fn tcpdump_ddd_output_parses() {
    // `tcpdump -y EN10MB -ddd ip` (libpcap 1.10).
    let p = Program::parse_ddd("4\n40 0 0 12\n21 0 1 2048\n6 0 0 262144\n6 0 0 0\n").unwrap();
    assert_eq!(p.instructions().len(), 4);
    let mut ipv4 = [0u8; 20];
    ipv4[12] = 0x08;
    assert!(p.matches(&ipv4, 60));
    ipv4[13] = 0xdd;
    assert!(!p.matches(&ipv4, 60));
    assert!(matches!(Program::parse_ddd(""), Err(ProgramError::Parse(_))));
    assert!(matches!(
        Program::parse_ddd("2\n6 0 0 1\n"),
        Err(ProgramError::Parse(_))
    ));
    assert!(matches!(Program::parse_ddd("1\n6 0 0\n"), Err(ProgramError::Parse(_))));
    assert!(matches!(
        Program::parse_ddd("1\n6 0 300 1\n"),
        Err(ProgramError::Parse(_))
    ));
    assert!(matches!(
        Program::parse_ddd("1\n40 0 0 12\n"),
        Err(ProgramError::Invalid { .. })
    ));
}

/// libpcap's bpf_filter.c, case by case on the full opcode (written from it, not from
/// the interpreter under test).
fn reference(p: &[Insn], pkt: &[u8], wirelen: u32) -> u32 {
    let (mut a, mut x, mut mem, mut pc) = (0u32, 0u32, [0u32; 16], 0usize);
    let buflen = pkt.len() as u64;
    let ld = |k: u64, n: u64| -> Option<u32> {
        if k > buflen || n > buflen - k {
            return None;
        }
        Some((0..n).fold(0u32, |v, j| (v << 8) | pkt[(k + j) as usize] as u32))
    };
    loop {
        let i = p[pc];
        let k = i.k;
        match i.code {
            0x06 => return k,
            0x16 => return a,
            0x20 => {
                a = match ld(k as u64, 4) {
                    Some(v) => v,
                    None => return 0,
                }
            }
            0x28 => {
                a = match ld(k as u64, 2) {
                    Some(v) => v,
                    None => return 0,
                }
            }
            0x30 => {
                a = match ld(k as u64, 1) {
                    Some(v) => v,
                    None => return 0,
                }
            }
            0x80 => a = wirelen,
            0x81 => x = wirelen,
            0x40 => {
                a = match ld(x as u64 + k as u64, 4) {
                    Some(v) => v,
                    None => return 0,
                }
            }
            0x48 => {
                a = match ld(x as u64 + k as u64, 2) {
                    Some(v) => v,
                    None => return 0,
                }
            }
            0x50 => {
                a = match ld(x as u64 + k as u64, 1) {
                    Some(v) => v,
                    None => return 0,
                }
            }
            0xb1 => {
                x = match ld(k as u64, 1) {
                    Some(v) => (v & 0xf) << 2,
                    None => return 0,
                }
            }
            0x00 => a = k,
            0x01 => x = k,
            0x60 => a = mem[k as usize],
            0x61 => x = mem[k as usize],
            0x02 => mem[k as usize] = a,
            0x03 => mem[k as usize] = x,
            0x05 => pc += k as usize,
            0x25 => pc += if a > k { i.jt } else { i.jf } as usize,
            0x35 => pc += if a >= k { i.jt } else { i.jf } as usize,
            0x15 => pc += if a == k { i.jt } else { i.jf } as usize,
            0x45 => pc += if a & k != 0 { i.jt } else { i.jf } as usize,
            0x2d => pc += if a > x { i.jt } else { i.jf } as usize,
            0x3d => pc += if a >= x { i.jt } else { i.jf } as usize,
            0x1d => pc += if a == x { i.jt } else { i.jf } as usize,
            0x4d => pc += if a & x != 0 { i.jt } else { i.jf } as usize,
            0x0c => a = a.wrapping_add(x),
            0x1c => a = a.wrapping_sub(x),
            0x2c => a = a.wrapping_mul(x),
            0x3c => {
                if x == 0 {
                    return 0;
                }
                a /= x
            }
            0x9c => {
                if x == 0 {
                    return 0;
                }
                a %= x
            }
            0x5c => a &= x,
            0x4c => a |= x,
            0xac => a ^= x,
            0x6c => a = if x < 32 { a << x } else { 0 },
            0x7c => a = if x < 32 { a >> x } else { 0 },
            0x04 => a = a.wrapping_add(k),
            0x14 => a = a.wrapping_sub(k),
            0x24 => a = a.wrapping_mul(k),
            0x34 => a /= k,
            0x94 => a %= k,
            0x54 => a &= k,
            0x44 => a |= k,
            0xa4 => a ^= k,
            0x64 => a <<= k,
            0x74 => a >>= k,
            0x84 => a = a.wrapping_neg(),
            0x07 => x = a,
            0x87 => a = x,
            c => panic!("reference: opcode {c:#x} not allowed"),
        }
        pc += 1;
    }
}

const CODES: [u16; 49] = [
    0x06, 0x16, 0x20, 0x28, 0x30, 0x80, 0x81, 0x40, 0x48, 0x50, 0xb1, 0x00, 0x01, 0x60, 0x61, 0x02, 0x03, 0x05, 0x25,
    0x35, 0x15, 0x45, 0x2d, 0x3d, 0x1d, 0x4d, 0x0c, 0x1c, 0x2c, 0x3c, 0x9c, 0x5c, 0x4c, 0xac, 0x6c, 0x7c, 0x04, 0x14,
    0x24, 0x34, 0x94, 0x54, 0x44, 0xa4, 0x64, 0x74, 0x84, 0x07, 0x87,
];

fn arb_insn() -> impl Strategy<Value = Insn> {
    (
        prop::sample::select(&CODES[..]),
        0u8..6,
        0u8..6,
        prop_oneof![0u32..40, 0u32..16, any::<u32>(), Just(SKF_AD_OFF + 44)],
    )
        .prop_map(|(code, jt, jf, k)| Insn::new(code, jt, jf, k))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    /// Random programs: the checker never panics; every program it accepts runs to an
    /// end without panicking and gives libpcap's result.
    #[test]
    fn accepted_programs_run_as_libpcap_runs_them(
        body in prop::collection::vec(arb_insn(), 0..24),
        init_mem in any::<bool>(),
        pkt in prop::collection::vec(any::<u8>(), 0..48),
        wirelen in 0u32..3000,
    ) {
        let mut insns = Vec::new();
        if init_mem {
            // Store every word first so memory loads pass the check more often.
            insns.extend((0..16).map(|w| Insn::new(ST, 0, 0, w)));
        }
        insns.extend(body);
        insns.push(Insn::new(RET | RET_A, 0, 0, 0));
        // Most random jumps would leave the program: fold them back inside it, so that
        // most programs are accepted and run (the checker's refusals are tested above).
        let n = insns.len();
        for (pc, i) in insns.iter_mut().enumerate() {
            let room = (n - pc - 1).max(1);
            if is_conditional(i.code) {
                i.jt = (i.jt as usize % room) as u8;
                i.jf = (i.jf as usize % room) as u8;
            } else if i.code == JMP | JA {
                i.k %= room as u32;
            }
        }
        if let Ok(p) = Program::new(insns.clone()) {
            prop_assert_eq!(p.run(&pkt, wirelen), reference(&insns, &pkt, wirelen));
        }
    }

    /// Anything at all: the checker and (on what it accepts) the interpreter never panic.
    #[test]
    fn arbitrary_words_never_panic(
        raw in prop::collection::vec((any::<u16>(), any::<u8>(), any::<u8>(), any::<u32>()), 0..40),
        pkt in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let insns: Vec<Insn> = raw.into_iter().map(|(c, t, f, k)| Insn::new(c, t, f, k)).collect();
        if let Ok(p) = Program::new(insns) {
            let _ = p.run(&pkt, pkt.len() as u32);
        }
    }
}
