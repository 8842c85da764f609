//! Many clients at once: the ranks of a multi-client run (MPI, one process per client),
//! as the engine sees them. Before each measurement every rank says whether it can start,
//! and all start together or none does; after it, rank 0 receives every rank's records
//! and merges them into per-rank and cross-rank records, and every rank learns whether to
//! go on. A single process is `Solo`, which changes nothing. Not: MPI itself (the
//! `sharebench` binary's `mpi` feature implements `Ranks`).

use crate::record::{Record, Scope, Status, ThroughputSummary, WorkloadKind};
use std::io;

/// What a rank brings to the start of a measurement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ready {
    Yes,
    /// This rank cannot take the measurement (why, in one line).
    No(String),
    /// Ctrl-C reached this rank.
    Interrupted,
}

/// What every rank does next (the same on all ranks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Go {
    On,
    /// A rank failed: every rank gives the target up (why, naming the rank and host).
    Stop(String),
    Interrupted,
}

/// When one rank's measurement ran, in seconds from its release at the start barrier.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Span {
    pub start_s: f64,
    pub end_s: f64,
}

/// The ranks of a run, as the engine needs them. Every method is collective: every rank
/// calls it, in the same order.
pub trait Ranks {
    /// This rank (0 writes the records) and how many there are.
    fn rank(&self) -> u32;
    fn size(&self) -> u32;
    /// Start barrier: every rank's readiness in, one decision out.
    fn start(&self, ready: Ready) -> io::Result<Go>;
    /// End of a measurement: rank 0 gets every rank's records (merged, see `merge`); the
    /// other ranks get none. `failed` says this rank's measurement failed or was cut off.
    fn finish(
        &self,
        records: Vec<Record>,
        span: Span,
        failed: Ready,
    ) -> io::Result<(Vec<Record>, Go)>;
    /// Stonewalling across ranks, during a measurement (not collective): tells every other
    /// rank that one of this rank's workers has finished, so theirs note their figures as
    /// IOzone's stonewall does. At most once per measurement; `finish` tells them for a
    /// rank that never did.
    fn stonewall_post(&self) {}
    /// Whether another rank has posted its stonewall in this measurement.
    fn stonewall_heard(&self) -> bool {
        false
    }
}

/// One process, no coordination: the records pass through unchanged.
pub struct Solo;

impl Ranks for Solo {
    fn rank(&self) -> u32 {
        0
    }
    fn size(&self) -> u32 {
        1
    }
    fn start(&self, ready: Ready) -> io::Result<Go> {
        Ok(match ready {
            Ready::Yes => Go::On,
            Ready::No(why) => Go::Stop(why),
            Ready::Interrupted => Go::Interrupted,
        })
    }
    fn finish(
        &self,
        records: Vec<Record>,
        _span: Span,
        failed: Ready,
    ) -> io::Result<(Vec<Record>, Go)> {
        let go = self.start(failed)?;
        Ok((records, go))
    }
}

/// One rank's part of a measurement, as rank 0 receives it.
#[derive(Debug, Clone, PartialEq)]
pub struct RankPart {
    pub rank: u32,
    pub host: String,
    pub records: Vec<Record>,
    pub span: Span,
}

