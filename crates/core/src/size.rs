//! Byte sizes as users type them: `4k`, `16m`, `2g`, lists `4k,64k` and doubling ranges
//! `4k..16m`. Binary units (1k = 1,024 bytes), as IOzone uses. Not a general unit library.

use std::fmt;

/// A size that could not be understood, with the text that was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeError(pub String);

impl fmt::Display for SizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SizeError {}

/// What a bare number (no suffix) means: bytes for `run`, KiB for IOzone's `-s`/`-r`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BareUnit {
    Bytes,
    KiB,
}

/// Parses one size such as `4k`, `1M`, `2g`, `512` (bare per `bare`). Zero and negatives are errors.
pub fn parse_size(text: &str, bare: BareUnit) -> Result<u64, SizeError> {
    let t = text.trim();
    let bad = |why: &str| SizeError(format!("invalid size '{text}': {why}"));
    if t.is_empty() {
        return Err(bad("empty"));
    }
    if t.starts_with('-') {
        return Err(bad("sizes cannot be negative"));
    }
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(split);
    if digits.is_empty() {
        return Err(bad("expected a number such as 4k, 16m or 2g"));
    }
    let n: u64 = digits.parse().map_err(|_| bad("number too large"))?;
    let mult: u64 = match suffix.to_ascii_lowercase().as_str() {
        "" => match bare {
            BareUnit::Bytes => 1,
            BareUnit::KiB => 1 << 10,
        },
        "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => {
            return Err(bad(
                "unknown unit (none or b for bytes; k, m, g, t, also as kb or kib: all binary)",
            ))
        }
    };
    let v = n.checked_mul(mult).ok_or_else(|| bad("too large"))?;
    if v == 0 {
        return Err(bad("must be greater than zero"));
    }
    Ok(v)
}

/// Parses a comma-separated list whose items are sizes or doubling ranges `a..b`.
/// The result is sorted and without duplicates.
pub fn parse_size_list(text: &str, bare: BareUnit) -> Result<Vec<u64>, SizeError> {
    let mut out = Vec::new();
    for item in text.split(',') {
        if let Some((a, b)) = item.split_once("..") {
            let (lo, hi) = (parse_size(a, bare)?, parse_size(b, bare)?);
            if lo > hi {
                return Err(SizeError(format!(
                    "invalid range '{item}': start is larger than end"
                )));
            }
            let mut v = lo;
            while v <= hi {
                out.push(v);
                v = match v.checked_mul(2) {
                    Some(n) => n,
                    None => break,
                };
            }
        } else {
            out.push(parse_size(item, bare)?);
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Formats bytes compactly with the largest exact binary unit: `4k`, `16m`, `2g`, `1000`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "t"),
        (1 << 30, "g"),
        (1 << 20, "m"),
        (1 << 10, "k"),
    ];
    for (mult, unit) in UNITS {
        if bytes >= mult && bytes.is_multiple_of(mult) {
            return format!("{}{unit}", bytes / mult);
        }
    }
    bytes.to_string()
}

/// Formats an amount that is rarely exact (free space, memory) in its largest binary unit,
/// to one decimal: `23.5 GiB`, `512.0 MiB`, `100 B`.
pub fn format_amount(bytes: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ];
    for (mult, unit) in UNITS {
        if bytes >= mult {
            return format!("{:.1} {unit}", bytes as f64 / mult as f64);
        }
    }
    format!("{bytes} B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_shown_in_their_largest_unit() {
        assert_eq!(format_amount(24_684_052 * 1024), "23.5 GiB");
        assert_eq!(format_amount(1 << 40), "1.0 TiB");
        assert_eq!(format_amount(100), "100 B");
    }

    #[test]
    fn parses_suffixes_and_bare_numbers() {
        assert_eq!(parse_size("4k", BareUnit::Bytes), Ok(4096));
        assert_eq!(parse_size("16M", BareUnit::Bytes), Ok(16 << 20));
        assert_eq!(parse_size("2g", BareUnit::Bytes), Ok(2 << 30));
        assert_eq!(parse_size("512", BareUnit::Bytes), Ok(512));
        assert_eq!(parse_size("512", BareUnit::KiB), Ok(512 << 10));
    }

    #[test]
    fn rejects_malformed_sizes() {
        for bad in [
            "12q",
            "-4k",
            "0",
            "",
            "k",
            "0k",
            "99999999999999999999",
            "4kk",
        ] {
            assert!(parse_size(bad, BareUnit::Bytes).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn ranges_double_and_lists_merge() {
        assert_eq!(
            parse_size_list("4k..32k", BareUnit::Bytes).unwrap(),
            vec![4096, 8192, 16384, 32768]
        );
        assert_eq!(
            parse_size_list("1m,4k,1m", BareUnit::Bytes).unwrap(),
            vec![4096, 1 << 20]
        );
        assert!(parse_size_list("1m..4k", BareUnit::Bytes).is_err());
    }

    #[test]
    fn formats_round_trip() {
        for v in [4096u64, 1 << 20, 3 << 30, 1000] {
            assert_eq!(parse_size(&format_size(v), BareUnit::Bytes), Ok(v));
        }
    }
}
