//! ECN as a connection shows it: what each end's SYN said and what the handshake set up
//! (RFC 3168 §6.1.1; Accurate ECN, RFC 9768 §3.1), and per direction the codepoints its
//! segments carried, the CE marks among them, the ECE echoes its receiver sent back and
//! the CWR its sender set (RFC 3168 §6.1.2-6.1.3). Counters and a few instants: constant
//! memory, nothing per packet.

use crate::decode::{Ecn, Segment, TcpFlags};
use crate::summary::{EcnMode, EcnOffer};
use crate::time::Timestamp;

/// The ECN bits of a SYN or SYN/ACK as RFC 9768's tables write them: AE, CWR, ECE (bit 2,
/// 1, 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SetupFlags(pub u8);

impl SetupFlags {
    const AE: u8 = 0b100;
    const CWR: u8 = 0b010;
    const ECE: u8 = 0b001;

    pub fn of(seg: &Segment) -> SetupFlags {
        let bit = |on: bool, b: u8| if on { b } else { 0 };
        SetupFlags(
            bit(seg.ae, Self::AE)
                | bit(seg.flags.has(TcpFlags::CWR), Self::CWR)
                | bit(seg.flags.has(TcpFlags::ECE), Self::ECE),
        )
    }

    /// What a SYN asks for: an ECN-setup SYN has ECE and CWR set (RFC 3168 §6.1.1), an
    /// AccECN SYN AE as well (RFC 9768 §3.1.1); any other SYN is no request.
    pub fn syn_offer(self) -> EcnOffer {
        match self.0 {
            0b111 => EcnOffer::AccEcn,
            0b011 => EcnOffer::Rfc3168,
            _ => EcnOffer::No,
        }
    }

    /// What a SYN/ACK answers (RFC 9768 §3.1.2, Table 2): ECE alone is RFC 3168's
    /// ECN-setup SYN-ACK (§6.1.1: ECE set, CWR clear); the AccECN answers feed the SYN's
    /// codepoint back in (AE, CWR, ECE) = 010, 011, 100, 110, and the reserved 101 counts
    /// as AccECN too (§3.1.3, forward compatibility); none, or all three (a middlebox
    /// reflecting the SYN's flags, "broken"), is no ECN.
    pub fn syn_ack_answer(self) -> EcnOffer {
        match self.0 {
            Self::ECE => EcnOffer::Rfc3168,
            0b000 | 0b111 => EcnOffer::No,
            _ => EcnOffer::AccEcn,
        }
    }
}

/// What the handshake set up, from the last SYN and the last SYN/ACK seen (a client
/// retransmits its SYN without the ECN flags after a timeout, RFC 3168 §6.1.1.1, and the
/// last is the one that counts).
///
/// - No ECN-setup SYN, or no ECN-setup answer: off. A host sends ECT only after it has
///   sent and received an ECN-setup SYN or SYN-ACK (RFC 3168 §6.1.1).
/// - An AccECN SYN answered in AccECN: AccECN; answered with ECE alone: RFC 3168 (RFC
///   9768 §3.1.2: the client falls back to classic ECN).
/// - An RFC 3168 SYN answered in AccECN's codes (CWR set, or AE) got no ECN-setup SYN-ACK
///   as RFC 3168 defines it: off.
/// - The SYN/ACK alone: a server answers ECN only to a SYN that asked (RFC 3168 §6.1.1,
///   RFC 9768 §3.1.2), so its answer is what was set up. The SYN alone: unknown, unless
///   it did not ask.
pub fn negotiate(syn: Option<SetupFlags>, syn_ack: Option<SetupFlags>) -> EcnMode {
    let offer = syn.map(SetupFlags::syn_offer);
    let answer = syn_ack.map(SetupFlags::syn_ack_answer);
    match (offer, answer) {
        (Some(EcnOffer::No), _) | (_, Some(EcnOffer::No)) => EcnMode::Off,
        (Some(EcnOffer::AccEcn) | None, Some(EcnOffer::AccEcn)) => EcnMode::AccEcn,
        (_, Some(EcnOffer::Rfc3168)) => EcnMode::Rfc3168,
        (Some(EcnOffer::Rfc3168), Some(EcnOffer::AccEcn)) => EcnMode::Off,
        (_, None) => EcnMode::Unknown,
    }
}

/// Whether ECE and CWR are RFC 3168's signals under `mode`: the handshake set up RFC 3168,
/// or is not in the capture to say otherwise. Under AccECN they are bits of the ACE counter
/// (RFC 9768 §3.2.2), and where the handshake turned ECN off they mean nothing (RFC 3168
/// §6.1.1: no host sends them).
pub fn flags_signal(mode: EcnMode) -> bool {
    matches!(mode, EcnMode::Rfc3168 | EcnMode::Unknown)
}

/// A moment of the capture: the record's number and its time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    pub frame: u64,
    pub ts: Timestamp,
}

/// The first and the last of a kind of event, and how many there were.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Events {
    pub count: u64,
    pub first: Option<Mark>,
    pub last: Option<Mark>,
}

impl Events {
    #[inline]
    fn on(&mut self, frame: u64, ts: Timestamp) {
        self.count += 1;
        let m = Mark { frame, ts };
        self.first.get_or_insert(m);
        self.last = Some(m);
    }
}

