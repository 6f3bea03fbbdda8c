//! The longest run of NOP options in an option area: the fingerprint a middlebox leaves
//! when it overwrites an option instead of rebuilding the header (what such a run means is
//! `middlebox::layout`'s). Measured here, at decode, because only the decoder has the
//! option bytes: the tracker keeps the parsed options, and only those of SYNs need it.

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
