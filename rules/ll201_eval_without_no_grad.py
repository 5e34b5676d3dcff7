"""LL201 eval-without-no-grad: model forward passes in evaluation code that record a graph."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import libcst as cst

from leaklint.analysis.arguments import is_bound_to_object, literal_arguments, literal_truth, parameter_for
from leaklint.analysis.calls import call_graph, local_callee
from leaklint.analysis.carry import carried_states, detached_each_iteration
from leaklint.analysis.containers import Store, stores
from leaklint.analysis.facts import ModuleFacts, binding_feeds_backward, result_backpropagated
from leaklint.analysis.graph_use import GraphUse, frozen_models, graph_use
from leaklint.analysis.names import dotted_name
from leaklint.analysis.places import COMPREHENSIONS
from leaklint.analysis.structure import FunctionInfo
from leaklint.analysis.values import Kind, Role
from leaklint.analysis.provenance import ModelCall, held_in_eval_mode
from leaklint.analysis.structure import GradMode, backward_calls, bound_names
from leaklint.analysis.torch_api import GRAPH_EVIDENCE, LIBRARY_FORWARD_METHODS, TORCH_CODE, is_eval_function_name
from leaklint.analysis.walk import walk
from leaklint.findings import Applicability, Confidence, Severity
from leaklint.fixes.spec import AddDecorator, SuggestedFix, WrapInWith, torch_reference
from leaklint.gate import Names
from leaklint.rule import Measured, Rule, Violation


class EvalWithoutNoGrad(Rule):
    code = "LL201"
    name = "eval-without-no-grad"
    severity = Severity.PEAK
    fixable = True
    summary = "A model runs in evaluation code (or anywhere its output is never differentiated) without torch.no_grad(), so every forward pass records a graph nobody uses."
    help = "wrap the evaluation loop in 'with torch.no_grad():' (or decorate the function with @torch.no_grad())"
    #: Evaluation code (by ``.eval()`` or a function's name), or a torch import: a forward whose
    #: output nothing differentiates is found by dataflow wherever it is.
    needs = TORCH_CODE & (Names("eval", "train", "torch", matching=is_eval_function_name))
    autograd = True
    #: Above low confidence a finding follows .eval() (or .train(False)) on the model, or rests
    #: on the dataflow of a file that imports torch and has a model.
    needs_above_low = GRAPH_EVIDENCE & Names("eval", "train", "torch")
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(204, 6, 26), leaks=(37, 4))
    docs = """
## What it finds
A forward call of a model (`model(x)`, `self.model(x)`, `model.forward(x)`, `self(x)`) in
evaluation code that runs with gradients enabled. Evaluation code is everything after
`model.eval()` in the same function (until `model.train()`), and every method of a plain wrapper
class (not a module) whose `__init__` calls `self.model.eval()` when no method of the class turns
it back with `self.model.train()` or puts another model in its place (an embedding or inference
wrapper). A function's name alone (`evaluate`,
`validate`, `predict`, `infer`...) is only a guess: such findings are low confidence, shown with
`--min-confidence low` (PPO's `evaluate_actions()` is a training forward). Also the call of a
function of the file that runs the forward and returns what it computes (`loss =
compute_loss(model, batch)`), where nothing differentiates the result, when the training step
backpropagates the same helper's result (medium confidence; not with only frozen models handed
over, not for a helper that runs its own backward). A call is guarded when it
runs under `torch.no_grad()`, `torch.inference_mode()` or `torch.set_grad_enabled(False)` — as a
`with` block, a statement before it, `stack.enter_context(torch.no_grad())` in a `with ExitStack()`
block, or a decorator on the function or an enclosing one (`@torch.set_grad_enabled(False)`
included; the innermost grad-mode decorator wins, as in torch) — or when every caller of the
function in the same file calls it inside such a block. A model frozen with
`.requires_grad_(False)` (or `p.requires_grad = False` over its parameters) records no graph of its
own, and library objects whose `__call__` disables gradients are not models here: diffusers
pipelines and what transformers' `pipeline()` builds.

It also finds a forward run with gradients on **wherever it is, when nothing ever differentiates
its output**: samples generated from fixed noise every few hundred training steps and written to
disk, a value bootstrap in RL post-processing turned into advantages, a statistics pass over a
model's hidden states, a helper called once per video frame from another function's loop, a
hand-written sampling loop. This is decided by dataflow (`leaklint.analysis.graph_use`), not by
names: leaklint follows the output through the expressions, names and containers of the function,
into the file's own functions it is passed to (a model's method such as `policy.value(obs)`
counts as a forward) and back to every caller of the function in the file, and reports the
forward when no flow reaches a backward, none goes where it cannot follow (stored on an object,
handed to another module's function, returned to callers the file does not show), and the output
outlives its statement (`G(z).detach()` or `model(x).item()` drops the graph at once). Such a
finding is medium confidence when the file shows the function run with gradients on (module
code, a framework hook, or a caller that does not disable them), low confidence when its callers
are elsewhere. A graph that an inference loop carries into its next iteration is LL103's finding,
at the line that carries it.

**One loop for training and evaluation** (`run_epoch(loader, train=False)`): a function whose
every backward sits on one side of a test of its parameters (`if train:`, `if phase == "train":`,
`if mode in ("train", "finetune"):`), called in the file with the literal that skips it and with
gradients on. On that call each of its forwards records a graph that nothing differentiates; the
finding is at the forward (medium confidence), where `with torch.set_grad_enabled(train):` goes,
and names the call. Not when the function hands a graph-attached value back to its callers, and
not for a forward on the skipped side itself.

A model put in evaluation mode and then run through **a method of its own class** other than
`forward` (`actor.eval()` then `actor.predict(obs)` or `model.inference(x)` per step) is reported
at the call, high confidence, as a direct call would be: the method runs the forward with
gradients on. Not when the method is decorated with `no_grad`, runs its own backward, or the call's
result feeds a backward; not when the method's own forward already has a finding (one finding per
graph); and not when the method (or a function it calls) steps a state through a loop, as a
sampler does (`x = x - step * self(x)`): that chain is LL103's to judge, and a sampler may cut
it on purpose every step.

A model put in evaluation mode and then **handed to a function of the file** that runs its
forward (`model.eval()` then `hyps = [beam_search(model, x) for x in batch]`, where `beam_search`
calls `model.encode(...)` and `model.decode_step(...)`, methods of the model's class that run its
layers) is reported at that call, high confidence: the helper records a graph for every step of
the evaluation. The helper counts when it calls the parameter (`net(x)`, `net.forward(x)`), calls a
method of a module class of the file on it that runs a model with gradients on (every module class
of that name must; not a `@torch.no_grad()` method), a library model's forward under another name
(`get_image_features`), or hands it on to a further function of the file that does (two calls
deep). The same holds for a method of the same object that runs the model it holds
(`self.model.eval()` then `loss, logits = self._step(x, y)` in the validation loop; a binding of
`loss` that a later training pass binds afresh before its own backward does not count as
differentiated). Not when the helper is decorated with `no_grad`, disables gradients around those forwards,
runs a backward (test-time adaptation) or calls one that does, binds the parameter again, or calls
`model.train()`; not when the call's result feeds a backward; not when a forward the helper runs
already has a finding, at any confidence (one finding per graph), or the helper carries a chain
that LL103 reports. A method of the model's module class that runs it, handed over as a value (`model.eval()` then
`samples = sample_ode(model.forward_with_cfg, z)`), counts as the model: calling it is a forward.

A forward after `.eval()` whose output feeds a backward is training with frozen batch-norm
statistics, not evaluation: not reported, whether the backward is in the same function or in a
local function the loss is handed to (`apply_update(optimizer, loss)`).

## Why it matters
`model.eval()` changes how dropout and batch norm behave; it does not stop autograd. Without
`no_grad`, each forward pass saves its activations for a backward pass that never comes: the peak
memory of evaluation is that of training, and larger batches run out of memory. If the outputs are
also kept (appended to a list, summed into a total), every batch's graph stays alive and memory
grows through the whole evaluation (see LL101 and LL102).

## Example
```python
def evaluate(model, loader):
    model.eval()
    correct = 0
    for x, y in loader:
        out = model(x)
        correct += (out.argmax(1) == y).sum().item()
    return correct
```

## Use instead
```python
@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    correct = 0
    for x, y in loader:
        out = model(x)
        correct += (out.argmax(1) == y).sum().item()
    return correct
```

## Fix safety
An evaluation function — an evaluation-like name, no `backward`, `autograd`,
`requires_grad`, `.grad` or `.step(` in its body, not `async` — gets `@torch.no_grad()` directly
above its `def` (below other decorators, so `@staticmethod` and `@property` stay outermost).
Otherwise the outermost loop around the call that does no training (or the statement itself) is
wrapped in `with torch.no_grad():`. A forward found because nothing differentiates its output gets
its own statement wrapped, nothing more: the other forwards around it may feed a loss. The fix
uses the file's own torch alias (`th.no_grad()`,
a `from torch import no_grad`) and adds `import torch` when torch is not imported. **Unsafe**:
code that needs gradients during evaluation (adversarial attacks, saliency maps) would break. No
fix where the code visibly needs gradients.

The alias must mean torch where the edit lands: inside a function that binds `torch` itself (a
parameter, `for torch in ...`, `import numpy as torch`) another module-level alias is used if
the file has one, else there is no fix (a decorator is evaluated outside the function, so a
parameter named `torch` does not stop `@torch.no_grad()`). When torch is an optional import
(`try: import torch as th` / `except ImportError: th = None`, or an import under `if`), the fix
writes `with th.no_grad():` only in a function that already calls through `th`, and otherwise
offers nothing: an unconditional `import torch` would break the guard.

