//! IOzone's command line: a small getopt-style parser (attached or separate values,
//! clustered flags such as `-ecp`, the `-+u` extended options) into `Options`, plus the
//! splash lines IOzone prints for each flag, in command-line order.
//! It checks what IOzone checks (mixing throughput and auto flags, -f with -F, ...)
//! and refuses the IOzone flags sharebench does not implement, naming the flag.

use crate::error::{CliError, CliResult};
use sharebench_core::size::{parse_size, BareUnit};
use std::path::{Path, PathBuf};

/// IOzone's largest record (MAXBUFFERSIZE), in bytes.
pub const MAX_RECORD: u64 = 16 << 20;
/// IOzone's most children (MAXSTREAMS).
pub const MAX_STREAMS: u32 = 256;
/// The highest IOzone test number (`-i 12`, preadv).
pub const MAX_TEST: u8 = 12;

/// IOzone flags that take a value (from its getopt string).
const WITH_VALUE: &str = "JjkVrtsfFdluUSLH+PibXYgnyq";
/// IOzone flags without a value.
const WITHOUT_VALUE: &str = "ZQNIBDGCTOMREWovAxamwphcezK";
/// The flags implemented here; every other IOzone flag is refused by name.
const SUPPORTED: &str = "azngsryqitTRbfFcewUIoxjEh+";

/// One splash line IOzone prints after the banner, in command-line order.
#[derive(Debug, Clone, PartialEq)]
pub enum Splash {
    Text(String),
    /// `-+u`: the CPU-time resolution line (measured when the banner is printed), then
    /// "CPU utilization Excel chart enabled".
    CpuResolution,
}

/// Everything the command line asked for. Sizes: file sizes in KB (IOzone's unit),
/// record sizes in bytes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options {
    /// -a
    pub auto: bool,
    /// -z
    pub no_cross: bool,
    /// Every -s, in order (KB).
    pub file_sizes: Vec<u64>,
    /// Every -r, in order (bytes).
    pub record_sizes: Vec<u64>,
    /// -n (KB)
    pub min_file: Option<u64>,
    /// -g (KB)
    pub max_file: Option<u64>,
    /// -y (bytes)
    pub min_record: Option<u64>,
    /// -q (bytes)
    pub max_record: Option<u64>,
    /// Record range in IOzone's globals (min_rec_size/max_rec_size): -r, -y and -q set them
    /// in command-line order.
    pub rec_range: (Option<u64>, Option<u64>),
    /// Every -i, in order.
    pub tests: Vec<u8>,
    /// Every -t, in order (one throughput run each).
    pub threads: Vec<u32>,
    /// -T
    pub use_threads: bool,
    /// -R (or -b)
    pub report: bool,
    /// -b
    pub workbook: Option<PathBuf>,
    /// -f
    pub file: Option<String>,
    /// -F
    pub files: Vec<String>,
    /// -c
    pub include_close: bool,
    /// -e
    pub include_fsync: bool,
    /// -w
    pub keep_files: bool,
    /// -U
    pub remount: Option<String>,
    /// -I
    pub direct: bool,
    /// -o
    pub sync: bool,
    /// -x
    pub no_stonewall: bool,
    /// -j
    pub stride: Option<u64>,
    /// -+u
    pub cpu_util: bool,
    /// -E
    pub extended: bool,
    /// -h
    pub help: bool,
    /// The target directory named by a non-flag argument.
    pub target: Option<String>,
    pub splash: Vec<Splash>,
}

impl Options {
    /// IOzone's auto mode: -a, or several -s or several -r (which also disable the crossover).
    pub fn auto_mode(&self) -> bool {
        self.auto || self.file_sizes.len() > 1 || self.record_sizes.len() > 1
    }

    pub fn throughput_mode(&self) -> bool {
        !self.threads.is_empty()
    }

    /// -U's mount point, which must be the one the target is on.
    pub fn remount_at(&self) -> Option<&Path> {
        self.remount.as_deref().map(Path::new)
    }

