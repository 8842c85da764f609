//! IOzone's text output, byte for byte where IOzone's format is known: the banner, the
//! auto-mode table (header and rows), the throughput-mode summary blocks, and the -R
//! reports (dump_excel, dump_cputimes, dump_throughput), which also fill the -b sheet.

use super::layout::{Selection, Slot};
use super::workbook::Sheet;
use sharebench_core::op::{Op, IOZONE_REPORTS};
use sharebench_core::record::{Record, Status};

/// One value IOzone stores for a report (store_value/store_times): KB/s and CPU %.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stored {
    pub value: u64,
    pub cpu: f64,
    /// Never measured (the run was interrupted first): left out of reports, where IOzone's
    /// own zeros (tests not selected, placeholders) are printed.
    pub missing: bool,
}

/// What is stored for a selected test that was never measured.
const MISSING: Stored = Stored {
    value: 0,
    cpu: 0.0,
    missing: true,
};

/// The two passes (e.g. write, rewrite) of each of IOzone's tests 0-12 for one cell.
pub type TestValues = [[Option<Stored>; 2]; 13];

/// IOzone's blank padding for a test skipped by -i (test_output[]).
const TEST_OUTPUT: [usize; 13] = [16, 18, 16, 8, 8, 8, 18, 16, 0, 17, 19, 19, 19];
/// How many zeros IOzone stores for a test skipped by -i (test_soutput[]).
const TEST_SOUTPUT: [usize; 13] = [2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2];

/// IOzone's CPU utilisation: 0 without wall time, wall raised to at least the CPU time.
pub fn cpu_util(cpu: f64, wall: f64) -> f64 {
    if wall <= 0.0 {
        return 0.0;
    }
    let cpu = cpu.max(0.0);
    100.0 * cpu / wall.max(cpu)
}

/// KB/s as IOzone computes it: (bytes / seconds) as an integer, shifted right by 10.
pub fn kb_per_s(bytes: u64, seconds: f64) -> u64 {
    if seconds <= 0.0 {
        return 0;
    }
    ((bytes as f64 / seconds) as u64) >> 10
}

/// The CPU seconds of a record: the exact CPU clock when the engine had it, else user + system.
pub fn cpu_seconds(r: &Record) -> f64 {
    if r.cpu_total_s > 0.0 {
        r.cpu_total_s
    } else {
        r.cpu_user_s + r.cpu_sys_s
    }
}

/// What a single-worker record stores: 0 for a failed measurement.
pub fn stored(r: &Record) -> Stored {
    if r.status == Status::Failed {
        return Stored::default();
    }
    Stored {
        value: kb_per_s(r.bytes, r.seconds),
        cpu: cpu_util(cpu_seconds(r), r.seconds),
        missing: false,
    }
}

/// The IOzone test of an operation and whether it is the test's first or second pass.
pub fn test_pass(op: Op) -> (usize, usize) {
    let second = matches!(
        op,
        Op::Rewrite
            | Op::Reread
            | Op::RandomWrite
            | Op::Frewrite
            | Op::Freread
            | Op::RePwrite
            | Op::RePread
            | Op::RePwritev
            | Op::RePreadv
    );
    (usize::from(op.iozone_test()), usize::from(second))
}

/// The banner IOzone prints before any test, with sharebench's name in IOzone's place.
pub struct Banner<'a> {
    pub version: &'a str,
    /// ctime()-style date, e.g. "Thu Jan  1 00:00:00 2026".
    pub began: &'a str,
    pub splash: &'a [String],
    pub argv: &'a [String],
    pub time_res: f64,
    pub stride: u64,
    /// Throughput mode: the number of children and whether -T (threads) was given.
    pub throughput: Option<(u32, bool)>,
}

impl Banner<'_> {
    pub fn render(&self) -> String {
        let mut s = format!("\tsharebench {} (IOzone-compatible mode)\n", self.version);
        s += "\tCommand line and output formats of IOzone 3.414 (William Norcott, Don Capps et al.);\n";
        s += "\tthe engine, and so every measurement, is sharebench's own.\n\n";
        s += &format!("\tRun began: {}\n\n", self.began);
        for line in self.splash {
            s += line;
        }
        s += "\tCommand line used:";
        for w in self.argv {
            s += &format!(" {w}");
        }
        s += "\n\tOutput is in Kbytes/sec\n";
        s += &format!("\tTime Resolution = {:.6} seconds.\n", self.time_res);
        s += "\tProcessor cache size set to 1024 Kbytes.\n";
        s += "\tProcessor cache line size set to 32 bytes.\n";
        s += &format!("\tFile stride size set to {} * record size.\n", self.stride);
        if let Some((n, threads)) = self.throughput {
            let port = match (n > 1, threads) {
                (true, true) => "threads",
                (true, false) => "processes",
                (false, true) => "thread",
                (false, false) => "process",
            };
            s += &format!("\tThroughput test with {n} {port}\n");
        }
        s
    }
}

