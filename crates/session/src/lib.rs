//! sharebench-session: one measured run from start to end, shared by `run`, `iozone` and
//! the study runner: the results directory, the manifest, the targets and their working
//! directories, Ctrl-C, progress, the engine, the CSV, and clean-up. Front ends build a
//! plan and print; this does the rest. `error` is the one-line failure every front end
//! exits with; `placement` pins CPUs; `awake` keeps idle CPUs polling; `progress` is the
//! bar. Not: parsing a command line, nor printing results (the CLI does both).

pub mod awake;
pub mod error;
pub mod placement;
pub mod progress;
mod signal_thread;

use crate::error::{CliError, CliResult};
use crate::progress::Progress;
use sharebench_core::backend::{Backend, PurgeRequest};
use sharebench_core::engine;
use sharebench_core::manifest::{Host, Manifest, RunOutcome, TargetManifest};
use sharebench_core::plan::{CachePolicy, Plan, Workload};
use sharebench_core::ranks::{Go, Ranks, Ready, Solo};
use sharebench_core::record::{self, Record, RecordWriter, Status};
use sharebench_core::run::{Observer, Place, RunSummary, Target};
use sharebench_core::safe_dir::SafeDir;
use sharebench_core::server_cpu::ProcessSet;
use sharebench_core::size::format_amount;
use sharebench_core::workdir::Workdir;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// The file that marks a results directory as sharebench's.
pub const RESULTS_MARKER: &str = ".sharebench-results";

/// Set by Ctrl-C (or SIGTERM); the engine stops within one record.
static CANCEL: AtomicBool = AtomicBool::new(false);
static HANDLER: OnceLock<()> = OnceLock::new();
/// The working directories of the session under way, each with the command that removes
/// it, for the message of a second Ctrl-C (which leaves them).
static LEFT_BEHIND: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Whether Ctrl-C (or SIGTERM) has been received, for front ends that run several sessions.
pub fn cancelled() -> bool {
    CANCEL.load(Ordering::SeqCst)
}

/// How long after an interrupt another one is the same: a signal sent to the whole process
/// group (coreutils' `timeout`, Ctrl-C in a shell that also signals the group) arrives more
/// than once, and must not count as the user asking twice.
const SAME_INTERRUPT: std::time::Duration = std::time::Duration::from_secs(1);

/// Catches Ctrl-C, SIGTERM and SIGHUP from now on (once per process): the first sets the
/// flag the engine and `cancelled` read; a second, more than a second later, exits at once.
pub fn install_ctrlc() {
    static FIRST: OnceLock<std::time::Instant> = OnceLock::new();
    HANDLER.get_or_init(|| {
        use nix::sys::signal::Signal::{SIGHUP, SIGINT, SIGTERM};
        let _ = signal_thread::spawn(&[SIGINT, SIGTERM, SIGHUP], || {
            let first = *FIRST.get_or_init(std::time::Instant::now);
            if first.elapsed() < SAME_INTERRUPT {
                CANCEL.store(true, Ordering::SeqCst);
                return;
            }
            if CANCEL.swap(true, Ordering::SeqCst) {
                // Never leave a file system unmounted: a remount under way finishes first
                // (it is bounded: three mount attempts a second apart).
                while sharebench_backends::remount::in_progress() {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                // Nor a working directory without its marker, which `clean` could not remove.
                sharebench_core::workdir::wait_until_marked(std::time::Duration::from_secs(2));
                // A second Ctrl-C while something hangs (a dead server): leave now.
                let left = LEFT_BEHIND
                    .try_lock()
                    .map(|l| l.join("; "))
                    .unwrap_or_default();
                let left = if left.is_empty() {
                    String::new()
                } else {
                    format!("; may be left behind: {left}")
                };
                let _ = writeln!(
                    io::stderr(),
                    "sharebench: interrupted again, exiting without clean-up{left}"
                );
                std::process::exit(130);
            }
        });
    });
}

/// What a front end asks for.
pub struct SessionSpec<'a> {
    pub plan: &'a Plan,
    /// Targets as the user named them.
    pub targets: &'a [String],
    /// The names the records give the targets, one each (a study's roles); empty: the
    /// targets' own.
    pub names: &'a [String],
    pub out: Option<PathBuf>,
    pub command_line: Vec<String>,
    /// Records of an earlier, interrupted attempt at the same plan (the tests in
    /// `plan.done`), written first so the results directory holds the whole run.
    pub carried: Vec<Record>,
    /// The other clients of a multi-client run (started by mpirun); `None` for one client.
    pub cluster: Option<&'a dyn Cluster>,
    /// IOzone's `-U MOUNT`: the mount point the user says the target's file system is
    /// mounted on; a target on any other mount is refused.
    pub remount_at: Option<&'a Path>,
    /// No progress on stderr (`--quiet`).
    pub quiet: bool,
    /// IOzone's `-F` in several directories: the directory of each worker's file, worker
    /// by worker, for the one target (which is the first's). Empty: every worker works in
    /// the target.
    pub worker_dirs: &'a [String],
    /// Per target, in order: the user's command that prints its server's CPU seconds so
    /// far, for a server elsewhere (a study's `--hook server-cpu`); empty: none.
    pub server_cpu: &'a [Option<String>],
}

