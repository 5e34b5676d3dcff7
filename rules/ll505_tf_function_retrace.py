"""LL505 tf-function-retrace: a tf.function called with changing Python numbers or bound methods."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Iterator

import libcst as cst

from leaklint.analysis.calls import caller_of
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name, dotted_names_in
from leaklint.analysis.places import COMPREHENSIONS, Place
from leaklint.analysis.structure import FunctionInfo, bound_names
from leaklint.analysis.syntax import call_argument
from leaklint.analysis.iterations import few_runs
from leaklint.analysis.tensorflow import Site, TfGraph, has_input_signature, is_tf_function, tf_graph
from leaklint.analysis.torch_api import LOOPS_OR_FUNCTIONS, TENSORFLOW_CODE, TENSORFLOW_ROOTS
from leaklint.analysis.walk import not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names
from leaklint.rule import Measured, Rule, Violation


class TfFunctionRetrace(Rule):
    code = "LL505"
    name = "tf-function-retrace"
    severity = Severity.LEAK
    summary = "A tf.function is called with a Python number that changes every call, or a bound method, so it traces and keeps a new graph per call."
    help = (
        "pass changing numbers as tensors (tf.constant(step), or a tf.Variable assigned each step), "
        "give the function an input_signature, or close over the object instead of passing a bound method"
    )
    #: What a file must contain: TensorFlow, ``tf.function``, and a loop or a function to repeat the call.
    needs = TENSORFLOW_CODE & Names("function") & LOOPS_OR_FUNCTIONS
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(1, 0, 0), leaks=(10, 0))
    docs = """
## What it finds
A call of a `tf.function` (a local function decorated with `@tf.function`, or a name bound to
`tf.function(f)`, in both cases without an `input_signature`) that runs again and again — in a
loop, or in a function called from one — and passes:

- a Python number that changes from call to call: the counter of the loop
  (`for step in range(n)`), a number the loop recomputes from it (`lr = schedule(step)`) or
  updates (`epsilon = max(0.05, epsilon * 0.999)`, `step += 1`), an attribute the program keeps
  updating (`agent.sigma = agent.sigma * 0.999`), a Python number made from any of these
  (`float(0.5 * np.exp(-step / 1000))`, a local schedule returning `math.exp(-5.0 * phase * phase)`),
  or a parameter that callers pass such a number to (the
  parameters of a Keras model's `call`, or of a class's `__call__`, get what `model(x, limit)`
  passes);
- a bound method (`train_epoch(model.step, data)`): each attribute access makes a new method
  object, which never matches the traced one.

Numbers that stay the same (a literal, a constant bound once before the loop), tensors
(`tf.constant(step)`), and functions with an `input_signature` are not reported.

## Why it matters
A `tf.function` keeps one traced graph per distinct signature of its arguments, and a Python
value is part of the signature by its value: `train_step(x, 1)` and `train_step(x, 2)` are two
traces. A number that changes every call therefore traces the whole function again every call —
tracing costs far more than running the step — and every trace, with its graph and concrete
function, stays in the function's cache for the life of the program. Memory grows step after
step, and TensorFlow warns "N out of the last N calls triggered tf.function retracing".

## Example
```python
@tf.function
def train_step(batch, lr):
    optimizer.learning_rate.assign(lr)
    ...

for step in range(num_steps):
    lr = schedule(step)
    train_step(next(data), lr)        # a new trace per learning rate
```

## Use instead
```python
@tf.function
def train_step(batch, lr):
    optimizer.learning_rate.assign(lr)
    ...

for step in range(num_steps):
    lr = schedule(step)
    train_step(next(data), tf.constant(lr, tf.float32))   # one trace for every value
```

## Fix safety
No automatic fix: turning a Python number into a tensor changes what the traced code sees (a
Python `if` on it becomes a graph conditional, or stops working), so the function body may need
changes too.

## Known false positives
A number that takes only a few values (a phase flag 0/1 counted as a loop counter over two
iterations) retraces only a few times; suppress with `# noqa: LL505`. Retracing caused by
tensors whose shape changes from call to call is not detected (shapes are not known
statically). On bench/realcode the rule's finding is true: a filter-visualization loop passing
the filter index as a Python int, one trace per filter.

## References
- TensorFlow guide, "Better performance with tf.function", rules of tracing and controlling
  retracing: https://www.tensorflow.org/guide/function#rules_of_tracing
