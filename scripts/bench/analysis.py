"""The bench's arithmetic and its printed lines.

Everything here is a pure function of its inputs (no processes, no files): parsing what the
tools print, medians, ratios, per-round ratios with their median and range, and the line
each figure is printed on. The sections run the tools and hand the numbers here; each
`*_lines` function returns the lines to print and the figures (Check) for the summary.
Tested alone by test_analysis.py.
"""

import collections
import json
import math
import re
import statistics as st
from dataclasses import dataclass

from .targets import TARGETS


# --- Figures for the summary --------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    """One figure for the summary: its value, how it is shown, and the key of its target
    in TARGETS (None: the bench states no target for it)."""

    label: str
    value: float
    shown: str
    target: str | None = None

    @property
    def met(self) -> bool | None:
        """True or False against the target; None without one."""
        return None if self.target is None else TARGETS[self.target].met(self.value)


def ratio_check(label: str, value: float, target: str | None = None) -> Check:
    """A ratio for the summary, shown to three decimals (the lines show two)."""
    return Check(label, value, f"{value:.3f}x", target)


def summary_lines(checks: list[Check]) -> list[str]:
    """The summary table: every figure, its value, its target and whether it was met."""
    if not checks:
        return ["summary: no figures (every section was skipped or failed)"]
    rows = []
    for c in checks:
        if c.target is None:
            rows.append((c.label, c.shown, "", "no target"))
        else:
            t = TARGETS[c.target]
            target = f"within {t}" if t.op == "within" else str(t)
            rows.append((c.label, c.shown, target, "met" if c.met else "not met"))
    width = [max(len(r[i]) for r in rows + [("figure", "value", "target", "")]) for i in range(3)]
    lines = [f"summary: {len(checks)} figures",
             f"{'figure':<{width[0]}}  {'value':>{width[1]}}  {'target':<{width[2]}}  result"]
    lines += [f"{label:<{width[0]}}  {shown:>{width[1]}}  {target:<{width[2]}}  {result}"
              for label, shown, target, result in rows]
    judged = [c for c in checks if c.target is not None]
    lines.append(f"targets met: {sum(1 for c in judged if c.met)} of {len(judged)}")
    return lines


# --- Arithmetic ---------------------------------------------------------------------------


def ratio(a: float, b: float) -> float:
    """a over b; NaN when b is zero (a tool that measured nothing)."""
    return a / b if b else math.nan


def spread(values) -> tuple[float, float, float]:
    """Median, lowest and highest of per-round figures (ratios, mostly)."""
    q = sorted(values)
    return st.median(q), q[0], q[-1]


def cv_percent(values) -> float:
    """Coefficient of variation, in percent (sample standard deviation over the mean)."""
    return st.stdev(values) / st.mean(values) * 100


def size_bytes(size: str) -> int:
    """Bytes of a size written as fio and sharebench take it: "64k", "16m"."""
    return int(size[:-1]) * {"k": 1 << 10, "m": 1 << 20}[size[-1]]


# --- What the tools print -----------------------------------------------------------------


def fio_job(text: str) -> dict:
    """The first job of fio's JSON output; what a build prints before the JSON is skipped."""
    return json.loads(text[text.index("{"):])["jobs"][0]


def fio_kib_s(job: dict) -> float:
    """fio's throughput in KiB/s, of the side that moved data (write, else read)."""
    side = job["write"] if job["write"]["io_bytes"] else job["read"]
    return side["bw_bytes"] / 1024


def fio_bw(job: dict) -> float:
    """fio's own "bw" figure (KiB/s) of the side that moved data (read, else write)."""
    return job["read"]["bw"] or job["write"]["bw"]


def fio_iops(job: dict) -> float:
    """fio's operations per second (read, else write)."""
    return job["read"]["iops"] or job["write"]["iops"]


# The first line with "(N kb/s)" or "(N KiloBytes/sec)", as smbclient's put and get end.
_SMBCLIENT_RATE = re.compile(r".*\(([0-9.]*) (?:kb/s|KiloBytes/sec)\)")


def smbclient_kib_s(text: str) -> float | None:
    """The KiB/s smbclient reports for a put or get; None if it reported none."""
    for line in text.splitlines():
        m = _SMBCLIENT_RATE.match(line)
        if m:
            try:
                return float(m.group(1))
            except ValueError:
                return None
    return None


# IOzone's result row for a 64 MiB file: size (KiB), record (KiB), write, rewrite, read,
# reread, ...
_IOZONE_ROW = re.compile(r"^ +65536 +(\d+) +\d")

