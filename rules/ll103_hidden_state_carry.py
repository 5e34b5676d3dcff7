"""LL103 hidden-state-carry: recurrent state fed into the next iteration with its autograd graph.

The module also computes the fact LL104 needs: which names carry a graph from one loop iteration
into the next (:func:`carried_states`). It is a fact about the program, not about one rule, and
belongs in ``leaklint.analysis`` once a third consumer needs it.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, field, replace
from typing import Iterator

import libcst as cst

from leaklint.analysis import torch_api
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name
from leaklint.analysis.provenance import StatementFact
from leaklint.analysis.structure import ClassInfo, FunctionInfo, GradMode, LoopInfo, backward_target, bound_names
from leaklint.analysis.values import Evidence, Kind, Role, Value
from leaklint.analysis.walk import children, dotted_names_in, not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.rule import Rule, Violation

# =================================================================================================
# Shared fact (LL103, LL104): graph values carried from one iteration into the next
# =================================================================================================

#: Helpers that cut a recurrent state off its history by their name: ``repackage_hidden(h)``,
#: ``detach_hidden(h)``, ``model.detach_state()``.
_DETACHING_CALL = re.compile(r"detach|repackage", re.IGNORECASE)
#: Methods that build a new tensor shaped like the receiver, without its history.
_FRESH_LIKE_METHODS = frozenset({"new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "zero_"})
#: Methods on a tensor whose result is not a tensor computation.
_NOT_COMPUTING_METHODS = torch_api.NON_TENSOR_METHODS | torch_api.TO_PYTHON_METHODS | torch_api.DETACH_METHODS


@dataclass(frozen=True, eq=False)
class CarriedState:
    """A name whose graph-attached value one iteration (or call) stores and the next one reads."""

    name: str
    #: The loop across whose iterations it is carried; None: across calls of a per-step method.
    loop: LoopInfo | None
    function: FunctionInfo
    #: The graph value stored back into the name (the strongest of its updates).
    value: Value
    #: The first statement that feeds the carried value into a computation; None when the value
    #: is only accumulated (LL101's business).
    feed: StatementFact | None
    #: The carry crosses training/data steps (not only the time steps of one sequence).
    crosses_steps: bool
    #: The carrying loop runs a backward every iteration.
    backward_each_iteration: bool


@dataclass
class _Binding:
    """One statement (or loop header) that binds a name inside the scanned body."""

    node: cst.CSTNode
    names: list[str]
    #: Dotted names mentioned by the tests of the ``if`` statements around it.
    guards: frozenset[str]
    fact: StatementFact | None = None


@dataclass
class _Body:
    """What the scan of a loop body (or function body) found: its bindings, by name."""

    suite: cst.CSTNode
    bindings: dict[str, list[_Binding]] = field(default_factory=dict)
    _calls: list[cst.Call] | None = None
    _aliases: dict[str, set[str]] | None = None

    def add(self, binding: _Binding) -> None:
        for name in binding.names:
            self.bindings.setdefault(name, []).append(binding)

    @property
    def calls(self) -> list[cst.Call]:
        """Calls in the body (computed on demand: only names that look carried need them)."""
        if self._calls is None:
            self._collect()
        assert self._calls is not None
        return self._calls

    @property
    def aliases(self) -> dict[str, set[str]]:
        """Names bound by iterating over another (``for v in hidden``, ``... for v in hidden)``)."""
        if self._aliases is None:
            self._collect()
        assert self._aliases is not None
        return self._aliases

    def _collect(self) -> None:
        calls: list[cst.Call] = []
        aliases: dict[str, set[str]] = {}
        for node in walk(self.suite, into=not_into_scopes):
            if isinstance(node, cst.Call):
                calls.append(node)
            elif isinstance(node, (cst.For, cst.CompFor)):
                for source in names_read(node.iter):
                    aliases.setdefault(source, set()).update(bound_names(node.target))
        self._calls, self._aliases = calls, aliases


class _Index:
    """Per-module lookups, built once per ``ModuleFacts``."""

    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts
        self.by_loop: dict[cst.CSTNode, list[StatementFact]] = {}
        self.by_function: dict[FunctionInfo, list[StatementFact]] = {}
        for fact in facts.statements():
            self.by_function.setdefault(fact.function, []).append(fact)
            for loop in fact.loops:
                self.by_loop.setdefault(loop.node, []).append(fact)
        self.model_call_statements: dict[cst.CSTNode, list[cst.Call]] = {}
        for call in facts.model_calls():
            if call.statement is not None:
                self.model_call_statements.setdefault(call.statement.node, []).append(call.node)
        self._bodies: dict[cst.CSTNode, _Body] = {}
        self._backward_loops: dict[cst.CSTNode, bool] = {}
        self._bounded: dict[cst.CSTNode, set[str]] = {}
        self.carries = list(_find_carries(self))

    def body(self, node: cst.For | cst.While | cst.FunctionDef) -> _Body:
        found = self._bodies.get(node)
        if found is None:
            found = self._bodies[node] = _scan_body(node.body, self.facts)
        return found

    def bounded_carries(self, loop: LoopInfo) -> set[str]:
        """Names the loop carries with their graph but re-initialises now and then (``hidden = None``
        every k steps), never detaching them: the graph is kept on purpose, for a while."""
        found = self._bounded.get(loop.node)
        if found is None:
            body = self.body(loop.node)
            found = set()
            for name in _candidate_names(body):
                history = _history(body, name, self.facts)
                if history.updates and history.reset and not history.detached:
                    found.add(name)
            self._bounded[loop.node] = found
        return found

    def runs_backward(self, loop: LoopInfo) -> bool:
        """The loop body calls a backward that frees the graph (not ``autograd.grad(create_graph=True)``,
        which differentiates through the graph on purpose: meta-learning, gradient penalties)."""
        found = self._backward_loops.get(loop.node)
        if found is None:
            found = self._backward_loops[loop.node] = any(
                not literal_true(call, "create_graph") for call in backward_calls(loop.node.body, self.facts)
            )
        return found


_INDEXES: weakref.WeakKeyDictionary[ModuleFacts, _Index] = weakref.WeakKeyDictionary()


def _index(facts: ModuleFacts) -> _Index:
    found = _INDEXES.get(facts)
    if found is None:
        found = _INDEXES[facts] = _Index(facts)
    return found


def carried_states(facts: ModuleFacts) -> list[CarriedState]:
    """Every name that carries a graph-attached value from one iteration (or call) to the next,
    without a ``.detach()`` or a re-initialisation on the way."""
    return _index(facts).carries


def bounded_carries(facts: ModuleFacts, loop: LoopInfo) -> set[str]:
    """Names ``loop`` carries with their graph for a few iterations and then re-initialises."""
    return _index(facts).bounded_carries(loop)


def backward_calls(node: cst.CSTNode, facts: ModuleFacts) -> list[cst.Call]:
    """Backward calls under ``node`` in source order (``loss.backward()``, ``autograd.grad(...)``,
    ``scaler.scale(loss).backward()``...), not counting nested functions."""
    return [
        call
        for call in walk(node, into=not_into_scopes)
        if isinstance(call, cst.Call) and backward_target(call, facts.imports) is not None
    ]


def literal_true(call: cst.Call, keyword: str) -> bool:
    """``keyword=True`` is passed literally (``retain_graph=flag`` is a deliberate runtime choice)."""
    return any(
        arg.keyword is not None
        and arg.keyword.value == keyword
        and isinstance(arg.value, cst.Name)
        and arg.value.value == "True"
        for arg in call.args
    )


def names_read(node: cst.CSTNode) -> set[str]:
    """Names and dotted attribute chains an expression reads: ``model``, ``out``, ``self``,
    ``self.hidden`` in ``model(out).loss + self.hidden.sum()`` (not the attribute names ``loss``,
    ``sum`` on their own, which ``dotted_names_in`` also lists)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            found.add(current.value)
        elif isinstance(current, cst.Attribute):
            name = dotted_name(current)
            if name is not None:
                parts = name.split(".")
                found.update(".".join(parts[: i + 1]) for i in range(len(parts)))
            else:
                stack.append(current.value)
        elif not isinstance(current, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
            stack.extend(children(current))
    return found


def _mentions(node: cst.CSTNode, name: str) -> bool:
    return name in names_read(node)


# ---- scanning a body -----------------------------------------------------------------------------
def _scan_body(body: cst.BaseSuite, facts: ModuleFacts) -> _Body:
    found = _Body(body)
    _scan_block(list(body.body), frozenset(), found, facts)
    return found


def _scan_block(statements: list[cst.CSTNode], guards: frozenset[str], found: _Body, facts: ModuleFacts) -> None:
    for statement in statements:
        _scan_statement(statement, guards, found, facts)


def _scan_statement(statement: cst.CSTNode, guards: frozenset[str], found: _Body, facts: ModuleFacts) -> None:
    """Record bindings with the tests of the ``if`` statements around them; nested defs run elsewhere."""
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return
    if isinstance(statement, cst.BaseSmallStatement):  # the body of ``for x in y: h = f(h)``
        _scan_small(statement, guards, found, facts)
        return
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            _scan_small(small, guards, found, facts)
        return
    if isinstance(statement, cst.If):
        inner = guards | names_read(statement.test)
        _scan_block(list(statement.body.body), inner, found, facts)
        if isinstance(statement.orelse, cst.If):
            _scan_statement(statement.orelse, inner, found, facts)
        elif statement.orelse is not None:
            _scan_block(list(statement.orelse.body.body), inner, found, facts)
        return
    if isinstance(statement, cst.For):
        found.add(_Binding(statement, bound_names(statement.target), guards))
    elif isinstance(statement, cst.With):
        for item in statement.items:
            if item.asname is not None:
                found.add(_Binding(statement, bound_names(item.asname.name), guards))
    for name in ("body", "orelse", "finalbody"):
        part = getattr(statement, name, None)
        if isinstance(part, (cst.BaseSuite, cst.Else, cst.Finally)):
            suite = part.body if isinstance(part, (cst.Else, cst.Finally)) else part
            _scan_block(list(suite.body), guards, found, facts)
    for handler in getattr(statement, "handlers", ()):
        _scan_block(list(handler.body.body), guards, found, facts)
    for case in getattr(statement, "cases", ()):
        _scan_block(list(case.body.body), guards, found, facts)


def _scan_small(small: cst.BaseSmallStatement, guards: frozenset[str], found: _Body, facts: ModuleFacts) -> None:
    names: list[str] = []
    if isinstance(small, cst.Assign):
        names = [name for target in small.targets for name in bound_names(target.target)]
    elif isinstance(small, cst.AugAssign) or (isinstance(small, cst.AnnAssign) and small.value is not None):
        names = bound_names(small.target)
    elif isinstance(small, cst.Del):
        names = bound_names(small.target)
    if names:
        found.add(_Binding(small, names, guards, facts.statement_fact(small)))


# ---- what one binding does to a name ---------------------------------------------------------------
def _assigned_expr(node: cst.CSTNode) -> cst.BaseExpression | None:
    if isinstance(node, (cst.Assign, cst.AugAssign)) or (isinstance(node, cst.AnnAssign) and node.value is not None):
        return node.value
    return None


def _bound_value(node: cst.CSTNode, value: Value, name: str) -> Value:
    """The value ``name`` receives from an assignment of ``value`` (element of an unpacking)."""
    targets: list[cst.BaseExpression]
    if isinstance(node, cst.Assign):
        targets = [t.target for t in node.targets]
    elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
        targets = [node.target]
    else:
        return value
    for target in targets:
        part = _part_for(target, value, name)
        if part is not None:
            return part
    return value


def _part_for(target: cst.BaseExpression, value: Value, name: str) -> Value | None:
    if isinstance(target, (cst.Tuple, cst.List)):
        elements = target.elements
        items = value.items if value.items is not None and len(value.items) == len(elements) else None
        for index, element in enumerate(elements):
            # An item keeps the deps of the whole: a local function's summary items carry the
            # callee's own local names (``center_loss`` inside ``get_center_loss``).
            part = replace(items[index], deps=value.deps) if items is not None else value
            found = _part_for(element.value, part, name)
            if found is not None:
                return found
        return None
    if isinstance(target, cst.StarredElement):
        return _part_for(target.value, value, name)
    return value if dotted_name(target) == name else None


def _reads(node: cst.CSTNode, name: str, value: Value) -> bool:
    """The new value of ``name`` is computed from its old one (directly or through other names)."""
    if isinstance(node, cst.AugAssign):
        return True
    expr = _assigned_expr(node)
    return expr is not None and (_mentions(expr, name) or name in value.deps)


def _callee_leaf(call: cst.Call, facts: ModuleFacts) -> str:
    """``detach`` for ``h.detach()``, ``repackage_hidden`` for ``rh(h)`` after ``from utils import repackage_hidden as rh``."""
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return (facts.imports.resolve(func) or dotted_name(func) or "").rsplit(".", 1)[-1]


def _detaches(expr: cst.CSTNode, name: str, aliases: set[str], facts: ModuleFacts) -> bool:
    """``h.detach()``, ``tuple(v.detach() for v in h)``, ``repackage_hidden(h)``, ``Variable(h.data)``,
    ``h.new_zeros(...)``: the expression cuts ``name`` (or an alias of it) off its history."""
    watched = {name} | aliases
    for node in walk(expr, into=not_into_scopes):
        if isinstance(node, cst.Call):
            leaf = _callee_leaf(node, facts)
            if leaf in torch_api.DETACH_METHODS or leaf in _FRESH_LIKE_METHODS or _DETACHING_CALL.search(leaf):
                if any(watched & names_read(part) for part in _call_parts(node)):
                    return True
        elif isinstance(node, cst.Attribute) and node.attr.value == "data":
            if watched & names_read(node.value):
                return True
    return False


def _call_parts(call: cst.Call) -> list[cst.CSTNode]:
    parts: list[cst.CSTNode] = [arg.value for arg in call.args]
    if isinstance(call.func, cst.Attribute):
        parts.append(call.func.value)
    return parts


def _comprehension_aliases(expr: cst.CSTNode, name: str) -> set[str]:
    aliases: set[str] = set()
    for node in walk(expr, into=not_into_scopes):
        if isinstance(node, cst.CompFor) and _mentions(node.iter, name):
            aliases.update(bound_names(node.target))
    return aliases


@dataclass
class _NameHistory:
    """How a body treats one name: is the graph it holds carried into the next iteration?"""

    #: Re-bound from scratch somewhere in the body (``hidden = None`` every k steps).
    reset: bool = False
    #: Cut off its history somewhere in the body (``hidden = hidden.detach()``).
    detached: bool = False
    updates: list[tuple[StatementFact, Value]] = field(default_factory=list)

    @property
    def cut(self) -> bool:
        return self.reset or self.detached


def _history(body: _Body, name: str, facts: ModuleFacts) -> _NameHistory:
    history = _NameHistory()
    bindings = body.bindings.get(name, [])
    if not any(binding.fact is not None for binding in bindings):
        return history  # bound only by loop headers (or not at all): nothing computed is carried
    for binding in bindings:
        node = binding.node
        expr = _assigned_expr(node)
        fact = binding.fact
        if expr is None or fact is None:  # a loop target, ``with ... as``, ``del``: a fresh start
            history.reset = True
            continue
        value = _bound_value(node, facts.value(expr), name)
        if not _reads(node, name, value):
            if name in binding.guards:
                continue  # ``if hidden is None: hidden = init_hidden()``: a lazy start, not a reset
            history.reset = True
            continue
        if value.kind in (Kind.DETACHED, Kind.NOT_TENSOR) or _detaches(expr, name, _comprehension_aliases(expr, name), facts):
            history.detached = True
            continue
        if value.is_graph:
            if value.confidence is not Confidence.HIGH and name in facts.summary(fact.function).backward_consumed:
                value = replace(value, confidence=Confidence.HIGH)  # as the provenance pass binds it
            history.updates.append((fact, value))
    if history.updates and not history.detached:
        aliases = body.aliases.get(name, set())
        history.detached = any(_in_place_detach(call, name, aliases, facts) for call in body.calls)
    return history


def _in_place_detach(call: cst.Call, name: str, aliases: set[str], facts: ModuleFacts) -> bool:
    """``h.detach_()``, ``for v in h: v.detach_()``, ``detach_hidden(h)`` as a statement."""
    func = call.func
    watched = {name} | aliases
    if isinstance(func, cst.Attribute) and func.attr.value == "detach_":
        return bool(watched & names_read(func.value))
    if _DETACHING_CALL.search(_callee_leaf(call, facts)):
        return any(watched & names_read(arg.value) for arg in call.args)
    return False


# ---- where the carried value is fed back ----------------------------------------------------------
def _statement_expr(node: cst.CSTNode) -> cst.BaseExpression | None:
    if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Expr, cst.Return)):
        return node.value
    return None


