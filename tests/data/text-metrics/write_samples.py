#!/usr/bin/python3
"""Write the "written-*" sample jobs under jobs/ by really training a tiny model.

Run with Debian's python3 (it has python3-torch):   /usr/bin/python3 write_samples.py

Lightning, transformers, stable-baselines3, mmengine and Keras are not installable on
this machine, so each writer below reproduces the file-writing code path of the
library it stands for (quoted in the comments), fed by a real training loop:

  written-lightning-csvlogger  Lightning 2.x CSVLogger / _ExperimentWriter.save():
                               csv.DictWriter (CRLF), header = sorted keys, whole file
                               rewritten with the wider header when a key first appears.
  written-hf-trainer           transformers TrainerState.save_to_json():
                               json.dumps(asdict(state), indent=2, sort_keys=True) + "\n",
                               checkpoint-N/trainer_state.json at every save, and the
                               top-level trainer_state.json (trainer.save_state()) at the end.
  written-sb3-progress         stable-baselines3 CSVOutputFormat.write(): file opened "w+t",
                               keys appended when they first appear and earlier lines padded
                               with trailing separators.
  written-mmengine-scalars     mmengine LocalVisBackend.add_scalars(): json.dump(dict) + "\n"
                               appended to vis_data/scalars.json (and the same line to
                               vis_data/<timestamp>.json, as LoggerHook passes file_path).
  written-keras-cut-short      Keras 3 CSVLogger (csv.excel dialect, CRLF, "NA" for a key
                               missing in an epoch) captured while the last row is half
                               written; plus a hand-rolled history.csv written with
                               "\n".join (no final newline) and the job's dumped training
                               data (a CSV with no step column).
  written-jsonl-resumed        a hand-rolled loop appending json.dumps(record) + "\n" to
                               metrics.jsonl (each process first writes a metadata line with
                               no step), killed in the middle of a line, resumed from an
                               earlier checkpoint, and captured while writing a line.

Numbers come from real (tiny) training with torch.manual_seed fixed; times are real wall
clock, so a rerun changes time-like values.  The committed files are the samples; run
read_expected.py afterwards to refresh expected/*.json.
"""
import csv
import dataclasses
import json
import math
import os
import resource
import shutil
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
JOBS = os.path.join(HERE, "jobs")


def fresh_job(name):
    path = os.path.join(JOBS, name)
    if os.path.isdir(path):
        shutil.rmtree(path)
    os.makedirs(path)
    return path


def make_data(seed=0, n_train=256, n_val=64):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(8, 4, generator=g)
    x = torch.randn(n_train + n_val, 8, generator=g)
    y = (x @ w + 0.5 * torch.randn(n_train + n_val, 4, generator=g)).argmax(dim=1)
    return (x[:n_train], y[:n_train]), (x[n_train:], y[n_train:])


def make_model(seed):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))


def batches(x, y, bs, gen):
    perm = torch.randperm(len(x), generator=gen)
    for i in range(0, len(x), bs):
        idx = perm[i:i + bs]
        yield x[idx], y[idx]


def evaluate(model, x, y):
    with torch.no_grad():
        logits = model(x)
        return F.cross_entropy(logits, y).item(), (logits.argmax(1) == y).float().mean().item()


