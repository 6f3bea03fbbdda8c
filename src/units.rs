//! Human-readable quantities, the one way every output writes them (text, HTML, plots'
//! legends, batch summaries, evidence and advice): bytes in B/KiB/MiB/GiB, rates in bit/s
//! with decimal prefixes, durations in ns/µs/ms/s, shares in percent — each with three
//! significant digits.
//!
//! The law these functions keep (and their tests prove): a value that is not zero never
//! prints as zero. A LAN's 17 µs RTT reads "17.0 µs", not "0.0 ms"; a BDP of 0.4 bytes reads
//! "0.400 B". Only an exact zero prints as "0".

/// `v` (>= 0) with three significant digits; exact zero is "0".
pub fn sig3(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    // Decimals for three significant digits, judged after rounding (9.996 -> "10.0").
    let mut decimals = (2 - a.log10().floor() as i32).max(0);
    let rounded = |d: i32| (a * 10f64.powi(d)).round() / 10f64.powi(d);
    if decimals > 0 && rounded(decimals) >= 10f64.powi(3 - decimals) {
        decimals -= 1;
    }
    // Below 1e-12 of the unit nothing we measure is meaningful; keep it visibly non-zero.
    let decimals = decimals.min(15) as usize;
    format!("{v:.decimals$}")
}

/// Bytes, in B below 1 KiB and binary prefixes above.
pub fn bytes(b: f64) -> String {
    const K: f64 = 1024.0;
    if b >= K * K * K {
        format!("{} GiB", sig3(b / (K * K * K)))
    } else if b >= K * K {
        format!("{} MiB", sig3(b / (K * K)))
    } else if b >= K {
        format!("{} KiB", sig3(b / K))
    } else if b == b.trunc() {
        format!("{b:.0} B")
    } else {
        format!("{} B", sig3(b))
    }
}

/// A rate in bits/s, with decimal prefixes (as tc, iperf3 and link speeds are written).
pub fn bits(bps: f64) -> String {
    if bps >= 1e9 {
        format!("{} Gbit/s", sig3(bps / 1e9))
    } else if bps >= 1e6 {
        format!("{} Mbit/s", sig3(bps / 1e6))
    } else if bps >= 1e3 {
        format!("{} kbit/s", sig3(bps / 1e3))
    } else {
        format!("{} bit/s", sig3(bps))
    }
}

/// A rate given in bytes/s, printed in bits/s.
pub fn rate(bytes_per_s: f64) -> String {
    bits(bytes_per_s * 8.0)
}

/// A duration given in seconds: s from one second, ms from 1 ms, µs and ns below.
pub fn secs(s: f64) -> String {
    let a = s.abs();
    if a == 0.0 {
        "0 s".into()
    } else if a >= 1.0 {
        format!("{} s", sig3(s))
    } else if a >= 1e-3 {
        format!("{} ms", sig3(s * 1e3))
    } else if a >= 1e-6 {
        format!("{} µs", sig3(s * 1e6))
    } else {
        format!("{} ns", sig3(s * 1e9))
    }
}

/// A duration given in seconds, as an RTT is read: always in ms from 1 ms up (a 13.5 s
/// RTT reads "13537 ms", beside the others in ms), µs and ns below.
pub fn ms(s: f64) -> String {
    if s.abs() >= 1e-3 {
        let m = s * 1e3;
        if m.abs() >= 1000.0 {
            format!("{m:.0} ms")
        } else {
            format!("{} ms", sig3(m))
        }
    } else {
        secs(s)
    }
}

/// A duration given in milliseconds (the unit of the JSON's `rtt_ms`).
pub fn millis(m: f64) -> String {
    ms(m / 1e3)
}

/// A share (1.0 = 100%): whole percents, with more digits below 1% so that a share that is
/// not zero never reads "0%".
pub fn pct(x: f64) -> String {
    let p = x * 100.0;
    if p == 0.0 || p.abs() >= 1.0 {
        format!("{p:.0}%")
    } else {
        format!("{}%", sig1(p))
    }
}

/// A share printed beside a line it is compared with (the 85% of the capacity a full path
/// delivers): with the digits that keep it apart from the line where whole percents would
/// print the two alike ("84.7%" below an 85% line, never "85% ... below the 85%").
pub fn pct_beside(x: f64, line: f64) -> String {
    let shown = pct(x);
    if x == line || shown != pct(line) {
        return shown;
    }
    (1..=4usize)
        .map(|d| (format!("{:.*}%", d, x * 100.0), format!("{:.*}%", d, line * 100.0)))
        .find(|(a, b)| a != b)
        .map_or(shown, |(a, _)| a)
}

/// A part's share of a whole, as [`pct`], but never "100%" for a part short of the whole
/// (a part that rounds up reads "over 99%"): beside "17 of 21" a whole would contradict it.
pub fn pct_part(x: f64) -> String {
    let shown = pct(x);
    if x < 1.0 && shown == "100%" {
        "over 99%".into()
    } else {
        shown
    }
}

/// A count with its noun, singular for one: "1 ACK", "46 times".
pub fn count(n: u64, singular: &str, plural: &str) -> String {
    if n == 1 {
        format!("1 {singular}")
    } else {
        format!("{n} {plural}")
    }
}

