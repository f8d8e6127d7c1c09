#!/usr/bin/python3
"""Train the fresh alert corpus' runs and write them as the frameworks write their logs.

usage: generate.py OUT_DIR [--only NAME[,NAME...]] [--list]

A held-out corpus: runs the rules were not tuned on. Every run is a real PyTorch training on one
CPU thread from fixed seeds, made with the tasks, models and training loop of
../alert-corpus/tasks.py (plus fresh_tasks.py: a REINFORCE agent, a freezing hook), written as
TensorBoard event files by ../alert-corpus/layouts.py or as text metrics by
../alert-corpus-text/writers.py, and labelled with ../alert-corpus/labels.py and the label helpers
of the two corpora's generate.py, from the injection and the per-step trace only. All imported,
none copied.
"""
import importlib.util
import json
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
TB_CORPUS = os.path.join(os.path.dirname(HERE), "alert-corpus")
TEXT_CORPUS = os.path.join(os.path.dirname(HERE), "alert-corpus-text")
sys.path.insert(0, HERE)
sys.path.insert(1, TB_CORPUS)
sys.path.insert(2, TEXT_CORPUS)
from debian_torch import import_torch    # noqa: E402  (../alert-corpus/debian_torch.py)

torch = import_torch()
import fresh_tasks as FT                 # noqa: E402
import labels as lb                      # noqa: E402  (../alert-corpus/labels.py)
import layouts                           # noqa: E402  (../alert-corpus/layouts.py)
import tasks as T                        # noqa: E402  (../alert-corpus/tasks.py)
import writers as W                      # noqa: E402  (../alert-corpus-text/writers.py)
from labels import g, mean, median       # noqa: E402


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# The text corpus' generate.py loads the TensorBoard corpus' generate.py and widens its step
# offsets to mmengine and SB3: take both from it, so that every label here is written by the same
# code as the other corpora' labels.
TXG = _load("alert_corpus_text_generate", os.path.join(TEXT_CORPUS, "generate.py"))
TBG = TXG.TBG

torch.set_num_threads(1)

RUNS = {}


def run(name):
    def deco(fn):
        RUNS[name] = fn
        return fn
    return deco


losses = TBG.losses
gnorms = TBG.gnorms


def seg_mean(xs, a, b):
    return mean(xs[a:b])


# ================================================================= TensorBoard: Lightning
@run("FL01-signals-conv1d-sgd-steplr-gamma01")
def fl01(out, name):
    E0 = 6
    spec = T.Spec(seed=12101, data=lambda: (*T.signals(2400, 64, 12102),
                                            *T.signals(600, 64, 12103)),
                  model=lambda: T.Conv1dNet(), loss=T.ce_loss, opt="sgd", momentum=0.9,
                  lr=0.05, epochs=10, batch=32, schedule=T.step_decay(75 * E0, 0.1))
    tr = T.fit(spec)
    S = tr["S"]
    layouts.write_lightning(out, tr, dict(t0=1751203318.42, host="gpu-node-21", pid=30412,
                                          version=0, seed=101, step_s=0.024, lr_tag="lr-SGD",
                                          hparams={"lr": 0.05, "momentum": 0.9, "step_size": E0,
                                                   "gamma": 0.1}))
    L = losses(tr)
    K = E0 * S
    notes = lb.healthy_notes(tr, 0, extra="SGD lr 0.05 momentum 0.9, StepLR(step_size=%d, "
                             "gamma=0.1) stepped per epoch: lr 0.005 from step %d (an epoch "
                             "boundary); training loss mean %s over the 50 steps before it, %s "
                             "over the 50 after, %s over the last 100 (it flattens at the lower "
                             "lr); nothing was injected"
                             % (E0, K, g(seg_mean(L, K - 50, K)), g(seg_mean(L, K, K + 50)),
                                g(mean(L[-100:]))))
    series = dict(TBG.LIGHTNING_SERIES, lr="lr-SGD")
    return TBG.write_label(out, name, "lightning", "healthy", tr, S, series,
                           TBG.STEPS_DESC["lightning"], notes)


