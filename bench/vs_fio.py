#!/usr/bin/env python3
"""Run fio and iogauge on the same work, interleaved, several rounds; print median ratios.

Not a test: numbers depend on the machine.

Usage: bench/vs-fio.sh [ROUNDS] [SET]
  ROUNDS  positive integer, default 5
  SET     sync   the synchronous rows + the bare pread floor (default; also iogauge's psync
                 page-cache run with norandommap, whose offsets are drawn as the loop's are, and the
                 loop over the random map's permutation, as iogauge's default): etcd p99, null
                 engine, psync page cache, and the fresh rows
          fresh  single buffered passes (seq and random) over a fresh 128 MiB file that each
                 tool lays out itself, cache dropped on open (fio's defaults); noisy, so these
                 rows also print the spread and the per-round ratio
          buffered  fio's defaults on disk-bound buffered reads (issue 8's report): psync 4 KiB
                 randread 32 MiB time-based 2 s, randread 128 MiB one pass, sequential read
                 32 MiB time-based 2 s; and disk util of O_DIRECT 4 KiB random reads over 1 s
                 and 4 s (util's window differs from fio's by a fixed stretch, so short jobs differ)
          async  io_uring / libaio rows: page-cache 4 KiB randread at iodepth 1/16/64,
                 O_DIRECT 4 KiB randwrite at iodepth 16, GitLab docs' randrw recipe
          all    both
  Page-cache rows (psync, io_uring, libaio) measure memory on purpose: both tools get
  --invalidate=0 --fadvise_hint=0, and the row names say so.
  env: BENCH_SECONDS=3 (runtime of time-based rows), BENCH_DIR=<dir on the disk to test>,
       IOGAUGE_BIN (the iogauge to measure), FIO_CMD (the baseline; "OLD/iogauge fio" compares
       two iogauge builds: the ratio is then new / old)

Each run executes fio then iogauge (order alternating per round) with identical arguments and
reads the same JSON path from both; the table shows medians and ratio = iogauge / fio.
Peak RSS comes from getrusage of each child. Async rows also show CPU cost per I/O in
microseconds: (usr_cpu + sys_cpu) / 100 * job_runtime / (read.total_ios + write.total_ios).
If either tool fails (nonzero exit, unparsable JSON, job error, missing field) the script
prints that tool's stderr and aborts, naming the row and the command.
"""
import json, os, re, shlex, shutil, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOGAUGE = os.environ.get("IOGAUGE_BIN") or os.path.join(ROOT, "target", "release", "iogauge")
# The baseline command; FIO_CMD="OLD/iogauge fio" compares two iogauge builds the same way.
FIO = shlex.split(os.environ.get("FIO_CMD", "fio"))
SECS = os.environ.get("BENCH_SECONDS", "3")
SETS = ("sync", "async", "fresh", "buffered", "all")
USAGE = ("usage: bench/vs-fio.sh [ROUNDS] [SET]\n"
         "  ROUNDS: positive integer (default 5); SET: sync | async | fresh | buffered | all (default sync)\n"
         "  env: BENCH_SECONDS=3, BENCH_DIR=<dir on the disk to test>")


# The page-cache rows measure memory on purpose: both tools are told to keep the cache
# (invalidate=0: no drop on open, nor at each new pass of a time-based job) and to leave the
# kernel's readahead alone (fadvise_hint=0), so neither measures the disk by accident.
PAGE_CACHE = ["--invalidate=0", "--fadvise_hint=0"]
PSYNC_PC = "psync 4 KiB randread, page cache (invalidate=0, fadvise_hint=0): read IOPS"


def parse_args(argv):
    if any(a in ("-h", "--help") for a in argv):
        print(USAGE)
        sys.exit(0)
    if len(argv) > 2:
        sys.exit(f"too many arguments\n{USAGE}")
    try:
        rounds = int(argv[0]) if argv else 5
    except ValueError:
        rounds = 0
    if rounds < 1:
        sys.exit(f"ROUNDS must be a positive integer, got {argv[0]!r}\n{USAGE}")
    row_set = argv[1] if len(argv) > 1 else "sync"
    if row_set not in SETS:
        sys.exit(f"SET must be one of {', '.join(SETS)}, got {row_set!r}\n{USAGE}")
    return rounds, row_set