# The operations of IOzone's -i 0 -i 1, in its row's order, as sharebench names them.
IOZONE_OPS = ("write", "rewrite", "read", "reread")


def iozone_row(text: str, record_kib: int) -> dict[str, float] | None:
    """IOzone's KiB/s of IOZONE_OPS for a 64 MiB file at `record_kib` records; None if
    it printed no such row."""
    for line in text.splitlines():
        m = _IOZONE_ROW.match(line)
        if m and int(m.group(1)) == record_kib:
            fields = line.split()
            return dict(zip(IOZONE_OPS, (float(f) for f in fields[2:6])))
    return None


# --- sharebench's results.jsonl records ---------------------------------------------------


def first_ok(records: list[dict], op: str) -> float | None:
    """KiB/s of the first ok record of op (a run of one operation, one scope)."""
    for r in records:
        if r["op"] == op and r["status"] == "ok":
            return r["throughput_kib_s"]
    return None


def cell_ratios(records: list[dict], mine: str) -> list[tuple[str, int, float]]:
    """Per cell (op, record size) of a run of two targets: the median of target `mine`
    over the other target's median."""
    cells = collections.defaultdict(list)
    for r in records:
        if r["status"] == "ok":
            cells[(r["op"], r["record_size"], r["target"] == mine)].append(r["throughput_kib_s"])
    return [
        (op, rs, ratio(st.median(kib), st.median(cells[(op, rs, False)])))
        for (op, rs, is_mine), kib in cells.items()
        if is_mine and (op, rs, False) in cells
    ]


def _medians(records: list[dict], key, runs_only: bool) -> dict:
    """Median KiB/s of ok records grouped by key(record); runs_only leaves out per-worker
    records (children-see throughput)."""
    cells = collections.defaultdict(list)
    for r in records:
        if r["status"] == "ok" and not (runs_only and r.get("scope") == "worker"):
            cells[key(r)].append(r["throughput_kib_s"])
    return {k: st.median(v) for k, v in cells.items()}


def depth8_ratios(deep: list[dict], lib: list[dict]) -> list[tuple[str, int, float]]:
    """Per (op, record size): smb2 at depth 8 (one run) over libsmbclient (another run)."""
    a = _medians(deep, lambda r: (r["op"], r["record_size"]), runs_only=False)
    b = _medians(lib, lambda r: (r["op"], r["record_size"]), runs_only=False)
    return [(op, rs, ratio(kib, b[(op, rs)])) for (op, rs), kib in a.items() if (op, rs) in b]


def worker_ratios(one: list[dict], four: list[dict], smb2: str) -> list[tuple[str, str, float]]:
    """Per (op, client): the run with 4 workers over the run with 1 (run-level records);
    the client is "smb2" for target smb2, else "libsmbclient"."""

    def key(r):
        return (r["op"], "smb2" if r["target"] == smb2 else "libsmbclient")

    a = _medians(one, key, runs_only=True)
    b = _medians(four, key, runs_only=True)
    return [(op, client, ratio(kib, a[(op, client)])) for (op, client), kib in b.items() if (op, client) in a]


def lab_ratios(a_records: list[dict], b_records: list[dict]) -> list[tuple[str, str, float, float, float]]:
    """Per (target, op): run b's median over run a's (run-level records), with both
    medians: (target, op, ratio, a, b)."""

    def key(r):
        return (r["target"], r["op"])

    a = _medians(a_records, key, runs_only=True)
    b = _medians(b_records, key, runs_only=True)
    return [(t, op, ratio(kib, a[(t, op)]), a[(t, op)], kib) for (t, op), kib in b.items() if (t, op) in a]


def op_median(records: list[dict], op: str) -> float | None:
    """Median KiB/s of op's ok run-level records; None without any."""
    v = [r["throughput_kib_s"] for r in records if r["status"] == "ok" and r["op"] == op and r.get("scope") != "worker"]
    return st.median(v) if v else None


def metadata_rates(records: list[dict]) -> tuple[float, float] | None:
    """Create and delete rates of a metadata run: Connectathon test1 and test2, each whole
    test over its wall time (files and directories alike), as fio's filecreate and
    filedelete rates are whole-job rates. None if either is missing."""
    rates = {}
    for r in records:
        if r["status"] == "ok" and r["op"] == "whole-test" and r.get("test") in ("test1", "test2"):
            rates[r["test"]] = r["ops_per_s"]
    if "test1" not in rates or "test2" not in rates:
        return None
    return rates["test1"], rates["test2"]