def _statement_targets(node: cst.CSTNode) -> list[str]:
    if isinstance(node, cst.Assign):
        return [name for target in node.targets for name in bound_names(target.target)]
    if isinstance(node, (cst.AugAssign, cst.AnnAssign)):
        return bound_names(node.target)
    return []


def _is_accumulation(node: cst.CSTNode, name: str) -> bool:
    """``total += x`` / ``avg = 0.9 * avg + 0.1 * x``: ``name`` is only a term of its own sum
    (what LL101 reports), not an input of the computation."""
    if isinstance(node, cst.AugAssign):
        return dotted_name(node.target) == name and isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign))
    if isinstance(node, cst.Assign) and len(node.targets) == 1 and dotted_name(node.targets[0].target) == name:
        value = node.value
        return (
            isinstance(value, cst.BinaryOperation)
            and isinstance(value.operator, (cst.Add, cst.Subtract))
            and _only_a_term(value, name)
        )
    return False


def _only_a_term(expr: cst.BaseExpression, name: str) -> bool:
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)):
        return _only_a_term(expr.left, name) and _only_a_term(expr.right, name)
    if dotted_name(expr) == name:
        return True
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide)) and _mentions(expr, name):
        sides = (expr.left, expr.right)
        return any(dotted_name(side) == name for side in sides) and sum(_mentions(side, name) for side in sides) == 1
    return not _mentions(expr, name)


