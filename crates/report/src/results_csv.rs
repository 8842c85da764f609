//! results.csv: the records as a tidy table, one row per record, for spreadsheets and
//! scripts (`run` writes it beside results.jsonl, `report` beside report.html). Not: the
//! analysis (cells, comparisons: results.xlsx has those).

#[cfg(test)]
use sharebench_core::op::Op;
use sharebench_core::record::Record;
use std::io;

/// The CSV columns, in order: the tidy, one-row-per-record view of the schema.
pub const CSV_COLUMNS: [&str; 67] = [
    "run_id",
    "target",
    "backend",
    "client",
    "workload",
    "op",
    "file_size",
    "record_size",
    "threads",
    "scope",
    "worker",
    "rep",
    "bytes",
    "seconds",
    "throughput_kib_s",
    "cpu_user_s",
    "cpu_sys_s",
    "cpu_total_s",
    "cpu_util_pct",
    "server_cpu_s",
    "server_cpu_util_pct",
    "lat_count",
    "lat_mean_us",
    "lat_p50_us",
    "lat_p90_us",
    "lat_p99_us",
    "lat_p999_us",
    "lat_p9999_us",
    "lat_max_us",
    "children_see_kib_s",
    "parent_sees_kib_s",
    "min_worker_kib_s",
    "max_worker_kib_s",
    "stonewalled",
    "cache_purge",
    "status",
    "error",
    "test",
    "count",
    "files",
    "dirs",
    "ops_per_s",
    "streams",
    "bitrate_bps",
    "achieved_bps",
    "prealloc_hints",
    "prealloc",
    "extents_per_file",
    "extents_max",
    "note",
    "rank",
    "host",
    "fuse_cpu_s",
    "passes",
    "reps_stop",
    "others_cpu_s",
    "steal_s",
    "machine_s",
    "disk_writes",
    "disk_write_bytes",
    "disk_flushes",
    "iodepth",
    "mix",
    "load_point",
    "requested_ops_s",
    "valid",
    "service_p99_us",
];

/// The records as CSV with `CSV_COLUMNS`: a header, then a row per record.
pub fn render(records: &[Record]) -> io::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(CSV_COLUMNS)?;
    for r in records {
        let t = r.throughput.unwrap_or_default();
        let opt = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
        let has_t = r.throughput.is_some();
        let l = &r.latency;
        let g = &r.figures;
        let optu = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_default();
        w.write_record([
            r.run_id.clone(),
            r.target.clone(),
            r.backend.clone(),
            r.client.clone(),
            r.workload.to_string(),
            r.op.to_string(),
            r.file_size.to_string(),
            r.record_size.to_string(),
            r.threads.to_string(),
            serde_json::to_value(r.scope)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            r.worker.map(|w| w.to_string()).unwrap_or_default(),
            r.rep.to_string(),
            r.bytes.to_string(),
            r.seconds.to_string(),
            r.throughput_kib_s.to_string(),
            r.cpu_user_s.to_string(),
            r.cpu_sys_s.to_string(),
            r.cpu_total_s.to_string(),
            r.cpu_util_pct.to_string(),
            opt(r.server_cpu_s),
            opt(r.server_cpu_util_pct),
            l.lat_count.to_string(),
            l.lat_mean_us.to_string(),
            l.lat_p50_us.to_string(),
            l.lat_p90_us.to_string(),
            l.lat_p99_us.to_string(),
            l.lat_p999_us.to_string(),
            l.lat_p9999_us.to_string(),
            l.lat_max_us.to_string(),
            opt(has_t.then_some(t.children_see_kib_s)),
            opt(has_t.then_some(t.parent_sees_kib_s)),
            opt(has_t.then_some(t.min_worker_kib_s)),
            opt(has_t.then_some(t.max_worker_kib_s)),
            r.stonewalled.to_string(),
            r.cache_purge.clone().unwrap_or_default(),
            serde_json::to_value(r.status)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            r.error.clone().unwrap_or_default(),
            g.test.clone().unwrap_or_default(),
            optu(g.count),
            optu(g.files),
            optu(g.dirs),
            opt(g.ops_per_s),
            optu(g.streams.map(u64::from)),
            optu(g.bitrate_bps),
            opt(g.achieved_bps),
            g.prealloc_hints.clone().unwrap_or_default(),
            g.prealloc.clone().unwrap_or_default(),
            opt(g.extents_per_file),
            optu(g.extents_max),
            g.note.clone().unwrap_or_default(),
            r.rank.map(|x| x.to_string()).unwrap_or_default(),
            r.host.clone().unwrap_or_default(),
            opt(r.fuse_cpu_s),
            r.passes.map(|x| x.to_string()).unwrap_or_default(),
            r.reps_stop
                .map(|x| x.name().to_string())
                .unwrap_or_default(),
            opt(r.others_cpu_s),
            opt(r.steal_s),
            opt(r.machine_s),
            optu(r.disk_writes),
            optu(r.disk_write_bytes),
            optu(r.disk_flushes),
            r.iodepth.to_string(),
            g.mix.clone().unwrap_or_default(),
            g.load_point.map(|p| p.to_string()).unwrap_or_default(),
            opt(g.requested_ops_s),
            g.valid.map(|v| v.to_string()).unwrap_or_default(),
            opt(g.service_p99_us),
        ])?;
    }
    w.into_inner().map_err(|e| e.into_error())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sharebench_core::record::Scope;

    #[test]
    fn csv_has_a_header_and_a_row_per_record() {
        let r = Record {
            run_id: "r1".into(),
            target: "/tmp".into(),
            op: Op::Write.into(),
            scope: Scope::Single,
            ..Default::default()
        };
        let text = String::from_utf8(render(&[r.clone(), r]).unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("run_id,target,backend"));
        assert_eq!(lines[1].split(',').count(), CSV_COLUMNS.len());
    }
}
