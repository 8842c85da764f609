//! Numbers about a handful of repetitions: median, mean, spread, the confidence interval
//! of the median (core's, the one `--reps auto` stops on), outliers, and the two-sample
//! and paired tests the comparisons use. Pure functions of slices; distributions come from `statrs`. Not: grouping records
//! (see `analysis`) or deciding what is significant for a report (see `compare`).
//! The method is documented in `docs/methods/statistics.md`.

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

pub use sharebench_core::median::{median, median_ci};

pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.iter().sum::<f64>() / values.len() as f64
}

/// Sample variance (n - 1); `None` below two values.
pub fn variance(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let m = mean(values);
    Some(values.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (values.len() - 1) as f64)
}

/// Coefficient of variation in percent (sample standard deviation over the mean); `None`
/// below two values or for a mean of zero.
pub fn cv_pct(values: &[f64]) -> Option<f64> {
    let m = mean(values);
    let v = variance(values)?;
    (m > 0.0).then(|| v.sqrt() / m * 100.0)
}

/// A repetition far from the others, by index into the values; `severe` beyond Tukey's
/// outer fence (3 IQR), else beyond the inner one (1.5 IQR).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outlier {
    pub index: usize,
    pub severe: bool,
}

/// Outliers among repetitions. From five values: Tukey's fences, as criterion classifies
/// them (below Q1 − 1.5·IQR or above Q3 + 1.5·IQR mild, 3·IQR severe; quartiles
/// interpolated), and more than 10% from the median, so that a tight cell's 1% wobble is
/// never flagged. With three or four values the quartiles mean nothing, so only a value
/// more than 25% from the median and more than 3 times as far from it as the others'
/// whole range is flagged (severe).
pub fn outliers(values: &[f64]) -> Vec<Outlier> {
    let n = values.len();
    if n < 3 {
        return Vec::new();
    }
    let med = median(values);
    if n < 5 {
        let Some((i, far)) = values
            .iter()
            .enumerate()
            .map(|(i, x)| (i, (x - med).abs()))
            .max_by(|a, b| a.1.total_cmp(&b.1))
        else {
            return Vec::new();
        };
        let others: Vec<f64> = values
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, x)| *x)
            .collect();
        let spread = others.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            - others.iter().copied().fold(f64::INFINITY, f64::min);
        return if far > 0.25 * med.abs() && far > 3.0 * spread {
            vec![Outlier {
                index: i,
                severe: true,
            }]
        } else {
            Vec::new()
        };
    }
    let (q1, q3) = (quantile(values, 0.25), quantile(values, 0.75));
    let iqr = q3 - q1;
    let beyond = |x: f64, k: f64| x < q1 - k * iqr || x > q3 + k * iqr;
    values
        .iter()
        .enumerate()
        .filter(|(_, &x)| (x - med).abs() > 0.10 * med.abs() && beyond(x, 1.5))
        .map(|(index, &x)| Outlier {
            index,
            severe: beyond(x, 3.0),
        })
        .collect()
}

/// The `q` quantile (0 to 1) of `values`, interpolated between order statistics (R's
/// type 7, as criterion and numpy compute quartiles).
pub fn quantile(values: &[f64], q: f64) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let Some(last) = v.len().checked_sub(1) else {
        return f64::NAN;
    };
    let h = q.clamp(0.0, 1.0) * last as f64;
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    v[lo] + (h - lo as f64) * (v[hi] - v[lo])
}

/// The geometric mean of positive values: the centre that Welch's interval of a ratio
/// (`welch_log_ci`) is built around, a's over b's.
pub fn geometric_mean(values: &[f64]) -> f64 {
    mean(&values.iter().map(|v| v.ln()).collect::<Vec<_>>()).exp()
}

/// Welch's two-sample t-test on the logarithms of positive values (so a ratio of
/// throughputs is a difference of means): two-sided p. `None` when a side has fewer than
/// two values or a value is not positive. Two constant samples give p = 1 when equal and
/// p = 0 when they differ.
pub fn welch_log_p(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() < 2
        || b.len() < 2
        || a.iter()
            .chain(b)
            .any(|&x| x.is_nan() || x <= 0.0 || !x.is_finite())
    {
        return None;
    }
    let la: Vec<f64> = a.iter().map(|x| x.ln()).collect();
    let lb: Vec<f64> = b.iter().map(|x| x.ln()).collect();
    let (ma, mb) = (mean(&la), mean(&lb));
    let (va, vb) = (variance(&la)?, variance(&lb)?);
    let (na, nb) = (la.len() as f64, lb.len() as f64);
    let se2 = va / na + vb / nb;
    if se2 <= 0.0 {
        return Some(if (ma - mb).abs() < 1e-12 { 1.0 } else { 0.0 });
    }
    let t = (ma - mb) / se2.sqrt();
    let df = se2 * se2 / ((va / na).powi(2) / (na - 1.0) + (vb / nb).powi(2) / (nb - 1.0));
    let dist = StudentsT::new(0.0, 1.0, df.max(1.0)).ok()?;
    Some((2.0 * (1.0 - dist.cdf(t.abs()))).clamp(0.0, 1.0))
}

