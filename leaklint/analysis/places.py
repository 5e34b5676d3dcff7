"""Where a node runs: its scope, the loops that repeat it and how often they run, the guards
around it, and whether it is recovery code (an ``except`` clause, the ``finally`` of an OOM retry).

The statement facts (``facts.statements()``) answer this for simple statements with values; a
:class:`Place` answers it for any node (a call in a decorator, a ``for`` header, a comprehension),
from the chain of its ancestors, which one walk of the module collects (``facts.index``).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Callable, Iterator

import libcst as cst

from leaklint.analysis.heavy import built_here
from leaklint.analysis.structure import FunctionInfo, LoopInfo, bound_names, is_counter_loop
from leaklint.analysis.values import Role
from leaklint.analysis.walk import children, not_into_scopes, walk

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts

SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)
COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
#: A loop around step loops that runs at most this many times (``for run in range(3)``) repeats a
#: few runs, not epochs.
FEW_RUNS = 5
_OOM_WORD = re.compile(r"out.of.memory|outofmemory|\boom\b|resourceexhausted", re.IGNORECASE)
#: Nodes that never hold code below them (or only type hints and imports): not descended into.
_LEAF_TYPES = frozenset(
    {
        cst.Name, cst.SimpleString, cst.Integer, cst.Float, cst.Imaginary, cst.FormattedStringText,
        cst.Import, cst.ImportFrom, cst.Annotation, cst.Pass, cst.Break, cst.Continue, cst.Ellipsis,
        cst.Comment, cst.Newline, cst.EmptyLine,
    }
)


def walk_with_ancestors(
    root: cst.CSTNode, wanted: Callable[[cst.CSTNode], bool]
) -> Iterator[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]]:
    """Every node ``wanted`` accepts, with its ancestors (outermost first), in source order."""
    path: list[cst.CSTNode] = []
    stack: list[tuple[cst.CSTNode, int]] = [(root, 0)]
    leaves = _LEAF_TYPES
    while stack:
        node, depth = stack.pop()
        del path[depth:]
        if wanted(node):
            yield node, tuple(path)
        if type(node) in leaves:
            continue
        path.append(node)
        depth += 1
        stack.extend([(child, depth) for child in reversed(children(node))])


def _holds(parent: cst.CSTNode, child: cst.CSTNode, grandchild: cst.CSTNode | None) -> tuple[bool, bool]:
    """(``parent`` is a loop that runs ``child`` every iteration, ``parent`` is a scope whose body
    is ``child``). The ``iter`` of a ``for`` and its ``else`` run once; decorators and defaults of
    a ``def`` run in the enclosing scope."""
    if isinstance(parent, (cst.For, cst.While)):
        return child is parent.body, False
    if isinstance(parent, SCOPES):
        return False, child is parent.body
    if isinstance(parent, COMPREHENSIONS):
        if isinstance(child, cst.CompFor) and child is parent.for_in:
            return grandchild is not None and grandchild is not child.iter, False
        return True, False
    return False, False


@dataclass(frozen=True, eq=False)
class Place:
    """A node and its ancestors: the scope and the loops it runs in, the guards around it."""

    node: cst.CSTNode
    path: tuple[cst.CSTNode, ...]

    @cached_property
    def chain(self) -> tuple[cst.CSTNode, ...]:
        return self.path + (self.node,)

    @property
    def parent(self) -> cst.CSTNode | None:
        return self.path[-1] if self.path else None

    @cached_property
    def scope_index(self) -> int:
        """Index in ``chain`` of the innermost def/lambda/class whose body holds the node, or -1."""
        chain = self.chain
        for index in range(len(chain) - 2, -1, -1):
            grandchild = chain[index + 2] if index + 2 < len(chain) else None
            if _holds(chain[index], chain[index + 1], grandchild)[1]:
                return index
        return -1

    @cached_property
    def scope(self) -> cst.CSTNode | None:
        return self.chain[self.scope_index] if self.scope_index >= 0 else None

    @cached_property
    def loops(self) -> tuple[int, ...]:
        """Indices in ``chain`` of the loops (outermost first) that run the node every iteration,
        within its own scope (an outer function's loop does not run a nested def's body)."""
        chain = self.chain
        found = []
        for index in range(self.scope_index + 1, len(chain) - 1):
            grandchild = chain[index + 2] if index + 2 < len(chain) else None
            if _holds(chain[index], chain[index + 1], grandchild)[0]:
                found.append(index)
        return tuple(found)

    @property
    def loop_nodes(self) -> tuple[cst.CSTNode, ...]:
        """The loops of :attr:`loops` themselves (``for``, ``while``, comprehensions), outermost first."""
        return tuple(self.chain[index] for index in self.loops)

    def function(self, facts: ModuleFacts) -> FunctionInfo | None:
        """The function whose body holds the node (None at module level, in a lambda or a class body)."""
        scope = self.scope
        return facts.structure.functions.get(scope) if isinstance(scope, cst.FunctionDef) else None

    def guards(self, after: int = -1) -> list[cst.BaseExpression]:
        """The ``if`` / ternary tests whose branch holds the node, in its own scope (below index ``after``)."""
        return self._guards(max(after, self.scope_index) + 1)

    def all_guards(self) -> list[cst.BaseExpression]:
        """Every ``if`` / ternary test whose branch holds the node, across scopes."""
        return self._guards(0)

    def branches(self) -> list[tuple[cst.BaseExpression, bool]]:
        """(test, side) for each ``if`` / ternary whose branch holds the node, in its own scope:
        side True for the body, False for the ``else`` (an ``elif`` is the ``else`` of its ``if``)."""
        return self._branches(self.scope_index + 1)

    def _guards(self, start: int) -> list[cst.BaseExpression]:
        return [test for test, _ in self._branches(start)]

    def _branches(self, start: int) -> list[tuple[cst.BaseExpression, bool]]:
        chain = self.chain
        tests = []
        for index in range(start, len(chain) - 1):
            parent, child = chain[index], chain[index + 1]
            if isinstance(parent, (cst.If, cst.IfExp)) and child is not parent.test:
                tests.append((parent.test, child is parent.body))
        return tests

    def in_except_handler(self) -> bool:
        chain = self.chain
        return any(
            isinstance(chain[i], cst.ExceptHandler) and chain[i + 1] is chain[i].body
            for i in range(self.scope_index + 1, len(chain) - 1)
        )

    def in_oom_cleanup(self) -> bool:
        """In the ``finally`` of a ``try`` that handles running out of memory: recovery code."""
        chain = self.chain
        for i in range(self.scope_index + 1, len(chain) - 1):
            node = chain[i]
            if isinstance(node, cst.Try) and node.finalbody is not None and chain[i + 1] is node.finalbody:
                if any(_mentions_oom(handler) for handler in node.handlers):
                    return True
        return False

    def branch_guards(self) -> list[tuple[cst.BaseExpression, bool]]:
        """The ``if`` / ternary tests around the node in its own scope, each with the branch that
        holds it: True for the body (the test held), False for the ``else`` (it did not)."""
        chain = self.chain
        tests = []
        for index in range(self.scope_index + 1, len(chain) - 1):
            parent, child = chain[index], chain[index + 1]
            if isinstance(parent, (cst.If, cst.IfExp)) and child is not parent.test:
                tests.append((parent.test, child is parent.body))
        return tests

    def guarded_by_error_flag(self) -> bool:
        """Runs only after a failure: under ``if oom:`` where ``oom`` is set in an ``except``
        handler of the same scope and to a false literal everywhere else (``oom = False``; ``try:
        ...``; ``except OutOfMemoryError: oom = True``), or under ``if err is not None:`` where
        the handler keeps the exception. A rare recovery path, not the normal flow."""
        guards = self.branch_guards()
        if not guards:
            return False
        scope = self.scope
        region = scope.body if scope is not None else self.chain[0]  # type: ignore[attr-defined]
        flags = error_flags(region)
        return bool(flags) and any(_tests_error_flag(test, held, flags) for test, held in guards)

    def in_recovery_code(self) -> bool:
        """Error recovery: in an ``except`` handler, the ``finally`` of an out-of-memory ``try``,
        or a branch that only a flag set by an ``except`` handler opens."""
        return self.in_except_handler() or self.in_oom_cleanup() or self.guarded_by_error_flag()

    def opt_in_flag(self) -> str | None:
        """The parameter whose truth a guard around the node tests, when the function gives it a
        default of ``False`` or ``None``: code that runs only when a caller asks for it
        (``if use_cache:`` in ``def forward(self, x, use_cache=False)``); or the attribute of
        ``self`` it tests when the class's ``__init__`` sets it to ``False`` or ``None``
        (``if self.scalings_logging:``)."""
        scope = self.scope
        if not isinstance(scope, cst.FunctionDef):
            return None
        parameters = scope.params
        off = {
            param.name.value
            for param in (*parameters.posonly_params, *parameters.params, *parameters.kwonly_params)
            if isinstance(param.default, cst.Name) and param.default.value in ("False", "None")
        }
        attributes: frozenset[str] | None = None
        for test, held in _conjuncts(self.branch_guards()):
            if held and isinstance(test, cst.Name) and test.value in off:
                return test.value
            if held and isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name) and test.value.value == "self":
                if attributes is None:
                    attributes = self._attributes_off_at_init(scope)
                if test.attr.value in attributes:
                    return f"self.{test.attr.value}"
        return None

    def _attributes_off_at_init(self, method: cst.FunctionDef) -> frozenset[str]:
        """Attributes the ``__init__`` of ``method``'s class sets to ``False`` or ``None`` in its
        own body, unconditionally (``self.scalings_logging = False``): a flag off until some
        caller turns it on (``enable_scalings_logging()``). Empty for ``__init__`` itself."""
        if method.name.value == "__init__":
            return frozenset()
        chain = self.chain
        index = next((i for i, node in enumerate(chain) if node is method), None)
        cls = chain[index - 2] if index is not None and index >= 2 else None
        if not isinstance(cls, cst.ClassDef) or not isinstance(cls.body, cst.IndentedBlock):
            return frozenset()
        init = next(
            (node for node in cls.body.body if isinstance(node, cst.FunctionDef) and node.name.value == "__init__"), None
        )
        if init is None or not isinstance(init.body, cst.IndentedBlock):
            return frozenset()
        found = set()
        for line in init.body.body:
            if not isinstance(line, cst.SimpleStatementLine):
                continue
            for small in line.body:
                if (
                    isinstance(small, cst.Assign) and len(small.targets) == 1
                    and isinstance(small.value, cst.Name) and small.value.value in ("False", "None")
                ):
                    target = small.targets[0].target
                    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
                        found.add(target.attr.value)
        return frozenset(found)

    def statement(self) -> cst.SimpleStatementLine | None:
        """The statement line holding the node (for suppression comments), if it is simple."""
        for node in reversed(self.path):
            if isinstance(node, cst.SimpleStatementLine):
                return node
            if isinstance(node, (cst.BaseCompoundStatement, *SCOPES)):
                return None
        return None


def _literal_truth(expr: cst.BaseExpression, handler_names: frozenset[str] = frozenset()) -> bool | None:
    """True / False for a literal's truth value (``True``, ``None``, ``0``, ``"x"``, the caught
    exception), None when the value is not a literal."""
    if isinstance(expr, cst.Name):
        if expr.value == "True" or expr.value in handler_names:
            return True
        if expr.value in ("False", "None"):
            return False
        return None
    if isinstance(expr, cst.Integer):
        return int(expr.value.replace("_", ""), 0) != 0
    if isinstance(expr, cst.SimpleString):
        return len(expr.evaluated_value or "") > 0
    return None


def error_flags(region: cst.CSTNode) -> dict[str, bool]:
    """Names an ``except`` handler in ``region`` (not counting nested scopes) sets to record a
    failure, mapped to the truth value that means "it failed": every assignment inside a handler
    gives them that value, and every assignment outside one the opposite literal."""
    in_handlers: dict[str, set[bool | None]] = {}
    elsewhere: dict[str, set[bool | None]] = {}
    handler_targets: set[int] = set()
    for handler in walk(region, into=not_into_scopes):
        if not isinstance(handler, cst.ExceptHandler):
            continue
        caught = frozenset(bound_names(handler.name.name)) if handler.name is not None else frozenset()
        for node in walk(handler.body, into=not_into_scopes):
            if isinstance(node, cst.Assign):
                handler_targets.add(id(node))
                for name, value in _assigned_pairs(node):
                    truth = _literal_truth(value, caught) if value is not None else None
                    in_handlers.setdefault(name, set()).add(truth)
    if not in_handlers:
        return {}
    for node in walk(region, into=not_into_scopes):
        if isinstance(node, cst.Assign) and id(node) not in handler_targets:
            for name, value in _assigned_pairs(node):
                if name in in_handlers:
                    elsewhere.setdefault(name, set()).add(_literal_truth(value) if value is not None else None)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.For, cst.CompFor)):
            for name in bound_names(node.target):
                if name in in_handlers:
                    elsewhere.setdefault(name, set()).add(None)
    flags = {}
    for name, failed in in_handlers.items():
        normal = elsewhere.get(name, set())
        if len(failed) == 1 and None not in failed and normal and None not in normal and normal.isdisjoint(failed):
            flags[name] = next(iter(failed))
    return flags


def _assigned_pairs(node: cst.Assign) -> Iterator[tuple[str, cst.BaseExpression | None]]:
    """(name, the expression it gets) for each name an assignment binds; ``a, b = False, None``
    pairs up, anything else unpacked gives None."""
    for target in node.targets:
        names = target.target
        value = node.value
        if isinstance(names, (cst.Tuple, cst.List)):
            values = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
            if values is not None and len(values) == len(names.elements):
                for element, item in zip(names.elements, values):
                    single = isinstance(element.value, (cst.Name, cst.Attribute)) and not isinstance(item, cst.StarredElement)
                    for name in bound_names(element.value):
                        yield name, item.value if single else None
                continue
            for name in bound_names(names):
                yield name, None
            continue
        for name in bound_names(names):
            yield name, value


def _tests_error_flag(test: cst.BaseExpression, held: bool, flags: dict[str, bool]) -> bool:
    """Whether taking this branch of ``test`` (``held``: its body, else its ``else``) needs an
    error flag to hold its failure value: ``if oom:``, ``if not ok:``, ``if err is not None:``,
    ``if oom and retries < 3:``."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _tests_error_flag(test.expression, not held, flags)
    if isinstance(test, cst.BooleanOperation):
        # `a and b` held: both held; `a or b` not held: both not held.
        if held and isinstance(test.operator, cst.And) or not held and isinstance(test.operator, cst.Or):
            return _tests_error_flag(test.left, held, flags) or _tests_error_flag(test.right, held, flags)
        return False
    if isinstance(test, cst.Name):
        return test.value in flags and flags[test.value] is held
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name):
        name, comparison = test.left.value, test.comparisons[0]
        literal = _literal_truth(comparison.comparator)
        if name not in flags or literal is None or not isinstance(comparison.comparator, cst.Name):
            return False
        equal = isinstance(comparison.operator, (cst.Is, cst.Equal))
        if not equal and not isinstance(comparison.operator, (cst.IsNot, cst.NotEqual)):
            return False
        # `flag is None` / `flag == False` held means "flag has the falsy literal"
        means = literal if equal else not literal
        return flags[name] is (means if held else not means)
    return False


