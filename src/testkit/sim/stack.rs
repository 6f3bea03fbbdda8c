//! TCP stacks: what one end offers in its SYN and how it acknowledges, advertises its
//! window, starts and times out. Each default is the documented one of the system it is
//! named after (sources beside each preset); the two ends of a flow can differ.

use std::time::Duration;

/// How an end chooses the window-scale shift it offers (RFC 7323 §2.2-2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowScale {
    /// No window-scale option: windows stay below 64 KiB (RFC 1323 was never
    /// implemented, or is turned off).
    Off,
    /// The smallest shift that fits the receive buffer in 16 bits (Linux's
    /// `tcp_select_initial_window` on the buffer's space).
    FromBuffer,
    /// A fixed shift, whatever the buffer (Windows' receive window auto-tuning offers 8
    /// at its `normal` level).
    Fixed(u8),
}

/// How a receiving end chooses the window it advertises and when its ACK is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiverModel {
    /// Linux: the offered window starts at the SYN's and grows by two segments per
    /// segment received (`tcp_grow_window`); free space below 1/16 of the buffer
    /// advertises zero (`__tcp_select_window`). An ACK is due once more than
    /// `ack_every - 1` full segments' bytes are unacknowledged and the application has
    /// read them or the window would not shrink (`__tcp_ack_snd_check`).
    Linux,
    /// RFC 1122 §4.2.3.3 receiver silly-window avoidance, as BSD's `tcp_output` and
    /// Windows do: the whole free space from the start, the right edge moved only when
    /// it gains at least min(buffer / 2, one segment). An ACK is due every `ack_every`
    /// segments (RFC 1122 §4.2.3.2).
    Rfc1122,
}

/// One end's TCP implementation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stack {
    /// A short name for reports ("linux", "windows", ...).
    pub name: &'static str,
    /// Options this end offers in its SYN or accepts in a SYN/ACK.
    pub timestamps: bool,
    pub sack: bool,
    pub window_scale: WindowScale,
    /// Delayed-ACK timer: how long a receiver waits for a second segment.
    pub delack: Duration,
    /// Full-sized segments received before an ACK is due at once (RFC 1122 §4.2.3.2,
    /// RFC 5681 §4.2: at least every second one).
    pub ack_every: u32,
    /// Linux's quick-ACK mode: the first segments of a connection, or after an idle
    /// spell, are each acknowledged at once (`tcp_incr_quickack`, up to 16).
    pub quickack: bool,
    /// Linux also acknowledges at once a short (pushed) segment the application has
    /// read whole (`tcp_cleanup_rbuf`, ICSK_ACK_PUSHED); RFC 1122 stacks wait for the
    /// timer, which is what turns Nagle plus delayed ACKs into 200 ms stalls.
    pub ack_pushed: bool,
    pub receiver: ReceiverModel,
    /// Initial congestion window, segments.
    pub init_cwnd: u32,
    /// The floor of the retransmission timer's variance term (Linux's `tcp_rto_min`
    /// form: RTO = SRTT + max(4 RTTVAR, rto_min)).
    pub rto_min: Duration,
    /// Retransmission timeout before any RTT sample.
    pub rto_init: Duration,
    /// Send buffer, payload bytes held (unacknowledged + unsent); None = autotuned like
    /// Linux (twice the largest congestion window, at most 4 MiB). A flow's own
    /// `sndbuf` overrides it.
    pub sndbuf: Option<u32>,
    /// A receiver that reports a duplicate segment in the first SACK block of its ACK
    /// (D-SACK, RFC 2883 §4): Linux with SACK on (`net.ipv4.tcp_dsack` 1, `tcp_dsack_set`
    /// for data below `rcv_nxt`). The other stacks are modelled without it.
    pub dsack: bool,
}

impl Default for Stack {
    fn default() -> Self {
        Stack::linux()
    }
}

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

impl Stack {
    /// Linux (the lab's kernel): timestamps, SACK, window scale from the buffer
    /// (`net.ipv4.tcp_timestamps`, `tcp_sack`, `tcp_window_scaling` all default 1);
    /// delayed ACKs after 40 ms (`TCP_DELACK_MIN` = HZ/25, include/net/tcp.h) once more
    /// than one full segment is unacknowledged (`__tcp_ack_snd_check`), quick ACKs at the
    /// start; IW 10 (`TCP_INIT_CWND`, RFC 6928); RTO floor 200 ms (`TCP_RTO_MIN`) and
    /// 1 s initial (`TCP_TIMEOUT_INIT`, RFC 6298 §2.1); send buffer autotuned
    /// (`tcp_sndbuf_expand`).
    pub const fn linux() -> Self {
        Stack {
            name: "linux",
            timestamps: true,
            sack: true,
            window_scale: WindowScale::FromBuffer,
            delack: ms(40),
            ack_every: 2,
            quickack: true,
            ack_pushed: true,
            receiver: ReceiverModel::Linux,
            init_cwnd: 10,
            rto_min: ms(200),
            rto_init: ms(1_000),
            sndbuf: None,
            dsack: true,
        }
    }

