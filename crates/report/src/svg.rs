//! Inline SVG charts for report.html, as strings: the file size x record size heatmap of
//! a measure (throughput, p50 or p99 latency; exact value on hover via <title>), the
//! ratio heatmap against the baseline (diverging colours, non-significant cells marked),
//! IOzone's 2D view (throughput vs file size, one line per record size) and the
//! percentile plot of one cell (one line per target). No script, no external resource. Not: page layout (see
//! `html`).

use crate::compare;
use crate::format;
use crate::model::{CellKey, CellStats, Comparison, Verdict};
use crate::tails;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Escapes text for XML/HTML content and attributes.
pub fn esc(t: &str) -> String {
    let mut s = String::with_capacity(t.len());
    for c in t.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&#39;"),
            _ => s.push(c),
        }
    }
    s
}

const VIRIDIS: [(u8, u8, u8); 9] = [
    (68, 1, 84),
    (71, 44, 122),
    (59, 81, 139),
    (44, 113, 142),
    (33, 144, 141),
    (39, 173, 129),
    (92, 200, 99),
    (170, 220, 50),
    (253, 231, 37),
];

fn lerp(a: (u8, u8, u8), b: (u8, u8, u8), t: f64) -> (u8, u8, u8) {
    let m = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * t).round() as u8;
    (m(a.0, b.0), m(a.1, b.1), m(a.2, b.2))
}

/// A sequential colour for t in [0, 1].
pub fn viridis(t: f64) -> String {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * (VIRIDIS.len() - 1) as f64;
    let i = (x.floor() as usize).min(VIRIDIS.len() - 2);
    let (r, g, b) = lerp(VIRIDIS[i], VIRIDIS[i + 1], x - i as f64);
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// A diverging colour for a ratio: red below 1, white at 1, blue above; saturates at 0.5x/2x.
pub fn diverging(ratio: f64) -> String {
    let l = if ratio > 0.0 && ratio.is_finite() {
        ratio.log2().clamp(-1.0, 1.0)
    } else {
        0.0
    };
    let white = (247, 247, 247);
    let (r, g, b) = if l >= 0.0 {
        lerp(white, (33, 102, 172), l)
    } else {
        lerp(white, (178, 24, 43), -l)
    };
    format!("#{r:02x}{g:02x}{b:02x}")
}

fn luminous(hex: &str) -> bool {
    let v =
        |i: usize| u8::from_str_radix(hex.get(i..i + 2).unwrap_or("00"), 16).unwrap_or(0) as f64;
    0.299 * v(1) + 0.587 * v(3) + 0.114 * v(5) > 150.0
}

/// Short value for inside a cell: 4.8G, 812M, 95K (binary, per second).
fn short_rate(kib_s: f64) -> String {
    if kib_s >= 1024.0 * 1024.0 {
        format!("{:.1}G", kib_s / 1024.0 / 1024.0)
    } else if kib_s >= 1024.0 {
        format!("{:.0}M", kib_s / 1024.0)
    } else {
        format!("{kib_s:.0}K")
    }
}

const CELL_W: usize = 44;
const CELL_H: usize = 20;
const LEFT: usize = 58;
const TOP: usize = 30;

fn grid_frame(s: &mut String, title: &str, files: &[u64], recs: &[u64]) -> (usize, usize) {
    // Wide enough for the title (about 7 px a character at 13 px), not only the cells.
    let w = (LEFT + CELL_W * recs.len() + 10).max(LEFT + title.chars().count() * 7);
    let h = TOP + CELL_H * files.len() + 34;
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="{t}"><text x="{LEFT}" y="14" class="ct">{t}</text>"#,
        t = esc(title)
    );
    for (i, f) in files.iter().enumerate() {
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" class="ax" text-anchor="end">{}</text>"#,
            LEFT - 4,
            TOP + i * CELL_H + CELL_H / 2 + 4,
            format::short_size(*f)
        );
    }
    for (j, r) in recs.iter().enumerate() {
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" class="ax" text-anchor="middle">{}</text>"#,
            LEFT + j * CELL_W + CELL_W / 2,
            TOP + files.len() * CELL_H + 13,
            format::short_size(*r)
        );
    }
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" class="ax" text-anchor="middle">record size →</text><text x="4" y="{}" class="ax">file ↓</text>"#,
        LEFT + recs.len() * CELL_W / 2,
        TOP + files.len() * CELL_H + 28,
        TOP - 4
    );
    (w, h)
}

