"""The workloads section (issue 5): metadata and small-file workloads.

tmpfs file create and delete rates against fio's filecreate and filedelete engines for the
same number of files (META_FILES), and the copy of the small-file tree (1,800 files, 35 MB)
to a local directory against `rsync -a` wall time. Ratios only, no assertions.
"""

from . import analysis, running
from .running import Failed


def fio_rate(ctx, engine: str, directory) -> float:
    """fio's operations per second creating (or deleting) META_FILES files of 4 KiB."""
    job = running.fio_job(["fio", "--name=m", f"--ioengine={engine}", "--create_on_open=1",
                           f"--nrfiles={ctx.s.meta_files}", "--openfiles=1", "--filesize=4k",
                           "--fallocate=none", f"--directory={directory}"])
    return analysis.fio_iops(job)


def sharebench_rates(ctx, directory) -> tuple[float, float]:
    """sharebench's create and delete rates (Connectathon test1 and test2 over their wall time)."""
    out = ctx.numbered("meta")
    ctx.sharebench(["run", "-w", "metadata", "--counts", str(ctx.s.meta_files), "--reps", "1", "--out", out, directory],
                   stderr=None)
    rates = analysis.metadata_rates(_results(out))
    if rates is None:
        raise Failed(f"workloads: {out} has no whole-test record of test1 and test2")
    return rates


def sharebench_copy(ctx, directory) -> tuple[float, float]:
    """Seconds of sharebench's small-file copy and of rsync's, from one run with --with-rsync."""
    out = ctx.numbered("small")
    ctx.sharebench(["run", "-w", "smallfiles", "--with-rsync", "--reps", "1", "--out", out, directory], stderr=None)
    seconds = analysis.smallfile_seconds(_results(out))
    if seconds is None:
        raise Failed(f"workloads: {out} has no copy and rsync-copy records")
    return seconds


def _results(out) -> list[dict]:
    try:
        return running.results(out)
    except OSError as e:
        raise Failed(f"workloads: sharebench left no results ({e})") from None


def run(ctx) -> None:
    meta, fio_dir, small = ctx.work / "meta", ctx.work / "fio-meta", ctx.work / "small"
    for d in (meta, fio_dir, small):
        d.mkdir(exist_ok=True)
    figures = {k: [] for k in ("create", "delete", "fio create", "fio delete", "copy", "rsync")}
    for _ in range(ctx.rounds):
        create, delete = sharebench_rates(ctx, meta)
        figures["create"].append(create)
        figures["delete"].append(delete)
        figures["fio create"].append(fio_rate(ctx, "filecreate", fio_dir))
        figures["fio delete"].append(fio_rate(ctx, "filedelete", fio_dir))
        for entry in fio_dir.iterdir():
            running.remove(entry)
        copy, rsync = sharebench_copy(ctx, small)
        figures["copy"].append(copy)
        figures["rsync"].append(rsync)
    ctx.report(analysis.workloads_lines(ctx.s.meta_files, ctx.rounds, *figures.values()))
