"""What this corpus needs beyond ../alert-corpus/tasks.py: a REINFORCE agent and two hooks.

Everything else (data, models, the supervised loop, the cart-pole) is imported from there.
"""
import torch
import torch.nn as nn

import tasks as T


class PolicyNet(nn.Module):
    """The policy of PyTorch's reinforce.py example: 4 -> hidden relu -> 2 logits."""

    def __init__(self, hidden=64):
        super().__init__()
        self.body = nn.Linear(4, hidden)
        self.head = nn.Linear(hidden, 2)

    def forward(self, s):
        return self.head(torch.relu(self.body(s)))


def cartpole_reinforce(seed, episodes, lr=1e-2, gamma=0.99, hidden=64):
    """REINFORCE without a critic, one update per episode, the discounted returns normalised over
    the episode (as PyTorch's examples/reinforcement_learning/reinforce.py). Per episode: the
    return, the length, the policy loss, the policy's mean entropy and the gradient norm."""
    torch.manual_seed(seed)
    env = T.CartPole(seed + 1)
    net = PolicyNet(hidden)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    recs = []
    for _ in range(episodes):
        s = env.reset()
        logps, ents, rews = [], [], []
        done = False
        while not done:
            dist = torch.distributions.Categorical(logits=net(torch.tensor(s,
                                                                           dtype=torch.float32)))
            a = dist.sample()
            s, r, done = env.step(int(a))
            logps.append(dist.log_prob(a))
            ents.append(dist.entropy())
            rews.append(r)
        ret, rets = 0.0, []
        for r in reversed(rews):
            ret = r + gamma * ret
            rets.insert(0, ret)
        rets = torch.tensor(rets)
        if len(rets) > 1:
            rets = (rets - rets.mean()) / (rets.std() + 1e-8)
        loss = -(torch.stack(logps) * rets).sum()
        opt.zero_grad()
        loss.backward()
        gn, _ = T.grad_norms(net)
        opt.step()
        recs.append({"return": sum(rews), "length": len(rews), "policy_loss": loss.item(),
                     "entropy": torch.stack(ents).mean().item(), "grad_norm": gn, "lr": lr})
    return recs


def freeze_at(step, keep=()):
    """A step hook: from `step` on, every parameter whose name does not start with one of `keep`
    stops training (requires_grad off, its gradient dropped), as a fine-tuning script that freezes
    the backbone. Optimizers skip parameters whose .grad is None, so Adam's moments stop too."""
    def hook(s, model, opt):
        if s != step:
            return
        for name, p in model.named_parameters():
            if not name.startswith(tuple(keep)):
                p.requires_grad_(False)
                p.grad = None
    return hook
