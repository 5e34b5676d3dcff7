"""``ModuleFacts``: the one object rules read. Built once per file, shared by every rule.

Building it runs the provenance pass over the module in rounds: a round interprets the top level
and every function; the next round knows each local function's return value and which functions
are only ever called with gradients disabled, and interprets again. Two or three rounds settle; a function whose inputs did not change since the
last round is not interpreted again (``rounds.Rounds``).
"""

from __future__ import annotations

from collections import ChainMap
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

import libcst as cst

from leaklint.analysis import torch_api
from leaklint.analysis.index import ModuleIndex
from leaklint.analysis.names import ImportMap, dotted_name, dotted_names_in, names_read
from leaklint.analysis.project_classes import KeepingMethod
from leaklint.analysis.provenance import (
    STORING_METHODS,
    FunctionSummary,
    MethodStore,
    ModelCall,
    Recording,
    StatementFact,
    StoredArgument,
)
from leaklint.analysis.rounds import Rounds, same
from leaklint.analysis.structure import (
    FunctionInfo,
    GradMode,
    LoopInfo,
    ModuleStructure,
    backward_calls,
    backward_target,
    bound_names,
    names_bound_in,
    scan_imports_and_structure,
)
from leaklint.analysis.values import UNKNOWN, Value, replace
from leaklint.analysis.walk import not_into_scopes, walk
from leaklint.findings import Confidence

if TYPE_CHECKING:  # positions imports libcst.metadata: loaded only when a message needs a line
    from leaklint.analysis.positions import Lines
    from leaklint.analysis.project_classes import ProjectClass


MAX_ROUNDS = 3
T = TypeVar("T")
_DESCRIPTION_LENGTH = 40


@dataclass(frozen=True)
class Lifetime:
    """How long a value stored into ``target`` at some statement stays alive."""

    target: str
    #: Loops (innermost first) across whose iterations the target keeps what was stored.
    carried_by: tuple[LoopInfo, ...]
    #: The target is an attribute of ``self`` or a global: it outlives the function call.
    outlives_call: bool
    #: The stored graph flows into a ``.backward()`` in the same function: kept on purpose.
    consumed_by_backward: bool
    #: The target is returned: the function builds it for a caller that may backpropagate it
    #: (see ``ModuleFacts.result_backpropagated``).
    returned: bool
    #: An enclosing loop that is not carried re-creates the target every training step.
    reset_each_step: bool
    #: Nothing ever differentiates what the target holds (``leaklint.analysis.graph_use`` follows
    #: every read of it, into the file's functions and back to their callers): asked only for a
    #: local name carried by loops that run the model once per input.
    graph_unused: bool = False
    #: The line of a forward run with gradients on whose output nothing differentiates and
    #: flows into the target: where the graphs it keeps are recorded for nothing (``no_grad``
    #: there removes them too).
    unused_forward_line: int | None = None
    #: Such a forward is reported itself (LL201, or LL103): it runs in the function that keeps
    #: the target (in view of the keep), or its output is carried by a loop around it (a
    #: sampler's chain, whose graph grows in the helper already); the keep is then only a guess.
    unused_forward_reported: bool = False
    #: What is stored is computed from a graph that a backward of the function consumes
    #: (``entropies.append(dist.entropy())`` next to ``log_probs.append(dist.log_prob(a))``, whose
    #: sum is backpropagated): the forward it keeps is the one kept for that backward anyway, and
    #: only the few operations after it are extra.
    shares_consumed_graph: bool = False

    @property
    def per_input(self) -> bool:
        """A loop that carries it runs the model again every iteration (over images, over
        samples drawn until enough are accepted): one graph per input piles up."""
        return any(loop.repeats_per_input or loop.runs_model for loop in self.carried_by)

    @property
    def across_iterations(self) -> bool:
        """Grows with every training or evaluation step."""
        return any(loop.is_iteration_loop for loop in self.carried_by)

    @property
    def across_data_or_training_steps(self) -> bool:
        """Grows with every batch of a data source, or every step that runs backward/optimizer."""
        return any(
            loop.has_backward or loop.has_optimizer_step or loop.iterates_data or loop.contains_data_loop
            for loop in self.carried_by
        )

    def leak_confidence(self, confidence: Confidence, *, count_call_lifetime: bool = False) -> Confidence | None:
        """How sure we are that graphs (believed attached with ``confidence``) kept here pile up
        step after step; None when they do not (reset, consumed by backward, built for a caller).

        ``count_call_lifetime``: a target that outlives the function call (``self.x``, a global)
        grows with every call, loop or not.
        """
        if self.consumed_by_backward:
            return None
        if count_call_lifetime and self.outlives_call:
            return confidence
        if not self.carried_by:
            return None
        if self.across_iterations:
            if self.returned and not self.across_data_or_training_steps:
                # Chunks or tiles gathered for the caller (`for i in range(num_batches)` in a
                # model's method): a bounded structure the caller asked for.
                return None
            return confidence
        if self.per_input and (self.graph_unused or not self.returned) and not self.reset_each_step:
            # A model run per input (per frame, per drawn sample), its outputs gathered with their
            # graphs, nothing differentiating what the target holds: every input's graph piles
            # up for nothing until the target goes. One finding for one leak: when the forward
            # that records them runs in this function, LL201 reports it (the no_grad around it
            # and the loop frees these graphs too), and when a loop of its own carries its output
            # (a sampler's chain) LL201/LL103 report it; when it runs in a helper the loop calls
            # per input, the helper alone frees its graph every call, and the keep in this loop
            # is where memory grows: reported here, naming the forward (LL201 leaves it to this
            # finding). When the graphs may still be differentiated, a guess.
            if self.graph_unused and not self.unused_forward_reported:
                return confidence
            return Confidence.LOW
        if self.per_input and self.graph_unused and not self.unused_forward_reported and not self.returned:
            # Reset every step, but a loop inside the step runs a helper's forward per iteration
            # (an annealing schedule of 500 steps summing log-weights) and nothing differentiates
            # the total: the step holds one graph per inner iteration, for nothing. When the step
            # backpropagates the same forwards through another value, only a tail is extra.
            return Confidence.LOW if self.shares_consumed_graph else confidence
        # Only "structure" loops (over heads, layers, chunks) carry it: a value built for one step.
        if self.returned or self.reset_each_step:
            return None
        return Confidence.LOW


