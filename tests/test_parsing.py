"""The analysis parses without libcst's per-node validation, and nothing else changes."""

from __future__ import annotations

import threading
from pathlib import Path

import libcst as cst
import pytest

from leaklint.analysis.parsing import parse_module

FIXTURES = sorted((Path(__file__).parent.parent / "fixtures").rglob("*.py"))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_the_tree_is_the_one_libcst_builds(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    fast, checked = parse_module(text), cst.parse_module(text)
    assert fast.deep_equals(checked)
    assert fast.code == text


def test_nodes_built_after_parsing_are_still_validated() -> None:
    parse_module("x = 1\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")  # an identifier with spaces fails Name's validation


def test_syntax_errors_are_still_raised_and_validation_comes_back() -> None:
    with pytest.raises(cst.ParserSyntaxError):
        parse_module("def f(:\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")


def test_other_threads_keep_validating_while_one_parses() -> None:
    """Only the parsing thread skips the checks: a node built by another thread in the middle of
    the parse (here: when the parser builds the Module, its last node) is validated."""
    outcome: list[str] = []

    def build_invalid_node() -> None:
        try:
            cst.Name("")
            outcome.append("not validated")
        except cst.CSTValidationError:
            outcome.append("validated")

    def meanwhile(node: cst.Module) -> None:  # runs in the parsing thread, mid-parse
        other = threading.Thread(target=build_invalid_node)
        other.start()
        other.join(5)

    cst.Module.__post_init__ = meanwhile  # type: ignore[method-assign]
    try:
        parse_module("x = 1\n")
    finally:
        del cst.Module.__post_init__
    assert outcome == ["validated"]
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")
