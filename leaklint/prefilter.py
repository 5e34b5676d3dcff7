"""The gate before libcst: decide from Python's own ``ast`` whether any enabled rule could report
something in a file, and skip libcst (the parse and the analysis, most of a run) when none can.

Two questions, cheapest first:

1. **words** — does the file mention a word one of the rule's findings needs
   (:attr:`~leaklint.rule.Rule.requires_any`, a case-insensitive substring match);
2. **shape** — does its syntax hold what the rule's findings are made of
   (:meth:`~leaklint.rule.Rule.may_report`, asked of a :class:`SyntaxShape` built in one pass over
   the ``ast`` tree that the syntax check has already built).

A shape over-approximates what the analysis looks for: it knows no values and no import aliases,
and it matches calls by their last name, so "no" means no rule can fire and "yes" only means the
file is worth the full analysis. A "no" must never hide a finding: the test-suite compares gated
and ungated lints finding by finding on every rule example, every fixture and a sample of the
standard library, and ``bench/gate_check.py`` does the same on the benchmark corpora.

The same pass measures the depth of the tree, which libcst needs bounded: only files that need the
analysis are refused for it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from itertools import repeat
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from leaklint.analysis.torch_api import (
    DATA_SOURCE_NAME,
    FRAMEWORK_HOOK_NAME,
    FUNCTIONAL_INPLACE,
    INPLACE_FUNCTIONS,
    ITERATION_COUNTER_NAME,
    MODULES_WITH_INPLACE,
    PER_STEP_HOOK,
    STEP_FUNCTION_NAMES,
    STEP_METHODS,
    is_eval_function_name,
    is_graph_evidence_identifier,
)
from leaklint.code_cache import compiled
from leaklint.findings import Confidence

if TYPE_CHECKING:
    from leaklint.rule import Rule

#: Calls that differentiate (``loss.backward()``, ``accelerator.backward(loss)``, ``autograd.grad``)
#: or step an optimizer: a loop holding one runs a training step per iteration.
_STEP_CALLS = frozenset({"backward", "manual_backward", "grad", "step"})
_BACKWARD_CALLS = frozenset({"backward", "manual_backward", "grad"})
#: Container methods that add what they are given (LL102's stores).
_COLLECTING_METHODS = frozenset({"append", "appendleft", "add", "extend", "insert", "put"})
#: Other methods that write into their receiver.
_WRITING_METHODS = frozenset({"update", "setdefault", "__setitem__", "pop", "clear"})
_OWNERS = frozenset({"self", "cls"})
#: Nodes with nothing below them that the pass reads (constants, contexts, operators).
_LEAVES = frozenset(
    {ast.Constant, ast.Load, ast.Store, ast.Del, ast.Pass, ast.Break, ast.Continue}
    | {cls for base in (ast.operator, ast.unaryop, ast.cmpop, ast.boolop) for cls in base.__subclasses__()}
)
_INPLACE_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div)
#: Last names of the functions and methods LL401 rewrites (``torch.relu``, ``F.relu``, ``x.clamp``).
_INPLACE_CALL_NAMES = INPLACE_FUNCTIONS | FUNCTIONAL_INPLACE
#: Methods that put a model in (or out of) evaluation mode, or run it (LL201).
_MODEL_MODE_OR_RUN = frozenset({"eval", "train", "forward", "module"})
#: What an ``except`` clause catches when it may catch running out of memory (LL107): ``*`` is a
#: bare ``except:``; the rest are last names of classes (``torch.cuda.OutOfMemoryError``).
_MAY_CATCH_OOM = frozenset({"*", "OutOfMemoryError", "MemoryError", "RuntimeError", "Exception", "BaseException"})
_GRAD_SWITCHES = re.compile(r"no_grad|inference_mode|set_grad_enabled|grad_mode|validation_step|test_step|predict_step")


@dataclass(frozen=True)
class SyntaxShape:
    """What a file's syntax holds, for the gate. Every field errs towards True."""

    #: The source, lower-cased, for word checks.
    text: str
    #: Every identifier: names, attribute names, imported names (``collect`` for ``gc.collect()``
    #: and for ``from gc import collect as c``), keyword-argument names.
    identifiers: frozenset[str]
    #: A loop (or comprehension) that may run once per training or evaluation step: its header
    #: names a data source or a step counter, its body differentiates or steps an optimizer, or
    #: the file builds a ``DataLoader`` (any loop may iterate one).
    iteration_loop: bool
    #: A loop or comprehension of any kind.
    has_loop: bool
    #: A function that may run once per step (named like a step or a framework hook, running a
    #: backward, or called from one) writes to ``self``/``cls``, a global, or a closure cell.
    per_step_state_store: bool
    #: A function other than ``__init__`` adds to a container kept on ``self``/``cls``.
    self_container_store: bool
    #: A loop inside a function adds to a container the function does not own.
    loop_outer_store: bool
    #: A method keeps an argument on ``self`` (``meter.update(val)``), and some call of a method of
    #: that name runs per step or in a loop on an object that outlives the call.
    argument_keeping_call: bool
    #: The file uses something that makes values graph-attached above low confidence: a backward
    #: call, a loss, an ``nn.Module`` or model library, a module-only method
    #: (:func:`~leaklint.analysis.torch_api.is_graph_evidence_identifier`).
    graph_evidence: bool
    #: A function is named like evaluation code, or a function (or the top level) calls
    #: ``m.eval()`` / ``m.train(False)`` and also runs ``m`` (LL201 only reports a model run after
    #: its own ``.eval()`` in the same function, or in an evaluation function).
    eval_context: bool
    #: An ``except`` clause that may catch an out-of-memory error calls something (in its body or
    #: in a block nested there): a bare ``except:``, a catch-all (``Exception``, ``RuntimeError``,
    #: ``BaseException``), an out-of-memory class, or a name an ``import ... as`` may have renamed.
    oom_handler_call: bool
    #: ``x = x * s`` / ``x = f(x)`` style re-assignments, or activation modules built where
    #: gradients may be off (LL401).
    inplace_candidate: bool

    def mentions(self, *words: str) -> bool:
        """Any of ``words`` occurs in the source (case-insensitive substring)."""
        return any(word.lower() in self.text for word in words)

    def uses(self, *names: str) -> bool:
        """Any of ``names`` is an identifier of the file (exact, case-sensitive)."""
        return not self.identifiers.isdisjoint(names)


