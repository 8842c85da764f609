//! The 3D surface view of report.html, for readers who know IOzone's matrix as a surface:
//! per target, median throughput over file size x record size as a static axonometric
//! projection (no script, no perspective), drawn back to front with the painter's
//! algorithm. Both floor axes are log2, height is log throughput on ticks shared by the
//! targets of an operation, quads take the heatmaps' colour scale (so colour alone still
//! reads as throughput), every grid line is one file size or one record size (an IOzone 2D
//! curve), missing cells are gaps that show the floor (never zeros), and each quad's
//! `<title>` gives the exact KiB/s of its corner cells.
//! Not: the primary evidence (the heatmaps are; a surface hides parts of itself whatever
//! the angle), interactive rotation, or page layout (see `html`).

use crate::format;
use crate::model::{CellKey, CellStats, OpData};
use crate::svg::{esc, viridis};
use std::collections::BTreeMap;
use std::fmt::Write;

/// A point of the plot box: `x` the record-size position and `y` the file-size position
/// (both in 0..=1, log2 of the size), `z` the height (0..=`Z_TOP`, log throughput).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct P3 {
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

/// Height of the box against its unit floor.
pub const Z_TOP: f64 = 0.62;

const W: f64 = 580.0;
const H: f64 = 460.0;

/// The default view: from the large-file, small-record corner, so file size and record
/// size both grow left to right along the two front edges and the usually slow corner
/// (large files, small records) is in front of the usually fast one.
pub const AZIMUTH: f64 = -45.0;
pub const ELEVATION: f64 = 30.0;

/// An axonometric (parallel) projection of the plot box onto the screen, y down.
#[derive(Clone, Copy, Debug)]
pub struct Projection {
    cos_az: f64,
    sin_az: f64,
    cos_el: f64,
    sin_el: f64,
    scale: f64,
    ox: f64,
    oy: f64,
}

impl Projection {
    /// Turns the box by `azimuth_deg` about the vertical through its centre and tilts it
    /// towards the viewer by `elevation_deg`; unit scale, box centre at the origin.
    pub fn new(azimuth_deg: f64, elevation_deg: f64) -> Projection {
        let (a, e) = (azimuth_deg.to_radians(), elevation_deg.to_radians());
        Projection {
            cos_az: a.cos(),
            sin_az: a.sin(),
            cos_el: e.cos(),
            sin_el: e.sin(),
            scale: 1.0,
            ox: 0.0,
            oy: 0.0,
        }
    }

    /// Floor coordinates turned: (across the screen, towards the viewer).
    fn turn(&self, x: f64, y: f64) -> (f64, f64) {
        let (x, y) = (x - 0.5, y - 0.5);
        (
            x * self.cos_az - y * self.sin_az,
            x * self.sin_az + y * self.cos_az,
        )
    }

    /// How near the floor point under `p` is to the viewer (larger is nearer). Painter's
    /// order for a height field: quads of a grid sorted by this at their centres.
    pub fn ground_depth(&self, p: P3) -> f64 {
        self.turn(p.x, p.y).1
    }

    /// Screen position of `p`.
    pub fn project(&self, p: P3) -> (f64, f64) {
        let (across, toward) = self.turn(p.x, p.y);
        (
            self.ox + self.scale * across,
            self.oy + self.scale * (toward * self.sin_el - p.z * self.cos_el),
        )
    }

