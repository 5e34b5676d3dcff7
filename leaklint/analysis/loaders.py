"""What an iterable is, where it matters whether iterating it yields a data loader's batches.

``for x in loader`` reads a data source whatever ``loader`` is called; a rule that must know
whether an expression *is* a data loader (``itertools.cycle(loader)`` keeps every item it
yields) asks :func:`loader_origin`. The answer rests on what the code builds, never on names:

* a value the provenance pass knows as a loader (``Role.LOADER``: a ``DataLoader(...)`` call,
  ``tqdm(loader)``, ``enumerate(loader)``, a parameter that the file's calls pass one for);
* a call of a loader class (torch's ``DataLoader``, the loaders of torch_geometric, DGL, MONAI,
  torchdata, a class of the file that derives from one), or of a dataset class (a class of the
  file deriving from torch's ``Dataset``, ``torchvision.datasets``): a dataset yields samples;
* what a name or an attribute is bound to, in the function, an enclosing one, the class
  (``self.loader``), the module, or the class of an object built in the file
  (``handlers.data_io`` where ``handlers = Handlers(net, loader)`` keeps it), with unpacking
  followed position by position: ``model, optimizer, loader = accelerator.prepare(model,
  optimizer, loader)`` binds ``loader`` to what the third argument is;
* the items of a list or dict the file builds (a literal, a comprehension, ``c[key] = ...``,
  ``c.append(...)``), read by subscript or bound by a ``for`` or a comprehension
  (``for task, dl in loaders.items()``);
* calls that hand back the loader they are given, wrapped (``accelerator.prepare``,
  ``prepare_data_loader``, Fabric's ``setup_dataloaders``, ``skip_first_batches``), and calls that
  iterate it (``iter``, ``enumerate``, ``zip``, ``itertools.chain`` / ``islice``, ``map``,
  ``filter``, a progress bar, a generator expression over it);
* a parameter: its annotation (``loader: DataLoader``), else what the calls of the function in
  the file pass for it (a class's constructor calls, for ``__init__``): a loader if any call
  passes one;
* what a local function returns.

The answer is a :class:`Loader` (with how it was known), :data:`NOT_LOADER` (a literal, a
``range``, a list or comprehension built in memory, strings, numbers, tensors, a value of a
plotting, path or numeric package), or :data:`UNKNOWN` (a parameter that no call of the file
passes, an attribute nothing of the file assigns, the result of another package's function).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Iterable

import libcst as cst

from leaklint.analysis import percall_api, torch_api
from leaklint.analysis.calls import call_graph, function_named, local_callee
from leaklint.analysis.names import dotted_name
from leaklint.analysis.structure import ClassInfo, FunctionInfo
from leaklint.analysis.values import Role
from leaklint.analysis.walk import not_into_scopes, walk

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts

LOADER_CLASSES = torch_api.DATA_LOADER_CLASSES
#: Dataset classes: iterating one yields its samples, one ``__getitem__`` after another.
DATASET_BASES = frozenset(
    {
        "torch.utils.data.Dataset", "torch.utils.data.dataset.Dataset", "torch.utils.data.IterableDataset",
        "torch.utils.data.dataset.IterableDataset",
    }
)
#: Packages of datasets whose samples are images or tensors (``torchvision.datasets.CIFAR10(...)``).
DATASET_PACKAGES = ("torchvision.datasets.",)
#: The identifiers a file must use for any expression of it to be known as a loader or a dataset.
LOADER_CLASS_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in LOADER_CLASSES | DATASET_BASES) | {"datasets"}
#: Methods that return the loaders they are given, wrapped, one per argument (a tuple for several).
_WRAPPING_METHODS = percall_api.PREPARE_METHODS | {"setup_dataloaders"}
#: Functions (by their last name) that return the loader they get first, wrapped.
_WRAPPING_FUNCTIONS = frozenset({"skip_first_batches"})
#: Builtins and itertools functions whose result iterates the iterables they are given.
_ITERATING_BUILTINS = frozenset({"iter", "enumerate", "zip", "reversed"})
_ITERATING_ITERTOOLS = frozenset({"chain", "islice", "zip_longest", "cycle", "compress", "takewhile", "dropwhile"})
#: ``map(f, it)`` / ``filter(f, it)``: the iterable is their second argument.
_MAPPING_BUILTINS = frozenset({"map", "filter"})
#: Builtins that build something in memory, or a number, a string, a range.
_IN_MEMORY_BUILTINS = frozenset(
    {"range", "list", "tuple", "sorted", "set", "frozenset", "dict", "str", "bytes", "len", "int", "float", "sum"}
)
#: Methods whose result is held in memory already: strings, keys, a tensor's pieces, a model's
#: parameters (``open(path).read().splitlines()``, ``batch.split(8)``, ``model.parameters()``).
_IN_MEMORY_METHODS = frozenset(
    {
        "split", "splitlines", "readlines", "keys", "tolist", "chunk", "unbind", "parameters", "named_parameters",
        "children", "modules", "named_modules", "buffers",
    }
)
#: Packages whose functions and attributes give paths, strings, numbers, arrays, colours or
#: tensors (torch's own functions: loaders and datasets are told apart before), never a loader.
_NON_DATA_PACKAGES = frozenset(
    {
        "os", "glob", "pathlib", "numpy", "torch", "random", "string", "json", "math", "matplotlib", "seaborn",
        "colorsys", "PIL", "cv2", "re", "sys",
    }
)
#: How many names, parameters and calls deep :func:`loader_origin` follows an expression.
_MAX_DEPTH = 6


@dataclass(frozen=True)
class Loader:
    """The expression is a data loader (or a dataset, or iterates one)."""

    #: How it was known, for messages: "a DataLoader built at line 27".
    how: str
    #: The expression is the loader object itself, which a new ``for`` iterates again from the
    #: start (not an iterator over it, such as ``iter(loader)`` or ``enumerate(loader)``, which a
    #: second pass finds exhausted).
    reiterable: bool
    #: A dataset (its samples), not a loader (its batches): what a sample is, its
    #: ``__getitem__`` decides.
    dataset: bool = False


#: The expression is not a data loader: something built in memory, numbers, strings, tensors.
NOT_LOADER = "not a loader"
#: Nothing in the file says what the expression is.
UNKNOWN = "unknown"

def loader_origin(expr: cst.BaseExpression, function: FunctionInfo, facts: ModuleFacts) -> Loader | str:
    """What ``expr``, evaluated in ``function``, is: a :class:`Loader`, :data:`NOT_LOADER` or
    :data:`UNKNOWN` (see the module docstring)."""
    return _Resolver(facts).origin(expr, function, 0)


class _Resolver:
    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts
        #: What each name (by scope) or local function's result was found to be; None while it
        #: is being worked out (a name met again on the way, ``loader = prepare(loader)``, adds
        #: nothing to what its other bindings say).
        self.memo: dict[tuple[int, str], Loader | str | None] = {}

    def origin(self, expr: cst.BaseExpression, function: FunctionInfo, depth: int) -> Loader | str:
        if depth > _MAX_DEPTH:
            return UNKNOWN
        found = self._what(expr, function, depth)
        if not isinstance(found, Loader) and self.facts.value(expr).role is Role.LOADER:
            # the provenance pass knows more (a loader the calls of the function pass, through
            # names this module does not follow)
            reiterable = dotted_name(expr) is not None or (isinstance(expr, cst.Call) and self._loader_class(expr) is not None)
            return Loader(self._how_known(expr, function, self.facts), reiterable)
        return found

    def _what(self, expr: cst.BaseExpression, function: FunctionInfo, depth: int) -> Loader | str:
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set, cst.Dict, cst.ListComp, cst.SetComp, cst.DictComp)):
            return NOT_LOADER  # built in memory here: whatever it holds, cycling it keeps nothing new
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Integer, cst.Float)):
            return NOT_LOADER
        if isinstance(expr, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison)):
            return NOT_LOADER  # numbers, strings or tensors
        if isinstance(expr, cst.GeneratorExp):
            return self._generator(expr, function, depth)
        if isinstance(expr, cst.IfExp):
            return _join([self.origin(expr.body, function, depth + 1), self.origin(expr.orelse, function, depth + 1)])
        if isinstance(expr, cst.BooleanOperation):
            return _join([self.origin(expr.left, function, depth + 1), self.origin(expr.right, function, depth + 1)])
        if self._library_value(expr):
            return NOT_LOADER
        if isinstance(expr, cst.Call):
            return self._call(expr, function, depth)
        if isinstance(expr, cst.Subscript):
            return self._item(expr, function, depth)
        name = dotted_name(expr)
        if name is not None:
            return self._name(name, expr, function, depth)
        return UNKNOWN

    # --- calls ------------------------------------------------------------------------------
    def _call(self, call: cst.Call, function: FunctionInfo, depth: int) -> Loader | str:
        facts = self.facts
        cls = self._loader_class(call)
        if cls is not None:
            return Loader(_built(cls, call, facts), True)
        dataset = self._dataset_class(call)
        if dataset is not None:
            return Loader(_built(f"dataset ({dataset})", call, facts), True, dataset=True)
        qualified = facts.imports.resolve(call.func)
        func = call.func
        leaf = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        builtin = leaf if isinstance(func, cst.Name) and qualified is None and function_named(leaf, function, facts) is None else None
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        if builtin in _IN_MEMORY_BUILTINS or (isinstance(func, cst.Attribute) and leaf in _IN_MEMORY_METHODS):
            return NOT_LOADER
        from_itertools = qualified is not None and qualified.startswith("itertools.")
        if builtin in _ITERATING_BUILTINS or (from_itertools and leaf in _ITERATING_ITERTOOLS):
            return _iterating(self._each(positional, function, depth))
        if builtin in _MAPPING_BUILTINS:
            return _iterating(self._each(positional[1:2], function, depth))
        if qualified in torch_api.PROGRESS_BARS or (qualified is not None and qualified.startswith("tqdm.") and leaf == "tqdm"):
            return _iterating(self._each(positional[:1], function, depth))
        if isinstance(func, cst.Attribute) and leaf in _WRAPPING_METHODS and len(positional) == 1:
            return _wrapped(self.origin(positional[0], function, depth + 1), f"'{facts.describe(func)}'")
        if leaf in _WRAPPING_FUNCTIONS and positional:
            return _wrapped(self.origin(positional[0], function, depth + 1), f"'{leaf}'")
        callee = local_callee(call, function, facts)
        if callee is not None and callee.node is not None:
            return self._returns(callee, depth)
        return UNKNOWN

    def _loader_class(self, call: cst.Call) -> str | None:
        """The loader class ``call`` builds (its last name), if it builds one."""
        facts = self.facts
        qualified = facts.imports.resolve(call.func)
        if torch_api.is_data_loader_class(qualified):
            return qualified.rsplit(".", 1)[-1]  # type: ignore[union-attr]
        if isinstance(call.func, cst.Name):
            cls = facts.structure.classes_by_name.get(call.func.value)
            if cls is not None and _derives_from(cls, LOADER_CLASSES):
                return cls.name
        return None

    def _dataset_class(self, call: cst.Call) -> str | None:
        """The dataset class ``call`` builds (a class of the file deriving from torch's
        ``Dataset``, or one of ``torchvision.datasets``), if it builds one."""
        facts = self.facts
        qualified = facts.imports.resolve(call.func)
        if qualified is not None and qualified.startswith(DATASET_PACKAGES):
            return qualified.rsplit(".", 1)[-1]
        if isinstance(call.func, cst.Name):
            cls = facts.structure.classes_by_name.get(call.func.value)
            if cls is not None and _derives_from(cls, DATASET_BASES):
                return cls.name
        return None

    def _library_value(self, expr: cst.BaseExpression) -> bool:
        """``plt.rcParams["axes.prop_cycle"].by_key()["color"]``, ``np.linspace(0, 1, 10)``: a
        value reached from a package that holds no data loader (plotting, numbers, paths)."""
        head = expr
        while True:
            if isinstance(head, cst.Attribute):
                head = head.value
            elif isinstance(head, cst.Subscript):
                head = head.value
            elif isinstance(head, cst.Call):
                head = head.func
            else:
                break
        if not isinstance(head, cst.Name) or head is expr:
            return False
        qualified = self.facts.imports.resolve(head)
        return qualified is not None and qualified.split(".", 1)[0] in _NON_DATA_PACKAGES and not self._builds_data(expr)

    def _builds_data(self, expr: cst.BaseExpression) -> bool:
        """A call of torch's loader or dataset classes (reached through the ``torch`` package)."""
        return isinstance(expr, cst.Call) and (self._loader_class(expr) is not None or self._dataset_class(expr) is not None)

    def _returns(self, callee: FunctionInfo, depth: int) -> Loader | str:
        """What a local function returns (unknown for a generator: it yields, it is not a loader)."""
        key = (id(callee.node), "<return>")
        if key not in self.memo:
            self.memo[key] = None
            self.memo[key] = self._work_out_returns(callee, depth)
        return self.memo[key] or NOT_LOADER

    def _work_out_returns(self, callee: FunctionInfo, depth: int) -> Loader | str:
        returned: list[cst.BaseExpression] = []
        for node in walk(callee.node.body, into=not_into_scopes):  # type: ignore[union-attr]
            if isinstance(node, (cst.Yield,)):
                return UNKNOWN
            if isinstance(node, cst.Return) and node.value is not None:
                returned.append(node.value)
        if not returned:
            return NOT_LOADER
        found = _join([self.origin(value, callee, depth + 1) for value in returned])
        return replace(found, how=f"{found.how}, returned by '{callee.name}()'") if isinstance(found, Loader) else found

    def _generator(self, expr: cst.GeneratorExp, function: FunctionInfo, depth: int) -> Loader | str:
        """``(b.cuda() for b in loader)`` iterates the loader; one over anything else is built
        here for a purpose of its own (nothing says it yields batches)."""
        found = self.origin(expr.for_in.iter, function, depth + 1)
        return _iterating(found) if isinstance(found, Loader) else NOT_LOADER

    def _each(self, values: Iterable[cst.BaseExpression], function: FunctionInfo, depth: int) -> Loader | str:
        """A loader when any of ``values`` is one (``zip(labelled, unlabelled)``)."""
        return _join([self.origin(value, function, depth + 1) for value in values])

    # --- names --------------------------------------------------------------------------------
    def _name(self, name: str, expr: cst.BaseExpression, function: FunctionInfo, depth: int) -> Loader | str:
        owner, _, attribute = name.rpartition(".")
        if owner and owner != "self":
            cls = self.facts.value(expr.value).cls if isinstance(expr, cst.Attribute) else None  # type: ignore[union-attr]
            method = _any_method(cls, self.facts) if isinstance(cls, ClassInfo) else None
            if method is None:
                return UNKNOWN
            return self._name(f"self.{attribute}", expr, method, depth + 1)
        key = (id(function.cls) if name.startswith("self.") else id(function), name)
        if key not in self.memo:
            self.memo[key] = None
            self.memo[key] = self._bound_name(name, function, depth)
        return self.memo[key] or NOT_LOADER

    def _bound_name(self, name: str, function: FunctionInfo, depth: int) -> Loader | str:
        if name.startswith("self."):
            found = [self._bound(value, position, function, depth) for value, position in self._class_bindings(function.cls, name)]
            return _join(found) if found else UNKNOWN
        table = self.facts.derived(_binding_table)
        targets = self.facts.derived(_loop_targets)
        top = self.facts.structure.top
        scope: FunctionInfo | None = function
        while scope is not None:
            found = [self._bound(value, position, scope, depth) for value, position in table.get((scope, name), ())]
            found += [self._element(iterable, position, scope, depth) for iterable, position in targets.get((scope, name), ())]
            if name in scope.params:
                found.append(self._parameter(scope, name, depth))
            if found:
                return _join(found)
            scope = scope.parent if scope is not top else None
        found = [self._bound(value, position, top, depth) for value, position in table.get((top, name), ())]
        found += [self._element(iterable, position, top, depth) for iterable, position in targets.get((top, name), ())]
        return _join(found) if found else UNKNOWN

    def _element(self, iterable: cst.BaseExpression, position: int | None, scope: FunctionInfo, depth: int) -> Loader | str:
        """What a ``for`` target (or a comprehension's) gets from ``iterable``: an item of a list
        or dict of the file (``for dl in [train_dl, val_dl]``, ``for task, dl in loaders.items()``),
        at ``position`` of the target's unpacking."""
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value in ("enumerate", "zip"):
            arguments = [arg.value for arg in iterable.args if arg.keyword is None and not arg.star]
            if position is None:
                return NOT_LOADER  # a tuple
            if iterable.func.value == "enumerate":
                return self._element(arguments[0], None, scope, depth + 1) if position == 1 and arguments else NOT_LOADER
            return self._element(arguments[position], None, scope, depth + 1) if position < len(arguments) else UNKNOWN
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and iterable.func.attr.value in ("items", "values"):
            if iterable.func.attr.value == "items":
                if position != 1:
                    return NOT_LOADER  # a key, or a (key, value) tuple
            elif position is not None:
                return UNKNOWN
            return self._items_of(iterable.func.value, scope, depth)
        if position is not None:
            return UNKNOWN
        if isinstance(iterable, (cst.List, cst.Tuple, cst.Set)):
            return _join([self.origin(item.value, scope, depth + 1) for item in iterable.elements]) if iterable.elements else NOT_LOADER
        if dotted_name(iterable) is not None:
            if isinstance(self.origin(iterable, scope, depth + 1), Loader):
                return NOT_LOADER  # a batch of a loader, not a loader
            return self._items_of(iterable, scope, depth)
        return UNKNOWN

    def _items_of(self, container: cst.BaseExpression, scope: FunctionInfo, depth: int) -> Loader | str:
        """What the items (a dict's values) of a list or dict the file builds are: the elements of
        its literal or comprehension, and what ``c[key] = ...`` and ``c.append(...)`` put in it."""
        name = dotted_name(container)
        if name is None or depth > _MAX_DEPTH:
            return UNKNOWN
        items = self.facts.derived(_container_items)
        found: list[Loader | str] = []
        for key in _scopes_of(name, scope, self.facts):
            for value, where in items.get((key, name), ()):
                found.append(self.origin(value, where, depth + 1))
            for value, position in self.facts.derived(_binding_table).get((key, name), ()):
                where = _scope_of(value, scope, self.facts)
                if position is not None:
                    found.append(UNKNOWN)
                elif isinstance(value, cst.Dict):
                    found.extend(self.origin(item.value, where, depth + 1) for item in value.elements if isinstance(item, cst.DictElement))
                elif isinstance(value, (cst.List, cst.Tuple, cst.Set)):
                    found.extend(self.origin(item.value, where, depth + 1) for item in value.elements)
                elif isinstance(value, cst.DictComp):
                    found.append(self.origin(value.value, where, depth + 1))
                elif isinstance(value, (cst.ListComp, cst.SetComp)):
                    found.append(self.origin(value.elt, where, depth + 1))
                else:
                    found.append(UNKNOWN)
            if found:
                break
        return _join(found) if found else UNKNOWN

    def _class_bindings(self, cls: ClassInfo | None, name: str) -> list[tuple[cst.BaseExpression, int | None]]:
        """What the methods of ``cls`` (else of its nearest base of the file that does) assign to ``self.x``."""
        table = self.facts.derived(_binding_table)
        pending = [cls] if cls is not None else []
        visited = 0
        while pending and visited < 16:
            current = pending.pop(0)
            visited += 1
            if (current, name) in table:
                return table[(current, name)]
            pending.extend(current.local_bases)
        return []

    def _bound(self, value: cst.BaseExpression, position: int | None, function: FunctionInfo, depth: int) -> Loader | str:
        """What a binding gives the name: the whole value, or its item at ``position`` of an unpacking."""
        scope = _scope_of(value, function, self.facts)
        if position is None:
            return self.origin(value, scope, depth + 1)
        if isinstance(value, (cst.Tuple, cst.List)):
            elements = value.elements
            if position < len(elements) and not isinstance(elements[position], cst.StarredElement):
                return self.origin(elements[position].value, scope, depth + 1)
            return UNKNOWN
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in _WRAPPING_METHODS:
            arguments = [arg.value for arg in value.args if arg.keyword is None and not arg.star]
            if position < len(arguments):
                return _wrapped(self.origin(arguments[position], scope, depth + 1), f"'{self.facts.describe(value.func)}'")
        return UNKNOWN

    def _parameter(self, function: FunctionInfo, name: str, depth: int) -> Loader | str:
        """A parameter: a loader by its annotation, else what the file's calls pass for it."""
        facts = self.facts
        annotation = _annotation(function, name)
        if annotation is not None and any(facts.imports.resolve(node) in LOADER_CLASSES for node in _annotation_names(annotation)):
            return Loader(f"a parameter of '{function.name}' annotated as a data loader", True)
        passed = self._arguments(function, name)
        if not passed:
            return UNKNOWN
        joined = _join([self.origin(argument, caller, depth + 1) if argument is not None else UNKNOWN for argument, caller in passed])
        callee = function.cls.name if function.name == "__init__" and function.cls is not None else function.name
        return replace(joined, how=f"{joined.how}, passed to '{callee}'") if isinstance(joined, Loader) else joined

    def _arguments(self, function: FunctionInfo, name: str) -> list[tuple[cst.BaseExpression | None, FunctionInfo]]:
        """What each call of ``function`` in the file passes for parameter ``name`` (None behind
        ``*args`` / ``**kwargs``), with the function that makes the call; calls that leave the
        parameter to its default are left out."""
        facts = self.facts
        sites = list(call_graph(facts).sites_of(function))
        cls = function.cls
        if function.name == "__init__" and cls is not None:
            for call, fact in facts.index.statement_calls:
                if isinstance(call.func, cst.Name) and facts.structure.classes_by_name.get(call.func.value) is cls:
                    sites.append((call, fact))
        found: list[tuple[cst.BaseExpression | None, FunctionInfo]] = []
        for call, fact in sites:
            bound = function.is_method and (function.name == "__init__" or isinstance(call.func, cst.Attribute))
            argument = _argument_for(call, function, name, bound)
            if argument is not _NOT_PASSED:
                found.append((argument, fact.function))  # type: ignore[arg-type]
        return found

    def _item(self, expr: cst.Subscript, function: FunctionInfo, depth: int) -> Loader | str:
        """``loaders["train"]``: an item of a dict or list the file builds of loaders."""
        return self._items_of(expr.value, function, depth)

    def _how_known(self, expr: cst.BaseExpression, function: FunctionInfo, facts: ModuleFacts) -> str:
        """How the provenance pass knew ``expr`` as a loader, in words."""
        if isinstance(expr, cst.Call) and (cls := self._loader_class(expr)) is not None:
            return _built(cls, expr, facts)
        name = dotted_name(expr)
        if name is not None and "." not in name and name in function.params:
            callee = function.cls.name if function.name == "__init__" and function.cls is not None else function.name
            return f"a data loader, which the calls of '{callee}' pass"
        return "a data loader"


