#!/usr/bin/env bash
# The long fuzz run: every cargo-fuzz target in fuzz/ (libFuzzer, coverage-guided, AddressSanitizer,
# debug assertions) for a fixed time or number of executions each, one process at a time at
# nice 19, with per-input limits so that hangs and memory blow-ups are findings, not only panics.
# Prints the table docs/FUZZING.md keeps (Markdown) and writes each target's log.
#
#   bench/fuzz.sh [-t SECONDS | -r RUNS] [-l LOGDIR] [-n] [TARGET...]
#     -t SECONDS  each target runs this long (default 60)
#     -r RUNS     each target runs this many inputs instead
#     -l LOGDIR   where the logs go (default fuzz/logs/<UTC time>)
#     -n          do not build: run the binaries fuzz/target holds
#     -m          no fuzzing: minimize the committed corpus fuzz/corpus/<target>/ with what
#                 fuzz/corpus.tmp/<target>/ found (libFuzzer -merge=1, as cargo fuzz cmin does;
#                 regress-* inputs keep their names; inputs of FUZZ_CORPUS_MAX_KB=12 kB or more
#                 are left out)
#   Limits (environment): FUZZ_TIMEOUT=5 (s per input), FUZZ_RSS_MB=1024 (resident memory),
#   FUZZ_MALLOC_MB=512 (one allocation), FUZZ_RESTARTS=5 (restarts after a finding).
#
# New inputs go to fuzz/corpus.tmp/<target>/ (not committed; the next run starts from it);
# findings to fuzz/artifacts/<target>/ (crash-*, timeout-*, oom-*). libFuzzer stops at a finding:
# the target is restarted for the rest of its time, at most FUZZ_RESTARTS times.
# Exit status: 0 nothing found, 1 a finding (the table says which), 2 usage.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60 runs="" logdir="" build=1 merge=""
while getopts "t:r:l:nmh" o; do
    case $o in
    t) seconds=$OPTARG ;;
    r) runs=$OPTARG ;;
    l) logdir=$OPTARG ;;
    n) build="" ;;
    m) merge=1 ;;
    *) sed -n '2,22p' "$0" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
timeout=${FUZZ_TIMEOUT:-5} rss=${FUZZ_RSS_MB:-1024} malloc=${FUZZ_MALLOC_MB:-512}
restarts=${FUZZ_RESTARTS:-5}