def _computes_with(expr: cst.CSTNode, name: str, computing: bool = False) -> bool:
    """``name`` is an input of a tensor computation in ``expr``: an argument of a call, the
    receiver of a tensor method, an operand of arithmetic (not ``hidden.size(0)``, not a plain
    alias or a container element)."""
    if isinstance(expr, (cst.Name, cst.Attribute)) and dotted_name(expr) == name:
        return computing
    if isinstance(expr, (cst.Lambda, cst.Comparison)):
        return False
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute):
            if func.attr.value not in _NOT_COMPUTING_METHODS and _computes_with(func.value, name, True):
                return True
        elif _computes_with(func, name, computing):
            return True
        return any(_computes_with(arg.value, name, True) for arg in expr.args)
    if isinstance(expr, cst.Attribute):
        if expr.attr.value in torch_api.NON_TENSOR_ATTRIBUTES or expr.attr.value in torch_api.DETACHED_ATTRIBUTES:
            return False
        return _computes_with(expr.value, name, computing)
    if isinstance(expr, (cst.BinaryOperation, cst.UnaryOperation)):
        return any(_computes_with(child, name, True) for child in children(expr))
    if isinstance(expr, cst.Subscript):
        return _computes_with(expr.value, name, computing)
    return any(_computes_with(child, name, computing) for child in children(expr))


