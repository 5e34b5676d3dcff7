"""LL110 create-graph-backward: ``backward(create_graph=True)`` makes each parameter's ``.grad`` hold a graph that refers back to the parameter."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from leaklint.analysis import torch_api
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name
from leaklint.analysis.provenance import StatementFact, converted_names
from leaklint.analysis.steps import per_step_functions
from leaklint.analysis.structure import FunctionInfo, GradMode, backward_target
from leaklint.analysis.syntax import keyword_is_true
from leaklint.analysis.torch_api import TORCH_CODE
from leaklint.analysis.walk import walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names
from leaklint.rule import Measured, Rule, Violation


class CreateGraphBackward(Rule):
    code = "LL110"
    name = "create-graph-backward"
    severity = Severity.LEAK
    summary = (
        "backward(create_graph=True) stores gradients that carry a graph in each parameter's .grad, "
        "a reference cycle between the parameter and its gradient."
    )
    help = (
        "compute the gradients with torch.autograd.grad(outputs, inputs, create_graph=True), which "
        "returns them instead of storing them in .grad"
    )
    needs = TORCH_CODE & Names("create_graph", "grad")
    autograd = True
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(0, 0, 0), leaks=(3, 0))
    docs = """
## What it finds
`loss.backward(create_graph=True)`, `torch.autograd.backward(loss, create_graph=True)` and
`accelerator.backward(loss, create_graph=True)` (the flag written as the literal `True`) without
`inputs=`: a backward that accumulates gradients *with their own graph* into the `.grad` of every
leaf it reaches, parameters included. `torch.autograd.grad(..., create_graph=True)`, the
recommended way to take gradients of gradients, is not reported.

Also `x.grad = g` where `g` carries an autograd graph computed from `x` itself (a score or a
gradient written out by hand with autograd on, as in Langevin-style samplers that drive an
optimizer with their own gradient): the same cycle, built by assignment. `g` counts when it comes
from a model call on `x`, or when the function made `x` a leaf that requires grad
(`x = x0.detach().requires_grad_(True)`, `torch.zeros_like(t, requires_grad=True)`) and `g` is
computed, with gradients on, by torch arithmetic on `x` (`g += (x - x0) / sigma ** 2`), directly or
through local names; what a helper returns from `x` (`g = grad_fn(x)`) does not count by itself.