def smallfile_seconds(records: list[dict]) -> tuple[float, float] | None:
    """Seconds of sharebench's copy and of `rsync -a` in a smallfiles run with --with-rsync."""
    s = {r["op"]: r["seconds"] for r in records}
    if "copy" not in s or "rsync-copy" not in s:
        return None
    return s["copy"], s["rsync-copy"]


def cells(records: list[dict]) -> dict:
    """KiB/s of ok records per cell (op, file size, record size)."""
    out = collections.defaultdict(list)
    for r in records:
        if r["status"] == "ok":
            out[(r["op"], r["file_size"], r["record_size"])].append(r["throughput_kib_s"])
    return dict(out)


# --- fio section --------------------------------------------------------------------------


def fio_lines(label: str, sharebench: list[float], fio: list[float], rounds: int) -> tuple[list[str], list[Check]]:
    """One comparison with fio: medians over the rounds and their ratio."""
    s, f = st.median(sharebench), st.median(fio)
    q = ratio(s, f)
    line = (
        f"{label:<34} sharebench {s / 1024:10.1f} MiB/s  fio {f / 1024:10.1f} MiB/s"
        f"  ratio {q:5.2f}  ({rounds} rounds, medians)"
    )
    return [line], [ratio_check(f"{label}, sharebench/fio", q, "fio")]


def rss_lines(kib: int) -> tuple[list[str], list[Check]]:
    """Peak memory of the full --auto matrix against its limit."""
    limit = TARGETS["rss"].bound
    line = (f"peak RSS, full --auto matrix on null://: {kib // 1024} MiB"
            f" (limit 64 MiB + 16 MiB record buffer = {limit} MiB)")
    mib = kib / 1024
    return [line], [Check("peak RSS, full --auto matrix on null://", mib, f"{mib:.1f} MiB", "rss")]


# --- native section -----------------------------------------------------------------------


def native_lines(
    label: str, ours: list[float], theirs: list[float], tool: str, rounds: int, target: str | None
) -> tuple[list[str], list[Check]]:
    """sharebench against a command-line tool: medians (0 if a side has no figure) and
    their ratio. `tool` is printed as given (padded names keep the columns)."""
    a = st.median(ours) if ours else 0
    b = st.median(theirs) if theirs else 0
    q = ratio(a, b)
    line = (
        f"{label:<34} sharebench {a / 1024:10.1f} MiB/s  {tool} {b / 1024:10.1f} MiB/s"
        f"  ratio {q:5.2f}  ({rounds} rounds, medians)"
    )
    return [line], [ratio_check(f"{label}, sharebench/{tool.strip()}", q, target)]


def nfs41_lines(rows: list[tuple[str, int, float]]) -> tuple[list[str], list[Check]]:
    """NFSv4.1 over NFSv3 per (op, record size): median and range of the per-round ratios."""
    ratios = collections.defaultdict(list)
    for op, rs, q in rows:
        ratios[(op, int(rs))].append(q)
    lines, checks = [], []
    for (op, rs), q in sorted(ratios.items(), key=lambda kv: (kv[0][0] != "write", kv[0][1])):
        med, lo, hi = spread(q)
        label = f"nfs v4.1/v3 {op} {rs // 1024}k, 16m file"
        lines.append(
            f"{label:<34} ratio {med:.2f}x (range {lo:.2f}-{hi:.2f}, target {TARGETS['nfs41']}),"
            f" {len(q)} rounds of 5 interleaved samples"
        )
        checks.append(ratio_check(label, med, "nfs41"))
    return lines, checks


def smb_lines(rows: list[tuple[str, str, int | str, float]]) -> tuple[list[str], list[Check]]:
    """The two SMB clients: rows (kind, op, what, ratio) with kind "depth1" or "depth8"
    (what: the record size) or "workers" (what: the client). Median and range per round."""
    ratios = collections.defaultdict(list)
    for kind, op, what, q in rows:
        ratios[(kind, op, what)].append(q)
    lines, checks = [], []
    for (kind, op, what), q in sorted(ratios.items(), key=lambda kv: (kv[0][0], kv[0][1] != "write", kv[0][2])):
        if kind in ("depth1", "depth8"):
            rs = int(what)
            size = f"{rs >> 20}m" if rs >= 1 << 20 else f"{rs >> 10}k"
            depth = "depth 8/1" if kind == "depth8" else "depth 1"
            file = "16m" if rs < 65536 else "64m"
            label = f"smb2/libsmbclient {op} {size}, {file}, {depth}"
            key = "smb_clients" if rs >= 65536 else None
            target = f"target {TARGETS['smb_clients']}" if key else "higher is better"
        else:
            label, key = f"smb {what} 4 workers/1, {op} 4k", "smb_workers"
            target = f"target {TARGETS['smb_workers']}"
        med, lo, hi = spread(q)
        lines.append(f"{label:<48} ratio {med:.2f}x (range {lo:.2f}-{hi:.2f}, {target}), {len(q)} rounds")
        checks.append(ratio_check(label, med, key))
    return lines, checks