class BenchError(Exception):
    pass


def fail(title, tool, argv, what, stderr="", stdout=""):
    msg = [f"vs_fio: row '{title}': {tool} {what}", f"  command: {shlex.join(argv)}"]
    if stderr.strip():
        msg += [f"--- {tool} stderr ---", stderr.rstrip()]
    if stdout.strip():
        msg += [f"--- {tool} stdout (last 2000 chars) ---", stdout.rstrip()[-2000:]]
    raise BenchError("\n".join(msg))


def measured(argv, title, tool):
    """Run argv under a tiny wrapper that reports the child's own max RSS; return (JSON, KiB)."""
    wrapper = ("import resource,subprocess,sys;"
               "p=subprocess.run(sys.argv[1:],stdout=subprocess.PIPE,stderr=subprocess.PIPE,text=True);"
               "sys.stderr.write(p.stderr);sys.stdout.write(p.stdout);"
               "print('\\nRSS_KIB=%d'%resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss);"
               "sys.exit(p.returncode)")
    p = subprocess.run([sys.executable, "-c", wrapper] + argv, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    out, sep, rss = p.stdout.rpartition("\nRSS_KIB=")
    if not sep:
        out = p.stdout
    if p.returncode != 0:
        fail(title, tool, argv, f"exited with status {p.returncode}", p.stderr, out)
    # fio may print notes before the JSON document; start at the first line opening an object.
    m = re.search(r"^\{", out, re.M)
    try:
        if not m:
            raise ValueError("no JSON object in stdout")
        d, _ = json.JSONDecoder().raw_decode(out, m.start())
        # `iogauge check --format json` wraps the run's fio-style report.
        report = d["profiles"][0]["report"] if "profiles" in d else d
        err = report["jobs"][0].get("error", 0)
    except (ValueError, KeyError, IndexError, TypeError) as e:
        fail(title, tool, argv, f"printed no usable JSON ({e})", p.stderr, out)
    if err:
        fail(title, tool, argv, f"reported job error {err}", p.stderr, out)
    return d, int(rss)


def extract(fn, d, title, tool, argv):
    try:
        v = fn(d)
        return float(v)
    except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError) as e:
        fail(title, tool, argv, f"JSON has no usable value for {fn.__name__} ({type(e).__name__}: {e})",
             stdout=json.dumps(d, indent=1))


def p99_sync(d):
    if "profiles" in d:  # `iogauge check --format json`: the run's report is inside
        d = d["profiles"][0]["report"]
    return d["jobs"][0]["sync"]["lat_ns"]["percentile"]["99.000000"]


def read_iops(d):
    return d["jobs"][0]["read"]["iops"]


def read_mib_s(d):
    return d["jobs"][0]["read"]["bw_bytes"] / 2**20


def disk_util(d):
    # The first device's util, %: both tools report the device holding the files.
    return d["disk_util"][0]["util"]


def write_iops(d):
    return d["jobs"][0]["write"]["iops"]


def cpu_us_per_io(d):
    """Microseconds of CPU (user + system) per completed I/O, reads and writes together."""
    j = d["jobs"][0]
    ios = j["read"]["total_ios"] + j["write"]["total_ios"]
    if ios <= 0:
        raise ValueError("no I/O completed")
    return (j["usr_cpu"] + j["sys_cpu"]) / 100 * j["job_runtime"] * 1000 / ios


def run(title, args, rows, cpu=False, iogauge=None, spread=False):
    """One fio/iogauge invocation pair; rows = [(row name, metric, better, unit)] read from it.
    `iogauge` replaces `iogauge fio ARGS --output-format=json` with another iogauge command line.
    `spread`: also print each tool's range and the per-round ratio (for noisy rows)."""
    return {"title": title, "args": args, "rows": rows, "cpu": cpu, "iogauge": iogauge,
            "spread": spread}


