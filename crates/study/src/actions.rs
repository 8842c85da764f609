//! The lab actions a study step can take besides a run: a server killed mid-run (and the
//! time the replicated volume takes to heal once it is back), and the bytes replication
//! puts on the wire after a small change to a large file: a full copy, an rsync delta
//! transfer, and a Gluster self-heal. Every figure is read from the lab (interface
//! counters, `gluster volume heal info`) and checked (the copies are compared byte for
//! byte). Not: the lab itself (see `sharebench-lab`).

use crate::check::Measurement;
use sharebench_core::record::{Record, Status};
use sharebench_lab::traffic;
use sharebench_session::error::{CliError, CliResult};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a heal may take before the study gives up waiting.
const HEAL_LIMIT: Duration = Duration::from_secs(300);
/// Block size of the scattered change.
pub(crate) const BLOCK: u64 = 64 << 10;

/// When the crash happened, relative to when the crash thread started waiting, and what
/// it did ("6 processes of replica2 killed").
pub struct Crash {
    pub at_s: f64,
    pub what: String,
}

/// Waits until the run has taken `after` records (or ended), then crashes the replica:
/// `crash` returns what it did.
pub fn crash_after(
    after: u64,
    taken: &AtomicU64,
    done: &AtomicBool,
    crash: impl FnOnce() -> Result<String, String>,
) -> Result<Crash, String> {
    let start = Instant::now();
    while taken.load(Ordering::SeqCst) < after {
        if done.load(Ordering::SeqCst) || sharebench_session::cancelled() {
            return Err(format!(
                "the run ended before its record {after}, when the crash was due"
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let what = crash()?;
    Ok(Crash {
        at_s: start.elapsed().as_secs_f64(),
        what,
    })
}

/// The lab's crash: every process of `host` killed.
pub fn kill_host(host: &str) -> Result<String, String> {
    let killed = sharebench_lab::crash(host).map_err(|e| format!("{e:#}"))?;
    Ok(format!("{} processes of {host} killed", killed.len()))
}

/// The lab's recovery: `host` restarted and the replicated volume healed; returns what
/// the recovery figure measured.
pub fn restart_and_heal(host: &str) -> CliResult<String> {
    sharebench_lab::restart(host)
        .map_err(|e| CliError::failed(format!("restart {host}: {e:#}")))?;
    wait_for_heal()?;
    Ok(format!(
        "from restarting {host} until gluster heal info reports nothing pending"
    ))
}

pub(crate) fn m(step: &str, name: &str, value: f64, unit: &str, note: String) -> Measurement {
    Measurement {
        step: step.into(),
        name: name.into(),
        value,
        unit: unit.into(),
        note,
    }
}

/// Waits until the replicated volume has nothing left to heal; returns the seconds taken.
fn wait_for_heal() -> CliResult<f64> {
    let start = Instant::now();
    loop {
        let info = sharebench_lab::heal_info()
            .map_err(|e| CliError::failed(format!("heal info: {e:#}")))?;
        match info {
            Some(h) if h.pending_entries == 0 && h.bricks.iter().all(|(_, n)| n != "-") => {
                return Ok(start.elapsed().as_secs_f64())
            }
            None => return Err(CliError::failed("heal info: the lab has no Gluster")),
            Some(_) => {}
        }
        if start.elapsed() > HEAL_LIMIT {
            return Err(CliError::failed(format!(
                "the replicated volume did not heal within {} s",
                HEAL_LIMIT.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// After a failover run: the replica brought back (`recover`, timed: the recovery
/// figure; it says what it measured), and the run's records summed up.
pub fn after_failover(
    step: &str,
    crash: Result<Crash, String>,
    records: &[Record],
    recover: impl FnOnce() -> CliResult<String>,
) -> CliResult<Vec<Measurement>> {
    let crash = crash.map_err(|e| CliError::failed(format!("failover: {e}")))?;
    let ok = records.iter().filter(|r| r.status == Status::Ok).count();
    let failed = records
        .iter()
        .filter(|r| r.status == Status::Failed)
        .count();
    let verify = records
        .iter()
        .filter(|r| r.status == Status::VerifyFailed)
        .count();
    let restarted = Instant::now();
    let how = recover()?;
    Ok(vec![
        m(step, "crash-at", crash.at_s, "s", crash.what),
        m(
            step,
            "measurements-ok",
            ok as f64,
            "",
            format!("{failed} failed, {verify} failed verification"),
        ),
        m(step, "verify-failures", verify as f64, "", String::new()),
        m(
            step,
            "recovery",
            restarted.elapsed().as_secs_f64(),
            "s",
            how,
        ),
    ])
}

/// Fills `buf` with the next bytes of the xorshift stream whose state is `x`.
fn fill_random(buf: &mut [u8], x: &mut u64) {
    for chunk in buf.chunks_exact_mut(8) {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        chunk.copy_from_slice(&x.to_le_bytes());
    }
}

/// `size` bytes of pseudo-random data (xorshift, seeded), handed to `write` a MiB at a
/// time.
pub(crate) fn random_bytes(
    size: u64,
    seed: u64,
    mut write: impl FnMut(&[u8]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut x = seed | 1;
    let mut buf = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        fill_random(&mut buf, &mut x);
        let n = left.min(buf.len() as u64) as usize;
        write(&buf[..n])?;
        left -= n as u64;
    }
    Ok(())
}

/// A file of `size` bytes of pseudo-random data.
fn write_random(path: &Path, size: u64, seed: u64) -> std::io::Result<()> {
    let mut f = std::fs::File::create(path)?;
    random_bytes(size, seed, |chunk| f.write_all(chunk))?;
    f.sync_all()
}

/// The offsets of the 64 KiB blocks (`BLOCK`) a change of `pct` percent of a `size` file
/// overwrites, spread evenly; at least one.
pub(crate) fn changed_blocks(size: u64, pct: f64) -> impl Iterator<Item = u64> {
    let blocks = size / BLOCK;
    let n = ((blocks as f64 * pct / 100.0).round() as u64).clamp(1, blocks.max(1));
    let step = (blocks / n).max(1);
    (0..n).map(move |i| i * step * BLOCK)
}

/// Overwrites `pct` percent of `path`'s 64 KiB blocks, spread evenly, with new bytes;
/// returns the bytes changed.
fn change_blocks(path: &Path, pct: f64) -> std::io::Result<u64> {
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)?;
    let size = f.metadata()?.len();
    let mut buf = vec![0u8; BLOCK as usize];
    let mut changed = 0;
    for off in changed_blocks(size, pct) {
        f.seek(SeekFrom::Start(off))?;
        let got = f.read(&mut buf)?;
        for b in &mut buf[..got] {
            *b = !*b;
        }
        f.seek(SeekFrom::Start(off))?;
        f.write_all(&buf[..got])?;
        changed += BLOCK;
    }
    f.sync_all()?;
    Ok(changed)
}

fn same_bytes(a: &Path, b: &Path) -> std::io::Result<bool> {
    let (mut fa, mut fb) = (std::fs::File::open(a)?, std::fs::File::open(b)?);
    if fa.metadata()?.len() != fb.metadata()?.len() {
        return Ok(false);
    }
    let (mut ba, mut bb) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    loop {
        let n = fa.read(&mut ba)?;
        if n == 0 {
            return Ok(true);
        }
        fb.read_exact(&mut bb[..n])?;
        if ba[..n] != bb[..n] {
            return Ok(false);
        }
    }
}

/// Runs rsync from the first client's namespace; returns the bytes on that client's wire.
fn rsync_from_client(client: &str, args: &[&str]) -> CliResult<u64> {
    let before = traffic::wire_bytes(client).map_err(|e| CliError::failed(format!("{e:#}")))?;
    let net = format!("--net=/run/netns/{}", sharebench_lab::net::netns_of(client));
    let out = std::process::Command::new("nsenter")
        .arg(&net)
        .arg("--")
        .arg("rsync")
        .args(args)
        .output()
        .map_err(|e| CliError::failed(format!("cannot run rsync: {e}")))?;
    if !out.status.success() {
        return Err(CliError::failed(format!(
            "rsync {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let after = traffic::wire_bytes(client).map_err(|e| CliError::failed(format!("{e:#}")))?;
    Ok(after - before)
}

/// The replication-traffic action: bytes on the wire to bring a replica up to date after
/// `change_pct` percent of a `size` file changed.
pub fn replication_traffic(
    sdir: &Path,
    step: &str,
    size: &str,
    change_pct: f64,
) -> CliResult<Vec<Measurement>> {
    let fail = |e: String| CliError::failed(format!("replication traffic: {e}"));
    let io = |e: std::io::Error| CliError::failed(format!("replication traffic: {e}"));
    let size = sharebench_core::size::parse_size(size, sharebench_core::size::BareUnit::Bytes)
        .map_err(|e| fail(e.to_string()))?;
    let state = sharebench_lab::state::LabState::load()
        .map_err(|e| fail(format!("{e:#}")))?
        .ok_or_else(|| fail("no lab is up".into()))?;
    let client = state
        .topology
        .clients()
        .next()
        .ok_or_else(|| fail("the lab has no client".into()))?
        .name
        .clone();
    let replicas: Vec<String> = state.topology.replicas().map(|h| h.name.clone()).collect();
    let [_, second, ..] = replicas.as_slice() else {
        return Err(fail("the lab topology has fewer than two replicas".into()));
    };
    std::fs::create_dir_all(sdir).map_err(io)?;
    let original = sdir.join("original.bin");
    let changed = sdir.join("changed.bin");
    write_random(&original, size, 0x5eed).map_err(io)?;
    std::fs::copy(&original, &changed).map_err(io)?;
    let changed_bytes = change_blocks(&changed, change_pct).map_err(io)?;
    let note = format!(
        "{} file, {} changed in 64 KiB blocks",
        sharebench_report::format::size(size),
        sharebench_report::format::size(changed_bytes)
    );
    let mut found = vec![m(
        step,
        "changed",
        changed_bytes as f64 / 1048576.0,
        "MiB",
        note,
    )];

    found.extend(rsync_traffic(step, &client, second, &original, &changed)?);
    found.push(gluster_heal_traffic(
        step, &state, second, &original, &changed, change_pct,
    )?);
    let _ = std::fs::remove_file(&original);
    let _ = std::fs::remove_file(&changed);
    Ok(found)
}

/// The replication step's rsync figures: a whole-file copy and rsync's delta against
/// the replica's old copy, as bytes on the client's interface; both copies checked.
fn rsync_traffic(
    step: &str,
    client: &str,
    second: &str,
    original: &Path,
    changed: &Path,
) -> CliResult<[Measurement; 2]> {
    let fail = |e: String| CliError::failed(format!("replication traffic: {e}"));
    let io = |e: std::io::Error| CliError::failed(format!("replication traffic: {e}"));
    // rsync: the replica starts from the original (copied on this machine, off the wire).
    let (url, module_dir) = traffic::start_rsync(second).map_err(|e| fail(format!("{e:#}")))?;
    std::fs::copy(original, module_dir.join("replica.bin")).map_err(io)?;
    let changed_s = changed.display().to_string();
    let full_bytes = rsync_from_client(
        client,
        &[
            "--ignore-times",
            "--whole-file",
            &changed_s,
            &format!("{url}full.bin"),
        ],
    )?;
    let delta_bytes = rsync_from_client(
        client,
        &[
            "--ignore-times",
            "--no-whole-file",
            "--inplace",
            &changed_s,
            &format!("{url}replica.bin"),
        ],
    )?;
    for name in ["full.bin", "replica.bin"] {
        if !same_bytes(changed, &module_dir.join(name)).map_err(io)? {
            return Err(fail(format!(
                "rsync's copy {name} differs from the changed file"
            )));
        }
        std::fs::remove_file(module_dir.join(name)).map_err(io)?;
    }
    let full = m(
        step,
        "full-copy",
        full_bytes as f64 / 1048576.0,
        "MiB",
        format!("rsync --whole-file, bytes on {client}'s interface"),
    );
    let delta = m(
        step,
        "rsync-delta",
        delta_bytes as f64 / 1048576.0,
        "MiB",
        format!(
            "rsync's delta algorithm against the replica's old copy, bytes on {client}'s interface"
        ),
    );
    Ok([full, delta])
}

/// The replication step's Gluster figure: bytes on the second replica's interface while
/// it heals the blocks changed while it was down; its brick's copy checked.
fn gluster_heal_traffic(
    step: &str,
    state: &sharebench_lab::state::LabState,
    second: &str,
    original: &Path,
    changed: &Path,
    change_pct: f64,
) -> CliResult<Measurement> {
    let fail = |e: String| CliError::failed(format!("replication traffic: {e}"));
    let io = |e: std::io::Error| CliError::failed(format!("replication traffic: {e}"));
    // Gluster: the second replica is down while the file changes, then heals.
    let mnt = sharebench_lab::gluster::mount_point(sharebench_lab::gluster::REPLICA);
    if !sharebench_lab::storage::is_mounted(&mnt) {
        return Err(fail("the replicated Gluster volume is not mounted".into()));
    }
    let on_volume = mnt.join(format!("traffic-{}.bin", std::process::id()));
    std::fs::copy(original, &on_volume).map_err(io)?;
    wait_for_heal()?;
    sharebench_lab::crash(second).map_err(|e| fail(format!("{e:#}")))?;
    let result = (|| {
        change_blocks(&on_volume, change_pct).map_err(io)?;
        let before = traffic::wire_bytes(second).map_err(|e| fail(format!("{e:#}")))?;
        sharebench_lab::restart(second).map_err(|e| fail(format!("restart: {e:#}")))?;
        let secs = wait_for_heal()?;
        let after = traffic::wire_bytes(second).map_err(|e| fail(format!("{e:#}")))?;
        Ok::<_, CliError>((after - before, secs))
    })();
    let (heal, secs) = match result {
        Ok(v) => v,
        Err(e) => {
            // Never leave a server dead behind a failed measurement.
            let _ = sharebench_lab::restart(second);
            return Err(e);
        }
    };
    let brick = |host: &str| {
        state
            .file(format!(
                "srv/{host}/bricks/{}",
                sharebench_lab::gluster::REPLICA
            ))
            .join(on_volume.file_name().expect("a file name"))
    };
    let healed = same_bytes(changed, &brick(second)).map_err(io)?;
    std::fs::remove_file(&on_volume).map_err(io)?;
    if !healed {
        return Err(fail(format!(
            "after the heal, {second}'s brick copy differs from the changed file"
        )));
    }
    Ok(m(
        step,
        "gluster-heal",
        heal as f64 / 1048576.0,
        "MiB",
        format!(
            "bytes on {second}'s interface from its restart to the end of the heal ({secs:.1} s), including its servers' start-up"
        ),
    ))
}
