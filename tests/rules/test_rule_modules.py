"""Rule modules stay independent: what two rules share lives in ``leaklint.analysis``.

A rule that imports another rule's module couples their fates (a change to one rule's helpers
silently changes the other's findings) and hides shared program facts where nobody looks for them.

Each rule is one module, ``rules/llNNN_name.py``: metadata, documentation, the gate's need,
detection, fix, examples and runtime repro, so a reader finds the rule's whole story in one file.
"""

from __future__ import annotations

import ast

import pytest

from conftest import ROOT

RULE_MODULES = sorted((ROOT / "rules").glob("ll*.py"))
_RULE_PACKAGES = ("leaklint.rules", "rules")


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


def _is_rule_module(name: str) -> bool:
    return any(name == package or name.startswith(package + ".") for package in _RULE_PACKAGES)


def _parse(path):  # type: ignore[no-untyped-def]
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def test_there_are_rule_modules():
    assert len(RULE_MODULES) >= 10


def test_rule_modules_have_no_companion_package():
    """One module per rule: no second home for a rule's detection."""
    assert sorted(p.name for p in (ROOT / "rules").iterdir() if p.is_dir() and p.name != "__pycache__") == []


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
    offending = _other_rule_modules_imported(path, f"leaklint.rules.{path.stem}")
    assert offending == [], f"{path.name} imports {offending}: move what they share into leaklint/analysis/"
