//! Importers on real outputs (fixtures/README.md says where each comes from): the numbers
//! IOzone and fio printed come back exactly, and damaged inputs fail with one line.

use sharebench_core::record::{Record, Scope};
use sharebench_report::import::{biff, fio, iozone_text, workbook};
use std::path::PathBuf;

fn fixture(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The records fio's importer makes of a fixture, which must import.
fn fio_records(name: &str) -> Vec<Record> {
    fio::parse(&fixture(name), "f")
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .records
}

fn find<'a>(rs: &'a [Record], op: &str, threads: u32) -> &'a Record {
    rs.iter()
        .find(|r| r.op.name() == op && r.threads == threads)
        .unwrap_or_else(|| panic!("no {op} x{threads}"))
}

#[test]
fn iozone_3506_auto_table_and_throughput_blocks() {
    let got = iozone_text::parse(&fixture("iozone-3.506-auto-and-t4.txt"), "f")
        .unwrap()
        .records;
    let single: Vec<&Record> = got.iter().filter(|r| r.scope == Scope::Single).collect();
    let expect = [
        ("write", 14065.0),
        ("rewrite", 24650.0),
        ("read", 24306.0),
        ("reread", 24074.0),
        ("random-read", 9972.0),
        ("random-write", 9793.0),
        ("backward-read", 16588.0),
        ("record-rewrite", 10777.0),
        ("stride-read", 15387.0),
        ("fwrite", 22397.0),
        ("frewrite", 23525.0),
        ("fread", 14663.0),
        ("freread", 13678.0),
    ];
    assert_eq!(single.len(), expect.len());
    for ((op, v), r) in expect.iter().zip(&single) {
        assert_eq!((r.op.name(), r.throughput_kib_s), (*op, *v));
        assert_eq!((r.file_size, r.record_size), (4096 * 1024, 1024));
    }
    let w = find(&got, "write", 4);
    let t = w.throughput.unwrap();
    assert_eq!(w.scope, Scope::Aggregate);
    assert_eq!((w.file_size, w.record_size), (1024 * 1024, 1024));
    assert_eq!(t.children_see_kib_s, 4247.53);
    assert_eq!(t.parent_sees_kib_s, 284.00);
    assert_eq!(t.min_worker_kib_s, 217.27);
    assert_eq!(t.max_worker_kib_s, 3564.70);
    assert_eq!(t.avg_worker_kib_s, 1061.88);
    assert_eq!(t.min_xfer_bytes, 757 * 1024);
    assert!(w.stonewalled);
    assert_eq!(
        find(&got, "reread", 4)
            .throughput
            .unwrap()
            .children_see_kib_s,
        22204.79
    );
}

#[test]
fn iozone_3408_skipped_tests_keep_their_columns() {
    let got = iozone_text::parse(&fixture("iozone-3.408-skipped-tests.txt"), "f")
        .unwrap()
        .records;
    let pairs: Vec<(&str, f64)> = got
        .iter()
        .map(|r| (r.op.name(), r.throughput_kib_s))
        .collect();
    assert_eq!(
        pairs,
        vec![
            ("write", 31782.0),
            ("rewrite", 22524.0),
            ("random-read", 816017.0),
            ("random-write", 10411.0),
            ("stride-read", 3779260.0)
        ]
    );
    assert_eq!(got[0].file_size, 409600 * 1024);
}

#[test]
fn iozone_r_report_excerpt() {
    let got = iozone_text::parse(&fixture("iozone-R-excerpt.txt"), "f")
        .unwrap()
        .records;
    assert_eq!(got.len(), 6);
    assert_eq!(
        (
            got[2].op.name(),
            got[2].file_size,
            got[2].record_size,
            got[2].throughput_kib_s
        ),
        ("write", 64 * 1024, 4096, 340306.0)
    );
    assert_eq!(
        (got[3].op.name(), got[3].throughput_kib_s),
        ("rewrite", 516994.0)
    );
}