@run("FL02-signals-conv1d-adam-backbone-frozen")
def fl02(out, name):
    K = 300

    def mk(hook):
        return T.Spec(seed=12201, data=lambda: (*T.signals(2400, 64, 12202),
                                                *T.signals(600, 64, 12203)),
                      model=lambda: T.Conv1dNet(), loss=T.ce_loss, opt="adam", lr=1e-3,
                      epochs=12, batch=32, step_hook=hook)
    tr = T.fit(mk(FT.freeze_at(K, keep=("fc.",))))
    cf = T.fit(mk(None))
    S = tr["S"]
    layouts.write_lightning(out, tr, dict(t0=1752114906.07, host="ws-okafor", pid=7713,
                                          version=3, seed=102, step_s=0.026,
                                          hparams={"lr": 0.001, "width": 16,
                                                   "freeze_backbone_at": K}))
    notes = TBG.plateau_notes(tr, K, "lightning", "both convolutions frozen (requires_grad=False: "
                              "a fine-tuning callback's freeze_backbone meant for a pretrained "
                              "checkpoint) while the linear head keeps training", cf)
    return TBG.write_label(out, name, "lightning", "plateau", tr, S, TBG.LIGHTNING_SERIES,
                           TBG.STEPS_DESC["lightning"], notes, onset=K)


# ================================================================= TensorBoard: HF Trainer
@run("FH01-spiral-mlp-adamw-b16-warmup-peak")
def fh01(out, name):
    LOG, EV, WU = 5, 100, 100
    spec = T.Spec(seed=13101, data=lambda: (*T.spiral(1600, 3, 0.08, 13102),
                                            *T.spiral(400, 3, 0.08, 13103)),
                  model=lambda: T.MLP([2, 64, 64, 3]), loss=T.ce_loss, metric=T.ce_acc,
                  opt="adamw", lr=2e-2, weight_decay=0.01, epochs=8, batch=16, clip=1.0,
                  schedule=T.linear_decay(800, warmup=WU), eval_at=EV)
    tr = T.fit(spec)
    layouts.write_hf(out, tr, dict(t0=1753040218.66, host="a100-spot-7", pid=21977, seed=103,
                                   step_s=0.009, logging_steps=LOG, eval_steps=EV,
                                   metric="accuracy", train_samples=1600, eval_s=0.015,
                                   args=TBG.hf_args(0.02, 8, 16, "linear", WU, LOG, EV, 13101,
                                                    wd=0.01)))
    notes = lb.healthy_notes(tr, 1, extra="batches of 16, AdamW warm-up over %d steps to a high "
                             "peak lr of 0.02 then linear decay; logging_steps %d: train/loss is "
                             "the mean of 5 noisy batches; nothing was injected" % (WU, LOG))
    return TBG.write_label(out, name, "hf", "healthy", tr, EV, TBG.HF_SERIES,
                           TBG.hf_steps(LOG, EV), notes)


@run("FH02-spiral4-mlp256-adamw-n160-overfit")
def fh02(out, name):
    LOG, EV = 5, 20
    spec = T.Spec(seed=13201, data=lambda: (*T.spiral(160, 4, 0.12, 13202, turns=1.25, flip=0.12),
                                            *T.spiral(1000, 4, 0.12, 13203, turns=1.25,
                                                      flip=0.12)),
                  model=lambda: T.MLP([2, 256, 256, 4], act="gelu"), loss=T.ce_loss,
                  metric=T.ce_acc, opt="adamw", lr=3e-3, epochs=80, batch=16, clip=1.0,
                  eval_at=EV)
    tr = T.fit(spec)
    layouts.write_hf(out, tr, dict(t0=1754418830.12, host="ml-worker-11", pid=5530, seed=104,
                                   step_s=0.008, logging_steps=LOG, eval_steps=EV,
                                   metric="accuracy", train_samples=160, eval_s=0.02,
                                   args=TBG.hf_args(0.003, 80, 16, "constant", 0, LOG, EV,
                                                    13201)))
    onset, notes = TBG.overfit_label(tr, "hf", "160 training points of a 4-arm spiral (1.25 "
                                     "turns), 12% of the labels redrawn, a 2-256-256-4 gelu MLP, "
                                     "AdamW 3e-3 without weight decay for 80 epochs of 10 steps: "
                                     "it memorises them")
    return TBG.write_label(out, name, "hf", "overfit", tr, EV, TBG.HF_SERIES,
                           TBG.hf_steps(LOG, EV), notes, onset=onset)


