//! The ECN field of the IP header (RFC 3168 §5): the two low bits of the IPv4 TOS byte and
//! of the IPv6 Traffic Class. A sender that negotiated ECN marks its packets ECN-capable
//! (ECT(0) or ECT(1)); a router whose active queue management would drop such a packet
//! marks it Congestion Experienced (CE) instead (RFC 3168 §5, RFC 7567 §4.2.1), and the
//! receiver echoes the mark to the sender in TCP's ECE flag.

use crate::vocabulary;

vocabulary! {
    /// The ECN codepoint of an IP packet (RFC 3168 §5), declared in the order of its bits
    /// (00, 01, 10, 11) so that [`Ecn::from_bits`] is the declaration's index.
    #[derive(Default, PartialOrd, Ord)]
    pub enum Ecn {
        /// 00: Not ECN-Capable Transport.
        #[default]
        NotEct = "not-ect",
        /// 01: ECN-Capable Transport, ECT(1) (L4S senders use it: RFC 9331 §4).
        Ect1 = "ect1",
        /// 10: ECN-Capable Transport, ECT(0) (what RFC 3168 senders send).
        Ect0 = "ect0",
        /// 11: Congestion Experienced: a queue on the path marked the packet instead of
        /// dropping it.
        Ce = "ce",
    }
}

impl Ecn {
    /// The codepoint in the low two bits of `byte` (the TOS byte, or the Traffic Class).
    #[inline]
    pub const fn from_bits(byte: u8) -> Ecn {
        match byte & 0b11 {
            0 => Ecn::NotEct,
            1 => Ecn::Ect1,
            2 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    /// ECT(0) or ECT(1): sent by an ECN-capable transport and not marked on the way.
    pub fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect0 | Ecn::Ect1)
    }

    /// The inner header's codepoint after a tunnel's decapsulation (RFC 6040 §4.2, Figure
    /// 4), given the outer header's: what the tunnel's path did to the packet reaches the
    /// transport. An outer CE marks an ECN-capable inner packet CE (the congestion a
    /// router in the tunnel signalled); an outer ECT(1) turns an inner ECT(0) into ECT(1);
    /// an inner Not-ECT stays Not-ECT (RFC 6040 drops it when the outer header says CE:
    /// the transport cannot understand the mark, and the loss it sees is the signal).
    pub fn decapsulated(self, outer: Ecn) -> Ecn {
        match (self, outer) {
            (Ecn::NotEct, _) => Ecn::NotEct,
            (_, Ecn::Ce) | (Ecn::Ce, _) => Ecn::Ce,
            (_, Ecn::Ect1) | (Ecn::Ect1, _) => Ecn::Ect1,
            _ => Ecn::Ect0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Ecn;

    #[test]
    fn the_codepoint_is_the_low_two_bits_in_declaration_order() {
        for byte in 0..=255u8 {
            assert_eq!(Ecn::from_bits(byte), Ecn::ALL[(byte & 3) as usize]);
        }
        // A DSCP in the high six bits does not change it (EF = 46 << 2).
        assert_eq!(Ecn::from_bits(46 << 2 | 0b11), Ecn::Ce);
        assert_eq!(Ecn::from_bits(0x02), Ecn::Ect0);
        assert!(Ecn::Ect0.is_ect() && Ecn::Ect1.is_ect() && !Ecn::Ce.is_ect() && !Ecn::NotEct.is_ect());
    }

    #[test]
    fn decapsulation_follows_rfc_6040_figure_4() {
        use Ecn::*;
        // Rows: the arriving inner header; columns: the arriving outer header (Not-ECT,
        // ECT(0), ECT(1), CE). RFC 6040's "drop" (inner Not-ECT, outer CE) is Not-ECT here.
        let table = [
            (NotEct, [NotEct, NotEct, NotEct, NotEct]),
            (Ect0, [Ect0, Ect0, Ect1, Ce]),
            (Ect1, [Ect1, Ect1, Ect1, Ce]),
            (Ce, [Ce, Ce, Ce, Ce]),
        ];
        for (inner, row) in table {
            for (outer, want) in [NotEct, Ect0, Ect1, Ce].into_iter().zip(row) {
                assert_eq!(inner.decapsulated(outer), want, "inner {inner}, outer {outer}");
            }
        }
    }
}