class ModuleFacts:
    """Program facts about one module: values, statement contexts, loops, model calls."""

    def __init__(
        self,
        module: cst.Module,
        *,
        project_no_grad: frozenset[str] = frozenset(),
        project_classes: Iterable[ProjectClass] = (),
        grad_free: frozenset[str] = frozenset(),
        notebook: bool = False,
    ) -> None:
        """What the other files of the run tell (leaklint/project.py): ``project_no_grad``, the
        decorators of the project that turn gradients off; ``project_classes``, its classes
        whose methods keep their arguments; ``grad_free``, the top-level functions of this
        module that the other files only call with gradients disabled. ``notebook``: the module
        is the code cells of a Jupyter notebook, run cell by cell by a kernel (whose inline
        matplotlib backend displays and closes the figures a cell made when the cell ends)."""
        self.module = module
        self.notebook = notebook
        self.imports, self.structure = scan_imports_and_structure(module, project_no_grad)
        self.structure.project_classes = {name: cls for cls in project_classes for name in cls.qualified_names}
        self._recording = _analyse(module, self.imports, self.structure, grad_free)
        self._derived: dict[Callable[[ModuleFacts], object], object] = {}

    @cached_property
    def _lines(self) -> Lines:
        from leaklint.analysis.positions import Lines

        return Lines(self.module)

    @cached_property
    def records_autograd(self) -> bool:
        """Whether torch's autograd may record graphs in this module: not in a file that imports
        TensorFlow or Keras and nothing of torch, where a model's output (a Keras model's, a
        ``TFAutoModel``'s) is a tensor with no graph attached, whatever the code looks like."""
        imports = self.imports
        if not imports.imports_anything_from(*torch_api.TENSORFLOW_ROOTS) or imports.imports_anything_from(*torch_api.TORCH_ROOTS):
            return True
        # `from transformers import AutoModel` next to TensorFlow is torch code; a file that takes
        # `TFAutoModel` (with its tokenizer) from the same package is on the TensorFlow side
        for root in torch_api.MIXED_ROOTS:
            leaves = [name.rsplit(".", 1)[-1] for name in imports.imported_names(root)]
            if leaves and not any(leaf.startswith(torch_api.NON_TORCH_NAME_PREFIXES) for leaf in leaves):
                return True
        return False

    @cached_property
    def index(self) -> ModuleIndex:
        """Statements, calls and bindings grouped the ways rules look them up (built on first use)."""
        return ModuleIndex(self)

    def release(self) -> None:
        """Drop the index and the derived facts. They refer back to this object, and that cycle
        leaves the whole analysis, tree included, to Python's cyclic collector, which must then
        walk it all (5% of a corpus run); without it, reference counting frees everything at once.
        For the engine, once a file's rules have run; both are rebuilt if asked for again."""
        self._derived.clear()
        self.__dict__.pop("index", None)

    def derived(self, build: Callable[[ModuleFacts], T]) -> T:
        """The fact ``build(self)`` computes (hook registrations, carried states, Keras models...),
        computed once per module and shared by every rule that asks for it."""
        if build not in self._derived:
            self._derived[build] = build(self)
        return self._derived[build]  # type: ignore[return-value]

    def line_of(self, node: cst.CSTNode) -> int | None:
        """The line ``node`` starts on, for messages that point elsewhere ("the loop at line 80");
        positions only the top-level statement that holds it, as the engine does for findings."""
        return self._lines.line_of(node)

    # --- queries rules use --------------------------------------------------------------------
    def statements(self) -> Iterator[StatementFact]:
        """Every simple statement that runs, with its context (function, loops, grad mode)."""
        return iter(list(self._recording.statements.values()))

    def value(self, node: cst.CSTNode) -> Value:
        """The abstract value of an expression where it runs (UNKNOWN if never evaluated)."""
        return self._recording.values.get(node, UNKNOWN)

    def model_calls(self) -> list[ModelCall]:
        return list(self._recording.model_calls.values())

    def method_stores(self) -> list[MethodStore]:
        """Calls such as ``meter.update(loss)`` whose method keeps an argument on ``self``."""
        return list(self._recording.method_stores.values())

    def graphs_kept_by_methods(self, kind: str) -> Iterator[tuple[MethodStore, StoredArgument, Confidence]]:
        """Graph-attached arguments that a method keeps (``kind``: "accumulate", "append" or
        "slot") on an object living across steps, with the confidence that this piles up.

        Reported where the graph enters the object that keeps it: a call inside a method that
        only passes on what that method's own callers gave it (``self.meters[k].update(value)``
        in ``Meter.update``) is left to those callers' calls (see :meth:`kept_at_callers`)."""
        from leaklint.analysis.steps import per_step_functions

        for store in self.method_stores():
            fact = store.statement
            if fact is None or fact.grad is GradMode.DISABLED:
                continue
            if store.method.handles_tensors if isinstance(store.method, KeepingMethod) else self.handles_tensors(store.method):
                continue  # the method's own store is reported (kept_at_callers)
            for argument in store.stored:
                value = self.value(argument.expr)
                if argument.kind != kind or not value.is_graph or self.kept_at_callers(fact, value):
                    continue
                per_step = fact.function in per_step_functions(self)
                per_call = fact.function.runs_per_step or bool(fact.loops) or per_step
                target = argument.attribute.split("[", 1)[0] if store.receiver == "self" else store.receiver
                lifetime = self.lifetime(fact, target)
                if per_step and not lifetime.outlives_call and target.split(".", 1)[0] in fact.function.params:
                    # an object the caller hands to a function it runs every step: it lives on
                    lifetime = replace(lifetime, outlives_call=True)
                if lifetime.consumed_by_backward and _write_only(self, argument.attribute):
                    # `loss` computed from `exp.logprobs` makes `exp` backward-consumed, but what
                    # the method keeps in `exp.lstm_states` nothing reads, so nothing differentiates
                    lifetime = replace(lifetime, consumed_by_backward=False)
                confidence = lifetime.leak_confidence(value.confidence, count_call_lifetime=per_call)
                if confidence is not None:
                    yield store, argument, confidence
                    break

    def kept_at_callers(self, fact: StatementFact, value: Value) -> bool:
        """``value``, kept by ``fact``, carries a graph only because the function's callers pass one
        (``self.values.append(val)`` in a meter's ``update``), and every call that passes one
        comes from outside the method's class, where it is reported instead: the call is where
        the graph enters the object that keeps it. A method of the same class handing its own
        graph to a helper (``self.store_metrics(metrics)``) is reported in the helper."""
        function = fact.function
        if not value.from_caller or function.node is None or not function.is_method or self.handles_tensors(function):
            return False
        calls = self._recording.graph_argument_calls.get(function.node)
        return bool(calls) and all(call in self._recording.method_stores for call in calls)

    def parameter_literals(self, function: FunctionInfo) -> dict[str, object] | None:
        """The literal each parameter of ``function`` gets from every call in the file (its
        literal default where a call leaves it out; ``VARIES`` where the calls differ or pass
        something else); None where the file's calls may not be all of them (a method, a
        function handed on as a value) or there are none."""
        if function.node is None or function.is_method or function.node in self._recording.escaping:
            return None
        return self._recording.literal_arguments.get(function.node)

    def handles_tensors(self, function: FunctionInfo) -> bool:
        """The function tests whether a value is a tensor (``isinstance(v, torch.Tensor)``,
        ``torch.is_tensor(v)``): it treats tensors on purpose, so a graph it keeps anyway is its
        own doing, reported where it keeps it rather than at its callers."""
        return function in self.derived(_tensor_handlers)

    def summary(self, function: FunctionInfo) -> FunctionSummary:
        return self._recording.summaries.get(function) or FunctionSummary()

    def statement_fact(self, node: cst.CSTNode) -> StatementFact | None:
        return self._recording.statements.get(node)

    def describe(self, node: cst.CSTNode) -> str:
        """Short source text of ``node`` for messages (one line, at most 40 characters)."""
        text = " ".join(self.module.code_for_node(node).split())
        return text if len(text) <= _DESCRIPTION_LENGTH else text[: _DESCRIPTION_LENGTH - 3] + "..."

    def describe_receiver(self, node: cst.BaseExpression) -> str | None:
        """Source text to call a method on (``(a - b)``), or None when too long to quote."""
        text = " ".join(self.module.code_for_node(node).split())
        if len(text) > _DESCRIPTION_LENGTH:
            return None
        atomic = isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or bool(getattr(node, "lpar", None))
        return text if atomic else f"({text})"

    def lifetime(self, fact: StatementFact, target: str, *, periodic_resets: bool = False) -> Lifetime:
        """What keeps a value stored into ``target`` (a dotted name) at ``fact`` alive.

        ``periodic_resets``: a loop that re-binds ``target`` only in a branch (``if step % 100 ==
        0: total = 0``) still carries it: what the iterations between two resets add piles up."""
        carried = self.carry_loops(fact, target, periodic_resets=periodic_resets)
        if periodic_resets and carried and self._bound_before(fact, target, carried[0].node):
            carried = ()  # `loss = f(x); loss = loss + g(x)` in one branch: a fresh value each time
        function = fact.function
        bound_here = target in fact.env or target.split(".", 1)[0] in function.params
        is_attribute = "." in target and target.split(".", 1)[0] in ("self", "cls")
        outlives_call = (is_attribute and target not in fact.env) or (
            not function.is_module_level and not bound_here and "." not in target
        )
        if carried and not outlives_call and "." not in target and function.runs_one_forward:
            # A loop in a module's forward (over embeddings, layers, pooling levels) is part of
            # one forward pass: its locals die when the forward returns. A loop over a data
            # source in a forward still carries them (`forward(self, loader)`).
            carried = tuple(loop for loop in carried if loop.iterates_data or loop.contains_data_loop)
        summary = self.summary(function)
        outer = fact.loops[: len(fact.loops) - len(carried)]
        graph_unused, unused_forward_line, unused_forward_reported = False, None, False
        if (
            carried
            and "." not in target
            and not any(loop.is_iteration_loop for loop in carried)
            and any(loop.repeats_per_input or loop.runs_model for loop in carried)
        ):
            from leaklint.analysis.graph_use import graph_use

            use = graph_use(self)
            graph_unused = not use.name_flow(function, target)[0]
            forwards = use.unused_forwards_into(function, target) if graph_unused else []
            if forwards:
                from leaklint.analysis.carry import carried_states

                chains = [(carry.function, carry.name) for carry in carried_states(self) if carry.loop is not None]
                unused_forward_reported = any(
                    owner is function or any(use.reaches_name(reached, where, name) for where, name in chains)
                    for _, owner, reached in forwards
                )
                unused_forward_line = self.line_of(forwards[0][0])
        shares_consumed_graph = graph_unused and any(
            name != target and name in summary.backward_consumed and name in fact.env and fact.env[name].is_graph
            for name in names_read(fact.node)
        )
        return Lifetime(
            target=target,
            carried_by=carried,
            outlives_call=outlives_call,
            # An attribute's graphs may be consumed by another method (REINFORCE: select_action()
            # appends log-probs, finish_episode() backpropagates through them and empties the list).
            consumed_by_backward=target in summary.backward_consumed
            or (is_attribute and target in self.index.backward_consumed)
            or (is_attribute and (function.cls, target) in self.derived(_backpropagated_through_returns)),
            returned=target in summary.returned_names and self.result_backpropagated(function),
            reset_each_step=bool(outer) and outer[-1].is_iteration_loop,
            graph_unused=graph_unused,
            unused_forward_line=unused_forward_line,
            unused_forward_reported=unused_forward_reported,
            shares_consumed_graph=shares_consumed_graph,
        )

    def _bound_before(self, fact: StatementFact, target: str, loop: cst.CSTNode) -> bool:
        """Some statement before ``fact`` in the same iteration of ``loop``, on every path to it,
        binds ``target`` afresh (an assignment that does not read it)."""
        place = self.index.place_of(fact)
        if place is None:
            return False
        chain = place.chain
        top = next((i for i, node in enumerate(chain) if node is loop), None)
        if top is None:
            return False
        for index in range(len(chain) - 1, top, -1):
            child, parent = chain[index], chain[index - 1]
            body = getattr(parent, "body", None)
            position = next((i for i, node in enumerate(body) if node is child), None) if isinstance(body, (list, tuple)) else None
            if position is None:
                continue
            for statement in body[:position]:
                if isinstance(statement, cst.SimpleStatementLine) and any(_binds_afresh(small, target) for small in statement.body):
                    return True
        return False

    def result_backpropagated(self, function: FunctionInfo) -> bool:
        """Whether what ``function`` returns may flow into a backward call: unless every caller
        is known (calls in this file, nothing else can reach it) and none backpropagates the
        result, it may. A method of an ``nn.Module`` and a framework's step method always may."""
        return function not in self.derived(_results_not_backpropagated)

    @staticmethod
    def carry_loops(fact: StatementFact, target: str, *, periodic_resets: bool = False) -> tuple[LoopInfo, ...]:
        """The loops (innermost first) across whose iterations ``target`` keeps its value.

        A loop whose body re-binds ``target`` from scratch (``total = 0``) resets it every
        iteration; re-binding inside an inner loop resets it for the outer loops too. With
        ``periodic_resets``, a re-binding in a branch only (``if step % 100 == 0:``) does not.
        """
        carried = []
        for loop in reversed(fact.loops):
            if target in loop.rebound and not (periodic_resets and target in loop.rebound_in_branch):
                break
            carried.append(loop)
        return tuple(carried)


