#!/usr/bin/env bash
# Validates `iogauge compare` on real runs of this machine's disk (docs/COMPARE.md):
#   same disk, one run per side    -> how often '~' (within-run intervals ignore run-to-run variance)
#   same disk, 4 runs per side     -> how often '~' (Mann-Whitney: the false alarm rate)
#   100-write-IOPS blkio throttle  -> how often 'worse' (needs root and cgroup v1 blkio)
# Usage: bench/compare-validate.sh [ROUNDS] (default 3). Each round takes about a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
cargo build --release -q
bin=$PWD/target/release/iogauge
work=$(mktemp -d -p "$PWD/target" compare-validate.XXXXXX)
group=""
cleanup() {
  [ -n "$group" ] && rmdir "$group" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/data"

run() { # run OUT [cgroup]
  local cmd="$bin check sync-iops --dir $work/data --duration 3s --scale 0.05 --format json > $1 2>/dev/null"
  if [ -n "${2:-}" ]; then sh -c "echo \$\$ > $2/cgroup.procs && $cmd" || true; else sh -c "$cmd" || true; fi
}
verdict() { # verdict ARGS... -> the write_iops row's verdict (compare exits 3 on "worse")
  { "$bin" compare --format csv "$@" || true; } | awk -F, '$1=="sync-iops/write_iops"{print $11}'
}

if [ "$(id -u)" -eq 0 ] && [ -d /sys/fs/cgroup/blkio ]; then
  dev=$(stat -c %d "$work/data")
  majmin="$((dev >> 8)):$((dev & 255))"
  sys=$(readlink -f "/sys/dev/block/$majmin")
  [ -e "$sys/partition" ] && sys=$(dirname "$sys")
  group=/sys/fs/cgroup/blkio/iogauge-validate-$$
  mkdir "$group"
  echo "$(cat "$sys/dev") 100" > "$group/blkio.throttle.write_iops_device"
fi

declare -A single group4 throttled
for r in $(seq 1 "$rounds"); do
  for i in 1 2 3 4 5 6 7 8; do run "$work/s$i.json"; done
  v=$(verdict "$work/s1.json" "$work/s2.json"); single[$v]=$(( ${single[$v]:-0} + 1 ))
  # Interleaved (runs 1,3,5,7 against 2,4,6,8): this disk drifts over minutes, and four runs
  # in a row against the next four measure that drift, not noise.
  v=$(verdict --a "$work"/s{1,3,5,7}.json --b "$work"/s{2,4,6,8}.json); group4[$v]=$(( ${group4[$v]:-0} + 1 ))
  if [ -n "$group" ]; then
    run "$work/t.json" "$group"
    v=$(verdict "$work/s1.json" "$work/t.json"); throttled[$v]=$(( ${throttled[$v]:-0} + 1 ))
  fi
  echo "round $r done" >&2
done
show() { local -n m=$1; local out=""; for k in "${!m[@]}"; do out+="$k=${m[$k]} "; done; echo "${out:-none}"; }
echo "rounds: $rounds"
echo "same disk, 1 run each (want same, but run-to-run variance is not assessed): $(show single)"
echo "same disk, 4 interleaved runs each (want same): $(show group4)"
if [ -n "$group" ]; then
  echo "throttled to 100 write IOPS (want worse): $(show throttled)"
else
  echo "throttled: skipped (needs root and cgroup v1 blkio)"
fi
