"""The shape of a module, read once before the provenance pass: classes, functions, loops.

Everything here is syntactic (no values yet): which classes are ``nn.Module`` or Lightning
modules, which functions exist and how they are decorated and called, and for every loop which
names it re-binds each iteration and whether it runs a training or evaluation step.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping, Sequence

import libcst as cst

from leaklint.analysis import torch_api
from leaklint.analysis.names import ImportMap, bound_names, dotted_name, dotted_names_in
from leaklint.analysis.torch_api import STEP_METHODS, is_eval_function_name
from leaklint.analysis.walk import Walker, children, not_into_scopes, walk

if TYPE_CHECKING:
    from leaklint.analysis.project_classes import ProjectClass


class GradMode(enum.Enum):
    #: Gradients are recorded because nothing turned them off (the default).
    ENABLED = "enabled"
    #: Gradients are recorded because the code asked for it: ``torch.enable_grad()``,
    #: ``torch.set_grad_enabled(True)`` (blocks, statements, decorators). Recording happens as
    #: with ENABLED; rules that blame a forgotten ``no_grad`` stay quiet here.
    ENABLED_EXPLICITLY = "enabled explicitly"
    DISABLED = "disabled"
    #: ``set_grad_enabled(flag)`` with a flag we cannot evaluate: deliberate, either way.
    CONDITIONAL = "conditional"


@dataclass(eq=False)
class ClassInfo:
    node: cst.ClassDef = field(repr=False)
    name: str
    base_names: tuple[str, ...]
    is_module: bool = False
    is_lightning: bool = False
    methods: dict[str, cst.FunctionDef] = field(default_factory=dict, repr=False)
    local_bases: list[ClassInfo] = field(default_factory=list)
    #: The bases as their imports name them (``transformers.Trainer``), the local bases' included.
    qualified_bases: tuple[str, ...] = ()
    #: Some base outside the file is neither a ``torch.nn`` module class nor a Lightning module
    #: (``BaseTunerLayer``, ``PreTrainedModel``, a mixin): ``self.x`` that no method of the file
    #: assigns may be one of its methods (``self.get_base_layer()``), not a layer.
    has_unknown_bases: bool = False

    @property
    def is_autograd_function(self) -> bool:
        """A custom ``torch.autograd.Function`` (directly or through a base of the file)."""
        return any(base in torch_api.AUTOGRAD_FUNCTION_BASES for base in self.qualified_bases)

    def find_method(self, name: str) -> cst.FunctionDef | None:
        if name in self.methods:
            return self.methods[name]
        for base in self.local_bases:
            found = base.find_method(name)
            if found is not None:
                return found
        return None


@dataclass(eq=False)
class FunctionInfo:
    node: cst.FunctionDef | None = field(repr=False)  # None: the module's top-level code
    name: str
    cls: ClassInfo | None = None
    parent: FunctionInfo | None = None
    params: tuple[str, ...] = ()
    decorator_grad: GradMode | None = None
    #: Names passed to ``.backward()`` (or ``accelerator.backward(...)``) anywhere in the body.
    backward_names: set[str] = field(default_factory=set)
    #: A backward runs in the body outside any loop of its own: one call is one training step.
    steps_once: bool = False
    #: The loops written in the body (not in nested functions).
    loops: list[LoopInfo] = field(default_factory=list)

    @property
    def is_module_level(self) -> bool:
        return self.node is None

    @property
    def is_eval_named(self) -> bool:
        return self.node is not None and is_eval_function_name(self.name)

    @property
    def runs_per_step(self) -> bool:
        """A method a framework calls once per training/evaluation step (its ``self.*`` outlive it)."""
        return self.cls is not None and self.parent is None and self.name in STEP_METHODS

    @property
    def is_lightning_no_grad_hook(self) -> bool:
        return bool(self.cls and self.cls.is_lightning and self.name in torch_api.LIGHTNING_NO_GRAD_HOOKS)

    @property
    def is_method(self) -> bool:
        return self.cls is not None and self.parent is None

    @property
    def runs_one_forward(self) -> bool:
        """A module's ``forward`` (or ``__call__``): one call is one forward pass."""
        return self.is_method and self.cls.is_module and self.name in ("forward", "__call__")  # type: ignore[union-attr]

    @property
    def may_be_called_by_base(self) -> bool:
        """A method of a class that derives from a class of another package (``transformers.Trainer``,
        a mixin): that package's code may call it (the Trainer's training step calls
        ``compute_loss``), so the calls in this file are not all its calls."""
        return self.is_method and self.cls.has_unknown_bases  # type: ignore[union-attr]


