"""How LL402 empty-cache-in-loop finds its violations: ``check`` and its helpers.

The rule itself (documentation, examples, gate and runtime repro) is
:mod:`leaklint.rules.ll402_empty_cache_in_loop`. Only files that pass the gate import this
module, and with it libcst and the analysis.
"""

from __future__ import annotations

import re
from typing import Iterator

from leaklint.analysis import nodes as cst
from leaklint.analysis.calls import CallGraph, call_graph
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.places import Level, Place, step_level
from leaklint.analysis.steps import is_per_step_hook
from leaklint.analysis.torch_api import EMPTY_CACHE, GC_COLLECT
from leaklint.analysis.walk import dotted_names_in, not_into_scopes, walk
from leaklint.findings import Confidence
from leaklint.rule import Violation
from leaklint.rules.ll402_empty_cache_in_loop import DL_FRAMEWORKS


_MEMORY_CHECK = re.compile(r"memory_allocated|memory_reserved|mem_get_info|max_memory|memory_usage|virtual_memory")


def is_throttled(test: cst.BaseExpression) -> bool:
    """``if step % N == 0`` (every N steps) or a memory-pressure check: runs now and then."""
    has_modulo = any(isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Modulo) for n in walk(test))
    return has_modulo or any(_MEMORY_CHECK.search(name) for name in dotted_names_in(test))


def check(facts: ModuleFacts) -> Iterator[Violation]:
    """LL402's violations in one file (``EmptyCacheInLoop.check``)."""
    targets = {GC_COLLECT, *EMPTY_CACHE}
    places = [
        place
        for place in facts.index.calls_named("empty_cache", "collect")
        if facts.imports.resolve(place.node.func) in targets  # type: ignore[attr-defined]
    ]
    if not places:
        return
    sites = call_graph(facts)
    uses_framework = facts.imports.imports_anything_from(*DL_FRAMEWORKS)
    for place in places:
        call = place.node
        is_gc = facts.imports.resolve(call.func) == GC_COLLECT  # type: ignore[attr-defined]
        if is_gc and not uses_framework:
            continue
        if place.in_recovery_code():
            continue
        found = _frequency(facts, place, sites)
        if found is None:
            continue
        confidence, where = found
        what = facts.describe(call)
        cost = (
            "a full collection walks every Python object and frees nothing still referenced"
            if is_gc
            else "it synchronises the device and hands cached blocks back to the driver, to be allocated "
            "again next step; it frees nothing a tensor still references"
        )
        yield Violation(
            node=call,
            message=f"'{what}' runs {where}: {cost}",
            confidence=confidence,
            statement=place.statement(),
        )


def _frequency(facts: ModuleFacts, place: Place, sites: CallGraph) -> tuple[Confidence, str] | None:
    """(confidence, where it runs) when the call runs once per training step, else None."""
    level, index = step_level(facts, place)
    if level in (Level.EPOCH, Level.OUTER):
        return None
    if level is not None:
        if any(is_throttled(test) for test in place.guards(after=index)):
            return Confidence.LOW, "in the loop now and then"
        loop = place.chain[index]
        if not _trains(facts, loop) and _deletes(loop):
            # `del out, batch; gc.collect()` per item of a heavy analysis loop: deliberate
            return Confidence.LOW, "on every iteration of the loop"
        return (Confidence.HIGH if level is Level.STEP else Confidence.MEDIUM), "on every step of the loop"
    info = place.function(facts)
    if info is None:
        return None
    throttled = any(is_throttled(test) for test in place.guards())
    if is_per_step_hook(info):
        return (Confidence.LOW if throttled else Confidence.MEDIUM), f"every step (in the per-batch hook '{info.name}')"
    for site in sites.places_of(info):
        site_level, site_index = step_level(facts, site)
        if site_level in (Level.STEP, Level.WEAK_STEP):
            if throttled or any(is_throttled(test) for test in site.guards(after=site_index)):
                return Confidence.LOW, f"every step ('{info.name}' is called in a training loop)"
            return Confidence.MEDIUM, f"every step ('{info.name}' is called in a training loop)"
    return None


def _trains(facts: ModuleFacts, loop: cst.CSTNode) -> bool:
    info = facts.structure.loops.get(loop)
    return info is not None and (info.has_backward or info.has_optimizer_step)


def _deletes(loop: cst.CSTNode) -> bool:
    """The loop body drops its per-iteration objects with ``del``."""
    body = getattr(loop, "body", loop)
    return any(isinstance(node, cst.Del) for node in walk(body, into=not_into_scopes))
