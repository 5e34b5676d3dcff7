"""LL106 hook-registered-in-loop: a hook registered every iteration and never removed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

import libcst as cst

from leaklint.analysis.calls import call_graph
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.hooks import HookKind, HookRegistration, hook_registrations
from leaklint.analysis.names import dotted_name, dotted_names_in
from leaklint.analysis.provenance import StatementFact
from leaklint.analysis.steps import per_step_functions
from leaklint.analysis.structure import ClassInfo, FunctionInfo, LoopInfo, bound_names
from leaklint.analysis.syntax import root_name, subscript_base
from leaklint.analysis.torch_api import GLOBAL_HOOK_FUNCTIONS, HOOK_METHODS, TORCH_CODE
from leaklint.analysis.walk import calls_in, not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names, Words
from leaklint.rule import Measured, Rule, Violation


class HookRegisteredInLoop(Rule):
    code = "LL106"
    name = "hook-registered-in-loop"
    severity = Severity.LEAK
    summary = "A module or parameter hook is registered on every iteration and its handle is never removed."
    help = "register the hook once before the loop, or call handle.remove() before the iteration ends"
    needs = TORCH_CODE & (Names(*HOOK_METHODS, *GLOBAL_HOOK_FUNCTIONS) | Words("grad_cam"))
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(0, 0, 0), leaks=(2, 0))
    docs = """
## What it finds
A call to `register_forward_hook`, `register_forward_pre_hook`, `register_full_backward_hook`,
`register_backward_hook`, `Tensor.register_hook` or `register_module_forward_hook` (and the other
global `register_module_*` hooks) that runs on every iteration of a training or evaluation loop, or
in a function that runs once per iteration (`forward`, `training_step`, a helper called from such a
loop in the same file), on a module or tensor that outlives the iteration, when the returned handle is
not removed in that iteration: it is discarded, kept in a name that the next iteration overwrites,
or appended to a list whose handles are only removed after the loop (or never).

It also finds an object whose class registers hooks in `__init__` (a Grad-CAM or feature-extractor
helper defined in the file, or a `pytorch_grad_cam` CAM class) constructed inside such a loop
without being used as a context manager or having a `remove`/`release`/`close` method called on
it in the same iteration. For a class of the file, the finding is on the registration in the
class (the line that keeps adding hooks, where the handle must be kept and removed), and the
message names where the object is built; a library's class is reported where it is built.

A loop counts by what it does, not only by its names: one that trains, reads a data loader or
counts steps (high confidence), or one whose body runs the model (a forward, a backward, or a
function of the file that does) on something computed from its own item, like
`for img in images: model(img)` or `cam(img)` (medium confidence): it repeats once per input, and
the inputs are unbounded.

## Why it matters
Every registration adds one more entry to the module's hook dictionary. Nothing removes it when the
handle or the helper object goes out of scope: the module keeps the hook, the hook keeps everything
it closes over (the helper object, its stored activations, the dict it writes to), and every forward
pass runs all the hooks registered so far. Memory grows and each step gets slower, iteration after
iteration.

## Example
```python
for images, _ in loader:
    cam = GradCAM(model, model.layer4)  # registers hooks on model.layer4 in __init__
    heatmaps.append(cam(images))
```

## Use instead
```python
cam = GradCAM(model, model.layer4)
for images, _ in loader:
    heatmaps.append(cam(images))
cam.remove_hooks()
```

## Fix safety
No automatic fix: removing the hook needs its handle kept and `remove()` called at the right
point (after the forward that needs it, or once after the loop), or the registration moved out of
the loop; either restructures the code.

## Known false positives
A hook on a tensor or module created in the same iteration (`out.register_hook(...)` on a fresh
activation, hooks on a model built inside the loop) dies with it and is not reported; neither is a
registration in a set-up loop over modules or layer names (`for m in model.modules():`,
`for name in ["fc", "head"]:`) that runs the model on none of its items, nor one whose
handle is used as a context manager or passed on to another function or container that leaklint
cannot follow. A hook that removes itself from inside its own body is not recognised: suppress it
with `# noqa: LL106`. A helper class that removes its hooks in a method called every iteration is
recognised by the method's name (`remove...`, `release`, `close`, `unregister...`) or because the
method calls `.remove()`. A removal that exists but never runs (a branch whose condition is never
true) is taken at its word. On bench/realcode the rule reports nothing.

