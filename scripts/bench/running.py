"""Running things for the bench: commands (stopped by PID if the bench is interrupted),
fio, results files, files and directories of the bench's own, the CPU-latency holder, the
iodepth section's xfs image, and the native section's servers.

Safety rules every helper keeps:
- A process is signalled only through its Popen object, by PID, and only while Popen
  has not reaped it, so the PID cannot belong to anyone else by then; never by name
  (pkill, killall), which would hit other people's fio or smbd.
- Files are created with O_EXCL | O_NOFOLLOW, inside directories the bench made fresh with
  mkdtemp (or the empty BENCH_OUT it checked), so a symlink planted by someone else is
  never followed.
- Removal (remove()) never follows a symlink, and the xfs image's directory is removed
  only once its mount is gone.
"""

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import analysis

DEVNULL = subprocess.DEVNULL
PIPE = subprocess.PIPE
STDOUT = subprocess.STDOUT

# How long an interrupted command gets to end after SIGTERM before SIGKILL: sharebench
# stops within one record and then removes its working files.
GRACE_S = 30
# How long each server gets after SIGTERM before SIGKILL.
SERVER_GRACE_S = 10


class Failed(Exception):
    """A step the bench cannot go on without failed; the bench cleans up and exits 1."""


# Commands running now: if the bench is interrupted while one runs, clean-up stops it.
_running: set[subprocess.Popen] = set()


def stop(p: subprocess.Popen, grace: float = GRACE_S) -> None:
    """Stops a child of the bench by its PID: SIGTERM, then SIGKILL after grace seconds.
    Popen signals only a child it has not reaped, so the PID is still that child's."""
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(grace)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    _running.discard(p)


def stop_running() -> None:
    """Stops every command still running (an interrupted section's)."""
    for p in list(_running):
        stop(p)


def run(
    argv, *, stdout=None, stderr=None, input: str | None = None, check: bool = False
) -> subprocess.CompletedProcess:
    """Runs a command to its end (text in and out); stdout/stderr as for subprocess (None:
    the bench's own, DEVNULL, PIPE, STDOUT or an open file). If the bench is interrupted
    meanwhile, the command is stopped before the interruption goes on. check: a non-zero
    exit is Failed."""
    argv = [str(a) for a in argv]
    p = subprocess.Popen(argv, stdin=PIPE if input is not None else None, stdout=stdout, stderr=stderr, text=True)
    _running.add(p)
    try:
        out, err = p.communicate(input)
    except BaseException:
        stop(p)
        raise
    _running.discard(p)
    if check and p.returncode != 0:
        raise Failed(f"{' '.join(argv)} exited with status {p.returncode}")
    return subprocess.CompletedProcess(argv, p.returncode, out, err)


def peak_rss_kib(argv) -> int:
    """Runs a command, output discarded, and returns its peak resident set in KiB: the
    rusage that wait4 gives, which GNU time's %M reports. A non-zero exit is Failed."""
    argv = [str(a) for a in argv]
    p = subprocess.Popen(argv, stdout=DEVNULL, stderr=DEVNULL)
    _running.add(p)
    try:
        _, status, usage = os.wait4(p.pid, 0)
    except BaseException:
        stop(p)
        raise
    p.returncode = os.waitstatus_to_exitcode(status)
    _running.discard(p)
    if p.returncode != 0:
        raise Failed(f"{' '.join(argv)} exited with status {p.returncode}")
    return usage.ru_maxrss


def timed_kib_s(argv, kib: int, *, stderr=DEVNULL, failure_is_zero: bool = True) -> float:
    """KiB/s of a command that moves kib KiB, timed whole (process start included), its
    output discarded; 0 if it fails, unless failure_is_zero is False."""
    start = time.monotonic()
    code = run(argv, stdout=DEVNULL, stderr=stderr).returncode
    if code and failure_is_zero:
        return 0.0
    return kib / (time.monotonic() - start)


def executable(path: str) -> bool:
    """Whether path is a file the bench may run."""
    return os.path.isfile(path) and os.access(path, os.X_OK)


def which(name: str) -> bool:
    """Whether a command is on PATH."""
    return shutil.which(name) is not None