/// ECN of one direction of a connection, as the capture point saw it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EcnCounts {
    /// Segments of this direction sent ECN-capable and unmarked when they passed here.
    pub ect0: u64,
    pub ect1: u64,
    /// Segments of this direction marked CE before they passed here: a queue between the
    /// sender and the capture point found itself congested (RFC 3168 §5). Beyond the
    /// capture point the marks are not seen, only their echoes.
    pub ce: Events,
    /// ACKs of this direction's data carrying ECE (the SYN/ACK's excepted): its receiver
    /// reporting CE marks, on every ACK until the sender's CWR (RFC 3168 §6.1.3). Under
    /// AccECN the flag is a bit of the ACE counter instead (RFC 9768 §3.2.2), not an echo.
    pub ece: Events,
    /// Segments of this direction carrying CWR (the SYN's excepted): its sender reduced its
    /// congestion window in answer to an echo, and says so on its next new data (RFC 3168
    /// §6.1.2), at most once per window of data. Not sent under AccECN.
    pub cwr: Events,
}

impl EcnCounts {
    /// A segment of this direction with codepoint `ecn`.
    #[inline]
    pub fn on_codepoint(&mut self, ecn: Ecn, frame: u64, ts: Timestamp) {
        match ecn {
            Ecn::NotEct => {}
            Ecn::Ect0 => self.ect0 += 1,
            Ecn::Ect1 => self.ect1 += 1,
            Ecn::Ce => self.ce.on(frame, ts),
        }
    }

    /// An ACK of this direction's data with ECE.
    pub fn on_echo(&mut self, frame: u64, ts: Timestamp) {
        self.ece.on(frame, ts);
    }

    /// A segment of this direction with CWR.
    pub fn on_cwr(&mut self, frame: u64, ts: Timestamp) {
        self.cwr.on(frame, ts);
    }

    /// Whether the direction showed anything of ECN.
    pub fn any(&self) -> bool {
        self.ect0 + self.ect1 + self.ce.count + self.ece.count + self.cwr.count > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(ae: bool, cwr: bool, ece: bool) -> SetupFlags {
        SetupFlags((ae as u8) << 2 | (cwr as u8) << 1 | ece as u8)
    }

    #[test]
    fn a_syn_asks_for_ecn_with_ece_and_cwr_and_for_accecn_with_ae_too() {
        assert_eq!(f(false, true, true).syn_offer(), EcnOffer::Rfc3168);
        assert_eq!(f(true, true, true).syn_offer(), EcnOffer::AccEcn);
        for bits in [0b000, 0b001, 0b010, 0b100, 0b101, 0b110] {
            assert_eq!(SetupFlags(bits).syn_offer(), EcnOffer::No, "{bits:03b}");
        }
    }

    #[test]
    fn rfc_9768_table_2() {
        use EcnMode::*;
        let accecn = Some(f(true, true, true));
        let classic = Some(f(false, true, true));
        let plain = Some(f(false, false, false));
        // (SYN, SYN/ACK) -> mode, as RFC 9768 §3.1.2 Table 2 lists them.
        let rows = [
            (accecn, f(false, true, false), AccEcn),
            (accecn, f(false, true, true), AccEcn),
            (accecn, f(true, false, false), AccEcn),
            (accecn, f(true, true, false), AccEcn),
            (accecn, f(true, false, true), AccEcn), // reserved: AccECN (§3.1.3)
            (accecn, f(false, false, true), Rfc3168),
            (accecn, f(false, false, false), Off),
            (accecn, f(true, true, true), Off), // a reflector
            (classic, f(false, false, true), Rfc3168),
            (classic, f(false, false, false), Off),
            (classic, f(false, true, true), Off), // CWR set: no ECN-setup SYN-ACK for RFC 3168
            (plain, f(false, false, true), Off),
        ];
        for (syn, syn_ack, want) in rows {
            assert_eq!(negotiate(syn, Some(syn_ack)), want, "{syn:?} {syn_ack:?}");
        }
        assert_eq!(negotiate(classic, None), Unknown);
        assert_eq!(negotiate(plain, None), Off);
        assert_eq!(negotiate(None, Some(f(false, false, true))), Rfc3168);
        assert_eq!(negotiate(None, Some(f(false, true, false))), AccEcn);
        assert_eq!(negotiate(None, Some(f(false, false, false))), Off);
        assert_eq!(negotiate(None, None), Unknown);
    }

    #[test]
    fn counts_keep_the_first_and_last_mark() {
        let mut c = EcnCounts::default();
        assert!(!c.any());
        c.on_codepoint(Ecn::NotEct, 1, Timestamp(1));
        assert!(!c.any());
        c.on_codepoint(Ecn::Ect0, 2, Timestamp(2));
        c.on_codepoint(Ecn::Ce, 48, Timestamp(48));
        c.on_codepoint(Ecn::Ce, 53, Timestamp(53));
        c.on_codepoint(Ecn::Ect1, 54, Timestamp(54));
        assert_eq!((c.ect0, c.ect1, c.ce.count), (1, 1, 2));
        assert_eq!(
            c.ce.first,
            Some(Mark {
                frame: 48,
                ts: Timestamp(48)
            })
        );
        assert_eq!(c.ce.last.map(|m| m.frame), Some(53));
        assert!(c.any());
    }
}