/// What a heatmap shows of each cell: its value, how it is written inside the cell and
/// on hover, and whether lower is better (then the colour scale turns over, so the
/// bright end is always the better one).
pub struct Measure {
    pub value: fn(&CellStats) -> Option<f64>,
    pub short: fn(f64) -> String,
    pub long: fn(f64) -> String,
    pub hover: fn(CellKey, &CellStats) -> String,
    pub lower_is_better: bool,
}

fn throughput_hover((f, r): CellKey, c: &CellStats) -> String {
    let ci =
        c.ci.map(|(a, b)| format!(", 95% CI {a:.0}-{b:.0}"))
            .unwrap_or_default();
    let cv = c.cv.map(|v| format!(", CV {v:.1}%")).unwrap_or_default();
    let iops = if r <= tails::IOPS_MAX_RECORD {
        format!(", {} ops/s", format::ops(tails::iops(c.median, r)))
    } else {
        String::new()
    };
    format!(
        "{} file, {} records: median {:.0} KiB/s ({}){iops}, n={}{ci}{cv}",
        format::size(f),
        format::size(r),
        c.median,
        format::rate(c.median),
        c.values.len(),
    )
}

fn latency_hover((f, r): CellKey, c: &CellStats) -> String {
    let Some(t) = &c.tail else {
        return String::new();
    };
    let pct: Vec<String> = tails::PERCENTILES
        .iter()
        .zip(t.percentiles)
        .filter_map(|(n, v)| Some(format!("{n} {}", format::latency(v?))))
        .collect();
    format!(
        "{} file, {} records: {} (medians over {} repetitions); p99/p50 {:.1}x",
        format::size(f),
        format::size(r),
        pct.join(", "),
        t.p99_by_rep.len(),
        t.jitter
    )
}

fn p50_hover((f, r): CellKey, c: &CellStats) -> String {
    let p50 = c.tail.as_ref().map(|t| t.p50()).unwrap_or(f64::NAN);
    format!(
        "{} file, {} records: p50 {} (the p99 map has every percentile)",
        format::size(f),
        format::size(r),
        format::latency(p50)
    )
}

/// Median throughput, as the matrix is read.
pub const THROUGHPUT: Measure = Measure {
    value: |c| Some(c.median),
    short: short_rate,
    long: format::rate,
    hover: throughput_hover,
    lower_is_better: false,
};

/// Median p50 latency.
pub const P50: Measure = Measure {
    value: |c| c.tail.as_ref().map(|t| t.p50()).filter(|v| v.is_finite()),
    short: short_latency,
    long: format::latency,
    hover: p50_hover,
    lower_is_better: true,
};

/// Median p99 latency.
pub const P99: Measure = Measure {
    value: |c| c.tail.as_ref().map(|t| t.p99()).filter(|v| v.is_finite()),
    short: short_latency,
    long: format::latency,
    hover: latency_hover,
    lower_is_better: true,
};

/// Short latency for inside a cell: 85u, 410u, 4.1m, 1.2s.
fn short_latency(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.1}s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.1}m", us / 1e3)
    } else {
        format!("{us:.0}µ")
    }
}

/// The range of a measure over every cell of every label, for a shared scale.
pub fn range_of<'a>(
    m: &Measure,
    cells: impl IntoIterator<Item = &'a BTreeMap<CellKey, CellStats>>,
) -> Option<(f64, f64)> {
    let v: Vec<f64> = cells
        .into_iter()
        .flat_map(|c| c.values().filter_map(m.value))
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(0.0, f64::max);
    (!v.is_empty()).then_some((lo, hi))
}