def _reaches_model_or_backward(idx: _Index, fact: StatementFact, name: str) -> bool:
    """An accumulated value counts as fed back only when it reaches a model call, a tensor that
    is differentiated, or the output of a per-step method (``forward``'s return)."""
    for call in idx.model_call_statements.get(fact.node, []):
        if any(_mentions(arg.value, name) for arg in call.args):
            return True
    if isinstance(fact.node, cst.Return):
        return fact.function.runs_per_step
    consumed = idx.facts.summary(fact.function).backward_consumed
    return any(target in consumed for target in _statement_targets(fact.node))


def _feed(idx: _Index, statements: list[StatementFact], name: str, history: _NameHistory) -> StatementFact | None:
    """The first statement that feeds the carried value of ``name`` into a graph computation."""
    accumulated_only = all(_is_accumulation(fact.node, name) for fact, _ in history.updates)
    for fact in statements:
        if fact.grad is GradMode.DISABLED:
            continue
        expr = _statement_expr(fact.node)
        if expr is None or _is_accumulation(fact.node, name) or not _computes_with(expr, name):
            continue
        if not idx.facts.value(expr).is_graph:
            continue
        if accumulated_only and not _reaches_model_or_backward(idx, fact, name):
            continue
        return fact
    return None


# ---- finding the carries --------------------------------------------------------------------------
def _iterates_batches(loop: LoopInfo, facts: ModuleFacts) -> bool:
    """A loop over a data loader or batches: ``for x, y in loader``, ``for batch in batches``,
    ``for batch_idx in range(n)``; not ``for step in range(n)`` (maybe the time steps of one
    sequence) nor ``for i in range(num_batches)`` (maybe the chunks of one forward pass)."""
    node = loop.node
    if not isinstance(node, cst.For):
        return False
    if facts.value(node.iter).role is Role.LOADER:
        return True
    leaves = {name.rsplit(".", 1)[-1] for name in bound_names(node.target)}
    if not _is_range(node.iter):
        leaves |= {name.rsplit(".", 1)[-1] for name in dotted_names_in(node.iter)}
    return any(torch_api.DATA_SOURCE_NAME.search(leaf) or "batch" in leaf.lower() for leaf in leaves)