@dataclass(eq=False)
class LoopInfo:
    node: cst.For | cst.While = field(repr=False)
    #: Dotted names bound afresh in the body each iteration (not ``t = t + x``): they do not carry.
    rebound: set[str] = field(default_factory=set)
    #: Of :attr:`rebound`, the names bound afresh only in a branch (``if step % 100 == 0: total
    #: = 0``, an ``except`` clause): between two resets, what the iterations add piles up.
    rebound_in_branch: set[str] = field(default_factory=set)
    has_backward: bool = False
    has_optimizer_step: bool = False
    #: One batch of a data source per iteration: the header iterates a data loader (a
    #: ``DataLoader(...)`` call here; the provenance pass adds loader values, ``next(loader_iter)``
    #: draws and records handed in whose fields the model runs on).
    iterates_data: bool = False
    contains_iteration_loop: bool = False
    contains_data_loop: bool = False
    #: Names the loop header binds each iteration (``img`` in ``for img in images``).
    item_names: frozenset[str] = frozenset()
    #: Names the body binds from ``next(...)`` (``batch = next(data_iter).cuda()``): drawn afresh
    #: from an iterator every iteration.
    drawn: set[str] = field(default_factory=set)
    #: Names the body binds from a value that reads them (``img = p_sample(img, t)``): a state
    #: the iterations step one after the other.
    chained: set[str] = field(default_factory=set)
    #: The body runs a model on a :attr:`chained` state (a sampler's or a rollout's steps), set
    #: by the provenance pass.
    steps_state: bool = False
    #: ``for i in range(0, len(texts), n)`` running a model on each chunk, outside a module's
    #: forward (set by the provenance pass): one batch of an input per iteration. What it keeps
    #: on the device grows with the input; graphs kept across it are one input's (not per step).
    walks_input_in_chunks: bool = False
    #: The body moves its item to a device (``batch.to(device)``, ``x.cuda()``), set by the
    #: provenance pass: the items come from the host, as a data source's batches do.
    moves_items_to_device: bool = False
    #: The body runs a model forward, a backward, or a local function that does, on something
    #: computed from the loop's item (set by the provenance pass): one pass per input.
    runs_model_on_items: bool = False
    #: The body runs a model forward or a backward (or a local function that does) at all.
    runs_model: bool = False
    #: The most iterations the header allows, when it says so with literals (``range(3)``,
    #: ``dataset.take(1)``, ``items[:4]``, a literal list); None when it depends on the data.
    at_most: int | None = None

    @property
    def repeats_per_input(self) -> bool:
        """Runs once per input, however the inputs are named: an iteration loop, or a loop whose
        body runs the model on each item (``for img in images: model(img)``). A loop over
        layers that registers hooks (``for m in model.modules():``) is neither: it runs once.

        Rules about work that repeats (registering hooks, opening figures, per-step helpers) ask
        this; rules about values piling up across steps ask :attr:`is_iteration_loop`, because
        a loop over chunks inside ``forward`` also runs the model per item, and summing those
        chunks is a bounded computation, not growth across steps."""
        return self.is_iteration_loop or self.runs_model_on_items

    @property
    def is_iteration_loop(self) -> bool:
        """Runs once per training/evaluation step, so per-iteration garbage adds up.

        A ``while`` loop counts only by what it does (backward, optimizer step, a nested data
        loop): ``while not done:`` over one RL episode is a structure loop like ``for t in range(T)``.
        """
        return (
            self.has_backward
            or self.has_optimizer_step
            or self.iterates_data
            or self.contains_iteration_loop
        )


@dataclass
class ModuleStructure:
    classes: dict[cst.ClassDef, ClassInfo] = field(default_factory=dict)
    functions: dict[cst.FunctionDef, FunctionInfo] = field(default_factory=dict)
    loops: dict[cst.CSTNode, LoopInfo] = field(default_factory=dict)
    module_functions: dict[str, cst.FunctionDef] = field(default_factory=dict)
    #: Functions defined inside another function, by (enclosing function, name).
    nested_functions: dict[tuple[FunctionInfo, str], cst.FunctionDef] = field(default_factory=dict)
    #: Classes by name (the first definition wins, as for functions).
    classes_by_name: dict[str, ClassInfo] = field(default_factory=dict)
    #: Dotted names on which module-only methods (``.eval()``, ``.parameters()``...) are called.
    module_evidence: set[str] = field(default_factory=set)
    #: Method names called on something other than ``self`` (callers outside the class), with
    #: those calls.
    external_method_calls: dict[str, list[cst.Call]] = field(default_factory=dict)
    #: Classes of other modules of the project that keep what their methods are given, by every
    #: qualified name an import may give them (leaklint/analysis/project_classes.py).
    project_classes: Mapping[str, ProjectClass] = field(default_factory=dict)
    top: FunctionInfo = field(default_factory=lambda: FunctionInfo(None, "<module>"))


