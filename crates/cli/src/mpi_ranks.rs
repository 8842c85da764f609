//! The ranks of a run started by `mpirun` (cargo feature `mpi`, OpenMPI through rsmpi):
//! every collective is "each rank sends its bytes to rank 0, rank 0 decides, rank 0
//! broadcasts the decision", so no rank leaves a collective before all have arrived (the
//! start barrier) and every rank takes the same decision (nobody waits for a rank that
//! gave up). Not: what the decisions are (see `sharebench_core::ranks`).

use mpi::datatype::PartitionMut;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::Root;
use serde::{Deserialize, Serialize};
use sharebench_core::ranks::{self, Go, RankPart, Ranks, Ready, Span};
use sharebench_core::record::Record;
use std::cell::Cell;
use std::io;

/// This process's rank, its host name, and the world of all ranks.
pub struct MpiRanks {
    _universe: mpi::environment::Universe,
    world: SimpleCommunicator,
    pub host: String,
    /// This measurement's stonewall: whether this rank posted its own, and how many
    /// other ranks' it has received.
    posted: Cell<bool>,
    heard: Cell<u32>,
}

/// The tag of stonewall messages (one byte each, one per rank pair per measurement).
const STONEWALL: mpi::Tag = 7;

/// Whether this process was started by an MPI launcher (OpenMPI, PMIx, Hydra).
pub fn launched_by_mpirun() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

#[derive(Serialize, Deserialize)]
enum Wire {
    Yes,
    No(String),
    Interrupted,
}

impl From<&Ready> for Wire {
    fn from(r: &Ready) -> Wire {
        match r {
            Ready::Yes => Wire::Yes,
            Ready::No(w) => Wire::No(w.clone()),
            Ready::Interrupted => Wire::Interrupted,
        }
    }
}

#[derive(Serialize, Deserialize)]
struct Part {
    ready: Wire,
    host: String,
    start_s: f64,
    end_s: f64,
    records: Vec<Record>,
}

#[derive(Serialize, Deserialize)]
enum Decision {
    On,
    Stop(String),
    Interrupted,
}

fn io_err(e: serde_json::Error) -> io::Error {
    io::Error::other(format!("MPI message: {e}"))
}

