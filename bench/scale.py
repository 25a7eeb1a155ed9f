#!/usr/bin/env python3
"""Scale table: iogauge / fio IOPS as numjobs and iodepth grow, so a cost that grows with jobs or
depth shows up. Interleaved runs of both tools, medians of ROUNDS rounds.

Not a test: numbers depend on the machine (2 cores here, so numjobs 4 and 8 oversubscribe them
on purpose: both tools pay for it).

Usage: bench/scale.py [ROUNDS]          (default 5)
  env: BENCH_SECONDS=1 (runtime of each run), BENCH_DIR=<dir for the page-cache file>,
       IOGAUGE_BIN, FIO_CMD (as for bench/vs-fio.sh)

Rows (4 KiB random reads, time-based, --group_reporting so the JSON's one job sums the jobs):
  null engine (depth 1 only: iogauge's null engine is synchronous; fio's queues at depth > 1, so
  a deeper null row would compare two different things), psync on a page-cached file, and
  io_uring and libaio on that file at iodepth 1, 4, 16, 64, 256. Columns are numjobs 1, 2, 4, 8.
  The page-cache rows pass --invalidate=0 --fadvise_hint=0 to both tools: they measure the tools.
"""
import os, shutil, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_fio import BenchError, FIO, IOGAUGE, PAGE_CACHE, ROOT, extract, measured, read_iops  # noqa: E402

SECS = os.environ.get("BENCH_SECONDS", "1")
NUMJOBS = (1, 2, 4, 8)
DEPTHS = (1, 4, 16, 64, 256)


def rows(pc_file):
    """(row label, fio arguments without numjobs) for every row of the table."""
    common = ["--rw=randread", "--bs=4k", "--time_based", f"--runtime={SECS}",
              "--group_reporting"]
    out = [("null", ["--name=scale", "--ioengine=null", "--size=1g"] + common)]
    pc = ["--name=scale", f"--filename={pc_file}"] + PAGE_CACHE + common
    out.append(("psync page cache", pc + ["--ioengine=psync"]))
    for engine in ("io_uring", "libaio"):
        for depth in DEPTHS:
            out.append((f"{engine} page cache qd{depth}",
                        pc + [f"--ioengine={engine}", f"--iodepth={depth}"]))
    return out


def main():
    args = sys.argv[1:]
    if any(a in ("-h", "--help") for a in args) or len(args) > 1:
        sys.exit(__doc__)
    try:
        rounds = int(args[0]) if args else 5
        if rounds < 1:
            raise ValueError
    except ValueError:
        sys.exit(f"ROUNDS must be a positive integer, got {args[0]!r}\n{__doc__}")
    if not shutil.which(FIO[0]):
        sys.exit("fio is not installed (apt-get install -y fio)")
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix="iogauge-scale-", dir=os.environ.get("BENCH_DIR", ROOT))
    try:
        pc_file = os.path.join(work, "pagecache.dat")
        with open(pc_file, "wb") as f:
            for _ in range(256):
                f.write(os.urandom(1 << 20))
        subprocess.run(["cat", pc_file], stdout=subprocess.DEVNULL, check=True)
        table = rows(pc_file)
        iops = {(label, n): {"fio": [], "iogauge": []} for label, _ in table for n in NUMJOBS}
        for rnd in range(rounds):
            for label, base in table:
                for n in NUMJOBS:
                    argv = base + [f"--numjobs={n}", "--output-format=json"]
                    tools = ("fio", "iogauge") if rnd % 2 == 0 else ("iogauge", "fio")
                    for tool in tools:
                        cmd = (FIO if tool == "fio" else [IOGAUGE, "fio"]) + argv
                        d, _ = measured(cmd, f"{label} numjobs={n}", tool)
                        iops[(label, n)][tool].append(extract(read_iops, d, label, tool, cmd))
            print(f"round {rnd + 1}/{rounds} done", file=sys.stderr)
    except BenchError as e:
        sys.exit(str(e))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    med = statistics.median
    version = subprocess.run(FIO + ["--version"], stdout=subprocess.PIPE, text=True).stdout.strip()
    print(f"iogauge / fio {version} read IOPS, 4 KiB randread, {rounds} rounds, "
          f"BENCH_SECONDS={SECS}, medians of each tool then their ratio")
    w = max(len(label) for label, _ in table)
    print(f"{'row':{w}} " + " ".join(f"{'numjobs=' + str(n):>10}" for n in NUMJOBS)
          + "   (fio IOPS at numjobs=1)")
    for label, _ in table:
        cells = []
        for n in NUMJOBS:
            f, g = med(iops[(label, n)]["fio"]), med(iops[(label, n)]["iogauge"])
            cells.append(f"{g / f:10.3f}" if f else f"{'n/a':>10}")
        print(f"{label:{w}} " + " ".join(cells)
              + f"   ({med(iops[(label, 1)]['fio']):.0f})")


if __name__ == "__main__":
    main()