def names_bound_in(region: cst.CSTNode) -> set[str]:
    """Every dotted name ``region`` binds: assignment targets (``t = t + x`` included), loop and
    comprehension targets, ``with`` / ``except`` / ``import ... as`` names and walrus targets;
    not counting nested functions, lambdas and classes."""
    names: set[str] = set()
    for node in walk(region, into=not_into_scopes):
        if isinstance(node, cst.AssignTarget):
            names.update(bound_names(node.target))
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.For, cst.CompFor)):
            names.update(bound_names(node.target))
        elif isinstance(node, cst.AsName):
            names.update(bound_names(node.name))
    return names


def backward_target(call: cst.Call, imports: ImportMap) -> cst.BaseExpression | None:
    """The tensor a backward call differentiates: ``loss`` in ``loss.backward()``,
    ``scaler.scale(loss).backward()``, ``accelerator.backward(loss)``, ``torch.autograd.grad(loss, ...)``."""
    func = call.func
    qualified = imports.resolve(func)
    if qualified in torch_api.BACKWARD_FUNCTIONS:
        return call.args[0].value if call.args else None
    if isinstance(func, cst.Attribute) and func.attr.value in torch_api.BACKWARD_METHODS:
        if call.args and call.args[0].keyword is None and func.attr.value == "manual_backward":
            return call.args[0].value
        base = func.value
        if func.attr.value == "backward" and call.args and call.args[0].keyword is None:
            # accelerator.backward(loss) / fabric.backward(loss): the tensor is the argument.
            receiver = dotted_name(base) or ""
            if re.search(r"(accelerator|fabric|engine|trainer|strategy|amp|deepspeed|model_engine)$", receiver, re.I):
                return call.args[0].value
        # scaler.scale(loss).backward()
        if isinstance(base, cst.Call) and isinstance(base.func, cst.Attribute) and base.func.attr.value == "scale" and base.args:
            return base.args[0].value
        return base
    return None


#: Arguments of a backward that make it differentiate only part of the graph, or a non-scalar
#: output: ``inputs=`` (only the paths to those tensors run), a ``gradient``/``grad_tensors``
#: (the target is an activation, not a loss).
_PARTIAL_BACKWARD_KEYWORDS = frozenset({"inputs", "gradient", "grad_tensors"})


def frees_whole_graph(call: cst.Call, imports: ImportMap) -> bool:
    """A backward that frees every saved tensor of its target's graph: ``loss.backward()`` (or
    ``torch.autograd.backward(loss)``, ``accelerator.backward(loss)``) on a scalar, with nothing
    that keeps the graph (a ``retain_graph``/``create_graph`` that may be true) and nothing that
    limits it to some inputs. ``torch.autograd.grad`` runs only the paths to the tensors it is
    asked about, and leaves the rest of the graph."""
    target = backward_target(call, imports)
    if target is None or imports.resolve(call.func) == "torch.autograd.grad":
        return False
    if any(arg.star for arg in call.args):
        return False
    if any(arg.keyword is None and arg.value is not target for arg in call.args):
        return False  # a gradient for a non-scalar target, or retain_graph by position
    return not any(
        arg.keyword is not None
        and (
            arg.keyword.value in _PARTIAL_BACKWARD_KEYWORDS
            or arg.keyword.value in torch_api.GRAPH_RETAINING_KEYWORDS
            and not (isinstance(arg.value, cst.Name) and arg.value.value in ("False", "None"))
        )
        for arg in call.args
    )