#[test]
fn fio_json_single_job_and_numjobs() {
    let got = fio_records("fio-seqwrite-64k.json");
    assert_eq!(got.len(), 1);
    assert_eq!(
        (got[0].op.name(), got[0].record_size, got[0].file_size),
        ("write", 65536, 8 << 20)
    );
    assert_eq!(got[0].throughput_kib_s, 4194304000.0 / 1024.0);
    let got = fio_records("fio-randread-numjobs2.json");
    assert_eq!(got.len(), 1);
    let a = &got[0];
    assert_eq!(
        (a.op.name(), a.threads, a.scope),
        ("random-read", 2, Scope::Aggregate)
    );
    assert_eq!(a.throughput_kib_s, (55188210.0 + 57456219.0) / 1024.0);
    assert_eq!((a.client.as_str(), a.iodepth), ("psync", 1));
    // A queue: the engine is the client, and the depth is kept.
    let got = fio_records("fio-randread-uring-qd4.json");
    assert_eq!((got[0].client.as_str(), got[0].iodepth), ("io_uring", 4));
    assert!(fio::parse("{\"jobs\": 3}", "f").is_err());
}

/// fio 2.x wrote other units: `io_bytes` in KiB until 2.21 (then bytes, beside `io_kbytes`),
/// `bw` in KiB/s (no `bw_bytes` before 3.2), `clat` in microseconds (no `clat_ns` before
/// 3.0, no sample count). The fixtures are real fio 2.20 and 2.21 output (fixtures/README.md);
/// every expected figure below is the fixture's own, converted by hand.
#[test]
fn fio_2x_json_in_the_units_each_version_wrote() {
    // fio 2.20: io_bytes 32768 (KiB), bw 1129931 KiB/s, clat p50 11 us, p99 1576 us.
    let got = fio_records("fio-2.20-seqread-128k.json");
    assert_eq!(got.len(), 1);
    let r = &got[0];
    assert_eq!(
        (r.op.name(), r.record_size, r.file_size, r.bytes),
        ("read", 128 << 10, 32 << 20, 32 << 20)
    );
    assert_eq!(r.throughput_kib_s, 1129931.0);
    assert_eq!((r.latency.lat_p50_us, r.latency.lat_p99_us), (11.0, 1576.0));
    assert_eq!((r.latency.lat_mean_us, r.latency.lat_count), (109.25, 256));
    // json+ (with latency bins) of a mixed job: both directions' bytes and rates add up.
    let got = fio_records("fio-2.20-randrw-jsonplus.json");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].bytes, (5668 + 2524) * 1024);
    assert_eq!(got[0].throughput_kib_s, 35873.0 + 15974.0);
    // fio 2.21: io_bytes in bytes beside io_kbytes; bw still KiB/s.
    let got = fio_records("fio-2.21-seqwrite-64k.json");
    assert_eq!(
        (got[0].bytes, got[0].throughput_kib_s),
        (16 << 20, 3276800.0)
    );
    assert_eq!(
        (got[0].latency.lat_p50_us, got[0].latency.lat_p99_us),
        (15.0, 47.0)
    );
    // numjobs=2 with group_reporting, which fio 2.21 leaves out of "job options": one
    // entry for the two jobs, their aggregate.
    let got = fio_records("fio-2.21-randread-numjobs2.json");
    assert_eq!(got.len(), 1);
    assert_eq!(
        (got[0].op.name(), got[0].threads, got[0].scope, got[0].bytes),
        ("random-read", 2, Scope::Aggregate, 16 << 20)
    );
    assert_eq!(got[0].throughput_kib_s, 61134.0);
    // A job whose direction lacks a figure the importer needs names it.
    let text = fixture("fio-2.21-seqwrite-64k.json").replace("\"bw\" :", "\"bandwidth\" :");
    let e = fio::parse(&text, "f").unwrap_err();
    assert!(e.contains("has no write bw_bytes or bw"), "{e}");
    let text = fixture("fio-2.20-seqread-128k.json").replace("\"io_bytes\" :", "\"moved\" :");
    let e = fio::parse(&text, "f").unwrap_err();
    assert!(e.contains("has no read io_bytes"), "{e}");
}

