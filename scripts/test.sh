#!/usr/bin/env bash
# The whole suite (make test): the lint and every test, in two queues side by side.
#
# The machine has one lab, so the test files that bring it up, or that check no lab
# namespace appears while they run (those calling no_lab_before_or_after or
# lab_namespaces), take turns in the lab queue, in the foreground. The binary and those
# tests are built first, and the lab queue starts as soon as they are: it runs the test
# executables themselves, not through cargo, so that it never waits on the other queue's
# cargo lock. The other queue, at the lowest CPU priority (SCHED_IDLE), builds the rest of
# the tests, runs them, then the lint's compiling checks (clippy, plain cargo); its output is
# printed when the lab queue is done. The lint compiles in the same target directory: it
# reuses the build's build scripts and proc macros (about a third of its CPU time), and the
# lab queue runs no cargo that could wait on its lock.
# The lint's source checks come first (a failure there stops everything at once). Ctrl-C
# ends both queues. Exit 0 only when both queues pass.
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
declare -A lab_dir # a lab test's crate directory: cargo runs a test from there
other_tests=()
for f in crates/*/tests/*.rs; do
  name=$(basename "$f" .rs)
  if grep -qE 'no_lab_before_or_after|lab_namespaces\(' "$f"; then
    lab_tests+=("$name")
    lab_dir[$name]=${f%/tests/*}
  else
    other_tests+=(--test "$name")
  fi
done
# `--test NAME` builds every crate's test of that name: a lab test's name must be its own.
for t in "${lab_tests[@]}"; do
  if [ "$(ls crates/*/tests/"$t".rs | wc -l)" != 1 ]; then
    echo "test.sh: two crates have a test named '$t', one of them using the lab: rename one" >&2
    exit 2
  fi
done
# tests/study.rs first: of the lab tests it cares least about CPU time, and most of the
# other queue's compiling runs beside it. (Beside a compile the studies take longer, but
# tests/lab.rs first failed its three-clients link check beside the test build, even at
# SCHED_IDLE: docs/measurements.md.)
ordered=()
for t in "${lab_tests[@]}"; do
  if [ "$t" = study ]; then ordered=(study "${ordered[@]}"); else ordered+=("$t"); fi
done
lab_tests=("${ordered[@]}")

scripts/lint.sh source

# The binary and the lab tests; cargo names each test's executable as it builds it
# ("Executable tests/lab.rs (target/release/deps/lab-...)").
built=$(mktemp /tmp/sharebench-build-XXXXXX.log)
log=$(mktemp /tmp/sharebench-tests-XXXXXX.log)
trap 'rm -f "$built" "$log"' EXIT
lab_args=()
for t in "${lab_tests[@]}"; do lab_args+=(--test "$t"); done
$CARGO test "${ARGS[@]}" --no-run "${lab_args[@]}" 2>&1 | tee "$built" >&2
declare -A lab_exe
while read -r name exe; do lab_exe[$name]=$(realpath "$exe"); done < <(
  sed -n 's|^ *Executable tests/\([^ ]*\)\.rs (\(.*\))$|\1 \2|p' "$built")
for t in "${lab_tests[@]}"; do
  [ -x "${lab_exe[$t]:-}" ] || {
    echo "test.sh: cargo named no executable for the lab test '$t'" >&2
    exit 2
  }
done

# Each queue's commands run in process groups of their own (job control on): Ctrl-C or a
# TERM reaches the script, which ends them all and takes the lab down (a test killed
# mid-way leaves it up).
others=
current=
stop() {
  for g in $others $current; do kill -INT -- -"$g" 2>/dev/null || true; done
}
# After stop: every process of both groups gone (a study the tests started finishes its
# measurement and takes its lab down on Ctrl-C), at most 30 s, then KILL what is left, so
# that the lab down below is the last word.
reap() {
  for g in $others $current; do
    for _ in $(seq 150); do
      kill -0 -- -"$g" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL -- -"$g" 2>/dev/null || true
  done
}
trap 'stop; rm -f "$built" "$log"' EXIT
trap 'echo "== interrupted: ending both queues, taking the lab down" >&2; stop; reap; wait || true; target/release/sharebench lab down >&2 || true; exit 130' INT TERM
set -m
start=$SECONDS
(
  # At the lowest CPU priority, SCHED_IDLE: the lab tests' clients and servers measure,
  # and some of their checks need the CPU they would have alone (three MPI clients filling
  # a link); this queue takes what they leave, and gives way at once when one of them
  # wakes (nice 19 alone did not: a CI-way run failed that check with it).
  chrt --idle -p 0 "$BASHPID"
  # The bench's analysis (make bench's arithmetic and targets; Python, no build).
  python3 -m unittest discover -q -s scripts/bench -t scripts &&
  # The other tests' executables, the tests themselves (unit tests, the integration tests
  # that need no lab, doc tests), then the lint's compiling checks.
  $CARGO test "${ARGS[@]}" --no-run &&
    $CARGO test "${ARGS[@]}" --lib --bins &&
    $CARGO test "${ARGS[@]}" "${other_tests[@]}" &&
    $CARGO test "${ARGS[@]}" --doc &&
    scripts/lint.sh compile
) >"$log" 2>&1 || {
  rc=$?
  echo "== a test beside the lab queue or the lint failed (exit $rc); its output follows the lab tests'" >&2
  exit $rc
} &
others=$!

lab_rc=0
echo "== lab tests, one at a time: ${lab_tests[*]}; the other tests and the lint's compiling checks run beside them" >&2
for t in "${lab_tests[@]}"; do
  echo "     Running ${lab_dir[$t]}/tests/$t.rs (${lab_exe[$t]})" >&2
  # From the crate's directory, as cargo runs it; in the background and waited for, so
  # that a signal is acted on at once.
  (cd "${lab_dir[$t]}" && exec "${lab_exe[$t]}") &
  current=$!
  # -f: until it ends, not merely stops (job control is on).
  wait -f "$current" || lab_rc=$?
  current=
done
echo "== lab tests: exit $lab_rc after $((SECONDS - start)) s" >&2

other_rc=0
wait -f "$others" || other_rc=$?
others=
set +m
echo "== every other test and the lint (run beside them): exit $other_rc" >&2
cat "$log"
echo "== suite: lab tests exit $lab_rc, other tests and lint exit $other_rc, $((SECONDS - start)) s" >&2
[ "$lab_rc" = 0 ] && [ "$other_rc" = 0 ]
