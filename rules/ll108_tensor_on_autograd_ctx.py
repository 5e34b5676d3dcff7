"""LL108 tensor-on-autograd-ctx: a custom autograd Function keeps a tensor as an attribute of its
``ctx`` instead of passing it to ``ctx.save_for_backward``."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.calls import local_callee
from leaklint.analysis.names import dotted_name, names_read
from leaklint.analysis.provenance import StatementFact
from leaklint.analysis.structure import ClassInfo, FunctionInfo, bound_names
from leaklint.analysis import torch_api
from leaklint.analysis.torch_api import TORCH_CODE
from leaklint.analysis.values import Kind, Value
from leaklint.analysis.walk import not_into_scopes, walk
from leaklint.analysis.syntax import assignment_pairs
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names
from leaklint.rule import Measured, Rule, Violation

#: The methods of a custom Function that receive ``ctx`` and may stash tensors on it.
_CTX_METHODS = ("forward", "setup_context")


class TensorOnAutogradCtx(Rule):
    code = "LL108"
    name = "tensor-on-autograd-ctx"
    severity = Severity.LEAK
    summary = "A custom autograd Function keeps a tensor on ctx instead of saving it with ctx.save_for_backward."
    help = "pass the tensor to ctx.save_for_backward(...) and read it back from ctx.saved_tensors in backward"
    #: A custom Function subclasses torch.autograd.Function (or InplaceFunction...): the name is in the file.
    needs = TORCH_CODE & Names("Function", "InplaceFunction", "NestedIOFunction")
    autograd = True
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(0, 0, 2), leaks=(7, 0))
    docs = """
## What it finds
In the `forward` (or `setup_context`) of a class that subclasses `torch.autograd.Function`, an
assignment that keeps a tensor as an attribute of `ctx` (`ctx.out = out`, `ctx.noise = noise`,
`ctx.buffers = [a, b]`) instead of passing it to `ctx.save_for_backward(...)`. A tensor is what the
forward computes with torch (the forward runs with gradient recording off, so every tensor it
makes is known as one), or an output of the forward, whatever leaklint knows of how it was made
(`ctx.out = x.clone()` with `return ctx.out`: what forward returns is a tensor autograd wraps);
a tuple or list kept on ctx counts when it holds one of those (`ctx.cache = (x, index, out)`).
Numbers, shapes, flags and the parameters of the forward that leaklint cannot tell are tensors are
left alone (`ctx.scale = scale`, `ctx.shape = x.shape`, `ctx.inputs = (x, index)`), and so is an
input the forward returns as it is. A closure counts when it reads an output: `ctx.vjp_fn =
vjp_fn` where `new_pos, vjp_fn = sim.step(...)` and `step`, a function of the file (also a method
of the one class of the file whose objects the `Function.apply(...)` calls pass for `sim`),
returns `new_pos` next to a nested function that reads it. High confidence when the tensor is an
output of the forward (`ctx.out = out` with `return out`) or such a closure; medium for other
tensors the forward computes.

## Why it matters
`ctx` is the graph node of the call. A tensor passed to `save_for_backward` is released as soon
as `backward()` has used it; an attribute of `ctx` lives as long as the node, whatever backward
does. Two things follow. An output kept on `ctx` closes a reference cycle through C++ (output →
`grad_fn` → `ctx` → output) that Python's garbage collector cannot see: every call leaks its
output, and memory grows step after step even when nothing else keeps the result. Any other tensor
kept on `ctx` outlives the backward that needed it: whoever keeps the graph alive after the step
(a loss kept for logging, LL101 / LL105) keeps those tensors too, and nothing frees them early.
The PyTorch documentation of `save_for_backward` says why it exists: "to prevent incorrect
gradients and memory leaks".

## Example
```python
import torch

class ScaledNoise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        noise = torch.randn_like(x)
        out = x * noise
        ctx.noise = noise
        ctx.out = out
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.noise
```

## Use instead
```python
import torch

class ScaledNoise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        noise = torch.randn_like(x)
        ctx.save_for_backward(noise)
        return x * noise

    @staticmethod
    def backward(ctx, grad):
        (noise,) = ctx.saved_tensors
        return grad * noise
```

