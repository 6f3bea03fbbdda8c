//! Window scaling (RFC 7323 §2): the 16-bit window field is shifted left by the scale its
//! sender announced in its SYN — but only when BOTH the SYN and the SYN/ACK carried the
//! option, and never in SYN segments themselves.

use crate::decode::Seen;

/// What the capture tells about the shift one end applies to the windows it advertises.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum WindowScale {
    /// The handshake is not in the capture (or its options were cut off by the snaplen).
    #[default]
    Unknown,
    /// Scaling is off for the connection: one of the SYNs had no window-scale option.
    NotUsed,
    /// Scaling is on; the end's windows are shifted by this many bits (0..=14).
    Shift(u8),
    /// The handshake is missing; the shift was inferred from the sender's behaviour
    /// (`scale_infer.rs`) with enough confidence to scale windows by it.
    Inferred(u8),
}

impl WindowScale {
    /// The scale in force for windows advertised by an end whose SYN said `own` when the
    /// peer's SYN said `peer` (RFC 7323 §2.2: both must send the option).
    pub fn negotiate(own: Seen<u8>, peer: Seen<u8>) -> WindowScale {
        match (own, peer) {
            (Seen::Present(s), Seen::Present(_)) => WindowScale::Shift(s.min(14)),
            (Seen::Absent, _) | (_, Seen::Absent) => WindowScale::NotUsed,
            _ => WindowScale::Unknown,
        }
    }

    /// The shift to apply to a non-SYN segment's window, when known.
    pub fn shift(self) -> Option<u8> {
        match self {
            WindowScale::Unknown => None,
            WindowScale::NotUsed => Some(0),
            WindowScale::Shift(s) | WindowScale::Inferred(s) => Some(s),
        }
    }

    /// The advertised window in bytes. SYN segments are never scaled (RFC 7323 §2.2).
    #[inline]
    pub fn bytes(self, raw: u16, syn: bool) -> Option<u64> {
        if syn {
            return Some(raw as u64);
        }
        self.shift().map(|s| (raw as u64) << s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Seen::*;

    #[test]
    fn scaling_needs_both_syns() {
        assert_eq!(WindowScale::negotiate(Present(7), Present(2)), WindowScale::Shift(7));
        assert_eq!(WindowScale::negotiate(Present(7), Absent), WindowScale::NotUsed);
        assert_eq!(WindowScale::negotiate(Absent, Present(7)), WindowScale::NotUsed);
        assert_eq!(WindowScale::negotiate(Present(7), Unknown), WindowScale::Unknown);
        assert_eq!(WindowScale::negotiate(Unknown, Unknown), WindowScale::Unknown);
    }

    #[test]
    fn shift_is_clamped_to_14() {
        assert_eq!(WindowScale::negotiate(Present(15), Present(0)), WindowScale::Shift(14));
    }

    #[test]
    fn syn_windows_are_never_scaled() {
        let ws = WindowScale::Shift(7);
        assert_eq!(ws.bytes(100, true), Some(100));
        assert_eq!(ws.bytes(100, false), Some(12800));
        assert_eq!(WindowScale::NotUsed.bytes(100, false), Some(100));
        assert_eq!(WindowScale::Unknown.bytes(100, false), None);
        assert_eq!(WindowScale::Unknown.bytes(100, true), Some(100));
    }
}
