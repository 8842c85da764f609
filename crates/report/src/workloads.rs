//! Report sections for the workloads beyond IOzone's matrix: metadata rate-vs-count curves
//! and per-operation rates (Connectathon basic tests), the buffered-read cliff (test5),
//! small-file phase bars with CPU, stream throughput with extents per file system, and
//! the load workload's load-latency curves (`curves` computes them).
//! Figures are medians over repetitions; every label is one target.

use crate::format;
use crate::model::Analysis;
use crate::stats::median;
use crate::svg::esc;
use maud::{html, Markup, PreEscaped};
use sharebench_core::operation::Operation;
use sharebench_core::record::{Record, Scope, Status, WorkloadKind};
use std::collections::BTreeMap;
use std::fmt::Write;

/// A chart line: name, colour index, dashed, points (x, y).
type Series = (String, usize, bool, Vec<(f64, f64)>);
/// Operations/s and p99 latencies over repetitions.
type RatesP99 = (Vec<f64>, Vec<f64>);
/// Per label: values over repetitions.
type PerLabel<T> = BTreeMap<String, T>;

const PALETTE: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
];

/// One line chart: log2 x axis, linear y from 0; `series` = (name, colour index, dashed, points).
fn chart(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    let (w, h, l, t, b, r) = (600usize, 300usize, 70usize, 24usize, 44usize, 170usize);
    let xs_all: Vec<f64> = series
        .iter()
        .flat_map(|s| s.3.iter().map(|p| p.0))
        .collect();
    let ys_all: Vec<f64> = series
        .iter()
        .flat_map(|s| s.3.iter().map(|p| p.1))
        .filter(|v| v.is_finite())
        .collect();
    let xmin = xs_all
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .max(1e-9);
    let xmax = xs_all.iter().copied().fold(0.0, f64::max).max(xmin);
    let ymax = ys_all.iter().copied().fold(0.0, f64::max).max(1e-9) * 1.05;
    let pw = (w - l - r) as f64;
    let ph = (h - t - b) as f64;
    let xs = |x: f64| {
        if xmax > xmin {
            l as f64 + (x.log2() - xmin.log2()) / (xmax.log2() - xmin.log2()) * pw
        } else {
            l as f64 + pw / 2.0
        }
    };
    let ys = |y: f64| t as f64 + ph - y / ymax * ph;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="{t2}"><text x="{l}" y="14" class="ct">{t2}</text>"#,
        t2 = esc(title)
    );
    for k in 0..=4 {
        let v = ymax * k as f64 / 4.0;
        let y = ys(v);
        let _ = write!(
            s,
            r##"<line x1="{l}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" class="ax" text-anchor="end">{}</text>"##,
            w - r,
            l - 4,
            y + 4.0,
            format::sig3(v)
        );
    }
    let mut ticks: Vec<f64> = xs_all.clone();
    ticks.sort_by(|a, b| a.total_cmp(b));
    ticks.dedup();
    let mut last_x = f64::NEG_INFINITY;
    for x in ticks {
        let px = xs(x);
        if px - last_x < 34.0 {
            continue;
        }
        last_x = px;
        let _ = write!(
            s,
            r#"<text x="{px:.1}" y="{}" class="ax" text-anchor="middle">{}</text>"#,
            h - b + 16,
            format::sig3(x)
        );
    }
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" class="ax" text-anchor="middle">{}</text><text x="12" y="{}" class="ax" transform="rotate(-90 12 {})" text-anchor="middle">{}</text>"#,
        l as f64 + pw / 2.0,
        h - 6,
        esc(x_label),
        t as f64 + ph / 2.0,
        t as f64 + ph / 2.0,
        esc(y_label)
    );
    for (i, (name, colour, dashed, points)) in series.iter().enumerate() {
        let c = PALETTE[colour % PALETTE.len()];
        let pts: Vec<String> = points
            .iter()
            .filter(|p| p.1.is_finite())
            .map(|&(x, y)| format!("{:.1},{:.1}", xs(x), ys(y)))
            .collect();
        let dash = if *dashed {
            r#" stroke-dasharray="5 3""#
        } else {
            ""
        };
        let _ = write!(
            s,
            r#"<polyline fill="none" stroke="{c}" stroke-width="2"{dash} points="{}"/>"#,
            pts.join(" ")
        );
        for &(x, y) in points.iter().filter(|p| p.1.is_finite()) {
            let _ = write!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"><title>{}: {} at {}</title></circle>"#,
                xs(x),
                ys(y),
                esc(name),
                format::sig3(y),
                format::sig3(x)
            );
        }
        let ly = t + 12 + i * 16;
        let _ = write!(
            s,
            r#"<line x1="{}" x2="{}" y1="{ly}" y2="{ly}" stroke="{c}" stroke-width="2"{dash}/><text x="{}" y="{}" class="ax">{}</text>"#,
            w - r + 8,
            w - r + 26,
            w - r + 30,
            ly + 4,
            esc(name)
        );
    }
    s.push_str("</svg>");
    s
}