def _mentions_oom(handler: cst.ExceptHandler) -> bool:
    """``except torch.cuda.OutOfMemoryError`` / ``if "out of memory" in str(e)``."""
    for node in walk(handler):
        if isinstance(node, cst.Name) and _OOM_WORD.search(node.value):
            return True
        if isinstance(node, cst.SimpleString) and _OOM_WORD.search(node.value):
            return True
    return False


# --- how often a loop runs ----------------------------------------------------------------------
class Level(enum.Enum):
    """How often the body of a loop runs, as far as the code shows."""

    STEP = "step"  # a training/evaluation step: backward, optimizer step, a model run per item, or a data loader
    EPOCH = "epoch"  # once per epoch
    OUTER = "outer"  # around a step loop, but not named epoch: per fold, per model, per trial
    STRUCTURE = "structure"  # over layers, heads, files, configurations...


def builds_a_model(facts: ModuleFacts, loop: LoopInfo) -> bool:
    """The loop's own body builds a new model every iteration (``model = nn.Sequential(...)``):
    a sweep over models, folds or trials."""
    return any(
        isinstance(other.node, cst.Assign) and other.loops and other.loops[-1] is loop
        and built_here(other.node.value, other.function, facts) is not None
        for other in facts.index.statements_in_loop(loop.node)
    )