def _write_only(facts: ModuleFacts, attribute: str) -> bool:
    """``self.<name>`` (``attribute``, maybe with ``[...]``) is only ever written in the file:
    no ``x.<name>`` is read anywhere (nor named in a string, as ``getattr`` would), so no backward
    can reach what it holds."""
    name = attribute.split("[", 1)[0].rsplit(".", 1)[-1]
    read = facts.derived(_read_attribute_names)
    return read is not None and name not in read


#: Calls that read an object's attributes without naming them (``vars(self).items()``).
_READS_EVERY_ATTRIBUTE = frozenset({"vars", "asdict", "astuple"})


def _read_attribute_names(facts: ModuleFacts) -> frozenset[str] | None:
    """Attribute names the module reads somewhere (``x.name`` other than as what an assignment,
    an item write or a storing method call writes into), and every string literal's text; None
    when the module reads attributes it does not name (``vars(self)``, ``self.__dict__``,
    ``getattr(self, name)``): then any attribute may be read."""
    written: set[int] = set()
    read: set[str] = set()
    for node in walk(facts.module):
        if isinstance(node, cst.Call):
            callee = dotted_name(node.func) or ""
            leaf = callee.rsplit(".", 1)[-1]
            if leaf in _READS_EVERY_ATTRIBUTE or (leaf == "getattr" and len(node.args) > 1 and not isinstance(node.args[1].value, cst.SimpleString)):
                return None
        elif isinstance(node, cst.Attribute) and node.attr.value == "__dict__":
            return None
        if isinstance(node, (cst.Assign, cst.AnnAssign)):
            for target in [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]:
                parts = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
                for part in parts:
                    written.add(id(part.value) if isinstance(part, cst.Subscript) else id(part))
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in STORING_METHODS:
            written.add(id(node.func.value))
        elif isinstance(node, cst.SimpleString):
            value = node.evaluated_value
            if isinstance(value, str):
                read.add(value)
    for node in walk(facts.module):
        if isinstance(node, cst.Attribute) and id(node) not in written:
            read.add(node.attr.value)
    return frozenset(read)


