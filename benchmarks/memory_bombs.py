#!/usr/bin/env python3
"""memory_bombs: does --max-memory bound the rulestream process on hostile inputs?

usage: python3 benchmarks/memory_bombs.py [RULESTREAM_BIN] [--reproducers DIR]
           [--smdebug-trial DIR] [--budgets 128,512] [--allowance-mb 64] [--timeout 120]
           [--markdown FILE] [--keep DIR]

`--max-memory MB` is a promise about the whole process: its peak resident set stays within the
budget plus a small constant (the allowance: code, allocator slack, thread stacks), whatever
the input says. Decoded tensors count: a value a record broadcasts to a large shape, a tensor
whose header claims billions of elements, a compressed file's inflated bytes. A broadcast is
therefore checked against the budget, not against a cap derived from the record's size, which
a few megabytes of padding in an unknown field can lift to gigabytes.

The script builds the hostile inputs in a temporary folder with the reproducer scripts
(../shared/reproducers by default: tbcases.py, smdebug_padded_broadcast.py, pb.py):
TensorBoard 2g-padded, 1g-tensor and gzip; smdebug padded broadcasts of 1 and of 4 tensors
(from ../shared/smdebug-samples/trials/pt-exploding); and two of its own, each inflating to
twice the largest budget: a gzip-compressed TensorBoard event file of plain scalar events (the
TensorBoard reader, like TensorBoard, reads no compressed event files: it must refuse it
cheaply), and the smdebug trial with one event file gzip-compressed and padded with zeros; and,
for each budget, the smdebug trial with four event files gzip-compressed, each inflating to 0.9
of that budget (each fits alone; two loader threads inflating at once beside the value cache do
not, unless they share one budget). It then runs RULESTREAM_BIN (default build/rulestream)

    replay CASE --rule NonFinite --max-memory BUDGET [--threads 2]   at each budget (the four
                                                                     gzip files: WeightUpdateRatio,
                                                                     which reads values, at theirs)
    inspect CASE [--max-memory BUDGET]                               at each budget, or at the
                                                                     default budget when inspect
                                                                     takes no --max-memory

one run at a time, and measures each child's peak RSS from its own resource usage (os.wait4,
ru_maxrss), so no other process counts; its floor is this script's own peak, under 20 MB,
which the --markdown header reports. It prints a markdown table: a run is within when it
finished and its peak is at most budget + allowance; one that times out or dies from a signal
is a failure row. A run that ends in an error (exit 2) is judged on its peak like any other,
but a note under the table names it: a low peak there may only mean the input was refused.
Exit status: 0 when every run is within, 1 otherwise, 2 when the inputs could not be built.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
DEFAULT_REPRODUCERS = os.path.join(SHARED, "reproducers")
DEFAULT_SMDEBUG_TRIAL = os.path.join(SHARED, "smdebug-samples", "trials", "pt-exploding")
TENSORBOARD_CASES = ("2g-padded", "1g-tensor", "gzip")  # of the logdirs tbcases.py writes
BROADCAST_COUNTS = (1, 4)  # tensors smdebug_padded_broadcast.py makes into 2 GiB broadcasts
LARGE_GZIP_METRICS = 64  # scalars per event in the large gzip case
GZIP_FILES = 4  # event files compressed in the several-gzip-files case
GZIP_FILE_SHARE = 0.9  # of the budget, what each of them inflates to


@dataclass
class Case:
    name: str
    path: str
    rule: str = "NonFinite"  # what replay runs
    budget_mb: int | None = None  # run at this budget only (None: at every budget)


@dataclass
class Run:
    case: str
    command: str  # replay or inspect
    budget_mb: int
    peak_mb: float | None  # None when the binary could not be started
    exit: str  # "0", "2", "SIGKILL", "timeout", "not started"
    failed_to_finish: bool  # a timeout, a signal, or no start: the peak says nothing good
    seconds: float
    last_stderr: str

    def within(self, allowance_mb):
        return (not self.failed_to_finish and self.peak_mb is not None
                and self.peak_mb <= self.budget_mb + allowance_mb)

    def verdict(self, allowance_mb):
        if self.failed_to_finish:
            return "FAIL (" + self.exit + ")"
        return "within" if self.within(allowance_mb) else "OVER"


# ---------------------------------------------------------------------------------------------
# Inputs


def run_reproducer(reproducers, script, *args):
    """Runs one reproducer script; a failure there means the table would be meaningless."""
    argv = [sys.executable, os.path.join(reproducers, script), *args]
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")


def tensorboard_cases(reproducers, work):
    out = os.path.join(work, "tb")
    run_reproducer(reproducers, "tbcases.py", out)
    return [Case("tb/" + name, os.path.join(out, name)) for name in TENSORBOARD_CASES]


def smdebug_cases(reproducers, trial, work):
    cases = []
    for n in BROADCAST_COUNTS:
        dst = os.path.join(work, f"smdebug-broadcast-n{n}")
        run_reproducer(reproducers, "smdebug_padded_broadcast.py", trial, dst, str(n))
        cases.append(Case(f"smdebug/padded-broadcast N={n}", dst))
    return cases


def crc32c_table():
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
        table.append(crc)
    return table


class SuffixCrc32c:
    """CRC32C of `prefix + suffix` for many short prefixes and one long, fixed suffix.

    pb.crc32c is bit-serial Python: far too slow for a gigabyte. The CRC register after a
    fixed suffix is an affine function of the register before it, so the suffix folds into
    four 256-entry tables once and each record costs only its short prefix."""

    def __init__(self, suffix):
        self.table = crc32c_table()
        after_zero = self._update(0, suffix)
        # The linear part maps register bit i to what the suffix's length of zeros makes of it.
        basis = [self._update(1 << bit, bytes(len(suffix))) for bit in range(32)]
        self.fold = [[self._combine(basis, byte << (8 * lane)) for byte in range(256)]
                     for lane in range(4)]
        self.after_zero = after_zero

    @staticmethod
    def _combine(basis, register):
        out = 0
        for bit in range(32):
            if register >> bit & 1:
                out ^= basis[bit]
        return out

    def _update(self, register, data):
        table = self.table
        for byte in data:
            register = table[(register ^ byte) & 0xFF] ^ (register >> 8)
        return register

    def crc(self, prefix):
        r = self._update(0xFFFFFFFF, prefix)
        f0, f1, f2, f3 = self.fold
        r = f0[r & 0xFF] ^ f1[r >> 8 & 0xFF] ^ f2[r >> 16 & 0xFF] ^ f3[r >> 24] ^ self.after_zero
        return r ^ 0xFFFFFFFF


def large_gzip_case(reproducers, work, inflated_mb):
    """A gzip-compressed event file of plain scalar events, inflating to `inflated_mb` MiB.

    Each event is what a job logging LARGE_GZIP_METRICS scalars per step writes (wall_time,
    step, a summary of simple_values), framed by tbcases/pb. Many scalars per event keep the
    record count, and so this pure-Python build, to seconds. Like tbcases.py's gzip case the
    file is named events.out.tfevents.1.h, not *.gz: the reader must know it by its bytes.
    The events differ only in step and wall_time, which TensorBoard writes first, so one
    SuffixCrc32c covers them all."""
    sys.path.insert(0, reproducers)
    import pb  # noqa: E402  (the reproducers' encoder: the same framing as the other cases)
    import tbcases  # noqa: E402

    values = [tbcases.scalar_value(f"metrics/m{i:02d}", 1.0 / (1 + i))
              for i in range(LARGE_GZIP_METRICS)]
    suffix = pb.ld(5, b"".join(pb.ld(1, v) for v in values))

    def prefix(step):
        return tbcases.f64(1, 1.7e9 + step) + pb.vi(2, step)

    # The split above must be exactly tbcases' event, or the records would be some other file.
    assert tbcases.event_with(values, 7) == prefix(7) + suffix
    suffix_crc = SuffixCrc32c(suffix)
    assert suffix_crc.crc(prefix(300)) == pb.crc32c(prefix(300) + suffix)

    length_crcs = {}  # a payload's length changes only with its step's varint

    def frame(step):
        head = prefix(step)
        size = len(head) + len(suffix)
        if size not in length_crcs:
            length = struct.pack("<Q", size)
            length_crcs[size] = length + struct.pack("<I", pb.mask(pb.crc32c(length)))
        return (length_crcs[size] + head + suffix
                + struct.pack("<I", pb.mask(suffix_crc.crc(head))))

    assert frame(5) == pb.record(tbcases.event_with(values, 5))
    folder = os.path.join(work, "gzip-large")
    os.makedirs(folder)
    target = inflated_mb << 20
    compressor = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # gzip framing
    with open(os.path.join(folder, "events.out.tfevents.1.h"), "wb") as out:
        written, step = 0, 0
        chunk = [tbcases.header()]
        while written < target:
            chunk.extend(frame(s) for s in range(step, step + 4096))
            step += 4096
            data = b"".join(chunk)
            written += len(data)
            out.write(compressor.compress(data))
            chunk = []
        out.write(compressor.flush())
    return Case(f"tb/gzip-large ({written >> 20} MiB inflated)", folder)


def smdebug_gzip_case(trial, work, inflated_mb):
    """The smdebug trial with its first event file gzip-compressed whole (as TensorFlow can
    write them; index offsets then count inflated bytes) and padded with zeros past its last
    record so that it inflates to `inflated_mb` MiB: the file is refused past the budget, and
    inflating up to that point must not take more than the budget either."""
    dst = os.path.join(work, "smdebug-gzip")
    shutil.copytree(trial, dst)
    events = sorted(os.path.join(folder, name)
                    for folder, _, names in os.walk(os.path.join(dst, "events"))
                    for name in names if name.endswith(".tfevents"))
    path = events[0]
    with open(path, "rb") as source:
        data = source.read()
    compressor = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(1 << 20)
    with open(path, "wb") as out:
        out.write(compressor.compress(data))
        for _ in range(inflated_mb - len(data) // (1 << 20)):
            out.write(compressor.compress(zeros))
        out.write(compressor.flush())
    return Case(f"smdebug/gzip ({inflated_mb} MiB inflated)", dst)


def smdebug_gzip_files_case(trial, work, budget_mb, files=GZIP_FILES,
                            share=GZIP_FILE_SHARE):
    """The smdebug trial with its first `files` event files gzip-compressed whole, each padded
    with zeros to inflate to `share` of `budget_mb`: each fits the budget alone, two at once do
    not. Replayed with --threads 2 and a rule that reads values (WeightUpdateRatio), two loader
    threads inflate at once, beside the value cache: what one process-wide budget must bound."""
    dst = os.path.join(work, f"smdebug-gzip-files-{budget_mb}")
    shutil.copytree(trial, dst)
    events = sorted(os.path.join(folder, name)
                    for folder, _, names in os.walk(os.path.join(dst, "events"))
                    for name in names if name.endswith(".tfevents"))
    target = int(share * (budget_mb << 20))
    zeros = bytes(1 << 20)
    for path in events[:files]:
        with open(path, "rb") as source:
            data = source.read()
        compressor = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        with open(path, "wb") as out:
            out.write(compressor.compress(data))
            left = target - len(data)
            while left > 0:
                out.write(compressor.compress(zeros[:min(left, len(zeros))]))
                left -= len(zeros)
            out.write(compressor.flush())
    return Case(f"smdebug/{files} gzip files, each {share:g} x budget inflated", dst,
                rule="WeightUpdateRatio", budget_mb=budget_mb)


def build_cases(args, work):
    cases = tensorboard_cases(args.reproducers, work)
    cases.append(large_gzip_case(args.reproducers, work, 2 * max(args.budgets)))
    cases.extend(smdebug_cases(args.reproducers, args.smdebug_trial, work))
    cases.append(smdebug_gzip_case(args.smdebug_trial, work, 2 * max(args.budgets)))
    cases.extend(smdebug_gzip_files_case(args.smdebug_trial, work, budget)
                 for budget in args.budgets)
    return cases


# ---------------------------------------------------------------------------------------------
# Runs


@dataclass
class Binary:
    path: str
    replay_threads: bool  # replay takes --threads
    inspect_budget: bool  # inspect takes --max-memory
    default_budget_mb: int  # the budget a command without --max-memory runs under


def probe_binary(path):
    """Which options the binary has: the C++ side changes under this script."""
    def help_of(command):
        return subprocess.run([path, command, "--help"], capture_output=True, text=True).stdout

    replay, inspect = help_of("replay"), help_of("inspect")
    default = re.search(r"--max-memory MB \(=(\d+)\)", replay)
    return Binary(path, "--threads" in replay, "--max-memory" in inspect,
                  int(default.group(1)) if default else 512)


def planned_runs(binary, case, budgets, threads):
    """(command, budget, argv) for each run of one case."""
    if case.budget_mb is not None:
        budgets = [case.budget_mb]
    for budget in budgets:
        argv = [binary.path, "replay", case.path, "--rule", case.rule,
                "--max-memory", str(budget)]
        if binary.replay_threads:
            argv += ["--threads", str(threads)]
        yield "replay", budget, argv
    inspect = [binary.path, "inspect", case.path]
    if case.budget_mb is not None and not binary.inspect_budget:
        return  # inspect at the default budget says nothing of a case made for one budget
    if binary.inspect_budget:
        for budget in budgets:
            yield "inspect", budget, inspect + ["--max-memory", str(budget)]
    else:
        yield "inspect", binary.default_budget_mb, inspect


def measure(argv, timeout):
    """Runs argv alone; returns (peak RSS MiB, exit text, finished, seconds, last stderr line).

    The peak is the child's own ru_maxrss (KiB on Linux) from wait4, so no other process
    counts, and it is there even after a kill. It cannot read below this script's own peak
    RSS, which the child held before exec (main() measures that floor). stdout goes to
    /dev/null; stderr to a file, which cannot fill up and stall the child as a pipe would."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as err:
        try:
            child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        except OSError as error:  # e.g. the binary is being relinked right now
            return None, "not started", False, 0.0, str(error)
        timed_out = False
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if not timed_out and time.monotonic() - start > timeout:
                child.kill()
                timed_out = True
            time.sleep(0.02)
        seconds = time.monotonic() - start
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        err.seek(0)
        lines = err.read().decode("utf-8", "replace").strip().splitlines()
    peak_mb = usage.ru_maxrss / 1024
    if timed_out:
        return peak_mb, f"timeout {timeout:g} s", False, seconds, lines[-1] if lines else ""
    if child.returncode < 0:
        name = signal.Signals(-child.returncode).name
        return peak_mb, name, False, seconds, lines[-1] if lines else ""
    return peak_mb, str(child.returncode), True, seconds, lines[-1] if lines else ""