- A different concrete function for each Python scalar value:
  https://github.com/tensorflow/tensorflow/issues/24726
- A new graph built on every training step, RAM growing every epoch:
  https://github.com/tensorflow/tensorflow/issues/38002
- The retracing warning in a sampling loop: https://github.com/theislab/scCODA/issues/13
- Runtime repro: `leaklint verify LL505` measures the leaky and the fixed loop body.
"""
    VALID = (
        # the number goes in as a tensor
        """
import tensorflow as tf
@tf.function
def train_step(x, step):
    return x * tf.cast(step, tf.float32)
for step in range(1000):
    train_step(x, tf.constant(step))
""",
        # an input_signature: one trace for every value
        """
import tensorflow as tf
@tf.function(input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.float32)])
def scaled(x, lr):
    return x * lr
for step in range(1000):
    scaled(x, 0.1 * step)
""",
        # a constant Python number: one trace
        """
import tensorflow as tf
@tf.function
def train_step(x, lr):
    return x * lr
lr = 1e-3
for batch in dataset:
    train_step(batch, lr)
""",
        # the object is closed over, not passed as a bound method
        """
import tensorflow as tf
class Model:
    def step(self, x):
        return x
model = Model()
@tf.function
def run_epoch(dataset):
    for x in dataset:
        model.step(x)
for epoch in range(100):
    run_epoch(dataset)
""",
    )
    INVALID = (
        # a Keras model's call() hands the tf.function the float its caller anneals every step
        """
import numpy as np
import tensorflow as tf
@tf.function
def shrink(x, limit):
    return tf.sign(x) * tf.nn.relu(tf.abs(x) - limit)
class Sparse(tf.keras.Model):
    def call(self, x, limit):
        return shrink(self.dense(x), limit)  # expect: LL505
model = Sparse()
for step, batch in enumerate(dataset):
    limit = float(0.5 * np.exp(-step / 1000))
    codes = model(batch, limit)
""",
        """
import tensorflow as tf
@tf.function
def train_step(x, step):
    tf.summary.scalar("loss", tf.reduce_sum(x), step=step)
for step in range(100000):
    train_step(next(data), step)  # expect: LL505
""",
        """
import tensorflow as tf
def schedule(step, start, end, total):
    frac = min(1.0, step / total)
    return start + (end - start) * frac
@tf.function
def train_step(batch, lr):
    return batch * lr
step = 0
while step < 10000:
    lr = schedule(step, 1e-3, 1e-5, 10000)
    train_step(next(data), lr)  # expect: LL505
    step += 1
""",
        # a ramp-up weight written with the math module, recomputed every epoch
        """
import math
import tensorflow as tf
def rampup(epoch, length=80):
    phase = 1.0 - min(epoch, length) / length
    return math.exp(-5.0 * phase * phase)
@tf.function
def train_step(x, weight):
    return tf.reduce_mean(x) * weight
for epoch in range(400):
    weight = 10.0 * rampup(epoch)
    for x in dataset:
        train_step(x, weight)  # expect: LL505
""",
        # a bound method passed as an argument
        """
import tensorflow as tf
class Regressor(tf.keras.Model):
    def step(self, x, y):
        return self(x) - y
@tf.function
def train_epoch(step_fn, dataset):
    for x, y in dataset:
        step_fn(x, y)
model = Regressor()
for epoch in range(100):
    train_epoch(model.step, dataset)  # expect: LL505
""",
        # a decaying attribute passed through a method called every step
        """
import tensorflow as tf
class Agent:
    def __init__(self, noise=0.3):
        self.noise = noise
    @tf.function
    def _act(self, state, noise):
        return state + tf.random.normal(tf.shape(state), stddev=noise)
    def act(self, state):
        return self._act(state, self.noise)  # expect: LL505
agent = Agent()
for t in range(100000):
    agent.act(observe())
    agent.noise = max(0.05, agent.noise * 0.9999)
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """A `tf.function` called with a Python float that changes every iteration (a new trace,
        kept, per call), vs the same float passed as a tensor (one trace)."""

        requires = ("tensorflow",)
        tensors = False
        host_meter = "heap"

        def setup(self, ctx):
            import tensorflow as tf
            ctx.x = tf.random.normal((8, 16))
            ctx.step = 0

            @tf.function
            def scaled(x, lr):
                return tf.reduce_sum(x * lr)

            ctx.scaled = scaled

        def leaky(self, ctx):
            ctx.step += 1
            ctx.scaled(ctx.x, 1e-3 / ctx.step)

        def fixed(self, ctx):
            import tensorflow as tf
            ctx.step += 1
            ctx.scaled(ctx.x, tf.constant(1e-3 / ctx.step, tf.float32))