/// Right-aligns each string in its width, like a run of `%Ns` conversions.
fn columns(fields: &[(&str, usize)]) -> String {
    fields
        .iter()
        .map(|(t, w)| format!("{t:>w$}", w = *w))
        .collect()
}

/// The two header lines of the auto/single table (CONTROL_STRING3, or CONTROL_STRING2 with -E).
pub fn header(extended: bool) -> String {
    // CONTROL_STRING3 "%16s%8s%8s%8s%8s%10s%8s%8s%8s %8s %8s%9s%9s%8s%9s\n"; the literal
    // spaces before record and stride are folded into widths of 9.
    let widths = [16, 8, 8, 8, 8, 10, 8, 8, 8, 9, 9, 9, 9, 8, 9];
    let top = [
        "", "", "", "", "", "", "random", "random", "bkwd", "record", "stride", "", "", "", "",
    ];
    let names = [
        "KB", "reclen", "write", "rewrite", "read", "reread", "read", "write", "read", "rewrite",
        "read", "fwrite", "frewrite", "fread", "freread",
    ];
    let mut l1: Vec<(&str, usize)> = top.iter().copied().zip(widths).collect();
    let mut l2: Vec<(&str, usize)> = names.iter().copied().zip(widths).collect();
    if extended {
        // CONTROL_STRING2 adds "%8s%9s%7s%10s%10s%10s%9s%9s" (pread and preadv tests).
        let more = [8, 9, 7, 10, 10, 10, 9, 9];
        let more_names = [
            "pwrite",
            "repwrite",
            "pread",
            "repread",
            "pwritev",
            "repwritev",
            "preadv",
            "repreadv",
        ];
        l1.extend(more.iter().map(|&w| ("", w)));
        l2.extend(more_names.iter().copied().zip(more));
    }
    format!("{}\n{}\n", columns(&l1), columns(&l2))
}

/// One table row as begin() prints it: the sizes, then each test's fields or its blanks.
pub fn row(file_kb: u64, rec_kb: u64, v: &TestValues, sel: &Selection) -> String {
    let mut s = format!("{file_kb:>16}{rec_kb:>8}");
    for t in 0..usize::from(sel.num_tests()) {
        if sel.listed && !sel.tests[t] {
            s += &" ".repeat(TEST_OUTPUT[t]);
            continue;
        }
        if v[t][0].is_none() && v[t][1].is_none() {
            // Not measured (interrupted): blank, as IOzone never printed it.
            s += &" ".repeat(TEST_OUTPUT[t]);
            continue;
        }
        let a = v[t][0].map(|x| x.value).unwrap_or(0);
        let b = v[t][1].map(|x| x.value).unwrap_or(0);
        s += &match t {
            0 | 2 => format!("{a:>8}{b:>8}"),
            1 | 6 => format!("{a:>9}{b:>9}"),
            3 => format!("{a:>8}"),
            4 | 5 => format!(" {a:>8}"),
            7 | 9 | 10 => format!("{a:>8}{b:>9}"),
            11 => format!("{a:>9}{b:>10}"),
            12 => format!("{a:>10}{b:>9}\n"),
            _ => String::new(), // 8: the random mix is a no-op here
        };
    }
    s + "\n"
}

/// The report values IOzone stores for one slot, in store_value() order: file KB, record
/// KB, then each test's values (zeros for tests skipped by -i; nothing for test 8 when it
/// "runs"). Placeholders store 20 zeros.
pub fn stored_row(slot: &Slot, v: &TestValues, sel: &Selection) -> Vec<Stored> {
    let plain = |x: u64| Stored {
        value: x,
        ..Stored::default()
    };
    let mut out = vec![plain(slot.file_kb()), plain(slot.rec_kb())];
    if let Slot::Placeholder { .. } = slot {
        out.extend(std::iter::repeat_n(Stored::default(), 20));
        return out;
    }
    for t in 0..usize::from(sel.num_tests()) {
        if sel.listed && !sel.tests[t] {
            out.extend(std::iter::repeat_n(Stored::default(), TEST_SOUTPUT[t]));
            continue;
        }
        let passes = match t {
            8 => 0,
            3..=5 => 1,
            _ => 2,
        };
        out.extend((0..passes).map(|p| v[t][p].unwrap_or(MISSING)));
    }
    out
}