def _tensor_handlers(facts: ModuleFacts) -> set[FunctionInfo]:
    found = set()
    for info in facts.structure.functions.values():
        if info.node is None:
            continue
        for node in walk(info.node.body, into=not_into_scopes):
            if isinstance(node, cst.Call) and _is_tensor_check(node, facts.imports):
                found.add(info)
                break
    return found


def _is_tensor_check(call: cst.Call, imports: ImportMap) -> bool:
    if imports.resolve(call.func) in torch_api.TENSOR_CHECKS:
        return True
    return (
        isinstance(call.func, cst.Name)
        and call.func.value == "isinstance"
        and len(call.args) == 2
        and imports.resolve(call.args[1].value) in torch_api.TENSOR_TYPES
    )


def _results_not_backpropagated(facts: ModuleFacts) -> set[FunctionInfo]:
    """Functions whose every caller is in this file and binds the result to names that no
    backward call of that caller uses (nor returns it on): an evaluation or sampling helper."""
    from leaklint.analysis.calls import call_graph

    graph = call_graph(facts)
    escaping = facts._recording.escaping
    found: set[FunctionInfo] = set()
    for info in facts.structure.functions.values():
        node = info.node
        if node is None or node in escaping or info.runs_per_step or (info.cls is not None and info.cls.is_module):
            continue
        if info.may_be_called_by_base:
            continue
        sites = graph.sites_of(info)
        if not sites or len(sites) < len(facts.index.calls_named(info.name)):
            continue  # unknown callers (calls of this name that are not resolved to it)
        if all(_result_dropped(call, fact, facts) or _result_never_differentiated(call, fact, facts) for call, fact in sites):
            found.add(info)
    return found


