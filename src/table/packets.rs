//! The per-segment table (`bdpscope packets`' columns) as a typed frame: an [`Observer`]
//! that keeps each segment's numbers in columns, a chunk of [`CHUNK`] rows at a time, so a
//! capture of millions of segments is a few hundred bytes of column per row and no object
//! per row (the Python package hands the chunks over through Arrow as they are).

use crate::decode::TcpFlags;
use crate::observe::Observer;
use crate::tcp::SegmentEvent;
use polars::prelude::*;

/// Rows per chunk of the frame.
pub const CHUNK: usize = 1 << 16;

/// The columns, in the order of the `packets` CSV (`render/packets.rs`' header).
pub const COLUMNS: [&str; 20] = [
    "frame",
    "time",
    "flow",
    "dir",
    "seq",
    "ack",
    "len",
    "flags",
    "win_raw",
    "win_bytes",
    "flight_bytes",
    "rtt_ms",
    "retransmission",
    "pipe_bytes",
    "ts_rtt_ms",
    "dup_ack",
    "zero_window",
    "window_full",
    "naive_flight_bytes",
    "ecn",
];

/// One chunk's columns as they fill.
#[derive(Default)]
struct Chunk {
    frame: Vec<u64>,
    time: Vec<i64>,
    flow: Vec<u64>,
    dir: Vec<&'static str>,
    seq: Vec<u32>,
    ack: Vec<Option<u32>>,
    len: Vec<u32>,
    flags: Vec<u8>,
    win_raw: Vec<u16>,
    win_bytes: Vec<Option<u64>>,
    flight: Vec<Option<u64>>,
    rtt_ms: Vec<Option<f64>>,
    retransmission: Vec<bool>,
    pipe: Vec<Option<u64>>,
    ts_rtt_ms: Vec<Option<f64>>,
    dup_ack: Vec<bool>,
    zero_window: Vec<bool>,
    window_full: Vec<bool>,
    naive_flight: Vec<Option<u64>>,
    ecn: Vec<&'static str>,
}

/// tcpdump's letters, as `TcpFlags`' Debug (and the CSV) writes them.
fn flags_text(bits: u8) -> String {
    format!("{:?}", TcpFlags(bits))
}

impl Chunk {
    fn len(&self) -> usize {
        self.frame.len()
    }

    fn push(&mut self, e: &SegmentEvent) {
        self.frame.push(e.frame);
        self.time.push(e.ts.nanos());
        self.flow.push(e.flow);
        self.dir.push(e.dir.as_str());
        self.seq.push(e.seq);
        self.ack.push(e.ack);
        self.len.push(e.len);
        self.flags.push(e.flags.0);
        self.win_raw.push(e.win_raw);
        self.win_bytes.push(e.win_bytes);
        self.flight.push(e.flight);
        self.rtt_ms.push(e.ack_rtt.map(|r| r.raw.millis_f64()));
        self.retransmission.push(e.send.retransmission);
        self.pipe.push(e.pipe);
        self.ts_rtt_ms.push(e.ts_rtt.map(|r| r.raw.millis_f64()));
        self.dup_ack.push(e.acked.duplicate);
        self.zero_window.push(e.zero_window);
        self.window_full.push(e.send.window_full);
        self.naive_flight.push(e.naive_flight);
        self.ecn.push(e.ecn.as_str());
    }

    fn frame(self) -> PolarsResult<DataFrame> {
        let height = self.len();
        let [frame, time, flow, dir, seq, ack, len, flags, win_raw, win_bytes, flight_bytes, rtt_ms, retransmission, pipe_bytes, ts_rtt_ms, dup_ack, zero_window, window_full, naive_flight_bytes, ecn] =
            COLUMNS.map(PlSmallStr::from_static);
        // Flags: 256 possible texts, made once each.
        let texts: Vec<String> = (0..=255u8).map(flags_text).collect();
        let time = Int64Chunked::from_vec(time, self.time)
            .into_datetime(TimeUnit::Nanoseconds, Some(TimeZone::UTC))
            .into_series();
        let columns = vec![
            Column::new(frame, self.frame),
            time.into_column(),
            Column::new(flow, self.flow),
            Column::new(dir, self.dir),
            Column::new(seq, self.seq),
            Column::new(ack, self.ack),
            Column::new(len, self.len),
            Column::new(
                flags,
                self.flags
                    .iter()
                    .map(|&b| texts[b as usize].as_str())
                    .collect::<Vec<_>>(),
            ),
            Column::new(win_raw, self.win_raw),
            Column::new(win_bytes, self.win_bytes),
            Column::new(flight_bytes, self.flight),
            Column::new(rtt_ms, self.rtt_ms),
            Column::new(retransmission, self.retransmission),
            Column::new(pipe_bytes, self.pipe),
            Column::new(ts_rtt_ms, self.ts_rtt_ms),
            Column::new(dup_ack, self.dup_ack),
            Column::new(zero_window, self.zero_window),
            Column::new(window_full, self.window_full),
            Column::new(naive_flight_bytes, self.naive_flight),
            Column::new(ecn, self.ecn),
        ];
        DataFrame::new(height, columns)
    }
}

/// Collects every segment of the selected flows (all when `flows` is empty).
pub struct PacketTable {
    flows: Vec<u64>,
    chunk: Chunk,
    done: Vec<DataFrame>,
    error: Option<PolarsError>,
}

impl PacketTable {
    pub fn new(flows: Vec<u64>) -> PacketTable {
        PacketTable {
            flows,
            chunk: Chunk::default(),
            done: Vec::new(),
            error: None,
        }
    }

    fn seal(&mut self) {
        let chunk = std::mem::take(&mut self.chunk);
        match chunk.frame() {
            Ok(df) => self.done.push(df),
            Err(e) => self.error = Some(e),
        }
    }

    /// The table, one chunk per [`CHUNK`] rows (not copied into one: a reader takes the
    /// chunks as they are). Never empty of columns: no segment gives zero rows.
    pub fn finish(mut self) -> PolarsResult<Vec<DataFrame>> {
        if self.chunk.len() > 0 || self.done.is_empty() {
            self.seal();
        }
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.done),
        }
    }
}

impl Observer for PacketTable {
    fn on_segment(&mut self, e: &SegmentEvent) {
        if self.error.is_some() || (!self.flows.is_empty() && !self.flows.contains(&e.flow)) {
            return;
        }
        self.chunk.push(e);
        if self.chunk.len() >= CHUNK {
            self.seal();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_segment_gives_the_columns_typed() {
        let frames = PacketTable::new(Vec::new()).finish().unwrap();
        assert_eq!(frames.len(), 1);
        let names: Vec<&str> = frames[0].get_column_names().iter().map(|n| n.as_str()).collect();
        assert_eq!(names, COLUMNS);
        assert_eq!(
            frames[0].column("time").unwrap().dtype(),
            &DataType::Datetime(TimeUnit::Nanoseconds, Some(TimeZone::UTC))
        );
        assert_eq!(frames[0].column("win_raw").unwrap().dtype(), &DataType::UInt16);
    }

    #[test]
    fn flags_read_as_tcpdump_writes_them() {
        assert_eq!(flags_text(TcpFlags::SYN | TcpFlags::ACK), "S.");
    }
}
