#!/usr/bin/env bash
# Benchmark iogauge against fio on the same work, interleaved; prints median ratios.
# Usage: bench/vs-fio.sh [ROUNDS] [SET]   (env: BENCH_SECONDS=3, BENCH_DIR=<dir on the disk to test>)
#   ROUNDS  default 5
#   SET     sync (default): etcd p99, null engine, psync page cache + bare pread floor, fresh rows
#           (page-cache rows pass --invalidate=0 --fadvise_hint=0 to both tools: they measure memory)
#           buffered: fio's default buffered reads of the disk (issue 8's report) and disk util at 1 s / 4 s
#           fresh: one buffered seq / random pass over a fresh 128 MiB file each tool lays out
#                  itself (fio's defaults); prints the spread and per-round ratio too
#           async: io_uring/libaio page-cache randread qd1/16/64, direct randwrite qd16,
#                  GitLab libaio randrw recipe; also CPU us per I/O
#           all:   both
set -euo pipefail
exec python3 "$(dirname "$0")/vs_fio.py" "$@"