    /// The directory of each -F name, worker by worker, when they are not all the one
    /// tested in (IOzone runs each worker where its name says); else none.
    pub fn worker_dirs(&self) -> Vec<String> {
        let target = self.target_dir();
        let dirs: Vec<String> = (self.files.iter())
            .map(|f| match Path::new(f).parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_string_lossy().into_owned(),
                _ => ".".to_string(),
            })
            .collect();
        if dirs.iter().all(|d| *d == target) {
            return Vec::new();
        }
        dirs
    }

    /// The directory to test in: the non-flag argument, else the directory of -f (or of
    /// the first -F name), else the current directory.
    pub fn target_dir(&self) -> String {
        if let Some(t) = &self.target {
            return t.clone();
        }
        let named = self
            .file
            .as_deref()
            .or(self.files.first().map(String::as_str));
        match named.and_then(|f| Path::new(f).parent()) {
            Some(p) if !p.as_os_str().is_empty() => p.to_string_lossy().into_owned(),
            _ => ".".to_string(),
        }
    }
}

/// The one-line error for a flag sharebench refuses.
fn unsupported(flag: &str) -> CliError {
    CliError::usage(format!(
        "iozone option {flag} is not supported by sharebench (see 'sharebench iozone -h')"
    ))
}

/// Parses a size with IOzone's rule (bare numbers are KiB) into whole KiB.
fn parse_kib(flag: char, text: &str) -> CliResult<u64> {
    let bytes = parse_size(text, BareUnit::KiB)
        .map_err(|e| CliError::usage(format!("-{flag} {text}: {e}")))?;
    if bytes % 1024 != 0 {
        return Err(CliError::usage(format!(
            "-{flag} {text}: IOzone sizes are whole KiB (e.g. 4k, 64k, 1m)"
        )));
    }
    Ok(bytes / 1024)
}

/// Parses a record size (bytes, whole KiB, at most 16 MiB).
fn parse_record(flag: char, text: &str) -> CliResult<u64> {
    let kb = parse_kib(flag, text)?;
    if kb * 1024 > MAX_RECORD {
        return Err(CliError::usage(format!(
            "-{flag} {text}: maximum record size {kb} KB is greater than maximum buffer size {} KB",
            MAX_RECORD / 1024
        )));
    }
    Ok(kb * 1024)
}

/// Parses a whole number for a flag such as -t, -i or -j.
fn parse_count(flag: char, text: &str) -> CliResult<u64> {
    text.trim()
        .parse::<u64>()
        .map_err(|_| CliError::usage(format!("-{flag} {text}: expected a whole number")))
}

/// True when a non-flag argument can name the target.
fn is_target(arg: &str) -> bool {
    arg == "null://" || Path::new(arg).is_dir()
}

/// Parses IOzone's arguments (without the program name).
pub fn parse(args: &[String]) -> CliResult<Options> {
    let mut o = Options::default();
    let mut positional: Vec<String> = Vec::new();
    let mut i = 0;
    let mut only_positional = false;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if only_positional || !arg.starts_with('-') || arg == "-" {
            positional.push(arg.clone());
            continue;
        }
        if arg == "--" {
            only_positional = true;
            continue;
        }
        let body: Vec<char> = arg[1..].chars().collect();
        let mut k = 0;
        while k < body.len() {
            let c = body[k];
            k += 1;
            if WITH_VALUE.contains(c) {
                if !SUPPORTED.contains(c) {
                    return Err(unsupported(&format!("-{c}")));
                }
                let value: String = if k < body.len() {
                    body[k..].iter().collect()
                } else if i < args.len() {
                    i += 1;
                    args[i - 1].clone()
                } else {
                    return Err(CliError::usage(format!("option -{c} needs a value")));
                };
                k = body.len();
                if c == 'F' {
                    // -F takes one name per child of the largest -t given so far.
                    let streams = o.threads.iter().copied().max().unwrap_or(0) as usize;
                    if streams == 0 {
                        return Err(CliError::usage(
                            "invalid options: must specify -t N before -F",
                        ));
                    }
                    let mut names = vec![value];
                    while names.len() < streams {
                        match args.get(i) {
                            Some(n) => names.push(n.clone()),
                            None => {
                                return Err(CliError::usage(format!(
                                    "invalid options: not enough filenames for {streams} streams"
                                )))
                            }
                        }
                        i += 1;
                    }
                    if o.file.is_some() {
                        return Err(CliError::usage(
                            "invalid options: -f and -F are mutually exclusive",
                        ));
                    }
                    o.files = names;
                    continue;
                }
                apply_value(&mut o, c, &value)?;
            } else if WITHOUT_VALUE.contains(c) {
                if !SUPPORTED.contains(c) {
                    return Err(unsupported(&format!("-{c}")));
                }
                apply_flag(&mut o, c);
            } else {
                return Err(CliError::usage(format!(
                    "unknown option -{c} in '{arg}' (see 'sharebench iozone -h')"
                )));
            }
        }
    }
    for p in positional {
        if !is_target(&p) {
            return Err(CliError::usage(format!(
                "'{p}' is not an existing directory (a non-option argument names the target directory)"
            )));
        }
        if let Some(prev) = &o.target {
            return Err(CliError::usage(format!(
                "two target directories given: '{prev}' and '{p}'; give one"
            )));
        }
        o.target = Some(p);
    }
    if !o.help {
        check(&o)?;
    }
    Ok(o)
}