# --- helpers ------------------------------------------------------------------------------------
def _join(found: list[Loader | str]) -> Loader | str:
    """A loader when any part is one; unknown when some part is unknown; else not a loader."""
    for item in found:
        if isinstance(item, Loader):
            return item
    return UNKNOWN if UNKNOWN in found else NOT_LOADER


def _iterating(found: Loader | str) -> Loader | str:
    """What an iterator over ``found`` is: its batches, but not re-iterable."""
    return replace(found, reiterable=False) if isinstance(found, Loader) else found


def _wrapped(found: Loader | str, by: str) -> Loader | str:
    return replace(found, how=f"{found.how}, wrapped by {by}") if isinstance(found, Loader) else found


def _derives_from(cls: ClassInfo, bases: frozenset[str], depth: int = 0) -> bool:
    if any(base in bases for base in cls.qualified_bases):
        return True
    return depth < 8 and any(_derives_from(base, bases, depth + 1) for base in cls.local_bases)


def _built(what: str, call: cst.Call, facts: ModuleFacts) -> str:
    line = facts.line_of(call)
    return f"a {what} built at line {line}" if line is not None else f"a {what}"


def _any_method(cls: ClassInfo, facts: ModuleFacts) -> FunctionInfo | None:
    """A method of ``cls``, to look up its ``self.x`` bindings from."""
    for node in cls.methods.values():
        info = facts.structure.functions.get(node)
        if info is not None:
            return info
    return None