# --------------------------------------------------------------------------------------
# Lightning CSVLogger
# --------------------------------------------------------------------------------------
class LightningExperimentWriter:
    """lightning/fabric/loggers/csv_logs.py _ExperimentWriter (2.x), same logic."""

    NAME_METRICS_FILE = "metrics.csv"

    def __init__(self, log_dir):
        self.metrics = []
        self.metrics_keys = []
        self.log_dir = log_dir
        os.makedirs(log_dir, exist_ok=True)
        self.metrics_file_path = os.path.join(log_dir, self.NAME_METRICS_FILE)

    def log_metrics(self, metrics_dict, step=None):
        def _handle_value(value):
            if isinstance(value, torch.Tensor):
                return value.item()
            return value

        if step is None:
            step = len(self.metrics)
        metrics = {k: _handle_value(v) for k, v in metrics_dict.items()}
        metrics["step"] = step
        self.metrics.append(metrics)

    def save(self):
        if not self.metrics:
            return
        new_keys = self._record_new_keys()
        file_exists = os.path.isfile(self.metrics_file_path)
        if new_keys and file_exists:
            # we need to re-write the file if the keys (header) change
            self._rewrite_with_new_header(self.metrics_keys)
        with open(self.metrics_file_path, mode=("a" if file_exists else "w"), newline="") as file:
            writer = csv.DictWriter(file, fieldnames=self.metrics_keys)
            if not file_exists:
                writer.writeheader()
            writer.writerows(self.metrics)
        self.metrics = []

    def _record_new_keys(self):
        current_keys = set().union(*self.metrics)
        new_keys = current_keys - set(self.metrics_keys)
        self.metrics_keys.extend(new_keys)
        self.metrics_keys.sort()
        return new_keys

    def _rewrite_with_new_header(self, fieldnames):
        with open(self.metrics_file_path, "r", newline="") as file:
            metrics = list(csv.DictReader(file))
        with open(self.metrics_file_path, "w", newline="") as file:
            writer = csv.DictWriter(file, fieldnames=fieldnames)
            writer.writeheader()
            writer.writerows(metrics)


def write_lightning():
    job = fresh_job("written-lightning-csvlogger")
    log_dir = os.path.join(job, "lightning_logs", "version_0")
    exp = LightningExperimentWriter(log_dir)
    with open(os.path.join(log_dir, "hparams.yaml"), "w") as f:   # save_hparams_to_yaml({})
        f.write("{}\n")
    flush_every, log_every = 4, 2          # CSVLogger(flush_logs_every_n_steps=4), Trainer(log_every_n_steps=2)

    def log(metrics, step):                # CSVLogger.log_metrics
        exp.log_metrics(metrics, step)
        if step is not None and (step + 1) % flush_every == 0:
            exp.save()

    (xt, yt), (xv, yv) = make_data(0)
    model = make_model(1)
    opt = torch.optim.SGD(model.parameters(), lr=0.2)
    gen = torch.Generator().manual_seed(2)
    gstep = 0
    for epoch in range(4):
        losses = []
        for xb, yb in batches(xt, yt, 32, gen):
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            if (gstep + 1) % log_every == 0:
                log({"train_loss_step": loss.detach(), "epoch": epoch}, gstep)
            gstep += 1
        vloss, vacc = evaluate(model, xv, yv)
        log({"val_loss": torch.tensor(vloss), "val_acc": torch.tensor(vacc), "epoch": epoch}, gstep - 1)
        log({"train_loss_epoch": torch.tensor(sum(losses) / len(losses)), "epoch": epoch}, gstep - 1)
    exp.save()                             # CSVLogger.finalize()


# --------------------------------------------------------------------------------------
# Hugging Face Trainer output dir
# --------------------------------------------------------------------------------------
@dataclasses.dataclass
class TrainerState:                        # transformers.trainer_callback.TrainerState (4.4x)
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
    best_global_step: int = None
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


