"""Values carried from one loop iteration (or one call of a per-step method) into the next with
their autograd graph.

``output, hidden = model(x, hidden)`` in a training loop links every iteration's graph to the
previous one unless the state is detached or re-initialised in between. LL103 reports the carry
itself; LL104 asks whether a ``retain_graph=True`` keeps such chained graphs alive. The scan
follows each name bound in a loop body: is its new value computed from its old one, is it cut
(``.detach()``, a re-initialisation, a helper named ``repackage_hidden``), and where is the
carried value fed into the next computation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator

import libcst as cst

from leaklint.analysis import torch_api
from leaklint.analysis.accumulate import accumulation, grown_tensor
from leaklint.analysis.arguments import is_staticmethod, parameter_for
from leaklint.analysis.calls import local_callee
from leaklint.analysis.hooks import HookFunction, graph_parameters, hook_registrations, resolve_hook
from leaklint.analysis.names import dotted_name, names_read
from leaklint.analysis.steps import per_step_functions
from leaklint.analysis.structure import ClassInfo, FunctionInfo, GradMode, LoopInfo, backward_calls, bound_names, inner_iterable
from leaklint.analysis.syntax import keyword_is_true
from leaklint.analysis.torch_api import HookKind
from leaklint.analysis.values import Evidence, Kind, Role, Value, replace
from leaklint.analysis.walk import children, not_into_scopes, walk
from leaklint.findings import Confidence

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.analysis.provenance import StatementFact

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
    #: The statements that store the new graph value back into the name.
    updates: tuple[StatementFact, ...] = ()
    #: Nothing ever differentiates the carried graph (an inference loop: sampling, generation,
    #: scoring): every iteration's graph stays reachable for nothing.
    graph_unused: bool = False
    #: A running statistic of an ``nn.Module`` (``self.mean = 0.9 * self.mean + 0.1 * x.mean(0)``
    #: in ``forward``): kept on the module with the graph of every call, whether or not it is fed back.
    running_statistic: bool = False
    #: Bindings before the loop that give the carried name its first graph (the chain starts there).
    seeds: tuple[StatementFact, ...] = ()
    #: Whether the file shows the function run with gradients on (None: its callers are unknown).
    runs_with_grad: bool | None = True

    @property
    def reported(self) -> bool:
        """LL103 reports it: a state carried across training or data steps and fed back, one
        whose graph nobody differentiates, or a module's running statistic."""
        if self.running_statistic:
            return True
        if self.feed is None:
            return False
        return self.crosses_steps or self.graph_unused


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


class _Carries:
    """The carries of one module and the per-loop scans they come from, built once per file."""

    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts
        self._bodies: dict[cst.CSTNode, _Body] = {}
        self._backward_loops: dict[cst.CSTNode, bool] = {}
        self._bounded: dict[cst.CSTNode, set[str]] = {}
        self._detached: frozenset[tuple[FunctionInfo, str]] | None = None
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

    def detached_each_iteration(self) -> frozenset[tuple[FunctionInfo, str]]:
        if self._detached is None:
            found = set()
            for loop in self.facts.structure.loops.values():
                statements = self.facts.index.statements_in_loop(loop.node)
                if not statements:
                    continue
                body = self.body(loop.node)
                for name in _candidate_names(body):
                    if _history(body, name, self.facts).detached:
                        found.add((statements[0].function, name))
            self._detached = frozenset(found)
        return self._detached

    def runs_backward(self, loop: LoopInfo) -> bool:
        """The loop body calls a backward that frees the graph (not ``autograd.grad(create_graph=True)``,
        which differentiates through the graph on purpose: meta-learning, gradient penalties)."""
        found = self._backward_loops.get(loop.node)
        if found is None:
            found = self._backward_loops[loop.node] = any(
                not keyword_is_true(call, "create_graph") for call in backward_calls(loop.node.body, self.facts.imports)
            )
        return found


def carried_states(facts: ModuleFacts) -> list[CarriedState]:
    """Every name that carries a graph-attached value from one iteration (or call) to the next,
    without a ``.detach()`` or a re-initialisation on the way."""
    return facts.derived(_Carries).carries


def detached_each_iteration(facts: ModuleFacts) -> frozenset[tuple[FunctionInfo, str]]:
    """(function, name) for the states a loop explicitly cuts off their history every iteration
    (``x = x.detach()``, ``h.detach_()``, ``repackage_hidden(h)``): the code records their graph
    and drops it on purpose, step by step."""
    return facts.derived(_Carries).detached_each_iteration()


def bounded_carries(facts: ModuleFacts, loop: LoopInfo) -> set[str]:
    """Names ``loop`` carries with their graph for a few iterations and then re-initialises."""
    return facts.derived(_Carries).bounded_carries(loop)


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
        training = _training_test(statement.test)
        if training is not False:
            _scan_block(list(statement.body.body), inner, found, facts)
        if training is True:
            return  # the rest runs in evaluation mode only
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


