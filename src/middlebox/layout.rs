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

pub use crate::decode::longest_nop_run;

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

/// The timestamps option itself (kind, length, two 4-byte values); 12 with the two NOPs
/// stacks put before it, which the run may or may not include.
const TS_BYTES: usize = 10;
/// The window-scale option; with the NOP before it, 4.
const WS_BYTES: usize = 3;

/// What a handshake segment's NOP run says a middlebox overwrote before the capture point,
/// counting only options the segment lacks: the run holds their bytes (timestamps 10,
/// window scale 3), beside at most two alignment NOPs. `ws_alone` is false when an absent
/// MSS (4 bytes) could explain the same run as well as window scale could.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overwritten {
    pub timestamps: bool,
    pub wscale: bool,
    pub ws_alone: bool,
}

pub fn overwritten(o: &crate::tcp::SynOptions) -> Overwritten {
    use crate::decode::Seen;
    let run = o.nop_run as usize;
    if run < SUSPICIOUS_RUN {
        return Overwritten::default();
    }
    // Absent, not cut off by the snaplen: an unknown option may be there.
    let timestamps = o.timestamps == Seen::Absent && run >= TS_BYTES;
    let rest = if timestamps { run - TS_BYTES } else { run };
    let wscale = o.wscale == Seen::Absent && rest >= WS_BYTES;
    Overwritten {
        timestamps,
        wscale,
        // An MSS option (4 bytes) beside two alignment NOPs: 6.
        ws_alone: wscale && !(o.mss == Seen::Absent && rest <= 6),
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
