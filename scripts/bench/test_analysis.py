"""Tests of the bench's arithmetic and printed lines (analysis.py) and its targets.

Run from the repository: python3 -m unittest discover -s scripts/bench -t scripts
The expected lines are what bench.sh's inline Python printed for the same inputs.
"""

import json
import math
import unittest

from . import analysis as A
from .targets import TARGETS, Target


def rec(target="t", op="write", rs=65536, kib=100.0, status="ok", **more):
    """A results.jsonl record with the fields the bench reads."""
    return {"target": target, "op": op, "record_size": rs, "file_size": 1 << 20, "status": status,
            "throughput_kib_s": kib, **more}


class TargetsTest(unittest.TestCase):
    def test_bounds(self):
        self.assertTrue(Target(">=", "0.9").met(0.9))
        self.assertFalse(Target(">=", "0.9").met(0.8999))
        self.assertTrue(Target("<=", "1.2").met(1.2))
        self.assertFalse(Target("<=", "1.2").met(1.21))
        self.assertFalse(Target("<", "5").met(5.0))
        self.assertTrue(Target("<", "5").met(4.999))
        self.assertTrue(Target("==", "0").met(0))
        self.assertFalse(Target("==", "0").met(1))
        self.assertTrue(Target("within", "0.90-1.10").met(0.90))
        self.assertTrue(Target("within", "0.90-1.10").met(1.10))
        self.assertFalse(Target("within", "0.90-1.10").met(1.11))
        self.assertFalse(Target("within", "0.90-1.10").met(0.89))

    def test_nan_is_never_met(self):
        for t in TARGETS.values():
            self.assertFalse(t.met(math.nan), t)

    def test_printed_as_bench_sh_printed_them(self):
        self.assertEqual(str(TARGETS["nfs41"]), ">= 0.9x")
        self.assertEqual(str(TARGETS["smb_clients"]), ">= 0.97x")
        self.assertEqual(str(TARGETS["metadata"]), ">= 1.0")
        self.assertEqual(str(TARGETS["small_copy"]), "<= 1.2")
        self.assertEqual(str(TARGETS["mpi"]), "< 5 ms")
        self.assertEqual(str(TARGETS["median_cv"]), "< 2%")
        self.assertEqual(str(TARGETS["flip"]), "0")
        self.assertEqual(str(TARGETS["iozone"]), "0.95-1.05")
        self.assertEqual(str(TARGETS["load"]), "<= 1.2x")


class ArithmeticTest(unittest.TestCase):
    def test_ratio_of_nothing_is_nan(self):
        self.assertEqual(A.ratio(3, 2), 1.5)
        self.assertTrue(math.isnan(A.ratio(3, 0)))

    def test_spread_is_median_lowest_highest(self):
        self.assertEqual(A.spread([1.2, 0.8, 1.0]), (1.0, 0.8, 1.2))
        self.assertEqual(A.spread([4, 1, 2, 3]), (2.5, 1, 4))

    def test_cv_and_sizes(self):
        self.assertAlmostEqual(A.cv_percent([90, 100, 110]), 10.0)
        self.assertEqual(A.size_bytes("64k"), 65536)
        self.assertEqual(A.size_bytes("16m"), 16 << 20)


