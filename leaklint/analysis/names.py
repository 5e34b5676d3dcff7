"""Dotted names and import aliases: what ``th``, ``F`` or ``no_grad`` mean after the imports.

libcst's ``QualifiedNameProvider`` answers this too, but it needs ``ScopeProvider`` over the whole
module, which the design notes measured as the dominant cost of a libcst linter (3-6x the parse).
Training code binds torch names with plain imports, so a flat alias map (collected once, from
imports anywhere in the file) gives the same answers for the names rules ask about, at a fraction
of the cost.

Re-binding is scope-aware, cheaply: the same single walk records, for every function, lambda,
class body and comprehension, the plain names it binds (assignments, parameters, loop and
``with``/``except`` targets, local imports of something else...). A name an import aliases is
*shadowed* only inside the scope that re-binds it (and the functions nested in it, which see it
as a closure): ``def f(torch): ...`` or ``torch = 3`` in ``f`` leaves ``torch`` resolved
everywhere else. Only scopes that do shadow an alias are walked a second time, to mark the name
nodes inside them. A re-binding at module level (``torch = None``) makes the alias unresolved in
the whole file — except the usual optional-import fallback (``try: import torch`` /
``except ImportError: torch = None``), which does not change what the alias is where it is used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import libcst as cst

from leaklint.analysis.walk import _SCOPES, Walker, children, run_now_and_later, walk


def dotted_name(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a chain of names and attributes, else None (calls, subscripts, literals)."""
    # Exact type checks: libcst's node classes are ABCs, and a failed isinstance() against one
    # goes through ABCMeta (this function runs ~10^5 times per file). Name/Attribute have no subclasses.
    if type(node) is cst.Name:
        return node.value
    parts: list[str] = []
    while type(node) is cst.Attribute:
        parts.append(node.attr.value)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
    if type(node) is not cst.Name:
        return None
    parts.append(node.value)  # type: ignore[attr-defined]
    return ".".join(reversed(parts))


def dotted_names_in(node: cst.CSTNode) -> set[str]:
    """Every name and dotted attribute chain mentioned in ``node`` (``a``, ``a.b``, ``a.b.c``)."""
    names: set[str] = set()
    attribute_leaves: set[int] = set()  # `loss` in `outputs.loss` is not the name `loss`
    for current in walk(node):
        node_type = type(current)  # exact checks: Attribute and Name have no subclasses (see dotted_name)
        if node_type is cst.Attribute:
            attribute_leaves.add(id(current.attr))  # type: ignore[attr-defined]
            name = dotted_name(current)  # type: ignore[arg-type]
            if name:
                names.add(name)
        elif node_type is cst.Name and id(current) not in attribute_leaves:
            names.add(current.value)  # type: ignore[attr-defined]
    return names


def names_read(node: cst.CSTNode) -> set[str]:
    """Names and dotted attribute chains an expression reads: ``model``, ``out``, ``self``,
    ``self.hidden`` in ``model(out).loss + self.hidden.sum()`` (every prefix of a chain, but not
    the attribute names ``loss``, ``sum`` on their own, and nothing inside a lambda or a def)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        # Exact type checks: libcst's node classes are ABCs, so isinstance() on them runs Python
        # code; these classes have no subclasses.
        node_type = type(current)
        if node_type is cst.Name:
            found.add(current.value)  # type: ignore[attr-defined]
        elif node_type is cst.Attribute:
            name = dotted_name(current)
            if name is not None:
                parts = name.split(".")
                found.update(".".join(parts[: i + 1]) for i in range(len(parts)))
            else:
                stack.append(current.value)  # type: ignore[attr-defined]
        elif node_type in _COMPREHENSIONS:
            found |= _comprehension_reads(current)  # type: ignore[arg-type]
        elif node_type not in _SCOPES:
            stack.extend(children(current))
    return found


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


def _comprehension_reads(node: cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp) -> set[str]:
    """The outer names a comprehension reads: its own variables (``loss`` in ``sum(loss for loss
    in d.values())``) are not the outer names they share a spelling with. The first iterable is
    evaluated outside, before any of them is bound."""
    first = node.for_in
    own: set[str] = set()
    inner: set[str] = set()
    for_in: cst.CompFor | None = first
    while for_in is not None:
        own.update(bound_names(for_in.target))
        if for_in is not first:
            inner |= names_read(for_in.iter)
        for condition in for_in.ifs:
            inner |= names_read(condition.test)
        for_in = for_in.inner_for_in
    parts = (node.key, node.value) if type(node) is cst.DictComp else (node.elt,)  # type: ignore[union-attr]
    for part in parts:
        inner |= names_read(part)
    outer = {name for name in inner if name.split(".", 1)[0] not in own}
    return outer | names_read(first.iter)


def bound_names(target: cst.BaseExpression) -> list[str]:
    """Dotted names an assignment target binds (``a, (b, self.c)`` -> a, b, self.c)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        names: list[str] = []
        for element in target.elements:
            names.extend(bound_names(element.value))
        return names
    if isinstance(target, cst.StarredElement):
        return bound_names(target.value)
    name = dotted_name(target)
    return [name] if name else []


