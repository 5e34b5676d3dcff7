"""LL103 hidden-state-carry: recurrent state fed into the next iteration with its autograd graph."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from leaklint.findings import Confidence, Severity
from leaklint.rule import Rule, Violation

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.prefilter import SyntaxShape


class HiddenStateCarry(Rule):
    code = "LL103"
    name = "hidden-state-carry"
    severity = Severity.LEAK
    fixable = True
    summary = "A recurrent state is fed into the next iteration without .detach(), so the autograd graph grows through every iteration."
    help = "detach the state before feeding it back: hidden = hidden.detach() (an LSTM's (h, c): tuple(v.detach() for v in hidden))"
    docs = """
## What it finds
A value computed with its autograd graph in one iteration of a training or data loop and fed into
the computation of the next iteration without `.detach()`: the hidden state of an RNN/LSTM/GRU
carried across batches (`output, hidden = model(x, hidden)`, `out, (h, c) = lstm(x, (h, c))`,
`h = cell(x, h)`), a state kept on a module and fed back on every call
(`self.hidden = self.lstm(x, self.hidden)[1]` in `forward`), or a running statistic kept with its
graph and used as an input of the next step (`self.mu = 0.9 * self.mu + 0.1 * h.mean(0)` followed by
`return h - self.mu`). The finding is on the statement that feeds the carried value into the
computation. A loop counts when it runs a backward every iteration, or when it iterates over
batches of data (a loader, `for batch in ...`) outside any loop that runs backward.

## Why it matters
The new state is computed from the old one, so its graph links to the previous iteration's graph,
which links to the one before: every iteration's graph stays reachable from the current state.
Without a backward in between (evaluation, gradient accumulation) the activations saved by every
iteration stay alive too and memory grows until the job dies. With `loss.backward()` every
iteration, the second backward runs into the first iteration's graph, whose buffers are already
freed, and fails with "Trying to backward through the graph a second time"; `retain_graph=True`,
the usual way to silence it, keeps every buffer instead, and memory and the time of each backward
grow with every batch (see LL104). Truncated backpropagation through time means cutting the graph
between batches: detach the state, keep its value.

## Example
```python
hidden = model.init_hidden(batch_size)
for data, targets in batches:
    optimizer.zero_grad()
    output, hidden = model(data, hidden)
    loss = criterion(output.view(-1, ntokens), targets)
    loss.backward()
    optimizer.step()
```

## Use instead
```python
def repackage_hidden(h):
    # Wraps hidden states in new tensors, to detach them from their history.
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)

hidden = model.init_hidden(batch_size)
for data, targets in batches:
    optimizer.zero_grad()
    hidden = repackage_hidden(hidden)
    output, hidden = model(data, hidden)
    loss = criterion(output.view(-1, ntokens), targets)
    loss.backward()
    optimizer.step()
```

## Fix safety
The fix inserts `h = h.detach()` as the first statement of the loop that carries the state (for
a `self.hidden` kept on a module: the first statement of the step method, e.g. `forward`), which
is truncated backpropagation through time. It is tuple-aware: names unpacked and fed back together
are detached together (`h, c = h.detach(), c.detach()` for `out, (h, c) = lstm(x, (h, c))`); a
state that starts as a tuple gets `hidden = tuple(t.detach() for t in hidden)`; the state of an
`nn.GRU`/`nn.RNN` built in the file is a tensor and that of an `nn.LSTM` a tuple; a state whose
shape the file does not show (`hidden = model.init_hidden(bs)`) gets
`hidden.detach() if isinstance(hidden, torch.Tensor) else tuple(t.detach() for t in hidden)`. A
state that starts as `None` is detached behind `if hidden is not None:`.

**Unsafe**: it changes the gradient flow by design. Gradients no longer reach earlier batches,
which is what truncated BPTT wants, not what code that means to backpropagate through the whole
history wants. No fix when the state is not bound before the loop (the first iteration would raise
`NameError`), when it starts as a number (`self.mu = 0.0` has no `.detach()`), when the loop
body shares a line with its header, or when the `isinstance(hidden, torch.Tensor)` form is needed
but torch has no usable name there (a local `torch` shadows it, or torch is an optional import the
function does not already use: see LL201).

