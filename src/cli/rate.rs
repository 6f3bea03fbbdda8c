//! Rates as people write them: tc's units (tc(8), "RATES": `bit`, `kbit`, `mbit`, ...
//! bits per second with SI prefixes, `kibit`, `mibit`, ... with IEC ones, and `bps`,
//! `kbps`, `mbps`, ... BYTES per second — case does not matter, as in tc), iperf3's bare
//! suffixes (`-b 50M`: 50 Mbit/s, 1000-based), and the spellings outputs use (`50 Mbit/s`,
//! iperf3's `50 Mbits/sec`, `6 MB/s`).
//!
//! `Mbps` is the one trap: tc reads it as megabytes per second, and so does bdpscope
//! (following tc's table), where many tools mean megabits. When a rate is read in bytes
//! per second, bdpscope says so on standard error with the bits it makes.

/// The prefix multiplier: SI (k, m, g, t) or IEC (ki, mi, gi, ti), case-insensitive.
fn prefix(p: &str) -> Option<f64> {
    Some(match p.to_ascii_lowercase().as_str() {
        "" => 1.0,
        "k" => 1e3,
        "m" => 1e6,
        "g" => 1e9,
        "t" => 1e12,
        "ki" => 1024.0,
        "mi" => 1024.0 * 1024.0,
        "gi" => 1024.0 * 1024.0 * 1024.0,
        "ti" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    })
}

/// Bits (8 per byte) for a unit after its prefix, or None.
fn unit_bits(u: &str) -> Option<f64> {
    // Case matters only for the "/s" spellings of bytes: B/s is bytes, b/s bits.
    if matches!(u, "B/s" | "B/sec") {
        return Some(8.0);
    }
    Some(match u.to_ascii_lowercase().as_str() {
        "" | "bit" | "bits" | "bit/s" | "bits/s" | "bit/sec" | "bits/sec" | "b/s" => 1.0,
        // tc: bps is bytes per second.
        "bps" | "byte/s" | "bytes/s" | "bytes/sec" => 8.0,
        _ => return None,
    })
}

/// Parses a rate into bits per second: `50mbit`, `50M`, `1gbit`, `50Mbit/s`, `100000`,
/// `2.5mibit`, `6mbps` (tc: 6 megabytes/s = 48 Mbit/s).
pub fn parse(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'))
        .unwrap_or(t.len());
    // "1e6" is a number; "1e" followed by letters is not: back off to the last digit.
    let split = t[..split]
        .rfind(|c: char| c.is_ascii_digit() || c == '.')
        .map_or(0, |i| i + 1);
    let (num, rest) = t.split_at(split);
    let rest = rest.trim();
    let hint = "try 50mbit or 50M (bits), 6mbps (tc: megabytes), 1gbit";
    let v: f64 = num.parse().map_err(|_| format!("not a rate: {s:?} ({hint})"))?;
    // The longest prefix that leaves a known unit.
    let (mult, per) = (0..=rest.len().min(2))
        .rev()
        .filter(|&n| rest.is_char_boundary(n))
        .find_map(|n| Some((prefix(&rest[..n])?, unit_bits(&rest[n..])?)))
        .ok_or_else(|| format!("not a rate unit: {rest:?} in {s:?} ({hint})"))?;
    let bps = v * mult * per;
    if !(bps > 0.0 && bps.is_finite()) {
        return Err(format!("the rate must be positive: {s:?}"));
    }
    if per == 8.0 {
        eprintln!(
            "bdpscope: note: {s:?} read as bytes per second (tc's table: bps is bytes): {}",
            bdpscope::units::bits(bps)
        );
    }
    Ok(bps)
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn tc_and_iperf3_spellings() {
        // tc(8): SI bits.
        assert_eq!(parse("50mbit"), Ok(50e6));
        assert_eq!(parse("1gbit"), Ok(1e9));
        assert_eq!(parse("50kbit"), Ok(50e3));
        assert_eq!(parse("50Mbit"), Ok(50e6), "tc ignores case");
        assert_eq!(parse("100bit"), Ok(100.0));
        // tc(8): IEC bits.
        assert_eq!(parse("1mibit"), Ok(1_048_576.0));
        assert_eq!(parse("2kibit"), Ok(2048.0));
        // tc(8): bps is BYTES per second.
        assert_eq!(parse("50mbps"), Ok(400e6));
        assert_eq!(parse("50Mbps"), Ok(400e6));
        assert_eq!(parse("1kbps"), Ok(8e3));
        assert_eq!(parse("125bps"), Ok(1000.0));
        // iperf3 -b: bare suffixes, bits, 1000-based.
        assert_eq!(parse("50M"), Ok(50e6));
        assert_eq!(parse("1.5G"), Ok(1.5e9));
        assert_eq!(parse("800k"), Ok(800e3));
        assert_eq!(parse("100000"), Ok(1e5));
        assert_eq!(parse("1e6"), Ok(1e6));
        // What outputs print.
        assert_eq!(parse("50Mbit/s"), Ok(50e6));
        assert_eq!(parse("50 Mbit/s"), Ok(50e6));
        assert_eq!(parse("94.1 Mbits/sec"), Ok(94.1e6));
        assert_eq!(parse("6 MB/s"), Ok(48e6));
        assert_eq!(parse("6 Mb/s"), Ok(6e6));
        for bad in ["fast", "-5M", "0", "50Mb", "50 parsecs", "M", "", "1e"] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