/// Heatmap of one label and operation; colours on a log scale shared through `range`.
pub fn heatmap(
    title: &str,
    cells: Option<&BTreeMap<CellKey, CellStats>>,
    all: &[CellKey],
    range: (f64, f64),
    m: &Measure,
) -> String {
    let files = axis(all, |c| c.0);
    let recs = axis(all, |c| c.1);
    let mut s = String::new();
    grid_frame(&mut s, title, &files, &recs);
    let (lo, hi) = (range.0.max(1e-9).ln(), range.1.max(1e-9).ln());
    for (i, f) in files.iter().enumerate() {
        for (j, r) in recs.iter().enumerate() {
            let key = (*f, *r);
            let (x, y) = (LEFT + j * CELL_W, TOP + i * CELL_H);
            let cell = cells.and_then(|c| c.get(&key));
            match cell.and_then(|c| Some((c, (m.value)(c)?))) {
                Some((c, v)) => {
                    let t = if hi > lo {
                        (v.ln() - lo) / (hi - lo)
                    } else {
                        0.5
                    };
                    let col = viridis(if m.lower_is_better { 1.0 - t } else { t });
                    let _ = write!(
                        s,
                        r##"<g><title>{}</title><rect x="{x}" y="{y}" width="{}" height="{}" fill="{col}"/><text x="{}" y="{}" class="cv" fill="{}">{}</text></g>"##,
                        esc(&(m.hover)(key, c)),
                        CELL_W - 1,
                        CELL_H - 1,
                        x + CELL_W / 2,
                        y + CELL_H / 2 + 4,
                        if luminous(&col) { "#111" } else { "#fff" },
                        (m.short)(v)
                    );
                }
                None if all.contains(&key) => {
                    let _ = write!(
                        s,
                        r##"<g><title>{} file, {} records: missing for this input</title><rect x="{x}" y="{y}" width="{}" height="{}" class="miss"/><text x="{}" y="{}" class="cv" fill="#666">–</text></g>"##,
                        format::size(*f),
                        format::size(*r),
                        CELL_W - 1,
                        CELL_H - 1,
                        x + CELL_W / 2,
                        y + CELL_H / 2 + 4
                    );
                }
                None => {}
            }
        }
    }
    s.push_str("</svg>");
    s
}

/// Ratio heatmap of a label against the baseline: blue better, red worse (for a measure
/// where lower is better, such as latency, a ratio above 1 is worse); "○" marks an
/// inconclusive cell, "=" an equivalent one, "?" not testable, "–" a cell one side lacks.
pub fn ratio_heatmap(
    title: &str,
    comps: &BTreeMap<CellKey, Comparison>,
    all: &[CellKey],
    lower_is_better: bool,
) -> String {
    let files = axis(all, |c| c.0);
    let recs = axis(all, |c| c.1);
    let mut s = String::new();
    grid_frame(&mut s, title, &files, &recs);
    for (i, f) in files.iter().enumerate() {
        for (j, r) in recs.iter().enumerate() {
            let key = (*f, *r);
            if !all.contains(&key) {
                continue;
            }
            let (x, y) = (LEFT + j * CELL_W, TOP + i * CELL_H);
            let cell = format!("{} file, {} records", format::size(*f), format::size(*r));
            match comps.get(&key) {
                Some(c) => {
                    let col = diverging(if lower_is_better {
                        1.0 / c.ratio
                    } else {
                        c.ratio
                    });
                    let mark = match c.verdict {
                        Verdict::Faster | Verdict::Slower => "",
                        Verdict::Equivalent => " =",
                        Verdict::Inconclusive => " ○",
                        Verdict::NotTestable => " ?",
                    };
                    let _ = write!(
                        s,
                        r##"<g><title>{cell}: ratio {:.3} ({}), {} {} (q {}), Mann-Whitney {}: {}</title><rect x="{x}" y="{y}" width="{}" height="{}" fill="{col}"/><text x="{}" y="{}" class="cv" fill="{}">{:.2}{mark}</text></g>"##,
                        c.ratio,
                        compare::change_with_ci(c.ratio, c.ci),
                        if c.paired() { "paired t" } else { "Welch" },
                        format::p(c.p),
                        c.q.map(|q| format!("{q:.3}"))
                            .unwrap_or_else(|| "n/a".into()),
                        format::p(c.p_mwu),
                        if lower_is_better {
                            c.verdict.describe_lower_is_better()
                        } else {
                            c.verdict.describe()
                        },
                        CELL_W - 1,
                        CELL_H - 1,
                        x + CELL_W / 2,
                        y + CELL_H / 2 + 4,
                        if luminous(&col) { "#111" } else { "#fff" },
                        c.ratio
                    );
                }
                None => {
                    let _ = write!(
                        s,
                        r##"<g><title>{cell}: missing on one side</title><rect x="{x}" y="{y}" width="{}" height="{}" class="miss"/><text x="{}" y="{}" class="cv" fill="#666">–</text></g>"##,
                        CELL_W - 1,
                        CELL_H - 1,
                        x + CELL_W / 2,
                        y + CELL_H / 2 + 4
                    );
                }
            }
        }
    }
    s.push_str("</svg>");
    s
}