## Known false positives
Carrying the state through the time steps of one sequence (`for t in range(seq_len): h = cell(x[t], h)`
followed by one backward after the loop) is ordinary backpropagation through time and is not
reported, and neither is a loop inside a model's own code (`forward`, an `nn.Module` method, a
per-step method) that runs no backward: it walks the chunks or modalities of one forward pass.
Neither is a state detached anywhere in the loop (`h.detach()`, `h.detach_()`,
`tuple(v.detach() for v in h)`, `Variable(h.data)`, a helper whose name says `detach` or
`repackage`, or one in the same file that returns a detached value), re-initialised in the loop
(`hidden = model.init_hidden(bs)`; a lazy `if hidden is None:` start does not count), or computed
under `torch.no_grad()`. A state kept on a module (`self.hidden`) is not reported when another
method of the class re-initialises or detaches it, or code outside the class assigns it
(`model.hidden = ...`): leaklint assumes that runs between steps. A value that is only accumulated
(`avg = 0.9 * avg + 0.1 * loss`, `total = torch.add(total, loss)`, `total.add_(loss)`) is LL101's
finding, and a tensor only grown by concatenation (`preds = torch.cat([preds, out])`) is LL102's,
not this one; a running value that is also fed into the next computation is this rule's (and
LL101 then stays quiet). If you really mean to
backpropagate through every batch so far, suppress the finding with `# noqa: LL103`.

## References
- PyTorch word language model example, `repackage_hidden` ("Wraps hidden states in new Tensors, to
  detach them from their history"): https://github.com/pytorch/examples/blob/main/word_language_model/main.py
- "Memory leak problem in LSTM and RNN": the carried `hidden` keeps the whole sequence's graph alive
  until it is detached: https://github.com/pytorch/pytorch/issues/2198
- `self.hidden` fed back in `forward`: each training step takes longer than the one before:
  https://github.com/pytorch/pytorch/issues/2769
- A compressive memory carried across segments: "Trying to backward through the graph a second
  time", then `retain_graph=True` and growing memory, fixed by detaching it:
  https://github.com/jlamprou/Infini-Attention/issues/3
- `Tensor.detach`: https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html
- Runtime repro: `leaklint verify LL103` measures the leaky and the fixed loop body.
"""
    VALID = (
        """
import torch
def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)

def train(model, batches, criterion, optimizer):
    hidden = model.init_hidden(20)
    for data, targets in batches:
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        optimizer.step()
""",
        """
import torch.nn as nn
lstm = nn.LSTM(32, 64)
for data, targets in loader:
    h = torch.zeros(1, 16, 64)
    c = torch.zeros(1, 16, 64)
    out, (h, c) = lstm(data, (h, c))
    loss = (out - targets).pow(2).mean()
    loss.backward()
    h, c = h.detach(), c.detach()
""",
        """
import torch
import torch.nn as nn
cell = nn.GRUCell(16, 32)
for x, y in loader:
    h = torch.zeros(x.size(1), 32)
    for t in range(x.size(0)):
        h = cell(x[t], h)
    loss = ((h - y) ** 2).mean()
    loss.backward()
""",
        """
import torch
def evaluate(model, batches, criterion):
    model.eval()
    hidden = model.init_hidden(10)
    total = 0.0
    with torch.no_grad():
        for data, targets in batches:
            output, hidden = model(data, hidden)
            total += criterion(output, targets).item()
    return total
""",
        """
import torch.nn as nn
lstm = nn.LSTM(8, 8)
hidden = None
for step, (x, y) in enumerate(loader):
    out, hidden = lstm(x, hidden)
    loss = ((out - y) ** 2).mean()
    loss.backward()
    for h in hidden:
        h.detach_()
""",
        """
import torch.nn as nn
class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 8)
        self.hidden = None
    def reset_state(self):
        self.hidden = None
    def forward(self, x):
        out, self.hidden = self.lstm(x, self.hidden)
        return out
""",
        """
avg = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    avg = 0.9 * avg + 0.1 * loss
""",
        # only accumulated (LL101) or only grown by concatenation (LL102): not fed into a computation
        """