    /// Windows (Vista and later, client defaults): no timestamps (`Get-NetTCPSetting`:
    /// Timestamps Disabled), SACK on (`SackOpts` 1), window scale 8 (receive-window
    /// auto-tuning at its `normal` level); an ACK every second segment (`TcpAckFrequency`
    /// 2) or after 200 ms (`TcpDelAckTicks` 2 = 2 x 100 ms; Microsoft's TCP/IP registry
    /// reference), no quick-ACK mode and no immediate ACK of pushed data; the RFC 1122
    /// window; IW 10 and an RTO floor of 300 ms (`InitialCongestionWindow(MSS)` 10,
    /// `MinRto(ms)` 300 in the Windows Server 2019 TCP templates), 3 s before the first
    /// sample (`netsh int tcp show global`: Initial RTO 3000); a 64 KiB send buffer.
    pub const fn windows() -> Self {
        Stack {
            name: "windows",
            timestamps: false,
            sack: true,
            window_scale: WindowScale::Fixed(8),
            delack: ms(200),
            ack_every: 2,
            quickack: false,
            ack_pushed: false,
            receiver: ReceiverModel::Rfc1122,
            init_cwnd: 10,
            rto_min: ms(300),
            rto_init: ms(3_000),
            sndbuf: Some(64 << 10),
            dsack: false,
        }
    }

    /// An old stack (Windows 2000/XP, BSD 4.4 descendants before RFC 1323 was common):
    /// no window scaling and no timestamps (`Tcp1323Opts` 0), so the window is at most
    /// 65535 bytes (RFC 7323 §2); SACK optional (RFC 2018); delayed ACKs on BSD's 200 ms
    /// fast timer (`tcp_fasttimo`; RFC 1122 §4.2.3.2 allows up to 500 ms), every second
    /// segment; the RFC 1122 window; IW 2 (RFC 2581 §3.1); RFC 6298's 1 s minimum RTO
    /// (§2.4) and 3 s initial one (RFC 1122 §4.2.3.1, RFC 2988); a 32 KiB send buffer
    /// (BSD's `tcp_sendspace`).
    pub const fn old(sack: bool) -> Self {
        Stack {
            name: if sack { "old-sack" } else { "old" },
            timestamps: false,
            sack,
            window_scale: WindowScale::Off,
            delack: ms(200),
            ack_every: 2,
            quickack: false,
            ack_pushed: false,
            receiver: ReceiverModel::Rfc1122,
            init_cwnd: 2,
            rto_min: ms(1_000),
            rto_init: ms(3_000),
            sndbuf: Some(32 << 10),
            dsack: false,
        }
    }

    /// FreeBSD (macOS's TCP descends from it): timestamps, SACK and window scale from
    /// the buffer (`net.inet.tcp.rfc1323`, `sack.enable` default 1); delayed ACK 100 ms
    /// (`TCPTV_DELACK` = hz/10, tcp_timer.h) every second segment; the RFC 1122 window
    /// (`tcp_output`); IW 10 (`net.inet.tcp.initcwnd_segments`); RTO = the estimate plus
    /// a 200 ms slop, at least 30 ms (`tcp_rexmit_slop`, `tcp_rexmit_min`), taken here as
    /// a 230 ms floor; 1 s initial (`TCPTV_RTOBASE`); send buffer autotuned
    /// (`net.inet.tcp.sendbuf_auto`).
    pub const fn bsd() -> Self {
        Stack {
            name: "bsd",
            timestamps: true,
            sack: true,
            window_scale: WindowScale::FromBuffer,
            delack: ms(100),
            ack_every: 2,
            quickack: false,
            ack_pushed: false,
            receiver: ReceiverModel::Rfc1122,
            init_cwnd: 10,
            rto_min: ms(230),
            rto_init: ms(1_000),
            sndbuf: None,
            dsack: false,
        }
    }

    /// Windows with auto-tuning disabled and RFC 1323 off (`netsh int tcp set global
    /// autotuninglevel=disabled`, `Tcp1323Opts` 0): no window-scale option, a window of
    /// at most 64 KiB.
    pub const fn windows_unscaled() -> Self {
        Stack {
            name: "windows-unscaled",
            window_scale: WindowScale::Off,
            ..Stack::windows()
        }
    }

    /// The same stack with another send buffer (Winsock's historical SO_SNDBUF default
    /// is 8 KiB).
    pub const fn with_sndbuf(self, bytes: u32) -> Self {
        Stack {
            sndbuf: Some(bytes),
            ..self
        }
    }

    /// Whether the SYN carries a window-scale option, and the shift it offers for a
    /// receive buffer of `space` bytes.
    pub(super) fn offered_shift(&self, space: u64) -> Option<u8> {
        match self.window_scale {
            WindowScale::Off => None,
            WindowScale::FromBuffer => {
                let mut s = 0;
                while s < 14 && (space >> s) > 65535 {
                    s += 1;
                }
                Some(s)
            }
            WindowScale::Fixed(s) => Some(s.min(14)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifts_follow_the_policy() {
        assert_eq!(Stack::linux().offered_shift(64_000), Some(0));
        assert_eq!(Stack::linux().offered_shift(80_480), Some(1));
        assert_eq!(Stack::linux().offered_shift(4 << 20), Some(7));
        assert_eq!(Stack::windows().offered_shift(64_000), Some(8));
        assert_eq!(Stack::windows_unscaled().offered_shift(4 << 20), None);
        assert_eq!(Stack::old(true).offered_shift(4 << 20), None);
        assert_eq!(Stack::bsd().offered_shift(1 << 30), Some(14));
    }
}