# --- detection ------------------------------------------------------------------------------------
#: Builtins that turn numbers into numbers.
_NUMBER_BUILTINS = frozenset({"float", "int", "max", "min", "round", "abs", "pow"})
#: The standard library module whose functions take and return Python numbers (``math.exp``,
#: ``math.cos``): a schedule written with them is Python arithmetic.
_NUMBER_MODULE = "math"
_COUNTERS = frozenset({"range", "enumerate", "count"})
NUMBER, OTHER, UNKNOWN = "number", "other", "unknown"
_MAX_DEPTH = 4


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    if not facts.imports.imports_anything_from(*TENSORFLOW_ROOTS):
        return
    tf = tf_graph(facts)
    functions = _traced_functions(facts, tf)
    if not functions:
        return
    retrace = _Retrace(facts, tf)
    for place in tf.calls:
        call = place.node
        assert isinstance(call, cst.Call)
        name = _traced_callee(facts, tf, functions, call, place)
        if name is None:
            continue
        found = retrace.argument(call, place)
        if found is None:
            continue
        confidence, why = found
        if not place.loop_nodes or few_runs(facts, place.loop_nodes):
            function = caller_of(place, facts)
            repeated = tf.repeated.get(function)
            if repeated is None or repeated[0] is Confidence.LOW:
                continue
            confidence = min(confidence, repeated[0], key=lambda c: c.rank)
        yield Violation(
            node=call,
            message=(
                f"'{facts.describe(call)}' calls the tf.function '{name}' with {why}: tf.function traces a new "
                "graph for every new Python value or object it is passed, and keeps every trace"
            ),
            confidence=confidence,
            statement=place.statement(),
        )


def _traced_functions(facts: ModuleFacts, tf: TfGraph) -> dict[FunctionInfo, str]:
    """Local functions decorated with ``@tf.function`` (no input_signature), by their name."""
    found = {}
    for info in facts.structure.functions.values():
        node = info.node
        assert node is not None
        for decorator in node.decorators:
            if is_tf_function(facts, decorator.decorator) and not has_input_signature(decorator.decorator):
                found[info] = info.name
    return found


def _traced_callee(
    facts: ModuleFacts, tf: TfGraph, functions: dict[FunctionInfo, str], call: cst.Call, place: Place
) -> str | None:
    """The name of the tf.function ``call`` runs: a decorated local function, or a name bound to
    ``tf.function(...)`` (without an input_signature)."""
    callee = tf.callee_of.get(id(call))
    if callee is not None:
        return functions.get(callee)
    name = dotted_name(call.func)
    if name is None:
        return None
    bound = tf.lookup(name, tf.scopes_of(place))
    if not bound:
        return None
    wrapped = [b.value for b in bound if isinstance(b.value, cst.Call) and is_tf_function(facts, b.value) and not b.element]
    if wrapped and len(wrapped) == len(bound) and not any(has_input_signature(w) for w in wrapped):
        return name
    return None