# ================================================================= TensorBoard: Keras
KERAS_MLP = [("Dense", "dense"), ("Dense", "dense_1"), ("Dense", "dense_2")]
KERAS_CNN = [("Conv1D", "conv1d"), ("MaxPooling1D", "max_pooling1d"), ("Conv1D", "conv1d_1"),
             ("GlobalAveragePooling1D", "global_average_pooling1d"), ("Dense", "dense")]


@run("FK01-moons-mlp16-adam-flip25-floor")
def fk01(out, name):
    spec = T.Spec(seed=14101, data=lambda: (*T.two_moons(3200, 0.2, 14102, flip=0.25),
                                            *T.two_moons(800, 0.2, 14103, flip=0.25)),
                  model=lambda: T.MLP([2, 16, 2]), loss=T.ce_loss, metric=T.ce_acc, opt="adam",
                  lr=5e-3, epochs=8, batch=32)
    tr = T.fit(spec)
    S = tr["S"]
    layouts.write_keras(out, tr, dict(t0=1755302117.0, host="jupyter-77ab0", pid=318,
                                      file_index=0, seed=105, step_s=0.004, metric="accuracy",
                                      batch_log=True, lr_tag=None, layers=KERAS_MLP[:2]))
    L = losses(tr)
    notes = lb.healthy_notes(tr, 1, "iteration", extra="two moons with 25%% of the labels "
                             "flipped (train and validation): the best achievable loss is about "
                             "the entropy of the flips, and a 2-16-2 MLP reaches it within an "
                             "epoch and stays there (per-step loss mean %s over iterations "
                             "101-200, %s over the last 100); nothing was injected"
                             % (g(seg_mean(L, 100, 200)), g(mean(L[-100:]))))
    return TBG.write_label(out, name, "keras", "healthy", tr, S, TBG.keras_series(True),
                           TBG.keras_steps(S), notes)


@run("FK02-signals-conv1d-adam-earlystop")
def fk02(out, name):
    spec = T.Spec(seed=14201, data=lambda: (*T.signals(1600, 64, 14202, noise=0.5),
                                            *T.signals(480, 64, 14203, noise=0.5)),
                  model=lambda: T.Conv1dNet(), loss=T.ce_loss, metric=T.ce_acc, opt="adam",
                  lr=3e-3, epochs=25, batch=32, early_stop=3, early_stop_delta=0.005)
    tr = T.fit(spec)
    S = tr["S"]
    layouts.write_keras(out, tr, dict(t0=1756011442.0, host="DESKTOP-R2K9QX", pid=9124,
                                      file_index=2, seed=106, step_s=0.02, metric="accuracy",
                                      batch_log=False, lr_tag="learning_rate",
                                      layers=KERAS_CNN))
    ev = tr["evals"]
    best, best_e = float("inf"), None
    for e, x in enumerate(ev):
        if x["loss"] < best - 0.005:
            best, best_e = x["loss"], e
    notes = lb.healthy_notes(tr, 1, "iteration", extra="EarlyStopping(monitor='val_loss', "
                             "patience=3, min_delta=0.005): training stopped after epoch %d of "
                             "25, 3 epochs after the last improvement by more than 0.005 (epoch "
                             "%d, validation loss %s); validation losses of the last 4 epochs %s; "
                             "nothing was injected"
                             % (tr["epochs"] - 1, best_e, g(best),
                                ", ".join(g(x["loss"]) for x in ev[-4:])))
    return TBG.write_label(out, name, "keras", "healthy", tr, S, TBG.keras_series(False),
                           TBG.keras_steps(S), notes)


@run("FK03-signals-conv1d-sgd-lr5")
def fk03(out, name):
    spec = T.Spec(seed=14301, data=lambda: (*T.signals(2400, 64, 14302),
                                            *T.signals(600, 64, 14303)),
                  model=lambda: T.Conv1dNet(), loss=T.ce_loss, metric=T.ce_acc, opt="sgd",
                  momentum=0.9, lr=5.0, epochs=6, batch=32)
    tr = T.fit(spec)
    S = tr["S"]
    layouts.write_keras(out, tr, dict(t0=1757129380.0, host="colab-a8f1", pid=1207,
                                      file_index=0, seed=107, step_s=0.022, metric="accuracy",
                                      batch_log=True, lr_tag=None, layers=KERAS_CNN))
    notes = TBG.early_div_notes(tr, "keras", "SGD(learning_rate=5.0, momentum=0.9) (meant 0.05); "
                                "chance level for 4 classes is ln 4 = 1.386")
    return TBG.write_label(out, name, "keras", "early_divergence", tr, S, TBG.keras_series(True),
                           TBG.keras_steps(S), notes, onset=1)


