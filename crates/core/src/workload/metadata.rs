//! The Connectathon basic tests (cthon04 `basic/`), written against the backend trait:
//! test1 creates a tree (levels x files x dirs), test2 removes it, test3 looks up a path,
//! test4 sets and gets attributes, test5 writes and reads a large file (buffered and with
//! the cache defeated), test6 reads a directory, test7 renames and links, test8 makes and
//! reads symlinks, test9 calls statfs. Each operation type is timed on its own; a record
//! per (test, operation type) carries its count, operations per second and latency.
//! Semantics and departures from Connectathon: docs/methods/workloads.md.

use super::{check, OpMeter, WorkloadRun};
use crate::backend::{read_full, write_all, Backend, OpenOptions, PurgeRequest};
use crate::buffer::AlignedBuf;
use crate::latency::LatencyRecorder;
use crate::operation::Operation;
use crate::plan::MetadataParams;
use crate::workload::iozone::PassError;
use std::io;
use std::sync::atomic::AtomicBool;

/// Times the tests' calls by the operation each record names.
pub type Meter = OpMeter<Operation>;

/// Connectathon's names: `file.N` and `dir.N`.
const FNAME: &str = "file.";
const DNAME: &str = "dir.";

fn io_err(what: String) -> PassError {
    PassError::Io(io::Error::other(what))
}

/// The tree of tests 1 and 2: `levels` deep, at each level `files` files, then `dirs`
/// directories, each holding the next level.
#[derive(Clone, Copy)]
pub struct Tree {
    pub levels: u32,
    pub files: u64,
    pub dirs: u64,
}

/// What a walk of the tree does at each name.
#[derive(Clone, Copy, PartialEq)]
pub enum Walk {
    /// test1: files created (creat + close), then each directory made before its contents.
    Create,
    /// test2: what test1 made removed by name: files unlinked, then each directory removed
    /// after its contents.
    Remove,
}

/// Connectathon's tests 1 (`Walk::Create`) and 2 (`Walk::Remove`) on the tree `t` in `dir`.
pub fn walk(
    b: &dyn Backend,
    dir: &str,
    t: Tree,
    how: Walk,
    m: &mut Meter,
    cancel: &AtomicBool,
) -> Result<(), PassError> {
    if t.levels == 0 {
        return Ok(());
    }
    for f in 0..t.files {
        check(cancel)?;
        let p = format!("{dir}/{FNAME}{f}");
        match how {
            Walk::Create => m.time(Operation::CreateFile, || {
                b.open(&p, OpenOptions::create_new())?.close()
            })?,
            Walk::Remove => m.time(Operation::RemoveFile, || b.unlink(&p))?,
        }
    }
    let next = Tree {
        levels: t.levels - 1,
        ..t
    };
    for d in 0..t.dirs {
        check(cancel)?;
        let p = format!("{dir}/{DNAME}{d}");
        if how == Walk::Create {
            m.time(Operation::CreateDir, || b.mkdir(&p))?;
        }
        walk(b, &p, next, how, m, cancel)?;
        if how == Walk::Remove {
            m.time(Operation::RemoveDir, || b.rmdir(&p))?;
        }
    }
    Ok(())
}

/// test3: `count` lookups of the test directory's path (Connectathon: getcwd and
/// stat(".") across the mount point; with paths relative to the target root, a stat of
/// the full path walks every component).
pub fn test3(
    b: &dyn Backend,
    dir: &str,
    count: u64,
    m: &mut Meter,
    cancel: &AtomicBool,
) -> Result<(), PassError> {
    times(count, cancel, || {
        let st = m.time(Operation::Lookup, || b.stat(dir))?;
        if !st.is_dir {
            return Err(io_err(format!("lookup of {dir} did not find a directory")));
        }
        Ok(())
    })
}