# --- workloads section --------------------------------------------------------------------


def workloads_lines(
    n: int, rounds: int, creates, deletes, fio_creates, fio_deletes, copies, rsyncs
) -> tuple[list[str], list[Check]]:
    """Create and delete rates against fio's, and small-file copy time against rsync's:
    medians over the rounds and their ratios."""
    mc, md, ff, fe, c, r = (st.median(v) for v in (creates, deletes, fio_creates, fio_deletes, copies, rsyncs))
    meta, copy = TARGETS["metadata"], TARGETS["small_copy"]
    create, delete = f"tmpfs create {n} files (ops/s, wall)", f"tmpfs delete {n} files (ops/s, wall)"
    small = "small-file copy 1800 files (s)"
    qc, qd, qs = ratio(mc, ff), ratio(md, fe), ratio(c, r)
    lines = [
        f"{create:<34} sharebench {mc:10.0f}        fio {ff:10.0f}        ratio {qc:5.2f}"
        f"  (target {meta}; {rounds} rounds, medians)",
        f"{delete:<34} sharebench {md:10.0f}        fio {fe:10.0f}        ratio {qd:5.2f}  (target {meta})",
        f"{small:<34} sharebench {c:10.3f} s      rsync {r:8.3f} s      ratio {qs:5.2f}"
        f"  (sharebench/rsync, target {copy})",
    ]
    checks = [
        ratio_check(f"tmpfs create {n} files, sharebench/fio", qc, "metadata"),
        ratio_check(f"tmpfs delete {n} files, sharebench/fio", qd, "metadata"),
        ratio_check("small-file copy 1800 files, time sharebench/rsync", qs, "small_copy"),
    ]
    return lines, checks


# --- mpi section --------------------------------------------------------------------------


def mpi_lines(ms: list[float], rounds: int) -> tuple[list[str], list[Check]]:
    """Barrier and gather per measurement: median over the rounds."""
    m = st.median(ms)
    line = (f"{'mpi 3 ranks barrier+gather':<34} {m:8.3f} ms per measurement"
            f" (target {TARGETS['mpi']}; {rounds} rounds of 300, median)")
    return [line], [Check("mpi 3 ranks barrier+gather, ms per measurement", m, f"{m:.3f} ms", "mpi")]


# --- repro section ------------------------------------------------------------------------


def _levels(medians: dict, runs: int) -> list[float]:
    """Each run's level: the median over cells of its figure against the cell's mean over
    the runs (cells measured in every run). A run slow for both tools is the machine's
    minute, not either tool's."""
    full = [v for v in medians.values() if len(v) == runs]
    return [st.median(v[i] / st.mean(v) for v in full) for i in range(runs)]


def _within(medians: dict, runs: int) -> float:
    """Median CV over cells with each run's level divided out: each cell's own
    reproducibility, apart from the stretch of minutes every cell of a run shared."""
    lv = _levels(medians, runs)
    adjusted = ([x / level for x, level in zip(v, lv)] for v in medians.values() if len(v) == runs)
    return st.median(cv_percent(a) for a in adjusted)