def _training_test(test: cst.BaseExpression) -> bool | None:
    """True for ``if self.training:``, False for ``if not self.training:``, else None. A branch
    that runs only in evaluation mode records no training step's graph (evaluation without
    ``torch.no_grad()`` is LL201's finding), so the scan leaves its bindings out: the fix of a
    cache written in ``forward`` is often ``if not self.training:`` around the write."""
    negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
    inner = test.expression if negated else test  # type: ignore[attr-defined]
    if dotted_name(inner) != "self.training":
        return None
    return not negated


def _scan_small(small: cst.BaseSmallStatement, guards: frozenset[str], found: _Body, facts: ModuleFacts) -> None:
    names: list[str] = []
    if isinstance(small, cst.Assign):
        names = [name for target in small.targets for name in bound_names(target.target)]
        names += sorted(_slice_writes(small))
    elif isinstance(small, cst.AugAssign) or (isinstance(small, cst.AnnAssign) and small.value is not None):
        names = bound_names(small.target)
    elif isinstance(small, cst.Del):
        names = bound_names(small.target)
    elif isinstance(small, cst.Expr):
        updated = _in_place_update(small.value)
        if updated is not None:
            names = [updated[0]]
    if names:
        found.add(_Binding(small, names, guards, facts.statement_fact(small)))


#: In-place methods that overwrite the receiver instead of updating it from its old value.
_OVERWRITING_METHODS = frozenset({"copy_", "zero_", "fill_", "normal_", "uniform_", "random_", "bernoulli_", "exponential_", "set_"})
#: In-place methods that change how the receiver is recorded, not its value.
_NOT_UPDATING_METHODS = frozenset({"detach_", "requires_grad_", "share_memory_", "retain_grad"})


def _in_place_update(expr: cst.BaseExpression) -> tuple[str, list[cst.Call]] | None:
    """``self.mean.mul_(m).add_(x * (1 - m))``: the dotted name an in-place call chain updates
    from its own value, and the calls of the chain (None if the chain is not such an update).
    On a slice of an attribute (``self.cache[:b].scatter_(1, idx, k)``, ``self.buf[i].copy_(v)``)
    any in-place write is an update: the rest of the tensor keeps its old value and history."""
    calls: list[cst.Call] = []
    current = expr
    while isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute):
        method = current.func.attr.value
        if not method.endswith("_") or method.startswith("_") or method in _NOT_UPDATING_METHODS:
            return None
        calls.append(current)
        current = current.func.value
    if not calls:
        return None
    if isinstance(current, cst.Subscript):
        name = _sliced_attribute(current)
        return (name, calls) if name is not None else None
    name = dotted_name(current)
    if name is None or any(c.func.attr.value in _OVERWRITING_METHODS for c in calls):  # type: ignore[attr-defined]
        return None
    return name, calls


def _sliced_attribute(target: cst.Subscript) -> str | None:
    """``self.cache`` for ``self.cache[:b, pos]``: an attribute of ``self`` (state that outlives
    the call) that the subscript reads part of. Local buffers filled slice by slice are LL102's."""
    base: cst.BaseExpression = target
    while isinstance(base, cst.Subscript):
        base = base.value
    name = dotted_name(base)
    return name if name is not None and name.startswith("self.") else None


def _slice_writes(node: cst.CSTNode) -> set[str]:
    """``self.cache_k[:b, start:end] = k``: the attributes of ``self`` an assignment writes a part
    of. Into a tensor that is an update from its old value (the rest is kept, and autograd links
    the new history to the old one); whether it is a tensor is the caller's question."""
    if not isinstance(node, cst.Assign):
        return set()
    found = set()
    for target in node.targets:
        if isinstance(target.target, cst.Subscript):
            name = _sliced_attribute(target.target)
            if name is not None:
                found.add(name)
    return found


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


def _detaches(expr: cst.CSTNode, name: str, aliases: set[str], facts: ModuleFacts, scope: FunctionInfo | None = None) -> bool:
    """``h.detach()``, ``tuple(v.detach() for v in h)``, ``repackage_hidden(h)``, ``Variable(h.data)``,
    ``h.new_zeros(...)``, or a call (made in ``scope``) of a function of the file that cuts the
    parameter it gets ``name`` in before anything else: the expression cuts ``name`` (or an
    alias of it) off its history."""
    watched = {name} | aliases
    for node in walk(expr, into=not_into_scopes):
        if isinstance(node, cst.Call):
            leaf = _callee_leaf(node, facts)
            if leaf in torch_api.DETACH_METHODS or leaf in _FRESH_LIKE_METHODS or _DETACHING_CALL.search(leaf):
                if any(watched & names_read(part) for part in _call_parts(node)):
                    return True
            if scope is not None and _callee_cuts_argument(node, watched, scope, facts):
                return True
        elif isinstance(node, cst.Attribute) and node.attr.value == "data":
            if watched & names_read(node.value):
                return True
    return False


