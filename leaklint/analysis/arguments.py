"""What the calls of a file's own functions pass them: arguments matched to parameters, and the
literal flags every call gives (``requires_grad=False``).

The provenance pass records, at each call of a local function, method or class, the value each
parameter receives (``arguments_by_parameter``) and whether it is a literal (``literal_arguments``);
the next round interprets the callee from the join of what all its calls passed. So a helper that
``update_stats(stats)`` hands a dict of losses sees graph-attached values, and a branch that no
call opens (``if requires_grad:`` where every call passes ``False``) is not interpreted.
"""

from __future__ import annotations

from typing import Mapping

import libcst as cst

from leaklint.analysis.containers import literal_key
from leaklint.analysis.values import Value, join, replace

#: A parameter that the calls give different values, or values that are not literals.
VARIES = object()


def join_literals(into: dict[str, object], literals: Mapping[str, object]) -> None:
    """Add one call's literals to what ``into`` knows: a parameter keeps its literal only while
    every call gives the same one."""
    for name, literal in literals.items():
        if name not in into:
            into[name] = literal
        elif into[name] is not VARIES and (into[name] != literal or type(into[name]) is not type(literal)):
            into[name] = VARIES


def join_arguments(into: dict[str, Value], arguments: Mapping[str, Value]) -> None:
    """Add one call's (or one run's) arguments to what ``into`` knows of a function's parameters."""
    for name, value in arguments.items():
        seen = into.get(name)
        into[name] = value if seen is None else join(seen, value)


def literal_arguments(function: cst.FunctionDef, node: cst.Call, *, bound: bool) -> dict[str, object]:
    """Parameter -> the literal this call gives it (its default when not passed), ``VARIES`` for
    anything else."""
    parameters = function.params
    every = [*parameters.posonly_params, *parameters.params, *parameters.kwonly_params]
    if bound and not is_staticmethod(function):
        every = every[1:]
    positional = [p.name.value for p in (*parameters.posonly_params, *parameters.params)]
    if bound and not is_staticmethod(function):
        positional = positional[1:]
    given: dict[str, object] = {}
    index = 0
    for arg in node.args:
        if arg.star:
            return {p.name.value: VARIES for p in every}  # f(*args) / f(**kwargs): unknown
        name = arg.keyword.value if arg.keyword is not None else (positional[index] if index < len(positional) else None)
        if arg.keyword is None:
            index += 1
        if name is not None:
            given[name] = _literal(arg.value)
    literals: dict[str, object] = {}
    for param in every:
        name = param.name.value
        literals[name] = given[name] if name in given else (_literal(param.default) if param.default is not None else VARIES)
    return literals


def literal_truth(test: cst.BaseExpression, literals: Mapping[str, object]) -> bool | None:
    """The truth of ``test`` where its names are parameters with known literals: ``flag``,
    ``not flag``, ``phase == "train"``, ``mode != "eval"``, ``split in ("val", "test")``
    (None: not known)."""
    held = True
    while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:  # type: ignore[attr-defined]
        test, held = test.expression, not held  # type: ignore[attr-defined]
    if type(test) is cst.Name:
        literal = literals.get(test.value, VARIES)  # type: ignore[attr-defined]
        return None if literal is VARIES else bool(literal) is held
    if type(test) is not cst.Comparison or len(test.comparisons) != 1 or type(test.left) is not cst.Name:  # type: ignore[attr-defined]
        return None
    literal = literals.get(test.left.value, VARIES)  # type: ignore[attr-defined]
    target = test.comparisons[0]  # type: ignore[attr-defined]
    operator, compared = type(target.operator), target.comparator
    if literal is VARIES:
        return None
    if operator in (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot):
        other = _literal(compared)
        if other is VARIES:
            return None
        same = literal == other and type(literal) is type(other)
        return (same if operator in (cst.Equal, cst.Is) else not same) is held
    if operator in (cst.In, cst.NotIn) and type(compared) in (cst.Tuple, cst.List, cst.Set):
        options = [_literal(element.value) for element in compared.elements]  # type: ignore[attr-defined]
        if any(option is VARIES for option in options):
            return None
        inside = any(literal == option and type(literal) is type(option) for option in options)
        return (inside if operator is cst.In else not inside) is held
    return None