def mentions(node: cst.CSTNode, name: str) -> bool:
    """Whether the dotted ``name`` appears anywhere in ``node``."""
    return name in dotted_names_in(node)


def _module_path(node: cst.BaseExpression) -> str:
    name = dotted_name(node)
    return name or ""


@dataclass(eq=False)
class Scope:
    """A name scope: the module, a function or lambda, a class body, or a comprehension."""

    node: cst.CSTNode | None  # None: the module
    parent: Scope | None
    #: Plain name -> the qualified name a local import bound it to, or None for any other binding.
    bound: dict[str, str | None] = field(default_factory=dict)
    #: Names declared ``global`` here: binding them re-binds the module-level name.
    declared_global: set[str] = field(default_factory=set)
    #: Names declared ``nonlocal`` here: binding them re-binds the enclosing function's name.
    declared_nonlocal: set[str] = field(default_factory=set)

    @property
    def is_class(self) -> bool:
        return isinstance(self.node, cst.ClassDef)

    @property
    def is_comprehension(self) -> bool:
        return isinstance(self.node, _COMPREHENSIONS)

    def bind(self, name: str, target: str | None = None) -> None:
        if name in self.bound and self.bound[name] != target:
            target = None  # bound two different ways: not the import's name for sure
        self.bound[name] = target


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


