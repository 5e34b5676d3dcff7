"""How many times a loop runs at most, when the code says so.

A figure opened per item of ``random.sample(paths, k=3)``, a Keras model built per fold of
``KFold(n_splits=4)`` or an op added per row of ``df.head()`` happens a handful of times, not
once per step. Rules that report work repeated per step ask here whether a loop is bounded:

* by literals in its header (``range(3)``, ``[a, b]``, ``items[:4]``, ``dataset.take(1)``, what
  :attr:`LoopInfo.at_most` already knows, counters included);
* by a name bound to such an iterable or to an integer (``num_to_plot = 5`` then
  ``range(num_to_plot)``), in the function or at module level;
* by a parameter that every call of the function in the file gives an integer literal (or
  leaves at its literal default): ``def plot(paths, n=3): for p in random.sample(paths, k=n):``;
* by what a known call returns: ``random.sample(x, k)`` (k items), ``df.head()`` (5 rows) and
  its ``.iterrows()``, a cross-validation splitter's ``n_splits``.

Anything else is unbounded (None): a bound read from a config, a CLI argument or the data.

Some unbounded loops are still not per step or per item: :func:`walks_variables` (one pass over
a model's variables) and :func:`walks_equal_parts` (``for i in range(n)`` over the ``n`` equal
slices of one collection in memory, such as one batch split per device).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import libcst as cst

from leaklint.analysis.names import dotted_name
from leaklint.analysis.places import COMPREHENSIONS
from leaklint.analysis.structure import IterationReader, inner_iterable, int_literal, literal_iterations
from leaklint.analysis.syntax import call_argument
from leaklint.analysis.walk import not_into_scopes, walk

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.analysis.structure import FunctionInfo

#: A loop bounded to at most this many iterations repeats its body only a little.
FEW_ITERATIONS = 5
#: pandas: rows ``DataFrame.head()`` keeps when not told.
_HEAD_DEFAULT = 5
#: How many names deep a bound is followed (``rows = picks``; ``picks = random.sample(...)``).
_MAX_DEPTH = 4


def few_runs(facts: ModuleFacts, loops: Sequence[cst.CSTNode], limit: int = FEW_ITERATIONS, scope: FunctionInfo | None = None) -> bool:
    """Nested ``loops`` run their innermost body at most ``limit`` times in all. ``scope``: the
    function the loops are in, when known (its own names and parameters can bound them)."""
    total = 1
    for loop in loops:
        bound = iterations_at_most(facts, loop, scope)
        if bound is None:
            return False
        total *= bound
    return bool(loops) and total <= limit


def iterations_at_most(facts: ModuleFacts, loop: cst.CSTNode, scope: FunctionInfo | None = None) -> int | None:
    """The most iterations ``loop`` (a ``for``, a ``while`` or a comprehension) runs, or None."""
    info = facts.structure.loops.get(loop)  # type: ignore[arg-type]
    if info is not None and info.at_most is not None:
        return info.at_most
    iterable = loop.iter if isinstance(loop, cst.For) else loop.for_in.iter if isinstance(loop, COMPREHENSIONS) else None  # type: ignore[attr-defined]
    return items_at_most(facts, iterable, scope) if iterable is not None else None


def items_at_most(facts: ModuleFacts, iterable: cst.BaseExpression, scope: FunctionInfo | None = None, depth: int = 0) -> int | None:
    """The most items ``iterable`` yields, or None (see the module docstring): the literal
    grammar of :func:`~leaklint.analysis.structure.literal_iterations`, reading names and calls
    with what the file shows."""
    if depth > _MAX_DEPTH:
        return None
    return literal_iterations(iterable, _FileReader(facts, scope, depth))


class _FileReader(IterationReader):
    """Reads integers and iterables through the file's bindings and its callers' literals."""

    def __init__(self, facts: ModuleFacts, scope: FunctionInfo | None, depth: int) -> None:
        self.facts, self.scope, self.depth = facts, scope, depth

    def integer(self, expr: cst.BaseExpression) -> int | None:
        return integer_at_most(self.facts, expr, self.scope, self.depth + 1)

    def other(self, iterable: cst.BaseExpression) -> int | None:
        facts, scope, depth = self.facts, self.scope, self.depth + 1
        if isinstance(iterable, cst.Name):
            values = facts.index.visible_values(scope, iterable.value) if scope is not None else facts.index.module_values(iterable.value)
            counts = [items_at_most(facts, value, scope, depth) for value in values]
            return max(counts) if counts and None not in counts else None  # type: ignore[type-var]
        if not isinstance(iterable, cst.Call):
            return None
        func = iterable.func
        if facts.imports.resolve(func) == "random.sample":
            count = call_argument(iterable, 1, "k")
            return self.integer(count) if count is not None else None
        if not isinstance(func, cst.Attribute):
            return None
        method = func.attr.value
        if method == "head":  # pandas
            count = call_argument(iterable, 0, "n")
            return _HEAD_DEFAULT if count is None else self.integer(count)
        if method in ("iterrows", "itertuples") and not iterable.args:
            return items_at_most(facts, func.value, scope, depth)
        if method == "split":  # for train, val in KFold(n_splits=4).split(X)
            splitter = func.value
            if isinstance(splitter, cst.Name):
                values = facts.index.visible_values(scope or facts.structure.top, splitter.value)
                splitter = values[0] if len(values) == 1 else splitter  # type: ignore[assignment]
            if isinstance(splitter, cst.Call):
                n_splits = call_argument(splitter, 0, "n_splits")
                return self.integer(n_splits) if n_splits is not None else None
        return None


#: Calls and attributes that list a model's variables or their gradients: a loop over them runs
#: once per variable, a pass over the model's structure, however many steps the program takes.
_VARIABLE_LISTS = frozenset(
    {
        "tensorflow.gradients", "tensorflow.trainable_variables", "tensorflow.global_variables",
        "tensorflow.compat.v1.gradients", "tensorflow.compat.v1.trainable_variables", "tensorflow.compat.v1.global_variables",
    }
)
_VARIABLE_ATTRIBUTES = frozenset({"trainable_variables", "trainable_weights", "weights", "variables", "layers"})


def walks_variables(facts: ModuleFacts, loop: cst.CSTNode) -> bool:
    """``for grad in tf.gradients(q, agent.weights)``, ``for v in model.trainable_variables``: a
    loop over a model's variables (or their gradients), bounded by the model, not by the data."""
    if not isinstance(loop, cst.For):
        return False
    iterable = inner_iterable(loop.iter)
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "zip" and iterable.args:
        iterable = inner_iterable(iterable.args[0].value)  # for grad, var in zip(tf.gradients(...), variables)
    if isinstance(iterable, cst.Call):
        return facts.imports.resolve(iterable.func) in _VARIABLE_LISTS
    return isinstance(iterable, cst.Attribute) and iterable.attr.value in _VARIABLE_ATTRIBUTES


