#!/usr/bin/env python3
"""text_metrics_e2e: a replay of text metrics against a replay of a TensorBoard logdir, per value,
in one sitting (issue 44): a CSV log of --rows rows x 10 columns (a step and 9 series, as
Lightning writes them), a trainer_state.json of about --state-mb MB (as Hugging Face's Trainer
writes it: json.dumps(indent=2, sort_keys=True)), and TensorBoard logdirs written by
`rulestream simulate` whose series have the same roles, each replayed on one thread, with
NonFinite alone (reading) and with the default set (a tenth as many TensorBoard steps as CSV rows
by default: a 90 M-value logdir would be 4 GB).
Prints values/s and peak RSS of each, and the ratios the issue asks for: text
metrics at least as fast per value as the logdir, memory bounded by the series kept, not the
file.

  benchmarks/text_metrics_e2e.py BINARY --data DIR [--rows 10000000] [--state-mb 100]
                                 [--tb-steps ROWS/10] [--repetitions 3]
"""
import argparse
import json
import math
import os
import pathlib
import re
import subprocess
import sys
import time


def write_csv(path, rows):
    columns = ["epoch", "step", "train_loss_step", "train_loss_epoch", "val_loss", "lr",
               "grad_norm", "train_acc", "val_acc", "throughput"]
    # Values are a function of the row, so the file is the same at every run of the script.
    block = []
    for i in range(1000):
        block.append("{:.6f},{:.6f},{:.6f},{:.8f},{:.6f},{:.6f},{:.6f},{:.3f}".format(
            2.0 / (1 + i * 1e-3), 1.9 / (1 + i * 1e-3), 2.1 / (1 + i * 1e-3), 1e-4,
            1.0 + 0.1 * math.sin(i), 0.5 + i * 1e-4, 0.45 + i * 1e-4, 1000.0 + i))
    with open(path, "w") as out:
        out.write(",".join(columns) + "\n")
        chunk = []
        for row in range(rows):
            chunk.append("%d,%d,%s\n" % (row // 10000, row, block[row % 1000]))
            if len(chunk) == 100000:
                out.write("".join(chunk))
                chunk = []
        out.write("".join(chunk))


def write_trainer_state(path, megabytes):
    entries = []
    size = 0
    step = 0
    while size < megabytes * 1000000:
        step += 1
        entry = {"epoch": step / 1000.0, "grad_norm": 1.0 + 0.1 * math.sin(step),
                 "learning_rate": 5e-5 * (1 - step * 1e-7), "loss": 2.0 / (1 + step * 1e-4),
                 "step": step}
        if step % 50 == 0:
            entries.append(entry)
            entry = {"epoch": step / 1000.0, "eval_loss": 2.1 / (1 + step * 1e-4),
                     "eval_runtime": 1.5, "eval_samples_per_second": 200.0, "step": step}
        entries.append(entry)
        size += 140 if step % 50 else 290
    state = {"best_metric": None, "epoch": step / 1000.0, "global_step": step,
             "is_hyper_param_search": False, "log_history": entries, "max_steps": step,
             "train_batch_size": 8}
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as out:
        out.write(json.dumps(state, indent=2, sort_keys=True) + "\n")


# NonFinite judges every value of every series at a constant cost: the replay then measures
# reading. The default set judges losses, gradient norms and learning rates at a cost of their
# own, so its rate depends on how many of a job's series have those roles.
RULE_SETS = [("NonFinite", ["--rule", "NonFinite"]), ("the default set", [])]


def replay(binary, path, rules):
    """One replay on one thread: (seconds, values, peak RSS in MiB)."""
    started = time.monotonic()
    done = subprocess.run(["/usr/bin/time", "-f", "peak_kib=%M", binary, "replay", str(path),
                           "--threads", "1"] + rules, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if done.returncode not in (0, 1):
        sys.exit("replay of {} failed ({}): {}".format(path, done.returncode, done.stderr[-2000:]))
    values = int(re.search(r"(\d+) values;", done.stderr).group(1))
    peak = int(re.search(r"peak_kib=(\d+)", done.stderr).group(1)) / 1024.0
    return seconds, values, peak


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--data", required=True)
    parser.add_argument("--rows", type=int, default=10000000)
    parser.add_argument("--state-mb", type=int, default=100)
    parser.add_argument("--tb-steps", type=int, default=None)
    parser.add_argument("--repetitions", type=int, default=3)
    args = parser.parse_args()
    data = pathlib.Path(args.data)
    data.mkdir(parents=True, exist_ok=True)
    csv_job = data / "csv"
    state_job = data / "hf"
    tb_job = data / "tb"
    csv_file = csv_job / "lightning_logs" / "version_0" / "metrics.csv"
    state_file = state_job / "checkpoint-1" / "trainer_state.json"
    if not csv_file.exists():
        csv_file.parent.mkdir(parents=True, exist_ok=True)
        write_csv(csv_file, args.rows)
    if not state_file.exists():
        write_trainer_state(state_file, args.state_mb)
    # Logdirs whose series have the roles of the text jobs' (the default set's cost per value
    # depends on them): the simulator's train/loss, eval/loss, train/grad_norm and
    # train/learning_rate, with 5 more tags of no role beside the CSV's 9 columns, none beside
    # trainer_state.json's loss, grad_norm, learning_rate, epoch and eval_loss.
    steps = args.tb_steps or max(1, args.rows // 10)
    tb_jobs = [(tb_job, 5), (data / "tb4", 0)]
    for job, extra in tb_jobs:
        if not job.exists():
            subprocess.run([args.binary, "simulate", str(job), "--format", "tensorboard",
                            "--scenario", "healthy", "--steps", str(steps), "--extra-tags",
                            str(extra)], check=True, capture_output=True)
    jobs = [("CSV log", csv_job, csv_file), ("TensorBoard logdir", tb_job, None),
            ("trainer_state.json", state_job, state_file),
            ("TensorBoard logdir, 4 tags", data / "tb4", None)]
    against = {"CSV log": "TensorBoard logdir",
               "trainer_state.json": "TensorBoard logdir, 4 tags"}
    results = {(name, rules): [] for name, _, _ in jobs for rules, _ in RULE_SETS}
    for _ in range(args.repetitions):  # alternated, so drift hits every job alike
        for rules, rule_args in RULE_SETS:
            for name, job, _ in jobs:
                results[(name, rules)].append(replay(args.binary, job, rule_args))
    print("| job | file size | values | rules | replay, 1 thread (median of {}) | values/s "
          "| peak RSS |".format(args.repetitions))
    print("| --- | ---: | ---: | --- | ---: | ---: | ---: |")
    rate = {}
    for rules, _ in RULE_SETS:
        for name, job, file in jobs:
            runs = sorted(results[(name, rules)])
            seconds, values, _ = runs[len(runs) // 2]
            peak = max(r[2] for r in runs)
            size = file.stat().st_size if file else sum(
                p.stat().st_size for p in job.rglob("*") if p.is_file())
            rate[(name, rules)] = values / seconds
            print("| {} | {:.0f} MB | {:,} | {} | {:.2f} s | {:.2f} M | {:.0f} MiB |".format(
                name, size / 1e6, values, rules, seconds, rate[(name, rules)] / 1e6, peak))
    print()
    for rules, _ in RULE_SETS:
        for name, logdir in against.items():
            print("{}, {}: per value {:.2f}x the {}'s (target >= 1)".format(
                name, rules, rate[(name, rules)] / rate[(logdir, rules)], logdir))


if __name__ == "__main__":
    main()
