"""LL403 zero-grad-keeps-grads: gradients zeroed in place instead of freed between steps."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name
from leaklint.analysis.places import Place
from leaklint.analysis.structure import bound_names
from leaklint.analysis.syntax import call_argument, is_literal, written_words
from leaklint.analysis.torch_api import TORCH_WORDS
from leaklint.findings import Applicability, Confidence, Severity
from leaklint.fixes.spec import SuggestedFix, drop_argument
from leaklint.gate import Names, Words
from leaklint.rule import Measured, Rule, Violation

#: In-place methods that zero a gradient buffer and keep it allocated.
ZEROING_METHODS = frozenset({"zero_"})


class ZeroGradKeepsGrads(Rule):
    code = "LL403"
    name = "zero-grad-keeps-grads"
    severity = Severity.PEAK
    fixable = True
    summary = "zero_grad(set_to_none=False) or p.grad.zero_() keeps every gradient buffer allocated between steps."
    help = "call zero_grad() (set_to_none=True is the default since PyTorch 2.0), or set p.grad = None"
    needs = Words(*TORCH_WORDS, "zero_grad") & Names("zero_grad", *ZEROING_METHODS)
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(0, 1, 9), leaks=(0, 0))
    docs = """
## What it finds
`optimizer.zero_grad(set_to_none=False)`, `model.zero_grad(set_to_none=False)` and the positional
`zero_grad(False)` (high confidence), and loops that zero gradients by hand,
`for p in model.parameters(): p.grad.zero_()` or `p.grad.data.zero_()` (medium confidence when the
loop iterates parameters, i.e. a name or string in what it iterates mentions `param`; low
otherwise; comments do not count). A `zero_grad` method that implements the API itself
(a custom optimizer) is not reported.