## Why it matters
With `create_graph=True` the gradient stored in `param.grad` is itself a graph-attached tensor, and
its graph refers back to the parameter (through the node that accumulates into it): a reference
cycle between the parameter and its gradient. PyTorch warns about it ("Using backward() with
create_graph=True will create a reference cycle between the parameter and its gradient which can
cause a memory leak. We recommend using autograd.grad when creating the graph to avoid this"):
the cycle runs through C++ objects that Python's garbage collector cannot see, so the graph — the
saved activations of the forward pass that made the gradient — lives until `.grad` is set back to
`None`. Gradients that are accumulated (or zeroed in place) instead of reset keep chaining: each
new gradient is added to the old one, graph and all, and memory grows every step. Even where the
loop resets the gradients (`optimizer.zero_grad()`, whose default is `set_to_none=True` since
PyTorch 2.0), each step's double-backward graph stays alive until that reset, next to the next
step's forward.

## Example
```python
for real, fake in batches:
    optimizer.zero_grad()
    mixed = (eps * real + (1 - eps) * fake).requires_grad_(True)
    out = critic(mixed)
    out.backward(torch.ones_like(out), create_graph=True)
    penalty = ((mixed.grad.flatten(1).norm(dim=1) - 1) ** 2).mean()
    (critic(fake).mean() - critic(real).mean() + 10 * penalty).backward()
    optimizer.step()
```

## Use instead
```python
for real, fake in batches:
    optimizer.zero_grad()
    mixed = (eps * real + (1 - eps) * fake).requires_grad_(True)
    out = critic(mixed)
    grad, = torch.autograd.grad(out, mixed, torch.ones_like(out), create_graph=True)
    penalty = ((grad.flatten(1).norm(dim=1) - 1) ** 2).mean()
    (critic(fake).mean() - critic(real).mean() + 10 * penalty).backward()
    optimizer.step()
```

## Fix safety
No automatic fix: `torch.autograd.grad` returns the gradients instead of storing them, so the code
that reads `.grad` afterwards has to change with it, and only the author knows which tensors the
gradients are wanted for. If `.backward()` must stay, pass `inputs=` (the tensors whose gradients
are needed) or set the parameters' `.grad` to `None` right after use.

## Known false positives
A flag that is not the literal `True` (`create_graph=second_order`, as timm passes for second-order
optimizers) is a runtime choice and not reported; neither is a call with `inputs=`, which only
fills the `.grad` of the tensors it names. A single call outside any loop or per-step function is
reported with medium confidence: it keeps one graph, not one per step. Code that sets every
parameter's `.grad` to `None` right after use breaks the cycle itself and is still reported;
suppress it with `# noqa: LL110`. For `x.grad = g` with `g` followed through the function's
names, a write to `g` later in a loop body counts even when the next iteration rebinds `g` before
the assignment (the names are followed without regard to order). On bench/realcode the rule reports nothing: the training code
there computes gradients of gradients with `torch.autograd.grad`.

## References
- "backward(create_graph=True) should raise a warning for potential memory leak", and the warning
  PyTorch added (the leak comes from the cycle between a parameter and its gradient):
  https://github.com/pytorch/pytorch/issues/4661
- "retain_graph = True out of memory issue", closed as a duplicate of the above with the advice to
  use `autograd.grad()`: https://github.com/pytorch/pytorch/issues/40005
- A WGAN-GP penalty computed with `backward(create_graph=True)`, replaced by `torch.autograd.grad`:
  https://github.com/akanimax/pro_gan_pytorch/pull/12
- `torch.Tensor.backward` (`create_graph`, and the note on the reference cycle):
  https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html
- Runtime repro: `leaklint verify LL110` measures the leaky and the fixed loop body.
"""

    VALID = (
        """
import torch
for real, fake in batches:
    mixed = (eps * real + (1 - eps) * fake).requires_grad_(True)
    out = critic(mixed)
    grad, = torch.autograd.grad(out, mixed, torch.ones_like(out), create_graph=True)
    penalty = ((grad.flatten(1).norm(dim=1) - 1) ** 2).mean()
    (critic(fake).mean() + 10 * penalty).backward()
""",
        # a runtime flag (second-order optimizers), and a backward limited to named inputs
        """
def step(loss, optimizer, second_order):
    loss.backward(create_graph=second_order)
    optimizer.step()

def penalty(critic, mixed):
    out = critic(mixed)
    out.sum().backward(create_graph=True, inputs=[mixed])
    return mixed.grad.norm()
""",
        # The same gradient computed under no_grad; and clipping .grad by hand (no graph)
        """
import torch
def langevin(score_model, x, steps=1000, step_size=1e-3):
    x = x.clone().requires_grad_(True)
    optimizer = torch.optim.SGD([x], lr=step_size)
    for _ in range(steps):
        optimizer.zero_grad()
        with torch.no_grad():
            gradient = -score_model(x) + 0.01 * x
        x.grad = gradient
        optimizer.step()
    return x.detach()
def manual_clip(model, batch):
    for p in model.parameters():
        if p.grad is not None:
            p.grad = p.grad.clamp(-1, 1)
score = torch.nn.Sequential(torch.nn.Linear(2, 64), torch.nn.SiLU(), torch.nn.Linear(64, 2))
samples = langevin(score, torch.randn(512, 2))
""",
        # A gradient computed from x.detach(): no graph reaches back to x
        """
import torch


def langevin(score_model, x, steps=1000, step_size=1e-3):
    x = x.clone().requires_grad_(True)
    optimizer = torch.optim.SGD([x], lr=step_size)
    for _ in range(steps):
        optimizer.zero_grad()
        x.grad = -score_model(x.detach()).detach()
        optimizer.step()
    return x.detach()


def langevin2(score_model, x, steps=1000, step_size=1e-3):
    x = x.clone().requires_grad_(True)
    optimizer = torch.optim.SGD([x], lr=step_size)
    for _ in range(steps):
        optimizer.zero_grad()
        x.grad = -score_model(x.detach())
        optimizer.step()
    return x.detach()


score = torch.nn.Sequential(torch.nn.Linear(2, 64), torch.nn.SiLU(), torch.nn.Linear(64, 2))
samples = langevin(score, torch.randn(512, 2))
samples = langevin2(score, torch.randn(512, 2))
""",
        # The same hand-written gradient from the leaf's values: detached, or under no_grad;
        # and a leaf only passed to a helper, whose result carries no graph of it
        """
import torch
def attack(loss_grad, image, steps=40, weight=1e-3):
    delta = torch.zeros_like(image, requires_grad=True)
    opt = torch.optim.SGD([delta], lr=0.01)
    for _ in range(steps):
        opt.zero_grad()
        step_grad = loss_grad(image + delta)
        step_grad = step_grad + 2 * weight * delta.detach()
        delta.grad = step_grad
        opt.step()
    return delta.detach()
def attack2(loss_grad, image, steps=40, weight=1e-3):
    delta = image.clone().requires_grad_()
    opt = torch.optim.SGD([delta], lr=0.01)
    for _ in range(steps):
        opt.zero_grad()
        with torch.no_grad():
            step_grad = loss_grad(delta) + 2 * weight * delta
        delta.grad = step_grad
        opt.step()
    return delta.detach()
""",
        # Hand-written gradients of a leaf that carry no graph of it: built from factories
        # (`zeros_like`, `randn_like`, `new_ones`), or assigned under no_grad
        """
import torch


def perturb(loss_grad, image, steps=40, weight=1e-3):
    delta = torch.zeros_like(image, requires_grad=True)
    opt = torch.optim.SGD([delta], lr=0.01)
    for _ in range(steps):
        opt.zero_grad()
        g = torch.zeros_like(delta)
        g += loss_grad(image + delta.detach())
        g = g + 1e-3 * torch.randn_like(delta)
        delta.grad = g * delta.new_ones(delta.shape)
        opt.step()
    return delta.detach()


def perturb_no_grad(loss_grad, image, steps=40, weight=1e-3):
    delta = torch.zeros_like(image, requires_grad=True)
    opt = torch.optim.SGD([delta], lr=0.01)
    for _ in range(steps):
        opt.zero_grad()
        g = loss_grad(image + delta.detach())
        with torch.no_grad():
            delta.grad = g + 2 * weight * delta
        opt.step()
    return delta.detach()
""",
    )
    INVALID = (
        """
import torch
for real, fake in batches:
    optimizer.zero_grad()
    mixed = (eps * real + (1 - eps) * fake).requires_grad_(True)
    out = critic(mixed)
    out.backward(torch.ones_like(out), create_graph=True)  # expect: LL110
    penalty = ((mixed.grad.flatten(1).norm(dim=1) - 1) ** 2).mean()
    (critic(fake).mean() + 10 * penalty).backward()
    optimizer.step()
""",
        """
import torch
def hessian_penalty(model, x):
    loss = model(x).pow(2).sum()
    torch.autograd.backward(loss, create_graph=True)  # expect: LL110
    return sum(p.grad.pow(2).sum() for p in model.parameters())
""",
        # A sampler that hands the optimizer a gradient it computed with autograd on, from x
        """
import torch
def langevin(score_model, x, steps=1000, step_size=1e-3):
    x = x.clone().requires_grad_(True)
    optimizer = torch.optim.SGD([x], lr=step_size)
    for _ in range(steps):
        optimizer.zero_grad()
        gradient = -score_model(x) + 0.01 * x
        x.grad = gradient  # expect: LL110
        optimizer.step()
        with torch.no_grad():
            x.add_(torch.randn_like(x), alpha=(2 * step_size) ** 0.5)
    return x.detach()
score = torch.nn.Sequential(torch.nn.Linear(2, 64), torch.nn.SiLU(), torch.nn.Linear(64, 2))
samples = langevin(score, torch.randn(512, 2))
""",
        # A perturbation whose gradient is written by hand from the attacked leaf itself
        """
import torch
def attack(loss_grad, image, steps=40, weight=1e-3):
    delta = torch.zeros_like(image, requires_grad=True)
    opt = torch.optim.SGD([delta], lr=0.01)
    for _ in range(steps):
        opt.zero_grad()
        step_grad = loss_grad(image + delta.detach())
        step_grad = step_grad + 2 * weight * delta
        delta.grad = step_grad  # expect: LL110
        opt.step()
    return delta.detach()
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """A gradient penalty on a critic's input read from `.grad` after `backward(create_graph=True)`,
        in a loop that accumulates gradients (never resets them to None), vs the same penalty from
        `torch.autograd.grad(..., create_graph=True)`."""

        def setup(self, ctx):
            import torch
            torch.manual_seed(0)
            ctx.critic = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.Tanh(), torch.nn.Linear(256, 1)).to(ctx.device)
            ctx.real = torch.randn(128, 64, device=ctx.device)

        def leaky(self, ctx):
            import torch
            mixed = ctx.real.clone().requires_grad_(True)
            out = ctx.critic(mixed)
            out.backward(torch.ones_like(out), create_graph=True)  # noqa: LL110 (the leaky variant)
            penalty = (mixed.grad.norm(dim=1) - 1).pow(2).mean()
            penalty.backward()

        def fixed(self, ctx):
            import torch
            mixed = ctx.real.clone().requires_grad_(True)
            out = ctx.critic(mixed)
            grad, = torch.autograd.grad(out, mixed, torch.ones_like(out), create_graph=True)
            penalty = (grad.norm(dim=1) - 1).pow(2).mean()
            penalty.backward()