def _result_never_differentiated(call: cst.Call, fact: StatementFact, facts: ModuleFacts) -> bool:
    """Followed through the file (into the helpers it is passed to and back), the result of
    ``call`` reaches no backward: scores computed from returned embeddings, metrics."""
    from leaklint.analysis.graph_use import graph_use

    return not graph_use(facts).expression_flow(call, fact.function)[0]


def _backpropagated_through_returns(facts: ModuleFacts) -> frozenset[tuple[object, str]]:
    """The ``self`` attributes whose graphs a method returns (``return torch.stack(terms).sum()``
    over ``self.log_probs``) to a caller that backpropagates the result (``loss =
    self.policy_loss(); loss.backward()``): consumed on purpose, one method away."""
    from leaklint.analysis.calls import call_graph

    found: set[tuple[object, str]] = set()
    for call, fact, callee in call_graph(facts).resolved:
        node = fact.node
        if callee is None or not callee.is_method or not isinstance(node, cst.Assign) or node.value is not call:
            continue
        if result_backpropagated(call, fact, facts):
            found |= {(callee.cls, name) for name in facts.summary(callee).returned_names if name.startswith("self.")}
    return frozenset(found)


def result_backpropagated(call: cst.Call, fact: StatementFact, facts: ModuleFacts) -> bool:
    """The statement making ``call`` sends its result into a backward of the calling function:
    the call is inside a backward's target (``score(x).sum().backward()``), or the statement binds
    names that a backward there consumes (``loss = policy_loss()`` ... ``loss.backward()``,
    ``picked = score(x).sum()`` ... ``torch.autograd.grad(picked, x)``)."""
    node = fact.node
    for backward in backward_calls(node, facts.imports):
        target = backward_target(backward, facts.imports)
        if target is not None and any(part is call for part in walk(target)):
            return True
    if isinstance(node, (cst.Assign, cst.AnnAssign)):
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        return binding_feeds_backward(facts, fact, {name for target in targets for name in bound_names(target)})
    return False


