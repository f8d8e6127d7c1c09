"""Synthetic tasks, small models and the training loops that produce a run's trace.

Every number a layout later writes comes from the trace built here: the loss each optimizer
step computed, the gradient norm before any clipping, the learning rate the step used, the
validation loss of each evaluation. Nothing is drawn afterwards.
"""
import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


# =============================================================== data
def _gen(seed):
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def two_moons(n, noise, seed, flip=0.0):
    g = _gen(seed)
    y = torch.randint(0, 2, (n,), generator=g)
    t = torch.rand(n, generator=g) * math.pi
    x0 = torch.where(y == 0, torch.cos(t), 1.0 - torch.cos(t))
    x1 = torch.where(y == 0, torch.sin(t), 0.5 - torch.sin(t))
    x = torch.stack([x0, x1], 1) + noise * torch.randn(n, 2, generator=g)
    x = (x - torch.tensor([0.5, 0.25])) / torch.tensor([0.85, 0.5])
    if flip:
        m = torch.rand(n, generator=g) < flip
        y = torch.where(m, 1 - y, y)
    return x, y


def spiral(n, classes, noise, seed, turns=1.0, flip=0.0):
    g = _gen(seed)
    y = torch.randint(0, classes, (n,), generator=g)
    r = torch.rand(n, generator=g)
    theta = y.float() * 2 * math.pi / classes + r * 2 * math.pi * turns
    x = torch.stack([r * torch.cos(theta), r * torch.sin(theta)], 1) * 2.0
    x = x + noise * torch.randn(n, 2, generator=g)
    if flip:
        m = torch.rand(n, generator=g) < flip
        y = torch.where(m, torch.randint(0, classes, (n,), generator=g), y)
    return x, y


def wave_regression(n, seed, noise=0.1, lo=-3.0, hi=3.0):
    """y = sin(2x) + 0.5 cos(5x) * exp(-x^2/4) + 0.2 x; x uniform."""
    g = _gen(seed)
    x = lo + (hi - lo) * torch.rand(n, 1, generator=g)
    y = torch.sin(2 * x) + 0.5 * torch.cos(5 * x) * torch.exp(-x * x / 4) + 0.2 * x
    return x, y + noise * torch.randn(n, 1, generator=g)


def poly_features(x, degree):
    return torch.cat([x ** k for k in range(1, degree + 1)], 1)


def signals(n, length, seed, noise=0.35, flip=0.0):
    """Four waveform classes (sine, square, sawtooth, triangle), random period/phase/amplitude."""
    g = _gen(seed)
    y = torch.randint(0, 4, (n,), generator=g)
    period = 6 + 18 * torch.rand(n, 1, generator=g)
    phase = torch.rand(n, 1, generator=g)
    amp = 0.6 + 0.8 * torch.rand(n, 1, generator=g)
    t = torch.arange(length).float().unsqueeze(0)
    u = torch.frac(t / period + phase)                       # 0..1 within each period
    sine = torch.sin(2 * math.pi * u)
    square = torch.where(u < 0.5, torch.ones_like(u), -torch.ones_like(u))
    saw = 2 * u - 1
    tri = 1 - 4 * torch.abs(u - 0.5)
    waves = torch.stack([sine, square, saw, tri], 0)        # 4, n, L
    x = waves[y, torch.arange(n)] * amp
    x = x + noise * torch.randn(n, length, generator=g)
    if flip:
        m = torch.rand(n, generator=g) < flip
        y = torch.where(m, torch.randint(0, 4, (n,), generator=g), y)
    return x.unsqueeze(1), y                                 # n, 1, L


def lowrank(n, dim, rank, seed, noise=0.05, mix_seed=None):
    """Points near a curved rank-`rank` manifold in `dim` dimensions (autoencoder data)."""
    g = _gen(seed)
    gm = _gen(mix_seed if mix_seed is not None else seed + 1)
    a = torch.randn(rank, dim, generator=gm) / math.sqrt(rank)
    b = torch.randn(rank, dim, generator=gm) / math.sqrt(rank)
    z = torch.randn(n, rank, generator=g)
    x = torch.tanh(z @ a) + 0.5 * torch.sin(z @ b)
    return x + noise * torch.randn(n, dim, generator=g)