def build_runs(row_set, work, pc_file):
    """Runs for the chosen set, plus the scratch dirs emptied after every invocation."""
    runs, scratch = [], []
    timed = ["--time_based", f"--runtime={SECS}"]
    if row_set in ("sync", "all"):
        etcd_dir = os.path.join(work, "etcd")
        os.mkdir(etcd_dir)
        scratch.append(etcd_dir)
        for name, better, args, metric, unit in [
            ("etcd recipe (IBM): p99 sync latency", "lower",
             ["--rw=write", "--ioengine=sync", "--fdatasync=1", f"--directory={etcd_dir}",
              "--size=22m", "--bs=2300", "--name=mytest"], p99_sync, "ns"),
            ("ioengine=null 4 KiB: read IOPS", "higher",
             ["--name=null", "--ioengine=null", "--rw=read", "--bs=4k", "--size=1g"] + timed,
             read_iops, "IOPS"),
            (PSYNC_PC, "higher",
             ["--name=pc", f"--filename={pc_file}", "--rw=randread", "--ioengine=psync",
              "--bs=4k"] + PAGE_CACHE + timed, read_iops, "IOPS"),
        ]:
            runs.append(run(name, args, [(name, metric, better, unit)]))
        # `iogauge check etcd --full` runs the same recipe to its end (a sequential check stops
        # once decided); compare it with fio's run of the recipe.
        name = "iogauge check etcd vs fio's etcd recipe: p99 sync latency"
        runs.append(run(name,
                        ["--rw=write", "--ioengine=sync", "--fdatasync=1",
                         f"--directory={etcd_dir}", "--size=22m", "--bs=2300", "--name=mytest"],
                        [(name, p99_sync, "lower", "ns")],
                        iogauge=["check", "etcd", "--full", "--dir", etcd_dir, "--format", "json"]))
    if row_set in ("sync", "fresh", "all"):
        # What a first read of just-written data costs, layout included in the recipe: each tool
        # lays out its own file (fio's layout: fallocate, bs-sized writes, fsync, cache drop),
        # drops the cache on open and hints the pattern, all by default. The scratch directory
        # is emptied after every run, so every run starts from a fresh file.
        fresh_dir = os.path.join(work, "fresh")
        os.mkdir(fresh_dir)
        scratch.append(fresh_dir)
        for rw, what in (("read", "seq"), ("randread", "random")):
            name = (f"buffered {what} read, one pass over a fresh file (psync 4 KiB, 128 MiB, "
                    f"own layout): read MiB/s")
            runs.append(run(name,
                            ["--name=fresh", f"--directory={fresh_dir}", f"--rw={rw}",
                             "--ioengine=psync", "--bs=4k", "--size=128m"],
                            [(name, read_mib_s, "higher", "MiB/s")], spread=True))
    if row_set in ("buffered", "all"):
        # fio's defaults (cache dropped on open and at every new pass, fadvise hint by pattern),
        # each tool laying out its own file: what a buffered read of the disk measures.
        bdir = os.path.join(work, "buffered")
        os.mkdir(bdir)
        scratch.append(bdir)
        for name, args in [
            ("buffered randread 32 MiB, time-based 2 s (psync 4 KiB): read IOPS",
             ["--rw=randread", "--size=32m", "--time_based", "--runtime=2"]),
            ("buffered randread 128 MiB, one pass (psync 4 KiB): read IOPS",
             ["--rw=randread", "--size=128m"]),
            ("buffered seq read 32 MiB, time-based 2 s (psync 4 KiB): read IOPS",
             ["--rw=read", "--size=32m", "--time_based", "--runtime=2"]),
        ]:
            runs.append(run(name, ["--name=buf", f"--directory={bdir}", "--ioengine=psync",
                                   "--bs=4k"] + args,
                            [(name, read_iops, "higher", "IOPS")], spread=True))
        for secs in (1, 4):
            name = f"disk util, O_DIRECT psync 4 KiB randread 32 MiB, {secs} s: util %"
            runs.append(run(name, ["--name=util", f"--directory={bdir}", "--ioengine=psync",
                                   "--rw=randread", "--bs=4k", "--direct=1", "--size=32m",
                                   "--time_based", f"--runtime={secs}"],
                            [(name, disk_util, "closer", "%")], spread=True))
    if row_set in ("async", "all"):
        for engine in ("io_uring", "libaio"):
            for depth in (1, 16, 64):
                name = (f"{engine} 4 KiB randread, page cache (invalidate=0, fadvise_hint=0), "
                        f"qd{depth}: read IOPS")
                runs.append(run(name,
                                ["--name=pc", f"--filename={pc_file}", "--rw=randread",
                                 f"--ioengine={engine}", f"--iodepth={depth}", "--bs=4k"]
                                + PAGE_CACHE + timed,
                                [(name, read_iops, "higher", "IOPS")], cpu=True))
        dw_dir = os.path.join(work, "direct")
        os.mkdir(dw_dir)
        scratch.append(dw_dir)
        for engine in ("io_uring", "libaio"):
            name = f"{engine} 4 KiB randwrite, direct, qd16: write IOPS"
            runs.append(run(name,
                            ["--name=dw", f"--directory={dw_dir}", "--size=256m", "--rw=randwrite",
                             f"--ioengine={engine}", "--iodepth=16", "--bs=4k", "--direct=1"]
                            + timed,
                            [(name, write_iops, "higher", "IOPS")], cpu=True))
        gl_dir = os.path.join(work, "gitlab")
        os.mkdir(gl_dir)
        scratch.append(gl_dir)
        gl = "GitLab recipe (GitLab docs), libaio randrw qd64"
        runs.append(run(gl,
                        ["--randrepeat=1", "--ioengine=libaio", "--direct=1", "--gtod_reduce=1",
                         "--name=test", "--bs=4k", "--iodepth=64", "--readwrite=randrw",
                         "--rwmixread=75", "--size=256m",
                         f"--filename={os.path.join(gl_dir, 'testfile')}"] + timed,
                        [(gl + ": read IOPS", read_iops, "higher", "IOPS"),
                         (gl + ": write IOPS", write_iops, "higher", "IOPS")], cpu=True))
    return runs, scratch


