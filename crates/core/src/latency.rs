//! Per-operation latency, recorded into an HDR histogram (1 ns to 1 h, 2 significant
//! digits: about 40 KiB, cheap enough to stay on by default) and summarised as percentiles.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Latency of the system calls of one measurement.
pub struct LatencyRecorder {
    hist: Histogram<u64>,
}

/// The percentiles a record carries, in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub lat_count: u64,
    pub lat_mean_us: f64,
    pub lat_p50_us: f64,
    pub lat_p90_us: f64,
    pub lat_p99_us: f64,
    pub lat_p999_us: f64,
    /// 0 in records written before it was kept.
    #[serde(default)]
    pub lat_p9999_us: f64,
    pub lat_max_us: f64,
}

impl Default for LatencyRecorder {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyRecorder {
    pub fn new() -> Self {
        let hist = Histogram::new_with_bounds(1, 3_600_000_000_000, 2)
            .expect("static histogram bounds are valid");
        LatencyRecorder { hist }
    }

    /// Adds one operation's latency in nanoseconds.
    #[inline]
    pub fn record_ns(&mut self, ns: u64) {
        self.hist.saturating_record(ns.max(1));
    }

    /// Folds another worker's latencies into this one.
    pub fn merge(&mut self, other: &LatencyRecorder) {
        // Both have the same bounds, so adding cannot fail.
        let _ = self.hist.add(&other.hist);
    }

    pub fn summary(&self) -> LatencySummary {
        let us = |ns: u64| ns as f64 / 1000.0;
        let h = &self.hist;
        if h.is_empty() {
            return LatencySummary::default();
        }
        LatencySummary {
            lat_count: h.len(),
            lat_mean_us: h.mean() / 1000.0,
            lat_p50_us: us(h.value_at_quantile(0.50)),
            lat_p90_us: us(h.value_at_quantile(0.90)),
            lat_p99_us: us(h.value_at_quantile(0.99)),
            lat_p999_us: us(h.value_at_quantile(0.999)),
            lat_p9999_us: us(h.value_at_quantile(0.9999)),
            lat_max_us: us(h.max()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_ordered_and_close() {
        let mut r = LatencyRecorder::new();
        for i in 1..=1000u64 {
            r.record_ns(i * 1000);
        }
        let s = r.summary();
        assert_eq!(s.lat_count, 1000);
        assert!((s.lat_p50_us - 500.0).abs() < 10.0, "{s:?}");
        assert!((s.lat_p99_us - 990.0).abs() < 15.0, "{s:?}");
        assert!(s.lat_p50_us <= s.lat_p90_us && s.lat_p90_us <= s.lat_p99_us);
        assert!(s.lat_p99_us <= s.lat_p999_us && s.lat_p999_us <= s.lat_p9999_us);
        assert!(s.lat_p9999_us <= s.lat_max_us);
    }

    #[test]
    fn merge_adds_counts() {
        let mut a = LatencyRecorder::new();
        let mut b = LatencyRecorder::new();
        a.record_ns(10);
        b.record_ns(20);
        a.merge(&b);
        assert_eq!(a.summary().lat_count, 2);
    }
}
