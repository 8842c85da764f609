"""Tests of the file helpers' safety (running.py): no planted symlink is followed; and of
the clean-up's bookkeeping (xfs image, servers, lab, signals), with no real command run.

Run from the repository: python3 -m unittest discover -s scripts/bench -t scripts
"""

import contextlib
import io
import os
import signal
import subprocess
import tempfile
import types
import unittest
from pathlib import Path
from unittest import mock

from . import __main__ as bench_main
from . import running
from .context import Context, Rows


class FilesTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.d = Path(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def test_new_file_never_follows_a_planted_symlink(self):
        victim = self.d / "victim"
        victim.write_text("keep")
        os.symlink(victim, self.d / "out.rows")
        with self.assertRaises(FileExistsError):
            running.write_new(self.d / "out.rows", "overwritten")
        self.assertEqual(victim.read_text(), "keep")

    def test_new_file_never_reuses_a_file(self):
        running.write_new(self.d / "a", "one")
        with self.assertRaises(FileExistsError):
            running.write_new(self.d / "a", "two")
        self.assertEqual((self.d / "a").read_text(), "one")

    def test_new_file_mode(self):
        running.write_new(self.d / "pw", "secret\n", 0o600)
        self.assertEqual(os.stat(self.d / "pw").st_mode & 0o777, 0o600)

    def test_remove_does_not_follow_symlinks(self):
        outside = self.d / "outside"
        outside.mkdir()
        (outside / "precious").write_text("keep")
        tree = self.d / "tree"
        tree.mkdir()
        os.symlink(outside, tree / "link")
        running.remove(tree)
        self.assertFalse(tree.exists())
        self.assertEqual((outside / "precious").read_text(), "keep")
        os.symlink(outside, self.d / "top-link")
        running.remove(self.d / "top-link")
        self.assertFalse(os.path.lexists(self.d / "top-link"))
        self.assertTrue((outside / "precious").exists())
        running.remove(self.d / "never-there")

    def test_rows_are_kept_and_written(self):
        rows = Rows(self.d / "x.rows")
        rows.add("depth1", "write", 65536, 0.5)
        rows.close()
        self.assertEqual(rows.rows, [("depth1", "write", 65536, 0.5)])
        self.assertEqual((self.d / "x.rows").read_text(), "depth1 write 65536 0.5\n")


class FakeRun:
    """Stands in for running.run: records each argv and answers from codes (by argv[:2])."""

    def __init__(self, codes=None, losetup_j=""):
        self.calls, self.codes, self.losetup_j = [], codes or {}, losetup_j

    def __call__(self, argv, **_):
        argv = [str(a) for a in argv]
        self.calls.append(argv)
        out = self.losetup_j if argv[:2] == ["losetup", "-j"] else ""
        return subprocess.CompletedProcess(argv, self.codes.get(tuple(argv[:2]), 0), out, "")


class CleanupTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.d = Path(self._tmp.name) / "xfs"
        self.d.mkdir()
        (self.d / "image").write_bytes(b"")
        (self.d / "mnt").mkdir()
        self.xfs = running.XfsImage()
        self.xfs.dir = self.d

    def tearDown(self):
        self._tmp.cleanup()

    def down(self, fake, mounted=False):
        real_ismount = os.path.ismount
        with mock.patch.object(running, "run", fake), mock.patch.object(running.time, "sleep"), \
                mock.patch.object(running.os.path, "ismount", lambda p: mounted or real_ismount(p)), \
                contextlib.redirect_stderr(io.StringIO()) as err:
            self.xfs.down()
        return err.getvalue()

    def test_down_detaches_a_loop_attached_but_not_recorded(self):
        fake = FakeRun(losetup_j=f"/dev/loop7: [2049]:12 ({self.d}/image)\n")
        self.down(fake)
        self.assertIn(["losetup", "-j", str(self.d / "image")], fake.calls)
        self.assertIn(["losetup", "-d", "/dev/loop7"], fake.calls)
        self.assertFalse(self.d.exists())
        self.assertEqual((self.xfs.dir, self.xfs.loop, self.xfs.mnt), (None, None, None))

    def test_down_keeps_a_busy_mount_recorded(self):
        self.xfs.loop, self.xfs.mnt = "/dev/loop7", self.d / "mnt"
        fake = FakeRun({("umount", str(self.d / "mnt")): 32})
        err = self.down(fake, mounted=True)
        self.assertIn("still busy", err)
        self.assertNotIn(["losetup", "-d", "/dev/loop7"], fake.calls)
        self.assertTrue(self.d.exists())
        self.assertEqual((self.xfs.dir, self.xfs.loop, self.xfs.mnt), (self.d, "/dev/loop7", self.d / "mnt"))

    def test_down_keeps_a_loop_it_could_not_detach(self):
        self.xfs.loop = "/dev/loop7"
        err = self.down(FakeRun({("losetup", "-d"): 1}))
        self.assertIn("losetup -d /dev/loop7", err)
        self.assertTrue(self.d.exists())
        self.assertEqual((self.xfs.dir, self.xfs.loop), (self.d, "/dev/loop7"))

    def test_start_server_records_the_server(self):
        servers, started = [], object()
        with mock.patch.object(running.subprocess, "Popen", return_value=started) as popen:
            self.assertIs(running.start_server(["smbd"], Path(self._tmp.name) / "smbd.log", servers), started)
        self.assertEqual(servers, [started])
        self.assertTrue(popen.call_args.kwargs["start_new_session"])

    def test_clean_up_ignores_signals_across_exec(self):
        held = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        before = [signal.getsignal(s) for s in held]
        try:
            bench_main._hold_signals()
            # SIG_IGN, unlike a Python handler, is what the clean-up's commands inherit.
            self.assertEqual([signal.getsignal(s) for s in held], [signal.SIG_IGN] * 3)
        finally:
            for s, h in zip(held, before):
                signal.signal(s, h)

    def test_lab_down_failing_is_named_and_remembered(self):
        ctx = Context(types.SimpleNamespace(bin="sharebench", rounds=1))
        ctx.lab_up = True
        with mock.patch.object(ctx, "sharebench", return_value=1), contextlib.redirect_stderr(io.StringIO()) as err:
            ctx._lab_down()
        self.assertEqual(err.getvalue(), "bench: the lab may still be up; run 'sharebench lab down'\n")
        self.assertTrue(ctx.lab_up)
        with mock.patch.object(ctx, "sharebench", return_value=0) as sb:
            ctx._lab_down()
        sb.assert_called_once_with(["lab", "down"])
        self.assertFalse(ctx.lab_up)


if __name__ == "__main__":
    unittest.main()
