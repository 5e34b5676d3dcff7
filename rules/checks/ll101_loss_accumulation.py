"""How LL101 loss-accumulation finds its violations: ``check`` and its helpers.

The rule itself (documentation, examples, gate and runtime repro) is
:mod:`leaklint.rules.ll101_loss_accumulation`. Only files that pass the gate import this
module, and with it libcst and the analysis.
"""

from __future__ import annotations

from typing import Iterator

from leaklint.analysis import nodes as cst
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.accumulate import accumulation
from leaklint.analysis.carry import carried_states
from leaklint.analysis.names import dotted_name
from leaklint.analysis.structure import GradMode
from leaklint.analysis.values import strongest_graph
from leaklint.analysis.provenance import StatementFact
from leaklint.findings import Confidence
from leaklint.fixspec import MAPPING, container_usage, detach_fix
from leaklint.rule import Violation


def check(facts: ModuleFacts) -> Iterator[Violation]:
    """LL101's violations in one file (``LossAccumulation.check``)."""
    fed_back = _fed_back_accumulators(facts)
    for fact in facts.statements():
        if fact.grad is GradMode.DISABLED or not (fact.loops or fact.function.runs_per_step):
            continue
        found = accumulation(fact.node, facts.imports)
        if found is None:
            continue
        target, contributors = found.target, found.terms
        accumulated = strongest_graph([facts.value(c) for c in contributors])
        if accumulated is None or (target, fact.node) in fed_back:
            continue
        lifetime = facts.lifetime(fact, target)
        confidence = lifetime.leak_confidence(accumulated.confidence, count_call_lifetime=fact.function.runs_per_step)
        if confidence is None:
            continue
        source = next(c for c in contributors if facts.value(c) == accumulated)
        yield _violation(facts, fact, source, _target_text(facts, fact.node), confidence)
    yield from _through_methods(facts)


def _violation(facts: ModuleFacts, fact: StatementFact, source: cst.BaseExpression, into: str, confidence: Confidence, node: cst.CSTNode | None = None) -> Violation:
    receiver = facts.describe_receiver(source)
    return Violation(
        node=node or fact.node,
        message=(
            f"'{facts.describe(source)}' is accumulated into {into} with its autograd graph; "
            "every iteration's graph stays alive"
        ),
        confidence=confidence,
        help=_help(facts, source, receiver),
        statement=fact.line,
        fix=detach_fix(facts, source),
    )


def _help(facts: ModuleFacts, source: cst.BaseExpression, receiver: str | None) -> str | None:
    if receiver is None:
        return None
    if facts.derived(container_usage).get(dotted_name(source) or "") == MAPPING:
        return f"{receiver} is used as a mapping: accumulate its values' .item() (floats) one by one"
    return f"accumulate {receiver}.item() (a float) or {receiver}.detach() (a tensor)"


def _through_methods(facts: ModuleFacts) -> Iterator[Violation]:
    """``meter.update(loss)`` where ``update`` does ``self.sum += val``: reported at the call."""
    for store, argument, confidence in facts.graphs_kept_by_methods("accumulate"):
        into = f"'{store.receiver}' ({store.method.name}() adds it to {argument.attribute})"
        assert store.statement is not None
        yield _violation(facts, store.statement, argument.expr, into, confidence, node=store.node)


def _target_text(facts: ModuleFacts, node: cst.BaseSmallStatement) -> str:
    if isinstance(node, cst.AugAssign):
        target = node.target
    elif isinstance(node, cst.Assign):
        target = node.targets[0].target
    else:  # total.add_(loss)
        target = node.value.func.value  # type: ignore[attr-defined]
    return f"'{facts.describe(target)}'"


def _fed_back_accumulators(facts: ModuleFacts) -> set[tuple[str, cst.CSTNode]]:
    """(accumulator, accumulating statement) pairs whose running value is also an input of the
    next step's computation (``self.mu = 0.9 * self.mu + 0.1 * h.mean(0)`` then
    ``return h - self.mu``): the graphs chain through the computation, which is LL103's finding
    (reported where the value is fed back); this rule leaves those to it."""
    found: set[tuple[str, cst.CSTNode]] = set()
    for carry in carried_states(facts):
        if carry.crosses_steps and carry.feed is not None:
            found.update((carry.name, fact.node) for fact in carry.updates)
    return found
