#!/usr/bin/env bash
# `make bench`: sharebench against its peers, side by side. The bench is the Python package
# scripts/bench/ (its __init__.py says what is where); `scripts/bench.sh --help` lists the
# environment variables (BENCH_ONLY, ROUNDS, BENCH_OUT, IOZONE, FIO_NFS, ...).
cd "$(dirname "$0")" && exec python3 -m bench "$@"
