#!/usr/bin/env python3
"""The symlink attack on a shared target, as a hostile local user makes it (run as root).

A target directory anyone may write in without the sticky bit (0777, as a careless shared
export is) gets sharebench runs, as root, one after another for SECONDS; meanwhile an
unprivileged user (uid 65534) renames each new `sharebench-*` working directory away and puts
in its place either a directory of its own whose entries are symlinks to a root-owned 0600
file, or a symlink to a root-owned directory holding a file named as the run's work file.

Passes when, in every try, the victim file and the victim directory are unchanged and no run
whose working directory the attacker swapped says `complete` (in run.json, or by exiting 0).
Prints one line per try and exits 1 on any failure.

Usage: shared-target-attack.py SHAREBENCH [--tries N] [--seconds S] [--scratch DIR]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ATTACKER = 65534
# The attacker cannot run an interpreter under root's home (pyenv): the system's, as any user.
PLAIN_PYTHON = "/usr/bin/python3"
SECRET = b"root's secret\n"

ATTACK = r"""
import os, sys, time
target, victim, victim_dir, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
me = os.getuid()
end = time.monotonic() + seconds
k = 0
while time.monotonic() < end:
    try:
        names = os.listdir(target)
    except OSError:
        continue
    for n in names:
        p = os.path.join(target, n)
        try:
            st = os.lstat(p)
        except OSError:
            continue
        if not n.startswith("sharebench-") or st.st_uid == me or os.path.islink(p):
            continue
        k += 1
        try:
            os.rename(p, os.path.join(target, ".moved-%d" % k))
        except OSError:
            continue
        try:
            if k % 2:
                os.mkdir(p)
                for f in ("f0", "f1", ".sharebench-workdir"):
                    os.symlink(victim, os.path.join(p, f))
            else:
                os.symlink(victim_dir, p)
        except OSError:
            pass
        print(n, flush=True)
"""


def try_once(sharebench, scratch, seconds, n):
    base = tempfile.mkdtemp(prefix="attack-", dir=scratch)
    target = os.path.join(base, "shared")
    os.mkdir(target)
    os.chmod(target, 0o777)
    victim = os.path.join(base, "victim")
    with open(victim, "wb") as f:
        f.write(SECRET)
    os.chmod(victim, 0o600)
    victim_dir = os.path.join(base, "victimdir")
    os.mkdir(victim_dir, 0o700)
    with open(os.path.join(victim_dir, "f0"), "wb") as f:
        f.write(SECRET)
    os.chmod(base, 0o755)

    def drop():
        os.setgroups([])
        os.setgid(ATTACKER)
        os.setuid(ATTACKER)

    attacker = subprocess.Popen(
        [PLAIN_PYTHON, "-c", ATTACK, target, victim, victim_dir, str(seconds)],
        stdout=subprocess.PIPE,
        preexec_fn=drop,
        text=True,
    )
    runs = []
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        i += 1
        out = os.path.join(base, "out-%d" % i)
        p = subprocess.run(
            [sharebench, "run", target, "-i", "write,rewrite,read", "--file-sizes", "1m,4m",
             "--record-sizes", "64k", "--reps", "5", "--out", out, "--quiet"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=300,
        )
        runs.append((out, p.returncode, (p.stderr.strip().splitlines() or [""])[-1]))
    swapped = set(attacker.communicate(timeout=seconds + 60)[0].split())

    problems = []
    with open(victim, "rb") as f:
        if f.read() != SECRET:
            problems.append("the victim file changed")
    try:
        with open(os.path.join(victim_dir, "f0"), "rb") as f:
            if f.read() != SECRET:
                problems.append("the victim directory's file changed")
    except FileNotFoundError:
        problems.append("the victim directory's file was deleted")
    interfered = refused = 0
    for out, code, last in runs:
        try:
            with open(os.path.join(out, "run.json")) as f:
                m = json.load(f)
        except (OSError, ValueError):
            refused += code != 0  # stopped before its run began (exit 2, nothing written)
            continue
        if "sharebench-%s-t0" % m.get("run_id") not in swapped:
            continue
        interfered += 1
        if m.get("outcome") == "complete" or code == 0:
            problems.append("run %s was interfered with but says complete" % out)
        elif interfered == 1:
            print("  e.g. %s, exit %d: %s" % (m.get("outcome"), code, last))
    verdict = "ok" if not problems else "FAILED: " + "; ".join(problems)
    print("try %d: %d runs, %d working directories swapped: %d runs interfered with, %d refused at the start; %s"
          % (n, len(runs), len(swapped), interfered, refused, verdict))
    if not problems:
        shutil.rmtree(base, ignore_errors=True)
    return not problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sharebench")
    ap.add_argument("--tries", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--scratch", default="/dev/shm")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("shared-target-attack: run as root (the attack is on a root run)")
    ok = sum(try_once(a.sharebench, a.scratch, a.seconds, n + 1) for n in range(a.tries))
    print("%d of %d tries: victim unchanged and no interfered run complete" % (ok, a.tries))
    sys.exit(0 if ok == a.tries else 1)


if __name__ == "__main__":
    main()
