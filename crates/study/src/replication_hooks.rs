//! The replication traffic step on the user's own replicated share (its role mapped): a
//! new file written through the role's target, then 1% of it changed, and for each the
//! bytes the link between the replicas carried until they agreed again, read from the
//! user's `replica-bytes` counter around their `replica-sync` wait. The file lives in the
//! tool's own marked working directory on the target and goes with it at the end. Not:
//! the lab's version (`actions::replication_traffic`), which reads its own wire and
//! compares the replicas' copies itself.

use crate::actions::{changed_blocks, m, random_bytes, BLOCK};
use crate::check::Measurement;
use sharebench_core::backend::{self, Backend, OpenOptions};
use sharebench_core::workdir::Workdir;
use sharebench_session::error::{CliError, CliResult};
use std::collections::BTreeMap;
use std::path::Path;

/// The user's replicated share: the role's target, and their hooks.
pub struct Replicas<'a> {
    pub target: &'a str,
    pub hooks: &'a BTreeMap<String, String>,
    /// The step's directory; each hook's output goes beside it (`ID.hook-NAME-WHEN.log`).
    pub sdir: &'a Path,
}

fn fail(e: impl std::fmt::Display) -> CliError {
    CliError::failed(format!("replication traffic: {e}"))
}

impl Replicas<'_> {
    fn hook(&self, name: &str) -> CliResult<&str> {
        self.hooks
            .get(name)
            .map(String::as_str)
            .ok_or_else(|| fail(format!("no --hook {name}=... given")))
    }

    /// Waits (the user's `replica-sync`) until the replicas agree; its seconds.
    fn sync(&self, when: &str) -> CliResult<f64> {
        let command = self.hook(crate::hooks::REPLICA_SYNC)?;
        let step = self.sdir.file_name().unwrap_or_default().to_string_lossy();
        let log = self.sdir.with_file_name(format!(
            "{step}.hook-{}-{when}.log",
            crate::hooks::REPLICA_SYNC
        ));
        crate::hooks::run(
            crate::hooks::REPLICA_SYNC,
            command,
            &log,
            crate::hooks::LIMIT,
        )
        .map_err(fail)
    }

    /// The replica link's byte counter now (the user's `replica-bytes`).
    fn bytes(&self) -> CliResult<f64> {
        let command = self.hook(crate::hooks::REPLICA_BYTES)?;
        let n = sharebench_core::probe::number(command);
        if n.is_nan() {
            return Err(fail(format!(
                "hook {} gave no reading: it must print a number of bytes within {} s",
                crate::hooks::REPLICA_BYTES,
                sharebench_core::probe::LIMIT.as_secs()
            )));
        }
        Ok(n)
    }

    /// The bytes the replica link carried from `before` until the replicas agreed after
    /// `change`, and the seconds they took to agree.
    fn carried(
        &self,
        before: f64,
        when: &str,
        change: impl FnOnce() -> std::io::Result<()>,
    ) -> CliResult<(f64, f64, f64)> {
        change().map_err(|e| match sharebench_session::cancelled() {
            true => CliError::interrupted("replication traffic: interrupted"),
            false => fail(e),
        })?;
        let secs = self.sync(when)?;
        let after = self.bytes()?;
        if after < before {
            return Err(fail(format!(
                "the {} counter went back (from {before} to {after}): reset or wrapped; run the step again",
                crate::hooks::REPLICA_BYTES
            )));
        }
        Ok((after - before, secs, after))
    }
}