def backpropagated_names(target: cst.BaseExpression) -> set[str]:
    """The names whose values a backward differentiates through: ``loss`` in ``(loss /
    accum).backward()`` and in ``loss.mean().backward()``, and the callee of a call
    (``compute_td_loss`` in ``compute_td_loss(states, rewards).backward()``), but not the call's
    arguments: rewards, targets and states go into a loss without being the graph it holds."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, cst.Call):
        return backpropagated_names(target.func)
    if isinstance(target, cst.Attribute):
        name = dotted_name(target)
        return backpropagated_names(target.value) | ({name} if name is not None else set())
    if isinstance(target, cst.Subscript):
        return backpropagated_names(target.value)
    return {name for child in children(target) if isinstance(child, cst.BaseExpression) for name in backpropagated_names(child)}


def backward_calls(node: cst.CSTNode, imports: ImportMap) -> list[cst.Call]:
    """Backward calls under ``node`` in source order (``loss.backward()``, ``autograd.grad(...)``,
    ``scaler.scale(loss).backward()``...), not counting nested functions."""
    return [
        call
        for call in walk(node, into=not_into_scopes)
        if isinstance(call, cst.Call) and backward_target(call, imports) is not None
    ]


def _decorator_grad(node: cst.FunctionDef, imports: ImportMap, project_no_grad: frozenset[str]) -> GradMode | None:
    """The gradient mode a decorator sets for the whole body: ``@torch.no_grad()``,
    ``@torch.inference_mode()``, ``@torch.enable_grad()``, ``@torch.set_grad_enabled(False)``
    (torch's grad-mode context managers all work as decorators), or a decorator of the project
    that applies one of them (``project_no_grad``, see :mod:`leaklint.project`). The innermost
    one wins."""
    for decorator in reversed(node.decorators):
        expr = decorator.decorator
        if isinstance(expr, cst.Call):
            qualified = imports.resolve(expr.func)
            if qualified in torch_api.INFERENCE_MODE and _first_arg_is_false(expr):
                continue
            if qualified in torch_api.SET_GRAD_ENABLED and expr.args:
                return literal_grad_mode(expr.args[0].value)
        else:
            qualified = imports.resolve(expr)
        if qualified in torch_api.NO_GRAD_CONTEXTS or (qualified is not None and qualified in project_no_grad):
            return GradMode.DISABLED
        if qualified in torch_api.ENABLE_GRAD_CONTEXTS:
            return GradMode.ENABLED_EXPLICITLY
    return None


def literal_grad_mode(flag: cst.BaseExpression) -> GradMode:
    """The mode ``set_grad_enabled(flag)`` sets: a ``True``/``False`` literal picks one, anything
    else is a deliberate runtime choice (CONDITIONAL)."""
    if isinstance(flag, cst.Name) and flag.value == "True":
        return GradMode.ENABLED_EXPLICITLY
    if isinstance(flag, cst.Name) and flag.value == "False":
        return GradMode.DISABLED
    return GradMode.CONDITIONAL


def _first_arg_is_false(call: cst.Call) -> bool:
    return bool(call.args) and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == "False"


@dataclass
class _Scope:
    function: FunctionInfo | None
    cls: ClassInfo | None
    loops: list[LoopInfo] = field(default_factory=list)
    #: For each loop of ``loops``: how many branches (``if`` bodies, ``except`` clauses) of this
    #: scope were open when it began.
    branch_depths: list[int] = field(default_factory=list)
    #: Branches open now.
    branches: int = 0


class StructureScanner(Walker):
    """One pass over the module that fills a :class:`ModuleStructure`."""

    def __init__(self, imports: ImportMap, project_no_grad: frozenset[str] = frozenset()) -> None:
        self.imports = imports
        self.project_no_grad = project_no_grad
        self.structure = ModuleStructure()
        self._scopes: list[_Scope] = [_Scope(self.structure.top, None)]
        #: The statement lists being walked, innermost last (a loop's own block is the last).
        self._blocks: list[Sequence[cst.BaseStatement]] = []

    @property
    def _function(self) -> FunctionInfo:
        return next(s.function for s in reversed(self._scopes) if s.function is not None)

    @property
    def _loops(self) -> list[LoopInfo]:
        """Loops of the innermost scope: an outer function's loop does not run a nested def's body."""
        return self._scopes[-1].loops

    # --- classes and functions ----------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        base_nodes = [(arg.value, dotted_name(arg.value)) for arg in node.bases if arg.keyword is None]
        bases = tuple(name for _, name in base_nodes if name)
        info = ClassInfo(node, node.name.value, bases)
        for base_node, base in base_nodes:
            if not base:
                continue
            local = self.structure.classes_by_name.get(base)
            if local is not None:
                info.local_bases.append(local)
                info.is_module |= local.is_module
                info.is_lightning |= local.is_lightning
                info.has_unknown_bases |= local.has_unknown_bases
            qualified = self.imports.resolve(base_node) or ""
            if local is None:
                info.has_unknown_bases |= not torch_api.has_known_members(qualified or base)
            info.is_module |= torch_api.is_module_base(qualified)
            info.is_lightning |= qualified in torch_api.LIGHTNING_MODULES
            if qualified:
                info.qualified_bases += (qualified,)
            if local is not None:
                info.qualified_bases += local.qualified_bases
        self.structure.classes[node] = info
        self.structure.classes_by_name.setdefault(info.name, info)
        self._scopes.append(_Scope(None, info))

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._scopes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        scope = self._scopes[-1]
        in_class_body = scope.function is None and scope.cls is not None
        enclosing = self._function
        params = tuple(
            p.name.value
            for p in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params)
        )
        info = FunctionInfo(
            node,
            node.name.value,
            cls=scope.cls if in_class_body else enclosing.cls,
            parent=None if (in_class_body or enclosing.is_module_level) else enclosing,
            params=params,
            decorator_grad=_decorator_grad(node, self.imports, self.project_no_grad),
        )
        if in_class_body:
            scope.cls.methods.setdefault(node.name.value, node)  # type: ignore[union-attr]
        elif enclosing.is_module_level:
            self.structure.module_functions.setdefault(node.name.value, node)
        else:
            self.structure.nested_functions.setdefault((enclosing, node.name.value), node)
        self.structure.functions[node] = info
        self._scopes.append(_Scope(info, info.cls))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scopes.pop()

    # --- loops --------------------------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self._blocks.append(node.body)

    def leave_Module(self, original_node: cst.Module) -> None:
        self._blocks.pop()

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.append(node.body)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self._blocks.pop()

    def visit_For(self, node: cst.For) -> None:
        bounds = [literal_iterations(node.iter), counter_bound(node, self._blocks[-1] if self._blocks else ())]
        known = [bound for bound in bounds if bound is not None]
        loop = LoopInfo(
            node,
            iterates_data=iterates_data(node.iter, self.imports),
            item_names=frozenset(bound_names(node.target)),
            at_most=min(known) if known else None,
        )
        loop.rebound.update(bound_names(node.target))
        self._enter_loop(loop)

    def leave_For(self, original_node: cst.For) -> None:
        self._leave_loop()

    def visit_While(self, node: cst.While) -> None:
        self._enter_loop(LoopInfo(node, at_most=counter_bound(node, self._blocks[-1] if self._blocks else ())))

    def leave_While(self, original_node: cst.While) -> None:
        self._leave_loop()

    def _enter_loop(self, loop: LoopInfo) -> None:
        self.structure.loops[loop.node] = loop
        self._function.loops.append(loop)
        self._loops.append(loop)
        self._scopes[-1].branch_depths.append(self._scopes[-1].branches)

    def _leave_loop(self) -> None:
        loop = self._loops.pop()
        self._scopes[-1].branch_depths.pop()
        if self._loops:
            outer = self._loops[-1]
            # bound on every iteration of the inner loop: afresh for the outer one too, unless
            # the inner loop itself sits in a branch of the outer one
            in_branch = loop.rebound_in_branch | (loop.rebound if self._scopes[-1].branches > self._scopes[-1].branch_depths[-1] else set())
            outer.rebound_in_branch -= loop.rebound - in_branch
            outer.rebound_in_branch |= in_branch - (outer.rebound - outer.rebound_in_branch)
            outer.rebound |= loop.rebound
            outer.has_backward |= loop.has_backward
            outer.has_optimizer_step |= loop.has_optimizer_step
            outer.contains_iteration_loop |= loop.is_iteration_loop
            outer.contains_data_loop |= loop.iterates_data or loop.contains_data_loop

    def visit_Assign(self, node: cst.Assign) -> None:
        if not self._loops:
            return  # only an enclosing loop records re-bindings (reading the value is the cost)
        # A name that also feeds the right-hand side carries over (`t = t + x`,
        # `out, hidden = model(x, hidden)`): it is not bound afresh each iteration.
        read = dotted_names_in(node.value)
        drawn = _draws_next(node.value)
        loop = self._loops[-1]
        for target in node.targets:
            for name in bound_names(target.target):
                if drawn:
                    loop.drawn.add(name)
                if name not in read:
                    self._rebind(name)
                else:
                    loop.chained.add(name)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            for name in bound_names(node.target):
                self._rebind(name)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            for name in bound_names(node.asname.name):
                self._rebind(name)

    def _rebind(self, name: str) -> None:
        if not self._loops:
            return
        scope = self._scopes[-1]
        loop = self._loops[-1]
        # Outer loops learn of it when the inner ones end (_leave_loop).
        if scope.branches > scope.branch_depths[-1]:
            if name not in loop.rebound:
                loop.rebound_in_branch.add(name)
        else:
            loop.rebound_in_branch.discard(name)
        loop.rebound.add(name)

    def visit_If(self, node: cst.If) -> None:
        self._scopes[-1].branches += 1

    def leave_If(self, original_node: cst.If) -> None:
        self._scopes[-1].branches -= 1

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self._scopes[-1].branches += 1

    def leave_ExceptHandler(self, original_node: cst.ExceptHandler) -> None:
        self._scopes[-1].branches -= 1

    # --- calls --------------------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        target = backward_target(node, self.imports)
        if target is not None:
            for loop in self._loops:
                loop.has_backward = True
            self._function.backward_names.update(backpropagated_names(target))
            if not self._loops:
                self._function.steps_once = True
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        receiver = dotted_name(func.value)
        method = func.attr.value
        if method in torch_api.MODULE_EVIDENCE_METHODS and receiver and not _is_optimizer_like(receiver):
            self.structure.module_evidence.add(receiver)
        if (method == "step" and receiver and torch_api.OPTIMIZER_NAME.search(receiver.rsplit(".", 1)[-1])) or method in torch_api.TRAINING_STEP_METHODS:
            # `model.train_on_batch(x, y)`, `optimizer.apply_gradients(...)`: a Keras/TF step
            for loop in self._loops:
                loop.has_optimizer_step = True
        if receiver != "self":
            self.structure.external_method_calls.setdefault(method, []).append(node)


def _is_optimizer_like(receiver: str) -> bool:
    leaf = receiver.rsplit(".", 1)[-1]
    return bool(torch_api.OPTIMIZER_NAME.search(leaf)) and not torch_api.MODEL_NAME.match(leaf)


#: Calls whose iteration counts: ``range(n)``, ``trange(n)``, ``itertools.count()``.
_COUNTERS = frozenset({"range", "trange", "tqdm.trange", "tqdm.auto.trange", "itertools.count", "count"})


def iterates_data(iterable: cst.BaseExpression, imports: ImportMap) -> bool:
    """``for x, y in DataLoader(ds, ...)`` / ``enumerate(tqdm(NeighborLoader(...)))`` (also the
    ``for ... in ...`` of a comprehension): the header itself makes a data loader. A name bound
    to one is the provenance pass's to see (its value has the loader role). Decided by what is
    iterated, never by names: ``for batch in batches`` may walk the parts of one tensor."""
    walked = inner_iterable(iterable)
    return isinstance(walked, cst.Call) and torch_api.is_data_loader_class(imports.resolve(walked.func))


def _draws_next(value: cst.BaseExpression) -> bool:
    """``next(it)``, also moved or cast: ``next(it).cuda().float()``."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        value = value.func.value
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "next"


def walked_items(iterable: cst.BaseExpression, target: cst.BaseExpression, imports: ImportMap) -> tuple[cst.BaseExpression, cst.BaseExpression | None]:
    """What ``for i, (x, y) in enumerate(tqdm(loader))`` walks (``loader``) and the target its
    items are bound to (``(x, y)``; None when ``enumerate``'s pair is not unpacked). Not through
    ``zip``: zipped sequences may pair inputs with layers (``zip(images, projection_layers)``)."""
    item: cst.BaseExpression | None = target
    while type(iterable) is cst.Call and iterable.args:
        called = imports.resolve(iterable.func) or dotted_name(iterable.func)  # type: ignore[attr-defined]
        if called == "enumerate":
            pair = isinstance(item, (cst.Tuple, cst.List)) and len(item.elements) == 2
            item = item.elements[1].value if pair else None  # type: ignore[union-attr]
        elif called not in torch_api.PROGRESS_BARS and called != "tqdm":
            break
        iterable = iterable.args[0].value  # type: ignore[attr-defined]
    return iterable, item


def walks_records_of_parameter(iterable: cst.BaseExpression, target: cst.BaseExpression, function: FunctionInfo, imports: ImportMap) -> bool:
    """``for inputs, labels in loader`` (or its comprehension) where ``loader`` is a parameter
    of ``function``: each item handed in is unpacked into several fields, as batches of a data
    source are."""
    walked, item = walked_items(iterable, target, imports)
    records = isinstance(item, (cst.Tuple, cst.List)) and len(item.elements) >= 2
    return records and type(walked) is cst.Name and walked.value in function.params  # type: ignore[attr-defined]


def is_strided_range(iterable: cst.BaseExpression) -> bool:
    """``range(0, len(texts), batch_size)`` / ``range(0, n, 256)``: a counter that strides over a
    collection in chunks (not ``range(n - 1, -1, -1)`` nor a step of 1)."""
    walked = inner_iterable(iterable)
    if not (isinstance(walked, cst.Call) and isinstance(walked.func, cst.Name) and walked.func.value == "range"):
        return False
    if len(walked.args) != 3 or any(arg.keyword is not None or arg.star for arg in walked.args):
        return False
    step = walked.args[2].value
    if isinstance(step, cst.UnaryOperation):
        return False  # counting down
    return not (isinstance(step, cst.Integer) and int(step.evaluated_value) <= 1)


def is_counter_loop(node: cst.CSTNode, imports: ImportMap | None = None) -> bool:
    """A ``while`` loop, or a ``for`` over a counter (``range(epochs)``, ``tqdm(range(n))``,
    ``itertools.count()``): its iterations are numbered, not items of a collection."""
    if isinstance(node, cst.While):
        return True
    if not isinstance(node, cst.For):
        return False
    walked = inner_iterable(node.iter)
    if isinstance(walked, cst.Call) and isinstance(walked.func, (cst.Name, cst.Attribute)):
        name = (imports.resolve(walked.func) if imports is not None else None) or dotted_name(walked.func)
        return name in _COUNTERS
    return False


class IterationReader:
    """How :func:`literal_iterations` reads what is not a literal. This one knows literals only
    (the structure scan has no values yet); :mod:`leaklint.analysis.iterations` reads names,
    parameters and library calls through the same grammar."""

    def integer(self, expr: cst.BaseExpression) -> int | None:
        """The largest value an integer expression can have (here: an integer literal's)."""
        return int_literal(expr)

    def other(self, iterable: cst.BaseExpression) -> int | None:
        """How many items an iterable the literal grammar does not know yields at most."""
        return None


_LITERALS = IterationReader()
#: Wrappers that yield as many items as their first argument.
_SAME_LENGTH = frozenset({"enumerate", "tqdm", "reversed", "sorted", "list", "tuple", "iter"})


def inner_iterable(iterable: cst.BaseExpression) -> cst.BaseExpression:
    """What ``enumerate(x)``, ``tqdm(x)``, ``list(x)``... iterate: ``x``, as many items."""
    while isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value in _SAME_LENGTH and iterable.args:
        iterable = iterable.args[0].value
    return iterable


def literal_iterations(iterable: cst.BaseExpression, reader: IterationReader = _LITERALS) -> int | None:
    """How many items ``iterable`` yields at most, when literals say so: ``range(3)``,
    ``range(1, 4)``, ``dataset.take(1)`` (tf.data), ``items[:4]``, ``[a, b]``, and ``enumerate`` /
    ``zip`` / ``tqdm`` around such iterables; None otherwise. ``reader`` reads the integers and
    the iterables that are not literals."""
    if isinstance(iterable, (cst.List, cst.Tuple, cst.Set)):
        if any(isinstance(element, cst.StarredElement) for element in iterable.elements):
            return None
        return len(iterable.elements)
    if isinstance(iterable, cst.Subscript) and len(iterable.slice) == 1:
        index = iterable.slice[0].slice
        if isinstance(index, cst.Slice) and index.lower is None and index.step is None and index.upper is not None:
            return reader.integer(index.upper)
        return None
    if not isinstance(iterable, cst.Call):
        return reader.other(iterable)
    arguments = [arg.value for arg in iterable.args if arg.keyword is None and not arg.star]
    if isinstance(iterable.func, cst.Name):
        name = iterable.func.value
        if name == "range" and arguments:
            if len(arguments) > 2:
                return None
            stop = reader.integer(arguments[-1])
            start = int_literal(arguments[0]) if len(arguments) == 2 else 0
            return max(0, stop - start) if stop is not None and start is not None else None
        if name in _SAME_LENGTH and arguments:
            return literal_iterations(arguments[0], reader)
        if name == "zip" and arguments:
            counts = [literal_iterations(argument, reader) for argument in arguments]
            known = [count for count in counts if count is not None]
            return min(known) if known else None
    if isinstance(iterable.func, cst.Attribute) and iterable.func.attr.value == "take" and len(arguments) == 1:
        return reader.integer(arguments[0])
    return reader.other(iterable)


#: How many iterations :func:`counter_bound` simulates before giving up: bounds above it are
#: "many" for every rule that asks.
_COUNTER_LIMIT = 1000


def counter_bound(loop: cst.For | cst.While, block: Sequence[cst.BaseStatement]) -> int | None:
    """How many iterations a counter allows ``loop``, when literals say so: a name set to an
    integer literal before the loop (in ``block``, the statements around it), increased by a
    literal on every iteration, and a ``break`` (or the ``while`` test) that ends the loop once it
    reaches a literal bound::

        i = 0
        for batch in datagen.flow(x, batch_size=1):   # endless generator, 4 iterations
            ...
            i += 1
            if i % 4 == 0:
                break

    None when the loop can skip the increment (a ``continue``), rebinds the counter, or the
    bound is not reached within :data:`_COUNTER_LIMIT` iterations."""
    body = loop.body.body if isinstance(loop.body, cst.IndentedBlock) else ()
    if isinstance(loop, cst.While):
        exits = [(0, loop.test, True)]  # checked before each iteration: ends it when false
    else:
        exits = []
    increments: dict[str, tuple[int, int]] = {}  # counter -> (position in the body, step)
    for position, statement in enumerate(body, start=1):
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if (
                    isinstance(small, cst.AugAssign)
                    and isinstance(small.operator, cst.AddAssign)
                    and isinstance(small.target, cst.Name)
                    and isinstance(small.value, cst.Integer)
                    and int(small.value.evaluated_value) > 0
                ):
                    increments.setdefault(small.target.value, (position, int(small.value.evaluated_value)))
        elif isinstance(statement, cst.If) and statement.orelse is None and _ends_with_break(statement.body):
            exits.append((position, statement.test, False))
    if not increments or not exits or _skips_or_rebinds(body, increments):
        return None
    best: int | None = None
    for at, test, while_test in exits:
        names = {node.value for node in walk(test) if isinstance(node, cst.Name)}
        if len(names) != 1 or not names <= increments.keys():
            continue
        counter = names.pop()
        start = _initial_value(block, loop, counter)
        if start is None:
            continue
        position, step = increments[counter]
        for iteration in range(1, _COUNTER_LIMIT + 1):
            done = step * (iteration - 1) + (step if position < at else 0)
            value = _evaluate(test, counter, start + done)
            if value is None:
                break
            if while_test and not value:
                bound = iteration - 1
            elif not while_test and value:
                bound = iteration
            else:
                continue
            best = bound if best is None else min(best, bound)
            break
    return best


def _ends_with_break(block: cst.BaseSuite) -> bool:
    statements = block.body if isinstance(block, cst.IndentedBlock) else ()
    last = statements[-1] if statements else None
    return isinstance(last, cst.SimpleStatementLine) and any(isinstance(s, cst.Break) for s in last.body)


def _skips_or_rebinds(body: Sequence[cst.BaseStatement], increments: dict[str, tuple[int, int]]) -> bool:
    """A ``continue`` of this loop (it may skip the increment), or another binding of a counter."""
    seen: dict[str, int] = {}
    stack: list[tuple[cst.CSTNode, bool]] = [(statement, False) for statement in body]
    while stack:
        node, nested = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue  # a nested def's names are its own
        if isinstance(node, cst.Continue) and not nested:
            return True  # (a nested loop's continue is its own)
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.WithItem)):
            if isinstance(node, cst.Assign):
                targets = [t.target for t in node.targets]
            elif isinstance(node, cst.WithItem):
                targets = [node.asname.name] if node.asname is not None else []
            else:
                targets = [node.target]
            for target in targets:
                for name in bound_names(target):
                    if name in increments:
                        seen[name] = seen.get(name, 0) + 1
        inner = nested or isinstance(node, (cst.For, cst.While))
        stack.extend((child, inner) for child in children(node))
    return any(count > 1 for count in seen.values())