/// The report columns each test contributes, in dump_excel's order.
const REPORT_GROUPS: [(u8, &[usize]); 12] = [
    (0, &[2, 3]),
    (1, &[4, 5]),
    (2, &[6, 7]),
    (3, &[8]),
    (4, &[9]),
    (5, &[10]),
    (6, &[11, 12]),
    (7, &[13, 14]),
    (9, &[15, 16]),
    (10, &[17, 18]),
    (11, &[19, 20]),
    (12, &[21, 22]),
];

/// The report text and the workbook sheet, written in step (IOzone's bif_row/bif_column).
struct Dump {
    text: String,
    sheet: Sheet,
    row: u32,
    col: u16,
}

impl Dump {
    fn new() -> Self {
        Dump {
            text: String::new(),
            sheet: Sheet::default(),
            row: 0,
            col: 0,
        }
    }

    /// A label in column 0 of the next row.
    fn label_row(&mut self, text: &str) {
        self.sheet.label(self.row, 0, text);
        self.row += 1;
    }

    fn number(&mut self, v: f64) {
        self.sheet.number(self.row, self.col, v);
        self.col += 1;
    }
}

/// The -R report of auto and single mode (dump_excel, and dump_cputimes with -+u):
/// returns the text printed after "iozone test complete." and the -b sheet.
pub fn auto_report(
    rows: &[Vec<Stored>],
    header_kb: &[u64],
    sel: &Selection,
    cpu: bool,
    command_line: &str,
) -> (String, Sheet) {
    let mut d = Dump::new();
    d.label_row(command_line);
    d.label_row(" ");
    d.label_row("The top row is records sizes, the left column is file sizes");
    d.text += "Excel output is below:\n";
    let shown: Vec<usize> = REPORT_GROUPS
        .iter()
        .filter(|(t, _)| (*t < 9 || sel.extended) && sel.runs(*t))
        .flat_map(|(_, who)| who.iter().copied())
        .collect();
    let title = |who: usize| {
        IOZONE_REPORTS
            .iter()
            .find(|r| r.0 == who)
            .map(|r| (r.2, r.3))
            .unwrap_or(("", ""))
    };
    for &who in &shown {
        let (text, bif) = title(who);
        d.label_row(&format!("{bif} Report"));
        d.text += &format!("\n\"{text} report\"\n");
        report_matrix(&mut d, rows, header_kb, who, false);
    }
    if cpu {
        d.row += 1;
        d.col = 0;
        for &who in &shown {
            let (text, bif) = title(who);
            d.label_row(&format!(
                "{bif} CPU utilization report (Zero values should be ignored)"
            ));
            d.text +=
                &format!("\n\"{text} CPU utilization report (Zero values should be ignored)\"\n");
            report_matrix(&mut d, rows, header_kb, who, true);
        }
    }
    (d.text, d.sheet)
}

/// dump_report (KB/s, `" %lld "`) or dump_times (CPU %, `" %6.2f"`) for report column `who`.
fn report_matrix(d: &mut Dump, rows: &[Vec<Stored>], header_kb: &[u64], who: usize, cpu: bool) {
    d.col += 1;
    d.text += "      ";
    for &r in header_kb {
        d.number(r as f64);
        d.text += &format!("  \"{r}\"");
    }
    d.text += "\n";
    d.col = 0;
    d.row += 1;
    let size = |r: &Vec<Stored>| r.first().map(|s| s.value).unwrap_or(0);
    let mut current = rows.first().map(size).unwrap_or(0);
    d.number(current as f64);
    d.text += &format!("\"{current}\"  ");
    for r in rows {
        if size(r) != current {
            current = size(r);
            d.text += "\n";
            d.row += 1;
            d.col = 0;
            d.number(current as f64);
            d.text += &format!("\"{current}\"  ");
        }
        let v = r.get(who).copied().unwrap_or_default();
        if v.missing {
            // A blank cell: the column moves on, nothing is written.
            d.col += 1;
            continue;
        }
        if cpu {
            d.number(v.cpu);
            d.text += &format!(" {:6.2}", v.cpu);
        } else {
            d.number(v.value as f64);
            d.text += &format!(" {} ", v.value);
        }
    }
    d.text += "\n";
    d.row += 1;
    d.col = 0;
}

/// The summary IOzone prints for one throughput phase.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PhaseStats {
    pub children: f64,
    pub parent: f64,
    pub min: f64,
    pub max: f64,
    pub avg: f64,
    /// KB
    pub min_xfer: f64,
    /// Longest child wall time and the children's summed CPU time (seconds).
    pub wall: f64,
    pub cpu: f64,
}

