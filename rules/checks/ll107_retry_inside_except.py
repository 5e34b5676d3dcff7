"""How LL107 retry-inside-except finds its violations: ``check`` and its helpers.

The rule itself (documentation, examples, gate and runtime repro) is
:mod:`leaklint.rules.ll107_retry_inside_except`. Only files that pass the gate import this
module, and with it libcst and the analysis.
"""

from __future__ import annotations

import re
from typing import Iterator

from leaklint.analysis import nodes as cst
from leaklint.analysis import torch_api
from leaklint.analysis.calls import call_graph, local_callee
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name
from leaklint.analysis.structure import FunctionInfo, backward_target
from leaklint.analysis.walk import calls_in, not_into_scopes, walk
from leaklint.findings import Confidence
from leaklint.rule import Violation


#: Exception classes that are out-of-memory errors (matched on the qualified or written name).
_OOM_EXCEPTION = re.compile(r"(^|\.)(OutOfMemoryError|MemoryError)$")
#: Catch-alls that also catch out-of-memory errors.
_GENERIC_EXCEPTIONS = frozenset({"RuntimeError", "Exception", "BaseException"})
#: Text that an out-of-memory check compares the message with.
_OOM_TEXT = re.compile(r"out of memory|\boom\b|can't allocate|cannot allocate|CUDNN_STATUS_NOT_SUPPORTED", re.I)
#: Helpers that classify an exception as out-of-memory (accelerate, torchtnt, espnet, own code).
_OOM_PREDICATE = re.compile(r"(is_)?(cuda_)?(out_of_memory|oom)(_error|_exception)?$|should_reduce_batch_size$", re.I)
#: Calls that neither allocate nor retry: logging, cache clearing, bookkeeping.
_HARMLESS_CALLS = re.compile(
    r"^(print|len|str|repr|int|float|bool|range|isinstance|hasattr|getattr|setattr|type|format|min|max|"
    r"sum|abs|round|sorted|list|tuple|dict|set|iter|next|enumerate|zip)$"
    r"|(^|\.)(log|debug|info|warning|warn|error|exception|critical|write|flush|format|append|extend|"
    r"empty_cache|collect|synchronize|reset_peak_memory_stats|memory_summary|memory_allocated|"
    r"max_memory_allocated|memory_reserved|zero_grad|sleep|exit|item|clear|pop|update|add_scalar|"
    r"set_description|set_postfix|barrier|get|keys|values|items|join|startswith|endswith|lower|upper|"
    r"to|cuda|cpu|half|float|eval|train|state_dict|load_state_dict|save|save_checkpoint)$"
)


def check(facts: ModuleFacts) -> Iterator[Violation]:
    """LL107's violations in one file (``RetryInsideExcept.check``)."""
    allocating: set[FunctionInfo] | None = None
    model_calls: set[cst.Call] = set()
    for node in walk(facts.module, into=_statements_only):
        if not isinstance(node, (cst.Try, cst.TryStar)):
            continue
        handlers = [h for h in node.handlers if _handler_kind(h, facts) is not None]
        if not handlers:
            continue
        if allocating is None:
            allocating = _allocating_functions(facts)
            model_calls = {call.node for call in facts.model_calls()}
        tried = _callees(node.body)
        for handler in handlers:
            violation = _check_handler(handler, node, tried, allocating, model_calls, facts)
            if violation is not None:
                yield violation


def _statements_only(node: cst.CSTNode) -> bool:
    """Walk statements, not expressions: ``try`` only appears at statement level."""
    return not isinstance(node, (cst.SimpleStatementLine, cst.BaseExpression, cst.Decorator, cst.Parameters))


def _check_handler(
    handler: cst.ExceptHandler | cst.ExceptStarHandler,
    try_node: cst.Try | cst.TryStar,
    tried: set[str],
    allocating: set[FunctionInfo],
    model_calls: set[cst.Call],
    facts: ModuleFacts,
) -> Violation | None:
    kind = _handler_kind(handler, facts)
    if kind is None:
        return None
    statements = list(_small_statements(handler.body))
    function = _enclosing_function(statements, facts)
    found = None
    for small, line in statements:
        for call in calls_in(small):
            reason = _allocation(call, function, tried, allocating, model_calls, facts)
            if reason is not None:
                found = (call, line, reason)
                break
        if found is not None:
            break
    if found is None:
        return None
    call, line, reason = found
    if kind == "oom":
        confidence, caught = Confidence.HIGH, "an out-of-memory error"
    else:
        if not _allocates(try_node.body, function, allocating, model_calls, facts):
            return None  # a catch-all around loading or parsing: a fallback, not an OOM retry
        confidence, caught = Confidence.MEDIUM, f"'{_caught_text(handler, facts)}' (which includes out-of-memory errors)"
    return Violation(
        node=call,
        message=(
            f"'{facts.describe(call)}' {reason} inside the except clause for {caught}; the exception's "
            "traceback keeps the failed step's frames and tensors alive, so this allocates on top of them"
        ),
        confidence=confidence,
        statement=line,
    )


def _handler_kind(handler: cst.ExceptHandler | cst.ExceptStarHandler, facts: ModuleFacts) -> str | None:
    """"oom" for a clause that is about running out of memory, "generic" for a catch-all, else None."""
    types = _caught_types(handler)
    if not types:
        kind = "generic"  # a bare except:
    else:
        names = [facts.imports.resolve(t) or dotted_name(t) or "" for t in types]
        if any(_OOM_EXCEPTION.search(name) for name in names):
            return "oom"
        if not any(name.rsplit(".", 1)[-1] in _GENERIC_EXCEPTIONS for name in names):
            return None
        kind = "generic"
    return "oom" if _checks_for_oom(handler.body) else kind