/// How many times `x` is of something (a flight 12x the BDP), for ratios that outgrow
/// percents.
pub fn times(x: f64) -> String {
    format!("{}x", sig3(x))
}

/// Reads back a quantity written by this module ("8.00 KiB", "50.0 Mbit/s", "17.0 µs",
/// "94%", "2.5x"): the value in its base unit (bytes, bit/s, seconds, a share, a ratio).
/// The laws use it to hold every sentence to the numbers beside it.
pub fn parse(s: &str) -> Option<f64> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num.parse().ok()?;
    let k = match unit.trim() {
        "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "bit/s" => 1.0,
        "kbit/s" => 1e3,
        "Mbit/s" => 1e6,
        "Gbit/s" => 1e9,
        "s" => 1.0,
        "ms" => 1e-3,
        "µs" => 1e-6,
        "ns" => 1e-9,
        "%" => 0.01,
        "x" | "" => 1.0,
        _ => return None,
    };
    Some(v * k)
}

/// Whether a printed quantity `shown` (as [`parse`] reads it) stands for `value`: equal
/// within the rounding of three significant digits (and of whole percents).
pub fn agrees(shown: &str, value: f64) -> bool {
    let Some(v) = parse(shown) else { return false };
    if shown.trim_end().ends_with('%') {
        return (v - value).abs() <= 0.005 + 0.005 * value.abs();
    }
    if value == 0.0 {
        return v == 0.0;
    }
    (v / value - 1.0).abs() <= 0.006
}

/// One significant digit, for the sub-percent shares (0.3%, 0.004%).
fn sig1(v: f64) -> String {
    let decimals = (-(v.abs().log10().floor() as i32)).clamp(0, 15) as usize;
    format!("{v:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_beside_its_line_keeps_the_digits_that_part_them() {
        assert_eq!(pct_beside(0.847, 0.85), "84.7%");
        assert_eq!(pct_beside(0.8499, 0.85), "84.99%");
        assert_eq!(pct_beside(0.6, 0.85), "60%");
        assert_eq!(pct_beside(0.85, 0.85), "85%");
        assert_eq!(pct_beside(0.852, 0.85), "85.2%");
    }
    use proptest::prelude::*;

    #[test]
    fn a_part_short_of_the_whole_never_reads_whole() {
        assert_eq!(pct_part(0.996), "over 99%");
        assert_eq!(pct_part(1.0), "100%");
        assert_eq!(pct_part(0.5), "50%");
        assert_eq!(pct_part(0.004), "0.4%");
    }

    #[test]
    fn units_read_naturally() {
        assert_eq!(bytes(262_144.0), "256 KiB");
        assert_eq!(bytes(1_250_000.0), "1.19 MiB");
        assert_eq!(rate(6_250_000.0), "50.0 Mbit/s");
        assert_eq!(bits(6_230_000.0), "6.23 Mbit/s");
        assert_eq!(bytes(18_841.0), "18.4 KiB");
        assert_eq!(bytes(0.0), "0 B");
        assert_eq!(bytes(900.0), "900 B");
        assert_eq!(ms(0.1003), "100 ms");
        assert_eq!(ms(0.0403), "40.3 ms");
        assert_eq!(ms(13.5367), "13537 ms");
        assert_eq!(ms(0.000017), "17.0 µs");
        assert_eq!(ms(0.0045), "4.50 ms");
        assert_eq!(secs(23.7), "23.7 s");
        assert_eq!(secs(6.784), "6.78 s");
        assert_eq!(secs(0.206), "206 ms");
        assert_eq!(pct(0.943), "94%");
        assert_eq!(pct(0.003), "0.3%");
        assert_eq!(pct(0.0), "0%");
        assert_eq!(sig3(9.996), "10.0");
        assert_eq!(sig3(99.96), "100");
        assert_eq!(sig3(0.0173), "0.0173");
    }

    /// The numeric part of a formatted quantity.
    fn number(s: &str) -> f64 {
        s.trim_end_matches(|c: char| !c.is_ascii_digit())
            .parse()
            .unwrap_or_else(|_| panic!("{s}"))
    }

    proptest! {
        /// The law: a value that is not zero never prints as zero, in any unit.
        #[test]
        fn a_value_that_is_not_zero_never_prints_as_zero(v in 1e-12f64..1e13) {
            for s in [bytes(v), bits(v), rate(v), ms(v), secs(v), pct(v), millis(v), sig3(v)] {
                prop_assert!(number(&s) > 0.0, "{v} -> {s}");
            }
        }

        /// What is written reads back as what it stands for.
        #[test]
        fn written_quantities_read_back(v in 1e-9f64..1e12) {
            for s in [bytes(v), bits(v), secs(v), times(v)] {
                prop_assert!(agrees(&s, v), "{v} -> {s} -> {:?}", parse(&s));
            }
            prop_assert!(agrees(&pct(v / 1e12), v / 1e12), "{}", pct(v / 1e12));
        }

        /// Three significant digits: the printed number is within half a unit of its last
        /// digit of the value (relative error below 0.5%).
        #[test]
        fn three_significant_digits(v in 1e-9f64..1e9) {
            let s = sig3(v);
            let back: f64 = s.parse().unwrap();
            prop_assert!((back / v - 1.0).abs() <= 0.005, "{v} -> {s}");
        }
    }
}