def _callee_cuts_argument(call: cst.Call, watched: set[str], scope: FunctionInfo, facts: ModuleFacts) -> bool:
    """``char, h = predict(net, char, h)`` where ``predict`` starts with ``h = tuple(each.data for
    each in h)``: the state goes back into the helper every step, but the helper cuts it off its
    history before it computes anything with it, so no chain of graphs forms across the calls."""
    passed = [arg for arg in call.args if not arg.star and watched & names_read(arg.value)]
    if not passed:
        return False
    callee = local_callee(call, scope, facts)
    if callee is None or callee.node is None:
        return False
    bound = 1 if isinstance(call.func, cst.Attribute) and callee.is_method and not is_staticmethod(callee.node) else 0
    for arg in passed:
        parameter = parameter_for(callee.node, call, arg, bound)
        if parameter is None or not _cut_at_entry(callee.node, parameter, facts):
            return False
    return True


def _cut_at_entry(function: cst.FunctionDef, parameter: str, facts: ModuleFacts) -> bool:
    """The first statement of ``function`` that reads ``parameter`` re-binds it cut off its
    history (``h = h.detach()``, ``hidden = repackage_hidden(hidden)``), or the function re-binds
    it before reading it at all."""
    body = function.body
    if not isinstance(body, cst.IndentedBlock):
        return False
    for statement in body.body:
        found = _first_use_in(statement, parameter, True)
        if found == "bound":
            return True
        if found != "read":
            continue
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return False
        small = statement.body[0]
        expr = _assigned_expr(small)
        return expr is not None and parameter in _statement_targets(small) and _detaches(expr, parameter, _comprehension_aliases(expr, parameter), facts)
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


def _history(body: _Body, name: str, facts: ModuleFacts, inputs: _GraphSources | None = None) -> _NameHistory:
    """How ``body`` treats ``name``. ``inputs``: what carries a graph into a per-step method
    that the value analysis does not see (a layer's inputs, what forward hooks record)."""
    history = _NameHistory()
    bindings = body.bindings.get(name, [])
    if not any(binding.fact is not None for binding in bindings):
        return history  # bound only by loop headers (or not at all): nothing computed is carried
    for binding in bindings:
        node = binding.node
        fact = binding.fact
        if isinstance(node, cst.Expr) and fact is not None:
            in_place = _in_place_update(node.value)
            if in_place is not None and fact.grad is not GradMode.DISABLED:  # no_grad: not recorded
                value = _strongest_argument(in_place[1], facts, inputs)
                if value is not None:
                    history.updates.append((fact, value))
            continue
        if fact is not None and name in _slice_writes(node):
            value = _slice_write_value(node, name, facts, inputs)  # type: ignore[arg-type]
            if value is not None and fact.grad is not GradMode.DISABLED:
                history.updates.append((fact, value))
            continue
        expr = _assigned_expr(node)
        if expr is None or fact is None:  # a loop target, ``with ... as``, ``del``: a fresh start
            history.reset = True
            continue
        value = _bound_value(node, facts.value(expr), name)
        if inputs is not None:
            value = inputs.graph_through(value, expr, facts)
        if not _reads(node, name, value):
            if binding.guards & set(binding.names):
                # ``if hidden is None: hidden = init_hidden()``: a lazy start, not a reset; so is
                # ``if self.h is None: self.h, self.c = ...`` for ``self.c``, started with it
                continue
            history.reset = True
            continue
        if value.kind in (Kind.DETACHED, Kind.NOT_TENSOR) or _detaches(expr, name, _comprehension_aliases(expr, name), facts, fact.function):
            history.detached = True
            continue
        if _passes_through(expr, name) or not _brings_graph(expr, name, facts, inputs):
            continue  # ``h = h.to(device)``, ``x = x + sigma * noise``: no new graph enters
        if value.is_graph:
            if value.confidence is not Confidence.HIGH and name in facts.summary(fact.function).backward_consumed:
                value = replace(value, confidence=Confidence.HIGH)  # as the provenance pass binds it
            history.updates.append((fact, value))
    if history.updates and not history.detached:
        aliases = body.aliases.get(name, set())
        history.detached = any(_in_place_detach(call, name, aliases, facts) for call in body.calls)
    return history


def _brings_graph(expr: cst.CSTNode, name: str, facts: ModuleFacts, inputs: _GraphSources | None) -> bool:
    """Whether an update of ``name`` puts a graph into it besides its own: a part of ``expr`` that
    does not read ``name`` and is graph-attached (``eps`` in ``x = x - beta * eps``), or a call
    that reads ``name`` and computes more than a tensor method of it (``model(x, h)``). ``x = x +
    sigma * torch.randn_like(x)`` only carries ``x``'s own graph along."""
    if isinstance(expr, (cst.Lambda, cst.FunctionDef)):
        return False
    reads = name in names_read(expr)
    if not reads:
        if not isinstance(expr, cst.BaseExpression):
            return False
        value = facts.value(expr)
        if inputs is not None:
            value = inputs.graph_through(value, expr, facts)
        return value.is_graph
    if dotted_name(expr) == name:
        return False
    if isinstance(expr, cst.Call):
        value = facts.value(expr)
        if value.role is None and value.kind in (Kind.DETACHED, Kind.NOT_TENSOR):
            return False  # torch.randn_like(x), x.argmax(-1)
        func = expr.func
        on_name = isinstance(func, cst.Attribute) and name in names_read(func.value)
        if not on_name and facts.imports.resolve(func) is None:
            return True  # model(x, h), helper(h): computes something of its own
    return any(_brings_graph(child, name, facts, inputs) for child in children(expr))


