"""The provenance pass: walks each function in statement order and values every expression.

It is a small abstract interpreter. The environment maps local names (and dotted ``self.x``
names) to :class:`~leaklint.analysis.values.Value` objects; statements update it in order, so a
value detached on one line is not attached on the next. Branches are joined, and a loop body is
re-run until the values flowing from one iteration into the next stop changing. Along the way it
records what rules need: the value of every expression, the context of every statement (function,
enclosing loops, gradient mode, environment) and every model call.
"""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass, field
from typing import AbstractSet, Any, Callable, Iterable, Iterator, Mapping, Sequence

import libcst as cst
from leaklint.analysis import device, percall_api, torch_api
from leaklint.analysis.arguments import arguments_by_parameter, arguments_with_nodes, bind_arguments, join_arguments, join_literals, literal_arguments, literal_truth
from leaklint.analysis.containers import bounded_attributes, container_name, literal_key
from leaklint.analysis.stores import constant_key
from leaklint.analysis.environment import Env
from leaklint.analysis.names import ImportMap, dotted_name
from leaklint.analysis.project_classes import KeepingMethod, ProjectClass
from leaklint.analysis.syntax import call_argument, keyword_is_true
from leaklint.analysis.walk import Walker, children, not_into_scopes, walk
from leaklint.analysis.structure import (
    ClassInfo,
    FunctionInfo,
    GradMode,
    LoopInfo,
    ModuleStructure,
    backpropagated_names,
    backward_target,
    bound_names,
    frees_whole_graph,
    is_strided_range,
    walked_items,
    walks_records_of_parameter,
    literal_grad_mode,
    names_bound_in,
)
from leaklint.analysis.values import (
    DETACHED,
    Device,
    NOT_TENSOR,
    UNKNOWN,
    Evidence,
    Kind,
    Role,
    Value,
    combine,
    function_value,
    graph,
    instance,
    join,
    replace,
    role,
    with_fields,
)
from leaklint.findings import Confidence

MAX_LOOP_PASSES = 3
#: Methods that return what they are given, wrapped, one per argument (a tuple for several):
#: accelerate's ``prepare`` (and ``prepare_model``...), Fabric's ``setup_dataloaders``.
WRAPPING_METHODS = percall_api.PREPARE_METHODS | {"setup_dataloaders"}


@dataclass(eq=False)
class StatementFact:
    """A simple statement with everything known at the point it runs."""

    node: cst.BaseSmallStatement
    line: cst.SimpleStatementLine | cst.BaseCompoundStatement | None
    function: FunctionInfo
    loops: tuple[LoopInfo, ...]  # outermost first
    grad: GradMode
    env: Mapping[str, Value]  # before the statement
    #: The models put in evaluation mode (``model.eval()``) earlier in the function.
    eval_mode: frozenset[str] = frozenset()


@dataclass(eq=False)
class ModelCall:
    """A forward call of something believed to be a model."""

    node: cst.Call
    statement: StatementFact | None
    callee: str | None  # dotted name of the model, if it has one
    model: Value
    grad: GradMode
    #: Why this call is evaluation code: "eval-mode" (``.eval()`` on it earlier), "eval-function", or None.
    eval_reason: str | None


@dataclass(frozen=True)
class StoredArgument:
    expr: cst.BaseExpression
    kind: str  # "accumulate" (self.sum += val) or "append" (self.values.append(val))
    attribute: str  # where the method keeps it, e.g. "self.sum"


@dataclass(eq=False)
class MethodStore:
    """``meter.update(loss, n)``: a call whose method keeps (some of) its arguments on ``self``."""

    node: cst.Call
    statement: StatementFact | None
    receiver: str
    #: The method: of this file, or of another module of the project (known by its summary).
    method: FunctionInfo | KeepingMethod
    stored: tuple[StoredArgument, ...]


@dataclass
class FunctionSummary:
    #: What the function returns (None: no ``return`` with a value seen).
    returns: Value | None = None
    #: Local names whose values flow into a ``return`` (accumulators built for the caller).
    returned_names: set[str] = field(default_factory=set)
    #: Names whose values flow into a backward call (the graph is consumed on purpose).
    backward_consumed: set[str] = field(default_factory=set)
    #: Of those, the names a backward differentiates as they are (``loss`` of ``loss.backward()``),
    #: with the lines of those backwards: which binding of the name feeds it is a question of
    #: where the name was last bound before that line (``facts.result_backpropagated``).
    backward_lines: dict[str, list[cst.CSTNode]] = field(default_factory=dict)
    #: The names that flow into a backward through what is computed from them (``logits`` of
    #: ``loss = ce(logits)`` ... ``loss.backward()``).
    consumed_through: set[str] = field(default_factory=set)
    #: For methods: parameter -> the (kind, attribute) pairs where the method keeps the argument
    #: on ``self``: "accumulate" (``self.sum += val``), "append" (``self.values.append(val)``,
    #: also into a slot: ``self.stats[key].append(val)``) or "slot" (``self.last = val``,
    #: ``self.logs[key] = val``); also through a method of an object it keeps
    #: (``self.meters[key].update(val)``).
    param_stores: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    #: The function runs a model forward or a backward (itself, or through a local call).
    runs_model: bool = False
    #: ... and some of those run with gradients enabled (not all under ``torch.no_grad()``, in it
    #: or in the local function it calls): a sampling method that only calls a no-grad helper does not.
    runs_model_with_grad: bool = False


@dataclass
class Recording:
    """What one round of the pass observed; the final round's recording is the truth."""

    values: dict[cst.CSTNode, Value] = field(default_factory=dict)
    statements: dict[cst.CSTNode, StatementFact] = field(default_factory=dict)
    model_calls: dict[cst.Call, ModelCall] = field(default_factory=dict)
    method_stores: dict[cst.Call, MethodStore] = field(default_factory=dict)
    summaries: dict[FunctionInfo, FunctionSummary] = field(default_factory=dict)
    #: Gradient mode at each direct call of a local function.
    call_sites: dict[cst.FunctionDef, list[GradMode]] = field(default_factory=dict)
    #: Local functions used other than by a direct call (callbacks): callers unknown.
    escaping: set[cst.FunctionDef] = field(default_factory=set)
    #: Method calls on another object that run a method of this file (``self.model.generate(x)``
    #: where ``self.model`` is known to be a ``TinyLM`` of the file).
    resolved_method_calls: set[cst.Call] = field(default_factory=set)
    #: Gradient mode at each ``x.method(...)`` call whose method name a class of the file
    #: defines (``model.module.inference(x)``), resolved or not.
    method_call_grads: dict[cst.Call, GradMode] = field(default_factory=dict)
    #: ``self.x`` values per class, from every method.
    class_attributes: dict[ClassInfo, dict[str, Value]] = field(default_factory=dict)
    module_env: dict[str, Value] = field(default_factory=dict)
    #: Every value a module-level name was bound to, joined: a function may run at any point.
    module_bindings: dict[str, Value] = field(default_factory=dict)
    #: Each function's environment when its body ends (the outer scope of its nested defs).
    final_envs: dict[FunctionInfo, dict[str, Value]] = field(default_factory=dict)
    #: Expressions that are the callee of a call (a function named there is called, not passed).
    direct_callees: set[cst.CSTNode] = field(default_factory=set)
    #: Local function -> parameter -> the arguments its direct calls pass, joined: what the
    #: parameter holds when the function runs (read the next round, see ``Inputs.callee_arguments``).
    call_arguments: dict[cst.FunctionDef, dict[str, Value]] = field(default_factory=dict)
    #: Local method -> its direct calls that pass it a graph-attached argument.
    graph_argument_calls: dict[cst.FunctionDef, list[cst.Call]] = field(default_factory=dict)
    #: Local function -> parameter -> the literal (``True``, ``False``, ``None``, a number or a
    #: string) every direct call passes for it, defaults included (``VARIES`` where they differ).
    literal_arguments: dict[cst.FunctionDef, dict[str, object]] = field(default_factory=dict)


class Inputs:
    """Everything one run of the interpreter reads from outside the function it interprets.

    The rest of what it reads is fixed for the module (the code, ``structure``, ``imports``) or
    written by the run itself. Keeping these reads in one place lets the rounds of the pass
    (``leaklint.analysis.rounds``) log them, and tell when a run would see exactly what it saw
    the round before.

    ``round``: what the functions interpreted before this one recorded this round. ``previous``:
    the whole previous round, None in the first. ``outer_env``: the names of enclosing scopes.
    """

    def __init__(self, function: FunctionInfo, round: Recording, previous: Recording | None, outer_env: Mapping[str, Value]) -> None:
        self.function = function
        self.round = round
        self.previous = previous
        self.outer_env = outer_env
        #: The summary this run builds: a recursive call in the first round sees it as it stands.
        self.own_summary = FunctionSummary()

    def _callee_summary(self, function: FunctionInfo) -> FunctionSummary | None:
        if self.previous is not None:
            # A callee interpreted earlier this round already saw this round's inputs.
            if function is not self.function and function in self.round.summaries:
                return self.round.summaries[function]
            return self.previous.summaries.get(function)
        if function is self.function:
            return self.own_summary
        return self.round.summaries.get(function)

    def callee_result(self, function: FunctionInfo) -> tuple[Value | None, bool, bool] | None:
        """What a call of the local ``function`` returns, whether it runs a model, and whether it
        runs one with gradients enabled (None: unknown yet)."""
        summary = self._callee_summary(function)
        return None if summary is None else (summary.returns, summary.runs_model, summary.runs_model_with_grad)

    def callee_param_stores(self, method: FunctionInfo) -> dict[str, tuple[tuple[str, str], ...]] | None:
        """Which arguments ``method`` keeps on ``self`` (None: unknown yet)."""
        summary = self._callee_summary(method)
        return None if summary is None else summary.param_stores

    def callee_arguments(self, function: FunctionInfo) -> dict[str, Value] | None:
        """What the direct calls of ``function`` pass for each parameter: those of the previous
        round, joined with those the functions interpreted before it this round made, so a
        chain of calls is followed in one round where the callers come first (None: nothing
        known yet)."""
        if self.previous is None or function.node is None:
            return None
        before = self.previous.call_arguments.get(function.node)
        now = self.round.call_arguments.get(function.node)
        if not now:
            return before
        merged = dict(before or {})
        join_arguments(merged, now)
        return merged

    def callee_literals(self, function: FunctionInfo) -> dict[str, object] | None:
        """The literal each parameter of ``function`` gets from every call in the file, the
        previous round; None where that is not known to be every call (a method, a function
        used other than by a direct call)."""
        previous = self.previous
        if previous is None or function.node is None or function.is_method or function.node in previous.escaping:
            return None
        return previous.literal_arguments.get(function.node)

    def upstream_of_backward(self) -> AbstractSet[str]:
        """Names that flowed into a backward call in this function, the previous round."""
        summary = self.previous.summaries.get(self.function) if self.previous is not None else None
        return summary.backward_consumed if summary is not None else frozenset()

    def outer(self, name: str) -> Value | None:
        """The value of ``name`` in the enclosing scopes, None if they do not bind it."""
        return self.outer_env[name] if name in self.outer_env else None

    def class_attributes(self, cls: ClassInfo) -> dict[str, Value]:
        """``self.x`` values as the methods of ``cls`` (and of its local bases) leave them."""
        merged: dict[str, Value] = {}
        for source in (self.previous.class_attributes if self.previous else {}, self.round.class_attributes):
            for klass in [cls, *cls.local_bases]:
                for name, value in source.get(klass, {}).items():
                    merged[name] = join(merged[name], value) if name in merged else value
        return merged


def merge_run(round: Recording, function: FunctionInfo, run: Recording) -> None:
    """Add what one run of the interpreter recorded (``run``, its own recording) to the round's,
    as if it had written there directly: call sites append, ``self.x`` values and module-level
    bindings join with what earlier functions left."""
    round.values.update(run.values)
    round.statements.update(run.statements)
    round.model_calls.update(run.model_calls)
    round.method_stores.update(run.method_stores)
    round.summaries[function] = run.summaries[function]
    for callee, sites in run.call_sites.items():
        round.call_sites.setdefault(callee, []).extend(sites)
    round.escaping |= run.escaping
    round.resolved_method_calls |= run.resolved_method_calls
    round.method_call_grads.update(run.method_call_grads)
    for cls, attributes in run.class_attributes.items():
        merged = round.class_attributes.setdefault(cls, {})
        for name, value in attributes.items():
            merged[name] = join(merged[name], value) if name in merged else value
    round.module_env.update(run.module_env)
    for name, value in run.module_bindings.items():
        seen = round.module_bindings.get(name)
        round.module_bindings[name] = value if seen is None else join(seen, value)
    round.final_envs.update(run.final_envs)
    round.direct_callees |= run.direct_callees
    for callee, arguments in run.call_arguments.items():
        join_arguments(round.call_arguments.setdefault(callee, {}), arguments)
    for callee, literals in run.literal_arguments.items():
        join_literals(round.literal_arguments.setdefault(callee, {}), literals)
    for callee, calls in run.graph_argument_calls.items():
        known = round.graph_argument_calls.setdefault(callee, [])
        known.extend(call for call in calls if call not in known)


@dataclass
class Frame:
    env: Env
    grad: GradMode
    loops: tuple[LoopInfo, ...] = ()
    eval_mode: frozenset[str] = frozenset()
    #: Names an ``isinstance(x, nn.Module)`` test has ruled out as modules here.
    not_modules: frozenset[str] = frozenset()

    def copy(self) -> Frame:
        """The frame for a branch (see :meth:`Env.fork`)."""
        return replace(self, env=self.env.fork())


_BINARY_SYMBOLS = {
    cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/", cst.FloorDivide: "//",
    cst.Modulo: "%", cst.Power: "**", cst.MatrixMultiply: "@", cst.BitAnd: "&", cst.BitOr: "|",
    cst.BitXor: "^", cst.LeftShift: "<<", cst.RightShift: ">>",
}
_AUG_SYMBOLS = {
    cst.AddAssign: "+", cst.SubtractAssign: "-", cst.MultiplyAssign: "*", cst.DivideAssign: "/",
    cst.FloorDivideAssign: "//", cst.ModuloAssign: "%", cst.PowerAssign: "**", cst.MatrixMultiplyAssign: "@",
    cst.BitAndAssign: "&", cst.BitOrAssign: "|", cst.BitXorAssign: "^", cst.LeftShiftAssign: "<<",
    cst.RightShiftAssign: ">>",
}
#: Container methods that keep their argument.
STORING_METHODS = frozenset({"append", "appendleft", "extend", "insert", "add", "put"})
#: The storing methods of a list (or deque), which no tensor has: a graph-attached receiver of
#: one is a list that holds graphs, not a tensor.
LIST_STORING_METHODS = frozenset({"append", "appendleft", "extend", "insert"})
_BITWISE = frozenset({"&", "|", "^", "<<", ">>"})


