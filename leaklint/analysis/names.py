"""Dotted names and import aliases: what ``th``, ``F`` or ``no_grad`` mean after the imports.

libcst's ``QualifiedNameProvider`` answers this too, but it needs ``ScopeProvider`` over the whole
module, which the design notes measured as the dominant cost of a libcst linter (3-6x the parse).
Training code binds torch names with plain imports, so a flat alias map (collected once, from
imports anywhere in the file) gives the same answers for the names rules ask about, at a fraction
of the cost. A name re-bound by assignment after its import is treated as unresolved.
"""

from __future__ import annotations

import libcst as cst

from leaklint.analysis.walk import Walker


def dotted_name(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a chain of names and attributes, else None (calls, subscripts, literals)."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def _module_path(node: cst.BaseExpression) -> str:
    name = dotted_name(node)
    return name or ""


class ImportMap:
    """Maps local names bound by imports to fully qualified names."""

    def __init__(self) -> None:
        self._aliases: dict[str, str] = {}
        self._rebound: set[str] = set()

    @classmethod
    def from_module(cls, module: cst.Module) -> ImportMap:
        imports = cls()
        _ImportCollector(imports).run(module)
        return imports

    def add(self, local: str, qualified: str) -> None:
        self._aliases.setdefault(local, qualified)

    def mark_rebound(self, local: str) -> None:
        if local in self._aliases:
            self._rebound.add(local)

    def imports_anything_from(self, *roots: str) -> bool:
        """Whether the file imports any of the given top-level packages."""
        return any(q.split(".", 1)[0] in roots for q in self._aliases.values())

    def qualify(self, dotted: str | None) -> str | None:
        """Replace the leading alias of ``dotted`` by what it was imported as; None if not imported."""
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
        """The qualified name of a name/attribute chain, if its head comes from an import."""
        return self.qualify(dotted_name(node))


class _ImportCollector(Walker):
    def __init__(self, imports: ImportMap) -> None:
        self.imports = imports

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            full = _module_path(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.imports.add(alias.asname.name.value, full)
            else:
                head = full.split(".", 1)[0]
                self.imports.add(head, head)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return False
        base = _module_path(node.module)
        for alias in node.names:
            name = _module_path(alias.name)
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.imports.add(local, f"{base}.{name}")
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self.imports.mark_rebound(target.target.value)