# --- detection ------------------------------------------------------------------------------------
def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    per_step = None
    for call, fact in facts.index.statement_calls:
        if not (isinstance(call.func, (cst.Attribute, cst.Name)) and _callee_leaf(call.func) in _BACKWARD_LEAVES):
            continue
        if not _stores_graph_in_grad(call, facts):
            continue
        if per_step is None:
            per_step = per_step_functions(facts)
        repeats = bool(fact.loops) or fact.function in per_step
        chains = bool(fact.loops) and not _resets_grads(fact)
        target = backward_target(call, facts.imports)
        what = f"'{facts.describe(target)}'" if target is not None else "the output"
        where = "every iteration" if fact.loops else ("every call" if repeats else "here")
        yield Violation(
            node=call,
            message=(
                f"backward(create_graph=True) on {what} {where} stores gradients that carry their own graph "
                "in the .grad of every parameter it reaches: each parameter and its gradient then refer to "
                "each other, and the graph stays alive until .grad is set back to None"
                + ("; nothing in the loop resets them, so each step's gradient graph chains to the last" if chains else "")
            ),
            confidence=Confidence.HIGH if chains else Confidence.MEDIUM,
            statement=fact.line,
        )


    yield from _graph_assigned_to_grad(facts)


def _graph_assigned_to_grad(facts: ModuleFacts) -> Iterator[Violation]:
    """``x.grad = g`` with ``g`` a graph computed from ``x`` itself (a score or gradient built by
    hand with autograd on): the same cycle as ``backward(create_graph=True)``, written out."""
    for fact in facts.statements():
        node = fact.node
        if not isinstance(node, cst.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0].target
        if not (isinstance(target, cst.Attribute) and target.attr.value == "grad"):
            continue
        owner = dotted_name(target.value)
        value = facts.value(node.value)
        if owner is None or owner not in value.deps or owner in converted_names(node.value):
            continue  # `x.grad = -score(x.detach())`: computed from x's values, not its graph
        known_graph = value.is_graph and value.confidence is not Confidence.LOW
        if not known_graph and (fact.grad is GradMode.DISABLED or not _computed_from_leaf(node.value, owner, fact.function, facts)):
            continue  # (under no_grad, `x.grad = g + w * x` records nothing)
        where = "every iteration" if fact.loops else "here"
        yield Violation(
            node=node,
            message=(
                f"'{facts.describe(node.value)}' is assigned to '{owner}.grad' {where} with an autograd graph "
                f"computed from '{owner}' itself: the tensor and its gradient refer to each other, and the "
                "graph stays alive until .grad is set back to None"
            ),
            confidence=Confidence.MEDIUM,
            statement=node,
            help=f"assign a detached gradient: {owner}.grad = {_detached(facts.describe(node.value))}",
        )


