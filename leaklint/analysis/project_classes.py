"""Classes of other modules of the project whose methods keep what they are given.

A training script imports ``AverageMeter`` from ``utils/meters.py`` and calls
``losses.update(loss, n)`` every step. Whether that keeps every step's graph depends on what
``update`` does with ``loss`` (``self.sum += val * n`` does; ``self.sum += val.item() * n`` does
not), and the script's file does not show it. So before the files are linted, the run analyses
the modules that define such helpers (:mod:`leaklint.project` picks them) with the same
provenance pass, and summarizes each class by what its methods keep: parameter, how ("accumulate",
"append", "slot", as :class:`~leaklint.analysis.provenance.FunctionSummary` ``param_stores``
says) and where. The summaries travel with the run's settings; the provenance pass of the
importing file treats an object built from such a class as it treats one built from a class of
its own file (``ModuleFacts.graphs_kept_by_methods``).

Only classes whose whole behaviour the defining module shows are summarized: not ``nn.Module``
or Lightning classes (their objects are models, not helpers), and not classes with a base from
another package, whose methods the summary could not see.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Iterator


if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.analysis.structure import ClassInfo


#: The stores a summary keeps: those that grow with every call (``self.sum += val``,
#: ``self.values.append(val)``). A method that only replaces a slot (``self.last = val``) keeps one
#: step's graph, not every step's; it is not summarized (see ``FunctionSummary.param_stores``).
KEPT_KINDS = frozenset({"accumulate", "append"})


@dataclass(frozen=True)
class KeepingMethod:
    """A method that keeps (some of) its arguments on ``self``."""

    name: str
    #: Parameters filled by position (``self`` left out) and those a call may name.
    positional: tuple[str, ...]
    keywords: tuple[str, ...]
    #: (parameter, kind, attribute): ``("val", "accumulate", "self.sum")``.
    stores: tuple[tuple[str, str, str], ...]
    #: The method tests whether a value is a tensor: it treats tensors on purpose (see
    #: ``ModuleFacts.handles_tensors``), so what it keeps is its own doing, not its callers'.
    handles_tensors: bool

    def stored(self, parameter: str) -> Iterator[tuple[str, str]]:
        """(kind, attribute) for each place the method keeps ``parameter``."""
        for name, kind, attribute in self.stores:
            if name == parameter:
                yield kind, attribute


@dataclass(frozen=True)
class ProjectClass:
    """A class of another module of the project, known by what its methods keep."""

    name: str
    #: Every qualified name an import may give it (``utils.meters.AverageMeter``, ``meters.AverageMeter``).
    qualified_names: tuple[str, ...]
    methods: tuple[KeepingMethod, ...]

    def method(self, name: str) -> KeepingMethod | None:
        return next((method for method in self.methods if method.name == name), None)


def keeping_classes(facts: ModuleFacts, module_names: Iterable[str], class_names: Iterable[str] | None = None) -> list[ProjectClass]:
    """The top-level classes of the analysed module (those named ``class_names``, when given)
    with at least one method, other than a constructor, that keeps a parameter on ``self``;
    ``module_names``: the dotted names the module is imported by."""
    wanted = None if class_names is None else set(class_names)
    modules = tuple(module_names)
    found = []
    for info in facts.structure.classes.values():
        if info.name in (None, "") or (wanted is not None and info.name not in wanted):
            continue
        if facts.structure.classes_by_name.get(info.name) is not info or not _whole_class_visible(info):
            continue
        if info.node not in facts.module.body:
            continue  # nested in a function or a class: not importable
        methods = tuple(_keeping_methods(facts, info))
        if methods:
            found.append(ProjectClass(info.name, tuple(f"{module}.{info.name}" for module in modules), methods))
    return found


def _whole_class_visible(info: ClassInfo) -> bool:
    if info.is_module or info.is_lightning or info.has_unknown_bases:
        return False
    return all(_whole_class_visible(base) for base in info.local_bases)


def _method_names(info: ClassInfo) -> list[str]:
    names = list(info.methods)
    for base in info.local_bases:
        names.extend(name for name in _method_names(base) if name not in names)
    return names


def _keeping_methods(facts: ModuleFacts, info: ClassInfo) -> Iterator[KeepingMethod]:
    from leaklint.analysis.arguments import parameter_names  # libcst: not needed to read a summary back

    for name in _method_names(info):
        if name.startswith("__") and name != "__call__":
            continue  # the constructor keeps its arguments once, not per call
        node = info.find_method(name)
        function = facts.structure.functions.get(node) if node is not None else None
        if node is None or function is None:
            continue
        stores = tuple(
            (parameter, kind, attribute)
            for parameter, pairs in sorted(facts.summary(function).param_stores.items())
            for kind, attribute in pairs
            if kind in KEPT_KINDS
        )
        if not stores:
            continue
        positional, keywords = parameter_names(node, bound=True)
        yield KeepingMethod(name, positional, keywords, stores, facts.handles_tensors(function))


def to_json(cls: ProjectClass) -> dict[str, Any]:
    """``cls`` as JSON values (for the summary cache)."""
    return {
        "name": cls.name,
        "qualified_names": list(cls.qualified_names),
        "methods": [
            {
                "name": method.name,
                "positional": list(method.positional),
                "keywords": list(method.keywords),
                "stores": [list(store) for store in method.stores],
                "handles_tensors": method.handles_tensors,
            }
            for method in cls.methods
        ],
    }


def from_json(data: Any) -> ProjectClass:
    """The class :func:`to_json` wrote; ValueError for anything else (a cache entry edited or
    from another format is a miss)."""
    try:
        methods = tuple(
            KeepingMethod(
                _text(method["name"]),
                _texts(method["positional"]),
                _texts(method["keywords"]),
                tuple(_store(store) for store in method["stores"]),
                _flag(method["handles_tensors"]),
            )
            for method in data["methods"]
        )
        return ProjectClass(_text(data["name"]), _texts(data["qualified_names"]), methods)
    except (KeyError, TypeError) as error:
        raise ValueError(f"not a class summary: {error}") from None


def _text(value: Any) -> str:
    if type(value) is not str:
        raise TypeError(repr(value))
    return value


def _texts(values: Any) -> tuple[str, ...]:
    if type(values) is not list:
        raise TypeError(repr(values))
    return tuple(_text(value) for value in values)


def _store(value: Any) -> tuple[str, str, str]:
    parameter, kind, attribute = _texts(value)
    if kind not in KEPT_KINDS:
        raise TypeError(kind)
    return parameter, kind, attribute


def _flag(value: Any) -> bool:
    if type(value) is not bool:
        raise TypeError(repr(value))
    return value