/// The ranks of a multi-client run, as a session needs them: every rank runs the same
/// session, on its own files; rank 0 writes the results. Every method is collective.
pub trait Cluster: Ranks {
    fn host(&self) -> &str;
    /// Rank 0's run id, on every rank.
    fn share(&self, run_id: &str) -> String;
    /// Every rank's host, in rank order.
    fn hosts(&self, mine: &Host) -> io::Result<Vec<Host>>;
}

/// What a finished (or stopped) session leaves.
pub struct SessionResult {
    /// Whether this process wrote the results (always, but on ranks other than 0).
    pub writes: bool,
    pub out_dir: PathBuf,
    pub summary: RunSummary,
    pub records: Vec<Record>,
}

/// `backend` behind a client page cache of `bytes` (`--client-cache`); refused for a
/// directory, whose kernel or FUSE client has a cache of its own.
fn with_client_cache(
    name: &str,
    backend: Arc<dyn Backend>,
    bytes: Option<u64>,
) -> Result<Arc<dyn Backend>, String> {
    let Some(bytes) = bytes else {
        return Ok(backend);
    };
    match backend.info().backend.as_str() {
        "posix" => {
            return Err(format!(
                "--client-cache is for the native clients (nfs://, smb://); '{name}' is a directory, whose kernel or FUSE client caches on its own"
            ))
        }
        "null" => {
            return Err(format!(
                "--client-cache is for the native clients (nfs://, smb://); '{name}' keeps no data, so there is nothing to cache"
            ))
        }
        _ => {}
    }
    Ok(Arc::new(
        sharebench_backends::client_cache::CachedBackend::new(backend, bytes),
    ))
}

/// Creates the results directory: a new one, or an existing empty one. Refuses a
/// directory that already holds anything, ours or someone else's: nothing is overwritten.
/// It is held open from here on, so nothing written there follows a planted symlink.
pub fn create_out_dir(out: Option<PathBuf>, run_id: &str) -> CliResult<SafeDir> {
    let path = results_path(out.as_deref(), run_id);
    let shown = path.display();
    let dir = SafeDir::create(&path).map_err(|e| {
        CliError::usage(match e.kind() {
            io::ErrorKind::AlreadyExists | io::ErrorKind::NotADirectory => {
                format!("--out {shown}: exists and is not a directory")
            }
            _ => format!("cannot create --out {shown}: {e}"),
        })
    })?;
    let empty = dir
        .is_empty()
        .map_err(|e| CliError::usage(format!("--out {shown}: {e}")))?;
    if !empty {
        let whose = if dir.contains(RESULTS_MARKER) {
            "earlier sharebench results"
        } else {
            "files that are not sharebench's"
        };
        return Err(CliError::usage(format!(
            "--out {shown} already holds {whose}; give a new or empty directory"
        )));
    }
    let marker = format!("sharebench results of run {run_id}\n");
    dir.create_new(RESULTS_MARKER, 0o644)
        .and_then(|mut f| f.write_all(marker.as_bytes()))
        .map_err(|e| CliError::usage(format!("cannot write in --out {shown}: {e}")))?;
    Ok(dir)
}

/// A run id: UTC time, process id and a per-process count, unique on one machine even
/// when one process runs several sessions within a second.
pub fn new_run_id() -> String {
    static COUNT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    let base = format!(
        "{}-{}",
        chrono::Utc::now().format("%Y%m%dT%H%M%SZ"),
        std::process::id()
    );
    if n == 0 {
        base
    } else {
        format!("{base}-{n}")
    }
}

fn describe_workdir_error(target: &str, e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::ReadOnlyFilesystem => {
            format!("target '{target}' is on a read-only file system")
        }
        io::ErrorKind::PermissionDenied => format!("target '{target}' is not writable"),
        io::ErrorKind::StorageFull => format!("target '{target}' has no space left"),
        _ => format!("target '{target}': cannot create a working directory: {e}"),
    }
}

/// Where a target named by the user really is: for `lab:NAME`, the lab's URL, the client
/// namespace to run in, the environment its backend reads, and the servers' process groups.
struct Located {
    url: String,
    netns: Option<String>,
    env: Vec<(String, String)>,
    servers: ProcessSet,
    /// The FUSE daemon of a FUSE-mounted lab target (its CPU is client CPU).
    fuse: ProcessSet,
    /// The server's own view of the target's files, where the lab has one.
    server_path: Option<std::path::PathBuf>,
    /// The lab's block devices under the target (their writes and flushes are recorded).
    disks: Vec<String>,
}

fn locate(name: &str) -> Result<Located, String> {
    if !name.starts_with("lab:") {
        return Ok(Located {
            url: name.to_string(),
            netns: None,
            env: Vec::new(),
            servers: ProcessSet::default(),
            fuse: ProcessSet::default(),
            server_path: None,
            disks: Vec::new(),
        });
    }
    let t = sharebench_lab::resolve(name).map_err(|e| format!("{e:#}"))?;
    let servers = ProcessSet::of_namespaces(t.server_netns.iter().map(String::as_str));
    // A FUSE-mounted lab target is a local directory: no namespace to enter. A rank of
    // `lab mpirun` already runs in its own client's namespace, and stays there.
    let netns = Some(t.client_netns)
        .filter(|n| !n.is_empty())
        .filter(|_| sharebench_backends::netguard::lab_netns().is_none());
    Ok(Located {
        url: t.url,
        netns,
        env: t.env,
        servers,
        fuse: ProcessSet::of_pids(&t.client_pids),
        server_path: t.server_path,
        disks: t.disks,
    })
}

