//! Human-readable quantities for evidence and advice (bytes in KiB/MiB, rates in Mbit/s).

pub fn bytes(b: f64) -> String {
    const K: f64 = 1024.0;
    if b >= K * K * K {
        format!("{:.2} GiB", b / (K * K * K))
    } else if b >= K * K {
        format!("{:.2} MiB", b / (K * K))
    } else if b >= K {
        format!("{:.0} KiB", b / K)
    } else {
        format!("{b:.0} B")
    }
}

/// A rate given in bytes/s, printed in bits/s.
pub fn rate(bytes_per_s: f64) -> String {
    let bps = bytes_per_s * 8.0;
    if bps >= 1e9 {
        format!("{:.2} Gbit/s", bps / 1e9)
    } else if bps >= 1e6 {
        format!("{:.1} Mbit/s", bps / 1e6)
    } else if bps >= 1e3 {
        format!("{:.1} kbit/s", bps / 1e3)
    } else {
        format!("{bps:.0} bit/s")
    }
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
        assert_eq!(ms(0.1003), "100 ms");
        assert_eq!(ms(0.0403), "40.3 ms");
        assert_eq!(pct(0.943), "94%");
    }
}
