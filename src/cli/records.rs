//! Which records of each capture are analysed, the way tcpdump, tshark and editcap users
//! say it: `-r FILE`, a trailing capture filter (`bdpscope analyze cap.pcap host 10.1.1.2
//! and port 443`) or `-f EXPR`, `-c N`, `--from`/`--until`.
//!
//! Splitting the words: with `-r`, every word after the options is the filter (tcpdump's
//! rule). Without it, the first word is a capture (two for `compare`), and so is each
//! next word that names an existing file (or folder, for `batch`) or is `-`; the filter
//! starts at the first word that does not.

use crate::records::{Compiler, Records};
use bdpscope::capture::LinkType;
use bdpscope::select::Bound;
use bdpscope::time::{Span, Timestamp};
use clap::Args;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A usage error: the message is printed and the exit status is 2 (as clap's own).
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The options that choose records (shared by every command that reads captures).
#[derive(Args, Debug, Clone, Default)]
pub struct RecordArgs {
    /// Read this capture (tcpdump's -r; repeatable). With -r, the words after the
    /// options are all the capture filter.
    #[arg(short = 'r', long = "read", value_name = "FILE")]
    pub read: Vec<PathBuf>,
    /// The capture filter, in pcap-filter(7) syntax as tcpdump takes it (the same as
    /// trailing words; for scripts). Compiled by libpcap through tcpdump.
    #[arg(short = 'f', long = "filter", value_name = "EXPR")]
    pub filter: Option<String>,
    /// Only the first N packets of each capture that pass the filter and the time
    /// window (tcpdump -c).
    #[arg(short = 'c', long = "count", value_name = "N")]
    pub count: Option<u64>,
    /// Only packets at or after TIME (editcap -A): +SECONDS after the capture's first
    /// packet (+90, +1.5s, +250ms, +2min), seconds since the epoch (1700000000.25), or
    /// YYYY-MM-DDThh:mm:ss[.fraction][Z|+hh:mm] (local time without a zone, as editcap).
    #[arg(long, value_name = "TIME", value_parser = parse_bound)]
    pub from: Option<Bound>,
    /// Only packets before TIME (editcap -B); the same formats as --from.
    #[arg(long, value_name = "TIME", value_parser = parse_bound)]
    pub until: Option<Bound>,
}

/// How many leading words are captures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Exactly one capture (`packets`, `plot`).
    One,
    /// Exactly two (`compare`).
    Two,
    /// One or more files (`analyze`, `report`).
    Files,
    /// One or more files or folders (`batch`).
    Paths,
}

/// Splits the words into captures and a filter, and compiles the filter once to
/// find usage errors before anything is read.
pub fn resolve(words: &[PathBuf], args: &RecordArgs, expect: Expect) -> Result<Records, UsageError> {
    let (captures, filter_words) = split(words, args, expect)?;
    let filter = match (&args.filter, filter_words.is_empty()) {
        (Some(_), false) => {
            return Err(UsageError(format!(
                "a filter is given twice: with -f and as the words {:?}",
                join(&filter_words)
            )))
        }
        (Some(f), true) => Some(f.trim().to_string()),
        (None, false) => Some(join(&filter_words)),
        (None, true) => None,
    }
    .filter(|f| !f.is_empty());
    let compiler = match filter {
        None => None,
        Some(expr) => {
            let c = Compiler::new(&expr).map_err(UsageError)?;
            check(&c, &filter_words, !args.read.is_empty())?;
            Some(Arc::new(c))
        }
    };
    if let (Some(Bound::At(a)), Some(Bound::At(b))) = (args.from, args.until) {
        if b <= a {
            return Err(UsageError(
                "--until is not after --from: no packet is in the window".into(),
            ));
        }
    }
    Ok(Records {
        captures,
        compiler,
        count: args.count,
        from: args.from,
        until: args.until,
    })
}

fn join(words: &[PathBuf]) -> String {
    words.iter().map(|w| w.to_string_lossy()).collect::<Vec<_>>().join(" ")
}

fn is_input(p: &Path, expect: Expect) -> bool {
    p.as_os_str() == "-" || p.is_file() || (expect == Expect::Paths && p.is_dir())
}