/// Ok, non-worker records of one workload.
fn of(a: &Analysis, workload: WorkloadKind) -> Vec<&Record> {
    a.records
        .iter()
        .filter(|r| r.workload == workload && r.status == Status::Ok && r.scope != Scope::Worker)
        .collect()
}

/// The sections of every workload present in the inputs.
pub fn render(a: &Analysis) -> Markup {
    html! {
        (metadata(a))
        (smallfiles(a))
        (stream(a))
        (load(a))
    }
}

fn metadata(a: &Analysis) -> Markup {
    let recs = of(a, WorkloadKind::Metadata);
    if recs.is_empty() {
        return html! {};
    }
    html! {
        h2 #metadata { "Metadata (Connectathon basic tests)" }
        (rate_curves(a, &recs))
        (rates_by_test(a, &recs))
        (read_cliff(a, &recs))
    }
}

/// Metadata: rate against count (test1 and test2 records that carry the swept count).
fn rate_curves(a: &Analysis, recs: &[&Record]) -> Markup {
    let mut curves: BTreeMap<(Operation, String), BTreeMap<u64, Vec<f64>>> = BTreeMap::new();
    for r in recs {
        let sweep = matches!(r.figures.test.as_deref(), Some("test1" | "test2"));
        if let (true, Some(n), Some(rate)) = (sweep, r.figures.files, r.figures.ops_per_s) {
            curves
                .entry((r.op, r.target.clone()))
                .or_default()
                .entry(n)
                .or_default()
                .push(rate);
        }
    }
    let counts: std::collections::BTreeSet<u64> =
        curves.values().flat_map(|m| m.keys().copied()).collect();
    if counts.len() < 2 {
        return html! {};
    }
    let series = |op: Operation| -> Vec<Series> {
        a.labels
            .iter()
            .enumerate()
            .filter_map(|(i, l)| {
                let c = curves.get(&(op, l.clone()))?;
                let pts = c.iter().map(|(&n, v)| (n as f64, median(v))).collect();
                Some((l.clone(), i, false, pts))
            })
            .collect()
    };
    html! {
        p.note { "Rate against the number of files and directories (test1 creates N files and N directories in one directory, test2 removes them): the seed's curves climb to a peak and taper off where a cache or a server queue saturates. Median operations per second over repetitions; the rate is the count over the summed time of that operation type." }
        div.charts {
            @for op in [Operation::CreateFile, Operation::CreateDir, Operation::RemoveFile, Operation::RemoveDir] {
                @let lines = series(op);
                @if !lines.is_empty() {
                    (PreEscaped(chart(&format!("{op} rate vs count"), "files (and directories)", "operations/s", &lines)))
                }
            }
        }
    }
}

/// Metadata: rate and p99 per test and operation type.
fn rates_by_test(a: &Analysis, recs: &[&Record]) -> Markup {
    let mut table: BTreeMap<(String, Operation), PerLabel<RatesP99>> = BTreeMap::new();
    for r in recs.iter().filter(|r| r.bytes == 0) {
        let test = r.figures.test.clone().unwrap_or_default();
        let e = table
            .entry((test, r.op))
            .or_default()
            .entry(r.target.clone())
            .or_default();
        e.0.push(r.figures.ops_per_s.unwrap_or(0.0));
        e.1.push(r.latency.lat_p99_us);
    }
    html! {
        table {
            tr {
                th { "test" } th { "operation" }
                @for l in &a.labels { th { (l) " ops/s" } th { (l) " p99 µs" } }
            }
            @for ((test, op), per) in &table {
                tr {
                    td { (test) } td { (op) }
                    @for l in &a.labels {
                        @match per.get(l) {
                            Some((rates, p99)) => {
                                td.num { (format::sig3(median(rates))) }
                                td.num { (format::sig3(median(p99))) }
                            }
                            None => { td { "–" } td { "–" } }
                        }
                    }
                }
            }
        }
    }
}

