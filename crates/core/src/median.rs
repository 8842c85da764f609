//! The median of repeated samples and its distribution-free 95% confidence interval: the
//! rule `--reps auto` stops on (see `engine`) and the interval the report shows, so both
//! say the same thing. Not: the comparisons between targets (see the report's `compare`).

/// Confidence of the interval.
pub const CONFIDENCE: f64 = 0.95;

/// The fewest samples whose interval reaches 95%: with six, [min, max] covers the median
/// with probability 1 - 2/64 = 96.9%; with five it would be 93.8%.
pub const MIN_SAMPLES_FOR_CI: usize = 6;

/// Median of the values (the mean of the middle two for an even count); NaN when empty.
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The 95% interval of the median from order statistics: [x(j), x(n+1-j)] with the largest
/// j for which P(Binomial(n, 1/2) < j) <= 2.5%. It assumes nothing about the distribution
/// but independent samples, and its coverage is at least 95%. `None` below six values.
pub fn median_ci(values: &[f64]) -> Option<(f64, f64)> {
    let n = values.len();
    if n < MIN_SAMPLES_FOR_CI {
        return None;
    }
    let j = lower_rank(n);
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    Some((v[j - 1], v[n - j]))
}

/// The interval's half-width, the larger side, in percent of the median; `None` below six
/// values or for a median that is not positive.
pub fn ci_half_width_pct(values: &[f64]) -> Option<f64> {
    let (lo, hi) = median_ci(values)?;
    let m = median(values);
    (m > 0.0).then(|| (m - lo).max(hi - m) / m * 100.0)
}

/// About how many samples bring the interval of the median within ±`width_pct` at the spread
/// of `values`. The interval narrows as 1/√n: for samples spread as a normal distribution
/// its half-width is about 1.96 × 1.2533 × σ/√n, so the width takes (2.457 σ / width)²
/// samples, σ taken robustly (1.4826 × the median absolute deviation, in percent of the
/// median) so that one wild sample does not inflate it. Never fewer than `values` holds;
/// `None` below six values or for a median that is not positive.
pub fn samples_for_width(values: &[f64], width_pct: f64) -> Option<f64> {
    let m = median(values);
    if values.len() < MIN_SAMPLES_FOR_CI || m <= 0.0 || width_pct <= 0.0 {
        return None;
    }
    let deviations: Vec<f64> = values.iter().map(|x| (x - m).abs()).collect();
    let sigma_pct = 1.4826 * median(&deviations) / m * 100.0;
    Some(
        (2.457 * sigma_pct / width_pct)
            .powi(2)
            .ceil()
            .max(values.len() as f64),
    )
}

/// The largest j (1-based) with P(B < j) <= (1 - CONFIDENCE) / 2 for B ~ Binomial(n, 1/2),
/// at least 1. Summed in log space so that large n does not underflow.
fn lower_rank(n: usize) -> usize {
    let tail = (1.0 - CONFIDENCE) / 2.0;
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut ln_choose = 0.0; // ln C(n, k)
    let mut below = 0.0; // P(B <= k)
    let mut j = 1;
    for k in 0..n / 2 {
        below += (ln_choose + ln_half_n).exp();
        if below > tail + 1e-12 {
            break;
        }
        j = k + 1;
        ln_choose += ((n - k) as f64 / (k + 1) as f64).ln();
    }
    j
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_match_the_binomial_tables() {
        // Ranks from the exact binomial, as in Conover's tables of the sign-test interval.
        assert_eq!(lower_rank(6), 1);
        assert_eq!(lower_rank(8), 1);
        assert_eq!(lower_rank(9), 2);
        assert_eq!(lower_rank(10), 2);
        assert_eq!(lower_rank(20), 6);
        assert_eq!(lower_rank(30), 10);
        assert_eq!(lower_rank(100), 40);
        // Far beyond f64's 0.5^n underflow: near n/2 - 0.98 sqrt(n).
        let j = lower_rank(10_000);
        assert!((4_900..=4_903).contains(&j), "{j}");
    }

    #[test]
    fn samples_for_a_width_follow_the_robust_spread() {
        // Median 100, absolute deviations 0 4 4 8 8 0: σ = 1.4826 × 4 = 5.93%, so ±3%
        // takes (2.457 × 5.93 / 3)² = 23.6 samples; ±30% no more than the six there are.
        let v = [100.0, 104.0, 96.0, 108.0, 92.0, 100.0];
        assert_eq!(samples_for_width(&v, 3.0), Some(24.0));
        assert_eq!(samples_for_width(&v, 30.0), Some(6.0));
        // One wild sample does not move it.
        let wild = [100.0, 104.0, 96.0, 108.0, 92.0, 100.0, 400.0];
        assert!(samples_for_width(&wild, 3.0).unwrap() < 30.0);
        assert_eq!(samples_for_width(&v[..5], 3.0), None);
    }

    #[test]
    fn interval_is_the_order_statistics_and_half_width_the_wider_side() {
        assert_eq!(median_ci(&[1.0, 2.0, 3.0, 4.0, 5.0]), None);
        let v = [10.0, 12.0, 9.0, 11.0, 10.5, 10.2];
        assert_eq!(median_ci(&v), Some((9.0, 12.0)));
        assert_eq!(median(&v), 10.35);
        let w = ci_half_width_pct(&v).unwrap();
        assert!((w - (12.0 - 10.35) / 10.35 * 100.0).abs() < 1e-9, "{w}");
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(median_ci(&v), Some((2.0, 9.0)));
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn coverage_is_at_least_95_percent() {
        // Samples of a skewed distribution (exponential, median ln 2) from a fixed stream.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut uniform = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        for n in [6, 7, 12, 25] {
            let trials = 4000;
            let covered = (0..trials)
                .filter(|_| {
                    let v: Vec<f64> = (0..n).map(|_| -(1.0 - uniform()).ln()).collect();
                    let (lo, hi) = median_ci(&v).unwrap();
                    lo <= 2f64.ln() && 2f64.ln() <= hi
                })
                .count();
            let rate = covered as f64 / trials as f64;
            assert!(rate > 0.94, "n = {n}: coverage {rate}");
        }
    }
}
