"""LL103 hidden-state-carry: recurrent state fed into the next iteration with its autograd graph."""

from __future__ import annotations

from typing import Iterator, Sequence

import libcst as cst

from leaklint.analysis.carry import CarriedState, carried_states
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.provenance import StatementFact
from leaklint.analysis.names import dotted_name, names_read
from leaklint.analysis.places import walk_with_ancestors
from leaklint.analysis.structure import ClassInfo, LoopInfo, names_bound_in
from leaklint.analysis.torch_api import GRAPH_EVIDENCE, LOOPS_OR_FUNCTIONS, TORCH_CODE
from leaklint.analysis.values import Evidence, Kind
from leaklint.analysis.syntax import call_argument
from leaklint.analysis.walk import calls_in, walk
from leaklint.findings import Applicability, Confidence, Severity
from leaklint.fixes.spec import InsertLinesBefore, SuggestedFix, TorchReference, torch_reference
from leaklint.rule import Measured, Rule, Violation


class HiddenStateCarry(Rule):
    code = "LL103"
    name = "hidden-state-carry"
    severity = Severity.LEAK
    fixable = True
    summary = "A state (an RNN hidden state, a kv-cache, a sampler's x, a module's running statistic) carries its autograd graph into the next iteration or call, so the graphs chain up and memory grows."
    help = "detach the state before feeding it back: hidden = hidden.detach() (an LSTM's (h, c): tuple(v.detach() for v in hidden))"
    needs = TORCH_CODE & LOOPS_OR_FUNCTIONS
    autograd = True
    needs_above_low = GRAPH_EVIDENCE
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(2, 0, 4), leaks=(26, 0))
    docs = """
## What it finds
A value computed with its autograd graph in one iteration (or one call) and fed into the
computation of the next without `.detach()`, so that every iteration's graph links to the
previous one. Three situations:

- **A state carried across training or data steps**: the hidden state of an RNN/LSTM/GRU carried
  across batches (`output, hidden = model(x, hidden)`, `out, (h, c) = lstm(x, (h, c))`,
  `h = cell(x, h)`), a state kept on a module and fed back on every call
  (`self.hidden = self.lstm(x, self.hidden)[1]` in `forward`), or a running value kept with its
  graph and used as an input of the next step (`self.mu = 0.9 * self.mu + 0.1 * h.mean(0)` followed
  by `return h - self.mu`). A loop counts when it runs a backward every iteration, or when it
  iterates over batches of data outside any loop that runs backward. A state on `self` counts in
  any method that runs once per step: one a framework calls (`forward`, `training_step`), one
  named as a step, or one the file calls from its training or data loop (`learner.adapt(x, y)`),
  whatever its class. The state may be read back through a local (`weights = self.fast`, then
  `model(x, weights)`), and written in part: a slice assignment or an in-place write into a
  tensor kept on `self` (`self.cache_k[:b, pos] = k`, `self.cache_k[:b].scatter_(1, idx, k)`: a
  kv-cache or a memory bank) keeps the rest of the tensor, and autograd links the new history to
  the old one. Gradients taken with `torch.autograd.grad(..., create_graph=True)` carry a graph
  (fast weights of meta-learning: `self.fast = [w - lr * g for w, g in zip(weights, grads)]`).
- **A state carried through an inference loop whose graph nothing differentiates**: a sampler's
  `x` updated from the model's output (`x = step(x, model(x, t))`), a kv-cache taken from the
  output (`past = out.past_key_values`, `out["past_key_values"]`) and fed into the next step of a
  hand-written `generate()`, an RNN state carried through `generate_text()` or a scoring loop.
  leaklint follows where the state's value goes (`leaklint.analysis.graph_use`): through the
  function, the functions of the file it is passed to, and back to every caller of the function
  in the file; when no flow reaches a backward, every iteration's graph is kept for nothing.
  A graph-attached value the state starts from before the loop (the prompt's forward pass) is
  reported too: the chain starts there.
- **A running statistic of a module**: an attribute that `forward` updates from its own value and
  the layer's input, by assignment or in place (`self.running_mean = 0.9 * self.running_mean +
  0.1 * x.mean(0)`, `self.running_mean.mul_(0.9).add_(0.1 * mean)`), in a module class that the
  file uses as a layer (built inside another module, or inside `nn.Sequential` / `nn.ModuleList`),
  whose input therefore carries the graph of the layers before it. Fed back or not, the attribute
  keeps the graph of every training step. The same holds for a running value that a per-step
  method of any class computes from what a forward hook records with its graph
  (`layer.register_forward_hook(lambda m, i, o: self.outs.append(o))`, then
  `self.trace = 0.9 * self.trace + self.outs.pop(0)`).

The finding is on the statement that stores the graph into the state (the line to change), one
per statement. A value re-bound from scratch in the loop before it is read (`out = model(x)`) is
not a state; a loop over layers that calls its items (`for layer in self.layers: h = layer(h)`)
is one forward pass, not a chain that grows.

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
Only for a state carried across training or data steps. For an inference loop and a running
statistic the right edit is `torch.no_grad()` around the loop or the update (or `.detach()` of the
layer's input in the statistic), which leaklint leaves to you.

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
history wants. No fix when the step takes gradients with respect to the state
(`torch.autograd.grad(loss, weights)` with `weights = self.fast`: detached, it no longer requires
grad; `[w.detach().requires_grad_() for w in weights]` is the edit), when the state is not bound before the loop (the first iteration would raise
`NameError`), when it starts as a number (`self.mu = 0.0` has no `.detach()`), when the loop
body shares a line with its header, or when the `isinstance(hidden, torch.Tensor)` form is needed
but torch has no usable name there (a local `torch` shadows it, or torch is an optional import the
function does not already use: see LL201).

## Known false positives
Carrying the state through the time steps of one sequence (`for t in range(seq_len): h = cell(x[t], h)`
followed by one backward after the loop) is ordinary backpropagation through time and is not
reported, and neither is a loop inside a model's own code (`forward`, an `nn.Module` method, a
per-step method) whose result a caller may differentiate: it walks the chunks or modalities of one
forward pass. An inference loop counts only when no flow of the state reaches a backward and the
file shows every flow: a state returned to callers the file does not show, stored on an object,
handed to a function of another module or captured by a closure is taken as used. A sampler
whose samples a training loss backpropagates through (an unrolled sampler trained end to end) is
therefore not reported, though it keeps every step's graph; a function called only with
gradients disabled is not reported either, and one whose callers the file does not show is low
confidence. Neither is a state detached anywhere in the loop (`h.detach()`, `h.detach_()`,
`tuple(v.detach() for v in h)`, `Variable(h.data)`, a helper whose name says `detach` or
`repackage`, one in the same file that returns a detached value, or one that cuts the state it is
given before anything else, as char-rnn's `predict` does with `h = tuple(each.data for each in h)`), re-initialised in the loop
(`hidden = model.init_hidden(bs)`; a lazy `if hidden is None:` start does not count), computed
under `torch.no_grad()`, or made of a detached result (`prev = logits.argmax(-1)`). A state kept on
a module (`self.hidden`) is not reported when another method of the class re-initialises or
detaches it, or code outside the class assigns it (`model.hidden = ...`): leaklint assumes that
runs between steps. A write into `self` in a branch that runs only in evaluation mode
(`if not self.training:`) is not a training step's, and neither is one under `torch.no_grad()`;
an item assignment into something not known to be a tensor (`self.logs["loss"] = loss` replaces a
dict entry) is LL105's business, not a carry. A running statistic of a module class that the file does not use as a layer
is low confidence (its input may be raw data without a graph: an observation normaliser). A value
that is only accumulated (`avg = 0.9 * avg + 0.1 * loss`, `total = torch.add(total, loss)`,
`total.add_(loss)`) is LL101's finding, and a tensor only grown by concatenation
(`preds = torch.cat([preds, out])`) is LL102's, not this one; a running value that is also fed into
the next computation is this rule's (and LL101 then stays quiet). If you really mean to
backpropagate through every batch so far, suppress the finding with `# noqa: LL103`.

On bench/realcode the true findings at the default confidence are in a sampling loop of
Practical_RL's char-RNN seminar (low impact: a few dozen steps). The debatable ones are BigGAN's
hand-written batch norm (also copied into a Kaggle GAN), whose slice write of a graph-attached
mean into its `stored_mean` buffer really chains every training step's graph, but only when that
layer is switched on, which no script there does. The low-confidence findings are false:
yolov5's running mean of `loss_items`, which its `compute_loss` returns detached in another file
(the name alone looks like a loss), and fairseq's Transformer-XL wrapper feeding `self._mems` back
into the model, whose library code (transformers' `TransfoXL`) returns the memories detached.
The false positives at first at the default confidence (a char-RNN `predict` that detaches the
state it is given, an unrolled RNN forward differentiated afterwards, a loop variable rebound by
the `for`, a generator expression's own variable) are fixed. On bench/leaks every finding is on a
marked line, with no finding elsewhere. Still missed there: an unrolled sampler trained end to
end (its graph is used).

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
- A custom batch norm keeping its running mean with the graph: "memory leak in custom BatchNorm",
  fixed by updating it under `torch.no_grad()`: https://github.com/pytorch/pytorch/issues/20275
- A DDPM sampler updating `x_i` from the model's output without `no_grad`, its memory growing with
  the number of steps: https://github.com/TeaPearce/Conditional_Diffusion_MNIST/issues/12
- A hand-written `generate()` feeding `past_key_values` back with gradients on:
  https://github.com/allenai/OLMo/pull/164
- `Tensor.detach`: https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html
- Runtime repro: `leaklint verify LL103` measures the leaky and the fixed loop body.
"""
    VALID = (
        # an RNN unrolled over the time steps of one batch (its caller differentiates the result)
        """
import torch
def rnn_loop(char_rnn, batch_ix):
    batch_size, max_length = batch_ix.size()
    hid_state = char_rnn.initial_state(batch_size)
    logprobs = []
    for x_t in batch_ix.transpose(0, 1):
        hid_state, logp_next = char_rnn(x_t, hid_state)
        logprobs.append(logp_next)
    return torch.stack(logprobs, dim=1)
""",
        # the loop's own item, re-bound by the loop header before each iteration
        """
def train(encoder, decoder, loader, criterion, optimizer):
    for imgs, caps in loader:
        imgs = encoder(imgs)
        loss = criterion(decoder(imgs, caps), caps)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
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
        # a running statistic updated without a graph (no_grad, or from the detached input)
        """
import torch
import torch.nn as nn
class MeanNorm(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("running_mean", torch.zeros(n))
        self.register_buffer("running_var", torch.ones(n))
    def forward(self, x):
        if self.training:
            with torch.no_grad():
                self.running_mean.mul_(0.9).add_(0.1 * x.mean(0))
            self.running_var = 0.9 * self.running_var + 0.1 * x.var(0).detach()
        return (x - self.running_mean) / self.running_var.sqrt()
net = nn.Sequential(nn.Linear(8, 8), MeanNorm(8))
""",
        # generation under no_grad, and a state made of detached values (argmax, multinomial)
        """
import torch
import torch.nn.functional as F
@torch.no_grad()
def generate(model, ids, steps):
    past = None
    for _ in range(steps):
        out = model(ids, past_key_values=past, use_cache=True)
        past = out.past_key_values
        ids = torch.multinomial(F.softmax(out.logits[:, -1], -1), 1)
    return ids

def refine(model, optimizer, batches, passes=3):
    for title, target in batches:
        draft = torch.zeros_like(target)
        for _ in range(passes):
            logits = model(title, draft)
            loss = F.cross_entropy(logits.flatten(0, 1), target.flatten())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            draft = logits.argmax(-1)
""",
        # the layers of one forward pass, and a sampler trained end to end through its steps
        """
import torch
import torch.nn as nn
class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(4)])
    def predict(self, x):
        h = x
        for layer in self.layers:
            h = layer(h)
        return h.argmax(1)

