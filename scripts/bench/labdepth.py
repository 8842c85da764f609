"""The labdepth section (issue 13): the lab's clients at depth and with several workers.

Depth: with 8 requests in flight, at least 1.5x the throughput of one, at 64 KiB records
(writes and reads of a 16 MiB file); lab:nfs3 is libnfs (also on 4 connections,
nconnect=4, since Ganesha serves a connection on about one core), lab:nfs4 sharebench's
NFSv4.1 data path, lab:smb the smb2 crate. Workers: lab:smb with 4 workers at least 1.5x
one, at 4 KiB records (children-see throughput), beside lab:smb-libsmbclient, which
serialises its workers. One lab of the bench's own; per round a run at each depth (and at
each worker count), in alternating order, the targets interleaved within each run; per
round the ratio of each cell's medians, then the median and range over ROUNDS rounds.

With FIO_NFS, lab:nfs3 also against fio's nfs engine (libnfs's asynchronous calls, the
same library and calls as sharebench's NFSv3 queue), against the same Ganesha from the same
client namespace: fio rewrites and rereads one 16 MiB file for 1 s; sharebench's rewrite
and read of a 16 MiB file are set beside them. Needs root (the lab).
"""

import json
import re

from . import analysis, running
from .running import DEVNULL, PIPE, Failed


def fio_nfs_usable(path: str | None) -> bool:
    """Whether FIO_NFS is a fio with the nfs engine."""
    if not path or not running.executable(path):
        return False
    r = running.run([path, "--enghelp"], stdout=PIPE, stderr=DEVNULL)
    # As `grep -w nfs`: nfs as a whole word.
    return re.search(r"(?<!\w)nfs(?!\w)", r.stdout, re.ASCII) is not None


def fio_nfs_pair(ctx, depth: int, peer) -> bool:
    """sharebench's and fio's rewrite and read of lab:nfs3 at one depth: rows (op, depth,
    sharebench KiB/s, fio KiB/s); False if either failed."""
    status = running.run([ctx.bin, "lab", "status", "--json"], stdout=PIPE)
    try:
        nfs3 = [t for t in json.loads(status.stdout)["targets"] if t["name"] == "lab:nfs3"][0]
        url, netns = nfs3["url"], nfs3["client_netns"]
    except (ValueError, KeyError, IndexError, TypeError):
        return False
    out = ctx.fresh(f"labpeer.{depth}")
    if ctx.sharebench(["run", "lab:nfs3", "-i", "write,rewrite,read", "--file-sizes", "16m", "--record-sizes", "64k",
                       "--reps", "5", "--iodepth", str(depth), "--out", out]):
        return False
    records = running.results(out)
    for op in ("rewrite", "read"):
        sb = analysis.op_median(records, op)
        if sb is None:
            return False
        try:
            # The client namespace is the lab's: fio reaches Ganesha as sharebench does.
            rw = "read" if op == "read" else "write"
            job = running.fio_job(["ip", "netns", "exec", netns, ctx.s.fio_nfs, "--name=peer", "--ioengine=nfs",
                                   f"--nfs_url={url}", "--filename=fio-peer", f"--rw={rw}", "--bs=64k", "--size=16m",
                                   f"--iodepth={depth}", "--time_based", "--runtime=1"])
        except Failed:
            return False
        peer.add(op, depth, sb, analysis.fio_bw(job))
    return True


def run(ctx) -> None:
    if not running.is_root():
        ctx.say("lab depth: needs root (the lab); skipped")
        return
    # `lab status --json` prints null when no lab exists; anything else is a lab (or an error).
    status = running.run([ctx.bin, "lab", "status", "--json"], stdout=PIPE, stderr=DEVNULL)
    if status.stdout.strip() != "null":
        ctx.say("lab depth: a lab is already up and is not the bench's (or its state is unreadable); skipped")
        return
    # Set before `lab up`: a lab half made goes down with the bench too.
    ctx.lab_up = True
    up_log = ctx.out / "labdepth.up"
    with running.new_file(up_log) as f:
        code = ctx.sharebench(["lab", "up", "--fs", "xfs", "--link", "unlimited"], stdout=f, stderr=running.STDOUT)
    if code != 0:
        ctx.say(f"lab depth: lab up failed: {running.last_lines(up_log)}")
        return
    rows, peer = ctx.rows("labdepth.rows"), ctx.rows("labdepth.peer")
    with_fio = fio_nfs_usable(ctx.s.fio_nfs)
    if not with_fio:
        ctx.say("lab depth: set FIO_NFS=/path/to/fio (built with libnfs: ./configure --enable-libnfs) to compare"
                " lab:nfs3 with fio's nfs engine; skipped that")
    rounds(ctx, rows, peer, with_fio)
    if ctx.sharebench(["lab", "down"]) == 0:
        ctx.lab_up = False
    if peer.rows:
        ctx.report(analysis.fio_nfs_lines(peer.rows))
    ctx.report(analysis.labdepth_lines(rows.rows))


def rounds(ctx, rows, peer, with_fio: bool) -> None:
    """The rounds; a failed run ends them (the rows so far are summarised)."""
    for i in range(1, ctx.rounds + 1):
        order = (1, 8) if i % 2 else (8, 1)
        for depth in order:
            out = ctx.fresh(f"labdepth.{depth}")
            if ctx.sharebench(["run", "lab:nfs3", "lab:nfs3?nconnect=4", "lab:nfs4", "lab:smb", "-i", "write,read",
                               "--file-sizes", "16m", "--record-sizes", "64k", "--reps", "5", "--iodepth", str(depth),
                               "--out", out]):
                ctx.say(f"lab depth: sharebench run failed at depth {depth}")
                return
        one, eight = running.results(ctx.out / "labdepth.1"), running.results(ctx.out / "labdepth.8")
        for row in analysis.lab_ratios(one, eight):
            rows.add("depth", *row)
        for workers in ((1, 4) if i % 2 else (4, 1)):
            out = ctx.fresh(f"labworkers.{workers}")
            if ctx.sharebench(["run", "lab:smb", "lab:smb-libsmbclient", "-i", "write,read", "--file-sizes", "16m",
                               "--record-sizes", "4k", "--reps", "3", "-t", str(workers), "--out", out]):
                ctx.say(f"lab depth: sharebench run failed with {workers} workers")
                return
        one, four = running.results(ctx.out / "labworkers.1"), running.results(ctx.out / "labworkers.4")
        for row in analysis.lab_ratios(one, four):
            rows.add("workers", *row)
        if with_fio:
            for depth in order:
                if not fio_nfs_pair(ctx, depth, peer):
                    ctx.say(f"lab depth: the fio nfs comparison failed at depth {depth}")
                    return