def _is_range(expr: cst.BaseExpression) -> bool:
    """``range(n)``, ``enumerate(range(n))``, ``tqdm(range(n))``: counting, not data."""
    while isinstance(expr, cst.Call) and expr.args:
        if isinstance(expr.func, cst.Name) and expr.func.value == "range":
            return True
        expr = expr.args[0].value
    return False


def _crosses_steps(idx: _Index, loop: LoopInfo, enclosing: tuple[LoopInfo, ...], function: FunctionInfo) -> bool:
    """Each iteration is a training step (it runs backward) or a batch of data outside any loop
    that runs backward; a loop over the time steps of one sequence inside a training step is not."""
    if idx.runs_backward(loop):
        return True
    if function.runs_per_step or function.name == "forward" or (function.cls is not None and function.cls.is_module):
        return False  # a loop inside a model's own code or one step: the chunks or modalities of one pass
    return _iterates_batches(loop, idx.facts) and not any(idx.runs_backward(outer) for outer in enclosing)


def _strongest(values: list[Value]) -> Value:
    order = list(Evidence)
    return max(values, key=lambda v: (v.confidence.rank, -order.index(v.evidence) if v.evidence else -99))


def _candidate_names(body: _Body) -> list[str]:
    """Names assigned in the body; ``p.grad.data = ...`` writes storage without history: never a carry."""
    return [name for name in body.bindings if not set(name.split(".")[1:]) & torch_api.DETACHED_ATTRIBUTES]