def _caught_types(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> list[cst.BaseExpression]:
    if handler.type is None:
        return []
    if isinstance(handler.type, cst.Tuple):
        return [element.value for element in handler.type.elements]
    return [handler.type]


def _caught_text(handler: cst.ExceptHandler | cst.ExceptStarHandler, facts: ModuleFacts) -> str:
    return f"except {facts.describe(handler.type)}" if handler.type is not None else "except:"


def _checks_for_oom(body: cst.BaseSuite) -> bool:
    """The clause compares the message with "out of memory" or asks an ``is_oom(e)`` helper."""
    for node in walk(body, into=not_into_scopes):
        if isinstance(node, cst.SimpleString) and _OOM_TEXT.search(node.value):
            return True
        if isinstance(node, cst.FormattedStringText) and _OOM_TEXT.search(node.value):
            return True
        if isinstance(node, cst.Call):
            name = dotted_name(node.func) or ""
            if _OOM_PREDICATE.search(name.rsplit(".", 1)[-1]):
                return True
    return False


def _small_statements(body: cst.BaseSuite) -> Iterator[tuple[cst.BaseSmallStatement, cst.CSTNode]]:
    """Every simple statement of a block, in order, with the line holding it (nested defs skipped)."""
    if isinstance(body, cst.SimpleStatementSuite):
        for small in body.body:
            yield small, body
        return
    for statement in body.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                yield small, statement
        elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        else:
            for child in _blocks(statement):
                yield from _small_statements(child)


def _blocks(statement: cst.BaseCompoundStatement) -> Iterator[cst.BaseSuite]:
    """The blocks of a compound statement, in source order."""
    yield statement.body
    if isinstance(statement, cst.If) and statement.orelse is not None:
        if isinstance(statement.orelse, cst.If):
            yield from _blocks(statement.orelse)
        else:
            yield statement.orelse.body
    elif isinstance(statement, (cst.For, cst.While)) and statement.orelse is not None:
        yield statement.orelse.body
    elif isinstance(statement, (cst.Try, cst.TryStar)):
        for handler in statement.handlers:
            yield handler.body
        if statement.orelse is not None:
            yield statement.orelse.body
        if statement.finalbody is not None:
            yield statement.finalbody.body
    elif isinstance(statement, cst.Match):
        for case in statement.cases:
            yield case.body


def _enclosing_function(statements: list[tuple[cst.BaseSmallStatement, cst.CSTNode]], facts: ModuleFacts) -> FunctionInfo:
    for small, _ in statements:
        fact = facts.statement_fact(small)
        if fact is not None:
            return fact.function
    return facts.structure.top


def _callees(body: cst.BaseSuite) -> set[str]:
    """Dotted names of the functions a block calls (what a retry would call again)."""
    names = set()
    for small, _ in _small_statements(body):
        for call in calls_in(small):
            name = dotted_name(call.func)
            if name is not None and not _HARMLESS_CALLS.search(name):
                names.add(name)
    return names


def _allocation(
    call: cst.Call,
    function: FunctionInfo,
    tried: set[str],
    allocating: set[FunctionInfo],
    model_calls: set[cst.Call],
    facts: ModuleFacts,
) -> str | None:
    """Why ``call`` allocates again (a short phrase for the message), or None."""
    if backward_target(call, facts.imports) is not None:
        return "runs backward"
    if _is_optimizer_step(call):
        return "steps the optimizer"
    if call in model_calls:
        return "runs the model"
    callee = local_callee(call, function, facts)
    if callee is not None:
        # a function of this file is judged by what it does, not by being called twice
        if callee is function:
            return "retries the function recursively"
        return f"runs '{callee.name}' (which runs the model or backward)" if callee in allocating else None
    name = dotted_name(call.func)
    if name is not None and name in tried:
        return "retries the call"
    return None


def _is_optimizer_step(call: cst.Call) -> bool:
    """``optimizer.step()`` / ``scaler.step(optimizer)`` (not a scheduler's step)."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "step"):
        return False
    receiver = (dotted_name(func.value) or "").rsplit(".", 1)[-1]
    if re.search("sched", receiver, re.I):
        return False
    if torch_api.OPTIMIZER_NAME.search(receiver):
        return True
    return any(torch_api.OPTIMIZER_NAME.search((dotted_name(a.value) or "").rsplit(".", 1)[-1]) for a in call.args)


def _allocates(body: cst.BaseSuite, function: FunctionInfo, allocating: set[FunctionInfo], model_calls: set[cst.Call], facts: ModuleFacts) -> bool:
    """The ``try`` body does work that can run out of memory (forward, backward, step, helper)."""
    for small, _ in _small_statements(body):
        for call in calls_in(small):
            if _allocation(call, function, set(), allocating, model_calls, facts) is not None:
                return True
    return False


def _allocating_functions(facts: ModuleFacts) -> set[FunctionInfo]:
    """Functions of the file that run a model forward, a backward or an optimizer step, directly
    or through another such function."""
    found = {call.statement.function for call in facts.model_calls() if call.statement is not None}
    found |= {info for info in facts.structure.functions.values() if info.backward_names}
    callers: dict[FunctionInfo, set[FunctionInfo]] = {}
    for call, fact, callee in call_graph(facts).resolved:
        caller = fact.function
        if caller.is_module_level:
            continue
        if _is_optimizer_step(call):
            found.add(caller)
        if callee is not None:
            callers.setdefault(callee, set()).add(caller)
    frontier = list(found)
    while frontier:
        for caller in callers.get(frontier.pop(), ()):
            if caller not in found:
                found.add(caller)
                frontier.append(caller)
    return found
