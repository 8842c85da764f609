#!/usr/bin/env bash
# `make bench`: sharebench against fio, side by side, interleaved, in one run.
# Prints, per comparison, the median of each tool over ROUNDS rounds and their ratio.
# Targets (issue 2): null 4k ops/s >= fio null; tmpfs rewrite/read 4k and 1m >= 1.0x fio
# psync with latency histograms on; peak memory of the full --auto matrix < 64 MiB + buffers.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/sharebench}
ROUNDS=${ROUNDS:-5}
# BENCH_ONLY=fio,native,workloads,mpi,repro,flip,iozone,iodepth,labdepth,load runs only the named sections
# (default: all of these; the drift section, half an hour, runs only when named). The iozone
# section needs IOZONE=/path/to/iozone (3.5, built outside the repository); the labdepth
# section compares lab:nfs3 with fio's nfs engine when FIO_NFS=/path/to/fio (fio built from
# source with ./configure --enable-libnfs, outside the repository: Debian's fio has no nfs
# engine).
BENCH_ONLY=${BENCH_ONLY:-fio,native,workloads,mpi,repro,flip,iozone,iodepth,labdepth,load}
want() { [[ ",$BENCH_ONLY," == *",$1,"* ]]; }
WORK=$(mktemp -d /dev/shm/sharebench-bench.XXXXXX)
# BENCH_OUT=DIR keeps the runs' outputs (the flip section's study logs and reports) there.
if [[ -n ${BENCH_OUT:-} ]]; then
  # Runs write fixed names under it and refuse a results directory that is not empty.
  if [ -n "$(ls -A "$BENCH_OUT" 2>/dev/null)" ]; then
    echo "bench: BENCH_OUT=$BENCH_OUT is not empty; give a new directory" >&2; rm -rf "$WORK"; exit 2
  fi
  OUT=$BENCH_OUT; mkdir -p "$OUT" || { rm -rf "$WORK"; exit 2; }; KEEP_OUT=1
else
  OUT=$(mktemp -d /tmp/sharebench-bench-out.XXXXXX); KEEP_OUT=
fi
# The iodepth section's xfs file system (a loop image), made and removed by the bench.
XFS_DIR= XFS_LOOP= XFS_MNT=
# Makes the xfs image, its loop device and its mount, all under a new directory of the bench's.
xfs_up() {
  [ "$(id -u)" = 0 ] && command -v mkfs.xfs >/dev/null && command -v losetup >/dev/null || return 1
  XFS_DIR=$(mktemp -d "$IODEPTH_DIR/sharebench-bench-xfs.XXXXXX") && [ -n "$XFS_DIR" ] || return 1
  truncate -s 512M "$XFS_DIR/image" && mkfs.xfs -q "$XFS_DIR/image" || return 1
  XFS_LOOP=$(losetup --find --show --direct-io=on "$XFS_DIR/image") || return 1
  mkdir "$XFS_DIR/mnt" && mount "$XFS_LOOP" "$XFS_DIR/mnt" && XFS_MNT=$XFS_DIR/mnt
}
# Undoes what xfs_up made, and nothing else: only its own mount, loop device and directory.
# A run killed with the bench may still hold the mount for a moment, so the unmount is
# retried for up to 10 s; what cannot be undone is named, never forced.
xfs_down() {
  if [ -n "$XFS_MNT" ] && mountpoint -q "$XFS_MNT"; then
    for _ in $(seq 50); do umount "$XFS_MNT" 2>/dev/null && break; sleep 0.2; done
    if mountpoint -q "$XFS_MNT"; then
      echo "bench: $XFS_MNT is still busy; unmount it, then losetup -d $XFS_LOOP" >&2
      XFS_DIR= XFS_LOOP= XFS_MNT=; return 0
    fi
  fi
  if [ -n "$XFS_LOOP" ]; then losetup -d "$XFS_LOOP" || true; fi
  if [ -n "$XFS_DIR" ]; then rm -rf "$XFS_DIR"; fi
  XFS_DIR= XFS_LOOP= XFS_MNT=
}
# Every tool runs with idle CPUs kept polling, as sharebench run does by default as root:
# fio and IOzone cannot ask for it, so the bench holds the same request (a CPU-latency of
# 0 us on /dev/cpu_dma_latency) for the whole bench; the kernel drops it when the holder
# ends, and the holder ends with the bench, even if the bench is killed outright (it
# checks its parent every second). Without root no tool gets it (sharebench says so).
AWAKE_PID=
if [ "$(id -u)" = 0 ] && [ -c /dev/cpu_dma_latency ]; then
  python3 -c 'import os, sys, time
fd = os.open("/dev/cpu_dma_latency", os.O_WRONLY | os.O_NOFOLLOW)
os.write(fd, (0).to_bytes(4, "little"))
while os.getppid() == int(sys.argv[1]):
    time.sleep(1)' $$ &
  AWAKE_PID=$!
fi
# Removes the work files (and the iodepth section's xfs image if it is still there), and
# the outputs unless BENCH_OUT asked to keep them; ends the bench's CPU-latency holder.
remove_work() {
  if [ -n "$AWAKE_PID" ]; then kill "$AWAKE_PID" 2>/dev/null || true; fi
  xfs_down
  rm -rf "$WORK"
  if [ -z "$KEEP_OUT" ]; then rm -rf "$OUT"; fi
}
trap remove_work EXIT