def run_all(binary, cases, args):
    runs = []
    for case in cases:
        for command, budget, argv in planned_runs(binary, case, args.budgets, args.threads):
            print(f"  {case.name}: {command} at {budget} MB ...", end="", file=sys.stderr,
                  flush=True)
            peak, exit_text, finished, seconds, last = measure(argv, args.timeout)
            runs.append(Run(case.name, command, budget, peak, exit_text, not finished, seconds,
                            last))
            shown = "-" if peak is None else f"{peak:.0f} MB"
            print(f" {shown}, exit {exit_text}, {seconds:.1f} s", file=sys.stderr)
    return runs


# ---------------------------------------------------------------------------------------------
# Report


def cell(text, width=110):
    """A table cell: one line, no pipes, not so long it buries the table."""
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"


def table(runs, allowance_mb):
    lines = ["| case | command | budget MB | peak RSS MB | peak/budget | exit | seconds | verdict "
             "| last stderr line |",
             "| --- | --- | ---: | ---: | ---: | --- | ---: | --- | --- |"]
    for r in runs:
        peak = "-" if r.peak_mb is None else f"{r.peak_mb:.0f}"
        ratio = "-" if r.peak_mb is None else f"{r.peak_mb / r.budget_mb:.2f}"
        lines.append(f"| {r.case} | {r.command} | {r.budget_mb} | {peak} | {ratio} | {r.exit} "
                     f"| {r.seconds:.1f} | {r.verdict(allowance_mb)} | {cell(r.last_stderr)} |")
    return "\n".join(lines)