def is_root() -> bool:
    """Whether the bench runs as root (effective user), which servers, mounts and the lab need."""
    return os.geteuid() == 0


def port_open(port: int) -> bool:
    """Whether something listens on 127.0.0.1:port (the bench only ever talks to loopback)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


# --- Files --------------------------------------------------------------------------------


def new_file(path: Path, mode: int = 0o644):
    """A new file opened for writing (text); never follows a symlink, never reuses a file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    return os.fdopen(fd, "w")


def write_new(path: Path, text: str, mode: int = 0o644) -> None:
    """Writes text to a new file (see new_file)."""
    with new_file(path, mode) as f:
        f.write(text)


def write_random(path: Path, size: int) -> None:
    """A new file of size random bytes (see new_file)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "wb") as f:
        for _ in range(size >> 20):
            f.write(os.urandom(1 << 20))


def last_lines(path: Path, n: int = 1) -> str:
    """The last n lines of a file the bench wrote (a command's errors), "" if none."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


def remove(path: Path) -> None:
    """Removes a file or a directory tree (rm -rf), never following a symlink: a symlink is
    removed itself, and shutil.rmtree removes links found inside without following them."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def results(out_dir: Path) -> list[dict]:
    """The records of a sharebench results directory (results.jsonl, one JSON a line)."""
    with open(Path(out_dir) / "results.jsonl") as f:
        return [json.loads(line) for line in f if line.strip()]


# --- fio ----------------------------------------------------------------------------------


def fio_job(argv) -> dict:
    """Runs fio (argv without --output-format) and returns its first job; fio's errors
    discarded. A failure is Failed."""
    r = run([*argv, "--output-format=json"], stdout=PIPE, stderr=DEVNULL)
    if r.returncode != 0:
        raise Failed(f"{' '.join(map(str, argv))} exited with status {r.returncode}")
    try:
        return analysis.fio_job(r.stdout)
    except (ValueError, KeyError, IndexError) as e:
        raise Failed(f"{' '.join(map(str, argv))} printed no job ({e})") from None


def fio_layout(file: Path, size: str) -> None:
    """Lays a file out anew with fio (1 MiB writes), as sharebench writes its file anew
    before a rewrite or read: overwriting a fresh file (tmpfs with huge pages) is slower
    than overwriting one overwritten before, so both tools must start alike."""
    remove(file)
    run(["fio", "--name=layout", "--ioengine=psync", "--rw=write", "--bs=1m", f"--size={size}", f"--filename={file}"],
        stdout=DEVNULL, stderr=DEVNULL)


# --- The CPU-latency holder ---------------------------------------------------------------

# Every tool runs with idle CPUs kept polling, as sharebench run does by default as root:
# fio and IOzone cannot ask for it, so the bench holds the same request (a CPU-latency of
# 0 us on /dev/cpu_dma_latency) for the whole bench. The kernel drops it when the holder's
# file closes, and the holder ends with the bench even if the bench is killed outright
# (SIGKILL runs no clean-up): it checks its parent every second. It ignores Ctrl-C, which
# reaches the whole process group, so the request lasts until the bench's clean-up ends it.
_HOLDER = """
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
fd = os.open("/dev/cpu_dma_latency", os.O_WRONLY | os.O_NOFOLLOW)
os.write(fd, (0).to_bytes(4, "little"))
while os.getppid() == int(sys.argv[1]):
    time.sleep(1)
"""


def hold_cpu_latency() -> subprocess.Popen | None:
    """Starts the CPU-latency holder (as root, where the kernel has the device); None
    otherwise: then no tool gets it (sharebench says so)."""
    try:
        is_char = stat.S_ISCHR(os.stat("/dev/cpu_dma_latency").st_mode)
    except OSError:
        is_char = False
    if not is_root() or not is_char:
        return None
    return subprocess.Popen([sys.executable, "-c", _HOLDER, str(os.getpid())], stdin=DEVNULL)


# --- The iodepth section's xfs image ------------------------------------------------------


class XfsImage:
    """An xfs file system in a 512 MiB loop image, its loop device with direct I/O and its
    mount, all under a new directory of the bench's own. down() undoes what up() made and
    nothing else."""

    def __init__(self):
        self.dir: Path | None = None
        self.loop: str | None = None
        self.mnt: Path | None = None

    def up(self, parent: str) -> bool:
        """Makes the image under a new directory of parent; False if it cannot (not root,
        no xfsprogs, a step failed), leaving down() to undo the steps that were made."""
        if not (is_root() and which("mkfs.xfs") and which("losetup")):
            return False
        try:
            self.dir = fresh_dir("sharebench-bench-xfs.", parent)
            image = self.dir / "image"
            fd = os.open(image, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            os.ftruncate(fd, 512 << 20)
            os.close(fd)
        except OSError:
            return False
        if run(["mkfs.xfs", "-q", image]).returncode != 0:
            return False
        r = run(["losetup", "--find", "--show", "--direct-io=on", image], stdout=PIPE)
        if r.returncode != 0 or not r.stdout.strip():
            return False
        self.loop = r.stdout.strip()
        mnt = self.dir / "mnt"
        try:
            os.mkdir(mnt)
        except OSError:
            return False
        if run(["mount", self.loop, mnt]).returncode != 0:
            return False
        self.mnt = mnt
        return True

    def direct_io(self) -> bool:
        """Whether the loop device passes O_DIRECT on (only where the backing file system
        takes it)."""
        try:
            return Path(f"/sys/block/{Path(self.loop).name}/loop/dio").read_text().strip() == "1"
        except (OSError, TypeError):
            return False

    def down(self) -> None:
        """Unmounts, detaches and removes what up() made. A run killed with the bench may
        still hold the mount for a moment, so the unmount is retried for up to 10 s; what
        cannot be undone is named on stderr and left, never forced (no lazy or forced
        unmount, and no removal of a directory with a mount under it), and stays recorded,
        so a later down() (the bench's clean-up) tries again."""
        if self.dir is None:
            return
        mnt, image = self.dir / "mnt", self.dir / "image"
        if self.loop is None and os.path.exists(image):
            # Attached but not yet recorded: up() was interrupted after losetup.
            self.loop = loop_of(image)
        if os.path.ismount(mnt):
            for _ in range(50):
                if run(["umount", mnt], stderr=DEVNULL).returncode == 0:
                    break
                time.sleep(0.2)
            if os.path.ismount(mnt):
                print(f"bench: {mnt} is still busy; unmount it, then losetup -d {self.loop}", file=sys.stderr)
                return
        self.mnt = None
        if self.loop:
            if run(["losetup", "-d", self.loop]).returncode != 0:
                print(f"bench: could not detach {self.loop}; run losetup -d {self.loop}, then rm -r {self.dir}",
                      file=sys.stderr)
                return
            self.loop = None
        remove(self.dir)
        self.dir = None


def loop_of(image: Path) -> str | None:
    """The loop device backed by image (losetup -j matches that very file, by device and
    inode); None if none."""
    r = run(["losetup", "-j", image], stdout=PIPE, stderr=DEVNULL)
    for line in r.stdout.splitlines():  # "/dev/loop3: [2049]:1234 (/path/image)"
        device = line.split(":", 1)[0]
        if device.startswith("/dev/loop"):
            return device
    return None


def fresh_dir(prefix: str, parent: str) -> Path:
    """A new directory of the bench's own: mode 0700, a name no one else had (mkdtemp)."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=parent))


# --- Servers ------------------------------------------------------------------------------


def start_server(argv, log: Path, servers: list[subprocess.Popen]) -> subprocess.Popen:
    """Starts a server in a session of its own, its output in a new file log, and appends
    it to servers (the clean-up's list) at once, so an interrupt cannot leave it unrecorded.
    In its own session Ctrl-C at the bench's terminal does not reach it: it stays up until
    the bench's clean-up stops it, in order, by PID (stop_servers)."""
    with new_file(log) as f:
        p = subprocess.Popen([str(a) for a in argv], stdin=DEVNULL, stdout=f, stderr=STDOUT, start_new_session=True)
        servers.append(p)
    return p


def stop_servers(servers: list[subprocess.Popen]) -> None:
    """Stops servers the bench started, by PID, the last started first: SIGTERM to all,
    then each gets SERVER_GRACE_S seconds before SIGKILL."""
    for p in reversed(servers):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in reversed(servers):
        stop(p, SERVER_GRACE_S)
