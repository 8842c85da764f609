"""The fio section (issue 2): sharebench against fio, side by side, interleaved.

Per-operation overhead on the null target (4 KiB records: the ops/s ratio is the
throughput ratio), then an existing 256 MiB tmpfs file (sharebench writes it untimed first,
fio lays it out) at 4 KiB and 1 MiB records, psync, latency histograms on. Then the peak
memory of the full --auto matrix on null:// against 64 MiB plus the record buffers (one
16 MiB record buffer per worker).
"""

from . import analysis, running
from .running import Failed

# label, sharebench's op (the record to read) and -i, fio's --rw, record size, file size,
# on tmpfs (else on null:// against fio's null engine and /dev/null).
CASES = (
    ("null 4k write (ops/s)", "write", "write", "write", "4k", "1g", False),
    ("null 4k read (ops/s)", "read", "read", "read", "4k", "1g", False),
    ("tmpfs 4k rewrite 256m", "rewrite", "rewrite", "write", "4k", "256m", True),
    ("tmpfs 4k read 256m", "read", "read", "read", "4k", "256m", True),
    ("tmpfs 1m rewrite 256m", "rewrite", "rewrite", "write", "1m", "256m", True),
    ("tmpfs 1m read 256m", "read", "read", "read", "1m", "256m", True),
)


def fio_kib_s(rw: str, record: str, size: str, engine: str, file) -> float:
    """fio's KiB/s of one pass; a real file is laid out anew first (see fio_layout)."""
    if engine != "null":
        running.fio_layout(file, size)
    job = running.fio_job(["fio", "--name=b", f"--ioengine={engine}", f"--rw={rw}", f"--bs={record}",
                           f"--size={size}", f"--filename={file}"])
    return analysis.fio_kib_s(job)


def run(ctx) -> None:
    for label, op, io, rw, record, size, on_tmpfs in CASES:
        if on_tmpfs:
            target, engine, file = str(ctx.work), "psync", ctx.work / "fio.dat"
        else:
            target, engine, file = "null://", "null", "/dev/null"
        sharebench, fio = [], []
        for _ in range(ctx.rounds):
            kib = ctx.one_op(op, io, record, size, target)
            if kib is None:
                raise Failed(f"fio section: sharebench gave no {op} figure for {label}")
            sharebench.append(kib)
            fio.append(fio_kib_s(rw, record, size, engine, file))
        ctx.report(analysis.fio_lines(label, sharebench, fio, ctx.rounds))
    rss = running.peak_rss_kib([ctx.bin, "run", "--auto", "-i", "iozone", "--reps", "1", "--min-sample-time", "0",
                                "--out", ctx.out / "auto", "null://"])
    ctx.report(analysis.rss_lines(rss))