/// `once`, `count` times, unless cancelled (tests 3 and 9).
fn times(
    count: u64,
    cancel: &AtomicBool,
    mut once: impl FnMut() -> Result<(), PassError>,
) -> Result<(), PassError> {
    for _ in 0..count {
        check(cancel)?;
        once()?;
    }
    Ok(())
}

fn make_files(b: &dyn Backend, dir: &str, prefix: &str, n: u64) -> io::Result<()> {
    for i in 0..n {
        b.open(&format!("{dir}/{prefix}{i}"), OpenOptions::create_new())?
            .close()?;
    }
    Ok(())
}

/// test4: on each of `files` files (made beforehand), `rounds` times: chmod 0, stat (mode
/// must be 0), chmod 0666, stat (mode must be 0666).
pub fn test4(
    b: &dyn Backend,
    dir: &str,
    files: u64,
    rounds: u64,
    m: &mut Meter,
    cancel: &AtomicBool,
) -> Result<(), PassError> {
    each_file_each_round(files, rounds, cancel, |i| {
        let p = format!("{dir}/{FNAME}{i}");
        let round = (|| -> Result<(), PassError> {
            for mode in [0o000, 0o666] {
                m.time(Operation::Setattr, || b.chmod(&p, mode))?;
                let st = m.time(Operation::Getattr, || b.stat(&p))?;
                if b.stores_data() && st.mode & 0o777 != mode {
                    return Err(io_err(format!(
                        "{p}: mode is {:o} after chmod {mode:o}",
                        st.mode & 0o777
                    )));
                }
            }
            Ok(())
        })();
        if round.is_err() {
            // Left at mode 0 (over SMB: read-only), the file could not be removed with
            // the run's working directory: make it writable again first.
            let _ = b.chmod(&p, 0o666);
        }
        round
    })
}

/// The shape of tests 4 and 7: `each` run on every one of `files` files (by number)
/// `rounds` times. The files are made before the test and removed after it, untimed, as
/// cthon04 makes them before its timer starts (`prepared_files`).
fn each_file_each_round(
    files: u64,
    rounds: u64,
    cancel: &AtomicBool,
    mut each: impl FnMut(u64) -> Result<(), PassError>,
) -> Result<(), PassError> {
    for _ in 0..rounds {
        for i in 0..files {
            check(cancel)?;
            each(i)?;
        }
    }
    Ok(())
}

/// The `file.N` files a test works on, made before its timer starts (tests 4, 6, 7).
fn prepared_files(test: Operation, p: &MetadataParams) -> u64 {
    match test {
        Operation::Test4 | Operation::Test7 => p.attr_files,
        Operation::Test6 => p.readdir_files,
        _ => 0,
    }
}

/// Removes what is left of `n` files `prefix`N after a test (test6 removes some itself).
fn remove_left(b: &dyn Backend, dir: &str, prefix: &str, n: u64) -> io::Result<()> {
    for i in 0..n {
        match b.unlink(&format!("{dir}/{prefix}{i}")) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            other => other?,
        }
    }
    Ok(())
}

/// How test5's uncached read defeated the cache, and the latency of its write calls
/// (`write-large` is the whole file as one operation).
pub struct Test5Result {
    pub purge: String,
    pub write_calls: LatencyRecorder,
}