class _Retrace:
    """Which arguments make a tf.function trace again: bound methods, Python numbers that change."""

    def __init__(self, facts: ModuleFacts, tf: TfGraph) -> None:
        self.facts = facts
        self.tf = tf

    def argument(self, call: cst.Call, place: Place) -> tuple[Confidence, str] | None:
        site = self.tf.scopes_of(place)
        for arg in call.args:
            if arg.star:
                continue
            value = arg.value
            method = self._bound_method(value, place)
            if method is not None:
                return Confidence.HIGH, f"the bound method '{method}' (a new object at every access, never found in the trace cache)"
            found = self._number(value, site, place, 0)
            if found.kind == NUMBER and _changes_at(found, site):
                return found.confidence, f"the Python number {found.why}"
        return None

    def _bound_method(self, value: cst.BaseExpression, place: Place) -> str | None:
        """``model.step`` (not called) where ``model`` is an instance of a local class with a method ``step``."""
        if not isinstance(value, cst.Attribute):
            return None
        owner = value.value
        if dotted_name(owner) == "self":
            function = caller_of(place, self.facts)
            cls = function.cls
        else:
            cls = self.tf.instance_class(owner, place)
        if cls is None or cls.find_method(value.attr.value) is None:
            return None
        return self.facts.describe(value)

    # --- Python numbers that change from call to call ---------------------------------------------
    def _number(self, expr: cst.BaseExpression, site: Site, place: Place, depth: int) -> _Num:
        """Whether ``expr`` (evaluated at ``site``) is a Python number, and what makes it change.
        ``depth`` counts the names and parameters followed, not the operators of one expression."""
        if depth > _MAX_DEPTH:
            return _Num(UNKNOWN)
        if isinstance(expr, (cst.Integer, cst.Float)):
            return _Num(NUMBER)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            return self._number(expr.expression, site, place, depth)
        if isinstance(expr, cst.BinaryOperation):
            return _combine([self._number(e, site, place, depth) for e in (expr.left, expr.right)])
        if isinstance(expr, cst.IfExp):
            return _combine([self._number(e, site, place, depth) for e in (expr.body, expr.orelse)])
        if isinstance(expr, cst.Call):
            return self._number_call(expr, site, place, depth)
        if isinstance(expr, cst.Name):
            return self._number_name(expr, site, place, depth)
        if isinstance(expr, cst.Attribute):
            return self._number_attribute(expr, site, place, depth)
        return _Num(OTHER)

    def _number_call(self, call: cst.Call, site: Site, place: Place, depth: int) -> _Num:
        func = call.func
        args = [a.value for a in call.args if not a.star]
        if (isinstance(func, cst.Name) and func.value in _NUMBER_BUILTINS and self.facts.imports.resolve(func) is None) or _is_math_call(call, self.facts):
            found = _combine([self._number(a, site, place, depth) for a in args])
            if found.kind == OTHER and func.value not in ("float", "int"):
                return found
            return _Num(NUMBER, found.why, found.confidence, found.loops)  # float(x) is a Python number, whatever x is
        function = self.tf.callee_of.get(id(call))
        if function is not None and function.node is not None and _returns_number(function.node, lambda c: _is_math_call(c, self.facts)):
            found = _combine([self._number(a, site, place, depth) for a in args])
            why = f"'{self.facts.describe(call)}', computed from {found.why}" if found.why is not None else None
            return _Num(NUMBER, why, found.confidence, found.loops)
        # np.exp(-step / 5000): not a Python number, but it changes with what it is computed from
        found = _combine([self._number(a, site, place, depth) for a in args])
        return _Num(OTHER, found.why, found.confidence, found.loops)

    def _number_name(self, expr: cst.Name, site: Site, place: Place, depth: int) -> _Num:
        name = expr.value
        counter = self._loop_counter(name, site)
        if counter is not None:
            return _Num(NUMBER, f"'{name}' (the counter of the loop at line {self.facts.line_of(counter)})", Confidence.HIGH, frozenset({id(counter)}))
        bound = self.tf.lookup(name, site)
        if bound is None:
            return self._parameter(name, site, depth)
        if not bound:
            return _Num(UNKNOWN)
        results = []
        for binding in bound:
            if binding.value is None or binding.element:
                return _Num(OTHER)
            found = self._number(binding.value, binding.site, place, depth + 1)
            if found.why is not None and found.loops is not None and not (found.loops & binding.site.loops):
                found = _Num(found.kind, None, found.confidence)  # computed once, after or before the loop
            results.append(found)
        combined = _combine(results)
        if combined.kind != NUMBER:
            return _Num(combined.kind)
        if combined.why is not None:
            why = f"'{name}' (recomputed from {combined.why})" if combined.loops is not None else combined.why
            return _Num(NUMBER, why, combined.confidence, combined.loops)
        updated = self._updated_in_loop(name, site)
        if updated is not None:
            return _Num(NUMBER, f"'{name}' (updated on every iteration of the loop at line {self.facts.line_of(updated)})", Confidence.HIGH, frozenset({id(updated)}))
        return _Num(NUMBER, None, combined.confidence)

    def _number_attribute(self, expr: cst.Attribute, site: Site, place: Place, depth: int) -> _Num:
        name = dotted_name(expr)
        if name is None:
            return _Num(OTHER)
        bound = self.tf.lookup(name, site) if name.startswith("self.") else None
        if not bound:
            return _Num(UNKNOWN)
        results = []
        for binding in bound:
            if binding.value is None or binding.element:
                return _Num(OTHER)
            found = self._number(binding.value, binding.site, place, depth + 1)
            if found.kind == UNKNOWN and isinstance(binding.value, cst.Name) and self._numeric_default(binding.value.value, binding.site):
                found = _Num(NUMBER, None, Confidence.MEDIUM)
            results.append(found)
        combined = _combine(results)
        if combined.kind != NUMBER:
            return _Num(combined.kind)
        decayed = self._attribute_updated(expr.attr.value)
        if decayed is not None:
            return _Num(NUMBER, f"'{name}' (updated as the program runs, at line {self.facts.line_of(decayed)})", Confidence.MEDIUM)
        return _Num(NUMBER, None, combined.confidence)

    def _loop_counter(self, name: str, site: Site) -> cst.CSTNode | None:
        """The loop around ``site`` that binds ``name`` to ``range(...)`` / ``enumerate(...)``'s index."""
        for loop in self._loops(site):
            target, iterable = _loop_header(loop)
            if target is None or not isinstance(iterable, cst.Call):
                continue
            func = iterable.func
            leaf = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
            if leaf not in _COUNTERS or (isinstance(func, cst.Attribute) and self.facts.imports.resolve(func) != "itertools.count"):
                continue
            if isinstance(target, cst.Name) and target.value == name and leaf != "enumerate":
                return loop
            if leaf == "enumerate" and isinstance(target, (cst.Tuple, cst.List)) and target.elements:
                first = target.elements[0].value
                if isinstance(first, cst.Name) and first.value == name:
                    return loop
        return None

    def _loops(self, site: Site) -> list[cst.CSTNode]:
        return [loop for loop in self._loop_nodes if id(loop) in site.loops]

    @cached_property
    def _loop_nodes(self) -> list[cst.CSTNode]:
        return [*self.facts.structure.loops, *(n for n in walk(self.facts.module) if isinstance(n, COMPREHENSIONS))]

    def _updated_in_loop(self, name: str, site: Site) -> cst.CSTNode | None:
        """A loop around ``site`` whose body updates ``name`` from itself (``step += 1``,
        ``epsilon = max(0.05, epsilon * 0.99)``)."""
        for loop in self._loops(site):
            body = loop.body if isinstance(loop, (cst.For, cst.While)) else None
            if body is None:
                continue
            for node in walk(body, into=not_into_scopes):
                if isinstance(node, cst.AugAssign) and dotted_name(node.target) == name:
                    return loop
                if isinstance(node, cst.Assign) and any(name in bound_names(t.target) for t in node.targets):
                    if name in dotted_names_in(node.value):
                        return loop
        return None

    def _attribute_updated(self, attribute: str) -> cst.CSTNode | None:
        """An assignment that updates ``<obj>.<attribute>`` from itself anywhere in the file
        (``agent.sigma = max(0.05, agent.sigma * 0.999)``, ``self.eps -= decay``)."""
        for node in walk(self.facts.module):
            if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Attribute) and node.target.attr.value == attribute:
                return node
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    t = target.target
                    if isinstance(t, cst.Attribute) and t.attr.value == attribute:
                        if any(n.rsplit(".", 1)[-1] == attribute for n in dotted_names_in(node.value) if "." in n):
                            return node
        return None

    def _numeric_default(self, name: str, site: Site) -> bool:
        """A parameter of the function around ``site`` with a numeric default (``sigma=0.3``)."""
        scope = site.scopes[0]
        if not isinstance(scope, cst.FunctionDef):
            return False
        for param in (*scope.params.params, *scope.params.kwonly_params):
            if param.name.value == name and isinstance(param.default, (cst.Integer, cst.Float)):
                return True
        return False

    def _parameter(self, name: str, site: Site, depth: int) -> _Num:
        """A parameter: what the callers of its function pass; it changes from call to call when
        a caller passes a number that changes where that call is made."""
        scope = site.scopes[0]
        function = self.facts.structure.functions.get(scope) if isinstance(scope, cst.FunctionDef) else None  # type: ignore[arg-type]
        if function is None or name not in function.params:
            return _Num(UNKNOWN)
        position = function.params.index(name) - (1 if function.is_method else 0)
        results = []
        for caller in self.tf.sites_of(function):
            passed = call_argument(caller.node, position, name)  # type: ignore[arg-type]
            if passed is None:
                continue
            caller_site = self.tf.scopes_of(caller)
            found = self._number(passed, caller_site, caller, depth + 1)
            if found.why is not None and _changes_at(found, caller_site):
                why = f"'{name}', passed {found.why} by the call at line {self.facts.line_of(caller.node)}"
                results.append(_Num(found.kind, why, Confidence.MEDIUM))
            else:
                results.append(_Num(found.kind))
        if not results:
            return _Num(UNKNOWN)
        return _combine(results)