/// Metadata: the buffered-read cliff (test5b), buffered against cache-defeated reads.
fn read_cliff(a: &Analysis, recs: &[&Record]) -> Markup {
    let mut reads: BTreeMap<(String, Operation), BTreeMap<u64, Vec<f64>>> = BTreeMap::new();
    for r in recs
        .iter()
        .filter(|r| matches!(r.op, Operation::ReadBuffered | Operation::ReadUncached))
    {
        reads
            .entry((r.target.clone(), r.op))
            .or_default()
            .entry(r.file_size)
            .or_default()
            .push(r.throughput_kib_s / 1024.0);
    }
    if reads.is_empty() {
        return html! {};
    }
    {
        let series: Vec<_> = reads
            .iter()
            .map(|((label, op), by)| {
                let i = a.labels.iter().position(|l| l == label).unwrap_or(0);
                let pts = by
                    .iter()
                    .map(|(&s, v)| (s as f64 / 1048576.0, median(v)))
                    .collect();
                (
                    format!(
                        "{label} {}",
                        if *op == Operation::ReadBuffered {
                            "buffered"
                        } else {
                            "uncached"
                        }
                    ),
                    i,
                    *op != Operation::ReadBuffered,
                    pts,
                )
            })
            .collect();
        html! {
            h3 { "Buffered against cache-defeated reads (test5b)" }
            p.note { "Solid: read straight after writing (the client cache may serve it); dashed: after the cache was purged (or with O_DIRECT). Where the solid line falls onto the dashed one, the file no longer fits the cache: the seed saw that cliff at 53 MB." }
            (PreEscaped(chart("test5b read throughput vs file size", "file size (MiB)", "MiB/s", &series)))
        }
    }
}

fn smallfiles(a: &Analysis) -> Markup {
    let recs = of(a, WorkloadKind::Smallfiles);
    if recs.is_empty() {
        return html! {};
    }
    // (phase order, phase) -> label -> (seconds, files/s, client cpu %, server cpu %,
    // disk writes, disk flushes)
    let mut phases: Vec<Operation> = Vec::new();
    let mut by: BTreeMap<(usize, Operation), PerLabel<[Vec<f64>; 6]>> = BTreeMap::new();
    for r in &recs {
        let i = phases.iter().position(|p| *p == r.op).unwrap_or_else(|| {
            phases.push(r.op);
            phases.len() - 1
        });
        let e = by
            .entry((i, r.op))
            .or_default()
            .entry(r.target.clone())
            .or_default();
        e[0].push(r.seconds);
        e[1].push(r.figures.ops_per_s.unwrap_or(0.0));
        e[2].push(r.cpu_util_pct);
        if let Some(s) = r.server_cpu_util_pct {
            e[3].push(s);
        }
        if let (Some(w), Some(f)) = (r.disk_writes, r.disk_flushes) {
            e[4].push(w as f64);
            e[5].push(f as f64);
        }
    }
    let longest = by
        .values()
        .flat_map(|m| m.values().map(|v| median(&v[0])))
        .fold(0.0, f64::max)
        .max(1e-9);
    let recorded = |v: &[f64], show: &dyn Fn() -> String| {
        if v.is_empty() {
            "not recorded".to_string()
        } else {
            show()
        }
    };
    html! {
        h2 #smallfiles { "Small files (web-application tree)" }
        p.note { "The generated tree (1,800 files, 35 MB, see docs/methods/workloads.md) copied with rsync -a semantics, re-synced unchanged, re-synced after changing 10% of the files, deleted. Bars: median seconds per phase (shorter is better); the rsync-* rows are the real rsync binary on the same target. CPU: client (this process, and rsync's for rsync rows) and the lab servers', in per cent of one CPU over the phase. Disk: the write requests and cache flushes that reached the server's disk during the phase (lab targets; docs/methods/lab.md), what a sync export pays for and an async one defers." }
        table {
            tr {
                th { "phase" } th { "target" } th { "seconds" } th {} th { "files/s" }
                th { "client CPU" } th { "server CPU" } th { "disk writes / flushes" }
            }
            @for ((_, phase), per) in &by {
                @for (j, l) in a.labels.iter().enumerate() {
                    @if let Some(v) = per.get(l) {
                        @let secs = median(&v[0]);
                        tr {
                            td { (phase) }
                            td { (l) }
                            td.num { (format!("{secs:.3}")) }
                            td {
                                svg width="250" height="12" {
                                    rect width=(format!("{:.0}", (secs / longest * 240.0).max(1.0))) height="12" fill=(PALETTE[j % PALETTE.len()]) {}
                                }
                            }
                            td.num { (format::sig3(median(&v[1]))) }
                            td.num { (format::pct(median(&v[2]))) }
                            td.num { (recorded(&v[3], &|| format::pct(median(&v[3])))) }
                            td.num { (recorded(&v[4], &|| format!("{:.0} / {:.0}", median(&v[4]), median(&v[5])))) }
                        }
                    }
                }
            }
        }
    }
}