## References
- peft: one forward hook registered per `generate` step accumulated because only the last was
  removed: https://github.com/huggingface/peft/pull/2761
- pytorch-grad-cam, memory growing when a CAM object is created in a loop:
  https://github.com/jacobgil/pytorch-grad-cam/issues/132 and
  https://github.com/jacobgil/pytorch-grad-cam/issues/483 (fixed by the `with` statement)
- Forward hooks that outlive a feature extractor keep accumulating features:
  https://github.com/KamitaniLab/bdpy/issues/72
- Discarded `RemovableHandle`s leaking memory over a fault-injection campaign:
  https://github.com/fffasttime/MRFI/pull/5
- `RemovableHandle` and the context-manager form of registration:
  https://github.com/pytorch/pytorch/pull/446
- A benchmark helper built for every evaluation that registers forward hooks on the model and
  never removes them: https://github.com/NeuroBench/neurobench/issues/184
- Runtime repro: `leaklint verify LL106` measures the leaky and the fixed loop body.
"""
    VALID = (
        # A helper returns the handles it registers; its only caller removes them every step.
        """
def add_recorders(model, store):
    handles = []
    for module in model.modules():
        handles.append(module.register_forward_hook(lambda m, i, o: store.append(o.detach())))
    return handles
def explain(model, x):
    store = []
    handles = add_recorders(model, store)
    try:
        model(x)
    finally:
        for handle in handles:
            handle.remove()
    return store
for x in loader:
    explain(model, x)
""",
        """
features = {}
handle = model.layer4.register_forward_hook(lambda m, i, o: features.update(out=o.detach()))
for x, y in loader:
    out = model(x)
    loss = criterion(out, y)
    loss.backward()
handle.remove()
""",
        """
for x, y in loader:
    handles = [m.register_forward_hook(save) for m in model.modules()]
    h = model.fc.register_forward_hook(save)
    out = model(x)
    out.register_hook(lambda g: g.clamp(-1, 1))
    h.remove()
    for handle in handles:
        handle.remove()
""",
        """
def attach(model):
    for name, module in model.named_modules():
        module.register_forward_hook(save)
attach(model)
for x, y in loader:
    model(x).sum().backward()
""",
        # set-up loops over layers: bounded, the model runs on none of their items
        """
for layer in model.modules():
    layer.register_forward_hook(save)
for name in ["layer3", "layer4"]:
    getattr(model, name).register_forward_hook(save)
    model(warmup_batch)
for images in gallery:
    show(images)
""",
        """
for images, _ in loader:
    with GradCAM(model, model.layer4) as cam:
        maps = cam(images)
    with model.fc.register_forward_hook(save):
        model(images)
""",
        """
class GradCAM:
    def __init__(self, model, layer):
        self.handles = [layer.register_forward_hook(self.save)]
    def save(self, module, inputs, output):
        self.activations = output.detach()
    def remove_hooks(self):
        for h in self.handles:
            h.remove()
for images, _ in loader:
    cam = GradCAM(model, model.layer4)
    cam(images)
    cam.remove_hooks()
for path in checkpoints:
    model = build_model(path)
    model.fc.register_forward_hook(save)
    for x, _ in loader:
        model(x)
""",
        """
import torch.nn as nn
class SelfAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.score = nn.Linear(dim, dim)
        self.save_gradients = False
    def save_attn_gradients(self, grad):
        self.attn_gradients = grad
    def forward(self, x):
        probs = self.score(x).softmax(dim=-1)
        if self.save_gradients:
            probs.register_hook(self.save_attn_gradients)
        return probs @ x
""",
    )
    INVALID = (
        """
for x, y in loader:
    model.layer4.register_forward_hook(save_features)  # expect: LL106
    loss = criterion(model(x), y)
    loss.backward()
""",
        """
class GradCAM:
    def __init__(self, model, layer):
        self.model = model
        layer.register_forward_hook(self.save)  # expect: LL106
    def save(self, module, inputs, output):
        self.activations = output.detach()
    def __call__(self, x):
        return self.model(x)
for images, labels in loader:
    cam = GradCAM(model, model.layer4)
    heat = cam(images)
""",
        """
for epoch in range(epochs):
    for p in model.parameters():
        p.register_hook(lambda g: g.clamp(-1, 1))  # expect: LL106
    for x, y in loader:
        model(x).sub(y).pow(2).mean().backward()
        optimizer.step()
""",
        """
