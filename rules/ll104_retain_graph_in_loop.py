"""LL104 retain-graph-in-loop: ``backward(retain_graph=True)`` where no later backward needs the graph."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from leaklint.findings import Confidence, Severity
from leaklint.rule import Rule, Violation

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.prefilter import SyntaxShape


class RetainGraphInLoop(Rule):
    code = "LL104"
    name = "retain-graph-in-loop"
    severity = Severity.PEAK
    fixable = True
    summary = "backward(retain_graph=True) in a loop where no later backward goes through the same graph."
    help = "drop retain_graph=True: it is only needed when a second backward goes through the same graph"
    docs = """
## What it finds
`loss.backward(retain_graph=True)`, `torch.autograd.backward(..., retain_graph=True)`,
`torch.autograd.grad(..., retain_graph=True)`, `scaler.scale(loss).backward(retain_graph=True)` or
`accelerator.backward(loss, retain_graph=True)` inside a loop, when it is the last backward of the
iteration and the graph it differentiates is built in that iteration: nothing after it goes through
that graph again. When the loop also carries a graph-attached value into the next iteration without
`.detach()` (the LL103 situation, typically an RNN hidden state), the message says so: the retained
graphs then chain up and memory grows every iteration.

## Why it matters
`backward()` frees the buffers the graph saved for the backward pass (the activations) as it goes;
`retain_graph=True` keeps them. That is what you want when a second backward goes through the same
graph (two losses sharing a trunk, a GAN whose generator output feeds the discriminator loss and the
generator loss), but on the last backward of an iteration it only keeps a whole forward pass of
activations alive until the next iteration rebinds the names: the peak memory of a step can double.
It is often added to silence "Trying to backward through the graph a second time", which usually
means a value from the previous iteration (a hidden state, a running statistic) still carries its
graph; then every retained graph stays reachable from the next one, and memory and the time of each
backward grow without bound. Detach the carried value instead.

## Example
```python
hidden = model.init_hidden(batch_size)
for data, targets in batches:
    optimizer.zero_grad()
    output, hidden = model(data, hidden)
    loss = criterion(output, targets)
    loss.backward(retain_graph=True)
    optimizer.step()
```

## Use instead
```python
hidden = model.init_hidden(batch_size)
for data, targets in batches:
    optimizer.zero_grad()
    hidden = tuple(h.detach() for h in hidden)
    output, hidden = model(data, hidden)
    loss = criterion(output, targets)
    loss.backward()
    optimizer.step()
```

