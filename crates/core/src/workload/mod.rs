//! Workloads: families of operations written against the backend trait only.
//! `iozone` is the file-size x record-size matrix; others (metadata, small files, streams)
//! join here as they are built.

pub mod buffered;
pub mod iozone;
