//! The small-file workload: a generated web-application tree (`tree.rs`) copied onto the
//! target with `rsync -a` semantics, then re-synced unchanged, re-synced after changing a
//! share of the files, and deleted. Each phase is one record: time, files/s, MB/s, client
//! and server CPU, latency per file. With `--with-rsync`, the real `rsync -a` does the same
//! phases from a local copy of the tree, side by side (ops `rsync-*`).

use super::tree::{self, Tree};
use super::{check, OpMeter, WorkloadRun};
use crate::backend::{write_all, Backend, OpenOptions};
use crate::operation::Operation;
use crate::plan::SmallfilesParams;
use crate::workload::iozone::PassError;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// The phases, in order: sharebench's own copier's, and the real rsync's.
pub const PHASES: [(Operation, Operation); 4] = [
    (Operation::Copy, Operation::RsyncCopy),
    (Operation::ResyncNochange, Operation::RsyncResyncNochange),
    (Operation::ResyncModified, Operation::RsyncResyncModified),
    (Operation::Delete, Operation::RsyncDelete),
];

/// The files a modification changes: about `pct` per cent, chosen by position.
pub fn modified(tree: &Tree, pct: u32) -> Vec<usize> {
    (0..tree.files.len())
        .filter(|&i| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) % 100 < u64::from(pct))
        .collect()
}

/// Applies the modification to the tree (as the source side sees it): new bytes, a day later.
pub fn modify(tree: &mut Tree, which: &[usize]) {
    for &i in which {
        let f = &mut tree.files[i];
        f.content = f.content.wrapping_add(1);
        f.mtime_ns += 86_400 * 1_000_000_000;
    }
}

/// What a phase did.
#[derive(Debug, Default)]
pub struct PhaseFigures {
    pub files_examined: u64,
    pub files_written: u64,
    pub bytes: u64,
    /// set_times unsupported by the target: modification times were not kept.
    pub times_unsupported: bool,
}

fn copy_file(
    b: &dyn Backend,
    sync: bool,
    dst: &str,
    f: &tree::TreeFile,
    buf: &mut [u8],
    fig: &mut PhaseFigures,
) -> io::Result<()> {
    let p = format!("{dst}/{}", f.path);
    // As rsync: written under a temporary name beside the file, its mode and times set,
    // then renamed into place (over the old copy on a re-sync).
    let tmp = match p.rsplit_once('/') {
        Some((dir, name)) => format!("{dir}/.{name}.sbtmp"),
        None => format!(".{p}.sbtmp"),
    };
    let data = &mut buf[..f.size as usize];
    tree::fill(data, f.content);
    let how = OpenOptions {
        sync,
        ..OpenOptions::create_new()
    };
    let mut h = b.open(&tmp, how)?;
    write_all(h.as_mut(), data)?;
    h.close()?;
    b.chmod(&tmp, f.mode)?;
    match b.set_times(&tmp, f.mtime_ns, f.mtime_ns) {
        Err(e) if e.kind() == io::ErrorKind::Unsupported => fig.times_unsupported = true,
        other => other?,
    }
    match b.rename(&tmp, &p) {
        // A server that will not rename over a file: the old copy goes first.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            b.unlink(&p)?;
            b.rename(&tmp, &p)?;
        }
        other => other?,
    }
    fig.files_written += 1;
    fig.bytes += f.size;
    Ok(())
}

/// Initial copy: directories (parents first), then every file: create, write, chmod,
/// set times; directory modes and times last, as rsync -a does.
pub fn copy(
    b: &dyn Backend,
    sync: bool,
    dst: &str,
    t: &Tree,
    m: &mut OpMeter<&'static str>,
    cancel: &AtomicBool,
) -> Result<PhaseFigures, PassError> {
    let mut fig = PhaseFigures::default();
    let mut buf = vec![0u8; t.files.iter().map(|f| f.size).max().unwrap_or(0) as usize];
    m.time("mkdir", || b.mkdir(dst))?;
    for d in &t.dirs {
        check(cancel)?;
        m.time("mkdir", || b.mkdir(&format!("{dst}/{d}")))?;
    }
    for f in &t.files {
        check(cancel)?;
        m.time("file", || copy_file(b, sync, dst, f, &mut buf, &mut fig))?;
        fig.files_examined += 1;
    }
    for d in t.dirs.iter().rev() {
        check(cancel)?;
        let p = format!("{dst}/{d}");
        m.time("dir-attrs", || {
            b.chmod(&p, 0o755)?;
            match b.set_times(&p, 1_511_913_600_000_000_000, 1_511_913_600_000_000_000) {
                Err(e) if e.kind() == io::ErrorKind::Unsupported => Ok(()),
                other => other,
            }
        })?;
    }
    Ok(fig)
}