/// What a target's location comes to once spelling is set aside: a directory's device and
/// inode (`rt`, `rt/`, `./rt` and a bind mount of it are one), a URL without trailing slashes.
fn normalised(url: &str) -> String {
    let path = url.strip_prefix("file://").unwrap_or(url);
    if !url.contains("://") || url.starts_with("file://") {
        // One directory reached by two paths (a bind mount, a symlinked parent) is one
        // inode: its device and inode number are what make it the same.
        if let Ok(m) = std::fs::metadata(path) {
            use std::os::unix::fs::MetadataExt;
            return format!("one directory: device {}, inode {}", m.dev(), m.ino());
        }
    }
    url.trim_end_matches('/').to_string()
}

/// Refuses a target given twice: it would be measured twice under one name, and the
/// spread between the two passed off as a repetition's.
fn refuse_duplicates(names: &[String], located: &[Located]) -> Result<(), String> {
    let keys: Vec<String> = located.iter().map(|l| normalised(&l.url)).collect();
    for (i, key) in keys.iter().enumerate() {
        if let Some(j) = keys[..i].iter().position(|k| k == key) {
            let same = if names[i] == names[j] {
                format!("target '{}' is given twice", names[i])
            } else {
                format!(
                    "targets '{}' and '{}' are the same ({key})",
                    names[j], names[i]
                )
            };
            return Err(format!("{same}; give each target once"));
        }
    }
    Ok(())
}

/// Moves this process into a lab client's network namespace. Called before any thread
/// starts, so every worker thread is born inside it.
fn enter_netns(netns: &str) -> Result<(), String> {
    let path = format!("/run/netns/{netns}");
    let fd = std::fs::File::open(&path).map_err(|e| format!("cannot open {path}: {e}"))?;
    nix::sched::setns(&fd, nix::sched::CloneFlags::CLONE_NEWNET)
        .map_err(|e| format!("cannot enter {netns}: {e}"))
}

/// Opens every target and creates its working directory; on any failure, removes the
/// working directories already made and reports the first problem.
fn prepare_targets(
    spec: &SessionSpec,
    files_prefix: &str,
    results: &Path,
) -> CliResult<Vec<Target>> {
    let names = if spec.names.is_empty() {
        spec.targets
    } else {
        spec.names
    };
    let mut located: Vec<Located> = spec
        .targets
        .iter()
        .map(|n| locate(n))
        .collect::<Result<_, _>>()
        .map_err(CliError::usage)?;
    for (l, command) in located.iter_mut().zip(spec.server_cpu) {
        if let Some(c) = command.as_deref().filter(|_| l.servers.is_empty()) {
            l.servers = ProcessSet::of_command(c);
        }
    }
    refuse_duplicates(names, &located).map_err(CliError::usage)?;
    let mut spaces: Vec<&str> = located.iter().filter_map(|l| l.netns.as_deref()).collect();
    spaces.dedup();
    match spaces.as_slice() {
        [] => {}
        [one] => enter_netns(one).map_err(CliError::usage)?,
        _ => {
            return Err(CliError::usage(
                "lab targets of different client namespaces cannot run together",
            ))
        }
    }
    for l in &located {
        for (k, v) in &l.env {
            std::env::set_var(k, v);
        }
    }
    let mut ready: Vec<Target> = Vec::new();
    // One working directory per target: two targets may be the same storage reached two
    // ways (a share and the DFS link to it), and must not collide.
    for (i, ((name, l), location)) in names.iter().zip(located).zip(spec.targets).enumerate() {
        let prepared = sharebench_backends::open_target(&l.url).and_then(|backend| {
            let backend = with_client_cache(name, backend, spec.plan.client_cache)?;
            check_purge(name, backend.as_ref(), spec)?;
            // The load workload keeps its requests in flight on threads of its own (lanes),
            // not in the client's queue.
            if !matches!(spec.plan.workload, Workload::Load(_)) {
                backend
                    .check_iodepth(spec.plan.iodepth)
                    .map_err(|e| format!("target '{name}': {e}"))?;
            }
            check_space(name, location, backend.as_ref(), spec.plan)?;
            warn_of_debris(name, backend.as_ref());
            if let Some(w) = backend.shared_with_others() {
                // rsync is another program, which reaches its destination by path.
                if matches!(&spec.plan.workload, Workload::Smallfiles(s) if s.with_rsync) {
                    return Err(format!(
                        "--with-rsync: rsync writes by path, which another user could redirect here; {w}"
                    ));
                }
                let _ = writeln!(io::stderr(), "sharebench: warning: {w}");
            }
            let id = format!("{files_prefix}-t{i}");
            let workdir = Workdir::create_for(backend.as_ref(), &id, Some(results))
                .map_err(|e| describe_workdir_error(name, &e))?;
            Ok(Target {
                name: name.clone(),
                backend,
                workdir,
                servers: l.servers,
                fuse: l.fuse,
                server_view: l
                    .server_path
                    .as_deref()
                    .and_then(|p| sharebench_backends::open_target(&p.to_string_lossy()).ok()),
                disks: l.disks,
                places: Vec::new(),
            })
        });
        match prepared {
            Ok(t) => ready.push(t),
            Err(msg) => {
                remove_workdirs(&ready, &mut |_| {});
                return Err(CliError::usage(msg));
            }
        }
    }
    if let Err(msg) = spread_workers(spec, &mut ready, files_prefix, results) {
        remove_workdirs(&ready, &mut |_| {});
        return Err(CliError::usage(msg));
    }
    Ok(ready)
}

