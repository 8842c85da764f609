"""`make bench`: sharebench against its peers (fio, nfs-cp, smbclient, IOzone, ...), side by
side, interleaved, in one run; per comparison the medians over ROUNDS rounds and their
ratio, and at the end one table of every figure against its target.

Run as scripts/bench.sh, or `python3 -m bench` from scripts/; `--help` lists the
environment variables. Layout: settings (the variables), context (what the sections share
and the clean-up), running (processes, files, servers, the xfs image), one module per
section, analysis (all the arithmetic and printed lines, tested by test_analysis.py) and
targets (the one table of targets).
"""