/// The step's figures on the user's share: the bytes changed, the replica link's bytes to
/// take in a new `size` file (a full copy) and then a change of `change_pct` percent of it.
pub fn traffic(
    on: &Replicas,
    step: &str,
    size: &str,
    change_pct: f64,
) -> CliResult<Vec<Measurement>> {
    let size = sharebench_core::size::parse_size(size, sharebench_core::size::BareUnit::Bytes)
        .map_err(fail)?;
    let target = sharebench_backends::open_target(on.target).map_err(fail)?;
    let run_id = format!("replication-{}-{}", std::process::id(), now_nanos());
    let wd = Workdir::create(target.as_ref(), &run_id).map_err(|e| {
        fail(format!(
            "cannot make a working directory on {}: {e}",
            on.target
        ))
    })?;
    let file = wd.file("replicated.bin");
    let found = measure(on, target.as_ref(), &file, step, size, change_pct);
    // Ours, marked (the marker is checked first): gone whatever the measurement did.
    let removed = wd
        .remove(target.as_ref())
        .map_err(|e| format!("cannot remove {} on {}: {e}", wd.path, on.target));
    match (found, removed) {
        (Ok(found), Ok(())) => Ok(found),
        (Ok(_), Err(left)) => Err(fail(left)),
        (Err(e), Ok(())) => Err(e),
        (Err(e), Err(left)) => Err(CliError {
            message: format!("{}; {left}", e.message),
            ..e
        }),
    }
}

/// Ctrl-C between the step's phases (and while the file is written) ends it, and its
/// directory is removed.
fn go_on() -> CliResult<()> {
    match sharebench_session::cancelled() {
        true => Err(CliError::interrupted("replication traffic: interrupted")),
        false => Ok(()),
    }
}

fn measure(
    on: &Replicas,
    target: &dyn Backend,
    file: &str,
    step: &str,
    size: u64,
    change_pct: f64,
) -> CliResult<Vec<Measurement>> {
    on.sync("start")?;
    go_on()?;
    let start = on.bytes()?;
    let (full, full_secs, after_write) =
        on.carried(start, "after-write", || write_new(target, file, size))?;
    go_on()?;
    let mut changed = 0;
    let (delta, delta_secs, _) = on.carried(after_write, "after-change", || {
        changed = change(target, file, size, change_pct)?;
        Ok(())
    })?;
    let counted = format!("bytes your {} hook counted", crate::hooks::REPLICA_BYTES);
    Ok(vec![
        m(
            step,
            "changed",
            changed as f64 / 1048576.0,
            "MiB",
            format!(
                "{} file, {} changed in 64 KiB blocks",
                sharebench_report::format::size(size),
                sharebench_report::format::size(changed)
            ),
        ),
        m(
            step,
            "full-copy",
            full / 1048576.0,
            "MiB",
            format!("{counted} from writing the new file until the replicas agreed ({full_secs:.1} s after it was written)"),
        ),
        m(
            step,
            "replication",
            delta / 1048576.0,
            "MiB",
            format!("{counted} from the change until the replicas agreed ({delta_secs:.1} s after it was made)"),
        ),
    ])
}

fn now_nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// A new file of `size` pseudo-random bytes, flushed.
fn write_new(target: &dyn Backend, file: &str, size: u64) -> std::io::Result<()> {
    let mut f = target.open(file, OpenOptions::create_new())?;
    random_bytes(size, 0x5eed, |chunk| {
        if sharebench_session::cancelled() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "interrupted",
            ));
        }
        backend::write_all(f.as_mut(), chunk)
    })?;
    f.fsync()?;
    f.close()
}

/// `change_pct` percent of the file's 64 KiB blocks inverted in place, flushed; the bytes
/// changed.
fn change(target: &dyn Backend, file: &str, size: u64, change_pct: f64) -> std::io::Result<u64> {
    let mut f = target.open(file, OpenOptions::read_write())?;
    let mut buf = vec![0u8; BLOCK as usize];
    let mut changed = 0;
    for off in changed_blocks(size, change_pct) {
        let got = f.pread(&mut buf, off)?;
        for b in &mut buf[..got] {
            *b = !*b;
        }
        let mut done = 0;
        while done < got {
            match f.pwrite(&buf[done..got], off + done as u64)? {
                0 => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::WriteZero,
                        "write returned 0",
                    ))
                }
                n => done += n,
            }
        }
        changed += got as u64;
    }
    f.fsync()?;
    f.close()?;
    Ok(changed)
}