/// Gives each worker whose directory (`spec.worker_dirs`) is not the target's a working
/// directory of its own there, one per directory, checked as a target is.
fn spread_workers(
    spec: &SessionSpec,
    ready: &mut [Target],
    files_prefix: &str,
    results: &Path,
) -> Result<(), String> {
    if spec.worker_dirs.is_empty() {
        return Ok(());
    }
    let [target] = ready else {
        return Err("workers in several directories need exactly one target".into());
    };
    let same = |a: &str, b: &str| match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    let mut places: Vec<(String, Place)> = Vec::new();
    for (w, dir) in spec.worker_dirs.iter().enumerate() {
        if same(dir, &spec.targets[0]) {
            target.places.push(target.own_place());
            continue;
        }
        if let Some((_, p)) = places.iter().find(|(d, _)| same(d, dir)) {
            target.places.push(p.clone());
            continue;
        }
        let backend = sharebench_backends::open_target(dir)
            .map_err(|e| format!("worker {}'s directory: {e}", w + 1))?;
        if spec.plan.cache == CachePolicy::Remount
            && backend.info().mount_point != target.backend.info().mount_point
        {
            return Err(format!(
                "{dir} is on another file system than {}: one remount (-U) cannot empty both caches",
                spec.targets[0]
            ));
        }
        check_purge(dir, backend.as_ref(), spec)?;
        check_space(dir, dir, backend.as_ref(), spec.plan)?;
        let id = format!("{files_prefix}-t0-w{w}");
        let workdir = Workdir::create_for(backend.as_ref(), &id, Some(results))
            .map_err(|e| describe_workdir_error(dir, &e))?;
        let place = Place { backend, workdir };
        places.push((dir.clone(), place.clone()));
        target.places.push(place);
    }
    Ok(())
}

/// Refuses, before any I/O, a target without the inodes or space the plan's workload
/// needs (the engine checks again in each target's working directory, and records why).
/// Lab targets are left to that check: their images are sized by `lab up`.
fn check_space(
    name: &str,
    location: &str,
    backend: &dyn Backend,
    plan: &Plan,
) -> Result<(), String> {
    let Some((inodes, bytes)) = plan.needs() else {
        return Ok(());
    };
    if location.starts_with("lab:") {
        return Ok(());
    }
    sharebench_core::workload::check_space(backend, "", inodes, bytes)
        .map_err(|e| format!("target '{name}': {} workload {e}", plan.workload.name()))
}

/// Says, in one line, that a target holds working directories of runs that were killed
/// before they could remove them, and which command removes them.
fn warn_of_debris(name: &str, backend: &dyn Backend) {
    let Ok(found) = sharebench_core::workdir::find(backend) else {
        return;
    };
    let left: Vec<String> = found
        .iter()
        .filter(|f| f.is_abandoned())
        .map(|f| f.workdir.path.clone())
        .collect();
    if !left.is_empty() {
        let _ = writeln!(
            io::stderr(),
            "sharebench: warning: {name} holds {} working director{} of killed runs ({}); remove with: sharebench clean {name}",
            left.len(),
            if left.len() == 1 { "y" } else { "ies" },
            left.join(", ")
        );
    }
}

/// Where a run's results go: `--out`, else `sharebench-results/<run id>`.
fn results_path(out: Option<&Path>, run_id: &str) -> PathBuf {
    out.map(Path::to_path_buf)
        .unwrap_or_else(|| Path::new("sharebench-results").join(run_id))
}

/// Refuses, before any I/O, a cache purge the target cannot do without harm (a remount
/// that would lose or release something), and IOzone's -U naming another mount than the
/// one the target is on.
fn check_purge(name: &str, backend: &dyn Backend, spec: &SessionSpec) -> Result<(), String> {
    if let Some(at) = spec.remount_at {
        let mount_point = backend.info().mount_point;
        let given = std::fs::canonicalize(at).unwrap_or_else(|_| at.to_path_buf());
        if mount_point.as_deref().map(Path::new) != Some(given.as_path()) {
            return Err(format!(
                "-U {}: {name} is {}, not on that mount; nothing was unmounted",
                at.display(),
                mount_point.map_or("not on a mounted file system".to_string(), |m| format!(
                    "on the file system mounted at {m}"
                ))
            ));
        }
    }
    match spec.plan.cache {
        CachePolicy::Remount => backend.check_purge(PurgeRequest::Remount),
        CachePolicy::Drop => backend.check_purge(PurgeRequest::Drop),
        CachePolicy::Keep | CachePolicy::Direct => Ok(()),
    }
}

fn remove_workdirs(targets: &[Target], warn: &mut dyn FnMut(String)) {
    for t in targets {
        if let Err(e) = t.workdir.remove(t.backend.as_ref()) {
            warn(format!(
                "{}: could not remove working directory {}: {e}",
                t.name, t.workdir.path
            ));
        }
        for p in own_places(t) {
            if let Err(e) = p.workdir.remove(p.backend.as_ref()) {
                warn(format!(
                    "{}: could not remove working directory {}: {e}",
                    t.name,
                    where_is(p)
                ));
            }
        }
    }
}

/// Where a place's working directory is, as a path on this machine.
fn where_is(p: &Place) -> String {
    let root = p.backend.info().local_root.unwrap_or_default();
    format!("{root}/{}", p.workdir.path)
}

