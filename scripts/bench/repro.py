"""The repro section (issue 12): numbers you can trust.

With default settings (--reps auto, 100 ms samples), tmpfs cells of 1-64 MiB at 64k and 1m
records for write/rewrite/read/reread give medians whose CV across REPRO_RUNS independent
runs is below 2% (median over cells), none above 5%. Then an A/A check: two directories of
one tmpfs, side by side in one run, must call no winner.

The strictest peer on the same 32 cells, after each of sharebench's runs: fio, each
operation for 0.5 s time-based (sharebench's sample is 0.1 s, six or more per cell): write
into a new file, then write it again (rewrite), read it, read it again (reread).
Time-based, fio's passes wrap onto the file it has (its write is a rewrite after the first
pass; sharebench's write takes a new file each pass), so its figures move with the
machine's minute, not with new pages.
"""

from . import analysis, running

MATRIX = ["-i", "write,rewrite,read,reread", "--file-sizes", "1m,4m,16m,64m", "--record-sizes", "64k,1m"]


def fio_peer(ctx, rows) -> None:
    """fio on the matrix's cells: one row per cell and operation (op, file size, record
    size in bytes, KiB/s)."""
    peer = ctx.work / "repro-fio"
    peer.mkdir(exist_ok=True)
    file = peer / "f"
    for size in ("1m", "4m", "16m", "64m"):
        for record in ("64k", "1m"):
            running.remove(file)
            for op in ("write", "rewrite", "read", "reread"):
                rw = "write" if op in ("write", "rewrite") else "read"
                job = running.fio_job(["fio", "--name=r", "--ioengine=psync", f"--rw={rw}", f"--bs={record}",
                                       f"--size={size}", f"--filename={file}", "--time_based", "--runtime=500ms"])
                rows.add(op, analysis.size_bytes(size), analysis.size_bytes(record), analysis.fio_kib_s(job))
    running.remove(file)


def run(ctx) -> None:
    for d in ("repro", "aa1", "aa2"):
        (ctx.work / d).mkdir(exist_ok=True)
    sharebench_runs, fio_runs = [], []
    for i in range(1, ctx.s.repro_runs + 1):
        out, err = ctx.out / f"repro.{i}", ctx.out / f"repro.{i}.err"
        with running.new_file(err) as f:
            code = ctx.sharebench(["run", ctx.work / "repro", *MATRIX, "--out", out], stderr=f)
        if code != 0:
            ctx.say(f"repro: run {i} failed: {running.last_lines(err)}")
            return
        sharebench_runs.append(running.results(out))
        rows = ctx.rows(f"repro.{i}.fio")
        fio_peer(ctx, rows)
        fio_runs.append(rows.rows)
    ctx.report(analysis.repro_lines(sharebench_runs, fio_runs))
    aa, report = ctx.out / "aa", ctx.out / "aa-report"
    if ctx.sharebench(["run", ctx.work / "aa1", ctx.work / "aa2", *MATRIX, "--out", aa]):
        ctx.say("repro: A/A run failed")
        return
    listing = running.run([ctx.bin, "report", aa, "--out", report], stdout=running.PIPE)
    lines, checks = analysis.aa_lines(listing.stdout)
    ctx.report((lines, checks))
    if listing.returncode != 0:
        ctx.say(f"repro: A/A report failed (status {listing.returncode})")
    elif not lines:
        ctx.say("repro: A/A check: the report printed no findings line")