fn axis(all: &[CellKey], f: fn(&CellKey) -> u64) -> Vec<u64> {
    let mut v: Vec<u64> = all.iter().map(f).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// IOzone's 2D view: throughput (linear) against file size (log2), one line per record size.
pub fn lines_2d(title: &str, cells: &BTreeMap<CellKey, CellStats>, y_max: f64) -> String {
    let (w, h, l, t, b, r) = (560usize, 300usize, 64usize, 24usize, 40usize, 110usize);
    let files = axis(&cells.keys().copied().collect::<Vec<_>>(), |c| c.0);
    let recs = axis(&cells.keys().copied().collect::<Vec<_>>(), |c| c.1);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="{t2}"><text x="{l}" y="14" class="ct">{t2}</text>"#,
        t2 = esc(title)
    );
    let pw = (w - l - r) as f64;
    let ph = (h - t - b) as f64;
    let (fmin, fmax) = (
        files.first().copied().unwrap_or(1) as f64,
        files.last().copied().unwrap_or(1) as f64,
    );
    let xs = |f: u64| -> f64 {
        if fmax > fmin {
            l as f64 + ((f as f64).log2() - fmin.log2()) / (fmax.log2() - fmin.log2()) * pw
        } else {
            l as f64 + pw / 2.0
        }
    };
    // The unit once, on the axis; round numbers on the ticks.
    let (unit, per) = format::rate_unit(y_max.max(1.0));
    let step = nice_step(y_max.max(1.0) / per / 4.0) * per;
    let ymax = (y_max.max(1.0) * 1.05).max(step);
    let ys = |v: f64| -> f64 { t as f64 + ph - v / ymax * ph };
    let mut v = 0.0;
    while v <= ymax {
        let y = ys(v);
        let _ = write!(
            s,
            r##"<line x1="{l}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" class="ax" text-anchor="end">{}</text>"##,
            w - r,
            l - 4,
            y + 4.0,
            if v == 0.0 {
                "0".to_string()
            } else {
                format::sig3(v / per)
            }
        );
        v += step;
    }
    let _ = write!(s, r#"<text x="4" y="14" class="ax">{unit}</text>"#);
    // File sizes double: label every k-th so labels stay 34 px apart.
    let every = (1..=files.len().max(1))
        .find(|k| files.len() < 2 || (xs(files[1]) - xs(files[0])) * *k as f64 >= 34.0)
        .unwrap_or(1);
    for (i, f) in files.iter().enumerate() {
        if i % every != 0 {
            continue;
        }
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{}" class="ax" text-anchor="middle">{}</text>"#,
            xs(*f),
            h - b + 14,
            format::short_size(*f)
        );
    }
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" class="ax" text-anchor="middle">file size</text>"#,
        l as f64 + pw / 2.0,
        h - 8
    );
    for (i, rec) in recs.iter().enumerate() {
        let col = viridis(if recs.len() > 1 {
            i as f64 / (recs.len() - 1) as f64 * 0.92
        } else {
            0.4
        });
        let pts: Vec<(u64, &CellStats)> = cells
            .iter()
            .filter(|(k, _)| k.1 == *rec)
            .map(|(k, c)| (k.0, c))
            .collect();
        let path: Vec<String> = pts
            .iter()
            .map(|(f, c)| format!("{:.1},{:.1}", xs(*f), ys(c.median)))
            .collect();
        let _ = write!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{col}" stroke-width="1.6"/>"#,
            path.join(" ")
        );
        for (f, c) in &pts {
            let _ = write!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="2.6" fill="{col}"><title>{} file, {} records: {:.0} KiB/s ({})</title></circle>"#,
                xs(*f),
                ys(c.median),
                format::size(*f),
                format::size(*rec),
                c.median,
                format::rate(c.median)
            );
        }
        let ly = t + 10 + i * 13;
        if ly < h - 10 {
            legend_entry(
                &mut s,
                w - r + 8,
                ly,
                &col,
                &format!("{} rec", format::short_size(*rec)),
            );
        }
    }
    s.push_str("</svg>");
    s
}

/// A round step near `raw`: 1, 2, 2.5 or 5 times a power of ten.
fn nice_step(raw: f64) -> f64 {
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * p)
}

