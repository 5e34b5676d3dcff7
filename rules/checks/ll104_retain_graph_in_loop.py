"""How LL104 retain-graph-in-loop finds its violations: ``check`` and its helpers.

The rule itself (documentation, examples, gate and runtime repro) is
:mod:`leaklint.rules.ll104_retain_graph_in_loop`. Only files that pass the gate import this
module, and with it libcst and the analysis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from leaklint.analysis import nodes as cst
from leaklint.analysis import torch_api
from leaklint.analysis.carry import CarriedState, bounded_carries, carried_states
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name
from leaklint.analysis.provenance import StatementFact
from leaklint.analysis.structure import LoopInfo, backward_calls, backward_target, bound_names, names_bound_in
from leaklint.analysis.syntax import keyword_is_true
from leaklint.analysis.values import Kind
from leaklint.analysis.walk import calls_in, names_read, not_into_scopes, walk
from leaklint.findings import Applicability, Confidence
from leaklint.fixspec import SuggestedFix, drop_argument
from leaklint.rule import Violation


def check(facts: ModuleFacts) -> Iterator[Violation]:
    """LL104's violations in one file (``RetainGraphInLoop.check``)."""
    for fact in facts.statements():
        if not fact.loops:
            continue
        for call in _retaining_calls(fact, facts):
            finding = _judge(facts, fact, call)
            if finding is not None:
                yield finding


def _retaining_calls(fact: StatementFact, facts: ModuleFacts) -> Iterator[cst.Call]:
    """Backward calls in the statement with a literal ``retain_graph=True`` (not ``create_graph=True``)."""
    for call in calls_in(fact.node):
        if backward_target(call, facts.imports) is not None:
            if keyword_is_true(call, "retain_graph") and not keyword_is_true(call, "create_graph"):
                yield call


@dataclass(frozen=True)
class _Situation:
    """Where the retaining call stands in its iteration."""

    later_backward: bool
    earlier_backward: bool


def _situation(loop: LoopInfo, call: cst.Call, facts: ModuleFacts) -> _Situation:
    calls = backward_calls(loop.node.body, facts.imports)
    position = next((i for i, c in enumerate(calls) if c is call), len(calls))
    return _Situation(later_backward=position < len(calls) - 1, earlier_backward=position > 0)


def _judge(facts: ModuleFacts, fact: StatementFact, call: cst.Call) -> Violation | None:
    loop = fact.loops[-1]
    situation = _situation(loop, call, facts)
    if situation.later_backward:
        return None  # a second backward through the same graph: what retain_graph is for
    target = backward_target(call, facts.imports)
    assert target is not None
    bound_in_loop = _bound_in(loop)
    if not _built_in_iteration(target, bound_in_loop, facts):
        return None  # differentiating a graph built before the loop, again and again
    deps = facts.value(target).deps | _inputs_in_loop(target, loop)
    if any(_graph_from_before(facts, fact, loop, name) for name in deps - bound_in_loop):
        return None  # part of the graph comes from before the loop: retained on purpose
    if deps & bounded_carries(facts, loop):
        return None  # a state kept with its graph for k steps, then reset: the next backward needs it
    carried = _carried_into(facts, fact, deps)
    if carried:
        names = " and ".join(f"'{c.name}'" for c in carried)
        return Violation(
            node=fact.node,
            message=(
                f"retain_graph=True keeps the graph of '{facts.describe(target)}' alive, and {names} "
                f"{'carry' if len(carried) > 1 else 'carries'} the graph into the next iteration, so every "
                "retained graph stays reachable: memory grows every iteration"
            ),
            confidence=Confidence.HIGH,
            help=f"detach {names} between iterations ({carried[0].name} = {carried[0].name}.detach()) and drop retain_graph=True",
            statement=fact.line,
        )
    return Violation(
        node=fact.node,
        message=(
            f"retain_graph=True on the last backward of the iteration keeps the graph of '{facts.describe(target)}' "
            "and its saved activations alive until the next iteration replaces them"
        ),
        confidence=Confidence.MEDIUM if situation.earlier_backward else Confidence.HIGH,
        help=None,
        statement=fact.line,
        fix=_drop_retain_graph(facts, call),
    )


def _drop_retain_graph(facts: ModuleFacts, call: cst.Call) -> SuggestedFix | None:
    """``loss.backward(retain_graph=True)`` → ``loss.backward()``.

    Unsafe: a later backward through the same graph that leaklint did not see would now fail.
    Not offered when a carried state still links the iterations' graphs (the finding above):
    without ``retain_graph`` the next backward would fail until the state is detached, which
    LL103's fix does; once it is, the next ``--fix`` pass offers this one.
    """
    argument = next(arg for arg in call.args if arg.keyword is not None and arg.keyword.value == "retain_graph")
    edit = drop_argument(facts.module, call, argument)
    return SuggestedFix("Drop 'retain_graph=True'", Applicability.UNSAFE, (edit,)) if edit is not None else None