/// The working directories a target's workers have besides the target's own, each once.
fn own_places(t: &Target) -> Vec<&Place> {
    let mut seen: Vec<&Place> = Vec::new();
    for p in &t.places {
        if p.workdir.path != t.workdir.path
            && !seen.iter().any(|s| s.workdir.path == p.workdir.path)
        {
            seen.push(p);
        }
    }
    seen
}

struct SessionObserver<'a> {
    /// `None` on ranks other than 0, which write nothing.
    writer: Option<RecordWriter>,
    progress: &'a Progress,
    on_record: &'a mut dyn FnMut(&Record),
    records: Vec<Record>,
}

impl Observer for SessionObserver<'_> {
    fn record(&mut self, record: &Record) -> io::Result<()> {
        if let Some(w) = &mut self.writer {
            w.append(record)?;
        }
        // Live output (IOzone's rows) is printed with the progress bar out of the way.
        let on_record = &mut self.on_record;
        self.progress.suspend(|| on_record(record));
        self.records.push(record.clone());
        Ok(())
    }
    fn progress(&mut self, planned: u64, what: &str) {
        self.progress.advance(planned, what);
    }
    fn warn(&mut self, message: &str) {
        self.progress
            .println(&format!("sharebench: warning: {message}"));
    }
}

fn write_manifest(dir: &SafeDir, m: &Manifest) -> io::Result<()> {
    let text = serde_json::to_string_pretty(m).map_err(io::Error::other)? + "\n";
    dir.replace("run.json", text.as_bytes(), 0o644)
}

/// Refuses, before anything is opened, a plan or target list that cannot run.
fn check_spec(spec: &SessionSpec) -> CliResult<()> {
    spec.plan.validate().map_err(CliError::usage)?;
    if spec.targets.is_empty() {
        return Err(CliError::usage("no target given (a directory, or null://)"));
    }
    if !spec.names.is_empty() && spec.names.len() != spec.targets.len() {
        return Err(CliError::usage("one name for each target"));
    }
    if let Some(cpus) = &spec.plan.cpus {
        crate::placement::pin(cpus).map_err(CliError::usage)?;
    }
    if spec.cluster.is_some() && spec.plan.auto_reps.is_some() {
        return Err(CliError::usage(
            "--reps auto is for one client: give a multi-client run --reps N",
        ));
    }
    check_memory(spec.plan.buffer_bytes(), available_memory()).map_err(CliError::usage)
}

/// Refuses buffers that would take more than half the memory available now (the rest is
/// for the page cache the measurement needs, and everything else on the machine).
fn check_memory(buffers: u64, available: Option<u64>) -> Result<(), String> {
    let Some(available) = available else {
        return Ok(());
    };
    if buffers > available / 2 {
        return Err(format!(
            "the buffers would take {} (--threads x --iodepth x the largest record size), more than half of the {} of memory available",
            format_amount(buffers),
            format_amount(available)
        ));
    }
    Ok(())
}

/// MemAvailable of /proc/meminfo, in bytes; `None` where it cannot be read.
fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    sharebench_core::manifest::meminfo_bytes(&meminfo, "MemAvailable")
}

/// The run's id and the prefix of its working directories: one run id for all ranks of a
/// multi-client run, each rank's files named by its rank and host.
fn run_names(cluster: Option<&dyn Cluster>) -> (String, String) {
    let run_id = new_run_id();
    let Some(c) = cluster else {
        return (run_id.clone(), run_id);
    };
    let run_id = c.share(&run_id);
    let host: String = c
        .host()
        .chars()
        .map(|ch| {
            if ch.is_ascii_alphanumeric() || ch == '-' {
                ch
            } else {
                '_'
            }
        })
        .collect();
    let prefix = format!("{run_id}-r{}-{host}", c.rank());
    (run_id, prefix)
}

/// The order a run takes its targets in, as indices into the list given: a shuffle drawn
/// from the run id (shared by every rank of a multi-client run, and hashed the same way
/// by every build). The run sets its targets up in this order and its engine starts its
/// first unit with the first of them. Why: of two identical targets, the one a run takes
/// first came out the less steady, whichever it was (docs/methods/statistics.md,
/// "Steadiness over runs"); drawn anew for each run, that falls on each target, and each
/// pair's order, in about as many runs, as noise.
fn target_order(targets: usize, run_id: &str) -> Vec<usize> {
    // FNV-1a: fixed, unlike std's hasher, so every rank's build agrees.
    let seed = run_id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    shuffled(targets, seed)
}

/// `0..n` in an order drawn from `seed`.
fn shuffled(n: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    fastrand::Rng::with_seed(seed).shuffle(&mut order);
    order
}

/// A session's per-target lists, taken in the run's order (`target_order`).
struct InOrder {
    targets: Vec<String>,
    names: Vec<String>,
    server_cpu: Vec<Option<String>>,
}

impl InOrder {
    fn of(spec: &SessionSpec, order: &[usize]) -> InOrder {
        InOrder {
            targets: in_order(spec.targets, order),
            names: in_order(spec.names, order),
            server_cpu: in_order(spec.server_cpu, order),
        }
    }

    /// `spec` with its per-target lists in the run's order.
    fn spec<'a>(&'a self, spec: SessionSpec<'a>) -> SessionSpec<'a> {
        SessionSpec {
            targets: &self.targets,
            names: &self.names,
            server_cpu: &self.server_cpu,
            ..spec
        }
    }
}

