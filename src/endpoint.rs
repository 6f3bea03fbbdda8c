//! Flow identity: a canonical bidirectional key (lower endpoint first, as retina's ConnId)
//! plus a direction, so both directions of one connection land on the same entry.
//!
//! Below `tcp` (a connection knows its two ends and the direction of each segment) and
//! `flow` (whose table is keyed by it); `flow` re-exports these types.

use crate::decode::Segment;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::net::IpAddr;

/// One end of a connection.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Endpoint {
    pub addr: IpAddr,
    pub port: u16,
}

impl Endpoint {
    /// The (source, destination) ends of a segment.
    #[inline]
    pub fn pair_of(seg: &Segment) -> (Endpoint, Endpoint) {
        (
            Endpoint {
                addr: seg.src,
                port: seg.src_port,
            },
            Endpoint {
                addr: seg.dst,
                port: seg.dst_port,
            },
        )
    }
}

impl fmt::Display for Endpoint {
    /// `10.0.0.1:40000`, IPv6 as `[fd00::1]:40000` (the spec's notation).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.addr {
            IpAddr::V4(a) => write!(f, "{a}:{}", self.port),
            IpAddr::V6(a) => write!(f, "[{a}]:{}", self.port),
        }
    }
}

crate::vocabulary! {
    /// The two directions of a connection, named from the client (the SYN sender).
    pub enum Dir {
        C2S = "c2s",
        S2C = "s2c",
    }
}

impl Dir {
    pub fn reverse(self) -> Dir {
        match self {
            Dir::C2S => Dir::S2C,
            Dir::S2C => Dir::C2S,
        }
    }
    /// Index for per-direction arrays: c2s = 0, s2c = 1.
    pub fn index(self) -> usize {
        match self {
            Dir::C2S => 0,
            Dir::S2C => 1,
        }
    }
}

/// Canonical key of a connection: the lower endpoint first, whatever the packet direction.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct FlowKey {
    pub lo: Endpoint,
    pub hi: Endpoint,
}

impl Hash for FlowKey {
    /// Hashes each endpoint as one or two machine words (address and port packed), not
    /// field by field: the flow table hashes every packet's key.
    #[inline]
    fn hash<H: Hasher>(&self, h: &mut H) {
        for e in [self.lo, self.hi] {
            match e.addr {
                IpAddr::V4(a) => h.write_u64(((u32::from(a) as u64) << 16) | e.port as u64),
                IpAddr::V6(a) => {
                    let v = u128::from(a);
                    h.write_u64(v as u64);
                    h.write_u64(((v >> 64) as u64) ^ ((e.port as u64) << 48));
                }
            }
        }
    }
}

impl FlowKey {
    /// The key of a packet from `src` to `dst`, and whether `src` is the key's lower end.
    #[inline]
    pub fn of(src: Endpoint, dst: Endpoint) -> (FlowKey, bool) {
        if src <= dst {
            (FlowKey { lo: src, hi: dst }, true)
        } else {
            (FlowKey { lo: dst, hi: src }, false)
        }
    }

    /// Whether a packet from `src` to `dst` belongs to this key: equal to `of(src, dst).0`,
    /// without the ordering comparison (the per-packet shortcuts ask this first).
    #[inline]
    pub fn matches(&self, src: &Endpoint, dst: &Endpoint) -> bool {
        (self.lo == *src && self.hi == *dst) || (self.lo == *dst && self.hi == *src)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(s: &str) -> Endpoint {
        let sa: std::net::SocketAddr = s.parse().unwrap();
        Endpoint {
            addr: sa.ip(),
            port: sa.port(),
        }
    }

    #[test]
    fn both_directions_share_a_key() {
        let (a, b) = (ep("10.0.0.1:40000"), ep("10.0.0.2:80"));
        let (k1, lo1) = FlowKey::of(a, b);
        let (k2, lo2) = FlowKey::of(b, a);
        assert_eq!(k1, k2);
        assert_ne!(lo1, lo2);
    }

    #[test]
    fn matches_is_membership_of_the_canonical_key() {
        let eps = [
            ep("10.0.0.1:40000"),
            ep("10.0.0.2:80"),
            ep("10.0.0.1:80"),
            ep("10.0.0.2:40000"),
            ep("[fd00::1]:40000"),
            ep("[fd00::2]:80"),
            ep("[::a00:1]:40000"),
        ];
        for &k1 in &eps {
            for &k2 in &eps {
                let (key, _) = FlowKey::of(k1, k2);
                for &s in &eps {
                    for &d in &eps {
                        assert_eq!(key.matches(&s, &d), FlowKey::of(s, d).0 == key, "{k1} {k2} / {s} {d}");
                    }
                }
            }
        }
    }

    #[test]
    fn endpoints_print_like_the_spec() {
        assert_eq!(ep("10.0.0.1:40000").to_string(), "10.0.0.1:40000");
        assert_eq!(ep("[fd00::1]:40000").to_string(), "[fd00::1]:40000");
    }
}
