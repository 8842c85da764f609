"""Tests of the environment's check (settings.py): bad input is refused before anything runs.

Run from the repository: python3 -m unittest discover -s scripts/bench -t scripts
"""

import os
import sys
import tempfile
import unittest

from . import settings
from .settings import BadInput, from_env


def env(**more):
    """An environment with a BIN that exists."""
    return {"BIN": sys.executable, **more}


class SettingsTest(unittest.TestCase):
    def test_defaults(self):
        s = from_env(env())
        self.assertEqual(s.sections, settings.DEFAULT_SECTIONS)
        self.assertNotIn("drift", s.sections)
        self.assertEqual((s.rounds, s.bench_out, s.iodepth_dir, s.load_rate, s.load_many), (5, None, "/var/tmp", "4000", 16))
        self.assertEqual((s.meta_files, s.repro_runs, s.flip_runs), (5000, 5, 2))
        # Set but empty takes the default, as ${VAR:-default} did.
        self.assertEqual(from_env(env(ROUNDS="", BENCH_ONLY="")).rounds, 5)

    def test_sections_run_in_the_bench_order(self):
        self.assertEqual(from_env(env(BENCH_ONLY="load, fio,drift", DRIFT_RUNS="3")).sections, ("fio", "drift", "load"))

    def test_unknown_section(self):
        with self.assertRaisesRegex(BadInput, "no section fiio"):
            from_env(env(BENCH_ONLY="fiio,native"))
        with self.assertRaises(BadInput):
            from_env(env(BENCH_ONLY=","))

    def test_counts(self):
        for bad in ("0", "x", "-1", "2.5", " 5"):
            with self.assertRaises(BadInput, msg=bad):
                from_env(env(ROUNDS=bad))
        with self.assertRaisesRegex(BadInput, "DRIFT_RUNS=2"):
            from_env(env(BENCH_ONLY="drift", DRIFT_RUNS="2"))
        with self.assertRaises(BadInput):
            from_env(env(BENCH_ONLY="repro", REPRO_RUNS="1"))
        with self.assertRaises(BadInput):
            from_env(env(BENCH_ONLY="load", LOAD_RATE="fast"))
        self.assertEqual(from_env(env(BENCH_ONLY="load", LOAD_RATE="2500.5")).load_rate, "2500.5")
        # A section not asked for does not read its variables.
        self.assertEqual(from_env(env(BENCH_ONLY="fio", META_FILES="many")).meta_files, 0)

    def test_iozone(self):
        with self.assertRaisesRegex(BadInput, "IOZONE"):
            from_env(env(BENCH_ONLY="iozone"))
        with self.assertRaisesRegex(BadInput, "IOZONE=/no/such/iozone"):
            from_env(env(IOZONE="/no/such/iozone"))
        # Among the default sections, without IOZONE the section says it is skipped.
        self.assertIsNone(from_env(env()).iozone)
        self.assertEqual(from_env(env(BENCH_ONLY="iozone", IOZONE=sys.executable)).iozone, sys.executable)

    def test_bin(self):
        with self.assertRaisesRegex(BadInput, "BIN=/no/such/sharebench"):
            from_env({"BIN": "/no/such/sharebench"})

    def test_bench_out(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(from_env(env(BENCH_OUT=d)).bench_out, d)
            self.assertEqual(from_env(env(BENCH_OUT=os.path.join(d, "new"))).bench_out, os.path.join(d, "new"))
            link = os.path.join(d, "link")
            os.symlink(d, link)
            with self.assertRaisesRegex(BadInput, "symlink"):
                from_env(env(BENCH_OUT=link))
            with self.assertRaisesRegex(BadInput, "not empty"):
                from_env(env(BENCH_OUT=d))

    def test_every_section_has_a_runner(self):
        from . import __main__ as main

        self.assertEqual(tuple(main.SECTIONS), settings.SECTIONS)


if __name__ == "__main__":
    unittest.main()
