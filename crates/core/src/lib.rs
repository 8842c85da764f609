//! sharebench-core: what to run and how to run it. The plan (operations, matrix, timing),
//! the backend trait every target implements, the workloads written against it, the engine
//! that runs a plan, and the record schema it emits. Not: concrete targets (see
//! `sharebench-backends`), output formats or the command line (see the `sharebench` crate).

pub mod backend;
pub mod buffer;
pub mod caller;
pub mod cpu;
pub mod disk_io;
pub mod engine;
pub mod latency;
pub mod machine;
pub mod manifest;
pub mod median;
pub mod mix;
pub mod offsets;
pub mod op;
pub mod op_clock;
pub mod operation;
pub mod pattern;
pub mod plan;
pub mod plan_file;
pub mod probe;
pub mod ranks;
pub mod record;
pub mod run;
pub mod safe_dir;
pub mod sampling;
pub mod server_cpu;
pub mod size;
#[cfg(test)]
pub(crate) mod testing;
pub mod thread_room;
pub mod workdir;
pub mod workload;