import torch
def collect(model, loader):
    total = torch.zeros(())
    preds = torch.empty(0)
    for x, y in loader:
        out = model(x)
        loss = ((out - y) ** 2).mean()
        loss.backward()
        total = torch.add(total, loss)
        preds = torch.cat([preds, out])
    return preds
""",
        """
from utils import repackage_hidden as repackage
def train(model, batches, criterion):
    hidden = model.init_hidden(20)
    for data, targets in batches:
        hidden = repackage(hidden)
        output, hidden = model(data, hidden)
        criterion(output, targets).backward()
""",
        """
import torch.nn as nn
class ChunkedEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.GRU(16, 16)
    def forward(self, x, num_batches):
        cache = None
        outputs = []
        for i in range(num_batches):
            out, cache = self.encoder(x[i], cache)
            outputs.append(out)
        return outputs
""",
    )
    INVALID = (
        """
def train(model, batches, criterion, optimizer):
    hidden = model.init_hidden(20)
    for data, targets in batches:
        optimizer.zero_grad()
        output, hidden = model(data, hidden)  # expect: LL103
        loss = criterion(output, targets)
        loss.backward(retain_graph=True)
        optimizer.step()
""",
        """
import torch
import torch.nn as nn
lstm = nn.LSTM(32, 64)
h = torch.zeros(1, 16, 64)
c = torch.zeros(1, 16, 64)
for epoch in range(10):
    for data, targets in loader:
        if h.size(1) != data.size(1):
            h = torch.zeros(1, data.size(1), 64)
            c = torch.zeros(1, data.size(1), 64)
        out, (h, c) = lstm(data, (h, c))  # expect: LL103
        loss = (out - targets).pow(2).mean()
        loss.backward()
""",
        """
import torch.nn as nn
class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 16, batch_first=True)
        self.head = nn.Linear(16, 1)
        self.hidden = None
    def forward(self, x):
        out, self.hidden = self.rnn(x, self.hidden)  # expect: LL103
        return self.head(out[:, -1])
""",
        """
import torch
import torch.nn as nn
cell = nn.GRUCell(16, 32)
h = torch.zeros(8, 32)
for x, y in loader:
    for t in range(x.size(0)):
        h = cell(x[t], h)  # expect: LL103
    loss = ((h - y) ** 2).mean()
    loss.backward()
""",
        """
def train(model, batches, criterion):
    state = None
    for data, targets in batches:
        output, new_state = model(data, state)  # expect: LL103
        state = new_state
        criterion(output, targets).backward()
""",
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
        return h - self.mu  # expect: LL103
""",
    )

    @classmethod
    def may_report(cls, shape: SyntaxShape, min_confidence: Confidence) -> bool:
        """A carry across steps needs a loop over steps or a per-step method that updates ``self``;
        above low confidence, graph evidence too."""
        carries = shape.iteration_loop or shape.per_step_state_store
        return carries and (min_confidence is Confidence.LOW or shape.graph_evidence)

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        from leaklint.rules.checks.ll103_hidden_state_carry import check

        return check(facts)

    class Repro(Rule.Repro):
        """A streaming LSTM whose (h, c) state is fed into the next chunk with its graph (no backward in
        between, as in evaluation or gradient accumulation), vs `state = tuple(s.detach() for s in state)`."""

        def setup(self, ctx):
            import torch
            ctx.lstm = torch.nn.LSTM(32, 64).to(ctx.device)
            ctx.head = torch.nn.Linear(64, 1).to(ctx.device)
            ctx.chunk = torch.randn(8, 16, 32, device=ctx.device)
            ctx.targets = torch.randn(8, 16, 1, device=ctx.device)
            ctx.state = (torch.zeros(1, 16, 64, device=ctx.device), torch.zeros(1, 16, 64, device=ctx.device))
            ctx.total = 0.0

        def _step(self, ctx):
            out, ctx.state = ctx.lstm(ctx.chunk, ctx.state)
            ctx.total += ((ctx.head(out) - ctx.targets) ** 2).mean().item()

        def leaky(self, ctx):
            self._step(ctx)

        def fixed(self, ctx):
            ctx.state = tuple(s.detach() for s in ctx.state)
            self._step(ctx)
