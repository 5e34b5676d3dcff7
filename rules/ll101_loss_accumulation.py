"""LL101 loss-accumulation: a graph-attached loss summed across iterations."""

from __future__ import annotations

import ast
from typing import Iterator

import libcst as cst

from leaklint.analysis.accumulate import accumulation
from leaklint.analysis.carry import carried_states
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name
from leaklint.analysis.provenance import StatementFact
from leaklint.analysis.names import dotted_names_in
from leaklint.analysis.structure import FunctionInfo, GradMode
from leaklint.analysis.torch_api import GRAPH_EVIDENCE, LOOPS_OR_FUNCTIONS, TORCH_CODE
from leaklint.analysis.values import Evidence, Value, strongest_graph
from leaklint.analysis.syntax import assignment_pairs
from leaklint.findings import Confidence, Severity
from leaklint.fixes.spec import MAPPING, container_usage, detach_each_fix, detach_fix
from leaklint.gate import Names, Syntax
from leaklint.rule import Measured, Rule, Violation


class LossAccumulation(Rule):
    code = "LL101"
    name = "loss-accumulation"
    severity = Severity.LEAK
    fixable = True
    summary = "A tensor that carries its autograd graph is accumulated across loop iterations."
    help = "accumulate the value's .item() (a float) or .detach() (a tensor)"
    needs = TORCH_CODE & (Syntax(ast.AugAssign, ast.BinOp) | Names("add", "add_", "sum")) & LOOPS_OR_FUNCTIONS
    autograd = True
    needs_above_low = GRAPH_EVIDENCE
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(12, 0, 1), leaks=(35, 1))
    docs = """
## What it finds
An accumulation such as `total += loss`, `total = total + loss`, `running -= criterion(out, y)`,
`total.add_(loss)`, `total = torch.add(total, loss)`, `total = sum([total, loss])`, a slot of a
dict (`stats["loss"] += loss`, `hist["loss"] = hist.get("loss", 0) + loss`) or an exponential
moving average `avg = 0.9 * avg + 0.1 * loss` (also with a lazy start:
`avg = loss if avg is None else 0.9 * avg + 0.1 * loss`) inside a `for`/`while` loop, where the
accumulated value is attached to an autograd graph (it is a loss, a model output, or computed from
one, outside `torch.no_grad()`) and the accumulator lives across iterations (it is created before
the loop, or is an attribute such as `self.total`). The same accumulation into `self.*` in a method
a framework calls once per step (`training_step`, `train_step`, `forward`...) counts without a loop,
and so does passing the loss to a method of a class in the same file that accumulates its argument
(`meter.update(loss)` where `update` does `self.sum += val * n`) — reported at the call. Values are
followed through the file's own functions and classes: what a helper's callers pass it
(`update_stats(stats)` called with a dict of losses), what a method returns, meters kept in a
container (`self.meters[name].update(val)` with `self.meters = defaultdict(AverageMeter)` or
`self.meters[name] = AverageMeter()`, or made on first use by `meters.setdefault(name,
AverageMeter()).update(val)`), objects handed over through constructors (`Trainer(model,
criterion)`), and the model an HF `Trainer` passes to `compute_loss` / `training_step`. A graph
that enters an object of another class is reported at the call that hands it over; a helper of the
calling class (`self._update_stats(...)`) is followed into, and reported where it stores.
A reset inside a branch (`if step % 100 == 0: total = 0`) does not stop the report: the graphs of
the steps between two resets pile up. The running value may be moved or cast on the way
(`self.total = self.total.to(loss.device) + loss`), and the first value of a lazily started
accumulator (`if self.ema is None: self.ema = loss`) is reported with the update, since the chain
starts with its graph. A total reset every step still counts when a loop inside the step runs a
forward per iteration (a helper or closure, once per temperature of an annealing schedule) and
nothing differentiates the total: each step then holds one graph per inner iteration for nothing
(when LL201 reports that forward itself, its finding is the one for the leak).

## Why it matters
`total + loss` is itself a node of the autograd graph: it keeps `loss` and, through it, everything
`loss` was computed from. After N iterations `total` holds N graphs. When `backward()` runs every
step the saved activations are freed, but the graph nodes themselves still pile up in host memory;
without a backward (evaluation code) every step's activations stay alive too, and memory grows until
the job dies. This is the first entry of the PyTorch FAQ ("My model reports cuda runtime error(2):
out of memory"): `total_loss += loss`.

## Example
```python
total_loss = 0
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    total_loss += loss
```

## Use instead
```python
total_loss = 0.0
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    total_loss += loss.item()  # or loss.detach() to stay on the device without a sync
```

## Fix safety
`total += loss` becomes `total += loss.detach()`; in arithmetic the `.detach()` goes on the
operand that carries the graph (`avg = 0.9 * avg + 0.1 * loss.detach()`), and in a conditional
expression on each branch that carries one (`total += loss.detach() if ok else 0`, never
`(loss if ok else 0).detach()`, which fails when the branch is `0`). **Safe** when leaklint knows
the value is a tensor — a name holding a loss or something `backward()` is called on, the result
of a torch loss (`F.cross_entropy(...)`, an `nn.*Loss()` instance), or arithmetic on one —
because detaching keeps its value, dtype and device, and an accumulator only ever reports the
number. **Unsafe** when the value may be something else: a model output (a tuple or a
`ModelOutput` has no `.detach()`), the result of a callable that is a loss only by its name
(`criterion(...)` may return a dict), or a name the file also indexes or iterates over
(`loss[0]`, `for l in loss`). No fix for a value the file uses as a mapping (`d["ce"]`,
`d.items()`). `.item()` is the display-only alternative, written by hand: it returns a Python
float (and waits for the GPU), so code that treats the total as a tensor would change.

## Known false positives
Summing losses on purpose and calling `.backward()` on the sum (chunked or multi-task losses) is
recognised and not reported, as is a helper that sums loss terms over a small loop and returns the
sum. A running value that is also an input of the next step's computation
(`self.mu = 0.9 * self.mu + 0.1 * h.mean(0)` followed by `return h - self.mu`) chains the graphs
through the computation: LL103 reports it where it is fed back, and this rule stays quiet so the
statement is reported once. A tensor grown by concatenation (`preds = torch.cat([preds, out])`) is
LL102's. A reset of the accumulator on every iteration of an enclosing loop (`total = 0` at the start of
each epoch) bounds it, and the loop that resets it does not count. If the accumulated value comes from a function leaklint
cannot see and no `.backward()` is called on it, the finding has low confidence and is hidden unless
`--min-confidence low` is set. A meter method that turns tensors into numbers first
(`val.item() if torch.is_tensor(val) else val`) is followed and stays quiet, in the same file or
in another module of the linted project (README, "How leaklint decides"); linted alone, a script
cannot know what an imported meter keeps, and says nothing about it. A value summed afresh
in the same iteration (`loss = f(x)` then `loss = loss + g(x)` in one branch) is not an
accumulation across iterations, even when another branch binds it too.

On bench/realcode the findings at the default confidence are true: `train_loss += loss` over an
epoch in course notebooks (and their exercise solutions), a validation loss summed with its graph,
and training scripts that add every step's loss to a running total only to print it. One is
debatable: a deliberate error demo whose loop raises before the sum on a GPU machine. The false
positives at first (integer counters such as `num_samples += batch_size`, fairseq's logging sums,
meters fed `.item()` values and integer lengths, a reward from the environment) are fixed.

## References
- PyTorch FAQ, "Don't accumulate history across your training loop":
  https://pytorch.org/docs/stable/notes/faq.html
- `losses += loss.float()` running out of memory: https://github.com/microsoft/DeepSpeedExamples/issues/824
- CPU memory used up after 10k steps by `self.loss` kept with its graph:
  https://github.com/ULTR-Community/ULTRA_pytorch/issues/6
- Runtime repro: `leaklint verify LL101` measures the leaky and the fixed loop body.
"""
    VALID = (
        # meters made on first use by `dict.setdefault(key, Meter())`, fed numbers (`.item()`)
        """
import torch
import torch.nn as nn
import torch.nn.functional as F


class RunningMean:
    def __init__(self):
        self.total, self.n = 0.0, 0

    def add(self, value, weight=1):
        self.total = self.total + value * weight
        self.n += weight


def step(net, optimizer, x, y):
    out = net(x)
    recon = F.mse_loss(out, y)
    sparsity = out.abs().mean()
    loss = recon + 0.1 * sparsity
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"recon": recon.item(), "sparsity": sparsity.item()}


def fit(net, optimizer, loader):
    running = {}
    for x, y in loader:
        parts = step(net, optimizer, x, y)
        for key, value in parts.items():
            running.setdefault(key, RunningMean()).add(value, len(x))
    return {key: m.total / m.n for key, m in running.items()}


model = nn.Linear(8, 8)
fit(model, torch.optim.SGD(model.parameters(), lr=0.1), [(torch.rand(4, 8), torch.rand(4, 8))])
""",
        # an importance-weighted objective: a decoder pass per sample in a loop inside the step,
        # summed, and the total is what the step backpropagates
        """
import torch
import torch.nn as nn
class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.dec = nn.Linear(4, 8)
    def decode(self, z):
        return self.dec(z)
def train(vae, optimizer, loader, samples=50):
    def log_density(z, x):
        return -(vae.decode(z) - x).pow(2).sum(1)
    for x in loader:
        logw = torch.zeros(x.size(0))
        for _ in range(samples):
            logw += log_density(torch.randn(x.size(0), 4), x)
        loss = -logw.mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
vae = VAE()
train(vae, torch.optim.Adam(vae.parameters()), [torch.rand(16, 8)])
""",
        # the environment's reward goes into the TD loss as data: it is not the graph the
        # backward runs through
        """
def play(env, agent, opt, td_loss, t_max=1000, train=False):
    total_reward = 0
    s, _ = env.reset()
    for t in range(t_max):
        a = agent.act(s)
        next_s, r, terminated, truncated, _ = env.step(a)
        if train:
            opt.zero_grad()
            td_loss([s], [a], [r], [next_s], [terminated]).backward()
            opt.step()
        total_reward += r
        s = next_s
        if terminated or truncated:
            break
    return total_reward
""",
        # the decode lengths a captioning decoder returns beside its scores: integers (they are
        # pack_padded_sequence's lengths), not a graph
        """
import torch
from torch.nn.utils.rnn import pack_padded_sequence

class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0
    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

def train_epoch(decoder, loader, criterion, optimizer):
    losses = AverageMeter()
    for imgs, caps, caplens in loader:
        scores, caps_sorted, decode_lengths, alphas = decoder(imgs, caps, caplens)
        scores, _ = pack_padded_sequence(scores, decode_lengths, batch_first=True)
        targets, _ = pack_padded_sequence(caps_sorted[:, 1:], decode_lengths, batch_first=True)
        loss = criterion(scores, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.update(loss.item(), sum(decode_lengths))
    return losses.sum / losses.count
""",
        """
total = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    total += loss.item()
""",
        """
total = 0
for x, y in loader:
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    total += loss.detach()
    total = total + float(loss)
""",
        """
import torch
total = 0
with torch.no_grad():
    for x, y in loader:
        total += criterion(model(x), y)
""",
        """
import torch
def train_step(model, chunks, optimizer):
    for inputs, targets in chunks:
        optimizer.zero_grad()
        total = 0
        for chunk, target in zip(inputs, targets):
            total += criterion(model(chunk), target)
        (total / len(inputs)).backward()
        optimizer.step()
""",
        """
import torch.nn.functional as F
def multi_head_loss(outputs, targets):
    total = 0
    for out, target in zip(outputs, targets):
        total = total + F.mse_loss(out, target)
    return total
""",
        """
correct = 0
seen = 0
for x, y in loader:
    out = model(x)
    correct += (out.argmax(1) == y).sum()
    seen += y.size(0)
""",
        # the loss is computed afresh in this branch before the sum: nothing carries over
        """
import torch.nn.functional as F
for step, batch in enumerate(loader):
    if with_prior:
        loss = F.mse_loss(model(batch), batch)
        prior = F.mse_loss(model(batch), batch)
        loss = loss + 0.5 * prior
    else:
        loss = F.mse_loss(model(batch), batch)
    loss.backward()
""",
        # the helper turns tensors into numbers before the meter keeps them
        """
import torch
import torch.nn.functional as F
class AverageMeter:
    def update(self, val, n=1):
        self.sum += val * n
class Trainer:
    def log(self, stats, n):
        for name, val in stats.items():
            val = val.item() if torch.is_tensor(val) else val
            self.meters[name].update(val, n)
    def fit(self, loader):
        self.meters = {}
        for x, y in loader:
            loss = F.cross_entropy(self.model(x), y)
            loss.backward()
            self.meters["loss"] = AverageMeter()
            self.log({"loss": loss}, x.size(0))
""",
        # the meter keeps a number: the argument is read only through .item(), whatever n is
        """
import torch.nn.functional as F
class AverageMeter:
    def update(self, val, n=1):
        self.sum += val.item() * n
        self.count += n
meter = AverageMeter()
for x, y in loader:
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    meter.update(loss, x.size(0))
""",
        # a running statistic that is also an input of the next forward: LL103's finding
        """
import torch.nn as nn
class Normalizer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.mu = 0.0
    def forward(self, x):
        h = self.proj(x)
        self.mu = 0.9 * self.mu + 0.1 * h.mean(0)
        return h - self.mu
""",
        # A loop in a module's forward (one embedding per feature): its locals die when
        # the forward returns
        """
import torch
import torch.nn as nn
class AtomEncoder(nn.Module):
    def __init__(self, dims, emb_dim):
        super().__init__()
        self.embeddings = nn.ModuleList(nn.Embedding(d, emb_dim) for d in dims)
    def forward(self, batch):
        encoded = 0
        for i in range(batch.x.shape[1]):
            encoded += self.embeddings[i](batch.x[:, i])
        batch.x = encoded
        return batch
""",
    )
    INVALID = (
        # annealed importance sampling: the log-weights sum one decoder pass per temperature
        # (through a closure whose output the Langevin step does differentiate), hundreds per
        # batch, and nothing differentiates the total: reset every batch, but each batch holds
        # one graph per temperature for nothing. (When LL201 reports the forward itself, because
        # nothing differentiates it anywhere, that finding is the one for this leak.)
        """
import torch
import torch.nn as nn
class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.dec = nn.Linear(4, 8)
    def decode(self, z):
        return self.dec(z)
def langevin_step(z, score):
    return (z + 0.01 * score(z)).detach()
def estimate(vae, loader, temperatures):
    def log_density(z, x, t):
        return t * -(vae.decode(z) - x).pow(2).sum(1)
    bounds = []
    for x in loader:
        z = torch.randn(x.size(0), 4)
        logw = torch.zeros(x.size(0))
        for t0, t1 in zip(temperatures[:-1], temperatures[1:]):
            logw += log_density(z, x, t1) - log_density(z, x, t0)  # expect: LL101
            def score(z_, t=t1):
                z_ = z_.detach().requires_grad_()
                return torch.autograd.grad(log_density(z_, x, t).sum(), z_)[0]
            z = langevin_step(z, score)
        bounds.append(torch.logsumexp(logw, 0).item())
    return bounds
estimate(VAE().eval(), [torch.rand(16, 8)], [i / 500 for i in range(501)])
""",
        # a validation loop over a progress bar that wraps the loader its caller passes
        """
import torch
from tqdm import tqdm
from torch.utils.data import DataLoader
def validate(model, loader):
    model.eval()
    total = 0
    progress = tqdm(loader)
    for images, targets in progress:
        outputs = model(images)
        total += torch.nn.functional.mse_loss(outputs, targets)  # expect: LL101
    return float(total)
validate(net, DataLoader(val_set, batch_size=16))
""",
        """
class AverageMeter:
    def __init__(self):
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

def train(model, loader, optimizer, criterion):
    losses = AverageMeter()
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        losses.update(loss, x.size(0))  # expect: LL101
        losses.update(loss.item(), x.size(0))
""",
        """
import torch.nn.functional as F
import pytorch_lightning as pl
class Lit(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.epoch_loss += loss  # expect: LL101
        self.ema = 0.9 * self.ema + 0.1 * loss  # expect: LL101
        return loss
""",
        """
total_loss = 0
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    total_loss += loss  # expect: LL101
""",
        """
import torch.nn as nn
from torch.utils.data import DataLoader
criterion = nn.CrossEntropyLoss()
running = 0
batches = DataLoader(outputs_and_labels, batch_size=64)
for step, (o, y) in enumerate(batches):
    running = running + criterion(o, y)  # expect: LL101
""",
        """
sum_loss = 0
for batch in train_loader:
    outputs = model(**batch)
    outputs.loss.backward()
    sum_loss += outputs.loss  # expect: LL101
""",
        # the other spellings of a sum: in place, through a dict slot, torch.add, sum(), a lazy start
        """
import torch
import torch.nn.functional as F
total = torch.zeros(())
hist = {}
running = None
added = torch.zeros(())
summed = 0
for x, y in loader:
    loss = F.mse_loss(model(x), y)
    loss.backward()
    total.add_(loss)  # expect: LL101
    hist["loss"] = hist.get("loss", 0) + loss  # expect: LL101
    added = torch.add(added, loss)  # expect: LL101
    summed = sum([summed, loss])  # expect: LL101
    running = loss if running is None else 0.98 * running + 0.02 * loss  # expect: LL101
""",
        """
import torch as th
class Trainer:
    def __init__(self):
        self.model = th.nn.Linear(8, 1)
        self.total = 0
    def fit(self, loader):
        for x, y in loader:
            loss = th.nn.functional.mse_loss(self.model(x), y)
            self.total -= loss  # expect: LL101
""",
        # a reset every 100 steps still lets 100 graphs pile up; a running value moved to the
        # loss's device is the same running value
        """
import torch.nn.functional as F
running = 0.0
for i, (x, y) in enumerate(loader):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    running += loss  # expect: LL101
    if i % 100 == 99:
        print(running / 100)
        running = 0.0
""",
        """
import torch
class LossTracking:
    def training_step(self, model, inputs):
        loss = model(**inputs).loss
        loss.backward()
        self.running = self.running.to(loss.device) + loss  # expect: LL101
        return loss.detach()
""",
        # a lazy start: the first value starts the chain with its own graph
        """
import torch.nn.functional as F
class Agent:
    def train_step(self, x, y):
        loss = F.mse_loss(self.net(x), y)
        loss.backward()
        if self.ema is None:
            self.ema = loss  # expect: LL101
        else:
            self.ema = 0.9 * self.ema + 0.1 * loss  # expect: LL101
""",
        # meters kept per key in a container (made by defaultdict or stored by key), fed from a helper
        """
from collections import defaultdict
import torch.nn.functional as F
class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0, 0
    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
class Meters:
    def __init__(self):
        self.meters = defaultdict(AverageMeter)
    def update(self, values, n=1):
        for key, value in values.items():
            self.meters[key].update(value, n)
def log_step(meters, loss):
    meters.update({"loss": loss}, 32)  # expect: LL101
meters = Meters()
for x, y in loader:
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    log_step(meters, loss)
""",
        # A module whose forward walks a whole loader: its loop is over data, not layers
        """
import torch
import torch.nn as nn
import torch.nn.functional as F


class DatasetLoss(nn.Module):
    # wraps a model; one call scores a whole loader

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, loader):
        total = 0
        outputs = []
        for x, y in loader:
            logits = self.model(x)
            total += F.cross_entropy(logits, y)  # expect: LL101
            outputs.append(logits)
        return total.item() / len(loader), torch.cat(outputs).argmax(1)


def main(loader):
    scorer = DatasetLoss(nn.Linear(16, 4))
    print(scorer(loader))
""",
        # a meter made on first use by `dict.setdefault(key, Meter())` and fed each loss of a dict
        # the step returns: the object setdefault gives back is the meter the dict keeps
        """
import torch
import torch.nn as nn
import torch.nn.functional as F


class RunningMean:
    def __init__(self):
        self.total, self.n = 0.0, 0

    def add(self, value, weight=1):
        self.total = self.total + value * weight
        self.n += weight


def step(net, optimizer, x, y):
    out = net(x)
    recon = F.mse_loss(out, y)
    sparsity = out.abs().mean()
    loss = recon + 0.1 * sparsity
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"recon": recon, "sparsity": sparsity}


def fit(net, optimizer, loader):
    running = {}
    for x, y in loader:
        parts = step(net, optimizer, x, y)
        for key, value in parts.items():
            running.setdefault(key, RunningMean()).add(value, len(x))  # expect: LL101
    return {key: m.total / m.n for key, m in running.items()}


model = nn.Linear(8, 8)
fit(model, torch.optim.SGD(model.parameters(), lr=0.1), [(torch.rand(4, 8), torch.rand(4, 8))])
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """The PyTorch FAQ's loop: `total_loss += loss` after `loss.backward()`, vs `+= loss.item()`."""

        def setup(self, ctx):
            import torch
            ctx.model = torch.nn.Sequential(
                torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 128), torch.nn.ReLU(),
                torch.nn.Linear(128, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10),
            ).to(ctx.device)
            ctx.optimizer = torch.optim.SGD(ctx.model.parameters(), lr=0.01)
            ctx.x = torch.randn(32, 64, device=ctx.device)
            ctx.y = torch.randint(0, 10, (32,), device=ctx.device)
            ctx.total_loss = 0

        def _loss(self, ctx):
            import torch.nn.functional as F
            ctx.optimizer.zero_grad()
            loss = F.cross_entropy(ctx.model(ctx.x), ctx.y)
            loss.backward()
            ctx.optimizer.step()
            return loss

        def leaky(self, ctx):
            ctx.total_loss += self._loss(ctx)

        def fixed(self, ctx):
            ctx.total_loss += self._loss(ctx).item()


