#!/usr/bin/env python3
"""Write-then-verify accounting and JSON size, iogauge against fio on the same jobs.

Not a test: numbers depend on the machine.

Both tools end the write phase the same way (no sync; POSIX_FADV_DONTNEED when the read-back
opens the file), so whether the read-back hits the page cache or the disk is a race between the
writeback that DONTNEED starts and its page drop: pages still under writeback stay cached. From
an idle disk the writeback finishes first and the read-back reads the disk; when the disk is
still busy with the previous run (its fsync, its unlink's discards at the next journal commit)
the pages stay cached and the read-back takes ~20 ms with a p50 near 1 µs, in either tool.
Without a pause between runs that race, not the tool, decided the medians (a psync read ratio
of 12.8 one run, 0.7 the next). So every verify run starts from a settled disk: sync, then
BENCH_SETTLE seconds (default 6, longer than ext4's 5 s journal commit interval); on a busy
machine the race still goes either way now and then. The row "cached" counts the runs whose
read-back p50 was under 20 µs (page cache hits; disk reads here take 40 µs and more). Two rows
take the race out: end_fsync=1 writes everything back before the read-back (always the disk)
and invalidate=0 drops nothing (always the page cache).

Usage: bench/verify_json.py [ROUNDS]   (default 9; env IOGAUGE_BIN, BENCH_DIR, BENCH_SETTLE)

Verify rows: `size=32m bs=4k rw=randwrite verify=crc32c do_verify=1` with psync, io_uring
(iodepth=8), psync with end_fsync=1 and psync with invalidate=0, fio and iogauge interleaved
(order alternating per round), in a fresh file each run. Printed: medians of the write runtime, the read (read-back)
runtime and the read-back clat p50, and ratio = iogauge / fio.

JSON rows: bytes of the JSON document each tool prints for a 3 s job (median of the rounds;
iogauge's default lean document, and with --json-intervals).
"""
import json, os, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOGAUGE = os.environ.get("IOGAUGE_BIN") or os.path.join(ROOT, "target", "release", "iogauge")
BASE = os.environ.get("BENCH_DIR") or os.path.join(ROOT, "target")
SETTLE = float(os.environ.get("BENCH_SETTLE", "6"))

VERIFY = {
    "psync": ["--ioengine=psync"],
    "io_uring qd8": ["--ioengine=io_uring", "--iodepth=8"],
    "psync end_fsync=1": ["--ioengine=psync", "--end_fsync=1"],
    "psync invalidate=0": ["--ioengine=psync", "--invalidate=0"],
}
VERIFY_JOB = ["--name=v", "--size=32m", "--bs=4k", "--rw=randwrite", "--verify=crc32c",
              "--do_verify=1"]
SIZES = {
    "sync 2300 B + fdatasync": ["--rw=write", "--bs=2300", "--fdatasync=1", "--size=22m"],
    "randrw io_uring qd16 direct": ["--rw=randrw", "--ioengine=io_uring", "--iodepth=16",
                                     "--direct=1", "--size=64m"],
}


def run(tool, args, cwd):
    cmd = ([IOGAUGE, "fio", "--no-history"] if tool == "iogauge" else ["fio"]) + args
    p = subprocess.run(cmd + ["--output-format=json"], cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{tool} failed ({' '.join(cmd)}):\n{p.stderr}")
    return p.stdout[p.stdout.index("{"):]


def verify_row(tool, extra):
    os.sync()
    time.sleep(SETTLE)
    with tempfile.TemporaryDirectory(dir=BASE) as d:
        j = json.loads(run(tool, VERIFY_JOB + extra, d))["jobs"][0]
    clat = j["read"]["clat_ns"]["percentile"]["50.000000"] / 1000.0
    return j["write"]["runtime"], j["read"]["runtime"], clat


def size_row(tool, extra):
    with tempfile.TemporaryDirectory(dir=BASE) as d:
        args = ["--name=s", "--runtime=3", "--time_based"] + extra
        return len(run(tool, args, d).encode())


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    vres = {(n, t): [] for n in VERIFY for t in ("fio", "iogauge")}
    sres = {(n, t): [] for n in SIZES for t in ("fio", "iogauge", "iogauge+intervals")}
    for r in range(rounds):
        order = ("fio", "iogauge") if r % 2 == 0 else ("iogauge", "fio")
        for n, extra in VERIFY.items():
            for t in order:
                vres[(n, t)].append(verify_row(t, extra))
        if r < 3:
            for n, extra in SIZES.items():
                for t in order:
                    sres[(n, t)].append(size_row(t, extra))
                sres[(n, "iogauge+intervals")].append(
                    size_row("iogauge", extra + ["--json-intervals"]))
        print(f"round {r + 1}/{rounds} done", file=sys.stderr)
    print(f"verify accounting, {rounds} rounds, medians; ratio = iogauge / fio")
    print(f"{'job':22} {'':9} {'fio':>9} {'iogauge':>9} {'ratio':>7}")
    for n in VERIFY:
        cached = [sum(x[2] < 20 for x in vres[(n, t)]) for t in ("fio", "iogauge")]
        print(f"{n:22} {'cached':11} {cached[0]:7}/{rounds} {cached[1]:7}/{rounds}")
        for i, what in enumerate(("write ms", "read ms", "read p50 µs")):
            f = statistics.median(x[i] for x in vres[(n, "fio")])
            g = statistics.median(x[i] for x in vres[(n, "iogauge")])
            ratio = f"{g / f:7.3f}" if f else "      -"
            print(f"{n:22} {what:11} {f:9.1f} {g:9.1f} {ratio}")
    print("\nJSON bytes of a 3 s job (median of 3); ratio = iogauge / fio")
    for n in SIZES:
        f = statistics.median(sres[(n, "fio")])
        g = statistics.median(sres[(n, "iogauge")])
        gi = statistics.median(sres[(n, "iogauge+intervals")])
        print(f"{n:30} fio {f:8.0f}  iogauge {g:8.0f} ({g / f:.2f})  "
              f"--json-intervals {gi:8.0f} ({gi / f:.2f})")


if __name__ == "__main__":
    main()