/// test5a and test5b: writes a file of `size` bytes in `io_size` writes (create, write,
/// close), reads it straight back (`read-buffered`: the client cache may serve it), then
/// reads it again with the cache defeated (`read-uncached`: the backend's purge, or
/// O_DIRECT when no purge is possible), then removes it.
pub fn test5(
    b: &dyn Backend,
    dir: &str,
    size: u64,
    io_size: u64,
    m: &mut Meter,
    cancel: &AtomicBool,
) -> Result<Test5Result, PassError> {
    let p = format!("{dir}/bigfile");
    let mut buf = AlignedBuf::filled(io_size as usize);
    let t = std::time::Instant::now();
    let mut f = b.open(&p, OpenOptions::create_new())?;
    let mut write_calls = LatencyRecorder::new();
    let mut done = 0;
    while done < size {
        check(cancel)?;
        let n = (size - done).min(io_size) as usize;
        let call = std::time::Instant::now();
        write_all(f.as_mut(), &buf.as_slice()[..n])?;
        write_calls.record_ns(call.elapsed().as_nanos() as u64);
        done += n as u64;
    }
    f.close()?;
    m.record_whole(Operation::WriteLarge, t.elapsed(), size);
    read_pass(
        b,
        &p,
        size,
        false,
        &mut buf,
        Operation::ReadBuffered,
        m,
        cancel,
    )?;
    let purge = match b.purge_cache(&p, PurgeRequest::Drop) {
        Ok(how) => {
            read_pass(
                b,
                &p,
                size,
                false,
                &mut buf,
                Operation::ReadUncached,
                m,
                cancel,
            )?;
            how.name().to_string()
        }
        Err(_) => {
            read_pass(
                b,
                &p,
                size,
                true,
                &mut buf,
                Operation::ReadUncached,
                m,
                cancel,
            )?;
            "o_direct".to_string()
        }
    };
    b.unlink(&p)?;
    Ok(Test5Result { purge, write_calls })
}

#[allow(clippy::too_many_arguments)]
fn read_pass(
    b: &dyn Backend,
    p: &str,
    size: u64,
    direct: bool,
    buf: &mut AlignedBuf,
    op: Operation,
    m: &mut Meter,
    cancel: &AtomicBool,
) -> Result<(), PassError> {
    let t = std::time::Instant::now();
    let how = OpenOptions {
        direct,
        ..OpenOptions::read_only()
    };
    let mut f = b.open(p, how)?;
    let mut done = 0;
    while done < size {
        check(cancel)?;
        let n = match read_full(f.as_mut(), buf.as_mut_slice()) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => return Err(e.into()),
        };
        done += n as u64;
    }
    f.close()?;
    if done != size && b.stores_data() {
        return Err(io_err(format!("{p}: read {done} of {size} bytes")));
    }
    m.record_whole(op, t.elapsed(), done);
    Ok(())
}

/// test6, as cthon04 runs it: a directory of `files` files (made beforehand); `rounds`
/// times (at most `files`): read the directory, check that exactly the files not yet
/// removed are listed, and remove the first of them, so the directory shrinks by one a
/// pass (cthon04's "20500 entries read, 200 files" at its defaults).
pub fn test6(
    b: &dyn Backend,
    dir: &str,
    files: u64,
    rounds: u64,
    m: &mut Meter,
    cancel: &AtomicBool,
) -> Result<(), PassError> {
    for round in 0..rounds.min(files) {
        check(cancel)?;
        let entries = m.time(Operation::Readdir, || b.readdir(dir))?;
        if b.stores_data() {
            let listed: Vec<u64> = entries
                .iter()
                .filter_map(|e| e.name.strip_prefix(FNAME)?.parse::<u64>().ok())
                .filter(|&n| n < files)
                .collect();
            let expected = files - round;
            if listed.len() as u64 != expected || listed.iter().any(|&n| n < round) {
                return Err(io_err(format!(
                    "readdir of {dir} on pass {} listed {} files, not the {expected} left",
                    round + 1,
                    listed.len()
                )));
            }
        }
        let p = format!("{dir}/{FNAME}{round}");
        m.time(Operation::Unlink, || b.unlink(&p))?;
    }
    Ok(())
}

