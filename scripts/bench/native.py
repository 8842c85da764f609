"""The native section: sharebench's NFS and SMB clients (crates/backends nfs.rs, smb.rs)
against the command-line tools of the same stacks, then NFSv4.1 against NFSv3 and the two
SMB clients against each other, on servers of the bench's own on 127.0.0.1.

Sequential write and read of a 256 MiB file at 1 MiB records: nfs:// (libnfs, NFSv3)
against nfs-cp (libnfs, 1 MiB preads/pwrites), smb:// (the smb2 client, SMB 3.1.1,
signing) against smbclient put/get; interleaved, medians and ratios over ROUNDS rounds.
smbclient's put and get keep several requests in flight (Samba's cli_push, cli_pull), so
smb:// runs at depth 1 and at --iodepth 8, and libsmbclient (one request at a time) is
shown beside them. sharebench and smbclient report the transfer alone; nfs-cp is timed as a
whole command (process start and mount included, a few ms), and its read writes a tmpfs
file (it refuses /dev/null), so nfs-cat > /dev/null is a second read baseline.

The servers (NFS-Ganesha VFS, smbd, rpcbind if none runs) listen on 127.0.0.1 only, keep
their files on tmpfs (the comparison is of clients, not of a disk's writeback), and are
stopped by PID when the bench ends (Context.close).
"""

import os
import secrets
import time

from . import analysis, running
from .running import DEVNULL, PIPE, STDOUT

TOOLS = ("ganesha.nfsd", "smbd", "smbpasswd", "rpcbind", "rpcinfo", "smbclient", "nfs-cp", "nfs-cat")
FILE_KIB = 262144  # the 256 MiB file

GANESHA_CONF = """\
NFS_CORE_PARAM {{ Protocols = 3, 4; Bind_addr = 127.0.0.1; Enable_NLM = false; Enable_RQUOTA = false; }}
NFSV4 {{ Graceless = true; RecoveryBackend = fs; RecoveryRoot = {d}/recov; Minor_Versions = 0, 1, 2; pnfs_mds = false; }}
EXPORT {{ Export_Id = 77; Path = {d}/export; Pseudo = /bench; Access_Type = RW; Squash = No_Root_Squash; SecType = sys; FSAL {{ Name = VFS; }} }}
"""

SMB_CONF = """\
[global]
  smb ports = 4445
  interfaces = 127.0.0.1
  bind interfaces only = yes
  disable netbios = yes
  load printers = no
  printing = bsd
  printcap name = /dev/null
  disable spoolss = yes
  server role = standalone server
  server min protocol = SMB3
  server signing = mandatory
  map to guest = never
  passdb backend = tdbsam:{d}/private/passdb.tdb
  username map = {d}/users.map
  lock directory = {d}/lock
  state directory = {d}/state
  cache directory = {d}/cache
  private dir = {d}/private
  pid directory = {d}/pid
  ncalrpc dir = {d}/ncalrpc
  log file = {d}/log/log.%m
[share]
  path = {d}/share
  read only = no
"""

# The printed comparisons: label, sharebench's figures, the tool's, the tool as printed
# (padded to line the columns up), target key (None: shown beside, no target).
LINES = (
    ("nfs v3 1m write 256m", "nfs write", "nfs-cp write", "nfs-cp   ", "native"),
    ("nfs v3 1m read 256m", "nfs read", "nfs-cp read", "nfs-cp   ", "native"),
    ("nfs v3 1m read 256m", "nfs read", "nfs-cat read", "nfs-cat  ", "native"),
    ("smb3 1m write 256m", "smb write", "smbclient write", "smbclient", "native"),
    ("smb3 1m read 256m", "smb read", "smbclient read", "smbclient", "native"),
    ("smb3 1m write 256m, depth 8", "smb write depth 8", "smbclient write", "smbclient", "native"),
    ("smb3 1m read 256m, depth 8", "smb read depth 8", "smbclient read", "smbclient", "native"),
    ("smb3 1m write 256m, libsmbclient", "libsmbclient write", "smbclient write", "smbclient", None),
    ("smb3 1m read 256m, libsmbclient", "libsmbclient read", "smbclient read", "smbclient", None),
)