/// A per-target `list` in the run's `order`; a list that is not one per target (empty:
/// the targets' own names, no server command) as it is.
fn in_order<T: Clone>(list: &[T], order: &[usize]) -> Vec<T> {
    if list.len() == order.len() {
        order.iter().map(|&i| list[i].clone()).collect()
    } else {
        list.to_vec()
    }
}

/// The manifest of a run that took its targets in `order`: they are listed as given (also
/// in every rank's view of them), and the order is recorded (`target_order`; nothing for
/// one target).
fn listed_in(manifest: &mut Manifest, order: Vec<usize>) {
    if order.len() > 1 {
        manifest.targets = as_listed(std::mem::take(&mut manifest.targets), &order);
        for host in &mut manifest.hosts {
            host.targets = as_listed(std::mem::take(&mut host.targets), &order);
        }
        manifest.target_order = order;
    }
}

/// `taken`, one entry per target in the run's `order`, put back in the order given.
fn as_listed<T>(taken: Vec<T>, order: &[usize]) -> Vec<T> {
    let mut slots: Vec<(usize, T)> = order.iter().copied().zip(taken).collect();
    slots.sort_by_key(|(i, _)| *i);
    slots.into_iter().map(|(_, t)| t).collect()
}

/// Opens the targets and (on the rank that writes) the results directory; on a
/// multi-client run, every rank set up or the whole run ends with the first rank's reason,
/// leaving nothing it made.
fn set_up(
    spec: &SessionSpec,
    run_id: &str,
    files_prefix: &str,
    writes: bool,
) -> CliResult<(Vec<Target>, Option<SafeDir>)> {
    let results = results_path(spec.out.as_deref(), run_id);
    let results = std::env::current_dir()
        .map(|cwd| cwd.join(&results))
        .unwrap_or(results);
    let setup = prepare_targets(spec, files_prefix, &results).and_then(|targets| {
        let cleanup = |e: CliError| {
            remove_workdirs(&targets, &mut |_| {});
            e
        };
        if spec.plan.verify {
            if let Some(t) = targets.iter().find(|t| !t.backend.stores_data()) {
                return Err(cleanup(CliError::usage(format!(
                    "--verify needs a target that keeps data; {} discards writes",
                    t.name
                ))));
            }
        }
        let out_dir = if writes {
            Some(create_out_dir(spec.out.clone(), run_id).map_err(cleanup)?)
        } else {
            None
        };
        Ok((targets, out_dir))
    });
    let Some(c) = spec.cluster else {
        return setup;
    };
    let ready = match &setup {
        Ok(_) => Ready::Yes,
        Err(e) => Ready::No(e.message.clone()),
    };
    let go = c
        .start(ready)
        .map_err(|e| CliError::failed(format!("MPI: {e}")))?;
    match (setup, go) {
        (Ok(ok), Go::On) => Ok(ok),
        (Ok((targets, dir)), other) => {
            remove_workdirs(&targets, &mut |_| {});
            if let Some(dir) = dir {
                // Only what this run made: its marker, then the directory if empty.
                let _ = dir.remove(RESULTS_MARKER);
                let _ = std::fs::remove_dir(dir.path());
            }
            Err(match other {
                Go::Stop(why) => CliError::usage(why),
                _ => CliError::interrupted("interrupted before the run started"),
            })
        }
        (Err(_), Go::Stop(why)) => Err(CliError::usage(why)),
        (Err(e), _) => Err(e),
    }
}

/// Notes where the targets' working directories are, for the Ctrl-C handler to name if
/// the run is killed before it can remove them.
fn remember_left_behind(targets: &[Target]) {
    if let Ok(mut left) = LEFT_BEHIND.lock() {
        *left = targets
            .iter()
            .filter(|t| t.backend.stores_data())
            .map(|t| {
                let root = t
                    .backend
                    .info()
                    .local_root
                    .unwrap_or_else(|| t.name.clone());
                let mut here = format!(
                    "{root}/{} (remove with: sharebench clean {})",
                    t.workdir.path, t.name
                );
                for p in own_places(t) {
                    here.push_str(&format!("; {}", where_is(p)));
                }
                here
            })
            .collect();
    }
}

/// What is mounted where a directory target lives (an NFS mount's `server:/export`); a
/// native client's URL already names its server, in the mount point.
fn mount_source(info: &sharebench_core::backend::TargetInfo) -> Option<String> {
    let root = info.local_root.as_deref()?;
    sharebench_backends::mountinfo::lookup(Path::new(root)).map(|m| m.source)
}