/// Flags without a value.
fn apply_flag(o: &mut Options, c: char) {
    let text = |s: &str| Splash::Text(s.to_string());
    match c {
        'a' => {
            o.auto = true;
            o.splash.push(text("\tAuto Mode\n"));
        }
        'z' => {
            o.no_cross = true;
            o.splash
                .push(text("\tCross over of record size disabled.\n"));
        }
        'T' => o.use_threads = true,
        'R' => {
            o.report = true;
            o.splash.push(text("\tExcel chart generation enabled\n"));
        }
        'c' => {
            o.include_close = true;
            o.splash.push(text("\tInclude close in write timing\n"));
        }
        'e' => {
            o.include_fsync = true;
            o.splash.push(text("\tInclude fsync in write timing\n"));
        }
        'w' => {
            o.keep_files = true;
            o.splash.push(text("\tSetting no_unlink\n"));
        }
        'I' => {
            o.direct = true;
            o.splash.push(text("\tO_DIRECT feature enabled\n"));
        }
        'o' => {
            o.sync = true;
            o.splash.push(text("\tSYNC Mode. \n"));
        }
        'x' => {
            o.no_stonewall = true;
            o.splash.push(text("\tStonewall disabled\n"));
        }
        'E' => o.extended = true,
        'h' => o.help = true,
        _ => {}
    }
}

/// Flags with a value (except -F, handled by the caller).
fn apply_value(o: &mut Options, c: char, v: &str) -> CliResult<()> {
    let text = |s: String| Splash::Text(s);
    match c {
        's' => {
            let kb = parse_kib('s', v)?;
            o.file_sizes.push(kb);
            o.splash.push(text(format!("\tFile size set to {kb} KB\n")));
        }
        'r' => {
            let rec = parse_record('r', v)?;
            o.record_sizes.push(rec);
            // IOzone: min_rec_size = first -r, max_rec_size = last -r.
            let first = o.record_sizes[0];
            o.rec_range = (Some(first), Some(rec));
            o.splash
                .push(text(format!("\tRecord Size {} KB\n", rec / 1024)));
        }
        'n' => {
            let kb = parse_kib('n', v)?.max(4);
            o.min_file = Some(kb);
            o.splash.push(text(format!(
                "\tUsing minimum file size of {kb} kilobytes.\n"
            )));
        }
        'g' => {
            let kb = parse_kib('g', v)?.max(4);
            o.max_file = Some(kb);
            o.splash.push(text(format!(
                "\tUsing maximum file size of {kb} kilobytes.\n"
            )));
        }
        'y' => {
            let rec = parse_kib('y', v)? * 1024;
            o.min_record = Some(rec);
            o.rec_range.0 = Some(rec);
            o.splash.push(text(format!(
                "\tUsing Minimum Record Size {} KB\n",
                rec / 1024
            )));
        }
        'q' => {
            let rec = parse_record('q', v)?;
            o.max_record = Some(rec);
            o.rec_range.1 = Some(rec);
            o.splash.push(text(format!(
                "\tUsing Maximum Record Size {} KB\n",
                rec / 1024
            )));
        }
        'i' => {
            let n = parse_count('i', v)?;
            if n > u64::from(MAX_TEST) {
                return Err(CliError::usage(format!(
                    "-i {v}: no such test (IOzone's tests are 0 to {MAX_TEST})"
                )));
            }
            o.tests.push(n as u8);
        }
        't' => {
            let n = parse_count('t', v)?;
            if n == 0 || n > u64::from(MAX_STREAMS) {
                return Err(CliError::usage(format!(
                    "-t {v}: the number of children must be 1 to {MAX_STREAMS}"
                )));
            }
            o.threads.push(n as u32);
        }
        'b' => {
            o.report = true;
            o.workbook = Some(PathBuf::from(v));
        }
        'f' => {
            if !o.files.is_empty() {
                return Err(CliError::usage(
                    "invalid options: -f and -F are mutually exclusive",
                ));
            }
            o.file = Some(v.to_string());
        }
        'U' => o.remount = Some(v.to_string()),
        'j' => {
            let n = parse_count('j', v)?;
            if n == 0 {
                return Err(CliError::usage(
                    "-j 0: sharebench needs a stride of at least 1 record",
                ));
            }
            o.stride = Some(n);
        }
        '+' => {
            let mut chars = v.chars();
            let sub = chars.next().unwrap_or(' ');
            if sub != 'u' || chars.next().is_some() {
                return Err(unsupported(&format!("-+{v}")));
            }
            o.cpu_util = true;
            o.splash.push(Splash::CpuResolution);
        }
        _ => return Err(unsupported(&format!("-{c}"))),
    }
    Ok(())
}