@dataclass(frozen=True)
class GatePlan:
    """What the gate lets through for one file."""

    #: The rules that could report something in the file (the others cannot).
    rules: list[type[Rule]]
    #: Depth of the syntax tree, measured by the same pass (0 when no rule needs the file).
    depth: int = 0


def plan(text: str, tree: ast.AST, rules: Sequence[type[Rule]], min_confidence: Confidence) -> GatePlan:
    """Which of ``rules`` need the analysis of this file (and how deep its tree is, which matters
    only then)."""
    lowered = text.lower()
    worded = [rule for rule in rules if any(word.lower() in lowered for word in rule.requires_any)]
    if not worded:
        return GatePlan([])
    scan = _Pass(lowered)
    scan.run(tree)
    shape = scan.shape()
    possible = [rule for rule in worded if rule.may_report(shape, min_confidence)]
    return GatePlan(possible, scan.depth if possible else 0)


def may_hold_findings(text: str, tree: ast.AST, rules: Sequence[type[Rule]], min_confidence: Confidence) -> list[type[Rule]]:
    """The rules among ``rules`` that could report something in this file (the others cannot)."""
    return plan(text, tree, rules, min_confidence).rules


def mentions_required_words(text: str, rules: Iterable[type[Rule]]) -> bool:
    """Whether ``text`` mentions a word one of ``rules`` requires (:attr:`Rule.requires_any`)."""
    lowered = text.lower()
    return any(word.lower() in lowered for rule in rules for word in rule.requires_any)


