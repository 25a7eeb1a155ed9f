#!/usr/bin/env python3
"""Validates `iogauge check`'s sequential verdicts (issue 27) against the full recipe.

For each profile and each disk speed (this disk unthrottled, then cgroup-v1 blkio throttles
chosen so that the profile's value lands well below, near and well above its thresholds), it
runs the sequential form (`iogauge check P`) and the full form (`iogauge check P --full`),
interleaved (the order alternates by round), several rounds, and prints:

- the confusion table: full verdict against sequential verdict, per speed and in total; a
  sequential verdict must never contradict the full one of the same round;
- the margin rule: where the full run's value lies within the margin (10 %) of a threshold,
  the sequential run must have run to full length (not stopped early);
- time to verdict per profile and for the default suite (median and worst), sequential vs full.

Run as root (the throttles are cgroup v1 blkio), from the repository:
    sudo python3 bench/sequential_validate.py --bin target/release/iogauge --rounds 3
Results go to stdout; every run's record to --out (JSON lines) as it finishes.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CGROUP = "/sys/fs/cgroup/blkio/iogauge-seqval"
MARGIN = 0.10

# Throttle levels per profile: (blkio file, values); 0 = unthrottled. Chosen on this kind of
# machine (ext4 on a virtio disk; fdatasync turns one 4 KiB write into several device writes).
LEVELS = {
    "etcd": ("blkio.throttle.write_iops_device", [0, 2000, 800, 500, 300, 100]),
    "sync-iops": ("blkio.throttle.write_iops_device", [0, 20000, 12000, 9000, 6000, 2000]),
    "gitlab": ("blkio.throttle.read_iops_device", [0, 8000, 2600, 2000, 1500, 600]),
}


def device_of(path):
    st = os.stat(path)
    return f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"


def whole_disk(majmin):
    """blkio throttles apply to whole disks: a partition's parent, else the device itself."""
    sys_dev = f"/sys/dev/block/{majmin}"
    if os.path.exists(os.path.join(sys_dev, "partition")):
        parent = os.path.realpath(os.path.join(sys_dev, ".."))
        with open(os.path.join(parent, "dev")) as f:
            return f.read().strip()
    return majmin


def set_throttle(dev, knob, value):
    os.makedirs(CGROUP, exist_ok=True)
    for k in ("blkio.throttle.write_iops_device", "blkio.throttle.read_iops_device"):
        with open(os.path.join(CGROUP, k), "w") as f:
            f.write(f"{dev} {value if k == knob else 0}\n")


def run_check(binary, profile, directory, full):
    cmd = [binary, "check", profile, "--dir", directory, "--format", "json"]
    if full:
        cmd.append("--full")
    # The process joins the throttled group before it execs iogauge.
    shell = f'echo $$ > {CGROUP}/cgroup.procs && exec "$@"'
    t0 = time.monotonic()
    p = subprocess.run(["sh", "-c", shell, "sh"] + cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError:
        sys.stderr.write(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr[-500:]}\n")
        return None
    o = doc["profiles"][0]
    seq = o.get("sequential")
    return {
        "profile": profile,
        "full": full,
        "verdict": o["verdict"],
        "values": {m["metric"]: m["value"] for m in o["metrics"]},
        "thresholds": {
            m["metric"]: [m["threshold"]] + ([m["warn_threshold"]] if m.get("warn_threshold") else [])
            for m in o["metrics"]
        },
        "stopped_early": bool(seq and seq["stopped_early"]),
        "seconds": seq["seconds"] if seq else None,
        "wall": wall,
    }


def near(rec):
    """The full run's value lies within the margin of one of its thresholds."""
    for k, v in rec["values"].items():
        for t in rec["thresholds"].get(k, []):
            if t and abs(v - t) <= MARGIN * t:
                return True
    return False


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="target/release/iogauge")
    ap.add_argument("--dir", default="/var/tmp/iogauge-seqval")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--profiles", default="etcd,sync-iops,gitlab")
    ap.add_argument("--levels", action="append", default=[],
                    help="PROFILE=N,N,... throttle levels (0 = none) instead of the defaults")
    ap.add_argument("--out", default="sequential-validate.jsonl")
    ap.add_argument("--from", dest="source", metavar="FILE",
                    help="only print the tables from an earlier run's --out file")
    a = ap.parse_args()
    levels = dict(LEVELS)
    for spec in a.levels:
        name, vals = spec.split("=", 1)
        levels[name] = (LEVELS[name][0], [int(v) for v in vals.split(",")])
    profiles = a.profiles.split(",")
    if a.source:
        report(pairs_from(a.source), profiles, levels)
        return
    if os.geteuid() != 0:
        sys.exit("sequential_validate: needs root for the blkio throttles (run with sudo)")
    os.makedirs(a.dir, exist_ok=True)
    dev = whole_disk(device_of(a.dir))
    records = []
    out = open(a.out, "w")
    try:
        for r in range(a.rounds):
            for p in profiles:
                knob, vals = levels[p]
                for lv in vals:
                    set_throttle(dev, knob, lv)
                    pair = {}
                    for full in ([False, True] if r % 2 == 0 else [True, False]):
                        rec = run_check(a.bin, p, a.dir, full)
                        if rec is None:
                            continue
                        rec.update(round=r, level=lv, knob=knob)
                        pair[full] = rec
                        out.write(json.dumps(rec) + "\n")
                        out.flush()
                    if len(pair) == 2:
                        records.append((pair[False], pair[True]))
                    sys.stderr.write(
                        f"round {r + 1}/{a.rounds} {p} level {lv or 'none'}: "
                        + ", ".join(f"{'full' if k else 'seq'} {v['verdict']} {v['wall']:.1f}s"
                                    for k, v in sorted(pair.items())) + "\n")
    finally:
        set_throttle(dev, "", 0)
        with open(os.path.join(CGROUP, "cgroup.procs")) as f:
            left = f.read().split()
        for pid in left:
            try:
                with open("/sys/fs/cgroup/blkio/cgroup.procs", "w") as g:
                    g.write(pid)
            except OSError:
                pass
        try:
            os.rmdir(CGROUP)
        except OSError:
            pass
    report(records, profiles, levels)


