//! sharebench-lab: stands up real file servers (Samba, NFS-Ganesha, GlusterFS) in network namespaces
//! on one Linux box, hands out targets for them, and takes everything down again, also
//! after a crash. Not: measuring (the engine does that) or protocol clients (backends).

pub mod backing;
pub mod disk;
pub mod faults;
pub mod ganesha;
pub mod gluster;
pub mod lifecycle;
pub mod net;
pub mod nosync;
pub mod proc;
pub mod samba;
pub mod service;
pub mod sh;
pub mod smbnetfs;
pub mod ssh;
pub mod state;
pub mod status;
pub mod storage;
pub mod targets;
pub mod topology;
pub mod traffic;

pub use faults::{crash, heal_info, restart, server_pids, HealInfo};
pub use lifecycle::{down, up, DownReport, UpOptions};
pub use status::{status, HostStatus, ServiceStatus, Status};
pub use targets::{resolve, targets, LabTarget};
