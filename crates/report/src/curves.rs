//! Load-latency curves from the load workload's records: per label, each load point's
//! requested and achieved rate and latency (medians over repetitions), and what a reader
//! asks of a curve: the peak valid rate, the knee (where median latency has doubled from
//! the lightest load), the overall response time (ORT: the area under the mean-latency
//! curve over the achieved rate, divided by the peak, SPECstorage's summary) and the
//! highest rate up to which p99 stays under a bound. Statistics only; `workloads` draws.

use crate::stats::median;
use sharebench_core::operation::Operation;
use sharebench_core::record::{Record, Scope, Status, WorkloadKind};
use std::collections::BTreeMap;

/// One load point of a curve: medians over repetitions.
#[derive(Debug, Clone, PartialEq)]
pub struct CurvePoint {
    pub point: u32,
    pub requested: f64,
    pub achieved: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    /// p99 from when requests were issued (without the schedule's queueing).
    pub service_p99_us: f64,
    pub kib_s: f64,
    /// Client CPU per request (this process), and the lab servers' when known.
    pub cpu_us_per_op: f64,
    pub server_cpu_us_per_op: Option<f64>,
    /// Every repetition of the point achieved 99% of its rate.
    pub valid: bool,
    pub reps: usize,
}

/// A label's curve.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadCurve {
    pub label: String,
    pub mix: String,
    pub points: Vec<CurvePoint>,
}

/// The curves of every label with load records, in label order.
pub fn curves(records: &[Record], labels: &[String]) -> Vec<LoadCurve> {
    let mut by: BTreeMap<(&str, u32), Vec<&Record>> = BTreeMap::new();
    for r in records.iter().filter(|r| {
        r.workload == WorkloadKind::Load
            && r.op == Operation::Load
            && r.status == Status::Ok
            && r.scope != Scope::Worker
    }) {
        by.entry((r.target.as_str(), r.figures.load_point.unwrap_or(0)))
            .or_default()
            .push(r);
    }
    labels
        .iter()
        .filter_map(|label| {
            let points: Vec<CurvePoint> = by
                .iter()
                .filter(|((l, _), _)| l == label)
                .map(|((_, p), recs)| point(*p, recs))
                .collect();
            let mix = by
                .iter()
                .find(|((l, _), _)| l == label)
                .and_then(|(_, recs)| recs[0].figures.mix.clone())
                .unwrap_or_default();
            (!points.is_empty()).then(|| LoadCurve {
                label: label.clone(),
                mix,
                points,
            })
        })
        .collect()
}

fn point(point: u32, recs: &[&Record]) -> CurvePoint {
    let med = |f: &dyn Fn(&Record) -> f64| median(&recs.iter().map(|r| f(r)).collect::<Vec<_>>());
    let per_op = |s: f64, r: &Record| s / r.figures.count.unwrap_or(0).max(1) as f64 * 1e6;
    let server: Vec<f64> = recs
        .iter()
        .filter_map(|r| r.server_cpu_s.map(|s| per_op(s, r)))
        .collect();
    CurvePoint {
        point,
        requested: med(&|r| r.figures.requested_ops_s.unwrap_or(0.0)),
        achieved: med(&|r| r.figures.ops_per_s.unwrap_or(0.0)),
        mean_us: med(&|r| r.latency.lat_mean_us),
        p50_us: med(&|r| r.latency.lat_p50_us),
        p99_us: med(&|r| r.latency.lat_p99_us),
        service_p99_us: med(&|r| r.figures.service_p99_us.unwrap_or(f64::NAN)),
        kib_s: med(&|r| r.throughput_kib_s),
        cpu_us_per_op: med(&|r| per_op(r.cpu_total_s, r)),
        server_cpu_us_per_op: (!server.is_empty()).then(|| median(&server)),
        valid: recs.iter().all(|r| r.figures.valid == Some(true)),
        reps: recs.len(),
    }
}

impl LoadCurve {
    fn valid(&self) -> impl Iterator<Item = &CurvePoint> {
        self.points.iter().filter(|p| p.valid)
    }

    /// The highest achieved rate of a valid point.
    pub fn peak(&self) -> Option<f64> {
        self.valid().map(|p| p.achieved).reduce(f64::max)
    }

    /// The achieved rate of the first valid point whose median latency is at least twice
    /// the lightest point's; `None` when latency never doubled (the knee is beyond the
    /// curve).
    pub fn knee(&self) -> Option<f64> {
        let base = self.points.first()?.p50_us;
        self.valid()
            .find(|p| p.p50_us >= 2.0 * base)
            .map(|p| p.achieved)
    }

    /// Overall response time, µs: the area under mean latency over achieved rate, from 0
    /// (the lightest point's latency held down to rate 0) to the peak, divided by the peak.
    pub fn ort_us(&self) -> Option<f64> {
        let pts: Vec<&CurvePoint> = self.valid().collect();
        let peak = self.peak()?;
        if peak <= 0.0 {
            return None;
        }
        let mut area = pts[0].achieved * pts[0].mean_us;
        for w in pts.windows(2) {
            area += (w[1].achieved - w[0].achieved) * (w[0].mean_us + w[1].mean_us) / 2.0;
        }
        Some(area / peak)
    }

    /// The highest rate up to which p99 stays under `bound_us`: the achieved rate of the
    /// last valid point before the first whose p99 reaches the bound (a later point back
    /// under it does not count: the load passed through a worse one to get there).
    pub fn within(&self, bound_us: f64) -> Option<f64> {
        self.valid()
            .take_while(|p| p.p99_us < bound_us)
            .map(|p| p.achieved)
            .reduce(f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(point: u32, achieved: f64, p50: f64, p99: f64, valid: bool) -> Record {
        let mut r = Record {
            workload: WorkloadKind::Load,
            op: Operation::Load,
            target: "a".into(),
            ..Record::default()
        };
        r.figures.load_point = Some(point);
        r.figures.requested_ops_s = Some(100.0 * f64::from(point + 1));
        r.figures.ops_per_s = Some(achieved);
        r.figures.valid = Some(valid);
        r.figures.count = Some(1000);
        r.latency.lat_p50_us = p50;
        r.latency.lat_mean_us = p50;
        r.latency.lat_p99_us = p99;
        r.cpu_total_s = 0.01;
        r
    }

    #[test]
    fn peak_knee_ort_and_bound_of_a_curve() {
        let recs = vec![
            rec(0, 100.0, 100.0, 400.0, true),
            rec(1, 200.0, 100.0, 500.0, true),
            rec(2, 300.0, 250.0, 2000.0, true),
            rec(3, 350.0, 900.0, 9000.0, false),
        ];
        let c = &curves(&recs, &["a".into()])[0];
        assert_eq!(c.points.len(), 4);
        assert_eq!(c.peak(), Some(300.0));
        assert_eq!(c.knee(), Some(300.0));
        // 100 x 100 + 100 x 100 + 100 x 175 = 37,500 over a peak of 300.
        assert!((c.ort_us().unwrap() - 125.0).abs() < 1e-9);
        assert_eq!(c.within(1000.0), Some(200.0));
        assert_eq!(c.within(450.0), Some(100.0));
        assert_eq!(c.within(100.0), None);
        assert!((c.points[0].cpu_us_per_op - 10.0).abs() < 1e-9);
    }

    #[test]
    fn no_load_records_no_curve() {
        let mut r = rec(0, 1.0, 1.0, 1.0, true);
        r.workload = WorkloadKind::Stream;
        assert!(curves(&[r], &["a".into()]).is_empty());
    }
}