/// Rank 0's records of one measurement over every rank: each rank's workers become
/// `worker` records numbered across ranks (rank r's worker w is r x threads + w), tagged
/// with rank and host, and one `aggregate` covers them all: children-see is the sum of
/// every worker's throughput, parent-sees the bytes over the time from the first rank's
/// start to the last rank's end. A failed or unverified rank record is kept as it is.
pub fn merge(parts: Vec<RankPart>) -> Vec<Record> {
    let other_workload = parts
        .iter()
        .flat_map(|p| &p.records)
        .any(|r| r.workload != WorkloadKind::Iozone);
    if other_workload {
        return merge_by_position(parts);
    }
    let mut out = Vec::new();
    let mut workers: Vec<Record> = Vec::new();
    let mut per_rank_threads = 1;
    for part in &parts {
        let mine: Vec<&Record> = part
            .records
            .iter()
            .filter(|r| r.scope != Scope::Aggregate)
            .collect();
        per_rank_threads = per_rank_threads.max(mine.len() as u32);
    }
    let (mut first, mut last) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut template: Option<Record> = None;
    for part in parts {
        first = first.min(part.span.start_s);
        last = last.max(part.span.end_s);
        for mut r in part.records {
            r.rank = Some(part.rank);
            r.host = Some(part.host.clone());
            if r.status == Status::Failed {
                out.push(r);
                continue;
            }
            if r.scope == Scope::Aggregate {
                // The rank's own aggregate: the cross-rank one below replaces it.
                continue;
            }
            let w = r.worker.unwrap_or(0);
            r.worker = Some(part.rank * per_rank_threads + w);
            r.scope = Scope::Worker;
            if template.is_none() {
                template = Some(r.clone());
            }
            workers.push(r);
        }
    }
    let Some(mut agg) = template else {
        return out;
    };
    let rates: Vec<f64> = workers.iter().map(|r| r.throughput_kib_s).collect();
    let bytes: u64 = workers.iter().map(|r| r.bytes).sum();
    let children: f64 = rates.iter().sum();
    let span = (last - first).max(0.0);
    agg.scope = Scope::Aggregate;
    agg.worker = None;
    agg.rank = None;
    agg.host = None;
    agg.threads = workers.len() as u32;
    agg.bytes = bytes;
    agg.seconds = span;
    agg.throughput_kib_s = children;
    agg.throughput = Some(ThroughputSummary {
        children_see_kib_s: children,
        parent_sees_kib_s: if span > 0.0 {
            bytes as f64 / 1024.0 / span
        } else {
            0.0
        },
        min_worker_kib_s: rates.iter().copied().fold(f64::INFINITY, f64::min),
        max_worker_kib_s: rates.iter().copied().fold(0.0, f64::max),
        avg_worker_kib_s: children / rates.len().max(1) as f64,
        min_xfer_bytes: workers.iter().map(|r| r.bytes).min().unwrap_or(0),
    });
    agg.stonewalled = workers.iter().any(|r| r.stonewalled);
    agg.latency = merge_latency(&workers.iter().collect::<Vec<_>>());
    agg.cpu_user_s = workers.iter().map(|r| r.cpu_user_s).sum();
    agg.cpu_sys_s = workers.iter().map(|r| r.cpu_sys_s).sum();
    agg.cpu_total_s = workers.iter().map(|r| r.cpu_total_s).sum();
    agg.cpu_util_pct = crate::cpu::util_pct(agg.cpu_total_s, span);
    if let Some(bad) = workers.iter().find(|r| r.status == Status::VerifyFailed) {
        agg.status = Status::VerifyFailed;
        agg.mismatch_file = bad.mismatch_file.clone();
        agg.mismatch_offset = bad.mismatch_offset;
    }
    for r in &mut workers {
        r.threads = agg.threads;
    }
    out.extend(workers);
    out.push(agg);
    out
}

/// The metadata, smallfiles and stream workloads: every rank took the same measurement
/// and emitted the same records in the same order, so the i-th records of all ranks are
/// one figure seen by each client. Each rank's record becomes a `worker` record (with rank
/// and host; a stream's own workers are numbered across ranks, its per-rank aggregate
/// gives way), followed by one cross-rank `aggregate` (see `sum_of_ranks`). Where the
/// ranks' records do not line up (a rank failed part-way), every record is kept as its
/// rank sent it, and no aggregate is made.
fn merge_by_position(parts: Vec<RankPart>) -> Vec<Record> {
    let tag = |part: &RankPart, mut r: Record| {
        r.rank = Some(part.rank);
        r.host = Some(part.host.clone());
        r
    };
    let n = parts.first().map_or(0, |p| p.records.len());
    let aligned = parts.iter().all(|p| {
        p.records.len() == n
            && p.records.iter().all(|r| r.status != Status::Failed)
            && p.records
                .iter()
                .zip(&parts[0].records)
                .all(|(a, b)| a.op == b.op && a.scope == b.scope)
    });
    if !aligned {
        return parts
            .iter()
            .flat_map(|p| p.records.iter().map(|r| tag(p, r.clone())))
            .collect();
    }
    let per_rank = parts[0]
        .records
        .iter()
        .filter(|r| r.scope == Scope::Worker)
        .count()
        .max(1) as u32;
    let ranks = parts.len() as u32;
    let mut out = Vec::new();
    for i in 0..n {
        let column: Vec<(&RankPart, &Record)> = parts.iter().map(|p| (p, &p.records[i])).collect();
        match column[0].1.scope {
            Scope::Worker => {
                for (p, r) in column {
                    let mut r = tag(p, r.clone());
                    r.worker = Some(p.rank * per_rank + r.worker.unwrap_or(0));
                    r.threads = per_rank * ranks;
                    out.push(r);
                }
            }
            Scope::Aggregate => out.push(sum_of_ranks(&column, per_rank * ranks)),
            Scope::Single => {
                for (p, r) in &column {
                    let mut r = tag(p, (*r).clone());
                    r.scope = Scope::Worker;
                    r.worker = Some(p.rank);
                    r.threads = ranks;
                    out.push(r);
                }
                // A rank's single record may stand for several workers (the load
                // workload's): the aggregate counts them all.
                let per_rank = column[0].1.threads.max(1);
                out.push(sum_of_ranks(&column, ranks * per_rank));
            }
        }
    }
    out
}