/// test7, as cthon04 runs it: on each of `files` files (made beforehand), `rounds` times:
/// rename file.N to newfile.N, stat both (the old name gone, the new one with one link),
/// link it back to file.N, stat both (two links each), unlink newfile.N, stat file.N (one
/// link).
pub fn test7(
    b: &dyn Backend,
    dir: &str,
    files: u64,
    rounds: u64,
    m: &mut Meter,
    cancel: &AtomicBool,
) -> Result<(), PassError> {
    let checks = b.stores_data();
    each_file_each_round(files, rounds, cancel, |i| {
        let old = format!("{dir}/{FNAME}{i}");
        let new = format!("{dir}/newfile.{i}");
        let links = |m: &mut Meter, p: &str, want: u64| -> Result<(), PassError> {
            let st = m.time(Operation::Getattr, || b.stat(p))?;
            if checks && st.nlink != want {
                return Err(io_err(format!("{p}: link count {}, not {want}", st.nlink)));
            }
            Ok(())
        };
        m.time(Operation::Rename, || b.rename(&old, &new))?;
        let gone = m.time(Operation::Getattr, || match b.stat(&old) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(true),
            Err(e) => Err(e),
            Ok(_) => Ok(false),
        })?;
        if checks && !gone {
            return Err(io_err(format!("{old} is still there after its rename")));
        }
        links(m, &new, 1)?;
        m.time(Operation::Link, || b.link(&new, &old))?;
        links(m, &new, 2)?;
        links(m, &old, 2)?;
        m.time(Operation::Unlink, || b.unlink(&new))?;
        links(m, &old, 1)
    })
}

/// test8: `rounds` times, for `files` names: symlink, lstat (must be a symlink), readlink
/// (must give the target back), unlink.
pub fn test8(
    b: &dyn Backend,
    dir: &str,
    files: u64,
    rounds: u64,
    m: &mut Meter,
    cancel: &AtomicBool,
) -> Result<(), PassError> {
    for _ in 0..rounds {
        for i in 0..files {
            check(cancel)?;
            let link = format!("{dir}/{FNAME}{i}");
            let target = format!("/this/is/a/symlink{i}");
            m.time(Operation::Symlink, || b.symlink(&target, &link))?;
            let st = m.time(Operation::Getattr, || b.lstat(&link))?;
            if b.stores_data() && !st.is_symlink {
                return Err(io_err(format!("{link} is not a symlink after symlink()")));
            }
            let got = m.time(Operation::Readlink, || b.readlink(&link))?;
            if b.stores_data() && got != target {
                return Err(io_err(format!("readlink {link} gave {got}, not {target}")));
            }
            m.time(Operation::Unlink, || b.unlink(&link))?;
        }
    }
    Ok(())
}

/// test9: `count` statfs calls.
pub fn test9(
    b: &dyn Backend,
    dir: &str,
    count: u64,
    m: &mut Meter,
    cancel: &AtomicBool,
) -> Result<(), PassError> {
    times(count, cancel, || {
        m.time(Operation::Statfs, || b.statfs(dir))?;
        Ok(())
    })
}