def _passes_through(expr: cst.BaseExpression, name: str) -> bool:
    """``h``, ``h.to(device)``, ``h.view(1, -1)``, ``h[0]``: the old value itself, moved or
    viewed, with no new graph."""
    while True:
        if dotted_name(expr) == name:
            return True
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in torch_api.VIEW_METHODS:
            expr = expr.func.value  # the arguments are shapes, devices and dtypes
        else:
            return False


@dataclass(frozen=True)
class _GraphSources:
    """Values of a per-step method that carry a graph the value analysis does not assume: the
    tensor parameters of a layer's ``forward`` (in training they carry the graph of the layers
    before it: a normalisation layer inside a network), and the items the method takes out of a
    list on ``self`` that a forward hook fills with a module's inputs or outputs
    (``pre = self.records.pop(0)``)."""

    names: frozenset[str]
    confidence: Confidence
    #: Of ``names``, locals bound to items of such a list: the value analysis knows the list
    #: only as it starts (``self.records = []``) and takes its items for no tensors.
    items: frozenset[str] = frozenset()

    def graph_through(self, value: Value, expr: cst.BaseExpression, facts: ModuleFacts) -> Value:
        """``value`` of ``expr``, graph-attached when ``expr`` computes with a source (not
        through ``.detach()``)."""
        if value.kind in (Kind.UNKNOWN, Kind.NOT_TENSOR) and value.role is None and value.deps & self.names and self._computes_with_input(expr, facts):
            return replace(value, kind=Kind.GRAPH, evidence=Evidence.DERIVED, confidence=self.confidence)
        return value

    def _computes_with_input(self, expr: cst.CSTNode, facts: ModuleFacts) -> bool:
        if isinstance(expr, cst.BaseExpression):
            if self._item(expr):
                return True
            value = facts.value(expr)
            arithmetic = isinstance(expr, (cst.BinaryOperation, cst.UnaryOperation)) and bool(self.items)
            if value.role is None and (value.kind is Kind.DETACHED or (value.kind is Kind.NOT_TENSOR and not arithmetic)):
                return False  # (arithmetic on an item is taken for a number like the item itself)
            if isinstance(expr, cst.Name):
                return expr.value != "self" and bool(value.deps & self.names)
            if isinstance(expr, cst.Attribute):
                # An attribute of the module (``self.running_var``) is not this call's input, whatever
                # it was computed from in earlier calls; ``x.shape`` is not a tensor.
                if (dotted_name(expr) or "").startswith("self") or expr.attr.value in torch_api.NON_TENSOR_ATTRIBUTES:
                    return False
                return self._computes_with_input(expr.value, facts)
        return any(self._computes_with_input(child, facts) for child in children(expr))

    def _item(self, expr: cst.BaseExpression) -> bool:
        """``pre``, ``pre[0]``, ``pre.t()``: an item of a hook-filled list, or a tensor computed
        from it by indexing or a tensor method."""
        while True:
            if isinstance(expr, cst.Name):
                return expr.value in self.items
            if isinstance(expr, cst.Subscript):
                expr = expr.value
            elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value not in _NOT_COMPUTING_METHODS:
                expr = expr.func.value
            else:
                return False


def _slice_write_value(node: cst.Assign, name: str, facts: ModuleFacts, sources: _GraphSources | None) -> Value | None:
    """The graph ``self.buf[i] = v`` writes into the tensor ``self.buf`` (None: no graph, or
    ``self.buf`` is not known to be a tensor: ``self.logs[key] = loss`` replaces a dict entry)."""
    written = [t.target for t in node.targets if isinstance(t.target, cst.Subscript) and _sliced_attribute(t.target) == name]
    if not any(facts.value(target.value).is_plain_tensor for target in written):  # type: ignore[attr-defined]
        return None
    value = facts.value(node.value)
    if sources is not None:
        value = sources.graph_through(value, node.value, facts)
    return value if value.is_graph else None


def _strongest_argument(calls: list[cst.Call], facts: ModuleFacts, inputs: _GraphSources | None) -> Value | None:
    """The graph-attached argument an in-place chain puts into its receiver, if any."""
    values = []
    for call in calls:
        for arg in call.args:
            value = facts.value(arg.value)
            if inputs is not None:
                value = inputs.graph_through(value, arg.value, facts)
            if value.is_graph:
                values.append(value)
    return _strongest(values) if values else None


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