@dataclass(frozen=True)
class _Num:
    """What :meth:`_Retrace._number` knows of a value: NUMBER / OTHER / UNKNOWN; why it changes
    (None: it does not); how sure; and the loops whose iterations change it (None: it changes
    from one call of the function to the next)."""

    kind: str
    why: str | None = None
    confidence: Confidence = Confidence.HIGH
    loops: frozenset[int] | None = None


def _changes_at(found: _Num, site: Site) -> bool:
    """A varying number changes at ``site``: it changes per call, or per iteration of a loop around it."""
    return found.why is not None and (found.loops is None or bool(found.loops & site.loops))


def _combine(results: list[_Num]) -> _Num:
    kinds = {r.kind for r in results}
    kind = OTHER if OTHER in kinds else NUMBER if NUMBER in kinds else UNKNOWN
    varying = [r for r in results if r.why is not None]
    if not varying:
        return _Num(kind)
    first = varying[0]
    loops = None if any(r.loops is None for r in varying) else frozenset().union(*(r.loops for r in varying))  # type: ignore[arg-type]
    return _Num(kind, first.why, first.confidence, loops)


def _loop_header(loop: cst.CSTNode) -> tuple[cst.BaseExpression | None, cst.BaseExpression | None]:
    if isinstance(loop, cst.For):
        return loop.target, loop.iter
    if isinstance(loop, COMPREHENSIONS):
        return loop.for_in.target, loop.for_in.iter
    return None, None