fn stream(a: &Analysis) -> Markup {
    let recs = of(a, WorkloadKind::Stream);
    if recs.is_empty() {
        return html! {};
    }
    type Key = (String, u32, String, String, Operation);
    /// Throughputs, extents, achieved bit rates, the last note.
    type Row = (Vec<f64>, Vec<f64>, Vec<f64>, Option<String>);
    let mut rows: BTreeMap<Key, Row> = BTreeMap::new();
    for r in &recs {
        let g = &r.figures;
        let key = (
            r.target.clone(),
            g.streams.unwrap_or(1),
            format!(
                "{}{}",
                g.prealloc_hints
                    .clone()
                    .unwrap_or_else(|| "no hints".into()),
                g.prealloc
                    .as_ref()
                    .map(|p| format!(" + {p}"))
                    .unwrap_or_default()
            ),
            g.bitrate_bps
                .map(|b| format!("{:.1} Mbit/s", b as f64 / 1e6))
                .unwrap_or_else(|| "unbounded".into()),
            r.op,
        );
        let e = rows.entry(key).or_default();
        e.0.push(r.throughput_kib_s);
        if let Some(x) = g.extents_per_file {
            e.1.push(x);
        }
        if let Some(b) = g.achieved_bps {
            e.2.push(b);
        }
        if g.note.is_some() {
            e.3 = g.note.clone();
        }
    }
    let table = html! {
        table {
            tr {
                th { "target" } th { "streams" } th { "allocation" } th { "bit rate" } th { "phase" }
                th { "throughput" } th { "achieved / stream" } th { "extents per file" } th { "note" }
            }
            @for ((t, n, alloc, rate, op), (thr, ext, ach, note)) in &rows {
                tr {
                    td { (t) }
                    td.num { (n) }
                    td { (alloc) }
                    td { (rate) }
                    td { (op) }
                    td.num { (format::rate(median(thr))) }
                    td.num { @if ach.is_empty() { "–" } @else { (format!("{:.1} Mbit/s", median(ach) / 1e6)) } }
                    td.num { @if ext.is_empty() { "unavailable" } @else { (format!("{:.0}", median(ext))) } }
                    td { (note.as_deref().unwrap_or("")) }
                }
            }
        }
    };
    // Playback throughput against the number of streams, one line per target and allocation.
    let mut lines: BTreeMap<(String, String), BTreeMap<u32, Vec<f64>>> = BTreeMap::new();
    for ((t, n, alloc, _, op), (thr, ..)) in &rows {
        if *op == Operation::Playback {
            lines
                .entry((t.clone(), alloc.clone()))
                .or_default()
                .entry(*n)
                .or_default()
                .extend(thr.iter().map(|k| k / 1024.0));
        }
    }
    let series: Vec<_> = lines
        .iter()
        .enumerate()
        .map(|(i, ((t, alloc), by))| {
            let pts = by.iter().map(|(&n, v)| (f64::from(n), median(v))).collect();
            (format!("{t} ({alloc})"), i, false, pts)
        })
        .collect();
    html! {
        h2 #stream { "Media streams" }
        p.note { "Streams record sequential large writes (fsync included) and play them back with a cold cache. Throughput is all streams together (median over repetitions); achieved is the slowest stream's bit rate; extents per file come from FIEMAP after recording (physically contiguous runs, as filefrag counts). The seed saw ext3 with a Windows client's pre-allocation hints fragment a 3.5 GB file into 49,986 extents and lose up to 53% of playback throughput, while XFS and zero-fill did not." }
        (table)
        @if !series.is_empty() {
            (PreEscaped(chart("playback throughput vs streams", "concurrent streams", "MiB/s", &series)))
        }
    }
}