def start_servers(ctx):
    """Starts rpcbind (unless one runs), Ganesha and smbd on 127.0.0.1 in a new tmpfs
    directory, recorded in ctx for clean-up; returns the directory."""
    d = running.fresh_dir("sharebench-bench-native.", "/dev/shm")
    ctx.native_dir = d
    # The servers' users (smbd serves the share as "nobody") must reach the directories.
    os.chmod(d, 0o755)
    for sub in ("export", "recov", "share", "lock", "state", "cache", "private", "pid", "ncalrpc", "log"):
        os.mkdir(d / sub)
    os.chmod(d / "share", 0o777)
    if not running.port_open(111):
        running.start_server(["rpcbind", "-f", "-w"], d / "rpcbind.log", ctx.servers)
        for _ in range(50):
            if running.port_open(111):
                break
            time.sleep(0.1)
    running.write_new(d / "ganesha.conf", GANESHA_CONF.format(d=d))
    running.start_server(
        ["ganesha.nfsd", "-F", "-f", d / "ganesha.conf", "-L", d / "ganesha.log", "-p", d / "ganesha.pid",
         "-N", "NIV_EVENT"],
        d / "ganesha.out", ctx.servers)
    running.write_new(d / "users.map", "nobody = bench\n")
    running.write_new(d / "smb.conf", SMB_CONF.format(d=d))
    pw = "bench-" + secrets.token_hex(8)
    running.run(["smbpasswd", "-c", d / "smb.conf", "-s", "-a", "nobody"], input=f"{pw}\n{pw}\n",
                stdout=DEVNULL, check=True)
    # Created 0600 from the start: the directory is readable by all.
    running.write_new(d / "pw", f"{pw}\n", 0o600)
    running.write_new(d / "auth", f"username = bench\npassword = {pw}\n", 0o600)
    running.start_server(
        ["smbd", "--foreground", "--no-process-group", "--debug-stdout", "-d", "1", "-s", d / "smb.conf"],
        d / "smbd.log", ctx.servers)
    for _ in range(300):
        if running.port_open(4445):
            listing = running.run(["rpcinfo", "-p", "127.0.0.1"], stdout=PIPE, stderr=DEVNULL).stdout
            if "mountd" in listing:
                break
        time.sleep(0.1)
    # Every later sharebench run of the bench reads the SMB password from here.
    os.environ["SHAREBENCH_SMB_PASSWORD_FILE"] = str(d / "pw")
    return d


def run(ctx) -> None:
    if not running.is_root():
        ctx.say("native nfs/smb: skipped (the servers need root)")
        return
    for tool in TOOLS:
        if not running.which(tool):
            ctx.say(f"native nfs/smb: skipped ('{tool}' is missing; run scripts/install-deps.sh)")
            return
    if running.port_open(2049) or running.port_open(4445):
        ctx.say("native nfs/smb: skipped (127.0.0.1:2049 or :4445 is already in use)")
        return
    d = start_servers(ctx)
    nfs, smb = f"nfs://127.0.0.1{d}/export?version=3", "smb://bench@127.0.0.1:4445/share"
    file, cp_url = ctx.work / "native256.bin", f"nfs://127.0.0.1{d}/export/cp.bin?version=3"
    running.write_random(file, FILE_KIB << 10)
    # sharebench's runs of a round: name, op, target, options.
    sb_runs = (
        ("nfs write", "write", nfs, ()),
        ("nfs read", "read", nfs, ()),
        ("smb write", "write", smb, ()),
        ("smb read", "read", smb, ()),
        # smbclient keeps several requests in flight; the smb2 client can too.
        ("smb write depth 8", "write", smb, ("--iodepth", "8")),
        ("smb read depth 8", "read", smb, ("--iodepth", "8")),
        ("libsmbclient write", "write", smb + "?client=libsmbclient", ()),
        ("libsmbclient read", "read", smb + "?client=libsmbclient", ()),
    )
    got = {name: [] for line in LINES for name in line[1:3]}
    for i in range(1, ctx.rounds + 1):
        # The tools go first in alternate rounds, so neither always follows the other.
        for side in ("sb", "tools") if i % 2 else ("tools", "sb"):
            if side == "sb":
                for name, op, target, options in sb_runs:
                    got[name].append(ctx.one_op(op, op, "1m", "256m", target, *options))
            else:
                tools_round(ctx, got, d, file, cp_url)
    running.remove(ctx.work / "cp-back.bin")
    for label, ours, theirs, tool, key in LINES:
        # A figure a tool did not give (a failed run, smbclient printing no rate) is left out.
        a = [x for x in got[ours] if x is not None]
        b = [x for x in got[theirs] if x is not None]
        ctx.report(analysis.native_lines(label, a, b, tool, ctx.rounds, key))
    nfs41_against_nfs3(ctx, "nfs://127.0.0.1/bench?version=4.1", nfs)
    smb_clients(ctx, smb)