/// fio jobs that lack what the importer needs are skipped with a note, never filled in:
/// no options at all, a negative figure, neither a block size nor an I/O count.
#[test]
fn fio_jobs_lacking_what_is_needed_are_skipped_with_a_note() {
    let job = |opts: &str, read: &str| {
        format!(
            r#"{{"jobs": [{{"jobname": "j"{opts}, "read": {{{read}}}, "write": {{}}}}, {{"jobname": "ok", "job options": {{"rw": "read", "bs": "4k"}}, "read": {{"io_bytes": 4096, "bw_bytes": 4096, "total_ios": 1}}}}]}}"#
        )
    };
    let cases = [
        (
            job(
                "",
                r#""io_bytes": 1048576, "bw_bytes": 1048576, "total_ios": 256"#,
            ),
            "no \"job options\"",
        ),
        (
            job(
                r#", "job options": {"rw": "read", "bs": "4k"}"#,
                r#""io_bytes": 1048576, "bw_bytes": -5, "total_ios": 256"#,
            ),
            "negative read bw_bytes",
        ),
        (
            job(
                r#", "job options": {"rw": "read"}"#,
                r#""io_bytes": 1048576, "bw_bytes": 1048576"#,
            ),
            "no block size and no I/O count",
        ),
    ];
    for (text, why) in cases {
        let got = fio::parse(&text, "f").unwrap();
        assert_eq!(got.records.len(), 1, "{why}: only the whole job");
        assert_eq!(got.records[0].record_size, 4096);
        assert!(
            got.notes.iter().any(|n| n.contains(why)),
            "{why}: {:?}",
            got.notes
        );
    }
}

/// A BIFF2 sheet exactly as libbif writes it (IOzone spec §6): BOF, 268-byte LABELs,
/// 19-byte NUMBERs, EOF.
fn libbif_sheet() -> Vec<u8> {
    let mut b = vec![0x09, 0x00, 0x04, 0x00, 0x02, 0x00, 0x10, 0x00];
    let label = |b: &mut Vec<u8>, row: u16, col: u16, t: &str| {
        b.extend([0x04, 0x00, 0x08, 0x01]);
        b.extend(row.to_le_bytes());
        b.extend(col.to_le_bytes());
        b.extend([0, 0, 0, t.len() as u8]);
        let mut s = t.as_bytes().to_vec();
        s.resize(256, 0);
        b.extend(s);
    };
    let number = |b: &mut Vec<u8>, row: u16, col: u16, x: f64| {
        b.extend([0x03, 0x00, 0x0f, 0x00]);
        b.extend(row.to_le_bytes());
        b.extend(col.to_le_bytes());
        b.extend([0, 0, 0]);
        b.extend(x.to_le_bytes());
    };
    label(&mut b, 0, 0, "iozone -a -n 64k -g 128k -i 0 -b x.xls ");
    label(&mut b, 1, 0, " ");
    label(
        &mut b,
        2,
        0,
        "The top row is records sizes, the left column is file sizes",
    );
    label(&mut b, 3, 0, "Writer Report");
    for (j, r) in [4.0, 8.0, 16.0].iter().enumerate() {
        number(&mut b, 4, j as u16 + 1, *r);
    }
    number(&mut b, 5, 0, 64.0);
    number(&mut b, 5, 1, 503901.0);
    number(&mut b, 5, 2, 816670.0);
    number(&mut b, 5, 3, 720948.0);
    number(&mut b, 6, 0, 128.0);
    number(&mut b, 6, 1, 923008.0);
    number(&mut b, 6, 2, 0.0);
    number(&mut b, 6, 3, 1158853.0);
    b.extend([0x0a, 0x00, 0x00, 0x00]);
    b
}

#[test]
fn biff2_workbook_gives_the_printed_numbers_and_zero_is_missing() {
    let grid = biff::read(&libbif_sheet()).unwrap();
    let got = workbook::parse(&grid, "x.xls").unwrap().records;
    let v: Vec<(u64, u64, f64)> = got
        .iter()
        .map(|r| (r.file_size / 1024, r.record_size / 1024, r.throughput_kib_s))
        .collect();
    assert_eq!(
        v,
        vec![
            (64, 4, 503901.0),
            (64, 8, 816670.0),
            (64, 16, 720948.0),
            (128, 4, 923008.0),
            (128, 16, 1158853.0)
        ]
    );
}