def loop_level(facts: ModuleFacts, loop: cst.CSTNode) -> Level:
    """Classify a loop by what it does, never by the names it binds or iterates.

    A step loop runs a backward, an optimizer step or a model on each item, or draws a batch of
    data per iteration; a loop around step loops is an epoch loop when it counts (``range(n)``,
    ``while``) and an outer loop when it walks anything else (configurations, models), runs a
    handful of times by its literals (``range(3)``) or builds a new model every iteration (folds,
    trials)."""
    info = facts.structure.loops.get(loop)
    if info is not None:
        if info.contains_iteration_loop:
            few = info.at_most is not None and info.at_most <= FEW_RUNS
            epochs = is_counter_loop(loop, facts.imports) and not few and not builds_a_model(facts, info)
            return Level.EPOCH if epochs else Level.OUTER
        if info.has_backward or info.has_optimizer_step or info.runs_model_on_items or info.iterates_data:
            return Level.STEP
        return Level.STRUCTURE
    if isinstance(loop, COMPREHENSIONS) and facts.value(loop.for_in.iter).role is Role.LOADER:
        return Level.STEP  # [model(x) for x in loader]
    return Level.STRUCTURE


def step_level(facts: ModuleFacts, place: Place) -> tuple[Level | None, int]:
    """The level of the innermost non-structure loop around ``place`` and its index in the chain
    (None, -1 when only structure loops, or none, run it)."""
    for index in reversed(place.loops):
        level = loop_level(facts, place.chain[index])
        if level is not Level.STRUCTURE:
            return level, index
    return None, -1


def per_iteration_names(facts: ModuleFacts, loop: cst.CSTNode) -> set[str]:
    """Names a loop binds afresh every iteration (its target and what its body assigns)."""
    info = facts.structure.loops.get(loop)
    if info is not None:
        return set(info.rebound)
    if isinstance(loop, COMPREHENSIONS):
        names: set[str] = set()
        comp: cst.CompFor | None = loop.for_in
        while comp is not None:
            names.update(bound_names(comp.target))
            comp = comp.inner_for_in
        return names
    return set()


def _conjuncts(guards):
    """The guards, with each part of a held ``a and b`` test as a guard of its own (both hold)."""
    for test, held in guards:
        if held and isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            yield from _conjuncts([(test.left, True), (test.right, True)])
        else:
            yield test, held