# ================================================================= TensorBoard: plain SummaryWriter
def write_reinforce(root, recs, cfg):
    """CleanRL-style tags for a REINFORCE agent (no critic, so no value loss): one row per
    episode, step = the episode index; layouts.py's writer, clock and scalar encoding."""
    name = "%s_%s" % (layouts._stamp(cfg["t0"], "%b%d_%H-%M-%S"), cfg["host"])
    path = os.path.join(root, "runs", name, "events.out.tfevents.%d.%s.%d.0"
                        % (int(cfg["t0"]), cfg["host"], cfg["pid"]))
    clock = layouts.Clock(cfg["t0"], cfg["seed"], cfg["step_s"])
    w = layouts._writer(path, round(cfg["t0"], 3), layouts.TORCH_SOURCE)
    clock.wait(0.1)
    for ep, r in enumerate(recs):
        clock.step(scale=r["length"] / 40.0)
        for tag, v in (("charts/episodic_return", r["return"]),
                       ("charts/episodic_length", float(r["length"])),
                       ("charts/learning_rate", r["lr"]),
                       ("losses/policy_loss", r["policy_loss"]),
                       ("losses/entropy", r["entropy"])):
            layouts._scalar(w, clock, ep, tag, v)
    w.close()


@run("FT01-cartpole-reinforce")
def ft01(out, name):
    recs = FT.cartpole_reinforce(15101, 300, lr=1e-2)
    write_reinforce(out, recs, dict(t0=1758220931.5, host="ws-okafor", pid=44102, seed=108,
                                    step_s=0.025))
    P = [r["policy_loss"] for r in recs]
    R = [r["return"] for r in recs]
    neg = sum(1 for p in P if p < 0)
    trace = {"steps": [{"loss": p} for p in P], "evals": [], "S": 1, "epochs": len(recs)}
    notes = ("REINFORCE without a baseline (PyTorch's reinforce.py: returns normalised over the "
             "episode, loss = -sum log pi * G), Adam 1e-2, one update per episode on the "
             "hand-written cart-pole (200-step cap); policy loss %s over the first 10 episodes, "
             "%s over the last 50, between %s and %s, negative in %d of %d episodes (it is a sum "
             "over the episode's steps, so its size follows the episode length); episode return "
             "mean %s over the first 50 episodes, %s over the last 50; nothing was injected"
             % (g(mean(P[:10])), g(mean(P[-50:])), g(min(P)), g(max(P)), neg, len(P),
                g(mean(R[:50])), g(mean(R[-50:]))))
    series = {"policy_loss": "losses/policy_loss", "entropy": "losses/entropy",
              "return": "charts/episodic_return"}
    return TBG.write_label(out, name, "torch", "healthy", trace, 1, series,
                           "the episode index (one policy update per episode)", notes)


@run("FT02-moons-mlp-adam-easy-gradnorm")
def ft02(out, name):
    spec = T.Spec(seed=15201, data=lambda: (*T.two_moons(2048, 0.08, 15202),
                                            *T.two_moons(512, 0.08, 15203)),
                  model=lambda: T.MLP([2, 64, 64, 2]), loss=T.ce_loss, opt="adam", lr=1e-3,
                  epochs=10, batch=32)
    tr = T.fit(spec)
    S = tr["S"]
    layouts.write_torch(out, tr, dict(t0=1759013377.2, host="mbp-m2", pid=80211, seed=109,
                                      step_s=0.004, grad_tag="grad_norm", lr_tag="lr"))
    L = losses(tr)
    G = gnorms(tr)
    notes = lb.healthy_notes(tr, 0, extra="two well separated moons (noise 0.08): Adam 1e-3 "
                             "drives the loss towards 0 and a single point near the boundary "
                             "makes a batch's loss many times the others' (largest per-step loss "
                             "over the last 300 steps %s against a median of %s); gradient norm "
                             "median %s over the first 100 steps, %s over the last 100; nothing "
                             "was injected"
                             % (g(max(L[-300:])), g(median(L[-300:])), g(median(G[:100])),
                                g(median(G[-100:]))))
    series = dict(TBG.TORCH_SERIES, grad_norm="grad_norm", lr="lr")
    return TBG.write_label(out, name, "torch", "healthy", tr, S, series,
                           TBG.STEPS_DESC["torch"], notes)


