"""The flip section (issues 18, 50): a verdict must not flip.

FLIP_RUNS (default 2; the issue's bar: 3) runs of the comparison study nfs-server-configs
at quick scale, each measuring xfs and ext4 side by side in one lab, must give the same
headline winner (or none); no xfs-vs-ext4 or v4.1-vs-v3 claim decided one way in one run
and the other way in another; every figure the same sign in any two runs unless it is
equivalent or inconclusive in both (the issue's rule for two runs, deliverable 3, applied
to each figure); and every figure's 95% intervals (speed, steadiness, CPU) overlapping
from run to run. Needs root (the lab).
"""

from . import analysis, running
from .running import STDOUT


def run(ctx) -> None:
    if not running.is_root():
        ctx.say("flip: needs root (the lab); skipped")
        return
    logs = []
    for i in range(1, ctx.s.flip_runs + 1):
        out, log = ctx.out / f"flip.{i}", ctx.out / f"flip.{i}.log"
        with running.new_file(log) as f:
            code = ctx.sharebench(["study", "run", "nfs-server-configs", "--scale", "quick", "--out", out],
                                  stdout=f, stderr=STDOUT)
        if code != 0:
            ctx.say(f"flip: study run {i} failed (see {log})")
            if running.last_lines(log, 3):
                ctx.say(running.last_lines(log, 3))
            return
        logs.append(log.read_text(errors="replace"))
    ctx.report(analysis.flip_lines([analysis.flip_run(text) for text in logs]))
