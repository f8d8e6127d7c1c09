"""Label arithmetic: windows, and the figures the notes quote, from the per-step training curves.

Everything here reads the trace the training produced (the per-step loss each optimizer step
computed, the gradient norm before clipping, the validation losses), never what a rule reports.
Indices i are 0-based optimizer steps; `off` turns them into the run's own step numbers (0 for
Lightning and plain PyTorch loops, 1 for the HF Trainer and Keras iterations).
"""
import math
import statistics

ABRUPT = ("early_divergence", "late_divergence", "transient_spike", "nonfinite")
SLOW = ("plateau", "overfit", "grad_vanishing")


def g(x):
    """4 significant digits, like the shared corpus' notes"""
    if x is None:
        return "n/a"
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return "%.4g" % x


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs) if xs else float("nan")


def median(xs):
    return statistics.median(list(xs))


def deadline(fault, onset, S, P, last):
    if fault in ABRUPT:
        d = onset + max(50, 2 * S, P)
    elif fault == "grad_explosion":
        d = onset + max(100, 2 * S, P)
    elif fault in SLOW:
        d = onset + max(200, 5 * S, 2 * P)
    else:
        raise ValueError(fault)
    return min(d, last)


def trailing_means(losses, n=50):
    """m[i] = mean of losses[i-n+1 .. i] for i >= n-1 (finite losses assumed)"""
    out = [None] * len(losses)
    s = 0.0
    for i, v in enumerate(losses):
        s += v
        if i >= n:
            s -= losses[i - n]
        if i >= n - 1:
            out[i] = s / n
    return out


def largest_bump(losses, off, n=50):
    """Largest rise of the n-step trailing mean over its running minimum so far: (ratio, low value,
    low step, high value, high step, step where it is back within 10% of the low or None)."""
    m = trailing_means(losses, n)
    best = (1.0, None, None, None, None, None)
    lo, lo_i = None, None
    for i, v in enumerate(m):
        if v is None:
            continue
        if lo is None or v < lo:
            lo, lo_i = v, i
        r = v / lo if lo > 0 else 1.0
        if r > best[0]:
            best = (r, lo, lo_i, v, i, None)
    if best[1] is not None:
        r, lo, lo_i, hi, hi_i, _ = best
        back = None
        for j in range(hi_i, len(m)):
            if m[j] <= 1.1 * lo:
                back = j
                break
        best = (r, lo, lo_i + off, hi, hi_i + off, None if back is None else back + off)
    return best


def largest_val_rise(evals, off):
    """largest rise of the validation loss from one evaluation to the next"""
    best = None
    for a, b in zip(evals[:-1], evals[1:]):
        if a["loss"] > 0 and math.isfinite(b["loss"]):
            r = b["loss"] / a["loss"]
            if best is None or r > best[0]:
                best = (r, a["loss"], a["after"] + off, b["loss"], b["after"] + off)
    return best


def healthy_notes(trace, off, unit="step", extra=""):
    L = [s["loss"] for s in trace["steps"]]
    ev = trace["evals"]
    parts = ["training loss (per step) %s over the first 10 %ss, %s over the last 50"
             % (g(mean(L[:10])), unit, g(mean(L[-50:])))]
    if ev:
        k = min(range(len(ev)), key=lambda j: ev[j]["loss"])
        parts.append("validation loss %s at %s %d, lowest %s at %s %d, %s at the end"
                     % (g(ev[0]["loss"]), unit, ev[0]["after"] + off, g(ev[k]["loss"]), unit,
                        ev[k]["after"] + off, g(ev[-1]["loss"])))
    r, lo, lo_s, hi, hi_s, back = largest_bump(L, off)
    if lo is not None and r > 1.0:
        parts.append("largest bump of the 50-%s mean training loss over its running minimum: "
                     "+%d%% (%s at %s %d to %s at %s %d), %s"
                     % (unit, round(100 * (r - 1)), g(lo), unit, lo_s, g(hi), unit, hi_s,
                        ("back within 10%% by %s %d" % (unit, back)) if back is not None
                        else "not back within 10% by the end"))
    vr = largest_val_rise(ev, off)
    if vr and vr[0] > 1.0:
        parts.append("largest rise of the validation loss between evaluations: +%d%% (%s at %s %d "
                     "to %s at %s %d)" % (round(100 * (vr[0] - 1)), g(vr[1]), unit, vr[2],
                                          g(vr[3]), unit, vr[4]))
    if extra:
        parts.append(extra)
    return "; ".join(parts)


def spike_recovery(losses, i_onset, before=50, n=20, tol=1.2):
    """level before, first index s > onset where mean(losses[s:s+n]) <= tol*level (or None)"""
    level = mean(losses[max(0, i_onset - before):i_onset])
    for s in range(i_onset + 1, len(losses) - n + 1):
        if mean(losses[s:s + n]) <= tol * level:
            return level, s
    return level, None


def first_nonfinite(xs):
    for i, v in enumerate(xs):
        if not math.isfinite(v):
            return i
    return None


def epoch_window(window, S):
    """Keras: the epoch indices whose epoch_* values (read as iteration (e+1)*S) fall in window"""
    if window is None:
        return None
    lo = -(-window[0] // S) - 1
    hi = window[1] // S - 1
    return [lo, hi]
