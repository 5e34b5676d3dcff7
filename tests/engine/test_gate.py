"""The gate (leaklint/gate.py): each rule declares what a file must contain before it can fire;
files that meet no selected rule's need are never parsed with libcst, and the gate never hides a
finding."""

from __future__ import annotations

import ast
import textwrap

import pytest
from conftest import ROOT

from leaklint.config import Settings
from leaklint.engine import lint_text
from leaklint.findings import Confidence
from leaklint.gate import LOOPS, NOTHING, Names, Syntax, Words, read_contents, rules_for
from leaklint.registry import all_rules
from leaklint.testing import gate_differences

RULES = all_rules()
FIXTURES = sorted((ROOT / "fixtures").glob("*.py"))


def contents_of(source: str):
    source = textwrap.dedent(source)
    return read_contents(source, ast.parse(source))


def hidden_findings(source: str, path: str = "a.py") -> list[str]:
    """What the gate changes in a lint with every rule, at every confidence (nothing: it may only
    skip work)."""
    return gate_differences(source, path, list(RULES.values()))


# --- the gate never hides a finding ---------------------------------------------------------------
@pytest.mark.parametrize(
    "snippet",
    [pytest.param(textwrap.dedent(s), id=f"{code}-invalid-{i}") for code, rule in RULES.items() for i, s in enumerate(rule.INVALID)],
)
def test_no_finding_of_a_rule_example_is_hidden(snippet):
    assert hidden_findings(snippet) == []


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_no_finding_of_a_fixture_is_hidden(path):
    assert hidden_findings(path.read_text(encoding="utf-8"), str(path)) == []


@pytest.mark.parametrize("code", list(RULES))
def test_every_rule_example_meets_its_rules_need(code):
    """A rule's need is a necessary condition of its findings, so its own leaky examples meet it."""
    rule = RULES[code]
    for snippet in rule.INVALID:
        contents = contents_of(snippet)
        assert rule.needs.met_by(contents), (code, snippet)
        medium = Settings(min_confidence=Confidence.MEDIUM)
        if rule.needs_above_low is not None and lint_text(textwrap.dedent(snippet), "a.py", [rule], medium, gate=False).findings:
            assert rule.needs_above_low.met_by(contents), (code, snippet)


# --- what a file's contents are -------------------------------------------------------------------
def test_identifiers_are_names_attributes_imports_keywords_and_definitions():
    contents = contents_of(
        """\
        import torch.nn as tnn
        from torch.autograd import grad as g
        class Trainer:
            def fit(self, loader, *, epochs=1):
                loss.backward(retain_graph=True)
        """
    )
    assert {"torch", "nn", "tnn", "autograd", "grad", "g", "Trainer", "fit", "self", "loader", "epochs", "loss", "backward", "retain_graph"} <= contents.identifiers
    assert "retain" not in contents.identifiers  # whole identifiers, not substrings


def test_syntax_kinds_and_depth():
    contents = contents_of("for x in y:\n    try:\n        f(x)\n    except RuntimeError:\n        pass\n")
    assert {ast.For, ast.Try, ast.ExceptHandler, ast.Call} <= contents.syntax
    assert ast.While not in contents.syntax
    assert contents.depth == contents_of("for x in y:\n    try:\n        f(x)\n    except RuntimeError:\n        pass\n").depth > 4


def test_words_are_case_insensitive_substrings_of_the_text():
    contents = contents_of("import Matplotlib.PyPlot as plt  # a comment counts too\n")
    assert Words("pyplot").met_by(contents)
    assert Words("COMMENT").met_by(contents)
    assert not Words("seaborn").met_by(contents)


def test_needs_combine_with_and_and_or():
    contents = contents_of("import tensorflow as tf\nmodel.predict(x)\n")
    tensorflow = Words("tensorflow") & Names("tensorflow", "keras")
    assert (tensorflow & Names("predict")).met_by(contents)
    assert not (tensorflow & LOOPS).met_by(contents)
    assert (LOOPS | Names("predict")).met_by(contents)
    assert not (Syntax(ast.While) | Names("fit")).met_by(contents)
    assert Names(matching=lambda name: name.startswith("pred")).met_by(contents)
    assert NOTHING.met_by(contents)


# --- which rules run ------------------------------------------------------------------------------
def test_a_file_without_torch_words_needs_no_torch_rule():
    contents = contents_of("import os\nprint(os.getcwd())\n")
    assert rules_for(contents, RULES.values(), Confidence.LOW) == []


def test_the_tensorflow_rules_need_an_import_of_tensorflow_or_keras():
    loop = "for x in data:\n    model.predict(x)\n"
    assert RULES["LL501"] not in rules_for(contents_of("import torch\n" + loop), RULES.values(), Confidence.LOW)
    assert RULES["LL501"] in rules_for(contents_of("from tensorflow import keras\n" + loop), RULES.values(), Confidence.LOW)
    # The word alone (in a comment) is not an import.
    assert RULES["LL501"] not in rules_for(contents_of("# tensorflow\n" + loop), RULES.values(), Confidence.LOW)


def test_evidence_above_low_confidence():
    """`loss` and `model` are only names (low confidence); a backward, a loss function or the
    torch.nn namespace is evidence."""
    names_only = contents_of("total = 0\nfor batch in loader:\n    total += model(batch)\n")
    evidence = contents_of("total = 0\nfor batch in loader:\n    loss = F.cross_entropy(model(batch), y)\n    total += loss\n")
    assert RULES["LL101"] in rules_for(names_only, RULES.values(), Confidence.LOW)
    assert RULES["LL101"] not in rules_for(names_only, RULES.values(), Confidence.MEDIUM)
    assert RULES["LL101"] in rules_for(evidence, RULES.values(), Confidence.MEDIUM)


def test_a_torch_file_no_rule_needs_is_not_parsed_with_libcst(monkeypatch):
    import libcst

    def refuse(*args, **kwargs):
        raise AssertionError("parsed with libcst")

    monkeypatch.setattr(libcst, "parse_module", refuse)
    outcome = lint_text("import torch\nprint(torch.zeros(3))\n", "a.py", list(RULES.values()), Settings())
    assert outcome.findings == [] and outcome.errors == []


def test_valid_python_that_libcst_cannot_parse_is_an_error_only_where_analysis_is_needed():
    source = "import torch\n(x): int = 1\n"
    assert lint_text(source, "a.py", list(RULES.values()), Settings()).errors == []
    [error] = lint_text(source, "a.py", list(RULES.values()), Settings(), gate=False).errors
    assert error.kind.value == "unsupported-syntax"