def repro_lines(sharebench_runs: list[list[dict]], fio_runs: list[list[tuple]]) -> tuple[list[str], list[Check]]:
    """The spread of cell medians across independent runs, sharebench's and fio's.

    sharebench_runs: each run's results records; fio_runs: each run's fio rows
    (op, file size, record size, KiB/s)."""
    runs = len(sharebench_runs)
    sb, fio = collections.defaultdict(list), collections.defaultdict(list)
    stops = collections.defaultdict(int)
    for records in sharebench_runs:
        for k, v in cells(records).items():
            sb[k].append(st.median(v))
        for r in records:
            if r.get("reps_stop") and r["op"] == "write":
                stops[r["reps_stop"]] += 1
    for rows in fio_runs:
        for op, fs, bs, kib_s in rows:
            fio[(op, int(fs), int(bs))].append(float(kib_s))
    lines, checks = [], []

    def spread_line(medians, label, targets):
        cv = sorted((cv_percent(v), k) for k, v in medians.items() if len(v) > 1)
        worst, med = cv[-1], st.median([c for c, _ in cv])
        t0 = f" (target {TARGETS[targets[0]]})" if targets else ""
        t1 = f" (target {TARGETS[targets[1]]})" if targets else ""
        op, fs, rs = worst[1]
        lines.append(
            f"{label:<34} median CV {med:.1f}%{t0}, max {worst[0]:.1f}% at {op} {fs >> 20}m/{rs >> 10}k{t1}; "
            f"{len(cv)} cells, {runs} runs"
        )
        name = "sharebench" if targets else "fio"
        median_key, max_key = targets or (None, None)
        checks.append(Check(f"repro {name}: median CV of cell medians across runs", med, f"{med:.2f}%", median_key))
        checks.append(Check(f"repro {name}: max CV of cell medians across runs", worst[0], f"{worst[0]:.2f}%", max_key))

    spread_line(sb, "repro tmpfs medians across runs", ("median_cv", "max_cv"))
    spread_line(fio, "  fio, same cells, alternated", ())
    lines.append(
        f"{'  each run against the mean':<34} sharebench "
        + " ".join(f"{x:.3f}" for x in _levels(sb, runs))
        + "  fio "
        + " ".join(f"{x:.3f}" for x in _levels(fio, runs))
    )
    lines.append(
        f"{'  without each run level':<34} median CV sharebench {_within(sb, runs):.1f}%, fio {_within(fio, runs):.1f}%"
    )
    lines.append(
        f"{'  why cells stopped sampling':<34} "
        + ", ".join(f"{k} {v}" for k, v in sorted(stops.items()))
        + f" of {sum(stops.values())} (file size, record size) pairs over the {runs} runs"
    )
    return lines, checks


_FINDINGS = re.compile(r"(\d+) findings \((\d+) naming a winner\)")


def aa_lines(report: str) -> tuple[list[str], list[Check]]:
    """The A/A check: the report's findings line (an A/A run must name no winner)."""
    lines, checks = [], []
    for line in report.splitlines():
        if "findings" in line:
            lines.append("A/A check (must name no winner): " + line)
            m = _FINDINGS.search(line)
            if m and not checks:
                n = int(m.group(2))
                checks.append(Check("A/A check: findings naming a winner", n, str(n), "aa"))
    return lines, checks


# --- drift section ------------------------------------------------------------------------


def drift_lines(secs: int, runs: list[dict]) -> tuple[list[str], list[Check]]:
    """How the spread of pooled medians falls with the length of a run: runs are the
    cells (see cells()) of short runs of 6 rounds in a row; blocks of k runs pooled are
    one run of 6k rounds."""
    keys = sorted(set.intersection(*(set(c) for c in runs)))
    lines = [
        f"drift: {len(runs)} runs of 6 rounds in a row, {secs} s each;"
        " blocks of k runs pooled = one run of 6k rounds"
    ]
    checks = []
    for k in (1, 2, 5, 10, 20, 40):
        blocks = [runs[i:i + k] for i in range(0, len(runs) - k + 1, k)]
        if len(blocks) < 3:
            break
        medians = {c: [st.median(x for r in b for x in r[c]) for b in blocks] for c in keys}
        cv = {c: cv_percent(v) for c, v in medians.items()}
        cvs = sorted(cv.values())
        # Writes take new pages each pass, whose cost moves with the host: shown apart.
        rest = sorted(v for c, v in cv.items() if c[0] != "write")
        writes = st.median(v for c, v in cv.items() if c[0] == "write")
        levels = [st.median(v[i] / st.mean(v) for v in medians.values()) for i in range(len(blocks))]
        med = st.median(cvs)
        lines.append(
            f"  {6 * k:>3} rounds ({k * secs:>4} s a run): median CV {med:4.1f}% (target {TARGETS['median_cv']}),"
            f" max {cvs[-1]:4.1f}% (target {TARGETS['max_cv']}); writes {writes:.1f}%, the rest {st.median(rest):.1f}%"
            f" (max {rest[-1]:.1f}%); run levels spread {st.stdev(levels) * 100:.1f}%, {len(blocks)} runs"
        )
        checks.append(Check(f"drift {6 * k} rounds a run: median CV", med, f"{med:.2f}%", "median_cv"))
        checks.append(Check(f"drift {6 * k} rounds a run: max CV", cvs[-1], f"{cvs[-1]:.2f}%", "max_cv"))
    return lines, checks


# --- flip section -------------------------------------------------------------------------


@dataclass(frozen=True)
class FlipRun:
    """What one study run's log says: the headline's winner (or "no winner"), the headline,
    each claim's (verdict, change in %) and each claim's intervals."""

    winner: str
    headline: str
    claims: dict
    intervals: dict


