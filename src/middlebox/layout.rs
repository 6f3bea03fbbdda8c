//! The layout of a TCP option area beyond the parsed options: runs of NOPs.
//!
//! Middleboxes that remove an option from a SYN mostly overwrite it with NOPs instead of
//! rebuilding the header (Linux `xt_TCPOPTSTRIP`, the lab's delay line, firewalls' "clear
//! option"): the segment keeps its length and a run of NOPs sits where the option was.
//! Stacks use NOPs only to align options to 4 bytes — at most two in a row (Linux "NOP NOP
//! TS", "NOP NOP SACK-permitted", "NOP WS"; Windows and macOS alike; FreeBSD one) — so a
//! run of three or more is the fingerprint of an option that was overwritten, and its
//! length says which: window scale is 3 bytes (4 with its NOP), timestamps 10 (12 with
//! its NOPs), SACK-permitted 2 (indistinguishable from alignment), MSS 4.
//!
//! RFC 9293 §3.2: kind 1 (NOP) "may be used between options, for example, to align the
//! beginning of a subsequent option on a word boundary. There is no guarantee that
//! senders will use this option".

const EOL: u8 = 0;
const NOP: u8 = 1;

/// The longest run of NOP options in an option area (option bodies are skipped by their
/// length, so NOP-valued bytes inside them do not count). A malformed length ends the walk.
pub fn longest_nop_run(area: &[u8]) -> usize {
    let (mut best, mut run, mut i) = (0, 0, 0);
    while i < area.len() {
        match area[i] {
            EOL => break,
            NOP => {
                run += 1;
                best = best.max(run);
                i += 1;
            }
            _ => {
                run = 0;
                let Some(&len) = area.get(i + 1) else { break };
                if len < 2 {
                    break;
                }
                i += len as usize;
            }
        }
    }
    best
}

/// A NOP run long enough to be an overwritten option rather than alignment.
pub const SUSPICIOUS_RUN: usize = 3;

/// Which option a run of `n` NOPs most likely replaced.
pub fn overwritten_option(n: usize) -> Option<&'static str> {
    match n {
        0..=2 => None,
        3..=5 => Some("window scale (3 bytes, 4 with its NOP)"),
        6..=9 => Some("an option of 6-9 bytes (window scale with SACK-permitted, or MSS)"),
        _ => Some("timestamps (10 bytes, 12 with its NOPs)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_windows_and_macos_syns_have_short_runs() {
        // Linux: MSS, SACK-permitted, TS, NOP, WS
        let linux = [2, 4, 5, 180, 4, 2, 8, 10, 1, 1, 1, 1, 0, 0, 0, 0, 1, 3, 3, 7];
        assert_eq!(longest_nop_run(&linux), 1); // NOP-valued TS bytes are inside the option
                                                // Windows: MSS, NOP, WS, NOP, NOP, SACK-permitted
        let windows = [2, 4, 5, 180, 1, 3, 3, 8, 1, 1, 4, 2];
        assert_eq!(longest_nop_run(&windows), 2);
        // Linux without timestamps: MSS, NOP, NOP, SACK-permitted, NOP, WS
        let no_ts = [2, 4, 5, 180, 1, 1, 4, 2, 1, 3, 3, 7];
        assert_eq!(longest_nop_run(&no_ts), 2);
    }

    #[test]
    fn stripped_options_leave_runs() {
        // Linux SYN with window scale NOPed out: MSS, SACK-permitted, TS, NOP x4
        let ws = [2, 4, 5, 180, 4, 2, 8, 10, 0, 0, 0, 9, 0, 0, 0, 0, 1, 1, 1, 1];
        assert_eq!(longest_nop_run(&ws), 4);
        assert!(overwritten_option(4).unwrap().starts_with("window scale"));
        // timestamps NOPed out: MSS, SACK-permitted, NOP x10, NOP, WS
        let mut ts = vec![2, 4, 5, 180, 4, 2];
        ts.extend_from_slice(&[1; 11]);
        ts.extend_from_slice(&[3, 3, 7]);
        assert_eq!(longest_nop_run(&ts), 11);
        assert!(overwritten_option(11).unwrap().starts_with("timestamps"));
        assert_eq!(overwritten_option(2), None);
    }

    #[test]
    fn malformed_areas_end_the_walk() {
        assert_eq!(longest_nop_run(&[1, 1, 2, 0, 1, 1, 1]), 2);
        assert_eq!(longest_nop_run(&[1, 1, 1, 0, 1, 1, 1, 1]), 3);
        assert_eq!(longest_nop_run(&[]), 0);
    }
}
