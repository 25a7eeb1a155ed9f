#!/usr/bin/env python3
"""The canary over a long run (issue 28): what it costs the disk against its budget, whether its
memory stays flat, whether it leaves files, and whether its history stays bounded.

Runs `iogauge canary` (release build: IOGAUGE_BIN, default target/release/iogauge) with the
profiles, interval and budget given, samples every --sample seconds, then stops it with SIGTERM
and prints a summary. Not a test: it takes as long as --duration (default an hour).

  bench/canary_hour.py [--duration 3600] [--every 1m] [--keep 30m] [--profiles etcd sync-iops]

Printed: the canary's own busy ratio (disk busy time during its probes over wall time, from
/sys/block/DEV/stat io_ticks) against --max-busy; the disk's whole busy share over the run (an
upper bound, other processes included); RSS after warm-up and at the end (drift); files left in
the probe directory; history rows and database size over time (bounded by --keep)."""

import argparse, json, os, shutil, signal, sqlite3, subprocess, sys, tempfile, threading, time


def disk_of(path):
    st = os.stat(path)
    sys_path = os.path.realpath(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    if os.path.exists(os.path.join(sys_path, "partition")):
        sys_path = os.path.dirname(sys_path)
    return os.path.basename(sys_path)


def io_ticks(dev):
    with open(f"/sys/block/{dev}/stat") as f:
        return int(f.read().split()[9])


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=float, default=3600)
    ap.add_argument("--every", default="1m")
    ap.add_argument("--window", default="1h")
    ap.add_argument("--keep", default="30m")
    ap.add_argument("--max-busy", default="1%")
    ap.add_argument("--sample", type=float, default=30)
    ap.add_argument("--profiles", nargs="+", default=["etcd", "sync-iops"])
    ap.add_argument("--dir", default=None, help="where the probe directory goes (default: a temp dir here)")
    a = ap.parse_args()
    binary = os.environ.get("IOGAUGE_BIN", "target/release/iogauge")
    work = tempfile.mkdtemp(prefix="canary-hour-", dir=a.dir or ".")
    probes = os.path.join(work, "probes")
    os.mkdir(probes)
    db = os.path.join(work, "history.db")
    dev = disk_of(probes)
    cmd = [binary, "canary", *a.profiles, "--dir", probes, "--every", a.every, "--window", a.window,
           "--max-busy", a.max_busy, "--keep", a.keep, "--history-db", db, "--listen", "none",
           "--format", "json"]
    print("running:", " ".join(cmd), file=sys.stderr)
    env = dict(os.environ)
    env.pop("IOGAUGE_NO_HISTORY", None)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    docs, errs = [], []
    threading.Thread(target=lambda: [docs.append(json.loads(l)) for l in p.stdout], daemon=True).start()
    threading.Thread(target=lambda: [errs.append(l.rstrip()) for l in p.stderr], daemon=True).start()
    t0, ticks0 = time.time(), io_ticks(dev)
    samples = []
    while time.time() - t0 < a.duration and p.poll() is None:
        time.sleep(a.sample)
        rows = 0
        if os.path.exists(db):
            try:
                with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
                    rows = c.execute("SELECT count(*) FROM runs").fetchone()[0]
            except sqlite3.Error:
                pass
        size = sum(os.path.getsize(os.path.join(work, f)) for f in os.listdir(work) if f.startswith("history.db"))
        samples.append((time.time() - t0, rss_kib(p.pid), rows, size, len(docs)))
        print(f"{samples[-1][0]:7.0f} s  rss {samples[-1][1]} KiB  history {rows} rows {size >> 10} KiB  cycles {len(docs)}", file=sys.stderr)
    elapsed, ticks = time.time() - t0, io_ticks(dev) - ticks0
    p.send_signal(signal.SIGTERM)
    code = p.wait(timeout=120)
    time.sleep(0.5)
    left = os.listdir(probes)
    last = docs[-1] if docs else {}
    warm = [s for s in samples if s[0] >= min(300, a.duration / 4)]
    rss_start, rss_end = (warm[0][1], samples[-1][1]) if warm else (0, 0)
    print(f"canary: {' '.join(a.profiles)} every {a.every}, window {a.window}, budget {a.max_busy}, {elapsed:.0f} s, {len(docs)} cycles, exit {code}")
    b = last.get("budget", {})
    print(f"busy ratio (canary's own, last window): {b.get('busy', float('nan')):.4f} against a budget of {b.get('max_busy', float('nan')):.4f}; probe scale {b.get('scale')}, interval {last.get('interval_s')} s")
    print(f"disk {dev} busy over the whole run (everything on it): {ticks / 1000 / elapsed:.4f}")
    print(f"RSS after warm-up {rss_start} KiB, at the end {rss_end} KiB: drift {rss_end - rss_start:+d} KiB")
    rows = [s[2] for s in samples]
    print(f"history rows: max {max(rows, default=0)}, at the end {rows[-1] if rows else 0}; database {samples[-1][3] >> 10 if samples else 0} KiB at the end, max {max((s[3] for s in samples), default=0) >> 10} KiB")
    print(f"files left in the probe directory: {len(left)} {left if left else ''}")
    for prof in last.get("profiles", []):
        m = prof["metrics"][0]
        print(f"  {prof['profile']}: {prof['verdict']} {m['key']} {m['value']} (bound {m['bound']}), probes {prof['probes']}, errors {prof['errors']}")
    print("stderr:\n  " + "\n  ".join(errs[-10:]))
    shutil.rmtree(work, ignore_errors=True)
    return 0 if code == 0 and not left else 1


if __name__ == "__main__":
    sys.exit(main())