# --- the one pass ---------------------------------------------------------------------------------
@dataclass(eq=False)
class _Function:
    """What the pass learns about one function (or the module's top level: ``name`` None)."""

    name: str | None
    is_method: bool = False
    params: frozenset[str] = frozenset()
    #: Parameters other than a method's ``self``/``cls``: what a caller hands over.
    arguments: frozenset[str] = frozenset()
    #: Names declared ``global`` / ``nonlocal``.
    declared: set[str] = field(default_factory=set)
    #: How often each name is bound here (assigned, imported, a loop target, defined)...
    bindings: dict[str, int] = field(default_factory=dict)
    #: ...and how often only by feeding itself (``total += x``, ``t = t + x``): a name bound in no
    #: other way belongs to the caller (``global``/``nonlocal``, or code that fails at run time).
    self_feeding: dict[str, int] = field(default_factory=dict)
    #: Last names of everything it calls.
    calls: set[str] = field(default_factory=set)
    runs_backward: bool = False
    #: Last names of what it calls inside a loop (a loop that runs the model on each item makes
    #: its callees per-step functions; ``g(loss, params)`` after ``import grad as g`` is a backward).
    loop_calls: set[str] = field(default_factory=set)
    #: (root name written to, collects into a container, inside a loop, value reads a parameter)
    stores: list[tuple[str, bool, bool, bool]] = field(default_factory=list)
    #: (method name, root of the receiver, inside a loop) for every ``x.m(...)`` call.
    method_calls: list[tuple[str, str | None, bool]] = field(default_factory=list)
    #: Dotted names it puts in evaluation mode (``model`` for ``model.eval()``).
    eval_receivers: set[str] = field(default_factory=set)
    #: Dotted names it may run as a model: ``model(x)``, ``self.net(x)``, ``model.forward(x)``.
    run_names: set[str] = field(default_factory=set)

    def outlives(self, root: str) -> bool:
        """Whether a value written under ``root`` here survives the call."""
        if self.name is None:
            return False
        if root in _OWNERS or root in self.declared:
            return True
        if root in self.params:
            return False
        return self.bindings.get(root, 0) <= self.self_feeding.get(root, 0)

    def bind(self, name: str) -> None:
        self.bindings[name] = self.bindings.get(name, 0) + 1

    @property
    def may_run_per_step(self) -> bool:
        name = self.name or ""
        return (
            name in STEP_FUNCTION_NAMES
            or name in STEP_METHODS
            or bool(PER_STEP_HOOK.match(name) or FRAMEWORK_HOOK_NAME.match(name))
            or self.runs_backward
        )


#: Where a node sits, for the pass: (enclosing function, directly in a class body, loops around
#: it, the names the enclosing ``except`` clauses catch (None outside one), depth in the tree).
_Context = tuple["_Function", bool, int, "frozenset[str] | None", int]