/// Welch's 95% interval of the ratio of geometric means, a over b (the interval of the
/// difference of mean logarithms, exponentiated): the interval of the test above. `None`
/// as for `welch_log_p`; two constant samples give the one ratio they have.
pub fn welch_log_ci(a: &[f64], b: &[f64]) -> Option<(f64, f64)> {
    welch_log_p(a, b)?;
    let la: Vec<f64> = a.iter().map(|x| x.ln()).collect();
    let lb: Vec<f64> = b.iter().map(|x| x.ln()).collect();
    let d = mean(&la) - mean(&lb);
    let (va, vb) = (variance(&la)?, variance(&lb)?);
    let (na, nb) = (la.len() as f64, lb.len() as f64);
    let se2 = va / na + vb / nb;
    if se2 <= 0.0 {
        return Some((d.exp(), d.exp()));
    }
    let df = se2 * se2 / ((va / na).powi(2) / (na - 1.0) + (vb / nb).powi(2) / (nb - 1.0));
    let t = StudentsT::new(0.0, 1.0, df.max(1.0))
        .ok()?
        .inverse_cdf(0.975);
    let half = t * se2.sqrt();
    Some(((d - half).exp(), (d + half).exp()))
}

/// One-sample t-test of log ratios against 0 (ratio 1), two-sided: the p and the 95%
/// interval of the geometric mean ratio; for paired values, give `ln a - ln b` per pair.
/// `None` below two values; values that all agree give p = 1 for a ratio of 1 and p = 0
/// otherwise.
pub fn mean_log_t(d: &[f64]) -> Option<(f64, (f64, f64))> {
    let (p, (lo, hi)) = mean_t(d)?;
    Some((p, (lo.exp(), hi.exp())))
}

/// One-sample t-test of differences against 0, two-sided: the p and the 95% interval of
/// their mean. `None` below two values; values that all agree give p = 1 for a mean of 0
/// and p = 0 otherwise.
pub fn mean_t(d: &[f64]) -> Option<(f64, (f64, f64))> {
    if d.len() < 2 || d.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let (m, v, n) = (mean(d), variance(d)?, d.len() as f64);
    if v <= 0.0 {
        return Some((if m.abs() < 1e-12 { 1.0 } else { 0.0 }, (m, m)));
    }
    let se = (v / n).sqrt();
    let dist = StudentsT::new(0.0, 1.0, n - 1.0).ok()?;
    let p = (2.0 * (1.0 - dist.cdf((m / se).abs()))).clamp(0.0, 1.0);
    let half = dist.inverse_cdf(0.975) * se;
    Some((p, (m - half, m + half)))
}

/// Delete-one jackknife over clusters, for a statistic on logarithms that many values share
/// (a geometric mean over the cells of a run, whose repetitions are the clusters): `full` is
/// the statistic on every cluster, `without[i]` with cluster `i` left out. Their spread gives
/// its standard error, and with it the two-sided p against 0 (ratio 1) and the 95%
/// t-interval (n - 1 degrees of freedom), exponentiated, as `mean_log_t` gives them. For the
/// mean itself it is exactly `mean_log_t`. `None` below three clusters.
pub fn jackknife_log_t(full: f64, without: &[f64]) -> Option<(f64, (f64, f64))> {
    let n = without.len();
    if n < 3 || !full.is_finite() || without.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let m = mean(without);
    let ss: f64 = without.iter().map(|x| (x - m).powi(2)).sum();
    let se = ((n - 1) as f64 / n as f64 * ss).sqrt();
    if se <= 1e-15 {
        return Some((
            if full.abs() < 1e-12 { 1.0 } else { 0.0 },
            (full.exp(), full.exp()),
        ));
    }
    let dist = StudentsT::new(0.0, 1.0, (n - 1) as f64).ok()?;
    let p = (2.0 * (1.0 - dist.cdf((full / se).abs()))).clamp(0.0, 1.0);
    let half = dist.inverse_cdf(0.975) * se;
    Some((p, ((full - half).exp(), (full + half).exp())))
}