/// The run's manifest as it starts: what ran where, with every rank's host on a
/// multi-client run.
fn start_manifest(spec: &SessionSpec, run_id: &str, targets: &[Target]) -> CliResult<Manifest> {
    let mut manifest = Manifest {
        schema: record::SCHEMA_VERSION,
        tool: "sharebench".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        run_id: run_id.to_string(),
        command_line: spec.command_line.clone(),
        host: Host::probe(),
        hosts: Vec::new(),
        targets: targets
            .iter()
            .zip(spec.targets)
            .map(|(t, location)| TargetManifest {
                server_fs: t.server_view.as_ref().and_then(|v| v.info().fs_type),
                server_mount_options: t.server_view.as_ref().and_then(|v| v.info().mount_options),
                location: (*location != t.name).then(|| location.clone()),
                mount_source: mount_source(&t.backend.info()),
                places: (t.places.iter().enumerate())
                    .filter(|(_, p)| p.workdir.path != t.workdir.path)
                    .map(|(w, p)| format!("worker {}: {}", w + 1, where_is(p)))
                    .collect(),
                ..TargetManifest::new(&t.name, t.backend.info(), &t.workdir.path)
            })
            .collect(),
        plan: spec.plan.clone(),
        started_at: chrono::Utc::now().to_rfc3339(),
        ended_at: None,
        outcome: RunOutcome::Running,
        records: 0,
        coordination_ms: None,
        target_order: Vec::new(),
    };
    if let Some(c) = spec.cluster {
        let mine = Host {
            targets: manifest.targets.clone(),
            ..manifest.host.clone()
        };
        manifest.hosts = c
            .hosts(&mine)
            .map_err(|e| CliError::failed(format!("MPI: {e}")))?;
    }
    Ok(manifest)
}

/// The manifest as the run ended: when, how many records, how it went.
fn end_manifest(manifest: &mut Manifest, summary: &RunSummary, carried: usize) {
    manifest.ended_at = Some(chrono::Utc::now().to_rfc3339());
    manifest.records = summary.records + carried as u64;
    manifest.coordination_ms = (summary.coordinated > 0)
        .then(|| 1000.0 * summary.coordination_s / summary.coordinated as f64);
    manifest.outcome = if summary.interrupted {
        RunOutcome::Interrupted
    } else if summary.all_ok() {
        RunOutcome::Complete
    } else {
        RunOutcome::Failed
    };
}

/// Removes the targets' working directories, or with `--keep-files` says where they are.
/// Returns what was found if another user swapped a working directory meanwhile (the run
/// was interfered with, so it cannot be called complete).
fn leave_targets(plan: &Plan, targets: &[Target]) -> Option<String> {
    let mut tampering = None;
    if plan.keep_files {
        for t in targets {
            // A directory target's working directory is a path here; another's is on
            // its share.
            let root = Path::new(&t.name);
            let place = if root.is_dir() {
                root.join(&t.workdir.path).display().to_string()
            } else {
                format!("{} on {}", t.workdir.path, t.name)
            };
            let _ = writeln!(
                io::stderr(),
                "sharebench: --keep-files: the files are in {place}"
            );
            for p in own_places(t) {
                let _ = writeln!(
                    io::stderr(),
                    "sharebench: --keep-files: and in {}",
                    where_is(p)
                );
            }
        }
    } else {
        remove_workdirs(targets, &mut |m: String| {
            let _ = writeln!(io::stderr(), "sharebench: warning: {m}");
            if sharebench_core::backend::names_tampering(&m) {
                tampering.get_or_insert(m);
            }
        });
    }
    if let Ok(mut left) = LEFT_BEHIND.lock() {
        left.clear();
    }
    tampering
}

/// Runs a plan end to end. `on_record` sees each record as it is taken (for live tables).
/// Returns an error only for bad input (before anything ran) or when records cannot be
/// written; a run with failed measurements returns `Ok` and the caller decides the exit.
pub fn execute(spec: SessionSpec, on_record: &mut dyn FnMut(&Record)) -> CliResult<SessionResult> {
    check_spec(&spec)?;
    // Held until this returns; the kernel drops the request when it closes.
    let awake = crate::awake::CpusAwake::as_asked(spec.plan.cpu_idle).map_err(CliError::usage)?;
    let ranks: &dyn Ranks = match spec.cluster {
        Some(c) => c,
        None => &Solo,
    };
    let writes = ranks.rank() == 0;
    let (run_id, files_prefix) = run_names(spec.cluster);
    // From here the targets are in the run's order (`target_order`); run.json lists them
    // as given.
    let order = target_order(spec.targets.len(), &run_id);
    let drawn = InOrder::of(&spec, &order);
    let spec = drawn.spec(spec);
    let (targets, out_dir) = set_up(&spec, &run_id, &files_prefix, writes)?;
    if let Some(note) = awake.note() {
        let _ = writeln!(io::stderr(), "sharebench: note: {note}");
    }
    install_ctrlc();
    remember_left_behind(&targets);
    let mut manifest = start_manifest(&spec, &run_id, &targets)?;
    manifest.plan.keep_cpus_awake = awake.is_held();
    listed_in(&mut manifest, order);
    let out_path = out_dir
        .as_ref()
        .map(|d| d.path().to_path_buf())
        .unwrap_or_default();
    let io_err = |what: &str, e: io::Error| {
        CliError::failed(format!(
            "cannot write {what} in {}: {e}",
            out_path.display()
        ))
    };
    let writer = if let Some(dir) = &out_dir {
        write_manifest(dir, &manifest).map_err(|e| io_err("run.json", e))?;
        let mut writer =
            RecordWriter::create(dir, "results.jsonl").map_err(|e| io_err("results.jsonl", e))?;
        for r in &spec.carried {
            writer.append(r).map_err(|e| io_err("results.jsonl", e))?;
        }
        Some(writer)
    } else {
        None
    };

    // With --reps auto, the bar's end is the least samples; it moves on if more are needed.
    let samples = match spec.plan.auto_reps {
        Some(a) => a.min.min(spec.plan.reps),
        None => spec.plan.reps,
    };
    let total = spec.plan.bytes_per_pass() * u64::from(samples) * targets.len() as u64;
    // Rank 0 speaks for a multi-client run.
    let progress = Progress::new(
        total,
        samples,
        spec.plan.progress_in_points(),
        spec.quiet || out_dir.is_none(),
    );
    let mut observer = SessionObserver {
        writer,
        progress: &progress,
        on_record,
        records: Vec::new(),
    };
    let ran = engine::run_ranked(
        spec.plan,
        &targets,
        &run_id,
        &CANCEL,
        &mut observer,
        ranks,
        &spec.carried,
    );
    progress.finish();
    let tampering = leave_targets(spec.plan, &targets);
    let records = std::mem::take(&mut observer.records);
    let mut summary = match ran {
        Ok(summary) => summary,
        Err(e) => {
            // Records could not be written (a full disk): say so in run.json too, if it can
            // still be written, rather than leave it saying the run is running.
            manifest.ended_at = Some(chrono::Utc::now().to_rfc3339());
            manifest.outcome = RunOutcome::Failed;
            if let Some(dir) = &out_dir {
                if write_manifest(dir, &manifest).is_err() {
                    if let Ok(text) = serde_json::to_string_pretty(&manifest) {
                        let _ = dir.overwrite("run.json", (text + "\n").as_bytes());
                    }
                }
            }
            return Err(io_err("results.jsonl", e));
        }
    };
    if summary.stopped.is_none() {
        summary.stopped = tampering;
    }
    end_manifest(&mut manifest, &summary, spec.carried.len());
    if let Some(dir) = &out_dir {
        write_manifest(dir, &manifest).map_err(|e| io_err("run.json", e))?;
        // The CSV is made from the JSONL on disk, the same input every later tool reads.
        let jsonl = "results.jsonl";
        let loaded = dir
            .open_file(jsonl)
            .and_then(|f| record::read_jsonl_from(f, &out_path.join(jsonl)))
            .map_err(|e| io_err("results.csv", e))?;
        sharebench_report::results_csv::render(&loaded.records)
            .and_then(|csv| dir.create_new("results.csv", 0o644)?.write_all(&csv))
            .map_err(|e| io_err("results.csv", e))?;
    }
    Ok(SessionResult {
        writes,
        out_dir: out_path,
        summary,
        records,
    })
}