@run("FT03-lowrank-autoencoder-sgd-lr-x150")
def ft03(out, name):
    K, F = 450, 150.0

    def mk(hook):
        return T.Spec(seed=15301, data=lambda: (T.lowrank(2048, 32, 4, 15302, mix_seed=15300),
                                                None,
                                                T.lowrank(512, 32, 4, 15303, mix_seed=15300),
                                                None),
                      model=lambda: T.AutoEncoder(act="tanh"), loss=T.ae_loss, opt="sgd",
                      momentum=0.9, lr=0.02, epochs=12, batch=32, lr_hook=hook)
    tr = T.fit(mk(lambda s, lr: lr * F if s >= K else lr))
    cf = T.fit(mk(None))
    S = tr["S"]
    layouts.write_torch(out, tr, dict(t0=1760324410.9, host="hpc-n044", pid=61230, seed=110,
                                      step_s=0.007, grad_tag="grad_norm", lr_tag="lr"))
    notes = TBG.late_div_notes(tr, K, "torch", "learning rate multiplied by 150 from step %d "
                               "(0.02 -> 3.0, sgd momentum 0.9: a sweep's lr override applied "
                               "to a resumed run)" % K, cf)
    series = dict(TBG.TORCH_SERIES, grad_norm="grad_norm", lr="lr")
    return TBG.write_label(out, name, "torch", "late_divergence", tr, S, series,
                           TBG.STEPS_DESC["torch"], notes, onset=K)


@run("FT04-sumsign-relurnn48-curriculum")
def ft04(out, name):
    K, EV = 450, 90
    spec = T.Spec(seed=15401, stream=TBG.sumsign_stream(K, 4, 72, l0=12),
                  val_stream=lambda gen: T.running_sum_sign(256, 12, 15402), steps_per_epoch=45,
                  model=lambda: T.ReluRNNTagger(hidden=48), loss=T.ce_loss, opt="adam",
                  lr=2e-3, epochs=20, clip=0.5, eval_at=EV)
    tr = T.fit(spec)
    layouts.write_torch(out, tr, dict(t0=1761448203.3, host="gpu-node-21", pid=9051, seed=111,
                                      step_s=0.02, grad_tag="grad_norm", lr_tag="lr"))
    notes = TBG.explosion_notes(tr, K, "torch", "a relu Elman RNN (48 units) tags each position "
                                "of a +-1 stream with the sign of its running sum; sequence length "
                                "raised from 12 by 1 every 4 steps up to 72 from step %d (a "
                                "curriculum; the batch of the onset is the first longer one); "
                                "gradients clipped at 0.5, the logged norm is the one before "
                                "clipping" % K)
    series = dict(TBG.TORCH_SERIES, grad_norm="grad_norm", lr="lr")
    return TBG.write_label(out, name, "torch", "grad_explosion", tr, EV, series,
                           TBG.STEPS_DESC["torch"], notes, onset=K)


# ================================================================= text: HF trainer_state.json
@run("FHT01-signals-conv1d-adamw-warmup-restarts")
def fht01(out, name):
    LOG, EV, WU, CYC = 10, 75, 50, 350
    restarts = T.cosine_restarts(CYC)
    spec = T.Spec(seed=16101, data=lambda: (*T.signals(2400, 64, 16102),
                                            *T.signals(600, 64, 16103)),
                  model=lambda: T.Conv1dNet(), loss=T.ce_loss, metric=T.ce_acc, opt="adamw",
                  lr=4e-3, weight_decay=0.01, epochs=10, batch=32, clip=1.0, eval_at=EV,
                  schedule=lambda s: s / WU if s < WU else restarts(s - WU))
    tr = T.fit(spec)
    rp = W.write_hf(out, tr, dict(seed=112, step_s=0.025, output_dir="signals-cnn",
                                  logging_steps=LOG, eval_steps=EV, save_steps=150,
                                  save_total_limit=2, batch=32, metric="accuracy",
                                  train_samples=2400, eval_s=0.03,
                                  model_config=TXG.hf_model_config("Conv1dClassifier",
                                                                   width=16)))
    notes = lb.healthy_notes(tr, 1, extra="AdamW 4e-3, lr_scheduler_type="
                             "'cosine_with_restarts' with warmup_steps %d and num_cycles 2: the "
                             "lr goes back to its peak at step %d; nothing was injected"
                             % (WU, WU + CYC + 1))
    return TXG.write_label(out, name, "hf", "healthy", tr, EV, TXG.hf_series(rp),
                           TXG.hf_steps(LOG, EV), notes)


