//! The `packets` CSV: one row per TCP segment, the spec's columns first, then extras.

use bdpscope::observe::Observer;
use bdpscope::tcp::SegmentEvent;
use std::io::Write;

pub const HEADER: &str = "frame,time,flow,dir,seq,ack,len,flags,win_raw,win_bytes,flight_bytes,rtt_ms,retransmission,pipe_bytes,ts_rtt_ms,dup_ack,zero_window,window_full,naive_flight_bytes";

pub struct PacketWriter<W: Write> {
    out: W,
    flows: Vec<u64>,
    error: Option<std::io::Error>,
}

impl<W: Write> PacketWriter<W> {
    pub fn new(mut out: W, flows: Vec<u64>) -> std::io::Result<Self> {
        writeln!(out, "{HEADER}")?;
        Ok(PacketWriter {
            out,
            flows,
            error: None,
        })
    }

    pub fn finish(mut self) -> std::io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush()
    }

    fn row(&mut self, e: &SegmentEvent) -> std::io::Result<()> {
        let o = &mut self.out;
        let t = e.ts.nanos();
        write!(
            o,
            "{},{}.{:09},{},{},{},",
            e.frame,
            t.div_euclid(1_000_000_000),
            t.rem_euclid(1_000_000_000),
            e.flow,
            e.dir.as_str(),
            e.seq
        )?;
        if let Some(a) = e.ack {
            write!(o, "{a}")?;
        }
        write!(o, ",{},{:?},{},", e.len, e.flags, e.win_raw)?;
        if let Some(w) = e.win_bytes {
            write!(o, "{w}")?;
        }
        o.write_all(b",")?;
        if let Some(f) = e.flight {
            write!(o, "{f}")?;
        }
        o.write_all(b",")?;
        if let Some(r) = e.ack_rtt {
            write!(o, "{:.3}", r.raw.millis_f64())?;
        }
        write!(o, ",{},", e.send.retransmission as u8)?;
        if let Some(p) = e.pipe {
            write!(o, "{p}")?;
        }
        o.write_all(b",")?;
        if let Some(r) = e.ts_rtt {
            write!(o, "{:.3}", r.raw.millis_f64())?;
        }
        writeln!(
            o,
            ",{},{},{}",
            e.acked.duplicate as u8, e.zero_window as u8, e.send.window_full as u8
        )
    }
}

impl<W: Write> Observer for PacketWriter<W> {
    fn on_segment(&mut self, e: &SegmentEvent) {
        if self.error.is_some() || (!self.flows.is_empty() && !self.flows.contains(&e.flow)) {
            return;
        }
        if let Err(err) = self.row(e) {
            self.error = Some(err);
        }
    }
}
