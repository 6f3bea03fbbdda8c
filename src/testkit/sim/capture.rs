//! Capture points: where on the path a capture is taken, how its host stamps packets
//! (clock resolution, interrupt coalescing) and how much of each it keeps; and writing
//! what it recorded as a pcap file.

use crate::capture::{LinkType, PcapWriter};
use crate::time::Timestamp;
use std::time::Duration;

/// Capture timestamps start here (2023-11-14).
pub(super) const EPOCH_NS: i64 = 1_700_000_000 * 1_000_000_000;

/// How a capturing host stamps and keeps packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CaptureHost {
    /// Clock resolution: stamps are rounded down to a multiple of it. 1 µs is the pcap
    /// format's own unit; 1 ms or 10 ms is a coarse clock (Windows' system time
    /// advanced in 10-15.6 ms ticks for WinPcap before high-resolution stamps).
    pub resolution: Duration,
    /// Interrupt coalescing on the host's receive path (`ethtool -C rx-usecs/rx-frames`,
    /// NAPI polling), or None.
    pub coalesce: Option<Coalesce>,
    /// Bytes kept of each packet (tcpdump `-s`).
    pub snaplen: u32,
    /// The capture began this long into the run (tcpdump started mid-transfer: no
    /// handshake in it); zero from the start.
    pub start_after: Duration,
}

impl Default for CaptureHost {
    /// Microsecond stamps, no coalescing, 128 bytes kept.
    fn default() -> Self {
        CaptureHost {
            resolution: Duration::from_micros(1),
            coalesce: None,
            snaplen: 128,
            start_after: Duration::ZERO,
        }
    }
}

/// A NIC that interrupts once per `window` after the first packet of a batch, or as
/// soon as `max_packets` have arrived; the poll then hands the batch to the stack (and
/// to the capture) `per_packet` apart. Packets of a batch get the same stamp, or
/// stamps microseconds apart: the spacing the link gave them is gone.
///
/// At an end host the stack receives the packets when the capture stamps them (the
/// interrupt delays both); at a middle tap only the stamps change.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Coalesce {
    pub max_packets: u32,
    pub window: Duration,
    pub per_packet: Duration,
}

/// A capture in the middle of the path: a tap on the propagation line beyond the
/// bottleneck queue, `at` of the way from the sender host to the receiver host (0.0 =
/// just after the queue, 1.0 = at the receiver's door). It sees data after the
/// bottleneck, spaced as the link sends it, and ACKs before they reach the sender.
/// The middlebox of [`super::Middlebox`] sits between the tap and the receiver host.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tap {
    pub at: f64,
    pub capture: CaptureHost,
}

/// Where a capture was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vantage {
    /// At the data sender's interface (before the bottleneck).
    Sender,
    /// At the data receiver's interface (after it).
    Receiver,
    /// The path's [`Tap`].
    Middle,
}

/// One captured packet: when the capture point saw it (ns of the run), the order it
/// was seen in, the bytes kept and the length on the wire.
pub(super) struct Rec {
    pub t: i64,
    pub n: u64,
    pub bytes: Vec<u8>,
    pub wire: u32,
}

/// What a coalescing NIC does to the stamps of packets seen at `t` (sorted): the first
/// of a batch opens it, `window` later (or at its `max_packets`-th) the interrupt fires
/// and the batch is stamped `per_packet` apart from then on, never before a stamp
/// already given.
pub(super) fn coalesce(recs: &mut [Rec], c: &Coalesce) {
    let window = c.window.as_nanos() as i64;
    let step = c.per_packet.as_nanos() as i64;
    let max = c.max_packets.max(1) as usize;
    let mut last = i64::MIN;
    let mut i = 0;
    while i < recs.len() {
        let close = recs[i].t + window;
        let mut j = i;
        while j < recs.len() && j - i < max && recs[j].t < close {
            j += 1;
        }
        let fire = if j - i == max { recs[j - 1].t } else { close };
        for (k, r) in recs[i..j].iter_mut().enumerate() {
            r.t = (fire + k as i64 * step).max(last);
            last = r.t;
        }
        i = j;
    }
}

/// The pcap file of a capture point: records in the order seen, stamps rounded down to
/// the host's resolution, cut at its snaplen.
pub(super) fn write(mut recs: Vec<Rec>, host: &CaptureHost) -> Vec<u8> {
    recs.sort_by_key(|r| (r.t, r.n));
    let res = (host.resolution.as_nanos() as i64).max(1);
    let mut w = PcapWriter::new(Vec::new(), LinkType::ETHERNET, host.snaplen, false, false).expect("writing to a Vec");
    let from = host.start_after.as_nanos() as i64;
    for r in recs.iter().filter(|r| r.t >= from) {
        let at = (EPOCH_NS + r.t).div_euclid(res) * res;
        let keep = r.bytes.len().min(host.snaplen as usize);
        w.write_packet(Timestamp::from_nanos(at), &r.bytes[..keep], r.wire)
            .expect("writing to a Vec");
    }
    w.into_inner()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recs(ts: &[i64]) -> Vec<Rec> {
        ts.iter()
            .enumerate()
            .map(|(n, &t)| Rec {
                t,
                n: n as u64,
                bytes: Vec::new(),
                wire: 60,
            })
            .collect()
    }

    #[test]
    fn a_coalescing_nic_stamps_batches_at_their_interrupt() {
        let c = Coalesce {
            max_packets: 3,
            window: Duration::from_micros(100),
            per_packet: Duration::from_micros(1),
        };
        // 12 µs apart (1 Gbit/s): three make a batch, stamped at the third's arrival;
        // a lone late packet waits the whole window.
        let mut r = recs(&[0, 12_000, 24_000, 36_000, 48_000, 60_000, 500_000]);
        coalesce(&mut r, &c);
        let t: Vec<i64> = r.iter().map(|r| r.t).collect();
        assert_eq!(t, [24_000, 25_000, 26_000, 60_000, 61_000, 62_000, 600_000]);
    }

    #[test]
    fn stamps_are_rounded_down_to_the_resolution() {
        let host = CaptureHost {
            resolution: Duration::from_millis(10),
            ..CaptureHost::default()
        };
        let pcap = write(recs(&[9_999_999, 10_000_000, 25_000_001]), &host);
        let mut r = crate::capture::CaptureReader::from_reader(std::io::Cursor::new(pcap)).unwrap();
        let mut got = Vec::new();
        while let Some(f) = r.next_frame().unwrap() {
            got.push(f.ts.nanos() - EPOCH_NS);
        }
        assert_eq!(got, [0, 10_000_000, 20_000_000]);
    }
}