impl MpiRanks {
    /// Initialises MPI; `None` when it cannot.
    pub fn init() -> Option<MpiRanks> {
        let universe = mpi::initialize()?;
        let world = universe.world();
        let mut host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "unknown".into());
        // The lab's client hosts share one machine: each is its network namespace.
        if let Some(ns) = sharebench_backends::netguard::lab_netns() {
            host = format!("{host}/{ns}");
        }
        Some(MpiRanks {
            _universe: universe,
            world,
            host,
            posted: Cell::new(false),
            heard: Cell::new(0),
        })
    }

    /// Every rank's bytes, on rank 0 (`None` elsewhere).
    fn gather(&self, mine: &[u8]) -> Option<Vec<Vec<u8>>> {
        let root = self.world.process_at_rank(0);
        let len = mine.len() as i32;
        if self.world.rank() != 0 {
            root.gather_into(&len);
            root.gather_varcount_into(mine);
            return None;
        }
        let mut lens = vec![0i32; self.world.size() as usize];
        root.gather_into_root(&len, &mut lens[..]);
        let displs: Vec<i32> = lens
            .iter()
            .scan(0, |acc, &l| {
                let d = *acc;
                *acc += l;
                Some(d)
            })
            .collect();
        let mut buf = vec![0u8; lens.iter().map(|&l| l as usize).sum()];
        {
            let mut part = PartitionMut::new(&mut buf[..], &lens[..], &displs[..]);
            root.gather_varcount_into_root(mine, &mut part);
        }
        Some(
            lens.iter()
                .zip(&displs)
                .map(|(&l, &d)| buf[d as usize..(d + l) as usize].to_vec())
                .collect(),
        )
    }

    /// Rank 0's bytes, on every rank.
    fn broadcast(&self, from_root: Vec<u8>) -> Vec<u8> {
        let root = self.world.process_at_rank(0);
        let mut len = from_root.len() as u64;
        root.broadcast_into(&mut len);
        let mut buf = if self.world.rank() == 0 {
            from_root
        } else {
            vec![0u8; len as usize]
        };
        root.broadcast_into(&mut buf[..]);
        buf
    }

    /// Ends this measurement's stonewall: posts this rank's if it has not, then receives
    /// every other rank's, so no message is left for the next measurement.
    fn settle_stonewall(&self) {
        self.stonewall_post();
        while self.heard.get() + 1 < self.world.size() as u32 {
            let (_, _) = self.world.any_process().receive_with_tag::<u8>(STONEWALL);
            self.heard.set(self.heard.get() + 1);
        }
        self.posted.set(false);
        self.heard.set(0);
    }

    /// One collective round: every rank's part in, rank 0's records and decision out.
    fn round(&self, part: Part) -> io::Result<(Vec<Record>, Go)> {
        let mine = serde_json::to_vec(&part).map_err(io_err)?;
        let (records, decision) = match self.gather(&mine) {
            Some(all) => {
                let mut parts = Vec::with_capacity(all.len());
                let mut decision = Decision::On;
                for (rank, bytes) in all.iter().enumerate() {
                    let p: Part = serde_json::from_slice(bytes).map_err(io_err)?;
                    match (&p.ready, &decision) {
                        (Wire::Interrupted, _) => decision = Decision::Interrupted,
                        (Wire::No(why), Decision::On) => {
                            decision = Decision::Stop(format!("rank {rank} on {}: {why}", p.host))
                        }
                        _ => {}
                    }
                    parts.push(RankPart {
                        rank: rank as u32,
                        host: p.host,
                        records: p.records,
                        span: Span {
                            start_s: p.start_s,
                            end_s: p.end_s,
                        },
                    });
                }
                let any = parts.iter().any(|p| !p.records.is_empty());
                let records = if any { ranks::merge(parts) } else { Vec::new() };
                (records, decision)
            }
            None => (Vec::new(), Decision::On),
        };
        let sent = serde_json::to_vec(&decision).map_err(io_err)?;
        let got: Decision = serde_json::from_slice(&self.broadcast(sent)).map_err(io_err)?;
        let go = match got {
            Decision::On => Go::On,
            Decision::Stop(w) => Go::Stop(w),
            Decision::Interrupted => Go::Interrupted,
        };
        Ok((records, go))
    }

    /// Every rank's value of `mine`, on every rank (for the manifest's hosts).
    pub fn all_json<T: Serialize + for<'de> Deserialize<'de>>(
        &self,
        mine: &T,
    ) -> io::Result<Vec<T>> {
        let bytes = serde_json::to_vec(mine).map_err(io_err)?;
        let all = self.gather(&bytes).unwrap_or_default();
        let joined = serde_json::to_vec(
            &all.iter()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .collect::<Vec<_>>(),
        )
        .map_err(io_err)?;
        let texts: Vec<String> = serde_json::from_slice(&self.broadcast(joined)).map_err(io_err)?;
        texts
            .iter()
            .map(|t| serde_json::from_str(t).map_err(io_err))
            .collect()
    }

    /// Rank 0's string (the run id), on every rank.
    pub fn share(&self, from_root: &str) -> String {
        String::from_utf8_lossy(&self.broadcast(from_root.as_bytes().to_vec())).into_owned()
    }
}

impl Ranks for MpiRanks {
    fn rank(&self) -> u32 {
        self.world.rank() as u32
    }
    fn size(&self) -> u32 {
        self.world.size() as u32
    }
    fn start(&self, ready: Ready) -> io::Result<Go> {
        let part = Part {
            ready: Wire::from(&ready),
            host: self.host.clone(),
            start_s: 0.0,
            end_s: 0.0,
            records: Vec::new(),
        };
        Ok(self.round(part)?.1)
    }
    fn finish(
        &self,
        records: Vec<Record>,
        span: Span,
        failed: Ready,
    ) -> io::Result<(Vec<Record>, Go)> {
        self.settle_stonewall();
        self.round(Part {
            ready: Wire::from(&failed),
            host: self.host.clone(),
            start_s: span.start_s,
            end_s: span.end_s,
            records,
        })
    }

    fn stonewall_post(&self) {
        if self.posted.replace(true) {
            return;
        }
        let me = self.world.rank();
        for r in (0..self.world.size()).filter(|&r| r != me) {
            self.world.process_at_rank(r).send_with_tag(&1u8, STONEWALL);
        }
    }
    fn stonewall_heard(&self) -> bool {
        if let Some((msg, _)) = self
            .world
            .any_process()
            .immediate_matched_probe_with_tag(STONEWALL)
        {
            let (_, _) = msg.matched_receive::<u8>();
            self.heard.set(self.heard.get() + 1);
        }
        self.heard.get() > 0
    }
}

impl crate::session::Cluster for MpiRanks {
    fn host(&self) -> &str {
        &self.host
    }
    fn share(&self, run_id: &str) -> String {
        MpiRanks::share(self, run_id)
    }
    fn hosts(
        &self,
        mine: &sharebench_core::manifest::Host,
    ) -> io::Result<Vec<sharebench_core::manifest::Host>> {
        // The rank's host name as its records give it (with the lab namespace, if any).
        let mut mine = mine.clone();
        mine.hostname = self.host.clone();
        self.all_json(&mine)
    }
}
