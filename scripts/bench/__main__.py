"""The bench's entry point: checks the environment, runs the asked sections in order,
prints the summary table, and cleans up whatever happens (see Context.close).

Exit status: 0 when the sections ran (targets not met are reported, not failed: the bench
measures, it does not assert); 2 for bad input (one line on stderr, nothing run); 1 when a
step the bench cannot go on without failed; 128 + the signal when interrupted.
"""

import os
import signal
import sys
from pathlib import Path

from . import analysis, running, settings
from . import drift, fio, flip, iodepth, iozone, labdepth, load, mpi, native, repro, workloads
from .context import Context

# Each section's run(ctx), by name; settings.SECTIONS gives the order.
SECTIONS = {
    "fio": fio.run,
    "native": native.run,
    "workloads": workloads.run,
    "mpi": mpi.run,
    "repro": repro.run,
    "drift": drift.run,
    "flip": flip.run,
    "iozone": iozone.run,
    "iodepth": iodepth.run,
    "labdepth": labdepth.run,
    "load": load.run,
}


class Stopped(BaseException):
    """SIGTERM or SIGHUP: the bench stops as on Ctrl-C, cleaning up first."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _stop(signum, _frame):
    raise Stopped(signum)


def _hold_signals() -> None:
    """During clean-up a further Ctrl-C or TERM is let pass: each clean-up step is bounded
    (a server gets 10 s, the unmount 10 s), and stopping half-way would leave a mount, a
    loop device or a server behind. SIG_IGN, not a handler of Python's: it lasts across exec,
    so the clean-up's own commands (lab down, umount, losetup -d) ignore the terminal's
    Ctrl-C too. SIGKILL still ends the bench."""
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_IGN)


def _output(argv) -> str:
    """A command's output, stripped; "" if it cannot run (the header shows what it can)."""
    try:
        return running.run(argv, stdout=running.PIPE).stdout.strip()
    except OSError:
        return ""


def header(ctx: Context) -> str:
    """The first line: the versions and the machine."""
    version = _output([ctx.bin, "--version"])
    version = version.split(" ")[1] if " " in version else version  # "sharebench 0.1.0"
    cores = _output(["nproc"]) or str(len(os.sched_getaffinity(0)))
    return f"sharebench {version} vs {_output(['fio', '--version'])}, {cores} cores, ROUNDS={ctx.rounds}"


def main(argv: list[str]) -> int:
    # Relative paths (BIN, BENCH_OUT, IOZONE, ...) are from the repository, as before.
    os.chdir(Path(__file__).resolve().parents[2])
    if argv in (["-h"], ["--help"]):
        print(settings.help_text())
        return 0
    if argv:
        print("bench: it takes no arguments, only environment variables (see --help)", file=sys.stderr)
        return 2
    try:
        s = settings.from_env()
    except settings.BadInput as e:
        print(f"bench: {e}", file=sys.stderr)
        return 2
    sys.stdout.reconfigure(line_buffering=True)
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGHUP, _stop)
    ctx = Context(s)
    status = 0
    try:
        ctx.open()
        ctx.say(header(ctx))
        for name in settings.SECTIONS:
            if name in s.sections:
                SECTIONS[name](ctx)
        ctx.say(*analysis.summary_lines(ctx.checks))
    except running.Failed as e:
        ctx.say(*analysis.summary_lines(ctx.checks))
        print(f"bench: {e}", file=sys.stderr)
        status = 1
    except KeyboardInterrupt:
        status = 128 + signal.SIGINT
    except Stopped as e:
        status = 128 + e.signum
    finally:
        _hold_signals()
        ctx.close()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