/// The 95% t-interval of the mean of `values` (at least two), exponentiated: for a
/// geometric mean of ratios given their logarithms.
pub fn mean_log_ci(logs: &[f64]) -> Option<(f64, f64)> {
    let v = variance(logs)?;
    let m = mean(logs);
    let n = logs.len() as f64;
    let t = StudentsT::new(0.0, 1.0, n - 1.0).ok()?.inverse_cdf(0.975);
    let half = t * (v / n).sqrt();
    Some(((m - half).exp(), (m + half).exp()))
}

/// Mann-Whitney U two-sided p: exact (counting rank sums, ties given mid-ranks and the
/// exact distribution of the no-tie case) for up to 20 values per side, the normal
/// approximation with tie correction above. `None` when a side is empty.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> Option<f64> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    // U of a: pairs where a wins, ties count one half.
    let mut u = 0.0;
    for &x in a {
        for &y in b {
            if x > y {
                u += 1.0;
            } else if x == y {
                u += 0.5;
            }
        }
    }
    let mean_u = (n1 * n2) as f64 / 2.0;
    if n1 <= 20 && n2 <= 20 {
        // counts[k] = number of orderings with U = k (no ties), by the usual recursion.
        let max_u = n1 * n2;
        let mut table = vec![vec![vec![0f64; max_u + 1]; n2 + 1]; n1 + 1];
        for (i, row) in table.iter_mut().enumerate() {
            for (j, cell) in row.iter_mut().enumerate() {
                if i == 0 || j == 0 {
                    cell[0] = 1.0;
                }
            }
        }
        for i in 1..=n1 {
            for j in 1..=n2 {
                for k in 0..=(i * j) {
                    let with_a_last = if k >= j { table[i - 1][j][k - j] } else { 0.0 };
                    let with_b_last = table[i][j - 1][k];
                    table[i][j][k] = with_a_last + with_b_last;
                }
            }
        }
        let counts = &table[n1][n2];
        let total: f64 = counts.iter().sum();
        let dist = (u - mean_u).abs();
        let extreme: f64 = counts
            .iter()
            .enumerate()
            .filter(|(k, _)| (*k as f64 - mean_u).abs() >= dist - 1e-9)
            .map(|(_, c)| c)
            .sum();
        return Some((extreme / total).min(1.0));
    }
    let mut all: Vec<f64> = a.iter().chain(b).copied().collect();
    all.sort_by(|x, y| x.total_cmp(y));
    let n = (n1 + n2) as f64;
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1] == all[i] {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        i = j + 1;
    }
    let var = (n1 * n2) as f64 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if var <= 0.0 {
        return Some(1.0);
    }
    let z = ((u - mean_u).abs() - 0.5).max(0.0) / var.sqrt();
    let normal = Normal::new(0.0, 1.0).ok()?;
    Some((2.0 * (1.0 - normal.cdf(z))).clamp(0.0, 1.0))
}

/// For a two-sided test that came out `p` (not below `alpha`): about how many times its
/// data it would take to reach `alpha`, if the effect stayed as it is. A test's z grows as
/// √n for a fixed effect, so the factor is (z at alpha / z at p)². `None` for p at or
/// below alpha, or p of 1 (no effect seen: no amount of data decides it).
pub fn data_to_significance(p: f64, alpha: f64) -> Option<f64> {
    if !(p > alpha && p < 1.0) {
        return None;
    }
    let normal = Normal::new(0.0, 1.0).ok()?;
    let z = |p: f64| normal.inverse_cdf(1.0 - p / 2.0);
    Some((z(alpha) / z(p)).powi(2))
}

