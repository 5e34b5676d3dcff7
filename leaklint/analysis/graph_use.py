"""Is the graph a forward records here ever used by a backward?

A forward pass run with gradients on saves its activations for a backward pass. When nothing
ever differentiates its result (a sample written to disk, a value bootstrap turned into numbers,
a generated token), that graph is pure cost: the peak of a training step, or, when the result is
fed into the next iteration (a sampler's ``x``, a kv-cache, an RNN state in an inference loop), a
chain of graphs that grows every iteration.

This module follows where a graph-attached value flows, forward from the expression that makes
it: through the expressions around it, the names it is bound to (every read of them in the
function), the containers it is put in, the parameters of the file's own functions and methods
it is passed to, and their returns back to every call site in the file. A flow ends dead where
the value stops carrying the graph (``.item()``, ``.detach()``, ``.argmax()``, ``torch.save``,
a comparison, a discarded result); it is *used* where it reaches a backward, or where it goes
somewhere this module does not follow (stored on an object, handed to a function of another
module, returned to callers it cannot see, captured by a closure). Only a value none of whose
flows is used has an unused graph.

The analysis is flow-insensitive inside a function (every read of a name counts, wherever it
is) and context-insensitive across calls (a function's return flows to all of its call sites):
both only add flows, so they can only make a graph look used, never unused.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Iterable, Sequence, Union

import libcst as cst

from leaklint.analysis import torch_api
from leaklint.analysis.arguments import is_staticmethod, parameter_for
from leaklint.analysis.containers import literal_key
from leaklint.analysis.names import dotted_name
from leaklint.analysis.syntax import call_argument
from leaklint.analysis.structure import ClassInfo, FunctionInfo, GradMode, backward_target, bound_names
from leaklint.analysis.values import UNKNOWN, Kind, Role
from leaklint.analysis.walk import children, not_into_scopes, walk
from leaklint.findings import Confidence

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts

#: A step of a :data:`Path`: where, inside a container, the followed value sits.
#: ``ANY``: an element of a list, set or other iterable, or a dict entry under a key not written
#: as a literal; ``("k", key)``: the entry of a dict under the literal ``key``; ``("i", n)``: the
#: ``n``-th element of a tuple.
ANY = "*"
Step = Union[str, tuple]
#: Where the followed value sits inside the value of a name or an expression, outermost first:
#: ``()`` is the value itself; ``(ANY, ("k", "logp"))`` is the ``"logp"`` entry of the dicts a
#: list holds (``trajectories.append({"tokens": t, "logp": logp})``). A path only lets the flow
#: end where the code reads another part of the container (``traj["tokens"]``); whatever the
#: analysis does not understand drops the path (the whole container counts as the value), so a
#: path can only take flows away that provably do not carry the graph.
Path = tuple
_MAX_PATH = 4


#: The binding of a parameter: what the call passed, before the body rebinds it.
_ENTRY = "entry"


@dataclass(frozen=True)
class _NameNode:
    scope: object  # FunctionInfo or a comprehension node
    name: str
    path: Path = ()
    #: The statement whose binding of ``name`` holds the followed value (an assignment, a ``for``
    #: or ``with`` statement, or ``_ENTRY`` for a parameter): only the reads that binding reaches
    #: are followed (``logits`` bound again before the training forward reads it). None: every read.
    binding: object = None
    #: The call through which the followed value entered this function (see ``_ReturnNode.site``).
    site: object = None


@dataclass(frozen=True)
class _ReturnNode:
    function: FunctionInfo
    path: Path = ()
    #: The call site the followed value came in by (an argument of that call): its return goes
    #: back to that call only, not to every caller of the function (``stft_loss(y_, y)`` in an
    #: evaluation step does not flow into the training step's loss). None: every call site.
    site: object = None


#: Where a flow goes next: the reads of a name in a scope (a function, or a comprehension node
#: for its own targets), or the call sites of a function's return.
FlowNode = Union[_NameNode, _ReturnNode]

#: Builtins whose result carries their argument's graph on (a tensor or a container of them).
_PASSING_BUILTINS = frozenset(
    {"sum", "max", "min", "abs", "list", "tuple", "sorted", "reversed", "zip", "enumerate", "iter", "next", "dict", "set", "map", "filter", "getattr", "vars"}
)
#: Builtins that read a value without keeping or differentiating it.
_DEAD_BUILTINS = frozenset(
    {"print", "len", "str", "repr", "format", "isinstance", "hasattr", "bool", "int", "float", "id", "type", "hash", "callable", "range"}
)
#: In-place container methods that put their argument into the receiver.
_STORING_METHODS = frozenset({"append", "appendleft", "extend", "insert", "add", "put", "update", "setdefault", "__setitem__"})
#: Methods on the tracked value that neither carry its graph on nor keep it.
_ENDING_METHODS = (
    torch_api.DETACH_METHODS
    | torch_api.TO_PYTHON_METHODS
    | torch_api.NON_TENSOR_METHODS
    | torch_api.NO_GRAD_RESULT_METHODS
    | torch_api.DISTRIBUTION_SAMPLE_METHODS
    | frozenset({"clear", "keys", "index", "count", "__len__"})
)
#: Comprehensions: their result holds what their element is computed from.
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
_MAX_NODES = 400


class GraphUse:
    """The flows of one module, explored on demand (built once per file through ``facts.derived``)."""

    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts
        self._parents: dict[cst.CSTNode, cst.CSTNode] | None = None
        #: scope -> name -> the Name nodes that read it there.
        self._reads: dict[object, dict[str, list[cst.Name]]] = {}
        #: Names read (not bound) in a nested def, lambda or class: a closure keeps them.
        self._captured: dict[object, set[str]] = {}
        #: Names the module's functions read without binding them (they read the global).
        self._global_reads: set[str] | None = None
        self._node_flows: dict[FlowNode, tuple[bool, frozenset[FlowNode]]] = {}
        self._sites: dict[FunctionInfo, list[tuple[cst.Call, FunctionInfo]] | None] = {}
        self._model_calls: frozenset[cst.Call] | None = None
        self._trainers: frozenset[str] | None = None
        self._unused_forwards: list[tuple[object, frozenset[FlowNode]]] | None = None
        self._reaching: dict[cst.Name, object] = {}
        #: scope -> name -> the ``name += ...`` statements there.
        self._augmented: dict[object, dict[str, list[cst.AugAssign]]] = {}

    # ==== queries ===============================================================================
    def expression_unused(self, expr: cst.BaseExpression, function: FunctionInfo) -> bool:
        """Whether nothing ever differentiates the graph ``expr`` (evaluated in ``function``) makes."""
        return self.expression_flow(expr, function)[0] is False

    def expression_flow(self, expr: cst.BaseExpression, function: FunctionInfo) -> tuple[bool, frozenset[FlowNode]]:
        """(whether the value of ``expr`` may reach a backward, every name it flows into that
        outlives the statement). A comprehension's own variable ends with the comprehension:
        ``[f.detach() for f in G(z)]`` keeps no graph, so it is left out."""
        used, successors = self._expr_flow(expr, function)
        if used:
            return True, frozenset()
        used, reached = self._explore(successors)
        return used, frozenset(node for node in reached if not (isinstance(node, _NameNode) and not isinstance(node.scope, FunctionInfo)))

    def returned_by(self, expr: cst.BaseExpression, function: FunctionInfo) -> bool:
        """Whether the value of ``expr`` (evaluated in ``function``) flows, directly or through
        the names of ``function``, into what ``function`` returns: its callers get it, and what
        they do with it decides whether its graph is used."""
        _, successors = self._expr_flow(expr, function)
        seen: set[FlowNode] = set()
        queue = deque(successors)
        while queue and len(seen) <= _MAX_NODES:
            node = queue.popleft()
            if node in seen:
                continue
            seen.add(node)
            if isinstance(node, _ReturnNode):
                if node.function is function:
                    return True
                continue
            if self._scope_function(node.scope) is function:
                queue.extend(self._node_flow(node)[1])
        return False

    def callers_shown(self, function: FunctionInfo) -> bool:
        """The file shows every call of ``function`` (not a framework hook, not passed around as
        a value, not a module's ``forward``), and there is at least one."""
        return bool(self._call_sites(function))

    def name_flow(self, function: FunctionInfo, name: str) -> tuple[bool, frozenset[FlowNode]]:
        """(whether the value of local ``name`` of ``function`` may reach a backward, the names it flows into)."""
        return self._explore({_NameNode(function, name)})

    def runs_with_grad(self, function: FunctionInfo) -> bool | None:
        """Whether ``function`` runs with gradients recorded on some path this file shows: it is
        the module's code, a framework hook, or some call of it runs with gradients on in a
        function that does; False when every call is made with gradients off; None when the file
        shows no call of it (the caller may disable gradients)."""
        return self._runs_with_grad(function, set())

    def _runs_with_grad(self, function: FunctionInfo, seen: set[FunctionInfo]) -> bool | None:
        if function.is_module_level:
            return True
        if function in seen:
            return False
        seen.add(function)
        if _framework_hook(function) and not self._call_sites(function):
            return not function.is_lightning_no_grad_hook
        sites = self._call_sites(function)
        if not sites:
            return None
        unknown = False
        for call, caller in sites:
            statement = self._statement_of(call)
            fact = self.facts.statement_fact(statement) if statement is not None else None
            if fact is not None and fact.grad is not GradMode.ENABLED:
                continue  # off, on purpose, or a runtime choice: not a forgotten no_grad
            found = self._runs_with_grad(caller, seen)
            if found:
                return True
            unknown |= found is None
        return None if unknown else False

    def model_confidence(self, model: cst.BaseExpression, function: FunctionInfo) -> Confidence:
        """How sure it is that ``model`` (called in ``function``) is a model: what the value
        analysis says, or, for a parameter believed a model by its name only (``policy_net``,
        ``self.model`` set from a constructor argument), what every caller in the file passes."""
        value = self.facts.value(model)
        confidence = value.confidence if value.role in (Role.MODEL, Role.FROZEN_MODEL) else Confidence.LOW
        if confidence is not Confidence.LOW:
            return confidence
        passed = self._passed_values(model, function, 0)
        if passed and all(found is not Confidence.LOW for found in passed):
            return Confidence.MEDIUM
        return confidence

    def local_forward(self, model: cst.BaseExpression, function: FunctionInfo, method: str = "forward") -> FunctionInfo | None | bool:
        """For a model built from a module class of this file: the method a call runs (its
        ``forward``, or ``method``); False when the model is such an instance but the method is
        not found; None when the model is not known to be one."""
        facts = self.facts
        name = dotted_name(model)
        if name is None:
            return None
        if name == "self":
            cls = function.cls
        elif name.startswith("self."):
            cls = self._class_of_receiver(model, function)
        else:
            scope = function if _assigned_parts(facts, function, name) else facts.structure.top
            built = _assigned_parts(facts, scope, name)
            classes = {_constructed_class(value, facts) for value in built}
            cls = classes.pop() if len(classes) == 1 else None
        if cls is None or not cls.is_module:
            return None
        found = cls.find_method(method)
        return facts.structure.functions[found] if found is not None else False

    def parameterless(self, model: cst.BaseExpression, function: FunctionInfo) -> bool:
        """Whether ``model`` surely has no parameters of its own (``nn.ReLU()``, a module class of
        the file whose ``__init__`` builds no layer): calling it records a graph only through a
        graph-attached input."""
        name = dotted_name(model)
        if name is None or "." in name:
            return False
        binding = self._reaching_binding(model) if type(model) is cst.Name else None
        if binding is None and type(model) is cst.Name and function.is_module_level:
            binding = _top_level_binding(model, self._parent_map())
        if type(binding) is cst.Assign and len(binding.targets) == 1 and type(binding.targets[0].target) is cst.Name:
            return self._builds_parameterless(binding.value, 0)  # the one assignment this call sees
        scope = function if _assigned_parts(self.facts, function, name) else self.facts.structure.top
        built = _assigned_parts(self.facts, scope, name)
        return bool(built) and all(self._builds_parameterless(value, 0) for value in built)

    def _builds_parameterless(self, value: cst.BaseExpression, depth: int) -> bool:
        facts = self.facts
        if type(value) is not cst.Call or depth > 3:
            return False
        qualified = facts.imports.resolve(value.func) or ""
        module, _, leaf = qualified.rpartition(".")
        if module.startswith("torch.nn") and leaf in torch_api.CONTAINER_MODULES:
            # `nn.Sequential(STFT(...), Magnitude())`: as parameterless as what it holds
            return bool(value.args) and all(arg.keyword is None and not arg.star and self._builds_parameterless(arg.value, depth + 1) for arg in value.args)
        if module.startswith("torch.nn"):
            return leaf in torch_api.PARAMETERLESS_MODULES
        cls = _constructed_class(value, facts)
        return cls is not None and self.class_parameterless(cls, depth, value)

    def class_parameterless(self, cls: ClassInfo, depth: int = 0, built: cst.Call | None = None) -> bool:
        """A module class of the file whose ``__init__`` builds no layer of its own (only
        settings and parameterless modules such as ``nn.Dropout``). ``built``: the constructor
        call, whose arguments say what a ``self.x = x`` keeps (a function, not a module)."""
        facts = self.facts
        if not cls.is_module or depth > 3:
            return False
        if any(base not in torch_api.PLAIN_MODULE_BASES for base in cls.qualified_bases):
            return False  # `class MLP(nn.Sequential)`: the base builds the layers
        if not all(self.class_parameterless(base, depth + 1) for base in cls.local_bases):
            return False  # `class PriorNet(nn.Module)` with settings only: its subclasses may add none
        init = cls.methods.get("__init__") or (None if cls.local_bases else cls.find_method("__init__"))
        if init is None:
            return bool(cls.local_bases)  # the parameterless base's `__init__` runs
        statements = facts.index.statements_of(facts.structure.functions[init])
        frozen = _frozen_attributes(init)
        for fact in statements:
            node = fact.node
            if type(node) is cst.Expr and type(node.value) is cst.Call:
                call = node.value
                if _registers_plain_buffer(call) or _freezes(call) is not None:
                    continue  # `self.register_buffer("logits", torch.zeros(shape))`, `self.w.requires_grad_(False)`: not a parameter
                if not (type(call.func) is cst.Attribute and call.func.attr.value == "__init__"):
                    return False  # register_parameter, add_module, a helper: maybe a layer
                continue
            if type(node) not in (cst.Assign, cst.AnnAssign):
                continue
            targets = [t.target for t in node.targets] if type(node) is cst.Assign else [node.target]
            if not any(type(part) is cst.Attribute for t in targets for part in walk(t)):
                continue  # a local (`shape = (shape,)`): only what is kept on self can be a layer
            assigned = node.value
            if assigned is None or type(assigned) in (cst.Integer, cst.Float, cst.SimpleString):
                continue
            if type(assigned) is cst.Name and _plain_setting(assigned.value, init):
                continue  # `self.alpha = alpha` with `alpha=1e-5`; but `self.net = net` may be a module
            if type(assigned) is cst.Name and built is not None and self._given_no_module(built, facts.structure.functions[init], assigned.value):
                continue  # `SoftDiceLoss(apply_nonlin=softmax_helper)`: given a function, not a layer
            if type(assigned) is cst.Call and self._builds_parameterless(assigned, depth + 1):
                continue
            if type(assigned) is cst.Call and self._frozen_parameter(assigned, {dotted_name(t) for t in targets} & frozen):
                continue  # `self.window = nn.Parameter(hann_window(n), requires_grad=False)`: never trained
            return False
        return True

    def _frozen_parameter(self, call: cst.Call, frozen_later: set) -> bool:
        """``nn.Parameter(t, requires_grad=False)`` (or a parameter ``__init__`` freezes after
        building it, ``frozen_later``): it requires no grad, so a forward records nothing
        through it."""
        if self.facts.imports.resolve(call.func) not in torch_api.PARAMETER_CLASSES:
            return False
        flag = call_argument(call, 1, "requires_grad")
        return bool(frozen_later) or type(flag) is cst.Name and flag.value == "False"

    def _given_no_module(self, built: cst.Call, init: FunctionInfo, parameter: str) -> bool:
        """The constructor call passes nothing, a literal or a function of the file (not a
        module) for ``parameter`` of ``__init__``."""
        if parameter not in init.params:
            return False
        argument = _argument_for(init, built, parameter, 1)
        if argument is None:
            return True  # its default, which _plain_setting found not to be a plain setting: None
        value = self.facts.value(argument)
        return value.role is Role.FUNCTION or value.kind is Kind.NOT_TENSOR and value.role is None and type(argument) in (cst.Integer, cst.Float, cst.SimpleString, cst.Name) and self.facts.imports.resolve(argument) is not None

    def fed_no_graph(self, cls: ClassInfo) -> bool:
        """A parameterless module class whose every instance call the file shows (there is one
        at least) passes only inputs without a graph: its forward records nothing."""
        if not self.class_parameterless(cls):
            return False
        calls = [call for call in self.facts.model_calls() if self.facts.value(call.node.func).cls is cls]
        return bool(calls) and not any(self.facts.value(arg.value).is_graph for call in calls for arg in call.node.args)

    def _passed_values(self, expr: cst.BaseExpression, function: FunctionInfo, depth: int, key: object = None) -> list[Confidence]:
        """The model confidence of what each caller passes for the parameter ``expr`` stands
        for (empty when ``expr`` is not such a parameter or no caller is known). ``key``: the
        model is that key of what is passed (``self.model["generator"]`` with ``model`` a dict
        of models the caller built)."""
        facts = self.facts
        if depth > 2:
            return []
        while type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in _CHAIN_METHODS:
            expr = expr.func.value
        if key is None and type(expr) is cst.Subscript and len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Index:
            found_key = literal_key(expr.slice[0].slice.value)  # type: ignore[attr-defined]
            return self._passed_values(expr.value, function, depth, found_key) if found_key is not None else []
        name = dotted_name(expr)
        if name is None:
            return []
        if name.startswith("self.") and function.cls is not None:
            init = function.cls.find_method("__init__")
            if init is None:
                return []
            init_info = facts.structure.functions[init]
            found: list[Confidence] = []
            for assigned in _assigned_parts(facts, init_info, name):
                inner = self._passed_values(assigned, init_info, depth + 1, key)
                if not inner:
                    return []
                found += inner
            return found
        if "." in name or name not in function.params:
            return []
        if function.name == "__init__" and function.cls is not None:
            sites = [(place.node, _caller(place, facts)) for place in facts.index.calls_named(function.cls.name) if type(place.node.func) is cst.Name]
            bound = 1
        else:
            sites = self._call_sites(function)
            bound = -1
        found = []
        for call, caller in sites:
            skip = bound if bound >= 0 else (self._local_callee(call, caller) or (None, 1 if function.is_method else 0))[1]
            argument = _argument_for(function, call, name, skip)
            if argument is None:
                return []
            value = facts.value(argument)
            if key is not None:
                value = value.field(key) or UNKNOWN  # the dict's part the callee uses
            if value.role in (Role.MODEL, Role.FROZEN_MODEL) and value.confidence is not Confidence.LOW:
                found.append(value.confidence)
            else:
                inner = self._passed_values(argument, caller, depth + 1, key)
                if not inner:
                    return [Confidence.LOW]
                found += inner
        return found

    def _statement_of(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The small statement holding ``node`` (None inside a compound statement's header)."""
        parents = self._parent_map()
        current: cst.CSTNode | None = node
        while current is not None and not isinstance(current, cst.BaseSmallStatement):
            if isinstance(current, (cst.BaseCompoundStatement, cst.FunctionDef, cst.Lambda)):
                return None
            current = parents.get(current)
        return current

    def unused_forwards_into(self, function: FunctionInfo, name: str) -> list[tuple[cst.Call, FunctionInfo, frozenset[FlowNode]]]:
        """(call, its function, where its output flows) for the forwards run with gradients on
        (in functions the file shows running with them) whose output nothing differentiates and
        flows into local ``name`` of ``function``: where the graphs ``name`` holds are recorded
        for nothing."""
        return [
            (call.node, call.statement.function, reached)  # type: ignore[attr-defined]
            for call, reached in self._unused_forward_flows()
            if self.reaches_name(reached, function, name)
        ]

    def _unused_forward_flows(self) -> list[tuple[object, frozenset[FlowNode]]]:
        """(model call, the names its output flows into) for every forward run with gradients
        on whose output nothing differentiates, in a function that runs with gradients."""
        if self._unused_forwards is None:
            found = []
            for call in self.facts.model_calls():
                fact = call.statement
                if call.grad is not GradMode.ENABLED or fact is None:
                    continue
                if self.model_confidence(call.node.func, fact.function) is Confidence.LOW:
                    continue
                used, reached = self.expression_flow(call.node, fact.function)
                if used or not reached or not self.runs_with_grad(fact.function):
                    continue
                found.append((call, reached))
            self._unused_forwards = found
        return self._unused_forwards

    @staticmethod
    def reached_names(reached: Iterable[FlowNode]) -> set[tuple[FunctionInfo, str]]:
        """(function, local name) for the names among ``reached`` (comprehension targets left out)."""
        return {(node.scope, node.name) for node in reached if isinstance(node, _NameNode) and isinstance(node.scope, FunctionInfo)}

    @staticmethod
    def reaches_name(reached: Iterable[FlowNode], function: FunctionInfo, name: str) -> bool:
        return any(isinstance(node, _NameNode) and node.scope is function and node.name == name for node in reached)

    # ==== exploring =============================================================================
    def _explore(self, start: Iterable[FlowNode]) -> tuple[bool, frozenset[FlowNode]]:
        seen: set[FlowNode] = set()
        queue = deque(start)
        while queue:
            node = queue.popleft()
            if node in seen:
                continue
            seen.add(node)
            if len(seen) > _MAX_NODES:
                return True, frozenset()  # too far to follow: assume it is used
            used, successors = self._node_flow(node)
            if used:
                return True, frozenset()
            queue.extend(successors - seen)
        return False, frozenset(seen)

    def _node_flow(self, node: FlowNode) -> tuple[bool, frozenset[FlowNode]]:
        found = self._node_flows.get(node)
        if found is None:
            found = self._node_flows[node] = self._compute_node_flow(node)
        return found

    def _compute_node_flow(self, node: FlowNode) -> tuple[bool, frozenset[FlowNode]]:
        used, successors = self._compute_uncontexted_flow(node)
        if used or node.site is None:
            return used, successors
        function = node.function if isinstance(node, _ReturnNode) else self._scope_function(node.scope)
        return False, frozenset(self._within_call(successor, function, node.site) for successor in successors)

    def _within_call(self, node: FlowNode, function: FunctionInfo, site: object) -> FlowNode:
        """``node`` reached while following a value that entered ``function`` through the call
        ``site``: a node of the same function (its names, its return) keeps that call as context."""
        if node.site is not None:
            return node
        if isinstance(node, _ReturnNode):
            return replace(node, site=site) if node.function is function else node
        return replace(node, site=site) if self._scope_function(node.scope) is function else node

    def _scope_function(self, scope: object) -> FunctionInfo:
        return scope if isinstance(scope, FunctionInfo) else self._function_of(scope)  # type: ignore[arg-type]

    def _compute_uncontexted_flow(self, node: FlowNode) -> tuple[bool, frozenset[FlowNode]]:
        successors: set[FlowNode] = set()
        if isinstance(node, _ReturnNode):
            sites = self._call_sites(node.function)
            if not sites:
                return True, frozenset()  # callers this file does not show
            if node.site is not None:
                sites = [(call, caller) for call, caller in sites if call is node.site] or sites
            for call, caller in sites:
                used, more = self._expr_flow(call, caller, node.path)
                if used:
                    return True, frozenset()
                successors |= more
            return False, frozenset(successors)
        scope, name, path = node.scope, node.name, node.path
        if name in self._captured_in(scope):
            return True, frozenset()  # a closure keeps it
        if isinstance(scope, FunctionInfo):
            if scope.is_module_level and name in self._globals_read():
                return True, frozenset()  # a function reads the global
            if scope.node is not None and name in _declared_outside(scope.node):
                return True, frozenset()
        function = scope if isinstance(scope, FunctionInfo) else self._function_of(scope)
        if node.binding is not None and isinstance(scope, FunctionInfo):
            for augmented in self._augmented.get(scope, {}).get(name, ()):
                reaching = self._reaching_binding(augmented.target)  # type: ignore[arg-type]
                if reaching is None or reaching is node.binding:
                    kept = path if path and path[0] == ANY else ()
                    successors.add(_NameNode(scope, name, kept, augmented))
        for read in self._reads_in(scope).get(name, ()):
            if node.binding is not None and isinstance(scope, FunctionInfo):
                reaching = self._reaching_binding(read)
                if reaching is not None and reaching is not node.binding:
                    continue  # another binding of the name is the one this read sees
            used, more = self._expr_flow(read, function, path)
            if used:
                return True, frozenset()
            successors |= more
        return False, frozenset(successors)

    # ==== one expression, up to where its value goes ============================================
    def _expr_flow(self, expr: cst.CSTNode, function: FunctionInfo, path: Path = ()) -> tuple[bool, set[FlowNode]]:
        """Follow the value of ``expr`` up through the expressions around it, to the statement
        that binds, returns, stores or drops it. ``path``: where the followed value sits inside
        the value of ``expr`` (``()``: it is that value)."""
        parents = self._parent_map()
        successors: set[FlowNode] = set()
        current: cst.CSTNode = expr
        while True:
            parent = parents.get(current)
            if parent is None:
                return True, successors
            kind = type(parent)
            if kind is cst.Attribute:
                if parent.attr is current:
                    return True, successors
                grand = parents.get(parent)
                if type(grand) is cst.Call and grand.func is parent:
                    if path:
                        found = _container_method(grand, parent.attr.value, path)
                        if found is None:
                            return False, successors  # the call reads another part of the container
                        path = found
                        if path:
                            current = grand
                            continue
                    verdict = self._method_on_value(grand, parent.attr.value, function, successors)
                    if verdict is not None:
                        return verdict, successors
                    current = grand
                    continue
                attribute = parent.attr.value
                if attribute in torch_api.NON_TENSOR_ATTRIBUTES or attribute in torch_api.DETACHED_ATTRIBUTES:
                    return False, successors
                path = ()
                current = parent
            elif kind is cst.Arg:
                if parent.keyword is current:
                    return True, successors
                call = parents.get(parent)
                if type(call) is not cst.Call:
                    return True, successors
                verdict, path = self._argument_of(call, parent, function, successors, path)
                if verdict is not None:
                    return verdict, successors
                current = call
            elif kind is cst.Call:
                return True, successors  # the value itself is called
            elif kind in (cst.Element, cst.StarredElement, cst.DictElement, cst.StarredDictElement):
                holder = parents.get(parent)
                if holder is None or type(holder) not in (cst.List, cst.Tuple, cst.Set, cst.Dict):
                    return True, successors
                path = _element_path(holder, parent, current, path)
                current = holder
            elif kind in (cst.List, cst.Tuple, cst.Set, cst.Dict):
                path = ()
                current = parent
            elif kind is cst.Subscript:
                if parent.value is not current:
                    return False, successors
                found = _subscript_path(path, parent)
                if found is None:
                    return False, successors  # another key or position of the container
                path = found
                current = parent
            elif kind in (cst.SubscriptElement, cst.Index, cst.Slice):
                return False, successors  # an index
            elif kind is cst.BinaryOperation:
                if path and not (path[0] == ANY and type(parent.operator) is cst.Add):
                    path = ()  # `lst + [x]` keeps the elements where they are; anything else: the whole
                current = parent
            elif kind is cst.BooleanOperation or kind is cst.Await:
                current = parent
            elif kind is cst.UnaryOperation:
                if type(parent.operator) is cst.Not:
                    return False, successors
                path = ()
                current = parent
            elif kind in (cst.Comparison, cst.ComparisonTarget, cst.FormattedStringExpression, cst.FormattedString):
                return False, successors
            elif kind is cst.IfExp:
                if parent.test is current:
                    return False, successors
                current = parent
            elif kind in _COMPREHENSIONS:
                path = _push(ANY, path)  # the element: the comprehension's result holds it
                current = parent
            elif kind is cst.CompFor:
                if parent.iter is not current:
                    return True, successors
                comprehension = self._comprehension_of(parent)
                if comprehension is None:
                    return True, successors
                successors.update(_NameNode(comprehension, name, part) for name, part in _destructured(parent.target, _iterated(path)))
                return False, successors
            elif kind is cst.CompIf:
                return False, successors
            elif kind is cst.NamedExpr:
                if parent.value is not current:
                    return True, successors
                bound = self._bind(parent.target, function, path)
                if bound is None:
                    return True, successors
                successors.update(bound)
                current = parent
            elif kind is cst.Assign:
                for target in parent.targets:
                    bound = self._bind(target.target, function, path, parent)
                    if bound is None:
                        return True, successors
                    successors.update(bound)
                return False, successors
            elif kind is cst.AnnAssign or kind is cst.AugAssign:
                if parent.value is not current:
                    return True, successors
                bound = self._bind(parent.target, function, path, parent)
                if bound is None:
                    return True, successors
                successors.update(bound)
                return False, successors
            elif kind is cst.Return:
                successors.add(_ReturnNode(function, path))
                return False, successors
            elif kind is cst.Expr:
                return False, successors  # the result is dropped
            elif kind in (cst.If, cst.While, cst.Assert, cst.Raise):
                return False, successors
            elif kind is cst.For:
                if parent.iter is not current:
                    return True, successors
                bound = self._bind(parent.target, function, _iterated(path), parent)
                if bound is None:
                    return True, successors
                successors.update(bound)
                return False, successors
            else:
                # yield, with, lambda bodies, decorators, defaults, match...: not followed
                return True, successors

    def _reaching_binding(self, read: cst.Name) -> object | None:
        """The one binding of the name ``read`` reads that reaches it: the nearest statement
        before it that surely binds the name (an assignment, the ``for`` or ``with`` statement
        around it), or ``_ENTRY`` when nothing in the function binds it before; None when
        several may (a binding in a branch or a loop before it, a loop around it that binds the
        name later, ``try`` blocks)."""
        found = self._reaching.get(read, self)
        if found is self:
            found = self._reaching[read] = _reaching_binding(read, self._parent_map())
        return found

    def _method_on_value(self, call: cst.Call, method: str, function: FunctionInfo, successors: set[FlowNode]) -> bool | None:
        """``value.method(...)``: True (used), False (dead), None (the call's result carries it on)."""
        if method in torch_api.BACKWARD_METHODS:
            return True
        if method in _ENDING_METHODS:
            return False
        return None

    def _argument_of(self, call: cst.Call, arg: cst.Arg, function: FunctionInfo, successors: set[FlowNode], path: Path = ()) -> tuple[bool | None, Path]:
        """The value (at ``path`` inside the argument) is an argument of ``call``: (True, _) used,
        (False, _) dead, (None, where) the call's result carries it on, at ``where`` inside it."""
        facts = self.facts
        imports = facts.imports
        if backward_target(call, imports) is not None:
            return True, ()
        if call in self._model_call_nodes():
            return None, ()
        func = call.func
        qualified = imports.resolve(func)
        if qualified is not None:
            return self._library_call(qualified, call), ()
        if arg.star:
            return True, ()
        callee = self._local_callee(call, function)
        if callee is not None:
            info, bound = callee
            parameter = _parameter_for(info, call, arg, bound)
            if parameter is None:
                return True, ()
            if info.cls is not None and info.cls.is_module and info.name in ("forward", "__call__"):
                return None, ()
            # What the callee does with it, returning it to its call sites included, is the
            # flow of its parameter.
            # (a recursive call gets no site: its return also goes back out to the first caller)
            successors.add(_NameNode(info, parameter, path, _ENTRY, site=None if info is function else call))
            return False, ()
        if type(func) is cst.Name:
            name = func.value
            local_class = facts.structure.classes_by_name.get(name)
            if local_class is not None:
                return (None, ()) if local_class.is_module else (True, ())
            callee_value = facts.value(func)
            if callee_value.role in (Role.MODEL, Role.FROZEN_MODEL, Role.LOSS_FN):
                return None, ()
            if name in _DEAD_BUILTINS:
                return False, ()
            if name in _PASSING_BUILTINS:
                return None, _builtin_result_path(name, call, arg, path)
            return True, ()
        if type(func) is cst.Attribute:
            method = func.attr.value
            receiver = func.value
            receiver_value = facts.value(receiver)
            if receiver_value.role in (Role.MODEL, Role.FROZEN_MODEL, Role.LOSS_FN):
                if method in self._training_methods():
                    return True, ()  # layer.train(x): a method of the file that runs a backward
                return None, ()  # model.encode(x), criterion.forward(x)
            if method in _STORING_METHODS or (method.endswith("_") and not method.startswith("_")):
                stored = _stored_path(method, call, arg, path) if method in _STORING_METHODS else ()
                written = self._written_into(receiver, function, stored)
                if written is None:
                    return True, ()  # kept on an object
                successors.update(written)
                return (False, ()) if method in _STORING_METHODS else (None, ())
            if receiver_value.kind in (Kind.GRAPH, Kind.DETACHED) and receiver_value.role is None:
                return None, ()  # a tensor method: ``a.mul(value)``
            if receiver_value.kind is Kind.NOT_TENSOR and receiver_value.role is None and method in ("join", "format"):
                return False, ()
            return True, ()
        if type(func) is cst.Subscript and facts.value(func).role in (Role.MODEL, Role.FROZEN_MODEL, Role.LOSS_FN):
            return None, ()  # self.criterion["mel"](y_, y): a loss of a dict of losses carries it on
        return True, ()

    def _library_call(self, qualified: str, call: cst.Call) -> bool | None:
        if qualified in torch_api.BACKWARD_FUNCTIONS or qualified.startswith("torch.distributed"):
            return True
        if qualified in torch_api.GRAPH_SINK_FUNCTIONS or qualified.startswith(torch_api.GRAPH_SINK_MODULES):
            return False
        if qualified.startswith("torch."):
            # The value analysis does not know what a list holds (``torch.stack(parts)``): only the
            # API decides here.
            leaf = qualified.rsplit(".", 1)[-1]
            if qualified in torch_api.NO_GRAD_RESULT_FUNCTIONS or leaf in torch_api.TENSOR_FACTORIES:
                return False
            return None
        if qualified in torch_api.GRAPH_PASSING_FUNCTIONS:
            return None
        return True

    def _training_methods(self) -> frozenset[str]:
        """Names of methods of the file's classes that run a backward themselves."""
        if self._trainers is None:
            self._trainers = frozenset(
                info.name for info in self.facts.structure.functions.values() if info.is_method and info.backward_names
            )
        return self._trainers

    def _model_call_nodes(self) -> frozenset[cst.Call]:
        if self._model_calls is None:
            self._model_calls = frozenset(call.node for call in self.facts.model_calls())
        return self._model_calls

    # ---- binding --------------------------------------------------------------------------------
    def _bind(self, target: cst.BaseExpression, function: FunctionInfo, path: Path = (), binding: object = None) -> set[FlowNode] | None:
        """Where a value assigned to ``target`` goes (the followed value at ``path`` inside it):
        the reads of the local names it binds, or of the container a subscript target writes
        into; None when it is kept on an object."""
        found: set[FlowNode] = set()
        for part, where in _destructured_targets(target, path):
            kind = type(part)
            if kind is cst.Subscript:
                steps: list[Step] = []
                base: cst.BaseExpression = part
                while type(base) is cst.Subscript:
                    steps.append(_written_step(base))  # type: ignore[arg-type]
                    base = base.value  # type: ignore[attr-defined]
                stored = where
                for step in steps:  # innermost subscript first: ``c[a][b] = v`` puts v at (a, b)
                    stored = _push(step, stored)
                written = self._written_into(base, function, stored)
                if written is None:
                    return None
                found |= written
            elif kind is cst.Name:
                found.add(_NameNode(function, part.value, where, binding))  # type: ignore[attr-defined]
            else:
                return None
        return found

    def _written_into(self, container: cst.BaseExpression, function: FunctionInfo, path: Path = ()) -> set[FlowNode] | None:
        """Where a value put into ``container`` (``c[k] = v``, ``c.append(v)``) goes, at ``path``
        inside the container: the reads of the container, and when it is a parameter, of what
        each caller passed for it; None when it is an object's attribute, or a parameter of a
        function whose callers are unknown."""
        if type(container) is not cst.Name:
            return None
        name = container.value
        found: set[FlowNode] = {_NameNode(function, name, path)}
        if function.node is None or name not in function.params:
            return found
        if name in ("self", "cls"):
            return None
        sites = self._call_sites(function)
        if not sites:
            return None
        for call, caller in sites:
            resolved = self._local_callee(call, caller)
            bound = resolved[1] if resolved is not None else (1 if function.is_method else 0)
            passed = _argument_for(function, call, name, bound)
            if passed is None:
                continue  # the default: a new object every call
            if type(passed) is cst.Name:
                found.add(_NameNode(caller, passed.value, path))
            elif dotted_name(passed) is not None:
                return None  # the caller passes an attribute: kept on an object
        return found

    # ---- calls of the file's own functions ------------------------------------------------------
    def _local_callee(self, call: cst.Call, function: FunctionInfo) -> tuple[FunctionInfo, int] | None:
        """The file's function or method ``call`` runs, and how many leading parameters the call
        binds itself (``self`` of a bound method)."""
        from leaklint.analysis.calls import local_callee

        facts = self.facts
        info = local_callee(call, function, facts)
        func = call.func
        if info is not None:
            # self is bound by `obj.method(...)`, and by `obj(...)` running the class's __call__
            bound = 1 if (isinstance(func, cst.Attribute) or info.name == "__call__") and info.is_method and not _is_static(info) else 0
            return info, bound
        if type(func) is cst.Attribute:
            cls = self._class_of_receiver(func.value, function)
            if cls is not None:
                method = cls.find_method(func.attr.value)
                if method is not None:
                    found = facts.structure.functions[method]
                    return found, 0 if _is_static(found) else 1
        return None

    def _class_of_receiver(self, receiver: cst.BaseExpression, function: FunctionInfo) -> ClassInfo | None:
        """The local class of ``receiver`` (``sampler`` after ``sampler = Sampler(model)``,
        ``ddpm`` after ``ddpm = DDPM(unet).to(device)``)."""
        facts = self.facts
        value = facts.value(receiver)
        if value.role is Role.INSTANCE and isinstance(value.cls, ClassInfo):
            return value.cls
        name = dotted_name(receiver)
        if name is None:
            return None
        if name == "self":
            return function.cls
        classes = set()
        for assigned in facts.index.visible_values(function, name):
            cls = _constructed_class(assigned, facts)
            if cls is None:
                return None
            classes.add(cls)
        return classes.pop() if len(classes) == 1 else None

    def _call_sites(self, function: FunctionInfo) -> list[tuple[cst.Call, FunctionInfo]]:
        """The calls of ``function`` in the file, with the function making each (empty when a
        caller this file does not show may exist: a module's ``forward``, a framework hook)."""
        if function in self._sites:
            return self._sites[function] or []
        sites = self._compute_call_sites(function)
        self._sites[function] = sites
        return sites or []

    def _compute_call_sites(self, function: FunctionInfo) -> list[tuple[cst.Call, FunctionInfo]] | None:
        from leaklint.analysis.calls import caller_of

        facts = self.facts
        if function.node is None or function.cls is not None and function.cls.is_module and function.name in ("forward", "__call__"):
            return None
        hook = _framework_hook(function)
        if hook and (not function.is_method or function.name == "forward" or _run_by_framework(function.cls)):  # type: ignore[arg-type]
            return None  # nn.Module.__call__ runs any forward; a framework runs its hooks
        if function.node in facts._recording.escaping:
            return None  # passed around as a value: called from anywhere
        sites = []
        # an object's __call__ runs through calls of whatever names the object (`predictor(x)`)
        candidates = facts.index.ordered_calls if function.name == "__call__" else facts.index.calls_named(function.name)
        for place in candidates:
            call = place.node
            caller = caller_of(place, facts)
            resolved = self._local_callee(call, caller)  # type: ignore[arg-type]
            if resolved is not None:
                if resolved[0] is function:
                    sites.append((call, caller))
                continue
            if function.is_method and type(call.func) is cst.Attribute and facts.imports.resolve(call.func) is None:
                if not self._another_model(call.func.value, function):  # type: ignore[attr-defined]
                    sites.append((call, caller))  # ``obj.method(...)`` on an object leaklint cannot place
        if hook:
            # A step hook of a class no framework runs (a home-made trainer calls
            # `self.model.validation_step(batch)`): the calls the file shows, when it shows any.
            return sites or None
        return sites

    def _another_model(self, receiver: cst.BaseExpression, method: FunctionInfo) -> bool:
        """``receiver`` is known to be a model, and ``method`` belongs to a plain class (no bases),
        which no model is built from: ``self.model.train(mode)`` does not run ``Trainer.train``."""
        value = self.facts.value(receiver)
        if value.role not in (Role.MODEL, Role.FROZEN_MODEL) or value.confidence is Confidence.LOW:
            return False
        cls = method.cls
        return cls is not None and not cls.base_names

    # ---- indexes ----------------------------------------------------------------------------------
    def _parent_map(self) -> dict[cst.CSTNode, cst.CSTNode]:
        if self._parents is None:
            self._build()
        assert self._parents is not None
        return self._parents

    def _build(self) -> None:
        """One walk of the module: every node's parent, and the names each scope reads."""
        parents: dict[cst.CSTNode, cst.CSTNode] = {}
        structure = self.facts.structure
        module = self.facts.module
        # (node, scope key, inside an assignment target, inside a nested def/lambda/class of the scope)
        stack: list[tuple[cst.CSTNode, object, bool, bool]] = [(module, structure.top, False, False)]
        while stack:
            node, scope, in_target, nested = stack.pop()
            kind = type(node)
            if kind is cst.Name:
                if not in_target:
                    if nested:
                        self._captured.setdefault(scope, set()).add(node.value)
                    else:
                        self._reads.setdefault(scope, {}).setdefault(node.value, []).append(node)
                continue
            if kind is cst.AugAssign and not nested and type(node.target) is cst.Name:  # type: ignore[attr-defined]
                # ``loss += x`` reads the old value too: its new binding carries what the old held
                self._augmented.setdefault(scope, {}).setdefault(node.target.value, []).append(node)  # type: ignore[attr-defined]
            if kind in (cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal):
                continue
            inner_scope, inner_nested = scope, nested
            if kind is cst.FunctionDef:
                info = structure.functions.get(node)
                for child in children(node):
                    parents[child] = node
                    if child is node.body and info is not None:
                        stack.append((child, info, False, False))
                        if not nested and isinstance(scope, FunctionInfo) and not scope.is_module_level:
                            self._collect_captured(child, scope)  # a closure reads the enclosing names
                    elif child is not node.name and child is not node.params:
                        stack.append((child, scope, False, nested))
                continue
            if kind in (cst.Lambda, cst.ClassDef):
                inner_nested = True
            for child in children(node):
                parents[child] = node
                child_target = in_target or _is_target_field(node, child)
                child_scope = inner_scope
                if kind in _COMPREHENSIONS:
                    child_scope = inner_scope  # reads inside a comprehension count for the function too
                stack.append((child, child_scope, child_target, inner_nested))
        self._parents = parents

    def _collect_captured(self, body: cst.CSTNode, scope: object) -> None:
        captured = self._captured.setdefault(scope, set())
        for node in _walk_all(body):
            if type(node) is cst.Name:
                captured.add(node.value)

    def _reads_in(self, scope: object) -> dict[str, list[cst.Name]]:
        if self._parents is None:
            self._build()
        if isinstance(scope, FunctionInfo):
            return self._reads.get(scope, {})
        if scope not in self._reads:  # a comprehension: the reads of its own targets inside it
            found: dict[str, list[cst.Name]] = {}
            targets = set()
            for_in = getattr(scope, "for_in", None)
            while for_in is not None:
                targets.update(_target_names(for_in.target))
                for_in = for_in.inner_for_in
            for node in _walk_all(scope):
                if type(node) is cst.Name and node.value in targets and not self._in_target(node, scope):
                    found.setdefault(node.value, []).append(node)
            self._reads[scope] = found
        return self._reads[scope]

    def _in_target(self, node: cst.CSTNode, stop: cst.CSTNode) -> bool:
        parents = self._parent_map()
        current = node
        while current is not stop:
            parent = parents.get(current)
            if parent is None:
                return False
            if _is_target_field(parent, current):
                return True
            current = parent
        return False

    def _captured_in(self, scope: object) -> set[str]:
        if self._parents is None:
            self._build()
        return self._captured.get(scope, set())

    def _globals_read(self) -> set[str]:
        if self._global_reads is None:
            if self._parents is None:
                self._build()
            found: set[str] = set()
            for scope, reads in self._reads.items():
                if isinstance(scope, FunctionInfo) and not scope.is_module_level:
                    found.update(name for name in reads if name not in _locals_of(scope))
            self._global_reads = found
        return self._global_reads

    def _function_of(self, node: cst.CSTNode) -> FunctionInfo:
        parents = self._parent_map()
        current: cst.CSTNode | None = node
        while current is not None:
            if type(current) is cst.FunctionDef:
                return self.facts.structure.functions.get(current, self.facts.structure.top)
            current = parents.get(current)
        return self.facts.structure.top

    def _comprehension_of(self, for_in: cst.CompFor) -> cst.CSTNode | None:
        parents = self._parent_map()
        current: cst.CSTNode | None = for_in
        while current is not None and not isinstance(current, _COMPREHENSIONS):
            current = parents.get(current)
        return current


def _framework_hook(function: FunctionInfo) -> bool:
    """A method named like a step or epoch hook that a framework calls (``validation_step``,
    ``on_train_epoch_end``), or a function named like a step (``train_step``)."""
    return function.is_method and bool(torch_api.FRAMEWORK_HOOK_NAME.match(function.name)) or function.name in torch_api.STEP_METHODS


def _run_by_framework(cls: ClassInfo) -> bool:
    """The class derives from a framework's class (Lightning, Keras, a transformers Trainer...):
    the framework calls its hooks, whatever calls the file shows."""
    return cls.is_lightning or any(base.split(".", 1)[0] in torch_api.FRAMEWORK_PACKAGES for base in cls.qualified_bases)


def _plain_setting(name: str, function: cst.FunctionDef) -> bool:
    """``name`` is ``None``/``True``/``False``, or a parameter of ``function`` whose default is a
    number, a string or a boolean, or whose annotation is a plain type (``shape: tuple``): a
    setting, not a module the caller hands in (``encoder=None`` is an optional module)."""
    if name in ("None", "True", "False"):
        return True
    params = function.params
    for param in (*params.params, *params.kwonly_params, *params.posonly_params):
        if param.name.value == name:
            if param.annotation is not None and _plain_annotation(param.annotation.annotation):
                return True
            default = param.default
            return default is not None and (
                type(default) in (cst.Integer, cst.Float, cst.SimpleString, cst.UnaryOperation)
                or type(default) is cst.Name and default.value in ("True", "False")
            )
    return False


#: Annotations of settings: numbers, strings, shapes (``Tuple[int, ...]``, ``Optional[int]``).
_PLAIN_TYPES = frozenset(
    {"int", "float", "bool", "str", "tuple", "list", "dict", "None", "Tuple", "List", "Dict", "Optional", "Union", "Sequence", "Literal"}
)


def _plain_annotation(annotation: cst.BaseExpression) -> bool:
    """Only plain types, no forward reference (``Optional["Encoder"]`` may be a module)."""
    nodes = list(walk(annotation))
    names = [node.value for node in nodes if type(node) is cst.Name]
    strings = any(type(node) in (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString) for node in nodes)
    return bool(names) and not strings and all(name in _PLAIN_TYPES for name in names)


def _freezes(call: cst.Call) -> str | None:
    """``self.w.requires_grad_(False)``: the attribute it freezes (``self.w``), else None."""
    func = call.func
    if not (type(func) is cst.Attribute and func.attr.value == "requires_grad_" and call.args):
        return None
    owner = dotted_name(func.value)
    flag = call.args[0].value
    return owner if owner is not None and owner.startswith("self.") and type(flag) is cst.Name and flag.value == "False" else None


def _frozen_attributes(init: cst.FunctionDef) -> set[str]:
    """The attributes of ``self`` that ``__init__`` always freezes: ``self.w.requires_grad_(False)``
    or ``self.w.requires_grad = False`` as a statement of its body, not under an ``if`` (a
    ``learnable`` flag may keep the parameter trainable) or in a loop."""
    found: set[str] = set()
    body = init.body.body if isinstance(init.body, cst.IndentedBlock) else [init.body]
    for line in body:
        if not isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            continue
        for node in line.body:
            if type(node) is cst.Expr and type(node.value) is cst.Call:
                owner = _freezes(node.value)
                if owner is not None:
                    found.add(owner)
            elif type(node) is cst.Assign and type(node.value) is cst.Name and node.value.value == "False":
                for target in node.targets:
                    name = dotted_name(target.target) or ""
                    if name.startswith("self.") and name.endswith(".requires_grad"):
                        found.add(name[: -len(".requires_grad")])
    return found


def _registers_plain_buffer(call: cst.Call) -> bool:
    """``self.register_buffer(name, tensor)`` with a tensor that cannot require grad: no
    ``nn.Parameter``, no ``requires_grad=True`` or ``requires_grad_()`` in it."""
    func = call.func
    if not (type(func) is cst.Attribute and func.attr.value == "register_buffer" and dotted_name(func.value) == "self"):
        return False
    for node in walk(call):
        if type(node) is cst.Arg and node.keyword is not None and node.keyword.value == "requires_grad":
            if not (type(node.value) is cst.Name and node.value.value == "False"):
                return False
        if type(node) is cst.Name and node.value in ("Parameter", "requires_grad_"):
            return False
    return True


def frozen_models(facts: ModuleFacts) -> frozenset[str]:
    """Dotted names of models whose parameters the file freezes in a loop over them
    (``for p in model.parameters(): p.requires_grad = False`` or ``p.requires_grad_(False)``):
    calling them records a graph only through a graph-attached input. (``model.requires_grad_(False)``
    on the module itself is known to the value analysis.)"""
    return facts.derived(_frozen_models)


def _frozen_models(facts: ModuleFacts) -> frozenset[str]:
    found: set[str] = set()
    for loop in facts.structure.loops.values():
        node = loop.node
        if not isinstance(node, cst.For):
            continue
        target = node.target
        if type(target) is cst.Tuple and len(target.elements) == 2:
            target = target.elements[1].value  # for name, p in model.named_parameters()
        if type(target) is not cst.Name:
            continue
        iterable = node.iter
        if not (type(iterable) is cst.Call and type(iterable.func) is cst.Attribute and iterable.func.attr.value in ("parameters", "named_parameters")):
            continue
        owner = dotted_name(iterable.func.value)
        if owner is None:
            continue
        item = target.value
        for statement in facts.index.statements_in_loop(node):
            small = statement.node
            if type(small) is cst.Assign and any(dotted_name(t.target) == f"{item}.requires_grad" for t in small.targets):
                if type(small.value) is cst.Name and small.value.value == "False":
                    found.add(owner)
            elif type(small) is cst.Expr and type(small.value) is cst.Call:
                call = small.value
                if dotted_name(call.func) == f"{item}.requires_grad_" and call.args and type(call.args[0].value) is cst.Name and call.args[0].value.value == "False":
                    found.add(owner)
    return frozenset(found)


def graph_use(facts: ModuleFacts) -> GraphUse:
    """The module's :class:`GraphUse`, built once per file."""
    return facts.derived(GraphUse)


# ---- which binding a read sees -------------------------------------------------------------------
_BLOCKS = (cst.IndentedBlock, cst.SimpleStatementSuite)


def _reaching_binding(read: cst.Name, parents: dict[cst.CSTNode, cst.CSTNode]) -> object | None:
    """See :meth:`GraphUse._reaching_binding`."""
    name = read.value
    current: cst.CSTNode | None = read
    while current is not None and not isinstance(current, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
        current = parents.get(current)
    while current is not None:
        parent = parents.get(current)
        if parent is None:
            return None
        kind = type(parent)
        if kind is cst.SimpleStatementLine:
            for small in parent.body:
                if small is current:
                    break
                verdict = _binds(small, name)
                if verdict is not None:
                    return small if verdict else None
            current = parent
            continue
        if kind in _BLOCKS:
            found = _binding_before(parent.body, current, name)  # type: ignore[attr-defined]
            if found is not _NOT_HERE:
                return found
            owner = parents.get(parent)
            while owner is not None and not isinstance(owner, (cst.BaseCompoundStatement, cst.FunctionDef, cst.Module)):
                owner = parents.get(owner)
            if owner is None or type(owner) is cst.Module:
                return None
            if type(owner) is cst.FunctionDef:
                return _ENTRY
            if type(owner) is cst.For:
                in_body = owner.body is parent  # type: ignore[attr-defined]
                return owner if in_body and name in bound_names(owner.target) else None  # type: ignore[attr-defined]
            if type(owner) is cst.With:
                if any(item.asname is not None and name in bound_names(item.asname.name) for item in owner.items):  # type: ignore[attr-defined]
                    return owner
                current = owner
                continue
            if type(owner) is cst.If:
                current = _outermost_if(owner, parents)
                continue
            return None  # a loop (later statements and earlier iterations), try blocks, match
        if kind is cst.If or kind is cst.Else:
            current = parent  # an ``elif`` inside its ``if``
            continue
        return None  # a script's top level: any earlier statement (a notebook's cells run in any order)
    return None



def _top_level_binding(read: cst.Name, parents: dict[cst.CSTNode, cst.CSTNode]) -> object | None:
    """For a read in a plain statement of the module's own body (not in a loop, branch or def):
    the nearest earlier module-level statement that binds the name, in the order a script (or a
    notebook run from the top) runs them; None when an earlier compound statement may bind it."""
    name = read.value
    line: cst.CSTNode | None = read
    while line is not None and type(line) is not cst.SimpleStatementLine:
        line = parents.get(line)
    module = parents.get(line) if line is not None else None
    if type(module) is not cst.Module:
        return None
    found = _binding_before(module.body, line, name)  # type: ignore[attr-defined]
    return None if found is _NOT_HERE else found


#: What :func:`_binding_before` says when no earlier statement of the block binds the name.
_NOT_HERE = object()


def _binding_before(statements: Sequence[cst.CSTNode], current: cst.CSTNode | None, name: str) -> object | None:
    """Among the statements of a block before ``current``, nearest first: the small statement
    that surely binds ``name``; None when one may (a walrus, an import, a compound statement);
    ``_NOT_HERE`` when none does."""
    body = list(statements)
    position = next((i for i, statement in enumerate(body) if statement is current), None)
    if position is None:
        return None
    for statement in reversed(body[:position]):
        if type(statement) is cst.SimpleStatementLine:
            for small in reversed(statement.body):  # type: ignore[attr-defined]
                verdict = _binds(small, name)
                if verdict is not None:
                    return small if verdict else None
        elif _may_bind(statement, name):
            return None
    return _NOT_HERE


def _outermost_if(node: cst.If, parents: dict[cst.CSTNode, cst.CSTNode]) -> cst.CSTNode:
    """The ``if`` statement an ``elif`` belongs to."""
    current: cst.CSTNode = node
    while True:
        parent = parents.get(current)
        if type(parent) is cst.If and parent.orelse is current:  # type: ignore[attr-defined]
            current = parent
        else:
            return current


def _binds(small: cst.CSTNode, name: str) -> bool | None:
    """True: ``small`` surely binds ``name`` (an assignment to it); False: it may (a walrus, an
    import); None: it does not."""
    kind = type(small)
    if kind is cst.Assign and any(name in bound_names(target.target) for target in small.targets):  # type: ignore[attr-defined]
        return True
    if (kind is cst.AugAssign or kind is cst.AnnAssign and small.value is not None) and name in bound_names(small.target):  # type: ignore[attr-defined]
        return True
    return False if _may_bind(small, name) else None


def _may_bind(statement: cst.CSTNode, name: str) -> bool:
    """Whether anything in ``statement`` (not in nested scopes) binds ``name``."""
    from leaklint.analysis.structure import names_bound_in

    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return statement.name.value == name
    if name in names_bound_in(statement):
        return True
    for node in walk(statement, into=not_into_scopes):
        if isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                bound = alias.asname.name if alias.asname is not None else alias.name
                if (dotted_name(bound) or "").split(".", 1)[0] == name:  # type: ignore[arg-type]
                    return True
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node.name.value == name:
            return True
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            return True
    return False


# ---- paths inside containers -------------------------------------------------------------------------
def _push(step: Step, path: Path) -> Path:
    """``path`` one container deeper; a path too deep to follow is the whole value (``()``)."""
    pushed = (step, *path)
    return pushed if len(pushed) <= _MAX_PATH else ()


def _iterated(path: Path) -> Path:
    """Where the followed value sits in what iterating over its container yields: the elements
    of a list, the items of a tuple (any of them), a dict's entries (conservatively: iterating a
    dict yields its keys); ``()`` stays ``()`` (the rows of a tensor carry its graph)."""
    return path[1:] if path else ()


def _subscript_path(path: Path, subscript: cst.Subscript) -> Path | None:
    """Where the followed value sits in ``container[index]``; None when that index is surely
    another part of the container (another literal key of a dict, another position of a tuple)."""
    if not path:
        return ()
    top = path[0]
    if len(subscript.slice) != 1:
        return ()
    index = subscript.slice[0].slice
    if type(index) is cst.Slice:
        return path if top == ANY else ()
    key = literal_key(index.value)  # type: ignore[attr-defined]
    if top == ANY or key is None:
        return path[1:]
    kind, known = top
    if kind == "i" and not (type(key) is int and key >= 0):
        return path[1:]
    return path[1:] if key == known and type(key) is type(known) else None


def _container_method(call: cst.Call, method: str, path: Path) -> Path | None:
    """Where the followed value (at a non-empty ``path`` inside the receiver) sits in what
    ``receiver.method(...)`` returns: ``d.get("logp")``, ``d.items()``, ``d.values()``; None
    when the call reads another part (``d.get("tokens")``, ``d.keys()`` of a dict with literal
    keys); ``()`` for anything else (the whole value, as the flow without paths)."""
    top = path[0]
    if method in ("get", "pop") and call.args and call.args[0].keyword is None:
        key = literal_key(call.args[0].value)
        if top == ANY or key is None:
            return path[1:]
        kind, known = top
        if kind == "k":
            return path[1:] if key == known and type(key) is type(known) else None
        return ()
    if method == "items" and (top == ANY or top[0] == "k"):
        return _push(ANY, _push(("i", 1), path[1:]))
    if method == "values" and (top == ANY or top[0] == "k"):
        return _push(ANY, path[1:])
    if method == "keys" and top != ANY and top[0] == "k":
        return None
    if method == "copy":
        return path
    return ()


def _element_path(holder: cst.CSTNode, element: cst.CSTNode, child: cst.CSTNode, path: Path) -> Path:
    """Where the followed value (at ``path`` inside ``child``) sits in the literal ``holder`` that
    ``element`` is part of."""
    kind = type(element)
    if kind is cst.StarredElement:
        return _push(ANY, _iterated(path))  # ``[*xs]``: the elements of xs are its elements
    if kind is cst.StarredDictElement:
        return path if path else ()  # ``{**d}``: d's entries, under their keys
    if kind is cst.DictElement:
        if element.value is child:  # type: ignore[attr-defined]
            key = literal_key(element.key)  # type: ignore[attr-defined]
            return _push(("k", key) if key is not None else ANY, path)
        return _push(ANY, path)
    if type(holder) is cst.Tuple:
        elements = holder.elements  # type: ignore[attr-defined]
        position = next((i for i, e in enumerate(elements) if e is element), None)
        if position is not None and not any(type(e) is cst.StarredElement for e in elements[:position]):
            return _push(("i", position), path)
    return _push(ANY, path)


def _written_step(target: cst.Subscript) -> Step:
    """The step ``container[index] = value`` puts the value at."""
    if len(target.slice) == 1 and type(target.slice[0].slice) is cst.Index:
        key = literal_key(target.slice[0].slice.value)  # type: ignore[attr-defined]
        return ("k", key) if key is not None else ANY
    return ANY


def _stored_path(method: str, call: cst.Call, arg: cst.Arg, path: Path) -> Path:
    """Where ``container.method(value)`` puts the followed value (at ``path`` in ``value``)."""
    if method in ("update",):
        return path  # the entries keep their keys
    if method in ("setdefault", "__setitem__"):
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if len(positional) >= 2 and positional[1] is arg:
            key = literal_key(positional[0].value)
            return _push(("k", key) if key is not None else ANY, path)
        return _push(ANY, path)
    if method == "extend":
        return _push(ANY, _iterated(path))
    return _push(ANY, path)


#: Builtins that make a sequence of the elements of their (first) argument.
_SEQUENCE_BUILTINS = frozenset({"list", "tuple", "sorted", "reversed", "iter", "set"})


def _builtin_result_path(name: str, call: cst.Call, arg: cst.Arg, path: Path) -> Path:
    """Where the followed value (at ``path`` in the argument ``arg``) sits in what a passing
    builtin returns: ``zip(a, b)`` yields tuples whose item ``i`` is an element of its ``i``-th
    argument, ``enumerate(a)`` pairs whose item 1 is an element of ``a``; anything else: the whole."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if arg not in positional or any(a.star for a in call.args):
        return ()
    position = positional.index(arg)
    if name == "zip":
        return _push(ANY, _push(("i", position), _iterated(path)))
    if name == "enumerate" and position == 0:
        return _push(ANY, _push(("i", 1), _iterated(path)))
    if name in _SEQUENCE_BUILTINS and position == 0:
        return _push(ANY, _iterated(path))
    if name == "next" and position == 0:
        return _iterated(path)
    return ()


def _destructured(target: cst.BaseExpression, path: Path) -> list[tuple[str, Path]]:
    """(name, where the followed value sits in it) for the names ``target`` binds."""
    return [(part.value, where) for part, where in _destructured_targets(target, path) if type(part) is cst.Name]  # type: ignore[attr-defined]


def _destructured_targets(target: cst.BaseExpression, path: Path) -> list[tuple[cst.BaseExpression, Path]]:
    """(target part, where the followed value sits in what it is bound to) for an assignment of
    a value holding the followed one at ``path``: ``a, b = pair`` gives item ``n`` of a tuple to
    its ``n``-th target only; any other unpacking, one element each."""
    kind = type(target)
    if kind is cst.StarredElement:
        return _destructured_targets(target.value, _push(ANY, _iterated(path)))  # type: ignore[attr-defined]
    if kind is not cst.Tuple and kind is not cst.List:
        return [(target, path)]
    elements = target.elements  # type: ignore[attr-defined]
    starred = any(type(e.value) is cst.StarredElement or type(e) is cst.StarredElement for e in elements)
    if path and path[0] != ANY and path[0][0] == "i" and not starred and path[0][1] < len(elements):
        return _destructured_targets(elements[path[0][1]].value, path[1:])
    found: list[tuple[cst.BaseExpression, Path]] = []
    for element in elements:
        found += _destructured_targets(element.value, _iterated(path))
    return found


# ---- helpers ----------------------------------------------------------------------------------------
def _is_target_field(parent: cst.CSTNode, child: cst.CSTNode) -> bool:
    """``child`` is where ``parent`` binds or names something rather than reads it."""
    kind = type(parent)
    if kind is cst.AssignTarget:
        return True
    if kind in (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr):
        return parent.target is child  # type: ignore[attr-defined]
    if kind is cst.AsName:
        return parent.name is child  # type: ignore[attr-defined]
    if kind is cst.Attribute:
        return parent.attr is child  # type: ignore[attr-defined]
    if kind is cst.Arg:
        return parent.keyword is child  # type: ignore[attr-defined]
    if kind is cst.Param:
        return parent.name is child  # type: ignore[attr-defined]
    if kind is cst.Del:
        return True
    if kind is cst.ClassDef:
        return parent.name is child  # type: ignore[attr-defined]
    return False


def _target_names(target: cst.BaseExpression) -> list[str]:
    kind = type(target)
    if kind is cst.Name:
        return [target.value]  # type: ignore[attr-defined]
    if kind is cst.Tuple or kind is cst.List:
        return [name for element in target.elements for name in _target_names(element.value)]  # type: ignore[attr-defined]
    if kind is cst.StarredElement:
        return _target_names(target.value)  # type: ignore[attr-defined]
    return []


def _assigned_parts(facts: ModuleFacts, function: FunctionInfo, name: str) -> list[cst.BaseExpression]:
    """What ``function`` assigns to ``name``, element by element for ``a, b = x, y``."""
    return facts.derived(_AssignedParts).of(function).get(name, [])


class _AssignedParts:
    """Each function's assignments by target name, read once per function: the questions come
    once per model call, and a long script's top level has thousands of statements."""

    def __init__(self, facts: ModuleFacts) -> None:
        self._facts = facts
        self._by_function: dict[FunctionInfo, dict[str, list[cst.BaseExpression]]] = {}

    def of(self, function: FunctionInfo) -> dict[str, list[cst.BaseExpression]]:
        found = self._by_function.get(function)
        if found is None:
            found = self._by_function[function] = {}
            for fact in self._facts.index.statements_of(function):
                node = fact.node
                if type(node) is cst.Assign:
                    for target in node.targets:
                        for name, part in _parts(target.target, node.value):
                            found.setdefault(name, []).append(part)
        return found


def _parts(target: cst.BaseExpression, value: cst.BaseExpression) -> list[tuple[str, cst.BaseExpression]]:
    """(name, the value it gets) for each dotted name ``target`` binds; a name in a tuple whose
    value is not a tuple of the same length gets the whole value."""
    if type(target) in (cst.Tuple, cst.List):
        elements = target.elements  # type: ignore[attr-defined]
        values = value.elements if type(value) in (cst.Tuple, cst.List) else None  # type: ignore[attr-defined]
        if values is None or len(values) != len(elements):
            names = dict.fromkeys(name for e in elements if (name := dotted_name(e.value)) is not None)
            return [(name, value) for name in names]
        return [part for e, v in zip(elements, values) for part in _parts(e.value, v.value)]
    name = dotted_name(target)
    return [(name, value)] if name is not None else []


def _caller(place, facts: ModuleFacts) -> FunctionInfo:
    from leaklint.analysis.calls import caller_of

    return caller_of(place, facts)


def _walk_all(node: cst.CSTNode):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(children(current))


def _locals_of(function: FunctionInfo) -> set[str]:
    """Names a function binds (so its reads of them are not of the global)."""
    from leaklint.analysis.structure import names_bound_in

    names = set(function.params)
    if function.node is not None:
        names |= {name for name in names_bound_in(function.node.body) if "." not in name}
        globals_, _ = _declared(function.node)
        names -= globals_
    return names


def _declared(function: cst.FunctionDef) -> tuple[set[str], set[str]]:
    from leaklint.analysis.syntax import declared_names

    return declared_names(function)


def _declared_outside(function: cst.FunctionDef) -> set[str]:
    globals_, nonlocals = _declared(function)
    return globals_ | nonlocals


def _is_static(info: FunctionInfo) -> bool:
    return info.node is not None and is_staticmethod(info.node)


def _parameter_for(info: FunctionInfo, call: cst.Call, arg: cst.Arg, bound: int) -> str | None:
    """The parameter of ``info`` that ``arg`` of ``call`` binds (None: ``*args``/``**kwargs`` or unknown)."""
    return parameter_for(info.node, call, arg, bound) if info.node is not None else None


def _argument_for(info: FunctionInfo, call: cst.Call, parameter: str, bound: int) -> cst.BaseExpression | None:
    """The expression ``call`` passes for ``parameter`` of ``info`` (None: not passed)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == parameter:
            return arg.value
        if not arg.star and arg.keyword is None and _parameter_for(info, call, arg, bound) == parameter:
            return arg.value
    return None


_CHAIN_METHODS = frozenset(torch_api.MODULE_RETURNS_SELF)


def _constructed_class(expr: cst.BaseExpression, facts: ModuleFacts) -> ClassInfo | None:
    """The local class ``expr`` builds: ``Cls(...)``, ``Cls(...).to(device).eval()``."""
    while type(expr) is cst.Call:
        func = expr.func  # type: ignore[attr-defined]
        if type(func) is cst.Name:
            return facts.structure.classes_by_name.get(func.value)
        if type(func) is cst.Attribute and func.attr.value in _CHAIN_METHODS:
            expr = func.value
            continue
        return None
    return None