def binding_feeds_backward(facts: ModuleFacts, fact: StatementFact, names: set[str]) -> bool:
    """One of ``names``, as the statement of ``fact`` binds it, flows into a backward of its
    function: the name is consumed by one, and not bound afresh before every backward that
    differentiates it."""
    summary = facts.summary(fact.function)
    consumed = names & summary.backward_consumed
    return bool(consumed) and any(not _rebound_before_its_backwards(facts, summary, fact, name) for name in consumed)


def _rebound_before_its_backwards(facts: ModuleFacts, summary: FunctionSummary, fact: StatementFact, name: str) -> bool:
    """Every backward that differentiates ``name`` is preceded, in its own block, by another plain
    assignment of ``name``: the binding at ``fact`` never reaches one. The validation pass's
    ``loss, logits = step(x)`` is not the ``loss`` that ``loss = step(x); loss.backward()`` of the
    training pass differentiates, though both bind the name in one function."""
    lines = summary.backward_lines.get(name)
    if not lines or name in summary.consumed_through or fact.function.node is None:
        return False
    blocks = facts.derived(_blocks_of_lines)
    for line in lines:
        block = blocks.get(line)
        if block is None:
            return False
        binding = _last_binding_before(block, line, name)
        if binding is None or binding is fact.line or not _binds_afresh_line(binding, name):
            return False
    return True


