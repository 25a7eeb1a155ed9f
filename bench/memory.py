#!/usr/bin/env python3
"""Memory of a long run: iogauge's RSS must be flat in run length (issue 13, "Memory" row).

Part 1, RSS: a time-based job per engine kind (psync, and io_uring or libaio), rate-limited with
rate_iops so that it does not hog a core yet does far more I/Os than the exact-sample budget,
run by iogauge and, for comparison, by fio, all at the same time. VmRSS of each process is read
every --every seconds; printed: the RSS at 1 minute, at the end, their difference (goal: under
1 MiB) and the peak (ru_maxrss). Goals: peak <= 8 MiB for the sync engine, <= 12 MiB queueing.

Part 2, percentiles: a size-based job per engine kind with far more I/Os than the exact budget
(so the JSON's percentiles come from the log-linear histogram) and every completion latency
logged (write_lat_log, log_avg_msec=0); the exact nearest-rank percentiles of the logged values
are compared with the JSON's. Goal: every percentile within 0.5 %.

Usage: bench/memory.py [--minutes N] [--every S] [--rate-iops R] [--no-fio] [--skip-rss]
                       [--skip-percentiles]
  env: IOGAUGE=<binary> (default target/release/iogauge), BENCH_DIR=<dir> (default: a temporary
  directory under the current directory).
Exit status 1 if a goal is missed. Takes --minutes (default 60) for part 1 plus ~30 s.
"""
import argparse, json, os, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("IOGAUGE", os.path.join(ROOT, "target", "release", "iogauge"))
MIB = 1024 * 1024
# Must match DEFAULT_SAMPLE_BUDGET in src/stats/latency.rs.
EXACT_BUDGET = 1 << 17
PCTS = ["1.000000", "5.000000", "10.000000", "20.000000", "30.000000", "40.000000", "50.000000",
        "60.000000", "70.000000", "80.000000", "90.000000", "95.000000", "99.000000",
        "99.500000", "99.900000", "99.950000", "99.990000"]
GOAL_PEAK = {"sync": 8 * MIB, "queue": 12 * MIB}


def queue_engine(d):
    """io_uring when the kernel lets us, else libaio."""
    r = subprocess.run([BIN, "fio", "--name=probe", f"--directory={d}", "--ioengine=io_uring",
                        "--size=64k", "--rw=read", "--output-format=json"],
                       capture_output=True, env=env())
    return "io_uring" if r.returncode == 0 else "libaio"


def env():
    e = dict(os.environ)
    e["IOGAUGE_NO_HISTORY"] = "1"
    return e


def job_args(engine, d, seconds, rate):
    args = [f"--name=mem-{engine}", f"--directory={d}", f"--filename=mem-{engine}.dat",
            "--rw=randread", "--bs=4k", "--size=16m", f"--ioengine={engine}",
            f"--runtime={seconds}", "--time_based", f"--rate_iops={rate}",
            "--output-format=json"]
    if engine not in ("psync", "sync"):
        args.append("--iodepth=16")
    return args


