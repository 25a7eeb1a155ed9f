#!/usr/bin/env python3
"""Interrupt trials: send SIGINT or SIGTERM to `iogauge fio`, `iogauge check` and
`iogauge preflight` at random moments across layout, ramp, run and cleanup, and count the files
each left in the directory it measured (goal: 0) and the exit codes.

Not a test (timings depend on the machine); a correctness report. Usage:
  bench/interrupt_trials.py [TRIALS] [SEED]     (default 100 trials)
env: IOGAUGE (the binary; default target/release/iogauge, built if missing),
     TRIALS_DIR (where the measured directories go; default a temp dir on this disk)

First each command runs once uninterrupted, to time it. Then each trial picks a command and a
signal, starts the command in a fresh directory, waits a random delay drawn uniformly over
1.1 times the command's duration (so the signal lands in any phase), sends the signal, waits for the exit, and lists what is left in the measured directory.
An exit of 1 is the interrupted run; 0, 3 or 4 mean the run had finished before the signal.
Each trial prints its last stderr line, which says what the run was doing.
"""

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("IOGAUGE", os.path.join(ROOT, "target", "release", "iogauge"))

SPEC = """apiVersion: troubleshoot.sh/v1beta2
kind: HostPreflight
metadata:
  name: trial
spec:
  collectors:
    - filesystemPerformance:
        collectorName: fs
        directory: {dir}
        fileSize: 32Mi
        operationSizeBytes: 4096
        datasync: true
        runTime: "2"
  analyzers:
    - filesystemPerformance:
        collectorName: fs
        outcomes:
          - pass: {{when: "p99 < 10ms", message: ok}}
          - fail: {{message: slow}}
"""


def commands(data, work):
    """(name, argv) for one trial measuring in `data`; `work` holds inputs."""
    spec = os.path.join(work, "spec.yaml")
    with open(spec, "w") as f:
        f.write(SPEC.format(dir=data))
    return [
        ("fio", [BIN, "fio", "--name=t", f"--directory={data}", "--size=96m", "--bs=4k",
                 "--rw=randwrite", "--ioengine=psync", "--ramp_time=1", "--runtime=2",
                 "--time_based", "--numjobs=2", "--output-format=json"]),
        ("check", [BIN, "check", "etcd", "sync-iops", "small-files", "--scale", "0.05",
                   "--duration", "2", "--dir", data, "--format", "json"]),
        ("preflight", [BIN, "preflight", spec, "-o", os.path.join(work, "out"),
                       "--format", "json"]),
    ]


def main():
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else int(time.time())
    rng = random.Random(seed)
    if not os.path.exists(BIN):
        subprocess.run(["cargo", "build", "--release"], cwd=ROOT, check=True)
    base = os.environ.get("TRIALS_DIR") or tempfile.mkdtemp(prefix="iogauge-trials-", dir=ROOT)
    left_total = 0
    codes = defaultdict(Counter)
    leftovers = []
    env = dict(os.environ, IOGAUGE_NO_HISTORY="1")
    try:
        usual = {}
        for name, _ in commands("/", base):
            data = os.path.join(base, "timing-data")
            os.makedirs(data, exist_ok=True)
            argv = dict(commands(data, base))[name]
            t0 = time.monotonic()
            subprocess.run(argv, cwd=base, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env=env)
            usual[name] = time.monotonic() - t0
            shutil.rmtree(data, ignore_errors=True)
            shutil.rmtree(os.path.join(base, "out"), ignore_errors=True)
        print("uninterrupted: " + ", ".join(f"{k} {v:.2f}s" for k, v in usual.items()))
        for i in range(trials):
            data = os.path.join(base, f"data{i}")
            work = os.path.join(base, f"work{i}")
            os.makedirs(data)
            os.makedirs(work)
            name, argv = rng.choice(commands(data, work))
            sig = rng.choice([signal.SIGINT, signal.SIGTERM])
            delay = rng.uniform(0.0, 1.1 * usual[name])
            with open(os.path.join(work, "stderr"), "w+") as err:
                p = subprocess.Popen(argv, cwd=work, stdout=subprocess.DEVNULL, stderr=err,
                                     env=env)
                time.sleep(delay)
                sent = p.poll() is None
                if sent:
                    p.send_signal(sig)
                try:
                    code = p.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    p.kill()
                    code = "hung"
                err.seek(0)
                stderr = err.read()
            left = sorted(os.listdir(data))
            left_total += len(left)
            if left:
                leftovers.append((name, sig.name, round(delay, 2), left))
            key = f"{name} {sig.name}"
            codes[key][f"exit {code}" + ("" if sent else " (done first)")] += 1
            print(f"{i + 1:3d} {name:<9} {sig.name:<7} after {delay:4.2f}s: exit {code}, "
                  f"{len(left)} left, last stderr: {stderr.strip().splitlines()[-1:] or ['']}",
                  flush=True)
            shutil.rmtree(data, ignore_errors=True)
            shutil.rmtree(work, ignore_errors=True)
    finally:
        if not os.environ.get("TRIALS_DIR"):
            shutil.rmtree(base, ignore_errors=True)
    print(f"\nseed {seed}: {trials} trials, {left_total} files left behind")
    for key in sorted(codes):
        print(f"  {key:<18} " + ", ".join(f"{k}: {n}" for k, n in sorted(codes[key].items())))
    for name, sig, delay, left in leftovers:
        print(f"  LEFT by {name} after {sig} at {delay}s: {left}")
    sys.exit(1 if left_total else 0)


if __name__ == "__main__":
    main()
