//! Choosing records before anyone decodes them: a capture filter, a time window, the
//! first N packets (`tcpdump -r FILE EXPR`, `editcap -A/-B`, `tcpdump -c N`). The reader
//! asks a [`RecordFilter`] about every record and returns only those it keeps, with
//! their original record numbers, so every read loop sees the selection without knowing
//! about it.

use super::Frame;

/// What to do with one record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Return it.
    Keep,
    /// Pass over it.
    Skip,
    /// Return nothing more: the selection is complete (e.g. the first N were returned).
    End,
    /// Stop reading with this reason (e.g. the filter cannot be compiled for this
    /// record's link type); the reader returns [`CaptureError::Filter`](super::CaptureError::Filter).
    Fail(String),
}

/// A per-record choice, asked in capture order, once per record.
pub trait RecordFilter: Send {
    fn decide(&mut self, frame: &Frame<'_>) -> Decision;
}

/// Several filters in turn: a record is kept when each keeps it; the first that does not
/// decides (later filters do not see it, so a count after a filter counts what passed).
#[derive(Default)]
pub struct Chain(pub Vec<Box<dyn RecordFilter>>);

impl RecordFilter for Chain {
    fn decide(&mut self, frame: &Frame<'_>) -> Decision {
        for f in &mut self.0 {
            match f.decide(frame) {
                Decision::Keep => continue,
                other => return other,
            }
        }
        Decision::Keep
    }
}

impl<F: FnMut(&Frame<'_>) -> Decision + Send> RecordFilter for F {
    fn decide(&mut self, frame: &Frame<'_>) -> Decision {
        self(frame)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::{CaptureError, CaptureReader, LinkType, PcapWriter};
    use crate::time::Timestamp;

    fn capture(n: u8) -> CaptureReader {
        let mut w = PcapWriter::new(Vec::new(), LinkType::ETHERNET, 65535, false, false).unwrap();
        for i in 1..=n {
            w.write_packet(Timestamp::from_nanos(i64::from(i) * 1000), &[i; 20], 20)
                .unwrap();
        }
        CaptureReader::from_reader(std::io::Cursor::new(w.into_inner())).unwrap()
    }

    fn numbers(r: &mut CaptureReader) -> Result<Vec<u64>, CaptureError> {
        let mut v = Vec::new();
        while let Some(f) = r.next_frame()? {
            assert_eq!(f.data[0] as u64, f.number, "the bytes of the record numbered so");
            v.push(f.number);
        }
        Ok(v)
    }

    #[test]
    fn kept_records_keep_their_numbers() {
        let mut r = capture(6);
        r.set_filter(Box::new(|f: &Frame<'_>| {
            if f.number.is_multiple_of(2) {
                Decision::Keep
            } else {
                Decision::Skip
            }
        }));
        assert_eq!(numbers(&mut r).unwrap(), [2, 4, 6]);
        assert_eq!((r.frames_read(), r.records_skipped()), (6, 3));
    }

    #[test]
    fn end_stops_and_fail_is_an_error_after_the_records_before() {
        let mut count = 0;
        let mut r = capture(6);
        r.set_filter(Box::new(Chain(vec![
            Box::new(|f: &Frame<'_>| if f.number == 1 { Decision::Skip } else { Decision::Keep }),
            Box::new(move |_: &Frame<'_>| {
                count += 1;
                if count > 2 {
                    Decision::End
                } else {
                    Decision::Keep
                }
            }),
        ])));
        assert_eq!(
            numbers(&mut r).unwrap(),
            [2, 3],
            "the count sees only what passed the first"
        );
        assert!(r.next_frame().unwrap().is_none());

        let mut r = capture(6);
        r.set_filter(Box::new(|f: &Frame<'_>| {
            if f.number == 4 {
                Decision::Fail("no".into())
            } else {
                Decision::Keep
            }
        }));
        let mut got = Vec::new();
        let err = loop {
            match r.next_frame() {
                Ok(Some(f)) => got.push(f.number),
                Ok(None) => panic!("ended without the error"),
                Err(e) => break e,
            }
        };
        assert_eq!(got, [1, 2, 3]);
        assert!(matches!(err, CaptureError::Filter { number: 4, .. }), "{err}");
        assert!(r.next_frame().unwrap().is_none());
    }
}
