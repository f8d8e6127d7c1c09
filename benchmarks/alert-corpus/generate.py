#!/usr/bin/python3
"""Train the runs of this alert corpus and write them as the frameworks lay out their logdirs.

usage: generate.py OUT_DIR [--only NAME[,NAME...]] [--list]

Every run is a real PyTorch training on one CPU thread from fixed seeds (tasks.py); the training
produces a trace (per-step loss, gradient norm before clipping, learning rate, validation losses);
layouts.py writes the trace the way Lightning, the HF Trainer, Keras or a plain SummaryWriter
loop would; the label (run.json) is computed here from the injection and the trace (labels.py).
"""
import json
import math
import os
import shutil
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from debian_torch import import_torch    # noqa: E402

torch = import_torch()
import labels as lb                      # noqa: E402
import layouts                           # noqa: E402
import tasks as T                        # noqa: E402
from labels import g, mean, median       # noqa: E402

torch.set_num_threads(1)

RUNS = {}


def run(name):
    def deco(fn):
        RUNS[name] = fn
        return fn
    return deco


# ================================================================= label helpers
STEPS_DESC = {
    "lightning": "Lightning's global step: 0 for the first optimizer step; epoch-end values "
                 "(val_loss, train_loss_epoch) at the epoch's last step",
    "torch": "the loop's step counter, 0 for the first batch",
}


def hf_steps(L, E):
    return ("the Trainer's global step: 1 after the first optimizer step; train/* every %d steps "
            "(loss = mean of the window), eval/* every %d steps" % (L, E))


def keras_steps(S):
    return ("iterations (1 after the first batch) for batch_* and evaluation_*_vs_iterations; the "
            "epoch index (0-based) for epoch_*: epoch e ends at iteration (e+1)*%d" % S)


OFF = {"lightning": 0, "torch": 0, "hf": 1, "keras": 1}


def write_label(out, name, conv, fault, trace, P, series, steps, notes, onset=None,
                window=None, recovers=False, n_steps=None):
    off = OFF[conv]
    S = trace["S"]
    last = (n_steps if n_steps is not None else len(trace["steps"])) - 1 + off
    if fault != "healthy" and window is None:
        window = [onset, lb.deadline(fault, onset, S, P, last)]
    if window is not None:
        window = [window[0], min(window[1], last)]
    lab = {"run": name, "convention": conv, "fault": fault, "onset_step": onset,
           "window": window, "recovers": recovers, "notes": notes, "first_step": off,
           "last_step": last, "steps_per_epoch": S, "validation_period": P,
           "epochs": trace["epochs"]}
    if conv == "keras":
        lab["epoch_indexed_tags"] = "^epoch_"
        lab["epoch_window"] = lb.epoch_window(window, S)
    lab["series"] = series
    lab["steps"] = steps
    with open(os.path.join(out, "run.json"), "w") as f:
        json.dump(lab, f, indent=1)
        f.write("\n")
    return lab


def losses(trace):
    return [s["loss"] for s in trace["steps"]]


def gnorms(trace):
    return [s["grad_norm"] for s in trace["steps"]]


def unit(conv):
    return "iteration" if conv == "keras" else "step"


def early_div_notes(trace, conv, what):
    L = losses(trace)
    fin = [(v, i) for i, v in enumerate(L) if math.isfinite(v)]
    big, bi = max(fin)
    nf = lb.first_nonfinite(L)
    u = unit(conv)
    return ("%s from the first step: training loss %s at the first %s, %s at %s %d; largest "
            "finite loss %s at %s %d; %s; mean of the last 100 %ss %s (the first %s's: %s)"
            % (what, g(L[0]), u, ", ".join(g(v) for v in L[1:5]), u, 4 + OFF[conv], g(big), u,
               bi + OFF[conv],
               "the loss stays finite" if nf is None else "first non-finite loss at %s %d"
               % (u, nf + OFF[conv]),
               u, g(mean(L[-100:])), u, g(L[0])))


def late_div_notes(trace, k, conv, what, cf=None):
    L = losses(trace)
    u = unit(conv)
    seg = L[k:]
    big = max(range(len(seg)), key=lambda j: seg[j] if math.isfinite(seg[j]) else -1)
    s = ("%s; training loss mean %s over the 50 %ss before, %s over the 50 from the onset, "
         "largest %s at %s %d, %s over the last 100 %ss"
         % (what, g(mean(L[k - 50:k])), u, g(mean(L[k:k + 50])), g(seg[big]), u,
            k + big + OFF[conv], g(mean(L[-100:])), u))
    if cf is not None:
        s += "; the same run without the injection: %s over the last 100 %ss" % (
            g(mean(losses(cf)[-100:])), u)
    return s


def spike_label(trace, k, conv, what, S, P):
    L = losses(trace)
    off = OFF[conv]
    u = unit(conv)
    level, rec = lb.spike_recovery(L, k)
    onset = k + off
    last = len(L) - 1 + off
    end = lb.deadline("transient_spike", onset, S, P, last)
    if rec is not None:
        end = max(end, rec + off + 20)
    notes = ("%s: training loss %s at the onset against a mean of %s over the 50 %ss before; %s; "
             "mean of the last 100 %ss %s"
             % (what, g(L[k]), g(level), u,
                ("recovered: the 20-%s mean is back within 1.2x of that level from %s %d"
                 % (u, u, rec + off)) if rec is not None else "never back within 1.2x",
                u, g(mean(L[-100:]))))
    return onset, [onset, min(end, last)], rec is not None, notes


def nonfinite_notes(trace, k, conv, what):
    L = losses(trace)
    G = gnorms(trace)
    u = unit(conv)
    nf = lb.first_nonfinite(L)
    assert nf == k, (nf, k)
    later = all(not math.isfinite(v) for v in L[k:])
    return ("%s: training loss %s there (mean %s over the 50 %ss before), gradient norm %s; "
            "parameters non-finite after that update: every later loss non-finite: %s"
            % (what, g(L[k]), g(mean(L[k - 50:k])), u, g(G[k]), later))


def plateau_notes(trace, k, conv, what, cf):
    L = losses(trace)
    Lc = losses(cf)
    u = unit(conv)
    return ("%s from %s %d; training loss mean %s over the 100 %ss before the 50 before, %s over "
            "the 50 before (still falling), %s over the 50 after, %s over the last 100; the same "
            "run without the injection: %s over the 50 %ss after %s %d, %s over the last 100"
            % (what, u, k + OFF[conv], g(mean(L[k - 150:k - 50])), u, g(mean(L[k - 50:k])),
               g(mean(L[k:k + 50])), g(mean(L[-100:])), g(mean(Lc[k:k + 50])), u, u,
               k + OFF[conv], g(mean(Lc[-100:]))))