impl PhaseStats {
    /// From the workers' records and the aggregate (which gives "Parent sees").
    /// Min and min xfer use IOzone's loop, where a zero only seeds the minimum.
    pub fn from_records(workers: &[Record], agg: &Record) -> Self {
        let t = agg.throughput.unwrap_or_default();
        if workers.is_empty() {
            return PhaseStats {
                children: t.children_see_kib_s,
                parent: t.parent_sees_kib_s,
                min: t.min_worker_kib_s,
                max: t.max_worker_kib_s,
                avg: t.avg_worker_kib_s,
                min_xfer: t.min_xfer_bytes as f64 / 1024.0,
                wall: agg.seconds,
                cpu: cpu_seconds(agg),
            };
        }
        let iozone_min = |xs: &mut dyn Iterator<Item = f64>| {
            let mut m = 0.0;
            for x in xs {
                if m == 0.0 {
                    m = x;
                }
                if x < m {
                    m = x;
                }
            }
            m
        };
        let children: f64 = workers.iter().map(|w| w.throughput_kib_s).sum();
        let mut wall: f64 = 0.0;
        let mut cpu = 0.0;
        for w in workers {
            let c = cpu_seconds(w);
            cpu += c;
            wall = wall.max(w.seconds.max(c));
        }
        PhaseStats {
            children,
            parent: t.parent_sees_kib_s,
            min: iozone_min(&mut workers.iter().map(|w| w.throughput_kib_s)),
            max: workers
                .iter()
                .map(|w| w.throughput_kib_s)
                .fold(0.0, f64::max),
            avg: children / workers.len() as f64,
            min_xfer: iozone_min(&mut workers.iter().map(|w| (w.bytes / 1024) as f64)),
            wall,
            cpu,
        }
    }
}

/// The label IOzone gives a throughput phase in the -R report (throughput_tests[]).
pub fn phase_label(op: Op) -> &'static str {
    match op {
        Op::Write => "Initial write",
        Op::Rewrite => "Rewrite",
        Op::Read => "Read",
        Op::Reread => "Re-read",
        Op::BackwardRead => "Reverse Read",
        Op::StrideRead => "Stride read",
        Op::RandomRead => "Random read",
        Op::RandomMix => "Mixed workload",
        Op::RandomWrite => "Random write",
        Op::Pwrite => "Pwrite",
        Op::Pread => "Pread",
        Op::Fwrite => "Fwrite",
        Op::Fread => "Fread",
        _ => "",
    }
}

/// The labels of dump_throughput_cpu, which does not follow skipped phases.
const THROUGHPUT_TESTS: [&str; 13] = [
    "Initial write",
    "Rewrite",
    "Read",
    "Re-read",
    "Reverse Read",
    "Stride read",
    "Random read",
    "Mixed workload",
    "Random write",
    "Pwrite",
    "Pread",
    "Fwrite",
    "Fread",
];

/// "Children see" and "Parent sees" wording of a phase, up to and including the '='.
fn phase_words(op: Op, n: u32) -> (String, String) {
    let same = |s: String| (s.clone(), s);
    match op {
        Op::Write => same(format!("{n:>2} initial writers \t=")),
        Op::Rewrite => same(format!("{n:>2} rewriters \t=")),
        Op::Read => same(format!("{n:>2} readers \t\t=")),
        Op::Reread => same(format!("{n} re-readers \t=")),
        Op::BackwardRead => same(format!("{n} reverse readers \t=")),
        Op::StrideRead => same(format!("{n} stride readers \t=")),
        Op::RandomRead => same(format!("{n} random readers \t=")),
        Op::RandomMix => same(format!("{n} mixed workload \t=")),
        Op::RandomWrite => same(format!("{n} random writers \t=")),
        Op::Pwrite => same(format!("{n} pwrite writers \t=")),
        Op::Pread => same(format!("{n} pread readers \t=")),
        Op::Fwrite => (
            format!("{n:>2} fwriters \t="),
            format!("{n:>2} fwriters \t\t="),
        ),
        Op::Fread => (
            format!("{n:>2} freaders \t="),
            format!("{n:>2} freaders \t\t="),
        ),
        other => same(format!("{n} {other} \t=")),
    }
}

/// The line before the first phase of a throughput run.
pub fn throughput_intro(threads: bool, kb: u64, rec_kb: u64) -> String {
    let port = if threads { "thread" } else { "process" };
    format!("\tEach {port} writes a {kb} Kbyte file in {rec_kb} Kbyte records\n")
}