    /// Scales and moves the projection so the whole box fits `(left, top, right, bottom)`,
    /// centred.
    pub fn fit(self, area: (f64, f64, f64, f64)) -> Projection {
        let unit = Projection {
            scale: 1.0,
            ox: 0.0,
            oy: 0.0,
            ..self
        };
        let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
        for p in box_corners() {
            let (x, y) = unit.project(p);
            (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
        }
        let scale = ((area.2 - area.0) / (x1 - x0)).min((area.3 - area.1) / (y1 - y0));
        Projection {
            scale,
            ox: (area.0 + area.2) / 2.0 - scale * (x0 + x1) / 2.0,
            oy: (area.1 + area.3) / 2.0 - scale * (y0 + y1) / 2.0,
            ..unit
        }
    }
}

fn box_corners() -> impl Iterator<Item = P3> {
    (0..8).map(|i| P3 {
        x: f64::from(i & 1),
        y: f64::from((i >> 1) & 1),
        z: f64::from((i >> 2) & 1) * Z_TOP,
    })
}

/// Position of sizes on a log2 axis, 0..=1.
#[derive(Clone, Debug)]
pub struct LogAxis {
    pub values: Vec<u64>,
    lo: f64,
    hi: f64,
}

impl LogAxis {
    /// The distinct sizes, sorted; `None` with fewer than two (no surface to draw).
    pub fn new(mut values: Vec<u64>) -> Option<LogAxis> {
        values.retain(|v| *v > 0);
        values.sort_unstable();
        values.dedup();
        let lo = (*values.first()? as f64).log2();
        let hi = (*values.last()? as f64).log2();
        (values.len() >= 2).then_some(LogAxis { values, lo, hi })
    }

    pub fn pos(&self, v: u64) -> f64 {
        ((v as f64).log2() - self.lo) / (self.hi - self.lo)
    }
}

/// Heights: log2 of throughput between two powers of two, ticks every `step` powers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ZScale {
    pub lo_exp: i32,
    pub hi_exp: i32,
    pub step: i32,
}

impl ZScale {
    /// Round powers of two around `range` (KiB/s), at most six intervals.
    pub fn new(range: (f64, f64)) -> ZScale {
        let hi = if range.1.is_finite() && range.1 > 0.0 {
            range.1
        } else {
            1.0
        };
        let lo = if range.0.is_finite() && range.0 > 0.0 {
            range.0.min(hi)
        } else {
            hi
        };
        let mut lo_exp = lo.log2().floor() as i32;
        let mut hi_exp = (hi.log2().ceil() as i32).max(lo_exp + 1);
        let step = ((hi_exp - lo_exp) + 5) / 6;
        lo_exp = lo_exp.div_euclid(step) * step;
        hi_exp = lo_exp + (hi_exp - lo_exp + step - 1) / step * step;
        ZScale {
            lo_exp,
            hi_exp,
            step,
        }
    }

    pub fn height(&self, kib_s: f64) -> f64 {
        let e = if kib_s > 0.0 {
            kib_s.log2()
        } else {
            f64::from(self.lo_exp)
        };
        let t = (e - f64::from(self.lo_exp)) / f64::from(self.hi_exp - self.lo_exp);
        t.clamp(0.0, 1.0) * Z_TOP
    }

    pub fn ticks(&self) -> impl Iterator<Item = f64> + '_ {
        (self.lo_exp..=self.hi_exp)
            .step_by(self.step as usize)
            .map(|e| 2f64.powi(e))
    }
}

/// One quad of the surface (a triangle where one corner cell is missing).
#[derive(Clone, Debug)]
pub struct Quad {
    /// Corner cells with their medians (KiB/s), sorted by file then record size.
    pub corners: Vec<(CellKey, f64)>,
    /// Screen points, around the quad.
    pub points: Vec<(f64, f64)>,
    /// `Projection::ground_depth` of the quad's centre; larger is nearer.
    pub depth: f64,
    pub colour: String,
}

