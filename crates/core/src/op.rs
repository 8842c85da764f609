//! The IOzone operation set: what each operation does (direction, access order, system-call
//! style) and how IOzone numbers and groups them. Not how they run: see `workload::iozone`.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// One IOzone-class operation. The doc of each variant is its semantics in one line;
/// `docs/methods/operations.md` has a paragraph each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    /// Sequential write(2) of a new file: allocation and metadata included.
    Write,
    /// Sequential write(2) over the file `write` left.
    Rewrite,
    /// First sequential read(2) of the file just written.
    Read,
    /// Second sequential read(2): the cache is warm.
    Reread,
    /// read(2) of every record once, in random order.
    RandomRead,
    /// write(2) of every record once, in random order.
    RandomWrite,
    /// read(2) of every record from the last to the first.
    BackwardRead,
    /// The same record (offset 0) written over and over.
    RecordRewrite,
    /// Strided read: every `stride`-th record, wrapping to the next start.
    StrideRead,
    /// Buffered (stdio-like) sequential write of a new file.
    Fwrite,
    /// Buffered sequential write over the existing file.
    Frewrite,
    /// Buffered sequential read.
    Fread,
    /// Second buffered sequential read.
    Freread,
    /// Random order, each record read or written (half and half, by a seeded choice).
    RandomMix,
    /// Sequential pwrite(2) of a new file.
    Pwrite,
    /// Sequential pwrite(2) over the existing file.
    RePwrite,
    /// Sequential pread(2).
    Pread,
    /// Second sequential pread(2).
    RePread,
    /// Sequential pwritev(2) of a new file, several records per call.
    Pwritev,
    /// pwritev(2) over the existing file.
    RePwritev,
    /// Sequential preadv(2), several records per call.
    Preadv,
    /// Second sequential preadv(2).
    RePreadv,
}

/// IOzone's -R report of each operation: the one table the `iozone` command writes its
/// report from and the report's importers read IOzone's output with. Per operation: its
/// column in IOzone's result store (2 is the first), and the title of its text report and
/// of its -b workbook ("Writer report", "Writer Report"). IOzone's mixed workload (-i 8)
/// has no column in the -R report.
pub const IOZONE_REPORTS: [(usize, Op, &str, &str); 21] = [
    (2, Op::Write, "Writer", "Writer"),
    (3, Op::Rewrite, "Re-writer", "Re-writer"),
    (4, Op::Read, "Reader", "Reader"),
    (5, Op::Reread, "Re-Reader", "Re-reader"),
    (6, Op::RandomRead, "Random read", "Random Read"),
    (7, Op::RandomWrite, "Random write", "Random Write"),
    (8, Op::BackwardRead, "Backward read", "Backward Read"),
    (9, Op::RecordRewrite, "Record rewrite", "Record Rewrite"),
    (10, Op::StrideRead, "Stride read", "Stride Read"),
    (11, Op::Fwrite, "Fwrite", "Fwrite"),
    (12, Op::Frewrite, "Re-Fwrite", "Re-fwrite"),
    (13, Op::Fread, "Fread", "Fread"),
    (14, Op::Freread, "Re-Fread", "Re-fread"),
    (15, Op::Pwrite, "Pwrite", "Pwrite"),
    (16, Op::RePwrite, "Re-Pwrite", "Re-pwrite"),
    (17, Op::Pread, "Pread", "Pread"),
    (18, Op::RePread, "Re-Pread", "Re-pread"),
    (19, Op::Pwritev, "Pwritev", "Pwritev"),
    (20, Op::RePwritev, "Re-Pwritev", "Re-pwritev"),
    (21, Op::Preadv, "Preadv", "Preadv"),
    (22, Op::RePreadv, "Re-Preadv", "Re-preadv"),
];

/// Whether an operation moves data to or from the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Read,
    Write,
    Mixed,
}

/// The order in which records are visited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Sequential,
    Backward,
    Random,
    Stride,
    SameRecord,
}

/// Which system-call family an operation uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// read/write at the file cursor (lseek where the order is not sequential).
    Cursor,
    /// pread/pwrite.
    Positional,
    /// preadv/pwritev.
    Vectored,
    /// A user-space buffer the size of a record in front of the file, like stdio with setvbuf.
    Buffered,
}

impl Op {
    /// Every operation, in IOzone's order.
    pub const ALL: [Op; 22] = [
        Op::Write,
        Op::Rewrite,
        Op::Read,
        Op::Reread,
        Op::RandomRead,
        Op::RandomWrite,
        Op::BackwardRead,
        Op::RecordRewrite,
        Op::StrideRead,
        Op::Fwrite,
        Op::Frewrite,
        Op::Fread,
        Op::Freread,
        Op::RandomMix,
        Op::Pwrite,
        Op::RePwrite,
        Op::Pread,
        Op::RePread,
        Op::Pwritev,
        Op::RePwritev,
        Op::Preadv,
        Op::RePreadv,
    ];