def _binds_afresh_line(statement: cst.CSTNode, name: str) -> bool:
    """A plain line that assigns ``name`` a value not computed from its previous one (``loss =
    f(x)``, not ``loss = loss + aux`` or ``loss += aux``): no earlier binding gets past it."""
    return isinstance(statement, cst.SimpleStatementLine) and any(_binds_afresh(small, name) for small in statement.body)


def _blocks_of_lines(facts: ModuleFacts) -> dict[cst.CSTNode, Sequence[cst.CSTNode]]:
    """For every statement in an indented block of the module: the statements of that block."""
    found: dict[cst.CSTNode, Sequence[cst.CSTNode]] = {}
    for node in walk(facts.module):
        if isinstance(node, cst.IndentedBlock):
            for statement in node.body:
                found[statement] = node.body
    return found


def _last_binding_before(block: Sequence[cst.CSTNode], line: cst.CSTNode, name: str) -> cst.CSTNode | None:
    """The last statement of ``block`` before ``line`` that binds ``name`` (a plain line assigning
    it, or a compound statement binding it somewhere inside), or None."""
    binding = None
    for statement in block:
        if statement is line:
            return binding
        if name in names_bound_in(statement):
            binding = statement
    return None


def _result_dropped(call: cst.Call, fact: StatementFact, facts: ModuleFacts) -> bool:
    """The statement binds the call's result (``x = f()``, ``a, b = f()``) to names that neither
    flow into a backward of the calling function nor are returned by it; or ignores it."""
    node = fact.node
    if isinstance(node, cst.Expr) and node.value is call:
        return True
    if not isinstance(node, cst.Assign) or node.value is not call:
        return False
    summary = facts.summary(fact.function)
    names = {name for target in node.targets for name in bound_names(target.target)}
    return not names & (summary.backward_consumed | summary.returned_names)


def _binds_afresh(node: cst.BaseSmallStatement, target: str) -> bool:
    if not isinstance(node, cst.Assign) or target in dotted_names_in(node.value):
        return False
    return any(target in bound_names(t.target) for t in node.targets)


