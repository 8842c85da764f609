#!/usr/bin/env bash
# The project's lint (make lint): `scripts/lint.sh` runs all of it; `source` only the checks
# that read the source (seconds), `compile` only those that compile (clippy, and plain cargo).
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO=${CARGO:-cargo}
# The Makefile's FEATURES: the binary is built with multi-client (MPI) support.
read -r -a FEATURES <<<"${FEATURES:---features sharebench/mpi}"
what=${1:-all}

if [ "$what" = all ] || [ "$what" = source ]; then
  $CARGO fmt --all -- --check
  # No module of core or report may use a module that uses it.
  python3 scripts/module-cycles.py crates/core/src crates/report/src
  # No function over 120 lines outside tests (split it where its parts have names).
  python3 scripts/long-functions.py crates/*/src
fi
if [ "$what" = all ] || [ "$what" = compile ]; then
  $CARGO clippy --release --locked --all-targets "${FEATURES[@]}" -- -D warnings
  # Plain cargo (no MPI feature) must build too: `cargo install --path crates/cli`.
  $CARGO check --release --locked -p sharebench
fi