#[test]
fn truncated_workbook_is_one_clear_error() {
    let b = libbif_sheet();
    for cut in [b.len() - 1, b.len() - 4, b.len() - 30, 300, 9] {
        let e = biff::read(&b[..cut]).unwrap_err();
        assert!(e.contains("truncated"), "{cut}: {e}");
        assert!(!e.contains('\n'));
    }
}

#[test]
fn xlsx_workbook_through_calamine() {
    let mut wb = rust_xlsxwriter::Workbook::new();
    let ws = wb.add_worksheet();
    ws.write_string(0, 0, "iozone -a -b x.xlsx ").unwrap();
    ws.write_string(3, 0, "Reader Report").unwrap();
    ws.write_number(4, 1, 4.0).unwrap();
    ws.write_number(5, 0, 64.0).unwrap();
    ws.write_number(5, 1, 1315194.0).unwrap();
    let bytes = wb.save_to_buffer().unwrap();
    let grid = workbook::read_with_calamine(&bytes).unwrap();
    let got = workbook::parse(&grid, "x.xlsx").unwrap().records;
    assert_eq!(got.len(), 1);
    assert_eq!(
        (got[0].op.name(), got[0].throughput_kib_s),
        ("read", 1315194.0)
    );
    assert!(workbook::read_with_calamine(&bytes[..bytes.len() / 2]).is_err());
}

// ---------------------------------------------------------------------------------------
// Real IOzone 3.414 outputs (fixtures/README.md: built here from the public sources, run
// on tmpfs). Each test reads what IOzone printed independently of the importer and asks
// the importer, on the text and on the `-b` workbook of the same run, for exactly those
// numbers.

fn fixture_bytes(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// (op, file KiB, record KiB) -> the integer IOzone printed, read from the text's
/// "Excel output is below" reports with nothing but string splitting.
type Printed = std::collections::BTreeMap<(String, u64, u64), u64>;

fn printed_reports(text: &str) -> Printed {
    let ops = [
        ("\"Writer report\"", "write"),
        ("\"Re-writer report\"", "rewrite"),
        ("\"Reader report\"", "read"),
        ("\"Re-Reader report\"", "reread"),
        ("\"Random read report\"", "random-read"),
        ("\"Random write report\"", "random-write"),
    ];
    let unq = |t: &str| -> u64 { t.trim_matches('"').parse().unwrap() };
    let mut out = Printed::new();
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with("Excel output is below"))
        .expect("an -R report");
    let mut i = start;
    while i < lines.len() {
        let Some((_, op)) = ops.iter().find(|(t, _)| lines[i].trim() == *t) else {
            i += 1;
            continue;
        };
        let recs: Vec<u64> = lines[i + 1].split_whitespace().map(unq).collect();
        i += 2;
        while i < lines.len() && lines[i].starts_with('"') && !lines[i].ends_with("report\"") {
            let mut toks = lines[i].split_whitespace();
            let kb = unq(toks.next().unwrap());
            for (k, v) in toks.enumerate() {
                let key = (op.to_string(), kb, recs[k]);
                assert!(out.insert(key, v.parse().unwrap()).is_none());
            }
            i += 1;
        }
    }
    out
}

fn imported(records: &[Record]) -> Printed {
    let mut out = Printed::new();
    for r in records {
        assert_eq!(r.throughput_kib_s.fract(), 0.0, "{r:?}");
        let key = (r.op.to_string(), r.file_size / 1024, r.record_size / 1024);
        assert!(out.insert(key, r.throughput_kib_s as u64).is_none());
    }
    out
}

/// The auto table's rows, whose columns run together once a figure has 8 digits
/// ("305715312902017"): with the blanks removed, a row is exactly its figures from the
/// reports, in column order. Returns the rows checked.
fn table_matches_reports(text: &str, printed: &Printed, columns: &[&str]) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let head = lines
        .iter()
        .position(|l| l.trim_start().starts_with("KB  reclen"))
        .unwrap();
    let mut rows = 0;
    for line in &lines[head + 1..] {
        let toks: Vec<&str> = line.split_whitespace().collect();
        if toks.len() < 3 || !toks.iter().all(|t| t.bytes().all(|b| b.is_ascii_digit())) {
            break;
        }
        let (kb, rec) = (toks[0].parse().unwrap(), toks[1].parse().unwrap());
        let want: String = columns
            .iter()
            .map(|op| printed[&(op.to_string(), kb, rec)].to_string())
            .collect();
        assert_eq!(toks[2..].concat(), want, "{line}");
        rows += 1;
    }
    rows
}

