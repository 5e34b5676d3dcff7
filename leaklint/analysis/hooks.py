"""PyTorch hooks: which calls register one, and which code a hook argument names.

A hook keeps whatever it captures alive for as long as it is registered, and runs on every
forward or backward pass; rules ask where hooks are registered (LL106: every iteration?) and
what their bodies store (LL105: a graph-attached output?).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst
from leaklint.analysis.calls import function_named, local_callee
from leaklint.analysis.names import dotted_name
from leaklint.analysis.structure import ClassInfo, FunctionInfo
from leaklint.analysis.syntax import call_argument
from leaklint.analysis.torch_api import GLOBAL_HOOK_FUNCTIONS, HOOK_METHODS, HookKind
from leaklint.findings import Confidence

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.analysis.provenance import StatementFact


#: ``runner.register_hook(CheckpointHook())`` (mmcv, ignite...) registers a training-loop callback.
_NOT_TORCH_HOOK_RECEIVER = re.compile(r"(runner|trainer|engine|callbacks?|emitter|dispatcher)$", re.I)
_MAX_DEPTH = 4


@dataclass(frozen=True, eq=False)
class HookRegistration:
    """One ``x.register_*hook(fn)`` call."""

    call: cst.Call
    fact: StatementFact
    method: str
    kind: HookKind
    #: The module or tensor the hook goes on; None for a global ``register_module_*`` hook.
    receiver: cst.BaseExpression | None
    hook: cst.BaseExpression | None


@dataclass(frozen=True, eq=False)
class HookFunction:
    """The code a hook argument names: a function, a method, a lambda."""

    node: cst.FunctionDef | cst.Lambda
    info: FunctionInfo | None  # None for a lambda
    #: Leading parameters already bound (``self`` of a method, ``functools.partial`` arguments).
    bound: int
    #: Parameters bound by keyword (``functools.partial(fn, name=name)``).
    bound_keywords: frozenset[str] = frozenset()


def hook_registrations(facts: ModuleFacts) -> list[HookRegistration]:
    """Every hook registration call in a statement that runs, in statement order (built once per file)."""
    return facts.derived(_hook_registrations)


def _hook_registrations(facts: ModuleFacts) -> list[HookRegistration]:
    if not _may_register_hooks(facts):
        return []
    registrations = (_registration(call, fact, facts) for call, fact in facts.index.statement_calls)
    return [registration for registration in registrations if registration is not None]


def _may_register_hooks(facts: ModuleFacts) -> bool:
    """Cheap pre-check from the structure scan: a hook method called on something other than
    ``self``, an ``nn.Module`` class (``self.register_forward_hook``), or an imported global hook."""
    structure = facts.structure
    if structure.external_method_calls.keys() & (HOOK_METHODS.keys() | GLOBAL_HOOK_FUNCTIONS.keys()):
        return True
    if any(cls.is_module for cls in structure.classes.values()):
        return True
    return any(facts.imports.qualify(name) for name in GLOBAL_HOOK_FUNCTIONS)


def _registration(call: cst.Call, fact: StatementFact, facts: ModuleFacts) -> HookRegistration | None:
    """The hook ``call`` registers, if it registers one."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in HOOK_METHODS:
        receiver_name = dotted_name(func.value) or ""
        if func.attr.value == "register_hook" and _NOT_TORCH_HOOK_RECEIVER.search(receiver_name):
            return None
        hook = call_argument(call, 0, "hook")
        return HookRegistration(call, fact, func.attr.value, HOOK_METHODS[func.attr.value], func.value, hook)
    qualified = facts.imports.resolve(func) or ""
    leaf = qualified.rsplit(".", 1)[-1]
    if qualified.startswith("torch.") and leaf in GLOBAL_HOOK_FUNCTIONS:
        return HookRegistration(call, fact, leaf, GLOBAL_HOOK_FUNCTIONS[leaf], None, call_argument(call, 0, "hook"))
    return None