def adding_problem(n, length, seed):
    """(value, marker) pairs; the target is the sum of the two marked values."""
    g = _gen(seed)
    vals = torch.rand(n, length, generator=g)
    mark = torch.zeros(n, length)
    half = max(1, length // 2)
    i = torch.randint(0, half, (n,), generator=g)
    j = half + torch.randint(0, length - half, (n,), generator=g)
    mark[torch.arange(n), i] = 1.0
    mark[torch.arange(n), j] = 1.0
    x = torch.stack([vals, mark], 2)
    y = (vals * mark).sum(1, keepdim=True)
    return x, y


def running_sum_sign(n, length, seed):
    """A stream of +-1 values; at each step the target is the sign of the sum so far (the
    recurrent state must count). Inputs one-hot (+1 / -1)."""
    g = _gen(seed)
    s = torch.randint(0, 2, (n, length), generator=g) * 2 - 1
    cs = torch.cumsum(s, 1)
    y = (cs > 0).long()
    x = torch.stack([(s > 0).float(), (s < 0).float()], 2)
    return x, y


def duplicate_tokens(n, length, vocab, seed):
    """Does the token sequence hold some token twice? (needs pairwise comparisons)."""
    g = _gen(seed)
    x = torch.randint(0, vocab, (n, length), generator=g)
    srt, _ = torch.sort(x, 1)
    y = (srt[:, 1:] == srt[:, :-1]).any(1).long()
    return x, y


def sparse_bag(n, vocab, active, seed, w_seed, noise=0.5):
    """Binary bag-of-features rows with `active` features on; a sparse linear teacher's label."""
    g = _gen(seed)
    gw = _gen(w_seed)
    w = torch.zeros(vocab)
    idx = torch.randperm(vocab, generator=gw)[: vocab // 8]
    w[idx] = torch.randn(len(idx), generator=gw) * 1.5
    x = torch.zeros(n, vocab)
    cols = torch.randint(0, vocab, (n, active), generator=g)
    x.scatter_(1, cols, 1.0)
    logit = x @ w + noise * torch.randn(n, generator=g)
    y = (logit > 0).float().unsqueeze(1)
    return x, y


# =============================================================== models
class MLP(nn.Module):
    def __init__(self, sizes, act="relu", init_std=None, out_act=None):
        super().__init__()
        layers = []
        for a, b in zip(sizes[:-1], sizes[1:]):
            layers.append(nn.Linear(a, b))
        self.layers = nn.ModuleList(layers)
        self.act = {"relu": torch.relu, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
                    "gelu": F.gelu}[act]
        if init_std is not None:
            for l in self.layers:
                nn.init.normal_(l.weight, 0.0, init_std)
                nn.init.zeros_(l.bias)

    def forward(self, x):
        for l in self.layers[:-1]:
            x = self.act(l(x))
        return self.layers[-1](x)


class Conv1dNet(nn.Module):
    def __init__(self, classes=4, width=16):
        super().__init__()
        self.c1 = nn.Conv1d(1, width, 5, padding=2)
        self.c2 = nn.Conv1d(width, 2 * width, 5, padding=2)
        self.fc = nn.Linear(2 * width, classes)

    def forward(self, x):
        x = F.max_pool1d(torch.relu(self.c1(x)), 2)
        x = torch.relu(self.c2(x))
        return self.fc(x.mean(2))


class LSTMReg(nn.Module):
    def __init__(self, inp=2, hidden=24, out=1):
        super().__init__()
        self.rnn = nn.LSTM(inp, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, out)

    def forward(self, x):
        h, _ = self.rnn(x)
        return self.fc(h[:, -1])


class ReluRNNTagger(nn.Module):
    """Elman RNN with relu; one prediction per time step."""

    def __init__(self, inp=2, hidden=32, out=2, rec_init=1.0):
        super().__init__()
        self.rnn = nn.RNN(inp, hidden, nonlinearity="relu", batch_first=True)
        with torch.no_grad():
            self.rnn.weight_hh_l0.copy_(rec_init * torch.eye(hidden)
                                        + 0.01 * torch.randn(hidden, hidden))
            self.rnn.bias_hh_l0.zero_()
        self.fc = nn.Linear(hidden, out)

    def forward(self, x):
        h, _ = self.rnn(x)
        return self.fc(h)


class ReluRNNReg(nn.Module):
    def __init__(self, inp=2, hidden=32, rec_init=1.0):
        super().__init__()
        self.rnn = nn.RNN(inp, hidden, nonlinearity="relu", batch_first=True)
        with torch.no_grad():
            self.rnn.weight_hh_l0.copy_(rec_init * torch.eye(hidden)
                                        + 0.01 * torch.randn(hidden, hidden))
            self.rnn.bias_hh_l0.zero_()
        self.fc = nn.Linear(hidden, 1)

    def forward(self, x):
        h, _ = self.rnn(x)
        return self.fc(h[:, -1])


class TinyTransformer(nn.Module):
    def __init__(self, vocab, length, d=32, heads=4, ff=64, classes=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(0.1 * torch.randn(length, d))
        self.block = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, batch_first=True)
        self.fc = nn.Linear(d, classes)

    def forward(self, x):
        h = self.block(self.emb(x) + self.pos)
        return self.fc(h.mean(1))


class AutoEncoder(nn.Module):
    def __init__(self, dim=32, hidden=24, code=4, act="tanh"):
        super().__init__()
        self.enc1 = nn.Linear(dim, hidden)
        self.enc2 = nn.Linear(hidden, code)
        self.dec1 = nn.Linear(code, hidden)
        self.dec2 = nn.Linear(hidden, dim)
        self.act = torch.tanh if act == "tanh" else torch.relu

    def forward(self, x):
        return self.dec2(self.act(self.dec1(self.enc2(self.act(self.enc1(x))))))


# =============================================================== losses and metrics
def ce_loss(out, y):
    if out.dim() == 3:                       # per-time-step tagging
        return F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
    return F.cross_entropy(out, y)


def ce_acc(out, y):
    return (out.argmax(-1) == y).float().mean().item()


def bce_loss(out, y):
    return F.binary_cross_entropy_with_logits(out, y)


def bce_acc(out, y):
    return ((out > 0).float() == y).float().mean().item()


def mse_loss(out, y):
    return F.mse_loss(out, y)


def mae(out, y):
    return (out - y).abs().mean().item()


def ae_loss(out, x):
    return F.mse_loss(out, x)


# =============================================================== the supervised loop
class Spec:
    """Everything a supervised run needs; `fit` turns it into a trace."""

    def __init__(self, **kw):
        self.seed = 0
        self.data = None            # () -> (xtr, ytr, xva, yva); y None for autoencoders
        self.stream = None          # (step, gen) -> (x, y): a batch made on the fly instead
        self.val_stream = None      # (gen) -> (x, y) a fixed validation batch for streams
        self.model = None           # () -> nn.Module
        self.opt = "adam"           # adam | adamw | sgd
        self.lr = 1e-3
        self.momentum = 0.0
        self.weight_decay = 0.0
        self.schedule = None        # step -> multiplier of lr (steps 0-based)
        self.epochs = 10
        self.batch = 32
        self.steps_per_epoch = None # for streams
        self.clip = None            # max grad norm, None = no clipping
        self.loss = mse_loss
        self.metric = None          # (out, y) -> float
        self.eval_at = "epoch"      # "epoch" or an int period in steps
        self.batch_hook = None      # (step, x, y) -> x, y
        self.lr_hook = None         # (step, lr) -> lr
        self.step_hook = None       # (step, model, opt) -> None (before the step's forward)
        self.eval_batch = 256
        self.early_stop = None      # patience in evaluations (Keras EarlyStopping on val loss)
        self.early_stop_delta = 0.0 # its min_delta: a smaller improvement does not count
        self.__dict__.update(kw)


def _make_opt(spec, params):
    if spec.opt == "adam":
        return torch.optim.Adam(params, lr=spec.lr, weight_decay=spec.weight_decay)
    if spec.opt == "adamw":
        return torch.optim.AdamW(params, lr=spec.lr, weight_decay=spec.weight_decay)
    if spec.opt == "sgd":
        return torch.optim.SGD(params, lr=spec.lr, momentum=spec.momentum,
                               weight_decay=spec.weight_decay)
    raise ValueError(spec.opt)


def grad_norms(model):
    """(total 2-norm, {param name: 2-norm}) of the current gradients."""
    per = {}
    sq = 0.0
    for name, p in model.named_parameters():
        if p.grad is None:
            continue
        v = p.grad.detach().norm(2).item()
        per[name] = v
        sq += v * v
    return math.sqrt(sq), per


def _evaluate(model, loss_fn, metric, x, y, bs):
    model.eval()
    tot, acc, n = 0.0, 0.0, 0
    with torch.no_grad():
        for i in range(0, x.shape[0], bs):
            xb = x[i:i + bs]
            yb = y[i:i + bs] if y is not None else xb
            out = model(xb)
            k = xb.shape[0]
            tot += loss_fn(out, yb).item() * k
            if metric:
                acc += metric(out, yb) * k
            n += k
    model.train()
    return tot / n, (acc / n if metric else None), (x.shape[0] + bs - 1) // bs, x.shape[0]


def fit(spec, want_param_norms=False):
    """Train; return the trace: per-step records and evaluation records."""
    torch.manual_seed(spec.seed)
    random.seed(spec.seed)
    model = spec.model()
    params = [p for p in model.parameters()]
    opt = _make_opt(spec, params)
    g = _gen(spec.seed + 7919)
    if spec.data is not None:
        xtr, ytr, xva, yva = spec.data()
        n = xtr.shape[0]
        S = n // spec.batch
    else:
        S = spec.steps_per_epoch
        xva, yva = spec.val_stream(_gen(spec.seed + 104729))
    steps, evals = [], []
    best, since = float("inf"), 0
    epochs_run = 0
    for epoch in range(spec.epochs):
        if spec.early_stop is not None and since >= spec.early_stop:
            break
        epochs_run += 1
        perm = torch.randperm(n, generator=g) if spec.data is not None else None
        for b in range(S):
            step = epoch * S + b
            if spec.data is not None:
                idx = perm[b * spec.batch:(b + 1) * spec.batch]
                xb = xtr[idx]
                yb = ytr[idx] if ytr is not None else None
            else:
                xb, yb = spec.stream(step, g)
            if spec.batch_hook:
                xb, yb = spec.batch_hook(step, xb, yb)
            if yb is None:
                yb = xb
            if spec.step_hook:
                spec.step_hook(step, model, opt)
            lr = spec.lr * (spec.schedule(step) if spec.schedule else 1.0)
            if spec.lr_hook:
                lr = spec.lr_hook(step, lr)
            for grp in opt.param_groups:
                grp["lr"] = lr
            out = model(xb)
            loss = spec.loss(out, yb)
            opt.zero_grad()
            loss.backward()
            gn, per = grad_norms(model)
            if spec.clip is not None:
                torch.nn.utils.clip_grad_norm_(params, spec.clip)
            opt.step()
            rec = {"loss": loss.item(), "grad_norm": gn, "lr": lr, "n": xb.shape[0],
                   "metric": spec.metric(out.detach(), yb) if spec.metric else None}
            if want_param_norms:
                rec["param_norms"] = per
            steps.append(rec)
            last_of_epoch = b == S - 1
            due = last_of_epoch if spec.eval_at == "epoch" else (step + 1) % spec.eval_at == 0
            if due:
                vl, vm, nb, ns = _evaluate(model, spec.loss, spec.metric, xva, yva, spec.eval_batch)
                evals.append({"after": step, "loss": vl, "metric": vm, "batches": nb,
                              "samples": ns})
                if vl < best - spec.early_stop_delta:
                    best, since = vl, 0
                else:
                    since += 1
    total = len(steps)
    lr_next = [spec.lr * (spec.schedule(s + 1) if spec.schedule else 1.0) for s in range(total)]
    if spec.lr_hook:
        lr_next = [spec.lr_hook(s + 1, v) for s, v in enumerate(lr_next)]
    for rec, v in zip(steps, lr_next):
        rec["lr_next"] = v
    return {"steps": steps, "evals": evals, "S": S, "epochs": epochs_run, "model": model}


# =============================================================== schedules
def warmup_cosine(warmup, total, floor=0.0):
    def f(step):
        if step < warmup:
            return step / warmup
        p = min(1.0, (step - warmup) / max(1, total - warmup))
        return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * p))
    return f


