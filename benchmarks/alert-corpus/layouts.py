"""Write a training trace as one framework would lay out its TensorBoard logdir.

  lightning  Lightning's TensorBoardLogger: lightning_logs/version_N/ + hparams.yaml
  hf         the Transformers Trainer with report_to=tensorboard: runs/<Mon DD_HH-MM-SS>_<host>/
  keras      tf.keras' TensorBoard callback: logs/fit/<YYYYmmdd-HHMMSS>/{train,validation}/
  torch      a plain torch.utils.tensorboard SummaryWriter loop: runs/<Mon DD_HH-MM-SS>_<host>/

Wall times: a base time plus a simulated, seeded duration per step (a per-run step cost with
log-normal jitter), per evaluation and per epoch start, so the files advance like a real job's and
stay byte-identical from one generation to the next.
"""
import json
import math
import os
import random
import struct
import time

import tbwriter as tb

TORCH_SOURCE = b"tensorboard.summary.writer.event_file_writer"
TF_SOURCE = b"tensorflow.core.util.events_writer"


def f32(x):
    """x as the float32 the event file will hold (for running means computed like Keras)."""
    return struct.unpack("<f", struct.pack("<f", x))[0] if math.isfinite(x) else x


class Clock:
    """Simulated wall clock of a job: per-step cost with jitter; small gaps between events."""

    def __init__(self, t0, seed, step_s, jitter=0.12):
        self.t = t0
        self.rng = random.Random(seed)
        self.step_s = step_s
        self.jitter = jitter

    def step(self, scale=1.0):
        d = self.step_s * scale * math.exp(self.rng.gauss(0.0, self.jitter))
        if self.rng.random() < 0.01:           # an occasional hiccup (GC, another process)
            d += self.step_s * self.rng.uniform(2, 6)
        self.t += d
        return self.t

    def wait(self, seconds):
        self.t += seconds * math.exp(self.rng.gauss(0.0, 0.05))
        return self.t

    def tick(self):
        """the few tens of microseconds between two add_scalar calls"""
        self.t += self.rng.uniform(15e-6, 90e-6)
        return self.t


def _first_event(wall, source):
    return tb.event(wall, 0, file_version="brain.Event:2") + tb._ld(10, tb._ld(1, source))


def _writer(path, wall, source):
    w = tb.EventWriter(path, wall)
    w.records = [tb.frame(_first_event(wall, source))]
    return w


def _scalar(w, clock, step, tag, value, new_style=False):
    if new_style:
        # torch add_scalar(..., new_style=True): TensorProto(dtype=DT_FLOAT, float_val=[x])
        tensor = tb._int(1, 1) + tb._ld(5, struct.pack("<f", value))
        v = tb._ld(1, tag) + tb._ld(8, tensor) + tb._ld(9, tb.plugin_metadata("scalars"))
    else:
        v = tb.value_simple(tag, value)
    w.add(clock.tick(), step, [v])


def _tf_scalar(w, clock, step, tag, value):
    w.add(clock.tick(), step, [tb.value_tensor_scalar(tag, value)])


def _stamp(t, fmt):
    return time.strftime(fmt, time.gmtime(t))


def _mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


# ------------------------------------------------------------------ hparams (torch / Lightning)
def _hparams_values(hp):
    """_hparams_/experiment, session_start_info, session_end_info as torch's hparams() writes."""
    infos = b""
    start = b""
    for k, v in hp.items():
        if isinstance(v, str):
            infos += tb._ld(4, tb._ld(1, k) + tb._int(4, 1))
            start += tb._ld(1, tb._ld(1, k) + tb._ld(2, tb._ld(3, v)))    # Value.string_value
        else:
            infos += tb._ld(4, tb._ld(1, k) + tb._int(4, 3))
            start += tb._ld(1, tb._ld(1, k) + tb._ld(2, tb._double(2, float(v))))
    infos += tb._ld(5, tb._ld(1, tb._ld(2, "hp_metric")))
    exp = tb._ld(2, infos)
    ssi = tb._ld(3, start)
    sei = tb._ld(4, tb._int(1, 1))
    out = []
    for tag, content in (("_hparams_/experiment", exp), ("_hparams_/session_start_info", ssi),
                         ("_hparams_/session_end_info", sei)):
        out.append(tb._ld(1, tag) + tb._ld(9, tb.plugin_metadata("hparams", content)))
    return out