fn command_line(text: &str) -> String {
    let l = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Command line used: "))
        .unwrap();
    format!("{l} ")
}

fn check_auto_run(stem: &str, columns: &[&str], cells: usize) {
    let text = fixture(&format!("{stem}.txt"));
    let printed = printed_reports(&text);
    assert_eq!(printed.len(), cells * columns.len());
    assert!(printed.values().all(|v| *v > 0));
    assert_eq!(table_matches_reports(&text, &printed, columns), cells);

    let from_text = iozone_text::parse(&text, "t").unwrap().records;
    assert!(from_text
        .iter()
        .all(|r| r.scope == Scope::Single && r.rep == 0));
    assert_eq!(imported(&from_text), printed, "{stem}.txt");

    // The same log without -R: only the table, with its run-together columns.
    let table_only = &text[..text.find("Excel output is below").unwrap()];
    let from_table = iozone_text::parse(table_only, "t").unwrap().records;
    assert_eq!(imported(&from_table), printed, "{stem}.txt table");

    let bytes = fixture_bytes(&format!("{stem}.xls"));
    assert!(biff::looks_like(&bytes));
    let grid = biff::read(&bytes).unwrap();
    assert_eq!(
        grid.get(0, 0),
        Some(&workbook::Value::Text(command_line(&text)))
    );
    let from_xls = workbook::parse(&grid, "x").unwrap().records;
    assert_eq!(imported(&from_xls), printed, "{stem}.xls");
}

#[test]
fn real_iozone_auto_text_and_workbook_give_every_printed_number() {
    // -a -n 64k -g 4m -i 0 -i 1 -i 2: 7 file sizes, 5..11 record sizes each.
    check_auto_run(
        "iozone-real-auto",
        &[
            "write",
            "rewrite",
            "read",
            "reread",
            "random-read",
            "random-write",
        ],
        5 + 6 + 7 + 8 + 9 + 10 + 11,
    );
}

#[test]
fn real_iozone_auto_z_text_and_workbook_give_every_printed_number() {
    // -a -z -n 64k -g 1m -y 4k -q 64k -i 0 -i 1: 5 file sizes x 5 record sizes.
    check_auto_run(
        "iozone-real-auto-z",
        &["write", "rewrite", "read", "reread"],
        25,
    );
}

/// The "Children see throughput" block of a throughput run as printed: phase -> the
/// five figures and the min xfer, as the strings IOzone printed.
fn printed_throughput(text: &str) -> Vec<(&'static str, [String; 6])> {
    let phases = [
        ("initial writers", "write"),
        ("rewriters", "rewrite"),
        ("readers", "read"),
        ("re-readers", "reread"),
    ];
    let lines: Vec<&str> = text.lines().collect();
    let after_eq = |l: &str| -> String {
        l.rsplit('=')
            .next()
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .to_string()
    };
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(rest) = l.trim().strip_prefix("Children see throughput for") else {
            continue;
        };
        let phase = rest.split('=').next().unwrap().trim();
        let phase = phase.trim_start_matches(|c: char| c.is_ascii_digit() || c == ' ');
        let (_, op) = phases.iter().find(|(p, _)| *p == phase).unwrap();
        let figures: [String; 6] = std::array::from_fn(|k| after_eq(lines[i + k]));
        out.push((*op, figures));
    }
    out
}