def _initial_value(block: Sequence[cst.BaseStatement], loop: cst.CSTNode, counter: str) -> int | None:
    """The integer literal ``counter`` is set to last before ``loop`` in ``block``."""
    value: int | None = None
    for statement in block:
        if statement is loop:
            return value
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and any(counter in bound_names(t.target) for t in small.targets):
                    single = len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
                    value = int(small.value.evaluated_value) if single and isinstance(small.value, cst.Integer) else None
                elif isinstance(small, (cst.AugAssign, cst.AnnAssign)) and counter in bound_names(small.target):
                    value = None
        elif counter in names_bound_in(statement):
            value = None  # bound in a branch or a loop: unknown
    return None


_COMPARE = {
    cst.Equal: lambda a, b: a == b,
    cst.NotEqual: lambda a, b: a != b,
    cst.LessThan: lambda a, b: a < b,
    cst.LessThanEqual: lambda a, b: a <= b,
    cst.GreaterThan: lambda a, b: a > b,
    cst.GreaterThanEqual: lambda a, b: a >= b,
}
_ARITHMETIC = {
    cst.Add: lambda a, b: a + b,
    cst.Subtract: lambda a, b: a - b,
    cst.Multiply: lambda a, b: a * b,
    cst.Modulo: lambda a, b: a % b if b else None,
    cst.FloorDivide: lambda a, b: a // b if b else None,
}