# --- detection ------------------------------------------------------------------------------------
def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    reported: dict[tuple[FunctionInfo, str], Confidence] = {}
    for violation, fact, target in _accumulations(facts):
        reported.setdefault((fact.function, target), violation.confidence)
        yield violation
    yield from _lazy_starts(facts, reported)
    yield from _through_methods(facts)


def _accumulations(facts: ModuleFacts) -> Iterator[tuple[Violation, StatementFact, str]]:
    fed_back = _fed_back_accumulators(facts)
    for fact in facts.statements():
        if fact.grad is GradMode.DISABLED or not (fact.loops or fact.function.runs_per_step):
            continue
        found = accumulation(fact.node, facts.imports)
        if found is None:
            continue
        target, contributors = found.target, found.terms
        accumulated = strongest_graph([facts.value(c) for c in contributors])
        if accumulated is None or (target, fact.node) in fed_back or facts.kept_at_callers(fact, accumulated):
            continue
        lifetime = facts.lifetime(fact, target, periodic_resets=True)
        confidence = lifetime.leak_confidence(accumulated.confidence, count_call_lifetime=fact.function.runs_per_step)
        if confidence is None:
            continue
        source = next(c for c in contributors if facts.value(c) == accumulated)
        yield _violation(facts, fact, source, _target_text(facts, fact.node), confidence), fact, target


