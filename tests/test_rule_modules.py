"""Rule modules stay independent: what two rules share lives in ``leaklint.analysis``.

A rule that imports another rule's module couples their fates (a change to one rule's helpers
silently changes the other's findings) and hides shared program facts where nobody looks for them.

Each rule is two modules of the same name: ``rules/llNNN_name.py`` (what the rule is: metadata,
documentation, examples, gate, runtime repro) and ``rules/checks/llNNN_name.py`` (how it finds its
violations). Only the second may import libcst or the analysis, so that listing the rules and
skipping the files the gate rejects never import them.
"""

from __future__ import annotations

import ast

import pytest

from conftest import ROOT

RULE_MODULES = sorted((ROOT / "rules").glob("ll*.py"))
CHECK_MODULES = sorted((ROOT / "rules" / "checks").glob("ll*.py"))
_RULE_PACKAGES = ("leaklint.rules", "rules")
#: What a rule module may import from leaklint: nothing that imports libcst or the analysis.
_LIGHT_LEAKLINT_MODULES = ("leaklint.findings", "leaklint.rule", "leaklint.analysis.torch_api")


def _imported_modules(tree: ast.Module) -> list[str]:
    """Every module an ``import`` or ``from ... import`` statement names, anywhere in the file."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # from . import ll105_..., from .ll105_... import x
                found.append("rules." + (node.module or ""))
            elif node.module is not None:
                found.append(node.module)
                found.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _imported_at_import_time(tree: ast.Module) -> list[str]:
    """The modules the module's own top level imports (not inside functions or ``TYPE_CHECKING``)."""
    found = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.module != "__future__":
            found.append(node.module)
    return found


def _is_rule_module(name: str) -> bool:
    return any(name == package or name.startswith(package + ".") for package in _RULE_PACKAGES)


def _parse(path):  # type: ignore[no-untyped-def]
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def test_there_are_rule_modules():
    assert len(RULE_MODULES) >= 10


def test_every_rule_has_its_check_module_and_no_check_module_is_orphaned():
    assert [p.name for p in RULE_MODULES] == [p.name for p in CHECK_MODULES]


def _other_rule_modules_imported(path, own: str) -> list[str]:  # type: ignore[no-untyped-def]
    """Rule or check modules that ``path`` imports, other than ``own`` (and its submodules)."""
    return sorted(
        {
            name
            for name in _imported_modules(_parse(path))
            if _is_rule_module(name) and name != own and not name.startswith(own + ".")
        }
    )


@pytest.mark.parametrize("path", RULE_MODULES, ids=lambda p: p.name)
def test_a_rule_module_imports_no_other_rule_module(path):
    offending = _other_rule_modules_imported(path, f"leaklint.rules.checks.{path.stem}")
    assert offending == [], f"{path.name} imports {offending}: move what they share into leaklint/analysis/"


@pytest.mark.parametrize("path", CHECK_MODULES, ids=lambda p: p.name)
def test_a_check_module_imports_only_its_own_rule_module(path):
    offending = _other_rule_modules_imported(path, f"leaklint.rules.{path.stem}")
    assert offending == [], f"checks/{path.name} imports {offending}: move what they share into leaklint/analysis/"


@pytest.mark.parametrize("path", RULE_MODULES, ids=lambda p: p.name)
def test_a_rule_module_imports_neither_libcst_nor_the_analysis(path):
    """The registry imports every rule module on every run; the detector's imports belong in
    ``rules/checks/`` (annotations may name them under ``TYPE_CHECKING``)."""
    heavy = sorted(
        name
        for name in _imported_at_import_time(_parse(path))
        if name.split(".")[0] == "libcst" or (name.startswith("leaklint.") and name not in _LIGHT_LEAKLINT_MODULES)
    )
    assert heavy == [], f"{path.name} imports {heavy} when it is imported: import them in checks/{path.name}"