def _mark_data_loop(loop: LoopInfo, enclosing: Sequence[LoopInfo]) -> None:
    """``loop`` draws a batch of data per iteration (what the structure scan could not see: a
    name bound to a loader, ``next(it)``, a chunk walk): the loops around it repeat a data loop."""
    loop.iterates_data = True
    for outer in enclosing:
        outer.contains_data_loop = True
        outer.contains_iteration_loop = True


def _outside_steps(enclosing: Sequence[LoopInfo], imports: ImportMap) -> bool:
    """No loop around reads data itself: none walks a loader nor unpacks records of a collection
    (``for x, y in batches``, marked as data only once its own body is done). Inside such a loop
    the same walk goes over the parts of that step's batch; around it may be epochs, files,
    models."""
    for loop in enclosing:
        if loop.iterates_data:
            return False
        if isinstance(loop.node, cst.For):
            walked, item = walked_items(loop.node.iter, loop.node.target, imports)
            if type(walked) in (cst.Name, cst.Attribute) and isinstance(item, (cst.Tuple, cst.List)) and len(item.elements) >= 2:
                return False
    return True


def _slices_by(body: cst.BaseSuite, counter: str) -> bool:
    """Some subscript in ``body`` slices from ``counter`` (``texts[start : start + n]``)."""
    for node in walk(body, into=not_into_scopes):
        if type(node) is cst.Slice and node.lower is not None and counter in {n.value for n in walk(node.lower) if type(n) is cst.Name}:
            return True
    return False


def _local_list(receiver: Value, method: str) -> bool:
    """``receiver.<method>(...)`` stores into a plain container (a list, a set): not a model or an
    object of the file, not a tensor (whose ``add``/``put`` return a new tensor)."""
    if receiver.role is not None:
        return False
    if receiver.kind is Kind.NOT_TENSOR:
        return True
    # `xs = [x0]` (a literal of unknown elements) or a list already holding graphs
    return method in LIST_STORING_METHODS and (receiver.is_graph or (receiver.items is not None and receiver.fields is None))