def error_notes(runs):
    """Names the error exits: a peak is only evidence when the input was actually read."""
    errors = sorted({r.case for r in runs if r.exit == "2"})
    if not errors:
        return ""
    return ("\n\nExit 2 (an error) on: " + "; ".join(errors)
            + ". Check that the input was read before trusting a low peak there.")


def machine():
    """nproc (CPUs this process may use, as nproc counts) and the CPU model."""
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"nproc {len(os.sched_getaffinity(0))}, {model}"


def header(binary, args, floor_mb):
    built = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(os.path.getmtime(binary.path)))
    command = shlex.join([os.path.basename(sys.executable)] + sys.argv)
    inspect = ("inspect at each budget" if binary.inspect_budget else
               f"inspect takes no --max-memory: run at the default {binary.default_budget_mb} MB")
    return (f"Command: `{command}` on {machine()}; binary {binary.path} built {built}.\n"
            f"Within: finished and peak RSS <= budget + {args.allowance_mb} MB. "
            f"Replay runs `--rule NonFinite` (WeightUpdateRatio where the case says)"
            + (f" `--threads {args.threads}`" if binary.replay_threads else "") + f"; {inspect}. "
            f"Floor: /bin/true measures {floor_mb:.0f} MB here (a child's peak counts this "
            f"script's own from before exec), so smaller peaks read as {floor_mb:.0f}.")