def tools_round(ctx, got: dict, d, file, cp_url: str) -> None:
    """One round of the command-line tools: nfs-cp write and read, nfs-cat, smbclient put and get."""
    back = ctx.work / "cp-back.bin"
    running.remove(d / "export" / "cp.bin")
    got["nfs-cp write"].append(running.timed_kib_s(["nfs-cp", file, cp_url], FILE_KIB))
    running.remove(back)
    got["nfs-cp read"].append(running.timed_kib_s(["nfs-cp", cp_url, back], FILE_KIB))
    running.remove(back)
    got["nfs-cat read"].append(running.timed_kib_s(["nfs-cat", cp_url], FILE_KIB, stderr=None, failure_is_zero=False))
    got["smbclient write"].append(smbclient_kib_s(d, f"put {file} cp.bin"))
    got["smbclient read"].append(smbclient_kib_s(d, "get cp.bin /dev/null"))


def smbclient_kib_s(d, command: str) -> float | None:
    """The KiB/s smbclient reports for one command on the bench's share; None if none."""
    r = running.run(["smbclient", "//127.0.0.1/share", "-p", "4445", "-A", d / "auth", "-m", "SMB3", "-c", command],
                    stdout=PIPE, stderr=STDOUT)
    return analysis.smbclient_kib_s(r.stdout)


def nfs41_against_nfs3(ctx, v41: str, v3: str) -> None:
    """Issue 13's bar: the NFSv4.1 client (files through sharebench's own data path) at
    least 0.9x NFSv3 (libnfs) at 4k, 64k and 1m records, against the same Ganesha. One run
    per round with both targets, their samples interleaved; per round the ratio of the
    medians of each cell; the median and range of those ratios over the rounds."""
    rows = ctx.rows("nfs41.rows")
    for _ in range(ctx.rounds):
        out = ctx.fresh("nfs41.sb")
        if ctx.sharebench(["run", "-i", "write,read", "--file-sizes", "16m", "--record-sizes", "4k,64k,1m",
                           "--reps", "5", "--out", out, v41, v3]):
            ctx.say("nfs v4.1 vs v3: sharebench run failed")
            return
        for row in analysis.cell_ratios(running.results(out), v41):
            rows.add(*row)
    ctx.report(analysis.nfs41_lines(rows.rows))


def smb_clients(ctx, smb2: str) -> None:
    """The two SMB clients against the section's Samba (SMB 3.1.1, signing required),
    issues 13 and 49: the smb2 crate's client (patched: third_party/) against libsmbclient.

    - 64 KiB and 1 MiB records, 64m file, at depth 1: one run per round with both targets,
      their samples interleaved; per round the ratio of each cell's medians.
    - The same with smb2 at depth 8 (libsmbclient keeps one request in flight, so it runs
      at depth 1): two runs per round, alternating which goes first.
    - 4 KiB records, and each client with 4 workers against 1: the two runs of a round in
      alternating order, both targets in each.
    Median and range over the rounds."""
    lib = smb2 + "?client=libsmbclient"
    big = ["-i", "write,read", "--file-sizes", "64m", "--record-sizes", "64k,1m", "--reps", "5"]
    rows = ctx.rows("smb.rows")
    for i in range(1, ctx.rounds + 1):
        out = ctx.fresh("smb.sb")
        if ctx.sharebench(["run", *big, "--out", out, smb2, lib]):
            ctx.say("smb clients: sharebench run failed")
            return
        for row in analysis.cell_ratios(running.results(out), smb2):
            rows.add("depth1", *row)
        for which in ("d8", "lib") if i % 2 else ("lib", "d8"):
            out = ctx.fresh(f"smb.{which}")
            args = [*big, "--iodepth", "8", "--out", out, smb2] if which == "d8" else [*big, "--out", out, lib]
            if ctx.sharebench(["run", *args]):
                ctx.say("smb clients: sharebench run failed")
                return
        for row in analysis.depth8_ratios(running.results(ctx.out / "smb.d8"), running.results(ctx.out / "smb.lib")):
            rows.add("depth8", *row)
        for t in ("1", "4") if i % 2 else ("4", "1"):
            out = ctx.fresh(f"smb.t{t}")
            if ctx.sharebench(["run", "-i", "write,read", "--file-sizes", "16m", "--record-sizes", "4k", "--reps", "3",
                               "-t", t, "--out", out, smb2, lib]):
                ctx.say("smb clients: sharebench run failed")
                return
        one, four = running.results(ctx.out / "smb.t1"), running.results(ctx.out / "smb.t4")
        for row in analysis.cell_ratios(one, smb2):
            rows.add("depth1", *row)
        for row in analysis.worker_ratios(one, four, smb2):
            rows.add("workers", *row)
    ctx.report(analysis.smb_lines(rows.rows))
