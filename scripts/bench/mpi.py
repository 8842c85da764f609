"""The mpi section (issue 7): multi-client coordination.

Three ranks on one machine write 4 KiB to null:// 300 times; rank 0's manifest gives the
mean time per measurement spent in the start barrier and the gather of records (target:
under 5 ms). Median over ROUNDS rounds.
"""

import json

from . import analysis, running
from .running import DEVNULL


def run(ctx) -> None:
    if not running.which("mpirun"):
        ctx.say("mpi: skipped (mpirun is missing; run scripts/install-deps.sh)")
        return
    ms = []
    for _ in range(ctx.rounds):
        out = ctx.fresh("mpi")
        code = running.run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "3", ctx.bin, "run", "null://",
                            "-i", "write", "--file-sizes", "4k", "--record-sizes", "4k", "--reps", "300", "--out", out],
                           stdout=DEVNULL, stderr=DEVNULL).returncode
        if code != 0:
            ctx.say("mpi: mpirun failed")
            return
        ms.append(json.loads((out / "run.json").read_text())["coordination_ms"])
    ctx.report(analysis.mpi_lines(ms, ctx.rounds))
