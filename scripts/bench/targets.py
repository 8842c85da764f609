"""What each figure of the bench must reach: the one table of targets.

The sections' printed lines take their target text from here (str(TARGETS[key])), and the
summary at the end judges every figure against the same entry, so a target changes in one
place. Each entry names the issue or comment of the section it comes from.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    """A bound on one figure.

    `op` is ">=", "<=", "<", "==" or "within" (both ends included); `bound` is written as
    the bench prints it ("1.0", "0.9", "0.90-1.10"), `unit` as printed after it ("x", "%",
    " ms", or nothing).
    """

    op: str
    bound: str
    unit: str = ""

    def met(self, value: float) -> bool:
        """Whether value reaches the target (NaN never does)."""
        if self.op == "within":
            low, high = (float(x) for x in self.bound.split("-"))
            return low <= value <= high
        bound = float(self.bound)
        if self.op == ">=":
            return value >= bound
        if self.op == "<=":
            return value <= bound
        if self.op == "<":
            return value < bound
        if self.op == "==":
            return value == bound
        raise ValueError(f"unknown target operator {self.op!r}")

    def __str__(self) -> str:
        # As the sections print it: "target >= 0.9x", "target < 5 ms", "target 0" (a count
        # that must be zero), "target 0.90-1.10".
        if self.op in ("==", "within"):
            return f"{self.bound}{self.unit}"
        return f"{self.op} {self.bound}{self.unit}"


TARGETS = {
    # fio section (issue 2): sharebench at least fio on null:// (ops/s) and tmpfs
    # (rewrite and read, 4 KiB and 1 MiB records, psync, latency histograms on).
    "fio": Target(">=", "1.0", "x"),
    # fio section (issue 2): peak memory of the full --auto matrix under 64 MiB plus one
    # 16 MiB record buffer.
    "rss": Target("<", "80", " MiB"),
    # native section: sharebench's nfs:// and smb:// against nfs-cp, nfs-cat and smbclient.
    "native": Target(">=", "0.9", "x"),
    # native section (issue 13): NFSv4.1 against NFSv3 on the same Ganesha.
    "nfs41": Target(">=", "0.9", "x"),
    # native section (issues 13, 49): smb2 against libsmbclient, 64 KiB and 1 MiB records,
    # at depth 1 and smb2 at depth 8 against libsmbclient.
    "smb_clients": Target(">=", "0.97", "x"),
    # native section (issue 13): each SMB client with 4 workers against 1, 4 KiB records.
    "smb_workers": Target(">=", "1.5", "x"),
    # workloads section (issue 5): file create and delete rates against fio's
    # filecreate/filedelete engines.
    "metadata": Target(">=", "1.0"),
    # workloads section (issue 5): small-file copy time against `rsync -a`.
    "small_copy": Target("<=", "1.2"),
    # mpi section (issue 7): barrier and gather per measurement, 3 ranks.
    "mpi": Target("<", "5", " ms"),
    # repro and drift sections (issue 12): CV of cell medians across runs, median over cells
    # and worst cell.
    "median_cv": Target("<", "2", "%"),
    "max_cv": Target("<", "5", "%"),
    # repro section (issue 12): an A/A run names no winner.
    "aa": Target("==", "0"),
    # flip section (issues 18, 50): counts of figures that flip, disagree or whose
    # intervals part, and of runs whose headline winner differs.
    "flip": Target("==", "0"),
    # iozone section (issue 51): every cell (write, rewrite, read, reread at 4 KiB, 64 KiB
    # and 1 MiB records) within +-5% of IOzone, default samples.
    "iozone": Target("within", "0.95-1.05"),
    # iodepth section (issue 13): sharebench at least fio io_uring at the same depth.
    "iodepth": Target(">=", "1.0", "x"),
    # labdepth section (issue 13): depth 8 over depth 1, and 4 workers over 1.
    "labdepth": Target(">=", "1.5", "x"),
    # load section (issue 14): client CPU per request of many workers over one.
    "load": Target("<=", "1.2", "x"),
}