/// Runs the basic tests once (one repetition on one target) and emits their records.
pub fn run(w: &mut WorkloadRun, p: &MetadataParams) -> Result<(), PassError> {
    let base = w.target.workdir.file(&format!("meta-r{}", w.rep));
    w.phase = Operation::Setup;
    w.backend().mkdir(&base)?;
    let cancel = w.cancel;
    // test1/test2: the sweep, or Connectathon's tree.
    let steps: Vec<(u32, u64, u64)> = if p.counts.is_empty() {
        vec![(p.levels, u64::from(p.files), u64::from(p.dirs))]
    } else {
        p.counts.iter().map(|&n| (1, n, n)).collect()
    };
    for (levels, files, dirs) in steps {
        let (tf, td) = MetadataParams::tree_counts(levels, files, dirs);
        let dir = format!("{base}/tree");
        w.backend().mkdir(&dir)?;
        let tree = Tree {
            levels,
            files,
            dirs,
        };
        for (test, how) in [
            (Operation::Test1, Walk::Create),
            (Operation::Test2, Walk::Remove),
        ] {
            w.phase = test;
            let mut m = OpMeter::default();
            w.start_together()?;
            let span = w.span();
            walk(w.backend(), &dir, tree, how, &mut m, cancel)?;
            let end = w.finish(span);
            emit(w, test, &m, &end, Some((tf, td)), None)?;
        }
        w.backend().rmdir(&dir)?;
        w.progress(0, &format!("test1/test2 {tf} files {td} dirs"));
    }
    type Simple =
        fn(&dyn Backend, &str, &MetadataParams, &mut Meter, &AtomicBool) -> Result<(), PassError>;
    let simple: [(Operation, Simple); 6] = [
        (Operation::Test3, |b, d, p, m, c| {
            test3(b, d, p.lookups, m, c)
        }),
        (Operation::Test4, |b, d, p, m, c| {
            test4(b, d, p.attr_files, p.attr_rounds, m, c)
        }),
        (Operation::Test6, |b, d, p, m, c| {
            test6(b, d, p.readdir_files, p.readdir_rounds, m, c)
        }),
        (Operation::Test7, |b, d, p, m, c| {
            test7(b, d, p.attr_files, p.link_rounds, m, c)
        }),
        (Operation::Test8, |b, d, p, m, c| {
            test8(b, d, p.attr_files, p.symlink_rounds, m, c)
        }),
        (Operation::Test9, |b, d, p, m, c| {
            test9(b, d, p.statfs_calls, m, c)
        }),
    ];
    for (i, (test, f)) in simple.iter().enumerate() {
        if i == 2 {
            // test5 comes between test4 and test6.
            for &size in &p.file_sizes {
                w.phase = Operation::Test5;
                let mut m = OpMeter::default();
                w.start_together()?;
                let span = w.span();
                let r = test5(w.backend(), &base, size, p.io_size, &mut m, cancel)?;
                let end = w.finish(span);
                emit(
                    w,
                    Operation::Test5,
                    &m,
                    &end,
                    None,
                    Some((size, p.io_size, &r)),
                )?;
                w.progress(
                    size * 3,
                    &format!("test5 {}", crate::size::format_size(size)),
                );
            }
        }
        w.phase = *test;
        // Made before the timer starts and removed after it stops, as cthon04 does.
        let files = prepared_files(*test, p);
        make_files(w.backend(), &base, FNAME, files)?;
        let mut m = OpMeter::default();
        w.start_together()?;
        let span = w.span();
        f(w.backend(), &base, p, &mut m, cancel)?;
        let end = w.finish(span);
        remove_left(w.backend(), &base, FNAME, files)?;
        emit(w, *test, &m, &end, None, None)?;
        w.progress(0, test.name());
    }
    w.phase = Operation::Cleanup;
    super::remove_tree(w.backend(), &base)?;
    Ok(())
}

