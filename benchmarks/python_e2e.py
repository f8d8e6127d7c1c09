#!/usr/bin/env python3
"""Reading a whole job from Python through rulestream's smdebug API (issue 25).

For the small and large jobs of pipeline_e2e (2 workers; small: 2,011 tensors of at most 256
floats per worker and step; large: 57 records, 50 of them 65,536 floats, per worker and step),
each measurement runs in a fresh python3 process:

- first value: the wall time of a whole `python3` process that imports rulestream, opens the
  trial and reads one value, from before the interpreter starts to its exit (imports included);
- every value: create_trial, then every value of every tensor, step and worker as a numpy
  array, in the two orders a notebook reads them:
    by tensor:  for name in tensor_names(): for step in steps(): for w in workers(step): value()
    values():   for name in tensor_names(): for w in workers(): tensor.values(worker=w)
    by step:    for step in steps(): for name in tensor_names(step=step): ... value()
  rates are tensors (values) per second and value bytes (arr.nbytes) per second, from
  create_trial to the last value;
- every value, touched (`values-touched`, `by-step-touched`): the same, each array also summed
  once (np.add.reduce), so that its bytes are read: a zero-copy array defers reading its bytes
  (and the page faults of the mapping) to its first use.

Data: --data DIR holds small-200 and large-100 (pipeline_e2e's layout); a missing one is
generated with `pipeline_e2e --phase generate --kind small|large --steps N --workers 2`.
The page cache is warmed (one read of every event file) before the timed runs.

    /usr/bin/python3 benchmarks/python_e2e.py --build build-release --data /work/ab-data

(the interpreter the module was built for: Debian's, with its numpy).
"""
import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

JOBS = {"small": 200, "large": 100}  # steps of each job, as pipeline_e2e's A/B data


def child(args):
    """One measurement in this process (run by the driver in a fresh interpreter)."""
    start = time.perf_counter()
    import numpy as np
    from rulestream import create_trial
    imported = time.perf_counter()
    trial = create_trial(args.trial)
    opened = time.perf_counter()
    tensors = 0
    nbytes = 0
    checksum = 0.0
    order = args.phase.removesuffix("-touched")
    touch = order != args.phase

    def take(value):
        nonlocal tensors, nbytes, checksum
        tensors += 1
        nbytes += value.nbytes
        if touch:
            checksum += float(np.add.reduce(value, axis=None))

    if order == "first-value":
        name = trial.tensor_names()[0]
        tensor = trial.tensor(name)
        take(tensor.value(tensor.steps()[0]))
    elif order == "by-tensor":
        for name in trial.tensor_names():
            tensor = trial.tensor(name)
            for step in tensor.steps():
                for worker in tensor.workers(step):
                    take(tensor.value(step, worker=worker))
    elif order == "values":
        workers = trial.workers()
        for name in trial.tensor_names():
            tensor = trial.tensor(name)
            for worker in workers:
                for value in tensor.values(worker=worker).values():
                    take(value)
    elif order == "by-step":
        for step in trial.steps():
            for name in trial.tensor_names(step=step):
                tensor = trial.tensor(name)
                for worker in tensor.workers(step):
                    take(tensor.value(step, worker=worker))
    else:
        raise SystemExit("unknown phase " + args.phase)
    done = time.perf_counter()
    print("import={:.4f} open={:.4f} read={:.4f} total={:.4f} tensors={} bytes={} checksum={}"
          .format(imported - start, opened - imported, done - opened, done - imported, tensors,
                  nbytes, checksum))


def parse(line):
    return {k: float(v) for k, v in (item.split("=") for item in line.split())}


def run_child(build, phase, trial):
    env = dict(os.environ, PYTHONPATH=str(build / "python"))
    started = time.perf_counter()
    out = subprocess.run([sys.executable, __file__, "--phase", phase, "--trial", str(trial)],
                         env=env, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - started
    figures = parse(out.strip().splitlines()[-1])
    figures["wall"] = wall
    return figures


def ensure_job(data, kind, build):
    if "/" in kind:
        return pathlib.Path(kind)  # a trial of your own (smdebug-samples' pt-mlp-basic, ...)
    trial = data / "{}-{}".format(kind, JOBS[kind])
    if (trial / "training_job_end.ts").exists():
        return trial
    generator = build / "benchmarks" / "pipeline_e2e"
    print("generating", trial, "with", generator, flush=True)
    subprocess.run([str(generator), "--phase", "generate", "--kind", kind, "--out", str(trial),
                    "--steps", str(JOBS[kind]), "--workers", "2"], check=True)
    return trial


def warm(trial):
    total = 0
    for path in sorted((trial / "events").rglob("*")):
        if path.is_file():
            with open(path, "rb") as f:
                while chunk := f.read(1 << 20):
                    total += len(chunk)
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phase")
    parser.add_argument("--trial")
    parser.add_argument("--build", type=pathlib.Path, default=pathlib.Path("build-release"))
    parser.add_argument("--data", type=pathlib.Path, default=pathlib.Path("/work/ab-data"))
    parser.add_argument("--jobs", default="small,large",
                        help="small, large, or the path of a trial; comma-separated")
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--phases", default="first-value,values,by-tensor,by-step,values-touched,"
                                            "by-step-touched")
    args = parser.parse_args()
    if args.phase:
        child(args)
        return
    build = args.build.resolve()
    args.data.mkdir(parents=True, exist_ok=True)
    print("python", sys.version.split()[0], "build", build)
    for kind in args.jobs.split(","):
        trial = ensure_job(args.data, kind, build)
        print("\n{}: {} ({:.2f} GB of event files, warmed)".format(kind, trial, warm(trial) / 1e9),
              flush=True)
        for phase in args.phases.split(","):
            runs = [run_child(build, phase, trial) for _ in range(args.repetitions)]
            best = min(runs, key=lambda r: r["total"])
            if phase == "first-value":
                walls = [r["wall"] for r in runs]
                print("  first value: process wall median {:.3f} s (min {:.3f}); import {:.3f} s, "
                      "create_trial {:.3f} s, value {:.4f} s (best run)".format(
                          statistics.median(walls), min(walls), best["import"], best["open"],
                          best["read"]))
                continue
            totals = [r["total"] for r in runs]
            median = statistics.median(totals)
            print("  {:<15} median {:.3f} s (create_trial {:.3f} s + reading {:.3f} s): "
                  "{:,.0f} tensors/s, {:.2f} GB/s; {} tensors, {:.3f} GB; runs {}".format(
                      phase, median, best["open"], best["read"], best["tensors"] / median,
                      best["bytes"] / median / 1e9, int(best["tensors"]), best["bytes"] / 1e9,
                      " ".join("{:.3f}".format(t) for t in totals)), flush=True)


if __name__ == "__main__":
    main()
