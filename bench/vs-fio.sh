#!/usr/bin/env bash
# Benchmark iogauge against fio on the same work, interleaved; prints median ratios.
# Usage: bench/vs-fio.sh [ROUNDS]   (env: BENCH_SECONDS=3, BENCH_DIR=<dir on the disk to test>)
set -euo pipefail
exec python3 "$(dirname "$0")/vs_fio.py" "$@"