fn load(a: &Analysis) -> Markup {
    if a.load_curves.is_empty() {
        return html! {};
    }
    let bound = a.latency_bound_us;
    let ms = |us: f64| format!("{:.3}", us / 1000.0);
    let rate = |v: Option<f64>| v.map_or("–".to_string(), |r| format!("{r:.0}/s"));
    let tables = html! {
        h2 #load { "Load-latency curves" }
        p.note { "The load workload steps the requested rate of a mix of operations through load points; workers issue requests on a fixed schedule (open loop) and latency counts from when each request was due, so a stall shows in every request it held up. A point is valid when it achieved at least 99% of the rate it asked for; a target's curve ends at its first invalid point. Targets take turns point by point. Peak: the highest valid rate achieved. Knee: the rate of the first valid point whose median latency is twice the lightest point's. ORT (overall response time): the area under the mean latency over the achieved rate up to the peak, divided by the peak (SPECstorage's summary; these mixes are sharebench's own, not SPEC's). Figures are medians over repetitions." }
        table {
            tr {
                th { "target" } th { "mix" } th { "points" } th { "peak valid rate" } th { "knee" } th { "ORT" }
                th {
                    @match bound {
                        Some(b) => { "rate up to which p99 stays < " (ms(b)) " ms" }
                        None => { "rate within a p99 bound (report --latency-bound)" }
                    }
                }
            }
            @for c in &a.load_curves {
                tr {
                    td { (c.label) }
                    td { (c.mix) }
                    td.num { (c.points.len()) }
                    td.num { (rate(c.peak())) }
                    td.num {
                        @match c.knee() {
                            Some(k) => { (format!("{k:.0}/s")) }
                            None => { "beyond the curve" }
                        }
                    }
                    td.num { (c.ort_us().map_or("–".into(), |o| format!("{} ms", ms(o)))) }
                    td.num {
                        @match bound {
                            Some(b) => { (rate(c.within(b))) }
                            None => { "–" }
                        }
                    }
                }
            }
        }
        table {
            tr {
                th { "target" } th { "point" } th { "asked" } th { "achieved" } th { "p50 ms" }
                th { "p99 ms" } th { "p99 from issue ms" } th { "throughput" }
                th { "client CPU / request" } th { "server CPU / request" } th { "valid" }
            }
            @for c in &a.load_curves {
                @for p in &c.points {
                    tr {
                        td { (c.label) }
                        td.num { (p.point + 1) }
                        td.num { (format!("{:.0}/s", p.requested)) }
                        td.num { (format!("{:.0}/s", p.achieved)) }
                        td.num { (ms(p.p50_us)) }
                        td.num { (ms(p.p99_us)) }
                        td.num { @if p.service_p99_us.is_finite() { (ms(p.service_p99_us)) } @else { "–" } }
                        td.num { (format::rate(p.kib_s)) }
                        td.num { (format!("{:.1} µs", p.cpu_us_per_op)) }
                        td.num { (p.server_cpu_us_per_op.map_or("–".into(), |s| format!("{s:.1} µs"))) }
                        td { @if p.valid { "yes" } @else { "no" } }
                    }
                }
            }
        }
    };
    let mut series: Vec<Series> = Vec::new();
    for (i, c) in a.load_curves.iter().enumerate() {
        // Valid points only: an overloaded point's latency (hundreds of ms) would flatten
        // the curve a reader acts on; the table above has every point.
        let line = |f: fn(&crate::curves::CurvePoint) -> f64| {
            c.points
                .iter()
                .filter(|p| p.valid)
                .map(|p| (p.achieved.max(1e-9), f(p) / 1000.0))
                .collect()
        };
        series.push((format!("{} p99", c.label), i, false, line(|p| p.p99_us)));
        series.push((format!("{} p50", c.label), i, true, line(|p| p.p50_us)));
    }
    html! {
        (tables)
        (PreEscaped(chart("latency vs achieved rate (valid points)", "achieved requests/s", "latency, ms", &series)))
    }
}
