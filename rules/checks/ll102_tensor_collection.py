"""How LL102 tensor-collection finds its violations: ``check`` and its helpers.

The rule itself (documentation, examples, gate and runtime repro) is
:mod:`leaklint.rules.ll102_tensor_collection`. Only files that pass the gate import this
module, and with it libcst and the analysis.
"""

from __future__ import annotations

from typing import Iterator

from leaklint.analysis import nodes as cst
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name
from leaklint.analysis.provenance import StatementFact
from leaklint.analysis.accumulate import grown_tensor
from leaklint.analysis.structure import iterates_data
from leaklint.analysis.values import strongest_graph
from leaklint.fixspec import MAPPING, container_usage, detach_each_fix, detach_fix
from leaklint.rule import Violation


#: Container methods that store their argument(s), and which positional argument is stored.
_STORING_METHODS = {"append": 0, "appendleft": 0, "add": 0, "extend": 0, "insert": 1, "put": 0}


def check(facts: ModuleFacts) -> Iterator[Violation]:
    """LL102's violations in one file (``TensorCollection.check``)."""
    yield from _through_methods(facts)
    for fact in facts.statements():
        yield from _collected_by_comprehension(facts, fact)
        for container, stored in _stores(fact.node, facts):
            value = strongest_graph([facts.value(expr) for expr in stored])
            if value is None:
                continue
            lifetime = facts.lifetime(fact, container)
            # A store that outlives the call grows with every call of the function, except in
            # ``__init__``, which runs once per object: one graph per object is LL105's peak.
            per_call = (bool(fact.loops) or "." in container) and fact.function.name != "__init__"
            confidence = lifetime.leak_confidence(value.confidence, count_call_lifetime=per_call)
            if confidence is None:
                continue
            graphs = [expr for expr in stored if facts.value(expr).is_graph]
            culprit = graphs[0]
            if len(graphs) > 1 and isinstance(graphs[-1], (cst.List, cst.Tuple)):
                graphs.pop()  # `[loss, loss * 2]`: detach each element, not the list
            yield Violation(
                node=fact.node,
                message=(
                    f"'{facts.describe(culprit)}' is stored in '{container}' with its autograd graph; "
                    f"'{container}' outlives the iteration, so every stored graph stays alive"
                ),
                confidence=confidence,
                help=_help(facts, culprit),
                statement=fact.line,
                fix=detach_each_fix(facts, graphs, mapping_hint=True),
            )
            break


def _through_methods(facts: ModuleFacts) -> Iterator[Violation]:
    """``history.record(out)`` where ``record`` does ``self.values.append(value)``."""
    for store, argument, confidence in facts.graphs_kept_by_methods("append"):
        assert store.statement is not None
        yield Violation(
            node=store.node,
            message=(
                f"'{facts.describe(argument.expr)}' is stored by '{store.receiver}' ({store.method.name}() appends it "
                f"to {argument.attribute}) with its autograd graph; every stored graph stays alive"
            ),
            confidence=confidence,
            help=_help(facts, argument.expr),
            statement=store.statement.line,
            fix=detach_fix(facts, argument.expr, mapping_hint=True),
        )


def _collected_by_comprehension(facts: ModuleFacts, fact: StatementFact) -> Iterator[Violation]:
    """``outputs = [model(x) for x in loader]``: the comprehension is the loop, the list the container."""
    node = fact.node
    if not isinstance(node, cst.Assign) or len(node.targets) != 1:
        return
    value = node.value
    if not isinstance(value, (cst.ListComp, cst.SetComp, cst.DictComp)):
        return
    target = dotted_name(node.targets[0].target)
    if target is None or not iterates_data(value.for_in.iter, value.for_in.target):
        return
    element = value.value if isinstance(value, cst.DictComp) else value.elt
    stored = facts.value(element)
    if not stored.is_graph or target in facts.summary(fact.function).backward_consumed:
        return
    yield Violation(
        node=node,
        message=(
            f"'{facts.describe(element)}' is collected for every batch into '{target}' with its autograd graph; "
            "every batch's graph stays alive until the list goes"
        ),
        confidence=stored.confidence,
        help=_help(facts, element),
        statement=fact.line,
        fix=detach_fix(facts, element),
    )


def _help(facts: ModuleFacts, stored: cst.BaseExpression) -> str | None:
    receiver = facts.describe_receiver(stored)
    if receiver is None:
        return None
    if facts.derived(container_usage).get(dotted_name(stored) or "") == MAPPING:
        return f"store {{k: v.detach() for k, v in {receiver}.items()}} (or the numbers, with .item())"
    if receiver.endswith(".cpu()"):
        return f"store {receiver[: -len('.cpu()')]}.detach().cpu() (or use .item() for a scalar)"
    return f"store {receiver}.detach() (add .cpu() to free device memory, or use .item() for a scalar)"


def _container_name(expr: cst.BaseExpression) -> str | None:
    """``lst`` in ``lst.append``, ``d`` in ``d.setdefault(k, []).append`` / ``d[k].append``."""
    while True:
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("setdefault", "get"):
            expr = expr.func.value
        else:
            return dotted_name(expr)


def _stores(node: cst.BaseSmallStatement, facts: ModuleFacts) -> Iterator[tuple[str, list[cst.BaseExpression]]]:
    """(container, stored expressions) pairs of a statement."""
    if isinstance(node, cst.Expr) and isinstance(node.value, cst.Call):
        call = node.value
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in _STORING_METHODS:
            position = _STORING_METHODS[call.func.attr.value]
            positional = [a.value for a in call.args if a.keyword is None and not a.star]
            container = _container_name(call.func.value)
            if container and len(positional) > position:
                yield container, _elements(positional[position])
    elif isinstance(node, cst.Assign):
        for target in node.targets:
            if isinstance(target.target, cst.Subscript) and not _constant_key(target.target):
                container = _container_name(target.target)
                if container:
                    yield container, [node.value]
        if len(node.targets) == 1 and isinstance(node.value, cst.BinaryOperation):
            target_name = dotted_name(node.targets[0].target)
            value = node.value
            if target_name and isinstance(value.operator, cst.Add) and dotted_name(value.left) == target_name:
                if isinstance(value.right, (cst.List, cst.Tuple)):
                    yield target_name, _elements(value.right)
        if len(node.targets) == 1:
            grown = grown_tensor(node, facts.imports)
            if grown is not None:
                yield grown
    elif isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign):
        if isinstance(node.value, (cst.List, cst.Tuple)):
            container = _container_name(node.target)
            if container:
                yield container, _elements(node.value)


def _constant_key(target: cst.Subscript) -> bool:
    """``stats["last"] = t`` overwrites one slot every iteration: one graph kept, not a growing
    pile (a peak, not a leak)."""
    literals = (cst.SimpleString, cst.Integer, cst.Float, cst.ConcatenatedString)
    return all(
        isinstance(element.slice, cst.Index) and isinstance(element.slice.value, literals)
        for element in target.slice
    )


def _elements(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The values a stored expression puts in: list-literal elements, or the expression itself."""
    if isinstance(expr, (cst.List, cst.Tuple)):
        return [element.value for element in expr.elements] + [expr]
    return [expr]
