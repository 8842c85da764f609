"""The drift section (issue 12, opt-in): how the machine's drift falls with a run's length.

DRIFT_RUNS (default 60, about 25 s each) short runs of the repro section's matrix in a row,
6 rounds each. Pooling k runs in a row is a run of 6k rounds over that stretch of time, so
the spread of the pooled medians across blocks of k runs is the repro bar's figure for runs
of that length, on this machine, at this hour: what run length, if any, reaches it. Not in
the default sections: it takes half an hour.
"""

import time

from . import analysis, running
from .repro import MATRIX


def run(ctx) -> None:
    runs, started = ctx.s.drift_runs, time.monotonic()
    (ctx.work / "drift").mkdir(exist_ok=True)
    cells = []
    for i in range(1, runs + 1):
        out, err = ctx.out / f"drift.{i}", ctx.out / f"drift.{i}.err"
        with running.new_file(err) as f:
            code = ctx.sharebench(["run", ctx.work / "drift", *MATRIX, "--reps", "6", "--out", out], stderr=f)
        if code != 0:
            ctx.say(f"drift: run {i} failed: {running.last_lines(err)}")
            return
        cells.append(analysis.cells(running.results(out)))
    secs = int(time.monotonic() - started) // runs
    ctx.report(analysis.drift_lines(secs, cells))
