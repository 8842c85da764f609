//! `sharebench iozone ARGS...`: IOzone's command line, tables and workbook on top of the
//! sharebench engine. The flags become a `Plan` (`args`, `layout`), the plan runs through
//! `session::execute`, and the records it emits are printed as IOzone prints its results
//! (`table`), with the -R report and the -b workbook (`workbook`) at the end.
//!
//! Documented policy: when -i names tests that read the file but not test 0, the engine
//! writes the file first, untimed, where IOzone would fail; nothing extra is printed.
//! Tests 9-12 exist with -E as in an IOzone built with pwritev/preadv.

mod args;
mod layout;
mod table;
#[cfg(test)]
mod testutil;
mod workbook;

use crate::error::{CliError, CliResult};
use crate::session::{self, SessionResult, SessionSpec};
use args::{Options, Splash};
use layout::{Layout, Selection, Slot};
use sharebench_core::cpu::CpuSnapshot;
use sharebench_core::op::Op;
use sharebench_core::plan::{Cell, Plan};
use sharebench_core::record::{Record, Scope, Status};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;
use table::{PhaseStats, PhaseValue, Stored, TestValues};

/// Runs an IOzone-style invocation; `args` excludes the program and subcommand names.
/// Under mpirun, `cluster` is every rank of the run (rank 0 prints and writes).
pub fn main(args: &[String], cluster: Option<&dyn session::Cluster>) -> CliResult<()> {
    if args.is_empty() {
        return Err(CliError::usage(
            "no arguments; for usage information type 'sharebench iozone -h'",
        ));
    }
    // IOzone knows only -h; --help is what every other command takes.
    let opts = if args[0] == "--help" {
        args::parse(&["-h".to_string()])?
    } else {
        args::parse(args)?
    };
    if opts.help {
        let _ = write!(crate::stdout::stdout(), "{}", args::USAGE);
        return Ok(());
    }
    let argv = command_line(args);
    let sel = Selection::new(&opts);
    if opts.throughput_mode() {
        run_throughput(&opts, &sel, &argv, cluster)
    } else {
        run_auto(&opts, &sel, &argv, cluster)
    }
}

/// The words of the command line as typed (for the banner, the workbook and run.json).
fn command_line(args: &[String]) -> Vec<String> {
    let real: Vec<String> = std::env::args().collect();
    if real.len() >= args.len() && real[real.len() - args.len()..] == *args {
        real
    } else {
        ["sharebench", "iozone"]
            .iter()
            .map(|s| s.to_string())
            .chain(args.iter().cloned())
            .collect()
    }
}

/// Prints to stdout at once; a closed pipe is not an error worth stopping a run for.
fn out(text: &str) {
    let mut o = crate::stdout::stdout();
    let _ = o.write_all(text.as_bytes());
    let _ = o.flush();
}

/// The smallest step of the clock the engine times with (IOzone's get_resolution).
fn time_resolution() -> f64 {
    let mut best = f64::MAX;
    for _ in 0..10 {
        let t0 = Instant::now();
        loop {
            let d = t0.elapsed().as_secs_f64();
            if d > 0.0 {
                best = best.min(d);
                break;
            }
        }
    }
    best
}

