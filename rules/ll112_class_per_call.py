"""LL112 class-per-call: an ``autograd.Function`` class defined inside a function, anew on every call."""

from __future__ import annotations

import ast
from typing import Iterator

import libcst as cst

from leaklint.analysis.calls import call_graph
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import names_read
from leaklint.analysis.steps import per_step_functions
from leaklint.analysis.structure import FunctionInfo, names_bound_in
from leaklint.analysis.torch_api import AUTOGRAD_FUNCTION_BASES, TORCH_CODE
from leaklint.analysis.walk import children, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names, Syntax
from leaklint.rule import Measured, Rule, Violation

_CAPTURED_SHOWN = 4


class ClassPerCall(Rule):
    code = "LL112"
    name = "class-per-call"
    severity = Severity.LEAK
    summary = (
        "An autograd.Function class is defined inside a function, so every call creates a new class "
        "that only the garbage collector frees, with the tensors it closes over."
    )
    help = (
        "define the autograd.Function once, at module level, and hand it what backward needs through "
        "ctx.save_for_backward(...) instead of closing over the caller's tensors"
    )
    needs = TORCH_CODE & Names("Function", "InplaceFunction") & Syntax(ast.ClassDef) & Syntax(ast.FunctionDef, ast.AsyncFunctionDef)
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(0, 0, 0), leaks=(1, 0))
    docs = """
## What it finds
A `class ...(torch.autograd.Function)` statement inside a function body whose class is only used
inside the call (`MyFn.apply(...)`): not returned, not stored in a cache, a container or an
attribute, not passed on. Every call of the function defines a new class. The confidence is high
when the function runs once per step (a loop in the file calls it, or it is a per-step method) and
the class's methods close over the function's locals (tensors captured instead of saved through
`ctx`), medium when only one of the two holds, low otherwise.

## Why it matters
A class is never freed by reference counting: it refers to itself (through its method resolution
order and its `__dict__`), and an `autograd.Function` subclass also builds a backward class that
refers back to it. Each one waits for Python's cyclic garbage collector, and with it everything its
methods close over: the tensors of the call that defined it (a cost matrix, the inputs, a transport
plan), typically on the GPU. The collector runs when Python objects pile up, not when GPU memory
does, and a class that was alive during a collection (the graph of the step referred to it) moves to
an older generation that is collected rarely: one call per training step leaves a trail of classes
and their tensors, and GPU memory grows until the process runs out of it.

## Example
```python
def emd2_torch(a, b, M):
    G = torch.from_numpy(ot.emd(a.numpy(), b.numpy(), M.detach().numpy()))
    cost = (G * M).sum()

    class ValFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a_, b_, M_):
            return cost.detach()

        @staticmethod
        def backward(ctx, grad_output):
            return None, None, grad_output * G

    return ValFunction.apply(a, b, M)
```

## Use instead
```python
class EMD2(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, M):
        G = torch.from_numpy(ot.emd(a.numpy(), b.numpy(), M.detach().numpy()))
        ctx.save_for_backward(G)
        return (G * M).sum()

    @staticmethod
    def backward(ctx, grad_output):
        G, = ctx.saved_tensors
        return None, None, grad_output * G


def emd2_torch(a, b, M):
    return EMD2.apply(a, b, M)
```

## Fix safety
No automatic fix: moving the class out of the function means passing what it closes over through
`forward`'s arguments and `ctx.save_for_backward`, which changes its code.

## Known false positives
A class that leaves the function is a factory's product and is not reported: returned, kept in a
cache (StyleGAN2-ADA's `_bias_act_cuda` defines its CUDA `Function` once per configuration and
stores it in a module-level dict), stored on an object or passed to another call. A function called
only a few times (set-up code) defines only a few classes; the rule cannot always tell, and reports
it with low confidence when nothing in the file shows it repeating and the class closes over nothing.
On bench/realcode the rule reports nothing: the `autograd.Function` classes defined inside
functions there leave them (StyleGAN2-ADA's and stylegan2-pytorch's cached CUDA ops and
`conv2d_gradfix`, LLaMA-Factory's returned Unsloth checkpointing function).

## References
- POT's `emd2` defined its `autograd.Function` inside the function and leaked GPU memory on every
  call; the fix moved the class to module level: https://github.com/PythonOT/POT/pull/254
- `torch.autograd.Function`, and saving tensors for backward with `ctx.save_for_backward`:
  https://pytorch.org/docs/stable/notes/extending.html
- Python's `gc` module (classes are collected by the cyclic collector, in generations):
  https://docs.python.org/3/library/gc.html
- Runtime repro: `leaklint verify LL112` measures the leaky and the fixed loop body.
"""

    VALID = (
        """
import torch

class Clamp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(0, 1)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * ((x > 0) & (x < 1))

def clamp(x):
    return Clamp.apply(x)
""",
        # a factory whose classes are cached: defined once per configuration
        """
import torch
_cache = {}

def _make_op(kind):
    if kind in _cache:
        return _cache[kind]

    class Op(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    _cache[kind] = Op
    return Op
""",
    )
    INVALID = (
        """
import torch

def emd2(a, b, M):
    G = solve(a, b, M)
    cost = (G * M).sum()

    class ValFunction(torch.autograd.Function):  # expect: LL112
        @staticmethod
        def forward(ctx, a_, b_, M_):
            return cost.detach()

        @staticmethod
        def backward(ctx, grad_output):
            return None, None, grad_output * G

    return ValFunction.apply(a, b, M)

for step in range(steps):
    loss = emd2(p, q, cost_matrix(model(x)))
    loss.backward()
""",
        """
from torch.autograd import Function

class Model:
    def forward(self, x):
        class Scale(Function):  # expect: LL112
            @staticmethod
            def forward(ctx, y):
                return y * 2

            @staticmethod
            def backward(ctx, grad):
                return grad * 2

        return Scale.apply(x)
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """A loss whose `autograd.Function` is defined inside the step, closing over a transport plan,
        vs the same Function defined once with the plan saved through `ctx` (each step's classes wait
        for the cyclic garbage collector, their plans with them)."""

        def setup(self, ctx):
            import torch
            torch.manual_seed(0)
            ctx.weights = torch.randn(256, 256, device=ctx.device, requires_grad=True)

            class Transport(torch.autograd.Function):
                @staticmethod
                def forward(fn_ctx, cost, plan):
                    fn_ctx.save_for_backward(plan)
                    return (plan * cost).sum()

                @staticmethod
                def backward(fn_ctx, grad):
                    plan, = fn_ctx.saved_tensors
                    return grad * plan, None

            ctx.transport = Transport

        def leaky(self, ctx):
            import torch
            cost = ctx.weights.pow(2)
            plan = torch.rand(256, 256, device=ctx.device)

            class Transport(torch.autograd.Function):  # noqa: LL112 (the leaky variant)
                @staticmethod
                def forward(fn_ctx, cost_):
                    return (plan * cost_).sum().detach()

                @staticmethod
                def backward(fn_ctx, grad):
                    return grad * plan

            Transport.apply(cost).backward()

        def fixed(self, ctx):
            import torch
            cost = ctx.weights.pow(2)
            plan = torch.rand(256, 256, device=ctx.device)
            ctx.transport.apply(cost, plan).backward()


# --- detection ------------------------------------------------------------------------------------
def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    functions_classes = {cls.node for cls in facts.structure.classes.values() if _is_autograd_function(cls.node, facts)}
    if not functions_classes:
        return
    per_step = None
    called_in_loops = None
    for function in facts.structure.functions.values():
        if function.node is None:
            continue
        for cls in _classes_defined_in(function.node):
            if cls not in functions_classes or _escapes(cls.name.value, function.node, cls):
                continue
            if per_step is None:
                per_step = per_step_functions(facts)
                called_in_loops = {callee for _, fact, callee in call_graph(facts).resolved if callee is not None and fact.loops}
            captured = _captured(cls, function)
            repeats = function in per_step or function in called_in_loops  # type: ignore[operator]
            confidence = Confidence.HIGH if repeats and captured else Confidence.MEDIUM if repeats or captured else Confidence.LOW
            keeps = (
                f"its methods keep this call's {', '.join(repr(n) for n in captured[:_CAPTURED_SHOWN])}"
                f"{' and more' if len(captured) > _CAPTURED_SHOWN else ''} alive with it"
                if captured
                else "it waits for the garbage collector like any class"
            )
            how_often = " (it runs every step)" if repeats else ""
            yield Violation(
                node=cls,
                message=(
                    f"'{cls.name.value}' (an autograd.Function) is defined anew on every call of '{function.name}'"
                    f"{how_often}: each class is a reference cycle that only Python's garbage collector frees, and "
                    f"{keeps}, so memory piles up between collections"
                ),
                confidence=confidence,
            )


def _classes_defined_in(function: cst.FunctionDef) -> Iterator[cst.ClassDef]:
    """Classes defined in ``function``'s own body (not in its nested functions)."""
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.ClassDef):
            yield node
            continue
        if isinstance(node, (cst.FunctionDef, cst.Lambda)):
            continue
        stack.extend(children(node))