## Fix safety
No automatic fix: `save_for_backward` is called once with every tensor, and `backward` must read
them back from `ctx.saved_tensors` in the same order; that is an edit of two methods.

## Known false positives
A workspace the forward keeps on `ctx` on purpose (detectron2's deformable convolution keeps
`ctx.bufs_ = [input.new_empty(0), ...]`, which its C++ kernels resize in place and its backward
reuses) is reported like any other tensor; the memory is really held until the graph dies, but
`save_for_backward` is no fix there (the in-place resize would trip its version check): `del
ctx.bufs_` at the end of `backward` is. Those are the only findings on bench/realcode (judged
debatable). An attribute that `backward` deletes (`del ctx.next_state`) or sets to `None` is not
reported at the default confidence: once backward has run, ctx lets go of it and the cycle is
broken. It still holds the tensor until then, and an output kept so leaks for good on every call
whose backward never runs (a reversible block under an exit head that is monitored but not in the
loss, a forward in evaluation without `no_grad`: RevTorch#1); whether that happens is a question of
the whole program, so such an output is reported with low confidence. Parameters of `forward` are not reported unless leaklint can tell they are tensors, so
`ctx.x = x` with an input `x` is missed, and so is anything a helper of unknown kind returns
(`ctx.stride = _pair(stride)`, `ctx.inputs = list(args)`): only what torch computes in the forward
counts.

## References
- PyTorch documentation of `FunctionCtx.save_for_backward`: "All tensors intended to be used in the
  backward pass should be saved with save_for_backward (as opposed to directly on ctx) to prevent
  incorrect gradients and memory leaks":
  https://pytorch.org/docs/stable/generated/torch.autograd.function.FunctionCtx.save_for_backward.html
- Pyro's multivariate normal sampling Function kept its intermediate tensors on ctx:
  https://github.com/pyro-ppl/pyro/pull/1049
- SRU's custom op kept its cell states on ctx, moved to save_for_backward:
  https://github.com/asappresearch/sru/pull/171
- PyTorch, "torch.autograd.Function memory leak" (a copy of the input kept on ctx and returned):
  https://github.com/pytorch/pytorch/issues/5569, and "autograd contexts not being garbage
  collected when assigned output Tensors as attributes": https://github.com/pytorch/pytorch/issues/25340
- Runtime repro: `leaklint verify LL108` measures the leaky and the fixed loop body.
"""

    VALID = (
        # kept on ctx, but let go of by backward: the cycle ends when the step is differentiated
        # (shown with low confidence: a call whose backward never runs keeps it)
        """
import torch

class SimStep(torch.autograd.Function):
    @staticmethod
    def forward(ctx, action, pos, vel):
        new_pos = pos + vel * 0.01
        new_vel = vel + action * 0.01
        ctx.next_state = (new_pos, new_vel)
        return new_pos, new_vel

    @staticmethod
    def backward(ctx, g_pos, g_vel):
        del ctx.next_state
        return g_vel * 0.01, g_pos, g_pos * 0.01 + g_vel
""",
        """
import torch

class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        ctx.shape = x.shape
        ctx.with_bias = scale is not None
        ctx.save_for_backward(x)
        return x * scale

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        ctx.cached = grad * 2
        return grad * ctx.scale, None
""",
        # Inputs (of unknown kind) kept in a tuple, and an input returned as it is: no tensor the
        # forward made, no output kept.
        """
import torch

class Gather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, src, index, dim):
        ctx.backward_cache = (index, dim)
        ctx.save_for_backward(src)
        return src.gather(dim, index)

    @staticmethod
    def backward(ctx, grad):
        index, dim = ctx.backward_cache
        (src,) = ctx.saved_tensors
        return torch.zeros_like(src).scatter_add_(dim, index, grad), None, None