def visualize(model, image):
    feats = {}
    handle = model.layer3.register_forward_hook(lambda m, i, o: feats.update(out=o.detach()))  # expect: LL106
    model(image)
    return feats["out"]
for image, _ in loader:
    visualize(model, image)
""",
        # a loop over inputs with no data-like name: it runs the model (or a helper that does) per item
        """
class GradCAM:
    def __init__(self, model, layer):
        self.model = model
        layer.register_forward_hook(self.save)  # expect: LL106
    def save(self, module, inputs, output):
        self.activations = output.detach()
    def __call__(self, x):
        return self.model(x)
def explain(model, images):
    maps = []
    for img in images:
        cam = GradCAM(model, model.layer4)
        maps.append(cam(img).detach())
    for img in images:
        model.fc.register_forward_hook(lambda m, i, o: print(o.shape))  # expect: LL106
        model(img.unsqueeze(0))
    return maps
""",
        """
from pytorch_grad_cam import GradCAM
handles = []
for step, (x, y) in enumerate(loader):
    handles.append(model.fc.register_forward_hook(save))  # expect: LL106
    h = model.fc.register_full_backward_hook(save_grad)  # expect: LL106
    cam = GradCAM(model=model, target_layers=[model.layer4])  # expect: LL106
    model(x).sum().backward()
for handle in handles:
    handle.remove()