def _assigned_pairs(node: cst.Assign) -> Iterator[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """(target, value) of an assignment, element by element for ``a, b = x, y``."""
    for target in node.targets:
        left, right = target.target, node.value
        if isinstance(left, (cst.Tuple, cst.List)) and isinstance(right, (cst.Tuple, cst.List)) and len(left.elements) == len(right.elements):
            yield from ((a.value, b.value) for a, b in zip(left.elements, right.elements))
        else:
            yield left, right


def _holding_graphs(container: Value, added: list[Value]) -> Value:
    """A container after graph-attached ``added`` went in: as attached as the strongest of them,
    like the literal that would hold them (``[out]``)."""
    held = combine([a for a in added if a.is_graph and a.role is None], fresh=False)
    return replace(held, deps=container.deps | held.deps, device=container.device)


def _no_module(value: Value) -> Value:
    """``value`` known not to be a module: whatever else it is, not a model."""
    return replace(UNKNOWN, deps=value.deps) if value.role in (Role.MODEL, Role.FROZEN_MODEL) else value


def _exits(body: cst.BaseSuite) -> bool:
    """The block always leaves: it ends with ``return``, ``continue``, ``break`` or ``raise``."""
    statements = body.body
    last = statements[-1] if statements else None
    if type(last) is cst.SimpleStatementLine:
        last = last.body[-1] if last.body else None  # type: ignore[attr-defined]
    return type(last) in (cst.Return, cst.Continue, cst.Break, cst.Raise)


def _join_present(values: Iterable[Value | None]) -> Value | None:
    """The join of the values a name has on several paths, skipping the paths where it is
    unbound (a name bound on one path only keeps that path's value); None where none binds it."""
    merged: Value | None = None
    for value in values:
        if value is None or value is merged:
            continue
        merged = value if merged is None else join(merged, value)
    return merged


def binary_symbol(operator: cst.CSTNode) -> str:
    return _BINARY_SYMBOLS.get(type(operator)) or _AUG_SYMBOLS.get(type(operator), "?")


#: Builtins whose result is a Python value, never a tensor with a graph.
_TO_PYTHON_BUILTINS = frozenset({"float", "int", "bool", "len", "round", "str"})


def converted_names(expr: cst.BaseExpression) -> set[str]:
    """Names ``expr`` reads only inside a conversion to a number or a detached tensor
    (``val.item()``, ``float(val)``, ``val.detach()``, ``val.size(0)``): ``val`` in
    ``val.item() * n``, but not in ``val.item() + val``."""
    inside: set[str] = set()
    outside: set[str] = set()
    stack: list[tuple[cst.CSTNode, bool]] = [(expr, False)]
    while stack:
        current, converted = stack.pop()
        node_type = type(current)
        if node_type is cst.Name:
            (inside if converted else outside).add(current.value)  # type: ignore[attr-defined]
            continue
        if node_type is cst.Call:
            func = current.func  # type: ignore[attr-defined]
            if type(func) is cst.Attribute and func.attr.value in _CONVERTING_METHODS:
                stack.append((func.value, True))
                stack.extend((arg.value, converted) for arg in current.args)  # type: ignore[attr-defined]
                continue
            if type(func) is cst.Name and func.value in _TO_PYTHON_BUILTINS:
                stack.extend((arg.value, True) for arg in current.args)  # type: ignore[attr-defined]
                continue
        if node_type is cst.Attribute:
            stack.append((current.value, converted))  # type: ignore[attr-defined]
            continue
        stack.extend((child, converted) for child in children(current))
    return inside - outside


#: Methods whose result carries no graph of their receiver.
_CONVERTING_METHODS = torch_api.TO_PYTHON_METHODS | torch_api.DETACH_METHODS | torch_api.NON_TENSOR_METHODS


class FunctionInterpreter:
    """Runs one function body (or the module's top level) over abstract values.

    It reads the outside world only through ``inputs`` and records into its own ``rec``, which
    the caller merges into the round's recording (:func:`merge_run`).
    """

    def __init__(
        self,
        module: cst.Module,
        imports: ImportMap,
        structure: ModuleStructure,
        function: FunctionInfo,
        inputs: Inputs,
    ) -> None:
        self.module = module
        self.imports = imports
        self.structure = structure
        self.function = function
        self.inputs = inputs
        self.rec = Recording()
        self.summary = self.rec.summaries[function] = inputs.own_summary
        self._statement: StatementFact | None = None
        #: ``self.x`` values of the function's class, asked once: what ``Inputs`` reads does not
        #: change while the function runs (see ``leaklint.analysis.rounds``).
        self._own_class_attributes: dict[str, Value] | None = None
        #: Per statement of the module: the names it shares (see :func:`_shared_names`).
        self._shared = _shared_names_cache(imports)
        #: ``self.meters[k] = AverageMeter()`` here: what the items of ``self.meters`` are.
        self._attribute_elements: dict[str, Value] = {}
        #: The literals the calls pass (see ``_constant_test``), asked once.
        self._literals: dict[str, object] | None = None
        #: Parameters the body assigns to: their value is no longer what the calls passed (found
        #: on first use, see ``_constant_test``).
        self._rebound_params: frozenset[str] | None = None
        #: ``with amp.scale_loss(loss, opt) as scaled_loss``: scaled_loss -> the names of the loss
        #: it scales (a backward of the copy is a backward of the loss).
        self._scaled_losses: dict[str, set[str]] = {}
        #: The names the models run in the statement being interpreted were given (see
        #: ``_note_stepped_state``).
        self._model_inputs: set[str] = set()

    # ==== entry points ==========================================================================
    def run(self, grad: GradMode) -> Frame:
        frame = Frame(Env(self._initial_env()), grad)
        if self.function.is_method and self.function.cls is not None and self.function.name != "__init__":
            frame.eval_mode = held_in_eval_mode(self.function.cls)
        if self.function.node is None:
            self._block(self.module.body, frame)
        else:
            self._body(self.function.node.body, frame)
        if self.function.is_method and self.function.cls is not None:
            # Joined into the round's values by merge_run, after the methods before this one.
            attributes = {name: value for name, value in frame.env.items() if name.startswith("self.")}
            for name, element in self._attribute_elements.items():
                known = attributes.get(name) or self._class_attributes(self.function.cls).get(name) or UNKNOWN
                attributes[name] = replace(known, element=element if known.element is None else join(known.element, element))
            self.rec.class_attributes[self.function.cls] = attributes
        if self.function.node is None:
            self.rec.module_env.update(frame.env)
        self.rec.final_envs[self.function] = frame.env
        return frame

    def _initial_env(self) -> dict[str, Value]:
        env: dict[str, Value] = {}
        function = self.function
        passed = self.inputs.callee_arguments(function) if function.params else None
        handed = torch_api.framework_model_parameter(function.cls.qualified_bases, function.name) if function.is_method else None  # type: ignore[union-attr]
        for param in function.params:
            if param == handed:
                env[param] = role(Role.MODEL, Confidence.MEDIUM, param)  # the model a trainer library trains
                continue
            if param == "self" and function.cls is not None:
                env["self"] = role(Role.MODEL, Confidence.HIGH, "self") if function.cls.is_module else UNKNOWN
            else:
                guess = self._guess_from_name(param)
                argument = passed.get(param) if passed else None
                # What the calls in the file pass is evidence; the name is a guess, kept only
                # where the calls pass something unknown.
                known = argument is not None and (argument.kind is not Kind.UNKNOWN or argument.role is not None)
                if known and argument.is_graph:  # type: ignore[union-attr]
                    argument = replace(argument, from_caller=True)
                if not known and self._annotated_loader(function, param):
                    guess = role(Role.LOADER, Confidence.HIGH, param)  # loader: DataLoader
                env[param] = argument if known else guess  # type: ignore[assignment]
            place = device.initial_device(function, param, self.imports, self.structure)
            if place is not Device.UNKNOWN:
                env[param] = replace(env[param], device=place)
            elif device.host_default(function, param) and self._host_when_called(function, param, passed):
                env[param] = replace(NOT_TENSOR, device=Device.HOST, origin=param)  # x.to(param) keeps x on the host
        return env

    def _annotated_loader(self, function: FunctionInfo, param: str) -> bool:
        """``param`` is annotated as a data loader (``loader: DataLoader``, ``Optional[DataLoader]``)."""
        node = function.node
        if node is None:
            return False
        for declared in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
            if declared.name.value == param and declared.annotation is not None:
                return any(
                    type(part) in (cst.Name, cst.Attribute) and torch_api.is_data_loader_class(self.imports.resolve(part))
                    for part in walk(declared.annotation.annotation)
                )
        return False

    def _host_when_called(self, function: FunctionInfo, param: str, passed: dict[str, Value] | None) -> bool:
        """No call in the file gives ``param`` (a parameter that defaults to the host) anything but
        the host: it keeps its default, a literal ``"cpu"``, or a caller's own such parameter."""
        if passed is None or param not in passed:
            return True
        if device.names_host(passed[param]):
            return True
        literals = self.inputs.callee_literals(function)
        return literals is not None and literals.get(param) == "cpu"

    # ==== statements ============================================================================
    # Statement and expression classes are dispatched on with exact type checks: each is a
    # concrete libcst class with no subclasses, and isinstance() against libcst's ABCs is slow.
    def _body(self, body: cst.BaseSuite, frame: Frame) -> None:
        if type(body) is cst.SimpleStatementSuite:
            for small in body.body:
                self._small(small, None, frame)
        else:
            self._block(body.body, frame)

    def _block(self, statements: Sequence[cst.BaseStatement], frame: Frame) -> None:
        for statement in statements:
            self._statement_node(statement, frame)

    def _statement_node(self, statement: cst.BaseStatement, frame: Frame) -> None:
        kind = type(statement)
        if kind is cst.SimpleStatementLine:
            for small in statement.body:  # type: ignore[attr-defined]
                self._small(small, statement, frame)  # type: ignore[arg-type]
        elif kind is cst.If:
            self._if(statement, frame)  # type: ignore[arg-type]
        elif kind is cst.For or kind is cst.While:
            self._loop(statement, frame)  # type: ignore[arg-type]
        elif kind is cst.With:
            self._with(statement, frame)  # type: ignore[arg-type]
        elif kind is cst.Try or kind is cst.TryStar:
            self._try(statement, frame)  # type: ignore[arg-type]
        elif kind is cst.Match:
            self._match(statement, frame)  # type: ignore[arg-type]
        elif kind is cst.FunctionDef:
            if self.function.node is not None:  # module-level defs are known from the structure
                frame.env[statement.name.value] = function_value(statement.name.value, statement)
            else:
                frame.env.pop(statement.name.value, None)
        elif kind is cst.ClassDef:
            frame.env.pop(statement.name.value, None)

    def _enter(self, node: cst.BaseSmallStatement, line: cst.CSTNode | None, frame: Frame) -> StatementFact:
        fact = StatementFact(node, line, self.function, frame.loops, frame.grad, frame.env.view(), frame.eval_mode)  # type: ignore[arg-type]
        self.rec.statements[node] = fact
        self._statement = fact
        return fact

    def _header(self, node: cst.BaseCompoundStatement, frame: Frame) -> None:
        """Expressions in a compound statement's header (``if model(x):``, ``for b in f(x):``)
        belong to that statement, not to the simple statement before it. Not registered as a
        statement fact: rules iterate those expecting simple statements."""
        self._statement = StatementFact(node, node, self.function, frame.loops, frame.grad, frame.env.view(), frame.eval_mode)  # type: ignore[arg-type]

    def _small(self, node: cst.BaseSmallStatement, line: cst.SimpleStatementLine | None, frame: Frame) -> None:
        self._enter(node, line, frame)
        self._interpret_small(node, frame)
        env = frame.env
        shared = self._shared.get(node)
        if shared is None:
            shared = self._shared[node] = _shared_names(node, self.imports)
        for name in shared:
            value = env.get(name)
            if value is not None and value.fresh:
                env[name] = replace(value, fresh=False)

    def _interpret_small(self, node: cst.BaseSmallStatement, frame: Frame) -> None:
        kind = type(node)
        if kind is cst.Assign:
            self._model_inputs = set()
            value = self.eval(node.value, frame)
            if frame.loops and self._model_inputs:
                self._note_stepped_state(node, frame)
            for target in node.targets:
                self._bind(target.target, value, frame)
                name = dotted_name(target.target)
                if name is not None and name.startswith("self.") and name in value.deps:
                    self._note_param_store([value], "accumulate", name, node.value)  # self.sum = self.sum + val
        elif kind is cst.AnnAssign:
            if node.value is not None:
                self._bind(node.target, self.eval(node.value, frame), frame)
        elif kind is cst.AugAssign:
            self._aug_assign(node, frame)
        elif kind is cst.Expr:
            self.eval(node.value, frame)
        elif kind is cst.Return:
            if node.value is not None:
                self._return(self.eval(node.value, frame), node.value)
        elif kind is cst.Raise:
            if node.exc is not None:
                self.eval(node.exc, frame)
        elif kind is cst.Assert:
            self.eval(node.test, frame)
        elif kind is cst.Del:
            for name in bound_names(node.target):
                frame.env.pop(name, None)

    def _return(self, value: Value, expr: cst.BaseExpression) -> None:
        seen = self.summary.returns
        self.summary.returns = value if seen is None else join(seen, value)
        self.summary.returned_names |= value.deps | set(bound_names(expr))

    def _aug_assign(self, node: cst.AugAssign, frame: Frame) -> None:
        current = self.eval(node.target, frame)
        operand = self.eval(node.value, frame)
        symbol = binary_symbol(node.operator)
        result = self._arithmetic(symbol, [current, operand], frame, origin="")
        name = dotted_name(node.target)
        if name is not None:
            if name.startswith("self."):
                self._note_param_store([operand], "accumulate", name, node.value)
            frame.env[name] = result.with_dep(name)

    # ---- objects that keep what they are given (meters, loggers) -----------------------------
    def _list_attribute(self, attribute: str) -> bool:
        """``self.<attribute>`` is a list the class's ``__init__`` builds (``[]``, ``[None] * n``,
        ``list(...)``): written by position, it keeps one entry per position, not one slot."""
        cls = self.function.cls
        init = cls.find_method("__init__") if cls is not None else None
        if init is None:
            return False
        for node in walk(init.body, into=not_into_scopes):
            if type(node) is not cst.Assign:
                continue
            for target, value in _assigned_pairs(node):  # type: ignore[arg-type]
                if dotted_name(target) != attribute:
                    continue
                if type(value) is cst.BinaryOperation and isinstance(value.operator, cst.Multiply):
                    value = value.left if type(value.left) is cst.List else value.right
                if type(value) is cst.List or (type(value) is cst.Call and dotted_name(value.func) == "list"):
                    return True
        return False

    def _note_param_store(self, values: list[Value], kind: str, attribute: str, expr: cst.BaseExpression | None = None) -> None:
        """In a method: a parameter's value is accumulated / appended / kept in ``self.*``.
        ``expr``: the expression computing what is kept; a parameter it reads only converted to
        a number (``self.sum += val.item() * n``) is not kept, whatever else the value mixes in."""
        if not self.function.is_method:
            return
        parameters = set(self.function.params[1:])
        if expr is not None:
            parameters -= converted_names(expr)
        for value in values:
            if value.role is None and value.kind in (Kind.NOT_TENSOR, Kind.DETACHED):
                continue  # what is kept is not the argument's graph (``val.item()``, ``val.detach()``)
            for name in value.deps & parameters:
                known = self.summary.param_stores.get(name, ())
                if (kind, attribute) not in known:
                    self.summary.param_stores[name] = (*known, (kind, attribute))

    def _note_method_store(self, node: cst.Call, receiver: str | None, method: cst.FunctionDef, args: list[Value]) -> None:
        """A call like ``meter.update(loss)`` on an object whose method keeps that argument.
        Inside a method, an argument computed from the method's own parameters is kept by the
        object too (``self.meters[key].update(value)``): the method keeps that parameter."""
        info = self.structure.functions[method]
        param_stores = self.inputs.callee_param_stores(info)
        if not param_stores or receiver is None:
            return
        passed = arguments_with_nodes(method, node, args, bound=True)
        self._record_method_store(node, receiver, info, passed, lambda name: param_stores.get(name, ()))

    def _note_project_method_store(self, node: cst.Call, receiver: str | None, method: KeepingMethod, args: list[Value]) -> None:
        """The same, for a method of a class defined in another module of the project, known by
        its summary (leaklint/analysis/project_classes.py)."""
        if receiver is None:
            return
        passed = bind_arguments(method.positional, frozenset(method.keywords), node, args)
        self._record_method_store(node, receiver, method, passed, method.stored)

    def _record_method_store(
        self,
        node: cst.Call,
        receiver: str,
        method: FunctionInfo | KeepingMethod,
        passed: list[tuple[tuple[str, Value], cst.Arg]],
        stores_of: Callable[[str], Iterable[tuple[str, str]]],
    ) -> None:
        by_parameter = {name: (arg, value) for (name, value), arg in passed}
        stored = []
        for name, (arg, value) in by_parameter.items():
            for kind, attribute in stores_of(name):
                stored.append(StoredArgument(arg.value, kind, attribute))
                if receiver.startswith("self.") or receiver == "self":
                    self._note_param_store([value], kind, receiver if receiver != "self" else attribute)
        if stored:
            self.rec.method_stores[node] = MethodStore(node, self._statement, receiver, method, tuple(stored))

    def _bind(self, target: cst.BaseExpression, value: Value, frame: Frame) -> None:
        kind = type(target)
        if kind is cst.Tuple or kind is cst.List:
            elements = target.elements
            items = value.items if value.items is not None and len(value.items) == len(elements) else None
            if items is None and value.is_graph and value.evidence is Evidence.LOSS:
                # `loss, sample_size, logs = criterion(model, batch)`: a loss function that
                # returns a tuple returns the loss first; the rest (counts, logging dicts) are
                # known only by their use.
                items = (value, *(replace(UNKNOWN, deps=value.deps) for _ in elements[1:]))
            for index, element in enumerate(elements):
                part = items[index] if items is not None else self._element_of(value)
                self._bind(element.value, part, frame)
            return
        if kind is cst.StarredElement:
            self._bind(target.value, self._element_of(value), frame)
            return
        if kind is cst.Subscript:
            container_value = self.eval(target.value, frame)
            self._set_field(target, value, frame)  # type: ignore[arg-type]
            holder = dotted_name(target.value)  # type: ignore[attr-defined]
            if holder is not None and value.role in (Role.INSTANCE, Role.MODEL) and isinstance(value.cls, ClassInfo):
                # meters[name] = AverageMeter(): the container's items are meters
                element = value if container_value.element is None else join(container_value.element, value)
                element = replace(element, deps=frozenset())
                if holder in frame.env:
                    frame.env[holder] = replace(container_value, element=element)
                elif holder.startswith("self."):
                    # not a binding of the attribute here: the class learns it at the end (run())
                    known = self._attribute_elements.get(holder)
                    self._attribute_elements[holder] = element if known is None else join(known, element)
            container = container_name(target)
            if container is not None and container.startswith("self."):
                if self._list_attribute(container) and not constant_key(target):  # type: ignore[arg-type]
                    # self.states[t] = state into `[None] * steps`: one entry per step, like append
                    self._note_param_store([value], "append", container)
                else:
                    self._note_param_store([value], "slot", f"{container}[...]")  # self.logs[key] = val
            return
        name = dotted_name(target)
        if name is None:
            return
        backward_here = name in self.function.backward_names and self._backward_reachable(frame)
        if backward_here and value.kind in (Kind.UNKNOWN, Kind.GRAPH) and value.role is None:
            if value.evidence is not Evidence.BACKWARD or value.confidence is not Confidence.HIGH:
                value = replace(value, kind=Kind.GRAPH, evidence=Evidence.BACKWARD, confidence=Confidence.HIGH)
        elif value.is_graph and value.confidence is not Confidence.HIGH and name in self._upstream_of_backward():
            # A tensor believed attached that feeds a loss someone calls backward() on: confirmed.
            value = replace(value, confidence=Confidence.HIGH)
        elif value.kind is Kind.UNKNOWN and value.role is None and value.fields is None and value.items is None:
            # (a dict or tuple literal is what it holds, whatever its name: `model = {"G": g, "D": d}`)
            guess = self._guess_from_name(name.rsplit(".", 1)[-1])
            if guess.kind is Kind.GRAPH or guess.role is not None:
                value = replace(guess, deps=value.deps, fresh=value.fresh, device=value.device)
        frame.env[name] = value
        if name.startswith("self.") and name not in value.deps:
            self._note_param_store([value], "slot", name)  # self.last = val
        if self.function.is_module_level:
            seen = self.rec.module_bindings.get(name)
            self.rec.module_bindings[name] = value if seen is None else join(seen, value)

    def _set_field(self, target: cst.Subscript, value: Value, frame: Frame) -> None:
        """``d["loss"] = loss.detach()`` on a dict whose keys are known: that key now holds it."""
        name = dotted_name(target.value)
        current = frame.env.get(name) if name is not None else None
        if current is None or current.fields is None or len(target.slice) != 1 or type(target.slice[0].slice) is not cst.Index:
            return
        key = literal_key(target.slice[0].slice.value)  # type: ignore[attr-defined]
        if key is None:
            frame.env[name] = replace(current, fields=None)  # type: ignore[index]
            return
        fields = (*(f for f in current.fields if f[0] != key), (key, replace(value, deps=frozenset())))
        frame.env[name] = with_fields(fields, deps=current.deps | value.deps)  # type: ignore[index]

    @staticmethod
    def _backward_reachable(frame: Frame) -> bool:
        """Inside a loop, only a loop that runs backward can differentiate what it assigns
        (an evaluation loop next to the training loop reuses the name ``loss`` harmlessly)."""
        return not frame.loops or frame.loops[-1].has_backward

    def _upstream_of_backward(self) -> AbstractSet[str]:
        return self.inputs.upstream_of_backward()

    def _element_of(self, value: Value) -> Value:
        if value.role is not None:
            return UNKNOWN
        return replace(value, items=None, fields=None, fresh=False)

    def _if(self, node: cst.If, frame: Frame, statement: cst.If | None = None) -> None:
        self._header(statement or node, frame)  # an elif's test belongs to the whole if statement
        self.eval(node.test, frame)
        known = self._constant_test(node.test)
        if known is not None:
            # `if requires_grad:` where every call passes requires_grad=False: one branch runs
            if known:
                self._body(node.body, frame)
            elif isinstance(node.orelse, cst.If):
                self._if(node.orelse, frame, statement or node)
            elif isinstance(node.orelse, cst.Else):
                self._body(node.orelse.body, frame)
            return
        then = frame.copy()
        checked = self._tensor_check(node.test)
        if checked is not None and not checked[1] and checked[0] in frame.env:
            then.env[checked[0]] = replace(NOT_TENSOR, deps=frame.env[checked[0]].deps)
        module = self._module_check(node.test)
        if module is not None and not module[1]:
            self._rule_out_module(module[0], then)
        self._body(node.body, then)
        otherwise = frame.copy()
        if checked is not None and checked[1] and checked[0] in frame.env:
            otherwise.env[checked[0]] = replace(NOT_TENSOR, deps=frame.env[checked[0]].deps)
        if module is not None and module[1]:
            self._rule_out_module(module[0], otherwise)
        if isinstance(node.orelse, cst.If):
            self._if(node.orelse, otherwise, statement or node)
        elif isinstance(node.orelse, cst.Else):
            self._body(node.orelse.body, otherwise)
        self._merge_into(frame, [then, otherwise])
        if module is not None and module[1] and node.orelse is None and _exits(node.body):
            self._rule_out_module(module[0], frame)  # `if isinstance(f, nn.Module): continue`

    def _rule_out_module(self, name: str, frame: Frame) -> None:
        """``name`` is no module in ``frame`` (the failed side of ``isinstance(name, nn.Module)``):
        not a model, even where ``name.eval()`` elsewhere in the file made the name look like one."""
        frame.not_modules = frame.not_modules | {name}
        held = frame.env.get(name)
        if held is not None:
            frame.env[name] = _no_module(held)

    def _module_check(self, test: cst.BaseExpression) -> tuple[str, bool] | None:
        """(name, held) for ``isinstance(name, nn.Module)`` (held: True; a tuple of classes with
        ``nn.Module`` among them too) or its negation."""
        held = True
        while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:  # type: ignore[attr-defined]
            test, held = test.expression, not held  # type: ignore[attr-defined]
        if type(test) is not cst.Call or type(test.func) is not cst.Name or test.func.value != "isinstance" or len(test.args) != 2:  # type: ignore[attr-defined]
            return None
        name = dotted_name(test.args[0].value)  # type: ignore[attr-defined]
        classes = test.args[1].value  # type: ignore[attr-defined]
        options = [e.value for e in classes.elements] if type(classes) is cst.Tuple else [classes]  # type: ignore[attr-defined]
        if name is None or not any(self.imports.resolve(option) in torch_api.MODULE_TYPES for option in options):
            return None
        return name, held

    def _merge_into(self, frame: Frame, branches: Iterable[Frame], *, deps_from: Frame | None = None) -> None:
        """Join ``branches``, each forked from ``frame``, into ``frame``. They differ from it
        only in the names they wrote, so only those are looked at. ``deps_from``: a loop's last
        iteration, whose names a value bound in it depends on (see :meth:`_loop`)."""
        branches = list(branches)
        written = set().union(*(branch.env.written for branch in branches))
        env = frame.env
        for name in written:
            values = [branch.env.get(name) for branch in branches]
            merged = _join_present(values)
            # A name that only some branches bind, and that the function did not hold before,
            # still has its outside value on the other paths: `if self.memory is None:
            # self.memory = zeros` leaves the previous call's `self.memory` in place when the
            # test fails.
            if merged is not None and None in values and name not in env:
                outside = self._outside_value(name)
                if outside is not None:
                    merged = join(merged, outside)
            if merged is not None and deps_from is not None:
                iterated = deps_from.env.get(name)
                if iterated is not None and iterated.deps != merged.deps:
                    merged = replace(merged, deps=iterated.deps)
            if merged is None:
                env.pop(name, None)
            elif env.get(name) is not merged:
                env[name] = merged
        frame.eval_mode = frozenset().union(*(b.eval_mode for b in branches))
        grads = {b.grad for b in branches}
        frame.grad = grads.pop() if len(grads) == 1 else GradMode.CONDITIONAL

    def _loop(self, node: cst.For | cst.While, frame: Frame) -> None:
        info = self.structure.loops.get(node)
        self._header(node, frame)
        if isinstance(node, cst.For):
            iterable = self.eval(node.iter, frame)
            if iterable.role is Role.LOADER and info is not None:
                _mark_data_loop(info, frame.loops)
        else:
            iterable = NOT_TENSOR
        current = frame.copy()
        changed: set[str] = set()  # names an iteration wrote: where `current` may differ from `frame`
        for _ in range(MAX_LOOP_PASSES):
            body = current.copy()
            body.loops = frame.loops + ((info,) if info is not None else ())
            if isinstance(node, cst.For):
                self._bind(node.target, self._iteration_value(iterable, node.iter), body)
            else:
                self._header(node, body)
                self.eval(node.test, body)
            self._body(node.body, body)
            changed |= body.env.written
            # What flows into the next iteration: the values before the loop joined with those
            # after this iteration.
            merged = {name: _join_present([frame.env.get(name), body.env.get(name)]) for name in changed}
            if all(merged[name] == current.env.get(name) for name in changed):
                current = body
                break
            env = frame.env.fork()
            for name, value in merged.items():
                if value is None:
                    env.pop(name, None)
                else:
                    env[name] = value
            current = replace(current, env=env, eval_mode=current.eval_mode | body.eval_mode)
            current.grad = body.grad
        current.env.written = changed
        if info is not None and not info.iterates_data:
            if self._walks_inputs(node, info, iterable, frame):
                _mark_data_loop(info, frame.loops)
            elif self._walks_input_in_chunks(node, info, frame):
                info.walks_input_in_chunks = True
        # After the loop a name may still hold its value from before (the loop never ran), but
        # what it depends on is taken from the iterations: they read the older value wherever
        # they use it, and that read brings its names along. Carrying the older names on as
        # well made every later value of a long script's `loss` depend on every data loader
        # before it (memory quadratic in the number of top-level loops: bench/RESULTS.md).
        self._merge_into(frame, [frame.copy(), replace(current, loops=frame.loops)], deps_from=current)
        if node.orelse is not None:
            self._body(node.orelse.body, frame)

    def _note_stepped_state(self, node: cst.Assign, frame: Frame) -> None:
        """``img = p_sample(img, t)`` / ``x = x - eta * model(x, t)``: a model ran on the state this
        statement binds again, so each iteration steps it (a sampler, a rollout). Not ``x =
        x.to(device)`` nor ``image = F.interpolate(image)``: no model runs on the state there."""
        loop = frame.loops[-1]
        bound = {name for target in node.targets for name in bound_names(target.target)}
        if not loop.steps_state and bound & (loop.chained - loop.rebound) & self._model_inputs:
            loop.steps_state = True

    def _walks_input_in_chunks(self, node: cst.For | cst.While, info: LoopInfo, frame: Frame) -> bool:
        """``for start in range(0, len(texts), batch_size):`` running a model on what the counter
        selects, outside a module's forward and outside any loop over data or steps: one batch of
        an input collection per iteration, as a data loader would give. Inside a forward the same
        walk is the chunking of one pass (bounded by its input), and inside a step loop it walks
        the parts of that step's batch."""
        if not isinstance(node, cst.For) or not info.runs_model or not is_strided_range(node.iter):
            return False
        if not isinstance(node.target, cst.Name) or not _slices_by(node.body, node.target.value):
            return False
        if self.function.runs_one_forward:
            return False
        return _outside_steps(frame.loops, self.imports)

    def _walks_inputs(self, node: cst.For | cst.While, info: LoopInfo, iterable: Value, frame: Frame) -> bool:
        """``for inputs, _ in loader: model(inputs)`` or ``for batch in batches:
        model(batch.to(device))``, where ``loader`` is handed in (a parameter or an attribute of
        ``self``) and known to hold no tensor, model or literal: the loop runs the model on each
        item, and the items are records of several fields or come from the host, which is what a
        loop over batches of data does (a global of a script or an imported loader counts when its
        records move to the device). Not inside a loop over data or steps (the parts of that
        step's batch); in a module's methods (where loops walk the parts of one forward pass)
        only records of a parameter (``forward(self, loader)``)."""
        if not isinstance(node, cst.For) or not info.runs_model_on_items:
            return False
        if iterable.role is not None or iterable.kind in (Kind.GRAPH, Kind.DETACHED):
            return False  # a model list, a loader (marked already), the rows of a tensor
        records = walks_records_of_parameter(node.iter, node.target, self.function, self.imports)
        walked, item = walked_items(node.iter, node.target, self.imports)
        cls = self.function.cls
        if cls is not None and cls.is_module:
            handed_in = records
        else:
            from_self = type(walked) is cst.Attribute and type(walked.value) is cst.Name and walked.value.value == "self"  # type: ignore[attr-defined]
            moved = info.moves_items_to_device
            unpacked = isinstance(item, (cst.Tuple, cst.List)) and len(item.elements) >= 2
            # a parameter or attribute whose items move to the device, or any name (a global of a
            # script or notebook, an imported loader) whose records move there
            handed_in = records or (moved and (from_self or (type(walked) is cst.Name and (walked.value in self.function.params or unpacked))))  # type: ignore[attr-defined]
        return handed_in and _outside_steps(frame.loops, self.imports)

    def _iteration_value(self, iterable: Value, node: cst.BaseExpression | None = None) -> Value:
        if iterable.is_graph:
            item = replace(iterable, items=None, fields=None, fresh=False)
            if type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "items" and not node.args:  # type: ignore[attr-defined]
                # `for key, value in d.items()`: the pairs of a mapping, keys first
                return replace(item, items=(replace(UNKNOWN, deps=iterable.deps), item))
            return item
        if iterable.element is not None and iterable.element.role in (Role.MODEL, Role.FROZEN_MODEL, Role.LOADER):
            return iterable.element  # for actor in self.actors: each is one of the models
        if iterable.element is not None and iterable.element.items and any(item.role is Role.LOADER for item in iterable.element.items):
            return iterable.element  # for name, dl in loaders.items()
        if iterable.items and all(item.role is Role.LOADER for item in iterable.items):
            return functools.reduce(join, iterable.items)  # for dl in [train_dl, val_dl]
        zipped = self._zipped_items(node)
        if zipped is not None:
            return replace(UNKNOWN, deps=iterable.deps, items=zipped)
        return replace(UNKNOWN, deps=iterable.deps) if iterable.deps else UNKNOWN

    def _zipped_items(self, node: cst.BaseExpression | None) -> tuple[Value, ...] | None:
        """``for w, g in zip(weights, grads)``: one item of each sequence, when one of them
        carries a graph (else None: the pairs are left unknown, as before)."""
        if type(node) is not cst.Call or type(node.func) is not cst.Name or node.func.value != "zip" or not node.args:  # type: ignore[attr-defined]
            return None
        args = node.args  # type: ignore[attr-defined]
        if any(arg.keyword is not None or arg.star for arg in args):
            return None
        items = tuple(self._iteration_value(self.rec.values.get(arg.value, UNKNOWN), arg.value) for arg in args)
        return items if any(item.is_graph or item.role in (Role.MODEL, Role.FROZEN_MODEL) for item in items) else None

    def _with(self, node: cst.With, frame: Frame) -> None:
        self._header(node, frame)
        grad = frame.grad
        for item in node.items:
            effect = self._grad_effect(item.item, frame)
            if effect is not None:
                grad = effect
            elif item.asname is not None:
                as_name = item.asname.name
                bound = self._context_value(item.item, frame, as_name.value if type(as_name) is cst.Name else None)
                self._bind(as_name, bound, frame)
            if item.asname is not None and effect is not None:
                self._bind(item.asname.name, NOT_TENSOR, frame)
        outer_grad = frame.grad
        frame.grad = grad
        self._body(node.body, frame)
        frame.grad = outer_grad

    def _context_value(self, expr: cst.BaseExpression, frame: Frame, scaled_name: str | None = None) -> Value:
        """What ``with expr as name`` binds, where known: apex's ``amp.scale_loss(loss, opt)``
        yields the loss scaled (computed from it, so a backward of it runs through the loss)."""
        if type(expr) is cst.Call and expr.args and expr.args[0].keyword is None:  # type: ignore[attr-defined]
            if self.imports.resolve(expr.func) in torch_api.SCALED_LOSS_CONTEXTS:  # type: ignore[attr-defined]
                scaled = expr.args[0].value  # type: ignore[attr-defined]
                loss = self.rec.values.get(scaled) or self.eval(scaled, frame)
                if scaled_name is not None:
                    self._scaled_losses[scaled_name] = backpropagated_names(scaled)
                return replace(combine([loss]), backpropagated=False)
        if scaled_name is not None:
            self._scaled_losses.pop(scaled_name, None)
        return UNKNOWN

    def _grad_effect(self, expr: cst.BaseExpression, frame: Frame) -> GradMode | None:
        """How a ``with`` item changes gradient recording, or None if it does not."""
        call = expr if isinstance(expr, cst.Call) else None
        qualified = self.imports.resolve(call.func if call else expr)
        if call is not None:
            for arg in call.args:
                self.eval(arg.value, frame)
        if qualified in torch_api.INFERENCE_MODE and call is not None and call.args:
            return _literal_mode(call.args[0].value, enabled=GradMode.DISABLED, disabled=None)
        if qualified in torch_api.NO_GRAD_CONTEXTS:
            return GradMode.DISABLED
        if qualified in torch_api.ENABLE_GRAD_CONTEXTS:
            return GradMode.ENABLED_EXPLICITLY
        if qualified in torch_api.SET_GRAD_ENABLED and call is not None and call.args:
            return literal_grad_mode(call.args[0].value)
        return None

    def _try(self, node: cst.Try | cst.TryStar, frame: Frame) -> None:
        body = frame.copy()
        self._body(node.body, body)
        branches = [body]
        for handler in node.handlers:
            branch = frame.copy()
            self._body(handler.body, branch)
            branches.append(branch)
        if node.orelse is not None:
            self._body(node.orelse.body, body)
        self._merge_into(frame, branches)
        if node.finalbody is not None:
            self._body(node.finalbody.body, frame)

    def _match(self, node: cst.Match, frame: Frame) -> None:
        self._header(node, frame)
        self.eval(node.subject, frame)
        branches = []
        for case in node.cases:
            branch = frame.copy()
            self._body(case.body, branch)
            branches.append(branch)
        branches.append(frame.copy())
        self._merge_into(frame, branches)

    # ==== expressions ===========================================================================
    def eval(self, node: cst.BaseExpression, frame: Frame) -> Value:
        # One dict lookup on the exact type (see _body) picks the handler; literals, strings,
        # lambdas and anything else not listed are not tensors.
        handler = _EVAL.get(type(node))
        value = NOT_TENSOR if handler is None else handler(self, node, frame)
        if type(node) in device.PLACED_NODES:
            value = device.placed(node, value, self.rec.values, self.imports, self.function)
        self.rec.values[node] = value
        return value

    def _binary(self, node: cst.BinaryOperation, frame: Frame) -> Value:
        operands = [self.eval(node.left, frame), self.eval(node.right, frame)]
        return self._arithmetic(binary_symbol(node.operator), operands, frame, "")

    def _unary(self, node: cst.UnaryOperation, frame: Frame) -> Value:
        inner = self.eval(node.expression, frame)
        if type(node.operator) is cst.Not:
            return NOT_TENSOR
        return self._arithmetic("-", [inner], frame, "")

    def _compare(self, node: cst.Comparison, frame: Frame) -> Value:
        operands = [self.eval(node.left, frame)] + [self.eval(c.comparator, frame) for c in node.comparisons]
        return _comparison(operands)

    def _boolean(self, node: cst.BooleanOperation, frame: Frame) -> Value:
        return join(self.eval(node.left, frame), self.eval(node.right, frame))

    def _if_expression(self, node: cst.IfExp, frame: Frame) -> Value:
        self.eval(node.test, frame)
        body, orelse = self.eval(node.body, frame), self.eval(node.orelse, frame)
        checked = self._tensor_check(node.test)
        if checked is not None:
            # `v.detach() if isinstance(v, torch.Tensor) else v`: the other branch's `v` is no tensor
            name, positive = checked
            branch = node.orelse if positive else node.body
            if dotted_name(branch) == name:
                not_tensor = replace(NOT_TENSOR, deps=orelse.deps if positive else body.deps)
                body, orelse = (body, not_tensor) if positive else (not_tensor, orelse)
        return join(body, orelse)

    def _constant_test(self, test: cst.BaseExpression) -> bool | None:
        """The truth of ``flag`` / ``not flag`` when ``flag`` is a parameter that every call in the
        file gives the same literal (None: not known)."""
        flag = test
        while type(flag) is cst.UnaryOperation and type(flag.operator) is cst.Not:  # type: ignore[attr-defined]
            flag = flag.expression  # type: ignore[attr-defined]
        if type(flag) is not cst.Name or flag.value not in self.function.params:  # type: ignore[attr-defined]
            return None
        literals = self._literals
        if literals is None:
            literals = self._literals = self.inputs.callee_literals(self.function) or {}
        if self._rebound_params is None:
            node = self.function.node
            self._rebound_params = frozenset(names_bound_in(node.body)) & set(self.function.params) if node is not None else frozenset()
        if flag.value in self._rebound_params:  # type: ignore[attr-defined]
            return None
        return literal_truth(test, literals)

    def _tensor_check(self, test: cst.BaseExpression) -> tuple[str, bool] | None:
        """(name, held) for ``isinstance(name, torch.Tensor)`` (held: True) or its negation."""
        held = True
        while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:  # type: ignore[attr-defined]
            test, held = test.expression, not held  # type: ignore[attr-defined]
        if type(test) is not cst.Call or not test.args:  # type: ignore[attr-defined]
            return None
        name = dotted_name(test.args[0].value)  # type: ignore[attr-defined]
        if name is None:
            return None
        if self.imports.resolve(test.func) in torch_api.TENSOR_CHECKS and len(test.args) == 1:  # type: ignore[attr-defined]
            return name, held  # torch.is_tensor(v)
        if type(test.func) is cst.Name and test.func.value == "isinstance" and len(test.args) == 2:  # type: ignore[attr-defined]
            if self.imports.resolve(test.args[1].value) in torch_api.TENSOR_TYPES:  # type: ignore[attr-defined]
                return name, held
        return None

    def _sequence(self, node: cst.Tuple | cst.List | cst.Set, frame: Frame) -> Value:
        items = [self.eval(e.value, frame) for e in node.elements]
        result = combine(items, origin="", fresh=False)
        known = all(type(e) is cst.Element for e in node.elements)
        return replace(result, items=tuple(items) if known else None)

    def _dict(self, node: cst.Dict, frame: Frame) -> Value:
        values = []
        fields: list[tuple[object, Value]] | None = []
        for element in node.elements:
            value_node = element.value
            if type(element) is cst.DictElement:
                self.eval(element.key, frame)  # type: ignore[union-attr]
                key = literal_key(element.key)  # type: ignore[union-attr]
            else:
                key = None  # **other: keys unknown
            value = self.eval(value_node, frame)
            values.append(value)
            if fields is not None:
                fields = None if key is None else [*(f for f in fields if f[0] != key), (key, value)]
        result = combine(values, origin="", fresh=False)
        return replace(result, fields=tuple(fields)) if fields is not None else result

    def _named(self, node: cst.NamedExpr, frame: Frame) -> Value:
        value = self.eval(node.value, frame)
        self._bind(node.target, value, frame)
        return value

    def _await(self, node: cst.Await, frame: Frame) -> Value:
        return self.eval(node.expression, frame)

    def _yield(self, node: cst.Yield, frame: Frame) -> Value:
        if isinstance(node.value, cst.BaseExpression):
            self.eval(node.value, frame)
        return UNKNOWN

    def _starred(self, node: cst.StarredElement, frame: Frame) -> Value:
        return self.eval(node.value, frame)

    def _formatted(self, node: cst.FormattedString, frame: Frame) -> Value:
        for part in node.parts:
            if type(part) is cst.FormattedStringExpression:
                self.eval(part.expression, frame)  # type: ignore[attr-defined]
        return NOT_TENSOR

    def _name(self, node: cst.Name, frame: Frame) -> Value:
        name = node.value
        if name in frame.env:
            value = frame.env[name]
        elif (outside := self.inputs.outer(name)) is not None:
            value = outside
        elif name in self.structure.module_functions:
            value = function_value(name, self.structure.module_functions[name])
        elif self.imports.resolve(node) is not None:
            return NOT_TENSOR
        elif name in ("True", "False", "None"):
            return NOT_TENSOR
        else:
            value = self._guess_from_name(name)
        if value.role is Role.FUNCTION and value.function is not None:
            self._note_reference(node, value.function)  # type: ignore[arg-type]
        if name in frame.not_modules:
            return _no_module(value).with_dep(name)
        value = self._upgrade_module_evidence(name, value)
        return value.with_dep(name)

    def _note_reference(self, node: cst.Name, function: cst.FunctionDef) -> None:
        """A local function used as a value (not called directly here): its callers are unknown."""
        if node not in self.rec.direct_callees:
            self.rec.escaping.add(function)

    @staticmethod
    @functools.lru_cache(maxsize=4096)
    def _guess_from_name(name: str) -> Value:
        """Cached: three regex matches per name read add up, and values are immutable."""
        if torch_api.GRAPH_TENSOR_NAME.match(name):
            return graph(Evidence.NAME, Confidence.LOW, name, fresh=False)
        if torch_api.MODEL_NAME.match(name):
            return role(Role.MODEL, Confidence.LOW, name)
        if torch_api.LOSS_FUNCTION_NAME.match(name):
            return role(Role.LOSS_FN, Confidence.MEDIUM, name)
        return UNKNOWN

    def _upgrade_module_evidence(self, dotted: str, value: Value) -> Value:
        """``model.eval()`` / ``model.parameters()`` somewhere in the file: ``model`` is a module."""
        if dotted in self.structure.module_evidence and value.kind is Kind.UNKNOWN and value.fields is None and value.items is None:
            # (a dict or tuple of modules keeps its parts: `model["generator"](z)`)
            if value.role is None or (value.role is Role.MODEL and value.confidence < Confidence.MEDIUM):
                model = role(Role.MODEL, Confidence.MEDIUM, dotted)
                return model if value.device is Device.UNKNOWN else replace(model, device=value.device)
        return value

    def _attribute(self, node: cst.Attribute, frame: Frame) -> Value:
        value = self._attribute_value(node, frame)
        if frame.not_modules and dotted_name(node) in frame.not_modules:
            return _no_module(value)
        return value

    def _attribute_value(self, node: cst.Attribute, frame: Frame) -> Value:
        dotted = dotted_name(node)
        if dotted is not None:
            if dotted in frame.env:
                return frame.env[dotted].with_dep(dotted)
            if dotted.startswith("self.") and self.function.cls is not None:
                attributes = self._class_attributes(self.function.cls)
                if dotted in attributes:
                    return self._upgrade_module_evidence(dotted, attributes[dotted]).with_dep(dotted)
            if self.imports.resolve(node) is not None:
                return NOT_TENSOR
        base = self.eval(node.value, frame)
        attr = node.attr.value
        if base.role is Role.INSTANCE and isinstance(base.cls, ClassInfo):
            kept = self._class_attributes(base.cls).get(f"self.{attr}")
            if kept is not None and kept.role is Role.LOADER:
                return replace(kept, deps=base.deps)  # handlers.data_io, which Handlers(net, loader) keeps
        if base.role is Role.MODEL:
            if dotted and dotted in self.structure.module_evidence:
                return role(Role.MODEL, Confidence.MEDIUM, dotted)
            if self._is_submodule_of_self(node):
                return role(Role.MODEL, Confidence.MEDIUM, dotted or attr)
            return UNKNOWN
        if attr in torch_api.NON_TENSOR_ATTRIBUTES:
            return NOT_TENSOR
        if attr in torch_api.DETACHED_ATTRIBUTES:
            return replace(DETACHED, deps=base.deps) if base.kind is not Kind.NOT_TENSOR else NOT_TENSOR
        if base.is_graph:
            if attr == "loss":
                return replace(base, evidence=Evidence.LOSS, fresh=False, items=None, fields=None, origin="")
            return replace(base, evidence=Evidence.DERIVED if base.evidence is not Evidence.BACKWARD else base.evidence, fresh=False, items=None, fields=None)
        if base.kind is Kind.DETACHED:
            return replace(DETACHED, deps=base.deps)  # outputs.loss of a forward run under no_grad
        if dotted is not None and base.kind is Kind.UNKNOWN:
            guess = self._guess_from_name(attr)
            if guess.kind is not Kind.UNKNOWN or guess.role is not None:
                return self._upgrade_module_evidence(dotted, replace(guess, deps=base.deps))
            return self._upgrade_module_evidence(dotted, replace(UNKNOWN, deps=base.deps))
        return replace(UNKNOWN, deps=base.deps)

    def _outside_value(self, name: str) -> Value | None:
        """What ``name`` holds when this function has not bound it: an attribute of ``self`` as the
        class's methods leave it. (A plain name bound in a branch is a local: unbound otherwise.)"""
        if name.startswith("self.") and self.function.cls is not None:
            return self._class_attributes(self.function.cls).get(name)
        return None

    def _known_attribute(self, node: cst.Attribute, frame: Frame) -> Value | None:
        """The value of ``self.model`` / ``trainer.net`` when it is known as an object, else None."""
        dotted = dotted_name(node)
        if dotted is None:
            return None
        if dotted in frame.env:
            return frame.env[dotted]
        if dotted.startswith("self.") and self.function.cls is not None:
            attributes = self._class_attributes(self.function.cls)
            if dotted in attributes:
                return self._upgrade_module_evidence(dotted, attributes[dotted])
        if dotted in self.structure.module_evidence:
            return role(Role.MODEL, Confidence.MEDIUM, dotted)
        if self._is_submodule_of_self(node):
            return role(Role.MODEL, Confidence.MEDIUM, dotted)
        return None

    def _is_submodule_of_self(self, node: cst.Attribute) -> bool:
        """``self.body`` inside an ``nn.Module``: an attribute that is not a method (of the class,
        of ``nn.Module`` such as ``named_modules``, or of Lightning such as ``log``) is a layer.
        Not when a base from elsewhere may define it (peft's ``self.get_base_layer()``)."""
        cls = self.function.cls
        attr = node.attr.value
        return (
            cls is not None
            and cls.is_module
            and not cls.has_unknown_bases
            and isinstance(node.value, cst.Name)
            and node.value.value == "self"
            and cls.find_method(attr) is None
            and attr not in torch_api.MODULE_API_METHODS
            and not (cls.is_lightning and attr in torch_api.LIGHTNING_API_METHODS)
            and self._nested_class(cls, attr) is None
        )

    def _nested_class(self, cls: ClassInfo, name: str) -> ClassInfo | None:
        """The class ``name`` defined in ``cls``'s body (``self.Optimizer(...)`` builds one)."""
        for statement in cls.node.body.body:
            if type(statement) is cst.ClassDef and statement.name.value == name:  # type: ignore[attr-defined]
                return self.structure.classes.get(statement)  # type: ignore[arg-type]
        for base in cls.local_bases:
            found = self._nested_class(base, name)
            if found is not None:
                return found
        return None

    def _class_attributes(self, cls: ClassInfo) -> dict[str, Value]:
        if cls is not self.function.cls:
            return self.inputs.class_attributes(cls)
        if self._own_class_attributes is None:
            self._own_class_attributes = self.inputs.class_attributes(cls)
        return self._own_class_attributes

    def _subscript(self, node: cst.Subscript, frame: Frame) -> Value:
        base = self.eval(node.value, frame)
        index_value: int | None = None
        for element in node.slice:
            if type(element.slice) is cst.Index:
                self.eval(element.slice.value, frame)
                if type(element.slice.value) is cst.Integer:
                    index_value = int(element.slice.value.value.replace("_", ""), 0)  # 0xFF, 1_000
            else:
                for part in (element.slice.lower, element.slice.upper, element.slice.step):
                    if part is not None:
                        self.eval(part, frame)
        if base.items is not None and index_value is not None and -len(base.items) <= index_value < len(base.items):
            return replace(base.items[index_value], deps=base.deps)
        if base.fields is not None and len(node.slice) == 1 and type(node.slice[0].slice) is cst.Index:
            known = base.field(literal_key(node.slice[0].slice.value))  # type: ignore[attr-defined]
            if known is not None:
                return replace(known, deps=base.deps, fresh=False)
        if base.element is not None:
            return replace(base.element, deps=base.deps)
        if base.role in (Role.MODEL, Role.LOSS_FN) and len(node.slice) == 1 and type(node.slice[0].slice) is cst.Index:
            # `self.blocks[i](x)`, `self.model["generator"](z)`, `self.criterion["mel"](y_, y)`:
            # a module of a ModuleList / ModuleDict, or of a dict of models or of losses, as
            # sure as the container is
            return replace(base, deps=base.deps, fresh=False, items=None, fields=None)
        if base.role is not None:
            return replace(UNKNOWN, deps=base.deps)
        if base.is_graph:
            is_loss_key = any(
                isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.SimpleString) and "loss" in e.slice.value.value
                for e in node.slice
            )
            evidence = Evidence.LOSS if is_loss_key else (Evidence.DERIVED if base.evidence is not Evidence.BACKWARD else base.evidence)
            return replace(base, evidence=evidence, fresh=False, items=None, fields=None)
        return replace(base, fresh=False, items=None, fields=None)

    def _comprehension(self, node: cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp, frame: Frame) -> Value:
        inner = frame.copy()
        for_in: cst.CompFor | None = node.for_in
        own: set[str] = set()  # the comprehension's variables: `sum(loss for loss in d.values())` reads no outer `loss`
        first: Value | None = None
        while for_in is not None:
            iterable = self.eval(for_in.iter, inner)
            first = iterable if first is None else first
            self._bind(for_in.target, self._iteration_value(iterable, for_in.iter), inner)
            own.update(bound_names(for_in.target))
            for condition in for_in.ifs:
                self.eval(condition.test, inner)
            for_in = for_in.inner_for_in
        if isinstance(node, cst.DictComp):
            self.eval(node.key, inner)
            element = self.eval(node.value, inner)
        else:
            element = self.eval(node.elt, inner)
        if own & element.deps:
            element = replace(element, deps=element.deps - own)
        if element.role in (Role.MODEL, Role.FROZEN_MODEL, Role.LOADER) and not isinstance(node, cst.GeneratorExp):
            return replace(NOT_TENSOR, deps=element.deps, element=element)  # [Actor() for _ in agents]: a list of models
        result = replace(combine([element], origin="", fresh=False), items=None, fields=None)
        if isinstance(node, cst.GeneratorExp):
            if first is not None and first.role is Role.LOADER:
                return replace(first, deps=result.deps, iterator=True)  # (b.cuda() for b in loader): one item per batch
            return replace(result, element=element)  # what it yields is made here, item by item
        return result

    # ---- arithmetic --------------------------------------------------------------------------
    def _arithmetic(self, symbol: str, operands: list[Value], frame: Frame, origin: str) -> Value:
        if symbol in _BITWISE:
            kinds = [v.kind for v in operands]
            return DETACHED if Kind.GRAPH in kinds or Kind.DETACHED in kinds else combine(operands, origin=origin)
        result = combine(operands, origin=origin)
        return self._under_grad_mode(result, frame)

    def _under_grad_mode(self, value: Value, frame: Frame) -> Value:
        return value.detached() if frame.grad is GradMode.DISABLED else value

    # ---- calls -------------------------------------------------------------------------------
    def _call(self, node: cst.Call, frame: Frame) -> Value:
        func = node.func
        self.rec.direct_callees.add(func)
        if type(func) is cst.Attribute and func.attr.value in self.structure.external_method_calls:
            self.rec.method_call_grads[node] = frame.grad
        origin = ""
        qualified = self.imports.resolve(func)
        args = [self.eval(arg.value, frame) for arg in node.args]
        if qualified is not None:
            return self._qualified_call(qualified, node, args, frame, origin)
        if type(func) is cst.Attribute:
            return self._method_call(node, func, args, frame, origin)  # type: ignore[arg-type]
        callee = self.eval(func, frame)
        if type(func) is cst.Name:
            builtin = self._builtin_call(func.value, args, frame, origin)
            if builtin is not None and func.value not in frame.env:
                return builtin
            local = self._local_function(func.value, frame)
            if local is not None:
                return self._local_call(local, args, frame, node)
            local_class = self._local_class(func.value)
            if local_class is not None:
                constructor = local_class.find_method("__init__")
                if constructor is not None:
                    self._note_arguments(constructor, node, args, bound=True)
                if local_class.is_module:
                    return replace(role(Role.MODEL, Confidence.HIGH, origin), cls=local_class)
                if any(torch_api.is_data_loader_class(base) for base in local_class.qualified_bases):
                    return role(Role.LOADER, Confidence.HIGH, origin)  # class Loader(DataLoader)
                return instance(local_class)
            star_class = self._star_imported_class(func.value, frame)
            if star_class is not None:
                return instance(star_class)
        return self._value_call(node, callee, dotted_name(func), args, frame, origin)

    def _used_as_integers(self, node: cst.Call, parameters: tuple[tuple[int, str], ...], frame: Frame) -> None:
        """A local name passed where torch takes integers (``pack_padded_sequence(scores,
        decode_lengths)``) holds lengths or indices: no graph, from here on."""
        for position, keyword in parameters:
            argument = call_argument(node, position, keyword)
            if type(argument) is cst.Name and argument.value in frame.env:
                held = frame.env[argument.value]
                if held.is_graph and held.role is None:
                    frame.env[argument.value] = replace(DETACHED, deps=held.deps, device=held.device)

    def _star_imported_class(self, name: str, frame: Frame) -> ProjectClass | None:
        """The helper class of another module that ``name`` stands for when the file binds no
        ``name`` and takes a module's names with ``from utils.meters import *``."""
        if name in frame.env:
            return None
        for qualified in self.imports.star_candidates(name):
            project_class = self.structure.project_classes.get(qualified)
            if project_class is not None:
                return project_class
        return None

    def _value_call(self, node: cst.Call, callee: Value, callee_name: str | None, args: list[Value], frame: Frame, origin: str) -> Value:
        if callee.role is Role.INSTANCE and isinstance(callee.cls, ClassInfo):
            call_method = callee.cls.find_method("__call__")
            if call_method is not None:
                return self._local_call(call_method, args, frame, node, bound=True)  # cam(images): its __call__ runs
        if callee.role is Role.INSTANCE and isinstance(callee.cls, ProjectClass):
            kept = callee.cls.method("__call__")
            if kept is not None:
                self._note_project_method_store(node, callee_name, kept, args)
        if callee.role is Role.MODEL:
            return self._model_call(node, callee, callee_name, args, frame, origin)
        if callee.role is Role.FROZEN_MODEL:
            # No parameter requires grad: the output carries a graph only if an input does.
            if any(a.is_graph for a in args):
                return self._under_grad_mode(combine(args, origin=origin), frame)
            # a new tensor, as a model's output is
            return replace(DETACHED, fresh=True, deps=frozenset().union(*(a.deps for a in args)) if args else frozenset())
        if callee.role is Role.LOSS_FN:
            return self._loss_call(args, frame, origin, callee.confidence)
        return replace(UNKNOWN, deps=frozenset().union(*(a.deps for a in args)) if args else frozenset())

    def _model_call(self, node: cst.Call, model: Value, callee_name: str | None, args: list[Value], frame: Frame, origin: str) -> Value:
        eval_reason = None
        if callee_name is not None and callee_name in frame.eval_mode:
            eval_reason = "eval-mode"
        elif self.function.is_eval_named:
            eval_reason = "eval-function"
        self.rec.model_calls[node] = ModelCall(node, self._statement, callee_name, model, frame.grad, eval_reason)
        self._runs_model(args, frame)
        confidence = min(model.confidence, Confidence.MEDIUM, key=lambda c: c.rank)
        result = graph(Evidence.MODEL, confidence, origin, deps=frozenset().union(*(a.deps for a in args)) if args else frozenset())
        result = self._output_structure(result, model)
        return self._under_grad_mode(result, frame)

    def _output_structure(self, result: Value, model: Value) -> Value:
        """A model of this file whose ``forward`` returns a tuple or a dict with literal keys: the
        output has that shape, and the parts ``forward`` computes without a graph
        (``{"loss": ..., "metrics": {"photo": photometric.detach()}}``) are known to be detached.
        Every other part is the model output itself."""
        cls = model.cls
        forward = cls.find_method("forward") if isinstance(cls, ClassInfo) else None
        known = self.inputs.callee_result(self.structure.functions[forward]) if forward is not None else None
        returned = known[0] if known is not None else None
        if returned is None or returned.role is not None:
            return result
        return _shaped_like(result, returned)

    def _runs_model(self, args: Iterable[Value], frame: Frame, *, with_grad: bool = True) -> None:
        """A forward or backward runs here on ``args``: note it for the function, and for each
        enclosing loop whose item the arguments are computed from (it runs once per input)."""
        self.summary.runs_model = True
        if with_grad and frame.grad is not GradMode.DISABLED:
            self.summary.runs_model_with_grad = True
        for loop in frame.loops:
            if not loop.runs_model:
                loop.runs_model = True
        deps = frozenset().union(*(a.deps for a in args))
        if not deps:
            return
        for index, loop in enumerate(frame.loops):
            if not loop.runs_model_on_items and loop.item_names & deps:
                loop.runs_model_on_items = True
            if not loop.iterates_data and not loop.contains_data_loop and loop.drawn & deps and not self.function.runs_one_forward:
                _mark_data_loop(loop, frame.loops[:index])  # batch = next(it); model(batch)
        self._model_inputs |= deps

    def _loss_call(self, args: list[Value], frame: Frame, origin: str, confidence: Confidence) -> Value:
        deps = frozenset().union(*(a.deps for a in args)) if args else frozenset()
        tensors = [a for a in args if a.role is None]
        if tensors and all(a.kind in (Kind.DETACHED, Kind.NOT_TENSOR) for a in tensors):
            return replace(DETACHED, deps=deps, fresh=True)
        if not any(a.is_graph for a in tensors):
            confidence = min(confidence, Confidence.MEDIUM, key=lambda c: c.rank)
        return self._under_grad_mode(graph(Evidence.LOSS, confidence, origin, deps=deps), frame)

    def _qualified_call(self, qualified: str, node: cst.Call, args: list[Value], frame: Frame, origin: str) -> Value:
        name = qualified.rsplit(".", 1)[-1]
        deps = frozenset().union(*(a.deps for a in args)) if args else frozenset()
        if qualified in torch_api.INTEGER_PARAMETERS:
            self._used_as_integers(node, torch_api.INTEGER_PARAMETERS[qualified], frame)
        if qualified in torch_api.SET_GRAD_ENABLED and node.args and self._is_statement_call(node):
            frame.grad = literal_grad_mode(node.args[0].value)
            return NOT_TENSOR
        if torch_api.is_functional_loss(qualified):
            return self._loss_call(args, frame, origin, Confidence.HIGH)
        if torch_api.is_loss_class(qualified):
            return role(Role.LOSS_FN, Confidence.HIGH, origin)
        if qualified in torch_api.MODEL_WRAPPERS and args and args[0].role in (Role.FROZEN_MODEL, Role.FUNCTION):
            # torch.jit.trace(frozen_model, ...) runs the same frozen parameters; a traced or
            # compiled function of the file computes what the function does
            return args[0]
        if torch_api.is_parameterless_module(qualified):
            # nn.CosineSimilarity(), nn.ReLU(): no parameter of its own, so a call records a
            # graph only through a graph-attached input, as a frozen model's does
            return role(Role.FROZEN_MODEL, Confidence.HIGH, origin)
        if qualified == "torch.hub.load" and _hub_wrapper_without_grad(node):
            # YOLOv5's AutoShape: its forward runs under inference mode, so a call records no
            # graph of its own (a frozen model's calls record one only through their inputs)
            return role(Role.FROZEN_MODEL, Confidence.HIGH, origin)
        if torch_api.is_module_class(qualified) or torch_api.is_model_factory(qualified):
            return role(Role.MODEL, Confidence.HIGH, origin)
        if torch_api.is_data_loader_class(qualified):
            return role(Role.LOADER, Confidence.HIGH, origin)
        if qualified in torch_api.ITERATING_ITERTOOLS and args and node.args[0].keyword is None:
            # itertools.islice(loader, n), itertools.cycle(it): the items of the first iterable
            # (itertools.chain(a, b): of a loader among them)
            source = next((arg for arg in args if arg.role is Role.LOADER), args[0]) if name == "chain" else args[0]
            return replace(source, deps=deps, fresh=False, iterator=True)
        if name in torch_api.WRAPPING_FUNCTIONS and args and node.args[0].keyword is None:
            return replace(args[0], deps=deps)  # skip_first_batches(loader, n): the loader, wrapped
        if torch_api.is_dataset_class(qualified):
            return role(Role.DATASET, Confidence.HIGH, origin)
        if qualified.split(".", 1)[0] in torch_api.NON_TENSOR_PACKAGES:
            return replace(NOT_TENSOR, deps=deps)  # glob.glob(pattern), os.listdir(path)
        if qualified in torch_api.PROGRESS_BARS and args and args[0].role is Role.LOADER:
            return replace(args[0], deps=deps, iterator=True)  # tqdm(loader): the loader's batches, with a bar
        if qualified.startswith("torch.optim."):
            return role(Role.OPTIMIZER, Confidence.HIGH, origin)
        if qualified in torch_api.DEFAULT_DICTS and node.args:
            made = self._made_by(node.args[0].value)
            if made is not None:
                return replace(UNKNOWN, deps=deps, element=made)  # defaultdict(AverageMeter)
        if qualified in torch_api.LOADERS_OF_ANYTHING:
            return replace(UNKNOWN, deps=deps)  # a model, a state dict, a tensor: its use tells
        if qualified in torch_api.BACKWARD_FUNCTIONS:
            self._consume(node, frame)
            if qualified == "torch.autograd.grad" and keyword_is_true(node, "create_graph"):
                return self._gradients_with_graph(args, frame, origin)
            return NOT_TENSOR
        if qualified in torch_api.PARAMETER_CLASSES:
            flag = call_argument(node, 1, "requires_grad")
            if isinstance(flag, cst.Name) and flag.value == "False":
                return replace(DETACHED, deps=deps)  # a constant kept as a parameter
            return replace(UNKNOWN, deps=deps)  # a leaf that requires grad: no history, but ops on it have
        if qualified in torch_api.PARAMETER_CONTAINERS:
            return replace(NOT_TENSOR, deps=deps, element=UNKNOWN)  # its items are parameters
        if qualified.startswith("torch.") and name in torch_api.TENSOR_FACTORIES:
            requires_grad = any(a.keyword and a.keyword.value == "requires_grad" for a in node.args)
            if requires_grad:
                return UNKNOWN
            return replace(DETACHED, fresh=name not in torch_api.SHARING_FACTORIES, deps=deps)
        if qualified in torch_api.NO_GRAD_RESULT_FUNCTIONS:
            return replace(DETACHED, deps=deps, fresh=True)
        if qualified.startswith("torch.") and name in torch_api.VALUES_INDICES_METHODS and _has_dim_argument(node):
            values = self._under_grad_mode(combine(args[:1], origin=origin), frame)
            return replace(values, items=(values, replace(DETACHED, deps=deps, fresh=True)), fresh=False)
        project_class = self.structure.project_classes.get(qualified)
        if project_class is not None:
            return instance(project_class)  # a meter or buffer of another module of the project
        if qualified.startswith(("torch.", "numpy.")) or qualified.startswith("math."):
            if qualified.startswith(("numpy.", "math.")):
                return replace(NOT_TENSOR, deps=deps)
            return self._under_grad_mode(combine(args, origin=origin), frame)
        return replace(UNKNOWN, deps=deps)

    def _gradients_with_graph(self, args: list[Value], frame: Frame, origin: str) -> Value:
        """``torch.autograd.grad(loss, params, create_graph=True)``: the gradients carry a graph
        of their own, back to the loss's (meta-learning's fast weights, gradient penalties)."""
        graph = [a for a in args if a.is_graph]
        if not graph:
            return NOT_TENSOR
        return self._under_grad_mode(replace(combine(graph, origin=origin), evidence=Evidence.DERIVED), frame)

    def _is_statement_call(self, node: cst.Call) -> bool:
        statement = self._statement
        return statement is not None and isinstance(statement.node, cst.Expr) and statement.node.value is node

    def _builtin_call(self, name: str, args: list[Value], frame: Frame, origin: str) -> Value | None:
        deps = frozenset().union(*(a.deps for a in args)) if args else frozenset()
        if name in ("float", "int", "bool", "len", "str", "repr", "print", "isinstance", "hasattr", "format", "range", "id", "hash", "type"):
            return replace(NOT_TENSOR, deps=deps)
        if name in ("iter", "reversed") and args and args[0].role is Role.LOADER:
            return replace(args[0], deps=deps, iterator=True)  # iter(loader): the loader's batches, one per next()
        if name == "next" and args and args[0].role is Role.LOADER and frame.loops and not frame.loops[-1].contains_data_loop:
            _mark_data_loop(frame.loops[-1], frame.loops[:-1])  # batch = next(loader_iter): a batch per iteration
        if name in ("sum", "max", "min", "abs", "round", "list", "tuple", "sorted", "reversed", "dict", "set", "next", "iter"):
            return self._under_grad_mode(combine(args, origin=origin, fresh=name in ("sum", "abs")), frame)
        if name in ("map", "filter") and len(args) > 1 and args[1].role is Role.LOADER:
            return replace(args[1], deps=deps, iterator=True)  # map(to_device, loader): one item per batch
        if name in ("enumerate", "zip", "tqdm", "iter"):
            if name != "zip" and args and args[0].role is Role.LOADER:
                return replace(args[0], deps=deps, iterator=True)  # enumerate(loader): still one batch per item
            if name == "zip" and (loader := next((arg for arg in args if arg.role is Role.LOADER), None)) is not None:
                return replace(loader, deps=deps, iterator=True)  # zip(labelled, unlabelled): a batch of each per item
            return replace(UNKNOWN, deps=deps)
        return None

    def _local_function(self, name: str, frame: Frame) -> cst.FunctionDef | None:
        known = frame.env[name] if name in frame.env else self.inputs.outer(name)
        if known is not None and known.role is Role.FUNCTION and known.function is not None:
            return known.function  # type: ignore[return-value]  # (also the def a maker returned)
        if name in frame.env and frame.env[name].role is not Role.FUNCTION:
            return None
        return self.structure.module_functions.get(name) or self._nested_function(name)

    def _nested_function(self, name: str) -> cst.FunctionDef | None:
        return self.structure.nested_functions.get((self.function, name))

    def _bounded_attributes(self) -> frozenset[str]:
        """Attributes of the method's class that only ever hold a bounded queue."""
        cls = self.function.cls
        return bounded_attributes(cls.node, self.imports) if cls is not None else frozenset()

    def _made_by(self, factory: cst.BaseExpression) -> Value | None:
        """What calling ``factory`` makes, when it is a class of the file (``AverageMeter``,
        ``lambda: AverageMeter()``): an instance of it, for the items of a ``defaultdict``."""
        if type(factory) is cst.Lambda and type(factory.body) is cst.Call:  # type: ignore[attr-defined]
            factory = factory.body.func  # type: ignore[attr-defined]
        cls = self._local_class(factory.value) if type(factory) is cst.Name else None  # type: ignore[attr-defined]
        if cls is None:
            return None
        return replace(role(Role.MODEL, Confidence.HIGH), cls=cls) if cls.is_module else instance(cls)

    def _local_class(self, name: str) -> ClassInfo | None:
        return self.structure.classes_by_name.get(name)

    def _local_call(self, function: cst.FunctionDef, args: list[Value], frame: Frame, node: cst.Call | None = None, *, bound: bool = False) -> Value:
        self.rec.call_sites.setdefault(function, []).append(frame.grad)
        if node is not None:
            self._note_arguments(function, node, args, bound=bound)
            if bound and type(node.func) is cst.Attribute:
                self.rec.resolved_method_calls.add(node)
        info = self.structure.functions[function]
        if info.steps_once:  # agent.update() is one training step: the loop calling it is a training loop
            for loop in frame.loops:
                loop.has_backward = True
            for outer in frame.loops[:-1]:
                outer.contains_iteration_loop = True  # and the loops around it repeat that loop
        elif frame.loops and any(loop.is_iteration_loop for loop in info.loops):
            # train_one_epoch(model, loader): the loop calling it repeats a loop over data or steps
            for outer in frame.loops:
                outer.contains_iteration_loop = True
                outer.contains_data_loop |= any(loop.iterates_data or loop.contains_data_loop for loop in info.loops)
        known = self.inputs.callee_result(info)
        if known is None:
            return UNKNOWN
        returns, runs_model, with_grad = known
        if runs_model:
            self._runs_model(args, frame, with_grad=with_grad)
        result = returns if returns is not None else NOT_TENSOR
        if result.role is not None:
            return result
        deps = frozenset().union(*(a.deps for a in args)) if args else frozenset()
        items = tuple(replace(item, deps=deps) for item in result.items) if result.items is not None else None
        return self._under_grad_mode(replace(result, deps=deps, items=items), frame)

    def _note_arguments(self, function: cst.FunctionDef, node: cst.Call, args: list[Value], *, bound: bool) -> None:
        """Record what this call passes for each parameter of the local ``function`` (``bound``:
        called as a method, so the first parameter is the receiver)."""
        join_literals(self.rec.literal_arguments.setdefault(function, {}), literal_arguments(function, node, bound=bound))
        passed = arguments_by_parameter(function, node, args, bound=bound)
        if passed:
            join_arguments(self.rec.call_arguments.setdefault(function, {}), passed)
            calls = self.rec.graph_argument_calls.setdefault(function, [])
            if node not in calls and any(value.is_graph for value in passed.values()):
                calls.append(node)

    def _method_call(self, node: cst.Call, func: cst.Attribute, args: list[Value], frame: Frame, origin: str) -> Value:
        method = func.attr.value
        receiver_name = dotted_name(func.value)
        if method == "backward" or method == "manual_backward":
            self._consume(node, frame)
            return NOT_TENSOR
        if method == "enter_context" and node.args and self._is_statement_call(node):
            # stack.enter_context(torch.no_grad()) in a `with ExitStack() as stack:` block: the
            # mode holds until the block ends, where _with restores the outer one.
            effect = self._grad_effect(node.args[0].value, frame)
            if effect is not None:
                frame.grad = effect
                return NOT_TENSOR
        if receiver_name == "self" and self.function.cls is not None:
            nested = self._nested_class(self.function.cls, method)
            if nested is not None:
                constructor = nested.find_method("__init__")
                if constructor is not None:
                    self._note_arguments(constructor, node, args, bound=True)
                return replace(role(Role.MODEL, Confidence.HIGH), cls=nested) if nested.is_module else instance(nested)
            local = self.function.cls.find_method(method)
            if local is not None:
                self.eval(func.value, frame)
                if self.structure.functions[local].cls is not self.function.cls:
                    # a method of a base class (a logging mixin): it keeps what it is given
                    self._note_method_store(node, "self", local, args)
                return self._local_call(local, args, frame, node, bound=True)
            if torch_api.framework_loader_method(self.function.cls.qualified_bases, method):
                return role(Role.LOADER, Confidence.HIGH, origin)  # self.get_eval_dataloader()
        if method in WRAPPING_METHODS and args and all(arg.keyword is None and not arg.star for arg in node.args):
            # accelerator.prepare(model, optimizer, loader), fabric.setup_dataloaders(loader): what
            # it is given, wrapped, one per argument (a tuple for several)
            self.eval(func.value, frame)
            return args[0] if len(args) == 1 else replace(combine(args, fresh=False), items=tuple(args))
        callee = self._known_attribute(func, frame)
        if callee is not None and callee.role in (Role.MODEL, Role.LOSS_FN, Role.INSTANCE):
            self.eval(func, frame)
            return self._value_call(node, callee, dotted_name(func), args, frame, origin)
        receiver = self.eval(func.value, frame)
        if method in torch_api.DEVICE_MOVE_METHODS and receiver.deps:
            for loop in frame.loops:
                if not loop.moves_items_to_device and loop.item_names & receiver.deps:
                    loop.moves_items_to_device = True
        deps = receiver.deps | (frozenset().union(*(a.deps for a in args)) if args else frozenset())
        container = receiver_name or container_name(func.value)
        if receiver.role is Role.INSTANCE and isinstance(receiver.cls, ClassInfo):
            called = receiver.cls.find_method(method)
            if called is not None:
                self._note_method_store(node, container, called, args)
                return self._local_call(called, args, frame, node, bound=True)
        if receiver.role is Role.INSTANCE and isinstance(receiver.cls, ProjectClass):
            kept = receiver.cls.method(method)
            if kept is not None:
                self._note_project_method_store(node, container, kept, args)
            return replace(UNKNOWN, deps=deps)
        if method == "setdefault" and len(args) == 2 and receiver.role is None and args[1].role is Role.INSTANCE:
            # `meters.setdefault(name, AverageMeter()).update(val)`: what comes back is the object
            # the dict holds under that key, the default when it holds none yet (an object the dict
            # already held is taken for one of the same class only when that is what it holds)
            held = receiver.element
            if held is None or (held.role is Role.INSTANCE and held.cls is args[1].cls):
                return replace(args[1], deps=deps, fresh=False)
        if receiver.role is None and receiver.element is not None and receiver.element.role is Role.LOADER and method in ("items", "values") and not args:
            # loaders.items(): (name, loader) pairs; loaders.values(): the loaders
            held = replace(UNKNOWN, items=(UNKNOWN, receiver.element)) if method == "items" else receiver.element
            return replace(NOT_TENSOR, deps=deps, element=held)
        if receiver.fields is not None and receiver.role is None:
            known = self._dict_method(node, method, receiver, receiver_name, args, deps, frame)
            if known is not None:
                return known
        if container and container.startswith("self.") and method in STORING_METHODS and container not in self._bounded_attributes():
            # `self.stats.append((loss.detach(), rest))`: a parameter read only detached is not kept
            appended = node.args[0].value if len(node.args) == 1 else None
            self._note_param_store(args, "append", container, appended)
        elif receiver_name in frame.env and method in STORING_METHODS and args and _local_list(receiver, method):
            # A local list now holds what was appended: what flows out of it (torch.cat(parts)
            # into a backward) comes from those values' names too. Only tensors may carry a
            # graph along (no detached results, numbers or strings).
            # `probs.extend(self.saved[k])`: what comes out of the other list came in with it.
            carried = (Kind.GRAPH, Kind.UNKNOWN, Kind.NOT_TENSOR) if method == "extend" else (Kind.GRAPH, Kind.UNKNOWN)
            added = frozenset().union(*(a.deps for a in args if a.kind in carried and a.role is None))
            if not added <= receiver.deps:
                receiver = frame.env[receiver_name] = replace(receiver, deps=receiver.deps | added)
            if method in ("append", "appendleft", "insert") and receiver.element is None and receiver.kind is Kind.NOT_TENSOR and args and args[-1].role is Role.LOADER:
                # `loaders.append(DataLoader(ds))` makes `loaders` what `[DataLoader(ds)]` is: a list of loaders
                receiver = frame.env[receiver_name] = replace(receiver, element=args[-1])
            if method in LIST_STORING_METHODS and not receiver.is_graph and any(a.is_graph and a.role is None for a in args):
                # `xs.append(model(x))` makes `xs` what the literal `[model(x)]` is: a list that
                # holds graphs, and `torch.stack(xs)`, `xs[-1]`, `for x in xs` carry them.
                frame.env[receiver_name] = _holding_graphs(receiver, args)
        if (
            method in torch_api.MODULE_COLLECTION_METHODS
            and receiver.role in (None, Role.MODEL, Role.FROZEN_MODEL)
            and receiver.kind is Kind.UNKNOWN
            and not (isinstance(receiver.cls, ClassInfo) and receiver.cls.find_method(method) is not None)
        ):
            return replace(NOT_TENSOR, deps=deps, element=UNKNOWN)  # model.parameters(): the module's own tensors
        if receiver.role is Role.MODEL:
            return self._module_method(node, func, receiver, receiver_name, args, frame, origin)
        if receiver.role is Role.LOSS_FN and method == "forward":
            return self._loss_call(args, frame, origin, receiver.confidence)
        if receiver.role is Role.FROZEN_MODEL and method in torch_api.MODULE_RETURNS_SELF and method != "requires_grad_":
            return receiver  # frozen.to(device).eval(): the same module, parameters still frozen
        if receiver.role is not None:
            return replace(UNKNOWN, deps=deps)
        if method in torch_api.TO_PYTHON_METHODS or method in torch_api.NON_TENSOR_METHODS:
            return replace(NOT_TENSOR, deps=deps)
        if method in torch_api.DETACH_METHODS:
            return replace(DETACHED, deps=deps) if receiver.kind is not Kind.NOT_TENSOR else replace(NOT_TENSOR, deps=deps)
        if method in torch_api.NO_GRAD_RESULT_METHODS or (method in ("to", "type") and self._casts_to_integers(node)):
            return replace(DETACHED, deps=deps, fresh=True) if receiver.kind is not Kind.NOT_TENSOR else replace(UNKNOWN, deps=deps)
        if method in torch_api.NEW_TENSOR_METHODS and receiver.kind is not Kind.NOT_TENSOR:
            return replace(DETACHED, deps=deps, fresh=True)  # x.new_zeros(n): no history
        if method in torch_api.DISTRIBUTION_SAMPLE_METHODS and receiver.kind is Kind.GRAPH:
            # A tensor has no .sample(): what carries a graph and has one is a distribution
            # built from graph-attached parameters (a decoder's output), whose sample() runs
            # under no_grad (only rsample() keeps the graph).
            return replace(DETACHED, deps=deps, fresh=True)
        if method in torch_api.VALUES_INDICES_METHODS and _has_dim_argument(node):
            values = self._under_grad_mode(replace(combine([receiver], origin=origin), deps=deps), frame)
            return replace(values, items=(values, replace(DETACHED, deps=deps, fresh=True)), fresh=False)
        if method.endswith("_") and not method.startswith("_"):
            receiver = self._written_in_place(method, receiver, receiver_name, args, frame)
            return replace(receiver, deps=deps, fresh=False)  # in place: returns the receiver
        if receiver.kind is Kind.NOT_TENSOR and not receiver.is_graph:
            if any(a.is_graph for a in args):
                return self._under_grad_mode(replace(combine(args, origin=origin), deps=deps), frame)
            if receiver_name is None and not self._from_non_tensor_package(func.value):
                return replace(UNKNOWN, deps=deps) if method not in ("append", "extend") else replace(NOT_TENSOR, deps=deps)
            return replace(NOT_TENSOR, deps=deps)
        fresh = method not in torch_api.VIEW_METHODS
        result = combine([receiver] + [a for a in args if a.is_graph], origin=origin, fresh=fresh)
        result = replace(result, deps=deps)
        if receiver.kind is Kind.UNKNOWN and not any(a.is_graph for a in args):
            return replace(UNKNOWN, deps=deps, fresh=False)
        return self._under_grad_mode(result, frame)

    def _from_non_tensor_package(self, expr: cst.BaseExpression) -> bool:
        """``plt.rcParams["axes.prop_cycle"]``: a value reached from a package of paths, strings,
        numbers or plots (:data:`torch_api.NON_TENSOR_PACKAGES`)."""
        while type(expr) in (cst.Attribute, cst.Subscript, cst.Call):
            expr = expr.func if type(expr) is cst.Call else expr.value  # type: ignore[attr-defined]
        qualified = self.imports.resolve(expr) if type(expr) is cst.Name else None
        return qualified is not None and qualified.split(".", 1)[0] in torch_api.NON_TENSOR_PACKAGES

    def _written_in_place(self, method: str, receiver: Value, name: str | None, args: list[Value], frame: Frame) -> Value:
        """``weights.scatter_(1, idx, probs)`` / ``buf.copy_(h)`` with gradients on: autograd
        records the write, and the tensor that had no history now carries the argument's graph
        (what is computed from it afterwards does too), as ``x += y`` does."""
        if receiver.kind is not Kind.DETACHED or name is None or name not in frame.env or frame.grad is GradMode.DISABLED:
            return receiver
        if method in torch_api.SHAPE_ONLY_INPLACE_METHODS:
            return receiver  # buf.resize_as_(out): the shape, not the values
        written = [a for a in args if a.is_graph]
        if not written:
            return receiver
        updated = replace(combine([receiver, *written], fresh=receiver.fresh), deps=receiver.deps).with_dep(name)
        frame.env[name] = updated
        return updated

    def _casts_to_integers(self, node: cst.Call) -> bool:
        """``x.to(torch.uint8)``, ``x.to(device, dtype=torch.long)``, ``x.type(torch.int64)``."""
        return any(
            (arg.keyword is None or arg.keyword.value == "dtype") and self.imports.resolve(arg.value) in torch_api.INTEGER_DTYPES
            for arg in node.args
        )

    def _dict_method(self, node: cst.Call, method: str, receiver: Value, name: str | None, args: list[Value], deps: frozenset[str], frame: Frame) -> Value | None:
        """``d.get("loss")`` and ``d.update(other)`` on a dict whose keys are known."""
        if method == "get" and node.args and node.args[0].keyword is None:
            known = receiver.field(literal_key(node.args[0].value))
            if known is not None:
                result = replace(known, deps=deps, fresh=False)
                return join(result, args[1]) if len(args) > 1 else result
        if method == "update" and name is not None and name in frame.env and args:
            other = args[0]
            if other.fields is not None and len(args) == 1:
                merged = (*(f for f in receiver.fields if all(f[0] != key for key, _ in other.fields)), *other.fields)  # type: ignore[union-attr]
                frame.env[name] = with_fields(merged, deps=receiver.deps | other.deps)
            else:
                frame.env[name] = replace(combine([receiver, *args], fresh=False), fields=None)
            return replace(NOT_TENSOR, deps=deps)
        return None

    def _module_method(self, node: cst.Call, func: cst.Attribute, model: Value, receiver_name: str | None, args: list[Value], frame: Frame, origin: str) -> Value:
        method = func.attr.value
        receiver_name = receiver_name or _chain_root(func.value)
        if method == "eval" and receiver_name:
            frame.eval_mode = frame.eval_mode | {receiver_name}
        elif method == "train" and receiver_name:
            turns_off = bool(node.args) and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == "False"
            frame.eval_mode = (frame.eval_mode | {receiver_name}) if turns_off else (frame.eval_mode - {receiver_name})
        if method in ("forward", "module"):
            return self._model_call(node, model, receiver_name, args, frame, origin)
        if method == "register_buffer" and receiver_name and len(node.args) >= 2 and node.args[0].keyword is None:
            # self.register_buffer("memory", torch.zeros(n, d)): self.memory is that tensor
            buffer = literal_key(node.args[0].value)
            if isinstance(buffer, str) and buffer.isidentifier():
                frame.env[f"{receiver_name}.{buffer}"] = args[1]
            return NOT_TENSOR
        own = model.cls.find_method(method) if isinstance(model.cls, ClassInfo) and method not in torch_api.MODULE_RETURNS_SELF else None
        if own is not None and method != "__init__":
            return self._local_call(own, args, frame, node, bound=True)  # flow.sample(n): the class's own method
        if own is None and method in torch_api.LIBRARY_FORWARD_METHODS and not isinstance(model.cls, ClassInfo):
            return self._model_call(node, model, receiver_name, args, frame, origin)  # clip.get_image_features(**inputs)
        if method == "requires_grad_" and node.args and _is_false(node.args[0].value):
            # It freezes the module in place: the name the chain starts from is frozen too
            # (model.eval().requires_grad_(False).to(device) on its own line).
            frozen = replace(model, role=Role.FROZEN_MODEL)
            if receiver_name and receiver_name in frame.env:
                frame.env[receiver_name] = frozen
            return frozen
        if method in torch_api.MODULE_RETURNS_SELF:
            return model
        # model.encode(x) / model.cell(x, h): unknown, but computed from its arguments
        return replace(UNKNOWN, deps=frozenset().union(model.deps, *(a.deps for a in args)))

    def _consume(self, node: cst.Call, frame: Frame) -> None:
        """Record that the tensor a backward call differentiates had its graph used on purpose."""
        target = backward_target(node, self.imports)
        if target is None:
            return
        value = self.rec.values.get(target) or self.eval(target, frame)
        differentiated = set(bound_names(target))
        self.summary.backward_consumed |= value.deps | differentiated
        self.summary.consumed_through |= value.deps - differentiated
        line = self._statement.line if self._statement is not None else None
        for name in differentiated:
            lines = self.summary.backward_lines.setdefault(name, [])
            if line is not None and line not in lines:
                lines.append(line)
        self._runs_model([value], frame)
        if frees_whole_graph(node, self.imports):
            self._backpropagated(target, frame)

    def _backpropagated(self, target: cst.BaseExpression, frame: Frame) -> None:
        """A backward that frees the graph ran on ``target``: the names it differentiates
        (``loss`` in ``loss.backward()``, ``(loss / accum).backward()``,
        ``scaler.scale(loss).backward()``, and the loss apex's ``scaled_loss`` is a copy of) now
        hold tensors whose graphs kept no saved tensors (also the terms of ``(loss_a +
        loss_b).backward()``). What the backward only ran through (a model output, a loss term
        summed on an earlier line) is left as it is."""
        names = backpropagated_names(target)
        for name in list(names):
            names |= self._scaled_losses.get(name, set())
        for name in names:
            held = frame.env.get(name)
            if held is not None and held.is_graph and held.role is None and not held.backpropagated:
                frame.env[name] = replace(held, backpropagated=True)