/// Re-sync: lstat every directory and file (rsync's quick check: size and mtime) and copy
/// again the files that differ.
/// `compare_times` is false when the target could not keep times (size only, then).
pub fn resync(
    b: &dyn Backend,
    sync: bool,
    dst: &str,
    t: &Tree,
    compare_times: bool,
    m: &mut OpMeter<&'static str>,
    cancel: &AtomicBool,
) -> Result<PhaseFigures, PassError> {
    let mut fig = PhaseFigures::default();
    let mut buf = Vec::new();
    for d in &t.dirs {
        check(cancel)?;
        m.time("stat", || b.lstat(&format!("{dst}/{d}")))?;
    }
    for f in &t.files {
        check(cancel)?;
        let p = format!("{dst}/{}", f.path);
        let st = m.time("stat", || b.lstat(&p))?;
        fig.files_examined += 1;
        let differs = st.size != f.size || compare_times && st.mtime_ns != f.mtime_ns;
        if b.stores_data() && differs {
            if buf.len() < f.size as usize {
                buf.resize(f.size as usize, 0);
            }
            m.time("file", || copy_file(b, sync, dst, f, &mut buf, &mut fig))?;
        }
    }
    Ok(fig)
}

/// Delete: unlink every file, then remove the directories, children first.
pub fn delete(
    b: &dyn Backend,
    dst: &str,
    t: &Tree,
    m: &mut OpMeter<&'static str>,
    cancel: &AtomicBool,
) -> Result<PhaseFigures, PassError> {
    let mut fig = PhaseFigures::default();
    for f in &t.files {
        check(cancel)?;
        m.time("unlink", || b.unlink(&format!("{dst}/{}", f.path)))?;
        fig.files_examined += 1;
    }
    for d in t.dirs.iter().rev() {
        check(cancel)?;
        m.time("rmdir", || b.rmdir(&format!("{dst}/{d}")))?;
    }
    m.time("rmdir", || b.rmdir(dst))?;
    Ok(fig)
}

/// A local copy of the tree for rsync to read, removed when dropped (also on Ctrl-C).
struct LocalSource {
    dir: PathBuf,
}

impl LocalSource {
    fn create(run_id: &str, rep: u32, t: &Tree) -> io::Result<LocalSource> {
        let parent = if Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let dir = parent.join(format!("sharebench-src-{run_id}-r{rep}"));
        std::fs::create_dir(&dir)?;
        let src = LocalSource { dir };
        std::fs::create_dir(src.tree())?;
        std::fs::create_dir(src.empty())?;
        src.write(t, None)?;
        Ok(src)
    }

    fn tree(&self) -> PathBuf {
        self.dir.join("tree")
    }

    fn empty(&self) -> PathBuf {
        self.dir.join("empty")
    }

    /// Writes the tree (or only the files `only` names) with modes and times.
    fn write(&self, t: &Tree, only: Option<&[usize]>) -> io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let root = self.tree();
        if only.is_none() {
            for d in &t.dirs {
                std::fs::create_dir(root.join(d))?;
            }
        }
        let all: Vec<usize> = (0..t.files.len()).collect();
        let mut buf = Vec::new();
        for &i in only.unwrap_or(&all) {
            let f = &t.files[i];
            buf.resize(f.size as usize, 0);
            tree::fill(&mut buf, f.content);
            let p = root.join(&f.path);
            std::fs::write(&p, &buf)?;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(f.mode))?;
            let when = std::time::UNIX_EPOCH + Duration::from_nanos(f.mtime_ns as u64);
            std::fs::File::options()
                .write(true)
                .open(&p)?
                .set_modified(when)?;
        }
        Ok(())
    }
}