def overfit_label(trace, conv, what):
    ev = trace["evals"]
    off = OFF[conv]
    u = unit(conv)
    S = trace["S"]
    j = min(range(len(ev)), key=lambda i: ev[i]["loss"])
    assert j + 1 < len(ev), "validation minimum at the last evaluation"
    onset = ev[j + 1]["after"] + off
    ups = sum(1 for a, b in zip(ev[j + 1:-1], ev[j + 2:]) if b["loss"] > a["loss"])
    above_min = sum(1 for e in ev[j + 1:] if e["loss"] > ev[j]["loss"])
    L = losses(trace)
    ep_mean = lambda i: mean(L[i - S + 1:i + 1])
    notes = ("%s; validation loss %s at the first evaluation, lowest %s at %s %d (epoch %d), then "
             "%s at %s %d (the onset: the first evaluation after the minimum) and %s at the end; "
             "%d of the %d later evaluations above the minimum, %d of %d above the one before; training "
             "loss (epoch mean) %s in the epoch of the minimum, %s in the last epoch: it keeps "
             "falling"
             % (what, g(ev[0]["loss"]), g(ev[j]["loss"]), u, ev[j]["after"] + off,
                ev[j]["after"] // S, g(ev[j + 1]["loss"]), u, onset, g(ev[-1]["loss"]),
                above_min, len(ev) - j - 1, ups, len(ev) - j - 2, g(ep_mean(ev[j]["after"])),
                g(ep_mean(len(L) - 1))))
    return onset, notes


def explosion_notes(trace, k, conv, what):
    L = losses(trace)
    G = gnorms(trace)
    u = unit(conv)
    gb, ga = G[k - 200:k], G[k + 100:k + 300]
    Lb, La = L[k - 200:k], L[k + 100:k + 300]
    mb = median(gb)
    first = next((i for i in range(k, len(G)) if G[i] > 5 * mb), None)
    return ("%s; gradient norm (before clipping) median %s (max %s) over the 200 %ss before; "
            "median %s (max %s) over %ss +100..+300; training loss median %s (max %s) before, %s "
            "(max %s) after: the median gradient norm grew %sx, the median loss %sx; first "
            "gradient norm above 5x the median before: %s %s"
            % (what, g(mb), g(max(gb)), u, g(median(ga)), g(max(ga)), u, g(median(Lb)),
               g(max(Lb)), g(median(La)), g(max(La)), "%.0f" % (median(ga) / mb),
               "%.1f" % (median(La) / median(Lb)), u,
               "n/a" if first is None else first + OFF[conv]))


def vanishing_notes(trace, conv, what, target):
    L = losses(trace)
    G = gnorms(trace)
    u = unit(conv)
    off = OFF[conv]
    g0 = G[0]
    b2 = next((i for i, v in enumerate(G) if v < 1e-2 * g0), None)
    b4 = next((i for i, v in enumerate(G) if v < 1e-4 * g0), None)
    fin = L[-1]
    within = next((i for i in range(len(L)) if all(abs(v - fin) <= 1e-3 * abs(fin)
                                                     for v in L[i:])), None)
    f = lambda i: "n/a" if i is None else "%s %d" % (u, i + off)
    return ("%s: the network is broken from the first step; gradient norm %s at the first %s, "
            "below 1e-2 of it from %s, below 1e-4 of it from %s, %s at the end; training loss %s "
            "at the first %s, %s at the end, within 0.1%% of its final value from %s (%s)"
            % (what, g(g0), u, f(b2), f(b4), g(G[-1]), g(L[0]), u, g(fin), f(within), target))


# ================================================================= framework configs
def hf_args(lr, epochs, bs, sched, warmup, log, ev, seed, optim="adamw_torch", wd=0.0):
    return {"output_dir": "out", "overwrite_output_dir": False, "do_train": True,
            "do_eval": True, "eval_strategy": "steps", "per_device_train_batch_size": bs,
            "per_device_eval_batch_size": 256, "learning_rate": lr, "weight_decay": wd,
            "max_grad_norm": 1.0, "num_train_epochs": epochs, "lr_scheduler_type": sched,
            "warmup_steps": warmup, "logging_dir": "", "logging_strategy": "steps",
            "logging_steps": log, "logging_nan_inf_filter": True, "eval_steps": ev,
            "save_strategy": "no", "seed": seed, "report_to": ["tensorboard"], "optim": optim}


HF_SERIES = {"train_loss": "train/loss", "val_loss": "eval/loss", "grad_norm": "train/grad_norm"}


def keras_series(batch_log):
    s = {"train_loss_epoch": "train: epoch_loss", "val_loss": "validation: epoch_loss",
         "val_loss_iterations": "validation: evaluation_loss_vs_iterations"}
    if batch_log:
        s["train_loss"] = "train: batch_loss"
    return s


LIGHTNING_SERIES = {"train_loss": "train_loss_step", "train_loss_epoch": "train_loss_epoch",
                    "val_loss": "val_loss"}
TORCH_SERIES = {"train_loss": "Loss/train", "val_loss": "Loss/val"}


# ================================================================= HF Trainer runs
@run("HX01-moons-mlp-adamw-warmup-cosine")
def hx01(out, name):
    LOG, EV = 10, 80
    spec = T.Spec(seed=1101, data=lambda: (*T.two_moons(2048, 0.25, 1102),
                                           *T.two_moons(512, 0.25, 1103)),
                  model=lambda: T.MLP([2, 128, 128, 2]), loss=T.ce_loss, metric=T.ce_acc,
                  opt="adamw", lr=1e-2, weight_decay=0.01, epochs=10, batch=32, clip=1.0,
                  schedule=T.warmup_cosine(64, 640), eval_at=EV)
    tr = T.fit(spec)
    layouts.write_hf(out, tr, dict(t0=1718357021.31, host="ml-worker-5", pid=41822, seed=1,
                                   step_s=0.011, logging_steps=LOG, eval_steps=EV,
                                   metric="accuracy", train_samples=2048, eval_s=0.02,
                                   args=hf_args(0.01, 10, 32, "cosine", 64, LOG, EV, 1101,
                                                wd=0.01)))
    notes = lb.healthy_notes(tr, 1, extra="linear warm-up over 64 steps to a high peak lr of "
                             "0.01, then cosine decay to 0; nothing was injected")
    return write_label(out, name, "hf", "healthy", tr, EV, HF_SERIES, hf_steps(LOG, EV), notes)


