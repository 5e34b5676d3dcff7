"""LL102 tensor-collection: a graph-attached tensor kept in a container that outlives the step."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from leaklint.findings import Confidence, Severity
from leaklint.rule import Rule, Violation

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.prefilter import SyntaxShape


class TensorCollection(Rule):
    code = "LL102"
    name = "tensor-collection"
    severity = Severity.LEAK
    fixable = True
    summary = "A tensor that carries its autograd graph is stored in a container that outlives the iteration."
    help = "store the tensor's .detach() (add .cpu() to free device memory, or use .item() for a scalar)"
    docs = """
## What it finds
A graph-attached tensor (a loss, a model output, or something computed from one outside
`torch.no_grad()`) stored with `.append`, `.extend`, `.insert`, `.add`, `lst += [t]`, `d[k] = t` or
`d.setdefault(k, []).append(t)` into a container that lives longer than one iteration: a list
created before the loop, an attribute of `self`, or a module-level name. Tuples, lists and dicts
that hold such a tensor count too, as does a tensor grown by concatenation
(`preds = torch.cat([preds, out])`) and a comprehension over a data loader
(`outputs = [model(x) for x, _ in loader]`). `.cpu()` and `.to(...)` do not help: the copy is still part of
the graph. A store in `__init__` counts only inside a loop over steps: `__init__` runs once per object,
so a graph kept there does not pile up call after call.

## Why it matters
Every stored tensor keeps its whole autograd graph alive, and with it the activations saved for
the backward pass: collecting outputs for a metric at the end of the epoch keeps one forward pass
per batch in memory. Memory grows with every batch until the epoch ends (or forever, if the list is
never cleared). `self.outputs.append(out)` in a `training_step` or `forward` is the same leak across
calls.

## Example
```python
predictions = []
for x, y in loader:
    out = model(x)
    loss = criterion(out, y)
    loss.backward()
    predictions.append(out.cpu())
```

## Use instead
```python
predictions = []
for x, y in loader:
    out = model(x)
    loss = criterion(out, y)
    loss.backward()
    predictions.append(out.detach().cpu())
```

## Fix safety
`.append(out)` becomes `.append(out.detach())`, and the same for the other stores
(`d[k] = out.detach()`, `lst += [out.detach()]`). As for LL101, **safe** when leaklint knows the
value is a tensor (a name holding a loss or something `backward()` is called on, a torch loss's
result, arithmetic on one) since detaching keeps its value, dtype and device; **unsafe** when it
may be something else: a model output (a tuple or a `ModelOutput` without `.detach()`), the result
of a callable that is a loss only by its name, or a name the file indexes or iterates over. Every
graph-carrying element of a stored literal is detached (`.extend([loss.detach(), loss.detach() * 2])`),
and each branch of a conditional expression (`.append(loss.detach() if ok else None)`); a value
that is itself nested in a literal or a comprehension (`[[a, b]]`, `[model(x) for x in xs]`) gets
no fix: which element to detach is the user's call. A value the file uses as a mapping
(`loss_dict = criterion(out, y)` with `loss_dict["ce"]` or `loss_dict.items()`, as in DETR) is
still reported — a dict of graph tensors keeps every graph — but its fix is display-only:
`{k: v.detach() for k, v in loss_dict.items()}`, since a dict has no `.detach()` and its values
may not all be tensors. Adding `.cpu()` to free device memory is left to you.

## Known false positives
Collecting losses on purpose and calling `.backward()` on their sum or stack in the same function
is recognised and not reported, as is a store under a constant key (`stats["last"] = loss` keeps
one graph, not one per step), as is a `forward` that gathers per-layer features in a loop and
returns them. Lightning's `validation_step`/`test_step`/`predict_step` run without gradients and are
not reported. A container passed in by the caller is only reported when the store happens in a loop.

## References
- PyTorch FAQ, "Don't accumulate history across your training loop":
  https://pytorch.org/docs/stable/notes/faq.html
- Appending model outputs in a loop grows memory until it runs out (256 GB):
  https://github.com/allenai/longformer/issues/36
- Runtime repro: `leaklint verify LL102` measures the leaky and the fixed loop body.
"""
    VALID = (
        """
import torch
from torch import nn