def _hub_wrapper_without_grad(node: cst.Call) -> bool:
    """``torch.hub.load("ultralytics/yolov5", "yolov5s")``: a hub entry point known to return a
    wrapper that runs its forward without gradients (``torch_api.HUB_MODELS_WITHOUT_GRAD``)."""
    if any(arg.star for arg in node.args):
        return False
    positional = [_hub_literal(arg.value) for arg in node.args if arg.keyword is None]
    keywords = {arg.keyword.value: _hub_literal(arg.value) for arg in node.args if arg.keyword is not None}
    if len(positional) < 2:
        return False
    return torch_api.hub_model_runs_without_grad(positional[0], positional[1], keywords, tuple(positional[2:]))


def _hub_literal(expr: cst.BaseExpression) -> object:
    """A literal argument as its Python value (``"yolov5s"``, ``80``, ``False``); None otherwise."""
    if type(expr) is cst.Name and expr.value in ("True", "False"):  # type: ignore[attr-defined]
        return expr.value == "True"  # type: ignore[attr-defined]
    if type(expr) is cst.SimpleString or type(expr) is cst.Integer:
        return literal_key(expr)
    return None


#: ImportMap -> {statement: its shared names}: the answer depends only on the statement and the
#: module's imports, and the rounds and loop passes interpret the same statements many times.
_SHARED_NAMES: weakref.WeakKeyDictionary[ImportMap, dict[cst.CSTNode, set[str]]] = weakref.WeakKeyDictionary()


