#!/usr/bin/python3
"""Train the text-metrics alert corpus' runs and write them as the libraries write their files.

usage: generate.py OUT_DIR [--only NAME[,NAME...]] [--list]

Every run is a real PyTorch training on one CPU thread from fixed seeds, made by the tasks and the
training loop of ../alert-corpus/tasks.py (imported, not copied); writers.py writes the trace as a
Hugging Face Trainer output dir (trainer_state.json), a Lightning CSVLogger metrics.csv, a Keras
CSVLogger file, a stable-baselines3 progress.csv or an mmengine vis_data/scalars.json; the label
(run.json) is computed here from the injection and the per-step trace with ../alert-corpus/labels.py
and the note helpers of ../alert-corpus/generate.py, in the step units the file's step column uses.
"""
import importlib.util
import json
import math
import os
import shutil
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
TB_CORPUS = os.path.join(os.path.dirname(HERE), "alert-corpus")
sys.path.insert(0, HERE)
sys.path.insert(1, TB_CORPUS)
from debian_torch import import_torch    # noqa: E402  (../alert-corpus/debian_torch.py)

torch = import_torch()
import labels as lb                      # noqa: E402  (../alert-corpus/labels.py)
import tasks as T                        # noqa: E402  (../alert-corpus/tasks.py)
import writers as W                      # noqa: E402
from labels import g, mean               # noqa: E402