## Known false positives
Evaluation that needs gradients (adversarial examples, saliency maps, input attributions) is
reported unless the code asks for them: a forward under `with torch.enable_grad():`,
`torch.set_grad_enabled(True)` or an `@torch.enable_grad()` decorator records a graph on purpose
and is not reported (even after `model.eval()` or inside an outer `no_grad`); otherwise suppress
it with `# noqa: LL201` on the call. A function that runs one forward after `model.eval()` and returns
its output (`model.eval(); return model(x, t)`, a model function a sampler or a trace estimator
calls) is reported at high confidence only when its callers in the file never differentiate what
it returns; when a caller does, or the callers are elsewhere (a closure handed to other modules),
the graph is theirs to use and the finding is low confidence. A function that runs the model over
a loop and returns what it collected is evaluation itself, and stays reported. `torch.set_grad_enabled(flag)` with a runtime flag is taken as
a deliberate choice and not reported. A shared training/evaluation loop called with the flag that
skips its backward is reported even when another module of the project makes that same call
under `torch.no_grad()` (a trainer's `val()` method called from a script): methods are judged
from the calls their own file shows. Lightning's `validation_step`,
`test_step` and `predict_step` are not reported (Lightning disables gradients around them). A model
that leaklint cannot recognise as a model (no `.eval()`, `.parameters()`, known constructor or
`nn.Module` class in the file) is only a low-confidence guess by its name and hidden by default; a
parameter believed a model by its name counts when every caller in the file passes one. Inside a
module whose class also derives from a class of another package (`BaseTunerLayer`,
`PreTrainedModel`, a mixin), `self.name(...)` with a name no method of the file assigns may be a
method of that base (`self.get_base_layer()`) and is not taken for a layer's forward. A name that
`.eval()` elsewhere in the file makes look like a model is no model where an
`isinstance(x, nn.Module)` test has ruled that out: its `else` branch, the body of
`if not isinstance(x, nn.Module):`, and the code after `if isinstance(x, nn.Module): continue`
(reward functions that are either models or plain Python callables).

A function of the file that every other file of the run calls only inside `torch.no_grad()` /
`torch.inference_mode()` (or from a function such a decorator wraps) runs without gradients and
is not reported, unless a call in its own file records them; linted alone, the file cannot know
its callers, and the function is reported (README, "How leaklint decides").

For forwards whose output nothing differentiates: a module of the file whose `forward` neither
calls a model nor returns a graph-attached value (it delegates to code leaklint cannot see, such
as a task's `inference_step` that disables gradients) is not reported, and neither is a module
without parameters called on inputs without a graph (`nn.ReLU()`, a `GELU` class, a class whose
only parameters are built with `requires_grad=False` or frozen with `.requires_grad_(False)` in its
`__init__`, an `nn.Sequential` of such modules), nor a model
called on strings or numbers only (`model("image.jpg")`: a wrapper that prepares its own input and
often runs without gradients, as YOLOv5's hub models do). A model from a `torch.hub.load` entry
point known to return a wrapper that runs without gradients is not reported, whatever it is called
on: YOLOv5's (`torch.hub.load("ultralytics/yolov5", "yolov5s")`) is `AutoShape`, whose `forward`
runs under `torch.inference_mode()`; with `autoshape=False`, `pretrained=False`, other `channels`
or `classes`, a `-cls`/`-seg` checkpoint or a local `source`, hub returns the raw model, which is.
A loop that detaches what it carries
every iteration (`x = x.detach()`) cuts the graph on purpose and is not reported. A forward whose
output is dropped right away (a statement of its own, `G(z).detach()`) costs only the forward's
own activations and is not reported: the same pattern is how forward hooks capture features for a
later loss. What leaklint cannot follow counts as a use. A value is followed inside the dicts,
tuples and lists that hold it, by literal key and position: graphs kept in dictionaries next to
data that a loss reads (`trajectories.append({"tokens": t, "old_logp": logp})`, where the loss
only reads `traj["old_logp"].detach()`) are reported, while a dict entry read under a key that is
not a literal counts as read. What a helper returns goes back only to the call that handed it the
value (one helper deep; through a second helper, to every caller): a loss function shared by the training step and the evaluation step does not make the
evaluation forward look trained. A helper of the file that runs the forward and returns what it
computes (`loss = compute_loss(model, batch)`), shared by a training step that backpropagates its
result and a validation loop that only logs it, is reported at the validation call, where
`no_grad` goes. Methods of library models that run their forward under another name
(`get_image_features`, `get_text_features`, `encode_image`...) are forwards too. A name bound again before a later read (`logits` reassigned by the
training forward) is followed only to the reads its binding reaches.
Many findings are single forwards in notebooks and demos (`out = model(x); print(out.shape)`):
true, and cheap. The finding is on the forward. When its output is then kept in a list across the
iterations of a loop, the message names the list and its line. One finding for one leak: when the
forward runs in a helper that the keeping loop calls once per input (samples drawn until enough
are accepted, one result per video frame) and no loop of the helper carries its output, the
graphs pile up at the keep, which LL102 reports (naming this forward), and the forward is only
shown with low confidence; when the forward runs in the keeping function itself, or is part of a
sampler's chain, the forward is the finding and LL102 shows the keep with low confidence. A
forward in a helper whose output the caller keeps per item of a data loop (a rollout kept for an
evaluation), where LL102 reports the keep and asks for a `.detach()`, is likewise left to LL102.

On bench/realcode this is the rule with the most findings, and nearly all are true: evaluation
and test loops after `model.eval()` without `no_grad`, many of them forwards whose output nothing
differentiates (GAN sample grids written from the training loop, one of them, dcgan's, to a name
the next iteration binds again before its backward reads it, DQN action selection, an RND
predictor read through `.data`, a discriminator loss that is never backpropagated, notebook and
smoke-test forwards). The debatable ones are single forwards of demo cells on toy inputs (d2l's
shape checks, one sentence pair, one image): real but harmless. The false ones: modules with no
trainable parameter called on inputs without a graph where leaklint does not see it (asteroid's
fixed STFT, built in another module; prior nets chosen at run time; a dequantization layer), a
`validation_step` of d2l's notebooks that the `d2l` package's `Trainer` calls under `no_grad`,
and an output differentiated in a notebook cell that does not parse. At first it also reported
validation through diffusers pipelines and yolov5's `@smart_inference_mode()` runs, policy API
methods that Stable-Baselines3 calls under `no_grad`, and the training forward of a
`training_step`; since fixed. A method of the model's class counts as a forward only when
it runs the model with gradients on: not `@torch.no_grad() def sample`, nor a `sample()` that only
calls a helper whose body is under `torch.no_grad()`.

## References
- `torch.no_grad` ("useful for inference... reduce memory consumption"):
  https://pytorch.org/docs/stable/generated/torch.no_grad.html
- `Module.eval` does not disable autograd ("This is equivalent with self.train(False)"; see the
  note on locally disabling gradient computation): https://pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation
- Inference in a loop without no_grad exhausting memory: https://github.com/allenai/longformer/issues/36
- Sample grids generated from fixed latents during training without `no_grad`:
  https://github.com/akanimax/msg-gan-v1/issues/2
- RLlib's PPO post-processing bootstrapped the last value with gradients on and kept it in the
  sample batch: https://github.com/ray-project/ray/pull/7238
- A per-frame optical-flow helper called from a video loop without inference mode:
  https://github.com/msu-video-group/memfof/issues/5
- Runtime repro: `leaklint verify LL201` measures the leaky and the fixed loop body.
"""
    VALID = (
        # eval mode set in __init__, but another method puts a fresh model (in training mode) in
        # its place: no method is known to run it in evaluation mode
        """
import torch


class Student:
    def __init__(self, build):
        self.build = build
        self.model = build().cuda()
        self.model.eval()

    def restart(self):
        self.model = self.build().cuda()  # a fresh model, in training mode, trained by fit()

    def fit(self, batches, optimizer):
        for x, y in batches:
            loss = torch.nn.functional.cross_entropy(self.model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    def labels(self, batches):
        found = []
        for x in batches:
            found.extend(self.model(x).argmax(-1).tolist())
        return found
""",
        # the wrapper's model is put in evaluation mode in __init__, but its fit method turns it
        # back to training: which mode a method runs in is not known from the constructor
        """
import torch

class Finetuner:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.model.eval()

    def fit(self, batches):
        self.model.train()
        for x, y in batches:
            loss = torch.nn.functional.cross_entropy(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def scores(self, x):
        return self.model(x).softmax(-1)
""",
        # a method of the object runs the model it holds after .eval(), and its result is
        # differentiated: training with frozen normalization statistics
        """
import torch
import torch.nn as nn
import torch.nn.functional as F


class BatchNormFrozenFitter:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def _step(self, x, y):
        return F.cross_entropy(self.model(x), y)

    def fit(self, batches, epochs):
        self.model.eval()  # normalization statistics stay frozen while the weights train
        for epoch in range(epochs):
            for x, y in batches:
                loss = self._step(x, y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()


net = nn.Linear(16, 4)
BatchNormFrozenFitter(net, torch.optim.SGD(net.parameters(), lr=0.1)).fit([(torch.randn(8, 16), torch.randint(0, 4, (8,)))], 2)
""",
        # a model in eval mode handed to helpers that do not record a graph for it: one decorated
        # with @torch.no_grad(), one that disables gradients around its own forwards, and one
        # that adapts the model at test time (it runs a backward: it needs the graph)
        """
import torch
import torch.nn as nn
import torch.nn.functional as F


@torch.no_grad()
def greedy_decode(net, x, steps=10):
    out = []
    for _ in range(steps):
        x = net(x)
        out.append(x.argmax(-1))
    return out


def embed(net, x):
    with torch.no_grad():
        return net(x)


def adapt_and_predict(net, x, optimizer):
    entropy = -(F.softmax(net(x), -1) * F.log_softmax(net(x), -1)).sum(-1).mean()
    optimizer.zero_grad()
    entropy.backward()
    optimizer.step()
    return net(x).argmax(-1)


def evaluate(net, batches, optimizer):
    net.eval()
    decoded = [greedy_decode(net, x) for x in batches]
    feats = [embed(net, x).mean(0) for x in batches]
    adapted = [adapt_and_predict(net, x, optimizer) for x in batches]
    return decoded, feats, adapted


model = nn.Linear(16, 16)
evaluate(model, [torch.rand(4, 16)], torch.optim.SGD(model.parameters(), lr=0.01))
""",
        # a parameterless attention module run in eval mode on plain tensors, at the top level of
        # a script (or a notebook run from the top) that later binds the same name to another
        # module: the binding this call sees has no parameters, so nothing is recorded
        """
import torch
from torch import nn

class DotAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, q, k, v):
        return torch.bmm(self.dropout((q @ k.transpose(1, 2)).softmax(-1)), v)

class ScoredAttention(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.score = nn.Linear(hidden, 1)

    def forward(self, q, k, v):
        return torch.bmm(self.score(q + k).softmax(1).transpose(1, 2), v)

q, k, v = torch.rand(2, 1, 8), torch.rand(2, 5, 8), torch.rand(2, 5, 4)
attention = DotAttention(dropout=0.5)
attention.eval()
print(attention(q, k, v).shape)
attention = ScoredAttention(8)
""",
        # a recursive loss helper: what it returns from its recursive call goes back out to the
        # training step, which backpropagates it
        """
import torch
import torch.nn as nn
import torch.nn.functional as F

def unrolled_loss(pred, y, steps, acc):
    # sums the loss of `steps` refinement steps, recursively
    if steps == 0:
        return acc
    return unrolled_loss(pred * 0.9, y, steps - 1, acc + F.mse_loss(pred, y))

def train(model, opt, loader):
    for x, y in loader:
        loss = unrolled_loss(model(x), y, 3, 0.0)
        opt.zero_grad()
        loss.backward()
        opt.step()

net = nn.Linear(8, 8)
train(net, torch.optim.SGD(net.parameters(), lr=0.1), loader)
""",
        # a loss helper run on a frozen EMA copy (`requires_grad = False` on every parameter)
        """
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

def compute_loss(model, batch):
    x, y = batch
    return F.cross_entropy(model(x), y)

def train(model, optimizer, train_loader, val_loader, epochs=10):
    ema = copy.deepcopy(model)
    for p in ema.parameters():
        p.requires_grad = False
    for epoch in range(epochs):
        for batch in train_loader:
            loss = compute_loss(model, batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                for pe, pm in zip(ema.parameters(), model.parameters()):
                    pe.mul_(0.99).add_(pm, alpha=0.01)
        total = 0.0
        for batch in val_loader:
            loss = compute_loss(ema, batch)
            total += loss.item()
        print(epoch, total / len(val_loader))
net = nn.Linear(16, 4)
train(net, torch.optim.SGD(net.parameters(), lr=0.1), train_loader, val_loader)
""",
        # a helper that runs its own backward (a training epoch) and returns a number: nothing to
        # report at its call, which records nothing the helper does not use
        """
import torch
import torch.nn as nn
import torch.nn.functional as F
def train_one_epoch(model, optimizer, loader):
    total = 0.0
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(loader)
def compute_loss(model, batch):
    x, y = batch
    return F.cross_entropy(model(x), y)
def fit(model, optimizer, loader, epochs):
    for epoch in range(epochs):
        print(epoch, train_one_epoch(model, optimizer, loader))
    for batch in loader:
        loss = compute_loss(model, batch)
        loss.backward()
        optimizer.step()
""",
        # fixed priors: modules whose only tensor is a registered buffer (no parameter), built on a
        # base class that keeps settings only (`outcome_shape: tuple`), fed a shape: no graph
        """
import torch
import torch.nn as nn
import torch.distributions as td
class PriorNet(nn.Module):
    def __init__(self, outcome_shape: tuple):
        super().__init__()
        if isinstance(outcome_shape, int):
            outcome_shape = (outcome_shape,)
        self.outcome_shape = outcome_shape
    def forward(self, batch_shape):
        raise NotImplementedError
class BernoulliPriorNet(PriorNet):
    def __init__(self, outcome_shape):
        super().__init__(outcome_shape)
        self.register_buffer("logits", torch.zeros(self.outcome_shape, requires_grad=False).detach())
    def forward(self, batch_shape):
        shape = batch_shape + self.outcome_shape
        return td.Independent(td.Bernoulli(logits=self.logits.expand(shape)), len(self.outcome_shape))
class CategoricalPriorNet(PriorNet):
    def __init__(self, outcome_shape):
        super().__init__(outcome_shape)
        self.register_buffer("logits", torch.zeros(self.outcome_shape, requires_grad=False).detach())
    def forward(self, batch_shape):
        shape = batch_shape + self.outcome_shape
        return td.OneHotCategorical(logits=self.logits.expand(shape))
def show_prior(batch_size=3):
    prior_net = BernoulliPriorNet(7)
    p = prior_net(batch_shape=(batch_size,))
    print(f"distribution: {p}")
    z = p.sample()
    print(f"shapes: sample={z.shape} log_prob={p.log_prob(z).shape}")
    prior_net = CategoricalPriorNet(7)
    p = prior_net(batch_shape=(batch_size,))
    z = p.sample()
    print(f"shapes: sample={z.shape} log_prob={p.log_prob(z).shape}")
show_prior()
""",
        # a sampling method that only calls a helper whose whole body runs under no_grad
        """
import torch
import torch.nn as nn

class Tagger(nn.Module):
    def __init__(self, vocab_size=1000, tagset_size=20, hidden=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden)
        self.out = nn.Linear(hidden, tagset_size)
    def forward(self, x):
        return self.out(self.embed(x))
    def _sample(self, x):
        with torch.no_grad():
            logits = self.forward(x)
            return torch.distributions.Categorical(logits=logits).sample()
    def sample(self, x, sample_size=None):
        if sample_size is None:
            return self._sample(x)
        return torch.stack([self._sample(x) for _ in range(sample_size)])

tagger = Tagger()
for batch_x, batch_y in dev_loader:
    y_out = tagger.sample(batch_x)
    print(y_out.tolist())
""",
        # a sampling method of the model's class that turns gradients off itself
        """
import torch
import torch.nn as nn

class PixelCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Conv2d(1, 256, 3, padding=1)
    def forward(self, x):
        return self.net(x)
    @torch.no_grad()
    def sample(self, shape, img=None):
        if img is None:
            img = torch.zeros(shape)
        for h in range(shape[2]):
            img[:, :, h] = self.forward(img).argmax(1)[:, h].float()
        return img

def autocomplete(img):
    img = img.unsqueeze(0).expand(12, -1, -1, -1).clone()
    completed = model.sample(img.shape, img)
    show_images(completed)

model = torch.load("pixelcnn.pt", weights_only=False)  # a PixelCNN saved whole
print(sum(p.numel() for p in model.parameters()))
for i in range(4):
    autocomplete(train_set[i][0])
""",
        # A module of the file whose forward only hands its model to library code (which may
        # disable gradients itself): no graph is seen, also where a subclass calls it through an
        # attribute its base class set.
        """
import torch.nn as nn
class Stage(nn.Module):
    def __init__(self, task, model):
        super().__init__()
        self.task, self.model = task, model
    def forward(self, sample):
        return self.task.inference_step([self.model], sample)
    def decode(self, hypos):
        return " ".join(str(token) for token in hypos[0]["tokens"].tolist())
class TwoStage(nn.Module):
    def __init__(self, task, asr, mt):
        super().__init__()
        self.first = Stage(task, asr)
        self.second = Stage(task, mt)
class ThreeStage(TwoStage):
    def forward(self, sample):
        hypos = self.first(sample)
        text = self.first.decode(hypos)
        return self.second(text)
""",
        # A method a base class from another package defines (peft's BaseTunerLayer): calling
        # it is not a forward, though `self` is a module and the file never assigns the name.
        """
import torch.nn as nn
from peft.tuners.tuners_utils import BaseTunerLayer
class Adapter(nn.Module, BaseTunerLayer):
    def unmerge(self):
        base_layer = self.get_base_layer()
        base_layer.weight.data -= self.delta
    def forward(self, x):
        if self.merged:
            self.unmerge()
        return self.base_layer(x)
""",
        # Only the name says "prediction": a low-confidence guess, hidden by default (the caller
        # may train through it, as PPO's evaluate_actions() does).
        """
import torch.nn as nn
class Classifier(nn.Module):
    def predict(self, x):
        return self(x).argmax(-1)
""",
        # diffusers pipelines run their __call__ under @torch.no_grad().
        """
import torch
from diffusers import StableDiffusionPipeline
def log_validation(unet, prompts):
    pipeline = StableDiffusionPipeline.from_pretrained("sd", unet=unet)
    pipeline.unet.eval()
    return [pipeline(prompt).images[0] for prompt in prompts]
""",
        # no_grad entered through an ExitStack holds until the block ends.
        """
import torch
from contextlib import ExitStack
def inference_on_dataset(model, loader):
    with ExitStack() as stack:
        model.eval()
        stack.enter_context(torch.no_grad())
        for inputs in loader:
            outputs = model(inputs)
""",
        # A frozen copy records no graph of its own.
        """
import copy
import torch
def sample_path_lengths(G, latents):
    sampler = copy.deepcopy(G).eval().requires_grad_(False)
    return [sampler(z) for z in latents]
""",
        """
import torch
def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            out = model(x)
""",
        """
import torch
@torch.inference_mode()
def validate(model, loader):
    model.eval()
    return [model(x) for x, _ in loader]
""",
        """
import torch
def run_epoch(model, loader, phase):
    model.train() if phase == "train" else model.eval()
    for x, y in loader:
        with torch.set_grad_enabled(phase == "train"):
            out = model(x)
""",
        """
import torch
def evaluate(model, loader):
    model.eval()
    return sum(model(x).sum().item() for x in loader)

def main(model, loader):
    with torch.no_grad():
        score = evaluate(model, loader)
""",
        """
import torch
def train(model, loader, optimizer):
    model.eval()
    model.train()
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
""",
        """
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        return x
def train(loader, optimizer, device):
    net = Net()
    for x in loader:
        y = net(x)
        loss = y.sum()
        loss.backward()
        optimizer.step()
        if x.shape[0] == 3:
            net.eval().cpu()
            net.to(device).train()
""",
        # the grad-mode switches as decorators, and gradients asked for on purpose
        """
import torch
@torch.set_grad_enabled(False)
def evaluate(model, loader):
    model.eval()
    return [model(x) for x, _ in loader]

@torch.no_grad()
@torch.set_grad_enabled(False)
def predict(model, loader):
    model.eval()
    return [model(x) for x, _ in loader]

def saliency(model, loader):
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            with torch.enable_grad():
                out = model(x.requires_grad_())
    with torch.set_grad_enabled(True):
        out = model(x)

@torch.enable_grad()
def attribute(model, x):
    model.eval()
    return model(x)

@torch.set_grad_enabled(False)
@torch.set_grad_enabled(True)
def integrated_gradients(model, x):  # the innermost decorator wins, as in torch
    model.eval()
    return model(x)
""",
        """
import torch
@torch.no_grad()
def evaluate(model, loaders):
    model.eval()
    def score(loader):
        return [model(x).argmax(-1) for x, _ in loader]
    return [score(loader) for loader in loaders]
""",
        """
def evaluate_and_adapt(model, loader, optimizer):
    model.eval()
    for x, y in loader:
        out = model(x)
        loss = (out - y).pow(2).mean()
        loss.backward()
        optimizer.step()
""",
        """
import pytorch_lightning as pl
class LitModel(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        x, y = batch
        return self(x)
""",
        # the output is differentiated by the caller; a frozen teacher; a wrapper called on a path;
        # an output dropped at once; a helper only ever called under no_grad
        """
import torch
import torch.nn as nn
teacher = nn.Linear(8, 8)
for p in teacher.parameters():
    p.requires_grad = False
student = nn.Linear(8, 8)

def student_logits(x):
    return student(x)

for x in loader:
    soft = teacher(x).softmax(-1)
    loss = (student_logits(x).log_softmax(-1) * soft).sum()
    loss.backward()
    fake = student(torch.randn(4, 8)).detach()

def sample(n):
    images = student(torch.randn(n, 8))
    torch.save(images, "samples.pt")

with torch.no_grad():
    sample(16)
""",
        """
import torch
detector = torch.hub.load("ultralytics/yolov5", "yolov5s")
results = detector("https://ultralytics.com/images/zidane.jpg")
results.print()
""",
        # YOLOv5 from torch.hub is its AutoShape wrapper, whose forward runs under inference mode:
        # no graph, whatever the input (a PIL image, an array), also moved and put in eval mode
        """
import cv2
import torch
from PIL import Image
yolo_model = torch.hub.load("ultralytics/yolov5", "yolov5s")
img = Image.open("sidewalk.jpg")
results = yolo_model(img)
print(results.pandas().xyxy[0])
detector = torch.hub.load("ultralytics/yolov5:v7.0", "custom", path="best.pt").to("cuda")
detector.eval()
boxes = []
for path in paths:
    boxes.append(detector(cv2.imread(path), size=640).xyxy[0])
""",
        """
import torch
from torch import nn
class Scorer:
    def __init__(self, reward_funcs):
        for reward_func in reward_funcs:
            if isinstance(reward_func, nn.Module):
                reward_func.eval()
        self.reward_funcs = reward_funcs
    def rewards(self, prompts, completions, inputs):
        out = torch.zeros(len(prompts), len(self.reward_funcs))
        for i, reward_func in enumerate(self.reward_funcs):
            if isinstance(reward_func, nn.Module):
                with torch.inference_mode():
                    out[:, i] = reward_func(**inputs).logits[:, 0]
            else:  # no module here: a plain Python callable over strings
                scores = reward_func(prompts=prompts, completions=completions)
                out[:, i] = torch.tensor(scores)
        return out.sum(dim=1)
    def training_step(self, prompts, completions, inputs):
        print(self.rewards(prompts, completions, inputs).mean().item())
""",
        # A multi-scale generator's outputs detached one by one for the discriminator step: the
        # comprehension's variable ends with it, so no graph outlives the statement
        """
import torch
import torch.nn.functional as F
def train(gen, dis, d_opt, real):
    for it in range(1000):
        fake = [f.detach() for f in gen(torch.randn(32, 128))]
        d_loss = F.relu(1 - dis(real)).mean() + F.relu(1 + dis(fake)).mean()
        d_opt.zero_grad()
        d_loss.backward()
        d_opt.step()
gen, dis = torch.nn.Linear(128, 64), torch.nn.Linear(64, 1)
train(gen, dis, torch.optim.SGD(dis.parameters(), 0.1), torch.randn(32, 64))
""",
        # A sampler method whose own loop carries x into the next step with its graph: LL103
        # reports that chain where it is carried, not again at the call of sample()
        """
import torch
import torch.nn as nn
class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 8)
    def forward(self, x, t):
        return self.layer(x)
class Diffusion(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
    def loss(self, x):
        return self.net(x, 0).pow(2).mean()
    def denoise(self, x, t):
        eps = self.net(x, t)
        return x - 0.01 * eps, 0.1
    def sample(self, x):
        for step in range(1000):
            mean, var = self.denoise(x, step)
            x = mean + var * torch.randn_like(x)
        return x.clamp(-1, 1)
def main(steps=1000):
    diffusion = Diffusion(Denoiser())
    optimizer = torch.optim.Adam(diffusion.parameters())
    for step in range(steps):
        loss = diffusion.loss(torch.randn(16, 8))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 500 == 0:
            samples = diffusion.sample(torch.randn(2, 8))
            torch.save(samples.detach().cpu(), f"samples_{step}.pt")
if __name__ == "__main__":
    main()
""",
        # A home-made trainer runs the model's validation_step under torch.no_grad(): the
        # calls the file shows decide, not the hook's name
        """
import torch
from torch import nn
class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)
    def forward(self, x):
        return self.net(x)
    def training_step(self, batch):
        return ((self(batch[0]) - batch[1]) ** 2).mean()
    def validation_step(self, batch):
        loss = ((self(batch[0]) - batch[1]) ** 2).mean()
        print("val", loss.item())
class Trainer:
    def fit(self, model, train, val, epochs=10):
        optim = torch.optim.SGD(model.parameters(), 0.1)
        for epoch in range(epochs):
            for batch in train:
                loss = model.training_step(batch)
                optim.zero_grad()
                loss.backward()
                optim.step()
            model.eval()
            for batch in val:
                with torch.no_grad():
                    model.validation_step(batch)
            model.train()
""",
        # A notebook with `from torch import nn` but no `import torch`: its torch.no_grad()
        # still means torch (the kernel brought it in)
        """
from torch import nn
from d2l import torch as d2l
def evaluate_accuracy_gpu(net, data_iter, device=None):
    net.eval()
    metric = d2l.Accumulator(2)
    with torch.no_grad():
        for X, y in data_iter:
            y_hat = net(X.to(device))
            metric.add(d2l.accuracy(y_hat, y.to(device)), y.numel())
    return metric[0] / metric[1]
""",
        # Attention with no parameters of its own, run in eval mode on plain tensors: nothing
        # is recorded
        """
import math
import torch
from torch import nn
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
    def forward(self, queries, keys, values):
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(queries.shape[-1])
        return torch.bmm(self.dropout(torch.softmax(scores, dim=-1)), values)
class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens):
        super().__init__()
        self.w = nn.Linear(num_hiddens, 1)
    def forward(self, queries, keys, values):
        return torch.bmm(torch.softmax(self.w(torch.tanh(queries + keys)).squeeze(-1), dim=-1).unsqueeze(1), values)
queries, keys, values = torch.normal(0, 1, (2, 1, 2)), torch.normal(0, 1, (2, 10, 2)), torch.normal(0, 1, (2, 10, 4))
attention = DotProductAttention(dropout=0.5)
attention.eval()
print(attention(queries, keys, values).shape)
""",
        # A loss module given a function (not a layer) for its non-linearity, on plain tensors
        """
import torch
from torch import nn
from losses.helpers import softmax_helper_dim1


class SoftDiceLoss(nn.Module):
    def __init__(self, apply_nonlin=None, smooth=1.0):
        super().__init__()
        self.apply_nonlin = apply_nonlin
        self.smooth = smooth

    def forward(self, x, y):
        if self.apply_nonlin is not None:
            x = self.apply_nonlin(x)
        intersect = (x * y).sum()
        return 1 - (2 * intersect + self.smooth) / (x.sum() + y.sum() + self.smooth)


if __name__ == "__main__":
    pred = torch.rand((2, 3, 32, 32))
    ref = torch.randint(0, 2, (2, 3, 32, 32)).float()
    dice = SoftDiceLoss(apply_nonlin=softmax_helper_dim1, smooth=0)
    dice.eval()
    print(dice(pred, ref))
""",
        # A model function that returns its forward's output after .eval(): what the callers do
        # with it decides (a sampler elsewhere may run it under no_grad, a trace estimator
        # differentiates it); here one caller takes its gradient. Only shown at low confidence.
        """
import torch


def make_denoiser(net, sigma_scale):
    def denoise(x, sigma):
        net.eval()
        return net(x, sigma * sigma_scale)

    return denoise


def score(classifier, images):
    classifier.eval()
    logits = classifier(images)
    return logits.log_softmax(-1)


def saliency(classifier, images, labels):
    images = images.clone().requires_grad_(True)
    with torch.enable_grad():
        picked = score(classifier, images).gather(1, labels[:, None]).sum()
        (grad,) = torch.autograd.grad(picked, images)
    return grad.abs().amax(1)
""",
        # Fixed feature extractors whose only parameters never require grad (a window built with
        # requires_grad=False, a basis frozen in __init__), chained in nn.Sequential and run on
        # plain audio: nothing is recorded
        """
import numpy as np
import torch
import torch.nn as nn


class Framer(nn.Module):
    def __init__(self, size=400, hop=160):
        super().__init__()
        self.taper = nn.Parameter(torch.hamming_window(size), requires_grad=False)
        self.size = size
        self.hop = hop

    def forward(self, wave):
        return wave.unfold(-1, self.size, self.hop) * self.taper


class MelBands(nn.Module):
    def __init__(self, size=400, bands=40):
        super().__init__()
        self.basis = nn.Parameter(torch.rand(size, bands))
        self.basis.requires_grad_(False)

    def forward(self, frames):
        return (frames @ self.basis).clamp_min(1e-6).log()


def band_stats(clips):
    features = nn.Sequential(Framer(), MelBands())
    rows = []
    for clip in clips:
        bands = features(clip[None])[0]
        rows.append(np.asarray(bands))
    table = np.concatenate(rows)
    return table.mean(0), table.std(0)


if __name__ == "__main__":
    print(band_stats([torch.randn(16000) for _ in range(8)]))
""",
        # the same wrapper, but the training loop differentiates what the object returns
        """
import torch
import torch.nn.functional as F
import torchvision


class Predictor:
    def __init__(self, model):
        self.model = model

    def __call__(self, images):
        return self.model(images).log_softmax(-1)


net = torchvision.models.resnet18(weights="DEFAULT")
predictor = Predictor(net)
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
for images, labels in loader:
    loss = F.nll_loss(predictor(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        # A method run after .eval() whose output the same step differentiates (a frozen-BN
        # fine-tune: eval mode for the statistics, gradients for the weights), and one whose
        # method disables gradients itself
        """
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 2)

    def forward(self, x):
        return self.net(x)

    def loss(self, x, y):
        return nn.functional.cross_entropy(self(x), y)

    @torch.no_grad()
    def act(self, x):
        return self(x).argmax(-1)


def finetune(policy, optimizer, loader, env):
    policy.eval()
    for x, y in loader:
        loss = policy.loss(x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        env.send(policy.act(x).tolist())
""",
        # A sampler method that steps its state through a loop and cuts the history each step,
        # called after .eval(): the chain is LL103's to judge, and this one is cut on purpose
        """
import torch
import torch.nn as nn


class Denoiser(nn.Module):
    def __init__(self, steps=50):
        super().__init__()
        self.net = nn.Linear(32, 32)
        self.steps = steps

    def forward(self, x):
        return self.net(x)

    def sample(self, n):
        x = torch.randn(n, 32)
        for _ in range(self.steps):
            x = x - 0.1 * self(x)
            x = x.detach()
        return x


def preview(model, rounds):
    model.eval()
    for r in range(rounds):
        torch.save(model.sample(16), f"preview_{r}.pt")
""",
        # A helper's rollout run per item of a data loop with gradients on and kept in a list
        # with its graphs: LL102 reports the keep, and that is the one finding for the leak
        """
import torch
import torch.nn as nn


class Step(nn.Module):
    def __init__(self, n=8, m=2):
        super().__init__()
        self.net = nn.Linear(n + m, n)

    def forward(self, x, u):
        return x + 0.01 * self.net(torch.cat([x, u], dim=-1))


class Fit:
    def __init__(self, model, data):
        self.model, self.data = model, data
        self.optimizer = torch.optim.Adam(model.parameters())

    def unroll(self, x0, controls):
        xs = [x0]
        for u in controls[:-1]:
            xs.append(self.model(xs[-1], u))
        return torch.stack(xs)

    def train_epoch(self):
        for states, controls in self.data:
            loss = (self.unroll(states[0], controls) - states).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def paths(self):
        kept = []
        for states, controls in self.data:
            path = self.unroll(states[0], controls)
            kept.append(path)  # LL102's finding: where the graphs pile up
        return kept

    def error(self):
        return torch.stack([(p - s).abs().mean() for p, (s, _) in zip(self.paths(), self.data)]).mean().item()

    def run(self, epochs):
        for _ in range(epochs):
            self.train_epoch()
            print(self.error())


if __name__ == "__main__":
    runs = [(torch.randn(50, 8), torch.randn(50, 2)) for _ in range(100)]
    Fit(Step(), runs).run(10)
""",
        # A helper whose only "forward" is a callable named like a model (an encoder object of
        # the caller's dict): a guess by name, no evidence that it records anything
        """
import pandas as pd
import torch
from sentence_transformers import SentenceTransformer
from graphlib_store import NodeStore


def load_nodes(path, key, encoders=None):
    frame = pd.read_csv(path, index_col=key)
    index = {value: i for i, value in enumerate(frame.index.unique())}
    features = None
    if encoders is not None:
        columns = [encoder(frame[name]) for name, encoder in encoders.items()]
        features = torch.cat(columns, dim=-1)
    return features, index


class TextEncoder:
    def __init__(self, name="all-MiniLM-L6-v2"):
        self.model = SentenceTransformer(name)

    @torch.no_grad()
    def __call__(self, series):
        return self.model.encode(series.values, convert_to_tensor=True).cpu()


users, user_index = load_nodes("ratings.csv", "user")
items, item_index = load_nodes("items.csv", "item", encoders={"title": TextEncoder()})
store = NodeStore()
store["user"].count = len(user_index)
store["item"].x = items
print(store)
""",
        # Calls after .eval() that record nothing for nothing: a @torch.no_grad() method (another
        # class's method of the same name runs with gradients), a frozen model, and a method
        # that trains through a helper method of its own
        """
import torch
import torch.nn as nn


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 1)

    def forward(self, x):
        return self.net(x)

    def act(self, x):
        return self(x)


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 4)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

    def forward(self, x):
        return self.net(x)

    @torch.no_grad()
    def act(self, x):
        return self(x).argmax(-1)

    def choose(self, x):
        return self(x).softmax(-1).argmax(-1)

    def update(self, x, y):
        loss = nn.functional.cross_entropy(self(x), y)
        self.apply_step(loss)
        return loss.item()

    def apply_step(self, loss):
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()


def rollout(env, steps):
    actor = Actor()
    actor.eval()  # batch-norm statistics frozen; gradients are another matter
    obs = env.reset()
    for _ in range(steps):
        obs = env.send(actor.act(torch.as_tensor(obs)).item())


def frozen_rollout(env, steps):
    actor = Actor()
    actor.eval()
    actor.requires_grad_(False)
    obs = env.reset()
    for _ in range(steps):
        obs = env.send(actor.choose(torch.as_tensor(obs)).item())


def finetune(loader):
    actor = Actor()
    actor.eval()
    return [actor.update(x, y) for x, y in loader]
""",
        # Fine-tuning with batch-norm statistics frozen by .eval(): the loss goes to a helper
        # function that runs the backward
        """
import torch
import torch.nn as nn
import torch.nn.functional as F


def apply_update(optimizer, loss, clip=1.0):
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_([p for group in optimizer.param_groups for p in group["params"]], clip)
    optimizer.step()


def finetune_frozen_bn(model, loader, optimizer):
    model.eval()  # batch-norm statistics stay fixed; the weights still train
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        apply_update(optimizer, loss)
""",
        # the shared loop records a graph only on the side that backpropagates
        """
import torch
import torch.nn.functional as F


def run_epoch(model, loader, optimizer, train):
    model.train(train)
    for x, y in loader:
        with torch.set_grad_enabled(train):
            loss = F.cross_entropy(model(x), y)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def fit(model, optimizer, train_loader, val_loader):
    run_epoch(model, train_loader, optimizer, train=True)
    run_epoch(model, val_loader, optimizer, train=False)
""",
        # the evaluation call is made under no_grad; the other call passes the side that trains
        """
import torch
import torch.nn.functional as F


def run_epoch(model, loader, optimizer, phase="train"):
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        if phase == "train":
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def fit(model, optimizer, train_loader, val_loader):
    run_epoch(model, train_loader, optimizer)
    with torch.no_grad():
        run_epoch(model, val_loader, optimizer, phase="val")
""",
    )
    INVALID = (
        # the same through a sampler whose own chain is only a guess (its parameter is believed a
        # model by its name): LL103 shows that chain at low confidence, which does not stand for
        # this finding
        """
import torch
import torch.nn as nn


class Velocity(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(17, 64), nn.SiLU(), nn.Linear(64, 16))

    def forward(self, x, t):
        return self.net(torch.cat([x, t[:, None]], dim=1))

    def guided(self, x, t, scale):
        return scale * self(x, t)


def heun(model_fn, z, steps=20):
    x = z
    ts = torch.linspace(1.0, 0.0, steps + 1, device=z.device)
    for i in range(steps):
        t, dt = ts[i], ts[i + 1] - ts[i]
        v = model_fn(x, t.expand(len(x)), 2.0)
        x_pred = x + dt * v
        v2 = model_fn(x_pred, ts[i + 1].expand(len(x)), 2.0)
        x = x + dt * 0.5 * (v + v2)
    return x


def train(data, steps=10_000):
    model = Velocity()
    optimizer = torch.optim.Adam(model.parameters())
    preview_noise = torch.randn(4, 16)
    for step, x in enumerate(data):
        loss = model(x, torch.rand(len(x))).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 1000 == 0:
            model.eval()
            preview = heun(model.guided, preview_noise)  # expect: LL201
            model.train()
            torch.save(preview, f"preview_{step}.pt")


if __name__ == "__main__":
    train([torch.randn(8, 16)])
""",
        # a method of the model handed to a sampler as its model function: calling it is a forward
        """
import torch
import torch.nn as nn


class Velocity(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(17, 64), nn.SiLU(), nn.Linear(64, 16))

    def forward(self, x, t):
        return self.net(torch.cat([x, t[:, None]], dim=1))

    def guided(self, x, t, scale):
        return scale * self(x, t)


def integrate(field, x, steps=20):
    for i in range(steps):
        t = torch.full((len(x),), i / steps)
        x = x + field(x, t, 2.0) / steps
    return x


def train(model, optimizer, data, preview_noise):
    for step, x in enumerate(data):
        loss = model(x, torch.rand(len(x))).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 1000 == 0:
            model.eval()
            preview = integrate(model.guided, preview_noise)  # expect: LL201
            model.train()
            torch.save(preview, f"preview_{step}.pt")


model = Velocity()
train(model, torch.optim.Adam(model.parameters()), [torch.randn(8, 16)], torch.randn(4, 16))
""",
        # one loop for both phases: the backward runs only when `train` is true, and the
        # evaluation call passes False with gradients on
        """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Fitter:
    def __init__(self, model, lr=1e-3):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)

    def run_epoch(self, batches, train):
        self.model.train(train)
        total = 0.0
        for x, y in batches:
            loss = F.cross_entropy(self.model(x), y)  # expect: LL201
            if train:
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            total += loss.item()
        return total / len(batches)

    def fit(self, train_batches, valid_batches, epochs):
        for epoch in range(epochs):
            print(self.run_epoch(train_batches, True), self.run_epoch(valid_batches, train=False))


Fitter(nn.Linear(16, 4)).fit([(torch.randn(8, 16), torch.randint(0, 4, (8,)))], [(torch.randn(8, 16), torch.randint(0, 4, (8,)))], 2)
""",
        # the phase is a string: "val" skips the branch that backpropagates
        """
import torch
import torch.nn.functional as F


def run_phase(model, loader, optimizer, phase):
    error = 0.0
    for x, y in loader:
        pred = model(x)  # expect: LL201
        loss = F.mse_loss(pred, y)
        if phase in ("train", "finetune"):
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        error += loss.item()
    return error


def main(train_loader, val_loader):
    model = torch.nn.Linear(32, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(10):
        run_phase(model, train_loader, optimizer, "train")
        run_phase(model, val_loader, optimizer, "val")
""",
        # a plain wrapper puts its model in evaluation mode once, in __init__, and its encode
        # method runs it over a corpus with gradients on
        """
import torch
from transformers import AutoModel, AutoTokenizer

class Embedder:
    def __init__(self, name):
        self.tokenizer = AutoTokenizer.from_pretrained(name)
        self.model = AutoModel.from_pretrained(name).cuda()
        self.model.eval()

    def encode(self, texts, batch_size=64):
        chunks = []
        for start in range(0, len(texts), batch_size):
            inputs = self.tokenizer(texts[start:start + batch_size], padding=True, return_tensors="pt").to("cuda")
            hidden = self.model(**inputs).last_hidden_state  # expect: LL201
            chunks.append(hidden[:, 0].cpu().numpy())
        return chunks
""",
        # a distillation loss helper shared by training and validation: the teacher is frozen,
        # but the student the helper also runs is not, so the validation call records a graph
        """
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

def distill_loss(student, teacher, batch):
    x, y = batch
    with torch.no_grad():
        t = teacher(x)
    s = student(x)
    return F.kl_div(s.log_softmax(-1), t.softmax(-1), reduction="batchmean") + F.cross_entropy(s, y)

def train(student, optimizer, train_loader, val_loader, epochs=10):
    teacher = copy.deepcopy(student)
    for p in teacher.parameters():
        p.requires_grad = False
    for epoch in range(epochs):
        for batch in train_loader:
            loss = distill_loss(student, teacher, batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total = 0.0
        for batch in val_loader:
            loss = distill_loss(student, teacher, batch)  # expect: LL201
            total += loss.item()
        print(epoch, total / len(val_loader))
net = nn.Linear(16, 4)
train(net, torch.optim.SGD(net.parameters(), lr=0.1), train_loader, val_loader)
""",
        # a function that returns its eval-mode forward, whose callers in the file only log or
        # keep the output: nobody differentiates it, so the graph is wasted (the return alone
        # does not make it the callers' affair)
        """
import torch


def classify(net, x):
    net.eval()
    return net(x).softmax(-1)  # expect: LL201


def report(net, loader, writer):
    history = []
    for step, (x, _) in enumerate(loader):
        probs = classify(net, x)
        writer.add_histogram("probs", probs, step)
        history.append(probs.max(-1).values.mean())
    return history
""",
        # a wrapper object's __call__ runs the model; the file's calls of the object only read
        # the predicted classes
        """
import torch
import torchvision


class Predictor:
    def __init__(self, model):
        self.model = model

    def __call__(self, images):
        return self.model(images).softmax(-1)  # expect: LL201


net = torchvision.models.resnet18(weights="DEFAULT")
predictor = Predictor(net)
for images, _ in loader:
    print(predictor(images).argmax(-1).tolist())
""",
        # torch.hub models that record a graph: YOLOv5 without its AutoShape wrapper
        # (autoshape=False, or a head retrained for other classes), and any other hub model
        """
import torch
raw = torch.hub.load("ultralytics/yolov5", "yolov5s", autoshape=False)
preds = raw(torch.zeros(1, 3, 640, 640))  # expect: LL201
print(preds[0].shape)
retrained = torch.hub.load("ultralytics/yolov5", "yolov5s", classes=10)
out = retrained(torch.zeros(1, 3, 640, 640))  # expect: LL201
print(out[0].shape)
resnet = torch.hub.load("pytorch/vision", "resnet18", weights="DEFAULT")
logits = resnet(torch.zeros(1, 3, 224, 224))  # expect: LL201
print(logits.argmax(1))
""",
        # layers assigned as a tuple, and a module handed in behind a string annotation: not
        # parameterless
        """
import torch
import torch.nn as nn

class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.query, self.key = nn.Linear(dim, dim), nn.Linear(dim, dim)
    def forward(self, x):
        return (self.query(x) @ self.key(x).transpose(-1, -2)).softmax(-1)

attn = Attention(8)
out = attn(torch.randn(3, 4, 8))  # expect: LL201
print(out.shape)
""",
        """
from typing import Optional
import torch
import torch.nn as nn

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
    def forward(self, x):
        return self.fc(x)

class Wrapper(nn.Module):
    def __init__(self, encoder: Optional["Encoder"] = None):
        super().__init__()
        self.encoder = encoder
    def forward(self, x):
        return self.encoder(x).relu()

w = Wrapper(Encoder())
out = w(torch.randn(3, 8))  # expect: LL201
print(out.shape)
""",
        # a loss helper that runs the forward, shared by the training step (which backpropagates
        # its result) and the validation loop (which only logs it): reported at the validation call
        """
import torch
import torch.nn as nn
import torch.nn.functional as F
def compute_loss(model, batch):
    x, y = batch
    return F.cross_entropy(model(x), y)
def validate(model, loader):
    model.eval()
    total = 0.0
    for batch in loader:
        loss = compute_loss(model, batch)  # expect: LL201
        total += loss.item()
    model.train()
    return total / len(loader)
def train(model, optimizer, train_loader, val_loader, epochs=10):
    for epoch in range(epochs):
        for batch in train_loader:
            loss = compute_loss(model, batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(epoch, validate(model, val_loader))
net = nn.Linear(16, 4)
train(net, torch.optim.SGD(net.parameters(), lr=0.1), train_loader, val_loader)
""",
        # one loss helper called from the training step and from the evaluation step: what it
        # returns goes back to the call that passed the value in, so the evaluation forward,
        # whose loss is only .item()ed, is not taken for trained through the training step's call
        """
import torch
import torch.nn as nn
import torch.nn.functional as F
def spectral_loss(fake, real):
    return F.l1_loss(torch.fft.rfft(fake).abs(), torch.fft.rfft(real).abs())
class Trainer:
    def __init__(self, generator, optimizer):
        self.generator, self.optimizer = generator, optimizer
    def train_step(self, z, y):
        loss = spectral_loss(self.generator(z), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
    def eval_step(self, z, y):
        fake = self.generator(z)  # expect: LL201
        return spectral_loss(fake, y).item()
    def run(self, train, dev):
        for z, y in train:
            self.train_step(z, y)
        self.generator.eval()
        print(sum(self.eval_step(z, y) for z, y in dev))
net = nn.Linear(8, 8)
Trainer(net, torch.optim.SGD(net.parameters(), lr=0.1)).run(train_batches, dev_batches)
""",
        # GRPO-style rollouts: the sampled tokens are trained on later, the rollout's log-probs
        # only as detached old values, so the rollout forwards' graphs are never used
        """
import torch
import torch.nn as nn
import torch.nn.functional as F
def grpo_step(policy, optimizer, prompt):
    trajectories = []
    for _ in range(8):
        tokens = prompt.clone()
        step_logps = []
        for _ in range(32):
            logits = policy(tokens)[:, -1]  # expect: LL201
            next_token = torch.multinomial(logits.softmax(-1), 1)
            step_logps.append(F.log_softmax(logits, -1).gather(1, next_token))
            tokens = torch.cat([tokens, next_token], dim=1)
        trajectories.append({"tokens": tokens, "old_logp": torch.cat(step_logps, 1)})
    loss = 0.0
    for traj in trajectories:
        new_logp = F.log_softmax(policy(traj["tokens"]), -1).mean()
        loss = loss - torch.exp(new_logp - traj["old_logp"].detach()).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
policy = nn.Sequential(nn.Embedding(100, 16), nn.Linear(16, 100))
grpo_step(policy, torch.optim.Adam(policy.parameters()), torch.zeros(1, 4, dtype=torch.long))
""",
        """
def evaluate(model, loader):
    model.eval()
    correct = 0
    for x, y in loader:
        out = model(x)  # expect: LL201
        correct += (out.argmax(1) == y).sum().item()
    return correct
""",
        # inference_mode(False) as a decorator leaves gradients on
        """
import torch
@torch.inference_mode(False)
def evaluate(model, loader):
    model.eval()
    return [model(x) for x, _ in loader]  # expect: LL201
""",
        """
import torchvision
model = torchvision.models.resnet18()
model.eval()
for images, _ in loader:
    features = model.forward(images)  # expect: LL201
""",
        """
import torch
def infer(loader):
    model = torch.load("model.pt")
    model.eval()
    total = 0
    for x in loader:
        total += model(x).sum().item()  # expect: LL201
""",
        """
import torch
class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def validate(self, loader):
        self.model.eval()
        for x, y in loader:
            logits = self.model(x)  # expect: LL201
""",
        # samples written out during training, and a value bootstrap turned into numbers
        """
import torch
import torch.nn as nn
from torchvision.utils import save_image
generator = nn.Sequential(nn.Linear(64, 784), nn.Tanh())
critic = nn.Linear(784, 1)
fixed_z = torch.randn(16, 64)
for step, real in enumerate(loader):
    loss = -critic(generator(torch.randn(64, 64))).mean()
    loss.backward()
    if step % 500 == 0:
        grid = [generator(fixed_z)]  # expect: LL201
        save_image(torch.cat(grid).view(-1, 1, 28, 28), f"samples/{step}.png")
""",
        """
import torch
import torch.nn as nn
class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(8, 64)
        self.v = nn.Linear(64, 1)
    def forward(self, obs):
        return self.v(self.body(obs))
    def value(self, obs):
        return self.forward(obs)

def bootstrap(policy, rewards, last_obs):
    last_value = policy.value(last_obs)  # expect: LL201
    return [float(r) for r in rewards] + [last_value.item()]

policy = ActorCritic()
for batch in batches:
    targets = bootstrap(policy, batch["rewards"], batch["last_obs"])
""",
        """
import torch
from torch import nn
class Scorer:
    def __init__(self, reward_funcs):
        for reward_func in reward_funcs:
            if isinstance(reward_func, nn.Module):
                reward_func.eval()
        self.reward_funcs = reward_funcs
    def rewards(self, prompts, completions, inputs):
        out = torch.zeros(len(prompts), len(self.reward_funcs))
        for i, reward_func in enumerate(self.reward_funcs):
            if not isinstance(reward_func, nn.Module):
                out[:, i] = torch.tensor(reward_func(prompts=prompts, completions=completions))
                continue
            out[:, i] = reward_func(**inputs).logits[:, 0]  # expect: LL201
        return out.sum(dim=1)
    def training_step(self, prompts, completions, inputs):
        print(self.rewards(prompts, completions, inputs).mean().item())
""",
        # Models and losses kept in dicts that the caller builds and hands to the trainer
        # (ParallelWaveGAN style): the evaluation step runs both models with gradients on
        """
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, criterion, optimizer, data_loader, device):
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.data_loader = data_loader
        self.device = device

    def _train_step(self, batch):
        x, y = batch
        y_ = self.model["generator"](x)
        gen_loss = self.criterion["mel"](y_, y) - self.model["discriminator"](y_).mean()
        self.optimizer["generator"].zero_grad()
        gen_loss.backward()
        self.optimizer["generator"].step()

    def _eval_step(self, batch):
        x, y = batch
        y_ = self.model["generator"](x)  # expect: LL201
        p_ = self.model["discriminator"](y_)  # expect: LL201
        mel_loss = self.criterion["mel"](y_, y)
        return (mel_loss - p_.mean()).item()

    def _eval_epoch(self):
        total = 0.0
        for batch in self.data_loader["dev"]:
            total += self._eval_step(batch)
        return total

    def run(self, steps):
        for step in range(steps):
            for batch in self.data_loader["train"]:
                self._train_step(batch)
            print(step, self._eval_epoch())


def main():
    device = torch.device("cuda")
    model = {"generator": nn.Linear(80, 256).to(device), "discriminator": nn.Linear(256, 1).to(device)}
    optimizer = {key: torch.optim.Adam(module.parameters()) for key, module in model.items()}
    criterion = {"mel": nn.L1Loss().to(device)}
    trainer = Trainer(model=model, criterion=criterion, optimizer=optimizer, data_loader={"train": [], "dev": []}, device=device)
    trainer.run(100)


if __name__ == "__main__":
    main()
""",
        # Modules that do have parameters, though their __init__ builds none itself: a wrapper
        # around the module it is given, and a subclass of nn.Sequential
        """
import torch
import torch.nn as nn
class Wrapper(nn.Module):
    def __init__(self, net, scale=1.0):
        super().__init__()
        self.net = net
        self.scale = scale
    def forward(self, x):
        return self.net(x) * self.scale
class Head(nn.Sequential):
    def __init__(self):
        super().__init__(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
def evaluate(loader):
    model = Wrapper(nn.Linear(8, 8))
    head = Head()
    model.eval()
    head.eval()
    scores = []
    for x in loader:
        out = model(x)  # expect: LL201
        logits = head(x)  # expect: LL201
        scores.append(out.mean().item() + logits.mean().item())
    return scores
""",
        # A returned forward whose only callers in the file never differentiate it
        """
import torch


def classify(net, x):
    net.eval()
    return net(x).softmax(-1)  # expect: LL201


def report(net, loader):
    for x, _ in loader:
        print(classify(net, x).argmax(-1).tolist())
""",
        # The same extractor with a basis that stays trainable: the forward records a graph
        """
import numpy as np
import torch
import torch.nn as nn


class Framer(nn.Module):
    def __init__(self, size=400, hop=160):
        super().__init__()
        self.taper = nn.Parameter(torch.hamming_window(size), requires_grad=False)
        self.size = size
        self.hop = hop

    def forward(self, wave):
        return wave.unfold(-1, self.size, self.hop) * self.taper


class MelBands(nn.Module):
    def __init__(self, size=400, bands=40, learnable=True):
        super().__init__()
        self.basis = nn.Parameter(torch.rand(size, bands))
        if not learnable:  # trainable by default: only a flag freezes it
            self.basis.requires_grad_(False)

    def forward(self, frames):
        return (frames @ self.basis).clamp_min(1e-6).log()


def band_stats(clips):
    features = nn.Sequential(Framer(), MelBands())
    rows = []
    for clip in clips:
        bands = features(clip[None])[0]  # expect: LL201
        rows.append(np.asarray(bands))
    table = np.concatenate(rows)
    return table.mean(0), table.std(0)


if __name__ == "__main__":
    print(band_stats([torch.randn(16000) for _ in range(8)]))
""",
        # An actor put in eval mode and run per step through a method of its own that calls
        # the forward (SAC-Q style): the call records a graph every step
        """
import torch
import torch.nn as nn


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 4)

    def forward(self, obs):
        return self.net(obs).softmax(-1)

    def sample_action(self, obs):
        probs = self(obs)
        return torch.distributions.Categorical(probs).sample(), probs


def rollout(actor, env, steps):
    actor.eval()
    obs = env.reset()
    visited = []
    for _ in range(steps):
        action, probs = actor.sample_action(torch.as_tensor(obs))  # expect: LL201
        obs = env.send(action.item())
        visited.append(probs.max().item())
    return visited
""",
        # A run_epoch() shared by training and validation, which puts the model in eval mode
        # on one branch: the method that runs the forward for a metric records a graph that
        # nothing differentiates, in either mode; reported at the call, where no_grad goes
        """
import torch
import torch.nn as nn


class PitchModel(nn.Module):
    def __init__(self, stats):
        super().__init__()
        self.net = nn.Linear(16, 1)
        self.stats = stats

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def denormalize(self, x, speakers):
        pitch = self(x)
        for i in range(pitch.shape[0]):
            mean = self.stats[speakers[i].item()].mean
            pitch[i] = pitch[i] + mean
        return pitch


def run_epoch(model, loader, optimizer, train):
    model.train() if train else model.eval()
    error = 0.0
    for x, y, speakers in loader:
        loss = nn.functional.mse_loss(model(x), y)
        error += (model.denormalize(x, speakers) - y).abs().mean().item()  # expect: LL201
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return error
""",
        # TensorFlow imported for file reading, the model from transformers' torch side: torch
        # code, whose graphs the rule judges
        """
import tensorflow as tf
from transformers import AutoModelForSequenceClassification, AutoTokenizer


def score_lines(path, name="distilbert-base-uncased"):
    tokenizer = AutoTokenizer.from_pretrained(name)
    model = AutoModelForSequenceClassification.from_pretrained(name)
    model.eval()
    labels = []
    for line in tf.io.gfile.GFile(path):
        logits = model(**tokenizer(line, return_tensors="pt")).logits  # expect: LL201
        labels.append(int(logits.argmax()))
    return labels
""",
        # a model put in eval mode and handed to a module-level ranking helper, called once per
        # query in a comprehension: the helper runs the model's own methods (each a forward) with
        # gradients on, so every query records a graph that nothing uses (the training step runs
        # the same methods and backpropagates, in its own calls)
        """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Reranker(nn.Module):
    def __init__(self, dim=128):
        super().__init__()
        self.query_proj = nn.Linear(dim, dim)
        self.doc_proj = nn.Linear(dim, dim)

    def encode_query(self, q):
        return F.normalize(self.query_proj(q), dim=-1)

    def encode_doc(self, d):
        return F.normalize(self.doc_proj(d), dim=-1)


def rank(net, query, docs):
    q = net.encode_query(query)
    scores = torch.stack([(q * net.encode_doc(d)).sum() for d in docs])
    return scores.argsort(descending=True)


def train_step(net, optimizer, query, positive, negative):
    q = net.encode_query(query)
    loss = F.relu(0.2 - (q * net.encode_doc(positive)).sum() + (q * net.encode_doc(negative)).sum())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def evaluate(net, queries):
    net.eval()
    return [rank(net, query, docs).tolist() for query, docs in queries]  # expect: LL201


model = Reranker()
opt = torch.optim.Adam(model.parameters())
train_step(model, opt, torch.rand(128), torch.rand(128), torch.rand(128))
print(evaluate(model, [(torch.rand(128), [torch.rand(128) for _ in range(50)])]))
""",
        # the same through a second helper that the first hands the model to, called in a plain
        # statement
        """
import torch
import torch.nn as nn


class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 16))

    def embed(self, x):
        return nn.functional.normalize(self.body(x), dim=-1)


def embed_all(encoder, chunks):
    return torch.cat([encoder.embed(c) for c in chunks])


def retrieval_scores(encoder, queries, documents):
    q = embed_all(encoder, queries)
    d = embed_all(encoder, documents)
    return (q @ d.T).topk(10).indices


def train(tower, optimizer, pairs):
    for a, b in pairs:
        loss = -(tower.embed(a) * tower.embed(b)).sum(-1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def evaluate(encoder, queries, documents):
    encoder.eval()
    top = retrieval_scores(encoder, queries, documents)  # expect: LL201
    return top.tolist()


tower = Tower()
train(tower, torch.optim.SGD(tower.parameters(), lr=0.1), [(torch.rand(8, 64), torch.rand(8, 64))])
print(evaluate(tower, [torch.rand(8, 64)], [torch.rand(100, 64)]))
""",
        # the model held on the object, run by one of its methods: the validation pass's `loss`
        # is not the one the training pass differentiates (that one is bound afresh before it)
        """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Fitter:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def _step(self, x, y):
        logits = self.model(x)
        return F.cross_entropy(logits, y), logits

    def fit(self, train_batches, valid_batches, epochs):
        for epoch in range(epochs):
            self.model.train()
            for x, y in train_batches:
                loss, _ = self._step(x, y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            self.model.eval()
            correct = 0
            for x, y in valid_batches:
                loss, logits = self._step(x, y)  # expect: LL201
                correct += (logits.argmax(-1) == y).sum().item()
            print(epoch, loss.item(), correct)


net = nn.Linear(16, 4)
fitter = Fitter(net, torch.optim.SGD(net.parameters(), lr=0.1))
batches = [(torch.randn(8, 16), torch.randint(0, 4, (8,)))]
fitter.fit(batches, batches, 2)
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """Evaluation that records a graph on every forward, vs the same loop under `torch.no_grad()`."""

        def setup(self, ctx):
            import torch
            ctx.model = torch.nn.Sequential(torch.nn.Linear(64, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(ctx.device).eval()
            ctx.x = torch.randn(256, 64, device=ctx.device)
            ctx.y = torch.randint(0, 10, (256,), device=ctx.device)
            ctx.correct = 0

        def leaky(self, ctx):
            out = ctx.model(ctx.x)
            ctx.correct += (out.argmax(1) == ctx.y).sum().item()

        def fixed(self, ctx):
            import torch
            with torch.no_grad():
                out = ctx.model(ctx.x)
                ctx.correct += (out.argmax(1) == ctx.y).sum().item()


# --- detection ------------------------------------------------------------------------------------
def _feeds_backward(facts: ModuleFacts, call: ModelCall) -> bool:
    statement = call.statement
    if statement is None or not isinstance(statement.node, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
        return False
    targets = statement.node.targets if isinstance(statement.node, cst.Assign) else [statement.node]
    names = {name for target in targets for name in bound_names(target.target)}
    if binding_feeds_backward(facts, statement, names):
        return True
    return any(_handed_to_backward(facts, site, callee, names) for site, callee in call_graph(facts).callees_of(statement.function))


def _handed_to_backward(facts: ModuleFacts, site: cst.Call, callee: FunctionInfo, names: set[str]) -> bool:
    """``step(optimizer, loss)``: one of ``names`` is passed to a local function whose backward
    consumes the parameter it binds (the training step's backward, written in a helper)."""
    if callee.node is None:
        return False
    skip = 1 if isinstance(site.func, cst.Attribute) and is_bound_to_object(callee.node) else 0
    consumed = facts.summary(callee).backward_consumed
    return any(
        type(arg.value) is cst.Name and arg.value.value in names and parameter_for(callee.node, site, arg, skip) in consumed
        for arg in site.args
    )


def _wrapper_forward(call: ModelCall) -> bool:
    """The call is in a module's ``forward`` (or ``__call__``), whose output goes to the caller:
    a wrapper that pins its module in eval mode may well be trained through."""
    statement = call.statement
    return statement is not None and statement.function.is_method and statement.function.name in ("forward", "__call__")


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    reported = set()
    judged_in: set[FunctionInfo] = set()  # functions with a finding at the default confidence
    judged_calls: list[ModelCall] = []  # the forwards with a finding, at any confidence
    unused = _unused_forwards(facts)
    for call in facts.model_calls():
        if call.grad is not GradMode.ENABLED:
            continue
        where = call.statement.line if call.statement is not None else call.node
        if where in reported:
            continue
        finding = _eval_mode_finding(facts, call)
        if finding is None or finding.confidence is Confidence.LOW and call in unused:
            finding = unused.get(call)
        if finding is None:
            continue
        reported.add(where)
        judged_calls.append(call)
        if call.statement is not None and finding.confidence is not Confidence.LOW:
            judged_in.add(call.statement.function)
        yield finding
    helper_calls = _eval_mode_helper_calls(facts, graph_use(facts))
    if helper_calls:
        # A forward the helper runs that is judged already (at any confidence: shown low where
        # LL102 reports the keep that names it), or a chain it carries that LL103 reports, is
        # the finding for that graph.
        judged = {call.statement.function for call in (*unused, *judged_calls) if call.statement is not None}
        # (A chain whose graph is only a guess, value.confidence LOW, is shown by LL103 at low
        # confidence: it does not stand for this finding.)
        judged |= {carry.function for carry in carried_states(facts) if carry.reported and carry.value.confidence is not Confidence.LOW}
    for call in helper_calls:
        where = call.statement.line  # type: ignore[union-attr]
        if where in reported or call.runs_in & judged:
            continue
        finding = _eval_mode_finding(facts, call)
        if finding is not None:
            reported.add(where)
            yield finding
    for call in _eval_mode_method_calls(facts, graph_use(facts)):
        where = call.statement.line  # type: ignore[union-attr]
        if where in reported or call.targets & judged_in:
            continue  # the method's own forward is already the finding for this graph
        if _steps_a_chain(facts, call.targets):
            continue  # a sampler's own loop: LL103 judges the chain it carries (or cuts)
        finding = _eval_mode_finding(facts, call)
        if finding is not None:
            reported.add(where)
            yield finding
    # A helper's or a method's forward whose output nothing uses, where no evaluation-mode
    # finding was made for the call (those say more: the model is known to be evaluated).
    for call, finding in unused.items():
        where = call.statement.line if call.statement is not None else call.node
        if isinstance(call, (_MethodForward, _HelperForward)) and where not in reported:
            reported.add(where)
            yield finding
    for call, finding in _backward_skipped_by_a_caller(facts).items():
        where = call.statement.line if call.statement is not None else call.node
        if where not in reported:
            reported.add(where)
            yield finding


def _backward_skipped_by_a_caller(facts: ModuleFacts) -> dict[ModelCall, Violation]:
    """``run_epoch(loader, train=False)``: a function shared by training and evaluation runs its
    backward only on one side of a test of its parameters (``if train:``, ``if phase ==
    "train":``), and a call in the file passes the literal that skips it, with gradients on.
    On that call every forward of the function records a graph that nothing differentiates.
    Reported at the forward, where ``torch.set_grad_enabled(train)`` goes."""
    found: dict[ModelCall, Violation] = {}
    forwards: dict[FunctionInfo, list[ModelCall]] = {}
    for call in facts.model_calls():
        if call.grad is GradMode.ENABLED and call.statement is not None and call.statement.function.node is not None:
            forwards.setdefault(call.statement.function, []).append(call)
    if not forwards:
        return found
    use = graph_use(facts)
    for function, calls in forwards.items():
        backwards = _backward_branches(facts, function)
        if not backwards or any(not branches for branches in backwards.values()):
            continue  # no backward, or one that runs on every call
        returns = facts.summary(function).returns
        if returns is not None and returns.is_graph:
            continue  # the callers get a graph: what they do with it decides
        for site, fact in call_graph(facts).sites_of(function):
            if fact.grad is not GradMode.ENABLED or use.runs_with_grad(fact.function) is False:
                continue
            bound = isinstance(site.func, cst.Attribute) and function.is_method
            literals = literal_arguments(function.node, site, bound=bound)  # type: ignore[arg-type]
            skipped = [
                backward for backward, branches in backwards.items()
                if any(literal_truth(test, literals) is (not side) for test, side in branches)
            ]
            if len(skipped) < len(backwards):
                continue
            flags = ", ".join(f"{name}={literals[name]!r}" for name in sorted(_tested_names(backwards)) if name in literals)
            for call in calls:
                if call in found or not _records_graph(facts, use, call, function):
                    continue
                place = facts.index.place_of(call.statement)  # type: ignore[arg-type]
                if place is not None and any(literal_truth(test, literals) is (not side) for test, side in place.branches()):
                    continue  # the forward is skipped as well
                name = call.callee or facts.describe(call.node.func)
                backward_line = facts.line_of(next(iter(backwards)))
                found[call] = Violation(
                    node=call.node,
                    message=(
                        f"'{name}' runs with gradients enabled when '{function.name}' is called with {flags} "
                        f"(line {facts.line_of(site)}), which skips its backward (line {backward_line}): on that call "
                        "the forward records an autograd graph that nothing differentiates"
                    ),
                    confidence=Confidence.MEDIUM,
                    help=(
                        "record the graph only on the side that runs the backward: wrap the forward in "
                        "'with torch.set_grad_enabled(...)' with the test that guards the backward, or make that call under torch.no_grad()"
                    ),
                    statement=call.statement.line,  # type: ignore[union-attr]
                )
            break
    return found


def _backward_branches(facts: ModuleFacts, function: FunctionInfo) -> dict[cst.CSTNode, list[tuple[cst.BaseExpression, bool]]]:
    """Each backward statement of ``function``, with the ``if`` tests (and sides) around it."""
    branches: dict[cst.CSTNode, list[tuple[cst.BaseExpression, bool]]] = {}
    for fact in facts.index.statements_of(function):
        if backward_calls(fact.node, facts.imports):
            place = facts.index.place_of(fact)
            branches[fact.node] = place.branches() if place is not None else []
    return branches


def _tested_names(backwards: dict[cst.CSTNode, list[tuple[cst.BaseExpression, bool]]]) -> set[str]:
    """The parameters the tests around the backwards read (for the message)."""
    names: set[str] = set()
    for branches in backwards.values():
        for test, _ in branches:
            names.update(node.value for node in walk(test) if isinstance(node, cst.Name))
    return names


def _eval_mode_finding(facts: ModuleFacts, call: ModelCall) -> Violation | None:
    """A forward in evaluation code: after ``.eval()`` on the model, or (a guess, low confidence)
    in a function named like evaluation."""
    if call.eval_reason is None or _feeds_backward(facts, call):
        return None  # not evaluation code, or its output is differentiated: training
    if call.statement is not None and not isinstance(call, _EvalModeHelper) and _records_nothing(facts, call, call.statement.function):
        return None
    returned = call.eval_reason == "eval-mode" and _returned_to_differentiating_callers(facts, call)
    if returned:
        confidence = Confidence.LOW  # `model.eval(); return model(x)` in a closure or helper others call
        why = f"after {call.callee}.eval() in a function that returns its output"
    elif call.eval_reason == "eval-mode" and not _wrapper_forward(call):
        confidence = Confidence.HIGH
        why = f"after {call.callee}.eval()"
        function = call.statement.function if call.statement is not None else None
        if function is not None and function.cls is not None and call.callee in held_in_eval_mode(function.cls):
            why += " in __init__ (nothing in the class turns it back to training)"
    elif call.eval_reason == "eval-mode":
        confidence = Confidence.LOW  # a wrapper's forward that keeps its module in eval mode
        why = f"after {call.callee}.eval() in a module's forward (its caller may train through it)"
    else:
        # Only the function's name says "evaluation" (evaluate_actions() is PPO's training
        # forward, a log_validation() may run a pipeline that disables gradients itself):
        # a guess, shown with --min-confidence low.
        confidence = Confidence.LOW
        why = f"in function '{call.statement.function.name}' (named like evaluation)" if call.statement else "in evaluation code"
    name = call.callee or facts.describe(call.node.func)
    if isinstance(call, _MethodForward):
        name = f"{name}.{call.method}"
    elif isinstance(call, _EvalModeHelper):
        name = f"{facts.describe(call.node.func)}()"
        why = f"the forward of {call.callee}, " + ("on the same object, " if call.on_self else "handed to it, ") + why
    return Violation(
        node=call.node,
        message=(
            f"'{name}' runs {why} with gradients enabled; every forward pass records an "
            + ("autograd graph that only its callers could use" if returned else "autograd graph that is never used")
        ),
        confidence=confidence,
        statement=call.statement.line if call.statement is not None else None,
        fix=_no_grad_fix(facts, call),
    )


def _returned_to_differentiating_callers(facts: ModuleFacts, call: ModelCall) -> bool:
    """The function runs one forward and returns its output (``model.eval(); return model(x)``
    in a model function handed to samplers), and a caller differentiates it: the callers are
    not in the file (a closure returned to other modules), or one in the file runs a backward or
    ``autograd.grad`` on what the call gives. Whether the graph is wasted is then the callers'
    affair. A caller that only logs or keeps the output leaves the finding as it is. Not a
    function that runs the model over a loop's items and returns what it collected
    (``return [model(x) for x in loader]``): that is an evaluation pass itself."""
    if call.statement is None or call.statement.loops:
        return False
    if any(inner is call.node for node in walk(call.statement.line) if isinstance(node, COMPREHENSIONS) for inner in walk(node)):
        return False
    use = graph_use(facts)
    function = call.statement.function
    if not use.returned_by(call.node, function):
        return False
    return not use.callers_shown(function) or any(
        result_backpropagated(site, statement, facts) for site, statement in call_graph(facts).sites_of(function)
    )


def _records_nothing(facts: ModuleFacts, call: ModelCall, function: FunctionInfo) -> bool:
    """A module with no parameters of its own (attention that only has dropout) called on
    inputs that carry no graph: nothing is recorded, in eval mode or not."""
    if isinstance(call.node.func, cst.Attribute) and getattr(call, "method", None) is not None:
        return False
    use = graph_use(facts)
    return use.parameterless(call.node.func, function) and not any(facts.value(arg.value).is_graph for arg in call.node.args)


def _records_graph(facts: ModuleFacts, use: GraphUse, call: ModelCall, function: FunctionInfo) -> bool:
    """Whether the file shows that this forward records a graph: a model known at medium
    confidence or above, with parameters or a graph-attached input, called on something that may
    be a tensor (a model called on a path or a URL is a wrapper that prepares its own input, and
    often runs without gradients); for a module class of this file, its forward (or the method
    called) is seen to return a graph-attached value."""
    method = getattr(call, "method", None)
    model = call.node.func.value if method is not None else call.node.func  # type: ignore[attr-defined]
    if use.model_confidence(model, function) is Confidence.LOW:
        return False
    arguments = [facts.value(arg.value) for arg in call.node.args]
    if arguments and all(value.kind is Kind.NOT_TENSOR and value.role is None for value in arguments):
        return False
    if use.parameterless(model, function) and not any(value.is_graph for value in arguments):
        return False  # no parameters and no graph-attached input: nothing is recorded
    forward = use.local_forward(model, function, method or "forward")
    if forward is False:
        return False
    if forward is not None:
        summary = facts.summary(forward)
        shows_graph = summary.runs_model or (summary.returns is not None and summary.returns.is_graph)
        if not shows_graph or forward.decorator_grad is not None:
            return False
    return True


@dataclass(eq=False)
class _MethodForward(ModelCall):
    """A model's method that runs a forward (``policy.value(obs)``)."""

    method: str | None = None
    #: The methods of the file the call may run (set for calls judged in evaluation mode).
    targets: frozenset[FunctionInfo] = frozenset()


@dataclass(eq=False)
class _HelperForward(ModelCall):
    """A call of a function of the file that runs a forward and returns what it computes
    (``loss = compute_loss(model, batch)``), made where its result is not differentiated."""

    helper: FunctionInfo | None = None


def _only_frozen_models(facts: ModuleFacts, call: ModelCall, frozen: object) -> bool:
    """The models a helper call hands over are all frozen (``compute_loss(ema, batch)``); one
    trainable model among them (``distill_loss(student, teacher, batch)``) records a graph."""
    models = [arg.value for arg in call.node.args if facts.value(arg.value).role in (Role.MODEL, Role.FROZEN_MODEL) or (dotted_name(arg.value) or "") in frozen]  # type: ignore[operator]
    return bool(models) and all((dotted_name(model) or "") in frozen or facts.value(model).role is Role.FROZEN_MODEL for model in models)  # type: ignore[operator]


def _helper_forward_calls(facts: ModuleFacts, use: GraphUse) -> list[ModelCall]:
    """``loss = pf_loss(model, batch)`` in a validation loop, with gradients on: the helper's own
    forward is differentiated where the training step calls it, so it is not a finding by
    itself; this call, whose result nothing differentiates, is where the graph is recorded for
    nothing (and where ``no_grad`` goes). Only helpers that are not module methods, run their
    forwards directly, run no backward of their own and return what the forward computes."""
    found: list[ModelCall] = []
    inner: dict[FunctionInfo, list[ModelCall]] = {}
    for model_call in facts.model_calls():
        if model_call.statement is not None and model_call.grad is GradMode.ENABLED:
            inner.setdefault(model_call.statement.function, []).append(model_call)
    for call, fact, callee in call_graph(facts).resolved:
        if callee is None or fact.grad is not GradMode.ENABLED or callee not in inner or callee.decorator_grad is not None:
            continue
        if callee.cls is not None and callee.cls.is_module or callee.may_be_called_by_base or callee.backward_names:
            continue  # (a helper that runs its own backward uses its forwards itself)
        returns = facts.summary(callee).returns
        if returns is None or not returns.is_graph:
            continue  # it does not hand back what its forward computes
        if any(not use.expression_flow(forward.node, callee)[0] for forward in inner[callee]):
            continue  # a forward of the helper nothing differentiates: judged there
        if not any(_records_graph(facts, use, forward, callee) for forward in inner[callee]):
            continue  # its forwards are guesses by name (`encoder(df[col])`), or record nothing
        found.append(_HelperForward(call, fact, f"{callee.name}()", facts.value(call), fact.grad, None, callee))
    return found


def _methods_named(facts: ModuleFacts, name: str) -> set[FunctionInfo]:
    """The methods called ``name`` of the module classes of this file (what ``model.name(...)``
    may run when the model's class is not known at the call)."""
    return {
        facts.structure.functions[node]
        for cls in facts.structure.classes.values()
        if cls.is_module
        for method, node in cls.methods.items()
        if method == name
    }


def _model_method_calls(facts: ModuleFacts, use: GraphUse) -> list[ModelCall]:
    """``policy.value(obs)``: a method of a module class of this file, called on a model, that
    runs the model through ``self.forward`` or another method: a forward under another name. (A
    method that calls a model itself, ``self.net(x)``, has that call judged instead.)"""
    own_calls = {call.statement.function for call in facts.model_calls() if call.statement is not None}
    methods = {
        name
        for cls in facts.structure.classes.values()
        if cls.is_module
        for name, node in cls.methods.items()
        if name not in ("forward", "__init__", "__call__")
        and facts.structure.functions[node] not in own_calls
        and not facts.structure.functions[node].backward_names
        and facts.summary(facts.structure.functions[node]).runs_model_with_grad  # not @torch.no_grad() def sample
    }
    if not methods:
        return []
    found = []
    for call, fact in facts.index.statement_calls:
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in methods or fact.grad is not GradMode.ENABLED:
            continue
        receiver = facts.value(func.value)
        if (dotted_name(func.value) or "") == "self" or use.model_confidence(func.value, fact.function) is Confidence.LOW:
            continue
        method = use.local_forward(func.value, fact.function, func.attr.value)
        if isinstance(method, FunctionInfo) and method in own_calls:
            continue  # the receiver's own `sample` calls its model itself: that call is judged
        found.append(_MethodForward(call, fact, dotted_name(func.value), receiver, fact.grad, None, func.attr.value))
    return found


def _eval_mode_method_calls(facts: ModuleFacts, use: GraphUse) -> list[_MethodForward]:
    """``actor.eval(); actor.predict(obs)``: a method of a module class of this file called on a
    model the function put in evaluation mode, with gradients on: evaluation code running the
    model under another name, judged at the call. The methods the call may run (the receiver's
    class's, or, when its class is not known, every module class's of that name) must all run a
    forward with gradients on and train nothing; a frozen model records nothing."""
    frozen = frozen_models(facts)
    calls = call_graph(facts)
    found = []
    for call, fact in facts.index.statement_calls:
        func = call.func
        if not isinstance(func, cst.Attribute) or fact.grad is not GradMode.ENABLED:
            continue
        receiver_name = dotted_name(func.value)
        if receiver_name is None or receiver_name == "self" or receiver_name not in fact.eval_mode:
            continue
        if receiver_name in frozen or receiver_name.split(".", 1)[0] in frozen:
            continue
        receiver = facts.value(func.value)
        if receiver.role is Role.FROZEN_MODEL or use.model_confidence(func.value, fact.function) is Confidence.LOW:
            continue
        resolved = use.local_forward(func.value, fact.function, func.attr.value)
        if resolved is False:
            continue  # the receiver's class has no such method
        targets = {resolved} if isinstance(resolved, FunctionInfo) else _methods_named(facts, func.attr.value)
        if not targets or not all(_evaluates(facts, calls, method) for method in targets):
            continue
        if result_backpropagated(call, fact, facts):
            continue  # `loss = net.compute_loss(x, y)` ... `loss.backward()`
        found.append(_MethodForward(call, fact, receiver_name, receiver, fact.grad, "eval-mode", func.attr.value, frozenset(targets)))
    return found


@dataclass(eq=False)
class _EvalModeHelper(ModelCall):
    """``model.eval(); hyps = beam_search(model, src)``: a call of a function of the file that is
    handed a model the caller put in evaluation mode and runs its forward with gradients on."""

    helper: FunctionInfo | None = None
    #: The functions of the file that run the model's forward for it (the helper, a function it
    #: hands the model to, the model's methods it calls).
    runs_in: frozenset[FunctionInfo] = frozenset()
    #: The helper is a method of the same object, which holds the model (``self._step(x)``).
    on_self: bool = False


def _eval_mode_helper_calls(facts: ModuleFacts, use: GraphUse) -> list[_EvalModeHelper]:
    """``model.eval()`` then ``beam_search(model, src)`` (in a statement, a comprehension or a
    loop), with gradients on, where the function of the file that receives the model runs its
    forward with gradients on: ``net(x)``, a method of a module class of this file that runs the
    model (``net.encode(src)``, ``net.decode_step(tokens, h)``), a library model's forward under
    another name, or the same through a further local function it hands the model to. Evaluation
    code running the model one call away, judged at the call (where ``no_grad`` goes). Not when
    the function (or one it calls) runs a backward, turns the model back to training, disables
    gradients around those forwards, or its result feeds a backward in the caller."""
    frozen = frozen_models(facts)
    calls = call_graph(facts)
    found: list[_EvalModeHelper] = []
    for call, fact, callee in calls.resolved:
        if callee is None or callee.node is None or fact.grad is not GradMode.ENABLED or not fact.eval_mode:
            continue
        if callee.decorator_grad is not None or callee.may_be_called_by_base:
            continue
        skip = 1 if isinstance(call.func, cst.Attribute) and callee.is_method and is_bound_to_object(callee.node) else 0
        for arg in call.args:
            handed = _bound_forward_receiver(facts, use, arg.value, fact.function) or arg.value
            model = dotted_name(handed)
            if model is None or model == "self" or model not in fact.eval_mode:
                continue
            if model in frozen or model.split(".", 1)[0] in frozen or facts.value(handed).role is Role.FROZEN_MODEL:
                continue
            if use.model_confidence(handed, fact.function) is Confidence.LOW:
                continue
            parameter = parameter_for(callee.node, call, arg, skip)
            runs_in = _runs_parameter_forward(facts, calls, callee, parameter, 0) if parameter is not None else frozenset()
            if not runs_in:
                continue
            if result_backpropagated(call, fact, facts):
                break  # `loss = compute_loss(model, batch)` ... `loss.backward()`: training
            found.append(_EvalModeHelper(call, fact, model, facts.value(arg.value), fact.grad, "eval-mode", callee, runs_in))
            break
        else:
            found.extend(_eval_mode_own_method_call(facts, use, calls, call, fact, callee, frozen))
    return found


def _bound_forward_receiver(facts: ModuleFacts, use: GraphUse, expr: cst.BaseExpression, function: FunctionInfo) -> cst.BaseExpression | None:
    """For ``model.forward_with_cfg`` handed over as a value (a sampler's ``model_fn``): ``model``,
    when the method is one of its module class's that runs the model. Calling it is a forward."""
    if not isinstance(expr, cst.Attribute):
        return None
    method = use.local_forward(expr.value, function, expr.attr.value)
    if not isinstance(method, FunctionInfo) or not facts.summary(method).runs_model:
        return None
    return expr.value


def _eval_mode_own_method_call(facts: ModuleFacts, use: GraphUse, calls, call: cst.Call, fact, callee: FunctionInfo, frozen) -> list[_EvalModeHelper]:
    """``self.model.eval()`` then ``self._step(x, y)``: a method of the same object that runs the
    forward of the model the caller put in evaluation mode, held on ``self`` rather than handed
    over. The same evaluation code one call away as ``beam_search(model, src)``."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and dotted_name(func.value) == "self" and callee.is_method and callee.cls is fact.function.cls):
        return []
    for model in sorted(fact.eval_mode):
        if not model.startswith("self.") or model.count(".") != 1 or model in frozen:
            continue
        node = _eval_call_receiver(facts, fact.function, model)
        if node is None or facts.value(node).role is Role.FROZEN_MODEL or use.model_confidence(node, fact.function) is Confidence.LOW:
            continue
        runs_in = _runs_parameter_forward(facts, calls, callee, model, 0)
        if not runs_in or result_backpropagated(call, fact, facts):
            continue
        return [_EvalModeHelper(call, fact, model, facts.value(node), fact.grad, "eval-mode", callee, runs_in, on_self=True)]
    return []


def _eval_call_receiver(facts: ModuleFacts, function: FunctionInfo, model: str) -> cst.BaseExpression | None:
    """The ``self.model`` of ``self.model.eval()`` in ``function``: the expression that stands for
    the model there."""
    for call, _ in _calls_in(facts, function):
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "eval" and dotted_name(call.func.value) == model:
            return call.func.value
    return None


def _runs_parameter_forward(facts: ModuleFacts, calls, function: FunctionInfo, parameter: str, depth: int) -> frozenset[FunctionInfo]:
    """Where ``function`` runs the model its ``parameter`` receives with gradients on, training
    nothing: it calls it (``parameter(x)``, ``parameter.forward(x)``), calls a method of a module
    class of the file on it that runs a model with gradients on, a library model's forward under
    another name, or hands it to a local function that does (two calls deep). The functions that
    run those forwards (the helpers and the methods), or nothing: a function that runs a backward
    (or calls one that does), rebinds the parameter, or calls ``parameter.train()`` is not
    evaluation code."""
    if depth > 1 or function.decorator_grad is not None or function.node is None:
        return frozenset()
    if function.backward_names or any(callee.backward_names for _, callee in calls.callees_of(function)):
        return frozenset()
    if _rebinds(function, parameter):
        return frozenset()  # the name is bound again: which model runs is not the one handed over
    runs: set[FunctionInfo] = set()
    for call, fact in _calls_in(facts, function):
        func = call.func
        if isinstance(func, cst.Attribute) and dotted_name(func.value) == parameter:
            method = func.attr.value
            if method == "train" and not (call.args and dotted_name(call.args[0].value) == "False"):
                return frozenset()  # it puts the model back in training mode
            if fact.grad is not GradMode.ENABLED:
                continue
            if method == "forward" or method in LIBRARY_FORWARD_METHODS:
                runs.add(function)
                continue
            targets = _methods_named(facts, method)
            if targets and all(_evaluates(facts, calls, target) for target in targets):
                runs |= {function, *targets}
        elif dotted_name(func) == parameter:
            if fact.grad is GradMode.ENABLED:
                runs.add(function)
        elif fact.grad is GradMode.ENABLED:
            callee = local_callee(call, function, facts)
            if callee is None or callee.node is None or callee is function:
                continue
            skip = 1 if isinstance(func, cst.Attribute) and callee.is_method and is_bound_to_object(callee.node) else 0
            for arg in call.args:
                inner = parameter_for(callee.node, call, arg, skip) if dotted_name(arg.value) == parameter else None
                if inner is not None:
                    runs |= _runs_parameter_forward(facts, calls, callee, inner, depth + 1)
    return frozenset(runs)


def _rebinds(function: FunctionInfo, name: str) -> bool:
    """Whether the body of ``function`` binds ``name`` again (an assignment, a loop's target, a
    ``with ... as`` name)."""
    for node in walk(function.node.body):  # type: ignore[union-attr]
        if isinstance(node, cst.Assign):
            targets = [target.target for target in node.targets]
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr)):
            targets = [node.target]
        elif isinstance(node, cst.AsName):
            targets = [node.name]
        else:
            continue
        if any(name in bound_names(target) for target in targets):  # type: ignore[arg-type]
            return True
    return False


def _calls_in(facts: ModuleFacts, function: FunctionInfo) -> list[tuple[cst.Call, object]]:
    """The calls the statements of ``function`` make, in order."""
    by_function = facts.derived(_calls_by_function)
    return by_function.get(function, [])


def _calls_by_function(facts: ModuleFacts) -> dict[FunctionInfo, list]:
    found: dict[FunctionInfo, list] = {}
    for call, fact in facts.index.statement_calls:
        found.setdefault(fact.function, []).append((call, fact))
    return found


def _evaluates(facts: ModuleFacts, calls, method: FunctionInfo) -> bool:
    """``method`` runs a forward with gradients on (not ``@torch.no_grad() def act``) and trains
    nothing: no backward in it or in the local functions it calls (``self.step_with(loss)``)."""
    if method.name in ("forward", "__init__", "__call__") or method.decorator_grad is not None:
        return False
    if not facts.summary(method).runs_model_with_grad:
        return False
    return not any(function.backward_names for function in (method, *(callee for _, callee in calls.callees_of(method))))


def _unused_forwards(facts: ModuleFacts) -> dict[ModelCall, Violation]:
    """Forwards run with gradients on whose output nothing differentiates, wherever they are:
    samples written out during training, a value bootstrap turned into numbers, statistics
    passes. Dataflow decides (``leaklint.analysis.graph_use``), not names: the output must reach
    no backward, be kept nowhere leaklint cannot follow, and outlive its statement (a result
    dropped at once, ``G(z).detach()``, costs only the forward's own peak). A graph that an
    inference loop carries into the next iteration is LL103's finding, at the line that carries it."""
    if not facts.imports.imports_anything_from("torch"):
        return {}
    found: dict[ModelCall, Violation] = {}
    use = graph_use(facts)
    candidates = [call for call in facts.model_calls() if call.grad is GradMode.ENABLED and call.statement is not None]
    candidates += _model_method_calls(facts, use)
    candidates += _helper_forward_calls(facts, use)
    if not candidates:
        return found
    frozen = frozen_models(facts)
    carried = [carry for carry in carried_states(facts) if carry.reported and carry.graph_unused]
    detached = detached_each_iteration(facts)
    for call in candidates:
        function = call.statement.function  # type: ignore[union-attr]
        if call.callee is not None and (call.callee in frozen or call.callee.split(".", 1)[0] in frozen):
            continue
        if isinstance(call, _HelperForward) and _only_frozen_models(facts, call, frozen):
            continue  # `compute_loss(ema, batch)` with a frozen model: the helper records nothing
        if not isinstance(call, _HelperForward) and not _records_graph(facts, use, call, function):
            continue
        used, reached = use.expression_flow(call.node, function)
        if used or not reached:
            continue
        if any(use.reaches_name(reached, carry.function, carry.name) for carry in carried):
            continue  # the chain is reported where it is carried (LL103)
        if _carries_inside(facts, use, call, function, carried):
            continue  # `diffusion.sample(x)` whose own loop carries the chain: LL103's finding there
        if any(use.reaches_name(reached, owner, name) for owner, name in detached):
            continue  # a state the loop detaches every iteration: the graph is cut on purpose
        with_grad = use.runs_with_grad(function)
        if with_grad is False:
            continue
        name = call.callee or facts.describe(call.node.func)
        keeps = _kept_across_iterations(facts, use, reached)
        reported = [store for store in keeps if _keep_reported(facts, store, call)]
        kept = (reported or keeps or [None])[0]
        confidence = Confidence.MEDIUM if with_grad else Confidence.LOW
        if reported:
            # The graphs pile up at the keep, which LL102 reports (naming this forward): one
            # finding for one leak; this forward only shown with low confidence.
            confidence = Confidence.LOW
        found[call] = Violation(
            node=call.node,
            message=(
                (f"'{name}', which runs a model's forward," if isinstance(call, _HelperForward) else f"'{name}'")
                + " runs with gradients enabled, but nothing differentiates its output (it only "
                "ends up in values, files or logs): the forward records an autograd graph that is never "
                "used and keeps it alive while the output lives"
                + (
                    f"; the output is kept in '{kept.container}' (line {facts.line_of(kept.statement.node)}) across "
                    "the iterations of a loop, so every iteration's graph stays alive until it goes"
                    if kept is not None
                    else ""
                )
            ),
            confidence=confidence,
            help="run this forward under 'with torch.no_grad():' (or torch.inference_mode()): its output keeps its values, not the graph",
            statement=call.statement.line,  # type: ignore[union-attr]
            fix=_no_grad_fix(facts, call, statement_only=True),
        )
    return found


def _carries_inside(facts: ModuleFacts, use: GraphUse, call: ModelCall, function: FunctionInfo, carried: list) -> bool:
    """For a model's method run as a forward (``diffusion.sample(noise)``): whether that method,
    or a local function it calls, carries the graph from one iteration to the next where LL103
    reports it; the chain is that finding, at the line that carries it."""
    if not isinstance(call, _MethodForward):
        return False
    method = use.local_forward(call.node.func.value, function, call.method or "forward")  # type: ignore[attr-defined]
    if not isinstance(method, FunctionInfo):
        return False
    inside = {method} | {callee for _, callee in call_graph(facts).callees_of(method)}
    return any(carry.function in inside for carry in carried)


def _steps_a_chain(facts: ModuleFacts, methods: frozenset[FunctionInfo]) -> bool:
    """Whether one of ``methods``, or a local function it calls, steps a state through a loop
    (``x = step(model(x))``, carried or detached each iteration): a sampler or a generator, whose
    graph LL103 judges at the line that carries it, and which may cut it on purpose."""
    calls = call_graph(facts)
    inside = set(methods) | {callee for method in methods for _, callee in calls.callees_of(method)}
    return any(carry.function in inside for carry in carried_states(facts)) or any(
        owner in inside for owner, _ in detached_each_iteration(facts)
    )


def _keep_reported(facts: ModuleFacts, store: Store, call: ModelCall) -> bool:
    """LL102 reports ``store`` at the default confidence as the keep of the graphs that ``call``
    records: naming the forward (``Lifetime.unused_forward_line``), or, for a forward that runs
    in another function than the keep (a helper's rollout kept per item), with its ``.detach()``.
    That finding is the one for the leak."""
    lifetime = facts.lifetime(store.statement, store.container)
    runs_here = not isinstance(call, (_HelperForward, _MethodForward)) and store.statement.function is call.statement.function  # type: ignore[union-attr]
    if lifetime.unused_forward_line is None and runs_here:
        return False  # the forward runs where its output is kept: the forward is the finding
    confidence = lifetime.leak_confidence(Confidence.MEDIUM)
    return confidence is not None and confidence is not Confidence.LOW


def _kept_across_iterations(facts: ModuleFacts, use: GraphUse, reached) -> list[Store]:
    """The stores that keep what the forward's output flows into in a container a loop carries
    (``accepted.append(sample)`` in a caller's sampling loop): where its graphs pile up. When
    LL102 reports such a keep, that finding (naming this forward) is the one for the leak."""
    names = use.reached_names(reached)
    if not names:
        return []
    return [
        store
        for store in stores(facts)
        if (store.statement.function, store.container) in names and facts.carry_loops(store.statement, store.container)
    ]


#: Code that needs gradients during evaluation (adversarial examples, saliency maps, training
#: mixed in): disabling gradients around it would break it, so no fix is offered there.
_NEEDS_GRAD = ("backward", "autograd", "requires_grad", ".grad", ".step(")


def _no_grad_fix(facts: ModuleFacts, call: ModelCall, *, statement_only: bool = False) -> SuggestedFix | None:
    """Decorate an evaluation function with ``@torch.no_grad()``, or wrap the evaluation loop
    (the outermost loop around the call that does no training) in ``with torch.no_grad():``;
    with ``statement_only`` (a forward whose output nothing differentiates, which says nothing
    of the other forwards around it), wrap its statement only.

    Unsafe: it changes what runs under autograd, which code relying on gradients in evaluation
    would notice. No fix at all where the code visibly needs gradients.
    """
    fact = call.statement
    if fact is None or fact.line is None:
        return None
    function = fact.function.node
    if statement_only:
        no_grad = torch_reference(facts, "no_grad", function)
        if no_grad is None or _needs_grad(facts, fact.line) or not any(node is call.node for node in walk(fact.line)):
            return None
        return SuggestedFix(f"Wrap the statement in 'with {no_grad.code}():'", Applicability.UNSAFE, (WrapInWith(fact.line, f"{no_grad.code}()"),), no_grad.imports)
    if function is not None and function.asynchronous is None and not _needs_grad(facts, function) and fact.function.is_eval_named:
        # The decorator is evaluated where the ``def`` statement runs, not in the function.
        no_grad = torch_reference(facts, "no_grad", facts.imports.scope_around(function))
        if no_grad is not None:
            edit = AddDecorator(function, f"{no_grad.code}()")
            title = f"Decorate '{fact.function.name}' with @{no_grad.code}()"
            return SuggestedFix(title, Applicability.UNSAFE, (edit,), no_grad.imports)
    no_grad = torch_reference(facts, "no_grad", function)
    if no_grad is None:
        return None
    target = next((loop.node for loop in fact.loops if not (loop.has_backward or loop.has_optimizer_step)), fact.line)
    if _needs_grad(facts, target) or not any(node is call.node for node in walk(target)):
        return None
    edit = WrapInWith(target, f"{no_grad.code}()")
    title = f"Wrap the {'loop' if target is not fact.line else 'statement'} in 'with {no_grad.code}():'"
    return SuggestedFix(title, Applicability.UNSAFE, (edit,), no_grad.imports)


def _needs_grad(facts: ModuleFacts, node: cst.CSTNode) -> bool:
    code = facts.module.code_for_node(node)
    return any(word in code for word in _NEEDS_GRAD)