/// The quads of one target's surface, back to front. A grid square between adjacent file
/// and record sizes becomes a quad when all four corner cells exist, a triangle with three,
/// and a gap with fewer. `range` is the heatmaps' colour range (KiB/s).
pub fn quads(
    cells: &BTreeMap<CellKey, CellStats>,
    files: &LogAxis,
    recs: &LogAxis,
    z: &ZScale,
    range: (f64, f64),
    proj: &Projection,
) -> Vec<Quad> {
    let (lo, hi) = (range.0.max(1e-9).ln(), range.1.max(1e-9).ln());
    let t = |m: f64| {
        if hi > lo {
            (m.max(1e-9).ln() - lo) / (hi - lo)
        } else {
            0.5
        }
    };
    let mut out = Vec::new();
    for fi in files.values.windows(2) {
        for ri in recs.values.windows(2) {
            let ring = [
                (fi[0], ri[0]),
                (fi[1], ri[0]),
                (fi[1], ri[1]),
                (fi[0], ri[1]),
            ];
            let present: Vec<(CellKey, f64)> = ring
                .iter()
                .filter_map(|k| cells.get(k).map(|c| (*k, c.median)))
                .collect();
            if present.len() < 3 {
                continue;
            }
            let at = |(f, r): CellKey, m: f64| P3 {
                x: recs.pos(r),
                y: files.pos(f),
                z: z.height(m),
            };
            let points = present.iter().map(|&(k, m)| proj.project(at(k, m)));
            let centre = P3 {
                x: (recs.pos(ri[0]) + recs.pos(ri[1])) / 2.0,
                y: (files.pos(fi[0]) + files.pos(fi[1])) / 2.0,
                z: 0.0,
            };
            let shade = present.iter().map(|c| t(c.1)).sum::<f64>() / present.len() as f64;
            let mut corners = present.clone();
            corners.sort_by_key(|c| c.0);
            out.push(Quad {
                points: points.collect(),
                corners,
                depth: proj.ground_depth(centre),
                colour: viridis(shade),
            });
        }
    }
    out.sort_by(|a, b| a.depth.total_cmp(&b.depth));
    out
}

/// "1 GB/s", "256 MB/s": `format::rate` without trailing zeros, for ticks.
fn tick_rate(kib_s: f64) -> String {
    let s = format::rate(kib_s);
    match s.split_once(' ') {
        Some((n, unit)) if n.contains('.') => {
            format!("{} {unit}", n.trim_end_matches('0').trim_end_matches('.'))
        }
        _ => s,
    }
}

fn pt(s: &mut String, (x, y): (f64, f64)) {
    let _ = write!(s, "{x:.1},{y:.1} ");
}

/// Every how many ticks a label fits, for ticks `gap` apart on screen: labels about 50 by
/// 13 pixels must not overlap.
fn label_every(gap: (f64, f64)) -> usize {
    (1..=16)
        .find(|k| {
            let k = *k as f64;
            (gap.0 * k).abs() >= 50.0 || (gap.1 * k).abs() >= 13.0
        })
        .unwrap_or(16)
}

/// Ticks, labels and title of one floor axis along the floor edge `at(0)..at(1)`, labels
/// pushed away from the floor's centre.
fn floor_axis(
    s: &mut String,
    proj: &Projection,
    axis: &LogAxis,
    at: impl Fn(f64) -> P3,
    title: &str,
) {
    let centre = proj.project(P3 {
        x: 0.5,
        y: 0.5,
        z: 0.0,
    });
    let (a, b) = (proj.project(at(0.0)), proj.project(at(1.0)));
    let mid = ((a.0 + b.0) / 2.0, (a.1 + b.1) / 2.0);
    let (ox, oy) = (mid.0 - centre.0, mid.1 - centre.1);
    let n = ox.hypot(oy).max(1e-9);
    let out = (ox / n, oy / n);
    let anchor = if out.0 < -0.3 {
        "end"
    } else if out.0 > 0.3 {
        "start"
    } else {
        "middle"
    };
    let gap = (
        (b.0 - a.0) / (axis.values.len() - 1) as f64,
        (b.1 - a.1) / (axis.values.len() - 1) as f64,
    );
    let every = label_every(gap);
    let mut ticks = String::new();
    for (i, v) in axis.values.iter().enumerate() {
        let p = proj.project(at(axis.pos(*v)));
        let _ = write!(
            ticks,
            "M{:.1},{:.1}l{:.1},{:.1}",
            p.0,
            p.1,
            out.0 * 5.0,
            out.1 * 5.0
        );
        if i % every == 0 {
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="{:.1}" class="ax" text-anchor="{anchor}">{}</text>"#,
                p.0 + out.0 * 9.0,
                p.1 + out.1 * 9.0 + 4.0,
                format::size(*v)
            );
        }
    }
    let _ = write!(s, r##"<path d="{ticks}" stroke="#666"/>"##);
    // The title runs along the edge, readable left to right, beyond the tick labels.
    let mut angle = (b.1 - a.1).atan2(b.0 - a.0).to_degrees();
    if angle > 90.0 {
        angle -= 180.0;
    } else if angle < -90.0 {
        angle += 180.0;
    }
    let (tx, ty) = (mid.0 + out.0 * 56.0, mid.1 + out.1 * 56.0 + 4.0);
    let _ = write!(
        s,
        r#"<text x="{tx:.1}" y="{ty:.1}" class="ct" text-anchor="middle" transform="rotate({angle:.1} {tx:.1} {ty:.1})">{}</text>"#,
        esc(title)
    );
}