_HEADLINE = re.compile(r"^\S+ is faster than |^\S+ and \S+ are equivalent|^Neither ")
# A claim's line: its id and the rest, which holds its intervals.
_CLAIM_LINE = re.compile(r"\s+(?:agrees|disagrees|inconclusive|measured)\s+(\S+): (.*)")
# Every interval a claim's line gives, in order ("+4.0% [-1.4%, +9.7%]", "97% [96%, 98%]",
# dips' "+0.20 [-0.31, +0.71] points").
_INTERVAL = re.compile(r"\[([+-]?\d+(?:\.\d+)?)%?, ([+-]?\d+(?:\.\d+)?)%?\]")
# A claim or figure: its id, its change, and the comparison's own verdict.
_CLAIM = re.compile(
    r"\s+(?:agrees|disagrees|inconclusive|measured)\s+(\S+): .*?: ([+-]\d+\.\d)% \[.*?\]"
    r" \((faster|slower|equivalent|inconclusive)"
)


def flip_run(log: str) -> FlipRun:
    """Reads one nfs-server-configs study run's log."""
    lines = log.splitlines()
    head = next((line for line in lines if _HEADLINE.search(line)), "?")
    claims, intervals = {}, {}
    for line in lines:
        m = _CLAIM_LINE.match(line)
        if m:
            intervals[m.group(1)] = [(float(a), float(b)) for a, b in _INTERVAL.findall(m.group(2))]
        m = _CLAIM.match(line)
        if m:
            claims[m.group(1)] = (m.group(3), float(m.group(2)))
    winner = re.match(r"(\S+) is faster than", head)
    # Equivalent and undecided both name no winner: only a winner can flip.
    return FlipRun(winner.group(1) if winner else "no winner", head.split(" (")[0], claims, intervals)


def flip_lines(runs: list[FlipRun]) -> tuple[list[str], list[Check]]:
    """Whether the runs agree: the same headline winner; no figure called a winner in one
    run and reversed or equivalent in another; no figure of opposite sign in two runs
    unless equivalent or inconclusive in both; every figure's intervals overlapping."""
    lines = [f"flip run {i}: headline: {r.headline}" for i, r in enumerate(runs, 1)]
    winners = {r.winner for r in runs}
    same_head = len(winners) == 1
    # Every figure's intervals (speed, steadiness, CPU), run against run: the pairs that do
    # not overlap (issue 50: a figure's interval must hold when measured again).
    apart, pairs = [], 0
    for cid in sorted(set().union(*(r.intervals.keys() for r in runs))):
        seen = [r.intervals[cid] for r in runs if cid in r.intervals]
        for i, x in enumerate(seen):
            for y in seen[i + 1:]:
                for (a, b), (c, d) in zip(x, y):
                    pairs += 1
                    if b < c or d < a:
                        apart.append(f"{cid} [{a:+.1f}, {b:+.1f}] vs [{c:+.1f}, {d:+.1f}]")
    flips, sign_changes, disagree = [], [], []
    undecided = ("equivalent", "inconclusive")
    for cid in sorted(set().union(*(r.claims.keys() for r in runs))):
        seen = [r.claims[cid] for r in runs if cid in r.claims]
        decided = {v for v, _ in seen if v in ("faster", "slower")}
        if len(decided) > 1 or (decided and any(v == "equivalent" for v, _ in seen)):
            flips.append(cid)
        if len({x > 0 for _, x in seen}) > 1:
            sign_changes.append(cid)
        # The rule for two runs (deliverable 3), applied to every figure and every
        # pair of runs: the same sign, or equivalent/inconclusive in both.
        if any(
            (x > 0) != (y > 0) and not (v in undecided and w in undecided)
            for i, (v, x) in enumerate(seen)
            for (w, y) in seen[i + 1:]
        ):
            disagree.append(cid)
        lines.append(f"  {cid:<28} " + "  ".join(f"{v} {x:+.1f}%" for v, x in seen))
    zero = TARGETS["flip"]

    def named(sep, ids):
        return sep + ", ".join(ids) if ids else ""

    lines.append(
        f"{'flip check (nfs-server-configs)':<34} {len(runs)} runs:"
        f" headline winner the same: {'yes' if same_head else 'NO'}; "
        f"figures called a winner in one run and reversed or equivalent in another:"
        f" {len(flips)} (target {zero}){named(' ', flips)}; "
        f"figures of opposite sign in two runs, not equivalent or inconclusive in both:"
        f" {len(disagree)} (target {zero}){named(' ', disagree)}; "
        f"figures changing sign: {len(sign_changes)}{named(' ', sign_changes)}; "
        f"intervals of one figure in two runs that do not overlap: {len(apart)} of {pairs}"
        f" (target {zero}){': ' + '; '.join(apart) if apart else ''}"
    )
    checks = [
        Check("flip: headline winners besides the first", len(winners) - 1, str(len(winners) - 1), "flip"),
        Check("flip: figures reversed or made equivalent", len(flips), str(len(flips)), "flip"),
        Check("flip: figures of opposite sign, not undecided in both", len(disagree), str(len(disagree)), "flip"),
        Check("flip: figures changing sign", len(sign_changes), str(len(sign_changes))),
        Check("flip: intervals that do not overlap", len(apart), str(len(apart)), "flip"),
    ]
    return lines, checks