@run("FHT02-lowrank-autoencoder-adamw-batch-x40")
def fht02(out, name):
    LOG, EV, K = 5, 64, 500
    spec = T.Spec(seed=16201, data=lambda: (T.lowrank(2048, 32, 4, 16202, mix_seed=16200), None,
                                            T.lowrank(512, 32, 4, 16203, mix_seed=16200), None),
                  model=lambda: T.AutoEncoder(act="tanh"), loss=T.ae_loss, opt="adamw",
                  lr=1e-3, epochs=12, batch=32, clip=1.0, eval_at=EV,
                  batch_hook=lambda s, x, y: (x * 40.0, y) if s == K else (x, y))
    tr = T.fit(spec)
    S = tr["S"]
    rp = W.write_hf(out, tr, dict(seed=113, step_s=0.008, output_dir="ae-lowrank",
                                  logging_steps=LOG, eval_steps=EV, save_steps=256,
                                  save_total_limit=2, batch=32, metric=None, train_samples=2048,
                                  eval_s=0.01, model_config=TXG.hf_model_config(
                                      "AutoEncoder", hidden=24, code=4)))
    onset, window, rec, notes = TBG.spike_label(tr, K, "hf", "one batch of un-normalised rows "
                                                "(inputs and reconstruction targets x40) at step "
                                                "%d" % (K + 1), S, EV)
    return TXG.write_label(out, name, "hf", "transient_spike", tr, EV, TXG.hf_series(rp),
                           TXG.hf_steps(LOG, EV), notes, onset=onset, window=window,
                           recovers=rec)


# ================================================================= text: Lightning CSVLogger
@run("FLT01-wave-mlp-sgd-multistep-gamma01")
def flt01(out, name):
    N, M = 10, (4, 8)
    spec = T.Spec(seed=17101, data=lambda: (*T.wave_regression(2048, 17102),
                                            *T.wave_regression(512, 17103)),
                  model=lambda: T.MLP([1, 64, 64, 1], act="tanh"), loss=T.mse_loss, opt="sgd",
                  momentum=0.9, lr=0.05, epochs=12, batch=32,
                  schedule=lambda s: 0.1 ** sum(1 for m in M if s >= 64 * m))
    tr = T.fit(spec)
    rp = W.write_lightning(out, tr, dict(version=0, log_every=N, lr_tag="lr-SGD",
                                         hparams={"lr": 0.05, "momentum": 0.9,
                                                  "milestones": list(M), "gamma": 0.1}))
    L = losses(tr)
    notes = lb.healthy_notes(tr, 0, extra="SGD 0.05 momentum 0.9, MultiStepLR(milestones=[4, 8], "
                             "gamma=0.1) per epoch (steps 256 and 512); training loss mean %s over "
                             "steps 206-255, %s over 256-305, %s over 462-511, %s over 512-561, "
                             "%s over the last 100: after the second drop it is flat; nothing was "
                             "injected" % (g(seg_mean(L, 206, 256)), g(seg_mean(L, 256, 306)),
                                           g(seg_mean(L, 462, 512)), g(seg_mean(L, 512, 562)),
                                           g(mean(L[-100:]))))
    return TXG.write_label(out, name, "lightning", "healthy", tr, tr["S"],
                           TXG.lightning_series(rp, lr="lr-SGD"), TXG.lightning_steps(N), notes)