/// Turns a finished session into the exit the user sees: 0, or one line and 1 or 130.
pub fn outcome_error(result: &SessionResult) -> Option<CliError> {
    let s = &result.summary;
    let dir = result.out_dir.display();
    if let Some(why) = &s.stopped {
        return Some(CliError::failed(format!(
            "run stopped: {why}; {} records kept in {dir}",
            s.records
        )));
    }
    if s.interrupted {
        return Some(CliError::interrupted(format!(
            "interrupted; {} records kept in {dir}",
            s.records
        )));
    }
    if s.verify_failed > 0 {
        let first = result
            .records
            .iter()
            .find(|r| r.status == Status::VerifyFailed);
        let at = first
            .and_then(|r| {
                Some(format!(
                    " (first: {} at byte {})",
                    r.mismatch_file.as_deref()?,
                    r.mismatch_offset?
                ))
            })
            .unwrap_or_default();
        return Some(CliError::failed(format!(
            "data verification failed in {} measurements{at}; records in {dir}",
            s.verify_failed
        )));
    }
    if s.failed > 0 {
        let first = result.records.iter().find(|r| r.status == Status::Failed);
        let why = first
            .and_then(|r| r.error.as_deref())
            .unwrap_or("see results.jsonl");
        return Some(CliError::failed(format!(
            "{} measurements failed ({why}); records in {dir}",
            s.failed
        )));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_takes_its_targets_in_an_order_drawn_from_its_run_id() {
        assert_eq!(target_order(0, "r"), Vec::<usize>::new());
        assert_eq!(target_order(1, "r"), vec![0]);
        // One run id, one order (every rank of a multi-client run draws alike), each
        // target once.
        assert_eq!(target_order(4, "r1"), target_order(4, "r1"));
        let mut sorted = target_order(4, "r1");
        sorted.sort();
        assert_eq!(sorted, vec![0, 1, 2, 3]);
        // Over run ids, each target comes first, and each pair in each order, about as
        // often.
        let mut first = [0; 3];
        let mut zero_before_one = 0;
        for n in 0..1500 {
            let o = target_order(3, &format!("20261130T1200{n:02}Z-{n}"));
            first[o[0]] += 1;
            let at = |t| o.iter().position(|&x| x == t).unwrap();
            zero_before_one += usize::from(at(0) < at(1));
        }
        assert!(first.iter().all(|&f| (400..=600).contains(&f)), "{first:?}");
        assert!((650..=850).contains(&zero_before_one), "{zero_before_one}");
        // And back as listed.
        assert_eq!(
            as_listed(vec!["c", "a", "b"], &[2, 0, 1]),
            vec!["a", "b", "c"]
        );
    }

    #[test]
    fn buffers_over_half_the_available_memory_are_refused() {
        let gib = 1u64 << 30;
        assert!(check_memory(gib, Some(4 * gib)).is_ok());
        let e = check_memory(3 * gib, Some(4 * gib)).unwrap_err();
        assert!(e.contains("3.0 GiB") && e.contains("4.0 GiB"), "{e}");
        assert!(
            check_memory(u64::MAX, None).is_ok(),
            "unknown memory: no refusal"
        );
    }
}