fn check_throughput_run(stem: &str) {
    let text = fixture(&format!("{stem}.txt"));
    let printed = printed_throughput(&text);
    assert_eq!(
        printed.iter().map(|(op, _)| *op).collect::<Vec<_>>(),
        ["write", "rewrite", "read", "reread"]
    );
    let num = |s: &String| -> f64 { s.parse().unwrap() };

    let from_text = iozone_text::parse(&text, "t").unwrap().records;
    assert_eq!(from_text.len(), printed.len());
    for (op, f) in &printed {
        let r = find(&from_text, op, 2);
        assert_eq!(r.scope, Scope::Aggregate);
        assert_eq!((r.file_size, r.record_size), (512 * 1024, 4096));
        let t = r.throughput.unwrap();
        assert_eq!(r.throughput_kib_s, num(&f[0]), "{op}");
        assert_eq!(t.children_see_kib_s, num(&f[0]), "{op}");
        assert_eq!(t.parent_sees_kib_s, num(&f[1]), "{op}");
        assert_eq!(t.min_worker_kib_s, num(&f[2]), "{op}");
        assert_eq!(t.max_worker_kib_s, num(&f[3]), "{op}");
        assert_eq!(t.avg_worker_kib_s, num(&f[4]), "{op}");
        assert_eq!(t.min_xfer_bytes, (num(&f[5]) * 1024.0) as u64, "{op}");
    }

    // The workbook keeps IOzone's double; the text printed it with %.2f.
    let grid = biff::read(&fixture_bytes(&format!("{stem}.xls"))).unwrap();
    assert_eq!(
        grid.get(0, 0),
        Some(&workbook::Value::Text(command_line(&text)))
    );
    let from_xls = workbook::parse(&grid, "x").unwrap().records;
    assert_eq!(from_xls.len(), printed.len());
    for (op, f) in &printed {
        let r = find(&from_xls, op, 2);
        assert_eq!(
            (r.scope, r.file_size, r.record_size),
            (Scope::Aggregate, 512 * 1024, 4096)
        );
        assert_eq!(format!("{:.2}", r.throughput_kib_s), f[0], "{op}");
        assert_eq!(
            format!("{:.2}", r.throughput.unwrap().children_see_kib_s),
            f[0]
        );
        let t = find(&from_text, op, 2);
        assert!((t.throughput_kib_s - r.throughput_kib_s).abs() <= 0.005);
    }
}

#[test]
fn real_iozone_t2_text_and_workbook_agree_with_the_printed_summary() {
    check_throughput_run("iozone-real-t2");
}

#[test]
fn real_iozone_t2_with_cpu_report_text_and_workbook() {
    check_throughput_run("iozone-real-t2-cpu");
}

#[test]
fn real_iozone_t2_cpu_utilisation_imports_as_printed() {
    let text = fixture("iozone-real-t2-cpu.txt");
    // The -+u line of each phase, in order: "CPU utilization: Wall time W CPU time C CPU utilization P %".
    let printed: Vec<f64> = text
        .lines()
        .filter(|l| {
            l.trim()
                .to_ascii_lowercase()
                .starts_with("cpu utilization:")
        })
        .map(|l| {
            l.split_whitespace()
                .filter_map(|w| w.parse::<f64>().ok())
                .next_back()
                .unwrap()
        })
        .collect();
    assert_eq!(printed.len(), 4);
    let ops = ["write", "rewrite", "read", "reread"];
    let from_text = iozone_text::parse(&text, "t").unwrap().records;
    for (op, pct) in ops.iter().zip(&printed) {
        assert_eq!(find(&from_text, op, 2).cpu_util_pct, *pct, "{op}");
    }
    // The workbook's CPU rows (IOzone's double, printed with %.2f in the -R text).
    let report_rows: Vec<String> = {
        let at = text
            .lines()
            .position(|l| l.contains("CPU utilization report"))
            .unwrap();
        text.lines()
            .skip(at)
            .filter(|l| {
                l.starts_with("\"")
                    && !l.contains("report")
                    && !l.contains("size")
                    && !l.contains("Output")
            })
            .map(|l| l.rsplit('"').next().unwrap().trim().to_string())
            .collect()
    };
    let grid = biff::read(&fixture_bytes("iozone-real-t2-cpu.xls")).unwrap();
    let from_xls = workbook::parse(&grid, "x").unwrap().records;
    for (op, printed_row) in ops.iter().zip(&report_rows) {
        let r = find(&from_xls, op, 2);
        assert!(r.cpu_util_pct > 0.0, "{op}: no CPU from the workbook");
        assert_eq!(format!("{:.2}", r.cpu_util_pct), *printed_row, "{op}");
    }
}
