"""The load section (issue 14): the load generator must not become the bottleneck.

One load point on tmpfs at the same total rate (LOAD_RATE), by 1 worker and by LOAD_MANY,
interleaved; client CPU per request of many workers over 1 worker's (target: at most
1.2x). LOAD_MANY=1 is the A/A check.
"""

from . import analysis, running


def run(ctx) -> None:
    rows = ctx.rows("load.rows")
    for _ in range(ctx.rounds):
        for workers in (1, ctx.s.load_many):
            out = ctx.fresh("load.sb")
            if ctx.sharebench(["run", "-w", "load", "--mix", "build", "-t", str(workers),
                               "--rate-start", ctx.s.load_rate, "--points", "1", "--point-time", "2s", "-n", "1",
                               "--out", out, ctx.work]):
                ctx.say("load: sharebench run failed")
                return
            r = running.results(out)[0]
            cpu_us = r["cpu_total_s"] / r["count"] * 1e6
            rows.add(workers, cpu_us, r["ops_per_s"] / r["requested_ops_s"], r["lat_p99_us"])
    ctx.report(analysis.load_lines(rows.rows, ctx.s.load_rate, ctx.s.load_many))
