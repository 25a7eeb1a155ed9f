#!/usr/bin/env bash
# Fuzz every parser of untrusted input (fio command lines and job files, troubleshoot specs,
# check profiles, collector result files) for TOTAL executions in all (default 10 million),
# split evenly over the targets and run two at a time. Prints executions and panics per target;
# exits 1 if anything panicked (the inputs are in fuzz/crashes/<target>/).
#   bench/fuzz.sh [TOTAL] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
total=${1:-10000000}
seed=${2:-$(date +%s)}
cargo build --release --example fuzz >&2
bin=target/release/examples/fuzz
mapfile -t targets < <("$bin" --list | awk '{print $1}')
per=$(( total / ${#targets[@]} ))
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pids=()
for t in "${targets[@]}"; do
    # Two at a time: this machine kind has two cores.
    while (( $(jobs -rp | wc -l) >= 2 )); do sleep 0.2; done
    "$bin" "$t" --execs "$per" --seed "$seed" >"$out/$t" 2>"$out/$t.err" &
    pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
echo "seed $seed, $per executions per target"
printf '%-18s %12s %10s %8s %8s %7s\n' target execs execs/s corpus panics unique
for t in "${targets[@]}"; do sed -n 2p "$out/$t"; cat "$out/$t.err" >&2; done
awk 'FNR==2 {e+=$2; p+=$5} END {printf "total: %d executions, %d panics\n", e, p}' "${targets[@]/#/$out/}"
exit $status