/// One target's surface as an SVG; `all` is every cell of the operation (the axes),
/// `range` the heatmaps' colour range.
pub fn surface(
    title: &str,
    cells: &BTreeMap<CellKey, CellStats>,
    all: &[CellKey],
    range: (f64, f64),
) -> Option<String> {
    let files = LogAxis::new(all.iter().map(|c| c.0).collect())?;
    let recs = LogAxis::new(all.iter().map(|c| c.1).collect())?;
    let z = ZScale::new(range);
    let proj = Projection::new(AZIMUTH, ELEVATION).fit((100.0, 36.0, W - 64.0, H - 66.0));
    let mut s = String::with_capacity(32 << 10);
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" aria-label="{t}"><text x="10" y="16" class="ct">{t}</text>"#,
        t = esc(title)
    );

    walls_and_grid(&mut s, &proj, &files, &recs, &z);

    // The surface, back to front.
    s.push_str(
        r##"<g stroke="#1b1f24" stroke-opacity=".45" stroke-width=".6" stroke-linejoin="round">"##,
    );
    for q in quads(cells, &files, &recs, &z, range, &proj) {
        s.push_str("<path d=\"M");
        for xy in &q.points {
            pt(&mut s, *xy);
        }
        s.pop();
        let _ = write!(s, "Z\" fill=\"{}\"><title>file × record: KiB/s", q.colour);
        for ((f, r), m) in &q.corners {
            let _ = write!(
                s,
                "\n{} × {}: {m:.0}",
                format::short_size(*f),
                format::short_size(*r)
            );
        }
        s.push_str("</title></path>");
    }
    s.push_str("</g>");

    height_axis(&mut s, &proj, &z);

    // File size along the front edge through the smallest record size, record size along
    // the front edge through the largest file size (both grow left to right).
    floor_axis(
        &mut s,
        &proj,
        &files,
        |t| P3 {
            x: 0.0,
            y: t,
            z: 0.0,
        },
        "file size (log₂)",
    );
    floor_axis(
        &mut s,
        &proj,
        &recs,
        |t| P3 {
            x: t,
            y: 1.0,
            z: 0.0,
        },
        "record size (log₂)",
    );
    s.push_str("</svg>");
    Some(s)
}

/// The chart's floor, corner by corner: (record-size position, file-size position).
const FLOOR: [(f64, f64); 4] = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)];