def _is_accumulation(node: cst.CSTNode, name: str, facts: ModuleFacts) -> bool:
    """``total += x`` / ``avg = 0.9 * avg + 0.1 * x`` / ``total = torch.add(total, x)``: ``name``
    is only a term of its own sum (what LL101 reports); ``preds = torch.cat([preds, x])``: it is
    only the container being grown (what LL102 reports). Either way not an input of the
    computation."""
    found = accumulation(node, facts.imports)
    if found is not None and found.target == name and not found.in_place:
        return True
    grown = grown_tensor(node, facts.imports)
    return grown is not None and grown[0] == name


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


def _aliases_bound(node: cst.CSTNode, watched: set[str]) -> set[str]:
    """The names an assignment binds to a watched value itself, a slice or a view of it
    (``weights = self.fast``, ``keys, values = self.k[:b], self.v[:b]``, ``h, c = self.hidden``)."""
    if not isinstance(node, cst.Assign):
        return set()
    found: set[str] = set()
    for target in node.targets:
        found |= _aliased_part(target.target, node.value, watched)
    return found


def _aliased_part(target: cst.BaseExpression, value: cst.BaseExpression, watched: set[str]) -> set[str]:
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) and len(target.elements) == len(value.elements):
        found: set[str] = set()
        for element, part in zip(target.elements, value.elements):
            if not isinstance(element, cst.StarredElement) and not isinstance(part, cst.StarredElement):
                found |= _aliased_part(element.value, part.value, watched)
        return found
    if any(_passes_through(value, held) for held in watched):
        return {bound for bound in bound_names(target) if "." not in bound}
    return set()


def _reaches_model_or_backward(idx: _Carries, fact: StatementFact, name: str) -> bool:
    """An accumulated value counts as fed back only when it reaches a model call, a tensor that
    is differentiated, or the output of a per-step method (``forward``'s return)."""
    for call in idx.facts.index.model_calls_by_statement.get(fact.node, []):
        if any(_mentions(arg.value, name) for arg in call.args):
            return True
    if isinstance(fact.node, cst.Return):
        return fact.function.runs_per_step
    consumed = idx.facts.summary(fact.function).backward_consumed
    return any(target in consumed for target in _statement_targets(fact.node))


def _feed(idx: _Carries, statements: list[StatementFact], name: str, history: _NameHistory, *, aliases: bool = False) -> StatementFact | None:
    """The first statement that feeds the carried value of ``name`` into a graph computation;
    with ``aliases``, also through a local that holds it, a slice or a view of it (``weights =
    self.fast`` then ``model(x, weights)``; ``keys = self.cache[:b, :n]`` then ``q @ keys``). A
    state on ``self`` is read through locals; a local state is followed by name only (its own
    locals are states of the loop in their own right: ``past = out.past_key_values``)."""
    facts = idx.facts
    accumulated_only = all(_is_accumulation(fact.node, name, facts) for fact, _ in history.updates)
    in_place = {fact.node for fact, _ in history.updates if isinstance(fact.node, cst.Expr) or name in _slice_writes(fact.node)}
    watched = {name}
    for fact in statements:
        bound = _aliases_bound(fact.node, watched) if aliases else set()
        if bound:
            watched |= bound
            continue
        watched -= set(_statement_targets(fact.node)) - {name}
        if fact.grad is GradMode.DISABLED or fact.node in in_place:
            continue
        expr = _statement_expr(fact.node)
        if expr is None or _is_accumulation(fact.node, name, facts) or not any(_computes_with(expr, held) for held in watched):
            continue
        if not idx.facts.value(expr).is_graph:
            continue
        if accumulated_only and not _reaches_model_or_backward(idx, fact, name):
            continue
        return fact
    return None


# ---- finding the carries --------------------------------------------------------------------------
def _iterates_batches(loop: LoopInfo, facts: ModuleFacts) -> bool:
    """A loop over a data loader (``for x, y in loader`` where ``loader`` is one, ``batch =
    next(it)`` in the body, a chunk walk over an input); not ``for step in range(n)`` (maybe the
    time steps of one sequence) nor ``for x_t in batch.transpose(0, 1)``."""
    node = loop.node
    if not isinstance(node, cst.For):
        return False
    iterable = inner_iterable(node.iter)
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and iterable.func.attr.value in torch_api.SLICING_METHODS:
        return False  # for x_t in batch_ix.transpose(0, 1): the time steps of one batch
    return loop.iterates_data or facts.value(node.iter).role is Role.LOADER


def _crosses_steps(idx: _Carries, loop: LoopInfo, enclosing: tuple[LoopInfo, ...], function: FunctionInfo) -> bool:
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


