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

:func:`repeated_functions` is the widest notion: functions that run many times in one process,
once per step, epoch, evaluation, hyperparameter trial or web request. An object a function
builds and keeps on every call piles up with it (LL304-LL306 ask this).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from leaklint.analysis import percall_api
from leaklint.analysis.calls import call_graph, caller_of, function_named, local_callee
from leaklint.analysis.structure import ClassInfo, FunctionInfo, backward_target
from leaklint.analysis.syntax import call_argument
from leaklint.analysis.torch_api import FRAMEWORK_HOOK_NAME, PER_STEP_HOOK, STEP_FUNCTION_NAMES
from leaklint.analysis.values import Role
from leaklint.analysis.walk import calls_in

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.analysis.provenance import StatementFact

#: A loop whose header allows at most this many iterations (``for split in ("val", "test")``)
#: calls its body a few times, not "many times".
FEW_ITERATIONS = 20

#: Lightning before 2.0: the step hooks whose every return value the Trainer keeps until the
#: epoch ends, for the epoch-end hook named here (``validation_epoch_end(self, outputs)``), only
#: when that hook is overridden (from 1.5; 1.4 and earlier kept evaluation outputs even without
#: it). Lightning 2.0 removed these hooks (PR 16520). Not here: ``predict_step``, whose results
#: ``trainer.predict`` keeps with ``return_predictions`` but moves to the CPU first (since 1.5,
#: PR 9085), and ``on_*_batch_end(outputs)`` callbacks, which see one batch's outputs and keep none.
LIGHTNING_EPOCH_OUTPUTS: dict[str, str] = {
    "training_step": "training_epoch_end",
    "validation_step": "validation_epoch_end",
    "test_step": "test_epoch_end",
}
#: Of those, the epoch-end hooks of evaluation (validation, test): epoch-level metrics that need
#: every prediction at once (AUROC, average precision) are computed there.
LIGHTNING_EVALUATION_EPOCH_ENDS = frozenset({"validation_epoch_end", "test_epoch_end"})


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

    Seeds: ``forward``/``training_step``/``step``... by name, a framework's per-batch hook
    (``validation_step`` of a Lightning module, a callback's ``on_batch_end``), a function that runs backward
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
        elif is_per_step_hook(info):
            found[info] = f"the framework calls '{info.name}' once per batch"
        elif info.backward_names and _backward_outside_loops(facts.index.statements_of(info), facts):
            found[info] = f"'{info.name}' runs one training step"
    for _, fact, callee in graph.resolved:
        if callee is not None and _repeats_per_input(fact):
            if callee not in found and callee.name != "__init__":
                found[callee] = f"'{callee.name}' is called in a loop over iterations"
    for callback, fact in _functions_handed_to_calls(facts):
        if callback not in found and _repeats_per_input(fact):
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


def _repeats_per_input(fact: StatementFact) -> bool:
    """A loop around the statement repeats once per input: an iteration loop (``for epoch in
    range(5):`` around a data loop counts, its bound stands for a run's length), or a loop that runs
    the model on each item when its header does not bound it by a few literal iterations (``for
    flag in [True, False]: run(model, flag)`` runs two configurations, not every step)."""
    return any(
        loop.is_iteration_loop or (loop.repeats_per_input and (loop.at_most is None or loop.at_most > FEW_ITERATIONS))
        for loop in fact.loops
    )


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


# --- functions that run many times ----------------------------------------------------------------
def repeated_functions(facts: ModuleFacts) -> dict[FunctionInfo, str]:
    """Functions that run many times in one process, with the reason (for messages):

    - once per step (:func:`per_step_functions`);
    - hooks a framework calls every step, epoch or evaluation (``on_validation_epoch_end``,
      ``validation_step``...: :data:`~leaklint.analysis.percall_api.REPEATED_HOOK`);
    - once per hyperparameter trial: the objective handed to ``study.optimize`` (directly or
      through a lambda), its ``callbacks=``, a ``model_init=`` of a trainer
      (:data:`~leaklint.analysis.percall_api.TRIAL_DRIVERS`);
    - once per request: handlers registered with ``@app.post(...)`` and the like;
    - called from a loop that is not bounded by a few literal iterations, including methods called
      on instances of the file's classes (``validation.encode(step)``);
    - and whatever such a function calls in the file. Built once per file.
    """
    return facts.derived(_repeated_functions)


def _repeated_functions(facts: ModuleFacts) -> dict[FunctionInfo, str]:
    found: dict[FunctionInfo, str] = dict(per_step_functions(facts))
    for info in facts.structure.functions.values():
        if info not in found and info.is_method and percall_api.REPEATED_HOOK.match(info.name):
            found[info] = f"'{info.name}' is a hook the framework calls every step, epoch or evaluation"
    for info, reason in _driven_functions(facts):
        found.setdefault(info, reason)
    for info in _request_handlers(facts):
        found.setdefault(info, f"'{info.name}' handles a web request: it runs once per request")
    for call, fact, callee in resolved_calls(facts):
        if callee is None or callee in found or callee.name == "__init__":
            continue
        if any(loop.at_most is None or loop.at_most > FEW_ITERATIONS for loop in fact.loops):
            found[callee] = f"'{callee.name}' is called in a loop"
    frontier = list(found)
    callees = _callees_by_caller(facts)
    while frontier:
        caller = frontier.pop()
        for callee in callees.get(caller, ()):
            if callee not in found and callee.name != "__init__":
                found[callee] = f"'{callee.name}' is called from '{caller.name}', which {_runs_many_times(found[caller])}"
                frontier.append(callee)
    return found


def _runs_many_times(reason: str) -> str:
    return "runs once per trial" if "trial" in reason else "runs many times"


def resolved_calls(facts: ModuleFacts) -> list[tuple[cst.Call, StatementFact, FunctionInfo | None]]:
    """The call graph's calls, with calls of methods on instances of the file's classes resolved
    too (``validation.encode(step)`` where ``validation = ValidationPrompts(...)``)."""
    return facts.derived(_calls_with_instances)


def _calls_with_instances(facts: ModuleFacts) -> list[tuple[cst.Call, StatementFact, FunctionInfo | None]]:
    resolved = []
    for call, fact, callee in call_graph(facts).resolved:
        if callee is None:
            callee = instance_method(call, facts)
        resolved.append((call, fact, callee))
    return resolved


def _callees_by_caller(facts: ModuleFacts) -> dict[FunctionInfo, list[FunctionInfo]]:
    callees: dict[FunctionInfo, list[FunctionInfo]] = {}
    for _, fact, callee in resolved_calls(facts):
        if callee is not None:
            callees.setdefault(fact.function, []).append(callee)
    return callees


def instance_method(call: cst.Call, facts: ModuleFacts) -> FunctionInfo | None:
    """The method of a class of the file that ``obj.method(...)`` runs when ``obj`` is an instance
    of that class, or the ``__call__`` that ``obj(...)`` runs."""
    func = call.func
    if isinstance(func, cst.Attribute):
        cls = _instance_class(func.value, facts)
        node = cls.find_method(func.attr.value) if cls is not None else None
    else:
        cls = _instance_class(func, facts)
        node = cls.find_method("__call__") if cls is not None else None
    return facts.structure.functions.get(node) if node is not None else None


def _instance_class(expr: cst.BaseExpression, facts: ModuleFacts) -> ClassInfo | None:
    value = facts.value(expr)
    if value.role is Role.INSTANCE and isinstance(value.cls, ClassInfo):
        return value.cls
    return None


def _driven_functions(facts: ModuleFacts) -> list[tuple[FunctionInfo, str]]:
    """Callables a library calls once per trial: ``study.optimize(objective, callbacks=[...])``,
    ``Trainer(model_init=...)``, ``tune.run(trainable)``..."""
    found: list[tuple[FunctionInfo, str]] = []
    for name, position, keyword, packages in percall_api.TRIAL_DRIVERS:
        if not facts.imports.imports_anything_from(*packages):
            continue
        for place in facts.index.calls_named(name):
            call = place.node
            assert isinstance(call, cst.Call)
            scope = caller_of(place, facts)
            target = call_argument(call, position, keyword)
            for info in _callables(target, scope, facts):
                found.append((info, f"'{info.name}' is the objective of '{name}': it runs once per trial"))
            callbacks = percall_api.TRIAL_CALLBACK_KEYWORDS.get(name)
            listed = call_argument(call, -1, callbacks) if callbacks else None
            if isinstance(listed, (cst.List, cst.Tuple)):
                for element in listed.elements:
                    for info in _callables(element.value, scope, facts):
                        found.append((info, f"'{info.name}' is a callback of '{name}': it runs once per trial"))
    for place in facts.index.ordered_calls:
        call = place.node
        assert isinstance(call, cst.Call)
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in percall_api.PER_TRIAL_KEYWORDS:
                for info in _callables(arg.value, caller_of(place, facts), facts):
                    found.append((info, f"'{info.name}' is passed as {arg.keyword.value}=: the trainer calls it once per trial"))
    return found


def _callables(expr: cst.BaseExpression | None, scope: FunctionInfo, facts: ModuleFacts) -> list[FunctionInfo]:
    """The functions of the file that calling ``expr`` runs: a function, a lambda's calls, an
    instance's ``__call__``, a bound method ``self.objective``."""
    if expr is None:
        return []
    if isinstance(expr, cst.Lambda):
        found = []
        for call in calls_in(expr.body) if not isinstance(expr.body, cst.Call) else [expr.body, *calls_in(expr.body)]:
            callee = local_callee(call, scope, facts)
            if callee is not None and callee not in found:
                found.append(callee)
        return found
    if isinstance(expr, cst.Name):
        node = function_named(expr.value, scope, facts)
        if node is not None:
            return [facts.structure.functions[node]]
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value in ("self", "cls"):
        node = scope.cls.find_method(expr.attr.value) if scope.cls is not None else None
        if node is not None:
            return [facts.structure.functions[node]]
    if isinstance(expr, cst.Call):
        cls = facts.structure.classes_by_name.get(expr.func.value) if isinstance(expr.func, cst.Name) else None
    else:
        cls = _instance_class(expr, facts)
    method = cls.find_method("__call__") if cls is not None else None
    return [facts.structure.functions[method]] if method is not None else []


def _request_handlers(facts: ModuleFacts) -> list[FunctionInfo]:
    """Functions registered as web request handlers: ``@app.post("/train")``, ``@app.route(...)``."""
    if not facts.imports.imports_anything_from(*percall_api.WEB_FRAMEWORKS):
        return []
    found = []
    for name in percall_api.ROUTE_DECORATORS:
        for place in facts.index.decorated_with(name):
            node = place.node
            assert isinstance(node, cst.FunctionDef)
            if any(_is_route(decorator.decorator) for decorator in node.decorators):
                found.append(facts.structure.functions[node])
    return found


def _is_route(expr: cst.BaseExpression) -> bool:
    """``@app.post("/path")``: a call of a route method on an object (not ``@property`` or ``@get``)."""
    return (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value in percall_api.ROUTE_DECORATORS
    )