# ------------------------------------------------------------------ Lightning
def write_lightning(root, trace, cfg):
    """cfg: t0, host, pid, version, step_s, hparams (dict), lr_tag (e.g. 'lr-SGD' or None),
    grad_norms ('total', 'all' or None), val_every (epochs), epoch_overhead_s."""
    S = trace["S"]
    steps = trace["steps"]
    evals = {e["after"]: e for e in trace["evals"]}
    d = os.path.join(root, "lightning_logs", "version_%d" % cfg.get("version", 0))
    clock = Clock(cfg["t0"], cfg["seed"], cfg["step_s"])
    path = os.path.join(d, "events.out.tfevents.%d.%s.%d.0" % (int(cfg["t0"]), cfg["host"],
                                                                cfg["pid"]))
    w = _writer(path, round(cfg["t0"], 3), TORCH_SOURCE)
    clock.wait(0.012)
    _scalar(w, clock, 0, "hp_metric", -1.0)
    for v in _hparams_values(cfg["hparams"]):
        w.add(clock.tick(), 0, [v])
    clock.wait(cfg.get("startup_s", 0.08))
    ep_losses, ep_n = [], []
    for i, rec in enumerate(steps):
        epoch = i // S
        if i % S == 0 and i > 0:
            clock.wait(cfg.get("epoch_overhead_s", 0.25))
        clock.step()
        if cfg.get("lr_tag"):
            _scalar(w, clock, i, cfg["lr_tag"], rec["lr"])
        _scalar(w, clock, i, "train_loss_step", rec["loss"])
        if cfg.get("grad_norms") == "all":
            for name, v in rec["param_norms"].items():
                _scalar(w, clock, i, "grad_2.0_norm/" + name, v)
        if cfg.get("grad_norms"):
            _scalar(w, clock, i, "grad_2.0_norm_total", rec["grad_norm"])
        _scalar(w, clock, i, "epoch", float(epoch))
        ep_losses.append(rec["loss"] * rec["n"])
        ep_n.append(rec["n"])
        if i % S == S - 1:
            if i in evals:
                e = evals[i]
                clock.wait(cfg.get("eval_s", 0.02))
                _scalar(w, clock, i, "val_loss", e["loss"])
                _scalar(w, clock, i, "epoch", float(epoch))
            _scalar(w, clock, i, "train_loss_epoch", sum(ep_losses) / sum(ep_n))
            _scalar(w, clock, i, "epoch", float(epoch))
            ep_losses, ep_n = [], []
    w.close()
    with open(os.path.join(d, "hparams.yaml"), "w") as f:
        for k, v in cfg["hparams"].items():
            f.write("%s: %s\n" % (k, v))
    return clock.t