impl Drop for LocalSource {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// CPU seconds of reaped children so far (user, system).
fn children_cpu() -> (f64, f64) {
    use nix::sys::resource::{getrusage, UsageWho};
    match getrusage(UsageWho::RUSAGE_CHILDREN) {
        Ok(u) => {
            let s = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
            (s(u.user_time()), s(u.system_time()))
        }
        Err(_) => (0.0, 0.0),
    }
}

/// Runs rsync to completion, killing it on Ctrl-C.
fn run_rsync(args: &[&Path], delete: bool, cancel: &AtomicBool) -> Result<(), PassError> {
    let mut cmd = Command::new("rsync");
    cmd.arg("-a");
    if delete {
        cmd.arg("--delete");
    }
    for a in args {
        cmd.arg(a);
    }
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| io::Error::new(e.kind(), format!("cannot run rsync: {e}")))?;
    loop {
        if let Some(status) = child.try_wait()? {
            if status.success() {
                return Ok(());
            }
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = io::Read::read_to_string(&mut e, &mut err);
            }
            return Err(PassError::Io(io::Error::other(format!(
                "rsync failed ({status}): {}",
                err.lines().next().unwrap_or("")
            ))));
        }
        if check(cancel).is_err() {
            let _ = child.kill();
            let _ = child.wait();
            return Err(PassError::Interrupted);
        }
        std::thread::sleep(Duration::from_micros(500));
    }
}

/// Runs the phases once (one repetition on one target) and emits their records.
pub fn run(w: &mut WorkloadRun, p: &SmallfilesParams) -> Result<(), PassError> {
    let mut t = tree::generate(p.tree_seed);
    let base = w.target.workdir.file(&format!("sf-r{}", w.rep));
    let dst = format!("{base}/tree");
    let cancel = w.cancel;
    w.phase = Operation::Setup;
    w.backend().mkdir(&base)?;
    let info = w.backend().info();
    let rsync = if p.with_rsync {
        let root = match (&info.local_root, info.backend.as_str()) {
            (Some(r), "posix") => PathBuf::from(r),
            _ => {
                return Err(PassError::Io(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "--with-rsync needs a directory target (rsync cannot reach this one)",
                )))
            }
        };
        let src = LocalSource::create(w.run_id, w.rep, &t)?;
        Some((src, root.join(&base).join("rsync")))
    } else {
        None
    };
    let which = modified(&t, p.modify_pct);
    let mut times_unsupported = false;
    for (phase, rsync_phase) in PHASES {
        if phase == Operation::ResyncModified {
            modify(&mut t, &which);
            if let Some((src, _)) = &rsync {
                src.write(&t, Some(&which))?;
            }
        }
        // The built-in copier.
        w.phase = phase;
        check(cancel)?;
        let mut m = OpMeter::default();
        w.start_together()?;
        let span = w.span();
        let b = w.backend();
        let sync = w.plan.timing.sync;
        let fig = match phase {
            Operation::Copy => copy(b, sync, &dst, &t, &mut m, cancel)?,
            Operation::Delete => delete(b, &dst, &t, &mut m, cancel)?,
            _ => resync(b, sync, &dst, &t, !times_unsupported, &mut m, cancel)?,
        };
        let end = w.finish(span);
        times_unsupported |= fig.times_unsupported;
        let mut r = w.record(phase, &end.started_at);
        w.close_span(&mut r, &end);
        fill(&mut r, &t, &fig, end.seconds);
        let lat = m
            .get("file")
            .or_else(|| m.get("stat"))
            .or_else(|| m.get("unlink"));
        if let Some(s) = lat {
            r.latency = s.latency.summary();
        }
        if fig.times_unsupported {
            r.figures.note = Some("modification times not kept: the target cannot set them".into());
        }
        w.emit(&r)?;
        w.progress(fig.bytes, phase.name());

        // The real rsync, side by side.
        if let Some((src, rdst)) = &rsync {
            w.phase = rsync_phase;
            check(cancel)?;
            let (u0, s0) = children_cpu();
            w.start_together()?;
            let span = w.span();
            let from = format!(
                "{}/",
                if phase == Operation::Delete {
                    src.empty()
                } else {
                    src.tree()
                }
                .display()
            );
            run_rsync(
                &[Path::new(&from), rdst],
                phase == Operation::Delete,
                cancel,
            )?;
            let mut end = w.finish(span);
            let (u1, s1) = children_cpu();
            end.cpu.user_s += u1 - u0;
            end.cpu.sys_s += s1 - s0;
            end.cpu.total_s += (u1 - u0) + (s1 - s0);
            let mut r = w.record(rsync_phase, &end.started_at);
            w.close_span(&mut r, &end);
            let fig = PhaseFigures {
                files_examined: tree::FILES,
                files_written: match phase {
                    Operation::Copy => tree::FILES,
                    Operation::ResyncModified => which.len() as u64,
                    _ => 0,
                },
                bytes: match phase {
                    Operation::Copy => t.total_bytes(),
                    Operation::ResyncModified => which.iter().map(|&i| t.files[i].size).sum(),
                    _ => 0,
                },
                times_unsupported: false,
            };
            fill(&mut r, &t, &fig, end.seconds);
            w.emit(&r)?;
            if phase == Operation::Delete {
                let _ = std::fs::remove_dir(rdst);
            }
        }
    }
    w.phase = Operation::Cleanup;
    super::remove_tree(w.backend(), &base)?;
    Ok(())
}

