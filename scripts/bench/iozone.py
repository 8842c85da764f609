"""The iozone section (issue 12): 4 KiB reads against IOzone, the stricter peer.

On a 64 MiB tmpfs file at 4 KiB records, with latency histograms on (always), sharebench's
read and reread within +-10% of IOzone's (-i 0 -i 1), interleaved, ROUNDS rounds: with
default settings (100 ms samples) and, for reference, a single pass (--min-sample-time 0,
IOzone's own semantics).
"""

from . import analysis, running
from .running import DEVNULL, PIPE, Failed


def run(ctx) -> None:
    iozone = ctx.s.iozone
    if not iozone:
        # Only when the default sections run: named in BENCH_ONLY, a missing IOZONE is bad input.
        ctx.say("iozone: set IOZONE=/path/to/iozone (IOzone 3.5 built from source) to compare; skipped")
        return
    d = ctx.work / "k4"
    d.mkdir(exist_ok=True)
    rows = ctx.rows("k4.rows")
    for _ in range(ctx.rounds):
        r = running.run([iozone, "-i", "0", "-i", "1", "-s", "64m", "-r", "4k", "-f", d / "ioz.tmp"],
                        stdout=PIPE, stderr=DEVNULL)
        figures = analysis.iozone_read_reread(r.stdout)
        if r.returncode != 0 or figures is None:
            raise Failed(f"iozone: {iozone} failed (status {r.returncode}) or printed no 64 MiB / 4 KiB row")
        rows.add("iozone", *figures)
        running.remove(d / "ioz.tmp")
        for sample in ("100ms", "0"):
            out = ctx.fresh(f"k4.{sample}")
            if ctx.sharebench(["run", d, "-i", "write,rewrite,read,reread", "--file-sizes", "64m",
                               "--record-sizes", "4k", "--reps", "1", "--min-sample-time", sample, "--out", out]):
                ctx.say("iozone: run failed")
                return
            # The last record of each op (one repetition: the only one).
            by_op = {r["op"]: r["throughput_kib_s"] for r in running.results(out)}
            rows.add(f"sharebench-{sample}", by_op["read"], by_op["reread"])
    ctx.report(analysis.iozone_lines(rows.rows))