def integer_at_most(facts: ModuleFacts, expr: cst.BaseExpression, scope: FunctionInfo | None = None, depth: int = 0) -> int | None:
    """The largest value ``expr`` can have: an integer literal, a name bound only to such
    values (in ``scope`` or at module level), or a parameter of ``scope`` that every call in the
    file gives an integer literal (or leaves at an integer default)."""
    if isinstance(expr, cst.Integer):
        return int_literal(expr)
    if not isinstance(expr, cst.Name) or depth > _MAX_DEPTH:
        return None
    if scope is not None and scope.node is not None and expr.value in scope.params:
        literals = facts.parameter_literals(scope)
        value = literals.get(expr.value) if literals is not None else None
        return value if type(value) is int else None
    values = facts.index.visible_values(scope, expr.value) if scope is not None else facts.index.module_values(expr.value)
    found = [integer_at_most(facts, value, scope, depth + 1) for value in values if not isinstance(value, cst.Name)]
    return max(found) if found and None not in found else None  # type: ignore[type-var]


def walks_equal_parts(facts: ModuleFacts, loop: cst.CSTNode, scope: FunctionInfo | None = None) -> bool:
    """``for i in range(n)`` whose body takes the i-th of ``n`` equal slices of a collection held
    in memory (``size = len(items) // n`` ... ``items[size * i: size * (i + 1)]``): the loop runs
    once per part, and ``n`` is how many parts the code splits one collection into (devices,
    shards), not how much data there is, which goes into the size of each part."""
    if not isinstance(loop, cst.For) or not isinstance(loop.target, cst.Name):
        return False
    iterable = loop.iter
    if not (
        isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "range"
        and len(iterable.args) == 1 and iterable.args[0].keyword is None and not iterable.args[0].star
    ):
        return False
    count, index = iterable.args[0].value, loop.target.value
    if _measures_data(facts, count, scope):
        return False  # n_chunks = len(samples) // 4096: the number of parts grows with the data
    for node in walk(loop.body, into=not_into_scopes):
        if not isinstance(node, cst.Subscript) or len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Slice):
            continue
        bounds = node.slice[0].slice
        size = _times_index(bounds.lower, index)
        if size is not None and _end_of_part(bounds.upper, index, size) and _size_of_part(facts, size, count, scope):
            return True
    return False


