#!/usr/bin/env python3
"""Independent reader for the text-metrics samples: rewrites expected/<job>.json.

Python 3 standard library only (csv, json, math, os, io, sys).  It does not share code
with the C++ reader; the rules it follows are written out in README.md
("How expected/*.json is read").

    python3 read_expected.py            rewrite expected/*.json for every job in jobs/
    python3 read_expected.py --check    compare instead of writing; exit 1 on a difference
    python3 read_expected.py --table    also print a summary table (jobs, runs, series, ...)
"""
import csv
import io
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
JOBS = os.path.join(HERE, "jobs")
EXPECTED = os.path.join(HERE, "expected")
READER = "read_expected.py (Python csv/json)"

CSV_STEP_KEYS = ["step", "global_step", "_step", "iteration", "iter", "time/total_timesteps", "epoch"]
CSV_ABS_TIME = ["wall_time", "timestamp", "_timestamp"]
CSV_ELAPSED_TIME = ["time/time_elapsed", "_runtime", "time", "elapsed"]
JSONL_STEP_KEYS = ["step", "global_step", "_step", "iteration", "iter", "epoch"]
JSONL_ABS_TIME = ["wall_time", "timestamp", "_timestamp"]
JSONL_ELAPSED_TIME = ["_runtime", "elapsed"]


# ----------------------------------------------------------------------------- files

def classify(rel):
    base = rel.rsplit("/", 1)[-1]
    if base == "trainer_state.json":
        return "trainer_state"
    if base.endswith(".csv"):
        return "csv"
    if base.endswith(".jsonl") or base == "scalars.json" or base.endswith(".log.json"):
        return "jsonl"
    return None


def is_checkpoint_dir(name):
    return name.startswith("checkpoint-") and name[len("checkpoint-"):].isdigit() \
        and all("0" <= c <= "9" for c in name[len("checkpoint-"):])


def trainer_state_run(rel):
    """(run name, checkpoint number or None for a file outside checkpoint-N)."""
    parts = rel.split("/")
    if len(parts) >= 2 and is_checkpoint_dir(parts[-2]):
        return "/".join(parts[:-2] + parts[-1:]), int(parts[-2][len("checkpoint-"):])
    return rel, None


def list_files(job_dir):
    out = []
    for root, dirs, files in os.walk(job_dir):
        dirs.sort()
        for f in sorted(files):
            full = os.path.join(root, f)
            out.append(os.path.relpath(full, job_dir).replace(os.sep, "/"))
    return sorted(out)


# ----------------------------------------------------------------------------- numbers

def csv_number(cell):
    """A stripped CSV cell as a float, or None when it is not a number."""
    if cell == "" or "_" in cell:
        return None
    try:
        return float(cell)
    except ValueError:
        return None


def integral(v):
    """v (float or int) as an int step, or None when it is not a finite integral value."""
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and math.isfinite(v) and v == int(v):
        return int(v)
    return None


