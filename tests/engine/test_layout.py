"""The source keeps the design's promises: imports go one way, and no private part of libcst is used.

Read from the source with ``ast`` (nothing is imported), so a cycle hidden in a function-local
import counts too; only imports under ``if TYPE_CHECKING:`` are left out (they never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Source folder -> the package it installs as (pyproject.toml's package-dir).
PACKAGES = {"leaklint": "leaklint", "rules": "leaklint.rules"}


def _module_name(path: Path) -> str:
    folder, *rest = path.relative_to(ROOT).with_suffix("").parts
    parts = [*PACKAGES[folder].split("."), *rest]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _source_modules() -> dict[str, Path]:
    return {_module_name(path): path for folder in PACKAGES for path in sorted((ROOT / folder).rglob("*.py"))}


def _imported(path: Path, name: str) -> set[str]:
    """Every module name an import statement in ``path`` names, wherever the statement is."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    base = ".".join(package[: len(package) - child.level + 1] + ([child.module] if child.module else []))
                found.add(base)
                found.update(f"{base}.{alias.name}" for alias in child.names)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def _import_graph() -> dict[str, set[str]]:
    modules = _source_modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for imported in _imported(path, name):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != name:
                targets.add(imported)
        graph[name] = targets
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle_through_a_local_import(tmp_path):
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_in_leaklint_or_its_rules():
    graph = _import_graph()
    assert "leaklint.rules.ll101_loss_accumulation" in graph and "leaklint.analysis.facts" in graph
    assert _cycles(graph) == []


def test_no_private_libcst_module_or_internal_is_used():
    used = []
    for name, path in _source_modules().items():
        for imported in _imported(path, name):
            if imported.startswith("libcst.") and any(part.startswith("_") for part in imported.split(".")[1:]):
                used.append(f"{name}: {imported}")
        text = path.read_text(encoding="utf-8")
        for internal in ("._codegen(", "__post_init__ =", "_codegen_impl"):
            if internal in text:
                used.append(f"{name}: {internal}")
    assert used == []