def pairs_from(path):
    """The (sequential, full) pairs of an --out file, by round, profile and level."""
    runs = {}
    for line in open(path):
        r = json.loads(line)
        runs.setdefault((r["round"], r["profile"], r["level"]), {})[r["full"]] = r
    return [(v[False], v[True]) for v in runs.values() if len(v) == 2]


def report(records, profiles, levels):
    print("## Sequential against full, per profile and disk speed\n")
    print("| profile | throttle | full value (median) | full verdicts | sequential verdicts | "
          "contradictions (early stops) | full-length runs that differ | stopped early | near a threshold: ran full | time seq / full (median, worst) |")
    print("|---|---|---|---|---|---:|---:|---:|---|---|")
    matrix = {}
    total_contra = total_near = near_ran_full = total_spread = 0
    for p in profiles:
        knob, vals = levels[p]
        for lv in vals:
            rows = [(s, f) for s, f in records if s["profile"] == p and s["level"] == lv]
            if not rows:
                continue
            key = next(iter(rows[0][1]["values"]), "")
            fv = med([f["values"].get(key, float("nan")) for _, f in rows])
            # A sequential run that went to full length is a second full run: a different verdict
            # there is the disk's own run-to-run spread near a threshold, not the stopping rule.
            contra = sum(1 for s, f in rows if s["stopped_early"] and s["verdict"] != f["verdict"])
            spread = sum(1 for s, f in rows if not s["stopped_early"] and s["verdict"] != f["verdict"])
            total_spread += spread
            early = sum(1 for s, _ in rows if s["stopped_early"])
            nr = [(s, f) for s, f in rows if near(f)]
            nr_full = sum(1 for s, _ in nr if not s["stopped_early"])
            total_contra += contra
            total_near += len(nr)
            near_ran_full += nr_full
            for s, f in rows:
                matrix[(f["verdict"], s["verdict"])] = matrix.get((f["verdict"], s["verdict"]), 0) + 1
            ts = [s["wall"] for s, _ in rows]
            tf = [f["wall"] for _, f in rows]
            unit = "ms" if key.endswith("p99") else "IOPS"
            shown = fv / 1e6 if unit == "ms" else fv
            print(f"| {p} | {knob.split('.')[-1].replace('_device', '')} {lv or 'none'} | "
                  f"{key} {shown:,.2f} {unit} | {' '.join(f['verdict'] for _, f in rows)} | "
                  f"{' '.join(s['verdict'] for s, _ in rows)} | {contra} | {spread} | {early}/{len(rows)} | "
                  f"{nr_full}/{len(nr)} | {med(ts):.1f} s ({max(ts):.1f}) / {med(tf):.1f} s ({max(tf):.1f}) |")
    verdicts = ["pass", "warn", "fail", "error"]
    print("\n## Confusion table (rows: full recipe, columns: sequential)\n")
    print("| full \\ sequential | " + " | ".join(verdicts) + " |")
    print("|---|" + "---:|" * len(verdicts))
    for fv in verdicts:
        print(f"| {fv} | " + " | ".join(str(matrix.get((fv, sv), 0)) for sv in verdicts) + " |")
    print(f"\ncontradictions (a sequential run that stopped early with another verdict than the full "
          f"run of its round): {total_contra} of {len(records)} pairs; "
          f"pairs where the sequential run went to full length and the two full-length runs "
          f"differed: {total_spread}; "
          f"full value within {MARGIN:.0%} of a threshold: {total_near} pairs, "
          f"of which the sequential run went to full length in {near_ran_full}")
    print("\n## Time to verdict on this disk unthrottled (the default suite's job profiles)\n")
    print("| profile | sequential median (worst) | full median (worst) |")
    print("|---|---|---|")
    suite_s, suite_f = [], []
    for p in profiles:
        rows = [(s, f) for s, f in records if s["profile"] == p and s["level"] == 0]
        if not rows:
            continue
        ts = [s["wall"] for s, _ in rows]
        tf = [f["wall"] for _, f in rows]
        suite_s.append(ts)
        suite_f.append(tf)
        print(f"| {p} | {med(ts):.1f} s ({max(ts):.1f}) | {med(tf):.1f} s ({max(tf):.1f}) |")
    if suite_s:
        s_med = sum(med(t) for t in suite_s)
        f_med = sum(med(t) for t in suite_f)
        s_max = sum(max(t) for t in suite_s)
        f_max = sum(max(t) for t in suite_f)
        print(f"| together | {s_med:.1f} s ({s_max:.1f}) | {f_med:.1f} s ({f_max:.1f}) |")


if __name__ == "__main__":
    main()