class ImportMap:
    """Maps local names bound by imports to fully qualified names."""

    def __init__(self) -> None:
        self._aliases: dict[str, str] = {}
        #: Aliases bound at module level: they win over a function's own import of the same name.
        self._module_aliases: dict[str, str] = {}
        self._rebound: set[str] = set()
        #: Name nodes that read a local binding which shadows an import alias.
        self._shadowed: set[cst.Name] = set()
        #: Scope of every function, lambda, class and comprehension node (and the module: None).
        self._scopes: dict[cst.CSTNode | None, Scope] = {}
        #: Modules whose names a module-level ``from m import *`` takes, as the project knows them
        #: (``from .meters import *`` gives ``meters``): see :meth:`star_candidates`.
        self.star_modules: list[str] = []

    @classmethod
    def from_module(cls, module: cst.Module) -> ImportMap:
        imports = cls()
        imports.collect(module)
        return imports

    def collect(self, module: cst.Module, *, then: Walker | None = None) -> None:
        """Fill this new, empty map from ``module``.

        ``then``: a walker that needs the settled map (the structure scan). It rides on the same
        walk of the module, and its handlers run once the map is settled (see
        :func:`~leaklint.analysis.walk.run_now_and_later`).
        """
        collector = _ImportCollector(self)
        if then is None:
            collector.run(module)
            self._settle()
        else:
            run_then = run_now_and_later(collector, then, module)
            self._settle()
            run_then()

    def add(self, local: str, qualified: str, *, module_level: bool = False) -> None:
        self._aliases.setdefault(local, qualified)
        if module_level:
            self._module_aliases.setdefault(local, qualified)

    def star_candidates(self, name: str) -> list[str]:
        """The qualified names a global ``name`` may have when the module binds no ``name`` itself:
        one per module of a ``from m import *``, in the order of the imports (a caller looks each
        up in a table of the project's names, never in the libraries' tables)."""
        module_scope = self._scopes.get(None)
        if not self.star_modules or (module_scope is not None and name in module_scope.bound):
            return []
        return [f"{module}.{name}" for module in self.star_modules]

    def mark_rebound(self, local: str) -> None:
        if local in self._aliases:
            self._rebound.add(local)

    def imports_anything_from(self, *roots: str) -> bool:
        """Whether the file imports any of the given top-level packages."""
        return any(q.split(".", 1)[0] in roots for q in self._aliases.values())

    def imported_names(self, root: str) -> list[str]:
        """The qualified names the file imports from the top-level package ``root``."""
        return [q for q in self._aliases.values() if q.split(".", 1)[0] == root]

    def locals_for(self, qualified: str) -> list[str]:
        """The local names that an import binds to exactly ``qualified`` (``repeat_forever`` after
        ``from itertools import cycle as repeat_forever``), in no particular order."""
        return [local for local, target in self._aliases.items() if target == qualified]

    def qualify(self, dotted: str | None) -> str | None:
        """Replace the leading alias of ``dotted`` by what it was imported as; None if not imported.

        A string carries no scope: only a module-level re-binding makes it unresolved. Prefer
        :meth:`resolve` on the node, which also knows a local that shadows the alias.
        """
        if not dotted:
            return None
        head, _, rest = dotted.partition(".")
        if head in self._rebound:
            return None
        target = self._aliases.get(head)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target

    def resolve(self, node: cst.BaseExpression) -> str | None:
        """The qualified name of a name/attribute chain, if its head comes from an import (and is
        not shadowed by a local binding where ``node`` is)."""
        # Exact type checks (see dotted_name); most files shadow nothing, and a node's hash is a
        # Python-level call: this runs ~10^3 times per file.
        head = node
        while type(head) is cst.Attribute:
            head = head.value  # type: ignore[attr-defined]
        if type(head) is not cst.Name:
            return None  # a call, a subscript...: not a dotted name
        if head.value not in self._aliases:  # type: ignore[attr-defined]
            return None  # most names are not imports: skip building the dotted name
        if self._shadowed and head in self._shadowed:
            return None
        return self.qualify(dotted_name(node))

    # --- what fixes need: is a name free to use at some place? ---------------------------------
    def scope_around(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The scope a ``def``/``class`` statement runs in (where its decorators are evaluated):
        the enclosing function or class body, or None for the module."""
        scope = self._scopes.get(node)
        if scope is None or scope.parent is None:
            return None
        return scope.parent.node

    def bound_in(self, name: str, scope_node: cst.CSTNode | None) -> bool:
        """Whether ``name`` means something else than the module-level name in code that runs
        directly in ``scope_node`` (a function, a class body, or None for the module): bound there
        or in an enclosing function by anything — a parameter, an assignment, a loop target, a
        local import (even ``import torch``: until it runs, the name is an unbound local) — or
        bound at module level by something else than an import."""
        if name in self._rebound:
            return True
        scope = self._scopes.get(scope_node)
        first = True
        while scope is not None and scope.node is not None:
            declared_elsewhere = name in scope.declared_global or name in scope.declared_nonlocal
            if (first or not scope.is_class) and name in scope.bound and not declared_elsewhere:
                return True
            first = False
            scope = scope.parent
        module = self._scopes[None]
        return name in module.bound and module.bound[name] is None  # `torch = ...`, `def torch():`

    # --- settling after the walk --------------------------------------------------------------
    def _settle(self) -> None:
        """Decide, once every alias is known, which bindings shadow an alias where."""
        self._aliases.update(self._module_aliases)
        if "torch" not in self._aliases and self.imports_anything_from("torch") and not any("torch" in scope.bound for scope in self._scopes.values()):
            # `from torch import nn` but no `import torch`, and `torch.no_grad()` read as a global
            # nothing binds: a notebook whose kernel (or a star import) brought torch in.
            self._aliases["torch"] = "torch"
        marimo = self.imports_anything_from("marimo")
        for scope in self._scopes.values():
            shadowing: set[str] = set()
            cell_inputs = _marimo_cell_parameters(scope.node) if marimo else frozenset()
            for name, target in scope.bound.items():
                alias = self._aliases.get(name)
                if alias is None or target == alias or name in scope.declared_nonlocal or name in cell_inputs:
                    continue
                if scope.node is None or name in scope.declared_global:
                    self._rebound.add(name)
                else:
                    shadowing.add(name)
            if shadowing:
                self._shadowed.update(
                    node for node in _scope_region(scope.node) if isinstance(node, cst.Name) and node.value in shadowing
                )


def _marimo_cell_parameters(node: cst.CSTNode | None) -> frozenset[str]:
    """The parameters of a marimo cell (a function decorated with ``@app.cell``): marimo passes
    each the value another cell defines under that name, so ``def _(torch):`` receives the module
    that ``import torch`` in another cell binds; the parameter stands for the import."""
    if not isinstance(node, cst.FunctionDef) or not any(
        (dotted_name(decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator) or "").endswith(".cell")
        for decorator in node.decorators
    ):
        return frozenset()
    return frozenset(param.name.value for param in node.params.params)


def _scope_region(node: cst.CSTNode | None) -> Iterator[cst.CSTNode]:
    """The nodes whose names a binding in ``node``'s scope can be read by (nested functions
    included: they see the binding as a closure; a class body's methods do not)."""
    if isinstance(node, (cst.FunctionDef, cst.Lambda)):
        yield from walk(node.body)
    elif isinstance(node, cst.ClassDef):
        for child in walk(node.body, into=lambda n: not isinstance(n, (cst.FunctionDef, cst.Lambda))):
            yield child
            if isinstance(child, cst.FunctionDef):  # decorators and defaults run in the class body
                for decorator in child.decorators:
                    yield from walk(decorator)
    elif isinstance(node, _COMPREHENSIONS):
        # The first iterable is evaluated outside the comprehension.
        for part in (getattr(node, "elt", None), getattr(node, "key", None), getattr(node, "value", None)):
            if part is not None:
                yield from walk(part)
        for_in = node.for_in
        yield from walk(for_in.target)
        for condition in for_in.ifs:
            yield from walk(condition)
        if for_in.inner_for_in is not None:
            yield from walk(for_in.inner_for_in)


def _plain_names(target: cst.BaseExpression) -> Iterator[str]:
    """The plain names an assignment target binds (``a, (b, *c)``; not ``self.x`` or ``d[k]``)."""
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _plain_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _plain_names(target.value)


def _imported_in(block: cst.BaseSuite) -> set[str]:
    """Names the statements directly in ``block`` bind by importing."""
    names: set[str] = set()
    if isinstance(block, cst.IndentedBlock):
        lines = [s for s in block.body if isinstance(s, cst.SimpleStatementLine)]
    else:
        lines = [block]  # type: ignore[list-item]
    for line in lines:
        for small in getattr(line, "body", ()):
            if isinstance(small, cst.Import):
                for alias in small.names:
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        names.add(alias.asname.name.value)
                    else:
                        names.add(_module_path(alias.name).split(".", 1)[0])
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        names.add(alias.asname.name.value)
                    else:
                        names.add(_module_path(alias.name))
    return names


class _ImportCollector(Walker):
    """One walk: the import aliases, and what every scope binds."""

    def __init__(self, imports: ImportMap) -> None:
        self.imports = imports
        self.scope = Scope(None, None)
        imports._scopes[None] = self.scope
        #: Names the enclosing ``try`` bodies import: their ``except`` handlers may set a fallback.
        self._tries: list[set[str]] = []
        self._fallbacks: list[set[str]] = []

    # --- scopes -------------------------------------------------------------------------------
    def _enter(self, node: cst.CSTNode) -> Scope:
        self.scope = Scope(node, self.scope)
        self.imports._scopes[node] = self.scope
        return self.scope

    def _leave(self, original_node: cst.CSTNode) -> None:
        assert self.scope.parent is not None
        self.scope = self.scope.parent

    def _bind(self, name: str, target: str | None = None) -> None:
        scope = self.scope
        if target is None and self._fallbacks and name in self._fallbacks[-1]:
            return  # `except ImportError: torch = None`: the optional-import fallback
        scope.bind(name, target)

    def _bind_targets(self, target: cst.BaseExpression) -> None:
        for name in _plain_names(target):
            self._bind(name)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._bind(node.name.value)
        self._enter(node)
        self._bind_params(node.params)

    leave_FunctionDef = _leave

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._enter(node)
        self._bind_params(node.params)

    leave_Lambda = _leave

    def _bind_params(self, params: cst.Parameters) -> None:
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            self.scope.bind(param.name.value)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                self.scope.bind(star.name.value)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._bind(node.name.value)
        self._enter(node)

    leave_ClassDef = _leave

    def _visit_comprehension(self, node: cst.CSTNode) -> None:
        self._enter(node)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _visit_comprehension
    leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _leave

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind_targets(node.target)

    def visit_Global(self, node: cst.Global) -> None:
        self.scope.declared_global.update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        # Binding a nonlocal re-binds the enclosing function's name, which is already local there.
        self.scope.declared_nonlocal.update(item.name.value for item in node.names)

    # --- optional imports ---------------------------------------------------------------------
    def visit_Try(self, node: cst.Try) -> None:
        self._tries.append(_imported_in(node.body))

    def leave_Try(self, original_node: cst.Try) -> None:
        self._tries.pop()

    visit_TryStar = visit_Try
    leave_TryStar = leave_Try

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bind_targets(node.name.name)
        self._fallbacks.append(self._tries[-1] if self._tries else set())

    def leave_ExceptHandler(self, original_node: cst.ExceptHandler) -> None:
        self._fallbacks.pop()

    visit_ExceptStarHandler = visit_ExceptHandler
    leave_ExceptStarHandler = leave_ExceptHandler

    # --- imports ------------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            full = _module_path(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.imports.add(alias.asname.name.value, full, module_level=self.scope.node is None)
                self.scope.bind(alias.asname.name.value, full)
            else:
                head = full.split(".", 1)[0]
                self.imports.add(head, head, module_level=self.scope.node is None)
                self.scope.bind(head, head)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if node.relative and node.module is not None and not isinstance(node.names, cst.ImportStar):
            # from .torch_utils import smart_inference_mode: named after the module it comes
            # from, without the dots (the project's modules are known by their path's suffixes:
            # leaklint/project.py).
            base = _module_path(node.module)
            for alias in node.names:
                name = _module_path(alias.name)
                local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else name
                self.imports.add(local, f"{base}.{name}", module_level=self.scope.node is None)
                self.scope.bind(local, f"{base}.{name}")
            return False
        if isinstance(node.names, cst.ImportStar):
            if node.module is not None and self.scope.node is None:
                self.imports.star_modules.append(_module_path(node.module))
            return False
        if node.relative and node.module is None:
            # from . import meters: a module of the project, known by its name (as above).
            for alias in node.names:
                name = _module_path(alias.name)
                local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else name
                self.imports.add(local, name, module_level=self.scope.node is None)
                self.scope.bind(local, name)
            return False
        if node.module is None:
            return False
        base = _module_path(node.module)
        for alias in node.names:
            name = _module_path(alias.name)
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.imports.add(local, f"{base}.{name}", module_level=self.scope.node is None)
            self.scope.bind(local, f"{base}.{name}")
        return False

    # --- other bindings -----------------------------------------------------------------------
    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._bind_targets(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind_targets(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind_targets(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bind_targets(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind_targets(node.asname.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        scope = self.scope
        while scope.is_comprehension and scope.parent is not None:
            scope = scope.parent  # a walrus in a comprehension binds in the enclosing function
        for name in _plain_names(node.target):
            scope.bind(name)

    def visit_Del(self, node: cst.Del) -> None:
        self._bind_targets(node.target)

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self._bind(node.name.value)

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        if node.name is not None:
            self._bind(node.name.value)