h.remove()
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """A GradCAM-style helper (hooks that append activations, as pytorch-grad-cam's do) built every
        batch: every old helper's hook still runs and keeps each new output, vs one helper built once."""

        def setup(self, ctx):
            import torch

            class Probe:
                def __init__(self, model, layer):
                    self.model = model
                    self.activations = []
                    layer.register_forward_hook(self.save)
                def save(self, module, inputs, output):
                    self.activations.append(output.detach())
                def __call__(self, x):
                    self.activations = []
                    return self.model(x)

            ctx.Probe = Probe
            ctx.model = torch.nn.Sequential(torch.nn.Linear(32, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).to(ctx.device)
            ctx.images = torch.randn(64, 32, device=ctx.device)
            ctx.cam = None

        def leaky(self, ctx):
            cam = ctx.Probe(ctx.model, ctx.model[0])
            cam(ctx.images)

        def fixed(self, ctx):
            if ctx.cam is None:
                ctx.cam = ctx.Probe(ctx.model, ctx.model[0])
            ctx.cam(ctx.images)


# --- detection ------------------------------------------------------------------------------------
#: Calls that look an object up rather than build one: the result is whatever already existed.
_LOOKUP_FUNCTIONS = frozenset({"getattr", "dict", "next", "iter", "list", "tuple"})
_LOOKUP_METHODS = frozenset(
    {"get_submodule", "get_parameter", "get", "modules", "named_modules", "children", "named_children",
     "parameters", "named_parameters", "items", "values", "__getitem__"}
)
#: Method names that release what an object registered.
_RELEASE_NAME = re.compile(r"^(remove|release|close|unregister|detach_hooks|clear_hooks|__exit__)", re.I)
#: Classes from libraries that register hooks on the model they are given when constructed.
_EXTERNAL_HOOK_CLASS = re.compile(r"^pytorch_grad_cam\.(\w+\.)*(\w*CAM\w*|FullGrad)$")
_MAX_DEPTH = 4


@dataclass(frozen=True, eq=False)
class _Scope:
    """Where a registration repeats: the body of an iteration loop, or a function run every step."""

    node: cst.CSTNode
    loop: LoopInfo | None
    function: FunctionInfo
    description: str
    confidence: Confidence


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    reported = set()
    for registration in hook_registrations(facts):
        violation = _registration_violation(registration, facts)
        if violation is not None:
            reported.add(registration.call)
            yield violation
    for violation in _helper_constructions(facts):
        if violation.node not in reported:
            yield violation


# ---- where a statement repeats -----------------------------------------------------------------
def _repeating_scope(fact: StatementFact, facts: ModuleFacts) -> _Scope | None:
    loops = [loop for loop in fact.loops if loop.repeats_per_input]
    if loops:
        # A loop named like a data loop or one that trains is surely per step; a loop whose only
        # evidence is a model run on each item (`for img in images: model(img)`) nearly so.
        confidence = Confidence.HIGH if loops[-1].is_iteration_loop else Confidence.MEDIUM
        return _Scope(loops[-1].node, loops[-1], fact.function, "every iteration", confidence)
    function = fact.function
    reason = per_step_functions(facts).get(function)
    if reason is not None and function.node is not None:
        return _Scope(function.node, None, function, f"every call ({reason})", Confidence.MEDIUM)
    return None


# ---- registrations -----------------------------------------------------------------------------
def _registration_violation(registration: HookRegistration, facts: ModuleFacts) -> Violation | None:
    fact = registration.fact
    scope = _repeating_scope(fact, facts)
    if scope is None:
        return None
    if registration.receiver is not None and _fresh(_key(registration.receiver), scope, facts, 0):
        return None  # a module or tensor made in this iteration: the hook dies with it
    disposal = _handle_disposal(fact.node, registration.call)
    if disposal is None:
        return None  # the handle goes somewhere leaklint does not follow
    kind, handle = disposal
    if kind != "discarded" and _removed(handle, scope, facts):
        return None
    if kind != "discarded" and scope.loop is None and _returned_and_removed_by_callers(handle, scope.function, facts):
        return None  # a helper that installs hooks and hands the handles to callers that remove them
    if registration.receiver is None:
        what = f"a global {registration.kind.value} (run for every module)"
    else:
        what = f"a {registration.kind.value} to '{facts.describe(registration.receiver)}'"
    runs = "backward" if registration.kind in (HookKind.BACKWARD, HookKind.TENSOR) else "forward"
    return Violation(
        node=registration.call,
        message=(
            f"'{registration.method}' adds {what} {scope.description} and "
            f"{_fate(kind, handle, scope, facts)}: the hooks pile up, each keeping what it captures alive, "
            f"and every {runs} pass runs all of them"
        ),
        confidence=scope.confidence,
        help=_help(registration),
        statement=fact.line,
    )


def _fate(kind: str, handle: str, scope: _Scope, facts: ModuleFacts) -> str:
    if kind == "discarded":
        return "its handle is discarded"
    subject = f"'{handle}' is" if kind == "name" else f"the handles in '{handle}' are"
    if not _removed_anywhere(handle, facts):
        return f"{subject} never removed"
    if scope.loop is not None:
        return f"{subject} only removed after the loop"
    return f"{subject} not removed before '{scope.function.name}' returns"


def _help(registration: HookRegistration) -> str:
    if registration.kind is HookKind.TENSOR:
        return "register the hook once before the loop, or keep its handle and call handle.remove() in the loop"
    return (
        "register the hook once before the loop, or keep the handle and call handle.remove() in the loop "
        f"(or use 'with ...{registration.method}(fn):')"
    )


def _handle_disposal(statement: cst.BaseSmallStatement, call: cst.Call) -> tuple[str, str] | None:
    """What happens to the returned handle: ("discarded", ""), ("name", h) for ``h = ...``,
    ("container", c) for ``c.append(...)`` / ``c[k] = ...`` / ``c += [...]``; None otherwise."""
    if isinstance(statement, cst.Expr):
        if statement.value is call:
            return ("discarded", "")
        value = statement.value
        if (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in ("append", "extend", "insert", "add", "appendleft")
            and any(_holds(arg.value, call) for arg in value.args)
        ):
            container = dotted_name(value.func.value)
            return ("container", container) if container else None
        return None
    if isinstance(statement, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and statement.value is not None:
        if not _holds(statement.value, call):
            return None
        targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else [statement.target]
        for target in targets:
            if isinstance(target, cst.Subscript) or isinstance(statement, cst.AugAssign):
                base = subscript_base(target)
                if base:
                    return ("container", base)
            names = bound_names(target)
            if names:
                return ("name", names[0]) if statement.value is call else ("container", names[0])
    return None


def _holds(expr: cst.BaseExpression, call: cst.Call) -> bool:
    """``expr`` is the call, a list/tuple literal holding it, or a comprehension building it."""
    if expr is call:
        return True
    if isinstance(expr, (cst.List, cst.Tuple)):
        return any(element.value is call for element in expr.elements)
    if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
        return expr.elt is call
    if isinstance(expr, cst.DictComp):
        return expr.value is call
    return False


def _removed(handle: str, scope: _Scope, facts: ModuleFacts) -> bool:
    """The handle (or the container of handles) is released inside the repeating scope; for an
    attribute (``self.handles``), anywhere in the file (some method releases it)."""
    if handle.startswith("self."):
        return _removed_anywhere(handle, facts)
    region = scope.loop.node.body if scope.loop is not None else scope.node
    return _releases(region, handle)


def _returned_and_removed_by_callers(handle: str, function: FunctionInfo, facts: ModuleFacts) -> bool:
    """``function`` returns ``handle`` and every call of it in the file keeps the result in a name
    that the calling function then releases (``handles = add_hooks(m)`` ... ``clear(handles)``)."""
    if handle not in facts.summary(function).returned_names:
        return False
    calls = [(call, fact) for call, fact, callee in call_graph(facts).resolved if callee is function]
    if not calls:
        return False
    for call, fact in calls:
        node = fact.node
        if not (isinstance(node, cst.Assign) and node.value is call and len(node.targets) == 1):
            return False
        names = bound_names(node.targets[0].target)
        region = fact.function.node if fact.function.node is not None else facts.module
        if len(names) != 1 or not _releases(region, names[0]):
            return False
    return True


def _removed_anywhere(handle: str, facts: ModuleFacts) -> bool:
    return _releases(facts.module, handle)


def _releases(region: cst.CSTNode, handle: str) -> bool:
    """``h.remove()``, ``for h in handles: h.remove()``, ``[h.remove() for h in handles]``,
    ``handles.pop().remove()``, or the handle handed to another function (which may remove it)."""
    aliases = {handle}
    for node in walk(region):
        if isinstance(node, (cst.For, cst.CompFor)) and handle in dotted_names_in(node.iter):
            aliases.update(bound_names(node.target))
    for node in walk(region):
        if not isinstance(node, cst.Call):
            continue
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "remove" and not node.args:
            receiver = func.value
            if subscript_base(receiver) in aliases or _call_root(receiver) in aliases:
                return True
        elif not (isinstance(func, cst.Attribute) and func.attr.value in ("append", "extend", "insert", "add")):
            for arg in node.args:
                name = dotted_name(arg.value)
                if name in aliases and not (isinstance(func, cst.Name) and func.value in ("print", "len")):
                    return True
    return False


def _call_root(expr: cst.BaseExpression) -> str | None:
    """``handles`` in ``handles.pop()``."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        return subscript_base(expr.func.value)
    return None


# ---- freshness: is the hooked object new every iteration? --------------------------------------
def _key(receiver: cst.BaseExpression) -> str | None:
    """The name that identifies the hooked object: its root name, or ``self.x`` for an attribute."""
    name = dotted_name(receiver) or _chain_base(receiver)
    if name is None:
        return None
    parts = name.split(".")
    return ".".join(parts[:2]) if parts[0] == "self" and len(parts) > 1 else parts[0]


def _chain_base(expr: cst.BaseExpression) -> str | None:
    """``model`` in ``model.get_submodule("fc")`` / ``dict(model.named_modules())["fc"]``."""
    root = root_name(expr)
    if root is not None:
        return root
    if isinstance(expr, cst.Subscript):
        return _chain_base(expr.value)
    if isinstance(expr, cst.Call) and expr.args:
        return _chain_base(expr.args[0].value)
    return None


def _fresh(key: str | None, scope: _Scope, facts: ModuleFacts, depth: int) -> bool:
    """Whether the object ``key`` names is (or may be) a new one in every run of ``scope``;
    when unsure, yes (the rule stays quiet)."""
    if key is None or depth > _MAX_DEPTH:
        return True
    if facts.imports.qualify(key) is not None:
        return True  # torch.nn.Linear(...).register_forward_hook: built right there
    loop = scope.loop
    if loop is not None:
        if key not in loop.rebound:
            return False
        if isinstance(loop.node, cst.For) and key in bound_names(loop.node.target):
            return True  # the loop's own item: a new batch (or a new model) every iteration
        region: cst.CSTNode = loop.node.body
    else:
        function = scope.function
        body = function.node.body if function.node is not None else None
        if key == "self" or key in function.params or not _binds(body, key):
            return False
        region = body  # type: ignore[assignment]
    return any(_binding_fresh(value, scope, facts, depth) for value in _bindings(region, key))


def _binds(region: cst.CSTNode | None, key: str) -> bool:
    return region is not None and any(True for _ in _bindings(region, key))


def _bindings(region: cst.CSTNode, key: str) -> Iterator[cst.BaseExpression | None]:
    """What ``key`` is bound to in ``region``: an assigned expression, the ``iter`` of a loop
    binding it (marked by wrapping in a For), or None for anything else (with, walrus...)."""
    for node in walk(region, into=not_into_scopes):
        if isinstance(node, cst.Assign) and any(key in bound_names(t.target) for t in node.targets):
            yield node.value
        elif isinstance(node, cst.AnnAssign) and node.value is not None and key in bound_names(node.target):
            yield node.value
        elif isinstance(node, (cst.For, cst.CompFor)) and key in bound_names(node.target):
            yield cst.Subscript(value=node.iter, slice=[cst.SubscriptElement(cst.Index(cst.Integer("0")))])
        elif isinstance(node, cst.WithItem) and node.asname is not None and key in bound_names(node.asname.name):
            yield None
        elif isinstance(node, cst.NamedExpr) and key in bound_names(node.target):
            yield node.value


def _binding_fresh(value: cst.BaseExpression | None, scope: _Scope, facts: ModuleFacts, depth: int) -> bool:
    """A constructor or forward call builds something new; a lookup (``getattr``, ``m.layer4``,
    ``dict(...)[name]``, an item of ``model.parameters()``) returns what already existed."""
    if value is None:
        return True
    if isinstance(value, cst.Call):
        func = value.func
        if isinstance(func, cst.Name) and func.value in _LOOKUP_FUNCTIONS and value.args:
            return _fresh(_chain_base(value.args[0].value), scope, facts, depth + 1)
        if isinstance(func, cst.Attribute) and func.attr.value in _LOOKUP_METHODS:
            return _fresh(_key(func.value), scope, facts, depth + 1)
        return True
    if isinstance(value, (cst.Name, cst.Attribute, cst.Subscript)):
        return _fresh(_key(value) if not isinstance(value, cst.Subscript) else _chain_base(value), scope, facts, depth + 1)
    if isinstance(value, (cst.List, cst.Tuple)):
        return any(_binding_fresh(e.value, scope, facts, depth + 1) for e in value.elements)
    return True


# ---- helper objects that register hooks when built ---------------------------------------------
def _helper_constructions(facts: ModuleFacts) -> Iterator[Violation]:
    """Helpers built every iteration that register hooks when built. The finding is on the
    registration in the helper (the line that keeps adding hooks, where the handle must be kept
    and removed); a helper of another library is reported where it is built."""
    classes = _hook_registering_classes(facts)
    if not classes and not facts.imports.imports_anything_from("pytorch_grad_cam"):
        return
    repeated: dict[str, tuple[str, StatementFact]] = {}
    for fact in facts.statements():
        scope = None
        for node in calls_in(fact.node):
            described = _helper_class(node, classes, facts)
            if described is None:
                continue
            name, releasers = described
            scope = scope or _repeating_scope(fact, facts)
            if scope is None:
                break
            bound = _bound_to(fact.node, node)
            if bound is not None and _helper_released(bound, releasers, scope, facts):
                continue
            if name in classes:
                repeated.setdefault(name, (scope.description, fact))
                continue
            yield Violation(
                node=node,
                message=(
                    f"'{name}(...)' registers hooks on the model it is given and is built {scope.description} "
                    "without removing them: every instance stays attached (with everything it keeps) and "
                    "every forward runs the hooks of all of them"
                ),
                confidence=Confidence.MEDIUM,
                help=f"build one {name} before the loop, use it as a context manager ('with {name}(...) as ...:'), "
                "or release its hooks before the iteration ends",
                statement=fact.line,
            )
    for registration in hook_registrations(facts):
        cls = registration.fact.function.cls
        if cls is None or registration.receiver is None:
            continue
        owner = next((name for name in repeated if name == cls.name or _derives_from(facts, name, cls)), None)
        if owner is None:
            continue
        if registration.fact.function not in _reachable_from_init(cls, facts) or _hooks_itself(registration.receiver, cls, facts):
            continue
        description, built = repeated[owner]
        disposal = _handle_disposal(registration.fact.node, registration.call)
        kept = f"its handle goes to '{disposal[1]}'" if disposal is not None and disposal[0] != "discarded" else "its handle is discarded"
        yield Violation(
            node=registration.call,
            message=(
                f"'{registration.method}' adds a {registration.kind.value} each time '{owner}(...)' is built, and "
                f"'{facts.describe(built.node)}' builds one {description}; {kept} and nothing removes it before "
                "the next: the hooks pile up, each keeping its helper (and what it stores) alive, and every "
                "forward pass runs all of them"
            ),
            confidence=Confidence.MEDIUM,
            help=f"keep the handles and remove them when the {owner} is done (a remove method, or __enter__/__exit__), "
            f"or build one {owner} before the loop",
            statement=registration.fact.line,
        )


def _derives_from(facts: ModuleFacts, name: str, base: ClassInfo) -> bool:
    cls = facts.structure.classes_by_name.get(name)
    pending = list(cls.local_bases) if cls is not None else []
    while pending:
        current = pending.pop()
        if current is base:
            return True
        pending.extend(current.local_bases)
    return False


def _helper_class(call: cst.Call, classes: dict[str, set[str]], facts: ModuleFacts) -> tuple[str, set[str]] | None:
    """(class name, names of its releasing methods) when ``call`` builds a hook-registering helper."""
    func = call.func
    if isinstance(func, cst.Name) and func.value in classes:
        return func.value, classes[func.value]
    qualified = facts.imports.resolve(func) or ""
    if _EXTERNAL_HOOK_CLASS.match(qualified):
        return qualified.rsplit(".", 1)[-1], set()
    return None


def _hook_registering_classes(facts: ModuleFacts) -> dict[str, set[str]]:
    """Local classes whose ``__init__`` (or a method it calls) registers a hook on an object it was
    given, with the methods that call ``.remove()`` (their releasers)."""
    registering: dict[ClassInfo, bool] = {}
    for registration in hook_registrations(facts):
        function = registration.fact.function
        cls = function.cls
        if cls is None or registration.receiver is None:
            continue
        if function in _reachable_from_init(cls, facts) and not _hooks_itself(registration.receiver, cls, facts):
            registering[cls] = True
    found: dict[str, set[str]] = {}
    for cls in facts.structure.classes.values():
        if cls in registering or any(base in registering for base in cls.local_bases):
            found[cls.name] = _releasing_methods(cls)
    return found


def _reachable_from_init(cls: ClassInfo, facts: ModuleFacts) -> set[FunctionInfo]:
    init = cls.find_method("__init__")
    if init is None:
        return set()
    start = facts.structure.functions[init]
    reached = {start}
    frontier = [start]
    while frontier:
        current = frontier.pop()
        for _, callee in call_graph(facts).callees_of(current):
            if callee.cls is cls and callee not in reached:
                reached.add(callee)
                frontier.append(callee)
    return reached


def _hooks_itself(receiver: cst.BaseExpression, cls: ClassInfo, facts: ModuleFacts) -> bool:
    """``self.register_forward_hook`` or a hook on a layer the object built itself: it goes away
    with the object (pytorch/pytorch#46386 is then a garbage-collection delay, not this leak)."""
    key = _key(receiver)
    if key == "self":
        return True
    if key is None or not key.startswith("self."):
        return False
    init = cls.find_method("__init__")
    if init is None:
        return False
    values = list(_bindings(init.body, key))
    return bool(values) and all(isinstance(v, cst.Call) for v in values)


def _releasing_methods(cls: ClassInfo) -> set[str]:
    names = set()
    for klass in [cls, *cls.local_bases]:
        for name, method in klass.methods.items():
            calls_remove = any(
                isinstance(n.func, cst.Attribute) and n.func.attr.value == "remove" and not n.args
                for n in calls_in(method.body)
            )
            if calls_remove or _RELEASE_NAME.match(name):
                names.add(name)
    return names


def _bound_to(statement: cst.BaseSmallStatement, call: cst.Call) -> str | None:
    if isinstance(statement, cst.Assign) and statement.value is call:
        names = [n for t in statement.targets for n in bound_names(t.target)]
        return names[0] if names else None
    return None


def _helper_released(name: str, releasers: set[str], scope: _Scope, facts: ModuleFacts) -> bool:
    """``cam.remove_hooks()``, ``cam.activations_and_grads.release()``, or calling the object /
    a method of it that itself calls ``.remove()``."""
    region = scope.loop.node.body if scope.loop is not None else scope.node
    for node in walk(region):
        if not isinstance(node, cst.Call):
            continue
        func = node.func
        if isinstance(func, cst.Name) and func.value == name and "__call__" in releasers:
            return True
        if isinstance(func, cst.Attribute) and (dotted_name(func.value) or "").split(".", 1)[0] == name:
            method = func.attr.value
            if method in releasers or _RELEASE_NAME.match(method):
                return True
    return False