def _initial_grad(info: FunctionInfo, inferred_no_grad: set[cst.FunctionDef]) -> GradMode:
    if info.decorator_grad is not None:
        return info.decorator_grad
    if info.is_lightning_no_grad_hook:
        return GradMode.DISABLED
    if info.is_method and info.name == "forward" and info.cls.is_autograd_function:  # type: ignore[union-attr]
        return GradMode.DISABLED  # Function.apply runs a custom forward with recording off
    if info.node in inferred_no_grad:
        return GradMode.DISABLED
    if info.parent is not None:
        return _initial_grad(info.parent, inferred_no_grad)
    return GradMode.ENABLED


def _only_called_without_grad(recording: Recording, structure: ModuleStructure, grad_free: frozenset[str] = frozenset()) -> set[cst.FunctionDef]:
    """Functions every known caller runs under no_grad (and no unknown caller can reach: not a
    method called on another object, nor one a base class of another package may call).
    ``grad_free``: top-level functions that the other modules of the project only call under
    no_grad; they count as such when the calls of this module (if any) do too."""
    inferred = set()
    sites_of = dict(recording.call_sites)
    for name in grad_free:
        node = structure.module_functions.get(name)
        if node is not None:
            sites_of.setdefault(node, [])
    for function, sites in sites_of.items():
        info = structure.functions[function]
        if function in recording.escaping or not (sites or (info.parent is None and not info.is_method and info.name in grad_free)):
            continue
        if info.may_be_called_by_base:
            continue
        if all(site is GradMode.DISABLED for site in sites) and not (info.is_method and _called_with_grad_on_unknown_objects(info.name, recording, structure)):
            inferred.add(function)
    for name, calls in structure.external_method_calls.items():
        # A method the file only calls on objects it cannot place (`model.module.inference(x)`
        # through a DDP wrapper), each such call under no_grad.
        unresolved = [call for call in calls if call not in recording.resolved_method_calls]
        if not unresolved or _called_with_grad_on_unknown_objects(name, recording, structure):
            continue
        if name.startswith("__") or name in torch_api.STEP_METHODS or torch_api.FRAMEWORK_HOOK_NAME.match(name):
            continue  # `forward` runs through module(x), a hook through its framework: calls unseen
        for info in structure.functions.values():
            node = info.node
            if (
                info.is_method and info.name == name and node is not None and node not in sites_of
                and node not in recording.escaping and not info.may_be_called_by_base
            ):
                inferred.add(node)
    return inferred


def _called_with_grad_on_unknown_objects(method: str, recording: Recording, structure: ModuleStructure) -> bool:
    """Some call ``x.method(...)`` in the file is on an object the pass could not tie to a class
    of the file, made with gradients on (or in code the pass did not run): it may run this
    method with them."""
    return any(
        recording.method_call_grads.get(call) is not GradMode.DISABLED
        for call in structure.external_method_calls.get(method, ())
        if call not in recording.resolved_method_calls
    )


def _analyse(module: cst.Module, imports: ImportMap, structure: ModuleStructure, grad_free: frozenset[str] = frozenset()) -> Recording:
    rounds = Rounds(module, imports, structure)
    previous: Recording | None = None
    inferred: set[cst.FunctionDef] = set()
    recording = Recording()
    for _ in range(MAX_ROUNDS):
        recording = Recording()
        module_env = previous.module_bindings if previous is not None else {}
        rounds.interpret(structure.top, GradMode.ENABLED, recording, previous, module_env)
        for info in structure.functions.values():
            outer: Mapping[str, Value] = recording.module_bindings
            if info.parent is not None:
                outer = ChainMap(recording.final_envs.get(info.parent, {}), recording.module_bindings)
            rounds.interpret(info, _initial_grad(info, inferred), recording, previous, outer)
        now_inferred = _only_called_without_grad(recording, structure, grad_free)
        settled = (
            previous is not None
            and now_inferred == inferred
            and _same_returns(previous, recording)
            and same(previous.call_arguments, recording.call_arguments)
            and same(previous.literal_arguments, recording.literal_arguments)
        )
        previous, inferred = recording, now_inferred
        if settled:
            break
    return recording


def _same_returns(a: Recording, b: Recording) -> bool:
    return {f: s.returns for f, s in a.summaries.items()} == {f: s.returns for f, s in b.summaries.items()}