def _scope_of(value: cst.BaseExpression, function: FunctionInfo, facts: ModuleFacts) -> FunctionInfo:
    """The function whose code evaluates ``value`` (a binding of ``self.x`` in another method)."""
    fact = facts.derived(_binding_scopes).get(value)
    return fact if fact is not None else function


def _binding_table(facts: ModuleFacts) -> dict[tuple[object, str], list[tuple[cst.BaseExpression, int | None]]]:
    """(scope, dotted name) -> [(value, position in an unpacking target or None)]: ``self.x`` is
    scoped to its class, other names to their function (the module's top level included)."""
    table: dict[tuple[object, str], list[tuple[cst.BaseExpression, int | None]]] = {}
    for fact in facts.statements():
        node = fact.node
        if isinstance(node, cst.Assign):
            targets, value = [target.target for target in node.targets], node.value
        elif isinstance(node, cst.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for target in targets:
            if isinstance(target, (cst.Tuple, cst.List)):
                for position, element in enumerate(target.elements):
                    name = dotted_name(element.value) if not isinstance(element, cst.StarredElement) else None
                    if name is not None:
                        table.setdefault((_scope_key(fact.function, name), name), []).append((value, position))
                continue
            name = dotted_name(target)
            if name is not None:
                table.setdefault((_scope_key(fact.function, name), name), []).append((value, None))
    return table


def _loop_targets(facts: ModuleFacts) -> dict[tuple[object, str], list[tuple[cst.BaseExpression, int | None]]]:
    """(function, name) -> [(the iterable, position in the target's unpacking or None)] for the
    names ``for`` loops and comprehensions bind, in each function and at module level."""
    table: dict[tuple[object, str], list[tuple[cst.BaseExpression, int | None]]] = {}
    bodies: list[tuple[FunctionInfo, cst.CSTNode]] = [(facts.structure.top, facts.module)]
    bodies += [(info, node.body) for node, info in facts.structure.functions.items()]
    for function, body in bodies:
        for node in walk(body, into=not_into_scopes):
            if not isinstance(node, (cst.For, cst.CompFor)):
                continue
            target = node.target
            if isinstance(target, (cst.Tuple, cst.List)):
                for position, element in enumerate(target.elements):
                    name = dotted_name(element.value) if not isinstance(element, cst.StarredElement) else None
                    if name is not None:
                        table.setdefault((function, name), []).append((node.iter, position))
            elif (name := dotted_name(target)) is not None:
                table.setdefault((function, name), []).append((node.iter, None))
    return table


def _container_items(facts: ModuleFacts) -> dict[tuple[object, str], list[tuple[cst.BaseExpression, FunctionInfo]]]:
    """(scope, container name) -> [(a value put in it, the function that puts it)]: ``c[key] =
    value`` and ``c.append(value)`` (``self.c`` scoped to its class)."""
    table: dict[tuple[object, str], list[tuple[cst.BaseExpression, FunctionInfo]]] = {}
    for fact in facts.statements():
        node = fact.node
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Subscript) and (name := dotted_name(target.target.value)) is not None:
                    table.setdefault((_scope_key(fact.function, name), name), []).append((node.value, fact.function))
        elif isinstance(node, cst.Expr) and isinstance(node.value, cst.Call):
            call = node.value
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "append" and len(call.args) == 1:
                name = dotted_name(func.value)
                if name is not None:
                    table.setdefault((_scope_key(fact.function, name), name), []).append((call.args[0].value, fact.function))
    return table