def write_hf():
    job = fresh_job("written-hf-trainer")
    out = os.path.join(job, "out")
    os.makedirs(out)
    (xt, yt), (xv, yv) = make_data(0)
    model = make_model(3)
    base_lr, max_steps, bs = 0.3, 30, 32
    logging_steps, eval_steps, save_steps = 5, 10, 10
    steps_per_epoch = len(xt) // bs
    nan_step = 15                          # one batch carries a NaN feature: loss is NaN at that step
    opt = torch.optim.SGD(model.parameters(), lr=base_lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: max(0.0, (max_steps - s) / max_steps))
    control = {"TrainerControl": {"args": {"should_epoch_stop": False, "should_evaluate": False,
                                           "should_log": False, "should_save": True,
                                           "should_training_stop": False}, "attributes": {}}}
    state = TrainerState(max_steps=max_steps, logging_steps=logging_steps, eval_steps=eval_steps,
                         save_steps=save_steps, train_batch_size=bs,
                         num_train_epochs=math.ceil(max_steps / steps_per_epoch), log_history=[],
                         stateful_callbacks=control)

    def log(logs):                         # Trainer.log
        if state.epoch is not None:
            logs["epoch"] = state.epoch
        state.log_history.append({**logs, **{"step": state.global_step}})

    gen = torch.Generator().manual_seed(4)
    tr_loss, total_loss, last_logged = 0.0, 0.0, 0
    flos_per_sample = 6 * sum(p.numel() for p in model.parameters())
    start = time.perf_counter()
    epoch = 0
    while state.global_step < max_steps:
        for i, (xb, yb) in enumerate(batches(xt, yt, bs, gen)):
            if state.global_step + 1 == nan_step:
                xb = xb.clone()
                xb[0, 0] = float("nan")
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            grad_norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            if torch.isfinite(grad_norm):  # like the AMP GradScaler: a step with inf/NaN grads is skipped
                opt.step()
            sched.step()
            tr_loss += loss.item()         # Trainer(logging_nan_inf_filter=False)
            state.global_step += 1
            state.epoch = epoch + (i + 1) / steps_per_epoch
            state.total_flos += float(flos_per_sample * len(xb))
            if state.global_step % logging_steps == 0:
                logs = {"loss": round(tr_loss / (state.global_step - last_logged), 4),
                        "grad_norm": grad_norm.item(),
                        "learning_rate": sched.get_last_lr()[0]}
                total_loss += tr_loss
                tr_loss, last_logged = 0.0, state.global_step
                log(logs)
            if state.global_step % eval_steps == 0:
                t0 = time.perf_counter()
                vloss, vacc = evaluate(model, xv, yv)
                rt = time.perf_counter() - t0
                metrics = {"eval_loss": vloss, "eval_accuracy": vacc, "eval_runtime": round(rt, 4),
                           "eval_samples_per_second": round(len(xv) / rt, 3),
                           "eval_steps_per_second": round(1 / rt, 3)}
                log(metrics)
                if state.best_metric is None or vloss < state.best_metric:
                    state.best_metric = vloss
                    state.best_global_step = state.global_step
                    state.best_model_checkpoint = "out/checkpoint-%d" % state.global_step
            if state.global_step % save_steps == 0:
                ckpt = os.path.join(out, "checkpoint-%d" % state.global_step)
                os.makedirs(ckpt)
                control["TrainerControl"]["args"]["should_training_stop"] = state.global_step >= max_steps
                state.save_to_json(os.path.join(ckpt, "trainer_state.json"))
            if state.global_step >= max_steps:
                break
        epoch += 1
    runtime = time.perf_counter() - start
    total_loss += tr_loss
    log({"train_runtime": round(runtime, 4),
         "train_samples_per_second": round(max_steps * bs / runtime, 3),
         "train_steps_per_second": round(max_steps / runtime, 3),
         "total_flos": state.total_flos,
         "train_loss": total_loss / state.global_step})
    state.save_to_json(os.path.join(out, "trainer_state.json"))   # trainer.save_state()


# --------------------------------------------------------------------------------------
# stable-baselines3 progress.csv
# --------------------------------------------------------------------------------------
class SB3CSVOutputFormat:
    """stable_baselines3/common/logger.py CSVOutputFormat.  SB3 takes the new keys as a
    set difference (order depends on string hashing); here they keep record order."""

    def __init__(self, filename):
        self.file = open(filename, "w+t")
        self.keys = []
        self.separator = ","

    def write(self, key_values):
        extra_keys = [k for k in key_values if k not in self.keys]
        if extra_keys:
            self.keys.extend(extra_keys)
            self.file.seek(0)
            lines = self.file.readlines()
            self.file.seek(0)
            for i, key in enumerate(self.keys):
                if i > 0:
                    self.file.write(",")
                self.file.write(key)
            self.file.write("\n")
            for line in lines[1:]:
                self.file.write(line[:-1])
                self.file.write(self.separator * len(extra_keys))
                self.file.write("\n")
        for i, key in enumerate(self.keys):
            if i > 0:
                self.file.write(",")
            value = key_values.get(key)
            if value is not None:
                self.file.write(str(value))
        self.file.write("\n")
        self.file.flush()

    def close(self):
        self.file.close()