def _is_math_call(call: cst.Call, facts: ModuleFacts) -> bool:
    """``math.exp(x)`` (or ``exp(x)`` imported from math): a Python number."""
    qualified = facts.imports.resolve(call.func)
    return qualified is not None and qualified.split(".", 1)[0] == _NUMBER_MODULE


def _returns_number(function: cst.FunctionDef, is_number_call: Callable[[cst.Call], bool] = lambda call: False) -> bool:
    """The function returns Python arithmetic (``start + (end - start) * frac``,
    ``math.exp(-5.0 * phase * phase)``): every return is an arithmetic expression of parameters,
    numeric literals, number builtins (and the calls ``is_number_call`` accepts) and locals bound
    to such expressions, with a literal or a builtin somewhere (no tensors, no objects)."""
    if function.decorators:
        return False
    returns = [n.value for n in walk(function.body, into=not_into_scopes) if isinstance(n, cst.Return) and n.value is not None]
    if not returns:
        return False
    params = {p.name.value for p in (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params)}
    local: dict[str, list[cst.BaseExpression]] = {}
    for node in walk(function.body, into=not_into_scopes):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    local.setdefault(target.target.value, []).append(node.value)
    evidence = [False]

    def numeric(value: cst.BaseExpression, depth: int) -> bool:
        if depth > 10:
            return False
        if isinstance(value, (cst.Integer, cst.Float)):
            evidence[0] = True
            return True
        if isinstance(value, cst.Name):
            if value.value in local:
                return all(numeric(v, depth + 1) for v in local[value.value])
            return value.value in params
        if isinstance(value, cst.UnaryOperation):
            return numeric(value.expression, depth + 1)
        if isinstance(value, cst.BinaryOperation):
            return numeric(value.left, depth + 1) and numeric(value.right, depth + 1)
        if isinstance(value, cst.IfExp):
            return numeric(value.body, depth + 1) and numeric(value.orelse, depth + 1)
        if isinstance(value, cst.Call) and ((isinstance(value.func, cst.Name) and value.func.value in _NUMBER_BUILTINS) or is_number_call(value)):
            evidence[0] = True
            return all(numeric(a.value, depth + 1) for a in value.args)
        return False

    return all(not isinstance(v, cst.Name) and numeric(v, 0) for v in returns) and evidence[0]
