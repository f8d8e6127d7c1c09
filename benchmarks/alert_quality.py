#!/usr/bin/env python3
"""alert_quality: how well rulestream's default rules judge labelled real training runs.

usage: python3 benchmarks/alert_quality.py [RULESTREAM_BIN] [--corpus DIR]... [-- RULE ARGS...]

Scores RULESTREAM_BIN (default build/rulestream) with the alert corpus's own scorer
(../shared/alert-corpus/score.py, the Numenta-style scoring its README describes) on each corpus
given (default: ../shared/alert-corpus, benchmarks/alert-corpus, benchmarks/alert-corpus-text,
written as text metrics: trainer_state.json, CSV logs, JSON lines, and benchmarks/alert-corpus-fresh,
runs made after the default set was tuned, both formats, scored as unseen), with no rule
named, so that each job is judged by the default set (`rulestream rules --defaults`), or with the
rule arguments after `--`. It prints the scorer's summary for each corpus, then all of them
together against issue 42's targets: per fault kind the share of runs detected within their window
(target 95%), false incidents on healthy runs (at most 1 in 20 runs), false incidents after a
transient spike recovered (none), the median delay per kind in steps and in logged values of the
series that detected it, and firings per true incident. Exit status 0: it measures.
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "alert-corpus")
ABRUPT = {"early_divergence", "late_divergence", "transient_spike", "nonfinite"}


def parse(argv):
    binary, corpora, rule_args = os.path.join(ROOT, "build", "rulestream"), [], []
    if "--" in argv:
        i = argv.index("--")
        argv, rule_args = argv[:i], argv[i + 1:]
    i = 0
    while i < len(argv):
        if argv[i] == "--corpus":
            corpora.append(argv[i + 1])
            i += 2
        else:
            binary = argv[i]
            i += 1
    return binary, corpora or [SHARED, os.path.join(HERE, "alert-corpus"),
                               os.path.join(HERE, "alert-corpus-text"),
                               os.path.join(HERE, "alert-corpus-fresh")], rule_args


def score(binary, corpus, rule_args):
    scorer = os.path.join(SHARED, "score.py")
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        p = subprocess.run([sys.executable, scorer, binary, corpus, "--json", out.name, "--quiet",
                            "--"] + rule_args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           check=False)
        print("%s:\n  %s" % (os.path.relpath(corpus, ROOT), p.stdout.decode().strip()))
        with open(out.name) as f:
            return json.load(f)["runs"]


def logged_delay(binary, corpus, run):
    """The delay of the first true firing in values of the series that fired, from the onset."""
    true = [i for i in run["incidents"] if i["class"] == "true"]
    if not true:
        return None
    first = min(true, key=lambda i: i["first"])
    series = first["series"]
    run_name, _, tag = series.rpartition(": ")
    folder = os.path.join(corpus, "runs", run["run"]) if os.path.isdir(
        os.path.join(corpus, "runs", run["run"])) else os.path.join(corpus, run["run"])
    cmd = [binary, "inspect", folder, "--tag", tag, "--json"]
    if run_name:
        cmd += ["--run", run_name]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    try:
        points = json.loads(p.stdout)["points"]
    except (ValueError, KeyError):
        return None
    label = json.load(open(os.path.join(folder, "run.json")))
    spe = label.get("steps_per_epoch") or 1
    epoch_indexed = label.get("epoch_indexed_tags")
    as_iterations = epoch_indexed and re.search(epoch_indexed, tag)
    steps = sorted({(pt["step"] + 1) * spe if as_iterations else pt["step"] for pt in points})
    return sum(1 for s in steps if run["onset"] <= s <= first["first"]) - 1


def main():
    binary, corpora, rule_args = parse(sys.argv[1:])
    print("rules: %s\n" % (" ".join(rule_args) or "the default set (no rule named)"))
    runs = []
    for corpus in corpora:
        for run in score(binary, corpus, rule_args):
            run["corpus"] = corpus
            runs.append(run)
    faults = [r for r in runs if r["fault"] != "healthy"]
    healthy = [r for r in runs if r["fault"] == "healthy"]
    print("\n%s: %d runs (%d healthy)\n" % (
        "both corpora" if len(corpora) == 2 else "the %d corpora together" % len(corpora),
        len(runs), len(healthy)))
    print("%-17s %8s %9s %14s %16s  %s" % ("fault kind", "detected", "share", "median delay",
                                           "in logged values", "runs missed"))
    for kind in sorted({r["fault"] for r in faults}):
        rs = [r for r in faults if r["fault"] == kind]
        hit = [r for r in rs if r["detected"]]
        delays = [r["delay"] for r in hit]
        logged = [d for d in (logged_delay(binary, r["corpus"], r) for r in hit) if d is not None]
        print("%-17s %4d/%-3d %8.0f%% %14s %16s  %s" % (
            kind, len(hit), len(rs), 100.0 * len(hit) / len(rs),
            statistics.median(delays) if delays else "n/a",
            statistics.median(logged) if logged else "n/a",
            ", ".join(r["run"] for r in rs if not r["detected"]) or "-"))
    false_healthy = sum(r["false_incidents"] for r in healthy)
    runs_false = [r["run"] for r in healthy if r["false_incidents"]]
    after_spike = sum(sum(1 for i in r["incidents"] if i["class"] == "false" and
                          r["window"] and i["first"] > r["window"][1])
                      for r in faults if r["fault"] == "transient_spike")
    before_onset = sum(sum(1 for i in r["incidents"] if i["class"] == "false" and
                           r["window"] and i["first"] < r["window"][0]) for r in faults)
    true_incidents = sum(r["true_incidents"] for r in runs)
    firings = sum(r["firings"] for r in runs)
    print("\nfalse incidents on healthy runs: %d, on %d of %d runs (target: at most 1 in 20)%s" % (
        false_healthy, len(runs_false), len(healthy),
        ": " + ", ".join(runs_false) if runs_false else ""))
    print("false incidents after a transient spike recovered: %d (target: 0)" % after_spike)
    print("false incidents before a fault's onset: %d" % before_onset)
    print("firings per true incident: %.2f (%d firings, %d true incidents)" % (
        firings / true_incidents if true_incidents else float("nan"), firings, true_incidents))
    by_convention = {}
    for r in runs:
        by_convention.setdefault(r["convention"], []).append(r)
    print("\nper layout: fault runs detected; false incidents on its healthy runs")
    for convention, rs in sorted(by_convention.items()):
        f = [r for r in rs if r["fault"] != "healthy"]
        h = [r for r in rs if r["fault"] == "healthy"]
        print("  %-10s %d/%d; %d on %d healthy runs" % (
            convention, sum(1 for r in f if r["detected"]), len(f),
            sum(r["false_incidents"] for r in h), len(h)))


if __name__ == "__main__":
    main()
