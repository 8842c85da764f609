//! What a record measured (`Record.op`), across every workload: IOzone's operations, the
//! Connectathon calls and tests, the small-files phases, the stream's two, the load's one,
//! what imported fio jobs did, and the phases a failure can happen in. One list names them
//! all; records, study files and the report read and write these names. Not what the
//! operations do: see `op` (IOzone's) and each workload's module.

use crate::op::Op;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// Declares `Operation` from one list of (variant, name): the enum, `name()` and the
/// table `FromStr` reads, so a name cannot be added to one and missed in another.
macro_rules! operations {
    ($($(#[$doc:meta])* $variant:ident = $name:literal,)*) => {
        /// What a record measured, or what was under way when a failure was recorded.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Operation {
            /// An operation of the file-size x record-size matrix: IOzone's, or the same
            /// access pattern in an imported fio job.
            Io(Op),
            $($(#[$doc])* $variant,)*
        }

        impl Operation {
            /// Every operation but the matrix's, in the order declared.
            const NAMED: &'static [(Operation, &'static str)] =
                &[$((Operation::$variant, $name),)*];

            /// The name in records, study files and reports (kebab-case).
            pub fn name(self) -> &'static str {
                match self {
                    Operation::Io(op) => op.name(),
                    $(Operation::$variant => $name,)*
                }
            }
        }
    };
}

operations! {
    // The metadata workload (Connectathon's basic tests): one record per call type of a test,
    /// creat(2) of a new, empty file of tests 1 and 2's tree, closed at once.
    CreateFile = "create-file",
    /// mkdir(2) of a new directory of the tree.
    CreateDir = "create-dir",
    /// unlink(2) of a file of the tree.
    RemoveFile = "remove-file",
    /// rmdir(2) of a directory of the tree.
    RemoveDir = "remove-dir",
    /// stat(2) of a directory by name (test 3).
    Lookup = "lookup",
    /// chmod(2) (test 4).
    Setattr = "setattr",
    /// stat(2) of a file just changed (test 4).
    Getattr = "getattr",
    /// The large file written in many calls (test 5), as one operation.
    WriteLarge = "write-large",
    /// The large file read back while still cached (test 5).
    ReadBuffered = "read-buffered",
    /// The large file read after its cache was dropped, or with O_DIRECT (test 5).
    ReadUncached = "read-uncached",
    /// A directory listed (test 6).
    Readdir = "readdir",
    /// rename(2) (test 7).
    Rename = "rename",
    /// link(2) (test 7).
    Link = "link",
    /// unlink(2) of a link or symlink (tests 7 and 8).
    Unlink = "unlink",
    /// symlink(2) (test 8).
    Symlink = "symlink",
    /// readlink(2) (test 8).
    Readlink = "readlink",
    /// statfs(2) (test 9).
    Statfs = "statfs",
    /// ... and one record per test over its wall time.
    WholeTest = "whole-test",
    /// Connectathon's tests, as the phase a failure happened in.
    Test1 = "test1",
    Test2 = "test2",
    Test3 = "test3",
    Test4 = "test4",
    Test5 = "test5",
    Test6 = "test6",
    Test7 = "test7",
    Test8 = "test8",
    Test9 = "test9",
    // The smallfiles workload: sharebench's own copy of the tree, phase by phase,
    /// The tree copied to an empty directory.
    Copy = "copy",
    /// The copy done again with nothing changed: every file examined, none written.
    ResyncNochange = "resync-nochange",
    /// The copy done again after some files changed: only those written.
    ResyncModified = "resync-modified",
    /// The copy removed.
    Delete = "delete",
    // ... and the real rsync's, side by side.
    RsyncCopy = "rsync-copy",
    RsyncResyncNochange = "rsync-resync-nochange",
    RsyncResyncModified = "rsync-resync-modified",
    RsyncDelete = "rsync-delete",
    /// The stream workload's recording: streams written at their bit rate.
    Record = "record",
    /// The stream workload's playback: the recorded streams read at their bit rate.
    Playback = "playback",
    /// One point of the load workload's curve.
    Load = "load",
    /// An imported fio job of sequential reads and writes mixed (`rw`).
    ReadWriteMix = "read-write-mix",
    /// An imported fio job of trims.
    Trim = "trim",
    /// The phases a workload's failure can happen outside any operation.
    Preflight = "preflight",
    Setup = "setup",
    Cleanup = "cleanup",
}

impl Operation {
    /// The matrix operation, if this is one.
    pub fn io(self) -> Option<Op> {
        match self {
            Operation::Io(op) => Some(op),
            _ => None,
        }
    }
}

impl From<Op> for Operation {
    fn from(op: Op) -> Self {
        Operation::Io(op)
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Operation {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Ok(op) = s.parse::<Op>() {
            return Ok(Operation::Io(op));
        }
        Operation::NAMED
            .iter()
            .find(|(_, name)| *name == s)
            .map(|(o, _)| *o)
            .ok_or_else(|| format!("unknown operation '{s}'"))
    }
}

impl Serialize for Operation {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Operation {
    /// Reads a name; also the failed load-point records of versions before this enum,
    /// whose op was the phase's text ("load point 3 (1200 requests/s)").
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.starts_with("load point ") {
            return Ok(Operation::Load);
        }
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_as_its_operation_and_no_name_is_taken_twice() {
        let every: Vec<Operation> = Op::ALL
            .into_iter()
            .map(Operation::Io)
            .chain(Operation::NAMED.iter().map(|(o, _)| *o))
            .collect();
        let mut names = std::collections::BTreeSet::new();
        for o in &every {
            assert_eq!(o.name().parse::<Operation>(), Ok(*o), "{o}");
            assert!(names.insert(o.name()), "{o} named twice");
            let json = serde_json::to_string(o).unwrap();
            assert_eq!(json, format!("\"{}\"", o.name()));
            assert_eq!(serde_json::from_str::<Operation>(&json).unwrap(), *o);
        }
        let mut sorted = every.clone();
        sorted.sort();
        assert_eq!(sorted, every, "operations sort as declared, IOzone's first");
    }

    #[test]
    fn unknown_names_are_refused_but_old_load_point_failures_still_read() {
        assert_eq!(
            "read-bufferd".parse::<Operation>(),
            Err("unknown operation 'read-bufferd'".to_string())
        );
        assert!(serde_json::from_str::<Operation>("\"nonsense\"").is_err());
        let old = "\"load point 3 (1200 requests/s)\"";
        assert_eq!(
            serde_json::from_str::<Operation>(old).unwrap(),
            Operation::Load
        );
    }
}