def _scopes_of(name: str, function: FunctionInfo, facts: ModuleFacts) -> list[object]:
    """Where a binding of ``name`` seen from ``function`` may be, nearest first: the class for
    ``self.x``; else the function, the functions around it, the module."""
    if name.startswith("self."):
        return [function.cls] if function.cls is not None else []
    scopes: list[object] = []
    scope: FunctionInfo | None = function
    while scope is not None and scope is not facts.structure.top:
        scopes.append(scope)
        scope = scope.parent
    scopes.append(facts.structure.top)
    return scopes


def _binding_scopes(facts: ModuleFacts) -> dict[cst.BaseExpression, FunctionInfo]:
    """The function of each assigned value (for bindings of ``self.x`` read from another method)."""
    scopes: dict[cst.BaseExpression, FunctionInfo] = {}
    for fact in facts.statements():
        node = fact.node
        if isinstance(node, (cst.Assign, cst.AnnAssign)) and node.value is not None:
            scopes[node.value] = fact.function
    return scopes


def _scope_key(function: FunctionInfo, name: str) -> object:
    if name.startswith("self.") and function.cls is not None:
        return function.cls
    return function


def _annotation(function: FunctionInfo, name: str) -> cst.BaseExpression | None:
    node = function.node
    if node is None:
        return None
    params = node.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value == name:
            return param.annotation.annotation if param.annotation is not None else None
    return None


def _annotation_names(annotation: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The names and attribute chains an annotation uses (``Optional[DataLoader]``: both)."""
    found: list[cst.BaseExpression] = []
    for node in walk(annotation):
        if isinstance(node, (cst.Name, cst.Attribute)) and dotted_name(node) is not None:
            found.append(node)
    return found


#: :func:`_argument_for`'s answer for a parameter the call leaves to its default.
_NOT_PASSED = object()


def _argument_for(call: cst.Call, function: FunctionInfo, param: str, bound: bool) -> cst.BaseExpression | None | object:
    """What ``call`` passes for ``function``'s parameter ``param``: the argument, None behind
    ``*args`` / ``**kwargs``, or :data:`_NOT_PASSED`."""
    params = list(function.params)
    if bound and params[:1] in (["self"], ["cls"]):
        params = params[1:]
    position = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value == param:
                return arg.value
            continue
        if position < len(params) and params[position] == param:
            return arg.value
        position += 1
    return _NOT_PASSED
