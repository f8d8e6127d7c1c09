#!/usr/bin/env python3
"""Scale-out of `rulestream serve --coordinator` (issue 24): archived jobs replayed by 1, 2, 4...
instances sharing one redis-server, and the takeover when one instance is SIGKILLed mid-run.

What it does, in order:
  1. writes --jobs small smdebug jobs once (`rulestream simulate`, vanishing_gradients, each
     with its end-of-job marker: archived), under WORK/jobs;
  2. for each count N of --instances, --repeats times: a fresh redis-server (no persistence, a
     free port), N `serve --coordinator` instances on the same root, started together; the
     clock runs from just before the first is started until /api/jobs (asked of the first
     instance every 50 ms; under a coordinator any instance shows every job) says every job is
     Finished; jobs per second = jobs / that time; every job's rule statuses and firings are
     checked against what the simulator wrote (see expected_rules);
  3. the takeover: N = the largest count >= 2, the instance owning the most running jobs is
     SIGKILLed once a quarter of the jobs have finished; reported: how long until every job it
     owned is owned by another instance (Running elsewhere, or already Finished), and until
     all of them are Finished.

Scaling efficiency of N instances = (jobs/s with N) / (N * jobs/s with 1). With --pin (the
default when the machine has the cores), instance i runs on cores [i*C, (i+1)*C) (taskset; C =
--cores-per-instance, 2 by default), so that N instances have N*C cores and the efficiency is
"per added core"; without the cores, the instances share the machine and the figure says how
much a second process on the same cores brings (little, where one instance already keeps every
core busy).

Usage (from the repository root, after building build/rulestream):
  python3 benchmarks/serve_scaleout.py --instances 1,2,4 --jobs 100
Exit status: 0 measured, 1 a job ended with other statuses than its data says, 2 an error.
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

# --- the jobs --------------------------------------------------------------------------------


def write_jobs(rulestream, root, jobs, steps, fault_step):
    """Writes the jobs (one `simulate` each, two at a time); returns the seconds it took."""
    started = time.monotonic()
    pending = []
    for i in range(jobs):
        pending.append(
            subprocess.Popen(
                [rulestream, "simulate", os.path.join(root, "job-%03d" % i), "--scenario",
                 "vanishing_gradients", "--steps", str(steps), "--fault-step", str(fault_step),
                 "--seed", str(i)],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        if len(pending) >= 2:
            finish(pending.pop(0))
    for process in pending:
        finish(process)
    return time.monotonic() - started


def finish(process):
    _, err = process.communicate()
    if process.returncode != 0:
        raise RuntimeError("rulestream simulate failed: " + err.decode(errors="replace"))


def expected_rules(steps, fault_step):
    """What the rules find in a vanishing_gradients job (apps/simulator/: every gradient is
    scaled to ~1e-10 from the fault step on, and no value is ever NaN or infinite): steps
    0..steps-1 are all TRAIN and all saved, so VanishingGradient fires once at each step from
    fault_step on, and NonFinite never."""
    return {
        "VanishingGradient": ("IssuesFound", steps - fault_step),
        "NonFinite": ("NoIssuesFound", 0),
    }


# --- processes -------------------------------------------------------------------------------


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Redis:
    def __init__(self, redis_server, work):
        self.port = free_port()
        self.log = open(os.path.join(work, "redis-%d.log" % self.port), "w")
        self.process = subprocess.Popen(
            [redis_server, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no"], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("redis-server did not start on port %d" % self.port)

    def stop(self):
        self.process.terminate()
        self.process.wait()
        self.log.close()


class Serve:
    """One `serve --coordinator` instance; its stderr goes to a file (never a pipe that could
    fill while nobody reads it), from which its port is read."""

    def __init__(self, args, name, root, redis_port, work, cores):
        self.name = name
        self.log_path = os.path.join(work, "serve-%s.log" % name)
        self.log = open(self.log_path, "w")
        command = [args.rulestream, "serve", "--jobs", root, "--rule", "VanishingGradient",
                   "--rule", "NonFinite", "--coordinator", "redis://127.0.0.1:%d" % redis_port,
                   "--instance", name, "--listen", "127.0.0.1:0", "--poll-interval",
                   str(args.poll_interval), "--lease-ttl", str(args.lease_ttl),
                   "--idle-timeout", "120", "--max-running", str(args.max_running)]
        if cores is not None:
            command = ["taskset", "-c", cores] + command
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=self.log)
        self.port = None

    def wait_for_port(self, deadline):
        pattern = re.compile(r"listening on http://127\.0\.0\.1:([0-9]+)")
        while time.monotonic() < deadline:
            with open(self.log_path) as log:
                found = pattern.search(log.read())
            if found:
                self.port = int(found.group(1))
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.01)
        raise RuntimeError("serve %s did not listen; it said:\n%s" %
                           (self.name, open(self.log_path).read()))

    def jobs(self):
        with urllib.request.urlopen("http://127.0.0.1:%d/api/jobs" % self.port, timeout=5) as r:
            return json.load(r)["jobs"]

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()


def core_sets(instances, per_instance):
    """taskset lists, one per instance, or None when the machine has too few cores to give each
    instance its own."""
    available = sorted(os.sched_getaffinity(0))
    if per_instance * instances > len(available):
        return None
    return [",".join(str(c) for c in available[i * per_instance:(i + 1) * per_instance])
            for i in range(instances)]


# --- one run ---------------------------------------------------------------------------------


def check_statuses(jobs, expected):
    """Lines naming each job whose rules ended otherwise than its data says."""
    wrong = []
    for job in jobs:
        found = {r["rule_configuration"]: (r["status"], r["firings"]) for r in job["rules"]}
        if found != expected:
            wrong.append("%s: %s, expected %s" % (job["id"], found, expected))
    return wrong


def run_once(args, root, instances, pinned, work, kill_at=None):
    """Starts `instances` serve instances on a fresh Redis and waits until every job is
    Finished. Returns a dict of what it measured. kill_at: a fraction of the jobs finished at
    which the busiest instance is SIGKILLed (the takeover run)."""
    redis = Redis(args.redis_server, work)
    cores = core_sets(instances, args.cores_per_instance) if pinned else None
    servers = []
    result = {"instances": instances, "pinned": cores}
    try:
        started = time.monotonic()
        for i in range(instances):
            servers.append(Serve(args, "i%d" % i, root, redis.port, work,
                                 cores[i] if cores else None))
        for server in servers:
            server.wait_for_port(started + 60)
        result["listening_s"] = time.monotonic() - started
        asked = servers[0]
        killed = None
        orphans = set()
        owned_again_s = None
        deadline = started + args.timeout
        while True:
            if time.monotonic() > deadline:
                raise RuntimeError("not every job finished within %d s; see %s" %
                                   (args.timeout, work))
            jobs = asked.jobs()
            now = time.monotonic()
            finished = [j for j in jobs if j["state"] in ("Finished", "Error")]
            if kill_at is not None and killed is None and \
                    len(finished) >= kill_at * args.jobs:
                running = {}
                for j in jobs:
                    if j["state"] == "Running":
                        running.setdefault(j.get("instance"), set()).add(j["id"])
                if not running:
                    time.sleep(0.05)
                    continue
                victim_name = max(running, key=lambda k: len(running[k]))
                killed = next(s for s in servers if s.name == victim_name)
                killed.kill()
                killed_at = time.monotonic()
                asked = next(s for s in servers if s is not killed)
                # Its jobs are those it last said it ran: what it published before it died,
                # which the others have read within a poll (jobs end in milliseconds here,
                # so the answer read before the kill is already stale).
                time.sleep(1.5 * args.poll_interval)
                orphans = {j["id"] for j in asked.jobs()
                           if j.get("instance") == victim_name and j["state"] == "Running"}
                result["killed"] = victim_name
                result["orphans"] = len(orphans)
                continue
            if killed is not None and owned_again_s is None:
                by_id = {j["id"]: j for j in jobs}
                if all(by_id[i]["state"] in ("Finished", "Error") or
                       (by_id[i]["state"] == "Running" and
                        by_id[i].get("instance") not in (None, killed.name))
                       for i in orphans):
                    owned_again_s = now - killed_at
                    result["owned_again_s"] = owned_again_s
            if len(jobs) == args.jobs and len(finished) == args.jobs:
                result["seconds"] = now - started
                if killed is not None:
                    result["orphans_finished_s"] = now - killed_at
                break
            time.sleep(0.05)
        result["wrong"] = check_statuses(jobs, expected_rules(args.steps, args.fault_step))
        result["jobs_per_s"] = args.jobs / result["seconds"]
        result["per_instance"] = {}
        for j in jobs:
            name = j.get("instance", "?")
            result["per_instance"][name] = result["per_instance"].get(name, 0) + 1
    finally:
        for server in servers:
            server.stop()
        redis.stop()
    return result


# --- the driver ------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rulestream", default="build/rulestream")
    parser.add_argument("--redis-server", default="redis-server")
    parser.add_argument("--instances", default="1,2,4",
                        help="instance counts to measure, comma-separated (default 1,2,4)")
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--steps", type=int, default=100, help="TRAIN steps per job")
    parser.add_argument("--fault-step", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3, help="runs per instance count")
    # Two, not one: a follow on a process allowed one core evaluates nothing until the job's
    # follow ends (RulePipeline's arena is the calling thread's reserved slot and oneTBB then
    # starts no worker), so a job stalls until --idle-timeout; see RESULTS.md.
    parser.add_argument("--cores-per-instance", type=int, default=2)
    parser.add_argument("--pin", choices=["auto", "yes", "no"], default="auto",
                        help="taskset each instance to cores of its own (auto: where the "
                             "machine has them)")
    parser.add_argument("--max-running", type=int, default=8,
                        help="--max-running of each instance")
    parser.add_argument("--poll-interval", type=float, default=0.2)
    parser.add_argument("--lease-ttl", type=float, default=3)
    parser.add_argument("--no-takeover", action="store_true")
    parser.add_argument("--timeout", type=int, default=600, help="seconds a run may take")
    parser.add_argument("--work", help="folder for the jobs and logs (default: a temporary one)")
    args = parser.parse_args()
    counts = [int(n) for n in args.instances.split(",") if n]
    if not counts or min(counts) < 1 or args.jobs < 1 or not 0 < args.fault_step < args.steps:
        parser.error("--instances, --jobs, --steps and --fault-step must be positive counts "
                     "(0 < fault step < steps)")
    for tool in (args.rulestream, args.redis_server, "taskset"):
        if shutil.which(tool) is None and not os.access(tool, os.X_OK):
            print("serve_scaleout: %s not found" % tool, file=sys.stderr)
            return 2
    work = args.work or tempfile.mkdtemp(prefix="serve-scaleout-")
    root = os.path.join(work, "jobs")
    os.makedirs(root, exist_ok=True)
    cores = len(os.sched_getaffinity(0))
    print("machine: %d cores (%s), load average %s" %
          (cores, platform_cpu(), " ".join("%.2f" % x for x in os.getloadavg())))
    written_s = write_jobs(args.rulestream, root, args.jobs, args.steps, args.fault_step)
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs)
    print("jobs: %d x %d steps (vanishing_gradients, fault at %d), %.1f MB, written in %.1f s" %
          (args.jobs, args.steps, args.fault_step, size / 1e6, written_s))
    print("serve: --max-running %d --poll-interval %g --lease-ttl %g, rules VanishingGradient "
          "and NonFinite" % (args.max_running, args.poll_interval, args.lease_ttl))

    wrong = []
    rates = {}
    for n in counts:
        pinned = args.pin == "yes" or (args.pin == "auto" and
                                       core_sets(n, args.cores_per_instance) is not None)
        runs = []
        for _ in range(args.repeats):
            result = run_once(args, root, n, pinned, work)
            wrong += result["wrong"]
            runs.append(result)
        rate = statistics.median(r["jobs_per_s"] for r in runs)
        rates[n] = rate
        line = "instances %d: %.2f jobs/s median of %d (%s), cores %s, jobs per instance %s" % (
            n, rate, len(runs), ", ".join("%.2f" % r["jobs_per_s"] for r in runs),
            " | ".join(runs[0]["pinned"]) if runs[0]["pinned"] else "shared (all %d)" % cores,
            sorted(runs[-1]["per_instance"].values(), reverse=True))
        if 1 in rates and n != 1:
            line += ", speedup %.2f, efficiency %.0f%%" % (rate / rates[1],
                                                           100 * rate / (n * rates[1]))
        print(line, flush=True)
    takeover_n = max(counts)
    if not args.no_takeover and takeover_n >= 2:
        pinned = args.pin == "yes" or (args.pin == "auto" and
                                       core_sets(takeover_n, args.cores_per_instance) is not None)
        result = run_once(args, root, takeover_n, pinned, work, kill_at=0.25)
        wrong += result["wrong"]
        print("takeover (%d instances, lease TTL %g s): %s SIGKILLed with %d jobs running; "
              "all owned again after %.2f s, all finished %.2f s after the kill; whole run "
              "%.2f s (%.2f jobs/s)" %
              (takeover_n, args.lease_ttl, result["killed"], result["orphans"],
               result.get("owned_again_s", float("nan")), result["orphans_finished_s"],
               result["seconds"], result["jobs_per_s"]))
    print("load average after: %s" % " ".join("%.2f" % x for x in os.getloadavg()))
    for line in wrong:
        print("WRONG " + line)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if wrong else 0


def platform_cpu():
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (RuntimeError, OSError) as error:
        print("serve_scaleout: %s" % error, file=sys.stderr)
        sys.exit(2)