def child_of(pid):
    """The program /usr/bin/time runs."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = f.read().split()
        return int(kids[0]) if kids else pid
    except OSError:
        return pid


def vmrss(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def rss_part(args, d, qeng):
    seconds = int(args.minutes * 60)
    runs = []
    for tool in ["iogauge"] + ([] if args.no_fio else ["fio"]):
        for kind, engine in (("sync", "psync"), ("queue", qeng)):
            prog = [BIN, "fio"] if tool == "iogauge" else ["fio"]
            # Separate files per tool: iogauge refuses to write over a file it did not create.
            sub = os.path.join(d, tool)
            os.makedirs(sub, exist_ok=True)
            out = open(os.path.join(d, f"{tool}-{engine}.out"), "w+b")
            err = open(os.path.join(d, f"{tool}-{engine}.err"), "w+b")
            # /usr/bin/time gives the true peak (ru_maxrss of the program alone: a child forked
            # from this Python process would count Python's own pages, kept across exec).
            peak_file = os.path.join(d, f"{tool}-{engine}.peak")
            p = subprocess.Popen(["/usr/bin/time", "-o", peak_file, "-f", "%M"] + prog +
                                 job_args(engine, sub, seconds, args.rate_iops),
                                 stdout=out, stderr=err, env=env())
            runs.append({"tool": tool, "kind": kind, "engine": engine, "pid": p.pid, "p": p,
                         "out": out, "err": err, "samples": [], "status": None, "peak_file": peak_file})
    t0 = time.monotonic()
    live = list(runs)
    while live:
        time.sleep(args.every)
        t = time.monotonic() - t0
        for r in list(live):
            if r["p"].poll() is not None:
                r["status"] = r["p"].returncode
                live.remove(r)
                continue
            v = vmrss(child_of(r["pid"]))
            if v is not None:
                r["samples"].append((t, v))
    ok = True
    print(f"RSS of a {args.minutes:g}-minute time-based randread job at {args.rate_iops} IOPS "
          f"(VmRSS every {args.every:g} s)")
    print(f"{'tool':8} {'engine':9} {'ios':>10} {'at 1 min':>10} {'at end':>10} {'diff':>9} "
          f"{'peak':>10}  verdict")
    for r in runs:
        r["out"].seek(0)
        r["err"].seek(0)
        out, err = r["out"].read(), r["err"].read()
        if r["status"] != 0:
            print(f"{r['tool']} {r['engine']} failed: {err.decode(errors='replace')[-400:]}")
            ok = False
            continue
        doc = json.loads(out[out.find(b"{"):])
        ios = doc["jobs"][0]["read"]["total_ios"]
        s = r["samples"]
        at1 = next((v for t, v in s if t >= 60), s[0][1] if s else 0)
        end = s[-1][1] if s else 0
        with open(r["peak_file"]) as f:
            peak = int(f.read().split()[-1]) * 1024
        diff = end - at1
        verdict = "-"
        if r["tool"] == "iogauge":
            good = abs(diff) < MIB and peak <= GOAL_PEAK[r["kind"]]
            verdict = "ok" if good else "MISSED (goal: diff < 1 MiB, peak <= "\
                f"{GOAL_PEAK[r['kind']] / MIB:g} MiB)"
            ok &= good
        print(f"{r['tool']:8} {r['engine']:9} {ios:>10} {at1 / MIB:>9.2f}M {end / MIB:>9.2f}M "
              f"{diff / MIB:>+8.2f}M {peak / MIB:>9.2f}M  {verdict}")
    return ok


def nearest_rank(sorted_vals, p):
    n = len(sorted_vals)
    x = p * n / 100.0
    r = int(-(-(x - abs(x) * 1e-12) // 1))
    return sorted_vals[min(max(r, 1), n) - 1]


def percentile_part(args, d, qeng):
    ok = True
    ios = 4 * EXACT_BUDGET
    print(f"\nHistogram percentiles against exact ones ({ios} I/Os, budget {EXACT_BUDGET}: "
          f"every latency logged)")
    for engine in ("psync", qeng):
        sub = os.path.join(d, f"pct-{engine}")
        os.makedirs(sub, exist_ok=True)
        prefix = os.path.join(sub, "lat")
        a = [BIN, "fio", f"--name=pct-{engine}", f"--directory={sub}", "--rw=randread",
             "--bs=4k", "--size=16m", f"--ioengine={engine}", f"--number_ios={ios}",
             "--loops=1000", f"--write_lat_log={prefix}", "--log_avg_msec=0",
             "--output-format=json"]
        if engine not in ("psync", "sync"):
            a.append("--iodepth=16")
        r = subprocess.run(a, capture_output=True, env=env())
        if r.returncode != 0:
            print(f"{engine}: iogauge failed: {r.stderr.decode(errors='replace')[-400:]}")
            ok = False
            continue
        doc = json.loads(r.stdout[r.stdout.find(b"{"):])
        rd = doc["jobs"][0]["read"]
        log = [f for f in os.listdir(sub) if f.startswith("lat_clat") and f.endswith(".log")]
        vals = []
        for f in log:
            with open(os.path.join(sub, f)) as fh:
                vals += [int(line.split(",")[1]) for line in fh if line.strip()]
        vals.sort()
        n = rd["clat_ns"]["N"]
        worst, worst_p = 0.0, None
        for p in PCTS:
            got = rd["clat_ns"]["percentile"][p]
            want = nearest_rank(vals, float(p))
            err = abs(got - want) / want if want else 0.0
            if err > worst:
                worst, worst_p = err, p
        exceeded = n > EXACT_BUDGET
        method = rd["clat_ns"].get("iogauge", {}).get("percentile_method")
        # Past the budget the JSON must say its percentiles come from the histogram.
        good = len(vals) == n and (not exceeded or (worst <= 0.005 and method == "histogram"))
        ok &= good
        print(f"{engine:9} N={n} logged={len(vals)} method={method} worst error {worst * 100:.3f} % "
              f"(p{worst_p})  {'ok' if good else 'MISSED (goal: <= 0.5 %, every I/O logged)'}")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--every", type=float, default=5, help="seconds between RSS samples")
    ap.add_argument("--rate-iops", type=int, default=5000)
    ap.add_argument("--no-fio", action="store_true", help="skip fio's runs")
    ap.add_argument("--skip-rss", action="store_true")
    ap.add_argument("--skip-percentiles", action="store_true")
    args = ap.parse_args()
    if not os.access(BIN, os.X_OK):
        sys.exit(f"{BIN}: not built (cargo build --release, or set IOGAUGE=)")
    ok = True
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR", ".")) as d:
        qeng = queue_engine(d)
        if not args.skip_rss:
            ok &= rss_part(args, d, qeng)
        if not args.skip_percentiles:
            ok &= percentile_part(args, d, qeng)
    print("\nall goals met" if ok else "\nsome goal MISSED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