/// One line of a chart's key at (`x`, `y`): a swatch of `colour`, then `label`.
fn legend_entry(s: &mut String, x: usize, y: usize, colour: &str, label: &str) {
    let _ = write!(
        s,
        r#"<line x1="{x}" x2="{}" y1="{y}" y2="{y}" stroke="{colour}" stroke-width="3"/><text x="{}" y="{}" class="ax">{}</text>"#,
        x + 16,
        x + 20,
        y + 4,
        esc(label)
    );
}

/// A colour legend for the sequential scale of a measure.
pub fn legend(range: (f64, f64), m: &Measure) -> String {
    let mut s = String::from(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="520" height="30" viewBox="0 0 520 30" role="img" aria-label="colour scale">"#,
    );
    for k in 0..40 {
        let t = k as f64 / 39.0;
        let _ = write!(
            s,
            r#"<rect x="{}" y="2" width="6" height="12" fill="{}"/>"#,
            40 + k * 6,
            viridis(if m.lower_is_better { 1.0 - t } else { t })
        );
    }
    let _ = write!(
        s,
        r#"<text x="86" y="12" class="ax" text-anchor="end">{}</text><text x="334" y="12" class="ax">{}</text><text x="90" y="27" class="ax">log scale, shared by the targets of this operation{}</text></svg>"#,
        (m.long)(range.0),
        (m.long)(range.1),
        if m.lower_is_better {
            "; brighter is lower (better)"
        } else {
            ""
        }
    );
    s
}

/// A percentile plot of one cell: latency (log scale) at p50, p90, p99, p99.9, p99.99
/// and max, evenly spaced as "nines", one line per target.
pub fn percentile_plot(title: &str, lines: &[(String, [Option<f64>; 6])]) -> String {
    let (w, h, l, t, b, r) = (520usize, 260usize, 64usize, 24usize, 40usize, 150usize);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="{t2}"><text x="{l}" y="14" class="ct">{t2}</text>"#,
        t2 = esc(title)
    );
    let all: Vec<f64> = lines
        .iter()
        .flat_map(|(_, p)| p.iter().flatten().copied())
        .filter(|v| *v > 0.0 && v.is_finite())
        .collect();
    if all.is_empty() {
        s.push_str("</svg>");
        return s;
    }
    let lo = all
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .log10()
        .floor();
    let hi = all
        .iter()
        .copied()
        .fold(0.0, f64::max)
        .log10()
        .ceil()
        .max(lo + 1.0);
    let (pw, ph) = ((w - l - r) as f64, (h - t - b) as f64);
    let n = tails::PERCENTILES.len();
    let xs = |i: usize| l as f64 + i as f64 / (n - 1) as f64 * pw;
    let ys = |v: f64| t as f64 + ph - (v.log10() - lo) / (hi - lo) * ph;
    let mut decade = lo;
    while decade <= hi {
        let y = ys(10f64.powf(decade));
        let _ = write!(
            s,
            r##"<line x1="{l}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" class="ax" text-anchor="end">{}</text>"##,
            w - r,
            l - 4,
            y + 4.0,
            format::latency(10f64.powf(decade))
        );
        decade += 1.0;
    }
    for (i, name) in tails::PERCENTILES.iter().enumerate() {
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{}" class="ax" text-anchor="middle">{name}</text>"#,
            xs(i),
            h - b + 14
        );
    }
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" class="ax" text-anchor="middle">percentile (log latency)</text>"#,
        l as f64 + pw / 2.0,
        h - 8
    );
    for (k, (label, p)) in lines.iter().enumerate() {
        let col = viridis(if lines.len() > 1 {
            k as f64 / (lines.len() - 1) as f64 * 0.85
        } else {
            0.4
        });
        let pts: Vec<(usize, f64)> = p
            .iter()
            .enumerate()
            .filter_map(|(i, v)| Some((i, (*v)?)))
            .filter(|(_, v)| *v > 0.0)
            .collect();
        let path: Vec<String> = pts
            .iter()
            .map(|(i, v)| format!("{:.1},{:.1}", xs(*i), ys(*v)))
            .collect();
        let _ = write!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{col}" stroke-width="1.8"/>"#,
            path.join(" ")
        );
        for (i, v) in &pts {
            let _ = write!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="2.8" fill="{col}"><title>{}: {} {}</title></circle>"#,
                xs(*i),
                ys(*v),
                esc(label),
                tails::PERCENTILES[*i],
                format::latency(*v)
            );
        }
        let ly = t + 10 + k * 14;
        legend_entry(&mut s, w - r + 8, ly, &col, label);
    }
    s.push_str("</svg>");
    s
}