/// Benjamini-Hochberg adjusted p-values (q), in the input order; `None` stays `None`.
pub fn benjamini_hochberg(p: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut idx: Vec<usize> = (0..p.len()).filter(|&i| p[i].is_some()).collect();
    let m = idx.len() as f64;
    idx.sort_by(|&a, &b| p[a].unwrap_or(1.0).total_cmp(&p[b].unwrap_or(1.0)));
    let mut q = vec![None; p.len()];
    let mut running = 1.0f64;
    for (rank, &i) in idx.iter().enumerate().rev() {
        let v = p[i].unwrap_or(1.0) * m / (rank + 1) as f64;
        running = running.min(v).min(1.0);
        q[i] = Some(running);
    }
    q
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_jackknife_of_a_mean_is_the_t_test_of_it() {
        let logs = [0.10, -0.02, 0.07, 0.01, 0.05];
        let without: Vec<f64> = (0..logs.len())
            .map(|i| {
                let rest: Vec<f64> = (0..logs.len())
                    .filter(|&j| j != i)
                    .map(|j| logs[j])
                    .collect();
                mean(&rest)
            })
            .collect();
        let (p, (lo, hi)) = jackknife_log_t(mean(&logs), &without).unwrap();
        let (tp, (tlo, thi)) = mean_log_t(&logs).unwrap();
        assert!((p - tp).abs() < 1e-9 && (lo - tlo).abs() < 1e-9 && (hi - thi).abs() < 1e-9);
        // Two clusters give no interval.
        assert_eq!(jackknife_log_t(0.1, &[0.1, 0.2]), None);
    }

    #[test]
    fn data_to_significance_scales_with_the_square_of_z() {
        // z = 0.98 at p = 0.327 and 1.96 at 0.05: four times the data.
        let k = data_to_significance(0.327, 0.05).unwrap();
        assert!((k - 4.0).abs() < 0.05, "{k}");
        // Just above alpha: a little more data.
        let k = data_to_significance(0.06, 0.05).unwrap();
        assert!(k > 1.0 && k < 1.1, "{k}");
        assert_eq!(data_to_significance(0.01, 0.05), None);
        assert_eq!(data_to_significance(1.0, 0.05), None);
    }
    use super::*;

    #[test]
    fn medians_and_cv() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
        let cv = cv_pct(&[90.0, 100.0, 110.0]).unwrap();
        assert!((cv - 10.0).abs() < 1e-9);
        assert_eq!(cv_pct(&[1.0]), None);
    }

    #[test]
    fn mann_whitney_matches_tables() {
        // 3 vs 3 completely separated: the smallest two-sided p is 2/20.
        let p = mann_whitney_p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert!((p - 0.1).abs() < 1e-12, "{p}");
        // 5 vs 5 separated: 2/252.
        let p = mann_whitney_p(&[1., 2., 3., 4., 5.], &[6., 7., 8., 9., 10.]).unwrap();
        assert!((p - 2.0 / 252.0).abs() < 1e-12);
        let p = mann_whitney_p(&[1., 3., 5.], &[2., 4., 6.]).unwrap();
        assert!(p > 0.5);
    }

    #[test]
    fn welch_separates_clear_differences() {
        let p = welch_log_p(&[100.0, 101.0, 99.0], &[200.0, 202.0, 198.0]).unwrap();
        assert!(p < 0.001, "{p}");
        let p = welch_log_p(&[100.0, 120.0, 80.0], &[105.0, 95.0, 115.0]).unwrap();
        assert!(p > 0.5, "{p}");
        assert_eq!(welch_log_p(&[1.0], &[2.0, 3.0]), None);
        assert_eq!(welch_log_p(&[5.0, 5.0], &[5.0, 5.0]), Some(1.0));
    }

    #[test]
    fn bh_is_monotone() {
        let q = benjamini_hochberg(&[Some(0.01), Some(0.04), None, Some(0.03)]);
        assert_eq!(q[2], None);
        assert!((q[0].unwrap() - 0.03).abs() < 1e-12);
        assert!((q[1].unwrap() - 0.04).abs() < 1e-12);
        assert!((q[3].unwrap() - 0.04).abs() < 1e-12);
    }

    #[test]
    fn outliers_need_distance() {
        let at = |v: &[f64]| -> Vec<(usize, bool)> {
            outliers(v).iter().map(|o| (o.index, o.severe)).collect()
        };
        assert_eq!(at(&[100.0, 101.0, 99.0, 100.5, 300.0]), [(4, true)]);
        assert!(outliers(&[100.0, 100.0, 101.0]).is_empty());
        assert!(outliers(&[100.0, 101.0, 115.0]).is_empty());
        assert_eq!(at(&[100.0, 101.0, 300.0]), [(2, true)]);
        // Tukey's fences: Q1 = 95.75, Q3 = 102.5 (IQR 6.75) over these eight; 80 is below
        // the inner fence (85.6) but not the outer (75.5): mild; 60 is severe.
        let v = [96.0, 98.0, 100.0, 102.0, 104.0, 95.0, 105.0, 80.0];
        assert_eq!(quantile(&v, 0.25), 95.75);
        assert_eq!(at(&v), [(7, false)]);
        assert_eq!(
            at(&[96.0, 98.0, 100.0, 102.0, 104.0, 95.0, 105.0, 60.0]),
            [(7, true)]
        );
        // A tight cell: outside the fences but within 10% of the median: not flagged.
        assert!(outliers(&[100.0, 100.1, 100.0, 100.1, 100.0, 103.0]).is_empty());
    }
}