median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# sharebench KiB/s of one op (single scope, rep 0) from a fresh results dir.
sb() { # op bs size target [run options...]
  local dir="$OUT/sb.$RANDOM$RANDOM"
  # One pass, as fio makes one pass over its size.
  "$BIN" run -i "$2" --file-sizes "$4" --record-sizes "$3" --reps 1 --min-sample-time 0 --out "$dir" "${@:6}" "$5" >/dev/null
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
  # A real file is laid out anew each round, as sharebench writes its file anew before a
  # rewrite or read: overwriting a fresh file (tmpfs with huge pages) is slower than
  # overwriting one that was overwritten before, so both tools must start alike.
  if [ "$4" != null ]; then
    rm -f "$5"
    fio --name=layout --ioengine=psync --rw=write --bs=1m --size="$3" --filename="$5" >/dev/null 2>&1
  fi
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
fio_bench() {
# Per-operation overhead: null target, 4 KiB records (ops/s ratio = throughput ratio).
compare "null 4k write (ops/s)" write write write 4k 1g null:// null /dev/null
compare "null 4k read (ops/s)" read read read 4k 1g null:// null /dev/null
# tmpfs, an existing 256 MiB file: sharebench writes it untimed first, fio lays it out.
F="$WORK/fio.dat"
compare "tmpfs 4k rewrite 256m" rewrite rewrite write 4k 256m "$WORK" psync "$F"
compare "tmpfs 4k read 256m" read read read 4k 256m "$WORK" psync "$F"
compare "tmpfs 1m rewrite 256m" rewrite rewrite write 1m 256m "$WORK" psync "$F"
compare "tmpfs 1m read 256m" read read read 1m 256m "$WORK" psync "$F"

# Peak memory of the full --auto matrix (null target, one repetition), against 64 MiB
# plus the record buffers (one 16 MiB record buffer per worker).
RSS_KB=$(/usr/bin/time -f %M "$BIN" run --auto -i iozone --reps 1 --min-sample-time 0 --out "$OUT/auto" null:// 2>&1 >/dev/null | tail -1)
echo "peak RSS, full --auto matrix on null://: $((RSS_KB / 1024)) MiB (limit 64 MiB + 16 MiB record buffer = 80 MiB)"
}
if want fio; then fio_bench; fi

# Native NFS and SMB clients (crates/backends nfs.rs, smb.rs) against the command-line
# tools of the same stacks: sequential write and read of a 256 MiB file at 1 MiB records,
# sharebench's nfs:// (libnfs, NFSv3) against nfs-cp (libnfs, 1 MiB preads/pwrites) and its
# smb:// (the smb2 client, SMB 3.1.1, signing) against smbclient put/get, interleaved, ROUNDS
# rounds, medians and ratios. Target: >= 0.9x. smbclient's put and get keep several requests
# in flight (Samba's cli_push, cli_pull), so smb:// runs at depth 1 and at --iodepth 8, and
# libsmbclient (one request at a time) is shown beside them. Servers (NFS-Ganesha VFS, smbd, rpcbind if
# none runs) start here on 127.0.0.1 and are stopped by PID at exit.
# sharebench and smbclient report the transfer alone; nfs-cp is timed as a whole command
# (process start and mount included, a few ms), and its read writes a tmpfs file (it
# refuses /dev/null), so nfs-cat > /dev/null is shown as a second read baseline.
native_bench() {
  if [ "$(id -u)" != 0 ]; then
    echo "native nfs/smb: skipped (the servers need root)"; return 0
  fi
  local t
  for t in ganesha.nfsd smbd smbpasswd rpcbind rpcinfo smbclient nfs-cp nfs-cat setsid; do
    command -v "$t" >/dev/null 2>&1 || { echo "native nfs/smb: skipped ('$t' is missing; run scripts/install-deps.sh)"; return 0; }
  done
  if (exec 3<>/dev/tcp/127.0.0.1/2049) 2>/dev/null || (exec 3<>/dev/tcp/127.0.0.1/4445) 2>/dev/null; then
    echo "native nfs/smb: skipped (127.0.0.1:2049 or :4445 is already in use)"; return 0
  fi
  # Server directories on tmpfs: the comparison is of clients, not of a disk's writeback.
  NDIR=$(mktemp -d /dev/shm/sharebench-bench-native.XXXXXX)
  chmod 755 "$NDIR"
  mkdir -p "$NDIR"/{export,recov,share,lock,state,cache,private,pid,ncalrpc,log}
  chmod 777 "$NDIR/share"
  if ! (exec 3<>/dev/tcp/127.0.0.1/111) 2>/dev/null; then
    setsid rpcbind -f -w >"$NDIR/rpcbind.log" 2>&1 &
    NPIDS+=($!)
    for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/111) 2>/dev/null && break; sleep 0.1; done
  fi
  cat >"$NDIR/ganesha.conf" <<CONF
NFS_CORE_PARAM { Protocols = 3, 4; Bind_addr = 127.0.0.1; Enable_NLM = false; Enable_RQUOTA = false; }
NFSV4 { Graceless = true; RecoveryBackend = fs; RecoveryRoot = $NDIR/recov; Minor_Versions = 0, 1, 2; pnfs_mds = false; }
EXPORT { Export_Id = 77; Path = $NDIR/export; Pseudo = /bench; Access_Type = RW; Squash = No_Root_Squash; SecType = sys; FSAL { Name = VFS; } }
CONF
  setsid ganesha.nfsd -F -f "$NDIR/ganesha.conf" -L "$NDIR/ganesha.log" -p "$NDIR/ganesha.pid" -N NIV_EVENT >"$NDIR/ganesha.out" 2>&1 &
  NPIDS+=($!)
  printf 'nobody = bench\n' >"$NDIR/users.map"
  cat >"$NDIR/smb.conf" <<CONF
[global]
  smb ports = 4445
  interfaces = 127.0.0.1
  bind interfaces only = yes
  disable netbios = yes
  load printers = no
  printing = bsd
  printcap name = /dev/null
  disable spoolss = yes
  server role = standalone server
  server min protocol = SMB3
  server signing = mandatory
  map to guest = never
  passdb backend = tdbsam:$NDIR/private/passdb.tdb
  username map = $NDIR/users.map
  lock directory = $NDIR/lock
  state directory = $NDIR/state
  cache directory = $NDIR/cache
  private dir = $NDIR/private
  pid directory = $NDIR/pid
  ncalrpc dir = $NDIR/ncalrpc
  log file = $NDIR/log/log.%m
[share]
  path = $NDIR/share
  read only = no
CONF
  local pw="bench-$RANDOM$RANDOM"
  printf '%s\n%s\n' "$pw" "$pw" | smbpasswd -c "$NDIR/smb.conf" -s -a nobody >/dev/null
  printf '%s\n' "$pw" >"$NDIR/pw"
  printf 'username = bench\npassword = %s\n' "$pw" >"$NDIR/auth"
  chmod 600 "$NDIR/pw" "$NDIR/auth"
  setsid smbd --foreground --no-process-group --debug-stdout -d 1 -s "$NDIR/smb.conf" >"$NDIR/smbd.log" 2>&1 &
  NPIDS+=($!)
  for _ in $(seq 300); do
    (exec 3<>/dev/tcp/127.0.0.1/4445) 2>/dev/null && rpcinfo -p 127.0.0.1 2>/dev/null | grep -q mountd && break
    sleep 0.1
  done
  export SHAREBENCH_SMB_PASSWORD_FILE="$NDIR/pw"
  local nfs="nfs://127.0.0.1$NDIR/export?version=3" smb="smb://bench@127.0.0.1:4445/share"
  local f="$WORK/native256.bin" kib=262144
  head -c 256M /dev/urandom >"$f"
  # KiB/s of one command, timed whole.
  timed() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1 || { echo 0; return; }; e=$(date +%s%N); python3 -c "print($kib/(($e-$s)/1e9))"; }
  smb_rate() { smbclient //127.0.0.1/share -p 4445 -A "$NDIR/auth" -m SMB3 -c "$1" 2>&1 | sed -n 's/.*(\([0-9.]*\) \(kb\/s\|KiloBytes\/sec\)).*/\1/p' | head -1; }
  local -a sbw=() cpw=() sbr=() cpr=() catr=() ssw=() scw=() ssr=() scr=() ssw8=() ssr8=() slw=() slr=()
  local cpsrc="nfs://127.0.0.1$NDIR/export/cp.bin?version=3"
  # One round; the tools go first in alternate rounds, so neither always follows the other.
  nat_round() {
    if [ "$1" = sb ]; then
      sbw+=("$(sb write write 1m 256m "$nfs")")
      sbr+=("$(sb read read 1m 256m "$nfs")")
      ssw+=("$(sb write write 1m 256m "$smb")")
      ssr+=("$(sb read read 1m 256m "$smb")")
      # smbclient keeps several requests in flight; the smb2 client can too.
      ssw8+=("$(sb write write 1m 256m "$smb" --iodepth 8)")
      ssr8+=("$(sb read read 1m 256m "$smb" --iodepth 8)")
      slw+=("$(sb write write 1m 256m "$smb?client=libsmbclient")")
      slr+=("$(sb read read 1m 256m "$smb?client=libsmbclient")")
    else
      rm -f "$NDIR/export/cp.bin"; cpw+=("$(timed nfs-cp "$f" "$cpsrc")")
      rm -f "$WORK/cp-back.bin"; cpr+=("$(timed nfs-cp "$cpsrc" "$WORK/cp-back.bin")")
      rm -f "$WORK/cp-back.bin"
      catr+=("$(s=$(date +%s%N); nfs-cat "$cpsrc" >/dev/null; e=$(date +%s%N); python3 -c "print($kib/(($e-$s)/1e9))")")
      scw+=("$(smb_rate "put $f cp.bin")")
      scr+=("$(smb_rate "get cp.bin /dev/null")")
    fi
  }
  local i
  for i in $(seq "$ROUNDS"); do
    if [ $((i % 2)) = 1 ]; then nat_round sb; nat_round tools; else nat_round tools; nat_round sb; fi
  done
  rm -f "$WORK/cp-back.bin"
  line() { # label ours theirs...
    local label=$1 a b; a=$(printf '%s\n' $2 | median); b=$(printf '%s\n' $3 | median)
    a=${a:-0}; b=${b:-0}
    python3 -c "
a,b=$a,$b
print(f'{\"$label\":<34} sharebench {a/1024:10.1f} MiB/s  $4 {b/1024:10.1f} MiB/s  ratio {a/b if b else float(\"nan\"):5.2f}  ($ROUNDS rounds, medians)')"
  }
  line "nfs v3 1m write 256m" "${sbw[*]}" "${cpw[*]}" "nfs-cp   "
  line "nfs v3 1m read 256m" "${sbr[*]}" "${cpr[*]}" "nfs-cp   "
  line "nfs v3 1m read 256m" "${sbr[*]}" "${catr[*]}" "nfs-cat  "
  line "smb3 1m write 256m" "${ssw[*]}" "${scw[*]}" "smbclient"
  line "smb3 1m read 256m" "${ssr[*]}" "${scr[*]}" "smbclient"
  line "smb3 1m write 256m, depth 8" "${ssw8[*]}" "${scw[*]}" "smbclient"
  line "smb3 1m read 256m, depth 8" "${ssr8[*]}" "${scr[*]}" "smbclient"
  line "smb3 1m write 256m, libsmbclient" "${slw[*]}" "${scw[*]}" "smbclient"
  line "smb3 1m read 256m, libsmbclient" "${slr[*]}" "${scr[*]}" "smbclient"
  nfs41_against_nfs3 "nfs://127.0.0.1/bench?version=4.1" "$nfs"
  smb_clients "$smb"
}

# Per cell of a run of two targets: "[PREFIX] op record_size ratio", the ratio of TARGET's
# median to the other target's.
cell_ratios() { # results.jsonl target [prefix]
  python3 - "$@" <<'PY'
import collections, json, statistics as st, sys
cells = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["status"] == "ok":
        cells[(r["op"], r["record_size"], r["target"] == sys.argv[2])].append(r["throughput_kib_s"])
for (op, rs, mine), kib in cells.items():
    if mine and (op, rs, False) in cells:
        print(*sys.argv[3:], op, rs, st.median(kib) / st.median(cells[(op, rs, False)]))
PY
}

# Issue 13's bar: the NFSv4.1 client (files through sharebench's own data path) at least 0.9x NFSv3
# (libnfs) at 4k, 64k and 1m records, against the same Ganesha. One `run` per round with
# both targets, their samples interleaved; per round the ratio of the medians of each cell;
# the median and range of those ratios over ROUNDS rounds.
nfs41_against_nfs3() { # v41-url v3-url
  local rows="$OUT/nfs41.rows" i
  : >"$rows"
  for i in $(seq "$ROUNDS"); do
    rm -rf "$OUT/nfs41.sb"
    "$BIN" run -i write,read --file-sizes 16m --record-sizes 4k,64k,1m --reps 5 \
      --out "$OUT/nfs41.sb" "$1" "$2" >/dev/null 2>&1 \
      || { echo "nfs v4.1 vs v3: sharebench run failed"; return 0; }
    cell_ratios "$OUT/nfs41.sb/results.jsonl" "$1" >>"$rows"
  done
  python3 - "$rows" "$ROUNDS" <<'PY'
import collections, statistics as st, sys
ratios = collections.defaultdict(list)
for op, rs, q in (l.split() for l in open(sys.argv[1])):
    ratios[(op, int(rs))].append(float(q))
for (op, rs), q in sorted(ratios.items(), key=lambda kv: (kv[0][0] != "write", kv[0][1])):
    q.sort()
    print(f"{'nfs v4.1/v3 ' + op + ' ' + str(rs // 1024) + 'k, 16m file':<34} ratio {st.median(q):.2f}x"
          f" (range {q[0]:.2f}-{q[-1]:.2f}, target >= 0.9x), {len(q)} rounds of 5 interleaved samples")
PY
}

# The two SMB clients against the section's Samba (SMB 3.1.1, signing required), issues 13
# and 49: the smb2 crate's client (patched: third_party/) against libsmbclient.
# - 64 KiB and 1 MiB records, 64m file, at depth 1: one run per round with both targets,
#   their samples interleaved; per round the ratio of each cell's medians. Target >= 0.97x.
# - The same at depth 8 for smb2 (libsmbclient keeps one request in flight, so it runs at
#   depth 1): two runs per round, alternating which goes first. Target >= 0.97x.
# - 4 KiB records, and each client with 4 workers against 1 (target >= 1.5x): the two runs
#   of a round in alternating order, both targets in each.
# Median and range over ROUNDS rounds.
smb_clients() { # smb-url (the smb2 client; libsmbclient is the same URL with ?client=libsmbclient)
  local rows="$OUT/smb.rows" smb2="$1" lib="$1?client=libsmbclient" i t
  local -a big=(-i write,read --file-sizes 64m --record-sizes 64k,1m --reps 5)
  : >"$rows"
  for i in $(seq "$ROUNDS"); do
    rm -rf "$OUT/smb.sb"
    "$BIN" run "${big[@]}" --out "$OUT/smb.sb" "$smb2" "$lib" >/dev/null 2>&1 || { echo "smb clients: sharebench run failed"; return 0; }
    cell_ratios "$OUT/smb.sb/results.jsonl" "$smb2" depth1 >>"$rows"
    for t in $( [ $((i % 2)) = 1 ] && echo "d8 lib" || echo "lib d8"); do
      rm -rf "$OUT/smb.$t"
      if [ "$t" = d8 ]; then
        "$BIN" run "${big[@]}" --iodepth 8 --out "$OUT/smb.d8" "$smb2" >/dev/null 2>&1
      else
        "$BIN" run "${big[@]}" --out "$OUT/smb.lib" "$lib" >/dev/null 2>&1
      fi || { echo "smb clients: sharebench run failed"; return 0; }
    done
    python3 - "$OUT/smb.d8/results.jsonl" "$OUT/smb.lib/results.jsonl" >>"$rows" <<'PY'
import collections, json, statistics as st, sys
def rates(path):
    cells = collections.defaultdict(list)
    for line in open(path):
        r = json.loads(line)
        if r["status"] == "ok":
            cells[(r["op"], r["record_size"])].append(r["throughput_kib_s"])
    return {k: st.median(v) for k, v in cells.items()}
deep, lib = rates(sys.argv[1]), rates(sys.argv[2])
for (op, rs), kib in deep.items():
    if (op, rs) in lib:
        print("depth8", op, rs, kib / lib[(op, rs)])
PY
    for t in $( [ $((i % 2)) = 1 ] && echo "1 4" || echo "4 1"); do
      rm -rf "$OUT/smb.t$t"
      "$BIN" run -i write,read --file-sizes 16m --record-sizes 4k --reps 3 -t "$t" \
        --out "$OUT/smb.t$t" "$smb2" "$lib" >/dev/null 2>&1 || { echo "smb clients: sharebench run failed"; return 0; }
    done
    cell_ratios "$OUT/smb.t1/results.jsonl" "$smb2" depth1 >>"$rows"
    python3 - "$OUT/smb.t1/results.jsonl" "$OUT/smb.t4/results.jsonl" "$smb2" >>"$rows" <<'PY'
import collections, json, statistics as st, sys
def rates(path):
    cells = collections.defaultdict(list)
    for line in open(path):
        r = json.loads(line)
        if r["status"] == "ok" and r["scope"] != "worker":
            cells[(r["op"], "smb2" if r["target"] == sys.argv[3] else "libsmbclient")].append(r["throughput_kib_s"])
    return {k: st.median(v) for k, v in cells.items()}
one, four = rates(sys.argv[1]), rates(sys.argv[2])
for (op, client), kib in four.items():
    if (op, client) in one:
        print("workers", op, client, kib / one[(op, client)])
PY
  done
  python3 - "$rows" <<'PY'
import collections, statistics as st, sys
ratios = collections.defaultdict(list)
for kind, op, what, q in (l.split() for l in open(sys.argv[1])):
    ratios[(kind, op, what)].append(float(q))
def order(item):
    (kind, op, what), _ = item
    return (kind, op != "write", int(what) if what.isdigit() else what)
for (kind, op, what), q in sorted(ratios.items(), key=order):
    q.sort()
    if kind in ("depth1", "depth8"):
        rs = int(what)
        size = f"{rs >> 20}m" if rs >= 1 << 20 else f"{rs >> 10}k"
        depth = "depth 8/1" if kind == "depth8" else "depth 1"
        file = "16m" if rs < 65536 else "64m"
        label = f"smb2/libsmbclient {op} {size}, {file}, {depth}"
        target = "target >= 0.97x" if rs >= 65536 else "higher is better"
    else:
        label, target = f"smb {what} 4 workers/1, {op} 4k", "target >= 1.5x"
    print(f"{label:<48} ratio {st.median(q):.2f}x (range {q[0]:.2f}-{q[-1]:.2f}, {target}), {len(q)} rounds")
PY
}

native_cleanup() {
  local p
  local -a rev=()
  for p in "${NPIDS[@]}"; do rev=("$p" "${rev[@]}"); done
  for p in "${rev[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${rev[@]}"; do
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
  done
  # Not `[ ... ] && rm`: its false status would end the EXIT trap under set -e before the
  # work directories are removed.
  if [ -n "${NDIR:-}" ]; then rm -rf "$NDIR"; fi
}
NPIDS=()
NDIR=
# The lab the labdepth section put up, and only that one, goes down with the bench.
lab_cleanup() { if [ -n "${LAB_UP:-}" ]; then "$BIN" lab down >/dev/null 2>&1 || true; fi; }
trap 'native_cleanup; lab_cleanup; remove_work' EXIT
if want native; then native_bench; fi

# --- Issue 5: metadata and small-file workloads --------------------------------------------
# Targets: tmpfs file create and delete rates >= 1.0x fio's filecreate / filedelete engines
# for the same number of files; small-file copy of the generated tree (1,800 files, 35 MB)
# to a local directory within 1.2x of `rsync -a` wall time. Ratios only, no assertions.
workloads_bench() {
  local n=${META_FILES:-5000} i sbc=() sbd=() fc=() fd=() cp=() rs=()
  local mdir="$WORK/meta" fdir="$WORK/fio-meta" sdir="$WORK/small"
  mkdir -p "$mdir" "$fdir" "$sdir"
  fio_meta() { # engine: prints operations/s
    fio --name=m --ioengine="$1" --create_on_open=1 --nrfiles="$n" --openfiles=1 --filesize=4k \
        --fallocate=none --directory="$fdir" --output-format=json 2>/dev/null | python3 -c '
import json,sys
j=json.load(sys.stdin)["jobs"][0]
print(j["read"]["iops"] or j["write"]["iops"])'
  }
  sb_meta() { # prints "create/s delete/s": Connectathon test1 and test2 over their wall time
    local dir="$OUT/meta.$RANDOM$RANDOM"
    "$BIN" run -w metadata --counts "$n" --reps 1 --out "$dir" "$mdir" >/dev/null
    python3 - "$dir/results.jsonl" <<'PY'
import json, sys
rates = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    # The whole test over its wall time (files and directories alike), as fio's
    # filecreate/filedelete rates are whole-job rates.
    if r["status"] == "ok" and r["op"] == "whole-test" and r.get("test") in ("test1", "test2"):
        rates[r["test"]] = r["ops_per_s"]
print(rates["test1"], rates["test2"])
PY
  }
  sb_small() { # prints "copy_s rsync_copy_s" from one run with --with-rsync
    local dir="$OUT/small.$RANDOM$RANDOM"
    "$BIN" run -w smallfiles --with-rsync --reps 1 --out "$dir" "$sdir" >/dev/null
    python3 - "$dir/results.jsonl" <<'PY'
import json, sys
s = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    s[r["op"]] = r["seconds"]
print(s["copy"], s["rsync-copy"])
PY
  }
  for i in $(seq "$ROUNDS"); do
    read -r c d < <(sb_meta); sbc+=("$c"); sbd+=("$d")
    fc+=("$(fio_meta filecreate)")
    fd+=("$(fio_meta filedelete)")
    rm -rf "${fdir:?}"/*
    read -r a b < <(sb_small); cp+=("$a"); rs+=("$b")
  done
  local mc md ff fe c r
  mc=$(printf '%s\n' "${sbc[@]}" | median); md=$(printf '%s\n' "${sbd[@]}" | median)
  ff=$(printf '%s\n' "${fc[@]}" | median); fe=$(printf '%s\n' "${fd[@]}" | median)
  c=$(printf '%s\n' "${cp[@]}" | median); r=$(printf '%s\n' "${rs[@]}" | median)
  python3 -c "
n,mc,md,ff,fe,c,r=$n,$mc,$md,$ff,$fe,$c,$r
print(f'{\"tmpfs create $n files (ops/s, wall)\":<34} sharebench {mc:10.0f}        fio {ff:10.0f}        ratio {mc/ff:5.2f}  (target >= 1.0; $ROUNDS rounds, medians)')
print(f'{\"tmpfs delete $n files (ops/s, wall)\":<34} sharebench {md:10.0f}        fio {fe:10.0f}        ratio {md/fe:5.2f}  (target >= 1.0)')
print(f'{\"small-file copy 1800 files (s)\":<34} sharebench {c:10.3f} s      rsync {r:8.3f} s      ratio {c/r:5.2f}  (sharebench/rsync, target <= 1.2)')"
}
if want workloads; then workloads_bench; fi

# --- Issue 7: multi-client coordination ------------------------------------------------------
# Target: the start barrier and the gather of records cost under 5 ms per measurement with
# 3 ranks on one machine. Three ranks write 4 KiB to null:// 300 times; rank 0's manifest
# gives the mean time per measurement spent in the barrier and the gather.
mpi_bench() {
  command -v mpirun >/dev/null 2>&1 || { echo "mpi: skipped (mpirun is missing; run scripts/install-deps.sh)"; return 0; }
  local dir="$OUT/mpi.$RANDOM" ms=()
  for i in $(seq "$ROUNDS"); do
    rm -rf "$dir"
    mpirun --allow-run-as-root --oversubscribe -np 3 "$BIN" run null:// -i write \
      --file-sizes 4k --record-sizes 4k --reps 300 --out "$dir" >/dev/null 2>&1 || { echo "mpi: mpirun failed"; return 0; }
    ms+=("$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["coordination_ms"])' "$dir/run.json")")
  done
  local m; m=$(printf '%s\n' "${ms[@]}" | median)
  python3 -c "print(f'{\"mpi 3 ranks barrier+gather\":<34} {$m:8.3f} ms per measurement (target < 5 ms; $ROUNDS rounds of 300, median)')"
}
if want mpi; then mpi_bench; fi

# --- Issue 12: numbers you can trust ------------------------------------------------------
# Target: with default settings (--reps auto, 100 ms samples), tmpfs cells of 1-64 MiB at
# 64k and 1m records for write/rewrite/read/reread give medians whose CV across REPRO_RUNS
# independent runs is below 2% (median over cells), none above 5%. Then an A/A check: two
# directories of one tmpfs, side by side in one run, must call no winner (report).
# The strictest peer on the same 32 cells, after each of sharebench's runs: fio, each
# operation for 0.5 s time-based (sharebench's sample is 0.1 s, six or more per cell):
# write into a new file, then write it again (rewrite), read it, read it again (reread).
# Time-based, fio's passes wrap onto the file it has (its write is a rewrite after the
# first pass; sharebench's write takes a new file each pass), so its figures move with the
# machine's minute, not with new pages. One line per cell and operation: op, file size,
# record size, KiB/s.
repro_peer() { # out
  local f="$WORK/repro-fio/f" fs bs op rw
  mkdir -p "$WORK/repro-fio"; : > "$1"
  for fs in 1m 4m 16m 64m; do
    for bs in 64k 1m; do
      rm -f "$f"
      for op in write rewrite read reread; do
        case $op in write | rewrite) rw=write ;; *) rw=read ;; esac
        fio --name=r --ioengine=psync --rw=$rw --bs=$bs --size=$fs --filename="$f" \
          --time_based --runtime=500ms --output-format=json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]
side = j["write"] if j["write"]["io_bytes"] else j["read"]
size = {"k": 1 << 10, "m": 1 << 20}
n = lambda s: int(s[:-1]) * size[s[-1]]
print(sys.argv[1], n(sys.argv[2]), n(sys.argv[3]), side["bw_bytes"] / 1024)' $op $fs $bs >> "$1"
      done
    done
  done
  rm -f "$f"
}
repro_bench() {
  local runs=${REPRO_RUNS:-5} dirs=()
  mkdir -p "$WORK/repro" "$WORK/aa1" "$WORK/aa2"
  for i in $(seq "$runs"); do
    local d="$OUT/repro.$i"
    "$BIN" run "$WORK/repro" -i write,rewrite,read,reread --file-sizes 1m,4m,16m,64m \
      --record-sizes 64k,1m --out "$d" >/dev/null 2>"$d.err" \
      || { echo "repro: run $i failed: $(tail -1 "$d.err")"; return 0; }
    dirs+=("$d")
    repro_peer "$d.fio"
  done
  python3 - "$runs" "${dirs[@]}" <<'PY'
import json, statistics as st, sys
from collections import defaultdict
runs = int(sys.argv[1])
sb, fio = defaultdict(list), defaultdict(list)
stops = defaultdict(int)
for d in sys.argv[2:]:
    cells = defaultdict(list)
    for line in open(d + "/results.jsonl"):
        r = json.loads(line)
        if r["status"] == "ok":
            cells[(r["op"], r["file_size"], r["record_size"])].append(r["throughput_kib_s"])
        if r.get("reps_stop") and r["op"] == "write":
            stops[r["reps_stop"]] += 1
    for k, v in cells.items():
        sb[k].append(st.median(v))
    for line in open(d + ".fio"):
        op, fs, bs, kib_s = line.split()
        fio[(op, int(fs), int(bs))].append(float(kib_s))
def spread(medians, label, target):
    cv = sorted((st.stdev(v) / st.mean(v) * 100, k) for k, v in medians.items() if len(v) > 1)
    worst = cv[-1]
    print(f"{label:<34} median CV {st.median([c for c, _ in cv]):.1f}%{target[0]}, "
          f"max {worst[0]:.1f}% at {worst[1][0]} {worst[1][1] >> 20}m/{worst[1][2] >> 10}k{target[1]}; "
          f"{len(cv)} cells, {runs} runs")
spread(sb, "repro tmpfs medians across runs", (" (target < 2%)", " (target < 5%)"))
spread(fio, "  fio, same cells, alternated", ("", ""))
# Each run's level: the median over cells of its figure against the cell's mean over the
# runs. A run that is slow for both tools is the machine's minute, not either tool's.
def levels(medians):
    return [st.median(v[i] / st.mean(v) for v in medians.values()) for i in range(runs)]
print(f"{'  each run against the mean':<34} sharebench "
      + " ".join(f"{x:.3f}" for x in levels(sb)) + "  fio " + " ".join(f"{x:.3f}" for x in levels(fio)))
# The same spread with each run's level divided out: what is left is each cell's own
# reproducibility, apart from the stretch of minutes every cell of a run shared.
def within(medians):
    lv = levels(medians)
    adjusted = ([x / l for x, l in zip(v, lv)] for v in medians.values() if len(v) == runs)
    return st.median(st.stdev(a) / st.mean(a) * 100 for a in adjusted)
print(f"{'  without each run level':<34} median CV sharebench {within(sb):.1f}%, fio {within(fio):.1f}%")
print(f"{'  why cells stopped sampling':<34} "
      + ", ".join(f"{k} {v}" for k, v in sorted(stops.items()))
      + f" of {sum(stops.values())} (file size, record size) pairs over the {runs} runs")
PY
  local aa="$OUT/aa" rep="$OUT/aa-report"
  "$BIN" run "$WORK/aa1" "$WORK/aa2" -i write,rewrite,read,reread --file-sizes 1m,4m,16m,64m \
    --record-sizes 64k,1m --out "$aa" >/dev/null 2>&1 || { echo "repro: A/A run failed"; return 0; }
  "$BIN" report "$aa" --out "$rep" | grep -E "findings" | sed 's/^/A\/A check (must name no winner): /'
}
if want repro; then repro_bench; fi

# --- Issue 12: how the machine's drift falls with the length of a run (opt-in) ------------
# BENCH_ONLY=drift: DRIFT_RUNS (default 60, about 25 s each) short runs of the repro
# section's matrix in a row, 6 rounds each. Pooling k runs in a row is a run of 6k rounds
# over that stretch of time, so the spread of the pooled medians across blocks of k runs is
# the repro bar's figure for runs of that length, on this machine, at this hour: what run
# length, if any, reaches it. Not in the default list: it takes half an hour.
drift_bench() {
  local runs=${DRIFT_RUNS:-60} dirs=() started=$SECONDS
  if ! [[ $runs =~ ^[0-9]+$ ]] || ((runs < 3)); then
    echo "drift: DRIFT_RUNS=$runs: give at least 3 runs (default 60)"; return 0
  fi
  mkdir -p "$WORK/drift"
  for i in $(seq "$runs"); do
    local d="$OUT/drift.$i"
    "$BIN" run "$WORK/drift" -i write,rewrite,read,reread --file-sizes 1m,4m,16m,64m \
      --record-sizes 64k,1m --reps 6 --out "$d" >/dev/null 2>"$d.err" \
      || { echo "drift: run $i failed: $(tail -1 "$d.err")"; return 0; }
    dirs+=("$d")
  done
  python3 - "$(( (SECONDS - started) / runs ))" "${dirs[@]}" <<'PY'
import json, statistics as st, sys
from collections import defaultdict
secs, runs = int(sys.argv[1]), []
for d in sys.argv[2:]:
    cells = defaultdict(list)
    for line in open(d + "/results.jsonl"):
        r = json.loads(line)
        if r["status"] == "ok":
            cells[(r["op"], r["file_size"], r["record_size"])].append(r["throughput_kib_s"])
    runs.append(cells)
keys = sorted(set.intersection(*(set(c) for c in runs)))
print(f"drift: {len(runs)} runs of 6 rounds in a row, {secs} s each; blocks of k runs pooled = one run of 6k rounds")
for k in (1, 2, 5, 10, 20, 40):
    blocks = [runs[i:i + k] for i in range(0, len(runs) - k + 1, k)]
    if len(blocks) < 3:
        break
    medians = {c: [st.median(x for r in b for x in r[c]) for b in blocks] for c in keys}
    cv = {c: st.stdev(v) / st.mean(v) * 100 for c, v in medians.items()}
    cvs = sorted(cv.values())
    # Writes take new pages each pass, whose cost moves with the host: shown apart.
    rest = sorted(v for c, v in cv.items() if c[0] != "write")
    writes = st.median(v for c, v in cv.items() if c[0] == "write")
    levels = [st.median(v[i] / st.mean(v) for v in medians.values()) for i in range(len(blocks))]
    print(f"  {6 * k:>3} rounds ({k * secs:>4} s a run): median CV {st.median(cvs):4.1f}% (target < 2%),"
          f" max {cvs[-1]:4.1f}% (target < 5%); writes {writes:.1f}%, the rest {st.median(rest):.1f}%"
          f" (max {rest[-1]:.1f}%); run levels spread {st.stdev(levels) * 100:.1f}%, {len(blocks)} runs")
PY
}
if want drift; then drift_bench; fi

# --- Issue 18: a verdict must not flip ------------------------------------------------------
# Target: FLIP_RUNS (default 2; the issue's bar: 3) runs of the comparison study
# nfs-server-configs at quick scale, each measuring xfs and ext4 side by side in one lab,
# give the same headline winner (or none), no xfs-vs-ext4 or v4.1-vs-v3 claim is decided
# one way in one run and the other way in another, and every figure has the same sign in
# any two runs unless it is equivalent or inconclusive in both (the issue's rule for two
# runs, deliverable 3, applied to each figure); and every figure's 95% intervals (speed,
# steadiness, CPU) overlap from run to run (issue 50). Needs root (the lab).
flip_bench() {
  local runs=${FLIP_RUNS:-2} logs=()
  if [[ $EUID -ne 0 ]]; then echo "flip: needs root (the lab); skipped"; return 0; fi
  for i in $(seq "$runs"); do
    local d="$OUT/flip.$i"
    "$BIN" study run nfs-server-configs --scale quick --out "$d" >"$d.log" 2>&1 \
      || { echo "flip: study run $i failed (see $d.log)"; tail -3 "$d.log"; return 0; }
    logs+=("$d.log")
  done
  python3 - "${logs[@]}" <<'PY'
import re, sys
runs = []
for path in sys.argv[1:]:
    lines = open(path).read().splitlines()
    head = next((l for l in lines if re.search(r"^\S+ is faster than |^\S+ and \S+ are equivalent|^Neither ", l)), "?")
    claims, intervals = {}, {}
    for l in lines:
        # Every interval a claim's line gives, in order ("+4.0% [-1.4%, +9.7%]", "97% [96%, 98%]",
        # dips' "+0.20 [-0.31, +0.71] points").
        m = re.match(r"\s+(?:agrees|disagrees|inconclusive|measured)\s+(\S+): (.*)", l)
        if m:
            intervals[m.group(1)] = [(float(a), float(b)) for a, b in
                                     re.findall(r"\[([+-]?\d+(?:\.\d+)?)%?, ([+-]?\d+(?:\.\d+)?)%?\]", m.group(2))]
        # A claim or figure: its id, its change, and the comparison's own verdict.
        m = re.match(r"\s+(?:agrees|disagrees|inconclusive|measured)\s+(\S+): .*?: ([+-]\d+\.\d)% \[.*?\] \((faster|slower|equivalent|inconclusive)", l)
        if m:
            claims[m.group(1)] = (m.group(3), float(m.group(2)))
    winner = re.match(r"(\S+) is faster than", head)
    # Equivalent and undecided both name no winner: only a winner can flip.
    verdict = winner.group(1) if winner else "no winner"
    runs.append((verdict, head.split(" (")[0], claims, intervals))
for i, (w, h, _, _) in enumerate(runs, 1):
    print(f"flip run {i}: headline: {h}")
same_head = len({w for w, _, _, _ in runs}) == 1
# Every figure's intervals (speed, steadiness, CPU), run against run: the pairs that do not
# overlap (issue 50: a figure's interval must hold when measured again).
apart, pairs = [], 0
for cid in sorted(set().union(*(r[3].keys() for r in runs))):
    seen = [r[3][cid] for r in runs if cid in r[3]]
    for i, x in enumerate(seen):
        for y in seen[i + 1:]:
            for (a, b), (c, d) in zip(x, y):
                pairs += 1
                if b < c or d < a:
                    apart.append(f"{cid} [{a:+.1f}, {b:+.1f}] vs [{c:+.1f}, {d:+.1f}]")
flips, sign_changes, disagree = [], [], []
undecided = ("equivalent", "inconclusive")
for cid in sorted(set().union(*(c.keys() for _, _, c, _ in runs))):
    seen = [c[cid] for _, _, c, _ in runs if cid in c]
    decided = {v for v, _ in seen if v in ("faster", "slower")}
    if len(decided) > 1 or (decided and any(v == "equivalent" for v, _ in seen)):
        flips.append(cid)
    if len({x > 0 for _, x in seen}) > 1:
        sign_changes.append(cid)
    # The issue's rule for two runs (deliverable 3), applied to every figure and every
    # pair of runs: the same sign, or equivalent/inconclusive in both.
    if any((x > 0) != (y > 0) and not (v in undecided and w in undecided)
           for i, (v, x) in enumerate(seen) for (w, y) in seen[i + 1:]):
        disagree.append(cid)
    print(f"  {cid:<28} " + "  ".join(f"{v} {x:+.1f}%" for v, x in seen))
print(f"{'flip check (nfs-server-configs)':<34} {len(runs)} runs: headline winner the same: {'yes' if same_head else 'NO'}; "
      f"figures called a winner in one run and reversed or equivalent in another: {len(flips)} (target 0){' ' + ', '.join(flips) if flips else ''}; "
      f"figures of opposite sign in two runs, not equivalent or inconclusive in both: {len(disagree)} (target 0){' ' + ', '.join(disagree) if disagree else ''}; "
      f"figures changing sign: {len(sign_changes)}{' ' + ', '.join(sign_changes) if sign_changes else ''}; "
      f"intervals of one figure in two runs that do not overlap: {len(apart)} of {pairs} (target 0){': ' + '; '.join(apart) if apart else ''}")
PY
}
if want flip; then flip_bench; fi

# --- Issue 12: 4 KiB reads against IOzone, the stricter peer -------------------------------
# Target: on a 64 MiB tmpfs file at 4 KiB records, with latency histograms on (always),
# sharebench's read and reread within +-10% of IOzone's (-i 0 -i 1), interleaved, ROUNDS
# rounds: with default settings (100 ms samples) and, for reference, a single pass
# (--min-sample-time 0, IOzone's own semantics).
iozone_bench() {
  if [[ -z "${IOZONE:-}" || ! -x "${IOZONE:-}" ]]; then
    echo "iozone: set IOZONE=/path/to/iozone (IOzone 3.5 built from source) to compare; skipped"
    return 0
  fi
  local d="$WORK/k4" rows="$OUT/k4.rows"
  mkdir -p "$d"; : >"$rows"
  for i in $(seq "$ROUNDS"); do
    "$IOZONE" -i 0 -i 1 -s 64m -r 4k -f "$d/ioz.tmp" 2>/dev/null \
      | awk '/^ +65536 +4 /{print "iozone", $5, $6}' >>"$rows"
    rm -f "$d/ioz.tmp"
    for mst in 100ms 0; do
      rm -rf "$OUT/k4.$mst"
      "$BIN" run "$d" -i write,rewrite,read,reread --file-sizes 64m --record-sizes 4k \
        --reps 1 --min-sample-time "$mst" --out "$OUT/k4.$mst" >/dev/null 2>&1 || { echo "iozone: run failed"; return 0; }
      python3 - "$OUT/k4.$mst/results.jsonl" "$mst" >>"$rows" <<'PY'
import json, sys
d = {json.loads(l)["op"]: json.loads(l)["throughput_kib_s"] for l in open(sys.argv[1])}
print("sharebench-" + sys.argv[2], d["read"], d["reread"])
PY
    done
  done
  python3 - "$rows" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
ioz = [(float(r[1]), float(r[2])) for r in rows if r[0] == "iozone"]
for kind, label in (("sharebench-100ms", "default samples"), ("sharebench-0", "single pass")):
    sb = [(float(r[1]), float(r[2])) for r in rows if r[0] == kind]
    for i, op in ((0, "read"), (1, "reread")):
        q = sorted(s[i] / o[i] for s, o in zip(sb, ioz))
        print(f"{'4k ' + op + ' vs IOzone, ' + label:<34} median ratio {st.median(q):.2f}x "
              f"(range {q[0]:.2f}-{q[-1]:.2f}, {len(q)} interleaved rounds; target 0.90-1.10 with default samples)")
PY
}
if want iozone; then iozone_bench; fi

# --iodepth against fio's io_uring engine at the same depth, the strictest peer for a queue
# of requests: 4 KiB random reads of a 64 MiB file at depth 16 (issue 13's bar), on an xfs
# file system in a loop image with O_DIRECT (the loop device passes direct I/O on to the
# machine's disk, so depth reaches the device) and on tmpfs through the page cache, one
# pass each, interleaved, ROUNDS rounds: per-round ratios (median and range), and
# sharebench at depth 1 for the gain the queue brings. Target: >= 1.0x fio at the same depth.
# Without root or xfsprogs the O_DIRECT case runs in a directory of IODEPTH_DIR instead.
IODEPTH_DIR=${IODEPTH_DIR:-/var/tmp}
iodepth_bench() {
  local disk disk_label rows="$OUT/qd.rows" depth=16
  if xfs_up; then
    disk=$XFS_MNT; disk_label="xfs loop image, O_DIRECT"
    # The loop device passes O_DIRECT on only where the backing file system takes it.
    if [ "$(cat "/sys/block/${XFS_LOOP#/dev/}/loop/dio" 2>/dev/null)" != 1 ]; then
      disk_label="xfs loop image (loop without direct I/O), O_DIRECT"
    fi
  else
    xfs_down; disk=$(mktemp -d "$IODEPTH_DIR/sharebench-bench-qd.XXXXXX")
    disk_label="$(df --output=fstype "$disk" | tail -1) in $IODEPTH_DIR, O_DIRECT"
  fi
  : >"$rows"
  for i in $(seq "$ROUNDS"); do
    for where in disk tmpfs; do
      local dir direct=() fdirect=0
      if [ "$where" = disk ]; then dir=$disk; direct=(--direct); fdirect=1; else dir=$WORK; fi
      for d in $depth 1; do
        rm -rf "$OUT/qd.sb"
        "$BIN" run "$dir" -i random-read --file-sizes 64m --record-sizes 4k --reps 1 \
          --min-sample-time 0 "${direct[@]}" --iodepth "$d" --out "$OUT/qd.sb" >/dev/null 2>&1 \
          || { echo "iodepth: sharebench run failed"; break 3; }
        python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])][0]; print(sys.argv[2], "sb", sys.argv[3], r["throughput_kib_s"])' \
          "$OUT/qd.sb/results.jsonl" "$where" "$d" >>"$rows"
      done
      rm -f "$dir/fio.qd"
      fio --name=layout --ioengine=psync --rw=write --bs=1m --size=64m --filename="$dir/fio.qd" >/dev/null 2>&1
      fio --name=q --ioengine=io_uring --iodepth=$depth --direct=$fdirect --rw=randread --bs=4k \
        --size=64m --filename="$dir/fio.qd" --output-format=json 2>/dev/null \
        | python3 -c 'import json,sys; print(sys.argv[1], "fio", sys.argv[2], json.load(sys.stdin)["jobs"][0]["read"]["bw_bytes"]/1024)' "$where" "$depth" >>"$rows"
      rm -f "$dir/fio.qd"
    done
  done
  if [ -n "$XFS_MNT" ]; then xfs_down; else rm -rf "$disk"; fi
  python3 - "$rows" "$depth" "$disk_label" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
depth = sys.argv[2]
def series(where, tool, d):
    return [float(r[3]) for r in rows if r[0] == where and r[1] == tool and r[2] == d]
for where, label in (("disk", sys.argv[3]), ("tmpfs", "tmpfs, page cache")):
    sb, fio, one = series(where, "sb", depth), series(where, "fio", depth), series(where, "sb", "1")
    n = min(len(sb), len(fio), len(one))  # complete rounds only (a failed run ends the loop)
    if n == 0:
        print(f"4k random-read, depth {depth}, {label}: no complete round"); continue
    sb, fio, one = sb[:n], fio[:n], one[:n]
    q = sorted(s / f for s, f in zip(sb, fio))
    g = sorted(s / o for s, o in zip(sb, one))
    print(f"{'4k random-read, depth ' + depth + ', ' + label:<48} sharebench {st.median(sb)/4:8.0f} ops/s"
          f"  fio io_uring {st.median(fio)/4:8.0f} ops/s  ratio {st.median(q):.2f}x (range {q[0]:.2f}-{q[-1]:.2f})"
          f"  vs depth 1: {st.median(g):.2f}x (range {g[0]:.2f}-{g[-1]:.2f}), {len(q)} interleaved rounds")
PY
}
if want iodepth; then iodepth_bench; fi

# Issue 13's bars for the lab's clients. Depth: with 8 requests in flight, at least 1.5x the
# throughput of one, at 64 KiB records (writes and reads of a 16 MiB file); lab:nfs3 is
# libnfs (also on 4 connections, nconnect=4, since Ganesha serves a connection on about one
# core), lab:nfs4 sharebench's NFSv4.1 data path, lab:smb the smb2 crate. Workers: lab:smb with 4 workers at least
# 1.5x one, at 4 KiB records (children-see throughput), beside lab:smb-libsmbclient, which
# serialises its workers. One lab of the bench's own; per round a run at each depth (and
# at each worker count), in alternating order, the targets interleaved within each run;
# per round the ratio of each cell's medians, then the median and range over ROUNDS rounds.
LAB_UP=
# Per (target, op), the ratio of the medians of two runs' throughput (run-level records).
lab_ratios() { # kind results-a.jsonl results-b.jsonl
  python3 - "$@" <<'PY'
import collections, json, statistics as st, sys
def medians(path):
    cells = collections.defaultdict(list)
    for line in open(path):
        r = json.loads(line)
        if r["status"] == "ok" and r.get("scope") != "worker":
            cells[(r["target"], r["op"])].append(r["throughput_kib_s"])
    return {k: st.median(v) for k, v in cells.items()}
a, b = medians(sys.argv[2]), medians(sys.argv[3])
for (target, op), kib in b.items():
    if (target, op) in a:
        print(sys.argv[1], target, op, kib / a[(target, op)], a[(target, op)], kib)
PY
}
# The strictest peer for lab:nfs3 at depth: fio's nfs engine (libnfs's asynchronous calls,
# the same library and calls as sharebench's NFSv3 queue) against the same Ganesha from the
# same client namespace. fio rewrites and rereads one 16 MiB file for 1 s; sharebench's
# rewrite and read of a 16 MiB file are set beside them. Prints "op depth sb_kib fio_kib".
fio_nfs_pair() { # depth
  local d=$1 url ns dir="$OUT/labpeer.$1" op sb fio
  read -r url ns < <("$BIN" lab status --json | python3 -c '
import json, sys
t = [t for t in json.load(sys.stdin)["targets"] if t["name"] == "lab:nfs3"][0]
print(t["url"], t["client_netns"])') || return 1
  rm -rf "$dir"
  "$BIN" run lab:nfs3 -i write,rewrite,read --file-sizes 16m --record-sizes 64k --reps 5 --iodepth "$d" \
    --out "$dir" >/dev/null 2>&1 || return 1
  for op in rewrite read; do
    sb=$(python3 -c '
import json, statistics, sys
v = [r["throughput_kib_s"] for r in map(json.loads, open(sys.argv[1]))
     if r["status"] == "ok" and r["op"] == sys.argv[2] and r.get("scope") != "worker"]
print(statistics.median(v))' "$dir/results.jsonl" "$op") || return 1
    fio=$(ip netns exec "$ns" "$FIO_NFS" --name=peer --ioengine=nfs --nfs_url="$url" --filename=fio-peer \
      --rw="$( [ "$op" = read ] && echo read || echo write)" --bs=64k --size=16m --iodepth="$d" \
      --time_based --runtime=1 --output-format=json 2>/dev/null | python3 -c '
import json, sys
t = sys.stdin.read(); j = json.loads(t[t.index("{"):])["jobs"][0]
print(j["read"]["bw"] or j["write"]["bw"])') || return 1
    echo "$op $d $sb $fio"
  done
}
fio_nfs_summary() { # rows
  python3 - "$1" <<'PY'
import collections, statistics as st, sys
rows = collections.defaultdict(list)
for op, d, sb, fio in (l.split() for l in open(sys.argv[1])):
    rows[(op, int(d))].append((float(sb), float(fio)))
for op in ("rewrite", "read"):
    for d in (1, 8):
        v = rows.get((op, d), [])
        if not v:
            continue
        q = sorted(sb / fio for sb, fio in v)
        print(f"lab:nfs3 {op} 64k, depth {d}: sharebench {st.median(x[0] for x in v) / 1024:6.0f}"
              f" vs fio nfs {st.median(x[1] for x in v) / 1024:6.0f} MiB/s  ratio {st.median(q):.2f}"
              f" (range {q[0]:.2f}-{q[-1]:.2f}), {len(q)} rounds")
    one, eight = rows.get((op, 1), []), rows.get((op, 8), [])
    if one and eight:
        for who, k in (("sharebench", 0), ("fio nfs", 1)):
            r = st.median(x[k] for x in eight) / st.median(x[k] for x in one)
            print(f"lab:nfs3 {op} 64k, depth 8/1, {who}: {r:.2f}x")
PY
}
labdepth_bench() {
  if [[ $EUID -ne 0 ]]; then echo "lab depth: needs root (the lab); skipped"; return 0; fi
  # `lab status --json` prints null when no lab exists; anything else is a lab (or an error).
  if [ "$("$BIN" lab status --json 2>/dev/null)" != null ]; then
    echo "lab depth: a lab is already up and is not the bench's (or its state is unreadable); skipped"; return 0
  fi
  LAB_UP=1
  "$BIN" lab up --fs xfs --link unlimited >"$OUT/labdepth.up" 2>&1 \
    || { echo "lab depth: lab up failed: $(tail -1 "$OUT/labdepth.up")"; return 0; }
  local rows="$OUT/labdepth.rows" i d t
  : >"$rows"; : >"$OUT/labdepth.peer"
  FIO_NFS_OK=
  if [[ -n "${FIO_NFS:-}" && -x "${FIO_NFS:-}" ]] && "$FIO_NFS" --enghelp 2>/dev/null | grep -qw nfs; then
    FIO_NFS_OK=1
  else
    echo "lab depth: set FIO_NFS=/path/to/fio (built with libnfs: ./configure --enable-libnfs) to compare lab:nfs3 with fio's nfs engine; skipped that"
  fi
  for i in $(seq "$ROUNDS"); do
    for d in $( [ $((i % 2)) = 1 ] && echo "1 8" || echo "8 1"); do
      rm -rf "$OUT/labdepth.$d"
      "$BIN" run lab:nfs3 'lab:nfs3?nconnect=4' lab:nfs4 lab:smb -i write,read --file-sizes 16m --record-sizes 64k \
        --reps 5 --iodepth "$d" --out "$OUT/labdepth.$d" >/dev/null 2>&1 \
        || { echo "lab depth: sharebench run failed at depth $d"; break 2; }
    done
    lab_ratios depth "$OUT/labdepth.1/results.jsonl" "$OUT/labdepth.8/results.jsonl" >>"$rows"
    for t in $( [ $((i % 2)) = 1 ] && echo "1 4" || echo "4 1"); do
      rm -rf "$OUT/labworkers.$t"
      "$BIN" run lab:smb lab:smb-libsmbclient -i write,read --file-sizes 16m --record-sizes 4k \
        --reps 3 -t "$t" --out "$OUT/labworkers.$t" >/dev/null 2>&1 \
        || { echo "lab depth: sharebench run failed with $t workers"; break 2; }
    done
    lab_ratios workers "$OUT/labworkers.1/results.jsonl" "$OUT/labworkers.4/results.jsonl" >>"$rows"
    if [ -n "$FIO_NFS_OK" ]; then
      for d in $( [ $((i % 2)) = 1 ] && echo "1 8" || echo "8 1"); do
        fio_nfs_pair "$d" >>"$OUT/labdepth.peer" || { echo "lab depth: the fio nfs comparison failed at depth $d"; break 2; }
      done
    fi
  done
  "$BIN" lab down >/dev/null 2>&1 && LAB_UP=
  if [ -s "$OUT/labdepth.peer" ]; then fio_nfs_summary "$OUT/labdepth.peer"; fi
  python3 - "$rows" <<'PY'
import collections, statistics as st, sys
rows = collections.defaultdict(list)
for kind, target, op, q, one, many in (l.split() for l in open(sys.argv[1])):
    rows[(kind, target, op)].append((float(q), float(one), float(many)))
for (kind, target, op), v in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] != "write")):
    q = sorted(x[0] for x in v)
    one, many = st.median(x[1] for x in v) / 1024, st.median(x[2] for x in v) / 1024
    what = f"{op} 64k, depth 8/1" if kind == "depth" else f"{op} 4k, 4 workers/1"
    print(f"{target + ' ' + what:<44} {many:7.0f} vs {one:5.0f} MiB/s  ratio {st.median(q):.2f}x"
          f" (range {q[0]:.2f}-{q[-1]:.2f}, target >= 1.5x), {len(q)} rounds")
PY
}
if want labdepth; then labdepth_bench; fi

# The load generator must not become the bottleneck (issue 14): one load point on tmpfs at
# the same total rate, by 1 worker and by 16, interleaved; client CPU per request of 16
# workers over 1 worker's (target: at most 1.2x). LOAD_MANY=1 is the A/A check.
load_bench() {
  local rows="$OUT/load.rows" rate=${LOAD_RATE:-4000} many=${LOAD_MANY:-16}
  : >"$rows"
  for i in $(seq "$ROUNDS"); do
    for t in 1 "$many"; do
      rm -rf "$OUT/load.sb"
      "$BIN" run -w load --mix build -t "$t" --rate-start "$rate" --points 1 --point-time 2s \
        -n 1 --out "$OUT/load.sb" "$WORK" >/dev/null 2>&1 \
        || { echo "load: sharebench run failed"; return 0; }
      python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])][0]; print(sys.argv[2], r["cpu_total_s"]/r["count"]*1e6, r["ops_per_s"]/r["requested_ops_s"], r["lat_p99_us"])' \
        "$OUT/load.sb/results.jsonl" "$t" >>"$rows"
    done
  done
  python3 - "$rows" "$rate" "$many" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
one, many = rows[0::2], rows[1::2]
q = sorted(float(m[1]) / float(o[1]) for o, m in zip(one, many))
cpu = lambda rs: st.median(float(r[1]) for r in rs)
kept = lambda rs: min(float(r[2]) for r in rs)
p99 = lambda rs: st.median(float(r[3]) for r in rs)
print(f"{'load point, build mix, ' + sys.argv[2] + '/s on tmpfs':<40} CPU/request 1 worker {cpu(one):6.1f} us"
      f"  {sys.argv[3]} workers {cpu(many):6.1f} us  ratio {st.median(q):.2f}x (range {q[0]:.2f}-{q[-1]:.2f}, target <= 1.2x),"
      f" achieved/asked >= {min(kept(one), kept(many)):.3f}, p99 {p99(one):.0f}/{p99(many):.0f} us, {len(q)} interleaved rounds")
PY
}
if want load; then load_bench; fi