def _measures_data(facts: ModuleFacts, count: cst.BaseExpression, scope: FunctionInfo | None) -> bool:
    """``count`` (or a binding of the name) is computed from the size of data: a ``len(...)`` or
    a ``.shape``/``.size``/``.numel()`` of something."""
    values = [count]
    if isinstance(count, cst.Name):
        values += facts.index.visible_values(scope, count.value) if scope is not None else facts.index.module_values(count.value)
    for value in values:
        for node in walk(value):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len":
                return True
            if isinstance(node, cst.Attribute) and node.attr.value in ("shape", "size", "numel"):
                return True
    return False


def _same(a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    """The same name or the same code (spacing aside)."""
    name = dotted_name(a)
    if name is not None:
        return name == dotted_name(b)
    return a.deep_equals(b)


def _factors(expr: cst.BaseExpression | None) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        return expr.left, expr.right
    return None


def _is_name(expr: cst.BaseExpression, name: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name


def _times_index(expr: cst.BaseExpression | None, index: str) -> cst.BaseExpression | None:
    """``size`` for ``size * i`` or ``i * size``."""
    factors = _factors(expr)
    if factors is None:
        return None
    left, right = factors
    return right if _is_name(left, index) else left if _is_name(right, index) else None


def _end_of_part(expr: cst.BaseExpression | None, index: str, size: cst.BaseExpression) -> bool:
    """``size * (i + 1)`` (either order, ``1 + i`` too) or ``size * i + size``."""
    factors = _factors(expr)
    if factors is not None:
        for next_index, other in (factors, factors[::-1]):
            if _same(other, size) and isinstance(next_index, cst.BinaryOperation) and isinstance(next_index.operator, cst.Add):
                terms = (next_index.left, next_index.right)
                if any(_is_name(t, index) for t in terms) and any(int_literal(t) == 1 for t in terms):
                    return True
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        for start, step in ((expr.left, expr.right), (expr.right, expr.left)):
            found = _times_index(start, index)
            if found is not None and _same(found, size) and _same(step, size):
                return True
    return False


def _size_of_part(facts: ModuleFacts, size: cst.BaseExpression, count: cst.BaseExpression, scope: FunctionInfo | None) -> bool:
    """``size`` is (or is bound only to) the length of a collection divided by ``count``:
    ``len(items) // n``, ``int(len(items) / n)``, ``items.shape[0] // n``."""
    values = [size]
    if isinstance(size, cst.Name):
        values = facts.index.visible_values(scope, size.value) if scope is not None else facts.index.module_values(size.value)
    return bool(values) and all(_length_over(value, count) for value in values)


def _length_over(expr: cst.BaseExpression, count: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "int" and len(expr.args) == 1:
        expr = expr.args[0].value
    if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Divide, cst.FloorDivide))):
        return False
    if not _same(expr.right, count):
        return False
    length = expr.left
    if isinstance(length, cst.Call):
        return isinstance(length.func, cst.Name) and length.func.value == "len" and len(length.args) == 1
    # items.shape[0]
    return (
        isinstance(length, cst.Subscript) and isinstance(length.value, cst.Attribute) and length.value.attr.value == "shape"
        and len(length.slice) == 1 and isinstance(length.slice[0].slice, cst.Index) and int_literal(length.slice[0].slice.value) == 0
    )