def _find_carries(idx: _Carries) -> Iterator[CarriedState]:
    facts = idx.facts
    for loop in facts.structure.loops.values():
        statements = facts.index.statements_in_loop(loop.node)
        if not statements:
            continue
        body = idx.body(loop.node)
        enclosing = statements[0].loops[: statements[0].loops.index(loop)]
        function = statements[0].function
        for name in _candidate_names(body):
            if name in loop.item_names:
                continue  # ``for imgs, caps in loader: imgs = encoder(imgs)``: the header re-binds it first
            history = _history(body, name, facts)
            if history.cut or not history.updates or not _live_at_entry(loop.node.body, name):
                continue
            feed = _feed(idx, statements, name, history)
            crosses = _crosses_steps(idx, loop, enclosing, function)
            unused, with_grad = False, True
            value = _strongest([value for _, value in history.updates])
            if feed is not None and not crosses and "." not in name and not _calls_its_items(idx, loop):
                unused, with_grad = _unused_graph(facts, function, name)
                if unused:
                    value = _model_evidence(facts, statements, function, value)
            yield CarriedState(
                name=name,
                loop=loop,
                function=function,
                value=value,
                feed=feed,
                crosses_steps=crosses,
                backward_each_iteration=idx.runs_backward(loop),
                updates=tuple(fact for fact, _ in history.updates),
                graph_unused=unused,
                seeds=_seeds(facts, loop, function, name) if unused else (),
                runs_with_grad=with_grad,
            )
    per_step = per_step_functions(facts)
    for function in facts.structure.functions.values():
        if not function.is_method or function.node is None or function.name == "__init__":
            continue
        if not (function.runs_per_step or function in per_step):
            continue  # a method the framework or the file's own loops call once per step
        statements = facts.index.statements_of(function)
        body = idx.body(function.node)
        inputs = _graph_sources(facts, function)
        for name in _candidate_names(body):
            if not name.startswith("self.") or not _live_at_entry(function.node.body, name):
                continue
            history = _history(body, name, facts, inputs)
            if history.cut or not history.updates or _reset_elsewhere(idx, function, function.cls, name):
                continue
            feed = _feed(idx, statements, name, history, aliases=True)
            yield CarriedState(
                name=name,
                loop=None,
                function=function,
                value=_strongest([value for _, value in history.updates]),
                feed=feed,
                crosses_steps=True,
                backward_each_iteration=False,
                updates=tuple(fact for fact, _ in history.updates),
                running_statistic=feed is None and inputs is not None,
            )


def _calls_its_items(idx: _Carries, loop: LoopInfo) -> bool:
    """``for layer in self.layers: h = layer(h)``: the loop walks the layers of one forward pass
    (its items are called), a chain as long as the network, not one that grows."""
    node = loop.node
    if not isinstance(node, cst.For):
        return False
    items = set(bound_names(node.target))
    for call in idx.body(node).calls:
        func = call.func
        name = dotted_name(func)
        if name is not None and name.split(".", 1)[0] in items:
            return True  # layer(h), block.attn(h)
        if isinstance(func, cst.Subscript) and items & names_read(func):
            return True  # self.layers[i](h)
    return False


def _unused_graph(facts: ModuleFacts, function: FunctionInfo, name: str) -> tuple[bool, bool | None]:
    """(nothing differentiates the graph ``name`` carries, whether ``function`` runs with
    gradients on as far as the file shows)."""
    from leaklint.analysis.graph_use import graph_use

    use = graph_use(facts)
    with_grad = use.runs_with_grad(function)
    if with_grad is False:
        return False, False
    used, _ = use.name_flow(function, name)
    return not used, with_grad


def _model_evidence(facts: ModuleFacts, statements: list[StatementFact], function: FunctionInfo, value: Value) -> Value:
    """A state believed graph-attached only because a model is called by a name that suggests
    one (``policy_net(obs, h)``): medium confidence when every caller in the file passes a model."""
    from leaklint.analysis.graph_use import graph_use

    if value.confidence is not Confidence.LOW or value.evidence not in (Evidence.MODEL, Evidence.DERIVED):
        return value
    use = graph_use(facts)
    nodes = {fact.node for fact in statements}
    for call in facts.model_calls():
        if call.statement is not None and call.statement.node in nodes and call.model.confidence is Confidence.LOW:
            if use.model_confidence(call.node.func, function) is not Confidence.LOW:
                return replace(value, confidence=Confidence.MEDIUM)
    return value


def _seeds(facts: ModuleFacts, loop: LoopInfo, function: FunctionInfo, name: str) -> tuple[StatementFact, ...]:
    """The last binding of ``name`` before ``loop``, when it binds a graph: where an inference
    loop's chain of graphs starts (``past = model(prompt).past_key_values``)."""
    statements = facts.index.statements_in_loop(loop.node)
    enclosing = set(statements[0].loops[: statements[0].loops.index(loop)]) if statements else set()
    last = None
    for fact in facts.index.statements_of(function):
        if any(outer is loop for outer in fact.loops):
            break
        if name in _statement_targets(fact.node) and set(fact.loops) <= enclosing:
            last = fact
    return (last,) if last is not None and _bound_graph(facts, last, name) else ()


def _bound_graph(facts: ModuleFacts, fact: StatementFact, name: str) -> bool:
    expr = _assigned_expr(fact.node)
    return expr is not None and _bound_value(fact.node, facts.value(expr), name).is_graph and fact.grad is not GradMode.DISABLED