def _literal(expr: cst.BaseExpression) -> object:
    if type(expr) is cst.Name and expr.value in ("True", "False", "None"):  # type: ignore[attr-defined]
        return {"True": True, "False": False, "None": None}[expr.value]  # type: ignore[attr-defined]
    if type(expr) in (cst.Integer, cst.SimpleString):
        return literal_key(expr)
    return VARIES


def arguments_by_parameter(function: cst.FunctionDef, node: cst.Call, args: list[Value], *, bound: bool) -> dict[str, Value]:
    """Parameter name -> the value ``node`` passes for it (positional and keyword arguments, up
    to the first ``*args`` / ``**kwargs``), as the callee sees it: no caller-side names."""
    return {
        name: replace(value, deps=frozenset(), fresh=False)
        for (name, value), _ in arguments_with_nodes(function, node, args, bound=bound)
    }


def arguments_with_nodes(function: cst.FunctionDef, node: cst.Call, args: list[Value], *, bound: bool) -> list[tuple[tuple[str, Value], cst.Arg]]:
    """((parameter, value), argument) for each argument of ``node`` that a parameter of
    ``function`` receives."""
    positional, keywords = parameter_names(function, bound=bound)
    return bind_arguments(positional, frozenset(keywords), node, args)


def parameter_names(function: cst.FunctionDef, *, bound: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The parameters a call fills by position (``self`` left out of a bound call) and those it
    may name."""
    parameters = function.params
    positional = tuple(p.name.value for p in (*parameters.posonly_params, *parameters.params))
    keywords = tuple(p.name.value for p in (*parameters.params, *parameters.kwonly_params))
    if bound and not is_staticmethod(function):
        positional = positional[1:]
    return positional, keywords


def bind_arguments(positional: tuple[str, ...], keywords: frozenset[str], node: cst.Call, args: list[Value]) -> list[tuple[tuple[str, Value], cst.Arg]]:
    """((parameter, value), argument) for each argument of ``node`` that one of the parameters
    receives (``args``: the arguments' values, in order); ``*args`` leaves the later positional
    ones unknown."""
    found: list[tuple[tuple[str, Value], cst.Arg]] = []
    index = 0
    for arg, value in zip(node.args, args):
        if arg.star:
            if arg.star == "*":
                index = len(positional)  # where the unpacked items go is unknown
            continue
        if arg.keyword is not None:
            name: str | None = arg.keyword.value if arg.keyword.value in keywords else None
        else:
            name = positional[index] if index < len(positional) else None
            index += 1
        if name is not None:
            found.append(((name, value), arg))
    return found


def is_staticmethod(function: cst.FunctionDef) -> bool:
    """Decorated ``@staticmethod``: a call through an object passes no ``self``."""
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in function.decorators)


def is_bound_to_object(function: cst.FunctionDef) -> bool:
    """A method bound to each object it is called through: not a ``@staticmethod`` nor a
    ``@classmethod`` (those are shared by every object of the class, and so is what they keep)."""
    return not any(
        isinstance(d.decorator, cst.Name) and d.decorator.value in ("staticmethod", "classmethod") for d in function.decorators
    )


def parameter_for(function: cst.FunctionDef, call: cst.Call, arg: cst.Arg, skip: int = 0) -> str | None:
    """The parameter of ``function`` that ``arg`` of ``call`` binds; ``skip``: how many leading
    parameters the call does not fill by position (1 for ``self`` in a bound call). None for an
    argument ``*args`` / ``**kwargs`` would take, or none takes."""
    params = function.params
    if arg.keyword is not None:
        names = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
        return arg.keyword.value if arg.keyword.value in names else None
    positional = [p.name.value for p in (*params.posonly_params, *params.params)][skip:]
    index = 0
    for candidate in call.args:
        if candidate.keyword is not None or candidate.star:
            if candidate is arg:
                return None
            continue
        if candidate is arg:
            return positional[index] if index < len(positional) else None
        index += 1
    return None