def _computed_from_leaf(expr: cst.BaseExpression, owner: str, function: FunctionInfo, facts: ModuleFacts) -> bool:
    """``expr`` is computed, with gradients on, by torch arithmetic on ``owner`` itself, and the
    function made ``owner`` a leaf that requires grad (``x = x0.detach().requires_grad_(True)``):
    ``g += (x - x0) / s`` records a graph back to ``x`` even where leaklint knows nothing of ``g``'s
    other terms (a gradient an opaque helper returns)."""
    if owner not in _grad_leaves(function, facts):
        return False
    writes: dict[str, list[tuple[cst.BaseExpression, StatementFact]]] = {}
    for fact in facts.index.statements_of(function):
        node = fact.node
        if isinstance(node, cst.Assign) and len(node.targets) == 1:
            name = dotted_name(node.targets[0].target)
        elif isinstance(node, cst.AugAssign):
            name = dotted_name(node.target)
        else:
            continue
        if name is not None and name != owner:
            writes.setdefault(name, []).append((node.value, fact))
    return _reads_live(expr, owner, writes, facts, set())


def _reads_live(
    expr: cst.BaseExpression,
    owner: str,
    writes: dict[str, list[tuple[cst.BaseExpression, StatementFact]]],
    facts: ModuleFacts,
    seen: set[str],
) -> bool:
    """``owner`` is an operand of ``expr``, directly or through a local name that a statement run
    with gradients on computes from it (each name followed once)."""
    for name in _operands(expr, facts):
        if name == owner:
            return True
        if name in seen:
            continue
        seen.add(name)
        for value, fact in writes.get(name, ()):
            if fact.grad is not GradMode.DISABLED and _reads_live(value, owner, writes, facts, seen):
                return True
    return False