# --- iozone section -----------------------------------------------------------------------


def iozone_lines(rows: list[tuple]) -> tuple[list[str], list[Check]]:
    """Each cell against IOzone: rows (round, kind, record KiB, op, KiB/s) with kind
    "iozone", "sharebench-100ms" (default samples) or "sharebench-0" (single pass); per
    round and cell sharebench over IOzone, then the median and range over the rounds that
    have both. Cells in record-size order, then IOZONE_OPS order."""
    kib = {(rnd, kind, rec, op): v for rnd, kind, rec, op, v in rows}
    rounds = sorted({r[0] for r in rows})
    records = sorted({r[2] for r in rows})
    lines, checks = [], []
    for kind, label in (("sharebench-100ms", "default samples"), ("sharebench-0", "single pass")):
        for rec in records:
            for op in IOZONE_OPS:
                q = [ratio(kib[(n, kind, rec, op)], kib[(n, "iozone", rec, op)]) for n in rounds
                     if (n, kind, rec, op) in kib and (n, "iozone", rec, op) in kib]
                if not q:
                    continue
                med, lo, hi = spread(q)
                name = f"{_record_name(rec)} {op} vs IOzone, {label}"
                lines.append(
                    f"{name:<36} median ratio {med:.2f}x (range {lo:.2f}-{hi:.2f}, {len(q)} interleaved rounds;"
                    f" target {TARGETS['iozone']} with default samples)"
                )
                checks.append(ratio_check(name, med, "iozone" if kind == "sharebench-100ms" else None))
    return lines, checks


def _record_name(kib: int) -> str:
    """4k, 64k, 1m: a record size as the bench's lines name it."""
    return f"{kib // 1024}m" if kib >= 1024 and kib % 1024 == 0 else f"{kib}k"


# --- iodepth section ----------------------------------------------------------------------


def iodepth_lines(
    rows: list[tuple[str, str, int, float]], depth: int, disk_label: str
) -> tuple[list[str], list[Check]]:
    """4 KiB random reads at depth against fio io_uring at the same depth, and against
    sharebench at depth 1: rows (where, tool, depth, KiB/s) with where "disk" or "tmpfs",
    tool "sb" or "fio"; per round ratios over complete rounds, median and range."""

    def series(where, tool, d):
        return [kib for w, t, dd, kib in rows if w == where and t == tool and dd == d]

    lines, checks = [], []
    for where, label in (("disk", disk_label), ("tmpfs", "tmpfs, page cache")):
        sb, fio, one = series(where, "sb", depth), series(where, "fio", depth), series(where, "sb", 1)
        n = min(len(sb), len(fio), len(one))  # complete rounds only (a failed run ends the loop)
        if n == 0:
            lines.append(f"4k random-read, depth {depth}, {label}: no complete round")
            continue
        sb, fio, one = sb[:n], fio[:n], one[:n]
        q, qlo, qhi = spread(ratio(s, f) for s, f in zip(sb, fio))
        g, glo, ghi = spread(ratio(s, o) for s, o in zip(sb, one))
        name = f"4k random-read, depth {depth}, {label}"
        lines.append(
            f"{name:<48} sharebench {st.median(sb) / 4:8.0f} ops/s"
            f"  fio io_uring {st.median(fio) / 4:8.0f} ops/s  ratio {q:.2f}x (range {qlo:.2f}-{qhi:.2f})"
            f"  vs depth 1: {g:.2f}x (range {glo:.2f}-{ghi:.2f}), {n} interleaved rounds"
        )
        checks.append(ratio_check(f"{name}, sharebench/fio io_uring", q, "iodepth"))
        checks.append(ratio_check(f"{name}, sharebench depth {depth}/1", g))
    return lines, checks


# --- labdepth section ---------------------------------------------------------------------


