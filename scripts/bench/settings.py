"""The environment variables the bench reads: their defaults, their meanings, and the check
of what was given. Bad input is one line (BadInput), before anything runs or is made.

As in the shell's ${VAR:-default}, a variable set to "" takes its default.
"""

import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from .running import executable

# Every section, in the order the bench runs them.
SECTIONS = ("fio", "native", "workloads", "mpi", "repro", "drift", "flip", "iozone", "iodepth", "labdepth", "load")
# Without BENCH_ONLY: all but drift, which takes half an hour and runs only when named.
DEFAULT_SECTIONS = tuple(s for s in SECTIONS if s != "drift")

# Name, default, meaning (printed by --help).
VARIABLES = (
    ("BIN", "target/release/sharebench", "the sharebench binary (a relative path is from the repository)"),
    ("ROUNDS", "5", "rounds of each interleaved comparison; medians and ranges are over them"),
    ("BENCH_ONLY", ",".join(DEFAULT_SECTIONS), "the sections to run, comma-separated; also: drift (half an hour)"),
    ("BENCH_OUT", "", "a new or empty directory that keeps the runs' outputs; without it they are removed"),
    ("META_FILES", "5000", "workloads: files created and deleted per round"),
    ("REPRO_RUNS", "5", "repro: independent runs (at least 2)"),
    ("DRIFT_RUNS", "60", "drift: short runs in a row, about 25 s each (at least 3)"),
    ("FLIP_RUNS", "2", "flip: runs of the nfs-server-configs study (the issue's bar: 3)"),
    ("IOZONE", "", "iozone: /path/to/iozone (IOzone 3.5 built from source, outside the repository)"),
    ("IODEPTH_DIR", "/var/tmp",
     "iodepth: where the xfs loop image goes (without root or xfsprogs, the O_DIRECT directory)"),
    ("FIO_NFS", "", "labdepth: /path/to/fio built with ./configure --enable-libnfs, for fio's nfs engine"),
    ("LOAD_RATE", "4000", "load: the total request rate, per second"),
    ("LOAD_MANY", "16", "load: the workers set against one (1 is the A/A check)"),
)
_DEFAULTS = {name: default for name, default, _ in VARIABLES}


class BadInput(Exception):
    """What was given cannot run; the message is the one line the bench prints."""


@dataclass(frozen=True)
class Settings:
    """What the bench was asked to do, checked."""

    bin: str
    rounds: int
    sections: tuple[str, ...]  # to run, in the bench's order
    bench_out: str | None
    meta_files: int
    repro_runs: int
    drift_runs: int
    flip_runs: int
    iozone: str | None
    iodepth_dir: str
    fio_nfs: str | None
    load_rate: str  # passed to sharebench as given (it takes a decimal rate)
    load_many: int


def help_text() -> str:
    """The variables, their defaults and meanings."""
    lines = ["scripts/bench.sh (python3 -m bench from scripts/): sharebench against its peers, side by side.",
             "It takes no arguments; it reads these environment variables:"]
    for name, default, meaning in VARIABLES:
        lines.append(f"  {name:<12} {meaning}" + (f" (default {default})" if default else ""))
    return "\n".join(lines)


def _get(env, name: str) -> str:
    return env.get(name) or _DEFAULTS[name]


def _count(env, name: str, least: int) -> int:
    """A whole number of at least `least`."""
    value = _get(env, name)
    if not re.fullmatch(r"[0-9]+", value) or int(value) < least:
        raise BadInput(f"{name}={value}: give a whole number of at least {least} (default {_DEFAULTS[name]})")
    return int(value)


def _sections(env) -> tuple[tuple[str, ...], bool]:
    """The sections to run, in the bench's order, and whether BENCH_ONLY named them."""
    given = env.get("BENCH_ONLY") or ""
    if not given:
        return DEFAULT_SECTIONS, False
    names = [n.strip() for n in given.split(",") if n.strip()]
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        raise BadInput(f"BENCH_ONLY={given}: no section {', '.join(unknown)}; the sections are {','.join(SECTIONS)}")
    if not names:
        raise BadInput(f"BENCH_ONLY={given}: names no section; the sections are {','.join(SECTIONS)}")
    return tuple(s for s in SECTIONS if s in names), True


def _check_out(path: str) -> None:
    """BENCH_OUT must be new, or an empty directory of this user's, not a symlink: the runs
    write fixed names under it, and files in someone else's directory could be links."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise BadInput(f"BENCH_OUT={path} is not a directory (or is a symlink); give a new directory")
    if st.st_uid != os.geteuid():
        raise BadInput(f"BENCH_OUT={path} belongs to another user; give a new directory")
    if any(Path(path).iterdir()):
        raise BadInput(f"BENCH_OUT={path} is not empty; give a new directory")


def from_env(env=None) -> Settings:
    """Reads and checks the variables (os.environ unless env is given); BadInput if one
    cannot run. Variables of sections not asked for are not read, as before."""
    env = os.environ if env is None else env
    sections, named = _sections(env)
    binary = _get(env, "BIN")
    if not (executable(binary) if "/" in binary else shutil.which(binary)):
        raise BadInput(f"BIN={binary}: no such executable (make build makes it)")
    rounds = _count(env, "ROUNDS", 1)
    bench_out = env.get("BENCH_OUT") or None
    if bench_out:
        _check_out(bench_out)
    wants = set(sections)
    iozone = env.get("IOZONE") or None
    if "iozone" in wants:
        if iozone and not executable(iozone):
            raise BadInput(f"IOZONE={iozone}: no such executable (IOzone 3.5 built from source)")
        if not iozone and named:
            raise BadInput("the iozone section needs IOZONE=/path/to/iozone"
                           " (IOzone 3.5 built from source, outside the repository)")
    iodepth_dir = _get(env, "IODEPTH_DIR")
    if "iodepth" in wants and not os.path.isdir(iodepth_dir):
        raise BadInput(f"IODEPTH_DIR={iodepth_dir}: no such directory")
    load_rate = _get(env, "LOAD_RATE")
    if "load" in wants:
        try:
            if not float(load_rate) > 0:
                raise ValueError
        except ValueError:
            raise BadInput(f"LOAD_RATE={load_rate}: give a rate above 0 (default {_DEFAULTS['LOAD_RATE']})") from None
    return Settings(
        bin=binary,
        rounds=rounds,
        sections=sections,
        bench_out=bench_out,
        meta_files=_count(env, "META_FILES", 1) if "workloads" in wants else 0,
        repro_runs=_count(env, "REPRO_RUNS", 2) if "repro" in wants else 0,
        drift_runs=_count(env, "DRIFT_RUNS", 3) if "drift" in wants else 0,
        flip_runs=_count(env, "FLIP_RUNS", 1) if "flip" in wants else 0,
        iozone=iozone,
        iodepth_dir=iodepth_dir,
        fio_nfs=env.get("FIO_NFS") or None,
        load_rate=load_rate,
        load_many=_count(env, "LOAD_MANY", 1) if "load" in wants else 0,
    )
