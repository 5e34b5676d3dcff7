"""LL201 eval-without-no-grad: model forward passes in evaluation code that record a graph."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.provenance import ModelCall
from leaklint.analysis.structure import GradMode, bound_names
from leaklint.analysis.torch_api import GRAPH_EVIDENCE, TORCH_CODE, is_eval_function_name
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
    summary = "A model runs in evaluation code without torch.no_grad(), so every forward pass records a graph."
    help = "wrap the evaluation loop in 'with torch.no_grad():' (or decorate the function with @torch.no_grad())"
    needs = TORCH_CODE & Names("eval", "train", matching=is_eval_function_name)
    #: Above low confidence a finding follows .eval() (or .train(False)) on the model.
    needs_above_low = GRAPH_EVIDENCE & Names("eval", "train")
    #: bench/realcode (true, false, debatable) and bench/leaks (true, false), stop 18.
    measured = Measured(realcode=(23, 0, 0), leaks=(4, 0))
    docs = """
## What it finds
A forward call of a model (`model(x)`, `self.model(x)`, `model.forward(x)`, `self(x)`) in
evaluation code that runs with gradients enabled. Evaluation code is everything after
`model.eval()` in the same function (until `model.train()`). A function's name alone (`evaluate`,
`validate`, `predict`, `infer`...) is only a guess: such findings are low confidence, shown with
`--min-confidence low` (PPO's `evaluate_actions()` is a training forward). A call is guarded when it
runs under `torch.no_grad()`, `torch.inference_mode()` or `torch.set_grad_enabled(False)` — as a
`with` block, a statement before it, `stack.enter_context(torch.no_grad())` in a `with ExitStack()`
block, or a decorator on the function or an enclosing one (`@torch.set_grad_enabled(False)`
included; the innermost grad-mode decorator wins, as in torch) — or when every caller of the
function in the same file calls it inside such a block. A model frozen with
`.requires_grad_(False)` records no graph of its own, and library objects whose `__call__`
disables gradients are not models here: diffusers pipelines and what transformers' `pipeline()`
builds.

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
wrapped in `with torch.no_grad():`. The fix uses the file's own torch alias (`th.no_grad()`,
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
it with `# noqa: LL201` on the call. `torch.set_grad_enabled(flag)` with a runtime flag is taken as
a deliberate choice and not reported. Lightning's `validation_step`,
`test_step` and `predict_step` are not reported (Lightning disables gradients around them). A model
that leaklint cannot recognise as a model (no `.eval()`, `.parameters()`, known constructor or
`nn.Module` class in the file) is only a low-confidence guess by its name and hidden by default.

## References
- `torch.no_grad` ("useful for inference... reduce memory consumption"):
  https://pytorch.org/docs/stable/generated/torch.no_grad.html
- `Module.eval` does not disable autograd ("This is equivalent with self.train(False)"; see the
  note on locally disabling gradient computation): https://pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation
- Inference in a loop without no_grad exhausting memory: https://github.com/allenai/longformer/issues/36
- Runtime repro: `leaklint verify LL201` measures the leaky and the fixed loop body.
"""
    VALID = (
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
    )
    INVALID = (
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
    return bool(names & facts.summary(statement.function).backward_consumed)


def _wrapper_forward(call: ModelCall) -> bool:
    """The call is in a module's ``forward`` (or ``__call__``), whose output goes to the caller:
    a wrapper that pins its module in eval mode may well be trained through."""
    statement = call.statement
    return statement is not None and statement.function.is_method and statement.function.name in ("forward", "__call__")


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    reported = set()
    for call in facts.model_calls():
        if call.eval_reason is None or call.grad is not GradMode.ENABLED:
            continue
        if _feeds_backward(facts, call):
            continue  # its output is differentiated: this forward pass is training
        where = call.statement.line if call.statement is not None else call.node
        if where in reported:
            continue
        reported.add(where)
        if call.eval_reason == "eval-mode" and not _wrapper_forward(call):
            confidence = Confidence.HIGH
            why = f"after {call.callee}.eval()"
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
        yield Violation(
            node=call.node,
            message=(
                f"'{name}' runs {why} with gradients enabled; every forward pass records an "
                "autograd graph that is never used"
            ),
            confidence=confidence,
            statement=call.statement.line if call.statement is not None else None,
            fix=_no_grad_fix(facts, call),
        )


#: Code that needs gradients during evaluation (adversarial examples, saliency maps, training
#: mixed in): disabling gradients around it would break it, so no fix is offered there.
_NEEDS_GRAD = ("backward", "autograd", "requires_grad", ".grad", ".step(")


def _no_grad_fix(facts: ModuleFacts, call: ModelCall) -> SuggestedFix | None:
    """Decorate an evaluation function with ``@torch.no_grad()``, or wrap the evaluation loop
    (the outermost loop around the call that does no training) in ``with torch.no_grad():``.

    Unsafe: it changes what runs under autograd, which code relying on gradients in evaluation
    would notice. No fix at all where the code visibly needs gradients.
    """
    fact = call.statement
    if fact is None or fact.line is None:
        return None
    function = fact.function.node
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