/// Captures and filter words (see the module docs).
fn split(words: &[PathBuf], args: &RecordArgs, expect: Expect) -> Result<(Vec<PathBuf>, Vec<PathBuf>), UsageError> {
    let (mut captures, filter): (Vec<PathBuf>, Vec<PathBuf>) = if !args.read.is_empty() {
        (args.read.clone(), words.to_vec())
    } else {
        let fixed = match expect {
            Expect::One => 1,
            Expect::Two => 2,
            Expect::Files | Expect::Paths => 1,
        }
        .min(words.len());
        let mut n = fixed;
        if matches!(expect, Expect::Files | Expect::Paths) {
            while n < words.len() && is_input(&words[n], expect) {
                n += 1;
            }
        }
        (words[..n].to_vec(), words[n..].to_vec())
    };
    if args.filter.is_some() && !filter.is_empty() && args.read.is_empty() {
        // With -f every word is a capture: report a missing file as such.
        captures.extend(filter);
        return Ok((captures, Vec::new()));
    }
    let need = match expect {
        Expect::One => (1, Some(1)),
        Expect::Two => (2, Some(2)),
        Expect::Files | Expect::Paths => (1, None),
    };
    let what = if expect == Expect::Paths {
        "capture or folder"
    } else {
        "capture"
    };
    if captures.len() < need.0 {
        return Err(UsageError(match need.0 {
            1 => format!("no {what} given (a path, `-` for standard input, or -r FILE)"),
            n => format!("{n} captures are needed, {} given", captures.len()),
        }));
    }
    if need.1.is_some_and(|max| captures.len() > max) {
        return Err(UsageError(format!(
            "this command reads {} capture(s), {} given with -r",
            need.1.unwrap_or(0),
            captures.len()
        )));
    }
    Ok((captures, filter))
}

/// Link types bdpscope decodes (decode/link.rs), tried in this order when the filter is
/// checked: an expression libpcap compiles for none of them selects nothing bdpscope
/// can analyse, which makes it a usage error. Ethernet first: most captures are.
const DECODED: [LinkType; 11] = [
    LinkType::ETHERNET,
    LinkType::LINUX_SLL,
    LinkType::LINUX_SLL2,
    LinkType::RAW,
    LinkType::IPV4,
    LinkType::IPV6,
    LinkType::NULL,
    LinkType::LOOP,
    LinkType::PPP,
    LinkType::ARCNET_LINUX,
    LinkType::IPOIB,
];