/// One figure over every rank, as mdtest and IOzone's cluster mode add clients up: bytes,
/// counts, files, streams, rates and CPU are summed; seconds is the slowest rank's;
/// server CPU (one server, sampled by every rank over the same time) is the largest
/// sample; the worst stream's rate is the worst of all; extents are averaged. Latency:
/// count and mean over all calls, the maximum of maxima, and each percentile the worst
/// rank's (an upper bound: the histograms themselves do not travel).
fn sum_of_ranks(column: &[(&RankPart, &Record)], threads: u32) -> Record {
    let recs: Vec<&Record> = column.iter().map(|(_, r)| *r).collect();
    let sum = |f: fn(&Record) -> f64| recs.iter().map(|r| f(r)).sum::<f64>();
    let sum_opt = |f: fn(&Record) -> Option<f64>| -> Option<f64> {
        recs.iter().map(|r| f(r)).sum::<Option<f64>>()
    };
    let max = |f: fn(&Record) -> f64| recs.iter().map(|r| f(r)).fold(0.0, f64::max);
    let mut agg = recs[0].clone();
    agg.scope = Scope::Aggregate;
    agg.worker = None;
    agg.rank = None;
    agg.host = None;
    agg.threads = threads;
    agg.bytes = recs.iter().map(|r| r.bytes).sum();
    agg.seconds = max(|r| r.seconds);
    agg.throughput_kib_s = sum(|r| r.throughput_kib_s);
    agg.cpu_user_s = sum(|r| r.cpu_user_s);
    agg.cpu_sys_s = sum(|r| r.cpu_sys_s);
    agg.cpu_total_s = sum(|r| r.cpu_total_s);
    agg.cpu_util_pct = crate::cpu::util_pct(agg.cpu_total_s, agg.seconds);
    agg.fuse_cpu_s = sum_opt(|r| r.fuse_cpu_s);
    agg.server_cpu_s = recs.iter().filter_map(|r| r.server_cpu_s).reduce(f64::max);
    // Every rank sees the same server devices over about the same span: the largest count.
    agg.disk_writes = recs.iter().filter_map(|r| r.disk_writes).max();
    agg.disk_write_bytes = recs.iter().filter_map(|r| r.disk_write_bytes).max();
    agg.disk_flushes = recs.iter().filter_map(|r| r.disk_flushes).max();
    agg.server_cpu_util_pct = agg
        .server_cpu_s
        .map(|s| crate::cpu::util_pct(s, agg.seconds));
    agg.stonewalled = recs.iter().any(|r| r.stonewalled);
    let g = &mut agg.figures;
    g.count = recs.iter().map(|r| r.figures.count).sum();
    g.files = recs.iter().map(|r| r.figures.files).sum();
    g.dirs = recs.iter().map(|r| r.figures.dirs).sum();
    g.ops_per_s = sum_opt(|r| r.figures.ops_per_s);
    g.streams = recs.iter().map(|r| r.figures.streams).sum();
    g.achieved_bps = recs
        .iter()
        .filter_map(|r| r.figures.achieved_bps)
        .reduce(f64::min);
    g.extents_per_file = sum_opt(|r| r.figures.extents_per_file).map(|s| s / recs.len() as f64);
    g.extents_max = recs.iter().filter_map(|r| r.figures.extents_max).max();
    g.requested_ops_s = sum_opt(|r| r.figures.requested_ops_s);
    g.valid = recs
        .iter()
        .map(|r| r.figures.valid)
        .collect::<Option<Vec<bool>>>()
        .map(|v| v.iter().all(|&ok| ok));
    g.service_p99_us = recs
        .iter()
        .filter_map(|r| r.figures.service_p99_us)
        .reduce(f64::max);
    agg.latency = merge_latency(&recs);
    agg
}