class Sampler(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 8)
    def sample(self, x, steps=10):
        for t in range(steps):
            x = x - 0.1 * self.net(x)
        return x

def train(sampler, optimizer, targets):
    for y in targets:
        loss = (sampler.sample(torch.randn(4, 8)) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
        # a sampling helper that cuts the state it is given before its forward (char-rnn)
        """
import torch
def predict(net, char, h):
    h = tuple([each.data for each in h])
    out, h = net(torch.eye(65)[char].view(1, 1, -1), h)
    return int(out.argmax()), h

def sample(net, size):
    net.eval()
    h = net.init_hidden(1)
    chars = [0]
    for _ in range(size):
        char, h = predict(net, chars[-1], h)
        chars.append(char)
    return chars
""",
        # state on self cut or never recorded: a hook that records detached outputs, a buffer written
        # under no_grad or in evaluation mode only, fast weights detached, a dict entry replaced
        """
import torch
import torch.nn as nn
import torch.nn.functional as F

class ActivationDrift:
    def __init__(self, layer):
        self.seen = []
        self.mean = torch.zeros(layer.out_features)
        layer.register_forward_hook(self.record)
    def record(self, module, inputs, output):
        self.seen.append(output.detach())
    def step(self):
        for out in self.seen:
            self.mean = 0.99 * self.mean + 0.01 * out.mean(0)
        self.seen.clear()

class MemoryReadout(nn.Module):
    def __init__(self, dim, slots):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("memory", torch.zeros(slots, dim))
    def forward(self, x, index):
        h = self.proj(x)
        logits = h @ self.memory.t()
        with torch.no_grad():
            self.memory[index] = h
        if not self.training:
            self.memory[index].copy_(h)
        return logits

class HyperStep:
    def __init__(self, w):
        self.w = w
        self.lr = torch.tensor(0.1, requires_grad=True)
        self.logs = {}
    def update(self, x, y):
        w = self.w
        loss = F.mse_loss(x @ w, y)
        (g,) = torch.autograd.grad(loss, w, create_graph=True)
        self.w = (w - self.lr * g).detach().requires_grad_()
        self.logs["loss"] = loss
        return loss + self.logs["loss"] * 0

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), MemoryReadout(16, 32))
drift = ActivationDrift(model[0])
stepper = HyperStep(torch.randn(8, 1, requires_grad=True))
for x, y in loader:
    loss = ((model(x) - y) ** 2).mean() + stepper.update(x, y)
    loss.backward()
    drift.step()
""",
        # `sum(loss for loss in loss_dict.values())`: the generator's own `loss`, not the
        # previous iteration's
        """
import torch
def train(model, loader, optimizer, epochs):
    for epoch in range(epochs):
        for images, targets in loader:
            loss_dict = model(images, targets)
            loss = sum(loss for loss in loss_dict.values())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
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
        output, new_state = model(data, state)
        state = new_state  # expect: LL103
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
        self.mu = 0.9 * self.mu + 0.1 * h.mean(0)  # expect: LL103
        return h - self.mu
""",
        # running statistics of a layer, by assignment and in place
        """
import torch
import torch.nn as nn
class MeanOnlyNorm(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("running_mean", torch.zeros(n))
        self.register_buffer("running_var", torch.ones(n))
    def forward(self, x):
        if self.training:
            mean, var = x.mean(0), x.var(0)
            self.running_mean = 0.9 * self.running_mean + 0.1 * mean  # expect: LL103
            self.running_var.mul_(0.9).add_(0.1 * var)  # expect: LL103
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean) / var.sqrt()
net = nn.Sequential(nn.Linear(8, 8), MeanOnlyNorm(8), nn.ReLU())
""",
        # an inference loop: a hand-written generate() and a sampler, nothing differentiates them
        """
import torch
import torch.nn.functional as F
from transformers import GPT2LMHeadModel, GPT2Config

def continue_text(model, ids, steps):
    out = model(ids, use_cache=True)
    past = out.past_key_values  # expect: LL103
    for _ in range(steps):
        token = torch.multinomial(F.softmax(out.logits[:, -1], -1), 1)
        out = model(token, past_key_values=past, use_cache=True)
        past = out.past_key_values  # expect: LL103
    return token.item()

model = GPT2LMHeadModel(GPT2Config())
for prompt in prompts:
    print(continue_text(model, prompt, 200))
""",
        """
import torch
import torch.nn as nn
class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 8))
    def sample(self, n, steps=1000):
        x = torch.randn(n, 8)
        for t in range(steps):
            eps = self.net(x)
            x = x - 0.01 * eps + 0.01 * torch.randn_like(x)  # expect: LL103
        return x

model = Denoiser()
torch.save(model.sample(64).cpu(), "samples.pt")
""",
        # a buffer of a layer written slice by slice with the graph, read by the next forward
        """
import torch
import torch.nn as nn
class MemoryReadout(nn.Module):
    def __init__(self, dim, slots):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("memory", torch.zeros(slots, dim))
    def forward(self, x, index):
        h = self.proj(x)
        self.memory[index] = h  # expect: LL103
        return h @ self.memory.t()
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.readout = MemoryReadout(16, 128)
    def forward(self, x, index):
        return self.readout(x, index)
""",
        # state on a plain object, kept by a method the training loop calls every step
        """
import torch
import torch.nn as nn
import torch.nn.functional as F

class SmoothedPrediction:
    def __init__(self):
        self.previous = None
    def loss(self, pred, target):
        if self.previous is None:
            self.previous = pred
        smoothed = 0.5 * (pred + self.previous)
        self.previous = smoothed  # expect: LL103
        return F.mse_loss(smoothed, target)

model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
smoother = SmoothedPrediction()
for inputs, target in loader:
    loss = smoother.loss(model(inputs), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        # weights updated with gradients that keep their graph (create_graph=True), read back next call
        """
import torch
import torch.nn.functional as F

class HyperStep:
    def __init__(self, w):
        self.w = w
        self.lr = torch.tensor(0.1, requires_grad=True)
    def update(self, x, y):
        w = self.w
        loss = F.mse_loss(x @ w, y)
        (g,) = torch.autograd.grad(loss, w, create_graph=True)
        self.w = w - self.lr * g  # expect: LL103
        return loss

stepper = HyperStep(torch.randn(8, 1, requires_grad=True))
for x, y in loader:
    stepper.update(x, y).backward()
""",
        # a running value built from what a forward hook records with the graph
        """
import torch
import torch.nn as nn

class ActivationDrift:
    def __init__(self, layer):
        self.seen = []
        self.mean = torch.zeros(layer.out_features)
        layer.register_forward_hook(self.record)
    def record(self, module, inputs, output):
        self.seen.append(output)
    def step(self):
        for out in self.seen:
            self.mean = 0.99 * self.mean + 0.01 * out.mean(0)  # expect: LL103
        self.seen.clear()

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
drift = ActivationDrift(model[0])
for x, y in loader:
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    drift.step()
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

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


# --- detection ------------------------------------------------------------------------------------
def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file: one per statement that stores a carried graph (the line to
    change), naming every state it stores."""
    chosen: dict[tuple[str, cst.CSTNode], CarriedState] = {}
    for carry in carried_states(facts):
        if not carry.reported:
            continue
        for update in (*carry.seeds, *carry.updates):
            key = (carry.name, update.node)
            if key not in chosen or _depth(carry, update) > _depth(chosen[key], update):
                chosen[key] = carry  # the innermost loop that carries it
    by_update: dict[cst.CSTNode, list[CarriedState]] = {}
    for (_, node), carry in chosen.items():
        by_update.setdefault(node, []).append(carry)
    for node, carries in by_update.items():
        fact = facts.statement_fact(node)
        if fact is not None:
            yield _violation(facts, fact, carries)


def _depth(carry: CarriedState, fact: StatementFact) -> int:
    if carry.loop is None:
        return -1
    return next((i for i, loop in enumerate(fact.loops) if loop is carry.loop), len(fact.loops))


def _confidence(carry: CarriedState) -> Confidence:
    value = carry.value
    if value.confidence is Confidence.LOW:
        return Confidence.LOW
    if carry.running_statistic:
        return Confidence.MEDIUM
    if carry.graph_unused and not carry.crosses_steps:
        return Confidence.MEDIUM if carry.runs_with_grad else Confidence.LOW
    if carry.backward_each_iteration and value.evidence in (Evidence.MODEL, Evidence.DERIVED, Evidence.BACKWARD):
        return Confidence.HIGH
    return Confidence.MEDIUM


def _layer_input(carry: CarriedState) -> str | None:
    """The input of the layer whose ``forward`` updates a running statistic (None elsewhere: the
    graph came from what a hook recorded)."""
    params = carry.function.params
    return params[1] if carry.function.name == "forward" and len(params) > 1 else None


def _loop_header(facts: ModuleFacts, loop: LoopInfo) -> str:
    node = loop.node
    if isinstance(node, cst.For):
        return f"for {facts.describe(node.target)} in {facts.describe(node.iter)}"
    return f"while {facts.describe(node.test)}"


def _violation(facts: ModuleFacts, fact: StatementFact, carries: list[CarriedState]) -> Violation:
    quoted = [f"'{carry.name}'" for carry in carries]
    names = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
    plural = len(carries) > 1
    confidence = max((_confidence(carry) for carry in carries), key=lambda c: c.rank)
    first = carries[0]
    name = first.name
    seed = any(fact is seed for carry in carries for seed in carry.seeds)
    if first.running_statistic:
        owner = "module" if first.function.cls is not None and first.function.cls.is_module else "object"
        message = (
            f"{names} {'keep' if plural else 'keeps'} a running statistic on the {owner} with the autograd graph "
            f"of every '{first.function.name}' call (it is never detached): each call's graph links to the previous "
            "one and memory grows every step"
        )
        source = _layer_input(first)
        how = f"compute it from {source}.detach()" if source else "compute it from detached values (.detach())"
        help_ = f"update it without recording a graph: {how}, or under 'with torch.no_grad():'"
    elif seed:
        message = (
            f"{names} {'start' if plural else 'starts'} with an autograd graph that the loop "
            f"'{_loop_header(facts, first.loop)}' feeds into every iteration, and nothing differentiates it: "  # type: ignore[arg-type]
            "the chain of graphs grows every iteration"
        )
        help_ = "run the loop (and this forward) under 'with torch.no_grad():' or decorate the function with @torch.no_grad()"
    elif first.graph_unused and not first.crosses_steps:
        assert first.loop is not None
        message = (
            f"{names} {'carry' if plural else 'carries'} the autograd graph of each iteration of "
            f"'{_loop_header(facts, first.loop)}' into the next, and nothing differentiates it: the chain of graphs "
            "grows every iteration"
        )
        help_ = "run the loop under 'with torch.no_grad():' (or decorate the function with @torch.no_grad()); to keep gradients, detach the state each iteration"
    else:
        if first.loop is None:
            where = f"the previous '{first.function.name}' call"
            across = "calls"
        else:
            where = f"the previous iteration of '{_loop_header(facts, first.loop)}'"
            across = "iterations"
        message = (
            f"{names} {'are' if plural else 'is'} fed back with the autograd graph of {where} (never detached): "
            f"the graphs chain up across {across} and memory grows every step"
        )
        if any(carry.backward_each_iteration for carry in carries):
            message += "; each backward() also reaches into the graphs of earlier iterations"
        help_ = f"detach the state before feeding it back: {name} = {name}.detach() (a tuple such as an LSTM's (h, c): tuple(v.detach() for v in {name}))"
    fix = None
    if not (seed or first.running_statistic or (first.graph_unused and not first.crosses_steps)):
        if not any(_differentiated_against(facts, carry) for carry in carries):
            fix = _detach_fix(facts, carries)
    return Violation(
        node=fact.node,
        message=message,
        confidence=confidence,
        help=help_,
        statement=fact.line,
        fix=fix,
    )


# ---- the fix: detach the state where each iteration (or step) starts ---------------------------
def _differentiated_against(facts: ModuleFacts, carry: CarriedState) -> bool:
    """The step takes gradients with respect to the state (``torch.autograd.grad(loss, w)`` with
    ``w = self.w``: fast weights). Detached, the state no longer requires grad and that call
    fails; the edit it needs (``w.detach().requires_grad_()``) is left to the user."""
    for fact in facts.index.statements_of(carry.function):
        for call in calls_in(fact.node):
            if facts.imports.resolve(call.func) != "torch.autograd.grad":
                continue
            inputs = call_argument(call, 1, "inputs")
            if inputs is not None and (carry.name in names_read(inputs) or carry.name in facts.value(inputs).deps):
                return True
    return False


#: What a carried name may hold: a tensor, a tuple of tensors (an LSTM's (h, c)), either, None,
#: or something ``.detach()`` does not fit (a number).
TENSOR, TUPLE, EITHER, NONE, UNUSABLE = "tensor", "tuple", "either", "none", "unusable"
_TENSOR_FACTORIES = frozenset(
    {
        "zeros", "ones", "empty", "full", "rand", "randn", "randint", "tensor", "as_tensor",
        "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
    }
)
_NEW_TENSOR_METHODS = frozenset({"new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"})
#: Methods that return a tensor like their tensor receiver.
_TENSOR_METHODS = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "clone", "detach", "contiguous", "requires_grad_"})


def _detach_fix(facts: ModuleFacts, carries: list[CarriedState]) -> SuggestedFix | None:
    """Insert ``h = h.detach()`` (``h, c = h.detach(), c.detach()``; for a tuple
    ``h = tuple(t.detach() for t in h)``) before the first statement of the carrying loop, or of
    the step method that carries ``self.h``: truncated backpropagation through time.

    Unsafe: it cuts the gradient flow between iterations on purpose. Offered only where the
    source shows what the state holds when the loop starts: a name not bound before the loop
    would raise NameError on the first iteration, a number has no ``.detach()``; a state that
    starts as ``None`` is detached behind ``if h is not None:``.
    """
    first = carries[0]
    if any(carry.loop is not first.loop or carry.function is not first.function for carry in carries):
        return None
    if first.loop is not None:
        body = first.loop.node.body
    elif first.function.node is not None:
        body = first.function.node.body
    else:
        return None
    if not isinstance(body, cst.IndentedBlock):
        return None
    statements = [s for s in body.body if not _is_docstring(s)] if first.loop is None else list(body.body)
    if not statements:
        return None
    states = []
    for name in _with_companions(first.feed.node if first.feed else None, [carry.name for carry in carries]):
        shapes = _start_shapes(facts, name, first)
        if shapes is None:
            return None
        states.append((name, _shape(shapes, _update_shape(facts, first, name, carries)), NONE in shapes))
    shapes_needing_torch = EITHER in {shape for _, shape, _ in states}
    tensor = torch_reference(facts, "Tensor", first.function.node)
    if tensor is None:
        if shapes_needing_torch:
            return None
        tensor = TorchReference("torch.Tensor", False)  # not written: no line tests the type
    lines = _detach_lines(states, tensor.code, facts.module.default_indent)
    where = "each iteration" if first.loop is not None else f"each '{first.function.name}' call"
    title = f"Detach {' and '.join(repr(name) for name, _, _ in states)} at the start of {where}"
    imports = tensor.imports if shapes_needing_torch else ()
    return SuggestedFix(title, Applicability.UNSAFE, (InsertLinesBefore(statements[0], tuple(lines)),), imports)


def _with_companions(feed: cst.CSTNode | None, names: list[str]) -> list[str]:
    """``names`` and the names unpacked next to them and fed back with them: ``c`` for ``h`` in
    ``out, (h, c) = lstm(x, (h, c))``. Detaching ``h`` alone would leave ``c`` carrying the graph."""
    found = list(names)
    if not isinstance(feed, cst.Assign):
        return found
    fed = names_read(feed.value)
    for target in feed.targets:
        for group in walk(target.target):
            if isinstance(group, (cst.Tuple, cst.List)):
                members = [dotted_name(element.value) for element in group.elements]
                if set(members) & set(names):
                    found += [m for m in members if m is not None and m in fed and m not in found]
    return found


def _shape(shapes: frozenset[str], update: str) -> str:
    """What the state holds once it is not None: what it starts as (the loop feeds it back into
    the same call), else what the update is known to produce."""
    concrete = shapes - {NONE, EITHER}
    if len(concrete) > 1:
        return EITHER
    if not concrete:
        return update
    start = next(iter(concrete))
    return start if EITHER not in shapes or update == start else EITHER


#: ``out, h = rnn(x, h)``: the state these modules return.
_RECURRENT_STATE = {"torch.nn.RNN": TENSOR, "torch.nn.GRU": TENSOR, "torch.nn.LSTM": TUPLE}


def _update_shape(facts: ModuleFacts, carry: CarriedState, name: str, carries: list[CarriedState]) -> str:
    """A tuple when the analysis knows the update's items; the state of an ``nn.GRU`` / ``nn.LSTM``
    built in this file for ``out, h = rnn(x, h)``; else either."""
    if any(c.name == name and c.value.items is not None for c in carries):
        return TUPLE
    feed = carry.feed.node if carry.feed is not None else None
    if not (isinstance(feed, cst.Assign) and len(feed.targets) == 1 and isinstance(feed.value, cst.Call)):
        return EITHER
    target = feed.targets[0].target
    if not (isinstance(target, cst.Tuple) and len(target.elements) == 2 and dotted_name(target.elements[1].value) == name):
        return EITHER
    module = dotted_name(feed.value.func)
    built = facts.index.visible_values(carry.function, module) if module is not None else []
    kinds = {
        _RECURRENT_STATE.get(facts.imports.resolve(value.func) or "") if isinstance(value, cst.Call) else None
        for value in built
    }
    return kinds.pop() if len(kinds) == 1 and None not in kinds else EITHER  # type: ignore[return-value]


def _detach_lines(states: list[tuple[str, str, bool]], tensor: str, indent: str) -> list[str]:
    if len(states) > 1 and all(shape == TENSOR and not maybe_none for _, shape, maybe_none in states):
        names = [name for name, _, _ in states]
        return [f"{', '.join(names)} = {', '.join(f'{name}.detach()' for name in names)}"]
    lines = []
    for name, shape, maybe_none in states:
        if shape == TENSOR:
            detached = f"{name}.detach()"
        elif shape == TUPLE:
            detached = f"tuple(t.detach() for t in {name})"
        else:
            detached = f"{name}.detach() if isinstance({name}, {tensor}) else tuple(t.detach() for t in {name})"
        if maybe_none:
            lines += [f"if {name} is not None:", f"{indent}{name} = {detached}"]
        else:
            lines.append(f"{name} = {detached}")
    return lines


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _start_shapes(facts: ModuleFacts, name: str, carry: CarriedState) -> frozenset[str] | None:
    """What ``name`` holds when the loop of ``carry`` starts (or its step method is first called);
    None when the source does not show it bound then, or bound to something without ``.detach()``."""
    if carry.loop is None:
        shapes = _bound_in_init(facts, carry.function.cls, name)
    else:
        shapes = _bound_before(facts, name, carry)
    return shapes if shapes is not None and UNUSABLE not in shapes else None


def _bound_before(facts: ModuleFacts, name: str, carry: CarriedState) -> frozenset[str] | None:
    """Walk out from the loop through the blocks around it, up to the function's parameters, for
    the last unconditional binding; conditional ones after it add what they may bind."""
    found = next(walk_with_ancestors(facts.module, lambda n: n is carry.loop.node), None)  # type: ignore[union-attr]
    if found is None:
        return None
    node, path = found
    maybe: set[str] = set()
    for parent in reversed(path):
        if isinstance(parent, cst.FunctionDef):
            entry = _bound_on_entry(facts, name, carry, parent)
            return entry | maybe if entry is not None else None
        if isinstance(parent, (cst.ClassDef, cst.Lambda)):
            return None
        block = getattr(parent, "body", None)
        if isinstance(block, Sequence) and any(statement is node for statement in block):
            index = next(i for i, statement in enumerate(block) if statement is node)
            definite = _last_binding(facts, block[:index], name, maybe)
            if definite is not None:
                return definite | maybe
        node = parent
    return None  # module level, never bound before the loop


def _bound_on_entry(facts: ModuleFacts, name: str, carry: CarriedState, function: cst.FunctionDef) -> frozenset[str] | None:
    """A parameter (``None`` too when that is its default), or ``self.x`` set in ``__init__``."""
    params = function.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value == name:
            none_default = param.default is not None and _is_none(param.default)
            return frozenset({EITHER, NONE} if none_default else {EITHER})
    if name.startswith("self."):
        return _bound_in_init(facts, carry.function.cls, name)
    return None


def _bound_in_init(facts: ModuleFacts, cls: ClassInfo | None, name: str) -> frozenset[str] | None:
    init = cls.find_method("__init__") if cls is not None else None
    if init is None or not isinstance(init.body, cst.IndentedBlock):
        return None
    maybe: set[str] = set()
    definite = _last_binding(facts, init.body.body, name, maybe)
    return definite | maybe if definite is not None else None


def _last_binding(facts: ModuleFacts, statements: Sequence[cst.CSTNode], name: str, maybe: set[str]) -> frozenset[str] | None:
    """The shapes of the last unconditional binding of ``name`` in ``statements`` (``del name``:
    unusable); the conditional bindings after it add theirs to ``maybe``."""
    for statement in reversed(statements):
        if isinstance(statement, cst.SimpleStatementLine):
            for small in reversed(statement.body):
                if isinstance(small, cst.Del) and name in names_bound_in(small.target):
                    return frozenset({UNUSABLE})
                value = _assigned_part(small, name)
                if value is not None:
                    return _shapes_of(facts, value)
        elif isinstance(statement, cst.With) and isinstance(statement.body, cst.IndentedBlock):
            found = _last_binding(facts, statement.body.body, name, maybe)
            if found is not None:
                return found
        elif name in names_bound_in(statement):
            maybe.update(_conditional_shapes(facts, statement, name))
    return None


def _conditional_shapes(facts: ModuleFacts, statement: cst.CSTNode, name: str) -> frozenset[str]:
    """Every value a compound statement may leave in ``name`` (a loop target: either shape)."""
    shapes: set[str] = set()
    for node in walk(statement):
        value = _assigned_part(node, name) if isinstance(node, cst.BaseSmallStatement) else None
        if value is not None:
            shapes.update(_shapes_of(facts, value))
        elif isinstance(node, (cst.For, cst.CompFor, cst.AsName, cst.NamedExpr)):
            shapes.add(EITHER)
    return frozenset(shapes or {EITHER})


def _assigned_part(small: cst.BaseSmallStatement, name: str) -> cst.BaseExpression | None:
    """The expression ``small`` binds to ``name`` (``cst.Ellipsis`` stands for an element of a
    value that is not a literal tuple: its shape is unknown)."""
    if isinstance(small, cst.AnnAssign) and small.value is not None:
        return small.value if dotted_name(small.target) == name else None
    if not isinstance(small, cst.Assign):
        return None
    for target in small.targets:
        part = _part(target.target, small.value, name)
        if part is not None:
            return part
    return None


def _part(target: cst.BaseExpression, value: cst.BaseExpression | None, name: str) -> cst.BaseExpression | None:
    if isinstance(target, (cst.Tuple, cst.List)):
        elements = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
        literal = elements is not None and len(elements) == len(target.elements) and not any(
            isinstance(e, cst.StarredElement) for e in (*elements, *target.elements)
        )
        for index, element in enumerate(target.elements):
            found = _part(element.value, elements[index].value if literal else None, name)  # type: ignore[index]
            if found is not None:
                return found
        return None
    if dotted_name(target) == name:
        return value if value is not None else cst.Ellipsis()
    return None


def _shapes_of(facts: ModuleFacts, expr: cst.BaseExpression) -> frozenset[str]:
    """What ``expr`` holds; unusable when ``.detach()`` would not fit it (a number, ``(None, None)``)."""
    if _is_none(expr):
        return frozenset({NONE})
    if isinstance(expr, cst.IfExp):
        return _shapes_of(facts, expr.body) | _shapes_of(facts, expr.orelse)
    if isinstance(expr, (cst.Tuple, cst.List)):
        elements = [element.value for element in expr.elements]
        return frozenset({TUPLE if elements and all(_maybe_tensor(facts, e) for e in elements) else UNUSABLE})
    if isinstance(expr, cst.Ellipsis):
        return frozenset({EITHER})
    value = facts.value(expr)
    if value.kind is Kind.NOT_TENSOR and value.role is None:
        return frozenset({UNUSABLE})
    if value.items is not None:
        return frozenset({TUPLE})
    return frozenset({TENSOR if _is_tensor(facts, expr) else EITHER})


def _maybe_tensor(facts: ModuleFacts, expr: cst.BaseExpression) -> bool:
    """An element of a literal tuple that is not spelt as something else (``None``, ``0.0``, ``(a, b)``)."""
    if _is_none(expr) or isinstance(expr, (cst.Tuple, cst.List, cst.BaseNumber, cst.BaseString)):
        return False
    value = facts.value(expr)
    return not (value.kind is Kind.NOT_TENSOR and value.role is None) and value.items is None


def _is_tensor(facts: ModuleFacts, expr: cst.BaseExpression) -> bool:
    """``torch.zeros(...)``, ``x.new_zeros(...)``, ``torch.randn(...).to(device)``."""
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    if isinstance(func, cst.Attribute):
        if func.attr.value in _NEW_TENSOR_METHODS:
            return True
        if func.attr.value in _TENSOR_METHODS and _is_tensor(facts, func.value):
            return True
    module, _, leaf = (facts.imports.resolve(func) or "").rpartition(".")
    return module == "torch" and leaf in _TENSOR_FACTORIES


def _is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"
