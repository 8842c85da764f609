"""The iodepth section (issue 13): --iodepth against fio's io_uring engine at the same depth.

4 KiB random reads of a 64 MiB file at depth 16, on an xfs file system in a loop image
with O_DIRECT (the loop device passes direct I/O on to the machine's disk, so depth reaches
the device) and on tmpfs through the page cache, one pass each, interleaved, ROUNDS rounds:
per-round ratios (median and range), and sharebench at depth 1 for the gain the queue
brings. Without root or xfsprogs the O_DIRECT case runs in a new directory of IODEPTH_DIR.
"""

from . import analysis, running
from .running import PIPE

DEPTH = 16


def disk(ctx):
    """The O_DIRECT directory and how it is printed: the xfs image's mount, else a new
    directory of IODEPTH_DIR (then the caller removes it)."""
    if ctx.xfs.up(ctx.s.iodepth_dir):
        if ctx.xfs.direct_io():
            return ctx.xfs.mnt, "xfs loop image, O_DIRECT"
        return ctx.xfs.mnt, "xfs loop image (loop without direct I/O), O_DIRECT"
    ctx.xfs.down()
    directory = running.fresh_dir("sharebench-bench-qd.", ctx.s.iodepth_dir)
    df = running.run(["df", "--output=fstype", directory], stdout=PIPE).stdout.splitlines()
    return directory, f"{df[-1].strip() if df else ''} in {ctx.s.iodepth_dir}, O_DIRECT"


def measure(ctx, rows, where: str, directory, direct: bool) -> bool:
    """One round in one place: sharebench at depth 16 and 1, then fio; False if sharebench failed."""
    for depth in (DEPTH, 1):
        out = ctx.fresh("qd.sb")
        if ctx.sharebench(["run", directory, "-i", "random-read", "--file-sizes", "64m", "--record-sizes", "4k",
                           "--reps", "1", "--min-sample-time", "0", *(["--direct"] if direct else []),
                           "--iodepth", str(depth), "--out", out]):
            ctx.say("iodepth: sharebench run failed")
            return False
        rows.add(where, "sb", depth, running.results(out)[0]["throughput_kib_s"])
    file = directory / "fio.qd"
    running.fio_layout(file, "64m")
    job = running.fio_job(["fio", "--name=q", "--ioengine=io_uring", f"--iodepth={DEPTH}", f"--direct={int(direct)}",
                           "--rw=randread", "--bs=4k", "--size=64m", f"--filename={file}"])
    rows.add(where, "fio", DEPTH, analysis.fio_kib_s(job))
    running.remove(file)
    return True


def run(ctx) -> None:
    directory, label = disk(ctx)
    rows = ctx.rows("qd.rows")
    try:
        for _ in range(ctx.rounds):
            if not (measure(ctx, rows, "disk", directory, True) and measure(ctx, rows, "tmpfs", ctx.work, False)):
                break
    finally:
        # An interrupted run may still use the mount: stopped first, or the unmount fails.
        running.stop_running()
        if ctx.xfs.mnt is not None:
            ctx.xfs.down()
        else:
            running.remove(directory)
    ctx.report(analysis.iodepth_lines(rows.rows, DEPTH, label))