# ---------------------------------------------------------------------------------------------


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary", nargs="?", default=os.path.join(ROOT, "build", "rulestream"),
                        help="the rulestream binary (default: build/rulestream)")
    parser.add_argument("--reproducers", default=DEFAULT_REPRODUCERS,
                        help="folder of tbcases.py, smdebug_padded_broadcast.py, pb.py")
    parser.add_argument("--smdebug-trial", default=DEFAULT_SMDEBUG_TRIAL,
                        help="source trial for smdebug_padded_broadcast.py (a PyTorch trial "
                             "with step 3 and the tensors the script names)")
    parser.add_argument("--budgets", default="128,512",
                        type=lambda s: [int(b) for b in s.split(",")], help="MB, comma-separated")
    parser.add_argument("--allowance-mb", type=int, default=64,
                        help="the documented constant over the budget a run may use")
    parser.add_argument("--threads", type=int, default=2, help="replay's --threads")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per run")
    parser.add_argument("--markdown", metavar="FILE", help="also write the table here")
    parser.add_argument("--keep", metavar="DIR",
                        help="build the inputs in DIR (must not exist) and keep them")
    args = parser.parse_args()
    args.binary = os.path.abspath(args.binary)
    args.reproducers = os.path.abspath(args.reproducers)
    return args


def main():
    args = parse_args()
    if not os.access(args.binary, os.X_OK):
        print(f"memory_bombs: {args.binary} is not an executable", file=sys.stderr)
        return 2
    binary = probe_binary(args.binary)
    work = args.keep or tempfile.mkdtemp(prefix="memory-bombs-")
    try:
        print(f"building inputs in {work}", file=sys.stderr)
        try:
            if args.keep:
                os.makedirs(work)
            # In a fresh interpreter: a child's ru_maxrss starts at this process's peak RSS
            # (vfork shares its memory until exec), so this process must stay small.
            with multiprocessing.get_context("spawn").Pool(1) as pool:
                cases = pool.apply(build_cases, (args, work))
        except (RuntimeError, OSError, AssertionError) as error:
            print(f"memory_bombs: could not build the inputs: {error}", file=sys.stderr)
            return 2
        floor_mb = measure(["/bin/true"], args.timeout)[0]
        runs = run_all(binary, cases, args)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    report = table(runs, args.allowance_mb) + error_notes(runs)
    print(report)
    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write(header(binary, args, floor_mb) + "\n\n" + report + "\n")
    return 0 if all(r.within(args.allowance_mb) for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