# ------------------------------------------------------------------ Hugging Face Trainer
def write_hf(root, trace, cfg):
    """cfg: t0, host, pid, step_s, logging_steps, eval_steps, args (dict for args/text_summary),
    metric ('accuracy' or None), train_samples (for train_samples_per_second)."""
    S = trace["S"]
    steps = trace["steps"]
    evals = {e["after"] + 1: e for e in trace["evals"]}
    name = "%s_%s" % (_stamp(cfg["t0"], "%b%d_%H-%M-%S"), cfg["host"])
    d = os.path.join(root, "runs", name)
    clock = Clock(cfg["t0"], cfg["seed"], cfg["step_s"])
    path = os.path.join(d, "events.out.tfevents.%d.%s.%d.0" % (int(cfg["t0"]), cfg["host"],
                                                                cfg["pid"]))
    w = _writer(path, round(cfg["t0"], 3), TORCH_SOURCE)
    clock.wait(0.15)
    args = dict(cfg["args"])
    args["logging_dir"] = "runs/" + name
    text = json.dumps(args, indent=2)
    w.add(clock.tick(), 0, [tb.value_text("args/text_summary", text)])
    clock.wait(cfg.get("startup_s", 0.1))
    t_start = clock.t
    L = cfg["logging_steps"]
    tr_loss = 0.0
    last = 0
    total_loss = 0.0
    for i, rec in enumerate(steps):
        gs_before = i
        if i % S == 0 and i > 0:
            clock.wait(cfg.get("epoch_overhead_s", 0.05))
        clock.step()
        loss = rec["loss"]
        # Trainer: if args.logging_nan_inf_filter and the step's loss is nan/inf, add the average
        # of the losses logged so far in this window instead
        if not math.isfinite(loss):
            tr_loss = tr_loss + tr_loss / (1 + gs_before - last)
        else:
            tr_loss = tr_loss + loss
        gs = i + 1
        epoch = f32(gs / S)
        if gs % L == 0:
            logs = [("train/loss", round(tr_loss / (gs - last), 4)),
                    ("train/grad_norm", rec["grad_norm"]),
                    ("train/learning_rate", rec["lr_next"]),
                    ("train/epoch", epoch)]
            total_loss += tr_loss
            tr_loss = 0.0
            last = gs
            for tag, v in logs:
                _scalar(w, clock, gs, tag, v)
        if gs in evals:
            e = evals[gs]
            rt = cfg.get("eval_s", 0.03) * math.exp(clock.rng.gauss(0, 0.08))
            clock.wait(rt)
            vals = [("eval/loss", e["loss"])]
            if cfg.get("metric"):
                vals.append(("eval/" + cfg["metric"], e["metric"]))
            vals += [("eval/runtime", round(rt, 4)),
                     ("eval/samples_per_second", round(e["samples"] / rt, 3)),
                     ("eval/steps_per_second", round(e["batches"] / rt, 3)),
                     ("train/epoch", epoch)]
            for tag, v in vals:
                _scalar(w, clock, gs, tag, v)
    total_loss += tr_loss
    clock.wait(0.25)
    runtime = clock.t - t_start
    gs = len(steps)
    n_samples = cfg["train_samples"] * trace["epochs"]
    for tag, v in (("train/train_runtime", round(runtime, 4)),
                   ("train/train_samples_per_second", round(n_samples / runtime, 3)),
                   ("train/train_steps_per_second", round(gs / runtime, 3)),
                   ("train/total_flos", 0.0),
                   ("train/train_loss", total_loss / gs),
                   ("train/epoch", f32(gs / S))):
        _scalar(w, clock, gs, tag, v)
    w.close()
    return clock.t


# ------------------------------------------------------------------ Keras
def write_keras(root, trace, cfg):
    """cfg: t0, host, pid, file_index, step_s, metric ('accuracy', 'mae'), batch_log (bool),
    lr_tag ('lr', 'learning_rate' or None), layers (for the model config)."""
    S = trace["S"]
    steps = trace["steps"]
    evals = {e["after"]: e for e in trace["evals"]}
    base = os.path.join(root, "logs", "fit", _stamp(cfg["t0"], "%Y%m%d-%H%M%S"))
    clock = Clock(cfg["t0"], cfg["seed"], cfg["step_s"])
    n = cfg.get("file_index", 0)
    tpath = os.path.join(base, "train", "events.out.tfevents.%d.%s.%d.%d.v2"
                         % (int(cfg["t0"]), cfg["host"], cfg["pid"], n))
    wt = _writer(tpath, float(int(cfg["t0"])), TF_SOURCE)
    wv = None
    clock.wait(cfg.get("startup_s", 0.9))
    conf = {"class_name": "Sequential",
            "config": {"name": "sequential",
                       "layers": [{"class_name": c, "config": {"name": nm}}
                                  for c, nm in cfg["layers"]]},
            "keras_version": "2.13.1", "backend": "tensorflow"}
    wt.add(clock.tick(), 0, [tb.value_graph_keras("keras", json.dumps(conf))])
    clock.wait(0.02)
    metric = cfg["metric"]
    tot_l = tot_m = 0.0
    k = 0
    for i, rec in enumerate(steps):
        e_idx = i // S
        if i % S == 0:
            tot_l = tot_m = 0.0
            k = 0
            if i > 0:
                clock.wait(cfg.get("epoch_overhead_s", 0.3))
        clock.step()
        # Keras' Mean metrics: running float32 totals over the epoch so far
        tot_l = f32(tot_l + rec["loss"] * rec["n"])
        tot_m = f32(tot_m + rec["metric"] * rec["n"]) if rec["metric"] is not None else tot_m
        k += rec["n"]
        run_l = f32(tot_l / k)
        run_m = f32(tot_m / k)
        it = i + 1
        if cfg.get("batch_log"):
            _tf_scalar(wt, clock, it, "batch_loss", run_l)
            _tf_scalar(wt, clock, it, "batch_" + metric, run_m)
        if i % S == S - 1:
            e = evals[i]
            clock.wait(cfg.get("eval_s", 0.03))
            if wv is None:
                vpath = os.path.join(base, "validation", "events.out.tfevents.%d.%s.%d.%d.v2"
                                     % (int(clock.t), cfg["host"], cfg["pid"], n + 1))
                wv = _writer(vpath, float(int(clock.t)), TF_SOURCE)
            _tf_scalar(wv, clock, it, "evaluation_loss_vs_iterations", e["loss"])
            _tf_scalar(wv, clock, it, "evaluation_%s_vs_iterations" % metric, e["metric"])
            clock.tick()
            _tf_scalar(wt, clock, e_idx, "epoch_loss", run_l)
            _tf_scalar(wt, clock, e_idx, "epoch_" + metric, run_m)
            if cfg.get("lr_tag"):
                _tf_scalar(wt, clock, e_idx, "epoch_" + cfg["lr_tag"], rec["lr"])
            _tf_scalar(wv, clock, e_idx, "epoch_loss", e["loss"])
            _tf_scalar(wv, clock, e_idx, "epoch_" + metric, e["metric"])
    wt.close()
    wv.close()
    return clock.t