@run("FLT02-adding-lstm-adam-nan-value")
def flt02(out, name):
    N, K = 5, 413

    def hook(s, x, y):
        if s == K:
            x = x.clone()
            x[9, 4, 0] = float("nan")
        return x, y
    spec = T.Spec(seed=17201, data=lambda: (*T.adding_problem(2400, 12, 17202),
                                            *T.adding_problem(600, 12, 17203)),
                  model=lambda: T.LSTMReg(hidden=24), loss=T.mse_loss, opt="adam", lr=3e-3,
                  epochs=8, batch=32, batch_hook=hook)
    tr = T.fit(spec)
    rp = W.write_lightning(out, tr, dict(version=2, log_every=N, grad_norms="total",
                                         hparams={"lr": 0.003, "hidden": 24, "seq_len": 12}))
    notes = TBG.nonfinite_notes(tr, K, "lightning", "one NaN value (a gap in a sensor series "
                                "that the dataset did not fill) in one sequence of the batch of "
                                "step %d" % K)
    notes += ("; log_every_n_steps 5: the first row holding nan is step %d (train_loss_step and "
              "grad_2.0_norm_total)" % (K + (N - 1 - K % N)))
    return TXG.write_label(out, name, "lightning", "nonfinite", tr, tr["S"],
                           TXG.lightning_series(rp, grad=True), TXG.lightning_steps(N), notes,
                           onset=K)


# ================================================================= text: Keras CSVLogger
@run("FKT01-spiral-mlp-adam-lambdalr-typo")
def fkt01(out, name):
    E0 = 3

    def mk(hook):
        return T.Spec(seed=18101, data=lambda: (*T.spiral(2048, 3, 0.05, 18102),
                                                *T.spiral(512, 3, 0.05, 18103)),
                      model=lambda: T.MLP([2, 64, 64, 3]), loss=T.ce_loss, metric=T.ce_acc,
                      opt="adam", lr=3e-3, epochs=14, batch=32, lr_hook=hook)
    S = 64
    K = E0 * S
    tr = T.fit(mk(lambda s, lr: lr * 1e-5 if s >= K else lr))
    cf = T.fit(mk(None))
    rp = W.write_keras(out, tr, dict(filename="logs/training_log.csv", metric="accuracy",
                                     lr_key="learning_rate"))
    notes = TBG.plateau_notes(tr, K, "keras", "LearningRateScheduler(lambda epoch, lr: lr if "
                              "epoch < 3 else 3e-8) (Keras 3; meant 3e-4): the lr is ~0 from "
                              "epoch %d, iteration %d" % (E0, K + 1), cf)
    L = losses(tr)
    notes += ("; epoch means (the CSV's loss column) %s"
              % ", ".join(g(mean(L[e * S:(e + 1) * S])) for e in range(tr["epochs"])))
    return TXG.write_label(out, name, "keras", "plateau", tr, S, TXG.keras_series(rp),
                           TXG.keras_steps(S), notes, onset=K + 1)


# ================================================================= text: stable-baselines3
@run("FST01-cartpole-ppo-n512-ent")
def fst01(out, name):
    N = 512
    rows = TXG.ppo_cartpole(19101, 48, n_steps=N, batch=64, n_epochs=6, lr=7e-4, gamma=0.99,
                            lam=0.95, ent_coef=0.01)
    rp = W.write_sb3(out, rows, dict(folder="PPO_3", seed=114, step_s=0.0007))
    R = [r["ep_rew_mean"] for r in rows if r["ep_rew_mean"] is not None]
    TL = [r["train"]["loss"] for r in rows[:-1]]    # the last iteration's train/* is not dumped
    VL = [r["train"]["value_loss"] for r in rows[:-1]]
    PG = [r["train"]["policy_gradient_loss"] for r in rows[:-1]]
    notes = ("PPO (n_steps %d, batch 64, n_epochs 6, Adam 7e-4, gamma 0.99, GAE 0.95, clip 0.2, "
             "ent_coef 0.01, vf_coef 0.5, max_grad_norm 0.5) on the cart-pole of tasks.py; "
             "rollout/ep_rew_mean %s after the first rollout, %s at the end (highest %s); "
             "train/value_loss %s at its first row, highest %s, %s at its last (it grows with "
             "the returns); train/loss (the last minibatch's) from %s to %s, highest %s; "
             "train/policy_gradient_loss negative in %d of %d rows; nothing was injected"
             % (N, g(R[0]), g(R[-1]), g(max(R)), g(VL[0]), g(max(VL)), g(VL[-1]), g(TL[0]),
                g(TL[-1]), g(max(TL)), sum(1 for p in PG if p < 0), len(PG)))
    lab = {"run": name, "convention": "sb3", "fault": "healthy", "onset_step": None,
           "window": None, "recovers": False, "notes": notes,
           "first_step": rows[0]["total_timesteps"], "last_step": rows[-1]["total_timesteps"],
           "steps_per_epoch": N, "validation_period": None, "epochs": len(rows),
           "series": {"train_loss": "%s: train/loss" % rp,
                      "value_loss": "%s: train/value_loss" % rp,
                      "policy_loss": "%s: train/policy_gradient_loss" % rp,
                      "return": "%s: rollout/ep_rew_mean" % rp},
           "steps": "progress.csv 'time/total_timesteps' (%d per row)" % N}
    with open(os.path.join(out, "run.json"), "w") as f:
        json.dump(lab, f, indent=1)
        f.write("\n")
    return lab


