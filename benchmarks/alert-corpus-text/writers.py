"""Write a training trace as text metrics, the way each library writes its files.

  hf         transformers Trainer: <output_dir>/checkpoint-N/trainer_state.json at every save
             (TrainerState.save_to_json: json.dumps(asdict(state), indent=2, sort_keys=True)),
             older checkpoints rotated out by save_total_limit, and the top-level
             trainer_state.json (trainer.save_state()) plus train_results.json / all_results.json
             (trainer.save_metrics) at the end
  lightning  Lightning 2.x CSVLogger: lightning_logs/version_N/metrics.csv (_ExperimentWriter:
             csv.DictWriter, CRLF, header = the sorted keys, the whole file rewritten under the
             wider header when a key first appears) + hparams.yaml
  keras      tf.keras / Keras 3 CSVLogger: one row per epoch, ["epoch"] + sorted(keys), "NA" for
             a key an epoch lacks (val_* keys added up front when the first epoch has none)
  sb3        stable-baselines3 CSVOutputFormat: progress.csv, keys appended as they first
             appear and the earlier lines padded with separators
  mmengine   mmengine LoggerHook + LocalVisBackend: <work_dir>/<timestamp>/vis_data/scalars.json
             (and the identical <timestamp>.json), one json.dump(dict) line per logged iteration
             (window means over LogProcessor's window_size) and one per validation (step = epoch)

Every number comes from the trace tasks.py's training produced; durations (eval_runtime,
time/time_elapsed, mmengine's time and data_time) come from the seeded simulated clock of
../alert-corpus/layouts.py, so two generations are byte-identical.
"""
import csv
import dataclasses
import json
import math
import os
import shutil
import time

from layouts import Clock, f32


def f32_str(x):
    """str(numpy.float32(x)): the shortest text that reads back as that float32"""
    if not math.isfinite(x):
        return str(x)
    v = f32(x)
    for p in range(1, 10):
        s = "%.*g" % (p, v)
        if f32(float(s)) == v:
            return repr(float(s)) if "e" not in s else s
    return repr(v)


def _window_mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


# ------------------------------------------------------------------ Hugging Face Trainer
@dataclasses.dataclass
class TrainerState:                      # transformers.trainer_callback.TrainerState (4.4x)
    epoch: float = None
    global_step: int = 0
    max_steps: int = 0
    logging_steps: int = 500
    eval_steps: int = 500
    save_steps: int = 500
    train_batch_size: int = None
    num_train_epochs: int = 0
    num_input_tokens_seen: int = 0
    total_flos: float = 0
    log_history: list = None
    best_metric: float = None
    best_model_checkpoint: str = None
    is_local_process_zero: bool = True
    is_world_process_zero: bool = True
    is_hyper_param_search: bool = False
    trial_name: str = None
    trial_params: dict = None
    stateful_callbacks: dict = None

    def save_to_json(self, json_path):
        json_string = json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True) + "\n"
        with open(json_path, "w", encoding="utf-8") as f:
            f.write(json_string)