/// One record per operation type of a test (time: the sum of that type's calls; the
/// test's CPU shared out in proportion), then one `whole-test` record over the test's
/// wall time.
fn emit(
    w: &mut WorkloadRun,
    test: Operation,
    m: &Meter,
    end: &super::SpanEnd,
    tree: Option<(u64, u64)>,
    large: Option<(u64, u64, &Test5Result)>,
) -> Result<(), PassError> {
    let total_ns = m.total_ns().max(1) as f64;
    for s in &m.ops {
        let mut r = w.record(s.op, &end.started_at);
        let seconds = s.ns as f64 / 1e9;
        let share = s.ns as f64 / total_ns;
        let cpu = crate::cpu::CpuUsage {
            user_s: end.cpu.user_s * share,
            sys_s: end.cpu.sys_s * share,
            total_s: end.cpu.total_s * share,
            wall_s: seconds,
            machine: end.cpu.machine.map(|m| crate::machine::MachineTime {
                busy_s: m.busy_s * share,
                steal_s: m.steal_s * share,
            }),
        };
        let ends = super::SpanEnd {
            started_at: end.started_at.clone(),
            seconds,
            cpu,
            server_s: end.server_s * share,
            fuse_s: end.fuse_s * share,
            // Requests to the disk cannot be told apart by operation: not shared out.
            disk: None,
        };
        w.close_span(&mut r, &ends);
        r.figures.test = Some(test.name().into());
        r.figures.count = Some(s.count);
        r.figures.ops_per_s = Some(if seconds > 0.0 {
            s.count as f64 / seconds
        } else {
            0.0
        });
        r.latency = s.latency.summary();
        if let Some((files, dirs)) = tree {
            r.figures.files = Some(files);
            r.figures.dirs = Some(dirs);
        }
        if let Some((size, io_size, t5)) = &large {
            r.file_size = *size;
            r.record_size = *io_size;
            r.bytes = s.bytes;
            r.throughput_kib_s = if seconds > 0.0 {
                s.bytes as f64 / 1024.0 / seconds
            } else {
                0.0
            };
            if s.op == Operation::WriteLarge {
                // Latency of the write calls, not of the one whole-file operation.
                r.latency = t5.write_calls.summary();
            }
            if s.op == Operation::ReadUncached {
                r.cache_purge = Some(t5.purge.clone());
                r.direct = t5.purge == "o_direct";
            }
        }
        w.emit(&r)?;
    }
    // The whole test over its wall time: Connectathon's own figure, and what fio's
    // filecreate/filedelete rates are (the per-type records above divide by the time
    // inside their calls only).
    if large.is_none() {
        let mut r = w.record(Operation::WholeTest, &end.started_at);
        w.close_span(&mut r, end);
        let count: u64 = m.ops.iter().map(|s| s.count).sum();
        r.figures.test = Some(test.name().into());
        r.figures.count = Some(count);
        r.figures.ops_per_s = Some(if end.seconds > 0.0 {
            count as f64 / end.seconds
        } else {
            0.0
        });
        if let Some((files, dirs)) = tree {
            r.figures.files = Some(files);
            r.figures.dirs = Some(dirs);
        }
        w.emit(&r)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::LogFs;

    fn no() -> AtomicBool {
        AtomicBool::new(false)
    }

    #[test]
    fn test1_and_test2_walk_the_tree_in_connectathon_order() {
        let fs = LogFs::default();
        let mut m = OpMeter::default();
        let tree = Tree {
            levels: 2,
            files: 2,
            dirs: 2,
        };
        walk(&fs, "t", tree, Walk::Create, &mut m, &no()).unwrap();
        let log = fs.take();
        assert_eq!(
            &log[..6],
            [
                "open t/file.0",
                "open t/file.1",
                "mkdir t/dir.0",
                "open t/dir.0/file.0",
                "open t/dir.0/file.1",
                "mkdir t/dir.0/dir.0"
            ]
        );
        // levels 2, files 2, dirs 2: 2 + 2*2 files, 2 + 2*2 directories (the last level's
        // directories are made, and stay empty).
        assert_eq!(MetadataParams::tree_counts(2, 2, 2), (6, 6));
        assert_eq!(m.get(Operation::CreateFile).unwrap().count, 6);
        assert_eq!(m.get(Operation::CreateDir).unwrap().count, 6);
        let mut m = OpMeter::default();
        walk(&fs, "t", tree, Walk::Remove, &mut m, &no()).unwrap();
        let log = fs.take();
        assert_eq!(
            &log[..3],
            [
                "unlink t/file.0",
                "unlink t/file.1",
                "unlink t/dir.0/file.0"
            ]
        );
        assert_eq!(m.get(Operation::RemoveFile).unwrap().count, 6);
        assert_eq!(m.get(Operation::RemoveDir).unwrap().count, 6);
        assert!(fs.nodes.lock().unwrap().is_empty());
        // Connectathon's default tree: levels 5, files 5, dirs 2.
        assert_eq!(MetadataParams::tree_counts(5, 5, 2), (155, 62));
    }

    #[test]
    fn test3_to_test9_sequences() {
        let fs = LogFs::default();
        fs.mkdir("d").unwrap();
        fs.take();
        let mut m = OpMeter::default();
        test3(&fs, "d", 3, &mut m, &no()).unwrap();
        assert_eq!(fs.take(), ["stat d", "stat d", "stat d"]);

        // Tests 4, 6 and 7 find their files made (untimed, as cthon04 makes them).
        make_files(&fs, "d", FNAME, 1).unwrap();
        fs.take();
        test4(&fs, "d", 1, 2, &mut m, &no()).unwrap();
        let round = [
            "chmod d/file.0 0",
            "stat d/file.0",
            "chmod d/file.0 666",
            "stat d/file.0",
        ];
        let log = fs.take();
        assert_eq!(&log[0..4], round);
        assert_eq!(&log[4..8], round);
        assert_eq!(log.len(), 8);
        assert_eq!(m.get(Operation::Setattr).unwrap().count, 4);
        remove_left(&fs, "d", FNAME, 1).unwrap();
        fs.take();

        let r = test5(&fs, "d", 20_000, 8192, &mut m, &no()).unwrap();
        assert_eq!(r.purge, "none-needed");
        assert_eq!(
            fs.take(),
            [
                "open d/bigfile",
                "open d/bigfile",
                "purge d/bigfile",
                "open d/bigfile",
                "unlink d/bigfile"
            ]
        );
        assert_eq!(r.write_calls.summary().lat_count, 3);
        assert_eq!(m.get(Operation::WriteLarge).unwrap().bytes, 20_000);

        // test6: the directory shrinks by one file a pass, as cthon04's does.
        make_files(&fs, "d", FNAME, 3).unwrap();
        fs.take();
        let mut m6 = OpMeter::default();
        test6(&fs, "d", 3, 3, &mut m6, &no()).unwrap();
        assert_eq!(
            fs.take(),
            [
                "readdir d",
                "unlink d/file.0",
                "readdir d",
                "unlink d/file.1",
                "readdir d",
                "unlink d/file.2"
            ]
        );
        assert_eq!(m6.get(Operation::Readdir).unwrap().count, 3);
        assert_eq!(m6.get(Operation::Unlink).unwrap().count, 3);

        make_files(&fs, "d", FNAME, 1).unwrap();
        fs.take();
        let mut m7 = OpMeter::default();
        test7(&fs, "d", 1, 1, &mut m7, &no()).unwrap();
        assert_eq!(
            fs.take(),
            [
                "rename d/file.0 d/newfile.0",
                "stat d/file.0",
                "stat d/newfile.0",
                "link d/newfile.0 d/file.0",
                "stat d/newfile.0",
                "stat d/file.0",
                "unlink d/newfile.0",
                "stat d/file.0"
            ]
        );
        assert_eq!(m7.get(Operation::Getattr).unwrap().count, 5);

        test8(&fs, "d", 1, 1, &mut m, &no()).unwrap();
        assert_eq!(
            fs.take(),
            [
                "symlink /this/is/a/symlink0 d/file.0",
                "lstat d/file.0",
                "readlink d/file.0",
                "unlink d/file.0"
            ]
        );

        test9(&fs, "d", 2, &mut m, &no()).unwrap();
        assert_eq!(fs.take(), ["statfs d", "statfs d"]);
    }

    #[test]
    fn cancel_stops_a_test() {
        let fs = LogFs::default();
        let mut m = OpMeter::default();
        let stop = AtomicBool::new(true);
        assert!(matches!(
            walk(
                &fs,
                "t",
                Tree {
                    levels: 1,
                    files: 10,
                    dirs: 0
                },
                Walk::Create,
                &mut m,
                &stop
            ),
            Err(PassError::Interrupted)
        ));
        assert!(fs.take().is_empty());
    }
}