# ================================================================= text: mmengine scalars.json
@run("FMT01-spiral-mlp-sgd-linearlr-multistep")
def fmt01(out, name):
    WU, M = 50, (5, 8)
    spec = T.Spec(seed=20101, data=lambda: (*T.spiral(2400, 3, 0.05, 20102),
                                            *T.spiral(600, 3, 0.05, 20103)),
                  model=lambda: T.MLP([2, 128, 128, 3]), loss=T.ce_loss, metric=T.ce_acc,
                  opt="sgd", momentum=0.9, lr=0.1, epochs=10, batch=32,
                  schedule=lambda s: (min(1.0, 0.001 + s / WU)
                                      * 0.1 ** sum(1 for m in M if s >= 75 * m)))
    tr = T.fit(spec)
    rp = W.write_mmengine(out, tr, dict(
        work_dir="work_dirs/spiral_mlp_sgd", t0=1762000411, seed=115, step_s=0.012,
        interval=10, window=10, grad_norm=False, memory=230, val_metric="accuracy/top1",
        config=TXG.mm_config("SpiralMLP", "SGD", 0.1, None,
                             "[dict(type='LinearLR', start_factor=0.001, by_epoch=False, "
                             "end=%d), dict(type='MultiStepLR', by_epoch=True, milestones=%s, "
                             "gamma=0.1)]" % (WU, list(M)), 10)))
    notes = lb.healthy_notes(tr, 1, extra="SGD 0.1 momentum 0.9, LinearLR warm-up over %d "
                             "iterations then MultiStepLR(milestones=[5, 8], gamma=0.1) by epoch "
                             "(iterations 376 and 601); nothing was injected" % WU)
    return TXG.write_label(out, name, "mmengine", "healthy", tr, tr["S"],
                           TXG.mm_series(rp, val="accuracy/top1"), TXG.mm_steps(10, 10), notes)


@run("FMT02-signals-deepsigmoid-mlp-clipgrad")
def fmt02(out, name):
    def data():
        x, y = T.signals(1024, 64, 20202)
        xv, yv = T.signals(512, 64, 20203)
        return x.flatten(1), y, xv.flatten(1), yv
    EV = 40
    spec = T.Spec(seed=20201, data=data,
                  model=lambda: T.MLP([64] + [32] * 11 + [4], act="sigmoid"), loss=T.ce_loss,
                  metric=T.ce_acc, opt="sgd", lr=0.5, epochs=400, batch=1024, clip=5.0,
                  eval_at=EV)
    tr = T.fit(spec)
    rp = W.write_mmengine(out, tr, dict(
        work_dir="work_dirs/signals_deep_mlp", t0=1762900522, seed=116, step_s=0.01,
        interval=10, window=10, grad_norm=True, memory=88, val_metric="accuracy/top1",
        config=TXG.mm_config("DeepSigmoidMLP", "SGD", 0.5, 5.0, "[]", 400).replace(
            "val_interval=1", "val_interval=%d" % EV)))
    notes = TBG.vanishing_notes(tr, "mmengine", "a 64-32x11-4 MLP with sigmoid activations (12 "
                                "linear layers) on flattened waveforms, full-batch sgd lr 0.5 (one "
                                "iteration an epoch, each logged), clip_grad max_norm 5 (grad_norm "
                                "logged, the mean of the window), val_interval 40 epochs",
                                "ln 4 = 1.386 is chance level for four balanced classes")
    return TXG.write_label(out, name, "mmengine", "grad_vanishing", tr, EV,
                           TXG.mm_series(rp, grad=True, val="accuracy/top1"),
                           TXG.mm_steps(10, 10), notes, onset=1)


# ================================================================= main
def main(argv):
    return TBG.generate(RUNS, argv, __doc__, name_width=46)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