def linear_decay(total, warmup=0):
    def f(step):
        if step < warmup:
            return step / max(1, warmup)
        return max(0.0, (total - step) / max(1, total - warmup))
    return f


def step_decay(every, gamma):
    return lambda step: gamma ** (step // every)


def cosine_restarts(period, mult=1):
    def f(step):
        p = period
        s = step
        while s >= p:
            s -= p
            p *= mult
        return 0.5 * (1 + math.cos(math.pi * s / p))
    return f


# =============================================================== CartPole + actor-critic
class CartPole:
    """The classic cart-pole (Barto, Sutton & Anderson 1983), equations as in gym's CartPole-v1."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.g, self.mc, self.mp, self.l, self.fm, self.tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02

    def reset(self):
        self.s = [self.rng.uniform(-0.05, 0.05) for _ in range(4)]
        self.t = 0
        return list(self.s)

    def step(self, a):
        x, xd, th, thd = self.s
        f = self.fm if a == 1 else -self.fm
        ct, st = math.cos(th), math.sin(th)
        total = self.mc + self.mp
        pml = self.mp * self.l
        temp = (f + pml * thd * thd * st) / total
        tha = (self.g * st - ct * temp) / (self.l * (4.0 / 3.0 - self.mp * ct * ct / total))
        xa = temp - pml * tha * ct / total
        x, xd = x + self.tau * xd, xd + self.tau * xa
        th, thd = th + self.tau * thd, thd + self.tau * tha
        self.s = [x, xd, th, thd]
        self.t += 1
        done = abs(x) > 2.4 or abs(th) > 12 * 2 * math.pi / 360 or self.t >= 200
        return list(self.s), 1.0, done


class ActorCritic(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.body = nn.Linear(4, hidden)
        self.pi = nn.Linear(hidden, 2)
        self.v = nn.Linear(hidden, 1)

    def forward(self, s):
        h = torch.tanh(self.body(s))
        return self.pi(h), self.v(h).squeeze(-1)


def cartpole_actor_critic(seed, episodes, lr=3e-3, gamma=0.99, ent_coef=0.01, vf_coef=0.01):
    """One update per episode: advantage actor-critic with discounted returns."""
    torch.manual_seed(seed)
    env = CartPole(seed + 1)
    net = ActorCritic()
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    recs = []
    for ep in range(episodes):
        s = env.reset()
        logps, vals, ents, rews = [], [], [], []
        done = False
        while not done:
            logits, v = net(torch.tensor(s, dtype=torch.float32))
            dist = torch.distributions.Categorical(logits=logits)
            a = dist.sample()
            s, r, done = env.step(int(a))
            logps.append(dist.log_prob(a))
            vals.append(v)
            ents.append(dist.entropy())
            rews.append(r)
        ret, rets = 0.0, []
        for r in reversed(rews):
            ret = r + gamma * ret
            rets.append(ret)
        rets = torch.tensor(list(reversed(rets)))
        vals = torch.stack(vals)
        adv = rets - vals.detach()
        if len(adv) > 1:
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        pl = -(torch.stack(logps) * adv).mean()
        vl = 0.5 * ((rets - vals) ** 2).mean()
        ent = torch.stack(ents).mean()
        loss = pl + vf_coef * vl - ent_coef * ent
        opt.zero_grad()
        loss.backward()
        gn, _ = grad_norms(net)
        torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
        opt.step()
        recs.append({"return": sum(rews), "length": len(rews), "policy_loss": pl.item(),
                     "value_loss": vl.item(), "entropy": ent.item(), "loss": loss.item(),
                     "grad_norm": gn, "lr": lr})
    return recs