def _lazy_starts(facts: ModuleFacts, reported: dict[tuple[FunctionInfo, str], Confidence]) -> Iterator[Violation]:
    """``if self.ema is None: self.ema = loss`` before ``self.ema = 0.9 * self.ema + 0.1 * loss``:
    the first value of an accumulator reported here starts the chain with its own graph, so it
    needs the same fix as the update (reported when a guard around it tests the accumulator)."""
    if not reported:
        return
    for fact in facts.statements():
        node = fact.node
        if not isinstance(node, cst.Assign) or len(node.targets) != 1 or accumulation(node, facts.imports) is not None:
            continue
        starts = []
        place = None
        for target, expr in assignment_pairs(node.targets[0].target, node.value):
            name = dotted_name(target)
            confidence = reported.get((fact.function, name)) if name is not None else None
            value = facts.value(expr)
            if confidence is None or not value.is_graph:
                continue
            place = place or facts.index.place_of(fact)
            if place is not None and any(name in dotted_names_in(test) for test in place.guards()):
                starts.append((expr, name, min(confidence, _value_confidence(value), key=lambda c: c.rank)))
        if not starts:
            continue
        expr, name, confidence = starts[0]
        yield Violation(
            node=node,
            message=(
                f"'{facts.describe(expr)}' starts the running value '{name}' with its autograd graph; "
                "every later update adds onto it, so its graph stays alive with all of theirs"
            ),
            confidence=max((c for _, _, c in starts), key=lambda c: c.rank),
            help=_help(facts, expr, facts.describe_receiver(expr)),
            statement=fact.line,
            fix=detach_each_fix(facts, [e for e, _, _ in starts]),
        )


