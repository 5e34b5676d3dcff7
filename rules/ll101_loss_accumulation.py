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
from leaklint.analysis.structure import GradMode
from leaklint.analysis.torch_api import GRAPH_EVIDENCE, LOOPS_OR_FUNCTIONS, TORCH_CODE
from leaklint.analysis.values import strongest_graph
from leaklint.findings import Confidence, Severity
from leaklint.fixes.spec import MAPPING, container_usage, detach_fix
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
    needs_above_low = GRAPH_EVIDENCE
    #: bench/realcode (true, false, debatable) and bench/leaks (true, false), stop 18.
    measured = Measured(realcode=(0, 0, 0), leaks=(14, 0))
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
(`meter.update(loss)` where `update` does `self.sum += val * n`) — reported at the call.

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
LL102's. A reset of the accumulator anywhere in the loop body (`total = 0` every N steps) silences the
rule, because the growth is then bounded. If the accumulated value comes from a function leaklint
cannot see and no `.backward()` is called on it, the finding has low confidence and is hidden unless
`--min-confidence low` is set.

## References
- PyTorch FAQ, "Don't accumulate history across your training loop":
  https://pytorch.org/docs/stable/notes/faq.html
- `losses += loss.float()` running out of memory: https://github.com/microsoft/DeepSpeedExamples/issues/824
- CPU memory used up after 10k steps by `self.loss` kept with its graph:
  https://github.com/ULTR-Community/ULTRA_pytorch/issues/6
- Runtime repro: `leaklint verify LL101` measures the leaky and the fixed loop body.
"""
    VALID = (
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
    )
    INVALID = (
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
criterion = nn.CrossEntropyLoss()
running = 0
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
    def fit(self, loader):
        for x, y in loader:
            loss = th.nn.functional.mse_loss(self.model(x), y)
            self.total -= loss  # expect: LL101
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
    fed_back = _fed_back_accumulators(facts)
    for fact in facts.statements():
        if fact.grad is GradMode.DISABLED or not (fact.loops or fact.function.runs_per_step):
            continue
        found = accumulation(fact.node, facts.imports)
        if found is None:
            continue
        target, contributors = found.target, found.terms
        accumulated = strongest_graph([facts.value(c) for c in contributors])
        if accumulated is None or (target, fact.node) in fed_back:
            continue
        lifetime = facts.lifetime(fact, target)
        confidence = lifetime.leak_confidence(accumulated.confidence, count_call_lifetime=fact.function.runs_per_step)
        if confidence is None:
            continue
        source = next(c for c in contributors if facts.value(c) == accumulated)
        yield _violation(facts, fact, source, _target_text(facts, fact.node), confidence)
    yield from _through_methods(facts)


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