def _operands(expr: cst.BaseExpression, facts: ModuleFacts) -> Iterator[str]:
    """The names whose tensors ``expr`` computes with, so that autograd records them: operands of
    arithmetic, receivers of tensor methods, arguments of torch functions. Not what goes into a
    call of anything else (its result may carry no graph), nor a detached or converted read."""
    if isinstance(expr, (cst.Name, cst.Attribute)):
        if isinstance(expr, cst.Attribute) and expr.attr.value in _NO_GRAPH_ATTRIBUTES:
            return
        name = dotted_name(expr)
        if name is not None:
            yield name
    elif isinstance(expr, cst.BinaryOperation):
        yield from _operands(expr.left, facts)
        yield from _operands(expr.right, facts)
    elif isinstance(expr, cst.UnaryOperation):
        yield from _operands(expr.expression, facts)
    elif isinstance(expr, cst.Subscript):
        yield from _operands(expr.value, facts)
    elif isinstance(expr, cst.IfExp):
        yield from _operands(expr.body, facts)
        yield from _operands(expr.orelse, facts)
    elif isinstance(expr, cst.Call):
        qualified = facts.imports.resolve(expr.func)
        if qualified is not None:
            module, _, function = qualified.rpartition(".")
            if module in _TENSOR_MODULES and function not in _NO_GRAPH_FUNCTIONS:
                for arg in expr.args:
                    yield from _operands(arg.value, facts)
        elif isinstance(expr.func, cst.Attribute) and expr.func.attr.value not in _NO_GRAPH_METHODS:
            yield from _operands(expr.func.value, facts)