def _live_at_entry(suite: cst.BaseSuite, name: str) -> bool:
    """Whether the value ``name`` holds when ``suite`` starts is read in it: some statement reads
    ``name`` before a statement that surely runs re-binds it (``out = model(x, h)`` then
    ``h = out[1]`` reads the old ``h``; ``out`` itself is made afresh before any read)."""
    found = _first_use(list(suite.body) if isinstance(suite, cst.IndentedBlock) else list(suite.body), name, True)
    return found == "read"


def _first_use(statements: list[cst.CSTNode], name: str, certain: bool) -> str | None:
    """"read" or "bound" for the first thing ``statements`` do with ``name``, None for neither;
    a binding counts only where it surely runs (``certain``)."""
    for statement in statements:
        found = _first_use_in(statement, name, certain)
        if found is not None:
            return found
    return None


def _first_use_in(statement: cst.CSTNode, name: str, certain: bool) -> str | None:
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return None
    if isinstance(statement, cst.SimpleStatementLine):
        return _first_use(list(statement.body), name, certain)
    if isinstance(statement, cst.BaseSmallStatement):
        if isinstance(statement, cst.Expr) and _in_place_update(statement.value) is not None:
            return "read" if _in_place_update(statement.value)[0] == name else (  # type: ignore[index]
                "read" if name in names_read(statement) else None
            )
        if name in _slice_writes(statement):
            return "read"  # self.buf[i] = v keeps the rest of self.buf
        expr = _statement_expr(statement)
        reads = names_read(expr) if expr is not None else names_read(statement)
        if isinstance(statement, cst.AugAssign):
            reads = reads | names_read(statement.target)
        if name in reads:
            return "read"
        if name in _statement_targets(statement) and certain:
            return "bound"
        return None
    header: list[cst.CSTNode] = []
    if isinstance(statement, (cst.If, cst.While)):
        header = [statement.test]
    elif isinstance(statement, cst.For):
        header = [statement.iter]
    elif isinstance(statement, cst.With):
        header = [item.item for item in statement.items]
    if any(name in names_read(part) for part in header):
        return "read"
    # Each block is read on its own (a block that binds before it reads does not read the old
    # value); only a block that surely runs can bind for what follows.
    surely_runs = isinstance(statement, (cst.With, cst.Try, cst.TryStar))
    if isinstance(statement, cst.For) and name in bound_names(statement.target):
        return None  # the loop's own item
    blocks: list[cst.BaseSuite] = []
    body = getattr(statement, "body", None)
    if isinstance(body, cst.BaseSuite):
        blocks.append(body)
    orelse = getattr(statement, "orelse", None)
    while isinstance(orelse, cst.If):
        if name in names_read(orelse.test):
            return "read"
        blocks.append(orelse.body)
        orelse = orelse.orelse
    if isinstance(orelse, cst.Else):
        blocks.append(orelse.body)
    blocks += [handler.body for handler in getattr(statement, "handlers", ())]
    final = getattr(statement, "finalbody", None)
    if isinstance(final, cst.Finally):
        blocks.append(final.body)
    for index, block in enumerate(blocks):
        found = _first_use(list(block.body), name, True)
        if found == "read":
            return "read"
        if found == "bound" and index == 0 and surely_runs and certain:
            return "bound"
    return None


def _graph_sources(facts: ModuleFacts, function: FunctionInfo) -> _GraphSources | None:
    """What carries a graph into ``function`` that the value analysis does not see: a layer's
    inputs, the items of lists on ``self`` that forward hooks fill (either, both or None)."""
    layer = _layer_inputs(facts, function)
    hooked = _hook_items(facts, function)
    if layer is None or hooked is None:
        return layer or hooked
    confidence = min(layer.confidence, hooked.confidence, key=lambda c: c.rank)
    return _GraphSources(layer.names | hooked.names, confidence, hooked.items)


def _hook_items(facts: ModuleFacts, function: FunctionInfo) -> _GraphSources | None:
    """The lists on ``self`` that forward hooks fill with graph-attached tensors, and the locals
    ``function`` binds to their items (``pre = self.records.pop(0)``, ``for o in self.outs:``)."""
    filled = facts.derived(_hook_filled_attributes).get(function.cls) if function.cls is not None else None
    if not filled or function.node is None:
        return None
    items: set[str] = set()
    for node in walk(function.node.body, into=not_into_scopes):
        if isinstance(node, cst.Assign) and _taken_from(node.value) in filled:
            items.update(name for target in node.targets for name in bound_names(target.target) if "." not in name)
        elif isinstance(node, cst.For) and _iterated_lists(node.iter) & filled.keys():
            items.update(bound_names(node.target))
    confidence = min(filled.values(), key=lambda c: c.rank)
    return _GraphSources(frozenset(filled) | frozenset(items), confidence, frozenset(items))


def _taken_from(expr: cst.BaseExpression) -> str | None:
    """``self.records`` for ``self.records.pop(0)``, ``self.records[-1]``, ``self.records.popleft()``."""
    while True:
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("pop", "popleft"):
            expr = expr.func.value
        else:
            return dotted_name(expr)