# ------------------------------------------------------------------ plain SummaryWriter loop
def write_torch(root, trace, cfg):
    """cfg: t0, host, pid, step_s, style ('standard' | 'tutorial'), grad_tag, lr_tag,
    new_style (bool), tutorial_every (N batches averaged)."""
    S = trace["S"]
    steps = trace["steps"]
    evals = {e["after"]: e for e in trace["evals"]}
    name = "%s_%s" % (_stamp(cfg["t0"], "%b%d_%H-%M-%S"), cfg["host"])
    d = os.path.join(root, "runs", name)
    clock = Clock(cfg["t0"], cfg["seed"], cfg["step_s"])
    path = os.path.join(d, "events.out.tfevents.%d.%s.%d.0" % (int(cfg["t0"]), cfg["host"],
                                                                cfg["pid"]))
    w = _writer(path, round(cfg["t0"], 3), TORCH_SOURCE)
    clock.wait(cfg.get("startup_s", 0.12))
    ns = cfg.get("new_style", False)
    running = 0.0
    N = cfg.get("tutorial_every", 20)
    for i, rec in enumerate(steps):
        if i % S == 0 and i > 0:
            clock.wait(cfg.get("epoch_overhead_s", 0.2))
        clock.step()
        if cfg.get("style", "standard") == "standard":
            _scalar(w, clock, i, "Loss/train", rec["loss"], ns)
            if cfg.get("grad_tag"):
                _scalar(w, clock, i, cfg["grad_tag"], rec["grad_norm"], ns)
            if cfg.get("lr_tag"):
                _scalar(w, clock, i, cfg["lr_tag"], rec["lr"], ns)
        else:
            running += rec["loss"]
            if (i % S) % N == N - 1:
                _scalar(w, clock, i, "training loss", running / N, ns)
                running = 0.0
            if i % S == S - 1:
                running = 0.0
        if i in evals:
            clock.wait(cfg.get("eval_s", 0.02))
            tag = "Loss/val" if cfg.get("style", "standard") == "standard" else "validation loss"
            _scalar(w, clock, i, tag, evals[i]["loss"], ns)
    w.close()
    return clock.t


def write_torch_rl(root, recs, cfg):
    """CleanRL-style tags, one update per episode, step = the episode index."""
    name = "%s_%s" % (_stamp(cfg["t0"], "%b%d_%H-%M-%S"), cfg["host"])
    d = os.path.join(root, "runs", name)
    clock = Clock(cfg["t0"], cfg["seed"], cfg["step_s"])
    path = os.path.join(d, "events.out.tfevents.%d.%s.%d.0" % (int(cfg["t0"]), cfg["host"],
                                                                cfg["pid"]))
    w = _writer(path, round(cfg["t0"], 3), TORCH_SOURCE)
    clock.wait(0.12)
    for ep, r in enumerate(recs):
        clock.step(scale=r["length"] / 40.0)
        _scalar(w, clock, ep, "charts/episodic_return", r["return"])
        _scalar(w, clock, ep, "charts/episodic_length", float(r["length"]))
        _scalar(w, clock, ep, "losses/policy_loss", r["policy_loss"])
        _scalar(w, clock, ep, "losses/value_loss", r["value_loss"])
        _scalar(w, clock, ep, "losses/entropy", r["entropy"])
    w.close()
    return clock.t