#: Expression class -> how FunctionInterpreter.eval values it.
_EVAL: dict[type, Callable[[FunctionInterpreter, Any, Frame], Value]] = {
    cst.Name: FunctionInterpreter._name,
    cst.Attribute: FunctionInterpreter._attribute,
    cst.Call: FunctionInterpreter._call,
    cst.BinaryOperation: FunctionInterpreter._binary,
    cst.UnaryOperation: FunctionInterpreter._unary,
    cst.Comparison: FunctionInterpreter._compare,
    cst.BooleanOperation: FunctionInterpreter._boolean,
    cst.IfExp: FunctionInterpreter._if_expression,
    cst.Subscript: FunctionInterpreter._subscript,
    cst.Tuple: FunctionInterpreter._sequence,
    cst.List: FunctionInterpreter._sequence,
    cst.Set: FunctionInterpreter._sequence,
    cst.Dict: FunctionInterpreter._dict,
    cst.ListComp: FunctionInterpreter._comprehension,
    cst.SetComp: FunctionInterpreter._comprehension,
    cst.GeneratorExp: FunctionInterpreter._comprehension,
    cst.DictComp: FunctionInterpreter._comprehension,
    cst.NamedExpr: FunctionInterpreter._named,
    cst.Await: FunctionInterpreter._await,
    cst.Yield: FunctionInterpreter._yield,
    cst.StarredElement: FunctionInterpreter._starred,
    cst.FormattedString: FunctionInterpreter._formatted,
}