def _iterated_lists(expr: cst.BaseExpression) -> set[str]:
    """The lists a ``for`` header walks: ``self.outs``, ``zip(self.pre, self.post)``, ``enumerate(self.outs)``."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in ("zip", "enumerate", "reversed"):
        return {name for arg in expr.args for name in _iterated_lists(arg.value)}
    name = dotted_name(expr)
    return {name} if name is not None else set()


#: Methods that add an item to a list or a queue.
_ADDING_METHODS = frozenset({"append", "appendleft", "extend", "insert", "put"})


def _hook_filled_attributes(facts: ModuleFacts) -> dict[ClassInfo, dict[str, Confidence]]:
    """Per class, the lists on ``self`` that a forward hook (registered anywhere in the file, a
    lambda, a method or a closure over ``self``) adds a module's inputs or outputs to as they
    are, with their graph: ``m.register_forward_hook(lambda m, i, o: self.outs.append(o))``.
    Each forward pass with gradients on adds a graph-attached tensor (output: high confidence;
    inputs: medium, the first layer's input is data). Nothing when every forward runs without grad."""
    found: dict[ClassInfo, dict[str, Confidence]] = {}
    calls = facts.model_calls()
    if calls and all(call.grad is GradMode.DISABLED for call in calls):
        return found
    for registration in hook_registrations(facts):
        if registration.kind not in (HookKind.FORWARD, HookKind.FORWARD_PRE):
            continue  # gradients handed to backward hooks carry no graph
        for hook in resolve_hook(registration.hook, registration.fact.function, facts):
            cls = hook.info.cls if hook.info is not None and hook.info.cls is not None else registration.fact.function.cls
            if cls is None:
                continue
            for attribute, confidence in _self_lists_filled(hook, registration.kind):
                known = found.setdefault(cls, {})
                if attribute not in known or confidence.rank > known[attribute].rank:
                    known[attribute] = confidence
    return found


def _self_lists_filled(hook: HookFunction, kind: HookKind) -> Iterator[tuple[str, Confidence]]:
    """``(self.outs, confidence)`` for each ``self.outs.append(x)`` in the hook's body where ``x``
    is (computed from) a tensor argument of the hook and not detached on the way."""
    tainted = graph_parameters(hook, kind)
    body = hook.node.body
    for node in walk(body, into=not_into_scopes):
        if isinstance(node, cst.Assign):
            confidence = _hook_taint(node.value, tainted)
            for target in node.targets:
                for name in bound_names(target.target):
                    if confidence is not None:
                        tainted[name] = confidence
                    else:
                        tainted.pop(name, None)
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _ADDING_METHODS:
            receiver = dotted_name(node.func.value)
            confidence = max(
                (c for c in (_hook_taint(arg.value, tainted) for arg in node.args) if c is not None),
                key=lambda c: c.rank,
                default=None,
            )
            if receiver is not None and receiver.startswith("self.") and confidence is not None:
                yield receiver, confidence


def _hook_taint(expr: cst.BaseExpression, tainted: dict[str, Confidence]) -> Confidence | None:
    """How surely ``expr`` carries a hook argument's graph: it reads one and nothing in it
    detaches or converts (``o.detach()``, ``o.data``, ``o.item()``, ``o.shape``)."""
    hits = [tainted[name] for name in names_read(expr) if name in tainted]
    if not hits:
        return None
    for node in walk(expr, into=not_into_scopes):
        if isinstance(node, cst.Attribute) and (
            node.attr.value in _NOT_COMPUTING_METHODS
            or node.attr.value in torch_api.DETACHED_ATTRIBUTES
            or node.attr.value in torch_api.NON_TENSOR_ATTRIBUTES
        ):
            return None
    return max(hits, key=lambda c: c.rank)


def _layer_inputs(facts: ModuleFacts, function: FunctionInfo) -> _GraphSources | None:
    """In the ``forward`` of a module class, its tensor parameters: graph-attached in training
    when the class is a layer of a network (built inside another module, or an argument of
    ``nn.Sequential`` / ``nn.ModuleList``); else low confidence."""
    cls = function.cls
    if cls is None or not cls.is_module or function.name != "forward":
        return None
    names = frozenset(function.params[1:])
    if not names:
        return None
    confidence = Confidence.MEDIUM if _used_as_layer(facts, cls) else Confidence.LOW
    return _GraphSources(names, confidence)


_MODULE_CONTAINERS = frozenset({"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict"})


def _used_as_layer(facts: ModuleFacts, cls: ClassInfo) -> bool:
    for place in facts.index.calls_named(cls.name):
        call = place.node
        if not isinstance(call.func, cst.Name) or call.func.value != cls.name:
            continue
        for ancestor in place.path:
            if isinstance(ancestor, cst.FunctionDef):
                info = facts.structure.functions.get(ancestor)
                if info is not None and info.cls is not None and info.cls.is_module and info.cls is not cls:
                    return True
            elif isinstance(ancestor, cst.Call) and facts.imports.resolve(ancestor.func) in _MODULE_CONTAINERS:
                return True
    return False


def _reset_elsewhere(idx: _Carries, function: FunctionInfo, cls: ClassInfo, name: str) -> bool:
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