def write_sb3():
    job = fresh_job("written-sb3-progress")
    os.makedirs(os.path.join(job, "ppo_corridor"))
    out = SB3CSVOutputFormat(os.path.join(job, "ppo_corridor", "progress.csv"))
    torch.manual_seed(5)
    n_pos, max_len = 8, 24
    policy = nn.Sequential(nn.Linear(n_pos, 32), nn.Tanh(), nn.Linear(32, 3))   # 2 logits + value
    lr, n_steps, n_epochs, mb, clip = 3e-3, 2048, 4, 256, 0.2
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    eye = torch.eye(n_pos)
    pos, ep_len, ep_ret = 0, 0, 0.0
    ep_info = []
    pending = {}                           # train/* values recorded after a dump: written at the next dump
    num_timesteps, n_updates = 0, 0
    start = time.time_ns()
    for iteration in range(1, 13):
        obs, acts, logps, vals, rews, dones = [], [], [], [], [], []
        for _ in range(n_steps):
            with torch.no_grad():
                out3 = policy(eye[pos])
                dist = torch.distributions.Categorical(logits=out3[:2])
                a = dist.sample()
            obs.append(pos)
            acts.append(a.item())
            logps.append(dist.log_prob(a).item())
            vals.append(out3[2].item())
            pos = max(0, min(n_pos - 1, pos + (1 if a.item() == 1 else -1)))
            ep_len += 1
            r = 1.0 if pos == n_pos - 1 else -0.05
            ep_ret += r
            done = pos == n_pos - 1 or ep_len >= max_len
            rews.append(r)
            dones.append(done)
            if done:
                ep_info.append((ep_ret, ep_len))
                pos, ep_len, ep_ret = 0, 0, 0.0
            num_timesteps += 1
        # returns / advantages (gamma 0.99, no GAE)
        ret, returns = 0.0, []
        for r, d in zip(reversed(rews), reversed(dones)):
            ret = r + (0.0 if d else 0.99 * ret)
            returns.append(ret)
        returns = torch.tensor(returns[::-1])
        values = torch.tensor(vals)
        adv = returns - values
        # dump_logs(): record time/* and rollout/*, then logger.dump(step=num_timesteps)
        elapsed = max((time.time_ns() - start) / 1e9, 1e-12)
        recent = ep_info[-100:]
        row = dict(pending)
        row["time/iterations"] = iteration
        if recent:
            row["rollout/ep_rew_mean"] = sum(e[0] for e in recent) / len(recent)
            row["rollout/ep_len_mean"] = sum(e[1] for e in recent) / len(recent)
        row["time/fps"] = int(num_timesteps / elapsed)
        row["time/time_elapsed"] = int(elapsed)
        row["time/total_timesteps"] = num_timesteps
        out.write(row)
        # train()
        o = eye[torch.tensor(obs)]
        a_t, old_logp = torch.tensor(acts), torch.tensor(logps)
        pg_l, v_l, ent_l, kls, clipf = [], [], [], [], []
        gen = torch.Generator().manual_seed(iteration)
        for _ in range(n_epochs):
            perm = torch.randperm(n_steps, generator=gen)
            for i in range(0, n_steps, mb):
                idx = perm[i:i + mb]
                out_b = policy(o[idx])
                dist = torch.distributions.Categorical(logits=out_b[:, :2])
                logp = dist.log_prob(a_t[idx])
                ratio = torch.exp(logp - old_logp[idx])
                a_b = adv[idx]
                a_b = (a_b - a_b.mean()) / (a_b.std() + 1e-8)
                pg = -torch.min(a_b * ratio, a_b * ratio.clamp(1 - clip, 1 + clip)).mean()
                vl = F.mse_loss(out_b[:, 2], returns[idx])
                ent = -dist.entropy().mean()
                loss = pg + 0.01 * ent + 0.5 * vl
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
                opt.step()
                pg_l.append(pg.item())
                v_l.append(vl.item())
                ent_l.append(ent.item())
                with torch.no_grad():
                    kls.append(((ratio - 1) - (logp - old_logp[idx])).mean().item())
                    clipf.append(((ratio - 1).abs() > clip).float().mean().item())
            n_updates += 1
        with torch.no_grad():
            ev = 1 - torch.var(returns - policy(o)[:, 2]) / torch.var(returns)
        pending = {"train/entropy_loss": sum(ent_l) / len(ent_l),
                   "train/policy_gradient_loss": sum(pg_l) / len(pg_l),
                   "train/value_loss": sum(v_l) / len(v_l),
                   "train/approx_kl": sum(kls) / len(kls),
                   "train/clip_fraction": sum(clipf) / len(clipf),
                   "train/loss": loss.item(),
                   "train/explained_variance": ev.item(),
                   "train/n_updates": n_updates,
                   "train/clip_range": clip,
                   "train/learning_rate": lr}
    out.close()