def write_hf(root, trace, cfg):
    """cfg: seed, step_s, output_dir, logging_steps, eval_steps, save_steps, save_total_limit,
    batch, metric ('accuracy' or None), train_samples, eval_s, model_config (dict, written to
    each checkpoint's config.json). Returns the run's path (relative to root)."""
    S = trace["S"]
    steps = trace["steps"]
    evals = {e["after"] + 1: e for e in trace["evals"]}
    out = os.path.join(root, cfg.get("output_dir", "out"))
    os.makedirs(out)
    clock = Clock(0.0, cfg["seed"], cfg["step_s"])
    L, E, SV = cfg["logging_steps"], cfg["eval_steps"], cfg["save_steps"]
    max_steps = len(steps)
    control = {"TrainerControl": {"args": {"should_epoch_stop": False, "should_evaluate": False,
                                           "should_log": False, "should_save": True,
                                           "should_training_stop": False}, "attributes": {}}}
    state = TrainerState(max_steps=max_steps, logging_steps=L, eval_steps=E, save_steps=SV,
                         train_batch_size=cfg["batch"], num_train_epochs=trace["epochs"],
                         log_history=[], stateful_callbacks=control)

    def log(logs):                       # Trainer.log
        if state.epoch is not None:
            logs["epoch"] = state.epoch
        state.log_history.append({**logs, **{"step": state.global_step}})

    saved = []
    tr_loss, total_loss, last = 0.0, 0.0, 0
    for i, rec in enumerate(steps):
        if i % S == 0 and i > 0:
            clock.wait(cfg.get("epoch_overhead_s", 0.05))
        clock.step()
        loss = rec["loss"]
        # Trainer(logging_nan_inf_filter=True): a non-finite step loss adds the average of the
        # window so far instead (layouts.write_hf does the same arithmetic)
        if not math.isfinite(loss):
            tr_loss = tr_loss + tr_loss / (1 + i - last)
        else:
            tr_loss = tr_loss + f32(loss)
        state.global_step = gs = i + 1
        state.epoch = (i // S) + (i % S + 1) / S
        if gs % L == 0:                  # _maybe_log_save_evaluate: log, evaluate, save
            log({"loss": round(tr_loss / (gs - last), 4), "grad_norm": f32(rec["grad_norm"]),
                 "learning_rate": rec["lr_next"]})
            total_loss += tr_loss
            tr_loss, last = 0.0, gs
        if gs in evals:
            e = evals[gs]
            rt = cfg.get("eval_s", 0.03) * math.exp(clock.rng.gauss(0, 0.08))
            clock.wait(rt)
            m = {"eval_loss": f32(e["loss"])}
            if cfg.get("metric"):
                m["eval_" + cfg["metric"]] = e["metric"]
            m.update({"eval_runtime": round(rt, 4),
                      "eval_samples_per_second": round(e["samples"] / rt, 3),
                      "eval_steps_per_second": round(e["batches"] / rt, 3)})
            log(m)
        if gs % SV == 0 or gs == max_steps:     # save_strategy="steps" also saves at the end
            ck = os.path.join(out, "checkpoint-%d" % gs)
            os.makedirs(ck)
            control["TrainerControl"]["args"]["should_training_stop"] = gs >= max_steps
            state.save_to_json(os.path.join(ck, "trainer_state.json"))
            with open(os.path.join(ck, "config.json"), "w") as f:
                f.write(json.dumps(cfg["model_config"], indent=2, sort_keys=True) + "\n")
            saved.append(ck)
            limit = cfg.get("save_total_limit")
            while limit and len(saved) > limit:     # Trainer._rotate_checkpoints
                shutil.rmtree(saved.pop(0))
    total_loss += tr_loss
    clock.wait(0.25)
    runtime = round(clock.t, 4)
    n_samples = cfg["train_samples"] * trace["epochs"]
    metrics = {"train_runtime": runtime,
               "train_samples_per_second": round(n_samples / runtime, 3),
               "train_steps_per_second": round(max_steps / runtime, 3),
               "total_flos": float(state.total_flos),
               "train_loss": total_loss / max_steps}
    log(dict(metrics))
    state.save_to_json(os.path.join(out, "trainer_state.json"))     # trainer.save_state()
    metrics["epoch"] = state.epoch
    metrics["train_samples"] = cfg["train_samples"]
    for name in ("train_results.json", "all_results.json"):         # trainer.save_metrics
        with open(os.path.join(out, name), "w") as f:
            json.dump(metrics, f, indent=4, sort_keys=True)
    return os.path.relpath(os.path.join(out, "trainer_state.json"), root)


# ------------------------------------------------------------------ Lightning CSVLogger
class LightningExperimentWriter:
    """lightning/fabric/loggers/csv_logs.py _ExperimentWriter (2.x)."""

    def __init__(self, log_dir):
        self.metrics = []
        self.metrics_keys = []
        self.metrics_file_path = os.path.join(log_dir, "metrics.csv")

    def log_metrics(self, metrics_dict, step):
        metrics = dict(metrics_dict)
        metrics["step"] = step
        self.metrics.append(metrics)

    def save(self):
        if not self.metrics:
            return
        current = set().union(*self.metrics)
        new_keys = current - set(self.metrics_keys)
        self.metrics_keys.extend(new_keys)
        self.metrics_keys.sort()
        exists = os.path.isfile(self.metrics_file_path)
        if new_keys and exists:          # _rewrite_with_new_header
            with open(self.metrics_file_path, "r", newline="") as f:
                rows = list(csv.DictReader(f))
            with open(self.metrics_file_path, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=self.metrics_keys)
                w.writeheader()
                w.writerows(rows)
        with open(self.metrics_file_path, "a" if exists else "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=self.metrics_keys)
            if not exists:
                w.writeheader()
            w.writerows(self.metrics)
        self.metrics = []


def write_lightning(root, trace, cfg):
    """cfg: version, log_every (Trainer(log_every_n_steps)), flush_every (CSVLogger
    flush_logs_every_n_steps, 100), lr_tag ('lr-Adam' ... from LearningRateMonitor, or None),
    grad_norms ('total' or None: lightning.pytorch.utilities.grad_norm logged in
    on_before_optimizer_step), val_every (check_val_every_n_epoch), hparams (dict)."""
    S = trace["S"]
    steps = trace["steps"]
    evals = {e["after"]: e for e in trace["evals"]}
    d = os.path.join(root, "lightning_logs", "version_%d" % cfg.get("version", 0))
    os.makedirs(d)
    with open(os.path.join(d, "hparams.yaml"), "w") as f:
        for k, v in cfg["hparams"].items():
            f.write("%s: %s\n" % (k, v))
    exp = LightningExperimentWriter(d)
    N = cfg.get("log_every", 50)
    flush = cfg.get("flush_every", 100)

    def log(metrics, step):              # CSVLogger.log_metrics
        exp.log_metrics(metrics, step)
        if (step + 1) % flush == 0:
            exp.save()

    ep_losses, ep_n = [], []
    for i, rec in enumerate(steps):
        epoch = i // S
        due = (i + 1) % N == 0           # _LoggerConnector.should_update_logs
        if due and cfg.get("lr_tag"):    # LearningRateMonitor.on_train_batch_start
            log({cfg["lr_tag"]: rec["lr"]}, i)
        if due:                          # update_train_step_metrics, epoch added
            m = {"train_loss_step": f32(rec["loss"])}
            if cfg.get("grad_norms") == "total":
                m["grad_2.0_norm_total"] = f32(rec["grad_norm"])
            m["epoch"] = epoch
            log(m, i)
        ep_losses.append(f32(rec["loss"]) * rec["n"])
        ep_n.append(rec["n"])
        if i % S == S - 1:
            if i in evals:               # the validation loop, at the epoch's last batch
                log({"val_loss": f32(evals[i]["loss"]), "epoch": epoch}, i)
            # on_train_epoch_end, logged at the same step (FitLoop decrements it for this)
            log({"train_loss_epoch": f32(sum(ep_losses) / sum(ep_n)), "epoch": epoch}, i)
            ep_losses, ep_n = [], []
    exp.save()                           # CSVLogger.finalize
    return os.path.relpath(exp.metrics_file_path, root)


# ------------------------------------------------------------------ Keras CSVLogger
def write_keras(root, trace, cfg):
    """cfg: filename, metric ('accuracy', 'mae' or None), lr_key ('lr': tf.keras 2
    LearningRateScheduler, a numpy float32; 'learning_rate': Keras 3, a Python float; None),
    validation_freq (model.fit(validation_freq=...))."""
    S = trace["S"]
    steps = trace["steps"]
    evals = {e["after"]: e for e in trace["evals"]}
    path = os.path.join(root, cfg.get("filename", "training_log.csv"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    metric = cfg.get("metric")
    vf = cfg.get("validation_freq", 1)
    keys, writer = None, None
    with open(path, "w", newline="") as fh:
        tot_l = tot_m = 0.0
        k = 0
        for i, rec in enumerate(steps):
            if i % S == 0:
                tot_l = tot_m = 0.0
                k = 0
            # Keras' Mean metrics: float32 running totals over the epoch
            tot_l = f32(tot_l + rec["loss"] * rec["n"])
            if metric:
                tot_m = f32(tot_m + rec["metric"] * rec["n"])
            k += rec["n"]
            if i % S != S - 1:
                continue
            e = i // S
            logs = {"loss": f32(tot_l / k)}
            if metric:
                logs[metric] = f32(tot_m / k)
            if (e + 1) % vf == 0:
                ev = evals[i]
                logs["val_loss"] = f32(ev["loss"])
                if metric:
                    logs["val_" + metric] = f32(ev["metric"])
            if cfg.get("lr_key") == "lr":
                logs["lr"] = f32_str(rec["lr"])       # str(np.float32): the CSV cell as written
            elif cfg.get("lr_key"):
                logs[cfg["lr_key"]] = f32(rec["lr"])
            # keras.callbacks.CSVLogger.on_epoch_end
            if keys is None:
                keys = sorted(logs.keys())
                if not any(x.startswith("val_") for x in keys):
                    keys.extend(["val_" + x for x in keys])
            if writer is None:
                writer = csv.DictWriter(fh, fieldnames=["epoch"] + keys, dialect=csv.excel)
                writer.writeheader()
            row = {"epoch": e}
            row.update((x, logs.get(x, "NA")) for x in keys)
            writer.writerow(row)
    return os.path.relpath(path, root)


# ------------------------------------------------------------------ stable-baselines3
class SB3CSVOutputFormat:
    """stable_baselines3/common/logger.py CSVOutputFormat.write (SB3 takes the new keys as a set
    difference, in hash order; here they keep the order they were recorded in)."""

    def __init__(self, filename):
        self.file = open(filename, "w+t")
        self.keys = []

    def write(self, key_values):
        extra = [k for k in key_values if k not in self.keys]
        if extra:
            self.keys.extend(extra)
            self.file.seek(0)
            lines = self.file.readlines()
            self.file.seek(0)
            self.file.write(",".join(self.keys) + "\n")
            for line in lines[1:]:
                self.file.write(line[:-1] + "," * len(extra) + "\n")
        cells = []
        for k in self.keys:
            v = key_values.get(k)
            cells.append("" if v is None else (v if isinstance(v, str) else str(v)))
        self.file.write(",".join(cells) + "\n")
        self.file.flush()

    def close(self):
        self.file.close()


def write_sb3(root, rows, cfg):
    """rows: one per PPO iteration (rollout then train), from generate.ppo_cartpole.
    cfg: folder, seed, step_s (simulated seconds per environment step)."""
    d = os.path.join(root, cfg.get("folder", "logs"))
    os.makedirs(d)
    out = SB3CSVOutputFormat(os.path.join(d, "progress.csv"))
    clock = Clock(0.0, cfg["seed"], cfg["step_s"])
    pending = {}
    for r in rows:
        clock.step(scale=r["n_steps"])
        kv = dict(pending)               # train/* recorded after the previous dump
        kv["time/iterations"] = r["iteration"]
        if r["ep_rew_mean"] is not None:
            kv["rollout/ep_rew_mean"] = r["ep_rew_mean"]
            kv["rollout/ep_len_mean"] = r["ep_len_mean"]
        kv["time/fps"] = int(r["total_timesteps"] / clock.t)
        kv["time/time_elapsed"] = int(clock.t)
        kv["time/total_timesteps"] = r["total_timesteps"]
        out.write(kv)                    # logger.dump(step=num_timesteps)
        clock.step(scale=r["n_steps"] * 0.6)
        t = r["train"]
        pending = {"train/learning_rate": t["learning_rate"],
                   "train/entropy_loss": t["entropy_loss"],
                   "train/policy_gradient_loss": t["policy_gradient_loss"],
                   "train/value_loss": t["value_loss"],
                   "train/approx_kl": f32_str(t["approx_kl"]),
                   "train/clip_fraction": t["clip_fraction"],
                   "train/loss": f32(t["loss"]),
                   "train/explained_variance": f32(t["explained_variance"]),
                   "train/n_updates": t["n_updates"],
                   "train/clip_range": t["clip_range"]}
    out.close()                          # the last train/* values are never dumped
    return os.path.relpath(os.path.join(d, "progress.csv"), root)


# ------------------------------------------------------------------ mmengine
def write_mmengine(root, trace, cfg):
    """cfg: work_dir, t0 (the timestamp folder), seed, step_s, interval (LoggerHook),
    window (LogProcessor window_size), grad_norm (OptimWrapper clip_grad: 'grad_norm' logged),
    memory (MB), val_metric ('accuracy/top1' = accuracy x 100, or a name given the validation
    loss, e.g. 'mse'), config (text of the config file copied beside vis_data)."""
    S = trace["S"]
    steps = trace["steps"]
    evals = {e["after"]: e for e in trace["evals"]}
    stamp = time.strftime("%Y%m%d_%H%M%S", time.gmtime(cfg["t0"]))
    base = os.path.join(root, cfg["work_dir"], stamp)
    vis = os.path.join(base, "vis_data")
    os.makedirs(vis)
    with open(os.path.join(vis, "config.py"), "w") as f:
        f.write(cfg["config"])
    files = [os.path.join(vis, stamp + ".json"), os.path.join(vis, "scalars.json")]
    for p in files:
        open(p, "w").close()

    def add_scalars(d, step):            # LocalVisBackend.add_scalars(..., file_path=<stamp>.json)
        d = dict(d)
        d.setdefault("step", step)
        line = json.dumps(d) + "\n"
        for p in files:
            with open(p, "a+") as f:
                f.write(line)

    clock = Clock(0.0, cfg["seed"], cfg["step_s"])
    W, I = cfg.get("window", 10), cfg.get("interval", 10)
    hist = {"loss": [], "time": [], "data_time": [], "grad_norm": []}
    mem = cfg.get("memory", 300)
    for i, rec in enumerate(steps):
        e = i // S
        t_before = clock.t
        clock.step()
        dt = (clock.t - t_before) * 0.08 * math.exp(clock.rng.gauss(0, 0.3))
        hist["time"].append(clock.t - t_before)
        hist["data_time"].append(dt)
        hist["loss"].append(f32(rec["loss"]))
        hist["grad_norm"].append(f32(rec["grad_norm"]))
        for k in hist:
            del hist[k][:-W]
        it = i + 1
        if it % I == 0 or (i % S == S - 1 and S <= I):   # LoggerHook.after_train_iter
            tag = {"lr": rec["lr"], "data_time": _window_mean(hist["data_time"])}
            if cfg.get("grad_norm"):
                tag["grad_norm"] = _window_mean(hist["grad_norm"])
            tag.update({"loss": _window_mean(hist["loss"]), "time": _window_mean(hist["time"]),
                        "epoch": e + 1, "iter": it, "memory": mem + (it * 7919) % 23})
            add_scalars(tag, it)
        if i in evals:                   # ValLoop after the epoch: LoggerHook.after_val_epoch
            ev = evals[i]
            t0 = clock.t
            clock.wait(cfg.get("eval_s", 0.05))
            v = ev["metric"] * 100 if cfg["val_metric"] == "accuracy/top1" else ev["loss"]
            add_scalars({cfg["val_metric"]: v,
                         "data_time": (clock.t - t0) * 0.1 / ev["batches"],
                         "time": (clock.t - t0) / ev["batches"]}, e + 1)
    return os.path.relpath(files[1], root)