def resolve_hook(expr: cst.BaseExpression | None, scope: FunctionInfo, facts: ModuleFacts, depth: int = 0) -> list[HookFunction]:
    """The functions a hook argument names: ``fn``, ``self.method``, ``lambda m, i, o: ...``,
    ``make_hook(name)`` (a factory returning a nested def or a lambda), ``Saver()`` (an object
    with ``__call__``), ``functools.partial(fn, ...)``, or a variable bound to one of those."""
    if expr is None or depth > _MAX_DEPTH:
        return []
    structure = facts.structure
    if isinstance(expr, cst.Lambda):
        return [HookFunction(expr, None, 0)]
    if isinstance(expr, cst.Name):
        node = function_named(expr.value, scope, facts)
        if node is not None:
            return [HookFunction(node, structure.functions[node], 0)]
        return [
            hook
            for value in facts.index.assigned_values(scope, expr.value)
            for hook in resolve_hook(value, scope, facts, depth + 1)
        ]
    if isinstance(expr, cst.Attribute):
        owner = _class_of(expr.value, scope, facts)
        method = owner.find_method(expr.attr.value) if owner is not None else None
        return [HookFunction(method, structure.functions[method], 1)] if method is not None else []
    if isinstance(expr, cst.Call):
        qualified = facts.imports.resolve(expr.func) or ""
        if qualified == "functools.partial" and expr.args:
            bound = len([a for a in expr.args[1:] if a.keyword is None and not a.star])
            keywords = frozenset(a.keyword.value for a in expr.args[1:] if a.keyword is not None)
            inner = resolve_hook(expr.args[0].value, scope, facts, depth + 1)
            return [HookFunction(h.node, h.info, h.bound + bound, h.bound_keywords | keywords) for h in inner]
        if isinstance(expr.func, cst.Name) and expr.func.value in structure.classes_by_name:
            call_method = structure.classes_by_name[expr.func.value].find_method("__call__")
            return [HookFunction(call_method, structure.functions[call_method], 1)] if call_method is not None else []
        factory = local_callee(expr, scope, facts)
        if factory is not None:
            return [
                hook
                for fact in facts.index.statements_of(factory)
                if isinstance(fact.node, cst.Return) and fact.node.value is not None
                for hook in resolve_hook(fact.node.value, factory, facts, depth + 1)
            ]
    return []


def _class_of(expr: cst.BaseExpression, scope: FunctionInfo, facts: ModuleFacts) -> ClassInfo | None:
    """The local class of ``self`` (in a method) or of a variable bound to ``LocalClass(...)``."""
    if isinstance(expr, cst.Name) and expr.value == "self":
        return scope.cls
    if isinstance(expr, cst.Name):
        for value in facts.index.assigned_values(scope, expr.value):
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
                found = facts.structure.classes_by_name.get(value.func.value)
                if found is not None:
                    return found
    return None


def hook_parameters(hook: HookFunction) -> tuple[list[str], str | None]:
    """The parameters torch fills when it calls the hook (not the bound ones, not those with a
    default such as ``lambda m, i, o, name=name: ...``), and the ``*args`` name."""
    params = hook.node.params
    positional = [p.name.value for p in (*params.posonly_params, *params.params) if p.default is None]
    star = params.star_arg.name.value if isinstance(params.star_arg, cst.Param) else None
    return [name for name in positional[hook.bound :] if name not in hook.bound_keywords], star


def graph_parameters(hook: HookFunction, kind: HookKind) -> dict[str, Confidence]:
    """The hook's parameters that carry the graph, with how surely: a forward hook's output (high)
    and inputs (medium: the first layer's input is data), a pre-hook's inputs (medium)."""
    positional, star = hook_parameters(hook)
    rest = positional[1:]  # the module comes first
    found: dict[str, Confidence] = {name: Confidence.MEDIUM for name in rest}
    if kind is HookKind.FORWARD and len(rest) >= 2:
        found[rest[-1]] = Confidence.HIGH
    if star is not None:
        found[star] = Confidence.MEDIUM
    return found