# --------------------------------------------------------------------------------------
# mmengine vis_data/scalars.json
# --------------------------------------------------------------------------------------
def write_mmengine():
    job = fresh_job("written-mmengine-scalars")
    timestamp = time.strftime("%Y%m%d_%H%M%S", time.localtime())
    vis = os.path.join(job, "work_dirs", "mlp_toy", timestamp, "vis_data")
    os.makedirs(vis)

    def add_scalars(scalar_dict, step):    # LocalVisBackend.add_scalars(..., file_path=f"{timestamp}.json")
        scalar_dict = dict(scalar_dict)
        scalar_dict.setdefault("step", step)
        for name in (timestamp + ".json", "scalars.json"):
            with open(os.path.join(vis, name), "a+") as f:
                json.dump(scalar_dict, f)
                f.write("\n")

    (xt, yt), (xv, yv) = make_data(0)
    model = make_model(6)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    gen = torch.Generator().manual_seed(7)
    interval, it = 4, 0
    win = {"loss": [], "time": [], "data_time": []}
    for epoch in range(1, 6):
        if epoch == 4:
            for g in opt.param_groups:   # MultiStepLR(milestones=[3], gamma=0.1), by epoch
                g["lr"] = 0.01
        t_end = time.perf_counter()
        for xb, yb in batches(xt, yt, 16, gen):
            t_data = time.perf_counter()
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            it += 1
            now = time.perf_counter()
            win["loss"].append(loss.item())
            win["data_time"].append(t_data - t_end)
            win["time"].append(now - t_end)
            t_end = now
            if it % interval == 0:       # LoggerHook(interval=4), LogProcessor window = interval
                tag = {"lr": opt.param_groups[0]["lr"],
                       "data_time": sum(win["data_time"]) / len(win["data_time"]),
                       "loss": sum(win["loss"]) / len(win["loss"]),
                       "time": sum(win["time"]) / len(win["time"]),
                       "epoch": epoch, "iter": it,
                       # mmengine reports torch.cuda.max_memory_allocated() in MB; on CPU the
                       # process peak RSS in MB stands in for it
                       "memory": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}
                add_scalars(tag, it)
                win = {"loss": [], "time": [], "data_time": []}
        t0 = time.perf_counter()
        _, vacc = evaluate(model, xv, yv)
        vt = time.perf_counter() - t0
        # ValLoop by epoch: LoggerHook.after_val_epoch logs with step=runner.epoch
        add_scalars({"accuracy/top1": vacc * 100, "data_time": vt / 4, "time": vt}, epoch)


# --------------------------------------------------------------------------------------
# Keras CSVLogger cut short + hand-rolled CSV without final newline + data dump
# --------------------------------------------------------------------------------------
def f32(v):
    return torch.tensor(v, dtype=torch.float32).item()


