//! fio's JSON output (`--output-format=json` and `json+`) as records: one per job and
//! direction, with throughput, time as bytes over throughput, CPU from `usr_cpu` +
//! `sys_cpu`, and completion-latency percentiles. Each figure is read as the fio that
//! wrote it wrote it (see [`moved`] and [`latency`]), from fio 2.x to today's 3.x. Jobs
//! sharing a name (numjobs without group reporting) become one throughput-mode
//! aggregate. Not: fio's text or terse output.

use super::{record, Imported};
use serde_json::Value;
use sharebench_core::latency::LatencySummary;
use sharebench_core::op::Op;
use sharebench_core::operation::Operation;
use sharebench_core::record::WorkloadKind;
use sharebench_core::record::{Record, Scope, ThroughputSummary};
use sharebench_core::size::{parse_size, BareUnit};
use std::collections::BTreeMap;

/// The JSON part of fio's output (fio may print notes before it), if it is fio's.
pub fn json_part(text: &str) -> Option<&str> {
    let start = text
        .match_indices('{')
        .map(|(i, _)| i)
        .find(|&i| i == 0 || text[..i].ends_with('\n'))?;
    let json = &text[start..];
    (json.contains("\"fio version\"") || json.contains("\"jobs\"")).then_some(json)
}

fn opt<'a>(job: &'a Value, global: &'a Value, key: &str) -> Option<&'a str> {
    job.get("job options")
        .and_then(|o| o.get(key))
        .or_else(|| global.get(key))
        .and_then(Value::as_str)
}

fn op_of(rw: &str) -> (Operation, bool, bool) {
    // (op, counts reads, counts writes)
    match rw {
        "read" => (Op::Read.into(), true, false),
        "write" => (Op::Write.into(), false, true),
        "randread" => (Op::RandomRead.into(), true, false),
        "randwrite" => (Op::RandomWrite.into(), false, true),
        "randrw" => (Op::RandomMix.into(), true, true),
        "rw" | "readwrite" => (Operation::ReadWriteMix, true, true),
        "trim" | "randtrim" | "trimwrite" => (Operation::Trim, false, true),
        _ => (Op::Read.into(), true, false),
    }
}

fn f(v: Option<&Value>) -> f64 {
    v.and_then(Value::as_f64).unwrap_or(0.0)
}