/// The smallest step of the process CPU time (IOzone's get_rusage_resolution), with a
/// growing busy loop between readings; gives up after a second.
fn cpu_resolution() -> f64 {
    let start = Instant::now();
    let mut delay: u64 = 0;
    while start.elapsed().as_secs_f64() < 1.0 {
        let a = CpuSnapshot::now();
        let mut x = 0u64;
        for i in 0..delay {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        let d = CpuSnapshot::now().since(&a).total_s;
        if d > 0.0 {
            return d;
        }
        delay += 1;
    }
    0.0
}

/// The splash lines, with the -+u resolution measured now.
fn splash_lines(opts: &Options) -> Vec<String> {
    let mut lines = Vec::new();
    for s in &opts.splash {
        match s {
            Splash::Text(t) => lines.push(t.clone()),
            Splash::CpuResolution => {
                lines.push(format!(
                    "\tCPU utilization Resolution = {:5.3} seconds.\n",
                    cpu_resolution()
                ));
                lines.push("\tCPU utilization Excel chart enabled\n".to_string());
            }
        }
    }
    lines
}

/// Prints the banner (after the plan is known to be valid).
fn print_banner(opts: &Options, argv: &[String], throughput: Option<(u32, bool)>) {
    let began = chrono::Local::now()
        .format("%a %b %e %H:%M:%S %Y")
        .to_string();
    let splash = splash_lines(opts);
    let banner = table::Banner {
        version: env!("CARGO_PKG_VERSION"),
        began: &began,
        splash: &splash,
        argv,
        time_res: time_resolution(),
        stride: opts.stride.unwrap_or(layout::STRIDE),
        throughput,
    };
    out(&banner.render());
}

fn notes(sel: &Selection, throughput: bool) {
    for n in sel.ignored(throughput) {
        eprintln!("sharebench: note: {n}");
    }
}

/// Runs one plan through the session and says where the records are. `out` is None
/// (the default results directory) except for the runs of several -t values.
fn execute(
    plan: &Plan,
    opts: &Options,
    argv: &[String],
    out: Option<PathBuf>,
    cluster: Option<&dyn session::Cluster>,
    on_record: &mut dyn FnMut(&Record),
) -> CliResult<SessionResult> {
    let targets = vec![opts.target_dir()];
    let worker_dirs = opts.worker_dirs();
    let spec = SessionSpec {
        plan,
        targets: &targets,
        names: &[],
        out,
        command_line: argv.to_vec(),
        carried: Vec::new(),
        cluster,
        remount_at: opts.remount_at(),
        quiet: false,
        worker_dirs: &worker_dirs,
        server_cpu: &[],
    };
    let result = session::execute(spec, on_record)?;
    if result.writes {
        eprintln!("sharebench: records in {}", result.out_dir.display());
    }
    Ok(result)
}

/// Writes the -b workbook, if asked.
fn write_workbook(opts: &Options, sheet: &workbook::Sheet) -> CliResult<()> {
    if let Some(path) = &opts.workbook {
        workbook::write(path, sheet)
            .map_err(|e| CliError::failed(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}

/// IOzone's command line as it keeps it for the workbook: each word and a space.
fn joined(argv: &[String]) -> String {
    argv.iter().map(|w| format!("{w} ")).collect()
}

/// Auto mode (-a, or lists of -s/-r) and the single cell without -a.
fn run_auto(
    opts: &Options,
    sel: &Selection,
    argv: &[String],
    cluster: Option<&dyn session::Cluster>,
) -> CliResult<()> {
    let layout = if opts.auto_mode() {
        layout::auto_layout(opts)?
    } else {
        layout::single_layout(opts)?
    };
    let ops = sel.auto_ops();
    let Some(&last_op) = ops.last() else {
        return Err(CliError::usage(
            "none of the selected tests runs outside throughput mode (test 8 needs -t; 9-12 need -E)",
        ));
    };
    let plan = layout::plan(opts, ops, layout.cells(), None)?;
    plan.validate().map_err(CliError::usage)?;
    notes(sel, false);
    print_banner(opts, argv, None);
    out(&table::header(sel.extended));

    let mut t = AutoTable::new(&layout, *sel, last_op, crate::stdout::stdout());
    let result = execute(&plan, opts, argv, None, cluster, &mut |r| t.on_record(r));
    t.flush();
    let result = result?;
    out("\niozone test complete.\n");
    if opts.report {
        let (text, sheet) = table::auto_report(
            &t.stored_rows(),
            &layout.header_kb,
            sel,
            opts.cpu_util,
            &joined(argv),
        );
        out(&text);
        write_workbook(opts, &sheet)?;
    }
    session::outcome_error(&result).map_or(Ok(()), Err)
}

/// Collects the records of an auto/single run and prints each cell's row as soon as the
/// cell's last operation is measured (or fails).
struct AutoTable<'a, W: Write> {
    layout: &'a Layout,
    sel: Selection,
    last_op: Op,
    /// Per slot, the values measured so far.
    values: Vec<TestValues>,
    /// The slot whose row is being filled, and where to look for the next one.
    pending: Option<usize>,
    next: usize,
    out: W,
}

impl<'a, W: Write> AutoTable<'a, W> {
    fn new(layout: &'a Layout, sel: Selection, last_op: Op, out: W) -> Self {
        let values = vec![TestValues::default(); layout.slots.len()];
        AutoTable {
            layout,
            sel,
            last_op,
            values,
            pending: None,
            next: 0,
            out,
        }
    }

    fn cell_of(&self, i: usize) -> Option<Cell> {
        match self.layout.slots[i] {
            Slot::Cell { cell, .. } => Some(cell),
            Slot::Placeholder { .. } => None,
        }
    }

    fn on_record(&mut self, r: &Record) {
        if r.scope == Scope::Worker {
            return;
        }
        let Some(op) = r.op.io() else { return };
        let cell = Cell {
            file_size: r.file_size,
            record_size: r.record_size,
        };
        let slot = match self.pending {
            Some(p) if self.cell_of(p) == Some(cell) => p,
            _ => {
                self.flush();
                let Some(i) =
                    (self.next..self.layout.slots.len()).find(|&i| self.cell_of(i) == Some(cell))
                else {
                    return;
                };
                self.pending = Some(i);
                self.next = i + 1;
                i
            }
        };
        let (test, pass) = table::test_pass(op);
        self.values[slot][test][pass] = Some(table::stored(r));
        if op == self.last_op || r.status == Status::Failed {
            self.flush();
        }
    }

    /// Prints the pending row, if any.
    fn flush(&mut self) {
        if let Some(p) = self.pending.take() {
            let s = &self.layout.slots[p];
            let line = table::row(s.file_kb(), s.rec_kb(), &self.values[p], &self.sel);
            let _ = self.out.write_all(line.as_bytes());
            let _ = self.out.flush();
        }
    }

    /// IOzone's report array: one stored row per slot, placeholders included.
    fn stored_rows(&self) -> Vec<Vec<Stored>> {
        self.layout
            .slots
            .iter()
            .zip(&self.values)
            .map(|(s, v)| table::stored_row(s, v, &self.sel))
            .collect()
    }
}

/// Throughput mode (-t N, once per -t).
fn run_throughput(
    opts: &Options,
    sel: &Selection,
    argv: &[String],
    cluster: Option<&dyn session::Cluster>,
) -> CliResult<()> {
    let (kb, cell) = layout::throughput_cell(opts)?;
    let ops = sel.throughput_ops();
    if ops.is_empty() {
        return Err(CliError::usage(
            "none of the selected tests has a throughput phase (IOzone has none for tests 4, 11 and 12)",
        ));
    }
    let plans: Vec<(u32, Plan)> = opts
        .threads
        .iter()
        .map(|&n| Ok((n, layout::plan(opts, ops.clone(), vec![cell], Some(n))?)))
        .collect::<CliResult<_>>()?;
    for (_, p) in &plans {
        p.validate().map_err(CliError::usage)?;
    }
    notes(sel, true);
    let last = opts.threads.last().copied().unwrap_or(1);
    print_banner(opts, argv, Some((last, opts.use_threads)));

    let mut columns: Vec<Vec<PhaseValue>> = Vec::new();
    let mut failure = None;
    for (n, plan) in &plans {
        out(&table::throughput_intro(
            opts.use_threads,
            kb,
            cell.record_size / 1024,
        ));
        let mut run =
            ThroughputRun::new(*n, opts.use_threads, opts.cpu_util, crate::stdout::stdout());
        // Sessions started within the same second get the same default run id: with several
        // -t runs, each gets its own directory named after its -t.
        let dir = (plans.len() > 1).then(|| {
            Path::new("sharebench-results").join(format!("{}-t{n}", session::new_run_id()))
        });
        let result = execute(plan, opts, argv, dir, cluster, &mut |r| run.on_record(r))?;
        out("\n\n");
        columns.push(run.column(&ops, sel));
        if let Some(e) = session::outcome_error(&result) {
            failure = Some(e);
            break;
        }
    }
    if opts.report {
        let rec_kb = cell.record_size / 1024;
        let (text, sheet) = table::throughput_report(
            &columns,
            opts.use_threads,
            rec_kb,
            opts.cpu_util,
            &joined(argv),
        );
        out(&text);
        write_workbook(opts, &sheet)?;
    }
    out("\niozone test complete.\n");
    failure.map_or(Ok(()), Err)
}

/// Collects one throughput run's records and prints each phase's block when its
/// aggregate arrives.
struct ThroughputRun<W: Write> {
    children: u32,
    threads: bool,
    cpu: bool,
    workers: Vec<Record>,
    /// Per phase: children-see KB/s and CPU %.
    done: HashMap<Op, (f64, f64)>,
    out: W,
}

impl<W: Write> ThroughputRun<W> {
    fn new(children: u32, threads: bool, cpu: bool, out: W) -> Self {
        ThroughputRun {
            children,
            threads,
            cpu,
            workers: Vec::new(),
            done: HashMap::new(),
            out,
        }
    }

    fn on_record(&mut self, r: &Record) {
        let Some(op) = r.op.io() else { return };
        match r.scope {
            Scope::Worker => self.workers.push(r.clone()),
            Scope::Aggregate => {
                let workers = std::mem::take(&mut self.workers);
                if r.status == Status::Failed {
                    self.done.insert(op, (0.0, 0.0));
                    return;
                }
                let s = PhaseStats::from_records(&workers, r);
                // The aggregate's own count: under mpirun, every rank's workers.
                let children = r.threads.max(self.children);
                let block = table::throughput_block(op, children, &s, self.threads, self.cpu);
                let _ = self.out.write_all(block.as_bytes());
                let _ = self.out.flush();
                self.done
                    .insert(op, (s.children, table::cpu_util(s.cpu, s.wall)));
            }
            Scope::Single => {}
        }
    }

    /// This run's column of the -R report, in IOzone's store order: two zero rows when the
    /// writers were skipped, then each phase that ran.
    fn column(&self, ops: &[Op], sel: &Selection) -> Vec<PhaseValue> {
        let mut col = Vec::new();
        if !sel.runs(0) {
            col.push(PhaseValue {
                label: "Initial write",
                value: 0.0,
                cpu: 0.0,
            });
            col.push(PhaseValue {
                label: "",
                value: 0.0,
                cpu: 0.0,
            });
        }
        for &op in ops {
            let (value, cpu) = self.done.get(&op).copied().unwrap_or((0.0, 0.0));
            col.push(PhaseValue {
                label: table::phase_label(op),
                value,
                cpu,
            });
        }
        col
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::{aggregate, record};
    use super::*;

    fn opts(line: &str) -> Options {
        let a: Vec<String> = line.split_whitespace().map(String::from).collect();
        args::parse(&a).unwrap_or_else(|e| panic!("{line}: {}", e.message))
    }

    #[test]
    fn rows_print_when_a_cell_is_complete() {
        let o = opts("-a -n 64k -g 128k -y 32k -q 64k -i 0");
        let layout = layout::auto_layout(&o).unwrap();
        assert_eq!(layout.cells().len(), 4);
        let sel = Selection::new(&o);
        let mut t = AutoTable::new(&layout, sel, Op::Rewrite, Vec::new());
        let kib = 1024;
        t.on_record(&record(
            Op::Write,
            64 * kib,
            32 * kib,
            64 * kib,
            0.5,
            Scope::Single,
        ));
        assert!(
            t.out.is_empty(),
            "the row waits for the cell's last operation"
        );
        t.on_record(&record(
            Op::Rewrite,
            64 * kib,
            32 * kib,
            64 * kib,
            0.25,
            Scope::Single,
        ));
        let text = String::from_utf8(t.out.clone()).unwrap();
        assert_eq!(
            text,
            format!(
                "{:>16}{:>8}{:>8}{:>8}{}\n",
                64,
                32,
                128,
                256,
                " ".repeat(18 + 16 + 8 + 8 + 8 + 18 + 16)
            )
        );
        // A failure ends the cell's row at once, with zeros for what is missing.
        let mut failed = record(Op::Write, 64 * kib, 64 * kib, 0, 0.0, Scope::Single);
        failed.status = Status::Failed;
        t.on_record(&failed);
        let text = String::from_utf8(t.out.clone()).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text
            .lines()
            .nth(1)
            .unwrap()
            .starts_with(&format!("{:>16}{:>8}{:>8}{:>8}", 64, 64, 0, 0)));
        let rows = t.stored_rows();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0][2].value, 128);
        assert_eq!(rows[3][2].value, 0, "cells that never ran stay zero");
        assert!(rows[3][2].missing, "and are left out of the reports");
    }

    #[test]
    fn throughput_blocks_and_report_column() {
        let o = opts("-t 2 -i 1");
        let sel = Selection::new(&o);
        let ops = sel.throughput_ops();
        assert_eq!(ops, vec![Op::Read, Op::Reread]);
        let mut run = ThroughputRun::new(2, false, false, Vec::new());
        let kib = 1024;
        for op in [Op::Read, Op::Reread] {
            run.on_record(&record(
                op,
                512 * kib,
                4 * kib,
                512 * kib,
                0.5,
                Scope::Worker,
            ));
            run.on_record(&record(
                op,
                512 * kib,
                4 * kib,
                512 * kib,
                0.25,
                Scope::Worker,
            ));
            run.on_record(&aggregate(op, 512 * kib, 4 * kib, 1000.0));
        }
        let text = String::from_utf8(run.out.clone()).unwrap();
        assert!(text
            .starts_with("\n\tChildren see throughput for  2 readers \t\t=    3072.00 KB/sec\n"));
        assert!(text.contains("\tChildren see throughput for 2 re-readers \t=    3072.00 KB/sec\n"));
        let col = run.column(&ops, &sel);
        let labels: Vec<&str> = col.iter().map(|p| p.label).collect();
        // IOzone stores two zeros when the writers are skipped.
        assert_eq!(labels, vec!["Initial write", "", "Read", "Re-read"]);
        assert_eq!(col[2].value, 3072.0);
        assert_eq!(col[0].value, 0.0);
    }

    #[test]
    fn command_line_falls_back_to_the_subcommand() {
        let a = vec!["-a".to_string(), "-zq-does-not-match".to_string()];
        let argv = command_line(&a);
        assert_eq!(argv[argv.len() - 2..], a[..]);
        assert_eq!(joined(&argv[..1]), format!("{} ", argv[0]));
    }
}