def _load_tb_generate():
    """../alert-corpus/generate.py as a module (its label notes: one arithmetic for both)"""
    spec = importlib.util.spec_from_file_location("alert_corpus_generate",
                                                  os.path.join(TB_CORPUS, "generate.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


TBG = _load_tb_generate()
# the step a file gives the first optimizer step: 1 for the Trainer's global step and mmengine's
# iteration (runner.iter + 1); 0 for Lightning's global step; Keras rows are epochs (0-based) and
# are labelled from iterations (1-based) first, then turned into epochs
TBG.OFF.update({"mmengine": 1, "sb3": 0})
OFF = TBG.OFF

torch.set_num_threads(1)

RUNS = {}


def run(name):
    def deco(fn):
        RUNS[name] = fn
        return fn
    return deco


# ================================================================= labels
losses = TBG.losses  # the TensorBoard corpus's, one arithmetic for both


def write_label(out, name, conv, fault, trace, P, series, steps, notes, onset=None,
                window=None, recovers=False):
    """The label in the step units of the run's file. onset / window are in the run's own step
    numbers (for keras in iterations, 1-based: they are turned into epochs here)."""
    off = OFF[conv]
    S = trace["S"]
    last = len(trace["steps"]) - 1 + off
    if fault != "healthy" and window is None:
        window = [onset, lb.deadline(fault, onset, S, P, last)]
    if window is not None:
        window = [window[0], min(window[1], last)]
    lab = {"run": name, "convention": conv, "fault": fault}
    if conv == "keras":
        # CSVLogger writes one row per epoch at step = the epoch index: the window is the epochs
        # whose rows (each the mean of its epoch) fall in the iteration window
        ew = lb.epoch_window(window, S)
        lab.update({"onset_step": None if ew is None else ew[0], "window": ew,
                    "recovers": recovers, "notes": notes, "first_step": 0,
                    "last_step": trace["epochs"] - 1, "steps_per_epoch": 1,
                    "validation_period": 1, "epochs": trace["epochs"],
                    "iterations_per_epoch": S, "onset_iteration": onset,
                    "iteration_window": window})
    else:
        lab.update({"onset_step": onset, "window": window, "recovers": recovers, "notes": notes,
                    "first_step": off, "last_step": last, "steps_per_epoch": S,
                    "validation_period": P, "epochs": trace["epochs"]})
    lab["series"] = series
    lab["steps"] = steps
    with open(os.path.join(out, "run.json"), "w") as f:
        json.dump(lab, f, indent=1)
        f.write("\n")
    return lab


def hf_steps(L, E):
    return ("log_history 'step': the Trainer's global step, 1 after the first optimizer step; "
            "loss (mean of the window), grad_norm, learning_rate every %d steps, eval_loss every "
            "%d steps" % (L, E))


def lightning_steps(N):
    return ("metrics.csv 'step': Lightning's global step, 0 for the first batch; train_loss_step "
            "(and lr / grad norm) every log_every_n_steps=%d (steps %d, %d, ...); val_loss and "
            "train_loss_epoch at the epoch's last step" % (N, N - 1, 2 * N - 1))


def keras_steps(S):
    return ("training_log.csv 'epoch': the epoch index from 0, one row per epoch (the epoch's mean "
            "loss); windows in epochs; %d iterations per epoch (onset_iteration and "
            "iteration_window, 1-based iterations, are what the epochs come from)" % S)


def mm_steps(I, W_):
    return ("scalars.json 'step': training lines runner.iter + 1 (1 after the first iteration), "
            "every %d iterations, values the mean of the last %d iterations; validation lines at "
            "step = the epoch (1, 2, ...), holding no loss" % (I, W_))


def hf_series(run_path, grad=True):
    s = {"train_loss": "%s: loss" % run_path, "val_loss": "%s: eval_loss" % run_path}
    if grad:
        s["grad_norm"] = "%s: grad_norm" % run_path
    s["lr"] = "%s: learning_rate" % run_path
    return s


def hf_model_config(kind, **kw):
    c = {"architectures": [kind], "model_type": "custom", "torch_dtype": "float32",
         "transformers_version": "4.46.3"}
    c.update(kw)
    return c


def keras_series(path, metric=True):
    return {"train_loss": "%s: loss" % path, "val_loss": "%s: val_loss" % path}


# ================================================================= Hugging Face Trainer runs
@run("HT01-spiral-mlp-adamw-warmup-cosine")
def ht01(out, name):
    LOG, EV = 10, 75
    spec = T.Spec(seed=6101, data=lambda: (*T.spiral(2400, 3, 0.05, 6102),
                                           *T.spiral(600, 3, 0.05, 6103)),
                  model=lambda: T.MLP([2, 128, 128, 3]), loss=T.ce_loss, metric=T.ce_acc,
                  opt="adamw", lr=5e-3, weight_decay=0.01, epochs=10, batch=32, clip=1.0,
                  schedule=T.warmup_cosine(75, 750), eval_at=EV)
    tr = T.fit(spec)
    rp = W.write_hf(out, tr, dict(seed=101, step_s=0.012, output_dir="spiral-mlp",
                                  logging_steps=LOG, eval_steps=EV, save_steps=250,
                                  save_total_limit=2, batch=32, metric="accuracy",
                                  train_samples=2400, eval_s=0.02,
                                  model_config=hf_model_config("SpiralMLP", hidden=128)))
    notes = lb.healthy_notes(tr, 1, extra="AdamW lr 5e-3 (weight decay 0.01), linear warm-up "
                             "over 75 steps then cosine decay to 0 (lr_scheduler_type='cosine'), "
                             "max_grad_norm 1; save_steps 250, save_total_limit 2; nothing was "
                             "injected")
    return write_label(out, name, "hf", "healthy", tr, EV, hf_series(rp), hf_steps(LOG, EV),
                       notes)


@run("HT02-signals-conv1d-adamw-lr-x250")
def ht02(out, name):
    LOG, EV, K, F = 10, 100, 449, 250.0

    def mk(hook):
        return T.Spec(seed=6201, data=lambda: (*T.signals(2400, 64, 6202),
                                               *T.signals(600, 64, 6203)),
                      model=lambda: T.Conv1dNet(), loss=T.ce_loss, metric=T.ce_acc,
                      opt="adamw", lr=2e-3, epochs=10, batch=32, clip=1.0, eval_at=EV,
                      lr_hook=hook)
    tr = T.fit(mk(lambda s, lr: lr * F if s >= K else lr))
    cf = T.fit(mk(None))
    rp = W.write_hf(out, tr, dict(seed=102, step_s=0.026, output_dir="results",
                                  logging_steps=LOG, eval_steps=EV, save_steps=200,
                                  save_total_limit=2, batch=32, metric="accuracy",
                                  train_samples=2400, eval_s=0.04,
                                  model_config=hf_model_config("Conv1dClassifier", width=16)))
    notes = TBG.late_div_notes(tr, K, "hf", "learning rate 0.5 from step %d (x250: a job "
                               "resumed from checkpoint-400 with --learning_rate 5e-1 for 2e-3, "
                               "the constant scheduler); chance level for 4 classes is ln 4 = 1.386"
                               % (K + 1), cf)
    return write_label(out, name, "hf", "late_divergence", tr, EV, hf_series(rp),
                       hf_steps(LOG, EV), notes, onset=K + 1)


@run("HT03-moons-mlp-adamw-zero-std")
def ht03(out, name):
    LOG, EV, K = 16, 64, 287

    def hook(s, x, y):
        if s == K:
            x = x.clone()
            x[3, 0] = float("inf")
        return x, y
    spec = T.Spec(seed=6301, data=lambda: (*T.two_moons(2048, 0.2, 6302),
                                           *T.two_moons(512, 0.2, 6303)),
                  model=lambda: T.MLP([2, 64, 64, 2]), loss=T.ce_loss, metric=T.ce_acc,
                  opt="adamw", lr=3e-3, epochs=8, batch=32, clip=1.0, eval_at=EV,
                  batch_hook=hook)
    tr = T.fit(spec)
    rp = W.write_hf(out, tr, dict(seed=103, step_s=0.009, output_dir="out", logging_steps=LOG,
                                  eval_steps=EV, save_steps=128, save_total_limit=3, batch=32,
                                  metric="accuracy", train_samples=2048, eval_s=0.015,
                                  model_config=hf_model_config("MoonsMLP", hidden=64)))
    notes = TBG.nonfinite_notes(tr, K, "hf", "one sample's feature divided by a zero standard "
                                "deviation (+inf; a per-batch normalisation in the collator) in "
                                "the batch of step %d" % (K + 1))
    notes += ("; logging_nan_inf_filter keeps 'loss' finite (the window of the onset logs the "
              "mean of its finite losses, later windows 0.0) while grad_norm and eval_loss are "
              "NaN (json.dumps writes them as bare NaN)")
    return write_label(out, name, "hf", "nonfinite", tr, EV, hf_series(rp), hf_steps(LOG, EV),
                       notes, onset=K + 1)


sumsign_stream = TBG.sumsign_stream  # the TensorBoard corpus's, one arithmetic for both


@run("HT04-sumsign-relurnn-curriculum")
def ht04(out, name):
    LOG, EV, K = 10, 100, 399
    spec = T.Spec(seed=6401, stream=sumsign_stream(K, 6, 60),
                  val_stream=lambda gen: T.running_sum_sign(256, 10, 6402), steps_per_epoch=50,
                  model=lambda: T.ReluRNNTagger(hidden=32), loss=T.ce_loss, metric=T.ce_acc,
                  opt="adamw", lr=1e-3, epochs=18, clip=1.0, eval_at=EV)
    tr = T.fit(spec)
    rp = W.write_hf(out, tr, dict(seed=104, step_s=0.02, output_dir="sumsign-rnn",
                                  logging_steps=LOG, eval_steps=EV, save_steps=300,
                                  save_total_limit=2, batch=32, metric="accuracy",
                                  train_samples=1600, eval_s=0.02,
                                  model_config=hf_model_config("ReluRNNTagger", hidden=32)))
    notes = TBG.explosion_notes(tr, K, "hf", "a relu Elman RNN tags each position of a +-1 "
                                "stream with the sign of the running sum; sequence length raised "
                                "from 10 by 1 every 6 steps up to 60 from step %d (a curriculum "
                                "callback; the batch of the onset is the first longer one); "
                                "max_grad_norm 1, grad_norm is the norm before clipping of the "
                                "logging step only" % (K + 1))
    return write_label(out, name, "hf", "grad_explosion", tr, EV, hf_series(rp),
                       hf_steps(LOG, EV), notes, onset=K + 1)


@run("HT05-wave-deepsigmoid-sgd-fullbatch")
def ht05(out, name):
    LOG, EV = 5, 50

    def data():
        x, y = T.wave_regression(512, 6502)
        xv, yv = T.wave_regression(256, 6503)
        return x, y, xv, yv
    spec = T.Spec(seed=6501, data=data,
                  model=lambda: T.MLP([1] + [24] * 10 + [1], act="sigmoid"), loss=T.mse_loss,
                  opt="sgd", lr=0.5, epochs=400, batch=512, clip=1.0, eval_at=EV)
    tr = T.fit(spec)
    rp = W.write_hf(out, tr, dict(seed=105, step_s=0.03, output_dir="out", logging_steps=LOG,
                                  eval_steps=EV, save_steps=100, save_total_limit=2, batch=512,
                                  metric=None, train_samples=512, eval_s=0.01,
                                  epoch_overhead_s=0.003,
                                  model_config=hf_model_config("DeepSigmoidRegressor",
                                                               depth=11, hidden=24)))
    var = data()[1].var(unbiased=False).item()
    notes = TBG.vanishing_notes(tr, "hf", "10 sigmoid hidden layers of 24 (11 linear layers), "
                                "full-batch sgd lr 0.5, max_grad_norm 1; grad_norm is the logging "
                                "step's norm, every 5 steps",
                                "the target's variance is %s: the net predicts the mean" % g(var))
    return write_label(out, name, "hf", "grad_vanishing", tr, EV, hf_series(rp),
                       hf_steps(LOG, EV), notes, onset=1)


@run("HT06-adding-lstm-adamw-b8-log2")
def ht06(out, name):
    LOG, EV = 2, 100
    spec = T.Spec(seed=6601, data=lambda: (*T.adding_problem(1600, 10, 6602),
                                           *T.adding_problem(400, 10, 6603)),
                  model=lambda: T.LSTMReg(hidden=24), loss=T.mse_loss, opt="adamw", lr=2e-3,
                  epochs=3, batch=8, clip=1.0, schedule=T.linear_decay(600, warmup=30),
                  eval_at=EV)
    tr = T.fit(spec)
    rp = W.write_hf(out, tr, dict(seed=106, step_s=0.02, output_dir="adding-lstm",
                                  logging_steps=LOG, eval_steps=EV, save_steps=200,
                                  save_total_limit=2, batch=8, metric=None, train_samples=1600,
                                  eval_s=0.03, model_config=hf_model_config("LSTMRegressor",
                                                                              hidden=24)))
    L = losses(tr)
    notes = lb.healthy_notes(tr, 1, extra="the adding problem (sequences of 10), batches of 8, "
                             "logging_steps 2: 'loss' is the mean of two batches and very noisy "
                             "(mean %s over steps 1-100, %s over the last 100); linear warm-up "
                             "over 30 steps, linear decay; nothing was injected"
                             % (g(mean(L[:100])), g(mean(L[-100:]))))
    return write_label(out, name, "hf", "healthy", tr, EV, hf_series(rp), hf_steps(LOG, EV),
                       notes)


@run("HT07-dupes-transformer-adamw-n320")
def ht07(out, name):
    LOG, EV = 10, 40
    spec = T.Spec(seed=6701, data=lambda: (*T.duplicate_tokens(320, 6, 24, 6702),
                                           *T.duplicate_tokens(1000, 6, 24, 6703)),
                  model=lambda: T.TinyTransformer(24, 6), loss=T.ce_loss, metric=T.ce_acc,
                  opt="adamw", lr=7e-4, epochs=40, batch=16, clip=1.0, eval_at=EV)
    tr = T.fit(spec)
    rp = W.write_hf(out, tr, dict(seed=107, step_s=0.03, output_dir="dupes-n320",
                                  logging_steps=LOG, eval_steps=EV, save_steps=200,
                                  save_total_limit=2, batch=16, metric="accuracy",
                                  train_samples=320, eval_s=0.03,
                                  model_config=hf_model_config("TinyTransformer", d_model=32)))
    onset, notes = TBG.overfit_label(tr, "hf", "a one-block transformer fine-tuned on 320 "
                                     "sequences of 'does a token occur twice' for 40 epochs "
                                     "(AdamW 7e-4, no weight decay): it memorises them")
    return write_label(out, name, "hf", "overfit", tr, EV, hf_series(rp), hf_steps(LOG, EV),
                       notes, onset=onset)


# ================================================================= Lightning CSVLogger runs
def lightning_series(path, lr=None, grad=False):
    s = {"train_loss": "%s: train_loss_step" % path, "train_loss_epoch":
         "%s: train_loss_epoch" % path, "val_loss": "%s: val_loss" % path}
    if lr:
        s["lr"] = "%s: %s" % (path, lr)
    if grad:
        s["grad_norm"] = "%s: grad_2.0_norm_total" % path
    return s


@run("LT01-lowrank-autoencoder-adam-cosine-lrmonitor")
def lt01(out, name):
    N = 10
    spec = T.Spec(seed=7101, data=lambda: (T.lowrank(2048, 32, 4, 7102, mix_seed=7100), None,
                                           T.lowrank(512, 32, 4, 7103, mix_seed=7100), None),
                  model=lambda: T.AutoEncoder(act="tanh"), loss=T.ae_loss, opt="adam", lr=2e-3,
                  epochs=12, batch=32, schedule=T.warmup_cosine(0, 768, floor=0.05))
    tr = T.fit(spec)
    rp = W.write_lightning(out, tr, dict(version=0, log_every=N, lr_tag="lr-Adam",
                                         hparams={"lr": 0.002, "code": 4, "hidden": 24}))
    notes = lb.healthy_notes(tr, 0, extra="a 32-24-4-24-32 tanh autoencoder; Adam 2e-3 with "
                             "cosine decay per step (LearningRateMonitor logs lr-Adam); "
                             "log_every_n_steps 10; nothing was injected")
    return write_label(out, name, "lightning", "healthy", tr, tr["S"],
                       lightning_series(rp, lr="lr-Adam"), lightning_steps(N), notes)


@run("LT02-spiral-mlp-tanh-sgd-lr8")
def lt02(out, name):
    N = 1
    spec = T.Spec(seed=7201, data=lambda: (*T.spiral(2048, 3, 0.05, 7202),
                                           *T.spiral(512, 3, 0.05, 7203)),
                  model=lambda: T.MLP([2, 64, 64, 3], act="tanh"), loss=T.ce_loss, opt="sgd",
                  lr=8.0, epochs=8, batch=64)
    tr = T.fit(spec)
    rp = W.write_lightning(out, tr, dict(version=0, log_every=N, flush_every=100,
                                         hparams={"lr": 8.0, "hidden": 64, "batch_size": 64}))
    notes = TBG.early_div_notes(tr, "lightning", "sgd lr 8.0 (meant 0.08) on a 2-64-64-3 tanh MLP, "
                                "log_every_n_steps=1; chance level for 3 classes is ln 3 = 1.099")
    return write_label(out, name, "lightning", "early_divergence", tr, tr["S"],
                       lightning_series(rp), lightning_steps(N), notes, onset=0)


@run("LT03-dupes-transformer-adamw-steplr-gamma0")
def lt03(out, name):
    N, E0 = 10, 4

    def mk(hook):
        return T.Spec(seed=7301, data=lambda: (*T.duplicate_tokens(2400, 6, 24, 7302),
                                               *T.duplicate_tokens(600, 6, 24, 7303)),
                      model=lambda: T.TinyTransformer(24, 6), loss=T.ce_loss, opt="adamw",
                      lr=2e-3, epochs=10, batch=32, lr_hook=hook)
    S = 75
    K = E0 * S
    tr = T.fit(mk(lambda s, lr: 0.0 if s >= K else lr))
    cf = T.fit(mk(None))
    rp = W.write_lightning(out, tr, dict(version=1, log_every=N, lr_tag="lr-AdamW",
                                         hparams={"lr": 0.002, "step_size": 4, "gamma": 0.0}))
    notes = TBG.plateau_notes(tr, K, "lightning", "StepLR(step_size=4, gamma=0.0) stepped per "
                              "epoch (gamma meant 0.1): the learning rate is 0 from epoch %d "
                              "(lr-AdamW logged by LearningRateMonitor)" % E0, cf)
    return write_label(out, name, "lightning", "plateau", tr, S,
                       lightning_series(rp, lr="lr-AdamW"), lightning_steps(N), notes, onset=K)


@run("LT04-sparse-logreg-adam-n256")
def lt04(out, name):
    N = 50
    spec = T.Spec(seed=7401, data=lambda: (*T.sparse_bag(256, 1000, 20, 7402, 7400, noise=0.3),
                                           *T.sparse_bag(1000, 1000, 20, 7403, 7400, noise=0.3)),
                  model=lambda: torch.nn.Linear(1000, 1), loss=T.bce_loss, opt="adam", lr=5e-3,
                  epochs=50, batch=16)
    tr = T.fit(spec)
    S = tr["S"]
    rp = W.write_lightning(out, tr, dict(version=0, log_every=N,
                                         hparams={"lr": 0.005, "batch_size": 16,
                                                  "n_features": 1000}))
    onset, notes = TBG.overfit_label(tr, "lightning", "logistic regression on 1000 sparse binary "
                                     "features from 256 training rows, no regularisation, Adam "
                                     "lr 0.005; log_every_n_steps left at 50 with 16 batches an "
                                     "epoch (Lightning warns), so train_loss_step is one batch "
                                     "every 50 steps")
    return write_label(out, name, "lightning", "overfit", tr, S, lightning_series(rp),
                       lightning_steps(N), notes, onset=onset)


@run("LT05-spiral-deepsigmoid-sgd-gradnorm")
def lt05(out, name):
    N = 1
    spec = T.Spec(seed=7501, data=lambda: (*T.spiral(1024, 3, 0.05, 7502),
                                           *T.spiral(512, 3, 0.05, 7503)),
                  model=lambda: T.MLP([2] + [32] * 10 + [3], act="sigmoid"), loss=T.ce_loss,
                  opt="sgd", lr=0.3, epochs=400, batch=1024, eval_at=10)
    tr = T.fit(spec)
    rp = W.write_lightning(out, tr, dict(version=0, log_every=N, grad_norms="total",
                                         hparams={"lr": 0.3, "depth": 11,
                                                  "activation": "sigmoid"}))
    notes = TBG.vanishing_notes(tr, "lightning", "10 sigmoid hidden layers of 32 (11 linear "
                                "layers), full-batch sgd lr 0.3 (one batch an epoch, "
                                "log_every_n_steps=1, check_val_every_n_epoch=10; "
                                "grad_norm(self, norm_type=2) logged, grad_2.0_norm_total)",
                                "ln 3 = 1.099 is chance level for three balanced classes")
    return write_label(out, name, "lightning", "grad_vanishing", tr, 10,
                       lightning_series(rp, grad=True), lightning_steps(N), notes, onset=0)


# ================================================================= Keras CSVLogger runs
@run("KT01-signals-conv1d-adam-expdecay-valfreq2")
def kt01(out, name):
    spec = T.Spec(seed=8101, data=lambda: (*T.signals(1600, 64, 8102), *T.signals(400, 64, 8103)),
                  model=lambda: T.Conv1dNet(), loss=T.ce_loss, metric=T.ce_acc, opt="adam",
                  lr=2e-3, epochs=16, batch=32, schedule=lambda s: 0.9 ** (s // 50))
    tr = T.fit(spec)
    rp = W.write_keras(out, tr, dict(filename="training_log.csv", metric="accuracy",
                                     lr_key="lr", validation_freq=2))
    notes = lb.healthy_notes(tr, 1, "iteration", extra="tf.keras 2: LearningRateScheduler "
                             "lr x0.9 every epoch (the 'lr' column), model.fit(validation_freq=2): "
                             "val_* cells are NA in even rows and the phantom val_lr column is all "
                             "NA; nothing was injected")
    return write_label(out, name, "keras", "healthy", tr, tr["S"], keras_series(rp),
                       keras_steps(tr["S"]), notes)


@run("KT02-moons-mlp-tanh-adam-lr2")
def kt02(out, name):
    spec = T.Spec(seed=8201, data=lambda: (*T.two_moons(2048, 0.2, 8202),
                                           *T.two_moons(512, 0.2, 8203)),
                  model=lambda: T.MLP([2, 64, 64, 2], act="tanh"), loss=T.ce_loss,
                  metric=T.ce_acc, opt="adam", lr=2.0, epochs=10, batch=64)
    tr = T.fit(spec)
    rp = W.write_keras(out, tr, dict(filename="logs/training_log.csv", metric="accuracy",
                                     lr_key="learning_rate"))
    S = tr["S"]
    L = losses(tr)
    notes = TBG.early_div_notes(tr, "keras", "Adam(learning_rate=2.0) (meant 2e-3), Keras 3")
    notes += ("; epoch means (the CSV's loss column) %s; chance level ln 2 = 0.693"
              % ", ".join(g(mean(L[e * S:(e + 1) * S])) for e in range(tr["epochs"])))
    return write_label(out, name, "keras", "early_divergence", tr, S, keras_series(rp),
                       keras_steps(S), notes, onset=1)


@run("KT03-lowrank-autoencoder-adam-raw-batch")
def kt03(out, name):
    K = 449
    spec = T.Spec(seed=8301, data=lambda: (T.lowrank(2048, 32, 4, 8302, mix_seed=8300), None,
                                           T.lowrank(512, 32, 4, 8303, mix_seed=8300), None),
                  model=lambda: T.AutoEncoder(act="tanh"), loss=T.ae_loss, metric=T.mae,
                  opt="adam", lr=1e-3, epochs=14, batch=32,
                  batch_hook=lambda s, x, y: (x * 30.0, y) if s == K else (x, y))
    tr = T.fit(spec)
    S = tr["S"]
    rp = W.write_keras(out, tr, dict(filename="training_log.csv", metric="mae",
                                     lr_key="learning_rate"))
    onset, window, rec, notes = TBG.spike_label(tr, K, "keras", "one batch read before the "
                                                "scaling layer (inputs and targets x30) at "
                                                "iteration %d (epoch %d)" % (K + 1, K // S), S, S)
    L = losses(tr)
    e = K // S
    notes += ("; epoch means %s (epoch %d) against %s the epoch before and %s the epoch after"
              % (g(mean(L[e * S:(e + 1) * S])), e, g(mean(L[(e - 1) * S:e * S])),
                 g(mean(L[(e + 1) * S:(e + 2) * S]))))
    return write_label(out, name, "keras", "transient_spike", tr, S, keras_series(rp),
                       keras_steps(S), notes, onset=onset, window=window, recovers=rec)


@run("KT04-signals-conv1d-adam-sensor-overflow")
def kt04(out, name):
    K = 311

    def hook(s, x, y):
        if s == K:
            x = x.clone()
            x[7, 0, 20] = 1e38
        return x, y
    spec = T.Spec(seed=8401, data=lambda: (*T.signals(1600, 64, 8402), *T.signals(400, 64, 8403)),
                  model=lambda: T.Conv1dNet(), loss=T.ce_loss, metric=T.ce_acc, opt="adam",
                  lr=2e-3, epochs=10, batch=32, batch_hook=hook)
    tr = T.fit(spec)
    S = tr["S"]
    rp = W.write_keras(out, tr, dict(filename="training_log.csv", metric="accuracy"))
    notes = TBG.nonfinite_notes(tr, K, "keras", "one reading of 1e38 (a sensor's overflow "
                                "sentinel) in the batch of iteration %d (epoch %d): the "
                                "convolution overflows float32" % (K + 1, K // S))
    notes += "; CSVLogger writes nan from that epoch's row on"
    return write_label(out, name, "keras", "nonfinite", tr, S, keras_series(rp), keras_steps(S),
                       notes, onset=K + 1)


@run("KT05-moons-mlp256-adam-small-noisy")
def kt05(out, name):
    spec = T.Spec(seed=8501, data=lambda: (*T.two_moons(96, 0.25, 8502, flip=0.2),
                                           *T.two_moons(1000, 0.25, 8503, flip=0.2)),
                  model=lambda: T.MLP([2, 256, 256, 2]), loss=T.ce_loss, metric=T.ce_acc,
                  opt="adam", lr=3e-3, epochs=120, batch=16)
    tr = T.fit(spec)
    S = tr["S"]
    rp = W.write_keras(out, tr, dict(filename="training_log.csv", metric="accuracy",
                                     lr_key="learning_rate"))
    onset, notes = TBG.overfit_label(tr, "keras", "96 training points of two moons, 20% of the "
                                     "labels flipped, a 2-256-256-2 MLP, Adam 3e-3, 120 epochs of "
                                     "6 iterations (Keras 3)")
    return write_label(out, name, "keras", "overfit", tr, S, keras_series(rp), keras_steps(S),
                       notes, onset=onset)


# ================================================================= mmengine runs
MM_CONFIG = ("model = dict(type='%s')\n"
             "optim_wrapper = dict(optimizer=dict(type='%s', lr=%s)%s)\n"
             "param_scheduler = %s\n"
             "train_cfg = dict(by_epoch=True, max_epochs=%d, val_interval=1)\n"
             "default_hooks = dict(logger=dict(type='LoggerHook', interval=%d))\n"
             "log_processor = dict(window_size=%d, by_epoch=True)\n"
             "vis_backends = [dict(type='LocalVisBackend')]\n")


def mm_config(model, opt, lr, clip, sched, epochs, interval=10, window=10):
    return MM_CONFIG % (model, opt, lr, ", clip_grad=dict(max_norm=%s)" % clip if clip else "",
                        sched, epochs, interval, window)


def mm_series(path, grad=False, val=None):
    s = {"train_loss": "%s: loss" % path, "lr": "%s: lr" % path}
    if grad:
        s["grad_norm"] = "%s: grad_norm" % path
    if val:
        s["val_metric"] = "%s: %s" % (path, val)
    return s


@run("MT01-dupes-transformer-adamw-warmup-cosine")
def mt01(out, name):
    spec = T.Spec(seed=9101, data=lambda: (*T.duplicate_tokens(2400, 6, 24, 9102),
                                           *T.duplicate_tokens(600, 6, 24, 9103)),
                  model=lambda: T.TinyTransformer(24, 6), loss=T.ce_loss, metric=T.ce_acc,
                  opt="adamw", lr=1e-3, weight_decay=0.05, epochs=12, batch=32, clip=1.0,
                  schedule=T.warmup_cosine(100, 900, floor=0.01))
    tr = T.fit(spec)
    rp = W.write_mmengine(out, tr, dict(
        work_dir="work_dirs/dupes_transformer", t0=1760002211, seed=201, step_s=0.03,
        interval=10, window=10, grad_norm=True, memory=412, val_metric="accuracy/top1",
        config=mm_config("TinyTransformer", "AdamW", 0.001, 1.0,
                         "[dict(type='LinearLR', start_factor=0.001, by_epoch=False, end=100), "
                         "dict(type='CosineAnnealingLR', by_epoch=False, begin=100, end=900, "
                         "eta_min=1e-05)]", 12)))
    notes = lb.healthy_notes(tr, 1, extra="AdamW 1e-3 (weight decay 0.05), linear warm-up over "
                             "100 iterations, cosine annealing per iteration; clip_grad max_norm "
                             "1 (grad_norm logged, the mean of the window); nothing was injected")
    return write_label(out, name, "mmengine", "healthy", tr, tr["S"],
                       mm_series(rp, grad=True, val="accuracy/top1"), mm_steps(10, 10), notes)


@run("MT02-signals-conv1d-sgd-lr-x40")
def mt02(out, name):
    K = 499

    def mk(hook):
        return T.Spec(seed=9201, data=lambda: (*T.signals(2400, 64, 9202),
                                               *T.signals(600, 64, 9203)),
                      model=lambda: T.Conv1dNet(), loss=T.ce_loss, metric=T.ce_acc, opt="sgd",
                      momentum=0.9, lr=0.02, epochs=10, batch=32, lr_hook=hook)
    tr = T.fit(mk(lambda s, lr: lr * 40 if s >= K else lr))
    cf = T.fit(mk(None))
    rp = W.write_mmengine(out, tr, dict(
        work_dir="work_dirs/signals_conv1d", t0=1760103342, seed=202, step_s=0.025,
        interval=10, window=10, grad_norm=False, memory=280, val_metric="accuracy/top1",
        config=mm_config("Conv1dNet", "SGD", 0.02, None, "[]", 10)))
    notes = TBG.late_div_notes(tr, K, "mmengine", "learning rate multiplied by 40 from iteration "
                               "%d (0.02 -> 0.8, sgd momentum 0.9; a resume that applied "
                               "--cfg-options optim_wrapper.optimizer.lr=0.8); chance level ln 4 "
                               "= 1.386" % (K + 1), cf)
    return write_label(out, name, "mmengine", "late_divergence", tr, tr["S"],
                       mm_series(rp, val="accuracy/top1"), mm_steps(10, 10), notes, onset=K + 1)


@run("MT03-spiral-mlp-adam-mm-batch")
def mt03(out, name):
    K = 419
    spec = T.Spec(seed=9301, data=lambda: (*T.spiral(2400, 3, 0.05, 9302),
                                           *T.spiral(600, 3, 0.05, 9303)),
                  model=lambda: T.MLP([2, 96, 96, 3]), loss=T.ce_loss, metric=T.ce_acc,
                  opt="adam", lr=2e-3, epochs=10, batch=32,
                  batch_hook=lambda s, x, y: (x * 50.0, y) if s == K else (x, y))
    tr = T.fit(spec)
    S = tr["S"]
    rp = W.write_mmengine(out, tr, dict(
        work_dir="work_dirs/spiral_mlp", t0=1760204453, seed=203, step_s=0.01,
        interval=10, window=10, grad_norm=False, memory=190, val_metric="accuracy/top1",
        config=mm_config("SpiralMLP", "Adam", 0.002, None, "[]", 10)))
    onset, window, rec, notes = TBG.spike_label(tr, K, "mmengine", "one batch whose coordinates "
                                                "are in the wrong unit (x50) at iteration %d"
                                                % (K + 1), S, S)
    return write_label(out, name, "mmengine", "transient_spike", tr, S,
                       mm_series(rp, val="accuracy/top1"), mm_steps(10, 10), notes, onset=onset,
                       window=window, recovers=rec)


@run("MT04-lowrank-autoencoder-sgd-multistep-gamma0")
def mt04(out, name):
    E0 = 3

    def mk(hook):
        return T.Spec(seed=9401, data=lambda: (T.lowrank(2048, 32, 4, 9402, mix_seed=9400), None,
                                               T.lowrank(512, 32, 4, 9403, mix_seed=9400), None),
                      model=lambda: T.AutoEncoder(act="tanh"), loss=T.ae_loss, opt="sgd",
                      momentum=0.9, lr=0.02, epochs=12, batch=32, lr_hook=hook)
    S = 64
    K = E0 * S
    tr = T.fit(mk(lambda s, lr: 0.0 if s >= K else lr))
    cf = T.fit(mk(None))
    rp = W.write_mmengine(out, tr, dict(
        work_dir="work_dirs/lowrank_ae", t0=1760305564, seed=204, step_s=0.008,
        interval=10, window=10, grad_norm=False, memory=150, val_metric="mse",
        config=mm_config("AutoEncoder", "SGD", 0.02, None,
                         "dict(type='MultiStepLR', by_epoch=True, milestones=[3], gamma=0.0)",
                         12)))
    notes = TBG.plateau_notes(tr, K, "mmengine", "MultiStepLR(milestones=[3], gamma=0.0) by epoch "
                              "(gamma meant 0.1): lr 0 from epoch 4 (1-based), iteration %d" %
                              (K + 1), cf)
    return write_label(out, name, "mmengine", "plateau", tr, S, mm_series(rp, val="mse"),
                       mm_steps(10, 10), notes, onset=K + 1)


adding_stream = TBG.adding_stream  # the TensorBoard corpus's, one arithmetic for both


@run("MT05-adding-relurnn-curriculum")
def mt05(out, name):
    K = 499
    spec = T.Spec(seed=9501, stream=adding_stream(K, 4, 60),
                  val_stream=lambda gen: T.adding_problem(256, 10, 9502), steps_per_epoch=50,
                  model=lambda: T.ReluRNNReg(hidden=32), loss=T.mse_loss, opt="adam", lr=1e-3,
                  epochs=20, clip=1.0)
    tr = T.fit(spec)
    rp = W.write_mmengine(out, tr, dict(
        work_dir="work_dirs/adding_rnn", t0=1760406675, seed=205, step_s=0.015,
        interval=10, window=10, grad_norm=True, memory=120, val_metric="mse",
        config=mm_config("ReluRNNReg", "Adam", 0.001, 1.0, "[]", 20)))
    notes = TBG.explosion_notes(tr, K, "mmengine", "the adding problem with a relu Elman RNN; "
                                "sequence length raised from 10 by 1 every 4 iterations up to 60 "
                                "from iteration %d (a curriculum hook); clip_grad max_norm 1, "
                                "grad_norm logged as the mean of the window" % (K + 1))
    return write_label(out, name, "mmengine", "grad_explosion", tr, tr["S"],
                       mm_series(rp, grad=True, val="mse"), mm_steps(10, 10), notes, onset=K + 1)


@run("MT06-wave-mlp-adam-log-zero-target")
def mt06(out, name):
    K = 329

    def hook(s, x, y):
        if s == K:
            y = y.clone()
            y[12, 0] = float("-inf")
        return x, y
    spec = T.Spec(seed=9601, data=lambda: (*T.wave_regression(2048, 9602),
                                           *T.wave_regression(512, 9603)),
                  model=lambda: T.MLP([1, 64, 64, 1], act="tanh"), loss=T.mse_loss, opt="adam",
                  lr=3e-3, epochs=10, batch=32, batch_hook=hook)
    tr = T.fit(spec)
    rp = W.write_mmengine(out, tr, dict(
        work_dir="work_dirs/wave_mlp", t0=1760507786, seed=206, step_s=0.007,
        interval=10, window=10, grad_norm=False, memory=96, val_metric="mse",
        config=mm_config("WaveMLP", "Adam", 0.003, None, "[]", 10)))
    notes = TBG.nonfinite_notes(tr, K, "mmengine", "one log-transformed target whose raw value "
                                "is 0 (log 0 = -inf) in the batch of iteration %d"
                                % (K + 1))
    notes += "; scalars.json holds bare Infinity / NaN (json.dump) from that window on"
    return write_label(out, name, "mmengine", "nonfinite", tr, tr["S"], mm_series(rp, val="mse"),
                       mm_steps(10, 10), notes, onset=K + 1)


# ================================================================= stable-baselines3
def ppo_cartpole(seed, iterations, n_steps=1024, batch=64, n_epochs=10, lr=1e-3, gamma=0.98,
                 lam=0.8, clip=0.2, ent_coef=0.0, vf_coef=0.5, max_grad_norm=0.5):
    """PPO (stable-baselines3's algorithm: rollouts of n_steps, GAE, n_epochs over minibatches,
    clipped surrogate, value loss, gradient clipping) on tasks.py's cart-pole with its
    actor-critic network. One row per iteration: the rollout's statistics and the train() values
    SB3 records."""
    torch.manual_seed(seed)
    env = T.CartPole(seed + 1)
    net = T.ActorCritic(hidden=64)
    opt = torch.optim.Adam(net.parameters(), lr=lr, eps=1e-5)
    gen = torch.Generator()
    gen.manual_seed(seed + 2)
    obs = env.reset()
    ep_ret, ep_len, ep_info = 0.0, 0, []
    rows, n_updates, total = [], 0, 0
    for it in range(1, iterations + 1):
        O, A, LP, V, R, D = [], [], [], [], [], []
        with torch.no_grad():
            for _ in range(n_steps):
                o = torch.tensor(obs, dtype=torch.float32)
                logits, v = net(o)
                probs = torch.softmax(logits, -1)
                a = int(torch.multinomial(probs, 1, generator=gen))
                O.append(obs)
                A.append(a)
                LP.append(math.log(float(probs[a])))
                V.append(float(v))
                obs, r, done = env.step(a)
                ep_ret += r
                ep_len += 1
                R.append(r)
                D.append(done)
                total += 1
                if done:
                    ep_info.append((ep_ret, ep_len))
                    obs = env.reset()
                    ep_ret, ep_len = 0.0, 0
            last_v = float(net(torch.tensor(obs, dtype=torch.float32))[1])
        adv = [0.0] * n_steps
        gae = 0.0
        for t in reversed(range(n_steps)):
            nv = last_v if t == n_steps - 1 else V[t + 1]
            nonterm = 0.0 if D[t] else 1.0
            delta = R[t] + gamma * nv * nonterm - V[t]
            gae = delta + gamma * lam * nonterm * gae
            adv[t] = gae
        ret = [a_ + v_ for a_, v_ in zip(adv, V)]
        recent = ep_info[-100:]
        row = {"iteration": it, "n_steps": n_steps, "total_timesteps": total,
               "ep_rew_mean": mean(e[0] for e in recent) if recent else None,
               "ep_len_mean": mean(e[1] for e in recent) if recent else None}
        Ot = torch.tensor(O, dtype=torch.float32)
        At = torch.tensor(A)
        LPt = torch.tensor(LP)
        ADt = torch.tensor(adv)
        RTt = torch.tensor(ret)
        Vt = torch.tensor(V)
        pg_l, v_l, ent_l, kls, clipf = [], [], [], [], []
        for _ in range(n_epochs):
            perm = torch.randperm(n_steps, generator=gen)
            for i in range(0, n_steps, batch):
                idx = perm[i:i + batch]
                logits, values = net(Ot[idx])
                logp_all = torch.log_softmax(logits, -1)
                logp = logp_all.gather(1, At[idx].unsqueeze(1)).squeeze(1)
                entropy = -(logp_all.exp() * logp_all).sum(-1)
                a_b = ADt[idx]
                a_b = (a_b - a_b.mean()) / (a_b.std() + 1e-8)
                ratio = torch.exp(logp - LPt[idx])
                pg = -torch.min(a_b * ratio, a_b * ratio.clamp(1 - clip, 1 + clip)).mean()
                vl = torch.nn.functional.mse_loss(RTt[idx], values)
                el = -entropy.mean()
                loss = pg + ent_coef * el + vf_coef * vl
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), max_grad_norm)
                opt.step()
                pg_l.append(pg.item())
                v_l.append(vl.item())
                ent_l.append(el.item())
                with torch.no_grad():
                    lr_ = logp - LPt[idx]
                    kls.append(((torch.exp(lr_) - 1) - lr_).mean().item())
                    clipf.append(((ratio - 1).abs() > clip).float().mean().item())
            n_updates += 1
        var_y = float(RTt.var(unbiased=False))
        ev = float("nan") if var_y == 0 else 1 - float((RTt - Vt).var(unbiased=False)) / var_y
        row["train"] = {"learning_rate": lr, "entropy_loss": mean(ent_l),
                        "policy_gradient_loss": mean(pg_l), "value_loss": mean(v_l),
                        "approx_kl": mean(kls), "clip_fraction": mean(clipf),
                        "loss": loss.item(), "explained_variance": ev, "n_updates": n_updates,
                        "clip_range": clip}
        rows.append(row)
    return rows


@run("ST01-cartpole-ppo")
def st01(out, name):
    rows = ppo_cartpole(10101, 40)
    rp = W.write_sb3(out, rows, dict(folder="ppo_cartpole_1", seed=301, step_s=0.0006))
    R = [r["ep_rew_mean"] for r in rows if r["ep_rew_mean"] is not None]
    TL = [r["train"]["loss"] for r in rows]
    VL = [r["train"]["value_loss"] for r in rows]
    PG = [r["train"]["policy_gradient_loss"] for r in rows]
    notes = ("PPO (n_steps 1024, batch 64, n_epochs 10, Adam 1e-3, gamma 0.98, GAE 0.8, clip 0.2, "
             "vf_coef 0.5, max_grad_norm 0.5) on the cart-pole of tasks.py (200-step cap); "
             "rollout/ep_rew_mean %s after the first rollout, %s at the end (highest %s); "
             "train/value_loss %s at its first row, highest %s, %s at the end (it grows with the "
             "returns); train/loss (the last minibatch's) from %s to %s, highest %s; "
             "train/policy_gradient_loss negative in %d of %d rows; %d rows, the last "
             "iteration's train/* never dumped (as SB3); nothing was injected"
             % (g(R[0]), g(R[-1]), g(max(R)), g(VL[0]), g(max(VL)), g(VL[-2]), g(TL[0]),
                g(TL[-2]), g(max(TL[:-1])), sum(1 for p in PG[:-1] if p < 0), len(PG) - 1,
                len(rows)))
    lab = {"run": name, "convention": "sb3", "fault": "healthy", "onset_step": None,
           "window": None, "recovers": False, "notes": notes,
           "first_step": rows[0]["total_timesteps"], "last_step": rows[-1]["total_timesteps"],
           "steps_per_epoch": 1024, "validation_period": None, "epochs": len(rows),
           "series": {"train_loss": "%s: train/loss" % rp,
                      "value_loss": "%s: train/value_loss" % rp,
                      "policy_loss": "%s: train/policy_gradient_loss" % rp,
                      "return": "%s: rollout/ep_rew_mean" % rp},
           "steps": "progress.csv 'time/total_timesteps' (1024 per row); time "
                    "'time/time_elapsed' in whole seconds since the start"}
    with open(os.path.join(out, "run.json"), "w") as f:
        json.dump(lab, f, indent=1)
        f.write("\n")
    return lab


# ================================================================= main
def main(argv):
    return TBG.generate(RUNS, argv, __doc__, name_width=48)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