def _evaluate(expr: cst.BaseExpression, counter: str, value: int) -> int | bool | None:
    """``expr`` (comparisons and arithmetic of the counter and integer literals) for one value."""
    if isinstance(expr, cst.Name):
        return value if expr.value == counter else None
    if isinstance(expr, cst.Integer):
        return int(expr.evaluated_value)
    if isinstance(expr, cst.BinaryOperation):
        operation = _ARITHMETIC.get(type(expr.operator))
        left, right = _evaluate(expr.left, counter, value), _evaluate(expr.right, counter, value)
        return operation(left, right) if operation and left is not None and right is not None else None
    if isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1:
        compare = _COMPARE.get(type(expr.comparisons[0].operator))
        left, right = _evaluate(expr.left, counter, value), _evaluate(expr.comparisons[0].comparator, counter, value)
        return compare(left, right) if compare and left is not None and right is not None else None
    return None


def int_literal(node: cst.BaseExpression | None) -> int | None:
    """An integer literal's value (None for anything else)."""
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    return None


def scan_structure(module: cst.Module, imports: ImportMap, project_no_grad: frozenset[str] = frozenset()) -> ModuleStructure:
    scanner = StructureScanner(imports, project_no_grad)
    scanner.run(module)
    return scanner.structure


def scan_imports_and_structure(module: cst.Module, project_no_grad: frozenset[str] = frozenset()) -> tuple[ImportMap, ModuleStructure]:
    """The import map and the structure of ``module`` from a single walk of it: what
    ``scan_structure(module, ImportMap.from_module(module))`` gives, one traversal cheaper (the
    structure handlers are recorded during the import walk, and run once the map is settled).
    ``project_no_grad``: grad-disabling decorators defined elsewhere in the project."""
    imports = ImportMap()
    scanner = StructureScanner(imports, project_no_grad)
    imports.collect(module, then=scanner)
    return imports, scanner.structure