## Why it matters
Zeroing keeps one gradient tensor per parameter allocated for the whole run: during the next
forward pass, when activations are at their peak, the gradients of the previous step still hold
as much memory as the parameters themselves (with Adam, a quarter of the training state).
`set_to_none=True` frees them after `optimizer.step()`; the next backward allocates them again,
writes instead of accumulating, and skips a memset per parameter. It has been the default since
PyTorch 2.0, and the PyTorch performance tuning guide recommends it ("Use parameter.grad = None
instead of model.zero_grad() or optimizer.zero_grad()").

## Example
```python
for x, y in loader:
    optimizer.zero_grad(set_to_none=False)
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
```

## Use instead
```python
for x, y in loader:
    optimizer.zero_grad()  # set_to_none=True by default
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
```

## Fix safety
`optimizer.zero_grad(set_to_none=False)` and `model.zero_grad(False)` become
`optimizer.zero_grad()` and `model.zero_grad()`. **Unsafe**, although `set_to_none=True` is the
default since PyTorch 2.0: PyTorch documents that it "changes certain behaviors". Code that reads
`p.grad` after zeroing finds `None` instead of a zero tensor (`p.grad.norm()` raises), and
`torch.optim` optimizers skip a parameter whose gradient is `None` but step one whose gradient is
zero, so weight decay and momentum no longer move a parameter that got no gradient in a step: what
training computes can change. On PyTorch older than 2.0, whose default was `False`, write
`set_to_none=True` instead. Where the file uses a gradient as a tensor anywhere (`p.grad +=
noise`, `p.grad.norm()`, `p.grad.data.mul_(...)`: anything but `p.grad = ...` and the `is None`
tests), the fix is **display-only**: after it, that line would meet `None` and raise, so leaklint
shows the edit but never applies it. Zeroing by hand (`p.grad.zero_()`) gets no fix: it is usually
part of code that wants the zeros.

## Known false positives
Code that reads `p.grad` after zeroing and expects a tensor rather than `None` (logging the norm of
every parameter's gradient, including those that received none; custom optimizers written for
zero-filled gradients, a parameter server that adds its workers' gradients into `p.grad` with
`+=`, as PyTorch's RPC example does after `zero_grad(set_to_none=False)`) needs the zeros: keep it
and add `# noqa: LL403`. Note that `torch.optim`
optimizers skip a parameter whose gradient is `None` but step one whose gradient is zero, which
matters for weight decay and momentum on parameters unused in a step.

## References
- `Optimizer.zero_grad` ("This will in general have lower memory footprint"):
  https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html
- PyTorch performance tuning guide, "Use parameter.grad = None instead of model.zero_grad() or
  optimizer.zero_grad()": https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html
- TorchFix's TOR402 reports the same call: https://github.com/meta-pytorch/torchfix/pull/92
- Runtime repro: `leaklint verify LL403` measures the leaky and the fixed loop body.
"""
    VALID = (
        """
for x, y in loader:
    optimizer.zero_grad()
    model.zero_grad(set_to_none=True)
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
""",
        """
for p in model.parameters():
    p.grad = None
""",
        # a custom optimizer implementing zero_grad itself
        """
import torch
class MySGD(torch.optim.Optimizer):
    def zero_grad(self, set_to_none: bool = True):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.zero_()
""",
        # the flag comes from the caller: a deliberate choice
        """
def reset(optimizer, keep_buffers):
    optimizer.zero_grad(set_to_none=not keep_buffers)
""",
        # not over parameters (low confidence, below the default): a comment saying so does not count
        """
for x, y in loader:
    model(x).sum().backward()
    optimizer.step()
    for t in (  # every param of the model
        model.layers()
    ):
        t.grad.zero_()
""",
        # one hand-made leaf tensor, as in the autograd tutorial
        """
import torch
w = torch.randn(3, requires_grad=True)
for x, y in data:
    loss = ((x @ w - y) ** 2).sum()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
""",
    )
    INVALID = (
        """
for x, y in loader:
    optimizer.zero_grad(set_to_none=False)  # expect: LL403
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
""",
        """
model.zero_grad(False)  # expect: LL403
""",
        """
for x, y in loader:
    for p in model.parameters():
        if p.grad is not None:
            p.grad.data.zero_()  # expect: LL403
    loss = model(x).sum()
    loss.backward()
""",
        """
def reset_grads(net):
    for name, param in net.named_parameters():
        param.grad.zero_()  # expect: LL403
""",
        # the parameter groups of an optimizer, outside a zero_grad implementation
        """
import torch


def clear(optimizer: torch.optim.Optimizer):
    for group in optimizer.param_groups:
        for p in group["params"]:
            p.grad.zero_()  # expect: LL403
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """`zero_grad(set_to_none=False)` keeps every gradient buffer through the next forward and
        backward, vs `zero_grad()` (set_to_none=True)."""

        def setup(self, ctx):
            import torch
            ctx.model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 512)).to(ctx.device)
            ctx.optimizer = torch.optim.SGD(ctx.model.parameters(), lr=0.01)
            ctx.x = torch.randn(16, 512, device=ctx.device)
            ctx.y = torch.randn(16, 512, device=ctx.device)

        def _step(self, ctx):
            import torch.nn.functional as F
            loss = F.mse_loss(ctx.model(ctx.x), ctx.y)
            loss.backward()
            ctx.optimizer.step()

        def leaky(self, ctx):
            ctx.optimizer.zero_grad(set_to_none=False)  # noqa: LL403 (the leaky variant)
            self._step(ctx)

        def fixed(self, ctx):
            ctx.optimizer.zero_grad()
            self._step(ctx)


# --- detection ------------------------------------------------------------------------------------
def _grad_owner(receiver: cst.BaseExpression) -> str | None:
    """``p`` for ``p.grad`` / ``p.grad.data``: the parameter whose gradient buffer is zeroed."""
    if isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
        receiver = receiver.value
    if isinstance(receiver, cst.Attribute) and receiver.attr.value == "grad":
        return dotted_name(receiver.value)
    return None


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    for place in facts.index.calls_named("zero_grad", *ZEROING_METHODS):
        call = place.node
        assert isinstance(call, cst.Call)
        if not isinstance(call.func, cst.Attribute):
            continue
        if call.func.attr.value == "zero_grad":
            violation = _zero_grad_keeping(facts, place, call)
        else:
            violation = _manual_zeroing(facts, place, call)
        if violation is not None:
            yield violation