fn fill(r: &mut crate::record::Record, t: &Tree, fig: &PhaseFigures, seconds: f64) {
    r.bytes = fig.bytes;
    r.throughput_kib_s = if seconds > 0.0 {
        fig.bytes as f64 / 1024.0 / seconds
    } else {
        0.0
    };
    r.figures.count = Some(fig.files_written);
    r.figures.files = Some(fig.files_examined);
    r.figures.dirs = Some(t.dirs.len() as u64);
    r.figures.ops_per_s = Some(if seconds > 0.0 {
        fig.files_examined as f64 / seconds
    } else {
        0.0
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::LogFs;

    #[test]
    fn phases_issue_rsync_like_operations() {
        let fs = LogFs::default();
        let mut t = tree::generate(3);
        let no = AtomicBool::new(false);
        let mut m = OpMeter::default();
        let fig = copy(&fs, false, "d", &t, &mut m, &no).unwrap();
        assert_eq!(fig.files_written, tree::FILES);
        assert_eq!(fig.bytes, tree::TOTAL_BYTES);
        let log = fs.take();
        // As rsync: written under a temporary name beside it, then renamed into place.
        let f0 = &t.files[0].path;
        let tmp = match f0.rsplit_once('/') {
            Some((dir, name)) => format!("d/{dir}/.{name}.sbtmp"),
            None => format!("d/.{f0}.sbtmp"),
        };
        let i = log
            .iter()
            .position(|l| l == &format!("open {tmp}"))
            .unwrap_or_else(|| panic!("no open of {tmp}: {:?}", &log[..8]));
        assert_eq!(log[i + 1], format!("chmod {tmp} 644"));
        assert!(log[i + 2..]
            .iter()
            .take(3)
            .any(|l| l == &format!("rename {tmp} d/{f0}")));
        assert_eq!(
            log.iter().filter(|l| l.starts_with("mkdir")).count(),
            t.dirs.len() + 1
        );

        let fig = resync(&fs, false, "d", &t, true, &mut m, &no).unwrap();
        assert_eq!(fig.files_examined, tree::FILES);
        // An rsync check is an lstat of every file, as rsync makes it.
        assert!(fs.take().iter().all(|l| l.starts_with("lstat")));

        let which = modified(&t, 10);
        assert!((150..=210).contains(&which.len()), "{}", which.len());
        modify(&mut t, &which);
        let fig = delete(&fs, "d", &t, &mut m, &no).unwrap();
        assert_eq!(fig.files_examined, tree::FILES);
        assert_eq!(fs.take().last().unwrap(), "rmdir d");
    }
}
