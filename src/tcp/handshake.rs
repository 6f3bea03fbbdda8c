//! The connection handshake: the options each end put in its SYN (client) or SYN/ACK
//! (server), and what they negotiate. A capture that starts mid-connection has no
//! handshake; that is a valid state (Zeek's "partial"), not an error.

use super::ecn::{self, SetupFlags};
use super::window::WindowScale;
use crate::decode::{Seen, TcpOptions};
use crate::seq::SeqNum;
use crate::summary::{EcnMode, EcnOffer};
use crate::time::Timestamp;

/// The options one end announced in its SYN or SYN/ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SynOptions {
    pub ts: Timestamp,
    pub isn: SeqNum,
    pub mss: Seen<u16>,
    pub wscale: Seen<u8>,
    /// Shift value above 14 that was sent and clamped (RFC 7323 §2.3).
    pub wscale_over_14: Option<u8>,
    pub sack_permitted: Seen<()>,
    pub timestamps: Seen<()>,
    /// Number of SYN (or SYN/ACK) segments seen from this end; > 1 means retransmitted.
    pub count: u32,
    /// Its ECN flags (AE, CWR, ECE).
    pub ecn: SetupFlags,
    /// The longest run of NOPs in its option area (see `middlebox::layout`).
    pub nop_run: u8,
}

impl SynOptions {
    pub fn from_segment(ts: Timestamp, isn: SeqNum, o: &TcpOptions) -> Self {
        SynOptions {
            ts,
            isn,
            mss: o.mss_seen(),
            wscale: o.wscale_seen(),
            wscale_over_14: o.wscale_raw_over_14,
            sack_permitted: o.sack_permitted_seen(),
            timestamps: match o.timestamps_seen() {
                Seen::Present(_) => Seen::Present(()),
                Seen::Absent => Seen::Absent,
                Seen::Unknown => Seen::Unknown,
            },
            count: 1,
            ecn: SetupFlags::default(),
            nop_run: o.nop_run,
        }
    }

    /// The same, with the segment's ECN flags.
    pub fn with_ecn(self, ecn: SetupFlags) -> Self {
        SynOptions { ecn, ..self }
    }
}

/// The handshake as seen at the capture point.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Handshake {
    /// The client's SYN (the last one, when it was retransmitted with other options).
    pub syn: Option<SynOptions>,
    /// The server's SYN/ACK.
    pub syn_ack: Option<SynOptions>,
}

impl Handshake {
    /// True when both SYN and SYN/ACK are in the capture.
    pub fn seen(&self) -> bool {
        self.syn.is_some() && self.syn_ack.is_some()
    }

    pub fn on_syn(&mut self, opts: SynOptions) {
        let count = self.syn.map_or(0, |s| s.count);
        self.syn = Some(SynOptions {
            count: count + 1,
            ..opts
        });
    }

    pub fn on_syn_ack(&mut self, opts: SynOptions) {
        let count = self.syn_ack.map_or(0, |s| s.count);
        self.syn_ack = Some(SynOptions {
            count: count + 1,
            ..opts
        });
    }

    /// Scale applied to windows the client advertises.
    pub fn client_scale(&self) -> WindowScale {
        match (self.syn, self.syn_ack) {
            (Some(c), Some(s)) => WindowScale::negotiate(c.wscale, s.wscale),
            // One SYN alone still tells: without the option scaling is off for both ends.
            (Some(c), None) => WindowScale::negotiate(c.wscale, Seen::Unknown),
            (None, Some(s)) => WindowScale::negotiate(Seen::Unknown, s.wscale),
            (None, None) => WindowScale::Unknown,
        }
    }

    /// Scale applied to windows the server advertises.
    pub fn server_scale(&self) -> WindowScale {
        match (self.syn, self.syn_ack) {
            (Some(c), Some(s)) => WindowScale::negotiate(s.wscale, c.wscale),
            (Some(c), None) => WindowScale::negotiate(Seen::Unknown, c.wscale),
            // RFC 7323 §2.2: a SYN/ACK carries the option only in answer to a SYN that did,
            // so its shift is in force even when the SYN is not in the capture.
            (None, Some(s)) => match s.wscale {
                Seen::Present(k) => WindowScale::Shift(k.min(14)),
                other => WindowScale::negotiate(other, Seen::Unknown),
            },
            (None, None) => WindowScale::Unknown,
        }
    }

    /// What the client's SYN said of ECN (None without it in the capture).
    pub fn client_ecn(&self) -> Option<EcnOffer> {
        self.syn.map(|s| s.ecn.syn_offer())
    }

    /// What the server's SYN/ACK answered.
    pub fn server_ecn(&self) -> Option<EcnOffer> {
        self.syn_ack.map(|s| s.ecn.syn_ack_answer())
    }

    /// ECN as the handshake set it up.
    pub fn ecn(&self) -> EcnMode {
        ecn::negotiate(self.syn.map(|s| s.ecn), self.syn_ack.map(|s| s.ecn))
    }

    /// Whether window scaling is in force: Some(true/false), None when unknown.
    pub fn scaling_on(&self) -> Option<bool> {
        match (self.client_scale(), self.server_scale()) {
            (WindowScale::NotUsed, _) | (_, WindowScale::NotUsed) => Some(false),
            (WindowScale::Shift(_), _) | (_, WindowScale::Shift(_)) => Some(true),
            _ => None,
        }
    }
}

impl<T> Seen<T> {
    /// The value when present.
    pub fn present(self) -> Option<T> {
        match self {
            Seen::Present(v) => Some(v),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::TcpOptions;

    fn opts(ws: Option<u8>, complete: bool) -> SynOptions {
        let o = TcpOptions {
            complete,
            wscale: ws,
            mss: Some(1460),
            ..Default::default()
        };
        SynOptions::from_segment(Timestamp(0), SeqNum(1), &o)
    }

    #[test]
    fn both_sides_offer_scaling() {
        let mut h = Handshake::default();
        h.on_syn(opts(Some(7), true));
        assert_eq!(h.client_scale(), WindowScale::Unknown);
        h.on_syn_ack(opts(Some(2), true));
        assert_eq!(h.client_scale(), WindowScale::Shift(7));
        assert_eq!(h.server_scale(), WindowScale::Shift(2));
        assert_eq!(h.scaling_on(), Some(true));
    }

    #[test]
    fn one_side_without_the_option_turns_scaling_off() {
        let mut h = Handshake::default();
        h.on_syn(opts(Some(7), true));
        h.on_syn_ack(opts(None, true));
        assert_eq!(h.client_scale(), WindowScale::NotUsed);
        assert_eq!(h.server_scale(), WindowScale::NotUsed);
    }

    #[test]
    fn options_cut_by_the_snaplen_leave_the_scale_unknown() {
        let mut h = Handshake::default();
        h.on_syn(opts(Some(7), true));
        h.on_syn_ack(opts(None, false));
        assert_eq!(h.client_scale(), WindowScale::Unknown);
    }

    #[test]
    fn retransmitted_syns_are_counted_and_the_last_wins() {
        let mut h = Handshake::default();
        h.on_syn(opts(Some(7), true));
        h.on_syn(opts(None, true));
        assert_eq!(h.syn.unwrap().count, 2);
        assert_eq!(h.syn.unwrap().wscale, Seen::Absent);
    }
}
