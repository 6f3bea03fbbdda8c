//! MB201 `mss_asymmetric`: the two ends announced different MSS values and the lower one
//! is not the MSS of any common link: a middlebox may have clamped it (iptables TCPMSS
//! `--clamp-mss-to-pmtu` / `--set-mss`, Cisco `ip tcp adjust-mss`, firewalls' "MSS
//! adjust"), or that end sits behind a smaller MTU (a VPN, a tunnel) and announced it
//! itself. One capture cannot tell the two apart: possible.
//!
//! RFC 9293 §3.7.1 (and RFC 879, RFC 6691): an end announces the largest segment it can
//! receive, normally its interface MTU minus 40 (IPv4) or 60 (IPv6) bytes of headers.
//! So MSS values of ordinary hosts are MTU − 40/60 for common MTUs: Ethernet 1500, PPPoE
//! 1492, jumbo 9000, loopback 65536 / 16436 / 16384 (Linux), IPoIB 2044/65520, FDDI 4352.
//! Anything else below the other end's value is suspicious; values at or above the
//! Ethernet MSS never are (jumbo frames, loopback, InfiniBand).
//!
//! Direction: the handshake segment that carries the lower value.

use super::{handshake, has};
use crate::flow::Dir;
use crate::middlebox::{end_name, segment_name, Confidence, Evidence, Found, HsSegment, Kind};
use crate::tcp::Connection;

/// Link MTUs whose MSS is what an ordinary host announces.
const COMMON_MTUS: &[u32] = &[1500, 1492, 9000, 65536, 65535, 16436, 16384, 2044, 4352, 4470, 65520];

/// Whether `mss` is what a host on a common link announces (IPv4: MTU − 40, IPv6: − 60).
pub(crate) fn common_link_mss(mss: u16, ipv6: bool) -> bool {
    let hdr = if ipv6 { 60 } else { 40 };
    COMMON_MTUS.iter().any(|&mtu| mtu - hdr == mss as u32) || mss as u32 >= 1500 - hdr
}

pub fn check(conn: &Connection, _ev: &Evidence, out: &mut Vec<Found>) {
    let Some((syn, sa)) = handshake(conn) else { return };
    if has(syn.mss) != Some(true) || has(sa.mss) != Some(true) {
        return;
    }
    let (c, s) = (syn.mss.present().unwrap_or(0), sa.mss.present().unwrap_or(0));
    if c == s {
        return;
    }
    let (low_dir, low, high) = if c < s { (Dir::C2S, c, s) } else { (Dir::S2C, s, c) };
    let ipv6 = conn.client.addr.is_ipv6();
    if common_link_mss(low, ipv6) {
        return;
    }
    let (who, other) = (end_name(low_dir), end_name(low_dir.reverse()));
    let hdr = if ipv6 { 60 } else { 40 };
    out.push(Found {
            hint: false,
        kind: Kind::MssClamped,
        segment: HsSegment::sent_by(low_dir),
        confidence: Confidence::Possible,
        evidence: format!(
            "the {who}'s {seg} announced MSS {low}, the {other}'s {high}; {low} is not the MSS of a common link (an MTU of {mtu}): \
             a middlebox may have clamped it, or the {who} sits behind a smaller MTU (VPN, tunnel) — one capture cannot tell \
             (compare captures from both ends: `bdpscope compare`). Segments towards the {who} are at most {low} bytes",
            seg = segment_name(low_dir),
            mtu = low as u32 + hdr,
        ),
    });
}

#[cfg(test)]
mod tests {
    use super::common_link_mss;
    use crate::middlebox::testutil::{has, Flow, Opts};

    #[test]
    fn a_syn_ack_announcing_1200_against_1460() {
        let mut f = Flow::new();
        f.syn(Opts::LINUX, 65535)
            .at_ms(1.0)
            .syn_ack(Opts::LINUX.mss(1200), 65160);
        let out = f.findings();
        assert!(has(&out, "mss-clamped", "syn-ack"), "{out:?}");
        assert_eq!(out[0].confidence.as_str(), "possible");
    }

    #[test]
    fn common_links_are_not_suspicious() {
        for (m, v6) in [
            (1460, false),
            (1452, false),
            (8960, false),
            (65495, false),
            (16344, false),
            (1440, true),
            (1432, true),
            (65476, true),
        ] {
            assert!(common_link_mss(m, v6), "{m}");
        }
        for (m, v6) in [(1200, false), (536, false), (1380, false), (1360, true), (1400, false)] {
            assert!(!common_link_mss(m, v6), "{m}");
        }
        let mut f = Flow::new();
        f.syn(Opts::LINUX.mss(1452), 65535)
            .at_ms(1.0)
            .syn_ack(Opts::LINUX, 65160);
        assert!(f.findings().is_empty());
    }
}
