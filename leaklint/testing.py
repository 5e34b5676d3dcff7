"""Helpers for testing rules (ours and third-party packs): expectations written in the code.

A line ending in ``# expect: LL101`` (or ``# expect: LL101, LL102``) must produce exactly those
findings; every other line must produce none. In a notebook the comment marks a line of a code
cell, and the finding must be in that cell. Rule examples (``VALID``/``INVALID``) and the
``fixtures/`` scripts both use this convention, so a test reads like the code it checks.
"""

from __future__ import annotations

import re
import textwrap
from typing import Iterable, Sequence

from leaklint.config import Settings
from leaklint.engine import lint_text
from leaklint.findings import Confidence, FileError, Finding
from leaklint.registry import all_rules
from leaklint.rule import Rule

_EXPECT = re.compile(r"#\s*expect:\s*([A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)")


def expected_findings(source: str) -> set[tuple[int, str]]:
    """``(line, code)`` pairs marked with ``# expect:`` comments."""
    expected = set()
    for number, line in enumerate(source.splitlines(), start=1):
        match = _EXPECT.search(line)
        if match:
            expected.update((number, code.strip()) for code in match.group(1).split(","))
    return expected


def expected_cell_findings(notebook_text: str) -> set[tuple[int, int, str]]:
    """``(cell, line, code)`` triples marked with ``# expect:`` comments in a notebook's code cells."""
    from leaklint.notebook import Notebook

    notebook = Notebook.parse(notebook_text)
    return {
        (cell.number, line, code)
        for cell in notebook.cells
        if cell.kind == "code"
        for line, code in expected_findings(cell.source)
    }


def lint_snippet(
    source: str,
    rules: Iterable[type[Rule]] | None = None,
    *,
    path: str = "snippet.py",
    min_confidence: Confidence = Confidence.MEDIUM,
) -> tuple[list[Finding], list[FileError]]:
    """Lint a code snippet (dedented) with ``rules`` (default: every known rule)."""
    chosen = list(rules) if rules is not None else list(all_rules().values())
    outcome = lint_text(textwrap.dedent(source), path, chosen, Settings(min_confidence=min_confidence))
    return outcome.findings, outcome.errors


def found_pairs(findings: Iterable[Finding]) -> set[tuple[int, str]]:
    return {(f.line, f.code) for f in findings}


def found_cell_triples(findings: Iterable[Finding]) -> set[tuple[int | None, int, str]]:
    return {(f.cell, f.line, f.code) for f in findings}


GATE_LEVELS = (Confidence.LOW, Confidence.MEDIUM, Confidence.HIGH)


def gate_differences(text: str, path: str, rules: Sequence[type[Rule]]) -> list[str]:
    """What the gate (:mod:`leaklint.prefilter`) changes in a lint of ``text`` with ``rules``: for
    each confidence, the findings of an ungated run at or above it that a gated run misses, or
    reports differently (message, confidence, fix). Empty when the gate only skips work, which is
    all it may do. A found problem (libcst cannot parse the file, too deep) may go: it matters only where the
    analysis is needed."""
    codes = tuple(rule.code for rule in rules)
    ungated = lint_text(text, path, rules, Settings(select=codes, min_confidence=Confidence.LOW), gate=False)
    differences: list[str] = []
    for level in GATE_LEVELS:
        expected = [f for f in ungated.findings if f.confidence >= level]
        gated = lint_text(text, path, rules, Settings(select=codes, min_confidence=level), gate=True)
        differences += [f"{path}:{f.line}:{f.column}: {f.code} ({f.confidence}) hidden by the gate at {level}" for f in expected if f not in gated.findings]
        differences += [f"{path}:{f.line}:{f.column}: {f.code} ({f.confidence}) differs with the gate at {level}" for f in gated.findings if f not in expected]
        # (Errors may only go: libcst's limits matter only to files the analysis needs.)
        differences += [f"{path}: error {e.kind.value} only with the gate at {level}" for e in gated.errors if e not in ungated.errors]
    return differences


#: Fields that hold formatting only (spaces, comments, parentheses, punctuation, the module's
#: newline style): the tree :mod:`leaklint.analysis.from_ast` builds leaves them at defaults.
_FORMATTING_FIELDS = frozenset(
    {
        "lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorators", "header", "footer",
        "dot", "equal", "colon", "newline", "indent", "trailing_whitespace", "lbracket", "rbracket", "lbrace",
        "rbrace", "first_colon", "second_colon", "leading_whitespace", "encoding", "default_indent",
        "default_newline", "has_trailing_newline",
    }
)


def shape_differences(parsed: object, built: object, path: str = "module", *, limit: int = 5) -> list[str]:
    """Where ``built`` (from :func:`leaklint.analysis.from_ast.module_from_ast`) differs from
    libcst's ``parsed`` tree, ignoring formatting: node types, code-holding fields, literal text.
    Text inside f-strings is compared loosely: the builder takes it from values, not the source,
    so only the expressions of an f-string must match."""
    import libcst

    from leaklint.analysis import nodes as cst
    from leaklint.analysis.node_fields import field_names

    if cst.FAMILY == cst.MIRROR:  # compare like with like
        from leaklint.analysis.convert import to_mirror

        parsed, built = (to_mirror(tree) if isinstance(tree, libcst.CSTNode) else tree for tree in (parsed, built))
    found: list[str] = []
    pending: list[tuple[object, object, str, bool]] = [(parsed, built, path, False)]
    while pending and len(found) < limit:
        left, right, where, in_fstring = pending.pop()
        if isinstance(left, cst.CSTNode) or isinstance(right, cst.CSTNode):
            if type(left) is not type(right):
                found.append(f"{where}: {type(left).__name__} != {type(right).__name__}")
                continue
            in_fstring = in_fstring or isinstance(left, cst.FormattedString)
            for name in field_names(type(left)):
                if name in _FORMATTING_FIELDS or name.startswith("whitespace"):
                    continue
                pending.append((getattr(left, name), getattr(right, name), f"{where}.{name}", in_fstring))
        elif isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
            if in_fstring:  # an f-string's text parts: `\<newline>` alone is a part only in libcst
                left = [part for part in left if not isinstance(part, cst.FormattedStringText)]
                right = [part for part in right if not isinstance(part, cst.FormattedStringText)]
            if len(left) != len(right):
                found.append(f"{where}: {len(left)} items != {len(right)}")
                continue
            pending.extend((a, b, f"{where}[{i}]", in_fstring) for i, (a, b) in enumerate(zip(left, right)))
        elif left != right and not in_fstring:
            found.append(f"{where}: {left!r} != {right!r}")
    return found

