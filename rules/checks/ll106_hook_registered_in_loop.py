"""How LL106 hook-registered-in-loop finds its violations: ``check`` and its helpers.

The rule itself (documentation, examples, gate and runtime repro) is
:mod:`leaklint.rules.ll106_hook_registered_in_loop`. Only files that pass the gate import this
module, and with it libcst and the analysis.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

from leaklint.analysis import nodes as cst
from leaklint.analysis.calls import call_graph
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.hooks import HookKind, HookRegistration, hook_registrations
from leaklint.analysis.names import dotted_name
from leaklint.analysis.provenance import StatementFact
from leaklint.analysis.steps import per_step_functions
from leaklint.analysis.structure import ClassInfo, FunctionInfo, LoopInfo, bound_names
from leaklint.analysis.syntax import root_name, subscript_base
from leaklint.analysis.walk import calls_in, dotted_names_in, not_into_scopes, walk
from leaklint.findings import Confidence
from leaklint.rule import Violation


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


def check(facts: ModuleFacts) -> Iterator[Violation]:
    """LL106's violations in one file (``HookRegisteredInLoop.check``)."""
    for registration in hook_registrations(facts):
        violation = _registration_violation(registration, facts)
        if violation is not None:
            yield violation
    yield from _helper_constructions(facts)


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
    classes = _hook_registering_classes(facts)
    if not classes and not facts.imports.imports_anything_from("pytorch_grad_cam"):
        return
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