/// One direction's completion latency: `clat_ns` in nanoseconds (fio 3.0 on), or `clat` in
/// microseconds (fio 2.x, which gives no sample count: one per I/O, `total_ios`).
fn latency(side: &Value) -> LatencySummary {
    let (clat, to_us) = match side.get("clat_ns") {
        Some(ns) => (ns, 1e-3),
        None => (side.get("clat").unwrap_or(&Value::Null), 1.0),
    };
    let pct = clat.get("percentile").unwrap_or(&Value::Null);
    let p = |k: &str| f(pct.get(k)) * to_us;
    let count = clat
        .get("N")
        .or_else(|| side.get("total_ios"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    LatencySummary {
        lat_count: count,
        lat_mean_us: f(clat.get("mean")) * to_us,
        lat_p50_us: p("50.000000"),
        lat_p90_us: p("90.000000"),
        lat_p99_us: p("99.000000"),
        lat_p999_us: p("99.900000"),
        lat_p9999_us: p("99.990000"),
        lat_max_us: f(clat.get("max")) * to_us,
    }
}

/// What one direction of a job moved: bytes, and bytes per second. Until fio 2.21
/// `io_bytes` held KiB (2.21 made it bytes and added `io_kbytes` for the old figure);
/// `bw` is KiB/s in every version, `bw_bytes` (fio 3.2 on) bytes/s. A direction that
/// gives neither figure of a pair names the one it lacks.
fn moved(side: &Value, dir: &str) -> Result<(f64, f64), String> {
    let figure = |key: &str| side.get(key).map(|v| f(Some(v)));
    let io_unit = if side.get("io_kbytes").is_some() {
        1.0
    } else {
        1024.0
    };
    let io = figure("io_bytes").map(|n| n * io_unit);
    let bw = figure("bw_bytes").or_else(|| figure("bw").map(|n| n * 1024.0));
    match (io, bw) {
        (Some(io), Some(bw)) => Ok((io, bw)),
        (None, _) => Err(format!("has no {dir} io_bytes")),
        (_, None) => Err(format!("has no {dir} bw_bytes or bw")),
    }
}

/// The first figure of a job's read or write part that is below zero (no fio writes one).
fn negative_field(job: &Value) -> Option<String> {
    for dir in ["read", "write"] {
        for field in [
            "io_bytes",
            "io_kbytes",
            "bw_bytes",
            "bw",
            "total_ios",
            "runtime",
        ] {
            if job
                .get(dir)
                .and_then(|d| d.get(field))
                .and_then(Value::as_f64)
                .is_some_and(|v| v < 0.0)
            {
                return Some(format!("{dir} {field}"));
            }
        }
    }
    None
}

/// One job as a record, or why it cannot be one (what the importer needs is missing, or
/// the job moved nothing): never a figure filled in.
fn job_record(job: &Value, global: &Value, source: &str) -> Result<Record, String> {
    if job.get("job options").is_none() && global.is_null() {
        return Err(
            "has no \"job options\" (nor global ones): its pattern and sizes are unknown".into(),
        );
    }
    if let Some(field) = negative_field(job) {
        return Err(format!("has a negative {field}"));
    }
    // fio's own default when no rw is given.
    let rw = opt(job, global, "rw")
        .or_else(|| opt(job, global, "readwrite"))
        .unwrap_or("read");
    let (op, reads, writes) = op_of(rw);
    let (r, w) = (
        job.get("read").unwrap_or(&Value::Null),
        job.get("write").unwrap_or(&Value::Null),
    );
    let (r_io, r_bw) = if reads { moved(r, "read")? } else { (0.0, 0.0) };
    let (w_io, w_bw) = if writes {
        moved(w, "write")?
    } else {
        (0.0, 0.0)
    };
    let (io_bytes, bw) = (r_io + w_io, r_bw + w_bw);
    if io_bytes <= 0.0 || bw <= 0.0 {
        return Err("moved no data".into());
    }
    let total_ios = f(r.get("total_ios")) + f(w.get("total_ios"));
    let named_bs = opt(job, global, "bs")
        .or_else(|| opt(job, global, "blocksize"))
        .and_then(|b| {
            parse_size(
                b.split(['-', ',', ':']).next().unwrap_or(b),
                BareUnit::Bytes,
            )
            .ok()
        });
    // Without a bs, the mean request (bytes over I/Os); with neither, nothing to say.
    let mean = (total_ios >= 1.0).then(|| (io_bytes / total_ios) as u64);
    let Some(bs) = named_bs.or(mean).filter(|&b| b > 0) else {
        return Err("gives no block size and no I/O count".into());
    };
    let size = opt(job, global, "size")
        .and_then(|s| parse_size(s, BareUnit::Bytes).ok())
        .unwrap_or(io_bytes as u64);
    let mut rec = record(WorkloadKind::Fio, source, op, size, bs, bw / 1024.0);
    rec.bytes = io_bytes as u64;
    rec.seconds = io_bytes / bw;
    let cpu_pct = f(job.get("usr_cpu")) + f(job.get("sys_cpu"));
    rec.cpu_util_pct = cpu_pct;
    rec.cpu_total_s = cpu_pct / 100.0 * rec.seconds;
    rec.latency = latency(if reads { r } else { w });
    rec.direct = opt(job, global, "direct") == Some("1");
    rec.sync = opt(job, global, "sync") == Some("1");
    rec.include_fsync = opt(job, global, "end_fsync") == Some("1");
    rec.client = opt(job, global, "ioengine").unwrap_or("fio").to_string();
    rec.iodepth = opt(job, global, "iodepth")
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    Ok(rec)
}

/// Parses fio JSON; `source` names it in the records' `run_id`.
pub fn parse(text: &str, source: &str) -> Result<Imported, String> {
    let json = json_part(text).ok_or("not fio JSON output (no \"jobs\")")?;
    let root: Value =
        serde_json::from_str(json).map_err(|e| format!("fio JSON cannot be read: {e}"))?;
    let jobs = root
        .get("jobs")
        .and_then(Value::as_array)
        .ok_or("fio JSON has no \"jobs\" list")?;
    let global = root.get("global options").cloned().unwrap_or(Value::Null);
    let mut out = Imported::default();
    // jobname -> workers' records, to fold numjobs into aggregates.
    let mut by_name: BTreeMap<String, Vec<Record>> = BTreeMap::new();
    let mut named: BTreeMap<&str, usize> = BTreeMap::new();
    for job in jobs {
        let name = job.get("jobname").and_then(Value::as_str).unwrap_or("job");
        *named.entry(name).or_default() += 1;
    }
    for job in jobs {
        let name = job
            .get("jobname")
            .and_then(Value::as_str)
            .unwrap_or("job")
            .to_string();
        let mut rec = match job_record(job, &global, source) {
            Ok(rec) => rec,
            Err(why) => {
                out.notes
                    .push(format!("{source}: job '{name}' {why}; skipped"));
                continue;
            }
        };
        let numjobs: u32 = opt(job, &global, "numjobs")
            .and_then(|n| n.parse().ok())
            .unwrap_or(1);
        // fio 2.x leaves a bare `group_reporting` out of "job options": one entry for a
        // name run by several jobs is their group's report.
        let grouped = opt(job, &global, "group_reporting").is_some_and(|g| g != "0")
            || named.get(name.as_str()) == Some(&1);
        if grouped && numjobs > 1 {
            rec.threads = numjobs;
            rec.scope = Scope::Aggregate;
            rec.throughput = Some(ThroughputSummary {
                children_see_kib_s: rec.throughput_kib_s,
                parent_sees_kib_s: rec.throughput_kib_s,
                ..Default::default()
            });
            out.records.push(rec);
        } else {
            by_name.entry(name).or_default().push(rec);
        }
    }
    for (_, workers) in by_name {
        if workers.len() == 1 {
            out.records.extend(workers);
            continue;
        }
        let rates: Vec<f64> = workers.iter().map(|w| w.throughput_kib_s).collect();
        let sum: f64 = rates.iter().sum();
        let bytes: u64 = workers.iter().map(|w| w.bytes).sum();
        let secs = workers.iter().map(|w| w.seconds).fold(0.0, f64::max);
        let mut agg = workers[0].clone();
        agg.threads = workers.len() as u32;
        agg.scope = Scope::Aggregate;
        agg.bytes = bytes;
        agg.seconds = secs;
        agg.throughput_kib_s = sum;
        agg.cpu_util_pct = workers.iter().map(|w| w.cpu_util_pct).sum();
        agg.throughput = Some(ThroughputSummary {
            children_see_kib_s: sum,
            parent_sees_kib_s: if secs > 0.0 {
                bytes as f64 / 1024.0 / secs
            } else {
                0.0
            },
            min_worker_kib_s: rates.iter().copied().fold(f64::INFINITY, f64::min),
            max_worker_kib_s: rates.iter().copied().fold(0.0, f64::max),
            avg_worker_kib_s: sum / rates.len() as f64,
            min_xfer_bytes: workers.iter().map(|w| w.bytes).min().unwrap_or(0),
        });
        out.records.push(agg);
    }
    super::iozone_text::number_repetitions(&mut out.records);
    if out.records.is_empty() {
        let why = out
            .notes
            .first()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        return Err(format!("fio JSON holds no job that moved data{why}"));
    }
    Ok(out)
}