/// The combinations IOzone refuses, with its messages.
fn check(o: &Options) -> CliResult<()> {
    let auto_flags = o.auto_mode()
        || o.min_file.is_some()
        || o.max_file.is_some()
        || o.min_record.is_some()
        || o.max_record.is_some();
    if o.throughput_mode() && auto_flags {
        return Err(CliError::usage(
            "Can not mix throughput mode and auto-mode flags.",
        ));
    }
    if o.throughput_mode() && o.remount.is_some() {
        return Err(CliError::usage(
            "Can not run throughput tests with unmount & remounts.",
        ));
    }
    if o.throughput_mode() && o.file.is_some() {
        return Err(CliError::usage(
            "You must use -F when using multiple threads or processes.",
        ));
    }
    if o.auto_mode() && !o.files.is_empty() {
        return Err(CliError::usage("You must use -f when using auto mode."));
    }
    Ok(())
}

/// The short usage `-h` prints.
pub const USAGE: &str = "\
Usage: sharebench iozone [options] [DIR]
IOzone-compatible command line; the target is DIR (an existing directory), else the
directory of -f, else the current directory. Sizes: bare numbers are KB; k, m, g suffixes.

  -a            auto mode: files 64 KB..512 MB, records 4 KB..16 MB (crossover at 16 MB)
  -z            with -a: test small records on large files too (no crossover)
  -n SIZE       auto mode minimum file size      -g SIZE   auto mode maximum file size
  -y SIZE       auto mode minimum record size    -q SIZE   auto mode maximum record size
  -s SIZE       file size (repeat for a list)    -r SIZE   record size (repeat for a list)
  -i N          test to run (repeat): 0 write/rewrite, 1 read/reread, 2 random read/write,
                3 backward read, 4 record rewrite, 5 stride read, 6 fwrite/frewrite,
                7 fread/freread, 8 random mix (-t only), 9 pwrite, 10 pread,
                11 pwritev, 12 preadv (9-12 outside -t need -E)
  -E            include tests 9-12 (pwrite, pread, pwritev, preadv)
  -t N          throughput mode with N workers (repeat for several runs); -T: say threads
  -F NAMES...   with -t: one file name per worker; each works in its name's directory
  -f NAME       test file name (its directory is the target)
  -R            print the Excel-style report      -b FILE   also write it (.xls BIFF2 or .xlsx)
  -c            include close() in the timing    -e        include fsync() in the timing
  -o            O_SYNC writes                     -I        O_DIRECT
  -w            keep the files                    -x        no stonewalling
  -j N          stride of the stride read, in records (default 17)
  -U MOUNT      remount the target's file system before each test (needs root)
  -+u           CPU utilization reports
  -h            this help

