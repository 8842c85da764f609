#!/usr/bin/env bash
# The whole suite (make test): the lint and every test, in two queues side by side.
#
# The machine has one lab, so the test files that bring it up, or that check no lab
# namespace appears while they run (those calling no_lab_before_or_after or
# lab_namespaces), take turns in the lab queue, in the foreground. Lab tests mostly wait on
# servers and shaped links, which leaves the CPUs to the other queue: the lint's compiling
# checks (clippy, plain cargo, in a target directory of their own, target/lint, so that
# their build never holds the lab queue's cargo waiting), then every other test; its output
# is printed when the lab queue is done. Ctrl-C ends both queues. The lint's source checks and the build of every test binary come first
# (a failure there stops everything at once). Exit 0 only when both queues pass.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO=${CARGO:-cargo}
# The Makefile's FEATURES: the binary is built with multi-client (MPI) support.
export FEATURES=${FEATURES:---features sharebench/mpi}
read -r -a features <<<"$FEATURES"
# Every cargo test selects the whole workspace with the same features, so all of them use
# the binaries built once; they differ only in the test targets they run.
ARGS=(--release --locked --workspace "${features[@]}")

lab_tests=()
other_tests=()
for f in crates/*/tests/*.rs; do
  name=$(basename "$f" .rs)
  if grep -qE 'no_lab_before_or_after|lab_namespaces\(' "$f"; then
    lab_tests+=("$name")
  else
    other_tests+=(--test "$name")
  fi
done
# `--test NAME` runs every crate's test of that name: a lab test's name must be its own.
for t in "${lab_tests[@]}"; do
  if [ "$(ls crates/*/tests/"$t".rs | wc -l)" != 1 ]; then
    echo "test.sh: two crates have a test named '$t', one of them using the lab: rename one" >&2
    exit 2
  fi
done
# tests/study.rs first: of the lab tests it cares least about CPU time, and the lint's
# compiling checks run beside it.
ordered=()
for t in "${lab_tests[@]}"; do
  if [ "$t" = study ]; then ordered=(study "${ordered[@]}"); else ordered+=("$t"); fi
done
lab_tests=("${ordered[@]}")

scripts/lint.sh source
$CARGO test "${ARGS[@]}" --no-run

log=$(mktemp /tmp/sharebench-tests-XXXXXX.log)
# Each queue's commands run in process groups of their own (job control on): Ctrl-C or a
# TERM reaches the script, which ends them all and takes the lab down (a test killed
# mid-way leaves it up).
others=
current=
stop() {
  for g in $others $current; do kill -INT -- -"$g" 2>/dev/null || true; done
}
trap 'stop; rm -f "$log"' EXIT
trap 'echo "== interrupted: ending both queues, taking the lab down" >&2; stop; wait || true; target/release/sharebench lab down >&2 || true; exit 130' INT TERM
set -m
start=$SECONDS
(
  CARGO_TARGET_DIR=target/lint scripts/lint.sh compile &&
    # Unit tests, the integration tests that need no lab, doc tests.
    $CARGO test "${ARGS[@]}" --lib --bins &&
    $CARGO test "${ARGS[@]}" "${other_tests[@]}" &&
    $CARGO test "${ARGS[@]}" --doc
) >"$log" 2>&1 || {
  rc=$?
  echo "== the lint or a test beside the lab queue failed (exit $rc); its output follows the lab tests'" >&2
  exit $rc
} &
others=$!

lab_rc=0
echo "== lab tests, one at a time: ${lab_tests[*]}; the lint's compiling checks and the other tests run beside them" >&2
for t in "${lab_tests[@]}"; do
  # In the background and waited for, so that a signal is acted on at once.
  $CARGO test "${ARGS[@]}" --test "$t" &
  current=$!
  wait "$current" || lab_rc=$?
  current=
done
echo "== lab tests: exit $lab_rc after $((SECONDS - start)) s" >&2

other_rc=0
wait "$others" || other_rc=$?
others=
set +m
echo "== the lint and every other test (run beside them): exit $other_rc" >&2
cat "$log"
echo "== suite: lab tests exit $lab_rc, lint and other tests exit $other_rc, $((SECONDS - start)) s" >&2
[ "$lab_rc" = 0 ] && [ "$other_rc" = 0 ]