/// One phase's summary block, as throughput_test prints it.
pub fn throughput_block(op: Op, n: u32, s: &PhaseStats, threads: bool, cpu: bool) -> String {
    let port = if threads { "thread" } else { "process" };
    let (children, parent) = phase_words(op, n);
    let mut out = String::from("\n");
    out += &format!(
        "\tChildren see throughput for {children} {:10.2} KB/sec\n",
        s.children
    );
    out += &format!(
        "\tParent sees throughput for {parent} {:10.2} KB/sec\n",
        s.parent
    );
    out += &format!(
        "\tMin throughput per {port} \t\t\t= {:10.2} KB/sec \n",
        s.min
    );
    out += &format!(
        "\tMax throughput per {port} \t\t\t= {:10.2} KB/sec\n",
        s.max
    );
    out += &format!(
        "\tAvg throughput per {port} \t\t\t= {:10.2} KB/sec\n",
        s.avg
    );
    out += &format!("\tMin xfer \t\t\t\t\t= {:10.2} KB\n", s.min_xfer);
    if cpu {
        // IOzone spells it with a capital U for the initial writers when it has a wall time.
        let word = if op == Op::Write && s.wall != 0.0 {
            "Utilization"
        } else {
            "utilization"
        };
        out += &format!(
            "\tCPU {word}: Wall time {:8.3}    CPU time {:8.3}    CPU utilization {:6.2} %\n\n",
            s.wall,
            s.cpu,
            cpu_util(s.cpu, s.wall)
        );
    }
    out
}

/// One value of the throughput report: the phase label (toutput[]), the children-see
/// total and the CPU %.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseValue {
    pub label: &'static str,
    pub value: f64,
    pub cpu: f64,
}

/// The -R report of throughput mode (dump_throughput, and dump_throughput_cpu with -+u);
/// `runs` holds one column per -t run.
pub fn throughput_report(
    runs: &[Vec<PhaseValue>],
    threads: bool,
    rec_kb: u64,
    cpu: bool,
    command_line: &str,
) -> (String, Sheet) {
    let port = if threads { "threads" } else { "processes" };
    let mut d = Dump::new();
    let rows = runs.iter().map(Vec::len).max().unwrap_or(0);
    let at = |i: usize, j: usize| runs.get(j).and_then(|r| r.get(i));
    let title = format!("Throughput report Y-axis is type of test X-axis is number of {port}");
    d.text += &format!("\n\"{title}\"\n");
    d.label_row(command_line);
    d.label_row(&title);
    d.text += &format!("\"Record size = {rec_kb} Kbytes \"\n");
    d.text += "\"Output is in Kbytes/sec\"\n\n";
    d.label_row(&format!("Record size = {rec_kb} Kbytes"));
    d.label_row("Output is in Kbytes/sec");
    for i in 0..rows {
        let label = at(i, 0).map(|p| p.label).unwrap_or("");
        matrix_row(
            &mut d,
            label,
            (0..runs.len()).map(|j| at(i, j).map(|p| p.value).unwrap_or(0.0)),
        );
    }
    if cpu {
        let title =
            format!("CPU utilization report Y-axis is type of test X-axis is number of {port}");
        d.text += &format!("\n\"{title}\"\n");
        d.label_row(&title);
        d.text += &format!("\"Record size = {rec_kb} Kbytes \"\n");
        d.text += "\"Output is in CPU%\"\n\n";
        d.label_row(&format!("Record size = {rec_kb} Kbytes"));
        d.label_row("Output is in CPU%");
        for (i, label) in THROUGHPUT_TESTS.iter().enumerate().take(rows) {
            matrix_row(
                &mut d,
                label,
                (0..runs.len()).map(|j| at(i, j).map(|p| p.cpu).unwrap_or(0.0)),
            );
        }
    }
    (d.text, d.sheet)
}

