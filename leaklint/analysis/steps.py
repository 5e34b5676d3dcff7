"""Which functions run again and again: once per training step, or once per step or epoch.

A statement inside a loop repeats with the loop (``facts.statements()`` and :mod:`places` know
its loops); a statement in a function repeats when the function does. That is known from three
kinds of evidence, from the most to the least direct:

- a framework calls it: ``FunctionInfo.runs_per_step`` (``forward``, ``training_step``... of a
  class, whose ``self.*`` outlive the call; the provenance pass uses it), :func:`is_per_step_hook`
  (Lightning steps and Keras / HF / Lightning callback hooks that run per batch) and
  :func:`is_framework_hook` (any method named like a per-step or per-epoch hook);
- its name or body says it is one step: :data:`STEP_FUNCTION_NAMES`, or it runs a backward
  that no loop of its own repeats;
- the file calls it from a loop that repeats per input (``LoopInfo.repeats_per_input``: an
  iteration loop, or a loop that runs the model on each item), or from another function that
  runs every step (:func:`per_step_functions` follows the calls, methods of objects built from the
  file's classes included), or hands it to a call made there (``optimizer.step(closure)``: whoever
  gets it calls it).

The notions differ on purpose: a figure left open per epoch leaks as surely as one per step,
while an ``empty_cache()`` per epoch is harmless. Each rule picks the one its docs describe.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from leaklint.analysis.calls import call_graph, function_named
from leaklint.analysis.structure import FunctionInfo, backward_target
from leaklint.analysis.torch_api import FRAMEWORK_HOOK_NAME, PER_STEP_HOOK, STEP_FUNCTION_NAMES
from leaklint.analysis.walk import calls_in

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.analysis.provenance import StatementFact

def is_per_step_hook(info: FunctionInfo) -> bool:
    """A method a framework calls once per batch: Lightning steps, Keras/HF/Lightning callbacks."""
    if info.cls is None or not PER_STEP_HOOK.match(info.name):
        return False
    return info.cls.is_lightning or any("Callback" in base for base in info.cls.base_names)


def is_framework_hook(info: FunctionInfo) -> bool:
    """A method named like a hook a framework calls every step or epoch, whatever its class."""
    return info.is_method and bool(FRAMEWORK_HOOK_NAME.match(info.name))


def per_step_functions(facts: ModuleFacts) -> dict[FunctionInfo, str]:
    """Functions that run once per training/evaluation step, with the reason (for messages).

    Seeds: ``forward``/``training_step``/``step``... by name, a function that runs backward
    outside its own loops, and a local function called inside a loop that repeats per input. Whatever a
    per-step function calls in the same file runs once per step too. Built once per file.
    """
    return facts.derived(_per_step_functions)


def _per_step_functions(facts: ModuleFacts) -> dict[FunctionInfo, str]:
    graph = call_graph(facts)
    found: dict[FunctionInfo, str] = {}
    for info in facts.structure.functions.values():
        if info.name in STEP_FUNCTION_NAMES:
            found[info] = f"'{info.name}' runs every training step"
        elif info.backward_names and _backward_outside_loops(facts.index.statements_of(info), facts):
            found[info] = f"'{info.name}' runs one training step"
    for _, fact, callee in graph.resolved:
        if callee is not None and any(loop.repeats_per_input for loop in fact.loops):
            if callee not in found and callee.name != "__init__":
                found[callee] = f"'{callee.name}' is called in a loop over iterations"
    for callback, fact in _functions_handed_to_calls(facts):
        if callback not in found and any(loop.repeats_per_input for loop in fact.loops):
            found[callback] = f"'{callback.name}' is handed to a call in a loop over iterations"
    frontier = list(found)
    handed: dict[FunctionInfo, list[FunctionInfo]] = {}
    for callback, fact in _functions_handed_to_calls(facts):
        handed.setdefault(fact.function, []).append(callback)
    while frontier:
        caller = frontier.pop()
        callees = [callee for _, callee in graph.callees_of(caller)] + handed.get(caller, [])
        for callee in callees:
            if callee not in found and callee.name != "__init__":
                found[callee] = f"'{callee.name}' is called from '{caller.name}', which runs every step"
                frontier.append(callee)
    return found


def _functions_handed_to_calls(facts: ModuleFacts) -> list[tuple[FunctionInfo, StatementFact]]:
    """Local functions passed as an argument to a call (``optimizer.step(closure)``,
    ``engine.add_handler(log)``): whoever gets them calls them, each time the call runs."""
    found = []
    for call, fact in facts.index.statement_calls:
        for arg in call.args:
            if isinstance(arg.value, cst.Name):
                node = function_named(arg.value.value, fact.function, facts)
                info = facts.structure.functions.get(node) if node is not None else None
                if info is not None:
                    found.append((info, fact))
    return found


def _backward_outside_loops(statements: list[StatementFact], facts: ModuleFacts) -> bool:
    """The function itself is one training step: it runs a backward that no loop of its own repeats."""
    return any(
        not fact.loops and any(backward_target(call, facts.imports) is not None for call in calls_in(fact.node))
        for fact in statements
    )