class Probe(nn.Module):
    def __init__(self, example):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.example_outputs.append(self.fc(example))  # once per object, not per step
""",
        """
preds = []
for x, y in loader:
    out = model(x)
    preds.append(out.detach().cpu())
""",
        """
import torch
with torch.no_grad():
    logits = [model(x) for x, _ in val_loader]
heads = [head(features) for head in model.heads]
""",
        """
import torch
preds = []
with torch.no_grad():
    for x, y in loader:
        preds.append(model(x))
""",
        """
import torch
def step(model, batches, optimizer):
    losses = []
    for x, y in batches:
        losses.append(criterion(model(x), y))
    torch.stack(losses).sum().backward()
    optimizer.step()
""",
        """
import torch.nn as nn
class Pyramid(nn.Module):
    def forward(self, x):
        features = []
        for layer in self.layers:
            x = layer(x)
            features.append(x)
        return features
""",
        """
import torch
def run(model, train_loader, eval_loader, optimizer):
    for batch in train_loader:
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
    model.eval()
    losses = []
    for batch in eval_loader:
        with torch.no_grad():
            outputs = model(**batch)
        loss = outputs.loss
        losses.append(loss)
    return torch.stack(losses).mean().item()
""",
        """
import torch.nn as nn
class Policy(nn.Module):
    def forward(self, x):
        return x
policy = Policy()
def step(x):
    out = policy(x)
    return out.sum().item(), out
def collect(loader):
    history = []
    for x in loader:
        value, out = step(x)
        history.append(value)
    return history
def episode(env):
    log_probs = []
    done = False
    while not done:
        log_probs.append(policy(env.obs).log_softmax(-1)[0])
        done = env.done
    return log_probs
""",
        """
latest = {}
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    latest["loss"] = loss
""",
        """
history = {}
for epoch, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    history[epoch] = loss.item()
""",
    )
    INVALID = (
        """
import torch
def predict(model, loader):
    model.eval()
    outputs = [model(x) for x, _ in loader]  # expect: LL102
    preds = torch.zeros(0)
    for x, _ in loader:
        preds = torch.cat([preds, model(x)])  # expect: LL102
    return outputs, preds
""",
        """
preds = []
for x, y in loader:
    out = model(x)
    loss = criterion(out, y)
    loss.backward()
    preds.append(out.cpu())  # expect: LL102
""",
        """
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        y = self.body(x)
        self.activations.append(y)  # expect: LL102
        return y
""",
        """
losses = {}
for step, batch in enumerate(train_loader):
    loss = loss_fn(model(batch), batch)
    loss.backward()
    losses[step] = loss  # expect: LL102
    history = []
    history += [loss]
""",
        """
records = []
for x, y in loader:
    out = model(x)
    out.sum().backward()
    records.setdefault("out", []).append((out, y))  # expect: LL102
""",
    )

    @classmethod
    def may_report(cls, shape: SyntaxShape, min_confidence: Confidence) -> bool:
        """Above low confidence, a finding needs graph evidence and a loop over steps, a container on
        ``self`` filled outside ``__init__``, one a loop fills from outside its function, or a method
        that keeps its argument."""
        if min_confidence is Confidence.LOW:
            return True
        stores = shape.iteration_loop or shape.self_container_store or shape.loop_outer_store or shape.argument_keeping_call
        return shape.graph_evidence and stores

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        from leaklint.rules.checks.ll102_tensor_collection import check

        return check(facts)

    class Repro(Rule.Repro):
        """A validation loop that keeps each batch's loss in a list, graph and all, vs its `.detach()`."""

        def setup(self, ctx):
            import torch
            ctx.model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).to(ctx.device)
            ctx.x = torch.randn(64, 64, device=ctx.device)
            ctx.y = torch.randint(0, 10, (64,), device=ctx.device)
            ctx.losses = []

        def leaky(self, ctx):
            import torch.nn.functional as F
            loss = F.cross_entropy(ctx.model(ctx.x), ctx.y)
            ctx.losses.append(loss)

        def fixed(self, ctx):
            import torch.nn.functional as F
            loss = F.cross_entropy(ctx.model(ctx.x), ctx.y)
            ctx.losses.append(loss.detach())