def _zero_grad_keeping(facts: ModuleFacts, place: Place, call: cst.Call) -> Violation | None:
    flag = call_argument(call, 0, "set_to_none")
    if flag is None or not is_literal(flag, "False", "0"):
        return None
    return Violation(
        node=call,
        message=(
            f"'{facts.describe(call)}' zeroes the gradients in place: every parameter keeps a "
            "gradient buffer allocated through the next forward pass, raising the peak"
        ),
        confidence=Confidence.HIGH,
        help=f"call {facts.describe(call.func)}() (set_to_none=True is the default since PyTorch 2.0)",
        statement=place.statement(),
        fix=_default_zero_grad(facts, call, flag),
    )


def _manual_zeroing(facts: ModuleFacts, place: Place, call: cst.Call) -> Violation | None:
    owner = _grad_owner(call.func.value)  # type: ignore[attr-defined]
    if owner is None:
        return None
    info = place.function(facts)
    if info is not None and "zero_grad" in info.name:
        return None  # an implementation of zero_grad: the choice belongs to its caller
    loop = next(
        (
            loop
            for loop in reversed(place.loop_nodes)
            if isinstance(loop, cst.For) and owner in bound_names(loop.target)
        ),
        None,
    )
    if loop is None:
        return None  # one tensor zeroed by hand (a tutorial-style leaf): bounded and deliberate
    over_parameters = any("param" in word.lower() for word in written_words(loop.iter))  # type: ignore[attr-defined]
    return Violation(
        node=call,
        message=(
            f"'{facts.describe(call)}' zeroes each gradient in place: the buffers stay allocated "
            "through the next forward pass, raising the peak"
        ),
        confidence=Confidence.MEDIUM if over_parameters else Confidence.LOW,
        help=f"set {owner}.grad = None instead (or call optimizer.zero_grad())",
        statement=place.statement(),
    )


def _default_zero_grad(facts: ModuleFacts, call: cst.Call, flag: cst.BaseExpression) -> SuggestedFix | None:
    """``zero_grad(set_to_none=False)`` → ``zero_grad()``.

    Unsafe: PyTorch documents that ``None`` gradients "change certain behaviors": code that reads
    ``p.grad`` finds ``None`` instead of zeros, and ``torch.optim`` skips a parameter whose
    gradient is ``None`` where it would step one whose gradient is zero (weight decay, momentum).
    """
    argument = next(arg for arg in call.args if arg.value is flag)
    edit = drop_argument(facts.module, call, argument)
    if edit is None:
        return None
    # Where the file uses a gradient as a tensor (`p.grad += g`, `p.grad.norm()`), a None gradient
    # makes it raise: the user must decide, so the edit is only shown.
    applicability = Applicability.DISPLAY_ONLY if facts.derived(_uses_gradients) else Applicability.UNSAFE
    return SuggestedFix(f"Call {facts.describe(call.func)}() (set_to_none=True)", applicability, (edit,))


def _uses_gradients(facts: ModuleFacts) -> bool:
    """Whether the file uses some ``x.grad`` as a tensor: anything but ``x.grad = ...`` and the
    ``x.grad is None`` / ``is not None`` tests, which work the same on a None gradient."""
    finder = _GradientUses()
    facts.module.visit(finder)
    return finder.found


class _GradientUses(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False
        self._harmless: set[cst.CSTNode] = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        self._harmless.update(target.target for target in node.targets)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if all(isinstance(item.operator, (cst.Is, cst.IsNot)) for item in node.comparisons):
            self._harmless.add(node.left)
            self._harmless.update(item.comparator for item in node.comparisons)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "grad" and node not in self._harmless:
            self.found = True