def _value_confidence(value: Value) -> Confidence:
    return Confidence.LOW if value.evidence is Evidence.NAME else value.confidence


def _violation(facts: ModuleFacts, fact: StatementFact, source: cst.BaseExpression, into: str, confidence: Confidence, node: cst.CSTNode | None = None) -> Violation:
    receiver = facts.describe_receiver(source)
    return Violation(
        node=node or fact.node,
        message=(
            f"'{facts.describe(source)}' is accumulated into {into} with its autograd graph; "
            "every iteration's graph stays alive"
        ),
        confidence=confidence,
        help=_help(facts, source, receiver),
        statement=fact.line,
        fix=detach_fix(facts, source),
    )


def _help(facts: ModuleFacts, source: cst.BaseExpression, receiver: str | None) -> str | None:
    if receiver is None:
        return None
    if facts.derived(container_usage).get(dotted_name(source) or "") == MAPPING:
        return f"{receiver} is used as a mapping: accumulate its values' .item() (floats) one by one"
    return f"accumulate {receiver}.item() (a float) or {receiver}.detach() (a tensor)"


def _through_methods(facts: ModuleFacts) -> Iterator[Violation]:
    """``meter.update(loss)`` where ``update`` does ``self.sum += val``: reported at the call."""
    for store, argument, confidence in facts.graphs_kept_by_methods("accumulate"):
        into = f"'{store.receiver}' ({store.method.name}() adds it to {argument.attribute})"
        assert store.statement is not None
        yield _violation(facts, store.statement, argument.expr, into, confidence, node=store.node)


def _target_text(facts: ModuleFacts, node: cst.BaseSmallStatement) -> str:
    if isinstance(node, cst.AugAssign):
        target = node.target
    elif isinstance(node, cst.Assign):
        target = node.targets[0].target
    else:  # total.add_(loss)
        target = node.value.func.value  # type: ignore[attr-defined]
    return f"'{facts.describe(target)}'"


def _fed_back_accumulators(facts: ModuleFacts) -> set[tuple[str, cst.CSTNode]]:
    """(accumulator, accumulating statement) pairs whose running value is also an input of the
    next step's computation (``self.mu = 0.9 * self.mu + 0.1 * h.mean(0)`` then
    ``return h - self.mu``): the graphs chain through the computation, which is LL103's finding
    (reported where the state is stored), as are the carries LL103 reports for other reasons (a
    module's running statistic, an inference loop's state); this rule leaves those to it."""
    found: set[tuple[str, cst.CSTNode]] = set()
    for carry in carried_states(facts):
        if carry.reported:
            found.update((carry.name, fact.node) for fact in carry.updates)
    return found
