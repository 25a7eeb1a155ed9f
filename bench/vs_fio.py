#!/usr/bin/env python3
"""Run fio and iogauge on the same work, interleaved, several rounds; print median ratios.

Not a test: numbers depend on the machine. Usage: bench/vs-fio.sh [ROUNDS] (default 5).
Each row runs fio then iogauge (order alternating per round) with identical arguments and
reads the same JSON path from both. Peak RSS comes from getrusage of each child.
"""
import json, os, resource, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOGAUGE = os.path.join(ROOT, "target", "release", "iogauge")
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
SECS = os.environ.get("BENCH_SECONDS", "3")


def measured(argv):
    """Run argv under a tiny wrapper that reports the child's own max RSS."""
    wrapper = ("import resource,subprocess,sys;"
               "p=subprocess.run(sys.argv[1:],stdout=subprocess.PIPE,stderr=subprocess.PIPE,text=True);"
               "sys.stderr.write(p.stderr);sys.stdout.write(p.stdout);"
               "print('\\nRSS_KIB=%d'%resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss);"
               "sys.exit(p.returncode)")
    p = subprocess.run([sys.executable, "-c", wrapper] + argv, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(argv)}\n{p.stderr}")
    out, _, rss = p.stdout.rpartition("\nRSS_KIB=")
    return json.loads(out), int(rss)


def p99_sync(d):
    return d["jobs"][0]["sync"]["lat_ns"]["percentile"]["99.000000"]


def read_iops(d):
    return d["jobs"][0]["read"]["iops"]


def main():
    if not shutil.which("fio"):
        sys.exit("fio is not installed (apt-get install -y fio)")
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix="iogauge-bench-", dir=os.environ.get("BENCH_DIR", ROOT))
    pc_file = os.path.join(work, "pagecache.dat")
    with open(pc_file, "wb") as f:
        for _ in range(256):
            f.write(os.urandom(1 << 20))
    floor_bin = os.path.join(work, "pread_loop")
    subprocess.run(["gcc", "-O2", "-o", floor_bin, os.path.join(ROOT, "bench", "pread_loop.c")],
                   check=True)
    etcd_dir = os.path.join(work, "etcd")
    os.mkdir(etcd_dir)
    rows = [
        ("etcd recipe (seed 004): p99 sync latency", "lower",
         ["--rw=write", "--ioengine=sync", "--fdatasync=1", f"--directory={etcd_dir}",
          "--size=22m", "--bs=2300", "--name=mytest"], p99_sync, "ns"),
        ("ioengine=null 4 KiB: read IOPS", "higher",
         ["--name=null", "--ioengine=null", "--rw=read", "--bs=4k", "--size=1g",
          "--time_based", f"--runtime={SECS}"], read_iops, "IOPS"),
        ("psync 4 KiB randread, page cache: read IOPS", "higher",
         ["--name=pc", f"--filename={pc_file}", "--rw=randread", "--ioengine=psync", "--bs=4k",
          "--invalidate=0", "--time_based", f"--runtime={SECS}"], read_iops, "IOPS"),
    ]
    results = {name: {"fio": [], "iogauge": [], "fio_rss": [], "iogauge_rss": []}
               for name, *_ in rows}
    floor = []
    subprocess.run(["cat", pc_file], stdout=subprocess.DEVNULL, check=True)  # warm the cache
    for rnd in range(ROUNDS):
        for name, _, args, metric, _ in rows:
            order = ["fio", "iogauge"] if rnd % 2 == 0 else ["iogauge", "fio"]
            for tool in order:
                cmd = (["fio"] if tool == "fio" else [IOGAUGE, "fio"]) + args + \
                      ["--output-format=json"]
                d, rss = measured(cmd)
                results[name][tool].append(metric(d))
                results[name][tool + "_rss"].append(rss)
                # fio leaves its files; iogauge removes its own. Same starting state for both.
                for f in os.listdir(etcd_dir):
                    os.unlink(os.path.join(etcd_dir, f))
        out = subprocess.run([floor_bin, pc_file, SECS], stdout=subprocess.PIPE, text=True,
                             check=True).stdout
        floor.append(float(out))
        print(f"round {rnd + 1}/{ROUNDS} done", file=sys.stderr)
    shutil.rmtree(work)

    print(f"iogauge vs fio {subprocess.run(['fio', '--version'], stdout=subprocess.PIPE, text=True).stdout.strip()}"
          f", {ROUNDS} rounds, medians; ratio = iogauge / fio")
    print(f"{'workload':48} {'fio':>12} {'iogauge':>12} {'ratio':>7} {'fio RSS':>10} {'iog RSS':>10}")
    for name, better, _, _, unit in rows:
        r = results[name]
        f, g = statistics.median(r["fio"]), statistics.median(r["iogauge"])
        print(f"{name:48} {f:12.0f} {g:12.0f} {g / f:7.3f} "
              f"{statistics.median(r['fio_rss']):7.0f}KiB {statistics.median(r['iogauge_rss']):7.0f}KiB"
              f"  ({unit}, {better} is better)")
    pc = statistics.median(results[rows[2][0]]["iogauge"])
    print(f"{'bare pread loop (C), same file':48} {statistics.median(floor):12.0f} "
          f"{'':12} {pc / statistics.median(floor):7.3f}  (iogauge / bare loop)")


if __name__ == "__main__":
    main()