#: Reads that carry no graph: ``x.data``, ``x.shape``...
_NO_GRAPH_ATTRIBUTES = torch_api.NON_TENSOR_ATTRIBUTES | {"data", "grad"}
#: Methods whose result carries no graph of their receiver.
_NO_GRAPH_METHODS = (
    torch_api.TO_PYTHON_METHODS | torch_api.DETACH_METHODS | torch_api.NON_TENSOR_METHODS
    | torch_api.NO_GRAD_RESULT_METHODS | torch_api.NEW_TENSOR_METHODS
)
#: Torch functions whose result carries no graph of their arguments (``torch.zeros_like(x)``,
#: ``torch.argmax(x)``).
_NO_GRAPH_FUNCTIONS = torch_api.TENSOR_FACTORIES | torch_api.NO_GRAD_RESULT_METHODS
#: Modules whose functions compute tensors from their tensor arguments (``torch.sin(x)``).
_TENSOR_MODULES = frozenset({"torch", "torch.nn.functional", "torch.linalg", "torch.special"})


def _grad_leaves(function: FunctionInfo, facts: ModuleFacts) -> set[str]:
    """Names ``function`` makes leaves that require grad: ``x = t.detach().requires_grad_(True)``,
    ``x = torch.zeros(n, requires_grad=True)``, ``x.requires_grad_()``, ``x.requires_grad = True``."""
    leaves: set[str] = set()
    for fact in facts.index.statements_of(function):
        node = fact.node
        if isinstance(node, cst.Assign) and len(node.targets) == 1:
            target = node.targets[0].target
            name = dotted_name(target)
            if isinstance(target, cst.Attribute) and target.attr.value == "requires_grad" and _is_true(node.value):
                name = dotted_name(target.value)
            elif not (isinstance(node.value, cst.Call) and (_turns_on_grad(node.value) or keyword_is_true(node.value, "requires_grad"))):
                name = None
        elif isinstance(node, cst.Expr) and isinstance(node.value, cst.Call) and _turns_on_grad(node.value):
            name = dotted_name(node.value.func.value)  # type: ignore[attr-defined]
        else:
            name = None
        if name is not None:
            leaves.add(name)
    return leaves


def _turns_on_grad(call: cst.Call) -> bool:
    """``t.requires_grad_()`` / ``t.requires_grad_(True)``."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_"):
        return False
    return not call.args or _is_true(call.args[0].value)


def _is_true(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def _detached(expression: str) -> str:
    return f"{expression}.detach()" if expression.replace(".", "").isidentifier() else f"({expression}).detach()"


_BACKWARD_LEAVES = frozenset(torch_api.BACKWARD_METHODS | {"backward"})


def _callee_leaf(func: cst.BaseExpression) -> str:
    return func.attr.value if isinstance(func, cst.Attribute) else func.value  # type: ignore[attr-defined]


def _stores_graph_in_grad(call: cst.Call, facts: ModuleFacts) -> bool:
    """A backward (not ``torch.autograd.grad``) with a literal ``create_graph=True`` and no ``inputs=``."""
    if not keyword_is_true(call, "create_graph") or any(arg.keyword is not None and arg.keyword.value == "inputs" for arg in call.args):
        return False
    if backward_target(call, facts.imports) is None:
        return False
    qualified = facts.imports.resolve(call.func)
    if qualified is not None:
        return qualified == "torch.autograd.backward"
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in torch_api.BACKWARD_METHODS


def _resets_grads(fact: StatementFact) -> bool:
    """The loop around the call (or the function) sets the gradients back to None each time:
    ``zero_grad()`` (``set_to_none`` by default since PyTorch 2.0) or ``p.grad = None``."""
    region = fact.loops[0].node if fact.loops else fact.function.node
    if region is None:
        return False
    for node in walk(region):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "zero_grad":
            if not any(arg.keyword is not None and arg.keyword.value == "set_to_none" and not keyword_is_true(node, "set_to_none") for arg in node.args):
                return True
        if isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Attribute) and node.target.attr.value == "grad":
            return True
    return False