def _find_carries(idx: _Index) -> Iterator[CarriedState]:
    facts = idx.facts
    for loop in facts.structure.loops.values():
        statements = idx.by_loop.get(loop.node)
        if not statements:
            continue
        body = idx.body(loop.node)
        enclosing = statements[0].loops[: statements[0].loops.index(loop)]
        for name in _candidate_names(body):
            history = _history(body, name, facts)
            if history.cut or not history.updates:
                continue
            yield CarriedState(
                name=name,
                loop=loop,
                function=statements[0].function,
                value=_strongest([value for _, value in history.updates]),
                feed=_feed(idx, statements, name, history),
                crosses_steps=_crosses_steps(idx, loop, enclosing, statements[0].function),
                backward_each_iteration=idx.runs_backward(loop),
            )
    for function in facts.structure.functions.values():
        if not function.runs_per_step or function.cls is None or function.node is None:
            continue
        statements = idx.by_function.get(function, [])
        body = idx.body(function.node)
        for name in _candidate_names(body):
            if not name.startswith("self."):
                continue
            history = _history(body, name, facts)
            if history.cut or not history.updates or _reset_elsewhere(idx, function, function.cls, name):
                continue
            yield CarriedState(
                name=name,
                loop=None,
                function=function,
                value=_strongest([value for _, value in history.updates]),
                feed=_feed(idx, statements, name, history),
                crosses_steps=True,
                backward_each_iteration=False,
            )


def _reset_elsewhere(idx: _Index, function: FunctionInfo, cls: ClassInfo, name: str) -> bool:
    """Another method of the class re-initialises or detaches ``self.x`` (``reset_hidden()``,
    ``detach_state()``), or code outside the class assigns ``model.x``: the carry is cut between
    steps by code this rule does not follow."""
    for method in cls.methods.values():
        if method is function.node or method.name.value == "__init__":
            continue
        if _history(idx.body(method), name, idx.facts).cut:
            return True
    attribute = "." + name.split(".", 1)[1]
    for fact in idx.facts.statements():
        if fact.function.cls is cls:
            continue
        if any(t.endswith(attribute) and not t.startswith("self.") for t in _statement_targets(fact.node)):
            return True
    return False