def fio_nfs_lines(rows: list[tuple[str, int, float, float]]) -> tuple[list[str], list[Check]]:
    """lab:nfs3 against fio's nfs engine: rows (op, depth, sharebench KiB/s, fio KiB/s), one
    per round; per depth the medians and the per-round ratios, then depth 8 over depth 1
    for each tool."""
    by = collections.defaultdict(list)
    for op, d, sb, fio in rows:
        by[(op, int(d))].append((float(sb), float(fio)))
    lines, checks = [], []
    for op in ("rewrite", "read"):
        for d in (1, 8):
            v = by.get((op, d), [])
            if not v:
                continue
            med, lo, hi = spread(ratio(sb, fio) for sb, fio in v)
            lines.append(
                f"lab:nfs3 {op} 64k, depth {d}: sharebench {st.median(x[0] for x in v) / 1024:6.0f}"
                f" vs fio nfs {st.median(x[1] for x in v) / 1024:6.0f} MiB/s  ratio {med:.2f}"
                f" (range {lo:.2f}-{hi:.2f}), {len(v)} rounds"
            )
            checks.append(ratio_check(f"lab:nfs3 {op} 64k, depth {d}, sharebench/fio nfs", med))
        one, eight = by.get((op, 1), []), by.get((op, 8), [])
        if one and eight:
            for who, k in (("sharebench", 0), ("fio nfs", 1)):
                r = ratio(st.median(x[k] for x in eight), st.median(x[k] for x in one))
                lines.append(f"lab:nfs3 {op} 64k, depth 8/1, {who}: {r:.2f}x")
                checks.append(ratio_check(f"lab:nfs3 {op} 64k, depth 8/1, {who}", r))
    return lines, checks


def labdepth_lines(rows: list[tuple[str, str, str, float, float, float]]) -> tuple[list[str], list[Check]]:
    """The lab's clients at depth 8 over depth 1 and with 4 workers over 1: rows (kind,
    target, op, ratio, KiB/s of the one, KiB/s of the many) with kind "depth" or
    "workers"; per (kind, target, op) the median and range of the ratios."""
    by = collections.defaultdict(list)
    for kind, target, op, q, one, many in rows:
        by[(kind, target, op)].append((float(q), float(one), float(many)))
    lines, checks = [], []
    for (kind, target, op), v in sorted(by.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] != "write")):
        med, lo, hi = spread(x[0] for x in v)
        one, many = st.median(x[1] for x in v) / 1024, st.median(x[2] for x in v) / 1024
        what = f"{op} 64k, depth 8/1" if kind == "depth" else f"{op} 4k, 4 workers/1"
        name = f"{target} {what}"
        lines.append(
            f"{name:<44} {many:7.0f} vs {one:5.0f} MiB/s  ratio {med:.2f}x"
            f" (range {lo:.2f}-{hi:.2f}, target {TARGETS['labdepth']}), {len(v)} rounds"
        )
        # The bar is lab:smb's; lab:smb-libsmbclient serialises its workers and is only shown
        # beside it (its line still prints the target, as bench.sh's did).
        checks.append(ratio_check(name, med, None if target == "lab:smb-libsmbclient" else "labdepth"))
    return lines, checks


# --- load section -------------------------------------------------------------------------


def load_lines(rows: list[tuple[int, float, float, float]], rate: str, many: int) -> tuple[list[str], list[Check]]:
    """Client CPU per request of many workers over one worker at the same total rate: rows
    (workers, CPU us per request, achieved/asked, p99 us), one worker's and many's in turn."""
    one, more = rows[0::2], rows[1::2]
    q, lo, hi = spread(ratio(m[1], o[1]) for o, m in zip(one, more))

    def cpu(rs):
        return st.median(r[1] for r in rs)

    def kept(rs):
        return min(r[2] for r in rs)

    def p99(rs):
        return st.median(r[3] for r in rs)

    achieved = min(kept(one), kept(more))
    label = f"load point, build mix, {rate}/s on tmpfs"
    line = (
        f"{label:<40} CPU/request 1 worker {cpu(one):6.1f} us"
        f"  {many} workers {cpu(more):6.1f} us  ratio {q:.2f}x (range {lo:.2f}-{hi:.2f}, target {TARGETS['load']}),"
        f" achieved/asked >= {achieved:.3f}, p99 {p99(one):.0f}/{p99(more):.0f} us,"
        f" {min(len(one), len(more))} interleaved rounds"
    )
    checks = [
        ratio_check(f"{label}, CPU/request {many} workers/1", q, "load"),
        ratio_check(f"{label}, achieved/asked (lowest)", achieved),
    ]
    return [line], checks