def json_number(v):
    """A JSON value as a float when it is a number (int or float, not bool)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v)


def byte_offset(text, char_offset):
    return len(text[:char_offset].encode("utf-8"))


class Tags:
    def __init__(self):
        self.t = {}

    def tag(self, name):
        if name not in self.t:
            self.t[name] = {"points": [], "not_numbers": 0, "repeated_steps": 0}
        return self.t[name]

    def out(self):
        res = {}
        for name, d in self.t.items():
            pts = d["points"]
            if not pts:
                continue
            res[name] = {"count": len(pts), "first_step": pts[0][0], "last_step": pts[-1][0],
                         "not_numbers": d["not_numbers"], "repeated_steps": d["repeated_steps"],
                         "points": pts}
        return res


def new_run(rel, kind):
    return {"file": rel, "kind": kind, "step_key": None, "time_key": None, "time_kind": None,
            "rows": 0, "rows_without_step": 0, "bad_lines": 0, "cut_short_tail": None}


# ----------------------------------------------------------------------------- CSV

class _Lines:
    """Feeds csv.reader one physical line at a time and remembers where each began."""

    def __init__(self, text):
        self.buf = io.StringIO(text, newline="")
        self.pos = 0
        self.starts = []

    def __iter__(self):
        return self

    def __next__(self):
        line = self.buf.readline()
        if not line:
            raise StopIteration
        self.starts.append(self.pos)
        self.pos += len(line)
        return line


def csv_records(text):
    """[(char offset of the record, cells, ends with a newline)] in file order."""
    feed = _Lines(text)
    reader = csv.reader(feed)
    out, used = [], 0
    for cells in reader:
        start = feed.starts[used]
        used = len(feed.starts)
        end = feed.pos
        out.append((start, cells, end > 0 and text[end - 1] in "\r\n"))
    return out


def first_in(names_lower, wanted):
    for w in wanted:
        if w in names_lower:
            return names_lower.index(w)
    return None


def read_csv(rel, text):
    """(run or None, why-ignored or None)."""
    recs = [r for r in csv_records(text) if len(r[1]) > 0]       # a blank line is no record
    if not recs:
        return None, "empty file: no header"
    header = [c.strip() for c in recs[0][1]]
    lower = [h.lower() for h in header]
    step_idx = first_in(lower, CSV_STEP_KEYS)
    if step_idx is None:
        return None, "no step column (none of %s in the header)" % ", ".join(CSV_STEP_KEYS)
    time_idx, time_kind = first_in(lower, CSV_ABS_TIME), "absolute"
    if time_idx is None:
        time_idx, time_kind = first_in(lower, CSV_ELAPSED_TIME), "elapsed"
    if time_idx is None:
        time_kind = None
    run = new_run(rel, "csv")
    run["step_key"] = header[step_idx]
    run["time_key"] = header[time_idx] if time_idx is not None else None
    run["time_kind"] = time_kind
    tag_cols = [(i, h) for i, h in enumerate(header) if i not in (step_idx, time_idx) and h != ""]
    tags = Tags()
    data = recs[1:]
    for n, (start, cells, terminated) in enumerate(data):
        if n == len(data) - 1 and not terminated and len(cells) < len(header):
            run["cut_short_tail"] = {"offset": byte_offset(text, start)}
            break
        cells = [c.strip() for c in cells] + [""] * (len(header) - len(cells))
        run["rows"] += 1
        step = integral(csv_number(cells[step_idx]))
        if step is None:
            run["rows_without_step"] += 1
            continue
        t = csv_number(cells[time_idx]) if time_idx is not None else None
        for i, name in tag_cols:
            cell = cells[i]
            if cell == "":
                continue
            v = csv_number(cell)
            if v is None:
                tags.tag(name)["not_numbers"] += 1
            else:
                tags.tag(name)["points"].append([step, t, v])
    run["tags"] = tags.out()
    return run, None


# ----------------------------------------------------------------------------- JSON lines

def read_jsonl(rel, text):
    run = new_run(rel, "jsonl")
    tags = Tags()
    seen_iter = False
    pieces = text.split("\n")
    pos = 0
    for n, line in enumerate(pieces):
        start = pos
        pos += len(line) + 1
        unterminated = n == len(pieces) - 1
        if line.strip() == "":
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            if unterminated:
                run["cut_short_tail"] = {"offset": byte_offset(text, start)}
            else:
                run["bad_lines"] += 1
            continue
        if not isinstance(obj, dict):
            run["bad_lines"] += 1
            continue
        run["rows"] += 1
        step_key = next((k for k in JSONL_STEP_KEYS if k in obj), None)
        step = integral(obj[step_key]) if step_key is not None else None
        if step is None:
            run["rows_without_step"] += 1
            continue
        if run["step_key"] is None:
            run["step_key"] = step_key
        time_key, time_kind = next((k for k in JSONL_ABS_TIME if k in obj), None), "absolute"
        if time_key is None:
            time_key, time_kind = next((k for k in JSONL_ELAPSED_TIME if k in obj), None), "elapsed"
        t = json_number(obj[time_key]) if time_key is not None else None
        if time_key is not None and run["time_key"] is None:
            run["time_key"], run["time_kind"] = time_key, time_kind
        # OpenMMLab: once a line has shown "iter" (a training line), a line without it is a
        # validation line, and its series are named "val/<key>".
        seen_iter = seen_iter or "iter" in obj
        prefix = "val/" if seen_iter and "iter" not in obj else ""
        for k, v in obj.items():
            if k in (step_key, time_key):
                continue
            x = json_number(v)
            if x is not None:
                tags.tag(prefix + k)["points"].append([step, t, x])
    run["tags"] = tags.out()
    return run


# ----------------------------------------------------------------------------- trainer_state.json

def read_trainer_state(rel, text):
    state = json.loads(text)
    run = new_run(rel, "trainer_state")
    run["step_key"] = "step"
    tags = Tags()
    last = {}
    history = state.get("log_history") if isinstance(state, dict) else None
    for entry in history or []:
        run["rows"] += 1
        step = integral(entry.get("step")) if isinstance(entry, dict) else None
        if step is None:
            run["rows_without_step"] += 1
            continue
        for k, v in entry.items():
            if k == "step":
                continue
            x = json_number(v)
            if x is None:
                continue
            if k in last and step <= last[k]:
                tags.tag(k)["repeated_steps"] += 1
                continue
            last[k] = step
            tags.tag(k)["points"].append([step, None, x])
    run["tags"] = tags.out()
    return run


# ----------------------------------------------------------------------------- a job

def read_job(name):
    job_dir = os.path.join(JOBS, name)
    result = {"name": name, "reader": READER, "ignored": [], "runs": {}}
    ts_runs = {}
    for rel in list_files(job_dir):
        kind = classify(rel)
        if kind is None:
            continue
        if kind == "trainer_state":
            run_name, ckpt = trainer_state_run(rel)
            ts_runs.setdefault(run_name, []).append((ckpt, rel))
            continue
        text = open(os.path.join(job_dir, rel), "rb").read().decode("utf-8")
        if kind == "csv":
            run, why = read_csv(rel, text)
            if run is None:
                result["ignored"].append({"file": rel, "why": why})
                continue
        else:
            run = read_jsonl(rel, text)
        result["runs"][rel] = run
    for run_name, files in ts_runs.items():
        # newest file: the tests give every file the same modification time, so the
        # tie-break decides: the file outside checkpoint-N first, else the highest N
        files.sort(key=lambda f: (f[0] is None, f[0] if f[0] is not None else -1), reverse=True)
        rel = files[0][1]
        text = open(os.path.join(job_dir, rel), "rb").read().decode("utf-8")
        try:
            run = read_trainer_state(rel, text)
        except ValueError:
            result["ignored"].append({"file": rel, "why": "trainer_state.json does not parse as JSON"})
            continue
        result["runs"][run_name] = run
    return result


# ----------------------------------------------------------------------------- output

def num(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if math.isnan(v):
        return '"NaN"'
    if math.isinf(v):
        return '"Infinity"' if v > 0 else '"-Infinity"'
    return repr(v)


def render(obj, indent=0):
    pad, pad1 = "  " * indent, "  " * (indent + 1)
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = []
        for k in sorted(obj):
            v = obj[k]
            if k == "points":
                body = ",\n".join(pad1 + "  " + "[" + ", ".join(num(x) for x in p) + "]" for p in v)
                items.append(pad1 + json.dumps(k) + ": [\n" + body + "\n" + pad1 + "]" if v
                             else pad1 + json.dumps(k) + ": []")
            else:
                items.append(pad1 + json.dumps(k) + ": " + render(v, indent + 1))
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list):
        if not obj:
            return "[]"
        return "[\n" + ",\n".join(pad1 + render(x, indent + 1) for x in obj) + "\n" + pad + "]"
    if isinstance(obj, str):
        return json.dumps(obj)
    return num(obj)


def summary(name, result):
    job_dir = os.path.join(JOBS, name)
    size = sum(os.path.getsize(os.path.join(job_dir, f)) for f in list_files(job_dir))
    runs = result["runs"]
    series = sum(len(r["tags"]) for r in runs.values())
    points = sum(t["count"] for r in runs.values() for t in r["tags"].values())
    return "| %s | %d | %d | %d | %d |" % (name, size, len(runs), series, points)


def main(argv):
    check = "--check" in argv
    table = "--table" in argv
    os.makedirs(EXPECTED, exist_ok=True)
    names = sorted(d for d in os.listdir(JOBS) if os.path.isdir(os.path.join(JOBS, d)))
    bad = 0
    rows = []
    for name in names:
        result = read_job(name)
        text = render(result) + "\n"
        json.loads(text)                                   # well-formed, no bare NaN
        path = os.path.join(EXPECTED, name + ".json")
        if check:
            old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
            if old != text:
                print("differs:", path)
                bad += 1
        else:
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
        rows.append(summary(name, result))
    stale = sorted(set(f[:-5] for f in os.listdir(EXPECTED) if f.endswith(".json")) - set(names))
    for s in stale:
        print("expected file without a job:", s + ".json")
        bad += 1
    if table:
        print("| job | bytes | runs | series | points |")
        print("|---|---|---|---|---|")
        print("\n".join(rows))
    if check:
        print("%d jobs, %d differ" % (len(names), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