def _shared_names_cache(imports: ImportMap) -> dict[cst.CSTNode, set[str]]:
    cache = _SHARED_NAMES.get(imports)
    if cache is None:
        cache = _SHARED_NAMES[imports] = {}
    return cache


def _shared_names(node: cst.BaseSmallStatement, imports: ImportMap) -> set[str]:
    """Names whose tensor another reference may now share: aliased (``y = x``), stored in a
    container or attribute, or handed to a function that is not a known torch operation."""
    collector = _SharingCollector(imports)
    collector.run(node)
    return collector.shared


class _SharingCollector(Walker):
    def __init__(self, imports: ImportMap) -> None:
        self.imports = imports
        self.shared: set[str] = set()

    def _note(self, expr: cst.BaseExpression) -> None:
        name = dotted_name(expr)
        if name is not None:
            self.shared.add(name)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._note(node.value)
        if dotted_name(node.value) is not None:
            for target in node.targets:
                self._note(target.target)
        root = _view_root(node.value)
        if root is not None:
            self.shared.add(root)  # kept = loss.detach(), flat = out.view(-1), first = out[0]: same storage

    def visit_Element(self, node: cst.Element) -> None:
        self._note(node.value)

    def visit_DictElement(self, node: cst.DictElement) -> None:
        self._note(node.value)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self._note(node.value)

    def visit_Yield(self, node: cst.Yield) -> None:
        if isinstance(node.value, cst.BaseExpression):
            self._note(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.imports.resolve(node.func) or ""
        if qualified.startswith("torch.") or (isinstance(node.func, cst.Name) and node.func.value in _NON_STORING_BUILTINS):
            return
        for arg in node.args:
            self._note(arg.value)

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


def _view_root(expr: cst.BaseExpression) -> str | None:
    """``x`` in ``x.detach()``, ``x.view(-1).t()``, ``x[0]``, ``x.T``: a view of (or, for
    ``.to()`` / ``.float()`` that need no conversion, the same) storage as ``x``."""
    seen = False
    while True:
        kind = type(expr)
        if kind is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in torch_api.VIEW_METHODS:  # type: ignore[attr-defined]
            expr = expr.func.value  # type: ignore[attr-defined]
        elif kind is cst.Subscript:
            expr = expr.value  # type: ignore[attr-defined]
        elif kind is cst.Attribute and expr.attr.value in ("T", "mT", "H", "mH", "real", "imag"):  # type: ignore[attr-defined]
            expr = expr.value  # type: ignore[attr-defined]
        else:
            break
        seen = True
    return dotted_name(expr) if seen else None


_NON_STORING_BUILTINS = frozenset({"print", "len", "float", "int", "bool", "str", "repr", "isinstance", "format", "round", "abs"})


_HELD_IN_EVAL_MODE: weakref.WeakKeyDictionary[ClassInfo, frozenset[str]] = weakref.WeakKeyDictionary()


def held_in_eval_mode(cls: ClassInfo) -> frozenset[str]:
    """The models a plain wrapper class puts in evaluation mode once and for good: ``__init__``
    calls ``self.model.eval()``, and no method of the class turns it back (``self.model.train()``)
    or puts another model in its place (``self.model = load(path)``, in training mode). Every
    method of the class runs them in evaluation mode. Not for a module class: whoever holds it may
    call ``.train()`` on it, which reaches its submodules."""
    found = _HELD_IN_EVAL_MODE.get(cls)
    if found is not None:
        return found
    held: set[str] = set()
    init = cls.find_method("__init__")
    if init is not None and not cls.is_module and not cls.is_lightning and not cls.local_bases:
        turned: set[str] = set()
        for method in cls.node.body.body:
            if isinstance(method, cst.FunctionDef) and method is not init:
                turned.update(name for name in names_bound_in(method.body) if name.startswith("self."))
        for node in walk(cls.node.body):
            if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
                continue
            receiver = dotted_name(node.func.value)
            if receiver is None or not receiver.startswith("self.") or receiver.count(".") != 1:
                continue
            method = node.func.attr.value
            if method == "train" and not (node.args and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == "False"):
                turned.add(receiver)
            elif method == "eval" and not node.args and any(part is node for part in walk(init.body)):
                held.add(receiver)
        held -= turned
    found = _HELD_IN_EVAL_MODE[cls] = frozenset(held)
    return found


def _shaped_like(output: Value, returned: Value) -> Value:
    """``output`` (a model output) given the tuple or literal-key dict shape of what ``forward``
    returns: parts without a graph there keep their kind, the others are ``output``."""

    def part(value: Value) -> Value:
        if value.role is None and value.kind in (Kind.DETACHED, Kind.NOT_TENSOR):
            return _shaped_like(replace(value, deps=output.deps), value) if value.items or value.fields else replace(value, deps=output.deps)
        return _shaped_like(output, value)

    if returned.items is not None:
        return replace(output, items=tuple(part(item) for item in returned.items))
    if returned.fields is not None:
        return replace(output, fields=tuple((key, part(value)) for key, value in returned.fields))
    return output


def _chain_root(expr: cst.BaseExpression) -> str | None:
    """``net`` in ``net.to(device).cuda()``: module methods that return the module itself."""
    while (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value in torch_api.MODULE_RETURNS_SELF
    ):
        expr = expr.func.value
    return dotted_name(expr)


def _literal_mode(expr: cst.BaseExpression, *, enabled: GradMode | None, disabled: GradMode | None) -> GradMode | None:
    """``True``/``False`` literals pick a mode; anything else is a deliberate runtime choice."""
    if isinstance(expr, cst.Name) and expr.value == "True":
        return enabled
    if isinstance(expr, cst.Name) and expr.value == "False":
        return disabled
    return GradMode.CONDITIONAL


def _comparison(operands: list[Value]) -> Value:
    deps = frozenset().union(*(v.deps for v in operands))
    if any(v.kind in (Kind.GRAPH, Kind.DETACHED) and v.role is None for v in operands):
        return replace(DETACHED, deps=deps, fresh=True)
    return replace(NOT_TENSOR, deps=deps)


def _has_dim_argument(node: cst.Call) -> bool:
    """``torch.max(x, 1)`` / ``x.max(dim=1)`` return (values, indices); ``torch.max(x)`` does not."""
    positional = [a for a in node.args if a.keyword is None and a.star == ""]
    keywords = {a.keyword.value for a in node.args if a.keyword is not None}
    if "dim" in keywords:
        return True
    func = node.func
    is_method = isinstance(func, cst.Attribute) and not (isinstance(func.value, cst.Name) and func.value.value in ("torch",))
    needed = 1 if is_method else 2
    if len(positional) >= needed:
        candidate = positional[needed - 1].value
        return isinstance(candidate, (cst.Integer, cst.UnaryOperation)) or isinstance(func, cst.Attribute) and func.attr.value in ("sort", "topk", "kthvalue", "median", "mode")
    return isinstance(func, cst.Attribute) and func.attr.value in ("sort", "topk")


def _is_false(expression: cst.BaseExpression) -> bool:
    return isinstance(expression, cst.Name) and expression.value == "False"
