#!/usr/bin/env python3
"""Summarise fio-format log files (written by fio or by `iogauge fio`) and compare them with
the run's JSON output.

Usage: fio-logs.py [--json RUN.json] [--check] LOG...

For each kind of log (NAME_bw/_iops/_lat/_clat/_slat[.N].log, NAME_clat_hist[.N].log), summed
over files, it prints per direction: entries, the sum of the block-size column (bytes, for
per-I/O logs), the mean value (for histogram logs, the samples counted), the column counts.
With --json it adds the run's totals, and checks each file against its job (NAME_kind.N.log
belongs to the JSON's job N, as fio numbers threads; NAME_kind.log to all jobs, per_job_logs=0;
run without group_reporting): a per-I/O log (log_avg_msec=0: no zero block size) must have
total_ios entries per direction and, except slat, block sizes summing to io_bytes; a histogram
log counts at most total_ios; an averaged bandwidth log's mean is within a factor of 2 of the
JSON's bw. --check exits 1 on any mismatch. An empty file (fio's slat log of a synchronous
engine) has nothing to check.
Standard library only.
"""

import argparse
import json
import re
import sys
from collections import defaultdict

DIRS = {0: "read", 1: "write", 2: "trim"}
KIND_RE = re.compile(r"_(bw|iops|lat|clat|slat|clat_hist)(\.\d+)?\.log$")


def kind_of(path):
    m = KIND_RE.search(path)
    return m.group(1) if m else None


def read_log(path, kind):
    """Per direction: entries, bytes (bs column sum), value sum, per-I/O?, column counts."""
    out = defaultdict(lambda: {"entries": 0, "bytes": 0, "values": 0, "per_io": True})
    columns = set()
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            cols = [c.strip() for c in line.split(",")]
            columns.add(len(cols))
            t = int(cols[0])
            del t
            if kind == "clat_hist":
                ddir, bs = int(cols[1]), int(cols[2])
                value = sum(int(c) for c in cols[3:])
            else:
                value, ddir, bs = int(cols[1]), int(cols[2]), int(cols[3])
            d = out[DIRS.get(ddir, str(ddir))]
            d["entries"] += 1
            d["bytes"] += bs
            d["values"] += value
            if bs == 0:
                d["per_io"] = False
    return out, sorted(columns)


def json_jobs(path):
    """Per job (in the JSON's order, = fio's thread numbers): direction -> totals."""
    with open(path) as f:
        text = f.read()
    # fio may print notes before the JSON object.
    doc = json.loads(text[text.index("{"):])
    jobs = []
    for job in doc.get("jobs", []):
        t = {}
        for d in ("read", "write", "trim"):
            if d in job:
                t[d] = {k: job[d].get(k, 0) for k in ("total_ios", "io_bytes", "bw")}
        jobs.append(t)
    return jobs


def totals_for(jobs, index):
    """The job a log belongs to (NAME_kind.N.log: job N), or every job (NAME_kind.log)."""
    picked = [jobs[index - 1]] if index is not None and index <= len(jobs) else jobs
    tot = defaultdict(lambda: {"total_ios": 0, "io_bytes": 0, "bw": 0})
    for j in picked:
        for d, v in j.items():
            for k in v:
                tot[d][k] += v[k]
    return tot


def check_file(path, kind, per_dir, tot):
    """Mismatches between one log and its job's totals."""
    bad = []
    for d, s in per_dir.items():
        t = tot[d]
        if kind == "clat_hist":
            if s["values"] > t["total_ios"]:
                bad.append(f"{path} {d}: {s['values']} histogram samples > total_ios")
        elif s["per_io"]:
            if s["entries"] != t["total_ios"]:
                bad.append(f"{path} {d}: {s['entries']} entries != total_ios {t['total_ios']}")
            if kind != "slat" and s["bytes"] != t["io_bytes"]:
                bad.append(f"{path} {d}: {s['bytes']} bytes != io_bytes {t['io_bytes']}")
        elif kind == "bw" and t["bw"] > 0 and s["entries"]:
            mean = s["values"] / s["entries"]
            if not 0.5 <= mean / t["bw"] <= 2.0:
                bad.append(f"{path} {d}: mean logged {mean:.0f} KiB/s vs json bw {t['bw']}")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", help="the run's JSON output (--output-format=json)")
    ap.add_argument("--check", action="store_true", help="exit 1 on a mismatch")
    ap.add_argument("logs", nargs="+")
    a = ap.parse_args()

    jobs = json_jobs(a.json) if a.json else None
    # Sum logs of one kind over every job instance (NAME_bw.1.log, NAME_bw.2.log, ...).
    kinds = defaultdict(lambda: defaultdict(lambda: {"entries": 0, "bytes": 0, "values": 0,
                                                     "per_io": True}))
    columns = defaultdict(set)
    bad = []
    for p in a.logs:
        k = kind_of(p)
        if k is None:
            print(f"{p}: not a fio log name (NAME_bw|iops|lat|clat|slat|clat_hist[.N].log)",
                  file=sys.stderr)
            return 2
        per_dir, cols = read_log(p, k)
        columns[k].update(cols)
        if jobs is not None:
            m = KIND_RE.search(p)
            index = int(m.group(2)[1:]) if m.group(2) else None
            bad += check_file(p, k, per_dir, totals_for(jobs, index))
        for d, v in per_dir.items():
            s = kinds[k][d]
            s["entries"] += v["entries"]
            s["bytes"] += v["bytes"]
            s["values"] += v["values"]
            s["per_io"] = s["per_io"] and v["per_io"]

    tot = totals_for(jobs, None) if jobs is not None else None
    for k in sorted(kinds):
        cols = ",".join(str(c) for c in sorted(columns[k]))
        for d in sorted(kinds[k]):
            s = kinds[k][d]
            mean = s["values"] / s["entries"] if s["entries"] else 0
            mode = "histogram" if k == "clat_hist" else ("per-I/O" if s["per_io"] else "averaged")
            line = (f"{k:9} {d:5} entries={s['entries']} bytes={s['bytes']} "
                    f"mean={mean:.1f} columns={cols} {mode}")
            if tot is not None:
                t = tot[d]
                line += (f" | json total_ios={t['total_ios']} io_bytes={t['io_bytes']} "
                         f"bw={t['bw']}")
            print(line)
    for b in bad:
        print(f"MISMATCH {b}")
    return 1 if (a.check and bad) else 0


if __name__ == "__main__":
    sys.exit(main())
