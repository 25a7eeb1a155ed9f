#!/usr/bin/env python3
"""Where could iogauge's and fio's etcd p99 differ? The same recipe under both tools, compared on
what each does to the disk: system calls per write (strace -c over the whole run), the file's
extents right after layout (create_only=1) and after the run (filefrag -v), then the p99 of
ROUNDS interleaved runs of each without strace.

Not a test: the p99 depends on the machine. docs/MEASUREMENT.md quotes what this printed.

Usage: bench/etcd_bias.py [ROUNDS]   (default 9; env BENCH_DIR=<dir on the disk to test>,
       IOGAUGE_BIN, FIO_CMD as for bench/vs-fio.sh). Needs strace and filefrag (e2fsprogs).
"""
import json, os, re, shutil, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_fio import FIO, IOGAUGE, ROOT  # noqa: E402


def recipe(d):
    return ["--rw=write", "--ioengine=sync", "--fdatasync=1", f"--directory={d}", "--size=22m",
            "--bs=2300", "--name=mytest"]


def tool_cmd(tool, args):
    return (FIO if tool == "fio" else [IOGAUGE, "fio"]) + args


def empty(d):
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))


def extents(path):
    """(extent count, unwritten extents) from filefrag -v."""
    out = subprocess.run(["filefrag", "-v", path], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    rows = [l for l in out.splitlines() if re.match(r"\s*\d+:", l)]
    return len(rows), sum("unwritten" in l for l in rows)


def syscalls(tool, d):
    """System calls per write of the run, from strace -c -f (the tool's own threads and children)."""
    log = os.path.join(d, "..", f"strace-{tool}.txt")
    subprocess.run(["strace", "-f", "-c", "-o", log] + tool_cmd(tool, recipe(d)) +
                   ["--output-format=json"], stdout=subprocess.DEVNULL, check=True)
    calls = {}
    for line in open(log):
        f = line.split()
        if len(f) >= 5 and f[0][0].isdigit() and f[-1] != "total":
            calls[f[-1]] = int(f[3])
    os.unlink(log)
    return calls


def p99(tool, d):
    out = subprocess.run(tool_cmd(tool, recipe(d)) + ["--output-format=json"],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    doc = json.loads(out[out.index("{"):])
    return doc["jobs"][0]["sync"]["lat_ns"]["percentile"]["99.000000"]


def main():
    args = sys.argv[1:]
    if any(a in ("-h", "--help") for a in args) or len(args) > 1:
        sys.exit(__doc__)
    rounds = int(args[0]) if args else 9
    for need in ("strace", "filefrag", FIO[0]):
        if not shutil.which(need):
            sys.exit(f"{need} is not installed")
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix="iogauge-etcd-", dir=os.environ.get("BENCH_DIR", ROOT))
    d = os.path.join(work, "etcd")
    os.mkdir(d)
    try:
        print("etcd recipe (22 MiB of 2300 B writes, fdatasync after each), fio vs iogauge")
        for tool in ("fio", "iogauge"):
            keep = ["--keep-files"] if tool == "iogauge" else []
            subprocess.run(tool_cmd(tool, recipe(d)) + ["--create_only=1"] + keep,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            laid = extents(os.path.join(d, "mytest.0.0"))
            empty(d)
            subprocess.run(tool_cmd(tool, recipe(d)) + keep + ["--output-format=json"],
                           stdout=subprocess.DEVNULL, check=True)
            after = extents(os.path.join(d, "mytest.0.0"))
            empty(d)
            calls = syscalls(tool, d)
            empty(d)
            writes = calls.get("write", 0) + calls.get("pwrite64", 0)
            n = calls.get("fdatasync", 0)
            per = {k: v / n for k, v in calls.items() if n and v >= n // 2}
            print(f"  {tool:8} after layout: {laid[0]} extent(s), {laid[1]} unwritten; after the "
                  f"run: {after[0]} extent(s), {after[1]} unwritten; fdatasync {n}, writes "
                  f"{writes}; calls per fdatasync: "
                  + ", ".join(f"{k} {v:.2f}" for k, v in sorted(per.items())))
        vals = {"fio": [], "iogauge": []}
        for r in range(rounds):
            for tool in (("fio", "iogauge") if r % 2 == 0 else ("iogauge", "fio")):
                vals[tool].append(p99(tool, d))
                empty(d)
            print(f"round {r + 1}/{rounds} done", file=sys.stderr)
        med = statistics.median
        f, g = med(vals["fio"]), med(vals["iogauge"])
        paired = sorted(b / a for a, b in zip(vals["fio"], vals["iogauge"]))
        print(f"  p99 fdatasync, {rounds} interleaved rounds: fio median {f / 1000:.1f} us "
              f"({min(vals['fio']) / 1000:.1f}..{max(vals['fio']) / 1000:.1f}), iogauge median "
              f"{g / 1000:.1f} us ({min(vals['iogauge']) / 1000:.1f}..{max(vals['iogauge']) / 1000:.1f}); "
              f"ratio of medians {g / f:.3f}; per-round ratios {paired[0]:.2f}..{paired[-1]:.2f}, "
              f"median {med(paired):.3f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
