//! What a run is made of and gives back, shared by the engine and the workloads: the
//! targets it runs on, the observer that receives its records, and the summary of how it
//! ended. Not: scheduling (see `engine`) or any workload's logic (see `workload`).

use crate::backend::Backend;
use crate::record::Record;
use crate::server_cpu;
use crate::workdir::Workdir;
use std::io;
use std::sync::Arc;

/// A target ready to run: its name as the user gave it, its backend, its working directory.
pub struct Target {
    pub name: String,
    pub backend: Arc<dyn Backend>,
    pub workdir: Workdir,
    /// The target's server processes on this machine (the lab's), whose CPU is recorded
    /// with each measurement; empty for other targets.
    pub servers: server_cpu::ProcessSet,
    /// The FUSE daemon that carries a FUSE-mounted target's I/O on this machine (the
    /// lab's Gluster and smbnetfs mounts), whose CPU counts as client CPU; empty otherwise.
    pub fuse: server_cpu::ProcessSet,
    /// The same files as the server stores them, where that is on this machine (a lab
    /// share's directory on its backing image): for what only the server side can
    /// measure, such as extents through FIEMAP. `None` for other targets.
    pub server_view: Option<Arc<dyn Backend>>,
    /// The block devices (names under /sys/block) that hold the target's data on the
    /// server side, where they are on this machine (a lab share's backing loop device):
    /// their writes and flushes are recorded with each measurement (`disk_io`).
    pub disks: Vec<String>,
    /// Other directories the workers' files go to (IOzone's `-F` naming several
    /// directories): worker `w` works in `places[w]` when there is one, else in `workdir`.
    /// Empty for every other run.
    pub places: Vec<Place>,
}

/// A working directory of the tool's own, on one backend: where a worker's files go.
#[derive(Clone)]
pub struct Place {
    pub backend: Arc<dyn Backend>,
    pub workdir: Workdir,
}

impl Target {
    /// Where worker `w` keeps its files: its own place, or the target's working directory.
    pub fn place(&self, w: usize) -> Place {
        self.places
            .get(w)
            .cloned()
            .unwrap_or_else(|| self.own_place())
    }

    /// The target's own working directory, as a place.
    pub fn own_place(&self) -> Place {
        Place {
            backend: self.backend.clone(),
            workdir: self.workdir.clone(),
        }
    }
}

/// Receives records and progress. Errors from `record` stop the run (nowhere to write).
pub trait Observer {
    fn record(&mut self, record: &Record) -> io::Result<()>;
    /// Called after each measurement with the bytes it was planned to move.
    fn progress(&mut self, _planned_bytes: u64, _what: &str) {}
    /// A one-line warning for the user (e.g. a target given up after an error).
    fn warn(&mut self, _message: &str) {}
}

/// How a run ended.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RunSummary {
    pub records: u64,
    pub failed: u64,
    pub verify_failed: u64,
    pub interrupted: bool,
    /// Measurements coordinated across ranks, and the seconds spent coordinating them
    /// (the start barrier and the gather; zero for one client).
    pub coordinated: u64,
    pub coordination_s: f64,
    /// Why the run was stopped before its end by a failure that made going on unsafe
    /// (a remount that failed and may have left its file system unmounted).
    pub stopped: Option<String>,
}

impl RunSummary {
    pub fn all_ok(&self) -> bool {
        self.failed == 0 && self.verify_failed == 0 && !self.interrupted && self.stopped.is_none()
    }
}