## Fix safety
The fix drops the argument: `loss.backward(retain_graph=True)` becomes `loss.backward()`, and
the same for `torch.autograd.grad`, `torch.autograd.backward` and `accelerator.backward`.
**Unsafe**: if a later backward goes through the same graph in a way leaklint cannot see (a
helper called afterwards, a hook), it now fails with "Trying to backward through the graph a
second time". No fix while a carried state links the iterations' graphs (the message names it):
dropping `retain_graph` alone would make the second iteration fail. Detach the state first
(LL103's fix does), and the next `--fix` pass drops `retain_graph=True`. Only the argument and
its comma are removed, so a call written over several lines keeps its layout (a call left with no
argument closes up: `loss.backward()`); an argument with a comment next to it — on its line, or
between it and the argument or parenthesis beside it — gets no fix, since the comment would end up
describing another line.

## Known false positives
A backward after the retaining one in the same iteration (`loss1.backward(retain_graph=True);
loss2.backward()`) is taken as the legitimate two-losses-one-graph use and not reported. So is a
loop that differentiates a graph built before the loop again and again (a Jacobian row by row,
`torch.autograd.grad(y[i], x, retain_graph=True)`; one backward per class of a saliency map), and a
call with `create_graph=True` (higher-order gradients: gradient penalties, meta-learning keep the
graph on purpose), and a loop that keeps a state with its graph for a few iterations and then
re-initialises it (`if step % k == 0: hidden = None`): the next backward goes through the retained
graph by design. A `retain_graph` flag that is not the literal `True` (`retain_graph=i < n - 1`)
is not reported. Other backward calls earlier in the same iteration lower the confidence to medium:
leaklint cannot always tell whether they share the graph. Outside a loop, `retain_graph=True` costs
one step's activations once and is not reported.

## References
- `torch.Tensor.backward`, `retain_graph` ("Note that in nearly all cases setting this option to
  True is not needed and often can be worked around in a much more efficient way"):
  https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html
- "Memory blow up when setting retain_graph = True" (only the backward calls before the last one
  need it): https://github.com/GBLin5566/toward-controlled-generation-of-text-pytorch/issues/9
- An RNN trained with `retain_graph=True` on every step, asking about memory explosion and slowdown:
  https://github.com/isds-neu/PeRCNN/issues/3
- `retain_graph=True` added to silence "Trying to backward through the graph a second time" for a
  memory carried across segments; detaching the memory removed the need:
  https://github.com/jlamprou/Infini-Attention/issues/3
- `torch.autograd.grad`, `retain_graph`: https://pytorch.org/docs/stable/generated/torch.autograd.grad.html
- Runtime repro: `leaklint verify LL104` measures the leaky and the fixed loop body.
"""
    VALID = (
        """
for x, y in loader:
    optimizer.zero_grad()
    features = model.trunk(x)
    loss1 = criterion(model.head1(features), y)
    loss2 = criterion(model.head2(features), y)
    loss1.backward(retain_graph=True)
    loss2.backward()
    optimizer.step()
""",
        """
import torch
x.requires_grad_(True)
y = model(x)
rows = []
for i in range(y.size(0)):
    grad, = torch.autograd.grad(y[i], x, retain_graph=True)
    rows.append(grad)
""",
        """
import torch
for real, _ in loader:
    real.requires_grad_(True)
    d_out = netD(real)
    grads = torch.autograd.grad(d_out.sum(), real, create_graph=True, retain_graph=True)[0]
    penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
    (d_out.mean() + 10 * penalty).backward()
""",
        """
losses = [criterion(head(features), y) for head in heads]
for i, loss in enumerate(losses):
    loss.backward(retain_graph=i < len(losses) - 1)
""",
        """
out = model(x)
loss = criterion(out, y)
loss.backward(retain_graph=True)
""",
        """
import torch.nn as nn
lstm = nn.LSTM(8, 8)
hidden = None
for step, (x, y) in enumerate(loader):
    if step % 4 == 0:
        hidden = None
    out, hidden = lstm(x, hidden)
    ((out - y) ** 2).mean().backward(retain_graph=True)
""",
        """
for x, y in loader:
    out = model(x)
    for c in range(out.size(1)):
        model.zero_grad()
        out[:, c].sum().backward(retain_graph=True)
""",
    )
    INVALID = (
        """
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward(retain_graph=True)  # expect: LL104
    optimizer.step()
""",
        """
def train(model, batches, criterion, optimizer):
    hidden = model.init_hidden(20)
    for data, targets in batches:
        optimizer.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward(retain_graph=True)  # expect: LL104
        optimizer.step()
""",
        """
import torch
for real in loader:
    fake = netG(torch.randn(64, 100))
    d_loss = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
    d_loss.backward()
    optD.step()
    g_loss = criterion(netD(fake), ones)
    g_loss.backward(retain_graph=True)  # expect: LL104
    optG.step()
""",
        """
import torch
for step, (x, y) in enumerate(loader):
    scaler.scale(criterion(model(x), y)).backward(retain_graph=True)  # expect: LL104
    scaler.step(optimizer)
    scaler.update()
""",
    )

    @classmethod
    def may_report(cls, shape: SyntaxShape, min_confidence: Confidence) -> bool:
        """Only a literal ``retain_graph=True`` is reported."""
        return shape.mentions("retain_graph")

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        from leaklint.rules.checks.ll104_retain_graph_in_loop import check

        return check(facts)

    class Repro(Rule.Repro):
        """`loss.backward(retain_graph=True)` with nothing else going through the graph, vs plain backward."""

        def setup(self, ctx):
            import torch
            ctx.model = torch.nn.Sequential(torch.nn.Linear(64, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(ctx.device)
            ctx.optimizer = torch.optim.SGD(ctx.model.parameters(), lr=0.01)
            ctx.x = torch.randn(256, 64, device=ctx.device)
            ctx.y = torch.randint(0, 10, (256,), device=ctx.device)
            ctx.loss = None

        def _forward(self, ctx):
            import torch.nn.functional as F
            ctx.optimizer.zero_grad()
            ctx.loss = F.cross_entropy(ctx.model(ctx.x), ctx.y)

        def leaky(self, ctx):
            self._forward(ctx)
            ctx.loss.backward(retain_graph=True)
            ctx.optimizer.step()

        def fixed(self, ctx):
            self._forward(ctx)
            ctx.loss.backward()
            ctx.optimizer.step()