def _is_autograd_function(cls: cst.ClassDef, facts: ModuleFacts) -> bool:
    return any(facts.imports.resolve(base.value) in AUTOGRAD_FUNCTION_BASES for base in cls.bases if base.keyword is None)


def _escapes(name: str, function: cst.FunctionDef, cls: cst.ClassDef) -> bool:
    """The class object leaves the call: any use of its name other than ``Name.apply(...)`` in the
    function's own body (returned, stored, passed, subclassed), or any use inside another nested
    function or class (a closure that may outlive the call keeps it)."""
    stack: list[tuple[cst.CSTNode, bool]] = [(function.body, False)]
    while stack:
        node, nested = stack.pop()
        if node is cls:
            continue
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == name:
            if nested or node.attr.value != "apply":
                return True
            continue
        if isinstance(node, cst.Name) and node.value == name:
            return True
        inner = nested or isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef))
        stack.extend((child, inner) for child in children(node))
    return False


def _captured(cls: cst.ClassDef, function: FunctionInfo) -> list[str]:
    """The enclosing function's locals (parameters included) that the class's body reads."""
    assert function.node is not None
    local = set(function.params) | {name for name in names_bound_in(function.node.body) if "." not in name}
    local.discard(cls.name.value)
    bound_inside = {name for name in names_bound_in(cls) if "." not in name}
    for node in walk(cls):
        if isinstance(node, cst.FunctionDef):
            params = node.params
            bound_inside |= {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    read = {name for name in names_read(cls.body) if "." not in name}
    for node in walk(cls.body):
        if isinstance(node, cst.FunctionDef):
            read |= {name for name in names_read(node.body) if "." not in name}
    return sorted(read & local - bound_inside)

