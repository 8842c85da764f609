#!/usr/bin/env bash
# `make bench`: sharebench against fio, side by side, interleaved, in one run.
# Prints, per comparison, the median of each tool over ROUNDS rounds and their ratio.
# Targets (issue 2): null 4k ops/s >= fio null; tmpfs rewrite/read 4k and 1m >= 1.0x fio
# psync with latency histograms on; peak memory of the full --auto matrix < 64 MiB + buffers.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/sharebench}
ROUNDS=${ROUNDS:-5}
WORK=$(mktemp -d /dev/shm/sharebench-bench.XXXXXX)
OUT=$(mktemp -d /tmp/sharebench-bench-out.XXXXXX)
trap 'rm -rf "$WORK" "$OUT"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# sharebench KiB/s of one op (single scope, rep 0) from a fresh results dir.
sb() { # op bs size target
  local dir="$OUT/sb.$RANDOM$RANDOM"
  "$BIN" run -i "$2" --file-sizes "$4" --record-sizes "$3" --reps 1 --out "$dir" "$5" >/dev/null
  python3 - "$dir/results.jsonl" "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["op"] == sys.argv[2] and r["status"] == "ok":
        print(r["throughput_kib_s"]); break
PY
}

# fio KiB/s: bw is in KiB/s.
fio_bw() { # rw bs size engine file dir
  fio --name=b --ioengine="$4" --rw="$1" --bs="$2" --size="$3" --filename="$5" \
      --output-format=json 2>/dev/null | python3 -c '
import json,sys
j=json.load(sys.stdin)["jobs"][0]
print(j["write"]["bw_bytes"]/1024 if j["write"]["io_bytes"] else j["read"]["bw_bytes"]/1024)'
}

compare() { # label sb_op sb_io fio_rw bs size target engine fio_file
  local label=$1 sbs=() fios=()
  for _ in $(seq "$ROUNDS"); do
    sbs+=("$(sb "$2" "$3" "$5" "$6" "$7")")
    fios+=("$(fio_bw "$4" "$5" "$6" "$8" "$9")")
  done
  local s f
  s=$(printf '%s\n' "${sbs[@]}" | median)
  f=$(printf '%s\n' "${fios[@]}" | median)
  python3 -c "
s,f=$s,$f
print(f'{\"$label\":<34} sharebench {s/1024:10.1f} MiB/s  fio {f/1024:10.1f} MiB/s  ratio {s/f:5.2f}  ({$ROUNDS} rounds, medians)')"
}

echo "sharebench $("$BIN" --version | cut -d' ' -f2) vs $(fio --version), $(nproc) cores, ROUNDS=$ROUNDS"
# Per-operation overhead: null target, 4 KiB records (ops/s ratio = throughput ratio).
compare "null 4k write (ops/s)" write write write 4k 1g null:// null /dev/null
compare "null 4k read (ops/s)" read read read 4k 1g null:// null /dev/null
# tmpfs, an existing 256 MiB file: sharebench writes it untimed first, fio lays it out.
F="$WORK/fio.dat"
fio --name=layout --ioengine=psync --rw=write --bs=1m --size=256m --filename="$F" >/dev/null 2>&1
compare "tmpfs 4k rewrite 256m" rewrite rewrite write 4k 256m "$WORK" psync "$F"
compare "tmpfs 4k read 256m" read read read 4k 256m "$WORK" psync "$F"
compare "tmpfs 1m rewrite 256m" rewrite rewrite write 1m 256m "$WORK" psync "$F"
compare "tmpfs 1m read 256m" read read read 1m 256m "$WORK" psync "$F"

# Peak memory of the full --auto matrix (null target, one repetition), against 64 MiB
# plus the record buffers (one 16 MiB record buffer per worker).
RSS_KB=$(/usr/bin/time -f %M "$BIN" run --auto -i iozone --reps 1 --out "$OUT/auto" null:// 2>&1 >/dev/null | tail -1)
echo "peak RSS, full --auto matrix on null://: $((RSS_KB / 1024)) MiB (limit 64 MiB + 16 MiB record buffer = 80 MiB)"