def bench(rounds, row_set, work):
    pc_file = os.path.join(work, "pagecache.dat")
    with open(pc_file, "wb") as f:
        for _ in range(256):
            f.write(os.urandom(1 << 20))
    floor_bin = None
    if row_set in ("sync", "all"):
        floor_bin = os.path.join(work, "pread_loop")
        subprocess.run(["gcc", "-O2", "-pthread", "-o", floor_bin,
                        os.path.join(ROOT, "bench", "pread_loop.c")], check=True)
    runs, scratch = build_runs(row_set, work, pc_file)
    tools = ("fio", "iogauge")
    results = {name: {t: [] for t in tools} for r in runs for name, *_ in r["rows"]}
    rss = {r["title"]: {t: [] for t in tools} for r in runs}
    cpu = {r["title"]: {t: [] for t in tools} for r in runs}
    floor, floor_threaded, floor_perm, pc_norandommap = [], [], [], []
    subprocess.run(["cat", pc_file], stdout=subprocess.DEVNULL, check=True)  # warm the cache
    for rnd in range(rounds):
        for r in runs:
            order = list(tools) if rnd % 2 == 0 else list(reversed(tools))
            for tool in order:
                if tool == "iogauge" and r["iogauge"]:
                    cmd = [IOGAUGE] + r["iogauge"]
                else:
                    cmd = (FIO if tool == "fio" else [IOGAUGE, "fio"]) + r["args"] + \
                          ["--output-format=json"]
                d, kib = measured(cmd, r["title"], tool)
                for name, metric, _, _ in r["rows"]:
                    results[name][tool].append(extract(metric, d, name, tool, cmd))
                if r["cpu"]:
                    cpu[r["title"]][tool].append(extract(cpu_us_per_io, d, r["title"], tool, cmd))
                rss[r["title"]][tool].append(kib)
                # fio leaves its files; iogauge removes its own. Same starting state for both.
                for dirname in scratch:
                    for f in os.listdir(dirname):
                        os.unlink(os.path.join(dirname, f))
        if floor_bin:
            out = subprocess.run([floor_bin, pc_file, SECS], stdout=subprocess.PIPE, text=True,
                                 check=True).stdout
            floor.append(float(out))
            out = subprocess.run([floor_bin, pc_file, SECS, "threaded"], stdout=subprocess.PIPE,
                                 text=True, check=True).stdout
            floor_threaded.append(float(out))
            # The loop draws offsets with replacement; iogauge's default (fio's) is a random
            # map, a permutation per pass, which makes the kernel's copies dearer here. Compared
            # like with like both ways: the loop over the map's permutation, and iogauge with
            # norandommap.
            out = subprocess.run([floor_bin, pc_file, SECS, "perm"], stdout=subprocess.PIPE,
                                 text=True, check=True).stdout
            floor_perm.append(float(out))
            pc_run = next(r for r in runs if r["title"] == PSYNC_PC)
            cmd = [IOGAUGE, "fio"] + pc_run["args"] + ["--norandommap", "--output-format=json"]
            d, _ = measured(cmd, PSYNC_PC, "iogauge")
            pc_norandommap.append(extract(read_iops, d, PSYNC_PC, "iogauge", cmd))
        print(f"round {rnd + 1}/{rounds} done", file=sys.stderr)

    med = statistics.median
    fio_version = subprocess.run(FIO + ["--version"], stdout=subprocess.PIPE,
                                 text=True).stdout.strip()
    print(f"iogauge vs fio {fio_version}, {rounds} rounds, set {row_set}, "
          f"BENCH_SECONDS={SECS}, medians; ratio = iogauge / fio; CPU in us per I/O")
    w = max([len("iogauge psync page cache, norandommap (the loop offsets)")] +
            [len(name) for r in runs for name, *_ in r["rows"]])
    print(f"{'workload':{w}} {'fio':>12} {'iogauge':>12} {'ratio':>7} {'fio RSS':>10} "
          f"{'iog RSS':>10} {'fio CPU':>8} {'iog CPU':>8}")
    for r in runs:
        t = r["title"]
        if r["cpu"]:
            cpu_cols = f" {med(cpu[t]['fio']):8.2f} {med(cpu[t]['iogauge']):8.2f}"
        else:
            cpu_cols = f" {'':8} {'':8}"
        for name, _, better, unit in r["rows"]:
            f, g = med(results[name]["fio"]), med(results[name]["iogauge"])
            ratio = f"{g / f:7.3f}" if f else f"{'n/a':>7}"
            print(f"{name:{w}} {f:12.0f} {g:12.0f} {ratio} "
                  f"{med(rss[t]['fio']):7.0f}KiB {med(rss[t]['iogauge']):7.0f}KiB{cpu_cols}"
                  f"  ({unit}, {better} is better)")
    for r in runs:
        if not r["spread"]:
            continue
        for name, *_ in r["rows"]:
            f, g = results[name]["fio"], results[name]["iogauge"]
            paired = sorted(b / a for a, b in zip(f, g) if a)
            q = lambda v, k: v[min(len(v) - 1, (k * len(v)) // 4)]
            print(f"  {name}: fio {min(f):.0f}..{max(f):.0f}, iogauge {min(g):.0f}..{max(g):.0f}; "
                  f"per-round ratio median {med(paired):.2f}, quartiles {q(paired, 1):.2f}.."
                  f"{q(paired, 3):.2f}")
    if floor:
        pc = med(results[PSYNC_PC]["iogauge"])
        print(f"{'bare pread loop (C), same file':{w}} {med(floor):12.0f} "
              f"{'':12} {pc / med(floor):7.3f}  (iogauge psync / bare loop)")
        print(f"{'bare pread loop (C), one idle thread beside it':{w}} {med(floor_threaded):12.0f} "
              f"{'':12} {pc / med(floor_threaded):7.3f}  (iogauge psync / threaded bare loop)")
        print(f"{'bare pread loop (C), random-map permutation':{w}} {med(floor_perm):12.0f} "
              f"{'':12} {pc / med(floor_perm):7.3f}  (iogauge psync / permutation loop)")
        nm = med(pc_norandommap)
        print(f"{'iogauge psync page cache, norandommap (the loop offsets)':{w}} {'':12} "
              f"{nm:12.0f} {nm / med(floor):7.3f}  (iogauge psync norandommap / bare loop)")


def main():
    rounds, row_set = parse_args(sys.argv[1:])
    if not shutil.which("fio"):
        sys.exit("fio is not installed (apt-get install -y fio)")
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix="iogauge-bench-", dir=os.environ.get("BENCH_DIR", ROOT))
    try:
        bench(rounds, row_set, work)
    except BenchError as e:
        sys.exit(str(e))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