@run("HX02-adding-lstm-adamw-linear-log5")
def hx02(out, name):
    LOG, EV = 5, 150
    spec = T.Spec(seed=1201, data=lambda: (*T.adding_problem(2400, 14, 1202),
                                           *T.adding_problem(600, 14, 1203)),
                  model=lambda: T.LSTMReg(hidden=32), loss=T.mse_loss, opt="adamw", lr=3e-3,
                  epochs=10, batch=32, clip=1.0, schedule=T.linear_decay(750), eval_at=EV)
    tr = T.fit(spec)
    layouts.write_hf(out, tr, dict(t0=1721910403.88, host="gpu-node-03", pid=18230, seed=2,
                                   step_s=0.045, logging_steps=LOG, eval_steps=EV, metric=None,
                                   train_samples=2400, eval_s=0.06,
                                   args=hf_args(0.003, 10, 32, "linear", 0, LOG, EV, 1201)))
    L = losses(tr)
    notes = lb.healthy_notes(tr, 1, extra="the adding problem (sequences of 14): the loss sits near "
                             "the target's variance (1/6) for a few hundred steps (mean %s over "
                             "steps 51-300) before the LSTM finds the markers and it falls (mean %s "
                             "over the last 100); nothing was injected"
                             % (g(mean(L[50:300])), g(mean(L[-100:]))))
    return write_label(out, name, "hf", "healthy", tr, EV, HF_SERIES, hf_steps(LOG, EV), notes)


@run("HX03-sparse-logreg-adamw-wd-gap")
def hx03(out, name):
    LOG, EV = 10, 93
    spec = T.Spec(seed=1301, data=lambda: (*T.sparse_bag(3000, 1000, 20, 1302, 1300, noise=1.0),
                                           *T.sparse_bag(1000, 1000, 20, 1303, 1300, noise=1.0)),
                  model=lambda: torch.nn.Linear(1000, 1), loss=T.bce_loss, metric=T.bce_acc,
                  opt="adamw", lr=3e-3, weight_decay=0.6, epochs=8, batch=32, clip=1.0,
                  eval_at=EV)
    tr = T.fit(spec)
    layouts.write_hf(out, tr, dict(t0=1726583412.02, host="ip-172-31-9-44", pid=7731, seed=3,
                                   step_s=0.006, logging_steps=LOG, eval_steps=EV,
                                   metric="accuracy", train_samples=3000, eval_s=0.012,
                                   args=hf_args(0.003, 8, 32, "constant", 0, LOG, EV, 1301,
                                                wd=0.6)))
    L = losses(tr)
    ev = tr["evals"]
    ratios = ["%.2f" % (e["loss"] / mean(L[e["after"] - 92:e["after"] + 1])) for e in ev[2:]]
    notes = lb.healthy_notes(tr, 1, extra="logistic regression on 1000 sparse binary features, "
                             "strong weight decay: the validation loss sits above the training "
                             "loss (ratio to the mean training loss of the 93 steps before each "
                             "evaluation, from the third: %s) and keeps falling slowly; nothing "
                             "was injected" % ", ".join(ratios))
    return write_label(out, name, "hf", "healthy", tr, EV, HF_SERIES, hf_steps(LOG, EV), notes)


@run("HX04-dupes-transformer-adamw-lr-x30")
def hx04(out, name):
    LOG, EV, K, F = 10, 75, 449, 30.0

    def mk(hook):
        return T.Spec(seed=1401, data=lambda: (*T.duplicate_tokens(2400, 6, 24, 1402),
                                               *T.duplicate_tokens(600, 6, 24, 1403)),
                      model=lambda: T.TinyTransformer(24, 6), loss=T.ce_loss, metric=T.ce_acc,
                      opt="adamw", lr=2e-3, epochs=10, batch=32, clip=1.0, eval_at=EV,
                      lr_hook=hook)
    tr = T.fit(mk(lambda s, lr: lr * F if s >= K else lr))
    cf = T.fit(mk(None))
    layouts.write_hf(out, tr, dict(t0=1730102233.57, host="train-worker-2", pid=30977, seed=4,
                                   step_s=0.032, logging_steps=LOG, eval_steps=EV,
                                   metric="accuracy", train_samples=2400, eval_s=0.05,
                                   args=hf_args(0.002, 10, 32, "constant", 0, LOG, EV, 1401)))
    notes = late_div_notes(tr, K, "hf", "learning rate multiplied by 30 from step %d (0.002 -> "
                           "0.06; a resumed job that restored the wrong scheduler state): a one-block "
                           "transformer on 'does the sequence hold a token twice'; the loss goes "
                           "back up to chance level (ln 2 = 0.693) and stays there" % (K + 1), cf)
    return write_label(out, name, "hf", "late_divergence", tr, EV, HF_SERIES, hf_steps(LOG, EV),
                       notes, onset=K + 1)


@run("HX05-spiral-mlp-adamw-nan-input")
def hx05(out, name):
    LOG, EV, K = 10, 100, 361

    def hook(s, x, y):
        if s == K:
            x = x.clone()
            x[5, 1] = float("nan")
        return x, y
    spec = T.Spec(seed=1501, data=lambda: (*T.spiral(2400, 3, 0.05, 1502),
                                           *T.spiral(600, 3, 0.05, 1503)),
                  model=lambda: T.MLP([2, 96, 96, 3]), loss=T.ce_loss, metric=T.ce_acc,
                  opt="adamw", lr=3e-3, epochs=8, batch=32, clip=1.0, eval_at=EV,
                  batch_hook=hook)
    tr = T.fit(spec)
    layouts.write_hf(out, tr, dict(t0=1733221876.44, host="nb-research-4", pid=2290, seed=5,
                                   step_s=0.013, logging_steps=LOG, eval_steps=EV,
                                   metric="accuracy", train_samples=2400, eval_s=0.02,
                                   args=hf_args(0.003, 8, 32, "constant", 0, LOG, EV, 1501)))
    notes = nonfinite_notes(tr, K, "hf", "one NaN input feature (a missing value the collator did "
                            "not impute) in the batch of step %d" % (K + 1))
    notes += ("; the Trainer's logging_nan_inf_filter keeps train/loss finite (the window of the "
              "onset logs the mean of its finite losses, later windows log 0.0) while "
              "train/grad_norm and eval/loss are NaN")
    return write_label(out, name, "hf", "nonfinite", tr, EV, HF_SERIES, hf_steps(LOG, EV), notes,
                       onset=K + 1)