/// The floor and the two back walls (the faces through the farthest floor corner), and
/// the grid: one floor line per file size and record size, one wall line per height tick.
fn walls_and_grid(s: &mut String, proj: &Projection, files: &LogAxis, recs: &LogAxis, z: &ZScale) {
    let p = |x: f64, y: f64, z: f64| proj.project(P3 { x, y, z });
    let floor = FLOOR;
    let far = floor
        .iter()
        .copied()
        .min_by(|a, b| {
            let d = |c: (f64, f64)| {
                proj.ground_depth(P3 {
                    x: c.0,
                    y: c.1,
                    z: 0.0,
                })
            };
            d(*a).total_cmp(&d(*b))
        })
        .unwrap_or((1.0, 0.0));
    let sides = [(1.0 - far.0, far.1), (far.0, 1.0 - far.1)];
    let mut d = String::from("M");
    for c in floor {
        pt(&mut d, p(c.0, c.1, 0.0));
    }
    d.push('Z');
    for side in sides {
        d.push('M');
        for q in [
            p(far.0, far.1, 0.0),
            p(side.0, side.1, 0.0),
            p(side.0, side.1, Z_TOP),
            p(far.0, far.1, Z_TOP),
        ] {
            pt(&mut d, q);
        }
        d.push('Z');
    }
    let _ = write!(s, r##"<path d="{d}" fill="#f1f3f6" stroke="#b8bec6"/>"##);

    let mut g = String::new();
    for v in &files.values {
        let y = files.pos(*v);
        g.push('M');
        pt(&mut g, p(0.0, y, 0.0));
        pt(&mut g, p(1.0, y, 0.0));
    }
    for v in &recs.values {
        let x = recs.pos(*v);
        g.push('M');
        pt(&mut g, p(x, 0.0, 0.0));
        pt(&mut g, p(x, 1.0, 0.0));
    }
    let ticks: Vec<f64> = z.ticks().collect();
    for v in &ticks {
        let h = z.height(*v);
        g.push('M');
        pt(&mut g, p(sides[0].0, sides[0].1, h));
        pt(&mut g, p(far.0, far.1, h));
        pt(&mut g, p(sides[1].0, sides[1].1, h));
    }
    let _ = write!(
        s,
        r##"<path d="{g}" fill="none" stroke="#d3d8de" stroke-width=".8"/>"##
    );
}

/// The height axis on the vertical edge of the leftmost floor corner, with its ticks.
fn height_axis(s: &mut String, proj: &Projection, z: &ZScale) {
    let p = |x: f64, y: f64, z: f64| proj.project(P3 { x, y, z });
    let left = FLOOR
        .iter()
        .copied()
        .min_by(|a, b| p(a.0, a.1, 0.0).0.total_cmp(&p(b.0, b.1, 0.0).0))
        .unwrap_or((0.0, 0.0));
    let (bx, by) = p(left.0, left.1, 0.0);
    let (_, ty) = p(left.0, left.1, Z_TOP);
    let _ = write!(s, r##"<path d="M{bx:.1},{by:.1}V{ty:.1}" stroke="#666"/>"##);
    for v in z.ticks() {
        let (x, y) = p(left.0, left.1, z.height(v));
        let _ = write!(
            s,
            r##"<path d="M{x:.1},{y:.1}h-6" stroke="#666"/><text x="{:.1}" y="{:.1}" class="ax" text-anchor="end">{}</text>"##,
            x - 8.0,
            y - 3.0,
            tick_rate(v)
        );
    }
    let (lx, ly) = (bx - 82.0, (by + ty) / 2.0);
    let _ = write!(
        s,
        r#"<text x="{lx:.1}" y="{ly:.1}" class="ct" text-anchor="middle" transform="rotate(-90 {lx:.1} {ly:.1})">throughput (log scale)</text>"#
    );
}

/// The collapsed "3D surface view" of one operation: one surface per target, in label
/// order; empty when the operation has fewer than two file sizes or record sizes.
pub fn section(op: &OpData, labels: &[String], range: (f64, f64)) -> String {
    let charts: Vec<String> = labels
        .iter()
        .filter_map(|l| {
            surface(
                &format!("{} — {}", l, op.op),
                op.cells.get(l)?,
                &op.all_cells,
                range,
            )
        })
        .collect();
    if charts.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<details class=surf><summary>3D surface view</summary><p class=note>The heatmaps above lifted into 3D: height and colour are median throughput (log scales shared by the targets of this operation; colours as in the heatmaps). Each grid line is one file size or one record size; gaps show the floor where a cell was not measured. Hover a quad for the exact KiB/s of its corners. Parts of a surface hide others: read values from the heatmaps.</p><div class=charts>",
    );
    for c in charts {
        s.push_str(&c);
    }
    s.push_str("</div></details>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(median: f64) -> CellStats {
        CellStats::single(median)
    }

    fn near(a: (f64, f64), b: (f64, f64)) -> bool {
        (a.0 - b.0).abs() < 1e-9 && (a.1 - b.1).abs() < 1e-9
    }

    #[test]
    fn known_points_project_where_expected() {
        let p = Projection::new(AZIMUTH, ELEVATION);
        let r = 0.5_f64.sqrt(); // half the floor diagonal
        let (sin_el, cos_el) = (0.5, 0.75_f64.sqrt());
        let floor = |x: f64, y: f64| p.project(P3 { x, y, z: 0.0 });
        // Smallest file and record size: the left corner; largest file and record size:
        // the right corner; largest file, smallest record: the near corner, straight below
        // the centre (foreshortened by the elevation); the opposite corner straight above.
        assert!(near(floor(0.0, 0.0), (-r, 0.0)));
        assert!(near(floor(1.0, 1.0), (r, 0.0)));
        assert!(near(floor(0.0, 1.0), (0.0, r * sin_el)));
        assert!(near(floor(1.0, 0.0), (0.0, -r * sin_el)));
        // Height goes straight up, foreshortened by the elevation.
        let top = p.project(P3 {
            x: 0.0,
            y: 1.0,
            z: 1.0,
        });
        assert!(near(top, (0.0, r * sin_el - cos_el)));
        // Fitting keeps the box inside the area and touches two opposite sides.
        let f = p.fit((10.0, 20.0, 310.0, 220.0));
        let pts: Vec<(f64, f64)> = box_corners().map(|c| f.project(c)).collect();
        assert!(pts.iter().all(|q| q.0 >= 10.0 - 1e-9
            && q.0 <= 310.0 + 1e-9
            && q.1 >= 20.0 - 1e-9
            && q.1 <= 220.0 + 1e-9));
        let ext = |v: Vec<f64>| {
            let lo = v.iter().copied().fold(f64::MAX, f64::min);
            (lo, v.iter().copied().fold(f64::MIN, f64::max))
        };
        let (x0, x1) = ext(pts.iter().map(|q| q.0).collect());
        let (y0, y1) = ext(pts.iter().map(|q| q.1).collect());
        let touches = |a: f64, b: f64| (a - b).abs() < 1e-6;
        assert!(touches(x0, 10.0) && touches(x1, 310.0) || touches(y0, 20.0) && touches(y1, 220.0));
        assert!(
            touches(x0 + x1, 320.0) && touches(y0 + y1, 240.0),
            "centred"
        );
    }

    #[test]
    fn a_known_cell_lands_on_its_corner_at_its_height() {
        // 64 KiB..1 MiB files x 4..64 KiB records; the 1 MiB / 4 KiB cell is the near
        // corner; at the top of the z scale it sits Z_TOP above the floor.
        let mut cells = BTreeMap::new();
        for f in [64u64 << 10, 256 << 10, 1 << 20] {
            for r in [4u64 << 10, 16 << 10, 64 << 10] {
                cells.insert((f, r), stats(1024.0));
            }
        }
        cells.insert((1 << 20, 4 << 10), stats(4096.0));
        let all: Vec<CellKey> = cells.keys().copied().collect();
        let files = LogAxis::new(all.iter().map(|c| c.0).collect()).unwrap();
        let recs = LogAxis::new(all.iter().map(|c| c.1).collect()).unwrap();
        let z = ZScale::new((1024.0, 4096.0));
        assert_eq!(
            z,
            ZScale {
                lo_exp: 10,
                hi_exp: 12,
                step: 1
            }
        );
        let p = Projection::new(AZIMUTH, ELEVATION);
        let qs = quads(&cells, &files, &recs, &z, (1024.0, 4096.0), &p);
        let near_quad = qs.last().unwrap();
        assert!(near_quad.corners.iter().any(|c| c.0 == (1 << 20, 4 << 10)));
        let want = p.project(P3 {
            x: 0.0,
            y: 1.0,
            z: Z_TOP,
        });
        assert!(near_quad.points.iter().any(|q| near(*q, want)));
        // The other corners are at the floor (1024 KiB/s = 2^10, the bottom tick).
        assert_eq!(z.height(1024.0), 0.0);
        assert_eq!(z.height(2048.0), Z_TOP / 2.0);
    }

    #[test]
    fn quads_are_back_to_front_and_missing_cells_are_gaps() {
        // A triangle of cells (record <= file) with a crossover hole.
        let sizes: Vec<u64> = (0..6).map(|i| (4u64 << 10) << i).collect();
        let mut cells = BTreeMap::new();
        for &f in &sizes {
            for &r in sizes.iter().filter(|r| **r <= f) {
                cells.insert((f, r), stats((f + r) as f64));
            }
        }
        let hole = (sizes[4], sizes[1]);
        let all: Vec<CellKey> = cells.keys().copied().collect();
        cells.remove(&hole);
        let files = LogAxis::new(all.iter().map(|c| c.0).collect()).unwrap();
        let recs = LogAxis::new(all.iter().map(|c| c.1).collect()).unwrap();
        let range = (8192.0, 400_000.0);
        let z = ZScale::new(range);
        for az in [AZIMUTH, 30.0, 135.0, -120.0] {
            let p = Projection::new(az, ELEVATION);
            let qs = quads(&cells, &files, &recs, &z, range, &p);
            assert!(qs.windows(2).all(|w| w[0].depth <= w[1].depth));
            // No quad or triangle uses the missing cell, and none is made up of zeros.
            assert!(qs.iter().all(|q| q.corners.iter().all(|c| c.0 != hole)));
            assert!(qs.iter().all(|q| q.corners.iter().all(|c| c.1 > 0.0)));
            // 10 full squares and 5 diagonal triangles; the hole turns its 4 squares
            // into triangles.
            let full = qs.iter().filter(|q| q.corners.len() == 4).count();
            let tri = qs.iter().filter(|q| q.corners.len() == 3).count();
            assert_eq!((full, tri), (6, 9));
        }
        // The default view looks from the large-file, small-record corner: of two
        // neighbouring squares, the one with larger files is nearer (drawn later), the one
        // with larger records farther (drawn earlier).
        let p = Projection::new(AZIMUTH, ELEVATION);
        let qs = quads(&cells, &files, &recs, &z, range, &p);
        let square = |q: &Quad| {
            let f = q.corners.iter().map(|c| c.0 .0).min().unwrap();
            let r = q.corners.iter().map(|c| c.0 .1).min().unwrap();
            (f, r)
        };
        let mut pairs = 0;
        for (i, a) in qs.iter().enumerate() {
            for (j, b) in qs.iter().enumerate() {
                let ((fa, ra), (fb, rb)) = (square(a), square(b));
                if fa == fb && rb == ra * 2 {
                    assert!(j < i, "larger records must be drawn first");
                    pairs += 1;
                }
                if ra == rb && fb == fa * 2 {
                    assert!(i < j, "larger files must be drawn later");
                    pairs += 1;
                }
            }
        }
        assert_eq!(pairs, 20);
        assert_eq!(square(qs.last().unwrap()), (sizes[4], sizes[0]));
    }

    #[test]
    fn one_record_size_gives_no_section() {
        let mut cells = BTreeMap::new();
        for f in [64u64 << 10, 128 << 10, 256 << 10] {
            cells.insert((f, 4u64 << 10), stats(1000.0));
        }
        let mut op = OpData {
            op: sharebench_core::op::Op::Write.into(),
            cells: BTreeMap::from([("a".to_string(), cells.clone())]),
            vs_baseline: BTreeMap::new(),
            p99_vs_baseline: BTreeMap::new(),
            all_cells: cells.keys().copied().collect(),
        };
        let labels = ["a".to_string()];
        assert_eq!(section(&op, &labels, (1000.0, 1000.0)), "");
        // With a second record size there is a surface, collapsed by default.
        let key = (256 << 10, 8 << 10);
        op.all_cells.push(key);
        op.cells.get_mut("a").unwrap().insert(key, stats(2000.0));
        let s = section(&op, &labels, (1000.0, 2000.0));
        assert!(s.starts_with("<details class=surf><summary>3D surface view</summary>"));
        assert_eq!(s.matches("<title>").count(), 1, "one triangle");
    }

    #[test]
    fn z_ticks_are_round_powers_of_two() {
        let z = ZScale::new((225_000.0, 3.3e6));
        assert_eq!(z.ticks().count(), 6);
        assert_eq!(tick_rate(1024.0 * 1024.0), "1 GB/s");
        assert_eq!(tick_rate(256.0 * 1024.0), "256 MB/s");
        assert_eq!(tick_rate(2.0 * 1024.0), "2 MB/s");
        let wide = ZScale::new((1.0, 1e9));
        assert!(wide.ticks().count() <= 7 && wide.step > 1);
        assert!(wide.ticks().next().unwrap() <= 1.0 && wide.ticks().last().unwrap() >= 1e9);
    }
}