fn check(c: &Compiler, filter_words: &[PathBuf], with_r: bool) -> Result<(), UsageError> {
    let mut first_error = None;
    for link in DECODED {
        match c.compile(link) {
            Ok(_) => return Ok(()),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let why = first_error.unwrap_or_default();
    // A capture after -r, or a mistyped capture name, is taken for the start of a filter:
    // say so.
    if let Some(w) = filter_words.first() {
        let s = w.to_string_lossy();
        if with_r && w.is_file() {
            return Err(UsageError(format!(
                "{s}: with -r, the words after the options are the capture filter; give each capture with its own -r (-r a.pcap -r b.pcap)"
            )));
        }
        let looks_like_a_file = s.contains('/')
            || [".pcap", ".pcapng", ".cap", ".gz", ".zst"]
                .iter()
                .any(|x| s.ends_with(x));
        if looks_like_a_file {
            return Err(UsageError(format!(
                "{s}: no such file (the words from here on were taken as a capture filter, and libpcap \
                 refused it: {why})"
            )));
        }
    }
    Err(UsageError(format!(
        "the capture filter \"{}\" is not valid: {why} (libpcap; see pcap-filter(7))",
        c.expression()
    )))
}

/// `--from`/`--until`: `+DURATION` after the first packet, seconds since the epoch, or an
/// ISO 8601 date and time (local time when it has no zone, as editcap's -A/-B).
pub fn parse_bound(s: &str) -> Result<Bound, String> {
    let t = s.trim();
    if let Some(rel) = t.strip_prefix('+') {
        return parse_duration(rel)
            .map(Bound::AfterFirst)
            .ok_or_else(|| format!("not a duration after the first packet: {s:?} (try +30, +1.5s, +250ms, +2min)"));
    }
    if let Some(ns) = epoch_nanos(t) {
        return Ok(Bound::At(Timestamp::from_nanos(ns)));
    }
    parse_datetime(t).map(Bound::At).ok_or_else(|| {
        format!(
            "not a time: {s:?} (give +SECONDS after the first packet, seconds since the epoch, \
             or YYYY-MM-DDThh:mm:ss[.fraction][Z|+hh:mm])"
        )
    })
}

/// "1700000000.123456789": seconds since the epoch, exact to the nanosecond (an f64
/// keeps only about 0.2 µs of a present-day time).
fn epoch_nanos(s: &str) -> Option<i64> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: i64 = int.parse().ok()?;
    let digits = &frac[..frac.len().min(9)];
    let frac_ns = if digits.is_empty() {
        0
    } else {
        digits.parse::<i64>().ok()? * 10i64.pow(9 - digits.len() as u32)
    };
    secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// "90", "1.5s", "250ms", "20us", "2min" (seconds when no unit).
fn parse_duration(s: &str) -> Option<Span> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num.parse().ok()?;
    let secs = match unit.trim() {
        "" | "s" => v,
        "ms" => v / 1e3,
        "us" | "µs" => v / 1e6,
        "ns" => v / 1e9,
        "min" => v * 60.0,
        "h" => v * 3600.0,
        _ => return None,
    };
    (secs.is_finite() && secs >= 0.0).then(|| Span::from_secs_f64(secs))
}

fn parse_datetime(s: &str) -> Option<Timestamp> {
    use chrono::{DateTime, Local, NaiveDateTime, TimeZone};
    let s = s.replacen(' ', "T", 1);
    let nanos = |d: DateTime<chrono::FixedOffset>| d.timestamp_nanos_opt();
    if let Ok(d) = DateTime::parse_from_rfc3339(&s) {
        return nanos(d).map(Timestamp::from_nanos);
    }
    let naive = NaiveDateTime::parse_from_str(&s, "%Y-%m-%dT%H:%M:%S%.f").ok()?;
    // editcap reads a time without a zone as local time (mktime); an hour that a clock
    // change skips or repeats has no single meaning and is refused.
    let local = Local.from_local_datetime(&naive).single()?;
    local.timestamp_nanos_opt().map(Timestamp::from_nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_parse_in_every_format() {
        assert_eq!(parse_bound("+90"), Ok(Bound::AfterFirst(Span::from_millis(90_000))));
        assert_eq!(parse_bound("+1.5s"), Ok(Bound::AfterFirst(Span::from_millis(1500))));
        assert_eq!(parse_bound("+250ms"), Ok(Bound::AfterFirst(Span::from_millis(250))));
        assert_eq!(parse_bound("+2min"), Ok(Bound::AfterFirst(Span::from_millis(120_000))));
        assert_eq!(
            parse_bound("1700000000.25"),
            Ok(Bound::At(Timestamp::from_nanos(1_700_000_000_250_000_000)))
        );
        assert_eq!(
            parse_bound("2023-11-14T22:13:20Z"),
            Ok(Bound::At(Timestamp::from_nanos(1_700_000_000_000_000_000)))
        );
        assert_eq!(
            parse_bound("2023-11-14T23:13:20.5+01:00"),
            Ok(Bound::At(Timestamp::from_nanos(1_700_000_000_500_000_000)))
        );
        assert!(
            parse_bound("2023-11-14 22:13:20").is_ok(),
            "local time, space instead of T"
        );
        for bad in ["", "+", "+5 parsecs", "yesterday", "-5", "2023-13-40T00:00:00Z"] {
            assert!(parse_bound(bad).is_err(), "{bad:?}");
        }
    }

    fn words(w: &[&str]) -> Vec<PathBuf> {
        w.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn words_split_into_captures_and_a_filter() {
        let here = env!("CARGO_MANIFEST_DIR");
        let cap = format!("{here}/Cargo.toml");
        let none = RecordArgs::default();
        let (c, f) = split(&words(&[&cap, &cap, "host", "1.2.3.4"]), &none, Expect::Files).unwrap();
        assert_eq!((c.len(), join(&f)), (2, "host 1.2.3.4".into()));
        // The first word is a capture even when it does not exist (its error names it).
        let (c, f) = split(&words(&["missing.pcap", "port", "80"]), &none, Expect::Files).unwrap();
        assert_eq!((c, join(&f)), (words(&["missing.pcap"]), "port 80".into()));
        let (c, f) = split(&words(&["a", "b", "tcp"]), &none, Expect::Two).unwrap();
        assert_eq!((c.len(), join(&f)), (2, "tcp".into()));
        let (c, _) = split(&words(&[here]), &none, Expect::Paths).unwrap();
        assert_eq!(c.len(), 1);
        // With -r every word is the filter, as in tcpdump.
        let r = RecordArgs {
            read: words(&[&cap]),
            ..Default::default()
        };
        let (c, f) = split(&words(&[&cap]), &r, Expect::Files).unwrap();
        assert_eq!((c.len(), f.len()), (1, 1));
        // With -f every word is a capture.
        let ff = RecordArgs {
            filter: Some("tcp".into()),
            ..Default::default()
        };
        let (c, f) = split(&words(&[&cap, "missing.pcap"]), &ff, Expect::Files).unwrap();
        assert_eq!((c.len(), f.len()), (2, 0));
        assert!(split(&[], &none, Expect::Files).is_err());
        assert!(split(&words(&["a"]), &none, Expect::Two).is_err());
        let two_r = RecordArgs {
            read: words(&["a", "b"]),
            ..Default::default()
        };
        assert!(split(&[], &two_r, Expect::One).is_err());
    }
}