def write_keras_cut_short():
    job = fresh_job("written-keras-cut-short")
    (xt, yt), (xv, yv) = make_data(0)
    os.makedirs(os.path.join(job, "data"))
    with open(os.path.join(job, "data", "train.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["x%d" % i for i in range(8)] + ["label"])
        for xi, yi in zip(xt[:40].tolist(), yt[:40].tolist()):
            w.writerow(["%.6f" % v for v in xi] + [yi])
    model = make_model(8)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(9)
    rows = []
    csv_path = os.path.join(job, "training_log.csv")
    csv_file = open(csv_path, "w", newline="")
    keys, writer = None, None
    for epoch in range(7):
        tl, ta, n = 0.0, 0.0, 0
        for xb, yb in batches(xt, yt, 32, gen):
            logits = model(xb)
            loss = F.cross_entropy(logits, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            tl += loss.item() * len(xb)
            ta += (logits.argmax(1) == yb).float().sum().item()
            n += len(xb)
        logs = {"accuracy": f32(ta / n), "loss": f32(tl / n), "learning_rate": f32(0.01)}
        if (epoch + 1) % 2 == 0:           # model.fit(validation_freq=2)
            vl, va = evaluate(model, xv, yv)
            logs["val_accuracy"], logs["val_loss"] = f32(va), f32(vl)
        rows.append((epoch, logs))
        # keras.callbacks.CSVLogger.on_epoch_end
        if keys is None:
            keys = sorted(logs.keys())
            if not any(k.startswith("val_") for k in keys):
                keys.extend(["val_" + k for k in keys])
        if writer is None:
            class CustomDialect(csv.excel):
                delimiter = ","
            writer = csv.DictWriter(csv_file, fieldnames=["epoch"] + keys, dialect=CustomDialect)
            writer.writeheader()
        row = {"epoch": epoch}
        row.update((k, logs.get(k, "NA")) for k in keys)
        writer.writerow(row)
        csv_file.flush()
    csv_file.close()
    # The copy of training_log.csv taken while the 7th row was being written:
    # everything up to the middle of that row, no final newline.
    data = open(csv_path, "rb").read()
    last_start = data.rstrip(b"\r\n").rfind(b"\n") + 1
    last = data[last_start:]
    cut = last.index(b",", last.index(b",") + 1) + 4      # two cells and part of the third
    with open(csv_path, "wb") as f:
        f.write(data[:last_start] + last[:cut])
    # a hand-rolled history.csv written at the end with "\n".join(...): no final newline
    lines = ["epoch,train_loss,train_acc"]
    lines += ["%d,%s,%s" % (e, repr(l["loss"]), repr(l["accuracy"])) for e, l in rows]
    with open(os.path.join(job, "history.csv"), "w") as f:
        f.write("\n".join(lines))


# --------------------------------------------------------------------------------------
# JSON lines: killed mid-line, resumed from an earlier checkpoint, captured mid-line
# --------------------------------------------------------------------------------------
def write_jsonl_resumed():
    job = fresh_job("written-jsonl-resumed")
    path = os.path.join(job, "logs", "metrics.jsonl")
    os.makedirs(os.path.dirname(path))
    (xt, yt), (xv, yv) = make_data(0)
    every, ckpt_every, bs = 5, 10, 32
    steps_per_epoch = len(xt) // bs
    saved = {}

    def run(model, opt, start_step, stop_step, kill_at=None):
        gen = torch.Generator().manual_seed(100 + start_step)
        step = start_step
        with open(path, "a") as f:
            # a first line per process: run metadata, no step
            f.write(json.dumps({"event": "resume" if start_step else "start", "from_step": start_step,
                                "config": {"lr": 0.1, "batch_size": bs}, "timestamp": time.time()}) + "\n")
            f.flush()
            while step < stop_step:
                for xb, yb in batches(xt, yt, bs, gen):
                    loss = F.cross_entropy(model(xb), yb)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    step += 1
                    if step % ckpt_every == 0:
                        saved[step] = ({k: v.clone() for k, v in model.state_dict().items()},
                                       opt.state_dict())
                    if step % every == 0:
                        rec = {"step": step, "epoch": step / steps_per_epoch, "phase": "train",
                               "loss": loss.item(), "lr": opt.param_groups[0]["lr"],
                               "timestamp": time.time()}
                        line = json.dumps(rec) + "\n"
                        if step == kill_at:            # the process dies inside write()
                            f.write(line[:len(line) // 2])
                            return
                        f.write(line)
                        f.flush()
                    if step % (2 * ckpt_every) == 0:
                        vl, va = evaluate(model, xv, yv)
                        f.write(json.dumps({"step": step, "phase": "eval", "eval_loss": vl,
                                            "eval_acc": va, "timestamp": time.time()}) + "\n")
                        f.flush()
                    if step >= stop_step:
                        return

    model = make_model(10)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    run(model, opt, 0, 40, kill_at=30)               # killed while writing the step-30 line
    model = make_model(10)                           # restart: resume from checkpoint at step 10
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sd, osd = saved[10]
    model.load_state_dict(sd)
    opt.load_state_dict(osd)
    run(model, opt, 10, 45, kill_at=45)              # the copy is taken while step 45 is written


def main():
    torch.set_num_threads(1)
    write_lightning()
    write_hf()
    write_sb3()
    write_mmengine()
    write_keras_cut_short()
    write_jsonl_resumed()


if __name__ == "__main__":
    main()