/// Latency over ranks' summaries (see `sum_of_ranks`).
fn merge_latency(recs: &[&Record]) -> crate::latency::LatencySummary {
    let count: u64 = recs.iter().map(|r| r.latency.lat_count).sum();
    let worst = |f: fn(&crate::latency::LatencySummary) -> f64| {
        recs.iter().map(|r| f(&r.latency)).fold(0.0, f64::max)
    };
    crate::latency::LatencySummary {
        lat_count: count,
        lat_mean_us: if count > 0 {
            recs.iter()
                .map(|r| r.latency.lat_mean_us * r.latency.lat_count as f64)
                .sum::<f64>()
                / count as f64
        } else {
            0.0
        },
        lat_p50_us: worst(|l| l.lat_p50_us),
        lat_p90_us: worst(|l| l.lat_p90_us),
        lat_p99_us: worst(|l| l.lat_p99_us),
        lat_p999_us: worst(|l| l.lat_p999_us),
        lat_p9999_us: worst(|l| l.lat_p9999_us),
        lat_max_us: worst(|l| l.lat_max_us),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn single(bytes: u64, seconds: f64) -> Record {
        Record {
            op: crate::op::Op::Write.into(),
            scope: Scope::Single,
            threads: 1,
            bytes,
            seconds,
            throughput_kib_s: bytes as f64 / 1024.0 / seconds,
            ..Record::default()
        }
    }

    #[test]
    fn the_aggregate_is_the_sum_of_the_ranks() {
        let parts = (0..3)
            .map(|rank| RankPart {
                rank,
                host: format!("h{rank}"),
                records: vec![single(1 << 20, 0.5 + f64::from(rank) * 0.25)],
                span: Span {
                    start_s: 0.001 * f64::from(rank),
                    end_s: 0.5 + f64::from(rank) * 0.25,
                },
            })
            .collect();
        let out = merge(parts);
        assert_eq!(out.len(), 4);
        let agg = out.last().unwrap();
        assert_eq!(agg.scope, Scope::Aggregate);
        assert_eq!(agg.threads, 3);
        let sum: f64 = out[..3].iter().map(|r| r.throughput_kib_s).sum();
        assert!((agg.throughput_kib_s - sum).abs() < 1e-9);
        // parent-sees: 3 MiB from the first start (0 s) to the last end (1 s).
        let t = agg.throughput.as_ref().unwrap();
        assert!(
            (t.parent_sees_kib_s - 3072.0).abs() < 1e-6,
            "{}",
            t.parent_sees_kib_s
        );
        assert_eq!(out[2].rank, Some(2));
        assert_eq!(out[2].host.as_deref(), Some("h2"));
        assert_eq!(out[2].worker, Some(2));
    }

    #[test]
    fn workload_records_add_up_by_position() {
        let meta = |rank: u32| {
            let mut r = single(0, 1.0 + f64::from(rank));
            r.workload = WorkloadKind::Metadata;
            r.op = crate::operation::Operation::CreateFile;
            r.figures.count = Some(100);
            r.figures.ops_per_s = Some(100.0 / (1.0 + f64::from(rank)));
            r.server_cpu_s = Some(0.1 * f64::from(rank + 1));
            r.latency.lat_count = 100;
            r.latency.lat_mean_us = 10.0 * f64::from(rank + 1);
            r.latency.lat_p99_us = 50.0 * f64::from(rank + 1);
            r
        };
        let parts = (0..2)
            .map(|rank| RankPart {
                rank,
                host: format!("h{rank}"),
                records: vec![meta(rank)],
                span: Span::default(),
            })
            .collect();
        let out = merge(parts);
        assert_eq!(out.len(), 3);
        assert_eq!(out[1].scope, Scope::Worker);
        assert_eq!((out[1].rank, out[1].worker), (Some(1), Some(1)));
        let agg = &out[2];
        assert_eq!(agg.scope, Scope::Aggregate);
        assert_eq!(agg.threads, 2);
        assert_eq!(agg.figures.count, Some(200));
        assert_eq!(agg.figures.ops_per_s, Some(150.0));
        assert_eq!(agg.seconds, 2.0);
        assert_eq!(agg.server_cpu_s, Some(0.2));
        assert_eq!(agg.latency.lat_count, 200);
        assert_eq!(agg.latency.lat_mean_us, 15.0);
        assert_eq!(agg.latency.lat_p99_us, 100.0);

        // A rank that failed part-way: nothing is added up, nothing is lost.
        let mut failed = meta(1);
        failed.status = Status::Failed;
        let parts = vec![
            RankPart {
                rank: 0,
                host: "h0".into(),
                records: vec![meta(0), meta(0)],
                span: Span::default(),
            },
            RankPart {
                rank: 1,
                host: "h1".into(),
                records: vec![failed],
                span: Span::default(),
            },
        ];
        let out = merge(parts);
        assert_eq!(out.len(), 3);
        assert!(out.iter().all(|r| r.scope != Scope::Aggregate));
        assert_eq!(out[2].rank, Some(1));
    }

    #[test]
    fn solo_passes_records_and_decisions_through() {
        let (recs, go) = Solo
            .finish(vec![single(1, 1.0)], Span::default(), Ready::Yes)
            .unwrap();
        assert_eq!((recs.len(), go), (1, Go::On));
        assert_eq!(
            Solo.start(Ready::No("x".into())).unwrap(),
            Go::Stop("x".into())
        );
    }
}
