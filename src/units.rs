//! Human-readable quantities, the way every output writes them: bytes in B/KiB/MiB/GiB,
//! rates in bit/s with decimal prefixes, times in ms, each with three significant digits.

/// `v` with three significant digits (no more than two decimals).
fn sig3(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

pub fn bytes(b: f64) -> String {
    const K: f64 = 1024.0;
    if b >= K * K * K {
        format!("{} GiB", sig3(b / (K * K * K)))
    } else if b >= K * K {
        format!("{} MiB", sig3(b / (K * K)))
    } else if b >= K {
        format!("{} KiB", sig3(b / K))
    } else {
        format!("{b:.0} B")
    }
}

/// A rate in bits/s.
pub fn bits(bps: f64) -> String {
    if bps >= 1e9 {
        format!("{} Gbit/s", sig3(bps / 1e9))
    } else if bps >= 1e6 {
        format!("{} Mbit/s", sig3(bps / 1e6))
    } else if bps >= 1e3 {
        format!("{} kbit/s", sig3(bps / 1e3))
    } else {
        format!("{bps:.0} bit/s")
    }
}

/// A rate given in bytes/s, printed in bits/s.
pub fn rate(bytes_per_s: f64) -> String {
    bits(bytes_per_s * 8.0)
}

pub fn ms(secs: f64) -> String {
    let m = secs * 1000.0;
    if m >= 100.0 {
        format!("{m:.0} ms")
    } else {
        format!("{m:.1} ms")
    }
}

pub fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_read_naturally() {
        assert_eq!(bytes(262_144.0), "256 KiB");
        assert_eq!(bytes(1_250_000.0), "1.19 MiB");
        assert_eq!(rate(6_250_000.0), "50.0 Mbit/s");
        assert_eq!(bits(6_230_000.0), "6.23 Mbit/s");
        assert_eq!(bytes(18_841.0), "18.4 KiB");
        assert_eq!(ms(0.1003), "100 ms");
        assert_eq!(ms(0.0403), "40.3 ms");
        assert_eq!(pct(0.943), "94%");
    }
}