class Passthrough(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.x = x
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad
""",
        # not a custom Function: an object that happens to have a ctx attribute
        """
import torch

class Helper:
    def forward(self, ctx, x):
        ctx.out = torch.relu(x)
        return ctx.out
""",
        # A closure the helper builds over its input only, and one over the output that backward
        # deletes: neither keeps an output alive from ctx after backward
        """
import torch

class Renderer:
    def shade(self, albedo):
        image = albedo.clamp(min=0) ** 2.2
        scale = albedo.clamp(min=1e-6)

        def pullback(grad):
            return grad * 2.2 / scale

        def exact(grad):
            return grad * 2.2 * image / scale

        return image, pullback, exact


class Shade(torch.autograd.Function):
    @staticmethod
    def forward(ctx, renderer, albedo):
        image, pullback, exact = renderer.shade(albedo.detach())
        ctx.pullback = pullback
        ctx.exact = exact
        return image

    @staticmethod
    def backward(ctx, grad):
        out = ctx.exact(grad)
        del ctx.exact
        return None, out


renderer = Renderer()
for albedo in batches:
    Shade.apply(renderer, albedo).mean().backward()
""",
        # A closure kept on ctx whose own local has the output's name: it reads the input only
        """
import torch


class Renderer:
    def shade(self, albedo):
        image = albedo.clamp(min=0) ** 2.2

        def pullback(grad):
            scaled = grad * 2.2
            image = scaled
            return image / albedo.clamp(min=1e-6)

        return image, pullback


class Shade(torch.autograd.Function):
    @staticmethod
    def forward(ctx, renderer, albedo):
        image, pullback = renderer.shade(albedo.detach())
        ctx.pullback = pullback
        return image

    @staticmethod
    def backward(ctx, grad):
        return None, ctx.pullback(grad)


renderer = Renderer()
for albedo in loader:
    Shade.apply(renderer, albedo).mean().backward()
""",
    )
    INVALID = (
        # An output made from an input (leaklint cannot tell the input is a tensor, but forward
        # returns it); a tuple on ctx that holds the output.
        """
import torch

class FeatureCopy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, features, weight):
        ctx.output_features = features.clone()  # expect: LL108
        return ctx.output_features

    @staticmethod
    def backward(ctx, grad):
        return grad, None

class ScatterTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, feats, index, size):
        out = torch.tanh(feats.new_zeros(size, feats.shape[1]).index_add_(0, index, feats))
        ctx.cache = (feats, index, out)  # expect: LL108
        return out

    @staticmethod
    def backward(ctx, grad):
        feats, index, out = ctx.cache
        return (grad * (1 - out ** 2))[index], None, None
""",
        """
import torch
from torch.autograd import Function

class ScaledNoise(Function):
    @staticmethod
    def forward(ctx, x):
        noise = torch.randn_like(x)
        out = x * noise
        ctx.noise = noise  # expect: LL108
        ctx.out = out  # expect: LL108
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.noise
""",
        """
import torch

class Recurrence(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, x):
        c = torch.empty_like(x)
        ctx.save_for_backward(u, x)
        ctx.states = c  # expect: LL108
        ctx.buffers = [x.new_zeros(0), x.new_zeros(0)]  # expect: LL108
        h = torch.tanh(c)
        ctx.h = h  # expect: LL108
        return h, c[-1]

    @staticmethod
    def backward(ctx, grad_h, grad_last):
        return grad_h, grad_h
""",
        # A closure over the output, built by a helper of the file that returns both: the
        # closure kept on ctx keeps the output, whose graph node is this ctx
        """
import torch

class Renderer:
    def __init__(self, gamma):
        self.gamma = gamma

    def shade(self, albedo):
        image = albedo.clamp(min=0) ** self.gamma

        def pullback(grad):
            return grad * self.gamma * image / albedo.clamp(min=1e-6)

        return image, pullback


class Shade(torch.autograd.Function):
    @staticmethod
    def forward(ctx, renderer, albedo):
        image, pullback = renderer.shade(albedo.detach())
        ctx.pullback = pullback  # expect: LL108
        return image

    @staticmethod
    def backward(ctx, grad):
        return None, ctx.pullback(grad)