/// One row of the throughput report: `"%15s "` label (column 0), values from column 2.
fn matrix_row(d: &mut Dump, label: &str, values: impl Iterator<Item = f64>) {
    let name = format!("{label:>15} ");
    d.text += &format!("\"{name}\"");
    d.sheet.label(d.row, 0, &name);
    d.col = 2;
    for v in values {
        d.number(v);
        d.text += &format!(" {v:10.2} ");
    }
    d.text += "\n\n";
    d.col = 0;
    d.row += 1;
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{aggregate, record};
    use super::*;
    use sharebench_core::plan::Cell;
    use sharebench_core::record::Scope;

    fn sel(tests: &[u8], extended: bool) -> Selection {
        let mut t = [false; 13];
        for &i in tests {
            t[usize::from(i)] = true;
        }
        Selection {
            listed: !tests.is_empty(),
            tests: t,
            extended,
        }
    }

    fn values(pairs: &[(usize, u64, u64)]) -> TestValues {
        let mut v = TestValues::default();
        for &(t, a, b) in pairs {
            v[t][0] = Some(Stored {
                value: a,
                ..Stored::default()
            });
            v[t][1] = Some(Stored {
                value: b,
                ..Stored::default()
            });
        }
        v
    }

    #[test]
    fn header_is_byte_exact() {
        let h = header(false);
        let lines: Vec<&str> = h.split_inclusive('\n').collect();
        assert_eq!(
            lines[0],
            format!(
                "{}  random  random    bkwd   record   stride{}\n",
                " ".repeat(58),
                " ".repeat(35)
            )
        );
        assert_eq!(
            lines[1],
            "              KB  reclen   write rewrite    read    reread    read   write    read  rewrite     read   fwrite frewrite   fread  freread\n"
        );
        let e = header(true);
        assert!(e.ends_with(
            "   fread  freread  pwrite repwrite  pread   repread   pwritev repwritev   preadv repreadv\n"
        ));
    }

    #[test]
    fn row_widths_match_iozone() {
        let v = values(&[
            (0, 1234567, 2345678),
            (1, 3, 4),
            (2, 5, 6),
            (3, 7, 0),
            (4, 8, 0),
            (5, 9, 0),
            (6, 10, 11),
            (7, 12, 13),
        ]);
        assert_eq!(
            row(64, 4, &v, &sel(&[], false)),
            "              64       4 1234567 2345678        3        4       5       6       7        8        9       10       11      12       13\n"
        );
        // Tests skipped by -i print IOzone's blanks (record and stride one narrower).
        let r = row(64, 4, &v, &sel(&[0, 2], false));
        assert_eq!(
            r,
            format!(
                "              64       4 1234567 2345678{}       5       6{}\n",
                " ".repeat(18),
                " ".repeat(8 + 8 + 8 + 18 + 16)
            )
        );
        // -E: pwrite/pread and pwritev/preadv (which ends its own line, as in IOzone).
        let v = values(&[(9, 1, 2), (10, 3, 4), (11, 5, 6), (12, 7, 8)]);
        let r = row(1024, 64, &v, &sel(&[9, 10, 11, 12], true));
        assert!(r.ends_with(&format!(
            "{}{:>8}{:>9}{:>8}{:>9}{:>9}{:>10}{:>10}{:>9}\n\n",
            "", 1, 2, 3, 4, 5, 6, 7, 8
        )));
    }

    #[test]
    fn rates_truncate_like_iozone() {
        assert_eq!(kb_per_s(1 << 20, 1.0), 1024);
        assert_eq!(kb_per_s(1_000_000, 1.0), 976); // 1e6 >> 10
        assert_eq!(kb_per_s(1 << 20, 0.0), 0);
        let mut r = record(Op::Write, 1 << 20, 4096, 1 << 20, 0.5, Scope::Single);
        assert_eq!(stored(&r).value, 2048);
        assert!((stored(&r).cpu - 50.0).abs() < 1e-9);
        r.status = Status::Failed;
        assert_eq!(stored(&r), Stored::default());
        assert_eq!(cpu_util(2.0, 1.0), 100.0, "wall is raised to the CPU time");
    }

    #[test]
    fn stored_rows_keep_iozone_columns() {
        let slot = Slot::Cell {
            file_kb: 64,
            cell: Cell {
                file_size: 65536,
                record_size: 4096,
            },
        };
        let v = values(&[(0, 10, 11), (1, 12, 13)]);
        let s = stored_row(&slot, &v, &sel(&[0, 1], false));
        let nums: Vec<u64> = s.iter().map(|x| x.value).collect();
        // 2 sizes, write/rewrite, read/reread, then zeros: 2+1+1+1+2+2+2 (test 8 stores 2 when skipped).
        assert_eq!(nums.len(), 2 + 4 + 11);
        assert_eq!(&nums[..6], &[64, 4, 10, 11, 12, 13]);
        // Without -i test 8 stores nothing, so -E's pwrite lands in column 15.
        let v = values(&[(9, 90, 91)]);
        let s = stored_row(&slot, &v, &sel(&[], true));
        assert_eq!(s[15].value, 90);
        let p = stored_row(
            &Slot::Placeholder {
                file_kb: 32768,
                rec_kb: 4,
            },
            &v,
            &sel(&[], false),
        );
        assert_eq!(p.len(), 22);
        assert_eq!((p[0].value, p[1].value, p[2].value), (32768, 4, 0));
    }

    #[test]
    fn auto_report_text_and_sheet() {
        let s = sel(&[0], false);
        let mk = |kb: u64, rec: u64, a: u64, b: u64| {
            let slot = Slot::Cell {
                file_kb: kb,
                cell: Cell {
                    file_size: kb * 1024,
                    record_size: rec * 1024,
                },
            };
            stored_row(&slot, &values(&[(0, a, b)]), &s)
        };
        let rows = vec![
            mk(64, 4, 100, 200),
            mk(64, 8, 300, 400),
            mk(128, 4, 500, 600),
            mk(128, 8, 700, 800),
            mk(128, 16, 900, 1000),
        ];
        let (text, sheet) =
            auto_report(&rows, &[4, 8, 16], &s, false, "sharebench iozone -a -i 0 ");
        assert_eq!(
            text,
            "Excel output is below:\n\n\"Writer report\"\n        \"4\"  \"8\"  \"16\"\n\"64\"   100  300 \n\"128\"   500  700  900 \n\n\"Re-writer report\"\n        \"4\"  \"8\"  \"16\"\n\"64\"   200  400 \n\"128\"   600  800  1000 \n"
        );
        use super::super::workbook::Value::{Label, Number};
        let c = &sheet.cells;
        assert_eq!(
            (c[0].row, c[0].col, &c[0].value),
            (0, 0, &Label("sharebench iozone -a -i 0 ".into()))
        );
        assert_eq!(c[1].value, Label(" ".into()));
        assert_eq!((c[3].row, &c[3].value), (3, &Label("Writer Report".into())));
        // Record sizes on row 4 from column 1, then file size in column 0 and values.
        assert_eq!((c[4].row, c[4].col, &c[4].value), (4, 1, &Number(4.0)));
        assert_eq!((c[7].row, c[7].col, &c[7].value), (5, 0, &Number(64.0)));
        assert_eq!((c[8].row, c[8].col, &c[8].value), (5, 1, &Number(100.0)));
        assert_eq!((c[10].row, c[10].col, &c[10].value), (6, 0, &Number(128.0)));
        // The next report's label is on the row right after the last data row.
        assert_eq!(
            (c[14].row, &c[14].value),
            (7, &Label("Re-writer Report".into()))
        );
    }

    #[test]
    fn cells_never_measured_are_left_blank_not_zero() {
        let kb = |x: u64| Stored {
            value: x,
            ..Stored::default()
        };
        // One file size, two record sizes: the second was never measured (Ctrl-C).
        let rows = vec![vec![kb(64), kb(4), kb(5)], vec![kb(64), kb(8), MISSING]];
        let mut d = Dump::new();
        report_matrix(&mut d, &rows, &[4, 8], 2, false);
        assert!(
            d.text.contains(" 5 ") && !d.text.contains(" 0 "),
            "{}",
            d.text
        );
        let data_row: Vec<_> = d.sheet.cells.iter().filter(|c| c.row == 1).collect();
        assert_eq!(data_row.len(), 2, "the file size and one value, no zero");
        let mut v: TestValues = Default::default();
        v[0][0] = Some(kb(7));
        v[0][1] = Some(kb(9));
        let args: Vec<String> = ["-i", "0", "-i", "1"].map(String::from).to_vec();
        let selected = Selection::new(&crate::iozone::args::parse(&args).unwrap());
        let line = row(64, 4, &v, &selected);
        assert!(line.contains("7") && !line.contains(" 0"), "{line}");
    }

    #[test]
    fn cpu_report_follows_with_a_blank_row() {
        let s = sel(&[3], false);
        let slot = Slot::Cell {
            file_kb: 64,
            cell: Cell {
                file_size: 65536,
                record_size: 4096,
            },
        };
        let mut v = TestValues::default();
        v[3][0] = Some(Stored {
            value: 5,
            cpu: 12.5,
            missing: false,
        });
        let rows = vec![stored_row(&slot, &v, &s)];
        let (text, sheet) = auto_report(&rows, &[4], &s, true, "x ");
        assert!(text.ends_with(
            "\n\"Backward read CPU utilization report (Zero values should be ignored)\"\n        \"4\"\n\"64\"    12.50\n"
        ));
        let label = sheet
            .cells
            .iter()
            .find(|c| {
                c.value
                    == super::super::workbook::Value::Label(
                        "Backward Read CPU utilization report (Zero values should be ignored)"
                            .into(),
                    )
            })
            .unwrap();
        // Rows: 0-2 preamble, 3 label, 4 header, 5 data, 6 blank, 7 CPU label.
        assert_eq!(label.row, 7);
    }

    #[test]
    fn throughput_block_is_byte_exact() {
        let w1 = record(Op::Write, 1 << 20, 4096, 512 * 1024, 0.512, Scope::Worker);
        let w2 = record(Op::Write, 1 << 20, 4096, 1024 * 1024, 0.512, Scope::Worker);
        let agg = aggregate(Op::Write, 1 << 20, 4096, 2500.5);
        let s = PhaseStats::from_records(&[w1, w2], &agg);
        assert_eq!(
            throughput_block(Op::Write, 2, &s, false, true),
            "\n\tChildren see throughput for  2 initial writers \t=    3000.00 KB/sec\n\tParent sees throughput for  2 initial writers \t=    2500.50 KB/sec\n\tMin throughput per process \t\t\t=    1000.00 KB/sec \n\tMax throughput per process \t\t\t=    2000.00 KB/sec\n\tAvg throughput per process \t\t\t=    1500.00 KB/sec\n\tMin xfer \t\t\t\t\t=     512.00 KB\n\tCPU Utilization: Wall time    0.512    CPU time    0.512    CPU utilization 100.00 %\n\n"
        );
        let b = throughput_block(Op::Read, 2, &s, true, true);
        assert!(b.contains("\tChildren see throughput for  2 readers \t\t=    3000.00 KB/sec\n"));
        assert!(b.contains("\tMin throughput per thread \t\t\t="));
        assert!(b.contains("\tCPU utilization: Wall time"));
        let b = throughput_block(Op::Fwrite, 12, &s, false, false);
        assert!(
            b.contains("for 12 fwriters \t=    3000.00")
                && b.contains("for 12 fwriters \t\t=    2500.50")
        );
        assert!(!b.contains("CPU"));
    }

    #[test]
    fn iozone_min_skips_a_zero_seed() {
        let mk = |bytes: u64| record(Op::Read, 1 << 20, 4096, bytes, 1.0, Scope::Worker);
        let agg = aggregate(Op::Read, 1 << 20, 4096, 1.0);
        let s = PhaseStats::from_records(&[mk(0), mk(5 * 1024), mk(3 * 1024)], &agg);
        assert_eq!(s.min, 3.0);
        assert_eq!(s.min_xfer, 3.0);
    }

    #[test]
    fn throughput_report_text_and_sheet() {
        let col = vec![
            PhaseValue {
                label: "Initial write",
                value: 3000.0,
                cpu: 10.0,
            },
            PhaseValue {
                label: "Rewrite",
                value: 4000.25,
                cpu: 20.0,
            },
        ];
        let (text, sheet) = throughput_report(std::slice::from_ref(&col), false, 4, false, "c ");
        assert_eq!(
            text,
            "\n\"Throughput report Y-axis is type of test X-axis is number of processes\"\n\"Record size = 4 Kbytes \"\n\"Output is in Kbytes/sec\"\n\n\"  Initial write \"    3000.00 \n\n\"        Rewrite \"    4000.25 \n\n"
        );
        use super::super::workbook::Value::{Label, Number};
        let c = &sheet.cells;
        assert_eq!(
            c[1].value,
            Label("Throughput report Y-axis is type of test X-axis is number of processes".into())
        );
        assert_eq!(c[2].value, Label("Record size = 4 Kbytes".into()));
        assert_eq!(c[3].value, Label("Output is in Kbytes/sec".into()));
        assert_eq!(
            (c[4].row, c[4].col, &c[4].value),
            (4, 0, &Label("  Initial write ".into()))
        );
        assert_eq!((c[5].row, c[5].col, &c[5].value), (4, 2, &Number(3000.0)));
        // Two runs (-t 1 -t 2) give two columns; -+u adds the CPU block.
        let (text, _) = throughput_report(&[col.clone(), col], true, 4, true, "c ");
        assert!(text.contains("\"  Initial write \"    3000.00     3000.00 \n\n"));
        assert!(text.contains("\n\"CPU utilization report Y-axis is type of test X-axis is number of threads\"\n\"Record size = 4 Kbytes \"\n\"Output is in CPU%\"\n\n\"  Initial write \"      10.00       10.00 \n\n"));
    }

    #[test]
    fn banner_lines() {
        let splash = vec!["\tAuto Mode\n".to_string()];
        let argv: Vec<String> = ["sharebench", "iozone", "-a"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let b = Banner {
            version: "0.1.0",
            began: "Thu Jan  1 00:00:00 2026",
            splash: &splash,
            argv: &argv,
            time_res: 0.000001,
            stride: 17,
            throughput: Some((4, false)),
        };
        let text = b.render();
        assert!(text.starts_with("\tsharebench 0.1.0 (IOzone-compatible mode)\n"));
        assert!(!text.contains("Iozone: Performance Test"));
        assert!(text.contains(
            "\tRun began: Thu Jan  1 00:00:00 2026\n\n\tAuto Mode\n\tCommand line used: sharebench iozone -a\n\tOutput is in Kbytes/sec\n\tTime Resolution = 0.000001 seconds.\n\tProcessor cache size set to 1024 Kbytes.\n\tProcessor cache line size set to 32 bytes.\n\tFile stride size set to 17 * record size.\n\tThroughput test with 4 processes\n"
        ));
    }
}