class _Pass:
    def __init__(self, text: str) -> None:
        self.text = text
        self.top = _Function(None)
        self.functions: list[_Function] = []
        self.identifiers: set[str] = set()
        self.iteration_loop = "dataloader" in text and ("for " in text or "while " in text)
        #: Local names that ``from torch.autograd import grad as g`` binds to a backward call.
        self.backward_aliases: set[str] = set()
        self.has_loop = False
        self.depth = 0
        self.eval_context = False
        #: For each call inside ``except`` clauses: the names the enclosing clauses catch
        #: (last names, ``*`` for a bare ``except:``).
        self.handler_catches: set[frozenset[str]] = set()
        #: Names bound by ``import ... as``: a caught name may be an alias of an OOM class.
        self.import_aliases: set[str] = set()
        #: Names called as ``x = name(x)`` (LL401 needs the callee to be one of its functions).
        self.inplace_callees: set[str] = set()
        self.inplace_candidate = bool(_GRAD_SWITCHES.search(text)) and any(m.lower() in text for m in MODULES_WITH_INPLACE)

    def run(self, tree: ast.AST) -> None:
        deepest = 0
        # (node, its context): one context tuple per parent, shared by its children, which
        # ``zip`` pairs with it in C (the pass's hot loop).
        stack: list[tuple[ast.AST, _Context]] = [(tree, (self.top, False, 0, None, 1))]
        pop, extend = stack.pop, stack.extend
        while stack:
            node, context = pop()
            function, in_class, loops, in_handler, depth = context
            if depth > deepest:
                deepest = depth
            kind = type(node)
            if kind in _LEAVES:
                continue
            below = depth + 1
            if kind is ast.Name:
                self.identifiers.add(node.id)  # type: ignore[attr-defined]
                if type(node.ctx) is ast.Store:  # type: ignore[attr-defined]
                    function.bind(node.id)  # type: ignore[attr-defined]
                if below > deepest:
                    deepest = below  # its context node
                continue
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                inner = self._function(node, in_class)  # type: ignore[arg-type]
                function.bind(node.name)  # type: ignore[attr-defined]
                extend(zip(_child_nodes(node), repeat((inner, False, 0, None, below))))
                continue
            if kind is ast.ClassDef:
                function.bind(node.name)  # type: ignore[attr-defined]
                extend(zip(_child_nodes(node), repeat((function, True, loops, in_handler, below))))
                continue
            if kind is ast.For or kind is ast.AsyncFor or kind is ast.While:
                self.has_loop = True
                if kind is not ast.While and _names_a_step(node.iter, node.target):  # type: ignore[attr-defined]
                    self.iteration_loop = True
                extend(zip(_child_nodes(node), repeat((function, False, loops + 1, in_handler, below))))
                continue
            if kind is ast.ExceptHandler:
                if node.name:  # type: ignore[attr-defined]
                    function.bind(node.name)  # type: ignore[attr-defined]
                caught = _caught_names(node.type)  # type: ignore[attr-defined]
                catches = caught if in_handler is None else in_handler | caught
                extend(zip(_child_nodes(node), repeat((function, False, loops, catches, below))))
                continue
            if kind is ast.Call:
                self._call(node, function, loops, in_handler)  # type: ignore[arg-type]
            elif kind is ast.Assign:
                self._assign(node, function, loops)  # type: ignore[arg-type]
            elif kind is ast.AugAssign or kind is ast.AnnAssign:
                self._write(node, function, loops)  # type: ignore[arg-type]
            elif kind is ast.Attribute:
                self.identifiers.add(node.attr)  # type: ignore[attr-defined]
            elif kind is ast.keyword:
                if node.arg:  # type: ignore[attr-defined]
                    self.identifiers.add(node.arg)  # type: ignore[attr-defined]
            elif kind is ast.Global or kind is ast.Nonlocal:
                function.declared.update(node.names)  # type: ignore[attr-defined]
            elif kind is ast.comprehension:
                self.has_loop = True
                if _names_a_step(node.iter, node.target):  # type: ignore[attr-defined]
                    self.iteration_loop = True
            elif kind is ast.Import or kind is ast.ImportFrom:
                for alias in node.names:  # type: ignore[attr-defined]
                    function.bind((alias.asname or alias.name).split(".")[0])
                    self.identifiers.update(alias.name.split("."))
                    if kind is ast.ImportFrom and node.module:  # type: ignore[attr-defined]
                        self.identifiers.update(node.module.split("."))  # type: ignore[attr-defined]
                    if alias.asname:
                        self.import_aliases.add(alias.asname)
                        if alias.name in _BACKWARD_CALLS:
                            self.backward_aliases.add(alias.asname)
            extend(zip(_child_nodes(node), repeat((function, in_class, loops, in_handler, below))))
        self.depth = deepest

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool) -> _Function:
        args = node.args
        params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
        params += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
        arguments = params[1:] if in_class and (args.posonlyargs or args.args) else params
        info = _Function(node.name, is_method=in_class, params=frozenset(params), arguments=frozenset(arguments))
        self.functions.append(info)
        if is_eval_function_name(node.name):
            self.eval_context = True
        return info

    def _call(self, node: ast.Call, function: _Function, loops: int, in_handler: frozenset[str] | None) -> None:
        func = node.func
        if type(func) is ast.Attribute:
            name = func.attr
            receiver = _root(func.value)
            function.method_calls.append((name, receiver, loops > 0))
            if loops:
                function.loop_calls.add(name)
            if receiver is not None and (name in _COLLECTING_METHODS or name in _WRITING_METHODS or name.endswith("_")):
                reads = _reads_any(node, function.arguments)
                function.stores.append((receiver, name in _COLLECTING_METHODS, loops > 0, reads))
            model = _model_name(func.value) if name in _MODEL_MODE_OR_RUN else None
            if model is not None:
                if name == "eval" or (name == "train" and node.args and _is_false(node.args[0])):
                    function.eval_receivers.add(model)
                elif name == "forward" or name == "module":
                    function.run_names.add(model)
            callee = _dotted(func)
            if callee is not None:
                function.run_names.add(callee)
        elif type(func) is ast.Name:
            name = func.id
            function.run_names.add(name)
            if loops:
                function.loop_calls.add(name)
        else:
            return
        function.calls.add(name)
        if name in _BACKWARD_CALLS:
            function.runs_backward = True
        if loops and name in _STEP_CALLS:
            self.iteration_loop = True
        if in_handler is not None:
            self.handler_catches.add(in_handler)

    def _assign(self, node: ast.Assign, function: _Function, loops: int) -> None:
        value = node.value
        reads = _ValueReads(value)
        for target in node.targets:
            for part in _unpacked(target):
                root = _root(part)
                if root is None:
                    continue
                name = _dotted(part)
                feeds_itself = name is not None and name in reads.dotted
                collects = type(part) is ast.Subscript or _grows_itself(part, value, feeds_itself)
                if type(part) is ast.Name and feeds_itself:
                    function.self_feeding[root] = function.self_feeding.get(root, 0) + 1
                if type(part) is not ast.Name or collects or feeds_itself:
                    arguments = function.arguments
                    function.stores.append((root, collects, loops > 0, bool(arguments) and not arguments.isdisjoint(reads.names)))
        if len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
            called = _updates_itself(node.targets[0].id, value)
            if called is True:
                self.inplace_candidate = True
            elif called:
                self.inplace_callees.add(called)

    def _write(self, node: ast.AugAssign | ast.AnnAssign, function: _Function, loops: int) -> None:
        target, value = node.target, node.value
        root = _root(target)
        if root is None or value is None:
            return
        collects = type(node) is ast.AugAssign and type(value) in (ast.List, ast.Tuple)
        if type(node) is ast.AugAssign and type(target) is ast.Name:
            function.self_feeding[root] = function.self_feeding.get(root, 0) + 1
        if type(target) is not ast.Name or type(node) is ast.AugAssign:
            function.stores.append((root, collects or type(target) is ast.Subscript, loops > 0, _reads_any(value, function.arguments)))

    def shape(self) -> SyntaxShape:
        # Imports may come after their use in the order of the pass: resolve aliases of backward
        # functions now.
        for function in self.functions + [self.top]:
            if function.calls & self.backward_aliases:
                function.runs_backward = True
            if function.loop_calls & self.backward_aliases:
                self.iteration_loop = True
        per_step = self._per_step_functions()
        keeping_methods = {
            f.name
            for f in self.functions
            if f.is_method and any(root in _OWNERS and reads for root, _, _, reads in f.stores)
        }
        return SyntaxShape(
            text=self.text,
            identifiers=frozenset(self.identifiers),
            iteration_loop=self.iteration_loop,
            has_loop=self.has_loop,
            per_step_state_store=any(
                f.name != "__init__" and any(f.outlives(root) for root, *_ in f.stores) for f in per_step
            ),
            self_container_store=any(
                f.name not in (None, "__init__") and any(root in _OWNERS and collects for root, collects, _, _ in f.stores)
                for f in self.functions
            ),
            loop_outer_store=any(
                f.name != "__init__"
                and any(collects and in_loop and f.outlives(root) for root, collects, in_loop, _ in f.stores)
                for f in self.functions
            ),
            argument_keeping_call=any(
                name in keeping_methods and receiver is not None and (in_loop or f in per_step) and f.outlives(receiver)
                for f in self.functions
                for name, receiver, in_loop in f.method_calls
            ),
            graph_evidence=any(is_graph_evidence_identifier(name) for name in self.identifiers),
            eval_context=self.eval_context
            or any(not f.eval_receivers.isdisjoint(f.run_names) for f in (self.top, *self.functions)),
            oom_handler_call=any(
                not names.isdisjoint(_MAY_CATCH_OOM) or not names.isdisjoint(self.import_aliases)
                for names in self.handler_catches
            ),
            # A callee named otherwise may still be one of LL401's functions under an alias
            # (``from torch import relu as r``); imports may come after the call in this pass.
            inplace_candidate=self.inplace_candidate
            or not self.inplace_callees.isdisjoint(_INPLACE_CALL_NAMES | self.import_aliases),
        )

    def _per_step_functions(self) -> set[_Function]:
        """Functions that may run once per step, and everything they may call (by name): a
        superset of ``leaklint.analysis.steps.per_step_functions``."""
        by_name: dict[str, list[_Function]] = {}
        for f in self.functions:
            by_name.setdefault(f.name or "", []).append(f)
        # Anything called in a loop may be called once per input (a loop running the model on
        # each item repeats per input whatever its names; see LoopInfo.repeats_per_input).
        called_in_loops = {name for f in [self.top, *self.functions] for name in f.loop_calls}
        found = {
            f for f in self.functions if f.may_run_per_step or (f.name in called_in_loops and f.name != "__init__")
        }
        frontier = list(found)
        while frontier:
            caller = frontier.pop()
            for name in caller.calls:
                for callee in by_name.get(name, ()):
                    if callee not in found and callee.name != "__init__":
                        found.add(callee)
                        frontier.append(callee)
        return found