renderer = Renderer(2.2)
for albedo in batches:
    Shade.apply(renderer, albedo).mean().backward()
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """A custom Function that keeps its output on ctx (a reference cycle through the graph
        node) vs one that saves it with save_for_backward."""

        def setup(self, ctx):
            import torch

            class KeepsOutput(torch.autograd.Function):
                @staticmethod
                def forward(fctx, x):
                    y = x * 2
                    fctx.y = y  # noqa: LL108 (the leaky variant)
                    return y

                @staticmethod
                def backward(fctx, grad):
                    return grad * 2

            class SavesOutput(torch.autograd.Function):
                @staticmethod
                def forward(fctx, x):
                    y = x * 2
                    fctx.save_for_backward(y)
                    return y

                @staticmethod
                def backward(fctx, grad):
                    return grad * 2

            ctx.leaky_fn, ctx.fixed_fn = KeepsOutput, SavesOutput
            ctx.x = torch.randn(256, 256, device=ctx.device, requires_grad=True)

        def leaky(self, ctx):
            ctx.leaky_fn.apply(ctx.x).sum().backward()

        def fixed(self, ctx):
            ctx.fixed_fn.apply(ctx.x).sum().backward()


# --- detection ------------------------------------------------------------------------------------
def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    for info in facts.structure.functions.values():
        cls = info.cls
        if cls is None or not info.is_method or info.name not in _CTX_METHODS or not cls.is_autograd_function:
            continue
        if not info.params:
            continue
        ctx_name = info.params[0]
        outputs = _output_names(info, facts)
        freed = _freed_in_backward(cls)
        for fact in facts.index.statements_of(info):
            yield from _ctx_stores(facts, fact, ctx_name, outputs, info, freed)


def _freed_in_backward(cls: ClassInfo) -> frozenset[str]:
    """Attributes the Function's ``backward`` lets go of (``del ctx.next_state``, ``ctx.cache =
    None``): once backward has run, ctx no longer keeps them, so the cycle is broken."""
    backward = cls.find_method("backward")
    if backward is None or not backward.params.params:
        return frozenset()
    ctx = backward.params.params[0].name.value
    freed: set[str] = set()
    for node in walk(backward.body, into=not_into_scopes):
        if isinstance(node, cst.Del):
            targets = [element.value for element in node.target.elements] if isinstance(node.target, cst.Tuple) else [node.target]
        elif isinstance(node, cst.Assign) and isinstance(node.value, cst.Name) and node.value.value == "None":
            targets = [target.target for target in node.targets]
        else:
            continue
        for target in targets:
            name = dotted_name(target)
            if name is not None and name.startswith(ctx + ".") and name.count(".") == 1:
                freed.add(name.split(".", 1)[1])
    return frozenset(freed)


def _ctx_stores(
    facts: ModuleFacts, fact: StatementFact, ctx_name: str, outputs: set[str], info: FunctionInfo, freed: frozenset[str] = frozenset()
) -> Iterator[Violation]:
    node = fact.node
    if not isinstance(node, cst.Assign):
        return
    for target in node.targets:
        for slot, expr in assignment_pairs(target.target, node.value):
            name = dotted_name(slot)
            if name is None or not name.startswith(ctx_name + ".") or name.count(".") != 1:
                continue
            let_go = name.split(".", 1)[1] in freed
            returned = (
                _mentions(expr, outputs)
                or name in outputs
                or (info.name == "setup_context" and _mentions(expr, set(info.params[2:3])))
            )
            computed = any(_is_tensor(facts.value(part)) and _made_by_torch(part, info, facts, 0) for part in _parts(expr))
            # What forward returns is a tensor whatever leaklint knows of how it was made (autograd
            # wraps it as the Function's output): kept on ctx, it closes the cycle.
            closure = not computed and not returned and _closure_over_output(expr, info, facts, outputs)
            if not computed and not closure and not (returned and facts.value(expr).kind is not Kind.NOT_TENSOR):
                continue
            returned = returned or closure
            if let_go and not returned:
                continue  # backward lets go of it, and it closes no cycle: held only while the graph is
            # An output that backward deletes still closes the cycle until backward runs, and a
            # backward that never runs (an output that does not reach the loss, a forward outside
            # no_grad in evaluation) leaves it closed for good: whether that happens is a question
            # of the whole program, so low confidence.
            confidence = Confidence.LOW if let_go else Confidence.HIGH if returned else Confidence.MEDIUM
            what = "a closure over an output of forward" if closure else "an output of forward" if returned else "a tensor"
            if isinstance(expr, (cst.Tuple, cst.List)):
                what = f"holding {what}"
            yield Violation(
                node=node,
                message=(
                    f"'{facts.describe(expr)}' ({what}) is kept as '{name}' on the autograd ctx instead of "
                    "ctx.save_for_backward(); "
                    + (
                        "backward deletes it, but until backward runs the output, its graph node and the ctx form "
                        "a reference cycle the garbage collector cannot free: every call whose backward never runs "
                        "(an output that does not reach the loss, a forward in evaluation without no_grad) leaks it"
                        if let_go
                        else "the output, its graph node and the ctx form a reference cycle the garbage collector "
                        "cannot free, so every call leaks it"
                        if returned
                        else "backward does not free it: it lives as long as anything keeps the graph"
                    )
                ),
                confidence=confidence,
                statement=fact.line,
                help=f"delete it at the end of backward (del {name}), or save the tensors it needs with ctx.save_for_backward()" if closure else None,
            )
            return