    /// The kebab-case name used on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            Op::Write => "write",
            Op::Rewrite => "rewrite",
            Op::Read => "read",
            Op::Reread => "reread",
            Op::RandomRead => "random-read",
            Op::RandomWrite => "random-write",
            Op::BackwardRead => "backward-read",
            Op::RecordRewrite => "record-rewrite",
            Op::StrideRead => "stride-read",
            Op::Fwrite => "fwrite",
            Op::Frewrite => "frewrite",
            Op::Fread => "fread",
            Op::Freread => "freread",
            Op::RandomMix => "random-mix",
            Op::Pwrite => "pwrite",
            Op::RePwrite => "re-pwrite",
            Op::Pread => "pread",
            Op::RePread => "re-pread",
            Op::Pwritev => "pwritev",
            Op::RePwritev => "re-pwritev",
            Op::Preadv => "preadv",
            Op::RePreadv => "re-preadv",
        }
    }

    /// IOzone's `-i` test number that runs this operation.
    pub fn iozone_test(self) -> u8 {
        match self {
            Op::Write | Op::Rewrite => 0,
            Op::Read | Op::Reread => 1,
            Op::RandomRead | Op::RandomWrite => 2,
            Op::BackwardRead => 3,
            Op::RecordRewrite => 4,
            Op::StrideRead => 5,
            Op::Fwrite | Op::Frewrite => 6,
            Op::Fread | Op::Freread => 7,
            Op::RandomMix => 8,
            Op::Pwrite | Op::RePwrite => 9,
            Op::Pread | Op::RePread => 10,
            Op::Pwritev | Op::RePwritev => 11,
            Op::Preadv | Op::RePreadv => 12,
        }
    }

    /// The operations IOzone's test number `n` runs, in order; `None` for an unknown number.
    pub fn for_iozone_test(n: u8) -> Option<Vec<Op>> {
        let ops: Vec<Op> = Op::ALL
            .into_iter()
            .filter(|o| o.iozone_test() == n)
            .collect();
        (!ops.is_empty()).then_some(ops)
    }

    pub fn direction(self) -> Direction {
        match self {
            Op::Write
            | Op::Rewrite
            | Op::RandomWrite
            | Op::RecordRewrite
            | Op::Fwrite
            | Op::Frewrite
            | Op::Pwrite
            | Op::RePwrite
            | Op::Pwritev
            | Op::RePwritev => Direction::Write,
            Op::RandomMix => Direction::Mixed,
            _ => Direction::Read,
        }
    }

    pub fn order(self) -> Order {
        match self {
            Op::RandomRead | Op::RandomWrite | Op::RandomMix => Order::Random,
            Op::BackwardRead => Order::Backward,
            Op::StrideRead => Order::Stride,
            Op::RecordRewrite => Order::SameRecord,
            _ => Order::Sequential,
        }
    }

    pub fn style(self) -> Style {
        match self {
            Op::Fwrite | Op::Frewrite | Op::Fread | Op::Freread => Style::Buffered,
            Op::Pwrite | Op::RePwrite | Op::Pread | Op::RePread => Style::Positional,
            Op::Pwritev | Op::RePwritev | Op::Preadv | Op::RePreadv => Style::Vectored,
            _ => Style::Cursor,
        }
    }

    /// True when `--iodepth` can keep several of this operation's requests in flight:
    /// every order but one record written over itself (whose writes must land in turn), and
    /// every style but the buffered one (a stdio-like buffer is one copy at a time).
    pub fn queues(self) -> bool {
        self.order() != Order::SameRecord && self.style() != Style::Buffered
    }

    /// True when the operation starts by creating the file anew (removing an old one):
    /// only `write`, as in IOzone, where fwrite, pwrite and pwritev overwrite test 0's file.
    pub fn creates_file(self) -> bool {
        self == Op::Write
    }

    /// True for operations that write the whole file themselves when it does not exist yet
    /// (IOzone opens them with O_CREAT and no O_TRUNC).
    pub fn may_create_file(self) -> bool {
        matches!(self, Op::Write | Op::Fwrite | Op::Pwrite | Op::Pwritev)
    }

    /// True for operations that need the file a previous operation wrote.
    pub fn needs_existing_file(self) -> bool {
        !self.may_create_file()
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Op {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let key = s.trim().to_ascii_lowercase().replace('_', "-");
        Op::ALL
            .into_iter()
            .find(|o| o.name() == key)
            .ok_or_else(|| {
                format!(
                    "unknown operation '{s}' (known: {})",
                    Op::ALL.map(|o| o.name()).join(", ")
                )
            })
    }
}

/// Parses a comma-separated list of operation names; `all` means every operation and
/// `iozone` the basic set of `iozone -a` (tests 0-5). The result keeps IOzone's order.
pub fn parse_op_list(text: &str) -> Result<Vec<Op>, String> {
    let mut ops = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item {
            "all" => ops.extend(Op::ALL),
            "iozone" => ops.extend(Op::ALL.into_iter().filter(|o| o.iozone_test() <= 5)),
            _ => ops.push(item.parse()?),
        }
    }
    if ops.is_empty() {
        return Err("no operation given".into());
    }
    ops.sort();
    ops.dedup();
    Ok(ops)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queued_ops_are_those_whose_order_allows_it() {
        let not: Vec<Op> = Op::ALL.into_iter().filter(|o| !o.queues()).collect();
        assert_eq!(
            not,
            [
                Op::RecordRewrite,
                Op::Fwrite,
                Op::Frewrite,
                Op::Fread,
                Op::Freread
            ]
        );
    }

    #[test]
    fn names_round_trip() {
        for op in Op::ALL {
            assert_eq!(op.name().parse::<Op>(), Ok(op));
        }
        assert!("frobnicate"
            .parse::<Op>()
            .unwrap_err()
            .contains("frobnicate"));
    }

    #[test]
    fn iozone_tests_cover_0_to_12() {
        for n in 0..=12u8 {
            assert!(Op::for_iozone_test(n).is_some(), "test {n}");
        }
        assert!(Op::for_iozone_test(13).is_none());
        assert_eq!(
            Op::for_iozone_test(2).unwrap(),
            vec![Op::RandomRead, Op::RandomWrite]
        );
    }

    #[test]
    fn op_lists_keep_iozone_order() {
        assert_eq!(
            parse_op_list("read,write").unwrap(),
            vec![Op::Write, Op::Read]
        );
        assert_eq!(parse_op_list("all").unwrap().len(), 22);
        assert!(parse_op_list("read,nope").is_err());
        assert!(parse_op_list("").is_err());
    }
}
