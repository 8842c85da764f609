#!/usr/bin/env bash
# `make fuzz`: runs each cargo-fuzz target of fuzz/ for FUZZ_SECONDS (default 600), seeded
# from the test fixtures, and says for each how long it ran and what it found. Outside CI's
# budget. Needs a nightly toolchain (libFuzzer's instrumentation) and cargo-fuzz, which it
# installs from crates.io if missing. A crash leaves its input under
# fuzz/artifacts/TARGET/: fix it, and add the input to that parser's tests.
#   FUZZ_SECONDS=60 FUZZ_TARGETS="sizes fio_json" make fuzz
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-600}
TARGETS=${FUZZ_TARGETS:-"iozone_text biff xlsx fio_json records_jsonl run_json study_toml target_urls sizes"}
FIX=crates/report/tests/fixtures

rustup run nightly true 2>/dev/null || { echo "fuzz: a nightly toolchain is needed (rustup toolchain install nightly)" >&2; exit 1; }
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked

# Seeds: the fixtures each parser reads in the tests, and a few hand-made lines.
seed() {  # seed TARGET FILE...
  mkdir -p "fuzz/corpus/$1"
  for f in "${@:2}"; do [ -f "$f" ] && cp "$f" "fuzz/corpus/$1/"; done
  return 0
}
seed iozone_text "$FIX"/*.txt
seed biff "$FIX"/*.xls
seed xlsx "$FIX"/*.xls
seed fio_json "$FIX"/*.json
seed records_jsonl $(find "$FIX/runs" -name results.jsonl | head -20)
seed run_json $(find "$FIX/runs" -name run.json | head -20)
seed study_toml studies/*.toml
mkdir -p fuzz/corpus/target_urls fuzz/corpus/sizes
printf 'nfs://127.0.0.1/export/dir?version=4.1' > fuzz/corpus/target_urls/nfs
printf 'smb://WG;user@127.0.0.1:4445/share/sub?client=libsmbclient' > fuzz/corpus/target_urls/smb
printf '1k..1t' > fuzz/corpus/sizes/range
printf '4k,64KiB,1m,16M' > fuzz/corpus/sizes/list

status=0
for t in $TARGETS; do
  start=$(date +%s)
  if cargo +nightly fuzz run "$t" "fuzz/corpus/$t" -- -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -timeout=30 \
      > "fuzz/$t.log" 2>&1; then
    runs=$(grep -o 'Done [0-9]* runs' "fuzz/$t.log" | tail -1)
    echo "fuzz: $t: $(( $(date +%s) - start )) s, ${runs:-?}, no crash"
  elif [ -n "$(ls -A "fuzz/artifacts/$t" 2>/dev/null)" ]; then
    echo "fuzz: $t: FOUND a crash after $(( $(date +%s) - start )) s: see fuzz/$t.log and fuzz/artifacts/$t/" >&2
    status=1
  else
    echo "fuzz: $t: stopped after $(( $(date +%s) - start )) s without a crash (interrupted, or failed to build): see fuzz/$t.log" >&2
    status=1
  fi
done
exit $status