def _graph_from_before(facts: ModuleFacts, fact: StatementFact, loop: LoopInfo, name: str) -> bool:
    """``name`` may hold a graph built before the loop: it is known to, or it is the result of a
    computation there (``feats = model.backbone(x)``) that leaklint cannot see through; a loop
    target or a parameter (the data) does not count."""
    value = fact.env.get(name)
    if value is None or value.role is not None or value.kind in (Kind.DETACHED, Kind.NOT_TENSOR):
        return False
    if value.kind is Kind.GRAPH:
        return True
    scope = fact.function.node if fact.function.node is not None else facts.module
    for node in walk(scope, into=lambda n: n is scope or (not_into_scopes(n) and n is not loop.node)):
        if isinstance(node, cst.Assign) and any(name in bound_names(t.target) for t in node.targets):
            if _is_computation(node.value, facts):
                return True
    return False


def _is_computation(expr: cst.BaseExpression, facts: ModuleFacts) -> bool:
    """A call that may build a graph (not ``x.to(device)``, not a known detached result)."""
    if not isinstance(expr, cst.Call) or facts.value(expr).kind in (Kind.DETACHED, Kind.NOT_TENSOR):
        return False
    func = expr.func
    return not (isinstance(func, cst.Attribute) and func.attr.value in torch_api.VIEW_METHODS)


def _carried_into(facts: ModuleFacts, fact: StatementFact, deps: set[str] | frozenset[str]) -> list[CarriedState]:
    """Carried states (LL103's fact) of an enclosing loop that the differentiated tensor depends on."""
    found: dict[str, CarriedState] = {}
    for carry in carried_states(facts):
        if carry.loop is not None and carry.name in deps and carry.crosses_steps:
            if any(loop is carry.loop for loop in fact.loops):
                found.setdefault(carry.name, carry)
    return list(found.values())


def _built_in_iteration(target: cst.BaseExpression, bound_in_loop: set[str], facts: ModuleFacts) -> bool:
    """The differentiated tensor is computed in the iteration: a name bound in the loop body, or a
    call made right there (``criterion(model(x), y).backward(...)``), not ``y[i]`` of an outer ``y``."""
    return any(root is None or root in bound_in_loop for root in _tensor_roots(target, facts))


def _tensor_roots(expr: cst.BaseExpression, facts: ModuleFacts) -> list[str | None]:
    """The names whose tensor ``expr`` is computed from (None: made by a call inside ``expr``)."""
    name = dotted_name(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
    if name is not None:
        return [name]
    if isinstance(expr, (cst.Attribute, cst.Subscript)):
        return _tensor_roots(expr.value, facts)
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and facts.value(func.value).role is None:
            return _tensor_roots(func.value, facts)  # out.sum(), y[i].mean(), (a + b).sum()
        return [None]  # criterion(out, y), model(x), self.head(features)
    if isinstance(expr, cst.BinaryOperation):
        return _tensor_roots(expr.left, facts) + _tensor_roots(expr.right, facts)
    if isinstance(expr, cst.UnaryOperation):
        return _tensor_roots(expr.expression, facts)
    return []


def _inputs_in_loop(target: cst.BaseExpression, loop: LoopInfo) -> set[str]:
    """Every name the differentiated tensor is computed from, following the assignments of the
    loop body back (syntactically: it sees through calls the value analysis cannot follow)."""
    sources: dict[str, set[str]] = {}
    for node in walk(loop.node.body, into=not_into_scopes):
        if isinstance(node, cst.Assign):
            read = names_read(node.value)
            for assign_target in node.targets:
                for name in bound_names(assign_target.target):
                    sources.setdefault(name, set()).update(read)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)) and node.value is not None:
            for name in bound_names(node.target):
                sources.setdefault(name, set()).update(names_read(node.value))
    found = set()
    pending = list(names_read(target))
    while pending:
        name = pending.pop()
        if name in found:
            continue
        found.add(name)
        pending.extend(sources.get(name, ()))
    return found


def _bound_in(loop: LoopInfo) -> set[str]:
    """Every dotted name bound anywhere in the loop body (including ``t = t + x`` and loop targets)."""
    names = names_bound_in(loop.node.body)
    if isinstance(loop.node, cst.For):
        names.update(bound_names(loop.node.target))
    return names