Every test writes its file first, untimed, when -i does not include 0.
Records, run.json and results.csv go to sharebench-results/<run id>/.
";

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    fn ok(line: &str) -> Options {
        parse(&args(line)).unwrap_or_else(|e| panic!("{line}: {}", e.message))
    }

    fn err(line: &str) -> String {
        match parse(&args(line)) {
            Ok(_) => panic!("{line}: accepted"),
            Err(e) => {
                assert_eq!(e.code, 2, "{line}");
                e.message
            }
        }
    }

    #[test]
    fn flags_without_values() {
        let o = ok("-a -z -T -R -c -e -w -I -o -x -E");
        assert!(o.auto && o.no_cross && o.use_threads && o.report && o.include_close);
        assert!(
            o.include_fsync && o.keep_files && o.direct && o.sync && o.no_stonewall && o.extended
        );
        assert!(ok("-h").help);
    }

    #[test]
    fn clustered_flags_like_getopt() {
        let o = ok("-ecw -az");
        assert!(o.include_fsync && o.include_close && o.keep_files && o.auto && o.no_cross);
        // A value-taking flag takes the rest of the cluster.
        let o = ok("-Ri0");
        assert!(o.report);
        assert_eq!(o.tests, vec![0]);
    }

    #[test]
    fn attached_and_separate_values() {
        let a = ok("-s64k -r4 -i0 -i 1 -t2 -j 3");
        let b = ok("-s 64k -r 4 -i 0 -i1 -t 2 -j3");
        assert_eq!(a, b);
        assert_eq!(a.file_sizes, vec![64]);
        assert_eq!(a.record_sizes, vec![4096]);
        assert_eq!(a.tests, vec![0, 1]);
        assert_eq!(a.threads, vec![2]);
        assert_eq!(a.stride, Some(3));
    }

    #[test]
    fn sizes_are_kib_with_suffixes() {
        let o = ok("-a -n 1m -g 2G -y 8 -q 1m");
        assert_eq!(o.min_file, Some(1024));
        assert_eq!(o.max_file, Some(2 * 1024 * 1024));
        assert_eq!(o.min_record, Some(8 * 1024));
        assert_eq!(o.max_record, Some(1 << 20));
        assert_eq!(ok("-s 512").file_sizes, vec![512]);
        assert_eq!(ok("-s 2g").file_sizes, vec![2 * 1024 * 1024]);
    }

    #[test]
    fn size_lists_keep_order() {
        let o = ok("-s 1m -s 64k -r 4k -r 64k");
        assert_eq!(o.file_sizes, vec![1024, 64]);
        assert_eq!(o.record_sizes, vec![4096, 65536]);
        assert!(o.auto_mode());
        assert_eq!(o.rec_range, (Some(4096), Some(65536)));
    }

    #[test]
    fn other_flags_with_values() {
        let o = ok("-b out.xls -f /tmp/x -U /mnt -+u");
        assert_eq!(o.workbook, Some(PathBuf::from("out.xls")));
        assert!(o.report, "-b implies -R");
        assert_eq!(o.file.as_deref(), Some("/tmp/x"));
        assert_eq!(o.remount.as_deref(), Some("/mnt"));
        assert!(o.cpu_util);
        assert_eq!(o.splash, vec![Splash::CpuResolution]);
        assert!(ok("-+ u").cpu_util);
        let o = ok("-t 2 -F /tmp/a /tmp/b");
        assert_eq!(o.files, vec!["/tmp/a", "/tmp/b"]);
        assert_eq!(o.target_dir(), "/tmp");
        assert!(o.worker_dirs().is_empty(), "one directory: the target");
        let o = ok("-t 3 -F /mnt/a/x /mnt/b/y /mnt/a/z");
        assert_eq!(o.target_dir(), "/mnt/a");
        assert_eq!(o.worker_dirs(), vec!["/mnt/a", "/mnt/b", "/mnt/a"]);
    }

    #[test]
    fn splash_lines_follow_the_command_line() {
        let o = ok("-R -a -s 64k -z");
        let lines: Vec<String> = o
            .splash
            .iter()
            .map(|s| match s {
                Splash::Text(t) => t.clone(),
                Splash::CpuResolution => String::new(),
            })
            .collect();
        assert_eq!(
            lines,
            vec![
                "\tExcel chart generation enabled\n",
                "\tAuto Mode\n",
                "\tFile size set to 64 KB\n",
                "\tCross over of record size disabled.\n"
            ]
        );
    }

    #[test]
    fn target_directory() {
        let dir = std::env::temp_dir();
        let d = dir.to_string_lossy().into_owned();
        assert_eq!(ok(&format!("-a {d}")).target_dir(), d);
        assert_eq!(ok(&format!("{d} -a")).target.as_deref(), Some(d.as_str()));
        assert_eq!(ok("-a -f /var/tmp/iozone.tmp").target_dir(), "/var/tmp");
        assert_eq!(ok("-a -f iozone.tmp").target_dir(), ".");
        assert_eq!(ok("-a").target_dir(), ".");
        assert!(err("-a /no/such/dir/anywhere").contains("not an existing directory"));
        assert!(err(&format!("-a {d} {d}")).contains("two target"));
    }

    #[test]
    fn bad_flags_are_named() {
        assert!(err("-a -B").contains("-B"));
        assert!(err("-a -+n").contains("-+n"));
        assert!(err("-l 2").contains("-l"));
        assert!(err("-1").contains("-1"));
        assert!(err("-a -i").contains("-i"));
        assert!(err("-i 13").contains("13"));
        assert!(err("-i x").contains("-i x"));
        assert!(err("-t 0").contains("-t"));
        assert!(err("-t 300").contains("-t"));
        assert!(err("-j 0").contains("-j"));
    }

    #[test]
    fn bad_sizes_are_clear() {
        assert!(err("-s 12q").contains("-s 12q"));
        assert!(err("-s -4k").contains("-s"));
        assert!(err("-s 0").contains("-s 0"));
        assert!(err("-s 100b").contains("whole KiB"));
        assert!(err("-r 32m").contains("maximum buffer size"));
        assert!(err("-q 32m").contains("maximum buffer size"));
        assert!(err("-g 1.5g").contains("-g 1.5g"));
    }

    #[test]
    fn iozone_conflicts() {
        assert!(err("-t 2 -a").contains("Can not mix"));
        assert!(err("-t 2 -g 1m").contains("Can not mix"));
        assert!(err("-t 2 -s 1m -s 2m").contains("Can not mix"));
        assert!(err("-t 2 -U /mnt").contains("unmount"));
        assert!(err("-t 2 -f x").contains("-F"));
        assert!(err("-F a b").contains("-t N before -F"));
        assert!(err("-t 3 -F a b").contains("not enough filenames"));
        assert!(err("-a -t 1 -F a").contains("Can not mix"));
    }

    #[test]
    fn seed_command_lines_parse() {
        let dir = std::env::temp_dir().to_string_lossy().into_owned();
        let o = ok(&format!(
            "-a -i 0 -i 1 -i 2 -i 3 -i 4 -g 2G -R -b results-smb.xls {dir}"
        ));
        assert!(o.auto && o.report);
        assert_eq!(o.tests, vec![0, 1, 2, 3, 4]);
        assert_eq!(o.max_file, Some(2 << 20));
        assert_eq!(o.workbook, Some(PathBuf::from("results-smb.xls")));
        assert_eq!(o.target_dir(), dir);

        let o = ok(&format!(
            "-t 4 -i 0 -i 1 -i 2 -i 3 -i 4 -R -b performance-results-smb.xls {dir}"
        ));
        assert_eq!(o.threads, vec![4]);
        assert!(o.throughput_mode() && !o.auto_mode());

        let o = ok(&format!(
            "-a -+u -i 0 -i 1 -i 2 -i 3 -i 4 -g 2G -R -b results-cpu-smb.xls {dir}"
        ));
        assert!(o.cpu_util && o.auto);
        assert_eq!(o.workbook, Some(PathBuf::from("results-cpu-smb.xls")));
    }
}
