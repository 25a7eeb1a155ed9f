#!/usr/bin/env python3
"""io_uring at depth 1 against psync, both iogauge, direct random reads on one file:
io_uring's clat is device time as psync's is, so their median clat should agree within noise.
A benchmark rather than a test: the ratio depends on the disk and on what else runs.

Usage: bench/engine_clat.py [ROUNDS]   (env: BENCH_DIR=<dir on the disk to test>, default .)
Prints the p50 clat of each engine per round (interleaved) and the median ratio io_uring/psync.
"""
import json, os, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "iogauge")


def p50(engine, d):
    out = subprocess.run(
        [BIN, "fio", "--name=clat", f"--directory={d}", "--rw=randread", "--bs=4k",
         "--direct=1", "--iodepth=1", f"--ioengine={engine}", "--size=64m",
         "--runtime=2", "--time_based", "--output-format=json"],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out)["jobs"][0]["read"]["clat_ns"]["percentile"]["50.000000"]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    base = os.environ.get("BENCH_DIR", ".")
    ratios = []
    with tempfile.TemporaryDirectory(dir=base) as d:
        for r in range(rounds):
            ps, ur = p50("psync", d), p50("io_uring", d)
            ratios.append(ur / ps)
            print(f"round {r + 1}: psync p50 {ps} ns, io_uring p50 {ur} ns, ratio {ur / ps:.2f}")
    print(f"median io_uring/psync p50 clat: {statistics.median(ratios):.2f} over {rounds} rounds")


if __name__ == "__main__":
    main()