# =================================================================================================
# LL103
# =================================================================================================
class HiddenStateCarry(Rule):
    code = "LL103"
    name = "hidden-state-carry"
    severity = Severity.LEAK
    summary = "A recurrent state is fed into the next iteration without .detach(), so the autograd graph grows through every iteration."
    help = "detach the state before feeding it back: hidden = hidden.detach() (an LSTM's (h, c): tuple(v.detach() for v in hidden))"
    docs = """
## What it finds
A value computed with its autograd graph in one iteration of a training or data loop and fed into
the computation of the next iteration without `.detach()`: the hidden state of an RNN/LSTM/GRU
carried across batches (`output, hidden = model(x, hidden)`, `out, (h, c) = lstm(x, (h, c))`,
`h = cell(x, h)`), a state kept on a module and fed back on every call
(`self.hidden = self.lstm(x, self.hidden)[1]` in `forward`), or a running statistic kept with its
graph and used as an input of the next step (`self.mu = 0.9 * self.mu + 0.1 * h.mean(0)` followed by
`return h - self.mu`). The finding is on the statement that feeds the carried value into the
computation. A loop counts when it runs a backward every iteration, or when it iterates over
batches of data (a loader, `for batch in ...`) outside any loop that runs backward.

## Why it matters
The new state is computed from the old one, so its graph links to the previous iteration's graph,
which links to the one before: every iteration's graph stays reachable from the current state.
Without a backward in between (evaluation, gradient accumulation) the activations saved by every
iteration stay alive too and memory grows until the job dies. With `loss.backward()` every
iteration, the second backward runs into the first iteration's graph, whose buffers are already
freed, and fails with "Trying to backward through the graph a second time"; `retain_graph=True`,
the usual way to silence it, keeps every buffer instead, and memory and the time of each backward
grow with every batch (see LL104). Truncated backpropagation through time means cutting the graph
between batches: detach the state, keep its value.

## Example
```python
hidden = model.init_hidden(batch_size)
for data, targets in batches:
    optimizer.zero_grad()
    output, hidden = model(data, hidden)
    loss = criterion(output.view(-1, ntokens), targets)
    loss.backward()
    optimizer.step()
```

## Use instead
```python
def repackage_hidden(h):
    # Wraps hidden states in new tensors, to detach them from their history.
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)

hidden = model.init_hidden(batch_size)
for data, targets in batches:
    optimizer.zero_grad()
    hidden = repackage_hidden(hidden)
    output, hidden = model(data, hidden)
    loss = criterion(output.view(-1, ntokens), targets)
    loss.backward()
    optimizer.step()
```

## Known false positives
Carrying the state through the time steps of one sequence (`for t in range(seq_len): h = cell(x[t], h)`
followed by one backward after the loop) is ordinary backpropagation through time and is not
reported, and neither is a loop inside a model's own code (`forward`, an `nn.Module` method, a
per-step method) that runs no backward: it walks the chunks or modalities of one forward pass.
Neither is a state detached anywhere in the loop (`h.detach()`, `h.detach_()`,
`tuple(v.detach() for v in h)`, `Variable(h.data)`, a helper whose name says `detach` or
`repackage`, or one in the same file that returns a detached value), re-initialised in the loop
(`hidden = model.init_hidden(bs)`; a lazy `if hidden is None:` start does not count), or computed
under `torch.no_grad()`. A state kept on a module (`self.hidden`) is not reported when another
method of the class re-initialises or detaches it, or code outside the class assigns it
(`model.hidden = ...`): leaklint assumes that runs between steps. A value that is only accumulated
(`avg = 0.9 * avg + 0.1 * loss`) is LL101's finding, not this one. If you really mean to
backpropagate through every batch so far, suppress the finding with `# noqa: LL103`.

## References
- PyTorch word language model example, `repackage_hidden` ("Wraps hidden states in new Tensors, to
  detach them from their history"): https://github.com/pytorch/examples/blob/main/word_language_model/main.py
- "Memory leak problem in LSTM and RNN": the carried `hidden` keeps the whole sequence's graph alive
  until it is detached: https://github.com/pytorch/pytorch/issues/2198
- `self.hidden` fed back in `forward`: each training step takes longer than the one before:
  https://github.com/pytorch/pytorch/issues/2769
- A compressive memory carried across segments: "Trying to backward through the graph a second
  time", then `retain_graph=True` and growing memory, fixed by detaching it:
  https://github.com/jlamprou/Infini-Attention/issues/3
- `Tensor.detach`: https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html
- Runtime repro: `leaklint verify LL103` (the runtime verifier arrives in a later release).
"""
    VALID = (
        """
import torch
def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)

def train(model, batches, criterion, optimizer):
    hidden = model.init_hidden(20)
    for data, targets in batches:
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        optimizer.step()
""",
        """
import torch.nn as nn
lstm = nn.LSTM(32, 64)
for data, targets in loader:
    h = torch.zeros(1, 16, 64)
    c = torch.zeros(1, 16, 64)
    out, (h, c) = lstm(data, (h, c))
    loss = (out - targets).pow(2).mean()
    loss.backward()
    h, c = h.detach(), c.detach()
""",
        """
import torch
import torch.nn as nn
cell = nn.GRUCell(16, 32)
for x, y in loader:
    h = torch.zeros(x.size(1), 32)
    for t in range(x.size(0)):
        h = cell(x[t], h)
    loss = ((h - y) ** 2).mean()
    loss.backward()
""",
        """
import torch
def evaluate(model, batches, criterion):
    model.eval()
    hidden = model.init_hidden(10)
    total = 0.0
    with torch.no_grad():
        for data, targets in batches:
            output, hidden = model(data, hidden)
            total += criterion(output, targets).item()
    return total
""",
        """
import torch.nn as nn
lstm = nn.LSTM(8, 8)
hidden = None
for step, (x, y) in enumerate(loader):
    out, hidden = lstm(x, hidden)
    loss = ((out - y) ** 2).mean()
    loss.backward()
    for h in hidden:
        h.detach_()
""",
        """
import torch.nn as nn
class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 8)
        self.hidden = None
    def reset_state(self):
        self.hidden = None
    def forward(self, x):
        out, self.hidden = self.lstm(x, self.hidden)
        return out
""",
        """
avg = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    avg = 0.9 * avg + 0.1 * loss
""",
        """
from utils import repackage_hidden as repackage
def train(model, batches, criterion):
    hidden = model.init_hidden(20)
    for data, targets in batches:
        hidden = repackage(hidden)
        output, hidden = model(data, hidden)
        criterion(output, targets).backward()
""",
        """
import torch.nn as nn
class ChunkedEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.GRU(16, 16)
    def forward(self, x, num_batches):
        cache = None
        outputs = []
        for i in range(num_batches):
            out, cache = self.encoder(x[i], cache)
            outputs.append(out)
        return outputs
""",
    )
    INVALID = (
        """
def train(model, batches, criterion, optimizer):
    hidden = model.init_hidden(20)
    for data, targets in batches:
        optimizer.zero_grad()
        output, hidden = model(data, hidden)  # expect: LL103
        loss = criterion(output, targets)
        loss.backward(retain_graph=True)
        optimizer.step()
""",
        """
import torch
import torch.nn as nn
lstm = nn.LSTM(32, 64)
h = torch.zeros(1, 16, 64)
c = torch.zeros(1, 16, 64)
for epoch in range(10):
    for data, targets in loader:
        if h.size(1) != data.size(1):
            h = torch.zeros(1, data.size(1), 64)
            c = torch.zeros(1, data.size(1), 64)
        out, (h, c) = lstm(data, (h, c))  # expect: LL103
        loss = (out - targets).pow(2).mean()
        loss.backward()
""",
        """
import torch.nn as nn
class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 16, batch_first=True)
        self.head = nn.Linear(16, 1)
        self.hidden = None
    def forward(self, x):
        out, self.hidden = self.rnn(x, self.hidden)  # expect: LL103
        return self.head(out[:, -1])
""",
        """
import torch
import torch.nn as nn
cell = nn.GRUCell(16, 32)
h = torch.zeros(8, 32)
for x, y in loader:
    for t in range(x.size(0)):
        h = cell(x[t], h)  # expect: LL103
    loss = ((h - y) ** 2).mean()
    loss.backward()
""",
        """
def train(model, batches, criterion):
    state = None
    for data, targets in batches:
        output, new_state = model(data, state)  # expect: LL103
        state = new_state
        criterion(output, targets).backward()
""",
        """
import torch.nn as nn
class Normalizer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.mu = 0.0
    def forward(self, x):
        h = self.proj(x)
        self.mu = 0.9 * self.mu + 0.1 * h.mean(0)
        return h - self.mu  # expect: LL103
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        chosen: dict[tuple[str, cst.CSTNode], CarriedState] = {}
        for carry in carried_states(facts):
            if not carry.crosses_steps or carry.feed is None:
                continue
            key = (carry.name, carry.feed.node)
            if key not in chosen or _depth(carry) > _depth(chosen[key]):
                chosen[key] = carry  # the innermost loop that carries it across steps
        by_feed: dict[cst.CSTNode, list[CarriedState]] = {}
        for (_, node), carry in chosen.items():
            by_feed.setdefault(node, []).append(carry)
        for carries in by_feed.values():
            yield _violation(facts, carries)


def _depth(carry: CarriedState) -> int:
    if carry.loop is None or carry.feed is None:
        return -1
    return next((i for i, loop in enumerate(carry.feed.loops) if loop is carry.loop), -1)


def _confidence(carry: CarriedState) -> Confidence:
    value = carry.value
    if value.confidence is Confidence.LOW:
        return Confidence.LOW
    if carry.backward_each_iteration and value.evidence in (Evidence.MODEL, Evidence.DERIVED, Evidence.BACKWARD):
        return Confidence.HIGH
    return Confidence.MEDIUM


def _loop_header(facts: ModuleFacts, loop: LoopInfo) -> str:
    node = loop.node
    if isinstance(node, cst.For):
        return f"for {facts.describe(node.target)} in {facts.describe(node.iter)}"
    return f"while {facts.describe(node.test)}"


def _violation(facts: ModuleFacts, carries: list[CarriedState]) -> Violation:
    feed = carries[0].feed
    assert feed is not None
    quoted = [f"'{carry.name}'" for carry in carries]
    names = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
    plural = len(carries) > 1
    confidence = max((_confidence(carry) for carry in carries), key=lambda c: c.rank)
    first = carries[0]
    if first.loop is None:
        where = f"the previous '{first.function.name}' call"
        across = "calls"
    else:
        where = f"the previous iteration of '{_loop_header(facts, first.loop)}'"
        across = "iterations"
    message = (
        f"{names} {'are' if plural else 'is'} fed back with the autograd graph of {where} (never detached): "
        f"the graphs chain up across {across} and memory grows every step"
    )
    if any(carry.backward_each_iteration for carry in carries):
        message += "; each backward() also reaches into the graphs of earlier iterations"
    name = first.name
    return Violation(
        node=feed.node,
        message=message,
        confidence=confidence,
        help=f"detach the state before feeding it back: {name} = {name}.detach() (a tuple such as an LSTM's (h, c): tuple(v.detach() for v in {name}))",
        statement=feed.line,
    )
