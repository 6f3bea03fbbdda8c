//! Link types (<https://www.tcpdump.org/linktypes.html>) as an open newtype: unknown values
//! stay representable so they can be counted and reported.

/// A LINKTYPE_ value from a pcap header or a pcapng interface description block.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct LinkType(pub u32);

impl LinkType {
    pub const NULL: LinkType = LinkType(0);
    pub const ETHERNET: LinkType = LinkType(1);
    pub const PPP: LinkType = LinkType(9);
    /// DLT_RAW on OpenBSD-derived systems uses 12 / 14 in pcap files written by them.
    pub const RAW_12: LinkType = LinkType(12);
    pub const RAW_14: LinkType = LinkType(14);
    pub const RAW: LinkType = LinkType(101);
    pub const LOOP: LinkType = LinkType(108);
    pub const LINUX_SLL: LinkType = LinkType(113);
    pub const ARCNET_LINUX: LinkType = LinkType(129);
    pub const IPV4: LinkType = LinkType(228);
    pub const IPV6: LinkType = LinkType(229);
    pub const IPOIB: LinkType = LinkType(242);
    pub const LINUX_SLL2: LinkType = LinkType(276);
    /// Not a LINKTYPE_ value: given to pcapng packets whose interface was never described.
    pub const NO_INTERFACE: LinkType = LinkType(u32::MAX);

    /// The conventional name (tcpdump's), or None for values this tool does not know.
    pub fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0 => "NULL",
            1 => "EN10MB",
            9 => "PPP",
            12 | 14 | 101 => "RAW",
            108 => "LOOP",
            113 => "LINUX_SLL",
            129 => "ARCNET_LINUX",
            228 => "IPV4",
            229 => "IPV6",
            242 => "IPOIB",
            276 => "LINUX_SLL2",
            _ => return None,
        })
    }
}

impl std::fmt::Display for LinkType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n} ({})", self.0),
            None => write!(f, "linktype {}", self.0),
        }
    }
}