command -v cargo-fuzz >/dev/null || { echo "fuzz.sh: cargo-fuzz missing: cargo install cargo-fuzz" >&2; exit 2; }
[[ -z $build ]] || (cd fuzz && nice -n 19 cargo +nightly fuzz build >&2)
bin=fuzz/target/x86_64-unknown-linux-gnu/release
if (($# == 0)); then
    mapfile -t targets < <(cd fuzz && cargo +nightly fuzz list)
else
    targets=("$@")
fi
logdir=${logdir:-fuzz/logs/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$logdir"

if [[ -n $merge ]]; then
    for t in "${targets[@]}"; do
        new=$(mktemp -d fuzz/corpus.new.XXXXXX) small=$(mktemp -d fuzz/corpus.new.XXXXXX)
        cp fuzz/corpus/"$t"/regress-* "$new"/ 2>/dev/null || true
        # Inputs under FUZZ_CORPUS_MAX_KB (12) only: the committed corpus stays a few MB.
        find "fuzz/corpus/$t" "fuzz/corpus.tmp/$t" -type f -size -"${FUZZ_CORPUS_MAX_KB:-12}"k \
            -exec cp {} "$small"/ \; 2>/dev/null || true
        nice -n 19 "$bin/$t" -merge=1 -timeout="${FUZZ_TIMEOUT:-5}" -rss_limit_mb="${FUZZ_RSS_MB:-1024}" \
            -close_fd_mask=1 "$new" "$small" >"$logdir/$t.merge.log" 2>&1 \
            || { echo "fuzz.sh: merging $t failed: $logdir/$t.merge.log" >&2; rm -rf "$new" "$small"; exit 1; }
        rm -rf "fuzz/corpus/$t" "$small" && mv "$new" "fuzz/corpus/$t"
        echo "$t: $(ls "fuzz/corpus/$t" | wc -l) inputs, $(du -sk --apparent-size "fuzz/corpus/$t" | cut -f1) kB"
    done
    exit 0
fi

# The last value of "KEY: N" in a libFuzzer log's status lines ("#N ... cov: ... ft: ...").
last() { grep '^#[0-9]' "$2" | grep -o "$1 *[0-9]*" | tail -1 | grep -o '[0-9]*$' || echo 0; }
# The sum of a final stat over the log's runs (one per restart).
sum() { grep "^stat::$1:" "$2" | awk '{s += $2} END {print s + 0}'; }

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "bench/fuzz.sh on $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit; limits: -timeout=$timeout -rss_limit_mb=$rss -malloc_limit_mb=$malloc; ${runs:+$runs runs}${runs:-$seconds s} per target"
echo
echo "| target | executions | exec/s | cov | ft | corpus | crashes | timeouts | OOMs | slowest (s) | peak RSS (MB) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
status=0 total=0
for t in "${targets[@]}"; do
    [[ -x $bin/$t ]] || { echo "fuzz.sh: no target $t (cargo fuzz list)" >&2; exit 2; }
    work=fuzz/corpus.tmp/$t art=fuzz/artifacts/$t log=$logdir/$t.log
    mkdir -p "$work" "$art" "fuzz/corpus/$t"
    : >"$log"
    count() { ls "$art" | grep -c "^$1-" || true; }
    before=($(count crash) $(count timeout) $(count oom))
    start=$(date +%s) left=$seconds runs_left=$runs n=0
    while :; do
        limit=(-max_total_time="$left")
        [[ -n $runs ]] && limit=(-runs="$runs_left")
        # -close_fd_mask=1: what a parser prints to stdout is noise; stderr keeps the stats.
        rc=0
        nice -n 19 "$bin/$t" "${limit[@]}" -timeout="$timeout" -rss_limit_mb="$rss" \
            -malloc_limit_mb="$malloc" -print_final_stats=1 -close_fd_mask=1 \
            -artifact_prefix="$art/" "$work" "fuzz/corpus/$t" >>"$log" 2>&1 || rc=$?
        n=$((n + 1))
        ((rc == 0)) && break
        # A finding: go on for the rest of the time (runs: with what is left of them).
        if [[ -n $runs ]]; then
            done_runs=$(sum number_of_executed_units "$log")
            ((done_runs < runs && n <= restarts)) || break
            runs_left=$((runs - done_runs))
        else
            left=$((seconds - ($(date +%s) - start)))
            ((left > 1 && n <= restarts)) || break
        fi
    done
    execs=$(sum number_of_executed_units "$log")
    secs=$(($(date +%s) - start))
    rate=$((execs / (secs > 0 ? secs : 1)))
    crashes=$(($(count crash) - before[0])) timeouts=$(($(count timeout) - before[1]))
    ooms=$(($(count oom) - before[2]))
    ((crashes + timeouts + ooms > 0)) && status=1
    slow=$(grep '^stat::slowest_unit_time_sec:' "$log" | awk '$2 > m {m = $2} END {print m + 0}')
    peak=$(grep '^stat::peak_rss_mb:' "$log" | awk '$2 > m {m = $2} END {print m + 0}')
    echo "| $t | $execs | $rate | $(last 'cov:' "$log") | $(last 'ft:' "$log") | $(ls "$work" | wc -l) | $crashes | $timeouts | $ooms | $slow | $peak |"
    total=$((total + execs))
done
echo
echo "total: $total executions; findings (all runs) in fuzz/artifacts/, logs in $logdir"
exit $status
