//! `sharebench clean TARGET...`: removes the working directories that killed runs left on
//! their targets (SIGKILL, a second Ctrl-C), each only after its marker shows it is
//! sharebench's and its process is gone, and marks those runs' manifests `abandoned`.
//! Not: removing results, or anything without sharebench's marker.

use crate::error::{CliError, CliResult};
use clap::Args;
use sharebench_core::safe_dir::SafeDir;
use sharebench_core::workdir::{self, Found};
use std::io::{Read, Write};
use std::path::Path;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
sharebench clean /dev/shm/x          remove what a killed 'sharebench run /dev/shm/x' left\n  \
sharebench clean /mnt/nfs /mnt/smb\n\n\
A working directory is removed only when its marker (.sharebench-workdir) is sharebench's and \
the process that made it (pid and start time, in the marker) is gone; a running sharebench's \
is left. The killed run's run.json, if its results directory is still there, says \
\"outcome\": \"abandoned\".")]
pub struct CleanArgs {
    /// Targets, named as for `sharebench run` (directories, nfs://, smb://)
    #[arg(required = true, value_name = "TARGET")]
    pub targets: Vec<String>,
}

pub fn main(args: CleanArgs) -> CliResult<()> {
    let mut out = crate::stdout::stdout();
    let mut failed = Vec::new();
    for name in &args.targets {
        let backend = sharebench_backends::open_target(name).map_err(CliError::usage)?;
        let found = workdir::find(backend.as_ref())
            .map_err(|e| CliError::failed(format!("{name}: cannot list: {e}")))?;
        for f in &found {
            let path = &f.workdir.path;
            if !f.is_abandoned() {
                let pid = f
                    .owner
                    .as_ref()
                    .map_or(String::new(), |o| format!(" {}", o.pid));
                let _ = writeln!(
                    out,
                    "{name}: {path} is a running sharebench's (pid{pid}); left"
                );
                continue;
            }
            if let Err(e) = f.workdir.remove(backend.as_ref()) {
                failed.push(format!("{name}: {path}: {e}"));
                continue;
            }
            let marked = mark_abandoned(f);
            let _ = writeln!(out, "{name}: removed {path} (run {}){marked}", f.run_id);
        }
        if found.is_empty() {
            let _ = writeln!(out, "{name}: nothing to clean");
        }
    }
    match failed.first() {
        None => Ok(()),
        Some(first) => Err(CliError::failed(format!(
            "{} working directories could not be removed (first: {first})",
            failed.len()
        ))),
    }
}

/// Marks the killed run's manifest, if its results are still where the marker says and it
/// still says `running`; returns what to tell the user.
fn mark_abandoned(f: &Found) -> String {
    let Some(results) = &f.results else {
        return String::new();
    };
    let marked = (|| -> std::io::Result<bool> {
        let dir = SafeDir::open(Path::new(results))?;
        let mut text = String::new();
        dir.open_file("run.json")?
            .take(16 << 20)
            .read_to_string(&mut text)?;
        let mut manifest: serde_json::Value =
            serde_json::from_str(&text).map_err(std::io::Error::other)?;
        let ours = manifest["run_id"]
            .as_str()
            .is_some_and(|id| f.run_id.starts_with(id));
        if !ours || manifest["outcome"] != "running" {
            return Ok(false);
        }
        manifest["outcome"] = "abandoned".into();
        let text = serde_json::to_string_pretty(&manifest).map_err(std::io::Error::other)?;
        dir.replace("run.json", (text + "\n").as_bytes(), 0o644)?;
        Ok(true)
    })();
    match marked {
        Ok(true) => format!("; its results {results} marked abandoned"),
        Ok(false) => String::new(),
        Err(e) => format!("; its results {results} not marked ({e})"),
    }
}