def sumsign_stream(onset, every, lmax, l0=10, bs=32):
    def length(step):
        return l0 if step < onset else min(lmax, l0 + 1 + (step - onset) // every)

    def stream(step, gen):
        return T.running_sum_sign(bs, length(step), int(torch.randint(0, 2 ** 30, (1,),
                                                                       generator=gen)))
    return stream


@run("HX06-sumsign-relurnn-curriculum")
def hx06(out, name):
    LOG, EV, K = 10, 100, 499
    spec = T.Spec(seed=1601, stream=sumsign_stream(K, 8, 50),
                  val_stream=lambda gen: T.running_sum_sign(256, 10, 1602), steps_per_epoch=50,
                  model=lambda: T.ReluRNNTagger(hidden=32), loss=T.ce_loss, metric=T.ce_acc,
                  opt="adamw", lr=1e-3, epochs=20, clip=1.0, eval_at=EV)
    tr = T.fit(spec)
    layouts.write_hf(out, tr, dict(t0=1736418650.12, host="dgx-a100-03", pid=55121, seed=6,
                                   step_s=0.02, logging_steps=LOG, eval_steps=EV,
                                   metric="accuracy", train_samples=1600, eval_s=0.02,
                                   args=hf_args(0.001, 20, 32, "constant", 0, LOG, EV, 1601)))
    notes = explosion_notes(tr, K, "hf", "a relu Elman RNN tags each position of a +-1 stream "
                            "with the sign of the running sum; sequence length raised from 10 by 1 "
                            "every 8 steps up to 50 from step %d (a curriculum; the batch of the "
                            "onset is the first longer one); gradients clipped at max_grad_norm 1, "
                            "train/grad_norm is the norm before clipping" % (K + 1))
    return write_label(out, name, "hf", "grad_explosion", tr, EV, HF_SERIES, hf_steps(LOG, EV),
                       notes, onset=K + 1)


@run("HX07-wave-deeptanh-sgd-fullbatch")
def hx07(out, name):
    LOG, EV = 10, 50

    def data():
        x, y = T.wave_regression(512, 1702)
        xv, yv = T.wave_regression(256, 1703)
        return x, y + 1.5, xv, yv + 1.5
    spec = T.Spec(seed=1701, data=data,
                  model=lambda: T.MLP([1] + [32] * 11 + [1], act="tanh", init_std=0.05),
                  loss=T.mse_loss, opt="sgd", lr=0.05, epochs=500, batch=512, clip=1.0,
                  eval_at=EV)
    tr = T.fit(spec)
    layouts.write_hf(out, tr, dict(t0=1739870015.73, host="hpc-n017", pid=9114, seed=7,
                                   step_s=0.05, logging_steps=LOG, eval_steps=EV, metric=None,
                                   train_samples=512, eval_s=0.01, epoch_overhead_s=0.004,
                                   args=hf_args(0.05, 500, 512, "constant", 0, LOG, EV, 1701,
                                                optim="sgd")))
    var = data()[1].var(unbiased=False).item()
    notes = vanishing_notes(tr, "hf", "11 tanh hidden layers of 32 (12 linear layers) initialised "
                            "with std 0.05, full-batch sgd",
                            "the target's variance is %s: the net predicts the mean" % g(var))
    return write_label(out, name, "hf", "grad_vanishing", tr, EV, HF_SERIES, hf_steps(LOG, EV),
                       notes, onset=1)


# ================================================================= Keras runs
@run("KX01-signals-conv1d-adam-cosine-batchlog")
def kx01(out, name):
    E = 10
    spec = T.Spec(seed=2101, data=lambda: (*T.signals(2400, 64, 2102), *T.signals(600, 64, 2103)),
                  model=lambda: T.Conv1dNet(), loss=T.ce_loss, metric=T.ce_acc, opt="adam",
                  lr=3e-3, epochs=E, batch=32, schedule=T.warmup_cosine(0, 75 * E, floor=0.02))
    tr = T.fit(spec)
    S = tr["S"]
    layouts.write_keras(out, tr, dict(t0=1720012950.0, host="DESKTOP-4HV1QJ8", pid=13388,
                                      file_index=2, seed=8, step_s=0.028, metric="accuracy",
                                      batch_log=True, lr_tag="learning_rate",
                                      layers=[("Conv1D", "conv1d"), ("MaxPooling1D", "pool"),
                                              ("Conv1D", "conv1d_1"),
                                              ("GlobalAveragePooling1D", "gap"),
                                              ("Dense", "dense")]))
    notes = lb.healthy_notes(tr, 1, "iteration", extra="cosine decay of the learning rate per "
                             "iteration from 0.003; nothing was injected")
    return write_label(out, name, "keras", "healthy", tr, S, keras_series(True), keras_steps(S),
                       notes)


@run("KX02-wave-mlp-adam-stepdecay-earlystop")
def kx02(out, name):
    spec = T.Spec(seed=2201, data=lambda: (*T.wave_regression(2048, 2202),
                                           *T.wave_regression(512, 2203)),
                  model=lambda: T.MLP([1, 64, 64, 1], act="tanh"), loss=T.mse_loss,
                  metric=T.mae, opt="adam", lr=4e-3, epochs=30, batch=32,
                  schedule=T.step_decay(64 * 3, 0.5), early_stop=2, early_stop_delta=1e-3)
    tr = T.fit(spec)
    S = tr["S"]
    layouts.write_keras(out, tr, dict(t0=1723531207.0, host="ml-box", pid=8812, file_index=4,
                                      seed=9, step_s=0.009, metric="mae", batch_log=False,
                                      lr_tag="lr", layers=[("Dense", "dense"), ("Dense", "dense_1"),
                                                           ("Dense", "dense_2")]))
    best, best_e = float("inf"), None
    for e, ev in enumerate(tr["evals"]):
        if ev["loss"] < best - 1e-3:
            best, best_e = ev["loss"], e
    notes = lb.healthy_notes(tr, 1, "iteration", extra="LearningRateScheduler halving the lr "
                             "every 3 epochs (logged as epoch_lr) and EarlyStopping(patience=2, "
                             "min_delta=1e-3) on the validation loss: training stopped after epoch "
                             "%d of 30, 2 epochs after the last improvement by more than 1e-3 "
                             "(epoch %d); nothing was injected" % (tr["epochs"] - 1, best_e))
    return write_label(out, name, "keras", "healthy", tr, S, keras_series(False), keras_steps(S),
                       notes)


@run("KX03-lowrank-autoencoder-adam-batchlog")
def kx03(out, name):
    spec = T.Spec(seed=2301, data=lambda: (T.lowrank(2048, 32, 4, 2302, mix_seed=2300), None,
                                           T.lowrank(512, 32, 4, 2303, mix_seed=2300), None),
                  model=lambda: T.AutoEncoder(act="tanh"), loss=T.ae_loss, metric=T.mae,
                  opt="adam", lr=1e-3, epochs=12, batch=32)
    tr = T.fit(spec)
    S = tr["S"]
    layouts.write_keras(out, tr, dict(t0=1727795530.0, host="jupyter-a81c0", pid=412,
                                      file_index=0, seed=10, step_s=0.008, metric="mae",
                                      batch_log=True, lr_tag=None,
                                      layers=[("Dense", "enc1"), ("Dense", "code"),
                                              ("Dense", "dec1"), ("Dense", "recon")]))
    notes = lb.healthy_notes(tr, 1, "iteration", extra="a 32-24-4-24-32 tanh autoencoder on "
                             "points near a 4-dimensional curved manifold, batch_* logged every "
                             "batch; nothing was injected")
    return write_label(out, name, "keras", "healthy", tr, S, keras_series(True), keras_steps(S),
                       notes)


@run("KX04-moons-mlp-tanh-sgd-lr5")
def kx04(out, name):
    spec = T.Spec(seed=2401, data=lambda: (*T.two_moons(2048, 0.2, 2402),
                                           *T.two_moons(512, 0.2, 2403)),
                  model=lambda: T.MLP([2, 64, 64, 2], act="tanh"), loss=T.ce_loss,
                  metric=T.ce_acc, opt="sgd", lr=5.0, epochs=8, batch=32)
    tr = T.fit(spec)
    S = tr["S"]
    layouts.write_keras(out, tr, dict(t0=1729177342.0, host="ml-box", pid=27361, file_index=6,
                                      seed=11, step_s=0.006, metric="accuracy", batch_log=True,
                                      lr_tag=None, layers=[("Dense", "dense"), ("Dense", "dense_1"),
                                                           ("Dense", "dense_2")]))
    notes = early_div_notes(tr, "keras", "optimizer SGD(learning_rate=5.0) (meant to be 0.05)")
    return write_label(out, name, "keras", "early_divergence", tr, S, keras_series(True),
                       keras_steps(S), notes, onset=1)


@run("KX05-wave-mlp-adam-targets-cm")
def kx05(out, name):
    K = 420
    spec = T.Spec(seed=2501, data=lambda: (*T.wave_regression(2048, 2502),
                                           *T.wave_regression(512, 2503)),
                  model=lambda: T.MLP([1, 64, 64, 1], act="tanh"), loss=T.mse_loss,
                  metric=T.mae, opt="adam", lr=2e-3, epochs=12, batch=32,
                  batch_hook=lambda s, x, y: (x, y * 100.0) if s == K else (x, y))
    tr = T.fit(spec)
    S = tr["S"]
    layouts.write_keras(out, tr, dict(t0=1731409005.0, host="jupyter-5d2e1", pid=60115,
                                      file_index=2, seed=12, step_s=0.008, metric="mae",
                                      batch_log=True, lr_tag=None,
                                      layers=[("Dense", "dense"), ("Dense", "dense_1"),
                                              ("Dense", "dense_2")]))
    onset, window, rec, notes = spike_label(tr, K, "keras", "one batch with its targets in "
                                            "centimetres instead of metres (x100) at iteration %d"
                                            % (K + 1), S, S)
    return write_label(out, name, "keras", "transient_spike", tr, S, keras_series(True),
                       keras_steps(S), notes, onset=onset, window=window, recovers=rec)


@run("KX06-spiral-mlp-adam-log-zero")
def kx06(out, name):
    K = 345

    def hook(s, x, y):
        if s == K:
            x = x.clone()
            x[11, 0] = float("-inf")
        return x, y
    spec = T.Spec(seed=2601, data=lambda: (*T.spiral(2400, 3, 0.05, 2602),
                                           *T.spiral(600, 3, 0.05, 2603)),
                  model=lambda: T.MLP([2, 128, 128, 3]), loss=T.ce_loss, metric=T.ce_acc,
                  opt="adam", lr=2e-3, epochs=8, batch=32, batch_hook=hook)
    tr = T.fit(spec)
    S = tr["S"]
    layouts.write_keras(out, tr, dict(t0=1734650741.0, host="eval-box", pid=3077, file_index=2,
                                      seed=13, step_s=0.011, metric="accuracy", batch_log=True,
                                      lr_tag=None, layers=[("Dense", "dense"), ("Dense", "dense_1"),
                                                           ("Dense", "dense_2")]))
    notes = nonfinite_notes(tr, K, "keras", "a log-transformed feature whose raw value is 0 in one "
                            "sample (-inf after the log) in the batch of iteration %d" % (K + 1))
    return write_label(out, name, "keras", "nonfinite", tr, S, keras_series(True), keras_steps(S),
                       notes, onset=K + 1)


@run("KX07-spiral-mlp256-adam-noisy128")
def kx07(out, name):
    spec = T.Spec(seed=2701, data=lambda: (*T.spiral(128, 3, 0.1, 2702, flip=0.15),
                                           *T.spiral(1000, 3, 0.1, 2703, flip=0.15)),
                  model=lambda: T.MLP([2, 256, 256, 3]), loss=T.ce_loss, metric=T.ce_acc,
                  opt="adam", lr=3e-3, epochs=100, batch=16)
    tr = T.fit(spec)
    S = tr["S"]
    layouts.write_keras(out, tr, dict(t0=1737981300.0, host="thinkpad-x1", pid=19440,
                                      file_index=0, seed=14, step_s=0.009, metric="accuracy",
                                      batch_log=False, lr_tag=None, epoch_overhead_s=0.05,
                                      eval_s=0.03,
                                      layers=[("Dense", "dense"), ("Dense", "dense_1"),
                                              ("Dense", "dense_2")]))
    onset, notes = overfit_label(tr, "keras", "128 training points of a 3-arm spiral, 15% of the "
                                 "labels flipped, a 2-256-256-3 MLP trained for 100 epochs")
    return write_label(out, name, "keras", "overfit", tr, S, keras_series(False), keras_steps(S),
                       notes, onset=onset)


# ================================================================= Lightning runs
@run("LX01-spiral-mlp-sgd-warmup-cosine")
def lx01(out, name):
    spec = T.Spec(seed=3101, data=lambda: (*T.spiral(2400, 3, 0.05, 3102),
                                           *T.spiral(600, 3, 0.05, 3103)),
                  model=lambda: T.MLP([2, 64, 64, 3]), loss=T.ce_loss, opt="sgd", momentum=0.9,
                  lr=0.15, epochs=12, batch=32, schedule=T.warmup_cosine(100, 900))
    tr = T.fit(spec)
    S = tr["S"]
    layouts.write_lightning(out, tr, dict(t0=1710861123.09, host="ws-lee", pid=22817, seed=15,
                                          step_s=0.012, lr_tag="lr-SGD",
                                          hparams={"lr": 0.15, "momentum": 0.9,
                                                   "warmup_steps": 100}))
    notes = lb.healthy_notes(tr, 0, extra="warm-up over 100 steps to a high peak lr of 0.15 "
                             "(momentum 0.9), then cosine decay to 0; nothing was injected")
    series = dict(LIGHTNING_SERIES, lr="lr-SGD")
    return write_label(out, name, "lightning", "healthy", tr, S, series,
                       STEPS_DESC["lightning"], notes)


@run("LX02-moons-mlp-adam-b8-gradnorm")
def lx02(out, name):
    spec = T.Spec(seed=3201, data=lambda: (*T.two_moons(1200, 0.3, 3202),
                                           *T.two_moons(480, 0.3, 3203)),
                  model=lambda: T.MLP([2, 32, 2]), loss=T.ce_loss, opt="adam", lr=5e-3,
                  epochs=2, batch=8)
    tr = T.fit(spec, want_param_norms=True)
    for s in tr["steps"]:
        s["param_norms"] = {"model." + k: v for k, v in s["param_norms"].items()}
    S = tr["S"]
    layouts.write_lightning(out, tr, dict(t0=1713195408.55, host="gpu-node-07", pid=4410,
                                          seed=16, step_s=0.006, grad_norms="all",
                                          hparams={"lr": 0.005, "batch_size": 8, "hidden": 32}))
    notes = lb.healthy_notes(tr, 0, extra="batches of 8: the per-step loss and gradient norm are "
                             "very noisy by design; grad_norm(self, norm_type=2) logged in "
                             "on_before_optimizer_step; nothing was injected")
    series = dict(LIGHTNING_SERIES, grad_norm="grad_2.0_norm_total")
    return write_label(out, name, "lightning", "healthy", tr, S, series,
                       STEPS_DESC["lightning"], notes)


@run("LX03-dupes-transformer-adamw-cosine")
def lx03(out, name):
    spec = T.Spec(seed=3301, data=lambda: (*T.duplicate_tokens(2400, 6, 24, 3302),
                                           *T.duplicate_tokens(600, 6, 24, 3303)),
                  model=lambda: T.TinyTransformer(24, 6), loss=T.ce_loss, opt="adamw", lr=3e-3,
                  weight_decay=0.01, epochs=10, batch=32, schedule=T.warmup_cosine(50, 750))
    tr = T.fit(spec)
    S = tr["S"]
    layouts.write_lightning(out, tr, dict(t0=1716630255.7, host="lambda-quad", pid=31007,
                                          version=2, seed=17, step_s=0.03, lr_tag="lr-AdamW",
                                          hparams={"lr": 0.003, "weight_decay": 0.01,
                                                   "d_model": 32, "heads": 4}))
    notes = lb.healthy_notes(tr, 0, extra="a one-block transformer on 'does the sequence of 6 "
                             "tokens (vocabulary 24) hold a token twice'; warm-up over 50 steps "
                             "then cosine decay; nothing was injected")
    series = dict(LIGHTNING_SERIES, lr="lr-AdamW")
    return write_label(out, name, "lightning", "healthy", tr, S, series,
                       STEPS_DESC["lightning"], notes)


@run("LX04-sparse-logreg-sgd-lr20")
def lx04(out, name):
    spec = T.Spec(seed=3401, data=lambda: (*T.sparse_bag(2560, 1000, 20, 3402, 3400),
                                           *T.sparse_bag(640, 1000, 20, 3403, 3400)),
                  model=lambda: torch.nn.Linear(1000, 1), loss=T.bce_loss, opt="sgd",
                  momentum=0.9, lr=20.0, epochs=6, batch=32)
    tr = T.fit(spec)
    S = tr["S"]
    layouts.write_lightning(out, tr, dict(t0=1719411788.21, host="lambda-dual", pid=12876,
                                          seed=18, step_s=0.005,
                                          hparams={"lr": 20.0, "momentum": 0.9,
                                                   "batch_size": 32}))
    notes = early_div_notes(tr, "lightning", "logistic regression on 1000 sparse binary features "
                            "with sgd lr 20, momentum 0.9 (a learning rate meant for summed, not "
                            "averaged, losses)")
    return write_label(out, name, "lightning", "early_divergence", tr, S, LIGHTNING_SERIES,
                       STEPS_DESC["lightning"], notes, onset=0)


@run("LX05-signals-conv1d-adam-badbatch")
def lx05(out, name):
    K = 520
    spec = T.Spec(seed=3501, data=lambda: (*T.signals(2400, 64, 3502), *T.signals(600, 64, 3503)),
                  model=lambda: T.Conv1dNet(), loss=T.ce_loss, opt="adam", lr=1e-3, epochs=12,
                  batch=32, batch_hook=lambda s, x, y: (x * 100.0, y) if s == K else (x, y))
    tr = T.fit(spec)
    S = tr["S"]
    layouts.write_lightning(out, tr, dict(t0=1722343507.64, host="ws-kim", pid=8120, version=1,
                                          seed=19, step_s=0.026,
                                          hparams={"lr": 0.001, "width": 16}))
    onset, window, rec, notes = spike_label(tr, K, "lightning", "one batch read in raw sensor "
                                            "counts (inputs x100) at step %d" % K, S, S)
    return write_label(out, name, "lightning", "transient_spike", tr, S, LIGHTNING_SERIES,
                       STEPS_DESC["lightning"], notes, onset=onset, window=window, recovers=rec)


@run("LX06-lowrank-autoencoder-adam-frozen")
def lx06(out, name):
    K = 200

    def freeze(s, model, opt):
        if s == K:
            for n, p in model.named_parameters():
                if n != "dec2.bias":
                    p.requires_grad_(False)
                    p.grad = None

    def mk(hook):
        return T.Spec(seed=3601, data=lambda: (T.lowrank(2048, 32, 4, 3602, mix_seed=3600), None,
                                               T.lowrank(512, 32, 4, 3603, mix_seed=3600), None),
                      model=lambda: T.AutoEncoder(act="tanh"), loss=T.ae_loss, opt="adam",
                      lr=5e-4, epochs=14, batch=32, step_hook=hook)
    tr = T.fit(mk(freeze))
    cf = T.fit(mk(None))
    S = tr["S"]
    layouts.write_lightning(out, tr, dict(t0=1725012640.18, host="gpu-node-12", pid=50213,
                                          seed=20, step_s=0.007,
                                          hparams={"lr": 0.0005, "code": 4, "hidden": 24}))
    notes = plateau_notes(tr, K, "lightning", "every parameter but the last layer's bias frozen "
                          "(requires_grad=False; a fine-tuning switch flipped by mistake)", cf)
    return write_label(out, name, "lightning", "plateau", tr, S, LIGHTNING_SERIES,
                       STEPS_DESC["lightning"], notes, onset=K)


@run("LX07-moons-deepsigmoid-sgd-fullbatch")
def lx07(out, name):
    spec = T.Spec(seed=3701, data=lambda: (*T.two_moons(512, 0.2, 3702),
                                           *T.two_moons(256, 0.2, 3703)),
                  model=lambda: T.MLP([2] + [24] * 10 + [2], act="sigmoid"), loss=T.ce_loss,
                  opt="sgd", lr=0.5, epochs=400, batch=512, eval_at=10)
    tr = T.fit(spec)
    S = tr["S"]
    layouts.write_lightning(out, tr, dict(t0=1728561902.93, host="ws-lee", pid=6120, version=4,
                                          seed=21, step_s=0.012, grad_norms="total",
                                          epoch_overhead_s=0.01, eval_s=0.004,
                                          hparams={"lr": 0.5, "depth": 11,
                                                   "activation": "sigmoid"}))
    notes = vanishing_notes(tr, "lightning", "10 sigmoid hidden layers of 24 (11 linear layers), full-batch sgd "
                            "(check_val_every_n_epoch=10; only grad_2.0_norm_total logged)",
                            "ln 2 = 0.6931 is chance level for two balanced classes: the net "
                            "predicts the base rate")
    series = dict(LIGHTNING_SERIES, grad_norm="grad_2.0_norm_total")
    return write_label(out, name, "lightning", "grad_vanishing", tr, 10, series,
                       STEPS_DESC["lightning"], notes, onset=0)


# ================================================================= plain PyTorch runs
@run("TX01-cartpole-actor-critic")
def tx01(out, name):
    recs = T.cartpole_actor_critic(4101, 500, lr=3e-3)
    layouts.write_torch_rl(out, recs, dict(t0=1741007350.16, host="ws-kim", pid=40188, seed=22,
                                           step_s=0.03))
    P = [r["policy_loss"] for r in recs]
    R = [r["return"] for r in recs]
    neg = sum(1 for p in P if p < 0)
    trace = {"steps": [{"loss": p} for p in P], "evals": [], "S": 1, "epochs": len(recs)}
    notes = ("policy loss (per episode) %s over the first 10 episodes, %s over the last 50, "
             "negative in %d of %d episodes; episode return mean %s over the first 100 episodes, "
             "%s over the last 100 (200 is the cap); advantage actor-critic on a hand-written "
             "cart-pole, one update per episode with normalised advantages: the policy loss changes "
             "sign from episode to episode and the value loss grows with the returns; the return "
             "improves; nothing was injected"
             % (g(mean(P[:10])), g(mean(P[-50:])), neg, len(P), g(mean(R[:100])),
                g(mean(R[-100:]))))
    series = {"policy_loss": "losses/policy_loss", "value_loss": "losses/value_loss",
              "return": "charts/episodic_return"}
    return write_label(out, name, "torch", "healthy", trace, 1, series,
                       "the episode index (one policy update per episode)", notes)


@run("TX02-adding-lstm-adam-sgdr-tutorial")
def tx02(out, name):
    N = 25
    spec = T.Spec(seed=4211, data=lambda: (*T.adding_problem(2400, 8, 4202),
                                           *T.adding_problem(600, 8, 4203)),
                  model=lambda: T.LSTMReg(hidden=32), loss=T.mse_loss, opt="adam", lr=1e-2,
                  epochs=10, batch=32, schedule=T.cosine_restarts(200))
    tr = T.fit(spec)
    S = tr["S"]
    layouts.write_torch(out, tr, dict(t0=1743520011.52, host="colab-vm", pid=1893, seed=23,
                                      step_s=0.035, style="tutorial", tutorial_every=N))
    notes = lb.healthy_notes(tr, 0, extra="the adding problem (sequences of 8); cosine annealing "
                             "with warm restarts every 200 steps (SGDR, peak lr 0.01): a restart "
                             "disturbs the loss for a while (the bump above); "
                             "'training loss' is the mean of the last %d batches, logged every %d "
                             "batches; nothing was injected" % (N, N))
    series = {"train_loss": "training loss", "val_loss": "validation loss"}
    return write_label(out, name, "torch", "healthy", tr, S, series,
                       "the loop's step counter, epoch * len(loader) + i, 0 for the first batch; "
                       "'training loss' every %d batches (the mean of those batches)" % N, notes)


@run("TX03-wave-mlp-adam-stepdecay-newstyle")
def tx03(out, name):
    spec = T.Spec(seed=4301, data=lambda: (*T.wave_regression(2400, 4302),
                                           *T.wave_regression(600, 4303)),
                  model=lambda: T.MLP([1, 96, 96, 1], act="gelu"), loss=T.mse_loss, opt="adam",
                  lr=5e-3, epochs=8, batch=32, schedule=T.step_decay(75 * 3, 0.3))
    tr = T.fit(spec)
    S = tr["S"]
    layouts.write_torch(out, tr, dict(t0=1745318240.07, host="runner-7f3c2", pid=622, seed=24,
                                      step_s=0.01, grad_tag="Grad/norm", lr_tag="lr",
                                      new_style=True))
    notes = lb.healthy_notes(tr, 0, extra="StepLR(step_size=3 epochs, gamma=0.3); scalars "
                             "written with add_scalar(..., new_style=True) (rank-0 tensors); "
                             "nothing was injected")
    series = dict(TORCH_SERIES, grad_norm="Grad/norm")
    return write_label(out, name, "torch", "healthy", tr, S, series, STEPS_DESC["torch"], notes)


@run("TX04-signals-conv1d-sgd-lr-x50")
def tx04(out, name):
    K = 400

    def mk(hook):
        return T.Spec(seed=4401, data=lambda: (*T.signals(2400, 64, 4402),
                                               *T.signals(600, 64, 4403)),
                      model=lambda: T.Conv1dNet(), loss=T.ce_loss, opt="sgd", momentum=0.9,
                      lr=0.02, epochs=10, batch=32, lr_hook=hook)
    tr = T.fit(mk(lambda s, lr: lr * 50 if s >= K else lr))
    cf = T.fit(mk(None))
    S = tr["S"]
    layouts.write_torch(out, tr, dict(t0=1746702388.9, host="gpu-node-12", pid=17302, seed=25,
                                      step_s=0.025, grad_tag="grad_norm", lr_tag="lr"))
    notes = late_div_notes(tr, K, "torch", "learning rate multiplied by 50 from step %d (0.02 -> "
                           "1.0, sgd momentum 0.9; a config override applied on resume); chance "
                           "level for 4 classes is ln 4 = 1.386" % K, cf)
    series = dict(TORCH_SERIES, grad_norm="grad_norm")
    return write_label(out, name, "torch", "late_divergence", tr, S, series, STEPS_DESC["torch"],
                       notes, onset=K)


@run("TX05-dupes-transformer-adam-lr0")
def tx05(out, name):
    K = 330

    def mk(hook):
        return T.Spec(seed=4501, data=lambda: (*T.duplicate_tokens(2400, 6, 24, 4502),
                                               *T.duplicate_tokens(600, 6, 24, 4503)),
                      model=lambda: T.TinyTransformer(24, 6), loss=T.ce_loss, opt="adam",
                      lr=2e-3, epochs=10, batch=32, lr_hook=hook)
    tr = T.fit(mk(lambda s, lr: 0.0 if s >= K else lr))
    cf = T.fit(mk(None))
    S = tr["S"]
    layouts.write_torch(out, tr, dict(t0=1748001123.61, host="ws-lee", pid=9920, seed=26,
                                      step_s=0.03, grad_tag="grad_norm", lr_tag="lr"))
    notes = plateau_notes(tr, K, "torch", "learning rate set to 0 (a LambdaLR whose lambda "
                          "returns 0 past a milestone)", cf)
    series = dict(TORCH_SERIES, grad_norm="grad_norm")
    return write_label(out, name, "torch", "plateau", tr, S, series, STEPS_DESC["torch"], notes,
                       onset=K)


@run("TX06-sparse-logreg-adam-n320-tutorial")
def tx06(out, name):
    spec = T.Spec(seed=4601, data=lambda: (*T.sparse_bag(320, 1000, 20, 4602, 4600, noise=0.3),
                                           *T.sparse_bag(1000, 1000, 20, 4603, 4600, noise=0.3)),
                  model=lambda: torch.nn.Linear(1000, 1), loss=T.bce_loss, opt="adam", lr=5e-3,
                  epochs=40, batch=16)
    tr = T.fit(spec)
    S = tr["S"]
    layouts.write_torch(out, tr, dict(t0=1749214457.33, host="thinkpad-t14", pid=5521, seed=27,
                                      step_s=0.004, style="tutorial", tutorial_every=S,
                                      epoch_overhead_s=0.01, eval_s=0.01))
    onset, notes = overfit_label(tr, "torch", "logistic regression on 1000 sparse binary features "
                                 "from 320 training rows, no regularisation, Adam lr 0.005; "
                                 "'training loss' is the mean of each epoch's %d batches" % S)
    series = {"train_loss": "training loss", "val_loss": "validation loss"}
    return write_label(out, name, "torch", "overfit", tr, S, series,
                       "the loop's step counter, epoch * len(loader) + i, 0 for the first batch; "
                       "'training loss' once per epoch (the mean of its %d batches)" % S, notes,
                       onset=onset)


def adding_stream(onset, every, lmax, l0=10, bs=32):
    def length(step):
        return l0 if step < onset else min(lmax, l0 + 1 + (step - onset) // every)

    def stream(step, gen):
        return T.adding_problem(bs, length(step), int(torch.randint(0, 2 ** 30, (1,),
                                                                     generator=gen)))
    return stream


@run("TX07-adding-relurnn-curriculum")
def tx07(out, name):
    K, EV = 600, 100
    spec = T.Spec(seed=4701, stream=adding_stream(K, 5, 60),
                  val_stream=lambda gen: T.adding_problem(256, 10, 4702), steps_per_epoch=50,
                  model=lambda: T.ReluRNNReg(hidden=32), loss=T.mse_loss, opt="adam", lr=1e-3,
                  epochs=20, clip=1.0, eval_at=EV)
    tr = T.fit(spec)
    S = tr["S"]
    layouts.write_torch(out, tr, dict(t0=1750866309.48, host="ws-kim", pid=28831, seed=28,
                                      step_s=0.02, grad_tag="grad_norm", lr_tag="lr"))
    notes = explosion_notes(tr, K, "torch", "the adding problem with a relu Elman RNN; sequence "
                            "length raised from 10 by 1 every 5 steps up to 60 from step %d (a "
                            "curriculum; the batch of the onset is the first longer one); "
                            "gradients clipped at 1, the logged norm is the one before clipping"
                            % K)
    series = dict(TORCH_SERIES, grad_norm="grad_norm")
    return write_label(out, name, "torch", "grad_explosion", tr, EV, series, STEPS_DESC["torch"],
                       notes, onset=K)


# ================================================================= main
def generate(runs, argv, usage, name_width=44):
    """Writes `runs` (name -> function(out, name) returning the label) under the folder argv
    names: `--only NAME[,NAME]` for some, `--list` to list them. Shared by the text corpus."""
    if "--list" in argv:
        for n in runs:
            print(n)
        return 0
    only = None
    args = []
    i = 0
    while i < len(argv):
        if argv[i] == "--only":
            only = set()
            for part in argv[i + 1].split(","):
                m = [n for n in runs if n == part or n.startswith(part + "-")]
                if not m:
                    sys.exit("no run %s" % part)
                only.update(m)
            i += 2
            continue
        args.append(argv[i])
        i += 1
    if len(args) != 1:
        sys.exit(usage)
    root = args[0]
    os.makedirs(root, exist_ok=True)
    t_all = time.time()
    for name, fn in runs.items():
        if only and name not in only:
            continue
        out = os.path.join(root, name)
        if os.path.exists(out):
            shutil.rmtree(out)
        os.makedirs(out)
        t = time.time()
        lab = fn(out, name)
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
        print("%-*s %-9s %-16s onset %-5s window %-12s %6.1f KB %5.1f s"
              % (name_width, name, lab["convention"], lab["fault"], lab["onset_step"],
                 "-" if lab["window"] is None else "%d-%d" % tuple(lab["window"]), size / 1024,
                 time.time() - t), flush=True)
    print("total %.1f s (torch %s)" % (time.time() - t_all, torch.__version__))
    return 0


def main(argv):
    return generate(RUNS, argv, __doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
