#!/usr/bin/env python3
"""What following a large, quiet TensorBoard logdir costs: `rulestream watch` of a logdir of
many runs (one small event file each, copied from `rulestream simulate --format tensorboard`),
with nothing written. After a warm-up, the watch's CPU time (user + system, from /proc) over a
quiet span, and how long it took to have read every run. Each binary given is measured in turn,
alternated over the repetitions, on the same logdir in the same sitting.

    benchmarks/tensorboard_idle.py --binary build-rel/rulestream [--binary OTHER] \\
        [--runs 10000] [--idle 10] [--warmup 5] [--repetitions 3] [--workdir /tmp/tb-idle]

Prints one line per run and a median per binary. Exit status 2 when a watch ends by itself or
reads fewer values than the logdir holds.
"""

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time


def cpu_seconds(pid):
    """User + system CPU time of a live process, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime, stime (fields 14, 15)


def make_logdir(binary, workdir, runs):
    """`runs` folders, each holding a copy of one small run's event file (simulate makes at
    most 4,096 runs at once)."""
    logdir = os.path.join(workdir, f"logdir-{runs}")
    if os.path.isdir(logdir) and len(os.listdir(logdir)) == runs:
        return logdir
    shutil.rmtree(logdir, ignore_errors=True)
    seed = os.path.join(workdir, "seed")
    shutil.rmtree(seed, ignore_errors=True)
    subprocess.run([binary, "simulate", seed, "--format", "tensorboard", "--scenario", "healthy",
                    "--steps", "20"], check=True, stdout=subprocess.DEVNULL)
    files = [os.path.join(root, name) for root, _, names in os.walk(seed) for name in names
             if "tfevents" in name]
    if len(files) != 1:
        raise SystemExit(f"expected one event file from simulate, found {files}")
    os.makedirs(logdir)
    for run in range(runs):
        folder = os.path.join(logdir, f"run_{run:05d}")
        os.makedirs(folder)
        shutil.copyfile(files[0], os.path.join(folder, os.path.basename(files[0])))
    return logdir


def measure(binary, logdir, warmup, idle):
    events = os.path.join(os.path.dirname(logdir), "events.jsonl")
    watch = subprocess.Popen(
        [binary, "watch", logdir, "--rule", "NonFinite", "--sink", f"file:{events}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(warmup)
    if watch.poll() is not None:
        raise RuntimeError(f"{binary}: the watch ended by itself: {watch.stderr.read()}")
    before = cpu_seconds(watch.pid)
    time.sleep(idle)
    after = cpu_seconds(watch.pid)
    watch.send_signal(signal.SIGINT)
    _, err = watch.communicate(timeout=120)
    os.remove(events) if os.path.exists(events) else None
    return after - before, before, err


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", action="append", required=True)
    parser.add_argument("--runs", type=int, default=10000)
    parser.add_argument("--idle", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--workdir", default="/tmp/tb-idle")
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    logdir = make_logdir(args.binary[0], args.workdir, args.runs)
    results = {binary: [] for binary in args.binary}
    failed = False
    for repetition in range(args.repetitions):
        for binary in args.binary:
            idle_cpu, warmup_cpu, err = measure(binary, logdir, args.warmup, args.idle)
            summary = [line for line in err.splitlines() if " runs, " in line]
            read_all = bool(summary) and f"{args.runs} runs," in summary[-1]
            failed = failed or not read_all
            results[binary].append(idle_cpu)
            print(f"{binary} #{repetition + 1}: {idle_cpu:.3f} s CPU in {args.idle:g} idle s "
                  f"(warm-up {warmup_cpu:.2f} s); {summary[-1].strip() if summary else err}",
                  flush=True)
    print()
    for binary, values in results.items():
        print(f"{binary}: median {statistics.median(values):.3f} s CPU per {args.idle:g} idle s "
              f"({args.runs} runs; {', '.join(f'{v:.3f}' for v in values)})")
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