class ToolOutputTest(unittest.TestCase):
    def test_fio_job_skips_a_preamble(self):
        job = {"read": {"io_bytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0},
               "write": {"io_bytes": 10, "bw_bytes": 2048, "bw": 2, "iops": 7.5}}
        parsed = A.fio_job("nfs: some warning\n" + json.dumps({"jobs": [job]}))
        self.assertEqual(A.fio_kib_s(parsed), 2.0)
        self.assertEqual(A.fio_bw(parsed), 2)
        self.assertEqual(A.fio_iops(parsed), 7.5)

    def test_fio_read_side(self):
        job = {"read": {"io_bytes": 10, "bw_bytes": 4096, "bw": 4, "iops": 3},
               "write": {"io_bytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0}}
        self.assertEqual(A.fio_kib_s(job), 4.0)
        self.assertEqual(A.fio_bw(job), 4)

    def test_smbclient_rate(self):
        put = "putting file /dev/shm/x as \\cp.bin (312345.6 kb/s) (average 312345.6 kb/s)\n"
        get = "getting file \\cp.bin of size 268435456 as /dev/null (401234.5 KiloBytes/sec) (average 401234.5 KiloBytes/sec)\n"
        self.assertEqual(A.smbclient_kib_s("Try \"help\"\n" + put), 312345.6)
        self.assertEqual(A.smbclient_kib_s(get), 401234.5)
        self.assertIsNone(A.smbclient_kib_s("NT_STATUS_LOGON_FAILURE\n"))

    def test_iozone_row(self):
        out = ("\tIozone: Performance Test of File I/O\n"
               "              kB  reclen    write  rewrite    read    reread\n"
               "           65536      64  1234567  2345678  3456789  4567890\n")
        self.assertEqual(A.iozone_row(out, 64),
                         {"write": 1234567.0, "rewrite": 2345678.0, "read": 3456789.0, "reread": 4567890.0})
        self.assertIsNone(A.iozone_row(out, 4), "another record size's row")
        self.assertIsNone(A.iozone_row("           16384       4  1 2 3 4\n", 4))


class RecordsTest(unittest.TestCase):
    def test_first_ok(self):
        records = [rec(op="read", status="error", kib=1), rec(op="write", kib=2), rec(op="read", kib=3), rec(op="read", kib=4)]
        self.assertEqual(A.first_ok(records, "read"), 3)
        self.assertIsNone(A.first_ok(records, "reread"))

    def test_cell_ratios_per_op_and_record_size(self):
        records = [rec("A", kib=100), rec("A", kib=200), rec("A", kib=300), rec("B", kib=100), rec("B", kib=100),
                   rec("B", kib=999, status="error"), rec("A", op="read", kib=50)]
        # write 64k: median 200 over median 100; read has no B cell.
        self.assertEqual(A.cell_ratios(records, "A"), [("write", 65536, 2.0)])

    def test_worker_records_left_out_of_run_level_ratios(self):
        one = [rec("smb", kib=100), rec("smb", kib=1, scope="worker"), rec("lib", kib=50)]
        four = [rec("smb", kib=160), rec("smb", kib=9, scope="worker"), rec("lib", kib=50)]
        self.assertEqual(sorted(A.worker_ratios(one, four, "smb")),
                         [("write", "libsmbclient", 1.0), ("write", "smb2", 1.6)])
        self.assertEqual(A.lab_ratios(one, four), [("smb", "write", 1.6, 100, 160), ("lib", "write", 1.0, 50, 50)])

    def test_depth8_ratios(self):
        deep = [rec("s", kib=300), rec("s", kib=100)]
        lib = [rec("l", kib=100)]
        self.assertEqual(A.depth8_ratios(deep, lib), [("write", 65536, 2.0)])

    def test_metadata_and_smallfiles(self):
        meta = [{"status": "ok", "op": "whole-test", "test": "test1", "ops_per_s": 10.5},
                {"status": "ok", "op": "whole-test", "test": "test2", "ops_per_s": 20.0},
                {"status": "ok", "op": "create", "test": "test1", "ops_per_s": 1}]
        self.assertEqual(A.metadata_rates(meta), (10.5, 20.0))
        self.assertIsNone(A.metadata_rates(meta[:1]))
        self.assertEqual(A.smallfile_seconds([{"op": "copy", "seconds": 1.5}, {"op": "rsync-copy", "seconds": 1.25}]), (1.5, 1.25))


class SectionLinesTest(unittest.TestCase):
    def test_fio_line_and_check(self):
        lines, checks = A.fio_lines("null 4k write (ops/s)", [2048, 1024, 4096], [2048, 2048, 1024], 3)
        self.assertEqual(lines, ["null 4k write (ops/s)              sharebench        2.0 MiB/s  fio        2.0 MiB/s  ratio  1.00  (3 rounds, medians)"])
        self.assertEqual(checks[0].value, 1.0)
        self.assertTrue(checks[0].met)

    def test_rss(self):
        lines, checks = A.rss_lines(70000)
        self.assertEqual(lines, ["peak RSS, full --auto matrix on null://: 68 MiB (limit 64 MiB + 16 MiB record buffer = 80 MiB)"])
        self.assertTrue(checks[0].met)
        self.assertFalse(A.rss_lines(81920)[1][0].met)

    def test_native_line_without_a_tool_figure_is_nan(self):
        lines, checks = A.native_lines("smb3 1m write 256m", [1024.0], [], "smbclient", 5, "native")
        self.assertEqual(lines, ["smb3 1m write 256m                 sharebench        1.0 MiB/s  smbclient        0.0 MiB/s  ratio   nan  (5 rounds, medians)"])
        self.assertFalse(checks[0].met)
        lines, checks = A.native_lines("nfs v3 1m read 256m", [900.0, 1000.0, 950.0], [1000.0] * 3, "nfs-cat  ", 3, "native")
        self.assertEqual(checks[0].label, "nfs v3 1m read 256m, sharebench/nfs-cat")
        self.assertEqual(checks[0].value, 0.95)
        self.assertTrue(checks[0].met)

    def test_nfs41_median_and_range_per_cell(self):
        rows = [("write", 4096, 0.8), ("write", 4096, 0.95), ("write", 4096, 1.0),
                ("read", 1048576, 0.85), ("read", 1048576, 0.9), ("read", 1048576, 0.8)]
        lines, checks = A.nfs41_lines(rows)
        self.assertEqual(lines, [
            "nfs v4.1/v3 write 4k, 16m file     ratio 0.95x (range 0.80-1.00, target >= 0.9x), 3 rounds of 5 interleaved samples",
            "nfs v4.1/v3 read 1024k, 16m file   ratio 0.85x (range 0.80-0.90, target >= 0.9x), 3 rounds of 5 interleaved samples",
        ])
        self.assertEqual([(c.value, c.met) for c in checks], [(0.95, True), (0.85, False)])

    def test_smb_lines(self):
        rows = [("depth1", "write", 4096, 1.1), ("depth1", "write", 65536, 0.96), ("depth1", "write", 65536, 0.99),
                ("depth8", "read", 1048576, 1.5), ("workers", "write", "smb2", 1.6), ("workers", "write", "smb2", 1.4),
                ("workers", "write", "smb2", 1.45)]
        lines, checks = A.smb_lines(rows)
        self.assertEqual(lines, [
            "smb2/libsmbclient write 4k, 16m, depth 1         ratio 1.10x (range 1.10-1.10, higher is better), 1 rounds",
            "smb2/libsmbclient write 64k, 64m, depth 1        ratio 0.97x (range 0.96-0.99, target >= 0.97x), 2 rounds",
            "smb2/libsmbclient read 1m, 64m, depth 8/1        ratio 1.50x (range 1.50-1.50, target >= 0.97x), 1 rounds",
            "smb smb2 4 workers/1, write 4k                   ratio 1.45x (range 1.40-1.60, target >= 1.5x), 3 rounds",
        ])
        self.assertEqual([c.met for c in checks], [None, True, True, False])

    def test_workloads(self):
        lines, checks = A.workloads_lines(5000, 3, [100, 200, 300], [50] * 3, [100] * 3, [100] * 3, [1.3] * 3, [1.0] * 3)
        self.assertEqual(lines, [
            "tmpfs create 5000 files (ops/s, wall) sharebench        200        fio        100        ratio  2.00  (target >= 1.0; 3 rounds, medians)",
            "tmpfs delete 5000 files (ops/s, wall) sharebench         50        fio        100        ratio  0.50  (target >= 1.0)",
            "small-file copy 1800 files (s)     sharebench      1.300 s      rsync    1.000 s      ratio  1.30  (sharebench/rsync, target <= 1.2)",
        ])
        self.assertEqual([c.met for c in checks], [True, False, False])

    def test_mpi(self):
        lines, checks = A.mpi_lines([1.0, 7.0, 2.0], 3)
        self.assertEqual(lines, ["mpi 3 ranks barrier+gather            2.000 ms per measurement (target < 5 ms; 3 rounds of 300, median)"])
        self.assertTrue(checks[0].met)
        self.assertFalse(A.mpi_lines([5.0], 1)[1][0].met)

    def test_repro_cv_across_runs(self):
        def run(write, read):
            return [rec(op="write", kib=write, reps_stop="ci"), rec(op="read", kib=read)]

        sb = [run(100, 90), run(100, 100), run(100, 110)]
        fio = [[("write", 1 << 20, 65536, 100.0), ("read", 1 << 20, 65536, 100.0)]] * 3
        lines, checks = A.repro_lines(sb, fio)
        self.assertEqual(lines[0], "repro tmpfs medians across runs    median CV 5.0% (target < 2%), max 10.0% at read 1m/64k (target < 5%); 2 cells, 3 runs")
        self.assertEqual(lines[1], "  fio, same cells, alternated      median CV 0.0%, max 0.0% at write 1m/64k; 2 cells, 3 runs")
        self.assertEqual(lines[4], "  why cells stopped sampling       ci 3 of 3 (file size, record size) pairs over the 3 runs")
        self.assertEqual([(c.value, c.met) for c in checks[:2]], [(5.0, False), (10.0, False)])
        self.assertEqual([c.met for c in checks[2:]], [None, None])

    def test_aa_check(self):
        lines, checks = A.aa_lines("cells: 32\n32 findings (0 naming a winner), baseline /a; warnings: none\n")
        self.assertEqual(lines, ["A/A check (must name no winner): 32 findings (0 naming a winner), baseline /a; warnings: none"])
        self.assertTrue(checks[0].met)
        self.assertFalse(A.aa_lines("32 findings (2 naming a winner), baseline /a; warnings: none")[1][0].met)

    def test_drift_blocks(self):
        # 6 runs, one write cell and one read cell: k=1 gives 6 blocks, k=2 gives 3, k=5 one (stop).
        runs = [{("write", 1 << 20, 65536): [100.0], ("read", 1 << 20, 65536): [v]} for v in (100, 100, 100, 100, 100, 100)]
        lines, checks = A.drift_lines(25, runs)
        self.assertEqual(len(lines), 3)
        self.assertEqual(lines[0], "drift: 6 runs of 6 rounds in a row, 25 s each; blocks of k runs pooled = one run of 6k rounds")
        self.assertTrue(lines[1].startswith("    6 rounds (  25 s a run): median CV  0.0% (target < 2%), max  0.0% (target < 5%)"))
        self.assertTrue(all(c.met for c in checks))

    def test_iozone(self):
        rows = [(0, "iozone", 4, "read", 1000), (0, "iozone", 4, "reread", 2000),
                (0, "sharebench-100ms", 4, "read", 950), (0, "sharebench-100ms", 4, "reread", 2300),
                (0, "sharebench-0", 4, "read", 1000), (0, "sharebench-0", 4, "reread", 2000),
                (1, "iozone", 4, "read", 1000), (1, "iozone", 4, "reread", 2000),
                (1, "sharebench-100ms", 4, "read", 1050), (1, "sharebench-100ms", 4, "reread", 2100),
                (1, "sharebench-0", 4, "read", 900), (1, "sharebench-0", 4, "reread", 1800),
                # A cell IOzone measured in one round only: one ratio.
                (1, "iozone", 1024, "write", 4000), (1, "sharebench-100ms", 1024, "write", 3000),
                (0, "sharebench-100ms", 1024, "write", 9999)]
        lines, checks = A.iozone_lines(rows)
        self.assertEqual(lines[0], "4k read vs IOzone, default samples   median ratio 1.00x (range 0.95-1.05, 2 interleaved rounds; target 0.95-1.05 with default samples)")
        self.assertEqual(lines[1], "4k reread vs IOzone, default samples median ratio 1.10x (range 1.05-1.15, 2 interleaved rounds; target 0.95-1.05 with default samples)")
        self.assertEqual(lines[2], "1m write vs IOzone, default samples  median ratio 0.75x (range 0.75-0.75, 1 interleaved rounds; target 0.95-1.05 with default samples)")
        self.assertEqual(lines[4], "4k reread vs IOzone, single pass     median ratio 0.95x (range 0.90-1.00, 2 interleaved rounds; target 0.95-1.05 with default samples)")
        self.assertEqual([c.target for c in checks], ["iozone"] * 3 + [None] * 2)
        self.assertEqual([c.met for c in checks[:3]], [True, False, False])

    def test_iodepth_counts_complete_rounds_only(self):
        rows = [("disk", "sb", 16, 4000.0), ("disk", "sb", 1, 1000.0), ("disk", "fio", 16, 4000.0),
                ("tmpfs", "sb", 16, 8000.0), ("tmpfs", "sb", 1, 4000.0), ("tmpfs", "fio", 16, 10000.0),
                ("disk", "sb", 16, 100.0)]
        lines, checks = A.iodepth_lines(rows, 16, "xfs loop image, O_DIRECT")
        self.assertEqual(lines, [
            "4k random-read, depth 16, xfs loop image, O_DIRECT sharebench     1000 ops/s  fio io_uring     1000 ops/s  ratio 1.00x (range 1.00-1.00)  vs depth 1: 4.00x (range 4.00-4.00), 1 interleaved rounds",
            "4k random-read, depth 16, tmpfs, page cache      sharebench     2000 ops/s  fio io_uring     2500 ops/s  ratio 0.80x (range 0.80-0.80)  vs depth 1: 2.00x (range 2.00-2.00), 1 interleaved rounds",
        ])
        self.assertEqual([c.met for c in checks], [True, None, False, None])
        self.assertEqual(A.iodepth_lines([], 16, "ext4 in /var/tmp, O_DIRECT")[0][0],
                         "4k random-read, depth 16, ext4 in /var/tmp, O_DIRECT: no complete round")

    def test_fio_nfs(self):
        rows = [("rewrite", 1, 102400.0, 204800.0), ("read", 1, 102400.0, 102400.0),
                ("rewrite", 8, 409600.0, 409600.0), ("read", 8, 204800.0, 409600.0)]
        lines, checks = A.fio_nfs_lines(rows)
        self.assertEqual(lines[0], "lab:nfs3 rewrite 64k, depth 1: sharebench    100 vs fio nfs    200 MiB/s  ratio 0.50 (range 0.50-0.50), 1 rounds")
        self.assertEqual(lines[2], "lab:nfs3 rewrite 64k, depth 8/1, sharebench: 4.00x")
        self.assertEqual(len(lines), 8)
        self.assertTrue(all(c.target is None for c in checks))

    def test_labdepth(self):
        rows = [("depth", "lab:nfs3", "write", 2.0, 102400.0, 204800.0), ("depth", "lab:nfs3", "read", 1.2, 102400.0, 122880.0),
                ("workers", "lab:smb", "write", 1.5, 10240.0, 15360.0),
                ("workers", "lab:smb-libsmbclient", "write", 1.0, 10240.0, 10240.0)]
        lines, checks = A.labdepth_lines(rows)
        self.assertEqual(lines, [
            "lab:nfs3 write 64k, depth 8/1                    200 vs   100 MiB/s  ratio 2.00x (range 2.00-2.00, target >= 1.5x), 1 rounds",
            "lab:nfs3 read 64k, depth 8/1                     120 vs   100 MiB/s  ratio 1.20x (range 1.20-1.20, target >= 1.5x), 1 rounds",
            "lab:smb write 4k, 4 workers/1                     15 vs    10 MiB/s  ratio 1.50x (range 1.50-1.50, target >= 1.5x), 1 rounds",
            "lab:smb-libsmbclient write 4k, 4 workers/1        10 vs    10 MiB/s  ratio 1.00x (range 1.00-1.00, target >= 1.5x), 1 rounds",
        ])
        # The bar is lab:smb's: libsmbclient (it serialises its workers) is shown beside it, unjudged.
        self.assertEqual([c.target for c in checks], ["labdepth", "labdepth", "labdepth", None])
        self.assertEqual([c.met for c in checks], [True, False, True, None])

    def test_load(self):
        rows = [(1, 10.0, 0.99, 500.0), (16, 11.0, 0.98, 700.0), (1, 10.0, 1.0, 400.0), (16, 12.0, 0.97, 900.0)]
        lines, checks = A.load_lines(rows, "4000", 16)
        self.assertEqual(lines, ["load point, build mix, 4000/s on tmpfs   CPU/request 1 worker   10.0 us  16 workers   11.5 us"
                                 "  ratio 1.15x (range 1.10-1.20, target <= 1.2x), achieved/asked >= 0.970, p99 450/800 us, 2 interleaved rounds"])
        self.assertTrue(checks[0].met)
        self.assertIsNone(checks[1].met)


def flip_log(headline, *claims):
    """A study log: a headline and claim lines (id, change %, verdict)."""
    lines = ["running nfs-server-configs", headline]
    for cid, change, low, high, verdict in claims:
        lines.append(f"  agrees  {cid}: read 64k: {change:+.1f}% [{low:+.1f}%, {high:+.1f}%] ({verdict}); steadiness 97% [96%, 98%]")
    return "\n".join(lines) + "\n"


class FlipTest(unittest.TestCase):
    def test_reads_a_log(self):
        run = A.flip_run(flip_log("xfs is faster than ext4 (by 4%)", ("fs-read", 4.0, 1.0, 7.0, "faster")))
        self.assertEqual(run.winner, "xfs")
        self.assertEqual(run.headline, "xfs is faster than ext4")
        self.assertEqual(run.claims, {"fs-read": ("faster", 4.0)})
        self.assertEqual(run.intervals, {"fs-read": [(1.0, 7.0), (96.0, 98.0)]})

    def test_agreeing_runs(self):
        a = A.flip_run(flip_log("xfs is faster than ext4 (by 4%)", ("fs-read", 4.0, 1.0, 7.0, "faster"), ("v41", 0.5, -1.0, 2.0, "equivalent")))
        b = A.flip_run(flip_log("xfs is faster than ext4 (by 3%)", ("fs-read", 3.0, 0.5, 6.0, "faster"), ("v41", -0.5, -2.0, 1.0, "equivalent")))
        lines, checks = A.flip_lines([a, b])
        self.assertEqual(lines[0], "flip run 1: headline: xfs is faster than ext4")
        self.assertIn("headline winner the same: yes", lines[-1])
        self.assertEqual([c.value for c in checks], [0, 0, 0, 1, 0])
        self.assertEqual([c.met for c in checks], [True, True, True, None, True])

    def test_a_flip_is_counted(self):
        a = A.flip_run(flip_log("xfs is faster than ext4 (by 4%)", ("fs-read", 4.0, 2.0, 7.0, "faster")))
        b = A.flip_run(flip_log("Neither is faster", ("fs-read", -3.0, -6.0, -1.0, "slower")))
        lines, checks = A.flip_lines([a, b])
        self.assertIn("headline winner the same: NO", lines[-1])
        self.assertIn("reversed or equivalent in another: 1 (target 0) fs-read", lines[-1])
        self.assertIn("do not overlap: 1 of 2 (target 0): fs-read [+2.0, +7.0] vs [-6.0, -1.0]", lines[-1])
        self.assertEqual([c.value for c in checks], [1, 1, 1, 1, 1])
        self.assertEqual([c.met for c in checks], [False, False, False, None, False])


class SummaryTest(unittest.TestCase):
    def test_table(self):
        checks = [A.ratio_check("a, sharebench/fio", 1.05, "fio"), A.ratio_check("b", 0.5, "fio"),
                  A.ratio_check("c", 2.0), A.Check("d", 0.95, "0.950x", "iozone")]
        lines = A.summary_lines(checks)
        self.assertEqual(lines[0], "summary: 4 figures")
        self.assertEqual(lines[1], "figure              value  target            result")
        self.assertEqual(lines[2], "a, sharebench/fio  1.050x  >= 1.0x           met")
        self.assertEqual(lines[3], "b                  0.500x  >= 1.0x           not met")
        self.assertEqual(lines[4], "c                  2.000x                    no target")
        self.assertEqual(lines[5], "d                  0.950x  within 0.95-1.05  met")
        self.assertEqual(lines[-1], "targets met: 2 of 3")

    def test_nothing_measured(self):
        self.assertEqual(A.summary_lines([]), ["summary: no figures (every section was skipped or failed)"])


if __name__ == "__main__":
    unittest.main()