def _closure_over_output(expr: cst.BaseExpression, info: FunctionInfo, facts: ModuleFacts, outputs: set[str]) -> bool:
    """``ctx.vjp_fn = vjp_fn`` where ``reward, new_pos, vjp_fn = sim.step(...)`` and ``step`` is a
    function of the file that returns, next to ``new_pos``, a nested function reading it: the
    closure keeps an output of forward alive from ctx, the same cycle as keeping the output."""
    if not isinstance(expr, cst.Name) or not outputs:
        return False
    for fact in facts.index.statements_of(info):
        node = fact.node
        if not (isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.value, cst.Call)):
            continue
        target = node.targets[0].target
        if not isinstance(target, (cst.Tuple, cst.List)):
            continue
        names = [dotted_name(element.value) for element in target.elements]
        if expr.value not in names:
            continue
        helper = _helper(node.value, info, facts)
        if helper is None or helper.node is None:
            continue
        for returned in _returned_tuples(helper.node):
            if len(returned) != len(names):
                continue
            captured = _captured(returned[names.index(expr.value)], helper, facts)
            if any(name in captured and names[index] in outputs for index, name in enumerate(returned)):
                return True
    return False


def _helper(call: cst.Call, info: FunctionInfo, facts: ModuleFacts) -> FunctionInfo | None:
    """The function of the file ``call`` runs: a local callee, or a method of the one class of the
    file whose objects every ``Function.apply(...)`` call of the file passes for the receiver, a
    parameter of forward (``sim.step(...)`` with ``SimStep.apply(sim, ...)``)."""
    callee = local_callee(call, info, facts)
    if callee is not None or not isinstance(call.func, cst.Attribute) or info.cls is None:
        return callee
    receiver = dotted_name(call.func.value)
    if receiver not in info.params[1:]:
        return None
    position = info.params.index(receiver) - 1  # apply(...) passes no ctx
    classes = set()
    for place in facts.index.calls_named("apply"):
        apply = place.node
        if not (isinstance(apply.func, cst.Attribute) and dotted_name(apply.func.value) == info.cls.name):  # type: ignore[attr-defined]
            continue
        args = apply.args  # type: ignore[attr-defined]
        if position >= len(args) or args[position].keyword is not None or args[position].star:
            return None
        classes.add(facts.value(args[position].value).cls)
    if len(classes) != 1:
        return None
    cls = classes.pop()
    method = cls.find_method(call.func.attr.value) if isinstance(cls, ClassInfo) else None
    return facts.structure.functions.get(method) if method is not None else None


def _returned_tuples(function: cst.FunctionDef) -> Iterator[list[str | None]]:
    """The names of each ``return a, b, c`` of ``function``, element by element."""
    for node in walk(function.body, into=not_into_scopes):
        if isinstance(node, cst.Return) and isinstance(node.value, (cst.Tuple, cst.List)):
            yield [dotted_name(element.value) for element in node.value.elements]


def _captured(name: str | None, helper: FunctionInfo, facts: ModuleFacts) -> set[str]:
    """The local names of ``helper`` that its nested function ``name`` reads (its free names)."""
    nested = facts.structure.nested_functions.get((helper, name)) if name is not None else None
    if nested is None or helper.node is None:
        return set()
    own = {param.name.value for param in (*nested.params.posonly_params, *nested.params.params, *nested.params.kwonly_params)}
    # names the nested function binds itself are its own locals, not the helper's
    own |= {bound for node in walk(nested.body, into=not_into_scopes) if isinstance(node, cst.AssignTarget) for bound in bound_names(node.target)}
    locals_ = {bound for node in walk(helper.node.body, into=not_into_scopes) if isinstance(node, cst.AssignTarget) for bound in bound_names(node.target)}
    return (names_read(nested.body) - own) & locals_


