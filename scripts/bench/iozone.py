"""The iozone section (issues 12, 51): sharebench against IOzone, the stricter peer.

On a 64 MiB tmpfs file, at 4 KiB, 64 KiB and 1 MiB records, IOzone's -i 0 -i 1 (write,
rewrite, read, reread; one pass each, untimed per call) and sharebench's same four
operations with latency histograms on (always), interleaved round by round, ROUNDS rounds.
Every cell within +-5% of IOzone with default settings (100 ms samples); a single pass
(--min-sample-time 0, IOzone's own semantics) is shown beside it for reference.
"""

from . import analysis, running
from .running import DEVNULL, PIPE, Failed

# Record sizes, KiB.
RECORDS = (4, 64, 1024)


def run(ctx) -> None:
    iozone = ctx.s.iozone
    if not iozone:
        # Only when the default sections run: named in BENCH_ONLY, a missing IOZONE is bad input.
        ctx.say("iozone: set IOZONE=/path/to/iozone (IOzone 3.5 built from source) to compare; skipped")
        return
    d = ctx.work / "k4"
    d.mkdir(exist_ok=True)
    rows = ctx.rows("k4.rows")
    records = ",".join(f"{k}k" for k in RECORDS)
    for n in range(ctx.rounds):
        for rec in RECORDS:
            r = running.run([iozone, "-i", "0", "-i", "1", "-s", "64m", "-r", f"{rec}k", "-f", d / "ioz.tmp"],
                            stdout=PIPE, stderr=DEVNULL)
            figures = analysis.iozone_row(r.stdout, rec)
            if r.returncode != 0 or figures is None:
                raise Failed(f"iozone: {iozone} failed (status {r.returncode}) or printed no 64 MiB / {rec} KiB row")
            for op, kib in figures.items():
                rows.add(n, "iozone", rec, op, kib)
            running.remove(d / "ioz.tmp")
        for sample in ("100ms", "0"):
            out = ctx.fresh(f"k4.{sample}")
            if ctx.sharebench(["run", d, "-i", ",".join(analysis.IOZONE_OPS), "--file-sizes", "64m",
                               "--record-sizes", records, "--reps", "1", "--min-sample-time", sample,
                               "--out", out]):
                ctx.say("iozone: run failed")
                return
            for r in running.results(out):
                if r["status"] == "ok" and r["op"] in analysis.IOZONE_OPS:
                    rows.add(n, f"sharebench-{sample}", r["record_size"] // 1024, r["op"], r["throughput_kib_s"])
    ctx.report(analysis.iozone_lines(rows.rows))
