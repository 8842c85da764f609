"""What every section works with: the settings, the bench's work and output directories,
sharebench, the figures gathered for the summary, and what the bench must undo at its end.

close() undoes, in this order, what the sections left: a command still running, the native
section's servers and directory, the labdepth section's lab, then the CPU-latency holder,
the xfs image, the work directory and (unless BENCH_OUT keeps them) the outputs. Each step
only touches what the bench made itself, recorded here when it was made.
"""

import collections
import os
import stat
import sys
from pathlib import Path

from . import analysis, running
from .running import DEVNULL
from .settings import Settings


class Rows:
    """Rows of figures a section gathers round by round, also written to a file of the
    outputs (one row a line, fields by spaces), so BENCH_OUT keeps them."""

    def __init__(self, path: Path):
        self.rows: list[tuple] = []
        self._file = running.new_file(path)

    def add(self, *fields) -> None:
        self.rows.append(fields)
        self._file.write(" ".join(str(f) for f in fields) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


class Context:
    """The bench under way: see the module's docstring."""

    def __init__(self, settings: Settings):
        self.s = settings
        self.bin = settings.bin
        self.rounds = settings.rounds
        self.checks: list[analysis.Check] = []
        self.work: Path | None = None
        self.out: Path | None = None
        self.keep_out = False
        self.holder = None
        self.servers: list = []
        self.native_dir: Path | None = None
        self.lab_up = False
        self.xfs = running.XfsImage()
        self._names = collections.Counter()
        self._rows: list[Rows] = []

    def open(self) -> None:
        """Makes the work directory (tmpfs) and the output directory, and starts the
        CPU-latency holder."""
        self.work = running.fresh_dir("sharebench-bench.", "/dev/shm")
        if self.s.bench_out:
            os.makedirs(self.s.bench_out, exist_ok=True)
            # Checked again once made: still a directory of this user's, not a symlink.
            st = os.lstat(self.s.bench_out)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
                raise running.Failed(f"BENCH_OUT={self.s.bench_out} changed under the bench; give a new directory")
            self.out, self.keep_out = Path(self.s.bench_out), True
        else:
            self.out = running.fresh_dir("sharebench-bench-out.", "/tmp")
        self.holder = running.hold_cpu_latency()

    def close(self) -> None:
        """Undoes what the bench made (see the module's docstring); a step that fails is
        named on stderr and the others still run."""
        steps = (
            ("stop running commands", running.stop_running),
            ("stop the native servers", self._stop_native),
            ("take the lab down", self._lab_down),
            ("end the CPU-latency holder", self._end_holder),
            ("remove the xfs image", self.xfs.down),
            ("remove the work files", self._remove_dirs),
        )
        for what, step in steps:
            try:
                step()
            except Exception as e:  # noqa: BLE001 - the other steps must still run
                print(f"bench: could not {what}: {e}", file=sys.stderr)

    def _stop_native(self) -> None:
        running.stop_servers(self.servers)
        self.servers = []
        if self.native_dir is not None:
            running.remove(self.native_dir)
            self.native_dir = None

    def _lab_down(self) -> None:
        # Only the lab the labdepth section put up: it sets lab_up before `lab up`.
        # It stays set if `lab down` fails: the lab may still be up.
        if self.lab_up:
            if self.sharebench(["lab", "down"]) != 0:
                print("bench: the lab may still be up; run 'sharebench lab down'", file=sys.stderr)
                return
            self.lab_up = False

    def _end_holder(self) -> None:
        if self.holder is not None:
            running.stop(self.holder, 5)
            self.holder = None

    def _remove_dirs(self) -> None:
        for rows in self._rows:
            rows.close()
        if self.work is not None:
            running.remove(self.work)
        if self.out is not None and not self.keep_out:
            running.remove(self.out)

    # --- For the sections ---------------------------------------------------------------

    def say(self, *lines: str) -> None:
        """Prints lines of the bench's output."""
        for line in lines:
            print(line, flush=True)

    def report(self, result: tuple[list[str], list[analysis.Check]]) -> None:
        """Prints an analysis's lines and keeps its figures for the summary."""
        lines, checks = result
        self.say(*lines)
        self.checks.extend(checks)

    def sharebench(self, args, *, stdout=DEVNULL, stderr=DEVNULL) -> int:
        """Runs sharebench with args (output discarded unless asked); its exit status."""
        return running.run([self.bin, *args], stdout=stdout, stderr=stderr).returncode

    def fresh(self, name: str) -> Path:
        """A path in the outputs for a run's results, with what an earlier round left there
        removed (sharebench refuses a results directory that is not empty)."""
        path = self.out / name
        running.remove(path)
        return path

    def numbered(self, stem: str) -> Path:
        """A new path in the outputs: stem.1, stem.2, ..."""
        self._names[stem] += 1
        return self.out / f"{stem}.{self._names[stem]}"

    def rows(self, name: str) -> Rows:
        """New Rows, written to the outputs under name."""
        rows = Rows(self.out / name)
        self._rows.append(rows)
        return rows

    def one_op(self, op: str, io: str, record: str, size: str, target: str, *options: str) -> float | None:
        """sharebench's KiB/s of one operation: one pass (as fio makes one pass over its
        size), one repetition, from a fresh results directory; its errors shown. None if
        the run failed or has no ok record of op."""
        out = self.numbered("sb")
        code = self.sharebench(
            ["run", "-i", io, "--file-sizes", size, "--record-sizes", record, "--reps", "1",
             "--min-sample-time", "0", "--out", out, *options, target],
            stderr=None,
        )
        if code != 0:
            return None
        return analysis.first_ok(running.results(out), op)