def describe_shape(tree: ast.AST, lowered_text: str) -> SyntaxShape:
    """Read the :class:`SyntaxShape` of a parsed file (``lowered_text``: its source, lower-cased)."""
    scan = _Pass(lowered_text)
    scan.run(tree)
    return scan.shape()


# --- small syntax helpers -------------------------------------------------------------------------
#: Fields that never hold a node the pass reads: names and other plain values, contexts, operators.
_PLAIN_FIELDS = frozenset(
    {"ctx", "op", "ops", "id", "attr", "name", "names", "arg", "asname", "module", "level", "kind", "type_comment",
     "conversion", "is_async", "simple", "kwd_attrs", "rest", "tag"}
)
_NODE_FIELDS: dict[type, tuple[str, ...]] = {}
#: ASDL types whose values are plain Python values, never nodes.
_PLAIN_TYPES = frozenset({"identifier", "int", "string", "constant"})
#: One field of a node's signature in its docstring: ``expr* args``, ``expr? returns``, ``expr func``.
_SIGNATURE_FIELD = re.compile(r"(\w+)([*?]?) (\w+)")


def _generic_child_nodes(node: ast.AST) -> list[ast.AST]:
    """The nodes right below ``node`` that can matter to the gate: ``ast.iter_child_nodes`` less
    contexts, operators and plain values. For node classes whose signature is not understood."""
    kind = type(node)
    fields = _NODE_FIELDS.get(kind)
    if fields is None:
        fields = _NODE_FIELDS[kind] = tuple(name for name in kind._fields if name not in _PLAIN_FIELDS)
    children: list[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if type(value) is list:
            children.extend(item for item in value if isinstance(item, ast.AST))
        elif isinstance(value, ast.AST):
            children.append(value)
    return children


def _children_function(kind: type) -> Callable[[ast.AST], list[ast.AST]]:
    """What :func:`_generic_child_nodes` answers for nodes of ``kind``, as a function written for
    the class from its signature (``Call(expr func, expr* args, keyword* keywords)``): a plain read
    per field instead of a loop of type checks, for the pass's hot loop. Falls back to the generic
    function for a signature it does not understand (the field names must match ``_fields``)."""
    signature = (kind.__doc__ or "").split("\n", 1)[0]
    if not kind._fields:
        return lambda node: []
    opening = f"{kind.__name__}("
    if not signature.startswith(opening) or not signature.endswith(")"):
        return _generic_child_nodes
    fields = [_SIGNATURE_FIELD.fullmatch(part.strip()) for part in signature[len(opening):-1].split(",")]
    if any(f is None for f in fields) or tuple(f.group(3) for f in fields) != kind._fields:  # type: ignore[union-attr]
        return _generic_child_nodes
    lines = ["def children(node):", "    found = []"]
    for spec in fields:
        type_name, how, name = spec.groups()  # type: ignore[union-attr]
        if type_name in _PLAIN_TYPES or name in _PLAIN_FIELDS:
            continue
        if how == "*":
            # A list of expressions may hold None: ``{**rest}``'s key, a keyword-only parameter's
            # missing default.
            items = f"filter(None, node.{name})" if type_name == "expr" else f"node.{name}"
            lines.append(f"    found.extend({items})")
        elif how == "?":
            lines.append(f"    value = node.{name}")
            lines.append("    if value is not None:")
            lines.append("        found.append(value)")
        else:
            lines.append(f"    found.append(node.{name})")
    lines.append("    return found")
    namespace: dict[str, Any] = {}
    exec(compiled("\n".join(lines)), namespace)  # noqa: S102 - written from ast's own field names only
    return namespace["children"]  # type: ignore[no-any-return]


#: node class -> its :func:`_children_function`.
_CHILDREN_OF: dict[type, Callable[[ast.AST], list[ast.AST]]] = {}


def _child_nodes(node: ast.AST) -> list[ast.AST]:
    """The nodes right below ``node`` that can matter to the gate: ``ast.iter_child_nodes`` less
    contexts, operators and plain values, and several times as fast (the pass's hot loop)."""
    kind = type(node)
    children = _CHILDREN_OF.get(kind)
    if children is None:
        children = _CHILDREN_OF[kind] = _children_function(kind)
    return children(node)


def _walk(node: ast.AST) -> Iterable[ast.AST]:
    """``node`` and everything below it (see :func:`_child_nodes`)."""
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(_child_nodes(node))

def _caught_names(caught: ast.expr | None) -> frozenset[str]:
    """What an ``except`` clause catches, by last name (``*``: everything)."""
    if caught is None:
        return frozenset({"*"})
    names = set()
    for element in caught.elts if type(caught) is ast.Tuple else [caught]:  # type: ignore[attr-defined]
        if type(element) is ast.Starred:
            element = element.value  # type: ignore[attr-defined]
        if type(element) is ast.Name:
            names.add(element.id)  # type: ignore[attr-defined]
        elif type(element) is ast.Attribute:
            names.add(element.attr)  # type: ignore[attr-defined]
    return frozenset(names)


def _root(node: ast.AST) -> str | None:
    """``self`` in ``self.cache[k].append``, ``d`` in ``d.setdefault(k, []).append``."""
    while True:
        kind = type(node)
        if kind is ast.Name:
            return node.id  # type: ignore[attr-defined]
        if kind is ast.Attribute or kind is ast.Subscript or kind is ast.Starred:
            node = node.value  # type: ignore[attr-defined]
        elif kind is ast.Call:
            node = node.func  # type: ignore[attr-defined]
        else:
            return None


def _unpacked(target: ast.AST) -> Iterable[ast.AST]:
    if type(target) in (ast.Tuple, ast.List):
        for element in target.elts:  # type: ignore[attr-defined]
            yield from _unpacked(element)
    elif type(target) is ast.Starred:
        yield from _unpacked(target.value)  # type: ignore[attr-defined]
    else:
        yield target


def _leaf_names(*nodes: ast.AST) -> Iterable[str]:
    for node in nodes:
        for child in _walk(node):
            if type(child) is ast.Name:
                yield child.id  # type: ignore[attr-defined]
            elif type(child) is ast.Attribute:
                yield child.attr  # type: ignore[attr-defined]


def _names_a_step(iterable: ast.AST, target: ast.AST) -> bool:
    """``for x, y in loader`` / ``for epoch in range(n)`` / ``for batch in ...``."""
    return any(
        DATA_SOURCE_NAME.search(name) or ITERATION_COUNTER_NAME.search(name) for name in _leaf_names(iterable, target)
    )


def _names_in(node: ast.AST) -> set[str]:
    return {child.id for child in _walk(node) if type(child) is ast.Name}  # type: ignore[attr-defined]


def _reads_any(node: ast.AST, names: frozenset[str]) -> bool:
    return bool(names) and not names.isdisjoint(_names_in(node))


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
    if type(node) is not ast.Name:
        return None
    parts.append(node.id)  # type: ignore[attr-defined]
    return ".".join(reversed(parts))


class _ValueReads:
    """The names and dotted chains an assigned value reads, from one walk of it made on first use
    (an assignment asks about each of its targets, and most values are never asked about)."""

    __slots__ = ("_value", "_names", "_dotted")

    def __init__(self, value: ast.AST) -> None:
        self._value = value
        self._names: set[str] | None = None
        self._dotted: set[str] = set()

    def _scan(self) -> set[str]:
        names: set[str] = set()
        dotted = self._dotted
        for child in _walk(self._value):
            kind = type(child)
            if kind is ast.Name:
                names.add(child.id)  # type: ignore[attr-defined]
            elif kind is ast.Attribute:
                chain = _dotted(child)
                if chain is not None:
                    dotted.add(chain)
        dotted |= names
        self._names = names
        return names

    @property
    def names(self) -> set[str]:
        """Plain names: ``t``, ``x`` in ``t.sum() + x``."""
        return self._scan() if self._names is None else self._names

    @property
    def dotted(self) -> set[str]:
        """Names and every attribute chain on a name: ``t``, ``t.sum``, ``x`` in ``t.sum() + x``."""
        if self._names is None:
            self._scan()
        return self._dotted


def _grows_itself(target: ast.AST, value: ast.AST, feeds_itself: bool) -> bool:
    """``t = t + [x]`` / ``t = torch.cat([t, x])``: a container grown by re-assignment
    (``feeds_itself``: the value reads the target, ``t = t + x`` / ``t = f(t, x)``)."""
    if type(value) is ast.BinOp:
        return feeds_itself and type(value.right) in (ast.List, ast.Tuple)  # type: ignore[attr-defined]
    if type(value) is ast.Call and value.args:  # type: ignore[attr-defined]
        first = value.args[0]  # type: ignore[attr-defined]
        name = _dotted(target)
        return type(first) in (ast.List, ast.Tuple) and name is not None and any(_dotted(e) == name for e in first.elts)
    return False


def _updates_itself(name: str, value: ast.AST) -> bool | str:
    """Whether ``name = value`` is one of LL401's candidates: ``x = x * s`` and ``x = x.relu()``
    (True), or ``x = relu(x)`` (the callee's name, which may be an import alias: the caller
    decides once every import is known). False otherwise.

    LL401 rewrites only calls whose qualified name ends in one of its functions' names; the last
    name of an attribute chain is the last part of that qualified name whatever the aliases.
    """
    kind = type(value)
    if kind is ast.BinOp:
        sides = (value.left, value.right)  # type: ignore[attr-defined]
        return isinstance(value.op, _INPLACE_OPERATORS) and any(type(s) is ast.Name and s.id == name for s in sides)  # type: ignore[attr-defined]
    if kind is ast.Call:
        func, args = value.func, value.args  # type: ignore[attr-defined]
        if type(func) is ast.Attribute:
            if func.attr not in _INPLACE_CALL_NAMES:  # type: ignore[attr-defined]
                return False
            receiver = func.value  # type: ignore[attr-defined]
            if type(receiver) is ast.Name and receiver.id == name:
                return True
            return bool(args) and type(args[0]) is ast.Name and args[0].id == name
        if type(func) is ast.Name and args and type(args[0]) is ast.Name and args[0].id == name:
            return func.id  # type: ignore[attr-defined]
    return False


def _model_name(receiver: ast.AST) -> str | None:
    """The name a model method's receiver goes by: ``model`` in ``model.to(device).eval()`` (the
    analysis follows methods that return the module; this follows any method call)."""
    while type(receiver) is ast.Call and type(receiver.func) is ast.Attribute:  # type: ignore[attr-defined]
        receiver = receiver.func.value  # type: ignore[attr-defined]
    return _dotted(receiver)


def _is_false(node: ast.AST) -> bool:
    return type(node) is ast.Constant and node.value is False  # type: ignore[attr-defined]
