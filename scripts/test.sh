#!/usr/bin/env bash
# The whole suite (make test): every test binary is built first, then two queues run side
# by side. The machine has one lab, so the test files that bring it up, or that check no
# lab namespace appears while they run (those calling no_lab_before_or_after or
# lab_namespaces), take turns in one queue; every other test runs in the other, whose
# output is printed when it ends. Lab tests mostly wait on servers and shaped links, which
# leaves the CPUs to the rest. Exit 0 only when both queues pass.
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO=${CARGO:-cargo}
ARGS=(--release --locked)
FEATURES=(--features sharebench/mpi)

# Every invocation selects the whole workspace with the same features, so all of them use
# the binaries built once; they differ only in the test targets they run.
ARGS+=(--workspace "${FEATURES[@]}")
lab_tests=()
lab_names=()
other_tests=()
for f in crates/*/tests/*.rs; do
  name=$(basename "$f" .rs)
  if grep -qE 'no_lab_before_or_after|lab_namespaces\(' "$f"; then
    lab_tests+=(--test "$name")
    lab_names+=("$name")
  else
    other_tests+=(--test "$name")
  fi
done

$CARGO test "${ARGS[@]}" --no-run

log=$(mktemp /tmp/sharebench-tests-XXXXXX.log)
trap 'rm -f "$log"' EXIT
start=$SECONDS
(
  # Unit tests, the integration tests that need no lab, doc tests.
  $CARGO test "${ARGS[@]}" --lib --bins &&
    $CARGO test "${ARGS[@]}" "${other_tests[@]}" &&
    $CARGO test "${ARGS[@]}" --doc
) >"$log" 2>&1 &
others=$!

lab_rc=0
echo "== tests that use the lab, one at a time: ${lab_names[*]}; the others run beside them" >&2
$CARGO test "${ARGS[@]}" "${lab_tests[@]}" || lab_rc=$?
echo "== lab tests: exit $lab_rc after $((SECONDS - start)) s" >&2

other_rc=0
wait "$others" || other_rc=$?
echo "== every other test (run beside them): exit $other_rc" >&2
cat "$log"
echo "== suite: lab tests exit $lab_rc, other tests exit $other_rc, $((SECONDS - start)) s" >&2
[ "$lab_rc" = 0 ] && [ "$other_rc" = 0 ]
