//! Numbers as people read them: throughputs in KB/s, MB/s or GB/s (binary, as IOzone's
//! KB), sizes as 4 KiB / 16 MiB, percentages and p-values. Not: parsing.

/// A throughput given in KiB/s, scaled to a readable unit ("4.80 GB/s").
/// "–" for a figure that is not there (a table cell's way of saying so).
pub fn or_dash(v: Option<String>) -> String {
    v.unwrap_or_else(|| "–".into())
}

pub fn rate(kib_s: f64) -> String {
    if !kib_s.is_finite() {
        return "–".into();
    }
    let (unit, per) = rate_unit(kib_s);
    format!("{} {unit}", sig3(kib_s / per))
}

/// The unit a throughput of `kib_s` is written in, and KiB/s per unit (binary, as
/// IOzone's KB): what `rate` uses, and what an axis names once.
pub fn rate_unit(kib_s: f64) -> (&'static str, f64) {
    if kib_s >= 1024.0 * 1024.0 {
        ("GB/s", 1024.0 * 1024.0)
    } else if kib_s >= 1024.0 {
        ("MB/s", 1024.0)
    } else {
        ("KB/s", 1.0)
    }
}

/// A latency given in microseconds, scaled: "85 µs", "0.41 ms", "1.20 s".
pub fn latency(us: f64) -> String {
    if !us.is_finite() {
        "–".into()
    } else if us >= 1e6 {
        format!("{} s", sig3(us / 1e6))
    } else if us >= 100.0 {
        format!("{} ms", sig3(us / 1e3))
    } else {
        format!("{} µs", sig3(us))
    }
}

/// Operations per second, compact: "950", "12.3k", "1.20M".
pub fn ops(per_s: f64) -> String {
    if !per_s.is_finite() {
        "–".into()
    } else if per_s >= 1e6 {
        format!("{}M", sig3(per_s / 1e6))
    } else if per_s >= 1e3 {
        format!("{}k", sig3(per_s / 1e3))
    } else {
        format!("{per_s:.0}")
    }
}

/// Three significant digits, no exponent.
pub fn sig3(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A size in bytes as "64 KiB", "16 MiB", "2 GiB".
pub fn size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ];
    for (m, u) in UNITS {
        if bytes >= m && bytes.is_multiple_of(m) {
            return format!("{} {u}", bytes / m);
        }
    }
    for (m, u) in UNITS {
        if bytes >= m {
            return format!("{:.1} {u}", bytes as f64 / m as f64);
        }
    }
    format!("{bytes} B")
}

/// A compact size for axes: "64k", "16m", "2g".
pub fn short_size(bytes: u64) -> String {
    sharebench_core::size::format_size(bytes)
}

pub fn pct(v: f64) -> String {
    format!("{v:.0}%")
}

/// A signed percentage change from a ratio: 1.25 -> "+25%".
pub fn change(ratio: f64) -> String {
    if !ratio.is_finite() {
        return "–".into();
    }
    let d = (ratio - 1.0) * 100.0;
    if d.abs() < 10.0 {
        format!("{d:+.1}%")
    } else {
        format!("{d:+.0}%")
    }
}

pub fn p(p: Option<f64>) -> String {
    match p {
        None => "n/a".into(),
        Some(p) if p < 0.001 => "p<0.001".into(),
        Some(p) => format!("p={p:.3}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readable() {
        assert_eq!(rate(4.8 * 1024.0 * 1024.0), "4.80 GB/s");
        assert_eq!(rate(512.0), "512 KB/s");
        assert_eq!(size(16 << 20), "16 MiB");
        assert_eq!(change(1.25), "+25%");
        assert_eq!(change(0.97), "-3.0%");
        assert_eq!(p(Some(0.0001)), "p<0.001");
        assert_eq!(latency(85.0), "85.0 µs");
        assert_eq!(latency(410.0), "0.41 ms");
        assert_eq!(latency(1_200_000.0), "1.20 s");
        assert_eq!(ops(12_345.0), "12.3k");
        assert_eq!(ops(950.0), "950");
    }
}