def _parts(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """``expr`` and, for a literal tuple or list (``ctx.cache = (x, weight, out)``), each of its
    elements: a container kept on ctx keeps every tensor in it, whatever the other elements are."""
    parts = [expr]
    if isinstance(expr, (cst.Tuple, cst.List)):
        parts.extend(element.value for element in expr.elements if not isinstance(element, cst.StarredElement))
    return parts


def _is_tensor(value: Value) -> bool:
    """A tensor (or a container of tensors) the forward computed: it runs with recording off,
    so torch's results there are known tensors without history."""
    return value.role is None and value.kind in (Kind.DETACHED, Kind.GRAPH)


#: Modules whose public functions compute tensors (``torch.matmul``, ``F.softplus``).
_TENSOR_MODULES = frozenset({"torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special"})
_MAX_DEPTH = 8


def _made_by_torch(expr: cst.BaseExpression, info: FunctionInfo, facts: ModuleFacts, depth: int) -> bool:
    """``expr`` is a tensor the forward computes: a torch operation (``torch.randn_like(x)``,
    ``torch.matmul(a, b)``, ``x.new_zeros(n)``), arithmetic, a comparison, a method or an index of
    such a tensor, a list of them, or a local name only ever bound to one. A parameter of the
    forward, or what a helper of unknown kind returns (``_pair(stride)``), is not known to be one."""
    if depth > _MAX_DEPTH:
        return False
    again = lambda e: _made_by_torch(e, info, facts, depth + 1)  # noqa: E731
    if isinstance(expr, cst.Name):
        if expr.value in info.params:
            return False
        values = facts.index.assigned_values(info, expr.value)
        return bool(values) and all(again(value) for value in values)
    if isinstance(expr, cst.Call):
        qualified = facts.imports.resolve(expr.func)
        if qualified is not None:
            module, _, name = qualified.rpartition(".")
            return module in _TENSOR_MODULES and not name.startswith("_") and qualified not in torch_api.NO_GRAD_RESULT_FUNCTIONS - {f"torch.{n}" for n in torch_api.NO_GRAD_RESULT_METHODS}
        if isinstance(expr.func, cst.Attribute):
            method = expr.func.attr.value
            if method in torch_api.NEW_TENSOR_METHODS:
                return True
            if method in torch_api.TO_PYTHON_METHODS or method in torch_api.NON_TENSOR_METHODS:
                return False
            return again(expr.func.value)
        return False
    if isinstance(expr, cst.BinaryOperation):
        return again(expr.left) or again(expr.right)
    if isinstance(expr, cst.Comparison):
        return again(expr.left) or any(again(c.comparator) for c in expr.comparisons)
    if isinstance(expr, cst.UnaryOperation):
        return again(expr.expression)
    if isinstance(expr, cst.Subscript):
        return again(expr.value)
    if isinstance(expr, (cst.List, cst.Tuple)):
        return bool(expr.elements) and all(again(element.value) for element in expr.elements)
    return False


def _output_names(info: FunctionInfo, facts: ModuleFacts) -> set[str]:
    """Names the forward returns as they are (``return out`` / ``return out, aux`` /
    ``return ctx.out``): outputs of the Function. (A part or a view of a tensor, ``c[-1]``, is an
    output of its own.) An input returned as it is (never rebound) is left out: autograd hands
    back a new alias of it, and the input kept on ctx closes no cycle."""
    names: set[str] = set()
    assert info.node is not None
    for node in walk(info.node.body, into=not_into_scopes):
        if isinstance(node, cst.Return) and node.value is not None:
            value = node.value
            parts = [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else [value]
            names.update(name for name in map(dotted_name, parts) if name is not None)
    return {name for name in names if name not in info.params or facts.index.assigned_values(info, name)}


def _mentions(expr: cst.BaseExpression, names: set[str]) -> bool:
    if not names:
        return False
    if isinstance(expr, (cst.Tuple, cst.List)):
        return any(_mentions(element.value, names) for element in expr.elements)
    return dotted_name(expr) in names
